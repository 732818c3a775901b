/*
 * nuetest.h - what the unit tests of the Nue engine share: routing a test fabric with Nue into
 * a fresh routing, with options or with k layers and an optional job map; routing and verifying it;
 * comparing two routings; the links of a Kautz graph, shuffled.
 */
#ifndef SARNUE_NUETEST_H
#define SARNUE_NUETEST_H

#include <stdlib.h>
#include <string.h>

#include "engines/nue/nue.h"
#include "fabric/routing.h"
#include "check/verify.h"

static inline int route_with(struct fabric *f, const struct nue_opts *o, struct routing *r,
			     struct nue_report *rep, struct fab_error *err)
{
	if (routing_init(r, f, "sar-nue"))
		return -1;
	return nue_route(f, o, r, rep, err);
}

static inline int route(struct fabric *f, unsigned k, const struct job_map *jm, struct routing *r,
			struct nue_report *rep, struct fab_error *err)
{
	struct nue_opts o = { .vls = k, .jobs = jm };

	return route_with(f, &o, r, rep, err);
}

static inline void route_and_verify(struct fabric *f, unsigned k, const char *what)
{
	struct nue_report rep;
	struct verify_report v;
	struct fab_error err = { "" };
	struct routing r;
	uint32_t lid, lids = 0;

	for (lid = 1; lid <= f->max_lid; lid++)
		lids += f->lid_port[lid] != FAB_NONE;
	if (route(f, k, NULL, &r, &rep, &err)) {
		fprintf(stderr, "%s, k=%u: nue failed: %s\n", what, k, err.msg);
		check_failures++;
		routing_free(&r);
		return;
	}
	CHECK(verify_routing(f, &r, &v) == 0);
	if (!verify_ok(&v)) {
		fprintf(stderr, "%s, k=%u: not verified:\n", what, k);
		verify_print_text(&v, stderr);
		check_failures++;
	}
	/* Every LID, switch LIDs included, is a destination of exactly one layer. */
	CHECK(rep.destinations == lids);
	CHECK(verify_count_bits(v.vls_used) <= k);
	CHECK(r.vls_used == k);
	for (lid = 1; k > 1 && lid <= f->max_lid; lid++)
		CHECK(routing_path_sl(&r, 1, (uint16_t)lid) < k);
	routing_free(&r);
}

/* Same tables, hop counts and path SLs. */
static inline int same_routing(const struct routing *a, const struct routing *b, uint32_t max_lid)
{
	size_t cells = (size_t)a->nswitches * a->lft_len;
	uint32_t lid;

	if (memcmp(a->lft, b->lft, cells) || memcmp(a->hops, b->hops, cells))
		return 0;
	for (lid = 1; lid <= max_lid; lid++)
		if (routing_path_sl(a, 1, (uint16_t)lid) != routing_path_sl(b, 1, (uint16_t)lid))
			return 0;
	return 1;
}

/* The links in a random order (srand(seed)): other port numbers, other ties. */
static inline void shuffle_links(unsigned (*links)[2], unsigned n, unsigned seed)
{
	unsigned i;

	srand(seed);
	for (i = n - 1; i > 0; i--) {
		unsigned j = (unsigned)rand() % (i + 1), a = links[i][0], b = links[i][1];

		links[i][0] = links[j][0];
		links[i][1] = links[j][1];
		links[j][0] = a;
		links[j][1] = b;
	}
}

/*
 * Kautz graph K(d, n) as `sarnue gen kautz` builds it: switch v = a_0 e_1..e_n (offsets as base-d
 * digits) links to a_1 e_2..e_n e for every e.  Returns the number of links.
 */
static inline unsigned kautz_links(unsigned (*links)[2], unsigned d, unsigned n)
{
	unsigned dn = 1, i, v, e, cnt = 0;

	for (i = 0; i < n; i++)
		dn *= d;
	for (v = 0; v < (d + 1) * dn; v++) {
		unsigned off = v % dn, e1 = off / (dn / d), a1 = (v / dn + 1 + e1) % (d + 1);

		for (e = 0; e < d; e++) {
			links[cnt][0] = v;
			links[cnt][1] = a1 * dn + off % (dn / d) * d + e;
			cnt++;
		}
	}
	return cnt;
}

/* Fisher-Yates with rand(): the port numbering of a fabric changes Nue's choices. */
#endif
