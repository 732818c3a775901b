/*
 * context.h - the plugin's context: everything mutable that libsarnue.so keeps between
 * OpenSM's calls (options, the control socket, the update, the reports), created by plugin.c
 * and handed to every other plugin file.  Only data lives here; each file's functions have a
 * header of their own, so that no file calls back into the entry points in plugin.c.
 */
#ifndef SARNUE_PLUGIN_CONTEXT_H
#define SARNUE_PLUGIN_CONTEXT_H

/*
 * osm_config.h first, in every file of the plugin: it defines ENABLE_OSM_PERF_MGR, which adds
 * fields to osm_subn_opt_t.  Without it the compiler lays out osm_subn_t and osm_opensm_t
 * differently from the opensm binary, and fields such as force_reroute and sm are misread.
 */
#include <opensm/osm_config.h>
#include <opensm/osm_opensm.h>

#include "engines/options.h"
#include "plugin/notify.h"

struct sarnue_engine;
struct ctl_server;
struct update;
struct perfmgr_store;

struct sarnue_plugin {
	osm_opensm_t *osm;
	struct sarnue_options opts;
	unsigned option_errors;
	/* Engine whose dumps are due once OpenSM reports the routing done. */
	struct sarnue_engine *dumps_pending;
	struct ctl_server *ctl; /* the control socket, NULL when off or unavailable */
	/* UnPath/RePath reports and their acknowledgements (five-phase update). */
	struct notify notify;
	struct update *update; /* the five-phase update's state and thread (update.c) */
	/* What the last routing changed in the switches: 64-LID LFT blocks, switches. */
	unsigned lft_blocks_changed, lft_switches_changed;
	/* traffic=perfmgr: PerfMgr's counter reports (perfmgr.c), NULL without the option */
	struct perfmgr_store *perfmgr;
};

#endif
