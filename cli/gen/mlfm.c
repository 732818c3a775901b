/*
 * mlfm.c - the Multi-Layer Full-Mesh (Fujitsu; Prisacari's thesis, Section 7.2.2.3): L layers of
 * H + 1 local routers (LRs) with P hosts each, and one global router GR{i,j} for every pair of
 * LR positions i < j, linked to the LRs (t, i) and (t, j) of every layer t.  Each layer is thus
 * a full mesh of H + 1 routers whose links run through the GRs, and any two LRs are two hops
 * apart: H paths within a column (same position), one otherwise.  The thesis's h-MLFM is
 * H = L = P, every router of radix 2H, H^3 + H^2 hosts.
 *
 * Switch order: the LRs layer by layer, position varying fastest; then the GRs in the order
 * {0,1}, {0,2}, ..., {1,2}, ...  LR ports: hosts 1..P, then the H GRs of its position in the
 * order of the other position.  GR{i,j} ports: 2t + 1 to LR (t, i), 2t + 2 to LR (t, j).
 */
#include "cli/gen/gen_private.h"

#include <inttypes.h>

/* H = 15 is the MLFM the thesis simulates: 3,600 hosts on 360 routers of radix 30. */
#define MLFM_DEFAULT_H 15

int validate_mlfm(struct opts *o)
{
	uint64_t h, l, lr;

	if (!o->set[OPT_H])
		o->num[OPT_H] = MLFM_DEFAULT_H;
	h = o->num[OPT_H];
	if (!h)
		return gen_usage("%s %s: an MLFM needs at least 2 positions per layer (H >= 1)",
				 o->name[OPT_H], o->val[OPT_H]);
	if (!o->set[OPT_L])
		o->num[OPT_L] = h;
	if (!o->set[OPT_P])
		o->num[OPT_P] = h;
	l = o->num[OPT_L];
	if (!l)
		return gen_usage("%s %s: must be at least 1", o->name[OPT_L], o->val[OPT_L]);
	lr = l * (h + 1);
	if (lr + h * (h + 1) / 2 > GEN_MAX_SWITCHES)
		return gen_usage("--h %" PRIu64 " --l %" PRIu64 ": fabric too large (%" PRIu64
				 " routers, at most %lu)",
				 h, l, lr + h * (h + 1) / 2, GEN_MAX_SWITCHES);
	if (2 * l > GEN_MAX_PORTS)
		return gen_usage("%s %" PRIu64 ": a global router would need 2L = %" PRIu64
				 " ports; InfiniBand switches have at most %d",
				 o->set[OPT_L] ? o->name[OPT_L] : "--l", l, 2 * l, GEN_MAX_PORTS);
	return GEN_OK;
}

int build_mlfm(struct gen_fabric *f, const struct opts *o)
{
	uint64_t h = o->num[OPT_H], l = o->num[OPT_L], p = o->num[OPT_P];
	uint32_t lr = (uint32_t)(l * (h + 1)), gr = (uint32_t)(h * (h + 1) / 2), s, t, i, j;
	int rc;

	rc = gen_fabric_init(f, (uint64_t)lr + gr, lr * p, o->num[OPT_RADIX]);
	if (rc)
		return rc;
	for (s = 0; s < lr; s++) {
		sw_desc(f, s, "mlfm layer %" PRIu64 " LR %" PRIu64, s / (h + 1), s % (h + 1));
		gen_fabric_need(f, s, p + h);
	}
	s = lr;
	for (i = 0; i <= h; i++) {
		for (j = i + 1; j <= h; j++, s++) {
			sw_desc(f, s, "mlfm GR %u,%u", i, j);
			gen_fabric_need(f, s, 2 * l);
		}
	}
	rc = gen_fabric_ports(f);
	if (rc)
		return rc;

	attach_hosts(f, 0, lr, (uint32_t)p);
	s = lr;
	for (i = 0; i <= h; i++) {
		for (j = i + 1; j <= h; j++, s++) {
			for (t = 0; t < l; t++) {
				uint32_t base = t * (uint32_t)(h + 1);

				/* on LR i, GR{i,j} is the (j-1)-th other position; on LR j the i-th
				 */
				link_sw(f, base + i, p + j, s, 2 * t + 1);
				link_sw(f, base + j, p + i + 1, s, 2 * t + 2);
			}
		}
	}
	return GEN_OK;
}
