/*
 * minheap.h - a 4-ary min-heap of small integer items (switch or channel indices) keyed by
 * 64-bit distances, with decrease-key and removal: the priority queue of every Dijkstra in the
 * engines.  Positions are kept per item, so an item is in the heap at most once.
 */
#ifndef SARNUE_MINHEAP_H
#define SARNUE_MINHEAP_H

#include <stdint.h>

#define MINHEAP_ABSENT UINT32_MAX

/* Keys sit beside their items in heap order: a sift compares neighbours in memory. */
struct minheap_entry {
	uint64_t key;
	uint32_t item;
};

struct minheap {
	struct minheap_entry *heap;
	uint32_t *pos; /* [capacity]: index in heap[] or MINHEAP_ABSENT */
	uint32_t size, capacity;
};

int minheap_init(struct minheap *h, uint32_t capacity);
void minheap_free(struct minheap *h);

/* Empties the heap in O(size). */
void minheap_clear(struct minheap *h);

/* Inserts the item or changes its key (up or down). */
void minheap_set(struct minheap *h, uint32_t item, uint64_t key);

/* Removes and returns the item with the smallest key (ties: smaller item); ABSENT when empty. */
uint32_t minheap_pop(struct minheap *h);

void minheap_remove(struct minheap *h, uint32_t item);

static inline int minheap_contains(const struct minheap *h, uint32_t item)
{
	return h->pos[item] != MINHEAP_ABSENT;
}

#endif
