/*
 * sldump.c - path-SL and SL2VL dump files in the formats ibdmchk reads with -c and -d.
 *
 * OpenSM 3.3.23 never calls an engine's dump hook and its own SL2VL dump has another layout, so
 * the plugin writes these after each routing; `sarnue check` reads them back, and ibdmchk can
 * check the same files independently.
 *
 *   path SL:  "0x<source node GUID> <destination LID> <SL>" (ibdmchk looks sources up by node
 *             GUID; port GUIDs are accepted when reading)
 *   SL2VL:    "0x<switch GUID> <in port> <out port> 0x<sl0><sl1> 0x<sl2><sl3> ... (8 bytes)"
 */
#include "loaders.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

int routing_write_path_sl(const struct routing *r, const struct fabric *f, FILE *out)
{
	uint32_t i, dlid;

	for (i = 0; i < f->nendports; i++) {
		const struct fab_port *src = &f->ports[f->endports[i]];

		for (dlid = 1; dlid <= f->max_lid; dlid++) {
			if (f->lid_port[dlid] == FAB_NONE || f->lid_port[dlid] == f->endports[i])
				continue;
			fprintf(out, "0x%016" PRIx64 " %u %u\n", f->nodes[src->node].guid, dlid,
				routing_path_sl(r, src->base_lid, (uint16_t)dlid));
		}
	}
	return ferror(out) ? -1 : 0;
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

static int cmp_guid(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorted port and node GUIDs of the end ports, for bsearch while reading large files. */
static uint64_t *endport_guids(const struct fabric *f)
{
	uint64_t *g = malloc(sizeof(*g) * (2 * f->nendports + 1));
	uint32_t i;

	if (!g)
		return NULL;
	for (i = 0; i < f->nendports; i++) {
		g[2 * i] = f->ports[f->endports[i]].guid;
		g[2 * i + 1] = f->nodes[f->ports[f->endports[i]].node].guid;
	}
	qsort(g, 2 * f->nendports, sizeof(*g), cmp_guid);
	return g;
}

/*
 * Per-destination SLs are what sarnue's engines produce; a file whose SL for one destination
 * differs between sources needs per-pair storage, which this reader reports instead of guessing.
 */
int routing_load_path_sl(struct routing *r, const struct fabric *f, const char *path,
			 struct fab_error *err)
{
	uint64_t *guids = NULL;
	uint8_t *seen = NULL;
	char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;
	int ret = -1;
	FILE *in = fopen(path, "r");

	if (!in) {
		fab_error_set(err, "%s: %s", path, strerror(errno));
		return -1;
	}
	seen = calloc(r->lft_len, 1);
	guids = endport_guids(f);
	if (!seen || !guids || routing_alloc_sl_by_dlid(r)) {
		fab_error_set(err, "out of memory");
		goto out;
	}
	while (getline(&line, &cap, in) > 0) {
		uint64_t guid;
		unsigned dlid, sl;

		lineno++;
		if (line[strspn(line, " \t\r\n")] == '\0' || line[0] == '#')
			continue;
		if (sscanf(line, "0x%" SCNx64 " %u %u", &guid, &dlid, &sl) != 3 ||
		    dlid >= r->lft_len || sl >= ROUTING_MAX_SL) {
			fab_error_set(err, "%s:%u: expected \"0xGUID DLID SL\"", path, lineno);
			goto out;
		}
		if (!bsearch(&guid, guids, 2 * f->nendports, sizeof(*guids), cmp_guid)) {
			fab_error_set(err,
				      "%s:%u: port GUID 0x%016" PRIx64 " is not in the topology",
				      path, lineno, guid);
			goto out;
		}
		if (seen[dlid] && r->sl_by_dlid[dlid] != sl) {
			fab_error_set(err,
				      "%s:%u: SL to LID %u differs between sources; per-pair SLs"
				      " are not supported by this reader",
				      path, lineno, dlid);
			goto out;
		}
		seen[dlid] = 1;
		r->sl_by_dlid[dlid] = (uint8_t)sl;
	}
	ret = 0;
out:
	free(seen);
	free(guids);
	free(line);
	fclose(in);
	return ret;
}

static int parse_sl2vl_line(const char *line, uint64_t *guid, unsigned *in, unsigned *out_port,
			    uint8_t vl[ROUTING_MAX_SL])
{
	unsigned b[8], i;

	if (sscanf(line, "0x%" SCNx64 " %u %u 0x%x 0x%x 0x%x 0x%x 0x%x 0x%x 0x%x 0x%x", guid, in,
		   out_port, &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &b[6], &b[7]) != 11)
		return -1;
	for (i = 0; i < 8; i++) {
		if (b[i] > 0xff)
			return -1;
		vl[2 * i] = (uint8_t)(b[i] >> 4);
		vl[2 * i + 1] = (uint8_t)(b[i] & 0xf);
	}
	return 0;
}

int routing_load_sl2vl(struct routing *r, const struct fabric *f, const char *path,
		       struct fab_error *err)
{
	char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;
	int ret = -1;
	FILE *in = fopen(path, "r");

	if (!in) {
		fab_error_set(err, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (routing_alloc_sl2vl(r, f)) {
		fab_error_set(err, "out of memory");
		goto out;
	}
	while (getline(&line, &cap, in) > 0) {
		uint8_t vl[ROUTING_MAX_SL];
		unsigned ip, op;
		uint64_t guid;
		uint32_t n;
		size_t s = r->sl2vl_stride;

		lineno++;
		if (line[strspn(line, " \t\r\n")] == '\0' || line[0] == '#')
			continue;
		if (parse_sl2vl_line(line, &guid, &ip, &op, vl)) {
			fab_error_set(err, "%s:%u: expected \"0xGUID IN OUT\" and 8 hex bytes",
				      path, lineno);
			goto out;
		}
		n = fabric_switch_by_guid(f, guid);
		if (n != FAB_NONE)
			n = f->switches[n];
		if (n == FAB_NONE || ip > f->nodes[n].nports || op > f->nodes[n].nports) {
			fab_error_set(err, "%s:%u: no switch 0x%016" PRIx64 " with ports %u and %u",
				      path, lineno, guid, ip, op);
			goto out;
		}
		memcpy(r->sl2vl + (((size_t)f->nodes[n].sw * s + ip) * s + op) * ROUTING_MAX_SL, vl,
		       ROUTING_MAX_SL);
	}
	ret = 0;
out:
	free(line);
	fclose(in);
	return ret;
}
