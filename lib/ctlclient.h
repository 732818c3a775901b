/*
 * ctlclient.h - the client side of the plugin's control socket (doc/ctl-protocol.md), shared by
 * `sarnue ctl` and sarnue-filterd so that both speak the protocol through one implementation.
 */
#ifndef SARNUE_CTLCLIENT_H
#define SARNUE_CTLCLIENT_H

#include "lib/error.h"

#define CTL_DEFAULT_SOCKET "/run/sarnue/ctl.sock"
#define CTL_LINE_MAX 4096

struct ctl_reply {
	char *data; /* data lines, each ending in '\n'; NUL-terminated, may be empty */
	size_t data_len, data_cap;
	int ok;			  /* the final line started with "ok" */
	char final[CTL_LINE_MAX]; /* the final line without "ok"/"error" and without '\n' */
};

/* Connects to the socket at path; returns the descriptor or -1 with err naming path. */
int ctl_connect(const char *path, double timeout_seconds, struct fab_error *err);

/*
 * Sends one command line (without '\n') and reads the reply up to its final line.  Returns 0
 * when a complete reply arrived (ok or error), -1 on a transport failure or timeout.
 */
int ctl_request(int fd, const char *command, struct ctl_reply *reply, struct fab_error *err);

/*
 * Same, and passes the open descriptor pass_fd with the line (SCM_RIGHTS): how `jobs` hands the
 * plugin a job map that the client, with its own rights, opened.
 */
int ctl_request_fd(int fd, const char *command, int pass_fd, struct ctl_reply *reply,
		   struct fab_error *err);

void ctl_reply_free(struct ctl_reply *reply);

#endif
