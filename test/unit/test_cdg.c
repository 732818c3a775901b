/*
 * test_cdg.c - unit tests of the channel dependency graph that Nue and layer fitting share
 * (engines/cdg.c): the dynamic topological order against a brute-force cycle check, blocks that
 * last only when their cycle holds committed turns alone, closed turns refused without a search,
 * and relabelling.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engines/cdg.h"
#include "check.h"
#include "testfab.h"

/* Random turns into g; accepted ones keep it acyclic, refused ones close a cycle (Kahn agrees). */
static void add_random_turns(struct cdg *g, unsigned seed, unsigned trials, unsigned check_every)
{
	unsigned trial;

	srand(seed);
	for (trial = 0; trial < trials; trial++) {
		uint32_t in = (uint32_t)rand() % g->nch, h = g->head[in];
		uint32_t deg = g->sw_off[h + 1] - g->sw_off[h];
		uint32_t out = g->sw_off[h] + (uint32_t)rand() % deg;
		uint64_t t = cdg_turn_index(g, in, out);
		int rc;

		if (out == g->rev[in])
			continue;
		rc = cdg_try_add(g, in, out, CDG_USED);
		if (trial % check_every)
			continue;
		CHECK(cdg_is_acyclic(g) == 1);
		if (rc < 0) {
			/* Refused: forcing it in must create a cycle. */
			g->turn[t] = CDG_USED;
			CHECK(cdg_is_acyclic(g) == 0);
			g->turn[t] = CDG_BLOCKED;
		}
	}
}

/* The list holds every channel once, labels rise along it, and every used turn agrees. */
static void check_order(const struct cdg *g)
{
	uint32_t i, o, c, count = 0;

	CHECK(cdg_is_acyclic(g) == 1);
	for (c = g->next[g->nch]; c != g->nch && count <= g->nch; c = g->next[c], count++) {
		CHECK(g->prev[g->next[c]] == c);
		CHECK(g->next[c] == g->nch || g->ch[c].ord < g->ch[g->next[c]].ord);
	}
	CHECK(count == g->nch);
	for (i = 0; i < g->nch; i++)
		for (o = g->sw_off[g->head[i]]; o < g->sw_off[g->head[i] + 1]; o++)
			if (g->turn[cdg_turn_index(g, i, o)] == CDG_USED)
				CHECK(g->ch[i].ord < g->ch[o].ord);
}

/* A ring of 12 switches with a chord from each to the fifth after it, and its graph. */
static void build_chorded_ring(struct fabric *f, struct cdg *g)
{
	static unsigned links[64][2];
	unsigned n = testfab_ring(links, 12), i;

	for (i = 0; i < 12; i++, n++) {
		links[n][0] = i;
		links[n][1] = (i + 5) % 12;
	}
	CHECK(testfab_build(f, 12, 0, (const unsigned(*)[2])links, n, 0) == 0);
	CHECK(cdg_build(g, f) == 0);
	CHECK(g->nch == 2 * n);
}

/* The two-way search against Kahn on a small graph, every turn checked. */
static void test_cdg_order(void)
{
	struct fabric f;
	struct cdg g;

	build_chorded_ring(&f, &g);
	add_random_turns(&g, 7, 3000, 1);
	check_order(&g);
	CHECK(g.searches > 0);
	cdg_free(&g);
	fabric_free(&f);
}

/*
 * Search stamps that wrap around: the selected layer's are cleared then, and another layer's when
 * it is selected next (its old stamps could equal new ones).  Two layers take turns, the
 * stamps wrapping in the middle of the first layer's turns; Kahn still agrees with every answer.
 */
static void test_cdg_stamp_wrap(void)
{
	struct cdg_layer other;
	struct fabric f;
	struct cdg g;
	uint32_t epoch;

	build_chorded_ring(&f, &g);
	CHECK(cdg_layer_alloc(&g, &other) == 0);
	cdg_select(&g, &other);
	add_random_turns(&g, 3, 400, 1);
	cdg_select(&g, NULL);
	epoch = g.epoch;
	g.stamp = UINT32_MAX - 40;
	add_random_turns(&g, 4, 400, 1);
	check_order(&g);
	CHECK(g.epoch == epoch + 1 && g.stamp < 1000);
	CHECK(other.epoch == epoch);
	cdg_select(&g, &other);
	CHECK(other.epoch == g.epoch);
	add_random_turns(&g, 5, 400, 1);
	check_order(&g);
	cdg_select(&g, NULL);
	cdg_layer_free(&other);
	cdg_free(&g);
	fabric_free(&f);
}

/* Whether the committed turns alone, with turn t added, close a cycle (Kahn's answer). */
static int committed_cycle_with(struct cdg *g, uint64_t t)
{
	uint8_t *saved = malloc(g->nturns);
	uint64_t i;
	int cyclic;

	CHECK(saved != NULL);
	if (!saved)
		return 0;
	memcpy(saved, g->turn, g->nturns);
	for (i = 0; i < g->nturns; i++)
		if (g->turn[i] != CDG_USED)
			g->turn[i] = CDG_UNUSED;
	g->turn[t] = CDG_USED;
	cyclic = cdg_is_acyclic(g) == 0;
	memcpy(g->turn, saved, g->nturns);
	free(saved);
	return cyclic;
}

/*
 * A block lasts only when the cycle found holds committed turns alone.  Turns go in at random, a
 * third of them wet; every lasting block is checked against Kahn on the committed turns.  Undone,
 * a lasting block becomes closed, and a closed turn is refused again without a search.
 */
static void test_cdg_lasting_blocks(void)
{
	struct fabric f;
	struct cdg g;
	unsigned trial, lasting = 0, passing = 0;
	uint32_t closed_in = 0, closed_out = 0;
	uint64_t searches;

	build_chorded_ring(&f, &g);
	srand(5);
	for (trial = 0; trial < 3000; trial++) {
		uint32_t in = (uint32_t)rand() % g.nch, h = g.head[in];
		uint32_t out = g.sw_off[h] + (uint32_t)rand() % (g.sw_off[h + 1] - g.sw_off[h]);
		uint64_t t = cdg_turn_index(&g, in, out);
		uint8_t state = rand() % 3 ? CDG_USED : CDG_WET;

		if (out == g.rev[in] || g.turn[t] != CDG_UNUSED)
			continue;
		searches = g.searches;
		if (cdg_try_add(&g, in, out, state) > 0)
			continue;
		CHECK(g.searches == searches + 1);
		if (g.turn[t] == CDG_BLOCKED_FOR_GOOD) {
			CHECK(committed_cycle_with(&g, t));
			closed_in = in;
			closed_out = out;
			lasting++;
		} else {
			CHECK(g.turn[t] == CDG_BLOCKED);
			passing++;
		}
	}
	printf("blocks: %u lasting, %u with wet turns\n", lasting, passing);
	CHECK(lasting > 0 && passing > 0);
	CHECK(cdg_unblocked(CDG_BLOCKED) == CDG_UNUSED);
	CHECK(cdg_unblocked(CDG_BLOCKED_FOR_GOOD) == CDG_CLOSED);
	g.turn[cdg_turn_index(&g, closed_in, closed_out)] = CDG_CLOSED;
	searches = g.searches;
	CHECK(cdg_try_add(&g, closed_in, closed_out, CDG_USED) == -1);
	CHECK(g.searches == searches && g.closed_refusals == 1);
	CHECK(g.turn[cdg_turn_index(&g, closed_in, closed_out)] == CDG_BLOCKED_FOR_GOOD);
	cdg_free(&g);
	fabric_free(&f);
}

/*
 * Moves run into full label gaps and relabel the whole order.  On a ring of 256 switches with
 * chords, turns taken at random are decided as Kahn's algorithm decides them (add_random_turns),
 * and the order stays topological through every move and relabelling.  A small graph's labels
 * are far apart, so the test squeezes them first.
 */
static void test_cdg_relabel(void)
{
	static const unsigned chords[] = { 5, 37, 101 };
	static unsigned links[1024][2];
	struct fabric f;
	struct cdg g;
	unsigned n = testfab_ring(links, 256), i, j;
	uint64_t key[4096];

	for (j = 0; j < 3; j++)
		for (i = 0; i < 256; i++, n++) {
			links[n][0] = i;
			links[n][1] = (i + chords[j]) % 256;
		}
	CHECK(testfab_build(&f, 256, 0, (const unsigned(*)[2])links, n, 0) == 0);
	CHECK(cdg_build(&g, &f) == 0);
	CHECK(g.nch <= 4096);
	for (i = 0; i < g.nch; i++)
		key[i] = (i * 7919u) % g.nch;
	CHECK(cdg_seed_order(&g, key) == 0);
	check_order(&g);
	/* Labels 1 apart: the first move needs a relabelling, which must keep the order. */
	for (i = 1, j = g.next[g.nch]; j != g.nch; j = g.next[j], i++)
		g.ch[j].ord = i;
	add_random_turns(&g, 11, 6000, 500);
	check_order(&g);
	CHECK(g.moves > 100);
	CHECK(g.relabels >= 1);
	printf("moves: %llu, relabellings: %llu\n", (unsigned long long)g.moves,
	       (unsigned long long)g.relabels);
	cdg_free(&g);
	fabric_free(&f);
}
int main(void)
{
	test_cdg_stamp_wrap();
	test_cdg_order();
	test_cdg_relabel();
	test_cdg_lasting_blocks();
	return CHECK_RESULT();
}
