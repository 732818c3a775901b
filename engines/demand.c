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

/* Binds by the node-name map when the options name one that reads, as job maps are bound. */
static int bind_traffic(const struct fabric *f, const struct sarnue_options *o, struct traffic *t,
			struct fab_error *err)
{
	struct node_name_map names;
	struct fab_error nerr = { "" };
	int use_names, rc;

	node_name_map_init(&names);
	use_names = o->node_name_map[0] && !node_name_map_load(&names, o->node_name_map, &nerr);
	rc = traffic_bind(t, f, o->job_host_match, use_names ? &names : NULL, err);
	node_name_map_free(&names);
	return rc;
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

int engine_demand_load(const struct fabric *f, const struct sarnue_options *o,
		       const struct engine_ctx *ctx, const struct job_map *jobs,
		       struct engine_demand *d, struct engine_result *res, struct fab_error *err)
{
	struct fab_error perr = { "" };

	if (!o->traffic[0])
		return 0;
	if (traffic_parse(&d->traffic, o->traffic, &perr)) {
		if (!ctx) {
			fab_error_set(err, "traffic matrix %s", perr.msg);
			return -1;
		}
		engine_warn(res, "traffic matrix %s; routing without measured traffic", perr.msg);
		return 0;
	}
	if (bind_traffic(f, o, &d->traffic, err) || (!jobs && own_jobs(f, o, d, err)))
		return -1;
	d->loaded = 1;
	if (d->traffic.unknown_hosts)
		engine_warn(res, "traffic matrix %s: %u hostname(s) not in the fabric, first '%s'",
			    o->traffic, d->traffic.unknown_hosts, d->traffic.first_unknown);
	engine_fact(res, "traffic_pairs", d->traffic.npairs);
	engine_fact(res, "traffic_pairs_bound", d->traffic.bound_pairs);
	return 0;
}
