/*
 * assert.c - what a failed sn_assert does (see assert.h): one line on stderr naming the
 * condition and where it was checked, then abort() so a core dump or the sanitizer's report
 * shows the stack.
 */
#include "lib/assert.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sn_assert_fail(const char *cond, const char *file, int line, const char *func)
{
	fprintf(stderr, "sarnue: %s:%d: %s: assertion failed: %s\n", file, line, func, cond);
	fflush(stderr);
	abort();
}

#ifndef SARNUE_NO_ASSERT
int sn_expensive_checks(void)
{
	const char *v = getenv("SARNUE_DEBUG_CHECKS");

	return v && strcmp(v, "1") == 0;
}
#endif
