/*
 * perfmgr.h - traffic=perfmgr in the plugin (perfmgr.c, doc/traffic.md): OpenSM's PerfMgr
 * reports each port's data counters to the plugin; before a routing, the bytes of the window
 * are handed to the engines (engine_ctx.counters), which estimate the matrix.  Every call is a
 * no-op unless the option is traffic=perfmgr.
 */
#ifndef SARNUE_PLUGIN_PERFMGR_H
#define SARNUE_PLUGIN_PERFMGR_H

#include <stddef.h>
#include <stdio.h>

struct sarnue_plugin;
struct traffic_counter;

/* Sets up the counters' store; warns when OpenSM's perfmgr is off. */
void perfmgr_start(struct sarnue_plugin *p);
void perfmgr_stop(struct sarnue_plugin *p);

/* One OSM_EVENT_ID_PORT_DATA_COUNTERS report (an osm_epi_dc_event_t), on any OpenSM thread. */
void perfmgr_report(struct sarnue_plugin *p, const void *event);

/*
 * The ports' bytes of the window for one routing, logged; *out is malloc()ed (NULL and 0
 * when none came: then a warning is logged once until counters come again).
 */
void perfmgr_counters(struct sarnue_plugin *p, struct traffic_counter **out, size_t *n);

/* What the engine made of them (engine_result.traffic), for `ctl status`. */
void perfmgr_note_estimate(struct sarnue_plugin *p, const char *text);

/* `,"perfmgr":{...}` for the status JSON; nothing without traffic=perfmgr. */
void perfmgr_status_json(struct sarnue_plugin *p, FILE *out);

#endif
