/*
 * nodenames.c - reading infiniband-diags node-name maps (nodenames.h), so that job maps can
 * name hosts on fabrics whose HCA descriptions do not.
 */
#include "fabric/nodenames.h"
#include "lib/scan.h"
#include "lib/arena.h"
#include "lib/input.h"
#include "lib/assert.h"

#include <stdlib.h>
#include <string.h>

void node_name_map_init(struct node_name_map *m)
{
	memset(m, 0, sizeof(*m));
}

void node_name_map_free(struct node_name_map *m)
{
	fab_guid_map_free(&m->by_guid);
	free(m->strings);
	node_name_map_init(m);
}

struct names_reader {
	struct node_name_map *m;
	const char *path;
};

/* "0xGUID \"name\" ..." (anything after the name is ignored, as infiniband-diags does). */
static int parse_entry(void *ctx, char *line, unsigned lineno, struct fab_error *err)
{
	struct names_reader *rd = ctx;
	struct node_name_map *m = rd->m;
	const char *path = rd->path;
	const char *p = line, *name, *end;
	uint32_t off;
	uint64_t guid;

	fab_skip_blanks(&p);
	if (*p == '#' || fab_rest_blank(p))
		return 0;
	if (fab_scan_guid(&p, &guid) || !fab_skip_blanks(&p) || *p != '"' ||
	    !(end = strchr(p + 1, '"'))) {
		fab_error_set(err, "%s:%u: expected GUID \"name\"", path, lineno);
		return -1;
	}
	name = p + 1;
	sn_assert(end >= name);
	if (!guid) {
		fab_error_set(err, "%s:%u: GUID 0 is not a valid GUID", path, lineno);
		return -1;
	}
	if (fab_guid_map_get(&m->by_guid, guid) != FAB_NONE) {
		fab_error_set(err, "%s:%u: GUID 0x%016llx named twice", path, lineno,
			      (unsigned long long)guid);
		return -1;
	}
	if (fab_strings_put(&m->strings, &m->strings_len, &m->strings_cap, name,
			    (size_t)(end - name), &off) ||
	    fab_guid_map_put(&m->by_guid, guid, off)) {
		fab_error_set(err, "%s: out of memory", path);
		return -1;
	}
	return 0;
}

int node_name_map_load(struct node_name_map *m, const char *path, struct fab_error *err)
{
	struct names_reader rd = { .m = m, .path = path };
	int ret;

	node_name_map_free(m);
	ret = fab_read_lines(path, FAB_LIMIT_LIST, NULL, parse_entry, &rd, err);
	if (ret)
		node_name_map_free(m);
	return ret;
}

const char *node_name_map_get(const struct node_name_map *m, uint64_t guid)
{
	uint32_t off = fab_guid_map_get(&m->by_guid, guid);

	sn_assert(off == FAB_NONE || off < m->strings_len);
	return off == FAB_NONE ? NULL : m->strings + off;
}
