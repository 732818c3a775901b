/*
 * swlayers.c - reads the switch layers file of nue_layers=: the operator's choice of sar-nue's
 * layer for the destinations at each switch, in place of the automatic partition (see
 * nue_partition_by_switch).  On tori METIS cuts parts that run round whole rings, and a layer
 * holding a whole ring falls back far more often than one holding a block of half of each ring;
 * whoever knows the torus coordinates can name such blocks here.
 *
 * One switch per line, "SWITCH LAYER": the last word is the layer (0..k-1); what comes before
 * it is the switch's node GUID ("0x..."), or its node description (in double quotes when it
 * holds blanks of its own at either end; offline the net file's node name matches too).
 * Switches of the file that the fabric lacks are counted and skipped, so that a failed switch
 * does not stop the routing; a malformed line, a layer out of range, a description that names
 * several switches, a switch given twice or a CA's GUID is an error naming the file and the line,
 * and so is a file that names none of the fabric's switches.
 */
#include "fabric/layersfile.h"
#include "lib/scan.h"
#include "lib/input.h"
#include "lib/assert.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The switches sorted by one name of theirs (description or net-file id), for lookups. */
struct named_switch {
	const char *name;
	uint32_t sw;
};

struct name_index {
	struct named_switch *e;
	uint32_t n;
};

static int cmp_named(const void *a, const void *b)
{
	return strcmp(((const struct named_switch *)a)->name,
		      ((const struct named_switch *)b)->name);
}

static int name_index_build(struct name_index *ix, const struct fabric *f, int by_id)
{
	uint32_t s;

	ix->n = f->nswitches;
	ix->e = malloc(sizeof(*ix->e) * (f->nswitches ? f->nswitches : 1));
	if (!ix->e)
		return -1;
	for (s = 0; s < f->nswitches; s++) {
		uint32_t node = f->switches[s];

		ix->e[s].name = by_id ? fabric_node_id(f, node) : fabric_node_desc(f, node);
		ix->e[s].sw = s;
	}
	qsort(ix->e, ix->n, sizeof(*ix->e), cmp_named);
	return 0;
}

/* Switches named name: the first of them, and how many (0 when none). */
static uint32_t name_index_find(const struct name_index *ix, const char *name, uint32_t *first)
{
	uint32_t lo = 0, hi = ix->n, n = 0;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (strcmp(ix->e[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo + n < ix->n && !strcmp(ix->e[lo + n].name, name))
		n++;
	*first = n ? ix->e[lo].sw : FAB_NONE;
	sn_assert(n <= ix->n && (!n || *first < ix->n));
	return n;
}

struct reader {
	const struct fabric *f;
	const char *path;
	unsigned k, lineno;
	uint8_t *sw_layer;
	uint32_t *sw_line; /* line that set each switch's layer, 0: none */
	struct name_index by_desc, by_id;
	uint32_t unknown, named;
	struct fab_error *err;
};

/* The switch a description names, by description first, then by net-file id; -1 on error. */
static int switch_by_name(struct reader *rd, const char *name, uint32_t *sw)
{
	uint32_t n = name_index_find(&rd->by_desc, name, sw);

	if (!n)
		n = name_index_find(&rd->by_id, name, sw);
	if (n > 1) {
		fab_error_set(rd->err, "%s:%u: \"%s\" names %u switches; give the node GUID",
			      rd->path, rd->lineno, name, n);
		return -1;
	}
	if (!n)
		*sw = FAB_NONE;
	return 0;
}

/* The switch of the text before the layer; FAB_NONE when the fabric has none such. */
static int parse_switch(struct reader *rd, char *text, uint32_t *sw)
{
	const char *p = text;
	size_t len = strlen(text);
	uint64_t guid;

	if (!strncmp(text, "0x", 2) || !strncmp(text, "0X", 2)) {
		uint32_t node;

		if (fab_scan_guid(&p, &guid) || !fab_rest_blank(p)) {
			fab_error_set(rd->err, "%s:%u: \"%s\" is not a GUID", rd->path, rd->lineno,
				      text);
			return -1;
		}
		node = fabric_find_node_by_guid(rd->f, guid);
		if (node != FAB_NONE && !fabric_is_switch(rd->f, node)) {
			fab_error_set(rd->err, "%s:%u: %s is not a switch but %s", rd->path,
				      rd->lineno, text, fabric_node_desc(rd->f, node));
			return -1;
		}
		*sw = node == FAB_NONE ? FAB_NONE : rd->f->nodes[node].sw;
		sn_assert(*sw == FAB_NONE || *sw < rd->f->nswitches);
		return 0;
	}
	if (len >= 2 && text[0] == '"' && text[len - 1] == '"') {
		text[len - 1] = '\0';
		text++;
	}
	return switch_by_name(rd, text, sw);
}

static int parse_line(struct reader *rd, char *line)
{
	char *end = line + strlen(line), *last;
	unsigned layer;
	const char *p;
	uint32_t sw;

	while (end > line && strchr(" \t\r\n", end[-1]))
		end--;
	*end = '\0';
	line += strspn(line, " \t");
	if (!*line || *line == '#')
		return 0;
	last = end;
	while (last > line && !strchr(" \t", last[-1]))
		last--;
	p = last;
	if (last == line || fab_scan_decimal(&p, 256, &layer) || *p) {
		fab_error_set(rd->err,
			      "%s:%u: expected 'SWITCH LAYER' (node GUID or description, "
			      "then a layer number)",
			      rd->path, rd->lineno);
		return -1;
	}
	if (layer >= rd->k) {
		fab_error_set(rd->err, "%s:%u: layer %u, but sar-nue routes %u layer%s (0..%u)",
			      rd->path, rd->lineno, layer, rd->k, rd->k == 1 ? "" : "s", rd->k - 1);
		return -1;
	}
	while (last > line && strchr(" \t", last[-1]))
		last--;
	*last = '\0';
	if (parse_switch(rd, line, &sw))
		return -1;
	if (sw == FAB_NONE) {
		rd->unknown++;
		return 0;
	}
	sn_assert(sw < rd->f->nswitches && layer < rd->k);
	if (rd->sw_line[sw]) {
		fab_error_set(rd->err, "%s:%u: switch %s was given on line %u already", rd->path,
			      rd->lineno, line, rd->sw_line[sw]);
		return -1;
	}
	rd->sw_line[sw] = rd->lineno;
	rd->sw_layer[sw] = (uint8_t)layer;
	rd->named++;
	return 0;
}

int switch_layers_load(const struct fabric *f, const char *path, unsigned k, uint8_t *sw_layer,
		       uint32_t *unknown, struct fab_error *err)
{
	struct reader rd = { .f = f, .path = path, .k = k, .sw_layer = sw_layer, .err = err };
	struct line_reader lr;
	char *line;
	int ret = -1;

	memset(sw_layer, SWLAYER_NONE, f->nswitches);
	if (line_reader_open(&lr, path, FAB_LIMIT_LIST)) {
		fab_error_set(err, "nue_layers %s: %s", path, fab_strerror(errno));
		return -1;
	}
	rd.sw_line = calloc(f->nswitches ? f->nswitches : 1, sizeof(uint32_t));
	if (!rd.sw_line || name_index_build(&rd.by_desc, f, 0) ||
	    name_index_build(&rd.by_id, f, 1)) {
		fab_error_set(err, "out of memory reading %s", path);
		goto out;
	}
	while ((line = line_reader_next(&lr))) {
		rd.lineno = lr.lineno;
		if (parse_line(&rd, line))
			goto out;
	}
	if (line_reader_failed(&lr)) {
		fab_error_from_reader(err, &lr, path);
		goto out;
	}
	if (!rd.named && f->nswitches) {
		fab_error_set(err, "%s names none of the fabric's %u switches", path, f->nswitches);
		goto out;
	}
	/* Each switch is named at most once. */
	sn_assert(rd.named <= f->nswitches);
	*unknown = rd.unknown;
	ret = 0;
out:
	if (ret)
		memset(sw_layer, SWLAYER_NONE, f->nswitches);
	free(rd.sw_line);
	free(rd.by_desc.e);
	free(rd.by_id.e);
	line_reader_close(&lr);
	return ret;
}
