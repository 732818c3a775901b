/*
 * subnet.h - OpenSM's discovered subnet as sarnue's fabric model (subnet.c), the input of every
 * routing inside OpenSM.
 */
#ifndef SARNUE_PLUGIN_SUBNET_H
#define SARNUE_PLUGIN_SUBNET_H

#include <opensm/osm_config.h> /* first: see context.h */
#include <opensm/osm_subnet.h>

#include "fabric/fabric.h"

/* Builds the model of OpenSM's current subnet; the caller finalizes nothing. */
int subnet_to_fabric(osm_subn_t *subn, struct fabric *f, struct fab_error *err);

#endif
