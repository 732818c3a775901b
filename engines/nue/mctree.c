/*
 * mctree.c - the multicast tree inside Nue.  Layer 0 (SL 0, VL 0) takes the spanning tree every
 * sarnue engine keeps for multicast (mcast_tree_choose) as its escape tree, and all of the
 * tree's turns are used in its dependency graph before any route: routes then never close a
 * cycle with them, and a multicast group of SL 0, whose packets take exactly such turns along
 * its part of the tree, fits beside the unicast routes by construction.  The tree's turns alone
 * form no cycle, and the escape paths of the layer are among them (Lemma 6.4 still holds).
 */
#include <stdlib.h>
#include <string.h>

#include "engines/mcasttree.h"
#include "engines/nue/nue_private.h"
#include "lib/assert.h"

void nue_mcast_free(struct nue *n)
{
	mcast_tree_free(&n->mc);
	free(n->mc_up);
	free(n->mc_order);
	n->mc_up = n->mc_order = NULL;
}

/* Switches in breadth-first order from the root: by depth, a counting sort. */
static void order_by_depth(struct nue *n)
{
	uint32_t s, d, at = 0, maxd = 0;

	for (s = 0; s < n->nsw; s++)
		if (n->mc.depth[s] > maxd)
			maxd = n->mc.depth[s];
	for (d = 0; d <= maxd; d++)
		for (s = 0; s < n->nsw; s++)
			if (n->mc.depth[s] == d)
				n->mc_order[at++] = s;
	sn_assert(at == n->nsw);
}

int nue_mcast_tree(struct nue *n)
{
	uint32_t s;

	if (mcast_tree_choose(n->f, &n->mc))
		return -1;
	n->mc_up = malloc(sizeof(uint32_t) * (n->nsw + 1));
	n->mc_order = malloc(sizeof(uint32_t) * (n->nsw + 1));
	if (!n->mc_up || !n->mc_order)
		return -1;
	/* Nue routes connected fabrics only (check_fabric): the tree spans every switch. */
	sn_assert(n->mc.nreached == n->nsw);
	for (s = 0; s < n->nsw; s++) {
		n->mc_up[s] =
			n->mc.parent[s] == FAB_NONE ? FAB_NONE : n->g.port_ch[n->mc.up_port[s]];
		sn_assert(n->mc.parent[s] == FAB_NONE ||
			  (n->mc_up[s] != FAB_NONE && n->g.head[n->mc_up[s]] == n->mc.parent[s]));
	}
	order_by_depth(n);
	return 0;
}

/* The escape tree of layer 0: the multicast tree, in place of nue_escape_tree's. */
void nue_mcast_escape_tree(struct nue *n)
{
	memcpy(n->esc_up, n->mc_up, sizeof(uint32_t) * n->nsw);
	memcpy(n->esc_order, n->mc_order, sizeof(uint32_t) * n->nsw);
	n->root = n->mc.root;
}

static int mark_turn(void *arg, uint32_t in_port, uint32_t out_port)
{
	struct nue *n = arg;

	return cdg_try_add(&n->g, n->g.port_ch[in_port], n->g.port_ch[out_port], CDG_USED) < 0;
}

/* Every turn of the tree used in the selected layer: in by one tree link, out by another. */
int nue_mcast_mark_turns(struct nue *n)
{
	return mcast_tree_turns(n->f, &n->mc, mark_turn, n) ? -1 : 0;
}
