/*
 * nue_private.h - the state of one Nue routing (struct nue) and the functions the parts of the
 * engine share.  Private to engines/nue/: nothing outside this folder includes it; the engine's
 * interface is nue.h, used by engines/dispatch.c and engines/planes.c.
 *
 * The parts: search.c finds the routes towards one destination in the selected layer's channel
 * dependency graph (modified Dijkstra, backtracking, escape paths); destination.c routes and
 * commits one destination LID; setup.c allocates and indexes; nue.c drives the layers and the
 * candidate routings; rebalance.c is the final pass; vlsplit.c and shorten.c spread one layer
 * over k VLs and shorten the routes there; workers.c runs a second candidate on a thread.
 */
#ifndef SARNUE_NUE_PRIVATE_H
#define SARNUE_NUE_PRIVATE_H

#include <pthread.h>
#include <stdint.h>

#include "engines/cdg.h"
#include "engines/mcasttree.h"
#include "engines/nue/nue.h"
#include "lib/minheap.h"

#define INF_DIST UINT64_MAX
#define AT_DEST (FAB_NONE - 1) /* out[] of the destination switch: delivery, no dependency */

/* Which switch LIDs' routes add to the balancing weights; see weighs(). */
enum sw_weights {
	SWW_ALL,
	SWW_CA_SWITCHES,
	SWW_NONE,
};

struct turn_list {
	uint32_t *turn;
	uint32_t n, cap;
};

/* What routing one layer changes outside its own dependency graph and tables. */
struct layer_mark {
	uint64_t *w_all, *w_job, *efi; /* [nch] */
	uint64_t score_hops;
	uint32_t nfell_back;
	struct nue_report rep;
};

struct nue {
	const struct fabric *f;
	const struct nue_opts *o;
	struct routing *r;
	struct nue_report *rep;
	struct cdg g;
	uint32_t nsw, nch;
	unsigned k;

	uint32_t *lid_sw;    /* [max_lid + 1]: delivering switch, FAB_NONE if no LID */
	uint8_t *lid_exit;   /* [max_lid + 1]: port out of that switch, 0 for its own LID */
	uint8_t *lid_layer;  /* [max_lid + 1]: layer (SL) a LID is routed in */
	uint8_t *home_layer; /* [max_lid + 1]: its layer from the partition */
	uint8_t *escaped;    /* [max_lid + 1]: routed on the escape paths */
	uint8_t *part;	     /* [nendports] */
	uint32_t *dest, ndest;
	uint64_t *keys;	      /* [max_lid + 1] sort keys */
	uint64_t *ch_key;     /* [nch]: initial order of the dependency graph */
	uint32_t *dest_count; /* [nsw]: destinations of the current layer per switch */
	uint32_t *ca_count;   /* [nsw]: the CA and router LIDs among them */
	uint32_t nca;	      /* their sum */

	uint64_t *w_all, *w_job; /* [nch] channel weights; w_job only for the job phase */
	uint32_t *src_lids;	 /* [nsw]: LIDs that send from each switch */
	/*
	 * [nsw]: the LIDs that add weight, src_lids at switches with terminals, 0 elsewhere.  A
	 * switch without terminals sends management traffic only; weighing its routes tilted the
	 * choice between equal up ports of fat trees differently at every switch, so that one
	 * destination's routes split over several down links into its leaf and the next found
	 * none free (8-ary 3-tree: maximum EFI 824, now 504, the bound).
	 */
	uint32_t *ca_lids;
	uint8_t *has_ca;    /* [nsw]: CAs or routers attached */
	uint32_t *ca_ports; /* [nsw]: CA and router ports attached */
	enum sw_weights sw_weights;
	uint64_t *efi;	     /* [nch]: routes between CA ports per channel, for the score */
	uint64_t score_hops; /* their hops (switch to switch) */
	uint32_t *job_off;   /* job phase: [njobs + 1] CSR over (switch, LIDs) pairs */
	uint32_t *job_sw, *job_lids;

	/* With k > 1: every layer's dependency graph and escape tree, kept to the end. */
	struct cdg_layer *layer_cdg;	 /* [k] */
	uint32_t *layer_esc_up;		 /* [k * nsw] */
	uint32_t *layer_root;		 /* [k]: each layer's root once chosen, else FAB_NONE */
	struct shared_roots *roots;	 /* shared with the other candidate's thread, or NULL */
	uint32_t *fell_back, nfell_back; /* LIDs on escape paths, for move_fallbacks() */
	struct layer_mark mark;		 /* the run before the current layer's first try */

	uint32_t root;
	uint64_t w_init;	    /* initial channel weight: one hop */
	uint64_t new_turn_cost;	    /* added to a route per turn it adds; see nue_try_route */
	uint64_t impasse_turn_cost; /* new_turn_cost of first attempts; see nue_try_route */
	uint64_t sources;	    /* LIDs that send, over the fabric */
	int no_search;		    /* take only turns that need no search; see nue_route_lid */
	int move_aside;		    /* settled switches may move aside; see move_aside */
	int need_shortest; /* give up at a CA route that is not shortest; see nue_route_lid */
	/* Equally far destinations by descending LID; see nue_route_one_layer. */
	int ties_descending;
	int deferred_any;    /* some layer of some candidate skipped its tries */
	int no_deferral;     /* route_layer_best makes every try: a candidate routed again */
	int by_lid;	     /* destinations by LID alone, not far-first; see order_far_first */
	int group_lids;	     /* a switch's LIDs share routes; see groups_lids (nue.c) */
	uint32_t *topo_rank; /* [lid]: place in a fat tree's topology order, or NULL */
	/*
	 * On a recognised fat tree, the heap item of each switch and back (see topology_rank in
	 * setup.c): equally far switches settle by parent digit, not by GUID.  NULL: identity.
	 */
	uint32_t *heap_item, *heap_sw;
	uint64_t efi_bound;	 /* a complete fat tree's cut bound of the maximum EFI, else 0 */
	struct order_race *race; /* the other order, still running; see nue_route_one_layer */
	uint32_t *hop;		 /* [nsw]: hops to switch hop_root (nue_hops_to) */
	uint32_t hop_root;	 /* whose hops hop holds, FAB_NONE before the first */
	uint32_t *esc_up;	 /* [nsw]: tree channel towards the root */
	uint32_t *esc_sub, *esc_order, *esc_child_off, *esc_child;
	/*
	 * The multicast tree (engines/mcasttree.h), layer 0's escape tree: every turn of it stays
	 * used in layer 0, SL 0 and VL 0, so multicast groups of SL 0 fit beside the routes.
	 * mc_up: [nsw] channel towards the root; mc_order: breadth first.
	 */
	struct mcast_tree mc;
	uint32_t *mc_up, *mc_order;

	uint64_t *dist;
	uint32_t *out;
	uint32_t *kept_out; /* [nsw]: routes a rebalancing step may return to */
	uint32_t *group;    /* [max_lid + 1]: LIDs rerouted together (rebalance.c) */
	uint64_t efi_cap;   /* no channel's EFI may exceed it after a rebalancing step */
	uint8_t *done;
	struct minheap heap;
	struct turn_list wet, blocked, attempt;
	uint32_t *depth, *acc, *scratch, *children, *seen;
	uint32_t *topo; /* [nsw]: see nue_compute_depths */
	uint32_t stamp;
	uint64_t *cand;
	uint32_t cand_cap;
	/* A backtracking step's moves per reached switch (search.c, list_moves). */
	uint32_t *move_first, *move_ch; /* [nsw], [nch] */
	uint64_t *move_cost;		/* [nch] */
	uint8_t *move_count;		/* [nsw]: a switch has fewer than 256 ports */
	int expensive_checks;		/* sn_expensive_checks() when the routing started */
};

/* What nue_better() compares. */
struct nue_score {
	uint32_t fallbacks;
	uint64_t efi, hops;
};

enum race_state {
	RACE_OPEN,   /* the other order's first pass still runs */
	RACE_WON,    /* n's first pass scored better or equal */
	RACE_LOST,   /* the other's scored better */
	RACE_FAILED, /* the other failed (its error is in its worker) */
};

struct nue_worker;

/* n's first pass is done, the other order's may not be; see nue_route_one_layer. */
struct order_race {
	struct nue_worker *other;
	int other_thread; /* the other runs on a thread of its own, to be joined */
	struct nue_score mine;
	enum race_state state;
};

/*
 * The roots of layers 1..k-1, chosen once for both weight candidates of route_best, which share
 * the partition; see nue_shared_root (workers.c).
 */
struct shared_roots {
	pthread_mutex_t lock;
	pthread_cond_t chosen;
	uint8_t state[NUE_MAX_VLS]; /* ROOT_FREE, ROOT_BUSY (being chosen), ROOT_CHOSEN */
	uint32_t root[NUE_MAX_VLS];
	uint32_t nchosen; /* roots chosen here, each for both candidates */
};

/* A candidate routing's results: tables and the layer of every LID. */
struct nue_tables {
	uint8_t *lft, *hops, *layer;
};

/* The best candidate so far: its report and score; its tables are in spare while another runs. */
struct nue_best {
	struct nue_report rep;
	struct nue_score score;
	int valid;
	struct nue_tables spare;
};

/* search.c: the modified Dijkstra with backtracking, and the escape paths */
void nue_escape_tree(struct nue *n);
void nue_tree_children(struct nue *n);
void nue_escape_children(struct nue *n);
int nue_mark_escape_paths(struct nue *n);

/* mctree.c: the multicast tree reserved in layer 0 */
int nue_mcast_tree(struct nue *n);
void nue_mcast_escape_tree(struct nue *n);
int nue_mcast_mark_turns(struct nue *n);
void nue_mcast_free(struct nue *n);
void nue_use_escape_paths(struct nue *n, uint32_t d);
int nue_attempt(struct nue *n, uint32_t d, const uint64_t *w);
void nue_undo_attempt(struct nue *n);

/* destination.c: one destination LID */
int nue_route_turn(const struct nue *n, uint32_t s, uint32_t *in, uint32_t *out);
int nue_compute_depths(struct nue *n, uint32_t d);
int nue_job_phase_dest(const struct nue *n, uint32_t lid);
void nue_tally_score(struct nue *n, uint32_t lid, int remove);
void nue_update_loads(struct nue *n, uint32_t lid, uint32_t d, uint64_t *w, int job_phase);
void nue_write_tables(struct nue *n, uint32_t lid, uint32_t d);
uint64_t *nue_weights_of(struct nue *n, uint32_t lid);
int nue_try_route(struct nue *n, uint32_t lid, int second_attempt);
void nue_leave_escape_paths(struct nue *n, uint32_t lid);
int nue_commit_routes(struct nue *n, uint32_t lid, struct fab_error *err);
int nue_commit_lid(struct nue *n, uint32_t lid, struct fab_error *err);
int nue_shortest_from_cas(struct nue *n, uint32_t d);
int nue_route_lid(struct nue *n, uint32_t lid, struct fab_error *err);
int nue_routes_from_tables(struct nue *n, uint32_t lid, uint32_t d, struct fab_error *err);
void nue_remove_loads(struct nue *n, uint32_t lid, uint32_t d);
int nue_use_route_turns(struct nue *n);
int nue_seed_kept(struct nue *n, struct fab_error *err);
int nue_joins_group(const struct nue *n, uint32_t prev, uint32_t lid);
void nue_route_lid_as_previous(struct nue *n, uint32_t lid);

/* setup.c: memory, indexes and the destination order */
void nue_free(struct nue *n);
void nue_order_layer(struct nue *n, unsigned layer);
uint32_t nue_count_layer(const struct nue *n, unsigned layer, uint32_t *dest_count,
			 uint32_t *ca_count);
int nue_prepare(struct nue *n, const uint8_t *part, struct fab_error *err);

/* nue.c: layers, channel order and candidate routings */
void nue_bfs_levels(struct nue *n, const uint8_t *seed, uint32_t root, uint32_t *hop);
const uint32_t *nue_hops_to(struct nue *n, uint32_t d);
int nue_tree_like(const struct nue *n);
void nue_init_weights(struct nue *n);
void nue_select_layer(struct nue *n, unsigned layer);
uint64_t nue_max_efi(const struct nue *n);
struct nue_score nue_score_of(const struct nue *n);
int nue_better(const struct nue_score *a, const struct nue_score *b);
int nue_route_first_pass(struct nue *n, enum sw_weights sww, struct fab_error *err);
int nue_finish_candidate(struct nue *n, struct fab_error *err);
int nue_route_candidate(struct nue *n, enum sw_weights sww, struct fab_error *err);
void nue_swap_tables(struct nue *n, uint8_t **lft, uint8_t **hops, uint8_t **layer);
void nue_swap_with_spare(struct nue *n, struct nue_tables *spare);
int nue_set_best_aside(struct nue *n, struct nue_best *b);
void nue_free_best(struct nue_best *b);
int nue_run_candidates(struct nue *n, struct nue_best *b, int probe, const enum sw_weights *cand,
		       unsigned ncand, struct fab_error *err);

/* rebalance.c: the final pass against the final weights */
int nue_reroute_lid(struct nue *n, uint32_t lid, struct fab_error *err);
int nue_reroute_group(struct nue *n, const uint32_t *lid, uint32_t cnt, struct fab_error *err);
int nue_rebalance(struct nue *n, struct fab_error *err);

/* vlsplit.c: one layer spread over k VLs */
int nue_split_over_vls(struct nue *n, struct fab_error *err);
int nue_route_single_layer(struct nue *n, int whole, struct fab_error *err);
int nue_route_whole_single_layer(struct nue *n, struct nue_best *b, struct fab_error *err);

/* shorten.c: routes shortened in each VL */
int nue_reroute_in_vls(struct nue *n, struct fab_error *err);

/* workers.c: the second thread and the race of two destination orders */
void nue_worker_free(struct nue_worker *w);
struct nue_worker *nue_worker_start(const struct nue *n);
int nue_worker_finish(struct nue *n, struct nue_score *best, struct nue_worker *w,
		      struct fab_error *err);
unsigned nue_threads_to_use(const struct nue_opts *o);
int shared_roots_init(struct shared_roots *sr, const struct nue *n);
void shared_roots_destroy(struct shared_roots *sr);
uint32_t nue_shared_root(struct nue *n, unsigned layer);
enum race_state nue_settle_race(struct order_race *race, int wait);
int nue_route_one_layer(struct nue *n, struct fab_error *err);

/* Whether lid keeps the routes of nue_opts.kept: Nue neither routes it nor routes it again. */
/* -1 with err set when the caller no longer wants the routing (nue_opts.stop), else 0. */
static inline int nue_stopped(const struct nue *n, struct fab_error *err)
{
	if (!n->o->stop || !__atomic_load_n(n->o->stop, __ATOMIC_RELAXED))
		return 0;
	fab_error_set(err, "routing stopped: no longer needed");
	return -1;
}

static inline int nue_kept(const struct nue *n, uint32_t lid)
{
	return n->o->kept_lid && n->o->kept_lid[lid];
}

/* Dijkstra's heap in switch terms, through the fat tree's order when there is one. */
static inline void nue_heap_set(struct nue *n, uint32_t sw, uint64_t key)
{
	minheap_set(&n->heap, n->heap_item ? n->heap_item[sw] : sw, key);
}

static inline uint32_t nue_heap_pop(struct nue *n)
{
	uint32_t item = minheap_pop(&n->heap);

	return item == MINHEAP_ABSENT || !n->heap_sw ? item : n->heap_sw[item];
}

#endif
