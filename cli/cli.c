/*
 * cli.c - what the subcommands of `sarnue` share (see cli.h): one form for every error line.
 * It lives apart from main() in sarnue.c so that the subcommands depend on it and main() on
 * them, not each on the other.
 */
#include "cli/cli.h"

#include <stdarg.h>
#include <stdio.h>

void cli_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "sarnue %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
