/*
 * test_dfsssp.c - sar-dfsssp: virtual layers on a ring and a torus (counted exactly, checked by
 * the verifier), balancing over parallel links and over the LIDs of one port, Algorithm 5.1
 * (intra-job weights lower the effective EFI, the job sort and the weight resets change what
 * they should), the improvement step after the job phase (figure 5.2 reaches the bound 54
 * where the greedy pass stops at 60), the VL-overflow error, the plugin's job-map context, and
 * the per-(source switch, DLID) SL mode through routing.c, the verifier and the path-SL dump,
 * whose bytes are those of one fprintf per line; the balance of a k-ary n-tree (the cut bound);
 * incremental reroutes.  test_dfsssp_overflow.c tests the engine's answer to too few VLs.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "engines/dfsssp/dfsssp.h"
#include "engines/engines.h"
#include "fabric/loaders.h"
#include "check/metrics.h"
#include "testfab.h"
#include "dfsssptest.h"
#include "check/verify.h"

/* A side x side torus (side <= 8) with hosts hosts per switch. */
static int build_torus(struct fabric *f, unsigned side, unsigned hosts, unsigned lmc)
{
	unsigned links[2 * 64][2], per_switch[64], i;

	for (i = 0; i < side * side; i++)
		per_switch[i] = hosts;
	return build(f, side * side, per_switch, (const unsigned(*)[2])links,
		     testfab_torus(links, side, side, 1, -1), lmc);
}

static uint16_t host_lid(const struct fabric *f, const char *name)
{
	uint32_t n = fabric_find_node_by_id(f, name);

	return n == FAB_NONE ? 0 : f->ports[f->nodes[n].first_port + 1].base_lid;
}

static int verified(const struct fabric *f, const struct routing *r)
{
	struct verify_report v;

	if (verify_routing(f, r, &v))
		return 0;
	if (!verify_ok(&v))
		fprintf(stderr, "verify: unreachable %llu, loops %llu, credit loop %s\n",
			(unsigned long long)v.unreachable, (unsigned long long)v.loops, v.cycle);
	return verify_ok(&v) && v.pairs > 0;
}

/* A destination whose SL differs between source switches: per-pair SLs are really needed. */
static int sl_differs_by_source(const struct fabric *f, const struct routing *r)
{
	uint32_t dlid, i, j;

	for (dlid = 1; dlid <= f->max_lid; dlid++)
		for (i = 0; i < f->nendports; i++)
			for (j = 0; j < f->nendports; j++)
				if (routing_path_sl(r, f->ports[f->endports[i]].base_lid, dlid) !=
				    routing_path_sl(r, f->ports[f->endports[j]].base_lid, dlid))
					return 1;
	return 0;
}

static void test_ring_two_layers(void)
{
	unsigned links[5][2], hosts[5] = { 1, 1, 1, 1, 1 };
	struct dfsssp_opts o = { .max_vls = 2 };
	struct dfsssp_report rep;
	struct verify_report v;
	struct fab_error err = { "" };
	struct routing r;
	struct fabric f;
	uint32_t s, dlid;

	CHECK(build(&f, 5, hosts, (const unsigned(*)[2])links, testfab_ring(links, 5), 0) == 0);
	CHECK(route(&f, &o, &r, &rep) == 0);
	CHECK(rep.layers_needed == 2);
	CHECK(rep.vls_used == 2);
	CHECK(r.sl_mode == ROUTING_SL_PER_SWITCH_DLID && routing_sl_per_source(&r));
	CHECK(verified(&f, &r));
	CHECK(verify_routing(&f, &r, &v) == 0 && verify_count_bits(v.sls_used) == 2);
	CHECK(sl_differs_by_source(&f, &r));
	/* Every path on SL 0 puts the ring's cycle back: the verifier must see it. */
	for (s = 0; s < f.nswitches; s++)
		for (dlid = 1; dlid <= f.max_lid; dlid++)
			routing_set_pair_sl(&r, s, dlid, 0);
	CHECK(verify_routing(&f, &r, &v) == 0 && v.credit_loop_vls == 1);
	routing_free(&r);

	/* One VL is not enough: the error says so, and the layering stops at the second layer. */
	o.max_vls = 1;
	CHECK(routing_init(&r, &f, "sar-dfsssp") == 0);
	CHECK(dfsssp_route(&f, &o, &r, &rep, &err) == -1);
	CHECK(strstr(err.msg, "needs at least 2 layers, 1 VL available") != NULL);
	CHECK(rep.layers_capped && rep.layers_needed == 2);
	CHECK(rep.overflow_dlids > 0);
	routing_free(&r);
	fabric_free(&f);
}

/*
 * The layering moves the dependency counts of a dependency's paths a batch of LIDs at a time,
 * summed up each destination's tree (move_batch in vlassign.c).  With SARNUE_DEBUG_CHECKS=1 it
 * counts every layer afresh at the end and stops the program if the sums differ.  A 6x6 torus
 * with 3 hosts per switch: 144 LIDs, so batches span several, and 3 or more layers.
 */
static void test_layer_counts_checked(void)
{
	struct dfsssp_opts o = { .max_vls = 8 };
	struct dfsssp_report rep;
	struct routing r;
	struct fabric f;

	CHECK(setenv("SARNUE_DEBUG_CHECKS", "1", 1) == 0);
	CHECK(build_torus(&f, 6, 3, 0) == 0);
	CHECK(route(&f, &o, &r, &rep) == 0);
	CHECK(rep.layers_needed >= 3 && rep.moved > 0);
	CHECK(verified(&f, &r));
	routing_free(&r);
	fabric_free(&f);
	CHECK(unsetenv("SARNUE_DEBUG_CHECKS") == 0);
}

static void test_torus(void)
{
	struct dfsssp_opts o = { .max_vls = 8 };
	struct dfsssp_report rep;
	struct routing r;
	struct fabric f;

	CHECK(build_torus(&f, 4, 2, 1) == 0);
	CHECK(route(&f, &o, &r, &rep) == 0);
	CHECK(rep.layers_needed >= 2 && rep.layers_needed <= 8);
	CHECK(rep.vls_used == 8);
	CHECK(rep.lids_routed == 16 * 2 * 2 + 16);
	CHECK(verified(&f, &r));
	routing_free(&r);
	fabric_free(&f);
}

/* Two switches joined by four parallel links: the LIDs behind switch 1 spread 3/2/2/2. */
static void test_parallel_links(void)
{
	const unsigned links[4][2] = { { 0, 1 }, { 0, 1 }, { 0, 1 }, { 0, 1 } };
	unsigned hosts[2] = { 8, 8 }, count[33] = { 0 }, p, used = 0, lo = ~0u, hi = 0;
	struct dfsssp_opts o = { .max_vls = 1 };
	struct dfsssp_report rep;
	struct routing r;
	struct fabric f;
	uint32_t lid;

	CHECK(build(&f, 2, hosts, links, 4, 0) == 0);
	CHECK(route(&f, &o, &r, &rep) == 0);
	CHECK(verified(&f, &r));
	for (lid = 1; lid <= f.max_lid; lid++)
		if (routing_lid_switch(&f, lid) == 1)
			count[routing_lft(&r, 0)[lid]]++;
	for (p = 9; p <= 12; p++) {
		used += count[p] > 0;
		lo = count[p] < lo ? count[p] : lo;
		hi = count[p] > hi ? count[p] : hi;
	}
	CHECK(used == 4);
	CHECK(hi - lo <= 1);
	CHECK(count[9] + count[10] + count[11] + count[12] == 9);
	routing_free(&r);
	fabric_free(&f);
}

/* LMC 1 over two parallel links: the two LIDs of a port leave switch 0 on different links. */
static void test_lmc_spreading(void)
{
	const unsigned links[2][2] = { { 0, 1 }, { 0, 1 } };
	unsigned hosts[2] = { 1, 1 };
	struct dfsssp_opts o = { .max_vls = 1 };
	struct dfsssp_report rep;
	struct routing r;
	struct fabric f;
	uint16_t lid;

	CHECK(build(&f, 2, hosts, links, 2, 1) == 0);
	CHECK(route(&f, &o, &r, &rep) == 0);
	CHECK(verified(&f, &r));
	lid = host_lid(&f, "h1.0");
	CHECK(lid && f.lid_port[lid + 1] == f.lid_port[lid]);
	CHECK(routing_lft(&r, 0)[lid] != routing_lft(&r, 0)[lid + 1]);
	CHECK(routing_lft(&r, 0)[lid] >= 2 && routing_lft(&r, 0)[lid + 1] >= 2);
	/* Switch LIDs are routed too: delivered to port 0, reached from the other switch. */
	lid = f.ports[f.nodes[f.switches[1]].first_port].base_lid;
	CHECK(routing_lft(&r, 1)[lid] == 0 && routing_lft(&r, 0)[lid] >= 2);
	routing_free(&r);
	fabric_free(&f);
}

/* Max effective EFI: intra-job routes per switch-to-switch channel, counted by walking LFTs. */
static unsigned max_effective_efi(const struct fabric *f, const struct routing *r,
				  const struct job_map *jm)
{
	unsigned *efi = calloc(f->nports, sizeof(*efi)), best = 0;
	uint32_t i, j, k;

	for (i = 0; i < f->nendports; i++) {
		const struct fab_port *x = &f->ports[f->endports[i]];

		for (j = 0; j < f->nendports; j++) {
			const struct fab_port *y = &f->ports[f->endports[j]];

			if (i == j || !job_map_share_job(jm, x->node, y->node))
				continue;
			for (k = 0; k < (1u << y->lmc); k++) {
				uint32_t dlid = y->base_lid + k,
					 s = routing_lid_switch(f, x->base_lid);
				uint32_t t = routing_lid_switch(f, dlid), hops = 0;

				while (s != t && hops++ < 64) {
					uint32_t p = f->nodes[f->switches[s]].first_port +
						     routing_lft(r, s)[dlid];

					efi[p]++;
					s = f->nodes[f->ports[f->ports[p].remote].node].sw;
				}
			}
		}
	}
	for (i = 0; i < f->nports; i++)
		best = efi[i] > best ? efi[i] : best;
	free(efi);
	return best;
}

/* 4 leaves (switches 0-3, 4 hosts each) under 2 spines (4, 5). */
static int build_fat_tree(struct fabric *f)
{
	const unsigned links[8][2] = { { 0, 4 }, { 0, 5 }, { 1, 4 }, { 1, 5 },
				       { 2, 4 }, { 2, 5 }, { 3, 4 }, { 3, 5 } };
	const unsigned hosts[6] = { 4, 4, 4, 4, 0, 0 };

	return build(f, 6, hosts, links, 8, 0);
}

static int bind_jobs(struct job_map *jm, const struct fabric *f, const char *text)
{
	struct fab_error err;

	job_map_init(jm);
	return job_map_parse_text(jm, text, "jobs", &err) ||
	       job_map_bind(jm, f, JOB_MATCH_FIRST_WORD, NULL, &err);
}

static void test_alg51_effective_efi(void)
{
	struct dfsssp_opts plain = { .max_vls = 8 }, sar = { .max_vls = 8 };
	struct dfsssp_report rep;
	struct routing r0, r1;
	struct job_map jm;
	struct fabric f;
	char text[256], a[8] = "", b[8] = "";
	unsigned h, without, with;

	CHECK(build_fat_tree(&f) == 0);
	CHECK(route(&f, &plain, &r0, &rep) == 0);

	/* Several jobs: the job-aware routing is never worse for intra-job traffic. */
	CHECK(bind_jobs(&jm, &f,
			"h0.0 1\nh0.1 1\nh0.2 1\nh1.0 1\nh1.1 1\nh2.0 1\n"
			"h2.1 2\nh2.2 2\nh3.0 2\nh3.1 2\nh3.3 2\nh0.3 3\nh3.2 3\n") == 0);
	sar.jobs = &jm;
	CHECK(route(&f, &sar, &r1, &rep) == 0);
	CHECK(verified(&f, &r1));
	CHECK(rep.job_lids == 13);
	without = max_effective_efi(&f, &r0, &jm);
	with = max_effective_efi(&f, &r1, &jm);
	CHECK(with <= without);
	routing_free(&r1);
	job_map_free(&jm);

	/*
	 * Two hosts of leaf 1 that plain DFSSSP reaches from leaf 0 over the same uplink (four
	 * hosts, two uplinks: such a pair exists), in one job with two hosts of leaf 0: plain
	 * routing puts all four intra-job routes on that uplink, Alg 5.1 must split them 2/2.
	 */
	for (h = 0; h < 4 && !b[0]; h++) {
		unsigned g;
		char n1[8], n2[8];

		for (g = h + 1; g < 4 && !b[0]; g++) {
			snprintf(n1, sizeof(n1), "h1.%u", h);
			snprintf(n2, sizeof(n2), "h1.%u", g);
			if (routing_lft(&r0, 0)[host_lid(&f, n1)] ==
			    routing_lft(&r0, 0)[host_lid(&f, n2)]) {
				strcpy(a, n1);
				strcpy(b, n2);
			}
		}
	}
	CHECK(b[0] != '\0');
	snprintf(text, sizeof(text), "h0.0 7\nh0.1 7\n%s 7\n%s 7\n", a, b);
	CHECK(bind_jobs(&jm, &f, text) == 0);
	sar.jobs = &jm;
	CHECK(route(&f, &sar, &r1, &rep) == 0);
	CHECK(verified(&f, &r1));
	without = max_effective_efi(&f, &r0, &jm);
	with = max_effective_efi(&f, &r1, &jm);
	CHECK(without == 4);
	CHECK(with == 2);
	routing_free(&r1);
	job_map_free(&jm);
	routing_free(&r0);
	fabric_free(&f);
}

/*
 * Switch 1 (four hosts) comes first in fabric order, and its first host runs the small job:
 * sorted by job size, the big job's h1.1 is routed first and gets switch 0's first link; in
 * fabric order the small job's h1.0 takes it and h1.1 gets the second.
 */
static void test_job_sort(void)
{
	const unsigned links[2][2] = { { 0, 1 }, { 0, 1 } };
	unsigned hosts[2] = { 2, 4 };
	struct dfsssp_opts o = { .max_vls = 1 };
	struct dfsssp_report rep;
	struct routing r;
	struct job_map jm;
	struct fabric f;
	uint16_t lid;

	CHECK(build(&f, 2, hosts, links, 2, 0) == 0);
	CHECK(bind_jobs(&jm, &f,
			"h0.1 small\nh1.0 small\nh0.0 big\nh1.1 big\nh1.2 big\nh1.3 big\n") == 0);
	o.jobs = &jm;
	lid = host_lid(&f, "h1.1");
	CHECK(route(&f, &o, &r, &rep) == 0);
	CHECK(routing_lft(&r, 0)[lid] == 3);
	routing_free(&r);
	o.skip_job_sort = 1;
	CHECK(route(&f, &o, &r, &rep) == 0);
	CHECK(routing_lft(&r, 0)[host_lid(&f, "h1.0")] == 3);
	CHECK(routing_lft(&r, 0)[lid] == 4);
	routing_free(&r);
	job_map_free(&jm);
	fabric_free(&f);
}

/*
 * The job phase loads switch 0's first link (h0.x -> h1.0); after the reset the first other
 * destination behind switch 1 (h1.1) takes the first link again, without it the second.
 */
static void test_weight_reset(void)
{
	const unsigned links[2][2] = { { 0, 1 }, { 0, 1 } };
	unsigned hosts[2] = { 3, 2 };
	struct dfsssp_opts o = { .max_vls = 1 };
	struct dfsssp_report rep;
	struct routing r;
	struct job_map jm;
	struct fabric f;
	uint16_t lid;

	CHECK(build(&f, 2, hosts, links, 2, 0) == 0);
	CHECK(bind_jobs(&jm, &f, "h0.0 j\nh0.1 j\nh1.0 j\n") == 0);
	o.jobs = &jm;
	lid = host_lid(&f, "h1.1");
	CHECK(route(&f, &o, &r, &rep) == 0);
	CHECK(routing_lft(&r, 0)[host_lid(&f, "h1.0")] == 4);
	CHECK(routing_lft(&r, 0)[lid] == 4);
	routing_free(&r);
	o.skip_weight_reset = 1;
	CHECK(route(&f, &o, &r, &rep) == 0);
	CHECK(routing_lft(&r, 0)[lid] == 5);
	routing_free(&r);
	job_map_free(&jm);
	fabric_free(&f);
}

/*
 * Alg 5.1 line 9: in the job phase a path adds weight only when source and destination share a
 * job.  Switch 0 (four hosts) reaches switch 1 over two parallel links, ports 5 and 6.  h1.0
 * (jobs Y and X: four sources on switch 0) takes port 5, h1.1 (job X: one source, h0.3) port 6;
 * so h1.2 (job Z) finds port 5 at weight 4 and port 6 at weight 1 and takes port 6.  Counting
 * every source would load both ports equally and h1.2 would take port 5.
 */
static void test_intra_job_weights(void)
{
	const unsigned links[2][2] = { { 0, 1 }, { 0, 1 } };
	unsigned hosts[2] = { 4, 3 };
	struct dfsssp_opts o = { .max_vls = 1 };
	struct dfsssp_report rep;
	struct routing r;
	struct job_map jm;
	struct fabric f;

	CHECK(build(&f, 2, hosts, links, 2, 0) == 0);
	CHECK(bind_jobs(&jm, &f,
			"h1.0 Y\nh0.0 Y\nh0.1 Y\nh0.2 Y\n"
			"h1.1 X\nh0.3 X\nh1.0 X\n"
			"h1.2 Z\nh0.0 Z\n") == 0);
	o.jobs = &jm;
	CHECK(route(&f, &o, &r, &rep) == 0);
	CHECK(routing_lft(&r, 0)[host_lid(&f, "h1.0")] == 5);
	CHECK(routing_lft(&r, 0)[host_lid(&f, "h1.1")] == 6);
	CHECK(routing_lft(&r, 0)[host_lid(&f, "h1.2")] == 6);
	CHECK(verified(&f, &r));
	routing_free(&r);
	job_map_free(&jm);
	fabric_free(&f);
}

/*
 * The thesis's figure 5.2 fabric: leaves 0-9 with 18 hosts each, spines 10-18, two links from
 * every leaf to every spine; three jobs of 60 hosts placed interleaved (hosts numbered from 1
 * leaf by leaf: job 1 = 1-30 and 91-120, job 2 = 31-60 and 151-180, job 3 = the rest).
 */
static int build_fig52(struct fabric *f, struct job_map *jm, unsigned lmc)
{
	static unsigned links[180][2];
	unsigned hosts[19] = { 0 }, i, n = 0, h;
	char *text = malloc(180 * 16), *p = text;
	int rc;

	for (i = 0; i < 10; i++) {
		hosts[i] = 18;
		for (h = 0; h < 18; h++, n++) {
			links[n][0] = i;
			links[n][1] = 10 + h / 2;
		}
	}
	if (!text || build(f, 19, hosts, links, 180, lmc))
		return -1;
	for (h = 1; h <= 180; h++)
		p += sprintf(p, "h%u.%u %u\n", (h - 1) / 18, (h - 1) % 18,
			     h <= 30 || (h >= 91 && h <= 120) ? 1
			     : h <= 60 || h >= 151	      ? 2
							      : 3);
	rc = bind_jobs(jm, f, text);
	free(text);
	return rc;
}

/* Every route as short as the fabric allows. */
static int minimal(const struct fabric *f, const struct routing *r)
{
	struct metrics_options mo;
	struct metrics_efi e;
	int ok;

	metrics_options_default(&mo);
	if (metrics_efi(f, r, &mo, &e))
		return 0;
	ok = e.nonminimal == 0 && e.unrouted == 0 && e.routes > 0;
	metrics_efi_free(&e);
	return ok;
}

/*
 * Figure 5.2: the single greedy pass of Alg 5.1 ends at a maximum effective EFI of 60 (as
 * OpenSM's dfsssp, ftree, updn and minhop).  No destination-based routing can go below 54
 * (a leaf of 18 job-1 hosts sends to 42 remote job-1 hosts over 18 up-links), and the
 * improvement step after the job phase reaches exactly that, with minimal routes only.
 */
static void test_improve_fig52(void)
{
	struct dfsssp_opts o = { .max_vls = 8 };
	struct dfsssp_report rep;
	struct routing r;
	struct job_map jm;
	struct fabric f;
	unsigned greedy, improved;

	CHECK(build_fig52(&f, &jm, 0) == 0);
	o.jobs = &jm;
	o.skip_improve = 1;
	CHECK(route(&f, &o, &r, &rep) == 0);
	greedy = max_effective_efi(&f, &r, &jm);
	CHECK(greedy > 54);
	CHECK(rep.improve_moves == 0);
	routing_free(&r);
	o.skip_improve = 0;
	CHECK(route(&f, &o, &r, &rep) == 0);
	improved = max_effective_efi(&f, &r, &jm);
	fprintf(stderr, "# figure 5.2: greedy %u, improved %u (%llu moves)\n", greedy, improved,
		(unsigned long long)rep.improve_moves);
	CHECK(improved == 54);
	CHECK(rep.improve_moves > 0 && !rep.improve_stopped);
	CHECK(minimal(&f, &r));
	CHECK(verified(&f, &r));
	routing_free(&r);
	job_map_free(&jm);
	fabric_free(&f);

	/* With LMC 1 the step moves the routes of every LID of a port, still minimal. */
	CHECK(build_fig52(&f, &jm, 1) == 0);
	o.jobs = &jm;
	CHECK(route(&f, &o, &r, &rep) == 0);
	CHECK(rep.job_lids == 360 && rep.improve_moves > 0);
	CHECK(max_effective_efi(&f, &r, &jm) <= 2 * 60);
	CHECK(minimal(&f, &r));
	CHECK(verified(&f, &r));
	routing_free(&r);
	job_map_free(&jm);
	fabric_free(&f);
}

static int overwrite(const char *path, const char *text)
{
	FILE *out = fopen(path, "w");

	if (!out)
		return -1;
	fputs(text, out);
	return fclose(out);
}

/*
 * storage_guids: node and port GUIDs mark their nodes, comments and blank lines are skipped,
 * a malformed line is named by file and line, a missing file by the option.
 */
static void test_storage_guid_file(void)
{
	struct fab_error err = { "" };
	char path[] = "/tmp/sarnue-guids-XXXXXX", text[256];
	uint32_t a, b, count = 0;
	struct fabric f;
	uint8_t *flags;

	CHECK(build_fat_tree(&f) == 0);
	a = fabric_find_node_by_id(&f, "h0.0");
	b = fabric_find_node_by_id(&f, "h1.1");
	CHECK(a != FAB_NONE && b != FAB_NONE);
	flags = calloc(f.nnodes, 1);
	CHECK(flags != NULL);
	if (a == FAB_NONE || b == FAB_NONE || !flags)
		goto out;
	snprintf(text, sizeof(text), "# storage\n\n  0x%016llx\n%llu \r\n",
		 (unsigned long long)f.nodes[a].guid,
		 (unsigned long long)f.ports[f.nodes[b].first_port + 1].guid);
	CHECK(testfab_write_file(path, text) == 0);
	CHECK(dfsssp_mark_storage(&f, NULL, path, flags, &count, NULL, &err) == 0);
	CHECK(count == 2 && flags[a] && flags[b]);

	CHECK(overwrite(path, "0x1\n# two\nnot-a-guid\n") == 0);
	CHECK(dfsssp_mark_storage(&f, NULL, path, flags, &count, NULL, &err) == -1);
	CHECK(strstr(err.msg, path) && strstr(err.msg, ":3: expected one GUID per line"));
	CHECK(overwrite(path, "-1\n") == 0); /* strtoull made it 0xffffffffffffffff */
	CHECK(dfsssp_mark_storage(&f, NULL, path, flags, &count, NULL, &err) == -1);
	CHECK(strstr(err.msg, ":1: expected one GUID per line") != NULL);
	unlink(path);
	CHECK(dfsssp_mark_storage(&f, NULL, path, flags, &count, NULL, &err) == -1);
	CHECK(!strncmp(err.msg, "storage_guids ", 14) && strstr(err.msg, path));
out:
	free(flags);
	fabric_free(&f);
}

/*
 * A storage option that marks nothing is a warning naming it, once per routing: a pattern no
 * CA matches, a GUID file with none of the fabric's GUIDs, or with none at all.  Silently,
 * the routing went on as if the option were not set.
 */
static void test_storage_unmatched(void)
{
	struct sarnue_options o;
	struct engine_result res;
	struct fab_error err = { "" };
	char path[] = "/tmp/sarnue-guids-XXXXXX";
	struct routing r;
	struct fabric f;

	CHECK(build_fat_tree(&f) == 0);
	options_defaults(&o);
	snprintf(o.storage_nodes, sizeof(o.storage_nodes), "io*");
	CHECK(routing_init(&r, &f, "sar-dfsssp") == 0);
	CHECK(engine_run("sar-dfsssp", &f, &o, &r, &res, &err) == 0);
	CHECK(strstr(res.warning, "storage_nodes 'io*' matches no CA node of the fabric") != NULL);
	CHECK(strstr(res.summary, "0 storage") != NULL);
	routing_free(&r);

	/* One matching: no warning, and the node counts as storage. */
	snprintf(o.storage_nodes, sizeof(o.storage_nodes), "h1.[2]*");
	CHECK(routing_init(&r, &f, "sar-dfsssp") == 0);
	CHECK(engine_run("sar-dfsssp", &f, &o, &r, &res, &err) == 0);
	CHECK(!strstr(res.warning, "storage_nodes"));
	routing_free(&r);

	o.storage_nodes[0] = '\0';
	CHECK(testfab_write_file(path, "# another fabric's\n0x0002c90300000001\n0x42\n") == 0);
	snprintf(o.storage_guids, sizeof(o.storage_guids), "%s", path);
	CHECK(routing_init(&r, &f, "sar-dfsssp") == 0);
	CHECK(engine_run("sar-dfsssp", &f, &o, &r, &res, &err) == 0);
	CHECK(strstr(res.warning, "storage_guids ") && strstr(res.warning, path) &&
	      strstr(res.warning, ": none of its 2 GUID(s) is a CA node of the fabric"));
	routing_free(&r);

	CHECK(overwrite(path, "# nothing yet\n") == 0);
	CHECK(routing_init(&r, &f, "sar-dfsssp") == 0);
	CHECK(engine_run("sar-dfsssp", &f, &o, &r, &res, &err) == 0);
	CHECK(strstr(res.warning, "lists no GUID") != NULL);
	routing_free(&r);

	/* A file naming a node of this fabric among others: no warning. */
	CHECK(overwrite(path, "0x42\n") == 0);
	{
		FILE *fp = fopen(path, "a");

		CHECK(fp != NULL);
		if (fp) {
			fprintf(fp, "0x%016llx\n",
				(unsigned long long)f.nodes[fabric_find_node_by_id(&f, "h2.1")]
					.guid);
			fclose(fp);
		}
	}
	CHECK(routing_init(&r, &f, "sar-dfsssp") == 0);
	CHECK(engine_run("sar-dfsssp", &f, &o, &r, &res, &err) == 0);
	CHECK(!strstr(res.warning, "storage_guids"));
	routing_free(&r);
	unlink(path);
	fabric_free(&f);
}

/* The plugin's context: a malformed job map keeps the previous one, naming file:line. */
static void test_engine_ctx(void)
{
	struct sarnue_options o;
	struct engine_result res;
	struct engine_ctx ctx;
	struct fab_error err = { "" };
	char path[] = "/tmp/sarnue-jobs-XXXXXX";
	struct routing r;
	struct fabric f;

	CHECK(build_fat_tree(&f) == 0);
	CHECK(testfab_write_file(path, "h0.0 1\nh1.0 1\nnobody 1\n") == 0);
	options_defaults(&o);
	snprintf(o.job_map, sizeof(o.job_map), "%s", path);
	engine_ctx_init(&ctx);
	CHECK(routing_init(&r, &f, "sar-dfsssp") == 0);
	CHECK(engine_run_ctx("sar-dfsssp", &f, &o, &ctx, &r, &res, &err) == 0);
	CHECK(strstr(res.summary, "1 job(s) on 2 nodes, 1 unknown host(s)") != NULL);
	CHECK(strstr(res.warning, "first 'nobody'") != NULL);
	routing_free(&r);

	CHECK(overwrite(path, "h0.0 1\nh1.0\n") == 0);
	CHECK(routing_init(&r, &f, "sar-dfsssp") == 0);
	CHECK(engine_run_ctx("sar-dfsssp", &f, &o, &ctx, &r, &res, &err) == 0);
	CHECK(strstr(res.warning, ":2:") != NULL);
	CHECK(strstr(res.warning, "previous job map stays in force") != NULL);
	CHECK(strstr(res.summary, "1 job(s) on 2 nodes") != NULL);
	routing_free(&r);

	/* Offline (no context) the same file is an error. */
	CHECK(routing_init(&r, &f, "sar-dfsssp") == 0);
	CHECK(engine_run("sar-dfsssp", &f, &o, &r, &res, &err) == -1);
	CHECK(strstr(err.msg, ":2:") != NULL);
	routing_free(&r);

	/*
	 * qos off: one VL, a warning saying why, and instead of a failure Nue routes the switch
	 * LIDs whose paths do not fit around the terminals' DFSSSP paths.
	 */
	unlink(path);
	o.job_map[0] = '\0';
	ctx.sl2vl_off = 1;
	CHECK(routing_init(&r, &f, "sar-dfsssp") == 0);
	CHECK(engine_run_ctx("sar-dfsssp", &f, &o, &ctx, &r, &res, &err) == 0);
	CHECK(strstr(res.warning, "qos is off") != NULL);
	CHECK(strstr(res.warning, "routed with Nue on the same VL around them") != NULL);
	CHECK(res.verified && verify_ok(&res.verify) && r.vls_used == 1);
	routing_free(&r);
	engine_ctx_free(&ctx);
	fabric_free(&f);
}

/* routing.c's per-pair mode, and the path-SL dump written and read back. */
static void test_pair_sl_mode_and_dump(void)
{
	unsigned links[5][2], hosts[5] = { 2, 2, 2, 2, 2 };
	struct dfsssp_opts o = { .max_vls = 4 };
	struct dfsssp_report rep;
	struct fab_error err = { "" };
	char path[] = "/tmp/sarnue-psl-XXXXXX";
	struct routing r, back;
	struct fabric f;
	uint32_t i, dlid, mismatches = 0;
	FILE *out;

	CHECK(build(&f, 5, hosts, (const unsigned(*)[2])links, testfab_ring(links, 5), 0) == 0);
	CHECK(routing_init(&r, &f, "pairs") == 0);
	r.sl_uniform = 3;
	CHECK(routing_alloc_sl_by_pair(&r, &f) == 0);
	CHECK(routing_path_sl(&r, host_lid(&f, "h0.0"), host_lid(&f, "h1.0")) == 3);
	routing_set_pair_sl(&r, 0, host_lid(&f, "h1.0"), 5);
	CHECK(routing_path_sl(&r, host_lid(&f, "h0.0"), host_lid(&f, "h1.0")) == 5);
	CHECK(routing_path_sl(&r, host_lid(&f, "h0.1"), host_lid(&f, "h1.0")) == 5);
	CHECK(routing_path_sl(&r, host_lid(&f, "h2.0"), host_lid(&f, "h1.0")) == 3);
	routing_free(&r);

	CHECK(route(&f, &o, &r, &rep) == 0);
	CHECK(sl_differs_by_source(&f, &r));
	CHECK(testfab_write_file(path, "") == 0);
	out = fopen(path, "w");
	CHECK(out && routing_write_path_sl(&r, &f, out) == 0);
	if (out)
		fclose(out);
	CHECK(routing_init(&back, &f, "dump") == 0);
	CHECK(routing_load_path_sl(&back, &f, path, &err) == 0);
	CHECK(back.sl_mode == ROUTING_SL_PER_SWITCH_DLID);
	for (i = 0; i < f.nendports; i++)
		for (dlid = 1; dlid <= f.max_lid; dlid++)
			mismatches += routing_path_sl(&r, f.ports[f.endports[i]].base_lid, dlid) !=
				      routing_path_sl(&back, f.ports[f.endports[i]].base_lid, dlid);
	CHECK(mismatches == 0);
	routing_free(&back);

	/* Two hosts behind one switch disagreeing cannot be represented: named error. */
	out = fopen(path, "w");
	if (out) {
		fprintf(out, "0x%016llx 1 0\n0x%016llx 1 1\n",
			(unsigned long long)f.nodes[fabric_find_node_by_id(&f, "h2.0")].guid,
			(unsigned long long)f.nodes[fabric_find_node_by_id(&f, "h2.1")].guid);
		fclose(out);
	}
	CHECK(routing_init(&back, &f, "dump") == 0);
	CHECK(routing_load_path_sl(&back, &f, path, &err) == -1);
	CHECK(strstr(err.msg, ":2: SL to LID 1 differs between sources behind switch") != NULL);
	routing_free(&back);

	/* One SL per destination still loads into the compact table. */
	out = fopen(path, "w");
	if (out) {
		fprintf(out, "0x%016llx 1 2\n0x%016llx 1 2\n",
			(unsigned long long)f.nodes[fabric_find_node_by_id(&f, "h2.0")].guid,
			(unsigned long long)f.nodes[fabric_find_node_by_id(&f, "h3.1")].guid);
		fclose(out);
	}
	CHECK(routing_init(&back, &f, "dump") == 0);
	CHECK(routing_load_path_sl(&back, &f, path, &err) == 0);
	CHECK(back.sl_mode == ROUTING_SL_PER_DLID && routing_path_sl(&back, 7, 1) == 2);
	routing_free(&back);
	unlink(path);
	routing_free(&r);
	fabric_free(&f);
}

/* The path-SL dump as fprintf would write it, for comparison. */
static char *path_sl_reference(const struct routing *r, const struct fabric *f, size_t *len)
{
	char *text = NULL;
	FILE *out = open_memstream(&text, len);
	uint32_t i, dlid;

	if (!out)
		return NULL;
	for (i = 0; i < f->nendports; i++) {
		const struct fab_port *src = &f->ports[f->endports[i]];

		for (dlid = 1; dlid <= f->max_lid; dlid++)
			if (f->lid_port[dlid] != FAB_NONE && f->lid_port[dlid] != f->endports[i])
				fprintf(out, "0x%016llx %u %u\n",
					(unsigned long long)f->nodes[src->node].guid, dlid,
					routing_path_sl(r, src->base_lid, (uint16_t)dlid));
	}
	fclose(out);
	return text;
}

/*
 * The path-SL dump puts its lines together in a buffer: the file must hold the very bytes of one
 * fprintf per line, across many buffer flushes (a 6x6 torus with 4 hosts per switch: 25,776
 * lines, 0.7 MB) and with SLs of one and two digits.
 */
static void test_path_sl_dump_bytes(void)
{
	static unsigned links[128][2];
	char path[] = "/tmp/sarnue-pslb-XXXXXX";
	struct routing r;
	struct fabric f;
	uint32_t s, dlid;
	size_t want_len = 0, got_len = 0;
	char *want = NULL, *got = NULL;
	FILE *out;

	CHECK(testfab_build(&f, 36, 4, (const unsigned(*)[2])links,
			    testfab_torus(links, 6, 6, 1, -1), 0) == 0);
	CHECK(routing_init(&r, &f, "pairs") == 0);
	CHECK(routing_alloc_sl_by_pair(&r, &f) == 0);
	for (s = 0; s < f.nswitches; s++)
		for (dlid = 1; dlid <= f.max_lid; dlid++)
			routing_set_pair_sl(&r, s, dlid, (uint8_t)((s * 7 + dlid) % 16));
	CHECK(testfab_write_file(path, "") == 0);
	out = fopen(path, "w");
	CHECK(out && routing_write_path_sl(&r, &f, out) == 0);
	if (out)
		fclose(out);
	want = path_sl_reference(&r, &f, &want_len);
	out = fopen(path, "r");
	if (out) {
		got = malloc(want_len + 1);
		got_len = got ? fread(got, 1, want_len + 1, out) : 0;
		fclose(out);
	}
	CHECK(want_len > 600000);
	CHECK(want && got && got_len == want_len && !memcmp(want, got, want_len));
	free(want);
	free(got);
	unlink(path);
	routing_free(&r);
	fabric_free(&f);
}

/* Same fabric and options, same tables: no hidden state, no unseeded randomness. */
/*
 * On the 4-ary 3-tree (as in test_nue.c) the maximum EFI is the cut bound, 60, and no shift
 * permutation (terminals in LID order) puts two routes on a channel, as D-mod-k routes: the
 * switches without hosts are no weighed sources.  When they were, the maximum EFI was 92 and a
 * shift met 3 routes on a channel.
 */
static void test_fat_tree_balance(void)
{
	struct dfsssp_opts o = { .max_vls = 8 };
	struct metrics_options mo;
	struct metrics_patterns p;
	struct dfsssp_report rep;
	struct metrics_efi e;
	struct routing r;
	struct fabric f;

	CHECK(testfab_4ary_3tree(&f) == 0);
	testfab_set_vls(&f, 8);
	CHECK(route(&f, &o, &r, &rep) == 0 && verified(&f, &r));
	metrics_options_default(&mo);
	CHECK(metrics_efi(&f, &r, &mo, &e) == 0);
	CHECK(e.routes == 64 * 63 && e.nonminimal == 0 && e.dist.max == 60);
	metrics_efi_free(&e);
	CHECK(metrics_patterns(&f, &r, &mo, &p) == 0);
	CHECK(p.shift.instances == 63 && p.shift.max_load == 1);
	routing_free(&r);
	fabric_free(&f);
}

static void test_deterministic(void)
{
	unsigned links[64][2], hosts[9] = { 2, 2, 2, 2, 2, 2, 2, 2, 2 };
	struct dfsssp_opts o = { .max_vls = 8 };
	struct dfsssp_report rep;
	struct routing a, b;
	struct fabric f;

	CHECK(build(&f, 9, hosts, (const unsigned(*)[2])links, testfab_torus(links, 3, 3, 1, -1),
		    0) == 0);
	CHECK(route(&f, &o, &a, &rep) == 0 && route(&f, &o, &b, &rep) == 0);
	CHECK(!memcmp(a.lft, b.lft, (size_t)a.nswitches * a.lft_len));
	CHECK(!memcmp(a.sl_by_pair, b.sl_by_pair, (size_t)a.nswitches * a.lft_len));
	routing_free(&a);
	routing_free(&b);
	fabric_free(&f);
}

/* Figure 5.2's job map again; shrink: job 3's even-numbered hosts leave it. */
static int fig52_jobs(struct job_map *jm, const struct fabric *f, int shrink)
{
	char *text = malloc(180 * 16), *p = text;
	unsigned h, j;
	int rc;

	if (!text)
		return -1;
	for (h = 1; h <= 180; h++) {
		j = h <= 30 || (h >= 91 && h <= 120) ? 1 : h <= 60 || h >= 151 ? 2 : 3;
		if (!shrink || j != 3 || h % 2)
			p += sprintf(p, "h%u.%u %u\n", (h - 1) / 18, (h - 1) % 18, j);
	}
	rc = bind_jobs(jm, f, text);
	free(text);
	return rc;
}

/* Columns of LIDs lo..hi (inclusive) alike in a and b at every switch. */
static int columns_alike(const struct routing *a, const struct routing *b, uint32_t lo, uint32_t hi)
{
	uint32_t s;

	for (s = 0; s < a->nswitches; s++)
		if (memcmp(routing_lft(a, s) + lo, routing_lft(b, s) + lo, hi - lo + 1))
			return 0;
	return 1;
}

/*
 * Incremental reroute: the same job map again keeps every column; job 3 shrinking keeps jobs
 * 1 and 2 and the switch LIDs byte for byte and routes job 3's 60 destinations again; another
 * fabric keeps nothing.
 */
static void test_incremental(void)
{
	struct dfsssp_memo memo = { 0 };
	struct dfsssp_opts o = { .max_vls = 8, .memo = &memo };
	struct dfsssp_report rep;
	struct routing first, again, shrunk;
	struct job_map jm, jm2;
	struct fabric f;
	uint16_t h1 = 0, h2 = 0;

	CHECK(build_fig52(&f, &jm, 0) == 0);
	o.jobs = &jm;
	CHECK(route(&f, &o, &first, &rep) == 0);
	CHECK(!rep.incremental && rep.kept_lids == 0 && memo.key != 0);
	CHECK(route(&f, &o, &again, &rep) == 0);
	CHECK(rep.incremental && rep.kept_lids == rep.lids_routed && rep.rerouted_lids == 0);
	CHECK(!memcmp(first.lft, again.lft, (size_t)first.nswitches * first.lft_len));
	CHECK(fig52_jobs(&jm2, &f, 1) == 0);
	o.jobs = &jm2;
	CHECK(route(&f, &o, &shrunk, &rep) == 0);
	fprintf(stderr, "# incremental: kept %u of %u, routed %u again\n", rep.kept_lids,
		rep.lids_routed, rep.rerouted_lids);
	CHECK(rep.incremental && rep.kept_lids == 139 && rep.rerouted_lids == 60);
	CHECK(verified(&f, &shrunk));
	/* Hosts 1-60 (jobs 1 and 2) and the switches keep their columns; job 3's first host not. */
	h1 = host_lid(&f, "h0.0");
	h2 = host_lid(&f, "h3.5");
	CHECK(h1 && h2 == h1 + 59 && columns_alike(&first, &shrunk, 1, 19));
	CHECK(columns_alike(&first, &shrunk, h1, h2));
	CHECK(!columns_alike(&first, &shrunk, h2 + 1, h2 + 30));
	routing_free(&first);
	routing_free(&again);
	routing_free(&shrunk);
	job_map_free(&jm);
	job_map_free(&jm2);
	fabric_free(&f);
	/* Another fabric: nothing kept. */
	CHECK(build_fig52(&f, &jm, 1) == 0);
	o.jobs = &jm;
	CHECK(route(&f, &o, &first, &rep) == 0);
	CHECK(!rep.incremental && rep.kept_lids == 0);
	routing_free(&first);
	job_map_free(&jm);
	fabric_free(&f);
	dfsssp_memo_free(&memo);
}

int main(void)
{
	test_ring_two_layers();
	test_torus();
	test_layer_counts_checked();
	test_parallel_links();
	test_lmc_spreading();
	test_alg51_effective_efi();
	test_job_sort();
	test_weight_reset();
	test_intra_job_weights();
	test_improve_fig52();
	test_storage_guid_file();
	test_storage_unmatched();
	test_engine_ctx();
	test_pair_sl_mode_and_dump();
	test_path_sl_dump_bytes();
	test_deterministic();
	test_fat_tree_balance();
	test_incremental();
	return CHECK_RESULT();
}
