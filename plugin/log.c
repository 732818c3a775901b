/*
 * log.c - writes the plugin's messages to OpenSM's log (log.h).  Messages are formatted here
 * first, then cut into "sarnue: " lines of readable width (lib/logline.h), whatever the
 * caller's format.
 */
#include <stdarg.h>
#include <stdio.h>

#include <opensm/osm_config.h> /* first: see context.h */

#include "lib/logline.h"
#include "plugin/context.h"
#include "plugin/log.h"

struct log_target {
	osm_log_t *log;
	osm_log_level_t level;
};

static void emit_line(void *ctx, const char *tag, size_t tag_len, const char *text, size_t text_len)
{
	struct log_target *t = ctx;
	char line[LOGLINE_WIDTH + 8];

	logline_format(line, sizeof(line), tag, tag_len, text, text_len);
	osm_log(t->log, t->level, "sarnue: %s\n", line);
}

static void vlog_osm(osm_opensm_t *osm, osm_log_level_t level, const char *fmt, va_list ap)
{
	struct log_target t = { &osm->log, level };
	char buf[2048];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	logline_split(buf, LOGLINE_WIDTH, emit_line, &t);
}

void plog(struct sarnue_plugin *p, osm_log_level_t level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog_osm(p->osm, level, fmt, ap);
	va_end(ap);
}

void plog_osm(osm_opensm_t *osm, osm_log_level_t level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog_osm(osm, level, fmt, ap);
	va_end(ap);
}
