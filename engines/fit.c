/*
 * fit.c - first-fit of destinations into acyclic layers (see fit.h).
 *
 * All paths towards one destination form an in-tree, so a destination adds at most one turn per
 * switch: the channel a switch forwards on, followed by the channel the next switch forwards on.
 * Each layer is a complete channel dependency graph from engines/cdg.c, whose dynamic topological
 * order answers "does this turn close a cycle" incrementally.  A destination's turns go in as
 * wet; if one closes a cycle they are all taken out again (removing turns keeps the order
 * valid) and the next layer is tried.
 */
#include <stdlib.h>

#include "engines/cdg.h"
#include "engines/fit.h"
#include "lib/assert.h"

struct fit {
	const struct fabric *f;
	const struct routing *r;
	struct cdg *layer;
	unsigned nlayers;
	uint64_t *added; /* [nswitches]: turns made wet by the current attempt */
	uint32_t nadded;
};

/* The channel switch sw forwards dlid on, FAB_NONE when it delivers or does not route it. */
static uint32_t next_channel(const struct fit *x, const struct cdg *g, uint32_t sw, uint32_t dlid)
{
	const struct fabric *f = x->f;
	uint8_t port;

	sn_assert(sw < f->nswitches && dlid < x->r->lft_len);
	port = routing_lft(x->r, sw)[dlid];

	if (port == 0 || port == FAB_NO_PORT || port > f->nodes[f->switches[sw]].nports)
		return FAB_NONE;
	return cdg_channel_of_port(g, f->nodes[f->switches[sw]].first_port + port);
}

static void undo_attempt(struct fit *x, struct cdg *g, uint64_t failed_turn)
{
	uint32_t i;

	for (i = 0; i < x->nadded; i++)
		g->turn[x->added[i]] = CDG_UNUSED;
	/*
	 * A block through this attempt's turns opens again for the next destination; one through
	 * committed turns alone stays closed, so it is refused again without a search.
	 */
	if (failed_turn != UINT64_MAX && cdg_blocked(g->turn[failed_turn]))
		g->turn[failed_turn] = cdg_unblocked(g->turn[failed_turn]);
	x->nadded = 0;
}

static int try_destination(struct fit *x, struct cdg *g, uint32_t dlid)
{
	uint32_t sw, i;

	x->nadded = 0;
	for (sw = 0; sw < x->f->nswitches; sw++) {
		uint32_t in = next_channel(x, g, sw, dlid), out;
		int rc;

		if (in == FAB_NONE)
			continue;
		out = next_channel(x, g, g->head[in], dlid);
		if (out == FAB_NONE)
			continue;
		rc = cdg_try_add(g, in, out, CDG_WET);
		if (rc < 0) {
			undo_attempt(x, g, cdg_turn_index(g, in, out));
			return -1;
		}
		/* A destination adds at most one turn per switch. */
		sn_assert(x->nadded < x->f->nswitches);
		if (rc > 0)
			x->added[x->nadded++] = cdg_turn_index(g, in, out);
	}
	for (i = 0; i < x->nadded; i++)
		g->turn[x->added[i]] = CDG_USED;
	return 0;
}

static int fit_alloc(struct fit *x, struct fab_error *err)
{
	unsigned l;

	x->layer = calloc(x->nlayers, sizeof(*x->layer));
	x->added = malloc(sizeof(*x->added) * (x->f->nswitches + 1));
	if (!x->layer || !x->added)
		goto fail;
	for (l = 0; l < x->nlayers; l++)
		if (cdg_build(&x->layer[l], x->f))
			goto fail;
	return 0;
fail:
	fab_error_set(err, "out of memory for %u dependency graphs", x->nlayers);
	return -1;
}

static void fit_free(struct fit *x)
{
	unsigned l;

	for (l = 0; x->layer && l < x->nlayers; l++)
		cdg_free(&x->layer[l]);
	free(x->layer);
	free(x->added);
}

static int reserve_turn(void *arg, uint32_t in_port, uint32_t out_port)
{
	struct cdg *g = arg;

	return cdg_try_add(g, cdg_channel_of_port(g, in_port), cdg_channel_of_port(g, out_port),
			   CDG_USED) < 0;
}

int64_t fit_destinations(const struct fabric *f, const struct routing *r, const uint32_t *order,
			 uint32_t n, uint32_t must_fit, unsigned nlayers,
			 const struct mcast_tree *reserve, uint8_t *layer_of, struct fab_error *err)
{
	struct fit x = { .f = f, .r = r, .nlayers = nlayers };
	int64_t placed = -1;
	uint32_t i;
	unsigned l;

	/* layer_of holds a layer in a byte, FIT_NONE apart. */
	sn_assert(nlayers < FIT_NONE);
	for (i = 0; i < r->lft_len; i++)
		layer_of[i] = FIT_NONE;
	if (fit_alloc(&x, err))
		goto out;
	/* The multicast tree's turns first: they form no cycle, and no destination may close one.
	 */
	if (reserve && nlayers && mcast_tree_turns(f, reserve, reserve_turn, &x.layer[0])) {
		fab_error_set(err, "out of memory for the multicast tree's turns");
		goto out;
	}
	placed = 0;
	for (i = 0; i < n; i++) {
		sn_assert(order[i] >= 1 && order[i] < r->lft_len);
		for (l = 0; l < nlayers; l++) {
			if (try_destination(&x, &x.layer[l], order[i]) == 0) {
				layer_of[order[i]] = (uint8_t)l;
				placed++;
				break;
			}
		}
		if (i < must_fit && l == nlayers)
			break;
	}
out:
	fit_free(&x);
	return placed;
}
