/*
 * walker.h - the verifier's walk, shared inside check/ only: verify.c walks the paths and
 * searches the dependency graph, verify_feed.c runs the same walk beside a routing.  Nothing
 * outside check/ includes it.
 */
#ifndef SARNUE_CHECK_WALKER_H
#define SARNUE_CHECK_WALKER_H

#include <stddef.h>
#include <stdint.h>

#include "check/mcastcheck.h"
#include "check/verify.h"
#include "fabric/fabric.h"
#include "fabric/routing.h"

struct dep_set {
	uint64_t *keys; /* 0 = empty; key = (from << 32 | to) + 1, vertex = vl << 28 | channel */
	uint64_t *list; /* [cap / 2]: the keys in the order they came, for passes over the set */
	size_t cap, count;
};

/*
 * Source LIDs whose pairs share one outcome towards every destination: their packets enter the
 * fabric at the same switch with the same SL.  Without per-port SL2VL the VL out of a switch does
 * not depend on the in-port, and the channel leaving an end port adds no dependency, so one walk
 * from the switch stands for them all; an end port's path is one link longer than port 0's.
 */
struct source_group {
	uint32_t sw;	    /* entry switch, FAB_NONE: no active link to a switch */
	uint32_t in_ch;	    /* an end port member's channel, FAB_NONE when there is none */
	uint32_t ca_lids;   /* LIDs of end ports (ports without a link included) */
	uint32_t self_lids; /* LIDs of switch port 0s: the switch itself */
	uint32_t skip_ca;   /* of those, the destination port's own: it sends nothing to itself */
	uint32_t skip_self;
	uint16_t sl_lid; /* a member LID: its path SL is the group's */
	uint8_t sl;	 /* that SL towards the destination in hand, with per-source SLs */
	uint8_t state;	 /* this pass's outcome, W_NONE when the group has no pair in it */
	unsigned hops;	 /* links from sw onwards when state is W_REACH */
};

struct source_groups {
	uint32_t n;
	struct source_group *g;
	uint32_t *elem_first; /* [nendports + 1]: each end port's elements, one per LID */
	uint32_t *elem_group; /* the group of each element */
	uint32_t *endport_of; /* [nports]: index into f->endports, FAB_NONE when none */
};

#define WALKER_SEEN_VLS 8
#define WALKER_SEEN_MAX_BYTES (256ull << 20)
#define WALKER_BY_LID_MAX_BYTES ROUTING_BY_LID_MAX_BYTES

struct walker {
	const struct fabric *f;
	const struct routing *r;
	struct verify_report *rep;
	struct dep_set deps;
	uint32_t *stamp; /* per (switch, VL out): pass number that filled state/hops */
	uint8_t *state;
	uint8_t *hops;
	uint32_t *path; /* switches of the walk in progress */
	uint32_t pass;
	uint64_t hop_sum, delivered;
	/*
	 * Turns already in deps, as bits: (switch, in port, out port) on one VL below seen_vls,
	 * entering and leaving on that VL.  Most steps of a walk repeat a turn another
	 * destination took, and a bit is cheaper to test than a probe into deps' large hash
	 * table.  NULL: every step goes to deps.
	 */
	uint32_t *turn_off; /* [nswitches + 1]: each switch's first turn */
	uint64_t *seen;
	/*
	 * VLs with bits: the VLs the routing says it uses, at most WALKER_SEEN_VLS.  A step on a
	 * higher VL goes to deps, so a wrong count costs time, never a missed dependency.  With
	 * one VL the bits take an eighth of the memory and stay in cache: on a Fishnet of 9,702
	 * switches the bit test was half of the walks' time with eight.
	 */
	unsigned seen_vls;
	uint8_t *lft_by_lid; /* [lft_len * nswitches] the LFTs LID by LID, or NULL (verify.c) */
	int oom;
	struct source_groups *groups;	      /* NULL: every pair is walked on its own */
	const struct progress_hook *progress; /* destination LIDs checked; NULL: nobody listens */
	unsigned progress_end;	 /* LID progress counts up to, 0: max_lid (the lower half's end) */
	struct mcast_deps mdeps; /* the multicast trees' dependencies, for the cycle's labels */
};

/* Groups and scratch of a walker over f and r; 0, or -1 without memory (then free it). */
int verify_walker_open(struct walker *w, struct source_groups *groups, const struct fabric *f,
		       const struct routing *r, struct verify_report *rep);
void verify_walker_free(struct walker *w, struct source_groups *groups);

/* The destination LIDs in [from, to); -1 without memory. */
int verify_walker_check(struct walker *w, unsigned from, unsigned to);

/* Mean hops, the multicast trees and the credit-loop search once every destination is checked. */
int verify_walker_close(struct walker *w);

#endif
