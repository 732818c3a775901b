/*
 * mcasttree.h - multicast trees on the fabric model, for every engine.
 *
 * One spanning tree of the switches descends from a root: each switch hangs below a neighbour
 * that comes before it in an order the engine gives (for Up*\/Down*, the engine's own (rank,
 * GUID) order), so any path inside the tree climbs to a common ancestor and then descends, and
 * its dependencies are turns that order allows.  A group uses the smallest subtree joining its
 * members' switches; all groups of one root share the tree, so their dependencies together are
 * those of one tree and cannot close a cycle among themselves.
 */
#ifndef SARNUE_MCASTTREE_H
#define SARNUE_MCASTTREE_H

#include <stdint.h>

#include "fabric/fabric.h"
#include "fabric/mcast.h"

struct mcast_tree {
	uint32_t nsw, root, nreached;
	uint32_t *parent; /* [nsw]: switch above, FAB_NONE for the root and switches off the tree */
	uint32_t *up_port; /* [nsw]: port index of the channel from the switch to its parent */
	uint32_t *depth;   /* [nsw]: links below the root */
	/* Scratch for mcast_tree_group. */
	uint32_t *stamp, *children, *child, *list, *holds; /* holds: a member's switch */
	uint32_t pass;
};

/*
 * The tree from root, taking a switch below a neighbour only when key[neighbour] < key[switch]
 * (key NULL: hops from the root, so every switch joins).  Switches the order keeps out are left
 * off (parent FAB_NONE).  0, or -1 without memory.
 */
int mcast_tree_build(const struct fabric *f, uint32_t root, const uint32_t *key,
		     struct mcast_tree *t);
void mcast_tree_free(struct mcast_tree *t);

/*
 * The spanning tree every sarnue engine keeps free for multicast on the VL of SL 0: breadth
 * first from the switch with end ports whose farthest switch is nearest (of up to 16 spread
 * over the fabric; all switches when none has end ports).  On a fat tree that root is a leaf,
 * and the tree climbs and descends as Up*\/Down* does.  The same fabric always gives the same
 * tree, so the engines that reserve its turns and the plugin that builds the groups' trees from
 * it agree without passing it along.  0, or -1 without memory.
 */
int mcast_tree_choose(const struct fabric *f, struct mcast_tree *t);

/*
 * Calls turn(arg, in, out) for every turn a packet can take inside tree t: at each switch, in
 * by one tree link and out by another.  in is the port index of the channel arriving (it leaves
 * the neighbour), out that of the channel leaving.  These are the dependencies an engine keeps
 * for multicast.  Stops at the first non-zero return and returns it; 0 when all were visited,
 * -1 without memory.
 */
int mcast_tree_turns(const struct fabric *f, const struct mcast_tree *t,
		     int (*turn)(void *arg, uint32_t in, uint32_t out), void *arg);

/* True when switch sw is on the tree. */
static inline int mcast_tree_has(const struct mcast_tree *t, uint32_t sw)
{
	return sw == t->root || t->parent[sw] != FAB_NONE;
}

/*
 * Adds the group's part of t to m, whose group in hand was begun with mcast_begin_group: the
 * ports of the smallest subtree that joins the switches of the members (port indices of end
 * ports or switch port 0s), each member's own port, and the members.  Returns how many members
 * it could not join (no link, or a switch off the tree), or -1 without memory.
 */
int mcast_tree_group(const struct fabric *f, struct mcast_tree *t, struct mcast *m,
		     const uint32_t *members, uint32_t nmembers);

/*
 * Groups spread over a fat tree's top switches.  On a fat tree routed Up*\/Down* with the top
 * level as roots (sar-dmodk, sar-updn), a tree that descends from any top switch, each switch
 * below a neighbour one level up, takes only turns that order allows: every packet climbs to
 * the top switch and descends.  So each group may take its own top switch, and the trees of
 * many groups share the top level's links instead of all crossing one switch.  A group takes
 * the top switch that carries the fewest members of the groups already spread there.
 */
#define MCAST_SPREAD_MLIDS 0x4000u

struct mcast_spread {
	uint32_t *key;	     /* [nswitches]: levels - level, the order a descending tree keeps */
	uint32_t *tops;	     /* the top level's switches, by index */
	uint64_t *load;	     /* [ntops]: members of the groups whose tree descends from each */
	uint32_t *group_top; /* [MCAST_SPREAD_MLIDS]: tops index + 1 of the MLID's tree, 0 none */
	uint32_t *group_weight; /* [MCAST_SPREAD_MLIDS]: what the MLID adds to its top's load */
	unsigned ntops;
};

/* 1 when f is a fat tree of 2 levels or more with at least 2 top switches, 0 when not (s
 * stays empty), -1 without memory. */
int mcast_spread_init(struct mcast_spread *s, const struct fabric *f);
void mcast_spread_free(struct mcast_spread *s);

/* The top switch (index into s->tops) for the group of mlid: least loaded without the group. */
unsigned mcast_spread_pick(const struct mcast_spread *s, uint16_t mlid);

/* The tree descending from top switch s->tops[top].  0, or -1 without memory. */
int mcast_spread_tree(const struct fabric *f, const struct mcast_spread *s, unsigned top,
		      struct mcast_tree *t);

/* Records that mlid's tree descends from tops[top] carrying weight members (top >= ntops:
 * the group has no spread tree any more). */
void mcast_spread_set(struct mcast_spread *s, uint16_t mlid, unsigned top, uint32_t weight);

#endif
