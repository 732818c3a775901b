/*
 * optimal.c - the routing's maximum link utilisation for a set of demands, and the smallest any
 * routing could reach (optimal.h).  The linear program, one commodity per destination switch
 * (the end ports behind one switch merged: a flow to one sink splits into paths from each
 * source, so nothing is lost, and the program shrinks by the hosts per switch):
 *
 *   minimise U  subject to
 *     for every commodity k and switch s:  flow of k out of s - flow of k into s = what the
 *                                          end ports of s send to those of k's switch
 *                                          (minus all of k's demand at k's switch)
 *     for every switch channel c:          sum over k of flow of k on c - U <= 0
 *   every flow >= 0.
 *
 * End links carry their demand in every routing; the optimum is the larger of U and the busiest
 * end link.  Solved with GLPK's simplex when configure found it (HAVE_GLPK) and the program fits
 * the limit; otherwise check/maxconc.c bounds it from both sides (Frank-Wolfe with a dual bound)
 * on the switch graph, parallel channels merged.  Capacities are the links' data rates over the
 * fastest link's: 1 per channel on a fabric of one speed, so the figures are then routes per
 * channel.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_GLPK
#include <glpk.h>
#endif

#include "check/maxconc.h"
#include "check/verify.h"
#include "cli/optimal.h"
#include "lib/clock.h"

/* A channel's capacity: its link's rate over unit, the fastest link's (1 on one-speed fabrics). */
static double capacity(const struct fabric *f, uint32_t p, double unit)
{
	return (double)fabric_link_rate(f, p) / unit;
}

static double fastest_rate(const struct fabric *f)
{
	unsigned top = 0, r;
	uint32_t p;

	for (p = 0; p < f->nports; p++)
		if (f->ports[p].num && fabric_channel_up(f, p)) {
			r = fabric_link_rate(f, p);
			top = r > top ? r : top;
		}
	return top ? (double)top : FAB_RATE_DEFAULT;
}

void demands_free(struct demands *d)
{
	free(d->src);
	free(d->dst);
	free(d->amount);
	memset(d, 0, sizeof(*d));
}

static int is_terminal(const struct fabric *f, uint32_t p)
{
	return !fabric_is_switch(f, f->ports[p].node) && f->ports[p].base_lid &&
	       fabric_attached_switch(f, p) != FAB_NONE;
}

int demands_all_to_all(const struct fabric *f, struct demands *d)
{
	uint32_t i, j, nt = 0, *term = malloc(sizeof(*term) * (f->nendports + 1));
	uint64_t n;

	memset(d, 0, sizeof(*d));
	if (!term)
		return -1;
	for (i = 0; i < f->nendports; i++)
		if (is_terminal(f, f->endports[i]))
			term[nt++] = f->endports[i];
	n = (uint64_t)nt * (nt ? nt - 1 : 0);
	d->src = malloc(sizeof(*d->src) * (n + 1));
	d->dst = malloc(sizeof(*d->dst) * (n + 1));
	d->amount = malloc(sizeof(*d->amount) * (n + 1));
	if (!d->src || !d->dst || !d->amount || n > UINT32_MAX) {
		free(term);
		demands_free(d);
		return -1;
	}
	for (i = 0; i < nt; i++)
		for (j = 0; j < nt; j++) {
			if (i == j)
				continue;
			d->src[d->n] = term[i];
			d->dst[d->n] = term[j];
			d->amount[d->n++] = 1.0;
		}
	free(term);
	return 0;
}

/* Adds a demand's amount to every channel of its route; 0 when the route does not arrive. */
static int add_route(const struct fabric *f, const struct routing *r, uint32_t src, uint32_t dst,
		     double amount, double *load)
{
	uint32_t sw = fabric_attached_switch(f, src), q, next, steps;
	unsigned dlid = f->ports[dst].base_lid;

	if (sw == FAB_NONE)
		return 0;
	load[src] += amount;
	sw = f->nodes[sw].sw;
	for (steps = 0; steps <= f->nswitches; steps++) {
		switch (verify_lft_step(f, r, sw, dlid, &q, &next)) {
		case LFT_STEP_DELIVERED:
			if (q != FAB_NONE)
				load[q] += amount;
			return 1;
		case LFT_STEP_SWITCH:
			load[q] += amount;
			sw = next;
			break;
		default:
			return 0;
		}
	}
	return 0;
}

static int routing_max(const struct fabric *f, const struct routing *r, const struct demands *d,
		       double unit, struct optimal_result *res)
{
	double *load = calloc(f->nports + 1, sizeof(*load));
	uint32_t i;

	if (!load)
		return -1;
	for (i = 0; i < d->n; i++)
		if (!add_route(f, r, d->src[i], d->dst[i], d->amount[i], load))
			res->unrouted++;
	for (i = 0; i < f->nports; i++)
		if (load[i] > 0)
			res->routing_max = fmax(res->routing_max, load[i] / capacity(f, i, unit));
	free(load);
	return 0;
}

/* No routing beats its end links: each end port's demand out and in over its one link. */
static int end_link_bound(const struct fabric *f, const struct demands *d, double unit,
			  struct optimal_result *res)
{
	double *out = calloc(f->nports + 1, sizeof(*out)), *in = calloc(f->nports + 1, sizeof(*in));
	uint32_t i;

	if (!out || !in) {
		free(out);
		free(in);
		return -1;
	}
	for (i = 0; i < d->n; i++) {
		out[d->src[i]] += d->amount[i];
		in[d->dst[i]] += d->amount[i];
	}
	res->optimum = 0;
	for (i = 0; i < f->nports; i++)
		if (out[i] > 0 || in[i] > 0)
			res->optimum =
				fmax(res->optimum, fmax(out[i], in[i]) / capacity(f, i, unit));
	res->end_links = res->optimum;
	free(out);
	free(in);
	return 0;
}

/* The model switch index of a switch port. */
static uint32_t sw_of(const struct fabric *f, uint32_t p)
{
	return f->nodes[f->ports[p].node].sw;
}

/* The switch an end port hangs on (model switch index), FAB_NONE without a live link. */
static uint32_t port_switch(const struct fabric *f, uint32_t p)
{
	uint32_t node = fabric_attached_switch(f, p);

	return node == FAB_NONE ? FAB_NONE : f->nodes[node].sw;
}

/*
 * The demands between switches: demand from the end ports of switch a to those of switch b
 * (a != b; demands inside one switch cross no switch channel), as commodities per destination
 * switch.  com[s]: commodity of destination switch s or UINT32_MAX; supply[k * nsw + s]: what
 * switch s sends to commodity k's switch.
 */
struct switch_demands {
	uint32_t nsw, ncom;
	uint32_t *com, *com_sw;
	double *supply;
};

static void switch_demands_free(struct switch_demands *sd)
{
	free(sd->com);
	free(sd->com_sw);
	free(sd->supply);
}

static int switch_demands(const struct fabric *f, const struct demands *d,
			  struct switch_demands *sd)
{
	uint32_t i;

	memset(sd, 0, sizeof(*sd));
	sd->nsw = f->nswitches;
	sd->com = malloc(sizeof(*sd->com) * (sd->nsw + 1));
	sd->com_sw = malloc(sizeof(*sd->com_sw) * (sd->nsw + 1));
	if (!sd->com || !sd->com_sw)
		return -1;
	for (i = 0; i < sd->nsw; i++)
		sd->com[i] = UINT32_MAX;
	for (i = 0; i < d->n; i++) {
		uint32_t a = port_switch(f, d->src[i]), b = port_switch(f, d->dst[i]);

		if (a != FAB_NONE && b != FAB_NONE && a != b && sd->com[b] == UINT32_MAX) {
			sd->com_sw[sd->ncom] = b;
			sd->com[b] = sd->ncom++;
		}
	}
	sd->supply = calloc((size_t)sd->ncom * sd->nsw + 1, sizeof(*sd->supply));
	if (!sd->supply)
		return -1;
	for (i = 0; i < d->n; i++) {
		uint32_t a = port_switch(f, d->src[i]), b = port_switch(f, d->dst[i]);

		if (a != FAB_NONE && b != FAB_NONE && a != b)
			sd->supply[(size_t)sd->com[b] * sd->nsw + a] += d->amount[i];
	}
	return 0;
}

/* The switch-to-switch channels (both directions of each live link), as port indices. */
static uint32_t switch_channels(const struct fabric *f, uint32_t *chan)
{
	uint32_t p, n = 0;

	for (p = 0; p < f->nports; p++)
		if (f->ports[p].num && fabric_channel_up(f, p) &&
		    fabric_is_switch(f, f->ports[p].node) &&
		    fabric_is_switch(f, f->ports[f->ports[p].remote].node))
			chan[n++] = p;
	return n;
}

#ifdef HAVE_GLPK

/*
 * The linear program over the switch channels.  Flows to one switch merge into one commodity:
 * any flow to a single sink splits into paths from each source, so merging the end ports behind
 * a destination switch loses nothing and divides the commodities by the hosts per switch.  End
 * links carry the same load in every routing; they are in the end-link bound, and the optimum is
 * the larger of the two.
 */
struct lp {
	const struct fabric *f;
	const struct switch_demands *sd;
	uint32_t *chan, nchan;
	double unit;
	int *ia, *ja;
	double *ar;
	size_t nz, nz_cap;
	glp_prob *p;
};

static int put(struct lp *lp, int row, int col, double v)
{
	if (lp->nz + 1 >= lp->nz_cap) {
		size_t cap = lp->nz_cap ? 2 * lp->nz_cap : 4096;
		int *ia = realloc(lp->ia, cap * sizeof(int));
		int *ja = ia ? realloc(lp->ja, cap * sizeof(int)) : NULL;
		double *ar = ja ? realloc(lp->ar, cap * sizeof(double)) : NULL;

		if (ia)
			lp->ia = ia;
		if (ja)
			lp->ja = ja;
		if (!ar)
			return -1;
		lp->ar = ar;
		lp->nz_cap = cap;
	}
	lp->nz++;
	lp->ia[lp->nz] = row;
	lp->ja[lp->nz] = col;
	lp->ar[lp->nz] = v;
	return 0;
}

/* Rows: one capacity row per switch channel (i + 1), then nsw conservation rows per commodity. */
static int conservation_row(const struct lp *lp, uint32_t k, uint32_t sw)
{
	return (int)(lp->nchan + 1 + (uint64_t)k * lp->sd->nsw + sw);
}

/* Column 1 is U; then per commodity one flow per switch channel, in every channel's row. */
static int build(struct lp *lp)
{
	const struct switch_demands *sd = lp->sd;
	uint32_t i, k, s;
	int col;

	glp_add_rows(lp->p, (int)(lp->nchan + (uint64_t)sd->ncom * sd->nsw));
	for (i = 1; i <= lp->nchan; i++)
		glp_set_row_bnds(lp->p, (int)i, GLP_UP, 0.0, 0.0);
	for (k = 0; k < sd->ncom; k++) {
		double total = 0;

		for (s = 0; s < sd->nsw; s++) {
			double out = sd->supply[(size_t)k * sd->nsw + s];

			total += out;
			glp_set_row_bnds(lp->p, conservation_row(lp, k, s), GLP_FX, out, out);
		}
		glp_set_row_bnds(lp->p, conservation_row(lp, k, sd->com_sw[k]), GLP_FX, -total,
				 -total);
	}
	glp_add_cols(lp->p, 1);
	glp_set_col_bnds(lp->p, 1, GLP_LO, 0.0, 0.0);
	glp_set_obj_coef(lp->p, 1, 1.0);
	for (i = 0; i < lp->nchan; i++)
		if (put(lp, (int)i + 1, 1, -capacity(lp->f, lp->chan[i], lp->unit)))
			return -1;
	col = glp_add_cols(lp->p, (int)((uint64_t)sd->ncom * lp->nchan));
	for (k = 0; k < sd->ncom; k++)
		for (i = 0; i < lp->nchan; i++, col++) {
			uint32_t p = lp->chan[i];

			glp_set_col_bnds(lp->p, col, GLP_LO, 0.0, 0.0);
			if (put(lp, (int)i + 1, col, 1.0) ||
			    put(lp, conservation_row(lp, k, sw_of(lp->f, p)), col, 1.0) ||
			    put(lp, conservation_row(lp, k, sw_of(lp->f, lp->f->ports[p].remote)),
				col, -1.0))
				return -1;
		}
	return 0;
}

static int lp_optimum(const struct fabric *f, const struct switch_demands *sd, const uint32_t *chan,
		      uint32_t nchan, double unit, struct optimal_result *res,
		      struct fab_error *err)
{
	struct lp lp = { .f = f, .sd = sd, .chan = (uint32_t *)chan, .nchan = nchan, .unit = unit };
	glp_smcp parm;
	int ret = -1;

	glp_term_out(GLP_OFF);
	lp.p = glp_create_prob();
	glp_set_obj_dir(lp.p, GLP_MIN);
	if (build(&lp)) {
		fab_error_set(err, "out of memory for the linear program");
		goto out;
	}
	res->variables = (uint64_t)glp_get_num_cols(lp.p);
	glp_load_matrix(lp.p, (int)lp.nz, lp.ia, lp.ja, lp.ar);
	glp_init_smcp(&parm);
	parm.msg_lev = GLP_MSG_OFF;
	parm.presolve = GLP_ON;
	if (glp_simplex(lp.p, &parm) || glp_get_status(lp.p) != GLP_OPT) {
		fab_error_set(err, "the linear program failed (out of memory or no optimum)");
		goto out;
	}
	/* The end links carry their load in any routing. */
	if (glp_get_obj_val(lp.p) > res->optimum)
		res->optimum = glp_get_obj_val(lp.p);
	res->upper = res->optimum;
	res->exact = 1;
	ret = 0;
out:
	glp_delete_prob(lp.p);
	free(lp.ia);
	free(lp.ja);
	free(lp.ar);
	return ret;
}
#endif

/*
 * The switch graph for check/maxconc.c: one edge per ordered pair of linked switches, parallel
 * channels merged (their capacities summed): a split over parallel links is free.
 */
struct sw_graph {
	uint32_t *from, *to;
	double *cap;
	struct mc_graph g;
};

static void sw_graph_free(struct sw_graph *sg)
{
	free(sg->from);
	free(sg->to);
	free(sg->cap);
}

struct sw_link {
	uint32_t a, b;
	double cap;
};

static int cmp_sw_link(const void *x, const void *y)
{
	const struct sw_link *l = x, *m = y;

	if (l->a != m->a)
		return l->a < m->a ? -1 : 1;
	return l->b < m->b ? -1 : l->b > m->b;
}

static int sw_graph_build(const struct fabric *f, const uint32_t *chan, uint32_t nchan, double unit,
			  struct sw_graph *sg)
{
	struct sw_link *l = malloc(sizeof(*l) * (nchan + 1));
	uint32_t i, n = 0;

	memset(sg, 0, sizeof(*sg));
	sg->from = malloc(sizeof(*sg->from) * (nchan + 1));
	sg->to = malloc(sizeof(*sg->to) * (nchan + 1));
	sg->cap = malloc(sizeof(*sg->cap) * (nchan + 1));
	if (!l || !sg->from || !sg->to || !sg->cap) {
		free(l);
		return -1;
	}
	for (i = 0; i < nchan; i++) {
		l[i].a = sw_of(f, chan[i]);
		l[i].b = sw_of(f, f->ports[chan[i]].remote);
		l[i].cap = capacity(f, chan[i], unit);
	}
	qsort(l, nchan, sizeof(*l), cmp_sw_link);
	for (i = 0; i < nchan; i++) {
		if (n && sg->from[n - 1] == l[i].a && sg->to[n - 1] == l[i].b) {
			sg->cap[n - 1] += l[i].cap;
			continue;
		}
		sg->from[n] = l[i].a;
		sg->to[n] = l[i].b;
		sg->cap[n++] = l[i].cap;
	}
	free(l);
	sg->g = (struct mc_graph){ f->nswitches, n, sg->from, sg->to, sg->cap };
	return 0;
}

/* Both bounds of the optimum from check/maxconc.c, for programs too large to solve exactly. */
static int approximate(const struct fabric *f, const struct switch_demands *sd,
		       const uint32_t *chan, uint32_t nchan, double unit,
		       const struct optimal_params *prm, struct optimal_result *res,
		       struct fab_error *err)
{
	struct mc_demand d = { sd->ncom, sd->com_sw, sd->supply };
	struct mc_result mc;
	struct sw_graph sg;
	int ret = -1;

	if (sw_graph_build(f, chan, nchan, unit, &sg)) {
		fab_error_set(err, "out of memory for the approximation");
		goto out;
	}
	if (maxconc_solve(&sg.g, &d, res->end_links, prm->tolerance, prm->max_seconds, &mc)) {
		fab_error_set(err, "out of memory for the approximation");
		goto out;
	}
	res->optimum = mc.lower;
	res->upper = mc.upper;
	res->iterations = mc.iterations;
	res->converged = mc.converged;
	ret = 0;
out:
	sw_graph_free(&sg);
	return ret;
}

static void describe_approximation(struct optimal_result *res, uint64_t size,
				   const struct optimal_params *prm)
{
	snprintf(res->how, sizeof(res->how),
		 "bounds: Frank-Wolfe with a dual lower bound on the switch graph, %u round(s), "
		 "%.2f s, %s; the full LP would have %llu variables (limit %llu)",
		 res->iterations, res->seconds,
		 res->converged ? "within the tolerance" : "stopped at the time limit",
		 (unsigned long long)size, (unsigned long long)prm->lp_limit);
}

int optimal_compare(const struct fabric *f, const struct routing *r, const struct demands *d,
		    const struct optimal_params *prm, struct optimal_result *res,
		    struct fab_error *err)
{
	struct switch_demands sd = { 0 };
	uint32_t *chan = malloc(sizeof(*chan) * (f->nports + 1)), nchan;
	double t0 = sn_now(), unit = fastest_rate(f);
	uint64_t size;
	int ret = -1;

	memset(res, 0, sizeof(*res));
	if (!chan || switch_demands(f, d, &sd) || routing_max(f, r, d, unit, res) ||
	    end_link_bound(f, d, unit, res)) {
		fab_error_set(err, "out of memory");
		goto out;
	}
	nchan = switch_channels(f, chan);
	size = (uint64_t)sd.ncom * nchan + 1;
	ret = 0;
#ifdef HAVE_GLPK
	if (size <= prm->lp_limit) {
		ret = lp_optimum(f, &sd, chan, nchan, unit, res, err);
		res->method = OPTIMUM_EXACT;
		res->seconds = sn_now() - t0;
		snprintf(res->how, sizeof(res->how),
			 "exact: multicommodity-flow LP, one commodity per destination switch, "
			 "%llu variables, %.2f s",
			 (unsigned long long)res->variables, res->seconds);
		goto out;
	}
#endif
	if (prm->max_seconds > 0) {
		ret = approximate(f, &sd, chan, nchan, unit, prm, res, err);
		res->method = OPTIMUM_BOUNDS;
		res->seconds = sn_now() - t0;
		describe_approximation(res, size, prm);
		goto out;
	}
	res->method = OPTIMUM_END_LINKS;
	snprintf(res->how, sizeof(res->how),
		 "lower bound of the end links: %s, and no time for the approximation",
#ifdef HAVE_GLPK
		 "the exact LP is over --lp-limit"
#else
		 "built without GLPK (libglpk-dev)"
#endif
	);
out:
	free(chan);
	switch_demands_free(&sd);
	return ret;
}
