/*
 * maxconc.h - the smallest possible maximum link utilisation for a set of demands, bounded from
 * both sides when the exact linear program is too large: the minimum-congestion multicommodity
 * flow on a directed graph with capacities, one commodity per sink (every source's supply goes
 * to the commodity's one sink, split at will).  Used by `sarnue check --optimal` (cli/optimal.c)
 * on fabrics whose linear program would not fit; see doc/throughput.md.
 *
 * Both bounds hold whenever the solver stops: the upper one is the busiest link of a flow that
 * routes every demand (a convex combination of shortest-path routings), the lower one is the
 * dual bound of the link lengths of the last step (no routing can place the demands at a lower
 * total length than their shortest paths).  The solver narrows them until they are within a
 * tolerance of each other or its time is up.
 */
#ifndef SARNUE_CHECK_MAXCONC_H
#define SARNUE_CHECK_MAXCONC_H

#include <stdint.h>

/* A directed graph: edge e runs from[e] -> to[e] with capacity cap[e] > 0. */
struct mc_graph {
	uint32_t nnodes, nedges;
	const uint32_t *from, *to;
	const double *cap;
};

/* Commodity k sends supply[k * nnodes + v] from every node v to sink[k] (its own entry ignored). */
struct mc_demand {
	uint32_t ncom;
	const uint32_t *sink;
	const double *supply;
};

struct mc_result {
	double lower, upper; /* the optimum lies between them (both at least floor) */
	uint32_t iterations; /* routings of all commodities */
	double seconds;
	int converged;	      /* upper <= lower * (1 + tolerance) */
	uint32_t unreachable; /* commodities with a source that cannot reach the sink: not routed */
};

/*
 * Narrows the optimum for d on g.  floor: a bound known from elsewhere (the end links): the
 * result's bounds are at least floor, and the solver stops once the upper bound reaches it.
 * Stops at upper <= lower * (1 + tolerance) or after max_seconds.  0, or -1 when out of memory.
 */
int maxconc_solve(const struct mc_graph *g, const struct mc_demand *d, double floor,
		  double tolerance, double max_seconds, struct mc_result *res);

/*
 * The shortest-path trees both solvers route commodities on (and cli/optimal.c's column
 * generation): mc_router_tree() routes commodity k's whole supply to its sink on the shortest
 * paths under len (one Dijkstra), returns the demands' total length (supply times distance) and
 * sets *cut when a source cannot reach the sink (its supply is left out); mc_router_edges() then
 * gives the tree's edges with their flow (at most nnodes - 1), valid until the next tree.
 */
struct mc_router;
struct mc_router *mc_router_new(const struct mc_graph *g, const struct mc_demand *d);
void mc_router_free(struct mc_router *r);
double mc_router_tree(struct mc_router *r, uint32_t k, const double *len, int *cut);
uint32_t mc_router_edges(const struct mc_router *r, const uint32_t **edge, const double **flow);

#endif
