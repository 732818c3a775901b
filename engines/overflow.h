/*
 * overflow.h - sar-dfsssp beyond its VLs (overflow.c): the destinations DFSSSP's layers cannot
 * hold are routed by Nue.  Also the two pieces of dispatch.c both share: Nue as the options
 * configure it, and its summary.
 */
#ifndef SARNUE_OVERFLOW_H
#define SARNUE_OVERFLOW_H

#include "engines/dfsssp/dfsssp.h"
#include "engines/engines.h"
#include "engines/nue/nue.h"

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
 * As dfsssp_overflow_to_nue, but the destinations that fit whole into acyclic layers keep r's
 * DFSSSP paths (r holds them, with the path SL table); Nue routes the others.
 */
int dfsssp_keep_fitting(const struct fabric *f, const struct sarnue_options *o,
			const struct engine_ctx *ctx, const struct dfsssp_opts *dopts,
			const struct dfsssp_report *drep, struct routing *r,
			struct engine_result *res, struct fab_error *err);

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

#endif
