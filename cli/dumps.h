/*
 * dumps.h - the routing a subcommand inspects, from OpenSM's dump files: opensm-subnet.lst and
 * opensm.fdbs, with sarnue's path-SL and SL2VL dumps when present.  A dump directory names them
 * all; a file named on its own wins over the directory's.
 */
#ifndef SARNUE_CLI_DUMPS_H
#define SARNUE_CLI_DUMPS_H

#include "fabric/fabric.h"
#include "fabric/routing.h"

struct dump_inputs {
	const char *dir;	     /* or NULL */
	const char *subnet, *fdbs;   /* required when dir is NULL */
	const char *path_sl, *sl2vl; /* optional */
	unsigned lmc;		     /* not recorded in the dumps */
};

/*
 * Loads f (fabric_init()ed) and r (not yet initialised) from the inputs.  Returns 0, or -1 with
 * err naming the file and line; the caller frees f and r either way (routing_free() copes with
 * a routing that was never initialised when zeroed).
 */
int dumps_load(const struct dump_inputs *in, struct fabric *f, struct routing *r,
	       struct fab_error *err);

#endif
