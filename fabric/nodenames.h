/*
 * nodenames.h - node-name maps as infiniband-diags reads them (ibnetdiscover --node-name-map,
 * OpenSM's node_name_map_name): one "GUID \"name\"" per line, '#' comments.
 *
 * Real fabrics often leave every HCA with its firmware's description ("MT25408 ConnectX
 * Mellanox Technologies"), so descriptions cannot name hosts; the operator's node-name map
 * can, and the job map then binds hostnames through it (option node_name_map=PATH).
 */
#ifndef SARNUE_NODENAMES_H
#define SARNUE_NODENAMES_H

#include "fabric/fabric.h"

struct node_name_map {
	struct fab_guid_map by_guid; /* node GUID -> offset of its name in strings */
	char *strings;
	size_t strings_len, strings_cap;
};

void node_name_map_init(struct node_name_map *m);
void node_name_map_free(struct node_name_map *m);
/* Reads path; a malformed line or a GUID named twice is an error naming path:line. */
int node_name_map_load(struct node_name_map *m, const char *path, struct fab_error *err);
/* The name given to a node GUID, or NULL. */
const char *node_name_map_get(const struct node_name_map *m, uint64_t guid);

#endif
