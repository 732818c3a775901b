/*
 * topoformat.c - the outputs of `sarnue topo-order` (see topoorder.h): host lines, a Slurm host
 * list, an MPI hostfile, JSON, and a Slurm topology.conf of the recognised fat tree with leaves
 * in topology order and every switch above listing its children.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/topoorder.h"
#include "lib/json.h"

#define SWITCH_NAME_MAX 64

static uint32_t host_switch(const struct topo_hosts *h, uint32_t k)
{
	return h->f->nodes[fabric_attached_switch(h->f, h->port[k])].sw;
}

static void write_list(const struct topo_hosts *h, const char *sep, const char *tail, FILE *out)
{
	uint32_t k, done = 0;

	for (k = 0; k < h->n; k++) {
		if (!h->selected[k])
			continue;
		fprintf(out, "%s%s%s", done++ ? sep : "", hostlist_get(&h->names, k), tail);
	}
}

/* A net-file name fit for topology.conf: one word Slurm reads as it is. */
static int slurm_word(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n <= SWITCH_NAME_MAX &&
	       strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.-_:") == n;
}

static int cmp_name(const void *a, const void *b, void *ctx)
{
	const char(*name)[SWITCH_NAME_MAX + 1] = ctx;

	return strcmp(name[*(const uint32_t *)a], name[*(const uint32_t *)b]);
}

/* Names of all switches: the net-file name, or the GUID when it is unfit or not unique. */
static char (*switch_names(const struct fabric *f))[SWITCH_NAME_MAX + 1]
{
	char(*name)[SWITCH_NAME_MAX + 1] = calloc(f->nswitches + 1, sizeof(*name));
	uint32_t *idx = malloc(sizeof(*idx) * (f->nswitches + 1));
	uint8_t *clash = calloc(f->nswitches + 1, 1);
	uint32_t s, i;

	if (!name || !idx || !clash)
		goto fail;
	for (s = 0; s < f->nswitches; s++) {
		const char *id = fabric_node_id(f, f->switches[s]);

		idx[s] = s;
		clash[s] = !slurm_word(id);
		snprintf(name[s], sizeof(name[s]), "%s", id);
	}
	qsort_r(idx, f->nswitches, sizeof(*idx), cmp_name, name);
	for (i = 1; i < f->nswitches; i++)
		if (!strcmp(name[idx[i]], name[idx[i - 1]]))
			clash[idx[i]] = clash[idx[i - 1]] = 1;
	for (s = 0; s < f->nswitches; s++)
		if (clash[s])
			snprintf(name[s], sizeof(name[s]), "0x%016" PRIx64,
				 f->nodes[f->switches[s]].guid);
	free(idx);
	free(clash);
	return name;
fail:
	free(name);
	free(idx);
	free(clash);
	return NULL;
}

/* first[s]: the topology position of the first leaf below switch s. */
static uint32_t *first_leaf_below(const struct topo_hosts *h)
{
	const struct fabric *f = h->f;
	const struct fat_tree *t = &h->tree;
	uint32_t *first = malloc(sizeof(*first) * (f->nswitches + 1)), s, e, i;
	unsigned l;

	if (!first)
		return NULL;
	for (s = 0; s < f->nswitches; s++)
		first[s] = FAB_NONE;
	for (i = 0; i < t->nleaves; i++)
		first[t->leaves[i]] = i;
	for (l = 2; l <= t->levels; l++) {
		for (s = 0; s < f->nswitches; s++) {
			if (t->level[s] != l)
				continue;
			for (e = f->sw_adj_off[s]; e < f->sw_adj_off[s + 1]; e++) {
				uint32_t c =
					f->nodes[f->ports[f->ports[f->sw_adj_port[e]].remote].node]
						.sw;

				if (t->level[c] == l - 1 && first[c] < first[s])
					first[s] = first[c];
			}
		}
	}
	return first;
}

static int cmp_first(const void *a, const void *b, void *ctx)
{
	const uint32_t *first = ctx, x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (first[x] != first[y])
		return first[x] < first[y] ? -1 : 1;
	return (x > y) - (x < y);
}

/* SwitchName=S Switches=... for switch s: its children one level down, each once. */
static void write_parent(const struct topo_hosts *h, uint32_t s, const uint32_t *first,
			 char (*name)[SWITCH_NAME_MAX + 1], uint32_t *child, FILE *out)
{
	const struct fabric *f = h->f;
	uint32_t e, n = 0, i;

	for (e = f->sw_adj_off[s]; e < f->sw_adj_off[s + 1]; e++) {
		uint32_t c = f->nodes[f->ports[f->ports[f->sw_adj_port[e]].remote].node].sw;

		if (h->tree.level[c] + 1 == h->tree.level[s])
			child[n++] = c;
	}
	qsort_r(child, n, sizeof(*child), cmp_first, (void *)first);
	fprintf(out, "SwitchName=%s Switches=", name[s]);
	for (i = 0; i < n; i++)
		if (!i || child[i] != child[i - 1])
			fprintf(out, "%s%s", i ? "," : "", name[child[i]]);
	fputc('\n', out);
}

/* One line per leaf with its hosts; hosts above the leaves are not in the tree plugin's view. */
static void write_leaves(const struct topo_hosts *h, char (*name)[SWITCH_NAME_MAX + 1], FILE *out)
{
	uint32_t i, k = 0, n;

	for (i = 0; i < h->tree.nleaves; i++) {
		uint32_t leaf = h->tree.leaves[i];

		fprintf(out, "SwitchName=%s", name[leaf]);
		for (n = 0; k < h->nleaf && host_switch(h, k) == leaf; k++, n++)
			fprintf(out, "%s%s", n ? "," : " Nodes=", hostlist_get(&h->names, k));
		fputc('\n', out);
	}
}

static int write_topology_conf(const struct topo_hosts *h, const char *topology, FILE *out)
{
	const struct fabric *f = h->f;
	char(*name)[SWITCH_NAME_MAX + 1] = switch_names(f);
	uint32_t *first = first_leaf_below(h);
	uint32_t *sw = malloc(sizeof(*sw) * (f->nswitches + 1));
	uint32_t *child = malloc(sizeof(*child) * (f->nports + 1));
	uint32_t s, n, i;
	unsigned l;
	int ret = -1;

	if (!name || !first || !sw || !child)
		goto out;
	fprintf(out, "# Slurm topology.conf written by sarnue topo-order from %s\n", topology);
	fprintf(out, "# fat tree: %s; leaves in topology order\n", h->tree.shape);
	if (h->n > h->nleaf)
		fprintf(out, "# %u host(s) on switches above the leaves left out, first %s\n",
			h->n - h->nleaf, hostlist_get(&h->names, h->nleaf));
	write_leaves(h, name, out);
	for (l = 2; l <= h->tree.levels; l++) {
		for (s = 0, n = 0; s < f->nswitches; s++)
			if (h->tree.level[s] == l)
				sw[n++] = s;
		qsort_r(sw, n, sizeof(*sw), cmp_first, first);
		for (i = 0; i < n; i++)
			write_parent(h, sw[i], first, name, child, out);
	}
	ret = 0;
out:
	free(name);
	free(first);
	free(sw);
	free(child);
	return ret;
}

/* Leaf position of each switch: its place in topology order, FAB_NONE above the leaves. */
static uint32_t *leaf_positions(const struct topo_hosts *h)
{
	uint32_t *pos = malloc(sizeof(*pos) * (h->f->nswitches + 1)), s, i;

	if (!pos)
		return NULL;
	for (s = 0; s < h->f->nswitches; s++)
		pos[s] = FAB_NONE;
	for (i = 0; i < h->tree.nleaves; i++)
		pos[h->tree.leaves[i]] = i;
	return pos;
}

static void write_placement(const struct topo_hosts *h, uint32_t k, const uint32_t *pos, FILE *out)
{
	const struct fabric *f = h->f;
	uint32_t sp = f->ports[h->port[k]].remote, sw = host_switch(h, k);

	fputs("{\"host\": ", out);
	json_write_string(out, hostlist_get(&h->names, k));
	fputs(", \"switch\": ", out);
	json_write_string(out, fabric_node_id(f, f->switches[sw]));
	fprintf(out, ", \"switch_guid\": \"0x%016" PRIx64 "\", \"port\": %u, \"leaf_position\": ",
		f->nodes[f->switches[sw]].guid, f->ports[sp].num);
	if (pos[sw] == FAB_NONE)
		fputs("null}", out);
	else
		fprintf(out, "%u}", pos[sw]);
}

static int write_json(const struct topo_hosts *h, const char *topology, FILE *out)
{
	uint32_t *pos = leaf_positions(h), k, done = 0;

	if (!pos)
		return -1;
	fputs("{\"topology\": ", out);
	json_write_string(out, topology);
	fputs(", \"fat_tree\": ", out);
	json_write_string(out, h->tree.shape);
	fprintf(out, ", \"leaves\": %u, \"hosts\": [", h->tree.nleaves);
	for (k = 0; k < h->n; k++) {
		if (!h->selected[k])
			continue;
		fputs(done++ ? ", " : "", out);
		json_write_string(out, hostlist_get(&h->names, k));
	}
	fputs("], \"placement\": [", out);
	for (k = 0, done = 0; k < h->n; k++) {
		if (!h->selected[k])
			continue;
		fputs(done++ ? ", " : "", out);
		write_placement(h, k, pos, out);
	}
	fputs("]}\n", out);
	free(pos);
	return 0;
}

int topo_write(const struct topo_hosts *h, enum topo_format fmt, const char *topology, FILE *out)
{
	int ret = 0;

	switch (fmt) {
	case TOPO_LINES:
		write_list(h, "", "\n", out);
		break;
	case TOPO_SLURM_ARBITRARY:
		write_list(h, ",", "", out);
		if (h->nselected)
			fputc('\n', out);
		break;
	case TOPO_HOSTFILE:
		write_list(h, "", " slots=1\n", out);
		break;
	case TOPO_TOPOLOGY_CONF:
		ret = write_topology_conf(h, topology, out);
		break;
	case TOPO_JSON:
		ret = write_json(h, topology, out);
		break;
	}
	if (fflush(out) || ferror(out))
		ret = -1;
	return ret;
}
