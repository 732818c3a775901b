/*
 * test_routing.c - routing.c and the dumps' readers: routing_changed_lids(), which names the
 * LIDs an update announces in its UnPath report (every changed LFT entry or SL is covered,
 * unchanged LIDs stay out as long as the ranges fit, and too many ranges merge across the
 * smallest gaps); the path-SL dump's line syntax; and SL2VL tables read back as one map when
 * every switch port pair agrees.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "fabric/loaders.h"
#include "fabric/routing.h"
#include "testfab.h"

static void copy_tables(struct routing *dst, const struct routing *src)
{
	size_t cells = (size_t)src->nswitches * src->lft_len;

	memcpy(dst->lft, src->lft, cells);
	dst->sl_uniform = src->sl_uniform;
}

static void test_changed(const struct fabric *f)
{
	struct routing a, b;
	struct routing_lid_range rg[10];
	uint32_t changed, lid;
	int n;

	CHECK(routing_init(&a, f, "a") == 0 && routing_init(&b, f, "b") == 0);
	memset(a.lft, 1, (size_t)a.nswitches * a.lft_len);
	copy_tables(&b, &a);
	CHECK(routing_changed_lids(&a, &b, rg, 10, &changed) == 0 && changed == 0);

	/* LIDs 3, 4 and 9 change on one switch each: two ranges. */
	routing_lft(&b, 0)[3] = 2;
	routing_lft(&b, 1)[4] = 2;
	routing_lft(&b, 2)[9] = 2;
	n = routing_changed_lids(&a, &b, rg, 10, &changed);
	CHECK(n == 2 && changed == 3);
	CHECK(rg[0].first == 3 && rg[0].last == 4 && rg[1].first == 9 && rg[1].last == 9);

	/* A changed SL counts although the LFTs agree. */
	copy_tables(&b, &a);
	CHECK(routing_alloc_sl_by_dlid(&b) == 0);
	b.sl_by_dlid[7] = 1;
	n = routing_changed_lids(&a, &b, rg, 10, &changed);
	CHECK(n == 1 && changed == 1 && rg[0].first == 7 && rg[0].last == 7);

	/* Every odd LID changes: more ranges than fit, merged; no changed LID left out. */
	b.sl_by_dlid[7] = 0;
	for (lid = 1; lid < b.lft_len; lid += 2)
		routing_lft(&b, 0)[lid] = 3;
	n = routing_changed_lids(&a, &b, rg, 4, &changed);
	CHECK(n >= 1 && n <= 4 && changed == (b.lft_len) / 2);
	for (lid = 1; lid < b.lft_len; lid += 2) {
		int covered = 0, i;

		for (i = 0; i < n; i++)
			covered |= rg[i].first <= lid && lid <= rg[i].last;
		CHECK(covered);
	}
	for (lid = 1; lid < (uint32_t)n; lid++)
		CHECK(rg[lid - 1].last < rg[lid].first);

	/* Routings of different fabrics cannot be compared. */
	b.lft_len--;
	CHECK(routing_changed_lids(&a, &b, rg, 10, &changed) == -1);
	b.lft_len++;
	routing_free(&a);
	routing_free(&b);
}

/* Loads text as a path-SL dump; 0 or -1 with err set. */
typedef int (*dump_loader)(struct routing *r, const struct fabric *f, const char *path,
			   struct fab_error *err);

/* Loads text as a dump file with load into a fresh r; the loader's return. */
static int load_text(dump_loader load, const struct fabric *f, const char *text, struct routing *r,
		     struct fab_error *err)
{
	char path[] = "/tmp/sarnue-dump-XXXXXX";
	int rc;

	CHECK(routing_init(r, f, "dump") == 0);
	CHECK(testfab_write_file(path, text) == 0);
	rc = load(r, f, path, err);
	unlink(path);
	return rc;
}

static int load_path_sl_text(const struct fabric *f, const char *text, struct routing *r,
			     struct fab_error *err)
{
	return load_text(routing_load_path_sl, f, text, r, err);
}

/* Both LFT layouts load; each malformed entry is named by its line. */
static void test_lft_lines(const struct fabric *f)
{
	static const char *const bad[] = {
		"0x0001 : 00x : 00 : yes\n",  /* port glued to a letter */
		"0x00001 : 001 : 00 : yes\n", /* five hex digits */
		"0x0001 :\n",		      /* no port */
		"0x0001 : -1 : 00 : yes\n",
		"0x0001 : 256 : 00 : yes\n",
		"0x0001001\n", /* LID and port glued */
		"0xg001 : 001\n",
	};
	static const char *const bad_header[] = {
		"dump_ucast_routes: Switch 0x1000000000000000a\n", /* 17 digits */
		"dump_ucast_routes: Switch 0x-1\n",
		"dump_ucast_routes: Switch 0xa00 junk\n",
		"Unicast lids [0x0-0x3] of switch Lid 1 guid 0xZ ('sw0'):\n",
		"Unicast lids [0x0-0x3] of switch Lid 1\n",
	};
	unsigned long long guid = f->nodes[f->switches[0]].guid;
	struct fab_error err = { "" };
	char text[512];
	struct routing r;
	size_t i;

	snprintf(text, sizeof(text),
		 "dump_ucast_routes: Switch 0x%016llx\nLID    : Port : Hops : Optimal\n"
		 "0x0001 : 000 : 00 : yes\n0x0002 : UNREACHABLE\n0x0003 : 002 : 01 : no\n",
		 guid);
	CHECK(load_text(routing_load_lfts, f, text, &r, &err) == 0);
	CHECK(routing_lft(&r, 0)[1] == 0 && routing_lft(&r, 0)[2] == FAB_NO_PORT &&
	      routing_lft(&r, 0)[3] == 2);
	routing_free(&r);
	snprintf(text, sizeof(text),
		 "Unicast lids [0x0-0x3] of switch Lid 1 guid 0x%016llx ('sw0'):\n"
		 "0x0003 001 # portguid 0x0\n0x0002 002\n",
		 guid);
	CHECK(load_text(routing_load_lfts, f, text, &r, &err) == 0);
	CHECK(routing_lft(&r, 0)[3] == 1 && routing_lft(&r, 0)[2] == 2);
	routing_free(&r);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "dump_ucast_routes: Switch 0x%016llx\n%s", guid,
			 bad[i]);
		CHECK(load_text(routing_load_lfts, f, text, &r, &err) == -1);
		CHECK(strstr(err.msg, ":2: malformed LFT line") != NULL);
		routing_free(&r);
	}
	/* A header with a bad GUID stops the file: its entries are nobody else's. */
	for (i = 0; i < sizeof(bad_header) / sizeof(bad_header[0]); i++) {
		snprintf(text, sizeof(text),
			 "dump_ucast_routes: Switch 0x%016llx\n0x0001 : 000 : 00 : yes\n%s"
			 "0x0003 : 001 : 00 : yes\n",
			 guid, bad_header[i]);
		CHECK(load_text(routing_load_lfts, f, text, &r, &err) == -1);
		CHECK(strstr(err.msg, ":3: switch header without a GUID") != NULL);
		routing_free(&r);
	}
}

/* An SL2VL line is a GUID, two ports and exactly eight bytes. */
static void test_sl2vl_lines(const struct fabric *f)
{
	static const char *const bad[] = {
		"0x%llx 1 2 0x01 0x23 0x45 0x67 0x01 0x23 0x45\n", /* seven bytes */
		"0x%llx 1 2 0x01 0x23 0x45 0x67 0x01 0x23 0x45 0x123\n",
		"0x%llx 1 2 0x01 0x23 0x45 0x67 0x01 0x23 0x45 0x67 0x89\n",
		"0x%llx 1 2 0x01 0x23 0x45 0x67 0x01 0x23 0x45 0x6g\n",
		"0x%llx 1 2 1 0x23 0x45 0x67 0x01 0x23 0x45 0x67\n", /* no 0x */
		"0x%llx 1 999 0x01 0x23 0x45 0x67 0x01 0x23 0x45 0x67\n",
	};
	unsigned long long guid = f->nodes[f->switches[0]].guid;
	struct fab_error err = { "" };
	char text[256], line[128];
	struct routing r;
	size_t i;

	snprintf(text, sizeof(text), "# in out\n 0x%llx\t1 2 0x1 0x23 0x45 0x67 0x0 0x0 0x0 0xF \n",
		 guid);
	CHECK(load_text(routing_load_sl2vl, f, text, &r, &err) == 0);
	CHECK(r.sl2vl && routing_sl2vl_map(&r, 0, 1, 2)[1] == 1 &&
	      routing_sl2vl_map(&r, 0, 1, 2)[2] == 2 && routing_sl2vl_map(&r, 0, 1, 2)[15] == 15);
	routing_free(&r);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(line, sizeof(line), bad[i], guid);
		CHECK(load_text(routing_load_sl2vl, f, line, &r, &err) == -1);
		CHECK(strstr(err.msg, ":1: expected \"0xGUID IN OUT\" and 8 hex bytes") != NULL);
		routing_free(&r);
	}
}

/* Well-formed lines in their variants load; each malformed one is named by its line. */
static void test_path_sl_lines(const struct fabric *f)
{
	static const char *const bad[] = {
		"0x%llx 1\n",	     /* no SL */
		"0x%llx 1 16\n",     /* SL beyond 15 */
		"%llx 1 0\n",	     /* no 0x */
		"0x 1 0 %llx\n",     /* no digits */
		"0x%llx 1 0 junk\n", /* trailing words */
		"0x%llx 1 2x\n",     /* SL not a number */
		"0x1%016llx 1 0\n",  /* 17 hex digits */
		"0x%llx1 0\n",	     /* DLID glued to the GUID */
	};
	unsigned long long guid = f->ports[f->endports[0]].guid;
	uint16_t src = f->ports[f->endports[0]].base_lid;
	struct fab_error err = { "" };
	char text[256], line[96];
	struct routing r;
	size_t i;

	snprintf(text, sizeof(text), "# comment\n\n  0X%llX\t5  3 \r\n", guid);
	CHECK(load_path_sl_text(f, text, &r, &err) == 0);
	CHECK(routing_path_sl(&r, src, 5) == 3);
	routing_free(&r);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(line, sizeof(line), bad[i], guid);
		snprintf(text, sizeof(text), "0x%llx 2 1\n%s", guid, line);
		CHECK(load_path_sl_text(f, text, &r, &err) == -1);
		CHECK(strstr(err.msg, ":2: expected \"0xGUID DLID SL\"") != NULL);
		routing_free(&r);
	}
	/* A DLID beyond the fabric's LIDs: the usual cause, an LMC the dumps do not record. */
	snprintf(text, sizeof(text), "0x%llx %u 0\n", guid, f->max_lid + 1);
	CHECK(load_path_sl_text(f, text, &r, &err) == -1);
	CHECK(strstr(err.msg, ":1: LID ") != NULL);
	CHECK(strstr(err.msg, "past the topology's highest LID") != NULL);
	CHECK(strstr(err.msg, "--lmc") != NULL);
	routing_free(&r);
	/* Past any unicast LID it is malformed, as before. */
	snprintf(text, sizeof(text), "0x%llx 49152 0\n", guid);
	CHECK(load_path_sl_text(f, text, &r, &err) == -1);
	CHECK(strstr(err.msg, ":1: expected \"0xGUID DLID SL\"") != NULL);
	routing_free(&r);
}

/* r's path-SL dump in the form want gives, as text (freed by the caller). */
static char *path_sl_text(const struct routing *r, const struct fabric *f, enum path_sl_form want,
			  size_t *len)
{
	char *text = NULL;
	FILE *out = open_memstream(&text, len);

	CHECK(out != NULL);
	if (!out)
		return NULL;
	CHECK(routing_write_path_sl_as(r, f, want, out) == 0);
	fclose(out);
	return text;
}

/* Every (source end port, destination LID) path has the same SL in a and b. */
static unsigned path_sl_mismatches(const struct fabric *f, const struct routing *a,
				   const struct routing *b)
{
	unsigned n = 0;
	uint32_t i, dlid;

	for (i = 0; i < f->nendports; i++)
		for (dlid = 1; dlid <= f->max_lid; dlid++) {
			uint16_t slid = f->ports[f->endports[i]].base_lid;

			if (f->lid_port[dlid] == f->endports[i])
				continue;
			n += routing_path_sl(a, slid, (uint16_t)dlid) !=
			     routing_path_sl(b, slid, (uint16_t)dlid);
		}
	return n;
}

/*
 * The compact form: auto writes it when every SL is 0, in lines ibdmchk skips (it matches
 * "0x<alnum> <digits> <digits>" anywhere in a line), and it reads back to the same SLs.  With
 * another SL it is written on request only, ends in the line that stops ibdmchk, and still
 * reads back; an SL that varies by source keeps the full form.
 */
static void test_path_sl_compact(const struct fabric *f)
{
	struct fab_error err = { "" };
	struct routing r, back;
	size_t len, full_len;
	char *text, *full;

	CHECK(routing_init(&r, f, "sl") == 0);
	CHECK(routing_path_sl_form(&r, f, PATH_SL_AUTO) == PATH_SL_COMPACT);
	text = path_sl_text(&r, f, PATH_SL_AUTO, &len);
	full = path_sl_text(&r, f, PATH_SL_FULL, &full_len);
	CHECK(text && full && !strncmp(text, "# sarnue-path-sl compact\n", 25));
	CHECK(text && strstr(text, "\nsl 0\n") && !strstr(text, "\nlid ") && !strstr(text, "0x"));
	/* Full: a line per end port and every other LID in use; compact: the header. */
	CHECK(full_len >= (size_t)f->nendports * (f->nendports - 1) * 20 && len < 400);
	CHECK(load_path_sl_text(f, text, &back, &err) == 0);
	CHECK(back.sl_mode == ROUTING_SL_UNIFORM && path_sl_mismatches(f, &r, &back) == 0);
	routing_free(&back);
	free(text);
	free(full);

	/* Per destination, SL 2 towards two LIDs. */
	CHECK(routing_alloc_sl_by_dlid(&r) == 0);
	r.sl_by_dlid[2] = 2;
	r.sl_by_dlid[4] = 2;
	CHECK(routing_path_sl_form(&r, f, PATH_SL_AUTO) == PATH_SL_FULL);
	CHECK(routing_path_sl_form(&r, f, PATH_SL_COMPACT) == PATH_SL_COMPACT);
	text = path_sl_text(&r, f, PATH_SL_COMPACT, &len);
	CHECK(text && strstr(text, "\nlid 2 2\nlid 4 2\n"));
	CHECK(text && strstr(text, "\n0xsarnuecompactdumpwritedumppathslfull 0 0\n"));
	CHECK(load_path_sl_text(f, text, &back, &err) == 0);
	CHECK(back.sl_mode == ROUTING_SL_PER_DLID && path_sl_mismatches(f, &r, &back) == 0);
	routing_free(&back);
	free(text);

	/* A table per source switch whose entries agree is still one SL per destination. */
	r.sl_uniform = 1;
	CHECK(routing_alloc_sl_by_pair(&r, f) == 0);
	CHECK(routing_path_sl_form(&r, f, PATH_SL_COMPACT) == PATH_SL_COMPACT);
	text = path_sl_text(&r, f, PATH_SL_COMPACT, &len);
	CHECK(text && strstr(text, "\nsl 1\n") && !strstr(text, "\nlid "));
	CHECK(text && strstr(text, "0xsarnuecompactdumpwritedumppathslfull"));
	CHECK(load_path_sl_text(f, text, &back, &err) == 0);
	CHECK(back.sl_mode == ROUTING_SL_UNIFORM && path_sl_mismatches(f, &r, &back) == 0);
	routing_free(&back);
	free(text);
	/* One source switch differs: only the full form can say so. */
	routing_set_pair_sl(&r, r.sl_src_sw[f->ports[f->endports[0]].base_lid],
			    f->ports[f->endports[1]].base_lid, 3);
	CHECK(routing_path_sl_form(&r, f, PATH_SL_COMPACT) == PATH_SL_FULL);
	text = path_sl_text(&r, f, PATH_SL_COMPACT, &len);
	full = path_sl_text(&r, f, PATH_SL_FULL, &full_len);
	CHECK(text && full && len == full_len && !memcmp(text, full, len));
	free(text);
	free(full);
	routing_free(&r);

	/* Malformed compact dumps name the line. */
	CHECK(load_path_sl_text(f, "# sarnue-path-sl compact\nsl 0\nlid 2\n", &back, &err) == -1);
	CHECK(strstr(err.msg, ":3: expected \"sl SL\" or \"lid LID SL\"") != NULL);
	routing_free(&back);
	CHECK(load_path_sl_text(f, "# sarnue-path-sl compact\nlid 2 1\n", &back, &err) == -1);
	CHECK(strstr(err.msg, "without its \"sl SL\" line") != NULL);
	routing_free(&back);
	CHECK(load_path_sl_text(f, "# sarnue-path-sl compact\nsl 0\nlid 2 1\nlid 2 3\n", &back,
				&err) == -1);
	CHECK(strstr(err.msg, ":4: LID 2 named twice") != NULL);
	routing_free(&back);
	CHECK(load_path_sl_text(f, "# sarnue-path-sl compact\nsl 0\nlid 999 1\n", &back, &err) ==
	      -1);
	CHECK(strstr(err.msg, ":3: LID 999 is past the topology's highest LID") != NULL);
	routing_free(&back);
	CHECK(load_path_sl_text(f, "# sarnue-path-sl compact\nsl 16\n", &back, &err) == -1);
	routing_free(&back);
}

/* Writes r's SL2VL tables and reads them back into back. */
static void sl2vl_round_trip(const struct fabric *f, const struct routing *r, struct routing *back)
{
	char path[] = "/tmp/sarnue-sl2vl-XXXXXX";
	struct fab_error err = { "" };
	FILE *out;

	CHECK(testfab_write_file(path, "") == 0);
	out = fopen(path, "w");
	CHECK(out && routing_write_sl2vl(r, f, out) == 0);
	if (out)
		fclose(out);
	CHECK(routing_init(back, f, "dump") == 0);
	CHECK(routing_load_sl2vl(back, f, path, &err) == 0);
	unlink(path);
}

/*
 * The same map on every port pair comes back as the one uniform map (the verifier groups
 * sources then); one pair that differs keeps the table.  A U-turn pair does not count.
 */
static void test_sl2vl_collapse(const struct fabric *f)
{
	struct routing r, back;
	unsigned sl;

	CHECK(routing_init(&r, f, "sl2vl") == 0);
	for (sl = 0; sl < ROUTING_MAX_SL; sl++)
		r.sl2vl_uniform[sl] = (uint8_t)(sl % 4);
	CHECK(routing_alloc_sl2vl(&r, f) == 0);
	sl2vl_round_trip(f, &r, &back);
	CHECK(back.sl2vl == NULL && !memcmp(back.sl2vl_uniform, r.sl2vl_uniform, ROUTING_MAX_SL));
	routing_free(&back);

	routing_sl2vl_map(&r, 1, 1, 2)[5] = 3;
	sl2vl_round_trip(f, &r, &back);
	CHECK(back.sl2vl != NULL && routing_sl2vl(&back, 1, 1, 2, 5) == 3);
	CHECK(routing_sl2vl(&back, 1, 2, 1, 5) == 1 && routing_sl2vl(&back, 0, 1, 2, 5) == 1);
	CHECK(routing_sl2vl_collapse(&back, f) == 0 && back.sl2vl != NULL);
	routing_free(&back);

	routing_sl2vl_map(&r, 1, 1, 2)[5] = 1;
	routing_sl2vl_map(&r, 1, 2, 2)[5] = 3;
	CHECK(routing_sl2vl_collapse(&r, f) == 1 && r.sl2vl == NULL && r.sl2vl_uniform[5] == 1);
	CHECK(routing_sl2vl_collapse(&r, f) == 0);
	routing_free(&r);
}

int main(void)
{
	unsigned links[16][2];
	struct fabric f;
	unsigned n = testfab_ring(links, 4);

	CHECK(testfab_build(&f, 4, 3, (const unsigned(*)[2])links, n, 0) == 0);
	test_changed(&f);
	test_path_sl_lines(&f);
	test_path_sl_compact(&f);
	test_lft_lines(&f);
	test_sl2vl_lines(&f);
	test_sl2vl_collapse(&f);
	fabric_free(&f);
	return CHECK_RESULT();
}
