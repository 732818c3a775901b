/*
 * layers.h - virtual-layer assignment for destination-based routing (DFSSSP, thesis section
 * 3.3.8, Algorithm 3.6): every path starts in layer 0; while a layer's channel dependency graph
 * has a cycle, the paths inducing the cycle's weakest dependency (fewest source/destination
 * pairs) move to the next layer.  Spare VLs then go to the most loaded layers.
 *
 * A path is (source switch, destination LID): all end ports behind one switch share the route
 * onward, so one layer per such pair is enough and fits ROUTING_SL_PER_SWITCH_DLID.  The
 * dependency graph is never built: its edges are (in channel, out channel) pairs at each
 * switch, numbered densely, and each layer keeps only a pair count per edge.
 */
#ifndef SARNUE_LAYERS_H
#define SARNUE_LAYERS_H

#include "fabric/fabric.h"
#include "fabric/routing.h"
#include "engines/mcasttree.h"
#include "lib/progress.h"

#define LAYERS_MAX ROUTING_MAX_SL
/* The sample layered first on large fabrics: a destination LID of every 2nd switch ... */
#define LAYERS_PROBE_EVERY 2
/* ... from this many switches on (see struct layers_watch). */
#define LAYERS_PROBE_FROM 1000

struct layers_result {
	unsigned needed; /* layers the paths occupy */
	int capped;	 /* the layers were not counted to the end: needed is a lower bound */
	/*
	 * Stopped by layers_watch.judge: the layers finished before (2 or more); needed, the
	 * limit + 1, is then a judgement, not a bound.  0: not stopped so.
	 */
	unsigned judged;
	/*
	 * Judged by a sample of the destinations, which overflowed on its own (see layers_assign):
	 * the sample's destination LIDs; paths, moved, cycles and pairs are then the sample's.
	 * 0: not so.
	 */
	uint32_t probed;
	uint64_t paths;	 /* (source switch, destination LID) paths with at least one hop */
	uint64_t moved;	 /* path moves to a higher layer */
	uint64_t cycles; /* cycles broken */
	uint64_t pairs[LAYERS_MAX]; /* (source LID, destination LID) pairs per layer */
};

/*
 * Told at most once, from layers_assign's thread, when the layering looks set to need more
 * layers than its limit: 70% or more of all paths leave layer 0, or a layer (from the third on)
 * starts with at least half as many paths as the one before it, or, with a limit of 2, a path
 * leaves layer 0.  Only a guess, which changes nothing in the layering: the layers of a layering
 * that fits within the limit shrink faster (a dragonfly of 16 groups: each about a fifth of the
 * one before; a random graph that overflows 8 layers: three quarters), and fewer of its paths
 * leave layer 0 (fat trees, dragonflies and the exascale families of 40,000 hosts: at most 54%;
 * tori and random graphs that overflow 8 layers: 79% to 91%).  r is the routing being layered.
 */
struct layers_watch {
	void (*overflow_likely)(void *arg, const struct routing *r); /* NULL: nobody is told */
	void *arg;
	/*
	 * Stop the layering as overflowing when, from the third layer on, the layers shrink so
	 * slowly that an estimate of the layers needed comes to twice the limit or more, while two
	 * layers of the limit are still to come (so with a limit of 5 or more): see
	 * judged_overflowing in vlassign.c.
	 */
	int judge;
	/*
	 * With judge, from this many switches on (0: LAYERS_PROBE_FROM) and a limit of 5 or more,
	 * a sample of the destinations is layered first; when it overflows, so is the whole judged.
	 */
	uint32_t probe_from;
	/* "layering paths": layers started of the limit (of LAYERS_MAX without one); or NULL */
	const struct progress_hook *progress;
};

/*
 * Assigns a layer to every path of r (complete, loop-free LFTs for f): layer[sw * r->lft_len +
 * dlid], zero on entry.  With reserve, every turn of that multicast tree stays in layer 0's
 * graph and only unicast paths move, so the tree fits beside layer 0's routes.  With limit > 0
 * it stops once paths are left for layer limit (they cannot all fit into limit VLs), and
 * res->needed is then limit + 1, a lower bound; the layers stay unfinished.  watch (or NULL)
 * hears of each layer started and when an overflow looks likely; with watch->judge the layering
 * may also stop before, judged to overflow (res->judged, res->capped, needed limit + 1), and on
 * large fabrics a sample of the destinations is layered first (watch->probe_from): when it
 * overflows, the layering of all paths is not started (res->probed; layer[] is then the sample's).
 * Returns 0, or -1 with err set (out of memory, broken LFTs).
 */
int layers_assign(const struct fabric *f, const struct routing *r, uint8_t *layer,
		  const struct mcast_tree *reserve, unsigned limit,
		  const struct layers_watch *watch, struct layers_result *res,
		  struct fab_error *err);

/* Destination LIDs with a path in layer limit or beyond, of layer[] as layers_assign left it. */
uint32_t layers_beyond(const struct fabric *f, const struct routing *r, const uint8_t *layer,
		       unsigned limit);

/*
 * Splits layers over vls >= res->needed VLs, each spare VL to the layer with the most pairs per
 * VL (DFSSSP's balancing), and rewrites layer[] in place into SLs 0..vls-1, spreading a
 * layer's paths round-robin over its VLs: any subset of an acyclic path set is acyclic.
 */
void layers_spread(const struct fabric *f, const struct routing *r, uint8_t *layer,
		   const struct layers_result *res, unsigned vls);

#endif
