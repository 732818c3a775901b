/*
 * check.h - a minimal assertion helper for sarnue's C unit tests: each failed CHECK prints the
 * file, line and expression, and the test's exit status tells automake's harness the verdict.
 */
#ifndef SARNUE_TEST_CHECK_H
#define SARNUE_TEST_CHECK_H

#include <stdio.h>

static int check_failures;

#define CHECK(expr)                                                                              \
	do {                                                                                     \
		if (!(expr)) {                                                                   \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #expr); \
			check_failures++;                                                        \
		}                                                                                \
	} while (0)

#define CHECK_RESULT() (check_failures ? 1 : 0)

#endif
