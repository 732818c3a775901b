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
 * legal distance.  Among equally good ports the least loaded one wins: load = routes between
 * end ports through the port so far (each switch passes on the end ports whose route crosses
 * it, so this is the edge forwarding index), then LFT entries, which spreads LIDs, including the
 * 2^LMC LIDs of one port, over parallel links and neighbours.  Counting routes first keeps a
 * fat tree's levels from repeating each other's choices (the entries of every up port rise
 * alike, so a middle switch would send all LIDs one leaf sends its way to the same top); with a
 * single root, entries come first (see less_loaded()).
 */
#include "engines/updn/updn.h"
#include "check/metrics.h"
#include "check/verify.h"
#include "fabric/dmodkform.h"
#include "fabric/fattree.h"
#include "fabric/swgraph.h"
#include "lib/assert.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define INF UINT32_MAX

struct updn {
	const struct fabric *f;
	uint32_t nsw;
	uint32_t *nbr; /* neighbour switch of each CSR edge */
	uint32_t *rank;
	uint32_t *order; /* switches by ascending (rank, GUID) */
	uint32_t *pos;	 /* position of each switch in order[]: its key */
	uint32_t *dist_down, *dist_legal, *queue;
	uint64_t *routes;    /* per port index: terminal-to-terminal routes through it */
	uint32_t *entries;   /* per port index: LFT entries that use it */
	uint32_t *terminals; /* per switch: end ports attached */
	uint32_t *flow;	     /* per switch: terminals whose route to the LID crosses it */
	uint32_t *by_dist;   /* switches by descending dist_route */
	int routes_first;    /* see less_loaded() */
	const struct progress_hook *progress;
	uint32_t dest;		      /* switch of the LID being routed */
	uint32_t stamp;		      /* of the LID being routed, for onward[] */
	uint32_t *onward_stamp;	      /* per switch: stamp onward[] was computed for */
	uint64_t *onward;	      /* per switch: see onward() */
	uint32_t *bucket;	      /* 2 * nsw + 1 counters for sorting by dist_route */
	uint32_t *lid_off, *lid_list; /* CSR: LIDs delivered by each switch */
	uint8_t *lid_exit;	      /* [lid]: port number the delivering switch uses */
	uint8_t *is_root;
	uint8_t *via_turn;    /* switch reaches the destination only through the turn switch */
	uint32_t *dist_route; /* hops of the route each switch takes to the destination */
	uint32_t *turn_down;  /* dist_down towards the turn switch */
	uint32_t *turn_legal; /* dist_legal towards the turn switch */
	uint32_t *turn_order; /* switches by ascending turn_legal */
	uint32_t turn;	      /* see choose_turn_switch(), FAB_NONE when not needed */
	uint64_t turn_routes; /* LFT entries that use it */
	/* A recognised fat tree with its top level as roots: ports as D-mod-k (tree_edge()). */
	int tree_mode;
	struct fat_tree tree;
	struct dmodk_form form;
	uint32_t lid;	/* the LID being routed */
	uint32_t *cand; /* scratch: ports of one switch that continue the route */
	/* CSR per destination switch: each switch's edges that continue its route (continues()) */
	uint32_t *next_off, *next_edge;
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
	free(u->routes);
	free(u->entries);
	free(u->terminals);
	free(u->flow);
	free(u->by_dist);
	free(u->bucket);
	free(u->onward_stamp);
	free(u->onward);
	free(u->lid_off);
	free(u->lid_list);
	free(u->lid_exit);
	free(u->is_root);
	free(u->via_turn);
	free(u->dist_route);
	free(u->turn_down);
	free(u->turn_legal);
	free(u->turn_order);
	free(u->cand);
	free(u->next_off);
	free(u->next_edge);
	if (u->tree_mode)
		dmodk_form_free(&u->form);
	fat_tree_free(&u->tree);
}

static int updn_alloc(struct updn *u, const struct fabric *f)
{
	uint32_t nsw = f->nswitches, ne = f->sw_adj_off[nsw];

	memset(u, 0, sizeof(*u));
	u->f = f;
	u->nsw = nsw;
	u->nbr = swgraph_neighbours(f);
	u->rank = malloc(sizeof(uint32_t) * nsw);
	u->order = malloc(sizeof(uint32_t) * nsw);
	u->pos = malloc(sizeof(uint32_t) * nsw);
	u->dist_down = malloc(sizeof(uint32_t) * nsw);
	u->dist_legal = malloc(sizeof(uint32_t) * nsw);
	u->queue = malloc(sizeof(uint32_t) * nsw);
	u->routes = calloc(f->nports, sizeof(uint64_t));
	u->entries = calloc(f->nports, sizeof(uint32_t));
	u->terminals = calloc(nsw, sizeof(uint32_t));
	u->flow = malloc(sizeof(uint32_t) * nsw);
	u->by_dist = malloc(sizeof(uint32_t) * nsw);
	u->onward_stamp = calloc(nsw, sizeof(uint32_t));
	u->onward = malloc(sizeof(uint64_t) * nsw);
	u->bucket = malloc(sizeof(uint32_t) * (2 * (size_t)nsw + 1));
	u->lid_off = calloc(nsw + 1, sizeof(uint32_t));
	u->lid_list = malloc(sizeof(uint32_t) * (f->max_lid + 1));
	u->lid_exit = malloc(f->max_lid + 1);
	u->is_root = calloc(nsw, 1);
	u->via_turn = calloc(nsw, 1);
	u->dist_route = malloc(sizeof(uint32_t) * nsw);
	u->turn_down = malloc(sizeof(uint32_t) * nsw);
	u->turn_legal = malloc(sizeof(uint32_t) * nsw);
	u->turn_order = malloc(sizeof(uint32_t) * nsw);
	u->turn = FAB_NONE;
	u->cand = malloc(sizeof(uint32_t) * (ne + 1));
	u->next_off = malloc(sizeof(uint32_t) * (nsw + 1));
	u->next_edge = malloc(sizeof(uint32_t) * (ne + 1));
	fat_tree_init(&u->tree);
	if (!u->cand || !u->next_off || !u->next_edge || !u->nbr || !u->rank || !u->order ||
	    !u->pos || !u->dist_down || !u->dist_legal || !u->queue || !u->routes || !u->entries ||
	    !u->terminals || !u->flow || !u->by_dist || !u->bucket || !u->onward_stamp ||
	    !u->onward || !u->lid_off || !u->lid_list || !u->lid_exit || !u->is_root ||
	    !u->via_turn || !u->dist_route || !u->turn_down || !u->turn_legal || !u->turn_order)
		return -1;
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
		/* Each end port counts once, at its base LID. */
		if (!fabric_is_switch(f, f->ports[p].node) && f->ports[p].base_lid == lid)
			u->terminals[s]++;
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

/*
 * Automatic roots: the switches farthest from any switch with end nodes (the top level of a fat
 * tree, however tapered); when every switch has end nodes (tori, dragonflies, random graphs) or
 * none has, the single most central switch.
 */
static const char *choose_auto_roots(struct updn *u)
{
	uint32_t s, top = 0;

	for (s = 0; s < u->nsw; s++)
		u->dist_legal[s] = fabric_switch_has_end_ports(u->f, s) ? 0 : INF;
	bfs(u, u->dist_legal);
	for (s = 0; s < u->nsw; s++)
		if (u->dist_legal[s] != INF && u->dist_legal[s] > top)
			top = u->dist_legal[s];
	if (top > 0) {
		for (s = 0; s < u->nsw; s++)
			u->is_root[s] = u->dist_legal[s] == top;
		return "top level of the tree";
	}
	s = swgraph_central_switch(u->f, NULL, 0);
	if (s == FAB_NONE)
		return NULL;
	u->is_root[s] = 1;
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

static unsigned count_roots(const struct updn *u)
{
	unsigned n = 0;
	uint32_t s;

	for (s = 0; s < u->nsw; s++)
		n += u->is_root[s];
	return n;
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
 * The turn switch.  With several roots, some switch LIDs have no legal route from some switches:
 * a root to another root, or in a tree of three levels or more a top switch to a middle switch
 * it is not linked to, or a middle switch to one of another pod.  Every path between them turns
 * from down to up somewhere.  Those routes (switch LIDs only: end ports hang below a switch that
 * every switch reaches legally) follow the legal route towards one turn switch t, climbing
 * first if they must, and from t follow t's legal route to the destination.
 *
 * t is a switch with end nodes at the deepest level (a leaf of a tree) that reaches every switch
 * legally; legality is symmetric (a reversed up hop is a down hop), so every switch reaches t
 * too.  Tables know only the destination, so a switch on the way to t that has a legal route of
 * its own takes it: a top switch heading for t through a middle switch that is linked to the
 * destination top switch turns up there.  Those turns are kept on few switches: on the way to
 * t the lowest-numbered next switch wins, not the least loaded one (these routes carry no
 * traffic between end ports, which is what the loads balance).
 *
 * On a complete tree that cannot close a cycle: the down-to-up turns happen at t and on t's
 * way up, and a chain of dependencies leaving them upwards could only come back down to them on
 * a path that climbs out of t's pod to a top switch and descends into the same pod again, which
 * neither the minimal routes between end ports nor these routes do.  The verifier confirms it
 * for any fabric (turn_routes_verified()), and a failure sends updn_route() to the single-root
 * fall-back.
 */

/* v continues the legal route of s towards the turn switch. */
static int turn_next(const struct updn *u, uint32_t s, uint32_t v)
{
	if (u->turn_down[s] != INF)
		return !is_up(u, s, v) && u->turn_down[v] + 1 == u->turn_down[s];
	return is_up(u, s, v) && u->turn_legal[v] + 1 == u->turn_legal[s];
}

/* Marks the switches that route to d through the turn switch and sets every dist_route. */
static int add_turn_routes(struct updn *u, uint32_t d)
{
	const struct fabric *f = u->f;
	uint32_t s, i, e, need = 0;

	for (s = 0; s < u->nsw; s++) {
		u->via_turn[s] = u->dist_legal[s] == INF;
		u->dist_route[s] = u->dist_legal[s];
		need += u->via_turn[s];
	}
	if (!need)
		return 0;
	if (u->turn == FAB_NONE || d == u->turn || u->dist_legal[u->turn] == INF)
		return -1;
	/* Ascending distance to t: the next hops of a switch are settled before it. */
	for (i = 0; i < u->nsw; i++) {
		s = u->turn_order[i];
		if (!u->via_turn[s])
			continue;
		for (e = f->sw_adj_off[s]; e < f->sw_adj_off[s + 1]; e++) {
			uint32_t v = u->nbr[e];

			if (turn_next(u, s, v) && u->dist_route[v] != INF &&
			    u->dist_route[v] + 1 < u->dist_route[s])
				u->dist_route[s] = u->dist_route[v] + 1;
		}
		if (u->dist_route[s] == INF)
			return -1;
	}
	return 0;
}

/* t reaches every switch by a legal route (and so every switch reaches t). */
static int reaches_all(struct updn *u, uint32_t t)
{
	uint32_t s;

	distances_to(u, t);
	for (s = 0; s < u->nsw; s++)
		if (u->dist_legal[s] == INF)
			return 0;
	return 1;
}

/* Keeps the distances towards t, and the switches in ascending order of them. */
static void keep_turn_distances(struct updn *u, uint32_t t)
{
	uint32_t s, k, n = 0;

	distances_to(u, t);
	memcpy(u->turn_down, u->dist_down, sizeof(uint32_t) * u->nsw);
	memcpy(u->turn_legal, u->dist_legal, sizeof(uint32_t) * u->nsw);
	/* Counting sort; dist_route is free until the first destination. */
	memset(u->dist_route, 0, sizeof(uint32_t) * u->nsw);
	for (s = 0; s < u->nsw; s++) {
		/* A legal route has fewer hops than there are switches. */
		sn_assert(u->turn_legal[s] < u->nsw);
		u->dist_route[u->turn_legal[s]]++;
	}
	for (k = 0; k < u->nsw; k++) {
		uint32_t c = u->dist_route[k];

		u->dist_route[k] = n;
		n += c;
	}
	for (s = 0; s < u->nsw; s++)
		u->turn_order[u->dist_route[u->turn_legal[s]]++] = s;
}

/* The first switch with end nodes, deepest level first, that reaches every switch legally. */
static void choose_turn_switch(struct updn *u)
{
	uint32_t t, r, deepest = 0;

	u->turn = FAB_NONE;
	if (count_roots(u) < 2)
		return;
	for (t = 0; t < u->nsw; t++)
		if (u->rank[t] != INF && u->rank[t] > deepest)
			deepest = u->rank[t];
	for (r = deepest + 1; r-- > 0 && u->turn == FAB_NONE;)
		for (t = 0; t < u->nsw && u->turn == FAB_NONE; t++)
			if (u->rank[t] == r && fabric_switch_has_end_ports(u->f, t) &&
			    reaches_all(u, t))
				u->turn = t;
	if (u->turn != FAB_NONE)
		keep_turn_distances(u, u->turn);
}

/*
 * Port p is less loaded than port q: fewer routes, then fewer LFT entries with several roots (a
 * tree); fewer entries alone with one root, which measured better on tori and random graphs
 * (routes first raised a faulty 6x6x6 torus's maximum EFI by a quarter).
 */
static int less_loaded(const struct updn *u, uint32_t p, uint32_t q)
{
	if (u->routes_first && u->routes[p] != u->routes[q])
		return u->routes[p] < u->routes[q];
	return u->entries[p] < u->entries[q];
}

/* v is a next switch on the route of s to the current destination. */
static int continues(const struct updn *u, uint32_t s, uint32_t v)
{
	uint32_t want = u->dist_route[s] - 1;

	if (u->via_turn[s])
		return turn_next(u, s, v) && u->dist_route[v] == want;
	if (u->dist_down[s] != INF)
		return !is_up(u, s, v) && u->dist_down[v] == want;
	return is_up(u, s, v) && u->dist_legal[v] == want;
}

/* Routes on the least loaded port v may go on through (cached per LID); 0 at the destination. */
static uint64_t onward(struct updn *u, uint32_t v)
{
	const struct fabric *f = u->f;
	uint64_t best = UINT64_MAX;
	uint32_t e, i;

	if (v == u->dest)
		return 0;
	if (u->onward_stamp[v] == u->stamp)
		return u->onward[v];
	for (i = u->next_off[v]; i < u->next_off[v + 1]; i++) {
		e = u->next_edge[i];
		if (u->routes[f->sw_adj_port[e]] < best)
			best = u->routes[f->sw_adj_port[e]];
	}
	u->onward_stamp[v] = u->stamp;
	u->onward[v] = best == UINT64_MAX ? 0 : best;
	return u->onward[v];
}

/*
 * The load the routes through s would meet on edge e: its own port's, or the next switch's
 * least loaded port's once they join the routes already there, whichever is higher.  Switches
 * that descend look one hop ahead so that the top switches above an island or pod, each
 * choosing on its own, do not all send one leaf's LIDs down the same link (on islands of
 * two-level trees this lowered the maximum EFI by a third; climbing switches looking ahead
 * made regular trees worse).
 */
static uint64_t hop_cost(struct updn *u, uint32_t s, uint32_t e)
{
	uint32_t v = u->nbr[e];
	uint64_t here = u->routes[u->f->sw_adj_port[e]] + u->flow[s];
	uint64_t next = onward(u, v) + u->flow[v] + u->flow[s];

	return v == u->dest || here > next ? here : next;
}

/* Edge e is a better choice for s than edge best. */
static int better_edge(struct updn *u, uint32_t s, uint32_t e, uint32_t best)
{
	uint32_t p = u->f->sw_adj_port[e], q = u->f->sw_adj_port[best];
	uint32_t v = u->nbr[e], w = u->nbr[best];

	/* Routes to the turn switch: the lowest-numbered next switch, see add_turn_routes(). */
	if (u->via_turn[s] && v != w)
		return v < w;
	if (u->routes_first && u->dist_down[s] != INF) {
		uint64_t ce = hop_cost(u, s, e), cb = hop_cost(u, s, best);

		if (ce != cb)
			return ce < cb;
	}
	return less_loaded(u, p, q);
}

/*
 * On a fat tree with the top level as roots every Up*\/Down* route of a CA LID is one D-mod-k
 * may take, so the engine takes D-mod-k's: the closed-form up port when climbing, D-mod-k's
 * child and parallel link when descending (sar-dmodk's very choice, dmodkform.h), which balance
 * every shift permutation in topology order and meet the cut bound of the maximum EFI.  The edge,
 * or FAB_NONE when that port does not continue the route here (a failed link): then the least
 * loaded one.
 */
static uint32_t tree_edge(struct updn *u, uint32_t s)
{
	const struct fabric *f = u->f;
	uint32_t j = u->form.lid_index[u->lid], e, i, n = 0, p;
	unsigned o = u->form.lid_offset[u->lid], l = u->tree.level[s];
	int moved;

	if (u->dist_down[s] == INF) {
		if (l >= u->tree.levels)
			return FAB_NONE;
		p = dmodk_form_slot(&u->form, s, dmodk_form_closed(&u->form, l, j, o));
	} else {
		if (l < 2)
			return FAB_NONE;
		for (i = u->next_off[s]; i < u->next_off[s + 1]; i++)
			u->cand[n++] = f->sw_adj_port[u->next_edge[i]];
		p = dmodk_form_down(&u->form, s, u->cand, n, j, o, &moved);
	}
	if (p == FAB_NONE)
		return FAB_NONE;
	for (e = f->sw_adj_off[s]; e < f->sw_adj_off[s + 1]; e++)
		if (f->sw_adj_port[e] == p)
			return continues(u, s, u->nbr[e]) ? e : FAB_NONE;
	return FAB_NONE;
}

/* Least loaded link (CSR edge) of s that continues its route towards the current destination. */
static uint32_t pick_edge(struct updn *u, uint32_t s)
{
	uint32_t best = FAB_NONE, e, i;

	/* Only switches other than the destination's pick, and each has a route. */
	sn_assert(u->dist_route[s] != INF && u->dist_route[s] > 0);
	if (u->tree_mode && !u->via_turn[s]) {
		best = tree_edge(u, s);
		if (best != FAB_NONE)
			return best;
	}
	for (i = u->next_off[s]; i < u->next_off[s + 1]; i++) {
		e = u->next_edge[i];
		if (best == FAB_NONE || better_edge(u, s, e, best))
			best = e;
	}
	return best;
}

/*
 * The edges that continue each switch's route towards destination switch d, in CSR order.  They
 * depend on d alone, and a switch delivers several LIDs (its hosts' and its own): found once per
 * switch instead of once per LID, as every LID's switches each pick among them.
 */
static void index_next_edges(struct updn *u, uint32_t d)
{
	const struct fabric *f = u->f;
	uint32_t s, e, n = 0;

	for (s = 0; s < u->nsw; s++) {
		u->next_off[s] = n;
		if (s == d)
			continue;
		for (e = f->sw_adj_off[s]; e < f->sw_adj_off[s + 1]; e++)
			if (continues(u, s, u->nbr[e]))
				u->next_edge[n++] = e;
	}
	u->next_off[u->nsw] = n;
}

/*
 * Switches by descending dist_route (counting sort): a switch comes after every switch whose
 * route to the destination crosses it.
 */
static void sort_by_distance(struct updn *u)
{
	uint32_t s, k, n = 0, nb = 2 * u->nsw + 1;

	memset(u->bucket, 0, sizeof(uint32_t) * nb);
	for (s = 0; s < u->nsw; s++) {
		/* A route climbs to the turn switch and on: fewer hops than twice the switches. */
		sn_assert(u->dist_route[s] < nb);
		u->bucket[u->dist_route[s]]++;
	}
	for (k = nb; k-- > 0;) {
		uint32_t c = u->bucket[k];

		u->bucket[k] = n;
		n += c;
	}
	for (s = 0; s < u->nsw; s++)
		u->by_dist[u->bucket[u->dist_route[s]]++] = s;
}

/*
 * The LFT entries of every switch for one LID of switch d.  Switches are taken farthest first,
 * each passing on the terminals whose route crosses it (flow), so a port's load is the number
 * of terminal-to-terminal routes it carries: the edge forwarding index the metrics measure.
 */
static int route_lid(struct updn *u, struct routing *r, uint32_t d, uint32_t lid)
{
	const struct fabric *f = u->f;
	int to_ca = !fabric_is_switch(f, f->ports[f->lid_port[lid]].node);
	uint32_t i, s;

	sn_assert(lid >= 1 && lid < r->lft_len && d < u->nsw && r->nswitches == u->nsw);
	u->dest = d;
	u->lid = lid;
	u->stamp++;
	for (s = 0; s < u->nsw; s++)
		u->flow[s] = to_ca ? u->terminals[s] : 0;
	for (i = 0; i < u->nsw; i++) {
		uint32_t e, p;

		s = u->by_dist[i];
		if (s == d) {
			/* The exit leads to the LID's port, or is 0 for the switch itself. */
			sn_assert(u->lid_exit[lid] <= f->nodes[f->switches[s]].nports &&
				  (u->lid_exit[lid] != 0) == to_ca);
			routing_lft(r, s)[lid] = u->lid_exit[lid];
			routing_hops(r, s)[lid] = (uint8_t)to_ca;
			continue;
		}
		e = pick_edge(u, s);
		if (e == FAB_NONE)
			return -1;
		p = f->sw_adj_port[e];
		u->routes[p] += u->flow[s];
		u->entries[p]++;
		u->flow[u->nbr[e]] += u->flow[s];
		/* The routing's port bound, not the switch's: this loop runs per switch and LID. */
		sn_assert(f->ports[p].num >= 1 && f->ports[p].num <= r->max_port);
		routing_lft(r, s)[lid] = f->ports[p].num;
		routing_hops(r, s)[lid] = (uint8_t)(u->dist_route[s] + to_ca);
		u->turn_routes += u->via_turn[s];
	}
	return 0;
}

/*
 * Routes every LID.  A switch without a route is recorded in err (the first one) and its LIDs
 * are left unrouted, but the others are routed all the same, so that a fall-back can say what
 * the routing would have cost.
 */
static int route_all(struct updn *u, struct routing *r, struct fab_error *err)
{
	uint32_t d, i;
	int ret = 0;

	memset(u->routes, 0, sizeof(uint64_t) * u->f->nports);
	memset(u->entries, 0, sizeof(uint32_t) * u->f->nports);
	memset(r->lft, FAB_NO_PORT, (size_t)r->nswitches * r->lft_len);
	u->turn_routes = 0;
	u->routes_first = count_roots(u) > 1;
	choose_turn_switch(u);
	for (d = 0; d < u->nsw; d++) {
		if (u->lid_off[d] == u->lid_off[d + 1])
			continue;
		if (distances_to(u, d) || add_turn_routes(u, d)) {
			if (!ret)
				fab_error_set(
					err, "no up*/down* route to switch 0x%016llx",
					(unsigned long long)u->f->nodes[u->f->switches[d]].guid);
			ret = -1;
			continue;
		}
		sort_by_distance(u);
		index_next_edges(u, d);
		progress_step(u->progress, "routing", u->lid_off[d + 1], u->lid_off[u->nsw]);
		for (i = u->lid_off[d]; i < u->lid_off[d + 1]; i++) {
			if (route_lid(u, r, d, u->lid_list[i])) {
				if (!ret)
					fab_error_set(err, "no port continues the route to LID %u",
						      u->lid_list[i]);
				ret = -1;
			}
		}
	}
	return ret;
}

static double seconds_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Turn routes are only kept when the whole routing verifies deadlock-free.  The report is kept
 * too: when these tables are the final ones, the caller need not verify them again.
 */
static int turn_routes_verified(const struct updn *u, const struct routing *r,
				struct updn_report *rep)
{
	double t0 = seconds_now();

	rep->verified = 0;
	if (!u->turn_routes)
		return 1;
	if (verify_routing(u->f, r, &rep->verify) || !verify_ok(&rep->verify))
		return 0;
	rep->verified = 1;
	rep->verify_seconds = seconds_now() - t0;
	return 1;
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

/* Maximum EFI of r and the routes between end ports it does not deliver; -1 out of memory. */
static int measure_efi(const struct fabric *f, const struct routing *r, uint64_t *max,
		       uint64_t *unrouted)
{
	struct metrics_options o;
	struct metrics_efi e;

	metrics_options_default(&o);
	if (metrics_efi(f, r, &o, &e))
		return -1;
	*max = e.dist.max;
	*unrouted = e.unrouted;
	metrics_efi_free(&e);
	return 0;
}

/*
 * Several roots that are not linked to each other may leave a switch without a route, or the
 * turn routes may close a credit loop.  One root always works: every other switch has its BFS
 * parent above it, and the root reaches everything by descending.  What that costs is measured
 * on both routings, for the warning: the roots' attempt is routed as far as it goes.
 */
static int fall_back(struct updn *u, struct routing *r, struct updn_report *rep,
		     const struct fab_error *first, struct fab_error *err)
{
	uint64_t unrouted;
	uint32_t central;

	rep->fell_back_from = count_roots(u);
	snprintf(rep->fall_back_why, sizeof(rep->fall_back_why), "%.199s",
		 first->msg[0] ? first->msg : "the turn routes between roots close a credit loop");
	rep->efi_known = !measure_efi(u->f, r, &rep->roots_max_efi, &rep->roots_unrouted);
	memset(u->is_root, 0, u->nsw);
	central = swgraph_central_switch(u->f, NULL, 0);
	if (central == FAB_NONE) {
		fab_error_set(err, "out of memory");
		return -1;
	}
	u->is_root[central] = 1;
	rank_switches(u);
	if (route_all(u, r, err))
		return -1;
	if (rep->efi_known)
		rep->efi_known = !measure_efi(u->f, r, &rep->fallback_max_efi, &unrouted);
	return 0;
}

/*
 * Recognises a fat tree for tree_edge(), whose levels must be the ranks from the roots (end ports
 * on upper switches make other roots): 0 (tree_mode says whether it is one), -1 out of memory.
 */
static int tree_setup(struct updn *u)
{
	struct fab_error why;
	uint32_t s;

	if (fat_tree_recognise(u->f, &u->tree, &why))
		return 0;
	for (s = 0; s < u->nsw; s++)
		if (u->rank[s] != u->tree.levels - u->tree.level[s])
			return 0;
	if (dmodk_form_init(&u->form, u->f, &u->tree))
		return -1;
	u->tree_mode = 1;
	return 0;
}

int updn_route(const struct fabric *f, const struct updn_opts *opts, struct routing *r,
	       struct updn_report *rep, struct fab_error *err)
{
	struct updn_report fb = { 0 };
	struct updn_report checked = { 0 };
	struct fab_error first;
	const char *source;
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
	u.progress = opts ? opts->progress : NULL;
	if (opts && opts->nroots) {
		if (set_roots_from_option(&u, opts, err))
			goto out;
		source = "option";
	} else {
		source = choose_auto_roots(&u);
		if (!source) {
			fab_error_set(err, "out of memory");
			goto out;
		}
	}
	rank_switches(&u);
	if (!strcmp(source, "top level of the tree") && tree_setup(&u)) {
		fab_error_set(err, "out of memory");
		goto out;
	}
	first.msg[0] = '\0';
	r->sl_mode = ROUTING_SL_UNIFORM;
	r->sl_uniform = 0;
	memset(r->sl2vl_uniform, 0, sizeof(r->sl2vl_uniform));
	r->vls_used = 1;
	if (route_all(&u, r, &first) || !turn_routes_verified(&u, r, &checked)) {
		checked.verified = 0;
		if (fall_back(&u, r, &fb, &first, err))
			goto out;
		source = "most central switch (the chosen roots left a switch without a route)";
	}
	fill_report(&u, rep, source);
	rep->verified = checked.verified;
	rep->verify = checked.verify;
	rep->verify_seconds = checked.verify_seconds;
	rep->fell_back_from = fb.fell_back_from;
	memcpy(rep->fall_back_why, fb.fall_back_why, sizeof(rep->fall_back_why));
	rep->efi_known = fb.efi_known;
	rep->roots_max_efi = fb.roots_max_efi;
	rep->roots_unrouted = fb.roots_unrouted;
	rep->fallback_max_efi = fb.fallback_max_efi;
	ret = 0;
out:
	updn_free(&u);
	return ret;
}
