/*
 * dmodk.c - D-mod-k routing on a recognised fat tree (see dmodk.h).
 *
 * Per destination switch d (the switch that delivers a LID) three facts per switch decide its
 * LFT entry: whether it reaches d descending alone (it then descends: in a fat tree one child
 * leads to d, and the parallel link is the one the closed form names), whether it reaches d by
 * climbing first (it then climbs through its closed-form port, or, when that link is missing or
 * leads nowhere, through the next surviving port of the same parent first, then the next one),
 * or neither.  The last happens for switch LIDs only on a complete tree (a top switch and a
 * middle switch of another group share no ancestor) and for some sources on a degraded one:
 * those switches follow the up*down* route to one turn leaf and from there that leaf's route.
 * With every such turn at one leaf no chain of dependencies leaves that leaf's pod upwards and
 * comes back into it, which minimal up*down* routes never do; the verifier checks every result.
 *
 * LMC: the i-th LID of a port adds i to the closed-form port index at every level, so the LIDs
 * of one port climb to different parents.
 */
#include "engines/dmodk/dmodk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/fattree.h"
#include "lib/assert.h"

#define NO_HOP 0xff

struct dmodk {
	const struct fabric *f;
	struct fat_tree t;
	uint32_t nsw;
	uint32_t width_below[FAT_TREE_MAX_LEVELS + 2]; /* W_l: parents per level multiplied */
	uint32_t *peer;		   /* per port: the switch at the other end (switch ports only) */
	uint32_t *slot_off, *slot; /* per switch: closed-form up port q -> port index or NONE */
	uint32_t *by_level;	   /* switches, top level first */
	uint8_t *down_ok, *legal;  /* for the current destination switch */
	uint32_t *cand_off, *cand; /* down ports towards it, per switch that descends */
	uint32_t *lid_index;	   /* [lid]: D-mod-k index */
	uint8_t *lid_offset;	   /* [lid]: offset in the port's LMC range */
	uint8_t *lid_exit;	   /* [lid]: port number of the delivering switch */
	uint32_t *lid_off, *lid_list; /* LIDs per delivering switch */
	uint32_t turn;		      /* turn leaf, FAB_NONE until needed */
	uint32_t *turn_port;	      /* per switch: port index towards the turn leaf */
	uint8_t *hop;		      /* per switch, for the current LID */
	uint32_t *next;		      /* per switch: the switch its entry for that LID leads to */
	uint32_t *stack;
};

static uint32_t remote_switch(const struct fabric *f, uint32_t p)
{
	return f->nodes[f->ports[f->ports[p].remote].node].sw;
}

/* The switch behind a switch-to-switch port, from the table made once per routing. */
static inline uint32_t peer(const struct dmodk *m, uint32_t p)
{
	sn_assert(p < m->f->nports && m->peer[p] == remote_switch(m->f, p));
	return m->peer[p];
}

static void dmodk_free(struct dmodk *m)
{
	fat_tree_free(&m->t);
	free(m->peer);
	free(m->slot_off);
	free(m->slot);
	free(m->by_level);
	free(m->down_ok);
	free(m->legal);
	free(m->cand_off);
	free(m->cand);
	free(m->lid_index);
	free(m->lid_offset);
	free(m->lid_exit);
	free(m->lid_off);
	free(m->lid_list);
	free(m->turn_port);
	free(m->hop);
	free(m->next);
	free(m->stack);
}

static unsigned up_slots(const struct dmodk *m, uint32_t s)
{
	unsigned l = m->t.level[s];

	return l < m->t.levels ? m->t.up_width[l] * m->t.up_parallel[l] : 0;
}

/* slot[q]: the (q / width)-th link to the parent of digit q mod width. */
static int build_slots(struct dmodk *m)
{
	const struct fat_tree *t = &m->t;
	uint32_t s, i, n = 0;

	m->slot_off = malloc(sizeof(uint32_t) * (m->nsw + 1));
	for (s = 0; s < m->nsw; s++)
		n += up_slots(m, s);
	m->slot = malloc(sizeof(uint32_t) * (n + 1));
	if (!m->slot_off || !m->slot)
		return -1;
	n = 0;
	for (s = 0; s < m->nsw; s++) {
		unsigned w = t->level[s] < t->levels ? t->up_width[t->level[s]] : 0, k = 0;
		uint16_t prev = UINT16_MAX;

		m->slot_off[s] = n;
		for (i = 0; i < up_slots(m, s); i++)
			m->slot[n + i] = FAB_NONE;
		for (i = t->up_off[s]; i < t->up_off[s + 1]; i++) {
			uint16_t dg = t->digit[remote_switch(m->f, t->up_port[i])];

			k = dg == prev ? k + 1 : 0;
			prev = dg;
			sn_assert(dg < w && k < t->up_parallel[t->level[s]]);
			m->slot[n + k * w + dg] = t->up_port[i];
		}
		n += up_slots(m, s);
	}
	m->slot_off[m->nsw] = n;
	return 0;
}

static int cmp_level_desc(const void *a, const void *b, void *ctx)
{
	const uint8_t *level = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (level[x] != level[y])
		return level[x] > level[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* D-mod-k index of every LID: terminals in topology order, then service ports, then switches. */
static int index_lids(struct dmodk *m, struct fab_error *err)
{
	const struct fabric *f = m->f;
	uint32_t lid, next = m->t.nterminals, s;

	for (lid = 1; lid <= f->max_lid; lid++) {
		uint32_t p = f->lid_port[lid];

		if (p == FAB_NONE)
			continue;
		s = fabric_lid_switch(f, lid, &m->lid_exit[lid]);
		if (s == FAB_NONE) {
			fab_error_set(err, "%s port %u (LID %u) has no active link to a switch",
				      fabric_node_id(f, f->ports[p].node), f->ports[p].num, lid);
			return -1;
		}
		m->lid_off[s + 1]++;
		m->lid_offset[lid] = (uint8_t)(lid - f->ports[p].base_lid);
		if (m->t.term_index[p] != FAB_NONE)
			m->lid_index[lid] = m->t.term_index[p];
		else if (!fabric_is_switch(f, f->ports[p].node) && lid == f->ports[p].base_lid)
			m->lid_index[lid] = next++;
		else if (!fabric_is_switch(f, f->ports[p].node))
			m->lid_index[lid] = m->lid_index[f->ports[p].base_lid];
		else
			m->lid_index[lid] = m->t.nterminals + m->t.nservice + s;
	}
	for (s = 0; s < m->nsw; s++)
		m->lid_off[s + 1] += m->lid_off[s];
	for (lid = 1; lid <= f->max_lid; lid++)
		if (f->lid_port[lid] != FAB_NONE)
			m->lid_list[m->lid_off[routing_lid_switch(f, lid)]++] = lid;
	for (s = m->nsw; s > 0; s--)
		m->lid_off[s] = m->lid_off[s - 1];
	m->lid_off[0] = 0;
	return 0;
}

static int dmodk_setup(struct dmodk *m, const struct fabric *f, struct fab_error *err)
{
	uint32_t nl = f->max_lid + 1, s;
	unsigned l;

	memset(m, 0, sizeof(*m));
	m->f = f;
	m->nsw = f->nswitches;
	m->turn = FAB_NONE;
	if (fat_tree_recognise(f, &m->t, err)) {
		char why[sizeof(err->msg)];

		snprintf(why, sizeof(why), "%s", err->msg);
		fab_error_set(err, "not a fat tree: %.480s", why);
		return -1;
	}
	m->peer = malloc(sizeof(uint32_t) * (f->nports + 1));
	m->by_level = malloc(sizeof(uint32_t) * m->nsw);
	m->down_ok = malloc(m->nsw);
	m->legal = malloc(m->nsw);
	m->cand_off = malloc(sizeof(uint32_t) * (m->nsw + 1));
	m->cand = malloc(sizeof(uint32_t) * (f->sw_adj_off[m->nsw] + 1));
	m->lid_index = calloc(nl, sizeof(uint32_t));
	m->lid_offset = calloc(nl, 1);
	m->lid_exit = calloc(nl, 1);
	m->lid_off = calloc(m->nsw + 2, sizeof(uint32_t));
	m->lid_list = malloc(sizeof(uint32_t) * nl);
	m->turn_port = malloc(sizeof(uint32_t) * m->nsw);
	m->hop = malloc(m->nsw);
	m->next = malloc(sizeof(uint32_t) * m->nsw);
	m->stack = malloc(sizeof(uint32_t) * (m->nsw + 1));
	if (!m->peer || !m->by_level || !m->down_ok || !m->legal || !m->cand_off || !m->cand ||
	    !m->lid_index || !m->lid_offset || !m->lid_exit || !m->lid_off || !m->lid_list ||
	    !m->turn_port || !m->hop || !m->next || !m->stack || build_slots(m))
		goto oom;
	for (s = 0; s < m->nsw; s++)
		m->by_level[s] = s;
	qsort_r(m->by_level, m->nsw, sizeof(uint32_t), cmp_level_desc, m->t.level);
	m->width_below[1] = 1;
	/* Past 2^32 every index divides to 0 alike: saturate. */
	for (l = 1; l < m->t.levels; l++)
		m->width_below[l + 1] = (uint64_t)m->width_below[l] * m->t.up_width[l] > UINT32_MAX
						? UINT32_MAX
						: m->width_below[l] * m->t.up_width[l];
	for (s = 0; s < f->sw_adj_off[m->nsw]; s++)
		m->peer[f->sw_adj_port[s]] = remote_switch(f, f->sw_adj_port[s]);
	return index_lids(m, err);
oom:
	fab_error_set(err, "out of memory");
	return -1;
}

/*
 * down_ok: reaches d descending (d and its ancestors); cand: the down ports of those switches
 * towards d; legal: reaches d climbing first, then descending.
 */
static void reach(struct dmodk *m, uint32_t d)
{
	const struct fabric *f = m->f;
	const struct fat_tree *t = &m->t;
	uint32_t head = 0, tail = 0, s, e, i, n = 0;

	memset(m->down_ok, 0, m->nsw);
	m->down_ok[d] = 1;
	m->stack[tail++] = d;
	while (head < tail) {
		s = m->stack[head++];
		for (i = t->up_off[s]; i < t->up_off[s + 1]; i++) {
			uint32_t u = peer(m, t->up_port[i]);

			if (!m->down_ok[u]) {
				m->down_ok[u] = 1;
				m->stack[tail++] = u;
			}
		}
	}
	for (s = 0; s < m->nsw; s++) {
		m->cand_off[s] = n;
		for (e = f->sw_adj_off[s]; m->down_ok[s] && s != d && e < f->sw_adj_off[s + 1];
		     e++) {
			uint32_t c = peer(m, f->sw_adj_port[e]);

			if (t->level[c] + 1 == t->level[s] && m->down_ok[c])
				m->cand[n++] = f->sw_adj_port[e];
		}
	}
	m->cand_off[m->nsw] = n;
	for (i = 0; i < m->nsw; i++) {
		s = m->by_level[i];
		m->legal[s] = m->down_ok[s];
		for (e = t->up_off[s]; !m->legal[s] && e < t->up_off[s + 1]; e++)
			m->legal[s] = m->legal[peer(m, t->up_port[e])];
	}
}

/* The closed-form up port index of destination index j, LMC offset o, at level l. */
static inline unsigned closed_form(const struct dmodk *m, unsigned l, uint32_t j, unsigned o)
{
	unsigned slots = m->t.up_width[l] * m->t.up_parallel[l];

	return (unsigned)((j / m->width_below[l] + o) % slots);
}

/*
 * The up port for j: the closed-form one when its link exists and leads on; else another
 * parallel link to the same parent; else one of the surviving ports that lead on, spread over
 * them by the destination, so the routes a failure moves do not all pile onto one neighbour.
 */
static uint32_t choose_up(const struct dmodk *m, uint32_t s, uint32_t j, unsigned o, int *moved)
{
	unsigned l = m->t.level[s], w = m->t.up_width[l], slots = up_slots(m, s), q, k, n = 0;
	const uint32_t *slot = m->slot + m->slot_off[s];
	uint32_t p, pick;

	q = closed_form(m, l, j, o);
	*moved = 0;
	for (k = 0; k < slots / w; k++) {
		p = slot[(q + k * w) % slots];
		if (p != FAB_NONE && m->legal[peer(m, p)])
			return p;
		*moved = 1;
	}
	for (k = 0; k < slots; k++) {
		p = slot[k];
		n += p != FAB_NONE && m->legal[peer(m, p)];
	}
	if (!n)
		return FAB_NONE;
	pick = (uint32_t)((j / m->width_below[l] / slots + q) % n);
	for (k = 0; k < slots; k++) {
		p = slot[k];
		if (p != FAB_NONE && m->legal[peer(m, p)] && !pick--)
			return p;
	}
	return FAB_NONE;
}

/*
 * Several children lead to d (a top switch cabled to every switch of a level below, as in
 * islands joined by a core): the child d's own side climbs to, of digit (j / W_{l-1}) mod
 * w_{l-1}, so the routes into one leaf spread over all its parents as they do inside the
 * island; without that child (a failed link), the children in turn by port order.
 */
static uint32_t down_child(const struct dmodk *m, uint32_t first, uint32_t n, unsigned l,
			   uint32_t j, unsigned o)
{
	unsigned below = l >= 2 ? m->width_below[l - 1] : 1;
	unsigned w = l >= 2 ? m->t.up_width[l - 1] : 1, want, i, k, nchild = 0;

	want = (unsigned)((j / below + o) % (w ? w : 1));
	for (i = first; i < first + n; i++) {
		uint32_t c = peer(m, m->cand[i]);

		if (m->t.digit[c] == want)
			return c;
		for (k = first; k < i && peer(m, m->cand[k]) != c; k++)
			;
		nchild += k == i; /* first link to c */
	}
	want = (unsigned)((j / below + o) % nchild);
	for (i = first; i < first + n; i++) {
		uint32_t c = peer(m, m->cand[i]);

		for (k = first; k < i && peer(m, m->cand[k]) != c; k++)
			;
		if (k == i && !want--)
			return c;
	}
	return peer(m, m->cand[first]);
}

/* The down port for j: the parallel link the closed form names, among those towards d. */
static uint32_t choose_down(const struct dmodk *m, uint32_t s, uint32_t j, unsigned o, int *moved)
{
	uint32_t first = m->cand_off[s], n = m->cand_off[s + 1] - first, c, i, links = 0;
	unsigned l = m->t.level[s] - 1, k;

	*moved = 0;
	if (!n)
		return FAB_NONE;
	c = peer(m, m->cand[first]);
	if (c != peer(m, m->cand[first + n - 1]))
		c = down_child(m, first, n, l, j, o);
	for (i = first; i < first + n; i++)
		links += peer(m, m->cand[i]) == c;
	k = closed_form(m, l, j, o) / m->t.up_width[l];
	*moved = k >= links;
	k %= links;
	for (i = first; i < first + n; i++)
		if (peer(m, m->cand[i]) == c && !k--)
			return m->cand[i];
	return FAB_NONE;
}

/*
 * The turn leaf: the first leaf in topology order that every switch reaches up*down*; turn_port
 * is each switch's port on that route.  Without one, switches with no route of their own to a
 * destination make the routing fail.
 */
static void choose_turn_leaf(struct dmodk *m)
{
	uint32_t i, s, tries = m->t.nleaves < 64 ? m->t.nleaves : 64;
	int moved;

	for (i = 0; i < tries; i++) {
		uint32_t leaf = m->t.leaves[i], j = m->t.nterminals + m->t.nservice + leaf;

		reach(m, leaf);
		for (s = 0; s < m->nsw && m->legal[s]; s++)
			;
		if (s < m->nsw)
			continue;
		for (s = 0; s < m->nsw; s++)
			m->turn_port[s] = s == leaf	  ? FAB_NONE
					  : m->down_ok[s] ? choose_down(m, s, j, 0, &moved)
							  : choose_up(m, s, j, 0, &moved);
		m->turn = leaf;
		return;
	}
}

/* Hops of every switch's route to the LID, along the entries just written. */
static int count_hops(struct dmodk *m, struct routing *r, uint32_t d, uint32_t lid, int to_ca)
{
	uint32_t s, v, depth;

	memset(m->hop, NO_HOP, m->nsw);
	m->hop[d] = (uint8_t)to_ca;
	for (s = 0; s < m->nsw; s++) {
		for (depth = 0, v = s; m->hop[v] == NO_HOP; v = m->next[v]) {
			if (depth >= m->nsw || depth + to_ca + 1 >= NO_HOP)
				return -1;
			m->stack[depth++] = v;
		}
		while (depth > 0) {
			v = m->stack[--depth];
			m->hop[v] = (uint8_t)(m->hop[m->next[v]] + 1);
		}
		routing_hops(r, s)[lid] = m->hop[s];
	}
	return 0;
}

static uint32_t entry_port(struct dmodk *m, uint32_t s, uint32_t j, unsigned o,
			   struct dmodk_report *rep)
{
	int moved = 0;
	uint32_t p;

	if (m->down_ok[s]) {
		p = choose_down(m, s, j, o, &moved);
	} else if (m->legal[s]) {
		p = choose_up(m, s, j, o, &moved);
	} else {
		p = m->turn == FAB_NONE || !m->legal[m->turn] ? FAB_NONE : m->turn_port[s];
		rep->turn_entries++;
	}
	/* Only terminals have a closed form; other LIDs take the ports that lead to them. */
	rep->moved += moved && j < m->t.nterminals;
	return p;
}

static int route_lid(struct dmodk *m, struct routing *r, uint32_t d, uint32_t lid,
		     struct dmodk_report *rep, struct fab_error *err)
{
	const struct fabric *f = m->f;
	uint32_t j = m->lid_index[lid], s;
	unsigned o = m->lid_offset[lid];

	for (s = 0; s < m->nsw; s++) {
		uint32_t p;

		rep->entries++;
		if (s == d) {
			routing_lft(r, s)[lid] = m->lid_exit[lid];
			m->next[s] = s;
			continue;
		}
		if (!m->legal[s] && m->t.level[s] == 1 && j < m->t.nterminals) {
			fab_error_set(err,
				      "not a fat tree: leaf %s shares no ancestor with leaf %s "
				      "(LID %u)",
				      fabric_node_id(f, f->switches[s]),
				      fabric_node_id(f, f->switches[d]), lid);
			return -1;
		}
		p = entry_port(m, s, j, o, rep);
		if (p == FAB_NONE) {
			fab_error_set(err, "no up*/down* route from switch %s to LID %u",
				      fabric_node_id(f, f->switches[s]), lid);
			return -1;
		}
		sn_assert(f->ports[p].num >= 1 && f->ports[p].num <= r->max_port);
		routing_lft(r, s)[lid] = f->ports[p].num;
		m->next[s] = peer(m, p);
	}
	if (count_hops(m, r, d, lid, m->lid_exit[lid] != 0)) {
		fab_error_set(err, "the routes to LID %u loop", lid);
		return -1;
	}
	return 0;
}

static void fill_report(const struct dmodk *m, const struct fabric *f, struct dmodk_report *rep)
{
	snprintf(rep->shape, sizeof(rep->shape), "%s", m->t.shape);
	rep->levels = m->t.levels;
	rep->terminals = m->t.nterminals;
	rep->service = m->t.nservice;
	rep->lids_routed = m->lid_off[m->nsw];
	rep->missing_links = m->t.missing_links;
	rep->efi_bound = fat_tree_efi_bound(&m->t, f);
	rep->turn_guid =
		rep->turn_entries && m->turn != FAB_NONE ? f->nodes[f->switches[m->turn]].guid : 0;
}

int dmodk_route(const struct fabric *f, struct routing *r, struct dmodk_report *rep,
		struct fab_error *err)
{
	return dmodk_route_progress(f, NULL, r, rep, err);
}

int dmodk_route_progress(const struct fabric *f, const struct progress_hook *progress,
			 struct routing *r, struct dmodk_report *rep, struct fab_error *err)
{
	struct dmodk m;
	uint32_t d, i;
	int ret = -1;

	memset(rep, 0, sizeof(*rep));
	if (fabric_check_routable(f, err))
		return -1;
	if (dmodk_setup(&m, f, err))
		goto out;
	choose_turn_leaf(&m);
	memset(r->lft, FAB_NO_PORT, (size_t)r->nswitches * r->lft_len);
	for (d = 0; d < m.nsw; d++) {
		if (m.lid_off[d] == m.lid_off[d + 1])
			continue;
		reach(&m, d);
		progress_step(progress, "routing", m.lid_off[d + 1], m.lid_off[m.nsw]);
		for (i = m.lid_off[d]; i < m.lid_off[d + 1]; i++)
			if (route_lid(&m, r, d, m.lid_list[i], rep, err))
				goto out;
	}
	fill_report(&m, f, rep);
	r->sl_mode = ROUTING_SL_UNIFORM;
	r->sl_uniform = 0;
	memset(r->sl2vl_uniform, 0, sizeof(r->sl2vl_uniform));
	r->vls_used = 1;
	ret = 0;
out:
	dmodk_free(&m);
	return ret;
}
