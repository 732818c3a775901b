/*
 * options.c - parser for sarnue's key=value options (see options.h).  Errors name the source,
 * the position and the key; a rejected value leaves the default in force.
 */
#include "engines/options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/numbers.h"
#include "lib/scan.h"
#include "lib/input.h"
#include "lib/assert.h"

static int options_parse_file(struct sarnue_options *o, const char *path, opt_error_fn on_error,
			      void *ctx);

const char options_help[] =
	"  updn_roots=GUID[,GUID...]  root switches of sar-updn (default: automatic)\n"
	"  nue_vls=N                 virtual lanes for sar-nue, 1..15 (default 1)\n"
	"  nue_rebalance=yes|no      sar-nue routes every CA LID once more against the\n"
	"                            final link loads, for balance (default yes)\n"
	"  nue_dmodk=yes|no          on a complete fat tree of 2,048 end ports or more,\n"
	"                            without a job map or measured traffic, sar-nue keeps\n"
	"                            D-mod-k's routes (at the cut bound of the maximum EFI)\n"
	"                            on VL 0 and routes only what does not fit beside the\n"
	"                            multicast tree (default yes)\n"
	"  nue_orders=1|2            with one VL, sar-nue routes equally far destinations\n"
	"                            in ascending and in descending LID order, side by\n"
	"                            side on two CPUs, and keeps the better (default 2);\n"
	"                            1: ascending only (faster on a single CPU)\n"
	"  nue_group=auto|yes|no     outside fat trees, sar-nue routes the LIDs of one\n"
	"                            switch's terminals over the same routes (faster,\n"
	"                            mostly better balanced); auto: from 4,096 end\n"
	"                            ports on with more than one VL, from 20,000 with\n"
	"                            one (default)\n"
	"  nue_layer_tries=1..6      with more than one VL, sar-nue routes a layer in which\n"
	"                            destinations fell back again, up to this many times\n"
	"                            in all, new turns costing more each time (tries 4 to\n"
	"                            6 take equally far destinations by descending LID),\n"
	"                            and keeps the routing with the fewest fall-backs\n"
	"                            (default 6); a layer of 1,000 destinations or more\n"
	"                            whose first routing falls back for at most 5% of\n"
	"                            them is routed once, its fall-backs moved to other\n"
	"                            layers, unless the moves fall short\n"
	"  nue_partition=auto|metis  with more than one VL, how sar-nue splits the\n"
	"                            destinations into layers: auto cuts a torus or mesh\n"
	"                            into blocks of equal arcs of its rings and uses METIS\n"
	"                            on other fabrics; metis uses METIS on any (default\n"
	"                            auto)\n"
	"  nue_layers=PATH           with more than one VL, the layer of the destinations\n"
	"                            at each switch, 'SWITCH LAYER' per line (node GUID or\n"
	"                            description, layer 0..nue_vls-1); unnamed switches\n"
	"                            take the nearest named one's (default: automatic,\n"
	"                            see nue_partition)\n"
	"  nue_threads=auto|1|2      threads sar-nue uses: its candidates with more than\n"
	"                            one VL, the verifier beside the routing with one\n"
	"                            (default auto: 2 when two CPUs are online)\n"
	"  dfsssp_vls=N              VLs sar-dfsssp may use, 1..15 (default: all the links\n"
	"                            offer; one when OpenSM's qos is off)\n"
	"  dfsssp_judge_overflow=yes|no\n"
	"                            with 5 VLs or more, sar-dfsssp stops its path layering\n"
	"                            once its layers shrink so slowly that an estimate of\n"
	"                            the layers needed comes to twice the VLs, or, from\n"
	"                            1,000 switches on, once a sample of the destinations\n"
	"                            (a LID of every second switch) layered first\n"
	"                            overflows the VLs alone; it then routes as on any\n"
	"                            overflow: whole destinations that fit keep their\n"
	"                            paths, Nue routes the rest (default yes; no: the\n"
	"                            layering runs until it fits or its last VL has a\n"
	"                            cycle, minutes on large tori and random graphs)\n"
	"  storage_nodes=PATTERN     CA node descriptions (fnmatch glob, e.g. 'io*') that\n"
	"                            sar-dfsssp balances in their own phase\n"
	"  storage_guids=PATH        same, by node or port GUID, one per line (the format of\n"
	"                            OpenSM's io_guid_file)\n"
	"  job_map=PATH              job map file: one 'hostname jobid' per line\n"
	"  traffic=PATH              measured traffic, 'SRC DST BYTES' per line: sar-dfsssp\n"
	"                            and sar-nue weigh each host pair's routes by its\n"
	"                            bytes (heavy pairs get links of their own first);\n"
	"                            with a job map only pairs inside jobs, without one\n"
	"                            every pair listed; traffic=perfmgr: estimated in the\n"
	"                            plugin from OpenSM's PerfMgr port counters (perfmgr\n"
	"                            TRUE), by a gravity model inside each job\n"
	"  traffic_window=SECONDS    traffic=perfmgr: the counters of the last this many\n"
	"                            seconds count, 1..86400 (default 600)\n"
	"  job_host_match=first-word|description\n"
	"                            how job map hostnames match HCA node descriptions\n"
	"                            (default first-word: 'node0001 HCA-1' is node0001)\n"
	"  node_name_map=PATH        names for node GUIDs, '0xGUID \"name\"' per line (the\n"
	"                            node-name-map of infiniband-diags and OpenSM): job map\n"
	"                            hostnames match these names where the map has one, for\n"
	"                            fabrics whose HCAs keep their default descriptions\n"
	"  verify=yes|no             verify tables before they reach OpenSM (default yes)\n"
	"  quality=yes|no            measure the edge forwarding index of the tables after\n"
	"                            verifying them: max, mean and unused channels, for\n"
	"                            'sarnue ctl status' and metrics (default yes; about a\n"
	"                            third of the verification time)\n"
	"  mcast_reserve=yes|no      sar-nue and sar-dfsssp keep every turn of the multicast\n"
	"                            tree free on VL 0, so groups of SL 0 (IPoIB's) fit beside\n"
	"                            the routes by construction (default yes); no: routes may\n"
	"                            take those turns, and a group whose tree would close a\n"
	"                            credit loop gets no tree\n"
	"  incremental=yes|no        sar-dfsssp: on a reroute of the same fabric, keep the\n"
	"                            forwarding column of every destination whose job\n"
	"                            demand did not change and route only the others again;\n"
	"                            layers and verification still cover every path\n"
	"                            (default no: tables depend on the inputs alone)\n"
	"  mcast_trees=sarnue|opensm who builds the multicast trees: sarnue's engines,\n"
	"                            verified with the unicast routes (default), or OpenSM's\n"
	"                            own algorithm, blind to the routes' dependencies (for\n"
	"                            comparison; sarnue check shows what it does)\n"
	"  dump=auto|always|never    write sarnue-path-sl.dump and sarnue-sl2vl.dump\n"
	"                            (auto: when OpenSM's routing log flag 0x40 is on)\n"
	"  dump_path_sl=auto|full|compact\n"
	"                            form of sarnue-path-sl.dump: full has a line per\n"
	"                            source and destination, as ibdmchk -c needs; compact\n"
	"                            a line per destination, which ibdmchk reads as SL 0\n"
	"                            everywhere (it refuses one naming another SL); full\n"
	"                            whenever the SL varies by source (sar-dfsssp); auto:\n"
	"                            compact when every path uses SL 0 (default auto;\n"
	"                            sarnue route and the plugin)\n"
	"  ctl_socket=PATH|off       the plugin's control socket (default\n"
	"                            " OPT_DEFAULT_CTL_SOCKET "; off: none)\n"
	"  ctl_mode=OCTAL            permissions of the socket (default 0660)\n"
	"  ctl_group=NAME            group owning the socket (default: OpenSM's)\n"
	"  ctl_world=yes|no          allow a ctl_mode that lets every local user connect\n"
	"                            (default no: such a mode leaves the socket closed)\n"
	"  planes=on|off             with LMC >= 1, route base LIDs with sar-dfsssp or sar-nue\n"
	"                            on all VLs but the last, and the other LIDs with an\n"
	"                            escape routing on the last VL (default off)\n"
	"  escape=auto|updn|nue      escape routing of the high LIDs: Up*/Down*, Nue on one\n"
	"                            VL, or whichever has the lower maximum EFI (default auto)\n"
	"  update=auto|five-phase|plain\n"
	"                            how a reroute of an unchanged fabric reaches the\n"
	"                            switches (default auto: five-phase with two planes)\n"
	"  update_timeout=SECONDS    wait at most this long for acknowledgements, 1..3600\n"
	"                            (default 60)\n"
	"  update_on_timeout=abort|proceed\n"
	"                            abort: keep the old tables; proceed: push them anyway\n"
	"                            (default abort)\n"
	"  update_retry=SECONDS      resend reports to silent subscribers, 1..60 (default 2)\n"
	"  update_rounds=N           silent rounds before a subscriber expires, 1..100\n"
	"                            (default 5)\n"
	"  config=PATH               read more key=value pairs from PATH (# comments)\n";

void options_defaults(struct sarnue_options *o)
{
	memset(o, 0, sizeof(*o));
	o->nue_vls = 1;
	o->nue_rebalance = 1;
	o->nue_dmodk = 1;
	o->nue_orders = 2;
	o->nue_group = OPT_NUE_GROUP_AUTO;
	o->nue_layer_tries = 6;
	o->verify = 1;
	o->quality = 1;
	o->mcast_reserve = 1;
	o->dfsssp_judge_overflow = 1;
	o->dump = OPT_DUMP_AUTO;
	strcpy(o->ctl_socket, OPT_DEFAULT_CTL_SOCKET);
	o->ctl_mode = 0660;
	o->update_timeout = 60;
	o->traffic_window = 600;
	o->update_retry = 2;
	o->update_rounds = 5;
}

static int report(opt_error_fn on_error, void *ctx, const char *source, unsigned line,
		  const char *fmt, const char *a, const char *b)
{
	char where[OPT_PATH_MAX + 32], msg[3 * OPT_PATH_MAX];

	if (line)
		snprintf(where, sizeof(where), "%s:%u", source, line);
	else
		snprintf(where, sizeof(where), "%s", source);
	snprintf(msg, sizeof(msg), "%s: ", where);
	snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), fmt, a, b);
	if (on_error)
		on_error(ctx, msg);
	return 1;
}

static int parse_guid_list(struct sarnue_options *o, const char *v)
{
	uint64_t guids[SARNUE_MAX_ROOTS];
	unsigned n = 0;
	const char *p = v;

	for (;;) {
		if (n == SARNUE_MAX_ROOTS || fab_scan_guid(&p, &guids[n]) || !guids[n])
			return -1;
		n++;
		if (!*p)
			break;
		if (*p++ != ',')
			return -1;
	}
	sn_assert(n >= 1 && n <= SARNUE_MAX_ROOTS);
	memcpy(o->updn_roots, guids, sizeof(guids[0]) * n);
	o->n_updn_roots = n;
	return 0;
}

static int parse_bool(const char *v, int *out)
{
	if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "on"))
		*out = 1;
	else if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "off"))
		*out = 0;
	else
		return -1;
	return 0;
}

static int set_path(char *dst, const char *v)
{
	if (!*v || strlen(v) >= OPT_PATH_MAX)
		return -1;
	strcpy(dst, v);
	return 0;
}

/* Where the bracket expression opening at p ends (its ']'), or NULL when nothing closes it. */
static const char *bracket_end(const char *p)
{
	p++;
	if (*p == '!' || *p == '^')
		p++;
	if (*p == ']') /* first: a literal ']' */
		p++;
	while (*p && *p != ']') {
		/* "[:alpha:]", "[.x.]" and "[=e=]" inside end with their own ":]" and so on. */
		if (p[0] == '[' && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
			const char *q = p + 2;

			while (*q && !(q[0] == p[1] && q[1] == ']'))
				q++;
			if (!*q)
				return NULL;
			p = q + 2;
			continue;
		}
		p++;
	}
	return *p ? p : NULL;
}

/*
 * A glob for fnmatch(3).  fnmatch takes an unclosed '[' or a trailing '\' literally, so
 * "storage_nodes=[" silently matched nothing; such a pattern is refused here instead.
 */
static int set_pattern(char *dst, const char *v)
{
	const char *p;

	for (p = v; *p; p++) {
		if (*p == '\\') {
			if (!*++p)
				return -1;
		} else if (*p == '[' && !(p = bracket_end(p))) {
			return -1;
		}
	}
	return set_path(dst, v);
}

/* "off" disables the socket; anything else must be an absolute path that fits sun_path. */
static int set_ctl_socket(struct sarnue_options *o, const char *v)
{
	if (!strcmp(v, "off")) {
		o->ctl_socket[0] = '\0';
		return 0;
	}
	if (v[0] != '/' || strlen(v) >= 108)
		return -1;
	strcpy(o->ctl_socket, v);
	return 0;
}

/* Octal permission bits, e.g. 0660; at most 0777 and at least owner read/write. */
static int parse_mode(const char *v, unsigned *out)
{
	const char *p = v;
	unsigned x = 0;

	for (; *p >= '0' && *p <= '7'; p++) {
		x = x << 3 | (unsigned)(*p - '0');
		if (x > 0777)
			return -1;
	}
	if (p == v || *p || (x & 0600) != 0600)
		return -1;
	sn_assert(x <= 0777);
	*out = x;
	return 0;
}

const struct opt_keyword opt_host_match_keywords[] = {
	{ "first-word", JOB_MATCH_FIRST_WORD },
	{ "description", JOB_MATCH_DESCRIPTION },
	{ NULL, 0 },
};

static const struct opt_keyword escape_keywords[] = {
	{ "auto", OPT_ESCAPE_AUTO },
	{ "updn", OPT_ESCAPE_UPDN },
	{ "nue", OPT_ESCAPE_NUE },
	{ NULL, 0 },
};

static const struct opt_keyword update_keywords[] = {
	{ "auto", OPT_UPDATE_AUTO },
	{ "five-phase", OPT_UPDATE_FIVE_PHASE },
	{ "plain", OPT_UPDATE_PLAIN },
	{ NULL, 0 },
};

static const struct opt_keyword on_timeout_keywords[] = {
	{ "abort", 0 },
	{ "proceed", 1 },
	{ NULL, 0 },
};

static const struct opt_keyword dump_keywords[] = {
	{ "auto", OPT_DUMP_AUTO },
	{ "always", OPT_DUMP_ALWAYS },
	{ "never", OPT_DUMP_NEVER },
	{ NULL, 0 },
};

static const struct opt_keyword nue_group_keywords[] = {
	{ "no", OPT_NUE_GROUP_NO },
	{ "auto", OPT_NUE_GROUP_AUTO },
	{ "yes", OPT_NUE_GROUP_YES },
	{ NULL, 0 },
};

static const struct opt_keyword dump_path_sl_keywords[] = {
	{ "auto", OPT_DUMP_PATH_SL_AUTO },
	{ "full", OPT_DUMP_PATH_SL_FULL },
	{ "compact", OPT_DUMP_PATH_SL_COMPACT },
	{ NULL, 0 },
};

int opt_keyword_value(const struct opt_keyword *table, const char *word, int *value)
{
	for (; table->word; table++)
		if (!strcmp(table->word, word)) {
			*value = table->value;
			return 0;
		}
	return -1;
}

/* The fields set by keyword options. */
enum keyword_field {
	KW_HOST_MATCH,
	KW_ESCAPE,
	KW_UPDATE,
	KW_ON_TIMEOUT,
	KW_DUMP,
	KW_DUMP_PATH_SL,
	KW_NUE_GROUP,
};

static void set_keyword_field(struct sarnue_options *o, enum keyword_field field, int value)
{
	/* The keyword tables hold small non-negative enum values only. */
	sn_assert(value >= 0);
	switch (field) {
	case KW_HOST_MATCH:
		o->job_host_match = (enum job_host_match)value;
		break;
	case KW_ESCAPE:
		o->escape = (enum opt_escape)value;
		break;
	case KW_UPDATE:
		o->update = (enum opt_update)value;
		break;
	case KW_ON_TIMEOUT:
		o->update_proceed = value;
		break;
	case KW_DUMP:
		o->dump = (enum opt_dump)value;
		break;
	case KW_DUMP_PATH_SL:
		o->dump_path_sl = (enum opt_dump_path_sl)value;
		break;
	case KW_NUE_GROUP:
		o->nue_group = (enum opt_nue_group)value;
		break;
	}
}

/* The keyword options: 0 when set, -1 for a word the key does not accept, -2 for another key. */
static int keyword_option(struct sarnue_options *o, const char *key, const char *v)
{
	static const struct {
		const char *key;
		const struct opt_keyword *table;
		enum keyword_field field;
	} keyed[] = {
		{ "job_host_match", opt_host_match_keywords, KW_HOST_MATCH },
		{ "escape", escape_keywords, KW_ESCAPE },
		{ "update", update_keywords, KW_UPDATE },
		{ "update_on_timeout", on_timeout_keywords, KW_ON_TIMEOUT },
		{ "dump", dump_keywords, KW_DUMP },
		{ "dump_path_sl", dump_path_sl_keywords, KW_DUMP_PATH_SL },
		{ "nue_group", nue_group_keywords, KW_NUE_GROUP },
	};
	size_t i;
	int value;

	for (i = 0; i < sizeof(keyed) / sizeof(keyed[0]); i++) {
		if (strcmp(key, keyed[i].key))
			continue;
		if (opt_keyword_value(keyed[i].table, v, &value))
			return -1;
		set_keyword_field(o, keyed[i].field, value);
		return 0;
	}
	return -2;
}

static int apply(struct sarnue_options *o, const char *key, const char *v)
{
	int rc = keyword_option(o, key, v);

	if (rc != -2)
		return rc;
	if (!strcmp(key, "updn_roots"))
		return parse_guid_list(o, v);
	if (!strcmp(key, "nue_vls"))
		return num_parse_uint(v, 1, 15, &o->nue_vls);
	if (!strcmp(key, "nue_rebalance"))
		return parse_bool(v, &o->nue_rebalance);
	if (!strcmp(key, "nue_dmodk"))
		return parse_bool(v, &o->nue_dmodk);
	if (!strcmp(key, "nue_orders"))
		return num_parse_uint(v, 1, 2, &o->nue_orders);
	if (!strcmp(key, "nue_layer_tries"))
		return num_parse_uint(v, 1, 6, &o->nue_layer_tries);
	if (!strcmp(key, "nue_layers"))
		return set_path(o->nue_layers, v);
	if (!strcmp(key, "nue_partition")) {
		if (strcmp(v, "auto") && strcmp(v, "metis"))
			return -1;
		o->nue_partition_metis = !strcmp(v, "metis");
		return 0;
	}
	if (!strcmp(key, "nue_threads")) {
		if (strcmp(v, "auto"))
			return num_parse_uint(v, 1, 2, &o->nue_threads);
		o->nue_threads = 0;
		return 0;
	}
	if (!strcmp(key, "dfsssp_vls"))
		return num_parse_uint(v, 1, 15, &o->dfsssp_vls);
	if (!strcmp(key, "dfsssp_judge_overflow"))
		return parse_bool(v, &o->dfsssp_judge_overflow);
	if (!strcmp(key, "storage_nodes"))
		return set_pattern(o->storage_nodes, v);
	if (!strcmp(key, "storage_guids"))
		return set_path(o->storage_guids, v);
	if (!strcmp(key, "verify"))
		return parse_bool(v, &o->verify);
	if (!strcmp(key, "quality"))
		return parse_bool(v, &o->quality);
	if (!strcmp(key, "incremental"))
		return parse_bool(v, &o->incremental);
	if (!strcmp(key, "mcast_reserve"))
		return parse_bool(v, &o->mcast_reserve);
	if (!strcmp(key, "mcast_trees")) {
		if (strcmp(v, "sarnue") && strcmp(v, "opensm"))
			return -1;
		o->mcast_opensm = !strcmp(v, "opensm");
		return 0;
	}
	if (!strcmp(key, "job_map"))
		return set_path(o->job_map, v);
	if (!strcmp(key, "traffic"))
		return set_path(o->traffic, v);
	if (!strcmp(key, "traffic_window"))
		return num_parse_uint(v, 1, 86400, &o->traffic_window);
	if (!strcmp(key, "node_name_map"))
		return set_path(o->node_name_map, v);
	if (!strcmp(key, "ctl_socket"))
		return set_ctl_socket(o, v);
	if (!strcmp(key, "ctl_mode"))
		return parse_mode(v, &o->ctl_mode);
	if (!strcmp(key, "ctl_group")) {
		if (!*v || strlen(v) >= sizeof(o->ctl_group))
			return -1;
		strcpy(o->ctl_group, v);
		return 0;
	}
	if (!strcmp(key, "ctl_world"))
		return parse_bool(v, &o->ctl_world);
	if (!strcmp(key, "planes"))
		return parse_bool(v, &o->planes);
	if (!strcmp(key, "update_timeout"))
		return num_parse_uint(v, 1, 3600, &o->update_timeout);
	if (!strcmp(key, "update_retry"))
		return num_parse_uint(v, 1, 60, &o->update_retry);
	if (!strcmp(key, "update_rounds"))
		return num_parse_uint(v, 1, 100, &o->update_rounds);
	return -2;
}

int options_set(struct sarnue_options *o, const char *pair, const char *source, unsigned line,
		opt_error_fn on_error, void *ctx)
{
	char key[64];
	const char *eq = strchr(pair, '=');
	size_t klen;
	int rc;

	if (!eq || eq == pair)
		return report(on_error, ctx, source, line, "'%s' is not key=value%s", pair, "");
	klen = (size_t)(eq - pair);
	if (klen >= sizeof(key))
		return report(on_error, ctx, source, line, "unknown option '%.60s'%s", pair, "");
	sn_assert(klen < sizeof(key));
	memcpy(key, pair, klen);
	key[klen] = '\0';
	if (!strcmp(key, "config")) {
		if (set_path(o->config, eq + 1))
			return report(on_error, ctx, source, line, "bad value for %s: '%s'", key,
				      eq + 1);
		return options_parse_file(o, o->config, on_error, ctx);
	}
	rc = apply(o, key, eq + 1);
	if (rc == -2)
		return report(on_error, ctx, source, line, "unknown option '%s'%s", key, "");
	if (rc)
		return report(on_error, ctx, source, line,
			      "bad value for %s: '%s', keeping the default", key, eq + 1);
	return 0;
}

int options_parse_line(struct sarnue_options *o, const char *text, const char *source,
		       unsigned line, opt_error_fn on_error, void *ctx)
{
	char *copy, *tok, *save = NULL;
	int errors = 0;

	if (!text)
		return 0;
	copy = strdup(text);
	if (!copy)
		return report(on_error, ctx, source, line, "out of memory%s%s", "", "");
	for (tok = strtok_r(copy, " \t\r\n", &save); tok; tok = strtok_r(NULL, " \t\r\n", &save)) {
		sn_assert(*tok);
		if (*tok == '#')
			break;
		errors += options_set(o, tok, source, line, on_error, ctx);
	}
	free(copy);
	return errors;
}

static int options_parse_file(struct sarnue_options *o, const char *path, opt_error_fn on_error,
			      void *ctx)
{
	struct line_reader lr;
	char *line;
	int errors = 0;

	if (line_reader_open(&lr, path, FAB_LIMIT_CONFIG))
		return report(on_error, ctx, path, 0, "cannot open config file: %s%s",
			      fab_strerror(errno), "");
	while ((line = line_reader_next(&lr))) {
		/* A config file naming another (or itself) could recurse forever. */
		if (strstr(line, "config=")) {
			errors += report(on_error, ctx, path, lr.lineno,
					 "config= is not allowed inside a config file%s%s", "", "");
			continue;
		}
		errors += options_parse_line(o, line, path, lr.lineno, on_error, ctx);
	}
	if (line_reader_failed(&lr))
		errors += report(on_error, ctx, path, lr.lineno, "%s%s",
				 "stopped reading: ", fab_strerror(lr.error));
	line_reader_close(&lr);
	return errors;
}

enum path_sl_form options_path_sl_form(const struct sarnue_options *o)
{
	switch (o->dump_path_sl) {
	case OPT_DUMP_PATH_SL_FULL:
		return PATH_SL_FULL;
	case OPT_DUMP_PATH_SL_COMPACT:
		return PATH_SL_COMPACT;
	case OPT_DUMP_PATH_SL_AUTO:
		break;
	}
	return PATH_SL_AUTO;
}
