/*
 * traffic.c - reading a traffic matrix and binding it to the fabric's nodes (traffic.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/traffic.h"
#include "lib/arena.h"
#include "lib/assert.h"
#include "lib/input.h"
#include "lib/numbers.h"
#include "lib/scan.h"

void traffic_init(struct traffic *t)
{
	memset(t, 0, sizeof(*t));
}

static void traffic_unbind(struct traffic *t)
{
	free(t->off);
	free(t->src_node);
	free(t->weight);
	t->off = t->src_node = NULL;
	t->weight = NULL;
	t->nnodes = t->bound_pairs = t->unknown_hosts = 0;
	t->first_unknown[0] = '\0';
}

void traffic_free(struct traffic *t)
{
	traffic_unbind(t);
	free(t->strings);
	free(t->pairs);
	traffic_init(t);
}

static int add_string(struct traffic *t, const char *s, size_t len, uint32_t *off)
{
	return fab_strings_put(&t->strings, &t->strings_len, &t->strings_cap, s, len, off);
}

int traffic_add(struct traffic *t, const char *src, size_t src_len, const char *dst, size_t dst_len,
		uint64_t bytes, uint32_t line, const char *name, struct fab_error *err)
{
	struct traffic_pair *pr;

	if ((src_len == dst_len && !memcmp(src, dst, src_len)) || !bytes)
		return 0;
	if (t->total_bytes + bytes < t->total_bytes) {
		fab_error_set(err, "%s:%u: the bytes add up beyond 2^64", name, line);
		return -1;
	}
	if (fab_grow((void **)&t->pairs, &t->pairs_cap, t->npairs + 1, sizeof(*t->pairs), 256)) {
		fab_error_set(err, "%s:%u: out of memory", name, line);
		return -1;
	}
	pr = &t->pairs[t->npairs];
	memset(pr, 0, sizeof(*pr));
	if (add_string(t, src, src_len, &pr->src) || add_string(t, dst, dst_len, &pr->dst)) {
		fab_error_set(err, "%s:%u: out of memory", name, line);
		return -1;
	}
	pr->bytes = bytes;
	pr->line = line;
	t->total_bytes += bytes;
	t->npairs++;
	return 0;
}

static int parse_line(struct traffic *t, char *line, const char *name, uint32_t lineno,
		      struct fab_error *err)
{
	char *word[4], bytes[24];
	size_t len[4];
	unsigned n = fab_split_words(line, word, len, 4);
	uint64_t v;

	if (n == 0)
		return 0;
	if (n != 3) {
		fab_error_set(err, "%s:%u: expected 'SRC DST BYTES', got %u word(s)", name, lineno,
			      n);
		return -1;
	}
	if (len[0] > JOB_MAP_MAX_NAME || len[1] > JOB_MAP_MAX_NAME) {
		fab_error_set(err, "%s:%u: hostname longer than %d characters", name, lineno,
			      JOB_MAP_MAX_NAME);
		return -1;
	}
	snprintf(bytes, sizeof(bytes), "%.*s", (int)len[2], word[2]);
	if (len[2] >= sizeof(bytes) || num_parse_u64(bytes, UINT64_MAX / 2, &v)) {
		fab_error_set(err, "%s:%u: BYTES '%.*s': expected decimal digits", name, lineno,
			      (int)(len[2] > 40 ? 40 : len[2]), word[2]);
		return -1;
	}
	return traffic_add(t, word[0], len[0], word[1], len[1], v, lineno, name, err);
}

int traffic_parse_text(struct traffic *t, const char *text, const char *name, struct fab_error *err)
{
	char *copy = strdup(text), *line, *next;
	uint32_t lineno = 0;
	int rc = -1;

	traffic_free(t);
	if (!copy) {
		fab_error_set(err, "%s: out of memory", name);
		return -1;
	}
	for (line = copy; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (parse_line(t, line, name, ++lineno, err))
			goto out;
	}
	rc = 0;
out:
	if (rc)
		traffic_free(t);
	free(copy);
	return rc;
}

int traffic_parse(struct traffic *t, const char *path, struct fab_error *err)
{
	char *text = NULL;
	size_t len = 0;
	int rc;

	traffic_free(t);
	if (fab_read_text_named(path, path, FAB_LIMIT_LIST, &text, &len, err))
		return -1;
	rc = traffic_parse_text(t, text, path, err);
	free(text);
	return rc;
}

static uint32_t host_count(const struct host_lookup *h, uint32_t first)
{
	uint32_t n = 0;

	for (; first != FAB_NONE; first = host_lookup_next(h, first))
		n++;
	return n;
}

static void note_unknown(struct traffic *t, const char *host)
{
	/* Distinct names would need a table; consecutive repeats are the common case. */
	if (!strcmp(t->first_unknown, host))
		return;
	if (!t->unknown_hosts++)
		snprintf(t->first_unknown, sizeof(t->first_unknown), "%s", host);
}

struct node_demand {
	uint32_t dst, src;
	double bytes;
};

static int cmp_demand(const void *a, const void *b)
{
	const struct node_demand *x = a, *y = b;

	if (x->dst != y->dst)
		return x->dst < y->dst ? -1 : 1;
	return x->src < y->src ? -1 : x->src > y->src;
}

/* Every bound pair's bytes spread over the node pairs of its hosts, into *out (*n of them). */
static int node_demands(struct traffic *t, const struct host_lookup *h, struct node_demand **out,
			size_t *n)
{
	struct node_demand *d = NULL;
	size_t count = 0, cap = 0;
	uint32_t i, a, b;

	for (i = 0; i < t->npairs; i++) {
		struct traffic_pair *pr = &t->pairs[i];
		uint32_t sa = host_lookup_first(h, t->strings + pr->src);
		uint32_t sb = host_lookup_first(h, t->strings + pr->dst);
		double share;

		if (sa == FAB_NONE || sb == FAB_NONE) {
			note_unknown(t, t->strings + (sa == FAB_NONE ? pr->src : pr->dst));
			continue;
		}
		pr->bound = 1;
		t->bound_pairs++;
		share = (double)pr->bytes / ((double)host_count(h, sa) * host_count(h, sb));
		for (a = sa; a != FAB_NONE; a = host_lookup_next(h, a))
			for (b = sb; b != FAB_NONE; b = host_lookup_next(h, b)) {
				if (count == cap) {
					size_t ncap = cap ? 2 * cap : 256;
					void *p = realloc(d, ncap * sizeof(*d));

					if (!p) {
						free(d);
						return -1;
					}
					d = p;
					cap = ncap;
				}
				d[count].dst = b;
				d[count].src = a;
				d[count].bytes = share;
				count++;
			}
	}
	*out = d;
	*n = count;
	return 0;
}

/* Sorted demands into the CSR, repeats of a node pair added up, weights in TRAFFIC_UNITs. */
static int fill_rows(struct traffic *t, struct node_demand *d, size_t n)
{
	double sum = 0, mean;
	size_t i, w = 0;

	if (n)
		qsort(d, n, sizeof(*d), cmp_demand);
	for (i = 0; i < n; i++) {
		if (w && d[w - 1].dst == d[i].dst && d[w - 1].src == d[i].src)
			d[w - 1].bytes += d[i].bytes;
		else
			d[w++] = d[i];
	}
	for (i = 0; i < w; i++)
		sum += d[i].bytes;
	mean = w ? sum / (double)w : 1.0;
	t->src_node = malloc(sizeof(*t->src_node) * (w + 1));
	t->weight = malloc(sizeof(*t->weight) * (w + 1));
	if (!t->src_node || !t->weight)
		return -1;
	for (i = 0; i < w; i++) {
		double x = TRAFFIC_UNIT * d[i].bytes / mean + 0.5;

		t->off[d[i].dst + 1]++;
		t->src_node[i] = d[i].src;
		t->weight[i] = x < 1.0 ? 1 : x > 1e15 ? (uint64_t)1e15 : (uint64_t)x;
	}
	for (i = 0; i < t->nnodes; i++)
		t->off[i + 1] += t->off[i];
	sn_assert(t->off[t->nnodes] == w);
	return 0;
}

int traffic_bind(struct traffic *t, const struct fabric *f, enum job_host_match match,
		 const struct node_name_map *names, struct fab_error *err)
{
	struct host_lookup *h = host_lookup_new(f, match, names);
	struct node_demand *d = NULL;
	size_t n = 0;
	uint32_t i;
	int rc = -1;

	traffic_unbind(t);
	for (i = 0; i < t->npairs; i++)
		t->pairs[i].bound = 0;
	t->nnodes = f->nnodes;
	t->off = calloc((size_t)f->nnodes + 1, sizeof(*t->off));
	if (!h || !t->off || node_demands(t, h, &d, &n) || fill_rows(t, d, n)) {
		fab_error_set(err, "traffic matrix: out of memory binding %u pairs", t->npairs);
		traffic_unbind(t);
		goto out;
	}
	rc = 0;
out:
	free(d);
	host_lookup_free(h);
	return rc;
}

uint64_t traffic_weight(const struct traffic *t, uint32_t src_node, uint32_t dst_node)
{
	uint32_t lo, hi;

	if (dst_node >= t->nnodes)
		return 0;
	lo = t->off[dst_node];
	hi = t->off[dst_node + 1];
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->src_node[mid] < src_node)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->off[dst_node + 1] && t->src_node[lo] == src_node ? t->weight[lo] : 0;
}

int traffic_hosts_text(const struct traffic *t, char **text, size_t *len)
{
	FILE *out = open_memstream(text, len);
	uint32_t i;

	if (!out)
		return -1;
	for (i = 0; i < t->npairs; i++)
		if (t->pairs[i].bound)
			fprintf(out, "%s traffic\n%s traffic\n", t->strings + t->pairs[i].src,
				t->strings + t->pairs[i].dst);
	return fclose(out) ? -1 : 0;
}
