/*
 * test_metrics.c - the routing metrics against numbers worked out by hand on small fabrics with
 * LFTs filled in by hand: two switches (EFI h1 * h2), a ring routed clockwise (EFI, stretch,
 * shift loads), a two-level fat tree routed by destination modulo the spines (uneven EFI), a
 * job map on that tree (effective EFI, dark fiber, per-job figures, a pair sharing two jobs),
 * LMC ranges, holes and loops in the LFTs, random bisections, the tree routed by sar-updn, and
 * the fat-tree figures: shifts in a second terminal order, the cut bound, the report's lines.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "testfab.h"
#include "engines/engines.h"
#include "check/metrics.h"
#include "fabric/fattree.h"

#define NEAR(a, b) (fabs((double)(a) - (double)(b)) < 1e-9)

/*
 * Switch i has GUID 0x1000 + i, so it is switch index i; hosts follow, hosts[i] on switch i,
 * numbered globally and named host0, host1, ...: host k is node nsw + k.
 */
static int build(struct fabric *f, unsigned nsw, const unsigned *hosts, const unsigned (*links)[2],
		 unsigned nlinks, unsigned lmc)
{
	return testfab_build_hosts(f, nsw, hosts, 1, links, nlinks, lmc);
}

/* Next switch from s towards host `host` on switch dsw. */
typedef uint32_t (*next_fn)(uint32_t s, uint32_t dsw, uint32_t host);

static unsigned port_to(const struct fabric *f, uint32_t s, uint32_t t)
{
	const struct fab_node *n = &f->nodes[f->switches[s]];
	unsigned k;

	for (k = 1; k <= n->nports; k++) {
		uint32_t rem = f->ports[n->first_port + k].remote;

		if (rem != FAB_NONE && f->ports[rem].node == f->switches[t])
			return k;
	}
	return FAB_NO_PORT;
}

/* Every LID of every host; switch LIDs stay unrouted, no metric looks at them. */
static void fill(const struct fabric *f, struct routing *r, next_fn next)
{
	uint32_t s, lid;

	for (s = 0; s < f->nswitches; s++) {
		uint8_t *lft = routing_lft(r, s);

		for (lid = 1; lid <= f->max_lid; lid++) {
			uint32_t p = f->lid_port[lid], dsw;

			if (p == FAB_NONE || fabric_is_switch(f, f->ports[p].node))
				continue;
			dsw = f->nodes[f->ports[f->ports[p].remote].node].sw;
			if (dsw == s)
				lft[lid] = f->ports[f->ports[p].remote].num;
			else
				lft[lid] = (uint8_t)port_to(
					f, s, next(s, dsw, f->ports[p].node - f->nswitches));
		}
	}
}

/* Channel of C* from switch a to switch b. */
static uint32_t chan(const struct fabric *f, uint32_t a, uint32_t b)
{
	uint32_t i;

	for (i = 0; i < f->sw_adj_off[f->nswitches]; i++) {
		uint32_t p = f->sw_adj_port[i];

		if (f->nodes[f->ports[p].node].sw == a &&
		    f->nodes[f->ports[f->ports[p].remote].node].sw == b)
			return i;
	}
	return FAB_NONE;
}

static uint32_t direct(uint32_t s, uint32_t dsw, uint32_t host)
{
	(void)s;
	(void)host;
	return dsw;
}

static void test_two_switches(void)
{
	static const unsigned hosts[] = { 3, 4 }, links[][2] = { { 0, 1 } };
	struct metrics_options o;
	struct metrics_efi e;
	struct routing r;
	struct fabric f;

	metrics_options_default(&o);
	CHECK(build(&f, 2, hosts, links, 1, 0) == 0);
	CHECK(routing_init(&r, &f, "hand") == 0);
	fill(&f, &r, direct);
	CHECK(metrics_efi(&f, &r, &o, &e) == 0);
	CHECK(e.nchannels == 2);
	CHECK(e.terminals == 7 && e.detached == 0);
	CHECK(e.routes == 7 * 6 && e.unrouted == 0);
	CHECK(e.load[chan(&f, 0, 1)] == 12 && e.load[chan(&f, 1, 0)] == 12);
	CHECK(e.dist.min == 12 && e.dist.max == 12 && NEAR(e.dist.mean, 12) && NEAR(e.dist.sdv, 0));
	CHECK(e.dist.bin_width == 1 && e.dist.nbins == 13 && e.dist.bins[12] == 2);
	CHECK(e.nonminimal == 0 && e.max_stretch == 0 && NEAR(e.mean_ratio, 1.0));
	CHECK(e.stretch_hist[0] == 42);
	metrics_efi_free(&e);
	routing_free(&r);
	fabric_free(&f);
}

/* LMC 1: two LIDs per host, the same path to both. */
static void test_all_lids(void)
{
	static const unsigned hosts[] = { 2, 2 }, links[][2] = { { 0, 1 } };
	struct metrics_options o;
	struct metrics_efi e;
	struct routing r;
	struct fabric f;

	metrics_options_default(&o);
	CHECK(build(&f, 2, hosts, links, 1, 1) == 0);
	CHECK(routing_init(&r, &f, "hand") == 0);
	fill(&f, &r, direct);
	CHECK(metrics_efi(&f, &r, &o, &e) == 0);
	CHECK(e.dist.max == 4 && e.routes == 12);
	metrics_efi_free(&e);
	o.all_lids = 1;
	CHECK(metrics_efi(&f, &r, &o, &e) == 0);
	CHECK(e.dist.min == 8 && e.dist.max == 8 && e.routes == 24);
	metrics_efi_free(&e);
	routing_free(&r);
	fabric_free(&f);
}

/* A missing entry and a forwarding loop: the routes are counted as not delivered, not as load. */
static void test_holes_and_loops(void)
{
	static const unsigned hosts[] = { 3, 3 }, links[][2] = { { 0, 1 } };
	struct metrics_options o;
	struct metrics_efi e;
	struct routing r;
	struct fabric f;
	unsigned lid_a, lid_b;

	metrics_options_default(&o);
	CHECK(build(&f, 2, hosts, links, 1, 0) == 0);
	CHECK(routing_init(&r, &f, "hand") == 0);
	fill(&f, &r, direct);
	/* host3 (on switch 1): switch 0 has no entry.  host4: switch 1 bounces it back. */
	lid_a = f.ports[f.nodes[2 + 3].first_port + 1].base_lid;
	lid_b = f.ports[f.nodes[2 + 4].first_port + 1].base_lid;
	routing_lft(&r, 0)[lid_a] = FAB_NO_PORT;
	routing_lft(&r, 1)[lid_b] = (uint8_t)port_to(&f, 1, 0);
	CHECK(metrics_efi(&f, &r, &o, &e) == 0);
	CHECK(e.unrouted == 3 + 5);
	CHECK(e.routes == 30 - 8);
	CHECK(e.load[chan(&f, 0, 1)] == 9 - 3 - 3);
	CHECK(e.load[chan(&f, 1, 0)] == 9);
	metrics_efi_free(&e);
	routing_free(&r);
	fabric_free(&f);
}

static uint32_t clockwise(uint32_t s, uint32_t dsw, uint32_t host)
{
	(void)dsw;
	(void)host;
	return (s + 1) % 5;
}

/*
 * Ring of 5, one host each, everything clockwise: a route of k links between switches crosses
 * k channels, so each clockwise channel carries 1 + 2 + 3 + 4 = 10 routes, the others none.
 * Shortest distances are 1, 2, 2, 1 for k = 1..4: stretch 0, 0, 1, 3 per source.  With the two
 * end links a route takes k + 2 links: mean hops (3 + 4 + 5 + 6) / 4.
 */
static void test_ring(void)
{
	static const unsigned hosts[] = { 1, 1, 1, 1, 1 };
	unsigned links[5][2], i;
	struct metrics_options o;
	struct metrics_patterns p;
	struct metrics_efi e;
	struct routing r;
	struct fabric f;

	for (i = 0; i < 5; i++) {
		links[i][0] = i;
		links[i][1] = (i + 1) % 5;
	}
	metrics_options_default(&o);
	CHECK(build(&f, 5, hosts, (const unsigned(*)[2])links, 5, 0) == 0);
	CHECK(routing_init(&r, &f, "hand") == 0);
	fill(&f, &r, clockwise);
	CHECK(metrics_efi(&f, &r, &o, &e) == 0);
	CHECK(e.nchannels == 10);
	for (i = 0; i < 5; i++) {
		CHECK(e.load[chan(&f, i, (i + 1) % 5)] == 10);
		CHECK(e.load[chan(&f, (i + 1) % 5, i)] == 0);
	}
	CHECK(e.dist.min == 0 && e.dist.max == 10 && NEAR(e.dist.mean, 5) && NEAR(e.dist.sdv, 5));
	CHECK(e.dist.zero == 5);
	/* The five clockwise channels carry 10 routes each; the idle ones are not listed. */
	CHECK(e.nhot == 5 && e.hot[0].load == 10 && e.hot[4].load == 10);
	CHECK(strchr(e.hot[0].from, '[') != NULL && strstr(e.hot[0].to, "[") != NULL);
	CHECK(e.routes == 20);
	CHECK(e.nonminimal == 10 && e.max_stretch == 3);
	CHECK(e.stretch_hist[0] == 10 && e.stretch_hist[1] == 5 && e.stretch_hist[3] == 5);
	CHECK(NEAR(e.mean_stretch, 1.0));
	CHECK(NEAR(e.mean_ratio, (1 + 1 + 1.25 + 2) / 4.0));
	CHECK(NEAR(e.mean_hops, 4.5));

	/* Shift s sends every host s links clockwise: each clockwise channel carries s flows. */
	o.permutations = 0;
	o.bisections = 0;
	CHECK(metrics_patterns(&f, &r, &o, &p) == 0);
	CHECK(p.terminals == 5 && p.shifts_possible == 4);
	CHECK(p.shift.instances == 4 && p.shift.flows == 20 && p.shift.unrouted == 0);
	CHECK(p.shift.max_load == 4 && NEAR(p.shift.mean_max_load, 2.5));
	/* Two shifts spread evenly over 1..4 are 1 and 3. */
	o.shifts = 2;
	CHECK(metrics_patterns(&f, &r, &o, &p) == 0);
	CHECK(p.shift.instances == 2 && p.shift.max_load == 3 && NEAR(p.shift.mean_max_load, 2.0));
	metrics_efi_free(&e);
	routing_free(&r);
	fabric_free(&f);
}

/* Leaves 0..2 with 3 hosts each, spines 3 and 4; up to spine 3 + (host mod 2). */
static const unsigned tree_hosts[] = { 3, 3, 3, 0, 0 };
static const unsigned tree_links[][2] = {
	{ 0, 3 }, { 0, 4 }, { 1, 3 }, { 1, 4 }, { 2, 3 }, { 2, 4 }
};

static uint32_t modulo_spine(uint32_t s, uint32_t dsw, uint32_t host)
{
	return s >= 3 ? dsw : 3 + host % 2;
}

static int build_tree(struct fabric *f, struct routing *r)
{
	if (build(f, 5, tree_hosts, tree_links, 6, 0) || routing_init(r, f, "hand"))
		return -1;
	fill(f, r, modulo_spine);
	return 0;
}

/*
 * Up from leaf L to spine S: 3 sources times the remote hosts with that parity; down from S to
 * L: 6 remote sources times L's hosts with that parity.  Hosts 0..8, leaf L has 3L..3L+2.
 * Each host reaches 2 hosts on its leaf over 2 links and 6 others over 4: mean hops 28 / 8.
 */
static void test_fat_tree(void)
{
	static const uint64_t up[3][2] = { { 9, 9 }, { 12, 6 }, { 9, 9 } };
	static const uint64_t down[3][2] = { { 12, 6 }, { 6, 12 }, { 12, 6 } };
	struct metrics_options o;
	struct metrics_efi e;
	struct routing r;
	struct fabric f;
	unsigned l, s;

	metrics_options_default(&o);
	CHECK(build_tree(&f, &r) == 0);
	CHECK(metrics_efi(&f, &r, &o, &e) == 0);
	CHECK(e.nchannels == 12 && e.routes == 72);
	for (l = 0; l < 3; l++) {
		for (s = 0; s < 2; s++) {
			CHECK(e.load[chan(&f, l, 3 + s)] == up[l][s]);
			CHECK(e.load[chan(&f, 3 + s, l)] == down[l][s]);
		}
	}
	CHECK(e.dist.min == 6 && e.dist.max == 12 && NEAR(e.dist.mean, 9));
	CHECK(e.nhot > 1 && e.hot[0].load == 12);
	for (l = 1; l < e.nhot; l++)
		CHECK(e.hot[l].load <= e.hot[l - 1].load && e.hot[l].load >= 6);
	CHECK(NEAR(e.dist.sdv, sqrt(6.0)));
	CHECK(e.dist.bins[6] == 4 && e.dist.bins[9] == 4 && e.dist.bins[12] == 4);
	CHECK(e.nonminimal == 0);
	CHECK(NEAR(e.mean_hops, 3.5));
	metrics_efi_free(&e);
	routing_free(&r);
	fabric_free(&f);
}

/*
 * Jobs on the fat tree: A = {0, 4}, B = {0, 1, 7}, C = {8} (one switch), D = {0, 4} again, so
 * the pair 0, 4 shares two jobs and its routes count twice.  Routes by hand:
 *   A, D: 0->4 leaf0->spine3->leaf1, 4->0 leaf1->spine3->leaf0
 *   B:    0->7 and 1->7 leaf0->spine4->leaf2, 7->0 leaf2->spine3->leaf0,
 *         7->1 leaf2->spine4->leaf0; 0<->1 stay on leaf 0
 */
static void test_jobs(void)
{
	struct metrics_options o;
	struct metrics_jobs j;
	struct job_map jm;
	struct fab_error err;
	struct routing r;
	struct fabric f;

	metrics_options_default(&o);
	CHECK(build_tree(&f, &r) == 0);
	job_map_init(&jm);
	CHECK(job_map_parse_text(&jm,
				 "host0 A\nhost4 A\nhost0 B\nhost1 B\nhost7 B\nhost8 C\n"
				 "ghost C\nhost0 D\nhost4 D\n",
				 "jobs", &err) == 0);
	CHECK(job_map_bind(&jm, &f, JOB_MATCH_FIRST_WORD, NULL, &err) == 0);
	CHECK(metrics_effective_efi(&f, &r, &jm, &o, &j) == 0);
	CHECK(j.njobs == 4 && j.nchannels == 12);
	CHECK(j.load[chan(&f, 0, 3)] == 2 && j.load[chan(&f, 3, 1)] == 2);
	CHECK(j.load[chan(&f, 1, 3)] == 2 && j.load[chan(&f, 3, 0)] == 3);
	CHECK(j.load[chan(&f, 0, 4)] == 2 && j.load[chan(&f, 4, 2)] == 2);
	CHECK(j.load[chan(&f, 2, 3)] == 1 && j.load[chan(&f, 2, 4)] == 1);
	CHECK(j.load[chan(&f, 4, 0)] == 1);
	CHECK(j.load[chan(&f, 1, 4)] == 0 && j.load[chan(&f, 4, 1)] == 0);
	CHECK(j.load[chan(&f, 3, 2)] == 0);
	CHECK(j.dist.max == 3 && j.dist.zero == 3 && NEAR(j.dist.mean, 16.0 / 12));
	CHECK(NEAR(j.dark_fiber, 25.0));
	CHECK(j.routes == 2 + 6 + 0 + 2 && j.unrouted == 0);
	CHECK(j.bound_terminals == 5);
	CHECK(j.job[0].terminals == 2 && j.job[0].switches == 2 && j.job[0].routes == 2);
	CHECK(j.job[0].max_efi == 1 && j.job[0].channels == 4);
	CHECK(j.job[1].terminals == 3 && j.job[1].routes == 6);
	CHECK(j.job[1].max_efi == 2 && j.job[1].channels == 6);
	CHECK(j.job[2].terminals == 1 && j.job[2].switches == 1 && j.job[2].routes == 0);
	CHECK(j.job[2].max_efi == 0 && j.job[2].channels == 0);
	CHECK(j.multi_switch_jobs == 3);
	CHECK(NEAR(j.mean_job_max_efi, 4.0 / 3) && NEAR(j.mean_job_channels, 14.0 / 3));
	CHECK(jm.unknown_hosts == 1);
	metrics_jobs_free(&j);
	job_map_free(&jm);
	routing_free(&r);
	fabric_free(&f);
}

static uint32_t via_hub(uint32_t s, uint32_t dsw, uint32_t host)
{
	(void)host;
	return s == 4 ? dsw : 4;
}

/* Leaves 0..3 with one host each around a hub (switch 4): no two flows of a pattern meet. */
static void test_bisection_star(void)
{
	static const unsigned hosts[] = { 1, 1, 1, 1, 0 };
	static const unsigned links[][2] = { { 0, 4 }, { 1, 4 }, { 2, 4 }, { 3, 4 } };
	struct metrics_options o;
	struct metrics_patterns p;
	struct routing r;
	struct fabric f;

	metrics_options_default(&o);
	o.bisections = 20;
	o.permutations = 20;
	CHECK(build(&f, 5, hosts, links, 4, 0) == 0);
	CHECK(routing_init(&r, &f, "hand") == 0);
	fill(&f, &r, via_hub);
	CHECK(metrics_patterns(&f, &r, &o, &p) == 0);
	CHECK(p.bisection.instances == 20 && p.bisection.flows == 80);
	CHECK(p.bisection.max_load == 1 && NEAR(p.bisection.mean_max_load, 1.0));
	CHECK(NEAR(p.ebb_unslowed, 1.0) && NEAR(p.ebb_share, 1.0));
	CHECK(p.permutation.instances == 20 && p.permutation.max_load == 1);
	CHECK(p.shift.max_load == 1 && p.shift.instances == 3);
	routing_free(&r);
	fabric_free(&f);
}

/*
 * Two switches, two hosts each, one link.  A bisection pairs both hosts of a switch with each
 * other (nothing crosses: all unslowed, load 0) or pairs across (both channels carry 2 flows:
 * all slowed, share 1/2).  So ebb_share = (1 + ebb_unslowed) / 2 and the mean highest load is
 * 2 (1 - ebb_unslowed), whatever the random choices were.
 */
static void test_bisection_two_switches(void)
{
	static const unsigned hosts[] = { 2, 2 }, links[][2] = { { 0, 1 } };
	struct metrics_options o;
	struct metrics_patterns p, q;
	struct routing r;
	struct fabric f;

	metrics_options_default(&o);
	CHECK(build(&f, 2, hosts, links, 1, 0) == 0);
	CHECK(routing_init(&r, &f, "hand") == 0);
	fill(&f, &r, direct);
	CHECK(metrics_patterns(&f, &r, &o, &p) == 0);
	CHECK(p.bisection.instances == 100 && p.bisection.flows == 400);
	CHECK(p.ebb_unslowed > 0 && p.ebb_unslowed < 1);
	CHECK(NEAR(p.ebb_share, (1 + p.ebb_unslowed) / 2));
	CHECK(NEAR(p.bisection.mean_max_load, 2 * (1 - p.ebb_unslowed)));
	CHECK(p.bisection.max_load == 2);
	/* Shift 2 sends both hosts of each switch across: load 2; shifts 1 and 3 load 1. */
	CHECK(p.shift.instances == 3 && p.shift.max_load == 2);
	CHECK(NEAR(p.shift.mean_max_load, 4.0 / 3));
	/* Same seed, same numbers. */
	CHECK(metrics_patterns(&f, &r, &o, &q) == 0);
	CHECK(q.ebb_unslowed == p.ebb_unslowed &&
	      q.permutation.mean_max_load == p.permutation.mean_max_load);
	routing_free(&r);
	fabric_free(&f);
}

/* sar-updn on a 4-leaf, 2-spine tree: minimal routes, two channels of C* per inter-leaf route. */
static void test_engine_tree(void)
{
	static const unsigned hosts[] = { 3, 3, 3, 3, 0, 0 };
	static const unsigned links[][2] = { { 0, 4 }, { 0, 5 }, { 1, 4 }, { 1, 5 },
					     { 2, 4 }, { 2, 5 }, { 3, 4 }, { 3, 5 } };
	struct sarnue_options so;
	struct engine_result res;
	struct metrics_options o;
	struct fab_error err;
	struct metrics_efi e;
	struct routing r;
	struct fabric f;
	uint64_t sum = 0;
	uint32_t i;

	metrics_options_default(&o);
	options_defaults(&so);
	CHECK(build(&f, 6, hosts, links, 8, 0) == 0);
	CHECK(routing_init(&r, &f, "sar-updn") == 0);
	CHECK(engine_run("sar-updn", &f, &so, &r, &res, &err) == 0);
	CHECK(metrics_efi(&f, &r, &o, &e) == 0);
	for (i = 0; i < e.nchannels; i++)
		sum += e.load[i];
	CHECK(e.routes == 12 * 11 && e.unrouted == 0);
	CHECK(sum == 2 * 12 * 9);
	CHECK(e.nonminimal == 0 && e.max_stretch == 0);
	CHECK(e.dist.max >= 14); /* 27 routes leave a leaf over 2 up channels */
	metrics_efi_free(&e);
	routing_free(&r);
	fabric_free(&f);
}

/* The report of one run as text, into a buffer the caller frees. */
static char *report_text(const struct metrics_report *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	CHECK(out != NULL);
	metrics_print_text(m, out);
	fclose(out);
	return buf;
}

/*
 * The tree above is a fat tree of 3 leaves: the topology order is the hosts' (and the LIDs')
 * order, a leaf's 3 hosts send 3 * 6 routes over its 2 up links: cut bound 9 against the EFI's
 * 12.  Walking all shifts, the reversed order gives the same loads (shift s backwards is N - s
 * forwards); switch ports and repeats in an order are left out; a subset makes its own shifts.
 */
static void test_topology_order(void)
{
	struct metrics_options o;
	struct metrics_patterns p;
	struct metrics_fat_tree mt;
	struct metrics_efi e;
	struct metrics_report m;
	struct fat_tree t;
	struct routing r;
	struct fabric f;
	uint32_t order[12], i;
	char *text;

	metrics_options_default(&o);
	o.permutations = 0;
	o.bisections = 0;
	CHECK(build_tree(&f, &r) == 0);
	CHECK(metrics_efi(&f, &r, &o, &e) == 0);
	metrics_fat_tree_recognise(&f, &t, &mt);
	CHECK(mt.recognised && mt.levels == 2 && mt.leaves == 3 && mt.hosts == 9 && !mt.service);
	CHECK(mt.efi_bound == 9 && e.dist.max == 12);
	CHECK(t.nterminals == 9);
	for (i = 0; i < 9; i++)
		CHECK(t.terminals[i] == f.endports[f.nswitches + i]); /* LID order */

	CHECK(metrics_patterns_in_order(&f, &r, &o, t.terminals, t.nterminals, &p) == 0);
	CHECK(p.have_order && p.order_terminals == 9 && p.order_shifts_possible == 8);
	CHECK(p.order_shift.instances == 8 && p.order_shift.flows == 72);
	CHECK(p.order_shift.max_load == p.shift.max_load);
	CHECK(NEAR(p.order_shift.mean_max_load, p.shift.mean_max_load));

	m = (struct metrics_report){ .options = &o, .efi = &e, .patterns = &p, .tree = &mt };
	text = report_text(&m);
	CHECK(strstr(text, "\nEFI cut bound:    EFI max 12 (fat tree cut bound 9, ratio 1.33)\n"));
	CHECK(strstr(text,
		     "\nfat tree:         2 levels, switches 3+2, up ports 2x1 (9 terminals"));
	CHECK(strstr(text, "\n  shift (topo):   8 instances, max load "));
	free(text);

	/* Backwards, with the first switch's port 0 and a repeat mixed in. */
	order[0] = f.nodes[f.switches[0]].first_port;
	for (i = 0; i < 9; i++)
		order[1 + i] = t.terminals[8 - i];
	order[10] = t.terminals[3];
	CHECK(metrics_patterns_in_order(&f, &r, &o, order, 11, &p) == 0);
	CHECK(p.order_terminals == 9 && p.order_shift.flows == 72);
	CHECK(p.order_shift.max_load == p.shift.max_load);
	CHECK(NEAR(p.order_shift.mean_max_load, p.shift.mean_max_load));

	/* The hosts of two leaves only. */
	CHECK(metrics_patterns_in_order(&f, &r, &o, t.terminals, 6, &p) == 0);
	CHECK(p.order_terminals == 6 && p.order_shift.instances == 5);
	CHECK(p.order_shift.flows == 30 && p.shift.flows == 72);
	CHECK(p.order_shift.max_load <= p.shift.max_load);

	fat_tree_free(&t);
	metrics_efi_free(&e);
	routing_free(&r);
	fabric_free(&f);
}

/* A ring is no fat tree: the patterns say why in one line, the EFI part adds nothing. */
static void test_not_a_tree(void)
{
	static const unsigned hosts[] = { 1, 1, 1, 1, 1 };
	unsigned links[5][2], i;
	struct metrics_options o;
	struct metrics_patterns p;
	struct metrics_fat_tree mt;
	struct metrics_efi e;
	struct metrics_report m;
	struct fat_tree t;
	struct routing r;
	struct fabric f;
	char *text;

	for (i = 0; i < 5; i++) {
		links[i][0] = i;
		links[i][1] = (i + 1) % 5;
	}
	metrics_options_default(&o);
	o.permutations = 0;
	o.bisections = 0;
	CHECK(build(&f, 5, hosts, (const unsigned(*)[2])links, 5, 0) == 0);
	CHECK(routing_init(&r, &f, "hand") == 0);
	fill(&f, &r, clockwise);
	CHECK(metrics_efi(&f, &r, &o, &e) == 0);
	metrics_fat_tree_recognise(&f, &t, &mt);
	CHECK(!mt.recognised && mt.why[0] && !mt.efi_bound);
	CHECK(metrics_patterns_in_order(&f, &r, &o, NULL, 0, &p) == 0);
	CHECK(!p.have_order && p.shift.instances == 4);
	m = (struct metrics_report){ .options = &o, .efi = &e, .patterns = &p, .tree = &mt };
	text = report_text(&m);
	CHECK(strstr(text, "\n  topology order: not a fat tree ("));
	CHECK(!strstr(text, "cut bound") && !strstr(text, "fat tree:"));
	free(text);
	fat_tree_free(&t);
	metrics_efi_free(&e);
	routing_free(&r);
	fabric_free(&f);
}

int main(void)
{
	test_two_switches();
	test_all_lids();
	test_holes_and_loops();
	test_ring();
	test_fat_tree();
	test_jobs();
	test_bisection_star();
	test_bisection_two_switches();
	test_engine_tree();
	test_topology_order();
	test_not_a_tree();
	return CHECK_RESULT();
}
