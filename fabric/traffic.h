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
 * Adds one pair as a line of the file would (line and name for messages): a host sending to
 * itself and 0 bytes are ignored.  The hostnames need not end in '\0'.
 */
int traffic_add(struct traffic *t, const char *src, size_t src_len, const char *dst, size_t dst_len,
		uint64_t bytes, uint32_t line, const char *name, struct fab_error *err);

/*
 * A matrix estimated from port counters (traffic_estimate.c, doc/traffic.md): the bytes that
 * went out of and into one port of a node over some window, as OpenSM's PerfMgr counts them.
 */
struct traffic_counter {
	uint64_t guid; /* node GUID */
	uint8_t port;
	uint64_t xmit, rcv; /* bytes */
};

/* What an estimate was made of. */
struct traffic_estimate_report {
	uint32_t counters_used;	 /* counters of a host's link (either end) */
	uint32_t hosts_sent;	 /* hosts that sent bytes */
	uint32_t hosts_received; /* hosts that received bytes */
	uint32_t jobs;		 /* jobs with a sender and another receiver */
	uint64_t sent;		 /* bytes the hosts sent */
};

/* More pairs than this and the estimate is refused (a job of over 1,000 busy hosts). */
#define TRAFFIC_ESTIMATE_MAX_PAIRS 1000000u

/*
 * Fills t, as traffic_parse() would, with a gravity estimate inside each job of jobs (bound to
 * f; NULL: every host is one job): host s sends host d sent(s) * recv(d) / (the job's received
 * bytes but s's own), where sent and recv are what the switch port facing the host counted
 * (the host's own port's counters when the switch's are missing).  A host in several jobs
 * splits its bytes evenly over them.  Hosts are named as match and names name them, so that
 * traffic_bind() finds them again.  Errors: out of memory, too many pairs; t is then empty.
 */
int traffic_estimate(struct traffic *t, const struct fabric *f, const struct traffic_counter *c,
		     size_t n, const struct job_map *jobs, enum job_host_match match,
		     const struct node_name_map *names, struct traffic_estimate_report *rep,
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
