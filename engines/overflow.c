/*
 * overflow.c - another engine's routes kept whole where they fit into acyclic layers
 * (engines/fit.h), Nue routing the other destinations: sar-dfsssp when its path layering needs
 * more layers than there are VLs (on VLs of their own or, with one VL, around the fitted
 * routes, the former routed beside the layering: struct overflow_ahead), and sar-nue on a
 * complete fat tree, around D-mod-k's routes.  Called by dispatch.c; the verifier checks the
 * union as for any routing.
 */
#include "engines/overflow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engines/dmodk/dmodk.h"
#include "engines/fit.h"
#include "engines/mcasttree.h"
#include "fabric/fattree.h"
#include "lib/threads.h"
#include "lib/assert.h"

/*
 * DFSSSP found more layers than VLs (OpenSM's dfsssp then falls back to minhop, which deadlocks
 * on tori and random graphs).  With one VL, Nue routes everything on it.  With V >= 2 VLs the
 * destinations whose paths all lie in DFSSSP's layers 0..V-2 keep them, and the others are routed
 * by Nue on VL V-1.  Both halves stay deadlock-free: dropping paths from an acyclic layer keeps it
 * acyclic, and Nue's own layer is acyclic by construction and shares no VL with DFSSSP's.  The
 * verifier checks the union as for any routing.
 */
int dfsssp_overflow_to_nue(const struct fabric *f, const struct sarnue_options *o,
			   const struct engine_ctx *ctx, const struct dfsssp_opts *dopts,
			   const struct dfsssp_report *drep, struct routing *r,
			   struct engine_result *res, struct fab_error *err)
{
	struct nue_opts no = engine_nue_opts(o, ctx, drep->max_vls, dopts);
	struct nue_report rep;

	engine_warn(res,
		    "DFSSSP needs %s%u layers but %u VL%s available; routed with Nue layering on "
		    "%u VL%s instead",
		    drep->layers_capped ? "at least " : "", drep->layers_needed, drep->max_vls,
		    drep->max_vls == 1 ? " is" : "s are", drep->max_vls,
		    drep->max_vls == 1 ? "" : "s");
	err->msg[0] = '\0';
	if (nue_route(f, &no, r, &rep, err))
		return -1;
	snprintf(res->summary, sizeof(res->summary), "DFSSSP needs %s%u layers, %u VLs: Nue, ",
		 drep->layers_capped ? "at least " : "", drep->layers_needed, drep->max_vls);
	engine_nue_summary(&rep, res);
	engine_fact(res, "dfsssp_layers_needed", drep->layers_needed);
	engine_fact(res, "destinations_on_nue", rep.destinations);
	res->fallbacks = rep.destinations;
	return 0;
}

/* Where a destination LID goes in destination_order: 0 first. */
static unsigned order_class(const struct fabric *f, const struct job_map *jobs, uint32_t port,
			    int switches_last)
{
	uint32_t njobs = 0;

	if (jobs)
		job_map_node_jobs(jobs, f->ports[port].node, &njobs);
	if (njobs > 0)
		return 0;
	return switches_last && fabric_is_switch(f, f->ports[port].node) ? 2 : 1;
}

/*
 * Destination LIDs, those of hosts running a job first (they matter most to SAR), then by LID;
 * with switches_last the switches' own LIDs come after all others, whose number *nterm gets.
 */
static uint32_t *destination_order(const struct fabric *f, const struct job_map *jobs,
				   int switches_last, uint32_t *n, uint32_t *nterm)
{
	uint32_t *order = malloc(sizeof(*order) * (f->max_lid + 1));
	uint32_t dlid;
	unsigned pass;

	*n = 0;
	if (!order)
		return NULL;
	for (pass = 0; pass < 3; pass++) {
		if (pass == 2)
			*nterm = *n;
		for (dlid = 1; dlid <= f->max_lid; dlid++) {
			uint32_t port = f->lid_port[dlid];

			if (port == FAB_NONE || order_class(f, jobs, port, switches_last) != pass)
				continue;
			/* Each LID goes in exactly one of the passes. */
			sn_assert(*n < f->max_lid);
			order[(*n)++] = dlid;
		}
	}
	return order;
}

/* The destination LIDs' SLs for merge_fitted: FIT_NONE for LIDs of no port. */
static void merged_sls(const struct fabric *f, const struct routing *nr, const uint8_t *layer_of,
		       unsigned nue_base, uint8_t *sl_of)
{
	uint16_t any_src = f->ports[f->endports[0]].base_lid;
	uint32_t dlid;

	for (dlid = 0; dlid < nr->lft_len; dlid++) {
		sl_of[dlid] = FIT_NONE;
		if (!dlid || f->lid_port[dlid] == FAB_NONE)
			continue;
		/* Nue's SL depends on the destination only: its layer. */
		sl_of[dlid] =
			layer_of[dlid] == FIT_NONE
				? (uint8_t)(nue_base + routing_path_sl(nr, any_src, (uint16_t)dlid))
				: layer_of[dlid];
		/* Fitted layers lie below nue_base, Nue's above it: all within the VLs. */
		sn_assert(sl_of[dlid] < ROUTING_MAX_SL &&
			  (layer_of[dlid] == FIT_NONE || sl_of[dlid] < nue_base));
	}
}

/*
 * Rewrites r's SLs per destination: its fitted layer, or Nue's column on VL nue_base + layer.
 * A switch's row at a time: column by column, the copy took 8 s on the random graph of 4,000
 * switches and 44,000 LIDs.  -1 when out of memory.
 */
static int merge_fitted(const struct fabric *f, struct routing *r, const struct routing *nr,
			const uint8_t *layer_of, unsigned nue_base)
{
	uint8_t *sl_of = malloc(r->lft_len);
	uint32_t s, dlid;

	sn_assert(f->nendports > 0 && r->nswitches == f->nswitches && nr->lft_len == r->lft_len);
	if (!sl_of)
		return -1;
	merged_sls(f, nr, layer_of, nue_base, sl_of);
	for (s = 0; s < f->nswitches; s++) {
		uint8_t *lft = routing_lft(r, s), *hops = routing_hops(r, s);
		const uint8_t *nlft = routing_lft(nr, s), *nhops = routing_hops(nr, s);

		for (dlid = 1; dlid < r->lft_len; dlid++) {
			if (sl_of[dlid] == FIT_NONE)
				continue;
			if (layer_of[dlid] == FIT_NONE) {
				sn_assert(nlft[dlid] == FAB_NO_PORT ||
					  nlft[dlid] <= f->nodes[f->switches[s]].nports);
				lft[dlid] = nlft[dlid];
				hops[dlid] = nhops[dlid];
			}
			routing_set_pair_sl(r, s, dlid, sl_of[dlid]);
		}
	}
	free(sl_of);
	return 0;
}

/*
 * How the VLs are shared.  First fit of whole destinations into all V VLs; when some are left
 * over, Nue gets a share of the VLs in proportion to what it must route (at least one: on a
 * single VL Nue balances far worse than on several), and DFSSSP's destinations are fitted into
 * the rest.  Returns the VLs left to Nue (0: every destination kept its paths; V: none do) and
 * sets *left to the number of destinations Nue routes; -1 on failure.
 */
static int nue_share(const struct fabric *f, const struct routing *r, const struct job_map *jobs,
		     unsigned vls, int reserve, uint8_t *layer_of, uint32_t *ndest, int64_t *left,
		     struct fab_error *err)
{
	uint32_t nterm, *order = destination_order(f, jobs, 0, ndest, &nterm);
	unsigned nue_vls = 0;
	struct mcast_tree mc;
	int64_t placed;
	uint32_t i;

	memset(&mc, 0, sizeof(mc));
	if (!order || (reserve && mcast_tree_choose(f, &mc))) {
		free(order);
		fab_error_set(err, "out of memory");
		return -1;
	}
	/* The fitted layers start at VL 0, where multicast groups of SL 0 go (mcasttree.h). */
	placed = fit_destinations(f, r, order, *ndest, 0, vls, reserve ? &mc : NULL, layer_of, err);
	sn_assert(placed <= (int64_t)*ndest);
	if (placed >= 0 && placed < *ndest) {
		nue_vls = (unsigned)(((uint64_t)(*ndest - placed) * vls + *ndest / 2) / *ndest);
		nue_vls = nue_vls < 1 ? 1 : nue_vls > vls ? vls : nue_vls;
		sn_assert(nue_vls >= 1 && nue_vls <= vls);
		placed = 0;
		for (i = 0; i < r->lft_len; i++)
			layer_of[i] = FIT_NONE;
		if (nue_vls < vls)
			placed = fit_destinations(f, r, order, *ndest, 0, vls - nue_vls,
						  reserve ? &mc : NULL, layer_of, err);
	}
	mcast_tree_free(&mc);
	free(order);
	/* Fitted and left over add up to the destinations. */
	sn_assert(placed <= (int64_t)*ndest);
	*left = (int64_t)*ndest - placed;
	return placed < 0 ? -1 : (int)nue_vls;
}

void overflow_ahead_init(struct overflow_ahead *a, const struct fabric *f,
			 const struct sarnue_options *o, const struct engine_ctx *ctx,
			 const struct dfsssp_opts *dopts, unsigned vls)
{
	sn_assert(vls >= 2 && vls < ROUTING_MAX_SL);
	memset(a, 0, sizeof(*a));
	a->f = f;
	a->jobs = dopts->jobs;
	a->no = engine_nue_opts(o, ctx, 0, dopts);
	a->no.stop = &a->stop;
	a->vls = vls;
	a->reserve = o->mcast_reserve;
}

/* The VLs shared and Nue's routing of the destinations left over, into a's results. */
static void share_and_route(struct overflow_ahead *a)
{
	struct fab_error *err = &a->err;

	a->ret = -1;
	a->layer_of = malloc(a->r->lft_len);
	if (!a->layer_of || routing_init(&a->nr, a->f, "sar-nue")) {
		fab_error_set(err, "out of memory");
		goto out;
	}
	a->nr_made = 1;
	a->nue_vls = nue_share(a->f, a->r, a->jobs, a->vls, a->reserve, a->layer_of, &a->ndest,
			       &a->left, err);
	if (a->nue_vls < 0)
		goto out;
	sn_assert((unsigned)a->nue_vls <= a->vls && a->left >= 0 && a->left <= a->ndest);
	a->no.vls = (unsigned)a->nue_vls;
	if (a->left > 0 && nue_route(a->f, &a->no, &a->nr, &a->rep, err))
		goto out;
	a->ret = 0;
out:
	a->computed = 1;
}

static void *ahead_main(void *arg)
{
	share_and_route(arg);
	return NULL;
}

void overflow_ahead_start(void *ahead, const struct routing *r)
{
	struct overflow_ahead *a = ahead;
	const struct progress_hook *progress = a->no.progress;

	sn_assert(!a->started && !a->computed);
	a->r = r;
	/* Progress comes from the calling thread only: the layering's. */
	a->no.progress = NULL;
	/* The layering, which decides whether this is wanted at all, keeps its CPU. */
	a->started = !thread_start_idle(&a->thread, ahead_main, a);
	a->beside = a->started;
	if (!a->started)
		a->no.progress = progress;
}

static void ahead_join(struct overflow_ahead *a)
{
	if (a->started)
		pthread_join(a->thread, NULL);
	a->started = 0;
}

void overflow_ahead_free(struct overflow_ahead *a)
{
	__atomic_store_n(&a->stop, 1, __ATOMIC_RELAXED);
	ahead_join(a);
	free(a->layer_of);
	a->layer_of = NULL;
	if (a->nr_made)
		routing_free(&a->nr);
	a->nr_made = 0;
}

/*
 * DFSSSP's per-path layering needs more layers than VLs.  Whole destinations keep their
 * scheduling-aware paths where they fit into acyclic layers (destinations of jobs first); the
 * others are routed by Nue on the remaining VLs.  Dropping a destination from a layer only
 * removes dependencies, Nue's layers are acyclic by construction and share no VL with DFSSSP's,
 * and the verifier checks the union as for any routing.
 */
int dfsssp_keep_fitting(const struct fabric *f, const struct dfsssp_report *drep,
			struct overflow_ahead *a, struct routing *r, struct engine_result *res,
			struct fab_error *err)
{
	unsigned vls = drep->max_vls, sl;
	char needs[96];
	uint32_t ndest;
	int64_t left;
	int nue_vls;

	sn_assert(a->vls == vls && (!a->r || a->r == r));
	ahead_join(a);
	if (!a->computed) {
		a->r = r;
		share_and_route(a);
	}
	if (a->ret) {
		*err = a->err;
		return -1;
	}
	err->msg[0] = '\0';
	ndest = a->ndest;
	left = a->left;
	nue_vls = a->nue_vls;
	sn_assert((unsigned)nue_vls <= vls && vls < ROUTING_MAX_SL && left >= 0 && left <= ndest);
	if (merge_fitted(f, r, &a->nr, a->layer_of, vls - (unsigned)nue_vls)) {
		fab_error_set(err, "out of memory");
		return -1;
	}
	memset(r->sl2vl_uniform, 0, sizeof(r->sl2vl_uniform));
	for (sl = 0; sl < vls; sl++)
		r->sl2vl_uniform[sl] = (uint8_t)sl;
	r->vls_used = vls;
	dfsssp_layers_needed_text(drep, needs, sizeof(needs));
	engine_warn(res,
		    "DFSSSP's path layering %s but %u VLs are available; %u of %u"
		    " destination LIDs keep their paths on %u VL(s), %lld are routed with Nue on %d"
		    " VL(s)",
		    needs, vls, ndest - (uint32_t)left, ndest, vls - (unsigned)nue_vls,
		    (long long)left, nue_vls);
	snprintf(res->summary, sizeof(res->summary),
		 "DFSSSP's path layering %s, %u VLs: %u destination LIDs fitted whole into %u"
		 " VL(s), %lld on Nue (%d VL(s), %u fall-backs to escape paths); paths %.3f s,"
		 " layers %.3f s",
		 needs, vls, ndest - (uint32_t)left, vls - (unsigned)nue_vls, (long long)left,
		 nue_vls, a->rep.fallbacks, drep->paths_seconds, drep->layers_seconds);
	res->fallbacks = (uint32_t)left;
	engine_fact(res, "dfsssp_layers_needed", drep->layers_needed);
	engine_fact(res, "vls", vls);
	engine_fact(res, "destinations_fitted", ndest - (uint32_t)left);
	engine_fact(res, "destinations_on_nue", (double)left);
	engine_fact(res, "nue_vls", nue_vls);
	engine_fact(res, "nue_fallbacks", a->rep.fallbacks);
	engine_fact(res, "nue_beside_layering", a->beside);
	engine_fact(res, "dfsssp_layers_judged", drep->layers_judged);
	engine_fact(res, "dfsssp_layers_probed", drep->layers_probed);
	return 0;
}

/* nr's tables into r, whose shape they have: Nue's columns with the kept ones in them. */
static void take_columns(struct routing *r, const struct routing *nr)
{
	size_t cells = (size_t)r->nswitches * r->lft_len;

	sn_assert(nr->nswitches == r->nswitches && nr->lft_len == r->lft_len);
	memcpy(r->lft, nr->lft, cells);
	memcpy(r->hops, nr->hops, cells);
}

static void one_vl_report(const struct dfsssp_report *drep, const struct nue_report *rep,
			  uint32_t ndest, struct engine_result *res)
{
	engine_warn(res,
		    "DFSSSP's paths to the switches' own LIDs do not all fit into 1 VL: %u of %u"
		    " destination LIDs keep DFSSSP's paths, %u are routed with Nue on the same VL"
		    " around them",
		    rep->kept, ndest, rep->destinations);
	snprintf(res->summary, sizeof(res->summary),
		 "1 VL: %u destination LIDs keep DFSSSP's paths, %u routed by Nue around them"
		 " (%u fall-backs to escape paths); paths %.3f s",
		 rep->kept, rep->destinations, rep->fallbacks, drep->paths_seconds);
	res->fallbacks = rep->destinations;
	engine_fact(res, "vls", 1);
	engine_fact(res, "destinations_fitted", rep->kept);
	engine_fact(res, "destinations_on_nue", rep->destinations);
	engine_fact(res, "nue_fallbacks", rep->fallbacks);
}

/* Nue routes everything on the one VL: DFSSSP's paths to some terminal close a cycle there. */
static int one_vl_to_nue(const struct fabric *f, const struct sarnue_options *o,
			 const struct engine_ctx *ctx, const struct dfsssp_opts *dopts,
			 const struct dfsssp_report *drep, struct routing *r,
			 struct engine_result *res, struct fab_error *err)
{
	struct dfsssp_report more = *drep;

	/* Not every path fits into one layer: the paths need at least two. */
	more.layers_needed = 2;
	more.layers_capped = 1;
	return dfsssp_overflow_to_nue(f, o, ctx, dopts, &more, r, res, err);
}

/*
 * Fits r's whole destinations into one VL beside the multicast tree's turns (no tree with
 * no.no_mcast_tree), terminals first, then lets Nue route the destinations that do not fit
 * around the fitted ones, when every terminal fits.  no is Nue's options for one VL.
 */
int engine_keep_one_vl(const struct fabric *f, struct nue_opts no, const struct job_map *jobs,
		       struct routing *r, struct keep_result *kr, struct fab_error *err)
{
	uint8_t *kept = malloc(r->lft_len);
	uint32_t *order = destination_order(f, jobs, 1, &kr->ndest, &kr->nterm), lid;
	struct mcast_tree mc;
	struct routing nr;
	int64_t placed = -1;
	int ret = -1;

	sn_assert(no.vls == 1);
	memset(&mc, 0, sizeof(mc));
	memset(&nr, 0, sizeof(nr));
	memset(&kr->rep, 0, sizeof(kr->rep));
	if (!kept || !order || (!no.no_mcast_tree && mcast_tree_choose(f, &mc))) {
		fab_error_set(err, "out of memory");
		goto out;
	}
	/* The multicast tree's turns first: Nue's escape paths on VL 0 are among them. */
	placed = fit_destinations(f, r, order, kr->ndest, kr->nterm, 1,
				  no.no_mcast_tree ? NULL : &mc, kept, err);
	if (placed < 0 || placed == kr->ndest) {
		ret = placed < 0 ? -1 : KEEP_ALL;
		goto out;
	}
	/* Nue keeps routes only beside the multicast tree (nue_opts.kept). */
	if (placed < kr->nterm || no.no_mcast_tree) {
		ret = KEEP_NONE;
		goto out;
	}
	for (lid = 0; lid < r->lft_len; lid++)
		kept[lid] = kept[lid] == 0 && lid >= 1 && f->lid_port[lid] != FAB_NONE;
	no.kept = r;
	no.kept_lid = kept;
	err->msg[0] = '\0';
	if (routing_init(&nr, f, "sar-nue")) {
		fab_error_set(err, "out of memory");
		goto out;
	}
	if (nue_route(f, &no, &nr, &kr->rep, err))
		goto out;
	/* Every destination is either kept or Nue's. */
	sn_assert((int64_t)kr->rep.kept == placed &&
		  kr->rep.kept + kr->rep.destinations == kr->ndest);
	take_columns(r, &nr);
	r->vls_used = 1;
	ret = KEEP_WITH_NUE;
out:
	routing_free(&nr);
	mcast_tree_free(&mc);
	free(order);
	free(kept);
	return ret;
}

int dfsssp_fit_one_vl(const struct fabric *f, const struct sarnue_options *o,
		      const struct engine_ctx *ctx, const struct dfsssp_opts *dopts,
		      const struct dfsssp_report *drep, struct routing *r,
		      struct engine_result *res, struct fab_error *err)
{
	struct keep_result kr;
	int rc;

	sn_assert(dopts->fit_whole && !dopts->no_mcast_tree);
	rc = engine_keep_one_vl(f, engine_nue_opts(o, ctx, 1, dopts), dopts->jobs, r, &kr, err);
	switch (rc) {
	case KEEP_ALL:
		return 0;
	case KEEP_NONE:
		return one_vl_to_nue(f, o, ctx, dopts, drep, r, res, err) ? -1 : 1;
	case KEEP_WITH_NUE:
		one_vl_report(drep, &kr.rep, kr.ndest, res);
		return 1;
	default:
		return -1;
	}
}

/* Whether sar-nue keeps D-mod-k's routes (nue_dmodk): see nue_keep_dmodk. */
static int dmodk_for_nue(const struct fabric *f, const struct sarnue_options *o,
			 const struct nue_opts *no)
{
	struct fab_error why;
	struct fat_tree t;
	int fits;

	if (!o->nue_dmodk || no->jobs || no->traffic || no->layers || no->kept ||
	    f->nendports < NUE_ONE_LAYER_ALONE_FROM)
		return 0;
	fat_tree_init(&t);
	fits = !fat_tree_recognise(f, &t, &why) && t.complete && !t.nservice;
	fat_tree_free(&t);
	return fits;
}

/* vls: the VLs sar-nue was given (nue_vls), of which D-mod-k's routes use one. */
static void dmodk_kept_report(const struct dmodk_report *drep, const struct keep_result *kr,
			      int outcome, unsigned vls, struct engine_result *res)
{
	uint32_t on_nue = outcome == KEEP_WITH_NUE ? kr->rep.destinations : 0;

	snprintf(
		res->summary, sizeof(res->summary),
		"complete fat tree of %s: D-mod-k's routes kept on VL 0 for %u of %u destination"
		" LIDs (1 of %u VL%s used, maximum EFI cut bound %llu), %u routed by Nue around them"
		" (%u fall-backs to escape paths)",
		drep->shape, kr->ndest - on_nue, kr->ndest, vls, vls == 1 ? "" : "s",
		(unsigned long long)drep->efi_bound, on_nue, kr->rep.fallbacks);
	res->fallbacks = kr->rep.fallbacks;
	engine_fact(res, "vls", 1);
	engine_fact(res, "destinations_dmodk", kr->ndest - on_nue);
	engine_fact(res, "destinations_on_nue", on_nue);
	engine_fact(res, "nue_fallbacks", kr->rep.fallbacks);
	engine_fact(res, "max_efi_cut_bound", (double)drep->efi_bound);
}

int nue_keep_dmodk(const struct fabric *f, const struct sarnue_options *o,
		   const struct nue_opts *no, struct routing *r, struct engine_result *res,
		   struct fab_error *err)
{
	struct nue_opts one = *no;
	struct dmodk_report drep;
	struct keep_result kr;
	struct routing dr;
	int rc = -1;

	if (!dmodk_for_nue(f, o, no))
		return 0;
	/* No helper thread of ours: the caller's work beside the routing may take the other CPU. */
	cpu_gate_open(no->spare_cpu);
	if (routing_init(&dr, f, r->engine)) {
		fab_error_set(err, "out of memory for D-mod-k's tables");
		return -1;
	}
	if (dmodk_route_progress(f, o->progress, &dr, &drep, err))
		goto out;
	one.vls = 1;
	rc = engine_keep_one_vl(f, one, NULL, &dr, &kr, err);
	if (rc == KEEP_ALL || rc == KEEP_WITH_NUE) {
		take_columns(r, &dr);
		r->vls_used = 1;
		dmodk_kept_report(&drep, &kr, rc, no->vls, res);
		rc = 1;
	} else if (rc == KEEP_NONE) {
		rc = 0;
	}
out:
	routing_free(&dr);
	return rc;
}
