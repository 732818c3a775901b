/*
 * dmodkform.h - D-mod-k's closed form on a recognised fat tree (Zahavi, "D-Mod-K routing on
 * real-life fat trees"), for sar-dmodk and for the engines that balance as it does on a tree
 * (sar-updn with the top level as roots): the D-mod-k index of every LID, the up port the
 * closed form names at every switch, and the child a switch descends to.  One implementation,
 * so an engine that follows it makes the very choices sar-dmodk makes.
 *
 * Index j of a LID: terminals in topology order (fat_tree terminals[]), then service ports, then
 * switches; o is the LID's offset in its port's LMC range.  At a level-l switch the closed-form
 * up slot is (j / W_l + o) mod (w_l x p_l), W_l the product of the up widths below l, and slot
 * q is the (q / w_l)-th parallel link to the parent of digit q mod w_l.
 */
#ifndef SARNUE_DMODKFORM_H
#define SARNUE_DMODKFORM_H

#include <stdint.h>

#include "fabric/fabric.h"
#include "fabric/fattree.h"

struct dmodk_form {
	const struct fabric *f;
	const struct fat_tree *t;
	uint32_t width_below[FAT_TREE_MAX_LEVELS + 2]; /* W_l, saturated at 2^32 - 1 */
	uint32_t *peer;		   /* per port index: the switch behind a switch-to-switch port */
	uint32_t *slot_off, *slot; /* per switch: closed-form up slot q -> port index or FAB_NONE */
	uint32_t *lid_index;	   /* [max_lid + 1]: D-mod-k index j */
	uint8_t *lid_offset;	   /* [max_lid + 1]: o */
};

/* Fills k for f and its recognised tree t (kept by pointer).  0, or -1 without memory. */
int dmodk_form_init(struct dmodk_form *k, const struct fabric *f, const struct fat_tree *t);
void dmodk_form_free(struct dmodk_form *k);

/* Up slots of switch s (0 at the top level). */
unsigned dmodk_form_slots(const struct dmodk_form *k, uint32_t s);

/* The closed-form up slot of index j, offset o, at level l. */
unsigned dmodk_form_closed(const struct dmodk_form *k, unsigned l, uint32_t j, unsigned o);

/* Port index of slot q of switch s, FAB_NONE when that link is missing. */
static inline uint32_t dmodk_form_slot(const struct dmodk_form *k, uint32_t s, unsigned q)
{
	return k->slot[k->slot_off[s] + q];
}

/*
 * The down port of switch s for index j, offset o, among cand[0 .. n): the ports of s that lead
 * one level down towards the destination.  When several children lead there (a core cabled to
 * every spine of an island) the child of the digit the destination's own side climbs to, else
 * the children in turn; then the parallel link the closed form names.  *moved: that link is
 * missing.  FAB_NONE when n is 0.
 */
uint32_t dmodk_form_down(const struct dmodk_form *k, uint32_t s, const uint32_t *cand, uint32_t n,
			 uint32_t j, unsigned o, int *moved);

#endif
