/*
 * sarnue-mcjoin.c - a test tool: joins multicast groups through the SA, as IPoIB or an MPI
 * library would, so that OpenSM under ibsim builds real multicast trees for the tests to check.
 *
 * For every --mgid it sends one SubnAdmSet(MCMemberRecord) from the local port (under
 * umad2sim, the ibsim node SIM_HOST names) to the SM's LID and prints the MLID and SL the SA
 * granted.  A group that does not exist yet is created with the Q_Key, P_Key, SL, MTU and rate
 * given; the IPoIB broadcast group, which OpenSM creates itself from partitions.conf, gets a
 * plain join (MGID, port GID and join state only), like the kernel's IPoIB does.
 *
 * Built by `make check` for the integration tests; not installed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>
#include <infiniband/umad.h>

#define MAX_GROUPS 64

/* Byte offsets in an MCMemberRecord (InfiniBand Architecture Specification, 15.2.5.17). */
#define MCR_MGID 0
#define MCR_PORT_GID 16
#define MCR_QKEY 32
#define MCR_MLID 36
#define MCR_MTU 38
#define MCR_TCLASS 39
#define MCR_PKEY 40
#define MCR_RATE 42
#define MCR_SL_FLOW_HOP 44
#define MCR_SCOPE_STATE 48

/* Component mask bits of an MCMemberRecord. */
#define CM_MGID (1ull << 0)
#define CM_PORT_GID (1ull << 1)
#define CM_QKEY (1ull << 2)
#define CM_MTU_SEL (1ull << 4)
#define CM_MTU (1ull << 5)
#define CM_TCLASS (1ull << 6)
#define CM_PKEY (1ull << 7)
#define CM_RATE_SEL (1ull << 8)
#define CM_RATE (1ull << 9)
#define CM_SL (1ull << 12)
#define CM_FLOW (1ull << 13)
#define CM_JOIN_STATE (1ull << 16)

/* What OpenSM requires before it creates a group on a join (o15-0.1.8). */
#define CM_JOIN (CM_MGID | CM_PORT_GID | CM_JOIN_STATE)
#define CM_CREATE (CM_JOIN | CM_QKEY | CM_TCLASS | CM_PKEY | CM_FLOW | CM_SL)

#define SELECTOR_EXACTLY 2

enum join_state {
	JOIN_FULL = 1,
	JOIN_NON = 2,
	JOIN_SENDONLY = 4,
};

/* One group to join, with the settings in force when its --mgid was given. */
struct join_req {
	uint8_t mgid[16];
	const char *mgid_text;
	unsigned sl, join_state, mtu, rate;
	uint32_t qkey;
	uint16_t pkey;
	int create; /* send the parameters that create the group when it is missing */
};

struct settings {
	unsigned sl, join_state, mtu, rate;
	uint32_t qkey;
	uint16_t pkey;
	int no_create;
};

/* OpenSM creates this group itself (partitions.conf "ipoib", or no partitions.conf at all). */
static const uint8_t ipoib_broadcast_mgid[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0,    0,
						  0,	0,    0,    0,	  0xff, 0xff, 0xff, 0xff };

static void usage(FILE *out)
{
	fputs("Usage: sarnue-mcjoin [--ca NAME] [--port N] [--timeout MS]\n"
	      "                     [GROUP OPTIONS] --mgid MGID [[GROUP OPTIONS] --mgid MGID]...\n"
	      "\n"
	      "Joins the local InfiniBand port to multicast groups by sending the SA a\n"
	      "SubnAdmSet(MCMemberRecord) per group, and prints for each one line:\n"
	      "  joined MGID mlid 0xC001 sl 1 mtu 4 rate 3 qkey 0x... pkey 0x... state full\n"
	      "Under ibsim, run it with LD_PRELOAD of libumad2sim.so; SIM_HOST names the ibsim\n"
	      "node whose port it uses.\n"
	      "\n"
	      "Options:\n"
	      "  --mgid MGID         a group, in IPv6 notation (ff12:401b:ffff::e000:1); repeat\n"
	      "                      it to join several groups in one run\n"
	      "  --ca NAME           local CA (default: the first one)\n"
	      "  --port N            local port (default: the first active one)\n"
	      "  --timeout MS        wait for each SA response this long (default 2000)\n"
	      "  --help              this text\n"
	      "\n"
	      "Group options apply to every --mgid that follows them:\n"
	      "  --sl N              SL of a group this join creates (0-15, default 0)\n"
	      "  --join-state full|sendonly|nonmember   (default full)\n"
	      "  --qkey Q            Q_Key of a created group (default 0x0b1b, IPoIB's)\n"
	      "  --pkey P            P_Key of a created group (default 0xffff)\n"
	      "  --mtu N             MTU of a created group, IB code 1-5 (256-4096; default 4)\n"
	      "  --rate N            rate of a created group, IB code 2-18 (default 3, 10 Gb/s)\n"
	      "  --no-create         plain joins only: the groups must exist\n"
	      "\n"
	      "The IPoIB broadcast group ff12:401b:ffff::ffff:ffff always gets a plain join:\n"
	      "OpenSM creates it from partitions.conf and owns its parameters.  OpenSM also\n"
	      "refuses to create other IPoIB-signed groups (ff1x:401b:..., ff1x:601b:...)\n"
	      "whose SL, Q_Key or P_Key differ from the broadcast group's: give a group of\n"
	      "another SL an application MGID such as ff15::5a:2.\n"
	      "\n"
	      "Exit status: 0 when every join succeeded, 1 otherwise (each failure explained).\n",
	      out);
}

static int parse_uint(const char *opt, const char *s, unsigned long max, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-' || *v > max) {
		fprintf(stderr, "sarnue-mcjoin: %s wants a number from 0 to %lu, not '%s'\n", opt,
			max, s);
		return -1;
	}
	return 0;
}

static int parse_join_state(const char *s, unsigned *state)
{
	if (!strcmp(s, "full"))
		*state = JOIN_FULL;
	else if (!strcmp(s, "sendonly"))
		*state = JOIN_SENDONLY;
	else if (!strcmp(s, "nonmember"))
		*state = JOIN_NON;
	else {
		fprintf(stderr,
			"sarnue-mcjoin: --join-state is full, sendonly or nonmember, not '%s'\n",
			s);
		return -1;
	}
	return 0;
}

static const char *join_state_name(unsigned state)
{
	switch (state) {
	case JOIN_FULL:
		return "full";
	case JOIN_SENDONLY:
		return "sendonly";
	case JOIN_NON:
		return "nonmember";
	default:
		return "mixed";
	}
}

static int add_group(struct join_req *g, const char *text, const struct settings *s)
{
	memset(g, 0, sizeof(*g));
	if (inet_pton(AF_INET6, text, g->mgid) != 1) {
		fprintf(stderr, "sarnue-mcjoin: --mgid '%s' is not a GID in IPv6 notation\n", text);
		return -1;
	}
	if (g->mgid[0] != 0xff) {
		fprintf(stderr,
			"sarnue-mcjoin: --mgid '%s' is no multicast GID (those begin with ff)\n",
			text);
		return -1;
	}
	g->mgid_text = text;
	g->sl = s->sl;
	g->join_state = s->join_state;
	g->mtu = s->mtu;
	g->rate = s->rate;
	g->qkey = s->qkey;
	g->pkey = s->pkey;
	g->create = !s->no_create && memcmp(g->mgid, ipoib_broadcast_mgid, 16) != 0;
	return 0;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

/* SA status codes (MAD status bits 8-14), 15.2.1.1. */
static const char *sa_status_text(unsigned status)
{
	switch ((status >> 8) & 0x7f) {
	case 1:
		return "ERR_NO_RESOURCES (the SA is out of resources, e.g. MLIDs)";
	case 2:
		return "ERR_REQ_INVALID (the SA refused the request; OpenSM's log says why)";
	case 3:
		return "ERR_NO_RECORDS";
	case 4:
		return "ERR_TOO_MANY_RECORDS";
	case 5:
		return "ERR_REQ_INVALID_GID (unknown port GID or bad MGID)";
	case 6:
		return "ERR_REQ_INSUFFICIENT_COMPONENTS (a plain join of a group that does not "
		       "exist?)";
	}
	return (status & 0x1c) ? "MAD-level error (bad version, method or attribute)"
			       : "unknown status";
}

/* One SubnAdmSet(MCMemberRecord); 0 after printing the grant, -1 after explaining the failure. */
static int join_group(const struct ibmad_port *srcport, ib_portid_t *sm, const uint8_t *port_gid,
		      const struct join_req *g, int timeout)
{
	uint8_t rec[IB_SA_DATA_SIZE], resp[IB_SA_DATA_SIZE];
	ib_rpc_t rpc;
	uint32_t sl_flow_hop;

	memset(rec, 0, sizeof(rec));
	memset(resp, 0, sizeof(resp));
	memcpy(rec + MCR_MGID, g->mgid, 16);
	memcpy(rec + MCR_PORT_GID, port_gid, 16);
	rec[MCR_SCOPE_STATE] = (uint8_t)g->join_state;
	memset(&rpc, 0, sizeof(rpc));
	rpc.mask = CM_JOIN;
	if (g->create) {
		put32(rec + MCR_QKEY, g->qkey);
		put16(rec + MCR_PKEY, g->pkey);
		rec[MCR_MTU] = (uint8_t)(SELECTOR_EXACTLY << 6 | g->mtu);
		rec[MCR_RATE] = (uint8_t)(SELECTOR_EXACTLY << 6 | g->rate);
		put32(rec + MCR_SL_FLOW_HOP, (uint32_t)g->sl << 28);
		rpc.mask = CM_CREATE | CM_MTU | CM_MTU_SEL | CM_RATE | CM_RATE_SEL;
	}
	rpc.mgtclass = IB_SA_CLASS;
	rpc.method = IB_MAD_METHOD_SET;
	rpc.attr.id = IB_SA_ATTR_MCRECORD;
	rpc.timeout = timeout;
	rpc.dataoffs = IB_SA_DATA_OFFS;
	rpc.datasz = IB_SA_DATA_SIZE;
	if (!mad_rpc(srcport, &rpc, sm, rec, resp)) {
		if (rpc.rstatus)
			fprintf(stderr, "sarnue-mcjoin: join %s: SA status 0x%04x: %s\n",
				g->mgid_text, rpc.rstatus, sa_status_text(rpc.rstatus));
		else
			fprintf(stderr,
				"sarnue-mcjoin: join %s: no answer from the SA at LID %d within %d "
				"ms (is OpenSM up and the unicast routing complete?)\n",
				g->mgid_text, sm->lid, timeout);
		return -1;
	}
	sl_flow_hop = get32(resp + MCR_SL_FLOW_HOP);
	printf("joined %s mlid 0x%04X sl %u mtu %u rate %u qkey 0x%08" PRIx32
	       " pkey 0x%04x state %s\n",
	       g->mgid_text, get16(resp + MCR_MLID), sl_flow_hop >> 28, resp[MCR_MTU] & 0x3f,
	       resp[MCR_RATE] & 0x3f, get32(resp + MCR_QKEY), get16(resp + MCR_PKEY),
	       join_state_name(resp[MCR_SCOPE_STATE] & 0xf));
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mgid", required_argument, NULL, 'g' },
		{ "sl", required_argument, NULL, 's' },
		{ "join-state", required_argument, NULL, 'j' },
		{ "qkey", required_argument, NULL, 'q' },
		{ "pkey", required_argument, NULL, 'k' },
		{ "mtu", required_argument, NULL, 'm' },
		{ "rate", required_argument, NULL, 'r' },
		{ "no-create", no_argument, NULL, 'n' },
		{ "ca", required_argument, NULL, 'C' },
		{ "port", required_argument, NULL, 'P' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct settings s = {
		.join_state = JOIN_FULL, .mtu = 4, .rate = 3, .qkey = 0x0b1b, .pkey = 0xffff
	};
	static struct join_req groups[MAX_GROUPS];
	int mgmt_classes[] = { IB_SMI_CLASS, IB_SMI_DIRECT_CLASS, IB_SA_CLASS };
	struct ibmad_port *srcport = NULL;
	unsigned ngroups = 0, i, failed = 0;
	unsigned long v;
	char *ca = NULL;
	int port = 0, timeout = 2000, c, portnum;
	ib_portid_t self, sm;
	ibmad_gid_t gid;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'g':
			if (ngroups == MAX_GROUPS) {
				fprintf(stderr, "sarnue-mcjoin: at most %d groups in one run\n",
					MAX_GROUPS);
				return 1;
			}
			if (add_group(&groups[ngroups++], optarg, &s))
				return 1;
			break;
		case 's':
			if (parse_uint("--sl", optarg, 15, &v))
				return 1;
			s.sl = (unsigned)v;
			break;
		case 'j':
			if (parse_join_state(optarg, &s.join_state))
				return 1;
			break;
		case 'q':
			if (parse_uint("--qkey", optarg, UINT32_MAX, &v))
				return 1;
			s.qkey = (uint32_t)v;
			break;
		case 'k':
			if (parse_uint("--pkey", optarg, 0xffff, &v))
				return 1;
			s.pkey = (uint16_t)v;
			break;
		case 'm':
			if (parse_uint("--mtu", optarg, 5, &v) || v < 1) {
				fprintf(stderr, "sarnue-mcjoin: --mtu is an IB MTU code 1-5\n");
				return 1;
			}
			s.mtu = (unsigned)v;
			break;
		case 'r':
			if (parse_uint("--rate", optarg, 18, &v) || v < 2) {
				fprintf(stderr, "sarnue-mcjoin: --rate is an IB rate code 2-18\n");
				return 1;
			}
			s.rate = (unsigned)v;
			break;
		case 'n':
			s.no_create = 1;
			break;
		case 'C':
			ca = optarg;
			break;
		case 'P':
			if (parse_uint("--port", optarg, 254, &v))
				return 1;
			port = (int)v;
			break;
		case 't':
			if (parse_uint("--timeout", optarg, 600000, &v) || v == 0) {
				fprintf(stderr, "sarnue-mcjoin: --timeout is 1 to 600000 ms\n");
				return 1;
			}
			timeout = (int)v;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "sarnue-mcjoin: unexpected argument '%s' (groups go with --mgid)\n",
			argv[optind]);
		return 1;
	}
	if (!ngroups) {
		fprintf(stderr, "sarnue-mcjoin: no group given (--mgid MGID); see --help\n");
		return 1;
	}

	srcport = mad_rpc_open_port(ca, port, mgmt_classes, 3);
	if (!srcport) {
		fprintf(stderr,
			"sarnue-mcjoin: cannot open %s port %d for SA MADs (no umad device? under "
			"ibsim: LD_PRELOAD libumad2sim.so)\n",
			ca ? ca : "the first CA", port);
		return 1;
	}
	memset(&self, 0, sizeof(self));
	memset(&sm, 0, sizeof(sm));
	if (ib_resolve_self_via(&self, &portnum, &gid, srcport) < 0) {
		fprintf(stderr, "sarnue-mcjoin: cannot read the local port's LID and GID\n");
		failed = 1;
		goto out;
	}
	if (ib_resolve_smlid_via(&sm, timeout, srcport) < 0 || !sm.lid) {
		fprintf(stderr, "sarnue-mcjoin: the local port knows no SM LID (is OpenSM up?)\n");
		failed = 1;
		goto out;
	}
	sm.qp = 1;
	sm.qkey = IB_DEFAULT_QP1_QKEY;
	for (i = 0; i < ngroups; i++)
		if (join_group(srcport, &sm, gid, &groups[i], timeout))
			failed++;
	if (failed)
		fprintf(stderr, "sarnue-mcjoin: %u of %u joins failed\n", failed, ngroups);
out:
	mad_rpc_close_port(srcport);
	return failed ? 1 : 0;
}
