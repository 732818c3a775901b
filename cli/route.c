/*
 * route.c - `sarnue route`: runs a sarnue engine offline on a net file, or on OpenSM's
 * opensm-subnet.lst with its LIDs, with the same options and the same code path (engine_run) as
 * the plugin, and writes the tables in OpenSM's dump formats plus sarnue's SL dumps, so `sarnue
 * check` and ibdmchk read offline and in-OpenSM results alike.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "engines/engines.h"
#include "fabric/loaders.h"
#include "lib/numbers.h"

static const char route_usage[] =
	"usage: sarnue route [OPTIONS] NETFILE\n"
	"       sarnue route [OPTIONS] --subnet opensm-subnet.lst\n"
	"\n"
	"Routes the fabric described by NETFILE (ibsim net file or ibnetdiscover output) with a\n"
	"sarnue engine, exactly as the OpenSM plugin would, verifies the result, and writes\n"
	"opensm-subnet.lst, opensm.fdbs, an empty opensm.mcfdbs, sarnue-path-sl.dump and\n"
	"sarnue-sl2vl.dump into the output directory (ibdmchk -s opensm-subnet.lst -f opensm.fdbs\n"
	"-m opensm.mcfdbs -c sarnue-path-sl.dump -d sarnue-sl2vl.dump reads them); with\n"
	"-O dump=never the two SL dumps are left out (every path then counts as SL 0).\n"
	"NETFILE may be ibnetdiscover output in any form (plain, -g, -s, with the lines\n"
	"the tool printed before it); the LIDs it gives are kept, and ports without one\n"
	"get LIDs as on a fresh fabric: switches first in GUID order, then end ports in\n"
	"file order (doc/input-formats.md).  With --subnet, the fabric and its LIDs are\n"
	"those of an opensm-subnet.lst that OpenSM dumped, so the routing is the one the\n"
	"plugin computes on that subnet.\n"
	"\n"
	"options:\n"
	"  -e, --engine NAME   sar-updn (default), sar-nue, sar-dfsssp or sar-dmodk (fat trees)\n"
	"  -o, --out-dir DIR   where to write the dump files (default: do not write)\n"
	"  --subnet FILE       route the fabric of OpenSM's opensm-subnet.lst, with its LIDs,\n"
	"                      instead of a NETFILE\n"
	"  --lmc N             LMC of end ports, 0..7 (default: the LMC of the LIDs the\n"
	"                      NETFILE gives, else 0); with -O planes=on and LMC >= 1 the\n"
	"                      engine routes two planes (README)\n"
	"  --vls N             operational VLs of every port, 1..15 (default 8)\n"
	"  -O KEY=VALUE        an engine option, as in event_plugin_options (repeatable):\n"
	"%s"
	"  --json              print the summary as one JSON object\n"
	"  -h, --help          this text\n"
	"\n"
	"Same inputs give byte-identical outputs.  Prints route time and peak memory.\n"
	"exit status: 0 routed and verified, 1 routing or verification failed, 2 usage,\n"
	"3 unreadable or malformed input.\n";

struct route_args {
	const char *engine, *out_dir, *netfile, *subnet;
	struct netfile_opts net;
	struct sarnue_options opts;
	int json, bad_option;
};

static void option_error(void *ctx, const char *msg)
{
	struct route_args *a = ctx;

	cli_error("route", "%s", msg);
	a->bad_option = 1;
}

static int parse_uint(const char *opt, const char *v, unsigned lo, unsigned hi, unsigned *out)
{
	if (num_parse_uint(v, lo, hi, out)) {
		cli_error("route", "%s %s: expected %u..%u", opt, v, lo, hi);
		return -1;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct route_args *a)
{
	static const struct option longopts[] = { { "engine", required_argument, NULL, 'e' },
						  { "out-dir", required_argument, NULL, 'o' },
						  { "subnet", required_argument, NULL, 's' },
						  { "lmc", required_argument, NULL, 'l' },
						  { "vls", required_argument, NULL, 'v' },
						  { "json", no_argument, NULL, 'j' },
						  { "help", no_argument, NULL, 'h' },
						  { NULL, 0, NULL, 0 } };
	int c;

	memset(a, 0, sizeof(*a));
	a->engine = "sar-updn";
	a->net.op_vls = 8;
	options_defaults(&a->opts);
	optind = 1;
	while ((c = getopt_long(argc, argv, "e:o:O:hj", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			a->engine = optarg;
			break;
		case 'o':
			a->out_dir = optarg;
			break;
		case 's':
			a->subnet = optarg;
			break;
		case 'j':
			a->json = 1;
			break;
		case 'O':
			options_set(&a->opts, optarg, "-O", 0, option_error, a);
			break;
		case 'l':
			if (parse_uint("--lmc", optarg, 0, 7, &a->net.lmc))
				return EXIT_USAGE;
			a->net.lmc_given = 1;
			break;
		case 'v':
			if (parse_uint("--vls", optarg, 1, 15, &a->net.op_vls))
				return EXIT_USAGE;
			break;
		case 'h':
			printf(route_usage, options_help);
			return -1;
		default:
			cli_error("route", "see 'sarnue route --help'");
			return EXIT_USAGE;
		}
	}
	if (a->bad_option)
		return EXIT_USAGE;
	if (!engine_known(a->engine)) {
		cli_error("route", "--engine %s: unknown engine", a->engine);
		return EXIT_USAGE;
	}
	if (a->subnet) {
		if (optind != argc) {
			cli_error("route", "give either NETFILE or --subnet, not both");
			return EXIT_USAGE;
		}
		return 0;
	}
	if (optind + 1 != argc) {
		cli_error("route", "expected exactly one NETFILE (or --subnet FILE)");
		return EXIT_USAGE;
	}
	a->netfile = argv[optind];
	return 0;
}

/*
 * Writes the dumps one kind at a time: on a large fabric the LFT and path-SL dumps take many
 * seconds each, and an operator at a terminal is told what is being written.  dump=never leaves
 * out the SL dumps, as in the plugin; sarnue check and ibdmchk then take every path to use SL 0.
 */
static int write_dumps(const char *dir, const struct fabric *f, const struct routing *r,
		       enum opt_dump dump)
{
	static const struct {
		unsigned set;
		const char *what;
	} steps[] = {
		{ DUMP_TOPOLOGY, "opensm-subnet.lst, opensm.mcfdbs" },
		{ DUMP_LFTS, "opensm.fdbs" },
		{ DUMP_SLS, "sarnue-path-sl.dump, sarnue-sl2vl.dump" },
	};
	int tty = isatty(STDERR_FILENO);
	char path[4096];
	size_t i;

	if (mkdir(dir, 0755) && errno != EEXIST) {
		cli_error("route", "%s: %s", dir, strerror(errno));
		return -1;
	}
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		if (steps[i].set == DUMP_SLS && dump == OPT_DUMP_NEVER)
			continue;
		if (tty)
			fprintf(stderr, "sarnue route: writing %s into %s\n", steps[i].what, dir);
		if (routing_write_dumps(dir, f, r, steps[i].set, path, sizeof(path))) {
			cli_error("route", "%s: %s", path, strerror(errno));
			return -1;
		}
	}
	return 0;
}

static long peak_rss_kib(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) ? -1 : ru.ru_maxrss;
}

static void print_summary(const struct route_args *a, const struct fabric *f,
			  const struct engine_result *res)
{
	if (a->json) {
		printf("{\"engine\": \"%s\", \"switches\": %u, \"lids\": %u, \"route_seconds\": %.6f, "
		       "\"verify_seconds\": %.6f, \"verify_beside_routing\": %s, \"peak_rss_kib\": %ld, "
		       "\"planes\": %d, "
		       "\"escape_engine\": \"%s\", \"summary\": \"%s\", \"verify\": ",
		       a->engine, f->nswitches, f->max_lid, res->route_seconds, res->verify_seconds,
		       res->verify_streamed ? "true" : "false", peak_rss_kib(), res->planes,
		       res->escape_engine, res->summary);
		if (res->verified)
			verify_print_json(&res->verify, a->engine, stdout);
		else
			printf("null}\n");
		if (res->verified)
			printf("}\n");
		return;
	}
	printf("engine:          %s\n", a->engine);
	printf("fabric:          %u switches, %u end ports, max LID %u\n", f->nswitches,
	       f->nendports - f->nswitches, f->max_lid);
	printf("engine summary:  %s\n", res->summary);
	printf("route time:      %.3f s\n", res->route_seconds);
	printf("verify time:     %.3f s%s\n", res->verify_seconds,
	       res->verify_streamed ? " after the routing (the rest ran beside it)" : "");
	printf("peak memory:     %ld KiB\n", peak_rss_kib());
	if (res->verified)
		verify_print_text(&res->verify, stdout);
}

/* --vls applies to a subnet.lst too: the file does not record VLs. */
static int load_fabric(const struct route_args *a, struct fabric *f, struct fab_error *err)
{
	struct topology_opts o = {
		.format = a->subnet ? TOPOLOGY_SUBNET_LST : TOPOLOGY_NETFILE,
		.net = a->net,
		.lst_op_vls = a->net.op_vls,
	};

	return fabric_load_topology(f, a->subnet ? a->subnet : a->netfile, &o, NULL, 0, err);
}

int route_main(int argc, char **argv)
{
	struct route_args a;
	struct engine_result res;
	struct fab_error err = { "" };
	struct fabric f;
	struct routing r;
	int rc;

	rc = parse_args(argc, argv, &a);
	if (rc)
		return rc < 0 ? 0 : rc;
	fabric_init(&f);
	memset(&r, 0, sizeof(r));
	if (load_fabric(&a, &f, &err)) {
		cli_error("route", "%s", err.msg);
		rc = EXIT_INPUT;
		goto out;
	}
	if (routing_init(&r, &f, a.engine)) {
		cli_error("route", "out of memory");
		rc = EXIT_INPUT;
		goto out;
	}
	if (engine_run(a.engine, &f, &a.opts, &r, &res, &err)) {
		cli_error("route", "%s: %s", a.engine, err.msg);
		rc = EXIT_ROUTING_FAULT;
		goto out;
	}
	if (a.out_dir && write_dumps(a.out_dir, &f, &r, a.opts.dump)) {
		rc = EXIT_INPUT;
		goto out;
	}
	if (res.warning[0])
		cli_error("route", "warning: %s", res.warning);
	print_summary(&a, &f, &res);
	rc = 0;
out:
	routing_free(&r);
	fabric_free(&f);
	return rc;
}
