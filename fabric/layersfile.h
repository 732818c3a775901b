/*
 * swlayers.h - the switch layers file of the nue_layers= option: sar-nue's layer for the
 * destinations at each named switch (format in swlayers.c).
 */
#ifndef SARNUE_SWLAYERS_H
#define SARNUE_SWLAYERS_H

#include "fabric/fabric.h"

#define SWLAYER_NONE 0xff /* a switch the file does not name */

/*
 * Fills sw_layer[f->nswitches] with the layer (0..k-1) the file gives each switch, SWLAYER_NONE
 * for the others; *unknown counts the file's switches the fabric lacks.  Returns 0, or -1 with
 * err naming the file and the line (sw_layer then names no switch).
 */
int switch_layers_load(const struct fabric *f, const char *path, unsigned k, uint8_t *sw_layer,
		       uint32_t *unknown, struct fab_error *err);

#endif
