/*
 * check.c - `sarnue check`: loads a topology and routing tables (OpenSM dump files, sarnue's own
 * dumps, or the live fabric through libibmad) and runs the verifier on them, so any engine's
 * result, ours or OpenSM's built-in ones, is judged by the same code the plugin uses.  Then it
 * reports the routing-quality metrics of metrics.h on the same tables: EFI and stretch always,
 * effective EFI with a job map, traffic patterns on request, and an SVG picture of the loads.
 * A fabric recognised as a fat tree gets the cut lower bound of the maximum EFI beside the EFI
 * and its shifts in topology order beside those in LID order.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "fabric/jobmap.h"
#include "cli/live.h"
#include "fabric/loaders.h"
#include "fabric/mcast.h"
#include "engines/mcasttree.h"
#include "check/metrics.h"
#include "lib/json.h"
#include "check/throughput.h"
#include "fabric/traffic.h"
#include "lib/numbers.h"
#include "cli/dumps.h"
#include "cli/optimal.h"
#include "cli/svg.h"
#include "check/verify.h"
#include "fabric/fattree.h"

static const char check_usage[] =
	"NAME\n"
	"    sarnue check - verify InfiniBand routing tables and measure their quality\n"
	"\n"
	"SYNOPSIS\n"
	"    sarnue check [OPTIONS] --dump-dir DIR\n"
	"    sarnue check [OPTIONS] --subnet FILE --fdbs FILE [--path-sl FILE] [--sl2vl FILE]\n"
	"    sarnue check [OPTIONS] --live [-C CA] [-P PORT] [--path-sl FILE]\n"
	"\n"
	"DESCRIPTION\n"
	"    Verifies unicast routing tables: every source port must reach every destination\n"
	"    LID, no path may loop, and the channel dependency graph of every VL must be\n"
	"    acyclic (no credit loop; one cycle is printed when found).  Also reports hop\n"
	"    statistics and the SLs and VLs used, then routing-quality metrics of the same\n"
	"    tables.  Multicast trees (--mcfdbs, or opensm.mcfdbs in --dump-dir) are read\n"
	"    with their groups' SLs and members and checked along with the unicast routes.\n"
	"    When stderr is a terminal, a step that lasts over 2 s shows its progress there\n"
	"    (loading, verifying and each metric, with the percent done, the time so far and\n"
	"    an estimate of what is left).\n"
	"\n"
	"INPUTS\n"
	"    --dump-dir DIR   OpenSM's dump_files_dir: opensm-subnet.lst and opensm.fdbs, plus\n"
	"                     sarnue-path-sl.dump and sarnue-sl2vl.dump when present (without\n"
	"                     them every path is taken to use SL 0 on VL 0, as ibdmchk does)\n"
	"    --subnet FILE    topology in opensm-subnet.lst format\n"
	"    --fdbs FILE      LFTs in opensm.fdbs or opensm-lfts.dump format\n"
	"    --path-sl FILE   path SLs ('0xGUID DLID SL' lines, or the compact form of\n"
	"                     sarnue route -O dump_path_sl); also with --live, since\n"
	"                     switches hold no path SLs (the SM hands them out in path records)\n"
	"    --sl2vl FILE     SL2VL tables ('0xGUID IN OUT' and 8 hex bytes)\n"
	"    --mcfdbs FILE    multicast forwarding tables in opensm.mcfdbs format; with\n"
	"                     --dump-dir its opensm.mcfdbs is read when it exists and is not\n"
	"                     empty (an empty one, as `sarnue route` writes, means no multicast\n"
	"                     groups)\n"
	"    --sa-dump FILE   OpenSM's SA dump (opensm-sa.dump, written with sa_db_dump TRUE):\n"
	"                     each multicast group's SL and member ports; with --dump-dir read\n"
	"                     when present.  Without it a group's SL is unknown (taken as 0) and\n"
	"                     its members are the end ports its tree reaches\n"
	"    --mcast-all      add a group of SL 0 with every CA port as member, built as the\n"
	"                     plugin builds it (the part of the tree sarnue's engines keep for\n"
	"                     multicast, MLID 0xfffe): whether IPoIB's broadcast group fits\n"
	"                     beside these routes once every host has joined\n"
	"    --live           discover the fabric and read LFTs and SL2VL tables from the\n"
	"                     switches through libibumad (real HCA, or ibsim under umad2sim)\n"
	"    -C, --ca CA      local HCA for --live (default: the first with an active port), as\n"
	"                     in infiniband-diags and sarnue-agent\n"
	"    -P, --port PORT  local port for --live (default: the first active one)\n"
	"\n"
	"OPTIONS\n"
	"    --lmc N          LMC of end ports (dump files do not record it; default 0)\n"
	"    --json           one JSON object on stdout instead of text\n"
	"    -q, --quiet      no progress on the terminal\n"
	"    -h, --help       this text\n"
	"    -V, --version    print the version\n"
	"\n"
	"METRICS\n"
	"    terminal = CA or router port with a LID and a link to a switch; route = the LFT\n"
	"    path from a terminal to the base LID of another terminal; C* = the directed\n"
	"    switch-to-switch channels; terminal links are never counted, each route uses one\n"
	"    of each end.\n"
	"\n"
	"    EFI              edge forwarding index: routes crossing each channel of C*, all\n"
	"                     terminal pairs; min, max, mean, standard deviation, histogram,\n"
	"                     and the 10 hottest channels named by their ports\n"
	"    stretch          per route, hops taken minus the fewest hops over active links:\n"
	"                     mean, max, mean ratio taken/fewest, non-minimal routes\n"
	"    --all-lids       count a route to every LID of a terminal's LMC range, not only to\n"
	"                     its base LID (each source port once per destination LID)\n"
	"    fat tree         when the switches form a fat tree (recognised from the links\n"
	"                     alone): its shape and the cut lower bound of the maximum EFI (over\n"
	"                     every subtree, the routes leaving it spread evenly over its up\n"
	"                     links), with the ratio max EFI / bound; 1.00 is optimal\n"
	"    --no-metrics     verification only\n"
	"\n"
	"    --job-map FILE   'hostname jobid' lines, the format of the plugin's job_map option.\n"
	"                     Adds the effective EFI (routes between two terminals of one job,\n"
	"                     summed over jobs: a pair sharing k jobs counts k times), its\n"
	"                     maximum, dark fiber (percentage of C* no intra-job route uses)\n"
	"                     and per job: terminals, switches, routes, maximum EFI and channels\n"
	"                     of C* used; means of the last two over jobs spanning two or more\n"
	"                     switches.  Unknown hostnames are counted, never fatal.\n"
	"    --job-host-match first-word|description\n"
	"                     hostname = first word of the node description (default) or all\n"
	"                     of it\n"
	"    --node-name-map FILE\n"
	"                     names for node GUIDs ('0xGUID \"name\"' per line, infiniband-diags'\n"
	"                     format): job map hostnames match these where FILE names the node\n"
	"\n"
	"    --patterns       static congestion under traffic patterns, each flow one route to\n"
	"                     the base LID, load = flows of one instance on a channel of C*:\n"
	"                     shifts i -> i+s mod N (terminals in LID order; on a fat tree also\n"
	"                     in topology order, leaf by leaf then port, the order D-mod-k\n"
	"                     routing carries every shift in without contention; see 'sarnue\n"
	"                     topo-order'), all-to-all (the EFI), random permutations and\n"
	"                     random bisections (halves paired at random, both directions); max\n"
	"                     and mean over instances of the highest load, and the effective\n"
	"                     bisection bandwidth estimate: mean over bisections of the fraction\n"
	"                     of flows whose channels carry no other flow, and of the mean link\n"
	"                     share 1/(highest load on the path)\n"
	"    --shifts K       shifts walked (default: all N-1 up to 2048 terminals, else 256);\n"
	"                     fewer than N-1 are spread evenly over 1..N-1\n"
	"    --permutations K random permutations (default 100)\n"
	"    --bisections K   random bisections (default 100)\n"
	"    --patterns-seed S  seed of the random patterns (default 1); same seed, same result\n"
	"    --throughput PATTERN[,PATTERN..]\n"
	"                     flow-level model: max-min fair rates of simultaneous flows over the\n"
	"                     LFT paths, link capacities from the fabric's widths and speeds\n"
	"                     (doc/throughput.md).  Patterns: alltoall, shift (LID order),\n"
	"                     topo-shift (fat tree topology order), permutation, bisection\n"
	"                     (counts and seed as above), jobs (all-to-all inside each job of\n"
	"                     --job-map).  Reports aggregate throughput and per-flow min, p5\n"
	"                     and median as fractions of the injection bandwidth, and the\n"
	"                     slowest flows with their bottleneck channel\n"
	"    --completion FILE  completion times of a measured traffic matrix ('SRC DST BYTES'\n"
	"                     per line, the plugin's traffic= format): every pair's flow starts\n"
	"                     at once, rates max-min fair and shared anew as flows finish;\n"
	"                     reports the slowdown (finish over the time alone at the link\n"
	"                     rate) of the heavy flows (10 times the median or more) and of\n"
	"                     all, and when the last one ends (at most 20,000 pairs)\n"
	"\n"
	"    --optimal        the distance to optimal for all-to-all traffic: the routing's\n"
	"                     busiest channel (routes over it over its capacity, end links\n"
	"                     included; capacities are link rates over the fastest link's)\n"
	"                     against the smallest maximum any routing could reach, splitting\n"
	"                     each pair's traffic at will (a multicommodity-flow linear\n"
	"                     program, GLPK), and their ratio, the gap to ideal adaptive\n"
	"                     routing; over --lp-limit variables, or without GLPK, bounds from\n"
	"                     both sides (Frank-Wolfe with a dual bound) and the ratio's range\n"
	"    --lp-limit N     variables the linear program may have (default 30000: one per\n"
	"                     destination switch and switch channel)\n"
	"    --tolerance F    the bounds stop within F of each other (default 0.01)\n"
	"    --optimal-seconds S\n"
	"                     or after S seconds (default 600); 0: the end links' bound only\n"
	"\n"
	"    --svg FILE       write a self-contained SVG: switch-by-switch heat map of the loads\n"
	"                     of C* (effective EFI with --job-map, else EFI; grey = unused) and\n"
	"                     their histogram\n"
	"\n"
	"EXIT STATUS\n"
	"    0 verified, 1 unreachable pairs, loops or credit loops, 2 usage, 3 unreadable or\n"
	"    malformed input (fabric, tables or job map, named with file:line), or an SVG that\n"
	"    cannot be written.\n";

struct check_args {
	const char *dump_dir, *subnet, *fdbs, *path_sl, *sl2vl, *ca;
	const char *mcfdbs, *sa_dump;
	const char *job_map, *svg, *node_name_map;
	enum job_host_match match;
	int json, live, port, no_metrics, patterns, mcast_all, quiet, optimal;
	struct optimal_params opt;
	char *throughput;	/* comma-separated pattern names, NULL: none */
	const char *completion; /* traffic matrix of --completion, NULL: none */
	unsigned lmc;
	struct metrics_options mo;
};

/*
 * A group of SL 0 with every CA and router port that has a link as member, on the tree the plugin
 * would build it on (engines/mcasttree.h), appended to m.
 */
static int add_broadcast_group(const struct fabric *f, struct mcast *m)
{
	struct mcast_tree t;
	uint32_t *members = malloc(sizeof(*members) * (f->nendports + 1)), n = 0, i;
	int ret = -1;

	if (!members || mcast_tree_choose(f, &t)) {
		free(members);
		return -1;
	}
	for (i = 0; i < f->nendports; i++)
		if (!fabric_is_switch(f, f->ports[f->endports[i]].node) &&
		    fabric_endport_switch(f, f->endports[i]) != FAB_NONE)
			members[n++] = f->endports[i];
	if (!mcast_begin_group(m, 0xfffe, 0) && mcast_tree_group(f, &t, m, members, n) >= 0) {
		mcast_end_group(m);
		ret = 0;
	}
	mcast_tree_free(&t);
	free(members);
	return ret;
}

static char *join(const char *dir, const char *name)
{
	size_t len = strlen(dir) + strlen(name) + 2;
	char *p = malloc(len);

	if (p)
		snprintf(p, len, "%s/%s", dir, name);
	return p;
}

enum {
	OPT_JOB_MAP = 256,
	OPT_JOB_HOST_MATCH,
	OPT_NODE_NAME_MAP,
	OPT_ALL_LIDS,
	OPT_NO_METRICS,
	OPT_PATTERNS,
	OPT_SHIFTS,
	OPT_PERMUTATIONS,
	OPT_BISECTIONS,
	OPT_SEED,
	OPT_SVG,
	OPT_OPTIMAL,
	OPT_LP_LIMIT,
	OPT_TOLERANCE,
	OPT_OPTIMAL_SECONDS,
	OPT_THROUGHPUT,
	OPT_COMPLETION,
	OPT_MCFDBS,
	OPT_SA_DUMP,
	OPT_MCAST_ALL,
};

static const struct option longopts[] = {
	{ "dump-dir", required_argument, NULL, 'd' },
	{ "subnet", required_argument, NULL, 's' },
	{ "fdbs", required_argument, NULL, 'f' },
	{ "path-sl", required_argument, NULL, 'c' },
	{ "sl2vl", required_argument, NULL, 'v' },
	{ "mcfdbs", required_argument, NULL, OPT_MCFDBS },
	{ "sa-dump", required_argument, NULL, OPT_SA_DUMP },
	{ "mcast-all", no_argument, NULL, OPT_MCAST_ALL },
	{ "lmc", required_argument, NULL, 'l' },
	{ "json", no_argument, NULL, 'j' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "live", no_argument, NULL, 'L' },
	{ "ca", required_argument, NULL, 'C' },
	{ "port", required_argument, NULL, 'P' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "job-map", required_argument, NULL, OPT_JOB_MAP },
	{ "job-host-match", required_argument, NULL, OPT_JOB_HOST_MATCH },
	{ "node-name-map", required_argument, NULL, OPT_NODE_NAME_MAP },
	{ "all-lids", no_argument, NULL, OPT_ALL_LIDS },
	{ "no-metrics", no_argument, NULL, OPT_NO_METRICS },
	{ "patterns", no_argument, NULL, OPT_PATTERNS },
	{ "shifts", required_argument, NULL, OPT_SHIFTS },
	{ "permutations", required_argument, NULL, OPT_PERMUTATIONS },
	{ "bisections", required_argument, NULL, OPT_BISECTIONS },
	{ "patterns-seed", required_argument, NULL, OPT_SEED },
	{ "svg", required_argument, NULL, OPT_SVG },
	{ "optimal", no_argument, NULL, OPT_OPTIMAL },
	{ "lp-limit", required_argument, NULL, OPT_LP_LIMIT },
	{ "tolerance", required_argument, NULL, OPT_TOLERANCE },
	{ "optimal-seconds", required_argument, NULL, OPT_OPTIMAL_SECONDS },
	{ "throughput", required_argument, NULL, OPT_THROUGHPUT },
	{ "completion", required_argument, NULL, OPT_COMPLETION },
	{ NULL, 0, NULL, 0 }
};

/* A decimal count for option name, at most max. */
static int parse_count(const char *name, const char *arg, uint64_t max, uint64_t *v)
{
	if (num_parse_u64(arg, max, v)) {
		return cli_usage("check", "--%s %s: expected a number from 0 to %" PRIu64, name,
				 arg, max);
	}
	return 0;
}

/* Every name of a --throughput list is a known pattern, at most TPUT_MAX_PATTERNS of them. */
static int check_throughput_arg(const char *arg)
{
	char name[32];
	unsigned n = 0;
	size_t len;

	for (;;) {
		len = strcspn(arg, ",");
		snprintf(name, sizeof(name), "%.*s", (int)(len < 31 ? len : 31), arg);
		if (len >= sizeof(name) || !tput_pattern_known(name))
			return cli_usage("check",
					 "--throughput: '%.*s' is no pattern (alltoall, shift, "
					 "topo-shift, permutation, bisection, jobs)",
					 (int)len, arg);
		if (++n > TPUT_MAX_PATTERNS)
			return cli_usage("check", "--throughput: at most %u patterns",
					 TPUT_MAX_PATTERNS);
		if (!arg[len])
			return 0;
		arg += len + 1;
	}
}

/* The metric options; 1 when c is none of them, else 0 or an exit status. */
static int parse_metrics_arg(int c, struct check_args *a)
{
	uint64_t v;
	int rc = 0;

	switch (c) {
	case OPT_JOB_MAP:
		a->job_map = optarg;
		break;
	case OPT_NODE_NAME_MAP:
		a->node_name_map = optarg;
		break;
	case OPT_JOB_HOST_MATCH:
		if (!strcmp(optarg, "first-word")) {
			a->match = JOB_MATCH_FIRST_WORD;
		} else if (!strcmp(optarg, "description")) {
			a->match = JOB_MATCH_DESCRIPTION;
		} else {
			return cli_usage("check",
					 "--job-host-match %s: expected first-word or description",
					 optarg);
		}
		break;
	case OPT_ALL_LIDS:
		a->mo.all_lids = 1;
		break;
	case OPT_NO_METRICS:
		a->no_metrics = 1;
		break;
	case OPT_PATTERNS:
		a->patterns = 1;
		break;
	case OPT_SHIFTS:
		rc = parse_count("shifts", optarg, UINT32_MAX, &v);
		a->mo.shifts = (uint32_t)v;
		break;
	case OPT_PERMUTATIONS:
		rc = parse_count("permutations", optarg, 1000000, &v);
		a->mo.permutations = (uint32_t)v;
		break;
	case OPT_BISECTIONS:
		rc = parse_count("bisections", optarg, 1000000, &v);
		a->mo.bisections = (uint32_t)v;
		break;
	case OPT_SEED:
		rc = parse_count("patterns-seed", optarg, UINT64_MAX, &v);
		a->mo.seed = v;
		break;
	case OPT_SVG:
		a->svg = optarg;
		break;
	case OPT_OPTIMAL:
		a->optimal = 1;
		break;
	case OPT_LP_LIMIT:
		rc = parse_count("lp-limit", optarg, UINT32_MAX, &a->opt.lp_limit);
		break;
	case OPT_TOLERANCE:
		if (num_parse_real(optarg, 0.0001, 1, &a->opt.tolerance))
			return cli_usage("check",
					 "--tolerance %s: expected a fraction from 0.0001 to 1",
					 optarg);
		break;
	case OPT_OPTIMAL_SECONDS:
		if (num_parse_real(optarg, 0, 86400, &a->opt.max_seconds))
			return cli_usage("check",
					 "--optimal-seconds %s: expected seconds from 0 to 86400",
					 optarg);
		break;
	case OPT_THROUGHPUT:
		a->throughput = optarg;
		return check_throughput_arg(optarg);
	case OPT_COMPLETION:
		a->completion = optarg;
		break;
	default:
		return 1;
	}
	return rc;
}

static int parse_input_arg(int c, struct check_args *a)
{
	unsigned u;

	switch (c) {
	case 'd':
		a->dump_dir = optarg;
		break;
	case 's':
		a->subnet = optarg;
		break;
	case 'f':
		a->fdbs = optarg;
		break;
	case 'c':
		a->path_sl = optarg;
		break;
	case 'v':
		a->sl2vl = optarg;
		break;
	case OPT_MCFDBS:
		a->mcfdbs = optarg;
		break;
	case OPT_SA_DUMP:
		a->sa_dump = optarg;
		break;
	case OPT_MCAST_ALL:
		a->mcast_all = 1;
		break;
	case 'j':
		a->json = 1;
		break;
	case 'q':
		a->quiet = 1;
		break;
	case 'L':
		a->live = 1;
		break;
	case 'C':
		a->ca = optarg;
		break;
	case 'P':
		if (num_parse_uint(optarg, 0, 254, &u)) {
			return cli_usage("check", "--port %s: expected a port number from 0 to 254",
					 optarg);
		}
		a->port = (int)u;
		break;
	case 'l':
		if (num_parse_uint(optarg, 0, 7, &a->lmc)) {
			return cli_usage("check", "--lmc %s: expected 0..7", optarg);
		}
		break;
	default:
		return 1;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct check_args *a)
{
	int c, rc;

	memset(a, 0, sizeof(*a));
	metrics_options_default(&a->mo);
	a->opt.lp_limit = 30000;
	a->opt.tolerance = 0.01;
	a->opt.max_seconds = 600;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hqVC:P:", longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(check_usage, stdout);
			return -1;
		}
		if (c == 'V') {
			cli_version();
			return -1;
		}
		if (c == '?' || c == ':')
			return cli_getopt_error("check", c, argv);
		rc = parse_input_arg(c, a);
		if (rc == 1)
			rc = parse_metrics_arg(c, a);
		if (rc == 1)
			return cli_usage("check", "unhandled option");
		if (rc)
			return rc;
	}
	if (optind < argc)
		return cli_usage("check", "unexpected argument '%s'", argv[optind]);
	if (!a->live && !a->dump_dir && !(a->subnet && a->fdbs))
		return cli_usage("check", "give --dump-dir DIR, --subnet and --fdbs, or --live");
	if (a->sa_dump && !a->mcfdbs && !a->dump_dir)
		return cli_usage("check", "--sa-dump needs --mcfdbs FILE or --dump-dir DIR");
	if (a->no_metrics && (a->job_map || a->patterns || a->svg || a->throughput))
		return cli_usage(
			"check",
			"--no-metrics excludes --job-map, --patterns, --svg and --throughput");
	return 0;
}

#define CHECK_OWNED_PATHS 6

/* Whether path names a file with something in it. */
static int non_empty_file(const char *path)
{
	struct stat st;

	return !stat(path, &st) && st.st_size > 0;
}

/*
 * Fills in the dump-directory file names; optional SL and multicast files only when they exist
 * (an empty opensm.mcfdbs holds no group, and its SA dump is not needed then).
 */
static int resolve_dump_dir(struct check_args *a, char **owned)
{
	int i;

	owned[0] = join(a->dump_dir, "opensm-subnet.lst");
	owned[1] = join(a->dump_dir, "opensm.fdbs");
	owned[2] = join(a->dump_dir, "sarnue-path-sl.dump");
	owned[3] = join(a->dump_dir, "sarnue-sl2vl.dump");
	owned[4] = join(a->dump_dir, "opensm.mcfdbs");
	owned[5] = join(a->dump_dir, "opensm-sa.dump");
	for (i = 0; i < CHECK_OWNED_PATHS; i++)
		if (!owned[i])
			return -1;
	if (!a->mcfdbs && non_empty_file(owned[4]))
		a->mcfdbs = owned[4];
	if (a->mcfdbs && !a->sa_dump && !access(owned[5], R_OK))
		a->sa_dump = owned[5];
	if (!a->subnet)
		a->subnet = owned[0];
	if (!a->fdbs)
		a->fdbs = owned[1];
	if (!a->path_sl && !access(owned[2], R_OK))
		a->path_sl = owned[2];
	if (!a->sl2vl && !access(owned[3], R_OK))
		a->sl2vl = owned[3];
	return 0;
}

/* The tables of the dump files resolve_dump_dir() or the options named (cli/dumps.h). */
static int load_from_files(const struct check_args *a, struct fabric *f, struct routing *r,
			   struct fab_error *err)
{
	struct dump_inputs in = {
		.subnet = a->subnet,
		.fdbs = a->fdbs,
		.path_sl = a->path_sl,
		.sl2vl = a->sl2vl,
		.lmc = a->lmc,
	};

	return dumps_load(&in, f, r, err);
}

struct check_metrics {
	struct metrics_efi efi;
	struct metrics_jobs jobs;
	struct metrics_patterns patterns;
	struct fat_tree tree;
	struct metrics_fat_tree tree_report;
	int have_jobs, have_patterns;
	struct tput_result tput[TPUT_MAX_PATTERNS];
	unsigned ntput;
	struct tput_completion comp; /* --completion */
	int have_comp;
};

static void check_metrics_free(struct check_metrics *cm)
{
	fat_tree_free(&cm->tree);
	metrics_efi_free(&cm->efi);
	if (cm->have_jobs)
		metrics_jobs_free(&cm->jobs);
}

/* The job map bound through --node-name-map when given; warns of hostnames naming many HCAs. */
static int bind_jobs(const struct check_args *a, const struct fabric *f, struct job_map *jm,
		     struct fab_error *err)
{
	struct node_name_map names;
	int rc = -1;

	node_name_map_init(&names);
	if (a->node_name_map && node_name_map_load(&names, a->node_name_map, err))
		goto out;
	rc = job_map_bind(jm, f, a->match, a->node_name_map ? &names : NULL, err);
	/* After the EFI: its progress line makes way for the warning. */
	progress_clear(a->mo.progress_ctx);
	if (!rc && jm->ambiguous_hosts)
		cli_error(
			"check",
			"warning: job map %s: hostname '%s' stands for %u HCAs named '%s' (%u such hostname(s)), "
			"bound to all of them; name the hosts with --node-name-map FILE",
			a->job_map, jm->first_ambiguous, jm->first_ambiguous_hcas,
			jm->first_ambiguous_name, jm->ambiguous_hosts);
out:
	node_name_map_free(&names);
	return rc;
}

/* The --throughput patterns, one after the other. */
static int compute_throughput(const struct check_args *a, const struct fabric *f,
			      const struct routing *r, const struct job_map *jm,
			      struct check_metrics *cm)
{
	struct fab_error err = { "" };
	const char *p = a->throughput;
	char name[32];
	size_t len;
	int rc;

	while (cm->ntput < TPUT_MAX_PATTERNS) {
		len = strcspn(p, ",");
		snprintf(name, sizeof(name), "%.*s", (int)len, p);
		progress_phase(a->mo.progress_ctx, "throughput");
		rc = tput_run(f, r, name, &a->mo, cm->tree.terminals,
			      cm->tree_report.recognised ? cm->tree.nterminals : 0,
			      a->job_map ? jm : NULL, &cm->tput[cm->ntput], &err);
		if (rc) {
			progress_clear(a->mo.progress_ctx);
			cli_error("check", "--throughput %s: %s", name,
				  rc == -1 ? "out of memory" : err.msg);
			return rc == -1 ? EXIT_INPUT : EXIT_USAGE;
		}
		cm->ntput++;
		if (!p[len])
			break;
		p += len + 1;
	}
	return 0;
}

static int compute_metrics(struct check_args *a, const struct fabric *f, const struct routing *r,
			   struct job_map *jm, struct check_metrics *cm)
{
	struct fab_error err = { "" };

	if (metrics_efi(f, r, &a->mo, &cm->efi))
		goto oom;
	if (a->job_map) {
		if (bind_jobs(a, f, jm, &err)) {
			cli_error("check", "%s", err.msg);
			return EXIT_INPUT;
		}
		if (metrics_effective_efi(f, r, jm, &a->mo, &cm->jobs))
			goto oom;
		cm->have_jobs = 1;
	}
	metrics_fat_tree_recognise(f, &cm->tree, &cm->tree_report);
	if (a->patterns) {
		if (metrics_patterns_in_order(f, r, &a->mo, cm->tree.terminals,
					      cm->tree_report.recognised ? cm->tree.nterminals : 0,
					      &cm->patterns))
			goto oom;
		cm->have_patterns = 1;
	}
	if (a->throughput)
		return compute_throughput(a, f, r, jm, cm);
	return 0;
oom:
	progress_clear(a->mo.progress_ctx);
	cli_error("check", "out of memory computing metrics");
	return EXIT_INPUT;
}

static void print_completion_text(const struct tput_completion *c, const char *file)
{
	printf("completion (%s): %u flows (%u heavy, %u unrouted), %u events\n", file, c->flows,
	       c->heavy, c->unrouted, c->events);
	printf("  slowdown (finish over time alone): heavy flows worst %.3f mean %.3f, all flows"
	       " worst %.3f mean %.3f; last finish %.3f x the largest flow alone\n",
	       c->heavy_worst, c->heavy_mean, c->all_worst, c->all_mean, c->makespan);
}

static void print_completion_json(const struct tput_completion *c)
{
	printf(", \"completion\": {\"flows\": %u, \"heavy\": %u, \"unrouted\": %u, "
	       "\"events\": %u, \"heavy_worst\": %.6g, \"heavy_mean\": %.6g, \"all_worst\": %.6g, "
	       "\"all_mean\": %.6g, \"makespan\": %.6g}",
	       c->flows, c->heavy, c->unrouted, c->events, c->heavy_worst, c->heavy_mean,
	       c->all_worst, c->all_mean, c->makespan);
}

/* --completion: the traffic matrix bound as job maps are, then the fluid model. */
static int compute_completion(const struct check_args *a, const struct fabric *f,
			      const struct routing *r, struct check_metrics *cm)
{
	struct fab_error err = { "" };
	struct traffic t;
	int rc;

	traffic_init(&t);
	if (traffic_parse(&t, a->completion, &err) || traffic_bind(&t, f, a->match, NULL, &err)) {
		cli_error("check", "--completion: %s", err.msg);
		traffic_free(&t);
		return EXIT_INPUT;
	}
	rc = tput_completion(f, r, &t, &cm->comp);
	traffic_free(&t);
	if (rc) {
		cli_error("check", "--completion %s: %s", a->completion,
			  rc == -2 ? "more than 20,000 pairs" : "out of memory");
		return EXIT_INPUT;
	}
	cm->have_comp = 1;
	return 0;
}

static const char *const optimum_method_name[] = {
	[OPTIMUM_EXACT] = "lp",
	[OPTIMUM_BOUNDS] = "bounds",
	[OPTIMUM_END_LINKS] = "end-links",
};

static double ratio_or_zero(double num, double den)
{
	return den > 0 ? num / den : 0.0;
}

/*
 * ratio: the routing's maximum over the optimum's lower bound (the gap at most); ratio_low: over
 * its upper bound (the gap at least; 0 when unknown).
 */
static void print_optimal_json(const struct optimal_result *o)
{
	printf(", \"optimal\": {\"pattern\": \"all-to-all\", \"routing_max\": %.6g, "
	       "\"optimum\": %.6g, \"optimum_upper\": %.6g, \"exact\": %s, \"method\": \"%s\", "
	       "\"ratio\": %.6g, \"ratio_low\": %.6g, \"end_links\": %.6g, \"variables\": %llu, "
	       "\"iterations\": %u, \"converged\": %s, \"seconds\": %.3f, \"unrouted\": %u, "
	       "\"how\": ",
	       o->routing_max, o->optimum, o->upper, o->exact ? "true" : "false",
	       optimum_method_name[o->method], ratio_or_zero(o->routing_max, o->optimum),
	       ratio_or_zero(o->routing_max, o->upper), o->end_links,
	       (unsigned long long)o->variables, o->iterations,
	       o->exact || o->converged ? "true" : "false", o->seconds, o->unrouted);
	json_write_string(stdout, o->how);
	fputc('}', stdout);
}

static void print_optimal_text(const struct optimal_result *o)
{
	printf("optimal (all-to-all): busiest channel %.6g routes, ", o->routing_max);
	if (o->method == OPTIMUM_EXACT)
		printf("best possible %.6g: ratio %.3f\n", o->optimum,
		       ratio_or_zero(o->routing_max, o->optimum));
	else if (o->method == OPTIMUM_BOUNDS)
		printf("best possible between %.6g and %.6g: ratio between %.3f and %.3f\n",
		       o->optimum, o->upper, ratio_or_zero(o->routing_max, o->upper),
		       ratio_or_zero(o->routing_max, o->optimum));
	else
		printf("best possible at least %.6g: ratio at most %.3f\n", o->optimum,
		       ratio_or_zero(o->routing_max, o->optimum));
	printf("  (%s)\n", o->how);
	if (o->unrouted)
		printf("  %u pair(s) the routing does not deliver are left out\n", o->unrouted);
}

static void print_report(const struct check_args *a, const struct fabric *f,
			 const struct verify_report *rep, const struct check_metrics *cm,
			 const struct job_map *jm, const struct optimal_result *opt)
{
	struct metrics_report m = {
		.options = &a->mo,
		.efi = &cm->efi,
		.jobs = cm->have_jobs ? &cm->jobs : NULL,
		.jm = jm,
		.job_map_name = a->job_map,
		.patterns = cm->have_patterns ? &cm->patterns : NULL,
		.tree = &cm->tree_report,
	};

	if (a->json) {
		fputc('{', stdout);
		verify_print_json_fields(rep, a->live ? "live" : "dump", stdout);
		if (!a->no_metrics) {
			fputs(", \"metrics\": ", stdout);
			metrics_print_json(&m, stdout);
		}
		if (opt)
			print_optimal_json(opt);
		if (cm->ntput) {
			fputs(", \"throughput\": ", stdout);
			tput_print_json(f, cm->tput, cm->ntput, stdout);
		}
		if (cm->have_comp)
			print_completion_json(&cm->comp);
		fputs("}\n", stdout);
		return;
	}
	verify_print_text(rep, stdout);
	if (!a->no_metrics)
		metrics_print_text(&m, stdout);
	if (opt)
		print_optimal_text(opt);
	tput_print_text(f, cm->tput, cm->ntput, stdout);
	if (cm->have_comp)
		print_completion_text(&cm->comp, a->completion);
}

/* --optimal: the routing's busiest channel under all-to-all against the best possible. */
static int compare_optimal(const struct check_args *a, const struct fabric *f,
			   const struct routing *r, struct optimal_result *opt)
{
	struct fab_error err = { "" };
	struct demands d;
	int rc;

	if (demands_all_to_all(f, &d)) {
		cli_error("check", "out of memory for the all-to-all demands");
		return EXIT_INPUT;
	}
	rc = optimal_compare(f, r, &d, &a->opt, opt, &err);
	demands_free(&d);
	if (rc)
		cli_error("check", "--optimal: %s", err.msg);
	return rc ? EXIT_INPUT : 0;
}

static int write_svg(const struct check_args *a, const struct fabric *f,
		     const struct check_metrics *cm)
{
	struct fab_error err = { "" };
	char title[512];
	int rc;

	if (cm->have_jobs) {
		snprintf(title, sizeof(title), "Effective edge forwarding index (job map %s)",
			 a->job_map);
		rc = svg_write_loads(a->svg, f, cm->jobs.load, &cm->jobs.dist, title, &err);
	} else {
		rc = svg_write_loads(a->svg, f, cm->efi.load, &cm->efi.dist,
				     "Edge forwarding index (all terminal pairs)", &err);
	}
	if (rc)
		cli_error("check", "%s", err.msg);
	return rc ? EXIT_INPUT : 0;
}

int check_main(int argc, char **argv)
{
	struct check_args a;
	struct fabric f;
	struct routing r;
	struct verify_report rep;
	struct job_map jm;
	struct check_metrics cm;
	struct optimal_result opt;
	struct progress progress;
	struct progress_hook hook;
	struct fab_error err = { "" };
	char *owned[CHECK_OWNED_PATHS] = { NULL };
	struct mcast mc;
	int rc, i;

	rc = parse_args(argc, argv, &a);
	if (rc)
		return rc < 0 ? 0 : rc;
	/* The metrics report through the same function the hook calls. */
	cli_progress_init(&progress, "sarnue check", a.quiet, 0);
	progress_hook_init(&hook, progress_update, &progress);
	a.mo.progress = progress_update;
	a.mo.progress_ctx = &progress;
	fabric_init(&f);
	job_map_init(&jm);
	memset(&r, 0, sizeof(r));
	mcast_init(&mc);
	memset(&cm, 0, sizeof(cm));
	fat_tree_init(&cm.tree);
	/* A job map is an option's argument: reject it before any expensive loading. */
	if (a.job_map && job_map_parse(&jm, a.job_map, &err)) {
		cli_error("check", "%s", err.msg);
		rc = EXIT_INPUT;
		goto out;
	}
	progress_phase(&progress, "loading");
	if (a.dump_dir && resolve_dump_dir(&a, owned)) {
		cli_error("check", "out of memory");
		rc = EXIT_INPUT;
		goto out;
	}
	if (a.live ? live_load(&f, &r, a.ca, a.port, &err) ||
			     (a.path_sl && routing_load_path_sl(&r, &f, a.path_sl, &err))
		   : load_from_files(&a, &f, &r, &err)) {
		cli_error("check", "%s", err.msg);
		rc = EXIT_INPUT;
		goto out;
	}
	if (a.mcfdbs) {
		if (mcast_load_mcfdbs(&mc, &f, a.mcfdbs, a.sa_dump, &err)) {
			cli_error("check", "%s", err.msg);
			rc = EXIT_INPUT;
			goto out;
		}
		r.mcast = &mc;
		/* What was read, until the verifier's report shows the multicast results. */
		if (!a.json)
			printf("multicast: %" PRIu32 " groups, %" PRIu32
			       " members read from %s%s%s\n",
			       mc.ngroups, mc.nmembers, a.mcfdbs, a.sa_dump ? " and " : "",
			       a.sa_dump ? a.sa_dump : "");
	}
	if (a.mcast_all) {
		if (add_broadcast_group(&f, &mc)) {
			cli_error("check", "out of memory for the multicast group");
			rc = EXIT_INPUT;
			goto out;
		}
		r.mcast = &mc;
	}
	progress_phase(&progress, "verifying");
	if (verify_routing_progress(&f, &r, &rep, &hook)) {
		progress_end(&progress);
		cli_error("check", "out of memory");
		rc = EXIT_INPUT;
		goto out;
	}
	if (!a.no_metrics) {
		progress_phase(&progress, "metrics");
		rc = compute_metrics(&a, &f, &r, &jm, &cm);
		progress_end(&progress);
		if (rc)
			goto out;
	}
	if (a.completion) {
		progress_phase(&progress, "completion times");
		rc = compute_completion(&a, &f, &r, &cm);
		progress_end(&progress);
		if (rc)
			goto out;
	}
	if (a.optimal) {
		progress_phase(&progress, "distance to optimal");
		rc = compare_optimal(&a, &f, &r, &opt);
		progress_end(&progress);
		if (rc)
			goto out;
	}
	progress_end(&progress);
	print_report(&a, &f, &rep, &cm, &jm, a.optimal ? &opt : NULL);
	if (a.svg) {
		rc = write_svg(&a, &f, &cm);
		if (rc)
			goto out;
	}
	rc = verify_ok(&rep) ? EXIT_VERIFIED : EXIT_ROUTING_FAULT;
out:
	check_metrics_free(&cm);
	job_map_free(&jm);
	routing_free(&r);
	fabric_free(&f);
	mcast_free(&mc);
	for (i = 0; i < CHECK_OWNED_PATHS; i++)
		free(owned[i]);
	return rc;
}
