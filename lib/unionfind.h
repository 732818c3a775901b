/*
 * unionfind.h - disjoint sets over the indices 0..n-1 of a caller's array (parent[i] = i to
 * start), with path halving.  A set's root is always its smallest member, so roots double as
 * canonical names (the fat-tree blocks and the torus's link classes rely on that).
 */
#ifndef SARNUE_UNIONFIND_H
#define SARNUE_UNIONFIND_H

#include <stdint.h>

static inline uint32_t uf_find(uint32_t *parent, uint32_t x)
{
	while (parent[x] != x) {
		parent[x] = parent[parent[x]];
		x = parent[x];
	}
	return x;
}

/* Joins the sets of a and b; the smaller root becomes the root of both. */
static inline void uf_union(uint32_t *parent, uint32_t a, uint32_t b)
{
	a = uf_find(parent, a);
	b = uf_find(parent, b);
	if (a < b)
		parent[b] = a;
	else if (b < a)
		parent[a] = b;
}

#endif
