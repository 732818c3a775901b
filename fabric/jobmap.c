/*
 * jobmap.c - parsing the job map file and binding its hostnames to the fabric's CA nodes (see
 * jobmap.h for the format and who uses it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/jobmap.h"
#include "lib/arena.h"
#include "lib/input.h"
#include "lib/assert.h"
#include "lib/scan.h"

/* Open-addressing table of string offsets, used for job ids and for hostnames. */
struct str_table {
	uint32_t *slot; /* value + 1, 0 = empty */
	uint32_t cap;
};

static uint32_t str_hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

static int str_table_init(struct str_table *t, uint32_t expected)
{
	t->cap = 16;
	while (t->cap < 2 * expected + 16)
		t->cap *= 2;
	/* A power of two at most half full: probes wrap with a mask and always end. */
	sn_assert(!(t->cap & (t->cap - 1)) && t->cap >= 2 * expected);
	t->slot = calloc(t->cap, sizeof(*t->slot));
	return t->slot ? 0 : -1;
}

/*
 * Finds the slot for key: either the one holding a value whose name (through name_of) equals key,
 * or the empty one where it belongs.
 */
static uint32_t *str_table_find(const struct str_table *t, const char *key, size_t len,
				const char *(*name_of)(const void *ctx, uint32_t value),
				size_t (*len_of)(const void *ctx, uint32_t value), const void *ctx)
{
	uint32_t i = str_hash(key, len) & (t->cap - 1);

	for (;; i = (i + 1) & (t->cap - 1)) {
		uint32_t v = t->slot[i];

		if (!v)
			return &t->slot[i];
		if (len_of(ctx, v - 1) == len && !memcmp(name_of(ctx, v - 1), key, len))
			return &t->slot[i];
	}
}

void job_map_init(struct job_map *jm)
{
	memset(jm, 0, sizeof(*jm));
}

static void job_map_unbind(struct job_map *jm)
{
	free(jm->node_off);
	free(jm->node_jobs);
	free(jm->job_ports);
	jm->node_off = jm->node_jobs = jm->job_ports = NULL;
	jm->nnodes = 0;
	jm->unknown_hosts = 0;
	jm->first_unknown[0] = '\0';
	jm->ambiguous_hosts = jm->first_ambiguous_hcas = 0;
	jm->first_ambiguous[0] = jm->first_ambiguous_name[0] = '\0';
}

void job_map_free(struct job_map *jm)
{
	job_map_unbind(jm);
	free(jm->strings);
	free(jm->entries);
	free(jm->job_name);
	job_map_init(jm);
}

static int add_string(struct job_map *jm, const char *s, size_t len, uint32_t *off)
{
	return fab_strings_put(&jm->strings, &jm->strings_len, &jm->strings_cap, s, len, off);
}

static const char *job_name_of(const void *ctx, uint32_t job)
{
	const struct job_map *jm = ctx;

	return job_map_job_name(jm, job);
}

static size_t job_len_of(const void *ctx, uint32_t job)
{
	return strlen(job_name_of(ctx, job));
}

/* Index of the job called name, added when new; the table is rebuilt as jobs grow. */
static int intern_job(struct job_map *jm, struct str_table *t, const char *name, size_t len,
		      uint32_t *job)
{
	uint32_t *slot, off, i;

	if (2 * (jm->njobs + 1) > t->cap) {
		struct str_table bigger;

		if (str_table_init(&bigger, jm->njobs + 1))
			return -1;
		for (i = 0; i < jm->njobs; i++)
			*str_table_find(&bigger, job_map_job_name(jm, i),
					strlen(job_map_job_name(jm, i)), job_name_of, job_len_of,
					jm) = i + 1;
		free(t->slot);
		*t = bigger;
	}
	sn_assert(2 * (jm->njobs + 1) <= t->cap);
	slot = str_table_find(t, name, len, job_name_of, job_len_of, jm);
	if (*slot) {
		*job = *slot - 1;
		sn_assert(*job < jm->njobs);
		return 0;
	}
	if (fab_grow((void **)&jm->job_name, &jm->jobs_cap, jm->njobs + 1, sizeof(*jm->job_name),
		     64) ||
	    add_string(jm, name, len, &off))
		return -1;
	jm->job_name[jm->njobs] = off;
	*job = jm->njobs++;
	*slot = *job + 1;
	return 0;
}

static int parse_line(struct job_map *jm, struct str_table *jobs, char *line, const char *name,
		      uint32_t lineno, struct fab_error *err)
{
	char *word[3];
	size_t len[3];
	unsigned n = fab_split_words(line, word, len, 3);
	uint32_t host, job;

	if (n == 0)
		return 0;
	if (n != 2) {
		fab_error_set(err, "%s:%u: expected 'hostname jobid', got %s", name, lineno,
			      n == 1 ? "one word" : "more than two words");
		return -1;
	}
	if (len[0] > JOB_MAP_MAX_NAME || len[1] > JOB_MAP_MAX_NAME) {
		fab_error_set(err, "%s:%u: %s longer than %d characters", name, lineno,
			      len[0] > JOB_MAP_MAX_NAME ? "hostname" : "job id", JOB_MAP_MAX_NAME);
		return -1;
	}
	if (intern_job(jm, jobs, word[1], len[1], &job) || add_string(jm, word[0], len[0], &host) ||
	    fab_grow((void **)&jm->entries, &jm->entries_cap, jm->nentries + 1,
		     sizeof(*jm->entries), 64)) {
		fab_error_set(err, "%s:%u: out of memory", name, lineno);
		return -1;
	}
	jm->entries[jm->nentries].host = host;
	jm->entries[jm->nentries].job = job;
	jm->entries[jm->nentries].line = lineno;
	jm->nentries++;
	return 0;
}

int job_map_parse_text(struct job_map *jm, const char *text, const char *name,
		       struct fab_error *err)
{
	struct str_table jobs = { 0 };
	uint32_t lineno = 0;
	char *copy, *line, *next;
	int rc = -1;

	job_map_free(jm);
	copy = strdup(text);
	if (!copy || str_table_init(&jobs, 64)) {
		fab_error_set(err, "%s: out of memory", name);
		goto out;
	}
	for (line = copy; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		if (parse_line(jm, &jobs, line, name, lineno, err))
			goto out;
	}
	rc = 0;
out:
	if (rc)
		job_map_free(jm);
	free(jobs.slot);
	free(copy);
	return rc;
}

int job_map_parse_named(struct job_map *jm, const char *path, const char *name,
			struct fab_error *err)
{
	char *text = NULL;
	size_t len = 0;
	int rc;

	job_map_free(jm);
	if (fab_read_text_named(path, name, FAB_LIMIT_LIST, &text, &len, err))
		return -1;
	rc = job_map_parse_text(jm, text, name, err);
	free(text);
	return rc;
}

int job_map_parse(struct job_map *jm, const char *path, struct fab_error *err)
{
	return job_map_parse_named(jm, path, path, err);
}

/* Length of the hostname a node description stands for under the match rule. */
size_t job_map_host_len(const char *desc, enum job_host_match match)
{
	if (match == JOB_MATCH_DESCRIPTION)
		return strlen(desc);
	return strcspn(desc, " \t");
}

struct host_index {
	const struct fabric *f;
	const struct node_name_map *names;
	enum job_host_match match;
	struct str_table table; /* hostname -> first CA node with it */
	uint32_t *next_node;	/* [nnodes]: next CA node with the same hostname */
};

/* The name a host is known by: the node-name map's, else the node description. */
static const char *full_name(const struct host_index *hi, uint32_t node)
{
	const char *name = hi->names ? node_name_map_get(hi->names, hi->f->nodes[node].guid) : NULL;

	return name ? name : fabric_node_desc(hi->f, node);
}

static const char *node_name_of(const void *ctx, uint32_t node)
{
	return full_name(ctx, node);
}

static size_t node_len_of(const void *ctx, uint32_t node)
{
	const struct host_index *hi = ctx;

	return job_map_host_len(full_name(hi, node), hi->match);
}

static int host_index_build(struct host_index *hi, const struct fabric *f,
			    enum job_host_match match, const struct node_name_map *names)
{
	uint32_t n;

	hi->f = f;
	hi->names = names;
	hi->match = match;
	hi->next_node = malloc((f->nnodes ? f->nnodes : 1) * sizeof(*hi->next_node));
	if (!hi->next_node || str_table_init(&hi->table, f->nnodes))
		return -1;
	for (n = 0; n < f->nnodes; n++) {
		const char *desc = full_name(hi, n);
		size_t len = job_map_host_len(desc, match);
		uint32_t *slot;

		hi->next_node[n] = FAB_NONE;
		if (f->nodes[n].type == FAB_SWITCH || !len)
			continue;
		slot = str_table_find(&hi->table, desc, len, node_name_of, node_len_of, hi);
		/* Keep nodes of one host in ascending order: append at the chain's end. */
		if (*slot) {
			uint32_t m = *slot - 1;

			sn_assert(m < n);
			while (hi->next_node[m] != FAB_NONE)
				m = hi->next_node[m];
			hi->next_node[m] = n;
		} else {
			*slot = n + 1;
		}
	}
	return 0;
}

static uint32_t host_index_first(const struct host_index *hi, const char *host)
{
	uint32_t *slot =
		str_table_find(&hi->table, host, strlen(host), node_name_of, node_len_of, hi);

	return *slot ? *slot - 1 : FAB_NONE;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorts each node's job list and drops duplicates, compacting the CSR arrays. */
static void compact_node_jobs(struct job_map *jm)
{
	uint32_t n, w = 0, start = 0;

	for (n = 0; n < jm->nnodes; n++) {
		uint32_t end = jm->node_off[n + 1], i, first = w;

		/* CSR offsets never decrease; compacting only moves entries down. */
		sn_assert(start <= end && w <= start);
		qsort(jm->node_jobs + start, end - start, sizeof(uint32_t), cmp_u32);
		for (i = start; i < end; i++)
			if (w == first || jm->node_jobs[w - 1] != jm->node_jobs[i])
				jm->node_jobs[w++] = jm->node_jobs[i];
		jm->node_off[n] = first;
		start = end;
	}
	jm->node_off[jm->nnodes] = w;
}

static void count_job_ports(struct job_map *jm, const struct fabric *f)
{
	uint32_t n, p, i;

	for (n = 0; n < f->nnodes; n++) {
		const struct fab_node *node = &f->nodes[n];
		uint32_t lid_ports = 0;

		if (node->type == FAB_SWITCH || jm->node_off[n] == jm->node_off[n + 1])
			continue;
		for (p = 1; p <= node->nports; p++)
			if (f->ports[node->first_port + p].base_lid)
				lid_ports++;
		for (i = jm->node_off[n]; i < jm->node_off[n + 1]; i++) {
			sn_assert(jm->node_jobs[i] < jm->njobs);
			jm->job_ports[jm->node_jobs[i]] += lid_ports;
		}
	}
}

static const char *entry_host_of(const void *ctx, uint32_t entry)
{
	const struct job_map *jm = ctx;

	sn_assert(entry < jm->nentries && jm->entries[entry].host < jm->strings_len);
	return jm->strings + jm->entries[entry].host;
}

static size_t entry_host_len_of(const void *ctx, uint32_t entry)
{
	return strlen(entry_host_of(ctx, entry));
}

/* Counts distinct unknown hostnames, remembering the first for the log line. */
static void note_unknown(struct job_map *jm, struct str_table *unknown, uint32_t entry)
{
	const char *host = entry_host_of(jm, entry);
	uint32_t *slot =
		str_table_find(unknown, host, strlen(host), entry_host_of, entry_host_len_of, jm);

	if (*slot)
		return;
	*slot = entry + 1;
	if (!jm->unknown_hosts++)
		snprintf(jm->first_unknown, sizeof(jm->first_unknown), "%s", host);
}

/*
 * A hostname whose first two HCAs carry the very same name: the names are firmware defaults,
 * not hosts.  Counted once per hostname (its first node is marked), the first one kept.
 */
static void note_ambiguous(struct job_map *jm, const struct host_index *hi, uint32_t entry,
			   uint32_t node, uint8_t *noted)
{
	uint32_t second = hi->next_node[node], count = 0, m;

	if (second == FAB_NONE || noted[node] || strcmp(full_name(hi, node), full_name(hi, second)))
		return;
	noted[node] = 1;
	for (m = node; m != FAB_NONE; m = hi->next_node[m])
		count++;
	sn_assert(count >= 2);
	if (jm->ambiguous_hosts++)
		return;
	jm->first_ambiguous_hcas = count;
	snprintf(jm->first_ambiguous, sizeof(jm->first_ambiguous), "%s", entry_host_of(jm, entry));
	snprintf(jm->first_ambiguous_name, sizeof(jm->first_ambiguous_name), "%s",
		 full_name(hi, node));
}

/* Second CSR pass: writes each entry's job into the slots of every node of its host. */
static int place_entries(struct job_map *jm, const struct host_index *hi)
{
	uint32_t *cursor = malloc(((size_t)jm->nnodes + 1) * sizeof(*cursor));
	uint32_t e;

	if (!cursor)
		return -1;
	memcpy(cursor, jm->node_off, (size_t)jm->nnodes * sizeof(*cursor));
	for (e = 0; e < jm->nentries; e++) {
		uint32_t node = host_index_first(hi, entry_host_of(jm, e));

		for (; node != FAB_NONE; node = hi->next_node[node]) {
			/* The first pass counted exactly these slots: no row overflows. */
			sn_assert(node < jm->nnodes && cursor[node] < jm->node_off[node + 1]);
			jm->node_jobs[cursor[node]++] = jm->entries[e].job;
		}
	}
	free(cursor);
	return 0;
}

int job_map_bind(struct job_map *jm, const struct fabric *f, enum job_host_match match,
		 const struct node_name_map *names, struct fab_error *err)
{
	struct host_index hi = { 0 };
	struct str_table unknown = { 0 };
	uint32_t e, n, total = 0;
	uint8_t *noted = NULL;
	int rc = -1;

	job_map_unbind(jm);
	jm->nnodes = f->nnodes;
	jm->node_off = calloc((size_t)f->nnodes + 1, sizeof(*jm->node_off));
	jm->job_ports = calloc(jm->njobs ? jm->njobs : 1, sizeof(*jm->job_ports));
	noted = calloc(f->nnodes ? f->nnodes : 1, 1);
	if (!jm->node_off || !jm->job_ports || !noted || host_index_build(&hi, f, match, names) ||
	    str_table_init(&unknown, jm->nentries))
		goto nomem;

	for (e = 0; e < jm->nentries; e++) {
		uint32_t node = host_index_first(&hi, entry_host_of(jm, e));

		if (node == FAB_NONE)
			note_unknown(jm, &unknown, e);
		else
			note_ambiguous(jm, &hi, e, node, noted);
		for (; node != FAB_NONE; node = hi.next_node[node]) {
			jm->node_off[node + 1]++;
			total++;
		}
	}
	for (n = 0; n < f->nnodes; n++)
		jm->node_off[n + 1] += jm->node_off[n];
	sn_assert(jm->node_off[f->nnodes] == total);
	jm->node_jobs = malloc((total ? total : 1) * sizeof(*jm->node_jobs));
	if (!jm->node_jobs || place_entries(jm, &hi))
		goto nomem;
	compact_node_jobs(jm);
	count_job_ports(jm, f);
	rc = 0;
	goto out;
nomem:
	fab_error_set(err, "job map: out of memory binding %u entries", jm->nentries);
	job_map_unbind(jm);
out:
	free(noted);
	free(unknown.slot);
	free(hi.table.slot);
	free(hi.next_node);
	return rc;
}

struct host_lookup {
	struct host_index hi;
};

struct host_lookup *host_lookup_new(const struct fabric *f, enum job_host_match match,
				    const struct node_name_map *names)
{
	struct host_lookup *h = calloc(1, sizeof(*h));

	if (h && host_index_build(&h->hi, f, match, names)) {
		host_lookup_free(h);
		return NULL;
	}
	return h;
}

uint32_t host_lookup_first(const struct host_lookup *h, const char *host)
{
	return host_index_first(&h->hi, host);
}

uint32_t host_lookup_next(const struct host_lookup *h, uint32_t node)
{
	sn_assert(node < h->hi.f->nnodes);
	return h->hi.next_node[node];
}

const char *host_lookup_name(const struct host_lookup *h, uint32_t node, size_t *len)
{
	const char *name;

	sn_assert(node < h->hi.f->nnodes);
	*len = 0;
	if (h->hi.f->nodes[node].type == FAB_SWITCH)
		return NULL;
	name = full_name(&h->hi, node);
	*len = job_map_host_len(name, h->hi.match);
	return *len ? name : NULL;
}

void host_lookup_free(struct host_lookup *h)
{
	if (!h)
		return;
	free(h->hi.table.slot);
	free(h->hi.next_node);
	free(h);
}

int job_map_share_job(const struct job_map *jm, uint32_t node_a, uint32_t node_b)
{
	uint32_t na, nb, i = 0, j = 0;
	const uint32_t *a = job_map_node_jobs(jm, node_a, &na);
	const uint32_t *b = job_map_node_jobs(jm, node_b, &nb);

	while (i < na && j < nb) {
		if (a[i] == b[j])
			return 1;
		if (a[i] < b[j])
			i++;
		else
			j++;
	}
	return 0;
}

uint32_t job_map_bound_nodes(const struct job_map *jm)
{
	uint32_t n, count = 0;

	for (n = 0; n < jm->nnodes; n++)
		count += jm->node_off[n + 1] > jm->node_off[n];
	return count;
}
