/*
 * live.h - reading the fabric and its routing tables from the switches themselves, through
 * libibumad/libibmad (a real HCA, or ibsim under umad2sim), for `sarnue check --live`.
 */
#ifndef SARNUE_LIVE_H
#define SARNUE_LIVE_H

#include "fabric/fabric.h"
#include "fabric/routing.h"

/*
 * Discovers the subnet from the local port (ca NULL and port 0: the first active one), builds
 * f (finalized, LIDs and LMC as programmed) and reads every switch's LFT and SL2VL tables into r.
 */
int live_load(struct fabric *f, struct routing *r, const char *ca, int port, struct fab_error *err);

#endif
