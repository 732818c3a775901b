/*
 * notify_driver.c - a test-only OpenSM event plugin (libsarnue-notify-test.so, built by
 * `make check`, never installed) that drives plugin/notify.c end to end under ibsim, until the
 * five-phase phase machine exists: once `subscribers=N` ports subscribed to the path traps, it
 * sends UnPath(seq) to all, re-sends every `interval_ms` while acknowledgements are missing
 * (`rounds` retries before a subscriber expires), then RePath(seq) the same way, logging each
 * step with the prefix "sarnue-test:".  No LFTs change: it exercises only the wire format,
 * the retries and the bookkeeping.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <opensm/osm_event_plugin.h>
#include <opensm/osm_version.h>

#include "notify.h"

struct driver {
	osm_opensm_t *osm;
	struct notify notify;
	pthread_t thread;
	pthread_mutex_t lock; /* guards subnet_up and stop */
	int subnet_up, stop, started;
	unsigned subscribers, interval_ms, rounds, start_delay_ms;
};

static void dlog(struct driver *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void dlog(struct driver *d, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	osm_log(&d->osm->log, OSM_LOG_INFO, "sarnue-test: %s\n", buf);
}

/* Sleeps ms unless asked to stop; returns non-zero when stopping. */
static int nap(struct driver *d, unsigned ms)
{
	unsigned slept;
	int stop = 0;

	for (slept = 0; slept < ms && !stop; slept += 50) {
		usleep(50000);
		pthread_mutex_lock(&d->lock);
		stop = d->stop;
		pthread_mutex_unlock(&d->lock);
	}
	return stop;
}

static int phase(struct driver *d, enum wire_kind kind, uint32_t seq)
{
	struct wire_lid_range all = { 1, WIRE_LID_MAX_UNICAST };
	unsigned round;
	int pending;

	pending = notify_begin(&d->notify, d->osm, kind, seq, 1, &all, 1);
	if (pending < 0)
		return -1;
	for (round = 0; pending > 0 && round <= d->rounds; round++) {
		if (nap(d, d->interval_ms))
			return -1;
		if (!notify_pending(&d->notify))
			break;
		pending = notify_retry(&d->notify, d->osm);
	}
	dlog(d, "%s seq %u finished: %zu subscriber(s) still pending", wire_kind_name(kind), seq,
	     notify_pending(&d->notify));
	notify_end(&d->notify);
	return 0;
}

static void *run(void *arg)
{
	struct driver *d = arg;
	uint32_t seq;
	int up = 0, n = 0;

	while (!nap(d, 200)) {
		pthread_mutex_lock(&d->lock);
		up = d->subnet_up;
		pthread_mutex_unlock(&d->lock);
		if (up && (n = notify_count_subscribers(d->osm)) >= (int)d->subscribers)
			break;
	}
	if (!up || nap(d, d->start_delay_ms))
		return NULL;
	seq = notify_next_seq(&d->notify);
	dlog(d, "%d subscriber(s), starting update seq %u", n, seq);
	if (phase(d, WIRE_KIND_UNPATH, seq) || phase(d, WIRE_KIND_REPATH, seq))
		return NULL;
	dlog(d, "update seq %u done", seq);
	return NULL;
}

static unsigned option(const char *opts, const char *key, unsigned dflt)
{
	const char *p = opts ? strstr(opts, key) : NULL;

	return p && p[strlen(key)] == '=' ? (unsigned)strtoul(p + strlen(key) + 1, NULL, 10) : dflt;
}

static void *driver_create(osm_opensm_t *osm)
{
	struct driver *d = calloc(1, sizeof(*d));
	const char *opts = osm->subn.opt.event_plugin_options;

	if (!d)
		return NULL;
	d->osm = osm;
	d->subscribers = option(opts, "subscribers", 1);
	d->interval_ms = option(opts, "interval_ms", 1000);
	d->rounds = option(opts, "rounds", 3);
	d->start_delay_ms = option(opts, "start_delay_ms", 2000);
	pthread_mutex_init(&d->lock, NULL);
	notify_init(&d->notify, d->rounds);
	d->started = !pthread_create(&d->thread, NULL, run, d);
	dlog(d, "driver loaded: waiting for %u subscriber(s), retry every %u ms, %u round(s)",
	     d->subscribers, d->interval_ms, d->rounds);
	return d;
}

static void driver_delete(void *data)
{
	struct driver *d = data;

	pthread_mutex_lock(&d->lock);
	d->stop = 1;
	pthread_mutex_unlock(&d->lock);
	if (d->started)
		pthread_join(d->thread, NULL);
	notify_free(&d->notify);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

static void driver_report(void *data, osm_epi_event_id_t event_id, void *event_data)
{
	struct driver *d = data;

	if (event_id == OSM_EVENT_ID_SUBNET_UP) {
		pthread_mutex_lock(&d->lock);
		d->subnet_up = 1;
		pthread_mutex_unlock(&d->lock);
	} else if (event_id == OSM_EVENT_ID_TRAP) {
		notify_handle_trap(&d->notify, d->osm, event_data);
	}
}

osm_event_plugin_t osm_event_plugin = {
	.osm_version = OSM_VERSION,
	.create = driver_create,
	.delete = driver_delete,
	.report = driver_report,
};
