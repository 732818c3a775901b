/*
 * ctlclient.c - connects to the plugin's control socket and exchanges one command and its reply
 * (doc/ctl-protocol.md).  Every read and write has a deadline (SO_RCVTIMEO/SO_SNDTIMEO), so a
 * hung OpenSM cannot hang the operator's shell or the filter daemon.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/ctlclient.h"
#include "lib/arena.h"

int ctl_connect(const char *path, double timeout_seconds, struct fab_error *err)
{
	struct sockaddr_un addr;
	struct timeval tv;
	int fd;

	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(addr.sun_path)) {
		fab_error_set(err, "%s: socket path too long", path);
		return -1;
	}
	strcpy(addr.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fab_error_set(err, "socket: %s", strerror(errno));
		return -1;
	}
	tv.tv_sec = (time_t)timeout_seconds;
	tv.tv_usec = (suseconds_t)((timeout_seconds - (double)tv.tv_sec) * 1e6);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
	    connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		fab_error_set(err, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static int send_all(int fd, const char *buf, size_t len, struct fab_error *err)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fab_error_set(err, "sending to the control socket: %s",
				      n < 0 ? strerror(errno) : "connection closed");
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Sends the first bytes of buf with pass_fd attached, then the rest. */
static int send_with_fd(int fd, const char *buf, size_t len, int pass_fd, struct fab_error *err)
{
	union {
		struct cmsghdr align;
		char space[CMSG_SPACE(sizeof(int))];
	} ctrl;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctrl.space,
		.msg_controllen = sizeof(ctrl.space),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
	ssize_t n;

	memset(ctrl.space, 0, sizeof(ctrl.space));
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &pass_fd, sizeof(int));
	do
		n = sendmsg(fd, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n <= 0) {
		fab_error_set(err, "sending to the control socket: %s",
			      n < 0 ? strerror(errno) : "connection closed");
		return -1;
	}
	return send_all(fd, buf + n, len - (size_t)n, err);
}

/* Reads one line (without '\n') into line; returns its length or -1. */
static int read_line(int fd, char *line, size_t size, struct fab_error *err)
{
	size_t len = 0;

	for (;;) {
		char c;
		ssize_t n = recv(fd, &c, 1, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fab_error_set(err, "reading the control socket: %s",
				      n == 0 ? "connection closed by the plugin"
				      : errno == EAGAIN || errno == EWOULDBLOCK ? "timed out"
										: strerror(errno));
			return -1;
		}
		if (c == '\n')
			break;
		if (len + 1 >= size) {
			fab_error_set(err, "reply line longer than %zu bytes", size - 1);
			return -1;
		}
		line[len++] = c;
	}
	line[len] = '\0';
	return (int)len;
}

static int append_data(struct ctl_reply *reply, const char *line, size_t len, struct fab_error *err)
{
	if (fab_reserve(&reply->data, &reply->data_cap, reply->data_len + len + 2, 4096)) {
		fab_error_set(err, "out of memory");
		return -1;
	}
	memcpy(reply->data + reply->data_len, line, len);
	reply->data_len += len;
	reply->data[reply->data_len++] = '\n';
	reply->data[reply->data_len] = '\0';
	return 0;
}

/* The first word of line is w: "ok", "ok ..." but not "okay". */
static int first_word_is(const char *line, const char *w)
{
	size_t n = strlen(w);

	return !strncmp(line, w, n) && (line[n] == '\0' || line[n] == ' ');
}

static void set_final(struct ctl_reply *reply, const char *line, size_t skip)
{
	const char *rest = line + skip;

	while (*rest == ' ')
		rest++;
	snprintf(reply->final, sizeof(reply->final), "%s", rest);
}

int ctl_request(int fd, const char *command, struct ctl_reply *reply, struct fab_error *err)
{
	return ctl_request_fd(fd, command, -1, reply, err);
}

int ctl_request_fd(int fd, const char *command, int pass_fd, struct ctl_reply *reply,
		   struct fab_error *err)
{
	char line[CTL_LINE_MAX + 1];
	size_t n = strlen(command);
	int len;

	memset(reply, 0, sizeof(*reply));
	if (strchr(command, '\n') || n >= CTL_LINE_MAX) {
		fab_error_set(err, "command must be one line shorter than %d bytes", CTL_LINE_MAX);
		return -1;
	}
	memcpy(line, command, n);
	line[n++] = '\n';
	if (pass_fd >= 0 ? send_with_fd(fd, line, n, pass_fd, err) : send_all(fd, line, n, err))
		return -1;
	while ((len = read_line(fd, line, sizeof(line), err)) >= 0) {
		if (first_word_is(line, "ok") || first_word_is(line, "error")) {
			reply->ok = line[0] == 'o';
			set_final(reply, line, reply->ok ? 2 : 5);
			return 0;
		}
		if (append_data(reply, line, (size_t)len, err))
			break;
	}
	ctl_reply_free(reply);
	return -1;
}

void ctl_reply_free(struct ctl_reply *reply)
{
	free(reply->data);
	reply->data = NULL;
	reply->data_len = reply->data_cap = 0;
}
