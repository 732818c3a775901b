/*
 * log.c - writes the plugin's messages to OpenSM's log (log.h).  Messages are formatted here
 * first, so that OpenSM's log gets one "sarnue: " line per message whatever the caller's format.
 */
#include <stdarg.h>
#include <stdio.h>

#include <opensm/osm_config.h> /* first: see context.h */

#include "plugin/context.h"
#include "plugin/log.h"

static void vlog_osm(osm_opensm_t *osm, osm_log_level_t level, const char *fmt, va_list ap)
{
	char buf[1024];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	osm_log(&osm->log, level, "sarnue: %s\n", buf);
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
