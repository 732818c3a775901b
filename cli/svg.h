/*
 * svg.h - `sarnue check --svg`: one self-contained SVG picture of per-channel loads on the
 * switch-to-switch channels (EFI, or effective EFI with a job map): a switch-by-switch heat map
 * of the directed channels, and the histogram of the same loads.
 */
#ifndef SARNUE_SVG_H
#define SARNUE_SVG_H

#include "fabric/fabric.h"
#include "check/metrics.h"

/*
 * load[i] belongs to the channel leaving port f->sw_adj_port[i]; dist summarises load.  title
 * names the quantity.  Returns 0, or -1 with err naming path and the reason.
 */
int svg_write_loads(const char *path, const struct fabric *f, const uint64_t *load,
		    const struct metrics_dist *dist, const char *title, struct fab_error *err);

#endif
