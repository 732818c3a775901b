/*
 * cdg.h - the complete channel dependency graph of one virtual layer (thesis definition 6.1),
 * the structure Nue routes in.
 *
 * Vertices are the switch-to-switch channels of the fabric, numbered as the fabric's CSR
 * adjacency (channel i leaves through port sw_adj_port[i]).  Edges are the turns: channel a->b
 * followed by b->c, every turn except the U-turn.  Each turn is unused, used (by a committed
 * route or the escape paths), wet (used by the destination being routed, not yet committed) or
 * blocked (known to close a cycle).  Channels towards and from end nodes are not vertices: a
 * dependency into a delivery or out of an injection channel can never be part of a cycle.
 *
 * Acyclicity of the used turns is kept by a dynamic topological order: a new turn that agrees
 * with the order is accepted in O(1); otherwise a two-way search looks only at the channels
 * between the two in the order, and the side that finishes first moves past the other end.
 * This replaces the thesis' subgraph numbering omega (section 6.2.6.1): it answers the same
 * question, "does this turn close a cycle", and searches a region bounded by the order instead
 * of the whole subgraph.  The order is a linked list whose channels carry increasing labels, so
 * a move relabels only the channels it moves (all of them, evenly spaced, when a gap is full).
 * A search that finds a cycle walks it: if it holds committed turns only, the block lasts (see
 * enum cdg_turn_state), and the same turn is never searched again in the layer.
 */
#ifndef SARNUE_CDG_H
#define SARNUE_CDG_H

#include <stdint.h>

#include "fabric/fabric.h"
#include "fabric/swgraph.h"
#include "lib/assert.h"

/*
 * A block whose cycle holds committed turns only lasts until the layer is reset, as committed turns
 * do; one whose cycle holds wet turns lasts only while they do.  The router undoes the blocks an
 * attempt found when it undoes the attempt: a lasting one then becomes CDG_CLOSED, which the router
 * prices and lists as unused (as it did before the search) but which cdg_try_add refuses without
 * searching again.
 */
enum cdg_turn_state {
	CDG_UNUSED = 0,
	CDG_USED = 1,
	CDG_WET = 2,
	CDG_BLOCKED = 3,	  /* closes a cycle with wet turns */
	CDG_BLOCKED_FOR_GOOD = 4, /* closes a cycle of committed turns */
	CDG_CLOSED = 5,		  /* blocked for good, found by an attempt since undone */
};

static inline int cdg_blocked(uint8_t state)
{
	return state == CDG_BLOCKED || state == CDG_BLOCKED_FOR_GOOD;
}

/* The state a block returns to when the attempt that found it is undone. */
static inline uint8_t cdg_unblocked(uint8_t state)
{
	return state == CDG_BLOCKED_FOR_GOOD ? CDG_CLOSED : CDG_UNUSED;
}

/*
 * The state of one layer: turn states and the order of the channels.  A cdg works on one layer at
 * a time; keeping several lets a destination that meets an impasse in its own layer be routed in
 * another one after all layers are done.
 */
/*
 * A channel's label in the order and what the two-way search notes on it, side by side: the
 * search reads a channel's stamp and label together, one cache line where two arrays took two.
 */
struct cdg_chan {
	uint64_t ord;	 /* label, below 2^40; a before b in the order when ord of a < ord of b */
	uint32_t seen;	 /* stamp of the last search side that reached it (see next_stamp) */
	uint32_t parent; /* the channel that side reached it from */
};

struct cdg_layer {
	uint8_t *turn;
	struct cdg_chan *ch;   /* [nch] */
	uint32_t *next, *prev; /* [nch + 1]: the order as a ring through the sentinel nch */
	uint32_t epoch;	       /* stamps in ch are of the cdg's epoch (see next_stamp) */
};

struct cdg {
	uint32_t nsw, nch;
	const uint32_t *sw_off;	     /* the fabric's CSR offsets: channels leaving switch s */
	struct swgraph sg;	     /* the channels, shared with the SSSP engines */
	const uint32_t *tail, *head; /* [nch]: switches at both ends (sg.from, sg.to) */
	const uint32_t *rev;	     /* [nch]: the channel back over the same link */
	const uint32_t *port_ch;     /* [fabric ports]: channel leaving the port, or FAB_NONE */
	uint32_t *turn_off;	/* [nch + 1]: turns of c are turn_off[c] + (c2 - sw_off[head[c]]) */
	uint32_t *rev_turn_off; /* [nch]: turn_off[rev[c]], for the backward search */
	uint8_t *turn;		/* [nturns]: enum cdg_turn_state (of the selected layer) */
	uint64_t nturns;

	/* Dynamic topological order of the used turns (of the selected layer). */
	struct cdg_chan *ch;	/* [nch]: labels and search notes */
	uint32_t *next, *prev;	/* [nch + 1]: neighbours in the order; nch is the sentinel */
	struct cdg_layer built; /* the state cdg_build allocated */
	struct cdg_layer *cur;	/* the selected layer */
	uint32_t stamp, epoch;	/* last search stamp; times the stamps wrapped */
	uint32_t *fqueue, *bqueue, *fwd, *bwd; /* [nch] scratch for the two-way search */
	uint64_t *keys;			       /* [nch] scratch: moved channels by label */
	uint64_t searches, moves, relabels;    /* statistics */
	uint64_t closed_refusals;	       /* closed turns refused without a search */
};

/* Channels and turns of f's switch graph.  -1 on allocation failure. */
int cdg_build(struct cdg *g, const struct fabric *f);
void cdg_free(struct cdg *g);

/* A layer state for g's channels, every turn unused.  -1 on allocation failure. */
int cdg_layer_alloc(const struct cdg *g, struct cdg_layer *l);
void cdg_layer_free(struct cdg_layer *l);

/* Makes g work on layer l from now on; NULL selects the state cdg_build allocated. */
void cdg_select(struct cdg *g, struct cdg_layer *l);

/* Every turn unused, channels in index order: a fresh layer. */
void cdg_reset(struct cdg *g);

/*
 * Layer l (not the selected one) gets the selected layer's order and no turns: every subset of
 * the selected layer's turns agrees with that order, so adding one never needs a search.
 */
void cdg_layer_start_from(const struct cdg *g, struct cdg_layer *l);

/*
 * Starts the order from ascending key[c] (ties by channel number).  Any order is correct; one
 * that most turns will agree with saves searches.
 */
int cdg_seed_order(struct cdg *g, const uint64_t *key);

static inline uint64_t cdg_turn_index(const struct cdg *g, uint32_t in, uint32_t out)
{
	/* A turn joins two channels at a switch: out leaves the switch in enters. */
	sn_assert(in < g->nch && out < g->nch && g->tail[out] == g->head[in]);
	return g->turn_off[in] + (out - g->sw_off[g->head[in]]);
}

/* True when adding in->out needs no search: it is used or wet, or agrees with the order. */
static inline int cdg_turn_cheap(const struct cdg *g, uint32_t in, uint32_t out)
{
	uint8_t st = g->turn[cdg_turn_index(g, in, out)];

	return st == CDG_USED || st == CDG_WET || g->ch[in].ord < g->ch[out].ord;
}

/*
 * cdg_try_add's slow path, only for an unused turn whose in is labelled above out: searches for a
 * cycle and changes the order.  1 when added, -1 when the turn closes a cycle (it is then blocked,
 * for good if the cycle holds committed turns only).
 */
int cdg_add_searched(struct cdg *g, uint32_t in, uint32_t out, uint8_t state);

/*
 * Marks the turn in->out with state (CDG_USED or CDG_WET) unless it closes a cycle with the used
 * and wet turns.  Returns 1 when the turn was added now, 0 when it already was used or wet, and
 * -1 when it closes a cycle (the turn is then blocked) or is blocked already.  Inline: most turns
 * are decided without the search.
 */
static inline int cdg_try_add(struct cdg *g, uint32_t in, uint32_t out, uint8_t state)
{
	uint64_t t = cdg_turn_index(g, in, out);

	sn_assert(state == CDG_USED || state == CDG_WET);
	if (cdg_blocked(g->turn[t]))
		return -1;
	if (g->turn[t] == CDG_CLOSED) {
		g->turn[t] = CDG_BLOCKED_FOR_GOOD;
		g->closed_refusals++;
		return -1;
	}
	if (g->turn[t] != CDG_UNUSED)
		return 0;
	if (g->ch[in].ord < g->ch[out].ord) {
		g->turn[t] = state;
		return 1;
	}
	return cdg_add_searched(g, in, out, state);
}

/* The channel that leaves through fabric port index port; FAB_NONE for end-node links. */
static inline uint32_t cdg_channel_of_port(const struct cdg *g, uint32_t port)
{
	return g->port_ch[port];
}

/* Independent check (Kahn's algorithm) that the used and wet turns are acyclic; for tests. */
int cdg_is_acyclic(const struct cdg *g);

#endif
