/*
 * squeue.c - asking Slurm for the running jobs: squeue runs as a child with a deadline, its
 * stdout is read whole up to --squeue-max-output, and of its stderr only the first line and the
 * end are kept for the error message.  A poll whose output could not be read whole fails: part
 * of the jobs could look like jobs ending.  Parsing is slurmjobs.c's.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "filterd/filterd_private.h"
#include "lib/assert.h"

#define STDERR_HEAD 256		/* bytes of the first line of squeue's stderr kept */
#define STDERR_TAIL (64 * 1024) /* and of its end: a flood of messages is not buffered whole */

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
	/* A buffer within its limit always has room: past it the read before returned -2. */
	sn_assert(b->len < b->cap);
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
	sn_assert(e->head_len < sizeof(e->head));
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
	sn_assert(e->tail_len <= STDERR_TAIL);
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
				sn_assert(open > 0);
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
	sn_assert(start <= end && end <= e->tail_len);
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
int get_jobs(struct filterd *d, struct poll_report *rep, struct fab_error *err)
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
				logprio(d, LOG_WARNING,
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
