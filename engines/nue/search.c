/*
 * search.c - Nue's search for the routes towards one destination inside the selected layer's
 * complete channel dependency graph (thesis algorithms 6.3, 6.5 and 6.6): the modified Dijkstra
 * that reaches a switch only over turns keeping the layer acyclic, the local backtracking that
 * connects islands, the moves of reached switches onto other channels, and the escape paths of
 * the layer's spanning tree (lemma 6.4) that every destination can fall back to.  Everything
 * here works on the turn states of cdg.h through struct nue (nue_private.h); destination.c
 * decides what to try and commits the result.
 */
#include <stdlib.h>
#include <string.h>

#include "engines/nue/nue_private.h"
#include "lib/arena.h"
#include "lib/assert.h"

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

	for (i = 0; i < l->n; i++) {
		sn_assert(l->turn[i] < n->g.nturns);
		if (n->g.turn[l->turn[i]] == from)
			n->g.turn[l->turn[i]] = CDG_UNUSED;
	}
	l->n = 0;
}

/* Undoes the blocks of n->blocked from index keep on; see cdg_unblocked. */
static void undo_blocks(struct nue *n, uint32_t keep)
{
	uint32_t i;
	uint8_t *st;

	sn_assert(keep <= n->blocked.n);
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
		sn_assert(cnt < n->nsw);
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

	/* Only a reached switch other than the destination moves, and only onto its own channel. */
	sn_assert(s < n->nsw && n->done[s] && n->out[s] != AT_DEST);
	sn_assert(c < n->nch && n->g.tail[c] == s);
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

	sn_assert(n->done[x] && n->g.head[in] == x);
	/* tried[] has a bit for each channel of x. */
	sn_assert(n->g.sw_off[x + 1] - first <= 256);
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

	sn_assert(x < n->nsw && n->done[x]);
	for (i = n->g.sw_off[x]; i < n->g.sw_off[x + 1]; i++) {
		uint32_t y = n->g.head[i], in = n->g.rev[i];
		uint64_t nd = n->dist[x] + w[in];

		sn_assert(n->g.tail[in] == y && n->g.head[in] == x);
		/* A turn's price only adds: most neighbours are out of reach without it. */
		if (nd >= n->dist[y])
			continue;
		if (priced) {
			nd += turn_cost(n, in, n->out[x]);
			if (nd >= n->dist[y])
				continue;
		}
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
				nue_heap_set(n, y, nd);
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
		nue_heap_set(n, y, nd);
	}
}

/* Settles what the heap holds; the switches settled in this attempt so far (see nue_attempt). */
static uint32_t run_dijkstra(struct nue *n, const uint64_t *w, uint32_t *reached)
{
	uint32_t x;

	while ((x = nue_heap_pop(n)) != MINHEAP_ABSENT) {
		/* Popped with a route: the destination itself or over a channel towards it. */
		sn_assert(x < n->nsw && n->dist[x] != INF_DIST && n->out[x] != FAB_NONE);
		/* A shortcut (relax_from) pushes a settled switch again. */
		*reached += !n->done[x];
		n->done[x] = 1;
		relax_from(n, x, w);
	}
	return *reached;
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

/* Whether reached switch x routes over a channel straight into s. */
static int routes_into(const struct nue *n, uint32_t x, uint32_t s)
{
	return n->out[x] != AT_DEST && n->g.head[n->out[x]] == s;
}

/*
 * The channels reached switch a may move onto when backtracking, whichever island it serves:
 * towards a reached switch a2 that does not route into a (reroute would refuse that, see
 * path_avoids), over a turn into a2's channel that is not blocked; with the cost of the route
 * from a over it.  Listed once per backtracking step, when n->seen[a] does not hold its stamp
 * yet: most reached switches border several island switches, and nothing changes the routes
 * or turns before the step's candidates are tried.  Dropping the channels towards a's children
 * removed 86% of the candidates tried on the random graph of 2,000 switches with 8 VLs.
 */
static void list_moves(struct nue *n, uint32_t a, const uint64_t *w, uint32_t stamp,
		       uint32_t *listed)
{
	uint32_t j, cnt = 0;

	n->seen[a] = stamp;
	n->move_first[a] = *listed;
	for (j = n->g.sw_off[a]; j < n->g.sw_off[a + 1]; j++) {
		uint32_t a2 = n->g.head[j];

		if (j == n->out[a] || !n->done[a2] || routes_into(n, a2, a) ||
		    turn_blocked(n, j, n->out[a2]))
			continue;
		sn_assert(*listed + cnt < n->nch);
		n->move_ch[*listed + cnt] = j;
		n->move_cost[*listed + cnt] = n->dist[a2] + w[j];
		cnt++;
	}
	n->move_count[a] = (uint8_t)cnt;
	*listed += cnt;
}

/* Ways to reach island u: a reached neighbour a takes another channel c (see list_moves). */
static int collect_candidates(struct nue *n, uint32_t u, const uint64_t *w, uint32_t stamp,
			      uint32_t *listed, uint32_t *count)
{
	uint32_t i, k;

	sn_assert(!n->done[u]);
	for (i = n->g.sw_off[u]; i < n->g.sw_off[u + 1]; i++) {
		uint32_t a = n->g.head[i], end;

		if (!n->done[a] || n->out[a] == AT_DEST)
			continue;
		if (n->seen[a] != stamp)
			list_moves(n, a, w, stamp, listed);
		end = n->move_first[a] + n->move_count[a];
		for (k = n->move_first[a]; k < end; k++) {
			uint32_t j = n->move_ch[k];

			/* j leads to a reached switch, never back to the island switch u. */
			sn_assert(n->g.head[j] != u);
			if (turn_blocked(n, i, j))
				continue;
			if (add_candidate(n, count, n->move_cost[k] + w[i], i, j))
				return -1;
		}
	}
	return 0;
}

/*
 * Moves the cheapest of candidates i..count-1 to position i.  Backtracking mostly connects an
 * island with one of its first candidates, so picking those one at a time costs less than
 * sorting them all, which took 3% of sar-nue's route time with 8 VLs on the random graph of
 * 4,000 switches; after BACKTRACK_PICKS the rest is sorted.  The order is total (see
 * cmp_candidate): the candidates are tried in the same sequence.
 */
#define BACKTRACK_PICKS 4

static void pick_cheapest(struct nue *n, uint32_t i, uint32_t count)
{
	uint64_t tmp[3];
	uint32_t j, best = i;

	if (i == BACKTRACK_PICKS) {
		qsort(n->cand + 3 * (size_t)i, count - i, 3 * sizeof(uint64_t), cmp_candidate);
		return;
	}
	if (i > BACKTRACK_PICKS)
		return;
	for (j = i + 1; j < count; j++)
		if (cmp_candidate(n->cand + 3 * (size_t)j, n->cand + 3 * (size_t)best) < 0)
			best = j;
	memcpy(tmp, n->cand + 3 * (size_t)i, sizeof(tmp));
	memcpy(n->cand + 3 * (size_t)i, n->cand + 3 * (size_t)best, sizeof(tmp));
	memcpy(n->cand + 3 * (size_t)best, tmp, sizeof(tmp));
}

/* Thesis algorithm 6.5: connect one island switch, cheapest candidate first. */
static int backtrack(struct nue *n, const uint64_t *w)
{
	uint32_t u, count = 0, i, stamp = next_stamp(n), listed = 0;

	for (u = 0; u < n->nsw; u++)
		if (!n->done[u] && collect_candidates(n, u, w, stamp, &listed, &count))
			return 0;
	for (i = 0; i < count; i++) {
		uint32_t in, c, island, a, a2;

		pick_cheapest(n, i, count);
		in = (uint32_t)n->cand[3 * i + 1];
		c = (uint32_t)n->cand[3 * i + 2];
		island = n->g.tail[in];
		a = n->g.tail[c];
		a2 = n->g.head[c];
		sn_assert(n->g.head[in] == a && n->done[a] && n->done[a2]);
		if (n->done[island] || !reroute(n, a, c, in))
			continue;
		n->dist[a] = n->dist[a2] + w[c];
		n->out[island] = in;
		n->dist[island] = n->dist[a] + w[in];
		nue_heap_set(n, island, n->dist[island]);
		n->rep->backtracks++;
		return 1;
	}
	return 0;
}

/* ----------------------------------------------------------------------- escape paths */

/* Spanning tree from the root by Dijkstra over the current link weights (both directions). */
void nue_escape_tree(struct nue *n)
{
	uint32_t s, i, cnt = 0;

	for (s = 0; s < n->nsw; s++) {
		n->dist[s] = INF_DIST;
		n->esc_up[s] = FAB_NONE;
		n->done[s] = 0;
	}
	minheap_clear(&n->heap);
	n->dist[n->root] = 0;
	nue_heap_set(n, n->root, 0);
	while ((s = nue_heap_pop(n)) != MINHEAP_ABSENT) {
		/* Only unsettled switches enter the heap: each is settled once. */
		sn_assert(!n->done[s] && cnt < n->nsw);
		n->done[s] = 1;
		n->esc_order[cnt++] = s;
		for (i = n->g.sw_off[s]; i < n->g.sw_off[s + 1]; i++) {
			uint32_t v = n->g.head[i];
			uint64_t nd = n->dist[s] + n->w_all[i] + n->w_all[n->g.rev[i]];

			if (n->done[v] || nd >= n->dist[v])
				continue;
			n->dist[v] = nd;
			n->esc_up[v] = n->g.rev[i];
			nue_heap_set(n, v, nd);
		}
	}
	/* The switch graph is connected (nue_route checked): the tree spans every switch. */
	sn_assert(cnt == n->nsw);
}

/* The escape tree's children in CSR form. */
void nue_tree_children(struct nue *n)
{
	uint32_t s;

	memset(n->esc_child_off, 0, sizeof(uint32_t) * (n->nsw + 1));
	for (s = 0; s < n->nsw; s++)
		if (n->esc_up[s] != FAB_NONE)
			n->esc_child_off[n->g.head[n->esc_up[s]] + 1]++;
	for (s = 0; s < n->nsw; s++)
		n->esc_child_off[s + 1] += n->esc_child_off[s];
	/* A tree (none for an empty layer) has fewer links than switches, as esc_child[] holds. */
	sn_assert(n->esc_child_off[n->nsw] < n->nsw);
	memcpy(n->scratch, n->esc_child_off, sizeof(uint32_t) * n->nsw);
	for (s = 0; s < n->nsw; s++)
		if (n->esc_up[s] != FAB_NONE)
			n->esc_child[n->scratch[n->g.head[n->esc_up[s]]]++] = s;
}

/* Tree children, and how many destination switches each subtree holds. */
void nue_escape_children(struct nue *n)
{
	uint32_t s, dest_switches = 0;

	nue_tree_children(n);
	memset(n->esc_sub, 0, sizeof(uint32_t) * n->nsw);
	for (s = n->nsw; s-- > 0;) {
		uint32_t v = n->esc_order[s], p;

		n->esc_sub[v] += n->dest_count[v] ? 1 : 0;
		dest_switches += n->dest_count[v] ? 1 : 0;
		if (n->esc_up[v] != FAB_NONE) {
			p = n->g.head[n->esc_up[v]];
			n->esc_sub[p] += n->esc_sub[v];
		}
	}
	/* Children come after their parent in esc_order: the root's subtree holds them all. */
	sn_assert(n->esc_sub[n->root] == dest_switches);
}

/*
 * Marks the escape paths used: at every tree switch b, the turns from each tree channel into b
 * towards each other tree neighbour whose side of the tree holds a destination of the layer.
 * At the root every turn between tree channels is marked, as the reference does: still the
 * dependencies of one tree's routes, hence acyclic, and it leaves the turns through the layer's
 * most central switch reserved for the routes of every subtree.
 */
int nue_mark_escape_paths(struct nue *n)
{
	uint32_t b, i, j, all = n->esc_sub[n->root];

	for (b = 0; b < n->nsw; b++) {
		uint32_t nin = 0, *in = n->scratch;

		if (n->esc_up[b] != FAB_NONE)
			in[nin++] = n->g.rev[n->esc_up[b]];
		for (i = n->esc_child_off[b]; i < n->esc_child_off[b + 1]; i++)
			in[nin++] = n->esc_up[n->esc_child[i]];
		/* in[] is n->scratch: room for the tree channels into b. */
		sn_assert(nin <= n->nsw + 2);
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
void nue_use_escape_paths(struct nue *n, uint32_t d)
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
	/* Lemma 6.4: the tree reaches every switch, so every switch has a route to d. */
	sn_assert(qt == n->nsw);
}

/* Dijkstra with backtracking towards d; 1 when every switch is reached. */
int nue_attempt(struct nue *n, uint32_t d, const uint64_t *w)
{
	uint32_t s, reached = 0;

	sn_assert(d < n->nsw);
	for (s = 0; s < n->nsw; s++) {
		n->dist[s] = INF_DIST;
		n->out[s] = FAB_NONE;
		n->done[s] = 0;
	}
	minheap_clear(&n->heap);
	n->wet.n = n->blocked.n = 0;
	n->dist[d] = 0;
	n->out[d] = AT_DEST;
	nue_heap_set(n, d, 0);
	while (run_dijkstra(n, w, &reached) < n->nsw)
		if (!backtrack(n, w))
			return 0;
	return 1;
}

/* Undoes an attempt's turns; blocks it found may have depended on them. */
void nue_undo_attempt(struct nue *n)
{
	undo_list(n, &n->wet, CDG_WET);
	undo_blocks(n, 0);
}
