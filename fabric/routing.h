/*
 * routing.h - what a routing engine produces, independent of OpenSM: one LFT per switch, a hop
 * count per LFT entry, the service level of every (source LID, destination LID) path and the
 * SL-to-VL map of every switch (in port, out port) pair.
 *
 * The plugin copies these tables into OpenSM, the dump writers print them for ibdmchk, the
 * loaders fill them from OpenSM's dump files, and the verifier and metrics read them; all through
 * the accessors below, so the representation can grow (per-pair SLs for DFSSSP) without touching
 * the readers.
 */
#ifndef SARNUE_ROUTING_H
#define SARNUE_ROUTING_H

#include "fabric/fabric.h"
#include "fabric/mcast.h"
#include "lib/assert.h"

#define ROUTING_MAX_SL 16

enum routing_sl_mode {
	ROUTING_SL_UNIFORM,  /* every path uses sl_uniform */
	ROUTING_SL_PER_DLID, /* sl_by_dlid[dlid] */
	/*
	 * sl_by_pair[src_sw * lft_len + dlid], src_sw = sl_src_sw[slid]: the switch the source's
	 * packets enter the fabric at.  All end ports behind one switch share the path onward, so
	 * this is as fine as a per-(source LID, destination LID) SL needs to be for
	 * destination-based routing (DFSSSP's virtual layers), in one LFT's worth of memory.
	 */
	ROUTING_SL_PER_SWITCH_DLID,
};

struct routing {
	char engine[32];
	uint32_t nswitches;
	uint32_t lft_len; /* max_lid + 1 of the fabric it was made for */
	uint8_t max_port; /* highest port number of its switches: cheap bound for LFT writes */
	uint8_t *lft;	  /* [nswitches * lft_len], FAB_NO_PORT when not routed */
	uint8_t *hops;	  /* same shape; 0xff when unknown */

	enum routing_sl_mode sl_mode;
	uint8_t sl_uniform;
	uint8_t *sl_by_dlid; /* [lft_len] */
	uint8_t *sl_by_pair; /* [nswitches * lft_len] */
	uint32_t *sl_src_sw; /* [lft_len]: source switch of each LID, FAB_NONE when none */

	/*
	 * SL2VL: one 16-entry map for every switch port pair, or one map used everywhere when
	 * sl2vl is NULL.  Indexing: ((sw * stride + in) * stride + out) * 16 + sl, stride =
	 * sl2vl_stride (max switch ports + 1).
	 */
	uint8_t sl2vl_uniform[ROUTING_MAX_SL];
	uint8_t *sl2vl;
	uint32_t sl2vl_stride;

	unsigned vls_used; /* number of VLs the engine's layers occupy */

	/*
	 * Multicast trees that share the VLs with these routes, NULL when none: the verifier checks
	 * them and adds their dependencies to the unicast ones (fabric/mcast.h).  Not owned.
	 */
	const struct mcast *mcast;

	/*
	 * Set by a caller that wants to know when LFT columns stop changing (the verifier beside
	 * the routing, verify_feed_attach); NULL when nobody listens.  See routing_columns_final.
	 */
	void (*columns_final)(void *arg, uint32_t below);
	void *columns_final_arg;
};

int routing_init(struct routing *r, const struct fabric *f, const char *engine);
void routing_free(struct routing *r);

static inline uint8_t *routing_lft(const struct routing *r, uint32_t sw)
{
	sn_assert(sw < r->nswitches);
	return r->lft + (size_t)sw * r->lft_len;
}

static inline uint8_t *routing_hops(const struct routing *r, uint32_t sw)
{
	sn_assert(sw < r->nswitches);
	return r->hops + (size_t)sw * r->lft_len;
}

/*
 * An engine's promise: from now on the LFT entries of every switch for the LIDs below `below`,
 * and the SL settings, stay as they are.  Calls come from one thread with rising bounds.
 */
static inline void routing_columns_final(const struct routing *r, uint32_t below)
{
	if (r->columns_final)
		r->columns_final(r->columns_final_arg, below);
}

uint8_t routing_path_sl(const struct routing *r, uint16_t slid, uint16_t dlid);

/* False when every source uses the same SL towards a given destination. */
static inline int routing_sl_per_source(const struct routing *r)
{
	return r->sl_mode == ROUTING_SL_PER_SWITCH_DLID;
}
uint8_t routing_sl2vl(const struct routing *r, uint32_t sw, unsigned in_port, unsigned out_port,
		      unsigned sl);

/* The 16-entry map of a port pair in the per-port table (r->sl2vl set, ports < sl2vl_stride). */
static inline uint8_t *routing_sl2vl_map(const struct routing *r, uint32_t sw, unsigned in_port,
					 unsigned out_port)
{
	size_t s = r->sl2vl_stride;

	sn_assert(sw < r->nswitches && in_port < s && out_port < s);
	return r->sl2vl + (((size_t)sw * s + in_port) * s + out_port) * ROUTING_MAX_SL;
}

/* Switches to a full per-port-pair SL2VL table, initialised from sl2vl_uniform. */
int routing_alloc_sl2vl(struct routing *r, const struct fabric *f);

/*
 * Back to one map (sl2vl_uniform) when every switch maps SLs to VLs alike on every pair of
 * ports a route can take (in != out, out != 0): a U-turn only comes with a forwarding loop, and
 * nothing leaves through port 0.  The verifier then walks sources in groups instead of one by
 * one.  1 when collapsed, 0 when the maps differ or there is no table.
 */
int routing_sl2vl_collapse(struct routing *r, const struct fabric *f);

/* Per-destination SL table, initialised to sl_uniform. */
int routing_alloc_sl_by_dlid(struct routing *r);

/*
 * Per-(source switch, destination LID) SL table, initialised to sl_uniform; also fills
 * sl_src_sw from f, the fabric r was made for.
 */
int routing_alloc_sl_by_pair(struct routing *r, const struct fabric *f);

/*
 * A copy of r's LFTs LID by LID: entry (dlid, sw) at [dlid * nswitches + sw].  Walking one
 * destination's in-tree across every switch reads the switch-major table with a cache miss per
 * switch; the copy reads one block.  NULL when it would exceed max_bytes or memory ran out, and
 * the caller then reads r itself.  Only for tables that no longer change.
 */
#define ROUTING_BY_LID_MAX_BYTES (1ull << 30)
uint8_t *routing_lfts_by_lid(const struct routing *r, uint64_t max_bytes);

/* The switch whose LFTs a packet from slid meets first, FAB_NONE when none (see fabric.h). */
uint32_t routing_lid_switch(const struct fabric *f, uint32_t lid);

struct routing_lid_range {
	uint32_t first, last;
};

/*
 * The destination LIDs whose paths differ between a and b, two routings of the same fabric:
 * an LFT entry on some switch or the SL from some source switch.  Written to out as at most max
 * ranges of LIDs, ascending; when there are more, neighbours are merged across the smallest
 * gaps, so a range may also name unchanged LIDs but never misses a changed one.  *changed
 * counts the changed LIDs.  Returns the number of ranges (0: identical), -1 when a and b do not
 * belong to the same fabric or memory ran out.
 */
int routing_changed_lids(const struct routing *a, const struct routing *b,
			 struct routing_lid_range *out, unsigned max, uint32_t *changed);

static inline void routing_set_pair_sl(struct routing *r, uint32_t src_sw, uint32_t dlid,
				       uint8_t sl)
{
	sn_assert(src_sw < r->nswitches && dlid < r->lft_len && sl < ROUTING_MAX_SL);
	r->sl_by_pair[(size_t)src_sw * r->lft_len + dlid] = sl;
}

#endif
