/*
 * hyperx.c - HyperX of up to three dimensions (--dims 4x4x4): switches on a grid, every switch
 * joined to every other switch that differs from it in exactly one coordinate.
 *
 * Port order: hosts on ports 1..T; then per dimension, in dimension order, a block of
 * (S_d - 1) * r ports, r (--links-per-pair) for every other switch of the line in coordinate
 * order, skipping the switch itself, so a port names the same peer on every switch.
 */
#include "cli/gen/gen_private.h"

#include <inttypes.h>
#include <stdio.h>

int validate_hyperx(const struct opts *o)
{
	unsigned int i;

	for (i = 0; i < o->ndims; i++)
		if (o->dims[i] < 2)
			return gen_usage("%s %s: every HyperX dimension must be at least 2",
					 o->name[OPT_DIMS], o->val[OPT_DIMS]);
	return GEN_OK;
}

/*
 * HyperX: switches on a grid, each joined to every switch that differs in
 * exactly one coordinate, i.e. a clique along every line of the grid.
 */
int build_hyperx(struct gen_fabric *f, const struct opts *o)
{
	uint64_t t = o->num[OPT_HPS], r = o->num[OPT_LPP];
	uint64_t nsw = 1, need = t, stride[3], first[3];
	unsigned int nd = o->ndims, d;
	uint32_t s;
	char coord[40];
	int rc;

	for (d = 0; d < nd; d++) {
		stride[d] = nsw;
		nsw *= o->dims[d];
		if (nsw > GEN_MAX_SWITCHES)
			return gen_usage("%s %s: fabric too large (more than %lu switches)",
					 o->name[OPT_DIMS], o->val[OPT_DIMS], GEN_MAX_SWITCHES);
		first[d] = need + 1;
		need += (o->dims[d] - 1) * r;
	}
	rc = gen_fabric_init(f, nsw, nsw * t, o->num[OPT_RADIX]);
	if (rc)
		return rc;
	for (s = 0; s < nsw; s++) {
		size_t at = 0;

		for (d = 0; d < nd; d++)
			at += (size_t)snprintf(coord + at, sizeof(coord) - at, "%s%" PRIu64,
					       d ? "," : "", (s / stride[d]) % o->dims[d]);
		sw_desc(f, s, "hyperx %s", coord);
		gen_fabric_need(f, s, need);
	}
	rc = gen_fabric_ports(f);
	if (rc)
		return rc;

	attach_hosts(f, 0, f->nsw, (uint32_t)t);
	for (d = 0; d < nd; d++)
		for (s = 0; s < nsw; s++)
			if (!((s / stride[d]) % o->dims[d]))
				link_clique(f, s, (uint32_t)stride[d], (uint32_t)o->dims[d],
					    first[d], r);
	return GEN_OK;
}
