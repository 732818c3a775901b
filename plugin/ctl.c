/*
 * ctl.c - the plugin's control socket (doc/ctl-protocol.md): status, reroute, jobs FILE and
 * topology for `sarnue ctl`, the filter daemon and scripts.
 *
 * One thread serves every client with poll() on non-blocking descriptors, so OpenSM's sweeps
 * never wait for a client.  What the thread shares with OpenSM's routing (the status, the
 * installed job map, the topology text) lives in struct ctl_state behind one mutex that is
 * held only to copy a few fields; routing results arrive through ctl_note_routing().
 *
 * Clients are not trusted to behave: one that does not read its replies gets no more commands
 * run, and is dropped; only complete commands keep a connection alive; a full table makes room
 * for a newcomer; and the plugin, which runs as root, never opens a file for a client: `jobs`
 * reads a job map the client opened with its own rights and passed along.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create, struct ucred */
#endif
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/magic.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include <opensm/osm_config.h> /* first: see context.h */

#include "check/verify.h"
#include "engines/engines.h"
#include "fabric/jobmap.h"
#include "lib/arena.h"
#include "lib/assert.h"
#include "lib/json.h"
#include "plugin/context.h"
#include "plugin/ctl.h"
#include "plugin/log.h"
#include "plugin/perfmgr.h"
#include "plugin/update.h"

#define CTL_MAX_CLIENTS 16
#define CTL_IDLE_SECONDS 30
#define CTL_LINE_MAX 4096
/* Unsent replies above which a client's further commands wait until it reads. */
#define CTL_OUT_PAUSE (1u << 20)
/* Unsent replies above which the client is dropped (one reply may pass the pause mark). */
#define CTL_OUT_DROP (16u << 20)
/* At most one log line per this many seconds about clients closed to make room. */
#define CTL_EVICT_LOG_SECONDS 10
/* The largest job map a client may pass: room for hundreds of thousands of hosts. */
#define CTL_JOBS_MAX (16u << 20)

struct ctl_state {
	char engine[32];     /* empty before the first routing by a sarnue engine */
	unsigned routings;   /* routings by a sarnue engine */
	unsigned programmed; /* times OpenSM reported the unicast tables written to the switches */
	double route_seconds;
	time_t routed_at;
	unsigned vls;
	uint32_t jobs, job_hosts, unknown_hosts, fallbacks;
	int quality_known; /* the EFI figures below were measured (quality=yes) */
	uint64_t efi_max;
	double efi_mean;
	uint32_t channels, dark_channels;
	unsigned mcast_trees, mcast_refused; /* groups with a tree, and without, since routing */
	char last_error[512];
	int reroute_pending;
	char job_map[OPT_PATH_MAX]; /* name of the map installed by `jobs`; empty: the option */
	char *topology;		    /* `host ...` lines of the last routing */
	size_t topology_len;
	uint32_t topology_ports;
};

struct ctl_client {
	int fd;	       /* -1: free slot */
	int passed_fd; /* descriptor that came with the client's bytes, for `jobs`; -1: none */
	uid_t uid;     /* the peer's credentials when it connected */
	pid_t pid;
	char in[CTL_LINE_MAX + 1];
	size_t in_len;
	char *out;
	size_t out_len, out_sent, out_cap;
	time_t last_active; /* connect or last complete command: partial lines do not count */
	int eof;	    /* the peer sends no more; close once the replies are out */
	int broken;	    /* close now, nothing can be delivered */
	int overflow;	    /* more unsent replies than CTL_OUT_DROP: drop it */
	int discard;	    /* after an over-long line: read and drop input until the peer closes */
};

struct ctl_server {
	struct sarnue_plugin *p;
	pthread_t thread;
	int listen_fd;
	int wake[2]; /* writing to wake[1] stops the thread */
	pthread_mutex_t lock;
	struct ctl_state st;
	/*
	 * The installed job map is a sealed in-memory copy of what the client sent; routings open
	 * it as /proc/self/fd/N.  handed_fd is the copy the current or last routing was given: it
	 * stays open until the next routing asks, so a routing never opens a reused number.
	 */
	int jobs_fd, handed_fd;
	/* Evictions since the last one logged: a connect loop must not flood OpenSM's log. */
	unsigned evicted;
	time_t evict_logged;
	struct ctl_client clients[CTL_MAX_CLIENTS];
};

static size_t unsent(const struct ctl_client *c)
{
	sn_assert(c->out_sent <= c->out_len);
	return c->out_len - c->out_sent;
}

static int paused(const struct ctl_client *c)
{
	return unsent(c) > CTL_OUT_PAUSE;
}

/* Moves the unsent replies to the front once the sent part is the larger one. */
static void compact_out(struct ctl_client *c)
{
	size_t left = unsent(c);

	if (!c->out_sent || c->out_sent < left)
		return;
	memmove(c->out, c->out + c->out_sent, left);
	c->out_len = left;
	c->out_sent = 0;
}

static void reply(struct ctl_client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void reply(struct ctl_client *c, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (c->overflow || c->broken)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (unsent(c) + (size_t)n > CTL_OUT_DROP) {
		c->overflow = 1;
		return;
	}
	compact_out(c);
	if (fab_reserve(&c->out, &c->out_cap, c->out_len + (size_t)n + 1, 4096)) {
		c->broken = 1; /* out of memory: drop the client rather than OpenSM */
		return;
	}
	va_start(ap, fmt);
	vsnprintf(c->out + c->out_len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	c->out_len += (size_t)n;
}

static void request_reroute(struct ctl_server *s)
{
	pthread_mutex_lock(&s->lock);
	s->st.reroute_pending = 1;
	pthread_mutex_unlock(&s->lock);
	/* What OpenSM's console `reroute` does: the next sweep routes even without changes. */
	s->p->osm->subn.force_reroute = TRUE;
	osm_opensm_sweep(s->p->osm);
}

static char *status_json(struct ctl_server *s)
{
	struct ctl_state st;
	char when[32] = "";
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	pthread_mutex_lock(&s->lock);
	st = s->st;
	pthread_mutex_unlock(&s->lock);
	out = open_memstream(&text, &len);
	if (!out)
		return NULL;
	if (st.routed_at)
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&st.routed_at));
	fputs("{\"engine\":", out);
	if (st.engine[0])
		json_write_string(out, st.engine);
	else
		fputs("null", out);
	fprintf(out,
		",\"routings\":%u,\"tables_programmed\":%u,\"last_route_seconds\":%.3f,"
		"\"last_routed\":",
		st.routings, st.programmed, st.route_seconds);
	if (when[0])
		json_write_string(out, when);
	else
		fputs("null", out);
	fprintf(out,
		",\"vls\":%u,\"jobs\":%u,\"job_hosts\":%u,\"unknown_hosts\":%u,\"fallbacks\":%u,"
		"\"job_map\":",
		st.vls, st.jobs, st.job_hosts, st.unknown_hosts, st.fallbacks);
	json_write_string(out, st.job_map[0] ? st.job_map : s->p->opts.job_map);
	if (st.quality_known)
		fprintf(out,
			",\"efi_max\":%llu,\"efi_mean\":%.3f,\"channels\":%u,\"dark_channels\":%u",
			(unsigned long long)st.efi_max, st.efi_mean, st.channels, st.dark_channels);
	fprintf(out, ",\"reroute_pending\":%s", st.reroute_pending ? "true" : "false");
	fprintf(out, ",\"multicast\":{\"trees\":%u,\"refused\":%u}", st.mcast_trees,
		st.mcast_refused);
	update_status_json(s->p, out);
	perfmgr_status_json(s->p, out);
	fputs(",\"last_error\":", out);
	json_write_string(out, st.last_error);
	fputc('}', out);
	if (fclose(out)) {
		free(text);
		return NULL;
	}
	return text;
}

static void cmd_status(struct ctl_server *s, struct ctl_client *c)
{
	char *json = status_json(s);

	if (!json) {
		reply(c, "error out of memory\n");
		return;
	}
	reply(c, "ok %s\n", json);
	free(json);
}

/* The name a client gives its job map goes to logs and status: printable, bounded. */
static int name_ok(const char *name)
{
	const unsigned char *q = (const unsigned char *)name;

	if (!*q || strlen(name) >= OPT_PATH_MAX)
		return 0;
	for (; *q; q++)
		if (*q < 0x20 || *q == 0x7f)
			return 0;
	return 1;
}

/*
 * Reads the passed job map into *text (NUL-terminated).  Only a regular file, at most
 * CTL_JOBS_MAX bytes, not on FUSE: those are the files whose reads cannot be made to wait
 * forever or run without end by whoever passed them.  pread leaves the client's offset alone.
 */
static const char *read_passed(int fd, char **text, size_t *len)
{
	struct statfs sf;
	struct stat sb;
	size_t size, got = 0;
	char *buf;

	*text = NULL;
	if (fstat(fd, &sb))
		return "cannot stat the passed descriptor";
	if (!S_ISREG(sb.st_mode))
		return "not a regular file";
	if (sb.st_size > (off_t)CTL_JOBS_MAX)
		return "larger than the 16 MiB a job map may have";
	if (!fstatfs(fd, &sf) && sf.f_type == FUSE_SUPER_MAGIC)
		return "on a FUSE file system, which the plugin does not read";
	size = (size_t)sb.st_size;
	buf = malloc(size + 1);
	if (!buf)
		return "out of memory";
	while (got < size) {
		ssize_t n = pread(fd, buf + got, size - got, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			return "cannot read the passed descriptor (open it for reading)";
		}
		if (!n)
			break; /* it shrank since fstat: take what is there */
		got += (size_t)n;
	}
	buf[got] = '\0';
	if (memchr(buf, '\0', got)) {
		free(buf);
		return "contains NUL bytes, not a job map";
	}
	*text = buf;
	*len = got;
	return NULL;
}

/* A sealed in-memory copy: nobody can change the map the routings read. */
static int sealed_copy(const char *text, size_t len)
{
	int fd = memfd_create("sarnue-job-map", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	size_t done = 0;

	if (fd < 0)
		return -1;
	while (done < len) {
		ssize_t n = write(fd, text + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto fail;
		done += (size_t)n;
	}
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL))
		goto fail;
	return fd;
fail:
	close(fd);
	return -1;
}

static void install_job_map(struct ctl_server *s, int fd, const char *name)
{
	pthread_mutex_lock(&s->lock);
	if (s->jobs_fd >= 0 && s->jobs_fd != s->handed_fd)
		close(s->jobs_fd);
	s->jobs_fd = fd;
	strcpy(s->st.job_map, name);
	pthread_mutex_unlock(&s->lock);
}

static void cmd_jobs(struct ctl_server *s, struct ctl_client *c, const char *name)
{
	struct fab_error err = { "" };
	int fd = c->passed_fd, copy;
	struct job_map jm;
	const char *why;
	char *text = NULL;
	size_t len = 0;

	c->passed_fd = -1;
	job_map_init(&jm);
	if (fd < 0) {
		/* Opening a path here would use OpenSM's rights, not the client's. */
		reply(c, "error jobs: no open file came with the command; the plugin does not open "
			 "paths for clients, use `sarnue ctl jobs FILE` of this release\n");
		goto out;
	}
	if (!name_ok(name)) {
		reply(c,
		      "error usage: jobs NAME, with the job map's descriptor attached; NAME "
		      "printable, shorter than %d bytes\n",
		      OPT_PATH_MAX);
		goto out;
	}
	why = read_passed(fd, &text, &len);
	if (why) {
		reply(c, "error %s: %s\n", name, why);
		goto out;
	}
	if (job_map_parse_text(&jm, text, name, &err)) {
		reply(c, "error %s\n", err.msg);
		goto out;
	}
	copy = sealed_copy(text, len);
	if (copy < 0) {
		reply(c, "error %s: cannot keep a copy: %s\n", name, strerror(errno));
		goto out;
	}
	install_job_map(s, copy, name);
	plog(s->p, OSM_LOG_INFO,
	     "ctl: job map %s installed (%u entries, %u jobs) by uid %u pid %d; reroute requested",
	     name, jm.nentries, jm.njobs, (unsigned)c->uid, (int)c->pid);
	reply(c, "ok job map %s installed: %u entries, %u jobs; reroute requested\n", name,
	      jm.nentries, jm.njobs);
	request_reroute(s);
out:
	job_map_free(&jm);
	free(text);
	if (fd >= 0)
		close(fd);
}

static void cmd_topology(struct ctl_server *s, struct ctl_client *c)
{
	uint32_t ports;
	int have;

	pthread_mutex_lock(&s->lock);
	have = s->st.topology != NULL;
	ports = s->st.topology_ports;
	if (have)
		reply(c, "%.*s", (int)s->st.topology_len, s->st.topology);
	pthread_mutex_unlock(&s->lock);
	if (!have)
		reply(c, "error no routing yet\n");
	else
		reply(c, "ok %u ports\n", ports);
}

static void cmd_help(struct ctl_client *c)
{
	reply(c, "command status            engine, last routing, VLs, jobs, fall-backs (JSON)\n"
		 "command reroute           route again at the next sweep\n"
		 "command jobs NAME         check and install the job map whose open file comes\n"
		 "                          with the line (SCM_RIGHTS), then reroute\n"
		 "command topology          host NAME NODE_GUID PORT_GUID LEAF_GUID per CA port\n"
		 "command help              this list\n"
		 "ok\n");
}

static void cmd_reroute(struct ctl_server *s, struct ctl_client *c)
{
	plog(s->p, OSM_LOG_INFO, "ctl: reroute requested by uid %u pid %d", (unsigned)c->uid,
	     (int)c->pid);
	request_reroute(s);
	reply(c, "ok reroute requested\n");
}

static void run_command(struct ctl_server *s, struct ctl_client *c, char *line)
{
	char *cmd = line + strspn(line, " \t"), *arg;
	size_t len = strlen(cmd);

	while (len && (cmd[len - 1] == ' ' || cmd[len - 1] == '\t' || cmd[len - 1] == '\r'))
		cmd[--len] = '\0';
	arg = cmd + strcspn(cmd, " \t");
	if (*arg)
		*arg++ = '\0';
	arg += strspn(arg, " \t");
	if (!strcmp(cmd, "status") && !*arg)
		cmd_status(s, c);
	else if (!strcmp(cmd, "reroute") && !*arg)
		cmd_reroute(s, c);
	else if (!strcmp(cmd, "jobs"))
		cmd_jobs(s, c, arg);
	else if (!strcmp(cmd, "topology") && !*arg)
		cmd_topology(s, c);
	else if (!strcmp(cmd, "help") && !*arg)
		cmd_help(c);
	else if (!*cmd)
		reply(c, "error empty command (try help)\n");
	else if (*arg && (!strcmp(cmd, "status") || !strcmp(cmd, "reroute") ||
			  !strcmp(cmd, "topology") || !strcmp(cmd, "help")))
		reply(c, "error %s takes no argument\n", cmd);
	else
		reply(c, "error unknown command '%.64s' (try help)\n", cmd);
}

/*
 * Runs the complete lines in the input buffer while the client reads its replies; a client
 * that does not read gets no more commands run (and no more input read) until it does.
 */
static void take_lines(struct ctl_server *s, struct ctl_client *c)
{
	char *nl;

	while (!c->discard && !c->broken && !c->overflow && !paused(c) &&
	       (nl = memchr(c->in, '\n', c->in_len))) {
		size_t used = (size_t)(nl - c->in) + 1;

		*nl = '\0';
		c->last_active = time(NULL);
		run_command(s, c, c->in);
		memmove(c->in, c->in + used, c->in_len - used);
		c->in_len -= used;
	}
	if (!c->discard && c->in_len >= CTL_LINE_MAX && !memchr(c->in, '\n', c->in_len)) {
		/*
		 * Closing now with unread input would reset the connection and lose the reply:
		 * drop the rest until the peer closes (or the idle timeout).
		 */
		reply(c, "error line longer than %d bytes\n", CTL_LINE_MAX);
		c->in_len = 0;
		c->discard = 1;
	}
}

static void client_close(struct ctl_client *c)
{
	close(c->fd);
	if (c->passed_fd >= 0)
		close(c->passed_fd);
	free(c->out);
	memset(c, 0, sizeof(*c));
	c->fd = c->passed_fd = -1;
}

/* Keeps the newest descriptor a client passed; a `jobs` line takes it. */
static void keep_passed(struct ctl_client *c, struct msghdr *msg)
{
	struct cmsghdr *cm;

	for (cm = CMSG_FIRSTHDR(msg); cm; cm = CMSG_NXTHDR(msg, cm)) {
		size_t i, n;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(fd));
			if (c->passed_fd >= 0)
				close(c->passed_fd);
			c->passed_fd = fd;
		}
	}
}

/* recv() that also takes descriptors passed with the bytes (extra ones the kernel closes). */
static ssize_t recv_client(struct ctl_client *c, void *buf, size_t len)
{
	union {
		struct cmsghdr align;
		char space[CMSG_SPACE(2 * sizeof(int))];
	} ctrl;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctrl.space,
		.msg_controllen = sizeof(ctrl.space),
	};
	ssize_t n = recvmsg(c->fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

	if (n >= 0)
		keep_passed(c, &msg);
	return n;
}

static void client_read(struct ctl_client *c)
{
	char scratch[CTL_LINE_MAX];
	ssize_t n;

	sn_assert(c->in_len <= CTL_LINE_MAX);
	n = c->discard ? recv_client(c, scratch, sizeof(scratch))
		       : recv_client(c, c->in + c->in_len, CTL_LINE_MAX - c->in_len);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		c->broken = 1; /* connection broken: nothing to deliver */
		return;
	}
	if (n == 0) {
		/* The peer is done sending; what we owe it still goes out. */
		c->eof = 1;
		c->discard = 0;
		return;
	}
	if (!c->discard)
		c->in_len += (size_t)n;
}

static void client_write(struct ctl_client *c)
{
	ssize_t n = send(c->fd, c->out + c->out_sent, unsent(c), MSG_DONTWAIT | MSG_NOSIGNAL);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		c->broken = 1;
		return;
	}
	c->out_sent += (size_t)n;
	if (c->out_sent == c->out_len)
		c->out_len = c->out_sent = 0;
}

static void peer_credentials(struct ctl_client *c)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
		cred.uid = (uid_t)-1;
		cred.pid = 0;
	}
	c->uid = cred.uid;
	c->pid = cred.pid;
}

/*
 * A full table must not lock out the operator: the client longest without a complete command
 * makes room.  Clients that work get their answers in milliseconds, so it is one that sits.
 */
static struct ctl_client *evict_client(struct ctl_server *s)
{
	struct ctl_client *old = &s->clients[0];
	time_t now = time(NULL);
	unsigned i;

	for (i = 1; i < CTL_MAX_CLIENTS; i++)
		if (s->clients[i].last_active < old->last_active)
			old = &s->clients[i];
	s->evicted++;
	if (now - s->evict_logged >= CTL_EVICT_LOG_SECONDS) {
		plog(s->p, OSM_LOG_INFO,
		     "ctl: %d clients connected; closed uid %u pid %d, %ld s without a command, "
		     "to serve a new one (%u such closes since the last line)",
		     CTL_MAX_CLIENTS, (unsigned)old->uid, (int)old->pid,
		     (long)(now - old->last_active), s->evicted);
		s->evicted = 0;
		s->evict_logged = now;
	}
	client_close(old);
	return old;
}

static void accept_client(struct ctl_server *s)
{
	int fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	struct ctl_client *c = NULL;
	unsigned i;

	if (fd < 0)
		return;
	for (i = 0; i < CTL_MAX_CLIENTS && !c; i++)
		if (s->clients[i].fd < 0)
			c = &s->clients[i];
	if (!c)
		c = evict_client(s);
	c->fd = fd;
	c->last_active = time(NULL);
	peer_credentials(c);
}

/* Closes a client that is done, broken, over its reply limit or idle; logs the ones dropped. */
static void client_check(struct ctl_server *s, struct ctl_client *c, time_t now)
{
	if (c->overflow) {
		plog(s->p, OSM_LOG_INFO,
		     "ctl: dropped client uid %u pid %d: over %u MiB of replies it does not read",
		     (unsigned)c->uid, (int)c->pid, CTL_OUT_DROP >> 20);
	} else if (now - c->last_active > CTL_IDLE_SECONDS) {
		if (unsent(c))
			plog(s->p, OSM_LOG_INFO,
			     "ctl: dropped client uid %u pid %d: %zu bytes of replies unread for "
			     "%d s",
			     (unsigned)c->uid, (int)c->pid, unsent(c), CTL_IDLE_SECONDS);
		else
			plog(s->p, OSM_LOG_VERBOSE,
			     "ctl: closed client uid %u pid %d: no complete command for %d s",
			     (unsigned)c->uid, (int)c->pid, CTL_IDLE_SECONDS);
	} else if (!c->broken && !(c->eof && !unsent(c))) {
		return;
	}
	client_close(c);
}

static void *ctl_thread(void *arg)
{
	struct ctl_server *s = arg;
	struct pollfd fds[CTL_MAX_CLIENTS + 2];
	struct ctl_client *who[CTL_MAX_CLIENTS + 2];

	for (;;) {
		nfds_t n = 2, i;
		time_t now;

		fds[0] = (struct pollfd){ .fd = s->wake[0], .events = POLLIN };
		fds[1] = (struct pollfd){ .fd = s->listen_fd, .events = POLLIN };
		for (i = 0; i < CTL_MAX_CLIENTS; i++) {
			struct ctl_client *c = &s->clients[i];
			int want_in = !c->eof && !paused(c);

			if (c->fd < 0)
				continue;
			who[n] = c;
			fds[n++] = (struct pollfd){
				.fd = c->fd,
				.events =
					(short)((want_in ? POLLIN : 0) | (unsent(c) ? POLLOUT : 0)),
			};
		}
		if (poll(fds, n, 1000) < 0 && errno != EINTR)
			break;
		if (fds[0].revents)
			break;
		now = time(NULL);
		for (i = 2; i < n; i++) {
			struct ctl_client *c = who[i];

			if (fds[i].revents & POLLIN)
				client_read(c);
			else if (fds[i].revents & (POLLHUP | POLLERR))
				c->broken = 1;
			if (unsent(c) && (fds[i].revents & POLLOUT))
				client_write(c);
			take_lines(s, c);
			client_check(s, c, now);
		}
		/* After the clients: an eviction must not hit a slot the loop above still uses. */
		if (fds[1].revents & POLLIN)
			accept_client(s);
	}
	return NULL;
}

/* Removes a stale socket file; refuses when something else is there or still listening. */
static int clear_path(struct ctl_server *s, const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct stat sb;
	int fd, live;

	if (lstat(path, &sb))
		return errno == ENOENT ? 0 : -1;
	if (!S_ISSOCK(sb.st_mode)) {
		plog(s->p, OSM_LOG_ERROR,
		     "ERR ctl: %s exists and is not a socket; not replacing it", path);
		return -1;
	}
	strcpy(addr.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	live = fd >= 0 && !connect(fd, (struct sockaddr *)&addr, sizeof(addr));
	if (fd >= 0)
		close(fd);
	if (live) {
		plog(s->p, OSM_LOG_ERROR, "ERR ctl: another process listens on %s", path);
		return -1;
	}
	return unlink(path);
}

static int make_parent_dir(const char *path)
{
	char dir[OPT_PATH_MAX];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -1;
	return 0;
}

static int set_owner_mode(struct ctl_server *s, const char *path)
{
	const struct sarnue_options *o = &s->p->opts;

	if (o->ctl_group[0]) {
		struct group *gr = getgrnam(o->ctl_group);

		if (!gr) {
			plog(s->p, OSM_LOG_ERROR, "ERR ctl: unknown group '%s' for %s",
			     o->ctl_group, path);
			return -1;
		}
		if (chown(path, (uid_t)-1, gr->gr_gid))
			return -1;
	}
	return chmod(path, (mode_t)o->ctl_mode);
}

static int open_listener(struct ctl_server *s, const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };

	if (make_parent_dir(path) || clear_path(s, path))
		return -1;
	strcpy(addr.sun_path, path);
	s->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->listen_fd < 0 || bind(s->listen_fd, (struct sockaddr *)&addr, sizeof(addr)))
		return -1;
	if (set_owner_mode(s, path) || listen(s->listen_fd, CTL_MAX_CLIENTS)) {
		unlink(path);
		return -1;
	}
	return 0;
}

static void server_free(struct ctl_server *s)
{
	unsigned i;

	for (i = 0; i < CTL_MAX_CLIENTS; i++)
		if (s->clients[i].fd >= 0)
			client_close(&s->clients[i]);
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	if (s->wake[0] >= 0)
		close(s->wake[0]);
	if (s->wake[1] >= 0)
		close(s->wake[1]);
	if (s->handed_fd >= 0 && s->handed_fd != s->jobs_fd)
		close(s->handed_fd);
	if (s->jobs_fd >= 0)
		close(s->jobs_fd);
	free(s->st.topology);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

int ctl_start(struct sarnue_plugin *p)
{
	const char *path = p->opts.ctl_socket;
	struct ctl_server *s;
	unsigned i;

	if (!path[0])
		return 0;
	if ((p->opts.ctl_mode & 07) && !p->opts.ctl_world) {
		/* Any local user could reroute and install job maps. */
		plog(p, OSM_LOG_ERROR,
		     "ERR ctl: ctl_mode=%04o lets every local user use the control socket; not "
		     "opening %s (use ctl_mode=0660 with ctl_group, or set ctl_world=yes to allow "
		     "it)",
		     p->opts.ctl_mode, path);
		return -1;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -1;
	s->p = p;
	s->listen_fd = s->wake[0] = s->wake[1] = s->jobs_fd = s->handed_fd = -1;
	for (i = 0; i < CTL_MAX_CLIENTS; i++)
		s->clients[i].fd = s->clients[i].passed_fd = -1;
	pthread_mutex_init(&s->lock, NULL);
	if (pipe2(s->wake, O_CLOEXEC) || open_listener(s, path))
		goto fail;
	if (pthread_create(&s->thread, NULL, ctl_thread, s)) {
		unlink(path);
		goto fail;
	}
	p->ctl = s;
	plog(p, OSM_LOG_INFO, "ctl: listening on %s (mode %04o%s%s%s)", path, p->opts.ctl_mode,
	     p->opts.ctl_group[0] ? ", group " : "", p->opts.ctl_group,
	     (p->opts.ctl_mode & 07) ? ", open to every local user: ctl_world=yes" : "");
	return 0;
fail:
	plog(p, OSM_LOG_ERROR, "ERR ctl: cannot listen on %s: %s; running without control socket",
	     path, errno ? strerror(errno) : "see above");
	server_free(s);
	return -1;
}

void ctl_stop(struct sarnue_plugin *p)
{
	struct ctl_server *s = p->ctl;

	if (!s)
		return;
	if (write(s->wake[1], "x", 1) == 1)
		pthread_join(s->thread, NULL);
	unlink(p->opts.ctl_socket);
	p->ctl = NULL;
	server_free(s);
}

/* One `host NAME NODE_GUID PORT_GUID LEAF_GUID` line per CA port attached to a switch. */
static char *topology_text(const struct sarnue_plugin *p, const struct fabric *f, size_t *len,
			   uint32_t *nports)
{
	char *text = NULL;
	FILE *out = open_memstream(&text, len);
	uint32_t i;

	*nports = 0;
	if (!out)
		return NULL;
	for (i = 0; i < f->nports; i++) {
		const struct fab_port *port = &f->ports[i];
		const struct fab_node *node = &f->nodes[port->node];
		const char *desc = fabric_node_desc(f, port->node);
		uint32_t sw;

		if (node->type != FAB_CA || !port->num)
			continue;
		sw = fabric_attached_switch(f, i);
		if (sw == FAB_NONE)
			continue;
		fprintf(out, "host %.*s 0x%016llx 0x%016llx 0x%016llx\n",
			(int)job_map_host_len(desc, p->opts.job_host_match), desc,
			(unsigned long long)node->guid, (unsigned long long)port->guid,
			(unsigned long long)f->nodes[sw].guid);
		(*nports)++;
	}
	if (fclose(out)) {
		free(text);
		return NULL;
	}
	return text;
}

void ctl_note_routing(struct sarnue_plugin *p, const char *engine, const struct fabric *f,
		      const struct engine_result *res)
{
	struct ctl_server *s = p->ctl;
	uint32_t nports = 0;
	size_t len = 0;
	char *topo;

	if (!s)
		return;
	topo = topology_text(p, f, &len, &nports);
	pthread_mutex_lock(&s->lock);
	snprintf(s->st.engine, sizeof(s->st.engine), "%s", engine);
	s->st.routings++;
	s->st.route_seconds = res->route_seconds;
	s->st.routed_at = time(NULL);
	s->st.vls = res->verified ? verify_count_bits(res->verify.vls_used) : 0;
	s->st.jobs = res->jobs;
	s->st.job_hosts = res->job_hosts;
	s->st.unknown_hosts = res->unknown_hosts;
	s->st.fallbacks = res->fallbacks;
	s->st.quality_known = res->quality_known;
	s->st.efi_max = res->efi_max;
	s->st.efi_mean = res->efi_mean;
	s->st.channels = res->channels;
	s->st.dark_channels = res->dark_channels;
	s->st.last_error[0] = '\0';
	if (topo) {
		free(s->st.topology);
		s->st.topology = topo;
		s->st.topology_len = len;
		s->st.topology_ports = nports;
	}
	pthread_mutex_unlock(&s->lock);
}

void ctl_note_failure(struct sarnue_plugin *p, const char *engine, const char *msg)
{
	struct ctl_server *s = p->ctl;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	snprintf(s->st.last_error, sizeof(s->st.last_error), "%s: %s", engine, msg);
	pthread_mutex_unlock(&s->lock);
}

void ctl_note_tables_programmed(struct sarnue_plugin *p)
{
	struct ctl_server *s = p->ctl;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->st.programmed++;
	pthread_mutex_unlock(&s->lock);
}

void ctl_note_routing_started(struct sarnue_plugin *p)
{
	struct ctl_server *s = p->ctl;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->st.reroute_pending = 0;
	pthread_mutex_unlock(&s->lock);
}

void ctl_note_mcast(struct sarnue_plugin *p, unsigned trees, unsigned refused)
{
	struct ctl_server *s = p->ctl;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->st.mcast_trees = trees;
	s->st.mcast_refused = refused;
	pthread_mutex_unlock(&s->lock);
}

/*
 * Called as each routing starts (routings never overlap): the previous routing is done with
 * the copy it was handed, so that one may close now if a newer map replaced it.
 */
void ctl_job_map_path(struct sarnue_plugin *p, char *buf, size_t size, char *name, size_t name_size)
{
	struct ctl_server *s = p->ctl;

	snprintf(buf, size, "%s", p->opts.job_map);
	name[0] = '\0';
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	if (s->handed_fd >= 0 && s->handed_fd != s->jobs_fd)
		close(s->handed_fd);
	s->handed_fd = s->jobs_fd;
	if (s->jobs_fd >= 0) {
		snprintf(buf, size, "/proc/self/fd/%d", s->jobs_fd);
		snprintf(name, name_size, "%s (from ctl jobs)", s->st.job_map);
	}
	pthread_mutex_unlock(&s->lock);
}
