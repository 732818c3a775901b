/*
 * demand.c - loading the traffic matrix of one engine run (demand.h).
 */
#include <stdlib.h>
#include <string.h>

#include "engines/demand.h"
#include "fabric/nodenames.h"

void engine_demand_init(struct engine_demand *d)
{
	memset(d, 0, sizeof(*d));
	traffic_init(&d->traffic);
	job_map_init(&d->hosts);
}

void engine_demand_free(struct engine_demand *d)
{
	traffic_free(&d->traffic);
	job_map_free(&d->hosts);
	engine_demand_init(d);
}

/* The node-name map the options name, when one reads: hosts are named as job maps name them. */
static const struct node_name_map *load_names(const struct sarnue_options *o,
					      struct node_name_map *names)
{
	struct fab_error nerr = { "" };

	node_name_map_init(names);
	if (o->node_name_map[0] && !node_name_map_load(names, o->node_name_map, &nerr))
		return names;
	return NULL;
}

/* The traffic's hosts as one job, bound like any job map. */
static int own_jobs(const struct fabric *f, const struct sarnue_options *o, struct engine_demand *d,
		    struct fab_error *err)
{
	char *text = NULL;
	size_t len = 0;
	int rc;

	if (traffic_hosts_text(&d->traffic, &text, &len)) {
		fab_error_set(err, "traffic matrix: out of memory");
		return -1;
	}
	rc = job_map_parse_text(&d->hosts, text, o->traffic, err) ||
	     job_map_bind(&d->hosts, f, o->job_host_match, NULL, err);
	free(text);
	d->own_jobs = !rc;
	return rc ? -1 : 0;
}

/* The heaviest pairs of the estimate, for the log: "a->b N, c->d M". */
static void heaviest_pairs(const struct traffic *t, char *buf, size_t size)
{
	uint32_t top[3] = { FAB_NONE, FAB_NONE, FAB_NONE }, i, k;
	size_t used = 0;

	for (i = 0; i < t->npairs; i++) {
		uint32_t c = i;

		for (k = 0; k < 3 && c != FAB_NONE; k++)
			if (top[k] == FAB_NONE || t->pairs[c].bytes > t->pairs[top[k]].bytes) {
				uint32_t out = top[k];

				top[k] = c;
				c = out;
			}
	}
	buf[0] = '\0';
	for (k = 0; k < 3 && top[k] != FAB_NONE && used < size; k++) {
		const struct traffic_pair *pr = &t->pairs[top[k]];
		int w = snprintf(buf + used, size - used, "%s%s->%s %llu", k ? ", " : "",
				 t->strings + pr->src, t->strings + pr->dst,
				 (unsigned long long)pr->bytes);

		used += w > 0 ? (size_t)w : 0;
	}
}

/*
 * traffic=perfmgr: the matrix estimated from the counters the plugin handed over.  Returns 1
 * when d->traffic holds pairs to bind, 0 to route on without measured traffic, -1 on error.
 */
static int estimate(const struct fabric *f, const struct sarnue_options *o,
		    const struct engine_ctx *ctx, const struct job_map *jobs,
		    const struct node_name_map *names, struct engine_demand *d,
		    struct engine_result *res, struct fab_error *err)
{
	struct traffic_estimate_report rep;
	struct fab_error perr = { "" };
	char top[256];

	if (!ctx) {
		fab_error_set(err,
			      "traffic=perfmgr: the counters come from OpenSM's PerfMgr, in the"
			      " plugin only; offline give traffic=PATH");
		return -1;
	}
	if (!ctx->counters || !ctx->ncounters)
		return 0; /* the plugin said why, once */
	if (traffic_estimate(&d->traffic, f, ctx->counters, ctx->ncounters, jobs, o->job_host_match,
			     names, &rep, &perr)) {
		engine_warn(res, "traffic=perfmgr: %s; routing without measured traffic", perr.msg);
		return 0;
	}
	heaviest_pairs(&d->traffic, top, sizeof(top));
	snprintf(res->traffic, sizeof(res->traffic),
		 "traffic from PerfMgr counters: %u counters of host links, %u host(s) sent %llu"
		 " bytes, %u received; gravity model in %u job(s)%s: %u host pairs%s%s",
		 rep.counters_used, rep.hosts_sent, (unsigned long long)rep.sent,
		 rep.hosts_received, rep.jobs, jobs ? "" : " (no job map: all hosts one job)",
		 d->traffic.npairs, d->traffic.npairs ? ", heaviest " : "", top);
	engine_fact(res, "traffic_hosts_sent", rep.hosts_sent);
	engine_fact(res, "traffic_hosts_received", rep.hosts_received);
	if (!d->traffic.npairs) {
		engine_warn(res, "traffic=perfmgr: no host pair sent bytes to another in the"
				 " window; routing with uniform weights");
		return 0;
	}
	return 1;
}

int engine_demand_load(const struct fabric *f, const struct sarnue_options *o,
		       const struct engine_ctx *ctx, const struct job_map *jobs,
		       struct engine_demand *d, struct engine_result *res, struct fab_error *err)
{
	struct fab_error perr = { "" };
	struct node_name_map storage;
	const struct node_name_map *names;
	int rc = -1;

	if (!o->traffic[0])
		return 0;
	names = load_names(o, &storage);
	if (!strcmp(o->traffic, OPT_TRAFFIC_PERFMGR)) {
		rc = estimate(f, o, ctx, jobs, names, d, res, err);
		if (rc <= 0)
			goto out;
	} else if (traffic_parse(&d->traffic, o->traffic, &perr)) {
		if (!ctx) {
			fab_error_set(err, "traffic matrix %s", perr.msg);
			goto out;
		}
		engine_warn(res, "traffic matrix %s; routing without measured traffic", perr.msg);
		rc = 0;
		goto out;
	}
	rc = -1;
	if (traffic_bind(&d->traffic, f, o->job_host_match, names, err) ||
	    (!jobs && own_jobs(f, o, d, err)))
		goto out;
	d->loaded = 1;
	if (d->traffic.unknown_hosts)
		engine_warn(res, "traffic matrix %s: %u hostname(s) not in the fabric, first '%s'",
			    o->traffic, d->traffic.unknown_hosts, d->traffic.first_unknown);
	engine_fact(res, "traffic_pairs", d->traffic.npairs);
	engine_fact(res, "traffic_pairs_bound", d->traffic.bound_pairs);
	rc = 0;
out:
	node_name_map_free(&storage);
	return rc;
}
