/*
 * updn.h - Up* / Down* routing on one virtual lane, the engine behind `sar-updn` and the escape
 * plane (high LIDs) of the five-phase update.
 */
#ifndef SARNUE_UPDN_H
#define SARNUE_UPDN_H

#include "check/verify.h"
#include "fabric/fabric.h"
#include "fabric/routing.h"
#include "lib/progress.h"

#define UPDN_MAX_ROOTS SARNUE_MAX_ROOTS

struct updn_opts {
	const uint64_t *root_guids; /* operator's root switches; NULL for automatic */
	unsigned nroots;
	const struct progress_hook *progress; /* LIDs routed; NULL: nobody listens */
};

struct updn_report {
	unsigned nroots;
	uint64_t root_guids[UPDN_MAX_ROOTS];
	const char *root_source; /* "option", "top level of the tree", "most central switch" */
	unsigned max_rank;
	uint32_t lids_routed;
	uint64_t turn_routes; /* switch-LID entries routed towards the turn switch */
	/*
	 * When the roots chosen first could not route every LID and the single most central
	 * switch took over: how many there were and why, for the warning that says so.
	 */
	unsigned fell_back_from;
	char fall_back_why[200];
	/*
	 * What the fall-back costs, when efi_known: the maximum edge forwarding index
	 * (check/metrics.h) of the single-root routing, and of the chosen roots' attempt, routed
	 * as far as it went, with the routes between end ports it did not deliver.
	 */
	int efi_known;
	uint64_t fallback_max_efi, roots_max_efi, roots_unrouted;
	/*
	 * Set when the engine verified the tables it returns (to keep turn routes it must): the
	 * report, and the time it took, so the caller need not verify them again.
	 */
	int verified;
	struct verify_report verify;
	double verify_seconds;
};

/*
 * Fills r (prepared with routing_init for f) with deadlock-free Up* / Down* tables: every path
 * climbs towards the roots and then only descends, so the channel dependency graph is acyclic.
 * Returns 0, or -1 with err naming the switch or option at fault.
 */
int updn_route(const struct fabric *f, const struct updn_opts *opts, struct routing *r,
	       struct updn_report *rep, struct fab_error *err);

#endif
