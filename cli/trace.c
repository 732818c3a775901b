/*
 * trace.c - `sarnue trace SRC DST`: the path of one route through the LFTs, hop by hop, with the
 * SL the source uses and the VL of every hop, as ibtracert shows a route but with sarnue's
 * path-SL and SL2VL dumps (or the tables read from the switches).  The routing comes from the
 * dump files (cli/dumps.h) or live (cli/live.h); the walk itself is the verifier's: follow the
 * destination LID's LFT entry from switch to switch until an end port owns it.
 */
#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/dumps.h"
#include "cli/live.h"
#include "fabric/jobmap.h"
#include "lib/json.h"
#include "lib/numbers.h"

static const char trace_usage[] =
	"NAME\n"
	"    sarnue trace - the path of one route, hop by hop, with its SL and VLs\n"
	"\n"
	"SYNOPSIS\n"
	"    sarnue trace [OPTIONS] --dump-dir DIR SRC DST\n"
	"    sarnue trace [OPTIONS] --subnet FILE --fdbs FILE SRC DST\n"
	"    sarnue trace [OPTIONS] --live [-C CA] [-P PORT] SRC DST\n"
	"\n"
	"DESCRIPTION\n"
	"    Prints the route from SRC to DST as the switches' LFTs make it: every switch it\n"
	"    crosses, the ports in and out, the SL the source uses (sarnue's path-SL dump) and\n"
	"    the VL of each hop (its SL2VL dump), as ibtracert does for the LFTs alone.\n"
	"\n"
	"    SRC and DST name an end port or a switch: a LID (decimal or 0x hex), a node or port\n"
	"    GUID (0x and 16 hex digits), a node description, or a hostname (the first word of\n"
	"    a node description, as in job maps).  A node with several ports stands for its\n"
	"    first port with a LID.\n"
	"\n"
	"INPUTS (one of)\n"
	"    --dump-dir DIR   OpenSM's dump_files_dir: opensm-subnet.lst, opensm.fdbs and, when\n"
	"                     present, sarnue-path-sl.dump and sarnue-sl2vl.dump\n"
	"    --subnet FILE    opensm-subnet.lst (instead of the directory's)\n"
	"    --fdbs FILE      opensm.fdbs or opensm-lfts.dump (instead of the directory's)\n"
	"    --path-sl FILE   sarnue-path-sl.dump: the SL of each route (default SL 0)\n"
	"    --sl2vl FILE     sarnue-sl2vl.dump: each hop's VL (default: VL = SL)\n"
	"    --live           the topology and the LFTs read from the fabric (needs umad)\n"
	"    -C, --ca NAME    with --live: the local HCA to use\n"
	"    -P, --port N     with --live: its port\n"
	"\n"
	"OPTIONS\n"
	"    --lmc N          LMC OpenSM ran with (dump files do not record it; default 0)\n"
	"    --dlid-offset K  trace to DST's base LID + K (0 .. 2^LMC - 1; default 0)\n"
	"    --json           print the path as one JSON object: src, dst, slid, dlid, sl,\n"
	"                     delivered, fault, hops [{guid, name, in_port, out_port, vl}]\n"
	"    -h, --help       this text\n"
	"    -V, --version    print the version\n"
	"\n"
	"EXIT STATUS\n"
	"    0 the route reaches DST; 1 it does not (no LFT entry, a loop, a link down, another\n"
	"    port); 2 usage error; 3 unreadable or malformed input, or SRC or DST not found.\n";

struct trace_args {
	struct dump_inputs in;
	const char *ca, *src, *dst;
	int live, port, json;
	unsigned dlid_offset;
};

/* One hop: the switch, where the route enters and leaves it, and the VL it leaves on. */
struct hop {
	uint32_t sw;
	unsigned in_port, out_port, vl;
};

struct trace {
	uint32_t src_port, dst_port; /* port indices */
	uint16_t slid, dlid;
	unsigned sl;
	struct hop *hops;
	uint32_t nhops;
	const char *fault; /* NULL when the route reaches dst_port */
};

enum {
	OPT_DUMP_DIR = 256,
	OPT_SUBNET,
	OPT_FDBS,
	OPT_PATH_SL,
	OPT_SL2VL,
	OPT_LMC,
	OPT_DLID_OFFSET
};

static const struct option trace_options[] = {
	{ "dump-dir", required_argument, NULL, OPT_DUMP_DIR },
	{ "subnet", required_argument, NULL, OPT_SUBNET },
	{ "fdbs", required_argument, NULL, OPT_FDBS },
	{ "path-sl", required_argument, NULL, OPT_PATH_SL },
	{ "sl2vl", required_argument, NULL, OPT_SL2VL },
	{ "live", no_argument, NULL, 'L' },
	{ "ca", required_argument, NULL, 'C' },
	{ "port", required_argument, NULL, 'P' },
	{ "lmc", required_argument, NULL, OPT_LMC },
	{ "dlid-offset", required_argument, NULL, OPT_DLID_OFFSET },
	{ "json", no_argument, NULL, 'j' },
	{ "version", no_argument, NULL, 'V' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Returns -1 to go on, else the exit status. */
static int parse_option(struct trace_args *a, int c, char **argv)
{
	unsigned u;

	switch (c) {
	case OPT_DUMP_DIR:
		a->in.dir = optarg;
		break;
	case OPT_SUBNET:
		a->in.subnet = optarg;
		break;
	case OPT_FDBS:
		a->in.fdbs = optarg;
		break;
	case OPT_PATH_SL:
		a->in.path_sl = optarg;
		break;
	case OPT_SL2VL:
		a->in.sl2vl = optarg;
		break;
	case 'L':
		a->live = 1;
		break;
	case 'C':
		a->ca = optarg;
		break;
	case 'P':
		if (num_parse_uint(optarg, 0, 254, &u))
			return cli_usage("trace", "--port %s: expected a port number from 0 to 254",
					 optarg);
		a->port = (int)u;
		break;
	case OPT_LMC:
		if (num_parse_uint(optarg, 0, 7, &a->in.lmc))
			return cli_usage("trace", "--lmc %s: expected 0..7", optarg);
		break;
	case OPT_DLID_OFFSET:
		if (num_parse_uint(optarg, 0, 127, &a->dlid_offset))
			return cli_usage("trace", "--dlid-offset %s: expected 0..127", optarg);
		break;
	case 'j':
		a->json = 1;
		break;
	case 'V':
		return cli_version();
	case 'h':
		fputs(trace_usage, stdout);
		return 0;
	default:
		return cli_getopt_error("trace", c, argv);
	}
	return -1;
}

static int parse_args(struct trace_args *a, int argc, char **argv)
{
	int c, rc;

	memset(a, 0, sizeof(*a));
	optind = 1;
	while ((c = getopt_long(argc, argv, ":LC:P:jVh", trace_options, NULL)) != -1)
		if ((rc = parse_option(a, c, argv)) >= 0)
			return rc;
	if (argc - optind != 2)
		return cli_usage("trace", "expected SRC and DST, got %d argument(s)",
				 argc - optind);
	a->src = argv[optind];
	a->dst = argv[optind + 1];
	if (a->live && (a->in.dir || a->in.subnet || a->in.fdbs))
		return cli_usage("trace", "--live excludes --dump-dir, --subnet and --fdbs");
	if (!a->live && !a->in.dir && !(a->in.subnet && a->in.fdbs))
		return cli_usage("trace", "give --dump-dir DIR, --subnet and --fdbs, or --live");
	return -1;
}

/* The first port of node n with a LID (port 0 of a switch), or FAB_NONE. */
static uint32_t lid_port_of(const struct fabric *f, uint32_t n)
{
	const struct fab_node *node = &f->nodes[n];
	unsigned p;

	if (node->type == FAB_SWITCH)
		return node->first_port;
	for (p = 1; p <= node->nports; p++)
		if (f->ports[node->first_port + p].base_lid)
			return node->first_port + p;
	return FAB_NONE;
}

static uint32_t by_number(const struct fabric *f, const char *name)
{
	unsigned long long v;
	char *end;
	uint32_t i, n;

	v = strtoull(name, &end, 0);
	if (*end || !isdigit((unsigned char)name[0]))
		return FAB_NONE;
	/* 0x and 16 hex digits: a GUID; anything else: a LID */
	if (!strncmp(name, "0x", 2) && strlen(name) == 18) {
		/* a port GUID of a port with a LID; anything else stands for its node */
		for (i = 0; i < f->nports; i++)
			if (f->ports[i].guid == v && f->ports[i].base_lid &&
			    !fabric_is_switch(f, f->ports[i].node))
				return i;
		n = fabric_find_node_by_guid(f, v);
		return n == FAB_NONE ? FAB_NONE : lid_port_of(f, n);
	}
	return v <= f->max_lid ? f->lid_port[v] : FAB_NONE;
}

/* A node description, whole or its first word (the hostname a job map would use). */
static uint32_t by_name(const struct fabric *f, const char *name)
{
	size_t len = strlen(name);
	uint32_t n, found = FAB_NONE;

	for (n = 0; n < f->nnodes; n++) {
		const char *desc = fabric_node_desc(f, n);

		if (!strcmp(desc, name))
			return lid_port_of(f, n);
		if (found == FAB_NONE && job_map_host_len(desc, JOB_MATCH_FIRST_WORD) == len &&
		    !strncmp(desc, name, len))
			found = lid_port_of(f, n);
	}
	return found;
}

static uint32_t find_port(const struct fabric *f, const char *name)
{
	uint32_t p = by_number(f, name);

	return p != FAB_NONE ? p : by_name(f, name);
}

static void add_hop(struct trace *t, uint32_t sw, unsigned in, unsigned out, unsigned vl)
{
	struct hop *h = &t->hops[t->nhops++];

	h->sw = sw;
	h->in_port = in;
	h->out_port = out;
	h->vl = vl;
}

/*
 * Follows the LFTs from the source to the destination LID.  A route longer than the number of
 * switches has looped.  The hop array holds nswitches + 1 entries.
 */
static void walk(const struct fabric *f, const struct routing *r, struct trace *t)
{
	uint32_t port = t->src_port, node = f->ports[port].node;
	unsigned in = 0;

	if (t->dlid >= r->lft_len) {
		t->fault = "the destination LID is beyond every LFT";
		return;
	}
	if (f->nodes[node].type != FAB_SWITCH) {
		if (!fabric_channel_up(f, port)) {
			t->fault = "the source port's link is down";
			return;
		}
		port = f->ports[port].remote;
		node = f->ports[port].node;
		in = f->ports[port].num;
		if (f->nodes[node].type != FAB_SWITCH) {
			t->fault = port == t->dst_port ? NULL
						       : "the source is cabled to another end port";
			return;
		}
	}
	for (;;) {
		uint32_t sw = f->nodes[node].sw;
		unsigned out = routing_lft(r, sw)[t->dlid], vl;

		if (t->nhops > f->nswitches) {
			t->fault = "the route loops";
			return;
		}
		if (out == FAB_NO_PORT || out > f->nodes[node].nports) {
			add_hop(t, sw, in, FAB_NO_PORT, 0);
			t->fault = "no LFT entry for the destination LID";
			return;
		}
		vl = out ? routing_sl2vl(r, sw, in, out, t->sl) : 0;
		add_hop(t, sw, in, out, vl);
		if (!out) {
			t->fault = f->nodes[node].first_port == t->dst_port
					   ? NULL
					   : "delivered to a switch that is not the destination";
			return;
		}
		port = f->nodes[node].first_port + out;
		if (!fabric_channel_up(f, port)) {
			t->fault = "the LFT points at a port whose link is down";
			return;
		}
		port = f->ports[port].remote;
		node = f->ports[port].node;
		in = f->ports[port].num;
		if (f->nodes[node].type != FAB_SWITCH) {
			t->fault = port == t->dst_port ? NULL : "delivered to another end port";
			return;
		}
	}
}

static void print_port(const struct fabric *f, const char *what, uint32_t p)
{
	const struct fab_port *port = &f->ports[p];
	const struct fab_node *n = &f->nodes[port->node];

	printf("%s %s {0x%016llx} portnum %u lid %u \"%s\"", what,
	       n->type == FAB_SWITCH ? "switch" : "ca", (unsigned long long)n->guid, port->num,
	       port->base_lid, fabric_node_desc(f, port->node));
}

/*
 * ibtracert's lines: "[out] -> switch port {guid}[in] lid L "name"", out being the port the
 * route leaves the node before on; sarnue adds the VL of that link when known (not for the
 * source's own port, whose SL2VL table no switch holds).
 */
static void print_text(const struct fabric *f, const struct trace *t)
{
	unsigned out = f->ports[t->src_port].num;
	uint32_t i;
	int vl = -1;

	print_port(f, "From", t->src_port);
	printf(" SL %u to DLID %u\n", t->sl, t->dlid);
	for (i = 0; i < t->nhops; i++) {
		const struct hop *h = &t->hops[i];
		uint32_t node = f->switches[h->sw];

		if (h->in_port || i) {
			printf("[%u] -> switch port {0x%016llx}[%u] lid %u \"%s\"", out,
			       (unsigned long long)f->nodes[node].guid, h->in_port,
			       f->ports[f->nodes[node].first_port].base_lid,
			       fabric_node_desc(f, node));
			if (vl >= 0)
				printf(" VL %d", vl);
			putchar('\n');
		}
		out = h->out_port;
		vl = (int)h->vl;
	}
	if (!t->fault && f->nodes[f->ports[t->dst_port].node].type != FAB_SWITCH) {
		const struct fab_port *d = &f->ports[t->dst_port];

		printf("[%u] -> ca port {0x%016llx}[%u] lid %u \"%s\"", out,
		       (unsigned long long)d->guid, d->num, d->base_lid,
		       fabric_node_desc(f, d->node));
		if (vl >= 0 && t->nhops)
			printf(" VL %d", vl);
		putchar('\n');
	}
	if (t->fault) {
		printf("Not delivered: %s\n", t->fault);
		return;
	}
	print_port(f, "To", t->dst_port);
	printf("\n%u switch(es) on the path\n", t->nhops);
}

static void json_port(const struct fabric *f, const char *key, uint32_t p)
{
	const struct fab_port *port = &f->ports[p];

	printf("\"%s\": {\"guid\": \"0x%016llx\", \"port\": %u, \"lid\": %u, \"name\": ", key,
	       (unsigned long long)f->nodes[port->node].guid, port->num, port->base_lid);
	json_write_string(stdout, fabric_node_desc(f, port->node));
	fputs("}", stdout);
}

static void print_json(const struct fabric *f, const struct trace *t)
{
	uint32_t i;

	fputs("{", stdout);
	json_port(f, "src", t->src_port);
	fputs(", ", stdout);
	json_port(f, "dst", t->dst_port);
	printf(", \"slid\": %u, \"dlid\": %u, \"sl\": %u, \"delivered\": %s, \"fault\": ", t->slid,
	       t->dlid, t->sl, t->fault ? "false" : "true");
	if (t->fault)
		json_write_string(stdout, t->fault);
	else
		fputs("null", stdout);
	fputs(", \"hops\": [", stdout);
	for (i = 0; i < t->nhops; i++) {
		const struct hop *h = &t->hops[i];
		uint32_t node = f->switches[h->sw];

		printf("%s{\"guid\": \"0x%016llx\", \"name\": ", i ? ", " : "",
		       (unsigned long long)f->nodes[node].guid);
		json_write_string(stdout, fabric_node_desc(f, node));
		printf(", \"in_port\": %u, \"out_port\": ", h->in_port);
		if (h->out_port == FAB_NO_PORT)
			fputs("null, \"vl\": null}", stdout);
		else if (!h->out_port)
			fputs("0, \"vl\": null}", stdout);
		else
			printf("%u, \"vl\": %u}", h->out_port, h->vl);
	}
	fputs("]}\n", stdout);
}

static int resolve_ends(const struct trace_args *a, const struct fabric *f, struct trace *t)
{
	unsigned lmc;

	t->src_port = find_port(f, a->src);
	t->dst_port = find_port(f, a->dst);
	if (t->src_port == FAB_NONE || t->dst_port == FAB_NONE) {
		cli_error("trace", "%s '%s': no such LID, GUID, node description or hostname",
			  t->src_port == FAB_NONE ? "SRC" : "DST",
			  t->src_port == FAB_NONE ? a->src : a->dst);
		return -1;
	}
	lmc = f->ports[t->dst_port].lmc;
	if (a->dlid_offset >> lmc) {
		cli_error("trace", "--dlid-offset %u: DST '%s' has LMC %u (%u LIDs)",
			  a->dlid_offset, a->dst, lmc, 1u << lmc);
		return -1;
	}
	t->slid = f->ports[t->src_port].base_lid;
	t->dlid = (uint16_t)(f->ports[t->dst_port].base_lid + a->dlid_offset);
	return 0;
}

int trace_main(int argc, char **argv)
{
	struct trace_args a;
	struct fab_error err = { .msg = "" };
	struct trace t = { 0 };
	struct fabric f;
	struct routing r;
	int rc;

	rc = parse_args(&a, argc, argv);
	if (rc >= 0)
		return rc;
	fabric_init(&f);
	memset(&r, 0, sizeof(r));
	rc = EXIT_INPUT;
	if (a.live ? live_load(&f, &r, a.ca, a.port, &err) : dumps_load(&a.in, &f, &r, &err)) {
		cli_error("trace", "%s", err.msg);
		goto out;
	}
	if (resolve_ends(&a, &f, &t))
		goto out;
	t.hops = calloc(f.nswitches + 2, sizeof(*t.hops));
	if (!t.hops) {
		cli_error("trace", "out of memory");
		goto out;
	}
	t.sl = routing_path_sl(&r, t.slid, t.dlid);
	walk(&f, &r, &t);
	if (a.json)
		print_json(&f, &t);
	else
		print_text(&f, &t);
	rc = t.fault ? EXIT_ROUTING_FAULT : EXIT_VERIFIED;
out:
	free(t.hops);
	routing_free(&r);
	fabric_free(&f);
	return rc;
}
