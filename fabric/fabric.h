/*
 * fabric.h - the routing-independent model of an InfiniBand subnet.
 *
 * Every engine (engines/) and every check (check/: the verifier, the metrics) works on this
 * model and nothing else, so the same code runs inside OpenSM (plugin/ converts osm_subn_t into it)
 * and offline (loaders for ibsim/ibnetdiscover net files and OpenSM's subnet dump).
 *
 * Layout: nodes and ports live in two flat arrays.  The ports of node n are
 * ports[nodes[n].first_port + 0 .. nodes[n].nports]; index 0 is the switch management port
 * (present but unused for CAs and routers), so "port number" and "offset from first_port" are
 * the same thing.  A directed channel is named by the index of the port it leaves from.
 * Switch-to-switch adjacency is a CSR array built by fabric_finalize().
 */
#ifndef SARNUE_FABRIC_H
#define SARNUE_FABRIC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/error.h"

#define FAB_NONE UINT32_MAX
#define FAB_MAX_LID 0xbfff  /* highest unicast LID */
#define FAB_NO_PORT 0xff    /* LFT entry: destination not routed (OpenSM's OSM_NO_PATH) */
#define SARNUE_MAX_ROOTS 64 /* root switches an operator may name */

enum fab_node_type {
	FAB_CA = 1,
	FAB_SWITCH = 2,
	FAB_ROUTER = 3,
};

/* IBA PortInfo PortState values. */
enum fab_port_state {
	FAB_PORT_NOP = 0,
	FAB_PORT_DOWN = 1,
	FAB_PORT_INIT = 2,
	FAB_PORT_ARMED = 3,
	FAB_PORT_ACTIVE = 4,
};

struct fab_port {
	uint64_t guid;
	uint32_t node;	   /* owning node */
	uint32_t remote;   /* port index of the peer, FAB_NONE when unconnected */
	uint16_t base_lid; /* CA/router ports and switch port 0; 0 when none */
	uint8_t lmc;
	uint8_t state;	/* enum fab_port_state */
	uint8_t op_vls; /* operational data VLs: 1, 2, 4, 8 or 15 */
	uint8_t num;	/* port number on its node */
	uint16_t rate;	/* data rate of its link in 100 Mb/s (4xEDR 1000), 0: not given */
};

struct fab_node {
	uint64_t guid;
	uint32_t first_port; /* index of port 0 */
	uint32_t desc;	     /* offset of the node description in fabric.strings */
	uint32_t id;	     /* offset of the loader's node id (net-file name), or desc */
	uint32_t sw;	     /* index among switches, FAB_NONE for CAs and routers */
	uint8_t nports;	     /* physical ports, not counting port 0 */
	uint8_t type;	     /* enum fab_node_type */
};

struct fabric {
	uint32_t nnodes, nports, nswitches;
	struct fab_node *nodes;
	struct fab_port *ports;
	char *strings;
	size_t strings_len, strings_cap;
	uint32_t nodes_cap, ports_cap;

	/* Filled by fabric_finalize(). */
	uint32_t *switches;    /* node index of switch i, in ascending GUID order */
	uint32_t max_lid;      /* highest LID in use */
	uint32_t *lid_port;    /* [max_lid + 1]: port index owning the LID, or FAB_NONE */
	uint32_t *sw_adj_off;  /* CSR over switches: [nswitches + 1] */
	uint32_t *sw_adj_port; /* local port index of each switch-to-switch channel */
	uint32_t nendports;    /* CA/router ports with a LID plus switch port 0s */
	uint32_t *endports;    /* port indices of those, in ascending LID order */
};

void fabric_init(struct fabric *f);
void fabric_free(struct fabric *f);

/* Builder: nodes first, then links; returns node index or FAB_NONE on allocation failure. */
uint32_t fabric_add_node(struct fabric *f, enum fab_node_type type, uint64_t guid, unsigned nports,
			 const char *id, const char *desc);
struct fab_port *fabric_port(const struct fabric *f, uint32_t node, unsigned num);
uint32_t fabric_port_index(const struct fabric *f, uint32_t node, unsigned num);
int fabric_link(struct fabric *f, uint32_t node_a, unsigned port_a, uint32_t node_b,
		unsigned port_b, struct fab_error *err);
/*
 * Checks consistency and builds the derived arrays.  Links between ports that are not ACTIVE are
 * kept in the model but ignored by routing (fabric_channel_up()).
 */
int fabric_finalize(struct fabric *f, struct fab_error *err);

const char *fabric_node_desc(const struct fabric *f, uint32_t node);
const char *fabric_node_id(const struct fabric *f, uint32_t node);
uint32_t fabric_find_node_by_id(const struct fabric *f, const char *id);
uint32_t fabric_find_node_by_guid(const struct fabric *f, uint64_t guid);
/* Index among switches (binary search; needs fabric_finalize()), or FAB_NONE. */
uint32_t fabric_switch_by_guid(const struct fabric *f, uint64_t guid);

/*
 * True when the channel leaving port p can carry traffic: connected, both ends at least INIT.
 * OpenSM routes during the sweep that brings ports from INIT to ACTIVE, so INIT counts as up.
 */
static inline int fabric_channel_up(const struct fabric *f, uint32_t p)
{
	const struct fab_port *a = &f->ports[p];

	return a->remote != FAB_NONE && a->state >= FAB_PORT_INIT &&
	       f->ports[a->remote].state >= FAB_PORT_INIT;
}

static inline int fabric_is_switch(const struct fabric *f, uint32_t node)
{
	return f->nodes[node].type == FAB_SWITCH;
}

/*
 * True when a and b are the same subnet for routing purposes, index for index: nodes, ports,
 * links, LIDs, LMCs, VLs and which links are up.  Tables routed on one then fit the other.
 */
int fabric_same_topology(const struct fabric *a, const struct fabric *b);

/* The switch a CA/router port is attached to through an active link, or FAB_NONE. */
uint32_t fabric_attached_switch(const struct fabric *f, uint32_t port);

/*
 * The switch (index among switches) that delivers an end port: a switch port 0's own switch, a
 * CA/router port's attached one; FAB_NONE when that port has no active link to a switch.
 */
uint32_t fabric_endport_switch(const struct fabric *f, uint32_t port);

/* True when switch sw (index among switches) has a live link to a CA or router. */
int fabric_switch_has_end_ports(const struct fabric *f, uint32_t sw);

/*
 * The switch (index among switches) that delivers a LID, and the port the packet leaves it by (0
 * for the switch's own LID); FAB_NONE when the LID's port has no active link to a switch.
 */
uint32_t fabric_lid_switch(const struct fabric *f, uint32_t lid, uint8_t *exit_port);

/*
 * Assigns LIDs to a model that came without them (net files): switches first in GUID order,
 * then CA/router ports, each port getting a block of 2^lmc LIDs aligned as OpenSM does.
 */
int fabric_assign_lids(struct fabric *f, unsigned lmc, struct fab_error *err);
/*
 * The same for the ports that have no LID yet, keeping the LIDs a file gave (ibnetdiscover
 * output carries the fabric's own); the LIDs given must not overlap.
 */
int fabric_fill_lids(struct fabric *f, unsigned lmc, struct fab_error *err);

/*
 * Link data rates (fab_port.rate, in 100 Mb/s): a width and a lane speed as the files name
 * them.  fabric_rate_ibnd() reads ibnetdiscover's "4xEDR", "4xFDR10", "1xSDR"...; fabric_rate_lst()
 * OpenSM's subnet.lst "PHY=4x" and "SPD=25" (Gb/s signalling per lane).  0 when unknown.
 */
#define FAB_RATE_DEFAULT 1000 /* 4xEDR: the rate of a link no file gave one for */
unsigned fabric_rate_ibnd(const char *word);
unsigned fabric_rate_lst(unsigned width, const char *spd);
/* The rate a link carries: the slower end's given rate, FAB_RATE_DEFAULT when neither has one. */
unsigned fabric_link_rate(const struct fabric *f, uint32_t port);

/* Smallest operational VL count over every active switch-to-switch and end-port link. */
unsigned fabric_min_op_vls(const struct fabric *f);

/*
 * What every engine needs before it can route: at least one switch, and all switches connected
 * over active links.  Returns 0, or -1 with err naming the first stray switch.
 */
int fabric_check_routable(const struct fabric *f, struct fab_error *err);

/* Connected components over active switch-to-switch links: number, and one switch per extra one. */
unsigned fabric_switch_components(const struct fabric *f, uint32_t *first_stray_switch);

/*
 * Two routing planes of an LMC >= 1 fabric (fabric/planeview.c).  The base plane holds the base LID
 * of every end port and every switch LID, the high plane the other LIDs of each CA/router port
 * (base + 1 .. base + 2^lmc - 1).
 */
enum fab_plane {
	FAB_PLANE_BASE,
	FAB_PLANE_HIGH,
};

/* True for a LID of a CA/router port other than its base LID. */
int fabric_lid_is_high(const struct fabric *f, uint32_t lid);

/* Smallest LMC over CA/router ports with a LID (0 when there are none). */
unsigned fabric_min_end_lmc(const struct fabric *f);

/*
 * A view of f in which lid_port[] holds only the plane's LIDs (base-plane end ports get LMC 0),
 * so any engine routes just that plane.  The view shares everything else with f, must not
 * outlive it, and is released with fabric_plane_view_free(), never fabric_free().
 */
int fabric_plane_view(const struct fabric *f, enum fab_plane plane, struct fabric *view);
void fabric_plane_view_free(struct fabric *view);

/*
 * 64-bit hash of the topology as routing sees it: node GUIDs and types, port numbers, LIDs and
 * LMCs, and every usable link with both ends, in GUID order (independent of load order).  Equal
 * fingerprints mean the same topology; never 0 except when out of memory.
 */
uint64_t fabric_fingerprint(const struct fabric *f);

/*
 * A GUID OpenSM could not key the subnet by: 0, or one GUID on two nodes (port: on two linked
 * CA/router ports).  first and second are node indices, first the lower; second is FAB_NONE
 * for a GUID of 0.
 */
struct fab_guid_clash {
	uint64_t guid;
	uint32_t first, second;
	int port;
};

/* 1 and c filled when a node or port GUID is 0 or taken twice, 0 when none is, -1 on ENOMEM. */
int fabric_find_guid_clash(const struct fabric *f, struct fab_guid_clash *c);

/* GUID -> node index hash map, for loaders that resolve links by GUID. */
struct fab_guid_map {
	uint64_t *guids;
	uint32_t *nodes;
	uint32_t cap, count;
};

int fab_guid_map_put(struct fab_guid_map *m, uint64_t guid, uint32_t node);
uint32_t fab_guid_map_get(const struct fab_guid_map *m, uint64_t guid);
void fab_guid_map_free(struct fab_guid_map *m);

#endif
