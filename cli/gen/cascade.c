/*
 * cascade.c - Cray Cascade (Aries), the dragonfly of Domke's thesis, Section 3.2.4: G groups of
 * 96 switches on a 16 x 6 grid, linked all-to-all along each row of 16 (the "green" links, one
 * per pair) and along each column of 6 (the "black" links, B per pair: 3 as the machines are
 * cabled and as Table 6.1's channel counts need, 1 for the 20 intra-group links per switch of
 * the text).  Every switch has P hosts (4 on Cascade) and H global links (at most 10); the
 * groups are joined all-to-all by bundles of 4 links, so at most 24H + 1 groups: 241, 92,544
 * hosts, at H = 10.  Every pair of groups gets the same 4*floor(24H/(G-1)) links; global ports
 * left over stay unconnected.
 *
 * Switch order: group by group; in a group switch (x, y), x = 0..15 along the row, y = 0..5,
 * is number y*16 + x.  Ports: hosts 1..P; 15 green ports, peers by x; 5*B black ports, B per
 * peer by y; then H global ports, numbered across the group as build.c's link_groups() does.
 */
#include "cli/gen/gen_private.h"

#include <inttypes.h>

#define CASCADE_ROW 16
#define CASCADE_COL 6
#define CASCADE_GROUP (CASCADE_ROW * CASCADE_COL)
#define CASCADE_MAX_H 10
#define CASCADE_BUNDLE 4

/* How many links join each pair of groups. */
static uint64_t cascade_per_pair(uint64_t g, uint64_t h)
{
	return g < 2 ? 0 : CASCADE_BUNDLE * (CASCADE_GROUP * h / CASCADE_BUNDLE / (g - 1));
}

int validate_cascade(struct opts *o)
{
	uint64_t g, h, maxg;

	if (!o->set[OPT_H])
		o->num[OPT_H] = CASCADE_MAX_H;
	if (!o->set[OPT_P])
		o->num[OPT_P] = 4;
	if (!o->set[OPT_G])
		o->num[OPT_G] = 8;
	if (!o->set[OPT_BLACK])
		o->num[OPT_BLACK] = 3;
	g = o->num[OPT_G];
	h = o->num[OPT_H];
	if (o->set[OPT_H] && (h < 1 || h > CASCADE_MAX_H))
		return gen_usage("%s %s: a Cascade switch has 1 to %d global links", o->name[OPT_H],
				 o->val[OPT_H], CASCADE_MAX_H);
	if (o->set[OPT_BLACK] && !o->num[OPT_BLACK])
		return gen_usage("%s %s: must be at least 1", o->name[OPT_BLACK],
				 o->val[OPT_BLACK]);
	maxg = CASCADE_GROUP * h / CASCADE_BUNDLE + 1;
	if (g > maxg)
		return gen_usage("%s %s: at most 24*H+1 = %" PRIu64 " groups can be joined by "
				 "bundles of 4 links (H = %" PRIu64 ")",
				 o->name[OPT_G], o->val[OPT_G], maxg, h);
	if (g * CASCADE_GROUP > GEN_MAX_SWITCHES)
		return gen_usage("%s %s: fabric too large (96 switches per group, at most %lu)",
				 o->name[OPT_G], o->val[OPT_G], GEN_MAX_SWITCHES);
	return GEN_OK;
}

int build_cascade(struct gen_fabric *f, const struct opts *o)
{
	uint64_t g = o->num[OPT_G], h = o->num[OPT_H], p = o->num[OPT_P], b = o->num[OPT_BLACK];
	uint64_t black = p + CASCADE_ROW, global = black + (CASCADE_COL - 1) * b;
	uint32_t grp, s, y, x;
	int rc;

	rc = gen_fabric_init(f, g * CASCADE_GROUP, g * CASCADE_GROUP * p, o->num[OPT_RADIX]);
	if (rc)
		return rc;
	for (s = 0; s < f->nsw; s++) {
		sw_desc(f, s, "cascade group %u switch %u,%u", s / CASCADE_GROUP,
			s % CASCADE_GROUP % CASCADE_ROW, s % CASCADE_GROUP / CASCADE_ROW);
		gen_fabric_need(f, s, global - 1 + h);
	}
	rc = gen_fabric_ports(f);
	if (rc)
		return rc;

	attach_hosts(f, 0, f->nsw, (uint32_t)p);
	for (grp = 0; grp < g; grp++) {
		uint32_t first = grp * CASCADE_GROUP;

		for (y = 0; y < CASCADE_COL; y++)
			link_clique(f, first + y * CASCADE_ROW, 1, CASCADE_ROW, p + 1, 1);
		for (x = 0; x < CASCADE_ROW; x++)
			link_clique(f, first + x, CASCADE_ROW, CASCADE_COL, black, b);
	}
	link_groups(f, (uint32_t)g, CASCADE_GROUP, 0, (uint32_t)h, global,
		    (uint32_t)cascade_per_pair(g, h));
	return GEN_OK;
}
