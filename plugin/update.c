/*
 * update.c - the five-phase update's state machine and thread (see update.h).  Reports and
 * acknowledgements go through notify.c; the tables stay with the engine (engines_glue.c), which
 * asks this file at every routing what to program.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <opensm/osm_config.h> /* first: see plugin.h */
#include <opensm/osm_opensm.h>

#include "lib/json.h"
#include "plugin/plugin.h"
#include "plugin/update.h"

#define TICK_MS 200
/* Phase 3 asks OpenSM again when the reroute has not happened within this many seconds. */
#define PUSH_RETRY_SECONDS 10
/* Failed attempts to send a report (OpenSM's lock unavailable) before the update gives up. */
#define SEND_ATTEMPTS 10
/* Phase 1 starts when OpenSM reports the routing that kept the tables done, or after this. */
#define START_WAIT_SECONDS 30

enum outcome {
	OUTCOME_NONE,
	OUTCOME_DONE,	       /* all five phases */
	OUTCOME_TIMEOUT_ABORT, /* phase 2 timed out, old tables kept */
	OUTCOME_TOPOLOGY,      /* topology changed: full reroute, not property preserving */
	OUTCOME_SEND_FAILED,   /* UnPath could not be sent: old tables kept */
};

/* Room for the text of the last outcome, in the state and in its status snapshot. */
#define OUTCOME_LEN 160

struct update {
	struct sarnue_plugin *p;
	pthread_t thread;
	int thread_started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;

	enum update_phase phase;
	uint32_t seq;
	uint8_t lmc;
	struct wire_lid_range ranges[WIRE_MAX_RANGES];
	unsigned nranges;
	uint32_t changed_lids;
	enum outcome outcome;	/* of the running update, set when it leaves phase 2 or 3 */
	int start_requested;	/* glue: phase 1 begins */
	int start_ready;	/* the routing that asked for it is done */
	double start_time;	/* monotonic: when it was asked for */
	int adopt_wanted;	/* thread: the next routing may program the announced tables */
	int adopted;		/* glue: it did */
	int programmed;		/* OpenSM wrote the tables after adoption or abort */
	int topology_changed;	/* glue: abort */
	int keep_pending;	/* the engine still holds the announced tables */
	int requeue;		/* a routing request arrived during the update */
	unsigned send_failures; /* of the current phase */
	double phase_start;	/* monotonic seconds */
	double next_retry;	/* monotonic: next report round */
	double push_requested;	/* monotonic: last reroute asked for in phase 3 */
	double seconds[5];	/* durations of phases 1-4 of the running or last update */
	time_t phase_wall;	/* wall clock of the last transition */
	int subscribers;	/* waited for in the current wait */
	size_t pending;		/* still to acknowledge */
	unsigned changed_blocks, changed_switches;

	unsigned updates, aborted;
	char last_outcome[OUTCOME_LEN];
};

static const char *const phase_names[] = { "idle", "unpath", "wait-unpath", "push", "repath" };

static double now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int phase_number(enum update_phase ph)
{
	return ph == UPDATE_IDLE ? 5 : (int)ph;
}

/* Records and logs a transition; u->mu held. */
static void enter(struct update *u, enum update_phase ph, const char *why)
{
	double t = now_mono();
	struct timespec wall;
	char stamp[40], frac[24];

	if (u->phase != UPDATE_IDLE)
		u->seconds[u->phase] = t - u->phase_start;
	u->phase = ph;
	u->phase_start = t;
	u->send_failures = 0;
	clock_gettime(CLOCK_REALTIME, &wall);
	u->phase_wall = wall.tv_sec;
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", gmtime(&wall.tv_sec));
	snprintf(frac, sizeof(frac), ".%03ldZ", wall.tv_nsec / 1000000);
	plog(u->p, OSM_LOG_INFO, "update %u: phase %d (%s) at %s%s: %s", u->seq, phase_number(ph),
	     phase_names[ph], stamp, frac, why);
}

static void request_reroute(struct update *u)
{
	osm_opensm_t *osm = u->p->osm;

	/* What OpenSM's console `reroute` does; the sweep runs in OpenSM's own thread. */
	osm->subn.force_reroute = TRUE;
	osm_opensm_sweep(osm);
}

/* Ends the running update; u->mu held. */
static void finish(struct update *u, enum outcome oc, const char *text)
{
	double total = 0;
	int i;

	enter(u, UPDATE_IDLE, text);
	for (i = 1; i < 5; i++)
		total += u->seconds[i];
	u->updates++;
	u->aborted += oc != OUTCOME_DONE;
	snprintf(u->last_outcome, sizeof(u->last_outcome), "%s", text);
	plog(u->p, oc == OUTCOME_DONE ? OSM_LOG_INFO : OSM_LOG_ERROR,
	     "%supdate %u %s in %.3f s (phase 1 %.3f s, phase 2 %.3f s, phase 3 %.3f s, "
	     "phase 4 %.3f s)",
	     oc == OUTCOME_DONE ? "" : "ERR ", u->seq, text, total, u->seconds[1], u->seconds[2],
	     u->seconds[3], u->seconds[4]);
	u->keep_pending = 0;
	u->adopt_wanted = 0;
	notify_end(&u->p->notify);
	if (u->requeue) {
		u->requeue = 0;
		plog(u->p, OSM_LOG_INFO, "a reroute requested during update %u runs now", u->seq);
		request_reroute(u);
	}
}

/*
 * Sends a report without u->mu (notify takes OpenSM's lock).  Returns the number of
 * subscribers to wait for, or -1.
 */
static int send_report(struct update *u, enum wire_kind kind)
{
	struct wire_lid_range ranges[WIRE_MAX_RANGES];
	unsigned nranges;
	uint32_t seq;
	uint8_t lmc;
	int n;

	seq = u->seq;
	lmc = u->lmc;
	nranges = u->nranges;
	memcpy(ranges, u->ranges, sizeof(ranges));
	pthread_mutex_unlock(&u->mu);
	n = notify_begin(&u->p->notify, u->p->osm, kind, seq, lmc, ranges, nranges);
	pthread_mutex_lock(&u->mu);
	return n;
}

/* Moves to the wait of phase 2 or 4 after sending its report. */
static void begin_wait(struct update *u, enum wire_kind kind, enum update_phase wait_phase)
{
	int n = send_report(u, kind);
	char why[160];

	if (n < 0) {
		if (++u->send_failures < SEND_ATTEMPTS)
			return; /* next tick */
		if (kind == WIRE_KIND_UNPATH) {
			finish(u, OUTCOME_SEND_FAILED,
			       "aborted: UnPath could not be sent; the old tables stay");
			return;
		}
		finish(u, u->outcome, "ended: RePath could not be sent");
		return;
	}
	u->subscribers = n;
	u->pending = (size_t)n;
	u->next_retry = now_mono() + u->p->opts.update_retry;
	snprintf(why, sizeof(why), "%s sent, %d subscriber(s) to acknowledge", wire_kind_name(kind),
		 n);
	enter(u, wait_phase, why);
}

static void start_push(struct update *u, const char *why)
{
	u->outcome = OUTCOME_DONE;
	u->adopt_wanted = 1;
	u->adopted = 0;
	u->programmed = 0;
	u->push_requested = now_mono();
	enter(u, UPDATE_PUSH, why);
	request_reroute(u);
}

/* One retry round of phase 2 or 4, without u->mu.  Returns what is still pending. */
static size_t retry_round(struct update *u)
{
	int n;

	pthread_mutex_unlock(&u->mu);
	n = notify_retry(&u->p->notify, u->p->osm);
	pthread_mutex_lock(&u->mu);
	u->next_retry = now_mono() + u->p->opts.update_retry;
	if (n < 0)
		return notify_pending(&u->p->notify);
	return (size_t)n;
}

static void timeout_unpath(struct update *u)
{
	char why[200];

	if (u->p->opts.update_proceed) {
		snprintf(why, sizeof(why),
			 "timeout after %u s with %zu subscriber(s) silent or not done; "
			 "update_on_timeout=proceed pushes anyway",
			 u->p->opts.update_timeout, u->pending);
		start_push(u, why);
		return;
	}
	snprintf(why, sizeof(why),
		 "aborted: timeout after %u s with %zu subscriber(s) silent or not done "
		 "(update_on_timeout=abort); the old tables stay",
		 u->p->opts.update_timeout, u->pending);
	plog(u->p, OSM_LOG_ERROR, "ERR update %u %s", u->seq, why);
	u->outcome = OUTCOME_TIMEOUT_ABORT;
	u->keep_pending = 0;
	u->adopt_wanted = 0;
	/* The hosts moved to the high LIDs: RePath sends them back to the unchanged base LIDs. */
	begin_wait(u, WIRE_KIND_REPATH, UPDATE_REPATH);
}

static void step_wait_unpath(struct update *u, double t)
{
	if (u->topology_changed)
		return;
	u->pending = notify_pending(&u->p->notify);
	if (!u->pending) {
		start_push(u, "every subscriber acknowledged UnPath");
		return;
	}
	if (t - u->phase_start >= u->p->opts.update_timeout) {
		timeout_unpath(u);
		return;
	}
	if (t >= u->next_retry) {
		u->pending = retry_round(u);
		if (!u->pending)
			start_push(u, "every remaining subscriber acknowledged or expired");
	}
}

static void step_push(struct update *u, double t)
{
	if (u->adopted && u->programmed) {
		begin_wait(u, WIRE_KIND_REPATH, UPDATE_REPATH);
		return;
	}
	if (!u->adopted && t - u->push_requested >= PUSH_RETRY_SECONDS) {
		plog(u->p, OSM_LOG_INFO, "update %u: no reroute yet, asking OpenSM again", u->seq);
		u->push_requested = t;
		request_reroute(u);
	}
}

static const char *outcome_text(enum outcome oc)
{
	switch (oc) {
	case OUTCOME_TIMEOUT_ABORT:
		return "aborted after the UnPath timeout; the old tables stayed";
	case OUTCOME_TOPOLOGY:
		return "aborted by a topology change: full reroute, not property preserving";
	case OUTCOME_SEND_FAILED:
		return "aborted: UnPath could not be sent";
	case OUTCOME_NONE:
	case OUTCOME_DONE:
		break;
	}
	return "done";
}

static void step_wait_repath(struct update *u, double t)
{
	char text[220];

	u->pending = notify_pending(&u->p->notify);
	if (u->pending && t - u->phase_start < u->p->opts.update_timeout) {
		if (t >= u->next_retry)
			u->pending = retry_round(u);
		if (u->pending)
			return;
	}
	if (u->pending)
		snprintf(text, sizeof(text), "%s; %zu subscriber(s) did not acknowledge RePath",
			 outcome_text(u->outcome), u->pending);
	else
		snprintf(text, sizeof(text), "%s", outcome_text(u->outcome));
	finish(u, u->outcome, text);
}

/* A topology change reported by the glue: the fresh tables went out; send RePath after them. */
static void step_topology_changed(struct update *u)
{
	if (!u->programmed)
		return;
	u->topology_changed = 0;
	u->outcome = OUTCOME_TOPOLOGY;
	begin_wait(u, WIRE_KIND_REPATH, UPDATE_REPATH);
}

static void step(struct update *u)
{
	double t = now_mono();

	if (u->topology_changed && u->phase != UPDATE_IDLE && u->phase != UPDATE_REPATH) {
		step_topology_changed(u);
		return;
	}
	switch (u->phase) {
	case UPDATE_IDLE:
		/* Reports go out once OpenSM finished the routing that kept the old tables. */
		if (!u->start_requested ||
		    (!u->start_ready && t - u->start_time < START_WAIT_SECONDS))
			return;
		u->start_requested = 0;
		u->start_ready = 0;
		enter(u, UPDATE_UNPATH, "new tables computed and kept back");
		begin_wait(u, WIRE_KIND_UNPATH, UPDATE_WAIT_UNPATH);
		return;
	case UPDATE_UNPATH:
		begin_wait(u, WIRE_KIND_UNPATH, UPDATE_WAIT_UNPATH);
		return;
	case UPDATE_WAIT_UNPATH:
		step_wait_unpath(u, t);
		return;
	case UPDATE_PUSH:
		step_push(u, t);
		return;
	case UPDATE_REPATH:
		step_wait_repath(u, t);
		return;
	}
}

static void *update_thread(void *arg)
{
	struct update *u = arg;

	pthread_mutex_lock(&u->mu);
	while (!u->stop) {
		struct timespec ts;

		step(u);
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
	int rc;

	if (!u) {
		plog(p, OSM_LOG_ERROR, "ERR update: out of memory; reroutes are plain");
		return -1;
	}
	u->p = p;
	pthread_mutex_init(&u->mu, NULL);
	pthread_cond_init(&u->cv, NULL);
	snprintf(u->last_outcome, sizeof(u->last_outcome), "none");
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
	enum update_decision d = UPDATE_ROUTE;

	if (!u || !u->thread_started)
		return UPDATE_ROUTE;
	pthread_mutex_lock(&u->mu);
	if (u->phase == UPDATE_IDLE && !u->start_requested) {
		d = UPDATE_ROUTE;
	} else if (!same_topology) {
		if (u->phase != UPDATE_REPATH) {
			plog(p, OSM_LOG_ERROR,
			     "ERR update %u: the topology changed in phase %d: full reroute now, "
			     "not property preserving",
			     u->seq, phase_number(u->phase));
			u->topology_changed = 1;
			u->programmed = 0;
			u->keep_pending = 0;
			u->adopt_wanted = 0;
			u->start_requested = 0;
			if (u->phase == UPDATE_IDLE) /* announced but never started: nothing sent */
				u->topology_changed = 0;
		}
		d = UPDATE_ROUTE;
	} else if (u->phase == UPDATE_PUSH && u->adopt_wanted && !u->adopted) {
		d = UPDATE_ADOPT;
	} else {
		u->requeue = 1;
		d = UPDATE_KEEP;
	}
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
	busy = u->phase != UPDATE_IDLE || u->start_requested;
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
	unsigned i;

	pthread_mutex_lock(&u->mu);
	u->seq = notify_next_seq(&p->notify);
	u->lmc = lmc;
	u->nranges = nranges < WIRE_MAX_RANGES ? nranges : WIRE_MAX_RANGES;
	for (i = 0; i < u->nranges; i++) {
		u->ranges[i].first = (uint16_t)ranges[i].first;
		u->ranges[i].last = (uint16_t)ranges[i].last;
	}
	u->changed_lids = changed_lids;
	u->start_requested = 1;
	u->start_ready = 0;
	u->start_time = now_mono();
	u->keep_pending = 1;
	u->topology_changed = 0;
	u->requeue = 0;
	u->outcome = OUTCOME_NONE;
	memset(u->seconds, 0, sizeof(u->seconds));
	pthread_cond_signal(&u->cv);
	pthread_mutex_unlock(&u->mu);
	plog(p, OSM_LOG_INFO,
	     "update %u: new tables change paths to %u LID(s) in %u range(s); the switches keep "
	     "the programmed tables until the hosts acknowledge UnPath",
	     u->seq, changed_lids, nranges);
}

void update_adopted(struct sarnue_plugin *p)
{
	struct update *u = p->update;

	pthread_mutex_lock(&u->mu);
	u->adopted = 1;
	u->keep_pending = 0;
	pthread_mutex_unlock(&u->mu);
}

int update_keeps_pending(struct sarnue_plugin *p)
{
	struct update *u = p->update;
	int keep;

	if (!u)
		return 0;
	pthread_mutex_lock(&u->mu);
	keep = u->keep_pending;
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
	if (u->phase == UPDATE_IDLE && u->start_requested) {
		u->start_ready = 1;
		pthread_cond_signal(&u->cv);
	}
	if ((u->phase == UPDATE_PUSH && u->adopted && !u->programmed) ||
	    (u->topology_changed && !u->programmed)) {
		u->programmed = 1;
		u->changed_blocks = changed_blocks;
		u->changed_switches = changed_switches;
		plog(p, OSM_LOG_INFO,
		     "update %u: OpenSM wrote %u changed LFT block(s) on %u switch(es)", u->seq,
		     changed_blocks, changed_switches);
		pthread_cond_signal(&u->cv);
	}
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

/* What the status JSON prints, copied under the lock so the printing does not hold it. */
struct update_snapshot {
	enum update_phase phase;
	uint32_t seq;
	time_t phase_wall;
	int subscribers;
	size_t pending;
	uint32_t changed_lids;
	int requeue;
	unsigned updates, aborted;
	unsigned changed_blocks, changed_switches;
	double seconds[5];
	char last_outcome[OUTCOME_LEN];
};

static void take_snapshot(struct update *u, struct update_snapshot *s)
{
	pthread_mutex_lock(&u->mu);
	s->phase = u->phase;
	s->seq = u->seq;
	s->phase_wall = u->phase_wall;
	s->subscribers = u->subscribers;
	s->pending = u->pending;
	s->changed_lids = u->changed_lids;
	s->requeue = u->requeue;
	s->updates = u->updates;
	s->aborted = u->aborted;
	s->changed_blocks = u->changed_blocks;
	s->changed_switches = u->changed_switches;
	memcpy(s->seconds, u->seconds, sizeof(s->seconds));
	memcpy(s->last_outcome, u->last_outcome, sizeof(s->last_outcome));
	pthread_mutex_unlock(&u->mu);
}

void update_status_json(struct sarnue_plugin *p, FILE *out)
{
	struct update_snapshot snap;
	struct tm tm;
	char when[32] = "";
	int i;

	if (!p->update) {
		fputs(",\"phase\":\"idle\",\"update\":null", out);
		return;
	}
	take_snapshot(p->update, &snap);
	if (snap.phase_wall && gmtime_r(&snap.phase_wall, &tm))
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	fprintf(out, ",\"phase\":\"%s\",\"update\":{\"mode\":\"%s\",\"phase_number\":%d,",
		phase_names[snap.phase], mode_name(p->opts.update), phase_number(snap.phase));
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
