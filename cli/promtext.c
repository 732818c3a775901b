/*
 * promtext.c - the plugin's status JSON as Prometheus text.  Every number becomes a gauge named
 * after its path ("update.pending_acks" -> sarnue_update_pending_acks), the counts that only grow
 * become counters (_total), booleans 0 or 1, arrays one sample per element (label "index"), and
 * the strings that name the state (engine, phase, job map, the last error) go into one
 * sarnue_info sample as labels, so a dashboard can show them without a metric per value.
 * Fields the plugin adds later come out as gauges without being listed here.
 */
#include "cli/promtext.h"

#include <stdlib.h>
#include <string.h>

#include "lib/json.h"

#define PROM_MAX_PATH 96
#define PROM_MAX_LABELS 8

struct prom {
	FILE *out;
	struct json j;
	struct json_buf key, str;
	char labels[PROM_MAX_LABELS][2][256]; /* name, value of the info sample */
	unsigned nlabels;
};

/* What the known fields mean; a counter gets _total. */
static const struct {
	const char *path, *type, *help;
} known[] = {
	{ "routings", "counter", "Routings by a sarnue engine since OpenSM started." },
	{ "tables_programmed", "counter",
	  "Times OpenSM wrote the unicast tables to the switches." },
	{ "last_route_seconds", "gauge", "Duration of the last routing." },
	{ "vls", "gauge", "VLs the last routing uses." },
	{ "jobs", "gauge", "Jobs in the job map of the last routing." },
	{ "job_hosts", "gauge", "Hosts in the job map of the last routing." },
	{ "unknown_hosts", "gauge", "Job map hostnames the fabric does not know." },
	{ "fallbacks", "gauge", "Destinations on escape paths or moved to Nue layering." },
	{ "efi_max", "gauge",
	  "Highest edge forwarding index of the last routing: routes on its busiest switch-to-switch channel." },
	{ "efi_mean", "gauge", "Mean edge forwarding index over switch-to-switch channels." },
	{ "channels", "gauge", "Directed switch-to-switch channels of the fabric routed." },
	{ "dark_channels", "gauge",
	  "Switch-to-switch channels no route of the last routing uses." },
	{ "reroute_pending", "gauge", "1 while a reroute was asked for and has not started." },
	{ "multicast_trees", "gauge",
	  "Multicast groups with an engine-built tree since the routing." },
	{ "multicast_refused", "gauge", "Multicast groups refused a tree since the routing." },
	{ "update_updates", "counter", "Five-phase updates run." },
	{ "update_aborted", "counter", "Five-phase updates aborted." },
	{ "update_pending_acks", "gauge", "Hosts not yet acknowledged in the current wait." },
	{ "update_subscribers", "gauge", "Hosts subscribed to update reports." },
};

static int find_known(const char *path)
{
	size_t i;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(known[i].path, path))
			return (int)i;
	return -1;
}

/* "update.pending_acks" -> "update_pending_acks": metric names allow [a-zA-Z0-9_:]. */
static void metric_name(const char *path, char *out, size_t size)
{
	size_t i;

	snprintf(out, size, "%s", path);
	for (i = 0; out[i]; i++)
		if (!((out[i] >= 'a' && out[i] <= 'z') || (out[i] >= 'A' && out[i] <= 'Z') ||
		      (out[i] >= '0' && out[i] <= '9') || out[i] == '_'))
			out[i] = '_';
}

static void sample(struct prom *p, const char *path, const char *index, double v)
{
	char name[PROM_MAX_PATH];
	int k;

	metric_name(path, name, sizeof(name));
	k = find_known(name);
	if (!index || !strcmp(index, "0")) {
		if (k >= 0)
			fprintf(p->out, "# HELP sarnue_%s%s %s\n# TYPE sarnue_%s%s %s\n", name,
				!strcmp(known[k].type, "counter") ? "_total" : "", known[k].help,
				name, !strcmp(known[k].type, "counter") ? "_total" : "",
				known[k].type);
		else
			fprintf(p->out, "# TYPE sarnue_%s gauge\n", name);
	}
	fprintf(p->out, "sarnue_%s%s", name,
		k >= 0 && !strcmp(known[k].type, "counter") ? "_total" : "");
	if (index)
		fprintf(p->out, "{index=\"%s\"}", index);
	fprintf(p->out, " %.17g\n", v);
}

static void add_label(struct prom *p, const char *path, const char *value)
{
	char name[PROM_MAX_PATH];

	if (p->nlabels >= PROM_MAX_LABELS)
		return;
	metric_name(path, name, sizeof(name));
	snprintf(p->labels[p->nlabels][0], sizeof(p->labels[0][0]), "%s", name);
	snprintf(p->labels[p->nlabels][1], sizeof(p->labels[0][1]), "%s", value);
	p->nlabels++;
}

static int value(struct prom *p, const char *path, const char *index);

static int array(struct prom *p, const char *path)
{
	unsigned i = 0; /* json_array_next counts the elements from 0 */
	int rc;
	char idx[16];

	if (json_array_begin(&p->j))
		return -1;
	while ((rc = json_array_next(&p->j, &i)) == 1) {
		snprintf(idx, sizeof(idx), "%u", i - 1);
		if (value(p, path, idx))
			return -1;
	}
	return rc;
}

static int object(struct prom *p, const char *prefix)
{
	unsigned i = 0; /* json_object_next counts the members from 0 */
	int rc;

	if (json_object_begin(&p->j))
		return -1;
	while ((rc = json_object_next(&p->j, &i, &p->key)) == 1) {
		char path[PROM_MAX_PATH];

		snprintf(path, sizeof(path), "%s%s%s", prefix, *prefix ? "." : "", p->key.s);
		if (value(p, path, NULL))
			return -1;
	}
	return rc;
}

static int value(struct prom *p, const char *path, const char *index)
{
	double d;
	int b;

	switch (json_peek(&p->j)) {
	case JSON_OBJECT:
		return object(p, path);
	case JSON_ARRAY:
		return index ? json_skip(&p->j) : array(p, path);
	case JSON_NUMBER:
		if (json_number(&p->j, &d))
			return -1;
		sample(p, path, index, d);
		return 0;
	case JSON_TRUE:
	case JSON_FALSE:
		if (json_bool(&p->j, &b))
			return -1;
		sample(p, path, index, b);
		return 0;
	case JSON_STRING:
		if (json_string(&p->j, &p->str))
			return -1;
		if (!index)
			add_label(p, path, p->str.s);
		return 0;
	case JSON_NULL:
		return json_null(&p->j);
	default:
		return json_fail(&p->j, "expected a value");
	}
}

/* A label value: backslash, double quote and newline escaped. */
static void write_label_value(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', out);
		if (*s == '\n') {
			fputs("\\n", out);
			continue;
		}
		fputc(*s, out);
	}
}

int prom_write_status(const char *json, FILE *out, struct fab_error *err)
{
	struct prom *p = calloc(1, sizeof(*p));
	unsigned i;
	int rc = -1;

	if (!p) {
		fab_error_set(err, "out of memory");
		return -1;
	}
	p->out = out;
	json_init(&p->j, json, strlen(json), "status", err);
	fputs("# HELP sarnue_up 1 when the plugin answered on its control socket.\n"
	      "# TYPE sarnue_up gauge\nsarnue_up 1\n",
	      out);
	if (object(p, "") || json_end(&p->j))
		goto out;
	fputs("# HELP sarnue_info The plugin's state as labels.\n# TYPE sarnue_info gauge\n"
	      "sarnue_info{",
	      out);
	for (i = 0; i < p->nlabels; i++) {
		fprintf(out, "%s%s=\"", i ? "," : "", p->labels[i][0]);
		write_label_value(out, p->labels[i][1]);
		fputc('"', out);
	}
	fputs("} 1\n", out);
	rc = 0;
out:
	json_buf_free(&p->key);
	json_buf_free(&p->str);
	free(p);
	return rc;
}

void prom_write_down(FILE *out)
{
	fputs("# HELP sarnue_up 1 when the plugin answered on its control socket.\n"
	      "# TYPE sarnue_up gauge\nsarnue_up 0\n",
	      out);
}
