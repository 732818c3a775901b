/*
 * phases.c - the five-phase update's state machine (phases.h): which phase follows which,
 * when a wait times out, when a report goes out again, and what a routing may program
 * meanwhile.  Everything it does to the world goes through struct phases_ops, so it runs the
 * same inside OpenSM (plugin/update.c) and under the unit test's fakes.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lib/assert.h"
#include "update/phases.h"

/* Phase 3 asks again for the reroute when it has not happened within this many seconds. */
#define PUSH_RETRY_SECONDS 10
/* Failed attempts to send a report (OpenSM's lock unavailable) before the update gives up. */
#define SEND_ATTEMPTS 10
/* Phase 1 starts when the routing that kept the tables is reported done, or after this. */
#define START_WAIT_SECONDS 30

static const char *const phase_names[UPDATE_NPHASES] = { "idle", "unpath", "wait-unpath", "push",
							 "repath" };

static void mlog(struct phases *m, enum phases_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void mlog(struct phases *m, enum phases_log_level level, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	m->ops->log(m->ctx, level, buf);
}

static double now(struct phases *m)
{
	return m->ops->monotonic(m->ctx);
}

void phases_init(struct phases *m, const struct phases_ops *ops, void *ctx,
		 const struct phases_config *cfg)
{
	sn_assert(ops && ops->send_report && ops->retry_report && ops->pending_acks &&
		  ops->end_acks && ops->request_reroute && ops->log && ops->monotonic &&
		  ops->wall_clock);
	memset(m, 0, sizeof(*m));
	m->ops = ops;
	m->ctx = ctx;
	m->cfg = *cfg;
	m->phase = UPDATE_IDLE;
	snprintf(m->last_outcome, sizeof(m->last_outcome), "none");
}

const char *phases_name(enum update_phase ph)
{
	sn_assert((unsigned)ph < UPDATE_NPHASES);
	return phase_names[ph];
}

int phases_number(enum update_phase ph)
{
	sn_assert((unsigned)ph < UPDATE_NPHASES);
	return ph == UPDATE_IDLE ? 5 : (int)ph;
}

/* Records and logs a transition. */
static void enter(struct phases *m, enum update_phase ph, const char *why)
{
	double t = now(m);
	struct timespec wall;
	char stamp[40], frac[24];

	sn_assert((unsigned)ph < UPDATE_NPHASES);
	if (m->phase != UPDATE_IDLE) {
		sn_assert((unsigned)m->phase < UPDATE_NPHASES);
		m->seconds[m->phase] = t - m->phase_start;
	}
	m->phase = ph;
	m->phase_start = t;
	m->send_failures = 0;
	m->ops->wall_clock(m->ctx, &wall);
	m->phase_wall = wall.tv_sec;
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", gmtime(&wall.tv_sec));
	snprintf(frac, sizeof(frac), ".%03ldZ", wall.tv_nsec / 1000000);
	mlog(m, PHASES_LOG_INFO, "update %u: phase %d (%s) at %s%s: %s", m->seq, phases_number(ph),
	     phase_names[ph], stamp, frac, why);
}

/* Ends the running update. */
static void finish(struct phases *m, enum phases_outcome oc, const char *text)
{
	double total = 0;
	int i;

	sn_assert(m->phase != UPDATE_IDLE);
	sn_assert(oc != PHASES_OUTCOME_NONE);
	enter(m, UPDATE_IDLE, text);
	for (i = 1; i < UPDATE_NPHASES; i++)
		total += m->seconds[i];
	m->updates++;
	m->aborted += oc != PHASES_OUTCOME_DONE;
	sn_assert(m->aborted <= m->updates);
	snprintf(m->last_outcome, sizeof(m->last_outcome), "%s", text);
	mlog(m, oc == PHASES_OUTCOME_DONE ? PHASES_LOG_INFO : PHASES_LOG_ERROR,
	     "%supdate %u %s in %.3f s (phase 1 %.3f s, phase 2 %.3f s, phase 3 %.3f s, "
	     "phase 4 %.3f s)",
	     oc == PHASES_OUTCOME_DONE ? "" : "ERR ", m->seq, text, total, m->seconds[1],
	     m->seconds[2], m->seconds[3], m->seconds[4]);
	m->keep_pending = 0;
	m->adopt_wanted = 0;
	m->ops->end_acks(m->ctx);
	if (m->requeue) {
		m->requeue = 0;
		mlog(m, PHASES_LOG_INFO, "a reroute requested during update %u runs now", m->seq);
		m->ops->request_reroute(m->ctx);
	}
}

/*
 * Sends a report.  The callback may let other calls in (see phases.h), so it gets a copy of
 * the report.  Returns the number of subscribers to wait for, or -1.
 */
static int send_report(struct phases *m, enum wire_kind kind)
{
	struct wire_lid_range ranges[WIRE_MAX_RANGES];
	unsigned nranges;
	uint32_t seq;
	uint8_t lmc;

	seq = m->seq;
	lmc = m->lmc;
	nranges = m->nranges;
	sn_assert(nranges <= WIRE_MAX_RANGES);
	memcpy(ranges, m->ranges, sizeof(ranges));
	return m->ops->send_report(m->ctx, kind, seq, lmc, ranges, nranges);
}

/* Moves to the wait of phase 2 or 4 after sending its report. */
static void begin_wait(struct phases *m, enum wire_kind kind, enum update_phase wait_phase)
{
	int n;
	char why[160];

	sn_assert((kind == WIRE_KIND_UNPATH && wait_phase == UPDATE_WAIT_UNPATH) ||
		  (kind == WIRE_KIND_REPATH && wait_phase == UPDATE_REPATH));
	n = send_report(m, kind);
	if (n < 0) {
		if (++m->send_failures < SEND_ATTEMPTS)
			return; /* next tick */
		if (kind == WIRE_KIND_UNPATH) {
			finish(m, PHASES_OUTCOME_SEND_FAILED,
			       "aborted: UnPath could not be sent; the old tables stay");
			return;
		}
		finish(m, m->outcome, "ended: RePath could not be sent");
		return;
	}
	m->subscribers = n;
	m->pending = (size_t)n;
	m->next_retry = now(m) + m->cfg.retry_seconds;
	snprintf(why, sizeof(why), "%s sent, %d subscriber(s) to acknowledge", wire_kind_name(kind),
		 n);
	enter(m, wait_phase, why);
}

static void start_push(struct phases *m, const char *why)
{
	sn_assert(m->phase == UPDATE_WAIT_UNPATH);
	m->outcome = PHASES_OUTCOME_DONE;
	m->adopt_wanted = 1;
	m->adopted = 0;
	m->programmed = 0;
	m->push_requested = now(m);
	enter(m, UPDATE_PUSH, why);
	m->ops->request_reroute(m->ctx);
}

/* One retry round of phase 2 or 4.  Returns what is still pending. */
static size_t retry_round(struct phases *m)
{
	int n;

	sn_assert(m->phase == UPDATE_WAIT_UNPATH || m->phase == UPDATE_REPATH);
	n = m->ops->retry_report(m->ctx);
	m->next_retry = now(m) + m->cfg.retry_seconds;
	if (n < 0)
		return m->ops->pending_acks(m->ctx);
	return (size_t)n;
}

static void timeout_unpath(struct phases *m)
{
	char why[200];

	if (m->cfg.proceed_on_timeout) {
		snprintf(why, sizeof(why),
			 "timeout after %u s with %zu subscriber(s) silent or not done; "
			 "update_on_timeout=proceed pushes anyway",
			 m->cfg.timeout_seconds, m->pending);
		start_push(m, why);
		return;
	}
	snprintf(why, sizeof(why),
		 "aborted: timeout after %u s with %zu subscriber(s) silent or not done "
		 "(update_on_timeout=abort); the old tables stay",
		 m->cfg.timeout_seconds, m->pending);
	mlog(m, PHASES_LOG_ERROR, "ERR update %u %s", m->seq, why);
	m->outcome = PHASES_OUTCOME_TIMEOUT_ABORT;
	m->keep_pending = 0;
	m->adopt_wanted = 0;
	/* The hosts moved to the high LIDs: RePath sends them back to the unchanged base LIDs. */
	begin_wait(m, WIRE_KIND_REPATH, UPDATE_REPATH);
}

static void step_wait_unpath(struct phases *m, double t)
{
	if (m->topology_changed)
		return;
	m->pending = m->ops->pending_acks(m->ctx);
	if (!m->pending) {
		start_push(m, "every subscriber acknowledged UnPath");
		return;
	}
	if (t - m->phase_start >= m->cfg.timeout_seconds) {
		timeout_unpath(m);
		return;
	}
	if (t >= m->next_retry) {
		m->pending = retry_round(m);
		if (!m->pending)
			start_push(m, "every remaining subscriber acknowledged or expired");
	}
}

static void step_push(struct phases *m, double t)
{
	if (m->adopted && m->programmed) {
		begin_wait(m, WIRE_KIND_REPATH, UPDATE_REPATH);
		return;
	}
	if (!m->adopted && t - m->push_requested >= PUSH_RETRY_SECONDS) {
		mlog(m, PHASES_LOG_INFO, "update %u: no reroute yet, asking OpenSM again", m->seq);
		m->push_requested = t;
		m->ops->request_reroute(m->ctx);
	}
}

static const char *outcome_text(enum phases_outcome oc)
{
	switch (oc) {
	case PHASES_OUTCOME_TIMEOUT_ABORT:
		return "aborted after the UnPath timeout; the old tables stayed";
	case PHASES_OUTCOME_TOPOLOGY:
		return "aborted by a topology change: full reroute, not property preserving";
	case PHASES_OUTCOME_SEND_FAILED:
		return "aborted: UnPath could not be sent";
	case PHASES_OUTCOME_NONE:
	case PHASES_OUTCOME_DONE:
		break;
	}
	return "done";
}

static void step_wait_repath(struct phases *m, double t)
{
	char text[220];

	m->pending = m->ops->pending_acks(m->ctx);
	if (m->pending && t - m->phase_start < m->cfg.timeout_seconds) {
		if (t >= m->next_retry)
			m->pending = retry_round(m);
		if (m->pending)
			return;
	}
	if (m->pending)
		snprintf(text, sizeof(text), "%s; %zu subscriber(s) did not acknowledge RePath",
			 outcome_text(m->outcome), m->pending);
	else
		snprintf(text, sizeof(text), "%s", outcome_text(m->outcome));
	finish(m, m->outcome, text);
}

/* A topology change reported by a routing: the fresh tables went out; send RePath after them. */
static void step_topology_changed(struct phases *m)
{
	if (!m->programmed)
		return;
	m->topology_changed = 0;
	m->outcome = PHASES_OUTCOME_TOPOLOGY;
	begin_wait(m, WIRE_KIND_REPATH, UPDATE_REPATH);
}

void phases_step(struct phases *m)
{
	double t = now(m);

	sn_assert((unsigned)m->phase < UPDATE_NPHASES);
	if (m->topology_changed && m->phase != UPDATE_IDLE && m->phase != UPDATE_REPATH) {
		step_topology_changed(m);
		return;
	}
	switch (m->phase) {
	case UPDATE_IDLE:
		/* Reports go out once the routing that kept the old tables is done. */
		if (!m->start_requested ||
		    (!m->start_ready && t - m->start_time < START_WAIT_SECONDS))
			return;
		m->start_requested = 0;
		m->start_ready = 0;
		enter(m, UPDATE_UNPATH, "new tables computed and kept back");
		begin_wait(m, WIRE_KIND_UNPATH, UPDATE_WAIT_UNPATH);
		return;
	case UPDATE_UNPATH:
		begin_wait(m, WIRE_KIND_UNPATH, UPDATE_WAIT_UNPATH);
		return;
	case UPDATE_WAIT_UNPATH:
		step_wait_unpath(m, t);
		return;
	case UPDATE_PUSH:
		step_push(m, t);
		return;
	case UPDATE_REPATH:
		step_wait_repath(m, t);
		return;
	}
}

enum update_decision phases_on_routing(struct phases *m, int same_topology)
{
	if (m->phase == UPDATE_IDLE && !m->start_requested)
		return UPDATE_ROUTE;
	if (!same_topology) {
		if (m->phase != UPDATE_REPATH) {
			mlog(m, PHASES_LOG_ERROR,
			     "ERR update %u: the topology changed in phase %d: full reroute now, "
			     "not property preserving",
			     m->seq, phases_number(m->phase));
			m->topology_changed = 1;
			m->programmed = 0;
			m->keep_pending = 0;
			m->adopt_wanted = 0;
			m->start_requested = 0;
			if (m->phase == UPDATE_IDLE) /* announced but never started: nothing sent */
				m->topology_changed = 0;
		}
		return UPDATE_ROUTE;
	}
	if (m->phase == UPDATE_PUSH && m->adopt_wanted && !m->adopted)
		return UPDATE_ADOPT;
	m->requeue = 1;
	return UPDATE_KEEP;
}

int phases_busy(const struct phases *m)
{
	return m->phase != UPDATE_IDLE || m->start_requested;
}

void phases_start(struct phases *m, uint32_t seq, uint8_t lmc,
		  const struct routing_lid_range *ranges, unsigned nranges, uint32_t changed_lids)
{
	unsigned i;

	sn_assert(seq != 0);
	m->seq = seq;
	m->lmc = lmc;
	m->nranges = nranges < WIRE_MAX_RANGES ? nranges : WIRE_MAX_RANGES;
	for (i = 0; i < m->nranges; i++) {
		sn_assert(ranges[i].first <= ranges[i].last);
		m->ranges[i].first = (uint16_t)ranges[i].first;
		m->ranges[i].last = (uint16_t)ranges[i].last;
	}
	m->changed_lids = changed_lids;
	m->start_requested = 1;
	m->start_ready = 0;
	m->start_time = now(m);
	m->keep_pending = 1;
	m->topology_changed = 0;
	m->requeue = 0;
	m->outcome = PHASES_OUTCOME_NONE;
	memset(m->seconds, 0, sizeof(m->seconds));
	mlog(m, PHASES_LOG_INFO,
	     "update %u: new tables change paths to %u LID(s) in %u range(s); the switches keep "
	     "the programmed tables until the hosts acknowledge UnPath",
	     seq, changed_lids, nranges);
}

void phases_adopted(struct phases *m)
{
	/* Only a routing told UPDATE_ADOPT gets here, and nothing leaves phase 3 before it. */
	sn_assert(m->phase == UPDATE_PUSH);
	m->adopted = 1;
	m->keep_pending = 0;
}

int phases_keeps_pending(const struct phases *m)
{
	return m->keep_pending;
}

int phases_note_programmed(struct phases *m, unsigned changed_blocks, unsigned changed_switches)
{
	int wake = 0;

	sn_assert(changed_switches <= changed_blocks);
	if (m->phase == UPDATE_IDLE && m->start_requested) {
		m->start_ready = 1;
		wake = 1;
	}
	if ((m->phase == UPDATE_PUSH && m->adopted && !m->programmed) ||
	    (m->topology_changed && !m->programmed)) {
		m->programmed = 1;
		m->changed_blocks = changed_blocks;
		m->changed_switches = changed_switches;
		mlog(m, PHASES_LOG_INFO,
		     "update %u: OpenSM wrote %u changed LFT block(s) on %u switch(es)", m->seq,
		     changed_blocks, changed_switches);
		wake = 1;
	}
	return wake;
}

void phases_status(const struct phases *m, struct phases_status *out)
{
	out->phase = m->phase;
	out->seq = m->seq;
	out->phase_wall = m->phase_wall;
	out->subscribers = m->subscribers;
	out->pending = m->pending;
	out->changed_lids = m->changed_lids;
	out->requeue = m->requeue;
	out->updates = m->updates;
	out->aborted = m->aborted;
	out->changed_blocks = m->changed_blocks;
	out->changed_switches = m->changed_switches;
	memcpy(out->seconds, m->seconds, sizeof(out->seconds));
	memcpy(out->last_outcome, m->last_outcome, sizeof(out->last_outcome));
}
