/*
 * jobfilter.c - topology lookup, multi-switch job sets and the reroute decision of
 * sarnue-filterd (see jobfilter.h).  Hostnames are looked up by binary search in the sorted
 * name list: a poll of 10,000 jobs makes some 10^5 lookups, far below Slurm's own answer time.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* qsort_r */
#endif
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "filterd/jobfilter.h"
#include "lib/sortu64.h"
#include "lib/scan.h"
#include "lib/arena.h"
#include "lib/input.h"
#include "lib/assert.h"

/* ------------------------------------------------------------------ helpers */

static int cmp_off_str(const void *a, const void *b, void *ctx)
{
	const char *buf = ctx;

	return strcmp(buf + *(const uint32_t *)a, buf + *(const uint32_t *)b);
}

int keys_normalize(struct hostlist *keys)
{
	uint32_t i, n = 0;

	if (keys->n < 2) /* qsort_r's pointers must not be NULL, even for no elements */
		return 0;
	qsort_r(keys->off, keys->n, sizeof(*keys->off), cmp_off_str, keys->buf);
	for (i = 0; i < keys->n; i++)
		if (!n || strcmp(hostlist_get(keys, i), keys->buf + keys->off[n - 1]))
			keys->off[n++] = keys->off[i];
	keys->n = n;
	return 0;
}

void keys_diff(const struct hostlist *prev, const struct hostlist *cur, uint32_t *added,
	       uint32_t *removed)
{
	uint32_t i = 0, j = 0;

	*added = *removed = 0;
	while (i < prev->n || j < cur->n) {
		int c = i == prev->n  ? 1
			: j == cur->n ? -1
				      : strcmp(hostlist_get(prev, i), hostlist_get(cur, j));

		if (c < 0) {
			(*removed)++;
			i++;
		} else if (c > 0) {
			(*added)++;
			j++;
		} else {
			i++;
			j++;
		}
	}
}

/* ------------------------------------------------------------------ topology */

void topo_init(struct topo *t)
{
	memset(t, 0, sizeof(*t));
	hostlist_init(&t->names);
}

void topo_free(struct topo *t)
{
	hostlist_free(&t->names);
	free(t->leaf_off);
	free(t->leaf);
	free(t->leaf_guid);
	free(t->pair_host);
	free(t->pair_leaf);
	topo_init(t);
}

int topo_add(struct topo *t, const char *host, size_t len, uint64_t leaf_guid)
{
	if (t->npairs == t->pairs_cap) {
		uint32_t host_cap = t->pairs_cap, leaf_cap = t->pairs_cap;

		/* Both double alike: pairs_cap holds for both once both grew. */
		if (fab_grow((void **)&t->pair_host, &host_cap, t->npairs + 1,
			     sizeof(*t->pair_host), 256) ||
		    fab_grow((void **)&t->pair_leaf, &leaf_cap, t->npairs + 1,
			     sizeof(*t->pair_leaf), 256))
			return -1;
		t->pairs_cap = host_cap;
	}
	if (hostlist_add(&t->names, host, len))
		return -1;
	t->pair_host[t->npairs] = t->names.n - 1;
	t->pair_leaf[t->npairs] = leaf_guid;
	t->npairs++;
	return 0;
}

static int cmp_pair(const void *a, const void *b, void *ctx)
{
	const struct topo *t = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c = strcmp(hostlist_get(&t->names, t->pair_host[x]),
		       hostlist_get(&t->names, t->pair_host[y]));

	if (c)
		return c;
	return t->pair_leaf[x] < t->pair_leaf[y] ? -1 : t->pair_leaf[x] > t->pair_leaf[y];
}

static uint32_t leaf_index(const struct topo *t, uint64_t guid)
{
	uint32_t lo = 0, hi = t->nleaves;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->leaf_guid[mid] < guid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Sorted unique leaf GUIDs of the pairs. */
static int build_leaves(struct topo *t)
{
	uint32_t i, n = 0;

	t->leaf_guid = malloc(((size_t)t->npairs + 1) * sizeof(*t->leaf_guid));
	if (!t->leaf_guid)
		return -1;
	if (t->npairs) /* pair_leaf is NULL while empty */
		memcpy(t->leaf_guid, t->pair_leaf, (size_t)t->npairs * sizeof(*t->leaf_guid));
	sort_u64(t->leaf_guid, t->npairs);
	for (i = 0; i < t->npairs; i++)
		if (!n || t->leaf_guid[i] != t->leaf_guid[n - 1])
			t->leaf_guid[n++] = t->leaf_guid[i];
	t->nleaves = n;
	return 0;
}

int topo_finalize(struct topo *t, struct fab_error *err)
{
	struct hostlist names;
	uint32_t *order = NULL, i, nleaf = 0;
	int ret = -1;

	hostlist_init(&names);
	order = malloc(((size_t)t->npairs + 1) * sizeof(*order));
	t->leaf_off = malloc(((size_t)t->npairs + 1) * sizeof(*t->leaf_off));
	t->leaf = malloc(((size_t)t->npairs + 1) * sizeof(*t->leaf));
	if (!order || !t->leaf_off || !t->leaf || build_leaves(t))
		goto out;
	for (i = 0; i < t->npairs; i++)
		order[i] = i;
	qsort_r(order, t->npairs, sizeof(*order), cmp_pair, t);
	t->ports = t->npairs;
	for (i = 0; i < t->npairs; i++) {
		const char *name = hostlist_get(&t->names, t->pair_host[order[i]]);
		uint32_t leaf = leaf_index(t, t->pair_leaf[order[i]]);

		/* build_leaves() took every pair's leaf, so the search always finds it. */
		sn_assert(leaf < t->nleaves && t->leaf_guid[leaf] == t->pair_leaf[order[i]]);
		if (!names.n || strcmp(name, hostlist_get(&names, names.n - 1))) {
			if (hostlist_add(&names, name, strlen(name)))
				goto out;
			t->leaf_off[names.n - 1] = nleaf;
		}
		/* Two HCAs of one host on the same leaf count once. */
		if (nleaf == t->leaf_off[names.n - 1] || t->leaf[nleaf - 1] != leaf)
			t->leaf[nleaf++] = leaf;
	}
	/* leaf_off and leaf hold npairs + 1 entries: each host and each leaf entry uses a pair. */
	sn_assert(names.n <= t->npairs && nleaf <= t->npairs);
	t->leaf_off[names.n] = nleaf;
	hostlist_free(&t->names);
	t->names = names;
	hostlist_init(&names);
	free(t->pair_host);
	free(t->pair_leaf);
	t->pair_host = NULL;
	t->pair_leaf = NULL;
	t->npairs = t->pairs_cap = 0;
	ret = 0;
out:
	if (ret)
		fab_error_set(err, "topology: out of memory");
	hostlist_free(&names);
	free(order);
	return ret;
}

uint32_t topo_find(const struct topo *t, const char *name, size_t len)
{
	uint32_t lo = 0, hi = t->names.n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const char *s = hostlist_get(&t->names, mid);
		int c = strncmp(s, name, len);

		if (!c && s[len])
			c = 1;
		if (c < 0)
			lo = mid + 1;
		else if (c > 0)
			hi = mid;
		else
			return mid;
	}
	return FAB_NONE;
}

int topo_from_fabric(struct topo *t, const struct fabric *f, enum job_host_match match,
		     struct fab_error *err)
{
	uint32_t n, p;

	for (n = 0; n < f->nnodes; n++) {
		const char *desc = fabric_node_desc(f, n);
		size_t len = match == JOB_MATCH_DESCRIPTION ? strlen(desc) : strcspn(desc, " \t");

		if (f->nodes[n].type != FAB_CA || !len)
			continue;
		for (p = 1; p <= f->nodes[n].nports; p++) {
			uint32_t sw = fabric_attached_switch(f, f->nodes[n].first_port + p);

			if (sw != FAB_NONE && topo_add(t, desc, len, f->nodes[sw].guid)) {
				fab_error_set(err, "topology: out of memory");
				return -1;
			}
		}
	}
	return topo_finalize(t, err);
}

/* "host NAME NODE_GUID PORT_GUID LEAF_GUID", GUIDs as 0x and 1 to 16 hex digits. */
static int ctl_host_line(const char *p, char *name, uint64_t *leaf)
{
	uint64_t node, port;
	size_t n;

	if (strncmp(p, "host", 4))
		return -1;
	p += 4;
	if (!fab_skip_blanks(&p))
		return -1;
	n = strcspn(p, " \t\r\n");
	if (!n || n > JOB_MAP_MAX_NAME)
		return -1;
	memcpy(name, p, n);
	name[n] = '\0';
	p += n;
	if (!fab_skip_blanks(&p) || fab_scan_hex(&p, 16, &node) || !fab_skip_blanks(&p) ||
	    fab_scan_hex(&p, 16, &port) || !fab_skip_blanks(&p) || fab_scan_hex(&p, 16, leaf))
		return -1;
	return fab_rest_blank(p) ? 0 : -1;
}

int topo_from_ctl(struct topo *t, const char *data, const char *what, struct fab_error *err)
{
	const char *line = data;
	unsigned lineno = 0;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char name[JOB_MAP_MAX_NAME + 1], buf[4097];
		uint64_t leaf;

		lineno++;
		if (len >= sizeof(buf))
			goto bad;
		/* A copy ends the line for the scanners, which read to the NUL. */
		memcpy(buf, line, len);
		buf[len] = '\0';
		if (ctl_host_line(buf, name, &leaf))
			goto bad;
		if (topo_add(t, name, strlen(name), leaf)) {
			fab_error_set(err, "topology: out of memory");
			return -1;
		}
		line = nl ? nl + 1 : NULL;
	}
	return topo_finalize(t, err);
bad:
	fab_error_set(err,
		      "%s: reply line %u: expected \"host NAME NODE_GUID PORT_GUID LEAF_GUID\"",
		      what, lineno);
	return -1;
}

/* One "SwitchName=X Nodes=EXPR ..." line: every host of EXPR under the leaf numbered leaf. */
static int slurm_conf_line(struct topo *t, char *line, const char *path, unsigned lineno,
			   uint64_t *leaf, struct hostlist *hosts, struct fab_error *err)
{
	char *word, *save = NULL, *nodes = NULL, what[512];
	int is_switch = 0;
	uint32_t i;

	for (word = strtok_r(line, " \t\r\n", &save); word;
	     word = strtok_r(NULL, " \t\r\n", &save)) {
		if (!strncasecmp(word, "SwitchName=", 11))
			is_switch = 1;
		else if (!strncasecmp(word, "Nodes=", 6))
			nodes = word + 6;
	}
	if (!is_switch || !nodes)
		return 0;
	snprintf(what, sizeof(what), "%s:%u: Nodes=", path, lineno);
	hostlist_clear(hosts);
	if (hostlist_expand(hosts, nodes, strlen(nodes), what, err))
		return -1;
	(*leaf)++;
	for (i = 0; i < hosts->n; i++)
		if (topo_add(t, hostlist_get(hosts, i), strlen(hostlist_get(hosts, i)), *leaf)) {
			fab_error_set(err, "topology: out of memory");
			return -1;
		}
	return 0;
}

int topo_from_slurm_conf(struct topo *t, const char *path, struct fab_error *err)
{
	struct line_reader lr;
	struct hostlist hosts;
	uint64_t leaf = 0;
	char *line;
	int ret = -1;

	if (line_reader_open(&lr, path, FAB_LIMIT_LIST)) {
		fab_error_set(err, "%s: %s", path, fab_strerror(errno));
		return -1;
	}
	hostlist_init(&hosts);
	while ((line = line_reader_next(&lr))) {
		char *hash = strchr(line, '#');

		if (hash)
			*hash = '\0';
		if (slurm_conf_line(t, line, path, lr.lineno, &leaf, &hosts, err))
			goto out;
	}
	if (line_reader_failed(&lr)) {
		fab_error_from_reader(err, &lr, path);
		goto out;
	}
	ret = topo_finalize(t, err);
out:
	hostlist_free(&hosts);
	line_reader_close(&lr);
	return ret;
}

/* ------------------------------------------------------------------ job sets */

void jobset_init(struct jobset *js)
{
	memset(js, 0, sizeof(*js));
}

void jobset_free(struct jobset *js)
{
	hostlist_free(&js->ids);
	hostlist_free(&js->keys);
	hostlist_free(&js->unknown);
	hostlist_free(&js->scratch);
	free(js->off);
	free(js->host);
	jobset_init(js);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

enum skip {
	SKIP_NONE,
	SKIP_NO_NODES,
	SKIP_SHORT,
	SKIP_EXCLUDED,
};

/* Why a running job is left out of the job set, if it is. */
static enum skip skip_reason(const struct slurm_job *job, const struct slurm_jobs *jobs,
			     const struct filter_conf *c)
{
	const char *part = slurm_str(jobs, job->partition);
	unsigned i;

	if (!slurm_str(jobs, job->nodes)[0])
		return SKIP_NO_NODES;
	if (job->time_limit < c->min_time_limit)
		return SKIP_SHORT;
	for (i = 0; i < c->nexclude; i++)
		if (!fnmatch(c->exclude_parts[i], part, 0))
			return SKIP_EXCLUDED;
	return SKIP_NONE;
}

static int skipped(struct jobset *js, const struct slurm_job *job, const struct slurm_jobs *jobs,
		   const struct filter_conf *c)
{
	switch (skip_reason(job, jobs, c)) {
	case SKIP_NO_NODES:
		js->st.no_nodes++;
		return 1;
	case SKIP_SHORT:
		js->st.short_jobs++;
		return 1;
	case SKIP_EXCLUDED:
		js->st.excluded++;
		return 1;
	default:
		return 0;
	}
}

/* "job ID node list 'node[1-...'": how errors about a job's node list name it. */
static void node_list_what(const struct slurm_jobs *jobs, const struct slurm_job *job, char *what,
			   size_t size)
{
	const char *nodes = slurm_str(jobs, job->nodes);

	snprintf(what, size, "job %.64s node list '%.32s%s'", slurm_str(jobs, job->id), nodes,
		 strlen(nodes) > 32 ? "..." : "");
}

/*
 * Counts the hosts of every node list to expand before expanding any: expanding first took a
 * hundred node[1-1000000] lists half a minute and 1.5 GB, and then the poll went on.
 */
static int check_host_budget(const struct slurm_jobs *jobs, const struct filter_conf *c,
			     struct fab_error *err)
{
	uint32_t max = c->max_hosts ? c->max_hosts : JOBSET_MAX_HOSTS, i, n;
	uint64_t total = 0;
	char what[128];

	for (i = 0; i < jobs->n; i++) {
		const struct slurm_job *job = &jobs->v[i];
		const char *nodes = slurm_str(jobs, job->nodes);

		if (!job->running || skip_reason(job, jobs, c) != SKIP_NONE)
			continue;
		node_list_what(jobs, job, what, sizeof(what));
		if (hostlist_count(nodes, strlen(nodes), what, &n, err))
			return -1;
		total += n;
		if (total > max) {
			fab_error_set(
				err,
				"the running jobs' node lists name more than %u hosts together,"
				" the most one poll expands (job %.64s passes it)",
				max, slurm_str(jobs, job->id));
			return -1;
		}
	}
	return 0;
}

/* True when the hosts host[0..n) sit under two or more leaves. */
static int spans_leaves(const struct topo *t, const uint32_t *host, uint32_t n)
{
	uint32_t i, k, first;

	if (!n)
		return 0;
	first = t->leaf[t->leaf_off[host[0]]];
	for (i = 0; i < n; i++) {
		sn_assert(host[i] < t->names.n);
		for (k = t->leaf_off[host[i]]; k < t->leaf_off[host[i] + 1]; k++)
			if (t->leaf[k] != first)
				return 1;
	}
	return 0;
}

/* The key of a node set: names joined by ','. */
static int add_key(struct jobset *js, const struct topo *t, const uint32_t *host, uint32_t n)
{
	size_t len = 0, pos = 0;
	uint32_t i;
	char *key;
	int ret;

	for (i = 0; i < n; i++)
		len += strlen(hostlist_get(&t->names, host[i])) + 1;
	key = malloc(len);
	if (!key)
		return -1;
	for (i = 0; i < n; i++) {
		const char *s = hostlist_get(&t->names, host[i]);
		size_t l = strlen(s);

		memcpy(key + pos, s, l);
		pos += l;
		key[pos++] = ',';
	}
	sn_assert(pos == len);
	ret = hostlist_add(&js->keys, key, len - 1);
	free(key);
	return ret;
}

/* Resolves the expanded hosts of one job into js->host from *nh on; returns the new count. */
static int resolve_hosts(struct jobset *js, const struct topo *t, uint32_t *nh)
{
	uint32_t i, start = *nh, n = start;

	if (fab_grow((void **)&js->host, &js->hcap, start + js->scratch.n, sizeof(*js->host), 64))
		return -1;
	for (i = 0; i < js->scratch.n; i++) {
		const char *name = hostlist_get(&js->scratch, i);
		uint32_t h = topo_find(t, name, strlen(name));

		if (h != FAB_NONE)
			js->host[n++] = h;
		else if (hostlist_add(&js->unknown, name, strlen(name)))
			return -1;
	}
	qsort(js->host + start, n - start, sizeof(*js->host), cmp_u32);
	*nh = start;
	for (i = start; i < n; i++)
		if (i == start || js->host[i] != js->host[*nh - 1])
			js->host[(*nh)++] = js->host[i];
	return 0;
}

static int add_job(struct jobset *js, const struct slurm_jobs *jobs, const struct slurm_job *job,
		   const struct topo *t, uint32_t *nh, struct fab_error *err)
{
	const char *nodes = slurm_str(jobs, job->nodes);
	uint32_t start = *nh;
	char what[128];

	node_list_what(jobs, job, what, sizeof(what));
	hostlist_clear(&js->scratch);
	if (hostlist_expand(&js->scratch, nodes, strlen(nodes), what, err))
		return -1;
	if (resolve_hosts(js, t, nh))
		goto oom;
	if (!spans_leaves(t, js->host + start, *nh - start)) {
		js->st.single_switch++;
		*nh = start;
		return 0;
	}
	js->st.multi_switch++;
	js->st.multi_hosts += *nh - start;
	if (fab_grow((void **)&js->off, &js->ncap, js->ids.n + 2, sizeof(*js->off), 64))
		goto oom;
	if (hostlist_add(&js->ids, slurm_str(jobs, job->id), strlen(slurm_str(jobs, job->id))) ||
	    add_key(js, t, js->host + start, *nh - start))
		goto oom;
	js->off[js->ids.n] = *nh;
	return 0;
oom:
	fab_error_set(err, "out of memory");
	return -1;
}

int jobset_build(struct jobset *js, const struct slurm_jobs *jobs, const struct topo *t,
		 const struct filter_conf *c, struct fab_error *err)
{
	uint32_t i, nh = 0;

	memset(&js->st, 0, sizeof(js->st));
	hostlist_clear(&js->ids);
	hostlist_clear(&js->keys);
	hostlist_clear(&js->unknown);
	if (fab_grow((void **)&js->off, &js->ncap, 1, sizeof(*js->off), 64)) {
		fab_error_set(err, "out of memory");
		return -1;
	}
	js->off[0] = 0;
	if (check_host_budget(jobs, c, err))
		return -1;
	for (i = 0; i < jobs->n; i++) {
		const struct slurm_job *job = &jobs->v[i];

		js->st.jobs++;
		if (!job->running)
			continue;
		js->st.running++;
		if (skipped(js, job, jobs, c))
			continue;
		if (add_job(js, jobs, job, t, &nh, err))
			return -1;
	}
	keys_normalize(&js->keys);
	keys_normalize(&js->unknown);
	return 0;
}

int jobset_write_map(const struct jobset *js, const struct topo *t, FILE *out)
{
	uint32_t k, i;

	fprintf(out, "# written by sarnue-filterd: %u multi-switch job(s), %u host entries\n",
		js->ids.n, js->st.multi_hosts);
	for (k = 0; k < js->ids.n; k++)
		for (i = js->off[k]; i < js->off[k + 1]; i++)
			fprintf(out, "%s %s\n", hostlist_get(&t->names, js->host[i]),
				hostlist_get(&js->ids, k));
	return ferror(out) ? -1 : 0;
}

static int cmp_entry(const void *a, const void *b, void *ctx)
{
	const struct job_map *jm = ctx;
	const struct job_entry *x = &jm->entries[*(const uint32_t *)a];
	const struct job_entry *y = &jm->entries[*(const uint32_t *)b];

	if (x->job != y->job)
		return x->job < y->job ? -1 : 1;
	return strcmp(jm->strings + x->host, jm->strings + y->host);
}

int jobset_keys_from_map(const struct job_map *jm, struct hostlist *keys, struct fab_error *err)
{
	struct hostlist key;
	uint32_t *order, i;
	int ret = -1;

	hostlist_clear(keys);
	hostlist_init(&key);
	order = malloc(((size_t)jm->nentries + 1) * sizeof(*order));
	if (!order)
		goto out;
	for (i = 0; i < jm->nentries; i++)
		order[i] = i;
	qsort_r(order, jm->nentries, sizeof(*order), cmp_entry, (void *)jm);
	for (i = 0; i < jm->nentries; i++) {
		const struct job_entry *e = &jm->entries[order[i]];
		const char *host = jm->strings + e->host;
		int same_job = i > 0 && jm->entries[order[i - 1]].job == e->job;

		if (same_job && !strcmp(host, jm->strings + jm->entries[order[i - 1]].host))
			continue;
		/* key.buf holds the key being built, ',' separated. */
		if (!same_job && key.len) {
			if (hostlist_add(keys, key.buf, key.len - 1))
				goto out;
			key.len = 0;
		}
		if (hostlist_add(&key, host, strlen(host)))
			goto out;
		key.buf[key.len - 1] = ',';
	}
	if (key.len && hostlist_add(keys, key.buf, key.len - 1))
		goto out;
	keys_normalize(keys);
	ret = 0;
out:
	if (ret)
		fab_error_set(err, "out of memory");
	hostlist_free(&key);
	free(order);
	return ret;
}

/* ------------------------------------------------------------------ decision */

void filter_decide(const struct decide_in *in, struct decide_out *out)
{
	memset(out, 0, sizeof(*out));
	keys_diff(in->installed, in->current, &out->added, &out->removed);
	if (!out->added && !out->removed) {
		out->decision = DECIDE_NO_CHANGE;
		return;
	}
	if (in->last_reroute >= 0 && in->now - in->last_reroute < in->min_interval) {
		out->decision = DECIDE_DEFERRED;
		out->wait = in->min_interval - (in->now - in->last_reroute);
		return;
	}
	out->decision = DECIDE_REROUTE;
}
