/*
 * cli.c - what the subcommands of `sarnue` share (see cli.h): one form for every error line,
 * and how progress of long runs shows.
 * It lives apart from main() in sarnue.c so that the subcommands depend on it and main() on
 * them, not each on the other.
 */
#include "cli/cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/usage.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

void cli_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "sarnue %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
	char prog[64];
	va_list ap;

	snprintf(prog, sizeof(prog), "sarnue %s", cmd);
	va_start(ap, fmt);
	usage_verror(prog, fmt, ap);
	va_end(ap);
	return EXIT_USAGE;
}

int cli_getopt_error(const char *cmd, int c, char **argv)
{
	char prog[64];

	snprintf(prog, sizeof(prog), "sarnue %s", cmd);
	usage_getopt_error(prog, c, argv);
	return EXIT_USAGE;
}

int cli_version(void)
{
	printf("sarnue %s\n", PACKAGE_VERSION);
	return 0;
}

void cli_progress_init(struct progress *p, const char *prefix, int quiet, int verbose)
{
	struct progress_config c = {
		.prefix = prefix,
		.style = PROGRESS_OFF,
		.out = stderr,
		.after = 2.0,
		.every = 0.5,
	};
	const char *after = getenv("SARNUE_PROGRESS_AFTER");
	char *end;
	double v;

	if (!quiet && isatty(STDERR_FILENO))
		c.style = PROGRESS_TERMINAL;
	else if (!quiet && verbose)
		c.style = PROGRESS_LINES;
	if (after && *after) {
		v = strtod(after, &end);
		if (!*end && v >= 0)
			c.after = v;
		/* A test's "long" run lasts a fraction of a second: every update shows. */
		if (c.every > c.after)
			c.every = c.after;
	}
	progress_init(p, &c);
}
