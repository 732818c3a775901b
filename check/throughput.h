/*
 * throughput.h - a flow-level throughput model of a routing: max-min fair rates of simultaneous
 * flows over the paths the LFTs give, by progressive filling, with every link's capacity taken
 * from the fabric's widths and speeds (fab_port.rate).  It answers "what share of the injection
 * bandwidth would this traffic pattern get on these tables", where the metrics (metrics.h)
 * count routes per channel.  doc/throughput.md explains the model and its limits.
 *
 * Two layers: tput_maxmin() solves any problem given as capacities, shared routes and flows
 * (the unit tests feed it hand-made ones); tput_run() builds the problem from a fabric, a routing
 * and a pattern name and reports it.
 */
#ifndef SARNUE_THROUGHPUT_H
#define SARNUE_THROUGHPUT_H

#include <stdint.h>
#include <stdio.h>

#include "check/metrics.h"
#include "fabric/fabric.h"
#include "fabric/jobmap.h"
#include "fabric/routing.h"

/*
 * A max-min fair problem.  Flow i crosses channel flow_inj[i] (FAB_NONE: none; the source's
 * injection link, kept apart so flows from many sources share one route) and the channels
 * route_ch[route_off[r] .. route_off[r + 1]) of its route r = flow_route[i]; it wants at most
 * demand[i].  Rates are in the capacities' unit.
 */
struct tput_problem {
	uint32_t nch;
	const double *cap; /* [nch] */
	const uint32_t *route_off, *route_ch;
	uint32_t nflows;
	const uint32_t *flow_route, *flow_inj;
	const float *demand;
};

/*
 * Progressive filling: all unfrozen flows grow at one rate until a channel fills or a flow
 * reaches its demand; the flows of a full channel freeze there.  rate[nflows] receives each
 * flow's max-min fair rate.  Returns the number of filling rounds, or -1 without memory.
 */
int tput_maxmin(const struct tput_problem *p, float *rate);

#define TPUT_SLOW 10
#define TPUT_MAX_PATTERNS 8

struct tput_slow {
	double fraction;   /* the flow's rate / its demand */
	uint32_t src, dst; /* terminal port indices */
	uint32_t channel;  /* the bottleneck: port index the full channel leaves, FAB_NONE */
	uint32_t instance; /* shift distance, or permutation/bisection number */
};

struct tput_result {
	char pattern[16];
	uint32_t instances, terminals;
	uint64_t flows, unrouted;
	double aggregate;	/* mean over instances: sum of rates / injection bandwidth */
	double worst_aggregate; /* the lowest instance's */
	double min, p5, median; /* per-flow rate / demand, over every flow of every instance */
	unsigned rounds;	/* most filling rounds one instance took */
	unsigned nslow;
	struct tput_slow slow[TPUT_SLOW]; /* slowest first */
};

/*
 * Runs one pattern: "alltoall", "shift" (LID order), "topo-shift" (a fat tree's topology order,
 * order[0..norder)), "permutation", "bisection" or "jobs" (all-to-all inside each job of jm,
 * bound to f).  Shifts, permutations, bisections and the seed come from o as for --patterns.
 * Returns 0, -1 without memory, -2 for a pattern that cannot run here (err says why).
 */
int tput_run(const struct fabric *f, const struct routing *r, const char *pattern,
	     const struct metrics_options *o, const uint32_t *order, uint32_t norder,
	     const struct job_map *jm, struct tput_result *out, struct fab_error *err);

/* 1 when name is a pattern tput_run() knows. */
int tput_pattern_known(const char *name);

struct traffic;

/*
 * Completion times of a measured traffic matrix (fabric/traffic.h, bound to f): every pair's
 * flow starts at once with its demand weight as size, rates are max-min fair and shared anew
 * each time a flow finishes (a fluid model).  A flow's slowdown is its finish time over the
 * time it would take alone at its injection link's rate.  "Heavy" flows weigh at least
 * TPUT_HEAVY times the median.
 */
#define TPUT_HEAVY 10
#define TPUT_COMPLETION_MAX_FLOWS 20000

struct tput_completion {
	uint32_t flows, unrouted, heavy;
	double heavy_worst, heavy_mean; /* slowdowns of the heavy flows */
	double all_worst, all_mean;	/* of every flow */
	double makespan;		/* last finish over the largest flow's time alone */
	unsigned events;
};

/* 0, -1 without memory, -2 when the matrix has more than TPUT_COMPLETION_MAX_FLOWS flows. */
int tput_completion(const struct fabric *f, const struct routing *r, const struct traffic *t,
		    struct tput_completion *out);

void tput_print_text(const struct fabric *f, const struct tput_result *res, unsigned n, FILE *out);
/* A JSON array of the results (no newline), to be the value of a member. */
void tput_print_json(const struct fabric *f, const struct tput_result *res, unsigned n, FILE *out);

#endif
