/*
 * test_maxconc.c - the bounds of check/maxconc.c on graphs whose optimum is known by hand: a
 * demand that must split over two paths, over paths of different capacities, a known floor that
 * decides at once, and a sink some source cannot reach.  The bounds must hold the optimum at
 * every stop and close within the tolerance.
 */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "check/maxconc.h"

/* s(0) -> a(1) -> t(3) and s -> b(2) -> t: capacities of the path through a, then b. */
static void diamond(double cap_a, double cap_b, double *cap)
{
	cap[0] = cap[1] = cap_a;
	cap[2] = cap[3] = cap_b;
}

static const uint32_t from[4] = { 0, 1, 0, 2 }, to[4] = { 1, 3, 2, 3 };

static void solve(double cap_a, double cap_b, double amount, double floor, double optimum)
{
	double cap[4], supply[4] = { amount, 0, 0, 0 };
	uint32_t sink = 3;
	struct mc_graph g = { 4, 4, from, to, cap };
	struct mc_demand d = { 1, &sink, supply };
	struct mc_result r;

	diamond(cap_a, cap_b, cap);
	CHECK(maxconc_solve(&g, &d, floor, 0.01, 30, &r) == 0);
	CHECK(r.lower <= optimum + 1e-9 && optimum <= r.upper + 1e-9);
	CHECK(r.converged && r.upper <= r.lower * 1.01 + 1e-12);
	CHECK(r.unreachable == 0);
}

/* Min-hop routing puts all on one path (utilisation 2); the optimum splits it: 1. */
static void test_split(void)
{
	solve(1, 1, 2, 0, 1);
}

/* Capacities 2 and 1: 3 units go 2 and 1, utilisation 1 on both paths. */
static void test_capacities(void)
{
	solve(2, 1, 3, 0, 1);
}

/* A floor above the flow's optimum (the end links) is the optimum. */
static void test_floor(void)
{
	solve(1, 1, 2, 5, 5);
}

/* Node 4 has no link: its supply is left out and counted. */
static void test_unreachable(void)
{
	double cap[4] = { 1, 1, 1, 1 }, supply[5] = { 1, 0, 0, 0, 1 };
	uint32_t sink = 3;
	struct mc_graph g = { 5, 4, from, to, cap };
	struct mc_demand d = { 1, &sink, supply };
	struct mc_result r;

	CHECK(maxconc_solve(&g, &d, 0, 0.01, 30, &r) == 0);
	CHECK(r.unreachable == 1);
	CHECK(r.lower <= 0.5 + 1e-9 && 0.5 <= r.upper + 1e-9 && r.converged);
}

/*
 * A directed ring 0 -> 1 -> 2 -> 3 -> 4 -> 0 with a chord 0 -> 2; commodity to 2 from 0, 1, 3
 * and 4, commodity to 4 from 0, 1, 2 and 3, one unit each.  Link 3 -> 4 is the only way into 4
 * (four units) and node 3's only way out (one more to 2): the optimum is 5, reachable by sending
 * 0's, 3's and 4's units for 2 over the chord.
 */
static void test_ring_with_chord(void)
{
	static const uint32_t rf[6] = { 0, 1, 2, 3, 4, 0 }, rt[6] = { 1, 2, 3, 4, 0, 2 };
	double cap[6] = { 1, 1, 1, 1, 1, 1 }, supply[10] = { 1, 1, 0, 1, 1, 1, 1, 1, 1, 0 };
	uint32_t sink[2] = { 2, 4 };
	struct mc_graph g = { 5, 6, rf, rt, cap };
	struct mc_demand d = { 2, sink, supply };
	struct mc_result r;

	CHECK(maxconc_solve(&g, &d, 0, 0.01, 30, &r) == 0);
	CHECK(r.lower <= 5 + 1e-9 && 5 <= r.upper + 1e-9 && r.converged);
	CHECK(r.iterations >= 1 && r.unreachable == 0);
}

int main(void)
{
	test_split();
	test_capacities();
	test_floor();
	test_unreachable();
	test_ring_with_chord();
	return CHECK_RESULT();
}
