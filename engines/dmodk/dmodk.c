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

#include "fabric/dmodkform.h"
#include "fabric/fattree.h"
#include "lib/assert.h"

#define NO_HOP 0xff

struct dmodk {
	const struct fabric *f;
	struct fat_tree t;
	uint32_t nsw;
	struct dmodk_form form;	      /* the closed form: slots, W_l, each LID's index and offset */
	uint32_t *by_level;	      /* switches, top level first */
	uint8_t *down_ok, *legal;     /* for the current destination switch */
	uint32_t *cand_off, *cand;    /* down ports towards it, per switch that descends */
	uint8_t *lid_exit;	      /* [lid]: port number of the delivering switch */
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
	sn_assert(p < m->f->nports && m->form.peer[p] == remote_switch(m->f, p));
	return m->form.peer[p];
}

static void dmodk_free(struct dmodk *m)
{
	dmodk_form_free(&m->form);
	fat_tree_free(&m->t);
	free(m->by_level);
	free(m->down_ok);
	free(m->legal);
	free(m->cand_off);
	free(m->cand);
	free(m->lid_exit);
	free(m->lid_off);
	free(m->lid_list);
	free(m->turn_port);
	free(m->hop);
	free(m->next);
	free(m->stack);
}

static int cmp_level_desc(const void *a, const void *b, void *ctx)
{
	const uint8_t *level = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (level[x] != level[y])
		return level[x] > level[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* The LIDs each switch delivers, and the port it delivers them by. */
static int index_lids(struct dmodk *m, struct fab_error *err)
{
	const struct fabric *f = m->f;
	uint32_t lid, s;

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
	if (dmodk_form_init(&m->form, f, &m->t))
		goto oom;
	m->by_level = malloc(sizeof(uint32_t) * m->nsw);
	m->down_ok = malloc(m->nsw);
	m->legal = malloc(m->nsw);
	m->cand_off = malloc(sizeof(uint32_t) * (m->nsw + 1));
	m->cand = malloc(sizeof(uint32_t) * (f->sw_adj_off[m->nsw] + 1));
	m->lid_exit = calloc(nl, 1);
	m->lid_off = calloc(m->nsw + 2, sizeof(uint32_t));
	m->lid_list = malloc(sizeof(uint32_t) * nl);
	m->turn_port = malloc(sizeof(uint32_t) * m->nsw);
	m->hop = malloc(m->nsw);
	m->next = malloc(sizeof(uint32_t) * m->nsw);
	m->stack = malloc(sizeof(uint32_t) * (m->nsw + 1));
	if (!m->by_level || !m->down_ok || !m->legal || !m->cand_off || !m->cand || !m->lid_exit ||
	    !m->lid_off || !m->lid_list || !m->turn_port || !m->hop || !m->next || !m->stack)
		goto oom;
	for (s = 0; s < m->nsw; s++)
		m->by_level[s] = s;
	qsort_r(m->by_level, m->nsw, sizeof(uint32_t), cmp_level_desc, m->t.level);
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

/*
 * The up port for j: the closed-form one when its link exists and leads on; else another
 * parallel link to the same parent; else one of the surviving ports that lead on, spread over
 * them by the destination, so the routes a failure moves do not all pile onto one neighbour.
 */
static uint32_t choose_up(const struct dmodk *m, uint32_t s, uint32_t j, unsigned o, int *moved)
{
	unsigned l = m->t.level[s], w = m->t.up_width[l], slots = dmodk_form_slots(&m->form, s);
	const uint32_t *slot = m->form.slot + m->form.slot_off[s];
	unsigned q, k, n = 0;
	uint32_t p, pick;

	q = dmodk_form_closed(&m->form, l, j, o);
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
	pick = (uint32_t)((j / m->form.width_below[l] / slots + q) % n);
	for (k = 0; k < slots; k++) {
		p = slot[k];
		if (p != FAB_NONE && m->legal[peer(m, p)] && !pick--)
			return p;
	}
	return FAB_NONE;
}

/* The down port for j: D-mod-k's child and parallel link among those towards d. */
static uint32_t choose_down(const struct dmodk *m, uint32_t s, uint32_t j, unsigned o, int *moved)
{
	uint32_t first = m->cand_off[s], n = m->cand_off[s + 1] - first;

	return dmodk_form_down(&m->form, s, m->cand + first, n, j, o, moved);
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
	uint32_t j = m->form.lid_index[lid], s;
	unsigned o = m->form.lid_offset[lid];

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
