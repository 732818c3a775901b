/*
 * client.c - libsarnue-client over libibumad: subscriptions (SA InformInfo), reports
 * (ReportResp, the handler, idempotence by sequence number) and trap 144 acknowledgements.
 *
 * The bytes come from wire.c, which the plugin shares.  Three MAD agents: the SA class for
 * subscriptions and incoming reports, the LID-routed SM class to send the acknowledgement trap,
 * and the directed-route SM class to read the port's own PortInfo, whose CapabilityMask the
 * acknowledgement must repeat (doc/five-phase.md explains why).  Reliability comes from the
 * plugin re-sending reports; the client answers every copy and remembers what it handled.
 */
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/umad.h>

#include "client/sarnue-client.h"
#include "update/wire.h"

#define HISTORY 16
#define MAX_SUBS 16
#define PENDING 32

enum outcome {
	OUTCOME_PENDING,
	OUTCOME_OK,
	OUTCOME_FAILED
};

struct handled {
	uint32_t seq;
	enum wire_kind kind;
	enum outcome outcome;
	uint8_t attempt;
};

static const char *outcome_name(enum outcome o)
{
	return o == OUTCOME_OK ? "acknowledged" : o == OUTCOME_FAILED ? "failed" : "in progress";
}

struct sarnue_client {
	struct sarnue_client_config cfg;
	char ca[UMAD_CA_NAME_LEN];
	int port;
	uint64_t port_guid;
	int portid;
	int agent_sa, agent_smi, agent_dr;
	uint32_t next_tid;
	struct wire_portinfo pi;
	uint16_t subs[MAX_SUBS];
	unsigned nsubs;
	struct handled history[HISTORY];
	unsigned history_next;
	/* Reports that arrived while waiting for a response, handled at the next poll. */
	uint8_t *pending[PENDING];
	unsigned npending;
	struct sarnue_client_stats stats;
	uint8_t *umad; /* one receive/send buffer: umad_size() + 256 */
};

static void client_log(struct sarnue_client *c, enum sarnue_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void client_log(struct sarnue_client *c, enum sarnue_log_level level, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!c->cfg.log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->cfg.log(c->cfg.log_arg, level, msg);
}

const char *sarnue_kind_name(enum sarnue_kind kind)
{
	switch (kind) {
	case SARNUE_REPORT_UNPATH:
		return "unpath";
	case SARNUE_REPORT_REPATH:
		return "repath";
	case SARNUE_REPORT_OTHER:
		break;
	}
	return "other";
}

static uint64_t new_tid(struct sarnue_client *c)
{
	if (!++c->next_tid)
		c->next_tid = 1;
	return c->next_tid;
}

static int send_mad(struct sarnue_client *c, int agent, const uint8_t *mad, uint16_t dlid,
		    uint32_t qpn, uint32_t qkey, char *err, size_t errlen)
{
	int rc;

	memset(c->umad, 0, umad_size());
	memcpy(umad_get_mad(c->umad), mad, WIRE_MAD_LEN);
	umad_set_addr(c->umad, dlid, qpn, 0, qkey);
	/* No kernel timeout: requests are retried here, responses need none. */
	rc = umad_send(c->portid, agent, c->umad, WIRE_MAD_LEN, 0, 0);
	if (rc < 0)
		return wire_error(err, errlen, "umad_send to LID %u: %s", dlid, strerror(-rc));
	return 0;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Receives one MAD into out (256 bytes).  Returns 1 with the source LID/QP, 0 on timeout,
 * -1 on error.
 */
static int recv_mad(struct sarnue_client *c, int timeout_ms, uint8_t *out, uint16_t *slid,
		    uint32_t *sqp, char *err, size_t errlen)
{
	int len = WIRE_MAD_LEN, rc;
	ib_mad_addr_t *addr;

	rc = umad_recv(c->portid, c->umad, &len, timeout_ms);
	/* With timeout 0 the read does not block and says EAGAIN when nothing is queued. */
	if (rc == -ETIMEDOUT || rc == -EAGAIN || rc == -EWOULDBLOCK)
		return 0;
	if (rc < 0)
		return wire_error(err, errlen, "umad_recv: %s", strerror(-rc));
	if (umad_status(c->umad)) {
		/* A send of ours that the kernel gave up on; nothing to receive. */
		client_log(c, SARNUE_LOG_DEBUG, "MAD completed with status %d",
			   umad_status(c->umad));
		return 0;
	}
	memset(out, 0, WIRE_MAD_LEN);
	memcpy(out, umad_get_mad(c->umad), len > WIRE_MAD_LEN ? WIRE_MAD_LEN : (size_t)len);
	addr = umad_get_mad_addr(c->umad);
	*slid = be16toh(addr->lid);
	*sqp = be32toh(addr->qpn);
	return 1;
}

static int is_report(const uint8_t *mad)
{
	return mad[1] == WIRE_CLASS_SA && mad[3] == WIRE_METHOD_REPORT;
}

static void answer_report(struct sarnue_client *c, const uint8_t *mad, uint16_t slid, uint32_t sqp)
{
	uint8_t resp[WIRE_MAD_LEN];
	char err[256];

	wire_report_resp(mad, resp);
	if (send_mad(c, c->agent_sa, resp, slid, sqp ? sqp : 1, WIRE_GSI_QKEY, err, sizeof(err)))
		client_log(c, SARNUE_LOG_WARN, "ReportResp not sent: %s", err);
}

/* Keeps a report that arrived during a request for the next poll; answers it at once. */
static void stash_report(struct sarnue_client *c, const uint8_t *mad, uint16_t slid, uint32_t sqp)
{
	answer_report(c, mad, slid, sqp);
	c->stats.reports++;
	if (c->npending == PENDING) {
		client_log(c, SARNUE_LOG_WARN, "report queue full, a report is left to its repeat");
		return;
	}
	c->pending[c->npending] = malloc(WIRE_MAD_LEN);
	if (!c->pending[c->npending])
		return;
	memcpy(c->pending[c->npending++], mad, WIRE_MAD_LEN);
}

typedef int (*resp_check_fn)(const uint8_t *mad, uint64_t tid, void *arg, char *err, size_t errlen);

/*
 * One request with retries.  check returns 0 for the answer, 1 for a MAD that is no answer
 * to this request, anything else for a failed answer (err filled).
 */
static int transact(struct sarnue_client *c, int agent, uint8_t *req, uint16_t dlid, uint32_t qpn,
		    uint32_t qkey, resp_check_fn check, void *arg, char *err, size_t errlen)
{
	unsigned timeout = c->cfg.timeout_ms ? c->cfg.timeout_ms : 1000;
	unsigned tries = 1 + (c->cfg.retries ? c->cfg.retries : 3), t;
	uint8_t mad[WIRE_MAD_LEN];
	uint64_t tid = ((uint64_t)req[8] << 56 | (uint64_t)req[9] << 48 | (uint64_t)req[10] << 40 |
			(uint64_t)req[11] << 32 | (uint64_t)req[12] << 24 |
			(uint64_t)req[13] << 16 | (uint64_t)req[14] << 8 | req[15]);

	for (t = 0; t < tries; t++) {
		long long end = now_ms() + timeout;

		if (send_mad(c, agent, req, dlid, qpn, qkey, err, errlen))
			return -1;
		for (;;) {
			long long left = end - now_ms();
			uint16_t slid;
			uint32_t sqp;
			int rc;

			if (left <= 0)
				break;
			rc = recv_mad(c, (int)left, mad, &slid, &sqp, err, errlen);
			if (rc < 0)
				return -1;
			if (!rc)
				continue;
			if (is_report(mad)) {
				stash_report(c, mad, slid, sqp);
				continue;
			}
			rc = check(mad, tid, arg, err, errlen);
			if (rc == 1)
				continue;
			return rc ? -1 : 0;
		}
		client_log(c, SARNUE_LOG_DEBUG, "no answer from LID %u within %u ms (try %u of %u)",
			   dlid, timeout, t + 1, tries);
	}
	return wire_error(err, errlen, "no answer from LID %u after %u tries of %u ms", dlid, tries,
			  timeout);
}

static int portinfo_check(const uint8_t *mad, uint64_t tid, void *arg, char *err, size_t errlen)
{
	if (mad[1] != WIRE_CLASS_SMI_DR ||
	    (uint32_t)(mad[12] << 24 | mad[13] << 16 | mad[14] << 8 | mad[15]) != (uint32_t)tid)
		return 1;
	return wire_portinfo_resp_decode(mad, WIRE_MAD_LEN, tid, arg, err, errlen) ? -1 : 0;
}

static int refresh_port(struct sarnue_client *c, char *err, size_t errlen)
{
	uint8_t req[WIRE_MAD_LEN];
	char why[256];

	wire_portinfo_get(req, new_tid(c), (uint8_t)c->port);
	if (transact(c, c->agent_dr, req, 0xFFFF, 0, 0, portinfo_check, &c->pi, why, sizeof(why)))
		return wire_error(err, errlen, "PortInfo of %s port %d: %s", c->ca, c->port, why);
	return 0;
}

struct ii_arg {
	uint16_t trap;
	int status;
};

static int informinfo_check(const uint8_t *mad, uint64_t tid, void *arg, char *err, size_t errlen)
{
	struct ii_arg *a = arg;
	int rc;

	if (mad[1] != WIRE_CLASS_SA || mad[3] != WIRE_METHOD_GET_RESP ||
	    (uint32_t)(mad[12] << 24 | mad[13] << 16 | mad[14] << 8 | mad[15]) != (uint32_t)tid)
		return 1;
	rc = wire_informinfo_resp_decode(mad, WIRE_MAD_LEN, tid, a->trap, err, errlen);
	if (rc < 0)
		return -1;
	a->status = rc;
	return 0;
}

static int informinfo(struct sarnue_client *c, uint16_t trap, int subscribe, char *err,
		      size_t errlen)
{
	uint8_t req[WIRE_MAD_LEN];
	struct ii_arg a = { trap, 0 };
	char why[256];

	if (refresh_port(c, err, errlen))
		return -1;
	if (!c->pi.sm_lid)
		return wire_error(err, errlen, "%s port %d knows no SM LID yet (subnet not up)",
				  c->ca, c->port);
	wire_informinfo_set(req, new_tid(c), trap, subscribe);
	if (transact(c, c->agent_sa, req, c->pi.sm_lid, 1, WIRE_GSI_QKEY, informinfo_check, &a, why,
		     sizeof(why)))
		return wire_error(err, errlen, "%s trap %u at SA LID %u: %s",
				  subscribe ? "subscribing to" : "unsubscribing from", trap,
				  c->pi.sm_lid, why);
	if (a.status)
		return wire_error(err, errlen, "SA LID %u refused to %s trap %u: MAD status 0x%04x",
				  c->pi.sm_lid, subscribe ? "subscribe to" : "unsubscribe from",
				  trap, a.status);
	return 0;
}

int sarnue_client_subscribe(struct sarnue_client *c, uint16_t trap, char *err, size_t errlen)
{
	unsigned i;

	if (informinfo(c, trap, 1, err, errlen))
		return -1;
	for (i = 0; i < c->nsubs; i++)
		if (c->subs[i] == trap)
			break;
	if (i == c->nsubs && c->nsubs < MAX_SUBS)
		c->subs[c->nsubs++] = trap;
	client_log(c, SARNUE_LOG_INFO, "subscribed to trap %u at SA LID %u (port LID %u)", trap,
		   c->pi.sm_lid, c->pi.lid);
	return 0;
}

int sarnue_client_unsubscribe(struct sarnue_client *c, uint16_t trap, char *err, size_t errlen)
{
	unsigned i;

	for (i = 0; i < c->nsubs; i++)
		if (c->subs[i] == trap) {
			c->subs[i] = c->subs[--c->nsubs];
			break;
		}
	/*
	 * OpenSM finds the record by the whole sender address; under umad2sim the P_Key index
	 * OpenSM sees is not always the same, so a refusal is worth another try.
	 */
	for (i = 0; i < 3; i++)
		if (!informinfo(c, trap, 0, err, errlen)) {
			client_log(c, SARNUE_LOG_INFO, "unsubscribed from trap %u", trap);
			return 0;
		}
	return -1;
}

int sarnue_client_subscribe_paths(struct sarnue_client *c, char *err, size_t errlen)
{
	if (sarnue_client_subscribe(c, WIRE_TRAP_UNPATH, err, errlen))
		return -1;
	return sarnue_client_subscribe(c, WIRE_TRAP_REPATH, err, errlen);
}

void sarnue_client_unsubscribe_all(struct sarnue_client *c)
{
	char err[256];

	while (c->nsubs)
		if (sarnue_client_unsubscribe(c, c->subs[c->nsubs - 1], err, sizeof(err)))
			client_log(c, SARNUE_LOG_WARN, "%s", err);
}

static int send_ack(struct sarnue_client *c, enum wire_kind kind, uint32_t seq, uint8_t attempt,
		    uint8_t status)
{
	struct wire_ack a = { 0 };
	struct wire_notice n;
	uint8_t mad[WIRE_MAD_LEN];
	char err[256];

	/* The trap must repeat the port's current CapabilityMask, or OpenSM sweeps. */
	if (refresh_port(c, err, sizeof(err))) {
		client_log(c, SARNUE_LOG_ERROR, "acknowledgement of %s %u not sent: %s",
			   wire_kind_name(kind), seq, err);
		return -1;
	}
	a.kind = kind;
	a.seq = seq;
	a.lid = c->pi.lid;
	a.capmask = c->pi.capmask;
	a.attempt = attempt;
	a.status = status;
	wire_ack_notice(&a, &n);
	wire_trap_encode(mad, new_tid(c), &n);
	if (send_mad(c, c->agent_smi, mad, c->pi.sm_lid, 0, 0, err, sizeof(err))) {
		client_log(c, SARNUE_LOG_ERROR, "acknowledgement of %s %u not sent: %s",
			   wire_kind_name(kind), seq, err);
		return -1;
	}
	c->stats.acks++;
	client_log(c, SARNUE_LOG_INFO, "%s %s seq %u to SM LID %u (attempt %u)",
		   status == WIRE_ACK_OK       ? "acknowledged"
		   : status == WIRE_ACK_FAILED ? "reported the failed handler of"
					       : "reported the running handler of",
		   wire_kind_name(kind), seq, c->pi.sm_lid, attempt);
	return 0;
}

static struct handled *find_handled(struct sarnue_client *c, uint32_t seq, enum wire_kind kind)
{
	unsigned i;

	for (i = 0; i < HISTORY; i++)
		if (c->history[i].seq == seq && c->history[i].kind == kind)
			return &c->history[i];
	return NULL;
}

static void fill_report(struct sarnue_report *out, const struct wire_notice *n, const uint8_t *raw)
{
	memset(out, 0, sizeof(*out));
	out->trap_num = n->trap_num;
	out->issuer_lid = n->issuer_lid;
	memcpy(out->notice, raw, sizeof(out->notice));
}

static void finish(struct sarnue_client *c, struct handled *h, int ok)
{
	h->outcome = ok ? OUTCOME_OK : OUTCOME_FAILED;
	if (ok) {
		send_ack(c, h->kind, h->seq, 0, WIRE_ACK_OK);
		return;
	}
	c->stats.handler_failures++;
	client_log(c, SARNUE_LOG_ERROR, "handler failed for %s seq %u: not acknowledged",
		   wire_kind_name(h->kind), h->seq);
	/* Tells the subnet manager this host is alive, so its timeout policy decides. */
	send_ack(c, h->kind, h->seq, 0, WIRE_ACK_FAILED);
}

static int handle_path_report(struct sarnue_client *c, const struct wire_path_report *r,
			      struct sarnue_report *out, sarnue_report_fn fn, void *arg)
{
	struct handled *h = find_handled(c, r->seq, r->kind);
	unsigned i;
	int rc;

	if (h) {
		c->stats.repeats++;
		client_log(c, SARNUE_LOG_INFO, "repeated %s seq %u (%s)", wire_kind_name(r->kind),
			   r->seq, outcome_name(h->outcome));
		/* Every repeat is answered, so a live host never looks dead to the SM. */
		send_ack(c, r->kind, r->seq, ++h->attempt,
			 h->outcome == OUTCOME_OK	? WIRE_ACK_OK
			 : h->outcome == OUTCOME_FAILED ? WIRE_ACK_FAILED
							: WIRE_ACK_RUNNING);
		return 0;
	}
	out->kind = (enum sarnue_kind)r->kind;
	out->seq = r->seq;
	out->lmc = r->lmc;
	out->nranges = r->nranges;
	for (i = 0; i < r->nranges; i++) {
		out->ranges[i].first = r->ranges[i].first;
		out->ranges[i].last = r->ranges[i].last;
	}
	client_log(c, SARNUE_LOG_INFO, "received %s seq %u (%u LID range(s), LMC %u)",
		   wire_kind_name(r->kind), r->seq, r->nranges, r->lmc);
	h = &c->history[c->history_next];
	c->history_next = (c->history_next + 1) % HISTORY;
	h->seq = r->seq;
	h->kind = r->kind;
	h->outcome = OUTCOME_PENDING;
	h->attempt = 0;
	rc = fn ? fn(out, arg) : SARNUE_HANDLER_DONE;
	c->stats.handled++;
	if (rc != SARNUE_HANDLER_LATER)
		finish(c, h, rc == SARNUE_HANDLER_DONE);
	return 1;
}

int sarnue_client_complete(struct sarnue_client *c, enum sarnue_kind kind, uint32_t seq, int ok)
{
	struct handled *h;

	if (kind != SARNUE_REPORT_UNPATH && kind != SARNUE_REPORT_REPATH)
		return -1;
	h = find_handled(c, seq, (enum wire_kind)kind);
	if (!h || h->outcome != OUTCOME_PENDING)
		return -1;
	finish(c, h, ok);
	return 0;
}

/* Handles one Report already answered with ReportResp; returns handler calls made. */
static int handle_report(struct sarnue_client *c, const uint8_t *mad, sarnue_report_fn fn,
			 void *arg)
{
	struct wire_mad_hdr h;
	struct wire_notice n;
	struct wire_path_report r;
	struct sarnue_report out;
	char err[256];
	int rc;

	if (wire_report_decode(mad, WIRE_MAD_LEN, &h, &n, err, sizeof(err))) {
		c->stats.malformed++;
		client_log(c, SARNUE_LOG_ERROR, "malformed report rejected: %s", err);
		return 0;
	}
	fill_report(&out, &n, mad + WIRE_SA_DATA_OFF);
	rc = wire_path_report_decode(&n, &r, err, sizeof(err));
	if (rc < 0) {
		c->stats.malformed++;
		client_log(c, SARNUE_LOG_ERROR, "malformed trap %u report rejected: %s", n.trap_num,
			   err);
		return 0;
	}
	if (rc == 0)
		return handle_path_report(c, &r, &out, fn, arg);
	out.kind = SARNUE_REPORT_OTHER;
	client_log(c, SARNUE_LOG_INFO, "received report of trap %u from LID %u", n.trap_num,
		   n.issuer_lid);
	if (fn)
		fn(&out, arg);
	c->stats.handled++;
	return 1;
}

int sarnue_client_poll(struct sarnue_client *c, int timeout_ms, sarnue_report_fn fn, void *arg,
		       char *err, size_t errlen)
{
	long long deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	uint8_t mad[WIRE_MAD_LEN];
	int calls = 0;

	while (c->npending) {
		uint8_t *p = c->pending[0];

		c->npending--;
		memmove(c->pending, c->pending + 1, c->npending * sizeof(c->pending[0]));
		calls += handle_report(c, p, fn, arg);
		free(p);
	}
	for (;;) {
		long long left = deadline - now_ms();
		uint16_t slid;
		uint32_t sqp;
		int wait, rc;

		/* Once something was handled, only drain what is already queued. */
		if (calls)
			wait = 0;
		else if (timeout_ms < 0)
			wait = -1;
		else
			wait = left > 0 ? (int)left : 0;
		rc = recv_mad(c, wait, mad, &slid, &sqp, err, errlen);
		if (rc < 0)
			return -1;
		if (!rc) {
			if (calls || (timeout_ms >= 0 && now_ms() >= deadline))
				return calls;
			continue;
		}
		if (!is_report(mad)) {
			client_log(c, SARNUE_LOG_DEBUG,
				   "ignored MAD class 0x%02x method 0x%02x from LID %u", mad[1],
				   mad[3], slid);
			continue;
		}
		answer_report(c, mad, slid, sqp);
		c->stats.reports++;
		calls += handle_report(c, mad, fn, arg);
	}
}

int sarnue_client_fd(const struct sarnue_client *c)
{
	return umad_get_fd(c->portid);
}

void sarnue_client_get_stats(const struct sarnue_client *c, struct sarnue_client_stats *s)
{
	*s = c->stats;
}

int sarnue_client_port(struct sarnue_client *c, struct sarnue_port_info *pi, char *err,
		       size_t errlen)
{
	if (refresh_port(c, err, errlen))
		return -1;
	memset(pi, 0, sizeof(*pi));
	snprintf(pi->ca, sizeof(pi->ca), "%s", c->ca);
	pi->port = c->port;
	pi->port_guid = c->port_guid;
	pi->lid = c->pi.lid;
	pi->sm_lid = c->pi.sm_lid;
	pi->lmc = c->pi.lmc;
	return 0;
}

static int register_agents(struct sarnue_client *c, char *err, size_t errlen)
{
	long report_mask[16 / sizeof(long)] = { 0 };

	/* Unsolicited SA MADs we accept: Report only. */
	report_mask[WIRE_METHOD_REPORT / (8 * sizeof(long))] |=
		1L << (WIRE_METHOD_REPORT % (8 * sizeof(long)));
	c->agent_sa = umad_register(c->portid, WIRE_CLASS_SA, 2, 0, report_mask);
	if (c->agent_sa < 0)
		return wire_error(err, errlen,
				  "cannot register for SA reports on %s port %d: %s (another "
				  "subscriber on this port?)",
				  c->ca, c->port, strerror(-c->agent_sa));
	c->agent_smi = umad_register(c->portid, WIRE_CLASS_SMI, 1, 0, NULL);
	if (c->agent_smi < 0)
		return wire_error(err, errlen, "cannot register an SMP agent on %s port %d: %s",
				  c->ca, c->port, strerror(-c->agent_smi));
	c->agent_dr = umad_register(c->portid, WIRE_CLASS_SMI_DR, 1, 0, NULL);
	if (c->agent_dr < 0)
		return wire_error(err, errlen,
				  "cannot register a directed-route agent on %s port %d: %s", c->ca,
				  c->port, strerror(-c->agent_dr));
	return 0;
}

static int pick_port(struct sarnue_client *c, const struct sarnue_client_config *cfg, char *err,
		     size_t errlen)
{
	umad_port_t p;
	int rc;

	rc = umad_get_port(cfg->ca, cfg->port, &p);
	if (rc < 0)
		return wire_error(err, errlen, "no usable InfiniBand port (%s port %d): %s",
				  cfg->ca ? cfg->ca : "first HCA", cfg->port, strerror(-rc));
	snprintf(c->ca, sizeof(c->ca), "%s", p.ca_name);
	c->port = p.portnum;
	c->port_guid = be64toh(p.port_guid);
	umad_release_port(&p);
	return 0;
}

int sarnue_client_open(const struct sarnue_client_config *cfg, struct sarnue_client **out,
		       char *err, size_t errlen)
{
	struct sarnue_client *c;

	*out = NULL;
	if (umad_init() < 0)
		return wire_error(err, errlen,
				  "libibumad cannot initialise (no umad kernel module?)");
	c = calloc(1, sizeof(*c));
	if (!c)
		return wire_error(err, errlen, "out of memory");
	c->cfg = *cfg;
	c->portid = -1;
	c->next_tid = (uint32_t)time(NULL) << 8;
	c->umad = calloc(1, umad_size() + WIRE_MAD_LEN);
	if (!c->umad) {
		wire_error(err, errlen, "out of memory");
		goto fail;
	}
	if (pick_port(c, cfg, err, errlen))
		goto fail;
	c->portid = umad_open_port(c->ca, c->port);
	if (c->portid < 0) {
		wire_error(err, errlen,
			   "cannot open %s port %d: %s (permission on /dev/infiniband?)", c->ca,
			   c->port, strerror(-c->portid));
		goto fail;
	}
	if (register_agents(c, err, errlen))
		goto fail;
	if (refresh_port(c, err, errlen))
		goto fail;
	client_log(c, SARNUE_LOG_INFO,
		   "opened %s port %d, GUID 0x%016llx, LID %u, SM LID %u, LMC %u", c->ca, c->port,
		   (unsigned long long)c->port_guid, c->pi.lid, c->pi.sm_lid, c->pi.lmc);
	*out = c;
	return 0;
fail:
	sarnue_client_close(c);
	return -1;
}

void sarnue_client_close(struct sarnue_client *c)
{
	if (!c)
		return;
	while (c->npending)
		free(c->pending[--c->npending]);
	if (c->portid >= 0)
		umad_close_port(c->portid);
	free(c->umad);
	free(c);
}
