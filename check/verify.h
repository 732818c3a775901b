/*
 * verify.h - the routing verifier: walks every (source, destination LID) path through the LFTs
 * and checks reachability, forwarding loops and credit loops (a cycle in the channel dependency
 * graph of any VL, Dally and Seitz).  The plugin runs it before it lets OpenSM push tables;
 * `sarnue check` runs it on dump files or on tables read from the live fabric.
 */
#ifndef SARNUE_VERIFY_H
#define SARNUE_VERIFY_H

#include "fabric/fabric.h"
#include "fabric/routing.h"
#include "lib/progress.h"

#define VERIFY_MAX_HOPS 64
#define VERIFY_MAX_VLS 16

struct verify_report {
	uint64_t sources, destinations; /* end ports sending, LIDs received */
	uint64_t pairs;			/* (source LID, destination LID) paths walked */
	uint64_t unreachable;
	uint64_t loops; /* paths caught in a forwarding loop */
	char first_unreachable[320];
	char first_loop[320];

	uint64_t dependencies;	  /* distinct (channel, channel, VL) edges */
	unsigned credit_loop_vls; /* bit v set: VL v's dependency graph has a cycle */
	char cycle[4096];	  /* one cycle, channels named "node[port]" */
	unsigned cycle_len;

	/* Multicast (routing.mcast): trees checked, and their faults. */
	uint32_t mcast_groups, mcast_members;
	uint32_t mcast_unreached; /* members their group's tree does not deliver to */
	uint32_t mcast_loops;	  /* groups whose tree has a cycle or forwards one way only */
	uint64_t mcast_dependencies;
	char first_mcast_problem[320];
	int cycle_mixed; /* the cycle holds unicast and multicast dependencies */

	uint64_t hop_hist[VERIFY_MAX_HOPS + 1]; /* links traversed per delivered path */
	unsigned min_hops, max_hops;
	double mean_hops;
	uint16_t sls_used, vls_used; /* bit masks */
	unsigned threads;	     /* walks side by side (verify_routing_threads) */
};

/*
 * Where the LFT of switch sw sends a packet for dlid.  The verifier's walk and the metrics'
 * route trees both follow LFTs through this, so they agree on what a delivered route is.
 */
enum lft_step {
	LFT_STEP_SWITCH,    /* on to switch *next_sw through channel *channel */
	LFT_STEP_DELIVERED, /* at the LID's owner: *channel leads to it, FAB_NONE for port 0 */
	LFT_STEP_NO_ENTRY,
	LFT_STEP_TO_SELF,   /* port 0 of a switch that does not own the LID */
	LFT_STEP_LINK_DOWN, /* *channel is not up */
	LFT_STEP_WRONG_PORT,
};

enum lft_step verify_lft_step(const struct fabric *f, const struct routing *r, uint32_t sw,
			      unsigned dlid, uint32_t *channel, uint32_t *next_sw);

/* verify_lft_step for the entry out, read from a copy of the LFTs (routing_lfts_by_lid). */
enum lft_step verify_lft_entry_step(const struct fabric *f, uint32_t sw, unsigned dlid,
				    unsigned out, uint32_t *channel, uint32_t *next_sw);

/* Returns 0 when the check ran (look at the report), -1 on allocation failure. */
int verify_routing(const struct fabric *f, const struct routing *r, struct verify_report *rep);

/* Same, reporting the destination LIDs checked through progress (may be NULL). */
int verify_routing_progress(const struct fabric *f, const struct routing *r,
			    struct verify_report *rep, const struct progress_hook *progress);

/*
 * Same, the destination LIDs split in two halves walked side by side when threads is 2, or when
 * it is 0 and the LFTs hold VERIFY_SPLIT_FROM_CELLS entries or more (switches x LIDs); each half
 * has its own walker, and the upper half's counts and dependencies join the lower's before the
 * credit-loop search.  The report is the same as on one thread (threads 1), but for which cycle
 * is printed when there are several.  Without a second CPU one thread walks them all.
 */
#define VERIFY_SPLIT_FROM_CELLS (8ull << 20)
int verify_routing_threads(const struct fabric *f, const struct routing *r,
			   struct verify_report *rep, const struct progress_hook *progress,
			   unsigned threads);

/*
 * Verification beside the routing.  verify_feed_attach hooks r (routing_columns_final): from the
 * engine's first promise on, a thread on another CPU copies the final LFT columns and checks them
 * while the engine goes on.  verify_feed_report ends that and compares the copy with r's tables
 * as they are then; when they differ, or nothing was promised, or there is no other CPU, it runs
 * verify_routing on r instead.  The report is always that of verify_routing on the final tables.
 * NULL without memory: verify with verify_routing then.
 */
struct verify_feed;
struct verify_feed *verify_feed_attach(const struct fabric *f, struct routing *r);

/* As verify_routing; *streamed tells whether the checks ran beside the routing. */
int verify_feed_report(struct verify_feed *vf, struct verify_report *rep, int *streamed);

/* Same, reporting through progress (may be NULL) when the checks run only now. */
int verify_feed_report_progress(struct verify_feed *vf, struct verify_report *rep, int *streamed,
				const struct progress_hook *progress);

/* Stops the thread, unhooks the routing and frees the feed; NULL is fine. */
void verify_feed_detach(struct verify_feed *vf);

/*
 * The dependencies of a routing kept for later checks: multicast trees built after the routing
 * (the plugin builds one per group, each time its members change) are checked against them
 * without walking every unicast path again.  verify_deps_new verifies r's unicast routes (its
 * report: verify_deps_report); NULL without memory.  verify_with_deps then checks r's multicast
 * trees with those dependencies: the report is the unicast one with the multicast fields and
 * the credit-loop search of the union.  r must hold the same unicast tables.
 */
struct verify_deps;
struct verify_deps *verify_deps_new(const struct fabric *f, const struct routing *r);
void verify_deps_free(struct verify_deps *d);
const struct verify_report *verify_deps_report(const struct verify_deps *d);
int verify_with_deps(const struct verify_deps *d, const struct fabric *f, const struct routing *r,
		     struct verify_report *rep);

/* True when the report shows no unreachable pair, no forwarding loop and no credit loop. */
int verify_ok(const struct verify_report *rep);

unsigned verify_count_bits(uint16_t mask);

void verify_print_text(const struct verify_report *rep, FILE *out);
void verify_print_json(const struct verify_report *rep, const char *engine, FILE *out);

/* The members of that object without the braces, for callers that append their own. */
void verify_print_json_fields(const struct verify_report *rep, const char *engine, FILE *out);

#endif
