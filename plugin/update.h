/*
 * update.h - the five-phase property-preserving LFT update inside OpenSM: the thread that runs
 * the state machine of update/phases.h, and the machine's callbacks done with OpenSM (reports
 * and acknowledgements through notify.c, reroutes through OpenSM's state manager, the log).
 *
 * Who does what:
 *  - OpenSM's routing callbacks (engines_glue.c, OpenSM's lock held) ask update_on_routing()
 *    whether a routing programs fresh tables, keeps the programmed ones (an update is waiting
 *    for acknowledgements) or programs the tables an update announced.  When a fresh routing of
 *    an unchanged fabric differs from the programmed one and hosts subscribed, the switches keep
 *    the programmed tables and the new ones go to update_start(): phase 1.
 *  - The update's own thread sends UnPath and waits for acknowledgements (phase 2), asks OpenSM
 *    for the reroute that installs the announced tables and waits until OpenSM reports them
 *    written (phase 3), sends RePath and waits again (phase 4), and returns to idle (phase 5).
 *
 * Lock order: OpenSM's lock, then the update's mutex.  The thread never holds its mutex while it
 * takes OpenSM's lock (notify.c takes it), so the two can never wait for each other.
 */
#ifndef SARNUE_UPDATE_H
#define SARNUE_UPDATE_H

#include <stdint.h>
#include <stdio.h>

#include "fabric/routing.h"
#include "update/phases.h"

struct sarnue_plugin;

/* Starts the update's thread (plugin create); -1 when it cannot (logged, OpenSM runs on). */
int update_init(struct sarnue_plugin *p);
/* Stops the thread and frees everything (plugin delete); safe after a failed init. */
void update_stop(struct sarnue_plugin *p);

/*
 * The routing callbacks' questions and notes; all called from OpenSM's state manager with
 * OpenSM's lock held.  same_topology: the subnet matches the model the programmed tables were
 * made for.  A change of topology during phases 1-3 aborts the update (logged, not property
 * preserving) and the fresh tables go out at once.
 */
enum update_decision update_on_routing(struct sarnue_plugin *p, int same_topology);

/*
 * Whether a fresh routing that differs from the programmed one should become an update rather
 * than go out at once: the mode asks for it (two_planes for mode auto), no update is running and
 * some port subscribed to the path reports.  Counts subscribers under the caller's lock.
 */
int update_wanted(struct sarnue_plugin *p, int two_planes);

/* Phase 1: the new tables differ in these LIDs and wait in the engine; sends UnPath. */
void update_start(struct sarnue_plugin *p, uint8_t lmc, const struct routing_lid_range *ranges,
		  unsigned nranges, uint32_t changed_lids);

/* The announced tables went to OpenSM (after UPDATE_ADOPT). */
void update_adopted(struct sarnue_plugin *p);

/* Whether the engine must still keep the announced tables (false once aborted or done). */
int update_keeps_pending(struct sarnue_plugin *p);

/* OpenSM wrote the tables of the last routing (OSM_EVENT_ID_UCAST_ROUTING_DONE). */
void update_note_programmed(struct sarnue_plugin *p, unsigned changed_blocks,
			    unsigned changed_switches);

/* An acknowledgement arrived (OpenSM's report callback): the thread looks at once. */
void update_wake(struct sarnue_plugin *p);

/* The update's part of `sarnue ctl status`: ,"phase":...,"update":{...} */
void update_status_json(struct sarnue_plugin *p, FILE *out);

#endif
