/*
 * options.c - sarnue-filterd's command line: the help text, the defaults and the checks of each
 * value.  What it fills in (struct filterd_args) is all the configuration the daemon has; a bad
 * value is a usage error before anything runs.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engines/options.h"
#include "filterd/filterd_private.h"
#include "lib/arena.h"
#include "lib/assert.h"
#include "lib/numbers.h"
#include "lib/usage.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

#define PROG "sarnue-filterd"
#define DEFAULT_JOB_MAP "/var/lib/sarnue/jobs"
#define DEFAULT_MAX_OUTPUT 1024 /* MiB of squeue's stdout read at most */

static const char usage[] =
	"NAME\n"
	"    sarnue-filterd - reroute the InfiniBand fabric for Slurm's multi-switch jobs\n"
	"\n"
	"SYNOPSIS\n"
	"    sarnue-filterd [OPTIONS]\n"
	"\n"
	"DESCRIPTION\n"
	"    Runs next to slurmctld and polls Slurm for its running jobs (squeue --json, or a\n"
	"    fixed `squeue -h -o` format on Slurm without JSON).  Jobs whose hosts sit under two\n"
	"    or more leaf switches are multi-switch jobs; only they gain from scheduling-aware\n"
	"    routing (sar-dfsssp).  When the set of their node sets changes (a job starts on new\n"
	"    nodes, or one ends; a job replaced by another on the same nodes is no change), the\n"
	"    daemon writes the job map atomically and sends `jobs FILE` to the sarnue plugin over\n"
	"    its control socket, which makes OpenSM reroute.  If the socket is unreachable the\n"
	"    map is kept and the handoff retried at the next poll.\n"
	"\n"
	"    Host-to-switch mapping (first that applies): --fabric, --topology-conf, else the\n"
	"    plugin's `topology` command.  One log line per poll gives its duration, the job\n"
	"    counts and the decision with its reason.  SIGHUP polls at once; SIGTERM and SIGINT\n"
	"    stop the daemon.\n"
	"\n"
	"OPTIONS\n"
	"    Polling\n"
	"    -i, --interval SECONDS    time between polls (default 300)\n"
	"    -1, --once                poll once and exit (status 0 when the poll worked and a\n"
	"                              needed reroute reached the plugin)\n"
	"        --squeue PATH         squeue executable (default: squeue from PATH)\n"
	"        --squeue-format auto|json|text\n"
	"                              auto (default) tries --json, then the text format\n"
	"                              \"" SLURM_SQUEUE_FORMAT "\"\n"
	"        --squeue-timeout SECONDS  kill squeue after this long (default 60)\n"
	"        --squeue-max-output MIB  refuse the poll when squeue prints more (default\n"
	"                              1024); of its stderr only the first line and the\n"
	"                              last 64 KiB are kept\n"
	"        --min-time MINUTES    skip jobs with a shorter time limit (default 10)\n"
	"    -x, --exclude-partition PATTERN\n"
	"                              skip jobs in partitions matching the glob (repeatable),\n"
	"                              e.g. -x '*debug*'\n"
	"\n"
	"    Topology\n"
	"    -f, --fabric PATH         ibsim/ibnetdiscover net file, OpenSM's opensm-subnet.lst,\n"
	"                              or an OpenSM dump directory holding it; reread when it\n"
	"                              changes\n"
	"        --topology-conf PATH  Slurm's topology.conf: switches with Nodes= are leaves\n"
	"        --host-match first-word|description\n"
	"                              hostname = first word of the HCA's node description\n"
	"                              (default) or the whole description, as the plugin's\n"
	"                              job_host_match\n"
	"\n"
	"    Decision\n"
	"        --min-reroute-interval SECONDS\n"
	"                              least time between two reroutes (default 600); a change\n"
	"                              seen sooner is deferred, not lost\n"
	"        --min-gain PERCENT    reroute only when sar-dfsssp is predicted to lower the\n"
	"                              maximum effective EFI of the current routing by at least\n"
	"                              this much (default 0: off); needs --fabric with OpenSM's\n"
	"                              dumps (opensm-subnet.lst and the LFTs)\n"
	"        --gain-model efi|throughput\n"
	"                              what --min-gain compares: the maximum effective EFI\n"
	"                              (default), or the rate of the slowest flow inside a job\n"
	"                              when every job runs all-to-all, in the max-min\n"
	"                              throughput model of sarnue check --throughput jobs\n"
	"        --lfts PATH           current LFTs for --min-gain (default: opensm-lfts.dump,\n"
	"                              else opensm.fdbs, beside the --fabric subnet file)\n"
	"\n"
	"    Handoff\n"
	"    -m, --job-map PATH        where to write the job map (default " DEFAULT_JOB_MAP ");\n"
	"                              OpenSM must be able to read it\n"
	"    -s, --socket PATH         the plugin's control socket (default " CTL_DEFAULT_SOCKET
	")\n"
	"        --socket-timeout SECONDS  (default 10)\n"
	"    -n, --dry-run             print the job map and the command instead of writing and\n"
	"                              sending them\n"
	"\n"
	"    Operation\n"
	"    -d, --daemon              detach from the terminal (logs to --log, else syslog)\n"
	"        --pidfile PATH        write the daemon's PID there\n"
	"        --log PATH            append the log there instead of stderr\n"
	"        --log-format auto|plain|timestamp\n"
	"                              plain: no timestamp of its own (journald and syslog\n"
	"                              add theirs), timestamp: one in front of every line;\n"
	"                              auto (default): plain when stderr is the journal\n"
	"                              (JOURNAL_STREAM), else timestamp.  Errors and warnings\n"
	"                              carry their syslog priority either way\n"
	"        --json                also print each poll's status as one JSON line on stdout\n"
	"        --status PATH         write the last poll's status as JSON there (atomically)\n"
	"        --metrics-file PATH   write Prometheus metrics there after every poll\n"
	"                              (atomically): for node_exporter's textfile collector,\n"
	"                              e.g. /var/lib/prometheus/node-exporter/sarnue-filterd.prom\n"
	"    -h, --help                this text\n"
	"    -V, --version             print the version\n"
	"\n"
	"LOG\n"
	"    2026-11-21T10:00:00Z poll 7: 0.021 s (squeue 0.018 s, json): 12 jobs, 10 running,\n"
	"      2 short, 0 excluded, 3 single-switch, 5 multi-switch on 40 hosts; reroute:\n"
	"      multi-switch node sets changed (+1 -0); sent: job map /var/lib/sarnue/jobs\n"
	"      installed: 40 hosts, 5 jobs; reroute requested\n"
	"    Decisions: no change, reroute, deferred (too soon after the last reroute),\n"
	"    low gain (below --min-gain), error (squeue, parsing or topology failed; nothing\n"
	"    changes).\n"
	"\n"
	"EXIT STATUS\n"
	"    0 stopped by a signal, or --once and the poll worked; 1 the poll failed, or the\n"
	"    plugin could not be told about a changed job map (--once);\n"
	"    2 usage; 3 unreadable input at start-up.\n";

static int parse_seconds(const char *opt, const char *v, double lo, double *out)
{
	if (num_parse_real(v, lo, 1e9, out)) {
		usage_error(PROG, "%s: bad value '%s' (a number >= %g)", opt, v, lo);
		return -1;
	}
	return 0;
}

/* The job map path the plugin gets must be absolute: it runs in another directory. */
static char *absolute_path(const char *p)
{
	char cwd[PATH_MAX], *out;

	if (p[0] == '/')
		return strdup(p);
	if (!getcwd(cwd, sizeof(cwd)))
		return NULL;
	if (asprintf(&out, "%s/%s", cwd, p) < 0)
		return NULL;
	return out;
}

enum {
	OPT_SQUEUE = 256,
	OPT_SQUEUE_FORMAT,
	OPT_SQUEUE_TIMEOUT,
	OPT_MAX_OUTPUT,
	OPT_MIN_TIME,
	OPT_TOPOLOGY_CONF,
	OPT_HOST_MATCH,
	OPT_MIN_INTERVAL,
	OPT_MIN_GAIN,
	OPT_LFTS,
	OPT_SOCKET_TIMEOUT,
	OPT_PIDFILE,
	OPT_LOG,
	OPT_LOG_FORMAT,
	OPT_JSON,
	OPT_STATUS,
	OPT_METRICS,
	OPT_GAIN_MODEL,
};

static const struct option longopts[] = {
	{ "interval", required_argument, NULL, 'i' },
	{ "once", no_argument, NULL, '1' },
	{ "squeue", required_argument, NULL, OPT_SQUEUE },
	{ "squeue-format", required_argument, NULL, OPT_SQUEUE_FORMAT },
	{ "squeue-timeout", required_argument, NULL, OPT_SQUEUE_TIMEOUT },
	{ "squeue-max-output", required_argument, NULL, OPT_MAX_OUTPUT },
	{ "min-time", required_argument, NULL, OPT_MIN_TIME },
	{ "exclude-partition", required_argument, NULL, 'x' },
	{ "fabric", required_argument, NULL, 'f' },
	{ "topology-conf", required_argument, NULL, OPT_TOPOLOGY_CONF },
	{ "host-match", required_argument, NULL, OPT_HOST_MATCH },
	{ "min-reroute-interval", required_argument, NULL, OPT_MIN_INTERVAL },
	{ "min-gain", required_argument, NULL, OPT_MIN_GAIN },
	{ "gain-model", required_argument, NULL, OPT_GAIN_MODEL },
	{ "lfts", required_argument, NULL, OPT_LFTS },
	{ "job-map", required_argument, NULL, 'm' },
	{ "socket", required_argument, NULL, 's' },
	{ "socket-timeout", required_argument, NULL, OPT_SOCKET_TIMEOUT },
	{ "dry-run", no_argument, NULL, 'n' },
	{ "daemon", no_argument, NULL, 'd' },
	{ "pidfile", required_argument, NULL, OPT_PIDFILE },
	{ "log", required_argument, NULL, OPT_LOG },
	{ "log-format", required_argument, NULL, OPT_LOG_FORMAT },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "status", required_argument, NULL, OPT_STATUS },
	{ "metrics-file", required_argument, NULL, OPT_METRICS },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static void args_defaults(struct filterd_args *a)
{
	memset(a, 0, sizeof(*a));
	a->interval = 300;
	a->squeue_timeout = 60;
	a->max_output = DEFAULT_MAX_OUTPUT;
	a->min_interval = 600;
	a->socket_timeout = 10;
	a->squeue = "squeue";
	a->socket = CTL_DEFAULT_SOCKET;
	a->filter.min_time_limit = 10;
	a->match = JOB_MATCH_FIRST_WORD;
}

static const struct opt_keyword squeue_formats[] = {
	{ "auto", SQ_AUTO },
	{ "json", SQ_JSON },
	{ "text", SQ_TEXT },
	{ NULL, 0 },
};

static const struct opt_keyword log_formats[] = {
	{ "auto", LOG_FORMAT_AUTO },
	{ "plain", LOG_FORMAT_PLAIN },
	{ "timestamp", LOG_FORMAT_TIMESTAMP },
	{ NULL, 0 },
};

static int parse_choice(int c, const char *v, struct filterd_args *a)
{
	const struct opt_keyword *words = opt_host_match_keywords;
	const char *name = "--host-match";
	int value;

	if (c == OPT_SQUEUE_FORMAT) {
		words = squeue_formats;
		name = "--squeue-format";
	} else if (c == OPT_LOG_FORMAT) {
		words = log_formats;
		name = "--log-format";
	}
	if (opt_keyword_value(words, v, &value)) {
		usage_error(PROG, "%s: bad value '%s'", name, v);
		return -1;
	}
	if (c == OPT_SQUEUE_FORMAT)
		a->format = value;
	else if (c == OPT_LOG_FORMAT)
		a->log_format = value;
	else
		a->match = (enum job_host_match)value;
	return 0;
}

static int parse_value(int c, const char *v, struct filterd_args *a)
{
	double x;

	switch (c) {
	case 'i':
		return parse_seconds("--interval", v, 0.1, &a->interval);
	case OPT_SQUEUE_TIMEOUT:
		return parse_seconds("--squeue-timeout", v, 0.1, &a->squeue_timeout);
	case OPT_SOCKET_TIMEOUT:
		return parse_seconds("--socket-timeout", v, 0.1, &a->socket_timeout);
	case OPT_MIN_INTERVAL:
		return parse_seconds("--min-reroute-interval", v, 0, &a->min_interval);
	case OPT_MIN_GAIN:
		if (parse_seconds("--min-gain", v, 0, &a->min_gain))
			return -1;
		if (a->min_gain > 100) {
			usage_error(PROG, "--min-gain: %s is above 100 percent", v);
			return -1;
		}
		return 0;
	case OPT_MAX_OUTPUT:
		if (num_parse_uint(v, 1, 65536, &a->max_output)) {
			usage_error(PROG, "--squeue-max-output: bad value '%s' (MiB, 1..65536)", v);
			return -1;
		}
		return 0;
	case OPT_MIN_TIME:
		if (parse_seconds("--min-time", v, 0, &x))
			return -1;
		a->filter.min_time_limit = (uint32_t)ceil(x);
		return 0;
	default:
		return parse_choice(c, v, a);
	}
}

static int add_exclude(struct filterd_args *a, const char *pattern)
{
	if (fab_grow((void **)&a->exclude, &a->exclude_cap, a->filter.nexclude + 1,
		     sizeof(*a->exclude), 8))
		return -1;
	sn_assert(a->filter.nexclude < a->exclude_cap);
	a->exclude[a->filter.nexclude++] = pattern;
	a->filter.exclude_parts = a->exclude;
	return 0;
}

/* Returns 0 to run, 1 after --help/--version, -1 on a usage error. */
int parse_args(int argc, char **argv, struct filterd_args *a)
{
	const char *job_map = DEFAULT_JOB_MAP;
	int c;

	args_defaults(a);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":i:1x:f:m:s:ndhV", longopts, NULL)) != -1) {
		switch (c) {
		case '1':
			a->once = 1;
			break;
		case 'x':
			if (add_exclude(a, optarg))
				return -1;
			break;
		case 'f':
			a->fabric = optarg;
			break;
		case 'm':
			job_map = optarg;
			break;
		case 's':
			a->socket = optarg;
			break;
		case 'n':
			a->dry_run = 1;
			break;
		case 'd':
			a->daemon = 1;
			break;
		case OPT_SQUEUE:
			a->squeue = optarg;
			break;
		case OPT_TOPOLOGY_CONF:
			a->topology_conf = optarg;
			break;
		case OPT_LFTS:
			a->lfts = optarg;
			break;
		case OPT_PIDFILE:
			a->pidfile = optarg;
			break;
		case OPT_LOG:
			a->log = optarg;
			break;
		case OPT_JSON:
			a->json = 1;
			break;
		case OPT_STATUS:
			a->status = optarg;
			break;
		case OPT_METRICS:
			a->metrics = optarg;
			break;
		case OPT_GAIN_MODEL:
			if (strcmp(optarg, "efi") && strcmp(optarg, "throughput")) {
				usage_error(PROG,
					    "--gain-model: '%s' is neither efi nor throughput",
					    optarg);
				return -1;
			}
			a->gain_throughput = !strcmp(optarg, "throughput");
			break;
		case 'h':
			fputs(usage, stdout);
			return 1;
		case 'V':
			printf("sarnue-filterd %s\n", PACKAGE_VERSION);
			return 1;
		case '?':
		case ':':
			usage_getopt_error(PROG, c, argv);
			return -1;
		default:
			if (parse_value(c, optarg, a))
				return -1;
		}
	}
	if (optind < argc) {
		usage_error(PROG, "unexpected argument '%s'", argv[optind]);
		return -1;
	}
	if (a->min_gain > 0 && !a->fabric) {
		usage_error(PROG, "--min-gain needs --fabric with OpenSM's dumps");
		return -1;
	}
	a->job_map = absolute_path(job_map);
	return a->job_map ? 0 : -1;
}
