/*
 * random.c - random regular graphs (Jellyfish): --switches N, each joined to --degree D others
 * chosen at random from the --seed, with no parallel links, and connected.  Random links join
 * switches with free ports until no more fit, then Jellyfish's edge swaps use up the ports left
 * free; a whole attempt is redone with a fresh stream when the swaps stall or the graph is not
 * connected.
 *
 * Port order: hosts on ports 1..T, then ports T+1..T+D to the neighbours in the order their
 * links stand in the finished edge list.
 */
#include "cli/gen/gen_private.h"
#include "lib/assert.h"

#include <stdlib.h>
#include <string.h>

/* A random 2-regular graph is one cycle with probability ~sqrt(pi / 2N). */
#define RANDOM_ATTEMPTS 1000

struct rgraph {
	uint32_t n;
	uint32_t d;
	uint32_t *nbr; /* n * d neighbour slots */
	uint32_t *deg;
	uint32_t *ea;
	uint32_t *eb;
	uint32_t ne;
	uint32_t *open; /* switches with free ports, phase 1 only */
	uint32_t *opos;
	uint32_t nopen;
	uint32_t *scratch;
};

static void rg_free(struct rgraph *g)
{
	free(g->nbr);
	free(g->deg);
	free(g->ea);
	free(g->eb);
	free(g->open);
	free(g->opos);
	free(g->scratch);
}

static int rg_alloc(struct rgraph *g, uint32_t n, uint32_t d)
{
	size_t ne = (size_t)n * d / 2 + 1;

	memset(g, 0, sizeof(*g));
	g->n = n;
	g->d = d;
	g->nbr = malloc((size_t)n * d * sizeof(*g->nbr));
	g->deg = malloc(n * sizeof(*g->deg));
	g->ea = malloc(ne * sizeof(*g->ea));
	g->eb = malloc(ne * sizeof(*g->eb));
	g->open = malloc(n * sizeof(*g->open));
	g->opos = malloc(n * sizeof(*g->opos));
	g->scratch = malloc(n * sizeof(*g->scratch));
	if (!g->nbr || !g->deg || !g->ea || !g->eb || !g->open || !g->opos || !g->scratch)
		return gen_nomem();
	return GEN_OK;
}

static bool rg_adjacent(const struct rgraph *g, uint32_t u, uint32_t v)
{
	const uint32_t *nb = g->nbr + (size_t)u * g->d;
	uint32_t i;

	for (i = 0; i < g->deg[u]; i++)
		if (nb[i] == v)
			return true;
	return false;
}

static void rg_adj_add(struct rgraph *g, uint32_t u, uint32_t v)
{
	sn_assert(u < g->n && v < g->n && u != v);
	sn_assert(g->deg[u] < g->d && g->deg[v] < g->d);
	g->nbr[(size_t)u * g->d + g->deg[u]++] = v;
	g->nbr[(size_t)v * g->d + g->deg[v]++] = u;
}

static void rg_adj_del_one(struct rgraph *g, uint32_t u, uint32_t v)
{
	uint32_t *nb = g->nbr + (size_t)u * g->d;
	uint32_t i;

	for (i = 0; i < g->deg[u]; i++) {
		if (nb[i] == v) {
			nb[i] = nb[--g->deg[u]];
			return;
		}
	}
}

static void rg_add_edge(struct rgraph *g, uint32_t u, uint32_t v)
{
	rg_adj_add(g, u, v);
	/* degrees stay within d, so there are never more than n * d / 2 edges */
	sn_assert((uint64_t)g->ne < (uint64_t)g->n * g->d / 2 + 1);
	g->ea[g->ne] = u;
	g->eb[g->ne] = v;
	g->ne++;
}

/* Drop edge e=(x,y) and reuse its slot for (u,x); (v,y) is appended. */
static void rg_swap_edge(struct rgraph *g, uint32_t e, uint32_t u, uint32_t v)
{
	uint32_t x = g->ea[e], y = g->eb[e];

	rg_adj_del_one(g, x, y);
	rg_adj_del_one(g, y, x);
	rg_adj_add(g, u, x);
	g->ea[e] = u;
	g->eb[e] = x;
	rg_add_edge(g, v, y);
}

static void rg_close(struct rgraph *g, uint32_t v)
{
	uint32_t i, last;

	if (g->deg[v] < g->d || g->opos[v] == NO_NODE)
		return;
	i = g->opos[v];
	last = g->open[--g->nopen];
	g->open[i] = last;
	g->opos[last] = i;
	g->opos[v] = NO_NODE;
}

/*
 * Random draws stall once the open switches are nearly all adjacent;
 * then count the remaining non-adjacent ordered pairs and pick one
 * uniformly, or report that none is left.
 */
static bool rg_pick_exhaustive(struct rgraph *g, struct rng *r, uint32_t *pu, uint32_t *pv)
{
	uint64_t total = 0, pick;
	uint32_t i, j;

	for (i = 0; i < g->nopen; i++) {
		uint32_t u = g->open[i], c = 0;
		const uint32_t *nb = g->nbr + (size_t)u * g->d;

		for (j = 0; j < g->deg[u]; j++)
			if (g->opos[nb[j]] != NO_NODE)
				c++;
		g->scratch[i] = g->nopen - 1 - c;
		total += g->scratch[i];
	}
	if (!total)
		return false;
	pick = rng_below(r, total);
	for (i = 0; pick >= g->scratch[i]; i++)
		pick -= g->scratch[i];
	*pu = g->open[i];
	for (j = 0; j < g->nopen; j++) {
		uint32_t w = g->open[j];

		if (w == *pu || rg_adjacent(g, *pu, w))
			continue;
		if (!pick--) {
			*pv = w;
			return true;
		}
	}
	return false;
}

static void rg_join_random(struct rgraph *g, struct rng *r)
{
	uint32_t fails = 0, u, v, i, j;

	while (g->nopen >= 2) {
		i = (uint32_t)rng_below(r, g->nopen);
		j = (uint32_t)rng_below(r, g->nopen - 1);
		if (j >= i)
			j++;
		u = g->open[i];
		v = g->open[j];
		if (rg_adjacent(g, u, v)) {
			if (++fails < 2 * g->nopen + 16)
				continue;
			if (!rg_pick_exhaustive(g, r, &u, &v))
				return;
		}
		fails = 0;
		rg_add_edge(g, u, v);
		rg_close(g, u);
		rg_close(g, v);
	}
}

static uint64_t rg_tries(const struct rgraph *g)
{
	return 64 + 8 * (uint64_t)g->ne;
}

/* Jellyfish's fix-up: v takes over both ends of a random edge (x,y). */
static bool rg_fix_double(struct rgraph *g, struct rng *r, uint32_t v)
{
	uint64_t tries;

	for (tries = rg_tries(g); g->ne && tries; tries--) {
		uint32_t e = (uint32_t)rng_below(r, g->ne);
		uint32_t x = g->ea[e], y = g->eb[e];

		if (x == v || y == v || rg_adjacent(g, v, x) || rg_adjacent(g, v, y))
			continue;
		rg_swap_edge(g, e, v, v);
		return true;
	}
	return false;
}

/* Two adjacent switches with one free port each: u takes x, v takes y. */
static bool rg_fix_pair(struct rgraph *g, struct rng *r, uint32_t u, uint32_t v)
{
	uint64_t tries;

	if (!rg_adjacent(g, u, v)) {
		rg_add_edge(g, u, v);
		return true;
	}
	for (tries = rg_tries(g); g->ne && tries; tries--) {
		uint32_t e = (uint32_t)rng_below(r, g->ne);
		uint32_t x = g->ea[e], y = g->eb[e];

		if (rng_next(r) & 1) {
			g->ea[e] = y;
			g->eb[e] = x;
			x = g->ea[e];
			y = g->eb[e];
		}
		if (x == u || x == v || y == u || y == v || rg_adjacent(g, u, x) ||
		    rg_adjacent(g, v, y))
			continue;
		rg_swap_edge(g, e, u, v);
		return true;
	}
	return false;
}

static bool rg_connected(struct rgraph *g)
{
	uint32_t *queue = g->open, head = 0, tail = 0, i;
	uint8_t *seen = (uint8_t *)g->scratch;

	memset(seen, 0, g->n);
	queue[tail++] = 0;
	seen[0] = 1;
	while (head < tail) {
		uint32_t u = queue[head++];
		const uint32_t *nb = g->nbr + (size_t)u * g->d;

		for (i = 0; i < g->deg[u]; i++) {
			if (!seen[nb[i]]) {
				seen[nb[i]] = 1;
				queue[tail++] = nb[i];
			}
		}
	}
	return tail == g->n;
}

static bool rg_attempt(struct rgraph *g, struct rng *r)
{
	uint32_t v, pending = NO_NODE;

	g->ne = 0;
	g->nopen = g->n;
	for (v = 0; v < g->n; v++) {
		g->deg[v] = 0;
		g->open[v] = v;
		g->opos[v] = v;
	}

	rg_join_random(g, r);
	for (v = 0; v < g->n; v++)
		while (g->d - g->deg[v] >= 2)
			if (!rg_fix_double(g, r, v))
				return false;
	/* N*D is even, so the single free ports pair up exactly */
	for (v = 0; v < g->n; v++) {
		if (g->deg[v] == g->d)
			continue;
		if (pending == NO_NODE) {
			pending = v;
			continue;
		}
		if (!rg_fix_pair(g, r, pending, v))
			return false;
		pending = NO_NODE;
	}
	return pending == NO_NODE && rg_connected(g);
}

int validate_random(const struct opts *o)
{
	unsigned long n = o->num[OPT_SWITCHES], d = o->num[OPT_DEGREE];

	if (d >= n)
		return gen_usage("%s %s: must be less than the number of switches (N=%lu)",
				 o->name[OPT_DEGREE], o->val[OPT_DEGREE], n);
	if ((n * d) % 2)
		return gen_usage("%s %s: N*D must be even (N=%lu)", o->name[OPT_DEGREE],
				 o->val[OPT_DEGREE], n);
	if (d == 1 && n > 2)
		return gen_usage(
			"%s %s: a connected 1-regular graph has exactly 2 switches (N=%lu)",
			o->name[OPT_DEGREE], o->val[OPT_DEGREE], n);
	return GEN_OK;
}

int build_random(struct gen_fabric *f, const struct opts *o)
{
	uint32_t n = (uint32_t)o->num[OPT_SWITCHES], d = (uint32_t)o->num[OPT_DEGREE];
	uint64_t t = o->num[OPT_HPS];
	struct rgraph g;
	struct rng r;
	uint32_t attempt, s, e;
	bool ok = false;
	int rc;

	if (n > GEN_MAX_SWITCHES)
		return gen_usage("%s %s: fabric too large (at most %lu switches)",
				 o->name[OPT_SWITCHES], o->val[OPT_SWITCHES], GEN_MAX_SWITCHES);
	/* check port limits before spending time on the graph */
	rc = gen_fabric_init(f, n, (uint64_t)n * t, o->num[OPT_RADIX]);
	if (rc)
		return rc;
	for (s = 0; s < n; s++) {
		sw_desc(f, s, "random switch %u", s);
		gen_fabric_need(f, s, t + d);
	}
	rc = gen_fabric_ports(f);
	if (rc)
		return rc;

	rc = rg_alloc(&g, n, d);
	if (rc)
		goto out;
	for (attempt = 0; attempt < RANDOM_ATTEMPTS && !ok; attempt++) {
		rng_seed(&r, o->seed, STREAM_RANDOM + attempt);
		ok = rg_attempt(&g, &r);
	}
	if (!ok) {
		rc = gen_usage(
			"%s %s: no connected random graph found in %d attempts (N=%u); try another --seed or a larger degree",
			o->name[OPT_DEGREE], o->val[OPT_DEGREE], RANDOM_ATTEMPTS, n);
		goto out;
	}

	attach_hosts(f, 0, f->nsw, (uint32_t)t);
	memset(g.deg, 0, n * sizeof(*g.deg));
	for (e = 0; e < g.ne; e++) {
		uint32_t a = g.ea[e], b = g.eb[e];

		link_sw(f, a, t + 1 + g.deg[a]++, b, t + 1 + g.deg[b]++);
	}
out:
	rg_free(&g);
	return rc;
}
