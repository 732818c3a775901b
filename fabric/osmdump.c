/*
 * osmdump.c - OpenSM's dump files: opensm-subnet.lst (topology), opensm.fdbs and
 * opensm-lfts.dump (LFTs), read into the fabric model and routing tables and written from them.
 *
 * This is how `sarnue check` judges any routing OpenSM produced, ours or a built-in engine's, and
 * how `sarnue route` hands its offline results to ibdmchk.
 */
#include "loaders.h"

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

/* One side of a subnet.lst link: "{ SW-SM Ports:08 ... NodeGUID:.. PortGUID:.. ... {desc}
 * LID:0001 PN:01 }".  Returns the text after the closing brace. */
static const char *parse_lst_end(const char *s, struct lst_end *e)
{
	const char *p, *d, *dend;
	char type[16];
	size_t len;

	p = strchr(s, '{');
	if (!p || sscanf(p + 1, " %15s Ports:%x", type, &e->nports) != 2)
		return NULL;
	if (!strncmp(type, "SW", 2))
		e->type = FAB_SWITCH;
	else if (!strncmp(type, "CA", 2))
		e->type = FAB_CA;
	else if (!strncmp(type, "Rt", 2) || !strncmp(type, "RT", 2))
		e->type = FAB_ROUTER;
	else
		return NULL;
	d = strstr(p, "NodeGUID:");
	if (!d ||
	    sscanf(d, "NodeGUID:%" SCNx64 " PortGUID:%" SCNx64, &e->node_guid, &e->port_guid) != 2)
		return NULL;
	d = strstr(d, "Rev:");
	d = d ? strchr(d, '{') : NULL;
	dend = d ? strstr(d, "} LID:") : NULL;
	if (!dend)
		return NULL;
	len = (size_t)(dend - d - 1);
	if (len >= sizeof(e->desc))
		len = sizeof(e->desc) - 1;
	memcpy(e->desc, d + 1, len);
	e->desc[len] = '\0';
	if (sscanf(dend, "} LID:%x PN:%x", &e->lid, &e->port) != 2)
		return NULL;
	p = strchr(dend + 1, '}');
	return p ? p + 1 : NULL;
}

static uint32_t lst_node(struct fabric *f, struct fab_guid_map *map, const struct lst_end *e,
			 unsigned lmc, unsigned vls)
{
	uint32_t n = fab_guid_map_get(map, e->node_guid);
	struct fab_port *p;
	char id[20];

	if (n == FAB_NONE) {
		snprintf(id, sizeof(id), "%c-%016" PRIx64,
			 e->type == FAB_SWITCH ? 'S'
			 : e->type == FAB_CA   ? 'H'
					       : 'R',
			 e->node_guid);
		n = fabric_add_node(f, e->type, e->node_guid, e->nports, id, e->desc);
		if (n == FAB_NONE || fab_guid_map_put(map, e->node_guid, n))
			return FAB_NONE;
		if (e->type == FAB_SWITCH) {
			p = fabric_port(f, n, 0);
			p->base_lid = (uint16_t)e->lid;
			p->op_vls = (uint8_t)vls;
		}
	}
	if (e->port > f->nodes[n].nports)
		return FAB_NONE;
	p = fabric_port(f, n, e->port);
	p->state = FAB_PORT_ACTIVE;
	p->op_vls = (uint8_t)vls;
	if (e->type != FAB_SWITCH) {
		p->guid = e->port_guid;
		p->base_lid = (uint16_t)e->lid;
		p->lmc = (uint8_t)lmc;
	}
	return n;
}

int fabric_load_subnet_lst(struct fabric *f, const char *path, unsigned lmc, unsigned op_vls,
			   struct fab_error *err)
{
	struct line_reader lr;
	char *line;
	struct fab_guid_map map = { 0 };
	int ret = -1;

	if (line_reader_open(&lr, path)) {
		fab_error_set(err, "%s: %s", path, strerror(errno));
		return -1;
	}
	while ((line = line_reader_next(&lr))) {
		struct lst_end a, b;
		struct fab_error lerr;
		const char *rest;
		uint32_t na, nb;

		if (line[strspn(line, " \t\r\n")] == '\0')
			continue;
		rest = parse_lst_end(line, &a);
		rest = rest ? parse_lst_end(rest, &b) : NULL;
		if (!rest) {
			fab_error_set(err, "%s:%u: not a subnet.lst link line", path, lr.lineno);
			goto out;
		}
		na = lst_node(f, &map, &a, lmc, op_vls);
		nb = lst_node(f, &map, &b, lmc, op_vls);
		if (na == FAB_NONE || nb == FAB_NONE) {
			fab_error_set(err, "%s:%u: bad port number or out of memory", path,
				      lr.lineno);
			goto out;
		}
		if (fabric_link(f, na, a.port, nb, b.port, &lerr)) {
			fab_error_set(err, "%s:%u: %.400s", path, lr.lineno, lerr.msg);
			goto out;
		}
	}
	if (line_reader_failed(&lr)) {
		fab_error_set(err, "%s: read error", path);
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
 */
static int lft_switch_header(const char *s, uint64_t *guid)
{
	const char *g;

	if (sscanf(s, "dump_ucast_routes: Switch 0x%" SCNx64, guid) == 1)
		return 1;
	if (!strncmp(s, "Unicast lids", 12) && (g = strstr(s, " guid 0x")) &&
	    sscanf(g, " guid 0x%" SCNx64, guid) == 1)
		return 1;
	return 0;
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

int routing_load_lfts(struct routing *r, const struct fabric *f, const char *path,
		      struct fab_error *err)
{
	struct line_reader lr;
	char *line;
	uint32_t sw = FAB_NONE;
	int ret = -1;

	if (line_reader_open(&lr, path)) {
		fab_error_set(err, "%s: %s", path, strerror(errno));
		return -1;
	}
	while ((line = line_reader_next(&lr))) {
		unsigned lid, port;
		uint64_t guid;

		if (lft_switch_header(line, &guid)) {
			sw = fabric_switch_by_guid(f, guid);
			if (sw == FAB_NONE) {
				fab_error_set(err,
					      "%s:%u: switch 0x%016" PRIx64
					      " is not in the topology",
					      path, lr.lineno, guid);
				goto out;
			}
			continue;
		}
		if (strncmp(line, "0x", 2))
			continue;
		if (sw == FAB_NONE || !lft_entry(line, &lid, &port)) {
			fab_error_set(err, "%s:%u: malformed LFT line", path, lr.lineno);
			goto out;
		}
		if (lid >= r->lft_len ||
		    (port != FAB_NO_PORT && port > f->nodes[f->switches[sw]].nports)) {
			fab_error_set(err, "%s:%u: LID %u or port %u out of range", path, lr.lineno,
				      lid, port);
			goto out;
		}
		routing_lft(r, sw)[lid] = (uint8_t)port;
	}
	if (line_reader_failed(&lr)) {
		fab_error_set(err, "%s: read error", path);
		goto out;
	}
	ret = 0;
out:
	line_reader_close(&lr);
	return ret;
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
		fprintf(out, "PHY=4x LOG=ACT SPD=2.5\n");
	}
	return ferror(out) ? -1 : 0;
}

int routing_write_fdbs(const struct routing *r, const struct fabric *f, FILE *out)
{
	uint32_t sw, lid;

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
					hops[lid] == 0xff ? 0 : hops[lid]);
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

	return routing_write_path_sl(d->r, d->f, out);
}

static int write_sl2vl(const void *ctx, FILE *out)
{
	const struct dump_ctx *d = ctx;

	return routing_write_sl2vl(d->r, d->f, out);
}

int routing_write_dumps(const char *dir, const struct fabric *f, const struct routing *r,
			unsigned set, char *failed_path, size_t failed_len)
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
	struct dump_ctx ctx = { f, r };
	unsigned i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		if (!(files[i].set & set))
			continue;
		snprintf(failed_path, failed_len, "%s/%s", dir, files[i].name);
		if (write_file_atomic(failed_path, files[i].fn, &ctx))
			return -1;
	}
	return 0;
}
