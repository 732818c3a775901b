/*
 * maxconc.c - bounds on the minimum-congestion multicommodity flow (maxconc.h), for fabrics whose
 * exact linear program is too large.
 *
 * Frank-Wolfe on the smoothed maximum  phi(x) = (1/eta) log sum_e exp(eta x_e / c_e), whose value
 * lies within log(E)/eta above the busiest link's utilisation.  Each step routes every commodity
 * on its shortest-path tree under the gradient's link lengths (one Dijkstra per sink, the supplies
 * pushed down the tree), then moves the flow towards that routing by the step that minimises phi.
 * The flow stays a convex combination of routings that deliver every demand, so its busiest link
 * is an upper bound; the gradient's lengths l (sum of c_e l_e = 1) give the lower bound sum over
 * demands of supply * shortest distance under l, which any routing's total length reaches at
 * least and which is at most its maximum utilisation (weak duality).  eta grows as the bounds
 * close, so the smoothing never hides more than a fraction of the tolerance.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check/maxconc.h"
#include "lib/minheap.h"
#include "lib/clock.h"

#define NO_EDGE UINT32_MAX

struct mc_router {
	const struct mc_graph *g;
	const struct mc_demand *d;
	uint32_t *in_off, *in_edge; /* edges into each node (CSR) */
	double *dist, *acc;
	uint32_t *parent, *order;
	uint32_t *tree_edge; /* the last tree: edges carrying flow */
	double *tree_flow;
	uint32_t ntree;
	struct minheap heap;
};

struct mc_state {
	const struct mc_graph *g;
	struct mc_router *router;
	double *x, *y, *len, *soft;
	double eta;
};

/* Non-negative doubles order like their bit patterns: the heap's integer keys. */
static uint64_t key_of(double v)
{
	uint64_t k;

	memcpy(&k, &v, sizeof(k));
	return k;
}

void mc_router_free(struct mc_router *r)
{
	if (!r)
		return;
	free(r->in_off);
	free(r->in_edge);
	free(r->dist);
	free(r->acc);
	free(r->parent);
	free(r->order);
	free(r->tree_edge);
	free(r->tree_flow);
	minheap_free(&r->heap);
	free(r);
}

struct mc_router *mc_router_new(const struct mc_graph *g, const struct mc_demand *d)
{
	struct mc_router *r = calloc(1, sizeof(*r));
	uint32_t n = g->nnodes, m = g->nedges, e, v;

	if (!r)
		return NULL;
	r->g = g;
	r->d = d;
	r->in_off = calloc(n + 2, sizeof(*r->in_off));
	r->in_edge = malloc(sizeof(*r->in_edge) * (m + 1));
	r->dist = malloc(sizeof(*r->dist) * (n + 1));
	r->acc = malloc(sizeof(*r->acc) * (n + 1));
	r->parent = malloc(sizeof(*r->parent) * (n + 1));
	r->order = malloc(sizeof(*r->order) * (n + 1));
	r->tree_edge = malloc(sizeof(*r->tree_edge) * (n + 1));
	r->tree_flow = malloc(sizeof(*r->tree_flow) * (n + 1));
	if (!r->in_off || !r->in_edge || !r->dist || !r->acc || !r->parent || !r->order ||
	    !r->tree_edge || !r->tree_flow || minheap_init(&r->heap, n + 1)) {
		mc_router_free(r);
		return NULL;
	}
	for (e = 0; e < m; e++)
		r->in_off[g->to[e] + 1]++;
	for (v = 0; v < n; v++)
		r->in_off[v + 1] += r->in_off[v];
	for (e = 0; e < m; e++)
		r->in_edge[r->in_off[g->to[e]]++] = e;
	for (v = n; v > 0; v--)
		r->in_off[v] = r->in_off[v - 1];
	r->in_off[0] = 0;
	return r;
}

/* Dijkstra towards sink t over the edges reversed; returns how many nodes it settled. */
static uint32_t tree_to(struct mc_router *r, uint32_t t, const double *len)
{
	const struct mc_graph *g = r->g;
	uint32_t v, i, settled = 0;

	for (v = 0; v < g->nnodes; v++) {
		r->dist[v] = HUGE_VAL;
		r->parent[v] = NO_EDGE;
	}
	minheap_clear(&r->heap);
	r->dist[t] = 0;
	minheap_set(&r->heap, t, key_of(0));
	while ((v = minheap_pop(&r->heap)) != MINHEAP_ABSENT) {
		r->order[settled++] = v;
		for (i = r->in_off[v]; i < r->in_off[v + 1]; i++) {
			uint32_t e = r->in_edge[i], u = g->from[e];
			double dv = r->dist[v] + len[e];

			if (dv < r->dist[u]) {
				r->dist[u] = dv;
				r->parent[u] = e;
				minheap_set(&r->heap, u, key_of(dv));
			}
		}
	}
	return settled;
}

double mc_router_tree(struct mc_router *r, uint32_t k, const double *len, int *cut)
{
	const struct mc_graph *g = r->g;
	const double *sup = r->d->supply + (size_t)k * g->nnodes;
	uint32_t sink = r->d->sink[k], v, i, settled = tree_to(r, sink, len);
	double cost = 0;

	*cut = 0;
	r->ntree = 0;
	for (v = 0; v < g->nnodes; v++) {
		r->acc[v] = v == sink ? 0 : sup[v];
		if (r->acc[v] > 0 && r->dist[v] == HUGE_VAL) {
			r->acc[v] = 0;
			*cut = 1;
		}
		if (r->acc[v] > 0)
			cost += r->acc[v] * r->dist[v];
	}
	/* Farthest first: a node's whole subtree has reached it before it passes it on. */
	for (i = settled; i-- > 1;) {
		uint32_t u = r->order[i], e = r->parent[u];

		if (r->acc[u] == 0)
			continue;
		r->tree_edge[r->ntree] = e;
		r->tree_flow[r->ntree++] = r->acc[u];
		r->acc[g->to[e]] += r->acc[u];
	}
	return cost;
}

uint32_t mc_router_edges(const struct mc_router *r, const uint32_t **edge, const double **flow)
{
	*edge = r->tree_edge;
	*flow = r->tree_flow;
	return r->ntree;
}

static void state_free(struct mc_state *s)
{
	mc_router_free(s->router);
	free(s->x);
	free(s->y);
	free(s->len);
	free(s->soft);
}

static int state_init(struct mc_state *s, const struct mc_graph *g, const struct mc_demand *d)
{
	uint32_t m = g->nedges;

	memset(s, 0, sizeof(*s));
	s->g = g;
	s->router = mc_router_new(g, d);
	s->x = calloc(m + 1, sizeof(*s->x));
	s->y = calloc(m + 1, sizeof(*s->y));
	s->len = calloc(m + 1, sizeof(*s->len));
	s->soft = calloc(m + 1, sizeof(*s->soft));
	return s->router && s->x && s->y && s->len && s->soft ? 0 : -1;
}

/*
 * Routes every commodity on its shortest-path tree into y; returns the demands' total length
 * under len (the lower bound, as sum of c_e len_e = 1).  *unreachable counts commodities with a
 * source the tree does not reach.
 */
static double route_all(struct mc_state *s, uint32_t *unreachable)
{
	const uint32_t *edge;
	const double *flow;
	double cost = 0;
	uint32_t k, i, n;
	int cut;

	memset(s->y, 0, sizeof(*s->y) * s->g->nedges);
	*unreachable = 0;
	for (k = 0; k < s->router->d->ncom; k++) {
		cost += mc_router_tree(s->router, k, s->len, &cut);
		*unreachable += (uint32_t)cut;
		n = mc_router_edges(s->router, &edge, &flow);
		for (i = 0; i < n; i++)
			s->y[edge[i]] += flow[i];
	}
	return cost;
}

/* The gradient of phi at x as link lengths: softmax weights over capacities, sum c_e l_e = 1. */
static void lengths(struct mc_state *s)
{
	const struct mc_graph *g = s->g;
	double top = -HUGE_VAL, z = 0;
	uint32_t e;

	for (e = 0; e < g->nedges; e++)
		top = fmax(top, s->eta * s->x[e] / g->cap[e]);
	for (e = 0; e < g->nedges; e++) {
		s->soft[e] = exp(s->eta * s->x[e] / g->cap[e] - top);
		z += s->soft[e];
	}
	for (e = 0; e < g->nedges; e++)
		s->len[e] = s->soft[e] / z / g->cap[e];
}

/* phi's slope along y - x at x + gamma (y - x), up to a positive factor. */
static double slope(const struct mc_state *s, double gamma)
{
	const struct mc_graph *g = s->g;
	double top = -HUGE_VAL, num = 0, den = 0;
	uint32_t e;

	for (e = 0; e < g->nedges; e++)
		top = fmax(top, s->eta * (s->x[e] + gamma * (s->y[e] - s->x[e])) / g->cap[e]);
	for (e = 0; e < g->nedges; e++) {
		double w = exp(s->eta * (s->x[e] + gamma * (s->y[e] - s->x[e])) / g->cap[e] - top);

		num += w * (s->y[e] - s->x[e]) / g->cap[e];
		den += w;
	}
	return num / den;
}

/* The step towards y that minimises phi (convex along the segment): bisection on the slope. */
static double best_step(const struct mc_state *s)
{
	double lo = 0, hi = 1;
	int i;

	if (slope(s, 1) <= 0)
		return 1;
	if (slope(s, 0) >= 0)
		return 0;
	for (i = 0; i < 40; i++) {
		double mid = (lo + hi) / 2;

		if (slope(s, mid) < 0)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

static double busiest(const struct mc_state *s)
{
	double top = 0;
	uint32_t e;

	for (e = 0; e < s->g->nedges; e++)
		top = fmax(top, s->x[e] / s->g->cap[e]);
	return top;
}

/*
 * The smoothing hides at most log(E)/eta: keep that under an eighth of the gap still open
 * (at least of the tolerance).  A sharp maximum early would make every step tiny; the bounds are
 * valid whatever eta is.
 */
static double sharpness(uint32_t nedges, double gap, double upper)
{
	return 4.0 * log((double)nedges + 1) / (gap * (upper > 0 ? upper : 1));
}

static int converged(const struct mc_result *res, double tolerance)
{
	return res->upper <= res->lower * (1 + tolerance);
}

int maxconc_solve(const struct mc_graph *g, const struct mc_demand *d, double floor,
		  double tolerance, double max_seconds, struct mc_result *res)
{
	struct mc_state s;
	double t0 = sn_now(), gamma;
	uint32_t e;
	int ret = -1;

	memset(res, 0, sizeof(*res));
	res->lower = floor;
	res->upper = HUGE_VAL;
	if (state_init(&s, g, d))
		goto out;
	/* x = 0: equal weights, the lengths of the volume bound; the first routing is min-hop. */
	s.eta = 1;
	lengths(&s);
	res->lower = fmax(floor, route_all(&s, &res->unreachable));
	memcpy(s.x, s.y, sizeof(*s.x) * g->nedges);
	res->iterations = 1;
	res->upper = fmax(busiest(&s), floor);
	while (!converged(res, tolerance) && sn_now() - t0 < max_seconds) {
		uint32_t cut;

		s.eta = sharpness(g->nedges, fmax(tolerance, res->upper / res->lower - 1) / 2,
				  res->upper);
		lengths(&s);
		res->lower = fmax(res->lower, route_all(&s, &cut));
		if (converged(res, tolerance))
			break;
		gamma = best_step(&s);
		for (e = 0; e < g->nedges; e++)
			s.x[e] += gamma * (s.y[e] - s.x[e]);
		res->upper = fmin(res->upper, fmax(busiest(&s), floor));
		res->iterations++;
	}
	res->converged = converged(res, tolerance);
	ret = 0;
out:
	res->seconds = sn_now() - t0;
	state_free(&s);
	return ret;
}
