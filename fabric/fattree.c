/*
 * fattree.c - fat-tree recognition from the switch graph (see fattree.h).
 *
 * Leaves are the switches end ports hang on; every other switch's level is its distance from
 * the nearest leaf, plus one.  A fat tree has links between adjacent levels only.  A switch
 * above the leaves that carries end ports too (storage hung on a spine) first looks like a leaf
 * linked to leaves; such a switch, the one of a linked pair with fewer end ports, is taken back
 * out of the leaves and the levels are computed again.
 *
 * Parent digits come from groups: the parents of one switch are one group, and groups that share
 * a switch are merged.  In a complete XGFT/PGFT every child of a group has the whole group as
 * parents, so numbering a group's members by switch index gives each parent one digit that all
 * its children agree on.  Blocks (the leaves under one switch of a level) come from merging, level
 * by level, the leaves below each switch; sorting leaves by their blocks from the top down makes
 * every block contiguous: the topology order.
 */
#include "fabric/fattree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/assert.h"
#include "lib/unionfind.h"

#define NO_LEVEL 0xff
/* Switches with end ports above the leaves (storage) that are tried as such, one per round. */
#define FAT_TREE_MAX_STORAGE_SWITCHES 64

void fat_tree_init(struct fat_tree *t)
{
	memset(t, 0, sizeof(*t));
}

void fat_tree_free(struct fat_tree *t)
{
	free(t->level);
	free(t->digit);
	free(t->up_off);
	free(t->up_port);
	free(t->leaves);
	free(t->block);
	free(t->terminals);
	free(t->term_index);
	fat_tree_init(t);
}

static uint32_t remote_switch(const struct fabric *f, uint32_t p)
{
	return f->nodes[f->ports[f->ports[p].remote].node].sw;
}

/* An end port that counts: a CA or router port with a LID and an active link to a switch. */
static int is_end_port(const struct fabric *f, uint32_t p)
{
	const struct fab_port *a = &f->ports[p];

	return !fabric_is_switch(f, a->node) && a->base_lid &&
	       fabric_attached_switch(f, p) != FAB_NONE;
}

/* End ports hung on each switch. */
static void count_end_ports(const struct fabric *f, uint32_t *ends)
{
	uint32_t p;

	memset(ends, 0, sizeof(*ends) * f->nswitches);
	for (p = 0; p < f->nports; p++)
		if (is_end_port(f, p))
			ends[f->nodes[fabric_attached_switch(f, p)].sw]++;
}

/* Levels by BFS from the switches marked as leaves; 0 when every switch got one. */
static int bfs_levels(const struct fabric *f, const uint8_t *leaf, uint8_t *level, uint32_t *queue)
{
	uint32_t head = 0, tail = 0, s, e;

	for (s = 0; s < f->nswitches; s++) {
		level[s] = leaf[s] ? 1 : NO_LEVEL;
		if (leaf[s])
			queue[tail++] = s;
	}
	while (head < tail) {
		s = queue[head++];
		for (e = f->sw_adj_off[s]; e < f->sw_adj_off[s + 1]; e++) {
			uint32_t v = remote_switch(f, f->sw_adj_port[e]);

			if (level[v] != NO_LEVEL)
				continue;
			if (level[s] + 1 >= NO_LEVEL)
				return -1;
			level[v] = (uint8_t)(level[s] + 1);
			queue[tail++] = v;
		}
	}
	return tail == f->nswitches ? 0 : -1;
}

/*
 * A link inside one level: between two leaves, the one with fewer end ports is no leaf after
 * all (returns 1 after unmarking it); anywhere else the fabric is not a fat tree (-1).
 */
static int same_level_link(const struct fabric *f, const uint32_t *ends, uint8_t *leaf,
			   const uint8_t *level, struct fab_error *why)
{
	uint32_t s, e;

	for (s = 0; s < f->nswitches; s++) {
		for (e = f->sw_adj_off[s]; e < f->sw_adj_off[s + 1]; e++) {
			uint32_t v = remote_switch(f, f->sw_adj_port[e]);

			/* A cable from a switch to itself (real fabrics have them) carries no
			 * route. */
			if (v == s || level[v] != level[s])
				continue;
			if (level[s] == 1) {
				uint32_t drop =
					ends[v] < ends[s] || (ends[v] == ends[s] && v > s) ? v : s;
				leaf[drop] = 0;
				return 1;
			}
			fab_error_set(why,
				      "switches %s and %s are linked but on one level, %u hop(s) "
				      "above the nearest switch with hosts",
				      fabric_node_id(f, f->switches[s]),
				      fabric_node_id(f, f->switches[v]), level[s] - 1u);
			return -1;
		}
	}
	return 0;
}

/* Levels from the leaves marked in leaf (updated when a marked switch is no leaf after all). */
static int find_levels(const struct fabric *f, struct fat_tree *t, const uint32_t *ends,
		       uint8_t *leaf, uint32_t *queue, struct fab_error *why)
{
	uint32_t s, round;
	int r;

	t->levels = 0;
	for (round = 0;; round++) {
		if (round > FAT_TREE_MAX_STORAGE_SWITCHES) {
			fab_error_set(why,
				      "more than %u switches with end ports are linked to "
				      "each other",
				      FAT_TREE_MAX_STORAGE_SWITCHES);
			return -1;
		}
		if (bfs_levels(f, leaf, t->level, queue)) {
			fab_error_set(why,
				      "some switches are not connected to a switch with hosts");
			return -1;
		}
		r = same_level_link(f, ends, leaf, t->level, why);
		if (r < 0)
			return -1;
		if (r == 0)
			break;
	}
	for (s = 0; s < f->nswitches; s++)
		if (t->level[s] > t->levels)
			t->levels = t->level[s];
	if (t->levels > FAT_TREE_MAX_LEVELS) {
		fab_error_set(why, "%u levels, more than the %u a fat tree may have here",
			      t->levels, FAT_TREE_MAX_LEVELS);
		return -1;
	}
	return 0;
}

struct digit_sort {
	const uint32_t *group, *top;
};

static int cmp_digit(const void *a, const void *b, void *ctx)
{
	const struct digit_sort *d = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (d->group[x] != d->group[y])
		return d->group[x] < d->group[y] ? -1 : 1;
	if (d->top[x] != d->top[y])
		return d->top[x] < d->top[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

/*
 * top[s]: the lowest-numbered top switch above s.  Switches of one level share their top
 * switches exactly when they share their place in the upward tree (the XGFT's W digits), so
 * this names that place the same way in every subtree.
 */
static void lowest_top_above(const struct fabric *f, const struct fat_tree *t, uint32_t *top)
{
	uint32_t s, e;
	unsigned l;

	for (l = t->levels; l >= 1; l--)
		for (s = 0; s < f->nswitches; s++) {
			if (t->level[s] != l)
				continue;
			top[s] = l == t->levels ? s : FAB_NONE;
			for (e = f->sw_adj_off[s]; e < f->sw_adj_off[s + 1]; e++) {
				uint32_t v = remote_switch(f, f->sw_adj_port[e]);

				if (t->level[v] == l + 1 && top[v] < top[s])
					top[s] = top[v];
			}
		}
}

/*
 * Parent groups: the parents of one switch belong together.  Digits within a group follow the
 * members' places in the upward tree, so that a digit means the same way up on every subtree:
 * all routes to one destination then meet at one top switch, which the proofs need.
 */
static int number_parents(const struct fabric *f, struct fat_tree *t, struct fab_error *why)
{
	uint32_t *group = malloc(sizeof(uint32_t) * f->nswitches);
	uint32_t *top = malloc(sizeof(uint32_t) * f->nswitches);
	uint32_t *order = malloc(sizeof(uint32_t) * f->nswitches);
	uint32_t s, e, first, run = 0;
	struct digit_sort ds = { group, top };
	int ret = -1;

	if (!group || !top || !order) {
		fab_error_set(why, "out of memory");
		goto out;
	}
	memset(t->up_width, 0, sizeof(t->up_width));
	for (s = 0; s < f->nswitches; s++)
		group[s] = order[s] = s;
	for (s = 0; s < f->nswitches; s++) {
		first = FAB_NONE;
		for (e = f->sw_adj_off[s]; e < f->sw_adj_off[s + 1]; e++) {
			uint32_t v = remote_switch(f, f->sw_adj_port[e]);

			if (t->level[v] != t->level[s] + 1)
				continue;
			if (first == FAB_NONE)
				first = v;
			uf_union(group, first, v);
		}
	}
	for (s = 0; s < f->nswitches; s++)
		group[s] = uf_find(group, s);
	lowest_top_above(f, t, top);
	qsort_r(order, f->nswitches, sizeof(uint32_t), cmp_digit, &ds);
	for (s = 0; s < f->nswitches; s++) {
		uint32_t sw = order[s];

		run = s && group[order[s - 1]] == group[sw] ? run + 1 : 0;
		t->digit[sw] = (uint16_t)run;
		if (t->level[sw] > 1 && run + 1 > t->up_width[t->level[sw] - 1])
			t->up_width[t->level[sw] - 1] = run + 1;
	}
	ret = 0;
out:
	free(group);
	free(top);
	free(order);
	return ret;
}

static int cmp_up_port(const void *a, const void *b, void *ctx)
{
	const struct fabric *f = ((const void *const *)ctx)[0];
	const struct fat_tree *t = ((const void *const *)ctx)[1];
	uint32_t pa = *(const uint32_t *)a, pb = *(const uint32_t *)b;
	uint16_t da = t->digit[remote_switch(f, pa)], db = t->digit[remote_switch(f, pb)];

	if (da != db)
		return da < db ? -1 : 1;
	return f->ports[pa].num < f->ports[pb].num ? -1 : f->ports[pa].num > f->ports[pb].num;
}

/* Most links from one switch to one parent, given its up ports sorted by digit. */
static unsigned parallel_links(const struct fabric *f, const struct fat_tree *t, uint32_t s)
{
	unsigned best = 0, run = 0;
	uint32_t i, prev = FAB_NONE;

	for (i = t->up_off[s]; i < t->up_off[s + 1]; i++) {
		uint32_t v = remote_switch(f, t->up_port[i]);

		run = v == prev ? run + 1 : 1;
		prev = v;
		if (run > best)
			best = run;
	}
	return best;
}

static int collect_up_ports(const struct fabric *f, struct fat_tree *t, struct fab_error *why)
{
	const void *ctx[2] = { f, t };
	uint32_t s, e, n = 0;
	unsigned par;

	free(t->up_off);
	free(t->up_port);
	memset(t->up_parallel, 0, sizeof(t->up_parallel));
	t->missing_links = 0;

	t->up_off = malloc(sizeof(uint32_t) * (f->nswitches + 1));
	t->up_port = malloc(sizeof(uint32_t) * (f->sw_adj_off[f->nswitches] + 1));
	if (!t->up_off || !t->up_port) {
		fab_error_set(why, "out of memory");
		return -1;
	}
	for (s = 0; s < f->nswitches; s++) {
		unsigned l = t->level[s];

		t->up_off[s] = n;
		for (e = f->sw_adj_off[s]; e < f->sw_adj_off[s + 1]; e++)
			if (t->level[remote_switch(f, f->sw_adj_port[e])] == l + 1)
				t->up_port[n++] = f->sw_adj_port[e];
		if (l < t->levels && n == t->up_off[s]) {
			fab_error_set(why, "switch %s on level %u has no link to level %u",
				      fabric_node_id(f, f->switches[s]), l, l + 1);
			return -1;
		}
		qsort_r(t->up_port + t->up_off[s], n - t->up_off[s], sizeof(uint32_t), cmp_up_port,
			ctx);
	}
	t->up_off[f->nswitches] = n;
	for (s = 0; s < f->nswitches; s++) {
		par = parallel_links(f, t, s);
		if (t->level[s] < t->levels && par > t->up_parallel[t->level[s]])
			t->up_parallel[t->level[s]] = par;
	}
	for (s = 0; s < f->nswitches; s++) {
		unsigned l = t->level[s];
		uint32_t have = t->up_off[s + 1] - t->up_off[s], want;

		if (l >= t->levels)
			continue;
		want = t->up_width[l] * t->up_parallel[l];
		t->missing_links += have < want ? want - have : 0;
	}
	t->complete = t->missing_links == 0;
	return 0;
}

struct leaf_sort {
	const uint32_t
		*key; /* [(l - 1) * nleaves + leaf id]: min leaf switch of its level-l block */
	const uint32_t *id; /* [nswitches]: leaf id */
	uint32_t nleaves;
	unsigned levels;
};

static int cmp_leaf(const void *a, const void *b, void *ctx)
{
	const struct leaf_sort *ls = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	unsigned l;

	for (l = ls->levels; l >= 2; l--) {
		uint32_t kx = ls->key[(size_t)(l - 1) * ls->nleaves + ls->id[x]];
		uint32_t ky = ls->key[(size_t)(l - 1) * ls->nleaves + ls->id[y]];

		if (kx != ky)
			return kx < ky ? -1 : 1;
	}
	return x < y ? -1 : x > y;
}

/*
 * Block keys: after merging, level by level, the leaves below each switch, a leaf's set root is
 * the smallest leaf of its block at that level.
 */
static void block_keys(const struct fabric *f, const struct fat_tree *t, const uint32_t *id,
		       uint32_t *uf, uint32_t *rep, uint32_t *key)
{
	uint32_t s, e;
	unsigned l;

	for (s = 0; s < f->nswitches; s++) {
		uf[s] = s;
		rep[s] = t->level[s] == 1 ? s : FAB_NONE;
	}
	for (l = 1; l <= t->levels; l++) {
		for (s = 0; l > 1 && s < f->nswitches; s++) {
			if (t->level[s] != l)
				continue;
			for (e = f->sw_adj_off[s]; e < f->sw_adj_off[s + 1]; e++) {
				uint32_t c = remote_switch(f, f->sw_adj_port[e]);

				if (t->level[c] != l - 1)
					continue;
				sn_assert(rep[c] != FAB_NONE);
				if (rep[s] == FAB_NONE)
					rep[s] = rep[c];
				uf_union(uf, rep[s], rep[c]);
			}
		}
		for (s = 0; s < f->nswitches; s++)
			if (t->level[s] == 1)
				key[(size_t)(l - 1) * t->nleaves + id[s]] = uf_find(uf, s);
	}
}

static int order_leaves(const struct fabric *f, struct fat_tree *t, struct fab_error *why)
{
	uint32_t *id = malloc(sizeof(uint32_t) * f->nswitches);
	uint32_t *uf = malloc(sizeof(uint32_t) * f->nswitches);
	uint32_t *rep = malloc(sizeof(uint32_t) * f->nswitches);
	uint32_t *key, s, i, n = 0;
	struct leaf_sort ls;
	unsigned l;
	int ret = -1;

	for (s = 0; s < f->nswitches; s++)
		t->nleaves += t->level[s] == 1;
	key = malloc(sizeof(uint32_t) * t->levels * t->nleaves + 1);
	t->leaves = malloc(sizeof(uint32_t) * t->nleaves + 1);
	t->block = malloc(sizeof(uint32_t) * t->levels * t->nleaves + 1);
	if (!id || !uf || !rep || !key || !t->leaves || !t->block) {
		fab_error_set(why, "out of memory");
		goto out;
	}
	for (s = 0; s < f->nswitches; s++)
		if (t->level[s] == 1) {
			id[s] = n;
			t->leaves[n++] = s;
		}
	block_keys(f, t, id, uf, rep, key);
	ls = (struct leaf_sort){ key, id, t->nleaves, t->levels };
	qsort_r(t->leaves, t->nleaves, sizeof(uint32_t), cmp_leaf, &ls);
	for (l = 1; l <= t->levels; l++) {
		uint32_t *blk = t->block + (size_t)(l - 1) * t->nleaves;
		const uint32_t *k = key + (size_t)(l - 1) * t->nleaves;

		for (i = 0; i < t->nleaves; i++) {
			int same = i > 0 && l > 1 && k[id[t->leaves[i]]] == k[id[t->leaves[i - 1]]];

			blk[i] = same ? blk[i - 1] : i;
		}
	}
	ret = 0;
out:
	free(id);
	free(uf);
	free(rep);
	free(key);
	return ret;
}

/* End ports of the leaves in topology order: leaf by leaf, port number by port number. */
static int list_terminals(const struct fabric *f, struct fat_tree *t, struct fab_error *why)
{
	uint32_t i, p, k;

	t->terminals = malloc(sizeof(uint32_t) * (f->nports + 1));
	t->term_index = malloc(sizeof(uint32_t) * (f->nports + 1));
	if (!t->terminals || !t->term_index) {
		fab_error_set(why, "out of memory");
		return -1;
	}
	for (p = 0; p < f->nports; p++) {
		t->term_index[p] = FAB_NONE;
		if (is_end_port(f, p) && t->level[f->nodes[fabric_attached_switch(f, p)].sw] > 1)
			t->nservice++;
	}
	for (i = 0; i < t->nleaves; i++) {
		const struct fab_node *n = &f->nodes[f->switches[t->leaves[i]]];

		for (k = 1; k <= n->nports; k++) {
			uint32_t sp = n->first_port + k, r = f->ports[sp].remote;

			if (!fabric_channel_up(f, sp) || !is_end_port(f, r))
				continue;
			t->term_index[r] = t->nterminals;
			t->terminals[t->nterminals++] = r;
		}
	}
	return 0;
}

static void describe(const struct fabric *f, struct fat_tree *t)
{
	uint32_t per_level[FAT_TREE_MAX_LEVELS + 1] = { 0 }, s;
	size_t used;
	unsigned l;

	for (s = 0; s < f->nswitches; s++)
		per_level[t->level[s]]++;
	used = (size_t)snprintf(t->shape, sizeof(t->shape), "%u level%s, switches", t->levels,
				t->levels == 1 ? "" : "s");
	for (l = 1; l <= t->levels && used < sizeof(t->shape); l++)
		used += (size_t)snprintf(t->shape + used, sizeof(t->shape) - used, "%s%u",
					 l == 1 ? " " : "+", per_level[l]);
	for (l = 1; l < t->levels && used < sizeof(t->shape); l++)
		used += (size_t)snprintf(t->shape + used, sizeof(t->shape) - used, "%s%ux%u",
					 l == 1 ? ", up ports " : "+", t->up_width[l],
					 t->up_parallel[l]);
}

/* Levels, parent digits and up ports for the leaves marked in leaf. */
static int shape_from(const struct fabric *f, struct fat_tree *t, const uint32_t *ends,
		      uint8_t *leaf, uint32_t *queue, struct fab_error *why)
{
	return find_levels(f, t, ends, leaf, queue, why) || number_parents(f, t, why) ||
			       collect_up_ports(f, t, why)
		       ? -1
		       : 0;
}

/*
 * The leaf least like a host switch: fewest end ports per switch link (storage on a spine has a
 * few ports beside many switch links); FAB_NONE when fewer than two leaves are left.
 */
static uint32_t least_leaf_like(const struct fabric *f, const struct fat_tree *t,
				const uint32_t *ends)
{
	uint32_t s, best = FAB_NONE, nleaves = 0;

	for (s = 0; s < f->nswitches; s++) {
		uint64_t links = f->sw_adj_off[s + 1] - f->sw_adj_off[s];

		if (t->level[s] != 1)
			continue;
		nleaves++;
		if (best == FAB_NONE ||
		    ends[s] * (uint64_t)(f->sw_adj_off[best + 1] - f->sw_adj_off[best]) <
			    ends[best] * links)
			best = s;
	}
	return nleaves < 2 ? FAB_NONE : best;
}

/*
 * Every switch with end ports is a leaf at first.  While the tree has missing up links, taking
 * the least leaf-like leaf out (its end ports become service ports on a higher level) is kept
 * when it leaves a tree with fewer missing links: a storage switch among the leaves makes
 * parent groups that no real leaf fills.
 */
static int find_shape(const struct fabric *f, struct fat_tree *t, struct fab_error *why)
{
	uint32_t *ends = malloc(sizeof(uint32_t) * f->nswitches);
	uint32_t *queue = malloc(sizeof(uint32_t) * f->nswitches);
	uint8_t *leaf = malloc(f->nswitches), *trial = malloc(f->nswitches);
	uint32_t s, missing;
	int ret = -1;

	if (!ends || !queue || !leaf || !trial) {
		fab_error_set(why, "out of memory");
		goto out;
	}
	count_end_ports(f, ends);
	for (s = 0; s < f->nswitches; s++)
		leaf[s] = ends[s] > 0;
	if (shape_from(f, t, ends, leaf, queue, why))
		goto out;
	while (t->missing_links && (s = least_leaf_like(f, t, ends)) != FAB_NONE) {
		struct fab_error ignore;

		missing = t->missing_links;
		memcpy(trial, leaf, f->nswitches);
		trial[s] = 0;
		if (!shape_from(f, t, ends, trial, queue, &ignore) && t->missing_links < missing) {
			memcpy(leaf, trial, f->nswitches);
			continue;
		}
		if (shape_from(f, t, ends, leaf, queue, why))
			goto out;
		break;
	}
	ret = 0;
out:
	free(ends);
	free(queue);
	free(leaf);
	free(trial);
	return ret;
}

/*
 * Storage and service nodes hang on a few switches above the leaves; when as many switches as
 * there are leaves carry end ports too, the fabric is a direct network (torus, mesh, dragonfly)
 * whose leaf-like switches only happened to sort into levels, or a tree whose end ports sit at
 * several depths (an edge switch cabled below a leaf).  The message names one of each.
 */
static int few_service_switches(const struct fabric *f, const struct fat_tree *t,
				struct fab_error *why)
{
	uint32_t *ends = malloc(sizeof(uint32_t) * f->nswitches), s, above = 0;
	uint32_t first_above = FAB_NONE, first_leaf = FAB_NONE;

	if (!ends) {
		fab_error_set(why, "out of memory");
		return -1;
	}
	count_end_ports(f, ends);
	for (s = 0; s < f->nswitches; s++) {
		if (t->level[s] > 1 && ends[s]) {
			above++;
			first_above = first_above == FAB_NONE ? s : first_above;
		} else if (t->level[s] == 1 && first_leaf == FAB_NONE) {
			first_leaf = s;
		}
	}
	free(ends);
	if (above < t->nleaves)
		return 0;
	fab_error_set(
		why,
		"end ports on %u switch(es) above the %u leaf switch(es) (e.g. '%s' 0x%016llx "
		"on level %u, leaf '%s' 0x%016llx): a direct network, or a tree with end "
		"ports at several depths (an edge switch below a leaf), not a fat tree",
		above, t->nleaves, fabric_node_desc(f, f->switches[first_above]),
		(unsigned long long)f->nodes[f->switches[first_above]].guid, t->level[first_above],
		first_leaf == FAB_NONE ? "?" : fabric_node_desc(f, f->switches[first_leaf]),
		first_leaf == FAB_NONE
			? 0ULL
			: (unsigned long long)f->nodes[f->switches[first_leaf]].guid);
	return -1;
}

int fat_tree_recognise(const struct fabric *f, struct fat_tree *t, struct fab_error *why)
{
	fat_tree_init(t);
	t->nswitches = f->nswitches;
	if (!f->nswitches) {
		fab_error_set(why, "the fabric has no switch");
		return -1;
	}
	t->level = malloc(f->nswitches);
	t->digit = malloc(sizeof(uint16_t) * f->nswitches);
	if (!t->level || !t->digit) {
		fab_error_set(why, "out of memory");
		goto fail;
	}
	if (find_shape(f, t, why) || order_leaves(f, t, why) || list_terminals(f, t, why) ||
	    few_service_switches(f, t, why))
		goto fail;
	describe(f, t);
	return 0;
fail:
	fat_tree_free(t);
	return -1;
}

uint32_t *fat_tree_lid_rank(const struct fat_tree *t, const struct fabric *f)
{
	uint32_t *rank = malloc(sizeof(uint32_t) * (f->max_lid + 1)), lid;

	if (!rank)
		return NULL;
	for (lid = 0; lid <= f->max_lid; lid++) {
		uint32_t p = f->lid_port[lid];

		rank[lid] = p != FAB_NONE && t->term_index[p] != FAB_NONE ? t->term_index[p]
									  : t->nterminals + lid;
	}
	return rank;
}

static int cmp_digit_then_index(const void *a, const void *b, void *ctx)
{
	const uint16_t *digit = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (digit[x] != digit[y])
		return digit[x] < digit[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

uint32_t *fat_tree_switch_rank(const struct fat_tree *t)
{
	uint32_t *order = malloc(sizeof(uint32_t) * (t->nswitches + 1));
	uint32_t *rank = malloc(sizeof(uint32_t) * (t->nswitches + 1)), s;

	if (!order || !rank) {
		free(order);
		free(rank);
		return NULL;
	}
	for (s = 0; s < t->nswitches; s++)
		order[s] = s;
	qsort_r(order, t->nswitches, sizeof(uint32_t), cmp_digit_then_index, t->digit);
	for (s = 0; s < t->nswitches; s++)
		rank[order[s]] = s;
	free(order);
	return rank;
}

uint32_t fat_tree_terminal_leaf(const struct fat_tree *t, const struct fabric *f, uint32_t pos)
{
	sn_assert(pos < t->nterminals);
	return f->nodes[fabric_attached_switch(f, t->terminals[pos])].sw;
}

/* Terminals on each leaf, by position in topology order. */
static uint32_t *terminals_per_leaf(const struct fat_tree *t, const struct fabric *f)
{
	uint32_t *pos = malloc(sizeof(uint32_t) * f->nswitches);
	uint32_t *count = calloc(t->nleaves + 1, sizeof(uint32_t));
	uint32_t i;

	if (!pos || !count) {
		free(pos);
		free(count);
		return NULL;
	}
	for (i = 0; i < t->nleaves; i++)
		pos[t->leaves[i]] = i;
	for (i = 0; i < t->nterminals; i++)
		count[pos[fat_tree_terminal_leaf(t, f, i)]]++;
	free(pos);
	return count;
}

uint64_t fat_tree_efi_bound(const struct fat_tree *t, const struct fabric *f)
{
	uint32_t *hosts = terminals_per_leaf(t, f), *rep = NULL, s, i, e;
	uint64_t *in_block = NULL, *ups = NULL, n = t->nterminals + t->nservice, best = 0;
	unsigned l;

	if (!hosts)
		return 0;
	in_block = calloc(t->nleaves + 1, sizeof(uint64_t));
	ups = calloc(t->nleaves + 1, sizeof(uint64_t));
	rep = malloc(sizeof(uint32_t) * f->nswitches);
	if (!in_block || !ups || !rep)
		goto out;
	/* rep[s]: position of a leaf below s. */
	for (i = 0; i < t->nleaves; i++)
		rep[t->leaves[i]] = i;
	for (l = 2; l <= t->levels; l++)
		for (s = 0; s < f->nswitches; s++) {
			if (t->level[s] != l)
				continue;
			for (e = f->sw_adj_off[s]; e < f->sw_adj_off[s + 1]; e++) {
				uint32_t c = remote_switch(f, f->sw_adj_port[e]);

				if (t->level[c] == l - 1) {
					rep[s] = rep[c];
					break;
				}
			}
		}
	for (l = 1; l < t->levels; l++) {
		const uint32_t *blk = t->block + (size_t)(l - 1) * t->nleaves;

		memset(in_block, 0, sizeof(uint64_t) * t->nleaves);
		memset(ups, 0, sizeof(uint64_t) * t->nleaves);
		for (i = 0; i < t->nleaves; i++)
			in_block[blk[i]] += hosts[i];
		for (s = 0; s < f->nswitches; s++)
			if (t->level[s] == l)
				ups[blk[rep[s]]] += t->up_off[s + 1] - t->up_off[s];
		for (i = 0; i < t->nleaves; i++) {
			uint64_t h = in_block[i], b;

			if (!ups[i] || !h || h >= n)
				continue;
			b = (h * (n - h) + ups[i] - 1) / ups[i];
			if (b > best)
				best = b;
		}
	}
out:
	free(hosts);
	free(in_block);
	free(ups);
	free(rep);
	return best;
}
