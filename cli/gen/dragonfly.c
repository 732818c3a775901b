/*
 * dragonfly.c - dragonflies (Kim et al.): G groups of A routers, each router with P hosts and
 * H global links, the routers of a group joined all-to-all and the groups by the global links.
 *
 * Port order: hosts on ports 1..P; ports P+1..P+A-1 to the other routers of the group in
 * router order, skipping the router itself; global ports P+A..P+A+H-1, whose targets
 * df_global() below spells out.
 */
#include "cli/gen/gen_private.h"
#include "lib/assert.h"

#include <inttypes.h>
#include <stdlib.h>

/* G defaults to A*H+1, the most groups the global links can join all-to-all. */
int validate_dragonfly(struct opts *o)
{
	unsigned long ah = o->num[OPT_A] * o->num[OPT_H];

	if (!o->set[OPT_G])
		o->num[OPT_G] = ah + 1;
	else if (o->num[OPT_G] > ah + 1)
		return gen_usage(
			"%s %s: at most A*H+1 = %lu groups can be connected (A=%lu, H=%lu)",
			o->name[OPT_G], o->val[OPT_G], ah + 1, o->num[OPT_A], o->num[OPT_H]);
	return GEN_OK;
}

static uint64_t df_next_free(struct gen_fabric *f, uint64_t grp, uint64_t *cur, uint64_t a,
			     uint64_t h, uint64_t first)
{
	for (; *cur < a * h; (*cur)++) {
		uint32_t s = (uint32_t)(grp * a + *cur / h);

		sn_assert(s < f->nsw && first + *cur % h - 1 < sw_nports(f, s));
		if (f->peer[f->base[s] + first + *cur % h - 1].node == NO_NODE)
			return *cur;
	}
	return *cur;
}

/*
 * Global port j of group i sits on router j/H.  Links go to group
 * i + (j mod (G-1)) + 1; the m-th port of offset class o pairs with the
 * m-th port of class G-o in the target group.  For G = A*H+1 this is the
 * classic consecutive arrangement; when the classes differ in size a
 * round-robin pass joins what is left over.
 */
static int df_global(struct gen_fabric *f, uint64_t g, uint64_t a, uint64_t h, uint64_t first)
{
	uint64_t ah = a * h, per = g - 1, q = ah / per, rem = ah % per;
	uint64_t i, o, m, *cur;
	bool progress;

	for (i = 0; i < g; i++) {
		for (o = 1; o <= per; o++) {
			uint64_t o2 = g - o, t = (i + o) % g, cnt;
			uint64_t n1 = q + (o - 1 < rem), n2 = q + (o2 - 1 < rem);

			if (o > o2 || (o == o2 && t < i))
				continue;
			cnt = n1 < n2 ? n1 : n2;
			for (m = 0; m < cnt; m++) {
				uint64_t j1 = o - 1 + m * per, j2 = o2 - 1 + m * per;

				link_sw(f, (uint32_t)(i * a + j1 / h), first + j1 % h,
					(uint32_t)(t * a + j2 / h), first + j2 % h);
			}
		}
	}
	if (!rem)
		return GEN_OK;

	cur = calloc(g, sizeof(*cur));
	if (!cur)
		return gen_nomem();
	/*
	 * One link per group pair and round, nearest offsets first, so the
	 * extra links spread evenly; offsets o and G-o name the same pairs.
	 */
	do {
		progress = false;
		for (o = 1; 2 * o <= g; o++) {
			for (i = 0; i < g; i++) {
				uint64_t t = (i + o) % g, j1, j2;

				if (2 * o == g && t < i)
					continue;
				j1 = df_next_free(f, i, &cur[i], a, h, first);
				j2 = df_next_free(f, t, &cur[t], a, h, first);
				if (j1 >= ah || j2 >= ah)
					continue;
				link_sw(f, (uint32_t)(i * a + j1 / h), first + j1 % h,
					(uint32_t)(t * a + j2 / h), first + j2 % h);
				progress = true;
			}
		}
	} while (progress);
	free(cur);
	return GEN_OK;
}

int build_dragonfly(struct gen_fabric *f, const struct opts *o)
{
	uint64_t a = o->num[OPT_A], p = o->num[OPT_P], h = o->num[OPT_H], g = o->num[OPT_G];
	uint64_t nsw = g * a, grp, r;
	int rc;

	rc = gen_fabric_init(f, nsw, nsw * p, o->num[OPT_RADIX]);
	if (rc)
		return rc;
	for (grp = 0; grp < g; grp++) {
		for (r = 0; r < a; r++) {
			sw_desc(f, (uint32_t)(grp * a + r), "group %" PRIu64 " router %" PRIu64,
				grp, r);
			gen_fabric_need(f, (uint32_t)(grp * a + r), p + a - 1 + h);
		}
	}
	rc = gen_fabric_ports(f);
	if (rc)
		return rc;

	attach_hosts(f, 0, f->nsw, (uint32_t)p);
	for (grp = 0; grp < g; grp++)
		link_clique(f, (uint32_t)(grp * a), 1, (uint32_t)a, p + 1, 1);
	if (g >= 2 && h)
		return df_global(f, g, a, h, p + a);
	return GEN_OK;
}
