/*
 * dfsssp.h - deadlock-free single-source shortest-path routing (DFSSSP, thesis sections 3.3.2
 * and 3.3.8) with the scheduling-aware weights of SAR (Algorithm 5.1, section 5.2.2.2): the
 * engine behind `sar-dfsssp`.
 *
 * Paths: one Dijkstra per destination LID on the switch multigraph, channel weights starting at
 * |N|^2 and growing with every route that uses them, so that later destinations avoid loaded
 * channels.  Deadlock freedom: the paths are spread over virtual layers whose channel dependency
 * graphs are acyclic (layers.h); a path's layer is its SL, per (source switch, destination LID).
 */
#ifndef SARNUE_DFSSSP_H
#define SARNUE_DFSSSP_H

#include "fabric/fabric.h"
#include "fabric/jobmap.h"
#include "fabric/traffic.h"
#include "engines/dfsssp/vlassign.h"
#include "fabric/routing.h"
#include "lib/progress.h"

/*
 * What one routing leaves for the next on the same fabric (incremental=yes): every destination
 * LID's demand signature (its phase and the weight each switch's sources add, a hash) and its
 * forwarding column.  A later routing keeps the column of each LID whose signature is the same.
 */
struct dfsssp_memo {
	uint64_t key; /* the fabric's fingerprint mixed with the path options; 0: empty */
	uint32_t nsw, lft_len;
	uint64_t *sig;	     /* [lft_len]; 0: nothing to keep */
	uint8_t *lft, *hops; /* [nsw * lft_len] */
};

void dfsssp_memo_free(struct dfsssp_memo *m);

struct dfsssp_opts {
	const struct job_map *jobs; /* bound to the fabric; NULL: plain DFSSSP */
	/*
	 * Measured demand (bound): an intra-job path weighs its pair's traffic_weight() instead
	 * of 1, at least traffic_floor (1 when jobs come from a job map, so a job not yet
	 * measured is still balanced; 0 when the job phase is the traffic's own hosts).
	 */
	const struct traffic *traffic;
	unsigned traffic_floor;
	const uint8_t *storage; /* [f->nnodes] non-zero for storage nodes; NULL: none */
	unsigned max_vls;	/* VLs the layers may occupy, 1..15 */
	/*
	 * What the reference SAR patch does instead of Alg 5.1: job nodes in fabric order rather
	 * than by descending job size, and no weight reset between the phases.  For comparison.
	 */
	int skip_job_sort, skip_weight_reset;
	/* No improvement step after the job phase: Alg 5.1's single greedy pass. */
	int skip_improve;
	int no_mcast_tree; /* layer 0 keeps no multicast tree's turns */
	/*
	 * One VL with the multicast tree: no path layering.  The caller fits whole destinations
	 * into the VL and has Nue route the others around them (engines/overflow.c); layering
	 * the paths would only tell whether every destination fits.
	 */
	int fit_whole;
	const struct progress_hook *progress; /* destinations routed; NULL: nobody listens */
	/*
	 * Incremental reroute: with memo set, the columns of destinations whose demand did not
	 * change since the memo's routing of the same fabric are kept, the rest routed again;
	 * after a routing that succeeds the memo holds it.  NULL: every destination is routed.
	 */
	struct dfsssp_memo *memo;
	/*
	 * Called at most once, when the path layering looks set to overflow max_vls (see struct
	 * layers_watch): r's tables are final, and the caller may read them beside the layering,
	 * which writes only r's path SL table.  NULL: nobody is told.
	 */
	void (*overflow_likely)(void *arg, const struct routing *r);
	void *overflow_likely_arg;
	/*
	 * The layering may stop early, judged to overflow max_vls when its layers shrink slowly
	 * (layers_watch.judge); the caller then routes as on any overflow.  0: it decides alone.
	 */
	int judge_overflow;
	/* layers_watch.probe_from: switches from which a sample is layered first (0: default) */
	uint32_t probe_from;
};

struct dfsssp_report {
	unsigned max_vls, layers_needed, vls_used;
	int layers_capped; /* layers_needed is a lower bound: counting stopped past max_vls */
	/* layers finished when the layering stopped, judged to overflow (judge_overflow); or 0 */
	unsigned layers_judged;
	/* destination LIDs of the sample judged to overflow (layers_result.probed); or 0 */
	uint32_t layers_probed;
	uint32_t lids_routed, job_lids, storage_lids;
	uint32_t overflow_dlids; /* destinations with a path left beyond max_vls layers */
	uint64_t paths, moved, cycles;
	/* The improvement step: job routes re-picked, sweeps, work done, budget exhausted. */
	uint64_t improve_moves, improve_sweeps, improve_work;
	int improve_stopped;
	double paths_seconds, layers_seconds, improve_seconds;
	/* incremental: the memo was of this fabric; LIDs whose column was kept or routed again */
	int incremental;
	uint32_t kept_lids, rerouted_lids;
};

/*
 * Fills r (routing_init'ed for f).  Returns 0, or -1 with err set; when the layers need more
 * VLs than max_vls, err says "needs at least X layers, Y VLs available" (the layering stops
 * there) or "was judged after N layers to need more than Y, Y VLs available"
 * (judge_overflow), and rep->overflow_dlids counts the destinations found not to fit so far.
 */
int dfsssp_route(const struct fabric *f, const struct dfsssp_opts *o, struct routing *r,
		 struct dfsssp_report *rep, struct fab_error *err);

/*
 * What rep's path layering found, for messages: "needs 9 layers", "needs at least 9 layers", or
 * "was judged after 2 layers to need more than 8".
 */
void dfsssp_layers_needed_text(const struct dfsssp_report *rep, char *buf, size_t len);

/* What each storage option found, so that one matching nothing can be warned about. */
struct storage_match {
	uint32_t by_pattern;	     /* CA nodes the pattern matched */
	uint32_t guids, guids_found; /* GUIDs in the file, and those naming a CA node here */
};

/*
 * Marks storage nodes in flags[f->nnodes]: CA nodes whose description matches the fnmatch(3)
 * pattern (may be NULL or empty), and nodes with a node or port GUID listed in guid_file (may
 * be NULL or empty; one GUID per line, '#' comments, as OpenSM's io_guid_file).  *count gets the
 * number of nodes marked, *m (may be NULL) what each option found.  Returns -1 with err naming
 * file:line on a malformed line.
 */
int dfsssp_mark_storage(const struct fabric *f, const char *pattern, const char *guid_file,
			uint8_t *flags, uint32_t *count, struct storage_match *m,
			struct fab_error *err);

#endif
