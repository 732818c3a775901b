/*
 * ctl.h - the plugin's control socket (ctl.c, doc/ctl-protocol.md).  ctl_start() logs and
 * returns -1 when it cannot listen; OpenSM then runs on without it.  The ctl_note_* calls feed
 * `status` and `topology` and are no-ops without a socket.
 */
#ifndef SARNUE_PLUGIN_CTL_H
#define SARNUE_PLUGIN_CTL_H

#include <stddef.h>

struct sarnue_plugin;
struct fabric;
struct engine_result;

int ctl_start(struct sarnue_plugin *p);
void ctl_stop(struct sarnue_plugin *p);
void ctl_note_routing_started(struct sarnue_plugin *p);
void ctl_note_tables_programmed(struct sarnue_plugin *p);
void ctl_note_routing(struct sarnue_plugin *p, const char *engine, const struct fabric *f,
		      const struct engine_result *res);
void ctl_note_failure(struct sarnue_plugin *p, const char *engine, const char *msg);
/* Multicast groups that have a tree from the engine now, and groups refused one. */
void ctl_note_mcast(struct sarnue_plugin *p, unsigned trees, unsigned refused);
/*
 * The job map to route with: the one `jobs FILE` installed, else the job_map option; name gets
 * how messages call an installed one (its file name on the client), else "".
 */
void ctl_job_map_path(struct sarnue_plugin *p, char *buf, size_t size, char *name,
		      size_t name_size);

#endif
