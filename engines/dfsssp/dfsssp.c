/*
 * dfsssp.c - path computation of sar-dfsssp and its scheduling-aware variant (see dfsssp.h).
 *
 * Destinations are routed one LID at a time, in phases:
 *   1. job nodes (only with a job map), sorted by descending size of the largest job they run
 *      (Alg 5.1 line 5); after each, only the paths from nodes sharing a job with the
 *      destination add weight (lines 8-10); then, beyond the thesis, an improvement step
 *      re-picks job routes where that lowers the highest intra-job load (improve_jobs);
 *   2. storage nodes (storage_nodes / storage_guids, the role of OpenSM's io_guid_file);
 *   3. every other CA port, then the switches' own LIDs ("lower priority for balancing", as
 *      OpenSM's dfsssp).
 * With a job map, weights are reset to |N|^2 before phases 2 and 3 (Alg 5.1, lines 11-16:
 * storage and other traffic are balanced on their own).  The reference patch neither sorts the
 * job nodes nor resets the weights; dfsssp_opts can reproduce that for comparison, but the
 * default follows the thesis, section 5.2.2.2.  Without a job map this is plain DFSSSP, in
 * OpenSM's order: switches by descending number of end ports, their ports in port order.
 *
 * Weights live on channels (one per direction of each link, parallel links apart), so the
 * Dijkstra from the destination switch picks, among equally short routes, the least loaded
 * channels: that is what balances parallel links and spreads the 2^LMC LIDs of one port.
 *
 * Only switches with terminals (CA or router ports) are weighed sources, with all their LIDs;
 * their own LID's routes follow their terminals'.  A switch without terminals sends management
 * traffic only.  Counting it as a source (as OpenSM's dfsssp does) adds one unit per
 * destination to the channels it takes, and on fat trees those units decide between otherwise
 * equal up ports differently at every switch, so one destination's routes split over several
 * down links into its leaf and the next destinations find none left free: on the 8-ary 3-tree
 * the maximum EFI was 824 against the bound of 504, now 504 with shift permutations free of
 * contention.  Where every switch has terminals nothing changes.
 */
#include "engines/dfsssp/dfsssp.h"
#include "engines/dfsssp/memo.h"
#include "fabric/fattree.h"
#include "lib/minheap.h"
#include "fabric/swgraph.h"
#include "lib/assert.h"
#include "lib/clock.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Work the improvement step may do, in units of the job phase's Dijkstra work. */
#define IMPROVE_BUDGET 8

enum phase {
	PH_JOB,
	PH_STORAGE,
	PH_OTHER,
	PH_SWITCH
};

struct dfsssp {
	const struct fabric *f;
	const struct dfsssp_opts *o;
	struct routing *r;
	struct swgraph g;
	struct minheap heap;
	uint64_t base;	  /* initial channel weight, |N|^2 */
	uint64_t *weight; /* [ne] per channel */
	/*
	 * [ne]: weight[rev[e]], the weight of the channel into e's switch over e's link: Dijkstra
	 * reads a switch's incoming channels in the order of its own (one cache line where reading
	 * weight[rev[e]] took a miss each).  weight_add keeps the two equal.
	 */
	uint64_t *weight_in;
	uint64_t *dist;	 /* [nsw] */
	uint64_t *add;	 /* [nsw] weight the paths from a switch add */
	uint64_t *acc;	 /* [nsw] */
	uint32_t *next;	 /* [nsw] channel towards the current destination, FAB_NONE */
	uint32_t *order; /* [nsw] Dijkstra's settling order */
	uint32_t *hop;	 /* [nsw] */
	uint32_t *nsrc;	 /* [nsw] weighed source LIDs per switch; see count_sources */
	uint32_t nsettled;
	uint32_t *dest;	 /* destination ports in routing order */
	uint8_t *dphase; /* their phases */
	uint32_t ndest;
	uint32_t *job_off; /* CSR over switches: ports with jobs behind each switch */
	uint32_t *job_port;
	uint32_t njob; /* dest[0..njob): the job phase */
	/*
	 * On a recognised fat tree: each switch's heap item and back, and its rank for the
	 * destination order (a leaf's place in topology order); NULL elsewhere.  See tree_order.
	 */
	uint32_t *heap_item, *heap_sw, *sw_rank;
	/* Incremental: each LID's demand signature, the usable memo (or NULL), kept LIDs. */
	uint64_t *sig;
	const struct dfsssp_memo *prev;
	uint8_t *kept;
};

static void dfsssp_free(struct dfsssp *d)
{
	free(d->heap_item);
	free(d->heap_sw);
	free(d->sw_rank);
	swgraph_free(&d->g);
	minheap_free(&d->heap);
	free(d->weight);
	free(d->weight_in);
	free(d->dist);
	free(d->add);
	free(d->acc);
	free(d->next);
	free(d->order);
	free(d->hop);
	free(d->nsrc);
	free(d->dest);
	free(d->dphase);
	free(d->job_off);
	free(d->job_port);
	free(d->sig);
	free(d->kept);
}

/*
 * On a fat tree, equally short routes and the destinations follow the tree, not the GUIDs:
 * Dijkstra settles equally far switches by parent digit, so ties take the same digit up on
 * every switch as D-mod-k does, and destinations come leaf by leaf in topology order.  With
 * GUIDs in any other order a 4-ary 3-tree ended at maximum EFI 92 against the bound of 60.
 */
static int tree_order(struct dfsssp *d, const uint8_t *has_ca)
{
	const struct fabric *f = d->f;
	struct fab_error why;
	struct fat_tree t;
	uint32_t s, i, tree_like = 0;

	for (s = 0; s < f->nswitches; s++)
		tree_like |= !has_ca[s];
	if (!tree_like || fat_tree_recognise(f, &t, &why))
		return 0;
	d->heap_item = fat_tree_switch_rank(&t);
	d->heap_sw = malloc(sizeof(uint32_t) * (f->nswitches + 1));
	d->sw_rank = malloc(sizeof(uint32_t) * (f->nswitches + 1));
	if (d->heap_item && d->heap_sw && d->sw_rank) {
		for (s = 0; s < f->nswitches; s++) {
			d->heap_sw[d->heap_item[s]] = s;
			d->sw_rank[s] = t.nleaves + s;
		}
		for (i = 0; i < t.nleaves; i++)
			d->sw_rank[t.leaves[i]] = i;
	}
	fat_tree_free(&t);
	return d->heap_item && d->heap_sw && d->sw_rank ? 0 : -1;
}

static inline void heap_set(struct dfsssp *d, uint32_t sw, uint64_t key)
{
	minheap_set(&d->heap, d->heap_item ? d->heap_item[sw] : sw, key);
}

static inline uint32_t heap_pop(struct dfsssp *d)
{
	uint32_t item = minheap_pop(&d->heap);

	return d->heap_sw ? d->heap_sw[item] : item;
}

/*
 * The weighed sources of every switch, its LIDs' count, and all LIDs in *nlids.  A switch
 * without terminals weighs nothing: see the top of this file.
 */
static int count_sources(struct dfsssp *d, uint32_t *nlids)
{
	const struct fabric *f = d->f;
	uint8_t *has_ca = calloc(f->nswitches + 1, 1), exit_port;
	uint32_t lid, s;

	if (!has_ca)
		return -1;
	*nlids = 0;
	for (lid = 1; lid <= f->max_lid; lid++) {
		s = fabric_lid_switch(f, lid, &exit_port);
		if (s == FAB_NONE)
			continue;
		sn_assert(s < f->nswitches);
		d->nsrc[s]++;
		has_ca[s] |= exit_port != 0;
		(*nlids)++;
	}
	for (s = 0; s < f->nswitches; s++)
		if (!has_ca[s])
			d->nsrc[s] = 0;
	s = (uint32_t)tree_order(d, has_ca);
	free(has_ca);
	return s ? -1 : 0;
}

static int dfsssp_alloc(struct dfsssp *d)
{
	const struct fabric *f = d->f;
	uint32_t nsw = f->nswitches, nlids = 0;

	if (swgraph_build(&d->g, f) || minheap_init(&d->heap, nsw))
		return -1;
	d->weight = malloc(sizeof(*d->weight) * (d->g.ne + 1));
	d->weight_in = malloc(sizeof(*d->weight_in) * (d->g.ne + 1));
	d->dist = malloc(sizeof(*d->dist) * nsw);
	d->add = malloc(sizeof(*d->add) * nsw);
	d->acc = malloc(sizeof(*d->acc) * nsw);
	d->next = malloc(sizeof(*d->next) * nsw);
	d->order = malloc(sizeof(*d->order) * nsw);
	d->hop = malloc(sizeof(*d->hop) * nsw);
	d->nsrc = calloc(nsw, sizeof(*d->nsrc));
	d->dest = malloc(sizeof(*d->dest) * (f->nendports + 1));
	d->dphase = malloc(f->nendports + 1);
	if (!d->weight || !d->weight_in || !d->dist || !d->add || !d->acc || !d->next ||
	    !d->order || !d->hop || !d->nsrc || !d->dest || !d->dphase)
		return -1;
	if (count_sources(d, &nlids))
		return -1;
	/* "initialize with P^2 to force shortest paths" (OpenSM), P = LIDs of all end ports. */
	d->base = (uint64_t)nlids * nlids;
	return 0;
}

static void reset_weights(struct dfsssp *d)
{
	uint32_t e;

	for (e = 0; e < d->g.ne; e++)
		d->weight[e] = d->weight_in[e] = d->base;
}

/* Adds a to channel e's weight; apply_move takes weight off by adding its two's complement. */
static inline void weight_add(struct dfsssp *d, uint32_t e, uint64_t a)
{
	d->weight[e] += a;
	d->weight_in[d->g.rev[e]] += a;
}

/* Shortest routes of every switch towards switch t; settling order in order[]. */
static void dijkstra(struct dfsssp *d, uint32_t t)
{
	const uint32_t *off = d->f->sw_adj_off;
	uint32_t s;

	for (s = 0; s < d->g.nsw; s++) {
		d->dist[s] = UINT64_MAX;
		d->next[s] = FAB_NONE;
	}
	d->nsettled = 0;
	d->dist[t] = 0;
	d->hop[t] = 0;
	heap_set(d, t, 0);
	while (d->heap.size) {
		uint32_t v = heap_pop(d), e;

		/* Each switch settles once, in order of distance. */
		sn_assert(v < d->g.nsw && d->nsettled < d->g.nsw);
		sn_assert(!d->nsettled || d->dist[d->order[d->nsettled - 1]] <= d->dist[v]);
		d->order[d->nsettled++] = v;
		if (v != t) {
			sn_assert(d->next[v] < d->g.ne && d->g.from[d->next[v]] == v);
			d->hop[v] = d->hop[d->g.to[d->next[v]]] + 1;
			/* A shortest route visits each switch at most once. */
			sn_assert(d->hop[v] < d->g.nsw);
		}
		for (e = off[v]; e < off[v + 1]; e++) {
			uint32_t u = d->g.to[e], c = d->g.rev[e];
			uint64_t nd = d->dist[v] + d->weight_in[e];

			sn_assert(d->weight_in[e] == d->weight[c]);

			/* Strict: among equal channels the first (lowest port) wins. */
			if (nd < d->dist[u]) {
				d->dist[u] = nd;
				d->next[u] = c;
				heap_set(d, u, nd);
			}
		}
	}
}

/*
 * The intra-job load one switch's sources would leave behind on a candidate next channel e
 * (towards v): its own channel's load and the mean per-channel load of v's onward route, both
 * including what this destination's farther switches already committed.  Squared, so that
 * spreading wins over stacking.
 */
static uint64_t spread_cost(const struct dfsssp *d, uint32_t s, uint32_t e, uint32_t v)
{
	uint64_t up = d->weight[e] - d->base + d->acc[s], dn = 0;

	if (d->hop[v])
		dn = (d->dist[v] - d->hop[v] * d->base) / d->hop[v] + d->acc[v] + d->acc[s];
	return up * up + dn * dn * d->hop[v];
}

/* Switch s picks its next channel among those one hop closer to the destination. */
static void spread_switch(struct dfsssp *d, uint32_t s)
{
	const uint32_t *off = d->f->sw_adj_off;
	uint32_t e, v, best = d->next[s];
	uint64_t cost, low = UINT64_MAX;

	for (e = off[s]; d->acc[s] && e < off[s + 1]; e++) {
		v = d->g.to[e];
		if (d->dist[v] == UINT64_MAX || d->hop[v] + 1 != d->hop[s])
			continue;
		cost = spread_cost(d, s, e, v);
		/* Dijkstra's own choice wins ties. */
		if (cost < low || (cost == low && e == d->next[s])) {
			low = cost;
			best = e;
		}
	}
	/* Only minimum-hop channels leaving s are candidates, Dijkstra's own among them. */
	sn_assert(best < d->g.ne && d->g.from[best] == s);
	d->next[s] = best;
	weight_add(d, best, d->acc[s]);
	d->acc[d->g.to[best]] += d->acc[s];
}

/*
 * Job phase: Dijkstra sends every switch of one destination the same way when few switches
 * hold the job's sources (the other switches add nothing), so one destination's whole intra-job
 * traffic lands on one spine and one down-link (thesis figure 5.2: 66 where plain DFSSSP has
 * 60).  Here the switches, farthest first, re-pick among their minimum-hop next channels
 * knowing what this destination's farther switches already put there, and the weights grow
 * as they go, still only by intra-job paths (Alg 5.1 lines 8-10).  Hop counts and hence
 * the layering stay those of Dijkstra; plain DFSSSP and the later phases do not use this.
 */
static void spread_tree(struct dfsssp *d)
{
	uint32_t i, h, maxhop = 0;

	for (i = 0; i < d->nsettled; i++) {
		uint32_t s = d->order[i];

		d->acc[s] = d->add[s];
		if (d->hop[s] > maxhop)
			maxhop = d->hop[s];
	}
	for (h = maxhop; h >= 1; h--)
		for (i = d->nsettled; i-- > 1;)
			if (d->hop[d->order[i]] == h)
				spread_switch(d, d->order[i]);
}

/* Every route adds add[s] to each channel from its source switch s to the destination. */
static void update_weights(struct dfsssp *d)
{
	uint32_t i, s;

	for (s = 0; s < d->g.nsw; s++)
		d->acc[s] = d->add[s];
	/* Reverse settling order: a switch comes after everything routed through it. */
	for (i = d->nsettled; i-- > 1;) {
		uint32_t c;

		s = d->order[i];
		c = d->next[s];
		if (!d->acc[s])
			continue;
		sn_assert(c < d->g.ne && d->g.from[c] == s);
		weight_add(d, c, d->acc[s]);
		d->acc[d->g.to[c]] += d->acc[s];
	}
}

static void set_lft(struct dfsssp *d, uint32_t lid, uint32_t t, uint8_t exit_port, int to_ca)
{
	uint32_t s;

	sn_assert(lid >= 1 && lid < d->r->lft_len && t < d->g.nsw);
	for (s = 0; s < d->g.nsw; s++) {
		uint8_t port, hops;

		if (s == t) {
			port = exit_port;
			hops = (uint8_t)to_ca;
		} else {
			port = (uint8_t)swgraph_port_num(d->f, d->next[s]);
			hops = (uint8_t)(d->hop[s] + to_ca > 255 ? 255 : d->hop[s] + to_ca);
		}
		/* The routing's port bound, not the switch's: this loop runs per switch and LID. */
		sn_assert(port <= d->r->max_port);
		routing_lft(d->r, s)[lid] = port;
		routing_hops(d->r, s)[lid] = hops;
	}
}

/*
 * Sources at switch s of intra-job paths to dst_node (Alg 5.1 line 9): its ports sharing a job,
 * each weighing one per LID, or its measured demand towards dst_node with a traffic matrix.
 */
static uint64_t job_add_at(const struct dfsssp *d, uint32_t s, uint32_t dst_node)
{
	uint64_t add = 0, w;
	uint32_t i;

	sn_assert(s < d->g.nsw && d->job_off[s] <= d->job_off[s + 1]);
	for (i = d->job_off[s]; i < d->job_off[s + 1]; i++) {
		const struct fab_port *p = &d->f->ports[d->job_port[i]];

		if (!job_map_share_job(d->o->jobs, p->node, dst_node))
			continue;
		w = 1;
		if (d->o->traffic) {
			w = traffic_weight(d->o->traffic, p->node, dst_node);
			w = w < d->o->traffic_floor ? d->o->traffic_floor : w;
		}
		add += w << p->lmc;
	}
	return add;
}

static void job_additions(struct dfsssp *d, uint32_t dst_node)
{
	uint32_t s;

	for (s = 0; s < d->g.nsw; s++)
		d->add[s] = job_add_at(d, s, dst_node);
}

static void plain_additions(struct dfsssp *d)
{
	uint32_t s;

	for (s = 0; s < d->g.nsw; s++)
		d->add[s] = d->nsrc[s];
}

/* The demand that shaped a destination's column: its phase and what every switch adds. */
static uint64_t demand_sig(const struct dfsssp *d, int ph)
{
	uint64_t h = dfsssp_sig_mix(0, (uint64_t)ph);
	uint32_t s;

	for (s = 0; s < d->g.nsw; s++)
		h = dfsssp_sig_mix(h, d->add[s]);
	return h;
}

/*
 * Takes lid's column from the memo into next[], hop[] and order[] as if Dijkstra had found
 * it.  Returns -1 when the memo's column does not fit this fabric: then lid is routed again.
 */
static int memo_column(struct dfsssp *d, uint32_t lid, uint32_t t, int to_ca)
{
	const struct dfsssp_memo *m = d->prev;
	uint32_t s, h, n = 0, maxhop = 0;

	for (s = 0; s < d->g.nsw; s++) {
		size_t at = (size_t)s * m->lft_len + lid;

		d->next[s] = FAB_NONE;
		d->hop[s] = 0;
		if (s == t)
			continue;
		d->next[s] = swgraph_channel(d->f, &d->g, s, m->lft[at]);
		if (d->next[s] == FAB_NONE || m->hops[at] < 1 + to_ca)
			return -1;
		d->hop[s] = m->hops[at] - (uint32_t)to_ca;
		maxhop = d->hop[s] > maxhop ? d->hop[s] : maxhop;
	}
	for (s = 0; s < d->g.nsw; s++)
		if (s != t && d->hop[d->g.to[d->next[s]]] + 1 != d->hop[s])
			return -1;
	/* Settling order by hops: each switch after the one its route goes through. */
	for (h = 0; h <= maxhop; h++)
		for (s = 0; s < d->g.nsw; s++)
			if (d->hop[s] == h)
				d->order[n++] = s;
	sn_assert(n == d->g.nsw);
	d->nsettled = n;
	return 0;
}

/* Routes lid as before when its demand is the same as in the memo's routing. */
static int keep_lid(struct dfsssp *d, uint32_t lid, uint32_t t, uint8_t exit_port, int to_ca,
		    uint64_t sig)
{
	if (d->sig)
		d->sig[lid] = sig;
	if (!d->prev || d->prev->sig[lid] != sig || memo_column(d, lid, t, to_ca))
		return 0;
	set_lft(d, lid, t, exit_port, to_ca);
	update_weights(d);
	d->kept[lid] = 1;
	return 1;
}

/* Routes every LID of port p (an end port or a switch's port 0); spread: job phase. */
static int route_port(struct dfsssp *d, uint32_t p, int spread, uint64_t sig)
{
	const struct fabric *f = d->f;
	const struct fab_port *port = &f->ports[p];
	int to_ca = !fabric_is_switch(f, port->node);
	uint32_t t = routing_lid_switch(f, port->base_lid), k, s;
	uint8_t exit_port = to_ca ? f->ports[port->remote].num : 0;

	if (t == FAB_NONE)
		return 0;
	sn_assert(t < d->g.nsw && (!to_ca || exit_port >= 1));
	for (k = 0; k < (1u << port->lmc); k++) {
		uint32_t lid = port->base_lid + k;

		if (lid > f->max_lid || f->lid_port[lid] != p)
			continue;
		if (keep_lid(d, lid, t, exit_port, to_ca, sig))
			continue;
		dijkstra(d, t);
		for (s = 0; s < d->g.nsw; s++)
			if (s != t && d->next[s] == FAB_NONE)
				return -1;
		if (spread)
			spread_tree(d);
		set_lft(d, lid, t, exit_port, to_ca);
		if (!spread)
			update_weights(d);
	}
	return 0;
}

/* The largest job a node runs: its size (ports) and index; size 0 when it runs none. */
static uint32_t node_job_size(const struct job_map *jm, uint32_t node, uint32_t *job)
{
	uint32_t n, i, best = 0;
	const uint32_t *jobs = job_map_node_jobs(jm, node, &n);

	*job = UINT32_MAX;
	for (i = 0; i < n; i++) {
		if (jm->job_ports[jobs[i]] > best) {
			best = jm->job_ports[jobs[i]];
			*job = jobs[i];
		}
	}
	return best;
}

struct job_key {
	uint32_t size, job, pos, port;
};

static int cmp_job_key(const void *a, const void *b)
{
	const struct job_key *x = a, *y = b;

	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	if (x->job != y->job)
		return x->job < y->job ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Alg 5.1 line 5: job nodes by descending job size, a job's nodes together. */
static int sort_job_ports(struct dfsssp *d, uint32_t n)
{
	struct job_key *k = malloc(sizeof(*k) * (n + 1));
	uint32_t i;

	if (!k)
		return -1;
	for (i = 0; i < n; i++) {
		k[i].port = d->dest[i];
		k[i].pos = i;
		k[i].size = node_job_size(d->o->jobs, d->f->ports[d->dest[i]].node, &k[i].job);
	}
	qsort(k, n, sizeof(*k), cmp_job_key);
	for (i = 0; i < n; i++)
		d->dest[i] = k[i].port;
	free(k);
	return 0;
}

struct sw_key {
	uint32_t sw, ends, rank;
};

static int cmp_sw_key(const void *a, const void *b)
{
	const struct sw_key *x = a, *y = b;

	if (x->ends != y->ends)
		return x->ends > y->ends ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int port_phase(const struct dfsssp *d, uint32_t p)
{
	uint32_t node = d->f->ports[p].node, n;

	if (d->o->jobs) {
		job_map_node_jobs(d->o->jobs, node, &n);
		if (n)
			return PH_JOB;
	}
	if (d->o->storage && d->o->storage[node])
		return PH_STORAGE;
	return PH_OTHER;
}

/* End ports behind switch s (attached through an active link), in port order. */
static uint32_t ends_of(const struct fabric *f, uint32_t s, uint32_t *out)
{
	const struct fab_node *n = &f->nodes[f->switches[s]];
	uint32_t k, count = 0;

	for (k = 1; k <= n->nports; k++) {
		uint32_t p = n->first_port + k, q;

		if (!fabric_channel_up(f, p))
			continue;
		q = f->ports[p].remote;
		if (fabric_is_switch(f, f->ports[q].node) || !f->ports[q].base_lid)
			continue;
		if (out)
			out[count] = q;
		count++;
	}
	return count;
}

/* Builds dest[] in routing order and the per-switch lists of job ports. */
static int order_destinations(struct dfsssp *d)
{
	const struct fabric *f = d->f;
	uint32_t nsw = d->g.nsw, i, ph, *buf, njob = 0;
	struct sw_key *sk = malloc(sizeof(*sk) * (nsw + 1));
	int ret = -1;

	buf = malloc(sizeof(*buf) * (f->nports + 1));
	d->job_off = calloc(nsw + 1, sizeof(*d->job_off));
	d->job_port = malloc(sizeof(*d->job_port) * (f->nendports + 1));
	if (!sk || !buf || !d->job_off || !d->job_port)
		goto out;
	for (i = 0; i < nsw; i++) {
		sk[i].sw = i;
		sk[i].ends = ends_of(f, i, NULL);
		sk[i].rank = d->sw_rank ? d->sw_rank[i] : i;
	}
	qsort(sk, nsw, sizeof(*sk), cmp_sw_key);
	d->ndest = 0;
	for (ph = PH_JOB; ph <= PH_OTHER; ph++) {
		for (i = 0; i < nsw; i++) {
			uint32_t n = ends_of(f, sk[i].sw, buf), j;

			for (j = 0; j < n; j++) {
				if (port_phase(d, buf[j]) != (int)ph)
					continue;
				sn_assert(d->ndest < f->nendports);
				d->dphase[d->ndest] = (uint8_t)ph;
				d->dest[d->ndest++] = buf[j];
			}
		}
		if (ph == PH_JOB)
			njob = d->ndest;
	}
	d->njob = njob;
	for (i = 0; i < nsw; i++) {
		sn_assert(d->ndest <= f->nendports);
		d->dphase[d->ndest] = PH_SWITCH;
		d->dest[d->ndest++] = f->nodes[f->switches[sk[i].sw]].first_port;
	}
	if (njob && !d->o->skip_job_sort && sort_job_ports(d, njob))
		goto out;
	/* Job ports per switch, for the intra-job weight rule. */
	for (i = 0; i < njob; i++)
		d->job_off[routing_lid_switch(f, f->ports[d->dest[i]].base_lid) + 1]++;
	for (i = 0; i < nsw; i++)
		d->job_off[i + 1] += d->job_off[i];
	/* Job ports are attached to a switch (ends_of), so every one was counted. */
	sn_assert(d->job_off[nsw] == njob);
	memcpy(buf, d->job_off, sizeof(*buf) * nsw);
	for (i = 0; i < njob; i++)
		d->job_port[buf[routing_lid_switch(f, f->ports[d->dest[i]].base_lid)]++] =
			d->dest[i];
	ret = 0;
out:
	free(sk);
	free(buf);
	return ret;
}

/*
 * Improvement step after the job phase.  This goes beyond the thesis: Algorithm 5.1 (section
 * 5.2.2.2) routes every job destination once, greedily, and never revisits it.  On the thesis's
 * own figure 5.2 fabric that greedy pass, like every destination-based engine OpenSM ships,
 * stops at a maximum effective EFI of 60 where 54 is reachable, and on some job mixes it ends
 * above plain DFSSSP: an early destination's choice only looks bad once later destinations
 * have filled the other channels.  So the job trees are revisited: for each channel with the
 * highest intra-job load, and each job destination whose tree crosses it, the switches whose
 * routes reach it re-pick among their next channels one hop closer to the destination.  A
 * move is kept only when it lowers, in this order, the maximum load, the number of channels at
 * that maximum and the sum of squared loads, so the search ends; sweeps repeat while they
 * move something, within a work budget.  Routes stay minimal and destination-based (a move
 * changes one LFT entry), so the layering and the verifier treat them as any other.  The
 * trees are read back from the LFTs, which hold the only copy of them.
 */
struct move {
	uint32_t lid, s, e;
	int64_t dcnt, dsq;
};

struct improve {
	const uint32_t *lids; /* the job phase's LIDs */
	uint32_t nlids;
	uint64_t max;  /* the highest load when the sweep began */
	uint64_t nmax; /* channels still at max */
	uint64_t work; /* LFT entries read; stops the search at budget */
	uint64_t budget;
};

static uint64_t load_of(const struct dfsssp *d, uint32_t e)
{
	return d->weight[e] - d->base;
}

/* Switch s's next channel towards lid; FAB_NONE at the destination's switch. */
static uint32_t next_of(const struct dfsssp *d, uint32_t s, uint32_t lid)
{
	return swgraph_channel(d->f, &d->g, s, routing_lft(d->r, s)[lid]);
}

/*
 * The switches whose routes to lid pass through switch u, u first and each before those it
 * is reached from, into order[]; acc[] gets the intra-job sources routed through each.
 * Returns their number.
 */
static uint32_t load_subtree(struct dfsssp *d, struct improve *im, uint32_t lid, uint32_t u)
{
	const uint32_t *off = d->f->sw_adj_off;
	uint32_t dst = d->f->ports[d->f->lid_port[lid]].node, n = 1, i, e, x;

	d->order[0] = u;
	for (i = 0; i < n; i++) {
		x = d->order[i];
		d->acc[x] = job_add_at(d, x, dst);
		for (e = off[x]; e < off[x + 1]; e++)
			if (routing_lft(d->r, d->g.to[e])[lid] ==
			    swgraph_port_num(d->f, d->g.rev[e])) {
				/* Routes to one LID form a tree: no switch joins it twice. */
				sn_assert(n < d->g.nsw);
				d->order[n++] = d->g.to[e];
			}
		im->work += off[x + 1] - off[x];
	}
	for (i = n; i-- > 1;) {
		x = d->order[i];
		sn_assert(next_of(d, x, lid) < d->g.ne);
		d->acc[d->g.to[next_of(d, x, lid)]] += d->acc[x];
	}
	return n;
}

/*
 * What moving switch s's flow to lid from its next channel to e1 does, up to where the old and
 * the new route meet (both are minimal, so they meet at the same distance).  Returns 0 when a
 * channel would go above max.
 */
static int eval_move(const struct dfsssp *d, struct improve *im, uint32_t s, struct move *m)
{
	int64_t a = (int64_t)d->acc[s];
	uint32_t e0 = next_of(d, s, m->lid), e1 = m->e;

	m->dcnt = 0;
	m->dsq = 0;
	sn_assert(e0 < d->g.ne && d->g.from[e1] == s);
	for (;;) {
		int64_t lo = (int64_t)load_of(d, e0), ln = (int64_t)load_of(d, e1);

		im->work++;
		if ((uint64_t)(ln + a) > im->max)
			return 0;
		m->dcnt += ((uint64_t)(ln + a) == im->max) - ((uint64_t)lo == im->max);
		m->dsq += 2 * a * (ln - lo + a);
		if (d->g.to[e0] == d->g.to[e1])
			return 1;
		e0 = next_of(d, d->g.to[e0], m->lid);
		e1 = next_of(d, d->g.to[e1], m->lid);
	}
}

static void apply_move(struct dfsssp *d, const struct move *m)
{
	uint64_t a = d->acc[m->s];
	uint32_t e0 = next_of(d, m->s, m->lid), e1 = m->e;

	sn_assert(m->lid >= 1 && m->lid < d->r->lft_len && d->g.from[e1] == m->s);
	sn_assert(swgraph_port_num(d->f, e1) <= d->f->nodes[d->f->switches[m->s]].nports);
	routing_lft(d->r, m->s)[m->lid] = (uint8_t)swgraph_port_num(d->f, e1);
	for (;;) {
		/* The old route carried these sources: its load cannot go below the base. */
		sn_assert(e0 < d->g.ne && e1 < d->g.ne && d->weight[e0] >= d->base + a);
		weight_add(d, e0, -a);
		weight_add(d, e1, a);
		if (d->g.to[e0] == d->g.to[e1])
			return;
		e0 = next_of(d, d->g.to[e0], m->lid);
		e1 = next_of(d, d->g.to[e1], m->lid);
	}
}

/* Lexicographically lower (channels at the maximum, sum of squares) than *best. */
static int better(const struct move *m, const struct move *best)
{
	if (m->dcnt != best->dcnt)
		return m->dcnt < best->dcnt;
	return m->dsq < best->dsq;
}

/* The best improving move at the n switches of order[] (a subtree loaded by load_subtree). */
static void best_in_subtree(struct dfsssp *d, struct improve *im, uint32_t lid, uint32_t n,
			    struct move *best)
{
	const uint32_t *off = d->f->sw_adj_off;
	struct move m = { .lid = lid };
	uint32_t i, s, cur;

	for (i = 0; i < n; i++) {
		s = d->order[i];
		if (!d->acc[s])
			continue;
		cur = next_of(d, s, lid);
		for (m.e = off[s]; m.e < off[s + 1]; m.e++) {
			if (m.e == cur || routing_hops(d->r, d->g.to[m.e])[lid] + 1u !=
						  routing_hops(d->r, s)[lid])
				continue;
			m.s = s;
			if (eval_move(d, im, s, &m) && better(&m, best))
				*best = m;
		}
	}
}

/* Finds and applies the best move through channel c; 0 when none improves. */
static int relieve(struct dfsssp *d, struct improve *im, uint32_t c)
{
	uint32_t u = d->g.from[c], i, n;
	uint8_t port = (uint8_t)swgraph_port_num(d->f, c);
	struct move best = { .lid = FAB_NONE };

	for (i = 0; i < im->nlids && im->work < im->budget; i++) {
		if (routing_lft(d->r, u)[im->lids[i]] != port)
			continue;
		n = load_subtree(d, im, im->lids[i], u);
		if (d->acc[u])
			best_in_subtree(d, im, im->lids[i], n, &best);
	}
	im->work += im->nlids;
	if (best.lid == FAB_NONE)
		return 0;
	sn_assert(best.s < d->g.nsw && best.e < d->g.ne);
	load_subtree(d, im, best.lid, u);
	apply_move(d, &best);
	im->nmax += best.dcnt;
	return 1;
}

/* The job phase's LIDs, as routed by route_port. */
static uint32_t *job_lids(const struct dfsssp *d, uint32_t *n)
{
	const struct fabric *f = d->f;
	uint32_t i, k, *lids = malloc(sizeof(*lids) * (f->max_lid + 1));

	*n = 0;
	for (i = 0; lids && i < d->njob; i++) {
		const struct fab_port *p = &f->ports[d->dest[i]];

		for (k = 0; k < (1u << p->lmc); k++)
			/* Kept columns stay as they were: only routes made now move. */
			if (p->base_lid + k <= f->max_lid &&
			    f->lid_port[p->base_lid + k] == d->dest[i] &&
			    !(d->kept && d->kept[p->base_lid + k]))
				lids[(*n)++] = p->base_lid + k;
	}
	return lids;
}

/*
 * One sweep over the channels at the highest load.  It ends early when none is left there:
 * the bound max would then let a move raise a channel above the new maximum.
 */
static uint64_t improve_sweep(struct dfsssp *d, struct improve *im)
{
	uint64_t moves = 0;
	uint32_t e;

	im->max = 0;
	im->nmax = 0;
	for (e = 0; e < d->g.ne; e++) {
		if (load_of(d, e) > im->max) {
			im->max = load_of(d, e);
			im->nmax = 0;
		}
		im->nmax += load_of(d, e) == im->max;
	}
	for (e = 0; im->max && im->nmax && e < d->g.ne && im->work < im->budget; e++)
		if (load_of(d, e) == im->max && relieve(d, im, e))
			moves++;
	return moves;
}

static int improve_jobs(struct dfsssp *d, struct dfsssp_report *rep)
{
	struct improve im = { 0 };
	uint32_t *lids = job_lids(d, &im.nlids);
	uint64_t moves;

	if (!lids)
		return -1;
	im.lids = lids;
	/* IMPROVE_BUDGET times what the job phase's Dijkstras cost, roughly. */
	im.budget = IMPROVE_BUDGET * (uint64_t)im.nlids * (d->g.ne + d->g.nsw);
	sn_assert(im.nlids <= d->f->max_lid);
	do {
		moves = improve_sweep(d, &im);
		rep->improve_moves += moves;
		rep->improve_sweeps++;
	} while (moves && im.work < im.budget);
	rep->improve_work = im.work;
	rep->improve_stopped = im.work >= im.budget;
	free(lids);
	return 0;
}

static int improve(struct dfsssp *d, struct dfsssp_report *rep, struct fab_error *err)
{
	double t0 = sn_now();
	int ret = 0;

	if (!d->o->skip_improve)
		ret = improve_jobs(d, rep);
	rep->improve_seconds = sn_now() - t0;
	if (ret)
		fab_error_set(err, "out of memory");
	return ret;
}

static int route_all(struct dfsssp *d, struct dfsssp_report *rep, struct fab_error *err)
{
	const struct fabric *f = d->f;
	int resets = d->o->jobs && !d->o->skip_weight_reset;
	uint32_t i;
	int last = -1;

	reset_weights(d);
	for (i = 0; i < d->ndest; i++) {
		uint32_t p = d->dest[i];
		int ph = d->dphase[i];

		progress_step(d->o->progress, "routing", i + 1, d->ndest);
		if (last == PH_JOB && ph != PH_JOB && improve(d, rep, err))
			return -1;
		if (ph != last && resets &&
		    (ph == PH_STORAGE || (ph >= PH_OTHER && last < PH_OTHER)))
			reset_weights(d);
		last = ph;
		if (ph == PH_JOB)
			job_additions(d, f->ports[p].node);
		else
			plain_additions(d);
		if (route_port(d, p, ph == PH_JOB, d->sig || d->prev ? demand_sig(d, ph) : 0)) {
			fab_error_set(err, "no route from every switch to %s port %u (LID %u)",
				      fabric_node_desc(f, f->ports[p].node), f->ports[p].num,
				      f->ports[p].base_lid);
			return -1;
		}
		rep->lids_routed += 1u << f->ports[p].lmc;
		if (ph == PH_JOB)
			rep->job_lids += 1u << f->ports[p].lmc;
		else if (ph == PH_STORAGE)
			rep->storage_lids += 1u << f->ports[p].lmc;
	}
	if (last == PH_JOB && improve(d, rep, err))
		return -1;
	for (i = 1; d->kept && i < d->r->lft_len; i++)
		rep->kept_lids += d->kept[i];
	if (d->prev)
		rep->rerouted_lids = rep->lids_routed - rep->kept_lids;
	return 0;
}

/* Incremental: finds the memo to keep columns from and room for this routing's signatures. */
static int memo_begin(struct dfsssp *d, struct dfsssp_report *rep, uint64_t *key)
{
	*key = 0;
	if (!d->o->memo)
		return 0;
	*key = dfsssp_memo_key(d->f, d->o);
	d->prev = dfsssp_memo_match(d->o->memo, *key, d->r, d->g.nsw);
	rep->incremental = d->prev != NULL;
	d->sig = calloc(d->r->lft_len + 1, sizeof(*d->sig));
	d->kept = calloc(d->r->lft_len + 1, 1);
	return d->sig && d->kept ? 0 : -1;
}

/*
 * The layers need more VLs than the fabric (or the operator) allows.  OpenSM's dfsssp gives up
 * and lets OpenSM fall back to minhop, which is not deadlock-free; the caller hands what does
 * not fit to Nue (engines/overflow.c).  A destination d does not fit when some switch s has
 * sl_by_pair[s * lft_len + d] >= max_vls.
 */
void dfsssp_layers_needed_text(const struct dfsssp_report *rep, char *buf, size_t len)
{
	if (rep->layers_probed)
		snprintf(buf, len,
			 "was judged by a sample of %u destination LIDs to need more than %u",
			 rep->layers_probed, rep->max_vls);
	else if (rep->layers_judged)
		snprintf(buf, len, "was judged after %u layers to need more than %u",
			 rep->layers_judged, rep->max_vls);
	else
		snprintf(buf, len, "needs %s%u layers", rep->layers_capped ? "at least " : "",
			 rep->layers_needed);
}

static int layers_overflow(const struct fabric *f, const struct routing *r,
			   struct dfsssp_report *rep, struct fab_error *err)
{
	char needs[96], beyond[64] = "";

	/* A judged layering stopped before any path went past the VLs: none to count. */
	if (!rep->layers_judged && !rep->layers_probed) {
		rep->overflow_dlids = layers_beyond(f, r, r->sl_by_pair, rep->max_vls);
		snprintf(beyond, sizeof(beyond), " (%s%u destination LIDs do not fit)",
			 rep->layers_capped ? "at least " : "", rep->overflow_dlids);
	}
	dfsssp_layers_needed_text(rep, needs, sizeof(needs));
	fab_error_set(err,
		      "%s, %u VL%s available%s; raise the VLs (dfsssp_vls, qos) or use another "
		      "engine",
		      needs, rep->max_vls, rep->max_vls == 1 ? "" : "s", beyond);
	return -1;
}

static int assign_layers(const struct dfsssp *d, struct routing *r, struct dfsssp_report *rep,
			 struct fab_error *err)
{
	struct layers_watch watch = { .overflow_likely = d->o->overflow_likely,
				      .arg = d->o->overflow_likely_arg,
				      .judge = d->o->judge_overflow,
				      .probe_from = d->o->probe_from,
				      .progress = d->o->progress };
	struct layers_result lr;
	struct mcast_tree mc;
	unsigned sl;
	int rc;

	if (d->o->fit_whole) {
		sn_assert(rep->max_vls == 1 && !d->o->no_mcast_tree);
		rep->vls_used = r->vls_used = 1;
		memset(r->sl2vl_uniform, 0, sizeof(r->sl2vl_uniform));
		return 0;
	}
	if (routing_alloc_sl_by_pair(r, d->f)) {
		fab_error_set(err, "out of memory for the path SL table");
		return -1;
	}
	/* Layer 0 is SL 0 and VL 0, where multicast groups of SL 0 go (mcasttree.h). */
	memset(&mc, 0, sizeof(mc));
	if (!d->o->no_mcast_tree && mcast_tree_choose(d->f, &mc)) {
		fab_error_set(err, "out of memory for the multicast tree");
		return -1;
	}
	/* Layers past the VLs would go unused: the fallback keeps whole destinations only. */
	rc = layers_assign(d->f, r, r->sl_by_pair, d->o->no_mcast_tree ? NULL : &mc, rep->max_vls,
			   &watch, &lr, err);
	mcast_tree_free(&mc);
	if (rc)
		return -1;
	rep->layers_needed = lr.needed;
	rep->layers_capped = lr.capped;
	rep->layers_judged = lr.judged;
	rep->layers_probed = lr.probed;
	rep->paths = lr.paths;
	rep->moved = lr.moved;
	rep->cycles = lr.cycles;
	if (lr.capped || lr.needed > rep->max_vls)
		return layers_overflow(d->f, r, rep, err);
	layers_spread(d->f, r, r->sl_by_pair, &lr, rep->max_vls);
	rep->vls_used = rep->max_vls;
	/* SLs and VLs are numbered below 16. */
	sn_assert(rep->vls_used >= 1 && rep->vls_used < ROUTING_MAX_SL);
	/* SL = VL on the layers' VLs; unused SLs stay on VL 0 like sar-updn's. */
	memset(r->sl2vl_uniform, 0, sizeof(r->sl2vl_uniform));
	for (sl = 0; sl < rep->vls_used; sl++)
		r->sl2vl_uniform[sl] = (uint8_t)sl;
	r->vls_used = rep->vls_used;
	return 0;
}

int dfsssp_route(const struct fabric *f, const struct dfsssp_opts *o, struct routing *r,
		 struct dfsssp_report *rep, struct fab_error *err)
{
	struct dfsssp d = { .f = f, .o = o, .r = r };
	uint64_t key = 0;
	double t0 = sn_now();
	int ret = -1;

	memset(rep, 0, sizeof(*rep));
	rep->max_vls = o->max_vls < 1 ? 1 : o->max_vls > 15 ? 15 : o->max_vls;
	if (fabric_check_routable(f, err))
		return -1;
	if (dfsssp_alloc(&d) || order_destinations(&d)) {
		fab_error_set(err, "out of memory");
		goto out;
	}
	if (memo_begin(&d, rep, &key)) {
		fab_error_set(err, "out of memory");
		goto out;
	}
	r->sl_mode = ROUTING_SL_UNIFORM;
	r->sl_uniform = 0;
	if (route_all(&d, rep, err))
		goto out;
	rep->paths_seconds = sn_now() - t0;
	t0 = sn_now();
	ret = assign_layers(&d, r, rep, err);
	rep->layers_seconds = sn_now() - t0;
	if (!ret && o->memo) {
		/* The memo takes the signatures over; a memo that cannot be kept is dropped. */
		if (dfsssp_memo_store(o->memo, key, r, d.g.nsw, d.sig))
			dfsssp_memo_free(o->memo);
		d.sig = NULL;
	}
out:
	if (ret && o->memo)
		dfsssp_memo_free(o->memo);
	dfsssp_free(&d);
	return ret;
}
