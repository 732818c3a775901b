/*
 * engines.h - one entry point for every sarnue routing engine, used by the OpenSM plugin and by
 * `sarnue route` alike: pick the engine by name, route the fabric model, verify the result, and
 * describe what happened in one log line.
 */
#ifndef SARNUE_ENGINES_H
#define SARNUE_ENGINES_H

#include "fabric/fabric.h"
#include "fabric/jobmap.h"
#include "engines/options.h"
#include "engines/planes.h"
#include "engines/dfsssp/dfsssp.h"
#include "fabric/routing.h"
#include "fabric/traffic.h"
#include "check/verify.h"

struct cpu_gate;

/*
 * One figure of an engine's result for scripts (`sarnue route --json`'s "result" object): a
 * number, or a short text when text[0] is set.  The summary says the same in prose.
 */
struct engine_fact {
	char key[28];
	char text[96];
	double value;
};

#define ENGINE_MAX_FACTS 32

struct engine_result {
	double route_seconds, verify_seconds;
	struct verify_report verify; /* valid when verified */
	int verified;
	int verify_streamed; /* the checks ran beside the routing (verify_feed_attach) */
	char summary[1024];  /* engine-specific: roots, ranks, layers, fall-backs */
	/* what the operator should know although routing went on: one warning per line */
	char warning[1024];
	uint32_t jobs, job_hosts, unknown_hosts; /* from the job map routed with */
	uint32_t fallbacks; /* destinations on escape paths, or moved from DFSSSP to Nue */
	/* planes=on (see planes.h): routed as two planes; high-LID plane kept from last time */
	int planes, escape_reused;
	char escape_engine[16]; /* "sar-updn" or "sar-nue"; empty without planes */
	unsigned plane_vls;	/* n: base on VLs 0..n-2, escape on VL n-1 */
	uint64_t fingerprint;	/* fabric_fingerprint() of the fabric routed */
	/* quality=yes: the EFI of the verified tables (check/metrics.h), over terminal pairs */
	int quality_known;
	uint64_t efi_max;
	double efi_mean, quality_seconds;
	uint32_t channels, dark_channels; /* switch-to-switch channels, those no route uses */
	/* traffic=perfmgr: what the estimate was made of and its heaviest pairs, for the log */
	char traffic[512];
	/* incremental=yes: how much of the previous routing was kept, for the log; or empty */
	char incremental[160];
	struct engine_fact facts[ENGINE_MAX_FACTS];
	unsigned nfacts;
};

/* Records a figure of the result (what does not fit is dropped; a key set again is replaced). */
void engine_fact(struct engine_result *res, const char *key, double value);
void engine_fact_text(struct engine_result *res, const char *key, const char *text);

/*
 * The warnings one by one: the next line of a warning text from *s, its length in *len, *s
 * moved past it; NULL at the end.
 */
const char *engine_warning_next(const char **s, int *len);

/* Adds a warning (a line of res->warning); what does not fit is cut off. */
void engine_warn(struct engine_result *res, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * What a long-lived caller (the plugin) keeps between routings and knows about OpenSM.
 * Without it (offline), a malformed input file is an error instead of a warning.
 */
struct engine_ctx {
	struct job_map jobs; /* the last job map that parsed: kept when a new one is malformed */
	int have_jobs;
	int sl2vl_off; /* OpenSM will not program SL2VL (qos FALSE): one VL only */
	/* the high-LID plane the switches hold, reused while the topology stays the same */
	struct escape_plane escape;
	/* incremental=yes: sar-dfsssp's last routing of this fabric, columns and demands */
	struct dfsssp_memo dfsssp_memo;
	/*
	 * Set by the caller for one routing, or NULL: opened once the engine's own helper threads
	 * no longer need the second CPU (see threads.h), at the latest when the routing returns.
	 */
	struct cpu_gate *spare_cpu;
	/*
	 * traffic=perfmgr: the port counters of the window, set by the caller for one routing;
	 * NULL when none came (the routing goes on with uniform weights).
	 */
	const struct traffic_counter *counters;
	size_t ncounters;
};

void engine_ctx_init(struct engine_ctx *c);
void engine_ctx_free(struct engine_ctx *c);

/* Names OpenSM's routing_engine option selects; NULL-terminated. */
extern const char *const engine_names[];

int engine_known(const char *name);

/*
 * Routes f with the named engine into r (routing_init done by the caller).  Returns 0, or -1 with
 * err saying why: an engine failure, or verification finding unreachable pairs, loops or credit
 * loops (then r must not be used).
 */
int engine_run(const char *name, const struct fabric *f, const struct sarnue_options *o,
	       struct routing *r, struct engine_result *res, struct fab_error *err);

/* Same, with the caller's context (may be NULL). */
int engine_run_ctx(const char *name, const struct fabric *f, const struct sarnue_options *o,
		   struct engine_ctx *ctx, struct routing *r, struct engine_result *res,
		   struct fab_error *err);

#endif
