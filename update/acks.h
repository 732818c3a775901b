/*
 * acks.h - who must still acknowledge an UnPath or RePath report of the five-phase update.
 *
 * The plugin keeps one table of subscribers (ports with an InformInfo subscription for the
 * path traps), starts waiting for one (sequence number, kind) at a time, records trap 144
 * acknowledgements, and after each retry interval lets silent subscribers miss a round until
 * they expire.  No OpenSM types: plugin/notify.c feeds it, unit tests drive it directly.
 *
 * Rules (doc/five-phase.md): an acknowledgement counts once per (port, sequence, kind);
 * repeats are duplicates, other sequence numbers or kinds are stale, ports that are not
 * subscribers are unknown, and none of them changes what is pending.  An expired subscriber is
 * not waited for in later updates until it acknowledges something again.
 */
#ifndef SARNUE_ACKS_H
#define SARNUE_ACKS_H

#include <stddef.h>
#include <stdint.h>

struct acks_port {
	uint64_t guid;
	uint16_t lid;
};

struct acks_sub {
	uint64_t guid;
	uint16_t lid;
	int expired;	 /* missed too many rounds: not waited for */
	int acked;	 /* acknowledged the current (seq, kind) */
	unsigned missed; /* retry rounds of the current report without an acknowledgement */
};

enum acks_verdict {
	ACKS_NEW,	/* first acknowledgement of the current report by this port */
	ACKS_DUPLICATE, /* this port had already acknowledged it */
	ACKS_STALE,	/* another sequence number or kind, or no report outstanding */
	ACKS_UNKNOWN,	/* not a subscriber */
	ACKS_NOT_DONE,	/* the current report, but the handler failed or still runs */
};

struct acks {
	struct acks_sub *subs;
	size_t nsubs, cap;
	uint32_t seq; /* report waited for; 0: none */
	int kind;
	unsigned max_rounds; /* rounds a subscriber may miss before it expires */
	unsigned long duplicates, stale, unknown, revived, not_done;
};

void acks_init(struct acks *a, unsigned max_rounds);
void acks_free(struct acks *a);

/*
 * Makes ports (duplicates allowed) the subscriber set: new ports join, absent ones leave,
 * known ones keep their state.  Returns 0, or -1 when out of memory (the set is unchanged).
 */
int acks_sync(struct acks *a, const struct acks_port *ports, size_t n);

/* Starts waiting for (seq, kind): every subscriber that has not expired is pending. */
void acks_begin(struct acks *a, uint32_t seq, int kind);

/*
 * Records an acknowledgement; guid 0 means "match by LID".  A non-zero status (the host's
 * handler failed or still runs) proves the subscriber alive, so it does not expire, but it stays
 * pending: the update's timeout policy decides.
 */
enum acks_verdict acks_record(struct acks *a, uint64_t guid, uint16_t lid, uint32_t seq, int kind,
			      unsigned status);

/* Subscribers still pending for the current report. */
size_t acks_pending(const struct acks *a);

/*
 * One retry interval passed: every pending subscriber misses a round; those that missed more
 * than max_rounds expire.  Up to max expired ports are copied to out.  Returns how many
 * expired in this round.
 */
size_t acks_round(struct acks *a, struct acks_port *out, size_t max);

/* Stops waiting (the update moved on or was aborted). */
void acks_end(struct acks *a);

const char *acks_verdict_name(enum acks_verdict v);

#endif
