/*
 * optimal.h - the distance of a routing from the best any routing could do: for a set of
 * demands (host pairs and amounts), the smallest possible maximum link utilisation over every
 * way of splitting the traffic over the fabric's links (a multicommodity-flow linear program
 * solved with GLPK, or bounded from both sides where it would be too large), next to the maximum
 * the routing's own LFT paths give.  Their ratio is the routing's gap to ideal adaptive routing
 * on that traffic.  Used by `sarnue check --optimal`.
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

enum optimum_method {
	OPTIMUM_EXACT,	   /* the linear program, solved */
	OPTIMUM_BOUNDS,	   /* check/maxconc.c's lower and upper bounds */
	OPTIMUM_END_LINKS, /* only the end links' lower bound */
};

struct optimal_params {
	uint64_t lp_limit;  /* largest linear program to solve exactly (variables) */
	double tolerance;   /* the approximation stops at upper <= lower * (1 + tolerance) */
	double max_seconds; /* or after this long; 0: no approximation, the end links' bound */
};

/*
 * Loads are demand over capacity; capacities are link rates over the fabric's fastest link's
 * (1 per channel where all links run at one speed).
 */
struct optimal_result {
	double routing_max; /* the routing's busiest channel: its demand over its capacity */
	double optimum;	    /* the smallest possible such maximum, or a lower bound of it */
	double upper;	    /* an upper bound of it (= optimum when exact; 0: none known) */
	double end_links;   /* the end links' lower bound */
	enum optimum_method method;
	int exact;	     /* optimum solved exactly */
	int converged;	     /* OPTIMUM_BOUNDS: within the tolerance */
	uint32_t iterations; /* OPTIMUM_BOUNDS */
	uint64_t variables;  /* of the linear program, 0 when not solved */
	double seconds;	     /* solving it */
	uint32_t unrouted;   /* demands the routing does not deliver (not counted) */
	char how[224];	     /* what optimum is */
};

/* Every ordered pair of end ports with a LID, amount 1: all-to-all. */
int demands_all_to_all(const struct fabric *f, struct demands *d);
void demands_free(struct demands *d);

/*
 * The routing's maximum and the optimum for d.  The linear program has one variable per
 * destination switch and switch channel; with more than prm->lp_limit of them, or without GLPK,
 * the optimum is bounded from both sides instead (check/maxconc.h), or with max_seconds 0 only
 * from below, by the end links (each end port's own demand over its link).  0, or -1 with err
 * set (out of memory, solver failure).
 */
int optimal_compare(const struct fabric *f, const struct routing *r, const struct demands *d,
		    const struct optimal_params *prm, struct optimal_result *res,
		    struct fab_error *err);

#endif
