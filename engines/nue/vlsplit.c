/*
 * vlsplit.c - one layer for every destination, spread over the k VLs: with k > 1 Nue routes the
 * single layer as a candidate (shortest routes on fat trees) or, when the k-layer candidates fall
 * back too much, for every destination; the layer's destinations then take the VLs of the
 * partition, and each VL gets a dependency graph of just its own routes, which shorten.c routes
 * in again.
 */
#include <string.h>

#include "engines/nue/nue_private.h"
#include "lib/assert.h"

/*
 * The dependency graph of each VL the single layer's destinations are spread over: the turns of
 * its own destinations' routes.  Each is a part of the one acyclic layer, so none closes a cycle,
 * and each VL starts from the order of the single layer routed last, usually the winner, whose
 * turns all agree with it and need no search.  The weights, EFI and hops are counted again from
 * the tables too: other candidates may have routed since.
 */
int nue_split_over_vls(struct nue *n, struct fab_error *err)
{
	unsigned v;
	uint32_t lid;

	sn_assert(n->k > 1 && n->layer_cdg);
	/*
	 * The single layer was routed in the graph's own state; a k-layer candidate routed since
	 * leaves one of the VLs' states selected, which must not copy its order onto itself.
	 */
	cdg_select(&n->g, NULL);
	for (v = 0; v < n->k; v++)
		cdg_layer_start_from(&n->g, &n->layer_cdg[v]);
	/* VL 0 keeps the multicast tree's turns, which the single layer held (mctree.c). */
	cdg_select(&n->g, &n->layer_cdg[0]);
	if (!n->o->no_mcast_tree && nue_mcast_mark_turns(n)) {
		fab_error_set(err, "internal error: the multicast tree does not fit VL 0");
		return -1;
	}
	n->sw_weights = SWW_CA_SWITCHES;
	nue_init_weights(n);
	memset(n->efi, 0, sizeof(uint64_t) * (n->nch ? n->nch : 1));
	n->score_hops = 0;
	for (lid = 1; lid <= n->f->max_lid; lid++) {
		uint32_t d = n->lid_sw[lid];

		if (d == FAB_NONE)
			continue;
		sn_assert(n->lid_layer[lid] < n->k);
		cdg_select(&n->g, &n->layer_cdg[n->lid_layer[lid]]);
		if (nue_routes_from_tables(n, lid, d, err))
			return -1;
		if (nue_use_route_turns(n)) {
			fab_error_set(err,
				      "internal error: the single layer's routes to LID %u "
				      "do not fit its VL",
				      lid);
			return -1;
		}
		nue_update_loads(n, lid, d, nue_weights_of(n, lid), nue_job_phase_dest(n, lid));
	}
	return 0;
}

/*
 * With k > 1, one layer is routed first.  Where its routes between CAs are all shortest and none
 * falls back (fat trees: climbing then descending never closes a cycle), k layers cannot shorten
 * any of them, only choose again among routes of equal length, and the one layer becomes a
 * candidate: its destinations are spread over the k VLs by the partition, and every VL's
 * dependencies are a subset of the one acyclic layer's.  On the 16-ary 3-tree with 8 VLs it
 * had the lower maximum EFI (offline 6,688 against 6,880), on the 4-ary 3-tree with 4 VLs the
 * higher (92 against 88).  In tree-like fabrics this candidate takes its destinations by LID
 * alone (see order_far_first): it is kept only with shortest routes and no fall-back, where
 * far-first's help against impasses is not needed.  Elsewhere the layer gives up at the first CA
 * route that is not shortest, usually after a small part of the destinations.  With whole set it
 * routes every destination, shortest or not (see nue_route_whole_single_layer).  1 when the
 * layer is a candidate, 0 when it gave up, -1 on an error.
 */
int nue_route_single_layer(struct nue *n, int whole, struct fab_error *err)
{
	struct cdg_layer *layers = n->layer_cdg;
	unsigned k = n->k;
	uint32_t lid;
	int rc;

	/* Only a candidate beside k layers; with one layer nue_route_one_layer routes. */
	sn_assert(k > 1 && layers);
	n->k = 1;
	n->layer_cdg = NULL;
	n->need_shortest = !whole;
	n->by_lid = !whole && nue_tree_like(n);
	cdg_select(&n->g, NULL);
	rc = nue_route_candidate(n, SWW_CA_SWITCHES, err);
	n->need_shortest = 0;
	n->by_lid = 0;
	n->layer_cdg = layers;
	n->k = k;
	if (rc)
		return rc < 0 ? -1 : 0;
	memcpy(n->lid_layer, n->home_layer, n->f->max_lid + 1);
	memset(n->rep->dests_per_layer, 0, sizeof(n->rep->dests_per_layer));
	memset(n->rep->fallbacks_per_layer, 0, sizeof(n->rep->fallbacks_per_layer));
	for (lid = 1; lid <= n->f->max_lid; lid++) {
		if (n->lid_sw[lid] == FAB_NONE)
			continue;
		sn_assert(n->lid_layer[lid] < k);
		n->rep->dests_per_layer[n->lid_layer[lid]]++;
		n->rep->fallbacks_per_layer[n->lid_layer[lid]] += n->escaped[lid];
	}
	n->rep->single_layer = whole ? NUE_ONE_LAYER_FEWER_FALLBACKS : NUE_ONE_LAYER_SHORTEST;
	return 1;
}

/*
 * On tori with 2 or 4 layers, whole layers can fall back for a third of their destinations
 * while one layer routes every destination (10x10x10 torus offline: 2 layers 1,278 fall-backs
 * and maximum EFI 671,080; one layer none and 164,168).  So when the best of the k-layer
 * candidates falls back for more than 1% of the destinations (falls_back_much), one layer routes
 * every destination too, equally far ones by ascending and then, if some still fall back, by
 * descending LID (as with one VL), spread over the VLs by the partition as in
 * nue_route_single_layer, and routed again in their VL (nue_reroute_in_vls).  A routing is kept
 * only if it then falls back less and its maximum EFI is lower than the best so far.  Judged before
 * that pass it had lost where it wins after: with 8 layers the 12x12x12 torus with 1% of links
 * removed falls back for 139 destinations at a maximum EFI of 226,456; one layer for 96 at 304,844,
 * and after the pass for 41 at 125,800. Below 1% the layer is not tried: it costs about a single-VL
 * routing.  0 or -1 on an error; b's score is the best candidate's, whose tables n holds, and holds
 * on return.
 */
int nue_route_whole_single_layer(struct nue *n, struct nue_best *b, struct fab_error *err)
{
	unsigned descending;
	int rc = 0;

	b->rep = *n->rep;
	b->valid = 1;
	if (nue_set_best_aside(n, b)) {
		fab_error_set(err, "out of memory for the single-layer candidate");
		return -1;
	}
	for (descending = 0; descending < 2 && b->score.fallbacks && !rc; descending++) {
		struct nue_score one;

		n->ties_descending = (int)descending;
		rc = nue_route_single_layer(n, 1, err) < 0 ? -1 : 0;
		if (!rc)
			rc = nue_reroute_in_vls(n, err);
		one = nue_score_of(n);
		if (rc || one.fallbacks >= b->score.fallbacks || one.efi >= b->score.efi)
			continue;
		n->rep->second_order = (int)descending;
		b->score = one;
		b->rep = *n->rep;
		nue_swap_with_spare(n, &b->spare);
	}
	n->ties_descending = 0;
	nue_swap_with_spare(n, &b->spare);
	*n->rep = b->rep;
	return rc;
}
