/*
 * vlassign.c - virtual-layer assignment and balancing of DFSSSP's paths (see vlassign.h).
 *
 * Cycle search is an iterative three-colour DFS over channels.  Breaking a cycle only removes
 * dependencies from the layer being searched, so channels already finished (black) cannot have
 * gained a path to a cycle: after a break the DFS path is cut back to where it is still intact
 * and the search resumes, which keeps a layer's whole search near O(channels + dependencies)
 * plus the path moves, instead of restarting from scratch for every cycle.  The path moves of a
 * broken dependency go a batch of destination LIDs at a time (move_batch), walking the LIDs'
 * trees backwards; where no neighbour routes a LID through a switch (feeds), the walk reads none.
 */
#include "engines/dfsssp/vlassign.h"
#include "fabric/swgraph.h"
#include "lib/assert.h"

#include <stdlib.h>
#include <string.h>

enum {
	WHITE = 0,
	GRAY,
	BLACK
};

/* A batch walk (see move_batch) reached y from x (over channel in, y to x) for the LIDs in bits. */
struct reach {
	uint64_t bits;
	uint32_t y, x, in;
};

struct lay {
	const struct fabric *f;
	const struct routing *r;
	struct swgraph g;
	uint8_t *layer;
	uint32_t lft_len;
	uint32_t *dep_off; /* [nsw + 1]: first dependency of each switch; deg^2 of them */
	uint32_t ndeps;
	uint32_t *cnt[LAYERS_MAX]; /* pairs per dependency, allocated when a layer is first used */
	uint8_t *pinned;	   /* [ndeps]: the multicast tree's turns, kept in layer 0 */
	uint32_t *nsrc;		   /* [nsw] source LIDs per switch */
	uint32_t *dst_sw;	   /* [lft_len] switch delivering each LID */
	uint32_t *ch_off;	   /* CSR over channels: the LIDs routed over each */
	uint16_t *ch_lid;
	uint8_t *color;
	uint32_t *stack, *iter, *queue;
	uint64_t *pend;	     /* [nsw]: see move_batch */
	uint32_t *weight;    /* [nsw * 64]: paths moved through each switch, by batch bit */
	struct reach *reach; /* [nsw * 64]: the batch walk's steps, in order */
	uint8_t *port_of;    /* [channels]: port number the channel leaves by */
	/*
	 * [nsw * feeds_words]: bit dlid of switch x's row set when some neighbour routes dlid to x,
	 * so that the walks up a LID's tree skip the neighbours of the switches where it starts.
	 */
	uint64_t *feeds;
	uint32_t feeds_words;
	unsigned limit; /* layers allowed (0: any); a cycle in the last one ends the search */
	/*
	 * 0: every destination LID's paths.  k > 0: a sample, the paths towards the lowest LID of
	 * every k-th switch delivering any (see probe_overflows).
	 */
	uint32_t sample_every;
	struct layers_result *res;
};

static void lay_free(struct lay *l)
{
	unsigned i;

	swgraph_free(&l->g);
	for (i = 0; i < LAYERS_MAX; i++)
		free(l->cnt[i]);
	free(l->pinned);
	free(l->dep_off);
	free(l->nsrc);
	free(l->dst_sw);
	free(l->ch_off);
	free(l->ch_lid);
	free(l->color);
	free(l->stack);
	free(l->iter);
	free(l->queue);
	free(l->pend);
	free(l->port_of);
	free(l->feeds);
	free(l->weight);
	free(l->reach);
}

/*
 * Leaves only the sample's destinations: the lowest LID of every sample_every-th switch that
 * delivers any.  The others count as no destination (FAB_NONE); sources keep all their LIDs.
 */
static int keep_sample(struct lay *l)
{
	uint8_t *taken = calloc(l->g.nsw + 1, 1);
	uint32_t lid, t;

	if (!taken)
		return -1;
	for (lid = 1; lid < l->lft_len; lid++) {
		t = l->dst_sw[lid];
		if (t == FAB_NONE)
			continue;
		if (taken[t] || t % l->sample_every)
			l->dst_sw[lid] = FAB_NONE;
		else
			l->res->probed++;
		taken[t] = 1;
	}
	free(taken);
	return 0;
}

static int lay_alloc(struct lay *l)
{
	const struct fabric *f = l->f;
	uint32_t s, lid, e, nsw = f->nswitches;
	uint64_t total = 0;

	if (swgraph_build(&l->g, f))
		return -1;
	l->dep_off = malloc(sizeof(*l->dep_off) * (nsw + 1));
	l->nsrc = calloc(nsw + 1, sizeof(*l->nsrc));
	l->dst_sw = malloc(sizeof(*l->dst_sw) * l->lft_len);
	l->color = malloc(l->g.ne + 1);
	l->stack = malloc(sizeof(*l->stack) * (l->g.ne + 1));
	l->iter = malloc(sizeof(*l->iter) * (l->g.ne + 1));
	l->queue = malloc(sizeof(*l->queue) * (nsw + 1));
	l->pend = calloc(nsw + 1, sizeof(*l->pend));
	l->port_of = malloc(l->g.ne + 1);
	l->weight = malloc(sizeof(*l->weight) * 64 * (nsw + 1));
	l->reach = malloc(sizeof(*l->reach) * 64 * (nsw + 1));
	if (!l->dep_off || !l->nsrc || !l->dst_sw || !l->color || !l->stack || !l->iter ||
	    !l->queue || !l->pend || !l->port_of || !l->weight || !l->reach)
		return -1;
	for (e = 0; e < l->g.ne; e++)
		l->port_of[e] = (uint8_t)swgraph_port_num(f, e);
	for (s = 0; s < nsw; s++) {
		uint64_t deg = f->sw_adj_off[s + 1] - f->sw_adj_off[s];

		l->dep_off[s] = (uint32_t)total;
		total += deg * deg;
		if (total > UINT32_MAX / 2)
			return -1;
	}
	l->dep_off[nsw] = (uint32_t)total;
	l->ndeps = (uint32_t)total;
	for (lid = 0; lid < l->lft_len; lid++) {
		l->dst_sw[lid] = lid ? routing_lid_switch(f, lid) : FAB_NONE;
		sn_assert(l->dst_sw[lid] == FAB_NONE || l->dst_sw[lid] < nsw);
		if (l->dst_sw[lid] != FAB_NONE)
			l->nsrc[l->dst_sw[lid]]++;
	}
	if (l->sample_every && keep_sample(l))
		return -1;
	l->cnt[0] = calloc(l->ndeps + 1, sizeof(uint32_t));
	return l->cnt[0] ? 0 : -1;
}

/* Dependency at switch x from arriving channel in (leaving the previous switch) to out. */
static inline uint32_t dep_id(const struct lay *l, uint32_t x, uint32_t in, uint32_t out)
{
	const uint32_t *off = l->f->sw_adj_off;
	uint32_t deg = off[x + 1] - off[x];

	/* in arrives at x and out leaves it: the pair indexes x's deg^2 block. */
	sn_assert(l->g.to[in] == x && out >= off[x] && out < off[x + 1]);
	return l->dep_off[x] + (l->g.rev[in] - off[x]) * deg + (out - off[x]);
}

/* Whether dependency d is in layer L's graph: a path induces it, or it is pinned there. */
static inline int dep_present(const struct lay *l, unsigned L, uint32_t d)
{
	return l->cnt[L][d] || (L == 0 && l->pinned && l->pinned[d]);
}

/*
 * Adds path (s, dlid)'s dependencies, each weighing s's source LIDs, to counts.  Returns -1 when
 * the LFTs do not lead from s to the destination switch.
 */
static int count_path(const struct lay *l, uint32_t s, uint32_t dlid, uint32_t *counts)
{
	const struct fabric *f = l->f;
	uint32_t t = l->dst_sw[dlid], x = s, in = FAB_NONE, hops = 0;

	while (x != t) {
		uint32_t e = swgraph_channel(f, &l->g, x, routing_lft(l->r, x)[dlid]);

		if (e == FAB_NONE || ++hops > l->g.nsw)
			return -1;
		if (in != FAB_NONE) {
			uint32_t d = dep_id(l, x, in, e);

			sn_assert(d < l->ndeps);
			counts[d] += l->nsrc[s];
		}
		in = e;
		x = l->g.to[e];
	}
	return 0;
}

/*
 * LIDs by the channel their route leaves each switch on, so that finding the paths of one
 * dependency looks at one channel's LIDs instead of every LID for every cycle broken.
 */
static int index_channels(struct lay *l)
{
	const struct fabric *f = l->f;
	uint32_t s, dlid, e, *fill;
	uint64_t total = 0;

	l->ch_off = calloc(l->g.ne + 2, sizeof(*l->ch_off));
	l->feeds_words = (l->lft_len + 63) / 64;
	l->feeds = calloc((size_t)l->g.nsw * l->feeds_words + 1, sizeof(*l->feeds));
	if (!l->ch_off || !l->feeds)
		return -1;
	for (s = 0; s < l->g.nsw; s++) {
		const uint8_t *row = routing_lft(l->r, s);

		for (dlid = 1; dlid < l->lft_len; dlid++) {
			if (l->dst_sw[dlid] == FAB_NONE)
				continue;
			e = swgraph_channel(f, &l->g, s, row[dlid]);
			if (e != FAB_NONE) {
				uint64_t *fed = &l->feeds[(size_t)l->g.to[e] * l->feeds_words];

				fed[dlid / 64] |= 1ull << (dlid % 64);
				l->ch_off[e + 1]++;
				total++;
			}
		}
	}
	if (total >= UINT32_MAX)
		return -1;
	for (e = 0; e < l->g.ne; e++)
		l->ch_off[e + 1] += l->ch_off[e];
	l->ch_lid = malloc(sizeof(*l->ch_lid) * (total + 1));
	fill = malloc(sizeof(*fill) * (l->g.ne + 1));
	if (!l->ch_lid || !fill) {
		free(fill);
		return -1;
	}
	sn_assert(l->ch_off[l->g.ne] == total);
	memcpy(fill, l->ch_off, sizeof(*fill) * (l->g.ne + 1));
	for (s = 0; s < l->g.nsw; s++) {
		const uint8_t *row = routing_lft(l->r, s);

		for (dlid = 1; dlid < l->lft_len; dlid++) {
			if (l->dst_sw[dlid] == FAB_NONE)
				continue;
			e = swgraph_channel(f, &l->g, s, row[dlid]);
			if (e != FAB_NONE) {
				/* The second pass finds what the first counted. */
				sn_assert(fill[e] < l->ch_off[e + 1]);
				l->ch_lid[fill[e]++] = (uint16_t)dlid;
			}
		}
	}
	free(fill);
	return 0;
}

static int fill_layer0(struct lay *l, struct fab_error *err)
{
	uint32_t s, dlid;

	for (s = 0; s < l->g.nsw; s++) {
		for (dlid = 1; dlid < l->lft_len; dlid++) {
			if (l->dst_sw[dlid] == FAB_NONE || l->dst_sw[dlid] == s)
				continue;
			l->res->paths++;
			if (count_path(l, s, dlid, l->cnt[0])) {
				fab_error_set(
					err, "switch 0x%016llx has no route to LID %u",
					(unsigned long long)l->f->nodes[l->f->switches[s]].guid,
					dlid);
				return -1;
			}
		}
	}
	return 0;
}

/* Up to 64 LIDs of one channel, in LID order, whose trees a backward walk follows together. */
struct batch {
	uint32_t dlid[64];
	unsigned n;
};

/*
 * The next (up to) 64 LIDs routed over a then out of v through port pb, from ch_lid[*i] on.  They
 * may lie far apart: a batch of LIDs within 64 of each other, so that a switch's entries for them
 * shared a cache line, held one LID on average on the random graph of 1,000 switches, and the
 * walks shared by 64 LIDs wherever they lie cost less than those cache lines saved (layering of
 * that graph with 8 VLs 6.5 s to 6.2 s, dragonfly a16 4.6 to 4.3 s, OFT k28 15.0 to 14.1 s; a
 * sample of the destinations, one per second switch, gains most).
 */
static void next_batch(const struct lay *l, uint32_t a, uint32_t v, uint8_t pb, uint32_t *i,
		       struct batch *bt)
{
	const uint8_t *lv = routing_lft(l->r, v);

	bt->n = 0;
	for (; *i < l->ch_off[a + 1] && bt->n < 64; (*i)++) {
		uint32_t dlid = l->ch_lid[*i];

		if (lv[dlid] == pb && l->dst_sw[dlid] != FAB_NONE)
			bt->dlid[bt->n++] = dlid;
	}
}

/*
 * x's paths to the LIDs in bits that are in layer L go to L + 1; each such path's weight (x's
 * source LIDs) starts the sum of what moves through x (weight, 64 per switch, by bit).
 */
static void take_paths(struct lay *l, unsigned L, const struct batch *bt, uint32_t x, uint64_t bits)
{
	uint8_t *row = &l->layer[(size_t)x * l->lft_len];
	uint32_t *w = &l->weight[(size_t)x * 64];

	for (; bits; bits &= bits - 1) {
		unsigned j = (unsigned)__builtin_ctzll(bits);

		w[j] = 0;
		if (row[bt->dlid[j]] != L)
			continue;
		row[bt->dlid[j]] = (uint8_t)(L + 1);
		w[j] = l->nsrc[x];
		l->res->moved++;
	}
}

/* Which of bits' LIDs some neighbour of x routes through x (see feeds). */
static uint64_t fed_lids(const struct lay *l, const struct batch *bt, uint32_t x, uint64_t bits)
{
	const uint64_t *fed = &l->feeds[(size_t)x * l->feeds_words];
	uint64_t m = 0;

	for (; bits; bits &= bits - 1) {
		unsigned j = (unsigned)__builtin_ctzll(bits);
		uint32_t dlid = bt->dlid[j];

		if (fed[dlid / 64] >> (dlid % 64) & 1)
			m |= 1ull << j;
	}
	return m;
}

/* Which of bits' LIDs y, a neighbour of x over channel back (y to x), routes through x. */
static uint64_t routed_through(const struct lay *l, const struct batch *bt, uint32_t y,
			       uint8_t back_port, uint64_t bits)
{
	const uint8_t *row = routing_lft(l->r, y);
	uint64_t m = 0;

	for (; bits; bits &= bits - 1) {
		unsigned j = (unsigned)__builtin_ctzll(bits);

		if (row[bt->dlid[j]] == back_port)
			m |= 1ull << j;
	}
	return m;
}

/* Moves w paths' dependency at x, from channel in to the channel x routes dlid on. */
static int move_dep(struct lay *l, unsigned L, uint32_t x, uint32_t in, uint32_t dlid, uint32_t w)
{
	uint32_t out = swgraph_channel(l->f, &l->g, x, routing_lft(l->r, x)[dlid]), d;

	if (out == FAB_NONE)
		return -1;
	d = dep_id(l, x, in, out);
	/* The paths leave the layer they were counted in: the counts balance. */
	sn_assert(l->cnt[L][d] >= w);
	l->cnt[L][d] -= w;
	l->cnt[L + 1][d] += w;
	return 0;
}

/* The w paths to dlid that passed x (then channel in): their dependencies on to the end. */
static int move_tail(struct lay *l, unsigned L, uint32_t x, uint32_t in, uint32_t dlid, uint32_t w)
{
	uint32_t t = l->dst_sw[dlid], hops = 0;

	for (; x != t; x = l->g.to[in]) {
		if (move_dep(l, L, x, in, dlid, w) || ++hops > l->g.nsw)
			return -1;
		in = swgraph_channel(l->f, &l->g, x, routing_lft(l->r, x)[dlid]);
	}
	return 0;
}

/*
 * The walk's reaches backwards, children before parents: each adds what moved through y (its own
 * and its predecessors' paths) to the dependency at x and to x's sum.
 */
static int move_reached(struct lay *l, unsigned L, const struct batch *bt, uint32_t nreach)
{
	while (nreach--) {
		const struct reach *r = &l->reach[nreach];
		uint32_t *wy = &l->weight[(size_t)r->y * 64], *wx = &l->weight[(size_t)r->x * 64];
		uint64_t bits;

		for (bits = r->bits; bits; bits &= bits - 1) {
			unsigned j = (unsigned)__builtin_ctzll(bits);

			if (!wy[j])
				continue;
			if (move_dep(l, L, r->x, r->in, bt->dlid[j], wy[j]))
				return -1;
			wx[j] += wy[j];
		}
	}
	return 0;
}

/* y was reached from x over channel in for the LIDs in m: logged, and queued if it was not. */
static void reached_from(struct lay *l, uint32_t y, uint32_t x, uint32_t in, uint64_t m,
			 uint32_t *nreach, uint32_t *tail)
{
	uint32_t ring = l->g.nsw + 1;

	/*
	 * A LID's route leaves y once, so it reaches y from one x only, and each (switch, LID) is
	 * logged once: fill_layer0 found every route loop-free.
	 */
	sn_assert(!(l->pend[y] & m) && *nreach < l->g.nsw * 64);
	l->reach[(*nreach)++] = (struct reach){ .bits = m, .y = y, .x = x, .in = in };
	if (!l->pend[y]) {
		l->queue[*tail] = y;
		*tail = (*tail + 1) % ring;
	}
	l->pend[y] |= m;
}

/*
 * Moves the paths of layer L towards the batch's LIDs that pass u (then a and b).  The sources
 * are u and the switches whose routes reach it, found by walking the LIDs' trees backwards
 * together: the walk visits each neighbour once for the batch instead of once per LID (one
 * visit per neighbour per LID took 60% of the layering's time on a dragonfly of 16 groups).  The
 * moved paths' dependencies are then summed up the trees, so each dependency is counted once per
 * LID rather than once per path through it.  Each (switch, LID) pair is reached once, over its
 * own route: the paths and counts moved are those of moving each path on its own.  pend holds,
 * for each switch, the bits of the LIDs whose predecessors are not looked at yet; a switch is
 * queued while it has any.
 */
static int move_batch(struct lay *l, unsigned L, const struct batch *bt, uint32_t a)
{
	const struct fabric *f = l->f;
	uint32_t u = l->g.from[a], head = 0, tail = 0, nreach = 0, ring = l->g.nsw + 1, j;

	/* Every walk ends with no bit pending anywhere. */
	sn_assert(!l->pend[u]);
	l->pend[u] = bt->n == 64 ? ~0ull : (1ull << bt->n) - 1;
	l->queue[tail++] = u;
	while (head != tail) {
		uint32_t x = l->queue[head], e;
		uint64_t bits = l->pend[x], m;

		head = (head + 1) % ring;
		l->pend[x] = 0;
		take_paths(l, L, bt, x, bits);
		/* Most switches of a tree are leaves: no neighbour need be read there. */
		bits = fed_lids(l, bt, x, bits);
		for (e = f->sw_adj_off[x]; bits && e < f->sw_adj_off[x + 1]; e++) {
			m = routed_through(l, bt, l->g.to[e], l->port_of[l->g.rev[e]], bits);
			if (m)
				reached_from(l, l->g.to[e], x, l->g.rev[e], m, &nreach, &tail);
		}
	}
	if (move_reached(l, L, bt, nreach))
		return -1;
	for (j = 0; j < bt->n; j++) {
		uint32_t w = l->weight[(size_t)u * 64 + j];

		if (w && move_tail(l, L, l->g.to[a], a, bt->dlid[j], w))
			return -1;
	}
	return 0;
}

/*
 * Moves every path of layer L that induces the dependency a -> b (channel a into switch v, then
 * b) to layer L + 1, for the LIDs routed over a then b, a batch at a time.
 */
static int move_dependency(struct lay *l, unsigned L, uint32_t a, uint32_t b)
{
	uint32_t v = l->g.to[a], i = l->ch_off[a];
	uint8_t pb = l->port_of[b];
	struct batch bt;

	sn_assert(L + 1 < LAYERS_MAX && l->g.from[b] == v);
	while (i < l->ch_off[a + 1]) {
		next_batch(l, a, v, pb, &i, &bt);
		if (bt.n && move_batch(l, L, &bt, a))
			return -1;
	}
	return 0;
}

/* The cycle is cyc[0] -> cyc[1] -> ... -> cyc[n-1] -> cyc[0]; breaks its weakest dependency. */
static int break_cycle(struct lay *l, unsigned L, const uint32_t *cyc, uint32_t n)
{
	uint32_t i, best = 0, best_cnt = UINT32_MAX;

	/* A channel never depends on itself: a cycle has two channels at least. */
	sn_assert(n >= 2 && L + 1 < LAYERS_MAX);
	for (i = 0; i < n; i++) {
		uint32_t a = cyc[i], b = cyc[(i + 1) % n], d = dep_id(l, l->g.to[a], a, b);
		uint32_t c = l->cnt[L][d];

		/* The tree's turns stay: alone they form no cycle, so one of the others breaks it.
		 */
		if (L == 0 && l->pinned && l->pinned[d])
			continue;
		if (c < best_cnt) {
			best_cnt = c;
			best = i;
		}
	}
	if (!l->cnt[L + 1]) {
		l->cnt[L + 1] = calloc(l->ndeps + 1, sizeof(uint32_t));
		if (!l->cnt[L + 1])
			return -1;
	}
	l->res->cycles++;
	if (move_dependency(l, L, cyc[best], cyc[(best + 1) % n]))
		return -1;
	/* Every inducing path moved, or the search would find this cycle forever. */
	return l->cnt[L][dep_id(l, l->g.to[cyc[best]], cyc[best], cyc[(best + 1) % n])] ? -1 : 0;
}

/*
 * After a break, the DFS path stays valid up to its first dependency that lost all its paths
 * in this layer; the channels above go back to white and the search goes on from there.
 */
static uint32_t valid_depth(const struct lay *l, unsigned L, uint32_t depth)
{
	uint32_t i;

	for (i = 1; i < depth; i++) {
		uint32_t a = l->stack[i - 1], b = l->stack[i];

		if (!dep_present(l, L, dep_id(l, l->g.to[a], a, b)))
			break;
	}
	return i < depth ? i : depth;
}

/*
 * Returns 0 when layer L is acyclic, 1 when it has a cycle and no layer is left, -1 on error.
 * In the last layer the limit allows, the first cycle found is broken and the search ends: its
 * paths are left beyond the limit, which is all the caller needs, as the fitting that follows
 * never uses unfinished layers.  On the random graph of 1,000 switches and 10,000 hosts with 8
 * VLs the layering took 7.5 s instead of 8.0 s, for the same tables.
 */
static int make_acyclic(struct lay *l, unsigned L)
{
	const uint32_t *off = l->f->sw_adj_off;
	uint32_t root;

	memset(l->color, WHITE, l->g.ne);
	for (root = 0; root < l->g.ne; root++) {
		uint32_t depth = 0;

		if (l->color[root] != WHITE)
			continue;
		l->stack[depth] = root;
		l->iter[depth++] = 0;
		l->color[root] = GRAY;
		while (depth) {
			uint32_t c = l->stack[depth - 1], v = l->g.to[c], e2, k, keep;

			if (off[v] + l->iter[depth - 1] == off[v + 1]) {
				l->color[c] = BLACK;
				depth--;
				continue;
			}
			e2 = off[v] + l->iter[depth - 1]++;
			if (!dep_present(l, L, dep_id(l, v, c, e2)) || l->color[e2] == BLACK)
				continue;
			if (l->color[e2] == WHITE) {
				/* Gray channels are on the stack, each once. */
				sn_assert(depth < l->g.ne);
				l->color[e2] = GRAY;
				l->stack[depth] = e2;
				l->iter[depth++] = 0;
				continue;
			}
			if (L + 1 >= LAYERS_MAX)
				return 1;
			for (k = depth; k-- > 0 && l->stack[k] != e2;)
				;
			sn_assert(k < depth);
			if (break_cycle(l, L, l->stack + k, depth - k))
				return -1;
			if (l->limit && L + 1 >= l->limit)
				return 1;
			keep = valid_depth(l, L, depth);
			while (depth > keep)
				l->color[l->stack[--depth]] = WHITE;
		}
	}
	return 0;
}

static int pin_turn(void *arg, uint32_t in_port, uint32_t out_port)
{
	struct lay *l = arg;
	uint32_t in = l->g.adj_pos[in_port], out = l->g.adj_pos[out_port];

	sn_assert(in != FAB_NONE && out != FAB_NONE);
	l->pinned[dep_id(l, l->g.to[in], in, out)] = 1;
	return 0;
}

/*
 * Pins every turn of the multicast tree t in layer 0.  A tree's turns form no cycle, so every
 * cycle of layer 0 still holds a path's dependency to break.
 */
static int pin_tree(struct lay *l, const struct mcast_tree *t)
{
	l->pinned = calloc(l->ndeps + 1, 1);
	if (!l->pinned)
		return -1;
	return mcast_tree_turns(l->f, t, pin_turn, l);
}

static void count_pairs(struct lay *l)
{
	uint32_t s, dlid;

	memset(l->res->pairs, 0, sizeof(l->res->pairs));
	l->res->needed = 1;
	for (s = 0; s < l->g.nsw; s++) {
		const uint8_t *row = l->layer + (size_t)s * l->lft_len;

		for (dlid = 1; dlid < l->lft_len; dlid++) {
			if (l->dst_sw[dlid] == FAB_NONE || l->dst_sw[dlid] == s)
				continue;
			sn_assert(row[dlid] < LAYERS_MAX);
			l->res->pairs[row[dlid]] += l->nsrc[s];
			if (row[dlid] + 1u > l->res->needed)
				l->res->needed = row[dlid] + 1u;
		}
	}
}

/*
 * Whether every layer's dependency counts are those of the paths its cells hold, counted afresh
 * (for sn_expensive_checks(): move_batch moves the counts of many paths at once).
 */
static int counts_agree(const struct lay *l)
{
	uint32_t *fresh = malloc(sizeof(*fresh) * (l->ndeps + 1)), s, dlid;
	unsigned L;
	int ok = fresh != NULL;

	for (L = 0; ok && L < LAYERS_MAX && l->cnt[L]; L++) {
		memset(fresh, 0, sizeof(*fresh) * l->ndeps);
		for (s = 0; s < l->g.nsw; s++)
			for (dlid = 1; dlid < l->lft_len; dlid++)
				if (l->dst_sw[dlid] != FAB_NONE && l->dst_sw[dlid] != s &&
				    l->layer[(size_t)s * l->lft_len + dlid] == L &&
				    count_path(l, s, dlid, fresh))
					ok = 0;
		ok = ok && !memcmp(fresh, l->cnt[L], sizeof(*fresh) * l->ndeps);
	}
	free(fresh);
	return ok;
}

/* Paths that entered layer L (>= 1), of into[] as watch_layers keeps it. */
static uint64_t entered(const uint64_t *into, unsigned L)
{
	/* Moves are counted as they happen: what entered L is the growth since L - 1 started. */
	sn_assert(L >= 1 && into[L] >= into[L - 1]);
	return into[L] - into[L - 1];
}

/*
 * Layers a share of all paths takes to fall under 3% when each layer keeps ratio of the paths of
 * the one before (at most 64).
 */
static unsigned layers_to_few(double share, double ratio)
{
	unsigned k = 0;

	while (share >= 0.03 && k < 64) {
		share *= ratio;
		k++;
	}
	return k;
}

/*
 * Whether the layering, about to start layer L, is judged to overflow its limit.  Layerings that
 * need many layers keep a steady share of each layer's paths for the next (0.6 to 0.85) until
 * about 3% of all paths are left, and then empty within about four layers.  So from the third
 * layer on, with two layers of the limit still to come after L, when L holds at least 3/5 of the
 * paths of the layer before (and from the fourth layer on, that layer of the one before it too):
 * L, plus the layers the paths entering L take to fall under 3% at the lower of those shares,
 * plus four, is an estimate of the layers needed; the layering is judged to overflow when it is
 * twice the limit or more.
 *
 * The highest estimate against what the layering needed, on the layerings measured (offline,
 * 15 VLs to see their end): 4x4x4 torus 11 for 10 layers, 5x5x5 torus 15 for 15, 8x8 torus 11
 * for 12, random graph of 200 switches of degree 4 14 for 14.  Layerings that overflow 8 VLs
 * were estimated at the third layer at 16 to 29 layers (random graph of 1,000 switches of degree
 * 12, 6x6x6 to 12x12x12 tori), so they stop there, after two of their eight layers.  The first
 * layers take the longest: on the 16x16x16 torus with 1% of its links removed the first three
 * took 187 s of the layering's 300.  Layerings that fit 8 layers never passed the ratios (fat
 * trees, dragonflies, Multi-Layer Full-Mesh, Orthogonal Fat Tree and Dragonfly+ of up to 44,000
 * LIDs: their layers keep 0.04 to 0.53 of the paths before).  A misjudgement costs balance, not
 * correctness: the routes are then those of an overflow, verified as any.
 */
static int judged_overflowing(const struct lay *l, const uint64_t *into, unsigned L)
{
	uint64_t now, before, earlier;
	double ratio;

	if (L < 2 || L + 2 > l->limit || !l->res->paths)
		return 0;
	now = entered(into, L);
	before = entered(into, L - 1);
	if (!now || now * 5 < before * 3)
		return 0;
	ratio = (double)now / (double)before;
	if (L >= 3) {
		earlier = entered(into, L - 2);
		if (before * 5 < earlier * 3)
			return 0;
		if ((double)before / (double)earlier < ratio)
			ratio = (double)before / (double)earlier;
	}
	return L + layers_to_few((double)now / (double)l->res->paths, ratio) + 4 >= 2 * l->limit;
}

/* Whether an overflow looks likely as layer L (> 0) starts: see struct layers_watch. */
static int overflow_likely(const struct lay *l, const uint64_t *into, unsigned L)
{
	if (L == 1)
		return l->limit <= 2 ? into[1] > 0 : entered(into, 1) * 10 >= l->res->paths * 7;
	return entered(into, L) * 2 >= entered(into, L - 1);
}

/*
 * Layer L (> 0) starts, after into[L] path moves.  Tells watch's progress, and its
 * overflow_likely once (*told) when an overflow looks likely.  1 when the layering is to stop,
 * judged to overflow (watch->judge), else 0.
 */
static int watch_layers(const struct lay *l, unsigned L, uint64_t *into,
			const struct layers_watch *watch, const char *phase, int *told)
{
	int likely;

	if (L == 0 || !watch)
		return 0;
	into[L] = l->res->moved;
	progress_step(watch->progress, phase, L, l->limit ? l->limit : LAYERS_MAX);
	if (!l->limit)
		return 0;
	likely = overflow_likely(l, into, L);
	if (likely && watch->overflow_likely && !*told) {
		watch->overflow_likely(watch->arg, l->r);
		*told = 1;
	}
	return watch->judge && judged_overflowing(l, into, L);
}

/*
 * Layers l's paths (l->f, r, layer, limit, sample_every and res set) as layers_assign describes,
 * reporting progress as phase.  0, or -1 with err set.
 */
static int layer_paths(struct lay *l, const struct mcast_tree *reserve,
		       const struct layers_watch *watch, const char *phase, struct fab_error *err)
{
	struct layers_result *res = l->res;
	uint64_t into[LAYERS_MAX] = { 0 };
	unsigned L, bound = 0;
	int rc, told = 0;

	if (lay_alloc(l) || index_channels(l)) {
		fab_error_set(err, "out of memory for the channel dependency graph");
		return -1;
	}
	if (reserve && pin_tree(l, reserve)) {
		fab_error_set(err, "out of memory for the multicast tree's turns");
		return -1;
	}
	if (fill_layer0(l, err))
		return -1;
	progress_note(watch ? watch->progress : NULL, phase);
	for (L = 0; L < LAYERS_MAX && l->cnt[L]; L++) {
		/* Paths left for a layer beyond the limit: no use in ordering them further. */
		if (l->limit && L >= l->limit) {
			res->capped = 1;
			bound = L + 1;
			break;
		}
		if (watch_layers(l, L, into, watch, phase, &told)) {
			res->capped = 1;
			res->judged = L;
			bound = l->limit + 1;
			break;
		}
		rc = make_acyclic(l, L);
		if (rc < 0) {
			fab_error_set(err, "layer %u: could not move the paths of a dependency", L);
			return -1;
		}
		if (rc > 0) {
			res->capped = 1;
			bound = l->limit && L + 1 >= l->limit ? l->limit + 1 : LAYERS_MAX + 1;
			break;
		}
	}
	sn_assert(!sn_expensive_checks() || counts_agree(l));
	count_pairs(l);
	if (res->capped && res->needed < bound)
		res->needed = bound;
	return 0;
}

/*
 * Whether the paths towards a sample of the destinations, the lowest LID of every
 * LAYERS_PROBE_EVERY-th switch, overflow the limit on their own (judged as the whole layering is,
 * or reaching the limit).  Any layering of all paths within the limit holds one of the sample's,
 * so a sample that does not fit says the whole will not either, and the layering of all paths,
 * minutes on the largest tori and random graphs, is not started.  1 when the sample overflows
 * (res then says so, with the sample's counts), else 0 with layer[] zero again: a sample that fits,
 * or could not be layered (no memory; the layering of all paths then says what it finds), says
 * nothing.
 */
static int probe_overflows(const struct fabric *f, const struct routing *r, uint8_t *layer,
			   const struct mcast_tree *reserve, unsigned limit,
			   const struct layers_watch *watch, struct layers_result *res)
{
	struct layers_watch sample_watch = *watch;
	struct fab_error err = { "" };
	struct layers_result pres = { 0 };
	struct lay p = { .f = f,
			 .r = r,
			 .layer = layer,
			 .lft_len = r->lft_len,
			 .limit = limit,
			 .sample_every = LAYERS_PROBE_EVERY,
			 .res = &pres };
	int rc;

	/* Only the layering of all paths tells that an overflow looks likely. */
	sample_watch.overflow_likely = NULL;
	rc = layer_paths(&p, reserve, &sample_watch, "layering a sample of paths", &err);
	lay_free(&p);
	if (rc || !pres.capped) {
		memset(layer, 0, (size_t)f->nswitches * r->lft_len);
		return 0;
	}
	*res = pres;
	res->judged = 0;
	res->needed = limit + 1;
	return 1;
}

/* Whether layers_assign first layers a sample (probe_overflows). */
static int probe_wanted(const struct fabric *f, unsigned limit, const struct layers_watch *watch)
{
	uint32_t from;

	if (!watch || !watch->judge || limit < 5)
		return 0;
	from = watch->probe_from ? watch->probe_from : LAYERS_PROBE_FROM;
	return f->nswitches >= from;
}

int layers_assign(const struct fabric *f, const struct routing *r, uint8_t *layer,
		  const struct mcast_tree *reserve, unsigned limit,
		  const struct layers_watch *watch, struct layers_result *res,
		  struct fab_error *err)
{
	struct lay l = {
		.f = f, .r = r, .layer = layer, .lft_len = r->lft_len, .limit = limit, .res = res
	};
	int rc;

	memset(res, 0, sizeof(*res));
	if (probe_wanted(f, limit, watch) &&
	    probe_overflows(f, r, layer, reserve, limit, watch, res))
		return 0;
	rc = layer_paths(&l, reserve, watch, "layering paths", err);
	lay_free(&l);
	return rc;
}

uint32_t layers_beyond(const struct fabric *f, const struct routing *r, const uint8_t *layer,
		       unsigned limit)
{
	uint32_t s, dlid, n = 0;

	for (dlid = 1; dlid < r->lft_len; dlid++) {
		for (s = 0; s < f->nswitches; s++) {
			if (layer[(size_t)s * r->lft_len + dlid] >= limit) {
				n++;
				break;
			}
		}
	}
	return n;
}

void layers_spread(const struct fabric *f, const struct routing *r, uint8_t *layer,
		   const struct layers_result *res, unsigned vls)
{
	unsigned split[LAYERS_MAX], base[LAYERS_MAX], rr[LAYERS_MAX] = { 0 }, L, spare;
	uint32_t s, dlid, *dst_sw = malloc(sizeof(*dst_sw) * r->lft_len);

	for (L = 0; L < LAYERS_MAX; L++)
		split[L] = L < res->needed ? 1 : 0;
	for (spare = res->needed; spare < vls; spare++) {
		unsigned best = 0;

		for (L = 1; L < res->needed; L++)
			if (res->pairs[L] * split[best] > res->pairs[best] * split[L])
				best = L;
		split[best]++;
	}
	for (L = 0, base[0] = 0; L + 1 < LAYERS_MAX; L++)
		base[L + 1] = base[L] + split[L];
	/* The layers fit the VLs (assign_layers checked), and the split uses them all. */
	sn_assert(res->needed <= vls && vls <= LAYERS_MAX &&
		  base[LAYERS_MAX - 1] + split[LAYERS_MAX - 1] == vls);
	for (dlid = 0; dst_sw && dlid < r->lft_len; dlid++)
		dst_sw[dlid] = dlid ? routing_lid_switch(f, dlid) : FAB_NONE;
	for (s = 0; s < f->nswitches; s++) {
		uint8_t *row = layer + (size_t)s * r->lft_len;

		for (dlid = 1; dlid < r->lft_len; dlid++) {
			L = row[dlid];
			/* Without the delivery table (no memory) every path keeps its layer's base.
			 */
			if (dst_sw && (dst_sw[dlid] == FAB_NONE || dst_sw[dlid] == s))
				continue;
			sn_assert(L < res->needed);
			row[dlid] = (uint8_t)(base[L] + (split[L] > 1 ? rr[L]++ % split[L] : 0));
			sn_assert(row[dlid] < vls);
		}
	}
	free(dst_sw);
}
