/*
 * heap.h - an indexed binary min-heap over vertex numbers 0..n-1 with 64-bit keys and
 * decrease-key, for the Dijkstra runs of the SSSP-family engines.  All memory is allocated once
 * per routing; a run costs no allocation.  Ties are broken by the lower vertex number, so the
 * pop order, and with it every routing built on it, is deterministic.
 */
#ifndef SARNUE_HEAP_H
#define SARNUE_HEAP_H

#include <stdint.h>

struct heap {
	uint32_t *item; /* heap-ordered vertices */
	uint32_t *pos;	/* [n]: index in item[], HEAP_ABSENT when not queued */
	uint64_t *key;	/* [n] */
	uint32_t size, n;
};

#define HEAP_ABSENT UINT32_MAX

int heap_init(struct heap *h, uint32_t n);
void heap_free(struct heap *h);

static inline int heap_empty(const struct heap *h)
{
	return h->size == 0;
}

/* Queues v with key, or lowers its key when queued with a larger one. */
void heap_push_or_decrease(struct heap *h, uint32_t v, uint64_t key);

/* Removes and returns the vertex with the smallest key; the heap must not be empty. */
uint32_t heap_pop(struct heap *h);

#endif
