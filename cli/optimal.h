/*
 * optimal.h - the distance of a routing from the best any routing could do: for a set of
 * demands (host pairs and amounts), the smallest possible maximum link utilisation over every
 * way of splitting the traffic over the fabric's links (a multicommodity-flow linear program,
 * solved with GLPK), next to the maximum the routing's own LFT paths give.  Their ratio is the
 * routing's gap to ideal adaptive routing on that traffic.  Used by `sarnue check --optimal`.
 */
#ifndef SARNUE_CLI_OPTIMAL_H
#define SARNUE_CLI_OPTIMAL_H

#include <stdint.h>

#include "fabric/fabric.h"
#include "fabric/routing.h"

struct demands {
	uint32_t n;
	uint32_t *src, *dst; /* end ports (port indices) */
	double *amount;
};

struct optimal_result {
	double routing_max; /* the routing's busiest channel: its demand over its capacity */
	double optimum;	    /* the smallest possible such maximum */
	int exact;	    /* optimum solved exactly; 0: a lower bound (see how) */
	uint64_t variables; /* of the linear program, 0 when not solved */
	double seconds;	    /* solving it */
	uint32_t unrouted;  /* demands the routing does not deliver (not counted) */
	char how[160];	    /* what optimum is */
};

/* Every ordered pair of end ports with a LID, amount 1: all-to-all. */
int demands_all_to_all(const struct fabric *f, struct demands *d);
void demands_free(struct demands *d);

/*
 * The routing's maximum and the optimum for d.  The linear program has one variable per
 * destination switch and switch channel; with more than max_variables of them, or without GLPK,
 * optimum is the lower bound of the end links (each end port's own demand over its link) instead.
 * Channel capacities are 1.  0, or -1 with err set (out of memory, solver failure).
 */
int optimal_compare(const struct fabric *f, const struct routing *r, const struct demands *d,
		    uint64_t max_variables, struct optimal_result *res, struct fab_error *err);

#endif
