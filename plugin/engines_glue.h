/*
 * engines_glue.h - sarnue's routing engines as OpenSM routing engines (engines_glue.c).
 */
#ifndef SARNUE_PLUGIN_ENGINES_GLUE_H
#define SARNUE_PLUGIN_ENGINES_GLUE_H

struct sarnue_plugin;

/* Registers sar-updn, sar-nue and sar-dfsssp with OpenSM. */
int engines_register(struct sarnue_plugin *p);

/*
 * Writes the path-SL and SL2VL dumps of the engine that routed last, if due.  Called when
 * OpenSM reports the routing done, so that large dumps do not delay programming the switches.
 */
void engines_write_pending_dumps(struct sarnue_plugin *p);

#endif
