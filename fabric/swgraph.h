/*
 * swgraph.h - arrays derived from the fabric's switch adjacency (fabric.h's CSR) that the
 * SSSP-family engines and the virtual-layer assignment share: for every switch-to-switch
 * channel (a CSR edge, named by its index e) the switch it leaves and the one it reaches, the
 * channel back, and for every port the channel leaving it.
 */
#ifndef SARNUE_SWGRAPH_H
#define SARNUE_SWGRAPH_H

#include "fabric/fabric.h"
#include "lib/assert.h"

struct swgraph {
	uint32_t nsw, ne;
	uint32_t *from;	   /* [ne] switch the channel leaves */
	uint32_t *to;	   /* [ne] switch the channel reaches */
	uint32_t *rev;	   /* [ne] channel of the same link in the other direction */
	uint32_t *adj_pos; /* [f->nports] channel leaving the port, FAB_NONE if none */
};

int swgraph_build(struct swgraph *g, const struct fabric *f);

/*
 * The neighbour switch of each CSR edge of f (sw_adj_port order), in a new array of
 * f->sw_adj_off[f->nswitches] + 1 entries; NULL when memory is short.
 */
uint32_t *swgraph_neighbours(const struct fabric *f);

/*
 * The most central of the eligible switches (eligible NULL: every switch): the smallest
 * eccentricity over live switch-to-switch links, then the smallest sum of distances, then the
 * lowest index (GUID order).  With max_candidates > 0 only that many eligible switches, spread
 * evenly in index order, are measured: one breadth-first search each.  FAB_NONE when no switch
 * is eligible or memory runs out.  The root of sar-updn on a direct network and of the
 * multicast trees.
 */
uint32_t swgraph_central_switch(const struct fabric *f, const uint8_t *eligible,
				uint32_t max_candidates);
void swgraph_free(struct swgraph *g);

/* Port number on its switch of channel e. */
static inline unsigned swgraph_port_num(const struct fabric *f, uint32_t e)
{
	sn_assert(e < f->sw_adj_off[f->nswitches]);
	return f->ports[f->sw_adj_port[e]].num;
}

/* Channel leaving switch s through port number num, FAB_NONE when that is no switch link. */
static inline uint32_t swgraph_channel(const struct fabric *f, const struct swgraph *g, uint32_t s,
				       unsigned num)
{
	const struct fab_node *n;

	sn_assert(s < f->nswitches);
	n = &f->nodes[f->switches[s]];
	if (num == 0 || num > n->nports)
		return FAB_NONE;
	return g->adj_pos[n->first_port + num];
}

#endif
