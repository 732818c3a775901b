/*
 * decide.c - the reroute decision of one poll and the handoff.  filter_decide() (jobfilter.c)
 * compares the node sets with those the plugin routes for and honours the minimum time between
 * reroutes; with --min-gain the gain sar-dfsssp would bring is predicted on OpenSM's dumps
 * first.  A reroute writes the job map atomically and sends `jobs FILE` over the control socket.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check/metrics.h"
#include "check/throughput.h"
#include "engines/engines.h"
#include "engines/options.h"
#include "fabric/loaders.h"
#include "filterd/filterd_private.h"
#include "lib/assert.h"

/* ------------------------------------------------------------------ predicted gain */

static int write_map_cb(const void *ctx, FILE *out)
{
	const struct filterd *d = ctx;

	return jobset_write_map(&d->js, &d->topo, out);
}

/*
 * What --min-gain compares for routing r and the job map: the maximum effective EFI (lower is
 * better), or with --gain-model throughput the slowest intra-job flow's rate as a fraction of
 * its demand in the max-min model, every job all-to-all (higher is better).
 */
static int job_measure(const struct filterd *d, const struct fabric *f, const struct routing *r,
		       const char *map, double *v, struct fab_error *err)
{
	struct metrics_options mo;
	struct metrics_jobs mj;
	struct tput_result tr;
	struct job_map jm;
	int ret = -1;

	job_map_init(&jm);
	metrics_options_default(&mo);
	memset(&mj, 0, sizeof(mj));
	if (job_map_parse(&jm, map, err) || job_map_bind(&jm, f, JOB_MATCH_FIRST_WORD, NULL, err))
		goto out;
	if (d->a.gain_throughput) {
		ret = tput_run(f, r, "jobs", &mo, NULL, 0, &jm, &tr, err);
		if (ret == -1)
			fab_error_set(err, "throughput model: out of memory");
		if (ret) {
			ret = -1;
			goto out;
		}
		*v = tr.min;
	} else {
		if (metrics_effective_efi(f, r, &jm, &mo, &mj)) {
			fab_error_set(err, "effective EFI: out of memory");
			goto out;
		}
		*v = (double)mj.dist.max;
	}
	ret = 0;
out:
	metrics_jobs_free(&mj);
	job_map_free(&jm);
	return ret;
}

/* The LFT dump beside the subnet file, unless --lfts names one. */
static void lfts_path(const struct filterd_args *a, const char *subnet, char *out, size_t size)
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
static int predicted_gain(struct filterd *d, double *gain, double *cur, double *pred,
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
	    job_measure(d, &f, &r, map, cur, err))
		goto out;
	options_defaults(&o);
	if (snprintf(o.job_map, sizeof(o.job_map), "%s", map) >= (int)sizeof(o.job_map)) {
		fab_error_set(err, "%s: path too long", map);
		goto out;
	}
	o.verify = 0;
	if (routing_init(&p, &f, "sar-dfsssp") || engine_run("sar-dfsssp", &f, &o, &p, &res, err) ||
	    job_measure(d, &f, &p, map, pred, err))
		goto out;
	if (d->a.gain_throughput)
		*gain = *cur > 0 ? 100.0 * (*pred - *cur) / *cur : 0;
	else
		*gain = *cur > 0 ? 100.0 * (*cur - *pred) / *cur : 0;
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

/* Decides and hands a changed job map over; -1 when the plugin could not be told. */
int decide(struct filterd *d, struct poll_report *rep, double now)
{
	struct decide_in in = { &d->installed, &d->js.keys, now, d->last_reroute,
				d->a.min_interval };
	struct decide_out out;
	struct fab_error err;
	double cur = 0, pred = 0, gain = 0;
	const char *what = d->a.gain_throughput ? "slowest job flow" : "max effective EFI";
	int digits = d->a.gain_throughput ? 4 : 0;

	filter_decide(&in, &out);
	rep->added = out.added;
	rep->removed = out.removed;
	if (out.decision == DECIDE_NO_CHANGE) {
		rep->decision = "no change";
		snprintf(rep->reason, sizeof(rep->reason), "same %u multi-switch node set(s)",
			 d->js.keys.n);
		return 0;
	}
	sn_assert(out.added || out.removed);
	if (out.decision == DECIDE_DEFERRED) {
		/* Only a reroute done before can make one too soon. */
		sn_assert(d->last_reroute >= 0 && out.wait > 0);
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
				"node sets changed (+%u -%u) but %s %.*f -> %.*f predicted, gain %.1f%% < %.1f%%",
				out.added, out.removed, what, digits, cur, digits, pred, gain,
				d->a.min_gain);
			return 0;
		}
	}
	rep->decision = "reroute";
	snprintf(rep->reason, sizeof(rep->reason), "multi-switch node sets changed (+%u -%u)",
		 out.added, out.removed);
	if (d->a.min_gain > 0)
		snprintf(rep->reason + strlen(rep->reason),
			 sizeof(rep->reason) - strlen(rep->reason),
			 ", predicted gain %.1f%% (%s %.*f -> %.*f)", gain, what, digits, cur,
			 digits, pred);
	if (!handoff(d, rep)) {
		hostlist_copy(&d->installed, &d->js.keys);
		d->last_reroute = now;
		d->reroutes++;
		return 0;
	}
	rep->decision = "reroute pending";
	return -1;
}
