/*
 * test_verify.c - the verifier must catch what it exists for: a credit loop (ring routed
 * clockwise), its disappearance when SL2VL puts the two halves on different VLs, unreachable
 * destinations, forwarding loops; and it must pass a correct routing and count hops right.
 */
#include <string.h>

#include "check.h"
#include "testfab.h"
#include "verify.h"

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
		for (out = 0; out < r.sl2vl_stride; out++) {
			size_t base = ((size_t)0 * r.sl2vl_stride + in) * r.sl2vl_stride + out;

			r.sl2vl[base * ROUTING_MAX_SL + 1] = in == 3 ? 1 : 0;
		}
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

int main(void)
{
	test_credit_loop_found();
	test_cycle_across_vls();
	test_unreachable_and_forwarding_loop();
	return CHECK_RESULT();
}
