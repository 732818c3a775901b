/*
 * engines.c - dispatch to the routing engines and the verification every result passes before
 * anyone may use it (see engines.h).
 */
#include "engines/engines.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/metrics.h"
#include "engines/dfsssp/dfsssp.h"
#include "engines/dmodk/dmodk.h"
#include "engines/demand.h"
#include "engines/overflow.h"
#include "engines/nue/nue.h"
#include "fabric/layersfile.h"
#include "lib/threads.h"
#include "engines/updn/updn.h"
#include "lib/assert.h"
#include "lib/clock.h"

const char *const engine_names[] = { "sar-updn", "sar-nue", "sar-dfsssp", "sar-dmodk", NULL };

int engine_known(const char *name)
{
	unsigned i;

	for (i = 0; engine_names[i]; i++)
		if (!strcmp(engine_names[i], name))
			return 1;
	return 0;
}

/*
 * One root carries every route that climbs: on a multi-level tree, many times ftree's load.  The
 * warning says how much, against what the chosen roots achieved where they could route.
 */
static void warn_updn_fall_back(struct engine_result *res, const struct updn_report *rep)
{
	char cost[160] = "which concentrates the load on it";

	if (rep->efi_known && !rep->roots_unrouted)
		snprintf(cost, sizeof(cost), "max EFI %llu against %llu with the %u root(s)",
			 (unsigned long long)rep->fallback_max_efi,
			 (unsigned long long)rep->roots_max_efi, rep->fell_back_from);
	else if (rep->efi_known)
		snprintf(cost, sizeof(cost),
			 "max EFI %llu against %llu with the %u root(s), which left %llu routes "
			 "between end ports undelivered",
			 (unsigned long long)rep->fallback_max_efi,
			 (unsigned long long)rep->roots_max_efi, rep->fell_back_from,
			 (unsigned long long)rep->roots_unrouted);
	engine_warn(res,
		    "sar-updn: %u root(s) could not route every LID (%s); routing with the single "
		    "most central switch as root, %s: name roots with updn_roots=, or use sar-nue "
		    "or sar-dfsssp",
		    rep->fell_back_from, rep->fall_back_why, cost);
}

static int run_updn(const struct fabric *f, const struct sarnue_options *o, struct routing *r,
		    struct engine_result *res, struct fab_error *err)
{
	struct updn_opts uo = { .root_guids = o->updn_roots,
				.nroots = o->n_updn_roots,
				.progress = o->progress };
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
	engine_fact(res, "roots", rep.nroots);
	engine_fact_text(res, "root_source", rep.root_source);
	engine_fact(res, "max_rank", rep.max_rank);
	engine_fact(res, "lids_routed", rep.lids_routed);
	engine_fact(res, "turn_entries", (double)rep.turn_routes);
	engine_fact(res, "roots_fell_back_from", rep.fell_back_from);
	if (rep.fell_back_from)
		warn_updn_fall_back(res, &rep);
	if (rep.verified) {
		res->verify = rep.verify;
		res->verify_seconds = rep.verify_seconds;
		res->verified = 1;
	}
	return 0;
}

/*
 * D-mod-k on a recognised fat tree.  How far from the closed form the tables are: the entries a
 * missing link moved, and those of switches that reach a LID only through the turn leaf.
 */
static int run_dmodk(const struct fabric *f, const struct sarnue_options *o, struct routing *r,
		     struct engine_result *res, struct fab_error *err)
{
	struct dmodk_report rep;

	if (dmodk_route_progress(f, o->progress, r, &rep, err))
		return -1;
	snprintf(res->summary, sizeof(res->summary),
		 "fat tree of %s; %u terminals in topology order, %u service port(s); %u LIDs "
		 "routed, %llu of %llu entries off the closed form (%.2f%%), %llu through the "
		 "turn leaf 0x%016llx; %u missing up link(s); max EFI cut bound %llu",
		 rep.shape, rep.terminals, rep.service, rep.lids_routed,
		 (unsigned long long)rep.moved, (unsigned long long)rep.entries,
		 rep.entries ? 100.0 * (double)rep.moved / (double)rep.entries : 0.0,
		 (unsigned long long)rep.turn_entries, (unsigned long long)rep.turn_guid,
		 rep.missing_links, (unsigned long long)rep.efi_bound);
	engine_fact_text(res, "shape", rep.shape);
	engine_fact(res, "levels", rep.levels);
	engine_fact(res, "terminals", rep.terminals);
	engine_fact(res, "service_ports", rep.service);
	engine_fact(res, "lids_routed", rep.lids_routed);
	engine_fact(res, "entries", (double)rep.entries);
	engine_fact(res, "entries_off_closed_form", (double)rep.moved);
	engine_fact(res, "turn_entries", (double)rep.turn_entries);
	engine_fact(res, "missing_up_links", rep.missing_links);
	engine_fact(res, "max_efi_cut_bound", (double)rep.efi_bound);
	if (rep.missing_links)
		engine_warn(res,
			    "the fat tree lacks %u up link(s); %llu of %llu LFT entries "
			    "(%.2f%%) moved off their closed-form port",
			    rep.missing_links, (unsigned long long)rep.moved,
			    (unsigned long long)rep.entries,
			    rep.entries ? 100.0 * (double)rep.moved / (double)rep.entries : 0.0);
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
	escape_plane_free(&c->escape);
	dfsssp_memo_free(&c->dfsssp_memo);
	engine_ctx_init(c);
}

/* The job map as messages name it: the file the client passed over the socket, or the option. */
static const char *job_map_label(const struct sarnue_options *o)
{
	return o->job_map_name[0] ? o->job_map_name : o->job_map;
}

/*
 * Binds the job map through the node-name map when the options name one.  A node-name map that
 * cannot be read binds by descriptions alone, with a warning: the routing must not fail for it.
 */
static int bind_job_map(const struct fabric *f, const struct sarnue_options *o, struct job_map *jm,
			struct engine_result *res, struct fab_error *err)
{
	struct node_name_map names;
	struct fab_error nerr = { "" };
	int use_names = 0, rc;

	node_name_map_init(&names);
	if (o->node_name_map[0]) {
		use_names = !node_name_map_load(&names, o->node_name_map, &nerr);
		if (!use_names)
			engine_warn(res,
				    "node_name_map %s; job map hosts bound by node descriptions",
				    nerr.msg);
	}
	rc = job_map_bind(jm, f, o->job_host_match, use_names ? &names : NULL, err);
	node_name_map_free(&names);
	return rc;
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
	if (job_map_parse_named(tmp, o->job_map, job_map_label(o), &perr)) {
		if (!ctx) {
			fab_error_set(err, "job map %s", perr.msg);
			return -1;
		}
		engine_warn(res, "job map %s; %s", perr.msg,
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
	if (bind_job_map(f, o, *use, res, err))
		return -1;
	res->jobs = (*use)->njobs;
	res->job_hosts = job_map_bound_nodes(*use);
	res->unknown_hosts = (*use)->unknown_hosts;
	if ((*use)->unknown_hosts)
		engine_warn(res, "job map %s: %u hostname(s) not in the fabric, first '%s'",
			    job_map_label(o), (*use)->unknown_hosts, (*use)->first_unknown);
	if ((*use)->ambiguous_hosts)
		engine_warn(res,
			    "job map %s: hostname '%s' stands for %u HCAs named '%s' (%u such "
			    "hostname(s)), bound to all of them; name the hosts with "
			    "node_name_map=PATH (README: job maps on real fabrics)",
			    job_map_label(o), (*use)->first_ambiguous, (*use)->first_ambiguous_hcas,
			    (*use)->first_ambiguous_name, (*use)->ambiguous_hosts);
	return 0;
}

/*
 * A storage option that marks nothing is almost always a typo or a file for another fabric,
 * and would otherwise route silently as if it were not set: one warning per routing.
 */
static void warn_unmatched_storage(const struct sarnue_options *o, const struct storage_match *m,
				   struct engine_result *res)
{
	if (o->storage_nodes[0] && !m->by_pattern)
		engine_warn(res, "storage_nodes '%s' matches no CA node of the fabric",
			    o->storage_nodes);
	if (o->storage_guids[0] && !m->guids)
		engine_warn(res, "storage_guids %s lists no GUID", o->storage_guids);
	else if (o->storage_guids[0] && !m->guids_found)
		engine_warn(res,
			    "storage_guids %s: none of its %u GUID(s) is a CA node of the fabric",
			    o->storage_guids, m->guids);
}

static int storage_flags(const struct fabric *f, const struct sarnue_options *o,
			 struct engine_ctx *ctx, uint8_t **flags, uint32_t *count,
			 struct engine_result *res, struct fab_error *err)
{
	struct fab_error serr = { "" };
	struct storage_match m;

	*flags = NULL;
	*count = 0;
	if (!o->storage_nodes[0] && !o->storage_guids[0])
		return 0;
	*flags = malloc(f->nnodes + 1);
	if (!*flags) {
		fab_error_set(err, "out of memory");
		return -1;
	}
	if (!dfsssp_mark_storage(f, o->storage_nodes, o->storage_guids, *flags, count, &m, &serr)) {
		warn_unmatched_storage(o, &m, res);
		return 0;
	}
	free(*flags);
	*flags = NULL;
	*count = 0;
	if (!ctx) {
		fab_error_set(err, "%s", serr.msg);
		return -1;
	}
	engine_warn(res, "%s; routing without storage nodes", serr.msg);
	return 0;
}

static unsigned dfsssp_vls(const struct fabric *f, const struct sarnue_options *o,
			   const struct engine_ctx *ctx, struct engine_result *res)
{
	unsigned vls = fabric_min_op_vls(f);

	if (o->dfsssp_vls && o->dfsssp_vls < vls)
		vls = o->dfsssp_vls;
	if (vls > 1 && ctx && ctx->sl2vl_off) {
		engine_warn(res,
			    "OpenSM's qos is off, so no SL2VL tables get programmed: routing with"
			    " 1 VL instead of %u (set qos TRUE for more layers)",
			    vls);
		vls = 1;
	}
	return vls;
}

/*
 * Nue as the options configure it, on vls VLs: sar-nue's and the Nue that routes what DFSSSP's
 * layers cannot hold (engines/overflow.c, which passes dopts for the job map and measured traffic)
 * are one engine with one set of settings (threads, both destination orders, rebalancing), so on a
 * fat tree both follow its topology order.
 */
struct nue_opts engine_nue_opts(const struct sarnue_options *o, const struct engine_ctx *ctx,
				unsigned vls, const struct dfsssp_opts *dopts)
{
	struct nue_opts no = {
		.vls = vls,
		.jobs = dopts ? dopts->jobs : NULL,
		.traffic = dopts ? dopts->traffic : NULL,
		.traffic_floor = dopts ? dopts->traffic_floor : 0,
		.skip_rebalance = !o->nue_rebalance,
		.threads = o->nue_threads,
		.orders = o->nue_orders,
		.group = (enum nue_group)o->nue_group,
		.layer_tries = o->nue_layer_tries,
		.partition = o->nue_partition_metis ? NUE_PARTITION_METIS : NUE_PARTITION_AUTO,
		.spare_cpu = ctx ? ctx->spare_cpu : NULL,
		.no_mcast_tree = !o->mcast_reserve,
		.progress = o->progress,
	};

	return no;
}

static void dfsssp_facts(const struct dfsssp_report *rep, const struct job_map *jobs,
			 uint32_t nstorage, struct engine_result *res)
{
	engine_fact(res, "vls_used", rep->vls_used);
	engine_fact(res, "vls", rep->max_vls);
	engine_fact(res, "layers_needed", rep->layers_needed);
	engine_fact(res, "lids_routed", rep->lids_routed);
	engine_fact(res, "job_lids", rep->job_lids);
	engine_fact(res, "storage_lids", rep->storage_lids);
	engine_fact(res, "storage_nodes", nstorage);
	engine_fact(res, "jobs", jobs ? jobs->njobs : 0);
	engine_fact(res, "job_nodes", jobs ? job_map_bound_nodes(jobs) : 0);
	engine_fact(res, "unknown_hosts", jobs ? jobs->unknown_hosts : 0);
	engine_fact(res, "paths", (double)rep->paths);
	engine_fact(res, "paths_moved_up", (double)rep->moved);
	engine_fact(res, "cycles", (double)rep->cycles);
	engine_fact(res, "job_route_improvements", (double)rep->improve_moves);
	engine_fact(res, "paths_seconds", rep->paths_seconds);
	engine_fact(res, "layers_seconds", rep->layers_seconds);
}

/* incremental=yes: the columns kept from the last routing of this fabric, as facts and a line. */
static void incremental_facts(const struct dfsssp_report *rep, int asked, struct engine_result *res)
{
	double pct;

	if (!asked)
		return;
	engine_fact(res, "incremental_kept_lids", rep->kept_lids);
	engine_fact(res, "incremental_rerouted_lids", rep->rerouted_lids);
	if (!rep->incremental) {
		snprintf(res->incremental, sizeof(res->incremental),
			 "incremental reroute: no earlier routing of this fabric, all %u"
			 " destination LIDs routed",
			 rep->lids_routed);
		return;
	}
	pct = rep->lids_routed ? 100.0 * rep->kept_lids / rep->lids_routed : 0.0;
	snprintf(res->incremental, sizeof(res->incremental),
		 "incremental reroute: kept %u of %u destination columns (%.1f%%), routed %u again",
		 rep->kept_lids, rep->lids_routed, pct, rep->rerouted_lids);
}

/* Routes f with DFSSSP (SAR weights with a job map) on at most vls VLs. */
static int run_dfsssp(const struct fabric *f, const struct sarnue_options *o,
		      struct engine_ctx *ctx, unsigned vls, struct routing *r,
		      struct engine_result *res, struct fab_error *err)
{
	struct dfsssp_opts dopts = { 0 };
	struct dfsssp_report rep;
	struct overflow_ahead ahead = { 0 };
	struct job_map tmp, *jobs = NULL;
	struct engine_demand demand;
	uint8_t *storage = NULL;
	uint32_t nstorage = 0;
	int ret = -1;

	job_map_init(&tmp);
	engine_demand_init(&demand);
	if (load_job_map(f, o, ctx, &tmp, &jobs, res, err) ||
	    storage_flags(f, o, ctx, &storage, &nstorage, res, err) ||
	    engine_demand_load(f, o, ctx, jobs && jobs->njobs ? jobs : NULL, &demand, res, err))
		goto out;
	if (demand.own_jobs)
		jobs = &demand.hosts;
	dopts.jobs = jobs && jobs->njobs ? jobs : NULL;
	dopts.traffic = demand.loaded ? &demand.traffic : NULL;
	dopts.traffic_floor = demand.own_jobs ? 0 : 1;
	dopts.storage = storage;
	dopts.progress = o->progress;
	/* dfsssp_route's bound too: at most 15 data VLs, so the overflow work agrees with it. */
	vls = vls < 1 ? 1 : vls > 15 ? 15 : vls;
	dopts.max_vls = vls;
	dopts.no_mcast_tree = !o->mcast_reserve;
	dopts.memo = ctx && o->incremental ? &ctx->dfsssp_memo : NULL;
	if (ctx && !o->incremental)
		dfsssp_memo_free(&ctx->dfsssp_memo);
	dopts.fit_whole = vls == 1 && !dopts.no_mcast_tree;
	dopts.judge_overflow = o->dfsssp_judge_overflow;
	if (vls >= 2) {
		overflow_ahead_init(&ahead, f, o, ctx, &dopts, vls);
		dopts.overflow_likely = overflow_ahead_start;
		dopts.overflow_likely_arg = &ahead;
	}
	ret = dfsssp_route(f, &dopts, r, &rep, err);
	if (!ret && dopts.fit_whole) {
		ret = dfsssp_fit_one_vl(f, o, ctx, &dopts, &rep, r, res, err);
		if (ret && dopts.memo)
			/* Nue's columns are not DFSSSP's: the next routing starts afresh. */
			dfsssp_memo_free(dopts.memo);
		if (ret) {
			ret = ret < 0 ? -1 : 0;
			goto out;
		}
		rep.layers_needed = 1;
	}
	if (ret && (rep.layers_capped || rep.layers_needed > rep.max_vls)) {
		ret = rep.max_vls >= 2 && r->sl_by_pair
			      ? dfsssp_keep_fitting(f, &rep, &ahead, r, res, err)
			      : dfsssp_overflow_to_nue(f, o, ctx, &dopts, &rep, r, res, err);
		goto out;
	}
	snprintf(res->summary, sizeof(res->summary),
		 "%u of %u VLs used, %u layer(s) needed; %u destination LIDs (%u job, %u storage"
		 " on %u nodes); %u job(s) on %u nodes, %u unknown host(s); %llu paths, %llu"
		 " moved up for %llu cycles; job routes improved %llu in %llu sweep(s)%s, %.3f s;"
		 " paths %.3f s, layers %.3f s",
		 rep.vls_used, rep.max_vls, rep.layers_needed, rep.lids_routed, rep.job_lids,
		 rep.storage_lids, nstorage, dopts.jobs ? dopts.jobs->njobs : 0,
		 dopts.jobs ? job_map_bound_nodes(dopts.jobs) : 0,
		 dopts.jobs ? dopts.jobs->unknown_hosts : 0, (unsigned long long)rep.paths,
		 (unsigned long long)rep.moved, (unsigned long long)rep.cycles,
		 (unsigned long long)rep.improve_moves, (unsigned long long)rep.improve_sweeps,
		 rep.improve_stopped ? " (work budget reached)" : "", rep.improve_seconds,
		 rep.paths_seconds, rep.layers_seconds);
	dfsssp_facts(&rep, dopts.jobs, nstorage, res);
	incremental_facts(&rep, dopts.memo != NULL, res);
out:
	overflow_ahead_free(&ahead);
	job_map_free(&tmp);
	engine_demand_free(&demand);
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
	engine_warn(res,
		    "nue_vls=%u needs SL2VL tables, which OpenSM programs only with 'qos TRUE'; "
		    "routing with 1 VL",
		    o->nue_vls);
	return 1;
}

static void add_summary(struct engine_result *res, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Appends to the summary; what does not fit is cut off. */
static void add_summary(struct engine_result *res, const char *fmt, ...)
{
	size_t used = strlen(res->summary);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(res->summary + used, sizeof(res->summary) - used, fmt, ap);
	va_end(ap);
}

/* " per layer a/b/c" for more than one layer. */
static void add_per_layer(struct engine_result *res, unsigned vls, const uint32_t *count)
{
	unsigned i;

	for (i = 0; i < vls && vls > 1; i++)
		add_summary(res, "%s%u", i ? "/" : " per layer ", count[i]);
}

/*
 * The torus's positions per dimension, and its arcs per dimension (" 16x16x16 in 2x2x2"), or,
 * when it had too few layers for blocks (no arcs chosen), how many it needs.
 */
static void add_torus_shape(struct engine_result *res, const struct nue_torus *t)
{
	int blocks = t->cuts[0] != 0;
	unsigned d;

	char shape[64];
	size_t used = 0;

	for (d = 0; d < t->dims && used < sizeof(shape); d++)
		used += (size_t)snprintf(shape + used, sizeof(shape) - used, "%s%u", d ? "x" : "",
					 t->len[d]);
	engine_fact_text(res, "torus", shape);
	add_summary(res, "%s%s", blocks ? " " : ", torus ", shape);
	if (!blocks) {
		add_summary(res, " needs %u layers for blocks", nue_torus_layers_needed(t));
		return;
	}
	for (d = 0; d < t->dims; d++)
		add_summary(res, "%s%u", d ? "x" : " in ", t->cuts[d]);
}

void engine_nue_summary(const struct nue_report *rep, struct engine_result *res)
{
	res->fallbacks = rep->fallbacks;
	engine_fact(res, "vls", rep->vls);
	engine_fact_text(res, "partitioner", rep->partitioner);
	engine_fact(res, "destinations", rep->destinations);
	engine_fact(res, "fallbacks", rep->fallbacks);
	engine_fact(res, "moved_to_another_layer", rep->moved);
	engine_fact(res, "moved_as_previous", rep->moved_as_previous);
	engine_fact(res, "backtracks", rep->backtracks);
	engine_fact(res, "shortcuts", rep->shortcuts);
	engine_fact(res, "job_destinations", rep->job_destinations);
	engine_fact(res, "cycle_searches", (double)rep->cycle_searches);
	engine_fact(res, "single_layer", rep->single_layer ? 1 : 0);
	engine_fact(res, "layers_routed_once", rep->layers_deferred);
	engine_fact(res, "first_passes_again", rep->passes_again);
	engine_fact(res, "one_layer_alone", rep->one_layer_alone);
	engine_fact(res, "grouped_destinations", rep->grouped);
	engine_fact(res, "fallbacks_joined", rep->joined);
	engine_fact(res, "one_order_for_memory", rep->one_order_for_memory);
	add_summary(res, "%u VL%s (%s", rep->vls, rep->vls == 1 ? "" : "s", rep->partitioner);
	if (rep->torus.dims)
		add_torus_shape(res, &rep->torus);
	add_summary(res, "), %u destinations", rep->destinations);
	add_per_layer(res, rep->vls, rep->dests_per_layer);
	add_summary(res, ", %u fall-backs to escape paths", rep->fallbacks);
	if (rep->fallbacks)
		add_per_layer(res, rep->vls, rep->fallbacks_per_layer);
	add_summary(res,
		    ", %u moved to another layer (%u to the previous one's), %u layers routed once"
		    " with few fall-backs%s, "
		    "%u layers routed again with fewer fall-backs, "
		    "%u rerouted against the final weights, %u backtracks, %u second attempts, "
		    "%u third attempts moving aside, %u shortcuts, %u switches moved aside, "
		    "%u job destinations, %llu cycle searches (%llu spared)",
		    rep->moved, rep->moved_as_previous, rep->layers_deferred,
		    rep->passes_again ? " (moves fell short: routed again with every try)" : "",
		    rep->layers_rerouted, rep->rerouted, rep->backtracks, rep->second_attempts,
		    rep->aside_attempts, rep->shortcuts, rep->moved_aside, rep->job_destinations,
		    (unsigned long long)rep->cycle_searches,
		    (unsigned long long)rep->searches_spared);
	if (rep->grouped)
		add_summary(res, ", %u destinations on the routes of another LID of their switch",
			    rep->grouped);
	if (rep->joined)
		add_summary(res, ", %u fall-backs moved onto another LID's routes at their switch",
			    rep->joined);
	if (rep->one_order_for_memory)
		add_summary(res, ", one destination order (two would need their tables twice)");
	if (rep->second_order)
		add_summary(res, ", equally far destinations by descending LID");
	else if (rep->by_lid)
		add_summary(res, ", destinations by LID");
	if (rep->at_cut_bound)
		add_summary(res, "; one layer reached the fat tree's cut bound of the maximum EFI, "
				 "no other candidate routed");
	if (rep->one_layer_alone)
		add_summary(res, "; large tree-like fabric: one layer with shortest routes kept, "
				 "no other candidate routed, switch LIDs keep its routes");
	if (rep->single_layer == NUE_ONE_LAYER_SHORTEST)
		add_summary(res, "; one layer routed every CA pair on a shortest path");
	if (rep->single_layer == NUE_ONE_LAYER_FEWER_FALLBACKS)
		add_summary(res,
			    "; one layer fell back less than %u layers and had a lower maximum EFI",
			    rep->vls);
	if (rep->single_layer)
		add_summary(res,
			    ", its destinations spread over the VLs, %u routed again in their VL "
			    "alone",
			    rep->vl_rerouted);
}

/*
 * The layers of nue_layers= for every destination, in *layers (NULL without the option or with
 * one layer); a switch of the file that the fabric lacks is only warned about.
 */
static int load_nue_layers(const struct fabric *f, const struct sarnue_options *o, unsigned vls,
			   uint8_t **layers, struct engine_result *res, struct fab_error *err)
{
	uint8_t *sw_layer = NULL;
	uint32_t unknown = 0;
	int ret = -1;

	*layers = NULL;
	if (!o->nue_layers[0] || vls < 2)
		return 0;
	sw_layer = malloc(f->nswitches ? f->nswitches : 1);
	*layers = malloc(f->nendports ? f->nendports : 1);
	if (!sw_layer || !*layers) {
		fab_error_set(err, "out of memory for the layers of %s", o->nue_layers);
		goto out;
	}
	if (switch_layers_load(f, o->nue_layers, vls, sw_layer, &unknown, err))
		goto out;
	if (nue_partition_by_switch(f, sw_layer, *layers)) {
		fab_error_set(err, "out of memory for the layers of %s", o->nue_layers);
		goto out;
	}
	if (unknown)
		engine_warn(res, "nue_layers %s: %u switch%s not in the fabric, skipped",
			    o->nue_layers, unknown, unknown == 1 ? "" : "es");
	ret = 0;
out:
	free(sw_layer);
	if (ret) {
		free(*layers);
		*layers = NULL;
	}
	return ret;
}

/* Routes f with Nue on vls layers (and VLs). */
static int run_nue(const struct fabric *f, const struct sarnue_options *o, struct engine_ctx *ctx,
		   unsigned vls, struct routing *r, struct engine_result *res,
		   struct fab_error *err)
{
	struct nue_opts no = engine_nue_opts(o, ctx, vls, NULL);
	struct job_map tmp, *jobs = NULL;
	struct engine_demand demand;
	struct nue_report rep;
	uint8_t *layers = NULL;
	int ret = -1;

	job_map_init(&tmp);
	engine_demand_init(&demand);
	if (load_job_map(f, o, ctx, &tmp, &jobs, res, err) ||
	    load_nue_layers(f, o, vls, &layers, res, err) ||
	    engine_demand_load(f, o, ctx, jobs && jobs->njobs ? jobs : NULL, &demand, res, err))
		goto out;
	if (demand.own_jobs)
		jobs = &demand.hosts;
	no.jobs = jobs && jobs->njobs ? jobs : NULL;
	no.traffic = demand.loaded ? &demand.traffic : NULL;
	no.traffic_floor = demand.own_jobs ? 0 : 1;
	no.layers = layers;
	ret = nue_keep_dmodk(f, o, &no, r, res, err);
	if (ret) {
		ret = ret < 0 ? -1 : 0;
		goto out;
	}
	ret = -1;
	if (nue_route(f, &no, r, &rep, err))
		goto out;
	engine_nue_summary(&rep, res);
	ret = 0;
out:
	free(layers);
	job_map_free(&tmp);
	engine_demand_free(&demand);
	return ret;
}

/* One routing of every LID by the named engine; vls 0: what the engine would use. */
static int run_plain(const char *name, const struct fabric *f, const struct sarnue_options *o,
		     struct engine_ctx *ctx, unsigned vls, struct routing *r,
		     struct engine_result *res, struct fab_error *err)
{
	/* The switches no longer hold a kept escape plane's entries. */
	if (ctx)
		escape_plane_free(&ctx->escape);
	if (!strcmp(name, "sar-nue"))
		return run_nue(f, o, ctx, vls ? vls : nue_layers(o, ctx, res), r, res, err);
	if (!strcmp(name, "sar-dfsssp"))
		return run_dfsssp(f, o, ctx, vls ? vls : dfsssp_vls(f, o, ctx, res), r, res, err);
	if (!strcmp(name, "sar-dmodk"))
		return run_dmodk(f, o, r, res, err);
	return run_updn(f, o, r, res, err);
}

/* Why two planes cannot be routed (a warning; the engine then routes plainly), or NULL. */
static const char *no_planes_reason(const char *name, const struct fabric *f, unsigned n)
{
	if (!strcmp(name, "sar-updn") || !strcmp(name, "sar-dmodk"))
		return "planes=on needs sar-dfsssp or sar-nue; sar-updn and sar-dmodk route every "
		       "LID on one VL";
	if (fabric_min_end_lmc(f) < 1)
		return "planes=on needs LMC 1 or more on every end port (OpenSM's lmc); routing "
		       "without planes";
	if (n < 2)
		return "planes=on needs 2 or more VLs (one for the escape plane; with qos FALSE "
		       "or nue_vls=1 there is one); routing without planes";
	return NULL;
}

static void planes_summary(struct engine_result *w, const struct escape_plane *e, const char *why)
{
	char base[sizeof(w->summary)];
	size_t used;

	snprintf(base, sizeof(base), "%s", w->summary);
	used = (size_t)snprintf(w->summary, sizeof(w->summary),
				"2 planes: base LIDs on VL%s 0..%u, high LIDs by %s on VL %u (%s",
				w->plane_vls > 2 ? "s" : "", w->plane_vls - 2, e->engine, e->vl,
				why);
	if (e->max_efi && used < sizeof(w->summary))
		used += (size_t)snprintf(w->summary + used, sizeof(w->summary) - used,
					 ", max EFI %llu", (unsigned long long)e->max_efi);
	if (e->other_max_efi && used < sizeof(w->summary))
		used += (size_t)snprintf(w->summary + used, sizeof(w->summary) - used,
					 " against %llu of %s",
					 (unsigned long long)e->other_max_efi,
					 strcmp(e->engine, "sar-updn") ? "sar-updn" : "sar-nue");
	if (used < sizeof(w->summary))
		snprintf(w->summary + used, sizeof(w->summary) - used, "); base: %.400s", base);
}

/*
 * Two planes (planes.h): the base LIDs by the engine on n-1 VLs, the high LIDs by the escape
 * routing on VL n-1, kept from the last routing while the topology is the same.
 */
static int run_planes(const char *name, const struct fabric *f, const struct sarnue_options *o,
		      struct engine_ctx *ctx, struct routing *r, struct engine_result *res,
		      struct fab_error *err)
{
	int dfsssp = !strcmp(name, "sar-dfsssp");
	unsigned n = !strcmp(name, "sar-updn") || !strcmp(name, "sar-dmodk") ? 1
		     : dfsssp ? dfsssp_vls(f, o, ctx, res)
			      : nue_layers(o, ctx, res);
	const char *reason = no_planes_reason(name, f, n), *why = "computed";
	struct escape_plane local, *e = ctx ? &ctx->escape : &local;
	struct fabric view;
	struct routing br;
	uint64_t fp;
	int rc = -1;

	if (reason) {
		engine_warn(res, "%s", reason);
		return run_plain(name, f, o, ctx, n, r, res, err);
	}
	/* One VL at least for the base plane, and the escape VL below 16. */
	sn_assert(n >= 2 && n <= ROUTING_MAX_SL);
	escape_plane_init(&local);
	if (fabric_plane_view(f, FAB_PLANE_BASE, &view)) {
		fab_error_set(err, "out of memory");
		return -1;
	}
	if (routing_init(&br, &view, name)) {
		fabric_plane_view_free(&view);
		fab_error_set(err, "out of memory");
		return -1;
	}
	rc = dfsssp ? run_dfsssp(&view, o, ctx, n - 1, &br, res, err)
		    : run_nue(&view, o, ctx, n - 1, &br, res, err);
	if (rc)
		goto out;
	rc = -1;
	fp = fabric_fingerprint(f);
	if (escape_plane_matches(e, fp, o, n - 1)) {
		why = "kept: same topology";
		res->escape_reused = 1;
	} else {
		if (e->valid)
			why = e->fingerprint != fp ? "computed: topology changed"
						   : "computed: escape options or VLs changed";
		if (escape_plane_route(f, fp, o, n - 1, e, err))
			goto out;
	}
	if (planes_merge(f, &br, e, r, err))
		goto out;
	res->planes = 1;
	res->plane_vls = n;
	res->fingerprint = fp;
	snprintf(res->escape_engine, sizeof(res->escape_engine), "%s", e->engine);
	planes_summary(res, e, why);
	rc = 0;
out:
	routing_free(&br);
	fabric_plane_view_free(&view);
	if (e == &local)
		escape_plane_free(&local);
	return rc;
}

/* With a feed, the checks may have run beside the routing: then only its end is waited for. */
static int verify_result(const struct fabric *f, const struct routing *r, struct verify_feed *feed,
			 const struct progress_hook *progress, struct engine_result *res,
			 struct fab_error *err)
{
	double t0 = sn_now();
	const struct verify_report *v = &res->verify;
	int rc;

	/* An engine that had to verify its final tables already (sar-updn's turns) says so. */
	if (!res->verified) {
		rc = feed ? verify_feed_report_progress(feed, &res->verify, &res->verify_streamed,
							progress)
			  : verify_routing_progress(f, r, &res->verify, progress);
		if (rc) {
			fab_error_set(err, "verifier ran out of memory");
			return -1;
		}
		res->verify_seconds = sn_now() - t0;
		res->verified = 1;
	}
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

/* quality=yes: the EFI of tables that verified, for status, metrics and route --json. */
static void measure_quality(const struct fabric *f, const struct routing *r,
			    struct engine_result *res)
{
	struct metrics_options mo;
	struct metrics_efi e;
	double t0 = sn_now();

	metrics_options_default(&mo);
	if (metrics_efi(f, r, &mo, &e))
		return;
	res->quality_known = 1;
	res->efi_max = e.dist.max;
	res->efi_mean = e.dist.mean;
	res->channels = e.nchannels;
	res->dark_channels = e.dist.zero;
	res->quality_seconds = sn_now() - t0;
	metrics_efi_free(&e);
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
	struct cpu_gate *spare_cpu = ctx ? ctx->spare_cpu : NULL;
	struct verify_feed *feed = NULL;
	double t0 = sn_now();
	int rc;

	memset(res, 0, sizeof(*res));
	/* Only sar-nue routing plainly says when it is done with the second CPU. */
	if (o->planes || strcmp(name, "sar-nue"))
		cpu_gate_open(spare_cpu);
	if (check_link_vls(f, err))
		goto failed;
	if (!engine_known(name)) {
		fab_error_set(err, "unknown engine '%s'", name);
		goto failed;
	}
	/*
	 * Engines that know when columns are final get checked meanwhile.  Only sar-nue on one
	 * layer promises any, so its thread option decides: nue_threads=1 keeps it on one thread.
	 * With planes the engines route a routing of their own, which the feed does not watch.
	 */
	if (o->verify && !o->planes && o->nue_threads != 1)
		feed = verify_feed_attach(f, r);
	progress_note(o->progress, "routing");
	rc = o->planes ? run_planes(name, f, o, ctx, r, res, err)
		       : run_plain(name, f, o, ctx, 0, r, res, err);
	cpu_gate_open(spare_cpu);
	res->route_seconds = sn_now() - t0;
	/* Time the engine spent verifying its own final tables is verification time. */
	if (res->verified && res->route_seconds > res->verify_seconds)
		res->route_seconds -= res->verify_seconds;
	if (!rc && !res->fingerprint)
		res->fingerprint = fabric_fingerprint(f);
	if (!rc && o->verify) {
		progress_note(o->progress, "verifying");
		rc = verify_result(f, r, feed, o->progress, res, err);
	}
	if (!rc && o->verify && o->quality) {
		progress_note(o->progress, "edge forwarding index");
		measure_quality(f, r, res);
	}
	verify_feed_detach(feed);
	/*
	 * A routing OpenSM will not program leaves the switches without the kept escape plane, and
	 * its columns are not what the switches hold: the next incremental reroute keeps none.
	 */
	if (rc && ctx) {
		escape_plane_free(&ctx->escape);
		dfsssp_memo_free(&ctx->dfsssp_memo);
	}
	return rc ? -1 : 0;
failed:
	cpu_gate_open(spare_cpu);
	return -1;
}
