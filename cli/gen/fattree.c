/*
 * fattree.c - the fat-tree families: fattree2 (two levels), ktree (k-ary n-trees), xgft, and
 * the real-life trees fattree and islands, all but fattree2 built as one parallel-ports
 * generalized fat tree (struct tree_shape) by tree_build().
 *
 * Port order.  fattree2: a leaf has its hosts on ports 1..H, then --links-per-pair ports to
 * each spine in spine order; spine s has those of leaf l on ports l*r+1..(l+1)*r.  Trees: a
 * level-l switch has its down ports first, p_l for each child in child-digit order (on a leaf
 * the m_1 host ports, of which a leaf of a real-life tree may use fewer), then its up ports,
 * p_(l+1) for each parent in parent-digit order.  The top level has down ports only; a director
 * of islands has them for every switch under it in switch order.  fattree and islands size
 * every switch to --radix (directors to --core-radix), so unused ports stay free.
 */
#include "cli/gen/gen_private.h"
#include "lib/assert.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Up ports of a switch that splits its radix by r: rounded up, never more blocking. */
static uint64_t ratio_up(uint64_t ports, const struct ratio *r)
{
	return ceil_div(ports * r->up, r->down + r->up);
}

/* Up ports that carry d of down traffic at ratio r; rounded up likewise. */
static uint64_t ratio_up_for(uint64_t down, const struct ratio *r)
{
	return ceil_div(down * r->up, r->down);
}

static const struct ratio ratio_full = { 1, 1 };

int validate_xgft(struct opts *o)
{
	unsigned long h = o->num[OPT_H];

	if (h < 1 || h > TREE_MAX_LEVELS)
		return gen_usage("%s %s: the height must be between 1 and %d", o->name[OPT_H],
				 o->val[OPT_H], TREE_MAX_LEVELS);
	if (o->nm != h)
		return gen_usage("%s %s: expected %lu values m1,...,mh (--h %lu)", o->name[OPT_M],
				 o->val[OPT_M], h, h);
	if (o->nw != h)
		return gen_usage("%s %s: expected %lu values w1,...,wh (--h %lu)", o->name[OPT_W],
				 o->val[OPT_W], h, h);
	if (o->w[1] != 1)
		return gen_usage(
			"%s %s: w1 must be 1: the level-0 nodes are hosts with one port each",
			o->name[OPT_W], o->val[OPT_W]);
	return GEN_OK;
}

/* The fewest levels (2..4) of radix-R switches that hold the hosts. */
static unsigned long fattree_levels(const struct opts *o)
{
	uint64_t r = o->num[OPT_RADIX], up = ratio_up(r, &o->taper);
	uint64_t hold = r > up ? (r - up) * r : 0;
	unsigned long l;

	for (l = 2; l < 4 && hold < o->num[OPT_HOSTS]; l++)
		hold *= r - ratio_up(r, &ratio_full);
	return l;
}

int validate_fattree(struct opts *o)
{
	bool islands = o->topo == TOPO_ISLANDS;
	unsigned long lo = 2, hi = islands ? 3 : 4;

	if (!o->set[OPT_TAPER])
		o->taper = ratio_full;
	if (!o->set[OPT_CORE_TAPER])
		o->core_taper = ratio_full;
	if (!o->set[OPT_CORE_RADIX])
		o->num[OPT_CORE_RADIX] = o->num[OPT_RADIX];
	if (!o->set[OPT_LEVELS])
		o->num[OPT_LEVELS] = islands ? 2 : fattree_levels(o);
	if (o->num[OPT_LEVELS] < lo || o->num[OPT_LEVELS] > hi)
		return gen_usage("%s %s: must be between %lu and %lu", o->name[OPT_LEVELS],
				 o->val[OPT_LEVELS], lo, hi);
	if (o->num[OPT_CORE_RADIX] > GEN_MAX_PORTS)
		return gen_usage("%s %s: InfiniBand switches have at most %d ports",
				 o->name[OPT_CORE_RADIX], o->val[OPT_CORE_RADIX], GEN_MAX_PORTS);
	return GEN_OK;
}

int build_fattree2(struct gen_fabric *f, const struct opts *o)
{
	uint64_t nl = o->num[OPT_LEAVES], ns = o->num[OPT_SPINES];
	uint64_t h = o->num[OPT_HPL], r = o->num[OPT_LPP];
	uint32_t l, s, k;
	int rc;

	rc = gen_fabric_init(f, nl + ns, nl * h, o->num[OPT_RADIX]);
	if (rc)
		return rc;
	for (l = 0; l < nl; l++) {
		sw_desc(f, l, "leaf-%u", l);
		gen_fabric_need(f, l, h + ns * r);
	}
	for (s = 0; s < ns; s++) {
		sw_desc(f, nl + s, "spine-%u", s);
		gen_fabric_need(f, nl + s, nl * r);
	}
	rc = gen_fabric_ports(f);
	if (rc)
		return rc;

	attach_hosts(f, 0, (uint32_t)nl, (uint32_t)h);
	for (l = 0; l < nl; l++)
		for (s = 0; s < ns; s++)
			for (k = 0; k < r; k++)
				link_sw(f, l, h + s * r + k + 1, nl + s, l * r + k + 1);
	return GEN_OK;
}

/*
 * A parallel-ports generalized fat tree PGFT(h; m; w; p) after Zahavi,
 * which covers XGFTs (all p = 1), k-ary n-trees and the real-life trees
 * below.  Level 0 are the hosts, levels 1..h switches.  A level-l node is
 * a digit vector a_h..a_1 with a_j < m_j above the level (j > l) and
 * a_j < w_j at or below it; a level-(l-1) and a level-l node are joined
 * by p_l links iff their digits agree everywhere except at position l.
 * Digit 1 varies fastest in the numbering, so the children of a switch
 * and the hosts of a leaf are consecutive.  With top_all the top level is
 * a crossbar instead: w_h switches, each joined to every level-(h-1)
 * switch, as directors join the islands of one machine.
 */
struct tree_shape {
	unsigned int h;
	uint64_t m[TREE_MAX_LEVELS + 2];
	uint64_t w[TREE_MAX_LEVELS + 2]; /* w[h + 1] stays 0: no up ports on top */
	uint64_t p[TREE_MAX_LEVELS + 2];
	uint64_t ports[TREE_MAX_LEVELS + 1]; /* radix of a level, 0: what it needs */
	uint64_t groups;		     /* top-level subtrees with their own hosts */
	uint64_t group_hosts;		     /* spread over a group's leaves; 0: m_1 each */
	bool top_all;			     /* top switches join every level h-1 switch */
	const char *const *names;	     /* per level; NULL: "<name> level <l>" */
	const char *name;
	unsigned int level0; /* number shown for level 1 */
};

static uint64_t tree_width(const struct tree_shape *t, unsigned int l)
{
	uint64_t n = 1;
	unsigned int j;

	if (t->top_all && l == t->h)
		return t->w[l];
	for (j = 1; j <= t->h; j++)
		n *= j > l ? t->m[j] : t->w[j];
	return n;
}

/* Switch count per level and in total, refusing shapes beyond the limits. */
static int tree_size(const struct tree_shape *t, uint64_t *first, const char *what)
{
	uint64_t total = 0, n = 1;
	unsigned int l, j;

	for (l = 1; l <= t->h; l++) {
		for (j = 1, n = 1; j <= t->h; j++) {
			n *= j > l ? t->m[j] : t->w[j];
			if (n > GEN_MAX_SWITCHES)
				break;
		}
		if (t->top_all && l == t->h)
			n = t->w[l];
		first[l] = total;
		total += n;
		if (n > GEN_MAX_SWITCHES || total > GEN_MAX_SWITCHES)
			return gen_usage("%s: fabric too large (more than %lu switches)", what,
					 GEN_MAX_SWITCHES);
	}
	first[t->h + 1] = total;
	return GEN_OK;
}

static void tree_desc(struct gen_fabric *f, const struct tree_shape *t, unsigned int l, uint32_t s,
		      uint64_t i)
{
	uint64_t per = tree_width(t, l) / t->m[t->h];

	if (!t->names)
		sw_desc(f, s, "%s level %u switch %" PRIu64, t->name, l - 1 + t->level0, i);
	else if (t->groups > 1 && l < t->h)
		sw_desc(f, s, "%s %" PRIu64 " %s %" PRIu64, t->name, i / per, t->names[l], i % per);
	else
		sw_desc(f, s, "%s %" PRIu64, t->names[l], i);
}

/* Joins every level-(l-1) switch to its w_l parents, p_l links each. */
static void tree_link_level(struct gen_fabric *f, const struct tree_shape *t, const uint64_t *first,
			    unsigned int l)
{
	uint64_t lo_n = 1, ml = t->m[l], wl = t->w[l], pl = t->p[l];
	uint64_t up0 = t->m[l - 1] * t->p[l - 1]; /* down ports of the lower switch */
	uint64_t x, n = first[l] - first[l - 1], b, k;
	unsigned int j;

	if (t->top_all && l == t->h)
		ml = n; /* one digit: the lower switch's number */
	else
		for (j = 1; j < l; j++)
			lo_n *= t->w[j];
	for (x = 0; x < n; x++) {
		uint64_t lo = x % lo_n, a = (x / lo_n) % ml, hi = x / lo_n / ml;

		for (b = 0; b < wl; b++) {
			uint64_t y = lo + lo_n * (b + wl * hi);

			sn_assert(first[l] + y < first[l + 1]);

			for (k = 0; k < pl; k++)
				link_sw(f, (uint32_t)(first[l - 1] + x), up0 + b * pl + k + 1,
					(uint32_t)(first[l] + y), a * pl + k + 1);
		}
	}
}

static int tree_build(struct gen_fabric *f, const struct tree_shape *t, unsigned long radix,
		      const char *what)
{
	uint64_t first[TREE_MAX_LEVELS + 2], leaves, per_group, hosts, g;
	unsigned int l;
	uint64_t i;
	int rc;

	rc = tree_size(t, first, what);
	if (rc)
		return rc;
	leaves = first[2] - first[1];
	hosts = t->group_hosts ? t->groups * t->group_hosts : leaves * t->m[1];
	rc = gen_fabric_init(f, first[t->h + 1], hosts, radix);
	if (rc)
		return rc;
	for (l = 1; l <= t->h; l++) {
		uint64_t need = t->m[l] * t->p[l] + t->w[l + 1] * t->p[l + 1];

		if (t->ports[l])
			need = t->ports[l];
		for (i = first[l]; i < first[l + 1]; i++) {
			tree_desc(f, t, l, (uint32_t)i, i - first[l]);
			gen_fabric_need(f, (uint32_t)i, need);
		}
	}
	rc = gen_fabric_ports(f);
	if (rc)
		return rc;

	/* every group is a whole top-level subtree */
	sn_assert(t->groups && leaves % t->groups == 0);
	per_group = leaves / t->groups;
	for (g = 0; g < t->groups; g++)
		attach_spread(f, (uint32_t)(g * per_group), (uint32_t)per_group,
			      (uint32_t)(g * hosts / t->groups), hosts / t->groups);
	for (l = 2; l <= t->h; l++)
		tree_link_level(f, t, first, l);
	return GEN_OK;
}

/* XGFT(h; m; w) with level 0 as the hosts: hosts = prod m_j. */
static void tree_plain(struct tree_shape *t, unsigned int h, uint64_t r, const char *name)
{
	unsigned int l;

	memset(t, 0, sizeof(*t));
	t->h = h;
	t->name = name;
	t->level0 = 1;
	t->groups = 1;
	t->p[1] = 1;
	for (l = 2; l <= h; l++)
		t->p[l] = r;
}

/* A k-ary n-tree with H hosts per leaf is XGFT(n; H,k..k; 1,k..k). */
int build_ktree(struct gen_fabric *f, const struct opts *o)
{
	uint64_t k = o->num[OPT_K], n = o->num[OPT_N];
	struct tree_shape t;
	char what[64];
	unsigned int l;

	snprintf(what, sizeof(what), "--k %lu --n %lu", o->num[OPT_K], o->num[OPT_N]);
	if (n > TREE_MAX_LEVELS)
		return gen_usage("%s: fabric too large (more than %lu switches)", what,
				 GEN_MAX_SWITCHES);
	tree_plain(&t, (unsigned int)n, 1, "ktree");
	t.level0 = 0;
	t.m[1] = o->num[OPT_HPL];
	t.w[1] = 1;
	for (l = 2; l <= n; l++) {
		t.m[l] = k;
		t.w[l] = k;
	}
	return tree_build(f, &t, o->num[OPT_RADIX], what);
}

int build_xgft(struct gen_fabric *f, const struct opts *o)
{
	struct tree_shape t;
	unsigned int l, h = (unsigned int)o->num[OPT_H];

	tree_plain(&t, h, o->num[OPT_LPP], "xgft");
	for (l = 1; l <= h; l++) {
		t.m[l] = o->m[l];
		t.w[l] = o->w[l];
	}
	return tree_build(f, &t, o->num[OPT_RADIX], "xgft");
}

/*
 * Real-life fat trees: every switch has the same radix R, a leaf splits
 * its ports by the taper (down:up), the levels above the leaves are
 * non-blocking (as many up as used down ports) and the top level has only
 * down ports.  The shape is planned top-down (as few subtrees per level
 * as hold the leaves, the leaves spread evenly) and then bottom-up (each
 * switch joins each parent by as many parallel links as fit, so there are
 * as few parents as possible).  Islands are the same with one more level
 * on top, one subtree per island, whose switches are the directors.
 */
struct rlft_req {
	unsigned int levels; /* switch levels in total, directors included */
	uint64_t radix;
	uint64_t top_radix;
	struct ratio leaf;
	struct ratio top_up; /* down:up of the level under the top, islands only */
	bool islands;	     /* the top level are directors over whole islands */
	uint64_t groups;     /* islands, or 1 */
	uint64_t hosts;	     /* per group */
	uint64_t lpp;	     /* --links-per-pair, 0: as many as fit */
	const char *hosts_opt;
};

static const struct ratio *rlft_ratio(const struct rlft_req *rq, unsigned int l)
{
	if (l == 1)
		return &rq->leaf;
	if (rq->islands && l + 1 == rq->levels)
		return &rq->top_up;
	return &ratio_full;
}

/* Down ports a level-l switch may use. */
static uint64_t rlft_cap(const struct rlft_req *rq, unsigned int l)
{
	if (l == rq->levels)
		return rq->top_radix;
	return rq->radix - ratio_up(rq->radix, rlft_ratio(rq, l));
}

static int rlft_top_down(struct tree_shape *t, const struct rlft_req *rq, const uint64_t *cap_l)
{
	unsigned int h = rq->levels, l;
	uint64_t rem = ceil_div(rq->hosts, t->m[1]);

	if (rq->islands) {
		if (rem > cap_l[h - 1])
			return gen_usage("%s %" PRIu64 ": an island of %u levels of %" PRIu64
					 "-port switches with taper %lu:%lu holds at most %" PRIu64
					 " hosts",
					 rq->hosts_opt, rq->hosts, h - 1, rq->radix, rq->leaf.down,
					 rq->leaf.up, cap_l[h - 1] * t->m[1]);
		if (rq->groups > rq->top_radix)
			return gen_usage("--islands %" PRIu64 ": more islands than the %" PRIu64
					 " ports of a director switch (see --core-radix)",
					 rq->groups, rq->top_radix);
		t->m[h] = rq->groups;
	} else {
		t->m[h] = ceil_div(rem, cap_l[h - 1]);
		if (t->m[h] > rq->top_radix)
			return gen_usage("%s %" PRIu64 ": a fat tree of %u levels of %" PRIu64
					 "-port switches with taper %lu:%lu holds at most %" PRIu64
					 " hosts (use more --levels or a larger --radix)",
					 rq->hosts_opt, rq->hosts, h, rq->radix, rq->leaf.down,
					 rq->leaf.up, rq->top_radix * cap_l[h - 1] * t->m[1]);
		rem = ceil_div(rem, t->m[h]);
	}
	for (l = h - 1; l >= 2; l--) {
		t->m[l] = ceil_div(rem, cap_l[l - 1]);
		rem = ceil_div(rem, t->m[l]);
	}
	return GEN_OK;
}

/*
 * Up ports u (need <= u <= avail) and links per parent p of a level-(l-1)
 * switch: the fewest parents u / p whose down ports hold m_l * p links,
 * then the fewest up ports.  Returns 0 if nothing fits.
 */
static uint64_t rlft_parents(const struct rlft_req *rq, uint64_t m, uint64_t cap, uint64_t need,
			     uint64_t avail, uint64_t *pp)
{
	uint64_t u, p, best = 0;

	for (u = need; u <= avail; u++) {
		for (p = rq->lpp ? rq->lpp : 1; p <= u && m * p <= cap; p++) {
			if (!(u % p) && (!best || u / p < best)) {
				best = u / p;
				*pp = p;
			}
			if (rq->lpp)
				break;
		}
	}
	return best;
}

static int rlft_bottom_up(struct tree_shape *t, const struct rlft_req *rq, const uint64_t *cap)
{
	uint64_t need = ratio_up(rq->radix, &rq->leaf), avail = need, p = 1;
	unsigned int l;

	for (l = 2; l <= rq->levels; l++) {
		uint64_t m = t->top_all && l == t->h ? tree_width(t, l - 1) : t->m[l];

		t->w[l] = rlft_parents(rq, m, cap[l], need, avail, &p);
		if (!t->w[l] && !rq->lpp)
			return gen_usage("--islands %" PRIu64 ": the %" PRIu64
					 " top switches of the islands do not fit the %" PRIu64
					 " ports of a director switch (see --core-radix)",
					 rq->groups, m, cap[l]);
		if (!t->w[l])
			return gen_usage("--links-per-pair %" PRIu64
					 ": a level-%u switch has %" PRIu64 " to %" PRIu64
					 " up ports and its parents %" PRIu64
					 " down ports for %" PRIu64 " children; no multiple fits",
					 rq->lpp, l - 1, need, avail, cap[l], m);
		t->p[l] = p;
		t->ports[l] = l == rq->levels ? rq->top_radix : rq->radix;
		need = ratio_up_for(m * p, rlft_ratio(rq, l));
		avail = rq->radix - cap[l];
	}
	return GEN_OK;
}

static int rlft_plan(struct tree_shape *t, const struct rlft_req *rq)
{
	uint64_t cap[TREE_MAX_LEVELS + 1], cap_l[TREE_MAX_LEVELS + 1];
	unsigned int l;
	int rc;

	memset(t, 0, sizeof(*t));
	t->h = rq->levels;
	t->top_all = rq->islands;
	t->groups = rq->groups;
	t->group_hosts = rq->hosts;
	cap_l[1] = 1;
	for (l = 1; l <= rq->levels; l++) {
		cap[l] = rlft_cap(rq, l);
		if (!cap[l])
			return gen_usage("%s %lu:%lu: leaves no down port on a switch of %" PRIu64
					 " ports (--radix)",
					 l == 1 ? "--taper" : "--core-taper",
					 rlft_ratio(rq, l)->down, rlft_ratio(rq, l)->up, rq->radix);
		if (l >= 2)
			cap_l[l] = cap_l[l - 1] * cap[l];
	}
	t->m[1] = cap[1];
	t->w[1] = 1;
	t->p[1] = 1;
	t->ports[1] = rq->radix;
	rc = rlft_top_down(t, rq, cap_l);
	if (!rc)
		rc = rlft_bottom_up(t, rq, cap);
	return rc;
}

int build_fattree(struct gen_fabric *f, const struct opts *o)
{
	static const char *const names[] = { "", "leaf", "spine", "core", "super-core" };
	struct rlft_req rq = {
		.levels = (unsigned int)o->num[OPT_LEVELS],
		.radix = o->num[OPT_RADIX],
		.top_radix = o->num[OPT_RADIX],
		.leaf = o->taper,
		.groups = 1,
		.hosts = o->num[OPT_HOSTS],
		.lpp = o->set[OPT_LPP] ? o->num[OPT_LPP] : 0,
		.hosts_opt = "--hosts",
	};
	struct tree_shape t;
	int rc;

	rc = rlft_plan(&t, &rq);
	if (rc)
		return rc;
	t.names = names;
	t.name = "fattree";
	return tree_build(f, &t, 0, "fattree");
}

int build_islands(struct gen_fabric *f, const struct opts *o)
{
	const char *names[] = { "", "leaf", "spine", "core", "director" };
	struct rlft_req rq = {
		.levels = (unsigned int)o->num[OPT_LEVELS] + 1,
		.radix = o->num[OPT_RADIX],
		.top_radix = o->num[OPT_CORE_RADIX],
		.leaf = o->taper,
		.top_up = o->core_taper,
		.islands = true,
		.groups = o->num[OPT_ISLANDS],
		.hosts = o->num[OPT_HPI],
		.lpp = o->set[OPT_LPP] ? o->num[OPT_LPP] : 0,
		.hosts_opt = "--hosts-per-island",
	};
	struct tree_shape t;
	int rc;

	rc = rlft_plan(&t, &rq);
	if (rc)
		return rc;
	names[rq.levels] = "director";
	t.names = names;
	t.name = "island";
	return tree_build(f, &t, 0, "islands");
}
