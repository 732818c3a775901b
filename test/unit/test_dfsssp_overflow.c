/*
 * test_dfsssp_overflow.c - sar-dfsssp when DFSSSP's path layers need more VLs than there are:
 * whole destinations that fit keep DFSSSP's columns and Nue routes the others (on VLs of their
 * own, or with one VL around the kept routes); the layering's guess that an overflow is coming
 * and its progress; the fall-back routed beside the layering, with the tables of routing it
 * after the layering; the layering stopped early, judged to overflow, by its layers or by a
 * sample of the destinations layered first.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "check/verify.h"
#include "dfsssptest.h"
#include "engines/engines.h"
#include "testfab.h"

/*
 * Too few VLs: the 3x3x3 torus needs three DFSSSP path layers, but only two VLs are allowed.
 * Whole destinations that fit into one acyclic layer keep exactly DFSSSP's LFT columns (the
 * paths do not depend on the VLs); Nue routes the others on the second VL; all verified.
 */
/* Whether every switch forwards dlid on the same port in a and b. */
static int same_column(const struct fabric *f, const struct routing *a, const struct routing *b,
		       uint32_t dlid)
{
	uint32_t s;

	for (s = 0; s < f->nswitches; s++)
		if (routing_lft(a, s)[dlid] != routing_lft(b, s)[dlid])
			return 0;
	return 1;
}

/* The k x k x k torus (k <= 6) with hosts per switch, on vls VLs. */
static int build_torus(struct fabric *f, unsigned k, unsigned hosts, unsigned vls)
{
	unsigned links[3 * 216][2], n = 0, x, y, z;

	for (x = 0; x < k; x++)
		for (y = 0; y < k; y++)
			for (z = 0; z < k; z++) {
				unsigned id = (x * k + y) * k + z;

				links[n][0] = id, links[n++][1] = (((x + 1) % k) * k + y) * k + z;
				links[n][0] = id, links[n++][1] = (x * k + (y + 1) % k) * k + z;
				links[n][0] = id, links[n++][1] = (x * k + y) * k + (z + 1) % k;
			}
	if (testfab_build(f, k * k * k, hosts, (const unsigned(*)[2])links, n, 0))
		return -1;
	testfab_set_vls(f, vls);
	return 0;
}

/* The 3x3x3 torus, one host per switch. */
static int build_torus333(struct fabric *f)
{
	return build_torus(f, 3, 1, 8);
}

static void test_overflow_keeps_fitting(void)
{
	struct sarnue_options o;
	struct dfsssp_opts dopts = { .max_vls = 15 };
	struct dfsssp_report rep;
	struct engine_result res;
	struct fab_error err = { "" };
	struct routing r, plain;
	uint32_t dlid, kept = 0, moved = 0, same = 0;
	uint16_t src;
	struct fabric f;

	CHECK(build_torus333(&f) == 0);
	CHECK(route(&f, &dopts, &plain, &rep) == 0);
	CHECK(rep.layers_needed == 3 && !rep.layers_capped);
	/* With one VL the layering stops at the second layer: the third is never counted. */
	dopts.max_vls = 1;
	CHECK(routing_init(&r, &f, "sar-dfsssp") == 0);
	CHECK(dfsssp_route(&f, &dopts, &r, &rep, &err) == -1);
	CHECK(rep.layers_capped && rep.layers_needed == 2 && rep.overflow_dlids > 0);
	CHECK(strstr(err.msg, "needs at least 2 layers, 1 VL available") != NULL);
	routing_free(&r);
	options_defaults(&o);
	o.dfsssp_vls = 2;
	CHECK(routing_init(&r, &f, "sar-dfsssp") == 0);
	CHECK(engine_run("sar-dfsssp", &f, &o, &r, &res, &err) == 0);
	CHECK(res.verified && verify_ok(&res.verify) && r.vls_used == 2);
	CHECK(strstr(res.warning, "keep their paths on 1 VL(s)") != NULL);
	src = f.ports[f.endports[0]].base_lid;
	for (dlid = 1; dlid <= f.max_lid; dlid++) {
		int equal = same_column(&f, &r, &plain, dlid);

		if (f.lid_port[dlid] == FAB_NONE)
			continue;
		if (routing_path_sl(&r, src, (uint16_t)dlid) == 0) {
			kept++;
			same += equal;
		} else {
			moved++;
		}
	}
	CHECK(kept > 0 && moved > 0 && moved == res.fallbacks);
	CHECK(same == kept);
	routing_free(&r);
	routing_free(&plain);
	fabric_free(&f);
}

static double fact_of(const struct engine_result *res, const char *key)
{
	unsigned i;

	for (i = 0; i < res->nfacts; i++)
		if (!strcmp(res->facts[i].key, key))
			return res->facts[i].value;
	return -1;
}

/* Whether a and b forward every LID alike and give every path the same SL. */
static int same_tables(const struct fabric *f, const struct routing *a, const struct routing *b)
{
	uint32_t dlid, p;

	for (dlid = 1; dlid <= f->max_lid; dlid++) {
		if (!same_column(f, a, b, dlid))
			return 0;
		for (p = 0; p < f->nendports; p++) {
			uint16_t src = f->ports[f->endports[p]].base_lid;

			if (routing_path_sl(a, src, (uint16_t)dlid) !=
			    routing_path_sl(b, src, (uint16_t)dlid))
				return 0;
		}
	}
	return 1;
}

static void count_call(void *arg, const struct routing *r)
{
	(void)r;
	++*(unsigned *)arg;
}

/*
 * The layering tells once when an overflow looks likely: on the 3x3x3 torus with 2 VLs as soon
 * as a path leaves layer 0; on the 4-ary 3-tree with 8 VLs, whose paths fit into 3 layers, never.
 * Its progress counts the layers started.
 */
struct layering_seen {
	unsigned notes, steps;
	uint64_t done, total;
};

static void layering_progress(void *ctx, const char *phase, uint64_t done, uint64_t total)
{
	struct layering_seen *seen = ctx;

	if (strcmp(phase, "layering paths"))
		return;
	if (!total) {
		seen->notes++;
		return;
	}
	seen->steps++;
	seen->done = done;
	seen->total = total;
}

static void test_overflow_watch(void)
{
	unsigned calls = 0;
	struct dfsssp_opts dopts = { .max_vls = 2, .overflow_likely = count_call };
	struct layering_seen seen = { 0 };
	struct progress_hook hook;
	struct dfsssp_report rep;
	struct fab_error err = { "" };
	struct routing r;
	struct fabric f;

	progress_hook_init(&hook, layering_progress, &seen);
	dopts.overflow_likely_arg = &calls;
	CHECK(build_torus333(&f) == 0);
	CHECK(routing_init(&r, &f, "sar-dfsssp") == 0);
	CHECK(dfsssp_route(&f, &dopts, &r, &rep, &err) == -1 && rep.layers_capped);
	CHECK(calls == 1);
	routing_free(&r);
	fabric_free(&f);

	calls = 0;
	dopts.max_vls = 8;
	dopts.progress = &hook;
	CHECK(testfab_4ary_3tree(&f) == 0);
	testfab_set_vls(&f, 8);
	CHECK(routing_init(&r, &f, "sar-dfsssp") == 0);
	CHECK(dfsssp_route(&f, &dopts, &r, &rep, &err) == 0);
	/* The third layer was judged, and started with few paths. */
	CHECK(rep.layers_needed == 3 && calls == 0);
	/* Progress: the phase began, then layers 1 and 2 of at most 8 started. */
	CHECK(seen.notes == 1 && seen.steps == 2 && seen.done == 2 && seen.total == 8);
	routing_free(&r);
	fabric_free(&f);
}

/*
 * The fall-back of an overflowing layering is routed beside it, on a thread, where there is a
 * second CPU: the tables are those of routing it afterwards, on one CPU.  When the layering fits
 * (3 VLs for the 3x3x3 torus), the work started beside it is dropped and DFSSSP's own tables
 * are the result.
 */
static void test_overflow_ahead(void)
{
	struct dfsssp_opts dopts = { .max_vls = 15 };
	struct sarnue_options o;
	struct dfsssp_report rep;
	struct engine_result res;
	struct fab_error err = { "" };
	struct routing beside, after, plain;
	cpu_set_t all, one;
	uint32_t dlid, same = 0;
	struct fabric f;
	int two_cpus;

	CHECK(sched_getaffinity(0, sizeof(all), &all) == 0);
	two_cpus = CPU_COUNT(&all) >= 2;
	CHECK(build_torus333(&f) == 0);
	options_defaults(&o);
	o.dfsssp_vls = 2;
	CHECK(routing_init(&beside, &f, "sar-dfsssp") == 0);
	CHECK(engine_run("sar-dfsssp", &f, &o, &beside, &res, &err) == 0);
	CHECK(res.verified && verify_ok(&res.verify));
	CHECK(fact_of(&res, "nue_beside_layering") == two_cpus);
	CHECK(fact_of(&res, "destinations_on_nue") > 0);

	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	CHECK(sched_setaffinity(0, sizeof(one), &one) == 0);
	CHECK(routing_init(&after, &f, "sar-dfsssp") == 0);
	CHECK(engine_run("sar-dfsssp", &f, &o, &after, &res, &err) == 0);
	CHECK(sched_setaffinity(0, sizeof(all), &all) == 0);
	CHECK(fact_of(&res, "nue_beside_layering") == 0);
	CHECK(same_tables(&f, &beside, &after));
	printf("# overflow routed %s the layering: same tables as after it\n",
	       two_cpus ? "beside" : "(one CPU) after");

	CHECK(route(&f, &dopts, &plain, &rep) == 0 && rep.layers_needed == 3);
	o.dfsssp_vls = 3;
	routing_free(&beside);
	routing_free(&after);
	CHECK(routing_init(&beside, &f, "sar-dfsssp") == 0);
	CHECK(engine_run("sar-dfsssp", &f, &o, &beside, &res, &err) == 0);
	CHECK(res.verified && verify_ok(&res.verify) && !res.warning[0]);
	CHECK(fact_of(&res, "destinations_on_nue") == -1 && fact_of(&res, "layers_needed") == 3);
	CHECK(sched_setaffinity(0, sizeof(one), &one) == 0);
	CHECK(routing_init(&after, &f, "sar-dfsssp") == 0);
	CHECK(engine_run("sar-dfsssp", &f, &o, &after, &res, &err) == 0);
	CHECK(sched_setaffinity(0, sizeof(all), &all) == 0);
	CHECK(same_tables(&f, &beside, &after));
	for (dlid = 1; dlid <= f.max_lid; dlid++)
		same += same_column(&f, &beside, &plain, dlid);
	CHECK(same == f.max_lid);
	routing_free(&beside);
	routing_free(&after);
	routing_free(&plain);
	fabric_free(&f);
}

/*
 * The layering judged to overflow (dfsssp_judge_overflow): on the 6x6x6 torus with 8 VLs each
 * layer keeps about three quarters of the one before's paths, and the layering stops after two
 * to four; the tables are those of layering until the last VL has a cycle, as the routes of an
 * overflow do not depend on the layering.  The 5x5x5 torus fits 15 layers, though its layers
 * keep 0.61 to 0.7 of the paths before them up to the tenth; the judgement must not stop it,
 * which the estimate of the layers needed from how many paths are still moving prevents.
 */
static void test_overflow_judged(void)
{
	struct dfsssp_opts dopts = { .max_vls = 8 };
	struct dfsssp_report rep;
	struct sarnue_options o;
	struct engine_result res;
	struct fab_error err = { "" };
	struct routing judged, layered;
	struct fabric f;

	CHECK(build_torus(&f, 6, 2, 8) == 0);
	options_defaults(&o);
	CHECK(o.dfsssp_judge_overflow == 1);
	CHECK(routing_init(&judged, &f, "sar-dfsssp") == 0);
	CHECK(engine_run("sar-dfsssp", &f, &o, &judged, &res, &err) == 0);
	CHECK(res.verified && verify_ok(&res.verify));
	CHECK(fact_of(&res, "dfsssp_layers_judged") >= 2 &&
	      fact_of(&res, "dfsssp_layers_judged") <= 6);
	CHECK(strstr(res.warning, "layering was judged after") != NULL);
	CHECK(strstr(res.warning, "layers to need more than 8 but 8 VLs are available") != NULL);
	printf("# 6x6x6 torus, 8 VLs: judged after %.0f layers\n",
	       fact_of(&res, "dfsssp_layers_judged"));
	o.dfsssp_judge_overflow = 0;
	CHECK(routing_init(&layered, &f, "sar-dfsssp") == 0);
	CHECK(engine_run("sar-dfsssp", &f, &o, &layered, &res, &err) == 0);
	CHECK(fact_of(&res, "dfsssp_layers_judged") == 0);
	CHECK(fact_of(&res, "dfsssp_layers_needed") == 9 &&
	      fact_of(&res, "destinations_on_nue") > 0);
	CHECK(same_tables(&f, &judged, &layered));
	routing_free(&judged);
	routing_free(&layered);
	/* DFSSSP alone says what it judged, and counts no destination beyond the VLs. */
	dopts.judge_overflow = 1;
	CHECK(routing_init(&judged, &f, "sar-dfsssp") == 0);
	CHECK(dfsssp_route(&f, &dopts, &judged, &rep, &err) == -1);
	CHECK(rep.layers_judged >= 2 && rep.layers_capped && rep.overflow_dlids == 0);
	CHECK(strstr(err.msg, "was judged after ") != NULL);
	CHECK(strstr(err.msg, " layers to need more than 8, 8 VLs available") != NULL);
	routing_free(&judged);
	fabric_free(&f);

	CHECK(build_torus(&f, 5, 2, 15) == 0);
	o.dfsssp_judge_overflow = 1;
	CHECK(routing_init(&judged, &f, "sar-dfsssp") == 0);
	CHECK(engine_run("sar-dfsssp", &f, &o, &judged, &res, &err) == 0);
	CHECK(res.verified && verify_ok(&res.verify) && !res.warning[0]);
	CHECK(fact_of(&res, "layers_needed") == 15 && fact_of(&res, "destinations_on_nue") == -1);
	routing_free(&judged);
	fabric_free(&f);
}

/*
 * The layering of a sample first (layers_watch.probe_from, here from one switch on): on the
 * 6x6x6 torus with 8 VLs the paths towards one LID of every second switch, 108 destinations,
 * overflow on their own, and the layering of all paths is not started; the error names the
 * sample and counts no destination beyond the VLs.  On the 4-ary 3-tree the sample fits, and the
 * layering of all paths that follows gives every path the SL it has without the sample.
 */
static void test_overflow_probed(void)
{
	struct dfsssp_opts dopts = { .max_vls = 8, .judge_overflow = 1, .probe_from = 1 };
	struct dfsssp_report rep;
	struct fab_error err = { "" };
	struct routing probed, plain;
	struct fabric f;

	CHECK(build_torus(&f, 6, 2, 8) == 0);
	CHECK(routing_init(&probed, &f, "sar-dfsssp") == 0);
	CHECK(dfsssp_route(&f, &dopts, &probed, &rep, &err) == -1);
	CHECK(rep.layers_probed == 108 && rep.layers_judged == 0);
	CHECK(rep.layers_capped && rep.layers_needed == 9 && rep.overflow_dlids == 0);
	CHECK(strstr(err.msg, "was judged by a sample of 108 destination LIDs to need more than "
			      "8, 8 VLs available") != NULL);
	printf("# 6x6x6 torus, 8 VLs: %s\n", err.msg);
	routing_free(&probed);
	/* Below probe_from (by default 1,000 switches) the layers alone judge. */
	dopts.probe_from = 0;
	CHECK(routing_init(&probed, &f, "sar-dfsssp") == 0);
	CHECK(dfsssp_route(&f, &dopts, &probed, &rep, &err) == -1);
	CHECK(rep.layers_probed == 0 && rep.layers_judged >= 2);
	routing_free(&probed);
	fabric_free(&f);

	dopts.probe_from = 1;
	CHECK(testfab_4ary_3tree(&f) == 0);
	testfab_set_vls(&f, 8);
	CHECK(routing_init(&probed, &f, "sar-dfsssp") == 0);
	CHECK(dfsssp_route(&f, &dopts, &probed, &rep, &err) == 0);
	CHECK(rep.layers_probed == 0 && rep.layers_needed == 3);
	dopts.probe_from = 0;
	CHECK(routing_init(&plain, &f, "sar-dfsssp") == 0);
	CHECK(dfsssp_route(&f, &dopts, &plain, &rep, &err) == 0);
	CHECK(same_tables(&f, &probed, &plain));
	routing_free(&probed);
	routing_free(&plain);
	fabric_free(&f);
}

/*
 * One VL.  On a 4-ary 3-tree every terminal's paths fit whole into it: the destinations that fit
 * keep exactly DFSSSP's LFT columns, and Nue routes the other switch LIDs on the same VL around
 * them; all on SL 0, verified.  On the 3x3x3 torus some terminal's paths do not fit, and Nue
 * routes everything.  On a line of switches, where no route can close a cycle, every destination
 * keeps DFSSSP's paths and Nue is not asked.
 */
static void test_one_vl_shares_with_nue(void)
{
	unsigned line[2][2] = { { 0, 1 }, { 1, 2 } }, hosts[3] = { 2, 2, 2 };
	struct dfsssp_opts dopts = { .max_vls = 15 };
	struct sarnue_options o;
	struct dfsssp_report rep;
	struct engine_result res;
	struct fab_error err = { "" };
	struct routing r, plain;
	uint32_t dlid, lids = 0, same = 0, terminals_same = 0;
	double fitted;
	struct fabric f;

	CHECK(testfab_4ary_3tree(&f) == 0);
	testfab_set_vls(&f, 8);
	CHECK(route(&f, &dopts, &plain, &rep) == 0);
	options_defaults(&o);
	o.dfsssp_vls = 1;
	CHECK(routing_init(&r, &f, "sar-dfsssp") == 0);
	CHECK(engine_run("sar-dfsssp", &f, &o, &r, &res, &err) == 0);
	CHECK(res.verified && verify_ok(&res.verify) && r.vls_used == 1);
	CHECK(r.sl_mode == ROUTING_SL_UNIFORM && r.sl_uniform == 0);
	CHECK(strstr(res.warning, "switches' own LIDs do not all fit into 1 VL") != NULL);
	CHECK(strstr(res.warning, "routed with Nue on the same VL around them") != NULL);
	fitted = fact_of(&res, "destinations_fitted");
	for (dlid = 1; dlid <= f.max_lid; dlid++) {
		int equal = same_column(&f, &r, &plain, dlid);

		if (f.lid_port[dlid] == FAB_NONE)
			continue;
		lids++;
		same += equal;
		terminals_same += equal && !fabric_is_switch(&f, f.ports[f.lid_port[dlid]].node);
	}
	printf("# one VL, 4-ary 3-tree: %.0f of %u destinations keep DFSSSP's paths\n", fitted,
	       lids);
	CHECK(fitted > 0 && fitted + res.fallbacks == lids && res.fallbacks > 0);
	CHECK(fact_of(&res, "destinations_on_nue") == res.fallbacks);
	/* Every terminal kept; Nue may happen to choose a kept column's routes, never change one.
	 */
	CHECK(terminals_same == f.nendports - f.nswitches);
	CHECK(same >= fitted && same < lids);
	routing_free(&r);
	routing_free(&plain);
	fabric_free(&f);

	CHECK(build_torus333(&f) == 0);
	CHECK(routing_init(&r, &f, "sar-dfsssp") == 0);
	CHECK(engine_run("sar-dfsssp", &f, &o, &r, &res, &err) == 0);
	CHECK(res.verified && verify_ok(&res.verify) && r.vls_used == 1);
	CHECK(strstr(res.warning,
		     "needs at least 2 layers but 1 VL is available; routed with Nue") != NULL);
	CHECK(res.fallbacks == f.nendports);
	routing_free(&r);
	fabric_free(&f);

	CHECK(build(&f, 3, hosts, (const unsigned(*)[2])line, 2, 0) == 0);
	CHECK(routing_init(&r, &f, "sar-dfsssp") == 0);
	CHECK(engine_run("sar-dfsssp", &f, &o, &r, &res, &err) == 0);
	CHECK(res.verified && verify_ok(&res.verify) && r.vls_used == 1);
	CHECK(res.fallbacks == 0 && strstr(res.warning, "fit") == NULL);
	CHECK(strstr(res.summary, "1 of 1 VLs used, 1 layer(s) needed") != NULL);
	routing_free(&r);
	fabric_free(&f);
}

int main(void)
{
	test_overflow_keeps_fitting();
	test_one_vl_shares_with_nue();
	test_overflow_watch();
	test_overflow_ahead();
	test_overflow_judged();
	test_overflow_probed();
	return CHECK_RESULT();
}
