/*
 * test_wire.c - the five-phase MADs byte for byte (doc/five-phase.md): report notices and
 * their decoding, the trap 144 acknowledgement with the fields OpenSM inspects, InformInfo,
 * ReportResp and PortInfo, and rejection of truncated or malformed MADs with a message naming
 * the offset.
 */
#include <string.h>

#include "check.h"
#include "update/wire.h"

static const uint8_t sm_gid[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x20, 0, 1 };

static void report_notice(struct wire_notice *n, enum wire_kind kind, uint32_t seq)
{
	struct wire_path_report r = { .kind = kind, .seq = seq, .lmc = 1, .nranges = 2 };
	char err[256];

	r.ranges[0] = (struct wire_lid_range){ 1, 0xBFFF };
	r.ranges[1] = (struct wire_lid_range){ 7, 7 };
	CHECK(wire_path_report_notice(&r, 1, sm_gid, n, err, sizeof(err)) == 0);
}

static void test_report_layout(void)
{
	struct wire_notice n, back;
	struct wire_path_report r;
	uint8_t raw[WIRE_NOTICE_LEN];
	char err[256];

	report_notice(&n, WIRE_KIND_UNPATH, 0x01020304);
	wire_notice_encode(&n, raw);
	CHECK(raw[0] == 0x84);				  /* generic, informational */
	CHECK(raw[1] == 0 && raw[2] == 0 && raw[3] == 4); /* subnet management */
	CHECK(raw[4] == 0 && raw[5] == 68);
	CHECK(raw[6] == 0 && raw[7] == 1); /* issuer LID */
	CHECK(!memcmp(raw + 12, "SRNU", 4));
	CHECK(raw[16] == 1 && raw[17] == 1); /* version, kind */
	CHECK(raw[18] == 1 && raw[19] == 2 && raw[20] == 3 && raw[21] == 4);
	CHECK(raw[22] == 1 && raw[23] == 2); /* LMC, ranges */
	CHECK(raw[24] == 0 && raw[25] == 1 && raw[26] == 0xBF && raw[27] == 0xFF);
	CHECK(!memcmp(raw + 64, sm_gid, 16));

	CHECK(wire_notice_decode(raw, sizeof(raw), &back, err, sizeof(err)) == 0);
	CHECK(wire_path_report_decode(&back, &r, err, sizeof(err)) == 0);
	CHECK(r.kind == WIRE_KIND_UNPATH && r.seq == 0x01020304 && r.lmc == 1);
	CHECK(r.nranges == 2 && r.ranges[1].first == 7 && r.ranges[1].last == 7);

	report_notice(&n, WIRE_KIND_REPATH, 9);
	CHECK(n.trap_num == 69);
	CHECK(wire_path_report_decode(&n, &r, err, sizeof(err)) == 0 && r.kind == WIRE_KIND_REPATH);
}

static void test_report_rejects(void)
{
	struct wire_path_report r, bad = { .kind = WIRE_KIND_UNPATH, .seq = 0 };
	struct wire_notice n;
	char err[256] = "";

	/* Encoder refuses what the decoder would refuse. */
	CHECK(wire_path_report_notice(&bad, 1, sm_gid, &n, err, sizeof(err)) == -1);
	CHECK(strstr(err, "sequence number 0") != NULL);
	bad.seq = 1;
	bad.nranges = 11;
	CHECK(wire_path_report_notice(&bad, 1, sm_gid, &n, err, sizeof(err)) == -1);

	/* Another trap, or no magic: not ours, no error. */
	report_notice(&n, WIRE_KIND_UNPATH, 5);
	n.trap_num = 64;
	CHECK(wire_path_report_decode(&n, &r, err, sizeof(err)) == 1);
	report_notice(&n, WIRE_KIND_UNPATH, 5);
	n.details[2] = 'X';
	CHECK(wire_path_report_decode(&n, &r, err, sizeof(err)) == 1);

	/* Ours but malformed: rejected with the offset. */
	report_notice(&n, WIRE_KIND_UNPATH, 5);
	n.details[7] = 2; /* RePath kind in a trap 68 */
	CHECK(wire_path_report_decode(&n, &r, err, sizeof(err)) == -1);
	CHECK(strstr(err, "offset 17 (kind)") != NULL);
	report_notice(&n, WIRE_KIND_UNPATH, 5);
	n.details[6] = 9;
	CHECK(wire_path_report_decode(&n, &r, err, sizeof(err)) == -1);
	CHECK(strstr(err, "version") != NULL);
	report_notice(&n, WIRE_KIND_UNPATH, 5);
	memset(n.details + 8, 0, 4);
	CHECK(wire_path_report_decode(&n, &r, err, sizeof(err)) == -1);
	report_notice(&n, WIRE_KIND_UNPATH, 5);
	n.details[13] = 11;
	CHECK(wire_path_report_decode(&n, &r, err, sizeof(err)) == -1);
	CHECK(strstr(err, "offset 23 (ranges)") != NULL);
	report_notice(&n, WIRE_KIND_UNPATH, 5);
	n.details[18] = 0; /* range 1 first LID 0 */
	n.details[19] = 0;
	CHECK(wire_path_report_decode(&n, &r, err, sizeof(err)) == -1);
	CHECK(strstr(err, "range 1") != NULL);
	report_notice(&n, WIRE_KIND_UNPATH, 5);
	n.details[12] = 8;
	CHECK(wire_path_report_decode(&n, &r, err, sizeof(err)) == -1);
}

static void test_ack(void)
{
	struct wire_ack a = { .kind = WIRE_KIND_REPATH,
			      .seq = 0xA0B0C0D0,
			      .lid = 0x1234,
			      .capmask = 0x0050c04a,
			      .attempt = 3 };
	struct wire_notice n, back;
	struct wire_ack got;
	uint8_t mad[WIRE_MAD_LEN];
	char err[256] = "";

	wire_ack_notice(&a, &n);
	wire_trap_encode(mad, 0x77, &n);
	/* SMP header: LID-routed SM class, Trap, Notice. */
	CHECK(mad[0] == 1 && mad[1] == 0x01 && mad[2] == 1 && mad[3] == 0x05);
	CHECK(mad[16] == 0 && mad[17] == 2);
	CHECK(mad[15] == 0x77);
	/* Notice at SMP data offset 64: generic, informational, CA, trap 144. */
	CHECK(mad[64] == 0x84 && mad[67] == 1 && mad[68] == 0 && mad[69] == 144);
	CHECK(mad[70] == 0x12 && mad[71] == 0x34);
	/* ntc_144 as OpenSM reads it: local changes 1, cap mask, flags = node description. */
	CHECK(mad[74 + 2] == 0x12 && mad[74 + 3] == 0x34);
	CHECK(mad[74 + 5] == 1);
	CHECK(mad[74 + 6] == 0x00 && mad[74 + 7] == 0x50 && mad[74 + 8] == 0xc0 &&
	      mad[74 + 9] == 0x4a);
	CHECK(mad[74 + 10] == 0 && mad[74 + 11] == 1);
	CHECK(!memcmp(mad + 74 + 14, "SRNU", 4));
	CHECK(mad[74 + 19] == 2 && mad[74 + 20] == 0xA0 && mad[74 + 23] == 0xD0);
	CHECK(mad[74 + 25] == 3);
	/* Nothing beyond the 64-byte notice (no IssuerGID in an SMP). */
	CHECK(mad[128] == 0 && mad[255] == 0);

	CHECK(wire_trap_decode(mad, sizeof(mad), &back, err, sizeof(err)) == 0);
	CHECK(wire_ack_decode(&back, &got, err, sizeof(err)) == 0);
	CHECK(got.kind == WIRE_KIND_REPATH && got.seq == 0xA0B0C0D0 && got.lid == 0x1234);
	CHECK(got.capmask == 0x0050c04a && got.attempt == 3 && got.status == 0);

	/* A plain trap 144 (e.g. a real capability change) is not ours. */
	memset(back.details + 14, 0, 4);
	CHECK(wire_ack_decode(&back, &got, err, sizeof(err)) == 1);
	/* Ours with other change flags would make OpenSM sweep: rejected. */
	wire_ack_notice(&a, &back);
	back.details[11] = 0x05;
	CHECK(wire_ack_decode(&back, &got, err, sizeof(err)) == -1);
	CHECK(strstr(err, "offset 20 (change flags)") != NULL);
	wire_ack_notice(&a, &back);
	back.details[19] = 7;
	CHECK(wire_ack_decode(&back, &got, err, sizeof(err)) == -1);
	CHECK(strstr(err, "offset 29 (kind)") != NULL);
	wire_ack_notice(&a, &back);
	memset(back.details + 20, 0, 4);
	CHECK(wire_ack_decode(&back, &got, err, sizeof(err)) == -1);
}

static void test_truncated(void)
{
	struct wire_notice n;
	struct wire_mad_hdr h;
	uint8_t mad[WIRE_MAD_LEN] = { 0 };
	char err[256] = "";

	CHECK(wire_mad_hdr_decode(mad, 10, &h, err, sizeof(err)) == -1);
	CHECK(strstr(err, "shorter than its 24-byte header") != NULL);
	CHECK(wire_notice_decode(mad, 70, &n, err, sizeof(err)) == -1);
	CHECK(strstr(err, "truncated") != NULL);
	CHECK(wire_notice_decode(mad, 63, &n, err, sizeof(err)) == -1);

	/* A Report cut short, one with the wrong method, one with a bad base version. */
	report_notice(&n, WIRE_KIND_UNPATH, 1);
	mad[0] = 1;
	mad[1] = WIRE_CLASS_SA;
	mad[2] = 2;
	mad[3] = WIRE_METHOD_REPORT;
	mad[17] = 2;
	wire_notice_encode(&n, mad + WIRE_SA_DATA_OFF);
	CHECK(wire_report_decode(mad, sizeof(mad), &h, &n, err, sizeof(err)) == 0);
	CHECK(wire_report_decode(mad, 100, &h, &n, err, sizeof(err)) == -1);
	CHECK(strstr(err, "Report of 100 bytes is truncated") != NULL);
	mad[3] = WIRE_METHOD_GET;
	CHECK(wire_report_decode(mad, sizeof(mad), &h, &n, err, sizeof(err)) == -1);
	CHECK(strstr(err, "not a SubnAdmReport") != NULL);
	mad[3] = WIRE_METHOD_REPORT;
	mad[0] = 2;
	CHECK(wire_report_decode(mad, sizeof(mad), &h, &n, err, sizeof(err)) == -1);
	CHECK(strstr(err, "BaseVersion") != NULL);
	mad[0] = 1;
	mad[17] = 3;
	CHECK(wire_report_decode(mad, sizeof(mad), &h, &n, err, sizeof(err)) == -1);
	CHECK(wire_trap_decode(mad, 100, &n, err, sizeof(err)) == -1);
}

static void test_report_resp(void)
{
	uint8_t rep[WIRE_MAD_LEN], resp[WIRE_MAD_LEN];
	unsigned i;

	for (i = 0; i < sizeof(rep); i++)
		rep[i] = (uint8_t)i;
	rep[3] = WIRE_METHOD_REPORT;
	wire_report_resp(rep, resp);
	CHECK(resp[3] == 0x86 && resp[4] == 0 && resp[5] == 0);
	CHECK(!memcmp(resp + 8, rep + 8, 8)); /* same TID */
	CHECK(!memcmp(resp + 56, rep + 56, 200));
}

static void test_informinfo(void)
{
	uint8_t mad[WIRE_MAD_LEN];
	const uint8_t *ii = mad + WIRE_SA_DATA_OFF;
	char err[256] = "";

	wire_informinfo_set(mad, 0x1122334455667788ull, 68, 1);
	CHECK(mad[1] == 0x03 && mad[2] == 2 && mad[3] == 0x02 && mad[17] == 0x03);
	CHECK(ii[16] == 0xFF && ii[17] == 0xFF && ii[18] == 0 && ii[19] == 0);
	CHECK(ii[22] == 1 && ii[23] == 1);
	CHECK(ii[24] == 0xFF && ii[25] == 0xFF && ii[26] == 0 && ii[27] == 68);
	CHECK(ii[28] == 0 && ii[29] == 0 && ii[30] == 1 && ii[31] == 18); /* QPN 1, 18 */
	CHECK(ii[33] == 0xFF && ii[34] == 0xFF && ii[35] == 0xFF);
	wire_informinfo_set(mad, 5, 69, 0);
	CHECK(ii[23] == 0 && ii[27] == 69);

	/* The answer: GetResp with the same low TID; the kernel may change the high half. */
	wire_informinfo_set(mad, 0xAB00000042ull, 68, 1);
	mad[3] = WIRE_METHOD_GET_RESP;
	mad[8] = 0x99;
	CHECK(wire_informinfo_resp_decode(mad, sizeof(mad), 0x42, 68, err, sizeof(err)) == 0);
	CHECK(wire_informinfo_resp_decode(mad, sizeof(mad), 0x43, 68, err, sizeof(err)) == -1);
	CHECK(strstr(err, "TID") != NULL);
	CHECK(wire_informinfo_resp_decode(mad, sizeof(mad), 0x42, 69, err, sizeof(err)) == -1);
	mad[4] = 0x02; /* SA status 2: request invalid */
	CHECK(wire_informinfo_resp_decode(mad, sizeof(mad), 0x42, 68, err, sizeof(err)) == 0x0200);
}

static void test_portinfo(void)
{
	struct wire_portinfo pi;
	uint8_t mad[WIRE_MAD_LEN];
	char err[256] = "";

	wire_portinfo_get(mad, 0x51, 1);
	CHECK(mad[1] == 0x81 && mad[3] == 0x01 && mad[17] == 0x15 && mad[23] == 1);
	CHECK(mad[6] == 0 && mad[7] == 0); /* hop pointer and count */
	CHECK(mad[32] == 0xFF && mad[33] == 0xFF && mad[34] == 0xFF && mad[35] == 0xFF);
	mad[3] = WIRE_METHOD_GET_RESP;
	mad[4] = 0x80; /* direction bit, status 0 */
	mad[64 + 17] = 6;
	mad[64 + 19] = 1;
	mad[64 + 20] = 0x00;
	mad[64 + 21] = 0x50;
	mad[64 + 22] = 0xc0;
	mad[64 + 23] = 0x4a;
	mad[64 + 32] = 0x24; /* speed 2, state active (4) */
	mad[64 + 34] = 0x01;
	CHECK(wire_portinfo_resp_decode(mad, sizeof(mad), 0x51, &pi, err, sizeof(err)) == 0);
	CHECK(pi.lid == 6 && pi.sm_lid == 1 && pi.capmask == 0x0050c04a && pi.state == 4 &&
	      pi.lmc == 1);
	mad[5] = 0x1c;
	CHECK(wire_portinfo_resp_decode(mad, sizeof(mad), 0x51, &pi, err, sizeof(err)) == -1);
	CHECK(strstr(err, "status") != NULL);
}

int main(void)
{
	test_report_layout();
	test_report_rejects();
	test_ack();
	test_truncated();
	test_report_resp();
	test_informinfo();
	test_portinfo();
	return CHECK_RESULT();
}
