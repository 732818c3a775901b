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

#include <opensm/osm_config.h> /* first: see plugin.h */
#include <opensm/osm_switch.h>

#include "engines.h"
#include "loaders.h"
#include "plugin.h"

/* An engine's OpenSM context: the plugin's engine state plus what engine_run_ctx() keeps. */
struct glue_engine {
	struct sarnue_engine e; /* first: OpenSM's context pointer is also &e */
	struct engine_ctx ctx;
};

static void engine_reset(struct sarnue_engine *e)
{
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

		for (lid = 1; lid <= e->fabric.max_lid && lid <= sw->max_lid_ho; lid++)
			if (lft[lid] != FAB_NO_PORT)
				osm_switch_set_hops(sw, (uint16_t)lid, lft[lid], hops[lid]);
	}
}

static int build_lid_matrices(void *context)
{
	struct glue_engine *g = context;
	struct sarnue_engine *e = &g->e;
	struct sarnue_plugin *p = e->plugin;
	osm_subn_t *subn = &p->osm->subn;
	struct sarnue_options opts = p->opts;
	struct engine_result res;
	struct fab_error err = { "" };
	int rc;

	ctl_note_routing_started(p);
	ctl_job_map_path(p, opts.job_map, sizeof(opts.job_map));
	engine_reset(e);
	memset(&res, 0, sizeof(res));
	/* Without qos OpenSM never calls update_sl2vl: only VL 0 is certain. */
	g->ctx.sl2vl_off = !subn->opt.qos;
	rc = subnet_to_fabric(subn, &e->fabric, &err) ||
	     routing_init(&e->routing, &e->fabric, e->name) || map_switches(e, subn, &err) ||
	     engine_run_ctx(e->name, &e->fabric, &opts, &g->ctx, &e->routing, &res, &err);
	if (res.warning[0])
		plog(p, OSM_LOG_ERROR, "WRN %s: %s", e->name, res.warning);
	if (rc) {
		plog(p, OSM_LOG_ERROR, "ERR %s: %s; OpenSM falls back to the next routing engine",
		     e->name, err.msg[0] ? err.msg : "out of memory");
		ctl_note_failure(p, e->name, err.msg[0] ? err.msg : "out of memory");
		engine_reset(e);
		return -1;
	}
	store_hops(e);
	e->ready = 1;
	e->routings++;
	ctl_note_routing(p, e->name, &e->fabric, &res);
	plog(p, OSM_LOG_INFO,
	     "%s: routed %u switches, %u LIDs in %.3f s (verify %.3f s: %llu pairs, 0 unreachable,"
	     " 0 credit loops, %u VL, max hops %u); %s",
	     e->name, e->fabric.nswitches, e->fabric.max_lid, res.route_seconds, res.verify_seconds,
	     (unsigned long long)res.verify.pairs, verify_count_bits(res.verify.vls_used),
	     res.verify.max_hops, res.summary);
	return 0;
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
	char path[4096];

	if (!want_dumps(p) || !dir)
		return;
	if (routing_write_dumps(dir, &e->fabric, &e->routing, DUMP_SLS, path, sizeof(path)))
		plog(p, OSM_LOG_ERROR, "ERR cannot write %s: %s", path, strerror(errno));
}

static int build_fwd_tables(void *context)
{
	struct sarnue_engine *e = context;
	uint32_t i, lid;

	if (!e->ready)
		return -1;
	for (i = 0; i < e->fabric.nswitches; i++) {
		osm_switch_t *sw = e->osm_switches[i];
		const uint8_t *lft = routing_lft(&e->routing, i);

		for (lid = 0; lid <= e->fabric.max_lid && lid <= sw->max_lid_ho; lid++) {
			sw->new_lft[lid] = lft[lid];
			if (lid && lft[lid] != FAB_NO_PORT && lft[lid] != 0)
				osm_switch_count_path(sw, lft[lid]);
		}
	}
	e->plugin->dumps_pending = e;
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
	engine_ctx_free(&g->ctx);
	free(g);
}

static int setup_engine(struct osm_routing_engine *re, osm_opensm_t *osm, const char *name)
{
	struct sarnue_plugin *p = re->context;
	struct glue_engine *g = calloc(1, sizeof(*g));
	struct sarnue_engine *e;

	(void)osm;
	if (!g)
		return -1;
	e = &g->e;
	engine_ctx_init(&g->ctx);
	e->plugin = p;
	e->name = name;
	re->context = g;
	re->build_lid_matrices = build_lid_matrices;
	re->ucast_build_fwd_tables = build_fwd_tables;
	re->path_sl = path_sl;
	re->update_sl2vl = update_sl2vl;
	re->destroy = engine_destroy;
	return 0;
}

static int setup_updn(struct osm_routing_engine *re, osm_opensm_t *osm)
{
	return setup_engine(re, osm, "sar-updn");
}

static int setup_nue(struct osm_routing_engine *re, osm_opensm_t *osm)
{
	return setup_engine(re, osm, "sar-nue");
}

static int setup_dfsssp(struct osm_routing_engine *re, osm_opensm_t *osm)
{
	return setup_engine(re, osm, "sar-dfsssp");
}

int engines_register(struct sarnue_plugin *p)
{
	static const external_routing_engine_module_t modules[] = {
		{ "sar-updn", setup_updn, NULL },
		{ "sar-nue", setup_nue, NULL },
		{ "sar-dfsssp", setup_dfsssp, NULL },
	};
	unsigned i;

	for (i = 0; i < sizeof(modules) / sizeof(modules[0]); i++)
		if (osm_register_external_routing_engine(p->osm, &modules[i], p) != CL_SUCCESS)
			return -1;
	return 0;
}
