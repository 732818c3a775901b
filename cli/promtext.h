/*
 * promtext.h - the plugin's status as Prometheus text (`sarnue ctl metrics`), for the
 * node_exporter textfile collector or any scraper that reads the exposition format.
 */
#ifndef SARNUE_CLI_PROMTEXT_H
#define SARNUE_CLI_PROMTEXT_H

#include <stdio.h>

#include "lib/error.h"

/*
 * Writes the status JSON (the reply of the socket's `status`) as metrics named sarnue_*, with
 * sarnue_up 1 first.  0, or -1 with err naming what did not parse (nothing useful written).
 */
int prom_write_status(const char *json, FILE *out, struct fab_error *err);

/* What a scrape shows when the plugin cannot be reached. */
void prom_write_down(FILE *out);

#endif
