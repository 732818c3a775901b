/*
 * test_verify.c - the verifier must catch what it exists for: a credit loop (ring routed
 * clockwise), its disappearance when SL2VL puts the two halves on different VLs, unreachable
 * destinations, forwarding loops; and it must pass a correct routing and count hops right.
 * Walking once per source switch must report exactly what walking every pair does: the same
 * routing with a per-port SL2VL table that repeats the uniform map is walked pair by pair.
 */
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "check.h"
#include "engines/engines.h"
#include "testfab.h"
#include "check/verify.h"

/* Ring of n switches, one host each; every switch forwards clockwise unless it is the target. */
static void route_clockwise(const struct fabric *f, struct routing *r, unsigned n)
{
	uint32_t s, lid;

	for (s = 0; s < n; s++) {
		uint8_t *lft = routing_lft(r, s);

		for (lid = 1; lid <= f->max_lid; lid++) {
			uint32_t p = f->lid_port[lid];
			uint32_t owner_sw =
				fabric_is_switch(f, f->ports[p].node)
					? f->nodes[f->ports[p].node].sw
					: f->nodes[f->ports[f->ports[p].remote].node].sw;

			/* testfab ports: 1 host; switch 0: 2 next, 3 previous; others the reverse
			 */
			if (owner_sw != s)
				lft[lid] = s == 0 ? 2 : 3;
			else
				lft[lid] = fabric_is_switch(f, f->ports[p].node) ? 0 : 1;
		}
	}
}

/*
 * Ring of n switches with `hosts` hosts each on ports 1..hosts, routed clockwise; switch 0 reaches
 * its successor through port hosts + 1, the others through hosts + 2 (testfab's link order).
 */
static void route_clockwise_hosts(const struct fabric *f, struct routing *r, unsigned n,
				  unsigned hosts)
{
	uint32_t s, lid;

	for (s = 0; s < n; s++) {
		uint8_t *lft = routing_lft(r, s);

		for (lid = 1; lid <= f->max_lid; lid++) {
			uint32_t p = f->lid_port[lid];
			int is_sw;
			uint32_t owner;

			if (p == FAB_NONE)
				continue;
			is_sw = fabric_is_switch(f, f->ports[p].node);
			owner = is_sw ? f->nodes[f->ports[p].node].sw
				      : f->nodes[f->ports[f->ports[p].remote].node].sw;
			if (owner != s)
				lft[lid] = (uint8_t)(s == 0 ? hosts + 1 : hosts + 2);
			else
				lft[lid] = is_sw ? 0 : f->ports[f->ports[p].remote].num;
		}
	}
}

static int same_report(const struct verify_report *a, const struct verify_report *b)
{
	return a->sources == b->sources && a->destinations == b->destinations &&
	       a->pairs == b->pairs && a->unreachable == b->unreachable && a->loops == b->loops &&
	       !strcmp(a->first_unreachable, b->first_unreachable) &&
	       !strcmp(a->first_loop, b->first_loop) && a->dependencies == b->dependencies &&
	       a->credit_loop_vls == b->credit_loop_vls && !strcmp(a->cycle, b->cycle) &&
	       a->cycle_len == b->cycle_len &&
	       !memcmp(a->hop_hist, b->hop_hist, sizeof(a->hop_hist)) &&
	       a->min_hops == b->min_hops && a->max_hops == b->max_hops &&
	       a->mean_hops == b->mean_hops && a->sls_used == b->sls_used &&
	       a->vls_used == b->vls_used;
}

/*
 * Verifies r as it is (one walk per source switch when it has no per-port SL2VL), then with a
 * per-port SL2VL table holding the uniform map everywhere (the same routing, walked pair by
 * pair), and checks that both reports agree; *v gets the report.  r is left as it came.
 */
static int verify_both_ways(const struct fabric *f, struct routing *r, struct verify_report *v)
{
	struct verify_report per_pair;
	int ok;

	if (r->sl2vl || verify_routing(f, r, v) || routing_alloc_sl2vl(r, f))
		return 0;
	ok = !verify_routing(f, r, &per_pair) && same_report(v, &per_pair);
	if (!ok)
		fprintf(stderr,
			"grouped: pairs %llu unreachable %llu loops %llu deps %llu '%s' '%s'\n"
			"per pair: pairs %llu unreachable %llu loops %llu deps %llu '%s' '%s'\n",
			(unsigned long long)v->pairs, (unsigned long long)v->unreachable,
			(unsigned long long)v->loops, (unsigned long long)v->dependencies,
			v->first_unreachable, v->first_loop, (unsigned long long)per_pair.pairs,
			(unsigned long long)per_pair.unreachable,
			(unsigned long long)per_pair.loops,
			(unsigned long long)per_pair.dependencies, per_pair.first_unreachable,
			per_pair.first_loop);
	free(r->sl2vl);
	r->sl2vl = NULL;
	return ok;
}

static int build_ring(struct fabric *f, unsigned n)
{
	unsigned links[8][2], i;

	for (i = 0; i < n; i++) {
		links[i][0] = i;
		links[i][1] = (i + 1) % n;
	}
	return testfab_build(f, n, 1, (const unsigned(*)[2])links, n, 0);
}

static void test_credit_loop_found(void)
{
	struct verify_report v;
	struct routing r;
	struct fabric f;

	CHECK(build_ring(&f, 5) == 0);
	CHECK(routing_init(&r, &f, "clockwise") == 0);
	route_clockwise(&f, &r, 5);
	CHECK(verify_routing(&f, &r, &v) == 0);
	CHECK(v.unreachable == 0 && v.loops == 0);
	CHECK(v.credit_loop_vls == 1);
	CHECK(v.cycle_len == 5);
	CHECK(strstr(v.cycle, "sw0[2] (VL 0)") != NULL);
	CHECK(!verify_ok(&v));
	CHECK(v.max_hops == 6); /* host, 4 ring links, host */
	routing_free(&r);
	fabric_free(&f);
}

/*
 * The routing says it uses one VL (the walker then keeps turn bits for VL 0 only), but its SL
 * maps to VL 2: the ring's credit loop there is still found.
 */
static void test_vl_count_understated(void)
{
	struct verify_report v;
	struct routing r;
	struct fabric f;

	CHECK(build_ring(&f, 5) == 0);
	CHECK(routing_init(&r, &f, "understated") == 0);
	route_clockwise(&f, &r, 5);
	r.vls_used = 1;
	r.sl2vl_uniform[0] = 2;
	CHECK(verify_routing(&f, &r, &v) == 0);
	CHECK(v.vls_used == 1u << 2 && v.credit_loop_vls == 1u << 2);
	CHECK(v.cycle_len == 5 && strstr(v.cycle, "(VL 2)") != NULL);
	CHECK(!verify_ok(&v));
	routing_free(&r);
	fabric_free(&f);
}

/*
 * SL2VL moves packets that enter switch 0 from switch 4 to VL 1 for one hop; switch 1 maps them
 * back to VL 0.  The ring's dependency cycle then runs through both VLs, and a verifier that
 * looked at each VL alone, or forgot which VL a packet arrives on, would miss it.
 */
static void test_cycle_across_vls(void)
{
	struct verify_report v;
	struct routing r;
	struct fabric f;
	unsigned in, out;

	CHECK(build_ring(&f, 5) == 0);
	CHECK(routing_init(&r, &f, "vl-hop") == 0);
	route_clockwise(&f, &r, 5);
	CHECK(routing_alloc_sl_by_dlid(&r) == 0);
	CHECK(routing_alloc_sl2vl(&r, &f) == 0);
	memset(r.sl_by_dlid, 1, r.lft_len);
	for (in = 0; in < r.sl2vl_stride; in++)
		for (out = 0; out < r.sl2vl_stride; out++)
			routing_sl2vl_map(&r, 0, in, out)[1] = in == 3 ? 1 : 0;
	CHECK(verify_routing(&f, &r, &v) == 0);
	CHECK(v.sls_used == 1u << 1);
	CHECK(v.vls_used == 3);
	CHECK(v.credit_loop_vls == 3);
	CHECK(v.cycle_len == 5);
	CHECK(strstr(v.cycle, "(VL 1)") != NULL);
	routing_free(&r);
	fabric_free(&f);
}

static void test_unreachable_and_forwarding_loop(void)
{
	struct verify_report v;
	struct routing r;
	struct fabric f;
	uint32_t lid;

	CHECK(build_ring(&f, 4) == 0);
	CHECK(routing_init(&r, &f, "broken") == 0);
	route_clockwise(&f, &r, 4);
	/* Switch 1 forgets one host LID; switches 2 and 3 bounce another between them. */
	for (lid = 1; lid <= f.max_lid; lid++)
		if (f.lid_port[lid] != FAB_NONE &&
		    !fabric_is_switch(&f, f.ports[f.lid_port[lid]].node))
			break;
	routing_lft(&r, 1)[lid] = FAB_NO_PORT;
	routing_lft(&r, 2)[lid + 1] = 3; /* to switch 3 */
	routing_lft(&r, 3)[lid + 1] = 2; /* back to switch 2 */
	CHECK(verify_routing(&f, &r, &v) == 0);
	CHECK(v.unreachable > 0);
	CHECK(strstr(v.first_unreachable, "no LFT entry") != NULL);
	CHECK(v.loops > 0);
	CHECK(strstr(v.first_loop, "forwarding loop") != NULL);
	CHECK(!verify_ok(&v));
	routing_free(&r);
	fabric_free(&f);
}

/* Routes f with a sarnue engine (the engine verifies too: the grouped walk must pass it). */
static int route_engine(const char *engine, const struct fabric *f, unsigned nue_vls,
			struct routing *r)
{
	struct sarnue_options o;
	struct engine_result res;
	struct fab_error err = { "" };

	options_defaults(&o);
	o.nue_vls = nue_vls;
	if (routing_init(r, f, engine))
		return -1;
	if (engine_run(engine, f, &o, r, &res, &err)) {
		fprintf(stderr, "%s: %s\n", engine, err.msg);
		return -1;
	}
	return 0;
}

/* LMC 2 on a fat tree whose spines have no hosts: every LID of a port is a source of its own. */
static void test_grouped_lmc(void)
{
	struct verify_report v;
	struct routing r;
	struct fabric f;

	CHECK(testfab_fat_tree(&f, 2) == 0);
	testfab_set_vls(&f, 8);
	CHECK(route_engine("sar-updn", &f, 1, &r) == 0);
	CHECK(verify_both_ways(&f, &r, &v));
	/* 10 switch LIDs and 18 hosts * 4 LIDs; no port sends to its own LIDs */
	CHECK(v.sources == 28 && v.destinations == 82);
	CHECK(v.pairs == 82 * 82 - 10 - 18 * 16);
	CHECK(verify_ok(&v) && v.min_hops == 1 && v.max_hops == 4);
	routing_free(&r);
	fabric_free(&f);
}

/*
 * A 3x3 torus with three hosts per switch and LMC 1, routed by Nue on 2 VLs (per-destination
 * SLs) and by DFSSSP (per-source-switch SLs); then one host loses its link, so its pairs fail in
 * both directions while the rest is counted per switch.
 */
static void test_grouped_hosts_sls_and_dead_port(void)
{
	static const char *const engines[] = { "sar-nue", "sar-dfsssp" };
	unsigned links[32][2], n = testfab_torus(links, 3, 3, 1, -1), e;
	struct verify_report v;
	struct routing r;
	struct fabric f;

	CHECK(testfab_build(&f, 9, 3, (const unsigned(*)[2])links, n, 1) == 0);
	testfab_set_vls(&f, 8);
	for (e = 0; e < 2; e++) {
		uint32_t host = fabric_find_node_by_id(&f, "h4.1"), p;

		CHECK(route_engine(engines[e], &f, 2, &r) == 0);
		CHECK(verify_both_ways(&f, &r, &v));
		CHECK(verify_ok(&v) && v.pairs == 63ull * 63 - 9 - 27 * 4);
		CHECK(e == 0 || routing_sl_per_source(&r));
		CHECK(host != FAB_NONE);
		p = f.nodes[host].first_port + 1;
		f.ports[p].state = FAB_PORT_DOWN;
		CHECK(verify_both_ways(&f, &r, &v));
		/* its 2 LIDs to the 61 others, the 61 to its 2 */
		CHECK(v.unreachable == 2 * 61 * 2 && v.loops == 0);
		CHECK(strstr(v.first_unreachable, "from h4.1[1]") &&
		      strstr(v.first_unreachable, "source port has no active link"));
		f.ports[p].state = FAB_PORT_ACTIVE;
		routing_free(&r);
	}
	fabric_free(&f);
}

/*
 * The clockwise ring again, with two hosts per switch and LMC 1, once with one SL and once with
 * three per-source SLs towards every destination, broken in three ways at once: switch 1 forgets
 * the LIDs of switch 3's hosts, switches 2 and 3 bounce switch 0's hosts between them, and the
 * ring's credit loop.  Several destinations fail, so the first failures are met pair by pair and
 * the later ones counted per switch.
 */
static void test_grouped_broken(void)
{
	unsigned links[8][2], n = testfab_ring(links, 5), sl_mode;
	struct verify_report v;
	struct routing r;
	struct fabric f;
	uint32_t lid, s;

	CHECK(testfab_build(&f, 5, 2, (const unsigned(*)[2])links, n, 1) == 0);
	for (sl_mode = 0; sl_mode < 2; sl_mode++) {
		CHECK(routing_init(&r, &f, "broken") == 0);
		route_clockwise_hosts(&f, &r, 5, 2);
		CHECK(verify_both_ways(&f, &r, &v));
		CHECK(verify_ok(&v) == 0 && v.unreachable == 0 && v.loops == 0);
		CHECK(v.credit_loop_vls == 1 && v.max_hops == 6);
		for (lid = 1; lid <= f.max_lid; lid++) {
			uint32_t p = f.lid_port[lid], owner;

			if (p == FAB_NONE || fabric_is_switch(&f, f.ports[p].node))
				continue;
			owner = f.ports[f.ports[p].remote].node;
			if (f.nodes[owner].sw == 3)
				routing_lft(&r, 1)[lid] = FAB_NO_PORT;
			if (f.nodes[owner].sw == 0) {
				routing_lft(&r, 2)[lid] = 4; /* next: switch 3 */
				routing_lft(&r, 3)[lid] = 3; /* previous: switch 2 */
			}
		}
		if (sl_mode) {
			CHECK(routing_alloc_sl_by_pair(&r, &f) == 0);
			for (s = 0; s < 5; s++)
				for (lid = 1; lid <= f.max_lid; lid++)
					routing_set_pair_sl(&r, s, lid, (uint8_t)((s + lid) % 3));
		}
		CHECK(verify_both_ways(&f, &r, &v));
		CHECK(v.unreachable > 0 && v.loops > 0 && v.credit_loop_vls);
		CHECK(strstr(v.first_unreachable, "no LFT entry") != NULL);
		CHECK(strstr(v.first_loop, "forwarding loop") != NULL);
		CHECK(verify_count_bits(v.sls_used) == (sl_mode ? 3 : 1));
		routing_free(&r);
	}
	fabric_free(&f);
}

/* Promises r's columns to a feed in steps of `step` LIDs, as an engine does, and reports. */
static int feed_report(const struct fabric *f, struct routing *r, uint32_t step,
		       struct verify_report *v, int *streamed)
{
	struct verify_feed *vf = verify_feed_attach(f, r);
	uint32_t below;
	int rc;

	if (!vf)
		return -1;
	for (below = 1; below <= f->max_lid + 1; below += step)
		routing_columns_final(r, below);
	rc = verify_feed_report(vf, v, streamed);
	verify_feed_detach(vf);
	return rc;
}

/*
 * The verifier beside the routing reports exactly what verify_routing does, in blocks of any
 * size: on a correct fat tree with LMC 1 and on the broken ring (unreachable pairs, forwarding
 * loops and a credit loop, so the first-failure messages must match too).  Per-source SLs are
 * not streamed but still verified.
 */
static void test_feed_matches(void)
{
	static const uint32_t steps[] = { 1, 7, 16, 1000 };
	unsigned links[8][2], n = testfab_ring(links, 5), i;
	struct verify_report v, fed;
	struct routing r;
	struct fabric f;
	uint32_t lid;
	int streamed;

	CHECK(testfab_fat_tree(&f, 1) == 0);
	testfab_set_vls(&f, 8);
	CHECK(route_engine("sar-updn", &f, 1, &r) == 0);
	CHECK(verify_routing(&f, &r, &v) == 0 && verify_ok(&v));
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		CHECK(feed_report(&f, &r, steps[i], &fed, &streamed) == 0);
		CHECK(same_report(&v, &fed) && streamed == testfab_other_cpu());
		CHECK(r.columns_final == NULL && r.columns_final_arg == NULL);
	}
	routing_free(&r);
	fabric_free(&f);

	CHECK(testfab_build(&f, 5, 8, (const unsigned(*)[2])links, n, 0) == 0);
	CHECK(routing_init(&r, &f, "broken") == 0);
	route_clockwise_hosts(&f, &r, 5, 8);
	for (lid = 1; lid <= f.max_lid; lid++) {
		uint32_t p = f.lid_port[lid], owner;

		if (p == FAB_NONE || fabric_is_switch(&f, f.ports[p].node))
			continue;
		owner = f.ports[f.ports[p].remote].node;
		if (f.nodes[owner].sw == 3 && lid % 2)
			routing_lft(&r, 1)[lid] = FAB_NO_PORT;
		if (f.nodes[owner].sw == 0 && lid % 3 == 0) {
			routing_lft(&r, 2)[lid] = 10; /* next: switch 3 */
			routing_lft(&r, 3)[lid] = 9;  /* previous: switch 2 */
		}
	}
	CHECK(verify_routing(&f, &r, &v) == 0);
	CHECK(v.unreachable > 0 && v.loops > 0 && v.credit_loop_vls);
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		CHECK(feed_report(&f, &r, steps[i], &fed, &streamed) == 0);
		CHECK(same_report(&v, &fed) && streamed == testfab_other_cpu());
	}
	CHECK(routing_alloc_sl_by_pair(&r, &f) == 0);
	for (lid = 1; lid <= f.max_lid; lid++)
		routing_set_pair_sl(&r, 1, lid, 2);
	CHECK(verify_routing(&f, &r, &v) == 0);
	CHECK(feed_report(&f, &r, 16, &fed, &streamed) == 0);
	CHECK(same_report(&v, &fed) && !streamed);
	routing_free(&r);
	fabric_free(&f);
}

/*
 * An engine that changes a column after promising it (here: drops a route) must not get the
 * report of the tables as they were: the feed compares what it checked with the final tables
 * and verifies those instead.  Without promises nothing runs beside; a feed detached without a
 * report stops its thread and unhooks the routing.
 */
static void test_feed_broken_promise(void)
{
	struct timespec settle = { .tv_nsec = 100 * 1000 * 1000 };
	struct verify_report v, fed;
	struct verify_feed *vf;
	struct routing r;
	struct fabric f;
	int streamed;

	CHECK(testfab_fat_tree(&f, 0) == 0);
	testfab_set_vls(&f, 8);
	CHECK(route_engine("sar-updn", &f, 1, &r) == 0);
	CHECK((vf = verify_feed_attach(&f, &r)) != NULL);
	routing_columns_final(&r, f.max_lid + 1);
	nanosleep(&settle, NULL);
	/* leaf 4 (switch index 4) no longer forwards to the last host's LID */
	routing_lft(&r, 4)[f.max_lid] = FAB_NO_PORT;
	CHECK(verify_feed_report(vf, &fed, &streamed) == 0);
	verify_feed_detach(vf);
	CHECK(verify_routing(&f, &r, &v) == 0 && v.unreachable > 0);
	CHECK(same_report(&v, &fed));

	CHECK((vf = verify_feed_attach(&f, &r)) != NULL);
	CHECK(verify_feed_report(vf, &fed, &streamed) == 0);
	verify_feed_detach(vf);
	CHECK(same_report(&v, &fed) && !streamed);

	CHECK((vf = verify_feed_attach(&f, &r)) != NULL);
	routing_columns_final(&r, 17);
	verify_feed_detach(vf);
	CHECK(r.columns_final == NULL && r.columns_final_arg == NULL);
	routing_free(&r);
	fabric_free(&f);
}

/*
 * r verified on one thread and on two (each walking half the destination LIDs) gives the same
 * report; only which cycle is printed may differ.  The split must have happened when there is a
 * second CPU.
 */
static int same_split(const struct fabric *f, const struct routing *r, struct verify_report *one)
{
	struct verify_report two;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (verify_routing_threads(f, r, one, NULL, 1) ||
	    verify_routing_threads(f, r, &two, NULL, 2) || one->threads != 1 ||
	    two.threads != (cpus > 1 ? 2u : 1u))
		return 0;
	if (one->cycle_len && two.cycle_len && one->credit_loop_vls == two.credit_loop_vls) {
		memcpy(two.cycle, one->cycle, sizeof(two.cycle));
		two.cycle_len = one->cycle_len;
	}
	two.threads = 1;
	return same_report(one, &two);
}

/* Unreachable pairs, forwarding loops and credit loops, and a clean fat tree, in two halves. */
static void test_split_halves(void)
{
	struct verify_report v;
	struct routing r;
	struct fabric f;
	uint32_t lid, host[6], n;
	char want[32];

	CHECK(build_ring(&f, 6) == 0);
	CHECK(routing_init(&r, &f, "clockwise") == 0);
	route_clockwise(&f, &r, 6);
	CHECK(same_split(&f, &r, &v) && v.credit_loop_vls == 1 && v.cycle_len > 0);
	/*
	 * Host LIDs of both halves broken: the lowest and the second highest lose an entry, the
	 * highest bounces between switches 2 and 3.  The first unreachable pair named is the
	 * lower half's.
	 */
	for (lid = 1, n = 0; lid <= f.max_lid; lid++)
		if (f.lid_port[lid] != FAB_NONE && !fabric_is_switch(&f, f.ports[f.lid_port[lid]].node))
			host[n++] = lid;
	CHECK(n == 6);
	routing_lft(&r, 1)[host[0]] = FAB_NO_PORT;
	routing_lft(&r, 4)[host[4]] = FAB_NO_PORT;
	routing_lft(&r, 2)[host[5]] = 3;
	routing_lft(&r, 3)[host[5]] = 2;
	CHECK(same_split(&f, &r, &v) && v.unreachable > 0 && v.loops > 0);
	snprintf(want, sizeof(want), "LID %u", host[0]);
	CHECK(strstr(v.first_unreachable, want) != NULL);
	routing_free(&r);
	fabric_free(&f);

	CHECK(testfab_fat_tree(&f, 2) == 0);
	testfab_set_vls(&f, 8);
	CHECK(route_engine("sar-updn", &f, 1, &r) == 0);
	CHECK(same_split(&f, &r, &v) && verify_ok(&v) && v.destinations == 82);
	routing_free(&r);
	fabric_free(&f);
}

int main(void)
{
	test_credit_loop_found();
	test_cycle_across_vls();
	test_vl_count_understated();
	test_unreachable_and_forwarding_loop();
	test_grouped_lmc();
	test_grouped_hosts_sls_and_dead_port();
	test_grouped_broken();
	test_feed_matches();
	test_feed_broken_promise();
	test_split_halves();
	return CHECK_RESULT();
}
