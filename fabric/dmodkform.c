/*
 * dmodkform.c - D-mod-k's closed form on a recognised fat tree (see dmodkform.h): built once per
 * routing from the fat_tree description, then asked per switch and LID by sar-dmodk and by
 * sar-updn on trees.
 */
#include "fabric/dmodkform.h"

#include <stdlib.h>
#include <string.h>

#include "lib/assert.h"

void dmodk_form_free(struct dmodk_form *k)
{
	free(k->peer);
	free(k->slot_off);
	free(k->slot);
	free(k->lid_index);
	free(k->lid_offset);
	memset(k, 0, sizeof(*k));
}

unsigned dmodk_form_slots(const struct dmodk_form *k, uint32_t s)
{
	unsigned l = k->t->level[s];

	return l < k->t->levels ? k->t->up_width[l] * k->t->up_parallel[l] : 0;
}

unsigned dmodk_form_closed(const struct dmodk_form *k, unsigned l, uint32_t j, unsigned o)
{
	unsigned slots = k->t->up_width[l] * k->t->up_parallel[l];

	return (unsigned)((j / k->width_below[l] + o) % slots);
}

/* slot[q]: the (q / width)-th link to the parent of digit q mod width. */
static int build_slots(struct dmodk_form *k)
{
	const struct fat_tree *t = k->t;
	uint32_t s, i, n = 0, nsw = k->f->nswitches;

	k->slot_off = malloc(sizeof(uint32_t) * (nsw + 1));
	for (s = 0; s < nsw; s++)
		n += dmodk_form_slots(k, s);
	k->slot = malloc(sizeof(uint32_t) * (n + 1));
	if (!k->slot_off || !k->slot)
		return -1;
	n = 0;
	for (s = 0; s < nsw; s++) {
		unsigned w = t->level[s] < t->levels ? t->up_width[t->level[s]] : 0, q = 0;
		uint16_t prev = UINT16_MAX;

		k->slot_off[s] = n;
		for (i = 0; i < dmodk_form_slots(k, s); i++)
			k->slot[n + i] = FAB_NONE;
		for (i = t->up_off[s]; i < t->up_off[s + 1]; i++) {
			uint16_t dg = t->digit[k->peer[t->up_port[i]]];

			q = dg == prev ? q + 1 : 0;
			prev = dg;
			sn_assert(dg < w && q < t->up_parallel[t->level[s]]);
			k->slot[n + q * w + dg] = t->up_port[i];
		}
		n += dmodk_form_slots(k, s);
	}
	k->slot_off[nsw] = n;
	return 0;
}

/* j and o of every LID: terminals in topology order, then service ports, then switches. */
static void index_lids(struct dmodk_form *k)
{
	const struct fabric *f = k->f;
	uint32_t lid, next = k->t->nterminals;

	for (lid = 1; lid <= f->max_lid; lid++) {
		uint32_t p = f->lid_port[lid];
		uint32_t node;

		if (p == FAB_NONE)
			continue;
		node = f->ports[p].node;
		k->lid_offset[lid] = (uint8_t)(lid - f->ports[p].base_lid);
		if (k->t->term_index[p] != FAB_NONE)
			k->lid_index[lid] = k->t->term_index[p];
		else if (!fabric_is_switch(f, node) && lid == f->ports[p].base_lid)
			k->lid_index[lid] = next++;
		else if (!fabric_is_switch(f, node))
			k->lid_index[lid] = k->lid_index[f->ports[p].base_lid];
		else
			k->lid_index[lid] = k->t->nterminals + k->t->nservice + f->nodes[node].sw;
	}
}

int dmodk_form_init(struct dmodk_form *k, const struct fabric *f, const struct fat_tree *t)
{
	uint32_t nsw = f->nswitches, e;
	unsigned l;

	memset(k, 0, sizeof(*k));
	k->f = f;
	k->t = t;
	k->peer = malloc(sizeof(uint32_t) * (f->nports + 1));
	k->lid_index = calloc(f->max_lid + 1, sizeof(uint32_t));
	k->lid_offset = calloc(f->max_lid + 1, 1);
	if (!k->peer || !k->lid_index || !k->lid_offset)
		goto oom;
	for (e = 0; e < f->sw_adj_off[nsw]; e++) {
		uint32_t p = f->sw_adj_port[e];

		k->peer[p] = f->nodes[f->ports[f->ports[p].remote].node].sw;
	}
	if (build_slots(k))
		goto oom;
	k->width_below[1] = 1;
	/* Past 2^32 every index divides to 0 alike: saturate. */
	for (l = 1; l < t->levels; l++)
		k->width_below[l + 1] = (uint64_t)k->width_below[l] * t->up_width[l] > UINT32_MAX
						? UINT32_MAX
						: k->width_below[l] * t->up_width[l];
	index_lids(k);
	return 0;
oom:
	dmodk_form_free(k);
	return -1;
}

/* cand[i] is the first of cand[] that leads to its child. */
static int first_to_child(const struct dmodk_form *k, const uint32_t *cand, uint32_t i)
{
	uint32_t c = k->peer[cand[i]], q;

	for (q = 0; q < i && k->peer[cand[q]] != c; q++)
		;
	return q == i;
}

/*
 * Of several children leading to the destination, the one d's own side climbs to: of digit
 * (j / W_{l-1} + o) mod w_{l-1}, l the children's level; without it (a failed link) the
 * children in turn by port order.
 */
static uint32_t down_child(const struct dmodk_form *k, const uint32_t *cand, uint32_t n, unsigned l,
			   uint32_t j, unsigned o)
{
	unsigned below = l >= 2 ? k->width_below[l - 1] : 1;
	unsigned w = l >= 2 ? k->t->up_width[l - 1] : 1, want, nchild = 0;
	uint32_t i;

	want = (unsigned)((j / below + o) % (w ? w : 1));
	for (i = 0; i < n; i++) {
		if (k->t->digit[k->peer[cand[i]]] == want)
			return k->peer[cand[i]];
		nchild += first_to_child(k, cand, i);
	}
	want = (unsigned)((j / below + o) % nchild);
	for (i = 0; i < n; i++)
		if (first_to_child(k, cand, i) && !want--)
			return k->peer[cand[i]];
	return k->peer[cand[0]];
}

uint32_t dmodk_form_down(const struct dmodk_form *k, uint32_t s, const uint32_t *cand, uint32_t n,
			 uint32_t j, unsigned o, int *moved)
{
	unsigned l = k->t->level[s] - 1, q;
	uint32_t c, i, links = 0;

	*moved = 0;
	if (!n || k->t->level[s] < 2)
		return FAB_NONE;
	c = k->peer[cand[0]];
	if (c != k->peer[cand[n - 1]])
		c = down_child(k, cand, n, l, j, o);
	for (i = 0; i < n; i++)
		links += k->peer[cand[i]] == c;
	q = dmodk_form_closed(k, l, j, o) / k->t->up_width[l];
	*moved = q >= links;
	q %= links;
	for (i = 0; i < n; i++)
		if (k->peer[cand[i]] == c && !q--)
			return cand[i];
	return FAB_NONE;
}
