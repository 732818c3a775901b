/*
 * jobmap.h - the job map: which hosts run which job.
 *
 * One format for everything that speaks about jobs: the filter daemon writes it, the plugin reads
 * it at every routing (option job_map=PATH), the scheduling-aware engines weight intra-job paths
 * with it, and `sarnue check` computes effective EFI and dark fiber from it.
 *
 * File format: one "hostname jobid" pair per line, separated by blanks; '#' starts a comment;
 * blank lines are ignored.  A host may appear in several jobs (shared nodes).  jobid is any word
 * without blanks (Slurm array ids such as 1234_7 included).
 *
 * Loading is two steps.  job_map_parse() checks the file alone and rejects it whole on the first
 * malformed line, naming file:line; job_map_bind() then matches hostnames against the fabric's
 * CA node descriptions (or a node-name map's names).  Hostnames the fabric does not know are
 * counted, never fatal; so are hostnames that match several HCAs of one name.
 */
#ifndef SARNUE_JOBMAP_H
#define SARNUE_JOBMAP_H

#include <stddef.h>
#include <stdint.h>

#include "fabric/fabric.h"
#include "lib/assert.h"
#include "fabric/nodenames.h"

#define JOB_MAP_MAX_NAME 255

enum job_host_match {
	JOB_MATCH_FIRST_WORD, /* hostname = first word of the node description (default) */
	JOB_MATCH_DESCRIPTION /* hostname = the whole node description */
};

struct job_entry {
	uint32_t host; /* offset of the hostname in strings */
	uint32_t job;  /* job index */
	uint32_t line; /* line number in the file */
};

struct job_map {
	/* From the file. */
	char *strings;
	size_t strings_len, strings_cap;
	struct job_entry *entries;
	uint32_t nentries, entries_cap;
	uint32_t *job_name; /* [njobs]: offset of the job id in strings, in order of appearance */
	uint32_t njobs, jobs_cap;

	/* From job_map_bind(): jobs of fabric node n are node_jobs[node_off[n] .. node_off[n+1]).
	 */
	uint32_t nnodes;
	uint32_t *node_off;  /* [nnodes + 1] */
	uint32_t *node_jobs; /* job indices, ascending per node */
	uint32_t *job_ports; /* [njobs]: CA/router ports with a LID that run the job */
	uint32_t unknown_hosts;
	char first_unknown[JOB_MAP_MAX_NAME + 1];
	/*
	 * Hostnames that stand for several HCAs with one and the same name (firmware default
	 * descriptions): bound to all of them, which is almost never what the map meant.
	 */
	uint32_t ambiguous_hosts, first_ambiguous_hcas;
	char first_ambiguous[JOB_MAP_MAX_NAME + 1];
	char first_ambiguous_name[JOB_MAP_MAX_NAME + 1];
};

void job_map_init(struct job_map *jm);
void job_map_free(struct job_map *jm);

/* Reads and checks path; on error jm is left empty and err names path:line and the reason. */
int job_map_parse(struct job_map *jm, const char *path, struct fab_error *err);
/* Same, naming the map `name` in messages (a map passed over the control socket). */
int job_map_parse_named(struct job_map *jm, const char *path, const char *name,
			struct fab_error *err);

/* Same, from a buffer; name is used in messages. */
int job_map_parse_text(struct job_map *jm, const char *text, const char *name,
		       struct fab_error *err);

/*
 * Resolves hostnames to the fabric's CA nodes, by their node descriptions or, for the nodes it
 * names, by a node-name map (names may be NULL).  Can be called again for another fabric.
 */
int job_map_bind(struct job_map *jm, const struct fabric *f, enum job_host_match match,
		 const struct node_name_map *names, struct fab_error *err);

static inline const char *job_map_job_name(const struct job_map *jm, uint32_t job)
{
	sn_assert(job < jm->njobs);
	return jm->strings + jm->job_name[job];
}

/* Jobs of a fabric node (sorted ascending); count in *n. */
static inline const uint32_t *job_map_node_jobs(const struct job_map *jm, uint32_t node,
						uint32_t *n)
{
	if (!jm->node_off || node >= jm->nnodes) {
		*n = 0;
		return NULL;
	}
	*n = jm->node_off[node + 1] - jm->node_off[node];
	return jm->node_jobs + jm->node_off[node];
}

/* True when the two nodes share at least one job. */
int job_map_share_job(const struct job_map *jm, uint32_t node_a, uint32_t node_b);

/* Number of fabric nodes that run at least one job. */
uint32_t job_map_bound_nodes(const struct job_map *jm);

/*
 * Hosts by name as job maps bind them (the match rule, a node-name map), for other files that
 * name hosts (traffic matrices): the host's first CA node, then its next ones, FAB_NONE at the
 * end or when the fabric has no such host.  NULL from _new when memory runs out.
 */
struct host_lookup;
struct host_lookup *host_lookup_new(const struct fabric *f, enum job_host_match match,
				    const struct node_name_map *names);
uint32_t host_lookup_first(const struct host_lookup *h, const char *host);
uint32_t host_lookup_next(const struct host_lookup *h, uint32_t node);
/* The name node is known by under the lookup's rules (*len bytes), NULL for switches. */
const char *host_lookup_name(const struct host_lookup *h, uint32_t node, size_t *len);
void host_lookup_free(struct host_lookup *h);

/* Length of the hostname at the start of a node description under the match rule. */
size_t job_map_host_len(const char *desc, enum job_host_match match);

#endif
