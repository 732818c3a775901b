/*
 * metrics.h - routing-quality metrics computed from the fabric model and routing tables alone,
 * so they judge any engine's tables alike: sarnue's, or OpenSM's read from its dump files.
 *
 * Terms (Domke's thesis, sections 3.1, 3.4 and 5.1):
 *   terminal  a CA or router port with a LID and an active link to a switch;
 *   route     the path the LFTs give from a terminal to the base LID of another terminal
 *             (with all_lids, to every LID of its 2^LMC range: one route per destination LID;
 *             the source LID never changes an LFT path, so each source port counts once);
 *   C*        the active switch-to-switch channels, one per direction of a link, numbered in
 *             fabric.sw_adj_port order (channel i leaves port sw_adj_port[i]).  Channels from
 *             and to terminals are not in C*: every route uses exactly one of each.
 *
 * Edge forwarding index (EFI) of c in C*: routes crossing c, over all terminal pairs.
 * Effective EFI (Definition 5.1): for each job, the routes between two terminals of that job
 * crossing c, summed over jobs; a route between two nodes sharing k jobs counts k times.
 * Dark fiber (Definition 5.2): share of C* with effective EFI 0.
 *
 * Both EFIs are accumulated per destination: the LFT entries towards one LID form an in-tree,
 * so counting sources per switch from the leaves to the root gives every channel's count in
 * O(switches) per destination, not O(terminals * path length).
 */
#ifndef SARNUE_METRICS_H
#define SARNUE_METRICS_H

#include <stdint.h>
#include <stdio.h>

#include "fabric/fabric.h"
#include "fabric/jobmap.h"
#include "fabric/routing.h"

#define METRICS_HIST_BINS 20
#define METRICS_MAX_STRETCH 32
#define METRICS_SHIFTS_ALL_MAX 2048 /* up to this many terminals every shift is walked */
#define METRICS_SHIFTS_SAMPLE 256   /* evenly spaced shifts walked above that */

struct metrics_options {
	int all_lids;	       /* routes to every LID of an LMC range, not only base LIDs */
	uint32_t shifts;       /* 0: automatic (see METRICS_SHIFTS_*) */
	uint32_t permutations; /* random permutations */
	uint32_t bisections;   /* random bisections */
	uint64_t seed;	       /* of the random patterns */
	/* Called now and then during long loops; may be NULL. */
	void (*progress)(void *ctx, const char *phase, uint64_t done, uint64_t total);
	void *progress_ctx;
};

void metrics_options_default(struct metrics_options *o);

/* A per-channel count over C*: summary and histogram. */
struct metrics_dist {
	uint32_t channels;
	uint32_t zero; /* channels with count 0 */
	uint64_t min, max;
	double mean, sdv; /* population standard deviation */
	uint64_t bin_width;
	uint32_t
		nbins; /* bin k counts channels with k * bin_width <= count < (k + 1) * bin_width */
	uint64_t bins[METRICS_HIST_BINS];
};

/* Channels listed by name as the hottest of a routing. */
#define METRICS_HOT 10

struct metrics_efi {
	uint32_t nchannels; /* |C*| */
	uint64_t *load;	    /* [nchannels]: EFI of each channel */
	struct metrics_dist dist;
	uint32_t terminals, detached; /* detached: CA/router ports with a LID but no switch link */
	uint64_t routes;	      /* delivered terminal-to-terminal routes */
	uint64_t unrouted;	      /* routes the LFTs do not deliver */

	/* Stretch: hops taken minus the fewest hops over active links, per delivered route. */
	uint64_t nonminimal;
	unsigned max_stretch;
	double mean_stretch, mean_ratio; /* ratio: hops taken / fewest hops */
	/*
	 * Links per delivered route, both end links included (as the verifier counts hops), over
	 * terminal-to-terminal routes only: the routes the EFI counts, without switch LIDs.
	 */
	double mean_hops;
	uint64_t stretch_hist[METRICS_MAX_STRETCH + 1];

	/* The most loaded channels of C*, highest EFI first (ties: lower channel first). */
	unsigned nhot;
	struct metrics_hot {
		uint64_t load;
		char from[112], to[112]; /* "node description[port]" at each end */
	} hot[METRICS_HOT];
};

int metrics_efi(const struct fabric *f, const struct routing *r, const struct metrics_options *o,
		struct metrics_efi *out);
void metrics_efi_free(struct metrics_efi *e);

struct metrics_job {
	uint32_t terminals; /* ports of the job's nodes that are terminals */
	uint32_t switches;  /* switches those attach to */
	uint64_t routes;    /* delivered intra-job routes */
	uint64_t max_efi;   /* largest count of this job's routes on one channel of C* */
	uint32_t channels;  /* channels of C* carrying at least one of them */
};

struct metrics_jobs {
	uint32_t nchannels;
	uint64_t *load; /* [nchannels]: effective EFI */
	struct metrics_dist dist;
	double dark_fiber; /* percent of C* with effective EFI 0 */
	uint64_t routes, unrouted;
	uint32_t njobs;
	struct metrics_job *job;  /* [njobs], in the job map's order */
	uint32_t bound_terminals; /* terminals running at least one job */
	/* Averages over multi-switch jobs: only their routes can use C*. */
	uint32_t multi_switch_jobs;
	double mean_job_max_efi, mean_job_channels;
};

/*
 * Effective EFI of the routing for the jobs of jm (bound to f with job_map_bind()).  This is
 * what the filter daemon asks before a reroute: how bad would the current tables be for this
 * job set?  (dist.max is the maximum effective EFI.)
 */
int metrics_effective_efi(const struct fabric *f, const struct routing *r, const struct job_map *jm,
			  const struct metrics_options *o, struct metrics_jobs *out);
void metrics_jobs_free(struct metrics_jobs *j);

/*
 * Static congestion under traffic patterns: each flow is one route to the destination's base
 * LID, the load of a channel of C* is the number of flows of one pattern instance crossing it.
 * Terminal links are left out: in a permutation each carries exactly one flow per direction.
 * Terminals are numbered in ascending LID order for the shift patterns; a second order may be
 * given for them too: a fat tree's topology order (leaf by leaf, then port), the order D-mod-k
 * routing carries every shift in without contention on a complete tree.
 */
struct metrics_family {
	uint32_t instances;
	uint64_t flows, unrouted;
	uint64_t max_load; /* over all instances */
	double mean_max_load;
};

struct metrics_patterns {
	uint32_t terminals;
	uint32_t shifts_possible; /* terminals - 1 */
	struct metrics_family shift, permutation, bisection;
	/*
	 * Effective bisection bandwidth estimates, means over the bisections: the fraction of
	 * flows whose channels carry no other flow of the instance, and the mean share of a link
	 * a flow gets (1 / the highest load on its path; 0 when not delivered).
	 */
	double ebb_unslowed, ebb_share;
	/* The shifts over the second order, when one was given (have_order). */
	int have_order;
	uint32_t order_terminals, order_shifts_possible;
	struct metrics_family order_shift;
};

int metrics_patterns(const struct fabric *f, const struct routing *r,
		     const struct metrics_options *o, struct metrics_patterns *out);
/*
 * The same, and the shifts i -> i+s mod M once more over the terminal ports order[0..norder)
 * (ports that are no terminal are left out).  -1 when out of memory.
 */
int metrics_patterns_in_order(const struct fabric *f, const struct routing *r,
			      const struct metrics_options *o, const uint32_t *order,
			      uint32_t norder, struct metrics_patterns *out);

/*
 * A fat tree recognised in the fabric (fabric/fattree.h), as the report shows it: its shape and
 * the cut lower bound of the maximum EFI for all-to-all traffic (fat_tree_efi_bound()), or why
 * the fabric is no fat tree.
 */
struct metrics_fat_tree {
	int recognised;
	char why[512];
	char shape[160];
	uint32_t levels, leaves, hosts, service; /* terminals on the leaves, and above them */
	uint64_t efi_bound;			 /* 0: no bound (a single leaf) */
};

struct fat_tree;
/* Recognises f into t (fat_tree_free() it) and fills out either way. */
void metrics_fat_tree_recognise(const struct fabric *f, struct fat_tree *t,
				struct metrics_fat_tree *out);

/* Everything one `sarnue check` run computed; jobs and patterns may be NULL. */
struct metrics_report {
	const struct metrics_options *options;
	const struct metrics_efi *efi;
	const struct metrics_jobs *jobs;
	const struct job_map *jm;
	const char *job_map_name;
	const struct metrics_patterns *patterns;
	const struct metrics_fat_tree *tree; /* NULL: not looked for */
};

void metrics_print_text(const struct metrics_report *m, FILE *out);
/* One JSON object (no newline), to be the value of a member. */
void metrics_print_json(const struct metrics_report *m, FILE *out);

#endif
