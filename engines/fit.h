/*
 * fit.h - fits whole destinations of a destination-based routing into a few acyclic virtual
 * layers, keeping their paths.  sar-dfsssp uses it when its per-path layering needs more layers
 * than there are VLs: the destinations that fit keep the scheduling-aware paths, and only the
 * others are rerouted (by Nue, on a VL of their own).
 */
#ifndef SARNUE_FIT_H
#define SARNUE_FIT_H

#include "fabric/fabric.h"
#include "fabric/routing.h"
#include "engines/mcasttree.h"

#define FIT_NONE 0xff

/*
 * Visits the destination LIDs in order[0..n) and puts each into the first of layers 0..nlayers-1
 * whose channel dependency graph stays acyclic with all of r's paths towards it.  layer_of
 * [r->lft_len] receives the layer, or FIT_NONE for a destination that fits nowhere.  When one
 * of the first must_fit destinations fits nowhere, the visit stops there (the rest FIT_NONE).
 * Returns the number placed, or -1 on allocation failure (err says so).  With reserve, layer 0
 * (SL 0, VL 0) holds every turn of that multicast tree before any destination.
 */
int64_t fit_destinations(const struct fabric *f, const struct routing *r, const uint32_t *order,
			 uint32_t n, uint32_t must_fit, unsigned nlayers,
			 const struct mcast_tree *reserve, uint8_t *layer_of,
			 struct fab_error *err);

#endif
