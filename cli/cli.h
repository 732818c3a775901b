/*
 * cli.h - the subcommands of the `sarnue` command and the helpers they share: reporting errors
 * in one consistent form, and the exit codes.  Topologies load through fabric_load_topology()
 * (fabric/loaders.h), which sarnue-filterd uses as well.
 */
#ifndef SARNUE_CLI_H
#define SARNUE_CLI_H

#include "fabric/fabric.h"
#include "fabric/routing.h"
#include "lib/progress.h"

int check_main(int argc, char **argv);
int route_main(int argc, char **argv);
int gen_main(int argc, char **argv);
int ctl_main(int argc, char **argv);
int topo_order_main(int argc, char **argv);
int trace_main(int argc, char **argv);

/* Prints "sarnue <cmd>: message" on stderr. */
void cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Usage errors, one line each: "sarnue <cmd>: message (try 'sarnue <cmd> --help')".  Both
 * return EXIT_USAGE; cli_getopt_error() names the option getopt_long() refused (c is '?' or
 * ':', the option string starting with ':').
 */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cli_getopt_error(const char *cmd, int c, char **argv);

/* Prints "sarnue VERSION" for -V/--version of every subcommand; returns 0. */
int cli_version(void);

/*
 * The progress reporter of a subcommand, prefix "sarnue <cmd>" (lib/progress.h): one line
 * rewritten in place when stderr is a terminal, plain lines with verbose, nothing with quiet.
 * A phase shows after 2 s, then every 0.5 s; SARNUE_PROGRESS_AFTER=SECONDS replaces both
 * when shorter (tests make short runs "long" with 0).
 */
void cli_progress_init(struct progress *p, const char *prefix, int quiet, int verbose);

/* Exit codes, documented in --help. */
enum {
	EXIT_VERIFIED = 0,
	EXIT_ROUTING_FAULT = 1, /* unreachable pairs, loops or credit loops */
	EXIT_USAGE = 2,
	EXIT_INPUT = 3, /* unreadable or malformed input */
};

#endif
