/*
 * test_throughput.c - the flow-level throughput model (check/throughput.c) against cases
 * computed by hand: shared links, slow links, max-min fairness where it differs from a
 * proportional split, all-to-all on a full and on a 2:1 tapered fat tree, and the link rates
 * the net-file reader takes from ibnetdiscover comments.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "testfab.h"
#include "check/throughput.h"
#include "engines/engines.h"
#include "fabric/loaders.h"
#include "fabric/traffic.h"

#define NEAR(a, b) (fabs((double)(a) - (double)(b)) < 1e-4)

static const uint32_t no_inj[4] = { FAB_NONE, FAB_NONE, FAB_NONE, FAB_NONE };

/* Two flows over one link of capacity 1: half each. */
static void test_two_share(void)
{
	double cap[1] = { 1 };
	uint32_t off[2] = { 0, 1 }, ch[1] = { 0 }, route[2] = { 0, 0 };
	float demand[2] = { 1, 1 }, rate[2];
	struct tput_problem p = { 1, cap, off, ch, 2, route, no_inj, demand };

	CHECK(tput_maxmin(&p, rate) >= 1);
	CHECK(NEAR(rate[0], 0.5) && NEAR(rate[1], 0.5));
}

/* EDR (100) then DDR (16): the flow gets the DDR link's rate; a second flow on EDR alone the rest.
 */
static void test_slow_link(void)
{
	double cap[2] = { 100, 16 };
	uint32_t off[3] = { 0, 2, 3 }, ch[3] = { 0, 1, 0 }, route[2] = { 0, 1 };
	float demand[2] = { 100, 100 }, rate[2];
	struct tput_problem p = { 2, cap, off, ch, 2, route, no_inj, demand };

	CHECK(tput_maxmin(&p, rate) >= 1);
	CHECK(NEAR(rate[0], 16) && NEAR(rate[1], 84));
}

/*
 * Links A (cap 1) and B (cap 2); f0 crosses A and B, f1 only A, f2 only B.  Max-min: A fills at
 * 0.5 (f0, f1), then f2 takes B's rest 1.5.  A proportional split of B between its two flows
 * would give f2 1.0 and leave 0.5 of B unused.
 */
static void test_maxmin_three(void)
{
	double cap[2] = { 1, 2 };
	uint32_t off[4] = { 0, 2, 3, 4 }, ch[4] = { 0, 1, 0, 1 }, route[3] = { 0, 1, 2 };
	float demand[3] = { 10, 10, 10 }, rate[3];
	struct tput_problem p = { 2, cap, off, ch, 3, route, no_inj, demand };

	CHECK(tput_maxmin(&p, rate) == 2);
	CHECK(NEAR(rate[0], 0.5) && NEAR(rate[1], 0.5) && NEAR(rate[2], 1.5));
}

/* A flow wanting less than its share keeps only its demand; the other takes the rest. */
static void test_demand(void)
{
	double cap[1] = { 1 };
	uint32_t off[2] = { 0, 1 }, ch[1] = { 0 }, route[2] = { 0, 0 };
	float demand[2] = { 0.2f, 5 }, rate[2];
	struct tput_problem p = { 1, cap, off, ch, 2, route, no_inj, demand };

	CHECK(tput_maxmin(&p, rate) >= 1);
	CHECK(NEAR(rate[0], 0.2) && NEAR(rate[1], 0.8));
}

/* Leaves 0..L-1 with H hosts each, spines L..L+S-1, every leaf linked once to every spine. */
static int two_level(struct fabric *f, unsigned leaves, unsigned spines, unsigned hosts)
{
	unsigned links[64][2], per[32] = { 0 }, n = 0, l, s;

	for (l = 0; l < leaves; l++) {
		per[l] = hosts;
		for (s = 0; s < spines; s++) {
			links[n][0] = l;
			links[n][1] = leaves + s;
			n++;
		}
	}
	return testfab_build_hosts(f, leaves + spines, per, 0, (const unsigned(*)[2])links, n, 0);
}

static void alltoall(struct fabric *f, struct tput_result *t)
{
	struct sarnue_options so;
	struct engine_result res;
	struct metrics_options o;
	struct fab_error err;
	struct routing r;

	metrics_options_default(&o);
	options_defaults(&so);
	CHECK(routing_init(&r, f, "sar-dmodk") == 0);
	CHECK(engine_run("sar-dmodk", f, &so, &r, &res, &err) == 0);
	CHECK(tput_run(f, &r, "alltoall", &o, NULL, 0, NULL, t, &err) == 0);
	routing_free(&r);
}

/*
 * 4 leaves of 4 hosts: with 4 spines (full bisection) all-to-all runs at 1.0.  With 2 spines
 * (2:1) each leaf's 2 up links carry 4 hosts x 12 remote flows, 1/24 each against a demand of
 * 1/15 (0.625); the 3 flows inside the leaf get their 1/15: aggregate 12/24 + 3/15 = 0.7.
 */
static void test_fat_trees(void)
{
	struct tput_result t;
	struct fabric f;

	CHECK(two_level(&f, 4, 4, 4) == 0);
	alltoall(&f, &t);
	CHECK(t.flows == 16 * 15 && t.unrouted == 0);
	CHECK(NEAR(t.aggregate, 1.0) && NEAR(t.min, 1.0));
	fabric_free(&f);

	CHECK(two_level(&f, 4, 2, 4) == 0);
	alltoall(&f, &t);
	CHECK(NEAR(t.aggregate, 0.7));
	CHECK(NEAR(t.min, 0.625) && NEAR(t.p5, 0.625) && NEAR(t.median, 0.625));
	CHECK(t.nslow == TPUT_SLOW && NEAR(t.slow[0].fraction, 0.625));
	/* The bottleneck is a leaf's up channel or a spine's down channel. */
	CHECK(t.slow[0].channel != FAB_NONE &&
	      fabric_is_switch(&f, f.ports[t.slow[0].channel].node));
	fabric_free(&f);
}

/*
 * Completion times (fluid model): two hosts of one leaf send 1 and 3 units to one host of the
 * other leaf over the same links.  Both run at half the rate until the small one is done (its
 * slowdown 2), then the big one alone: it ends at 4 units' time against 3 alone (4/3).
 */
static void test_completion(void)
{
	struct sarnue_options so;
	struct engine_result res;
	struct tput_completion c;
	struct fab_error err;
	struct traffic t;
	struct routing r;
	struct fabric f;

	CHECK(two_level(&f, 2, 1, 2) == 0);
	options_defaults(&so);
	CHECK(routing_init(&r, &f, "sar-dmodk") == 0);
	CHECK(engine_run("sar-dmodk", &f, &so, &r, &res, &err) == 0);
	traffic_init(&t);
	CHECK(traffic_parse_text(&t, "h0.0 h1.0 1000\nh0.1 h1.0 3000\n", "m", &err) == 0);
	CHECK(traffic_bind(&t, &f, JOB_MATCH_DESCRIPTION, NULL, &err) == 0);
	CHECK(tput_completion(&f, &r, &t, &c) == 0);
	CHECK(c.flows == 2 && c.unrouted == 0 && c.heavy == 0 && c.events == 2);
	CHECK(NEAR(c.all_worst, 2.0) && NEAR(c.all_mean, (2.0 + 4.0 / 3) / 2));
	CHECK(NEAR(c.makespan, 4.0 / 3));
	traffic_free(&t);
	routing_free(&r);
	fabric_free(&f);
}

/* Link rates from ibnetdiscover comments, and a DDR host link slowing its flows in a shift. */
static void test_rates(void)
{
	static const char net[] =
		"Switch\t4 \"S-1\"\t\t# \"sw\" base port 0 lid 1 lmc 0\n"
		"[1]\t\"H-a\"[1]\t\t# \"a\" lid 2 4xEDR\n"
		"[2]\t\"H-b\"[1]\t\t# \"b\" lid 3 4xDDR\n"
		"[3]\t\"H-c\"[1]\t\t# \"c\" lid 4 4xEDR\n"
		"\n"
		"Ca\t1 \"H-a\"\t\t# \"a\"\n[1]\t\"S-1\"[1]\t\t# lid 2 lmc 0 \"sw\" lid 1 4xEDR\n\n"
		"Ca\t1 \"H-b\"\t\t# \"b\"\n[1]\t\"S-1\"[2]\t\t# lid 3 lmc 0 \"sw\" lid 1 4xDDR\n\n"
		"Ca\t1 \"H-c\"\t\t# \"c\"\n[1]\t\"S-1\"[3]\t\t# lid 4 lmc 0 \"sw\" lid 1 4xEDR\n";
	struct sarnue_options so;
	struct engine_result res;
	struct metrics_options o;
	struct fab_error err;
	struct tput_result t;
	struct routing r;
	struct netfile_opts no = { .op_vls = 8 };
	struct fabric f;
	char path[] = "/tmp/test_throughput_XXXXXX";
	uint32_t b;

	CHECK(fabric_rate_ibnd("4xEDR") == 1000 && fabric_rate_ibnd("4xDDR") == 160);
	CHECK(fabric_rate_ibnd("4xFDR10") == 400 && fabric_rate_ibnd("1xSDR") == 20);
	CHECK(fabric_rate_ibnd("lid") == 0 && fabric_rate_ibnd("3xEDR") == 0);
	CHECK(fabric_rate_lst(4, "25") == 1000 && fabric_rate_lst(4, "14") == 544);
	CHECK(testfab_write_file(path, net) == 0);
	fabric_init(&f);
	CHECK(fabric_load_netfile(&f, path, &no, &err) == 0);
	unlink(path);
	b = fabric_find_node_by_id(&f, "H-b");
	CHECK(b != FAB_NONE && fabric_link_rate(&f, f.nodes[b].first_port + 1) == 160);
	metrics_options_default(&o);
	options_defaults(&so);
	CHECK(routing_init(&r, &f, "sar-updn") == 0);
	CHECK(engine_run("sar-updn", &f, &so, &r, &res, &err) == 0);
	/* Shift 1 in LID order: a->b, b->c, c->a.  b's DDR link carries 16% of an EDR in and out.
	 */
	o.shifts = 1;
	CHECK(tput_run(&f, &r, "shift", &o, NULL, 0, NULL, &t, &err) == 0);
	CHECK(t.flows == 3 && NEAR(t.min, 0.16));
	/* a->b at 160 and c->a at 1000 of a's 1000, b->c at 160 of b's 160: (160+160+1000)/2160. */
	CHECK(NEAR(t.aggregate, 1320.0 / 2160));
	routing_free(&r);
	fabric_free(&f);
}

int main(void)
{
	test_two_share();
	test_slow_link();
	test_maxmin_three();
	test_demand();
	test_fat_trees();
	test_rates();
	test_completion();
	return CHECK_RESULT();
}
