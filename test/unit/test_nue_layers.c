/*
 * test_nue_layers.c - unit tests of where Nue puts its destinations: switch layers files (the
 * operator's own layers, their errors), the torus blocks that sar-nue uses on a recognised torus
 * or mesh instead of METIS, and the groups of one switch's LIDs that share routes; and a routing
 * stopped because nobody wants it any more.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "engines/nue/nue.h"
#include "fabric/layersfile.h"
#include "testfab.h"
#include "nuetest.h"
#include "check/verify.h"

/* switch_layers_load on text for f with k layers; the error message in err. */
static int load_layers_text(const struct fabric *f, const char *text, unsigned k, uint8_t *sw_layer,
			    uint32_t *unknown, struct fab_error *err)
{
	char path[] = "/tmp/sarnue-layers-XXXXXX";
	int rc;

	if (testfab_write_file(path, text))
		return -2;
	rc = switch_layers_load(f, path, k, sw_layer, unknown, err);
	unlink(path);
	return rc;
}

/* A bad switch layers file names the line and what is wrong, and gives no switch a layer. */
static void switch_layers_errors(const struct fabric *f)
{
	static const struct {
		const char *text, *says;
	} bad[] = {
		{ "sw0 0\nsw1 4\n", ":2: layer 4, but sar-nue routes 4 layers (0..3)" },
		{ "# no layer\nsw1\n", ":2: expected 'SWITCH LAYER'" },
		{ "sw1 x\n", ":1: expected 'SWITCH LAYER'" },
		{ "sw1 1\n\nsw1 1\n", ":3: switch sw1 was given on line 1 already" },
		{ "0x10zz 1\n", ":1: \"0x10zz\" is not a GUID" },
		{ "sw0 1\n0x100000 1\n", ":2: 0x100000 is not a switch but h0.0" },
		{ "# other fabric\nspine9 1\n0x99 2\n", " names none of the fabric's 64 switches" },
	};
	uint8_t *sw_layer = malloc(f->nswitches);
	struct fab_error err;
	uint32_t unknown, i, s;

	for (i = 0; sw_layer && i < sizeof(bad) / sizeof(bad[0]); i++) {
		err.msg[0] = '\0';
		CHECK(load_layers_text(f, bad[i].text, 4, sw_layer, &unknown, &err) == -1);
		if (!strstr(err.msg, bad[i].says))
			printf("layers file error \"%s\" lacks \"%s\"\n", err.msg, bad[i].says);
		CHECK(strstr(err.msg, bad[i].says) != NULL);
		for (s = 0; s < f->nswitches; s++)
			CHECK(sw_layer[s] == SWLAYER_NONE);
	}
	CHECK(switch_layers_load(f, "/nonexistent/layers", 4, sw_layer, &unknown, &err) == -1);
	CHECK(strstr(err.msg, "/nonexistent/layers: No such file") != NULL);
	free(sw_layer);
}

/* Whether the switches of each layer are a block: arcs of the x, y and z rings, 6 positions each.
 */
static int layers_are_blocks(const uint8_t *sw_layer, unsigned nlayers, unsigned per_layer)
{
	unsigned layer, d, s;

	for (layer = 0; layer < nlayers; layer++) {
		unsigned count = 0, span = 1;

		for (d = 0; d < 3; d++) {
			unsigned at[6] = { 0 }, used = 0, starts = 0, p;

			for (s = 0; s < 216; s++) {
				unsigned c[3] = { s % 6, s / 6 % 6, s / 36 };

				if (sw_layer[s] == layer)
					at[c[d]] = 1;
			}
			for (p = 0; p < 6; p++) {
				used += at[p];
				starts += at[p] && !at[(p + 5) % 6];
			}
			if (starts > 1 || used > 3) /* one arc, at most half of the ring */
				return 0;
			span *= used;
		}
		for (s = 0; s < 216; s++)
			count += sw_layer[s] == layer;
		if (count != per_layer || span != per_layer)
			return 0;
	}
	return 1;
}

/*
 * Torus blocks: the 6x6x6 torus, whole and with three links removed, is found with its three
 * rings of six and cut into 2x2x2 blocks of 27 switches, each half of each ring; 8 layers of
 * them route it without a fall-back, deadlock-free.  4 layers cannot cut every ring: METIS
 * splits the destinations, and the report names the torus.  A 4x4x3 torus without a switch is
 * found too (a ring of four is a product of two paths of two), and cut with 4 layers; a 6x6x4
 * torus into 8 equal blocks; a 2D torus with a link missing still has two dimensions.
 * Fabrics that are no torus are left to METIS: random graphs, a Kautz graph, a fat tree, a ring
 * with a chord.  nue_partition=metis keeps METIS on a torus.
 */
static void test_torus_blocks(void)
{
	static unsigned links[3 * 216 + 80][2];
	static const unsigned removed[3] = { 5, 100, 333 };
	struct nue_opts metis = { .vls = 8, .partition = NUE_PARTITION_METIS };
	struct nue_torus shape;
	struct nue_report rep;
	struct fab_error err = { "" };
	struct routing r;
	struct fabric f;
	uint8_t sw_layer[216];
	unsigned n, i, cut;

	for (cut = 0; cut <= 3; cut += 3) {
		n = testfab_torus(links, 6, 6, 6, -1);
		for (i = 0; i < cut; i++) { /* drop links by index, last first */
			memmove(links[removed[cut - 1 - i]], links[removed[cut - 1 - i] + 1],
				sizeof(links[0]) * (n - removed[cut - 1 - i] - 1));
			n--;
		}
		CHECK(testfab_build(&f, 216, 2, (const unsigned(*)[2])links, n, 0) == 0);
		testfab_set_vls(&f, 8);
		memset(sw_layer, 0xff, sizeof(sw_layer));
		CHECK(nue_torus_blocks(&f, 8, sw_layer, &shape) == 1);
		CHECK(shape.dims == 3 && shape.len[0] == 6 && shape.len[1] == 6 &&
		      shape.len[2] == 6);
		CHECK(shape.cuts[0] == 2 && shape.cuts[1] == 2 && shape.cuts[2] == 2);
		CHECK(layers_are_blocks(sw_layer, 8, 27));
		CHECK(nue_torus_blocks(&f, 4, sw_layer, &shape) == 0);
		CHECK(shape.dims == 3 && nue_torus_layers_needed(&shape) == 8);
		CHECK(route(&f, 8, NULL, &r, &rep, &err) == 0);
		CHECK(rep.partitioner && !strcmp(rep.partitioner, "torus blocks"));
		CHECK(rep.torus.dims == 3 && rep.fallbacks == 0);
		for (i = 0; i < 8; i++)
			CHECK(rep.dests_per_layer[i] == 27 * 3);
		routing_free(&r);
		route_and_verify(&f, 8, "6x6x6 torus in blocks");
		CHECK(route_with(&f, &metis, &r, &rep, &err) == 0);
		CHECK(rep.partitioner && !strcmp(rep.partitioner, "metis") && !rep.torus.dims);
		routing_free(&r);
		CHECK(route(&f, 4, NULL, &r, &rep, &err) == 0);
		CHECK(rep.partitioner && !strcmp(rep.partitioner, "metis") && rep.torus.dims == 3);
		routing_free(&r);
		fabric_free(&f);
	}
	n = testfab_torus(links, 4, 4, 3, 3);
	CHECK(testfab_build(&f, 47, 4, (const unsigned(*)[2])links, n, 0) == 0);
	CHECK(nue_torus_blocks(&f, 4, sw_layer, &shape) == 1 &&
	      nue_torus_layers_needed(&shape) == 2);
	CHECK(shape.dims == 5 &&
	      shape.len[0] * shape.len[1] * shape.len[2] * shape.len[3] * shape.len[4] == 48);
	fabric_free(&f);

	/* 6x6x4: the ring of four is two dimensions of two; 8 equal blocks of 18 switches. */
	n = testfab_torus(links, 6, 6, 4, -1);
	CHECK(testfab_build(&f, 144, 1, (const unsigned(*)[2])links, n, 0) == 0);
	CHECK(nue_torus_blocks(&f, 8, sw_layer, &shape) == 1 && shape.dims == 4);
	for (i = 0; i < 8; i++) {
		unsigned s, in_layer = 0;

		for (s = 0; s < 144; s++)
			in_layer += sw_layer[s] == i;
		CHECK(in_layer == 18);
	}
	fabric_free(&f);
	/*
	 * A 2D torus meets each slice of the other dimension in one square: one missing link
	 * leaves two meetings without a square, too few to merge the two dimensions.
	 */
	n = testfab_torus(links, 8, 8, 1, -1);
	memmove(links[5], links[6], sizeof(links[0]) * (n - 6));
	CHECK(testfab_build(&f, 64, 1, (const unsigned(*)[2])links, n - 1, 0) == 0);
	CHECK(nue_torus_blocks(&f, 4, sw_layer, &shape) == 1 && shape.dims == 2);
	CHECK(shape.len[0] == 8 && shape.len[1] == 8 && shape.cuts[0] == 2 && shape.cuts[1] == 2);
	fabric_free(&f);

	n = kautz_links(links, 3, 3);
	CHECK(testfab_build(&f, 108, 1, (const unsigned(*)[2])links, n, 0) == 0);
	CHECK(nue_torus_blocks(&f, 4, sw_layer, &shape) == 0 && shape.dims == 0);
	fabric_free(&f);
	CHECK(testfab_fat_tree(&f, 0) == 0);
	CHECK(nue_torus_blocks(&f, 4, sw_layer, &shape) == 0);
	fabric_free(&f);
	n = testfab_ring(links, 12);
	links[n][0] = 0;
	links[n++][1] = 6;
	CHECK(testfab_build(&f, 12, 1, (const unsigned(*)[2])links, n, 0) == 0);
	CHECK(nue_torus_blocks(&f, 4, sw_layer, &shape) == 0);
	fabric_free(&f);
	srand(3);
	n = testfab_ring(links, 40);
	for (i = 0; i < 60; i++) {
		links[n][0] = (unsigned)rand() % 40;
		links[n][1] = (links[n][0] + 1 + (unsigned)rand() % 39) % 40;
		n++;
	}
	CHECK(testfab_build(&f, 40, 1, (const unsigned(*)[2])links, n, 0) == 0);
	CHECK(nue_torus_blocks(&f, 8, sw_layer, &shape) == 0);
	fabric_free(&f);
}

/*
 * nue_layers=: the layers of a file's switches become those of their destinations, by node
 * description, quoted description or node GUID; switches it does not name take the nearest
 * named one's layer, and switches the fabric lacks are counted.  On the 4x4x4 torus the blocks
 * of half of each ring are routed, deadlock-free, with each destination in its block's layer.
 */
static void test_switch_layers_file(void)
{
	static unsigned links[3 * 64][2];
	unsigned n = testfab_torus(links, 4, 4, 4, -1);
	char text[4096];
	size_t at = 0;
	struct nue_opts o = { .vls = 8 };
	struct nue_report rep;
	struct verify_report v;
	struct fab_error err = { "" };
	struct routing r;
	struct fabric f;
	uint8_t *sw_layer, *part;
	uint32_t unknown = 99, i, s, off_block = 0;

	CHECK(testfab_build(&f, 64, 2, (const unsigned(*)[2])links, n, 0) == 0);
	testfab_set_vls(&f, 8);
	sw_layer = malloc(f.nswitches);
	part = malloc(f.nendports);
	at += (size_t)snprintf(text + at, sizeof(text) - at, "# blocks of 2x2x2\n\n");
	for (i = 0; i < 64; i++) {
		unsigned layer = (i % 4) / 2 + 2 * ((i / 4 % 4) / 2) + 4 * ((i / 16) / 2);

		if (i == 21 || i == 42) /* left for the nearest named switch */
			continue;
		if (i == 5)
			at += (size_t)snprintf(text + at, sizeof(text) - at, "0x%x\t%u\n",
					       0x1000 + i, layer);
		else if (i == 6)
			at += (size_t)snprintf(text + at, sizeof(text) - at, "  \"sw%u\"  %u \r\n",
					       i, layer);
		else
			at += (size_t)snprintf(text + at, sizeof(text) - at, "sw%u %u\n", i, layer);
	}
	snprintf(text + at, sizeof(text) - at, "gone-switch 3\n0xdead 2\n");
	CHECK(sw_layer && part && load_layers_text(&f, text, 8, sw_layer, &unknown, &err) == 0);
	if (err.msg[0])
		printf("layers file: %s\n", err.msg);
	CHECK(unknown == 2);
	for (i = 0; sw_layer && i < 64; i++) {
		s = f.nodes[fabric_find_node_by_guid(&f, 0x1000 + i)].sw;
		CHECK((i == 21 || i == 42) == (sw_layer[s] == SWLAYER_NONE));
	}
	CHECK(part && nue_partition_by_switch(&f, sw_layer, part) == 0);
	o.layers = part;
	CHECK(route_with(&f, &o, &r, &rep, &err) == 0);
	CHECK(rep.partitioner && !strcmp(rep.partitioner, "nue_layers"));
	CHECK(verify_routing(&f, &r, &v) == 0 && verify_ok(&v));
	for (i = 0; part && i < f.nendports; i++) {
		uint32_t port = f.endports[i], node = f.ports[port].node, sw;

		if (!fabric_is_switch(&f, node))
			node = fabric_attached_switch(&f, port);
		sw = f.nodes[node].sw;
		if (sw_layer[sw] == SWLAYER_NONE)
			continue;
		/* Moved fall-backs may leave their block; none do here. */
		off_block += routing_path_sl(&r, 1, f.ports[port].base_lid) != sw_layer[sw];
	}
	CHECK(off_block == rep.moved && rep.fallbacks == 0);
	printf("4x4x4 torus in blocks: %u moved, %u fall-backs\n", rep.moved, rep.fallbacks);
	routing_free(&r);
	/* The two switches left out take the layer of their first named neighbour. */
	for (i = 0; part && i < f.nendports; i++) {
		uint32_t port = f.endports[i], j, first = FAB_NONE;

		if (!fabric_is_switch(&f, f.ports[port].node))
			continue;
		s = f.nodes[f.ports[port].node].sw;
		if (sw_layer[s] != SWLAYER_NONE)
			continue;
		for (j = f.sw_adj_off[s]; j < f.sw_adj_off[s + 1]; j++) {
			uint32_t nb = f.nodes[f.ports[f.ports[f.sw_adj_port[j]].remote].node].sw;

			if (sw_layer[nb] != SWLAYER_NONE && (first == FAB_NONE || nb < first))
				first = nb;
		}
		CHECK(first != FAB_NONE && part[i] == sw_layer[first]);
	}
	/* A layer the VLs lack is refused before routing. */
	part[0] = 8;
	CHECK(route_with(&f, &o, &r, &rep, &err) == -1);
	CHECK(strstr(err.msg, "is given layer 8, but there are 8") != NULL);
	routing_free(&r);
	switch_layers_errors(&f);
	free(sw_layer);
	free(part);
	fabric_free(&f);
}
/* The switch a terminal LID hangs off, or FAB_NONE for a switch's own LID. */
static uint32_t terminal_switch(const struct fabric *f, uint32_t lid)
{
	uint32_t p = f->lid_port[lid];

	if (p == FAB_NONE || fabric_is_switch(f, f->ports[p].node))
		return FAB_NONE;
	return fabric_endport_switch(f, p);
}

/* Terminal LIDs whose routes, from every switch but their own, are a lower LID's of it. */
static uint32_t lids_sharing_routes(const struct fabric *f, const struct routing *r)
{
	uint32_t a, b, s, sw, cnt = 0;

	for (b = 1; b <= f->max_lid; b++) {
		sw = terminal_switch(f, b);
		for (a = 1; sw != FAB_NONE && a < b; a++) {
			if (terminal_switch(f, a) != sw)
				continue;
			for (s = 0; s < r->nswitches; s++)
				if (s != sw && routing_lft(r, s)[a] != routing_lft(r, s)[b])
					break;
			if (s == r->nswitches) {
				cnt++;
				break;
			}
		}
	}
	return cnt;
}

/*
 * Routes f with one VL and nue_group=group (threads as given), verifies the tables, and checks
 * that every LID the report counts as grouped shares the routes of another LID of its switch.
 * The number grouped is returned.
 */
static uint32_t route_grouped(struct fabric *f, enum nue_group group, unsigned threads,
			      struct routing *r)
{
	struct nue_opts o = {
		.no_mcast_tree = 1, .vls = 1, .orders = 2, .group = group, .threads = threads
	};
	struct fab_error err = { "" };
	struct nue_report rep;
	struct verify_report v;

	CHECK(route_with(f, &o, r, &rep, &err) == 0);
	CHECK(verify_routing(f, r, &v) == 0 && verify_ok(&v));
	CHECK(lids_sharing_routes(f, r) >= rep.grouped);
	return rep.grouped;
}

/*
 * nue_group: with one VL the LIDs of one switch's terminals share the routes of the first of
 * them, in the first pass and through the rebalancing pass, and the tables stay deadlock-free.
 * A 5x5x5 torus without switch 7 (4 hosts per switch) and a random graph of 40 switches: with
 * yes, every switch's LIDs but one are grouped (3 per switch on the torus), on one thread or two
 * with the same tables; with no, or auto below NUE_GROUP_FROM end ports, none; on a fat tree never.
 */
static void test_groups(void)
{
	static unsigned links[3 * 125 + 60][2];
	struct routing a, b;
	struct fabric f;
	uint32_t grouped, i;
	unsigned n = testfab_torus(links, 5, 5, 5, 7);

	CHECK(testfab_build(&f, 124, 4, (const unsigned(*)[2])links, n, 0) == 0);
	grouped = route_grouped(&f, NUE_GROUP_YES, 2, &a);
	CHECK(grouped > 0 && grouped <= 124 * 3);
	CHECK(lids_sharing_routes(&f, &a) == 124 * 3);
	CHECK(route_grouped(&f, NUE_GROUP_YES, 1, &b) == grouped);
	CHECK(same_routing(&a, &b, f.max_lid));
	routing_free(&a);
	routing_free(&b);
	CHECK(route_grouped(&f, NUE_GROUP_NO, 2, &a) == 0);
	CHECK(lids_sharing_routes(&f, &a) < 124 * 3);
	routing_free(&a);
	CHECK(route_grouped(&f, NUE_GROUP_AUTO, 2, &a) == 0);
	routing_free(&a);
	fabric_free(&f);

	srand(3);
	n = testfab_ring(links, 40);
	for (i = 0; i < 60; i++) {
		links[n][0] = (unsigned)rand() % 40;
		links[n][1] = (unsigned)rand() % 40;
		n += links[n][0] != links[n][1];
	}
	CHECK(testfab_build(&f, 40, 3, (const unsigned(*)[2])links, n, 0) == 0);
	CHECK(route_grouped(&f, NUE_GROUP_YES, 2, &a) > 0);
	routing_free(&a);
	fabric_free(&f);

	CHECK(testfab_4ary_3tree(&f) == 0);
	CHECK(route_grouped(&f, NUE_GROUP_YES, 2, &a) == 0);
	routing_free(&a);
	fabric_free(&f);
}

/* Routes f with k layers, each once, and nue_group=group; verified; the report in rep. */
static void route_layers_grouped(struct fabric *f, unsigned k, enum nue_group group,
				 struct nue_report *rep)
{
	struct nue_opts o = { .no_mcast_tree = 1, .vls = k, .layer_tries = 1, .group = group };
	struct fab_error err = { "" };
	struct verify_report v;
	struct routing r;

	CHECK(route_with(f, &o, &r, rep, &err) == 0);
	CHECK(verify_routing(f, &r, &v) == 0 && verify_ok(&v));
	routing_free(&r);
}

/*
 * With several layers the LIDs of a switch share routes in the first pass (the rebalancing pass
 * then routes them one by one), and a destination that fell back and no other layer takes joins
 * a switch mate's routes in the mate's layer.  Kautz graph K(3,3) with 4 hosts per switch and
 * shuffled ports, 2 to 8 layers routed once each: every routing verified, every switch's other
 * LIDs grouped in some layer; with the ports of seed 14 and 2 layers one fall-back joins a mate
 * and none is left, where without groups none joins.
 */
static void test_groups_layers(void)
{
	static unsigned links[108 * 3][2];
	unsigned n = kautz_links(links, 3, 3), seed, k;
	struct nue_report rep;
	struct fabric f;

	for (seed = 1; seed <= 14; seed++) {
		shuffle_links(links, n, seed);
		CHECK(testfab_build(&f, 108, 4, (const unsigned(*)[2])links, n, 0) == 0);
		testfab_set_vls(&f, 8);
		for (k = 2; k <= 8; k *= 2) {
			route_layers_grouped(&f, k, NUE_GROUP_YES, &rep);
			CHECK(rep.grouped > 200 && rep.grouped <= 108 * 3);
		}
		fabric_free(&f);
	}
	CHECK(testfab_build(&f, 108, 4, (const unsigned(*)[2])links, n, 0) == 0);
	testfab_set_vls(&f, 2);
	route_layers_grouped(&f, 2, NUE_GROUP_YES, &rep);
	CHECK(rep.joined == 1 && rep.fallbacks == 0);
	route_layers_grouped(&f, 2, NUE_GROUP_NO, &rep);
	CHECK(rep.joined == 0 && rep.grouped == 0);
	fabric_free(&f);
}

/*
 * With one VL, where one order's LFT and hop tables exceed two_orders_max_bytes, the second
 * order is not routed: the report says so and the tables are those of nue_orders=1.
 * A 5x5x5 torus without switch 2, 2 hosts per switch, where by default the second order wins.
 */
static void test_one_order_for_memory(void)
{
	static unsigned links[3 * 125][2];
	struct nue_opts two = { .no_mcast_tree = 1, .vls = 1, .orders = 2 }, one = two, small = two;
	struct fab_error err = { "" };
	struct nue_report rep;
	struct routing a, b, c;
	struct fabric f;
	unsigned n = testfab_torus(links, 5, 5, 5, 2);

	one.orders = 1;
	small.two_orders_max_bytes = 1;
	CHECK(testfab_build(&f, 124, 2, (const unsigned(*)[2])links, n, 0) == 0);
	CHECK(route_with(&f, &two, &a, &rep, &err) == 0);
	CHECK(!rep.one_order_for_memory && rep.second_order);
	CHECK(route_with(&f, &small, &b, &rep, &err) == 0);
	CHECK(rep.one_order_for_memory && !rep.second_order);
	CHECK(route_with(&f, &one, &c, &rep, &err) == 0);
	CHECK(same_routing(&b, &c, f.max_lid) && !same_routing(&a, &b, f.max_lid));
	routing_free(&a);
	routing_free(&b);
	routing_free(&c);
	fabric_free(&f);
}

/* A routing nobody wants any more (nue_opts.stop set) ends with an error, on one thread or two. */
static void test_stop(void)
{
	static unsigned links[3 * 48][2];
	unsigned n = testfab_torus(links, 4, 4, 3, -1), threads, k;
	struct nue_report rep;
	struct fab_error err = { "" };
	struct routing r;
	struct fabric f;
	int stop = 0;

	CHECK(testfab_build(&f, 48, 2, (const unsigned(*)[2])links, n, 0) == 0);
	testfab_set_vls(&f, 4);
	for (threads = 1; threads <= 2; threads++) {
		for (k = 1; k <= 4; k += 3) {
			struct nue_opts o = { .vls = k, .threads = threads, .no_mcast_tree = 1 };

			o.stop = &stop;
			stop = 0;
			CHECK(route_with(&f, &o, &r, &rep, &err) == 0);
			routing_free(&r);
			stop = 1;
			CHECK(route_with(&f, &o, &r, &rep, &err) == -1);
			CHECK(strstr(err.msg, "no longer needed") != NULL);
			routing_free(&r);
		}
	}
	fabric_free(&f);
}

int main(void)
{
	test_stop();
	test_switch_layers_file();
	test_torus_blocks();
	test_groups();
	test_groups_layers();
	test_one_order_for_memory();
	return CHECK_RESULT();
}
