/*
 * planes.c - the two routing planes of an LMC >= 1 fabric, seen as fabrics of their own, and a
 * fingerprint of the topology.
 *
 * The five-phase update routes the base LID of every end port (and every switch LID) with the
 * selected engine and the other LIDs of each end port with an escape routing.  Rather than teach
 * every engine a destination filter, each plane is a view of the fabric whose LID table holds
 * only the plane's LIDs: the engines route exactly the LIDs lid_port[] names and skip the rest,
 * so they need no change.  A view shares the nodes, switches and adjacency of the fabric it was
 * made from and owns only its copies of ports[] and lid_port[].
 *
 * The fingerprint tells a long-lived caller whether the topology changed since the last
 * routing: only then may the escape plane be recomputed.
 */
#include "fabric/fabric.h"
#include "lib/assert.h"

#include <stdlib.h>
#include <string.h>

int fabric_lid_is_high(const struct fabric *f, uint32_t lid)
{
	uint32_t p = lid <= f->max_lid ? f->lid_port[lid] : FAB_NONE;

	sn_assert(p == FAB_NONE || (p < f->nports && f->ports[p].base_lid <= lid));
	return p != FAB_NONE && !fabric_is_switch(f, f->ports[p].node) &&
	       f->ports[p].base_lid != lid;
}

unsigned fabric_min_end_lmc(const struct fabric *f)
{
	unsigned lmc = 8, n = 0;
	uint32_t i;

	for (i = 0; i < f->nendports; i++) {
		const struct fab_port *p = &f->ports[f->endports[i]];

		if (fabric_is_switch(f, p->node))
			continue;
		n++;
		if (p->lmc < lmc)
			lmc = p->lmc;
	}
	sn_assert(!n || lmc <= 7);
	return n ? lmc : 0;
}

int fabric_plane_view(const struct fabric *f, enum fab_plane plane, struct fabric *view)
{
	uint32_t lid, p;

	*view = *f;
	view->ports = malloc(sizeof(*view->ports) * (f->nports + 1));
	view->lid_port = malloc(sizeof(*view->lid_port) * (f->max_lid + 1));
	if (!view->ports || !view->lid_port) {
		fabric_plane_view_free(view);
		return -1;
	}
	memcpy(view->ports, f->ports, sizeof(*view->ports) * f->nports);
	for (lid = 0; lid <= f->max_lid; lid++) {
		int high = fabric_lid_is_high(f, lid);

		/* Switch LIDs are never high: they stay in the base plane. */
		p = f->lid_port[lid];
		sn_assert(!high || !fabric_is_switch(f, f->ports[p].node));
		view->lid_port[lid] = (high == (plane == FAB_PLANE_HIGH)) ? p : FAB_NONE;
	}
	/*
	 * In the base plane an end port has one LID: engines that walk an LMC block (DFSSSP, the
	 * source weights) must see a block of one.  The high view keeps the block; its base LID is
	 * simply absent from lid_port[].
	 */
	if (plane == FAB_PLANE_BASE)
		for (p = 0; p < f->nports; p++)
			if (!fabric_is_switch(f, f->ports[p].node))
				view->ports[p].lmc = 0;
	return 0;
}

void fabric_plane_view_free(struct fabric *view)
{
	free(view->ports);
	free(view->lid_port);
	memset(view, 0, sizeof(*view));
}

/* splitmix64's finaliser: every input bit reaches every output bit. */
static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

struct guid_index {
	uint64_t guid;
	uint32_t node;
};

static int cmp_guid_index(const void *a, const void *b)
{
	const struct guid_index *x = a, *y = b;

	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	return x->node < y->node ? -1 : x->node > y->node;
}

static uint64_t hash_node(const struct fabric *f, uint32_t node, uint64_t h)
{
	const struct fab_node *n = &f->nodes[node];
	unsigned k;

	h = mix(h, n->guid);
	h = mix(h, (uint64_t)n->type << 8 | n->nports);
	for (k = 0; k <= n->nports; k++) {
		uint32_t p = n->first_port + k;
		const struct fab_port *port = &f->ports[p];

		h = mix(h, (uint64_t)port->num << 32 | (uint64_t)port->lmc << 16 | port->base_lid);
		/* A link counts with both ends, and only while routing may use it. */
		if (k && fabric_channel_up(f, p)) {
			const struct fab_port *peer = &f->ports[port->remote];

			sn_assert(port->remote < f->nports && peer->remote == p);
			h = mix(h, f->nodes[peer->node].guid);
			h = mix(h, peer->num);
		} else {
			h = mix(h, 0);
		}
	}
	return h;
}

uint64_t fabric_fingerprint(const struct fabric *f)
{
	struct guid_index *idx = malloc(sizeof(*idx) * (f->nnodes + 1));
	uint64_t h = mix(0, f->nnodes);
	uint32_t i;

	if (!idx)
		return 0;
	for (i = 0; i < f->nnodes; i++) {
		idx[i].guid = f->nodes[i].guid;
		idx[i].node = i;
	}
	/* GUID order, so the loader's (or OpenSM's) node order does not matter. */
	qsort(idx, f->nnodes, sizeof(*idx), cmp_guid_index);
	for (i = 0; i < f->nnodes; i++)
		h = hash_node(f, idx[i].node, h);
	free(idx);
	return h ? h : 1;
}
