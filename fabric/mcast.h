/*
 * mcast.h - multicast groups and their spanning trees, independent of OpenSM.
 *
 * For every group: its MLID, the SL its packets carry (the SL the SA hands out in the group's
 * MCMemberRecord), its member ports, and the multicast forwarding table entry of every switch on
 * its tree, a port mask (bit 0: the switch itself).  A switch forwards a packet of the group out
 * of every port in its mask except the one it came in by, so the tree carries packets in both
 * directions and every channel pair (in, out) at a tree switch is a dependency.
 *
 * The plugin fills it from OpenSM's groups and the trees an engine builds, the loader from
 * opensm.mcfdbs and the SA dump; the verifier (check/verify.c) checks the trees and adds their
 * dependencies to the unicast ones of the same VL.  Flat arrays: a group's members and entries
 * are runs in members[] and entries[].
 */
#ifndef SARNUE_MCAST_H
#define SARNUE_MCAST_H

#include <stdint.h>

#include "fabric/fabric.h"

#define MCAST_MASK_WORDS 4 /* port numbers 0..255 */
#define MCAST_FIRST_MLID 0xc000u
#define MCAST_SL_UNKNOWN 0xff /* the loader found no SL for the group: the verifier assumes 0 */

struct mcast_entry {
	uint32_t sw;			  /* index among switches */
	uint64_t ports[MCAST_MASK_WORDS]; /* bit p: forward out of port p */
};

struct mcast_group {
	uint16_t mlid;
	uint8_t sl;
	uint32_t first_member, nmembers; /* in mcast.members */
	uint32_t first_entry, nentries;	 /* in mcast.entries, ascending switch index */
};

struct mcast {
	uint32_t ngroups, groups_cap;
	struct mcast_group *groups;
	uint32_t nmembers, members_cap;
	uint32_t *members; /* port index of each member: an end port, or a switch's port 0 */
	uint32_t nentries, entries_cap;
	struct mcast_entry *entries;
};

void mcast_init(struct mcast *m);
void mcast_free(struct mcast *m);

/* Empties m, keeping its memory. */
void mcast_clear(struct mcast *m);

/*
 * Builder: mcast_begin_group, then members and ports in any order and any number of times,
 * then mcast_end_group (sorts the group's entries by switch and merges masks of one switch).
 * Each returns 0, or -1 without memory.
 */
int mcast_begin_group(struct mcast *m, uint16_t mlid, uint8_t sl);
int mcast_add_member(struct mcast *m, uint32_t port);
int mcast_set_port(struct mcast *m, uint32_t sw, unsigned port);
void mcast_end_group(struct mcast *m);

static inline int mcast_mask_has(const uint64_t *mask, unsigned port)
{
	return (mask[port / 64] >> (port % 64)) & 1;
}

static inline void mcast_mask_set(uint64_t *mask, unsigned port)
{
	mask[port / 64] |= 1ull << (port % 64);
}

/* The entry of switch sw in group g, NULL when sw is not on its tree (binary search). */
const struct mcast_entry *mcast_find_entry(const struct mcast *m, const struct mcast_group *g,
					   uint32_t sw);

/* The group with this MLID, NULL when none. */
const struct mcast_group *mcast_find_group(const struct mcast *m, uint16_t mlid);

#endif
