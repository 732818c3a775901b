/*
 * demand.h - the measured traffic an engine run balances for (the traffic= option): the matrix
 * read from its file, or with traffic=perfmgr estimated from the port counters the plugin
 * hands over in the engine_ctx (fabric/traffic_estimate.c), bound to the fabric; and, when no
 * job map names the jobs, a job map of its own hosts (one job) so that the engine's job phase
 * routes them first.  Used by dispatch.c for sar-dfsssp and sar-nue; the matrix itself is
 * fabric/traffic.h.
 */
#ifndef SARNUE_ENGINES_DEMAND_H
#define SARNUE_ENGINES_DEMAND_H

#include "engines/engines.h"
#include "fabric/traffic.h"

struct engine_demand {
	struct traffic traffic;
	struct job_map hosts; /* the traffic's hosts as one job, when there is no job map */
	int loaded;	      /* traffic holds a bound matrix */
	int own_jobs;	      /* hosts is the job map to route with */
};

void engine_demand_init(struct engine_demand *d);
void engine_demand_free(struct engine_demand *d);

/*
 * Reads and binds o->traffic (nothing without the option).  jobs is the job map in force or
 * NULL.  A malformed file is an error offline (ctx NULL) and a warning otherwise (the routing
 * goes on without measured traffic).  Hostnames the fabric lacks are a warning.
 * traffic=perfmgr estimates the matrix from ctx's counters inside the jobs (an error offline;
 * no counters: uniform weights) and describes the estimate in res->traffic.
 */
int engine_demand_load(const struct fabric *f, const struct sarnue_options *o,
		       const struct engine_ctx *ctx, const struct job_map *jobs,
		       struct engine_demand *d, struct engine_result *res, struct fab_error *err);

#endif
