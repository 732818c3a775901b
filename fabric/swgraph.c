/*
 * swgraph.c - derived switch-graph arrays (see swgraph.h).
 */
#include "fabric/swgraph.h"
#include "lib/assert.h"

#include <stdlib.h>
#include <string.h>

void swgraph_free(struct swgraph *g)
{
	free(g->from);
	free(g->to);
	free(g->rev);
	free(g->adj_pos);
	memset(g, 0, sizeof(*g));
}

int swgraph_build(struct swgraph *g, const struct fabric *f)
{
	uint32_t s, e, p;

	memset(g, 0, sizeof(*g));
	g->nsw = f->nswitches;
	g->ne = f->sw_adj_off[f->nswitches];
	g->from = malloc(sizeof(*g->from) * (g->ne + 1));
	g->to = malloc(sizeof(*g->to) * (g->ne + 1));
	g->rev = malloc(sizeof(*g->rev) * (g->ne + 1));
	g->adj_pos = malloc(sizeof(*g->adj_pos) * (f->nports + 1));
	if (!g->from || !g->to || !g->rev || !g->adj_pos) {
		swgraph_free(g);
		return -1;
	}
	for (p = 0; p < f->nports; p++)
		g->adj_pos[p] = FAB_NONE;
	for (s = 0; s < g->nsw; s++) {
		/* The CSR offsets never decrease and stay inside the channel array. */
		sn_assert(f->sw_adj_off[s] <= f->sw_adj_off[s + 1] &&
			  f->sw_adj_off[s + 1] <= g->ne);
		for (e = f->sw_adj_off[s]; e < f->sw_adj_off[s + 1]; e++) {
			uint32_t r = f->ports[f->sw_adj_port[e]].remote;

			sn_assert(f->ports[f->sw_adj_port[e]].node == f->switches[s]);
			g->from[e] = s;
			g->to[e] = f->nodes[f->ports[r].node].sw;
			sn_assert(g->to[e] < g->nsw);
			g->adj_pos[f->sw_adj_port[e]] = e;
		}
	}
	for (e = 0; e < g->ne; e++) {
		g->rev[e] = g->adj_pos[f->ports[f->sw_adj_port[e]].remote];
		/* Links are symmetric: the channel back runs between the same two switches. */
		sn_assert(g->rev[e] < g->ne && g->from[g->rev[e]] == g->to[e] &&
			  g->to[g->rev[e]] == g->from[e]);
	}
	return 0;
}

/*
 * Eccentricity and sum of distances from s; unreached switches count as UINT32_MAX away.  nbr
 * holds the neighbour switch of each CSR edge: one BFS per switch reads it a switch count of
 * times, cheaper than following the port records each time.
 */
static void distances_from(const struct fabric *f, const uint32_t *nbr, uint32_t s, uint32_t *dist,
			   uint32_t *queue, uint64_t *ecc, uint64_t *sum)
{
	uint32_t head = 0, tail = 0, t, e;

	for (t = 0; t < f->nswitches; t++)
		dist[t] = UINT32_MAX;
	dist[s] = 0;
	queue[tail++] = s;
	while (head < tail) {
		t = queue[head++];
		for (e = f->sw_adj_off[t]; e < f->sw_adj_off[t + 1]; e++) {
			uint32_t v = nbr[e];

			if (dist[v] == UINT32_MAX) {
				dist[v] = dist[t] + 1;
				queue[tail++] = v;
			}
		}
	}
	*ecc = 0;
	*sum = 0;
	for (t = 0; t < f->nswitches; t++) {
		*ecc = dist[t] > *ecc ? dist[t] : *ecc;
		*sum += dist[t];
	}
}

uint32_t *swgraph_neighbours(const struct fabric *f)
{
	uint32_t ne = f->sw_adj_off[f->nswitches], e;
	uint32_t *nbr = malloc(sizeof(*nbr) * (ne + 1));

	for (e = 0; nbr && e < ne; e++) {
		nbr[e] = f->nodes[f->ports[f->ports[f->sw_adj_port[e]].remote].node].sw;
		sn_assert(nbr[e] < f->nswitches);
	}
	return nbr;
}

uint32_t swgraph_central_switch(const struct fabric *f, const uint8_t *eligible,
				uint32_t max_candidates)
{
	uint32_t *dist = malloc(sizeof(*dist) * (f->nswitches + 1));
	uint32_t *queue = malloc(sizeof(*queue) * (f->nswitches + 1));
	uint32_t *nbr = swgraph_neighbours(f);
	uint32_t s, n = 0, seen = 0, measured = 0, step, best = FAB_NONE;
	uint64_t best_ecc = UINT64_MAX, best_sum = UINT64_MAX, ecc, sum;

	if (!dist || !queue || !nbr)
		goto out;
	for (s = 0; s < f->nswitches; s++)
		n += !eligible || eligible[s];
	step = max_candidates && n > max_candidates ? n / max_candidates : 1;
	for (s = 0; s < f->nswitches; s++) {
		if (eligible && !eligible[s])
			continue;
		if (seen++ % step || (max_candidates && measured == max_candidates))
			continue;
		measured++;
		distances_from(f, nbr, s, dist, queue, &ecc, &sum);
		if (ecc < best_ecc || (ecc == best_ecc && sum < best_sum)) {
			best = s;
			best_ecc = ecc;
			best_sum = sum;
		}
	}
out:
	free(dist);
	free(queue);
	free(nbr);
	return best;
}
