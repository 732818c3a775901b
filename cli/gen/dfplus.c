/*
 * dfplus.c - Dragonfly+ (Shpiner et al.; Mellanox): a dragonfly whose groups are two-level fat
 * trees.  Each of G groups has L leaves with P hosts and S spines, every leaf linked to every
 * spine of its group; each spine has H global links, and the groups are joined all-to-all by
 * the same floor(S*H/(G-1)) links per pair, so at most S*H + 1 groups (the default, one link
 * per pair).  A leaf reaches any other group's leaves in three hops (leaf, the spine that holds
 * the link, the far spine, the far leaf).  With L = S = P = H = R/2 every switch has R ports.
 *
 * Switch order: group by group, the L leaves and then the S spines.  Leaf ports: hosts 1..P,
 * then one per spine in order.  Spine ports: one per leaf in order, then H global ports,
 * numbered across the group's spines as build.c's link_groups() does.
 */
#include "cli/gen/gen_private.h"

#include <inttypes.h>

/* Radix 16 throughout: 65 groups, 4,160 hosts. */
#define DFPLUS_DEFAULT 8

int validate_dfplus(struct opts *o)
{
	static const enum opt_id ids[] = { OPT_LEAVES, OPT_SPINES, OPT_HPL, OPT_H };
	uint64_t l, s, h, g, maxg;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ids); i++)
		if (!o->set[ids[i]])
			o->num[ids[i]] = DFPLUS_DEFAULT;
	l = o->num[OPT_LEAVES];
	s = o->num[OPT_SPINES];
	h = o->num[OPT_H];
	if (!h && o->set[OPT_G] && o->num[OPT_G] > 1)
		return gen_usage("%s %s: groups need global links (H >= 1)", o->name[OPT_H],
				 o->val[OPT_H]);
	maxg = s * h + 1;
	if (!o->set[OPT_G])
		o->num[OPT_G] = maxg;
	g = o->num[OPT_G];
	if (g > maxg)
		return gen_usage("%s %s: at most S*H+1 = %" PRIu64 " groups can be joined "
				 "(S = %" PRIu64 ", H = %" PRIu64 ")",
				 o->name[OPT_G], o->val[OPT_G], maxg, s, h);
	if (g * (l + s) > GEN_MAX_SWITCHES)
		return gen_usage(
			"%s %" PRIu64 ": fabric too large (%" PRIu64 " switches, at most %lu)",
			o->set[OPT_G] ? o->name[OPT_G] : "--g", g, g * (l + s), GEN_MAX_SWITCHES);
	return GEN_OK;
}

int build_dfplus(struct gen_fabric *f, const struct opts *o)
{
	uint64_t l = o->num[OPT_LEAVES], s = o->num[OPT_SPINES], p = o->num[OPT_HPL];
	uint64_t h = o->num[OPT_H], g = o->num[OPT_G], per = l + s;
	uint32_t grp, i, j;
	int rc;

	rc = gen_fabric_init(f, g * per, g * l * p, o->num[OPT_RADIX]);
	if (rc)
		return rc;
	for (grp = 0; grp < g; grp++) {
		for (i = 0; i < per; i++) {
			uint32_t sw = (uint32_t)(grp * per + i);

			if (i < l) {
				sw_desc(f, sw, "dfplus group %u leaf %u", grp, i);
				gen_fabric_need(f, sw, p + s);
			} else {
				sw_desc(f, sw, "dfplus group %u spine %" PRIu64, grp, i - l);
				gen_fabric_need(f, sw, l + h);
			}
		}
	}
	rc = gen_fabric_ports(f);
	if (rc)
		return rc;

	for (grp = 0; grp < g; grp++) {
		uint32_t first = (uint32_t)(grp * per);

		attach_spread(f, first, (uint32_t)l, (uint32_t)(grp * l * p), l * p);
		for (i = 0; i < l; i++)
			for (j = 0; j < s; j++)
				link_sw(f, first + i, p + 1 + j, first + (uint32_t)l + j, i + 1);
	}
	if (g >= 2)
		link_groups(f, (uint32_t)g, (uint32_t)per, (uint32_t)l, (uint32_t)h, l + 1,
			    (uint32_t)(s * h / (g - 1)));
	return GEN_OK;
}
