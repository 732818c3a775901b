/*
 * json.h - JSON for the whole project: the one string writer every JSON output uses, and a
 * minimal pull reader, enough for `squeue --json`: the caller walks the objects and arrays it
 * cares about and skips everything else, so nothing is built in memory but the strings it asks
 * for.  Every value, skipped or not, is checked against RFC 8259, and an error names the input,
 * line and column.
 */
#ifndef SARNUE_JSON_H
#define SARNUE_JSON_H

#include <stddef.h>
#include <stdio.h>

struct fab_error;

/*
 * Writes s as a JSON string literal.  Inline so that sarnue-agent, which links only
 * libsarnue-client and not the core, writes its status file with it too.
 */
static inline void json_write_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(out, "\\u%04x", *s);
		else
			fputc(*s, out);
	}
	fputc('"', out);
}

#define JSON_MAX_DEPTH 128

enum json_type {
	JSON_BAD,
	JSON_OBJECT,
	JSON_ARRAY,
	JSON_STRING,
	JSON_NUMBER,
	JSON_TRUE,
	JSON_FALSE,
	JSON_NULL,
};

struct json {
	const char *text, *name;
	size_t len, pos;
	struct fab_error *err;
};

/* A growable buffer for decoded strings; s is NUL-terminated after json_string(). */
struct json_buf {
	char *s;
	size_t len, cap;
};

void json_init(struct json *j, const char *text, size_t len, const char *name,
	       struct fab_error *err);
void json_buf_free(struct json_buf *b);

/* Sets err to "name: line L, column C: reason" at the current position; returns -1. */
int json_fail(struct json *j, const char *reason);

/* Type of the next value (whitespace skipped); JSON_BAD at the end or on a stray character. */
enum json_type json_peek(struct json *j);

/* Skips one value of any type, checking its syntax. */
int json_skip(struct json *j);

int json_string(struct json *j, struct json_buf *out);
int json_number(struct json *j, double *out);
/* true/false; 1 or 0 in *out. */
int json_bool(struct json *j, int *out);
int json_null(struct json *j);

/*
 * Containers: begin consumes '{' or '['; next returns 1 when another member or element follows
 * (for objects its key is in key and the ':' consumed), 0 after the closing bracket, -1 on error.
 * *index counts members, starting at 0.
 */
int json_object_begin(struct json *j);
int json_object_next(struct json *j, unsigned *index, struct json_buf *key);
int json_array_begin(struct json *j);
int json_array_next(struct json *j, unsigned *index);

/* After the top-level value: only whitespace may follow. */
int json_end(struct json *j);

#endif
