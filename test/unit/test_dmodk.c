/*
 * test_dmodk.c - unit tests of fat-tree recognition and the D-mod-k engine: k-ary n-trees with
 * switches numbered at random (recognition must not lean on the numbering), trees with parallel
 * links, a storage port on a top switch, missing links, LMC 1, and the refusal of a torus.
 * Complete trees must reach the cut bound of the maximum EFI and load every channel with at
 * most one flow of any shift permutation in topology order; every routing passes the verifier.
 * sar-nue must balance the same way when the LIDs are not in topology order (OpenSM's), since
 * it routes in the order the recognised tree gives.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "testfab.h"
#include "check/metrics.h"
#include "check/verify.h"
#include "engines/dmodk/dmodk.h"
#include "engines/nue/nue.h"
#include "engines/dfsssp/dfsssp.h"
#include "fabric/fattree.h"

#define MAX_SW 64
#define MAX_LINKS 512

struct tree_spec {
	unsigned k, n;	      /* k-ary n-tree */
	unsigned hosts;	      /* per leaf */
	unsigned parallel;    /* links between each connected pair */
	unsigned drop;	      /* links left out, taken evenly from the list */
	unsigned top_storage; /* end ports on the first top switch */
	unsigned lmc;
	unsigned perm[MAX_SW]; /* switch numbering: position -> index in the fabric */
};

static unsigned ipow(unsigned b, unsigned e)
{
	unsigned r = 1;

	while (e--)
		r *= b;
	return r;
}

/* Switch (level l, position i) of the butterfly; levels from 0 (leaves). */
static unsigned sw_at(const struct tree_spec *t, unsigned l, unsigned i)
{
	return t->perm[l * ipow(t->k, t->n - 1) + i];
}

/* The k-ary n-tree wiring: a level-l switch's up port c replaces its base-k digit l by c. */
static unsigned tree_links(const struct tree_spec *t, unsigned (*links)[2])
{
	unsigned per = ipow(t->k, t->n - 1), l, i, c, p, n = 0, kept = 0, stride;

	for (l = 0; l + 1 < t->n; l++)
		for (i = 0; i < per; i++)
			for (c = 0; c < t->k; c++) {
				unsigned digit = (i / ipow(t->k, l)) % t->k;
				unsigned j = i + (c - digit) * ipow(t->k, l);

				for (p = 0; p < t->parallel; p++, n++) {
					links[n][0] = sw_at(t, l, i);
					links[n][1] = sw_at(t, l + 1, j);
				}
			}
	if (!t->drop)
		return n;
	stride = n / t->drop;
	for (i = 0; i < n; i++)
		if (i % stride != stride / 2 || i / stride >= t->drop)
			memcpy(links[kept++], links[i], sizeof(links[0]));
	return kept;
}

static int build_tree(struct fabric *f, struct tree_spec *t, unsigned shuffle_seed)
{
	static unsigned links[MAX_LINKS][2];
	unsigned hosts[MAX_SW] = { 0 }, nsw = t->n * ipow(t->k, t->n - 1), i, nl;

	for (i = 0; i < nsw; i++)
		t->perm[i] = i;
	srand(shuffle_seed);
	for (i = nsw - 1; shuffle_seed && i > 0; i--) {
		unsigned j = (unsigned)rand() % (i + 1), x = t->perm[i];

		t->perm[i] = t->perm[j];
		t->perm[j] = x;
	}
	for (i = 0; i < ipow(t->k, t->n - 1); i++)
		hosts[sw_at(t, 0, i)] = t->hosts;
	if (t->top_storage)
		hosts[sw_at(t, t->n - 1, 0)] = t->top_storage;
	nl = tree_links(t, links);
	return testfab_build_hosts(f, nsw, hosts, 0, (const unsigned(*)[2])links, nl, t->lmc);
}

static int route(const struct fabric *f, struct routing *r, struct dmodk_report *rep,
		 const char *what)
{
	struct fab_error err = { "" };
	struct verify_report v;

	CHECK(routing_init(r, f, "sar-dmodk") == 0);
	if (dmodk_route(f, r, rep, &err)) {
		fprintf(stderr, "%s: sar-dmodk failed: %s\n", what, err.msg);
		check_failures++;
		return -1;
	}
	CHECK(verify_routing(f, r, &v) == 0);
	if (!verify_ok(&v)) {
		fprintf(stderr, "%s: not verified:\n", what);
		verify_print_text(&v, stderr);
		check_failures++;
	}
	CHECK(v.unreachable == 0 && v.pairs > 0);
	return 0;
}

/* Highest channel load over all shifts i -> i + s of the terminals in topology order. */
static unsigned worst_shift_load(const struct fabric *f, const struct routing *r,
				 const struct fat_tree *t)
{
	uint32_t *load = calloc(f->nports, sizeof(uint32_t)), n = t->nterminals, s, i, worst = 0;

	for (s = 1; load && s < n; s++) {
		memset(load, 0, sizeof(uint32_t) * f->nports);
		for (i = 0; i < n; i++) {
			uint32_t dst = t->terminals[(i + s) % n];
			uint32_t lid = f->ports[dst].base_lid, hops = 0;
			uint32_t sw = fabric_endport_switch(f, t->terminals[i]);

			while (sw != FAB_NONE && hops++ < 16) {
				const struct fab_node *node = &f->nodes[f->switches[sw]];
				uint32_t p = node->first_port + routing_lft(r, sw)[lid];
				uint32_t next = f->ports[p].remote;

				if (!fabric_is_switch(f, f->ports[next].node))
					break;
				if (++load[p] > worst)
					worst = load[p];
				sw = f->nodes[f->ports[next].node].sw;
			}
		}
	}
	free(load);
	return worst;
}

static uint64_t max_efi(const struct fabric *f, const struct routing *r)
{
	struct metrics_options o;
	struct metrics_efi e;
	uint64_t max;

	metrics_options_default(&o);
	if (metrics_efi(f, r, &o, &e))
		return 0;
	max = e.dist.max;
	metrics_efi_free(&e);
	return max;
}

static void test_recognise_ktree(void)
{
	struct tree_spec ts = { .k = 4, .n = 3, .hosts = 4, .parallel = 1 };
	struct fab_error err = { "" };
	struct fat_tree t;
	struct fabric f;
	uint32_t i;

	CHECK(build_tree(&f, &ts, 7) == 0);
	CHECK(fat_tree_recognise(&f, &t, &err) == 0);
	CHECK(t.levels == 3 && t.nleaves == 16 && t.nterminals == 64 && t.nservice == 0);
	CHECK(t.up_width[1] == 4 && t.up_width[2] == 4);
	CHECK(t.up_parallel[1] == 1 && t.up_parallel[2] == 1);
	CHECK(t.complete && t.missing_links == 0);
	for (i = 0; i < 16; i++) {
		/* The shuffled leaves come back in blocks of the 4 that share their parents. */
		CHECK(t.block[1 * t.nleaves + i] == i - i % 4);
		CHECK(t.block[2 * t.nleaves + i] == 0);
		CHECK(t.level[t.leaves[i]] == 1);
	}
	for (i = 0; i < t.nterminals; i++)
		CHECK(fat_tree_terminal_leaf(&t, &f, i) == t.leaves[i / 4]);
	/* A leaf's 4 hosts send 4 x 60 routes over 4 up links. */
	CHECK(fat_tree_efi_bound(&t, &f) == 60);
	fat_tree_free(&t);
	fabric_free(&f);
}

static void check_complete(struct tree_spec *ts, unsigned seed, const char *what)
{
	struct fab_error err = { "" };
	struct dmodk_report rep;
	struct fat_tree t;
	struct routing r;
	struct fabric f;

	CHECK(build_tree(&f, ts, seed) == 0);
	CHECK(fat_tree_recognise(&f, &t, &err) == 0);
	if (!route(&f, &r, &rep, what)) {
		CHECK(rep.moved == 0 && rep.missing_links == 0);
		CHECK(rep.efi_bound == fat_tree_efi_bound(&t, &f) && rep.efi_bound > 0);
		if (max_efi(&f, &r) != rep.efi_bound) {
			fprintf(stderr, "%s: max EFI %llu, bound %llu\n", what,
				(unsigned long long)max_efi(&f, &r),
				(unsigned long long)rep.efi_bound);
			check_failures++;
		}
		if (worst_shift_load(&f, &r, &t) != 1) {
			fprintf(stderr, "%s: worst shift load %u\n", what,
				worst_shift_load(&f, &r, &t));
			check_failures++;
		}
	}
	routing_free(&r);
	fat_tree_free(&t);
	fabric_free(&f);
}

static void test_complete_trees(void)
{
	struct tree_spec k43 = { .k = 4, .n = 3, .hosts = 4, .parallel = 1 };
	struct tree_spec k33 = { .k = 3, .n = 3, .hosts = 3, .parallel = 1 };
	struct tree_spec k42p = { .k = 4, .n = 2, .hosts = 8, .parallel = 2 };
	struct tree_spec k24 = { .k = 2, .n = 4, .hosts = 2, .parallel = 1 };

	check_complete(&k43, 0, "4-ary 3-tree");
	check_complete(&k43, 11, "4-ary 3-tree, switches shuffled");
	check_complete(&k33, 5, "3-ary 3-tree, switches shuffled");
	check_complete(&k42p, 3, "4-ary 2-tree with 2 links per pair");
	check_complete(&k24, 9, "2-ary 4-tree");
}

/* A link gone: only the routes that crossed it move, and everything still verifies. */
static void test_missing_links(void)
{
	struct tree_spec ts = { .k = 4, .n = 3, .hosts = 4, .parallel = 1, .drop = 3 };
	struct dmodk_report rep;
	struct routing r;
	struct fabric f;

	CHECK(build_tree(&f, &ts, 4) == 0);
	if (!route(&f, &r, &rep, "4-ary 3-tree without 3 links")) {
		CHECK(rep.missing_links == 3);
		CHECK(rep.moved > 0 && rep.moved * 20 < rep.entries);
	}
	routing_free(&r);
	fabric_free(&f);
}

static void test_storage_on_top(void)
{
	struct tree_spec ts = { .k = 4, .n = 3, .hosts = 4, .parallel = 1, .top_storage = 2 };
	struct dmodk_report rep;
	struct routing r;
	struct fabric f;

	CHECK(build_tree(&f, &ts, 2) == 0);
	if (!route(&f, &r, &rep, "4-ary 3-tree with storage on a top switch")) {
		CHECK(rep.levels == 3 && rep.terminals == 64 && rep.service == 2);
		CHECK(rep.missing_links == 0);
	}
	routing_free(&r);
	fabric_free(&f);
}

/* LMC 1: the second LID of a port climbs to another parent than the first. */
static void test_lmc(void)
{
	struct tree_spec ts = { .k = 4, .n = 2, .hosts = 4, .parallel = 1, .lmc = 1 };
	struct dmodk_report rep;
	struct routing r;
	struct fabric f;
	uint32_t p, differ = 0;

	CHECK(build_tree(&f, &ts, 0) == 0);
	if (!route(&f, &r, &rep, "4-ary 2-tree, LMC 1")) {
		uint32_t leaf = 0, far = FAB_NONE;

		for (p = 0; p < f.nports; p++) {
			if (fabric_is_switch(&f, f.ports[p].node) || !f.ports[p].base_lid ||
			    fabric_endport_switch(&f, p) == leaf)
				continue;
			far = f.ports[p].base_lid;
			differ += routing_lft(&r, leaf)[far] != routing_lft(&r, leaf)[far + 1];
		}
		CHECK(far != FAB_NONE && differ > 0);
	}
	routing_free(&r);
	fabric_free(&f);
}

static void test_not_a_tree(void)
{
	static unsigned links[3 * 48][2];
	struct fab_error err = { "" };
	struct dmodk_report rep;
	struct routing r;
	struct fabric f;
	unsigned n = testfab_torus(links, 4, 4, 1, -1);

	CHECK(testfab_build(&f, 16, 2, (const unsigned(*)[2])links, n, 0) == 0);
	CHECK(routing_init(&r, &f, "sar-dmodk") == 0);
	CHECK(dmodk_route(&f, &r, &rep, &err) == -1);
	CHECK(strstr(err.msg, "not a fat tree") != NULL);
	routing_free(&r);
	fabric_free(&f);
}

/* Switches numbered at random: the hosts' LIDs follow that numbering, not the topology. */
static void test_nue_topology_order(void)
{
	struct tree_spec ts = { .k = 4, .n = 3, .hosts = 4, .parallel = 1 };
	struct fab_error err = { "" };
	struct nue_report rep;
	struct fat_tree t;
	struct routing r;
	struct fabric f;
	unsigned k;

	CHECK(build_tree(&f, &ts, 11) == 0);
	CHECK(fat_tree_recognise(&f, &t, &err) == 0);
	testfab_set_vls(&f, 4);
	for (k = 1; k <= 4; k += 3) {
		struct nue_opts o = { .vls = k, .orders = 2 };
		struct verify_report v;

		CHECK(routing_init(&r, &f, "sar-nue") == 0);
		CHECK(nue_route(&f, &o, &r, &rep, &err) == 0);
		CHECK(verify_routing(&f, &r, &v) == 0 && verify_ok(&v));
		CHECK(rep.fallbacks == 0);
		/* On several VLs the single layer reaches the bound and ends the search. */
		CHECK(rep.at_cut_bound == (k > 1));
		CHECK(max_efi(&f, &r) == fat_tree_efi_bound(&t, &f));
		CHECK(worst_shift_load(&f, &r, &t) == 1);
		routing_free(&r);
	}
	fat_tree_free(&t);
	fabric_free(&f);
}

/* The same for sar-dfsssp's own layers: ties and destinations follow the tree, not the GUIDs. */
static void test_dfsssp_topology_order(void)
{
	struct tree_spec ts = { .k = 4, .n = 3, .hosts = 4, .parallel = 1 };
	struct dfsssp_opts o = { .max_vls = 8 };
	struct fab_error err = { "" };
	struct dfsssp_report rep;
	struct verify_report v;
	struct fat_tree t;
	struct routing r;
	struct fabric f;

	CHECK(build_tree(&f, &ts, 11) == 0);
	CHECK(fat_tree_recognise(&f, &t, &err) == 0);
	testfab_set_vls(&f, 8);
	CHECK(routing_init(&r, &f, "sar-dfsssp") == 0);
	if (dfsssp_route(&f, &o, &r, &rep, &err)) {
		fprintf(stderr, "dfsssp on a shuffled 4-ary 3-tree: %s\n", err.msg);
		check_failures++;
	} else {
		CHECK(verify_routing(&f, &r, &v) == 0 && verify_ok(&v));
		CHECK(max_efi(&f, &r) == fat_tree_efi_bound(&t, &f));
		CHECK(worst_shift_load(&f, &r, &t) == 1);
	}
	routing_free(&r);
	fat_tree_free(&t);
	fabric_free(&f);
}

int main(void)
{
	test_recognise_ktree();
	test_complete_trees();
	test_missing_links();
	test_storage_on_top();
	test_lmc();
	test_not_a_tree();
	test_nue_topology_order();
	test_dfsssp_topology_order();
	return CHECK_RESULT();
}
