/*
 * plugin.c - the OpenSM event plugin entry point of libsarnue.so.
 *
 * `event_plugin_name sarnue` makes OpenSM dlopen this library and call create(), before it
 * parses `routing_engine`; create() reads event_plugin_options and registers sarnue's routing
 * engines, which `routing_engine sar-updn,minhop` then selects like any built-in one.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <opensm/osm_config.h> /* first: see context.h */
#include <opensm/osm_event_plugin.h>
#include <opensm/osm_version.h>

#include "plugin/context.h"
#include "plugin/ctl.h"
#include "plugin/engines_glue.h"
#include "plugin/log.h"
#include "plugin/mcast_glue.h"
#include "plugin/notify.h"
#include "plugin/perfmgr.h"
#include "plugin/update.h"

static void option_error(void *ctx, const char *msg)
{
	struct sarnue_plugin *p = ctx;

	p->option_errors++;
	plog(p, OSM_LOG_ERROR, "ERR option %s", msg);
}

static void *sarnue_create(osm_opensm_t *osm)
{
	struct sarnue_plugin *p = calloc(1, sizeof(*p));
	const char *text;

	if (!p)
		return NULL;
	p->osm = osm;
	options_defaults(&p->opts);
	text = osm->subn.opt.event_plugin_options;
	options_parse_line(&p->opts, text, "event_plugin_options", 0, option_error, p);
	if (engines_register(p)) {
		plog(p, OSM_LOG_ERROR, "ERR could not register the routing engines");
		free(p);
		return NULL;
	}
	perfmgr_start(p);
	ctl_start(p);
	update_init(p);
	plog(p, OSM_LOG_INFO,
	     "loaded %s, engines sar-updn, sar-nue, sar-dfsssp and sar-dmodk registered, options '%s'%s",
	     PACKAGE_STRING, text ? text : "",
	     p->option_errors ? " (with errors, defaults used)" : "");
	return p;
}

static void sarnue_delete(void *data)
{
	struct sarnue_plugin *p = data;

	ctl_stop(p);
	update_stop(p);
	perfmgr_stop(p);
	free(p);
}

static void sarnue_report(void *data, osm_epi_event_id_t event_id, void *event_data)
{
	struct sarnue_plugin *p = data;

	if (event_id == OSM_EVENT_ID_UCAST_ROUTING_DONE) {
		if ((uintptr_t)event_data == UCAST_ROUTING_REROUTE)
			mcast_glue_after_reroute(p);
		ctl_note_tables_programmed(p);
		update_note_programmed(p, p->lft_blocks_changed, p->lft_switches_changed);
		engines_write_pending_dumps(p);
	} else if (event_id == OSM_EVENT_ID_PORT_DATA_COUNTERS) {
		perfmgr_report(p, event_data);
	} else if (event_id == OSM_EVENT_ID_TRAP) {
		if (notify_handle_trap(&p->notify, p->osm, event_data) == 1)
			update_wake(p); /* the last acknowledgement ends a wait at once */
	}
}

/* The symbol OpenSM looks up; osm_version must match the running OpenSM exactly. */
osm_event_plugin_t osm_event_plugin = {
	.osm_version = OSM_VERSION,
	.create = sarnue_create,
	.delete = sarnue_delete,
	.report = sarnue_report,
};
