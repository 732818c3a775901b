/*
 * traffic.h - a measured traffic matrix: how many bytes each host sent each other host, from a
 * file of "SRC DST BYTES" lines (doc/traffic.md).  Bound to the fabric's CA nodes the way a job
 * map binds its hostnames (fabric/jobmap.h), it gives every pair of nodes a demand weight that
 * the engines' balancing (sar-dfsssp's job phase) uses in place of the job map's uniform
 * intra-job weight, so the heavy pairs get links of their own before the light ones.
 */
#ifndef SARNUE_TRAFFIC_H
#define SARNUE_TRAFFIC_H

#include <stddef.h>
#include <stdint.h>

#include "fabric/fabric.h"
#include "fabric/jobmap.h"
#include "fabric/nodenames.h"

/*
 * Weights are in units of a quarter of the mean demand of the pairs that sent anything: a pair
 * at the mean weighs TRAFFIC_UNIT, one sending 100 times more 100 times as much, and the
 * lightest pair still 1.
 */
#define TRAFFIC_UNIT 4

struct traffic_pair {
	uint32_t src, dst; /* offsets of the hostnames in strings */
	uint64_t bytes;
	uint32_t line;
	int bound; /* both hosts are in the fabric (traffic_bind) */
};

struct traffic {
	/* From the file. */
	char *strings;
	size_t strings_len, strings_cap;
	struct traffic_pair *pairs;
	uint32_t npairs, pairs_cap;
	uint64_t total_bytes;

	/* From traffic_bind(): demand into node n from row[off[n] .. off[n+1]), by source node. */
	uint32_t nnodes;
	uint32_t *off;
	uint32_t *src_node;
	uint64_t *weight;
	uint32_t bound_pairs;	/* file pairs whose both hosts the fabric has */
	uint32_t unknown_hosts; /* distinct hostnames the fabric lacks */
	char first_unknown[JOB_MAP_MAX_NAME + 1];
};

void traffic_init(struct traffic *t);
void traffic_free(struct traffic *t);

/*
 * Reads "SRC DST BYTES" lines ('#' starts a comment; a pair given twice adds up; a host sending
 * to itself is ignored).  BYTES is decimal digits.  Errors name the file and line; t is then
 * empty.
 */
int traffic_parse(struct traffic *t, const char *path, struct fab_error *err);
int traffic_parse_text(struct traffic *t, const char *text, const char *name,
		       struct fab_error *err);

/*
 * Binds the hostnames to f's CA nodes (match, names: as for job maps).  A host with several HCAs
 * shares its bytes evenly over all pairs of them.  Unknown hostnames are counted, not errors.
 */
int traffic_bind(struct traffic *t, const struct fabric *f, enum job_host_match match,
		 const struct node_name_map *names, struct fab_error *err);

/* The demand weight of src_node sending to dst_node (bound t), 0 when none. */
uint64_t traffic_weight(const struct traffic *t, uint32_t src_node, uint32_t dst_node);

/*
 * The hosts of the bound pairs, as a job map's text: "HOST traffic" per line, one job holding
 * them all, so that an engine's job phase routes them first.  *text is malloc()ed.
 */
int traffic_hosts_text(const struct traffic *t, char **text, size_t *len);

#endif
