/*
 * fishnet.c - Fishnet and Fishnet-lite (Li et al., MEMSYS 2016, as Li, Huang and Jacob's
 * exascale study restates them): n + 1 copies ("subnets") of a diameter-2 base graph of n
 * routers and degree k'.  In subnet i the routers carry the labels 0..n except i, so that
 * router (i, j) stands for subnet j.  Fishnet joins subnets i and j by pairing the k'
 * neighbours of (i, j) with the k' neighbours of (j, i), k' links per pair of subnets and
 * diameter 4; Fishnet-lite joins (i, j) to (j, i) alone, one link per pair and diameter 5.
 * Both have n(n+1) routers.
 *
 * The base graph is the McKay-Miller-Siran graph of slimfly.c (--base mms --q Q, Q = 5 being
 * the Hoffman-Singleton graph), the Petersen graph or the 5-cycle of the paper's figures.
 * The paper leaves the pairing open: the m-th neighbour of (i, j) is paired with the m-th
 * neighbour of (j, i), neighbours in ascending base order.
 *
 * Port order: hosts on ports 1..T; then the k' links within the subnet, to the base neighbours
 * in ascending order; then the global links: on Fishnet one per base neighbour w, in the same
 * order, the link that stands for w's subnet; on Fishnet-lite the single link to (j, i).
 */
#include "cli/gen/gen_private.h"
#include "lib/assert.h"

#include <stdlib.h>
#include <string.h>

enum fn_base {
	BASE_MMS,
	BASE_PETERSEN,
	BASE_C5,
};

static const struct {
	const char *name;
	enum fn_base base;
} base_names[] = {
	{ "mms", BASE_MMS },
	{ "petersen", BASE_PETERSEN },
	{ "c5", BASE_C5 },
};

/* The Hoffman-Singleton graph: a diameter-2 base that is large and still reads well. */
#define FN_DEFAULT_Q 5

static int fn_base_of(const struct opts *o, enum fn_base *base)
{
	size_t i;

	if (!o->set[OPT_BASE]) {
		*base = BASE_MMS;
		return GEN_OK;
	}
	for (i = 0; i < ARRAY_SIZE(base_names); i++) {
		if (!strcmp(o->val[OPT_BASE], base_names[i].name)) {
			*base = base_names[i].base;
			return GEN_OK;
		}
	}
	return gen_usage("%s %s: expected mms, petersen or c5", o->name[OPT_BASE],
			 o->val[OPT_BASE]);
}

/* n and k' of the base, for the checks before anything is built. */
static void fn_base_size(enum fn_base base, uint64_t q, uint64_t *n, uint64_t *k)
{
	switch (base) {
	case BASE_PETERSEN:
		*n = 10;
		*k = 3;
		break;
	case BASE_C5:
		*n = 5;
		*k = 2;
		break;
	default:
		*n = 2 * q * q;
		*k = (3 * q - (q % 4 == 3 ? (uint64_t)-1 : q % 4)) / 2;
		break;
	}
}

int validate_fishnet(struct opts *o)
{
	enum fn_base base;
	uint64_t n, k;
	int rc;

	rc = fn_base_of(o, &base);
	if (rc)
		return rc;
	if (base != BASE_MMS && o->set[OPT_Q])
		return gen_usage("%s %s: only with --base mms (the base is the %s graph)",
				 o->name[OPT_Q], o->val[OPT_Q], o->val[OPT_BASE]);
	if (base == BASE_MMS) {
		if (!o->set[OPT_Q]) {
			o->num[OPT_Q] = FN_DEFAULT_Q;
			o->name[OPT_Q] = "--q";
			o->val[OPT_Q] = "5";
		}
		rc = validate_slimfly(o);
		if (rc)
			return rc;
	}
	fn_base_size(base, o->num[OPT_Q], &n, &k);
	if (n * (n + 1) > GEN_MAX_SWITCHES)
		return gen_usage("%s %s: fabric too large (n(n+1) = %lu routers for a base of n = "
				 "%lu, at most %lu)",
				 o->name[OPT_Q], o->val[OPT_Q], (unsigned long)(n * (n + 1)),
				 (unsigned long)n, GEN_MAX_SWITCHES);
	/* [L] keeps p <= k'/2, so that the hosts do not oversubscribe the local links */
	if (!o->set[OPT_HPS])
		o->num[OPT_HPS] = k / 2 ? k / 2 : 1;
	return GEN_OK;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* adj[v*k ..] for the small named bases; rows are sorted by the caller. */
static int fn_small_base(enum fn_base base, uint32_t **adj_out, uint32_t *n_out, uint32_t *k_out)
{
	uint32_t n = base == BASE_C5 ? 5 : 10, k = base == BASE_C5 ? 2 : 3, v, *adj;

	adj = malloc((size_t)n * k * sizeof(*adj));
	if (!adj)
		return gen_nomem();
	for (v = 0; v < 5; v++) {
		/* the outer 5-cycle */
		adj[v * k] = (v + 1) % 5;
		adj[v * k + 1] = (v + 4) % 5;
		if (base == BASE_C5)
			continue;
		/* Petersen: a spoke to the inner pentagram, which steps by 2 */
		adj[v * k + 2] = v + 5;
		adj[(v + 5) * k] = v;
		adj[(v + 5) * k + 1] = 5 + (v + 2) % 5;
		adj[(v + 5) * k + 2] = 5 + (v + 3) % 5;
	}
	*adj_out = adj;
	*n_out = n;
	*k_out = k;
	return GEN_OK;
}

int build_fishnet(struct gen_fabric *f, const struct opts *o)
{
	bool lite = o->topo == TOPO_FISHNET_LITE;
	uint32_t *adj = NULL, *back = NULL, n, k, i, j, v, m;
	uint64_t t = o->num[OPT_HPS], nsw, glob;
	enum fn_base base;
	int rc;

	rc = fn_base_of(o, &base);
	if (rc)
		return rc;
	if (base == BASE_MMS)
		rc = mms_graph((uint32_t)o->num[OPT_Q], &adj, &n, &k);
	else
		rc = fn_small_base(base, &adj, &n, &k);
	if (rc)
		return rc;
	for (v = 0; v < n; v++)
		qsort(adj + (size_t)v * k, k, sizeof(*adj), cmp_u32);
	/* back[v*k + m]: where v stands in the list of its m-th neighbour */
	back = malloc((size_t)n * k * sizeof(*back));
	if (!back) {
		rc = gen_nomem();
		goto out;
	}
	for (v = 0; v < n; v++) {
		for (m = 0; m < k; m++) {
			uint32_t w = adj[(size_t)v * k + m], b;

			for (b = 0; b < k && adj[(size_t)w * k + b] != v; b++)
				;
			sn_assert(b < k);
			back[(size_t)v * k + m] = b;
		}
	}

	nsw = (uint64_t)n * (n + 1);
	rc = gen_fabric_init(f, nsw, nsw * t, o->num[OPT_RADIX]);
	if (rc)
		goto out;
	for (i = 0; i <= n; i++) {
		for (v = 0; v < n; v++) {
			uint32_t s = i * n + v;

			sw_desc(f, s, "%s subnet %u router %u", lite ? "fishnet-lite" : "fishnet",
				i, v < i ? v : v + 1);
			gen_fabric_need(f, s, t + k + (lite ? 1 : k));
		}
	}
	rc = gen_fabric_ports(f);
	if (rc)
		goto out;

	attach_hosts(f, 0, f->nsw, (uint32_t)t);
	for (i = 0; i <= n; i++)
		for (v = 0; v < n; v++)
			for (m = 0; m < k; m++) {
				uint32_t w = adj[(size_t)v * k + m];

				if (w > v)
					link_sw(f, i * n + v, t + 1 + m, i * n + w,
						t + 1 + back[(size_t)v * k + m]);
			}

	glob = t + k + 1;
	for (i = 0; i <= n; i++) {
		for (j = i + 1; j <= n; j++) {
			/* label j is vertex j - 1 in subnet i, label i is vertex i in subnet j */
			uint32_t a = j - 1, b = i;

			if (lite) {
				link_sw(f, i * n + a, glob, j * n + b, glob);
				continue;
			}
			for (m = 0; m < k; m++) {
				uint32_t x = adj[(size_t)a * k + m], y = adj[(size_t)b * k + m];

				/* x's link for its neighbour a, y's for b */
				link_sw(f, i * n + x, glob + back[(size_t)a * k + m], j * n + y,
					glob + back[(size_t)b * k + m]);
			}
		}
	}
out:
	free(adj);
	free(back);
	return rc;
}
