/*
 * cdg.c - complete channel dependency graph with a dynamic topological order of its used turns
 * (see cdg.h).  The order follows Pearce and Kelly, "A dynamic topological sort algorithm for
 * directed acyclic graphs" (2006): a turn in->out needs ord[in] < ord[out]; when it is the other
 * way round, a forward search from out (bounded by ord[in]) looks for in, which would be a
 * cycle, and otherwise the channels found by the forward and a backward search swap positions.
 */
#include "cdg.h"
#include "sortu64.h"

#include <stdlib.h>
#include <string.h>

static int is_used(uint8_t state)
{
	return state == CDG_USED || state == CDG_WET;
}

static int alloc_arrays(struct cdg *g)
{
	size_t n = g->nch ? g->nch : 1;

	g->turn_off = malloc((n + 1) * sizeof(uint32_t));
	g->seen = calloc(n, sizeof(uint32_t));
	g->stack = malloc(n * sizeof(uint32_t));
	g->fwd = malloc(n * sizeof(uint32_t));
	g->bwd = malloc(n * sizeof(uint32_t));
	g->pool = malloc(2 * n * sizeof(uint64_t));
	return g->turn_off && g->seen && g->stack && g->fwd && g->bwd && g->pool ? 0 : -1;
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

		g->turn_off[c] = (uint32_t)turns;
		turns += f->sw_adj_off[h + 1] - f->sw_adj_off[h];
	}
	g->turn_off[g->nch] = (uint32_t)turns;
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
	cdg_layer_free(&g->built);
	free(g->seen);
	free(g->stack);
	free(g->fwd);
	free(g->bwd);
	free(g->pool);
	memset(g, 0, sizeof(*g));
}

static void reset_layer(const struct cdg *g, struct cdg_layer *l)
{
	uint32_t c;

	memset(l->turn, CDG_UNUSED, g->nturns);
	for (c = 0; c < g->nch; c++)
		l->ord[c] = c;
}

int cdg_layer_alloc(const struct cdg *g, struct cdg_layer *l)
{
	l->turn = malloc(g->nturns ? g->nturns : 1);
	l->ord = malloc(sizeof(uint32_t) * (g->nch ? g->nch : 1));
	if (!l->turn || !l->ord) {
		cdg_layer_free(l);
		return -1;
	}
	reset_layer(g, l);
	return 0;
}

void cdg_layer_free(struct cdg_layer *l)
{
	free(l->turn);
	free(l->ord);
	l->turn = NULL;
	l->ord = NULL;
}

void cdg_select(struct cdg *g, struct cdg_layer *l)
{
	if (!l)
		l = &g->built;
	g->turn = l->turn;
	g->ord = l->ord;
}

void cdg_reset(struct cdg *g)
{
	struct cdg_layer cur = { .turn = g->turn, .ord = g->ord };

	reset_layer(g, &cur);
}

int cdg_seed_order(struct cdg *g, const uint64_t *key)
{
	uint64_t *pairs = malloc(sizeof(uint64_t) * (g->nch ? g->nch : 1));
	uint32_t c;

	if (!pairs)
		return -1;
	for (c = 0; c < g->nch; c++)
		pairs[c] = key[c] << 24 | c;
	sort_u64(pairs, g->nch);
	for (c = 0; c < g->nch; c++)
		g->ord[pairs[c] & 0xffffff] = c;
	free(pairs);
	return 0;
}

static uint32_t next_stamp(struct cdg *g)
{
	if (++g->stamp == 0) {
		memset(g->seen, 0, (size_t)g->nch * sizeof(uint32_t));
		g->stamp = 1;
	}
	return g->stamp;
}

/*
 * Forward search from start over used turns, visiting channels ordered at most ub.  Returns -1
 * when target is reached (a cycle), else the number of channels collected in g->fwd.
 */
static int64_t search_forward(struct cdg *g, uint32_t start, uint32_t target, uint32_t ub,
			      uint32_t stamp)
{
	uint32_t sp = 0, n = 0;

	g->stack[sp++] = start;
	g->seen[start] = stamp;
	while (sp) {
		uint32_t c = g->stack[--sp], h = g->head[c], o;

		g->fwd[n++] = c;
		for (o = g->sw_off[h]; o < g->sw_off[h + 1]; o++) {
			if (!is_used(g->turn[g->turn_off[c] + (o - g->sw_off[h])]))
				continue;
			if (o == target)
				return -1;
			if (g->seen[o] == stamp || g->ord[o] > ub)
				continue;
			g->seen[o] = stamp;
			g->stack[sp++] = o;
		}
	}
	return n;
}

/* Backward search from start over used turns, visiting channels ordered at least lb. */
static uint32_t search_backward(struct cdg *g, uint32_t start, uint32_t lb, uint32_t stamp)
{
	uint32_t sp = 0, n = 0;

	g->stack[sp++] = start;
	g->seen[start] = stamp;
	while (sp) {
		uint32_t c = g->stack[--sp], t = g->tail[c], o;

		g->bwd[n++] = c;
		/* Channels into t are the reverses of the channels leaving t. */
		for (o = g->sw_off[t]; o < g->sw_off[t + 1]; o++) {
			uint32_t in = g->rev[o];

			if (!is_used(g->turn[g->turn_off[in] + (c - g->sw_off[t])]))
				continue;
			if (g->seen[in] == stamp || g->ord[in] < lb)
				continue;
			g->seen[in] = stamp;
			g->stack[sp++] = in;
		}
	}
	return n;
}

/* The order positions of two runs sorted by position, ascending: one merge. */
static void merge_slots(const uint64_t *a, uint32_t na, const uint64_t *b, uint32_t nb,
			uint64_t *out)
{
	uint32_t i = 0, j = 0, k = 0;

	while (i < na && j < nb)
		out[k++] = a[i] < b[j] ? a[i++] >> 32 : b[j++] >> 32;
	while (i < na)
		out[k++] = a[i++] >> 32;
	while (j < nb)
		out[k++] = b[j++] >> 32;
}

/* The backward set keeps its relative order but moves in front of the forward set. */
static void reorder(struct cdg *g, uint32_t nf, uint32_t nb)
{
	uint64_t *sorted = g->pool, *slots = g->pool + nb + nf;
	uint32_t i;

	for (i = 0; i < nb; i++)
		sorted[i] = ((uint64_t)g->ord[g->bwd[i]] << 32) | g->bwd[i];
	for (i = 0; i < nf; i++)
		sorted[nb + i] = ((uint64_t)g->ord[g->fwd[i]] << 32) | g->fwd[i];
	sort_u64(sorted, nb);
	sort_u64(sorted + nb, nf);
	merge_slots(sorted, nb, sorted + nb, nf, slots);
	for (i = 0; i < nb + nf; i++)
		g->ord[(uint32_t)sorted[i]] = (uint32_t)slots[i];
	g->reorders++;
}

/* An unused turn against the order: a cycle, or the order changes to admit it. */
int cdg_add_searched(struct cdg *g, uint32_t in, uint32_t out, uint8_t state)
{
	uint64_t t = cdg_turn_index(g, in, out);
	uint32_t stamp;
	int64_t nf;

	g->searches++;
	stamp = next_stamp(g);
	nf = search_forward(g, out, in, g->ord[in], stamp);
	if (nf < 0) {
		g->turn[t] = CDG_BLOCKED;
		return -1;
	}
	reorder(g, (uint32_t)nf, search_backward(g, in, g->ord[out], stamp));
	g->turn[t] = state;
	return 1;
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
