/*
 * perfmgr.c - collects OpenSM PerfMgr's data counter reports for traffic=perfmgr (perfmgr.h).
 *
 * PerfMgr reports every port it reads as the difference from its previous reading
 * (osm_epi_dc_event_t, data in 4-byte words), on the threads that receive its MADs, while the
 * sweep thread may be routing; so the store sits behind one mutex, held only to add a report or
 * to copy the window's sums.  Each port keeps its bytes in eighths of the window; the first
 * report of a port, and the first after a silence longer than the window, is PerfMgr's reading
 * since the counters were last cleared (possibly since boot), so it only sets the baseline.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <opensm/osm_config.h> /* first: see context.h */
#include <opensm/osm_event_plugin.h>

#include "fabric/traffic.h"
#include "lib/json.h"
#include "plugin/context.h"
#include "plugin/log.h"
#include "plugin/perfmgr.h"

#define PM_BUCKETS 8
/* Deltas above this (bytes) are not traffic but a counter gone wrong. */
#define PM_IMPLAUSIBLE (UINT64_C(1) << 60)

struct pm_bucket {
	int64_t epoch; /* time / bucket length when the bucket was filled */
	uint64_t xmit, rcv;
};

struct pm_port {
	uint64_t guid;
	uint8_t port;
	uint8_t used;
	int64_t last; /* seconds of the last report */
	struct pm_bucket bucket[PM_BUCKETS];
};

struct perfmgr_store {
	pthread_mutex_t lock;
	struct pm_port *slot;
	uint32_t cap, count;
	unsigned window, bucket_len;
	uint64_t reports, baselines, dropped;
	int warned; /* the warning of no counters was logged and none came since */
	/* The last routing's view, for `ctl status`. */
	uint32_t last_ports;
	char last_estimate[512];
};

static int64_t now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec;
}

void perfmgr_start(struct sarnue_plugin *p)
{
	struct perfmgr_store *s;

	if (strcmp(p->opts.traffic, OPT_TRAFFIC_PERFMGR))
		return;
	s = calloc(1, sizeof(*s));
	if (!s || pthread_mutex_init(&s->lock, NULL)) {
		free(s);
		plog(p, OSM_LOG_ERROR, "ERR traffic=perfmgr: out of memory; uniform weights");
		return;
	}
	s->window = p->opts.traffic_window;
	s->bucket_len = (s->window + PM_BUCKETS - 1) / PM_BUCKETS;
	p->perfmgr = s;
	if (!p->osm->subn.opt.perfmgr) {
		s->warned = 1;
		plog(p, OSM_LOG_INFO,
		     "WRN traffic=perfmgr but OpenSM's perfmgr is FALSE: no counters will come;"
		     " sar-dfsssp and sar-nue route with uniform weights");
		return;
	}
	plog(p, OSM_LOG_INFO,
	     "traffic=perfmgr: the counters of the last %u s weigh the routes (PerfMgr sweeps"
	     " every %u s)",
	     s->window, (unsigned)p->osm->subn.opt.perfmgr_sweep_time_s);
}

void perfmgr_stop(struct sarnue_plugin *p)
{
	struct perfmgr_store *s = p->perfmgr;

	if (!s)
		return;
	pthread_mutex_destroy(&s->lock);
	free(s->slot);
	free(s);
	p->perfmgr = NULL;
}

static uint32_t slot_hash(uint64_t guid, uint8_t port)
{
	uint64_t x = (guid ^ ((uint64_t)port << 56)) * UINT64_C(0x9e3779b97f4a7c15);

	return (uint32_t)(x >> 32);
}

static struct pm_port *probe(struct pm_port *slot, uint32_t cap, uint64_t guid, uint8_t port)
{
	uint32_t i = slot_hash(guid, port) & (cap - 1);

	while (slot[i].used && (slot[i].guid != guid || slot[i].port != port))
		i = (i + 1) & (cap - 1);
	return &slot[i];
}

static int grow(struct perfmgr_store *s)
{
	uint32_t cap = s->cap ? 2 * s->cap : 1024, i;
	struct pm_port *slot;

	if (cap < s->cap)
		return -1;
	slot = calloc(cap, sizeof(*slot));
	if (!slot)
		return -1;
	for (i = 0; i < s->cap; i++)
		if (s->slot[i].used)
			*probe(slot, cap, s->slot[i].guid, s->slot[i].port) = s->slot[i];
	free(s->slot);
	s->slot = slot;
	s->cap = cap;
	return 0;
}

/* The port's entry, made when new; NULL when memory runs out. */
static struct pm_port *find_port(struct perfmgr_store *s, uint64_t guid, uint8_t port)
{
	struct pm_port *e;

	if (2 * (s->count + 1) > s->cap && grow(s))
		return NULL;
	e = probe(s->slot, s->cap, guid, port);
	if (!e->used) {
		memset(e, 0, sizeof(*e));
		e->used = 1;
		e->guid = guid;
		e->port = port;
		s->count++;
	}
	return e;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static uint64_t words_to_bytes(uint64_t words)
{
	return words > PM_IMPLAUSIBLE / 4 ? 0 : words * 4;
}

static void add_bytes(struct perfmgr_store *s, struct pm_port *e, int64_t now, uint64_t xmit,
		      uint64_t rcv)
{
	int64_t epoch = now / s->bucket_len;
	struct pm_bucket *b = &e->bucket[epoch % PM_BUCKETS];

	if (b->epoch != epoch) {
		b->epoch = epoch;
		b->xmit = b->rcv = 0;
	}
	b->xmit = sat_add(b->xmit, xmit);
	b->rcv = sat_add(b->rcv, rcv);
}

void perfmgr_report(struct sarnue_plugin *p, const void *event)
{
	const osm_epi_dc_event_t *ev = event;
	struct perfmgr_store *s = p->perfmgr;
	int64_t now = now_seconds();
	struct pm_port *e;
	int fresh;

	if (!s || !ev)
		return;
	pthread_mutex_lock(&s->lock);
	s->reports++;
	e = find_port(s, ev->port_id.node_guid, ev->port_id.port_num);
	if (!e) {
		s->dropped++;
		goto out;
	}
	fresh = !e->last || now - e->last > (int64_t)s->window;
	e->last = now ? now : 1;
	if (fresh) {
		s->baselines++;
		goto out;
	}
	add_bytes(s, e, now, words_to_bytes(ev->xmit_data), words_to_bytes(ev->rcv_data));
out:
	pthread_mutex_unlock(&s->lock);
}

/* The port's bytes in the window that ends now. */
static void window_sum(const struct perfmgr_store *s, const struct pm_port *e, int64_t now,
		       uint64_t *xmit, uint64_t *rcv)
{
	int64_t epoch = now / s->bucket_len;
	unsigned i;

	*xmit = *rcv = 0;
	for (i = 0; i < PM_BUCKETS; i++)
		if (e->bucket[i].epoch > epoch - PM_BUCKETS && e->bucket[i].epoch <= epoch) {
			*xmit = sat_add(*xmit, e->bucket[i].xmit);
			*rcv = sat_add(*rcv, e->bucket[i].rcv);
		}
}

/* Copies the ports with bytes in the window; *reporting counts those heard from in it. */
static int copy_window(struct perfmgr_store *s, struct traffic_counter **out, size_t *n,
		       uint32_t *reporting)
{
	int64_t now = now_seconds();
	struct traffic_counter *c;
	uint32_t i;

	*out = NULL;
	*n = 0;
	*reporting = 0;
	c = malloc(((size_t)s->count + 1) * sizeof(*c));
	if (!c)
		return -1;
	for (i = 0; i < s->cap; i++) {
		struct pm_port *e = &s->slot[i];
		uint64_t xmit, rcv;

		if (!e->used || now - e->last > (int64_t)s->window)
			continue;
		(*reporting)++;
		window_sum(s, e, now, &xmit, &rcv);
		if (!xmit && !rcv)
			continue;
		c[*n].guid = e->guid;
		c[*n].port = e->port;
		c[*n].xmit = xmit;
		c[*n].rcv = rcv;
		(*n)++;
	}
	*out = c;
	return 0;
}

void perfmgr_counters(struct sarnue_plugin *p, struct traffic_counter **out, size_t *n)
{
	struct perfmgr_store *s = p->perfmgr;
	uint64_t reports, baselines;
	uint32_t reporting = 0;
	int rc, warn;

	*out = NULL;
	*n = 0;
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	rc = copy_window(s, out, n, &reporting);
	reports = s->reports;
	baselines = s->baselines;
	s->last_ports = reporting;
	warn = !*n && !s->warned;
	s->warned = !*n;
	pthread_mutex_unlock(&s->lock);
	if (rc) {
		plog(p, OSM_LOG_ERROR, "ERR traffic=perfmgr: out of memory; uniform weights");
		return;
	}
	if (!*n) {
		free(*out);
		*out = NULL;
		if (warn)
			plog(p, OSM_LOG_INFO,
			     "WRN traffic=perfmgr: no port counted bytes in the last %u s (%u port(s)"
			     " reported, %llu report(s) in all); routing with uniform weights until"
			     " counters come",
			     s->window, reporting, (unsigned long long)reports);
		return;
	}
	plog(p, OSM_LOG_INFO,
	     "traffic=perfmgr: %u port(s) reported in the last %u s, %zu with bytes (%llu"
	     " report(s) in all, %llu baseline(s))",
	     reporting, s->window, *n, (unsigned long long)reports, (unsigned long long)baselines);
}

void perfmgr_note_estimate(struct sarnue_plugin *p, const char *text)
{
	struct perfmgr_store *s = p->perfmgr;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	snprintf(s->last_estimate, sizeof(s->last_estimate), "%s", text);
	pthread_mutex_unlock(&s->lock);
}

void perfmgr_status_json(struct sarnue_plugin *p, FILE *out)
{
	struct perfmgr_store *s = p->perfmgr;
	char estimate[512];
	uint64_t reports, baselines;
	uint32_t ports, last;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	reports = s->reports;
	baselines = s->baselines;
	ports = s->count;
	last = s->last_ports;
	memcpy(estimate, s->last_estimate, sizeof(estimate));
	pthread_mutex_unlock(&s->lock);
	fprintf(out,
		",\"perfmgr\":{\"window_s\":%u,\"reports\":%llu,\"baselines\":%llu,"
		"\"ports\":%u,\"ports_in_last_window\":%u,\"last_estimate\":",
		s->window, (unsigned long long)reports, (unsigned long long)baselines, ports, last);
	json_write_string(out, estimate);
	fputc('}', out);
}
