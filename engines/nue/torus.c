/*
 * torus.c - recognises a torus or mesh in the switch graph and deals its switches into blocks,
 * one per virtual layer, for Nue's destination partition (layers.c).
 *
 * Why: a layer whose destinations lie all round a ring needs, for short routes, the straight-on
 * turns at every switch of that ring in both directions, which close the ring's cycle; Nue must
 * then detour and impasses pile up.  METIS minimises cut links, and on a cube torus a column
 * round a whole ring cuts as many links as a block of half of each ring, so it often returns
 * columns (six of eight parts on the 16x16x16 torus).  Blocks of at most half of each ring
 * leave the turn at their far side unused.
 *
 * How, with no coordinates given: in a Cartesian product of rings the opposite sides of every
 * square without a diagonal lie in the same dimension, so squares join the links of one slice
 * (between positions i and i + 1), grown with a union-find over the links.  Slices that meet at
 * switches without a square between them (the links to i - 1 and i + 1) join into a dimension.
 * Contracting the links of the other dimensions leaves a dimension's ring (or path, for a mesh)
 * of positions, which gives each switch its coordinate.  The fabric counts as a torus or mesh
 * only when every switch has a coordinate tuple of its own; links of no large class (a few,
 * when faults broke all their squares) are tolerated.  When k layers can cut every ring of three
 * or more positions in two, each dimension is cut into arcs of equal end-port weight.
 */
#include <stdlib.h>
#include <string.h>

#include "engines/nue/nue.h"
#include "lib/sortu64.h"
#include "lib/unionfind.h"
#include "fabric/swgraph.h"

/* More distinct neighbours than a 6D torus has: not looked at (fat trees, dragonflies). */
#define TORUS_MAX_DEGREE 12

/*
 * Slices of one dimension meet at every switch of a cross-section; slices of two dimensions of
 * a 2D torus meet in a single square, and one link missing from it leaves two meetings
 * without a square.  Fewer meetings than this never join slices.
 */
#define SLICE_MIN_MEETINGS 3

struct torus {
	const struct fabric *f;
	struct swgraph g;
	uint32_t *link_root;   /* union-find over the channels (CSR edges) */
	uint32_t *sw_root;     /* union-find over the switches, per dimension */
	uint32_t *mark_u;      /* stamps: neighbours of the square's corner u */
	uint32_t *mark_a;      /* stamps: neighbours of its corner a */
	uint32_t *chan_from_a; /* a's channel to each switch marked in mark_a */
	uint32_t *chan_from_u; /* u's channel to each switch marked in mark_u */
	uint32_t *ring_next;   /* per group of a dimension: its neighbouring groups */
	uint32_t *ring_prev;
	uint32_t *pos;	   /* [ndims x nsw] position of each switch in each dimension */
	uint32_t *weight;  /* end ports each switch delivers */
	uint32_t *scratch; /* class sizes (ne), then group positions (nsw) */
	uint32_t dim_class[NUE_TORUS_MAX_DIMS];
	uint32_t len[NUE_TORUS_MAX_DIMS];
	unsigned ndims;
};

/* Marks the neighbours of s in mark with stamp, noting a channel to each; their number. */
static uint32_t mark_neighbours(const struct torus *t, uint32_t s, uint32_t *mark, uint32_t *chan,
				uint32_t stamp)
{
	const struct fabric *f = t->f;
	uint32_t e, n = 0;

	for (e = f->sw_adj_off[s]; e < f->sw_adj_off[s + 1]; e++) {
		uint32_t v = t->g.to[e];

		if (mark[v] == stamp)
			continue;
		mark[v] = stamp;
		chan[v] = e;
		n++;
	}
	return n;
}

/* Two links meeting at a switch, and whether a square without diagonals holds both. */
struct corner {
	uint32_t ea, ec;
	int square;
};

/*
 * Unites ea and ec (links u-a, u-c) with the sides opposite them in every square u-a-x-c
 * without diagonals; whether there was one.
 */
static int unite_squares(struct torus *t, uint32_t u, uint32_t ea, uint32_t ec, uint32_t stamp)
{
	const struct fabric *f = t->f;
	uint32_t c = t->g.to[ec], x;
	int square = 0;

	for (x = f->sw_adj_off[c]; x < f->sw_adj_off[c + 1]; x++) {
		uint32_t v = t->g.to[x];

		if (v == u || t->mark_a[v] != stamp || t->mark_u[v] == UINT32_MAX - u)
			continue;
		uf_union(t->link_root, ea, x);
		uf_union(t->link_root, ec, t->chan_from_a[v]);
		square = 1;
	}
	return square;
}

/*
 * Squares join the links of one slice of a dimension (between positions i and i + 1, or a
 * whole ring's own square when it has four positions); corners ends with the pairs of links
 * that meet at a switch, for join_slices().  One channel per switch pair stands for its
 * parallel links and the way back.  0, 1 when a switch has too many neighbours for a torus,
 * -1 on allocation failure.
 */
static int link_classes(struct torus *t, struct corner **corners, uint32_t *ncorners)
{
	const struct fabric *f = t->f;
	uint32_t nsw = t->g.nsw, u, e, ea, ec, stamp = 0, n = 0;
	struct corner *cs;

	for (e = 0; e < t->g.ne; e++)
		t->link_root[e] = e;
	for (u = 0; u < nsw; u++) {
		uint32_t deg = mark_neighbours(t, u, t->mark_u, t->chan_from_u, u + 1);

		if (deg > TORUS_MAX_DEGREE)
			return 1;
		n += deg * (deg - 1) / 2;
		for (e = f->sw_adj_off[u]; e < f->sw_adj_off[u + 1]; e++) {
			uf_union(t->link_root, e, t->chan_from_u[t->g.to[e]]);
			uf_union(t->link_root, e, t->g.rev[e]);
		}
	}
	cs = malloc(sizeof(*cs) * (n ? n : 1));
	if (!cs)
		return -1;
	n = 0;
	for (u = 0; u < nsw; u++) {
		mark_neighbours(t, u, t->mark_u, t->chan_from_u, UINT32_MAX - u);
		for (ea = f->sw_adj_off[u]; ea < f->sw_adj_off[u + 1]; ea++) {
			uint32_t a = t->g.to[ea];

			if (t->chan_from_u[a] != ea)
				continue; /* a parallel link: a done already */
			mark_neighbours(t, a, t->mark_a, t->chan_from_a, ++stamp);
			for (ec = ea + 1; ec < f->sw_adj_off[u + 1]; ec++) {
				uint32_t c = t->g.to[ec];

				if (t->chan_from_u[c] != ec || c == a)
					continue;
				cs[n].ea = ea;
				cs[n].ec = ec;
				/* a triangle puts both links in one dimension, like no square */
				cs[n].square =
					t->mark_a[c] != stamp && unite_squares(t, u, ea, ec, stamp);
				n++;
			}
		}
	}
	*corners = cs;
	*ncorners = n;
	return 0;
}

/*
 * Slices of one dimension meet at a switch without a square: its links to positions i - 1 and
 * i + 1.  Links of two dimensions meet in a square, unless a missing link broke it.  So two
 * slices become one class when most of the switches where they meet, and at least
 * SLICE_MIN_MEETINGS, hold no square of both.  0, -1 on allocation failure.
 */
static int join_slices(struct torus *t, const struct corner *cs, uint32_t n)
{
	uint64_t *all = malloc(sizeof(uint64_t) * (n ? n : 1));
	uint64_t *apart = malloc(sizeof(uint64_t) * (n ? n : 1));
	uint32_t i, j = 0, nall = 0, napart = 0;
	int rc = -1;

	if (!all || !apart)
		goto out;
	for (i = 0; i < n; i++) {
		uint64_t a = uf_find(t->link_root, cs[i].ea), c = uf_find(t->link_root, cs[i].ec);

		if (a == c)
			continue;
		all[nall] = a < c ? a << 32 | c : c << 32 | a;
		if (!cs[i].square)
			apart[napart++] = all[nall];
		nall++;
	}
	sort_u64(all, nall);
	sort_u64(apart, napart);
	for (i = 0; i < nall;) {
		uint32_t end = i, without = 0;

		while (end < nall && all[end] == all[i])
			end++;
		while (j < napart && apart[j] < all[i])
			j++;
		while (j < napart && apart[j] == all[i]) {
			without++;
			j++;
		}
		if (without >= SLICE_MIN_MEETINGS && 2 * without > end - i)
			uf_union(t->link_root, (uint32_t)(all[i] >> 32), (uint32_t)all[i]);
		i = end;
	}
	rc = 0;
out:
	free(all);
	free(apart);
	return rc;
}

/* The large link classes become dimensions; 0, or 1 when they do not look like a torus's. */
static int pick_dimensions(struct torus *t)
{
	uint32_t ne = t->g.ne, e, minor = 0;
	uint32_t *size = t->scratch;

	/* class sizes, counted at the roots (scratch holds ne entries here) */
	memset(size, 0, sizeof(uint32_t) * ne);
	for (e = 0; e < ne; e++)
		size[uf_find(t->link_root, e)]++;
	t->ndims = 0;
	for (e = 0; e < ne; e++) {
		if (!size[e])
			continue;
		if ((uint64_t)size[e] * 50 < ne) {
			minor += size[e];
			continue;
		}
		if (t->ndims == NUE_TORUS_MAX_DIMS)
			return 1;
		t->dim_class[t->ndims++] = e;
	}
	return !t->ndims || (uint64_t)minor * 50 > ne;
}

/* The dimension channel e runs in, t->ndims for one of a small class. */
static unsigned dimension_of(struct torus *t, uint32_t e)
{
	uint32_t root = uf_find(t->link_root, e);
	unsigned d;

	for (d = 0; d < t->ndims; d++)
		if (t->dim_class[d] == root)
			break;
	return d;
}

/*
 * Positions along dimension d: contract the links of every other dimension, then walk the
 * ring or path the dimension's links leave between the contracted groups.  Links of small
 * classes are neither contracted nor walked: one of them in dimension d, contracted, would
 * merge two positions.  0, or 1 when the groups form neither a ring nor a path.
 */
static int dimension_positions(struct torus *t, unsigned d)
{
	uint32_t nsw = t->g.nsw, ne = t->g.ne, s, e, groups = 0, ends = 0, start = FAB_NONE;
	uint32_t *next = t->ring_next, *prev = t->ring_prev, *posg = t->scratch, cur, before, n;
	uint32_t cls = t->dim_class[d];

	for (s = 0; s < nsw; s++)
		t->sw_root[s] = s;
	for (e = 0; e < ne; e++)
		if (dimension_of(t, e) < t->ndims && uf_find(t->link_root, e) != cls)
			uf_union(t->sw_root, t->g.from[e], t->g.to[e]);
	/* up to two distinct neighbouring groups per group */
	for (s = 0; s < nsw; s++)
		next[s] = prev[s] = FAB_NONE;
	for (e = 0; e < ne; e++) {
		uint32_t a, b;

		if (uf_find(t->link_root, e) != cls)
			continue;
		a = uf_find(t->sw_root, t->g.from[e]);
		b = uf_find(t->sw_root, t->g.to[e]);
		if (a == b || next[a] == b || prev[a] == b)
			continue;
		if (next[a] == FAB_NONE)
			next[a] = b;
		else if (prev[a] == FAB_NONE)
			prev[a] = b;
		else
			return 1;
	}
	for (s = 0; s < nsw; s++) {
		if (uf_find(t->sw_root, s) != s)
			continue;
		groups++;
		if (next[s] == FAB_NONE)
			return 1; /* a group without a link of the dimension */
		if (prev[s] == FAB_NONE) {
			ends++;
			start = s;
		} else if (start == FAB_NONE) {
			start = s;
		}
	}
	if (groups < 2 || (ends != 0 && ends != 2))
		return 1;
	for (s = 0; s < nsw; s++)
		posg[s] = FAB_NONE;
	for (cur = start, before = FAB_NONE, n = 0; cur != FAB_NONE && posg[cur] == FAB_NONE; n++) {
		uint32_t step = next[cur] != before ? next[cur] : prev[cur];

		posg[cur] = n;
		before = cur;
		cur = step;
	}
	if (n != groups)
		return 1;
	t->len[d] = groups;
	for (s = 0; s < nsw; s++)
		t->pos[(size_t)d * nsw + s] = posg[uf_find(t->sw_root, s)];
	return 0;
}

/* Whether every switch has a coordinate tuple of its own. */
static int coordinates_unique(struct torus *t)
{
	uint32_t nsw = t->g.nsw, s;
	uint64_t *key = malloc(sizeof(uint64_t) * (nsw ? nsw : 1)), span = 1;
	unsigned d;
	int unique = 0;

	if (!key)
		return -1;
	for (d = 0; d < t->ndims; d++) {
		span *= t->len[d];
		if (span > (uint64_t)nsw * 2)
			goto out; /* far more positions than switches: not a torus */
	}
	for (s = 0; s < nsw; s++) {
		key[s] = 0;
		for (d = 0; d < t->ndims; d++)
			key[s] = key[s] * t->len[d] + t->pos[(size_t)d * nsw + s];
	}
	sort_u64(key, nsw);
	for (s = 1; s < nsw; s++)
		if (key[s] == key[s - 1])
			goto out;
	unique = 1;
out:
	free(key);
	return unique;
}

unsigned nue_torus_layers_needed(const struct nue_torus *shape)
{
	unsigned d, need = 1;

	for (d = 0; d < shape->dims; d++)
		if (shape->len[d] >= 3)
			need *= 2;
	return need;
}

/* A choice of arcs per dimension, and what choose_cuts() weighs. */
struct cuts_choice {
	unsigned cuts[NUE_TORUS_MAX_DIMS];
	uint64_t largest_block; /* switch positions in the largest block */
	uint32_t longest_arc;	/* positions */
	unsigned layers;	/* blocks: the product of the arcs */
};

static int better_cuts(const struct cuts_choice *a, const struct cuts_choice *b)
{
	if (a->largest_block != b->largest_block)
		return a->largest_block < b->largest_block;
	if (a->longest_arc != b->longest_arc)
		return a->longest_arc < b->longest_arc;
	return a->layers > b->layers;
}

/* Tries every number of arcs for dimensions d and up, within k layers in all. */
static void try_cuts(const struct torus *t, unsigned k, unsigned d, unsigned product,
		     struct cuts_choice *cur, struct cuts_choice *best)
{
	unsigned c;

	if (d == t->ndims) {
		unsigned i;

		cur->largest_block = 1;
		cur->longest_arc = 0;
		cur->layers = product;
		for (i = 0; i < t->ndims; i++) {
			uint32_t arc = (t->len[i] + cur->cuts[i] - 1) / cur->cuts[i];

			cur->largest_block *= arc;
			if (arc > cur->longest_arc)
				cur->longest_arc = arc;
		}
		if (!best->largest_block || better_cuts(cur, best))
			*best = *cur;
		return;
	}
	for (c = t->len[d] >= 3 ? 2 : 1; c <= t->len[d] && product * c <= k; c++) {
		cur->cuts[d] = c;
		try_cuts(t, k, d + 1, product * c, cur, best);
	}
}

/*
 * Arcs per dimension: two or more for each ring of three or more positions (k holds them, see
 * nue_torus_layers_needed), their product within k, such that the largest block is smallest,
 * then its longest arc shortest, then the layers used most; the first such in the order tried
 * on a tie.  On a 12x10 torus
 * with 8 layers that is 4x2 arcs; on a 6x6x4 one (the ring of four is two dimensions of two)
 * 2x2x2x1, where 4x2x1x1 would deal arcs of one and two positions.
 */
static void choose_cuts(const struct torus *t, unsigned k, unsigned *cuts)
{
	struct cuts_choice cur = { { 0 }, 0, 0, 0 }, best = { { 0 }, 0, 0, 0 };

	try_cuts(t, k, 0, 1, &cur, &best);
	memcpy(cuts, best.cuts, sizeof(best.cuts));
}

/* Arc of each position of dimension d, by end-port weight, written to arc[position]; 0, -1. */
static int cut_dimension(struct torus *t, unsigned d, unsigned cuts, uint32_t *arc)
{
	uint32_t nsw = t->g.nsw, s, p;
	uint64_t *w = calloc(t->len[d], sizeof(uint64_t)), total = 0, before = 0;

	if (!w)
		return -1;
	for (s = 0; s < nsw; s++) {
		w[t->pos[(size_t)d * nsw + s]] += t->weight[s];
		total += t->weight[s];
	}
	for (p = 0; p < t->len[d]; p++) {
		/* the arc holding the middle of position p's weight */
		arc[p] = total ? (uint32_t)((2 * before + w[p]) * cuts / (2 * total)) : 0;
		before += w[p];
	}
	free(w);
	return 0;
}

static int alloc_torus(struct torus *t, const struct fabric *f)
{
	uint32_t nsw = f->nswitches, ne, n;

	memset(t, 0, sizeof(*t));
	t->f = f;
	if (swgraph_build(&t->g, f))
		return -1;
	ne = t->g.ne;
	n = (nsw > ne ? nsw : ne) + 1;
	t->link_root = malloc(sizeof(uint32_t) * (ne + 1));
	t->sw_root = malloc(sizeof(uint32_t) * (nsw + 1));
	t->mark_u = calloc(nsw + 1, sizeof(uint32_t));
	t->mark_a = calloc(nsw + 1, sizeof(uint32_t));
	t->chan_from_a = malloc(sizeof(uint32_t) * (nsw + 1));
	t->chan_from_u = malloc(sizeof(uint32_t) * (nsw + 1));
	t->ring_next = malloc(sizeof(uint32_t) * (nsw + 1));
	t->ring_prev = malloc(sizeof(uint32_t) * (nsw + 1));
	t->pos = malloc(sizeof(uint32_t) * NUE_TORUS_MAX_DIMS * (nsw + 1));
	t->weight = calloc(nsw + 1, sizeof(uint32_t));
	t->scratch = malloc(sizeof(uint32_t) * n);
	if (!t->link_root || !t->sw_root || !t->mark_u || !t->mark_a || !t->chan_from_a ||
	    !t->chan_from_u || !t->ring_next || !t->ring_prev || !t->pos || !t->weight ||
	    !t->scratch)
		return -1;
	return 0;
}

static void free_torus(struct torus *t)
{
	swgraph_free(&t->g);
	free(t->link_root);
	free(t->sw_root);
	free(t->mark_u);
	free(t->mark_a);
	free(t->chan_from_a);
	free(t->chan_from_u);
	free(t->ring_next);
	free(t->ring_prev);
	free(t->pos);
	free(t->weight);
	free(t->scratch);
}

/* Layers from the coordinates: arcs of each dimension, numbered in mixed radix. */
static int layers_from_coordinates(struct torus *t, const struct nue_torus *shape,
				   uint8_t *sw_layer)
{
	uint32_t nsw = t->g.nsw, s, i, *arc = NULL;
	unsigned d;

	arc = malloc(sizeof(uint32_t) * NUE_TORUS_MAX_DIMS * (nsw + 1));
	if (!arc)
		return -1;
	for (i = 0; i < t->f->nendports; i++) {
		s = fabric_endport_switch(t->f, t->f->endports[i]);
		if (s != FAB_NONE)
			t->weight[s]++;
	}
	for (d = 0; d < t->ndims; d++)
		if (cut_dimension(t, d, shape->cuts[d], arc + (size_t)d * (nsw + 1))) {
			free(arc);
			return -1;
		}
	for (s = 0; s < nsw; s++) {
		unsigned layer = 0;

		for (d = 0; d < t->ndims; d++)
			layer = layer * shape->cuts[d] +
				arc[(size_t)d * (nsw + 1) + t->pos[(size_t)d * nsw + s]];
		sw_layer[s] = (uint8_t)layer;
	}
	free(arc);
	return 0;
}

int nue_torus_blocks(const struct fabric *f, unsigned k, uint8_t *sw_layer, struct nue_torus *shape)
{
	struct torus t;
	struct corner *corners = NULL;
	uint32_t ncorners = 0;
	unsigned d;
	int rc = -1, unique;

	memset(shape, 0, sizeof(*shape));
	if (alloc_torus(&t, f))
		goto out;
	rc = 0;
	if (f->nswitches < 2)
		goto out;
	rc = link_classes(&t, &corners, &ncorners);
	if (rc) {
		rc = rc < 0 ? -1 : 0;
		goto out;
	}
	rc = join_slices(&t, corners, ncorners);
	if (rc)
		goto out;
	if (pick_dimensions(&t))
		goto out;
	for (d = 0; d < t.ndims; d++)
		if (dimension_positions(&t, d))
			goto out;
	unique = coordinates_unique(&t);
	if (unique <= 0) {
		rc = unique;
		goto out;
	}
	shape->dims = t.ndims;
	for (d = 0; d < t.ndims; d++)
		shape->len[d] = t.len[d];
	if (k < nue_torus_layers_needed(shape))
		goto out;
	choose_cuts(&t, k, shape->cuts);
	rc = layers_from_coordinates(&t, shape, sw_layer) ? -1 : 1;
out:
	free(corners);
	free_torus(&t);
	return rc;
}
