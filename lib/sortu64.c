/*
 * sortu64.c - introsort of 64-bit keys (see sortu64.h): quicksort with a median of three,
 * insertion sort for short runs, heapsort when the partitions stay unbalanced too long, so the
 * worst case stays O(n log n) whatever the keys.
 */
#include "lib/sortu64.h"
#include "lib/assert.h"

#define SHORT_RUN 16

static void insertion_sort(uint64_t *a, size_t n)
{
	size_t i, j;

	for (i = 1; i < n; i++) {
		uint64_t v = a[i];

		for (j = i; j > 0 && a[j - 1] > v; j--)
			a[j] = a[j - 1];
		a[j] = v;
	}
}

static void swap_keys(uint64_t *a, uint64_t *b)
{
	uint64_t t = *a;

	*a = *b;
	*b = t;
}

static void sift_down(uint64_t *a, size_t i, size_t n)
{
	uint64_t v = a[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && a[c + 1] > a[c])
			c++;
		sn_assert(c < n);
		if (a[c] <= v)
			break;
		a[i] = a[c];
		i = c;
	}
	a[i] = v;
}

static void heap_sort(uint64_t *a, size_t n)
{
	size_t i;

	for (i = n / 2; i-- > 0;)
		sift_down(a, i, n);
	for (i = n; i-- > 1;) {
		swap_keys(&a[0], &a[i]);
		sift_down(a, 0, i);
	}
}

/* Hoare partition around the median of the first, middle and last key; returns the split. */
static size_t partition(uint64_t *a, size_t n)
{
	size_t i = 0, j = n - 1, mid = n / 2;
	uint64_t pivot;

	if (a[mid] < a[0])
		swap_keys(&a[mid], &a[0]);
	if (a[n - 1] < a[0])
		swap_keys(&a[n - 1], &a[0]);
	if (a[n - 1] < a[mid])
		swap_keys(&a[n - 1], &a[mid]);
	/* The median of three stops both scans inside the run. */
	sn_assert(a[0] <= a[mid] && a[mid] <= a[n - 1]);
	pivot = a[mid];
	for (;;) {
		while (a[i] < pivot)
			i++;
		while (a[j] > pivot)
			j--;
		sn_assert(i < n && j < n);
		if (i >= j)
			return j + 1;
		swap_keys(&a[i++], &a[j--]);
	}
}

static void intro_sort(uint64_t *a, size_t n, unsigned depth)
{
	while (n > SHORT_RUN) {
		size_t split;

		if (!depth--) {
			heap_sort(a, n);
			return;
		}
		split = partition(a, n);
		/* Both sides are shorter than the run, or the loop would not end. */
		sn_assert(split > 0 && split < n);
		/* Recurse into the smaller side: the stack stays O(log n). */
		if (split < n - split) {
			intro_sort(a, split, depth);
			a += split;
			n -= split;
		} else {
			intro_sort(a + split, n - split, depth);
			n = split;
		}
	}
	insertion_sort(a, n);
}

void sort_u64(uint64_t *a, size_t n)
{
	unsigned depth = 0;
	size_t m;

	for (m = n; m > 1; m >>= 1)
		depth += 2;
	intro_sort(a, n, depth);
	if (sn_expensive_checks())
		for (m = 1; m < n; m++)
			sn_assert(a[m - 1] <= a[m]);
}
