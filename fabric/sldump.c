/*
 * sldump.c - path-SL and SL2VL dump files in the formats ibdmchk reads with -c and -d.
 *
 * OpenSM 3.3.23 never calls an engine's dump hook and its own SL2VL dump has another layout, so
 * the plugin writes these after each routing; `sarnue check` reads them back, and ibdmchk can
 * check the same files independently.
 *
 *   path SL:  "0x<source node GUID> <destination LID> <SL>" (ibdmchk looks sources up by node
 *             GUID; port GUIDs are accepted when reading), or the compact form below when the
 *             SL depends on the destination only
 *   SL2VL:    "0x<switch GUID> <in port> <out port> 0x<sl0><sl1> 0x<sl2><sl3> ... (8 bytes)"
 */
#include "fabric/loaders.h"
#include "lib/scan.h"
#include "lib/input.h"
#include "lib/assert.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* v in decimal at p, without a terminating NUL; returns the end. */
static char *put_decimal(char *p, uint32_t v)
{
	char digits[10];
	unsigned n = 0;

	do {
		sn_assert(n < sizeof(digits));
		digits[n++] = (char)('0' + v % 10);
	} while (v /= 10);
	while (n)
		*p++ = digits[--n];
	return p;
}

/*
 * One line per end port and destination LID: 484 million lines (12.8 GB) for the 22,000 ports of
 * the random graph of Scale in README.  fprintf per line took half of the time the file took to
 * write, so lines are put together by hand in a buffer; the bytes are the same.
 */
int routing_write_path_sl(const struct routing *r, const struct fabric *f, FILE *out)
{
	enum {
		BUF = 1 << 16,
		LINE_MAX_LEN = 40
	};
	char *buf = malloc(BUF), *p, guid[24];
	uint32_t i, dlid;
	int guid_len, rc = -1;

	if (!buf)
		return -1;
	p = buf;
	for (i = 0; i < f->nendports; i++) {
		const struct fab_port *src = &f->ports[f->endports[i]];

		guid_len =
			snprintf(guid, sizeof(guid), "0x%016" PRIx64 " ", f->nodes[src->node].guid);
		for (dlid = 1; dlid <= f->max_lid; dlid++) {
			if (f->lid_port[dlid] == FAB_NONE || f->lid_port[dlid] == f->endports[i])
				continue;
			if (p - buf > BUF - LINE_MAX_LEN) {
				if (fwrite(buf, 1, (size_t)(p - buf), out) != (size_t)(p - buf))
					goto out;
				p = buf;
			}
			memcpy(p, guid, (size_t)guid_len);
			p = put_decimal(p + guid_len, dlid);
			*p++ = ' ';
			p = put_decimal(p, routing_path_sl(r, src->base_lid, (uint16_t)dlid));
			*p++ = '\n';
			sn_assert(p - buf <= BUF);
		}
	}
	if (fwrite(buf, 1, (size_t)(p - buf), out) == (size_t)(p - buf))
		rc = ferror(out) ? -1 : 0;
out:
	free(buf);
	return rc;
}

/*
 * The compact path-SL form.  ibdmchk keeps a path-SL table per source node and has no default
 * per destination: a source it has lines for needs one for every destination LID, else it stops
 * with "SL to destination is unassigned"; a source it has no line for uses SL 0 everywhere.  So
 * nothing shorter than the full form tells it an SL other than 0.  The compact form is written
 * in lines ibdmchk skips (none holds "0x"), so it reads the file as SL 0 on every path: exact
 * when every SL is 0, the common case (sar-updn, sar-dmodk, one-VL routings), where the full
 * form of a 10,000-host fabric takes gigabytes.  When some SL is not 0 the file ends in a line
 * ibdmchk does parse, naming a source GUID no fabric has, so that ibdmchk fails ("Fail to find
 * node with guid:sarnuecompactdumpwritedumppathslfull") instead of checking the wrong VLs.
 *
 *   # sarnue-path-sl compact        first line, tells the readers which form follows
 *   sl <SL>                         towards every destination LID not named below
 *   lid <destination LID> <SL>      one per LID whose SL differs
 */
static const char compact_magic[] = "# sarnue-path-sl compact";
static const char compact_stop_ibdmchk[] = "0xsarnuecompactdumpwritedumppathslfull 0 0";

/*
 * The SL towards each LID when it does not depend on the source, into sl[max_lid + 1] (0xff where
 * no port has the LID).  Returns 1 when it does depend on the source for some LID, else 0.
 */
static int sl_per_destination(const struct routing *r, const struct fabric *f, uint8_t *sl)
{
	uint32_t i, dlid;

	memset(sl, 0xff, f->max_lid + 1);
	if (!routing_sl_per_source(r)) {
		for (dlid = 1; dlid <= f->max_lid; dlid++)
			if (f->lid_port[dlid] != FAB_NONE)
				sl[dlid] = routing_path_sl(r, 0, (uint16_t)dlid);
		return 0;
	}
	/* Per-switch SL tables may still agree between sources (sar-dfsssp on one VL). */
	for (i = 0; i < f->nendports; i++) {
		const struct fab_port *src = &f->ports[f->endports[i]];

		for (dlid = 1; dlid <= f->max_lid; dlid++) {
			uint8_t s;

			if (f->lid_port[dlid] == FAB_NONE || f->lid_port[dlid] == f->endports[i])
				continue;
			s = routing_path_sl(r, src->base_lid, (uint16_t)dlid);
			if (sl[dlid] == 0xff)
				sl[dlid] = s;
			else if (sl[dlid] != s)
				return 1;
		}
	}
	/* A LID only its own port could reach is named by nobody: any SL will do. */
	for (dlid = 1; dlid <= f->max_lid; dlid++)
		if (f->lid_port[dlid] != FAB_NONE && sl[dlid] == 0xff)
			sl[dlid] = r->sl_uniform;
	return 0;
}

enum path_sl_form routing_path_sl_form(const struct routing *r, const struct fabric *f,
				       enum path_sl_form want)
{
	uint8_t *sl;
	uint32_t dlid;
	enum path_sl_form form = PATH_SL_COMPACT;

	if (want == PATH_SL_FULL)
		return PATH_SL_FULL;
	sl = malloc(f->max_lid + 1);
	if (!sl)
		return PATH_SL_FULL;
	if (sl_per_destination(r, f, sl))
		form = PATH_SL_FULL;
	for (dlid = 1; form == PATH_SL_COMPACT && want == PATH_SL_AUTO && dlid <= f->max_lid;
	     dlid++)
		if (sl[dlid] != 0xff && sl[dlid] != 0)
			form = PATH_SL_FULL;
	free(sl);
	return form;
}

/* The most common SL among the LIDs in use, so that the fewest need a "lid" line. */
static uint8_t most_common_sl(const uint8_t *sl, uint32_t max_lid)
{
	uint32_t count[ROUTING_MAX_SL] = { 0 }, dlid;
	uint8_t best = 0, s;

	for (dlid = 1; dlid <= max_lid; dlid++)
		if (sl[dlid] != 0xff) {
			sn_assert(sl[dlid] < ROUTING_MAX_SL);
			count[sl[dlid]]++;
		}
	for (s = 1; s < ROUTING_MAX_SL; s++)
		if (count[s] > count[best])
			best = s;
	return best;
}

static int write_path_sl_compact(const uint8_t *sl, uint32_t max_lid, FILE *out)
{
	uint8_t def = most_common_sl(sl, max_lid);
	uint32_t dlid;
	int others = def != 0;

	fprintf(out,
		"%s\n"
		"# The SL of a path depends on its destination only: \"sl SL\" is the SL towards\n"
		"# every destination LID, \"lid LID SL\" towards one that differs.  sarnue check reads\n"
		"# this form; ibdmchk reads it as SL 0 on every path, exact when no other SL is named.\n"
		"sl %u\n",
		compact_magic, def);
	for (dlid = 1; dlid <= max_lid; dlid++)
		if (sl[dlid] != 0xff && sl[dlid] != def) {
			fprintf(out, "lid %u %u\n", dlid, sl[dlid]);
			others |= sl[dlid] != 0;
		}
	if (others)
		fprintf(out,
			"# ibdmchk needs a line per source and destination (-O dump_path_sl=full):\n"
			"# the next line stops it rather than let it check every path on SL 0.\n"
			"%s\n",
			compact_stop_ibdmchk);
	return ferror(out) ? -1 : 0;
}

int routing_write_path_sl_as(const struct routing *r, const struct fabric *f,
			     enum path_sl_form form, FILE *out)
{
	uint8_t *sl;
	int rc;

	if (routing_path_sl_form(r, f, form) == PATH_SL_FULL)
		return routing_write_path_sl(r, f, out);
	sl = malloc(f->max_lid + 1);
	if (!sl) {
		errno = ENOMEM;
		return -1;
	}
	sl_per_destination(r, f, sl);
	rc = write_path_sl_compact(sl, f->max_lid, out);
	free(sl);
	return rc;
}

int routing_write_sl2vl(const struct routing *r, const struct fabric *f, FILE *out)
{
	uint32_t sw;
	unsigned in, o, sl;

	for (sw = 0; sw < f->nswitches; sw++) {
		const struct fab_node *n = &f->nodes[f->switches[sw]];

		for (in = 0; in <= n->nports; in++) {
			for (o = 1; o <= n->nports; o++) {
				if (in == o)
					continue;
				fprintf(out, "0x%016" PRIx64 " %u %u", n->guid, in, o);
				for (sl = 0; sl < ROUTING_MAX_SL; sl += 2)
					fprintf(out, " 0x%x%x", routing_sl2vl(r, sw, in, o, sl),
						routing_sl2vl(r, sw, in, o, sl + 1));
				fputc('\n', out);
			}
		}
	}
	return ferror(out) ? -1 : 0;
}

struct guid_sw {
	uint64_t guid;
	uint32_t sw; /* source switch of the end port */
};

static int cmp_guid_sw(const void *a, const void *b)
{
	const struct guid_sw *x = a, *y = b;

	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	return x->sw < y->sw ? -1 : x->sw > y->sw;
}

/*
 * Port and node GUIDs of the end ports with the switch each one's packets enter, sorted for
 * bsearch while reading large files.  A node GUID appears once per port of that node.
 */
static struct guid_sw *endport_guids(const struct fabric *f)
{
	struct guid_sw *g = malloc(sizeof(*g) * (2 * f->nendports + 1));
	uint32_t i;

	if (!g)
		return NULL;
	for (i = 0; i < f->nendports; i++) {
		const struct fab_port *p = &f->ports[f->endports[i]];
		uint32_t sw = routing_lid_switch(f, p->base_lid);

		sn_assert(sw == FAB_NONE || sw < f->nswitches);
		g[2 * i] = (struct guid_sw){ p->guid, sw };
		g[2 * i + 1] = (struct guid_sw){ f->nodes[p->node].guid, sw };
	}
	qsort(g, 2 * f->nendports, sizeof(*g), cmp_guid_sw);
	return g;
}

static const struct guid_sw *find_guid(const struct guid_sw *g, uint32_t n, uint64_t guid)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (g[mid].guid < guid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && g[lo].guid == guid ? &g[lo] : NULL;
}

struct sl_load {
	struct routing *r;
	const struct guid_sw *guids_end;
	uint8_t *pair_seen; /* bitmap over (source switch, DLID) */
	uint8_t *dlid_sl;   /* first SL seen per DLID, 0xff when none */
	uint8_t *mixed;	    /* SL to that DLID differs between sources */
};

/* Returns the switch whose entry conflicts, or FAB_NONE. */
static uint32_t sl_load_set(struct sl_load *l, const struct guid_sw *g, unsigned dlid, unsigned sl)
{
	struct routing *r = l->r;
	uint64_t guid = g->guid;

	/* parse_path_sl_line bounded both by the table and the SL count. */
	sn_assert(dlid < r->lft_len && sl < ROUTING_MAX_SL);
	for (; g < l->guids_end && g->guid == guid; g++) {
		size_t cell = (size_t)g->sw * r->lft_len + dlid;

		if (g->sw == FAB_NONE)
			continue;
		sn_assert(g->sw < r->nswitches);
		if ((l->pair_seen[cell / 8] >> (cell % 8)) & 1) {
			if (r->sl_by_pair[cell] != sl)
				return g->sw;
		}
		l->pair_seen[cell / 8] |= (uint8_t)(1u << (cell % 8));
		r->sl_by_pair[cell] = (uint8_t)sl;
	}
	if (l->dlid_sl[dlid] == 0xff)
		l->dlid_sl[dlid] = (uint8_t)sl;
	else if (l->dlid_sl[dlid] != sl)
		l->mixed[dlid] = 1;
	return FAB_NONE;
}

/* One SL per destination is what most engines produce: keep the compact table then. */
static int sl_load_finish(struct sl_load *l)
{
	struct routing *r = l->r;
	uint32_t dlid;

	for (dlid = 0; dlid < r->lft_len; dlid++)
		if (l->mixed[dlid])
			return 0;
	free(r->sl_by_pair);
	free(r->sl_src_sw);
	r->sl_by_pair = NULL;
	r->sl_src_sw = NULL;
	if (routing_alloc_sl_by_dlid(r))
		return -1;
	for (dlid = 0; dlid < r->lft_len; dlid++)
		if (l->dlid_sl[dlid] != 0xff)
			r->sl_by_dlid[dlid] = l->dlid_sl[dlid];
	return 0;
}

/*
 * "0xGUID DLID SL" with nothing but blanks after it.  Dumps of large fabrics have a line per
 * pair of end port and LID (23 million for 4,864 LIDs), and sscanf took two thirds of
 * `sarnue check`'s time on them.
 */
/* 0, -1 when malformed, -2 when well formed but *dlid is past the topology's LIDs. */
static int parse_path_sl_line(const char *p, unsigned lft_len, uint64_t *guid, unsigned *dlid,
			      unsigned *sl)
{
	fab_skip_blanks(&p);
	if (fab_scan_hex(&p, 16, guid) || !fab_skip_blanks(&p) ||
	    fab_scan_decimal(&p, FAB_MAX_LID + 1, dlid) || !fab_skip_blanks(&p) ||
	    fab_scan_decimal(&p, ROUTING_MAX_SL, sl) || !fab_rest_blank(p))
		return -1;
	return *dlid < lft_len ? 0 : -2;
}

/* OpenSM's dumps do not record the LMC: the usual cause is an LMC > 0 fabric. */
static void lid_past_end(struct fab_error *err, const char *path, unsigned lineno, unsigned dlid,
			 uint32_t lft_len)
{
	fab_error_set(err,
		      "%s:%u: LID %u is past the topology's highest LID %u (the dump files do not"
		      " record the LMC; give it, e.g. sarnue check --lmc 1)",
		      path, lineno, dlid, lft_len - 1);
}

/* Whether line is the compact form's first line, blanks after it allowed. */
static int is_compact_magic(const char *line)
{
	size_t n = sizeof(compact_magic) - 1;

	return !strncmp(line, compact_magic, n) && fab_rest_blank(line + n);
}

/* A word of the compact form and the blank after it: "sl" or "lid". */
static int scan_word(const char **p, const char *word)
{
	size_t n = strlen(word);

	if (strncmp(*p, word, n))
		return -1;
	*p += n;
	return fab_skip_blanks(p) ? 0 : -1;
}

/*
 * The compact form: one SL per destination LID, the rest of lr after its first line.  Leaves
 * one SL for every path (ROUTING_SL_UNIFORM) when no LID differs from the "sl" line.
 */
static int load_path_sl_compact(struct routing *r, struct line_reader *lr, const char *path,
				struct fab_error *err)
{
	uint8_t *sl = malloc(r->lft_len);
	unsigned def = 0, dlid, v, named = 0;
	int have_def = 0, ret = -1;
	char *line;

	if (!sl) {
		fab_error_set(err, "out of memory");
		return -1;
	}
	memset(sl, 0xff, r->lft_len);
	while ((line = line_reader_next(lr))) {
		const char *p = line;

		fab_skip_blanks(&p);
		if (*p == '\0' || *p == '\r' || *p == '\n' || *p == '#' ||
		    (!strncmp(p, compact_stop_ibdmchk, sizeof(compact_stop_ibdmchk) - 1) &&
		     fab_rest_blank(p + sizeof(compact_stop_ibdmchk) - 1)))
			continue;
		if (!scan_word(&p, "sl") && !fab_scan_decimal(&p, ROUTING_MAX_SL, &v) &&
		    fab_rest_blank(p)) {
			if (have_def && v != def) {
				fab_error_set(err, "%s:%u: a second \"sl\" line with another SL",
					      path, lr->lineno);
				goto out;
			}
			def = v;
			have_def = 1;
			continue;
		}
		p = line;
		fab_skip_blanks(&p);
		if (scan_word(&p, "lid") || fab_scan_decimal(&p, FAB_MAX_LID + 1, &dlid) ||
		    !fab_skip_blanks(&p) || fab_scan_decimal(&p, ROUTING_MAX_SL, &v) ||
		    !fab_rest_blank(p)) {
			fab_error_set(err, "%s:%u: expected \"sl SL\" or \"lid LID SL\"", path,
				      lr->lineno);
			goto out;
		}
		if (dlid >= r->lft_len) {
			lid_past_end(err, path, lr->lineno, dlid, r->lft_len);
			goto out;
		}
		if (sl[dlid] != 0xff && sl[dlid] != v) {
			fab_error_set(err, "%s:%u: LID %u named twice with different SLs", path,
				      lr->lineno, dlid);
			goto out;
		}
		sl[dlid] = (uint8_t)v;
		named++;
	}
	if (line_reader_failed(lr)) {
		fab_error_from_reader(err, lr, path);
		goto out;
	}
	if (!have_def) {
		fab_error_set(err, "%s: compact path-SL dump without its \"sl SL\" line", path);
		goto out;
	}
	r->sl_uniform = (uint8_t)def;
	r->sl_mode = ROUTING_SL_UNIFORM;
	if (named) {
		if (routing_alloc_sl_by_dlid(r)) {
			fab_error_set(err, "out of memory");
			goto out;
		}
		for (dlid = 0; dlid < r->lft_len; dlid++)
			if (sl[dlid] != 0xff)
				r->sl_by_dlid[dlid] = sl[dlid];
	}
	ret = 0;
out:
	free(sl);
	return ret;
}

/*
 * The SL may differ between sources behind different switches (DFSSSP's layers); sources
 * behind one switch must agree, since the routing keeps one SL per (source switch, DLID).
 */
int routing_load_path_sl(struct routing *r, const struct fabric *f, const char *path,
			 struct fab_error *err)
{
	struct line_reader lr;
	char *line;
	struct sl_load l = { .r = r };
	struct guid_sw *guids = NULL;
	size_t cells = (size_t)r->nswitches * r->lft_len;
	int ret = -1;

	if (line_reader_open(&lr, path, FAB_LIMIT_TABLES)) {
		fab_error_set(err, "%s: %s", path, fab_strerror(errno));
		return -1;
	}
	line = line_reader_next(&lr);
	if (line && is_compact_magic(line)) {
		ret = load_path_sl_compact(r, &lr, path, err);
		goto out;
	}
	guids = endport_guids(f);
	l.pair_seen = calloc(cells / 8 + 1, 1);
	l.dlid_sl = malloc(r->lft_len);
	l.mixed = calloc(r->lft_len, 1);
	if (!guids || !l.pair_seen || !l.dlid_sl || !l.mixed || routing_alloc_sl_by_pair(r, f)) {
		fab_error_set(err, "out of memory");
		goto out;
	}
	memset(l.dlid_sl, 0xff, r->lft_len);
	l.guids_end = guids + 2 * f->nendports;
	for (; line; line = line_reader_next(&lr)) {
		const struct guid_sw *g;
		uint64_t guid;
		unsigned dlid, sl;
		uint32_t sw;
		int rc;

		if (line[strspn(line, " \t\r\n")] == '\0' || line[0] == '#')
			continue;
		rc = parse_path_sl_line(line, r->lft_len, &guid, &dlid, &sl);
		if (rc == -2) {
			lid_past_end(err, path, lr.lineno, dlid, r->lft_len);
			goto out;
		}
		if (rc) {
			fab_error_set(err, "%s:%u: expected \"0xGUID DLID SL\"", path, lr.lineno);
			goto out;
		}
		g = find_guid(guids, 2 * f->nendports, guid);
		if (!g) {
			fab_error_set(err,
				      "%s:%u: port GUID 0x%016" PRIx64 " is not in the topology",
				      path, lr.lineno, guid);
			goto out;
		}
		sw = sl_load_set(&l, g, dlid, sl);
		if (sw != FAB_NONE) {
			fab_error_set(err,
				      "%s:%u: SL to LID %u differs between sources behind switch"
				      " 0x%016" PRIx64 "; one SL per (source switch, LID) is"
				      " supported",
				      path, lr.lineno, dlid, f->nodes[f->switches[sw]].guid);
			goto out;
		}
	}
	if (line_reader_failed(&lr)) {
		fab_error_from_reader(err, &lr, path);
		goto out;
	}
	if (sl_load_finish(&l)) {
		fab_error_set(err, "out of memory");
		goto out;
	}
	ret = 0;
out:
	free(l.pair_seen);
	free(l.dlid_sl);
	free(l.mixed);
	free(guids);
	line_reader_close(&lr);
	return ret;
}

/* "0xGUID IN OUT" and eight "0xNN" bytes, two SLs' VLs each, high nibble first. */
static int parse_sl2vl_line(const char *p, uint64_t *guid, unsigned *in, unsigned *out_port,
			    uint8_t vl[ROUTING_MAX_SL])
{
	uint64_t b;
	unsigned i;

	fab_skip_blanks(&p);
	if (fab_scan_hex(&p, 16, guid) || !fab_skip_blanks(&p) || fab_scan_decimal(&p, 256, in) ||
	    !fab_skip_blanks(&p) || fab_scan_decimal(&p, 256, out_port))
		return -1;
	for (i = 0; i < 8; i++) {
		if (!fab_skip_blanks(&p) || fab_scan_hex(&p, 2, &b))
			return -1;
		sn_assert(b <= 0xff);
		vl[2 * i] = (uint8_t)(b >> 4);
		vl[2 * i + 1] = (uint8_t)(b & 0xf);
	}
	return fab_rest_blank(p) ? 0 : -1;
}

int routing_load_sl2vl(struct routing *r, const struct fabric *f, const char *path,
		       struct fab_error *err)
{
	struct line_reader lr;
	char *line;
	int ret = -1;

	if (line_reader_open(&lr, path, FAB_LIMIT_TABLES)) {
		fab_error_set(err, "%s: %s", path, fab_strerror(errno));
		return -1;
	}
	if (routing_alloc_sl2vl(r, f)) {
		fab_error_set(err, "out of memory");
		goto out;
	}
	while ((line = line_reader_next(&lr))) {
		uint8_t vl[ROUTING_MAX_SL];
		unsigned ip, op;
		uint64_t guid;
		uint32_t n;

		if (line[strspn(line, " \t\r\n")] == '\0' || line[0] == '#')
			continue;
		if (parse_sl2vl_line(line, &guid, &ip, &op, vl)) {
			fab_error_set(err, "%s:%u: expected \"0xGUID IN OUT\" and 8 hex bytes",
				      path, lr.lineno);
			goto out;
		}
		n = fabric_switch_by_guid(f, guid);
		if (n != FAB_NONE)
			n = f->switches[n];
		if (n == FAB_NONE || ip > f->nodes[n].nports || op > f->nodes[n].nports) {
			fab_error_set(err, "%s:%u: no switch 0x%016" PRIx64 " with ports %u and %u",
				      path, lr.lineno, guid, ip, op);
			goto out;
		}
		sn_assert(ip < r->sl2vl_stride && op < r->sl2vl_stride);
		memcpy(routing_sl2vl_map(r, f->nodes[n].sw, ip, op), vl, ROUTING_MAX_SL);
	}
	if (line_reader_failed(&lr)) {
		fab_error_from_reader(err, &lr, path);
		goto out;
	}
	routing_sl2vl_collapse(r, f);
	ret = 0;
out:
	line_reader_close(&lr);
	return ret;
}
