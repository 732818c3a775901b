/*
 * test_planes.c - the two routing planes of LMC >= 1 fabrics (planes=on): base LIDs by
 * sar-dfsssp or sar-nue on VLs 0..n-2, high LIDs by the escape routing on VL n-1, the union
 * verified; the escape plane kept byte for byte across a job map change and recomputed after a
 * topology change; the plain routing with a warning when planes cannot be had.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "engines/engines.h"
#include "check/metrics.h"
#include "testfab.h"
#include "engines/updn/updn.h"

#define VLS 4

/* 3x3 torus, 2 hosts per switch, 4 VLs; with drop, the first link is left out. */
static int build_torus_lmc(struct fabric *f, int drop, unsigned lmc)
{
	unsigned links[64][2];
	unsigned n = testfab_torus(links, 3, 3, 1, -1);

	if (testfab_build(f, 9, 2, (const unsigned(*)[2])(links + (drop ? 1 : 0)),
			  n - (drop ? 1 : 0), lmc))
		return -1;
	testfab_set_vls(f, VLS);
	return 0;
}

static int build_torus(struct fabric *f, int drop)
{
	return build_torus_lmc(f, drop, 1);
}

static int route(const char *engine, const struct fabric *f, const struct sarnue_options *o,
		 struct engine_ctx *ctx, struct routing *r, struct engine_result *res)
{
	struct fab_error err = { "" };

	if (routing_init(r, f, engine))
		return -1;
	if (engine_run_ctx(engine, f, o, ctx, r, res, &err)) {
		fprintf(stderr, "%s: %s\n", engine, err.msg);
		return -1;
	}
	return 0;
}

/* Every SL the paths towards the chosen plane's LIDs use, over every source LID. */
static uint16_t plane_sls(const struct fabric *f, const struct routing *r, int high)
{
	uint32_t slid, dlid;
	uint16_t used = 0;

	for (dlid = 1; dlid <= f->max_lid; dlid++) {
		if (f->lid_port[dlid] == FAB_NONE || fabric_lid_is_high(f, dlid) != high)
			continue;
		for (slid = 1; slid <= f->max_lid; slid++)
			if (f->lid_port[slid] != FAB_NONE && f->lid_port[slid] != f->lid_port[dlid])
				used |= (uint16_t)(1u << routing_path_sl(r, (uint16_t)slid,
									 (uint16_t)dlid));
	}
	return used;
}

/* Highest VL the SLs in mask reach on any switch port pair or end port; lowest in *min. */
static unsigned sl_vls(const struct fabric *f, const struct routing *r, uint16_t mask,
		       unsigned *min)
{
	unsigned sw, in, out, sl, max = 0, vl;

	*min = 99;
	for (sl = 0; sl < ROUTING_MAX_SL; sl++) {
		if (!(mask & (1u << sl)))
			continue;
		vl = r->sl2vl_uniform[sl];
		max = vl > max ? vl : max;
		*min = vl < *min ? vl : *min;
		for (sw = 0; sw < f->nswitches; sw++)
			for (in = 0; in <= f->nodes[f->switches[sw]].nports; in++)
				for (out = 1; out <= f->nodes[f->switches[sw]].nports; out++) {
					vl = routing_sl2vl(r, sw, in, out, sl);
					max = vl > max ? vl : max;
					*min = vl < *min ? vl : *min;
				}
	}
	return max;
}

/* Equal LFT, hops and SL of every path towards the chosen plane's LIDs; -1: some differ. */
static long plane_diff(const struct fabric *f, const struct routing *a, const struct routing *b,
		       int high)
{
	uint32_t s, dlid, slid;
	long n = 0;

	for (dlid = 1; dlid <= f->max_lid; dlid++) {
		if (f->lid_port[dlid] == FAB_NONE || fabric_lid_is_high(f, dlid) != high)
			continue;
		for (s = 0; s < f->nswitches; s++)
			n += routing_lft(a, s)[dlid] != routing_lft(b, s)[dlid] ||
			     routing_hops(a, s)[dlid] != routing_hops(b, s)[dlid];
		for (slid = 1; slid <= f->max_lid; slid++)
			n += f->lid_port[slid] != FAB_NONE &&
			     routing_path_sl(a, (uint16_t)slid, (uint16_t)dlid) !=
				     routing_path_sl(b, (uint16_t)slid, (uint16_t)dlid);
	}
	return n;
}

/* The union verifies; high LIDs on SL and VL n-1 only, base LIDs below it. */
static void check_planes(const char *engine, const char *extra)
{
	struct sarnue_options o;
	struct engine_result res;
	struct engine_ctx ctx;
	struct routing r;
	struct fabric f;
	unsigned min, max;

	CHECK(build_torus(&f, 0) == 0);
	options_defaults(&o);
	options_parse_line(&o, extra, "test", 0, NULL, NULL);
	engine_ctx_init(&ctx);
	CHECK(route(engine, &f, &o, &ctx, &r, &res) == 0);
	CHECK(res.planes == 1 && res.plane_vls == VLS && res.escape_reused == 0);
	CHECK(res.verified && verify_ok(&res.verify) && res.verify.credit_loop_vls == 0);
	CHECK(res.fingerprint == fabric_fingerprint(&f));
	CHECK(strstr(res.summary, "2 planes: base LIDs on VLs 0..2") != NULL);
	CHECK(plane_sls(&f, &r, 1) == 1u << (VLS - 1));
	max = sl_vls(&f, &r, plane_sls(&f, &r, 1), &min);
	CHECK(min == VLS - 1 && max == VLS - 1);
	CHECK(!(plane_sls(&f, &r, 0) & (1u << (VLS - 1))));
	max = sl_vls(&f, &r, plane_sls(&f, &r, 0), &min);
	CHECK(max < VLS - 1);
	/* Both planes are in use: the base spreads over more than one VL on a torus. */
	CHECK(max > 0 && res.verify.vls_used == (1u << VLS) - 1);
	routing_free(&r);
	engine_ctx_free(&ctx);
	fabric_free(&f);
}

/* escape=updn: the high-LID entries are exactly Up*\/Down* routing of the high LIDs alone. */
static void check_escape_is_updn(void)
{
	struct sarnue_options o;
	struct engine_result res;
	struct updn_opts uo = { 0 };
	struct updn_report rep;
	struct fab_error err;
	struct routing r, u;
	struct fabric f, view;

	CHECK(build_torus(&f, 0) == 0);
	options_defaults(&o);
	options_parse_line(&o, "planes=on escape=updn", "test", 0, NULL, NULL);
	CHECK(route("sar-dfsssp", &f, &o, NULL, &r, &res) == 0);
	CHECK(!strcmp(res.escape_engine, "sar-updn"));
	CHECK(fabric_plane_view(&f, FAB_PLANE_HIGH, &view) == 0);
	CHECK(routing_init(&u, &view, "sar-updn") == 0);
	CHECK(updn_route(&view, &uo, &u, &rep, &err) == 0);
	CHECK(plane_diff(&f, &r, &u, 1) > 0); /* SL 0 against SL 3 */
	u.sl_uniform = VLS - 1;
	CHECK(plane_diff(&f, &r, &u, 1) == 0);
	/* The base plane holds no high LID: the updn view routed only those. */
	CHECK(rep.lids_routed == 18);
	routing_free(&u);
	fabric_plane_view_free(&view);
	routing_free(&r);
	fabric_free(&f);
}

static uint64_t high_max_efi(const struct fabric *f, const struct routing *r)
{
	struct metrics_options mo;
	struct metrics_efi efi;
	struct fabric view;
	uint64_t max = 0;

	metrics_options_default(&mo);
	mo.all_lids = 1;
	if (!fabric_plane_view(f, FAB_PLANE_HIGH, &view) && !metrics_efi(&view, r, &mo, &efi))
		max = efi.dist.max;
	metrics_efi_free(&efi);
	fabric_plane_view_free(&view);
	return max;
}

/* escape=nue and escape=updn pick those; auto keeps the one of lower maximum EFI. */
static void check_escape_choice(void)
{
	static const char *const modes[] = { "escape=updn", "escape=nue", "escape=auto" };
	struct sarnue_options o;
	struct engine_result res;
	uint64_t efi[3];
	char engine[3][16];
	struct routing r;
	struct fabric f;
	unsigned i;

	CHECK(build_torus(&f, 0) == 0);
	for (i = 0; i < 3; i++) {
		options_defaults(&o);
		options_parse_line(&o, "planes=on nue_vls=4", "test", 0, NULL, NULL);
		options_parse_line(&o, modes[i], "test", 0, NULL, NULL);
		CHECK(route("sar-nue", &f, &o, NULL, &r, &res) == 0);
		CHECK(res.planes && res.verified && verify_ok(&res.verify));
		efi[i] = high_max_efi(&f, &r);
		snprintf(engine[i], sizeof(engine[i]), "%s", res.escape_engine);
		if (i == 2)
			CHECK(strstr(res.summary, "max EFI") && strstr(res.summary, "against"));
		routing_free(&r);
	}
	CHECK(!strcmp(engine[0], "sar-updn") && !strcmp(engine[1], "sar-nue"));
	CHECK(efi[0] > 0 && efi[1] > 0);
	CHECK(!strcmp(engine[2], efi[1] < efi[0] ? "sar-nue" : "sar-updn"));
	CHECK(efi[2] == (efi[1] < efi[0] ? efi[1] : efi[0]));
	fabric_free(&f);
}

/*
 * A new job map reroutes the base plane only: high-LID entries, SLs and VL stay byte for byte
 * (kept, not recomputed), base entries change.  Dropping a link changes the fingerprint and
 * recomputes the escape plane.
 */
static void check_reuse(const char *engine, const char *extra)
{
	char path[] = "/tmp/sarnue-planes-XXXXXX";
	struct sarnue_options o;
	struct engine_result res;
	struct engine_ctx ctx;
	struct routing r0, r1, r2;
	struct fabric f, g;

	CHECK(build_torus(&f, 0) == 0);
	CHECK(build_torus(&g, 1) == 0);
	CHECK(testfab_write_file(path, "h0.0 7\nh4.1 7\nh8.0 7\nh2.1 7\nh6.0 7\n") == 0);
	options_defaults(&o);
	options_parse_line(&o, extra, "test", 0, NULL, NULL);
	engine_ctx_init(&ctx);
	CHECK(route(engine, &f, &o, &ctx, &r0, &res) == 0);
	CHECK(res.planes && !res.escape_reused);

	snprintf(o.job_map, sizeof(o.job_map), "%s", path);
	CHECK(route(engine, &f, &o, &ctx, &r1, &res) == 0);
	CHECK(res.planes && res.escape_reused && res.jobs == 1);
	CHECK(strstr(res.summary, "kept: same topology") != NULL);
	CHECK(res.verified && verify_ok(&res.verify));
	CHECK(plane_diff(&f, &r0, &r1, 1) == 0);
	CHECK(plane_diff(&f, &r0, &r1, 0) > 0);
	CHECK(r0.sl2vl_uniform[VLS - 1] == r1.sl2vl_uniform[VLS - 1]);

	/* Same topology, loaded again: same fingerprint. */
	CHECK(fabric_fingerprint(&f) == res.fingerprint);
	CHECK(fabric_fingerprint(&g) != fabric_fingerprint(&f));
	CHECK(route(engine, &g, &o, &ctx, &r2, &res) == 0);
	CHECK(res.planes && !res.escape_reused);
	CHECK(strstr(res.summary, "computed: topology changed") != NULL);
	CHECK(res.verified && verify_ok(&res.verify));
	CHECK(ctx.escape.fingerprint == fabric_fingerprint(&g));
	CHECK(plane_diff(&g, &r1, &r2, 1) > 0);
	routing_free(&r0);
	routing_free(&r1);
	routing_free(&r2);
	engine_ctx_free(&ctx);
	unlink(path);
	fabric_free(&f);
	fabric_free(&g);
}

/* The fingerprint ignores load order and sees LIDs, LMC and link state. */
static void check_fingerprint(void)
{
	struct fabric a, b;
	uint64_t fa;

	CHECK(build_torus(&a, 0) == 0);
	CHECK(build_torus(&b, 0) == 0);
	fa = fabric_fingerprint(&a);
	CHECK(fa != 0 && fa == fabric_fingerprint(&b));
	b.ports[b.nodes[10].first_port + 1].lmc = 0;
	CHECK(fabric_fingerprint(&b) != fa);
	b.ports[b.nodes[10].first_port + 1].lmc = 1;
	b.ports[b.nodes[10].first_port + 1].base_lid += 2;
	CHECK(fabric_fingerprint(&b) != fa);
	b.ports[b.nodes[10].first_port + 1].base_lid -= 2;
	CHECK(fabric_fingerprint(&b) == fa);
	b.ports[b.nodes[10].first_port + 1].state = FAB_PORT_DOWN;
	CHECK(fabric_fingerprint(&b) != fa);
	fabric_free(&a);
	fabric_free(&b);
}

/* Without two VLs, LMC or a planes-capable engine: a plain routing and a warning saying why. */
static void check_plain(const char *engine, const char *extra, int sl2vl_off, unsigned lmc,
			const char *why)
{
	struct sarnue_options o;
	struct engine_result res;
	struct engine_ctx ctx;
	struct routing r;
	struct fabric f;
	uint32_t lid, s;
	int high_routed = 1;

	CHECK(build_torus_lmc(&f, 0, lmc) == 0);
	options_defaults(&o);
	options_parse_line(&o, extra, "test", 0, NULL, NULL);
	engine_ctx_init(&ctx);
	ctx.sl2vl_off = sl2vl_off;
	CHECK(route(engine, &f, &o, &ctx, &r, &res) == 0);
	CHECK(res.planes == 0 && res.escape_engine[0] == '\0');
	CHECK(res.fingerprint == fabric_fingerprint(&f));
	CHECK(strstr(res.warning, why) != NULL);
	CHECK(res.verified && verify_ok(&res.verify));
	for (lid = 1; lid <= f.max_lid; lid++)
		for (s = 0; s < f.nswitches; s++)
			if (fabric_lid_is_high(&f, lid) && routing_lft(&r, s)[lid] == FAB_NO_PORT)
				high_routed = 0;
	CHECK(high_routed);
	CHECK(!ctx.escape.valid);
	routing_free(&r);
	engine_ctx_free(&ctx);
	fabric_free(&f);
}

int main(void)
{
	check_planes("sar-dfsssp", "planes=on");
	check_planes("sar-nue", "planes=on nue_vls=4");
	check_planes("sar-nue", "planes=on nue_vls=4 escape=nue");
	check_escape_is_updn();
	check_escape_choice();
	check_reuse("sar-dfsssp", "planes=on");
	check_reuse("sar-nue", "planes=on nue_vls=4");
	check_fingerprint();
	check_plain("sar-dfsssp", "planes=on", 1, 1, "planes=on needs 2 or more VLs");
	check_plain("sar-nue", "planes=on", 0, 1, "planes=on needs 2 or more VLs");
	check_plain("sar-updn", "planes=on", 0, 1, "planes=on needs sar-dfsssp or sar-nue");
	check_plain("sar-dfsssp", "planes=on", 0, 0, "planes=on needs LMC 1 or more");
	return CHECK_RESULT();
}
