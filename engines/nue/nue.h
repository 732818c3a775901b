/*
 * nue.h - Nue routing (thesis chapter 6): deadlock-free destination-based routing on any
 * topology within k virtual layers, computed inside the complete channel dependency graph of each
 * layer.  The engine behind `sar-nue`; it works on the fabric model only.
 */
#ifndef SARNUE_NUE_H
#define SARNUE_NUE_H

#include "fabric/fabric.h"
#include "fabric/jobmap.h"
#include "fabric/traffic.h"
#include "fabric/routing.h"
#include "lib/progress.h"

#define NUE_MAX_VLS 15
#define NUE_LAYER_TRIES_MAX 6	      /* routings of a layer with fall-backs; see nue_layer_tries */
#define NUE_FEW_FALLBACKS_PERCENT 5   /* of a layer's destinations: tries wait for moves */
#define NUE_DEFER_TRIES_FROM 1000     /* destinations of a layer: its tries cost seconds */
#define NUE_ONE_LAYER_ALONE_FROM 2048 /* LIDs of a tree-like fabric: see one_layer_alone */
#define NUE_GROUP_FROM 20000	      /* end ports: nue_group=auto groups one VL; see nue.c */
#define NUE_GROUP_LAYERS_FROM 4096    /* end ports: nue_group=auto groups k > 1 layers; nue.c */
#define NUE_TWO_ORDERS_MAX_BYTES (512ull << 20) /* one order's LFT and hop tables; workers.c */

struct cpu_gate;

/* A torus or mesh found in the switch graph, and how nue_torus_blocks() cut it. */
#define NUE_TORUS_MAX_DIMS 8
struct nue_torus {
	unsigned dims;			   /* 0: not a torus or mesh */
	uint32_t len[NUE_TORUS_MAX_DIMS];  /* positions per dimension */
	unsigned cuts[NUE_TORUS_MAX_DIMS]; /* arcs, product at most k; all 0: no blocks */
};

/* How the destinations are split into layers when nue_opts.layers is NULL. */
enum nue_partitioner {
	NUE_PARTITION_AUTO,  /* torus blocks on a torus or mesh, else METIS */
	NUE_PARTITION_METIS, /* METIS (the built-in fallback without it) on any fabric */
};

/* Whether one switch's LIDs share routes; see groups_lids (nue.c). */
enum nue_group {
	NUE_GROUP_NO,
	NUE_GROUP_AUTO,
	NUE_GROUP_YES
};

struct nue_opts {
	unsigned vls;		    /* k, 1..15 */
	const struct job_map *jobs; /* bound to the fabric, or NULL */
	/*
	 * Measured demand (bound) for the job phase: a source weighs its traffic_weight()
	 * towards the destination instead of its LID count, at least traffic_floor (see
	 * dfsssp_opts).  NULL: uniform.
	 */
	const struct traffic *traffic;
	unsigned traffic_floor;
	int skip_rebalance;   /* no final pass against the final weights (faster) */
	unsigned threads;     /* 0: two when two CPUs are online, else one; 1 or 2 */
	unsigned orders;      /* one layer: 2 also routes ties by descending LID; else 1 */
	enum nue_group group; /* a switch's terminals' LIDs share routes; see nue.c */
	unsigned layer_tries; /* k > 1: routings of a layer with fall-backs, 1..6 (0: 6) */
	/* layers of this many destinations leave few fall-backs to moves (0: NUE_DEFER_TRIES_FROM)
	 */
	uint32_t defer_tries_from;
	/* tree-like fabrics of this many LIDs keep a shortest single layer alone (0: default) */
	uint32_t one_layer_alone_from;
	/* one order alone when its LFT and hop tables exceed this (0: NUE_TWO_ORDERS_MAX_BYTES) */
	uint64_t two_orders_max_bytes;
	struct cpu_gate *spare_cpu; /* opened when no helper thread of ours needs the 2nd CPU */
	const uint8_t *layers; /* layer of each of f->endports (0..vls-1), or NULL: partition */
	enum nue_partitioner partition; /* without layers */
	int no_mcast_tree;		/* layer 0 keeps no multicast tree (engines/nue/mctree.c) */
	/*
	 * With one VL and the multicast tree: the LIDs with kept_lid[lid] != 0 keep their columns
	 * of kept (another engine's routes, same fabric), whose turns go into the layer before any
	 * route and whose loads into the balancing weights; Nue routes the other LIDs around them.
	 * Their turns must form no cycle with the multicast tree's (fit_destinations with it
	 * reserved).  NULL: Nue routes every LID.
	 */
	const struct routing *kept;
	const uint8_t *kept_lid; /* [max_lid + 1] */
	/* destinations routed in a pass; from the calling thread only, NULL: nobody listens */
	const struct progress_hook *progress;
	/*
	 * Set (by another thread, read atomically) when the routing is no longer wanted: nue_route
	 * then returns -1 within one destination's routing.  NULL: it always runs to the end.
	 */
	const int *stop;
};

/* Why one layer's routes, spread over the VLs, won with k > 1 (nue_report.single_layer). */
enum {
	NUE_ONE_LAYER_SHORTEST = 1,	   /* every CA pair on a shortest path */
	NUE_ONE_LAYER_FEWER_FALLBACKS = 2, /* fewer fall-backs and lower maximum EFI than k */
};

struct nue_report {
	unsigned vls;
	const char *partitioner; /* "metis", "torus blocks", "breadth-first blocks", ... */
	struct nue_torus torus;	 /* with "torus blocks": the torus and its cuts */
	uint32_t destinations;
	uint32_t kept; /* LIDs of nue_opts.kept_lid, routed by the caller's engine */
	uint32_t dests_per_layer[NUE_MAX_VLS];
	uint64_t root_guid[NUE_MAX_VLS];
	uint32_t fallbacks;			   /* destinations routed on the escape paths */
	uint32_t fallbacks_per_layer[NUE_MAX_VLS]; /* of them, by the layer (VL) they ended in */
	uint32_t backtracks;			   /* successful local backtracking steps */
	uint32_t second_attempts; /* impasses solved by routing again with few new turns */
	uint32_t aside_attempts;  /* impasses solved only by letting switches move aside */
	uint32_t shortcuts;	  /* routes improved through former island switches */
	uint32_t moved_aside;	  /* settled switches moved to let a neighbour through */
	uint32_t job_destinations;
	uint32_t moved;		    /* impasses routed in another layer than the partition's */
	uint32_t moved_as_previous; /* of them, in the layer the fall-back before took */
	uint32_t layers_rerouted;   /* layers a later try routed with fewer fall-backs */
	uint32_t layers_deferred;   /* layers kept after one try, fall-backs left to moves */
	uint32_t passes_again; /* first passes routed again with every try, moves falling short */
	uint32_t rerouted;     /* destinations whose routes the final pass changed */
	uint32_t grouped;      /* took the routes of the LID before them at their switch */
	uint32_t joined;       /* fell back, moved to no layer, took a switch mate's routes */
	uint32_t vl_rerouted;  /* one layer over k VLs: routed again in their VL alone */
	int single_layer;      /* k > 1: NUE_ONE_LAYER_* when one layer's routes won */
	int second_order;      /* k = 1: equally far destinations by descending LID won */
	int one_order_for_memory; /* k = 1: the second order's tables would exceed the limit */
	int by_lid;		  /* destinations by LID alone (tree-like fabric, see nue.c) */
	int at_cut_bound;    /* k > 1, complete fat tree: the single layer reached the cut bound */
	int one_layer_alone; /* k > 1, large tree-like fabric: the shortest single layer kept */
	int switch_lids_unweighted; /* no switch LID's routes counted in the weights */
	/* k > 1 on two threads: layer roots chosen once for both weight candidates */
	uint32_t roots_shared;
	uint64_t cycle_searches;  /* turns that needed a search of the dependency graph */
	uint64_t searches_spared; /* turns refused unsearched: they close a committed cycle */
};

/*
 * Fills r (prepared by routing_init for f) with Nue's tables: LFTs and hops for every LID, the
 * layer of each destination LID as its SL, and SL i -> VL i.  Returns 0, or -1 with err saying
 * why (no switches, a disconnected switch, a LID without a link, more layers than VLs).
 */
int nue_route(const struct fabric *f, const struct nue_opts *o, struct routing *r,
	      struct nue_report *rep, struct fab_error *err);

/*
 * Destination layers: part[i] in 0..k-1 for each of the n end ports in f->endports.  With
 * NUE_PARTITION_AUTO on a torus or mesh, its blocks (nue_torus_blocks, torus filled in; else
 * torus->dims is 0); otherwise METIS k-way partitioning of the port graph when available, else
 * contiguous blocks of a breadth-first order.  Returns the name of the method used, NULL on
 * allocation failure.
 */
const char *nue_partition(const struct fabric *f, unsigned k, enum nue_partitioner how,
			  uint8_t *part, struct nue_torus *torus);

/*
 * When the switch graph is a torus or mesh (a Cartesian product of rings and paths, a few links
 * or switches missing allowed), the layer of each switch: blocks made of equal arcs of each
 * dimension.  1 when found and k layers cut every ring of three or more positions
 * (sw_layer[f->nswitches] and shape filled); 0 when not a torus or mesh (shape->dims 0), or
 * when k is too small for that (shape filled, sw_layer not); -1 on allocation failure.
 */
int nue_torus_blocks(const struct fabric *f, unsigned k, uint8_t *sw_layer,
		     struct nue_torus *shape);

/* Layers that cut every ring of three or more positions of shape in two: 2^those rings. */
unsigned nue_torus_layers_needed(const struct nue_torus *shape);

/*
 * Destination layers from the layers of some switches (nue_layers=): part[i] for each end port
 * in f->endports is the layer of its switch.  sw_layer[s] is 0..k-1, or SWLAYER_NONE
 * (swlayers.h) for a switch without one, which takes the layer of the nearest switch with one
 * (breadth-first from those, in switch index order; layer 0 when none is reachable).  Returns
 * 0, -1 on allocation failure.
 */
int nue_partition_by_switch(const struct fabric *f, const uint8_t *sw_layer, uint8_t *part);

/*
 * Root of a layer's escape paths: the switch of highest betweenness centrality inside the convex
 * subgraph of the destination switches (thesis algorithm 6.1 and Brandes' algorithm).
 * dest_count[s] is the number of the layer's destinations at switch s.  With candidate, only
 * switches with candidate[s] != 0 may win (the hull must contain one).
 */
uint32_t nue_central_switch(const struct fabric *f, const uint32_t *dest_count,
			    const uint32_t *candidate);

#endif
