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
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "engines/engines.h"
#include "fabric/loaders.h"
#include "lib/json.h"
#include "lib/numbers.h"

/* The help around the engine options, which options_help lists for the plugin's README too. */
static const char route_usage_head[] =
	"NAME\n"
	"    sarnue route - route a fabric offline with a sarnue engine and write OpenSM's dumps\n"
	"\n"
	"SYNOPSIS\n"
	"    sarnue route [OPTIONS] NETFILE\n"
	"    sarnue route [OPTIONS] --subnet opensm-subnet.lst\n"
	"\n"
	"DESCRIPTION\n"
	"    Routes the fabric described by NETFILE (ibsim net file or ibnetdiscover output)\n"
	"    with a sarnue engine, exactly as the OpenSM plugin would, verifies the result, and\n"
	"    writes opensm-subnet.lst, opensm.fdbs, an empty opensm.mcfdbs, sarnue-path-sl.dump\n"
	"    and sarnue-sl2vl.dump into the output directory (ibdmchk -s opensm-subnet.lst\n"
	"    -f opensm.fdbs -m opensm.mcfdbs -c sarnue-path-sl.dump -d sarnue-sl2vl.dump reads\n"
	"    them); with -O dump=never the two SL dumps are left out, and removed from an\n"
	"    earlier run (every path then counts as SL 0).  sarnue-path-sl.dump has a line per\n"
	"    destination when every path uses SL 0 (-O dump_path_sl=full for a line per source\n"
	"    and destination).\n"
	"\n"
	"    NETFILE may be ibnetdiscover output in any form (plain, -g, -s, with the lines the\n"
	"    tool printed before it); the LIDs it gives are kept, and ports without one get\n"
	"    LIDs as on a fresh fabric: switches first in GUID order, then end ports in file\n"
	"    order (doc/input-formats.md).  With --subnet, the fabric and its LIDs are those of\n"
	"    an opensm-subnet.lst that OpenSM dumped, so the routing is the one the plugin\n"
	"    computes on that subnet.\n"
	"\n"
	"    Same inputs give byte-identical outputs.  Prints route time and peak memory.\n"
	"    When stderr is a terminal, a step that lasts over 2 s shows its progress there\n"
	"    (loading, routing and verifying with the percent of destinations done, the time\n"
	"    so far and an estimate of what is left, writing the dumps).\n"
	"\n"
	"OPTIONS\n"
	"    -e, --engine NAME   sar-updn (default), sar-nue, sar-dfsssp or sar-dmodk (fat trees)\n"
	"    -o, --out-dir DIR   where to write the dump files (default: do not write)\n"
	"    --subnet FILE       route the fabric of OpenSM's opensm-subnet.lst, with its LIDs,\n"
	"                        instead of a NETFILE\n"
	"    --lmc N             LMC of end ports, 0..7 (default: the LMC of the LIDs the\n"
	"                        NETFILE gives, else 0); with -O planes=on and LMC >= 1 the\n"
	"                        engine routes two planes (README)\n"
	"    --vls N             operational VLs of every port, 1..15 (default 8)\n"
	"    --previous-job-map FILE\n"
	"                        route first with the job map FILE, as the routing the\n"
	"                        switches hold, then with -O job_map: with -O incremental=yes\n"
	"                        (sar-dfsssp) the second routing keeps the columns whose job\n"
	"                        demand did not change; prints how many LFT blocks of 64 LIDs\n"
	"                        differ between the two routings\n"
	"    --json              print the summary as one JSON object\n"
	"    -v, --verbose       print each dump file written, with its size and time (also\n"
	"                        done when stderr is a terminal), and the progress of long\n"
	"                        steps as plain lines when stderr is no terminal\n"
	"    -q, --quiet         no progress and no dump file lines on a terminal\n"
	"    -h, --help          this text\n"
	"    -V, --version       print the version\n"
	"    -O KEY=VALUE        an engine option, as in event_plugin_options (repeatable):\n";

static const char route_usage_tail[] =
	"\n"
	"EXIT STATUS\n"
	"    0 routed and verified, 1 routing or verification failed, 2 usage, 3 unreadable or\n"
	"    malformed input.\n";

/* options_help is laid out for two columns at the margin; the help indents it one level. */
static void print_usage(void)
{
	const char *line = options_help, *end;

	fputs(route_usage_head, stdout);
	for (; *line; line = end) {
		end = strchr(line, '\n');
		end = end ? end + 1 : line + strlen(line);
		printf("    %.*s", (int)(end - line), line);
	}
	fputs(route_usage_tail, stdout);
}

struct route_args {
	const char *engine, *out_dir, *netfile, *subnet;
	struct netfile_opts net;
	struct sarnue_options opts;
	const char *prev_jobs; /* --previous-job-map */
	int json, verbose, quiet, bad_option;
};

/* LFT blocks of 64 LIDs that differ between two routings of one fabric. */
struct block_diff {
	uint32_t blocks, changed, switches, switches_changed;
	uint64_t entries; /* LFT entries that differ */
};

static void option_error(void *ctx, const char *msg)
{
	struct route_args *a = ctx;

	cli_usage("route", "%s", msg);
	a->bad_option = 1;
}

static int parse_uint(const char *opt, const char *v, unsigned lo, unsigned hi, unsigned *out)
{
	if (num_parse_uint(v, lo, hi, out)) {
		cli_usage("route", "%s %s: expected %u..%u", opt, v, lo, hi);
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
						  { "vls", required_argument, NULL, 'W' },
						  { "json", no_argument, NULL, 'j' },
						  { "previous-job-map", required_argument, NULL,
						    'P' },
						  { "verbose", no_argument, NULL, 'v' },
						  { "quiet", no_argument, NULL, 'q' },
						  { "help", no_argument, NULL, 'h' },
						  { "version", no_argument, NULL, 'V' },
						  { NULL, 0, NULL, 0 } };
	int c;

	memset(a, 0, sizeof(*a));
	a->engine = "sar-updn";
	a->net.op_vls = 8;
	options_defaults(&a->opts);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":e:o:O:hjqvV", longopts, NULL)) != -1) {
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
		case 'P':
			a->prev_jobs = optarg;
			break;
		case 'v':
			a->verbose = 1;
			break;
		case 'q':
			a->quiet = 1;
			break;
		case 'O':
			options_set(&a->opts, optarg, "-O", 0, option_error, a);
			break;
		case 'l':
			if (parse_uint("--lmc", optarg, 0, 7, &a->net.lmc))
				return EXIT_USAGE;
			a->net.lmc_given = 1;
			break;
		case 'W':
			if (parse_uint("--vls", optarg, 1, 15, &a->net.op_vls))
				return EXIT_USAGE;
			break;
		case 'h':
			print_usage();
			return -1;
		case 'V':
			cli_version();
			return -1;
		default:
			return cli_getopt_error("route", c, argv);
		}
	}
	if (a->bad_option)
		return EXIT_USAGE;
	if (!engine_known(a->engine))
		return cli_usage("route", "--engine %s: unknown engine", a->engine);
	if (a->subnet) {
		if (optind != argc)
			return cli_usage("route", "give either NETFILE or --subnet, not both");
		return 0;
	}
	if (optind + 1 != argc)
		return cli_usage("route", "expected exactly one NETFILE (or --subnet FILE)");
	a->netfile = argv[optind];
	return 0;
}

/* Reports each dump file once it is written: size and the time it took. */
struct dump_report {
	double since;		   /* when the previous file was done */
	struct progress *progress; /* its terminal line is blanked before each file's */
};

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void report_file(void *arg, const char *path)
{
	struct dump_report *rep = arg;
	static const char *const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
	double t = now_seconds(), size = 0;
	struct stat st;
	unsigned u = 0;

	if (!stat(path, &st))
		size = (double)st.st_size;
	while (size >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		size /= 1024;
		u++;
	}
	progress_clear(rep->progress);
	fprintf(stderr, "sarnue route: wrote %s: %.*f %s in %.1f s\n", path, u ? 1 : 0, size,
		units[u], t - rep->since);
	rep->since = t;
}

/*
 * dump=never leaves out the SL dumps, as in the plugin, and removes those of an earlier run: next
 * to new LFTs they would describe another routing, and sarnue check --dump-dir reads whatever
 * it finds.  sarnue check and ibdmchk then take every path to use SL 0.
 */
static int remove_sl_dumps(const char *dir)
{
	static const char *const names[] = { "sarnue-path-sl.dump", "sarnue-sl2vl.dump" };
	char path[4096];
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (unlink(path) && errno != ENOENT) {
			cli_error("route", "%s: %s", path, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/*
 * On a large fabric the LFT dump and a full path-SL dump take many seconds each: at a terminal,
 * or with --verbose, each file is reported as it is done.
 */
static int write_dumps(const struct route_args *a, const struct fabric *f, const struct routing *r,
		       struct progress *progress)
{
	const char *dir = a->out_dir;
	struct dump_report rep = { now_seconds(), progress };
	struct dump_opts o = {
		.set = DUMP_TOPOLOGY | DUMP_LFTS | DUMP_SLS,
		.path_sl = options_path_sl_form(&a->opts),
	};
	char path[4096];

	if (mkdir(dir, 0755) && errno != EEXIST) {
		cli_error("route", "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (a->opts.dump == OPT_DUMP_NEVER) {
		o.set &= ~(unsigned)DUMP_SLS;
		cli_error("route",
			  "-O dump=never: writing only OpenSM's files into %s, without"
			  " sarnue-path-sl.dump and sarnue-sl2vl.dump (sarnue check and ibdmchk"
			  " take every path to use SL 0)",
			  dir);
		if (remove_sl_dumps(dir))
			return -1;
	} else if (o.path_sl == PATH_SL_COMPACT &&
		   routing_path_sl_form(r, f, PATH_SL_COMPACT) == PATH_SL_FULL) {
		cli_error("route", "-O dump_path_sl=compact: the SL towards some destination"
				   " varies by source; writing the full form");
	}
	if (a->verbose || (!a->quiet && isatty(STDERR_FILENO))) {
		fprintf(stderr, "sarnue route: writing the dump files into %s\n", dir);
		o.wrote = report_file;
		o.arg = &rep;
	}
	if (routing_write_dumps_opts(dir, f, r, &o, path, sizeof(path))) {
		cli_error("route", "%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static long peak_rss_kib(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) ? -1 : ru.ru_maxrss;
}

/* The engine's figures as "result": {...} and its warnings as "warnings": [...]. */
static void print_json_result(const struct engine_result *res)
{
	const char *w = res->warning, *line;
	unsigned i;
	int len;

	fputs("\"result\": {", stdout);
	for (i = 0; i < res->nfacts; i++) {
		const struct engine_fact *fact = &res->facts[i];

		printf("%s\"%s\": ", i ? ", " : "", fact->key);
		if (fact->text[0])
			json_write_string(stdout, fact->text);
		else
			printf("%.15g", fact->value);
	}
	fputs("}, \"warnings\": [", stdout);
	for (i = 0; (line = engine_warning_next(&w, &len)); i++) {
		char one[sizeof(res->warning)];

		snprintf(one, sizeof(one), "%.*s", len, line);
		fputs(i ? ", " : "", stdout);
		json_write_string(stdout, one);
	}
	fputs("]", stdout);
}

/* One "warning:" line per warning of the engine. */
static void print_warnings(const char *warnings)
{
	const char *s = warnings, *line;
	int len;

	while ((line = engine_warning_next(&s, &len)))
		cli_error("route", "warning: %.*s", len, line);
}

static void print_summary(const struct route_args *a, const struct fabric *f,
			  const struct engine_result *res, const struct block_diff *bd)
{
	if (a->json) {
		printf("{\"engine\": \"%s\", \"switches\": %u, \"lids\": %u, \"route_seconds\": %.6f, "
		       "\"verify_seconds\": %.6f, \"verify_beside_routing\": %s, \"peak_rss_kib\": %ld, "
		       "\"planes\": %d, \"escape_engine\": \"%s\", \"fallbacks\": %u, ",
		       a->engine, f->nswitches, f->max_lid, res->route_seconds, res->verify_seconds,
		       res->verify_streamed ? "true" : "false", peak_rss_kib(), res->planes,
		       res->escape_engine, res->fallbacks);
		print_json_result(res);
		if (a->prev_jobs)
			printf(", \"previous\": {\"lft_blocks\": %u, \"lft_blocks_changed\": %u, "
			       "\"lft_entries_changed\": %llu, \"switches_changed\": %u}",
			       bd->blocks, bd->changed, (unsigned long long)bd->entries,
			       bd->switches_changed);
		if (res->incremental[0]) {
			fputs(", \"incremental\": ", stdout);
			json_write_string(stdout, res->incremental);
		}
		if (res->quality_known)
			printf(", \"quality\": {\"efi_max\": %llu, \"efi_mean\": %.6f, \"channels\": "
			       "%u, \"dark_channels\": %u, \"seconds\": %.6f}",
			       (unsigned long long)res->efi_max, res->efi_mean, res->channels,
			       res->dark_channels, res->quality_seconds);
		else
			fputs(", \"quality\": null", stdout);
		fputs(", \"summary\": ", stdout);
		json_write_string(stdout, res->summary);
		fputs(", \"verify\": ", stdout);
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
	if (res->incremental[0])
		printf("incremental:     %s\n", res->incremental + strlen("incremental reroute: "));
	if (a->prev_jobs)
		printf("previous:        %u of %u LFT blocks of 64 LIDs differ (%llu entries), on %u"
		       " of %u switches\n",
		       bd->changed, bd->blocks, (unsigned long long)bd->entries,
		       bd->switches_changed, bd->switches);
	printf("route time:      %.3f s\n", res->route_seconds);
	printf("verify time:     %.3f s%s\n", res->verify_seconds,
	       res->verify_streamed ? " after the routing (the rest ran beside it)" : "");
	if (res->quality_known)
		printf("quality:         max EFI %llu, mean %.2f, %u of %u switch-to-switch channels"
		       " unused (%.3f s)\n",
		       (unsigned long long)res->efi_max, res->efi_mean, res->dark_channels,
		       res->channels, res->quality_seconds);
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

static void diff_blocks(const struct fabric *f, const struct routing *a, const struct routing *b,
			struct block_diff *bd)
{
	uint32_t s, lo, nblk = (a->lft_len + 63) / 64;

	memset(bd, 0, sizeof(*bd));
	bd->switches = f->nswitches;
	for (s = 0; s < f->nswitches; s++) {
		uint32_t before = bd->changed;

		for (lo = 0; lo < a->lft_len; lo += 64) {
			uint32_t n = a->lft_len - lo < 64 ? a->lft_len - lo : 64;

			bd->changed += !!memcmp(routing_lft(a, s) + lo, routing_lft(b, s) + lo, n);
		}
		for (lo = 0; lo < a->lft_len; lo++)
			bd->entries += routing_lft(a, s)[lo] != routing_lft(b, s)[lo];
		bd->blocks += nblk;
		bd->switches_changed += bd->changed != before;
	}
}

/* Both job maps must parse: the context would otherwise carry on with the other one. */
static int check_job_map(const char *path, struct fab_error *err)
{
	struct job_map jm;
	struct fab_error perr = { "" };
	int rc;

	if (!path[0])
		return 0;
	job_map_init(&jm);
	rc = job_map_parse_named(&jm, path, path, &perr);
	job_map_free(&jm);
	if (rc)
		fab_error_set(err, "job map %s", perr.msg);
	return rc;
}

/* --previous-job-map: the routing the switches hold before the one asked for. */
static int route_previous(const struct route_args *a, const struct fabric *f,
			  struct engine_ctx *ctx, struct routing *prev, struct fab_error *err)
{
	struct sarnue_options o = a->opts;
	struct engine_result res;

	if (strlen(a->prev_jobs) >= sizeof(o.job_map)) {
		fab_error_set(err, "--previous-job-map: path too long");
		return EXIT_USAGE;
	}
	strcpy(o.job_map, a->prev_jobs);
	o.job_map_name[0] = 0;
	o.incremental = 1;
	if (check_job_map(o.job_map, err))
		return EXIT_INPUT;
	if (routing_init(prev, f, a->engine)) {
		fab_error_set(err, "out of memory");
		return EXIT_INPUT;
	}
	if (engine_run_ctx(a->engine, f, &o, ctx, prev, &res, err))
		return EXIT_ROUTING_FAULT;
	return 0;
}

int route_main(int argc, char **argv)
{
	struct route_args a;
	struct engine_result res;
	struct fab_error err = { "" };
	struct fabric f;
	struct routing r, prev;
	struct engine_ctx ctx;
	struct block_diff bd = { 0 };
	struct progress progress;
	struct progress_hook hook;
	int rc;

	rc = parse_args(argc, argv, &a);
	if (rc)
		return rc < 0 ? 0 : rc;
	fabric_init(&f);
	memset(&r, 0, sizeof(r));
	memset(&prev, 0, sizeof(prev));
	engine_ctx_init(&ctx);
	cli_progress_init(&progress, "sarnue route", a.quiet, a.verbose);
	progress_hook_init(&hook, progress_update, &progress);
	a.opts.progress = &hook;
	progress_phase(&progress, "loading");
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
	if (a.prev_jobs && check_job_map(a.opts.job_map, &err)) {
		progress_end(&progress);
		cli_error("route", "%s", err.msg);
		rc = EXIT_INPUT;
		goto out;
	}
	if (a.prev_jobs && (rc = route_previous(&a, &f, &ctx, &prev, &err))) {
		progress_end(&progress);
		cli_error("route", "--previous-job-map %s: %s", a.prev_jobs, err.msg);
		goto out;
	}
	if (a.prev_jobs ? engine_run_ctx(a.engine, &f, &a.opts, &ctx, &r, &res, &err)
			: engine_run(a.engine, &f, &a.opts, &r, &res, &err)) {
		progress_end(&progress);
		cli_error("route", "%s: %s", a.engine, err.msg);
		rc = EXIT_ROUTING_FAULT;
		goto out;
	}
	if (a.prev_jobs)
		diff_blocks(&f, &prev, &r, &bd);
	if (a.out_dir) {
		progress_phase(&progress, "writing the dumps");
		if (write_dumps(&a, &f, &r, &progress)) {
			progress_end(&progress);
			rc = EXIT_INPUT;
			goto out;
		}
	}
	progress_end(&progress);
	print_warnings(res.warning);
	print_summary(&a, &f, &res, &bd);
	rc = 0;
out:
	engine_ctx_free(&ctx);
	routing_free(&prev);
	routing_free(&r);
	fabric_free(&f);
	return rc;
}
