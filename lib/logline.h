/*
 * logline.h - cuts a long log message into lines an operator can read: at most a given width,
 * cut at the message's own "; " (then ", ", then blank) boundaries.  Each further line repeats
 * the message's tag ("WRN sar-nue: ") so that a grep for the tag finds every part, followed by
 * one more blank that marks it as a continuation: "WRN sar-nue:  rest".  A line is cut after
 * a ';' or ',' and the blank after it dropped, so joining a continuation to the line before it
 * with one blank gives the message back.  The plugin's
 * log (plugin/log.c) writes through it; the cutting itself needs no OpenSM and is tested alone.
 */
#ifndef SARNUE_LIB_LOGLINE_H
#define SARNUE_LIB_LOGLINE_H

#include <stddef.h>

#define LOGLINE_WIDTH 160

/* Length of msg's tag: up to and including its first ": " when that comes within 40 bytes. */
size_t logline_tag(const char *msg);

/*
 * A line of a message: its first line is text alone (tag NULL); a further line is the tag (msg's
 * first tag_len bytes, maybe none), a blank, then text.
 */
typedef void logline_emit_fn(void *ctx, const char *tag, size_t tag_len, const char *text,
			     size_t text_len);

/*
 * Calls emit once per line of msg, each at most width bytes long (a further one counts its tag
 * and blank).  width must be at least 80.
 */
void logline_split(const char *msg, size_t width, logline_emit_fn *emit, void *ctx);

/* The line to print for what emit got, into buf (NUL-terminated, cut to size). */
void logline_format(char *buf, size_t size, const char *tag, size_t tag_len, const char *text,
		    size_t text_len);

#endif
