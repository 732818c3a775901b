/*
 * mcast_glue.h - multicast spanning trees for sarnue's engines inside OpenSM: the
 * mcast_build_stree callback's work, per engine.
 */
#ifndef SARNUE_PLUGIN_MCAST_GLUE_H
#define SARNUE_PLUGIN_MCAST_GLUE_H

#include "plugin/context.h"
#include "fabric/fabric.h"
#include "fabric/routing.h"

struct mcast_state;

/*
 * spread_over_tops: the engine routes a fat tree Up*\/Down* with its top level as roots, so each
 * group's tree may descend from its own top switch (mcast_spread_init).
 */
struct mcast_state *mcast_state_new(int spread_over_tops);
void mcast_state_free(struct mcast_state *s);

/* A new routing begins: the trees built for the last one are forgotten (OpenSM rebuilds all). */
void mcast_state_reset(struct mcast_state *s);

/*
 * Builds the tree of one multicast group (an MLID and its groups) for the routing in f and r,
 * verified together with the unicast routes and every tree built since the routing, and sets
 * OpenSM's multicast tables of the switches on it (osm_switches[i]: OpenSM's switch for model
 * switch i).  IB_SUCCESS, or IB_ERROR with a log line saying why (the group then has no tree).
 */
ib_api_status_t mcast_glue_build(struct sarnue_plugin *p, const char *engine, struct mcast_state *s,
				 const struct fabric *f, struct routing *r,
				 osm_switch_t **osm_switches, osm_mgrp_box_t *mbox);

/*
 * OpenSM's reroute (console `reroute`, `sarnue ctl reroute`, a new job map) reprograms the LFTs
 * but leaves every multicast tree as it was, fitted to the old routes.  Queues every group to be
 * built again (osm_sm_reroute_mlid, as a join does), so each tree is checked against the new
 * routes; OpenSM builds them right after the reroute.
 */
void mcast_glue_after_reroute(struct sarnue_plugin *p);

#endif
