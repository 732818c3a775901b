/*
 * sortu64.h - ascending sort of 64-bit keys, the one used wherever sarnue orders packed keys
 * (a value in the high bits, an index in the low bits).  Inline comparisons instead of qsort's
 * callback: the dependency graph sorts the small sets it moves many thousand times per routing.
 */
#ifndef SARNUE_SORTU64_H
#define SARNUE_SORTU64_H

#include <stddef.h>
#include <stdint.h>

void sort_u64(uint64_t *a, size_t n);

#endif
