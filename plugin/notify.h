/*
 * notify.h - the plugin's side of the five-phase update's wire format (doc/five-phase.md):
 * UnPath (trap 68) and RePath (trap 69) reports to every InformInfo subscriber through
 * OpenSM's osm_report_notice(), and trap 144 acknowledgements recognised in the plugin's
 * report() callback.  The bookkeeping of who acknowledged what is update/acks.c; the bytes
 * are update/wire.c, shared with the host library.
 *
 * Threads: notify_handle_trap() runs in OpenSM's dispatcher with OpenSM's lock held (shared);
 * the other calls come from the update's own thread and take OpenSM's lock themselves, so they
 * must be called without it.  A zero-filled struct notify is inert: acknowledgements are only
 * logged until notify_init() ran (the update's owner calls it in create() and notify_free()
 * in delete()).
 */
#ifndef SARNUE_NOTIFY_H
#define SARNUE_NOTIFY_H

#include <pthread.h>
#include <stdint.h>

#include <opensm/osm_config.h> /* first: see context.h */
#include <opensm/osm_opensm.h>

#include "update/acks.h"
#include "update/wire.h"

struct notify {
	int ready;
	pthread_mutex_t lock; /* guards acks and the report below */
	struct acks acks;
	uint32_t next_seq;
	struct wire_path_report report; /* the report being waited for (re-sent on retries) */
	unsigned long acks_seen, acks_malformed;
};

/* max_rounds: retry rounds a subscriber may stay silent before it expires. */
void notify_init(struct notify *n, unsigned max_rounds);
void notify_free(struct notify *n);

/* A fresh update sequence number (never 0; starts from the clock, see doc/five-phase.md). */
uint32_t notify_next_seq(struct notify *n);

/*
 * Takes the current subscribers of trap 68/69 from OpenSM's InformInfo list, starts waiting
 * for (kind, seq) and sends the report once.  ranges name the affected base LIDs (none: all).
 * Returns the number of subscribers waited for, or -1 (logged).
 */
int notify_begin(struct notify *n, osm_opensm_t *osm, enum wire_kind kind, uint32_t seq,
		 uint8_t lmc, const struct wire_lid_range *ranges, unsigned nranges);

/*
 * One retry interval passed: silent subscribers miss a round (and expire after max_rounds,
 * logged); if any are still pending the report is sent again.  Returns the number pending.
 */
int notify_retry(struct notify *n, osm_opensm_t *osm);

/*
 * Distinct ports subscribed to trap 68 or 69 now, for callers that hold OpenSM's lock already
 * (the routing callbacks).  -1 on error.
 */
int notify_count_subscribers_locked(osm_opensm_t *osm);

/* Subscribers that still have to acknowledge the current report. */
size_t notify_pending(struct notify *n);

/* Stops waiting for the current report. */
void notify_end(struct notify *n);

/*
 * For report() on OSM_EVENT_ID_TRAP: recognises a sarnue acknowledgement (trap 144 with the
 * sarnue details) and records it.  Returns 1 for an acknowledgement, 0 for any other notice,
 * -1 for a malformed sarnue acknowledgement (logged).
 */
int notify_handle_trap(struct notify *n, osm_opensm_t *osm, const void *notice);

#endif
