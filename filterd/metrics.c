/*
 * metrics.c - sarnue-filterd's own state for monitoring: after every poll, --metrics-file PATH
 * gets the Prometheus text exposition of the poll counts, the last poll's outcome and figures,
 * and the decisions taken, written atomically so that node_exporter's textfile collector never
 * reads half a file.  The names start sarnue_filterd_, beside the plugin's sarnue_ metrics of
 * `sarnue ctl metrics`.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fabric/loaders.h"
#include "filterd/filterd_private.h"

static const char *const decisions[FILTERD_DECISIONS] = {
	"no change", "deferred", "low gain", "reroute", "reroute pending", "error",
};

void metrics_count(struct filterd *d, const struct poll_report *r)
{
	unsigned i;

	if (!r->ok)
		d->poll_errors++;
	for (i = 0; i < FILTERD_DECISIONS; i++)
		if (r->decision && !strcmp(r->decision, decisions[i]))
			d->decisions[i]++;
}

struct metrics_view {
	const struct filterd *d;
	const struct poll_report *r;
};

static void metric(FILE *out, const char *name, const char *type, const char *help, double v)
{
	fprintf(out, "# HELP sarnue_filterd_%s %s\n# TYPE sarnue_filterd_%s %s\n", name, help, name,
		type);
	fprintf(out, "sarnue_filterd_%s %.15g\n", name, v);
}

static int write_metrics(const void *ctx, FILE *out)
{
	const struct metrics_view *m = ctx;
	const struct filterd *d = m->d;
	const struct poll_report *r = m->r;
	unsigned i;

	metric(out, "polls_total", "counter", "Polls of Slurm since the daemon started.",
	       (double)d->polls);
	metric(out, "poll_errors_total", "counter", "Polls that failed (squeue, fabric).",
	       (double)d->poll_errors);
	metric(out, "reroutes_total", "counter", "Job maps the plugin accepted.",
	       (double)d->reroutes);
	metric(out, "last_poll_ok", "gauge", "1 when the last poll worked.", r->ok);
	metric(out, "last_poll_timestamp_seconds", "gauge", "When the last poll ended (Unix time).",
	       (double)time(NULL));
	metric(out, "poll_seconds", "gauge", "Duration of the last poll.", r->seconds);
	metric(out, "squeue_seconds", "gauge", "Duration of the last squeue call.",
	       r->squeue_seconds);
	metric(out, "jobs_running", "gauge", "Running jobs in the last poll.", r->st.running);
	metric(out, "jobs_multi_switch", "gauge", "Running jobs on several leaf switches.",
	       r->st.multi_switch);
	metric(out, "multi_switch_hosts", "gauge", "Hosts of the multi-switch jobs.",
	       r->st.multi_hosts);
	metric(out, "unknown_hosts", "gauge", "Hostnames of running jobs the fabric lacks.",
	       r->unknown);
	fputs("# HELP sarnue_filterd_decisions_total Polls by decision.\n"
	      "# TYPE sarnue_filterd_decisions_total counter\n",
	      out);
	for (i = 0; i < FILTERD_DECISIONS; i++)
		fprintf(out, "sarnue_filterd_decisions_total{decision=\"%s\"} %lu\n", decisions[i],
			d->decisions[i]);
	return ferror(out) ? -1 : 0;
}

int metrics_write(const struct filterd *d, const struct poll_report *r)
{
	struct metrics_view m = { d, r };

	return write_file_atomic(d->a.metrics, write_metrics, &m);
}
