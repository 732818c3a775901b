/*
 * verify.c - reachability, forwarding-loop and credit-loop check of routing tables.
 *
 * For a fixed destination LID and SL the route onward from a switch does not depend on where the
 * packet came from, so the walk from each source stops at the first switch already resolved in
 * this (destination, SL) pass; only the dependency at that junction is new.  That makes the check
 * about O(pairs + switches * LIDs) instead of O(pairs * path length).
 *
 * Without a per-port SL2VL table the pairs term goes too: the source LIDs are grouped once by the
 * switch their packets enter at (and, with per-source SLs, by what decides their SL), and each
 * pass walks once per group and counts the outcome for all its LIDs but the destination port's
 * own; end ports add the link to their switch, which adds no dependency.  Counts, hops and
 * dependencies do not depend on the order of the walks, but the first failure's message names
 * the first failing pair in port order, so a pass that finds a failure of a kind not yet named is
 * redone pair by pair.  With per-port SL2VL (from dump files) every pair is walked on its own.
 *
 * The dependency graph's vertices are (channel, VL) pairs, because SL2VL may move a packet to
 * another VL at every switch; an edge joins the VL a packet holds on its input channel to the one
 * it asks for on the output.  Edges are kept in a hash set, then the graph is compacted and
 * searched for a cycle with an iterative DFS.
 *
 * verify_feed (verify.h, verify_feed.c) runs the same passes on a thread of its own while an
 * engine that promises final LFT columns (sar-nue on one layer) is still routing, on a copy of
 * those columns that is compared with the final tables at the end.  After a routing, on large
 * tables, verify_routing_threads walks the upper half of the destination LIDs on a second thread
 * with a walker of its own and merges its counts and dependencies before the cycle search.
 */
#include "check/verify.h"

#include "lib/sortu64.h"
#include "lib/assert.h"
#include "check/mcastcheck.h"
#include "check/walker.h"
#include "lib/threads.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum walk_state {
	W_NONE = 0,
	W_ACTIVE, /* on the walk being followed: meeting it again is a loop */
	W_REACH,
	W_FAIL,
	W_LOOP,
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

/* Keeps the hash table at most half full; the list holds count keys, so cap / 2 suffice. */
static int deps_grow(struct dep_set *d)
{
	size_t ncap = d->cap ? d->cap * 2 : 1 << 10, i;
	uint64_t *nk = calloc(ncap, sizeof(*nk));
	uint64_t *nl = malloc(ncap / 2 * sizeof(*nl));

	/* Probes wrap with ncap - 1; the list holds every key the table does. */
	sn_assert(!(ncap & (ncap - 1)) && d->count <= ncap / 2);
	if (!nk || !nl) {
		free(nk);
		free(nl);
		return -1;
	}
	for (i = 0; i < d->count; i++) {
		size_t j = mix(d->list[i]) & (ncap - 1);

		while (nk[j])
			j = (j + 1) & (ncap - 1);
		nk[j] = d->list[i];
		nl[i] = d->list[i];
	}
	free(d->keys);
	free(d->list);
	d->keys = nk;
	d->list = nl;
	d->cap = ncap;
	return 0;
}

#define VERTEX(vl, ch) DEP_VERTEX(vl, ch)
#define VERTEX_VL(v) DEP_VERTEX_VL(v)
#define VERTEX_CH(v) DEP_VERTEX_CH(v)

static int deps_has(const struct dep_set *d, uint64_t key)
{
	size_t j;

	if (!d->cap)
		return 0;
	for (j = mix(key) & (d->cap - 1); d->keys[j]; j = (j + 1) & (d->cap - 1))
		if (d->keys[j] == key)
			return 1;
	return 0;
}

static int deps_add(struct dep_set *d, uint32_t from, uint32_t to)
{
	uint64_t key = DEP_KEY(from, to);
	size_t j;

	if ((d->count + 1) * 2 > d->cap && deps_grow(d))
		return -1;
	j = mix(key) & (d->cap - 1);
	while (d->keys[j]) {
		if (d->keys[j] == key)
			return 0;
		j = (j + 1) & (d->cap - 1);
	}
	sn_assert(d->count < d->cap / 2);
	d->keys[j] = key;
	d->list[d->count++] = key;
	return 0;
}

static void describe_port(const struct fabric *f, uint32_t p, char *buf, size_t len)
{
	const struct fab_port *port = &f->ports[p];

	snprintf(buf, len, "%s[%u]", fabric_node_desc(f, port->node), port->num);
}

static void note_failure(struct walker *w, int loop, uint32_t src_port, unsigned slid,
			 unsigned dlid, const char *why)
{
	char *dst = loop ? w->rep->first_loop : w->rep->first_unreachable;
	size_t len = loop ? sizeof(w->rep->first_loop) : sizeof(w->rep->first_unreachable);
	char name[160];

	if (loop)
		w->rep->loops++;
	else
		w->rep->unreachable++;
	if (*dst)
		return;
	describe_port(w->f, src_port, name, sizeof(name));
	snprintf(dst, len, "from %s (LID %u) to LID %u: %s", name, slid, dlid, why);
}

static void add_dep(struct walker *w, unsigned vl_in, uint32_t from, unsigned vl_out, uint32_t to)
{
	/* A vertex packs the VL into 4 bits above a 28-bit channel. */
	sn_assert(vl_in < VERIFY_MAX_VLS && vl_out < VERIFY_MAX_VLS);
	sn_assert(from < w->f->nports && to < w->f->nports && w->f->nports <= 1u << 28);
	w->rep->vls_used |= (uint16_t)((1u << vl_in) | (1u << vl_out));
	if (w->seen && vl_in == vl_out && vl_in < w->seen_vls) {
		const struct fab_port *o = &w->f->ports[to];
		const struct fab_node *n = &w->f->nodes[o->node];
		uint64_t bit =
			w->turn_off[n->sw] +
			(uint64_t)w->f->ports[w->f->ports[from].remote].num * (n->nports + 1u) +
			o->num;

		sn_assert(w->f->ports[w->f->ports[from].remote].node == o->node);
		bit = bit * w->seen_vls + vl_in;
		if (w->seen[bit >> 6] & (1ull << (bit & 63)))
			return;
		w->seen[bit >> 6] |= 1ull << (bit & 63);
	}
	if (deps_add(&w->deps, VERTEX(vl_in, from), VERTEX(vl_out, to)))
		w->oom = 1;
}

/* The turn bits of add_dep(); none (w->seen NULL) on fabrics whose bits would not pay. */
static int seen_open(struct walker *w)
{
	const struct fabric *f = w->f;
	uint64_t turns = 0;
	uint32_t s;

	w->turn_off = malloc(sizeof(*w->turn_off) * (f->nswitches + 1));
	if (!w->turn_off)
		return -1;
	for (s = 0; s < f->nswitches; s++) {
		uint64_t np = f->nodes[f->switches[s]].nports + 1u;

		w->turn_off[s] = (uint32_t)turns;
		turns += np * np;
	}
	w->turn_off[f->nswitches] = (uint32_t)turns;
	w->seen_vls = w->r->vls_used >= 1 && w->r->vls_used < WALKER_SEEN_VLS ? w->r->vls_used
									      : WALKER_SEEN_VLS;
	if (turns * w->seen_vls / 8 > WALKER_SEEN_MAX_BYTES)
		return 0;
	w->seen = calloc((size_t)(turns * w->seen_vls / 64 + 1), sizeof(uint64_t));
	return w->seen ? 0 : -1;
}

/* verify_lft_step() for the entry out that switch sw's LFT holds for dlid. */
static enum lft_step step_for(const struct fabric *f, uint32_t sw, unsigned dlid, unsigned out,
			      uint32_t *channel, uint32_t *next_sw)
{
	const struct fab_node *n = &f->nodes[f->switches[sw]];
	uint32_t q, peer;

	*channel = FAB_NONE;
	*next_sw = FAB_NONE;
	if (out == FAB_NO_PORT || out > n->nports)
		return LFT_STEP_NO_ENTRY;
	if (out == 0)
		return f->lid_port[dlid] == n->first_port ? LFT_STEP_DELIVERED : LFT_STEP_TO_SELF;
	q = n->first_port + out;
	if (!fabric_channel_up(f, q))
		return LFT_STEP_LINK_DOWN;
	*channel = q;
	peer = f->ports[q].remote;
	if (!fabric_is_switch(f, f->ports[peer].node))
		return f->lid_port[dlid] == peer ? LFT_STEP_DELIVERED : LFT_STEP_WRONG_PORT;
	*next_sw = f->nodes[f->ports[peer].node].sw;
	sn_assert(*next_sw < f->nswitches);
	return LFT_STEP_SWITCH;
}

enum lft_step verify_lft_step(const struct fabric *f, const struct routing *r, uint32_t sw,
			      unsigned dlid, uint32_t *channel, uint32_t *next_sw)
{
	sn_assert(sw < f->nswitches && sw < r->nswitches && dlid < r->lft_len);
	return step_for(f, sw, dlid, routing_lft(r, sw)[dlid], channel, next_sw);
}

enum lft_step verify_lft_entry_step(const struct fabric *f, uint32_t sw, unsigned dlid,
				    unsigned out, uint32_t *channel, uint32_t *next_sw)
{
	sn_assert(sw < f->nswitches && dlid <= f->max_lid);
	return step_for(f, sw, dlid, out, channel, next_sw);
}

/* Switch sw's LFT entry for dlid, from the LID-major copy when there is one. */
static inline unsigned walker_lft(const struct walker *w, uint32_t sw, unsigned dlid)
{
	if (w->lft_by_lid)
		return w->lft_by_lid[(size_t)dlid * w->r->nswitches + sw];
	return routing_lft(w->r, sw)[dlid];
}

/* Why a route stops at a step other than SWITCH or DELIVERED, as the report words it. */
static const char *lft_step_failure(enum lft_step step)
{
	switch (step) {
	case LFT_STEP_NO_ENTRY:
		return "no LFT entry";
	case LFT_STEP_TO_SELF:
		return "LFT sends it to the switch itself";
	case LFT_STEP_LINK_DOWN:
		return "LFT points at a port without an active link";
	case LFT_STEP_WRONG_PORT:
		return "delivered to the wrong end port";
	default:
		return "";
	}
}

/*
 * Follows dlid from switch sw, entered through channel in_ch (FAB_NONE for a path starting at
 * the switch itself).  Returns the walk state; *hops is the number of links from sw onwards.
 */
static int walk(struct walker *w, uint32_t sw, uint32_t in_ch, unsigned vl_in, unsigned dlid,
		unsigned sl, unsigned *hops, const char **why)
{
	const struct fabric *f = w->f;
	uint32_t depth = 0, i, h = 0;
	int result = W_FAIL, joined = 0;

	*why = "joins a route that fails further on";
	for (;;) {
		const struct fab_node *n = &f->nodes[f->switches[sw]];
		unsigned out = walker_lft(w, sw, dlid);
		unsigned in_num = in_ch == FAB_NONE ? 0 : f->ports[f->ports[in_ch].remote].num;
		unsigned vl_out = out <= n->nports ? routing_sl2vl(w->r, sw, in_num, out, sl) : 0;
		/* What follows a switch depends on the VL the packet leaves it on. */
		uint32_t key = sw * VERIFY_MAX_VLS + vl_out, q, next;
		enum lft_step step;

		sn_assert(vl_out < VERIFY_MAX_VLS && sl < ROUTING_MAX_SL);

		/*
		 * A channel leaving an end port has no predecessor, so it cannot lie on a cycle:
		 * only dependencies between switch-to-switch channels are kept.
		 */
		if (out != FAB_NO_PORT && out != 0 && out <= n->nports && in_ch != FAB_NONE &&
		    fabric_is_switch(f, f->ports[in_ch].node))
			add_dep(w, vl_in, in_ch, vl_out, n->first_port + out);
		if (w->stamp[key] == w->pass) {
			if (w->state[key] == W_ACTIVE) {
				result = W_LOOP;
				*why = "forwarding loop";
			} else {
				result = w->state[key];
				h = w->hops[key];
				joined = 1;
			}
			break;
		}
		w->stamp[key] = w->pass;
		w->state[key] = W_ACTIVE;
		/* Each (switch, VL) is entered once per pass: the path fits its array. */
		sn_assert(depth < f->nswitches * VERIFY_MAX_VLS);
		w->path[depth++] = key;
		sn_assert(dlid < w->r->lft_len);
		step = step_for(f, sw, dlid, out, &q, &next);
		if (step == LFT_STEP_DELIVERED) {
			result = W_REACH;
			h = q != FAB_NONE;
			break;
		}
		if (step != LFT_STEP_SWITCH) {
			*why = lft_step_failure(step);
			break;
		}
		sw = next;
		in_ch = q;
		vl_in = vl_out;
	}
	for (i = depth; i-- > 0;) {
		if (joined || i + 1 < depth)
			h++;
		w->state[w->path[i]] = (uint8_t)result;
		w->hops[w->path[i]] = (uint8_t)(h > 255 ? 255 : h);
	}
	*hops = h;
	return result;
}

static int source_entry(const struct fabric *f, uint32_t p, uint32_t *sw, uint32_t *in_ch)
{
	const struct fab_port *port = &f->ports[p];

	if (fabric_is_switch(f, port->node)) {
		*sw = f->nodes[port->node].sw;
		*in_ch = FAB_NONE;
		return 0;
	}
	if (!fabric_channel_up(f, p) || !fabric_is_switch(f, f->ports[port->remote].node))
		return -1;
	*sw = f->nodes[f->ports[port->remote].node].sw;
	sn_assert(*sw < f->nswitches);
	*in_ch = p;
	return 0;
}

/* n delivered paths of the given length. */
static void record_hops(struct walker *w, unsigned hops, uint64_t n)
{
	struct verify_report *rep = w->rep;

	if (!n)
		return;
	if (hops > VERIFY_MAX_HOPS)
		hops = VERIFY_MAX_HOPS;
	sn_assert(hops < sizeof(rep->hop_hist) / sizeof(rep->hop_hist[0]));
	rep->hop_hist[hops] += n;
	if (!w->delivered || hops < rep->min_hops)
		rep->min_hops = hops;
	if (hops > rep->max_hops)
		rep->max_hops = hops;
	w->hop_sum += hops * n;
	w->delivered += n;
}

/* One source LID towards dlid, with the SL the routing gives that pair. */
static void check_pair(struct walker *w, uint32_t src, unsigned slid, unsigned dlid, unsigned sl)
{
	const struct fabric *f = w->f;
	uint32_t sw, in_ch;
	const char *why = NULL;
	unsigned hops;
	int st;

	w->rep->pairs++;
	if (source_entry(f, src, &sw, &in_ch)) {
		note_failure(w, 0, src, slid, dlid, "source port has no active link to a switch");
		return;
	}
	/* An end port sends on the VL its own SL2VL gives: the routing's uniform map. */
	st = walk(w, sw, in_ch, w->r->sl2vl_uniform[sl & 15], dlid, sl, &hops, &why);
	if (st == W_REACH)
		record_hops(w, hops + (in_ch != FAB_NONE), 1);
	else
		note_failure(w, st == W_LOOP, src, slid, dlid, why);
}

/* The SLs of the pairs towards dlid; with source groups, notes each group's SL too. */
static uint16_t sls_towards(struct walker *w, unsigned dlid)
{
	const struct fabric *f = w->f;
	uint16_t mask = 0;
	uint32_t i;

	if (!routing_sl_per_source(w->r))
		return (uint16_t)(1u << routing_path_sl(w->r, 0, (uint16_t)dlid));
	if (w->groups) {
		/* Every end port LID is in a group, and a group's LIDs share the SL. */
		for (i = 0; i < w->groups->n; i++) {
			struct source_group *g = &w->groups->g[i];

			g->sl = routing_path_sl(w->r, g->sl_lid, (uint16_t)dlid);
			sn_assert(g->sl < ROUTING_MAX_SL);
			mask |= (uint16_t)(1u << g->sl);
		}
		return mask;
	}

	for (i = 0; i < f->nendports; i++) {
		const struct fab_port *p = &f->ports[f->endports[i]];
		unsigned k;

		for (k = 0; k < (1u << p->lmc); k++)
			mask |= (uint16_t)(1u << routing_path_sl(w->r, (uint16_t)(p->base_lid + k),
								 (uint16_t)dlid));
	}
	return mask;
}

/* Every source LID towards dlid with SL sl, pair by pair. */
static void check_pairs(struct walker *w, unsigned dlid, unsigned sl)
{
	const struct fabric *f = w->f;
	int per_source = routing_sl_per_source(w->r);
	uint32_t i;

	w->pass++;
	for (i = 0; i < f->nendports; i++) {
		uint32_t src = f->endports[i];
		const struct fab_port *p = &f->ports[src];
		unsigned k;

		if (src == f->lid_port[dlid])
			continue;
		for (k = 0; k < (1u << p->lmc); k++) {
			unsigned slid = p->base_lid + k;

			if (!per_source ||
			    routing_path_sl(w->r, (uint16_t)slid, (uint16_t)dlid) == sl)
				check_pair(w, src, slid, dlid, sl);
		}
	}
}

/*
 * The same pass with one walk per source group.  The outcome of a walk does not depend on the
 * order of the walks, nor do the dependencies it adds (a set), but the first failure's message
 * names the first failing pair in the per-pair order.  So when a group fails in a way whose
 * message is still empty, nothing is counted and the caller redoes the pass pair by pair;
 * returns -1 then, 0 when the pass is counted.
 */
static int check_groups(struct walker *w, unsigned dlid, unsigned sl)
{
	struct source_groups *sg = w->groups;
	struct verify_report *rep = w->rep;
	int per_source = routing_sl_per_source(w->r);
	const char *why;
	uint32_t i;

	w->pass++;
	for (i = 0; i < sg->n; i++) {
		struct source_group *g = &sg->g[i];
		int st = W_FAIL;

		g->state = W_NONE;
		/* Only the destination's own LIDs are skipped, and only those in the group. */
		sn_assert(g->skip_ca <= g->ca_lids && g->skip_self <= g->self_lids);
		if (g->ca_lids == g->skip_ca && g->self_lids == g->skip_self)
			continue;
		if (per_source && g->sl != sl)
			continue;
		if (g->sw != FAB_NONE)
			st = walk(w, g->sw, g->in_ch, w->r->sl2vl_uniform[sl & 15], dlid, sl,
				  &g->hops, &why);
		if ((st == W_FAIL && !*rep->first_unreachable) ||
		    (st == W_LOOP && !*rep->first_loop))
			return -1;
		g->state = (uint8_t)st;
	}
	for (i = 0; i < sg->n; i++) {
		const struct source_group *g = &sg->g[i];
		uint64_t ca = g->ca_lids - g->skip_ca, self = g->self_lids - g->skip_self;

		if (g->state == W_NONE)
			continue;
		rep->pairs += ca + self;
		if (g->state == W_REACH) {
			record_hops(w, g->hops + 1, ca);
			record_hops(w, g->hops, self);
		} else if (g->state == W_LOOP) {
			rep->loops += ca + self;
		} else {
			rep->unreachable += ca + self;
		}
	}
	return 0;
}

/* The destination port's own LIDs leave their groups for its passes (skip 1), then rejoin. */
static void skip_destination(struct walker *w, unsigned dlid, int skip)
{
	const struct fabric *f = w->f;
	struct source_groups *sg = w->groups;
	uint32_t d = f->lid_port[dlid], e = sg->endport_of[d], j;
	int self = fabric_is_switch(f, f->ports[d].node);

	if (e == FAB_NONE)
		return;
	sn_assert(e < f->nendports && f->endports[e] == d);
	for (j = sg->elem_first[e]; j < sg->elem_first[e + 1]; j++) {
		struct source_group *g;

		sn_assert(sg->elem_group[j] < sg->n);
		g = &sg->g[sg->elem_group[j]];
		/* Every skip is undone once the destination's passes are over: they balance. */
		sn_assert(skip || (self ? g->skip_self : g->skip_ca) > 0);

		if (self)
			g->skip_self = skip ? g->skip_self + 1 : g->skip_self - 1;
		else
			g->skip_ca = skip ? g->skip_ca + 1 : g->skip_ca - 1;
	}
}

static void check_destination(struct walker *w, unsigned dlid)
{
	uint16_t mask = sls_towards(w, dlid);
	unsigned sl;

	w->rep->sls_used |= mask;
	if (w->groups)
		skip_destination(w, dlid, 1);
	for (sl = 0; sl < ROUTING_MAX_SL; sl++) {
		if (!(mask & (1u << sl)))
			continue;
		if (!w->groups || check_groups(w, dlid, sl))
			check_pairs(w, dlid, sl);
	}
	if (w->groups)
		skip_destination(w, dlid, 0);
}

static void groups_free(struct source_groups *sg)
{
	free(sg->g);
	free(sg->elem_first);
	free(sg->elem_group);
	free(sg->endport_of);
	memset(sg, 0, sizeof(*sg));
}

/* The SL-deciding part of a source LID: path SLs depend on it through sl_src_sw alone. */
static uint32_t sl_source_key(const struct routing *r, uint16_t slid)
{
	if (!routing_sl_per_source(r))
		return 0;
	if (slid < r->lft_len && r->sl_src_sw[slid] < r->nswitches)
		return r->sl_src_sw[slid];
	return r->nswitches;
}

#define GROUP_ELEM_BITS 24
#define GROUP_KEY_BITS 20

/*
 * Sorts the (end port, LID) elements by (entry switch, SL key) into groups.  Returns 0, 1 when
 * the fabric is too large for the sort key (then every pair is walked on its own), -1 without
 * memory.
 */
static int groups_build(const struct fabric *f, const struct routing *r, struct source_groups *sg)
{
	uint64_t *keys = NULL, prev = UINT64_MAX;
	uint32_t *port = NULL, i, j, nelem = 0, none = f->nswitches;
	uint16_t *lid = NULL;
	int ret = -1;

	memset(sg, 0, sizeof(*sg));
	for (i = 0; i < f->nendports && nelem < 1u << GROUP_ELEM_BITS; i++)
		nelem += 1u << f->ports[f->endports[i]].lmc;
	if (nelem >= 1u << GROUP_ELEM_BITS || f->nswitches + 1 >= 1u << GROUP_KEY_BITS ||
	    r->nswitches + 1 >= 1u << GROUP_KEY_BITS)
		return 1;
	keys = malloc(sizeof(*keys) * (nelem + 1));
	port = malloc(sizeof(*port) * (nelem + 1));
	lid = malloc(sizeof(*lid) * (nelem + 1));
	sg->g = malloc(sizeof(*sg->g) * (nelem + 1));
	sg->elem_first = malloc(sizeof(*sg->elem_first) * (f->nendports + 1));
	sg->elem_group = malloc(sizeof(*sg->elem_group) * (nelem + 1));
	sg->endport_of = malloc(sizeof(*sg->endport_of) * (f->nports + 1));
	if (!keys || !port || !lid || !sg->g || !sg->elem_first || !sg->elem_group ||
	    !sg->endport_of)
		goto out;
	for (i = 0; i < f->nports; i++)
		sg->endport_of[i] = FAB_NONE;
	for (i = 0, j = 0; i < f->nendports; i++) {
		uint32_t p = f->endports[i], sw, in_ch, k;

		sg->endport_of[p] = i;
		sg->elem_first[i] = j;
		if (source_entry(f, p, &sw, &in_ch))
			sw = none;
		for (k = 0; k < (1u << f->ports[p].lmc); k++, j++) {
			port[j] = p;
			lid[j] = (uint16_t)(f->ports[p].base_lid + k);
			keys[j] = (uint64_t)sw << (GROUP_ELEM_BITS + GROUP_KEY_BITS) |
				  (uint64_t)sl_source_key(r, lid[j]) << GROUP_ELEM_BITS | j;
		}
	}
	sg->elem_first[f->nendports] = j;
	sn_assert(j == nelem);
	sort_u64(keys, nelem);
	for (i = 0; i < nelem; i++) {
		uint32_t e = (uint32_t)(keys[i] & ((1u << GROUP_ELEM_BITS) - 1)), p = port[e];
		uint32_t sw = (uint32_t)(keys[i] >> (GROUP_ELEM_BITS + GROUP_KEY_BITS));
		struct source_group *g;

		if (keys[i] >> GROUP_ELEM_BITS != prev) {
			prev = keys[i] >> GROUP_ELEM_BITS;
			g = &sg->g[sg->n++];
			memset(g, 0, sizeof(*g));
			g->sw = sw == none ? FAB_NONE : sw;
			g->in_ch = FAB_NONE;
			g->sl_lid = lid[e];
		}
		sn_assert(e < nelem && sg->n <= nelem && (sw == none || sw < f->nswitches));
		g = &sg->g[sg->n - 1];
		sg->elem_group[e] = sg->n - 1;
		if (fabric_is_switch(f, f->ports[p].node)) {
			g->self_lids++;
		} else {
			g->ca_lids++;
			if (g->sw != FAB_NONE)
				g->in_ch = p;
		}
	}
	ret = 0;
out:
	free(keys);
	free(port);
	free(lid);
	if (ret)
		groups_free(sg);
	return ret;
}

/* The dependency graph in CSR form over dense vertex numbers. */
struct dep_graph {
	uint32_t nv;
	uint32_t *vertex; /* dense number -> (VL, channel) vertex, ascending */
	uint32_t *off, *to;
};

static void dep_graph_free(struct dep_graph *g)
{
	free(g->vertex);
	free(g->off);
	free(g->to);
}

/* Slot of a vertex in the (VL, port) table; ascending slots are ascending vertices. */
static size_t vertex_slot(const struct fabric *f, uint32_t v)
{
	return (size_t)VERTEX_VL(v) * f->nports + VERTEX_CH(v);
}

/* The two ends of a dependency as the set stores it (see struct dep_set). */
static uint32_t dep_from(uint64_t key)
{
	return (uint32_t)((key - 1) >> 32);
}

static uint32_t dep_to(uint64_t key)
{
	return (uint32_t)(key - 1);
}

/* Prefix sums over count[0..n]: count[v] becomes the start of v's run. */
static void prefix_sums(uint32_t *count, uint32_t n)
{
	uint32_t v;

	for (v = 0; v < n; v++)
		count[v + 1] += count[v];
}

/*
 * Vertices are numbered densely in ascending order through a table over every (VL, port).  The
 * edges are then placed by two counting passes, as in a radix sort: by target first, then,
 * keeping that order, by source.  No comparison sort of the whole edge set, which on small
 * fabrics cost more than the walks, and each vertex's targets come out ascending, so the graph
 * and the cycle the search reports are the same as from sorting the edges.
 */
static int dep_graph_build(const struct fabric *f, const struct dep_set *d, unsigned nvls,
			   struct dep_graph *g)
{
	size_t nslots = (size_t)nvls * f->nports, i;
	uint32_t *slot_id = calloc(nslots + 1, sizeof(*slot_id)), *by_to = NULL, *at = NULL, v;
	uint64_t *edges = malloc(sizeof(*edges) * (d->count + 1));
	int ret = -1;

	memset(g, 0, sizeof(*g));
	g->to = malloc(sizeof(*g->to) * (d->count + 1));
	if (!slot_id || !edges || !g->to)
		goto out;
	for (i = 0; i < d->count; i++) {
		/* nvls covers the highest VL any dependency uses. */
		sn_assert(vertex_slot(f, dep_from(d->list[i])) < nslots &&
			  vertex_slot(f, dep_to(d->list[i])) < nslots);
		slot_id[vertex_slot(f, dep_from(d->list[i]))] = 1;
		slot_id[vertex_slot(f, dep_to(d->list[i]))] = 1;
	}
	for (i = 0; i < nslots; i++)
		g->nv += slot_id[i] != 0;
	g->vertex = malloc(sizeof(*g->vertex) * (g->nv + 1));
	g->off = calloc(g->nv + 2, sizeof(*g->off));
	by_to = calloc(g->nv + 2, sizeof(*by_to));
	at = malloc(sizeof(*at) * (g->nv + 1));
	if (!g->vertex || !g->off || !by_to || !at)
		goto out;
	for (i = 0, v = 0; i < nslots; i++) {
		if (!slot_id[i])
			continue;
		g->vertex[v] = VERTEX(i / f->nports, i % f->nports);
		slot_id[i] = v++;
	}
	for (i = 0; i < d->count; i++) {
		by_to[slot_id[vertex_slot(f, dep_to(d->list[i]))] + 1]++;
		g->off[slot_id[vertex_slot(f, dep_from(d->list[i]))] + 1]++;
	}
	sn_assert(v == g->nv);
	prefix_sums(by_to, g->nv);
	prefix_sums(g->off, g->nv);
	/* Every edge is counted once by its target and once by its source. */
	sn_assert(by_to[g->nv] == d->count && g->off[g->nv] == d->count);
	memcpy(at, by_to, sizeof(*at) * g->nv);
	for (i = 0; i < d->count; i++)
		edges[at[slot_id[vertex_slot(f, dep_to(d->list[i]))]]++] = d->list[i];
	memcpy(at, g->off, sizeof(*at) * g->nv);
	for (i = 0; i < d->count; i++)
		g->to[at[slot_id[vertex_slot(f, dep_from(edges[i]))]]++] =
			slot_id[vertex_slot(f, dep_to(edges[i]))];
	ret = 0;
out:
	free(slot_id);
	free(edges);
	free(by_to);
	free(at);
	return ret;
}

/*
 * The arrow for the dependency from -> to in a printed cycle: plain when unicast routes make it,
 * "-(multicast 0xMLID)->" when only a multicast tree does.  *kinds collects bit 0 for unicast,
 * bit 1 for multicast-only.
 */
static void cycle_arrow(const struct walker *w, uint32_t from, uint32_t to, char *buf, size_t len,
			unsigned *kinds)
{
	long k = mcast_deps_find(&w->mdeps, DEP_KEY(from, to));

	if (k < 0 || w->mdeps.shared[k]) {
		*kinds |= 1;
		return;
	}
	*kinds |= 2;
	snprintf(buf, len, " -(multicast 0x%04x)-> ", w->mdeps.mlid[k]);
}

static void print_cycle(struct walker *w, const struct dep_graph *g, const uint32_t *stack,
			uint32_t depth, uint32_t start)
{
	struct verify_report *rep = w->rep;
	size_t used = 0;
	unsigned kinds = 0;
	uint32_t i;

	sn_assert(start < depth && depth <= g->nv);
	for (i = start; i <= depth && used < sizeof(rep->cycle); i++) {
		uint32_t v = g->vertex[stack[i == depth ? start : i]];
		char name[160], arrow[48] = " -> ";

		if (i > start)
			cycle_arrow(w, g->vertex[stack[i - 1]], v, arrow, sizeof(arrow), &kinds);
		describe_port(w->f, VERTEX_CH(v), name, sizeof(name));
		used += (size_t)snprintf(rep->cycle + used, sizeof(rep->cycle) - used,
					 "%s%s (VL %u)", i == start ? "" : arrow, name,
					 VERTEX_VL(v));
		if (i < depth)
			rep->credit_loop_vls |= 1u << VERTEX_VL(v);
	}
	rep->cycle_len = depth - start;
	rep->cycle_mixed = kinds == 3;
}

/* Iterative three-colour DFS; reports the first cycle found. */
static int find_cycle(struct walker *w, const struct dep_graph *g)
{
	uint32_t *stack, *iter, c;
	uint8_t *color;
	int found = 0;

	stack = malloc(sizeof(*stack) * (g->nv + 1));
	iter = malloc(sizeof(*iter) * (g->nv + 1));
	color = calloc(g->nv + 1, 1);
	if (!stack || !iter || !color) {
		found = -1;
		goto out;
	}
	for (c = 0; c < g->nv && !found; c++) {
		uint32_t depth = 0;

		if (color[c])
			continue;
		stack[depth] = c;
		iter[depth++] = g->off[c];
		color[c] = 1;
		while (depth && !found) {
			uint32_t u = stack[depth - 1], v;

			if (iter[depth - 1] == g->off[u + 1]) {
				color[u] = 2;
				depth--;
				continue;
			}
			v = g->to[iter[depth - 1]++];
			sn_assert(v < g->nv);
			if (color[v] == 1) {
				uint32_t start = depth;

				while (start-- > 0 && stack[start] != v)
					;
				print_cycle(w, g, stack, depth, start);
				found = 1;
			} else if (!color[v]) {
				/* Grey vertices are on the stack, each once. */
				sn_assert(depth < g->nv);
				color[v] = 1;
				stack[depth] = v;
				iter[depth++] = g->off[v];
			}
		}
	}
out:
	free(stack);
	free(iter);
	free(color);
	return found;
}

static int check_credit_loops(struct walker *w)
{
	/* VLs above the highest one used hold no vertex: their slots need no table. */
	unsigned nvls = 32 - (unsigned)__builtin_clz(w->rep->vls_used | 1u);
	struct dep_graph g;
	int ret;

	sn_assert(nvls >= 1 && nvls <= VERIFY_MAX_VLS);
	w->rep->dependencies = w->deps.count;
	if (dep_graph_build(w->f, &w->deps, nvls, &g)) {
		dep_graph_free(&g);
		return -1;
	}
	ret = find_cycle(w, &g) < 0 ? -1 : 0;
	dep_graph_free(&g);
	return ret;
}

/* Groups and scratch of a walker over f and r; 0, or -1 without memory (then walker_free). */
int verify_walker_open(struct walker *w, struct source_groups *groups, const struct fabric *f,
		       const struct routing *r, struct verify_report *rep)
{
	size_t keys = (size_t)f->nswitches * VERIFY_MAX_VLS + 1;
	int rc;

	memset(w, 0, sizeof(*w));
	memset(groups, 0, sizeof(*groups));
	memset(rep, 0, sizeof(*rep));
	w->f = f;
	w->r = r;
	w->rep = rep;
	/* With per-port SL2VL the VL out of a switch depends on where a packet came in. */
	if (!r->sl2vl) {
		rc = groups_build(f, r, groups);
		if (rc < 0)
			return -1;
		if (!rc)
			w->groups = groups;
	}
	w->stamp = calloc(keys, sizeof(*w->stamp));
	w->state = calloc(keys, 1);
	w->hops = calloc(keys, 1);
	w->path = malloc(sizeof(*w->path) * keys);
	if (!w->stamp || !w->state || !w->hops || !w->path || deps_grow(&w->deps) || seen_open(w))
		return -1;
	rep->sources = f->nendports;
	return 0;
}

void verify_walker_free(struct walker *w, struct source_groups *groups)
{
	free(w->stamp);
	free(w->state);
	free(w->hops);
	free(w->path);
	free(w->turn_off);
	free(w->seen);
	free(w->lft_by_lid);
	free(w->deps.keys);
	free(w->deps.list);
	mcast_deps_free(&w->mdeps);
	groups_free(groups);
}

/* The destination LIDs in [from, to); -1 without memory. */
int verify_walker_check(struct walker *w, unsigned from, unsigned to)
{
	unsigned dlid;

	sn_assert(from >= 1 && from <= to && to <= w->f->max_lid + 1);
	for (dlid = from; dlid < to; dlid++) {
		if (w->f->lid_port[dlid] == FAB_NONE)
			continue;
		w->rep->destinations++;
		progress_step(w->progress, "verifying", dlid,
			      w->progress_end ? w->progress_end : w->f->max_lid);
		check_destination(w, dlid);
		if (w->oom)
			return -1;
	}
	return 0;
}

/*
 * The multicast trees (routing.mcast): their own checks, then their dependencies join the
 * unicast ones; those the unicast routes do not make are remembered to label a cycle.
 */
static int add_mcast(struct walker *w)
{
	struct mcast_deps *d = &w->mdeps;
	size_t i;

	if (mcast_check_trees(w->f, w->r, w->rep, d) || mcast_deps_sort(d))
		return -1;
	d->shared = calloc(d->n + 1, 1);
	if (!d->shared)
		return -1;
	for (i = 0; i < d->n; i++)
		d->shared[i] = (uint8_t)deps_has(&w->deps, d->key[i]);
	for (i = 0; i < d->n; i++)
		if (deps_add(&w->deps, (uint32_t)((d->key[i] - 1) >> 32),
			     (uint32_t)(d->key[i] - 1)))
			return -1;
	w->rep->mcast_dependencies = d->n;
	return 0;
}

/* Mean hops and the credit-loop search once every destination is checked. */
int verify_walker_close(struct walker *w)
{
	w->rep->mean_hops = w->delivered ? (double)w->hop_sum / (double)w->delivered : 0.0;
	if (w->r->mcast && add_mcast(w))
		return -1;
	return check_credit_loops(w);
}

int verify_routing(const struct fabric *f, const struct routing *r, struct verify_report *rep)
{
	return verify_routing_progress(f, r, rep, NULL);
}

/* The upper destination LIDs, walked on a thread of their own (verify_routing_threads). */
struct upper_half {
	struct walker w;
	struct source_groups groups;
	struct verify_report rep;
	unsigned from;
	int rc;
	pthread_t thread;
};

static void *upper_half_main(void *arg)
{
	struct upper_half *h = arg;

	h->rc = verify_walker_check(&h->w, h->from, h->w.f->max_lid + 1);
	return NULL;
}

/* The LID below which half of the destination LIDs lie. */
static unsigned middle_lid(const struct fabric *f)
{
	unsigned dlid, n = 0, half;

	for (dlid = 1; dlid <= f->max_lid; dlid++)
		n += f->lid_port[dlid] != FAB_NONE;
	half = n / 2;
	for (dlid = 1, n = 0; dlid <= f->max_lid && n < half; dlid++)
		n += f->lid_port[dlid] != FAB_NONE;
	return dlid;
}

/*
 * Starts h on the LIDs from middle_lid on, sharing w's read-only copy of the LFTs; 0 when its
 * thread runs, -1 when there is no second CPU, no thread or no memory (w then walks them all).
 */
static int upper_half_start(struct upper_half *h, const struct walker *w)
{
	if (verify_walker_open(&h->w, &h->groups, w->f, w->r, &h->rep))
		goto fail;
	h->w.lft_by_lid = w->lft_by_lid;
	h->from = middle_lid(w->f);
	if (!thread_start_beside(&h->thread, upper_half_main, h))
		return 0;
fail:
	h->w.lft_by_lid = NULL;
	verify_walker_free(&h->w, &h->groups);
	return -1;
}

/*
 * Adds the upper half's outcome to w's, which walked the lower LIDs.  The first unreachable pair
 * and the first loop stay w's when it has one: its LIDs come first.  -1 without memory.
 */
static int merge_upper_half(struct walker *w, const struct walker *u)
{
	struct verify_report *a = w->rep;
	const struct verify_report *b = u->rep;
	size_t i;

	a->destinations += b->destinations;
	a->pairs += b->pairs;
	if (!a->unreachable)
		memcpy(a->first_unreachable, b->first_unreachable, sizeof(a->first_unreachable));
	if (!a->loops)
		memcpy(a->first_loop, b->first_loop, sizeof(a->first_loop));
	a->unreachable += b->unreachable;
	a->loops += b->loops;
	for (i = 0; i <= VERIFY_MAX_HOPS; i++)
		a->hop_hist[i] += b->hop_hist[i];
	if (u->delivered && (!w->delivered || b->min_hops < a->min_hops))
		a->min_hops = b->min_hops;
	if (b->max_hops > a->max_hops)
		a->max_hops = b->max_hops;
	a->sls_used |= b->sls_used;
	a->vls_used |= b->vls_used;
	w->hop_sum += u->hop_sum;
	w->delivered += u->delivered;
	for (i = 0; i < u->deps.count; i++)
		if (deps_add(&w->deps, dep_from(u->deps.list[i]), dep_to(u->deps.list[i])))
			return -1;
	return 0;
}

int verify_routing_threads(const struct fabric *f, const struct routing *r,
			   struct verify_report *rep, const struct progress_hook *progress,
			   unsigned threads)
{
	uint64_t cells = (uint64_t)f->nswitches * f->max_lid;
	struct upper_half h = { .rc = 0 };
	unsigned to = f->max_lid + 1;
	struct walker w;
	struct source_groups groups;
	int ret = -1, split = 0;

	if (verify_walker_open(&w, &groups, f, r, rep))
		goto out;
	w.lft_by_lid = routing_lfts_by_lid(w.r, WALKER_BY_LID_MAX_BYTES);
	w.progress = progress;
	if (threads == 2 || (threads == 0 && cells >= VERIFY_SPLIT_FROM_CELLS))
		split = !upper_half_start(&h, &w);
	if (split) {
		/* Both halves take about as long: the lower one's share tells how far both are. */
		to = h.from;
		w.progress_end = to - 1;
	}
	if (verify_walker_check(&w, 1, to))
		w.oom = 1;
	if (split) {
		pthread_join(h.thread, NULL);
		if (h.rc || merge_upper_half(&w, &h.w))
			w.oom = 1;
		h.w.lft_by_lid = NULL;
		verify_walker_free(&h.w, &h.groups);
	}
	rep->threads = split ? 2 : 1;
	if (!w.oom)
		ret = verify_walker_close(&w);
out:
	verify_walker_free(&w, &groups);
	return ret;
}

int verify_routing_progress(const struct fabric *f, const struct routing *r,
			    struct verify_report *rep, const struct progress_hook *progress)
{
	return verify_routing_threads(f, r, rep, progress, 0);
}

struct verify_deps {
	struct dep_set deps;	  /* the unicast routes' dependencies */
	struct verify_report rep; /* their report */
};

struct verify_deps *verify_deps_new(const struct fabric *f, const struct routing *r)
{
	struct verify_deps *d = calloc(1, sizeof(*d));
	struct routing unicast = *r;
	struct source_groups groups;
	struct walker w;
	int bad;

	if (!d)
		return NULL;
	unicast.mcast = NULL;
	bad = verify_walker_open(&w, &groups, f, &unicast, &d->rep);
	if (!bad)
		w.lft_by_lid = routing_lfts_by_lid(w.r, WALKER_BY_LID_MAX_BYTES);
	bad = bad || verify_walker_check(&w, 1, f->max_lid + 1) || verify_walker_close(&w);
	if (!bad) {
		d->deps = w.deps; /* kept: the walker no longer owns them */
		memset(&w.deps, 0, sizeof(w.deps));
	}
	verify_walker_free(&w, &groups);
	if (bad) {
		free(d);
		return NULL;
	}
	return d;
}

void verify_deps_free(struct verify_deps *d)
{
	if (!d)
		return;
	free(d->deps.keys);
	free(d->deps.list);
	free(d);
}

const struct verify_report *verify_deps_report(const struct verify_deps *d)
{
	return &d->rep;
}

static int dep_set_copy(struct dep_set *to, const struct dep_set *from)
{
	to->keys = malloc(sizeof(*to->keys) * from->cap);
	to->list = malloc(sizeof(*to->list) * (from->cap / 2 + 1));
	if (!to->keys || !to->list)
		return -1;
	memcpy(to->keys, from->keys, sizeof(*to->keys) * from->cap);
	memcpy(to->list, from->list, sizeof(*to->list) * from->count);
	to->cap = from->cap;
	to->count = from->count;
	return 0;
}

int verify_with_deps(const struct verify_deps *d, const struct fabric *f, const struct routing *r,
		     struct verify_report *rep)
{
	struct walker w;
	int ret = -1;

	memset(&w, 0, sizeof(w));
	*rep = d->rep;
	/* The cycle search below reports the union; the unicast one found none or kept its own. */
	rep->credit_loop_vls = 0;
	rep->cycle[0] = '\0';
	rep->cycle_len = 0;
	w.f = f;
	w.r = r;
	w.rep = rep;
	if (!dep_set_copy(&w.deps, &d->deps) && (!r->mcast || !add_mcast(&w)))
		ret = check_credit_loops(&w);
	free(w.deps.keys);
	free(w.deps.list);
	mcast_deps_free(&w.mdeps);
	return ret;
}
