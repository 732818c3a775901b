/*
 * engines.c - dispatch to the routing engines and the verification every result passes before
 * anyone may use it (see engines.h).
 */
#include "engines.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "nue.h"
#include "updn.h"

const char *const engine_names[] = { "sar-updn", "sar-nue", NULL };

int engine_known(const char *name)
{
	unsigned i;

	for (i = 0; engine_names[i]; i++)
		if (!strcmp(engine_names[i], name))
			return 1;
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int run_updn(const struct fabric *f, const struct sarnue_options *o, struct routing *r,
		    struct engine_result *res, struct fab_error *err)
{
	struct updn_opts uo = { .root_guids = o->updn_roots, .nroots = o->n_updn_roots };
	struct updn_report rep;
	size_t used;
	unsigned i;

	if (updn_route(f, &uo, r, &rep, err))
		return -1;
	used = (size_t)snprintf(res->summary, sizeof(res->summary),
				"%u root(s) from %s, max rank %u, %u LIDs routed, %llu turn "
				"entries, roots",
				rep.nroots, rep.root_source, rep.max_rank, rep.lids_routed,
				(unsigned long long)rep.turn_routes);
	for (i = 0; i < rep.nroots && i < 4 && used < sizeof(res->summary); i++)
		used += (size_t)snprintf(res->summary + used, sizeof(res->summary) - used,
					 " 0x%016llx", (unsigned long long)rep.root_guids[i]);
	if (rep.nroots > 4 && used < sizeof(res->summary))
		snprintf(res->summary + used, sizeof(res->summary) - used, " ...");
	return 0;
}

/*
 * Without SL2VL programming every SL maps to VL 0, so layers above 0 would share VL 0 and
 * deadlock: route with one layer and say so.
 */
static unsigned nue_layers(const struct sarnue_options *o, struct engine_result *res)
{
	if (o->nue_vls <= 1 || o->sl2vl_programmed)
		return o->nue_vls;
	snprintf(res->warning, sizeof(res->warning),
		 "nue_vls=%u needs SL2VL tables, which OpenSM programs only with 'qos TRUE'; "
		 "routing with 1 VL",
		 o->nue_vls);
	return 1;
}

static int run_nue(const struct fabric *f, const struct sarnue_options *o,
		   const struct job_map *jobs, struct routing *r, struct engine_result *res,
		   struct fab_error *err)
{
	struct nue_opts no = { .vls = nue_layers(o, res), .jobs = jobs };
	struct nue_report rep;
	size_t used;
	unsigned i;

	if (nue_route(f, &no, r, &rep, err))
		return -1;
	used = (size_t)snprintf(res->summary, sizeof(res->summary), "%u VL%s (%s), %u destinations",
				rep.vls, rep.vls == 1 ? "" : "s", rep.partitioner,
				rep.destinations);
	for (i = 0; i < rep.vls && rep.vls > 1 && used < sizeof(res->summary); i++)
		used += (size_t)snprintf(res->summary + used, sizeof(res->summary) - used, "%s%u",
					 i ? "/" : " per layer ", rep.dests_per_layer[i]);
	if (used < sizeof(res->summary))
		snprintf(res->summary + used, sizeof(res->summary) - used,
			 ", %u fall-backs to escape paths, %u backtracks, %u shortcuts, "
			 "%u job destinations, %llu cycle searches",
			 rep.fallbacks, rep.backtracks, rep.shortcuts, rep.job_destinations,
			 (unsigned long long)rep.cycle_searches);
	return 0;
}

static int verify_result(const struct fabric *f, const struct routing *r, struct engine_result *res,
			 struct fab_error *err)
{
	double t0 = now();
	const struct verify_report *v = &res->verify;

	if (verify_routing(f, r, &res->verify)) {
		fab_error_set(err, "verifier ran out of memory");
		return -1;
	}
	res->verify_seconds = now() - t0;
	res->verified = 1;
	if (v->unreachable) {
		fab_error_set(err, "verifier: %llu unreachable pairs, first %s",
			      (unsigned long long)v->unreachable, v->first_unreachable);
		return -1;
	}
	if (v->loops) {
		fab_error_set(err, "verifier: %llu paths loop, first %s",
			      (unsigned long long)v->loops, v->first_loop);
		return -1;
	}
	if (v->credit_loop_vls) {
		fab_error_set(err, "verifier: credit loop, %.400s", v->cycle);
		return -1;
	}
	return 0;
}

/* Every engine needs at least VL 0 on every link it may use. */
static int check_link_vls(const struct fabric *f, struct fab_error *err)
{
	uint32_t p;

	for (p = 0; p < f->nports; p++) {
		const struct fab_port *port = &f->ports[p];

		if (port->num == 0 || !fabric_channel_up(f, p) || port->op_vls)
			continue;
		fab_error_set(err, "%s port %u has no operational data VL",
			      fabric_node_desc(f, port->node), port->num);
		return -1;
	}
	return 0;
}

int engine_run(const char *name, const struct fabric *f, const struct sarnue_options *o,
	       struct routing *r, struct engine_result *res, struct fab_error *err)
{
	double t0 = now();
	int rc;

	memset(res, 0, sizeof(*res));
	if (check_link_vls(f, err))
		return -1;
	if (!strcmp(name, "sar-updn")) {
		rc = run_updn(f, o, r, res, err);
	} else if (!strcmp(name, "sar-nue")) {
		rc = run_nue(f, o, NULL, r, res, err);
	} else {
		fab_error_set(err, "unknown engine '%s'", name);
		return -1;
	}
	res->route_seconds = now() - t0;
	if (rc)
		return -1;
	if (!o->verify)
		return 0;
	return verify_result(f, r, res, err);
}
