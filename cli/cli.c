/*
 * cli.c - what the subcommands of `sarnue` share (see cli.h): one form for every error line.
 * It lives apart from main() in sarnue.c so that the subcommands depend on it and main() on
 * them, not each on the other.
 */
#include "cli/cli.h"

#include <stdarg.h>
#include <stdio.h>

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
