/*
 * clock.h - the monotonic clock every time sarnue measures reads (route and verify seconds,
 * phases, progress lines): seconds as a double, unaffected by changes of the wall clock.
 */
#ifndef SARNUE_CLOCK_H
#define SARNUE_CLOCK_H

#include <time.h>

static inline double sn_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif
