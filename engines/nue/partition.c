/*
 * layers.c - how Nue splits the destinations over its k virtual layers and where each layer's
 * escape-path tree is rooted (thesis sections 6.2.3 and 6.2.5).
 *
 * Partitioning: multilevel k-way partitioning of the graph of end ports (CA ports and switch
 * port 0s, linked as the fabric links them) with METIS, so that a layer holds destinations that
 * sit close together.  Without METIS (or when it fails) the built-in fallback deals the
 * destinations in breadth-first order of their switches into k contiguous, equal blocks, which
 * also keeps neighbouring destinations together.  The partition only changes balance and the
 * number of fall-backs, never whether routing succeeds.
 *
 * Root: the switch of highest betweenness inside the convex subgraph of the layer's destination
 * switches, with sources weighted by the end ports they carry and targets by the layer's
 * destinations they carry, so that the escape paths induce few dependencies.
 */
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_METIS
#include <metis.h>
#endif

#include "engines/nue/nue.h"
#include "lib/sortu64.h"
#include "fabric/layersfile.h"

/* Breadth-first order of the switches from switch 0 (lowest GUID); unreachable ones last. */
static int bfs_order(const struct fabric *f, uint32_t *rank)
{
	uint32_t *queue = malloc(sizeof(uint32_t) * (f->nswitches ? f->nswitches : 1));
	uint32_t qh = 0, qt = 0, s, i, next = 0;

	if (!queue)
		return -1;
	for (s = 0; s < f->nswitches; s++)
		rank[s] = FAB_NONE;
	for (s = 0; s < f->nswitches; s++) {
		if (rank[s] != FAB_NONE)
			continue;
		rank[s] = next++;
		queue[qt++] = s;
		while (qh < qt) {
			uint32_t u = queue[qh++];

			for (i = f->sw_adj_off[u]; i < f->sw_adj_off[u + 1]; i++) {
				uint32_t r = f->ports[f->sw_adj_port[i]].remote;
				uint32_t v = f->nodes[f->ports[r].node].sw;

				if (rank[v] == FAB_NONE) {
					rank[v] = next++;
					queue[qt++] = v;
				}
			}
		}
	}
	free(queue);
	return 0;
}

static int partition_bfs_blocks(const struct fabric *f, unsigned k, uint8_t *part)
{
	uint32_t n = f->nendports, i;
	uint32_t *rank = malloc(sizeof(uint32_t) * (f->nswitches ? f->nswitches : 1));
	uint64_t *key = malloc(sizeof(uint64_t) * (n ? n : 1));
	int rc = -1;

	if (!rank || !key || bfs_order(f, rank))
		goto out;
	for (i = 0; i < n; i++) {
		uint32_t s = fabric_endport_switch(f, f->endports[i]);
		uint64_t r = s == FAB_NONE ? UINT32_MAX : rank[s];

		key[i] = (r << 32) | i;
	}
	sort_u64(key, n);
	for (i = 0; i < n; i++)
		part[(uint32_t)key[i]] = (uint8_t)((uint64_t)i * k / n);
	rc = 0;
out:
	free(rank);
	free(key);
	return rc;
}

#ifdef HAVE_METIS
/* Neighbours of end-port vertex v in the port graph, written to adj; returns the count. */
static uint32_t port_graph_neighbours(const struct fabric *f, const uint32_t *sw_vertex,
				      const uint32_t *vertex_of_port, uint32_t v, idx_t *adj,
				      uint32_t *mark, uint32_t stamp)
{
	uint32_t port = f->endports[v], node = f->ports[port].node, n = 0, k;
	const struct fab_node *nd = &f->nodes[node];

	if (!fabric_is_switch(f, node)) {
		uint32_t s = fabric_endport_switch(f, port);

		if (s != FAB_NONE && sw_vertex[s] != FAB_NONE)
			adj[n++] = (idx_t)sw_vertex[s];
		return n;
	}
	for (k = 1; k <= nd->nports; k++) {
		uint32_t p = nd->first_port + k, r, w;

		if (!fabric_channel_up(f, p))
			continue;
		r = f->ports[p].remote;
		w = fabric_is_switch(f, f->ports[r].node) ? sw_vertex[f->nodes[f->ports[r].node].sw]
							  : vertex_of_port[r];
		if (w == FAB_NONE || w == v || mark[w] == stamp)
			continue;
		mark[w] = stamp;
		adj[n++] = (idx_t)w;
	}
	return n;
}

static int partition_metis(const struct fabric *f, unsigned k, uint8_t *part)
{
	uint32_t n = f->nendports, i, total = 0;
	uint32_t *sw_vertex = malloc(sizeof(uint32_t) * (f->nswitches ? f->nswitches : 1));
	uint32_t *vertex_of_port = malloc(sizeof(uint32_t) * (f->nports ? f->nports : 1));
	uint32_t *mark = calloc(n ? n : 1, sizeof(uint32_t));
	idx_t *xadj = malloc(sizeof(idx_t) * (n + 1));
	idx_t *adj = NULL, *where = malloc(sizeof(idx_t) * (n ? n : 1));
	idx_t nv = (idx_t)n, ncon = 1, nparts = (idx_t)k, objval, options[METIS_NOPTIONS];
	size_t cap = 0;
	int rc = -1;

	if (!sw_vertex || !vertex_of_port || !mark || !xadj || !where)
		goto out;
	memset(sw_vertex, 0xff, sizeof(uint32_t) * f->nswitches);
	memset(vertex_of_port, 0xff, sizeof(uint32_t) * f->nports);
	for (i = 0; i < n; i++) {
		uint32_t node = f->ports[f->endports[i]].node;

		vertex_of_port[f->endports[i]] = i;
		if (fabric_is_switch(f, node))
			sw_vertex[f->nodes[node].sw] = i;
	}
	for (i = 0; i < n; i++)
		cap += (size_t)f->nodes[f->ports[f->endports[i]].node].nports + 1;
	adj = malloc(sizeof(idx_t) * (cap ? cap : 1));
	if (!adj)
		goto out;
	for (i = 0; i < n; i++) {
		xadj[i] = (idx_t)total;
		total += port_graph_neighbours(f, sw_vertex, vertex_of_port, i, adj + total, mark,
					       i + 1);
	}
	xadj[n] = (idx_t)total;
	METIS_SetDefaultOptions(options);
	options[METIS_OPTION_SEED] = 1; /* same fabric, same layers */
	if (METIS_PartGraphKway(&nv, &ncon, xadj, adj, NULL, NULL, NULL, &nparts, NULL, NULL,
				options, &objval, where) != METIS_OK)
		goto out;
	for (i = 0; i < n; i++) {
		if (where[i] < 0 || where[i] >= (idx_t)k)
			goto out;
		part[i] = (uint8_t)where[i];
	}
	rc = 0;
out:
	free(sw_vertex);
	free(vertex_of_port);
	free(mark);
	free(xadj);
	free(adj);
	free(where);
	return rc;
}
#endif

/* Blocks of a torus or mesh (torus.c); 1, 0 when the fabric is neither, -1. */
static int partition_torus(const struct fabric *f, unsigned k, uint8_t *part,
			   struct nue_torus *torus)
{
	uint8_t *sw_layer = malloc(f->nswitches ? f->nswitches : 1);
	int rc = -1;

	if (!sw_layer)
		return -1;
	rc = nue_torus_blocks(f, k, sw_layer, torus);
	if (rc == 1 && nue_partition_by_switch(f, sw_layer, part))
		rc = -1;
	free(sw_layer);
	return rc;
}

const char *nue_partition(const struct fabric *f, unsigned k, enum nue_partitioner how,
			  uint8_t *part, struct nue_torus *torus)
{
	memset(torus, 0, sizeof(*torus));
	if (k <= 1 || f->nendports <= k) {
		uint32_t i;

		for (i = 0; i < f->nendports; i++)
			part[i] = (uint8_t)(k <= 1 ? 0 : i % k);
		return k <= 1 ? "single layer" : "round robin (fewer destinations than layers)";
	}
	if (how == NUE_PARTITION_AUTO) {
		int rc = partition_torus(f, k, part, torus);

		if (rc)
			return rc < 0 ? NULL : "torus blocks";
	}
#ifdef HAVE_METIS
	if (!partition_metis(f, k, part))
		return "metis";
#endif
	return partition_bfs_blocks(f, k, part) ? NULL : "breadth-first blocks";
}

int nue_partition_by_switch(const struct fabric *f, const uint8_t *sw_layer, uint8_t *part)
{
	uint32_t n = f->nswitches, qh = 0, qt = 0, s, i;
	uint8_t *layer = malloc(n ? n : 1);
	uint32_t *queue = malloc(sizeof(uint32_t) * (n ? n : 1));
	int rc = -1;

	if (!layer || !queue)
		goto out;
	memcpy(layer, sw_layer, n);
	for (s = 0; s < n; s++)
		if (layer[s] != SWLAYER_NONE)
			queue[qt++] = s;
	while (qh < qt) {
		uint32_t u = queue[qh++];

		for (i = f->sw_adj_off[u]; i < f->sw_adj_off[u + 1]; i++) {
			uint32_t v = f->nodes[f->ports[f->ports[f->sw_adj_port[i]].remote].node].sw;

			if (layer[v] == SWLAYER_NONE) {
				layer[v] = layer[u];
				queue[qt++] = v;
			}
		}
	}
	for (i = 0; i < f->nendports; i++) {
		s = fabric_endport_switch(f, f->endports[i]);
		part[i] = s == FAB_NONE || layer[s] == SWLAYER_NONE ? 0 : layer[s];
	}
	rc = 0;
out:
	free(layer);
	free(queue);
	return rc;
}

/* Scratch for the convex subgraph and the betweenness computation. */
struct central {
	const struct fabric *f;
	uint32_t nsw;
	uint32_t *dist, *queue, *order;
	uint32_t *adj; /* the switch at the far end of each of f->sw_adj_port */
	/*
	 * The current BFS's predecessors of each switch, one per link from a switch one hop
	 * nearer: npred[w] of them from pred[f->sw_adj_off[w]] on (a switch has as many links in
	 * as out).
	 */
	uint32_t *pred, *npred;
	uint8_t *in_hull, *processed;
	double *sigma, *delta, *score;
	uint32_t *src_weight;
};

/*
 * The far switch of every switch-to-switch port, in one array: the BFS below run once per switch
 * of the hull, and following port, remote port and node for each link made the choice of a
 * layer's root a sixth of sar-nue's route time on a random graph of 1,000 switches with 8 VLs.
 */
static int index_neighbours(struct central *c)
{
	const struct fabric *f = c->f;
	uint32_t i, links = f->sw_adj_off[c->nsw];

	c->adj = malloc(sizeof(uint32_t) * (links ? links : 1));
	c->pred = malloc(sizeof(uint32_t) * (links ? links : 1));
	c->npred = malloc(sizeof(uint32_t) * (c->nsw ? c->nsw : 1));
	if (!c->adj || !c->pred || !c->npred)
		return -1;
	for (i = 0; i < links; i++)
		c->adj[i] = f->nodes[f->ports[f->ports[f->sw_adj_port[i]].remote].node].sw;
	return 0;
}

/* BFS hop distances from s over the switches with in_hull set (all when hull is NULL). */
static uint32_t bfs(struct central *c, uint32_t s, const uint8_t *hull)
{
	const struct fabric *f = c->f;
	uint32_t qh = 0, qt = 0, i;

	for (i = 0; i < c->nsw; i++)
		c->dist[i] = UINT32_MAX;
	c->dist[s] = 0;
	c->queue[qt++] = s;
	while (qh < qt) {
		uint32_t u = c->queue[qh++];

		for (i = f->sw_adj_off[u]; i < f->sw_adj_off[u + 1]; i++) {
			uint32_t v = c->adj[i];

			if ((hull && !hull[v]) || c->dist[v] != UINT32_MAX)
				continue;
			c->dist[v] = c->dist[u] + 1;
			c->queue[qt++] = v;
		}
	}
	return qt;
}

/*
 * Thesis algorithm 6.1: for each destination switch x, a BFS from x, then a multi-source
 * backward sweep from all destination switches along decreasing distance adds every switch on
 * a shortest path between x and any of them.
 */
static void convex_subgraph(struct central *c, const uint32_t *dest_count)
{
	const struct fabric *f = c->f;
	uint32_t x, y, i;

	memset(c->in_hull, 0, c->nsw);
	for (x = 0; x < c->nsw; x++) {
		uint32_t qh = 0, qt = 0;

		if (!dest_count[x])
			continue;
		bfs(c, x, NULL);
		memset(c->processed, 0, c->nsw);
		for (y = 0; y < c->nsw; y++) {
			if (!dest_count[y])
				continue;
			c->in_hull[y] = 1;
			c->processed[y] = 1;
			c->order[qt++] = y;
		}
		while (qh < qt) {
			uint32_t u = c->order[qh++];

			for (i = f->sw_adj_off[u]; i < f->sw_adj_off[u + 1]; i++) {
				uint32_t v = c->adj[i];

				if (c->processed[v] || c->dist[v] + 1 != c->dist[u])
					continue;
				c->processed[v] = 1;
				c->in_hull[v] = 1;
				c->order[qt++] = v;
			}
		}
	}
}

/*
 * Breadth-first search from s inside the hull that counts shortest paths (sigma) as it goes: a
 * switch is dequeued after every switch one hop nearer, so its count is complete when it is
 * passed on, and the counts are summed in the order a second pass over the BFS order would sum
 * them.  One scan of the links instead of two.  Returns how many switches were reached, in
 * c->queue.
 */
static uint32_t count_paths(struct central *c, uint32_t s)
{
	const struct fabric *f = c->f;
	uint32_t qh = 0, qt = 0, i;

	for (i = 0; i < c->nsw; i++) {
		c->dist[i] = UINT32_MAX;
		c->sigma[i] = 0;
		c->delta[i] = 0;
		c->npred[i] = 0;
	}
	c->dist[s] = 0;
	c->sigma[s] = 1;
	c->queue[qt++] = s;
	while (qh < qt) {
		uint32_t u = c->queue[qh++];

		for (i = f->sw_adj_off[u]; i < f->sw_adj_off[u + 1]; i++) {
			uint32_t v = c->adj[i];

			if (!c->in_hull[v])
				continue;
			if (c->dist[v] == UINT32_MAX) {
				c->dist[v] = c->dist[u] + 1;
				c->queue[qt++] = v;
			}
			if (c->dist[v] == c->dist[u] + 1) {
				c->sigma[v] += c->sigma[u];
				sn_assert(c->npred[v] < f->sw_adj_off[v + 1] - f->sw_adj_off[v]);
				c->pred[f->sw_adj_off[v] + c->npred[v]++] = u;
			}
		}
	}
	return qt;
}

/*
 * Brandes' accumulation from one source, inside the hull, with weighted targets.  Over the
 * predecessors count_paths noted, not every link: each switch's sum takes the same terms in the
 * same order (switches in reverse BFS order), so the scores are the same to the last bit.
 */
static void brandes_from(struct central *c, uint32_t s, const uint32_t *dest_count)
{
	const struct fabric *f = c->f;
	uint32_t reached = count_paths(c, s), i, j;

	for (j = reached; j-- > 0;) {
		uint32_t w = c->queue[j];
		const uint32_t *pred = c->pred + f->sw_adj_off[w];

		for (i = 0; i < c->npred[w]; i++) {
			uint32_t v = pred[i];

			sn_assert(c->in_hull[v] && c->dist[v] + 1 == c->dist[w]);
			c->delta[v] +=
				c->sigma[v] / c->sigma[w] * ((double)dest_count[w] + c->delta[w]);
		}
		if (w != s)
			c->score[w] += (double)c->src_weight[s] * c->delta[w];
	}
}

static void count_sources(struct central *c)
{
	const struct fabric *f = c->f;
	uint32_t i;

	for (i = 0; i < c->nsw; i++)
		c->src_weight[i] = 1;
	for (i = 0; i < f->nendports; i++) {
		uint32_t s = fabric_endport_switch(f, f->endports[i]);

		if (s != FAB_NONE && !fabric_is_switch(f, f->ports[f->endports[i]].node))
			c->src_weight[s] += 1u << f->ports[f->endports[i]].lmc;
	}
}

uint32_t nue_central_switch(const struct fabric *f, const uint32_t *dest_count,
			    const uint32_t *candidate)
{
	struct central c = { .f = f, .nsw = f->nswitches };
	uint32_t s, best = FAB_NONE, ndest = 0;
	size_t n = c.nsw ? c.nsw : 1;

	c.dist = malloc(n * sizeof(uint32_t));
	c.queue = malloc(n * sizeof(uint32_t));
	c.order = malloc(n * sizeof(uint32_t));
	c.src_weight = malloc(n * sizeof(uint32_t));
	c.in_hull = malloc(n);
	c.processed = malloc(n);
	c.sigma = malloc(n * sizeof(double));
	c.delta = malloc(n * sizeof(double));
	c.score = calloc(n, sizeof(double));
	if (!c.dist || !c.queue || !c.order || !c.src_weight || !c.in_hull || !c.processed ||
	    !c.sigma || !c.delta || !c.score || index_neighbours(&c))
		goto out;
	for (s = 0; s < c.nsw; s++)
		ndest += dest_count[s] != 0;
	/* With every switch a destination switch the hull is the whole fabric (thesis: H_1 = I). */
	if (ndest == c.nsw)
		memset(c.in_hull, 1, c.nsw);
	else
		convex_subgraph(&c, dest_count);
	count_sources(&c);
	for (s = 0; s < c.nsw; s++)
		if (c.in_hull[s])
			brandes_from(&c, s, dest_count);
	for (s = 0; s < c.nsw; s++)
		if (c.in_hull[s] && (!candidate || candidate[s]) &&
		    (best == FAB_NONE || c.score[s] > c.score[best]))
			best = s;
out:
	free(c.adj);
	free(c.pred);
	free(c.npred);
	free(c.dist);
	free(c.queue);
	free(c.order);
	free(c.src_weight);
	free(c.in_hull);
	free(c.processed);
	free(c.sigma);
	free(c.delta);
	free(c.score);
	return best;
}
