/*
 * shorten.c - routes shortened once one layer's destinations are spread over k VLs (vlsplit.c):
 * each VL's dependency graph holds only its own destinations' routes, so the destinations whose
 * routes detour or use the escape paths are routed once more there, CA LIDs against the final
 * weights and switch LIDs over equal weights, their old turns kept so that each VL stays acyclic.
 */
#include <stdlib.h>

#include "engines/nue/nue_private.h"
#include "lib/assert.h"

/* Hops of the routes in n->out (depths from nue_compute_depths), once per LID sending from a
 * switch. */
static uint64_t source_hops(const struct nue *n, const uint32_t *depth)
{
	uint64_t sum = 0;
	uint32_t s;

	for (s = 0; s < n->nsw; s++)
		sum += (uint64_t)n->src_lids[s] * depth[s];
	return sum;
}

/*
 * Routes CA LID lid again in its VL's own dependency graph against the final weights, as the
 * rebalancing pass does with k layers (nue_reroute_lid: never above the maximum EFI; switches move
 * aside only for escape paths), if its routes from the switches with CAs are not all shortest or
 * are escape paths.  Moving aside for every such LID gave shorter routes but a higher maximum
 * EFI (10x10x10 torus, 4 VLs: 9.867 links between CAs and 135,372 against 9.922 and 111,868).
 * 1 when the routes changed, 0 when not, -1 on an internal error.
 */
static int shorten_ca_lid(struct nue *n, uint32_t lid, struct fab_error *err)
{
	uint32_t d = n->lid_sw[lid];

	sn_assert(n->lid_exit[lid] && n->lid_layer[lid] < n->k);
	if (nue_routes_from_tables(n, lid, d, err))
		return -1;
	if (!n->escaped[lid] && nue_shortest_from_cas(n, d))
		return 0;
	cdg_select(&n->g, &n->layer_cdg[n->lid_layer[lid]]);
	n->move_aside = n->escaped[lid];
	return nue_reroute_lid(n, lid, err);
}

/*
 * Routes switch LID lid again in its VL's own dependency graph (see nue_reroute_in_vls), its
 * old turns kept there, over channels of weight w.  New routes are kept if they are shorter,
 * summed over the sources, or if the old ones were escape paths.  1 when they changed, 0 when
 * the old ones stay, -1 on an internal error.
 */
static int shorten_switch_lid(struct nue *n, uint32_t lid, const uint64_t *w, struct fab_error *err)
{
	uint32_t d = n->lid_sw[lid];
	uint64_t before, shortest;

	sn_assert(!n->lid_exit[lid] && n->lid_layer[lid] < n->k);
	if (nue_routes_from_tables(n, lid, d, err))
		return -1;
	nue_bfs_levels(n, NULL, d, n->hop);
	shortest = source_hops(n, n->hop);
	before = source_hops(n, n->depth);
	/* Breadth-first hops are the fewest: no route is shorter. */
	sn_assert(shortest <= before);
	if (before == shortest && !n->escaped[lid])
		return 0;
	cdg_select(&n->g, &n->layer_cdg[n->lid_layer[lid]]);
	if (!nue_attempt(n, d, w))
		goto keep;
	if (nue_compute_depths(n, d)) {
		fab_error_set(err, "internal error: routes to LID %u loop", lid);
		return -1;
	}
	if (!n->escaped[lid] && source_hops(n, n->depth) >= before)
		goto keep;
	if (nue_commit_routes(n, lid, err))
		return -1;
	if (n->escaped[lid])
		nue_leave_escape_paths(n, lid);
	return 1;
keep:
	nue_undo_attempt(n);
	return 0;
}

/*
 * Once one layer's destinations are spread over k > 1 VLs (after the layer of shortest routes
 * has won, or before the layer for every destination is judged), a route needs to be cycle-free
 * only with the routes of its own VL, not with all of the layer's.  So each VL gets a
 * dependency graph of just its destinations' routes, and the destinations whose routes detour
 * are routed once more there (their old turns kept, so new routes only add turns and each VL
 * stays acyclic): first the CA LIDs against the final weights, then the switch LIDs over equal
 * weights, as theirs weigh in no balance (the EFI counts CA pairs).
 *
 * On tori the one layer wins with 2 or 4 VLs (see nue_route_whole_single_layer), and the routes
 * between CAs got shorter and the maximum EFI lower (10x10x10 torus, 2 VLs: 10.028 links instead
 * of 10.313, 149,888 instead of 164,168).  On fat trees the CA routes are shortest already, but
 * the switch LIDs need turns the CAs' routes never take (down and up again) and, in one layer,
 * many of those close a cycle: with 8 VLs on the 16-ary 3-tree the mean hops over all LID pairs
 * fell from 5.2916 to 5.2792 (5.2770 for shortest paths).  Not further: a switch LID's routes
 * climb out of a pod after turning up in it, and with the up-and-down turns of the VL's CA
 * routes such turns in two pods close a cycle through the cores.  Giving the switch LIDs a VL
 * of their own shortened them less (5.2879), and trying the other VLs as well gained little
 * (5.2787) for five times the route time.  Where the one layer was kept alone on a large tree-like
 * fabric (one_layer_alone in nue.c), the switch LIDs keep its routes: there the searches their
 * turns need took half the route time for little (fat tree of 20,000 hosts, 8 VLs: mean hops
 * 5.5927 instead of 5.5955, 29 s instead of 14 s; 10,000 hosts 5.5151 and 5.5191, 5.7 s and
 * 3.9 s).
 */
int nue_reroute_in_vls(struct nue *n, struct fab_error *err)
{
	uint64_t *w = malloc(sizeof(uint64_t) * (n->nch ? n->nch : 1));
	uint32_t lid, c;
	int rc = -1;

	if (!w) {
		fab_error_set(err, "out of memory for routing again in each VL");
		return -1;
	}
	if (nue_split_over_vls(n, err))
		goto out;
	for (c = 0; c < n->nch; c++)
		w[c] = n->w_init;
	n->efi_cap = nue_max_efi(n);
	for (lid = 1; lid <= n->f->max_lid; lid++) {
		if (n->lid_sw[lid] == FAB_NONE || !n->lid_exit[lid])
			continue;
		rc = shorten_ca_lid(n, lid, err);
		if (rc < 0)
			goto out;
		n->rep->vl_rerouted += (uint32_t)rc;
	}
	n->move_aside = 1;
	for (lid = 1; lid <= n->f->max_lid && !n->rep->one_layer_alone; lid++) {
		if (n->lid_sw[lid] == FAB_NONE || n->lid_exit[lid])
			continue;
		rc = shorten_switch_lid(n, lid, w, err);
		if (rc < 0)
			goto out;
		n->rep->vl_rerouted += (uint32_t)rc;
	}
	rc = 0;
out:
	n->move_aside = 0;
	cdg_select(&n->g, NULL);
	free(w);
	return rc;
}
