/*
 * usage.c - command line errors in one line (usage.h).
 */
#include "lib/usage.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

int usage_verror(const char *prog, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", prog);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, " (try '%s --help')\n", prog);
	return USAGE_EXIT;
}

int usage_error(const char *prog, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	usage_verror(prog, fmt, ap);
	va_end(ap);
	return USAGE_EXIT;
}

int usage_getopt_error(const char *prog, int c, char *const argv[])
{
	/*
	 * getopt_long() has moved optind past a long option, so argv[optind - 1] is it (with any
	 * "=value"); a short option is named by optopt, as a group such as -jV is one word.
	 */
	const char *word = optind > 0 ? argv[optind - 1] : NULL;
	int is_long = word && !strncmp(word, "--", 2) && word[2];
	int len = is_long ? (int)strcspn(word, "=") : 0;

	if (c == ':') {
		if (is_long)
			return usage_error(prog, "option '%.*s' needs an argument", len, word);
		return usage_error(prog, "option '-%c' needs an argument", optopt);
	}
	if (is_long && optopt && word[len] == '=')
		return usage_error(prog, "option '%.*s' takes no argument", len, word);
	if (is_long && !optopt)
		return usage_error(prog, "unknown option '%.*s'", len, word);
	if (optopt > ' ' && optopt < 127)
		return usage_error(prog, "unknown option '-%c'", optopt);
	return usage_error(prog, "bad option '%s'", word ? word : "?");
}
