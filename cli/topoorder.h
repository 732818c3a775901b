/*
 * topoorder.h - what the two halves of `sarnue topo-order` share: the hosts of a recognised fat
 * tree in topology order, chosen by topoorder.c, and the output formats topoformat.c writes.
 */
#ifndef SARNUE_TOPOORDER_H
#define SARNUE_TOPOORDER_H

#include <stdint.h>
#include <stdio.h>

#include "fabric/fabric.h"
#include "fabric/fattree.h"
#include "lib/hostlist.h"

enum topo_format {
	TOPO_LINES,
	TOPO_SLURM_ARBITRARY,
	TOPO_HOSTFILE,
	TOPO_TOPOLOGY_CONF,
	TOPO_JSON,
};

struct topo_hosts {
	struct fabric fabric;
	const struct fabric *f; /* &fabric */
	struct fat_tree tree;
	/*
	 * Every host once, hosts on leaves first in topology order (nleaf of them), then the hosts
	 * on switches above the leaves in LID order; port[k] is host k's first CA port in that
	 * order.  by_name[0..nnames) lists the hosts sorted by name.
	 */
	struct hostlist names;
	uint32_t n, nleaf, nnames;
	uint32_t *port, *by_name;
	uint8_t *selected; /* [n]: to be printed */
	uint32_t nselected;
};

/* Writes the selected hosts in order; -1 when out of memory or on a write error. */
int topo_write(const struct topo_hosts *h, enum topo_format fmt, const char *topology, FILE *out);

#endif
