/*
 * usage.h - one form for every command line error of sarnue's programs: a single line that
 * names the problem, then where the help is, so a typo never buries the error under the whole
 * help text.  Shared by `sarnue`, sarnue-filterd and sarnue-agent.
 */
#ifndef SARNUE_USAGE_H
#define SARNUE_USAGE_H

#include <stdarg.h>

/* Exit status of every usage error, as each program's EXIT STATUS documents. */
#define USAGE_EXIT 2

/* Prints "PROG: message (try 'PROG --help')" on stderr; returns USAGE_EXIT. */
int usage_error(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int usage_verror(const char *prog, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/*
 * Reports the error getopt_long() just returned, c being '?' or ':' (an option string starting
 * with ':' tells a missing argument apart), naming the option; returns USAGE_EXIT.  The caller
 * sets opterr = 0 so that getopt says nothing itself.
 */
int usage_getopt_error(const char *prog, int c, char *const argv[]);

#endif
