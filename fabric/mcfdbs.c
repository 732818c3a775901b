/*
 * mcfdbs.c - OpenSM's multicast dumps read into the multicast model (fabric/mcast.h), so that
 * `sarnue check` can judge the multicast trees OpenSM built, whichever engine routed.
 *
 * opensm.mcfdbs gives every switch's multicast forwarding table: per MLID the ports a packet
 * leaves by.  opensm-sa.dump (OpenSM's sa_db_dump) gives every group's MCMemberRecord, whose
 * SL the group's packets carry, and its member ports.  Without the SA dump a group's SL is
 * unknown and its members are taken to be the end ports its tree reaches.
 * The formats, as OpenSM 3.3.23 writes them, are in doc/multicast.md.
 */
#include "fabric/loaders.h"
#include "fabric/mcast.h"
#include "lib/input.h"
#include "lib/scan.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MLID_LAST 0xfffe /* 0xffff is the permissive LID, never a group's */

/* One switch's MFT entry for one MLID, as opensm.mcfdbs lists it. */
struct mft_row {
	uint16_t mlid;
	uint32_t sw;
	uint64_t ports[MCAST_MASK_WORDS];
};

/* An MC Group record of the SA dump: the group's MLID and SL, and where it was read. */
struct sa_group {
	uint16_t mlid;
	uint8_t sl;
	unsigned line;
};

/* An mcm_port record of the SA dump. */
struct sa_member {
	uint16_t mlid;
	uint32_t port;
	unsigned line;
};

struct mc_load {
	const struct fabric *f;
	const char *path; /* of the file being read */
	unsigned lineno;
	struct fab_error *err;

	struct mft_row *rows;
	uint32_t nrows, rows_cap;
	uint32_t sw;	      /* switch of the current opensm.mcfdbs block, FAB_NONE before */
	uint8_t *sw_seen;     /* per switch: its block was read */
	uint32_t block_start; /* first row of the current block */

	struct sa_group *groups;
	uint32_t ngroups, groups_cap;
	struct sa_member *members;
	uint32_t nmembers, members_cap;
	struct fab_guid_map port_by_guid; /* end port and switch port 0 GUIDs -> port index */
};

static int load_fail(struct mc_load *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int load_fail(struct mc_load *l, const char *fmt, ...)
{
	char what[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	fab_error_set(l->err, "%s:%u: %s", l->path, l->lineno, what);
	return -1;
}

/* Room for one more element in *arr; 0, or -1 without memory. */
static int grow(void **arr, uint32_t n, uint32_t *cap, size_t size)
{
	uint32_t ncap;
	void *p;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 64;
	p = realloc(*arr, (size_t)ncap * size);
	if (!p)
		return -1;
	*arr = p;
	*cap = ncap;
	return 0;
}

/* Whether s starts with word, and then moves s past it. */
static int skip_word(const char **s, const char *word)
{
	size_t len = strlen(word);

	if (strncmp(*s, word, len))
		return 0;
	*s += len;
	return 1;
}

/* An MLID of 1 to 4 hex digits after "0x", in the multicast range. */
static int scan_mlid(struct mc_load *l, const char **p, uint16_t *mlid)
{
	uint64_t v;

	if (fab_scan_hex(p, 4, &v))
		return load_fail(l, "expected an MLID, 0x and 1 to 4 hex digits");
	if (v < MCAST_FIRST_MLID || v > MLID_LAST)
		return load_fail(
			l, "MLID 0x%04" PRIX64 " outside the multicast range 0xC000-0xFFFE", v);
	*mlid = (uint16_t)v;
	return 0;
}

/* ---------------------------------------------------------------- opensm.mcfdbs */

/* "Switch 0x0000000000200000": starts the block of that switch. */
static int mft_switch(struct mc_load *l, const char *p)
{
	uint64_t guid;

	fab_skip_blanks(&p);
	if (fab_scan_hex(&p, 16, &guid) || !fab_rest_blank(p))
		return load_fail(l, "expected \"Switch 0x\" and a GUID of 1 to 16 hex digits");
	l->sw = fabric_switch_by_guid(l->f, guid);
	if (l->sw == FAB_NONE)
		return load_fail(l, "switch 0x%016" PRIx64 " is not in the topology", guid);
	if (l->sw_seen[l->sw])
		return load_fail(l, "a second block for switch 0x%016" PRIx64, guid);
	l->sw_seen[l->sw] = 1;
	l->block_start = l->nrows;
	return 0;
}

/* "LID    : Out Port(s)", the column titles under a switch line. */
static int mft_titles(const char *p)
{
	if (!skip_word(&p, "LID"))
		return 0;
	fab_skip_blanks(&p);
	if (!skip_word(&p, ":"))
		return 0;
	fab_skip_blanks(&p);
	return skip_word(&p, "Out Port(s)") && fab_rest_blank(p);
}

/* "0xC000 : 0x001  0x003 ": the ports of one MLID at the current switch. */
static int mft_entry(struct mc_load *l, const char *p)
{
	const struct fab_node *n;
	struct mft_row *row;
	uint16_t mlid;
	uint32_t i;
	unsigned nports = 0;

	if (l->sw == FAB_NONE)
		return load_fail(l, "an MFT entry before any \"Switch 0x...\" line");
	n = &l->f->nodes[l->f->switches[l->sw]];
	if (scan_mlid(l, &p, &mlid))
		return -1;
	for (i = l->block_start; i < l->nrows; i++)
		if (l->rows[i].mlid == mlid)
			return load_fail(l, "MLID 0x%04X listed twice for this switch", mlid);
	fab_skip_blanks(&p);
	if (!skip_word(&p, ":"))
		return load_fail(l, "expected ':' after the MLID");
	if (grow((void **)&l->rows, l->nrows, &l->rows_cap, sizeof(*l->rows)))
		return load_fail(l, "out of memory");
	row = &l->rows[l->nrows];
	memset(row, 0, sizeof(*row));
	row->mlid = mlid;
	row->sw = l->sw;
	while (fab_skip_blanks(&p), !fab_rest_blank(p)) {
		uint64_t port;

		if (fab_scan_hex(&p, 3, &port) ||
		    (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r'))
			return load_fail(l, "expected a port number, 0x and 1 to 3 hex digits");
		if (port > n->nports)
			return load_fail(l, "port %" PRIu64 " beyond the switch's %u ports", port,
					 n->nports);
		if (mcast_mask_has(row->ports, (unsigned)port))
			return load_fail(l, "port %" PRIu64 " listed twice", port);
		mcast_mask_set(row->ports, (unsigned)port);
		nports++;
	}
	if (!nports)
		return load_fail(l, "MLID 0x%04X without ports", mlid);
	l->nrows++;
	return 0;
}

static int read_mcfdbs(struct mc_load *l, const char *path)
{
	struct line_reader lr;
	const char *line;
	int ret = -1;

	l->path = path;
	l->lineno = 0;
	l->sw = FAB_NONE;
	if (line_reader_open(&lr, path, FAB_LIMIT_TABLES)) {
		fab_error_set(l->err, "%s: %s", path, fab_strerror(errno));
		return -1;
	}
	while ((line = line_reader_next(&lr))) {
		const char *p = line;

		l->lineno = lr.lineno;
		if (fab_rest_blank(p) || mft_titles(p))
			continue;
		if (skip_word(&p, "Switch ")) {
			if (mft_switch(l, p))
				goto out;
		} else if (!strncmp(p, "0x", 2)) {
			if (mft_entry(l, p))
				goto out;
		} else {
			load_fail(l, "not a line of opensm.mcfdbs");
			goto out;
		}
	}
	if (line_reader_failed(&lr)) {
		fab_error_from_reader(l->err, &lr, path);
		goto out;
	}
	ret = 0;
out:
	line_reader_close(&lr);
	return ret;
}

/* ---------------------------------------------------------------- opensm-sa.dump */

/* Moves *p to the value of " key=" in the rest of the line; 0 when there is none. */
static int find_field(const char **p, const char *key)
{
	char pat[32];
	const char *at;

	snprintf(pat, sizeof(pat), " %s=", key);
	at = strstr(*p, pat);
	if (!at)
		return 0;
	*p = at + strlen(pat);
	return 1;
}

/* A hex field "key=0x..." of at most digits digits anywhere after p. */
static int sa_hex_field(struct mc_load *l, const char *p, const char *key, unsigned digits,
			uint64_t *v)
{
	if (!find_field(&p, key) || fab_scan_hex(&p, digits, v))
		return load_fail(l, "expected %s=0x and 1 to %u hex digits", key, digits);
	return 0;
}

/*
 * "MC Group 0xc001 : mgid=0x...:0x... port_gid=... qkey=... mlid=0xc001 ... sl_flow_hop=0x10000000
 * scope_state=0x01 proxy_join=0x0"; the well-known broadcast group has " (well known)" before
 * the colon.
 */
static int sa_group(struct mc_load *l, const char *p)
{
	struct sa_group *g;
	uint64_t mlid, sfh;
	uint16_t hdr_mlid;

	if (scan_mlid(l, &p, &hdr_mlid))
		return -1;
	fab_skip_blanks(&p);
	skip_word(&p, "(well known)");
	fab_skip_blanks(&p);
	if (!skip_word(&p, ":") || !find_field(&p, "mgid") || !skip_word(&p, "0x"))
		return load_fail(l, "expected ': mgid=0x' after the group's MLID");
	if (sa_hex_field(l, p, "mlid", 4, &mlid) || sa_hex_field(l, p, "sl_flow_hop", 8, &sfh))
		return -1;
	if (mlid != hdr_mlid)
		return load_fail(l, "mlid=0x%04" PRIx64 " differs from the group's 0x%04x", mlid,
				 hdr_mlid);
	if (grow((void **)&l->groups, l->ngroups, &l->groups_cap, sizeof(*l->groups)))
		return load_fail(l, "out of memory");
	g = &l->groups[l->ngroups++];
	g->mlid = hdr_mlid;
	g->sl = (uint8_t)(sfh >> 28);
	g->line = l->lineno;
	return 0;
}

/* "mcm_port: port_gid=0xfe80000000000000:0x0000000000100001 scope_state=0x21 proxy_join=0x0" */
static int sa_member(struct mc_load *l, const char *p)
{
	struct sa_member *m;
	uint64_t prefix, guid;
	uint32_t port;

	if (!l->ngroups)
		return load_fail(l, "an mcm_port line before any \"MC Group\" line");
	fab_skip_blanks(&p);
	if (!skip_word(&p, "port_gid=") || fab_scan_hex(&p, 16, &prefix) || !skip_word(&p, ":") ||
	    fab_scan_hex(&p, 16, &guid))
		return load_fail(l, "expected port_gid=0xPREFIX:0xGUID");
	port = fab_guid_map_get(&l->port_by_guid, guid);
	if (port == FAB_NONE)
		return load_fail(l, "member port GUID 0x%016" PRIx64 " is not in the topology",
				 guid);
	if (grow((void **)&l->members, l->nmembers, &l->members_cap, sizeof(*l->members)))
		return load_fail(l, "out of memory");
	m = &l->members[l->nmembers++];
	m->mlid = l->groups[l->ngroups - 1].mlid;
	m->port = port;
	m->line = l->lineno;
	return 0;
}

/* Records of the SA dump other than multicast ones, which the loader passes over. */
static int sa_other_record(const char *p)
{
	return !strncmp(p, "GUIDInfo Record:", 16) || !strncmp(p, "InformInfo Record:", 18) ||
	       !strncmp(p, "Service Record:", 15);
}

/* The port GUIDs a member record may name: end ports, and switch port 0 (a switch may join). */
static int index_port_guids(struct mc_load *l)
{
	const struct fabric *f = l->f;
	uint32_t p;

	for (p = 0; p < f->nports; p++) {
		const struct fab_port *port = &f->ports[p];
		int sw = fabric_is_switch(f, port->node);

		if ((sw ? port->num != 0 : port->num == 0) || !port->guid)
			continue;
		if (fab_guid_map_put(&l->port_by_guid, port->guid, p))
			return -1;
	}
	return 0;
}

static int read_sa_dump(struct mc_load *l, const char *path)
{
	struct line_reader lr;
	const char *line;
	int ret = -1;

	l->path = path;
	l->lineno = 0;
	if (index_port_guids(l)) {
		fab_error_set(l->err, "%s: out of memory", path);
		return -1;
	}
	if (line_reader_open(&lr, path, FAB_LIMIT_TABLES)) {
		fab_error_set(l->err, "%s: %s", path, fab_strerror(errno));
		return -1;
	}
	while ((line = line_reader_next(&lr))) {
		const char *p = line;

		l->lineno = lr.lineno;
		if (fab_rest_blank(p) || sa_other_record(p))
			continue;
		if (skip_word(&p, "MC Group ")) {
			if (sa_group(l, p))
				goto out;
		} else if (skip_word(&p, "mcm_port:")) {
			if (sa_member(l, p))
				goto out;
		} else {
			load_fail(l, "not a line of an OpenSM SA dump");
			goto out;
		}
	}
	if (line_reader_failed(&lr)) {
		fab_error_from_reader(l->err, &lr, path);
		goto out;
	}
	ret = 0;
out:
	line_reader_close(&lr);
	return ret;
}

/* ---------------------------------------------------------------- building the model */

static int cmp_row(const void *a, const void *b)
{
	const struct mft_row *x = a, *y = b;

	if (x->mlid != y->mlid)
		return x->mlid < y->mlid ? -1 : 1;
	return x->sw < y->sw ? -1 : x->sw > y->sw;
}

static int cmp_member(const void *a, const void *b)
{
	const struct sa_member *x = a, *y = b;

	if (x->mlid != y->mlid)
		return x->mlid < y->mlid ? -1 : 1;
	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

static int cmp_group(const void *a, const void *b)
{
	const struct sa_group *x = a, *y = b;

	if (x->mlid != y->mlid)
		return x->mlid < y->mlid ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/*
 * Several MGIDs may share an MLID (OpenSM's mgroup boxes): they are one tree and one group of
 * the model, so their SLs must agree; a port in two of them, or twice in one, is one member.
 */
static int check_sa_groups(struct mc_load *l, const char *sa_path)
{
	uint32_t i;

	l->path = sa_path;
	if (l->ngroups)
		qsort(l->groups, l->ngroups, sizeof(*l->groups), cmp_group);
	for (i = 1; i < l->ngroups; i++) {
		const struct sa_group *a = &l->groups[i - 1], *b = &l->groups[i];

		if (a->mlid == b->mlid && a->sl != b->sl) {
			l->lineno = b->line;
			return load_fail(l, "MLID 0x%04x has SL %u here but SL %u at line %u",
					 b->mlid, b->sl, a->sl, a->line);
		}
	}
	return 0;
}

/* Members of a group the SA dump does not describe: the end ports its tree reaches. */
static int add_tree_members(struct mcast *m, const struct fabric *f, const struct mft_row *rows,
			    uint32_t n)
{
	uint32_t i;
	unsigned port;

	for (i = 0; i < n; i++) {
		const struct fab_node *sw = &f->nodes[f->switches[rows[i].sw]];

		for (port = 0; port <= sw->nports; port++) {
			uint32_t p = sw->first_port + port, peer;

			if (!mcast_mask_has(rows[i].ports, port))
				continue;
			if (port == 0) {
				if (mcast_add_member(m, p))
					return -1;
				continue;
			}
			peer = f->ports[p].remote;
			if (peer != FAB_NONE && !fabric_is_switch(f, f->ports[peer].node) &&
			    mcast_add_member(m, peer))
				return -1;
		}
	}
	return 0;
}

/* Fills m with one group per MLID either file names, in ascending MLID order. */
static int build(struct mc_load *l, struct mcast *m)
{
	const struct fabric *f = l->f;
	uint32_t r = 0, g = 0, k = 0, prev_port;

	/* qsort must not get NULL, even for no elements: an empty file leaves the arrays unset. */
	if (l->nrows)
		qsort(l->rows, l->nrows, sizeof(*l->rows), cmp_row);
	if (l->nmembers)
		qsort(l->members, l->nmembers, sizeof(*l->members), cmp_member);
	while (r < l->nrows || g < l->ngroups) {
		uint16_t mlid = r < l->nrows ? l->rows[r].mlid : 0xffff;
		uint32_t r_end, g_end;
		int in_sa;

		if (g < l->ngroups && l->groups[g].mlid < mlid)
			mlid = l->groups[g].mlid;
		for (r_end = r; r_end < l->nrows && l->rows[r_end].mlid == mlid; r_end++)
			;
		for (g_end = g; g_end < l->ngroups && l->groups[g_end].mlid == mlid; g_end++)
			;
		in_sa = g_end > g;
		while (k < l->nmembers && l->members[k].mlid < mlid)
			k++;
		/* A group the SA knows without members and without a tree has nothing to check. */
		if (r_end == r && (k == l->nmembers || l->members[k].mlid != mlid)) {
			g = g_end;
			continue;
		}
		if (mcast_begin_group(m, mlid, in_sa ? l->groups[g].sl : MCAST_SL_UNKNOWN))
			return -1;
		if (in_sa) {
			for (prev_port = FAB_NONE; k < l->nmembers && l->members[k].mlid == mlid;
			     k++) {
				if (l->members[k].port != prev_port &&
				    mcast_add_member(m, l->members[k].port))
					return -1;
				prev_port = l->members[k].port;
			}
		} else if (add_tree_members(m, f, l->rows + r, r_end - r)) {
			return -1;
		}
		for (; r < r_end; r++) {
			const struct fab_node *sw = &f->nodes[f->switches[l->rows[r].sw]];
			unsigned port;

			for (port = 0; port <= sw->nports; port++)
				if (mcast_mask_has(l->rows[r].ports, port) &&
				    mcast_set_port(m, l->rows[r].sw, port))
					return -1;
		}
		mcast_end_group(m);
		g = g_end;
	}
	return 0;
}

int mcast_load_mcfdbs(struct mcast *m, const struct fabric *f, const char *mcfdbs_path,
		      const char *sa_dump_path, struct fab_error *err)
{
	struct mc_load l = { .f = f, .err = err, .sw = FAB_NONE };
	struct mcast fresh;
	int ret = -1;

	mcast_init(&fresh);
	l.sw_seen = calloc(f->nswitches ? f->nswitches : 1, 1);
	if (!l.sw_seen) {
		fab_error_set(err, "%s: out of memory", mcfdbs_path);
		goto out;
	}
	if (read_mcfdbs(&l, mcfdbs_path))
		goto out;
	if (sa_dump_path && (read_sa_dump(&l, sa_dump_path) || check_sa_groups(&l, sa_dump_path)))
		goto out;
	if (build(&l, &fresh)) {
		fab_error_set(err, "%s: out of memory", mcfdbs_path);
		goto out;
	}
	/* Only a complete load replaces what m held. */
	mcast_free(m);
	*m = fresh;
	mcast_init(&fresh);
	ret = 0;
out:
	mcast_free(&fresh);
	free(l.sw_seen);
	free(l.rows);
	free(l.groups);
	free(l.members);
	fab_guid_map_free(&l.port_by_guid);
	return ret;
}
