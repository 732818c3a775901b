/*
 * options.h - sarnue's options: the space-separated key=value pairs of OpenSM's
 * event_plugin_options, an optional config file of the same pairs (config=PATH), and the same
 * keys on the command line of `sarnue route`.  One parser, so the plugin and the offline tools
 * accept exactly the same settings.
 */
#ifndef SARNUE_OPTIONS_H
#define SARNUE_OPTIONS_H

#include <stdint.h>

#include "fabric/fabric.h"
#include "fabric/jobmap.h"
#include "fabric/loaders.h"
#include "lib/progress.h"

#define OPT_PATH_MAX 1024
#define OPT_DEFAULT_CTL_SOCKET "/run/sarnue/ctl.sock"
/* traffic=perfmgr: the matrix comes from OpenSM's PerfMgr counters, not from a file. */
#define OPT_TRAFFIC_PERFMGR "perfmgr"

enum opt_dump {
	OPT_DUMP_AUTO, /* when OpenSM's routing log flag (0x40) is on */
	OPT_DUMP_ALWAYS,
	OPT_DUMP_NEVER,
};

/* Form of sarnue-path-sl.dump (fabric/loaders.h, enum path_sl_form). */
enum opt_dump_path_sl {
	OPT_DUMP_PATH_SL_AUTO, /* compact when every path uses SL 0, else full */
	OPT_DUMP_PATH_SL_FULL,
	OPT_DUMP_PATH_SL_COMPACT,
};

/* Whether sar-nue routes a switch's LIDs over the same routes (engines/nue/nue.h, enum nue_group).
 */
enum opt_nue_group {
	OPT_NUE_GROUP_NO,
	OPT_NUE_GROUP_AUTO,
	OPT_NUE_GROUP_YES,
};

/* Escape routing of the high-LID plane (planes=on). */
enum opt_escape {
	OPT_ESCAPE_AUTO, /* both, keep the lower maximum EFI (ties: Up/Down) */
	OPT_ESCAPE_UPDN,
	OPT_ESCAPE_NUE, /* Nue on one VL */
};

/* How a reroute with unchanged topology reaches the switches (doc/five-phase.md). */
enum opt_update {
	OPT_UPDATE_AUTO,       /* five-phase when the routing has two planes, else plain */
	OPT_UPDATE_FIVE_PHASE, /* always announce, wait for acknowledgements, then push */
	OPT_UPDATE_PLAIN,      /* push at once, as OpenSM does */
};

struct sarnue_options {
	uint64_t updn_roots[SARNUE_MAX_ROOTS];
	unsigned n_updn_roots;
	unsigned nue_vls;     /* 1..15, used by sar-nue */
	int nue_rebalance;    /* sar-nue routes every CA LID once more against the final weights */
	int nue_dmodk;        /* sar-nue keeps D-mod-k's routes on a large complete fat tree */
	unsigned nue_threads; /* 0: auto; 1 or 2 threads for sar-nue's candidates */
	unsigned nue_orders;  /* 1, or 2: one VL also routed with ties by descending LID */
	enum opt_nue_group nue_group;  /* a switch's LIDs share routes (sar-nue) */
	unsigned nue_layer_tries;      /* 1..6 routings of a layer with fall-backs, k > 1 */
	char nue_layers[OPT_PATH_MAX]; /* switch layers file (fabric/layersfile.c), or empty */
	int nue_partition_metis;       /* nue_partition=metis: no torus blocks */
	int verify;		       /* run the verifier before tables reach OpenSM */
	int quality;		       /* measure the EFI of verified tables (engine_result) */
	int incremental;	       /* sar-dfsssp keeps columns of unchanged demand */
	int mcast_reserve;  /* sar-nue, sar-dfsssp keep the multicast tree's turns on VL 0 */
	int mcast_opensm;   /* mcast_trees=opensm: OpenSM builds the multicast trees itself */
	enum opt_dump dump; /* write path-SL and SL2VL dumps */
	enum opt_dump_path_sl dump_path_sl;
	char job_map[OPT_PATH_MAX];
	char job_map_name[OPT_PATH_MAX];  /* how messages name job_map, when not by its path */
	char traffic[OPT_PATH_MAX];	  /* traffic matrix (fabric/traffic.h), empty: none */
	unsigned traffic_window;	  /* traffic=perfmgr: seconds of counters that count */
	char node_name_map[OPT_PATH_MAX]; /* names job maps bind hosts by, before descriptions */
	enum job_host_match job_host_match;
	char config[OPT_PATH_MAX];
	/* sar-dfsssp: VL cap 1..15 (0: what the links offer); storage nodes by pattern, file */
	unsigned dfsssp_vls;
	int dfsssp_judge_overflow; /* the path layering may stop early, judged to overflow */
	char storage_nodes[OPT_PATH_MAX];
	char storage_guids[OPT_PATH_MAX];
	/* plugin control socket (doc/ctl-protocol.md); empty path: disabled */
	char ctl_socket[OPT_PATH_MAX];
	unsigned ctl_mode;  /* permission bits of the socket file */
	char ctl_group[64]; /* group owning the socket; empty: OpenSM's */
	int ctl_world;	    /* allow a ctl_mode with "other" bits: any local user may connect */
	/* LMC >= 1: base LIDs by the engine, the other LIDs by an escape routing on its own VL */
	int planes;
	enum opt_escape escape;
	/* five-phase update: mode, seconds to wait for acknowledgements, policy on timeout */
	enum opt_update update;
	unsigned update_timeout;
	int update_proceed;	/* on timeout: 0 keep the old tables (abort), 1 push anyway */
	unsigned update_retry;	/* seconds between report rounds */
	unsigned update_rounds; /* silent rounds before a subscriber expires */
	/*
	 * Not an option: set by the caller for one routing, or NULL.  The engines and the
	 * verifier report through it how far they got (lib/progress.h).
	 */
	const struct progress_hook *progress;
};

/* One accepted word of a keyword option and the setting it stands for. */
struct opt_keyword {
	const char *word;
	int value;
};

/* first-word | description: how job map hostnames match node descriptions. */
extern const struct opt_keyword opt_host_match_keywords[];

/* Sets *value from word's entry in table (ended by a NULL word); -1 if word is not there. */
int opt_keyword_value(const struct opt_keyword *table, const char *word, int *value);

/* Receives one message per rejected key or value; the option keeps its default. */
typedef void (*opt_error_fn)(void *ctx, const char *msg);

void options_defaults(struct sarnue_options *o);

/*
 * Parses "key=value key=value ...".  Returns the number of errors reported; every valid pair is
 * applied regardless.  source names the input in messages ("event_plugin_options", a file).
 */
int options_parse_line(struct sarnue_options *o, const char *text, const char *source,
		       unsigned line, opt_error_fn on_error, void *ctx);

/* Applies one "key=value" pair. */
int options_set(struct sarnue_options *o, const char *pair, const char *source, unsigned line,
		opt_error_fn on_error, void *ctx);

/* Human-readable list of the keys, for --help and the README. */
extern const char options_help[];

/* The path-SL dump form the dump_path_sl option asks for (fabric/loaders.h). */
enum path_sl_form options_path_sl_form(const struct sarnue_options *o);

#endif
