/*
 * fattree.h - recognises a fat tree from the switch graph alone (no names, no coordinates, no
 * root list) and describes it the way D-mod-k routing and the fat-tree metrics need it: switch
 * levels, the up ports of every switch in D-mod-k order, the subtree ("block") of every leaf at
 * every level, and the terminals in topology order (leaf by leaf, then port number).
 *
 * Levels: 1 are the leaves (the switches the hosts hang on), levels the top.  Every active
 * switch-to-switch link must join two adjacent levels.  End ports hung on switches above the
 * leaves (storage, service nodes) are allowed and counted apart: they are not in the topology
 * order of the hosts.
 *
 * D-mod-k naming (Zahavi, "D-Mod-K routing on real-life fat trees"): a level-l switch has
 * up_width[l] x up_parallel[l] up ports, grouped by parent.  The parents of the switches of one
 * group share a digit each (0 .. up_width[l] - 1, by switch index), so a port index q leads to
 * the parent of digit q mod up_width[l] over its (q / up_width[l])-th parallel link; the same q
 * means the same parent digit on every switch of a level, which is what the proofs need.
 */
#ifndef SARNUE_FATTREE_H
#define SARNUE_FATTREE_H

#include <stdint.h>

#include "fabric/fabric.h"

#define FAT_TREE_MAX_LEVELS 8

struct fat_tree {
	unsigned levels;    /* switch levels; 1 = leaves */
	uint32_t nswitches; /* the fabric's */
	uint8_t *level;	    /* [nswitches]: 1 .. levels */
	uint16_t *digit; /* [nswitches]: the switch's digit among its parent group (0 at leaves) */

	/* Up ports of switch s: up_port[up_off[s] .. up_off[s + 1]), port indices, by (parent
	 * digit, port number); every one leads to a switch one level higher. */
	uint32_t *up_off, *up_port;

	/* Per level l (1 .. levels - 1): the designed parents of a level-l switch (the largest
	 * parent group) and the most parallel links from one switch to one parent. */
	unsigned up_width[FAT_TREE_MAX_LEVELS + 1];
	unsigned up_parallel[FAT_TREE_MAX_LEVELS + 1];

	uint32_t nleaves;
	uint32_t *leaves; /* leaf switches in topology order */
	/*
	 * block[(l - 1) * nleaves + i]: the subtree at level l (1 .. levels) of the i-th leaf in
	 * topology order, as the position of its first leaf; leaves of one block are contiguous.
	 */
	uint32_t *block;

	uint32_t nterminals;  /* CA/router ports with a LID on leaves */
	uint32_t *terminals;  /* their port indices in topology order */
	uint32_t nservice;    /* CA/router ports with a LID on switches above the leaves */
	uint32_t *term_index; /* [nports]: position in terminals[], FAB_NONE for other ports */

	uint32_t missing_links; /* up links a complete tree of these widths would have more */
	int complete;		/* no missing links, same parents for every child of a group */
	char shape[160];	/* e.g. "3 levels, 256+256+256 switches, 16+16 up ports" */
};

void fat_tree_init(struct fat_tree *t);
void fat_tree_free(struct fat_tree *t);

/*
 * Fills t when f's switches form a fat tree of 1 .. FAT_TREE_MAX_LEVELS levels; otherwise -1
 * with why naming the first thing that is not (two linked switches on one level, a switch
 * without up links below the top, ...).  f must be finalized.
 */
int fat_tree_recognise(const struct fabric *f, struct fat_tree *t, struct fab_error *why);

/*
 * Lower bound of the maximum edge forwarding index over switch-to-switch channels for
 * all-to-all traffic among the terminals: over every block of every level below the top, the
 * routes leaving it (terminals inside x terminals outside) spread over its up links at best.
 */
uint64_t fat_tree_efi_bound(const struct fat_tree *t, const struct fabric *f);

/*
 * Every LID's place in topology order, for engines that route destinations one after another:
 * a terminal's LIDs get its position, the other LIDs (switches, service ports) come after all
 * terminals in LID order.  A new [f->max_lid + 1] array (free() it), or NULL out of memory.
 */
uint32_t *fat_tree_lid_rank(const struct fat_tree *t, const struct fabric *f);

/*
 * A rank for every switch (a new [nswitches] array, or NULL out of memory): by parent digit,
 * then index.  Engines that break ties by the lower switch then pick the same digit, the same
 * way up, on every switch of a level, as D-mod-k does, however the GUIDs number the switches.
 */
uint32_t *fat_tree_switch_rank(const struct fat_tree *t);

/* The leaf (index among switches) a terminal hangs on. */
uint32_t fat_tree_terminal_leaf(const struct fat_tree *t, const struct fabric *f, uint32_t pos);

#endif
