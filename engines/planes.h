/*
 * planes.h - the two routing planes of the five-phase update (LMC >= 1): base LIDs by the
 * selected engine on VLs 0..n-2, the other LIDs of every end port by an escape routing (Up*\/Down*
 * or Nue on one layer) on VL n-1, merged into one routing that the verifier checks as a whole.
 *
 * The escape plane is kept between routings with the fingerprint of the topology it was made
 * for, so that a reroute for a new job map leaves every high-LID entry, its SL and its VL exactly
 * as the switches hold them: connections moved to the high LIDs see no change while the base
 * LIDs are rewritten.  Only a topology change (or a change of the escape options or of the VL
 * count) computes it again.
 */
#ifndef SARNUE_PLANES_H
#define SARNUE_PLANES_H

#include "fabric/fabric.h"
#include "engines/options.h"
#include "fabric/routing.h"

struct escape_plane {
	int valid;
	uint64_t fingerprint;	/* of the fabric it was computed for */
	uint64_t opts_key;	/* escape option, VL and Up*\/Down* roots it was computed with */
	unsigned vl;		/* its SL and VL: n - 1 */
	const char *engine;	/* "sar-updn" or "sar-nue" */
	uint64_t max_efi;	/* maximum EFI of the routes to high LIDs; 0 when not measured */
	uint64_t other_max_efi; /* escape=auto: that of the routing not kept */
	struct routing r;	/* LFTs and hops towards the high LIDs (one VL, SL 0) */
};

void escape_plane_init(struct escape_plane *e);
void escape_plane_free(struct escape_plane *e);

/* True when e was computed for fabric fingerprint fp with these options and VL. */
int escape_plane_matches(const struct escape_plane *e, uint64_t fp, const struct sarnue_options *o,
			 unsigned vl);

/*
 * Routes the high LIDs of f with the escape routing the options select (escape=auto: both, the
 * lower maximum EFI wins, ties to Up*\/Down*) into e, replacing what it held.  fp is f's
 * fingerprint.  Returns 0, or -1 with err.
 */
int escape_plane_route(const struct fabric *f, uint64_t fp, const struct sarnue_options *o,
		       unsigned vl, struct escape_plane *e, struct fab_error *err);

/*
 * Fills out (routing_init'ed for f) with base's tables for the base LIDs and e's for the high
 * LIDs: SL e->vl on every path to a high LID, mapped to VL e->vl everywhere; base's SLs and their
 * VLs unchanged.  Returns 0, or -1 with err (out of memory, or a base SL on the escape VL).
 */
int planes_merge(const struct fabric *f, const struct routing *base, const struct escape_plane *e,
		 struct routing *out, struct fab_error *err);

#endif
