/*
 * notify.c - UnPath/RePath reports and trap 144 acknowledgements inside OpenSM (notify.h).
 * Reports go out through osm_report_notice(), which OpenSM itself uses to forward notices: it
 * matches every InformInfo subscription and retransmits each Report until its ReportResp.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <opensm/osm_config.h> /* first: see context.h */
#include <opensm/osm_inform.h>

#include "lib/assert.h"
#include "plugin/log.h"
#include "plugin/notify.h"

#define MAX_EXPIRED_LOGGED 16

_Static_assert(sizeof(ib_mad_notice_attr_t) == WIRE_NOTICE_LEN, "Notice attribute size");

void notify_init(struct notify *n, unsigned max_rounds)
{
	memset(n, 0, sizeof(*n));
	pthread_mutex_init(&n->lock, NULL);
	acks_init(&n->acks, max_rounds);
	/* From the clock, so that a restarted OpenSM does not repeat a number clients know. */
	n->next_seq = (uint32_t)time(NULL);
	n->ready = 1;
}

void notify_free(struct notify *n)
{
	if (!n->ready)
		return;
	acks_free(&n->acks);
	pthread_mutex_destroy(&n->lock);
	n->ready = 0;
}

uint32_t notify_next_seq(struct notify *n)
{
	uint32_t seq;

	pthread_mutex_lock(&n->lock);
	seq = n->next_seq++;
	if (!seq)
		seq = n->next_seq++;
	sn_assert(seq != 0);
	pthread_mutex_unlock(&n->lock);
	return seq;
}

/*
 * OpenSM's lock, shared, from the update's own thread.  Bounded: a report or a count can wait
 * for the next round, a blocked thread would stall the update for good.
 */
static int lock_shared(osm_opensm_t *osm)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 2;
	if (pthread_rwlock_timedrdlock(&osm->lock.lock, &ts)) {
		plog_osm(osm, OSM_LOG_ERROR, "ERR OpenSM's lock not available within 2 s");
		return -1;
	}
	return 0;
}

static void unlock_shared(osm_opensm_t *osm)
{
	cl_plock_release(&osm->lock);
}

static int path_subscription(const ib_inform_info_t *ii)
{
	uint16_t trap = cl_ntoh16(ii->g_or_v.generic.trap_num);

	return ii->is_generic &&
	       (trap == WIRE_TRAP_UNPATH || trap == WIRE_TRAP_REPATH || trap == 0xFFFF);
}

/* Copies the subscribers of the path traps out of OpenSM's list (OpenSM lock held). */
static int collect_subscribers(osm_opensm_t *osm, struct acks_port **out, size_t *n)
{
	cl_qlist_t *list = &osm->subn.sa_infr_list;
	size_t cap = cl_qlist_count(list), k = 0;
	cl_list_item_t *it;

	*out = cap ? calloc(cap, sizeof(**out)) : NULL;
	if (cap && !*out)
		return -1;
	for (it = cl_qlist_head(list); it != cl_qlist_end(list); it = cl_qlist_next(it)) {
		const osm_infr_t *infr = (const osm_infr_t *)it;

		if (!path_subscription(&infr->inform_record.inform_info))
			continue;
		sn_assert(k < cap);
		(*out)[k].guid = cl_ntoh64(infr->inform_record.subscriber_gid.unicast.interface_id);
		(*out)[k].lid = cl_ntoh16(infr->report_addr.dest_lid);
		k++;
	}
	*n = k;
	return 0;
}

/* Sends the current report to every subscriber; OpenSM's lock is taken here. */
static int send_report(osm_opensm_t *osm, const struct wire_path_report *r)
{
	ib_mad_notice_attr_t ntc;
	struct wire_notice wn;
	uint8_t gid[16], raw[WIRE_NOTICE_LEN];
	ib_api_status_t st;
	char err[256];

	if (lock_shared(osm))
		return -1;
	/* IssuerGID is the SM's port: OpenSM looks the issuer up before forwarding. */
	memcpy(gid, &osm->subn.opt.subnet_prefix, 8);
	memcpy(gid + 8, &osm->subn.sm_port_guid, 8);
	if (wire_path_report_notice(r, cl_ntoh16(osm->subn.sm_base_lid), gid, &wn, err,
				    sizeof(err))) {
		unlock_shared(osm);
		plog_osm(osm, OSM_LOG_ERROR, "ERR %s report not sent: %s", wire_kind_name(r->kind),
			 err);
		return -1;
	}
	wire_notice_encode(&wn, raw);
	memcpy(&ntc, raw, sizeof(ntc));
	st = osm_report_notice(&osm->log, &osm->subn, &ntc);
	unlock_shared(osm);
	if (st != IB_SUCCESS) {
		plog_osm(osm, OSM_LOG_ERROR, "ERR %s seq %u report not sent: %s",
			 wire_kind_name(r->kind), r->seq, ib_get_err_str(st));
		return -1;
	}
	return 0;
}

int notify_begin(struct notify *n, osm_opensm_t *osm, enum wire_kind kind, uint32_t seq,
		 uint8_t lmc, const struct wire_lid_range *ranges, unsigned nranges)
{
	struct wire_path_report r = { 0 };
	struct acks_port *ports;
	size_t nports, waiting;
	unsigned i;

	if (!n->ready || nranges > WIRE_MAX_RANGES)
		return -1;
	r.kind = kind;
	r.seq = seq;
	r.lmc = lmc;
	r.nranges = nranges;
	for (i = 0; i < nranges; i++)
		r.ranges[i] = ranges[i];
	if (lock_shared(osm))
		return -1;
	i = collect_subscribers(osm, &ports, &nports);
	unlock_shared(osm);
	if (i) {
		plog_osm(osm, OSM_LOG_ERROR, "ERR out of memory collecting subscribers");
		return -1;
	}
	pthread_mutex_lock(&n->lock);
	i = acks_sync(&n->acks, ports, nports);
	if (!i) {
		acks_begin(&n->acks, seq, kind);
		n->report = r;
	}
	waiting = acks_pending(&n->acks);
	pthread_mutex_unlock(&n->lock);
	free(ports);
	if (i) {
		plog_osm(osm, OSM_LOG_ERROR, "ERR out of memory recording subscribers");
		return -1;
	}
	plog_osm(osm, OSM_LOG_INFO, "%s seq %u sent, waiting for %zu of %zu subscriber(s)",
		 wire_kind_name(kind), seq, waiting, nports);
	if (send_report(osm, &r))
		return -1;
	return (int)waiting;
}

int notify_retry(struct notify *n, osm_opensm_t *osm)
{
	struct acks_port expired[MAX_EXPIRED_LOGGED];
	struct wire_path_report r;
	size_t nexp, pending, i;

	if (!n->ready)
		return -1;
	pthread_mutex_lock(&n->lock);
	nexp = acks_round(&n->acks, expired, MAX_EXPIRED_LOGGED);
	pending = acks_pending(&n->acks);
	r = n->report;
	pthread_mutex_unlock(&n->lock);
	for (i = 0; i < nexp && i < MAX_EXPIRED_LOGGED; i++)
		plog_osm(
			osm, OSM_LOG_ERROR,
			"ERR subscriber port 0x%016llx (LID %u) did not acknowledge %s seq %u: expired",
			(unsigned long long)expired[i].guid, expired[i].lid, wire_kind_name(r.kind),
			r.seq);
	if (!pending)
		return 0;
	plog_osm(osm, OSM_LOG_INFO, "%s seq %u sent again, %zu subscriber(s) pending",
		 wire_kind_name(r.kind), r.seq, pending);
	if (send_report(osm, &r))
		return -1;
	return (int)pending;
}

int notify_count_subscribers_locked(osm_opensm_t *osm)
{
	struct acks_port *ports;
	size_t n, i, k = 0;

	if (collect_subscribers(osm, &ports, &n))
		return -1;
	for (i = 0; i < n; i++) {
		size_t j;

		for (j = 0; j < i && ports[j].guid != ports[i].guid; j++)
			;
		k += j == i;
	}
	free(ports);
	return (int)k;
}

size_t notify_pending(struct notify *n)
{
	size_t p;

	if (!n->ready)
		return 0;
	pthread_mutex_lock(&n->lock);
	p = acks_pending(&n->acks);
	pthread_mutex_unlock(&n->lock);
	return p;
}

void notify_end(struct notify *n)
{
	if (!n->ready)
		return;
	pthread_mutex_lock(&n->lock);
	acks_end(&n->acks);
	pthread_mutex_unlock(&n->lock);
}

int notify_handle_trap(struct notify *n, osm_opensm_t *osm, const void *notice)
{
	struct wire_notice wn;
	struct wire_ack ack;
	enum acks_verdict v;
	uint64_t guid;
	size_t pending;
	char err[256];
	int rc;

	if (!notice || wire_notice_decode(notice, WIRE_NOTICE_LEN, &wn, err, sizeof(err)))
		return 0;
	rc = wire_ack_decode(&wn, &ack, err, sizeof(err));
	if (rc > 0)
		return 0;
	guid = (uint64_t)wn.issuer_gid[8] << 56 | (uint64_t)wn.issuer_gid[9] << 48 |
	       (uint64_t)wn.issuer_gid[10] << 40 | (uint64_t)wn.issuer_gid[11] << 32 |
	       (uint64_t)wn.issuer_gid[12] << 24 | (uint64_t)wn.issuer_gid[13] << 16 |
	       (uint64_t)wn.issuer_gid[14] << 8 | wn.issuer_gid[15];
	if (rc < 0) {
		if (n->ready) {
			pthread_mutex_lock(&n->lock);
			n->acks_malformed++;
			pthread_mutex_unlock(&n->lock);
		}
		plog_osm(osm, OSM_LOG_ERROR,
			 "ERR malformed acknowledgement from port 0x%016llx (LID %u): %s",
			 (unsigned long long)guid, wn.issuer_lid, err);
		return -1;
	}
	if (!n->ready) {
		plog_osm(osm, OSM_LOG_INFO,
			 "acknowledgement of %s seq %u from port 0x%016llx (LID %u), no update in "
			 "progress",
			 wire_kind_name(ack.kind), ack.seq, (unsigned long long)guid,
			 wn.issuer_lid);
		return 1;
	}
	pthread_mutex_lock(&n->lock);
	n->acks_seen++;
	v = acks_record(&n->acks, guid, wn.issuer_lid, ack.seq, ack.kind, ack.status);
	pending = acks_pending(&n->acks);
	pthread_mutex_unlock(&n->lock);
	plog_osm(osm, OSM_LOG_INFO,
		 "acknowledgement of %s seq %u from port 0x%016llx (LID %u, attempt %u, status %u):"
		 " %s, %zu pending",
		 wire_kind_name(ack.kind), ack.seq, (unsigned long long)guid, wn.issuer_lid,
		 ack.attempt, ack.status, acks_verdict_name(v), pending);
	return 1;
}
