/*
 * filterd_private.h - what the pieces of sarnue-filterd share: the command line as parsed
 * (options.c), the daemon's state, and the report of one poll.  filterd.c runs the poll loop and
 * logs; squeue.c asks Slurm for the jobs; topo.c finds where the hosts sit; decide.c decides on
 * a reroute and hands the job map to the plugin.  jobfilter.c and slurmjobs.c (with
 * lib/hostlist.c) hold the parts that need no processes or sockets, which the unit tests call
 * directly.
 */
#ifndef SARNUE_FILTERD_PRIVATE_H
#define SARNUE_FILTERD_PRIVATE_H

#include <stdint.h>
#include <stdio.h>
#include <syslog.h> /* the priorities of logprio() */
#include <time.h>

#include "fabric/fabric.h"
#include "filterd/jobfilter.h"
#include "filterd/slurmjobs.h"
#include "lib/ctlclient.h"

enum squeue_format {
	SQ_AUTO,
	SQ_JSON,
	SQ_TEXT
};

/* Whether log lines carry the daemon's own timestamp (--log-format). */
enum log_format {
	LOG_FORMAT_AUTO, /* plain on the journal, else timestamp */
	LOG_FORMAT_PLAIN,
	LOG_FORMAT_TIMESTAMP
};

struct filterd_args {
	double interval, squeue_timeout, min_interval, min_gain, socket_timeout;
	int gain_throughput; /* --gain-model throughput: judge by the slowest intra-job flow */
	unsigned max_output; /* MiB */
	int once, dry_run, daemon, json;
	enum squeue_format format;
	enum log_format log_format;
	const char *squeue, *fabric, *topology_conf, *lfts, *socket, *pidfile, *log, *status;
	const char *metrics; /* node_exporter textfile, or NULL */
	char *job_map;	     /* absolute */
	enum job_host_match match;
	struct filter_conf filter;
	const char **exclude;
	uint32_t exclude_cap;
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

/* The decisions a poll ends with, counted for --metrics-file (metrics.c). */
#define FILTERD_DECISIONS 6

struct filterd {
	struct filterd_args a;
	struct topo topo;
	int have_topo;
	struct timespec fabric_mtime;
	const char *topo_source;
	struct slurm_jobs jobs;
	struct jobset js;
	struct hostlist installed, unknown;
	double last_reroute;
	int text_works; /* auto: --json failed and the text format answered */
	unsigned long polls, reroutes, poll_errors;
	unsigned long decisions[FILTERD_DECISIONS];
	FILE *log;
	int syslog;
	int journal; /* the log is stderr and stderr is the journal: "<N>" priority prefixes */
	int stamp;   /* lines start with a UTC timestamp */
};

/* filterd.c */
double now_mono(void);
/* A log line at syslog priority prio (LOG_ERR, LOG_WARNING, LOG_INFO); logmsg() is LOG_INFO. */
void logprio(struct filterd *d, int prio, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void logmsg(struct filterd *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* options.c: returns 0 to run, 1 after --help/--version, -1 on a usage error. */
int parse_args(int argc, char **argv, struct filterd_args *a);

/* squeue.c: the running jobs into d->jobs, with the squeue format and time into rep. */
int get_jobs(struct filterd *d, struct poll_report *rep, struct fab_error *err);

/* topo.c */
int load_fabric(const struct filterd_args *a, struct fabric *f, char *subnet, size_t size,
		struct fab_error *err);
int update_topology(struct filterd *d, struct fab_error *err);

/* metrics.c: counts a poll's outcome; writes --metrics-file (-1 with errno on failure). */
void metrics_count(struct filterd *d, const struct poll_report *r);
int metrics_write(const struct filterd *d, const struct poll_report *r);

/* decide.c: decides and hands a changed job map over; -1 when the plugin could not be told. */
int decide(struct filterd *d, struct poll_report *rep, double now);

#endif
