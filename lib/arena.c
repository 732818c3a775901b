/*
 * arena.c - growing arrays and string arenas (see arena.h).
 */
#include "lib/arena.h"
#include "lib/assert.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Doubles cap (at least 1) until it reaches need, without passing max; 0 when need > max. */
static size_t doubled_capacity(size_t cap, size_t need, size_t max)
{
	if (need > max)
		return 0;
	if (!cap)
		cap = 1;
	while (cap < need)
		cap = cap > max / 2 ? max : cap * 2;
	sn_assert(cap >= need && cap <= max);
	return cap;
}

int fab_reserve(char **buf, size_t *cap, size_t need, size_t first)
{
	size_t ncap;
	char *p;

	sn_assert(first > 0);
	if (need <= *cap)
		return 0;
	/* No allocator hands out more than half the address space. */
	ncap = doubled_capacity(*cap ? *cap : first, need, SIZE_MAX / 2);
	p = ncap ? realloc(*buf, ncap) : NULL;
	if (!p)
		return -1;
	*buf = p;
	*cap = ncap;
	sn_assert(*cap >= need);
	return 0;
}

int fab_grow(void **arr, uint32_t *cap, uint32_t need, size_t elem, uint32_t first)
{
	size_t ncap;
	void *p;

	sn_assert(elem > 0 && first > 0);
	if (need <= *cap)
		return 0;
	ncap = doubled_capacity(*cap ? *cap : first, need, UINT32_MAX);
	p = ncap && ncap <= SIZE_MAX / elem ? realloc(*arr, ncap * elem) : NULL;
	if (!p)
		return -1;
	*arr = p;
	*cap = (uint32_t)ncap;
	sn_assert(*cap >= need);
	return 0;
}

int fab_strings_put(char **buf, size_t *len, size_t *cap, const char *s, size_t n, uint32_t *off)
{
	size_t need = *len + n + 1;

	sn_assert(*len <= *cap);
	if (n >= UINT32_MAX || need > UINT32_MAX || fab_reserve(buf, cap, need, 4096))
		return -1;
	memcpy(*buf + *len, s, n);
	(*buf)[*len + n] = '\0';
	*off = (uint32_t)*len;
	*len = need;
	sn_assert(*len <= *cap);
	return 0;
}
