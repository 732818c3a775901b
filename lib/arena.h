/*
 * arena.h - growing arrays and string arenas: the one way sarnue's models and parsers grow their
 * memory, with 32-bit counts and offsets checked against overflow.
 */
#ifndef SARNUE_ARENA_H
#define SARNUE_ARENA_H

#include <stddef.h>
#include <stdint.h>

/*
 * Makes the byte buffer *buf (of *cap bytes) hold at least need bytes, doubling from first:
 * the string arenas of the parsers grow this way.  0, or -1 with the buffer unchanged.
 */
int fab_reserve(char **buf, size_t *cap, size_t need, size_t first);

/*
 * The same for an array *arr of *cap elements of elem bytes, counted in 32 bits: it holds at
 * least need elements afterwards, doubling from first.  0, or -1 with the array unchanged
 * (out of memory, or more than UINT32_MAX elements).  Every growing array of sarnue grows here.
 */
int fab_grow(void **arr, uint32_t *cap, uint32_t need, size_t elem, uint32_t first);

/*
 * Appends the n bytes at s and a NUL to the string arena *buf (*len of *cap bytes used) and sets
 * *off to where they start: the arenas of the fabric model, the net-file and job-map parsers and
 * the Slurm job list.  0, or -1 with the arena unchanged (out of memory, or an offset that would
 * not fit 32 bits).
 */
int fab_strings_put(char **buf, size_t *len, size_t *cap, const char *s, size_t n, uint32_t *off);

#endif
