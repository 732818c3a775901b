/*
 * overflow.h - another engine's routes kept where they fit, Nue for the rest (overflow.c):
 * sar-dfsssp beyond its VLs, and sar-nue around D-mod-k's routes on a complete fat tree.  Also
 * the two pieces of dispatch.c both share: Nue as the options configure it, and its summary.
 */
#ifndef SARNUE_OVERFLOW_H
#define SARNUE_OVERFLOW_H

#include "engines/dfsssp/dfsssp.h"
#include "engines/engines.h"
#include "engines/nue/nue.h"

#include <pthread.h>

/*
 * Nue as the options configure it, on vls VLs; with dopts (DFSSSP's overflow) its job map and
 * measured traffic too.  Defined in dispatch.c.
 */
struct nue_opts engine_nue_opts(const struct sarnue_options *o, const struct engine_ctx *ctx,
				unsigned vls, const struct dfsssp_opts *dopts);

/* Nue's report as the result's facts, fall-backs and summary.  Defined in dispatch.c. */
void engine_nue_summary(const struct nue_report *rep, struct engine_result *res);

/*
 * DFSSSP found more layers than its drep->max_vls VLs hold: Nue routes everything on them.  r
 * gets Nue's tables, res the summary and facts; 0, or -1 with err.
 */
int dfsssp_overflow_to_nue(const struct fabric *f, const struct sarnue_options *o,
			   const struct engine_ctx *ctx, const struct dfsssp_opts *dopts,
			   const struct dfsssp_report *drep, struct routing *r,
			   struct engine_result *res, struct fab_error *err);

/*
 * dfsssp_keep_fitting's work, done ahead beside DFSSSP's path layering.  Whether the layering
 * overflows is known only at its end, or when it is judged to (dfsssp_opts.judge_overflow;
 * on a large torus or random graph, minutes either way), but what
 * keep_fitting does then does not depend on the layering: it shares the VLs by fitting DFSSSP's
 * tables, final before the layering starts, and Nue routes the fabric.  So that work starts as
 * soon as the layering looks set to overflow (struct layers_watch), on a thread of idle priority
 * (the layering keeps its CPU); its result is taken when the layering overflows, and Nue is
 * stopped when it fits.  The tables are those of doing the work after the layering.
 */
struct overflow_ahead {
	const struct fabric *f;
	const struct routing *r; /* DFSSSP's tables, read only */
	const struct job_map *jobs;
	struct nue_opts no;
	unsigned vls;
	int reserve;
	pthread_t thread;
	int started;  /* the thread runs or ran, and is not joined yet */
	int beside;   /* the work ran on the thread */
	int computed; /* the results below are set */
	int stop;     /* Nue's nue_opts.stop */
	/* Results: nue_share's, then Nue's routing. */
	uint8_t *layer_of;
	struct routing nr;
	int nr_made;
	struct nue_report rep;
	uint32_t ndest;
	int64_t left;
	int nue_vls;
	int ret;
	struct fab_error err;
};

/* Nothing done yet; DFSSSP's tables will be layered on vls VLs (2..15) with dopts. */
void overflow_ahead_init(struct overflow_ahead *a, const struct fabric *f,
			 const struct sarnue_options *o, const struct engine_ctx *ctx,
			 const struct dfsssp_opts *dopts, unsigned vls);
/*
 * dfsssp_opts.overflow_likely: starts the work on DFSSSP's tables r, on a thread where there is
 * a second CPU (otherwise, or when it is not called, dfsssp_keep_fitting does it if needed).
 */
void overflow_ahead_start(void *ahead, const struct routing *r);
/* Stops and waits for what still runs, and frees every result. */
void overflow_ahead_free(struct overflow_ahead *a);

/*
 * As dfsssp_overflow_to_nue, but the destinations that fit whole into acyclic layers keep r's
 * DFSSSP paths (r holds them, with the path SL table); Nue routes the others.  Takes a's work,
 * or does it when none was started.
 */
int dfsssp_keep_fitting(const struct fabric *f, const struct dfsssp_report *drep,
			struct overflow_ahead *a, struct routing *r, struct engine_result *res,
			struct fab_error *err);

/* What engine_keep_one_vl did with r's routes. */
enum keep_outcome {
	KEEP_ALL,      /* every destination fits: r unchanged, Nue not asked */
	KEEP_WITH_NUE, /* every terminal fits: r holds them and Nue's routes for the rest */
	KEEP_NONE,     /* a terminal does not fit (or no multicast tree to keep routes beside) */
};

struct keep_result {
	uint32_t ndest, nterm; /* destination LIDs; terminals' among them */
	struct nue_report rep; /* Nue's, with KEEP_WITH_NUE */
};

/*
 * Another engine's routes in r kept whole on one VL: r's destinations (terminals first, jobs'
 * hosts among them first) are fitted into it beside the multicast tree's turns (unless
 * no.no_mcast_tree).  When every terminal fits, the destinations that fit keep r's routes and
 * Nue (no, for one VL) routes the others around them (nue_opts.kept): together acyclic, as the
 * kept routes and the tree's turns are, Nue adds only turns that keep the layer so, and its
 * escape paths are among the tree's turns.  An enum keep_outcome, or -1 with err.
 */
int engine_keep_one_vl(const struct fabric *f, struct nue_opts no, const struct job_map *jobs,
		       struct routing *r, struct keep_result *kr, struct fab_error *err);

/*
 * One VL (dopts->fit_whole, r holds DFSSSP's paths): whole destinations are fitted into it beside
 * the multicast tree's turns, the terminals' LIDs (jobs' hosts first) before the switches' own.
 * When every terminal fits, the destinations that fit keep DFSSSP's paths and Nue routes the
 * others (switch LIDs) on the same VL around them (nue_opts.kept): together acyclic, as the kept
 * routes and the tree's turns are, Nue adds only turns that keep the layer so, and its escape
 * paths are among the tree's turns.  When some terminal does not fit, Nue routes everything
 * (dfsssp_overflow_to_nue): around the few destinations that fit there, Nue's routes were
 * longer and far less balanced (a Multi-Layer Full-Mesh of 234 switches: maximum EFI 15,672
 * against 3,312).  0 when every destination fits (r unchanged), 1 when Nue routed (r has the
 * result, res the summary and facts), -1 with err.
 */
int dfsssp_fit_one_vl(const struct fabric *f, const struct sarnue_options *o,
		      const struct engine_ctx *ctx, const struct dfsssp_opts *dopts,
		      const struct dfsssp_report *drep, struct routing *r,
		      struct engine_result *res, struct fab_error *err);

/*
 * sar-nue on a complete fat tree (recognised, no missing link, no service port) of
 * NUE_ONE_LAYER_ALONE_FROM end ports or more, without a job map, measured traffic, given layers
 * or kept routes (no), and with nue_dmodk: D-mod-k's routes, up* then down*, shortest and at the
 * cut bound of the maximum EFI, which no routing can beat, are kept whole on VL 0 beside the
 * multicast tree's turns (engine_keep_one_vl); Nue routes only the destinations that do not fit
 * (switch LIDs reached through a turn leaf).  1 when r holds that routing (res the summary and
 * facts), 0 when Nue must route as usual (r untouched), -1 with err.
 */
int nue_keep_dmodk(const struct fabric *f, const struct sarnue_options *o,
		   const struct nue_opts *no, struct routing *r, struct engine_result *res,
		   struct fab_error *err);

#endif
