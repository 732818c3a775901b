/*
 * sarnue.c - the `sarnue` command: dispatches to gen (synthetic fabrics), route (offline
 * routing with the plugin's engines), check (verification of any routing tables), topo-order
 * (the hosts of a fat tree in the rank order D-mod-k routing suits) and ctl (the plugin's
 * control socket).
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

static const char usage[] =
	"usage: sarnue COMMAND [OPTIONS]\n"
	"\n"
	"sarnue routes InfiniBand fabrics inside OpenSM (plugin libsarnue.so) and offline.\n"
	"\n"
	"commands:\n"
	"  gen     write a synthetic fabric as an ibsim net file (fat trees, tori, random, dragonfly)\n"
	"  route   route a net file offline with a sarnue engine and write OpenSM-style dump files\n"
	"  check   verify routing tables: reachability, forwarding loops, credit loops, hops\n"
	"  topo-order  hosts of a fat tree or of a job in topology order, the rank order\n"
	"          D-mod-k routing suits: host lines, Slurm lists, MPI hostfile, topology.conf\n"
	"  ctl     talk to the plugin in a running OpenSM: status, reroute, jobs FILE\n"
	"  version print the version\n"
	"\n"
	"'sarnue COMMAND --help' or 'sarnue help COMMAND' describes each command.\n";

int main(int argc, char **argv)
{
	/* "sarnue help CMD" is "sarnue CMD --help". */
	char *help_args[] = { argv[0], argc == 3 ? argv[2] : NULL, "--help", NULL };

	if (argc == 3 && !strcmp(argv[1], "help")) {
		argv = help_args;
		argc = 3;
	}
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
		printf("sarnue %s\n", PACKAGE_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "check"))
		return check_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "route"))
		return route_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "ctl"))
		return ctl_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "topo-order"))
		return topo_order_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "gen"))
		return gen_main(argc - 1, argv + 1);
	fprintf(stderr, "sarnue: unknown command '%s'\n%s", argv[1], usage);
	return EXIT_USAGE;
}
