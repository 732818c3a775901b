/*
 * test_update.c - the five-phase update's state machine (update/phases.c) driven by fake
 * callbacks and a fake clock: a normal update with every acknowledgement, a host that never
 * acknowledges (timeout with abort and with proceed), a topology change in the middle, reports
 * that cannot be sent, and the order of what the machine asks for in each case.
 */
#include <stdio.h>
#include <string.h>

#include "update/phases.h"
#include "check.h"

/* What the callbacks saw and what they answer. */
struct fake {
	double t;	       /* the fake monotonic clock, seconds */
	char actions[512];     /* "send:unpath retry reroute send:repath end ..." */
	char phases[64];       /* phase numbers in the order the machine entered them */
	int subscribers;       /* what a report reaches */
	size_t pending;	       /* acknowledgements still missing */
	int failing_sends;     /* reports that fail before one goes out */
	int expire_on_retry;   /* a retry round expires every silent subscriber */
	uint32_t last_seq;     /* of the last report sent */
	unsigned last_nranges; /* of the last report sent */
	unsigned errors;       /* error lines logged */
	char last_log[1024];
};

static void act(struct fake *f, const char *what)
{
	size_t len = strlen(f->actions);

	snprintf(f->actions + len, sizeof(f->actions) - len, "%s%s", len ? " " : "", what);
}

static int fake_send_report(void *ctx, enum wire_kind kind, uint32_t seq, uint8_t lmc,
			    const struct wire_lid_range *ranges, unsigned nranges)
{
	struct fake *f = ctx;

	(void)lmc;
	(void)ranges;
	act(f, kind == WIRE_KIND_UNPATH ? "send:unpath" : "send:repath");
	if (f->failing_sends > 0) {
		f->failing_sends--;
		return -1;
	}
	f->last_seq = seq;
	f->last_nranges = nranges;
	f->pending = (size_t)f->subscribers;
	return f->subscribers;
}

static int fake_retry_report(void *ctx)
{
	struct fake *f = ctx;

	act(f, "retry");
	if (f->expire_on_retry)
		f->pending = 0;
	return (int)f->pending;
}

static size_t fake_pending_acks(void *ctx)
{
	struct fake *f = ctx;

	return f->pending;
}

static void fake_end_acks(void *ctx)
{
	struct fake *f = ctx;

	act(f, "end");
	f->pending = 0;
}

static void fake_request_reroute(void *ctx)
{
	act(ctx, "reroute");
}

static void fake_log(void *ctx, enum phases_log_level level, const char *msg)
{
	struct fake *f = ctx;
	const char *ph = strstr(msg, ": phase ");
	size_t len = strlen(f->phases);

	f->errors += level == PHASES_LOG_ERROR;
	snprintf(f->last_log, sizeof(f->last_log), "%s", msg);
	if (ph && len + 1 < sizeof(f->phases)) {
		f->phases[len] = ph[strlen(": phase ")];
		f->phases[len + 1] = '\0';
	}
}

static double fake_monotonic(void *ctx)
{
	return ((struct fake *)ctx)->t;
}

static void fake_wall_clock(void *ctx, struct timespec *ts)
{
	struct fake *f = ctx;

	ts->tv_sec = 1700000000 + (time_t)f->t;
	ts->tv_nsec = 0;
}

static const struct phases_ops fake_ops = {
	.send_report = fake_send_report,
	.retry_report = fake_retry_report,
	.pending_acks = fake_pending_acks,
	.end_acks = fake_end_acks,
	.request_reroute = fake_request_reroute,
	.log = fake_log,
	.monotonic = fake_monotonic,
	.wall_clock = fake_wall_clock,
};

static const struct routing_lid_range some_lids[] = { { 1, 4 }, { 9, 9 } };

static void setup(struct phases *m, struct fake *f, int proceed)
{
	struct phases_config cfg = { .retry_seconds = 2,
				     .timeout_seconds = 10,
				     .proceed_on_timeout = proceed };

	memset(f, 0, sizeof(*f));
	f->subscribers = 2;
	phases_init(m, &fake_ops, f, &cfg);
}

/* Announces an update and lets the routing that kept the tables finish: UnPath goes out. */
static void start_and_send_unpath(struct phases *m, struct fake *f)
{
	phases_start(m, 7, 1, some_lids, 2, 5);
	CHECK(phases_busy(m));
	CHECK(phases_keeps_pending(m));
	phases_step(m); /* the routing is not done yet: nothing goes out */
	CHECK(m->phase == UPDATE_IDLE && f->actions[0] == '\0');
	CHECK(phases_note_programmed(m, 0, 0) == 1);
	phases_step(m);
	CHECK(m->phase == UPDATE_WAIT_UNPATH);
	CHECK(f->last_seq == 7 && f->last_nranges == 2);
}

static void test_normal(void)
{
	struct phases m;
	struct fake f;
	struct phases_status st;

	setup(&m, &f, 0);
	CHECK(phases_on_routing(&m, 1) == UPDATE_ROUTE); /* idle */
	CHECK(!phases_busy(&m));
	start_and_send_unpath(&m, &f);
	CHECK(strcmp(f.actions, "send:unpath") == 0);
	/* The engine keeps the programmed tables while the hosts move. */
	CHECK(phases_on_routing(&m, 1) == UPDATE_KEEP);
	phases_step(&m);
	CHECK(m.phase == UPDATE_WAIT_UNPATH);
	f.pending = 0; /* both acknowledge */
	f.t = 0.5;
	phases_step(&m);
	CHECK(m.phase == UPDATE_PUSH);
	CHECK(strcmp(f.actions, "send:unpath reroute") == 0);
	/* No reroute within the bound: asked again once. */
	f.t = 11;
	phases_step(&m);
	CHECK(strcmp(f.actions, "send:unpath reroute reroute") == 0);
	CHECK(phases_on_routing(&m, 1) == UPDATE_ADOPT);
	phases_adopted(&m);
	CHECK(!phases_keeps_pending(&m));
	phases_step(&m); /* not written yet */
	CHECK(m.phase == UPDATE_PUSH);
	CHECK(phases_note_programmed(&m, 3, 2) == 1);
	CHECK(phases_note_programmed(&m, 3, 2) == 0); /* once is enough */
	f.t = 12;
	phases_step(&m);
	CHECK(m.phase == UPDATE_REPATH);
	CHECK(f.last_seq == 7); /* one sequence number for UnPath and RePath */
	f.pending = 0;
	f.t = 13;
	phases_step(&m);
	CHECK(m.phase == UPDATE_IDLE);
	CHECK(!phases_busy(&m));
	/* The KEEP above was a routing asked for during the update: it runs now. */
	CHECK(strcmp(f.actions, "send:unpath reroute reroute send:repath end reroute") == 0);
	CHECK(strcmp(f.phases, "12345") == 0);
	CHECK(f.errors == 0);
	phases_status(&m, &st);
	CHECK(st.updates == 1 && st.aborted == 0);
	CHECK(strcmp(st.last_outcome, "done") == 0);
	CHECK(st.changed_blocks == 3 && st.changed_switches == 2 && st.changed_lids == 5);
	CHECK(st.seconds[3] == 12 - 0.5 && st.seconds[4] == 1);
	CHECK(strcmp(phases_name(st.phase), "idle") == 0 && phases_number(st.phase) == 5);
}

/* A host that stays silent: retries, then the timeout; abort keeps the old tables. */
static void test_silent_host_abort(void)
{
	struct phases m;
	struct fake f;
	struct phases_status st;

	setup(&m, &f, 0);
	start_and_send_unpath(&m, &f);
	f.pending = 1; /* one of two acknowledged */
	f.t = 1;
	phases_step(&m); /* before the retry interval */
	CHECK(strcmp(f.actions, "send:unpath") == 0);
	f.t = 2;
	phases_step(&m);
	CHECK(strcmp(f.actions, "send:unpath retry") == 0);
	CHECK(m.phase == UPDATE_WAIT_UNPATH);
	f.t = 10;
	phases_step(&m);
	/* Abort: RePath brings the hosts back to the unchanged base LIDs. */
	CHECK(m.phase == UPDATE_REPATH);
	CHECK(strcmp(f.actions, "send:unpath retry send:repath") == 0);
	CHECK(f.errors == 1);
	CHECK(!phases_keeps_pending(&m));
	CHECK(phases_on_routing(&m, 1) == UPDATE_KEEP); /* never the announced tables */
	f.pending = 1;
	f.t = 12;
	phases_step(&m);
	CHECK(strcmp(f.actions, "send:unpath retry send:repath retry") == 0);
	f.t = 20;
	phases_step(&m);
	CHECK(m.phase == UPDATE_IDLE);
	CHECK(strcmp(f.actions, "send:unpath retry send:repath retry end reroute") == 0);
	CHECK(strcmp(f.phases, "1245") == 0); /* phase 3 never ran */
	phases_status(&m, &st);
	CHECK(st.updates == 1 && st.aborted == 1);
	CHECK(strcmp(st.last_outcome, "aborted after the UnPath timeout; the old tables stayed; "
				      "1 subscriber(s) did not acknowledge RePath") == 0);
}

/* The same silent host with update_on_timeout=proceed: the new tables go out anyway. */
static void test_silent_host_proceed(void)
{
	struct phases m;
	struct fake f;
	struct phases_status st;

	setup(&m, &f, 1);
	start_and_send_unpath(&m, &f);
	f.pending = 1;
	f.t = 10;
	phases_step(&m);
	CHECK(m.phase == UPDATE_PUSH);
	CHECK(strcmp(f.actions, "send:unpath reroute") == 0);
	CHECK(phases_on_routing(&m, 1) == UPDATE_ADOPT);
	phases_adopted(&m);
	phases_note_programmed(&m, 1, 1);
	phases_step(&m);
	CHECK(m.phase == UPDATE_REPATH);
	f.pending = 0;
	phases_step(&m);
	CHECK(m.phase == UPDATE_IDLE);
	CHECK(strcmp(f.actions, "send:unpath reroute send:repath end") == 0);
	phases_status(&m, &st);
	CHECK(st.updates == 1 && st.aborted == 0);
}

/* The topology changes in phase 2: fresh tables at once, then RePath; the update aborts. */
static void test_topology_change(void)
{
	struct phases m;
	struct fake f;
	struct phases_status st;

	setup(&m, &f, 0);
	start_and_send_unpath(&m, &f);
	CHECK(phases_on_routing(&m, 0) == UPDATE_ROUTE);
	CHECK(f.errors == 1);
	CHECK(!phases_keeps_pending(&m));
	f.pending = 0;
	phases_step(&m); /* the fresh tables are not written yet: nothing moves */
	CHECK(m.phase == UPDATE_WAIT_UNPATH);
	CHECK(strcmp(f.actions, "send:unpath") == 0);
	CHECK(phases_note_programmed(&m, 4, 2) == 1);
	phases_step(&m);
	CHECK(m.phase == UPDATE_REPATH);
	f.pending = 0;
	phases_step(&m);
	CHECK(m.phase == UPDATE_IDLE);
	CHECK(strcmp(f.actions, "send:unpath send:repath end") == 0);
	CHECK(strcmp(f.phases, "1245") == 0);
	phases_status(&m, &st);
	CHECK(st.aborted == 1);
	CHECK(strncmp(st.last_outcome, "aborted by a topology change", 28) == 0);
}

/* Announced but not started yet when the topology changes: nothing was sent, nothing to undo. */
static void test_topology_change_before_start(void)
{
	struct phases m;
	struct fake f;

	setup(&m, &f, 0);
	phases_start(&m, 8, 1, some_lids, 1, 4);
	CHECK(phases_on_routing(&m, 0) == UPDATE_ROUTE);
	CHECK(!phases_busy(&m));
	phases_note_programmed(&m, 1, 1);
	phases_step(&m);
	CHECK(m.phase == UPDATE_IDLE && f.actions[0] == '\0');
}

/* UnPath cannot be sent: ten attempts, one per step, then the update gives up. */
static void test_send_failure(void)
{
	struct phases m;
	struct fake f;
	struct phases_status st;
	int i;

	setup(&m, &f, 0);
	f.failing_sends = 100;
	phases_start(&m, 9, 1, some_lids, 1, 4);
	f.t = 30; /* the routing never reported done: phase 1 starts after the bound */
	phases_step(&m);
	CHECK(m.phase == UPDATE_UNPATH);
	for (i = 0; i < 8; i++)
		phases_step(&m);
	CHECK(m.phase == UPDATE_UNPATH);
	phases_step(&m);
	CHECK(m.phase == UPDATE_IDLE);
	CHECK(strcmp(f.actions,
		     "send:unpath send:unpath send:unpath send:unpath send:unpath "
		     "send:unpath send:unpath send:unpath send:unpath send:unpath end") == 0);
	CHECK(strcmp(f.phases, "15") == 0);
	phases_status(&m, &st);
	CHECK(st.updates == 1 && st.aborted == 1);
	CHECK(!phases_keeps_pending(&m));
}

/* The last silent subscriber expires in a retry round: the update moves on without it. */
static void test_expired_in_retry(void)
{
	struct phases m;
	struct fake f;

	setup(&m, &f, 0);
	start_and_send_unpath(&m, &f);
	f.pending = 1;
	f.expire_on_retry = 1;
	f.t = 2;
	phases_step(&m);
	CHECK(m.phase == UPDATE_PUSH);
	CHECK(strcmp(f.actions, "send:unpath retry reroute") == 0);
	CHECK(strstr(f.last_log, "every remaining subscriber acknowledged or expired") != NULL);
}

int main(void)
{
	test_normal();
	test_silent_host_abort();
	test_silent_host_proceed();
	test_topology_change();
	test_topology_change_before_start();
	test_send_failure();
	test_expired_in_retry();
	return CHECK_RESULT();
}
