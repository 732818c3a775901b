/*
 * hostlist.c - expansion of Slurm hostlist expressions (see hostlist.h).  One expression is
 * parsed into segments (literal text or a bracket group of ranges) per name, then the names are
 * generated like an odometer over the groups.  Everything is checked before the first name is
 * appended, so a malformed expression leaves the list untouched.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hostlist.h"
#include "lib/arena.h"

#define MAX_DIGITS 9 /* numbers below 10^9 fit in 32 bits with room for HI + 1 */

struct range {
	uint32_t lo, hi;
	int width;
};

/* A name being parsed: segments in order; a group is ranges[first .. first + count). */
struct segment {
	const char *text; /* literal text, or NULL for a group */
	size_t text_len;
	uint32_t first, count;
};

struct parse {
	const char *expr, *what;
	size_t len, pos;
	struct range *ranges;
	struct segment *segs;
	uint32_t *scratch; /* 3 * (len + 1): odometer state of generate() */
	uint32_t nranges, nsegs;
	struct fab_error *err;
};

void hostlist_init(struct hostlist *hl)
{
	memset(hl, 0, sizeof(*hl));
}

void hostlist_free(struct hostlist *hl)
{
	free(hl->buf);
	free(hl->off);
	hostlist_init(hl);
}

void hostlist_clear(struct hostlist *hl)
{
	hl->len = 0;
	hl->n = 0;
}

static int fail(struct parse *p, size_t pos, const char *reason)
{
	fab_error_set(p->err, "%s: column %zu: %s", p->what, pos + 1, reason);
	return -1;
}

static int is_name_char(char c)
{
	return c > ' ' && c != '[' && c != ']' && c != ',' && c != 0x7f;
}

/* A decimal number at p->pos: value and digit count. */
static int parse_number(struct parse *p, uint32_t *value, int *width)
{
	size_t start = p->pos;
	uint32_t v = 0;

	while (p->pos < p->len && p->expr[p->pos] >= '0' && p->expr[p->pos] <= '9') {
		if (p->pos - start >= MAX_DIGITS)
			return fail(p, start, "number too long");
		v = v * 10 + (uint32_t)(p->expr[p->pos] - '0');
		p->pos++;
	}
	if (p->pos == start) {
		if (p->pos >= p->len)
			return fail(p, p->pos, "unexpected end inside '[...]'");
		if (p->expr[p->pos] == '[')
			return fail(p, p->pos, "nested '[' (brackets do not nest)");
		return fail(p, p->pos, "expected a number");
	}
	*value = v;
	*width = (int)(p->pos - start);
	return 0;
}

/* "[LO-HI,N,...]" at p->pos (on the '['): ranges appended, a group segment added. */
static int parse_group(struct parse *p)
{
	size_t open = p->pos++;
	struct segment *s = &p->segs[p->nsegs++];

	s->text = NULL;
	s->first = p->nranges;
	s->count = 0;
	for (;;) {
		struct range *r = &p->ranges[p->nranges];
		size_t at = p->pos;
		int hi_width;

		if (parse_number(p, &r->lo, &r->width))
			return -1;
		r->hi = r->lo;
		if (p->pos < p->len && p->expr[p->pos] == '-') {
			p->pos++;
			if (parse_number(p, &r->hi, &hi_width))
				return -1;
			if (r->hi < r->lo)
				return fail(p, at, "range ends below its start");
		}
		p->nranges++;
		s->count++;
		if (p->pos >= p->len)
			return fail(p, open, "'[' without ']'");
		if (p->expr[p->pos] == ']') {
			p->pos++;
			return 0;
		}
		if (p->expr[p->pos] != ',')
			return fail(p, p->pos,
				    p->expr[p->pos] == '[' ? "nested '[' (brackets do not nest)"
							   : "expected ',', '-' or ']'");
		p->pos++;
	}
}

/* One name (up to a top-level ',' or the end) into segments. */
static int parse_name(struct parse *p)
{
	size_t start = p->pos;

	p->nsegs = 0;
	p->nranges = 0;
	while (p->pos < p->len && p->expr[p->pos] != ',') {
		char c = p->expr[p->pos];

		if (c == '[') {
			if (parse_group(p))
				return -1;
		} else if (c == ']') {
			return fail(p, p->pos, "']' without '['");
		} else if (is_name_char(c)) {
			struct segment *s = &p->segs[p->nsegs++];

			s->text = p->expr + p->pos;
			while (p->pos < p->len && is_name_char(p->expr[p->pos]))
				p->pos++;
			s->text_len = (size_t)(p->expr + p->pos - s->text);
		} else {
			return fail(p, p->pos, "invalid character in host name");
		}
	}
	if (p->pos == start)
		return fail(p, p->pos, "empty host name");
	return 0;
}

/* Hosts a name expands to, saturating above HOSTLIST_MAX_HOSTS. */
static uint64_t name_count(const struct parse *p)
{
	uint64_t total = 1;
	uint32_t i, j;

	for (i = 0; i < p->nsegs; i++) {
		uint64_t n = 0;

		if (p->segs[i].text)
			continue;
		for (j = 0; j < p->segs[i].count; j++) {
			const struct range *r = &p->ranges[p->segs[i].first + j];

			n += (uint64_t)r->hi - r->lo + 1;
		}
		total *= n;
		if (total > HOSTLIST_MAX_HOSTS)
			return (uint64_t)HOSTLIST_MAX_HOSTS + 1;
	}
	return total;
}

static int reserve(struct hostlist *hl, size_t bytes, uint32_t names)
{
	if (fab_reserve(&hl->buf, &hl->cap, hl->len + bytes, 256))
		return -1;
	return fab_grow((void **)&hl->off, &hl->ncap, hl->n + names, sizeof(*hl->off), 16);
}

int hostlist_add(struct hostlist *hl, const char *name, size_t len)
{
	if (reserve(hl, len + 1, 1))
		return -1;
	hl->off[hl->n++] = (uint32_t)hl->len;
	memcpy(hl->buf + hl->len, name, len);
	hl->buf[hl->len + len] = '\0';
	hl->len += len + 1;
	return 0;
}

int hostlist_copy(struct hostlist *dst, const struct hostlist *src)
{
	uint32_t i;

	hostlist_clear(dst);
	if (reserve(dst, src->len, src->n))
		return -1;
	memcpy(dst->buf, src->buf, src->len);
	dst->len = src->len;
	for (i = 0; i < src->n; i++)
		dst->off[i] = src->off[i];
	dst->n = src->n;
	return 0;
}

/* Appends one name for the current odometer position: value[g] for each group g. */
static int emit(struct hostlist *hl, const struct parse *p, const uint32_t *value,
		const uint32_t *range_of)
{
	char digits[16];
	uint32_t i, g = 0;
	size_t need = 1;

	for (i = 0; i < p->nsegs; i++)
		need += p->segs[i].text ? p->segs[i].text_len : 12;
	if (reserve(hl, need, 1))
		return -1;
	hl->off[hl->n++] = (uint32_t)hl->len;
	for (i = 0; i < p->nsegs; i++) {
		const struct segment *s = &p->segs[i];
		int n;

		if (s->text) {
			memcpy(hl->buf + hl->len, s->text, s->text_len);
			hl->len += s->text_len;
			continue;
		}
		n = snprintf(digits, sizeof(digits), "%0*u", p->ranges[range_of[g]].width,
			     value[g]);
		memcpy(hl->buf + hl->len, digits, (size_t)n);
		hl->len += (size_t)n;
		g++;
	}
	hl->buf[hl->len++] = '\0';
	return 0;
}

/* Every combination of the groups' values, last group fastest. */
static int generate(struct hostlist *hl, const struct parse *p)
{
	uint32_t *group_seg = p->scratch, *value = group_seg + p->len + 1;
	uint32_t *range_of = value + p->len + 1;
	uint32_t ngroups = 0, i;

	for (i = 0; i < p->nsegs; i++) {
		if (p->segs[i].text)
			continue;
		group_seg[ngroups] = i;
		range_of[ngroups] = p->segs[i].first;
		value[ngroups] = p->ranges[p->segs[i].first].lo;
		ngroups++;
	}
	for (;;) {
		int g;

		if (emit(hl, p, value, range_of))
			return -1;
		for (g = (int)ngroups - 1; g >= 0; g--) {
			const struct segment *s = &p->segs[group_seg[g]];

			if (value[g] < p->ranges[range_of[g]].hi) {
				value[g]++;
				break;
			}
			if (range_of[g] + 1 < s->first + s->count) {
				range_of[g]++;
				value[g] = p->ranges[range_of[g]].lo;
				break;
			}
			range_of[g] = s->first;
			value[g] = p->ranges[s->first].lo;
		}
		if (g < 0)
			return 0;
	}
}

/* The scratch arrays of one parse: a name has at most len segments and len ranges. */
static int parse_alloc(struct parse *p)
{
	p->ranges = malloc((p->len + 1) * sizeof(*p->ranges));
	p->segs = malloc((p->len + 1) * sizeof(*p->segs));
	p->scratch = malloc(3 * (p->len + 1) * sizeof(*p->scratch));
	if (p->ranges && p->segs && p->scratch)
		return 0;
	fab_error_set(p->err, "%s: out of memory", p->what);
	return -1;
}

static void parse_free(struct parse *p)
{
	free(p->ranges);
	free(p->segs);
	free(p->scratch);
}

/* First pass: checks the whole expression; its host count, at most max + 1, in *total. */
static int check_all(struct parse *p, uint32_t max, uint64_t *total)
{
	*total = 0;
	if (!p->len)
		return fail(p, 0, "empty host list");
	for (p->pos = 0;; p->pos++) {
		if (parse_name(p))
			return -1;
		*total += name_count(p);
		if (*total > max) {
			fab_error_set(p->err, "%s: expands to more than %u hosts", p->what, max);
			return -1;
		}
		if (p->pos >= p->len)
			return 0;
	}
}

int hostlist_count(const char *expr, size_t len, const char *what, uint32_t *count,
		   struct fab_error *err)
{
	struct parse p = { .expr = expr, .what = what, .len = len, .err = err };
	uint64_t total = 0;
	int ret = -1;

	if (!parse_alloc(&p) && !check_all(&p, HOSTLIST_MAX_HOSTS, &total)) {
		*count = (uint32_t)total;
		ret = 0;
	}
	parse_free(&p);
	return ret;
}

int hostlist_expand(struct hostlist *hl, const char *expr, size_t len, const char *what,
		    struct fab_error *err)
{
	struct parse p = { .expr = expr, .what = what, .len = len, .err = err };
	size_t old_len = hl->len;
	uint32_t old_n = hl->n;
	uint64_t total;
	int ret = -1;

	if (parse_alloc(&p) || check_all(&p, HOSTLIST_MAX_HOSTS, &total))
		goto out;
	for (p.pos = 0;; p.pos++) {
		parse_name(&p);
		if (generate(hl, &p)) {
			fab_error_set(err, "%s: out of memory", what);
			hl->len = old_len;
			hl->n = old_n;
			goto out;
		}
		if (p.pos >= len)
			break;
	}
	ret = 0;
out:
	parse_free(&p);
	return ret;
}
