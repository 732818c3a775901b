/*
 * nue.c - Nue routing (thesis chapter 6; algorithms 6.2, 6.3, 6.5 and 6.6), see nue.h.
 *
 * Per virtual layer: the layer's destinations (nue_partition), a fresh complete channel
 * dependency graph (cdg.h), escape paths along a spanning tree rooted at the layer's most central
 * switch, then one modified Dijkstra per destination LID.  The Dijkstra runs over switches from
 * the destination outwards; a switch y is reached through channel y->x only if the turn from
 * y->x into x's own channel keeps the used dependencies acyclic, so the routing-induced CDG of
 * every layer stays acyclic by construction.  Switches left unreached (islands) are connected by
 * local backtracking: a reached neighbour switches to another of its channels, provided every
 * dependency below it stays valid.  Only when that fails does the destination fall back to the
 * escape paths.  Channel weights grow by the number of sources routed over each channel, for
 * balance across destinations (and, with a job map, across the routes inside each job first, as
 * thesis algorithm 5.1 does for DFSSSP).
 *
 * Switch LIDs are destinations like any other and are routed in the same dependency graphs.
 */
#include "engines/nue/nue.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engines/cdg.h"
#include "lib/minheap.h"
#include "lib/sortu64.h"
#include "lib/threads.h"
#include "lib/arena.h"

#define INF_DIST UINT64_MAX
#define AT_DEST (FAB_NONE - 1) /* out[] of the destination switch: delivery, no dependency */

/* Which switch LIDs' routes add to the balancing weights; see weighs(). */
enum sw_weights {
	SWW_ALL,
	SWW_CA_SWITCHES,
	SWW_NONE,
};

struct turn_list {
	uint32_t *turn;
	uint32_t n, cap;
};

/* What routing one layer changes outside its own dependency graph and tables. */
struct layer_mark {
	uint64_t *w_all, *w_job, *efi; /* [nch] */
	uint64_t score_hops;
	uint32_t nfell_back;
	struct nue_report rep;
};

struct nue {
	const struct fabric *f;
	const struct nue_opts *o;
	struct routing *r;
	struct nue_report *rep;
	struct cdg g;
	uint32_t nsw, nch;
	unsigned k;

	uint32_t *lid_sw;    /* [max_lid + 1]: delivering switch, FAB_NONE if no LID */
	uint8_t *lid_exit;   /* [max_lid + 1]: port out of that switch, 0 for its own LID */
	uint8_t *lid_layer;  /* [max_lid + 1]: layer (SL) a LID is routed in */
	uint8_t *home_layer; /* [max_lid + 1]: its layer from the partition */
	uint8_t *escaped;    /* [max_lid + 1]: routed on the escape paths */
	uint8_t *part;	     /* [nendports] */
	uint32_t *dest, ndest;
	uint64_t *keys;	      /* [max_lid + 1] sort keys */
	uint64_t *ch_key;     /* [nch]: initial order of the dependency graph */
	uint32_t *dest_count; /* [nsw]: destinations of the current layer per switch */
	uint32_t *ca_count;   /* [nsw]: the CA and router LIDs among them */
	uint32_t nca;	      /* their sum */

	uint64_t *w_all, *w_job; /* [nch] channel weights; w_job only for the job phase */
	uint32_t *src_lids;	 /* [nsw]: LIDs that send from each switch */
	uint8_t *has_ca;	 /* [nsw]: CAs or routers attached */
	uint32_t *ca_ports;	 /* [nsw]: CA and router ports attached */
	enum sw_weights sw_weights;
	uint64_t *efi;	     /* [nch]: routes between CA ports per channel, for the score */
	uint64_t score_hops; /* their hops (switch to switch) */
	uint32_t *job_off;   /* job phase: [njobs + 1] CSR over (switch, LIDs) pairs */
	uint32_t *job_sw, *job_lids;

	/* With k > 1: every layer's dependency graph and escape tree, kept to the end. */
	struct cdg_layer *layer_cdg;	 /* [k] */
	uint32_t *layer_esc_up;		 /* [k * nsw] */
	uint32_t *layer_root;		 /* [k]: each layer's root once chosen, else FAB_NONE */
	uint32_t *fell_back, nfell_back; /* LIDs on escape paths, for move_fallbacks() */
	struct layer_mark mark;		 /* the run before the current layer's first try */

	uint32_t root;
	uint64_t w_init;	    /* initial channel weight: one hop */
	uint64_t new_turn_cost;	    /* added to a route per turn it adds; see try_route */
	uint64_t impasse_turn_cost; /* new_turn_cost of first attempts; see try_route */
	uint64_t sources;	    /* LIDs that send, over the fabric */
	int no_search;		    /* take only turns that need no search; see route_lid */
	int move_aside;		    /* settled switches may move aside; see move_aside */
	int need_shortest;	    /* give up at a CA route that is not shortest; see route_lid */
	int ties_descending; /* equally far destinations by descending LID; see route_one_layer */
	struct order_race *race; /* the other order, still running; see route_one_layer */
	uint32_t *hop;		 /* [nsw]: hops to the current destination, for need_shortest */
	uint32_t *esc_up;	 /* [nsw]: tree channel towards the root */
	uint32_t *esc_sub, *esc_order, *esc_child_off, *esc_child;

	uint64_t *dist;
	uint32_t *out;
	uint32_t *kept_out; /* [nsw]: routes a rebalancing step may return to */
	uint64_t efi_cap;   /* no channel's EFI may exceed it after a rebalancing step */
	uint8_t *done;
	struct minheap heap;
	struct turn_list wet, blocked, attempt;
	uint32_t *depth, *acc, *scratch, *children, *seen;
	uint32_t *topo; /* [nsw]: see compute_depths */
	uint32_t stamp;
	uint64_t *cand;
	uint32_t cand_cap;
};

static int list_push(struct turn_list *l, uint64_t turn)
{
	if (l->n == l->cap && fab_grow((void **)&l->turn, &l->cap, l->n + 1, sizeof(*l->turn), 256))
		return -1;
	l->turn[l->n++] = (uint32_t)turn;
	return 0;
}

static uint32_t next_stamp(struct nue *n)
{
	if (++n->stamp == 0) {
		memset(n->seen, 0, sizeof(uint32_t) * n->nsw);
		n->stamp = 1;
	}
	return n->stamp;
}

/* ---------------------------------------------------------------- turns of the current run */

/*
 * Adds the dependency from channel in to channel out (the next hop's channel) for the current
 * destination.  AT_DEST means delivery: no dependency.  Newly wet turns go to list so a failed
 * attempt or a fall-back can undo them; turns that this run blocked go to n->blocked.
 */
static int take_turn(struct nue *n, uint32_t in, uint32_t out, struct turn_list *list)
{
	uint64_t t;
	int rc;

	if (out == AT_DEST)
		return 1;
	t = cdg_turn_index(&n->g, in, out);
	if (cdg_blocked(n->g.turn[t]))
		return 0;
	if (n->no_search && !cdg_turn_cheap(&n->g, in, out))
		return 0;
	rc = cdg_try_add(&n->g, in, out, CDG_WET);
	if (rc > 0)
		return list_push(list, t) ? 0 : 1;
	if (rc < 0) {
		list_push(&n->blocked, t);
		return 0;
	}
	return 1;
}

/* Drops the wet dependency switch s's current channel holds on its parent's channel. */
static void release(struct nue *n, uint32_t s)
{
	uint32_t c = n->out[s], x;
	uint64_t t;

	if (c == FAB_NONE || c == AT_DEST)
		return;
	x = n->g.head[c];
	if (n->out[x] == AT_DEST || n->out[x] == FAB_NONE)
		return;
	t = cdg_turn_index(&n->g, c, n->out[x]);
	if (n->g.turn[t] == CDG_WET)
		n->g.turn[t] = CDG_UNUSED;
}

static void undo_list(struct nue *n, struct turn_list *l, uint8_t from)
{
	uint32_t i;

	for (i = 0; i < l->n; i++)
		if (n->g.turn[l->turn[i]] == from)
			n->g.turn[l->turn[i]] = CDG_UNUSED;
	l->n = 0;
}

/* Undoes the blocks of n->blocked from index keep on; see cdg_unblocked. */
static void undo_blocks(struct nue *n, uint32_t keep)
{
	uint32_t i;
	uint8_t *st;

	for (i = keep; i < n->blocked.n; i++) {
		st = &n->g.turn[n->blocked.turn[i]];
		if (cdg_blocked(*st))
			*st = cdg_unblocked(*st);
	}
	n->blocked.n = keep;
}

/* ------------------------------------------------------------- rerouting a reached switch */

/* Switches whose channel leads into s (deduplicated over parallel links); count returned. */
static uint32_t collect_children(struct nue *n, uint32_t s)
{
	uint32_t stamp = next_stamp(n), cnt = 0, i;

	for (i = n->g.sw_off[s]; i < n->g.sw_off[s + 1]; i++) {
		uint32_t v = n->g.head[i], c = n->out[v];

		if (n->seen[v] == stamp || c == FAB_NONE || c == AT_DEST || n->g.head[c] != s)
			continue;
		n->seen[v] = stamp;
		n->children[cnt++] = v;
	}
	return cnt;
}

/* True when following the routes from switch x reaches the destination without meeting s. */
static int path_avoids(const struct nue *n, uint32_t x, uint32_t s)
{
	uint32_t hops = 0;

	while (n->out[x] != AT_DEST) {
		if (x == s || n->out[x] == FAB_NONE || ++hops > n->nsw)
			return 0;
		x = n->g.head[n->out[x]];
	}
	return x != s;
}

/*
 * One turn of a reroute.  A block found while none of the reroute's own turns is in place
 * closes a cycle with the committed and wet turns alone, as blocks found by relax_from do, so
 * *keep moves past it and a failed reroute leaves it blocked: backtracking then skips the
 * candidates that need it instead of searching for the same cycle once per island.  On the
 * random graph of 1,200 switches with 8 layers this removed 43% of the cycle searches and gave
 * the same tables.
 */
static int take_attempt_turn(struct nue *n, uint32_t in, uint32_t out, uint32_t *keep)
{
	int ok = take_turn(n, in, out, &n->attempt);

	if (!n->attempt.n)
		*keep = n->blocked.n;
	return ok;
}

/*
 * Moves reached switch s onto channel c (s -> x), keeping every dependency below it valid: the
 * turns of s's children into c, c into x's channel and, for backtracking, the island's channel
 * extra_in into c.  All or nothing.
 */
static int reroute(struct nue *n, uint32_t s, uint32_t c, uint32_t extra_in)
{
	uint32_t x = n->g.head[c], nchild, i, keep = n->blocked.n;
	int ok;

	if (!path_avoids(n, x, s))
		return 0;
	nchild = collect_children(n, s);
	n->attempt.n = 0;
	ok = take_attempt_turn(n, c, n->out[x], &keep);
	for (i = 0; ok && i < nchild; i++)
		ok = take_attempt_turn(n, n->out[n->children[i]], c, &keep);
	if (ok && extra_in != FAB_NONE)
		ok = take_attempt_turn(n, extra_in, c, &keep);
	if (!ok) {
		/* Blocks found while the attempt's own turns were in place may be spurious. */
		undo_list(n, &n->attempt, CDG_WET);
		undo_blocks(n, keep);
		return 0;
	}
	for (i = 0; i < nchild; i++) {
		uint64_t t = cdg_turn_index(&n->g, n->out[n->children[i]], n->out[s]);

		if (n->g.turn[t] == CDG_WET)
			n->g.turn[t] = CDG_UNUSED;
	}
	release(n, s);
	for (i = 0; i < n->attempt.n; i++)
		list_push(&n->wet, n->attempt.turn[i]);
	n->out[s] = c;
	return 1;
}

/* --------------------------------------------------------------------- modified Dijkstra */

/* Extra cost of the turn in->out on the second attempt at a destination: only if it is new. */
static uint64_t turn_cost(const struct nue *n, uint32_t in, uint32_t out)
{
	uint8_t st = n->g.turn[cdg_turn_index(&n->g, in, out)];

	return st == CDG_UNUSED || st == CDG_CLOSED ? n->new_turn_cost : 0;
}

/*
 * The turn from y's channel in into settled switch x's channel is blocked.  Moves x onto another
 * channel, towards a settled switch, that keeps x's hop count and lets y through: the cheapest
 * such channel whose turns (x's children into it, it into the next switch's channel, and in into
 * it) keep the layer acyclic.  Only if y then gets a cheaper route than it has.  1 when x moved;
 * its distance is then the new one.
 */
static int move_aside(struct nue *n, uint32_t x, uint32_t in, const uint64_t *w, uint64_t limit)
{
	uint64_t hops = n->dist[x] / n->w_init, tried[4] = { 0 }; /* a switch has < 256 ports */
	uint32_t c, first = n->g.sw_off[x];

	if (n->out[x] == AT_DEST)
		return 0;
	for (;;) {
		uint32_t pick = FAB_NONE;
		uint64_t pick_dist = INF_DIST;

		for (c = first; c < n->g.sw_off[x + 1] && c - first < 256; c++) {
			uint64_t d;

			if (c == n->out[x] || !n->done[n->g.head[c]] ||
			    tried[(c - first) / 64] >> (c - first) % 64 & 1)
				continue;
			d = n->dist[n->g.head[c]] + w[c];
			if (d / n->w_init == hops && d + w[in] < limit && d < pick_dist) {
				pick = c;
				pick_dist = d;
			}
		}
		if (pick == FAB_NONE)
			return 0;
		if (reroute(n, x, pick, in)) {
			n->dist[x] = pick_dist;
			n->rep->moved_aside++;
			return 1;
		}
		tried[(pick - first) / 64] |= 1ull << (pick - first) % 64;
	}
}

static void relax_from(struct nue *n, uint32_t x, const uint64_t *w)
{
	uint32_t i;
	/* Read n->out[x] afresh below: move_aside may change it during the loop. */
	int priced = n->new_turn_cost && n->out[x] != AT_DEST;

	for (i = n->g.sw_off[x]; i < n->g.sw_off[x + 1]; i++) {
		uint32_t y = n->g.head[i], in = n->g.rev[i];
		uint64_t nd = n->dist[x] + w[in] + (priced ? turn_cost(n, in, n->out[x]) : 0);

		if (nd >= n->dist[y])
			continue;
		if (n->done[y]) {
			/*
			 * Only after backtracking: a former island is a shortcut (alg. 6.6).  When
			 * y already routes through x, only x's distance fell: rerouting y onto its
			 * own channel would release the turns it and its children hold.
			 */
			int same = n->out[y] == in;

			if (same || reroute(n, y, in, FAB_NONE)) {
				n->dist[y] = nd;
				n->rep->shortcuts += !same;
				minheap_set(&n->heap, y, nd);
			}
			continue;
		}
		if (!take_turn(n, in, n->out[x], &n->wet)) {
			if (!n->move_aside || !move_aside(n, x, in, w, n->dist[y]))
				continue;
			nd = n->dist[x] + w[in];
		}
		release(n, y);
		n->out[y] = in;
		n->dist[y] = nd;
		minheap_set(&n->heap, y, nd);
	}
}

static uint32_t run_dijkstra(struct nue *n, const uint64_t *w)
{
	uint32_t x, reached = 0, s;

	while ((x = minheap_pop(&n->heap)) != MINHEAP_ABSENT) {
		n->done[x] = 1;
		relax_from(n, x, w);
	}
	for (s = 0; s < n->nsw; s++)
		reached += n->done[s];
	return reached;
}

/* Cost first; the channel numbers make the order total, hence the result deterministic. */
static int cmp_candidate(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	unsigned i;

	for (i = 0; i < 3; i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}

/* Candidate (cost, island channel, new channel of the reached neighbour) for backtracking. */
static int add_candidate(struct nue *n, uint32_t *count, uint64_t cost, uint32_t in, uint32_t c)
{
	if (fab_grow((void **)&n->cand, &n->cand_cap, *count + 1, 3 * sizeof(*n->cand), 256))
		return -1;
	n->cand[3 * *count] = cost;
	n->cand[3 * *count + 1] = in;
	n->cand[3 * *count + 2] = c;
	(*count)++;
	return 0;
}

static int turn_blocked(const struct nue *n, uint32_t in, uint32_t out)
{
	return out != AT_DEST && cdg_blocked(n->g.turn[cdg_turn_index(&n->g, in, out)]);
}

/* Ways to reach island u: a reached neighbour a takes another channel c towards a2. */
static int collect_candidates(struct nue *n, uint32_t u, const uint64_t *w, uint32_t *count)
{
	uint32_t i, j;

	for (i = n->g.sw_off[u]; i < n->g.sw_off[u + 1]; i++) {
		uint32_t a = n->g.head[i];

		if (!n->done[a] || n->out[a] == AT_DEST)
			continue;
		for (j = n->g.sw_off[a]; j < n->g.sw_off[a + 1]; j++) {
			uint32_t a2 = n->g.head[j];

			if (j == n->out[a] || !n->done[a2] || a2 == u || turn_blocked(n, i, j) ||
			    turn_blocked(n, j, n->out[a2]))
				continue;
			if (add_candidate(n, count, n->dist[a2] + w[j] + w[i], i, j))
				return -1;
		}
	}
	return 0;
}

/* Thesis algorithm 6.5: connect one island switch, cheapest candidate first. */
static int backtrack(struct nue *n, const uint64_t *w)
{
	uint32_t u, count = 0, i;

	for (u = 0; u < n->nsw; u++)
		if (!n->done[u] && collect_candidates(n, u, w, &count))
			return 0;
	qsort(n->cand, count, 3 * sizeof(uint64_t), cmp_candidate);
	for (i = 0; i < count; i++) {
		uint32_t in = (uint32_t)n->cand[3 * i + 1], c = (uint32_t)n->cand[3 * i + 2];
		uint32_t island = n->g.tail[in], a = n->g.tail[c], a2 = n->g.head[c];

		if (n->done[island] || !reroute(n, a, c, in))
			continue;
		n->dist[a] = n->dist[a2] + w[c];
		n->out[island] = in;
		n->dist[island] = n->dist[a] + w[in];
		minheap_set(&n->heap, island, n->dist[island]);
		n->rep->backtracks++;
		return 1;
	}
	return 0;
}

/* ----------------------------------------------------------------------- escape paths */

/* Spanning tree from the root by Dijkstra over the current link weights (both directions). */
static void escape_tree(struct nue *n)
{
	uint32_t s, i, cnt = 0;

	for (s = 0; s < n->nsw; s++) {
		n->dist[s] = INF_DIST;
		n->esc_up[s] = FAB_NONE;
		n->done[s] = 0;
	}
	minheap_clear(&n->heap);
	n->dist[n->root] = 0;
	minheap_set(&n->heap, n->root, 0);
	while ((s = minheap_pop(&n->heap)) != MINHEAP_ABSENT) {
		n->done[s] = 1;
		n->esc_order[cnt++] = s;
		for (i = n->g.sw_off[s]; i < n->g.sw_off[s + 1]; i++) {
			uint32_t v = n->g.head[i];
			uint64_t nd = n->dist[s] + n->w_all[i] + n->w_all[n->g.rev[i]];

			if (n->done[v] || nd >= n->dist[v])
				continue;
			n->dist[v] = nd;
			n->esc_up[v] = n->g.rev[i];
			minheap_set(&n->heap, v, nd);
		}
	}
}

/* The escape tree's children in CSR form. */
static void tree_children(struct nue *n)
{
	uint32_t s;

	memset(n->esc_child_off, 0, sizeof(uint32_t) * (n->nsw + 1));
	for (s = 0; s < n->nsw; s++)
		if (n->esc_up[s] != FAB_NONE)
			n->esc_child_off[n->g.head[n->esc_up[s]] + 1]++;
	for (s = 0; s < n->nsw; s++)
		n->esc_child_off[s + 1] += n->esc_child_off[s];
	memcpy(n->scratch, n->esc_child_off, sizeof(uint32_t) * n->nsw);
	for (s = 0; s < n->nsw; s++)
		if (n->esc_up[s] != FAB_NONE)
			n->esc_child[n->scratch[n->g.head[n->esc_up[s]]]++] = s;
}

/* Tree children, and how many destination switches each subtree holds. */
static void escape_children(struct nue *n)
{
	uint32_t s;

	tree_children(n);
	memset(n->esc_sub, 0, sizeof(uint32_t) * n->nsw);
	for (s = n->nsw; s-- > 0;) {
		uint32_t v = n->esc_order[s], p;

		n->esc_sub[v] += n->dest_count[v] ? 1 : 0;
		if (n->esc_up[v] != FAB_NONE) {
			p = n->g.head[n->esc_up[v]];
			n->esc_sub[p] += n->esc_sub[v];
		}
	}
}

/*
 * Marks the escape paths used: at every tree switch b, the turns from each tree channel into b
 * towards each other tree neighbour whose side of the tree holds a destination of the layer.
 * At the root every turn between tree channels is marked, as the reference does: still the
 * dependencies of one tree's routes, hence acyclic, and it leaves the turns through the layer's
 * most central switch reserved for the routes of every subtree.
 */
static int mark_escape_paths(struct nue *n)
{
	uint32_t b, i, j, all = n->esc_sub[n->root];

	for (b = 0; b < n->nsw; b++) {
		uint32_t nin = 0, *in = n->scratch;

		if (n->esc_up[b] != FAB_NONE)
			in[nin++] = n->g.rev[n->esc_up[b]];
		for (i = n->esc_child_off[b]; i < n->esc_child_off[b + 1]; i++)
			in[nin++] = n->esc_up[n->esc_child[i]];
		for (i = 0; i < nin; i++) {
			/* Towards the parent, when a destination lies outside b's subtree. */
			if (n->esc_up[b] != FAB_NONE && in[i] != n->g.rev[n->esc_up[b]] &&
			    all > n->esc_sub[b] &&
			    cdg_try_add(&n->g, in[i], n->esc_up[b], CDG_USED) < 0)
				return -1;
			for (j = n->esc_child_off[b]; j < n->esc_child_off[b + 1]; j++) {
				uint32_t c = n->esc_child[j], down = n->g.rev[n->esc_up[c]];

				if ((!n->esc_sub[c] && b != n->root) || in[i] == n->esc_up[c])
					continue;
				if (cdg_try_add(&n->g, in[i], down, CDG_USED) < 0)
					return -1;
			}
		}
	}
	return 0;
}

/* Routes every switch to d along the tree: a breadth-first search over tree links from d. */
static void use_escape_paths(struct nue *n, uint32_t d)
{
	uint32_t qh = 0, qt = 0, i, s;

	for (s = 0; s < n->nsw; s++)
		n->out[s] = FAB_NONE;
	n->out[d] = AT_DEST;
	n->scratch[qt++] = d;
	while (qh < qt) {
		uint32_t x = n->scratch[qh++];

		if (n->esc_up[x] != FAB_NONE) {
			uint32_t p = n->g.head[n->esc_up[x]];

			if (n->out[p] == FAB_NONE) {
				n->out[p] = n->g.rev[n->esc_up[x]];
				n->scratch[qt++] = p;
			}
		}
		for (i = n->esc_child_off[x]; i < n->esc_child_off[x + 1]; i++) {
			uint32_t c = n->esc_child[i];

			if (n->out[c] == FAB_NONE) {
				n->out[c] = n->esc_up[c];
				n->scratch[qt++] = c;
			}
		}
	}
}

/* ------------------------------------------------------------------ one destination LID */

/*
 * The turn the routes in n->out take after switch s's channel: 1 with *in and *out, 0 where the
 * route delivers at s or at the next switch.
 */
static int route_turn(const struct nue *n, uint32_t s, uint32_t *in, uint32_t *out)
{
	if (n->out[s] == AT_DEST)
		return 0;
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
		if (route_turn(n, s, &in, &out) &&
		    n->g.turn[cdg_turn_index(&n->g, in, out)] != CDG_USED)
			return 0;
	return 1;
}

/*
 * Hops from each switch to d along the routes, and n->topo: the switches, every one after the
 * switch its route leads to.  -1 if a route loops (an internal error).
 */
static int compute_depths(struct nue *n, uint32_t d)
{
	uint32_t s, placed = 0;

	for (s = 0; s < n->nsw; s++)
		n->depth[s] = FAB_NONE;
	n->depth[d] = 0;
	n->topo[placed++] = d;
	for (s = 0; s < n->nsw; s++) {
		uint32_t x = s, len = 0, base;

		while (n->depth[x] == FAB_NONE) {
			if (len > n->nsw)
				return -1;
			n->scratch[len++] = x;
			x = n->g.head[n->out[x]];
		}
		base = n->depth[x];
		while (len--) {
			n->depth[n->scratch[len]] = ++base;
			n->topo[placed++] = n->scratch[len];
		}
	}
	return 0;
}

static int job_phase_dest(const struct nue *n, uint32_t lid)
{
	uint32_t cnt;

	if (!n->o->jobs || !n->job_off)
		return 0;
	job_map_node_jobs(n->o->jobs, n->f->ports[n->f->lid_port[lid]].node, &cnt);
	return cnt > 0;
}

/* Sources per switch whose route to lid adds weight: all, or those sharing a job with it. */
static void source_counts(struct nue *n, uint32_t lid, int job_phase)
{
	uint32_t cnt, i, k;
	const uint32_t *jobs;

	if (!job_phase) {
		memcpy(n->acc, n->src_lids, sizeof(uint32_t) * n->nsw);
		return;
	}
	memset(n->acc, 0, sizeof(uint32_t) * n->nsw);
	jobs = job_map_node_jobs(n->o->jobs, n->f->ports[n->f->lid_port[lid]].node, &cnt);
	for (i = 0; i < cnt; i++)
		for (k = n->job_off[jobs[i]]; k < n->job_off[jobs[i] + 1]; k++)
			n->acc[n->job_sw[k]] += n->job_lids[k];
}

/*
 * Adds the sources in n->acc behind every channel of the routes to d to load[channel], or takes
 * them away (remove) when routes are replaced.
 */
static void add_loads(struct nue *n, uint64_t *load, int remove)
{
	uint32_t i = n->nsw;

	/* Backwards through n->topo: a switch's count is complete before it passes it on. */
	while (i-- > 1) {
		uint32_t x = n->topo[i];

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
static void tally_score(struct nue *n, uint32_t lid, int remove)
{
	const struct fab_port *port = &n->f->ports[n->f->lid_port[lid]];
	uint64_t hops = 0;
	uint32_t s;

	if (!n->lid_exit[lid] || lid != port->base_lid)
		return;
	memcpy(n->acc, n->ca_ports, sizeof(uint32_t) * n->nsw);
	for (s = 0; s < n->nsw; s++)
		hops += (uint64_t)n->ca_ports[s] * n->depth[s];
	n->score_hops = remove ? n->score_hops - hops : n->score_hops + hops;
	add_loads(n, n->efi, remove);
}

static void update_loads(struct nue *n, uint32_t lid, uint32_t d, uint64_t *w, int job_phase)
{
	if (weighs(n, lid, d)) {
		source_counts(n, lid, job_phase);
		add_loads(n, w, 0);
	}
	tally_score(n, lid, 0);
}

static void write_tables(struct nue *n, uint32_t lid, uint32_t d)
{
	const struct fabric *f = n->f;
	int to_ca = n->lid_exit[lid] != 0;
	uint32_t s;

	for (s = 0; s < n->nsw; s++) {
		uint32_t hops = n->depth[s] + (uint32_t)to_ca;

		routing_lft(n->r, s)[lid] =
			s == d ? n->lid_exit[lid] : f->ports[f->sw_adj_port[n->out[s]]].num;
		routing_hops(n->r, s)[lid] = (uint8_t)(hops > 0xfe ? 0xfe : hops);
	}
}

/* Dijkstra with backtracking towards d; 1 when every switch is reached. */
static int attempt(struct nue *n, uint32_t d, const uint64_t *w)
{
	uint32_t s;

	for (s = 0; s < n->nsw; s++) {
		n->dist[s] = INF_DIST;
		n->out[s] = FAB_NONE;
		n->done[s] = 0;
	}
	minheap_clear(&n->heap);
	n->wet.n = n->blocked.n = 0;
	n->dist[d] = 0;
	n->out[d] = AT_DEST;
	minheap_set(&n->heap, d, 0);
	while (run_dijkstra(n, w) < n->nsw)
		if (!backtrack(n, w))
			return 0;
	return 1;
}

/* Undoes an attempt's turns; blocks it found may have depended on them. */
static void undo_attempt(struct nue *n)
{
	undo_list(n, &n->wet, CDG_WET);
	undo_blocks(n, 0);
}

/* The balancing weights routes towards lid follow: the job phase's for job nodes. */
static uint64_t *weights_of(struct nue *n, uint32_t lid)
{
	return job_phase_dest(n, lid) ? n->w_job : n->w_all;
}

/* One attempt with new turns costing turn_cost and switches moving aside if aside is set. */
static int attempt_with(struct nue *n, uint32_t d, const uint64_t *w, uint64_t turn_cost, int aside)
{
	int ok, was_aside = n->move_aside;

	n->new_turn_cost = turn_cost;
	n->move_aside = aside;
	ok = attempt(n, d, w);
	n->new_turn_cost = 0;
	n->move_aside = was_aside;
	if (!ok)
		undo_attempt(n);
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
static int try_route(struct nue *n, uint32_t lid, int second_attempt)
{
	uint32_t d = n->lid_sw[lid];
	const uint64_t *w = weights_of(n, lid);

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
	use_escape_paths(n, n->lid_sw[lid]);
	n->escaped[lid] = 1;
	n->rep->fallbacks++;
	n->rep->fallbacks_per_layer[n->lid_layer[lid]]++;
}

/* lid, which fell back, has routes of its own now. */
static void leave_escape_paths(struct nue *n, uint32_t lid)
{
	n->escaped[lid] = 0;
	n->rep->fallbacks--;
	n->rep->fallbacks_per_layer[n->lid_layer[lid]]--;
}

/* Makes the routes in n->out towards lid official, weights aside: turns, self-check, tables. */
static int commit_routes(struct nue *n, uint32_t lid, struct fab_error *err)
{
	uint32_t d = n->lid_sw[lid], s;

	for (s = 0; s < n->wet.n; s++)
		if (n->g.turn[n->wet.turn[s]] == CDG_WET)
			n->g.turn[n->wet.turn[s]] = CDG_USED;
	if (!turns_marked(n)) {
		fab_error_set(err, "internal error: a route to LID %u takes an unmarked turn", lid);
		return -1;
	}
	if (compute_depths(n, d)) {
		fab_error_set(err, "internal error: routes to LID %u loop", lid);
		return -1;
	}
	write_tables(n, lid, d);
	return 0;
}

/* Makes the routes in n->out towards lid official: turns, self-check, tables and weights. */
static int commit_lid(struct nue *n, uint32_t lid, struct fab_error *err)
{
	uint32_t d = n->lid_sw[lid];

	if (commit_routes(n, lid, err))
		return -1;
	update_loads(n, lid, d, weights_of(n, lid), job_phase_dest(n, lid));
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
	ok = attempt(n, n->lid_sw[lid], weights_of(n, lid));
	n->no_search = 0;
	if (!ok)
		undo_attempt(n);
	return ok;
}

static void bfs_levels(struct nue *n, const uint8_t *seed, uint32_t root, uint32_t *hop);

/* Whether every switch with CAs reaches d over the fewest hops in n->depth. */
static int shortest_from_cas(struct nue *n, uint32_t d)
{
	uint32_t s;

	bfs_levels(n, NULL, d, n->hop);
	for (s = 0; s < n->nsw; s++)
		if (n->has_ca[s] && n->depth[s] > n->hop[s])
			return 0;
	return 1;
}

/*
 * One destination of the current layer; with k > 1 a fall-back is noted for move_fallbacks().
 * 0 when routed, 1 when need_shortest gives up, -1 on an error.
 */
static int route_lid(struct nue *n, uint32_t lid, struct fab_error *err)
{
	int routed;

	if (job_phase_dest(n, lid))
		n->rep->job_destinations++;
	if (n->k == 1 && !n->lid_exit[lid] && route_switch_lid_cheaply(n, lid))
		return commit_lid(n, lid, err);
	routed = try_route(n, lid, 1);
	if (!routed && n->need_shortest)
		return 1;
	if (!routed) {
		if (n->k > 1)
			n->fell_back[n->nfell_back++] = lid;
		fall_back(n, lid);
	}
	if (commit_lid(n, lid, err))
		return -1;
	if (n->need_shortest && n->lid_exit[lid] && !shortest_from_cas(n, n->lid_sw[lid]))
		return 1;
	return 0;
}

/* ------------------------------------------------------------------------------ set-up */

static int nue_alloc(struct nue *n)
{
	size_t sw = n->nsw ? n->nsw : 1, ch = n->nch ? n->nch : 1, lids = n->f->max_lid + 1;

	n->lid_sw = malloc(sizeof(uint32_t) * lids);
	n->lid_exit = calloc(lids, 1);
	n->lid_layer = calloc(lids, 1);
	n->home_layer = calloc(lids, 1);
	n->escaped = calloc(lids, 1);
	n->fell_back = malloc(sizeof(uint32_t) * lids);
	n->part = calloc(n->f->nendports ? n->f->nendports : 1, 1);
	n->dest = malloc(sizeof(uint32_t) * lids);
	n->keys = malloc(sizeof(uint64_t) * lids);
	n->ch_key = malloc(sizeof(uint64_t) * ch);
	n->dest_count = malloc(sizeof(uint32_t) * sw);
	n->ca_count = malloc(sizeof(uint32_t) * sw);
	n->w_all = malloc(sizeof(uint64_t) * ch);
	n->w_job = malloc(sizeof(uint64_t) * ch);
	n->src_lids = calloc(sw, sizeof(uint32_t));
	n->has_ca = calloc(sw, 1);
	n->ca_ports = calloc(sw, sizeof(uint32_t));
	n->efi = malloc(sizeof(uint64_t) * ch);
	n->esc_up = malloc(sizeof(uint32_t) * sw);
	n->esc_sub = malloc(sizeof(uint32_t) * sw);
	n->esc_order = malloc(sizeof(uint32_t) * sw);
	n->esc_child_off = malloc(sizeof(uint32_t) * (sw + 1));
	n->esc_child = malloc(sizeof(uint32_t) * sw);
	n->dist = malloc(sizeof(uint64_t) * sw);
	n->out = malloc(sizeof(uint32_t) * sw);
	n->kept_out = malloc(sizeof(uint32_t) * sw);
	n->done = malloc(sw);
	n->depth = malloc(sizeof(uint32_t) * sw);
	n->acc = malloc(sizeof(uint32_t) * sw);
	n->scratch = malloc(sizeof(uint32_t) * (sw + 2));
	n->children = malloc(sizeof(uint32_t) * sw);
	n->topo = malloc(sizeof(uint32_t) * sw);
	n->seen = calloc(sw, sizeof(uint32_t));
	n->hop = malloc(sizeof(uint32_t) * sw);
	if (!n->lid_sw || !n->lid_exit || !n->lid_layer || !n->home_layer || !n->escaped ||
	    !n->fell_back || !n->part || !n->dest || !n->keys || !n->ch_key || !n->dest_count ||
	    !n->ca_count || !n->w_all || !n->w_job || !n->src_lids || !n->has_ca || !n->ca_ports ||
	    !n->efi || !n->esc_up || !n->esc_sub || !n->esc_order || !n->esc_child_off ||
	    !n->esc_child || !n->dist || !n->out || !n->kept_out || !n->done || !n->depth ||
	    !n->acc || !n->scratch || !n->children || !n->topo || !n->seen || !n->hop)
		return -1;
	return minheap_init(&n->heap, n->nsw);
}

/* Per-layer dependency graphs and escape trees, for move_fallbacks(); only with k > 1. */
static int alloc_layers(struct nue *n)
{
	unsigned i;

	if (n->k < 2)
		return 0;
	n->layer_cdg = calloc(n->k, sizeof(*n->layer_cdg));
	n->layer_esc_up = malloc(sizeof(uint32_t) * n->k * (n->nsw ? n->nsw : 1));
	n->layer_root = malloc(sizeof(uint32_t) * n->k);
	n->mark.w_all = malloc(sizeof(uint64_t) * (n->nch ? n->nch : 1));
	n->mark.w_job = malloc(sizeof(uint64_t) * (n->nch ? n->nch : 1));
	n->mark.efi = malloc(sizeof(uint64_t) * (n->nch ? n->nch : 1));
	if (!n->layer_cdg || !n->layer_esc_up || !n->layer_root || !n->mark.w_all ||
	    !n->mark.w_job || !n->mark.efi)
		return -1;
	memset(n->layer_root, 0xff, sizeof(uint32_t) * n->k);
	for (i = 0; i < n->k; i++)
		if (cdg_layer_alloc(&n->g, &n->layer_cdg[i]))
			return -1;
	return 0;
}

static void free_layers(struct nue *n)
{
	unsigned i;

	cdg_select(&n->g, NULL);
	for (i = 0; n->layer_cdg && i < n->k; i++)
		cdg_layer_free(&n->layer_cdg[i]);
	free(n->layer_cdg);
	free(n->layer_esc_up);
	free(n->layer_root);
	free(n->mark.w_all);
	free(n->mark.w_job);
	free(n->mark.efi);
}

static void nue_free(struct nue *n)
{
	free(n->lid_sw);
	free(n->lid_exit);
	free(n->lid_layer);
	free(n->home_layer);
	free(n->escaped);
	free(n->fell_back);
	free_layers(n);
	free(n->part);
	free(n->dest);
	free(n->keys);
	free(n->ch_key);
	free(n->dest_count);
	free(n->ca_count);
	free(n->w_all);
	free(n->w_job);
	free(n->src_lids);
	free(n->has_ca);
	free(n->ca_ports);
	free(n->efi);
	free(n->job_off);
	free(n->job_sw);
	free(n->job_lids);
	free(n->esc_up);
	free(n->esc_sub);
	free(n->esc_order);
	free(n->esc_child_off);
	free(n->esc_child);
	free(n->dist);
	free(n->out);
	free(n->kept_out);
	free(n->done);
	free(n->depth);
	free(n->acc);
	free(n->scratch);
	free(n->children);
	free(n->topo);
	free(n->seen);
	free(n->hop);
	free(n->wet.turn);
	free(n->blocked.turn);
	free(n->attempt.turn);
	free(n->cand);
	minheap_free(&n->heap);
	cdg_free(&n->g);
}

/* Delivering switch and exit port of every LID, layer of every LID, sources per switch. */
static int index_destinations(struct nue *n, struct fab_error *err)
{
	const struct fabric *f = n->f;
	uint32_t i, lid;

	memset(n->lid_sw, 0xff, sizeof(uint32_t) * (f->max_lid + 1));
	for (i = 0; i < f->nendports; i++) {
		uint32_t p = f->endports[i];
		const struct fab_port *port = &f->ports[p];
		uint32_t nlids = 1u << port->lmc;

		for (lid = port->base_lid; lid < port->base_lid + nlids && lid <= f->max_lid;
		     lid++) {
			if (f->lid_port[lid] != p)
				continue;
			n->lid_sw[lid] = fabric_lid_switch(f, lid, &n->lid_exit[lid]);
			if (n->lid_sw[lid] == FAB_NONE) {
				fab_error_set(
					err,
					"%s port %u (LID %u) has a LID but no active link to a "
					"switch",
					fabric_node_id(f, port->node), port->num, lid);
				return -1;
			}
			n->home_layer[lid] = n->part[i];
			n->src_lids[n->lid_sw[lid]]++;
			n->has_ca[n->lid_sw[lid]] |= n->lid_exit[lid] != 0;
			n->ca_ports[n->lid_sw[lid]] += n->lid_exit[lid] && lid == port->base_lid;
		}
	}
	return 0;
}

/* Per job, the LIDs it has at each switch: (job << 32 | switch) keys, merged into a CSR. */
static int index_jobs(struct nue *n)
{
	const struct fabric *f = n->f;
	const struct job_map *jm = n->o->jobs;
	uint64_t *keys = NULL;
	uint32_t nkeys = 0, cap = 0, lid, i, m = 0;
	int rc = -1;

	if (!jm || !jm->njobs || !jm->node_off)
		return 0;
	for (lid = 1; lid <= f->max_lid; lid++) {
		uint32_t cnt;
		const uint32_t *jobs;

		if (n->lid_sw[lid] == FAB_NONE)
			continue;
		jobs = job_map_node_jobs(jm, f->ports[f->lid_port[lid]].node, &cnt);
		for (i = 0; i < cnt; i++) {
			if (fab_grow((void **)&keys, &cap, nkeys + 1, sizeof(*keys), 1024))
				goto out;
			keys[nkeys++] = (uint64_t)jobs[i] << 32 | n->lid_sw[lid];
		}
	}
	sort_u64(keys, nkeys);
	n->job_off = calloc(jm->njobs + 1, sizeof(uint32_t));
	n->job_sw = malloc(sizeof(uint32_t) * (nkeys ? nkeys : 1));
	n->job_lids = malloc(sizeof(uint32_t) * (nkeys ? nkeys : 1));
	if (!n->job_off || !n->job_sw || !n->job_lids)
		goto out;
	for (i = 0; i < nkeys; i++) {
		uint32_t job = (uint32_t)(keys[i] >> 32);

		if (i && keys[i] == keys[i - 1]) {
			n->job_lids[m - 1]++;
			continue;
		}
		n->job_sw[m] = (uint32_t)keys[i];
		n->job_lids[m++] = 1;
		n->job_off[job + 1]++;
	}
	for (i = 0; i < jm->njobs; i++)
		n->job_off[i + 1] += n->job_off[i];
	rc = 0;
out:
	free(keys);
	return rc;
}

/* Largest job a LID's node runs, for the job-phase order (thesis algorithm 5.1, line 5). */
static uint32_t job_size_of(const struct nue *n, uint32_t lid)
{
	uint32_t cnt, i, size = 0;
	const uint32_t *jobs =
		job_map_node_jobs(n->o->jobs, n->f->ports[n->f->lid_port[lid]].node, &cnt);

	for (i = 0; i < cnt; i++)
		if (n->o->jobs->job_ports[jobs[i]] > size)
			size = n->o->jobs->job_ports[jobs[i]];
	return size;
}

/* Routing class of a LID: job nodes by descending job size, then CAs and routers, then switches. */
static uint64_t dest_class(const struct nue *n, uint32_t lid)
{
	if (job_phase_dest(n, lid))
		return 0x7fffffffull - job_size_of(n, lid);
	return n->lid_exit[lid] ? 0x80000000ull : 0x80000001ull;
}

/*
 * The layer's destinations in routing order: LIDs of job nodes first, largest job first; then
 * CA and router LIDs; then switch LIDs, as the reference routes terminals before switches.
 * Within a class, ascending LID here; order_far_first then sorts by distance from the root.
 */
static void order_layer(struct nue *n, unsigned layer)
{
	uint32_t lid, i;

	memset(n->dest_count, 0, sizeof(uint32_t) * n->nsw);
	memset(n->ca_count, 0, sizeof(uint32_t) * n->nsw);
	n->ndest = n->nca = 0;
	for (lid = 1; lid <= n->f->max_lid; lid++) {
		if (n->lid_sw[lid] == FAB_NONE || n->lid_layer[lid] != layer)
			continue;
		n->dest_count[n->lid_sw[lid]]++;
		n->ca_count[n->lid_sw[lid]] += n->lid_exit[lid] != 0;
		n->nca += n->lid_exit[lid] != 0;
		n->keys[n->ndest++] = dest_class(n, lid) << 16 | lid;
	}
	sort_u64(n->keys, n->ndest);
	for (i = 0; i < n->ndest; i++)
		n->dest[i] = (uint32_t)(n->keys[i] & 0xffff);
}

/* ---------------------------------------------------------------------------- layers */

/* Multi-source BFS hop counts into hop[] from every switch with seed[s] set. */
static void bfs_levels(struct nue *n, const uint8_t *seed, uint32_t root, uint32_t *hop)
{
	uint32_t qh = 0, qt = 0, s, c, *queue = n->scratch;

	for (s = 0; s < n->nsw; s++) {
		hop[s] = FAB_NONE;
		if (seed ? seed[s] : s == root) {
			hop[s] = 0;
			queue[qt++] = s;
		}
	}
	while (qh < qt) {
		s = queue[qh++];
		for (c = n->g.sw_off[s]; c < n->g.sw_off[s + 1]; c++) {
			if (hop[n->g.head[c]] == FAB_NONE) {
				hop[n->g.head[c]] = hop[s] + 1;
				queue[qt++] = n->g.head[c];
			}
		}
	}
}

/*
 * Initial order of the layer's channels, so that most turns agree with it and need no search.
 * In tree-like fabrics (switches without end nodes exist) routes climb from the end-node
 * switches and then descend: channels going up come first (lowest level first), then sideways,
 * then going down (highest level first).  Where every switch has end nodes, levels are hops
 * from the layer's root and the escape tree's up-then-down paths agree with the same rule.
 */
static int seed_order(struct nue *n)
{
	uint32_t s, c, *hop = n->depth, tree_like = 0;
	const uint64_t far = (1u << 20) - 1;

	for (s = 0; s < n->nsw; s++)
		tree_like |= !n->has_ca[s];
	if (tree_like) {
		bfs_levels(n, n->has_ca, FAB_NONE, hop);
	} else {
		bfs_levels(n, NULL, n->root, hop);
		/* Hops from the root run the other way: up is towards the root. */
		for (s = 0; s < n->nsw; s++)
			hop[s] = (uint32_t)far - hop[s];
	}
	for (c = 0; c < n->nch; c++) {
		uint64_t from = hop[n->g.tail[c]], to = hop[n->g.head[c]];

		if (to > from)
			n->ch_key[c] = from;
		else if (to == from)
			n->ch_key[c] = 1ull << 20 | from;
		else
			n->ch_key[c] = 2ull << 20 | (far - from);
	}
	return cdg_seed_order(&n->g, n->ch_key);
}

/*
 * Within each class of order_layer, destinations farthest from the layer's root go first.  Their
 * routes cross most of the layer and have the fewest alternatives, so they are routed while the
 * dependency graph is still sparse; those near the root are reached over few turns that earlier
 * routes already hold.  On the 8x8x8 torus with 8 layers this cut the fall-backs from 20 to 1
 * and the maximum EFI by 40%, and on one layer the maximum EFI to a fifth.
 */
static void order_far_first(struct nue *n)
{
	uint32_t i, cls_rank = 0, tie = n->ties_descending ? 0xffffu : 0;
	uint64_t prev = 0;

	bfs_levels(n, NULL, n->root, n->depth);
	for (i = 0; i < n->ndest; i++) {
		uint64_t cls = n->keys[i] >> 16, hop = n->depth[n->lid_sw[n->dest[i]]];

		if (i && cls != prev)
			cls_rank++;
		prev = cls;
		n->keys[i] = (uint64_t)cls_rank << 40 | (0xffffu - hop) << 16 | (n->dest[i] ^ tie);
	}
	sort_u64(n->keys, n->ndest);
	for (i = 0; i < n->ndest; i++)
		n->dest[i] = (uint32_t)(n->keys[i] & 0xffff) ^ tie;
}

/*
 * Brandes' betweenness costs about as much as routing a few destinations, and a layer's
 * destinations, hence its root, are the same in every candidate with k layers: chosen once.
 */
static uint32_t layer_root(struct nue *n, unsigned layer)
{
	uint32_t root;

	if (n->layer_cdg && n->layer_root[layer] != FAB_NONE)
		return n->layer_root[layer];
	root = nue_central_switch(n->f, n->dest_count, n->nca ? n->ca_count : NULL);
	if (n->layer_cdg)
		n->layer_root[layer] = root;
	return root;
}

/*
 * Whether fallbacks destinations on escape paths are more than 1% of all, the rate the thesis
 * stays well below with 8 layers; beyond it one layer routes every destination as well (see
 * route_whole_single_layer).
 */
static int falls_back_much(const struct nue *n, uint64_t fallbacks)
{
	return fallbacks * 100 > n->sources;
}

#define LAYER_ABANDONED 2 /* route_layer stopped at give_up fall-backs */

/*
 * Routes the destinations of one layer, new turns costing turn_cost from the start (see
 * try_route), until give_up of them have fallen back; 0, 1 when need_shortest gives up,
 * LAYER_ABANDONED, -1 on an error.
 */
static int route_layer(struct nue *n, unsigned layer, uint64_t turn_cost, uint32_t give_up,
		       struct fab_error *err)
{
	uint32_t i, fallbacks = n->rep->fallbacks;

	order_layer(n, layer);
	n->rep->dests_per_layer[layer] = n->ndest;
	if (!n->ndest) {
		/*
		 * No tree either: the rebalancing pass and moved fall-backs still select the
		 * layer, and a stale tree there sent tree_children out of bounds (one switch
		 * with two hosts and 2 VLs crashed).
		 */
		if (n->layer_esc_up)
			memset(n->layer_esc_up + (size_t)layer * n->nsw, 0xff,
			       sizeof(uint32_t) * n->nsw);
		return 0;
	}
	/*
	 * The root is a switch with CAs of the layer when there are any.  In a fat tree a core
	 * root hangs other core switches below edge switches, and the escape tree's turns down
	 * and up again there block the minimal turns of many routes (max EFI ten times the
	 * optimum on a 3-level tree); from an edge root the tree climbs and descends as the
	 * minimal routes do.  Where every switch has CAs this changes nothing.
	 */
	n->root = layer_root(n, layer);
	if (n->root == FAB_NONE) {
		fab_error_set(err, "out of memory choosing the root of layer %u", layer);
		return -1;
	}
	n->rep->root_guid[layer] = n->f->nodes[n->f->switches[n->root]].guid;
	if (n->layer_cdg)
		cdg_select(&n->g, &n->layer_cdg[layer]);
	n->impasse_turn_cost = turn_cost;
	cdg_reset(&n->g);
	if (seed_order(n)) {
		fab_error_set(err, "out of memory ordering layer %u", layer);
		return -1;
	}
	order_far_first(n);
	escape_tree(n);
	escape_children(n);
	if (n->layer_esc_up)
		memcpy(n->layer_esc_up + (size_t)layer * n->nsw, n->esc_up,
		       sizeof(uint32_t) * n->nsw);
	if (mark_escape_paths(n)) {
		fab_error_set(err, "internal error: escape paths of layer %u are cyclic", layer);
		return -1;
	}
	for (i = 0; i < n->ndest; i++) {
		int rc = route_lid(n, n->dest[i], err);

		if (rc)
			return rc;
		if (n->rep->fallbacks - fallbacks >= give_up)
			return LAYER_ABANDONED;
	}
	return 0;
}

static void set_service_levels(struct nue *n)
{
	uint32_t lid;
	unsigned sl;

	for (sl = 0; sl < ROUTING_MAX_SL; sl++)
		n->r->sl2vl_uniform[sl] = (uint8_t)(sl % n->k);
	n->r->vls_used = n->k;
	if (n->k == 1) {
		n->r->sl_mode = ROUTING_SL_UNIFORM;
		n->r->sl_uniform = 0;
		return;
	}
	n->r->sl_mode = ROUTING_SL_PER_DLID;
	for (lid = 1; lid <= n->f->max_lid; lid++)
		n->r->sl_by_dlid[lid] = n->lid_sw[lid] == FAB_NONE ? 0 : n->lid_layer[lid];
}

static int check_fabric(const struct fabric *f, unsigned k, struct fab_error *err)
{
	unsigned vls;

	if (fabric_check_routable(f, err))
		return -1;
	if (k < 1 || k > NUE_MAX_VLS) {
		fab_error_set(err, "nue_vls=%u is outside 1..%u", k, NUE_MAX_VLS);
		return -1;
	}
	vls = fabric_min_op_vls(f);
	if (k > vls) {
		fab_error_set(err,
			      "nue_vls=%u but some link of the fabric operates only %u data VL%s",
			      k, vls, vls == 1 ? "" : "s");
		return -1;
	}
	return 0;
}

static void init_weights(struct nue *n)
{
	uint64_t total = 0, w;
	uint32_t s, c;

	for (s = 0; s < n->nsw; s++)
		total += n->src_lids[s];
	/* Thesis 6.2.4: |N|^2, so that weight differences never outgrow the hop count. */
	w = total ? total * total : 1;
	n->sources = total;
	for (c = 0; c < n->nch; c++)
		n->w_all[c] = n->w_job[c] = w;
	n->w_init = w;
}

/* A fresh run: weights, tables, score and the report's per-run counts. */
static void reset_run(struct nue *n)
{
	struct nue_report *rep = n->rep;
	size_t cells = (size_t)n->r->nswitches * n->r->lft_len;

	rep->fallbacks = rep->backtracks = rep->second_attempts = rep->aside_attempts = 0;
	rep->shortcuts = 0;
	rep->moved_aside = rep->vl_rerouted = 0;
	rep->job_destinations = rep->moved = rep->rerouted = 0;
	memset(rep->fallbacks_per_layer, 0, sizeof(rep->fallbacks_per_layer));
	n->nfell_back = 0;
	/* One layer (route_single_layer) holds every destination, whatever the partition. */
	if (n->k == 1)
		memset(n->lid_layer, 0, n->f->max_lid + 1);
	else
		memcpy(n->lid_layer, n->home_layer, n->f->max_lid + 1);
	memset(n->escaped, 0, n->f->max_lid + 1);
	rep->single_layer = 0;
	n->g.searches = n->g.closed_refusals = 0;
	memset(n->efi, 0, sizeof(uint64_t) * (n->nch ? n->nch : 1));
	n->score_hops = 0;
	init_weights(n);
	memset(n->r->lft, FAB_NO_PORT, cells);
	memset(n->r->hops, 0xff, cells);
}

/* Makes layer the one routing works in, with its escape tree for a fall-back. */
static void select_layer(struct nue *n, unsigned layer)
{
	cdg_select(&n->g, &n->layer_cdg[layer]);
	memcpy(n->esc_up, n->layer_esc_up + (size_t)layer * n->nsw, sizeof(uint32_t) * n->nsw);
	tree_children(n);
}

/* Adds (or removes) the score of lid's escape-path routes in the selected layer. */
static int score_escape_routes(struct nue *n, uint32_t lid, int remove)
{
	uint32_t d = n->lid_sw[lid];

	use_escape_paths(n, d);
	if (compute_depths(n, d))
		return -1;
	tally_score(n, lid, remove);
	return 0;
}

/*
 * Destinations that fell back try every other layer, the next ones first, once all layers are
 * routed: a layer whose routes run elsewhere often still has the turns this destination needs.
 * A destination moved to layer j travels on SL and VL j, and its routes are checked against
 * layer j's dependency graph like any other.  The escape paths it leaves hold no turn of their
 * own (they were marked before the layer's first route), so nothing needs undoing in its own
 * layer but the score.  The fall-back itself happened when the impasse did, so the balancing
 * weights every later destination saw are those of a run without moves.
 */
static int move_fallbacks(struct nue *n, struct fab_error *err)
{
	uint32_t i, lid;
	unsigned home, j;

	n->impasse_turn_cost = n->sources;
	for (i = 0; i < n->nfell_back; i++) {
		lid = n->fell_back[i];
		home = n->home_layer[lid];
		select_layer(n, home);
		if (score_escape_routes(n, lid, 1))
			goto loop;
		for (j = 1; j < n->k; j++) {
			unsigned layer = (home + j) % n->k;

			select_layer(n, layer);
			if (!try_route(n, lid, 0))
				continue;
			leave_escape_paths(n, lid);
			n->lid_layer[lid] = (uint8_t)layer;
			n->rep->dests_per_layer[home]--;
			n->rep->dests_per_layer[layer]++;
			n->rep->moved++;
			if (commit_lid(n, lid, err))
				return -1;
			break;
		}
		if (j < n->k)
			continue;
		select_layer(n, home);
		if (score_escape_routes(n, lid, 0))
			goto loop;
	}
	return 0;
loop:
	fab_error_set(err, "internal error: escape paths to LID %u loop", lid);
	return -1;
}

/*
 * Rebuilds n->out, depths and n->topo from the tables' routes towards lid; -1 (an internal error,
 * said in err) if they leave a switch through no channel or loop.
 */
static int routes_from_tables(struct nue *n, uint32_t lid, uint32_t d, struct fab_error *err)
{
	const struct fabric *f = n->f;
	uint32_t s, c;

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
	if (compute_depths(n, d))
		goto broken;
	return 0;
broken:
	fab_error_set(err, "internal error: the routes to LID %u in the tables loop", lid);
	return -1;
}

/* Takes the loads of lid's routes (in n->out) off the weights and the score. */
static void remove_loads(struct nue *n, uint32_t lid, uint32_t d)
{
	if (weighs(n, lid, d)) {
		source_counts(n, lid, job_phase_dest(n, lid));
		add_loads(n, weights_of(n, lid), 1);
	}
	tally_score(n, lid, 1);
}

static uint64_t max_efi(const struct nue *n)
{
	uint64_t m = 0;
	uint32_t c;

	for (c = 0; c < n->nch; c++)
		if (n->efi[c] > m)
			m = n->efi[c];
	return m;
}

/* Whether a channel of the routes in n->out carries more CA-to-CA routes than efi_cap. */
static int over_cap(const struct nue *n, uint32_t d)
{
	uint32_t s;

	for (s = 0; s < n->nsw; s++)
		if (s != d && n->efi[n->out[s]] > n->efi_cap)
			return 1;
	return 0;
}

/* Makes the routes in n->kept_out (loop-free: they were lid's) official again. */
static void put_back_kept(struct nue *n, uint32_t lid, uint32_t d)
{
	memcpy(n->out, n->kept_out, sizeof(uint32_t) * n->nsw);
	compute_depths(n, d);
	write_tables(n, lid, d);
	update_loads(n, lid, d, weights_of(n, lid), job_phase_dest(n, lid));
}

/* What better() compares. */
struct nue_score {
	uint32_t fallbacks;
	uint64_t efi, hops;
};

static struct nue_score score_of(const struct nue *n)
{
	struct nue_score s = { n->rep->fallbacks, max_efi(n), n->score_hops };

	return s;
}

/* Fewer fall-backs (long routes, a stated limit), then lower maximum EFI, then fewer hops. */
static int better(const struct nue_score *a, const struct nue_score *b)
{
	if (a->fallbacks != b->fallbacks)
		return a->fallbacks < b->fallbacks;
	if (a->efi != b->efi)
		return a->efi < b->efi;
	return a->hops < b->hops;
}

/* ------------------------------------------------ the race of two destination orders */

enum race_state {
	RACE_OPEN,   /* the other order's first pass still runs */
	RACE_WON,    /* n's first pass scored better or equal */
	RACE_LOST,   /* the other's scored better */
	RACE_FAILED, /* the other failed (its error is in its worker) */
};

struct nue_worker;

/* n's first pass is done, the other order's may not be; see route_one_layer. */
struct order_race {
	struct nue_worker *other;
	int other_thread; /* the other runs on a thread of its own, to be joined */
	struct nue_score mine;
	enum race_state state;
};

static enum race_state settle_race(struct order_race *race, int wait);

/*
 * Whether n's rebalancing must stop because the other order won or failed.  Without wait an
 * open race stays open.  Once n has won, n->race is cleared: its columns may be promised.
 */
static int race_lost(struct nue *n, int wait)
{
	if (!n->race)
		return 0;
	switch (settle_race(n->race, wait)) {
	case RACE_OPEN:
		return 0;
	case RACE_WON:
		n->race = NULL;
		return 0;
	default:
		return 1;
	}
}

/*
 * Routes lid again in its layer once every destination is routed.  The first routes of a
 * destination saw only the loads of those routed before it; now the weights hold every other
 * destination's routes, so its routes move off the channels that filled up after it.  The
 * Dijkstra minimises the summed load, not the highest, so new routes that would lift a channel
 * above the maximum EFI at the start of the pass are refused: the pass never raises it.  Old
 * turns stay in the dependency graph (other routes may share them), so new routes only add
 * dependencies and the layer stays acyclic.  1 when the routes changed, 0 when the old ones
 * stay, -1 on an internal error.
 */
static int reroute_lid(struct nue *n, uint32_t lid, struct fab_error *err)
{
	uint32_t d = n->lid_sw[lid];

	if (routes_from_tables(n, lid, d, err))
		return -1;
	memcpy(n->kept_out, n->out, sizeof(uint32_t) * n->nsw);
	remove_loads(n, lid, d);
	if (!attempt(n, d, weights_of(n, lid))) {
		undo_attempt(n);
		put_back_kept(n, lid, d);
		return 0;
	}
	if (commit_lid(n, lid, err))
		return -1;
	if (!n->escaped[lid] && over_cap(n, d)) {
		remove_loads(n, lid, d);
		put_back_kept(n, lid, d);
		return 0;
	}
	if (n->escaped[lid])
		leave_escape_paths(n, lid);
	return memcmp(n->out, n->kept_out, sizeof(uint32_t) * n->nsw) != 0;
}

/*
 * One more pass over the terminals' LIDs, layer by layer, each routed again against the final
 * weights (reroute_lid).  Destinations still on escape paths get another chance too.
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
 * maximum EFI 13,528 against 9,736).  The single layer route_single_layer tries with k > 1 is one
 * layer too and moves aside; on fat trees, where it wins, its routes are shortest already.  With
 * more layers, destinations still on escape paths move aside too: any route of their own is
 * better than the escape paths, and they are few (12x12x12 torus with 1% of links removed, 8 VLs,
 * offline: 180 fall-backs instead of 198, maximum EFI 157,572 instead of 185,400).
 *
 * With one layer this pass is the last to write the tables, in LID order, and touches one LID's
 * column at a time; the switch LIDs' columns are final before it.  So every column below the LID
 * in hand is final, and the verifier may check it meanwhile (routing_columns_final).  With more
 * layers the candidates' tables trade places at the end, so nothing is promised.
 */
static int rebalance(struct nue *n, struct fab_error *err)
{
	int promise = n->k == 1;
	uint32_t lid;
	unsigned layer;
	int rc;

	n->efi_cap = max_efi(n);
	for (layer = 0; layer < n->k; layer++) {
		if (n->layer_cdg)
			select_layer(n, layer);
		for (lid = 1; lid <= n->f->max_lid; lid++) {
			if (n->lid_sw[lid] == FAB_NONE || !n->lid_exit[lid] ||
			    n->lid_layer[lid] != layer)
				continue;
			rc = race_lost(n, 0);
			if (rc)
				goto out;
			if (promise && !n->race)
				routing_columns_final(n->r, lid);
			n->move_aside = n->k == 1 || n->escaped[lid];
			rc = reroute_lid(n, lid, err);
			if (rc < 0)
				goto out;
			n->rep->rerouted += (uint32_t)rc;
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

/* Notes what routing a layer changes beyond it, before the first try; see route_layer_best. */
static void mark_layer(struct nue *n)
{
	struct layer_mark *m = &n->mark;
	size_t bytes = sizeof(uint64_t) * n->nch;

	memcpy(m->w_all, n->w_all, bytes);
	memcpy(m->w_job, n->w_job, bytes);
	memcpy(m->efi, n->efi, bytes);
	m->score_hops = n->score_hops;
	m->nfell_back = n->nfell_back;
	m->rep = *n->rep;
}

/*
 * Undoes what routing the current layer changed since mark_layer, but for its dependency graph
 * and its LIDs' tables, which routing it again resets and overwrites.
 */
static void back_to_mark(struct nue *n)
{
	struct layer_mark *m = &n->mark;
	size_t bytes = sizeof(uint64_t) * n->nch;
	uint32_t i;

	memcpy(n->w_all, m->w_all, bytes);
	memcpy(n->w_job, m->w_job, bytes);
	memcpy(n->efi, m->efi, bytes);
	n->score_hops = m->score_hops;
	for (i = m->nfell_back; i < n->nfell_back; i++)
		n->escaped[n->fell_back[i]] = 0;
	n->nfell_back = m->nfell_back;
	*n->rep = m->rep;
}

/*
 * A layer whose destinations fell back is routed again (nue_layer_tries, up to six times), each
 * time with every new turn costing more from the layer's first destination on: nothing, then
 * the load of one destination on a channel (what try_route charges after an impasse), then four
 * times that; tries four to six repeat these with equally far destinations taken by descending
 * LID.  The try with the fewest fall-backs is kept, the earliest on a tie.  Among routes of equal
 * length the costlier turns favour those that reuse turns, which leaves the layer's dependency
 * graph room for its later destinations.  Impasses, once they start, hang on every choice before
 * them: on tori beyond 8x8x8 with 8 layers whole layers fell back for a third of their
 * destinations while others had none, and which ones changed with the switch weights and with
 * the order of equally far destinations.  With three tries the 10x10x10 torus falls back for 11
 * of 5,000 destinations instead of 335 with one, with six for none (11x11x10: 27, then 3).
 *
 * A layer still falling back for more than 1% of all destinations after three tries skips the
 * other three: one layer for every destination is then likely to be tried anyway (see
 * route_whole_single_layer), and on tori with 2 or 4 VLs, where it wins, they had cost half as
 * much route time again (10x10x10 torus, 2 VLs: 24.6 s against 16.8 s, same tables).  Layers
 * without fall-backs are routed once, as before.  A try stops once it has as many fall-backs as
 * the best before it, which cannot lose to it.  When an earlier try wins it is routed once more
 * rather than kept aside: the routing is deterministic, and the tables and dependency graph of a
 * layer are large.
 */
static int route_layer_best(struct nue *n, unsigned layer, struct fab_error *err)
{
	/* a new turn, in loads of one destination; the second half by descending LID */
	static const unsigned cost[NUE_LAYER_TRIES_MAX] = { 0, 1, 4, 0, 1, 4 };
	const unsigned tries = n->o->layer_tries ? n->o->layer_tries : NUE_LAYER_TRIES_MAX;
	const int base_ties = n->ties_descending;
	uint32_t before = n->rep->fallbacks, fewest = UINT32_MAX;
	unsigned i, best = 0;
	int rc = 0, best_in_place = 0;

	if (n->k == 1)
		return route_layer(n, layer, 0, UINT32_MAX, err);
	mark_layer(n);
	for (i = 0; i < tries && i < NUE_LAYER_TRIES_MAX && fewest; i++) {
		/* Then one layer for every destination is likely to be tried. */
		if (i == NUE_LAYER_TRIES_MAX / 2 && falls_back_much(n, fewest))
			break;
		if (i)
			back_to_mark(n);
		n->ties_descending = base_ties ^ (i >= NUE_LAYER_TRIES_MAX / 2);
		rc = route_layer(n, layer, cost[i] * n->sources, fewest, err);
		if (rc == 1 || rc < 0)
			goto out;
		best_in_place = rc == 0;
		if (best_in_place) {
			fewest = n->rep->fallbacks - before;
			best = i;
		}
	}
	rc = 0;
	if (!best_in_place) {
		back_to_mark(n);
		n->ties_descending = base_ties ^ (best >= NUE_LAYER_TRIES_MAX / 2);
		rc = route_layer(n, layer, cost[best] * n->sources, UINT32_MAX, err);
	}
	n->rep->layers_rerouted += best > 0;
out:
	n->ties_descending = base_ties;
	return rc;
}

/* Every destination routed once; 0, 1 when need_shortest gives up, -1 on an error. */
static int route_first_pass(struct nue *n, enum sw_weights sww, struct fab_error *err)
{
	unsigned layer;
	int rc;

	n->sw_weights = sww;
	reset_run(n);
	n->rep->switch_lids_unweighted = sww == SWW_NONE;
	for (layer = 0; layer < n->k; layer++) {
		rc = route_layer_best(n, layer, err);
		if (rc)
			return rc;
	}
	return move_fallbacks(n, err);
}

/* The rebalancing pass after the first, unless turned off; 0, 1 when n lost its race, -1. */
static int finish_candidate(struct nue *n, struct fab_error *err)
{
	int rc = n->o->skip_rebalance ? 0 : rebalance(n, err);

	n->rep->cycle_searches = n->g.searches;
	n->rep->searches_spared = n->g.closed_refusals;
	return rc;
}

/* One complete routing; 0, 1 when need_shortest gives up, -1 on an error. */
static int route_candidate(struct nue *n, enum sw_weights sww, struct fab_error *err)
{
	int rc = route_first_pass(n, sww, err);

	return rc ? rc : finish_candidate(n, err);
}

/* A candidate routing's results: tables and the layer of every LID. */
struct nue_tables {
	uint8_t *lft, *hops, *layer;
};

static void swap_ptr(uint8_t **a, uint8_t **b)
{
	uint8_t *t = *a;

	*a = *b;
	*b = t;
}

/* Exchanges the current results with other tables: a spare set or another routing's. */
static void swap_tables(struct nue *n, uint8_t **lft, uint8_t **hops, uint8_t **layer)
{
	swap_ptr(&n->r->lft, lft);
	swap_ptr(&n->r->hops, hops);
	swap_ptr(&n->lid_layer, layer);
}

static void swap_with_spare(struct nue *n, struct nue_tables *spare)
{
	swap_tables(n, &spare->lft, &spare->hops, &spare->layer);
}

/* Marks the turns of the routes in n->out used in the selected layer; -1 if one closes a cycle. */
static int mark_route_turns(struct nue *n)
{
	uint32_t s, in, out;

	for (s = 0; s < n->nsw; s++)
		if (route_turn(n, s, &in, &out) && cdg_try_add(&n->g, in, out, CDG_USED) < 0)
			return -1;
	return 0;
}

/*
 * The dependency graph of each VL the single layer's destinations are spread over: the turns of
 * its own destinations' routes.  Each is a part of the one acyclic layer, so none closes a cycle,
 * and each VL starts from the order of the single layer routed last, usually the winner, whose
 * turns all agree with it and need no search.  The weights, EFI and hops are counted again from
 * the tables too: other candidates may have routed since.
 */
static int split_over_vls(struct nue *n, struct fab_error *err)
{
	unsigned v;
	uint32_t lid;

	for (v = 0; v < n->k; v++)
		cdg_layer_start_from(&n->g, &n->layer_cdg[v]);
	n->sw_weights = SWW_CA_SWITCHES;
	init_weights(n);
	memset(n->efi, 0, sizeof(uint64_t) * (n->nch ? n->nch : 1));
	n->score_hops = 0;
	for (lid = 1; lid <= n->f->max_lid; lid++) {
		uint32_t d = n->lid_sw[lid];

		if (d == FAB_NONE)
			continue;
		cdg_select(&n->g, &n->layer_cdg[n->lid_layer[lid]]);
		if (routes_from_tables(n, lid, d, err))
			return -1;
		if (mark_route_turns(n)) {
			fab_error_set(err,
				      "internal error: the single layer's routes to LID %u "
				      "do not fit its VL",
				      lid);
			return -1;
		}
		update_loads(n, lid, d, weights_of(n, lid), job_phase_dest(n, lid));
	}
	return 0;
}

/* Hops of the routes in n->out (depths from compute_depths), once per LID sending from a switch. */
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
 * rebalancing pass does with k layers (reroute_lid: never above the maximum EFI; switches move
 * aside only for escape paths), if its routes from the switches with CAs are not all shortest or
 * are escape paths.  Moving aside for every such LID gave shorter routes but a higher maximum
 * EFI (10x10x10 torus, 4 VLs: 9.867 links between CAs and 135,372 against 9.922 and 111,868).
 * 1 when the routes changed, 0 when not, -1 on an internal error.
 */
static int shorten_ca_lid(struct nue *n, uint32_t lid, struct fab_error *err)
{
	uint32_t d = n->lid_sw[lid];

	if (routes_from_tables(n, lid, d, err))
		return -1;
	if (!n->escaped[lid] && shortest_from_cas(n, d))
		return 0;
	cdg_select(&n->g, &n->layer_cdg[n->lid_layer[lid]]);
	n->move_aside = n->escaped[lid];
	return reroute_lid(n, lid, err);
}

/*
 * Routes switch LID lid again in its VL's own dependency graph (see reroute_in_vls), its
 * old turns kept there, over channels of weight w.  New routes are kept if they are shorter,
 * summed over the sources, or if the old ones were escape paths.  1 when they changed, 0 when
 * the old ones stay, -1 on an internal error.
 */
static int shorten_switch_lid(struct nue *n, uint32_t lid, const uint64_t *w, struct fab_error *err)
{
	uint32_t d = n->lid_sw[lid];
	uint64_t before, shortest;

	if (routes_from_tables(n, lid, d, err))
		return -1;
	bfs_levels(n, NULL, d, n->hop);
	shortest = source_hops(n, n->hop);
	before = source_hops(n, n->depth);
	if (before == shortest && !n->escaped[lid])
		return 0;
	cdg_select(&n->g, &n->layer_cdg[n->lid_layer[lid]]);
	if (!attempt(n, d, w))
		goto keep;
	if (compute_depths(n, d)) {
		fab_error_set(err, "internal error: routes to LID %u loop", lid);
		return -1;
	}
	if (!n->escaped[lid] && source_hops(n, n->depth) >= before)
		goto keep;
	if (commit_routes(n, lid, err))
		return -1;
	if (n->escaped[lid])
		leave_escape_paths(n, lid);
	return 1;
keep:
	undo_attempt(n);
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
 * On tori the one layer wins with 2 or 4 VLs (see route_whole_single_layer), and the routes
 * between CAs got shorter and the maximum EFI lower (10x10x10 torus, 2 VLs: 10.028 links instead
 * of 10.313, 149,888 instead of 164,168).  On fat trees the CA routes are shortest already, but
 * the switch LIDs need turns the CAs' routes never take (down and up again) and, in one layer,
 * many of those close a cycle: with 8 VLs on the 16-ary 3-tree the mean hops over all LID pairs
 * fell from 5.2916 to 5.2792 (5.2770 for shortest paths).  Not further: a switch LID's routes
 * climb out of a pod after turning up in it, and with the up-and-down turns of the VL's CA
 * routes such turns in two pods close a cycle through the cores.  Giving the switch LIDs a VL
 * of their own shortened them less (5.2879), and trying the other VLs as well gained little
 * (5.2787) for five times the route time.
 */
static int reroute_in_vls(struct nue *n, struct fab_error *err)
{
	uint64_t *w = malloc(sizeof(uint64_t) * (n->nch ? n->nch : 1));
	uint32_t lid, c;
	int rc = -1;

	if (!w) {
		fab_error_set(err, "out of memory for routing again in each VL");
		return -1;
	}
	if (split_over_vls(n, err))
		goto out;
	for (c = 0; c < n->nch; c++)
		w[c] = n->w_init;
	n->efi_cap = max_efi(n);
	for (lid = 1; lid <= n->f->max_lid; lid++) {
		if (n->lid_sw[lid] == FAB_NONE || !n->lid_exit[lid])
			continue;
		rc = shorten_ca_lid(n, lid, err);
		if (rc < 0)
			goto out;
		n->rep->vl_rerouted += (uint32_t)rc;
	}
	n->move_aside = 1;
	for (lid = 1; lid <= n->f->max_lid; lid++) {
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

/*
 * With k > 1, one layer is routed first.  Where its routes between CAs are all shortest and none
 * falls back (fat trees: climbing then descending never closes a cycle), k layers cannot shorten
 * any of them, only choose again among routes of equal length, and the one layer becomes a
 * candidate: its destinations are spread over the k VLs by the partition, and every VL's
 * dependencies are a subset of the one acyclic layer's.  On the 16-ary 3-tree with 8 VLs it
 * had the lower maximum EFI (offline 6,688 against 6,880), on the 4-ary 3-tree with 4 VLs the
 * higher (92 against 88).  Elsewhere the layer gives up at the first CA route that is not
 * shortest, usually after a small part of the destinations.  With whole set it routes every
 * destination, shortest or not (see route_whole_single_layer).  1 when the layer is a
 * candidate, 0 when it gave up, -1 on an error.
 */
static int route_single_layer(struct nue *n, int whole, struct fab_error *err)
{
	struct cdg_layer *layers = n->layer_cdg;
	unsigned k = n->k;
	uint32_t lid;
	int rc;

	n->k = 1;
	n->layer_cdg = NULL;
	n->need_shortest = !whole;
	cdg_select(&n->g, NULL);
	rc = route_candidate(n, SWW_CA_SWITCHES, err);
	n->need_shortest = 0;
	n->layer_cdg = layers;
	n->k = k;
	if (rc)
		return rc < 0 ? -1 : 0;
	memcpy(n->lid_layer, n->home_layer, n->f->max_lid + 1);
	memset(n->rep->dests_per_layer, 0, sizeof(n->rep->dests_per_layer));
	memset(n->rep->fallbacks_per_layer, 0, sizeof(n->rep->fallbacks_per_layer));
	for (lid = 1; lid <= n->f->max_lid; lid++) {
		if (n->lid_sw[lid] == FAB_NONE)
			continue;
		n->rep->dests_per_layer[n->lid_layer[lid]]++;
		n->rep->fallbacks_per_layer[n->lid_layer[lid]] += n->escaped[lid];
	}
	n->rep->single_layer = whole ? NUE_ONE_LAYER_FEWER_FALLBACKS : NUE_ONE_LAYER_SHORTEST;
	return 1;
}

/* The best candidate so far: its report and score; its tables are in spare while another runs. */
struct nue_best {
	struct nue_report rep;
	struct nue_score score;
	int valid;
	struct nue_tables spare;
};

/* Keeps the candidate just routed if it beats the best, else puts the best back. */
static void keep_better(struct nue *n, struct nue_best *b)
{
	struct nue_score s = score_of(n);

	if (b->valid && !better(&s, &b->score)) {
		swap_with_spare(n, &b->spare);
		*n->rep = b->rep;
		return;
	}
	b->rep = *n->rep;
	b->score = s;
	b->valid = 1;
}

/* Moves the best candidate's tables aside before the next candidate runs. */
static int set_best_aside(struct nue *n, struct nue_best *b)
{
	size_t cells = (size_t)n->r->nswitches * n->r->lft_len;

	if (!b->valid)
		return 0;
	if (!b->spare.lft) {
		b->spare.lft = malloc(cells ? cells : 1);
		b->spare.hops = malloc(cells ? cells : 1);
		b->spare.layer = malloc(n->f->max_lid + 1);
		if (!b->spare.lft || !b->spare.hops || !b->spare.layer)
			return -1;
	}
	swap_with_spare(n, &b->spare);
	return 0;
}

static void free_best(struct nue_best *b)
{
	free(b->spare.lft);
	free(b->spare.hops);
	free(b->spare.layer);
}

/*
 * Routes the single-layer candidate if probe is set, then the listed ones, in this order; the
 * best ends up in n's tables and report (an earlier candidate wins a tie).  0 or -1 on an error.
 */
static int run_candidates(struct nue *n, struct nue_best *b, int probe, const enum sw_weights *cand,
			  unsigned ncand, struct fab_error *err)
{
	unsigned i;
	int rc;

	if (probe) {
		rc = route_single_layer(n, 0, err);
		if (rc < 0)
			return -1;
		if (rc)
			keep_better(n, b);
	}
	for (i = 0; i < ncand; i++) {
		if (set_best_aside(n, b)) {
			fab_error_set(err, "out of memory for a second candidate routing");
			return -1;
		}
		if (route_candidate(n, cand[i], err) < 0)
			return -1;
		keep_better(n, b);
	}
	return 0;
}

/* Memory, dependency graph, partition (copied from part when given) and indexes of a routing. */
static int nue_prepare(struct nue *n, const uint8_t *part, struct fab_error *err)
{
	const struct fabric *f = n->f;

	n->nsw = f->nswitches;
	n->nch = f->sw_adj_off[f->nswitches];
	if (nue_alloc(n) || cdg_build(&n->g, f) || alloc_layers(n)) {
		fab_error_set(err, "out of memory for %u switches, %u channels", n->nsw, n->nch);
		return -1;
	}
	if (part) {
		memcpy(n->part, part, f->nendports);
	} else {
		n->rep->partitioner =
			nue_partition(f, n->k, n->o->partition, n->part, &n->rep->torus);
		if (!n->rep->partitioner) {
			fab_error_set(err, "out of memory partitioning %u destinations",
				      f->nendports);
			return -1;
		}
	}
	if (index_destinations(n, err))
		return -1;
	if (index_jobs(n)) {
		fab_error_set(err, "out of memory indexing the job map");
		return -1;
	}
	return 0;
}

/* The SWW_NONE candidate on a thread of its own, with its own state and tables. */
struct nue_worker {
	struct nue n;
	struct routing r;
	struct nue_report rep;
	struct nue_best best;
	struct fab_error err;
	const uint8_t *part;
	const char *engine;
	pthread_t thread;
	int rc;
	atomic_int finished; /* rc is final; only first_pass_main sets it */
};

/* The second CPU is free for the caller's work as soon as a worker thread is done. */
static void *worker_main(void *arg)
{
	static const enum sw_weights none = SWW_NONE;
	struct nue_worker *w = arg;

	w->rc = run_candidates(&w->n, &w->best, 0, &none, 1, &w->err);
	cpu_gate_open(w->n.o->spare_cpu);
	return NULL;
}

static void worker_free(struct nue_worker *w)
{
	free_best(&w->best);
	nue_free(&w->n);
	routing_free(&w->r);
	free(w);
}

/* A second routing state beside n's; NULL if memory is short.  worker_prepare fills it. */
static struct nue_worker *worker_new(const struct nue *n)
{
	struct nue_worker *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->rep = *n->rep;
	w->n = (struct nue){ .f = n->f, .o = n->o, .r = &w->r, .rep = &w->rep, .k = n->k };
	w->part = n->part;
	w->engine = n->r->engine;
	return w;
}

/* Tables, memory and indexes of w's state, for the same fabric and partition; 0 or -1. */
static int worker_prepare(struct nue_worker *w)
{
	if (routing_init(&w->r, w->n.f, w->engine)) {
		fab_error_set(&w->err, "out of memory for a second candidate's tables");
		return -1;
	}
	return nue_prepare(&w->n, w->part, &w->err);
}

/* NULL when memory or a thread is short: the caller routes every candidate itself then. */
static struct nue_worker *worker_start(const struct nue *n)
{
	struct nue_worker *w = worker_new(n);

	if (w && (worker_prepare(w) || thread_start_beside(&w->thread, worker_main, w))) {
		worker_free(w);
		return NULL;
	}
	return w;
}

/* Joins w; its routing replaces n's if better, and best is then its score.  0 or -1. */
static int worker_finish(struct nue *n, struct nue_score *best, struct nue_worker *w,
			 struct fab_error *err)
{
	pthread_join(w->thread, NULL);
	if (w->rc) {
		*err = w->err;
		return -1;
	}
	if (better(&w->best.score, best)) {
		swap_tables(n, &w->r.lft, &w->r.hops, &w->n.lid_layer);
		*n->rep = w->rep;
		*best = w->best.score;
	}
	return 0;
}

static unsigned threads_to_use(const struct nue_opts *o)
{
	long cpus;

	if (o->threads)
		return o->threads;
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	return cpus >= 2 ? 2 : 1;
}

static void *first_pass_main(void *arg)
{
	struct nue_worker *w = arg;

	w->rc = worker_prepare(w);
	if (!w->rc)
		w->rc = route_first_pass(&w->n, SWW_CA_SWITCHES, &w->err);
	cpu_gate_open(w->n.o->spare_cpu);
	atomic_store_explicit(&w->finished, 1, memory_order_release);
	return NULL;
}

/* w's first pass won: its tables go to n's routing, where the verifier watches the final pass. */
static void adopt_tables(struct nue *n, struct nue_worker *w)
{
	size_t cells = (size_t)n->r->nswitches * n->r->lft_len;

	memcpy(n->r->lft, w->r.lft, cells);
	memcpy(n->r->hops, w->r.hops, cells);
	memcpy(n->lid_layer, w->n.lid_layer, n->f->max_lid + 1);
	w->n.r = n->r;
}

/* The other order's first pass beside n's has ended (or, with wait, ends): which won. */
static enum race_state settle_race(struct order_race *race, int wait)
{
	struct nue_worker *w = race->other;
	struct nue_score theirs;

	if (race->state != RACE_OPEN)
		return race->state;
	if (!wait && !atomic_load_explicit(&w->finished, memory_order_acquire))
		return RACE_OPEN;
	if (race->other_thread)
		pthread_join(w->thread, NULL);
	theirs = score_of(&w->n);
	if (w->rc)
		race->state = RACE_FAILED;
	else
		race->state = better(&theirs, &race->mine) ? RACE_LOST : RACE_WON;
	return race->state;
}

/*
 * n's first pass is done; w's runs beside it on a thread of its own (other_thread), or ran
 * before on this one.  n's rebalancing starts at once: if n wins, as the ascending order mostly
 * does, nothing waited for w, and if w wins, n's work is dropped and w's candidate is rebalanced
 * as it would have been after waiting.  The verifier gets no promise from n before n has won.
 * Without the rebalancing pass the race is decided after it, on the first passes alone.  Inside
 * OpenSM on the Kautz graph 3-3 the descending order's pass ended 0.3 to 4 ms after the ascending
 * one (other processes share the CPUs) and the routing waited for it; racing cut the median of 12
 * OpenSM runs from 19.8 to 17.6 ms.  The tables are those of waiting.  0 or -1; the winner's tables
 * are in n's routing then.
 */
static int race_orders(struct nue *n, struct nue_worker *w, int other_thread, struct nue **winner,
		       struct fab_error *err)
{
	struct order_race race = {
		.other = w, .other_thread = other_thread, .mine = score_of(n), .state = RACE_OPEN
	};
	int rc;

	n->race = &race;
	rc = finish_candidate(n, err);
	n->race = NULL;
	settle_race(&race, 1);
	if (rc < 0)
		return -1;
	if (race.state == RACE_FAILED) {
		*err = w->err;
		return -1;
	}
	if (race.state == RACE_WON)
		return 0;
	adopt_tables(n, w);
	*winner = &w->n;
	return finish_candidate(*winner, err) ? -1 : 0;
}

/*
 * One layer.  Which turns close the layer is decided by the order of the destinations, and
 * far-first (order_far_first) leaves many destinations equally far from the root, in LID order.
 * With nue_orders=2 the first pass is routed twice, equally far destinations by ascending and by
 * descending LID, and the better (see better()) is rebalanced.  With the LIDs OpenSM gave under
 * ibsim the descending order won on the dragonfly a8p4h4 (CA hops 5.0513 against 5.0739) and on
 * the 8x8x8 torus with 1% of links removed (10 fall-backs against 1,233); the ascending one won
 * on Kautz, random-256 and the whole torus.  With two threads the second order runs beside the
 * first, on the CPU the verifier needs only in the final pass, and the result is the same as in
 * one thread (race_orders).  The caller's own work beside the routing (the plugin's hop rows)
 * waits at spare_cpu until the second order is done: run alongside, it slowed that order's pass
 * by 3 to 8 ms on the Kautz graph inside OpenSM, the routing waited for it, and two orders cost
 * 35% more time there instead of about 5%.  Hence the default; with one CPU it costs a first
 * pass.
 */
static int route_one_layer(struct nue *n, struct fab_error *err)
{
	struct nue_worker *w;
	struct nue *winner = n;
	int beside, rc;

	if (n->o->orders < 2) {
		cpu_gate_open(n->o->spare_cpu);
		return route_candidate(n, SWW_CA_SWITCHES, err);
	}
	w = worker_new(n);
	if (!w) {
		fab_error_set(err, "out of memory for the second destination order");
		return -1;
	}
	w->n.ties_descending = 1;
	beside = threads_to_use(n->o) > 1 && !thread_start_beside(&w->thread, first_pass_main, w);
	if (!beside)
		cpu_gate_open(n->o->spare_cpu);
	rc = route_first_pass(n, SWW_CA_SWITCHES, err);
	if (!rc && !beside)
		first_pass_main(w);
	if (!rc)
		rc = race_orders(n, w, beside, &winner, err);
	else if (beside)
		pthread_join(w->thread, NULL);
	if (!rc && winner != n) {
		*n->rep = w->rep;
		n->rep->second_order = 1;
	}
	worker_free(w);
	return rc;
}

/* Destinations of all layers, once every layer is routed. */
static uint64_t destinations(const struct nue *n)
{
	uint64_t sum = 0;
	unsigned layer;

	for (layer = 0; layer < n->k; layer++)
		sum += n->rep->dests_per_layer[layer];
	return sum;
}

/*
 * On tori with 2 or 4 layers, whole layers can fall back for a third of their destinations
 * while one layer routes every destination (10x10x10 torus offline: 2 layers 1,278 fall-backs
 * and maximum EFI 671,080; one layer none and 164,168).  So when the best of the k-layer
 * candidates falls back for more than 1% of the destinations (falls_back_much), one layer routes
 * every destination too, equally far ones by ascending and then, if some still fall back, by
 * descending LID (as with one VL), spread over the VLs by the partition as in
 * route_single_layer, and routed again in their VL (reroute_in_vls).  A routing is kept only if it
 * then falls back less and its maximum EFI is lower than the best so far.  Judged before that pass
 * it had lost where it wins after: with 8 layers the 12x12x12 torus with 1% of links removed falls
 * back for 139 destinations at a maximum EFI of 226,456; one layer for 96 at 304,844, and after the
 * pass for 41 at 125,800. Below 1% the layer is not tried: it costs about a single-VL routing.  0
 * or -1 on an error; b's score is the best candidate's, whose tables n holds, and holds on return.
 */
static int route_whole_single_layer(struct nue *n, struct nue_best *b, struct fab_error *err)
{
	unsigned descending;
	int rc = 0;

	b->rep = *n->rep;
	b->valid = 1;
	if (set_best_aside(n, b)) {
		fab_error_set(err, "out of memory for the single-layer candidate");
		return -1;
	}
	for (descending = 0; descending < 2 && b->score.fallbacks && !rc; descending++) {
		struct nue_score one;

		n->ties_descending = (int)descending;
		rc = route_single_layer(n, 1, err) < 0 ? -1 : 0;
		if (!rc)
			rc = reroute_in_vls(n, err);
		one = score_of(n);
		if (rc || one.fallbacks >= b->score.fallbacks || one.efi >= b->score.efi)
			continue;
		n->rep->second_order = (int)descending;
		b->score = one;
		b->rep = *n->rep;
		swap_with_spare(n, &b->spare);
	}
	n->ties_descending = 0;
	swap_with_spare(n, &b->spare);
	*n->rep = b->rep;
	return rc;
}

/*
 * With more than one layer, the switch LIDs of one layer steer the balance of the next ones
 * through their weights, for better or worse: on a 16-ary 3-tree at 8 layers the LIDs of
 * switches without terminals raised the maximum EFI by 10%.  Both choices are routed, after the
 * single layer of route_single_layer, and the best result (see better()) is kept.  With one
 * layer the switch LIDs come last and the choices agree; route_one_layer may try two
 * destination orders instead.  The candidates share nothing but the fabric and the partition, so
 * with two threads the second choice runs beside the others; the result is the same as in one
 * thread.
 */
static int route_best(struct nue *n, struct fab_error *err)
{
	static const enum sw_weights cand[] = { SWW_CA_SWITCHES, SWW_NONE };
	struct nue_best b = { .valid = 0 };
	struct nue_worker *w = NULL;
	int rc;

	if (n->k == 1)
		return route_one_layer(n, err);
	if (threads_to_use(n->o) > 1)
		w = worker_start(n);
	if (!w)
		cpu_gate_open(n->o->spare_cpu);
	rc = run_candidates(n, &b, 1, cand, w ? 1 : 2, err);
	if (w) {
		if (worker_finish(n, &b.score, w, err))
			rc = -1;
		worker_free(w);
	}
	if (!rc && falls_back_much(n, b.score.fallbacks))
		rc = route_whole_single_layer(n, &b, err);
	if (!rc && n->rep->single_layer == NUE_ONE_LAYER_SHORTEST)
		rc = reroute_in_vls(n, err);
	free_best(&b);
	return rc;
}

/* Layers the caller gave must be the VLs' own. */
static int given_layers_fit(const struct fabric *f, const struct nue_opts *o, struct fab_error *err)
{
	uint32_t i;

	for (i = 0; o->layers && i < f->nendports; i++) {
		if (o->layers[i] < o->vls)
			continue;
		fab_error_set(err, "destination LID %u is given layer %u, but there are %u",
			      f->ports[f->endports[i]].base_lid, o->layers[i], o->vls);
		return -1;
	}
	return 0;
}

int nue_route(const struct fabric *f, const struct nue_opts *o, struct routing *r,
	      struct nue_report *rep, struct fab_error *err)
{
	struct nue n = { .f = f, .o = o, .r = r, .rep = rep, .k = o->vls };
	int rc = -1;

	memset(rep, 0, sizeof(*rep));
	rep->vls = o->vls;
	if (check_fabric(f, o->vls, err))
		return -1;
	if (given_layers_fit(f, o, err) || nue_prepare(&n, o->layers, err))
		goto out;
	if (o->layers)
		rep->partitioner = "nue_layers";
	if (n.k > 1 && routing_alloc_sl_by_dlid(r)) {
		fab_error_set(err, "out of memory for the SL of %u LIDs", f->max_lid);
		goto out;
	}
	if (route_best(&n, err))
		goto out;
	rep->destinations = (uint32_t)destinations(&n);
	set_service_levels(&n);
	rc = 0;
out:
	nue_free(&n);
	return rc;
}
