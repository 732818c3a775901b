/*
 * minheap.c - binary min-heap with decrease-key (see minheap.h).  Ties are broken by the item
 * number so every Dijkstra built on it is deterministic.
 */
#include "minheap.h"

#include <stdlib.h>
#include <string.h>

int minheap_init(struct minheap *h, uint32_t capacity)
{
	memset(h, 0, sizeof(*h));
	h->capacity = capacity;
	h->item = malloc(sizeof(*h->item) * (capacity ? capacity : 1));
	h->key = malloc(sizeof(*h->key) * (capacity ? capacity : 1));
	h->pos = malloc(sizeof(*h->pos) * (capacity ? capacity : 1));
	if (!h->item || !h->key || !h->pos) {
		minheap_free(h);
		return -1;
	}
	memset(h->pos, 0xff, sizeof(*h->pos) * capacity);
	return 0;
}

void minheap_free(struct minheap *h)
{
	free(h->item);
	free(h->key);
	free(h->pos);
	memset(h, 0, sizeof(*h));
}

void minheap_clear(struct minheap *h)
{
	uint32_t i;

	for (i = 0; i < h->size; i++)
		h->pos[h->item[i]] = MINHEAP_ABSENT;
	h->size = 0;
}

static int before(const struct minheap *h, uint32_t a, uint32_t b)
{
	return h->key[a] < h->key[b] || (h->key[a] == h->key[b] && a < b);
}

static void place(struct minheap *h, uint32_t i, uint32_t item)
{
	h->item[i] = item;
	h->pos[item] = i;
}

static void sift_up(struct minheap *h, uint32_t i)
{
	uint32_t item = h->item[i];

	while (i > 0) {
		uint32_t parent = (i - 1) / 2;

		if (!before(h, item, h->item[parent]))
			break;
		place(h, i, h->item[parent]);
		i = parent;
	}
	place(h, i, item);
}

static void sift_down(struct minheap *h, uint32_t i)
{
	uint32_t item = h->item[i];

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= h->size)
			break;
		if (c + 1 < h->size && before(h, h->item[c + 1], h->item[c]))
			c++;
		if (!before(h, h->item[c], item))
			break;
		place(h, i, h->item[c]);
		i = c;
	}
	place(h, i, item);
}

void minheap_set(struct minheap *h, uint32_t item, uint64_t key)
{
	uint32_t i = h->pos[item];
	uint64_t old = h->key[item];

	h->key[item] = key;
	if (i == MINHEAP_ABSENT) {
		place(h, h->size++, item);
		sift_up(h, h->size - 1);
		return;
	}
	/* Dijkstra only ever lowers a key: one direction to look. */
	if (key < old)
		sift_up(h, i);
	else
		sift_down(h, i);
}

void minheap_remove(struct minheap *h, uint32_t item)
{
	uint32_t i = h->pos[item], last;

	if (i == MINHEAP_ABSENT)
		return;
	h->pos[item] = MINHEAP_ABSENT;
	last = h->item[--h->size];
	if (i == h->size)
		return;
	place(h, i, last);
	sift_up(h, i);
	sift_down(h, h->pos[last]);
}

uint32_t minheap_pop(struct minheap *h)
{
	uint32_t top;

	if (!h->size)
		return MINHEAP_ABSENT;
	top = h->item[0];
	minheap_remove(h, top);
	return top;
}
