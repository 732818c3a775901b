/*
 * heap.c - the indexed binary min-heap of heap.h.
 */
#include "heap.h"

#include <stdlib.h>
#include <string.h>

int heap_init(struct heap *h, uint32_t n)
{
	memset(h, 0, sizeof(*h));
	h->item = malloc(sizeof(*h->item) * (n + 1));
	h->pos = malloc(sizeof(*h->pos) * (n + 1));
	h->key = malloc(sizeof(*h->key) * (n + 1));
	if (!h->item || !h->pos || !h->key) {
		heap_free(h);
		return -1;
	}
	memset(h->pos, 0xff, sizeof(*h->pos) * (n + 1));
	h->n = n;
	return 0;
}

void heap_free(struct heap *h)
{
	free(h->item);
	free(h->pos);
	free(h->key);
	memset(h, 0, sizeof(*h));
}

static inline int less(const struct heap *h, uint32_t a, uint32_t b)
{
	return h->key[a] < h->key[b] || (h->key[a] == h->key[b] && a < b);
}

static void place(struct heap *h, uint32_t i, uint32_t v)
{
	h->item[i] = v;
	h->pos[v] = i;
}

static void sift_up(struct heap *h, uint32_t i)
{
	uint32_t v = h->item[i];

	while (i > 0) {
		uint32_t parent = (i - 1) / 2;

		if (!less(h, v, h->item[parent]))
			break;
		place(h, i, h->item[parent]);
		i = parent;
	}
	place(h, i, v);
}

static void sift_down(struct heap *h, uint32_t i)
{
	uint32_t v = h->item[i];

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= h->size)
			break;
		if (c + 1 < h->size && less(h, h->item[c + 1], h->item[c]))
			c++;
		if (!less(h, h->item[c], v))
			break;
		place(h, i, h->item[c]);
		i = c;
	}
	place(h, i, v);
}

void heap_push_or_decrease(struct heap *h, uint32_t v, uint64_t key)
{
	if (h->pos[v] == HEAP_ABSENT) {
		h->key[v] = key;
		place(h, h->size++, v);
		sift_up(h, h->size - 1);
	} else if (key < h->key[v]) {
		h->key[v] = key;
		sift_up(h, h->pos[v]);
	}
}

uint32_t heap_pop(struct heap *h)
{
	uint32_t top = h->item[0];

	h->pos[top] = HEAP_ABSENT;
	if (--h->size) {
		place(h, 0, h->item[h->size]);
		sift_down(h, 0);
	}
	return top;
}
