/*
 * engines_glue.c - sarnue's routing engines as OpenSM routing engines.
 *
 * build_lid_matrices converts the subnet, runs the engine through engine_run() (the same call
 * `sarnue route` makes) and stores hop counts; only verified tables get that far.  Any failure
 * returns -1, so OpenSM moves on to the next engine of `routing_engine`.
 * ucast_build_fwd_tables copies the LFTs into OpenSM's new_lft and writes the SL dumps;
 * path_sl and update_sl2vl answer from the stored tables.  Each engine also keeps an engine_ctx
 * across routings: the last job map that parsed, so that a malformed new one changes nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <opensm/osm_config.h> /* first: see context.h */
#include <opensm/osm_switch.h>

#include "engines/engines.h"
#include "fabric/fabric.h"
#include "fabric/loaders.h"
#include "fabric/routing.h"
#include "lib/assert.h"
#include "lib/progress.h"
#include "lib/threads.h"
#include "plugin/context.h"
#include "plugin/ctl.h"
#include "plugin/engines_glue.h"
#include "plugin/log.h"
#include "plugin/mcast_glue.h"
#include "plugin/perfmgr.h"
#include "plugin/subnet.h"
#include "plugin/update.h"

/*
 * One engine's state in the plugin: the last fabric model and routing tables that OpenSM's
 * callbacks (path_sl, update_sl2vl) answer from.
 */
struct sarnue_engine {
	struct sarnue_plugin *plugin;
	const char *name;
	struct fabric fabric;
	struct routing routing;
	osm_switch_t **osm_switches; /* [fabric.nswitches]: OpenSM's switch for each model switch */
	int ready;		     /* routing holds verified tables for the current sweep */
	/* Tables a five-phase update announced, waiting for the hosts (update.h). */
	struct routing pending;
	int have_pending;
	unsigned routings;	/* successful runs, for the log */
	unsigned dumped;	/* value of routings when the dumps were last written */
	struct mcast_state *mc; /* the multicast trees built for this routing */
};

/* An engine's OpenSM context: the plugin's engine state plus what engine_run_ctx() keeps. */
struct glue_engine {
	struct sarnue_engine e; /* first: OpenSM's context pointer is also &e */
	struct engine_ctx ctx;
	struct engine_result pending_res; /* of the tables an update announced */
};

static void drop_pending(struct sarnue_engine *e)
{
	if (!e->have_pending)
		return;
	routing_free(&e->pending);
	e->have_pending = 0;
}

static void engine_reset(struct sarnue_engine *e)
{
	drop_pending(e);
	mcast_state_reset(e->mc);
	routing_free(&e->routing);
	fabric_free(&e->fabric);
	free(e->osm_switches);
	e->osm_switches = NULL;
	e->ready = 0;
}

static int map_switches(struct sarnue_engine *e, osm_subn_t *subn, struct fab_error *err)
{
	const struct fabric *f = &e->fabric;
	uint32_t i;

	e->osm_switches = calloc(f->nswitches + 1, sizeof(*e->osm_switches));
	if (!e->osm_switches) {
		fab_error_set(err, "out of memory");
		return -1;
	}
	for (i = 0; i < f->nswitches; i++) {
		uint64_t guid = f->nodes[f->switches[i]].guid;

		e->osm_switches[i] = osm_get_switch_by_guid(subn, cl_hton64(guid));
		if (!e->osm_switches[i]) {
			fab_error_set(err, "switch 0x%016llx vanished from OpenSM's table",
				      (unsigned long long)guid);
			return -1;
		}
	}
	return 0;
}

static void store_hops(struct sarnue_engine *e)
{
	uint32_t i, lid;

	for (i = 0; i < e->fabric.nswitches; i++) {
		osm_switch_t *sw = e->osm_switches[i];
		const uint8_t *lft = routing_lft(&e->routing, i);
		const uint8_t *hops = routing_hops(&e->routing, i);

		sn_assert(sw); /* map_switches found every switch of the model */
		for (lid = 1; lid <= e->fabric.max_lid && lid <= sw->max_lid_ho; lid++)
			if (lft[lid] != FAB_NO_PORT)
				osm_switch_set_hops(sw, (uint16_t)lid, lft[lid], hops[lid]);
	}
}

/*
 * OpenSM allocates a switch's hop row for a LID at the first osm_switch_set_hops() of that LID:
 * one small malloc per switch and LID, 58,320 for the 108 switches and 540 LIDs of a Kautz
 * graph, as long as a tenth of routing it.  They happen on the first routing of a subnet (later
 * sweeps clear the rows and keep them), on OpenSM's sweep thread, which waits for the routing
 * anyway.  So while the engine routes on the fabric model, a helper thread on the other CPU
 * allocates the rows store_hops will fill: each is all OSM_NO_PATH, just what OpenSM leaves in
 * a row it clears, so a routing that fails leaves nothing wrong behind.  Nothing else touches
 * the switches meanwhile: OpenSM's sweep thread is inside build_lid_matrices, holding the
 * subnet lock, and the engine reads only the model.
 *
 * The helper waits at a gate until the engine no longer needs the other CPU for threads of its
 * own (sar-nue's second destination order, its second candidate with more VLs).  Started at
 * once, it took 3 to 8 ms of that CPU from the second order's first pass on the Kautz graph, and
 * the routing waited that long for it.
 */
struct hop_rows {
	osm_subn_t *subn;
	const struct fabric *f; /* read only, as the engine does */
	struct cpu_gate gate;
	pthread_t thread;
	int running, gated;
};

static void *alloc_hop_rows(void *arg)
{
	struct hop_rows *h = arg;
	cl_map_item_t *it;
	uint32_t lid;

	cpu_gate_wait(&h->gate);
	for (it = cl_qmap_head(&h->subn->sw_guid_tbl); it != cl_qmap_end(&h->subn->sw_guid_tbl);
	     it = cl_qmap_next(it)) {
		osm_switch_t *sw = (osm_switch_t *)it;

		for (lid = 1; lid <= h->f->max_lid && lid <= sw->max_lid_ho; lid++)
			if (h->f->lid_port[lid] != FAB_NONE && !sw->hops[lid])
				osm_switch_set_hops(sw, (uint16_t)lid, 0, OSM_NO_PATH);
	}
	return NULL;
}

/*
 * Without a second CPU store_hops allocates the rows itself, as OpenSM's engines do.  The
 * engine opens the gate it gets through its context (NULL when there is no helper).
 */
static struct cpu_gate *hop_rows_start(struct hop_rows *h, osm_subn_t *subn, const struct fabric *f)
{
	h->subn = subn;
	h->f = f;
	h->running = 0;
	h->gated = cpu_gate_init(&h->gate) == 0;
	if (!h->gated)
		return NULL;
	h->running = thread_start_beside(&h->thread, alloc_hop_rows, h) == 0;
	return h->running ? &h->gate : NULL;
}

static void hop_rows_wait(struct hop_rows *h)
{
	if (h->running) {
		/* Whatever the engine did: the helper must not wait any longer. */
		cpu_gate_open(&h->gate);
		pthread_join(h->thread, NULL);
	}
	if (h->gated)
		cpu_gate_destroy(&h->gate);
	h->running = h->gated = 0;
}

/* Fails this routing: OpenSM moves on to the next engine of routing_engine. */
static int routing_failed(struct sarnue_engine *e, const char *msg)
{
	struct sarnue_plugin *p = e->plugin;

	plog(p, OSM_LOG_ERROR, "ERR %s: %s; OpenSM falls back to the next routing engine", e->name,
	     msg[0] ? msg : "out of memory");
	ctl_note_failure(p, e->name, msg[0] ? msg : "out of memory");
	engine_reset(e);
	return -1;
}

/*
 * One "WRN" line per warning.  OpenSM has no warning level: INFO is on by default
 * (log_flags 0x03) and keeps ERROR for what failed.
 */
static void log_warnings(struct sarnue_plugin *p, const char *engine, const char *warnings)
{
	const char *s = warnings, *line;
	int len;

	while ((line = engine_warning_next(&s, &len)))
		plog(p, OSM_LOG_INFO, "WRN %s: %.*s", engine, len, line);
}

static void log_routed(struct sarnue_engine *e, const struct engine_result *res)
{
	char quality[160] = "";

	if (res->quality_known)
		snprintf(quality, sizeof(quality),
			 "; max EFI %llu, mean %.1f, %u of %u channels unused (%.3f s)",
			 (unsigned long long)res->efi_max, res->efi_mean, res->dark_channels,
			 res->channels, res->quality_seconds);
	plog(e->plugin, OSM_LOG_INFO,
	     "%s: routed %u switches, %u LIDs in %.3f s (%s %.3f s: %llu pairs, 0 unreachable,"
	     " 0 credit loops, %u VL, max hops %u)%s; %s",
	     e->name, e->fabric.nswitches, e->fabric.max_lid, res->route_seconds,
	     res->verify_streamed ? "verified beside the routing, then" : "verify",
	     res->verify_seconds, (unsigned long long)res->verify.pairs,
	     verify_count_bits(res->verify.vls_used), res->verify.max_hops, quality, res->summary);
	if (res->incremental[0])
		plog(e->plugin, OSM_LOG_INFO, "%s: %s", e->name, res->incremental);
}

/*
 * An update is running and the fabric did not change: program the tables the switches hold
 * (KEEP) or the ones the update announced (ADOPT), never anything else.
 */
static int reuse_tables(struct glue_engine *g, enum update_decision d)
{
	struct sarnue_engine *e = &g->e;
	struct sarnue_plugin *p = e->plugin;
	struct fab_error err = { "" };

	if (d == UPDATE_ADOPT) {
		routing_free(&e->routing);
		e->routing = e->pending;
		memset(&e->pending, 0, sizeof(e->pending));
		e->have_pending = 0;
	}
	free(e->osm_switches);
	e->osm_switches = NULL;
	if (map_switches(e, &p->osm->subn, &err))
		return routing_failed(e, err.msg);
	store_hops(e);
	e->ready = 1;
	if (d == UPDATE_ADOPT) {
		e->routings++;
		update_adopted(p);
		ctl_note_routing(p, e->name, &e->fabric, &g->pending_res);
		log_routed(e, &g->pending_res);
		plog(p, OSM_LOG_INFO, "%s: programming the tables the update announced", e->name);
	} else {
		plog(p, OSM_LOG_INFO,
		     "%s: keeping the programmed tables while an update waits for the hosts",
		     e->name);
	}
	return 0;
}

/*
 * A fresh routing of the fabric the switches are programmed for differs from their tables:
 * hand it to a five-phase update (the switches keep their tables for now).  Returns 1 when
 * handed over, 0 when it should go out at once.
 */
static int announce(struct glue_engine *g, struct routing *fresh, const struct engine_result *res)
{
	struct sarnue_engine *e = &g->e;
	struct sarnue_plugin *p = e->plugin;
	struct routing_lid_range ranges[WIRE_MAX_RANGES];
	uint32_t changed;
	uint8_t lmc = 0;
	uint32_t i;
	int n;

	if (!update_wanted(p, res->planes))
		return 0;
	n = routing_changed_lids(&e->routing, fresh, ranges, WIRE_MAX_RANGES, &changed);
	if (n <= 0)
		return 0; /* identical tables: nothing to announce */
	sn_assert(n <= WIRE_MAX_RANGES);
	for (i = 0; i < e->fabric.nports; i++)
		if (!fabric_is_switch(&e->fabric, e->fabric.ports[i].node) &&
		    e->fabric.ports[i].lmc > lmc)
			lmc = e->fabric.ports[i].lmc;
	drop_pending(e);
	e->pending = *fresh;
	e->have_pending = 1;
	g->pending_res = *res;
	update_start(p, lmc, ranges, (unsigned)n, changed);
	return 1;
}

/* A progress line of a long routing, at OpenSM's INFO level. */
static void log_progress(void *ctx, const char *line)
{
	plog(ctx, OSM_LOG_INFO, "%s", line);
}

/*
 * The phases of a routing that lasts over 2 s, in OpenSM's log: where it stands at most every
 * 5 s, and each long phase's time once it is over, so an operator watching a large fabric
 * knows the SM is busy routing rather than hung.
 */
static void progress_start(struct sarnue_engine *e, struct progress *progress,
			   struct progress_hook *hook)
{
	struct progress_config c = {
		.prefix = e->name,
		.style = PROGRESS_LINES,
		.sink = log_progress,
		.sink_ctx = e->plugin,
		.after = 2.0,
		.every = 5.0,
	};

	progress_init(progress, &c);
	progress_hook_init(hook, progress_update, progress);
}

/* Routes nf (which the engine takes over) with the engine and installs or announces it. */
static int route_fresh(struct glue_engine *g, struct fabric *nf, int same_topology)
{
	struct sarnue_engine *e = &g->e;
	struct sarnue_plugin *p = e->plugin;
	struct sarnue_options opts = p->opts;
	struct engine_result res;
	struct fab_error err = { "" };
	struct routing fresh;
	struct hop_rows rows;
	struct progress progress;
	struct progress_hook hook;
	struct traffic_counter *counters = NULL;
	size_t ncounters = 0;
	int rc;

	progress_start(e, &progress, &hook);
	opts.progress = &hook;
	ctl_job_map_path(p, opts.job_map, sizeof(opts.job_map), opts.job_map_name,
			 sizeof(opts.job_map_name));
	memset(&res, 0, sizeof(res));
	memset(&fresh, 0, sizeof(fresh));
	/* Without qos OpenSM never calls update_sl2vl: only VL 0 is certain. */
	g->ctx.sl2vl_off = !p->osm->subn.opt.qos;
	perfmgr_counters(p, &counters, &ncounters);
	g->ctx.counters = counters;
	g->ctx.ncounters = ncounters;
	g->ctx.spare_cpu = hop_rows_start(&rows, &p->osm->subn, nf);
	rc = routing_init(&fresh, nf, e->name) ||
	     engine_run_ctx(e->name, nf, &opts, &g->ctx, &fresh, &res, &err);
	progress_end(&progress);
	g->ctx.spare_cpu = NULL;
	g->ctx.counters = NULL;
	g->ctx.ncounters = 0;
	free(counters);
	hop_rows_wait(&rows);
	if (res.traffic[0]) {
		plog(p, OSM_LOG_INFO, "%s: %s", e->name, res.traffic);
		perfmgr_note_estimate(p, res.traffic);
	}
	log_warnings(p, e->name, res.warning);
	if (rc) {
		routing_free(&fresh);
		fabric_free(nf);
		return routing_failed(e, err.msg);
	}
	if (same_topology && e->ready && announce(g, &fresh, &res)) {
		fabric_free(nf);
		return reuse_tables(g, UPDATE_KEEP);
	}
	engine_reset(e);
	e->fabric = *nf;
	e->routing = fresh;
	if (map_switches(e, &p->osm->subn, &err))
		return routing_failed(e, err.msg);
	store_hops(e);
	e->ready = 1;
	e->routings++;
	ctl_note_routing(p, e->name, &e->fabric, &res);
	log_routed(e, &res);
	return 0;
}

static int build_lid_matrices(void *context)
{
	struct glue_engine *g = context;
	struct sarnue_engine *e = &g->e;
	struct sarnue_plugin *p = e->plugin;
	struct fab_error err = { "" };
	enum update_decision d;
	struct fabric nf;
	int same;

	ctl_note_routing_started(p);
	/* OpenSM rebuilds every multicast tree after a routing; the old ones fit the old routes. */
	mcast_state_reset(e->mc);
	ctl_note_mcast(p, 0, 0);
	fabric_init(&nf);
	if (subnet_to_fabric(&p->osm->subn, &nf, &err)) {
		fabric_free(&nf);
		return routing_failed(e, err.msg);
	}
	same = e->ready && fabric_same_topology(&e->fabric, &nf);
	d = update_on_routing(p, same);
	if (e->have_pending && !update_keeps_pending(p) && d != UPDATE_ADOPT)
		drop_pending(e); /* the update ended or was aborted */
	if (d != UPDATE_ROUTE) {
		fabric_free(&nf);
		return reuse_tables(g, d);
	}
	return route_fresh(g, &nf, same);
}

static int want_dumps(const struct sarnue_plugin *p)
{
	if (p->opts.dump == OPT_DUMP_ALWAYS)
		return 1;
	return p->opts.dump == OPT_DUMP_AUTO && (p->osm->log.level & OSM_LOG_ROUTING);
}

static void write_dumps(struct sarnue_engine *e)
{
	struct sarnue_plugin *p = e->plugin;
	const char *dir = p->osm->subn.opt.dump_files_dir;
	struct dump_opts o = { .set = DUMP_SLS, .path_sl = options_path_sl_form(&p->opts) };
	char path[4096];

	if (!want_dumps(p) || !dir)
		return;
	e->dumped = e->routings;
	if (routing_write_dumps_opts(dir, &e->fabric, &e->routing, &o, path, sizeof(path)))
		plog(p, OSM_LOG_ERROR, "ERR cannot write %s: %s", path, strerror(errno));
}

/*
 * 64-LID blocks of sw whose new entries differ from what OpenSM last wrote to the switch: the
 * blocks OpenSM sends (osm_ucast_mgr.c skips equal ones unless a full update is forced).
 */
static unsigned changed_blocks(const osm_switch_t *sw, uint32_t max_lid)
{
	unsigned b, n = 0;

	for (b = 0; b * IB_SMP_DATA_SIZE <= max_lid; b++) {
		/* OpenSM sizes both tables in whole blocks up to the switch's top LID. */
		sn_assert((b + 1) * IB_SMP_DATA_SIZE <= sw->lft_size);
		n += memcmp(sw->new_lft + b * IB_SMP_DATA_SIZE, sw->lft + b * IB_SMP_DATA_SIZE,
			    IB_SMP_DATA_SIZE) != 0;
	}
	return n;
}

static int build_fwd_tables(void *context)
{
	struct sarnue_engine *e = context;
	struct sarnue_plugin *p = e->plugin;
	unsigned blocks = 0, switches = 0, n;
	uint32_t i, lid;

	if (!e->ready)
		return -1;
	for (i = 0; i < e->fabric.nswitches; i++) {
		osm_switch_t *sw = e->osm_switches[i];
		const uint8_t *lft = routing_lft(&e->routing, i);

		sn_assert(sw && sw->new_lft);
		for (lid = 0; lid <= e->fabric.max_lid && lid <= sw->max_lid_ho; lid++) {
			sw->new_lft[lid] = lft[lid];
			if (lid && lft[lid] != FAB_NO_PORT && lft[lid] != 0)
				osm_switch_count_path(sw, lft[lid]);
		}
		n = sw->lft ? changed_blocks(sw, sw->max_lid_ho) : 0;
		blocks += n;
		switches += n > 0;
	}
	sn_assert(switches <= e->fabric.nswitches && switches <= blocks);
	p->lft_blocks_changed = blocks;
	p->lft_switches_changed = switches;
	plog(p, OSM_LOG_INFO, "%s: %u LFT block(s) of 64 LIDs differ on %u of %u switch(es)",
	     e->name, blocks, switches, e->fabric.nswitches);
	/*
	 * A routing that kept the programmed tables (an update waits) has them on disk already;
	 * dumping them again would hold up OpenSM's thread, and phase 3 behind it, for nothing.
	 */
	if (e->dumped != e->routings)
		p->dumps_pending = e;
	return 0;
}

static uint8_t path_sl(void *context, uint8_t hint, const ib_net16_t slid, const ib_net16_t dlid)
{
	struct sarnue_engine *e = context;

	if (!e->ready)
		return hint;
	return routing_path_sl(&e->routing, cl_ntoh16(slid), cl_ntoh16(dlid));
}

static void update_sl2vl(void *context, osm_physp_t *port, uint8_t in_port, uint8_t out_port,
			 ib_slvl_table_t *t)
{
	struct sarnue_engine *e = context;
	osm_node_t *node = osm_physp_get_node_ptr(port);
	uint32_t sw = FAB_NONE;
	unsigned sl;

	if (!e->ready)
		return;
	if (osm_node_get_type(node) == IB_NODE_TYPE_SWITCH)
		sw = fabric_switch_by_guid(&e->fabric, cl_ntoh64(osm_node_get_node_guid(node)));
	/* End ports get the uniform map: what they send on an SL must match the switches. */
	for (sl = 0; sl < IB_MAX_NUM_VLS; sl++)
		ib_slvl_table_set(t, (uint8_t)sl,
				  sw == FAB_NONE
					  ? e->routing.sl2vl_uniform[sl]
					  : routing_sl2vl(&e->routing, sw, in_port, out_port, sl));
}

static ib_api_status_t mcast_build_stree(void *context, osm_mgrp_box_t *mbox)
{
	struct sarnue_engine *e = context;

	if (!e->ready) {
		plog(e->plugin, OSM_LOG_ERROR,
		     "ERR %s: multicast MLID 0x%04x: no routing to fit a tree to", e->name,
		     mbox->mlid);
		return IB_ERROR;
	}
	return mcast_glue_build(e->plugin, e->name, e->mc, &e->fabric, &e->routing, e->osm_switches,
				mbox);
}

void engines_write_pending_dumps(struct sarnue_plugin *p)
{
	/* A routing that was reset since (a failed sweep) has nothing left to dump. */
	if (!p->dumps_pending || !p->dumps_pending->ready)
		return;
	write_dumps(p->dumps_pending);
	p->dumps_pending = NULL;
}

static void engine_destroy(void *context)
{
	struct glue_engine *g = context;

	if (g->e.plugin->dumps_pending == &g->e)
		g->e.plugin->dumps_pending = NULL;
	engine_reset(&g->e);
	mcast_state_free(g->e.mc);
	engine_ctx_free(&g->ctx);
	free(g);
}

static int setup_engine(struct osm_routing_engine *re, osm_opensm_t *osm, const char *name,
			int spread_mcast)
{
	struct sarnue_plugin *p = re->context;
	struct glue_engine *g = calloc(1, sizeof(*g));
	struct sarnue_engine *e;

	(void)osm;
	if (!g)
		return -1;
	e = &g->e;
	e->mc = mcast_state_new(spread_mcast);
	if (!e->mc) {
		free(g);
		return -1;
	}
	engine_ctx_init(&g->ctx);
	e->plugin = p;
	e->name = name;
	re->context = g;
	re->build_lid_matrices = build_lid_matrices;
	re->ucast_build_fwd_tables = build_fwd_tables;
	re->path_sl = path_sl;
	re->update_sl2vl = update_sl2vl;
	/* Options are read when the plugin loads, before OpenSM sets up the engines. */
	if (!p->opts.mcast_opensm)
		re->mcast_build_stree = mcast_build_stree;
	re->destroy = engine_destroy;
	return 0;
}

static int setup_updn(struct osm_routing_engine *re, osm_opensm_t *osm)
{
	return setup_engine(re, osm, "sar-updn", 1);
}

static int setup_nue(struct osm_routing_engine *re, osm_opensm_t *osm)
{
	return setup_engine(re, osm, "sar-nue", 0);
}

static int setup_dfsssp(struct osm_routing_engine *re, osm_opensm_t *osm)
{
	return setup_engine(re, osm, "sar-dfsssp", 0);
}

static int setup_dmodk(struct osm_routing_engine *re, osm_opensm_t *osm)
{
	return setup_engine(re, osm, "sar-dmodk", 1);
}

int engines_register(struct sarnue_plugin *p)
{
	static const external_routing_engine_module_t modules[] = {
		{ "sar-updn", setup_updn, NULL },
		{ "sar-nue", setup_nue, NULL },
		{ "sar-dfsssp", setup_dfsssp, NULL },
		{ "sar-dmodk", setup_dmodk, NULL },
	};
	unsigned i;

	for (i = 0; i < sizeof(modules) / sizeof(modules[0]); i++)
		if (osm_register_external_routing_engine(p->osm, &modules[i], p) != CL_SUCCESS)
			return -1;
	return 0;
}
