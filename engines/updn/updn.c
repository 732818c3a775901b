/*
 * updn.c - Up* / Down* routing on the fabric model (thesis section 3.3.4, with the acyclicity
 * guarantee OpenSM's own updn lacks on faulty tori).
 *
 * Direction: switches are ordered by (rank, GUID), rank being the BFS distance from the roots; a
 * hop towards a smaller key is "up".  That order is total, so up hops form a DAG and a path that
 * never turns from down to up cannot close a cycle of channel dependencies.
 *
 * Destination-based tables only know the destination, not how a packet arrived, so a switch that
 * can reach the destination switch by descending alone must always descend: a packet may have
 * reached it going down.  Every other switch climbs, on the hop that minimises the remaining
 * legal distance.  Among equally good ports the least loaded one wins (load = LIDs routed
 * through the port so far), which spreads LIDs, including the 2^LMC LIDs of one port, over
 * parallel links and neighbours.
 */
#include "engines/updn/updn.h"
#include "check/verify.h"
#include "lib/assert.h"

#include <stdlib.h>
#include <string.h>

#define INF UINT32_MAX

struct updn {
	const struct fabric *f;
	uint32_t nsw;
	uint32_t *nbr; /* neighbour switch of each CSR edge */
	uint32_t *rank;
	uint32_t *order; /* switches by ascending (rank, GUID) */
	uint32_t *pos;	 /* position of each switch in order[]: its key */
	uint32_t *dist_down, *dist_legal, *queue;
	uint32_t *load;		      /* per port index */
	uint32_t *lid_off, *lid_list; /* CSR: LIDs delivered by each switch */
	uint8_t *lid_exit;	      /* [lid]: port number the delivering switch uses */
	uint8_t *is_root;
	uint8_t *via_turn;    /* switch reaches the destination only through the turn switch */
	uint32_t *dist_turn;  /* descending hops to the turn switch, INF when none */
	uint32_t turn;	      /* see choose_turn_switch(), FAB_NONE when not needed */
	uint64_t turn_routes; /* LFT entries that use it */
};

static void updn_free(struct updn *u)
{
	free(u->nbr);
	free(u->rank);
	free(u->order);
	free(u->pos);
	free(u->dist_down);
	free(u->dist_legal);
	free(u->queue);
	free(u->load);
	free(u->lid_off);
	free(u->lid_list);
	free(u->lid_exit);
	free(u->is_root);
	free(u->via_turn);
	free(u->dist_turn);
}

static int updn_alloc(struct updn *u, const struct fabric *f)
{
	uint32_t nsw = f->nswitches, ne = f->sw_adj_off[nsw], e;

	memset(u, 0, sizeof(*u));
	u->f = f;
	u->nsw = nsw;
	u->nbr = malloc(sizeof(uint32_t) * (ne + 1));
	u->rank = malloc(sizeof(uint32_t) * nsw);
	u->order = malloc(sizeof(uint32_t) * nsw);
	u->pos = malloc(sizeof(uint32_t) * nsw);
	u->dist_down = malloc(sizeof(uint32_t) * nsw);
	u->dist_legal = malloc(sizeof(uint32_t) * nsw);
	u->queue = malloc(sizeof(uint32_t) * nsw);
	u->load = calloc(f->nports, sizeof(uint32_t));
	u->lid_off = calloc(nsw + 1, sizeof(uint32_t));
	u->lid_list = malloc(sizeof(uint32_t) * (f->max_lid + 1));
	u->lid_exit = malloc(f->max_lid + 1);
	u->is_root = calloc(nsw, 1);
	u->via_turn = calloc(nsw, 1);
	u->dist_turn = malloc(sizeof(uint32_t) * nsw);
	u->turn = FAB_NONE;
	if (!u->nbr || !u->rank || !u->order || !u->pos || !u->dist_down || !u->dist_legal ||
	    !u->queue || !u->load || !u->lid_off || !u->lid_list || !u->lid_exit || !u->is_root ||
	    !u->via_turn || !u->dist_turn)
		return -1;
	for (e = 0; e < ne; e++) {
		uint32_t r = f->ports[f->sw_adj_port[e]].remote;

		u->nbr[e] = f->nodes[f->ports[r].node].sw;
		sn_assert(u->nbr[e] < nsw);
	}
	return 0;
}

/* Multi-source BFS over switch links; sources have dist[s] == 0 on entry, others INF. */
static void bfs(const struct updn *u, uint32_t *dist)
{
	const struct fabric *f = u->f;
	uint32_t head = 0, tail = 0, s, e;

	for (s = 0; s < u->nsw; s++)
		if (dist[s] == 0)
			u->queue[tail++] = s;
	while (head < tail) {
		s = u->queue[head++];
		for (e = f->sw_adj_off[s]; e < f->sw_adj_off[s + 1]; e++) {
			uint32_t v = u->nbr[e];

			if (dist[v] == INF) {
				/* Each switch enters the queue once. */
				sn_assert(tail < u->nsw);
				dist[v] = dist[s] + 1;
				u->queue[tail++] = v;
			}
		}
	}
}

static int index_lids(struct updn *u, struct fab_error *err)
{
	const struct fabric *f = u->f;
	uint32_t lid, s;
	uint32_t *fill;

	for (lid = 1; lid <= f->max_lid; lid++) {
		uint32_t p = f->lid_port[lid];

		if (p == FAB_NONE)
			continue;
		s = fabric_lid_switch(f, lid, &u->lid_exit[lid]);
		if (s == FAB_NONE) {
			fab_error_set(
				err, "%s port %u (LID %u) has a LID but no active link to a switch",
				fabric_node_id(f, f->ports[p].node), f->ports[p].num, lid);
			return -1;
		}
		sn_assert(s < u->nsw);
		u->lid_off[s + 1]++;
	}
	for (s = 0; s < u->nsw; s++)
		u->lid_off[s + 1] += u->lid_off[s];
	fill = malloc(sizeof(uint32_t) * (u->nsw + 1));
	if (!fill) {
		fab_error_set(err, "out of memory");
		return -1;
	}
	memcpy(fill, u->lid_off, sizeof(uint32_t) * (u->nsw + 1));
	for (lid = 1; lid <= f->max_lid; lid++) {
		uint8_t exit_port;

		if (f->lid_port[lid] == FAB_NONE)
			continue;
		s = fabric_lid_switch(f, lid, &exit_port);
		/* The second pass finds the LIDs the first counted, switch for switch. */
		sn_assert(s < u->nsw && fill[s] < u->lid_off[s + 1]);
		u->lid_list[fill[s]++] = lid;
	}
	free(fill);
	return 0;
}

static int has_end_nodes(const struct fabric *f, uint32_t s)
{
	const struct fab_node *n = &f->nodes[f->switches[s]];
	unsigned k;

	for (k = 1; k <= n->nports; k++) {
		uint32_t p = n->first_port + k;

		if (fabric_channel_up(f, p) &&
		    !fabric_is_switch(f, f->ports[f->ports[p].remote].node))
			return 1;
	}
	return 0;
}

/* Most central switch: smallest eccentricity, then smallest total distance, then lowest GUID. */
static uint32_t most_central(struct updn *u)
{
	uint32_t best = 0, s, t;
	uint64_t best_ecc = UINT64_MAX, best_sum = UINT64_MAX;

	for (s = 0; s < u->nsw; s++) {
		uint64_t ecc = 0, sum = 0;

		for (t = 0; t < u->nsw; t++)
			u->dist_down[t] = INF;
		u->dist_down[s] = 0;
		bfs(u, u->dist_down);
		for (t = 0; t < u->nsw; t++) {
			if (u->dist_down[t] > ecc)
				ecc = u->dist_down[t];
			sum += u->dist_down[t];
		}
		if (ecc < best_ecc || (ecc == best_ecc && sum < best_sum)) {
			best = s;
			best_ecc = ecc;
			best_sum = sum;
		}
	}
	return best;
}

/*
 * Automatic roots: the switches farthest from any switch with end nodes (the top level of a fat
 * tree, however tapered); when every switch has end nodes (tori, dragonflies, random graphs) or
 * none has, the single most central switch.
 */
static const char *choose_auto_roots(struct updn *u)
{
	uint32_t s, top = 0;

	for (s = 0; s < u->nsw; s++)
		u->dist_legal[s] = has_end_nodes(u->f, s) ? 0 : INF;
	bfs(u, u->dist_legal);
	for (s = 0; s < u->nsw; s++)
		if (u->dist_legal[s] != INF && u->dist_legal[s] > top)
			top = u->dist_legal[s];
	if (top > 0) {
		for (s = 0; s < u->nsw; s++)
			u->is_root[s] = u->dist_legal[s] == top;
		return "top level of the tree";
	}
	u->is_root[most_central(u)] = 1;
	return "most central switch";
}

static int set_roots_from_option(struct updn *u, const struct updn_opts *o, struct fab_error *err)
{
	unsigned i;

	for (i = 0; i < o->nroots; i++) {
		uint32_t n = fabric_find_node_by_guid(u->f, o->root_guids[i]);

		if (n == FAB_NONE || !fabric_is_switch(u->f, n)) {
			fab_error_set(err, "updn_roots: 0x%016llx is not a switch of this fabric",
				      (unsigned long long)o->root_guids[i]);
			return -1;
		}
		u->is_root[u->f->nodes[n].sw] = 1;
	}
	return 0;
}

static int cmp_key(const void *a, const void *b, void *ctx)
{
	const uint32_t *rank = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (rank[x] != rank[y])
		return rank[x] < rank[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

static void rank_switches(struct updn *u)
{
	uint32_t s;

	for (s = 0; s < u->nsw; s++) {
		u->rank[s] = u->is_root[s] ? 0 : INF;
		u->order[s] = s;
	}
	bfs(u, u->rank);
	qsort_r(u->order, u->nsw, sizeof(uint32_t), cmp_key, u->rank);
	for (s = 0; s < u->nsw; s++) {
		/* (rank, switch) is a total order: up hops form a DAG. */
		sn_assert(!s || cmp_key(&u->order[s - 1], &u->order[s], u->rank) < 0);
		u->pos[u->order[s]] = s;
	}
}

static inline int is_up(const struct updn *u, uint32_t from, uint32_t to)
{
	return u->pos[to] < u->pos[from];
}

/* dist_down[s]: hops from s to d descending only; dist_legal[s]: hops of the route s takes. */
static int distances_to(struct updn *u, uint32_t d)
{
	const struct fabric *f = u->f;
	uint32_t head = 0, tail = 0, s, e, i;

	for (s = 0; s < u->nsw; s++)
		u->dist_down[s] = INF;
	u->dist_down[d] = 0;
	u->queue[tail++] = d;
	while (head < tail) {
		uint32_t v = u->queue[head++];

		for (e = f->sw_adj_off[v]; e < f->sw_adj_off[v + 1]; e++) {
			uint32_t w = u->nbr[e];

			/* w -> v must be a down hop, i.e. v -> w is up. */
			if (u->dist_down[w] == INF && is_up(u, v, w)) {
				sn_assert(tail < u->nsw);
				u->dist_down[w] = u->dist_down[v] + 1;
				u->queue[tail++] = w;
			}
		}
	}
	for (i = 0; i < u->nsw; i++) {
		s = u->order[i];
		u->via_turn[s] = 0;
		u->dist_legal[s] = u->dist_down[s];
		if (u->dist_legal[s] != INF)
			continue;
		for (e = f->sw_adj_off[s]; e < f->sw_adj_off[s + 1]; e++) {
			uint32_t v = u->nbr[e];

			if (is_up(u, s, v) && u->dist_legal[v] != INF &&
			    u->dist_legal[v] + 1 < u->dist_legal[s])
				u->dist_legal[s] = u->dist_legal[v] + 1;
		}
		/* A legal route meets each switch once: fewer hops than switches. */
		sn_assert(u->dist_legal[s] == INF || u->dist_legal[s] < u->nsw);
	}
	return 0;
}

/*
 * With several roots that are not linked to each other, a root has no legal route to another
 * root's own LID: every path between them turns from down to up somewhere.  Those routes (switch
 * LIDs only: end ports always hang below some switch with a legal route) descend to one turn
 * switch and follow its legal route from there.  Allowing that turn at a single switch cannot
 * close a cycle in two-level trees; the verifier confirms it for any fabric, and a failure
 * sends updn_route() to the single-root fall-back.
 */
static int add_turn_routes(struct updn *u, uint32_t d)
{
	uint32_t s;

	for (s = 0; s < u->nsw; s++) {
		if (u->dist_legal[s] != INF)
			continue;
		if (u->turn == FAB_NONE || u->dist_turn[s] == INF ||
		    u->dist_legal[u->turn] == INF || d == u->turn)
			return -1;
		u->via_turn[s] = 1;
	}
	return 0;
}

/* Descending hops from every switch to t. */
static void down_distances(struct updn *u, uint32_t t, uint32_t *dist)
{
	const struct fabric *f = u->f;
	uint32_t head = 0, tail = 0, s, e;

	for (s = 0; s < u->nsw; s++)
		dist[s] = INF;
	dist[t] = 0;
	u->queue[tail++] = t;
	while (head < tail) {
		uint32_t v = u->queue[head++];

		for (e = f->sw_adj_off[v]; e < f->sw_adj_off[v + 1]; e++) {
			uint32_t w = u->nbr[e];

			if (dist[w] == INF && is_up(u, v, w)) {
				sn_assert(tail < u->nsw);
				dist[w] = dist[v] + 1;
				u->queue[tail++] = w;
			}
		}
	}
}

/* The switch every root reaches descending with the fewest hops (worst root), lowest GUID. */
static void choose_turn_switch(struct updn *u)
{
	uint32_t t, r, best_worst = INF, nroots = 0;

	u->turn = FAB_NONE;
	for (r = 0; r < u->nsw; r++)
		nroots += u->is_root[r];
	if (nroots < 2)
		return;
	for (t = 0; t < u->nsw; t++) {
		uint32_t worst = 0;

		if (u->is_root[t])
			continue;
		down_distances(u, t, u->dist_turn);
		for (r = 0; r < u->nsw && worst != INF; r++)
			if (u->is_root[r] && u->dist_turn[r] > worst)
				worst = u->dist_turn[r];
		if (worst < best_worst) {
			best_worst = worst;
			u->turn = t;
		}
	}
	if (u->turn != FAB_NONE) {
		sn_assert(u->turn < u->nsw && !u->is_root[u->turn]);
		down_distances(u, u->turn, u->dist_turn);
	}
}

/* Least loaded port of s that continues the legal route towards the current destination. */
static uint32_t pick_port(const struct updn *u, uint32_t s)
{
	const struct fabric *f = u->f;
	int descend = u->dist_down[s] != INF;
	uint32_t want = u->dist_legal[s] - 1, best = FAB_NONE, e;

	/* Only switches other than the destination's pick, and each has a route. */
	sn_assert(u->via_turn[s] ? u->dist_turn[s] != INF && u->dist_turn[s] > 0
				 : u->dist_legal[s] != INF && u->dist_legal[s] > 0);
	for (e = f->sw_adj_off[s]; e < f->sw_adj_off[s + 1]; e++) {
		uint32_t v = u->nbr[e], p = f->sw_adj_port[e];
		int ok;

		if (u->via_turn[s])
			ok = !is_up(u, s, v) && u->dist_turn[v] == u->dist_turn[s] - 1;
		else if (descend)
			ok = !is_up(u, s, v) && u->dist_down[v] == want;
		else
			ok = is_up(u, s, v) && u->dist_legal[v] == want;

		if (ok && (best == FAB_NONE || u->load[p] < u->load[best]))
			best = p;
	}
	return best;
}

static int route_lid(struct updn *u, struct routing *r, uint32_t d, uint32_t lid)
{
	const struct fabric *f = u->f;
	int to_ca = !fabric_is_switch(f, f->ports[f->lid_port[lid]].node);
	uint32_t s;

	sn_assert(lid >= 1 && lid < r->lft_len && d < u->nsw && r->nswitches == u->nsw);
	for (s = 0; s < u->nsw; s++) {
		uint32_t p;

		if (s == d) {
			/* The exit leads to the LID's port, or is 0 for the switch itself. */
			sn_assert(u->lid_exit[lid] <= f->nodes[f->switches[s]].nports &&
				  (u->lid_exit[lid] != 0) == to_ca);
			routing_lft(r, s)[lid] = u->lid_exit[lid];
			routing_hops(r, s)[lid] = (uint8_t)to_ca;
			continue;
		}
		p = pick_port(u, s);
		if (p == FAB_NONE)
			return -1;
		u->load[p]++;
		/* The routing's port bound, not the switch's: this loop runs per switch and LID. */
		sn_assert(f->ports[p].num >= 1 && f->ports[p].num <= r->max_port);
		routing_lft(r, s)[lid] = f->ports[p].num;
		if (u->via_turn[s]) {
			routing_hops(r, s)[lid] =
				(uint8_t)(u->dist_turn[s] + u->dist_legal[u->turn] + to_ca);
			u->turn_routes++;
		} else {
			routing_hops(r, s)[lid] = (uint8_t)(u->dist_legal[s] + to_ca);
		}
	}
	return 0;
}

static int route_all(struct updn *u, struct routing *r, struct fab_error *err)
{
	uint32_t d, i;

	memset(u->load, 0, sizeof(uint32_t) * u->f->nports);
	memset(r->lft, FAB_NO_PORT, (size_t)r->nswitches * r->lft_len);
	u->turn_routes = 0;
	choose_turn_switch(u);
	for (d = 0; d < u->nsw; d++) {
		if (u->lid_off[d] == u->lid_off[d + 1])
			continue;
		if (distances_to(u, d) || add_turn_routes(u, d)) {
			fab_error_set(err, "no up*/down* route to switch 0x%016llx",
				      (unsigned long long)u->f->nodes[u->f->switches[d]].guid);
			return -1;
		}
		for (i = u->lid_off[d]; i < u->lid_off[d + 1]; i++) {
			if (route_lid(u, r, d, u->lid_list[i])) {
				fab_error_set(err, "no port continues the route to LID %u",
					      u->lid_list[i]);
				return -1;
			}
		}
	}
	return 0;
}

/* Turn routes are only kept when the whole routing verifies deadlock-free. */
static int turn_routes_verified(const struct updn *u, const struct routing *r)
{
	struct verify_report v;

	if (!u->turn_routes)
		return 1;
	return !verify_routing(u->f, r, &v) && verify_ok(&v);
}

static unsigned count_roots(const struct updn *u)
{
	unsigned n = 0;
	uint32_t s;

	for (s = 0; s < u->nsw; s++)
		n += u->is_root[s];
	return n;
}

static void fill_report(const struct updn *u, struct updn_report *rep, const char *source)
{
	uint32_t s;

	memset(rep, 0, sizeof(*rep));
	rep->root_source = source;
	for (s = 0; s < u->nsw; s++) {
		if (u->rank[s] != INF && u->rank[s] > rep->max_rank)
			rep->max_rank = u->rank[s];
		if (!u->is_root[s])
			continue;
		if (rep->nroots < UPDN_MAX_ROOTS)
			rep->root_guids[rep->nroots] = u->f->nodes[u->f->switches[s]].guid;
		rep->nroots++;
	}
	rep->lids_routed = u->lid_off[u->nsw];
	sn_assert(rep->lids_routed <= u->f->max_lid && rep->nroots >= 1);
	rep->turn_routes = u->turn_routes;
}

int updn_route(const struct fabric *f, const struct updn_opts *opts, struct routing *r,
	       struct updn_report *rep, struct fab_error *err)
{
	struct fab_error first;
	const char *source;
	unsigned fell_back_from = 0;
	char why[200] = "";
	struct updn u;
	int ret = -1;

	if (fabric_check_routable(f, err))
		return -1;
	if (updn_alloc(&u, f)) {
		fab_error_set(err, "out of memory");
		goto out;
	}
	if (index_lids(&u, err))
		goto out;
	if (opts && opts->nroots) {
		if (set_roots_from_option(&u, opts, err))
			goto out;
		source = "option";
	} else {
		source = choose_auto_roots(&u);
	}
	rank_switches(&u);
	first.msg[0] = '\0';
	if (route_all(&u, r, &first) || !turn_routes_verified(&u, r)) {
		/*
		 * Several roots that are not linked to each other may leave a root with neither a
		 * descending path nor a way up.  One root always works: every other switch has
		 * its BFS parent above it, and the root reaches everything by descending.
		 */
		fell_back_from = count_roots(&u);
		snprintf(why, sizeof(why), "%.199s",
			 first.msg[0] ? first.msg
				      : "the turn routes between roots close a credit loop");
		memset(u.is_root, 0, u.nsw);
		u.is_root[most_central(&u)] = 1;
		source = "most central switch (the chosen roots left a switch without a route)";
		rank_switches(&u);
		if (route_all(&u, r, err))
			goto out;
	}
	fill_report(&u, rep, source);
	rep->fell_back_from = fell_back_from;
	snprintf(rep->fall_back_why, sizeof(rep->fall_back_why), "%s", why);
	r->sl_mode = ROUTING_SL_UNIFORM;
	r->sl_uniform = 0;
	memset(r->sl2vl_uniform, 0, sizeof(r->sl2vl_uniform));
	r->vls_used = 1;
	ret = 0;
out:
	updn_free(&u);
	return ret;
}
