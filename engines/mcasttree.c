/*
 * mcasttree.c - the spanning tree multicast groups share, and each group's subtree (see
 * mcasttree.h).  Breadth first from the root, so the tree is as shallow as the order allows;
 * a group's subtree is the union of its members' paths to the root with the single-child chain
 * at the top cut off, so no group climbs higher than its members need.
 */
#include "engines/mcasttree.h"
#include "fabric/fattree.h"
#include "fabric/swgraph.h"

#include <stdlib.h>
#include <string.h>

#include "lib/assert.h"

void mcast_tree_free(struct mcast_tree *t)
{
	free(t->parent);
	free(t->up_port);
	free(t->depth);
	free(t->stamp);
	free(t->children);
	free(t->child);
	free(t->list);
	free(t->holds);
	memset(t, 0, sizeof(*t));
}

static int tree_alloc(struct mcast_tree *t, uint32_t nsw)
{
	memset(t, 0, sizeof(*t));
	t->nsw = nsw;
	t->parent = malloc(sizeof(*t->parent) * (nsw + 1));
	t->up_port = malloc(sizeof(*t->up_port) * (nsw + 1));
	t->depth = malloc(sizeof(*t->depth) * (nsw + 1));
	t->stamp = calloc(nsw + 1, sizeof(*t->stamp));
	t->children = calloc(nsw + 1, sizeof(*t->children));
	t->child = malloc(sizeof(*t->child) * (nsw + 1));
	t->list = malloc(sizeof(*t->list) * (nsw + 1));
	t->holds = calloc(nsw + 1, sizeof(*t->holds));
	if (!t->parent || !t->up_port || !t->depth || !t->stamp || !t->children || !t->child ||
	    !t->list || !t->holds)
		return -1;
	return 0;
}

int mcast_tree_build(const struct fabric *f, uint32_t root, const uint32_t *key,
		     struct mcast_tree *t)
{
	uint32_t head = 0, tail = 0, i, *queue;

	sn_assert(root < f->nswitches);
	if (tree_alloc(t, f->nswitches)) {
		mcast_tree_free(t);
		return -1;
	}
	queue = t->list; /* free until the first group */
	for (i = 0; i < t->nsw; i++) {
		t->parent[i] = FAB_NONE;
		t->up_port[i] = FAB_NONE;
		t->depth[i] = UINT32_MAX;
	}
	t->root = root;
	t->depth[root] = 0;
	queue[tail++] = root;
	while (head < tail) {
		uint32_t u = queue[head++], e;

		for (e = f->sw_adj_off[u]; e < f->sw_adj_off[u + 1]; e++) {
			uint32_t p = f->sw_adj_port[e], remote, v;

			if (!fabric_channel_up(f, p))
				continue;
			remote = f->ports[p].remote;
			v = f->nodes[f->ports[remote].node].sw;
			if (v == FAB_NONE || t->depth[v] != UINT32_MAX || (key && key[v] <= key[u]))
				continue;
			t->depth[v] = t->depth[u] + 1;
			t->parent[v] = u;
			t->up_port[v] = remote;
			queue[tail++] = v;
		}
	}
	t->nreached = tail;
	return 0;
}

/* Stamps the path from sw up to the first stamped switch or the root, listing what it stamps. */
static void stamp_path(struct mcast_tree *t, uint32_t sw, uint32_t *n)
{
	while (t->stamp[sw] != t->pass) {
		t->stamp[sw] = t->pass;
		t->children[sw] = 0;
		t->list[(*n)++] = sw;
		if (sw == t->root)
			return;
		sw = t->parent[sw];
	}
}

/* The member's switch and the port it leaves that switch by (0: the switch itself). */
static uint32_t member_switch(const struct fabric *f, uint32_t port, unsigned *exit_port)
{
	uint32_t sw = fabric_endport_switch(f, port);

	*exit_port = 0;
	if (sw != FAB_NONE && !fabric_is_switch(f, f->ports[port].node))
		*exit_port = f->ports[f->ports[port].remote].num;
	return sw;
}

int mcast_tree_group(const struct fabric *f, struct mcast_tree *t, struct mcast *m,
		     const uint32_t *members, uint32_t nmembers)
{
	uint32_t i, n = 0, top, missed = 0;
	unsigned exit_port;

	if (++t->pass == 0) {
		memset(t->stamp, 0, sizeof(*t->stamp) * (t->nsw + 1));
		memset(t->holds, 0, sizeof(*t->holds) * (t->nsw + 1));
		t->pass = 1;
	}
	for (i = 0; i < nmembers; i++) {
		uint32_t sw = member_switch(f, members[i], &exit_port);

		if (mcast_add_member(m, members[i]))
			return -1;
		if (sw == FAB_NONE || !mcast_tree_has(t, sw)) {
			missed++;
			continue;
		}
		stamp_path(t, sw, &n);
		t->holds[sw] = t->pass;
		if (mcast_set_port(m, sw, exit_port))
			return -1;
	}
	if (!n)
		return (int)missed;
	for (i = 0; i < n; i++) {
		uint32_t sw = t->list[i];

		if (sw != t->root) {
			t->children[t->parent[sw]]++;
			t->child[t->parent[sw]] = sw;
		}
	}
	/* The chain from the root down to the first switch that branches or holds a member. */
	top = t->root;
	while (t->children[top] == 1 && t->holds[top] != t->pass)
		top = t->child[top];
	for (i = 0; i < n; i++) {
		uint32_t sw = t->list[i];

		if (sw == top || t->depth[sw] <= t->depth[top])
			continue; /* top and the chain above it */
		if (mcast_set_port(m, sw, f->ports[t->up_port[sw]].num) ||
		    mcast_set_port(m, t->parent[sw], f->ports[f->ports[t->up_port[sw]].remote].num))
			return -1;
	}
	return (int)missed;
}

#define MCAST_ROOT_CANDIDATES 16

/*
 * The root: the most central of up to MCAST_ROOT_CANDIDATES switches with end ports (members
 * hang there), of any switch when none has.
 */
int mcast_tree_choose(const struct fabric *f, struct mcast_tree *t)
{
	uint8_t *with = malloc(f->nswitches + 1);
	uint32_t i, root, nwith = 0;

	sn_assert(f->nswitches > 0);
	if (!with)
		return -1;
	for (i = 0; i < f->nswitches; i++) {
		with[i] = (uint8_t)fabric_switch_has_end_ports(f, i);
		nwith += with[i];
	}
	root = swgraph_central_switch(f, nwith ? with : NULL, MCAST_ROOT_CANDIDATES);
	free(with);
	if (root == FAB_NONE)
		return -1;
	return mcast_tree_build(f, root, NULL, t);
}

int mcast_tree_turns(const struct fabric *f, const struct mcast_tree *t,
		     int (*turn)(void *arg, uint32_t in, uint32_t out), void *arg)
{
	uint32_t *off = calloc(t->nsw + 2, sizeof(*off)),
		 *out = malloc(sizeof(*out) * (2 * t->nsw + 1));
	uint32_t s, i, j;
	int ret = -1;

	if (!off || !out)
		goto done;
	/* The tree ports of each switch, in CSR form: to its parent and to each child. */
	for (s = 0; s < t->nsw; s++)
		if (t->parent[s] != FAB_NONE) {
			off[s + 2]++;
			off[t->parent[s] + 2]++;
		}
	for (s = 0; s < t->nsw; s++)
		off[s + 2] += off[s + 1];
	for (s = 0; s < t->nsw; s++) {
		if (t->parent[s] == FAB_NONE)
			continue;
		out[off[s + 1]++] = t->up_port[s];
		out[off[t->parent[s] + 1]++] = f->ports[t->up_port[s]].remote;
	}
	ret = 0;
	for (s = 0; s < t->nsw && !ret; s++)
		for (i = off[s]; i < off[s + 1] && !ret; i++)
			for (j = off[s]; j < off[s + 1] && !ret; j++)
				if (i != j)
					ret = turn(arg, f->ports[out[i]].remote, out[j]);
done:
	free(off);
	free(out);
	return ret;
}

void mcast_spread_free(struct mcast_spread *s)
{
	free(s->key);
	free(s->tops);
	free(s->load);
	free(s->group_top);
	free(s->group_weight);
	memset(s, 0, sizeof(*s));
}

int mcast_spread_init(struct mcast_spread *s, const struct fabric *f)
{
	struct fat_tree ft;
	struct fab_error why = { "" };
	uint32_t i;
	int ret = -1;

	memset(s, 0, sizeof(*s));
	fat_tree_init(&ft);
	if (f->nswitches == 0 || fat_tree_recognise(f, &ft, &why)) {
		fat_tree_free(&ft);
		return 0;
	}
	s->key = malloc(sizeof(*s->key) * f->nswitches);
	s->tops = malloc(sizeof(*s->tops) * f->nswitches);
	s->group_top = calloc(MCAST_SPREAD_MLIDS, sizeof(*s->group_top));
	s->group_weight = calloc(MCAST_SPREAD_MLIDS, sizeof(*s->group_weight));
	if (!s->key || !s->tops || !s->group_top || !s->group_weight)
		goto out;
	for (i = 0; i < f->nswitches; i++) {
		s->key[i] = ft.levels - ft.level[i];
		if (ft.level[i] == ft.levels)
			s->tops[s->ntops++] = i;
	}
	s->load = calloc(s->ntops + 1, sizeof(*s->load));
	if (!s->load)
		goto out;
	ret = s->ntops > 1 && ft.levels > 1;
out:
	fat_tree_free(&ft);
	if (ret <= 0)
		mcast_spread_free(s);
	return ret;
}

static unsigned spread_slot(uint16_t mlid)
{
	return (unsigned)(mlid - MCAST_FIRST_MLID) % MCAST_SPREAD_MLIDS;
}

unsigned mcast_spread_pick(const struct mcast_spread *s, uint16_t mlid)
{
	unsigned slot = spread_slot(mlid), own = s->group_top[slot], best = UINT32_MAX, i;
	uint64_t best_load = UINT64_MAX;

	sn_assert(s->ntops > 0);
	for (i = 0; i < s->ntops; i++) {
		uint64_t load = s->load[i] - (own == i + 1 ? s->group_weight[slot] : 0);

		/* Least loaded after adding this group; a group keeps its top switch on ties. */
		if (load < best_load || (load == best_load && own == i + 1)) {
			best_load = load;
			best = i;
		}
	}
	return best;
}

int mcast_spread_tree(const struct fabric *f, const struct mcast_spread *s, unsigned top,
		      struct mcast_tree *t)
{
	sn_assert(top < s->ntops);
	return mcast_tree_build(f, s->tops[top], s->key, t);
}

void mcast_spread_set(struct mcast_spread *s, uint16_t mlid, unsigned top, uint32_t weight)
{
	unsigned slot = spread_slot(mlid), own = s->group_top[slot];

	if (!s->ntops || mlid < MCAST_FIRST_MLID)
		return;
	if (own) {
		s->load[own - 1] -= s->group_weight[slot];
		s->group_top[slot] = 0;
		s->group_weight[slot] = 0;
	}
	if (top < s->ntops) {
		s->load[top] += weight;
		s->group_top[slot] = top + 1;
		s->group_weight[slot] = weight;
	}
}
