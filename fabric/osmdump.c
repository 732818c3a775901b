/*
 * osmdump.c - OpenSM's dump files: opensm-subnet.lst (topology), opensm.fdbs and
 * opensm-lfts.dump (LFTs), read into the fabric model and routing tables and written from them.
 *
 * This is how `sarnue check` judges any routing OpenSM produced, ours or a built-in engine's, and
 * how `sarnue route` hands its offline results to ibdmchk.
 */
#include "fabric/loaders.h"
#include "lib/scan.h"
#include "lib/input.h"
#include "lib/assert.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct lst_end {
	enum fab_node_type type;
	unsigned nports, lid, port;
	uint64_t node_guid, port_guid;
	char desc[128];
};

/*
 * Reading position in one subnet.lst line.  A field that is not what OpenSM writes stops the
 * line, and the error names the column and what was expected there.
 */
struct lst_cursor {
	const char *line, *p;
	const char *field;    /* where the field read last, or failing, starts */
	const char *expected; /* what that field should have been */
	char hex_expected[48];
};

static int lst_fail(struct lst_cursor *c, const char *expected)
{
	c->expected = expected;
	return -1;
}

static int lst_char(struct lst_cursor *c, char ch, const char *expected)
{
	fab_skip_blanks(&c->p);
	c->field = c->p;
	if (*c->p != ch)
		return lst_fail(c, expected);
	c->p++;
	return 0;
}

/* "Key:" and 1 to max_digits hex digits without 0x (OpenSM's %0NX), ending at a blank or '}'. */
static int lst_hex_field(struct lst_cursor *c, const char *key, unsigned max_digits, uint64_t *v)
{
	size_t len = strlen(key);

	fab_skip_blanks(&c->p);
	c->field = c->p;
	if (!strncmp(c->p, key, len)) {
		c->p += len;
		if (!fab_scan_hex_digits(&c->p, max_digits, v) &&
		    (*c->p == ' ' || *c->p == '\t' || *c->p == '}'))
			return 0;
	}
	snprintf(c->hex_expected, sizeof(c->hex_expected), "\"%s\" and 1 %s %u hex digits", key,
		 max_digits == 2 ? "or" : "to", max_digits);
	return lst_fail(c, c->hex_expected);
}

/* "SW", "CA" or "Rt", "-SM" on the SM's node. */
static int lst_node_type(struct lst_cursor *c, enum fab_node_type *type)
{
	fab_skip_blanks(&c->p);
	c->field = c->p;
	if (!strncmp(c->p, "SW", 2))
		*type = FAB_SWITCH;
	else if (!strncmp(c->p, "CA", 2))
		*type = FAB_CA;
	else if (!strncmp(c->p, "Rt", 2) || !strncmp(c->p, "RT", 2))
		*type = FAB_ROUTER;
	else
		return lst_fail(c, "node type SW, CA or Rt");
	c->p += 2;
	if (!strncmp(c->p, "-SM", 3))
		c->p += 3;
	if (*c->p != ' ' && *c->p != '\t')
		return lst_fail(c, "node type SW, CA or Rt");
	return 0;
}

/* "{desc}": the description runs to the "} LID:" that follows it. */
static int lst_description(struct lst_cursor *c, struct lst_end *e)
{
	const char *end;
	size_t len;

	if (lst_char(c, '{', "'{' opening the node description"))
		return -1;
	c->field = c->p;
	end = strstr(c->p, "} LID:");
	if (!end)
		return lst_fail(c, "node description closed by \"} LID:\"");
	len = (size_t)(end - c->p);
	if (len >= sizeof(e->desc))
		len = sizeof(e->desc) - 1;
	memcpy(e->desc, c->p, len);
	e->desc[len] = '\0';
	c->p = end + 1;
	return 0;
}

/*
 * One side of a subnet.lst link, as OpenSM writes it: "{ SW-SM Ports:08 SystemGUID:.. NodeGUID:..
 * PortGUID:.. VenID:.. DevID:.. Rev:.. {desc} LID:0001 PN:01 }".  Widths are OpenSM's, except
 * VenID and DevID: OpenSM prints the far end's from words whose halves it swapped, so real
 * devices show up to 8 digits there ("VenID:000002C9 DevID:101B0000").
 */
static int lst_end_parse(struct lst_cursor *c, struct lst_end *e)
{
	uint64_t v, lid, port, nports;

	if (lst_char(c, '{', "'{' opening a port") || lst_node_type(c, &e->type) ||
	    lst_hex_field(c, "Ports:", 2, &nports) || lst_hex_field(c, "SystemGUID:", 16, &v) ||
	    lst_hex_field(c, "NodeGUID:", 16, &e->node_guid) ||
	    lst_hex_field(c, "PortGUID:", 16, &e->port_guid) || lst_hex_field(c, "VenID:", 8, &v) ||
	    lst_hex_field(c, "DevID:", 8, &v) || lst_hex_field(c, "Rev:", 8, &v) ||
	    lst_description(c, e) || lst_hex_field(c, "LID:", 4, &lid) ||
	    lst_hex_field(c, "PN:", 2, &port))
		return -1;
	if (port < 1 || port > nports)
		return lst_fail(c, "a port number PN between 1 and Ports");
	e->nports = (unsigned)nports;
	e->lid = (unsigned)lid;
	e->port = (unsigned)port;
	return lst_char(c, '}', "'}' closing the port");
}

/* Whether e says of its node what an earlier line said: type, ports, a switch's LID. */
static int lst_node_agrees(const struct fabric *f, uint32_t n, const struct lst_end *e,
			   struct fab_error *err)
{
	const struct fab_node *node = &f->nodes[n];

	if (node->type != e->type || node->nports != e->nports ||
	    (e->type == FAB_SWITCH && fabric_port(f, n, 0)->base_lid != e->lid)) {
		fab_error_set(err,
			      "node 0x%016" PRIx64
			      " differs from an earlier line (type, Ports or switch LID)",
			      e->node_guid);
		return 0;
	}
	return 1;
}

/* The node of one link end, added on its first line; FAB_NONE with err set on failure. */
static uint32_t lst_node(struct fabric *f, struct fab_guid_map *map, const struct lst_end *e,
			 unsigned lmc, unsigned vls, struct fab_error *err)
{
	uint32_t n = fab_guid_map_get(map, e->node_guid);
	struct fab_port *p;
	char id[20];

	if (n != FAB_NONE && !lst_node_agrees(f, n, e, err))
		return FAB_NONE;
	if (n == FAB_NONE) {
		snprintf(id, sizeof(id), "%c-%016" PRIx64,
			 e->type == FAB_SWITCH ? 'S'
			 : e->type == FAB_CA   ? 'H'
					       : 'R',
			 e->node_guid);
		n = fabric_add_node(f, e->type, e->node_guid, e->nports, id, e->desc);
		if (n == FAB_NONE || fab_guid_map_put(map, e->node_guid, n)) {
			fab_error_set(err, "out of memory");
			return FAB_NONE;
		}
		if (e->type == FAB_SWITCH) {
			p = fabric_port(f, n, 0);
			p->base_lid = (uint16_t)e->lid;
			p->op_vls = (uint8_t)vls;
		}
	}
	p = fabric_port(f, n, e->port);
	/* lst_end_parse kept PN within Ports, and lst_node_agrees Ports with the node's. */
	sn_assert(p && p->node == n);
	p->state = FAB_PORT_ACTIVE;
	p->op_vls = (uint8_t)vls;
	if (e->type != FAB_SWITCH) {
		p->guid = e->port_guid;
		p->base_lid = (uint16_t)e->lid;
		p->lmc = (uint8_t)lmc;
	}
	return n;
}

/* " PHY=4x LOG=ACT SPD=25" after a link: its rate on both ends, when it reads as one. */
static void lst_rate(struct fabric *f, uint32_t na, unsigned pa, uint32_t nb, unsigned pb,
		     const char *rest)
{
	const char *phy = strstr(rest, "PHY="), *spd = strstr(rest, "SPD=");
	unsigned long width;
	unsigned rate;

	if (!phy || !spd)
		return;
	width = strtoul(phy + 4, NULL, 10);
	rate = width <= 12 ? fabric_rate_lst((unsigned)width, spd + 4) : 0;
	fabric_port(f, na, pa)->rate = (uint16_t)rate;
	fabric_port(f, nb, pb)->rate = (uint16_t)rate;
}

int fabric_load_subnet_lst(struct fabric *f, const char *path, unsigned lmc, unsigned op_vls,
			   struct fab_error *err)
{
	struct line_reader lr;
	char *line;
	struct fab_guid_map map = { 0 };
	int ret = -1;

	if (line_reader_open(&lr, path, FAB_LIMIT_TOPOLOGY)) {
		fab_error_set(err, "%s: %s", path, fab_strerror(errno));
		return -1;
	}
	while ((line = line_reader_next(&lr))) {
		struct lst_end a, b;
		struct lst_cursor c;
		struct fab_error lerr;
		uint32_t na, nb;

		if (line[strspn(line, " \t\r\n")] == '\0')
			continue;
		c.line = c.p = line;
		if (lst_end_parse(&c, &a) || lst_end_parse(&c, &b)) {
			fab_error_set(err, "%s:%u: column %u: expected %s", path, lr.lineno,
				      (unsigned)(c.field - c.line) + 1, c.expected);
			goto out;
		}
		na = lst_node(f, &map, &a, lmc, op_vls, &lerr);
		nb = na == FAB_NONE ? FAB_NONE : lst_node(f, &map, &b, lmc, op_vls, &lerr);
		if (na == FAB_NONE || nb == FAB_NONE) {
			fab_error_set(err, "%s:%u: %.400s", path, lr.lineno, lerr.msg);
			goto out;
		}
		if (fabric_link(f, na, a.port, nb, b.port, &lerr)) {
			fab_error_set(err, "%s:%u: %.400s", path, lr.lineno, lerr.msg);
			goto out;
		}
		lst_rate(f, na, a.port, nb, b.port, c.p);
	}
	if (line_reader_failed(&lr)) {
		fab_error_from_reader(err, &lr, path);
		goto out;
	}
	if (!f->nnodes) {
		fab_error_set(err, "%s: no links in file", path);
		goto out;
	}
	ret = fabric_finalize(f, err);
out:
	fab_guid_map_free(&map);
	line_reader_close(&lr);
	return ret;
}

/*
 * Two layouts: opensm.fdbs ("dump_ucast_routes: Switch 0x..", "0x0001 : 000 : 00 : yes") and
 * opensm-lfts.dump ("Unicast lids [0-4] of switch Lid 1 guid 0x.. ('name'):", "0x0001 000 #").
 * 1 for a switch header, 0 for another line, -1 for a header whose GUID is malformed: the entries
 * after it must not count as the previous switch's.
 */
static int lft_switch_header(const char *s, uint64_t *guid)
{
	static const char fdbs[] = "dump_ucast_routes: Switch ";
	const char *g;

	if (!strncmp(s, fdbs, sizeof(fdbs) - 1)) {
		g = s + sizeof(fdbs) - 1;
		return fab_scan_hex(&g, 16, guid) || !fab_rest_blank(g) ? -1 : 1;
	}
	if (strncmp(s, "Unicast lids", 12))
		return 0;
	g = strstr(s, " guid ");
	if (!g)
		return -1;
	g += 6;
	return fab_scan_hex(&g, 16, guid) || (*g != ' ' && !fab_rest_blank(g)) ? -1 : 1;
}

/* A port number ending its field: blanks, ':', '#' or the line end follow it. */
static int lft_port(const char *p, unsigned *port)
{
	if (fab_scan_decimal(&p, 256, port))
		return 0;
	return *p == ' ' || *p == '\t' || *p == ':' || *p == '#' || fab_rest_blank(p);
}

/* "0xLID : PORT : HOPS : yes", "0xLID : UNREACHABLE" or "0xLID PORT # ..."; 1 when read. */
static int lft_entry(const char *p, unsigned *lid, unsigned *port)
{
	uint64_t v;

	if (fab_scan_hex(&p, 4, &v))
		return 0;
	*lid = (unsigned)v;
	if (!fab_skip_blanks(&p) && *p != ':')
		return 0;
	if (*p != ':')
		return lft_port(p, port);
	p++;
	fab_skip_blanks(&p);
	if (!strncmp(p, "UNREACHABLE", 11)) {
		*port = FAB_NO_PORT;
		return 1;
	}
	return lft_port(p, port);
}

/*
 * The lines of an LFT dump that carry no entry: the column titles of opensm.fdbs and the
 * closing count of opensm-lfts.dump ("13 lids dumped").  Anything else that is neither a
 * switch header nor an entry is not an LFT dump, and binary data must not pass as one.
 */
static int lft_other_line(const char *s)
{
	unsigned n;

	if (fab_rest_blank(s) || !strncmp(s, "LID ", 4))
		return 1;
	if (fab_scan_decimal(&s, UINT32_MAX, &n))
		return 0;
	return !strncmp(s, " lids dumped", 12) && fab_rest_blank(s + 12);
}

struct lft_reader {
	const char *path;
	const struct fabric *f;
	struct routing *r;
	struct line_reader lr;
	uint8_t *block_seen; /* per switch: its block was read */
	uint32_t sw;	     /* switch of the current block, FAB_NONE before the first */
	uint32_t block;	     /* number of the current block, from 1 */
	uint32_t *lid_block; /* [FAB_MAX_LID + 1]: the block that listed the LID last */
};

static int lft_fail(struct lft_reader *lt, struct fab_error *err, const char *what)
{
	fab_error_set(err, "%s:%u: %s", lt->path, lt->lr.lineno, what);
	return -1;
}

static int lft_header(struct lft_reader *lt, uint64_t guid, struct fab_error *err)
{
	char msg[96];

	lt->sw = fabric_switch_by_guid(lt->f, guid);
	if (lt->sw == FAB_NONE) {
		snprintf(msg, sizeof(msg), "switch 0x%016" PRIx64 " is not in the topology", guid);
		return lft_fail(lt, err, msg);
	}
	if (lt->block_seen[lt->sw]) {
		snprintf(msg, sizeof(msg), "a second block for switch 0x%016" PRIx64, guid);
		return lft_fail(lt, err, msg);
	}
	sn_assert(lt->sw < lt->f->nswitches);
	lt->block_seen[lt->sw] = 1;
	lt->block++;
	return 0;
}

/*
 * One "0xLID ..." line.  LIDs above the topology's highest one are skipped: OpenSM sizes an LFT
 * to the LIDs it has handed out, which on a sweep with LMC may pass the highest LID in use.
 */
static int lft_line(struct lft_reader *lt, const char *line, struct fab_error *err)
{
	const struct fabric *f = lt->f;
	unsigned lid, port;
	char msg[96];

	if (lt->sw == FAB_NONE || !lft_entry(line, &lid, &port))
		return lft_fail(lt, err, "malformed LFT line");
	if (lid <= FAB_MAX_LID && lt->lid_block[lid] == lt->block) {
		snprintf(msg, sizeof(msg), "LID %u listed twice for this switch", lid);
		return lft_fail(lt, err, msg);
	}
	if (lid > FAB_MAX_LID ||
	    (port != FAB_NO_PORT && port > f->nodes[f->switches[lt->sw]].nports)) {
		snprintf(msg, sizeof(msg), "LID %u or port %u out of range", lid, port);
		return lft_fail(lt, err, msg);
	}
	lt->lid_block[lid] = lt->block;
	if (lid < lt->r->lft_len) {
		sn_assert(lt->sw < lt->r->nswitches);
		sn_assert(port == FAB_NO_PORT || port <= f->nodes[f->switches[lt->sw]].nports);
		routing_lft(lt->r, lt->sw)[lid] = (uint8_t)port;
	}
	return 0;
}

int routing_load_lfts(struct routing *r, const struct fabric *f, const char *path,
		      struct fab_error *err)
{
	struct lft_reader lt = { .path = path, .f = f, .r = r, .sw = FAB_NONE };
	char *line;
	int ret = -1;

	if (line_reader_open(&lt.lr, path, FAB_LIMIT_TABLES)) {
		fab_error_set(err, "%s: %s", path, fab_strerror(errno));
		return -1;
	}
	lt.block_seen = calloc(f->nswitches ? f->nswitches : 1, 1);
	lt.lid_block = calloc(FAB_MAX_LID + 1, sizeof(*lt.lid_block));
	if (!lt.block_seen || !lt.lid_block) {
		fab_error_set(err, "%s: out of memory", path);
		goto out;
	}
	while ((line = line_reader_next(&lt.lr))) {
		uint64_t guid;
		int hdr = lft_switch_header(line, &guid);

		if (hdr < 0) {
			lft_fail(&lt, err,
				 "switch header without a GUID of 0x and 1 to 16 hex digits");
			goto out;
		}
		if (hdr			      ? lft_header(&lt, guid, err)
		    : !strncmp(line, "0x", 2) ? lft_line(&lt, line, err)
		    : lft_other_line(line)    ? 0
					      : lft_fail(&lt, err, "not a line of an LFT dump"))
			goto out;
	}
	if (line_reader_failed(&lt.lr)) {
		fab_error_from_reader(err, &lt.lr, path);
		goto out;
	}
	ret = 0;
out:
	free(lt.block_seen);
	free(lt.lid_block);
	line_reader_close(&lt.lr);
	return ret;
}

/* " PHY=4x LOG=ACT SPD=25" for a link of rate (fab_port.rate); 4xSDR when it has none. */
static void lst_write_rate(FILE *out, unsigned rate)
{
	static const unsigned widths[] = { 4, 1, 8, 12, 2 };
	static const char *const spds[] = { "2.5", "5", "10", "14", "25", "50", "100", "200" };
	unsigned i, k;

	for (i = 0; rate && i < sizeof(widths) / sizeof(widths[0]); i++)
		for (k = 0; k < sizeof(spds) / sizeof(spds[0]); k++)
			if (fabric_rate_lst(widths[i], spds[k]) == rate) {
				fprintf(out, "PHY=%ux LOG=ACT SPD=%s\n", widths[i], spds[k]);
				return;
			}
	fprintf(out, "PHY=4x LOG=ACT SPD=2.5\n");
}

int fabric_write_subnet_lst(const struct fabric *f, FILE *out)
{
	uint32_t p;

	for (p = 0; p < f->nports; p++) {
		const struct fab_port *a = &f->ports[p];
		const struct fab_port *ends[2];
		unsigned i;

		if (a->num == 0 || !fabric_channel_up(f, p))
			continue;
		sn_assert(a->remote < f->nports && f->ports[a->remote].remote == p);
		ends[0] = a;
		ends[1] = &f->ports[a->remote];
		for (i = 0; i < 2; i++) {
			const struct fab_node *n = &f->nodes[ends[i]->node];
			const struct fab_port *lidp =
				n->type == FAB_SWITCH ? &f->ports[n->first_port] : ends[i];

			fprintf(out,
				"{ %s Ports:%02X SystemGUID:%016" PRIX64 " NodeGUID:%016" PRIX64
				" PortGUID:%016" PRIX64 " VenID:000000 DevID:0000 Rev:00000000 {%s}"
				" LID:%04X PN:%02X } ",
				n->type == FAB_SWITCH ? "SW"
				: n->type == FAB_CA   ? "CA"
						      : "Rt",
				n->nports, n->guid, n->guid, lidp->guid,
				fabric_node_desc(f, ends[i]->node), lidp->base_lid, ends[i]->num);
		}
		lst_write_rate(out, a->rate || ends[1]->rate ? fabric_link_rate(f, p) : 0);
	}
	return ferror(out) ? -1 : 0;
}

int routing_write_fdbs(const struct routing *r, const struct fabric *f, FILE *out)
{
	uint32_t sw, lid;

	sn_assert(r->nswitches == f->nswitches && r->lft_len == f->max_lid + 1);
	for (sw = 0; sw < f->nswitches; sw++) {
		const uint8_t *lft = routing_lft(r, sw);
		const uint8_t *hops = routing_hops(r, sw);

		fprintf(out,
			"dump_ucast_routes: Switch 0x%016" PRIx64
			"\nLID    : Port : Hops : Optimal\n",
			f->nodes[f->switches[sw]].guid);
		for (lid = 1; lid <= f->max_lid; lid++) {
			if (f->lid_port[lid] == FAB_NONE || lft[lid] == FAB_NO_PORT)
				fprintf(out, "0x%04X : UNREACHABLE\n", lid);
			else
				fprintf(out, "0x%04X : %03u  : %02u   : yes\n", lid, lft[lid],
					hops[lid] == 0xff ? 0u : hops[lid]);
		}
	}
	return ferror(out) ? -1 : 0;
}

int write_file_atomic(const char *path, int (*writer)(const void *ctx, FILE *out), const void *ctx)
{
	char tmp[4096];
	FILE *out;
	int ret, saved;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	out = fopen(tmp, "w");
	if (!out)
		return -1;
	ret = writer(ctx, out);
	saved = errno;
	if (fclose(out) && !ret) {
		ret = -1;
		saved = errno;
	}
	if (!ret && rename(tmp, path)) {
		ret = -1;
		saved = errno;
	}
	if (ret) {
		unlink(tmp);
		errno = saved;
	}
	return ret;
}

struct dump_ctx {
	const struct fabric *f;
	const struct routing *r;
	enum path_sl_form path_sl;
};

static int write_lst(const void *ctx, FILE *out)
{
	return fabric_write_subnet_lst(((const struct dump_ctx *)ctx)->f, out);
}

/* ibdmchk insists on a multicast dump; sarnue's engines route no multicast groups. */
static int write_no_mcast(const void *ctx, FILE *out)
{
	(void)ctx;
	return fputs("", out) < 0 ? -1 : 0;
}

static int write_fdbs(const void *ctx, FILE *out)
{
	const struct dump_ctx *d = ctx;

	return routing_write_fdbs(d->r, d->f, out);
}

static int write_path_sl(const void *ctx, FILE *out)
{
	const struct dump_ctx *d = ctx;

	return routing_write_path_sl_as(d->r, d->f, d->path_sl, out);
}

static int write_sl2vl(const void *ctx, FILE *out)
{
	const struct dump_ctx *d = ctx;

	return routing_write_sl2vl(d->r, d->f, out);
}

int routing_write_dumps_opts(const char *dir, const struct fabric *f, const struct routing *r,
			     const struct dump_opts *o, char *failed_path, size_t failed_len)
{
	static const struct {
		const char *name;
		unsigned set;
		int (*fn)(const void *, FILE *);
	} files[] = {
		{ "opensm-subnet.lst", DUMP_TOPOLOGY, write_lst },
		{ "opensm.mcfdbs", DUMP_TOPOLOGY, write_no_mcast },
		{ "opensm.fdbs", DUMP_LFTS, write_fdbs },
		{ "sarnue-path-sl.dump", DUMP_SLS, write_path_sl },
		{ "sarnue-sl2vl.dump", DUMP_SLS, write_sl2vl },
	};
	struct dump_ctx ctx = { f, r, o->path_sl };
	unsigned i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		if (!(files[i].set & o->set))
			continue;
		snprintf(failed_path, failed_len, "%s/%s", dir, files[i].name);
		if (write_file_atomic(failed_path, files[i].fn, &ctx))
			return -1;
		if (o->wrote)
			o->wrote(o->arg, failed_path);
	}
	return 0;
}

int routing_write_dumps(const char *dir, const struct fabric *f, const struct routing *r,
			unsigned set, char *failed_path, size_t failed_len)
{
	struct dump_opts o = { .set = set, .path_sl = PATH_SL_AUTO };

	return routing_write_dumps_opts(dir, f, r, &o, failed_path, failed_len);
}
