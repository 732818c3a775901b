/*
 * cdg.c - complete channel dependency graph with a dynamic topological order of its used turns
 * (see cdg.h).  A turn in->out needs ord[in] < ord[out].  When it is the other way round, a
 * forward search from out and a backward search from in, both bounded by the two labels as in
 * Pearce and Kelly's "A dynamic topological sort algorithm for directed acyclic graphs" (2006),
 * take one channel each in turn.  If they meet, the turn closes a cycle.  Otherwise the side
 * that runs out first holds every channel it can reach: the forward side moves just after in,
 * or the backward side just before out, in its old relative order.  One side is usually tiny:
 * on the 10x10x10 torus with 8 layers the smaller side of an accepted turn averaged 3 channels
 * and the two together 120, all of which Pearce and Kelly's reorder had to visit.
 *
 * Each side explores breadth-first.  Which side runs out first, and what
 * it holds, does not depend on the order; but when the turn closes a cycle the sides meet near
 * the middle of a shortest such path instead of wherever a depth-first walk wanders, and most
 * searches find a cycle (with 8 layers on a random graph of 2,000 switches 53% of them, with
 * 95% of the channels visited).  There it cut sar-nue's route time by a fifth.
 */
#include "engines/cdg.h"
#include "lib/assert.h"
#include "lib/sortu64.h"

#include <stdlib.h>
#include <string.h>

#define LABEL_LIMIT (1ull << 40) /* a label and a channel number share one 64-bit sort key */

/*
 * One side of the two-way search: its queue (queue[head..tail)) and every channel it has visited.
 * Each channel it reached notes the one it came from (struct cdg_chan), so that a cycle found can
 * be walked: a channel is reached by one side only, as the sides stop where they meet.
 */
struct search_side {
	uint32_t *queue, *visited;
	uint32_t head, tail, n;
};

/* The turn where the two sides met: a path out ... from, the turn from->to, to ... in. */
struct search_meet {
	uint32_t from, to;
};

static int is_used(uint8_t state)
{
	return state == CDG_USED || state == CDG_WET;
}

static int alloc_arrays(struct cdg *g)
{
	size_t n = g->nch ? g->nch : 1;

	g->turn_off = malloc((n + 1) * sizeof(uint32_t));
	g->rev_turn_off = malloc(n * sizeof(uint32_t));
	g->fqueue = malloc(n * sizeof(uint32_t));
	g->bqueue = malloc(n * sizeof(uint32_t));
	g->fwd = malloc(n * sizeof(uint32_t));
	g->bwd = malloc(n * sizeof(uint32_t));
	g->keys = malloc(n * sizeof(uint64_t));
	if (!g->turn_off || !g->rev_turn_off || !g->fqueue || !g->bqueue || !g->fwd || !g->bwd)
		return -1;
	return g->keys ? 0 : -1;
}

int cdg_build(struct cdg *g, const struct fabric *f)
{
	uint32_t c;
	uint64_t turns = 0;

	memset(g, 0, sizeof(*g));
	g->nsw = f->nswitches;
	g->nch = f->sw_adj_off[f->nswitches];
	g->sw_off = f->sw_adj_off;
	if (g->nch >= 1u << 24 || alloc_arrays(g) || swgraph_build(&g->sg, f))
		goto fail;
	g->tail = g->sg.from;
	g->head = g->sg.to;
	g->rev = g->sg.rev;
	g->port_ch = g->sg.adj_pos;
	for (c = 0; c < g->nch; c++) {
		uint32_t h = g->head[c];

		/* The backward search finds the channels into a switch as reverses of those out. */
		sn_assert(g->rev[c] < g->nch && g->rev[g->rev[c]] == c);
		sn_assert(g->tail[g->rev[c]] == h && g->head[g->rev[c]] == g->tail[c]);
		g->turn_off[c] = (uint32_t)turns;
		turns += f->sw_adj_off[h + 1] - f->sw_adj_off[h];
	}
	g->turn_off[g->nch] = (uint32_t)turns;
	for (c = 0; c < g->nch; c++)
		g->rev_turn_off[c] = g->turn_off[g->rev[c]];
	g->nturns = turns;
	if (turns > UINT32_MAX)
		goto fail;
	if (cdg_layer_alloc(g, &g->built))
		goto fail;
	cdg_select(g, NULL);
	return 0;
fail:
	cdg_free(g);
	return -1;
}

void cdg_free(struct cdg *g)
{
	swgraph_free(&g->sg);
	free(g->turn_off);
	free(g->rev_turn_off);
	cdg_layer_free(&g->built);
	free(g->fqueue);
	free(g->bqueue);
	free(g->fwd);
	free(g->bwd);
	free(g->keys);
	memset(g, 0, sizeof(*g));
}

/* Space between neighbouring labels after an even relabelling. */
static uint64_t label_step(uint32_t nch)
{
	return LABEL_LIMIT / ((uint64_t)nch + 1);
}

/* The order: channels linked in the sequence of seq[0..nch), evenly labelled. */
static void link_in_sequence(uint32_t nch, struct cdg_layer *l, const uint64_t *seq)
{
	uint64_t step = label_step(nch);
	uint32_t i, prev = nch, c;

	for (i = 0; i < nch; i++) {
		c = seq ? (uint32_t)(seq[i] & 0xffffff) : i;
		sn_assert(c < nch);
		l->ch[c].ord = (i + 1ull) * step;
		l->prev[c] = prev;
		l->next[prev] = c;
		prev = c;
	}
	l->next[prev] = nch;
	l->prev[nch] = prev;
}

static void reset_layer(const struct cdg *g, struct cdg_layer *l)
{
	memset(l->turn, CDG_UNUSED, g->nturns);
	link_in_sequence(g->nch, l, NULL);
}

int cdg_layer_alloc(const struct cdg *g, struct cdg_layer *l)
{
	l->turn = malloc(g->nturns ? g->nturns : 1);
	l->ch = calloc(g->nch ? g->nch : 1, sizeof(*l->ch));
	l->next = malloc(sizeof(uint32_t) * ((size_t)g->nch + 1));
	l->prev = malloc(sizeof(uint32_t) * ((size_t)g->nch + 1));
	if (!l->turn || !l->ch || !l->next || !l->prev) {
		cdg_layer_free(l);
		return -1;
	}
	reset_layer(g, l);
	l->epoch = g->epoch;
	return 0;
}

void cdg_layer_free(struct cdg_layer *l)
{
	free(l->turn);
	free(l->ch);
	free(l->next);
	free(l->prev);
	l->turn = NULL;
	l->ch = NULL;
	l->next = NULL;
	l->prev = NULL;
}

/* Every stamp in l's channels cleared: none can equal a later search's. */
static void clear_stamps(const struct cdg *g, struct cdg_layer *l)
{
	uint32_t c;

	for (c = 0; c < g->nch; c++)
		l->ch[c].seen = 0;
	l->epoch = g->epoch;
}

void cdg_select(struct cdg *g, struct cdg_layer *l)
{
	if (!l)
		l = &g->built;
	g->cur = l;
	g->turn = l->turn;
	g->ch = l->ch;
	g->next = l->next;
	g->prev = l->prev;
	/* Stamps from before the last wrap could equal new ones. */
	if (l->epoch != g->epoch)
		clear_stamps(g, l);
}

void cdg_reset(struct cdg *g)
{
	reset_layer(g, g->cur);
}

void cdg_layer_start_from(const struct cdg *g, struct cdg_layer *l)
{
	sn_assert(l->turn != g->turn);
	memset(l->turn, CDG_UNUSED, g->nturns);
	memcpy(l->ch, g->ch, sizeof(*l->ch) * g->nch);
	memcpy(l->next, g->next, sizeof(uint32_t) * ((size_t)g->nch + 1));
	memcpy(l->prev, g->prev, sizeof(uint32_t) * ((size_t)g->nch + 1));
	l->epoch = g->epoch;
}

int cdg_seed_order(struct cdg *g, const uint64_t *key)
{
	uint64_t *pairs = malloc(sizeof(uint64_t) * (g->nch ? g->nch : 1));
	uint32_t c;

	if (!pairs)
		return -1;
	for (c = 0; c < g->nch; c++) {
		/* The key and the channel number share one 64-bit sort key. */
		sn_assert(key[c] < LABEL_LIMIT);
		pairs[c] = key[c] << 24 | c;
	}
	sort_u64(pairs, g->nch);
	link_in_sequence(g->nch, g->cur, pairs);
	free(pairs);
	return 0;
}

/*
 * A stamp no channel of the selected layer holds.  When the count wraps, the selected layer's
 * stamps are cleared and the epoch moves on; other layers are cleared when selected next.
 */
static uint32_t next_stamp(struct cdg *g)
{
	if (++g->stamp == 0) {
		g->epoch++;
		clear_stamps(g, g->cur);
		g->stamp = 1;
	}
	return g->stamp;
}

/*
 * The forward side takes one channel: 1 when a turn out of it leads to a channel the backward
 * side has seen (a path from out to in: a cycle).  Only channels labelled below ub, in's label,
 * can lie on such a path.
 */
static int step_forward(struct cdg *g, struct search_side *f, uint64_t ub, uint32_t fs, uint32_t bs,
			struct search_meet *meet)
{
	uint32_t c = f->queue[f->head++], h = g->head[c], o, end = g->sw_off[h + 1];
	const uint8_t *turn = g->turn + g->turn_off[c];

	f->visited[f->n++] = c;
	for (o = g->sw_off[h]; o < end; o++) {
		if (!is_used(turn[o - g->sw_off[h]]))
			continue;
		if (g->ch[o].seen == bs) {
			meet->from = c;
			meet->to = o;
			return 1;
		}
		if (g->ch[o].seen == fs || g->ch[o].ord > ub)
			continue;
		/* Each channel enters a side's queue once per search. */
		sn_assert(f->tail < g->nch);
		g->ch[o].seen = fs;
		g->ch[o].parent = c;
		f->queue[f->tail++] = o;
	}
	return 0;
}

/* The backward side takes one channel, over turns into it from channels labelled above lb. */
static int step_backward(struct cdg *g, struct search_side *b, uint64_t lb, uint32_t fs,
			 uint32_t bs, struct search_meet *meet)
{
	uint32_t c = b->queue[b->head++], t = g->tail[c], o, end = g->sw_off[t + 1];
	const uint8_t *turn = g->turn + (c - g->sw_off[t]);

	b->visited[b->n++] = c;
	/*
	 * Channels into t are the reverses of the channels leaving t; where each one's turns start
	 * is read in the order of o, not of in, which saves a cache miss per channel.
	 */
	for (o = g->sw_off[t]; o < end; o++) {
		uint32_t in = g->rev[o];

		if (!is_used(turn[g->rev_turn_off[o]]))
			continue;
		if (g->ch[in].seen == fs) {
			meet->from = in;
			meet->to = c;
			return 1;
		}
		if (g->ch[in].seen == bs || g->ch[in].ord < lb)
			continue;
		sn_assert(b->tail < g->nch);
		g->ch[in].seen = bs;
		g->ch[in].parent = c;
		b->queue[b->tail++] = in;
	}
	return 0;
}

/* Every channel labelled evenly again, in the order of the list. */
static void relabel(struct cdg *g)
{
	uint64_t step = label_step(g->nch), label = step;
	uint32_t c, count = 0;

	for (c = g->next[g->nch]; c != g->nch; c = g->next[c], label += step) {
		g->ch[c].ord = label;
		count++;
	}
	/* The ring through the sentinel holds every channel exactly once. */
	sn_assert(count == g->nch && label <= LABEL_LIMIT);
	g->relabels++;
}

/*
 * Moves the m channels of set just after channel after (the sentinel for the front), keeping
 * their relative order.  None of them may be after or its successor.
 */
static void move_run(struct cdg *g, uint32_t after, const uint32_t *set, uint32_t m)
{
	uint32_t i, c, before;
	uint64_t lo, hi, step;

	for (i = 0; i < m; i++) {
		sn_assert(set[i] != after && set[i] != g->next[after]);
		g->keys[i] = g->ch[set[i]].ord << 24 | set[i];
	}
	sort_u64(g->keys, m);
	for (i = 0; i < m; i++) {
		c = set[i];
		g->next[g->prev[c]] = g->next[c];
		g->prev[g->next[c]] = g->prev[c];
	}
	before = g->next[after];
	lo = after == g->nch ? 0 : g->ch[after].ord;
	hi = before == g->nch ? LABEL_LIMIT : g->ch[before].ord;
	sn_assert(lo < hi);
	step = (hi - lo) / (m + 1ull);
	for (i = 0; i < m; i++) {
		c = (uint32_t)(g->keys[i] & 0xffffff);
		g->ch[c].ord = lo + step * (i + 1);
		g->prev[c] = after;
		g->next[after] = c;
		after = c;
	}
	g->next[after] = before;
	g->prev[before] = after;
	if (!step)
		relabel(g);
	g->moves++;
}

static int committed(const struct cdg *g, uint32_t in, uint32_t out)
{
	return g->turn[cdg_turn_index(g, in, out)] == CDG_USED;
}

/*
 * Whether the cycle the search found (out ... meet.from, meet.to ... in, and the new turn in->out)
 * holds committed turns only.  Committed turns stay until the layer is reset, so such a cycle
 * stays too, whatever the destination being routed does.
 */
static int cycle_is_committed(const struct cdg *g, uint32_t in, uint32_t out,
			      struct search_meet meet)
{
	uint32_t c;

	if (!committed(g, meet.from, meet.to))
		return 0;
	for (c = meet.from; c != out; c = g->ch[c].parent)
		if (!committed(g, g->ch[c].parent, c))
			return 0;
	for (c = meet.to; c != in; c = g->ch[c].parent)
		if (!committed(g, c, g->ch[c].parent))
			return 0;
	return 1;
}

/* An unused turn against the order: a cycle, or the order changes to admit it. */
int cdg_add_searched(struct cdg *g, uint32_t in, uint32_t out, uint8_t state)
{
	uint64_t t = cdg_turn_index(g, in, out);
	struct search_side f = { .queue = g->fqueue, .visited = g->fwd };
	struct search_side b = { .queue = g->bqueue, .visited = g->bwd };
	struct search_meet meet;
	uint32_t fs, bs;

	sn_assert(g->turn[t] == CDG_UNUSED && g->ch[in].ord > g->ch[out].ord);
	g->searches++;
	fs = next_stamp(g);
	bs = next_stamp(g);
	g->ch[out].seen = fs;
	f.queue[f.tail++] = out;
	g->ch[in].seen = bs;
	b.queue[b.tail++] = in;
	for (;;) {
		if (f.head == f.tail) {
			move_run(g, in, f.visited, f.n);
			break;
		}
		if (step_forward(g, &f, g->ch[in].ord, fs, bs, &meet))
			goto cycle;
		if (b.head == b.tail) {
			move_run(g, g->prev[out], b.visited, b.n);
			break;
		}
		if (step_backward(g, &b, g->ch[out].ord, fs, bs, &meet))
			goto cycle;
	}
	/* The side that ran out moved past the other end: the turn now agrees with the order. */
	sn_assert(g->ch[in].ord < g->ch[out].ord);
	g->turn[t] = state;
	return 1;
cycle:
	g->turn[t] = cycle_is_committed(g, in, out, meet) ? CDG_BLOCKED_FOR_GOOD : CDG_BLOCKED;
	return -1;
}

int cdg_is_acyclic(const struct cdg *g)
{
	uint32_t *indeg = calloc(g->nch ? g->nch : 1, sizeof(uint32_t));
	uint32_t *queue = malloc((g->nch ? g->nch : 1) * sizeof(uint32_t));
	uint32_t c, o, qh = 0, qt = 0, done = 0;
	int ok = -1;

	if (!indeg || !queue)
		goto out;
	for (c = 0; c < g->nch; c++)
		for (o = g->sw_off[g->head[c]]; o < g->sw_off[g->head[c] + 1]; o++)
			if (is_used(g->turn[cdg_turn_index(g, c, o)]))
				indeg[o]++;
	for (c = 0; c < g->nch; c++)
		if (!indeg[c])
			queue[qt++] = c;
	while (qh < qt) {
		c = queue[qh++];
		done++;
		for (o = g->sw_off[g->head[c]]; o < g->sw_off[g->head[c] + 1]; o++)
			if (is_used(g->turn[cdg_turn_index(g, c, o)]) && !--indeg[o])
				queue[qt++] = o;
	}
	ok = done == g->nch;
out:
	free(indeg);
	free(queue);
	return ok;
}
