/*
 * plugin.h - internals shared by the files of libsarnue.so, the only part of sarnue that sees
 * OpenSM types.  The plugin context holds everything mutable: options, and per engine the last
 * fabric model and routing tables that OpenSM's callbacks (path_sl, update_sl2vl) answer from.
 */
#ifndef SARNUE_PLUGIN_H
#define SARNUE_PLUGIN_H

/*
 * osm_config.h first, in every file of the plugin: it defines ENABLE_OSM_PERF_MGR, which adds
 * fields to osm_subn_opt_t.  Without it the compiler lays out osm_subn_t and osm_opensm_t
 * differently from the opensm binary, and fields such as force_reroute and sm are misread.
 */
#include <opensm/osm_config.h>
#include <opensm/osm_opensm.h>

#include "engines/engines.h"
#include "fabric/fabric.h"
#include "plugin/notify.h"
#include "engines/options.h"
#include "fabric/routing.h"
#include "plugin/update.h"

struct sarnue_plugin;
struct ctl_server;

struct sarnue_engine {
	struct sarnue_plugin *plugin;
	const char *name;
	struct fabric fabric;
	struct routing routing;
	osm_switch_t **osm_switches; /* [fabric.nswitches]: OpenSM's switch for each model switch */
	int ready;		     /* routing holds verified tables for the current sweep */
	uint64_t fingerprint;	     /* of the fabric the routing was made for */
	/* Tables a five-phase update announced, waiting for the hosts (update.h). */
	struct routing pending;
	int have_pending;
	unsigned routings; /* successful runs, for the log */
	unsigned dumped;   /* value of routings when the dumps were last written */
};

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
};

void plog(struct sarnue_plugin *p, osm_log_level_t level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Builds the model of OpenSM's current subnet; the caller finalizes nothing. */
int subnet_to_fabric(osm_subn_t *subn, struct fabric *f, struct fab_error *err);

/* Registers sar-updn, sar-nue and sar-dfsssp with OpenSM. */
int engines_register(struct sarnue_plugin *p);

/*
 * Writes the path-SL and SL2VL dumps of the engine that routed last, if due.  Called when
 * OpenSM reports the routing done, so that large dumps do not delay programming the switches.
 */
void engines_write_pending_dumps(struct sarnue_plugin *p);

/*
 * The control socket (ctl.c).  ctl_start() logs and returns -1 when it cannot listen; OpenSM
 * then runs on without it.  The ctl_note_* calls feed `status` and `topology` and are no-ops
 * without a socket.
 */
int ctl_start(struct sarnue_plugin *p);
void ctl_stop(struct sarnue_plugin *p);
void ctl_note_routing_started(struct sarnue_plugin *p);
void ctl_note_tables_programmed(struct sarnue_plugin *p);
void ctl_note_routing(struct sarnue_plugin *p, const char *engine, const struct fabric *f,
		      const struct engine_result *res);
void ctl_note_failure(struct sarnue_plugin *p, const char *engine, const char *msg);
/*
 * The job map to route with: the one `jobs FILE` installed, else the job_map option; name gets
 * how messages call an installed one (its file name on the client), else "".
 */
void ctl_job_map_path(struct sarnue_plugin *p, char *buf, size_t size, char *name,
		      size_t name_size);

#endif
