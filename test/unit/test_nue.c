/*
 * test_nue.c - unit tests of the Nue engine and its dependency graph: the dynamic topological
 * order against a brute-force cycle check; blocks that last only when their cycle holds committed
 * turns alone, and closed turns refused without a search; complete, loop-free and deadlock-free
 * routing (checked by the verifier) on the 5-ring with one VL, a 4x4x3 torus without a switch for
 * 1-4 VLs, random graphs, a fat tree with LMC 2; balance, minimal routes and few cycle searches on
 * a 3-level fat tree; no fall-back on a 5x5x5 torus with one VL; every route's turns counted after
 * shortcuts; the better of two switch-LID weightings with several layers; fall-backs moved to
 * other layers; layers that fall back routed again, by descending LID too; rebalancing against the
 * final loads; shorter routes from switches moved aside; impasses solved by a third attempt that
 * moves switches aside; one layer of shortest routes spread over several VLs, and one layer routing
 * every destination when k layers fall back for more than 1%, judged after its routes are shortened
 * in each VL, and kept alone on large tree-like fabrics; service levels equal to layers; the same
 * result on one thread or two; job-first order; determinism; clear errors for bad VL counts and
 * disconnected switches; the same routing with the costly self-checks on.  The options set
 * no_mcast_tree: these tests pin Nue's own algorithm, whose escape trees and counts the multicast
 * tree of layer 0 would change; test_mcast.c tests Nue with the tree.
 */
#include <stdlib.h>
#include <string.h>

#include "engines/cdg.h"
#include "check.h"
#include "engines/engines.h"
#include "check/metrics.h"
#include "engines/nue/nue.h"
#include "fabric/layersfile.h"
#include "testfab.h"
#include "nuetest.h"
#include "lib/threads.h"
#include "check/verify.h"

/* Lemma 6.1: every shortest-path routing of the 5-ring deadlocks on one VL; Nue does not. */
static void test_ring5(void)
{
	unsigned links[5][2];
	struct fabric f;

	CHECK(testfab_build(&f, 5, 2, (const unsigned(*)[2])links, testfab_ring(links, 5), 0) == 0);
	route_and_verify(&f, 1, "ring of 5");
	testfab_set_vls(&f, 2);
	route_and_verify(&f, 2, "ring of 5");
	fabric_free(&f);
}

/*
 * Fewer destinations than layers: some layers stay empty, yet the rebalancing pass visits them.
 * One switch with two hosts (three LIDs) and 2, 4 and 8 layers; two switches without hosts.
 */
static void test_empty_layers(void)
{
	unsigned links[1][2] = { { 0, 1 } };
	struct fabric f;
	unsigned k;

	CHECK(testfab_build(&f, 1, 2, (const unsigned(*)[2])links, 0, 0) == 0);
	testfab_set_vls(&f, 8);
	for (k = 2; k <= 8; k *= 2)
		route_and_verify(&f, k, "one switch, two hosts");
	fabric_free(&f);
	CHECK(testfab_build(&f, 2, 0, (const unsigned(*)[2])links, 1, 0) == 0);
	testfab_set_vls(&f, 8);
	route_and_verify(&f, 4, "two switches, no hosts");
	fabric_free(&f);
}

static void test_faulty_torus(void)
{
	static unsigned links[3 * 48][2];
	struct fabric f;
	unsigned n = testfab_torus(links, 4, 4, 3, 5), k;

	CHECK(testfab_build(&f, 47, 4, (const unsigned(*)[2])links, n, 0) == 0);
	testfab_set_vls(&f, 4);
	for (k = 1; k <= 4; k++)
		route_and_verify(&f, k, "4x4x3 torus without a switch");
	fabric_free(&f);
}

/*
 * The costly self-checks (lib/assert.h): with SARNUE_DEBUG_CHECKS=1 every layer's dependency
 * graph is checked acyclic after each destination is committed.  A torus without a switch falls
 * back, moves and rebalances, and with two and four layers also tries one layer over the VLs.
 */
static void test_debug_checks(void)
{
	static unsigned links[3 * 48][2];
	struct fabric f;
	unsigned n = testfab_torus(links, 4, 4, 3, 5), k;

	CHECK(setenv("SARNUE_DEBUG_CHECKS", "1", 1) == 0);
	CHECK(testfab_build(&f, 47, 4, (const unsigned(*)[2])links, n, 0) == 0);
	testfab_set_vls(&f, 4);
	for (k = 1; k <= 4; k *= 2)
		route_and_verify(&f, k, "4x4x3 torus without a switch, debug checks");
	fabric_free(&f);
	CHECK(unsetenv("SARNUE_DEBUG_CHECKS") == 0);
}

static void test_random_graphs(void)
{
	static unsigned links[40 + 60][2];
	unsigned seed, i, k;

	for (seed = 1; seed <= 6; seed++) {
		struct fabric f;
		unsigned n;

		srand(seed);
		n = testfab_ring(links, 40);
		for (i = 0; i < 60; i++) {
			unsigned a = (unsigned)rand() % 40, b = (unsigned)rand() % 40;

			if (a == b)
				continue;
			links[n][0] = a;
			links[n][1] = b;
			n++;
		}
		CHECK(testfab_build(&f, 40, 3, (const unsigned(*)[2])links, n, 0) == 0);
		testfab_set_vls(&f, 8);
		for (k = 1; k <= 8; k *= 2)
			route_and_verify(&f, k, "random graph");
		fabric_free(&f);
	}
}

/* LMC 2 on a fat tree: the four LIDs of a remote host leave a leaf over different uplinks. */
static void test_lmc(void)
{
	struct nue_report rep;
	struct fab_error err;
	struct routing r;
	struct fabric f;
	uint32_t e, spread = 0, pairs = 0, leaf;

	CHECK(testfab_fat_tree(&f, 2) == 0);
	route_and_verify(&f, 1, "fat tree LMC 2");
	CHECK(route(&f, 1, NULL, &r, &rep, &err) == 0);
	leaf = f.nodes[4].sw;
	for (e = 0; e < f.nendports; e++) {
		const struct fab_port *p = &f.ports[f.endports[e]];
		const uint8_t *lft = routing_lft(&r, leaf);
		unsigned a, b, distinct = 1;

		if (fabric_is_switch(&f, p->node) || fabric_attached_switch(&f, f.endports[e]) == 4)
			continue;
		pairs++;
		for (a = 1; a < 4; a++) {
			for (b = 0; b < a && lft[p->base_lid + a] != lft[p->base_lid + b]; b++)
				;
			distinct += b == a;
		}
		spread += distinct >= 3;
	}
	CHECK(pairs > 0 && spread == pairs);
	/* Fat tree, minimal routes: host to host across leaves is 4 links. */
	CHECK(rep.fallbacks == 0);
	routing_free(&r);
	fabric_free(&f);
}

/*
 * 4-ary 3-tree (testfab_4ary_3tree).  Minimal routes here are all up then down, and a balanced
 * routing loads no channel with more than about twice the mean.  An escape tree rooted in the core
 * broke both: its down-and-up turns blocked minimal turns and piled routes onto few uplinks
 * (max EFI 204, mean 54, some routes 2 hops longer).
 */
static void build_4ary_3tree(struct fabric *f)
{
	CHECK(testfab_4ary_3tree(f) == 0);
}

/* Maximum EFI and mean links per route between CAs (the routes the EFI counts) of one routing. */
static void measure_with(struct fabric *f, const struct nue_opts *o, struct nue_report *rep,
			 uint64_t *max_efi, double *ca_hops)
{
	struct metrics_options mo;
	struct metrics_efi e;
	struct fab_error err;
	struct routing r;

	*max_efi = 0;
	*ca_hops = 0;
	CHECK(route_with(f, o, &r, rep, &err) == 0);
	metrics_options_default(&mo);
	if (metrics_efi(f, &r, &mo, &e) == 0) {
		*max_efi = e.dist.max;
		*ca_hops = e.mean_hops;
		metrics_efi_free(&e);
	}
	routing_free(&r);
}

static uint64_t max_efi_with(struct fabric *f, const struct nue_opts *o, struct nue_report *rep)
{
	uint64_t efi;
	double hops;

	measure_with(f, o, rep, &efi, &hops);
	return efi;
}

static uint64_t max_efi_of(struct fabric *f, unsigned k)
{
	struct nue_opts o = { .no_mcast_tree = 1, .vls = k };
	struct nue_report rep;

	return max_efi_with(f, &o, &rep);
}

/* The worst load of a shift permutation (terminals in LID order) on a channel of C*. */
static uint64_t worst_shift(struct fabric *f, struct routing *r)
{
	struct metrics_options mo;
	struct metrics_patterns p;

	metrics_options_default(&mo);
	CHECK(metrics_patterns(f, r, &mo, &p) == 0);
	CHECK(p.shift.instances == p.shifts_possible && p.shift.unrouted == 0);
	return p.shift.max_load;
}

/*
 * On the 4-ary 3-tree the maximum EFI is the cut bound, 60 (a leaf's 4 hosts send to 60 others
 * over 4 up links), and no shift permutation puts two routes on a channel, with one layer and
 * with four, as D-mod-k routes.  Before switches without hosts stopped weighing as sources and
 * the terminals went by LID, the maximum EFI was 92 and a shift met 3 routes on a channel.  With
 * one layer the order by LID needs nue_orders=2 (the default of the options); far-first alone
 * also reaches 60, but a shift then meets two routes on a channel.
 */
static void test_fat_tree_balance(void)
{
	struct metrics_options mo;
	struct metrics_efi e;
	struct nue_report rep;
	struct fab_error err;
	struct routing r;
	struct fabric f;
	unsigned k;

	build_4ary_3tree(&f);
	testfab_set_vls(&f, 4);
	for (k = 1; k <= 4; k += 3) {
		struct nue_opts o = { .no_mcast_tree = 1, .vls = k, .orders = 2 };

		route_and_verify(&f, k, "4-ary 3-tree");
		CHECK(route_with(&f, &o, &r, &rep, &err) == 0);
		metrics_options_default(&mo);
		CHECK(metrics_efi(&f, &r, &mo, &e) == 0);
		CHECK(e.routes == 64 * 63 && e.unrouted == 0);
		CHECK(e.nonminimal == 0);
		CHECK(e.dist.max == 60);
		CHECK(worst_shift(&f, &r) == 1);
		CHECK(rep.fallbacks == 0 && rep.by_lid);
		/* Switch LIDs first take turns needing no search: 368 searches before, 102 now. */
		CHECK(rep.cycle_searches <= 102);
		metrics_efi_free(&e);
		routing_free(&r);
	}
	fabric_free(&f);
}

/*
 * With several layers the weights of switch LIDs steer the next layers; Nue routes with and
 * without them and keeps the lower maximum EFI.  With the weights of every switch LID, as
 * before, this tree had max EFI 96 at 2 layers and 104 at 4; now 92 and 88.  (16-ary 3-tree at
 * 8 layers in OpenSM's LID order: 7,568 before, 6,912 with both, 6,784 now that the single layer
 * of route_single_layer is a candidate too.)
 */
static void test_switch_lid_weights(void)
{
	struct fabric f;

	build_4ary_3tree(&f);
	testfab_set_vls(&f, 4);
	route_and_verify(&f, 4, "4-ary 3-tree");
	CHECK(max_efi_of(&f, 2) <= 92);
	CHECK(max_efi_of(&f, 4) <= 88);
	fabric_free(&f);
}

/*
 * 5x5x5 torus with 4 hosts per switch on one layer: routing the destinations farthest from the
 * escape root first leaves every one a deadlock-free route of its own (in LID order, 98 of 625
 * fell back to the escape paths).
 */
static void test_torus_no_fallback(void)
{
	static unsigned links[3 * 125][2];
	struct nue_report rep;
	struct fab_error err;
	struct routing r;
	struct fabric f;
	unsigned n = testfab_torus(links, 5, 5, 5, -1);

	CHECK(testfab_build(&f, 125, 4, (const unsigned(*)[2])links, n, 0) == 0);
	route_and_verify(&f, 1, "5x5x5 torus");
	CHECK(route(&f, 1, NULL, &r, &rep, &err) == 0);
	CHECK(rep.destinations == 625 && rep.fallbacks == 0);
	routing_free(&r);
	fabric_free(&f);
}

/*
 * A shortcut through a former island can lower the distance of a switch that already routes
 * through the shortened neighbour.  Rerouting it onto its own channel released the turns it and
 * the switches behind it hold, so routes took turns the dependency graph did not count (on an
 * 8x8x8 torus with 8 layers and a turn cost that closed a credit loop).  Nue now refuses routes
 * with an unmarked turn; on this Kautz graph with 2 layers the old code took one towards LID 52.
 */
static void test_shortcut_keeps_turns(void)
{
	static unsigned links[108 * 3][2];
	unsigned n = kautz_links(links, 3, 3);
	struct fabric f;

	shuffle_links(links, n, 12);
	CHECK(testfab_build(&f, 108, 1, (const unsigned(*)[2])links, n, 0) == 0);
	testfab_set_vls(&f, 2);
	route_and_verify(&f, 2, "Kautz graph K(3,3)");
	fabric_free(&f);
}

/* The fall-backs by layer add up to all of them, and no layer has more than its destinations. */
static void check_layer_fallbacks(const struct nue_report *rep)
{
	uint32_t sum = 0;
	unsigned i;

	for (i = 0; i < NUE_MAX_VLS; i++) {
		CHECK(rep->fallbacks_per_layer[i] <= rep->dests_per_layer[i]);
		CHECK(i < rep->vls || rep->fallbacks_per_layer[i] == 0);
		sum += rep->fallbacks_per_layer[i];
	}
	CHECK(sum == rep->fallbacks);
}

/*
 * Destinations that fall back in their own layer are routed again in the other layers once all
 * are done; one that a layer routes cycle-free moves there, with that layer as its SL.
 */
static void test_fallbacks_move(void)
{
	struct nue_torus torus;
	static unsigned links[108 * 3][2];
	unsigned n = kautz_links(links, 3, 3);
	struct nue_report rep, one;
	struct fab_error err;
	struct routing r;
	struct fabric f;
	uint8_t *part;
	uint32_t i, moved = 0, as_previous = 0, prev_sw = 0;
	unsigned prev_sl = 0;

	/*
	 * This port numbering left 3 destinations on escape paths before they could move, with
	 * each layer routed once (test_layer_tries routes them again).
	 */
	struct nue_opts once = { .no_mcast_tree = 1, .vls = 4, .layer_tries = 1 };

	shuffle_links(links, n, 10);
	CHECK(testfab_build(&f, 108, 4, (const unsigned(*)[2])links, n, 0) == 0);
	testfab_set_vls(&f, 4);
	route_and_verify(&f, 4, "Kautz graph K(3,3), 4 layers");
	CHECK(route_with(&f, &once, &r, &rep, &err) == 0);
	CHECK(rep.moved == 3 && rep.fallbacks == 0);
	/* Each moved destination leaves the count of the layer it fell back in. */
	check_layer_fallbacks(&rep);
	part = malloc(f.nendports);
	CHECK(part && nue_partition(&f, 4, NUE_PARTITION_AUTO, part, &torus));
	for (i = 0; part && i < f.nendports; i++) {
		uint16_t lid = f.ports[f.endports[i]].base_lid;
		uint32_t sw = fabric_endport_switch(&f, f.endports[i]);
		unsigned sl = routing_path_sl(&r, 1, lid);

		if (sl == part[i])
			continue;
		/* A switch's LIDs fall back together; the others try the first's layer first. */
		if (moved && sw == prev_sw) {
			CHECK(sl == prev_sl);
			as_previous++;
		}
		moved++;
		prev_sw = sw;
		prev_sl = sl;
	}
	CHECK(moved == rep.moved);
	CHECK(as_previous == 2 && rep.moved_as_previous == as_previous);
	routing_free(&r);
	/* On one thread the weight candidates run in turn: the report is the winner's alone. */
	once.threads = 1;
	CHECK(route_with(&f, &once, &r, &one, &err) == 0);
	CHECK(one.moved == rep.moved && one.moved_as_previous == rep.moved_as_previous);
	CHECK(one.fallbacks == rep.fallbacks && one.rerouted == rep.rerouted);
	free(part);
	routing_free(&r);
	fabric_free(&f);
}

/*
 * Routes the Kautz graph K(3,3) with shuffled ports on k layers, each routed up to tries times;
 * with defer, a layer's few fall-backs wait for the moves whatever its size.
 */
static void route_tries_defer(unsigned seed, unsigned k, unsigned tries, int defer,
			      struct routing *r, struct nue_report *rep)
{
	static unsigned links[108 * 3][2];
	unsigned n = kautz_links(links, 3, 3);
	struct nue_opts o = { .no_mcast_tree = 1,
			      .vls = k,
			      .layer_tries = tries,
			      .defer_tries_from = defer ? 1 : 0 };
	struct fab_error err = { "" };
	struct verify_report v;
	struct fabric f;

	shuffle_links(links, n, seed);
	CHECK(testfab_build(&f, 108, 4, (const unsigned(*)[2])links, n, 0) == 0);
	testfab_set_vls(&f, 4);
	CHECK(route_with(&f, &o, r, rep, &err) == 0);
	CHECK(verify_routing(&f, r, &v) == 0 && verify_ok(&v));
	check_layer_fallbacks(rep);
	fabric_free(&f);
}

static void route_tries(unsigned seed, unsigned k, unsigned tries, struct routing *r,
			struct nue_report *rep)
{
	route_tries_defer(seed, k, tries, 0, r, rep);
}

/*
 * A layer whose destinations fell back is routed again with new turns costing more, and the try
 * with the fewest fall-backs is kept; layers without fall-backs are routed once.  With these
 * port numberings, one try per layer leaves destinations that fell back in their layer (3 with
 * 4 layers, 11 with 2; moves rescue most), and three tries leave none.  When no later try is
 * better the first is routed again, and the tables are those of one try, bit for bit (4
 * fall-backs with 2 layers and another numbering, whatever the first three tries); there the
 * fourth, equally far destinations by descending LID, falls back for none.
 */
static void test_layer_tries(void)
{
	struct nue_report once_rep, rep;
	struct routing once, r;

	route_tries(10, 4, 1, &once, &once_rep);
	route_tries(10, 4, 3, &r, &rep);
	CHECK(once_rep.fallbacks + once_rep.moved == 3 && once_rep.layers_rerouted == 0);
	CHECK(rep.fallbacks + rep.moved == 0 && rep.layers_rerouted == 1);
	routing_free(&once);
	routing_free(&r);

	route_tries(10, 2, 1, &once, &once_rep);
	CHECK(once_rep.fallbacks + once_rep.moved == 11);
	route_tries(10, 2, 3, &r, &rep);
	CHECK(rep.fallbacks + rep.moved == 0 && rep.layers_rerouted == 1);
	routing_free(&r);
	routing_free(&once);

	route_tries(32, 2, 1, &once, &once_rep);
	CHECK(once_rep.fallbacks == 4);
	printf("one try, 2 layers: fall-backs per layer %u/%u\n", once_rep.fallbacks_per_layer[0],
	       once_rep.fallbacks_per_layer[1]);
	route_tries(32, 2, 3, &r, &rep);
	CHECK(rep.layers_rerouted == 0 && rep.fallbacks == once_rep.fallbacks);
	CHECK(same_routing(&once, &r, r.lft_len - 1));
	routing_free(&r);
	route_tries(32, 2, 6, &r, &rep);
	CHECK(rep.layers_rerouted == 1 && rep.fallbacks + rep.moved == 0);
	printf("six tries: %llu cycle searches, %llu spared\n",
	       (unsigned long long)rep.cycle_searches, (unsigned long long)rep.searches_spared);
	CHECK(rep.searches_spared > 0);
	CHECK(!same_routing(&once, &r, r.lft_len - 1));
	routing_free(&r);
	routing_free(&once);

	/* No fall-back: one routing per layer, whatever the tries. */
	route_tries(2, 4, 1, &once, &once_rep);
	route_tries(2, 4, 3, &r, &rep);
	CHECK(once_rep.fallbacks + once_rep.moved == 0 && rep.layers_rerouted == 0);
	CHECK(same_routing(&once, &r, r.lft_len - 1));
	routing_free(&once);
	routing_free(&r);
}

/*
 * In large layers, few fall-backs of the first try wait for the moves after the pass
 * (few_fallbacks); here every layer counts as large.  With 4 layers the moves rescue all three
 * fall-backs of one try, so the tables are those of one try and no layer is routed again.  With 2
 * layers and another numbering the moves leave 4 on escape paths: both candidates are then routed
 * again with every try, which falls back for none, as without the deferral.
 */
static void test_deferred_tries(void)
{
	struct nue_report once_rep, rep, full_rep;
	struct routing once, r, full;

	route_tries(10, 4, 1, &once, &once_rep);
	route_tries_defer(10, 4, 3, 1, &r, &rep);
	CHECK(once_rep.fallbacks == 0 && once_rep.moved == 3);
	CHECK(rep.fallbacks == 0 && rep.moved == 3 && rep.layers_deferred > 0);
	CHECK(rep.layers_rerouted == 0 && !rep.passes_again);
	CHECK(same_routing(&once, &r, r.lft_len - 1));
	routing_free(&once);
	routing_free(&r);

	route_tries(32, 2, 6, &full, &full_rep);
	route_tries_defer(32, 2, 6, 1, &r, &rep);
	CHECK(rep.passes_again && rep.layers_rerouted == 1 && rep.fallbacks + rep.moved == 0);
	CHECK(same_routing(&full, &r, r.lft_len - 1));
	routing_free(&full);
	routing_free(&r);
}

/*
 * The final pass routes every CA LID again against the loads of all the others: on this Kautz
 * graph the maximum EFI falls with 1, 2 and 4 layers (4,776 to 4,348, 1,980 to 1,832, 1,420 to
 * 1,040), and destinations left on escape paths get routes of their own.
 */
static void test_rebalance(void)
{
	static unsigned links[108 * 3][2];
	static const unsigned layers[] = { 1, 2, 4 };
	unsigned n = kautz_links(links, 3, 3), i;
	struct nue_report plain_rep, rep;
	struct fabric f;

	CHECK(testfab_build(&f, 108, 4, (const unsigned(*)[2])links, n, 0) == 0);
	testfab_set_vls(&f, 4);
	for (i = 0; i < sizeof(layers) / sizeof(layers[0]); i++) {
		struct nue_opts plain = { .no_mcast_tree = 1,
					  .vls = layers[i],
					  .skip_rebalance = 1 };
		struct nue_opts full = { .no_mcast_tree = 1, .vls = layers[i] };
		uint64_t before = max_efi_with(&f, &plain, &plain_rep);
		uint64_t after = max_efi_with(&f, &full, &rep);

		CHECK(plain_rep.rerouted == 0 && rep.rerouted > 0);
		CHECK(after < before);
		CHECK(rep.fallbacks <= plain_rep.fallbacks);
		route_and_verify(&f, layers[i], "Kautz graph K(3,3), rebalanced");
	}
	fabric_free(&f);
	/*
	 * With this port numbering and each layer routed once, a destination stays on escape paths
	 * after the moves.
	 */
	shuffle_links(links, n, 38);
	CHECK(testfab_build(&f, 108, 4, (const unsigned(*)[2])links, n, 0) == 0);
	testfab_set_vls(&f, 4);
	{
		struct nue_opts plain = {
			.no_mcast_tree = 1, .vls = 2, .skip_rebalance = 1, .layer_tries = 1
		};
		struct nue_opts full = { .no_mcast_tree = 1, .vls = 2, .layer_tries = 1 };

		max_efi_with(&f, &plain, &plain_rep);
		max_efi_with(&f, &full, &rep);
		CHECK(plain_rep.fallbacks == 1 && rep.fallbacks == 0);
	}
	route_and_verify(&f, 2, "Kautz graph K(3,3), fall-backs rerouted");
	fabric_free(&f);
}

/*
 * An impasse that two attempts leave gets a third in which settled switches may move aside.  On
 * the 6x6x6 torus without switch 3 with 2 layers, each routed up to three times, 17 destinations
 * fell back without it (19 before the final pass); with six tries a layer meets no impasse there.
 */
static void test_aside_attempts(void)
{
	static unsigned links[3 * 216][2];
	struct nue_opts first_pass = {
		.no_mcast_tree = 1, .vls = 2, .skip_rebalance = 1, .layer_tries = 3
	};
	struct nue_opts full = { .no_mcast_tree = 1, .vls = 2, .layer_tries = 3 };
	struct nue_report rep;
	struct routing r;
	struct fab_error err = { "" };
	struct fabric f;
	unsigned n = testfab_torus(links, 6, 6, 6, 3);

	CHECK(testfab_build(&f, 215, 4, (const unsigned(*)[2])links, n, 0) == 0);
	testfab_set_vls(&f, 2);
	CHECK(route_with(&f, &first_pass, &r, &rep, &err) == 0);
	CHECK(rep.aside_attempts > 0 && rep.fallbacks <= 6);
	routing_free(&r);
	CHECK(route_with(&f, &full, &r, &rep, &err) == 0);
	CHECK(rep.aside_attempts > 0 && rep.fallbacks <= 6);
	routing_free(&r);
	route_and_verify(&f, 2, "6x6x6 torus without a switch, third attempts");
	fabric_free(&f);
}

static double ca_hops_with(struct fabric *f, const struct nue_opts *o, struct nue_report *rep)
{
	uint64_t efi;
	double hops;

	measure_with(f, o, rep, &efi, &hops);
	return hops;
}

/*
 * With one layer the final pass also moves settled switches aside for a neighbour, so routes
 * between CAs get shorter: Kautz graph 5.456 to 5.425 links, 6x6x6 torus 6.896 to 6.791.  Without
 * the moves the pass gave 5.458 and 6.881.  With two layers and no impasse nothing moves aside.
 */
static void test_move_aside(void)
{
	static unsigned links[216 * 3][2];
	struct nue_opts plain = { .no_mcast_tree = 1, .vls = 1, .skip_rebalance = 1 },
			full = { .no_mcast_tree = 1, .vls = 1 };
	struct nue_opts two = { .no_mcast_tree = 1, .vls = 2 };
	struct nue_report plain_rep, rep;
	struct fabric f;
	unsigned n = kautz_links(links, 3, 3);
	double before, after;

	CHECK(testfab_build(&f, 108, 4, (const unsigned(*)[2])links, n, 0) == 0);
	testfab_set_vls(&f, 2);
	before = ca_hops_with(&f, &plain, &plain_rep);
	after = ca_hops_with(&f, &full, &rep);
	CHECK(rep.moved_aside > plain_rep.moved_aside);
	CHECK(after < before - 0.02);
	route_and_verify(&f, 1, "Kautz graph K(3,3), switches moved aside");
	ca_hops_with(&f, &two, &rep);
	CHECK(rep.fallbacks == 0 && rep.aside_attempts == 0 && rep.moved_aside == 0);
	fabric_free(&f);

	n = testfab_torus(links, 6, 6, 6, -1);
	CHECK(testfab_build(&f, 216, 4, (const unsigned(*)[2])links, n, 0) == 0);
	before = ca_hops_with(&f, &plain, &plain_rep);
	after = ca_hops_with(&f, &full, &rep);
	CHECK(rep.moved_aside > 0);
	CHECK(after < before - 0.02);
	fabric_free(&f);
}

/* Tables, SLs and report of one routing with the given number of threads. */
static int route_threads(struct fabric *f, unsigned k, unsigned threads, struct routing *r,
			 struct nue_report *rep)
{
	/* One try per layer: with more, no layer of this Kautz graph falls back (test_layer_tries).
	 */
	struct nue_opts o = { .no_mcast_tree = 1, .vls = k, .threads = threads, .layer_tries = 1 };
	struct fab_error err = { "" };
	int rc = route_with(f, &o, r, rep, &err);

	if (rc)
		fprintf(stderr, "k=%u, %u thread(s): nue failed: %s\n", k, threads, err.msg);
	return rc;
}

/*
 * With one layer and two threads the verifier checks the columns the rebalancing pass is done
 * with while it goes on; its report must be the one verify_routing gives on the final tables.
 * With nue_threads=1 everything stays on one thread.  On the 5x4x4 torus without switch 1 the
 * ascending order wins, on the 5x5x5 torus without switch 7 the descending one (see test_orders):
 * the pass over the ascending order's routes that started before the descending one ended is
 * dropped then, and it must not have promised the verifier any column.
 */
static void verify_beside_on(struct fabric *f)
{
	struct sarnue_options o;
	struct engine_result res;
	struct fab_error err = { "" };
	struct verify_report v;
	struct routing r;
	unsigned threads;

	for (threads = 1; threads <= 2; threads++) {
		options_defaults(&o);
		o.nue_vls = 1;
		o.nue_threads = threads;
		CHECK(routing_init(&r, f, "sar-nue") == 0);
		CHECK(engine_run("sar-nue", f, &o, &r, &res, &err) == 0);
		CHECK(res.verified && res.verify_streamed == (threads == 2 && testfab_other_cpu()));
		CHECK(r.columns_final == NULL);
		CHECK(verify_routing(f, &r, &v) == 0 && verify_ok(&v));
		CHECK(res.verify.pairs == v.pairs && res.verify.dependencies == v.dependencies);
		CHECK(!memcmp(res.verify.hop_hist, v.hop_hist, sizeof(v.hop_hist)));
		CHECK(res.verify.mean_hops == v.mean_hops && res.verify.max_hops == v.max_hops);
		routing_free(&r);
	}
}

static void test_verify_beside(void)
{
	static unsigned links[3 * 125][2];
	unsigned n = testfab_torus(links, 5, 4, 4, 1);
	struct fabric f;

	CHECK(testfab_build(&f, 79, 4, (const unsigned(*)[2])links, n, 0) == 0);
	testfab_set_vls(&f, 8);
	verify_beside_on(&f);
	fabric_free(&f);

	n = testfab_torus(links, 5, 5, 5, 7);
	CHECK(testfab_build(&f, 124, 4, (const unsigned(*)[2])links, n, 0) == 0);
	testfab_set_vls(&f, 8);
	verify_beside_on(&f);
	fabric_free(&f);
}

/*
 * The candidate without switch-LID weights runs on a second thread; the routing kept must be
 * the one a single thread keeps, whichever candidate wins (on this Kautz graph the one with
 * switch-LID weights at 2 layers, the other at 8).  The two threads choose the roots of layers
 * 1..k-1 once for both (each chooses layer 0's itself), and they are the roots one thread
 * chooses.
 */
static void test_threads(void)
{
	static unsigned links[108 * 3][2];
	static const unsigned layers[] = { 2, 4, 8 };
	unsigned n = kautz_links(links, 3, 3), i, unweighted_kept = 0, weighted_kept = 0;
	struct nue_report one_rep, two_rep;
	struct routing one, two;
	struct fabric f;

	CHECK(testfab_build(&f, 108, 4, (const unsigned(*)[2])links, n, 0) == 0);
	testfab_set_vls(&f, 8);
	for (i = 0; i < sizeof(layers) / sizeof(layers[0]); i++) {
		CHECK(route_threads(&f, layers[i], 1, &one, &one_rep) == 0);
		CHECK(route_threads(&f, layers[i], 2, &two, &two_rep) == 0);
		CHECK(same_routing(&one, &two, f.max_lid));
		CHECK(one_rep.fallbacks == two_rep.fallbacks && one_rep.moved == two_rep.moved);
		CHECK(one_rep.rerouted == two_rep.rerouted);
		CHECK(one_rep.switch_lids_unweighted == two_rep.switch_lids_unweighted);
		CHECK(!memcmp(one_rep.root_guid, two_rep.root_guid, sizeof(one_rep.root_guid)));
		CHECK(one_rep.roots_shared == 0);
		CHECK(two_rep.roots_shared == layers[i] - 1);
		CHECK(!memcmp(one_rep.dests_per_layer, two_rep.dests_per_layer,
			      sizeof(one_rep.dests_per_layer)));
		unweighted_kept += two_rep.switch_lids_unweighted;
		weighted_kept += !two_rep.switch_lids_unweighted;
		routing_free(&one);
		routing_free(&two);
	}
	CHECK(unweighted_kept > 0 && weighted_kept > 0);
	fabric_free(&f);
}

/* One layer, nue_orders=2, on one or two threads. */
static int route_orders(struct fabric *f, unsigned orders, unsigned threads, struct routing *r,
			struct nue_report *rep)
{
	struct nue_opts o = { .no_mcast_tree = 1, .vls = 1, .orders = orders, .threads = threads };
	struct fab_error err = { "" };

	return route_with(f, &o, r, rep, &err);
}

/*
 * With nue_orders=2 one layer is routed with equally far destinations by ascending and by
 * descending LID and the better first pass is kept.  On the 5x5x5 torus without switch 7 the
 * descending order wins: maximum EFI 3,752 against 5,776; on the 5x4x4 torus without switch 1
 * the ascending one, and the tables are those of nue_orders=1.  One thread or two, the same
 * tables.
 */
static void test_orders(void)
{
	static unsigned links[3 * 125][2];
	struct nue_opts one = { .no_mcast_tree = 1, .vls = 1 },
			two = { .no_mcast_tree = 1, .vls = 1, .orders = 2 };
	struct nue_report rep1, rep2, rep_single;
	struct verify_report v;
	struct routing a, b;
	struct fabric f;
	uint64_t efi1, efi2;
	double hops1, hops2;
	unsigned n = testfab_torus(links, 5, 5, 5, 7);

	CHECK(testfab_build(&f, 124, 4, (const unsigned(*)[2])links, n, 0) == 0);
	measure_with(&f, &one, &rep1, &efi1, &hops1);
	measure_with(&f, &two, &rep2, &efi2, &hops2);
	CHECK(rep1.second_order == 0 && rep2.second_order == 1);
	CHECK(rep2.fallbacks <= rep1.fallbacks && efi2 < efi1);
	CHECK(route_orders(&f, 2, 1, &a, &rep_single) == 0);
	CHECK(route_orders(&f, 2, 2, &b, &rep2) == 0);
	CHECK(same_routing(&a, &b, f.max_lid) && rep_single.second_order == 1);
	CHECK(verify_routing(&f, &b, &v) == 0 && verify_ok(&v));
	routing_free(&a);
	routing_free(&b);
	fabric_free(&f);

	n = testfab_torus(links, 5, 4, 4, 1);
	CHECK(testfab_build(&f, 79, 4, (const unsigned(*)[2])links, n, 0) == 0);
	CHECK(route_orders(&f, 1, 2, &a, &rep1) == 0);
	CHECK(route_orders(&f, 2, 2, &b, &rep2) == 0);
	CHECK(rep2.second_order == 0 && same_routing(&a, &b, f.max_lid));
	routing_free(&a);
	routing_free(&b);
	fabric_free(&f);
}

/* Two-level fat tree: leaves 0..5 with hosts[0..5] hosts, each linked to spines 6..8. */
static int build_two_level(struct fabric *f, const unsigned *hosts)
{
	unsigned links[18][2], n = 0, l, s;

	for (l = 0; l < 6; l++)
		for (s = 6; s < 9; s++) {
			links[n][0] = l;
			links[n++][1] = s;
		}
	return testfab_build_hosts(f, 9, hosts, 0, (const unsigned(*)[2])links, n, 0);
}

/*
 * With several VLs, a single layer whose CA routes are all shortest is a candidate, its
 * destinations spread over the VLs by the partition: kept on a two-level fat tree (6 leaves of 3
 * hosts, 3 spines; with 4 hosts a leaf's destinations cannot spread evenly, and since equal up
 * ports are chosen alike everywhere the 4 layers balance better, maximum EFI 36 against 40),
 * given up on the 5-ring, where one layer must detour.
 */
static void test_single_layer(void)
{
	struct nue_torus torus;
	unsigned links[5][2], hosts[9] = { 3, 3, 3, 3, 3, 3, 0, 0, 0 }, k;
	struct nue_report rep;
	struct fab_error err;
	struct routing r;
	struct fabric f;
	uint8_t part[64]; /* one per LID-holding port: 18 hosts and 9 switches */
	uint32_t i, on_partition = 0;

	CHECK(build_two_level(&f, hosts) == 0);
	testfab_set_vls(&f, 4);
	CHECK(f.nendports <= sizeof(part));
	for (k = 2; k <= 4; k += 2) {
		route_and_verify(&f, k, "two-level fat tree");
		CHECK(route(&f, k, NULL, &r, &rep, &err) == 0);
		CHECK(rep.single_layer == NUE_ONE_LAYER_SHORTEST && rep.fallbacks == 0);
		CHECK(nue_partition(&f, k, NUE_PARTITION_AUTO, part, &torus) != NULL);
		for (i = 0; i < f.nendports; i++)
			on_partition +=
				routing_path_sl(&r, 1, f.ports[f.endports[i]].base_lid) == part[i];
		routing_free(&r);
	}
	CHECK(on_partition == 2 * f.nendports);
	fabric_free(&f);
	CHECK(testfab_build(&f, 5, 2, (const unsigned(*)[2])links, testfab_ring(links, 5), 0) == 0);
	testfab_set_vls(&f, 2);
	CHECK(route(&f, 2, NULL, &r, &rep, &err) == 0);
	CHECK(rep.single_layer == 0);
	routing_free(&r);
	fabric_free(&f);
}

/*
 * On a large tree-like fabric a single layer with shortest routes is kept without routing the k
 * layers (here "large" is lowered to one LID; a two-level fat tree with uneven leaves, so no cut
 * bound ends the search first): the report says so, the tables pass the verifier,
 * and they are those the k layers lost to without the rule.  Below the size, and on a fabric
 * whose every switch has hosts, the k layers are still routed.
 */
static void test_one_layer_alone(void)
{
	unsigned links[5][2], hosts[9] = { 3, 3, 3, 3, 2, 1, 0, 0, 0 };
	struct nue_opts o = { .no_mcast_tree = 1, .vls = 4, .one_layer_alone_from = 1 };
	struct nue_report rep, all_rep;
	struct fab_error err;
	struct verify_report v;
	struct routing r, all;
	struct fabric f;

	CHECK(build_two_level(&f, hosts) == 0);
	testfab_set_vls(&f, 4);
	CHECK(route_with(&f, &o, &r, &rep, &err) == 0);
	CHECK(rep.one_layer_alone && !rep.at_cut_bound);
	CHECK(rep.single_layer == NUE_ONE_LAYER_SHORTEST && rep.fallbacks == 0);
	CHECK(verify_routing(&f, &r, &v) == 0 && verify_ok(&v));
	o.one_layer_alone_from = 0;
	CHECK(route_with(&f, &o, &all, &all_rep, &err) == 0);
	CHECK(!all_rep.one_layer_alone && all_rep.single_layer == NUE_ONE_LAYER_SHORTEST);
	CHECK(same_routing(&r, &all, r.lft_len - 1));
	routing_free(&r);
	routing_free(&all);
	fabric_free(&f);

	o.one_layer_alone_from = 1;
	CHECK(testfab_build(&f, 5, 2, (const unsigned(*)[2])links, testfab_ring(links, 5), 0) == 0);
	testfab_set_vls(&f, 4);
	CHECK(route_with(&f, &o, &r, &rep, &err) == 0);
	CHECK(!rep.one_layer_alone && rep.single_layer == 0);
	routing_free(&r);
	fabric_free(&f);
}

/* Hops towards the switch LIDs, summed over the switches. */
static uint64_t switch_lid_hops(const struct fabric *f, const struct routing *r)
{
	uint64_t sum = 0;
	uint32_t lid, s;

	for (lid = 1; lid <= f->max_lid; lid++)
		if (f->lid_port[lid] != FAB_NONE &&
		    f->nodes[f->ports[f->lid_port[lid]].node].type == FAB_SWITCH)
			for (s = 0; s < r->nswitches; s++)
				sum += routing_hops(r, s)[lid];
	return sum;
}

/*
 * One layer over k VLs: routes that detour in the one layer are routed again in their VL alone.
 * On the 5x5x5 torus without switch 3 with 2 layers routed once each, one layer routes every
 * destination (see test_whole_single_layer), first as with one VL.  Then routes between CAs get
 * shorter without a higher maximum EFI, and so do the switch LIDs' routes, and the tables pass
 * the verifier (every VL acyclic).
 */
static void test_rerouted_in_vl(void)
{
	static unsigned links[3 * 125][2];
	struct nue_opts one = { .no_mcast_tree = 1, .vls = 1, .orders = 1 }, two = {
		.no_mcast_tree = 1, .vls = 2, .layer_tries = 1, .partition = NUE_PARTITION_METIS
	};
	struct nue_report rep;
	struct fab_error err = { "" };
	struct verify_report v;
	struct routing base, r;
	struct fabric f;
	unsigned n = testfab_torus(links, 5, 5, 5, 3);
	uint64_t efi_one, efi_two;
	double hops_one, hops_two;

	CHECK(testfab_build(&f, 124, 4, (const unsigned(*)[2])links, n, 0) == 0);
	testfab_set_vls(&f, 2);
	measure_with(&f, &one, &rep, &efi_one, &hops_one);
	measure_with(&f, &two, &rep, &efi_two, &hops_two);
	CHECK(rep.single_layer == NUE_ONE_LAYER_FEWER_FALLBACKS && rep.vl_rerouted > 0);
	CHECK(hops_two < hops_one && efi_two <= efi_one);
	CHECK(route_with(&f, &one, &base, &rep, &err) == 0);
	CHECK(route_with(&f, &two, &r, &rep, &err) == 0);
	CHECK(switch_lid_hops(&f, &r) < switch_lid_hops(&f, &base));
	CHECK(verify_routing(&f, &r, &v) == 0 && verify_ok(&v));
	routing_free(&r);
	routing_free(&base);
	fabric_free(&f);
}

/*
 * The one layer is judged once its destinations are routed again in their VL.  On the 6x6x6 torus
 * without switch 3, 2 layers routed once each fall back for 14 destinations.  Judged as routed,
 * the one layer did not both fall back less and have a lower maximum EFI, and the 2 layers were
 * kept; after the pass in each VL it falls back for none and wins.
 */
static void whole_layer_judged_after_vl_pass(void)
{
	static unsigned links[3 * 216][2];
	struct nue_opts once = {
		.no_mcast_tree = 1, .vls = 2, .layer_tries = 1, .partition = NUE_PARTITION_METIS
	};
	struct nue_report rep;
	struct fab_error err = { "" };
	struct verify_report v;
	struct routing r;
	struct fabric f;
	unsigned n = testfab_torus(links, 6, 6, 6, 3);

	CHECK(testfab_build(&f, 215, 4, (const unsigned(*)[2])links, n, 0) == 0);
	testfab_set_vls(&f, 2);
	CHECK(route_with(&f, &once, &r, &rep, &err) == 0);
	CHECK(rep.single_layer == NUE_ONE_LAYER_FEWER_FALLBACKS && rep.fallbacks == 0);
	CHECK(rep.vl_rerouted > 0);
	CHECK(verify_routing(&f, &r, &v) == 0 && verify_ok(&v));
	routing_free(&r);
	fabric_free(&f);
}

/*
 * When k layers fall back for more than 1% of the destinations, one layer routing every
 * destination is kept if it falls back less and its maximum EFI is lower.  On the 5x5x5 torus
 * without switch 3 with each of 2 layers routed once, 14 of 620 destinations fell back; one
 * layer routes them all.  Its SLs follow the partition, and the tables pass the verifier.
 */
static void test_whole_single_layer(void)
{
	struct nue_torus torus;
	static unsigned links[3 * 125][2];
	struct nue_opts once = { .no_mcast_tree = 1,
				 .vls = 2,
				 .layer_tries = 1,
				 .partition = NUE_PARTITION_METIS },
			full = { .no_mcast_tree = 1, .vls = 2, .partition = NUE_PARTITION_METIS };
	struct nue_report rep;
	struct fab_error err = { "" };
	struct verify_report v;
	struct routing r;
	struct fabric f;
	uint8_t *part;
	uint32_t i, on_partition = 0;
	unsigned n = testfab_torus(links, 5, 5, 5, 3);

	CHECK(testfab_build(&f, 124, 4, (const unsigned(*)[2])links, n, 0) == 0);
	testfab_set_vls(&f, 2);
	part = malloc(f.nendports);
	CHECK(part && nue_partition(&f, 2, NUE_PARTITION_METIS, part, &torus));
	CHECK(route_with(&f, &once, &r, &rep, &err) == 0);
	CHECK(rep.single_layer == NUE_ONE_LAYER_FEWER_FALLBACKS && rep.fallbacks == 0);
	CHECK(rep.dests_per_layer[0] > 0 && rep.dests_per_layer[1] > 0);
	CHECK(verify_routing(&f, &r, &v) == 0 && verify_ok(&v));
	for (i = 0; part && i < f.nendports; i++)
		on_partition += routing_path_sl(&r, 1, f.ports[f.endports[i]].base_lid) == part[i];
	CHECK(on_partition == f.nendports);
	routing_free(&r);
	/* With the default tries per layer the 2 layers fall back for under 1%: no one layer. */
	CHECK(route_with(&f, &full, &r, &rep, &err) == 0);
	CHECK(rep.single_layer == 0 && rep.fallbacks * 100 <= rep.destinations);
	routing_free(&r);
	free(part);
	fabric_free(&f);
	whole_layer_judged_after_vl_pass();
}

/* Nodes of the larger job are routed first; the same inputs give the same tables. */
static void test_jobs_and_determinism(void)
{
	unsigned links[8][2];
	struct nue_report rep, rep2;
	struct fab_error err;
	struct job_map jm;
	struct routing r, r2;
	struct fabric f;

	CHECK(testfab_build(&f, 8, 2, (const unsigned(*)[2])links, testfab_ring(links, 8), 0) == 0);
	job_map_init(&jm);
	CHECK(job_map_parse_text(&jm, "h0.0 a\nh3.1 a\nh5.0 a\nh1.0 b\nh6.1 b\nnowhere b\n", "jm",
				 &err) == 0);
	CHECK(job_map_bind(&jm, &f, JOB_MATCH_FIRST_WORD, NULL, &err) == 0);
	CHECK(route(&f, 1, &jm, &r, &rep, &err) == 0);
	CHECK(rep.job_destinations == 5);
	CHECK(route(&f, 1, &jm, &r2, &rep2, &err) == 0);
	CHECK(!memcmp(r.lft, r2.lft, (size_t)r.nswitches * r.lft_len));
	CHECK(!memcmp(r.hops, r2.hops, (size_t)r.nswitches * r.lft_len));
	routing_free(&r);
	routing_free(&r2);
	job_map_free(&jm);
	fabric_free(&f);
}

static void test_errors(void)
{
	unsigned links[3][2] = { { 0, 1 }, { 1, 2 }, { 2, 0 } };
	struct sarnue_options o;
	struct engine_ctx ctx;
	struct engine_result res;
	struct nue_report rep;
	struct fab_error err = { "" };
	struct routing r;
	struct fabric f;

	CHECK(testfab_build(&f, 3, 1, (const unsigned(*)[2])links, 3, 0) == 0);
	testfab_set_vls(&f, 4);
	CHECK(route(&f, 8, NULL, &r, &rep, &err) != 0);
	CHECK(strstr(err.msg, "nue_vls=8") && strstr(err.msg, "only 4 data VLs"));
	routing_free(&r);
	CHECK(route(&f, 0, NULL, &r, &rep, &err) != 0);
	CHECK(strstr(err.msg, "nue_vls=0") != NULL);
	routing_free(&r);

	/* Without SL2VL programming (QoS off) more than one layer is refused with a warning. */
	options_defaults(&o);
	o.nue_vls = 4;
	engine_ctx_init(&ctx);
	ctx.sl2vl_off = 1;
	CHECK(routing_init(&r, &f, "sar-nue") == 0);
	CHECK(engine_run_ctx("sar-nue", &f, &o, &ctx, &r, &res, &err) == 0);
	engine_ctx_free(&ctx);
	CHECK(strstr(res.warning, "qos TRUE") != NULL);
	CHECK(r.vls_used == 1 && verify_count_bits(res.verify.vls_used) == 1);
	routing_free(&r);
	fabric_free(&f);

	CHECK(testfab_build(&f, 4, 1, (const unsigned(*)[2])links, 3, 0) == 0);
	CHECK(route(&f, 1, NULL, &r, &rep, &err) != 0);
	CHECK(strstr(err.msg, "0x0000000000001003") && strstr(err.msg, "disconnected"));
	routing_free(&r);
	fabric_free(&f);
}

/* The central switch of a star with a long tail is the hub. */
static void test_central_switch(void)
{
	unsigned links[6][2] = { { 0, 1 }, { 0, 2 }, { 0, 3 }, { 0, 4 }, { 4, 5 }, { 5, 6 } };
	uint32_t dest_count[7] = { 1, 1, 1, 1, 1, 1, 1 };
	struct fabric f;

	CHECK(testfab_build(&f, 7, 1, (const unsigned(*)[2])links, 6, 0) == 0);
	CHECK(nue_central_switch(&f, dest_count, NULL) == f.nodes[0].sw);
	/* With destinations only at the tail, the hub is off their convex subgraph. */
	memset(dest_count, 0, sizeof(dest_count));
	dest_count[f.nodes[4].sw] = dest_count[f.nodes[6].sw] = 1;
	CHECK(nue_central_switch(&f, dest_count, NULL) == f.nodes[5].sw);
	fabric_free(&f);
}

/*
 * The caller's work beside the routing (the plugin's hop rows) waits at a gate until the engine
 * is done with the second CPU.  A routing by nue_route opens it: one or two orders, one or two
 * threads, one layer or several.  engine_run_ctx opens it for the other engines, and when the
 * routing fails (here before any engine ran).
 */
static void test_spare_cpu(void)
{
	static const unsigned runs[][3] = {
		/* vls, orders, threads */
		{ 1, 1, 2 }, { 1, 2, 2 }, { 1, 2, 1 }, { 2, 1, 2 }, { 2, 1, 1 },
	};
	static unsigned links[3 * 27][2];
	struct sarnue_options o;
	struct engine_result res;
	struct engine_ctx ctx;
	struct nue_report rep;
	struct fab_error err;
	struct cpu_gate gate;
	struct routing r;
	struct fabric f;
	unsigned i, n = testfab_torus(links, 3, 3, 3, -1);

	CHECK(testfab_build(&f, 27, 2, (const unsigned(*)[2])links, n, 0) == 0);
	testfab_set_vls(&f, 2);
	for (i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		struct nue_opts no = { .no_mcast_tree = 1,
				       .vls = runs[i][0],
				       .orders = runs[i][1],
				       .threads = runs[i][2],
				       .spare_cpu = &gate };

		CHECK(cpu_gate_init(&gate) == 0);
		CHECK(route_with(&f, &no, &r, &rep, &err) == 0 && gate.open == 1);
		routing_free(&r);
		cpu_gate_destroy(&gate);
	}
	options_defaults(&o);
	engine_ctx_init(&ctx);
	ctx.spare_cpu = &gate;
	CHECK(cpu_gate_init(&gate) == 0);
	CHECK(routing_init(&r, &f, "sar-updn") == 0);
	CHECK(engine_run_ctx("sar-updn", &f, &o, &ctx, &r, &res, &err) == 0 && gate.open == 1);
	routing_free(&r);
	cpu_gate_destroy(&gate);
	CHECK(cpu_gate_init(&gate) == 0);
	CHECK(routing_init(&r, &f, "sar-nue") == 0);
	CHECK(engine_run_ctx("no-such-engine", &f, &o, &ctx, &r, &res, &err) != 0);
	CHECK(gate.open == 1);
	routing_free(&r);
	cpu_gate_destroy(&gate);
	engine_ctx_free(&ctx);
	fabric_free(&f);
}

int main(void)
{
	test_ring5();
	test_empty_layers();
	test_faulty_torus();
	test_debug_checks();
	test_random_graphs();
	test_lmc();
	test_fat_tree_balance();
	test_switch_lid_weights();
	test_torus_no_fallback();
	test_shortcut_keeps_turns();
	test_fallbacks_move();
	test_layer_tries();
	test_deferred_tries();
	test_one_layer_alone();
	test_rebalance();
	test_move_aside();
	test_aside_attempts();
	test_orders();
	test_single_layer();
	test_whole_single_layer();
	test_rerouted_in_vl();
	test_threads();
	test_spare_cpu();
	test_verify_beside();
	test_jobs_and_determinism();
	test_errors();
	test_central_switch();
	return CHECK_RESULT();
}
