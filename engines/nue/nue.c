/*
 * nue.c - Nue routing (thesis chapter 6; algorithms 6.2, 6.3, 6.5 and 6.6), see nue.h.
 *
 * Per virtual layer: the layer's destinations (nue_partition), a fresh complete channel
 * dependency graph (cdg.h), escape paths along a spanning tree rooted at the layer's most central
 * switch, then one modified Dijkstra per destination LID.  The Dijkstra runs over switches from
 * the destination outwards; a switch y is reached through channel y->x only if the turn from
 * y->x into x's own channel keeps the used dependencies acyclic, so the routing-induced CDG of
 * every layer stays acyclic by construction.  Switches left unreached (islands) are connected by
 * local backtracking: a reached neighbour switches to another of its channels, provided every
 * dependency below it stays valid.  Only when that fails does the destination fall back to the
 * escape paths.  Channel weights grow by the number of sources routed over each channel, for
 * balance across destinations (and, with a job map, across the routes inside each job first, as
 * thesis algorithm 5.1 does for DFSSSP).
 *
 * Switch LIDs are destinations like any other and are routed in the same dependency graphs.
 *
 * This file is the engine's entry point and its driver: the layers one after the other (their
 * root, channel order and destination order), the moves of fall-backs into other layers, and the
 * candidate routings compared by nue_better().  The other parts are listed in nue_private.h.
 */
#include <stdlib.h>
#include <string.h>

#include "engines/nue/nue_private.h"
#include "lib/assert.h"
#include "lib/sortu64.h"
#include "lib/threads.h"

/* ---------------------------------------------------------------------------- layers */

/* Multi-source BFS hop counts into hop[] from every switch with seed[s] set. */
void nue_bfs_levels(struct nue *n, const uint8_t *seed, uint32_t root, uint32_t *hop)
{
	uint32_t qh = 0, qt = 0, s, c, *queue = n->scratch;

	for (s = 0; s < n->nsw; s++) {
		hop[s] = FAB_NONE;
		if (seed ? seed[s] : s == root) {
			hop[s] = 0;
			sn_assert(qt < n->nsw);
			queue[qt++] = s;
		}
	}
	while (qh < qt) {
		s = queue[qh++];
		for (c = n->g.sw_off[s]; c < n->g.sw_off[s + 1]; c++) {
			if (hop[n->g.head[c]] == FAB_NONE) {
				hop[n->g.head[c]] = hop[s] + 1;
				/* Each switch enters the queue once. */
				sn_assert(qt < n->nsw);
				queue[qt++] = n->g.head[c];
			}
		}
	}
}

/* Whether some switch has no end nodes, as the inner switches of a fat tree. */
int nue_tree_like(const struct nue *n)
{
	uint32_t s;

	for (s = 0; s < n->nsw; s++)
		if (!n->has_ca[s])
			return 1;
	return 0;
}

/*
 * Initial order of the layer's channels, so that most turns agree with it and need no search.
 * In tree-like fabrics (switches without end nodes exist) routes climb from the end-node
 * switches and then descend: channels going up come first (lowest level first), then sideways,
 * then going down (highest level first).  Where every switch has end nodes, levels are hops
 * from the layer's root and the escape tree's up-then-down paths agree with the same rule.
 */
static int seed_order(struct nue *n)
{
	uint32_t s, c, *hop = n->depth;
	const uint64_t far = (1u << 20) - 1;

	if (nue_tree_like(n)) {
		nue_bfs_levels(n, n->has_ca, FAB_NONE, hop);
	} else {
		nue_bfs_levels(n, NULL, n->root, hop);
		/* Hops from the root run the other way: up is towards the root. */
		for (s = 0; s < n->nsw; s++)
			hop[s] = (uint32_t)far - hop[s];
	}
	for (c = 0; c < n->nch; c++) {
		uint64_t from = hop[n->g.tail[c]], to = hop[n->g.head[c]];

		if (to > from)
			n->ch_key[c] = from;
		else if (to == from)
			n->ch_key[c] = 1ull << 20 | from;
		else
			n->ch_key[c] = 2ull << 20 | (far - from);
	}
	return cdg_seed_order(&n->g, n->ch_key);
}

/*
 * Within each class of nue_order_layer, destinations farthest from the layer's root go first.
 * Their routes cross most of the layer and have the fewest alternatives, so they are routed while
 * the dependency graph is still sparse; those near the root are reached over few turns that
 * earlier routes already hold.  On the 8x8x8 torus with 8 layers this cut the fall-backs from 20
 * to 1 and the maximum EFI by 40%, and on one layer the maximum EFI to a fifth.
 *
 * With by_lid set, the class and the LID alone decide.  In a fat tree the root is a leaf (see
 * route_layer), and far-first routes the root's subtree after all others.  By then the up links
 * of its leaves carry unequal loads (there were leaves of 17 and of 18 hosts below), the leaves
 * inside the subtree picked another up link towards a destination there than the switches
 * outside, and its routes split over two down links into its leaf, where the next destinations
 * found no free one: on a 3-level tree of 36-port switches with 2,000 hosts the maximum EFI was
 * 2,524 after the final pass (bound 1,982), by LID 1,998, and on the 8-ary 3-tree shift
 * permutations met 2 routes on a channel against 1 by LID.  LIDs usually number the terminals leaf
 * by leaf, the order in which the weights balance as D-mod-k does.  Tree-like fabrics with faults
 * meet impasses, where far-first helps: with one layer a routing by LID starts again far-first at
 * its first fall-back (nue_route_first_pass), and far-first by descending LID competes with it
 * (nue_route_one_layer).  On a recognised fat tree "by LID" means in topology order (topo_rank),
 * which is what LIDs approximate when a generator assigns them.
 */
static void order_far_first(struct nue *n)
{
	uint32_t i, cls_rank = 0, tie = n->ties_descending ? 0xffffu : 0;
	uint64_t prev = 0;

	nue_bfs_levels(n, NULL, n->root, n->depth);
	for (i = 0; i < n->ndest; i++) {
		uint64_t cls = n->keys[i] >> 16;
		uint64_t hop = n->by_lid ? 0 : n->depth[n->lid_sw[n->dest[i]]];
		/* By LID: the topology order first when there is one (24 bits hold any rank). */
		uint64_t mid = n->by_lid && n->topo_rank ? n->topo_rank[n->dest[i]] : 0xffffu - hop;

		if (i && cls != prev)
			cls_rank++;
		prev = cls;
		sn_assert(mid < (1u << 24));
		n->keys[i] = (uint64_t)cls_rank << 40 | mid << 16 | (n->dest[i] ^ tie);
	}
	sort_u64(n->keys, n->ndest);
	for (i = 0; i < n->ndest; i++)
		n->dest[i] = (uint32_t)(n->keys[i] & 0xffff) ^ tie;
}

/*
 * Brandes' betweenness costs about as much as routing a few destinations, and a layer's
 * destinations, hence its root, are the same in every candidate with k layers: chosen once.
 */
static uint32_t layer_root(struct nue *n, unsigned layer)
{
	uint32_t root;

	sn_assert(layer < n->k);
	if (n->layer_cdg && n->layer_root[layer] != FAB_NONE)
		return n->layer_root[layer];
	if (n->layer_cdg && n->roots && layer > 0)
		root = nue_shared_root(n, layer);
	else
		root = nue_central_switch(n->f, n->dest_count, n->nca ? n->ca_count : NULL);
	if (n->layer_cdg)
		n->layer_root[layer] = root;
	return root;
}

/*
 * Whether fallbacks destinations on escape paths are more than 1% of all, the rate the thesis
 * stays well below with 8 layers; beyond it one layer routes every destination as well (see
 * nue_route_whole_single_layer).
 */
static int falls_back_much(const struct nue *n, uint64_t fallbacks)
{
	return fallbacks * 100 > n->sources;
}

/* Destinations of the layers routed before this one in the current pass. */
static uint64_t routed_before(const struct nue *n, unsigned layer)
{
	uint64_t sum = 0;
	unsigned l;

	for (l = 0; l < layer; l++)
		sum += n->rep->dests_per_layer[l];
	return sum;
}

#define LAYER_ABANDONED 2 /* route_layer stopped at give_up fall-backs */

/*
 * Routes the destinations of one layer, new turns costing turn_cost from the start (see
 * nue_try_route), until give_up of them have fallen back; 0, 1 when need_shortest gives up,
 * LAYER_ABANDONED, -1 on an error.
 */
static int route_layer(struct nue *n, unsigned layer, uint64_t turn_cost, uint32_t give_up,
		       struct fab_error *err)
{
	uint32_t i, fallbacks = n->rep->fallbacks, prev = 0;

	sn_assert(layer < n->k && layer < NUE_MAX_VLS);
	nue_order_layer(n, layer);
	n->rep->dests_per_layer[layer] = n->ndest;
	/* Layer 0 holds the multicast tree's turns even without destinations (mctree.c). */
	if (!n->ndest && (layer != 0 || n->o->no_mcast_tree)) {
		/*
		 * No tree either: the rebalancing pass and moved fall-backs still select the
		 * layer, and a stale tree there sent nue_tree_children out of bounds (one switch
		 * with two hosts and 2 VLs crashed).
		 */
		if (n->layer_esc_up)
			memset(n->layer_esc_up + (size_t)layer * n->nsw, 0xff,
			       sizeof(uint32_t) * n->nsw);
		return 0;
	}
	/*
	 * The root is a switch with CAs of the layer when there are any.  In a fat tree a core
	 * root hangs other core switches below edge switches, and the escape tree's turns down
	 * and up again there block the minimal turns of many routes (max EFI ten times the
	 * optimum on a 3-level tree); from an edge root the tree climbs and descends as the
	 * minimal routes do.  Where every switch has CAs this changes nothing.
	 */
	n->root = layer == 0 && !n->o->no_mcast_tree ? n->mc.root : layer_root(n, layer);
	if (n->root == FAB_NONE) {
		fab_error_set(err, "out of memory choosing the root of layer %u", layer);
		return -1;
	}
	n->rep->root_guid[layer] = n->f->nodes[n->f->switches[n->root]].guid;
	if (n->layer_cdg)
		cdg_select(&n->g, &n->layer_cdg[layer]);
	n->impasse_turn_cost = turn_cost;
	cdg_reset(&n->g);
	if (seed_order(n)) {
		fab_error_set(err, "out of memory ordering layer %u", layer);
		return -1;
	}
	order_far_first(n);
	if (layer == 0 && !n->o->no_mcast_tree)
		nue_mcast_escape_tree(n);
	else
		nue_escape_tree(n);
	nue_escape_children(n);
	if (n->layer_esc_up)
		memcpy(n->layer_esc_up + (size_t)layer * n->nsw, n->esc_up,
		       sizeof(uint32_t) * n->nsw);
	if (nue_mark_escape_paths(n) ||
	    (layer == 0 && !n->o->no_mcast_tree && nue_mcast_mark_turns(n))) {
		fab_error_set(err, "internal error: escape paths of layer %u are cyclic", layer);
		return -1;
	}
	if (layer == 0 && nue_seed_kept(n, err))
		return -1;
	if (n->expensive_checks)
		sn_assert(cdg_is_acyclic(&n->g) != 0);
	for (i = 0; i < n->ndest; i++) {
		uint32_t lid = n->dest[i];
		int rc = 0;

		if (nue_stopped(n, err))
			return -1;
		if (nue_joins_group(n, prev, lid))
			nue_route_lid_as_previous(n, lid);
		else
			rc = nue_route_lid(n, lid, err);
		prev = lid;

		/* The layers before this one are done: a pass counts every destination once. */
		progress_step(n->o->progress, "routing", routed_before(n, layer) + i + 1,
			      n->sources);

		if (rc)
			return rc;
		if (n->rep->fallbacks - fallbacks >= give_up)
			return LAYER_ABANDONED;
	}
	return 0;
}

static void set_service_levels(struct nue *n)
{
	uint32_t lid;
	unsigned sl;

	for (sl = 0; sl < ROUTING_MAX_SL; sl++)
		n->r->sl2vl_uniform[sl] = (uint8_t)(sl % n->k);
	n->r->vls_used = n->k;
	if (n->k == 1) {
		n->r->sl_mode = ROUTING_SL_UNIFORM;
		n->r->sl_uniform = 0;
		return;
	}
	n->r->sl_mode = ROUTING_SL_PER_DLID;
	for (lid = 1; lid <= n->f->max_lid; lid++) {
		/* A LID's SL is its layer, which must have a VL. */
		sn_assert(n->lid_sw[lid] == FAB_NONE || n->lid_layer[lid] < n->k);
		n->r->sl_by_dlid[lid] = n->lid_sw[lid] == FAB_NONE ? 0 : n->lid_layer[lid];
	}
}

static int check_fabric(const struct fabric *f, unsigned k, struct fab_error *err)
{
	unsigned vls;

	if (fabric_check_routable(f, err))
		return -1;
	if (k < 1 || k > NUE_MAX_VLS) {
		fab_error_set(err, "nue_vls=%u is outside 1..%u", k, NUE_MAX_VLS);
		return -1;
	}
	vls = fabric_min_op_vls(f);
	if (k > vls) {
		fab_error_set(err,
			      "nue_vls=%u but some link of the fabric operates only %u data VL%s",
			      k, vls, vls == 1 ? "" : "s");
		return -1;
	}
	return 0;
}

void nue_init_weights(struct nue *n)
{
	uint64_t total = 0, w;
	uint32_t s, c;

	for (s = 0; s < n->nsw; s++)
		total += n->src_lids[s];
	/* Thesis 6.2.4: |N|^2, so that weight differences never outgrow the hop count. */
	w = total ? total * total : 1;
	n->sources = total;
	for (c = 0; c < n->nch; c++)
		n->w_all[c] = n->w_job[c] = w;
	n->w_init = w;
}

/* A fresh run: weights, tables, score and the report's per-run counts. */
static void reset_run(struct nue *n)
{
	struct nue_report *rep = n->rep;
	size_t cells = (size_t)n->r->nswitches * n->r->lft_len;

	rep->fallbacks = rep->backtracks = rep->second_attempts = rep->aside_attempts = 0;
	rep->shortcuts = 0;
	rep->moved_aside = rep->vl_rerouted = 0;
	rep->job_destinations = rep->moved = rep->moved_as_previous = 0;
	rep->rerouted = rep->grouped = rep->joined = 0;
	rep->layers_rerouted = rep->layers_deferred = rep->passes_again = 0;
	memset(rep->fallbacks_per_layer, 0, sizeof(rep->fallbacks_per_layer));
	n->nfell_back = 0;
	/* One layer (nue_route_single_layer) holds every destination, whatever the partition. */
	if (n->k == 1)
		memset(n->lid_layer, 0, n->f->max_lid + 1);
	else
		memcpy(n->lid_layer, n->home_layer, n->f->max_lid + 1);
	memset(n->escaped, 0, n->f->max_lid + 1);
	rep->single_layer = 0;
	n->g.searches = n->g.closed_refusals = 0;
	memset(n->efi, 0, sizeof(uint64_t) * (n->nch ? n->nch : 1));
	n->score_hops = 0;
	nue_init_weights(n);
	memset(n->r->lft, FAB_NO_PORT, cells);
	memset(n->r->hops, 0xff, cells);
}

/* Makes layer the one routing works in, with its escape tree for a fall-back. */
void nue_select_layer(struct nue *n, unsigned layer)
{
	sn_assert(layer < n->k && n->layer_cdg && n->layer_esc_up);
	cdg_select(&n->g, &n->layer_cdg[layer]);
	memcpy(n->esc_up, n->layer_esc_up + (size_t)layer * n->nsw, sizeof(uint32_t) * n->nsw);
	nue_tree_children(n);
}

/* Adds (or removes) the score of lid's escape-path routes in the selected layer. */
static int score_escape_routes(struct nue *n, uint32_t lid, int remove)
{
	uint32_t d = n->lid_sw[lid];

	nue_use_escape_paths(n, d);
	if (nue_compute_depths(n, d))
		return -1;
	nue_tally_score(n, lid, remove);
	return 0;
}

/*
 * lid, on escape paths in its home layer, leaves them for the routes in n->out in the selected
 * layer: its layer, the counts per layer and the tables follow.  0 or -1 on an internal error.
 */
static int leave_for_layer(struct nue *n, uint32_t lid, unsigned layer, struct fab_error *err)
{
	unsigned home = n->lid_layer[lid];

	nue_leave_escape_paths(n, lid);
	n->lid_layer[lid] = (uint8_t)layer;
	sn_assert(n->rep->dests_per_layer[home] > 0);
	n->rep->dests_per_layer[home]--;
	n->rep->dests_per_layer[layer]++;
	return nue_commit_lid(n, lid, err);
}

/* A terminal LID of lid's switch, in its job phase, on routes of its own; 0 if none. */
static uint32_t routed_mate(const struct nue *n, uint32_t lid)
{
	uint32_t m, d = n->lid_sw[lid];
	int job = nue_job_phase_dest(n, lid);

	for (m = 1; m <= n->f->max_lid; m++)
		if (m != lid && n->lid_sw[m] == d && n->lid_exit[m] && !n->escaped[m] &&
		    nue_job_phase_dest(n, m) == job)
			return m;
	return 0;
}

/*
 * lid, on escape paths in its home layer with its escape score taken off, takes the routes of
 * a LID of its switch in that LID's layer: they hold no turn the layer lacks.  1 when it did,
 * 0 when LIDs share no routes or none of its switch has routes of its own, -1 on an internal
 * error.
 */
static int join_mate(struct nue *n, uint32_t lid, struct fab_error *err)
{
	uint32_t m = n->group_lids ? routed_mate(n, lid) : 0, d = n->lid_sw[lid];
	unsigned layer;

	if (!m)
		return 0;
	layer = n->lid_layer[m];
	nue_select_layer(n, layer);
	if (nue_routes_from_tables(n, m, d, err))
		return -1;
	n->wet.n = 0;
	n->rep->joined++;
	return leave_for_layer(n, lid, layer, err) ? -1 : 1;
}

/*
 * The layer that lid, which fell back, tries first in move_fallbacks: the one prev, the
 * fall-back before it, moved to, when both are LIDs of one switch from one layer (they fall back
 * together, a switch's LIDs sharing a layer); its own layer (no try) otherwise.  Tries that fail
 * change nothing another layer's try depends on, so lid moves to the layer it would have moved
 * to, and gets the same routes there, unless it would have found room in a layer before prev's.
 * On the 16x16x16 torus with 1% of links removed and 8 VLs, 946 of the 949 fall-backs that
 * followed one of their switch moved to the same layer, and their failed tries in the layers
 * before it had been two thirds of all tries.
 */
static unsigned prev_layer_first(const struct nue *n, uint32_t prev, uint32_t lid,
				 unsigned prev_moved_to)
{
	if (!prev || prev_moved_to >= n->k || n->lid_sw[prev] != n->lid_sw[lid] ||
	    n->home_layer[prev] != n->home_layer[lid])
		return n->home_layer[lid];
	return prev_moved_to;
}

/*
 * Destinations that fell back try every other layer, the next ones first, once all layers are
 * routed: a layer whose routes run elsewhere often still has the turns this destination needs.
 * A destination moved to layer j travels on SL and VL j, and its routes are checked against
 * layer j's dependency graph like any other.  The escape paths it leaves hold no turn of their
 * own (they were marked before the layer's first route), so nothing needs undoing in its own
 * layer but the score.  The fall-back itself happened when the impasse did, so the balancing
 * weights every later destination saw are those of a run without moves.  When LIDs of a switch
 * share routes (groups_lids), a destination no layer takes joins those of a LID of its switch
 * with routes of its own (join_mate).
 */
static int move_fallbacks(struct nue *n, struct fab_error *err)
{
	uint32_t i, lid, prev = 0;
	unsigned home, j, first, prev_moved_to = NUE_MAX_VLS;
	int rc;

	n->impasse_turn_cost = n->sources;
	for (i = 0; i < n->nfell_back; i++) {
		lid = n->fell_back[i];
		home = n->home_layer[lid];
		/* Fell back in its own layer during the first pass, and still on escape paths. */
		sn_assert(n->escaped[lid] && home < n->k && n->lid_layer[lid] == home);
		nue_select_layer(n, home);
		if (score_escape_routes(n, lid, 1))
			goto loop;
		first = prev_layer_first(n, prev, lid, prev_moved_to);
		prev = lid;
		prev_moved_to = NUE_MAX_VLS;
		for (j = 0; j < n->k; j++) {
			unsigned layer = j ? (home + j) % n->k : first;

			if (layer == home || (j && layer == first))
				continue;
			nue_select_layer(n, layer);
			if (!nue_try_route(n, lid, 0))
				continue;
			n->rep->moved++;
			n->rep->moved_as_previous += !j;
			prev_moved_to = layer;
			if (leave_for_layer(n, lid, layer, err))
				return -1;
			break;
		}
		if (j < n->k)
			continue;
		rc = join_mate(n, lid, err);
		if (rc < 0)
			return -1;
		if (rc)
			continue;
		nue_select_layer(n, home);
		if (score_escape_routes(n, lid, 0))
			goto loop;
	}
	return 0;
loop:
	fab_error_set(err, "internal error: escape paths to LID %u loop", lid);
	return -1;
}

uint64_t nue_max_efi(const struct nue *n)
{
	uint64_t m = 0;
	uint32_t c;

	for (c = 0; c < n->nch; c++)
		if (n->efi[c] > m)
			m = n->efi[c];
	return m;
}

struct nue_score nue_score_of(const struct nue *n)
{
	struct nue_score s = { n->rep->fallbacks, nue_max_efi(n), n->score_hops };

	return s;
}

/* Fewer fall-backs (long routes, a stated limit), then lower maximum EFI, then fewer hops. */
int nue_better(const struct nue_score *a, const struct nue_score *b)
{
	if (a->fallbacks != b->fallbacks)
		return a->fallbacks < b->fallbacks;
	if (a->efi != b->efi)
		return a->efi < b->efi;
	return a->hops < b->hops;
}

/*
 * Whether a large layer's first try fell back for so few of its destinations (at most
 * NUE_FEW_FALLBACKS_PERCENT) that moving them to other layers (move_fallbacks) likely rescues them
 * all; see route_layer_best.  Not once the candidates are routed again for want of it
 * (route_with_every_try).  Small layers make every try: it takes little time there.
 */
static int few_fallbacks(const struct nue *n, uint32_t fallbacks)
{
	uint32_t from = n->o->defer_tries_from ? n->o->defer_tries_from : NUE_DEFER_TRIES_FROM;

	return !n->no_deferral && n->ndest >= from &&
	       (uint64_t)fallbacks * 100 <= (uint64_t)n->ndest * NUE_FEW_FALLBACKS_PERCENT;
}

/* Notes what routing a layer changes beyond it, before the first try; see route_layer_best. */
static void mark_layer(struct nue *n)
{
	struct layer_mark *m = &n->mark;
	size_t bytes = sizeof(uint64_t) * n->nch;

	memcpy(m->w_all, n->w_all, bytes);
	memcpy(m->w_job, n->w_job, bytes);
	memcpy(m->efi, n->efi, bytes);
	m->score_hops = n->score_hops;
	m->nfell_back = n->nfell_back;
	m->rep = *n->rep;
}

/*
 * Undoes what routing the current layer changed since mark_layer, but for its dependency graph
 * and its LIDs' tables, which routing it again resets and overwrites.
 */
static void back_to_mark(struct nue *n)
{
	struct layer_mark *m = &n->mark;
	size_t bytes = sizeof(uint64_t) * n->nch;
	uint32_t i;

	/* Routing the layer only adds fall-backs after the mark. */
	sn_assert(m->nfell_back <= n->nfell_back);
	memcpy(n->w_all, m->w_all, bytes);
	memcpy(n->w_job, m->w_job, bytes);
	memcpy(n->efi, m->efi, bytes);
	n->score_hops = m->score_hops;
	for (i = m->nfell_back; i < n->nfell_back; i++)
		n->escaped[n->fell_back[i]] = 0;
	n->nfell_back = m->nfell_back;
	*n->rep = m->rep;
}

/*
 * A layer whose destinations fell back is routed again (nue_layer_tries, up to six times), each
 * time with every new turn costing more from the layer's first destination on: nothing, then
 * the load of one destination on a channel (what nue_try_route charges after an impasse), then
 * four times that; tries four to six repeat these with equally far destinations taken by
 * descending LID.  The try with the fewest fall-backs is kept, the earliest on a tie.  Among
 * routes of equal length the costlier turns favour those that reuse turns, which leaves the
 * layer's dependency graph room for its later destinations.  Impasses, once they start, hang on
 * every choice before them: on tori beyond 8x8x8 with 8 layers whole layers fell back for a third
 * of their destinations while others had none, and which ones changed with the switch weights and
 * with the order of equally far destinations.  With three tries the 10x10x10 torus falls back for
 * 11 of 5,000 destinations instead of 335 with one, with six for none (11x11x10: 27, then 3).
 *
 * A layer still falling back for more than 1% of all destinations after three tries skips the
 * other three: one layer for every destination is then likely to be tried anyway (see
 * nue_route_whole_single_layer), and on tori with 2 or 4 VLs, where it wins, they had cost half as
 * much route time again (10x10x10 torus, 2 VLs: 24.6 s against 16.8 s, same tables).  Layers
 * without fall-backs are routed once, as before.  A try stops once it has as many fall-backs as
 * the best before it, which cannot lose to it.  When an earlier try wins it is routed once more
 * rather than kept aside: the routing is deterministic, and the tables and dependency graph of a
 * layer are large.
 *
 * A layer of NUE_DEFER_TRIES_FROM destinations or more whose first try falls back for few of them
 * (few_fallbacks) is kept after that try: moving its fall-backs to other layers after the pass
 * usually rescues them all, and each try costs seconds there.  Offline with 8 VLs on the random
 * graph of 2,000 switches and 20,000 hosts, 16 tries of 25 went and the route time fell from
 * 118 s to 79 s (paired runs), every fall-back moved and the maximum EFI 198,500 instead of
 * 199,180; on the 12x12x12 torus with 1% of links removed 10.7 s to 7.7 s at a maximum EFI 1.9%
 * higher.  When
 * the moves fall short, every try is made after all (route_with_every_try).
 */
static int route_layer_best(struct nue *n, unsigned layer, struct fab_error *err)
{
	/* a new turn, in loads of one destination; the second half by descending LID */
	static const unsigned cost[NUE_LAYER_TRIES_MAX] = { 0, 1, 4, 0, 1, 4 };
	const unsigned tries = n->o->layer_tries ? n->o->layer_tries : NUE_LAYER_TRIES_MAX;
	const int base_ties = n->ties_descending;
	uint32_t before = n->rep->fallbacks, fewest = UINT32_MAX;
	unsigned i, best = 0;
	int rc = 0, best_in_place = 0;

	if (n->k == 1)
		return route_layer(n, layer, 0, n->by_lid ? 1 : UINT32_MAX, err);
	mark_layer(n);
	for (i = 0; i < tries && i < NUE_LAYER_TRIES_MAX && fewest; i++) {
		/* Then one layer for every destination is likely to be tried. */
		if (i == NUE_LAYER_TRIES_MAX / 2 && falls_back_much(n, fewest))
			break;
		if (i == 1 && few_fallbacks(n, fewest)) {
			n->rep->layers_deferred++;
			n->deferred_any = 1;
			break;
		}
		if (i)
			back_to_mark(n);
		n->ties_descending = base_ties ^ (i >= NUE_LAYER_TRIES_MAX / 2);
		rc = route_layer(n, layer, cost[i] * n->sources, fewest, err);
		if (rc == 1 || rc < 0)
			goto out;
		best_in_place = rc == 0;
		if (best_in_place) {
			fewest = n->rep->fallbacks - before;
			best = i;
		}
	}
	rc = 0;
	if (!best_in_place) {
		back_to_mark(n);
		n->ties_descending = base_ties ^ (best >= NUE_LAYER_TRIES_MAX / 2);
		rc = route_layer(n, layer, cost[best] * n->sources, UINT32_MAX, err);
	}
	n->rep->layers_rerouted += best > 0;
out:
	n->ties_descending = base_ties;
	return rc;
}

/* Every destination routed once; 0, 1 when need_shortest gives up, -1 on an error. */
int nue_route_first_pass(struct nue *n, enum sw_weights sww, struct fab_error *err)
{
	unsigned layer;
	int rc;

	n->sw_weights = sww;
again:
	reset_run(n);
	n->rep->switch_lids_unweighted = sww == SWW_NONE;
	n->rep->by_lid = n->by_lid;
	for (layer = 0; layer < n->k; layer++) {
		rc = route_layer_best(n, layer, err);
		/* By LID with one layer, a fall-back calls for far-first (order_far_first). */
		if (rc == LAYER_ABANDONED && n->by_lid) {
			n->by_lid = 0;
			goto again;
		}
		if (rc)
			return rc;
	}
	return move_fallbacks(n, err);
}

/* The rebalancing pass after the first, unless turned off; 0, 1 when n lost its race, -1. */
int nue_finish_candidate(struct nue *n, struct fab_error *err)
{
	int rc = n->o->skip_rebalance ? 0 : nue_rebalance(n, err);

	n->rep->cycle_searches = n->g.searches;
	n->rep->searches_spared = n->g.closed_refusals;
	return rc;
}

/* One complete routing; 0, 1 when need_shortest gives up, -1 on an error. */
int nue_route_candidate(struct nue *n, enum sw_weights sww, struct fab_error *err)
{
	int rc = nue_route_first_pass(n, sww, err);

	return rc ? rc : nue_finish_candidate(n, err);
}

static void swap_ptr(uint8_t **a, uint8_t **b)
{
	uint8_t *t = *a;

	*a = *b;
	*b = t;
}

/* Exchanges the current results with other tables: a spare set or another routing's. */
void nue_swap_tables(struct nue *n, uint8_t **lft, uint8_t **hops, uint8_t **layer)
{
	swap_ptr(&n->r->lft, lft);
	swap_ptr(&n->r->hops, hops);
	swap_ptr(&n->lid_layer, layer);
}

void nue_swap_with_spare(struct nue *n, struct nue_tables *spare)
{
	nue_swap_tables(n, &spare->lft, &spare->hops, &spare->layer);
}

/* Keeps the candidate just routed if it beats the best, else puts the best back. */
static void keep_better(struct nue *n, struct nue_best *b)
{
	struct nue_score s = nue_score_of(n);

	if (b->valid && !nue_better(&s, &b->score)) {
		nue_swap_with_spare(n, &b->spare);
		*n->rep = b->rep;
		return;
	}
	b->rep = *n->rep;
	b->score = s;
	b->valid = 1;
}

/* Moves the best candidate's tables aside before the next candidate runs. */
int nue_set_best_aside(struct nue *n, struct nue_best *b)
{
	size_t cells = (size_t)n->r->nswitches * n->r->lft_len;

	if (!b->valid)
		return 0;
	if (!b->spare.lft) {
		b->spare.lft = malloc(cells ? cells : 1);
		b->spare.hops = malloc(cells ? cells : 1);
		b->spare.layer = malloc(n->f->max_lid + 1);
		if (!b->spare.lft || !b->spare.hops || !b->spare.layer)
			return -1;
	}
	nue_swap_with_spare(n, &b->spare);
	return 0;
}

void nue_free_best(struct nue_best *b)
{
	free(b->spare.lft);
	free(b->spare.hops);
	free(b->spare.layer);
}

/*
 * Routes the single-layer candidate if probe is set, then the listed ones, in this order; the
 * best ends up in n's tables and report (an earlier candidate wins a tie).  0 or -1 on an error.
 */
int nue_run_candidates(struct nue *n, struct nue_best *b, int probe, const enum sw_weights *cand,
		       unsigned ncand, struct fab_error *err)
{
	unsigned i;
	int rc;

	if (probe) {
		rc = nue_route_single_layer(n, 0, err);
		if (rc < 0)
			return -1;
		if (rc)
			keep_better(n, b);
	}
	for (i = 0; i < ncand; i++) {
		if (nue_set_best_aside(n, b)) {
			fab_error_set(err, "out of memory for a second candidate routing");
			return -1;
		}
		if (nue_route_candidate(n, cand[i], err) < 0)
			return -1;
		keep_better(n, b);
	}
	return 0;
}

/* Destinations of all layers, once every layer is routed. */
static uint64_t destinations(const struct nue *n)
{
	uint64_t sum = 0, fallbacks = 0;
	uint32_t lid, lids = 0;
	unsigned layer;

	for (layer = 0; layer < n->k; layer++) {
		sum += n->rep->dests_per_layer[layer];
		fallbacks += n->rep->fallbacks_per_layer[layer];
	}
	/* Moves between layers and routes off the escape paths keep the counts balanced. */
	for (lid = 1; lid <= n->f->max_lid; lid++)
		lids += n->lid_sw[lid] != FAB_NONE && !nue_kept(n, lid);
	sn_assert(sum == lids && fallbacks == n->rep->fallbacks);
	sn_assert(n->rep->moved_as_previous <= n->rep->moved);
	return sum;
}

/*
 * Both choices of weights for switch LIDs (see route_best), the second on a worker thread when
 * there is one; the best routing so far stays in n and b.  0 or -1 on an error.
 */
static int run_weight_candidates(struct nue *n, struct nue_best *b, int probe,
				 struct fab_error *err)
{
	static const enum sw_weights cand[] = { SWW_CA_SWITCHES, SWW_NONE };
	struct nue_worker *w = NULL;
	struct shared_roots roots;
	int rc;

	if (nue_threads_to_use(n->o) > 1) {
		if (!shared_roots_init(&roots, n))
			n->roots = &roots;
		w = nue_worker_start(n);
	}
	if (!w)
		cpu_gate_open(n->o->spare_cpu);
	rc = nue_run_candidates(n, b, probe, cand, w ? 1 : 2, err);
	if (w) {
		if (nue_worker_finish(n, &b->score, w, err))
			rc = -1;
		nue_worker_free(w);
	}
	if (n->roots) {
		n->rep->roots_shared += roots.nchosen;
		n->roots = NULL;
		shared_roots_destroy(&roots);
	}
	/* The worker's report when its routing won. */
	b->rep = *n->rep;
	return rc;
}

/*
 * Layers skipped their tries (few_fallbacks), and the best candidate still kept destinations on
 * escape paths after the moves: both candidates are routed again with every try, as every layer
 * with fall-backs was before, and the best of all four kept.  This costs more than routing with
 * every try at once, but only where the moves fall short; on the random graph of 2,000 switches
 * with 8 VLs they rescued all but one destination of one candidate and all of the other, which
 * then won.
 */
static int route_with_every_try(struct nue *n, struct nue_best *b, struct fab_error *err)
{
	int rc;

	n->no_deferral = 1;
	rc = run_weight_candidates(n, b, 0, err);
	n->no_deferral = 0;
	n->rep->passes_again = 1;
	return rc;
}

/*
 * Whether a single layer with shortest routes, when it has them, is kept without routing the k
 * layers.  In tree-like fabrics the layers cannot shorten a shortest route, only choose again
 * among equally short ones, and from 2,048 LIDs on they never chose better in the fat trees
 * measured (offline, 4 and 8 VLs): 2,000 hosts 2,072 against 3,280 at best, 3,000 hosts 3,382
 * against 5,064, 5,000 hosts 8,312 against 8,496, 10,000 hosts 16,626 against 16,778.  Below,
 * the layers sometimes won by little (1,500 hosts at 2:1 taper, 8 VLs: 3,716 against 3,741).
 * At 40,000 hosts the k layers cost minutes.
 */
static int one_layer_alone(const struct nue *n)
{
	uint32_t from =
		n->o->one_layer_alone_from ? n->o->one_layer_alone_from : NUE_ONE_LAYER_ALONE_FROM;

	return n->f->nendports >= from && nue_tree_like(n);
}

/*
 * With more than one layer, the switch LIDs of one layer steer the balance of the next ones
 * through their weights, for better or worse: on a 16-ary 3-tree at 8 layers the LIDs of
 * switches without terminals raised the maximum EFI by 10%.  Both choices are routed, after the
 * single layer of nue_route_single_layer, and the best result (see nue_better()) is kept.  With
 * one layer the switch LIDs come last and the choices agree; nue_route_one_layer may try two
 * destination orders instead.  The candidates share nothing but the fabric and the partition, so
 * with two threads the second choice runs beside the others; the result is the same as in one
 * thread.
 */
static int route_best(struct nue *n, struct fab_error *err)
{
	struct nue_best b = { .valid = 0 };
	int rc, probe = 1, alone = one_layer_alone(n);

	if (n->k == 1)
		return nue_route_one_layer(n, err);
	/*
	 * On a complete fat tree the single layer usually reaches the cut bound, which no
	 * candidate can beat: it goes first, alone, and ends the search when it does (16-ary
	 * 3-tree at 8 VLs: a third of the route time).  On a large tree-like fabric a single
	 * layer with shortest routes is kept too (one_layer_alone).
	 */
	if (n->efi_bound || alone) {
		rc = nue_run_candidates(n, &b, 1, NULL, 0, err);
		n->rep->at_cut_bound = n->efi_bound && !rc && b.valid && !b.score.fallbacks &&
				       b.score.efi <= n->efi_bound;
		/* The single layer is a candidate only with shortest routes and no fall-back. */
		n->rep->one_layer_alone = alone && !rc && b.valid && !n->rep->at_cut_bound;
		if (rc || n->rep->at_cut_bound || n->rep->one_layer_alone) {
			/* No second candidate: the other CPU is free, as without a worker. */
			cpu_gate_open(n->o->spare_cpu);
			goto chosen;
		}
		probe = 0;
	}
	rc = run_weight_candidates(n, &b, probe, err);
	if (!rc && b.score.fallbacks && n->deferred_any)
		rc = route_with_every_try(n, &b, err);
chosen:
	if (!rc && falls_back_much(n, b.score.fallbacks))
		rc = nue_route_whole_single_layer(n, &b, err);
	if (!rc && n->rep->single_layer == NUE_ONE_LAYER_SHORTEST)
		rc = nue_reroute_in_vls(n, err);
	nue_free_best(&b);
	return rc;
}

/*
 * The LIDs of one switch's terminals may share the routes of the first of them (nue_joins_group):
 * the others take no new turn and cost no search.  With one layer the rebalancing pass moves
 * them together too (nue_reroute_group); with more it routes them one by one, which balanced
 * better there at twice the time (8 VLs, maximum EFI: random graph of 1,000 switches 34,140
 * against 55,200 moved together, dragonfly a12p6h6 10,512 against 14,508).  Fewer distinct routes
 * leave a layer's dependency graph more room, which mostly balances better; but the routes from one
 * source switch to all of a group's LIDs share every channel, where routed one by one they could
 * spread.  On fat trees each source's up-links must spread over a leaf's destinations (a 3-level
 * tree grouped had 11 times the maximum EFI), so tree-like fabrics never group.  With one layer the
 * balance got better on most fabrics measured and worse on some (dragonfly a16p8h8 +55%):
 * nue_group=auto groups from NUE_GROUP_FROM end ports on, where route time matters most.  With more
 * layers it balanced better from 5,000 hosts on (up to 42% lower maximum EFI), but 0.4% to 6.8%
 * worse on four fabrics of 432 to 2,048 hosts inside OpenSM, which route in under a second
 * anyway: auto groups k layers from NUE_GROUP_LAYERS_FROM end ports on.  Figures: Groups in
 * doc/nue.md.
 */
static int groups_lids(const struct nue *n)
{
	if (n->o->group == NUE_GROUP_NO || nue_tree_like(n))
		return 0;
	if (n->o->group == NUE_GROUP_YES)
		return 1;
	return n->f->nendports >= (n->k > 1 ? NUE_GROUP_LAYERS_FROM : NUE_GROUP_FROM);
}

/* Kept routes share layer 0 with the multicast tree's turns, which made sure they fit. */
static int kept_fits(const struct nue_opts *o, struct fab_error *err)
{
	if (!o->kept || (o->vls == 1 && !o->no_mcast_tree && o->kept_lid))
		return 0;
	fab_error_set(err, "internal error: kept routes need one VL and the multicast tree");
	return -1;
}

/* Layers the caller gave must be the VLs' own. */
static int given_layers_fit(const struct fabric *f, const struct nue_opts *o, struct fab_error *err)
{
	uint32_t i;

	for (i = 0; o->layers && i < f->nendports; i++) {
		if (o->layers[i] < o->vls)
			continue;
		fab_error_set(err, "destination LID %u is given layer %u, but there are %u",
			      f->ports[f->endports[i]].base_lid, o->layers[i], o->vls);
		return -1;
	}
	return 0;
}

int nue_route(const struct fabric *f, const struct nue_opts *o, struct routing *r,
	      struct nue_report *rep, struct fab_error *err)
{
	struct nue n = { .f = f, .o = o, .r = r, .rep = rep, .k = o->vls };
	uint32_t lid;
	int rc = -1;

	memset(rep, 0, sizeof(*rep));
	rep->vls = o->vls;
	if (check_fabric(f, o->vls, err))
		return -1;
	if (given_layers_fit(f, o, err) || kept_fits(o, err) || nue_prepare(&n, o->layers, err))
		goto out;
	if (o->layers)
		rep->partitioner = "nue_layers";
	if (n.k > 1 && routing_alloc_sl_by_dlid(r)) {
		fab_error_set(err, "out of memory for the SL of %u LIDs", f->max_lid);
		goto out;
	}
	n.group_lids = groups_lids(&n);
	if (nue_stopped(&n, err) || route_best(&n, err))
		goto out;
	rep->destinations = (uint32_t)destinations(&n);
	for (lid = 1; o->kept && lid <= f->max_lid; lid++)
		rep->kept += n.lid_sw[lid] != FAB_NONE && nue_kept(&n, lid);
	set_service_levels(&n);
	rc = 0;
out:
	nue_free(&n);
	return rc;
}
