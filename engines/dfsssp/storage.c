/*
 * storage.c - which CA nodes are storage servers (sar-dfsssp's storage_nodes and storage_guids
 * options): marked by a node description pattern or a file of GUIDs, so that dfsssp.c balances
 * their destinations in a phase of their own.  See dfsssp_mark_storage in dfsssp.h.
 */
#include "engines/dfsssp/dfsssp.h"
#include "lib/scan.h"
#include "lib/input.h"

#include <fnmatch.h>
#include <string.h>

static int mark_guid(const struct fabric *f, uint64_t guid, uint8_t *flags)
{
	uint32_t n, k, hit = 0;

	for (n = 0; n < f->nnodes; n++) {
		const struct fab_node *node = &f->nodes[n];

		if (node->type == FAB_SWITCH)
			continue;
		if (node->guid == guid)
			hit = 1;
		for (k = 1; k <= node->nports && !hit; k++)
			hit = f->ports[node->first_port + k].guid == guid;
		if (hit) {
			flags[n] = 1;
			return 1;
		}
	}
	return 0;
}

struct guid_file {
	const struct fabric *f;
	const char *path;
	uint8_t *flags;
	struct storage_match *m;
};

static int guid_file_line(void *ctx, char *line, unsigned lineno, struct fab_error *err)
{
	struct guid_file *gf = ctx;
	const char *p = line + strspn(line, " \t");
	uint64_t guid;

	if (*p == '#' || *p == '\n' || *p == '\r' || !*p)
		return 0;
	if (fab_scan_guid(&p, &guid) || !fab_rest_blank(p)) {
		fab_error_set(err, "%s:%u: expected one GUID per line", gf->path, lineno);
		return -1;
	}
	gf->m->guids++;
	gf->m->guids_found += mark_guid(gf->f, guid, gf->flags);
	return 0;
}

static int read_guid_file(const struct fabric *f, const char *path, uint8_t *flags,
			  struct storage_match *m, struct fab_error *err)
{
	struct guid_file gf = { .f = f, .path = path, .flags = flags, .m = m };

	return fab_read_lines(path, FAB_LIMIT_LIST, "storage_guids", guid_file_line, &gf, err);
}

int dfsssp_mark_storage(const struct fabric *f, const char *pattern, const char *guid_file,
			uint8_t *flags, uint32_t *count, struct storage_match *m,
			struct fab_error *err)
{
	struct storage_match local;
	uint32_t n;

	if (!m)
		m = &local;
	memset(m, 0, sizeof(*m));
	memset(flags, 0, f->nnodes);
	*count = 0;
	if (guid_file && *guid_file && read_guid_file(f, guid_file, flags, m, err))
		return -1;
	for (n = 0; n < f->nnodes; n++) {
		if (f->nodes[n].type == FAB_SWITCH)
			continue;
		if (pattern && *pattern && !fnmatch(pattern, fabric_node_desc(f, n), 0)) {
			flags[n] = 1;
			m->by_pattern++;
		}
		*count += flags[n];
	}
	return 0;
}
