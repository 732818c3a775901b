/*
 * jobfilter.h - what sarnue-filterd decides, apart from talking to Slurm and the plugin: which
 * host sits under which leaf switch (the topology), which running jobs span two or more leaf
 * switches (multi-switch jobs, the only ones SAR routes for), and whether their node sets
 * changed enough to reroute (Domke's thesis, section 5.2.2.1).
 *
 * Job ids do not matter to the routing, so the comparison is between sets of node sets: a job
 * replaced by another on the same nodes is no change, a job ending is one.  Node sets are kept
 * as keys (the sorted hostnames joined by ','), so the state survives a topology reload.
 */
#ifndef SARNUE_JOBFILTER_H
#define SARNUE_JOBFILTER_H

#include <stdint.h>
#include <stdio.h>

#include "fabric/fabric.h"
#include "lib/hostlist.h"
#include "fabric/jobmap.h"
#include "filterd/slurmjobs.h"

/* ------------------------------------------------------------------ topology */

struct topo {
	struct hostlist names; /* host i is names[i]; sorted by strcmp after topo_finalize() */
	uint32_t *leaf_off;    /* CSR: leaves of host i are leaf[leaf_off[i] .. leaf_off[i+1]) */
	uint32_t *leaf;	       /* leaf switch indices, ascending per host */
	uint64_t *leaf_guid;   /* [nleaves] */
	uint32_t nleaves;
	uint32_t ports; /* HCA ports seen */
	/* While building: (name index, leaf GUID) pairs. */
	uint32_t *pair_host;
	uint64_t *pair_leaf;
	uint32_t npairs, pairs_cap;
};

void topo_init(struct topo *t);
void topo_free(struct topo *t);

/* Records that an HCA port of host sits under the leaf switch with that GUID. */
int topo_add(struct topo *t, const char *host, size_t len, uint64_t leaf_guid);
/* Merges the ports of each host (multi-HCA hosts) and builds the lookup. */
int topo_finalize(struct topo *t, struct fab_error *err);

/* Host index of name[0..len), or FAB_NONE. */
uint32_t topo_find(const struct topo *t, const char *name, size_t len);

static inline uint32_t topo_hosts(const struct topo *t)
{
	return t->names.n;
}

/* CA ports with an active link to a switch; hostname by match (see jobmap.h). */
int topo_from_fabric(struct topo *t, const struct fabric *f, enum job_host_match match,
		     struct fab_error *err);
/* The data lines of the control socket's `topology` reply: "host NAME NODE PORT LEAF". */
int topo_from_ctl(struct topo *t, const char *data, const char *what, struct fab_error *err);
/* Slurm's topology.conf: switches with Nodes= are leaves. */
int topo_from_slurm_conf(struct topo *t, const char *path, struct fab_error *err);

/* ------------------------------------------------------------------ job sets */

/*
 * Hosts the node lists of one poll's running jobs may name together.  Some 25 times the node
 * count of the largest machines leaves room for nodes shared by many jobs; a hundred lists like
 * node[1-1000000] (each within HOSTLIST_MAX_HOSTS) are refused before any is expanded.
 */
#define JOBSET_MAX_HOSTS (1u << 22)

struct filter_conf {
	uint32_t min_time_limit;	  /* minutes; shorter jobs are skipped */
	const char *const *exclude_parts; /* fnmatch patterns of partitions to skip */
	unsigned nexclude;
	uint32_t max_hosts; /* hosts one poll may expand; 0: JOBSET_MAX_HOSTS */
};

struct jobset_stats {
	uint32_t jobs, running;
	uint32_t short_jobs, excluded, no_nodes; /* running jobs skipped */
	uint32_t single_switch, multi_switch;
	uint32_t multi_hosts; /* host entries of multi-switch jobs (job map lines) */
};

struct jobset {
	struct jobset_stats st;
	/* Multi-switch job k: id ids[k], hosts host[off[k] .. off[k+1]) ascending (topo order). */
	struct hostlist ids;
	uint32_t *off, *host;
	uint32_t ncap, hcap;
	/* The set of node sets: sorted, without duplicates. */
	struct hostlist keys;
	/* Hostnames of running jobs the topology does not know, sorted, without duplicates. */
	struct hostlist unknown;
	struct hostlist scratch;
};

void jobset_init(struct jobset *js);
void jobset_free(struct jobset *js);

/*
 * Builds the multi-switch jobs from squeue's jobs.  A malformed node list fails the whole
 * build (err names the job and column): deciding on part of the jobs could look like jobs
 * ending.  So do node lists that name more than the conf's max_hosts together, checked
 * before any is expanded.
 */
int jobset_build(struct jobset *js, const struct slurm_jobs *jobs, const struct topo *t,
		 const struct filter_conf *c, struct fab_error *err);

/* The job map of the multi-switch jobs, in the format of jobmap.h. */
int jobset_write_map(const struct jobset *js, const struct topo *t, FILE *out);

/*
 * Node-set keys of a job map file, for the state at start-up: the map the daemon wrote last is
 * what the plugin routes for.  keys is replaced.
 */
int jobset_keys_from_map(const struct job_map *jm, struct hostlist *keys, struct fab_error *err);

/* Sorts keys and drops duplicates. */
int keys_normalize(struct hostlist *keys);

/* Node sets in cur but not in prev (*added) and in prev but not in cur (*removed). */
void keys_diff(const struct hostlist *prev, const struct hostlist *cur, uint32_t *added,
	       uint32_t *removed);

/* ------------------------------------------------------------------ decision */

enum filter_decision {
	DECIDE_NO_CHANGE, /* same node sets as installed */
	DECIDE_REROUTE,	  /* changed, and the last reroute is long enough ago */
	DECIDE_DEFERRED,  /* changed, but too soon after the last reroute */
};

struct decide_in {
	const struct hostlist *installed; /* node sets the plugin routes for */
	const struct hostlist *current;
	double now, last_reroute; /* seconds; last_reroute < 0: never */
	double min_interval;	  /* seconds between reroutes */
};

struct decide_out {
	enum filter_decision decision;
	uint32_t added, removed;
	double wait; /* DECIDE_DEFERRED: seconds until a reroute is allowed */
};

void filter_decide(const struct decide_in *in, struct decide_out *out);

#endif
