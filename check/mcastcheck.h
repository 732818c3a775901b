/*
 * mcastcheck.h - the multicast half of the verifier: checks each group's tree (one connected,
 * acyclic tree that forwards both ways and reaches every member) and collects the channel
 * dependencies its packets create, which verify.c adds to the unicast ones of the same VL.
 */
#ifndef SARNUE_MCASTCHECK_H
#define SARNUE_MCASTCHECK_H

#include "check/verify.h"
#include "fabric/fabric.h"
#include "fabric/routing.h"

/* A dependency is a pair of vertices, vertex = VL << 28 | channel (the port it leaves by). */
#define DEP_VERTEX(vl, ch) (((uint32_t)(vl) << 28) | (ch))
#define DEP_VERTEX_VL(v) ((v) >> 28)
#define DEP_VERTEX_CH(v) ((v)&0x0fffffff)
#define DEP_KEY(from, to) ((((uint64_t)(from) << 32) | (to)) + 1)

struct mcast_deps {
	uint64_t *key;	 /* DEP_KEY(from, to), ascending after mcast_deps_sort */
	uint16_t *mlid;	 /* the group that made it (the first one, when several did) */
	uint8_t *shared; /* set by the caller: the unicast routes make it too */
	size_t n, cap;
};

/*
 * Checks the trees of r->mcast over f into rep (mcast_* fields) and appends their
 * switch-to-switch dependencies to out, unsorted.  0, or -1 without memory.
 */
int mcast_check_trees(const struct fabric *f, const struct routing *r, struct verify_report *rep,
		      struct mcast_deps *out);

/* Sorts by key and keeps one of each key; 0, or -1 without memory. */
int mcast_deps_sort(struct mcast_deps *d);

/* Index of key in the sorted set, or -1. */
long mcast_deps_find(const struct mcast_deps *d, uint64_t key);

void mcast_deps_free(struct mcast_deps *d);

#endif
