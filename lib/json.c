/*
 * json.c - the pull reader of json.h.  Positions are byte offsets; line and column are counted
 * only when an error is reported.  Skipping recurses at most JSON_MAX_DEPTH levels, so hostile
 * input cannot exhaust the stack.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/assert.h"
#include "lib/error.h"
#include "lib/arena.h"

void json_init(struct json *j, const char *text, size_t len, const char *name,
	       struct fab_error *err)
{
	j->text = text;
	j->len = len;
	j->pos = 0;
	j->name = name;
	j->err = err;
}

void json_buf_free(struct json_buf *b)
{
	free(b->s);
	memset(b, 0, sizeof(*b));
}

int json_fail(struct json *j, const char *reason)
{
	size_t i, line = 1, col = 1;

	sn_assert(j->pos <= j->len);
	for (i = 0; i < j->pos && i < j->len; i++) {
		if (j->text[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	fab_error_set(j->err, "%s: line %zu, column %zu: %s", j->name, line, col, reason);
	return -1;
}

static void skip_ws(struct json *j)
{
	/* No reader ever steps past the end: every advance is bounded by len. */
	sn_assert(j->pos <= j->len);
	while (j->pos < j->len) {
		char c = j->text[j->pos];

		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			break;
		j->pos++;
	}
}

enum json_type json_peek(struct json *j)
{
	skip_ws(j);
	if (j->pos >= j->len)
		return JSON_BAD;
	switch (j->text[j->pos]) {
	case '{':
		return JSON_OBJECT;
	case '[':
		return JSON_ARRAY;
	case '"':
		return JSON_STRING;
	case 't':
		return JSON_TRUE;
	case 'f':
		return JSON_FALSE;
	case 'n':
		return JSON_NULL;
	case '-':
		return JSON_NUMBER;
	default:
		return j->text[j->pos] >= '0' && j->text[j->pos] <= '9' ? JSON_NUMBER : JSON_BAD;
	}
}

static int expect_value(struct json *j, enum json_type want, const char *what)
{
	enum json_type t = json_peek(j);

	if (t == want)
		return 0;
	if (j->pos >= j->len)
		return json_fail(j, "unexpected end of input");
	return json_fail(j, what);
}

static int buf_put(struct json_buf *b, const char *s, size_t n)
{
	if (fab_reserve(&b->s, &b->cap, b->len + n + 1, 64))
		return -1;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	sn_assert(b->len < b->cap);
	b->s[b->len] = '\0';
	return 0;
}

static int hex4(struct json *j, uint32_t *v)
{
	size_t i;

	*v = 0;
	for (i = 0; i < 4; i++) {
		char c = j->pos < j->len ? j->text[j->pos] : 0;
		int d = c >= '0' && c <= '9'   ? c - '0'
			: c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10
					       : -1;

		if (d < 0)
			return json_fail(j, "bad \\u escape");
		*v = *v * 16 + (uint32_t)d;
		j->pos++;
	}
	return 0;
}

static size_t utf8_encode(uint32_t cp, char *out)
{
	/* Surrogates were paired or refused before: only scalar values reach here. */
	sn_assert(cp <= 0x10ffff && (cp < 0xd800 || cp >= 0xe000));
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* "\uXXXX" (after the backslash and 'u'), with a surrogate pair when one follows. */
static int unicode_escape(struct json *j, char *out, size_t *n)
{
	uint32_t cp, lo;

	if (hex4(j, &cp))
		return -1;
	if (cp >= 0xd800 && cp < 0xdc00) {
		if (j->pos + 2 > j->len || j->text[j->pos] != '\\' || j->text[j->pos + 1] != 'u')
			return json_fail(j, "lone surrogate in \\u escape");
		j->pos += 2;
		if (hex4(j, &lo))
			return -1;
		if (lo < 0xdc00 || lo >= 0xe000)
			return json_fail(j, "bad surrogate pair in \\u escape");
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	} else if (cp >= 0xdc00 && cp < 0xe000) {
		return json_fail(j, "lone surrogate in \\u escape");
	}
	*n = utf8_encode(cp, out);
	sn_assert(*n >= 1 && *n <= 4);
	return 0;
}

static int escape(struct json *j, char *out, size_t *n)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *p;

	if (j->pos >= j->len)
		return json_fail(j, "unterminated string");
	if (j->text[j->pos] == 'u') {
		j->pos++;
		return unicode_escape(j, out, n);
	}
	p = memchr(from, j->text[j->pos], sizeof(from) - 1);
	if (!p)
		return json_fail(j, "bad escape in string");
	sn_assert(p >= from && (size_t)(p - from) < sizeof(to) - 1);
	out[0] = to[p - from];
	*n = 1;
	j->pos++;
	return 0;
}

/* Reads a string into out (when not NULL). */
static int read_string(struct json *j, struct json_buf *out)
{
	if (expect_value(j, JSON_STRING, "expected a string"))
		return -1;
	j->pos++;
	if (out) {
		out->len = 0;
		if (buf_put(out, "", 0))
			return json_fail(j, "out of memory");
	}
	for (;;) {
		size_t start = j->pos;
		char enc[4];
		size_t n = 0;

		while (j->pos < j->len && j->text[j->pos] != '"' && j->text[j->pos] != '\\' &&
		       (unsigned char)j->text[j->pos] >= 0x20)
			j->pos++;
		sn_assert(start <= j->pos && j->pos <= j->len);
		if (out && buf_put(out, j->text + start, j->pos - start))
			return json_fail(j, "out of memory");
		if (j->pos >= j->len)
			return json_fail(j, "unterminated string");
		if (j->text[j->pos] == '"') {
			j->pos++;
			return 0;
		}
		if (j->text[j->pos] != '\\')
			return json_fail(j, "control character in string");
		j->pos++;
		if (escape(j, enc, &n))
			return -1;
		sn_assert(n >= 1 && n <= sizeof(enc));
		if (out && buf_put(out, enc, n))
			return json_fail(j, "out of memory");
	}
}

int json_string(struct json *j, struct json_buf *out)
{
	return read_string(j, out);
}

static int digits(struct json *j)
{
	size_t start = j->pos;

	while (j->pos < j->len && j->text[j->pos] >= '0' && j->text[j->pos] <= '9')
		j->pos++;
	return j->pos > start ? 0 : json_fail(j, "expected a digit");
}

int json_number(struct json *j, double *out)
{
	size_t start;
	char tmp[64];

	if (expect_value(j, JSON_NUMBER, "expected a number"))
		return -1;
	start = j->pos;
	if (j->text[j->pos] == '-')
		j->pos++;
	if (j->pos < j->len && j->text[j->pos] == '0')
		j->pos++;
	else if (digits(j))
		return -1;
	if (j->pos < j->len && j->text[j->pos] == '.') {
		j->pos++;
		if (digits(j))
			return -1;
	}
	if (j->pos < j->len && (j->text[j->pos] == 'e' || j->text[j->pos] == 'E')) {
		j->pos++;
		if (j->pos < j->len && (j->text[j->pos] == '+' || j->text[j->pos] == '-'))
			j->pos++;
		if (digits(j))
			return -1;
	}
	sn_assert(j->pos > start && j->pos <= j->len);
	if (out) {
		size_t n = j->pos - start;

		if (n >= sizeof(tmp)) {
			j->pos = start;
			return json_fail(j, "number too long");
		}
		memcpy(tmp, j->text + start, n);
		tmp[n] = '\0';
		*out = strtod(tmp, NULL);
	}
	return 0;
}

static int literal(struct json *j, const char *word)
{
	size_t n = strlen(word);

	if (j->pos + n > j->len || memcmp(j->text + j->pos, word, n))
		return json_fail(j, "invalid literal");
	j->pos += n;
	sn_assert(j->pos <= j->len);
	return 0;
}

int json_bool(struct json *j, int *out)
{
	enum json_type t = json_peek(j);

	if (t != JSON_TRUE && t != JSON_FALSE)
		return expect_value(j, JSON_TRUE, "expected true or false");
	*out = t == JSON_TRUE;
	return literal(j, *out ? "true" : "false");
}

int json_null(struct json *j)
{
	if (expect_value(j, JSON_NULL, "expected null"))
		return -1;
	return literal(j, "null");
}

int json_object_begin(struct json *j)
{
	if (expect_value(j, JSON_OBJECT, "expected an object"))
		return -1;
	j->pos++;
	return 0;
}

int json_array_begin(struct json *j)
{
	if (expect_value(j, JSON_ARRAY, "expected an array"))
		return -1;
	j->pos++;
	return 0;
}

/* Before the next member or element: the closing bracket (returns 0), or ',' unless first. */
static int container_next(struct json *j, unsigned *index, char close)
{
	skip_ws(j);
	if (j->pos >= j->len)
		return json_fail(j, "unexpected end of input");
	if (j->text[j->pos] == close) {
		j->pos++;
		return 0;
	}
	if (*index > 0) {
		if (j->text[j->pos] != ',')
			return json_fail(j, close == '}' ? "expected ',' or '}'"
							 : "expected ',' or ']'");
		j->pos++;
	}
	(*index)++;
	sn_assert(*index > 0);
	return 1;
}

int json_object_next(struct json *j, unsigned *index, struct json_buf *key)
{
	int more = container_next(j, index, '}');

	if (more <= 0)
		return more;
	if (read_string(j, key))
		return -1;
	skip_ws(j);
	if (j->pos >= j->len || j->text[j->pos] != ':')
		return json_fail(j, "expected ':' after the member name");
	j->pos++;
	return 1;
}

int json_array_next(struct json *j, unsigned *index)
{
	return container_next(j, index, ']');
}

static int skip_depth(struct json *j, unsigned depth)
{
	unsigned i = 0;
	int more, b;

	if (depth > JSON_MAX_DEPTH)
		return json_fail(j, "nested too deeply");
	switch (json_peek(j)) {
	case JSON_OBJECT:
		j->pos++;
		while ((more = json_object_next(j, &i, NULL)) > 0)
			if (skip_depth(j, depth + 1))
				return -1;
		return more;
	case JSON_ARRAY:
		j->pos++;
		while ((more = json_array_next(j, &i)) > 0)
			if (skip_depth(j, depth + 1))
				return -1;
		return more;
	case JSON_STRING:
		return read_string(j, NULL);
	case JSON_NUMBER:
		return json_number(j, NULL);
	case JSON_TRUE:
	case JSON_FALSE:
		return json_bool(j, &b);
	case JSON_NULL:
		return json_null(j);
	default:
		return json_fail(j, j->pos >= j->len ? "unexpected end of input"
						     : "unexpected character");
	}
}

int json_skip(struct json *j)
{
	return skip_depth(j, 0);
}

int json_end(struct json *j)
{
	skip_ws(j);
	return j->pos == j->len ? 0 : json_fail(j, "unexpected text after the JSON value");
}
