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
	g->in_fwd = calloc(n / 64 + 1, sizeof(uint64_t));
	g->in_bwd = calloc(n / 64 + 1, sizeof(uint64_t));
	if (!g->turn_off || !g->seen || !g->stack || !g->fwd || !g->bwd || !g->pool)
		return -1;
	return g->in_fwd && g->in_bwd ? 0 : -1;
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
	free(g->in_fwd);
	free(g->in_bwd);
	memset(g, 0, sizeof(*g));
}

static void reset_layer(const struct cdg *g, struct cdg_layer *l)
{
	uint32_t c;

	memset(l->turn, CDG_UNUSED, g->nturns);
	for (c = 0; c < g->nch; c++)
		l->ord[c] = l->at[c] = c;
}

int cdg_layer_alloc(const struct cdg *g, struct cdg_layer *l)
{
	l->turn = malloc(g->nturns ? g->nturns : 1);
	l->ord = malloc(sizeof(uint32_t) * (g->nch ? g->nch : 1));
	l->at = malloc(sizeof(uint32_t) * (g->nch ? g->nch : 1));
	if (!l->turn || !l->ord || !l->at) {
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
	free(l->at);
	l->turn = NULL;
	l->ord = NULL;
	l->at = NULL;
}

void cdg_select(struct cdg *g, struct cdg_layer *l)
{
	if (!l)
		l = &g->built;
	g->turn = l->turn;
	g->ord = l->ord;
	g->at = l->at;
}

void cdg_reset(struct cdg *g)
{
	struct cdg_layer cur = { .turn = g->turn, .ord = g->ord, .at = g->at };

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
	for (c = 0; c < g->nch; c++) {
		g->ord[pairs[c] & 0xffffff] = c;
		g->at[c] = pairs[c] & 0xffffff;
	}
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
			uint32_t *out)
{
	uint32_t i = 0, j = 0, k = 0;

	while (i < na && j < nb)
		out[k++] = (uint32_t)((a[i] < b[j] ? a[i++] : b[j++]) >> 32);
	while (i < na)
		out[k++] = (uint32_t)(a[i++] >> 32);
	while (j < nb)
		out[k++] = (uint32_t)(b[j++] >> 32);
}

/*
 * Both sets in their old relative order, by sorting (position << 32 | channel) keys: g->bwd and
 * g->fwd are rewritten sorted, slots gets the union of their positions, ascending.
 */
static void order_sets_by_sorting(struct cdg *g, uint32_t nf, uint32_t nb, uint32_t *slots)
{
	uint64_t *bk = g->pool, *fk = g->pool + nb;
	uint32_t i;

	for (i = 0; i < nb; i++)
		bk[i] = (uint64_t)g->ord[g->bwd[i]] << 32 | g->bwd[i];
	for (i = 0; i < nf; i++)
		fk[i] = (uint64_t)g->ord[g->fwd[i]] << 32 | g->fwd[i];
	sort_u64(bk, nb);
	sort_u64(fk, nf);
	merge_slots(bk, nb, fk, nf, slots);
	for (i = 0; i < nb; i++)
		g->bwd[i] = (uint32_t)bk[i];
	for (i = 0; i < nf; i++)
		g->fwd[i] = (uint32_t)fk[i];
}

/*
 * The same by marking positions in two bitmaps and reading them back in ascending order, which
 * costs a word per 64 positions of [lo, hi] instead of a sort; the bitmaps are left clear.
 */
static void order_sets_by_scanning(struct cdg *g, uint32_t nf, uint32_t nb, uint32_t lo,
				   uint32_t hi, uint32_t *slots)
{
	uint32_t i, w, k = 0, ib = 0, jf = 0;

	for (i = 0; i < nb; i++)
		g->in_bwd[g->ord[g->bwd[i]] / 64] |= 1ull << g->ord[g->bwd[i]] % 64;
	for (i = 0; i < nf; i++)
		g->in_fwd[g->ord[g->fwd[i]] / 64] |= 1ull << g->ord[g->fwd[i]] % 64;
	for (w = lo / 64; w <= hi / 64; w++) {
		uint64_t bwd = g->in_bwd[w], all = bwd | g->in_fwd[w];

		g->in_bwd[w] = g->in_fwd[w] = 0;
		for (; all; all &= all - 1) {
			unsigned bit = (unsigned)__builtin_ctzll(all);
			uint32_t pos = w * 64 + bit;

			slots[k++] = pos;
			if (bwd >> bit & 1)
				g->bwd[ib++] = g->at[pos];
			else
				g->fwd[jf++] = g->at[pos];
		}
	}
}

/*
 * The backward set keeps its relative order but moves in front of the forward set, into the
 * positions both held; every position lies in [lo, hi].  Scanning the bitmaps wins unless the
 * sets are sparse in that range: on the 8x8x8 torus with 8 layers the sort had been 13% of the
 * route time.
 */
static void reorder(struct cdg *g, uint32_t nf, uint32_t nb, uint32_t lo, uint32_t hi)
{
	uint32_t *slots = (uint32_t *)g->pool + 2 * (nb + nf), i;

	int scan = (hi - lo) / 64 <= 4 * (nb + nf) + 16;

	if (g->reorder_by != CDG_REORDER_AUTO)
		scan = g->reorder_by == CDG_REORDER_SCAN;
	if (scan) {
		order_sets_by_scanning(g, nf, nb, lo, hi, slots);
		g->reorders_scanned++;
	} else {
		order_sets_by_sorting(g, nf, nb, slots);
	}
	for (i = 0; i < nb; i++) {
		g->ord[g->bwd[i]] = slots[i];
		g->at[slots[i]] = g->bwd[i];
	}
	for (i = 0; i < nf; i++) {
		g->ord[g->fwd[i]] = slots[nb + i];
		g->at[slots[nb + i]] = g->fwd[i];
	}
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
	reorder(g, (uint32_t)nf, search_backward(g, in, g->ord[out], stamp), g->ord[out],
		g->ord[in]);
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
