/*
 * sarnue.c - the `sarnue` command: dispatches to gen (synthetic fabrics), route (offline
 * routing with the plugin's engines), check (verification of any routing tables), topo-order
 * (the hosts of a fat tree in the rank order D-mod-k routing suits), trace (the path of one
 * route) and ctl (the plugin's control socket).
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "lib/usage.h"

static const char usage[] =
	"NAME\n"
	"    sarnue - InfiniBand routing for OpenSM, online (plugin libsarnue.so) and offline\n"
	"\n"
	"SYNOPSIS\n"
	"    sarnue COMMAND [OPTIONS]\n"
	"    sarnue help COMMAND\n"
	"    sarnue -h | --help | -V | --version\n"
	"\n"
	"DESCRIPTION\n"
	"    sarnue routes InfiniBand fabrics inside OpenSM (plugin libsarnue.so) and offline.\n"
	"\n"
	"COMMANDS\n"
	"  gen     write a synthetic fabric as an ibsim net file (fat trees, tori, random, dragonfly)\n"
	"  route   route a net file offline with a sarnue engine and write OpenSM-style dump files\n"
	"  check   verify routing tables: reachability, forwarding loops, credit loops, hops\n"
	"  topo-order  hosts of a fat tree or of a job in topology order, the rank order\n"
	"          D-mod-k routing suits: host lines, Slurm lists, MPI hostfile, topology.conf\n"
	"  trace   the path of one route, hop by hop, with its SL and each hop's VL\n"
	"  ctl     talk to the plugin in a running OpenSM: status, reroute, jobs FILE\n"
	"  version print the version\n"
	"  help    'sarnue help COMMAND' is 'sarnue COMMAND --help'\n"
	"\n"
	"OPTIONS\n"
	"    -h, --help       this text\n"
	"    -V, --version    print the version\n"
	"\n"
	"EXIT STATUS\n"
	"    Each command documents its own; 2 is a usage error everywhere.\n";

static const struct {
	const char *name;
	int (*main)(int argc, char **argv);
} commands[] = {
	{ "check", check_main },	   { "route", route_main }, { "ctl", ctl_main },
	{ "topo-order", topo_order_main }, { "gen", gen_main },	    { "trace", trace_main },
};

int main(int argc, char **argv)
{
	/* "sarnue help CMD" is "sarnue CMD --help". */
	char *help_args[] = { argv[0], argc == 3 ? argv[2] : NULL, "--help", NULL };
	size_t i;

	if (argc == 3 && !strcmp(argv[1], "help")) {
		argv = help_args;
		argc = 3;
	}
	if (argc < 2)
		return usage_error("sarnue", "missing COMMAND");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		if (argc > 2)
			return usage_error("sarnue", "help takes one COMMAND");
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))
		return cli_version();
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].main(argc - 1, argv + 1);
	return usage_error("sarnue", "unknown command '%s'", argv[1]);
}
