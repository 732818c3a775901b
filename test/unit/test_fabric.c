/*
 * test_fabric.c - unit tests of the fabric model and its loaders: builder, LID assignment, CSR
 * adjacency, net-file parsing (ibsim and ibnetdiscover flavours) and its error messages, and
 * the shared key sort, the Dijkstra heap, the growing of buffers, arrays and string arenas, the
 * field scanners, line reader and opensm-subnet.lst reader of the dump loaders, the topology
 * loader every program shares, and the gate that holds helper work off an engine's second CPU.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "check.h"
#include "fabric/loaders.h"
#include "lib/minheap.h"
#include "lib/numbers.h"
#include "lib/sortu64.h"
#include "testfab.h"
#include "lib/threads.h"
#include "lib/scan.h"
#include "lib/arena.h"
#include "lib/input.h"

static char *write_tmp(const char *text)
{
	static char path[64];
	FILE *f;
	int fd;

	strcpy(path, "/tmp/sarnue-test-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	return path;
}

/* Loads net text into f (initialised here) through a temporary file; 0 on success. */
static int load_net_text(struct fabric *f, const char *net, const struct netfile_opts *o)
{
	struct fab_error err = { "" };
	char *path = write_tmp(net);
	int rc;

	fabric_init(f);
	rc = fabric_load_netfile(f, path, o, &err);
	if (rc)
		fprintf(stderr, "loading the net text failed: %s\n", err.msg);
	unlink(path);
	return rc;
}

/*
 * The GUID check every loader meets in fabric_finalize(): node GUIDs and the port GUIDs of
 * linked CA ports are unique and not 0; an unlinked port's GUID is no one's business.
 */
static void test_guid_clash(void)
{
	struct fab_guid_clash c;
	struct fab_error err;
	struct fabric f;
	uint32_t sw, a, b;

	fabric_init(&f);
	sw = fabric_add_node(&f, FAB_SWITCH, 0x10, 4, "sw", "sw");
	a = fabric_add_node(&f, FAB_CA, 0x20, 2, "ha", "ha");
	b = fabric_add_node(&f, FAB_CA, 0x30, 1, "hb", "hb");
	CHECK(fabric_link(&f, sw, 1, a, 1, &err) == 0 && fabric_link(&f, sw, 2, b, 1, &err) == 0);
	CHECK(fabric_find_guid_clash(&f, &c) == 0);
	fabric_port(&f, b, 1)->guid = 0x22; /* port 2 of ha, which is not linked */
	CHECK(fabric_find_guid_clash(&f, &c) == 0);
	fabric_port(&f, b, 1)->guid = 0x21; /* port 1 of ha */
	CHECK(fabric_find_guid_clash(&f, &c) == 1 && c.port && c.guid == 0x21 && c.first == a &&
	      c.second == b);
	CHECK(fabric_finalize(&f, &err) == -1 &&
	      !strcmp(err.msg, "port GUID 0x0000000000000021 used by both ha and hb"));
	fabric_port(&f, b, 1)->guid = 0x31;
	f.nodes[b].guid = 0x10;
	CHECK(fabric_find_guid_clash(&f, &c) == 1 && !c.port && c.first == sw && c.second == b);
	f.nodes[b].guid = 0;
	CHECK(fabric_find_guid_clash(&f, &c) == 1 && c.guid == 0 && c.first == b &&
	      c.second == FAB_NONE);
	CHECK(fabric_finalize(&f, &err) == -1 &&
	      !strcmp(err.msg, "hb: node GUID 0 is not a valid GUID"));
	fabric_free(&f);
}

static void test_builder_and_lids(void)
{
	unsigned links[8][2];
	struct fabric f;
	uint32_t s, e, lid;

	CHECK(testfab_build(&f, 4, 2, (const unsigned(*)[2])links, testfab_ring(links, 4), 1) == 0);
	CHECK(f.nswitches == 4);
	CHECK(f.nendports == 4 + 8);
	/* Every switch of a ring has two switch neighbours. */
	for (s = 0; s < f.nswitches; s++)
		CHECK(f.sw_adj_off[s + 1] - f.sw_adj_off[s] == 2);
	/* LMC 1: each host port owns two LIDs, aligned, the switches one each. */
	for (e = 0; e < f.nendports; e++) {
		const struct fab_port *p = &f.ports[f.endports[e]];

		if (fabric_is_switch(&f, p->node)) {
			CHECK(p->lmc == 0);
		} else {
			CHECK(p->lmc == 1);
			CHECK(p->base_lid % 2 == 0);
			CHECK(f.lid_port[p->base_lid + 1] == f.endports[e]);
		}
	}
	for (lid = 1; lid <= f.max_lid; lid++)
		CHECK(f.lid_port[lid] != FAB_NONE || lid % 2 == 1);
	CHECK(fabric_switch_components(&f, NULL) == 1);
	fabric_free(&f);
}

static void test_netfile_ibsim(void)
{
	const char *net = "# two switches\n"
			  "Switch 8 \"S1\" # \"leaf one\"\n"
			  "[1] \"H1\"[1]\n"
			  "[3] \"S2\"[3] w=4\n"
			  "[4] \"S2\"[4]\n"
			  "\n"
			  "Switch 8 \"S2\"\n"
			  "[3] \"S1\"[3]\n"
			  "[4] \"S1\"[4]\n"
			  "[5] \"H2\"[1]\n"
			  "\n"
			  "Hca 1 \"H1\" # \"node0001 HCA-1\"\n"
			  "[1] \"S1\"[1]\n"
			  "\n"
			  "Hca 2 \"H2\"\n"
			  "[1] \"S2\"[5]\n";
	struct netfile_opts o = { .lmc = 0, .op_vls = 4 };
	struct fabric f;
	uint32_t h1;

	CHECK(load_net_text(&f, net, &o) == 0);
	CHECK(f.nnodes == 4 && f.nswitches == 2);
	/* ibsim numbering: switches from 0x200000, CAs from 0x100000 skipping their port GUIDs. */
	CHECK(f.nodes[f.switches[0]].guid == 0x200000);
	CHECK(fabric_find_node_by_guid(&f, 0x100002) != FAB_NONE);
	h1 = fabric_find_node_by_id(&f, "H1");
	CHECK(h1 != FAB_NONE && !strcmp(fabric_node_desc(&f, h1), "node0001 HCA-1"));
	CHECK(f.sw_adj_off[1] - f.sw_adj_off[0] == 2); /* parallel links kept */
	CHECK(fabric_min_op_vls(&f) == 4);
	CHECK(f.max_lid == 4);
	fabric_free(&f);
}

/* Every node type word ibsim and ibnetdiscover write, and nothing that merely starts like one. */
static void test_netfile_type_words(void)
{
	static const struct {
		const char *id;
		enum fab_node_type type;
	} want[] = {
		{ "H1", FAB_CA }, { "H2", FAB_CA }, { "R1", FAB_ROUTER }, { "R2", FAB_ROUTER }
	};
	const char *net = "Switch\t4 \"S1\"\n"
			  "[1] \"H1\"[1]\n[2] \"H2\"[1]\n[3] \"R1\"[1]\n[4] \"R2\"[1]\n"
			  "Ca 1 \"H1\"\n[1] \"S1\"[1]\n"
			  "Hca 1 \"H2\"\n[1] \"S1\"[2]\n"
			  "Rt 1 \"R1\"\n[1] \"S1\"[3]\n"
			  "Router 1 \"R2\"\n[1] \"S1\"[4]\n";
	struct fabric f;
	size_t i;

	CHECK(load_net_text(&f, net, NULL) == 0);
	CHECK(f.nswitches == 1 && f.nnodes == 5);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		uint32_t node = fabric_find_node_by_id(&f, want[i].id);

		CHECK(node != FAB_NONE && f.nodes[node].type == want[i].type);
	}
	fabric_free(&f);
}

static void expect_error(const char *net, const char *needle)
{
	struct fab_error err = { "" };
	struct fabric f;
	char *path = write_tmp(net);

	fabric_init(&f);
	CHECK(fabric_load_netfile(&f, path, NULL, &err) != 0);
	if (!strstr(err.msg, needle)) {
		fprintf(stderr, "error '%s' lacks '%s'\n", err.msg, needle);
		check_failures++;
	}
	/* The message names the file. */
	CHECK(strstr(err.msg, path) != NULL);
	unlink(path);
	fabric_free(&f);
}

static void test_netfile_errors(void)
{
	expect_error("Switch 8 \"S1\"\n[1] \"H9\"[1]\n", ":2: link to unknown node \"H9\"");
	expect_error("Switch 8 \"S1\"\n[9] \"S1\"[1]\n", ":2: bad local port number");
	expect_error("Switch 8 \"S1\"\n[1] \"S2\n", ":2: expected \"remote-id\"[port]");
	expect_error("Switch 8 \"S1\"\n[1] \"S2\"[1]\n\nSwitch 8 \"S2\"\n[1] \"S1\"[2]\n",
		     "already linked");
	expect_error("Bridge 8 \"S1\"\n", ":1: expected a node header");
	expect_error("Switches 8 \"S1\"\n", ":1: expected a node header");
	expect_error("Swit 8 \"S1\"\n", ":1: expected a node header");
	expect_error("Switch8 \"S1\"\n", ":1: expected a node header");
	expect_error("Switch 0 \"S1\"\n", ":1: bad port count");
	expect_error("Switch +8 \"S1\"\n", ":1: bad port count");
	expect_error("Switch 255 \"S1\"\n", ":1: bad port count");
	expect_error("Switch 8 \"S1\"\n\nSwitch 4 \"S1\"\n", ":3: node id defined twice");
	expect_error("\n# nothing\n", "no nodes");
}

static void test_netfile_ibnetdiscover(void)
{
	const char *net =
		"vendid=0x8f1\ndevid=0x5a5a\nsysimgguid=0x8f10400411a08\n"
		"switchguid=0x8f10400411a08(8f10400411a08)\n"
		"Switch\t24 \"S-0008f10400411a08\"\t\t# \"ISR9024 Voltaire\" base port 0 lid 2 lmc 0\n"
		"[1]\t\"H-0008f10403961354\"[1](8f10403961355)\t\t# \"MT23108\" lid 4 4xSDR\n"
		"\n"
		"vendid=0x2c9\ncaguid=0x8f10403961354\n"
		"Ca\t2 \"H-0008f10403961354\"\t\t# \"MT23108 InfiniHost Mellanox Technologies\"\n"
		"[1](8f10403961355)\t\"S-0008f10400411a08\"[1]\t\t# lid 4 lmc 0 \"ISR9024\" lid 2\n";
	struct fabric f;

	CHECK(load_net_text(&f, net, NULL) == 0);
	CHECK(fabric_find_node_by_guid(&f, 0x0008f10400411a08ull) != FAB_NONE);
	CHECK(fabric_find_node_by_guid(&f, 0x0008f10403961354ull) != FAB_NONE);
	CHECK(f.nendports == 2);
	fabric_free(&f);
}

/* Link ends as OpenSM writes them into opensm-subnet.lst. */
#define LST_SW0(pn)                                                                     \
	"{ SW Ports:04 SystemGUID:0000000000000a00 NodeGUID:0000000000000a00 PortGUID:" \
	"0000000000000a00 VenID:0002C9 DevID:BD36 Rev:000000A0 {spine 0} LID:0001 PN:" pn " }"
#define LST_SW1(pn)                                                                        \
	"{ SW-SM Ports:24 SystemGUID:0000000000000a01 NodeGUID:0000000000000a01 PortGUID:" \
	"0000000000000a01 VenID:0002C9 DevID:BD36 Rev:000000A0 {leaf {1}} LID:00AB PN:" pn " }"
#define LST_CA                                                                          \
	"{ CA Ports:02 SystemGUID:0000000000000b00 NodeGUID:0000000000000b00 PortGUID:" \
	"0000000000000b02 VenID:020002C9 DevID:1003 Rev:00000000 {node01 HCA-1} LID:B001 PN:02 }"
#define LST_RT                                                                          \
	"{ Rt Ports:01 SystemGUID:0000000000000c00 NodeGUID:0000000000000c00 PortGUID:" \
	"0000000000000c01 VenID:000000 DevID:0000 Rev:00000000 {gw} LID:0010 PN:01 }"
#define LST_TAIL " PHY=4x LOG=ACT SPD=2.5\n"

/* Loads text as an opensm-subnet.lst into a fresh f; the loader's return. */
static int load_lst(struct fabric *f, const char *text, struct fab_error *err)
{
	char *path = write_tmp(text);
	int rc;

	CHECK(path != NULL);
	fabric_init(f);
	rc = fabric_load_subnet_lst(f, path, 0, 4, err);
	unlink(path);
	return rc;
}

/* OpenSM's layout loads with every field in place, including the SM's "-SM" and braces. */
static void test_subnet_lst(void)
{
	static const char text[] = LST_SW0("01") " " LST_SW1("03")
		LST_TAIL LST_SW1("01") " " LST_CA LST_TAIL LST_SW1("02") " " LST_RT LST_TAIL;
	struct fab_error err = { "" };
	struct fabric f;
	uint32_t sw1, ca;

	CHECK(load_lst(&f, text, &err) == 0);
	CHECK(f.nnodes == 4 && f.nendports == 4 && f.max_lid == 0xb001);
	CHECK(f.nnodes == 4 && f.nswitches == 2);
	sw1 = fabric_switch_by_guid(&f, 0xa01);
	CHECK(sw1 != FAB_NONE);
	sw1 = f.switches[sw1];
	CHECK(f.nodes[sw1].nports == 0x24 && fabric_port(&f, sw1, 0)->base_lid == 0xab);
	CHECK(!strcmp(fabric_node_desc(&f, sw1), "leaf {1}"));
	for (ca = 0; ca < f.nnodes && f.nodes[ca].guid != 0xb00; ca++)
		;
	CHECK(ca < f.nnodes && f.nodes[ca].type == FAB_CA && f.nodes[ca].nports == 2);
	CHECK(fabric_port(&f, ca, 2)->base_lid == 0xb001 && fabric_port(&f, ca, 2)->guid == 0xb02);
	CHECK(!strcmp(fabric_node_desc(&f, ca), "node01 HCA-1"));
	fabric_free(&f);
}

/*
 * Each malformed field is named with its line, its column and what OpenSM would have written;
 * sscanf took 17-digit GUIDs (wrapped), "LID:0x1" and any port number.
 */
static void test_subnet_lst_errors(void)
{
	static const struct {
		const char *line, *at, *expected;
	} bad[] = {
		{ "{ SW Ports:04 SystemGUID:0 NodeGUID:10000000000000a00 PortGUID:0 VenID:0 "
		  "DevID:0 Rev:0 {s} LID:0001 PN:01 } " LST_CA "\n",
		  "NodeGUID", "\"NodeGUID:\" and 1 to 16 hex digits" },
		{ "{ ** Ports:04 SystemGUID:0 NodeGUID:a00 PortGUID:0 VenID:0 DevID:0 Rev:0 {s} "
		  "LID:0001 PN:01 } " LST_CA "\n",
		  "**", "node type SW, CA or Rt" },
		{ "{ SW Ports:104 SystemGUID:0 NodeGUID:a00 PortGUID:0 VenID:0 DevID:0 Rev:0 {s} "
		  "LID:0001 PN:01 } " LST_CA "\n",
		  "Ports", "\"Ports:\" and 1 or 2 hex digits" },
		{ "{ SW Ports:04 SystemGUID:0 NodeGUID:a00 PortGUID:0 VenID:0 DevID:0 Rev:0 {s} "
		  "LID:0x01 PN:01 } " LST_CA "\n",
		  "LID:", "\"LID:\" and 1 to 4 hex digits" },
		{ "{ SW Ports:04 SystemGUID:0 NodeGUID:a00 PortGUID:0 VenID:0 DevID:0 Rev:0 {s} "
		  "LID:10001 PN:01 } " LST_CA "\n",
		  "LID:", "\"LID:\" and 1 to 4 hex digits" },
		{ "{ SW Ports:04 SystemGUID:0 NodeGUID:a00 PortGUID:0 VenID:0 DevID:0 Rev:0 {s} "
		  "LID:0001 PN:05 } " LST_CA "\n",
		  "PN:", "a port number PN between 1 and Ports" },
		{ "{ SW Ports:04 SystemGUID:0 NodeGUID:a00 PortGUID:0 VenID:0 DevID:0 Rev:0 {s} "
		  "LID:0001 PN:00 } " LST_CA "\n",
		  "PN:", "a port number PN between 1 and Ports" },
		{ "{ SW Ports:04 SystemGUID:0 NodeGUID:a00 PortGUID:0 VenID:0 DevID:0 Rev:0 {s "
		  "LID:0001 PN:01 }\n",
		  "s LID", "node description closed by \"} LID:\"" },
		{ "{ SW Ports:04 SystemGUID:0 NodeGUID:a00 VenID:0 DevID:0 Rev:0 {s} LID:0001 PN:01 "
		  "} " LST_CA "\n",
		  "VenID", "\"PortGUID:\" and 1 to 16 hex digits" },
		{ LST_SW0("01") " x" LST_CA "\n", " x", "'{' opening a port" },
		{ LST_SW0("01") "\n", "\n", "'{' opening a port" },
	};
	/* Node a00 comes back with other ports: a corrupt dump, not another node. */
	static const char twice[] = LST_SW0(
		"01") " " LST_CA LST_TAIL
		      "{ SW Ports:08 SystemGUID:0 NodeGUID:a00 PortGUID:0 VenID:0 DevID:0 Rev:0 {s} "
		      "LID:0001 PN:02 } " LST_RT LST_TAIL;
	struct fab_error err = { "" };
	struct fabric f;
	char want[160];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(want, sizeof(want), ":1: column %u: expected %s",
			 (unsigned)(strstr(bad[i].line, bad[i].at) - bad[i].line) +
				 (bad[i].at[0] == ' ' ? 2 : 1),
			 bad[i].expected);
		CHECK(load_lst(&f, bad[i].line, &err) == -1);
		if (!strstr(err.msg, want))
			fprintf(stderr, "case %zu: got \"%s\", want \"%s\"\n", i, err.msg, want);
		CHECK(strstr(err.msg, want) != NULL);
		fabric_free(&f);
	}
	CHECK(load_lst(&f, twice, &err) == -1);
	CHECK(strstr(err.msg, ":2: node 0x0000000000000a00 differs from an earlier line") != NULL);
	fabric_free(&f);
}

/* Two models of one subnet match; a link down, a LID moved or an extra host do not. */
static void test_same_topology(void)
{
	unsigned links[8][2];
	unsigned n = testfab_ring(links, 4);
	struct fabric a, b;
	uint32_t p;

	CHECK(testfab_build(&a, 4, 2, (const unsigned(*)[2])links, n, 1) == 0);
	CHECK(testfab_build(&b, 4, 2, (const unsigned(*)[2])links, n, 1) == 0);
	CHECK(fabric_same_topology(&a, &b) && fabric_same_topology(&b, &a));
	/* INIT and ACTIVE route alike. */
	p = a.switches[0];
	p = a.nodes[p].first_port + 1;
	a.ports[p].state = FAB_PORT_INIT;
	CHECK(fabric_same_topology(&a, &b));
	a.ports[p].state = FAB_PORT_DOWN;
	CHECK(!fabric_same_topology(&a, &b));
	a.ports[p].state = FAB_PORT_ACTIVE;
	b.ports[b.endports[5]].base_lid++;
	CHECK(!fabric_same_topology(&a, &b));
	fabric_free(&b);
	CHECK(testfab_build(&b, 4, 3, (const unsigned(*)[2])links, n, 1) == 0);
	CHECK(!fabric_same_topology(&a, &b));
	fabric_free(&a);
	fabric_free(&b);
}

static int cmp_key(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Fills a with one of the shapes a quicksort can trip over, n keys. */
static void fill_keys(uint64_t *a, size_t n, unsigned shape, unsigned *seed)
{
	size_t i;

	for (i = 0; i < n; i++) {
		switch (shape) {
		case 0: /* random, full width */
			a[i] = ((uint64_t)rand_r(seed) << 40) ^ ((uint64_t)rand_r(seed) << 20) ^
			       (uint64_t)rand_r(seed);
			break;
		case 1: /* many duplicates */
			a[i] = (uint64_t)(rand_r(seed) % 4);
			break;
		case 2: /* ascending */
			a[i] = i;
			break;
		case 3: /* descending, near UINT64_MAX */
			a[i] = UINT64_MAX - i;
			break;
		case 4: /* all equal */
			a[i] = 7;
			break;
		default: /* organ pipe: a classic bad case for a median of three */
			a[i] = i < n / 2 ? i : n - i;
			break;
		}
	}
}

/* sort_u64 must agree with qsort on every size around its short-run cut and on bad shapes. */
static void test_sort_u64(void)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 15, 16, 17, 18, 33, 100, 1000, 20000 };
	unsigned seed = 12345, shape;
	size_t i, j;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (shape = 0; shape < 6; shape++) {
			size_t n = sizes[i];
			uint64_t *a = malloc(sizeof(*a) * (n + 1));
			uint64_t *b = malloc(sizeof(*b) * (n + 1));
			int same = 1;

			fill_keys(a, n, shape, &seed);
			memcpy(b, a, sizeof(*a) * n);
			sort_u64(a, n);
			qsort(b, n, sizeof(*b), cmp_key);
			for (j = 0; j < n; j++)
				same &= a[j] == b[j];
			CHECK(same);
			free(a);
			free(b);
		}
	}
}

/* The smallest (key, item) among the present items of the reference, or MINHEAP_ABSENT. */
static uint32_t reference_min(const uint64_t *key, const int *present, uint32_t n)
{
	uint32_t i, best = MINHEAP_ABSENT;

	for (i = 0; i < n; i++)
		if (present[i] && (best == MINHEAP_ABSENT || key[i] < key[best]))
			best = i;
	return best;
}

/*
 * Random inserts, key changes (mostly down, as Dijkstra does, sometimes up), removals and pops
 * against a brute-force reference: every pop must return the smallest key, ties to the smaller
 * item, and the heap must stay consistent through clears.  Keys are shifted left by shift bits,
 * so the keys' top bits (the heap compares key and item as one 128-bit number) decide as well.
 */
static void test_minheap(unsigned shift)
{
	enum {
		N = 300
	};
	uint64_t key[N];
	int present[N], ok = 1;
	unsigned seed = 777, step;
	struct minheap h;
	uint32_t i;

	CHECK(minheap_init(&h, N) == 0);
	memset(present, 0, sizeof(present));
	for (step = 0; step < 60000 && ok; step++) {
		uint32_t item = (uint32_t)rand_r(&seed) % N, op = (uint32_t)rand_r(&seed) % 10;

		if (step % 15000 == 14999) {
			minheap_clear(&h);
			memset(present, 0, sizeof(present));
		} else if (op < 4) {
			/* few values: many ties */
			uint64_t k = (uint64_t)(rand_r(&seed) % 50) << shift;

			if (present[item] && k > key[item] && op)
				k = key[item] / 2;
			minheap_set(&h, item, k);
			key[item] = k;
			present[item] = 1;
		} else if (op < 5) {
			minheap_remove(&h, item);
			present[item] = 0;
		} else {
			uint32_t want = reference_min(key, present, N), got = minheap_pop(&h);

			ok = got == want;
			if (got != MINHEAP_ABSENT && got < N)
				present[got] = 0;
		}
		for (i = 0; i < N && ok; i++)
			ok = !!minheap_contains(&h, i) == present[i];
	}
	CHECK(ok);
	while (minheap_pop(&h) != MINHEAP_ABSENT)
		;
	CHECK(h.size == 0);
	minheap_free(&h);
}

/* fab_grow and fab_reserve: doubling from the first size, contents kept, refusals unchanged. */
static void test_grow(void)
{
	uint32_t *arr = NULL, cap = 0, i, ok = 1;
	char *buf = NULL;
	size_t bcap = 0;

	CHECK(fab_grow((void **)&arr, &cap, 5, sizeof(*arr), 4) == 0 && cap == 8);
	for (i = 0; i < cap; i++)
		arr[i] = i * 7;
	CHECK(fab_grow((void **)&arr, &cap, 8, sizeof(*arr), 4) == 0 && cap == 8);
	CHECK(fab_grow((void **)&arr, &cap, 9, sizeof(*arr), 4) == 0 && cap == 16);
	CHECK(fab_grow((void **)&arr, &cap, 1000, sizeof(*arr), 4) == 0 && cap == 1024);
	for (i = 0; i < 8; i++)
		ok &= arr[i] == i * 7;
	CHECK(ok);
	/* Beyond what a size_t can hold: refused, the array stays as it was. */
	CHECK(fab_grow((void **)&arr, &cap, UINT32_MAX, SIZE_MAX / 4, 4) == -1);
	CHECK(cap == 1024 && arr[7] == 49);
	free(arr);

	/*
	 * Doubling 2^31 elements must not wrap to 0 (a loop without end): it stops at UINT32_MAX,
	 * whose size in bytes is refused here.
	 */
	arr = NULL;
	cap = 0x80000000u;
	CHECK(fab_grow((void **)&arr, &cap, 0x80000001u, SIZE_MAX / 2, 1) == -1);
	CHECK(cap == 0x80000000u && !arr);

	CHECK(fab_reserve(&buf, &bcap, 100, 64) == 0 && bcap == 128);
	memset(buf, 'x', bcap);
	CHECK(fab_reserve(&buf, &bcap, 129, 64) == 0 && bcap == 256 && buf[127] == 'x');
	CHECK(fab_reserve(&buf, &bcap, SIZE_MAX, 64) == -1 && bcap == 256);
	free(buf);
}

/* fab_strings_put: NUL-terminated strings at the offsets it hands out; refusals change nothing. */
static void test_strings_put(void)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	uint32_t a = 99, b = 99, c = 99;

	CHECK(fab_strings_put(&buf, &len, &cap, "node0001 HCA-1", 8, &a) == 0 && a == 0);
	CHECK(fab_strings_put(&buf, &len, &cap, "", 0, &b) == 0 && b == 9);
	CHECK(fab_strings_put(&buf, &len, &cap, "S-0001", 6, &c) == 0 && c == 10 && len == 17);
	CHECK(!strcmp(buf + a, "node0001") && !strcmp(buf + b, "") && !strcmp(buf + c, "S-0001"));
	/* An offset past 32 bits is refused before anything is read or copied. */
	CHECK(fab_strings_put(&buf, &len, &cap, "x", UINT32_MAX, &a) == -1);
	CHECK(len == 17 && a == 0 && !strcmp(buf + c, "S-0001"));
	free(buf);
}

/* Each scanner reads exactly its field and refuses what sscanf would have let through. */
static void test_field_scanners(void)
{
	const char *p = " \t0x00aBcD 17 x";
	uint64_t v;
	unsigned u;

	CHECK(fab_skip_blanks(&p) == 1 && *p == '0' && fab_skip_blanks(&p) == 0);
	CHECK(fab_scan_hex(&p, 16, &v) == 0 && v == 0xabcd && *p == ' ');
	CHECK(fab_skip_blanks(&p) && fab_scan_decimal(&p, 18, &u) == 0 && u == 17);
	CHECK(!fab_rest_blank(p) && fab_rest_blank(" \t\r\n"));
	p = "17";
	CHECK(fab_scan_decimal(&p, 17, &u) == -1); /* not below the limit */
	p = "-1";
	CHECK(fab_scan_decimal(&p, 100, &u) == -1);
	p = "99999999999999999999";
	CHECK(fab_scan_decimal(&p, 256, &u) == -1);
	p = "0x";
	CHECK(fab_scan_hex(&p, 4, &v) == -1);
	p = "0x12345";
	CHECK(fab_scan_hex(&p, 4, &v) == -1); /* five digits where four are the most */
	p = "12";
	CHECK(fab_scan_hex(&p, 4, &v) == -1); /* no 0x */
	p = "0XFFFFFFFFFFFFFFFF";
	CHECK(fab_scan_hex(&p, 16, &v) == 0 && v == UINT64_MAX);
	p = "00aB}";
	CHECK(fab_scan_hex_digits(&p, 4, &v) == 0 && v == 0xab && *p == '}');
	p = "12345";
	CHECK(fab_scan_hex_digits(&p, 4, &v) == -1);
	p = "x1";
	CHECK(fab_scan_hex_digits(&p, 4, &v) == -1);
	p = "0x2c9,";
	CHECK(fab_scan_guid(&p, &v) == 0 && v == 0x2c9 && *p == ',');
	p = "18446744073709551615 ";
	CHECK(fab_scan_guid(&p, &v) == 0 && v == UINT64_MAX && *p == ' ');
	p = "010";
	CHECK(fab_scan_guid(&p, &v) == 0 && v == 10); /* decimal, never octal */
	p = "18446744073709551616";
	CHECK(fab_scan_guid(&p, &v) == -1);
	p = "-1";
	CHECK(fab_scan_guid(&p, &v) == -1);
	p = "+1";
	CHECK(fab_scan_guid(&p, &v) == -1);
	p = "0x10000000000000000";
	CHECK(fab_scan_guid(&p, &v) == -1);
}

/* numbers.h: digits only, bounds exact at the top, nothing strtoul or strtod would guess. */
static void test_numbers(void)
{
	static const char *const refused[] = { "",   ".",  "nan", "inf", "1e3",	  "0x10",
					       "-1", "+1", " 1",  "1 ",	 "1.2.3", "1,5" };
	const char *p = "42x";
	size_t i;
	uint64_t v = 7;
	unsigned u = 7;
	double d = 7;

	CHECK(num_scan_u64(&p, 42, &v) == 0 && v == 42 && *p == 'x');
	p = "43";
	CHECK(num_scan_u64(&p, 42, &v) == -1);
	p = "5";
	CHECK(num_scan_u64(&p, 0, &v) == -1); /* a digit above a maximum of 0 */
	CHECK(num_parse_u64("18446744073709551615", UINT64_MAX, &v) == 0 && v == UINT64_MAX);
	CHECK(num_parse_u64("18446744073709551616", UINT64_MAX, &v) == -1);
	CHECK(num_parse_u64("0", 0, &v) == 0 && v == 0);
	CHECK(num_parse_u64("", 10, &v) == -1);
	CHECK(num_parse_u64(" 4", 10, &v) == -1);
	CHECK(num_parse_u64("+4", 10, &v) == -1);
	CHECK(num_parse_u64("-1", UINT64_MAX, &v) == -1);
	CHECK(num_parse_u64("4 ", 10, &v) == -1);
	CHECK(num_parse_uint("15", 1, 15, &u) == 0 && u == 15);
	CHECK(num_parse_uint("0", 1, 15, &u) == -1 && u == 15);
	CHECK(num_parse_uint("16", 1, 15, &u) == -1);
	CHECK(num_parse_uint("4294967296", 0, UINT32_MAX, &u) == -1);
	CHECK(num_parse_real("10", 0, 3600, &d) == 0 && d == 10);
	CHECK(num_parse_real("0.25", 0, 1, &d) == 0 && d == 0.25);
	CHECK(num_parse_real(".5", 0, 1, &d) == 0 && d == 0.5);
	CHECK(num_parse_real("2.", 0, 3, &d) == 0 && d == 2);
	CHECK(num_parse_real("0.05", 0.1, 3600, &d) == -1 && d == 2);
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		CHECK(num_parse_real(refused[i], 0, 1e9, &d) == -1);
}

/* A directory opens with fopen and reads as an empty file; the line reader refuses it. */
static void test_line_reader_directory(void)
{
	struct line_reader lr;

	CHECK(line_reader_open(&lr, "/tmp", FAB_LIMIT_LIST) == -1 && errno == FAB_ENOTREG);
}

static void write_bytes(const char *path, const char *data, size_t len)
{
	FILE *fp = fopen(path, "w");

	CHECK(fp && fwrite(data, 1, len, fp) == len);
	if (fp)
		fclose(fp);
}

/*
 * A FIFO without a writer, a character device and a socket are refused at once by type: a
 * blocking open of the FIFO would hang this test, an endless /dev/zero would exhaust memory.
 */
static void test_input_refuses_special_files(void)
{
	char dir[] = "/tmp/sarnue-input.XXXXXX", fifo[64], *text = NULL;
	struct line_reader lr;
	size_t len;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	CHECK(mkfifo(fifo, 0600) == 0);
	CHECK(line_reader_open(&lr, fifo, FAB_LIMIT_LIST) == -1 && errno == FAB_ENOTREG);
	CHECK(fab_open_read(fifo, FAB_LIMIT_LIST) == NULL && errno == FAB_ENOTREG);
	CHECK(fab_read_text(fifo, FAB_LIMIT_LIST, &text, &len) == -1 && errno == FAB_ENOTREG);
	CHECK(fab_read_text("/dev/zero", FAB_LIMIT_LIST, &text, &len) == -1 &&
	      errno == FAB_ENOTREG);
	CHECK(line_reader_open(&lr, "/dev/null", FAB_LIMIT_LIST) == -1 && errno == FAB_ENOTREG);
	CHECK(strstr(fab_strerror(FAB_ENOTREG), "not a regular file") != NULL);
	CHECK(text == NULL);
	unlink(fifo);
	rmdir(dir);
}

/* The size limit, NUL bytes, and the end of the file told apart from an error. */
static void test_input_limits_and_nul(void)
{
	char path[] = "/tmp/sarnue-input.XXXXXX", *text = NULL, msg[256];
	struct line_reader lr;
	size_t len = 0;
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	close(fd);
	write_bytes(path, "one\ntwo\n", 8);
	CHECK(line_reader_open(&lr, path, 7) == -1 && errno == EFBIG);
	CHECK(line_reader_open(&lr, path, 8) == 0);
	CHECK(line_reader_next(&lr) && line_reader_next(&lr) && !line_reader_next(&lr));
	CHECK(!line_reader_failed(&lr) && lr.lineno == 2);
	line_reader_close(&lr);
	CHECK(fab_read_text(path, 8, &text, &len) == 0 && len == 8 && !strcmp(text, "one\ntwo\n"));
	free(text);
	CHECK(fab_read_text(path, 7, &text, &len) == -1 && errno == EFBIG);

	write_bytes(path, "one\ntw\0o\nthree\n", 14);
	CHECK(line_reader_open(&lr, path, FAB_LIMIT_LIST) == 0);
	CHECK(line_reader_next(&lr) && !line_reader_next(&lr));
	CHECK(line_reader_failed(&lr) && lr.error == FAB_ENUL && lr.lineno == 2);
	line_reader_describe(&lr, "net", msg, sizeof(msg));
	CHECK(!strcmp(msg, "net:2: binary data (a NUL byte)"));
	line_reader_close(&lr);
	CHECK(fab_read_text(path, FAB_LIMIT_LIST, &text, &len) == -1 && errno == FAB_ENUL &&
	      len == 6);
	unlink(path);
}

struct gate_waiter {
	struct cpu_gate *gate;
	volatile int passed;
};

static void *wait_at_gate(void *arg)
{
	struct gate_waiter *w = arg;

	cpu_gate_wait(w->gate);
	w->passed = 1;
	return NULL;
}

/*
 * A thread waiting at a closed gate stays there until the gate opens, then passes; once open,
 * the gate lets everyone through at once.  Opening twice and NULL gates are harmless.
 */
static void test_cpu_gate(void)
{
	struct cpu_gate gate;
	struct gate_waiter w = { &gate, 0 };
	pthread_t t;

	CHECK(cpu_gate_init(&gate) == 0 && gate.open == 0);
	CHECK(pthread_create(&t, NULL, wait_at_gate, &w) == 0);
	usleep(20000);
	CHECK(w.passed == 0);
	cpu_gate_open(&gate);
	CHECK(pthread_join(t, NULL) == 0 && w.passed == 1);
	cpu_gate_open(&gate);
	cpu_gate_wait(&gate);
	cpu_gate_open(NULL);
	cpu_gate_wait(NULL);
	cpu_gate_destroy(&gate);
	cpu_gate_destroy(NULL);
}

/* Writes text to dir/name; the path in path[size]. */
static void write_named(const char *dir, const char *name, const char *text, char *path,
			size_t size)
{
	FILE *f;

	snprintf(path, size, "%s/%s", dir, name);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

/* fabric_load_topology() into a fresh f; err.msg must hold needle when one is given. */
static int load_topology(struct fabric *f, const char *path, const struct topology_opts *o,
			 char *file, size_t size, const char *needle)
{
	struct fab_error err = { "" };
	int rc;

	fabric_init(f);
	rc = fabric_load_topology(f, path, o, file, size, &err);
	if (needle && !strstr(err.msg, needle)) {
		fprintf(stderr, "error '%s' lacks '%s'\n", err.msg, needle);
		check_failures++;
	}
	return rc;
}

/*
 * The one topology loader of route, check and sarnue-filterd: a net file or a subnet.lst as the
 * caller says, or as the name says (a dump directory, a .lst file); the loaders' own errors for
 * a missing file or a file of the other kind.
 */
static void test_load_topology(void)
{
	static const char net[] = "Switch 4 \"S1\"\n[1] \"H1\"[1]\n\nHca 1 \"H1\"\n[1] \"S1\"[1]\n";
	static const char lst[] = LST_SW1("01") " " LST_CA LST_TAIL;
	char dir[] = "/tmp/sarnue-topo-XXXXXX", net_path[128], lst_path[128], odd_path[128];
	char missing[128], file[256];
	struct topology_opts o = { .net = { .lmc = 0, .op_vls = 8 }, .lst_op_vls = 15 };
	struct fabric f;
	uint32_t ca;

	CHECK(mkdtemp(dir) != NULL);
	write_named(dir, "fabric.net", net, net_path, sizeof(net_path));
	write_named(dir, "opensm-subnet.lst", lst, lst_path, sizeof(lst_path));
	/* A net file under a subnet.lst's name: the name decides, and the loader says it is not. */
	write_named(dir, "net.lst", net, odd_path, sizeof(odd_path));
	snprintf(missing, sizeof(missing), "%s/none.net", dir);

	o.format = TOPOLOGY_NETFILE;
	CHECK(load_topology(&f, net_path, &o, NULL, 0, "") == 0);
	CHECK(f.nnodes == 2 && f.nswitches == 1 && fabric_min_op_vls(&f) == 8);
	fabric_free(&f);

	o.format = TOPOLOGY_BY_NAME;
	CHECK(load_topology(&f, net_path, &o, file, sizeof(file), "") == 0);
	CHECK(!strcmp(file, net_path) && f.nnodes == 2);
	fabric_free(&f);

	/* LMC goes to the CA ports of a subnet.lst; its VLs are the caller's. */
	o.format = TOPOLOGY_SUBNET_LST;
	o.net.lmc = 1;
	CHECK(load_topology(&f, lst_path, &o, NULL, 0, "") == 0);
	CHECK(f.nnodes == 2 && fabric_min_op_vls(&f) == 15);
	ca = fabric_find_node_by_guid(&f, 0xb00);
	CHECK(ca != FAB_NONE && fabric_port(&f, ca, 2)->lmc == 1);
	fabric_free(&f);
	o.net.lmc = 0;

	/* A dump directory stands for its opensm-subnet.lst, also without a buffer for the name. */
	o.format = TOPOLOGY_BY_NAME;
	CHECK(load_topology(&f, dir, &o, file, sizeof(file), "") == 0);
	CHECK(!strcmp(file, lst_path) && f.nnodes == 2 && fabric_min_op_vls(&f) == 15);
	fabric_free(&f);
	CHECK(load_topology(&f, dir, &o, NULL, 0, "") == 0);
	fabric_free(&f);
	CHECK(load_topology(&f, dir, &o, file, 8, ": path too long") != 0);
	fabric_free(&f);

	/* A missing file names itself, in every format. */
	o.format = TOPOLOGY_NETFILE;
	CHECK(load_topology(&f, missing, &o, NULL, 0, "none.net: No such file") != 0);
	fabric_free(&f);
	o.format = TOPOLOGY_BY_NAME;
	CHECK(load_topology(&f, missing, &o, file, sizeof(file), "none.net: No such file") != 0);
	fabric_free(&f);

	/* A file of the other kind fails on its first line, with the loader's wording. */
	o.format = TOPOLOGY_SUBNET_LST;
	CHECK(load_topology(&f, net_path, &o, NULL, 0, "fabric.net:1: column 1: expected") != 0);
	fabric_free(&f);
	o.format = TOPOLOGY_NETFILE;
	CHECK(load_topology(&f, lst_path, &o, NULL, 0,
			    "opensm-subnet.lst:1: expected a node header") != 0);
	fabric_free(&f);
	o.format = TOPOLOGY_BY_NAME;
	CHECK(load_topology(&f, odd_path, &o, NULL, 0, "net.lst:1: column 1: expected") != 0);
	fabric_free(&f);

	unlink(net_path);
	unlink(lst_path);
	unlink(odd_path);
	rmdir(dir);
}

int main(void)
{
	test_grow();
	test_cpu_gate();
	test_strings_put();
	test_field_scanners();
	test_numbers();
	test_line_reader_directory();
	test_input_refuses_special_files();
	test_input_limits_and_nul();
	test_sort_u64();
	test_minheap(0);
	/* 49 << 58 is below 2^64: the largest keys use the top bits. */
	test_minheap(58);
	test_guid_clash();
	test_builder_and_lids();
	test_same_topology();
	test_netfile_ibsim();
	test_netfile_type_words();
	test_netfile_errors();
	test_netfile_ibnetdiscover();
	test_subnet_lst();
	test_subnet_lst_errors();
	test_load_topology();
	return CHECK_RESULT();
}
