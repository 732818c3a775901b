/*
 * destination.c - routing one destination LID of the current layer in Nue: the attempts of
 * search.c with growing costs for new turns, the fall-back to the escape paths, committing the
 * routes (turns used, self-checks, hop counts, tables) and the loads they add to the balancing
 * weights and to the EFI score.  Also the way back from the tables to the routes, for the
 * passes that route a destination again (rebalance.c, shorten.c, vlsplit.c).
 */
#include <string.h>

#include "engines/nue/nue_private.h"
#include "lib/assert.h"

/* ------------------------------------------------------------------ one destination LID */

/*
 * The turn the routes in n->out take after switch s's channel: 1 with *in and *out, 0 where the
 * route delivers at s or at the next switch.
 */
int nue_route_turn(const struct nue *n, uint32_t s, uint32_t *in, uint32_t *out)
{
	if (n->out[s] == AT_DEST)
		return 0;
	/* Only complete routes have turns: every switch but the destination has a channel. */
	sn_assert(n->out[s] < n->nch);
	*in = n->out[s];
	*out = n->out[n->g.head[*in]];
	return *out != AT_DEST;
}

/*
 * True when every turn the routes to the current destination take is marked used, so that the
 * acyclic used turns cover them.  O(switches); a failure is an internal error, never a table.
 */
static int turns_marked(const struct nue *n)
{
	uint32_t s, in, out;

	for (s = 0; s < n->nsw; s++)
		if (nue_route_turn(n, s, &in, &out) &&
		    n->g.turn[cdg_turn_index(&n->g, in, out)] != CDG_USED)
			return 0;
	return 1;
}

/*
 * Hops from each switch to d along the routes, and n->topo: the switches, every one after the
 * switch its route leads to.  -1 if a route loops (an internal error).
 */
int nue_compute_depths(struct nue *n, uint32_t d)
{
	uint32_t s, placed = 0;

	sn_assert(d < n->nsw && n->out[d] == AT_DEST);
	for (s = 0; s < n->nsw; s++)
		n->depth[s] = FAB_NONE;
	n->depth[d] = 0;
	n->topo[placed++] = d;
	for (s = 0; s < n->nsw; s++) {
		uint32_t x = s, len = 0, base;

		while (n->depth[x] == FAB_NONE) {
			if (len > n->nsw)
				return -1;
			/* Complete routes: a channel out of every switch but d. */
			sn_assert(n->out[x] < n->nch);
			n->scratch[len++] = x;
			x = n->g.head[n->out[x]];
		}
		base = n->depth[x];
		while (len--) {
			n->depth[n->scratch[len]] = ++base;
			n->topo[placed++] = n->scratch[len];
		}
	}
	sn_assert(placed == n->nsw);
	return 0;
}

int nue_job_phase_dest(const struct nue *n, uint32_t lid)
{
	uint32_t cnt;

	if (!n->o->jobs || !n->job_off)
		return 0;
	job_map_node_jobs(n->o->jobs, n->f->ports[n->f->lid_port[lid]].node, &cnt);
	return cnt > 0;
}

/*
 * The job phase with measured traffic: each source node sharing a job with the destination node
 * adds its demand weight (at least traffic_floor) per LID at its switch.
 */
static void traffic_counts(struct nue *n, uint32_t dst_node)
{
	const struct traffic *t = n->o->traffic;
	uint32_t i, src, p, sw;
	uint64_t w;

	for (i = t->off[dst_node]; i < t->off[dst_node + 1]; i++) {
		src = t->src_node[i];
		if (!job_map_share_job(n->o->jobs, src, dst_node))
			continue;
		for (p = n->f->nodes[src].first_port + 1;
		     p <= n->f->nodes[src].first_port + n->f->nodes[src].nports; p++) {
			sw = n->f->ports[p].base_lid ? fabric_endport_switch(n->f, p) : FAB_NONE;
			if (sw == FAB_NONE)
				continue;
			w = t->weight[i] < n->o->traffic_floor ? n->o->traffic_floor : t->weight[i];
			n->acc[sw] += (uint32_t)(w > UINT32_MAX >> 8 ? UINT32_MAX >> 8 : w)
				      << n->f->ports[p].lmc;
		}
	}
}

/*
 * Sources per switch whose route to lid adds weight: the LIDs of switches with terminals (see
 * ca_lids), or those sharing a job with it (weighed by their traffic with a matrix).
 */
static void source_counts(struct nue *n, uint32_t lid, int job_phase)
{
	uint32_t cnt, i, k;
	const uint32_t *jobs;

	if (!job_phase) {
		memcpy(n->acc, n->ca_lids, sizeof(uint32_t) * n->nsw);
		return;
	}
	memset(n->acc, 0, sizeof(uint32_t) * n->nsw);
	if (n->o->traffic) {
		traffic_counts(n, n->f->ports[n->f->lid_port[lid]].node);
		return;
	}
	jobs = job_map_node_jobs(n->o->jobs, n->f->ports[n->f->lid_port[lid]].node, &cnt);
	for (i = 0; i < cnt; i++)
		for (k = n->job_off[jobs[i]]; k < n->job_off[jobs[i] + 1]; k++) {
			sn_assert(n->job_sw[k] < n->nsw);
			n->acc[n->job_sw[k]] += n->job_lids[k];
		}
}

/*
 * Adds the sources in n->acc behind every channel of the routes to d to load[channel], or takes
 * them away (remove) when routes are replaced.
 */
static void add_loads(struct nue *n, uint64_t *load, int remove)
{
	uint32_t i = n->nsw;

	/* n->topo starts at the destination (nue_compute_depths). */
	sn_assert(n->out[n->topo[0]] == AT_DEST);
	/* Backwards through n->topo: a switch's count is complete before it passes it on. */
	while (i-- > 1) {
		uint32_t x = n->topo[i];

		sn_assert(n->out[x] < n->nch);
		/* Loads taken away were added with the same routes and counts. */
		sn_assert(!remove || load[n->out[x]] >= n->acc[x]);
		if (remove)
			load[n->out[x]] -= n->acc[x];
		else
			load[n->out[x]] += n->acc[x];
		n->acc[n->g.head[n->out[x]]] += n->acc[x];
	}
}

/*
 * Whether the routes to lid add to the balancing weights.  Switch LIDs carry management traffic
 * only; the reference routes them after every layer, so they never steer the terminals' routes.
 * Ours are routed within their layer, and their weights steer the later layers.
 */
static int weighs(const struct nue *n, uint32_t lid, uint32_t d)
{
	if (n->lid_exit[lid])
		return 1;
	return n->sw_weights == SWW_ALL || (n->sw_weights == SWW_CA_SWITCHES && n->has_ca[d]);
}

/*
 * The score of a candidate: routes from every CA port to each CA port's base LID, as the EFI
 * metric counts them, per channel, and their hops.
 */
void nue_tally_score(struct nue *n, uint32_t lid, int remove)
{
	const struct fab_port *port = &n->f->ports[n->f->lid_port[lid]];
	uint64_t hops = 0;
	uint32_t s;

	if (!n->lid_exit[lid] || lid != port->base_lid)
		return;
	memcpy(n->acc, n->ca_ports, sizeof(uint32_t) * n->nsw);
	for (s = 0; s < n->nsw; s++)
		hops += (uint64_t)n->ca_ports[s] * n->depth[s];
	sn_assert(!remove || n->score_hops >= hops);
	n->score_hops = remove ? n->score_hops - hops : n->score_hops + hops;
	add_loads(n, n->efi, remove);
}

void nue_update_loads(struct nue *n, uint32_t lid, uint32_t d, uint64_t *w, int job_phase)
{
	if (weighs(n, lid, d)) {
		source_counts(n, lid, job_phase);
		add_loads(n, w, 0);
	}
	nue_tally_score(n, lid, 0);
}

void nue_write_tables(struct nue *n, uint32_t lid, uint32_t d)
{
	const struct fabric *f = n->f;
	int to_ca = n->lid_exit[lid] != 0;
	uint32_t s;

	sn_assert(lid < n->r->lft_len && d < n->nsw && n->r->nswitches == n->nsw);
	for (s = 0; s < n->nsw; s++) {
		uint32_t hops = n->depth[s] + (uint32_t)to_ca;

		/* The destination's tree is complete: a channel out of every other switch. */
		sn_assert(s == d ? n->out[s] == AT_DEST
				 : n->out[s] < n->nch && n->g.tail[n->out[s]] == s);
		sn_assert(n->depth[s] != FAB_NONE);

		routing_lft(n->r, s)[lid] =
			s == d ? n->lid_exit[lid] : f->ports[f->sw_adj_port[n->out[s]]].num;
		routing_hops(n->r, s)[lid] = (uint8_t)(hops > 0xfe ? 0xfe : hops);
	}
}

/* The balancing weights routes towards lid follow: the job phase's for job nodes. */
uint64_t *nue_weights_of(struct nue *n, uint32_t lid)
{
	return nue_job_phase_dest(n, lid) ? n->w_job : n->w_all;
}

/* One attempt with new turns costing turn_cost and switches moving aside if aside is set. */
static int attempt_with(struct nue *n, uint32_t d, const uint64_t *w, uint64_t turn_cost, int aside)
{
	int ok, was_aside = n->move_aside;

	n->new_turn_cost = turn_cost;
	n->move_aside = aside;
	ok = nue_attempt(n, d, w);
	n->new_turn_cost = 0;
	n->move_aside = was_aside;
	if (!ok)
		nue_undo_attempt(n);
	return ok;
}

/*
 * Routes towards lid in the selected layer's dependency graph.  Routes that add few new
 * dependencies leave more ways open for the destinations after them.  So after an impasse a
 * second attempt makes every new turn cost about one hop extra, and from then on the layer's
 * first attempts make it cost the load of one destination on a channel (one unit per source):
 * among routes of equal length and similar load, the one that reuses turns wins.  Layers
 * without an impasse route as before.  Together with moves (move_fallbacks) this cut the
 * fall-backs on the random graph of 2,000 switches with 8 layers from 796 to 167 (568 before
 * moves), on the 8x8x8 torus with 4 layers from 436 to 120.
 *
 * Impasses on tori are mostly one island switch whose every way out turns into a neighbour's
 * chosen channel against the layer's order (all rings through it are cut next to it).  A third
 * attempt lets settled switches move aside onto another channel of the same hop count
 * (move_aside), which frees such a neighbour.  Only here, after two failed attempts: moving aside
 * for every destination of the first pass leaves fewer ways for the later ones (see rebalance).
 * Offline with 8 VLs this cut the fall-backs on the 12x12x12 torus with 1% of links removed from
 * 676 to 198 and its maximum EFI from 420,260 to 185,400.
 *
 * 0 when the attempts fail; their turns are undone then.  Moves make one attempt (second_attempt
 * 0): the second rescued almost none of them at twice the cost.
 */
int nue_try_route(struct nue *n, uint32_t lid, int second_attempt)
{
	uint32_t d = n->lid_sw[lid];
	const uint64_t *w = nue_weights_of(n, lid);

	sn_assert(d < n->nsw);
	if (attempt_with(n, d, w, n->impasse_turn_cost, n->move_aside))
		return 1;
	if (!second_attempt)
		return 0;
	n->impasse_turn_cost = n->sources;
	if (attempt_with(n, d, w, n->w_init, n->move_aside)) {
		n->rep->second_attempts++;
		return 1;
	}
	if (n->move_aside || n->need_shortest)
		return 0;
	if (attempt_with(n, d, w, n->w_init, 1)) {
		n->rep->aside_attempts++;
		return 1;
	}
	return 0;
}

/* Lemma 6.4: the escape paths of the selected layer always exist. */
static void fall_back(struct nue *n, uint32_t lid)
{
	sn_assert(!n->escaped[lid] && n->lid_layer[lid] < n->k);
	nue_use_escape_paths(n, n->lid_sw[lid]);
	n->escaped[lid] = 1;
	n->rep->fallbacks++;
	n->rep->fallbacks_per_layer[n->lid_layer[lid]]++;
}

/* lid, which fell back, has routes of its own now. */
void nue_leave_escape_paths(struct nue *n, uint32_t lid)
{
	/* The counts fall_back raised. */
	sn_assert(n->escaped[lid] && n->rep->fallbacks > 0);
	sn_assert(n->lid_layer[lid] < NUE_MAX_VLS &&
		  n->rep->fallbacks_per_layer[n->lid_layer[lid]] > 0);
	n->escaped[lid] = 0;
	n->rep->fallbacks--;
	n->rep->fallbacks_per_layer[n->lid_layer[lid]]--;
}

/* Makes the routes in n->out towards lid official, weights aside: turns, self-check, tables. */
int nue_commit_routes(struct nue *n, uint32_t lid, struct fab_error *err)
{
	uint32_t d = n->lid_sw[lid], s;

	for (s = 0; s < n->wet.n; s++)
		if (n->g.turn[n->wet.turn[s]] == CDG_WET)
			n->g.turn[n->wet.turn[s]] = CDG_USED;
	if (!turns_marked(n)) {
		fab_error_set(err, "internal error: a route to LID %u takes an unmarked turn", lid);
		return -1;
	}
	if (nue_compute_depths(n, d)) {
		fab_error_set(err, "internal error: routes to LID %u loop", lid);
		return -1;
	}
	nue_write_tables(n, lid, d);
	/* As costly as routing the destination: only on request (lib/assert.h). */
	if (n->expensive_checks)
		sn_assert(cdg_is_acyclic(&n->g) != 0);
	return 0;
}

/* Makes the routes in n->out towards lid official: turns, self-check, tables and weights. */
int nue_commit_lid(struct nue *n, uint32_t lid, struct fab_error *err)
{
	uint32_t d = n->lid_sw[lid];

	if (nue_commit_routes(n, lid, err))
		return -1;
	nue_update_loads(n, lid, d, nue_weights_of(n, lid), nue_job_phase_dest(n, lid));
	return 0;
}

/*
 * Switch LIDs first try routes over turns that need no search of the dependency graph: turns
 * already used, or new ones that agree with its order.  Routes towards switches need turns
 * the terminals' routes never take (in a fat tree down and up again), each checked by a search
 * across most of the order; on the 16-ary 3-tree with one layer these searches were 96% of all
 * and took 80% of the route time (7.3 s, now 1.1 s).  Most switch LIDs find routes this way; the
 * others are routed as usual.  Only with one layer: there the switch LIDs come last and nothing
 * routed after them depends on their routes.  With more, their weights steer the next layers,
 * and the different routes moved the maximum EFI both ways (on a 4-ary 3-tree 92 to 88 with 2
 * layers, 88 to 92 with 4).
 */
static int route_switch_lid_cheaply(struct nue *n, uint32_t lid)
{
	int ok;

	n->no_search = 1;
	ok = nue_attempt(n, n->lid_sw[lid], nue_weights_of(n, lid));
	n->no_search = 0;
	if (!ok)
		nue_undo_attempt(n);
	return ok;
}

/*
 * Fewest hops from every switch to switch d.  They depend on d alone, and the LIDs of one switch
 * (its hosts') usually come one after the other: the last switch's are kept.
 */
const uint32_t *nue_hops_to(struct nue *n, uint32_t d)
{
	if (n->hop_root != d) {
		nue_bfs_levels(n, NULL, d, n->hop);
		n->hop_root = d;
	}
	return n->hop;
}

/* Whether every switch with CAs reaches d over the fewest hops in n->depth. */
int nue_shortest_from_cas(struct nue *n, uint32_t d)
{
	const uint32_t *hop = nue_hops_to(n, d);
	uint32_t s;

	for (s = 0; s < n->nsw; s++)
		if (n->has_ca[s] && n->depth[s] > hop[s])
			return 0;
	return 1;
}

/*
 * One destination of the current layer; with k > 1 a fall-back is noted for move_fallbacks().
 * 0 when routed, 1 when need_shortest gives up, -1 on an error.
 */
int nue_route_lid(struct nue *n, uint32_t lid, struct fab_error *err)
{
	int routed;

	if (nue_job_phase_dest(n, lid))
		n->rep->job_destinations++;
	if (n->k == 1 && !n->lid_exit[lid] && route_switch_lid_cheaply(n, lid))
		return nue_commit_lid(n, lid, err);
	routed = nue_try_route(n, lid, 1);
	if (!routed && n->need_shortest)
		return 1;
	if (!routed) {
		if (n->k > 1) {
			/* A LID falls back at most once in a run: fell_back[] has room for each. */
			sn_assert(n->nfell_back <= n->f->max_lid);
			n->fell_back[n->nfell_back++] = lid;
		}
		fall_back(n, lid);
	}
	if (nue_commit_lid(n, lid, err))
		return -1;
	if (n->need_shortest && n->lid_exit[lid] && !nue_shortest_from_cas(n, n->lid_sw[lid]))
		return 1;
	return 0;
}

/*
 * Whether lid takes the routes just committed for prev, the LID before it in the layer's order:
 * both a terminal's of the same switch, prev on routes of its own (not the escape paths), both
 * in the job phase or neither.  A group ends where another switch's LIDs begin.
 */
int nue_joins_group(const struct nue *n, uint32_t prev, uint32_t lid)
{
	return n->group_lids && prev && n->lid_sw[prev] == n->lid_sw[lid] && n->lid_exit[lid] &&
	       n->lid_exit[prev] && !n->escaped[prev] &&
	       nue_job_phase_dest(n, lid) == nue_job_phase_dest(n, prev);
}

/*
 * Routes lid along the routes in n->out, which the LID before it of the same switch has just
 * committed (nue_joins_group): they take no turn the layer does not hold yet, so no search,
 * and nothing here can fail.
 */
void nue_route_lid_as_previous(struct nue *n, uint32_t lid)
{
	uint32_t d = n->lid_sw[lid];
	int job = nue_job_phase_dest(n, lid);

	n->rep->job_destinations += job;
	n->wet.n = 0;
	n->rep->grouped++;
	/*
	 * The previous LID's commit checked these routes' turns and left their depths and order
	 * in place (nothing since changed n->out): only the tables and weights remain.
	 */
	sn_assert(n->out[d] == AT_DEST && n->topo[0] == d && turns_marked(n));
	nue_write_tables(n, lid, d);
	nue_update_loads(n, lid, d, nue_weights_of(n, lid), job);
}

/*
 * Rebuilds n->out, depths and n->topo from the tables' routes towards lid; -1 (an internal error,
 * said in err) if they leave a switch through no channel or loop.
 */
int nue_routes_from_tables(struct nue *n, uint32_t lid, uint32_t d, struct fab_error *err)
{
	const struct fabric *f = n->f;
	uint32_t s, c;

	sn_assert(d < n->nsw && lid < n->r->lft_len);
	for (s = 0; s < n->nsw; s++) {
		const struct fab_node *sw = &f->nodes[f->switches[s]];
		uint8_t port = routing_lft(n->r, s)[lid];

		n->out[s] = AT_DEST;
		if (s == d)
			continue;
		if (port == 0 || port > sw->nports)
			goto broken;
		c = cdg_channel_of_port(&n->g, sw->first_port + port);
		/* A channel of the switch graph, not a link to an end node or a down one. */
		if (c == FAB_NONE || n->g.tail[c] != s)
			goto broken;
		n->out[s] = c;
	}
	if (nue_compute_depths(n, d))
		goto broken;
	return 0;
broken:
	fab_error_set(err, "internal error: the routes to LID %u in the tables loop", lid);
	return -1;
}

/* Takes the loads of lid's routes (in n->out) off the weights and the score. */
void nue_remove_loads(struct nue *n, uint32_t lid, uint32_t d)
{
	if (weighs(n, lid, d)) {
		source_counts(n, lid, nue_job_phase_dest(n, lid));
		add_loads(n, nue_weights_of(n, lid), 1);
	}
	nue_tally_score(n, lid, 1);
}

/* ------------------------------------------------------------- routes another engine made */

/* Uses every turn of the routes in n->out in the selected layer; -1 when one closes a cycle. */
int nue_use_route_turns(struct nue *n)
{
	uint32_t s, in, out;

	for (s = 0; s < n->nsw; s++)
		if (nue_route_turn(n, s, &in, &out) && cdg_try_add(&n->g, in, out, CDG_USED) < 0)
			return -1;
	return 0;
}

/*
 * The columns of nue_opts.kept, before the layer's first route: the tables take them, the layer
 * their turns, the weights and the score their loads, as if Nue had routed them first.
 */
int nue_seed_kept(struct nue *n, struct fab_error *err)
{
	const struct routing *kr = n->o->kept;
	uint32_t lid, s, d;

	if (!kr)
		return 0;
	sn_assert(n->k == 1 && kr->nswitches == n->nsw && kr->lft_len == n->r->lft_len);
	for (lid = 1; lid <= n->f->max_lid; lid++) {
		d = n->lid_sw[lid];
		if (d == FAB_NONE || !n->o->kept_lid[lid])
			continue;
		for (s = 0; s < n->nsw; s++)
			routing_lft(n->r, s)[lid] = routing_lft(kr, s)[lid];
		if (nue_routes_from_tables(n, lid, d, err))
			return -1;
		if (nue_use_route_turns(n)) {
			fab_error_set(
				err,
				"internal error: the kept routes to LID %u close a cycle with "
				"the multicast tree or the routes kept before them",
				lid);
			return -1;
		}
		nue_write_tables(n, lid, d);
		nue_update_loads(n, lid, d, nue_weights_of(n, lid), nue_job_phase_dest(n, lid));
	}
	return 0;
}
