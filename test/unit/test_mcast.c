/*
 * test_mcast.c - multicast trees and their verification: a group's subtree of the shared tree
 * joins exactly its members and climbs no higher than they need; the verifier passes a good
 * tree beside up/down unicast routes, catches trees with a cycle, one-way links and members left
 * out, and finds a credit loop that neither the unicast routes nor the tree hold alone (a ring
 * routed as a line, with a tree that closes the ring), labelling the tree's dependencies.
 */
#include <string.h>

#include "check.h"
#include "check/verify.h"
#include "engines/engines.h"
#include "engines/mcasttree.h"
#include "fabric/mcast.h"
#include "testfab.h"

/* Port number on switch s that leads to switch t, 0 when none. */
static unsigned port_to(const struct fabric *f, uint32_t s, uint32_t t)
{
	const struct fab_node *n = &f->nodes[f->switches[s]];
	unsigned p;

	for (p = 1; p <= n->nports; p++) {
		uint32_t remote = f->ports[n->first_port + p].remote;

		if (remote != FAB_NONE && f->nodes[f->ports[remote].node].sw == t)
			return p;
	}
	return 0;
}

/* The end port of the first host on switch s. */
static uint32_t host_of(const struct fabric *f, uint32_t s)
{
	uint32_t i;

	for (i = 0; i < f->nendports; i++) {
		uint32_t p = f->endports[i];

		if (!fabric_is_switch(f, f->ports[p].node) && fabric_endport_switch(f, p) == s)
			return p;
	}
	return FAB_NONE;
}

static int route_engine(const char *engine, const struct fabric *f, struct routing *r)
{
	struct sarnue_options o;
	struct engine_result res;
	struct fab_error err = { "" };

	options_defaults(&o);
	if (routing_init(r, f, engine) || engine_run(engine, f, &o, r, &res, &err)) {
		fprintf(stderr, "%s: %s\n", engine, err.msg);
		return -1;
	}
	return 0;
}

/*
 * Fat tree of testfab (spines 0..3, leaves 4..9 with 3 hosts each), routed by sar-updn; the
 * tree descends from spine 0.  All hosts: one group over every leaf; the hosts of one leaf: a
 * group on that leaf alone.
 */
static void test_fat_tree_groups(void)
{
	struct mcast_tree t;
	struct verify_report v;
	struct routing r;
	struct fabric f;
	struct mcast m;
	uint32_t members[32], n = 0, i;

	CHECK(testfab_fat_tree(&f, 0) == 0);
	CHECK(route_engine("sar-updn", &f, &r) == 0);
	CHECK(mcast_tree_build(&f, 0, NULL, &t) == 0);
	CHECK(t.nreached == f.nswitches);
	for (i = 0; i < f.nendports; i++)
		if (!fabric_is_switch(&f, f.ports[f.endports[i]].node))
			members[n++] = f.endports[i];
	CHECK(n == 18);
	mcast_init(&m);
	CHECK(mcast_begin_group(&m, 0xc000, 0) == 0);
	CHECK(mcast_tree_group(&f, &t, &m, members, n) == 0);
	mcast_end_group(&m);
	CHECK(m.groups[0].nentries == 7); /* six leaves and spine 0 */
	CHECK(mcast_find_entry(&m, &m.groups[0], 0) != NULL);
	CHECK(mcast_find_entry(&m, &m.groups[0], 1) == NULL);
	/* Leaf 4's three hosts only: the subtree is leaf 4, the spine above it is cut off. */
	CHECK(mcast_begin_group(&m, 0xc001, 0) == 0);
	CHECK(mcast_tree_group(&f, &t, &m, members, 3) == 0);
	mcast_end_group(&m);
	CHECK(m.groups[1].nentries == 1 && m.entries[m.groups[1].first_entry].sw == 4);
	r.mcast = &m;
	CHECK(verify_routing(&f, &r, &v) == 0);
	CHECK(v.mcast_groups == 2 && v.mcast_members == 21);
	CHECK(v.mcast_unreached == 0 && v.mcast_loops == 0);
	CHECK(v.mcast_dependencies == 6 * 5); /* spine 0: each pair of its six tree ports */
	CHECK(v.credit_loop_vls == 0 && verify_ok(&v));
	mcast_free(&m);
	mcast_tree_free(&t);
	routing_free(&r);
	fabric_free(&f);
}

/*
 * The plugin checks each group against the unicast dependencies kept from one walk
 * (verify_with_deps): the verdict, the multicast fields and the cycle must be those of a full
 * verify_routing (v).
 */
static void same_with_kept_deps(const struct fabric *f, struct routing *r,
				const struct verify_report *v)
{
	struct verify_deps *d = verify_deps_new(f, r);
	struct verify_report k;

	CHECK(d != NULL);
	if (!d)
		return;
	CHECK(verify_deps_report(d)->mcast_groups == 0 && verify_ok(verify_deps_report(d)));
	CHECK(verify_with_deps(d, f, r, &k) == 0);
	CHECK(verify_ok(&k) == verify_ok(v) && k.credit_loop_vls == v->credit_loop_vls);
	CHECK(k.mcast_groups == v->mcast_groups && k.mcast_dependencies == v->mcast_dependencies);
	CHECK(k.dependencies == v->dependencies && k.pairs == v->pairs);
	CHECK(k.cycle_mixed == v->cycle_mixed && !strcmp(k.cycle, v->cycle));
	verify_deps_free(d);
}

/* A ring of n switches with one host each, as a line: s < d clockwise, s > d back. */
static void route_as_line(const struct fabric *f, struct routing *r, unsigned n)
{
	uint32_t s, lid;

	for (s = 0; s < n; s++) {
		uint8_t *lft = routing_lft(r, s);

		for (lid = 1; lid <= f->max_lid; lid++) {
			uint32_t p = f->lid_port[lid], d;

			if (p == FAB_NONE)
				continue;
			d = fabric_endport_switch(f, p);
			if (d == s)
				lft[lid] = fabric_is_switch(f, f->ports[p].node)
						   ? 0
						   : f->ports[f->ports[p].remote].num;
			else
				lft[lid] = (uint8_t)port_to(f, s, d > s ? s + 1 : s - 1);
		}
	}
}

/* Sets both ends of the link s - t in the group in hand. */
static void tree_link(const struct fabric *f, struct mcast *m, uint32_t s, uint32_t t)
{
	CHECK(mcast_set_port(m, s, port_to(f, s, t)) == 0);
	CHECK(mcast_set_port(m, t, port_to(f, t, s)) == 0);
}

static void add_host(const struct fabric *f, struct mcast *m, uint32_t s)
{
	uint32_t h = host_of(f, s);

	CHECK(mcast_add_member(m, h) == 0);
	CHECK(mcast_set_port(m, s, f->ports[f->ports[h].remote].num) == 0);
}

/*
 * Ring 0..4 routed as a line (link 4 - 0 unused: no credit loop), and a tree 2-1-0-4-3 that
 * uses link 4 - 0: unicast 0>1>2>3>4 and the tree's 3>4>0>1 close the ring on VL 0.
 */
static void test_mixed_credit_loop(void)
{
	unsigned links[8][2], nl = testfab_ring(links, 5);
	struct verify_report v;
	struct routing r;
	struct fabric f;
	struct mcast m;
	uint32_t s;

	CHECK(testfab_build(&f, 5, 1, (const unsigned(*)[2])links, nl, 0) == 0);
	CHECK(routing_init(&r, &f, "line") == 0);
	route_as_line(&f, &r, 5);
	CHECK(verify_routing(&f, &r, &v) == 0);
	CHECK(verify_ok(&v) && v.mcast_groups == 0);

	mcast_init(&m);
	CHECK(mcast_begin_group(&m, 0xc005, 0) == 0);
	tree_link(&f, &m, 2, 1);
	tree_link(&f, &m, 1, 0);
	tree_link(&f, &m, 0, 4);
	tree_link(&f, &m, 4, 3);
	for (s = 0; s < 5; s++)
		add_host(&f, &m, s);
	mcast_end_group(&m);
	r.mcast = &m;
	CHECK(verify_routing(&f, &r, &v) == 0);
	CHECK(v.mcast_loops == 0 && v.mcast_unreached == 0);
	CHECK(v.credit_loop_vls == 1);
	CHECK(v.cycle_mixed);
	CHECK(strstr(v.cycle, "-(multicast 0xc005)->") != NULL);
	CHECK(!verify_ok(&v));
	same_with_kept_deps(&f, &r, &v);

	/* The same tree without link 4 - 0 (2-1-0 and 4-3 joined by 2-3): no loop. */
	mcast_clear(&m);
	CHECK(mcast_begin_group(&m, 0xc005, 0) == 0);
	tree_link(&f, &m, 2, 1);
	tree_link(&f, &m, 1, 0);
	tree_link(&f, &m, 2, 3);
	tree_link(&f, &m, 3, 4);
	for (s = 0; s < 5; s++)
		add_host(&f, &m, s);
	mcast_end_group(&m);
	CHECK(verify_routing(&f, &r, &v) == 0);
	CHECK(verify_ok(&v) && v.credit_loop_vls == 0 && v.mcast_dependencies == 6);
	same_with_kept_deps(&f, &r, &v);
	mcast_free(&m);
	routing_free(&r);
	fabric_free(&f);
}

/* Broken trees: a cycle, a one-way link, a member whose port is not set. */
static void test_broken_trees(void)
{
	unsigned links[8][2], nl = testfab_ring(links, 4);
	struct verify_report v;
	struct routing r;
	struct fabric f;
	struct mcast m;
	uint32_t h;

	CHECK(testfab_build(&f, 4, 1, (const unsigned(*)[2])links, nl, 0) == 0);
	CHECK(routing_init(&r, &f, "line") == 0);
	route_as_line(&f, &r, 4);
	mcast_init(&m);
	r.mcast = &m;

	CHECK(mcast_begin_group(&m, 0xc000, 0) == 0);
	tree_link(&f, &m, 0, 1);
	tree_link(&f, &m, 1, 2);
	tree_link(&f, &m, 2, 3);
	tree_link(&f, &m, 3, 0);
	mcast_end_group(&m);
	CHECK(verify_routing(&f, &r, &v) == 0);
	CHECK(v.mcast_loops == 1 && strstr(v.first_mcast_problem, "cycle") != NULL);
	CHECK(!verify_ok(&v));

	mcast_clear(&m);
	CHECK(mcast_begin_group(&m, 0xc001, 0) == 0);
	tree_link(&f, &m, 0, 1);
	CHECK(mcast_set_port(&m, 1, port_to(&f, 1, 2)) == 0); /* switch 2 does not answer */
	add_host(&f, &m, 0);
	mcast_end_group(&m);
	CHECK(verify_routing(&f, &r, &v) == 0);
	CHECK(v.mcast_loops == 1 && strstr(v.first_mcast_problem, "does not forward back") != NULL);

	mcast_clear(&m);
	CHECK(mcast_begin_group(&m, 0xc002, 0) == 0);
	tree_link(&f, &m, 0, 1);
	add_host(&f, &m, 0);
	h = host_of(&f, 1);
	CHECK(mcast_add_member(&m, h) == 0); /* its port on switch 1 is not in the mask */
	h = host_of(&f, 3);
	CHECK(mcast_add_member(&m, h) == 0); /* switch 3 is not on the tree */
	mcast_end_group(&m);
	CHECK(verify_routing(&f, &r, &v) == 0);
	CHECK(v.mcast_loops == 0 && v.mcast_unreached == 2);
	CHECK(strstr(v.first_mcast_problem, "not in its switch's mask") != NULL);
	CHECK(!verify_ok(&v));
	mcast_free(&m);
	routing_free(&r);
	fabric_free(&f);
}

/* The order keeps the tree descending: with keys 0 < 1 < 2 < 3 on a ring 0-1-2-3-0, switch 3 hangs
 * below 0. */
static void test_tree_order(void)
{
	unsigned links[8][2], nl = testfab_ring(links, 4);
	uint32_t key[4] = { 2, 0, 1, 3 };
	struct mcast_tree t;
	struct fabric f;

	CHECK(testfab_build(&f, 4, 1, (const unsigned(*)[2])links, nl, 0) == 0);
	/* From switch 1 (key 0): 0 and 2 below it, 3 below 0 or 2 (both smaller keys). */
	CHECK(mcast_tree_build(&f, 1, key, &t) == 0);
	CHECK(t.nreached == 4 && t.parent[0] == 1 && t.parent[2] == 1);
	CHECK(t.parent[3] == 0 || t.parent[3] == 2);
	mcast_tree_free(&t);
	/* From switch 3 (the largest key) nothing descends. */
	CHECK(mcast_tree_build(&f, 3, key, &t) == 0);
	CHECK(t.nreached == 1 && !mcast_tree_has(&t, 0));
	mcast_tree_free(&t);
	fabric_free(&f);
}

/* Every host in one group of SL 0 on the reserved tree (what sarnue check --mcast-all adds). */
static int broadcast_fits(const struct fabric *f, struct routing *r, struct verify_report *v)
{
	struct mcast_tree t;
	struct mcast m;
	uint32_t members[512], n = 0, i;
	int ok = -1;

	for (i = 0; i < f->nendports && n < 512; i++)
		if (!fabric_is_switch(f, f->ports[f->endports[i]].node))
			members[n++] = f->endports[i];
	mcast_init(&m);
	if (mcast_tree_choose(f, &t) == 0 && mcast_begin_group(&m, 0xc000, 0) == 0 &&
	    mcast_tree_group(f, &t, &m, members, n) == 0) {
		mcast_end_group(&m);
		r->mcast = &m;
		if (verify_routing(f, r, v) == 0)
			ok = verify_ok(v) && v->mcast_members == n;
		r->mcast = NULL;
	}
	mcast_tree_free(&t);
	mcast_free(&m);
	return ok;
}

static int route_opts(const char *engine, const struct fabric *f, const char *opts,
		      struct routing *r)
{
	struct sarnue_options o;
	struct engine_result res;
	struct fab_error err = { "" };

	options_defaults(&o);
	if (options_parse_line(&o, opts, "test", 1, NULL, NULL) || routing_init(r, f, engine) ||
	    engine_run(engine, f, &o, r, &res, &err)) {
		fprintf(stderr, "%s %s: %s\n", engine, opts, err.msg);
		return -1;
	}
	return 0;
}

/*
 * An 8x8 torus: Nue (1 and 4 VLs) and DFSSSP (8 VLs, and 2, where its layers overflow and whole
 * destinations are fitted) keep the multicast tree's turns on VL 0, and the group of every host
 * fits; without the reservation the same routings close a credit loop with it.
 */
static void test_reserved_tree(void)
{
	static const char *const runs[][2] = {
		{ "sar-nue", "nue_vls=1" },
		{ "sar-nue", "nue_vls=4" },
		{ "sar-dfsssp", "dfsssp_vls=8" },
		{ "sar-dfsssp", "dfsssp_vls=2" },
	};
	unsigned links[128][2], nl = testfab_torus(links, 8, 8, 1, -1), i, loops = 0;
	struct verify_report v;
	struct routing r;
	struct fabric f;

	CHECK(testfab_build(&f, 64, 2, (const unsigned(*)[2])links, nl, 0) == 0);
	testfab_set_vls(&f, 8);
	for (i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		char opts[64];

		CHECK(route_opts(runs[i][0], &f, runs[i][1], &r) == 0);
		if (broadcast_fits(&f, &r, &v) != 1)
			fprintf(stderr, "%s %s: %s %s\n", runs[i][0], runs[i][1], v.cycle,
				v.first_mcast_problem);
		CHECK(broadcast_fits(&f, &r, &v) == 1);
		routing_free(&r);
		snprintf(opts, sizeof(opts), "%s mcast_reserve=no", runs[i][1]);
		CHECK(route_opts(runs[i][0], &f, opts, &r) == 0);
		loops += broadcast_fits(&f, &r, &v) == 0 && v.cycle_mixed;
		routing_free(&r);
	}
	/* Without it most of them loop (all four on this torus when written). */
	CHECK(loops >= 3);
	fabric_free(&f);
}

/*
 * Groups spread over the top switches of a 4-ary 3-tree (leaves 0..15 with 4 hosts each,
 * middles 16..31, tops 32..47) routed by sar-dmodk and by sar-updn: 16 groups of every host
 * take the 16 top switches one each, every tree descends from its top switch, and all 16
 * together reach every member and close no credit loop with the unicast routes.  Regrouping
 * one group keeps its top switch; a ring is no fat tree and spreads nothing.
 */
static void test_spread_over_tops(void)
{
	static const char *const engines[] = { "sar-dmodk", "sar-updn" };
	unsigned links[8][2], nl = testfab_ring(links, 5), e, g, i;
	struct mcast_spread sp;
	struct verify_report v;
	struct routing r;
	struct fabric f;
	uint32_t members[64], n = 0;

	CHECK(testfab_4ary_3tree(&f) == 0);
	for (i = 0; i < f.nendports; i++)
		if (!fabric_is_switch(&f, f.ports[f.endports[i]].node))
			members[n++] = f.endports[i];
	CHECK(n == 64);
	for (e = 0; e < 2; e++) {
		struct mcast m;
		unsigned used[16] = { 0 };

		CHECK(route_engine(engines[e], &f, &r) == 0);
		CHECK(mcast_spread_init(&sp, &f) == 1);
		CHECK(sp.ntops == 16);
		mcast_init(&m);
		for (g = 0; g < 16; g++) {
			struct mcast_tree t;
			unsigned top = mcast_spread_pick(&sp, (uint16_t)(0xc000 + g));

			CHECK(top < 16 && !used[top]);
			used[top < 16 ? top : 0] = 1;
			CHECK(mcast_spread_tree(&f, &sp, top, &t) == 0);
			CHECK(t.root == sp.tops[top] && sp.tops[top] >= 32);
			/* Descends: one middle per pod below the top switch, and every leaf. */
			CHECK(t.nreached == 1 + 4 + 16);
			CHECK(mcast_begin_group(&m, (uint16_t)(0xc000 + g), 0) == 0);
			CHECK(mcast_tree_group(&f, &t, &m, members, n) == 0);
			mcast_end_group(&m);
			mcast_spread_set(&sp, (uint16_t)(0xc000 + g), top, n);
			mcast_tree_free(&t);
		}
		/* Asked again, a group keeps its top switch (every top carries the same load). */
		CHECK(mcast_spread_pick(&sp, 0xc005) == (unsigned)(sp.group_top[5] - 1));
		r.mcast = &m;
		CHECK(verify_routing(&f, &r, &v) == 0);
		CHECK(v.mcast_groups == 16 && v.mcast_members == 16 * 64);
		CHECK(v.mcast_unreached == 0 && v.mcast_loops == 0);
		CHECK(v.credit_loop_vls == 0 && verify_ok(&v));
		r.mcast = NULL;
		/* A group gone frees its top switch for the next one. */
		g = sp.group_top[3] - 1;
		mcast_spread_set(&sp, 0xc003, UINT32_MAX, 0);
		CHECK(sp.group_top[3] == 0 && sp.load[g] == 0);
		CHECK(mcast_spread_pick(&sp, 0xc010) == g);
		mcast_free(&m);
		mcast_spread_free(&sp);
		routing_free(&r);
	}
	fabric_free(&f);
	CHECK(testfab_build(&f, 5, 1, (const unsigned(*)[2])links, nl, 0) == 0);
	CHECK(mcast_spread_init(&sp, &f) == 0 && sp.ntops == 0);
	fabric_free(&f);
}

int main(void)
{
	test_fat_tree_groups();
	test_mixed_credit_loop();
	test_broken_trees();
	test_tree_order();
	test_reserved_tree();
	test_spread_over_tops();
	return CHECK_RESULT();
}
