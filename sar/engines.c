/*
 * engines.c - dispatch to the routing engines and the verification every result passes before
 * anyone may use it (see engines.h).
 */
#include "engines.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dfsssp.h"
#include "nue.h"
#include "updn.h"

const char *const engine_names[] = { "sar-updn", "sar-nue", "sar-dfsssp", NULL };

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

void engine_ctx_init(struct engine_ctx *c)
{
	memset(c, 0, sizeof(*c));
	job_map_init(&c->jobs);
}

void engine_ctx_free(struct engine_ctx *c)
{
	job_map_free(&c->jobs);
	engine_ctx_init(c);
}

static void add_warning(struct engine_result *res, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void add_warning(struct engine_result *res, const char *fmt, ...)
{
	size_t used = strlen(res->warning);
	va_list ap;

	if (used && used + 2 < sizeof(res->warning)) {
		strcpy(res->warning + used, "; ");
		used += 2;
	}
	va_start(ap, fmt);
	vsnprintf(res->warning + used, sizeof(res->warning) - used, fmt, ap);
	va_end(ap);
}

/*
 * Reads the job map named by the options and binds it to f.  A malformed file changes nothing:
 * with a context the previous map (if any) stays in force and a warning says why; offline it is
 * an error.  *use is the map to route with, NULL for none.
 */
static int load_job_map(const struct fabric *f, const struct sarnue_options *o,
			struct engine_ctx *ctx, struct job_map *tmp, struct job_map **use,
			struct engine_result *res, struct fab_error *err)
{
	struct fab_error perr = { "" };

	*use = NULL;
	if (!o->job_map[0])
		return 0;
	if (job_map_parse(tmp, o->job_map, &perr)) {
		if (!ctx) {
			fab_error_set(err, "job map %s", perr.msg);
			return -1;
		}
		add_warning(res, "job map %s; %s", perr.msg,
			    ctx->have_jobs ? "the previous job map stays in force"
					   : "routing without a job map");
		if (!ctx->have_jobs)
			return 0;
		*use = &ctx->jobs;
	} else if (ctx) {
		job_map_free(&ctx->jobs);
		ctx->jobs = *tmp;
		ctx->have_jobs = 1;
		job_map_init(tmp);
		*use = &ctx->jobs;
	} else {
		*use = tmp;
	}
	if (job_map_bind(*use, f, o->job_host_match, err))
		return -1;
	if ((*use)->unknown_hosts)
		add_warning(res, "job map %s: %u hostname(s) not in the fabric, first '%s'",
			    o->job_map, (*use)->unknown_hosts, (*use)->first_unknown);
	return 0;
}

static int storage_flags(const struct fabric *f, const struct sarnue_options *o,
			 struct engine_ctx *ctx, uint8_t **flags, uint32_t *count,
			 struct engine_result *res, struct fab_error *err)
{
	struct fab_error serr = { "" };

	*flags = NULL;
	*count = 0;
	if (!o->storage_nodes[0] && !o->storage_guids[0])
		return 0;
	*flags = malloc(f->nnodes + 1);
	if (!*flags) {
		fab_error_set(err, "out of memory");
		return -1;
	}
	if (!dfsssp_mark_storage(f, o->storage_nodes, o->storage_guids, *flags, count, &serr))
		return 0;
	free(*flags);
	*flags = NULL;
	*count = 0;
	if (!ctx) {
		fab_error_set(err, "%s", serr.msg);
		return -1;
	}
	add_warning(res, "%s; routing without storage nodes", serr.msg);
	return 0;
}

static unsigned dfsssp_vls(const struct fabric *f, const struct sarnue_options *o,
			   const struct engine_ctx *ctx, struct engine_result *res)
{
	unsigned vls = fabric_min_op_vls(f);

	if (o->dfsssp_vls && o->dfsssp_vls < vls)
		vls = o->dfsssp_vls;
	if (vls > 1 && ctx && ctx->sl2vl_off) {
		add_warning(res,
			    "OpenSM's qos is off, so no SL2VL tables get programmed: routing with"
			    " 1 VL instead of %u (set qos TRUE for more layers)",
			    vls);
		vls = 1;
	}
	return vls;
}

static void nue_summary(const struct nue_report *rep, struct engine_result *res);

/*
 * DFSSSP found more layers than VLs (OpenSM's dfsssp then falls back to minhop, which deadlocks
 * on tori and random graphs).  Nue routes any connected fabric within the VLs there are, with
 * the same job map, so the fabric is routed deadlock-free anyway; the log says so.
 */
static int dfsssp_overflow_to_nue(const struct fabric *f, const struct job_map *jobs,
				  const struct dfsssp_report *drep, struct routing *r,
				  struct engine_result *res, struct fab_error *err)
{
	struct nue_opts no = { .vls = drep->max_vls, .jobs = jobs };
	struct nue_report rep;

	add_warning(res,
		    "DFSSSP needs %s%u layers but %u VL%s available; routed with Nue layering on "
		    "%u VL%s instead",
		    drep->layers_capped ? "more than " : "", drep->layers_needed, drep->max_vls,
		    drep->max_vls == 1 ? " is" : "s are", drep->max_vls,
		    drep->max_vls == 1 ? "" : "s");
	err->msg[0] = '\0';
	if (nue_route(f, &no, r, &rep, err))
		return -1;
	snprintf(res->summary, sizeof(res->summary), "DFSSSP needs %u layers, %u VLs: Nue, ",
		 drep->layers_needed, drep->max_vls);
	nue_summary(&rep, res);
	return 0;
}

static int run_dfsssp(const struct fabric *f, const struct sarnue_options *o,
		      struct engine_ctx *ctx, struct routing *r, struct engine_result *res,
		      struct fab_error *err)
{
	struct dfsssp_opts dopts = { 0 };
	struct dfsssp_report rep;
	struct job_map tmp, *jobs = NULL;
	uint8_t *storage = NULL;
	uint32_t nstorage = 0;
	int ret = -1;

	job_map_init(&tmp);
	if (load_job_map(f, o, ctx, &tmp, &jobs, res, err) ||
	    storage_flags(f, o, ctx, &storage, &nstorage, res, err))
		goto out;
	dopts.jobs = jobs && jobs->njobs ? jobs : NULL;
	dopts.storage = storage;
	dopts.max_vls = dfsssp_vls(f, o, ctx, res);
	ret = dfsssp_route(f, &dopts, r, &rep, err);
	if (ret && (rep.layers_capped || rep.layers_needed > rep.max_vls)) {
		ret = dfsssp_overflow_to_nue(f, dopts.jobs, &rep, r, res, err);
		goto out;
	}
	snprintf(res->summary, sizeof(res->summary),
		 "%u of %u VLs used, %u layer(s) needed; %u destination LIDs (%u job, %u storage"
		 " on %u nodes); %u job(s) on %u nodes, %u unknown host(s); %llu paths, %llu"
		 " moved up for %llu cycles; paths %.3f s, layers %.3f s",
		 rep.vls_used, rep.max_vls, rep.layers_needed, rep.lids_routed, rep.job_lids,
		 rep.storage_lids, nstorage, dopts.jobs ? dopts.jobs->njobs : 0,
		 dopts.jobs ? job_map_bound_nodes(dopts.jobs) : 0,
		 dopts.jobs ? dopts.jobs->unknown_hosts : 0, (unsigned long long)rep.paths,
		 (unsigned long long)rep.moved, (unsigned long long)rep.cycles, rep.paths_seconds,
		 rep.layers_seconds);
out:
	job_map_free(&tmp);
	free(storage);
	return ret;
}

/*
 * Without SL2VL programming every SL maps to VL 0, so layers above 0 would share VL 0 and
 * deadlock: route with one layer and say so.
 */
static unsigned nue_layers(const struct sarnue_options *o, const struct engine_ctx *ctx,
			   struct engine_result *res)
{
	if (o->nue_vls <= 1 || !ctx || !ctx->sl2vl_off)
		return o->nue_vls;
	add_warning(res,
		    "nue_vls=%u needs SL2VL tables, which OpenSM programs only with 'qos TRUE'; "
		    "routing with 1 VL",
		    o->nue_vls);
	return 1;
}

static void nue_summary(const struct nue_report *rep, struct engine_result *res)
{
	size_t used = strlen(res->summary);
	unsigned i;

	used += (size_t)snprintf(res->summary + used, sizeof(res->summary) - used,
				 "%u VL%s (%s), %u destinations", rep->vls,
				 rep->vls == 1 ? "" : "s", rep->partitioner, rep->destinations);
	for (i = 0; i < rep->vls && rep->vls > 1 && used < sizeof(res->summary); i++)
		used += (size_t)snprintf(res->summary + used, sizeof(res->summary) - used, "%s%u",
					 i ? "/" : " per layer ", rep->dests_per_layer[i]);
	if (used < sizeof(res->summary))
		snprintf(res->summary + used, sizeof(res->summary) - used,
			 ", %u fall-backs to escape paths, %u backtracks, %u second attempts, "
			 "%u shortcuts, %u job destinations, %llu cycle searches",
			 rep->fallbacks, rep->backtracks, rep->second_attempts, rep->shortcuts,
			 rep->job_destinations, (unsigned long long)rep->cycle_searches);
}

static int run_nue(const struct fabric *f, const struct sarnue_options *o, struct engine_ctx *ctx,
		   struct routing *r, struct engine_result *res, struct fab_error *err)
{
	struct nue_opts no = { .vls = nue_layers(o, ctx, res) };
	struct job_map tmp, *jobs = NULL;
	struct nue_report rep;
	int ret = -1;

	job_map_init(&tmp);
	if (load_job_map(f, o, ctx, &tmp, &jobs, res, err))
		goto out;
	no.jobs = jobs && jobs->njobs ? jobs : NULL;
	if (nue_route(f, &no, r, &rep, err))
		goto out;
	nue_summary(&rep, res);
	ret = 0;
out:
	job_map_free(&tmp);
	return ret;
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
	return engine_run_ctx(name, f, o, NULL, r, res, err);
}

int engine_run_ctx(const char *name, const struct fabric *f, const struct sarnue_options *o,
		   struct engine_ctx *ctx, struct routing *r, struct engine_result *res,
		   struct fab_error *err)
{
	double t0 = now();
	int rc;

	memset(res, 0, sizeof(*res));
	if (check_link_vls(f, err))
		return -1;
	if (!strcmp(name, "sar-updn")) {
		rc = run_updn(f, o, r, res, err);
	} else if (!strcmp(name, "sar-nue")) {
		rc = run_nue(f, o, ctx, r, res, err);
	} else if (!strcmp(name, "sar-dfsssp")) {
		rc = run_dfsssp(f, o, ctx, r, res, err);
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
