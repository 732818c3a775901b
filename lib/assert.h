/*
 * assert.h - invariants stated in code.
 *
 * sn_assert(cond) checks a condition the code relies on (an index inside its array, a heap in
 * heap order, a LID inside the LFT) and stops the program with the file, line and condition when
 * it does not hold, so a broken invariant is found where it breaks instead of as a wrong table
 * later.  configure --enable-asserts (what the test command uses) compiles it into the plugin,
 * the tools and the daemons alike; the unit tests always have it, through a copy of the core
 * built with it.  A release build (configure without the option) defines SARNUE_NO_ASSERT: the
 * checks cost nothing there and OpenSM never aborts on one, and the verifier still refuses any
 * table that is wrong.
 *
 * sn_expensive_checks() says whether checks that cost as much as the work they check (the CDG's
 * acyclicity after every destination) should run: only when SARNUE_DEBUG_CHECKS=1 is in the
 * environment and assertions are compiled in.
 */
#ifndef SARNUE_ASSERT_H
#define SARNUE_ASSERT_H

#ifdef SARNUE_NO_ASSERT
#define sn_assert(cond) ((void)sizeof(!(cond)))
static inline int sn_expensive_checks(void)
{
	return 0;
}
#else
#define sn_assert(cond)                          \
	(__builtin_expect(!!(cond), 1) ? (void)0 \
				       : sn_assert_fail(#cond, __FILE__, __LINE__, __func__))
int sn_expensive_checks(void);
#endif

void sn_assert_fail(const char *cond, const char *file, int line, const char *func)
	__attribute__((noreturn, cold));

#endif
