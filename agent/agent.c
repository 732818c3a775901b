/*
 * agent.c - sarnue-agent, the host daemon of the five-phase update, built on libsarnue-client.
 *
 * It subscribes the host's port to UnPath/RePath reports and runs a configurable command for
 * each (a file system client or service moves its reliable connections there), then
 * acknowledges when the command succeeded.  Commands run one at a time, in arrival order,
 * while the agent keeps answering repeated reports.  Everything mutable lives in struct
 * agent; signals are blocked and collected with sigtimedwait, so no handler touches state.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/json.h"
#include "lib/numbers.h"
#include "lib/usage.h"
#include "client/sarnue-client.h"

extern char **environ;

#define PROG "sarnue-agent"
#define MAX_JOBS 16
#define MAX_TRAPS 16
#define POLL_MS 200

struct job {
	struct sarnue_report report;
	pid_t pid;	/* 0: not started */
	double started; /* monotonic seconds */
	int term_sent;
};

struct agent {
	/* options */
	const char *ca;
	int port;
	const char *exec;
	double exec_timeout;
	int no_paths;
	uint16_t traps[MAX_TRAPS];
	unsigned ntraps;
	int daemon;
	const char *pidfile;
	const char *log_file;
	const char *json_file;
	double resubscribe;
	double retry;
	int verbose;
	unsigned mad_timeout_ms;
	/* state */
	FILE *log;
	struct sarnue_client *client;
	struct sarnue_port_info port_info;
	int subscribed;
	double next_subscribe;
	struct job jobs[MAX_JOBS];
	unsigned njobs;
	unsigned long commands_ok, commands_failed;
	char last[160];
	const char *state;
};

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void alog(struct agent *a, const char *level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* One line per event: "sarnue-agent: TIME LEVEL message", errors with level ERR. */
static void alog(struct agent *a, const char *level, const char *fmt, ...)
{
	struct timeval tv;
	struct tm tm;
	char ts[32];
	va_list ap;

	gettimeofday(&tv, NULL);
	localtime_r(&tv.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(a->log, "sarnue-agent: %s.%03ld %s ", ts, (long)tv.tv_usec / 1000, level);
	va_start(ap, fmt);
	vfprintf(a->log, fmt, ap);
	va_end(ap);
	fputc('\n', a->log);
	fflush(a->log);
}

static void client_log(void *arg, enum sarnue_log_level level, const char *msg)
{
	struct agent *a = arg;
	static const char *const names[] = { "ERR", "WRN", "info", "debug" };

	if (level == SARNUE_LOG_DEBUG && !a->verbose)
		return;
	alog(a, names[level], "%s", msg);
}

static void usage(FILE *f)
{
	fputs("NAME\n"
	      "    sarnue-agent - host agent of sarnue's five-phase routing update\n"
	      "\n"
	      "SYNOPSIS\n"
	      "    sarnue-agent [OPTIONS]\n"
	      "\n"
	      "DESCRIPTION\n"
	      "    Subscribes this host's InfiniBand port to the UnPath (trap 68) and RePath\n"
	      "    (trap 69) reports of the subnet manager (OpenSM with the sarnue plugin), runs a\n"
	      "    command for each report and, when the command succeeds, acknowledges with a\n"
	      "    trap 144 so that the update can proceed.\n"
	      "\n"
	      "    UnPath means: move reliable connections from the peers' base LIDs to their high\n"
	      "    LIDs (base LID + 1, the escape routing) now. RePath means: the new base-LID\n"
	      "    routes are in place, move back. Repeated reports (lost MADs, retries) are\n"
	      "    answered again without running the command twice.\n"
	      "\n"
	      "OPTIONS\n"
	      "    -C, --ca CA            HCA to use (default: the first one)\n"
	      "    -P, --port PORT        port number (default: the first active port)\n"
	      "    -e, --exec COMMAND     command run by /bin/sh -c for each report (default: none,\n"
	      "                           every report is acknowledged at once)\n"
	      "    -t, --exec-timeout S   seconds a command may run before it is stopped and counts\n"
	      "                           as failed (default 60)\n"
	      "        --trap N           also subscribe to generic trap N (repeatable); its reports\n"
	      "                           run the command with SARNUE_KIND=other and are never\n"
	      "                           acknowledged\n"
	      "        --no-paths         do not subscribe to traps 68 and 69 (with --trap only)\n"
	      "    -f, --foreground       stay in the foreground (the default)\n"
	      "    -d, --daemon           detach from the terminal and run in the background\n"
	      "    -p, --pidfile FILE     write the process ID to FILE\n"
	      "    -l, --log FILE         append log lines to FILE (default: standard error)\n"
	      "    -j, --json FILE        keep a JSON status object in FILE, rewritten after every\n"
	      "                           event\n"
	      "        --resubscribe S    renew the subscriptions every S seconds, so that they\n"
	      "                           survive a restart of the subnet manager (default 60, 0:\n"
	      "                           never)\n"
	      "        --retry S          seconds between attempts while subscribing fails (default\n"
	      "                           5)\n"
	      "        --mad-timeout MS   timeout of one SA request in milliseconds (default 1000)\n"
	      "    -v, --verbose          also log debug lines\n"
	      "    -h, --help             show this help\n"
	      "    -V, --version          show the version\n"
	      "\n"
	      "ENVIRONMENT OF THE COMMAND\n"
	      "    SARNUE_KIND            unpath, repath or other\n"
	      "    SARNUE_SEQ             update sequence number (the same for the UnPath and\n"
	      "                           RePath of one update)\n"
	      "    SARNUE_TRAP            trap number (68, 69, or the --trap number)\n"
	      "    SARNUE_LMC             LMC of the fabric (1: the high LID of base LID b is b + 1)\n"
	      "    SARNUE_LIDS            affected base LIDs as ranges, e.g. \"1-49151\" or\n"
	      "                           \"3-3,9-12\"; \"all\" when the report names none\n"
	      "    SARNUE_ISSUER_LID      LID of the subnet manager that sent the report\n"
	      "    SARNUE_PORT_LID        this port's base LID\n"
	      "    SARNUE_PORT_GUID       this port's GUID (0x...)\n"
	      "\n"
	      "FAILURE POLICY\n"
	      "    A command that exits non-zero, is killed by a signal or overruns --exec-timeout\n"
	      "    is logged and its report is not acknowledged. Repeats of that report are\n"
	      "    answered but the command is not run again: the subnet manager's timeout policy\n"
	      "    decides (abort the update and keep the old routes, or proceed without this\n"
	      "    host).\n"
	      "\n"
	      "LOG\n"
	      "    Log lines start with \"sarnue-agent: \", then the time and a level (info, WRN,\n"
	      "    ERR, debug).  SIGTERM and SIGINT unsubscribe and stop the agent; SIGHUP renews\n"
	      "    the subscriptions.\n"
	      "\n"
	      "NOTES\n"
	      "    Needs read/write access to /dev/infiniband/umad* (root). Under ibsim, run it\n"
	      "    with LD_PRELOAD=libumad2sim.so, SIM_HOST=<node> and SIM_SET_ISSM=1 (ibsim\n"
	      "    delivers unsolicited MADs only to such clients; OpenSM then needs\n"
	      "    ignore_other_sm TRUE).\n"
	      "\n"
	      "EXIT STATUS\n"
	      "    0 after a signal, 1 on a port or setup error, 2 on usage errors.\n",
	      f);
}

static int parse_seconds(const char *opt, const char *s, double min, double max, double *out)
{
	if (num_parse_real(s, min, max, out)) {
		usage_error(PROG, "%s: '%s' is not a number of seconds in %g..%g", opt, s, min,
			    max);
		return -1;
	}
	return 0;
}

static int parse_whole(const char *opt, const char *s, unsigned min, unsigned max, unsigned *out)
{
	if (num_parse_uint(s, min, max, out)) {
		usage_error(PROG, "%s: '%s' is not a whole number in %u..%u", opt, s, min, max);
		return -1;
	}
	return 0;
}

enum {
	OPT_TRAP = 256,
	OPT_NO_PATHS,
	OPT_RESUB,
	OPT_RETRY,
	OPT_MAD_TIMEOUT
};

static int parse_args(struct agent *a, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "ca", required_argument, NULL, 'C' },
		{ "port", required_argument, NULL, 'P' },
		{ "exec", required_argument, NULL, 'e' },
		{ "exec-timeout", required_argument, NULL, 't' },
		{ "trap", required_argument, NULL, OPT_TRAP },
		{ "no-paths", no_argument, NULL, OPT_NO_PATHS },
		{ "foreground", no_argument, NULL, 'f' },
		{ "daemon", no_argument, NULL, 'd' },
		{ "pidfile", required_argument, NULL, 'p' },
		/* The old spelling, hidden from --help, so that existing scripts keep working. */
		{ "pid-file", required_argument, NULL, 'p' },
		{ "log", required_argument, NULL, 'l' },
		{ "json", required_argument, NULL, 'j' },
		{ "resubscribe", required_argument, NULL, OPT_RESUB },
		{ "retry", required_argument, NULL, OPT_RETRY },
		{ "mad-timeout", required_argument, NULL, OPT_MAD_TIMEOUT },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned v;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":C:P:e:t:fdp:l:j:vhV", opts, NULL)) != -1) {
		switch (c) {
		case 'C':
			a->ca = optarg;
			break;
		case 'P':
			if (parse_whole("--port", optarg, 1, 254, &v))
				return -1;
			a->port = (int)v;
			break;
		case 'e':
			a->exec = optarg;
			break;
		case 't':
			if (parse_seconds("--exec-timeout", optarg, 0.1, 86400, &a->exec_timeout))
				return -1;
			break;
		case OPT_TRAP:
			if (parse_whole("--trap", optarg, 0, 0xFFFF, &v))
				return -1;
			if (a->ntraps == MAX_TRAPS) {
				usage_error(PROG, "--trap: at most %d traps", MAX_TRAPS);
				return -1;
			}
			a->traps[a->ntraps++] = (uint16_t)v;
			break;
		case OPT_NO_PATHS:
			a->no_paths = 1;
			break;
		case 'f':
			a->daemon = 0;
			break;
		case 'd':
			a->daemon = 1;
			break;
		case 'p':
			a->pidfile = optarg;
			break;
		case 'l':
			a->log_file = optarg;
			break;
		case 'j':
			a->json_file = optarg;
			break;
		case OPT_RESUB:
			if (parse_seconds("--resubscribe", optarg, 0, 86400, &a->resubscribe))
				return -1;
			break;
		case OPT_RETRY:
			if (parse_seconds("--retry", optarg, 0.1, 3600, &a->retry))
				return -1;
			break;
		case OPT_MAD_TIMEOUT:
			if (parse_whole("--mad-timeout", optarg, 10, 60000, &a->mad_timeout_ms))
				return -1;
			break;
		case 'v':
			a->verbose = 1;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("sarnue-agent %s\n", PACKAGE_VERSION);
			exit(0);
		default:
			usage_getopt_error(PROG, c, argv);
			return -1;
		}
	}
	if (optind < argc) {
		usage_error(PROG, "unexpected argument '%s'", argv[optind]);
		return -1;
	}
	if (a->no_paths && !a->ntraps) {
		usage_error(PROG, "--no-paths leaves nothing to subscribe to; add --trap");
		return -1;
	}
	return 0;
}

/* Rewrites the status file atomically (write a temporary file, rename). */
static void write_json(struct agent *a)
{
	struct sarnue_client_stats st = { 0 };
	char tmp[4096];
	unsigned i;
	FILE *f;

	if (!a->json_file)
		return;
	if (a->client)
		sarnue_client_get_stats(a->client, &st);
	snprintf(tmp, sizeof(tmp), "%s.tmp", a->json_file);
	f = fopen(tmp, "w");
	if (!f) {
		alog(a, "ERR", "cannot write %s: %s", tmp, strerror(errno));
		return;
	}
	fprintf(f, "{\"pid\": %ld, \"state\": \"%s\", \"ca\": ", (long)getpid(), a->state);
	json_write_string(f, a->port_info.ca);
	fprintf(f,
		", \"port\": %d, \"port_guid\": \"0x%016llx\", \"lid\": %u, \"sm_lid\": %u, "
		"\"lmc\": %u, \"subscribed\": %s, \"traps\": [",
		a->port_info.port, (unsigned long long)a->port_info.port_guid, a->port_info.lid,
		a->port_info.sm_lid, a->port_info.lmc, a->subscribed ? "true" : "false");
	if (!a->no_paths)
		fprintf(f, "68, 69%s", a->ntraps ? ", " : "");
	for (i = 0; i < a->ntraps; i++)
		fprintf(f, "%s%u", i ? ", " : "", a->traps[i]);
	fprintf(f,
		"], \"reports\": %lu, \"handled\": %lu, \"repeats\": %lu, \"malformed\": %lu, "
		"\"acks\": %lu, \"handler_failures\": %lu, \"commands_ok\": %lu, "
		"\"commands_failed\": %lu, \"queued\": %u, \"last\": ",
		st.reports, st.handled, st.repeats, st.malformed, st.acks, st.handler_failures,
		a->commands_ok, a->commands_failed, a->njobs);
	json_write_string(f, a->last);
	fprintf(f, "}\n");
	if (fclose(f) || rename(tmp, a->json_file))
		alog(a, "ERR", "cannot write %s: %s", a->json_file, strerror(errno));
}

static void lids_string(const struct sarnue_report *r, char *buf, size_t len)
{
	size_t off = 0;
	unsigned i;

	if (!r->nranges) {
		snprintf(buf, len, "all");
		return;
	}
	buf[0] = '\0';
	for (i = 0; i < r->nranges && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%u-%u", i ? "," : "", r->ranges[i].first,
				r->ranges[i].last);
}

static int start_job(struct agent *a, struct job *j)
{
	const struct sarnue_report *r = &j->report;
	char lids[128], vars[8][160], **env;
	char *argv[] = { "/bin/sh", "-c", (char *)a->exec, NULL };
	posix_spawnattr_t attr;
	sigset_t none, deflt;
	size_t n = 0, i;
	int rc;

	lids_string(r, lids, sizeof(lids));
	snprintf(vars[0], sizeof(vars[0]), "SARNUE_KIND=%s", sarnue_kind_name(r->kind));
	snprintf(vars[1], sizeof(vars[1]), "SARNUE_SEQ=%u", r->seq);
	snprintf(vars[2], sizeof(vars[2]), "SARNUE_TRAP=%u", r->trap_num);
	snprintf(vars[3], sizeof(vars[3]), "SARNUE_LMC=%u", r->lmc);
	snprintf(vars[4], sizeof(vars[4]), "SARNUE_LIDS=%s", lids);
	snprintf(vars[5], sizeof(vars[5]), "SARNUE_ISSUER_LID=%u", r->issuer_lid);
	snprintf(vars[6], sizeof(vars[6]), "SARNUE_PORT_LID=%u", a->port_info.lid);
	snprintf(vars[7], sizeof(vars[7]), "SARNUE_PORT_GUID=0x%016llx",
		 (unsigned long long)a->port_info.port_guid);
	while (environ[n])
		n++;
	env = calloc(n + 9, sizeof(*env));
	if (!env)
		return -1;
	for (i = 0; i < n; i++)
		if (strncmp(environ[i], "SARNUE_", 7))
			env[i] = environ[i];
		else
			env[i] = "SARNUE_IGNORED=";
	for (i = 0; i < 8; i++)
		env[n + i] = vars[i];
	/* The agent blocks its signals; the command gets a clean mask and default handlers. */
	sigemptyset(&none);
	sigemptyset(&deflt);
	sigaddset(&deflt, SIGTERM);
	sigaddset(&deflt, SIGINT);
	sigaddset(&deflt, SIGHUP);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &deflt);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
						POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setpgroup(&attr, 0);
	rc = posix_spawn(&j->pid, "/bin/sh", NULL, &attr, argv, env);
	posix_spawnattr_destroy(&attr);
	free(env);
	if (rc) {
		alog(a, "ERR", "cannot start the command for %s seq %u: %s",
		     sarnue_kind_name(r->kind), r->seq, strerror(rc));
		j->pid = 0;
		return -1;
	}
	j->started = mono();
	alog(a, "info", "running command for %s seq %u (pid %ld, LIDs %s)",
	     sarnue_kind_name(r->kind), r->seq, (long)j->pid, lids);
	return 0;
}

static void job_done(struct agent *a, int ok, const char *why)
{
	struct job *j = &a->jobs[0];
	const struct sarnue_report *r = &j->report;

	if (ok)
		a->commands_ok++;
	else
		a->commands_failed++;
	alog(a, ok ? "info" : "ERR", "command for %s seq %u %s", sarnue_kind_name(r->kind), r->seq,
	     why);
	snprintf(a->last, sizeof(a->last), "%s %u %s", sarnue_kind_name(r->kind), r->seq,
		 ok ? "ok" : "failed");
	if (r->kind != SARNUE_REPORT_OTHER)
		sarnue_client_complete(a->client, r->kind, r->seq, ok);
	a->njobs--;
	memmove(a->jobs, a->jobs + 1, a->njobs * sizeof(a->jobs[0]));
	write_json(a);
}

/* Reaps the running command, stops it on overrun, starts the next one. */
static void run_jobs(struct agent *a)
{
	while (a->njobs) {
		struct job *j = &a->jobs[0];
		char why[64];
		int status;
		pid_t rc;

		if (!j->pid) {
			if (start_job(a, j)) {
				job_done(a, 0, "could not be started");
				continue;
			}
		}
		rc = waitpid(j->pid, &status, WNOHANG);
		if (rc == j->pid) {
			if (WIFEXITED(status) && !WEXITSTATUS(status))
				job_done(a, 1, "succeeded");
			else {
				if (WIFEXITED(status))
					snprintf(why, sizeof(why), "failed with exit status %d",
						 WEXITSTATUS(status));
				else
					snprintf(why, sizeof(why), "was killed by signal %d",
						 WTERMSIG(status));
				job_done(a, 0, why);
			}
			continue;
		}
		if (mono() - j->started > a->exec_timeout + (j->term_sent ? 5 : 0)) {
			alog(a, "WRN", "command for seq %u overran %.1f s, sending %s",
			     j->report.seq, a->exec_timeout, j->term_sent ? "SIGKILL" : "SIGTERM");
			kill(-j->pid, j->term_sent ? SIGKILL : SIGTERM);
			j->term_sent = 1;
		}
		return;
	}
}

static int on_report(const struct sarnue_report *r, void *arg)
{
	struct agent *a = arg;

	if (!a->exec) {
		snprintf(a->last, sizeof(a->last), "%s %u ok", sarnue_kind_name(r->kind), r->seq);
		return SARNUE_HANDLER_DONE;
	}
	if (a->njobs == MAX_JOBS) {
		alog(a, "ERR", "%u commands queued, %s seq %u dropped", MAX_JOBS,
		     sarnue_kind_name(r->kind), r->seq);
		return -1;
	}
	memset(&a->jobs[a->njobs], 0, sizeof(a->jobs[0]));
	a->jobs[a->njobs++].report = *r;
	return SARNUE_HANDLER_LATER;
}

static void subscribe(struct agent *a)
{
	char err[512];
	unsigned i;
	int ok = 1;

	if (sarnue_client_port(a->client, &a->port_info, err, sizeof(err))) {
		alog(a, "ERR", "%s", err);
		ok = 0;
	}
	if (ok && !a->no_paths && sarnue_client_subscribe_paths(a->client, err, sizeof(err))) {
		alog(a, "ERR", "%s", err);
		ok = 0;
	}
	for (i = 0; ok && i < a->ntraps; i++)
		if (sarnue_client_subscribe(a->client, a->traps[i], err, sizeof(err))) {
			alog(a, "ERR", "%s", err);
			ok = 0;
		}
	if (ok && !a->subscribed)
		alog(a, "info", "subscribed on %s port %d (LID %u, SM LID %u), waiting for reports",
		     a->port_info.ca, a->port_info.port, a->port_info.lid, a->port_info.sm_lid);
	else if (!ok)
		alog(a, "WRN", "subscribing failed, next attempt in %.1f s", a->retry);
	a->subscribed = ok;
	a->next_subscribe = mono() + (ok ? (a->resubscribe > 0 ? a->resubscribe : 1e18) : a->retry);
	write_json(a);
}

static int daemonize(struct agent *a)
{
	pid_t pid = fork();

	if (pid < 0) {
		alog(a, "ERR", "fork: %s", strerror(errno));
		return -1;
	}
	if (pid > 0)
		_exit(0);
	setsid();
	if (chdir("/"))
		return -1;
	int fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		if (a->log != stderr)
			dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	return 0;
}

static int write_pid(struct agent *a)
{
	FILE *f;

	if (!a->pidfile)
		return 0;
	f = fopen(a->pidfile, "w");
	if (!f || fprintf(f, "%ld\n", (long)getpid()) < 0 || fclose(f)) {
		alog(a, "ERR", "cannot write pid file %s: %s", a->pidfile, strerror(errno));
		return -1;
	}
	return 0;
}

/* Returns the signal pending, or 0. */
static int pending_signal(const sigset_t *set)
{
	struct timespec zero = { 0, 0 };
	int sig = sigtimedwait(set, NULL, &zero);

	return sig > 0 ? sig : 0;
}

static int serve(struct agent *a, const sigset_t *sigs)
{
	char err[512];
	int sig;

	for (;;) {
		if (mono() >= a->next_subscribe)
			subscribe(a);
		if (sarnue_client_poll(a->client, POLL_MS, on_report, a, err, sizeof(err)) < 0) {
			alog(a, "ERR", "%s", err);
			return 1;
		}
		run_jobs(a);
		write_json(a);
		sig = pending_signal(sigs);
		if (sig == SIGHUP) {
			alog(a, "info", "SIGHUP: renewing the subscriptions");
			a->next_subscribe = 0;
		} else if (sig) {
			alog(a, "info", "signal %d: unsubscribing and stopping", sig);
			return 0;
		}
	}
}

int main(int argc, char **argv)
{
	struct agent a = { .port = 0,
			   .exec_timeout = 60,
			   .resubscribe = 60,
			   .retry = 5,
			   .mad_timeout_ms = 1000,
			   .state = "starting",
			   .log = stderr };
	struct sarnue_client_config cfg = { 0 };
	char err[512];
	sigset_t sigs;
	int rc = 1;

	if (parse_args(&a, argc, argv))
		return 2;
	if (a.log_file) {
		a.log = fopen(a.log_file, "a");
		if (!a.log) {
			fprintf(stderr, "sarnue-agent: cannot open log %s: %s\n", a.log_file,
				strerror(errno));
			return 1;
		}
	}
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	if (a.daemon && daemonize(&a))
		goto out;
	if (write_pid(&a))
		goto out;
	cfg.ca = a.ca;
	cfg.port = a.port;
	cfg.timeout_ms = a.mad_timeout_ms;
	cfg.log = client_log;
	cfg.log_arg = &a;
	alog(&a, "info", "sarnue-agent %s starting (pid %ld, command %s)", PACKAGE_VERSION,
	     (long)getpid(), a.exec ? a.exec : "none");
	if (sarnue_client_open(&cfg, &a.client, err, sizeof(err))) {
		alog(&a, "ERR", "%s", err);
		goto out;
	}
	a.state = "running";
	rc = serve(&a, &sigs);
	a.state = "stopped";
	if (a.njobs && a.jobs[0].pid) {
		alog(&a, "WRN", "stopping the running command (pid %ld)", (long)a.jobs[0].pid);
		kill(-a.jobs[0].pid, SIGTERM);
	}
	if (a.subscribed)
		sarnue_client_unsubscribe_all(a.client);
	a.subscribed = 0;
	write_json(&a);
	alog(&a, "info", "stopped");
out:
	sarnue_client_close(a.client);
	if (a.pidfile)
		unlink(a.pidfile);
	if (a.log != stderr)
		fclose(a.log);
	return rc;
}
