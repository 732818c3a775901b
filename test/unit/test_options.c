/*
 * test_options.c - the key=value option parser shared by the plugin and `sarnue route`: valid
 * pairs apply, an unknown key or a bad value is reported by name and leaves the default.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "engines/options.h"

struct errors {
	int n;
	char last[512];
};

static void collect(void *ctx, const char *msg)
{
	struct errors *e = ctx;

	e->n++;
	snprintf(e->last, sizeof(e->last), "%s", msg);
}

static void test_valid(void)
{
	struct sarnue_options o;
	struct errors e = { 0, "" };

	options_defaults(&o);
	CHECK(options_parse_line(&o,
				 "nue_vls=4  job_map=/etc/opensm/jobs verify=no "
				 "updn_roots=0x10,0x20 dump=always job_host_match=description "
				 "nue_rebalance=no nue_threads=1 nue_orders=1 nue_layer_tries=2",
				 "event_plugin_options", 0, collect, &e) == 0);
	CHECK(e.n == 0);
	CHECK(o.nue_vls == 4 && o.verify == 0 && o.dump == OPT_DUMP_ALWAYS);
	CHECK(!strcmp(o.job_map, "/etc/opensm/jobs"));
	CHECK(o.n_updn_roots == 2 && o.updn_roots[1] == 0x20);
	CHECK(o.job_host_match == JOB_MATCH_DESCRIPTION);
	CHECK(o.nue_rebalance == 0 && o.nue_threads == 1 && o.nue_orders == 1);
	CHECK(o.nue_layer_tries == 2);
	CHECK(options_parse_line(&o, "nue_layer_tries=7", "epo", 0, collect, &e) == 1);
	CHECK(o.nue_layer_tries == 2 &&
	      strstr(e.last, "bad value for nue_layer_tries: '7'") != NULL);
	CHECK(o.nue_group == OPT_NUE_GROUP_AUTO);
	CHECK(options_parse_line(&o, "nue_group=yes", "epo", 0, collect, &e) == 0);
	CHECK(o.nue_group == OPT_NUE_GROUP_YES);
	CHECK(options_parse_line(&o, "nue_group=always", "epo", 0, collect, &e) == 1);
	CHECK(o.nue_group == OPT_NUE_GROUP_YES &&
	      strstr(e.last, "bad value for nue_group: 'always'") != NULL);
	CHECK(options_parse_line(&o, "nue_orders=0", "epo", 0, collect, &e) == 1);
	CHECK(o.nue_orders == 1 && strstr(e.last, "bad value for nue_orders: '0'") != NULL);
	CHECK(options_parse_line(&o, "nue_threads=3", "epo", 0, collect, &e) == 1);
	CHECK(o.nue_threads == 1 && strstr(e.last, "bad value for nue_threads: '3'") != NULL);
	CHECK(options_parse_line(&o, "nue_threads=auto", "epo", 0, collect, &e) == 0);
	CHECK(o.nue_threads == 0);
	CHECK(o.nue_partition_metis == 0);
	CHECK(options_parse_line(&o, "nue_partition=metis", "epo", 0, collect, &e) == 0);
	CHECK(o.nue_partition_metis == 1);
	CHECK(options_parse_line(&o, "nue_partition=torus", "epo", 0, collect, &e) == 1);
	CHECK(o.nue_partition_metis == 1 &&
	      strstr(e.last, "bad value for nue_partition: 'torus'") != NULL);
	CHECK(options_parse_line(&o, "nue_partition=auto", "epo", 0, collect, &e) == 0);
	CHECK(o.nue_partition_metis == 0);
	CHECK(options_parse_line(&o, "job_host_match=last-word", "epo", 0, collect, &e) == 1);
	CHECK(o.job_host_match == JOB_MATCH_DESCRIPTION);
	CHECK(o.dfsssp_judge_overflow == 1);
	CHECK(options_parse_line(&o, "dfsssp_judge_overflow=no", "epo", 0, collect, &e) == 0);
	CHECK(o.dfsssp_judge_overflow == 0);
	CHECK(options_parse_line(&o, "dfsssp_judge_overflow=maybe", "epo", 0, collect, &e) == 1);
	CHECK(o.dfsssp_judge_overflow == 0 &&
	      strstr(e.last, "bad value for dfsssp_judge_overflow: 'maybe'") != NULL);
}

static void test_errors_keep_defaults(void)
{
	struct sarnue_options o;
	struct errors e = { 0, "" };

	options_defaults(&o);
	CHECK(options_parse_line(&o, "nue_vls=99 verify=maybe colour=blue nue_vls=2", "epo", 0,
				 collect, &e) == 3);
	CHECK(o.nue_vls == 2 && o.verify == 1 && o.nue_rebalance == 1 && o.nue_orders == 2);
	CHECK(o.nue_layer_tries == 6);
	CHECK(strstr(e.last, "unknown option 'colour'") != NULL);
	/* Signs: strtoul took "+3" as 3 and wrapped "-1" to a huge number. */
	CHECK(options_parse_line(&o, "nue_vls=+3 update_rounds=-1 nue_vls=3x", "epo", 0, collect,
				 &e) == 3);
	CHECK(o.nue_vls == 2 && o.update_rounds == 5);
	CHECK(strstr(e.last, "bad value for nue_vls: '3x'") != NULL);
	e.n = 0;
	options_defaults(&o);
	options_parse_line(&o, "updn_roots=0x10,zz", "epo", 0, collect, &e);
	CHECK(e.n == 1 && o.n_updn_roots == 0);
	CHECK(strstr(e.last, "bad value for updn_roots: '0x10,zz'") != NULL);
	/* strtoull took a sign and wrapped it into a GUID nobody wrote. */
	e.n = 0;
	options_parse_line(&o, "updn_roots=-1", "epo", 0, collect, &e);
	CHECK(e.n == 1 && o.n_updn_roots == 0);
	options_parse_line(&o, "updn_roots=0x10,", "epo", 0, collect, &e);
	CHECK(e.n == 2 && o.n_updn_roots == 0);
	CHECK(options_parse_line(&o, "updn_roots=0x10,32", "epo", 0, collect, &e) == 0);
	CHECK(o.n_updn_roots == 2 && o.updn_roots[0] == 0x10 && o.updn_roots[1] == 32);
	options_parse_line(&o, "novalue", "epo", 0, collect, &e);
	CHECK(strstr(e.last, "'novalue' is not key=value") != NULL);
}

/* The control socket: absolute path or off, owner read/write always kept, a group name. */
static void test_ctl_socket(void)
{
	struct sarnue_options o;
	struct errors e = { 0, "" };

	options_defaults(&o);
	CHECK(!strcmp(o.ctl_socket, OPT_DEFAULT_CTL_SOCKET) && o.ctl_mode == 0660);
	CHECK(options_parse_line(&o, "ctl_socket=/var/run/x.sock ctl_mode=0600 ctl_group=slurm",
				 "epo", 0, collect, &e) == 0);
	CHECK(!strcmp(o.ctl_socket, "/var/run/x.sock") && o.ctl_mode == 0600);
	CHECK(!strcmp(o.ctl_group, "slurm"));
	CHECK(options_parse_line(&o, "ctl_socket=off", "epo", 0, collect, &e) == 0);
	CHECK(o.ctl_socket[0] == '\0');
	CHECK(options_parse_line(&o,
				 "ctl_socket=relative.sock ctl_mode=0400 ctl_mode=0999 "
				 "ctl_mode=660x",
				 "epo", 0, collect, &e) == 4);
	CHECK(o.ctl_socket[0] == '\0' && o.ctl_mode == 0600);
	CHECK(strstr(e.last, "bad value for ctl_mode: '660x'") != NULL);
	/* strtoul took a sign; octal digits only, and no overflow past 0777 wraps back in. */
	CHECK(options_parse_line(&o, "ctl_mode=+0660 ctl_mode=-0660 ctl_mode=010000660", "epo", 0,
				 collect, &e) == 3);
	CHECK(o.ctl_mode == 0600);
	CHECK(options_parse_line(&o, "ctl_mode=00640", "epo", 0, collect, &e) == 0);
	CHECK(o.ctl_mode == 0640);
	/* A world-accessible mode parses; ctl_world says whether the plugin may use it. */
	CHECK(!o.ctl_world);
	CHECK(options_parse_line(&o, "ctl_mode=0666 ctl_world=yes", "epo", 0, collect, &e) == 0);
	CHECK(o.ctl_mode == 0666 && o.ctl_world);
	CHECK(options_parse_line(&o, "ctl_world=maybe", "epo", 0, collect, &e) == 1);
	CHECK(o.ctl_world);
}

/* The five-phase update: mode, timeout, policy, retry interval and rounds, with ranges. */
static void test_update(void)
{
	struct sarnue_options o;
	struct errors e = { 0, "" };

	options_defaults(&o);
	CHECK(o.update == OPT_UPDATE_AUTO && o.update_timeout == 60 && !o.update_proceed);
	CHECK(o.update_retry == 2 && o.update_rounds == 5);
	CHECK(options_parse_line(&o,
				 "update=five-phase update_timeout=8 update_on_timeout=proceed "
				 "update_retry=1 update_rounds=3",
				 "epo", 0, collect, &e) == 0);
	CHECK(o.update == OPT_UPDATE_FIVE_PHASE && o.update_timeout == 8 && o.update_proceed);
	CHECK(o.update_retry == 1 && o.update_rounds == 3);
	CHECK(options_parse_line(&o, "update=plain update_on_timeout=abort", "epo", 0, collect,
				 &e) == 0);
	CHECK(o.update == OPT_UPDATE_PLAIN && !o.update_proceed);
	CHECK(options_parse_line(&o,
				 "update=sometimes update_timeout=0 update_timeout=3601 "
				 "update_on_timeout=maybe update_retry=61 update_rounds=0",
				 "epo", 0, collect, &e) == 6);
	CHECK(o.update == OPT_UPDATE_PLAIN && o.update_timeout == 8 && o.update_retry == 1);
	CHECK(strstr(e.last, "bad value for update_rounds: '0'") != NULL);
}

/* traffic=perfmgr and its window, with the window's range. */
static void test_traffic(void)
{
	struct sarnue_options o;
	struct errors e = { 0, "" };

	options_defaults(&o);
	CHECK(!o.traffic[0] && o.traffic_window == 600);
	CHECK(options_parse_line(&o, "traffic=perfmgr traffic_window=30", "epo", 0, collect, &e) ==
	      0);
	CHECK(!strcmp(o.traffic, OPT_TRAFFIC_PERFMGR) && o.traffic_window == 30);
	CHECK(options_parse_line(&o, "traffic_window=0 traffic_window=86401 traffic_window=x",
				 "epo", 0, collect, &e) == 3);
	CHECK(o.traffic_window == 30);
	CHECK(strstr(e.last, "bad value for traffic_window: 'x'") != NULL);
}

static void test_config_file(void)
{
	char path[] = "/tmp/sarnue-opt-XXXXXX", line[1200];
	struct sarnue_options o;
	struct errors e = { 0, "" };
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");

	fputs("# sarnue options\nnue_vls=3\n\nverify=sometimes\n", f);
	fclose(f);
	options_defaults(&o);
	snprintf(line, sizeof(line), "config=%s dump=never", path);
	CHECK(options_parse_line(&o, line, "epo", 0, collect, &e) == 1);
	CHECK(o.nue_vls == 3 && o.dump == OPT_DUMP_NEVER && o.verify == 1);
	/* The error names the file and line. */
	CHECK(strstr(e.last, path) && strstr(e.last, ":4:"));
	unlink(path);
	e.n = 0;
	options_parse_line(&o, "config=/nonexistent/sarnue.conf", "epo", 0, collect, &e);
	CHECK(e.n == 1 && strstr(e.last, "cannot open config file"));
}

/* Two planes: off and auto by default; bad values keep them and name the key. */
static void test_planes(void)
{
	struct sarnue_options o;
	struct errors e = { 0, "" };

	options_defaults(&o);
	CHECK(o.planes == 0 && o.escape == OPT_ESCAPE_AUTO);
	CHECK(options_parse_line(&o, "planes=on escape=nue", "epo", 0, collect, &e) == 0);
	CHECK(o.planes == 1 && o.escape == OPT_ESCAPE_NUE);
	CHECK(options_parse_line(&o, "escape=updn planes=off", "epo", 0, collect, &e) == 0);
	CHECK(o.planes == 0 && o.escape == OPT_ESCAPE_UPDN);
	CHECK(options_parse_line(&o, "planes=maybe escape=lash", "epo", 0, collect, &e) == 2);
	CHECK(o.planes == 0 && o.escape == OPT_ESCAPE_UPDN);
	CHECK(strstr(e.last, "bad value for escape: 'lash'") != NULL);
	CHECK(strstr(options_help, "planes=on|off") && strstr(options_help, "escape=auto"));
}

/*
 * storage_nodes is an fnmatch glob: one that fnmatch would take literally (an unclosed '[',
 * a trailing '\') matched nothing without a word; it is a bad value, and the last good one
 * stays.
 */
static void test_storage_pattern(void)
{
	static const char *const good[] = { "io*",	    "io[0-9]*", "[!a]x",     "[]x]",
					    "[[:digit:]]*", "a\\[b",	"st[[.-.]]x" };
	static const char *const bad[] = { "[", "io[0-9", "x\\", "[]", "[[:digit:]", "a[[.-]" };
	struct sarnue_options o;
	struct errors e = { 0, "" };
	char pair[128];
	unsigned i;

	options_defaults(&o);
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(pair, sizeof(pair), "storage_nodes=%s", good[i]);
		CHECK(options_parse_line(&o, pair, "epo", 0, collect, &e) == 0 &&
		      !strcmp(o.storage_nodes, good[i]));
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(pair, sizeof(pair), "storage_nodes=%s", bad[i]);
		e.n = 0;
		CHECK(options_parse_line(&o, pair, "epo", 0, collect, &e) == 1 && e.n == 1 &&
		      strstr(e.last, "bad value for storage_nodes") &&
		      !strcmp(o.storage_nodes, good[sizeof(good) / sizeof(good[0]) - 1]));
	}
}

int main(void)
{
	test_valid();
	test_errors_keep_defaults();
	test_ctl_socket();
	test_update();
	test_traffic();
	test_config_file();
	test_planes();
	test_storage_pattern();
	return CHECK_RESULT();
}
