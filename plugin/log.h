/*
 * log.h - the plugin's lines in OpenSM's log, each prefixed "sarnue: ".  Every plugin file logs
 * through here; plog() takes the plugin's context, plog_osm() serves code that has only
 * OpenSM's handle (the reports in notify.c).
 */
#ifndef SARNUE_PLUGIN_LOG_H
#define SARNUE_PLUGIN_LOG_H

#include <opensm/osm_config.h> /* first: see context.h */
#include <opensm/osm_opensm.h>

struct sarnue_plugin;

void plog(struct sarnue_plugin *p, osm_log_level_t level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void plog_osm(osm_opensm_t *osm, osm_log_level_t level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
