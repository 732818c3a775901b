/*
 * torus.c - tori and meshes of up to three dimensions (--dims 8x8x4, --mesh), and the switch
 * layers file (--layers-file) that splits every ring in halves for Nue.
 *
 * Port order: hosts on ports 1..T; then per dimension, in dimension order, r ports
 * (--links-per-pair) to the +1 neighbour followed by r ports to the -1 neighbour.  A dimension
 * of size 2 has one bundle of r ports (both neighbours are the same switch) and one of size 1
 * none; on a mesh the edge switches leave the missing neighbour's ports free.  Switch s has
 * coordinate (s / stride_d) mod size_d, the first dimension varying fastest.
 */
#include "cli/gen/gen_private.h"
#include "lib/assert.h"

#include <inttypes.h>
#include <stdio.h>

int build_torus(struct gen_fabric *f, const struct opts *o)
{
	uint64_t t = o->num[OPT_HPS], r = o->num[OPT_LPP];
	uint64_t nsw = 1, need = t, stride[3], first[3];
	unsigned int nd = o->ndims, d;
	uint32_t s, k;
	char coord[40];
	int rc;

	for (d = 0; d < nd; d++) {
		stride[d] = nsw;
		nsw *= o->dims[d];
		if (nsw > GEN_MAX_SWITCHES)
			return gen_usage("%s %s: fabric too large (more than %lu switches)",
					 o->name[OPT_DIMS], o->val[OPT_DIMS], GEN_MAX_SWITCHES);
		first[d] = need + 1;
		if (o->dims[d] == 2)
			need += r;
		else if (o->dims[d] > 2)
			need += 2 * r;
	}
	rc = gen_fabric_init(f, nsw, nsw * t, o->num[OPT_RADIX]);
	if (rc)
		return rc;
	for (s = 0; s < nsw; s++) {
		size_t at = 0;

		for (d = 0; d < nd; d++)
			at += (size_t)snprintf(coord + at, sizeof(coord) - at, "%s%" PRIu64,
					       d ? "," : "", (s / stride[d]) % o->dims[d]);
		sw_desc(f, s, "%s %s", o->set[OPT_MESH] ? "mesh" : "torus", coord);
		gen_fabric_need(f, s, need);
	}
	rc = gen_fabric_ports(f);
	if (rc)
		return rc;

	attach_hosts(f, 0, f->nsw, (uint32_t)t);
	for (s = 0; s < nsw; s++) {
		for (d = 0; d < nd; d++) {
			uint64_t size = o->dims[d], c = (s / stride[d]) % size;
			uint32_t nb;

			if (size < 2)
				continue;
			if (size == 2) {
				/* the +1 and -1 neighbours coincide: one bundle */
				if (c)
					continue;
				for (k = 0; k < r; k++)
					link_sw(f, s, first[d] + k, s + stride[d], first[d] + k);
				continue;
			}
			if (c + 1 < size)
				nb = s + stride[d];
			else if (!o->set[OPT_MESH])
				nb = s - (size - 1) * stride[d];
			else
				continue;
			sn_assert(nb < nsw);
			for (k = 0; k < r; k++)
				link_sw(f, s, first[d] + k, nb, first[d] + r + k);
		}
	}
	return GEN_OK;
}

/* Torus switch s's block of halves: bit i set in the upper half of the i-th cut dimension. */
static unsigned torus_block(const struct opts *o, uint32_t s)
{
	uint64_t stride = 1;
	unsigned d, bit = 0, layer = 0;

	for (d = 0; d < o->ndims; d++) {
		uint64_t c = (s / stride) % o->dims[d];

		if (o->dims[d] >= 2)
			layer |= (unsigned)(c * 2 / o->dims[d]) << bit++;
		stride *= o->dims[d];
	}
	return layer;
}

/* --layers-file: the torus's blocks of halves as a switch layers file (nue_layers=). */
void write_layers(FILE *fp, const struct gen_fabric *f, const struct opts *o)
{
	uint32_t s;

	fprintf(fp, "# sar-nue switch layers (nue_layers=): blocks of half of each ring\n");
	for (s = 0; s < f->nsw; s++)
		if (!f->dead[s])
			fprintf(fp, "\"%s\" %u\n", f->desc[s], torus_block(o, s));
}
