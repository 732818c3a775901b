/*
 * phases.h - the five-phase property-preserving LFT update (Domke's thesis, section 5.2.3,
 * figure 5.7; wire format and retries in doc/five-phase.md) as a state machine without OpenSM.
 *
 * The machine decides; a table of callbacks acts: send a report and wait for its
 * acknowledgements, re-send it, count who is still pending, ask for the reroute that writes the
 * announced tables, log, read the clocks.  plugin/update.c implements the callbacks with OpenSM
 * and runs phases_step() in a thread of its own; test/unit/test_update.c drives it with fakes.
 *
 * The phases:
 *  1 (UPDATE_UNPATH): a fresh routing of an unchanged fabric differs from the programmed
 *    tables; the switches keep theirs, the new ones wait (phases_start) and UnPath goes out.
 *  2 (UPDATE_WAIT_UNPATH): waiting for every subscriber to acknowledge UnPath, re-sending it
 *    each retry interval; on timeout either push anyway or abort (the config says which).
 *  3 (UPDATE_PUSH): the next routing programs the announced tables (UPDATE_ADOPT) and the
 *    machine waits until they are written to the switches (phases_note_programmed).
 *  4 (UPDATE_REPATH): RePath sent, waiting for acknowledgements again.
 *  5 (UPDATE_IDLE): done, or aborted; a reroute asked for meanwhile runs now.
 * A change of topology in phases 1-3 aborts: the fresh tables go out at once and RePath after
 * them.
 *
 * Not thread safe: the caller serialises every call.  The report callbacks (send_report,
 * retry_report) may let other calls in while they run (the plugin drops its mutex around them,
 * because they take OpenSM's lock); the machine reads its state afresh after them.
 */
#ifndef SARNUE_PHASES_H
#define SARNUE_PHASES_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "fabric/routing.h"
#include "update/wire.h"

enum update_phase {
	UPDATE_IDLE,	    /* phase 5: no update in progress */
	UPDATE_UNPATH,	    /* phase 1: new tables kept back, UnPath being sent */
	UPDATE_WAIT_UNPATH, /* phase 2: waiting for acknowledgements of UnPath */
	UPDATE_PUSH,	    /* phase 3: the announced base-LID tables are being installed */
	UPDATE_REPATH,	    /* phase 4: RePath sent, waiting for acknowledgements */
};

#define UPDATE_NPHASES 5

enum update_decision {
	UPDATE_ROUTE, /* compute fresh tables and program them */
	UPDATE_KEEP,  /* keep the programmed tables: an update waits for the hosts */
	UPDATE_ADOPT, /* program the tables the running update announced */
};

enum phases_outcome {
	PHASES_OUTCOME_NONE,
	PHASES_OUTCOME_DONE,	      /* all five phases */
	PHASES_OUTCOME_TIMEOUT_ABORT, /* phase 2 timed out, old tables kept */
	PHASES_OUTCOME_TOPOLOGY,      /* topology changed: full reroute, not property preserving */
	PHASES_OUTCOME_SEND_FAILED,   /* UnPath could not be sent: old tables kept */
};

enum phases_log_level {
	PHASES_LOG_INFO,
	PHASES_LOG_ERROR,
};

/* What the machine asks of its owner; ctx is the owner's pointer given to phases_init(). */
struct phases_ops {
	/*
	 * Sends UnPath or RePath (seq, lmc, ranges of base LIDs) to every subscriber and starts
	 * waiting for their acknowledgements.  Returns how many are waited for, or -1 when it
	 * could not be sent (the machine tries again at the next step).
	 */
	int (*send_report)(void *ctx, enum wire_kind kind, uint32_t seq, uint8_t lmc,
			   const struct wire_lid_range *ranges, unsigned nranges);
	/*
	 * One retry interval passed: silent subscribers miss a round (and expire) and the report
	 * goes out again to those pending.  Returns how many are pending, or -1 when it could not
	 * be re-sent.
	 */
	int (*retry_report)(void *ctx);
	/* Subscribers that still have to acknowledge the current report. */
	size_t (*pending_acks)(void *ctx);
	/* Stops waiting for acknowledgements (the update ended). */
	void (*end_acks)(void *ctx);
	/* Asks for a reroute: in phase 3 it programs the announced tables. */
	void (*request_reroute)(void *ctx);
	void (*log)(void *ctx, enum phases_log_level level, const char *msg);
	/* Monotonic seconds, for timeouts and retries. */
	double (*monotonic)(void *ctx);
	/* Wall clock, for the log and the status. */
	void (*wall_clock)(void *ctx, struct timespec *ts);
};

struct phases_config {
	unsigned retry_seconds;	  /* between report rounds */
	unsigned timeout_seconds; /* of the waits of phases 2 and 4 */
	int proceed_on_timeout;	  /* phase 2 timed out: 1 push anyway, 0 abort */
};

/* Room for the text of the last outcome, in the state and in its status. */
#define PHASES_OUTCOME_LEN 160

/* The machine's state: read it through phases_status(), change it only through the calls. */
struct phases {
	const struct phases_ops *ops;
	void *ctx;
	struct phases_config cfg;

	enum update_phase phase;
	uint32_t seq;
	uint8_t lmc;
	struct wire_lid_range ranges[WIRE_MAX_RANGES];
	unsigned nranges;
	uint32_t changed_lids;
	enum phases_outcome outcome;	/* of the running update, set when it leaves phase 2 or 3 */
	int start_requested;		/* phase 1 begins */
	int start_ready;		/* the routing that asked for it is done */
	double start_time;		/* monotonic: when it was asked for */
	int adopt_wanted;		/* the next routing may program the announced tables */
	int adopted;			/* it did */
	int programmed;			/* the tables were written after adoption or abort */
	int topology_changed;		/* abort */
	int keep_pending;		/* the engine still holds the announced tables */
	int requeue;			/* a routing request arrived during the update */
	unsigned send_failures;		/* of the current phase */
	double phase_start;		/* monotonic seconds */
	double next_retry;		/* monotonic: next report round */
	double push_requested;		/* monotonic: last reroute asked for in phase 3 */
	double seconds[UPDATE_NPHASES]; /* durations of phases 1-4 of the running or last update */
	time_t phase_wall;		/* wall clock of the last transition */
	int subscribers;		/* waited for in the current wait */
	size_t pending;			/* still to acknowledge */
	unsigned changed_blocks, changed_switches;

	unsigned updates, aborted;
	char last_outcome[PHASES_OUTCOME_LEN];
};

/* What `sarnue ctl status` shows of the machine. */
struct phases_status {
	enum update_phase phase;
	uint32_t seq;
	time_t phase_wall;
	int subscribers;
	size_t pending;
	uint32_t changed_lids;
	int requeue;
	unsigned updates, aborted;
	unsigned changed_blocks, changed_switches;
	double seconds[UPDATE_NPHASES];
	char last_outcome[PHASES_OUTCOME_LEN];
};

void phases_init(struct phases *m, const struct phases_ops *ops, void *ctx,
		 const struct phases_config *cfg);

/* "idle", "unpath", "wait-unpath", "push", "repath". */
const char *phases_name(enum update_phase ph);
/* The phase's number in the thesis: 1-4, and 5 for idle. */
int phases_number(enum update_phase ph);

/* One tick of the machine: moves on when what it waits for happened or timed out. */
void phases_step(struct phases *m);

/*
 * A routing is about to run.  same_topology: the subnet matches the model the programmed
 * tables were made for.  A change of topology during phases 1-3 aborts the update (logged,
 * not property preserving) and the fresh tables go out at once.
 */
enum update_decision phases_on_routing(struct phases *m, int same_topology);

/* Whether an update runs or is about to start. */
int phases_busy(const struct phases *m);

/*
 * Phase 1: the new tables differ in these LIDs and wait in the engine; seq is the update's
 * sequence number (never 0).  UnPath goes out once the routing that kept the programmed
 * tables is done (phases_note_programmed) or after a bound.
 */
void phases_start(struct phases *m, uint32_t seq, uint8_t lmc,
		  const struct routing_lid_range *ranges, unsigned nranges, uint32_t changed_lids);

/* The announced tables were handed over (after UPDATE_ADOPT). */
void phases_adopted(struct phases *m);

/* Whether the engine must still keep the announced tables (false once aborted or done). */
int phases_keeps_pending(const struct phases *m);

/*
 * The tables of the last routing were written to the switches.  Returns 1 when the machine
 * can move on (the owner should step it soon), else 0.
 */
int phases_note_programmed(struct phases *m, unsigned changed_blocks, unsigned changed_switches);

void phases_status(const struct phases *m, struct phases_status *out);

#endif
