/*
 * update.c - the five-phase update's thread and the OpenSM side of its state machine (see
 * update.h; the machine itself is update/phases.c).  Reports and acknowledgements go through
 * notify.c; the tables stay with the engine (engines_glue.c), which asks this file at every
 * routing what to program.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <opensm/osm_config.h> /* first: see context.h */
#include <opensm/osm_opensm.h>

#include "lib/json.h"
#include "plugin/context.h"
#include "plugin/log.h"
#include "plugin/notify.h"
#include "plugin/update.h"
#include "update/phases.h"

#define TICK_MS 200

struct update {
	struct sarnue_plugin *p;
	pthread_t thread;
	int thread_started;
	pthread_mutex_t mu; /* guards m */
	pthread_cond_t cv;
	int stop;
	struct phases m;
};

static double now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The machine's callbacks: reports and acknowledgements through notify.c, reroutes, the log. */

/* Sends without u->mu: notify takes OpenSM's lock, which must never wait behind ours. */
static int op_send_report(void *ctx, enum wire_kind kind, uint32_t seq, uint8_t lmc,
			  const struct wire_lid_range *ranges, unsigned nranges)
{
	struct update *u = ctx;
	int n;

	pthread_mutex_unlock(&u->mu);
	n = notify_begin(&u->p->notify, u->p->osm, kind, seq, lmc, ranges, nranges);
	pthread_mutex_lock(&u->mu);
	return n;
}

static int op_retry_report(void *ctx)
{
	struct update *u = ctx;
	int n;

	pthread_mutex_unlock(&u->mu);
	n = notify_retry(&u->p->notify, u->p->osm);
	pthread_mutex_lock(&u->mu);
	return n;
}

static size_t op_pending_acks(void *ctx)
{
	struct update *u = ctx;

	return notify_pending(&u->p->notify);
}

static void op_end_acks(void *ctx)
{
	struct update *u = ctx;

	notify_end(&u->p->notify);
}

static void op_request_reroute(void *ctx)
{
	struct update *u = ctx;
	osm_opensm_t *osm = u->p->osm;

	/* What OpenSM's console `reroute` does; the sweep runs in OpenSM's own thread. */
	osm->subn.force_reroute = TRUE;
	osm_opensm_sweep(osm);
}

static void op_log(void *ctx, enum phases_log_level level, const char *msg)
{
	struct update *u = ctx;

	plog(u->p, level == PHASES_LOG_ERROR ? OSM_LOG_ERROR : OSM_LOG_INFO, "%s", msg);
}

static double op_monotonic(void *ctx)
{
	(void)ctx;
	return now_mono();
}

static void op_wall_clock(void *ctx, struct timespec *ts)
{
	(void)ctx;
	clock_gettime(CLOCK_REALTIME, ts);
}

static const struct phases_ops update_ops = {
	.send_report = op_send_report,
	.retry_report = op_retry_report,
	.pending_acks = op_pending_acks,
	.end_acks = op_end_acks,
	.request_reroute = op_request_reroute,
	.log = op_log,
	.monotonic = op_monotonic,
	.wall_clock = op_wall_clock,
};

static void *update_thread(void *arg)
{
	struct update *u = arg;

	pthread_mutex_lock(&u->mu);
	while (!u->stop) {
		struct timespec ts;

		phases_step(&u->m);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += TICK_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&u->cv, &u->mu, &ts);
	}
	pthread_mutex_unlock(&u->mu);
	return NULL;
}

int update_init(struct sarnue_plugin *p)
{
	struct update *u = calloc(1, sizeof(*u));
	struct phases_config cfg = {
		.retry_seconds = p->opts.update_retry,
		.timeout_seconds = p->opts.update_timeout,
		.proceed_on_timeout = p->opts.update_proceed,
	};
	int rc;

	if (!u) {
		plog(p, OSM_LOG_ERROR, "ERR update: out of memory; reroutes are plain");
		return -1;
	}
	u->p = p;
	pthread_mutex_init(&u->mu, NULL);
	pthread_cond_init(&u->cv, NULL);
	phases_init(&u->m, &update_ops, u, &cfg);
	notify_init(&p->notify, p->opts.update_rounds);
	p->update = u;
	if (p->opts.update == OPT_UPDATE_PLAIN)
		return 0;
	rc = pthread_create(&u->thread, NULL, update_thread, u);
	if (rc) {
		plog(p, OSM_LOG_ERROR,
		     "ERR update: cannot start its thread: %s; reroutes are plain", strerror(rc));
		return -1;
	}
	u->thread_started = 1;
	return 0;
}

void update_stop(struct sarnue_plugin *p)
{
	struct update *u = p->update;

	if (!u)
		return;
	if (u->thread_started) {
		pthread_mutex_lock(&u->mu);
		u->stop = 1;
		pthread_cond_signal(&u->cv);
		pthread_mutex_unlock(&u->mu);
		pthread_join(u->thread, NULL);
	}
	pthread_cond_destroy(&u->cv);
	pthread_mutex_destroy(&u->mu);
	notify_free(&p->notify);
	free(u);
	p->update = NULL;
}

enum update_decision update_on_routing(struct sarnue_plugin *p, int same_topology)
{
	struct update *u = p->update;
	enum update_decision d;

	if (!u || !u->thread_started)
		return UPDATE_ROUTE;
	pthread_mutex_lock(&u->mu);
	d = phases_on_routing(&u->m, same_topology);
	pthread_mutex_unlock(&u->mu);
	return d;
}

int update_wanted(struct sarnue_plugin *p, int two_planes)
{
	struct update *u = p->update;
	int busy, n;

	if (!u || !u->thread_started)
		return 0;
	if (p->opts.update == OPT_UPDATE_AUTO && !two_planes)
		return 0;
	pthread_mutex_lock(&u->mu);
	busy = phases_busy(&u->m);
	pthread_mutex_unlock(&u->mu);
	if (busy)
		return 0;
	n = notify_count_subscribers_locked(p->osm);
	if (n <= 0)
		plog(p, OSM_LOG_INFO, "no host subscribed to path reports: plain reroute");
	return n > 0;
}

void update_start(struct sarnue_plugin *p, uint8_t lmc, const struct routing_lid_range *ranges,
		  unsigned nranges, uint32_t changed_lids)
{
	struct update *u = p->update;
	uint32_t seq = notify_next_seq(&p->notify);

	pthread_mutex_lock(&u->mu);
	phases_start(&u->m, seq, lmc, ranges, nranges, changed_lids);
	pthread_cond_signal(&u->cv);
	pthread_mutex_unlock(&u->mu);
}

void update_adopted(struct sarnue_plugin *p)
{
	struct update *u = p->update;

	pthread_mutex_lock(&u->mu);
	phases_adopted(&u->m);
	pthread_mutex_unlock(&u->mu);
}

int update_keeps_pending(struct sarnue_plugin *p)
{
	struct update *u = p->update;
	int keep;

	if (!u)
		return 0;
	pthread_mutex_lock(&u->mu);
	keep = phases_keeps_pending(&u->m);
	pthread_mutex_unlock(&u->mu);
	return keep;
}

void update_note_programmed(struct sarnue_plugin *p, unsigned changed_blocks,
			    unsigned changed_switches)
{
	struct update *u = p->update;

	if (!u)
		return;
	pthread_mutex_lock(&u->mu);
	if (phases_note_programmed(&u->m, changed_blocks, changed_switches))
		pthread_cond_signal(&u->cv);
	pthread_mutex_unlock(&u->mu);
}

void update_wake(struct sarnue_plugin *p)
{
	struct update *u = p->update;

	if (!u)
		return;
	pthread_mutex_lock(&u->mu);
	pthread_cond_signal(&u->cv);
	pthread_mutex_unlock(&u->mu);
}

static const char *mode_name(enum opt_update m)
{
	return m == OPT_UPDATE_FIVE_PHASE ? "five-phase" : m == OPT_UPDATE_PLAIN ? "plain" : "auto";
}

void update_status_json(struct sarnue_plugin *p, FILE *out)
{
	struct update *u = p->update;
	struct phases_status snap;
	struct tm tm;
	char when[32] = "";
	int i;

	if (!u) {
		fputs(",\"phase\":\"idle\",\"update\":null", out);
		return;
	}
	/* Copied under the lock so the printing does not hold it. */
	pthread_mutex_lock(&u->mu);
	phases_status(&u->m, &snap);
	pthread_mutex_unlock(&u->mu);
	if (snap.phase_wall && gmtime_r(&snap.phase_wall, &tm))
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	fprintf(out, ",\"phase\":\"%s\",\"update\":{\"mode\":\"%s\",\"phase_number\":%d,",
		phases_name(snap.phase), mode_name(p->opts.update), phases_number(snap.phase));
	fprintf(out, "\"seq\":%u,\"since\":", snap.seq);
	if (when[0])
		json_write_string(out, when);
	else
		fputs("null", out);
	fprintf(out,
		",\"subscribers\":%d,\"pending_acks\":%zu,\"changed_lids\":%u,\"queued\":%s,"
		"\"updates\":%u,\"aborted\":%u,\"changed_blocks\":%u,\"changed_switches\":%u,"
		"\"phase_seconds\":[",
		snap.subscribers, snap.pending, snap.changed_lids, snap.requeue ? "true" : "false",
		snap.updates, snap.aborted, snap.changed_blocks, snap.changed_switches);
	for (i = 1; i < 5; i++)
		fprintf(out, "%s%.3f", i > 1 ? "," : "", snap.seconds[i]);
	fputs("],\"last_outcome\":", out);
	json_write_string(out, snap.last_outcome);
	fputc('}', out);
}
