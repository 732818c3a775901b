/*
 * fabric.c - building and querying the subnet model declared in fabric.h.
 *
 * Loaders add nodes and links through the builder calls; fabric_finalize() then checks the model
 * and derives the compact lookup arrays (LID table, switch CSR adjacency, end-port list) that the
 * engines and the verifier use in their inner loops.
 */
#include "fabric/fabric.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/numbers.h"
#include "lib/arena.h"
#include "lib/assert.h"

void fabric_init(struct fabric *f)
{
	memset(f, 0, sizeof(*f));
}

void fabric_free(struct fabric *f)
{
	free(f->nodes);
	free(f->ports);
	free(f->strings);
	free(f->switches);
	free(f->lid_port);
	free(f->sw_adj_off);
	free(f->sw_adj_port);
	free(f->endports);
	fabric_init(f);
}

static uint32_t add_string(struct fabric *f, const char *s)
{
	uint32_t off;

	if (fab_strings_put(&f->strings, &f->strings_len, &f->strings_cap, s, strlen(s), &off))
		return FAB_NONE;
	return off;
}

uint32_t fabric_add_node(struct fabric *f, enum fab_node_type type, uint64_t guid, unsigned nports,
			 const char *id, const char *desc)
{
	uint32_t n = f->nnodes, first = f->nports, i;
	struct fab_node *node;

	if (nports > 254)
		return FAB_NONE;
	if (fab_grow((void **)&f->nodes, &f->nodes_cap, n + 1, sizeof(*f->nodes), 64) ||
	    fab_grow((void **)&f->ports, &f->ports_cap, first + nports + 1, sizeof(*f->ports), 64))
		return FAB_NONE;
	node = &f->nodes[n];
	memset(node, 0, sizeof(*node));
	node->guid = guid;
	node->type = (uint8_t)type;
	node->nports = (uint8_t)nports;
	node->first_port = first;
	node->sw = FAB_NONE;
	node->desc = add_string(f, desc ? desc : "");
	node->id = id ? add_string(f, id) : node->desc;
	if (node->desc == FAB_NONE || node->id == FAB_NONE)
		return FAB_NONE;
	for (i = 0; i <= nports; i++) {
		struct fab_port *p = &f->ports[first + i];

		memset(p, 0, sizeof(*p));
		p->node = n;
		p->num = (uint8_t)i;
		p->remote = FAB_NONE;
		/* CA port GUIDs follow the node GUID; switches have one port GUID (port 0). */
		p->guid = type == FAB_SWITCH ? guid : guid + i;
		p->op_vls = 1;
		p->state = i == 0 && type == FAB_SWITCH ? FAB_PORT_ACTIVE : FAB_PORT_DOWN;
	}
	f->nports = first + nports + 1;
	f->nnodes = n + 1;
	sn_assert(f->nports <= f->ports_cap && f->nnodes <= f->nodes_cap);
	return n;
}

uint32_t fabric_port_index(const struct fabric *f, uint32_t node, unsigned num)
{
	if (node >= f->nnodes || num > f->nodes[node].nports)
		return FAB_NONE;
	return f->nodes[node].first_port + num;
}

struct fab_port *fabric_port(const struct fabric *f, uint32_t node, unsigned num)
{
	uint32_t p = fabric_port_index(f, node, num);

	return p == FAB_NONE ? NULL : &f->ports[p];
}

const char *fabric_node_desc(const struct fabric *f, uint32_t node)
{
	sn_assert(node < f->nnodes && f->nodes[node].desc < f->strings_len);
	return f->strings + f->nodes[node].desc;
}

const char *fabric_node_id(const struct fabric *f, uint32_t node)
{
	sn_assert(node < f->nnodes && f->nodes[node].id < f->strings_len);
	return f->strings + f->nodes[node].id;
}

uint32_t fabric_find_node_by_id(const struct fabric *f, const char *id)
{
	uint32_t n;

	for (n = 0; n < f->nnodes; n++)
		if (!strcmp(fabric_node_id(f, n), id))
			return n;
	return FAB_NONE;
}

uint32_t fabric_find_node_by_guid(const struct fabric *f, uint64_t guid)
{
	uint32_t n;

	for (n = 0; n < f->nnodes; n++)
		if (f->nodes[n].guid == guid)
			return n;
	return FAB_NONE;
}

int fabric_link(struct fabric *f, uint32_t node_a, unsigned port_a, uint32_t node_b,
		unsigned port_b, struct fab_error *err)
{
	uint32_t a = fabric_port_index(f, node_a, port_a);
	uint32_t b = fabric_port_index(f, node_b, port_b);

	if (a == FAB_NONE || b == FAB_NONE || port_a == 0 || port_b == 0) {
		fab_error_set(err, "link %s[%u] - %s[%u]: no such port",
			      node_a < f->nnodes ? fabric_node_id(f, node_a) : "?", port_a,
			      node_b < f->nnodes ? fabric_node_id(f, node_b) : "?", port_b);
		return -1;
	}
	if ((f->ports[a].remote != FAB_NONE && f->ports[a].remote != b) ||
	    (f->ports[b].remote != FAB_NONE && f->ports[b].remote != a)) {
		fab_error_set(err, "link %s[%u] - %s[%u]: port already linked elsewhere",
			      fabric_node_id(f, node_a), port_a, fabric_node_id(f, node_b), port_b);
		return -1;
	}
	f->ports[a].remote = b;
	f->ports[b].remote = a;
	sn_assert(f->ports[a].node == node_a && f->ports[b].node == node_b);
	return 0;
}

uint32_t fabric_attached_switch(const struct fabric *f, uint32_t port)
{
	uint32_t r;

	sn_assert(port < f->nports);
	if (!fabric_channel_up(f, port))
		return FAB_NONE;
	r = f->ports[port].remote;
	sn_assert(r < f->nports && f->ports[r].remote == port);
	return fabric_is_switch(f, f->ports[r].node) ? f->ports[r].node : FAB_NONE;
}

int fabric_switch_has_end_ports(const struct fabric *f, uint32_t sw)
{
	const struct fab_node *n = &f->nodes[f->switches[sw]];
	unsigned k;

	sn_assert(sw < f->nswitches);
	for (k = 1; k <= n->nports; k++) {
		uint32_t p = n->first_port + k;

		if (fabric_channel_up(f, p) &&
		    !fabric_is_switch(f, f->ports[f->ports[p].remote].node))
			return 1;
	}
	return 0;
}

uint32_t fabric_endport_switch(const struct fabric *f, uint32_t port)
{
	uint32_t node;

	sn_assert(port < f->nports);
	node = f->ports[port].node;
	if (!fabric_is_switch(f, node))
		node = fabric_attached_switch(f, port);
	sn_assert(node == FAB_NONE || f->nodes[node].sw < f->nswitches);
	return node == FAB_NONE ? FAB_NONE : f->nodes[node].sw;
}

static int cmp_switch_guid(const void *a, const void *b, void *ctx)
{
	const struct fabric *f = ctx;
	uint64_t ga = f->nodes[*(const uint32_t *)a].guid;
	uint64_t gb = f->nodes[*(const uint32_t *)b].guid;

	return ga < gb ? -1 : ga > gb;
}

static int build_switch_list(struct fabric *f)
{
	uint32_t n, i = 0;

	f->nswitches = 0;
	for (n = 0; n < f->nnodes; n++)
		f->nswitches += fabric_is_switch(f, n);
	f->switches = malloc(sizeof(*f->switches) * (f->nswitches + 1));
	if (!f->switches)
		return -1;
	for (n = 0; n < f->nnodes; n++)
		if (fabric_is_switch(f, n))
			f->switches[i++] = n;
	sn_assert(i == f->nswitches);
	qsort_r(f->switches, f->nswitches, sizeof(*f->switches), cmp_switch_guid, f);
	for (i = 0; i < f->nswitches; i++) {
		/* check_guids ran first: node GUIDs are unique, so the order is strict. */
		sn_assert(!i || f->nodes[f->switches[i - 1]].guid < f->nodes[f->switches[i]].guid);
		f->nodes[f->switches[i]].sw = i;
	}
	return 0;
}

static int build_switch_adjacency(struct fabric *f)
{
	uint32_t s, k, total = 0;

	f->sw_adj_off = calloc(f->nswitches + 1, sizeof(*f->sw_adj_off));
	if (!f->sw_adj_off)
		return -1;
	for (s = 0; s < f->nswitches; s++) {
		const struct fab_node *n = &f->nodes[f->switches[s]];

		f->sw_adj_off[s] = total;
		for (k = 1; k <= n->nports; k++) {
			uint32_t p = n->first_port + k;

			if (fabric_channel_up(f, p) &&
			    fabric_is_switch(f, f->ports[f->ports[p].remote].node))
				total++;
		}
	}
	f->sw_adj_off[f->nswitches] = total;
	f->sw_adj_port = malloc(sizeof(*f->sw_adj_port) * (total + 1));
	if (!f->sw_adj_port)
		return -1;
	total = 0;
	for (s = 0; s < f->nswitches; s++) {
		const struct fab_node *n = &f->nodes[f->switches[s]];

		/* The second pass counts what the first did: the CSR rows line up. */
		sn_assert(total == f->sw_adj_off[s] && f->sw_adj_off[s] <= f->sw_adj_off[s + 1]);
		sn_assert(n->type == FAB_SWITCH && n->sw == s);
		for (k = 1; k <= n->nports; k++) {
			uint32_t p = n->first_port + k;

			if (fabric_channel_up(f, p) &&
			    fabric_is_switch(f, f->ports[f->ports[p].remote].node))
				f->sw_adj_port[total++] = p;
		}
	}
	sn_assert(total == f->sw_adj_off[f->nswitches]);
	return 0;
}

static int port_has_lid(const struct fabric *f, uint32_t p)
{
	const struct fab_port *port = &f->ports[p];
	const struct fab_node *n = &f->nodes[port->node];

	if (!port->base_lid)
		return 0;
	return n->type == FAB_SWITCH ? port->num == 0 : port->num != 0;
}

static int build_lid_table(struct fabric *f, struct fab_error *err)
{
	uint32_t p, l, count = 0;

	f->max_lid = 0;
	for (p = 0; p < f->nports; p++) {
		uint32_t top;

		if (!port_has_lid(f, p))
			continue;
		top = f->ports[p].base_lid + (1u << f->ports[p].lmc) - 1;
		if (top > FAB_MAX_LID) {
			fab_error_set(err,
				      "%s port %u: LID %u with LMC %u exceeds the unicast range",
				      fabric_node_id(f, f->ports[p].node), f->ports[p].num,
				      f->ports[p].base_lid, f->ports[p].lmc);
			return -1;
		}
		if (top > f->max_lid)
			f->max_lid = top;
		count++;
	}
	f->lid_port = malloc(sizeof(*f->lid_port) * (f->max_lid + 1));
	f->endports = malloc(sizeof(*f->endports) * (count + 1));
	if (!f->lid_port || !f->endports) {
		fab_error_set(err, "out of memory");
		return -1;
	}
	for (l = 0; l <= f->max_lid; l++)
		f->lid_port[l] = FAB_NONE;
	for (p = 0; p < f->nports; p++) {
		const struct fab_port *port = &f->ports[p];

		if (!port_has_lid(f, p))
			continue;
		for (l = port->base_lid; l < port->base_lid + (1u << port->lmc); l++) {
			sn_assert(l >= 1 && l <= f->max_lid);
			if (f->lid_port[l] != FAB_NONE) {
				fab_error_set(err, "LID %u used by both %s port %u and %s port %u",
					      l, fabric_node_id(f, f->ports[f->lid_port[l]].node),
					      f->ports[f->lid_port[l]].num,
					      fabric_node_id(f, port->node), port->num);
				return -1;
			}
			f->lid_port[l] = p;
		}
	}
	f->nendports = 0;
	for (l = 0; l <= f->max_lid; l++) {
		p = f->lid_port[l];
		if (p != FAB_NONE && f->ports[p].base_lid == l)
			f->endports[f->nendports++] = p;
	}
	/* LIDs do not overlap, so every port with a LID owns its base LID: one entry each. */
	sn_assert(f->nendports == count);
	if (sn_expensive_checks()) {
		for (l = 0; l < f->nendports; l++) {
			p = f->endports[l];
			sn_assert(f->lid_port[f->ports[p].base_lid] == p);
			sn_assert(!l ||
				  f->ports[f->endports[l - 1]].base_lid < f->ports[p].base_lid);
		}
	}
	return 0;
}

/* The GUID OpenSM keys a port by: linked CA and router ports only. */
static int keyed_port(const struct fabric *f, uint32_t p)
{
	return f->ports[p].num && f->ports[p].remote != FAB_NONE &&
	       !fabric_is_switch(f, f->ports[p].node);
}

static uint64_t clash_guid(const struct fabric *f, uint32_t i, int port)
{
	return port ? f->ports[i].guid : f->nodes[i].guid;
}

static int by_port_guid(const void *a, const void *b, void *fabric)
{
	uint64_t x = clash_guid(fabric, *(const uint32_t *)a, 1);
	uint64_t y = clash_guid(fabric, *(const uint32_t *)b, 1);

	return x < y ? -1 : x > y;
}

static int by_node_guid(const void *a, const void *b, void *fabric)
{
	uint64_t x = clash_guid(fabric, *(const uint32_t *)a, 0);
	uint64_t y = clash_guid(fabric, *(const uint32_t *)b, 0);

	return x < y ? -1 : x > y;
}

/* Sorts idx (node or port indices) by GUID and fills c with the first 0 or repeated GUID. */
static int first_clash(const struct fabric *f, uint32_t *idx, uint32_t n, int port,
		       struct fab_guid_clash *c)
{
	uint32_t i, a, b;

	qsort_r(idx, n, sizeof(*idx), port ? by_port_guid : by_node_guid, (void *)f);
	for (i = 0; i < n; i++) {
		uint64_t g = clash_guid(f, idx[i], port);

		a = port ? f->ports[idx[i]].node : idx[i];
		if (g && (!i || g != clash_guid(f, idx[i - 1], port)))
			continue;
		sn_assert(!g || i > 0);
		b = g ? (port ? f->ports[idx[i - 1]].node : idx[i - 1]) : a;
		c->guid = g;
		c->port = port;
		c->first = a < b ? a : b;
		c->second = g ? (a > b ? a : b) : FAB_NONE;
		return 1;
	}
	return 0;
}

int fabric_find_guid_clash(const struct fabric *f, struct fab_guid_clash *c)
{
	uint32_t *idx = malloc(sizeof(*idx) * (f->nports + f->nnodes + 1)), i, n = 0;
	int found;

	if (!idx)
		return -1;
	for (i = 0; i < f->nnodes; i++)
		idx[n++] = i;
	found = first_clash(f, idx, n, 0, c);
	if (!found) {
		n = 0;
		for (i = 0; i < f->nports; i++)
			if (keyed_port(f, i))
				idx[n++] = i;
		found = first_clash(f, idx, n, 1, c);
	}
	free(idx);
	return found;
}

/*
 * Node GUIDs, and the port GUIDs of linked CA and router ports, are what OpenSM keys the subnet
 * by: two nodes with one GUID, or a GUID of 0, mean a file that contradicts itself.
 */
static int check_guids(const struct fabric *f, struct fab_error *err)
{
	struct fab_guid_clash c;
	const char *what;
	int found = fabric_find_guid_clash(f, &c);

	if (found < 0) {
		fab_error_set(err, "out of memory");
		return -1;
	}
	if (!found)
		return 0;
	what = c.port ? "port GUID" : "node GUID";
	if (c.second == FAB_NONE)
		fab_error_set(err, "%s: %s 0 is not a valid GUID", fabric_node_id(f, c.first),
			      what);
	else
		fab_error_set(err, "%s 0x%016" PRIx64 " used by both %s and %s", what, c.guid,
			      fabric_node_id(f, c.first), fabric_node_id(f, c.second));
	return -1;
}

static void free_derived(struct fabric *f)
{
	free(f->switches);
	free(f->lid_port);
	free(f->sw_adj_off);
	free(f->sw_adj_port);
	free(f->endports);
	f->switches = NULL;
	f->lid_port = NULL;
	f->sw_adj_off = NULL;
	f->sw_adj_port = NULL;
	f->endports = NULL;
}

int fabric_finalize(struct fabric *f, struct fab_error *err)
{
	uint32_t p;

	free_derived(f);
	for (p = 0; p < f->nports; p++) {
		uint32_t r = f->ports[p].remote;

		if (r != FAB_NONE && (r >= f->nports || f->ports[r].remote != p)) {
			fab_error_set(err, "%s port %u: link is not symmetric",
				      fabric_node_id(f, f->ports[p].node), f->ports[p].num);
			return -1;
		}
	}
	if (check_guids(f, err))
		return -1;
	if (build_switch_list(f) || build_switch_adjacency(f)) {
		fab_error_set(err, "out of memory");
		return -1;
	}
	return build_lid_table(f, err);
}

static unsigned align_up(unsigned v, unsigned a)
{
	return (v + a - 1) / a * a;
}

/* Marks, or tests, the LIDs [lid, lid + count) in the in-use map. */
static void lids_mark(uint8_t *used, unsigned lid, unsigned count)
{
	/* The map covers the unicast LIDs; finalize refused any block that would pass them. */
	sn_assert(count >= 1 && lid + count - 1 <= FAB_MAX_LID);
	memset(used + lid, 1, count);
}

static int lids_free(const uint8_t *used, unsigned lid, unsigned count)
{
	return !memchr(used + lid, 1, count);
}

/* The first LID from `from` on, aligned to align, that starts count free LIDs; 0: none left. */
static unsigned lids_find(const uint8_t *used, unsigned from, unsigned count, unsigned align)
{
	unsigned v;

	for (v = align_up(from, align); v + count - 1 <= FAB_MAX_LID; v += align)
		if (lids_free(used, v, count))
			return v;
	return 0;
}

static void lids_mark_given(const struct fabric *f, uint8_t *used)
{
	uint32_t p;

	for (p = 0; p < f->nports; p++)
		if (port_has_lid(f, p))
			lids_mark(used, f->ports[p].base_lid, 1u << f->ports[p].lmc);
}

/*
 * Gives every switch and linked CA/router port without a LID one, in the order OpenSM's LID
 * manager uses on a fresh subnet (switches by GUID, then end ports in node order), skipping the
 * LIDs already taken.  With no LID given anywhere this is exactly OpenSM's assignment.
 */
int fabric_fill_lids(struct fabric *f, unsigned lmc, struct fab_error *err)
{
	unsigned step = 1u << lmc, next = step, i, k;
	uint8_t *used;
	uint32_t n;
	int ret = -1;

	if (lmc > 7) {
		fab_error_set(err, "LMC %u out of range 0..7", lmc);
		return -1;
	}
	if (fabric_finalize(f, err))
		return -1;
	used = calloc(FAB_MAX_LID + 1, 1);
	if (!used) {
		fab_error_set(err, "out of memory");
		return -1;
	}
	lids_mark_given(f, used);
	/* One LID per switch: OpenSM gives LMC only to an enhanced switch port 0. */
	for (i = 0; i < f->nswitches; i++) {
		struct fab_port *p0 = &f->ports[f->nodes[f->switches[i]].first_port];

		if (p0->base_lid)
			continue;
		next = lids_find(used, next, 1, step);
		if (!next)
			goto full;
		sn_assert(next % step == 0);
		p0->base_lid = (uint16_t)next;
		p0->lmc = 0;
		lids_mark(used, next, 1);
		next = align_up(next + 1, step);
	}
	for (n = 0; n < f->nnodes; n++) {
		if (fabric_is_switch(f, n))
			continue;
		for (k = 1; k <= f->nodes[n].nports; k++) {
			struct fab_port *p = fabric_port(f, n, k);

			if (p->remote == FAB_NONE || p->base_lid)
				continue;
			next = lids_find(used, next, step, step);
			if (!next)
				goto full;
			sn_assert(next % step == 0 && next + step - 1 <= FAB_MAX_LID);
			p->base_lid = (uint16_t)next;
			p->lmc = (uint8_t)lmc;
			lids_mark(used, next, step);
			next += step;
		}
	}
	ret = fabric_finalize(f, err);
	goto out;
full:
	fab_error_set(err, "fabric needs more than %u LIDs", FAB_MAX_LID);
out:
	free(used);
	return ret;
}

int fabric_assign_lids(struct fabric *f, unsigned lmc, struct fab_error *err)
{
	uint32_t p;

	for (p = 0; p < f->nports; p++) {
		f->ports[p].base_lid = 0;
		f->ports[p].lmc = 0;
	}
	return fabric_fill_lids(f, lmc, err);
}

unsigned fabric_min_op_vls(const struct fabric *f)
{
	unsigned best = 15;
	uint32_t p;

	for (p = 0; p < f->nports; p++) {
		if (f->ports[p].num == 0 || !fabric_channel_up(f, p))
			continue;
		if (f->ports[p].op_vls < best)
			best = f->ports[p].op_vls;
	}
	return best;
}

unsigned fabric_switch_components(const struct fabric *f, uint32_t *first_stray_switch)
{
	uint32_t *comp, *stack, s, top, e;
	unsigned ncomp = 0;

	if (first_stray_switch)
		*first_stray_switch = FAB_NONE;
	if (!f->nswitches)
		return 0;
	comp = malloc(sizeof(*comp) * f->nswitches);
	stack = malloc(sizeof(*stack) * f->nswitches);
	if (!comp || !stack) {
		ncomp = 0;
		goto out;
	}
	for (s = 0; s < f->nswitches; s++)
		comp[s] = FAB_NONE;
	for (s = 0; s < f->nswitches; s++) {
		if (comp[s] != FAB_NONE)
			continue;
		if (ncomp == 1 && first_stray_switch)
			*first_stray_switch = s;
		comp[s] = ncomp;
		top = 0;
		stack[top++] = s;
		while (top) {
			uint32_t u = stack[--top];

			for (e = f->sw_adj_off[u]; e < f->sw_adj_off[u + 1]; e++) {
				uint32_t r = f->ports[f->sw_adj_port[e]].remote;
				uint32_t v = f->nodes[f->ports[r].node].sw;

				sn_assert(v < f->nswitches);
				if (comp[v] == FAB_NONE) {
					/* Each switch is pushed once: the stack never overflows. */
					sn_assert(top < f->nswitches);
					comp[v] = ncomp;
					stack[top++] = v;
				}
			}
		}
		ncomp++;
	}
out:
	free(comp);
	free(stack);
	return ncomp;
}

static uint32_t guid_slot(uint64_t guid, uint32_t cap)
{
	/* Probing masks with cap - 1: the table size is a power of two. */
	sn_assert(cap && !(cap & (cap - 1)));
	guid ^= guid >> 31;
	guid *= 0x9e3779b97f4a7c15ull;
	return (uint32_t)(guid >> 32) & (cap - 1);
}

static int guid_map_grow(struct fab_guid_map *m)
{
	uint32_t cap = m->cap ? m->cap * 2 : 1024, i;
	uint64_t *g = calloc(cap, sizeof(*g));
	uint32_t *n = malloc(sizeof(*n) * cap);

	if (!g || !n) {
		free(g);
		free(n);
		return -1;
	}
	for (i = 0; i < m->cap; i++) {
		uint32_t j;

		if (!m->guids[i])
			continue;
		j = guid_slot(m->guids[i], cap);
		while (g[j])
			j = (j + 1) & (cap - 1);
		g[j] = m->guids[i];
		n[j] = m->nodes[i];
	}
	free(m->guids);
	free(m->nodes);
	m->guids = g;
	m->nodes = n;
	m->cap = cap;
	return 0;
}

/* GUID 0 is not a valid node GUID and marks empty slots. */
int fab_guid_map_put(struct fab_guid_map *m, uint64_t guid, uint32_t node)
{
	uint32_t j;

	if (!guid)
		return -1;
	if ((m->count + 1) * 2 > m->cap && guid_map_grow(m))
		return -1;
	/* At most half full after growing, so the probe finds an empty slot. */
	sn_assert(m->count < m->cap / 2 + 1);
	j = guid_slot(guid, m->cap);
	while (m->guids[j] && m->guids[j] != guid)
		j = (j + 1) & (m->cap - 1);
	if (!m->guids[j])
		m->count++;
	m->guids[j] = guid;
	m->nodes[j] = node;
	return 0;
}

uint32_t fab_guid_map_get(const struct fab_guid_map *m, uint64_t guid)
{
	uint32_t j;

	if (!m->cap || !guid)
		return FAB_NONE;
	j = guid_slot(guid, m->cap);
	while (m->guids[j]) {
		if (m->guids[j] == guid)
			return m->nodes[j];
		j = (j + 1) & (m->cap - 1);
	}
	return FAB_NONE;
}

void fab_guid_map_free(struct fab_guid_map *m)
{
	free(m->guids);
	free(m->nodes);
	memset(m, 0, sizeof(*m));
}

/* Switch index (not node index) of a switch GUID; switches[] is sorted by GUID. */
uint32_t fabric_switch_by_guid(const struct fabric *f, uint64_t guid)
{
	uint32_t lo = 0, hi = f->nswitches;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		uint64_t g = f->nodes[f->switches[mid]].guid;

		if (g == guid)
			return mid;
		if (g < guid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return FAB_NONE;
}

uint32_t fabric_lid_switch(const struct fabric *f, uint32_t lid, uint8_t *exit_port)
{
	uint32_t p = lid <= f->max_lid ? f->lid_port[lid] : FAB_NONE, r;
	const struct fab_port *port;

	if (p == FAB_NONE)
		return FAB_NONE;
	sn_assert(p < f->nports && lid >= f->ports[p].base_lid);
	port = &f->ports[p];
	if (fabric_is_switch(f, port->node)) {
		*exit_port = 0;
		return f->nodes[port->node].sw;
	}
	if (!fabric_channel_up(f, p))
		return FAB_NONE;
	r = port->remote;
	if (!fabric_is_switch(f, f->ports[r].node))
		return FAB_NONE;
	*exit_port = f->ports[r].num;
	return f->nodes[f->ports[r].node].sw;
}

int fabric_check_routable(const struct fabric *f, struct fab_error *err)
{
	uint32_t stray;

	if (!f->nswitches) {
		fab_error_set(err, "no switches in the fabric");
		return -1;
	}
	if (fabric_switch_components(f, &stray) > 1) {
		fab_error_set(err,
			      "switch 0x%016llx (%s) is disconnected from the rest of the fabric",
			      (unsigned long long)f->nodes[f->switches[stray]].guid,
			      fabric_node_desc(f, f->switches[stray]));
		return -1;
	}
	return 0;
}

static int same_port(const struct fab_port *x, const struct fab_port *y)
{
	/* Routing treats INIT like ACTIVE (fabric_channel_up()), so only that split matters. */
	return x->guid == y->guid && x->node == y->node && x->remote == y->remote &&
	       x->base_lid == y->base_lid && x->lmc == y->lmc && x->op_vls == y->op_vls &&
	       x->num == y->num && (x->state >= FAB_PORT_INIT) == (y->state >= FAB_PORT_INIT);
}

int fabric_same_topology(const struct fabric *a, const struct fabric *b)
{
	uint32_t i;

	if (a->nnodes != b->nnodes || a->nports != b->nports || a->nswitches != b->nswitches ||
	    a->max_lid != b->max_lid)
		return 0;
	for (i = 0; i < a->nnodes; i++) {
		const struct fab_node *x = &a->nodes[i], *y = &b->nodes[i];

		if (x->guid != y->guid || x->type != y->type || x->nports != y->nports ||
		    x->first_port != y->first_port)
			return 0;
	}
	for (i = 0; i < a->nports; i++)
		if (!same_port(&a->ports[i], &b->ports[i]))
			return 0;
	return 1;
}

/* Data rate of one lane in 100 Mb/s, by the name ibnetdiscover gives the speed. */
static unsigned lane_rate_by_name(const char *s, size_t len)
{
	static const struct {
		const char *name;
		unsigned rate;
	} speeds[] = {
		{ "SDR", 20 },	{ "DDR", 40 },	{ "QDR", 80 },	 { "FDR10", 100 }, { "FDR", 136 },
		{ "EDR", 250 }, { "HDR", 500 }, { "NDR", 1000 }, { "XDR", 2000 },
	};
	unsigned i;

	for (i = 0; i < sizeof(speeds) / sizeof(speeds[0]); i++)
		if (strlen(speeds[i].name) == len && !strncmp(s, speeds[i].name, len))
			return speeds[i].rate;
	return 0;
}

static int valid_width(unsigned long w)
{
	return w == 1 || w == 2 || w == 4 || w == 8 || w == 12;
}

unsigned fabric_rate_ibnd(const char *word)
{
	char *end;
	unsigned long w;
	size_t len;

	if (*word < '0' || *word > '9')
		return 0;
	w = strtoul(word, &end, 10);
	if (*end != 'x' || !valid_width(w))
		return 0;
	end++;
	len = strcspn(end, " \t\r\n");
	return (unsigned)w * lane_rate_by_name(end, len);
}

unsigned fabric_rate_lst(unsigned width, const char *spd)
{
	/* Signalling Gb/s per lane as OpenSM prints it; 10 is QDR (FDR10 prints as 10 too). */
	static const struct {
		const char *spd;
		unsigned rate;
	} lanes[] = {
		{ "2.5", 20 }, { "5", 40 },   { "10", 80 },    { "14", 136 },
		{ "25", 250 }, { "50", 500 }, { "100", 1000 }, { "200", 2000 },
	};
	size_t len = strcspn(spd, " \t\r\n");
	unsigned i;

	if (!valid_width(width))
		return 0;
	for (i = 0; i < sizeof(lanes) / sizeof(lanes[0]); i++)
		if (strlen(lanes[i].spd) == len && !strncmp(spd, lanes[i].spd, len))
			return width * lanes[i].rate;
	return 0;
}

unsigned fabric_link_rate(const struct fabric *f, uint32_t port)
{
	unsigned a = f->ports[port].rate, b = 0;

	if (f->ports[port].remote != FAB_NONE)
		b = f->ports[f->ports[port].remote].rate;
	if (!a || (b && b < a))
		a = b;
	return a ? a : FAB_RATE_DEFAULT;
}
