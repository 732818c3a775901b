/*
 * test_updn.c - unit tests of the Up* / Down* engine: complete and deadlock-free (checked by the
 * verifier) on rings, tori with a switch removed, random graphs and trees; roots from the option
 * and automatic; a 3-level k-ary tree routed from its top level with ftree's balance; the
 * fall-back warning and what it costs; LMC; determinism; clear errors for bad roots and
 * disconnected switches.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "testfab.h"
#include "engines/engines.h"
#include "engines/updn/updn.h"
#include "check/metrics.h"
#include "check/verify.h"

static void route_and_verify(struct fabric *f, const struct updn_opts *o, const char *what)
{
	struct updn_report rep;
	struct verify_report v;
	struct fab_error err = { "" };
	struct routing r;

	CHECK(routing_init(&r, f, "sar-updn") == 0);
	if (updn_route(f, o, &r, &rep, &err)) {
		fprintf(stderr, "%s: updn failed: %s\n", what, err.msg);
		check_failures++;
		routing_free(&r);
		return;
	}
	CHECK(verify_routing(f, &r, &v) == 0);
	if (!verify_ok(&v)) {
		fprintf(stderr, "%s: not verified:\n", what);
		verify_print_text(&v, stderr);
		check_failures++;
	}
	CHECK(v.pairs > 0);
	CHECK(verify_count_bits(v.vls_used) <= 1);
	routing_free(&r);
}

static void test_ring(void)
{
	unsigned links[5][2];
	struct fabric f;

	CHECK(testfab_build(&f, 5, 2, (const unsigned(*)[2])links, testfab_ring(links, 5), 0) == 0);
	route_and_verify(&f, NULL, "ring of 5");
	fabric_free(&f);
}

/* The fabric on which OpenSM's own updn produced a credit loop (thesis section 6.1). */
static void test_faulty_torus(void)
{
	static unsigned links[3 * 48][2];
	struct fabric f;
	unsigned n = testfab_torus(links, 4, 4, 3, 5);

	CHECK(testfab_build(&f, 47, 4, (const unsigned(*)[2])links, n, 0) == 0);
	CHECK(fabric_switch_components(&f, NULL) == 1);
	route_and_verify(&f, NULL, "4x4x3 torus without a switch");
	fabric_free(&f);
}

static void test_random_graphs(void)
{
	static unsigned links[32 * 3][2];
	unsigned seed, i;

	for (seed = 1; seed <= 5; seed++) {
		struct fabric f;
		unsigned n = 0;

		srand(seed);
		/* A ring keeps it connected; random chords make it irregular. */
		n = testfab_ring(links, 32);
		for (i = 0; i < 40; i++) {
			unsigned a = (unsigned)rand() % 32, b = (unsigned)rand() % 32;

			if (a == b)
				continue;
			links[n][0] = a;
			links[n][1] = b;
			n++;
		}
		CHECK(testfab_build(&f, 32, 3, (const unsigned(*)[2])links, n, 0) == 0);
		route_and_verify(&f, NULL, "random graph");
		fabric_free(&f);
	}
}

static void test_fat_tree_roots(void)
{
	struct updn_report rep;
	struct fab_error err;
	struct routing r;
	struct fabric f;
	uint32_t s;

	CHECK(testfab_fat_tree(&f, 0) == 0);
	CHECK(routing_init(&r, &f, "t") == 0);
	CHECK(updn_route(&f, NULL, &r, &rep, &err) == 0);
	/* The automatic choice is the whole spine level. */
	CHECK(rep.nroots == 4);
	for (s = 0; s < rep.nroots; s++)
		CHECK(rep.root_guids[s] >= 0x1000 && rep.root_guids[s] <= 0x1003);
	/* Every leaf-to-leaf route is 2 switch hops + 2 host links: minimal. */
	routing_free(&r);
	route_and_verify(&f, NULL, "fat tree");
	fabric_free(&f);
}

/*
 * The k-ary n-tree of `sarnue gen ktree`: n levels of k^(n-1) switches, level l switch i is
 * switch l * k^(n-1) + i; its up port c leads to the level l+1 switch whose base-k digit l is c.
 */
static unsigned ktree_links(unsigned (*links)[2], unsigned k, unsigned n)
{
	unsigned per = 1, l, i, c, digit, np = 0;

	for (l = 1; l < n; l++)
		per *= k;
	for (l = 0, digit = 1; l + 1 < n; l++, digit *= k) {
		for (i = 0; i < per; i++) {
			for (c = 0; c < k; c++) {
				unsigned j = i - (i / digit % k) * digit + c * digit;

				links[np][0] = l * per + i;
				links[np][1] = (l + 1) * per + j;
				np++;
			}
		}
	}
	return np;
}

static uint64_t max_efi(const struct fabric *f, const struct routing *r)
{
	struct metrics_options o;
	struct metrics_efi e;
	uint64_t max;

	metrics_options_default(&o);
	CHECK(metrics_efi(f, r, &o, &e) == 0);
	CHECK(e.unrouted == 0);
	max = e.dist.max;
	metrics_efi_free(&e);
	return max;
}

/*
 * A 4-ary 3-tree (48 switches, 64 hosts) keeps its 16 top switches as roots: the middle
 * switches of different pods reach each other's LIDs through the turn switch, without the
 * single-root fall-back, deadlock-free and complete.  The maximum EFI of all-to-all stays within
 * 10% of the cut bound at a leaf: 4 hosts x 60 others over 4 up-links = 60 (OpenSM's ftree).
 */
static void test_three_level_tree(void)
{
	static unsigned links[2 * 16 * 4][2];
	unsigned hosts[48] = { 0 }, i;
	struct sarnue_options o;
	struct engine_result res;
	struct fab_error err = { "" };
	struct updn_report rep;
	struct verify_report v;
	struct routing r;
	struct fabric f;
	uint64_t bound = 4 * 60 / 4;

	for (i = 0; i < 16; i++)
		hosts[i] = 4;
	CHECK(testfab_build_hosts(&f, 48, hosts, 0, (const unsigned(*)[2])links,
				  ktree_links(links, 4, 3), 0) == 0);
	CHECK(routing_init(&r, &f, "sar-updn") == 0);
	CHECK(updn_route(&f, NULL, &r, &rep, &err) == 0);
	CHECK(rep.fell_back_from == 0 && rep.nroots == 16);
	CHECK(!strcmp(rep.root_source, "top level of the tree"));
	for (i = 0; i < rep.nroots; i++)
		CHECK(rep.root_guids[i] >= 0x1000 + 32 && rep.root_guids[i] < 0x1000 + 48);
	/* Top to top and middle to middle across pods need the turn switch. */
	CHECK(rep.turn_routes > 0);
	CHECK(verify_routing(&f, &r, &v) == 0 && verify_ok(&v));
	CHECK(v.unreachable == 0 && v.loops == 0 && v.credit_loop_vls == 0);
	CHECK(v.pairs == 112 * 111);
	/* D-mod-k's ports: the cut bound itself, and sar-dmodk's entry for every CA LID. */
	CHECK(max_efi(&f, &r) == bound);
	{
		struct routing dk;
		uint32_t s, lid, same = 0, cas = 0;

		options_defaults(&o);
		CHECK(routing_init(&dk, &f, "sar-dmodk") == 0);
		CHECK(engine_run("sar-dmodk", &f, &o, &dk, &res, &err) == 0);
		for (lid = 1; lid <= f.max_lid; lid++) {
			uint32_t p = f.lid_port[lid];

			if (p == FAB_NONE || fabric_is_switch(&f, f.ports[p].node))
				continue;
			for (s = 0; s < f.nswitches; s++) {
				cas++;
				same += routing_lft(&r, s)[lid] == routing_lft(&dk, s)[lid];
			}
		}
		CHECK(cas == 64 * 48 && same == cas);
		routing_free(&dk);
	}
	routing_free(&r);

	/* Through the engine's entry point: no warning, and the summary names the tree. */
	options_defaults(&o);
	CHECK(routing_init(&r, &f, "sar-updn") == 0);
	CHECK(engine_run("sar-updn", &f, &o, &r, &res, &err) == 0);
	CHECK(res.verified && verify_ok(&res.verify));
	CHECK(res.warning[0] == '\0');
	CHECK(strstr(res.summary, "16 root(s) from top level of the tree") != NULL);
	routing_free(&r);
	fabric_free(&f);
}

/*
 * Two roots named on a 4x4 torus: their turn routes close a credit loop, so the single most
 * central switch routes instead, and the warning says what that costs in maximum EFI against
 * the named roots' own attempt.
 */
static void test_fall_back_warning(void)
{
	unsigned links[32][2];
	struct sarnue_options o;
	struct engine_result res;
	struct fab_error err = { "" };
	struct updn_report rep;
	struct routing r;
	struct fabric f;
	char want[64];

	CHECK(testfab_build(&f, 16, 1, (const unsigned(*)[2])links,
			    testfab_torus(links, 4, 4, 1, -1), 0) == 0);
	options_defaults(&o);
	o.updn_roots[0] = 0x1000;
	o.updn_roots[1] = 0x100a;
	o.n_updn_roots = 2;
	CHECK(routing_init(&r, &f, "sar-updn") == 0);
	CHECK(engine_run("sar-updn", &f, &o, &r, &res, &err) == 0);
	CHECK(res.verified && verify_ok(&res.verify));
	CHECK(strstr(res.summary, "1 root(s) from most central switch") != NULL);
	CHECK(strstr(res.warning, "sar-updn: 2 root(s) could not route every LID") != NULL);
	CHECK(strchr(res.warning, '\n') == NULL);

	{
		struct updn_opts uo = { .root_guids = o.updn_roots, .nroots = 2 };

		CHECK(updn_route(&f, &uo, &r, &rep, &err) == 0);
	}
	CHECK(rep.fell_back_from == 2 && rep.efi_known && rep.nroots == 1);
	CHECK(rep.fallback_max_efi == max_efi(&f, &r) && rep.roots_max_efi > 0);
	snprintf(want, sizeof(want), "max EFI %llu against %llu with the 2 root(s)",
		 (unsigned long long)rep.fallback_max_efi, (unsigned long long)rep.roots_max_efi);
	CHECK(strstr(res.warning, want) != NULL);
	routing_free(&r);
	fabric_free(&f);
}

static void test_lmc_spreads(void)
{
	struct updn_report rep;
	struct fab_error err;
	struct routing r;
	struct fabric f;
	uint32_t leaf, e, spread = 0, pairs = 0;

	CHECK(testfab_fat_tree(&f, 2) == 0);
	route_and_verify(&f, NULL, "fat tree LMC 2");
	CHECK(routing_init(&r, &f, "t") == 0);
	CHECK(updn_route(&f, NULL, &r, &rep, &err) == 0);
	/* From a leaf, the 4 LIDs of a remote host should leave through different uplinks. */
	leaf = f.nodes[4].sw;
	for (e = 0; e < f.nendports; e++) {
		const struct fab_port *p = &f.ports[f.endports[e]];
		const uint8_t *lft = routing_lft(&r, leaf);

		if (fabric_is_switch(&f, p->node) || fabric_attached_switch(&f, f.endports[e]) == 4)
			continue;
		pairs++;
		if (lft[p->base_lid] != lft[p->base_lid + 1] &&
		    lft[p->base_lid + 1] != lft[p->base_lid + 2])
			spread++;
	}
	CHECK(pairs > 0 && spread == pairs);
	routing_free(&r);
	fabric_free(&f);
}

static void test_option_roots_and_errors(void)
{
	unsigned links[6][2];
	uint64_t good[1] = { 0x1002 }, bad[1] = { 0x100000 };
	struct updn_opts o = { .root_guids = good, .nroots = 1 };
	struct updn_report rep;
	struct fab_error err = { "" };
	struct routing r, r2;
	struct fabric f;

	CHECK(testfab_build(&f, 6, 1, (const unsigned(*)[2])links, testfab_ring(links, 6), 0) == 0);
	CHECK(routing_init(&r, &f, "t") == 0 && routing_init(&r2, &f, "t") == 0);
	CHECK(updn_route(&f, &o, &r, &rep, &err) == 0);
	CHECK(rep.nroots == 1 && rep.root_guids[0] == 0x1002);
	CHECK(!strcmp(rep.root_source, "option"));
	/* Deterministic: a second run gives the same tables. */
	CHECK(updn_route(&f, &o, &r2, &rep, &err) == 0);
	CHECK(!memcmp(r.lft, r2.lft, (size_t)r.nswitches * r.lft_len));
	o.root_guids = bad;
	CHECK(updn_route(&f, &o, &r, &rep, &err) != 0);
	CHECK(strstr(err.msg, "0x0000000000100000 is not a switch") != NULL);
	routing_free(&r);
	routing_free(&r2);
	fabric_free(&f);
}

static void test_disconnected_switch(void)
{
	unsigned links[3][2] = { { 0, 1 }, { 1, 2 }, { 2, 0 } };
	struct updn_report rep;
	struct fab_error err = { "" };
	struct routing r;
	struct fabric f;

	/* Switch 3 exists, with hosts, but no link to the others. */
	CHECK(testfab_build(&f, 4, 1, (const unsigned(*)[2])links, 3, 0) == 0);
	CHECK(routing_init(&r, &f, "t") == 0);
	CHECK(updn_route(&f, NULL, &r, &rep, &err) != 0);
	CHECK(strstr(err.msg, "0x0000000000001003") && strstr(err.msg, "disconnected"));
	routing_free(&r);
	fabric_free(&f);
}

/* A host whose link is down and a link without VLs are refused with the culprit named. */
static void test_bad_ports(void)
{
	unsigned links[4][2];
	struct sarnue_options o;
	struct engine_result res;
	struct fab_error err = { "" };
	struct routing r;
	struct fabric f;
	uint32_t h;

	options_defaults(&o);
	CHECK(testfab_build(&f, 4, 1, (const unsigned(*)[2])links, testfab_ring(links, 4), 0) == 0);
	CHECK(routing_init(&r, &f, "t") == 0);
	h = fabric_find_node_by_id(&f, "h2.0");
	fabric_port(&f, h, 1)->op_vls = 0;
	CHECK(engine_run("sar-updn", &f, &o, &r, &res, &err) != 0);
	CHECK(strstr(err.msg, "h2.0 port 1 has no operational data VL") != NULL);
	fabric_port(&f, h, 1)->op_vls = 1;
	fabric_port(&f, h, 1)->state = FAB_PORT_DOWN;
	CHECK(engine_run("sar-updn", &f, &o, &r, &res, &err) != 0);
	CHECK(strstr(err.msg, "h2.0 port 1") && strstr(err.msg, "no active link"));
	fabric_port(&f, h, 1)->state = FAB_PORT_ACTIVE;
	CHECK(engine_run("sar-updn", &f, &o, &r, &res, &err) == 0);
	CHECK(res.verified && verify_ok(&res.verify));
	routing_free(&r);
	fabric_free(&f);
}

int main(void)
{
	test_bad_ports();
	test_ring();
	test_faulty_torus();
	test_random_graphs();
	test_fat_tree_roots();
	test_three_level_tree();
	test_fall_back_warning();
	test_lmc_spreads();
	test_option_roots_and_errors();
	test_disconnected_switch();
	return CHECK_RESULT();
}
