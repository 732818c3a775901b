/*
 * logline.c - cuts long log messages into tagged lines of bounded width (logline.h).
 */
#include <stdio.h>
#include <string.h>

#include "lib/logline.h"

#define LOGLINE_TAG_MAX 40

size_t logline_tag(const char *msg)
{
	const char *colon = strstr(msg, ": ");

	if (!colon || colon - msg + 2 > LOGLINE_TAG_MAX || memchr(msg, ';', (size_t)(colon - msg)))
		return 0;
	return (size_t)(colon - msg) + 2;
}

/*
 * Where to cut s, longer than width: after the last separator past a quarter of the width, the
 * strongest kind first; the blank after it goes (*skip 1).  No separator: a hard cut.
 */
static size_t cut_at(const char *s, size_t width, size_t *skip)
{
	static const char *const seps[] = { "; ", ", ", " " };
	unsigned i;
	size_t k, n;

	for (i = 0; i < sizeof(seps) / sizeof(seps[0]); i++) {
		n = strlen(seps[i]);
		for (k = width - n + 1; k > width / 4; k--) {
			if (!strncmp(s + k, seps[i], n)) {
				*skip = 1;
				return k + n - 1;
			}
		}
	}
	*skip = 0;
	return width;
}

void logline_split(const char *msg, size_t width, logline_emit_fn *emit, void *ctx)
{
	size_t tag = logline_tag(msg), len = strlen(msg), room = width, cut, skip;
	const char *s = msg;

	while (len > room) {
		cut = cut_at(s, room, &skip);
		emit(ctx, s == msg ? NULL : msg, s == msg ? 0 : tag, s, cut);
		s += cut + skip;
		len -= cut + skip;
		room = width - tag - 1;
	}
	if (s == msg || len)
		emit(ctx, s == msg ? NULL : msg, s == msg ? 0 : tag, s, len);
}

void logline_format(char *buf, size_t size, const char *tag, size_t tag_len, const char *text,
		    size_t text_len)
{
	if (tag)
		snprintf(buf, size, "%.*s %.*s", (int)tag_len, tag, (int)text_len, text);
	else
		snprintf(buf, size, "%.*s", (int)text_len, text);
}
