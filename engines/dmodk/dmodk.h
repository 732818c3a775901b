/*
 * dmodk.h - D-mod-k routing on fat trees, the engine behind `sar-dmodk` (Zahavi, "D-Mod-K
 * routing providing non-blocking traffic for shift permutations on real life fat trees").
 *
 * The fabric must be recognised as a fat tree (fabric/fattree.h).  Terminals are numbered in
 * topology order; a level-l switch sends destination j up through its port (j / W_l) mod U_l
 * (W_l the product of the parent counts of the levels below, U_l its parents x parallel links)
 * and down the one way that leads to j, over the parallel link the same formula names.  Routes
 * are up*, then down*: deadlock-free on one VL.  On a complete tree every shift permutation in
 * topology order loads each channel with at most one route.
 */
#ifndef SARNUE_DMODK_H
#define SARNUE_DMODK_H

#include "fabric/fabric.h"
#include "fabric/routing.h"
#include "lib/progress.h"

struct dmodk_report {
	char shape[160]; /* the tree recognised (fat_tree.shape) */
	unsigned levels;
	uint32_t terminals; /* end ports on leaves, numbered in topology order */
	uint32_t service;   /* end ports on switches above the leaves */
	uint32_t lids_routed;
	uint32_t missing_links; /* up links a complete tree of these widths would have more */
	uint64_t entries;	/* LFT entries written (switch, LID), the delivering switch's too */
	uint64_t moved;		/* entries not on their closed-form port (a link was missing) */
	uint64_t turn_entries;	/* entries of switches with no up*down* route, via the turn leaf */
	uint64_t efi_bound;	/* cut lower bound of the maximum EFI (fat_tree_efi_bound) */
	uint64_t turn_guid;	/* the leaf where those routes turn, 0 when none was needed */
};

/*
 * Fills r (routing_init done for f) with D-mod-k tables on one VL.  Returns 0, or -1 with err
 * saying why: not a fat tree (the reason), or a destination some switch cannot reach.
 */
int dmodk_route(const struct fabric *f, struct routing *r, struct dmodk_report *rep,
		struct fab_error *err);

/* Same, reporting the LIDs routed through progress (may be NULL). */
int dmodk_route_progress(const struct fabric *f, const struct progress_hook *progress,
			 struct routing *r, struct dmodk_report *rep, struct fab_error *err);

#endif
