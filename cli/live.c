/*
 * live.c - reads the subnet and its LFT and SL2VL tables from the live fabric for
 * `sarnue check --live`, so the same verifier that judges dump files judges what is really
 * programmed in the switches.
 *
 * libibnetdisc discovers the subnet with directed-route SMPs from the local port; the tables are
 * then read with SMP Gets over the same directed routes.  Directed routes do not depend on the
 * LFTs, so a fabric whose routing is broken (the very thing being checked) can still be read.
 */
#include "cli/live.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/ibnetdisc.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>

#define LFT_BLOCK 64	    /* LIDs per LinearForwardingTable block */
#define SL2VL_DROP 15	    /* VL15 in an SL2VL map: packets on that SL are dropped */
#define SWITCH_NAME_LEN 384 /* describe_switch(): GUID, description, DR path */

struct guid_index {
	uint64_t guid;
	uint32_t node;
};

struct live {
	struct fabric *f;
	struct routing *r;
	struct fab_error *err;
	char where[64]; /* "CA mlx5_0 port 1": the local port, for messages */
	ibnd_fabric_t *disc;
	struct ibmad_port *mad;
	ibnd_node_t **ib_node;	    /* [f->nnodes]: discovered node behind each model node */
	struct guid_index *by_guid; /* [f->nnodes], sorted, to link ports by node GUID */
	int tables;		    /* routing_init() done: r is ours to free on failure */
};

/*
 * PortInfo OperVLs is an encoding (1 = VL0, 2 = VL0-1, ... 5 = VL0-14); the model wants counts.
 * 0 (a port that is down) and reserved codes give 1, the model's default.
 */
static uint8_t op_vls_count(unsigned code)
{
	static const uint8_t count[] = { 1, 1, 2, 4, 8, 15 };

	return code < sizeof(count) ? count[code] : 1;
}

static enum fab_node_type node_type(int ibnd_type)
{
	switch (ibnd_type) {
	case IB_NODE_SWITCH:
		return FAB_SWITCH;
	case IB_NODE_CA:
		return FAB_CA;
	case IB_NODE_ROUTER:
		return FAB_ROUTER;
	}
	return 0;
}

/* A readable name for a switch in messages: GUID, description and the ports of its DR path. */
static void describe_switch(const struct live *l, uint32_t node, char *buf, size_t len)
{
	const ib_dr_path_t *dr = &l->ib_node[node]->path_portid.drpath;
	char path[4 * IB_SUBNET_PATH_HOPS_MAX + 2] = "0"; /* ",255" per hop at most */
	size_t used = 1;
	int i;

	for (i = 1; i <= dr->cnt && i < IB_SUBNET_PATH_HOPS_MAX && used < sizeof(path); i++)
		used += (size_t)snprintf(path + used, sizeof(path) - used, ",%u", dr->p[i]);
	snprintf(buf, len, "switch 0x%016" PRIx64 " \"%.64s\" (DR path %s)", l->f->nodes[node].guid,
		 fabric_node_desc(l->f, node), path);
}

/*
 * Picks the local port before anything else, so discovery and the table queries use the same
 * one (their directed routes start there) and the messages can name it.
 */
static int resolve_local_port(struct live *l, const char *ca, int port, char *ca_name, int *portnum)
{
	umad_port_t up;
	int rc;

	/* A no-op in current libibumad; older ones refuse every call without it. */
	if (umad_init() < 0) {
		fab_error_set(l->err, "live: libibumad cannot initialise (no umad kernel module?)");
		return -1;
	}
	rc = umad_get_port(ca, port, &up);
	if (rc < 0) {
		if (ca || port)
			fab_error_set(l->err, "live: cannot use InfiniBand CA %s port %d: %s",
				      ca ? ca : "(any)", port, strerror(-rc));
		else
			fab_error_set(l->err, "live: no usable local InfiniBand port: %s",
				      strerror(-rc));
		return -1;
	}
	memcpy(ca_name, up.ca_name, UMAD_CA_NAME_LEN);
	ca_name[UMAD_CA_NAME_LEN - 1] = '\0';
	*portnum = up.portnum;
	snprintf(l->where, sizeof(l->where), "CA %s port %d", ca_name, *portnum);
	/* SMPs cross INIT and ARMED links (that is how an SM starts), not a DOWN one. */
	rc = up.state <= FAB_PORT_DOWN ? -1 : 0;
	if (rc)
		fab_error_set(l->err, "live: %s is down (PortState %u)", l->where, up.state);
	umad_release_port(&up);
	return rc;
}

static int discover(struct live *l, char *ca_name, int portnum)
{
	/* libibnetdisc reads cfg->timeout_ms even when given NULL: always pass one. */
	struct ibnd_config cfg;
	int classes[2] = { IB_SMI_CLASS, IB_SMI_DIRECT_CLASS };

	memset(&cfg, 0, sizeof(cfg));
	l->disc = ibnd_discover_fabric(ca_name, portnum, NULL, &cfg);
	if (!l->disc) {
		fab_error_set(l->err,
			      "live: fabric discovery from %s failed (port down, no access to "
			      "/dev/infiniband/umad*, or SMPs unanswered)",
			      l->where);
		return -1;
	}
	l->mad = mad_rpc_open_port(ca_name, portnum, classes, 2);
	if (!l->mad) {
		fab_error_set(l->err, "live: cannot open a MAD port on %s for SMP queries",
			      l->where);
		return -1;
	}
	return 0;
}

/* Copies what the model needs from one discovered port's PortInfo. */
static void fill_port(struct fab_port *p, ibnd_port_t *ip, int is_switch)
{
	p->op_vls = op_vls_count(mad_get_field(ip->info, 0, IB_PORT_OPER_VLS_F));
	if (ip->guid)
		p->guid = ip->guid;
	if (is_switch && ip->portnum == 0) {
		/* Switch port 0 is the management port: it has the switch's LID, no link. */
		p->base_lid = ip->node->smalid;
		p->lmc = ip->node->smalmc;
		return;
	}
	p->state = (uint8_t)mad_get_field(ip->info, 0, IB_PORT_STATE_F);
	if (!is_switch) {
		/* External switch ports carry no LID of their own; end ports do. */
		p->base_lid = ip->base_lid;
		p->lmc = ip->lmc;
	}
}

static int add_node(struct live *l, ibnd_node_t *n)
{
	enum fab_node_type type = node_type(n->type);
	char desc[IB_SMP_DATA_SIZE + 1], id[20];
	uint32_t idx;
	int k;

	if (!type) {
		fab_error_set(l->err, "live: node 0x%016" PRIx64 " has unsupported node type %d",
			      n->guid, n->type);
		return -1;
	}
	if (n->numports < 1 || n->numports > 254) {
		fab_error_set(l->err, "live: node 0x%016" PRIx64 " reports %d ports", n->guid,
			      n->numports);
		return -1;
	}
	/* NodeDescription is 64 bytes, NUL-terminated only when shorter. */
	memcpy(desc, n->nodedesc, IB_SMP_DATA_SIZE);
	desc[IB_SMP_DATA_SIZE] = '\0';
	/* Same ids as the subnet.lst loader and ibnetdiscover, so reports read alike. */
	snprintf(id, sizeof(id), "%c-%016" PRIx64,
		 type == FAB_SWITCH ? 'S'
		 : type == FAB_CA   ? 'H'
				    : 'R',
		 n->guid);
	idx = fabric_add_node(l->f, type, n->guid, (unsigned)n->numports, id, desc);
	if (idx == FAB_NONE) {
		fab_error_set(l->err, "live: out of memory");
		return -1;
	}
	l->ib_node[idx] = n;
	for (k = 0; k <= n->numports; k++)
		if (n->ports[k])
			fill_port(fabric_port(l->f, idx, (unsigned)k), n->ports[k],
				  type == FAB_SWITCH);
	if (type == FAB_SWITCH && !n->ports[0]) {
		fab_error_set(l->err,
			      "live: switch 0x%016" PRIx64 " \"%s\": no PortInfo for port 0 "
			      "(its LID is unknown)",
			      n->guid, desc);
		return -1;
	}
	return 0;
}

static int cmp_guid_index(const void *a, const void *b)
{
	uint64_t ga = ((const struct guid_index *)a)->guid;
	uint64_t gb = ((const struct guid_index *)b)->guid;

	return ga < gb ? -1 : ga > gb;
}

static uint32_t node_of(const struct live *l, const ibnd_node_t *n)
{
	struct guid_index key = { .guid = n->guid }, *hit;

	hit = bsearch(&key, l->by_guid, l->f->nnodes, sizeof(key), cmp_guid_index);
	return hit ? hit->node : FAB_NONE;
}

/* Each link is seen from both ends; fabric_link() accepts the repeat. */
static int add_links(struct live *l)
{
	struct fabric *f = l->f;
	struct fab_error lerr;
	uint32_t n;
	int k;

	l->by_guid = malloc(sizeof(*l->by_guid) * (f->nnodes + 1));
	if (!l->by_guid) {
		fab_error_set(l->err, "live: out of memory");
		return -1;
	}
	for (n = 0; n < f->nnodes; n++) {
		l->by_guid[n].guid = f->nodes[n].guid;
		l->by_guid[n].node = n;
	}
	qsort(l->by_guid, f->nnodes, sizeof(*l->by_guid), cmp_guid_index);
	for (n = 0; n < f->nnodes; n++) {
		ibnd_node_t *in = l->ib_node[n];

		for (k = 1; k <= in->numports; k++) {
			ibnd_port_t *rp = in->ports[k] ? in->ports[k]->remoteport : NULL;
			uint32_t peer;

			if (!rp)
				continue;
			peer = node_of(l, rp->node);
			if (peer == FAB_NONE ||
			    fabric_link(f, n, (unsigned)k, peer, (unsigned)rp->portnum, &lerr)) {
				fab_error_set(l->err, "live: %s",
					      peer == FAB_NONE
						      ? "discovered link to an unknown node"
						      : lerr.msg);
				return -1;
			}
		}
	}
	return 0;
}

static int build_fabric(struct live *l)
{
	ibnd_node_t *n;
	uint32_t count = 0;

	/* Model node i is discovered node ib_node[i]: the model must start empty. */
	if (l->f->nnodes) {
		fab_error_set(l->err, "live: the fabric model to fill is not empty");
		return -1;
	}
	for (n = l->disc->nodes; n; n = n->next)
		count++;
	l->ib_node = calloc(count + 1, sizeof(*l->ib_node));
	if (!l->ib_node) {
		fab_error_set(l->err, "live: out of memory");
		return -1;
	}
	for (n = l->disc->nodes; n; n = n->next)
		if (add_node(l, n))
			return -1;
	if (add_links(l))
		return -1;
	if (fabric_finalize(l->f, l->err))
		return -1;
	/* Otherwise the verifier would walk no path and call the subnet fine. */
	if (!l->f->max_lid) {
		fab_error_set(l->err,
			      "live: no port discovered from %s has a LID: is a subnet "
			      "manager running?",
			      l->where);
		return -1;
	}
	return 0;
}

/* One SMP Get over the switch's directed route; 0 or the MAD status (-1: no answer). */
static int smp_get(const struct live *l, uint32_t node, unsigned attr, unsigned mod,
		   uint8_t data[IB_SMP_DATA_SIZE])
{
	ib_portid_t path = l->ib_node[node]->path_portid;
	int status = 0;

	memset(data, 0, IB_SMP_DATA_SIZE);
	if (smp_query_status_via(data, &path, attr, mod, 0, &status, l->mad))
		return 0;
	return status ? status : -1;
}

static void query_failed(const struct live *l, uint32_t node, const char *what, int status)
{
	char sw[SWITCH_NAME_LEN];

	describe_switch(l, node, sw, sizeof(sw));
	if (status < 0)
		fab_error_set(l->err, "live: from %s, %s: %s query got no answer", l->where, sw,
			      what);
	else
		fab_error_set(l->err, "live: from %s, %s: %s query failed with MAD status 0x%04x",
			      l->where, sw, what, (unsigned)status);
}

/* LFT entries beyond LinearFDBTop are not in use by the switch: they stay FAB_NO_PORT. */
static int read_lft(struct live *l, uint32_t sw)
{
	uint32_t node = l->f->switches[sw], top, block, i;
	uint8_t data[IB_SMP_DATA_SIZE], *lft = routing_lft(l->r, sw);
	char what[64];
	int st;

	st = smp_get(l, node, IB_ATTR_SWITCH_INFO, 0, data);
	if (st) {
		query_failed(l, node, "SwitchInfo", st);
		return -1;
	}
	top = mad_get_field(data, 0, IB_SW_LINEAR_FDB_TOP_F);
	if (top > l->f->max_lid)
		top = l->f->max_lid;
	if (!top)
		return 0;
	for (block = 0; block <= top / LFT_BLOCK; block++) {
		st = smp_get(l, node, IB_ATTR_LINEARFORWTBL, block, data);
		if (st) {
			snprintf(what, sizeof(what), "LinearForwardingTable block %u", block);
			query_failed(l, node, what, st);
			return -1;
		}
		for (i = 0; i < LFT_BLOCK; i++) {
			uint32_t lid = block * LFT_BLOCK + i;

			/* LID 0 is not a destination; the dump loaders leave it unset too. */
			if (lid && lid <= top)
				lft[lid] = data[i];
		}
	}
	return 0;
}

/* The pairs a packet can take: in from the switch itself or a live link, out a live link. */
static int pair_used(const struct fabric *f, uint32_t node, unsigned in, unsigned out)
{
	uint32_t first = f->nodes[node].first_port;

	return fabric_channel_up(f, first + out) && (in == 0 || fabric_channel_up(f, first + in));
}

/*
 * Reads the SL2VL map of every used (in, out) pair.  A switch that rejects the first query has
 * no SL2VL table to read (switches with a single data VL need not implement one): it keeps the
 * uniform map.
 * Returns 0, or 1 when the switch was left uniform, or -1 on error.
 */
static int read_sl2vl(struct live *l, uint32_t sw, unsigned *max_vl)
{
	const struct fabric *f = l->f;
	struct routing *r = l->r;
	uint32_t node = f->switches[sw];
	unsigned nports = f->nodes[node].nports, in, out, sl, queried = 0;
	uint8_t data[IB_SMP_DATA_SIZE];
	char what[64];
	int st;

	for (in = 0; in <= nports; in++) {
		for (out = 1; out <= nports; out++) {
			uint8_t *map = routing_sl2vl_map(r, sw, in, out);

			if (!pair_used(f, node, in, out))
				continue;
			st = smp_get(l, node, IB_ATTR_SLVL_TABLE, (in << 8) | out, data);
			if (st && !queried)
				return 1;
			if (st) {
				snprintf(what, sizeof(what), "SLtoVLMappingTable in %u out %u", in,
					 out);
				query_failed(l, node, what, st);
				return -1;
			}
			queried++;
			/* Byte i holds SL 2i in its high nibble and SL 2i+1 in its low one. */
			for (sl = 0; sl < ROUTING_MAX_SL; sl++)
				map[sl] = sl & 1 ? data[sl / 2] & 0x0f : data[sl / 2] >> 4;
			if (map[r->sl_uniform] != SL2VL_DROP && map[r->sl_uniform] > *max_vl)
				*max_vl = map[r->sl_uniform];
		}
	}
	return 0;
}

static int read_tables(struct live *l)
{
	char sw[SWITCH_NAME_LEN];
	unsigned max_vl = 0, uniform = 0;
	uint32_t s, first_uniform = 0;
	int st;

	if (routing_init(l->r, l->f, "live")) {
		fab_error_set(l->err, "live: out of memory");
		return -1;
	}
	l->tables = 1;
	if (routing_alloc_sl2vl(l->r, l->f)) {
		fab_error_set(l->err, "live: out of memory");
		return -1;
	}
	for (s = 0; s < l->f->nswitches; s++) {
		if (read_lft(l, s))
			return -1;
		st = read_sl2vl(l, s, &max_vl);
		if (st < 0)
			return -1;
		if (st && !uniform++)
			first_uniform = s;
	}
	if (uniform) {
		/* Not an error (the check still runs), but the VL analysis guesses there. */
		describe_switch(l, l->f->switches[first_uniform], sw, sizeof(sw));
		fprintf(stderr,
			"sarnue: warning: %u switch%s (first: %s) answer%s no SL2VL query; "
			"taking all SLs to use VL0 there\n",
			uniform, uniform > 1 ? "es" : "", sw, uniform > 1 ? "" : "s");
	}
	/*
	 * Live tables carry no path SLs (those are in the SA), so every path is taken to use
	 * sl_uniform; the VLs in use are those the switches map it to.
	 */
	l->r->vls_used = max_vl + 1;
	routing_sl2vl_collapse(l->r, l->f);
	return 0;
}

int live_load(struct fabric *f, struct routing *r, const char *ca, int port, struct fab_error *err)
{
	struct live l = { .f = f, .r = r, .err = err };
	char ca_name[UMAD_CA_NAME_LEN];
	int portnum, ret = -1;

	if (resolve_local_port(&l, ca, port, ca_name, &portnum))
		goto out;
	if (discover(&l, ca_name, portnum))
		goto out;
	if (build_fabric(&l))
		goto out;
	if (read_tables(&l))
		goto out;
	ret = 0;
out:
	if (ret) {
		if (l.tables)
			routing_free(r);
		fabric_free(f);
	}
	if (l.mad)
		mad_rpc_close_port(l.mad);
	ibnd_destroy_fabric(l.disc);
	free(l.by_guid);
	free(l.ib_node);
	return ret;
}
