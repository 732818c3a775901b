/*
 * mcastcheck.c - multicast trees checked the way the switches use them.  A switch sends a
 * packet of a group out of every port in its mask but the one it came in by, so a group's
 * switch-to-switch links must form one tree that forwards both ways: a cycle duplicates packets
 * for ever, a link forwarded one way only cuts the tree for senders on the far side, and a
 * member whose port is not in its switch's mask, or whose switch is not joined to the rest of
 * the tree, misses the group's traffic.  Every pair of tree ports (in, out) at a switch is a
 * channel dependency on the VL the group's SL maps to there; verify.c joins them to the unicast
 * dependencies, since the two kinds share the VLs' buffers.
 */
#include "check/mcastcheck.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/mcast.h"
#include "lib/assert.h"
#include "lib/unionfind.h"

struct tree_check {
	const struct fabric *f;
	const struct routing *r;
	const struct mcast *m;
	struct verify_report *rep;
	struct mcast_deps *out;
	uint32_t *uf; /* [nswitches], each switch its own set between groups */
	int bad;      /* the group in hand already counted as a broken tree */
};

static void note_problem(struct tree_check *c, const char *fmt, const char *a, unsigned na,
			 unsigned mlid)
{
	if (*c->rep->first_mcast_problem)
		return;
	snprintf(c->rep->first_mcast_problem, sizeof(c->rep->first_mcast_problem), fmt, mlid, a,
		 na);
}

static void port_name(const struct fabric *f, uint32_t p, char *buf, size_t len)
{
	snprintf(buf, len, "%s[%u]", fabric_node_desc(f, f->ports[p].node), f->ports[p].num);
}

static void tree_fault(struct tree_check *c, const struct mcast_group *g, uint32_t port,
		       const char *what)
{
	char name[160], fmt[200];

	if (!c->bad)
		c->rep->mcast_loops++;
	c->bad = 1;
	port_name(c->f, port, name, sizeof(name));
	snprintf(fmt, sizeof(fmt), "MLID 0x%%04x: %s at %%s (port %%u)", what);
	note_problem(c, fmt, name, c->f->ports[port].num, g->mlid);
}

/* The switch at the far end of port index p of a switch, FAB_NONE when not a live switch link. */
static uint32_t neighbour_switch(const struct fabric *f, uint32_t p)
{
	uint32_t remote;

	if (!fabric_channel_up(f, p))
		return FAB_NONE;
	remote = f->ports[p].remote;
	return f->nodes[f->ports[remote].node].sw;
}

static uint8_t group_sl(const struct mcast_group *g)
{
	return g->sl == MCAST_SL_UNKNOWN ? 0 : g->sl;
}

/* Links between the group's switches: both ends forward, and no cycle. */
static void check_links(struct tree_check *c, const struct mcast_group *g)
{
	const struct fabric *f = c->f;
	uint32_t i;
	unsigned p;

	for (i = 0; i < g->nentries; i++) {
		const struct mcast_entry *e = &c->m->entries[g->first_entry + i];
		const struct fab_node *n = &f->nodes[f->switches[e->sw]];

		for (p = 1; p <= n->nports; p++) {
			uint32_t pi = n->first_port + p, t, remote;
			const struct mcast_entry *te;

			if (!mcast_mask_has(e->ports, p))
				continue;
			t = neighbour_switch(f, pi);
			if (t == FAB_NONE)
				continue;
			remote = f->ports[pi].remote;
			te = mcast_find_entry(c->m, g, t);
			if (!te || !mcast_mask_has(te->ports, f->ports[remote].num)) {
				tree_fault(c, g, pi,
					   "forwards to a switch that does not forward back");
				continue;
			}
			if (pi > remote)
				continue; /* each link once, from its lower port index */
			if (uf_find(c->uf, e->sw) == uf_find(c->uf, t)) {
				tree_fault(c, g, pi, "the tree has a cycle through this link");
				continue;
			}
			uf_union(c->uf, e->sw, t);
		}
	}
}

/* Every member's port is in its switch's mask, and every member switch is in one tree. */
static void check_members(struct tree_check *c, const struct mcast_group *g)
{
	const struct fabric *f = c->f;
	uint32_t i, tree = FAB_NONE;
	char name[160];

	for (i = 0; i < g->nmembers; i++) {
		uint32_t mp = c->m->members[g->first_member + i], sw;
		const struct mcast_entry *e;
		unsigned exit_port = 0;
		const char *why = NULL;

		sw = fabric_endport_switch(f, mp);
		if (sw == FAB_NONE) {
			why = "member %s has no link to a switch";
		} else {
			if (!fabric_is_switch(f, f->ports[mp].node))
				exit_port = f->ports[f->ports[mp].remote].num;
			e = mcast_find_entry(c->m, g, sw);
			if (!e || !mcast_mask_has(e->ports, exit_port))
				why = "member %s is not in its switch's mask";
			else if (tree == FAB_NONE)
				tree = uf_find(c->uf, sw);
			else if (uf_find(c->uf, sw) != tree)
				why = "member %s is on a part of the tree the others cannot reach";
		}
		if (!why)
			continue;
		c->rep->mcast_unreached++;
		if (!*c->rep->first_mcast_problem) {
			char fmt[200];

			port_name(f, mp, name, sizeof(name));
			snprintf(fmt, sizeof(fmt), "MLID 0x%%04x: %s", why);
			snprintf(c->rep->first_mcast_problem, sizeof(c->rep->first_mcast_problem),
				 fmt, g->mlid, name);
		}
	}
}

static int deps_push(struct mcast_deps *d, uint64_t key, uint16_t mlid)
{
	if (d->n == d->cap) {
		size_t ncap = d->cap ? d->cap * 2 : 256;
		uint64_t *k = realloc(d->key, ncap * sizeof(*k));
		uint16_t *m;

		if (!k)
			return -1;
		d->key = k;
		m = realloc(d->mlid, ncap * sizeof(*m));
		if (!m)
			return -1;
		d->mlid = m;
		d->cap = ncap;
	}
	d->key[d->n] = key;
	d->mlid[d->n++] = mlid;
	return 0;
}

/*
 * VLs a packet of the group has on the channel leaving switch t by port out_port: with one
 * SL2VL map everywhere just the SL's; with per-port maps, that of every tree port it can come in
 * by, and of port 0 when the switch itself is a member (it may send).
 */
static uint16_t vls_leaving(const struct tree_check *c, const struct mcast_entry *te, uint8_t sl,
			    unsigned out_port)
{
	const struct fab_node *n = &c->f->nodes[c->f->switches[te->sw]];
	uint16_t vls = 0;
	unsigned x;

	if (!c->r->sl2vl)
		return (uint16_t)(1u << c->r->sl2vl_uniform[sl & 15]);
	for (x = 0; x <= n->nports; x++)
		if (x != out_port && mcast_mask_has(te->ports, x))
			vls |= (uint16_t)(1u << routing_sl2vl(c->r, te->sw, x, out_port, sl));
	return vls;
}

/* The dependencies of the group's packets at each switch: (in by p) -> (out by q), p != q. */
static int collect_deps(struct tree_check *c, const struct mcast_group *g)
{
	const struct fabric *f = c->f;
	uint8_t sl = group_sl(g);
	uint32_t i;
	unsigned p, q, vl;

	for (i = 0; i < g->nentries; i++) {
		const struct mcast_entry *e = &c->m->entries[g->first_entry + i];
		const struct fab_node *n = &f->nodes[f->switches[e->sw]];

		for (p = 1; p <= n->nports; p++) {
			uint32_t pin = n->first_port + p, t, ch_in;
			const struct mcast_entry *te;
			uint16_t vls_in;

			if (!mcast_mask_has(e->ports, p) ||
			    (t = neighbour_switch(f, pin)) == FAB_NONE)
				continue;
			te = mcast_find_entry(c->m, g, t);
			ch_in = f->ports[pin].remote;
			if (!te || !mcast_mask_has(te->ports, f->ports[ch_in].num))
				continue; /* nothing comes in by a link forwarded one way */
			vls_in = vls_leaving(c, te, sl, f->ports[ch_in].num);
			for (q = 1; q <= n->nports; q++) {
				uint32_t ch_out = n->first_port + q;
				unsigned vl_out;

				if (q == p || !mcast_mask_has(e->ports, q) ||
				    neighbour_switch(f, ch_out) == FAB_NONE)
					continue;
				vl_out = routing_sl2vl(c->r, e->sw, p, q, sl);
				c->rep->vls_used |= (uint16_t)(1u << vl_out);
				for (vl = 0; vl < VERIFY_MAX_VLS; vl++) {
					if (!(vls_in >> vl & 1))
						continue;
					c->rep->vls_used |= (uint16_t)(1u << vl);
					if (deps_push(c->out,
						      DEP_KEY(DEP_VERTEX(vl, ch_in),
							      DEP_VERTEX(vl_out, ch_out)),
						      g->mlid))
						return -1;
				}
			}
		}
	}
	return 0;
}

int mcast_check_trees(const struct fabric *f, const struct routing *r, struct verify_report *rep,
		      struct mcast_deps *out)
{
	struct tree_check c = { .f = f, .r = r, .m = r->mcast, .rep = rep, .out = out };
	uint32_t i, j;
	int ret = -1;

	if (!c.m)
		return 0;
	c.uf = malloc(sizeof(*c.uf) * (f->nswitches + 1));
	if (!c.uf)
		return -1;
	for (i = 0; i < f->nswitches; i++)
		c.uf[i] = i;
	for (i = 0; i < c.m->ngroups; i++) {
		const struct mcast_group *g = &c.m->groups[i];

		rep->mcast_groups++;
		rep->mcast_members += g->nmembers;
		c.bad = 0;
		check_links(&c, g);
		check_members(&c, g);
		if (collect_deps(&c, g))
			goto out;
		for (j = 0; j < g->nentries; j++)
			c.uf[c.m->entries[g->first_entry + j].sw] =
				c.m->entries[g->first_entry + j].sw;
	}
	ret = 0;
out:
	free(c.uf);
	return ret;
}

static int key_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return (*x > *y) - (*x < *y);
}

int mcast_deps_sort(struct mcast_deps *d)
{
	uint64_t *pairs;
	size_t i, out = 0;

	if (!d->n)
		return 0;
	/* Key and MLID sorted together: the MLID rides in a second word. */
	pairs = malloc(d->n * 2 * sizeof(*pairs));
	if (!pairs)
		return -1;
	for (i = 0; i < d->n; i++) {
		pairs[2 * i] = d->key[i];
		pairs[2 * i + 1] = d->mlid[i];
	}
	qsort(pairs, d->n, 2 * sizeof(*pairs), key_cmp);
	for (i = 0; i < d->n; i++) {
		if (out && d->key[out - 1] == pairs[2 * i])
			continue;
		d->key[out] = pairs[2 * i];
		d->mlid[out++] = (uint16_t)pairs[2 * i + 1];
	}
	d->n = out;
	free(pairs);
	return 0;
}

long mcast_deps_find(const struct mcast_deps *d, uint64_t key)
{
	size_t lo = 0, hi = d->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->key[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < d->n && d->key[lo] == key ? (long)lo : -1;
}

void mcast_deps_free(struct mcast_deps *d)
{
	free(d->key);
	free(d->mlid);
	free(d->shared);
	memset(d, 0, sizeof(*d));
}
