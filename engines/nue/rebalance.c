/*
 * rebalance.c - Nue's final pass: every terminal LID routed once more in its layer against the
 * weights of all the other routes, never raising the maximum EFI, while the race of two
 * destination orders (workers.c) may still call the pass off.  The routes of a destination are
 * rebuilt from the tables (destination.c) and routed again by search.c.
 */
#include <string.h>

#include "engines/nue/nue_private.h"
#include "lib/assert.h"

/* Whether a channel of the routes in n->out carries more CA-to-CA routes than efi_cap. */
static int over_cap(const struct nue *n, uint32_t d)
{
	uint32_t s;

	for (s = 0; s < n->nsw; s++) {
		sn_assert(s == d || n->out[s] < n->nch);
		if (s != d && n->efi[n->out[s]] > n->efi_cap)
			return 1;
	}
	return 0;
}

/* Makes the routes in n->kept_out (loop-free: they were lid's) official again. */
static void put_back_kept(struct nue *n, uint32_t lid, uint32_t d)
{
	int loops;

	memcpy(n->out, n->kept_out, sizeof(uint32_t) * n->nsw);
	loops = nue_compute_depths(n, d);
	sn_assert(!loops);
	nue_write_tables(n, lid, d);
	nue_update_loads(n, lid, d, nue_weights_of(n, lid), nue_job_phase_dest(n, lid));
}

/*
 * Whether n's rebalancing must stop because the other order won or failed.  Without wait an
 * open race stays open.  Once n has won, n->race is cleared: its columns may be promised.
 */
static int race_lost(struct nue *n, int wait)
{
	if (!n->race)
		return 0;
	switch (nue_settle_race(n->race, wait)) {
	case RACE_OPEN:
		return 0;
	case RACE_WON:
		n->race = NULL;
		return 0;
	default:
		return 1;
	}
}

/* Makes the routes in n->kept_out official again for every LID of a group. */
static void put_back_group(struct nue *n, const uint32_t *lid, uint32_t cnt, uint32_t d)
{
	uint32_t i;

	for (i = 0; i < cnt; i++)
		put_back_kept(n, lid[i], d);
}

/*
 * Routes the LIDs of a group again in their layer once every destination is routed: LIDs of one
 * switch whose routes are the same (see group_of), so they move together.  The first routes
 * of a destination saw only the loads of those routed before it; now the weights hold every
 * other destination's routes, so its routes move off the channels that filled up after it.  The
 * Dijkstra minimises the summed load, not the highest, so new routes that would lift a channel
 * above the maximum EFI at the start of the pass are refused: the pass never raises it.  Old
 * turns stay in the dependency graph (other routes may share them), so new routes only add
 * dependencies and the layer stays acyclic.  1 when the routes changed, 0 when the old ones
 * stay, -1 on an internal error.
 */
int nue_reroute_group(struct nue *n, const uint32_t *lid, uint32_t cnt, struct fab_error *err)
{
	uint32_t d = n->lid_sw[lid[0]], i;

	if (nue_routes_from_tables(n, lid[0], d, err))
		return -1;
	memcpy(n->kept_out, n->out, sizeof(uint32_t) * n->nsw);
	for (i = 0; i < cnt; i++)
		nue_remove_loads(n, lid[i], d);
	if (!nue_attempt(n, d, nue_weights_of(n, lid[0]))) {
		nue_undo_attempt(n);
		put_back_group(n, lid, cnt, d);
		return 0;
	}
	for (i = 0; i < cnt; i++)
		if (nue_commit_lid(n, lid[i], err))
			return -1;
	if (!n->escaped[lid[0]] && over_cap(n, d)) {
		for (i = 0; i < cnt; i++)
			nue_remove_loads(n, lid[i], d);
		put_back_group(n, lid, cnt, d);
		return 0;
	}
	for (i = 0; i < cnt; i++)
		if (n->escaped[lid[i]])
			nue_leave_escape_paths(n, lid[i]);
	return memcmp(n->out, n->kept_out, sizeof(uint32_t) * n->nsw) != 0;
}

int nue_reroute_lid(struct nue *n, uint32_t lid, struct fab_error *err)
{
	return nue_reroute_group(n, &lid, 1, err);
}

/* Whether lid's routes are those of first, a LID of the same switch. */
static int same_routes(const struct nue *n, uint32_t first, uint32_t lid)
{
	uint32_t s, d = n->lid_sw[first];

	for (s = 0; s < n->nsw; s++)
		if (s != d && routing_lft(n->r, s)[lid] != routing_lft(n->r, s)[first])
			return 0;
	return 1;
}

/* Whether the rebalancing pass reroutes lid, a LID of the current layer. */
static int rebalanced(const struct nue *n, uint32_t lid, unsigned layer)
{
	return n->lid_sw[lid] != FAB_NONE && n->lid_exit[lid] && n->lid_layer[lid] == layer &&
	       !nue_kept(n, lid);
}

/* The LIDs after first (up to last) that join its group; see nue_reroute_group. */
static uint32_t group_of(struct nue *n, uint32_t first, uint32_t last, unsigned layer)
{
	uint32_t lid, cnt = 1;

	n->group[0] = first;
	/* Without groups, or with k > 1, one by one: see groups_lids (nue.c). */
	if (!n->group_lids || n->k > 1)
		return 1;
	for (lid = first + 1; lid <= last; lid++) {
		if (!rebalanced(n, lid, layer))
			continue;
		if (n->lid_sw[lid] != n->lid_sw[first] || n->escaped[lid] != n->escaped[first] ||
		    nue_job_phase_dest(n, lid) != nue_job_phase_dest(n, first) ||
		    !same_routes(n, first, lid))
			break;
		n->group[cnt++] = lid;
	}
	return cnt;
}

/*
 * One more pass over the terminals' LIDs, layer by layer, each routed again against the final
 * weights (nue_reroute_lid).  Destinations still on escape paths get another chance too.
 *
 * With one layer the routes are long (every minimal route through a cycle of channels is given
 * up somewhere), and the pass also lets a settled switch move aside (move_aside) so that a
 * neighbour reaches the destination through it in fewer hops.  Offline with one VL this shortened
 * the routes between CAs on all seven fabrics measured (tori, random graphs, dragonfly, Kautz;
 * 8x8x8 torus 8.532 to 8.452 hops, with 1% of links removed 8.882 to 8.567 and 244 fall-backs
 * to 64).  It lowered the maximum EFI on five of them (8x8x8 torus 84,560 to 57,228) and raised
 * it by under 2% on two, as the pass relieves less when routes get shorter.  Only here: in the
 * first pass the turns it adds leave fewer ways open for the destinations after it (the torus
 * with 1% of links removed fell back for 552 destinations instead of 244), and with more layers
 * the shorter routes crowd links the pass would otherwise have relieved (8x8x8 torus, 8 VLs:
 * maximum EFI 13,528 against 9,736).  The single layer nue_route_single_layer tries with k > 1 is
 * one layer too and moves aside; on fat trees, where it wins, its routes are shortest already. With
 * more layers, destinations still on escape paths move aside too: any route of their own is
 * better than the escape paths, and they are few (12x12x12 torus with 1% of links removed, 8 VLs,
 * offline: 180 fall-backs instead of 198, maximum EFI 157,572 instead of 185,400).
 *
 * With one layer this pass is the last to write the tables, in LID order, and touches one LID's
 * column at a time; the switch LIDs' columns are final before it.  So every column below the LID
 * in hand is final, and the verifier may check it meanwhile (routing_columns_final).  With more
 * layers the candidates' tables trade places at the end, so nothing is promised.
 */
int nue_rebalance(struct nue *n, struct fab_error *err)
{
	int promise = n->k == 1;
	uint32_t lid, cnt;
	unsigned layer;
	int rc;

	n->efi_cap = nue_max_efi(n);
	for (layer = 0; layer < n->k; layer++) {
		if (n->layer_cdg)
			nue_select_layer(n, layer);
		for (lid = 1; lid <= n->f->max_lid; lid += cnt) {
			cnt = 1;
			if (!rebalanced(n, lid, layer))
				continue;
			rc = race_lost(n, 0);
			if (!rc)
				rc = nue_stopped(n, err);
			if (rc)
				goto out;
			if (promise && !n->race)
				routing_columns_final(n->r, lid);
			cnt = group_of(n, lid, n->f->max_lid, layer);
			n->move_aside = n->k == 1 || n->escaped[lid];
			rc = nue_reroute_group(n, n->group, cnt, err);
			if (rc < 0)
				goto out;
			n->rep->rerouted += (uint32_t)rc * cnt;
			cnt = n->group[cnt - 1] - lid + 1;
		}
	}
	rc = race_lost(n, 1);
	if (rc)
		goto out;
	if (promise)
		routing_columns_final(n->r, n->f->max_lid + 1);
out:
	n->move_aside = 0;
	return rc;
}
