/*
 * wire.h - byte-exact encoders and decoders of the MADs of the five-phase update
 * (doc/five-phase.md): Set(InformInfo), Report(Notice) with UnPath/RePath, ReportResp, the
 * trap 144 acknowledgement and the PortInfo query a client needs for it.
 *
 * Pure functions on byte buffers, without libibumad or OpenSM types, so that the client
 * library and the plugin compile the same file and unit tests can feed it any bytes.
 * Decoders never trust their input: a short or malformed MAD is rejected with a message that
 * names the field and byte offset.
 */
#ifndef SARNUE_WIRE_H
#define SARNUE_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define WIRE_MAD_LEN 256
#define WIRE_NOTICE_LEN 80
#define WIRE_DETAILS_LEN 54
#define WIRE_SA_DATA_OFF 56 /* MAD header 24 + RMPP 12 + SA header 20 */
#define WIRE_SMP_DATA_OFF 64
#define WIRE_SMP_DATA_LEN 64
#define WIRE_INFORMINFO_LEN 36
#define WIRE_MAGIC 0x53524E55u /* "SRNU" */
#define WIRE_VERSION 1
#define WIRE_MAX_RANGES 10
#define WIRE_LID_MAX_UNICAST 0xBFFF

#define WIRE_CLASS_SMI 0x01
#define WIRE_CLASS_SMI_DR 0x81
#define WIRE_CLASS_SA 0x03
#define WIRE_METHOD_GET 0x01
#define WIRE_METHOD_SET 0x02
#define WIRE_METHOD_GET_RESP 0x81
#define WIRE_METHOD_TRAP 0x05
#define WIRE_METHOD_REPORT 0x06
#define WIRE_METHOD_REPORT_RESP 0x86
#define WIRE_METHOD_TRAP_REPRESS 0x07
#define WIRE_ATTR_NOTICE 0x0002
#define WIRE_ATTR_INFORMINFO 0x0003
#define WIRE_ATTR_PORTINFO 0x0015

#define WIRE_TRAP_UNPATH 68
#define WIRE_TRAP_REPATH 69
#define WIRE_TRAP_LOCAL_CHANGES 144
#define WIRE_GSI_QKEY 0x80010000u

enum wire_kind {
	WIRE_KIND_UNPATH = 1,
	WIRE_KIND_REPATH = 2,
};

/* The common MAD header (IBA 13.4.2), host order. */
struct wire_mad_hdr {
	uint8_t base_version;
	uint8_t mgmt_class;
	uint8_t class_version;
	uint8_t method;
	uint16_t status;
	uint64_t tid;
	uint16_t attr_id;
	uint32_t attr_mod;
};

/* A generic or vendor Notice attribute, host order; details and GID stay raw. */
struct wire_notice {
	int generic;
	uint8_t type;
	uint32_t producer; /* ProducerType (generic) or VendorID, 24 bits */
	uint16_t trap_num; /* TrapNumber (generic) or DeviceID */
	uint16_t issuer_lid;
	uint16_t toggle_count;
	uint8_t details[WIRE_DETAILS_LEN];
	uint8_t issuer_gid[16];
};

struct wire_lid_range {
	uint16_t first, last;
};

/* The sarnue details of an UnPath (trap 68) or RePath (trap 69) report. */
struct wire_path_report {
	enum wire_kind kind;
	uint32_t seq;
	uint8_t lmc;
	unsigned nranges;
	struct wire_lid_range ranges[WIRE_MAX_RANGES];
};

/* Status of an acknowledgement: only WIRE_ACK_OK acknowledges; the others say "alive". */
enum wire_ack_status {
	WIRE_ACK_OK = 0,      /* the handler succeeded */
	WIRE_ACK_FAILED = 1,  /* the handler failed: this report will not be acknowledged */
	WIRE_ACK_RUNNING = 2, /* the handler still runs */
};

/* The sarnue acknowledgement carried by a trap 144. */
struct wire_ack {
	enum wire_kind kind;
	uint32_t seq;
	uint16_t lid;
	uint32_t capmask;
	uint8_t status;
	uint8_t attempt;
};

/* What a client needs to know about its own port, from PortInfo. */
struct wire_portinfo {
	uint16_t lid;
	uint16_t sm_lid;
	uint32_t capmask;
	uint8_t lmc;
	uint8_t state; /* 1 down .. 4 active */
};

/*
 * "unpath" or "repath", for logs.  Inline, so that code without the encoders (the update's
 * phase machine in the core library) names reports the same way.
 */
static inline const char *wire_kind_name(enum wire_kind kind)
{
	switch (kind) {
	case WIRE_KIND_UNPATH:
		return "unpath";
	case WIRE_KIND_REPATH:
		return "repath";
	}
	return "unknown";
}

/* Writes a message into err[errlen] (when given) and returns -1: the error form of this API. */
int wire_error(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

int wire_mad_hdr_decode(const uint8_t *mad, size_t len, struct wire_mad_hdr *h, char *err,
			size_t errlen);

void wire_notice_encode(const struct wire_notice *n, uint8_t out[WIRE_NOTICE_LEN]);
/* len may be 64 (a Trap SMP's data, no IssuerGID) or at least 80. */
int wire_notice_decode(const uint8_t *buf, size_t len, struct wire_notice *n, char *err,
		       size_t errlen);

/* Fills a generic informational notice from the subnet manager with the report details. */
int wire_path_report_notice(const struct wire_path_report *r, uint16_t sm_lid,
			    const uint8_t sm_gid[16], struct wire_notice *n, char *err,
			    size_t errlen);
/*
 * Decodes the sarnue details of a trap 68/69 notice.  Returns 0 on success, 1 when the notice
 * is no sarnue report (another trap, or no magic), -1 when it claims to be one but is
 * malformed (err says why).
 */
int wire_path_report_decode(const struct wire_notice *n, struct wire_path_report *r, char *err,
			    size_t errlen);

/* Fills a generic trap 144 notice from a channel adapter port with the acknowledgement. */
void wire_ack_notice(const struct wire_ack *a, struct wire_notice *n);
/* Returns 0 for a sarnue acknowledgement, 1 for any other notice, -1 when malformed. */
int wire_ack_decode(const struct wire_notice *n, struct wire_ack *a, char *err, size_t errlen);

/* SubnAdmSet(InformInfo) for one generic trap number (0xFFFF: every trap). */
void wire_informinfo_set(uint8_t mad[WIRE_MAD_LEN], uint64_t tid, uint16_t trap_num, int subscribe);
/* Checks a GetResp(InformInfo) answering tid; returns its MAD status, or -1 if malformed. */
int wire_informinfo_resp_decode(const uint8_t *mad, size_t len, uint64_t tid, uint16_t trap_num,
				char *err, size_t errlen);

/* Decodes a SubnAdmReport(Notice). */
int wire_report_decode(const uint8_t *mad, size_t len, struct wire_mad_hdr *h,
		       struct wire_notice *n, char *err, size_t errlen);
/* The ReportResp to a Report: the same MAD, method 0x86, status 0. */
void wire_report_resp(const uint8_t report[WIRE_MAD_LEN], uint8_t resp[WIRE_MAD_LEN]);

/* A LID-routed SubnTrap(Notice) SMP carrying the first 64 bytes of n. */
void wire_trap_encode(uint8_t mad[WIRE_MAD_LEN], uint64_t tid, const struct wire_notice *n);
int wire_trap_decode(const uint8_t *mad, size_t len, struct wire_notice *n, char *err,
		     size_t errlen);

/* A directed-route SubnGet(PortInfo) of the local port (hop count 0). */
void wire_portinfo_get(uint8_t mad[WIRE_MAD_LEN], uint64_t tid, uint8_t port);
int wire_portinfo_resp_decode(const uint8_t *mad, size_t len, uint64_t tid,
			      struct wire_portinfo *pi, char *err, size_t errlen);

#endif
