/*
 * filterd.c - sarnue-filterd, the filter between Slurm and the subnet manager (Domke's thesis,
 * section 5.2.2.1, figure 5.6).  Every interval it asks squeue for the running jobs, keeps the
 * multi-switch ones (jobfilter.c), and when their node sets changed it writes the job map
 * (fabric/jobmap.h format) atomically and hands it to the plugin with `jobs FILE` over the
 * control socket (doc/ctl-protocol.md, lib/ctlclient.c).  It runs next to slurmctld, not
 * inside it, so Slurm and OpenSM may live on different management nodes.
 *
 * The reroute decision ignores job ids and compares node sets symmetrically (a job ending is a
 * change), with a minimum time between reroutes and an optional minimum predicted gain in
 * maximum effective EFI.  Nothing here signals OpenSM: the socket is the only channel.
 *
 * This file is the daemon's life: start-up, the poll loop and its signals, one poll and its log
 * line; the pieces it drives are declared in filterd_private.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "fabric/loaders.h"
#include "filterd/filterd_private.h"
#include "lib/assert.h"
#include "lib/json.h"

#define UNKNOWN_LISTED 10 /* hostnames named in the "not in the fabric" line */

/* ------------------------------------------------------------------ time and logging */

double now_mono(void)
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

static void vlogprio(struct filterd *d, int prio, const char *fmt, va_list ap)
{
	char stamp[32], line[8192];
	const char *level = prio <= LOG_ERR ? "error: " : prio == LOG_WARNING ? "warning: " : "";

	vsnprintf(line, sizeof(line), fmt, ap);
	if (d->syslog) {
		syslog(prio, "%s", line);
		return;
	}
	stamp[0] = '\0';
	if (d->stamp) {
		utc_stamp(stamp, sizeof(stamp) - 1);
		strcat(stamp, " ");
	}
	/*
	 * journald reads the priority from a "<N>" prefix (sd-daemon(3)) and records the time
	 * and the program itself; elsewhere the level is a word, for grep.
	 */
	if (d->journal)
		fprintf(d->log, "<%d>%s%s\n", prio, stamp, line);
	else
		fprintf(d->log, "%ssarnue-filterd: %s%s\n", stamp, level, line);
	fflush(d->log);
}

void logprio(struct filterd *d, int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlogprio(d, prio, fmt, ap);
	va_end(ap);
}

void logmsg(struct filterd *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlogprio(d, LOG_INFO, fmt, ap);
	va_end(ap);
}

/*
 * Whether stderr is the journal: systemd sets JOURNAL_STREAM to "DEV:INODE" of the stream it
 * connects, and a child whose stderr was redirected inherits the variable, so both must match.
 */
static int stderr_is_journal(void)
{
	const char *env = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!env || sscanf(env, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st))
		return 0;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
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
	/* Long hostnames may fill the line before UNKNOWN_LISTED do: snprintf() then returns more
	 * than it wrote, and pos must not pass the end. */
	for (i = 0; i < d->js.unknown.n && i < UNKNOWN_LISTED && pos < sizeof(names); i++)
		pos += (size_t)snprintf(names + pos, sizeof(names) - pos, "%s%s", i ? " " : "",
					hostlist_get(&d->js.unknown, i));
	if (d->js.unknown.n)
		logprio(d, LOG_WARNING,
			"%u hostname(s) of running jobs not in the fabric (%s): %s%s",
			d->js.unknown.n, d->topo_source, names,
			d->js.unknown.n > UNKNOWN_LISTED ? " ..." : "");
	else
		logmsg(d, "every hostname of the running jobs is in the fabric again");
	hostlist_copy(&d->unknown, &d->js.unknown);
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

/* A failed poll is an error, a reroute the plugin was not told of a warning. */
static int report_priority(const struct poll_report *r)
{
	if (!r->ok || !strcmp(r->decision, "error"))
		return LOG_ERR;
	if (!strcmp(r->decision, "reroute pending"))
		return LOG_WARNING;
	return LOG_INFO;
}

static void report(struct filterd *d, struct poll_report *r)
{
	int prio = report_priority(r);

	if (r->ok)
		logprio(d, prio,
			"poll %lu: %.3f s (squeue %.3f s, %s): %u jobs, %u running, %u short, %u excluded, %u single-switch, %u multi-switch on %u hosts%s; %s: %s%s%s",
			r->poll, r->seconds, r->squeue_seconds, r->squeue_format, r->st.jobs,
			r->st.running, r->st.short_jobs, r->st.excluded, r->st.single_switch,
			r->st.multi_switch, r->st.multi_hosts, r->unknown ? ", unknown hosts" : "",
			r->decision, r->reason, r->handoff[0] ? "; " : "", r->handoff);
	else
		logprio(d, prio, "poll %lu: %.3f s: %s: %s; nothing changes", r->poll, r->seconds,
			r->decision, r->reason);
	if (d->a.json)
		print_status(r, stdout), fflush(stdout);
	if (d->a.status && write_file_atomic(d->a.status, print_status, r))
		logprio(d, LOG_ERR, "cannot write status %s: %s", d->a.status, strerror(errno));
	metrics_count(d, r);
	if (d->a.metrics && metrics_write(d, r))
		logprio(d, LOG_ERR, "cannot write metrics %s: %s", d->a.metrics, strerror(errno));
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
	/* The status JSON and the log line print it. */
	sn_assert(rep.decision);
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
		logprio(d, LOG_WARNING, "ignoring the existing job map: %s", err.msg);
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
	d.journal = !d.a.log && stderr_is_journal();
	d.stamp = d.a.log_format == LOG_FORMAT_TIMESTAMP ||
		  (d.a.log_format == LOG_FORMAT_AUTO && !d.journal);
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
		logprio(&d, LOG_ERR, "cannot write pid file %s: %s", d.a.pidfile, strerror(errno));
	load_installed(&d);
	rc = run(&d);
	if (d.a.pidfile)
		unlink(d.a.pidfile);
	filterd_free(&d);
	return rc;
}
