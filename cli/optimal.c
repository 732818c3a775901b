/*
 * optimal.c - the routing's maximum link utilisation for a set of demands, and the smallest any
 * routing could reach (optimal.h).  The linear program, one commodity per destination port:
 *
 *   minimise U  subject to
 *     for every commodity k and switch s:  flow of k out of s - flow of k into s = 0
 *     for every channel c:                 sum over k of flow of k on c - U * capacity(c) <= 0
 *   the flow of k out of a source end port fixed at its demand towards k, the flow into k's
 *   port fixed at all its demand, no flow of k into any other end port (end ports do not
 *   forward), every flow >= 0.
 *
 * Solved with GLPK's simplex when configure found it (HAVE_GLPK); the figures are in units of
 * the demands' amounts over a capacity of 1 per channel.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef HAVE_GLPK
#include <glpk.h>
#endif

#include "check/verify.h"
#include "cli/optimal.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
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
		       struct optimal_result *res)
{
	double *load = calloc(f->nports + 1, sizeof(*load));
	uint32_t i;

	if (!load)
		return -1;
	for (i = 0; i < d->n; i++)
		if (!add_route(f, r, d->src[i], d->dst[i], d->amount[i], load))
			res->unrouted++;
	for (i = 0; i < f->nports; i++)
		res->routing_max = load[i] > res->routing_max ? load[i] : res->routing_max;
	free(load);
	return 0;
}

/* No routing beats its end links: each end port's demand out and in over its one link. */
static int end_link_bound(const struct fabric *f, const struct demands *d,
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
	for (i = 0; i < f->nports; i++) {
		res->optimum = out[i] > res->optimum ? out[i] : res->optimum;
		res->optimum = in[i] > res->optimum ? in[i] : res->optimum;
	}
	free(out);
	free(in);
	return 0;
}

#ifdef HAVE_GLPK

/* The switch-to-switch channels (both directions of each live link), as port indices. */
struct lp {
	const struct fabric *f;
	const struct demands *d;
	uint32_t *chan, nchan; /* switch-to-switch channels */
	uint32_t *cap_row;     /* [nports]: capacity row of the channel leaving the port, 0: none */
	uint32_t *commodity;   /* [nports]: commodity of a destination port, UINT32_MAX: none */
	uint32_t ncom, ncap;   /* commodities, capacity rows */
	uint32_t *by_dst, *dst_off; /* demand indices grouped by commodity (CSR over ncom) */
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

/* Capacity rows first (one per live channel, U in each), then k's conservation rows. */
static int conservation_row(const struct lp *lp, uint32_t k, uint32_t sw)
{
	return (int)(lp->ncap + 1 + (uint64_t)k * lp->f->nswitches + sw);
}

static uint32_t sw_of(const struct fabric *f, uint32_t p)
{
	return f->nodes[f->ports[p].node].sw;
}

/* A flow variable of commodity k on the channel leaving port p; fixed when amount >= 0. */
static int add_flow(struct lp *lp, uint32_t k, uint32_t p, double fixed)
{
	const struct fabric *f = lp->f;
	uint32_t peer = f->ports[p].remote;
	int col = glp_add_cols(lp->p, 1);

	if (fixed >= 0)
		glp_set_col_bnds(lp->p, col, GLP_FX, fixed, fixed);
	else
		glp_set_col_bnds(lp->p, col, GLP_LO, 0.0, 0.0);
	if (put(lp, (int)lp->cap_row[p], col, 1.0))
		return -1;
	if (fabric_is_switch(f, f->ports[p].node) &&
	    put(lp, conservation_row(lp, k, sw_of(f, p)), col, 1.0))
		return -1;
	if (fabric_is_switch(f, f->ports[peer].node) &&
	    put(lp, conservation_row(lp, k, sw_of(f, peer)), col, -1.0))
		return -1;
	return 0;
}

static int build_rows(struct lp *lp)
{
	const struct fabric *f = lp->f;
	uint32_t p, rows = 0;

	for (p = 0; p < f->nports; p++)
		if (f->ports[p].num && fabric_channel_up(f, p))
			lp->cap_row[p] = ++rows;
	lp->ncap = rows;
	glp_add_rows(lp->p, (int)(rows + (uint64_t)lp->ncom * f->nswitches));
	for (p = 1; p <= rows; p++)
		glp_set_row_bnds(lp->p, (int)p, GLP_UP, 0.0, 0.0);
	for (p = rows + 1; p <= rows + (uint64_t)lp->ncom * f->nswitches; p++)
		glp_set_row_bnds(lp->p, (int)p, GLP_FX, 0.0, 0.0);
	/* U, column 1, in every capacity row. */
	glp_add_cols(lp->p, 1);
	glp_set_col_bnds(lp->p, 1, GLP_LO, 0.0, 0.0);
	glp_set_obj_coef(lp->p, 1, 1.0);
	for (p = 0; p < f->nports; p++)
		if (lp->cap_row[p] && put(lp, (int)lp->cap_row[p], 1, -1.0))
			return -1;
	return 0;
}

/* Commodity k: every switch channel, its sources' injection and its port's ejection, fixed. */
static int add_commodity(struct lp *lp, uint32_t k, uint32_t dst, const double *supply)
{
	const struct fabric *f = lp->f;
	uint32_t i;
	double total = 0;

	for (i = 0; i < lp->nchan; i++)
		if (add_flow(lp, k, lp->chan[i], -1.0))
			return -1;
	for (i = 0; i < f->nports; i++)
		if (supply[i] > 0) {
			total += supply[i];
			if (add_flow(lp, k, i, supply[i]))
				return -1;
		}
	return add_flow(lp, k, f->ports[dst].remote, total);
}

static int solve(struct lp *lp, struct optimal_result *res)
{
	const struct fabric *f = lp->f;
	double *supply = calloc(f->nports + 1, sizeof(*supply));
	uint32_t k, i, p;
	glp_smcp parm;
	int ret = -1;

	if (!supply || build_rows(lp))
		goto out;
	for (p = 0; p < f->nports; p++) {
		if (lp->commodity[p] == UINT32_MAX)
			continue;
		k = lp->commodity[p];
		for (i = lp->dst_off[k]; i < lp->dst_off[k + 1]; i++)
			if (lp->d->src[lp->by_dst[i]] != p)
				supply[lp->d->src[lp->by_dst[i]]] += lp->d->amount[lp->by_dst[i]];
		if (add_commodity(lp, k, p, supply))
			goto out;
		for (i = lp->dst_off[k]; i < lp->dst_off[k + 1]; i++)
			supply[lp->d->src[lp->by_dst[i]]] = 0;
	}
	res->variables = (uint64_t)glp_get_num_cols(lp->p);
	glp_load_matrix(lp->p, (int)lp->nz, lp->ia, lp->ja, lp->ar);
	glp_init_smcp(&parm);
	parm.msg_lev = GLP_MSG_OFF;
	parm.presolve = GLP_ON;
	if (glp_simplex(lp->p, &parm) || glp_get_status(lp->p) != GLP_OPT)
		goto out;
	res->optimum = glp_get_obj_val(lp->p);
	res->exact = 1;
	ret = 0;
out:
	free(supply);
	return ret;
}

static int group_by_destination(struct lp *lp)
{
	uint32_t i, k, *fill;

	lp->dst_off = calloc(lp->ncom + 2, sizeof(*lp->dst_off));
	lp->by_dst = malloc(sizeof(*lp->by_dst) * (lp->d->n + 1));
	fill = malloc(sizeof(*fill) * (lp->ncom + 1));
	if (!lp->dst_off || !lp->by_dst || !fill) {
		free(fill);
		return -1;
	}
	for (i = 0; i < lp->d->n; i++)
		lp->dst_off[lp->commodity[lp->d->dst[i]] + 1]++;
	for (k = 0; k < lp->ncom; k++) {
		lp->dst_off[k + 1] += lp->dst_off[k];
		fill[k] = lp->dst_off[k];
	}
	for (i = 0; i < lp->d->n; i++)
		lp->by_dst[fill[lp->commodity[lp->d->dst[i]]]++] = i;
	free(fill);
	return 0;
}

static int lp_optimum(const struct fabric *f, const struct demands *d, struct optimal_result *res,
		      struct fab_error *err)
{
	struct lp lp = { .f = f, .d = d };
	uint32_t p, i;
	int ret = -1;

	lp.chan = malloc(sizeof(*lp.chan) * (f->nports + 1));
	lp.cap_row = calloc(f->nports + 1, sizeof(*lp.cap_row));
	lp.commodity = malloc(sizeof(*lp.commodity) * (f->nports + 1));
	if (!lp.chan || !lp.cap_row || !lp.commodity) {
		fab_error_set(err, "out of memory for the linear program");
		goto out;
	}
	for (p = 0; p < f->nports; p++) {
		lp.commodity[p] = UINT32_MAX;
		if (f->ports[p].num && fabric_channel_up(f, p) &&
		    fabric_is_switch(f, f->ports[p].node) &&
		    fabric_is_switch(f, f->ports[f->ports[p].remote].node))
			lp.chan[lp.nchan++] = p;
	}
	for (i = 0; i < d->n; i++)
		if (lp.commodity[d->dst[i]] == UINT32_MAX)
			lp.commodity[d->dst[i]] = lp.ncom++;
	if (group_by_destination(&lp)) {
		fab_error_set(err, "out of memory for the linear program");
		goto out;
	}
	glp_term_out(GLP_OFF);
	lp.p = glp_create_prob();
	glp_set_obj_dir(lp.p, GLP_MIN);
	if (solve(&lp, res)) {
		fab_error_set(err, "the linear program failed (out of memory or no optimum)");
		goto out;
	}
	ret = 0;
out:
	if (lp.p)
		glp_delete_prob(lp.p);
	free(lp.chan);
	free(lp.cap_row);
	free(lp.commodity);
	free(lp.by_dst);
	free(lp.dst_off);
	free(lp.ia);
	free(lp.ja);
	free(lp.ar);
	return ret;
}
#endif

/* Variables the program would have: per destination, the switch channels and its sources. */
static uint64_t lp_size(const struct fabric *f, const struct demands *d)
{
	uint8_t *dst = calloc(f->nports + 1, 1);
	uint64_t ncom = 0, chans = 0;
	uint32_t p, i;

	if (!dst)
		return UINT64_MAX;
	for (i = 0; i < d->n; i++) {
		ncom += !dst[d->dst[i]];
		dst[d->dst[i]] = 1;
	}
	for (p = 0; p < f->nports; p++)
		chans += f->ports[p].num && fabric_channel_up(f, p) &&
			 fabric_is_switch(f, f->ports[p].node);
	free(dst);
	return ncom * chans + d->n;
}

int optimal_compare(const struct fabric *f, const struct routing *r, const struct demands *d,
		    uint64_t max_variables, struct optimal_result *res, struct fab_error *err)
{
	uint64_t size = lp_size(f, d);
	double t0 = now();

	memset(res, 0, sizeof(*res));
	if (routing_max(f, r, d, res) || end_link_bound(f, d, res)) {
		fab_error_set(err, "out of memory");
		return -1;
	}
#ifdef HAVE_GLPK
	if (size <= max_variables) {
		if (lp_optimum(f, d, res, err))
			return -1;
		res->seconds = now() - t0;
		snprintf(res->how, sizeof(res->how),
			 "exact: multicommodity-flow LP, %llu variables, %.2f s",
			 (unsigned long long)res->variables, res->seconds);
		return 0;
	}
	snprintf(
		res->how, sizeof(res->how),
		"lower bound of the end links: the exact LP would have %llu variables (limit %llu)",
		(unsigned long long)size, (unsigned long long)max_variables);
#else
	(void)size;
	(void)max_variables;
	snprintf(res->how, sizeof(res->how),
		 "lower bound of the end links: built without GLPK (libglpk-dev)");
#endif
	return 0;
}
