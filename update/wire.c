/*
 * wire.c - the MADs of the five-phase update, byte for byte as doc/five-phase.md specifies.
 * Compiled into the client library and into the plugin, so both ends share one encoding.
 * Every decoder checks length, class, method, attribute and the sarnue fields before it
 * believes them; errors name the byte offset inside the MAD or notice.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "update/wire.h"

/* Offsets of the sarnue fields inside DataDetails. */
#define RPT_MAGIC 2
#define RPT_VERSION 6
#define RPT_KIND 7
#define RPT_SEQ 8
#define RPT_LMC 12
#define RPT_NRANGES 13
#define RPT_RANGES 14

#define ACK_LID 2
#define ACK_LOCAL_CHANGES 5
#define ACK_CAPMASK 6
#define ACK_FLAGS 10
#define ACK_CAPMASK2 12
#define ACK_MAGIC 14
#define ACK_VERSION 18
#define ACK_KIND 19
#define ACK_SEQ 20
#define ACK_STATUS 24
#define ACK_ATTEMPT 25
#define ACK_FLAG_NODE_DESC 0x0001

#define NOTICE_DETAILS_OFF 10

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, v >> 32);
	put32(p + 4, v);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

int wire_error(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static uint16_t wire_kind_trap(enum wire_kind kind)
{
	return kind == WIRE_KIND_UNPATH ? WIRE_TRAP_UNPATH : WIRE_TRAP_REPATH;
}

static int kind_valid(unsigned kind)
{
	return kind == WIRE_KIND_UNPATH || kind == WIRE_KIND_REPATH;
}

static void wire_mad_hdr_encode(const struct wire_mad_hdr *h, uint8_t *mad)
{
	mad[0] = h->base_version;
	mad[1] = h->mgmt_class;
	mad[2] = h->class_version;
	mad[3] = h->method;
	put16(mad + 4, h->status);
	put16(mad + 6, 0);
	put64(mad + 8, h->tid);
	put16(mad + 16, h->attr_id);
	put16(mad + 18, 0);
	put32(mad + 20, h->attr_mod);
}

int wire_mad_hdr_decode(const uint8_t *mad, size_t len, struct wire_mad_hdr *h, char *err,
			size_t errlen)
{
	if (len < 24)
		return wire_error(err, errlen,
				  "MAD of %zu bytes is shorter than its 24-byte header", len);
	h->base_version = mad[0];
	h->mgmt_class = mad[1];
	h->class_version = mad[2];
	h->method = mad[3];
	h->status = get16(mad + 4);
	h->tid = get64(mad + 8);
	h->attr_id = get16(mad + 16);
	h->attr_mod = get32(mad + 20);
	if (h->base_version != 1)
		return wire_error(err, errlen, "MAD offset 0 (BaseVersion): %u, expected 1",
				  h->base_version);
	return 0;
}

void wire_notice_encode(const struct wire_notice *n, uint8_t out[WIRE_NOTICE_LEN])
{
	out[0] = (uint8_t)((n->generic ? 0x80 : 0) | (n->type & 0x7f));
	out[1] = n->producer >> 16;
	put16(out + 2, (uint16_t)n->producer);
	put16(out + 4, n->trap_num);
	put16(out + 6, n->issuer_lid);
	put16(out + 8, n->toggle_count);
	memcpy(out + NOTICE_DETAILS_OFF, n->details, WIRE_DETAILS_LEN);
	memcpy(out + 64, n->issuer_gid, 16);
}

int wire_notice_decode(const uint8_t *buf, size_t len, struct wire_notice *n, char *err,
		       size_t errlen)
{
	if (len < 64 || (len > 64 && len < WIRE_NOTICE_LEN))
		return wire_error(err, errlen,
				  "notice of %zu bytes is truncated (64 or %d bytes needed)", len,
				  WIRE_NOTICE_LEN);
	memset(n, 0, sizeof(*n));
	n->generic = !!(buf[0] & 0x80);
	n->type = buf[0] & 0x7f;
	n->producer = (uint32_t)buf[1] << 16 | get16(buf + 2);
	n->trap_num = get16(buf + 4);
	n->issuer_lid = get16(buf + 6);
	n->toggle_count = get16(buf + 8);
	memcpy(n->details, buf + NOTICE_DETAILS_OFF, WIRE_DETAILS_LEN);
	if (len >= WIRE_NOTICE_LEN)
		memcpy(n->issuer_gid, buf + 64, 16);
	return 0;
}

static void notice_header(struct wire_notice *n, uint32_t producer, uint16_t trap,
			  uint16_t issuer_lid)
{
	memset(n, 0, sizeof(*n));
	n->generic = 1;
	n->type = 4; /* informational */
	n->producer = producer;
	n->trap_num = trap;
	n->issuer_lid = issuer_lid;
}

int wire_path_report_notice(const struct wire_path_report *r, uint16_t sm_lid,
			    const uint8_t sm_gid[16], struct wire_notice *n, char *err,
			    size_t errlen)
{
	unsigned i;

	if (!kind_valid(r->kind))
		return wire_error(err, errlen, "report kind %d is neither unpath nor repath",
				  r->kind);
	if (!r->seq)
		return wire_error(err, errlen, "report sequence number 0 is reserved");
	if (r->nranges > WIRE_MAX_RANGES)
		return wire_error(err, errlen, "%u LID ranges, at most %d fit into a notice",
				  r->nranges, WIRE_MAX_RANGES);
	notice_header(n, 4 /* subnet management */, wire_kind_trap(r->kind), sm_lid);
	memcpy(n->issuer_gid, sm_gid, 16);
	put32(n->details + RPT_MAGIC, WIRE_MAGIC);
	n->details[RPT_VERSION] = WIRE_VERSION;
	n->details[RPT_KIND] = (uint8_t)r->kind;
	put32(n->details + RPT_SEQ, r->seq);
	n->details[RPT_LMC] = r->lmc;
	n->details[RPT_NRANGES] = (uint8_t)r->nranges;
	for (i = 0; i < r->nranges; i++) {
		const struct wire_lid_range *g = &r->ranges[i];

		if (!g->first || g->first > g->last || g->last > WIRE_LID_MAX_UNICAST)
			return wire_error(err, errlen,
					  "LID range %u (%u-%u) is not a unicast range", i,
					  g->first, g->last);
		put16(n->details + RPT_RANGES + 4 * i, g->first);
		put16(n->details + RPT_RANGES + 4 * i + 2, g->last);
	}
	return 0;
}

/* Offsets in messages are notice offsets: DataDetails start at byte 10. */
#define DOFF(x) (NOTICE_DETAILS_OFF + (x))

int wire_path_report_decode(const struct wire_notice *n, struct wire_path_report *r, char *err,
			    size_t errlen)
{
	const uint8_t *d = n->details;
	unsigned i, kind;

	if (!n->generic || (n->trap_num != WIRE_TRAP_UNPATH && n->trap_num != WIRE_TRAP_REPATH))
		return 1;
	if (get32(d + RPT_MAGIC) != WIRE_MAGIC)
		return 1;
	memset(r, 0, sizeof(*r));
	if (d[RPT_VERSION] != WIRE_VERSION)
		return wire_error(err, errlen, "notice offset %d (version): %u, expected %d",
				  DOFF(RPT_VERSION), d[RPT_VERSION], WIRE_VERSION);
	kind = d[RPT_KIND];
	if (!kind_valid(kind) || wire_kind_trap(kind) != n->trap_num)
		return wire_error(err, errlen, "notice offset %d (kind): %u does not match trap %u",
				  DOFF(RPT_KIND), kind, n->trap_num);
	r->kind = kind;
	r->seq = get32(d + RPT_SEQ);
	if (!r->seq)
		return wire_error(err, errlen, "notice offset %d (sequence): 0 is reserved",
				  DOFF(RPT_SEQ));
	r->lmc = d[RPT_LMC];
	if (r->lmc > 7)
		return wire_error(err, errlen, "notice offset %d (LMC): %u, at most 7",
				  DOFF(RPT_LMC), r->lmc);
	r->nranges = d[RPT_NRANGES];
	if (r->nranges > WIRE_MAX_RANGES)
		return wire_error(err, errlen, "notice offset %d (ranges): %u, at most %d",
				  DOFF(RPT_NRANGES), r->nranges, WIRE_MAX_RANGES);
	for (i = 0; i < r->nranges; i++) {
		struct wire_lid_range *g = &r->ranges[i];

		g->first = get16(d + RPT_RANGES + 4 * i);
		g->last = get16(d + RPT_RANGES + 4 * i + 2);
		if (!g->first || g->first > g->last || g->last > WIRE_LID_MAX_UNICAST)
			return wire_error(
				err, errlen,
				"notice offset %d (range %u): %u-%u is not a unicast LID range",
				DOFF(RPT_RANGES + 4 * (int)i), i, g->first, g->last);
	}
	return 0;
}

void wire_ack_notice(const struct wire_ack *a, struct wire_notice *n)
{
	notice_header(n, 1 /* channel adapter */, WIRE_TRAP_LOCAL_CHANGES, a->lid);
	put16(n->details + ACK_LID, a->lid);
	n->details[ACK_LOCAL_CHANGES] = 1;
	put32(n->details + ACK_CAPMASK, a->capmask);
	put16(n->details + ACK_FLAGS, ACK_FLAG_NODE_DESC);
	put16(n->details + ACK_CAPMASK2, 0);
	put32(n->details + ACK_MAGIC, WIRE_MAGIC);
	n->details[ACK_VERSION] = WIRE_VERSION;
	n->details[ACK_KIND] = (uint8_t)a->kind;
	put32(n->details + ACK_SEQ, a->seq);
	n->details[ACK_STATUS] = a->status;
	n->details[ACK_ATTEMPT] = a->attempt;
}

int wire_ack_decode(const struct wire_notice *n, struct wire_ack *a, char *err, size_t errlen)
{
	const uint8_t *d = n->details;

	if (!n->generic || n->trap_num != WIRE_TRAP_LOCAL_CHANGES)
		return 1;
	if (get32(d + ACK_MAGIC) != WIRE_MAGIC)
		return 1;
	memset(a, 0, sizeof(*a));
	if (d[ACK_VERSION] != WIRE_VERSION)
		return wire_error(err, errlen, "notice offset %d (version): %u, expected %d",
				  DOFF(ACK_VERSION), d[ACK_VERSION], WIRE_VERSION);
	if (!(d[ACK_LOCAL_CHANGES] & 1) || get16(d + ACK_FLAGS) != ACK_FLAG_NODE_DESC)
		return wire_error(err, errlen,
				  "notice offset %d (change flags): 0x%04x with local changes %u, "
				  "expected 0x0001 with 1",
				  DOFF(ACK_FLAGS), get16(d + ACK_FLAGS), d[ACK_LOCAL_CHANGES]);
	if (!kind_valid(d[ACK_KIND]))
		return wire_error(err, errlen, "notice offset %d (kind): %u is neither 1 nor 2",
				  DOFF(ACK_KIND), d[ACK_KIND]);
	a->kind = d[ACK_KIND];
	a->seq = get32(d + ACK_SEQ);
	if (!a->seq)
		return wire_error(err, errlen, "notice offset %d (sequence): 0 is reserved",
				  DOFF(ACK_SEQ));
	a->lid = get16(d + ACK_LID);
	a->capmask = get32(d + ACK_CAPMASK);
	a->status = d[ACK_STATUS];
	a->attempt = d[ACK_ATTEMPT];
	return 0;
}

void wire_informinfo_set(uint8_t mad[WIRE_MAD_LEN], uint64_t tid, uint16_t trap_num, int subscribe)
{
	struct wire_mad_hdr h = { 1,   WIRE_CLASS_SA,	     2, WIRE_METHOD_SET, 0,
				  tid, WIRE_ATTR_INFORMINFO, 0 };
	uint8_t *ii = mad + WIRE_SA_DATA_OFF;

	memset(mad, 0, WIRE_MAD_LEN);
	wire_mad_hdr_encode(&h, mad);
	/* GID 0 and LIDRangeBegin 0xFFFF: reports from any issuer, no access check. */
	put16(ii + 16, 0xFFFF);
	put16(ii + 18, 0);
	ii[22] = 1; /* IsGeneric */
	ii[23] = subscribe ? 1 : 0;
	put16(ii + 24, 0xFFFF); /* any Type */
	put16(ii + 26, trap_num);
	/* QPN 1 as OpenSM stores it, so that an unsubscribe matches the record. */
	put32(ii + 28, 1u << 8 | 18);
	ii[33] = 0xFF; /* any ProducerType */
	put16(ii + 34, 0xFFFF);
}

static int tid_matches(uint64_t a, uint64_t b)
{
	/* The kernel (and umad2sim/ibsim) own the upper 32 bits. */
	return (uint32_t)a == (uint32_t)b;
}

int wire_informinfo_resp_decode(const uint8_t *mad, size_t len, uint64_t tid, uint16_t trap_num,
				char *err, size_t errlen)
{
	struct wire_mad_hdr h;
	const uint8_t *ii = mad + WIRE_SA_DATA_OFF;

	if (wire_mad_hdr_decode(mad, len, &h, err, errlen))
		return -1;
	if (h.mgmt_class != WIRE_CLASS_SA || h.method != WIRE_METHOD_GET_RESP ||
	    h.attr_id != WIRE_ATTR_INFORMINFO)
		return wire_error(err, errlen,
				  "MAD offset 1 (class 0x%02x, method 0x%02x, attribute 0x%04x): "
				  "not a GetResp(InformInfo)",
				  h.mgmt_class, h.method, h.attr_id);
	if (!tid_matches(h.tid, tid))
		return wire_error(err, errlen,
				  "MAD offset 8 (TID): 0x%016llx answers another request",
				  (unsigned long long)h.tid);
	if (h.status)
		return h.status;
	if (len < WIRE_SA_DATA_OFF + WIRE_INFORMINFO_LEN)
		return wire_error(err, errlen, "GetResp(InformInfo) of %zu bytes is truncated",
				  len);
	if (get16(ii + 26) != trap_num)
		return wire_error(err, errlen, "MAD offset %d (TrapNumber): %u, expected %u",
				  WIRE_SA_DATA_OFF + 26, get16(ii + 26), trap_num);
	return 0;
}

int wire_report_decode(const uint8_t *mad, size_t len, struct wire_mad_hdr *h,
		       struct wire_notice *n, char *err, size_t errlen)
{
	if (wire_mad_hdr_decode(mad, len, h, err, errlen))
		return -1;
	if (h->mgmt_class != WIRE_CLASS_SA || h->method != WIRE_METHOD_REPORT)
		return wire_error(err, errlen,
				  "MAD offset 1 (class 0x%02x, method 0x%02x): not a SubnAdmReport",
				  h->mgmt_class, h->method);
	if (h->attr_id != WIRE_ATTR_NOTICE)
		return wire_error(err, errlen, "MAD offset 16 (attribute): 0x%04x, expected Notice",
				  h->attr_id);
	if (len < WIRE_SA_DATA_OFF + WIRE_NOTICE_LEN)
		return wire_error(err, errlen, "Report of %zu bytes is truncated (%d needed)", len,
				  WIRE_SA_DATA_OFF + WIRE_NOTICE_LEN);
	return wire_notice_decode(mad + WIRE_SA_DATA_OFF, WIRE_NOTICE_LEN, n, err, errlen);
}

void wire_report_resp(const uint8_t report[WIRE_MAD_LEN], uint8_t resp[WIRE_MAD_LEN])
{
	memcpy(resp, report, WIRE_MAD_LEN);
	resp[3] = WIRE_METHOD_REPORT_RESP;
	put16(resp + 4, 0);
}

void wire_trap_encode(uint8_t mad[WIRE_MAD_LEN], uint64_t tid, const struct wire_notice *n)
{
	struct wire_mad_hdr h = { 1,   WIRE_CLASS_SMI,	 1, WIRE_METHOD_TRAP, 0,
				  tid, WIRE_ATTR_NOTICE, 0 };
	uint8_t notice[WIRE_NOTICE_LEN];

	memset(mad, 0, WIRE_MAD_LEN);
	wire_mad_hdr_encode(&h, mad);
	wire_notice_encode(n, notice);
	memcpy(mad + WIRE_SMP_DATA_OFF, notice, WIRE_SMP_DATA_LEN);
}

int wire_trap_decode(const uint8_t *mad, size_t len, struct wire_notice *n, char *err,
		     size_t errlen)
{
	struct wire_mad_hdr h;

	if (wire_mad_hdr_decode(mad, len, &h, err, errlen))
		return -1;
	if (h.mgmt_class != WIRE_CLASS_SMI || h.method != WIRE_METHOD_TRAP ||
	    h.attr_id != WIRE_ATTR_NOTICE)
		return wire_error(err, errlen,
				  "MAD offset 1 (class 0x%02x, method 0x%02x, attribute 0x%04x): "
				  "not a SubnTrap(Notice)",
				  h.mgmt_class, h.method, h.attr_id);
	if (len < WIRE_SMP_DATA_OFF + WIRE_SMP_DATA_LEN)
		return wire_error(err, errlen, "Trap of %zu bytes is truncated (%d needed)", len,
				  WIRE_SMP_DATA_OFF + WIRE_SMP_DATA_LEN);
	return wire_notice_decode(mad + WIRE_SMP_DATA_OFF, WIRE_SMP_DATA_LEN, n, err, errlen);
}

void wire_portinfo_get(uint8_t mad[WIRE_MAD_LEN], uint64_t tid, uint8_t port)
{
	struct wire_mad_hdr h = { 1,   WIRE_CLASS_SMI_DR,  1,	WIRE_METHOD_GET, 0,
				  tid, WIRE_ATTR_PORTINFO, port };

	memset(mad, 0, WIRE_MAD_LEN);
	wire_mad_hdr_encode(&h, mad);
	/* Hop pointer and count 0; DrSLID and DrDLID permissive. */
	put16(mad + 32, 0xFFFF);
	put16(mad + 34, 0xFFFF);
}

int wire_portinfo_resp_decode(const uint8_t *mad, size_t len, uint64_t tid,
			      struct wire_portinfo *pi, char *err, size_t errlen)
{
	struct wire_mad_hdr h;
	const uint8_t *d = mad + WIRE_SMP_DATA_OFF;

	if (wire_mad_hdr_decode(mad, len, &h, err, errlen))
		return -1;
	if (h.mgmt_class != WIRE_CLASS_SMI_DR || h.method != WIRE_METHOD_GET_RESP ||
	    h.attr_id != WIRE_ATTR_PORTINFO)
		return wire_error(err, errlen,
				  "MAD offset 1 (class 0x%02x, method 0x%02x, attribute 0x%04x): "
				  "not a directed-route GetResp(PortInfo)",
				  h.mgmt_class, h.method, h.attr_id);
	if (!tid_matches(h.tid, tid))
		return wire_error(err, errlen,
				  "MAD offset 8 (TID): 0x%016llx answers another request",
				  (unsigned long long)h.tid);
	if (h.status & 0x7fff) /* the top bit is the direction bit D */
		return wire_error(err, errlen, "MAD offset 4 (status): 0x%04x", h.status & 0x7fff);
	if (len < WIRE_SMP_DATA_OFF + WIRE_SMP_DATA_LEN)
		return wire_error(err, errlen, "GetResp(PortInfo) of %zu bytes is truncated", len);
	pi->lid = get16(d + 16);
	pi->sm_lid = get16(d + 18);
	pi->capmask = get32(d + 20);
	pi->state = d[32] & 0x0f;
	pi->lmc = d[34] & 0x07;
	return 0;
}
