/*
 * throughput.c - the flow-level throughput model (throughput.h): progressive filling over
 * shared routes, the problems the patterns make from a fabric and its LFTs, and the report.
 * Paths follow the LFTs with verify_lft_step(), the verifier's own step, to each destination's
 * base LID; a route is kept once per (source switch, destination) and shared by every flow
 * that takes it, so all-to-all on thousands of hosts stays a few bytes per flow.
 */
#include "check/throughput.h"
#include "fabric/traffic.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check/verify.h"
#include "lib/assert.h"
#include "lib/json.h"

#define NO_ROUTE UINT32_MAX
#define UNROUTED (UINT32_MAX - 1)
#define EPS 1e-9

/* Scratch of one solve: per channel the unfrozen flows and the rate frozen on it. */
struct fill {
	uint32_t *count;
	double *frozen;
	uint8_t *full;
	uint32_t *active, nactive;
};

static void fill_free(struct fill *s)
{
	free(s->count);
	free(s->frozen);
	free(s->full);
	free(s->active);
}

static int fill_open(const struct tput_problem *p, struct fill *s)
{
	memset(s, 0, sizeof(*s));
	s->count = calloc(p->nch ? p->nch : 1, sizeof(*s->count));
	s->frozen = calloc(p->nch ? p->nch : 1, sizeof(*s->frozen));
	s->full = calloc(p->nch ? p->nch : 1, 1);
	s->active = malloc((p->nflows ? p->nflows : 1) * sizeof(*s->active));
	if (!s->count || !s->frozen || !s->full || !s->active) {
		fill_free(s);
		return -1;
	}
	return 0;
}

/* Adds d to the count of every channel flow i crosses. */
static void count_flow(const struct tput_problem *p, struct fill *s, uint32_t i, int d,
		       double frozen)
{
	uint32_t r = p->flow_route[i], k;

	if (p->flow_inj[i] != FAB_NONE) {
		s->count[p->flow_inj[i]] += d;
		s->frozen[p->flow_inj[i]] += frozen;
	}
	for (k = p->route_off[r]; k < p->route_off[r + 1]; k++) {
		s->count[p->route_ch[k]] += d;
		s->frozen[p->route_ch[k]] += frozen;
	}
}

static int crosses_full(const struct tput_problem *p, const struct fill *s, uint32_t i)
{
	uint32_t r = p->flow_route[i], k;

	if (p->flow_inj[i] != FAB_NONE && s->full[p->flow_inj[i]])
		return 1;
	for (k = p->route_off[r]; k < p->route_off[r + 1]; k++)
		if (s->full[p->route_ch[k]])
			return 1;
	return 0;
}

/* The level where the next channel fills or the next flow is satisfied; marks full channels. */
static double next_level(const struct tput_problem *p, struct fill *s)
{
	double level = HUGE_VAL, l;
	uint32_t c, i;

	for (i = 0; i < s->nactive; i++)
		if (p->demand[s->active[i]] < level)
			level = p->demand[s->active[i]];
	for (c = 0; c < p->nch; c++) {
		if (!s->count[c])
			continue;
		l = (p->cap[c] - s->frozen[c]) / s->count[c];
		if (l < level)
			level = l;
	}
	for (c = 0; c < p->nch; c++)
		s->full[c] = s->count[c] &&
			     (p->cap[c] - s->frozen[c]) / s->count[c] <= level * (1 + EPS) + EPS;
	return level < 0 ? 0 : level;
}

int tput_maxmin(const struct tput_problem *p, float *rate)
{
	struct fill s;
	uint32_t i, keep;
	double level;
	int rounds = 0;

	if (fill_open(p, &s))
		return -1;
	for (i = 0; i < p->nflows; i++) {
		s.active[s.nactive++] = i;
		count_flow(p, &s, i, 1, 0);
	}
	while (s.nactive) {
		level = next_level(p, &s);
		rounds++;
		keep = 0;
		for (i = 0; i < s.nactive; i++) {
			uint32_t fl = s.active[i];

			if (p->demand[fl] <= level * (1 + EPS) || crosses_full(p, &s, fl)) {
				rate[fl] = (float)level;
				count_flow(p, &s, fl, -1, level);
			} else {
				s.active[keep++] = fl;
			}
		}
		/* Something filled at this level, so some flow froze: the loop ends. */
		sn_assert(keep < s.nactive);
		s.nactive = keep;
	}
	fill_free(&s);
	return rounds;
}

/* ---- The problem a fabric and its LFTs make ---- */

struct model {
	const struct fabric *f;
	const struct routing *r;
	uint32_t nterm;
	uint32_t *term;	    /* [nterm] terminal port indices, ascending LID */
	uint32_t *term_sw;  /* [nterm] switch each attaches to */
	uint32_t *term_of;  /* [nports] terminal index, FAB_NONE */
	double *cap;	    /* [nports] capacity of the channel leaving each port */
	uint32_t *route_id; /* [nswitches * nterm]: NO_ROUTE until walked, UNROUTED */
	uint32_t *route_off, *route_ch;
	uint32_t nroutes, routes_cap, nroute_ch, route_ch_cap;
	/* One instance's flows (terminal indices), and the problem's per-flow arrays. */
	uint32_t *src, *dst, nflows, flows_cap;
	uint32_t *flow_route, *flow_inj, *sends;
	float *demand, *rate;
};

static void model_free(struct model *m)
{
	free(m->term);
	free(m->term_sw);
	free(m->term_of);
	free(m->cap);
	free(m->route_id);
	free(m->route_off);
	free(m->route_ch);
	free(m->src);
	free(m->dst);
	free(m->flow_route);
	free(m->flow_inj);
	free(m->sends);
	free(m->demand);
	free(m->rate);
}

static int grow(void **a, uint32_t *cap, uint64_t need, size_t size)
{
	uint64_t n = *cap ? *cap : 64;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	if (n > UINT32_MAX)
		return -1;
	p = realloc(*a, n * size);
	if (!p)
		return -1;
	*a = p;
	*cap = (uint32_t)n;
	return 0;
}

static int model_open(struct model *m, const struct fabric *f, const struct routing *r)
{
	uint32_t i, p, sw;

	memset(m, 0, sizeof(*m));
	m->f = f;
	m->r = r;
	m->term = malloc((f->nendports + 1) * sizeof(*m->term));
	m->term_sw = malloc((f->nendports + 1) * sizeof(*m->term_sw));
	m->term_of = malloc((f->nports + 1) * sizeof(*m->term_of));
	m->cap = malloc((f->nports + 1) * sizeof(*m->cap));
	m->route_off = malloc(64 * sizeof(*m->route_off));
	m->routes_cap = 64;
	if (!m->term || !m->term_sw || !m->term_of || !m->cap || !m->route_off)
		return -1;
	m->route_off[0] = 0;
	for (p = 0; p < f->nports; p++) {
		m->term_of[p] = FAB_NONE;
		m->cap[p] = fabric_link_rate(f, p);
	}
	for (i = 0; i < f->nendports; i++) {
		p = f->endports[i];
		if (fabric_is_switch(f, f->ports[p].node) || !f->ports[p].base_lid)
			continue;
		sw = fabric_attached_switch(f, p);
		if (sw == FAB_NONE)
			continue;
		m->term_of[p] = m->nterm;
		m->term_sw[m->nterm] = f->nodes[sw].sw;
		m->term[m->nterm++] = p;
	}
	m->route_id = malloc(((size_t)f->nswitches * m->nterm + 1) * sizeof(*m->route_id));
	if (!m->route_id)
		return -1;
	memset(m->route_id, 0xff, ((size_t)f->nswitches * m->nterm + 1) * sizeof(*m->route_id));
	return 0;
}

/* The channels from switch sw to terminal t, the last one into t; UNROUTED when not delivered. */
static uint32_t walk_route(struct model *m, uint32_t sw, uint32_t t)
{
	unsigned dlid = m->f->ports[m->term[t]].base_lid;
	uint32_t len = 0, start = m->nroute_ch, q, nx;

	while (len <= m->f->nswitches) {
		enum lft_step step = verify_lft_step(m->f, m->r, sw, dlid, &q, &nx);

		if (step != LFT_STEP_SWITCH && step != LFT_STEP_DELIVERED)
			break;
		if (grow((void **)&m->route_ch, &m->route_ch_cap, (uint64_t)m->nroute_ch + 1,
			 sizeof(*m->route_ch)))
			return NO_ROUTE;
		m->route_ch[m->nroute_ch++] = q;
		len++;
		if (step == LFT_STEP_DELIVERED) {
			if (grow((void **)&m->route_off, &m->routes_cap, (uint64_t)m->nroutes + 2,
				 sizeof(*m->route_off)))
				return NO_ROUTE;
			m->route_off[++m->nroutes] = m->nroute_ch;
			return m->nroutes - 1;
		}
		sw = nx;
	}
	m->nroute_ch = start;
	return UNROUTED;
}

/* Route of the flow from terminal s to terminal t; UNROUTED, or NO_ROUTE without memory. */
static uint32_t route_of(struct model *m, uint32_t s, uint32_t t)
{
	uint32_t *id = &m->route_id[(size_t)m->term_sw[s] * m->nterm + t];

	if (*id == NO_ROUTE)
		*id = walk_route(m, m->term_sw[s], t);
	return *id;
}

/* *a resized to n + 1 elements; left as it was when there is no memory. */
static int resize(void **a, size_t n, size_t size)
{
	void *p = realloc(*a, (n + 1) * size);

	if (!p)
		return -1;
	*a = p;
	return 0;
}

static int add_flow(struct model *m, uint32_t s, uint32_t t)
{
	if (grow((void **)&m->src, &m->flows_cap, (uint64_t)m->nflows + 1, sizeof(*m->src)))
		return -1;
	if (resize((void **)&m->dst, m->flows_cap, sizeof(*m->dst)))
		return -1;
	m->src[m->nflows] = s;
	m->dst[m->nflows++] = t;
	return 0;
}

/* Per-instance accumulation over the flows of a pattern. */
struct collect {
	float *frac; /* every flow's fraction, unrouted ones 0 */
	uint64_t n, cap;
	double agg_sum, agg_min;
	struct tput_result *res;
};

static int collect_push(struct collect *c, float v)
{
	float *p;

	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 4096;
		p = realloc(c->frac, c->cap * sizeof(*p));
		if (!p)
			return -1;
		c->frac = p;
	}
	c->frac[c->n++] = v;
	return 0;
}

/* The full channel on flow i's path with the least headroom: its bottleneck. */
static uint32_t bottleneck(const struct model *m, const double *load, uint32_t i)
{
	uint32_t r = m->flow_route[i], k, best = m->flow_inj[i], c;
	double bl = load[best] / m->cap[best];

	for (k = m->route_off[r]; k < m->route_off[r + 1]; k++) {
		c = m->route_ch[k];
		if (load[c] / m->cap[c] > bl + EPS) {
			best = c;
			bl = load[c] / m->cap[c];
		}
	}
	return best;
}

static void note_slow(struct tput_result *res, double frac, uint32_t src, uint32_t dst, uint32_t ch,
		      uint32_t inst)
{
	unsigned k;

	if (res->nslow == TPUT_SLOW && frac >= res->slow[TPUT_SLOW - 1].fraction)
		return;
	k = res->nslow < TPUT_SLOW ? res->nslow++ : TPUT_SLOW - 1;
	while (k > 0 && res->slow[k - 1].fraction > frac) {
		res->slow[k] = res->slow[k - 1];
		k--;
	}
	res->slow[k] = (struct tput_slow){ frac, src, dst, ch, inst };
}

/* Solves the flows in m as one instance and adds it to c. */
static int solve_instance(struct model *m, struct collect *c, uint32_t inst)
{
	struct tput_problem p = { 0 };
	uint32_t i, k, n = 0, rt;
	double *load = NULL, sum = 0, inject = 0;
	int rounds, rc = -1;

	if (resize((void **)&m->flow_route, m->nflows, sizeof(uint32_t)) ||
	    resize((void **)&m->flow_inj, m->nflows, sizeof(uint32_t)) ||
	    resize((void **)&m->demand, m->nflows, sizeof(float)) ||
	    resize((void **)&m->rate, m->nflows, sizeof(float)))
		goto out;
	if (!m->sends)
		m->sends = calloc(m->nterm + 1, sizeof(*m->sends));
	load = calloc(m->f->nports + 1, sizeof(*load));
	if (!m->sends || !load)
		goto out;
	for (i = 0; i < m->nflows; i++)
		m->sends[m->src[i]]++;
	for (i = 0; i < m->nterm; i++)
		if (m->sends[i])
			inject += m->cap[m->term[i]];
	/* Routed flows first, in place: flow k of the problem is m->src[k] -> m->dst[k]. */
	for (i = 0; i < m->nflows; i++) {
		rt = route_of(m, m->src[i], m->dst[i]);
		if (rt == NO_ROUTE)
			goto out;
		if (rt == UNROUTED) {
			c->res->unrouted++;
			if (collect_push(c, 0))
				goto out;
			note_slow(c->res, 0, m->term[m->src[i]], m->term[m->dst[i]], FAB_NONE,
				  inst);
			continue;
		}
		m->src[n] = m->src[i];
		m->dst[n] = m->dst[i];
		m->flow_route[n] = rt;
		m->flow_inj[n] = m->term[m->src[i]];
		m->demand[n++] = (float)(m->cap[m->term[m->src[i]]] / m->sends[m->src[i]]);
	}
	p = (struct tput_problem){ m->f->nports,  m->cap,      m->route_off, m->route_ch, n,
				   m->flow_route, m->flow_inj, m->demand };
	rounds = tput_maxmin(&p, m->rate);
	if (rounds < 0)
		goto out;
	if ((unsigned)rounds > c->res->rounds)
		c->res->rounds = (unsigned)rounds;
	for (i = 0; i < n; i++) {
		sum += m->rate[i];
		load[m->flow_inj[i]] += m->rate[i];
		for (k = m->route_off[m->flow_route[i]]; k < m->route_off[m->flow_route[i] + 1];
		     k++)
			load[m->route_ch[k]] += m->rate[i];
	}
	for (i = 0; i < n; i++) {
		double frac = m->rate[i] / m->demand[i];

		if (frac > 1)
			frac = 1;
		if (collect_push(c, (float)frac))
			goto out;
		if (c->res->nslow < TPUT_SLOW || frac < c->res->slow[TPUT_SLOW - 1].fraction)
			note_slow(c->res, frac, m->term[m->src[i]], m->term[m->dst[i]],
				  bottleneck(m, load, i), inst);
	}
	sum = inject > 0 ? sum / inject : 0;
	c->agg_sum += sum;
	if (!c->res->instances || sum < c->agg_min)
		c->agg_min = sum;
	c->res->instances++;
	c->res->flows += m->nflows;
	rc = 0;
out:
	if (m->sends)
		memset(m->sends, 0, (m->nterm + 1) * sizeof(*m->sends));
	m->nflows = 0;
	free(load);
	return rc;
}

/* ---- Patterns ---- */

/* splitmix64, as the metrics' patterns use: seedable, the same on every platform. */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void shuffle(uint64_t *seed, uint32_t *a, uint32_t n)
{
	uint32_t i, j, x;

	for (i = n; i > 1; i--) {
		j = (uint32_t)(((unsigned __int128)rng_next(seed) * i) >> 64);
		x = a[i - 1];
		a[i - 1] = a[j];
		a[j] = x;
	}
}

static int run_alltoall(struct model *m, struct collect *c)
{
	uint32_t s, t;

	for (s = 0; s < m->nterm; s++)
		for (t = 0; t < m->nterm; t++)
			if (s != t && add_flow(m, s, t))
				return -1;
	return solve_instance(m, c, 0);
}

/* Shifts i -> i + k mod n over the terminals seq[0..n): all n - 1, or o->shifts spread evenly. */
static int run_shifts(struct model *m, struct collect *c, const uint32_t *seq, uint32_t n,
		      const struct metrics_options *o)
{
	uint32_t want = o->shifts, j, i, k;

	if (n < 2)
		return 0;
	if (!want)
		want = n - 1 <= METRICS_SHIFTS_ALL_MAX ? n - 1 : METRICS_SHIFTS_SAMPLE;
	if (want > n - 1)
		want = n - 1;
	for (j = 0; j < want; j++) {
		k = 1 + (uint32_t)((uint64_t)j * (n - 1) / want);
		for (i = 0; i < n; i++)
			if (add_flow(m, seq[i], seq[(i + k) % n]))
				return -1;
		if (solve_instance(m, c, k))
			return -1;
	}
	return 0;
}

static int run_random(struct model *m, struct collect *c, int bisect, uint32_t count, uint64_t seed)
{
	uint32_t *perm = malloc((m->nterm + 1) * sizeof(*perm)), j, i, half = m->nterm / 2;
	int rc = -1;

	if (!perm)
		return -1;
	seed ^= bisect ? 0xb15ec7ull : 0x9e47ull;
	for (j = 0; j < count && m->nterm > 1; j++) {
		for (i = 0; i < m->nterm; i++)
			perm[i] = i;
		shuffle(&seed, perm, m->nterm);
		for (i = 0; !bisect && i < m->nterm; i++)
			if (perm[i] != i && add_flow(m, i, perm[i]))
				goto out;
		/* Bisection: first half paired with the second, both ways. */
		for (i = 0; bisect && i < half; i++)
			if (add_flow(m, perm[i], perm[half + i]) ||
			    add_flow(m, perm[half + i], perm[i]))
				goto out;
		if (solve_instance(m, c, j))
			goto out;
	}
	rc = 0;
out:
	free(perm);
	return rc;
}

/* All-to-all inside every job at once: a pair sharing k jobs sends k flows. */
static int run_jobs(struct model *m, struct collect *c, const struct job_map *jm)
{
	uint32_t *off = calloc(jm->njobs + 2, sizeof(*off)), *mem = NULL, *fill = NULL;
	uint32_t t, n, k, j, a, b;
	int rc = -1;

	if (!off)
		return -1;
	for (t = 0; t < m->nterm; t++) {
		n = m->f->ports[m->term[t]].node;
		for (k = n < jm->nnodes ? jm->node_off[n] : 0;
		     n < jm->nnodes && k < jm->node_off[n + 1]; k++)
			off[jm->node_jobs[k] + 1]++;
	}
	for (j = 0; j < jm->njobs; j++)
		off[j + 1] += off[j];
	mem = malloc((off[jm->njobs] + 1) * sizeof(*mem));
	fill = malloc((jm->njobs + 1) * sizeof(*fill));
	if (!mem || !fill)
		goto out;
	memcpy(fill, off, jm->njobs * sizeof(*fill));
	for (t = 0; t < m->nterm; t++) {
		n = m->f->ports[m->term[t]].node;
		for (k = n < jm->nnodes ? jm->node_off[n] : 0;
		     n < jm->nnodes && k < jm->node_off[n + 1]; k++)
			mem[fill[jm->node_jobs[k]]++] = t;
	}
	for (j = 0; j < jm->njobs; j++)
		for (a = off[j]; a < off[j + 1]; a++)
			for (b = off[j]; b < off[j + 1]; b++)
				if (a != b && add_flow(m, mem[a], mem[b]))
					goto out;
	rc = m->nflows ? solve_instance(m, c, 0) : 0;
out:
	free(off);
	free(mem);
	free(fill);
	return rc;
}

static const char *const pattern_names[] = {
	"alltoall", "shift", "topo-shift", "permutation", "bisection", "jobs", NULL,
};

int tput_pattern_known(const char *name)
{
	unsigned i;

	for (i = 0; pattern_names[i]; i++)
		if (!strcmp(name, pattern_names[i]))
			return 1;
	return 0;
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return (x > y) - (x < y);
}

static void finish(struct collect *c)
{
	struct tput_result *res = c->res;

	if (c->n) {
		qsort(c->frac, c->n, sizeof(*c->frac), cmp_float);
		res->min = c->frac[0];
		res->p5 = c->frac[(c->n - 1) * 5 / 100];
		res->median = c->frac[(c->n - 1) / 2];
	}
	res->aggregate = res->instances ? c->agg_sum / res->instances : 0;
	res->worst_aggregate = res->instances ? c->agg_min : 0;
}

/* The terminals of order[0..norder) as terminal indices, in that order; their number. */
static uint32_t order_terms(const struct model *m, const uint32_t *order, uint32_t norder,
			    uint32_t *seq)
{
	uint32_t i, n = 0;

	for (i = 0; i < norder; i++)
		if (order[i] < m->f->nports && m->term_of[order[i]] != FAB_NONE)
			seq[n++] = m->term_of[order[i]];
	return n;
}

static int dispatch(struct model *m, struct collect *c, const char *pattern,
		    const struct metrics_options *o, const uint32_t *order, uint32_t norder,
		    const struct job_map *jm, uint32_t *seq)
{
	uint32_t i;

	if (!strcmp(pattern, "alltoall"))
		return run_alltoall(m, c);
	if (!strcmp(pattern, "shift")) {
		for (i = 0; i < m->nterm; i++)
			seq[i] = i;
		return run_shifts(m, c, seq, m->nterm, o);
	}
	if (!strcmp(pattern, "topo-shift"))
		return run_shifts(m, c, seq, order_terms(m, order, norder, seq), o);
	if (!strcmp(pattern, "permutation"))
		return run_random(m, c, 0, o->permutations, o->seed);
	if (!strcmp(pattern, "bisection"))
		return run_random(m, c, 1, o->bisections, o->seed);
	return run_jobs(m, c, jm);
}

int tput_run(const struct fabric *f, const struct routing *r, const char *pattern,
	     const struct metrics_options *o, const uint32_t *order, uint32_t norder,
	     const struct job_map *jm, struct tput_result *out, struct fab_error *err)
{
	struct model m;
	struct collect c = { 0 };
	uint32_t *seq = NULL;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	snprintf(out->pattern, sizeof(out->pattern), "%s", pattern);
	c.res = out;
	if (!tput_pattern_known(pattern)) {
		fab_error_set(err, "unknown throughput pattern '%s'", pattern);
		return -2;
	}
	if (!strcmp(pattern, "topo-shift") && !norder) {
		fab_error_set(err, "topo-shift needs a fat tree the fabric is not");
		return -2;
	}
	if (!strcmp(pattern, "jobs") && !jm) {
		fab_error_set(err, "the jobs pattern needs --job-map FILE");
		return -2;
	}
	if (model_open(&m, f, r))
		goto out;
	out->terminals = m.nterm;
	seq = malloc((m.nterm + norder + 1) * sizeof(*seq));
	if (!seq || dispatch(&m, &c, pattern, o, order, norder, jm, seq))
		goto out;
	finish(&c);
	rc = 0;
out:
	free(seq);
	free(c.frac);
	model_free(&m);
	return rc;
}

/* ---- The report ---- */

/* "desc[port] -> desc[port]" of the channel leaving port p. */
static void channel_name(const struct fabric *f, uint32_t p, char *buf, size_t len)
{
	uint32_t q = f->ports[p].remote;

	if (p == FAB_NONE) {
		snprintf(buf, len, "(not delivered)");
		return;
	}
	if (q == FAB_NONE)
		q = p;
	snprintf(buf, len, "%.100s[%u] -> %.100s[%u]", fabric_node_desc(f, f->ports[p].node),
		 f->ports[p].num, fabric_node_desc(f, f->ports[q].node), f->ports[q].num);
}

static const char *port_desc(const struct fabric *f, uint32_t p)
{
	return fabric_node_desc(f, f->ports[p].node);
}

void tput_print_text(const struct fabric *f, const struct tput_result *res, unsigned n, FILE *out)
{
	char ch[240];
	unsigned i, k;

	for (i = 0; i < n; i++) {
		const struct tput_result *t = &res[i];

		fprintf(out,
			"throughput %s: %" PRIu32 " instance(s), %" PRIu64 " flows over %" PRIu32
			" terminals, %" PRIu64 " not delivered\n",
			t->pattern, t->instances, t->flows, t->terminals, t->unrouted);
		fprintf(out,
			"  aggregate %.4f of injection bandwidth (worst instance %.4f); per flow: min %.4f, p5 %.4f, median %.4f\n",
			t->aggregate, t->worst_aggregate, t->min, t->p5, t->median);
		for (k = 0; k < t->nslow && k < 5; k++) {
			channel_name(f, t->slow[k].channel, ch, sizeof(ch));
			fprintf(out, "  slow %.4f  %s -> %s  (instance %" PRIu32 ") at %s\n",
				t->slow[k].fraction, port_desc(f, t->slow[k].src),
				port_desc(f, t->slow[k].dst), t->slow[k].instance, ch);
		}
	}
}

void tput_print_json(const struct fabric *f, const struct tput_result *res, unsigned n, FILE *out)
{
	char ch[240];
	unsigned i, k;

	fputc('[', out);
	for (i = 0; i < n; i++) {
		const struct tput_result *t = &res[i];

		fprintf(out, "%s{\"pattern\": ", i ? ", " : "");
		json_write_string(out, t->pattern);
		fprintf(out,
			", \"instances\": %" PRIu32 ", \"terminals\": %" PRIu32
			", \"flows\": %" PRIu64 ", \"unrouted\": %" PRIu64 ", \"rounds\": %u"
			", \"aggregate\": %.6f, \"worst_aggregate\": %.6f, \"min\": %.6f, \"p5\": %.6f, \"median\": %.6f, \"slowest\": [",
			t->instances, t->terminals, t->flows, t->unrouted, t->rounds, t->aggregate,
			t->worst_aggregate, t->min, t->p5, t->median);
		for (k = 0; k < t->nslow; k++) {
			fprintf(out, "%s{\"fraction\": %.6f, \"src\": ", k ? ", " : "",
				t->slow[k].fraction);
			json_write_string(out, port_desc(f, t->slow[k].src));
			fputs(", \"dst\": ", out);
			json_write_string(out, port_desc(f, t->slow[k].dst));
			channel_name(f, t->slow[k].channel, ch, sizeof(ch));
			fprintf(out, ", \"instance\": %" PRIu32 ", \"bottleneck\": ",
				t->slow[k].instance);
			json_write_string(out, ch);
			fputc('}', out);
		}
		fputs("]}", out);
	}
	fputc(']', out);
}

/* ---- Completion times of a traffic matrix ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The matrix's node pairs as flows of m (first LID port of each node), sizes in size[]. */
static int traffic_flows(struct model *m, const struct traffic *t, double **size)
{
	const struct fabric *f = m->f;
	uint32_t dn, i, sp, tp;

	*size = malloc(sizeof(double) * ((size_t)t->off[t->nnodes] + 1));
	if (!*size)
		return -1;
	for (dn = 0; dn < t->nnodes && dn < f->nnodes; dn++) {
		for (i = t->off[dn]; i < t->off[dn + 1]; i++) {
			sp = FAB_NONE;
			tp = FAB_NONE;
			for (uint32_t k = 1; k <= f->nodes[t->src_node[i]].nports && sp == FAB_NONE;
			     k++)
				sp = m->term_of[f->nodes[t->src_node[i]].first_port + k];
			for (uint32_t k = 1; k <= f->nodes[dn].nports && tp == FAB_NONE; k++)
				tp = m->term_of[f->nodes[dn].first_port + k];
			if (sp == FAB_NONE || tp == FAB_NONE)
				continue;
			if (m->nflows >= TPUT_COMPLETION_MAX_FLOWS)
				return -2;
			if (add_flow(m, sp, tp))
				return -1;
			(*size)[m->nflows - 1] = (double)t->weight[i];
		}
	}
	return 0;
}

/* Slowdowns of the flows into c: finish over size / injection rate. */
static void completion_stats(const struct model *m, const double *size, const double *finish,
			     uint32_t n, struct tput_completion *c)
{
	double *sorted = malloc(sizeof(double) * (n + 1)), median, alone, slow, big = 0, last = 0;
	uint32_t i;

	if (!sorted)
		return;
	memcpy(sorted, size, sizeof(double) * n);
	qsort(sorted, n, sizeof(double), cmp_double);
	median = n ? sorted[n / 2] : 0;
	free(sorted);
	for (i = 0; i < n; i++) {
		alone = size[i] / m->cap[m->term[m->src[i]]];
		slow = finish[i] / alone;
		big = alone > big ? alone : big;
		last = finish[i] > last ? finish[i] : last;
		c->all_worst = slow > c->all_worst ? slow : c->all_worst;
		c->all_mean += slow / n;
		if (size[i] >= TPUT_HEAVY * median) {
			c->heavy++;
			c->heavy_worst = slow > c->heavy_worst ? slow : c->heavy_worst;
			c->heavy_mean += slow;
		}
	}
	if (c->heavy)
		c->heavy_mean /= c->heavy;
	c->makespan = big > 0 ? last / big : 0;
}

/* One fluid step: rates of the unfinished flows, advanced to the next finish. */
static int completion_step(struct model *m, uint32_t *live, uint32_t *nlive, double *left,
			   double *finish, double *now)
{
	struct tput_problem p;
	uint32_t i, keep = 0, *route = malloc(sizeof(uint32_t) * (*nlive + 1)),
		    *inj = malloc(sizeof(uint32_t) * (*nlive + 1));
	float *dem = malloc(sizeof(float) * (*nlive + 1)),
	      *rate = malloc(sizeof(float) * (*nlive + 1));
	double dt = -1;
	int rc = -1;

	if (!route || !inj || !dem || !rate)
		goto out;
	for (i = 0; i < *nlive; i++) {
		route[i] = m->flow_route[live[i]];
		inj[i] = m->flow_inj[live[i]];
		dem[i] = (float)m->cap[inj[i]];
	}
	p = (struct tput_problem){ m->f->nports, m->cap, m->route_off, m->route_ch,
				   *nlive,	 route,	 inj,	       dem };
	if (tput_maxmin(&p, rate) < 0)
		goto out;
	for (i = 0; i < *nlive; i++)
		if (rate[i] > 0 && (dt < 0 || left[live[i]] / rate[i] < dt))
			dt = left[live[i]] / rate[i];
	if (dt < 0)
		goto out;
	*now += dt;
	for (i = 0; i < *nlive; i++) {
		left[live[i]] -= rate[i] * dt;
		if (left[live[i]] <= 1e-9 * (1 + left[live[i]] + rate[i] * dt))
			finish[live[i]] = *now;
		else
			live[keep++] = live[i];
	}
	*nlive = keep;
	rc = 0;
out:
	free(route);
	free(inj);
	free(dem);
	free(rate);
	return rc;
}

int tput_completion(const struct fabric *f, const struct routing *r, const struct traffic *t,
		    struct tput_completion *out)
{
	struct model m;
	double *size = NULL, *left = NULL, *finish = NULL, now = 0;
	uint32_t *live = NULL, nlive = 0, i, n = 0, rt;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (model_open(&m, f, r))
		goto out;
	rc = traffic_flows(&m, t, &size);
	if (rc)
		goto out;
	rc = -1;
	if (resize((void **)&m.flow_route, m.nflows, sizeof(uint32_t)) ||
	    resize((void **)&m.flow_inj, m.nflows, sizeof(uint32_t)))
		goto out;
	/* Routed flows first, in place, as solve_instance() keeps them. */
	for (i = 0; i < m.nflows; i++) {
		rt = route_of(&m, m.src[i], m.dst[i]);
		if (rt == NO_ROUTE)
			goto out;
		if (rt == UNROUTED) {
			out->unrouted++;
			continue;
		}
		m.src[n] = m.src[i];
		m.dst[n] = m.dst[i];
		size[n] = size[i];
		m.flow_route[n] = rt;
		m.flow_inj[n++] = m.term[m.src[i]];
	}
	left = malloc(sizeof(double) * (n + 1));
	finish = malloc(sizeof(double) * (n + 1));
	live = malloc(sizeof(uint32_t) * (n + 1));
	if (!left || !finish || !live)
		goto out;
	for (i = 0; i < n; i++) {
		left[i] = size[i];
		live[nlive++] = i;
	}
	while (nlive) {
		if (completion_step(&m, live, &nlive, left, finish, &now))
			goto out;
		out->events++;
	}
	out->flows = n;
	completion_stats(&m, size, finish, n, out);
	rc = 0;
out:
	free(size);
	free(left);
	free(finish);
	free(live);
	model_free(&m);
	return rc;
}
