/*
 * ctl.c - the plugin's control socket (doc/ctl-protocol.md): status, reroute, jobs FILE and
 * topology for `sarnue ctl`, the filter daemon and scripts.
 *
 * One thread serves every client with poll() on non-blocking descriptors, so OpenSM's sweeps
 * never wait for a client.  What the thread shares with OpenSM's routing (the status, the
 * installed job map path, the topology text) lives in struct ctl_state behind one mutex that is
 * held only to copy a few fields; routing results arrive through ctl_note_routing().
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "jobmap.h"
#include "json.h"
#include "plugin.h"
#include "verify.h"

#define CTL_MAX_CLIENTS 16
#define CTL_IDLE_SECONDS 30
#define CTL_LINE_MAX 4096

struct ctl_state {
	char engine[32];     /* empty before the first routing by a sarnue engine */
	unsigned routings;   /* routings by a sarnue engine */
	unsigned programmed; /* times OpenSM reported the unicast tables written to the switches */
	double route_seconds;
	time_t routed_at;
	unsigned vls;
	uint32_t jobs, job_hosts, unknown_hosts, fallbacks;
	char last_error[512];
	int reroute_pending;
	char job_map[OPT_PATH_MAX]; /* installed by `jobs FILE`; empty: the job_map option */
	char *topology;		    /* `host ...` lines of the last routing */
	size_t topology_len;
	uint32_t topology_ports;
};

struct ctl_client {
	int fd; /* -1: free slot */
	char in[CTL_LINE_MAX + 1];
	size_t in_len;
	char *out;
	size_t out_len, out_sent, out_cap;
	time_t last_active;
	int closing; /* close once the output is sent */
	int discard; /* after an over-long line: read and drop input until the peer closes */
};

struct ctl_server {
	struct sarnue_plugin *p;
	pthread_t thread;
	int listen_fd;
	int wake[2]; /* writing to wake[1] stops the thread */
	pthread_mutex_t lock;
	struct ctl_state st;
	struct ctl_client clients[CTL_MAX_CLIENTS];
};

static void reply(struct ctl_client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void reply(struct ctl_client *c, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (fab_reserve(&c->out, &c->out_cap, c->out_len + (size_t)n + 1, 4096)) {
		c->closing = 1; /* out of memory: drop the client rather than OpenSM */
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
	fprintf(out, ",\"reroute_pending\":%s", st.reroute_pending ? "true" : "false");
	update_status_json(s->p, out);
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

static void cmd_jobs(struct ctl_server *s, struct ctl_client *c, const char *path)
{
	struct fab_error err = { "" };
	struct job_map jm;

	if (!*path) {
		reply(c, "error usage: jobs FILE\n");
		return;
	}
	if (path[0] != '/' || strlen(path) >= OPT_PATH_MAX) {
		reply(c, "error %s: the job map path must be absolute and shorter than %d bytes\n",
		      path, OPT_PATH_MAX);
		return;
	}
	job_map_init(&jm);
	if (job_map_parse(&jm, path, &err)) {
		reply(c, "error %s\n", err.msg);
		return;
	}
	pthread_mutex_lock(&s->lock);
	strcpy(s->st.job_map, path);
	pthread_mutex_unlock(&s->lock);
	plog(s->p, OSM_LOG_INFO,
	     "ctl: job map %s installed (%u entries, %u jobs); reroute requested", path,
	     jm.nentries, jm.njobs);
	reply(c, "ok job map %s installed: %u entries, %u jobs; reroute requested\n", path,
	      jm.nentries, jm.njobs);
	job_map_free(&jm);
	request_reroute(s);
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
		 "command jobs FILE         check and install a job map, then reroute\n"
		 "command topology          host NAME NODE_GUID PORT_GUID LEAF_GUID per CA port\n"
		 "command help              this list\n"
		 "ok\n");
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
	else if (!strcmp(cmd, "reroute") && !*arg) {
		plog(s->p, OSM_LOG_INFO, "ctl: reroute requested");
		request_reroute(s);
		reply(c, "ok reroute requested\n");
	} else if (!strcmp(cmd, "jobs"))
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

/* Runs every complete line in the input buffer. */
static void take_lines(struct ctl_server *s, struct ctl_client *c)
{
	char *nl;

	while (!c->discard && (nl = memchr(c->in, '\n', c->in_len))) {
		size_t used = (size_t)(nl - c->in) + 1;

		*nl = '\0';
		run_command(s, c, c->in);
		memmove(c->in, c->in + used, c->in_len - used);
		c->in_len -= used;
	}
	if (c->in_len >= CTL_LINE_MAX) {
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
	free(c->out);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

static void client_read(struct ctl_server *s, struct ctl_client *c)
{
	char scratch[CTL_LINE_MAX];
	ssize_t n = c->discard ? recv(c->fd, scratch, sizeof(scratch), 0)
			       : recv(c->fd, c->in + c->in_len, CTL_LINE_MAX - c->in_len, 0);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		c->closing = 1;
		c->out_len = c->out_sent = 0; /* connection broken: nothing to deliver */
		return;
	}
	if (n == 0) {
		/* The peer is done sending; what we owe it still goes out. */
		c->closing = 1;
		c->discard = 0;
		return;
	}
	if (c->discard)
		return;
	c->in_len += (size_t)n;
	c->last_active = time(NULL);
	take_lines(s, c);
}

static void client_write(struct ctl_client *c)
{
	ssize_t n = send(c->fd, c->out + c->out_sent, c->out_len - c->out_sent,
			 MSG_DONTWAIT | MSG_NOSIGNAL);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		c->closing = 1;
		c->out_len = c->out_sent = 0;
		return;
	}
	c->out_sent += (size_t)n;
	c->last_active = time(NULL);
	if (c->out_sent == c->out_len)
		c->out_len = c->out_sent = 0;
}

static void accept_client(struct ctl_server *s)
{
	int fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	static const char full[] = "error too many clients, try again\n";
	unsigned i;

	if (fd < 0)
		return;
	for (i = 0; i < CTL_MAX_CLIENTS; i++) {
		if (s->clients[i].fd < 0) {
			s->clients[i].fd = fd;
			s->clients[i].last_active = time(NULL);
			return;
		}
	}
	if (send(fd, full, sizeof(full) - 1, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		plog(s->p, OSM_LOG_ERROR, "ERR ctl: cannot refuse a client: %s", strerror(errno));
	close(fd);
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

			if (c->fd < 0)
				continue;
			who[n] = c;
			fds[n++] = (struct pollfd){
				.fd = c->fd,
				.events = (short)((c->closing ? 0 : POLLIN) |
						  (c->out_len ? POLLOUT : 0)),
			};
		}
		if (poll(fds, n, 1000) < 0 && errno != EINTR)
			break;
		if (fds[0].revents)
			break;
		if (fds[1].revents & POLLIN)
			accept_client(s);
		now = time(NULL);
		for (i = 2; i < n; i++) {
			struct ctl_client *c = who[i];

			if (fds[i].revents & POLLIN)
				client_read(s, c);
			else if (fds[i].revents & (POLLHUP | POLLERR))
				c->closing = 1, c->out_len = c->out_sent = 0;
			if (c->out_len && (fds[i].revents & POLLOUT))
				client_write(c);
			if ((c->closing && !c->out_len) || now - c->last_active > CTL_IDLE_SECONDS)
				client_close(c);
		}
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
	s = calloc(1, sizeof(*s));
	if (!s)
		return -1;
	s->p = p;
	s->listen_fd = s->wake[0] = s->wake[1] = -1;
	for (i = 0; i < CTL_MAX_CLIENTS; i++)
		s->clients[i].fd = -1;
	pthread_mutex_init(&s->lock, NULL);
	if (pipe2(s->wake, O_CLOEXEC) || open_listener(s, path))
		goto fail;
	if (pthread_create(&s->thread, NULL, ctl_thread, s)) {
		unlink(path);
		goto fail;
	}
	p->ctl = s;
	plog(p, OSM_LOG_INFO, "ctl: listening on %s (mode %04o%s%s)", path, p->opts.ctl_mode,
	     p->opts.ctl_group[0] ? ", group " : "", p->opts.ctl_group);
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

void ctl_job_map_path(struct sarnue_plugin *p, char *buf, size_t size)
{
	struct ctl_server *s = p->ctl;

	snprintf(buf, size, "%s", p->opts.job_map);
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	if (s->st.job_map[0])
		snprintf(buf, size, "%s", s->st.job_map);
	pthread_mutex_unlock(&s->lock);
}
