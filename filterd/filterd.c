/*
 * filterd.c - sarnue-filterd, the filter between Slurm and the subnet manager (Domke's thesis,
 * section 5.2.2.1, figure 5.6).  Every interval it asks squeue for the running jobs, keeps the
 * multi-switch ones (jobfilter.c), and when their node sets changed it writes the job map
 * (fabric/jobmap.h format) atomically and hands it to the plugin with `jobs FILE` over the
 * control socket (doc/ctl-protocol.md, tools/ctlclient.c).  It runs next to slurmctld, not
 * inside it, so Slurm and OpenSM may live on different management nodes.
 *
 * The reroute decision ignores job ids and compares node sets symmetrically (a job ending is a
 * change), with a minimum time between reroutes and an optional minimum predicted gain in
 * maximum effective EFI.  Nothing here signals OpenSM: the socket is the only channel.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "lib/ctlclient.h"
#include "lib/json.h"
#include "engines/engines.h"
#include "filterd/jobfilter.h"
#include "fabric/loaders.h"
#include "engines/options.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif
#include "check/metrics.h"
#include "lib/numbers.h"
#include "filterd/slurmjobs.h"
#include "lib/arena.h"

#define DEFAULT_JOB_MAP "/var/lib/sarnue/jobs"
#define DEFAULT_MAX_OUTPUT 1024 /* MiB of squeue's stdout read at most */
#define STDERR_HEAD 256		/* bytes of the first line of squeue's stderr kept */
#define STDERR_TAIL (64 * 1024) /* and of its end: a flood of messages is not buffered whole */
#define UNKNOWN_LISTED 10	/* hostnames named in the "not in the fabric" line */

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
	"        --json                also print each poll's status as one JSON line on stdout\n"
	"        --status PATH         write the last poll's status as JSON there (atomically)\n"
	"    -h, --help                this text\n"
	"    -V, --version\n"
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

enum squeue_format {
	SQ_AUTO,
	SQ_JSON,
	SQ_TEXT
};

struct args {
	double interval, squeue_timeout, min_interval, min_gain, socket_timeout;
	unsigned max_output; /* MiB */
	int once, dry_run, daemon, json;
	enum squeue_format format;
	const char *squeue, *fabric, *topology_conf, *lfts, *socket, *pidfile, *log, *status;
	char *job_map; /* absolute */
	enum job_host_match match;
	struct filter_conf filter;
	const char **exclude;
	uint32_t exclude_cap;
};

/* squeue's stdout: all of it, up to limit bytes. */
struct outbuf {
	char *s;
	size_t len, cap, limit;
};

/* squeue's stderr: its first line (where squeue puts the error) and its last bytes. */
struct errtail {
	char head[STDERR_HEAD];
	size_t head_len;
	int head_done; /* the first line ended, or head is full */
	char tail[STDERR_TAIL];
	size_t tail_len;
	unsigned long long total;
};

/* What one poll found and did; printed as the log line and as JSON. */
struct poll_report {
	unsigned long poll;
	double seconds, squeue_seconds;
	const char *squeue_format;
	struct jobset_stats st;
	uint32_t unknown;
	const char *decision; /* "no change", "reroute", ... */
	char reason[1024];
	char handoff[CTL_LINE_MAX + 256];
	uint32_t added, removed;
	int ok;
};

struct filterd {
	struct args a;
	struct topo topo;
	int have_topo;
	struct timespec fabric_mtime;
	const char *topo_source;
	struct slurm_jobs jobs;
	struct jobset js;
	struct hostlist installed, unknown;
	double last_reroute;
	int text_works; /* auto: --json failed and the text format answered */
	unsigned long polls, reroutes;
	FILE *log;
	int syslog;
};

/* ------------------------------------------------------------------ time and logging */

static double now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void utc_stamp(char *buf, size_t size)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void logmsg(struct filterd *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void logmsg(struct filterd *d, const char *fmt, ...)
{
	char stamp[32], line[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (d->syslog) {
		syslog(LOG_INFO, "%s", line);
		return;
	}
	utc_stamp(stamp, sizeof(stamp));
	fprintf(d->log, "%s sarnue-filterd: %s\n", stamp, line);
	fflush(d->log);
}

/* ------------------------------------------------------------------ arguments */

static int parse_seconds(const char *opt, const char *v, double lo, double *out)
{
	if (num_parse_real(v, lo, 1e9, out)) {
		fprintf(stderr, "sarnue-filterd: %s: bad value '%s' (a number >= %g)\n", opt, v,
			lo);
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
	OPT_JSON,
	OPT_STATUS,
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
	{ "lfts", required_argument, NULL, OPT_LFTS },
	{ "job-map", required_argument, NULL, 'm' },
	{ "socket", required_argument, NULL, 's' },
	{ "socket-timeout", required_argument, NULL, OPT_SOCKET_TIMEOUT },
	{ "dry-run", no_argument, NULL, 'n' },
	{ "daemon", no_argument, NULL, 'd' },
	{ "pidfile", required_argument, NULL, OPT_PIDFILE },
	{ "log", required_argument, NULL, OPT_LOG },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "status", required_argument, NULL, OPT_STATUS },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static void args_defaults(struct args *a)
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

static int parse_choice(int c, const char *v, struct args *a)
{
	int squeue = c == OPT_SQUEUE_FORMAT, value;

	if (opt_keyword_value(squeue ? squeue_formats : opt_host_match_keywords, v, &value)) {
		fprintf(stderr, "sarnue-filterd: %s: bad value '%s'\n",
			squeue ? "--squeue-format" : "--host-match", v);
		return -1;
	}
	if (squeue)
		a->format = value;
	else
		a->match = (enum job_host_match)value;
	return 0;
}

static int parse_value(int c, const char *v, struct args *a)
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
			fprintf(stderr, "sarnue-filterd: --min-gain: %s is above 100 percent\n", v);
			return -1;
		}
		return 0;
	case OPT_MAX_OUTPUT:
		if (num_parse_uint(v, 1, 65536, &a->max_output)) {
			fprintf(stderr,
				"sarnue-filterd: --squeue-max-output: bad value '%s' (MiB, 1..65536)\n",
				v);
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

static int add_exclude(struct args *a, const char *pattern)
{
	if (fab_grow((void **)&a->exclude, &a->exclude_cap, a->filter.nexclude + 1,
		     sizeof(*a->exclude), 8))
		return -1;
	a->exclude[a->filter.nexclude++] = pattern;
	a->filter.exclude_parts = a->exclude;
	return 0;
}

/* Returns 0 to run, 1 after --help/--version, -1 on a usage error. */
static int parse_args(int argc, char **argv, struct args *a)
{
	const char *job_map = DEFAULT_JOB_MAP;
	int c;

	args_defaults(a);
	while ((c = getopt_long(argc, argv, "i:1x:f:m:s:ndhV", longopts, NULL)) != -1) {
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
		case 'h':
			fputs(usage, stdout);
			return 1;
		case 'V':
			printf("sarnue-filterd %s\n", PACKAGE_VERSION);
			return 1;
		case '?':
			fprintf(stderr, "Try 'sarnue-filterd --help'.\n");
			return -1;
		default:
			if (parse_value(c, optarg, a))
				return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "sarnue-filterd: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (a->min_gain > 0 && !a->fabric) {
		fprintf(stderr, "sarnue-filterd: --min-gain needs --fabric with OpenSM's dumps\n");
		return -1;
	}
	a->job_map = absolute_path(job_map);
	return a->job_map ? 0 : -1;
}

/* ------------------------------------------------------------------ running squeue */

/*
 * Reads what fd has into b: 1 more may follow, 0 at EOF, -1 on a read error, -2 past b->limit,
 * -3 out of memory.
 */
static int outbuf_read(struct outbuf *b, int fd)
{
	ssize_t n;

	/* Room for one byte past the limit: reading it is how an overflow shows. */
	if (b->cap - b->len < 65536 && b->cap <= b->limit) {
		size_t cap = b->cap ? 2 * b->cap : 1 << 17;
		char *g;

		if (cap > b->limit + 1)
			cap = b->limit + 1;
		g = realloc(b->s, cap + 1);
		if (!g)
			return -3;
		b->s = g;
		b->cap = cap;
	}
	n = read(fd, b->s + b->len, b->cap - b->len);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 1 : -1;
	b->len += (size_t)n;
	b->s[b->len] = '\0';
	if (b->len > b->limit)
		return -2;
	return n > 0;
}

/* Keeps the first line of s[0..n) in e->head, as far as it fits. */
static void errtail_head(struct errtail *e, const char *s, size_t n)
{
	const char *nl = memchr(s, '\n', n);
	size_t take = nl ? (size_t)(nl - s) : n;

	if (e->head_done)
		return;
	if (take > sizeof(e->head) - 1 - e->head_len)
		take = sizeof(e->head) - 1 - e->head_len;
	memcpy(e->head + e->head_len, s, take);
	e->head_len += take;
	e->head[e->head_len] = '\0';
	e->head_done = nl || e->head_len == sizeof(e->head) - 1;
}

/* Appends s[0..n) to the tail, dropping the oldest bytes beyond STDERR_TAIL. */
static void errtail_keep(struct errtail *e, const char *s, size_t n)
{
	size_t drop;

	if (n > STDERR_TAIL) {
		s += n - STDERR_TAIL;
		n = STDERR_TAIL;
	}
	drop = e->tail_len + n > STDERR_TAIL ? e->tail_len + n - STDERR_TAIL : 0;
	memmove(e->tail, e->tail + drop, e->tail_len - drop);
	e->tail_len -= drop;
	memcpy(e->tail + e->tail_len, s, n);
	e->tail_len += n;
}

/* Like outbuf_read() for stderr, which has no limit: what does not fit is dropped. */
static int errtail_read(struct errtail *e, int fd)
{
	char chunk[16384];
	ssize_t n = read(fd, chunk, sizeof(chunk));

	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 1 : -1;
	errtail_head(e, chunk, (size_t)n);
	errtail_keep(e, chunk, (size_t)n);
	e->total += (unsigned long long)n;
	return n > 0;
}

static void child_exec(char *const *argv, int out, int err)
{
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* The daemon ignores SIGPIPE; an ignored signal stays ignored across exec, and a
	 * wrapper's pipelines would then print "Broken pipe" errors instead of ending quietly. */
	signal(SIGPIPE, SIG_DFL);
	/* Own process group: on a timeout the whole group (a wrapper script and what it
	 * started) is stopped, and nothing else. */
	setpgid(0, 0);
	if (dup2(out, 1) < 0 || dup2(err, 2) < 0)
		_exit(127);
	execvp(argv[0], argv);
	fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/*
 * Reads both pipes until EOF or the deadline; returns 0, or -1 with why[size] saying what went
 * wrong.  Output that could not be read whole fails: a part could look like jobs ending.
 */
static int drain(int fds[2], struct outbuf *out, struct errtail *err, double deadline, char *why,
		 size_t size)
{
	struct pollfd p[2] = { { fds[0], POLLIN, 0 }, { fds[1], POLLIN, 0 } };
	double start = now_mono();
	int open = 2;

	while (open) {
		double left = deadline - now_mono();
		int i, r;

		if (left <= 0) {
			snprintf(why, size, "timed out after %.1f s", deadline - start);
			return -1;
		}
		r = poll(p, 2, (int)(left * 1000) + 1);
		if (r < 0 && errno != EINTR) {
			snprintf(why, size, "poll: %s", strerror(errno));
			return -1;
		}
		for (i = 0; r > 0 && i < 2; i++) {
			int got;

			if (p[i].fd < 0 || !p[i].revents)
				continue;
			got = i ? errtail_read(err, p[i].fd) : outbuf_read(out, p[i].fd);
			if (got == -2) {
				snprintf(why, size,
					 "printed more than --squeue-max-output (%zu MiB); killed,"
					 " output refused",
					 out->limit >> 20);
				return -1;
			}
			if (got < 0) {
				snprintf(why, size, "reading its output: %s",
					 got == -3 ? "out of memory" : strerror(errno));
				return -1;
			}
			if (!got) {
				p[i].fd = -1;
				open--;
			}
		}
	}
	return 0;
}

/*
 * Waits for pid until the deadline, then kills its process group; kill_now: the caller already
 * did, only reap.  Returns the wait status, or -1.
 */
static int reap(pid_t pid, double deadline, int kill_now)
{
	int status = 0;

	for (;;) {
		pid_t r = waitpid(pid, &status, kill_now ? 0 : WNOHANG);

		if (r == pid)
			return status;
		if (r < 0 && errno != EINTR)
			return -1;
		if (!kill_now && now_mono() >= deadline) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			kill_now = 1;
			continue;
		}
		if (!kill_now) {
			struct timespec ts = { 0, 10 * 1000 * 1000 };

			nanosleep(&ts, NULL);
		}
	}
}

/* The last line of the kept stderr with text on it, or "". */
static const char *errtail_last(struct errtail *e, size_t *len)
{
	size_t end = e->tail_len, start;

	while (end && (e->tail[end - 1] == '\n' || e->tail[end - 1] == '\r'))
		end--;
	start = end;
	while (start && e->tail[start - 1] != '\n')
		start--;
	*len = end - start;
	return e->tail + start;
}

/*
 * What squeue said, for messages: its first line, and when more followed, its last line and
 * how much there was.
 */
static const char *errtail_summary(struct errtail *e, char *buf, size_t size)
{
	size_t last_len;
	const char *last = errtail_last(e, &last_len);

	if (!e->total)
		return "no output";
	/* One line only: it is in the head and starts the tail. */
	if (e->total <= STDERR_TAIL && last == e->tail)
		return e->head;
	snprintf(buf, size, "%s ... %.*s (%llu bytes on stderr)", e->head,
		 (int)(last_len > 160 ? 160 : last_len), last, e->total);
	return buf;
}

/*
 * Runs argv with a deadline; its stdout in out.  Returns 0 when it exited with status 0, else
 * -1 with err saying why (exit status and first line of stderr, timeout, ...).
 */
static int run_command(char *const *argv, const char *label, double timeout, struct outbuf *out,
		       struct fab_error *err)
{
	struct errtail *errb = calloc(1, sizeof(*errb));
	int po[2] = { -1, -1 }, pe[2] = { -1, -1 }, fds[2], status, ret = -1;
	double deadline = now_mono() + timeout;
	char line[512], why[160];
	pid_t pid;

	out->len = 0;
	if (!errb) {
		fab_error_set(err, "%s: out of memory", label);
		goto out;
	}
	if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC)) {
		fab_error_set(err, "%s: pipe: %s", label, strerror(errno));
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		fab_error_set(err, "%s: fork: %s", label, strerror(errno));
		goto out;
	}
	if (!pid)
		child_exec(argv, po[1], pe[1]);
	/* Also here: the group must exist before a timeout may signal it. */
	setpgid(pid, pid);
	close(po[1]);
	close(pe[1]);
	po[1] = pe[1] = -1;
	fds[0] = po[0];
	fds[1] = pe[0];
	if (drain(fds, out, errb, deadline, why, sizeof(why))) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
		reap(pid, deadline, 1);
		fab_error_set(err, "%s: %s", label, why);
		goto out;
	}
	status = reap(pid, deadline, 0);
	if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		char how[64];

		if (status >= 0 && WIFEXITED(status))
			snprintf(how, sizeof(how), "exit status %d", WEXITSTATUS(status));
		else if (status >= 0 && WIFSIGNALED(status))
			snprintf(how, sizeof(how), "killed by signal %d", WTERMSIG(status));
		else
			snprintf(how, sizeof(how), "timed out after %.1f s", timeout);
		fab_error_set(err, "%s: %s: %s", label, how,
			      errtail_summary(errb, line, sizeof(line)));
		goto out;
	}
	ret = 0;
out:
	if (!out->s) {
		out->s = calloc(1, 1);
		out->cap = 0;
	}
	free(errb);
	for (status = 0; status < 2; status++) {
		if (po[status] >= 0)
			close(po[status]);
		if (pe[status] >= 0)
			close(pe[status]);
	}
	return ret;
}

/* Runs squeue in one format and parses its output; *run_seconds: time squeue itself took. */
static int squeue_once(struct filterd *d, enum squeue_format fmt, struct outbuf *out,
		       double *run_seconds, struct fab_error *err)
{
	double t0 = now_mono();
	int rc;

	char *json_argv[] = { (char *)d->a.squeue, "--json", NULL };
	char *text_argv[] = { (char *)d->a.squeue, "-a", "-h", "-t", "RUNNING", "-o",
			      SLURM_SQUEUE_FORMAT, NULL };
	char name[64], label[PATH_MAX + 16];

	snprintf(label, sizeof(label), "%s %s", d->a.squeue, fmt == SQ_JSON ? "--json" : "-o");
	rc = run_command(fmt == SQ_JSON ? json_argv : text_argv, label, d->a.squeue_timeout, out,
			 err);
	*run_seconds += now_mono() - t0;
	if (rc)
		return -1;
	snprintf(name, sizeof(name), "squeue %s output", fmt == SQ_JSON ? "--json" : "-o");
	if (fmt == SQ_JSON)
		return slurm_jobs_parse_json(&d->jobs, out->s, out->len, name, err);
	return slurm_jobs_parse_text(&d->jobs, out->s, out->len, name, err);
}

/*
 * Asks squeue for the jobs.  In auto mode JSON comes first; when squeue refuses --json (old
 * Slurm) and the text format answers, the text format is used from then on.  Output that does
 * not parse is an error, never a reason to try the other format.
 */
static int get_jobs(struct filterd *d, struct poll_report *rep, struct fab_error *err)
{
	struct outbuf out = { .limit = (size_t)d->a.max_output << 20 };
	struct fab_error json_err;
	int ret;

	if (d->a.format == SQ_TEXT || (d->a.format == SQ_AUTO && d->text_works)) {
		rep->squeue_format = "text";
		ret = squeue_once(d, SQ_TEXT, &out, &rep->squeue_seconds, err);
	} else {
		rep->squeue_format = "json";
		ret = squeue_once(d, SQ_JSON, &out, &rep->squeue_seconds, &json_err);
		if (ret && d->a.format == SQ_AUTO && !out.len) {
			rep->squeue_format = "text";
			ret = squeue_once(d, SQ_TEXT, &out, &rep->squeue_seconds, err);
			if (!ret) {
				d->text_works = 1;
				logmsg(d,
				       "squeue --json failed (%s); using the text format from now on",
				       json_err.msg);
			} else {
				struct fab_error text_err = *err;

				fab_error_set(err, "%.200s; %.300s", json_err.msg, text_err.msg);
			}
		} else if (ret) {
			*err = json_err;
		}
	}
	free(out.s);
	return ret;
}

/* ------------------------------------------------------------------ topology */

/* The subnet file of --fabric: PATH itself, or PATH/opensm-subnet.lst for a directory. */
static int fabric_paths(const char *fabric, char *subnet, size_t size, int *is_lst)
{
	struct stat st;
	size_t n = strlen(fabric);

	if (!stat(fabric, &st) && S_ISDIR(st.st_mode)) {
		*is_lst = 1;
		return snprintf(subnet, size, "%s/opensm-subnet.lst", fabric) >= (int)size ? -1 : 0;
	}
	*is_lst = n >= 4 && !strcmp(fabric + n - 4, ".lst");
	return snprintf(subnet, size, "%s", fabric) >= (int)size ? -1 : 0;
}

static int load_fabric(const struct args *a, struct fabric *f, char *subnet, size_t size,
		       struct fab_error *err)
{
	struct netfile_opts no = { .lmc = 0, .op_vls = 8 };
	int is_lst;

	if (fabric_paths(a->fabric, subnet, size, &is_lst)) {
		fab_error_set(err, "%s: path too long", a->fabric);
		return -1;
	}
	fabric_init(f);
	if (is_lst ? fabric_load_subnet_lst(f, subnet, 0, 15, err)
		   : fabric_load_netfile(f, subnet, &no, err))
		return -1;
	return 0;
}

static int mtime_of(const char *path, struct timespec *ts)
{
	struct stat st;

	if (stat(path, &st))
		return -1;
	*ts = st.st_mtim;
	return 0;
}

static int topo_from_file(struct filterd *d, struct fab_error *err)
{
	char subnet[PATH_MAX];
	struct timespec mt = { 0, 0 };
	struct fabric f;
	int is_lst, ret;

	if (fabric_paths(d->a.fabric, subnet, sizeof(subnet), &is_lst) || mtime_of(subnet, &mt)) {
		fab_error_set(err, "%s: %s", subnet, strerror(errno));
		return -1;
	}
	if (d->have_topo && mt.tv_sec == d->fabric_mtime.tv_sec &&
	    mt.tv_nsec == d->fabric_mtime.tv_nsec)
		return 0;
	if (load_fabric(&d->a, &f, subnet, sizeof(subnet), err)) {
		fabric_free(&f);
		return -1;
	}
	topo_free(&d->topo);
	ret = topo_from_fabric(&d->topo, &f, d->a.match, err);
	fabric_free(&f);
	if (ret)
		return -1;
	d->fabric_mtime = mt;
	d->topo_source = "fabric file";
	if (!d->have_topo || d->polls)
		logmsg(d, "topology from %s: %u hosts, %u HCA ports, %u leaf switches", subnet,
		       topo_hosts(&d->topo), d->topo.ports, d->topo.nleaves);
	d->have_topo = 1;
	return 0;
}

/* The plugin's `topology` command; on failure the last topology stays in use. */
static int topo_from_socket(struct filterd *d, struct fab_error *err)
{
	struct ctl_reply reply;
	struct topo t;
	int fd, ret = -1;

	fd = ctl_connect(d->a.socket, d->a.socket_timeout, err);
	if (fd < 0)
		return -1;
	if (ctl_request(fd, "topology", &reply, err))
		goto out;
	if (!reply.ok) {
		fab_error_set(err, "%s: topology: %s", d->a.socket, reply.final);
		goto free_reply;
	}
	topo_init(&t);
	if (topo_from_ctl(&t, reply.data ? reply.data : "", d->a.socket, err)) {
		topo_free(&t);
		goto free_reply;
	}
	if (!d->have_topo || t.names.n != d->topo.names.n || t.nleaves != d->topo.nleaves)
		logmsg(d, "topology from %s: %u hosts, %u HCA ports, %u leaf switches", d->a.socket,
		       topo_hosts(&t), t.ports, t.nleaves);
	topo_free(&d->topo);
	d->topo = t;
	d->have_topo = 1;
	d->topo_source = "control socket";
	ret = 0;
free_reply:
	ctl_reply_free(&reply);
out:
	close(fd);
	return ret;
}

static int update_topology(struct filterd *d, struct fab_error *err)
{
	if (d->a.fabric)
		return topo_from_file(d, err);
	if (d->a.topology_conf) {
		if (d->have_topo)
			return 0;
		if (topo_from_slurm_conf(&d->topo, d->a.topology_conf, err))
			return -1;
		d->have_topo = 1;
		d->topo_source = "topology.conf";
		logmsg(d, "topology from %s: %u hosts, %u leaf switches", d->a.topology_conf,
		       topo_hosts(&d->topo), d->topo.nleaves);
		return 0;
	}
	if (!topo_from_socket(d, err))
		return 0;
	if (!d->have_topo)
		return -1;
	logmsg(d, "topology from the control socket failed (%s); using the last one", err->msg);
	return 0;
}

/* ------------------------------------------------------------------ predicted gain */

static int write_map_cb(const void *ctx, FILE *out)
{
	const struct filterd *d = ctx;

	return jobset_write_map(&d->js, &d->topo, out);
}

static int max_effective_efi(const struct fabric *f, const struct routing *r, const char *map,
			     uint64_t *max, struct fab_error *err)
{
	struct metrics_options mo;
	struct metrics_jobs mj;
	struct job_map jm;
	int ret = -1;

	job_map_init(&jm);
	metrics_options_default(&mo);
	memset(&mj, 0, sizeof(mj));
	if (job_map_parse(&jm, map, err) || job_map_bind(&jm, f, JOB_MATCH_FIRST_WORD, NULL, err))
		goto out;
	if (metrics_effective_efi(f, r, &jm, &mo, &mj)) {
		fab_error_set(err, "effective EFI: out of memory");
		goto out;
	}
	*max = mj.dist.max;
	ret = 0;
out:
	metrics_jobs_free(&mj);
	job_map_free(&jm);
	return ret;
}

/* The LFT dump beside the subnet file, unless --lfts names one. */
static void lfts_path(const struct args *a, const char *subnet, char *out, size_t size)
{
	const char *slash = strrchr(subnet, '/');
	int dir = slash ? (int)(slash - subnet) : 1;

	if (a->lfts) {
		snprintf(out, size, "%s", a->lfts);
		return;
	}
	snprintf(out, size, "%.*s/opensm-lfts.dump", dir, slash ? subnet : ".");
	if (access(out, R_OK))
		snprintf(out, size, "%.*s/opensm.fdbs", dir, slash ? subnet : ".");
}

/*
 * Predicted gain in percent: the maximum effective EFI of the current LFTs for the new job set
 * against that of the routing sar-dfsssp would compute for it.
 */
static int predicted_gain(struct filterd *d, double *gain, uint64_t *cur, uint64_t *pred,
			  struct fab_error *err)
{
	char subnet[PATH_MAX], lfts[PATH_MAX + 32], map[PATH_MAX + 32];
	struct sarnue_options o;
	struct engine_result res;
	struct routing r, p;
	struct fabric f;
	int ret = -1;

	snprintf(map, sizeof(map), "%s.candidate", d->a.job_map);
	fabric_init(&f);
	memset(&r, 0, sizeof(r));
	memset(&p, 0, sizeof(p));
	if (load_fabric(&d->a, &f, subnet, sizeof(subnet), err))
		goto out;
	lfts_path(&d->a, subnet, lfts, sizeof(lfts));
	if (write_file_atomic(map, write_map_cb, d)) {
		fab_error_set(err, "%s: %s", map, strerror(errno));
		goto out;
	}
	if (routing_init(&r, &f, "current") || routing_load_lfts(&r, &f, lfts, err) ||
	    max_effective_efi(&f, &r, map, cur, err))
		goto out;
	options_defaults(&o);
	if (snprintf(o.job_map, sizeof(o.job_map), "%s", map) >= (int)sizeof(o.job_map)) {
		fab_error_set(err, "%s: path too long", map);
		goto out;
	}
	o.verify = 0;
	if (routing_init(&p, &f, "sar-dfsssp") || engine_run("sar-dfsssp", &f, &o, &p, &res, err) ||
	    max_effective_efi(&f, &p, map, pred, err))
		goto out;
	*gain = *cur ? 100.0 * ((double)*cur - (double)*pred) / (double)*cur : 0;
	ret = 0;
out:
	unlink(map);
	routing_free(&r);
	routing_free(&p);
	fabric_free(&f);
	return ret;
}

/* ------------------------------------------------------------------ handoff */

static void print_dry_run(struct filterd *d)
{
	printf("# sarnue-filterd --dry-run: would write %s:\n", d->a.job_map);
	jobset_write_map(&d->js, &d->topo, stdout);
	printf("# and send to %s: jobs %s\n", d->a.socket, d->a.job_map);
	fflush(stdout);
}

/*
 * Writes the map and sends `jobs FILE` with the open file attached (the plugin reads only what
 * its client passes); returns 0 when the plugin accepted it.
 */
static int handoff(struct filterd *d, struct poll_report *rep)
{
	char cmd[PATH_MAX + 8];
	struct ctl_reply reply;
	struct fab_error err;
	int fd, map_fd, ret = -1;

	if (d->a.dry_run) {
		print_dry_run(d);
		snprintf(rep->handoff, sizeof(rep->handoff), "dry run: printed, not sent");
		return 0;
	}
	if (write_file_atomic(d->a.job_map, write_map_cb, d)) {
		snprintf(rep->handoff, sizeof(rep->handoff),
			 "cannot write %s: %s; retrying next poll", d->a.job_map, strerror(errno));
		return -1;
	}
	snprintf(cmd, sizeof(cmd), "jobs %s", d->a.job_map);
	map_fd = open(d->a.job_map, O_RDONLY | O_CLOEXEC);
	if (map_fd < 0) {
		snprintf(rep->handoff, sizeof(rep->handoff),
			 "cannot reopen %s: %s; retrying next poll", d->a.job_map, strerror(errno));
		return -1;
	}
	fd = ctl_connect(d->a.socket, d->a.socket_timeout, &err);
	if (fd < 0) {
		snprintf(rep->handoff, sizeof(rep->handoff),
			 "control socket unreachable (%s); job map kept, retrying next poll",
			 err.msg);
		close(map_fd);
		return -1;
	}
	if (ctl_request_fd(fd, cmd, map_fd, &reply, &err)) {
		snprintf(rep->handoff, sizeof(rep->handoff), "%s; job map kept, retrying next poll",
			 err.msg);
	} else {
		snprintf(rep->handoff, sizeof(rep->handoff), "%s: %s%s",
			 reply.ok ? "sent" : "plugin refused", reply.final,
			 reply.ok ? "" : "; retrying next poll");
		ret = reply.ok ? 0 : -1;
		ctl_reply_free(&reply);
	}
	close(fd);
	close(map_fd);
	return ret;
}

/* ------------------------------------------------------------------ one poll */

/* Logs the hostnames the fabric does not know when they differ from the last poll's. */
static void report_unknown(struct filterd *d)
{
	char names[1024];
	size_t pos = 0;
	uint32_t dummy_a, dummy_r, i;

	keys_diff(&d->unknown, &d->js.unknown, &dummy_a, &dummy_r);
	if (!dummy_a && !dummy_r)
		return;
	names[0] = '\0';
	for (i = 0; i < d->js.unknown.n && i < UNKNOWN_LISTED; i++)
		pos += (size_t)snprintf(names + pos, sizeof(names) - pos, "%s%s", i ? " " : "",
					hostlist_get(&d->js.unknown, i));
	if (d->js.unknown.n)
		logmsg(d, "%u hostname(s) of running jobs not in the fabric (%s): %s%s",
		       d->js.unknown.n, d->topo_source, names,
		       d->js.unknown.n > UNKNOWN_LISTED ? " ..." : "");
	else
		logmsg(d, "every hostname of the running jobs is in the fabric again");
	hostlist_copy(&d->unknown, &d->js.unknown);
}

/* Decides and hands a changed job map over; -1 when the plugin could not be told. */
static int decide(struct filterd *d, struct poll_report *rep, double now)
{
	struct decide_in in = { &d->installed, &d->js.keys, now, d->last_reroute,
				d->a.min_interval };
	struct decide_out out;
	struct fab_error err;
	uint64_t cur = 0, pred = 0;
	double gain = 0;

	filter_decide(&in, &out);
	rep->added = out.added;
	rep->removed = out.removed;
	if (out.decision == DECIDE_NO_CHANGE) {
		rep->decision = "no change";
		snprintf(rep->reason, sizeof(rep->reason), "same %u multi-switch node set(s)",
			 d->js.keys.n);
		return 0;
	}
	if (out.decision == DECIDE_DEFERRED) {
		rep->decision = "deferred";
		snprintf(
			rep->reason, sizeof(rep->reason),
			"node sets changed (+%u -%u) but the last reroute was %.0f s ago (minimum %.0f s, %.0f s left)",
			out.added, out.removed, now - d->last_reroute, d->a.min_interval, out.wait);
		return 0;
	}
	if (d->a.min_gain > 0) {
		if (predicted_gain(d, &gain, &cur, &pred, &err)) {
			rep->decision = "error";
			snprintf(rep->reason, sizeof(rep->reason), "predicting the gain: %s",
				 err.msg);
			return 0;
		}
		if (gain < d->a.min_gain) {
			rep->decision = "low gain";
			snprintf(
				rep->reason, sizeof(rep->reason),
				"node sets changed (+%u -%u) but max effective EFI %llu -> %llu predicted, gain %.1f%% < %.1f%%",
				out.added, out.removed, (unsigned long long)cur,
				(unsigned long long)pred, gain, d->a.min_gain);
			return 0;
		}
	}
	rep->decision = "reroute";
	snprintf(rep->reason, sizeof(rep->reason), "multi-switch node sets changed (+%u -%u)",
		 out.added, out.removed);
	if (d->a.min_gain > 0)
		snprintf(rep->reason + strlen(rep->reason),
			 sizeof(rep->reason) - strlen(rep->reason),
			 ", predicted gain %.1f%% (max effective EFI %llu -> %llu)", gain,
			 (unsigned long long)cur, (unsigned long long)pred);
	if (!handoff(d, rep)) {
		hostlist_copy(&d->installed, &d->js.keys);
		d->last_reroute = now;
		d->reroutes++;
		return 0;
	}
	rep->decision = "reroute pending";
	return -1;
}

static int print_status(const void *ctx, FILE *out)
{
	const struct poll_report *r = ctx;
	char stamp[32];

	utc_stamp(stamp, sizeof(stamp));
	fprintf(out,
		"{\"time\":\"%s\",\"poll\":%lu,\"ok\":%s,\"seconds\":%.6f,\"squeue_seconds\":%.6f,"
		"\"squeue_format\":",
		stamp, r->poll, r->ok ? "true" : "false", r->seconds, r->squeue_seconds);
	json_write_string(out, r->squeue_format ? r->squeue_format : "");
	fprintf(out,
		",\"jobs\":%u,\"running\":%u,\"short\":%u,\"excluded\":%u,\"no_nodes\":%u,"
		"\"single_switch\":%u,\"multi_switch\":%u,\"multi_switch_hosts\":%u,"
		"\"unknown_hosts\":%u,\"added\":%u,\"removed\":%u,\"decision\":",
		r->st.jobs, r->st.running, r->st.short_jobs, r->st.excluded, r->st.no_nodes,
		r->st.single_switch, r->st.multi_switch, r->st.multi_hosts, r->unknown, r->added,
		r->removed);
	json_write_string(out, r->decision);
	fputs(",\"reason\":", out);
	json_write_string(out, r->reason);
	fputs(",\"handoff\":", out);
	json_write_string(out, r->handoff);
	fputs("}\n", out);
	return ferror(out) ? -1 : 0;
}

static void report(struct filterd *d, struct poll_report *r)
{
	if (r->ok)
		logmsg(d,
		       "poll %lu: %.3f s (squeue %.3f s, %s): %u jobs, %u running, %u short, %u excluded, %u single-switch, %u multi-switch on %u hosts%s; %s: %s%s%s",
		       r->poll, r->seconds, r->squeue_seconds, r->squeue_format, r->st.jobs,
		       r->st.running, r->st.short_jobs, r->st.excluded, r->st.single_switch,
		       r->st.multi_switch, r->st.multi_hosts, r->unknown ? ", unknown hosts" : "",
		       r->decision, r->reason, r->handoff[0] ? "; " : "", r->handoff);
	else
		logmsg(d, "poll %lu: %.3f s: %s: %s; nothing changes", r->poll, r->seconds,
		       r->decision, r->reason);
	if (d->a.json)
		print_status(r, stdout), fflush(stdout);
	if (d->a.status && write_file_atomic(d->a.status, print_status, r))
		logmsg(d, "cannot write status %s: %s", d->a.status, strerror(errno));
}

static int poll_once(struct filterd *d)
{
	struct poll_report rep;
	struct fab_error err;
	double t0 = now_mono();
	int rc;

	memset(&rep, 0, sizeof(rep));
	rep.poll = ++d->polls;
	rep.decision = "error";
	if (get_jobs(d, &rep, &err) || update_topology(d, &err) ||
	    jobset_build(&d->js, &d->jobs, &d->topo, &d->a.filter, &err)) {
		snprintf(rep.reason, sizeof(rep.reason), "%s", err.msg);
		rep.seconds = now_mono() - t0;
		report(d, &rep);
		return -1;
	}
	rep.ok = 1;
	rep.st = d->js.st;
	rep.unknown = d->js.unknown.n;
	report_unknown(d);
	rc = decide(d, &rep, now_mono());
	rep.seconds = now_mono() - t0;
	report(d, &rep);
	return rc;
}

/* ------------------------------------------------------------------ start-up and main loop */

/* The job map the daemon wrote last is what the plugin routes for, as far as it knows. */
static void load_installed(struct filterd *d)
{
	struct job_map jm;
	struct fab_error err;

	if (access(d->a.job_map, F_OK))
		return;
	job_map_init(&jm);
	if (job_map_parse(&jm, d->a.job_map, &err) ||
	    jobset_keys_from_map(&jm, &d->installed, &err))
		logmsg(d, "ignoring the existing job map: %s", err.msg);
	else
		logmsg(d, "existing job map %s: %u multi-switch node set(s), taken as installed",
		       d->a.job_map, d->installed.n);
	job_map_free(&jm);
}

static int daemonize(struct filterd *d)
{
	pid_t pid = fork();
	int fd;

	if (pid < 0)
		return -1;
	if (pid > 0)
		_exit(0);
	if (setsid() < 0 || chdir("/"))
		return -1;
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		if (!d->a.log)
			dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	if (!d->a.log) {
		openlog("sarnue-filterd", LOG_PID, LOG_DAEMON);
		d->syslog = 1;
	}
	return 0;
}

static int write_pidfile(const char *path)
{
	FILE *fp = fopen(path, "w");

	if (!fp)
		return -1;
	fprintf(fp, "%ld\n", (long)getpid());
	return fclose(fp);
}

/* Waits up to seconds for a signal; returns it, or 0 when the time passed. */
static int wait_signal(const sigset_t *set, double seconds)
{
	struct timespec ts;
	int sig;

	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	do {
		sig = sigtimedwait(set, NULL, &ts);
	} while (sig < 0 && errno == EINTR);
	return sig < 0 ? 0 : sig;
}

static int run(struct filterd *d)
{
	sigset_t set;
	double next;

	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (d->a.once)
		return poll_once(d) ? 1 : 0;
	logmsg(d,
	       "started: interval %.0f s, min reroute interval %.0f s, min time %u min, job map %s, %s%s",
	       d->a.interval, d->a.min_interval, d->a.filter.min_time_limit, d->a.job_map,
	       d->a.dry_run ? "dry run" : "socket ", d->a.dry_run ? "" : d->a.socket);
	for (;;) {
		int sig;

		poll_once(d);
		next = now_mono() + d->a.interval;
		while ((sig = wait_signal(&set, fmax(0, next - now_mono()))) == 0 &&
		       now_mono() < next)
			;
		if (sig == SIGTERM || sig == SIGINT) {
			logmsg(d, "stopping on signal %d after %lu polls, %lu reroutes", sig,
			       d->polls, d->reroutes);
			return 0;
		}
		if (sig == SIGHUP)
			logmsg(d, "SIGHUP: polling now");
	}
}

static void filterd_free(struct filterd *d)
{
	topo_free(&d->topo);
	slurm_jobs_free(&d->jobs);
	jobset_free(&d->js);
	hostlist_free(&d->installed);
	hostlist_free(&d->unknown);
	free(d->a.exclude);
	free(d->a.job_map);
	if (d->log && d->log != stderr)
		fclose(d->log);
}

int main(int argc, char **argv)
{
	struct filterd d;
	struct fab_error err;
	int rc;

	memset(&d, 0, sizeof(d));
	d.last_reroute = -1;
	d.log = stderr;
	rc = parse_args(argc, argv, &d.a);
	if (rc) {
		filterd_free(&d);
		return rc > 0 ? 0 : 2;
	}
	if (d.a.log && !(d.log = fopen(d.a.log, "a"))) {
		fprintf(stderr, "sarnue-filterd: %s: %s\n", d.a.log, strerror(errno));
		d.log = NULL;
		filterd_free(&d);
		return 3;
	}
	/* A bad fabric file is an operator error: say so before detaching. */
	if ((d.a.fabric || d.a.topology_conf) && update_topology(&d, &err)) {
		fprintf(stderr, "sarnue-filterd: %s\n", err.msg);
		filterd_free(&d);
		return 3;
	}
	if (d.a.daemon && daemonize(&d)) {
		fprintf(stderr, "sarnue-filterd: cannot detach: %s\n", strerror(errno));
		filterd_free(&d);
		return 1;
	}
	if (d.a.pidfile && write_pidfile(d.a.pidfile))
		logmsg(&d, "cannot write pid file %s: %s", d.a.pidfile, strerror(errno));
	load_installed(&d);
	rc = run(&d);
	if (d.a.pidfile)
		unlink(d.a.pidfile);
	filterd_free(&d);
	return rc;
}
