/*
 * test_filterd.c - the parts of sarnue-filterd that decide: hostlist expansion (ranges, widths,
 * several bracket groups, malformed input with its column), squeue's JSON and text output
 * (both JSON layouts, garbage rejected with line and column, values Slurm never writes refused
 * naming the job), the topology lookup, the multi-switch job set and its host budgets, and the
 * reroute decision (symmetric, job ids ignored, hysteresis).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "lib/hostlist.h"
#include "filterd/jobfilter.h"
#include "lib/json.h"
#include "filterd/slurmjobs.h"
#include "testfab.h"

/* Expands expr and compares with the space-separated names in want. */
static int expands_to(const char *expr, const char *want)
{
	struct hostlist hl;
	struct fab_error err;
	char got[4096];
	size_t pos = 0;
	uint32_t i;
	int ok;

	hostlist_init(&hl);
	if (hostlist_expand(&hl, expr, strlen(expr), "test", &err)) {
		fprintf(stderr, "%s: %s\n", expr, err.msg);
		hostlist_free(&hl);
		return 0;
	}
	got[0] = '\0';
	for (i = 0; i < hl.n && pos < sizeof(got); i++)
		pos += (size_t)snprintf(got + pos, sizeof(got) - pos, "%s%s", i ? " " : "",
					hostlist_get(&hl, i));
	ok = !strcmp(got, want);
	if (!ok)
		fprintf(stderr, "%s: got '%s', want '%s'\n", expr, got, want);
	hostlist_free(&hl);
	return ok;
}

/* Expansion fails and the message contains want (e.g. "column 7"). */
static int rejects(const char *expr, const char *want)
{
	struct hostlist hl;
	struct fab_error err;
	int ok;

	hostlist_init(&hl);
	hostlist_add(&hl, "keep", 4);
	ok = hostlist_expand(&hl, expr, strlen(expr), "nodes", &err) == -1 &&
	     strstr(err.msg, want) && hl.n == 1 && !strcmp(hostlist_get(&hl, 0), "keep");
	if (!ok)
		fprintf(stderr, "'%s': want an error with '%s', got '%s' (%u names)\n", expr, want,
			err.msg, hl.n);
	hostlist_free(&hl);
	return ok;
}

static void test_hostlist(void)
{
	struct hostlist hl;
	struct fab_error err;
	char big[64];

	CHECK(expands_to("node1", "node1"));
	CHECK(expands_to("a,b,c", "a b c"));
	CHECK(expands_to("node[1-3]", "node1 node2 node3"));
	CHECK(expands_to("n[08-11]", "n08 n09 n10 n11"));
	CHECK(expands_to("n[98-101]", "n98 n99 n100 n101"));
	CHECK(expands_to("node[001-003,052]", "node001 node002 node003 node052"));
	CHECK(expands_to("r[1-2]n[01-02]", "r1n01 r1n02 r2n01 r2n02"));
	CHECK(expands_to("r[1,3]-n[5]x", "r1-n5x r3-n5x"));
	CHECK(expands_to("a[1-2],b,c[7]", "a1 a2 b c7"));
	CHECK(expands_to("[1-2]", "1 2"));
	/* The example: 41 names, first, 40th and last checked. */
	hostlist_init(&hl);
	CHECK(!hostlist_expand(&hl, "node[001-040,052]", 17, "t", &err));
	CHECK(hl.n == 41);
	CHECK(hl.n == 41 && !strcmp(hostlist_get(&hl, 0), "node001") &&
	      !strcmp(hostlist_get(&hl, 39), "node040") &&
	      !strcmp(hostlist_get(&hl, 40), "node052"));
	/* Appends; a copy is identical. */
	CHECK(!hostlist_expand(&hl, "x", 1, "t", &err) && hl.n == 42);
	hostlist_free(&hl);

	CHECK(rejects("", "empty host list"));
	CHECK(rejects("a,,b", "column 3: empty host name"));
	CHECK(rejects("a,", "column 3: empty host name"));
	CHECK(rejects("node[1-3", "column 5: '[' without ']'"));
	CHECK(rejects("node[1-", "column 8: unexpected end"));
	CHECK(rejects("node1-3]", "column 8: ']' without '['"));
	CHECK(rejects("node[]", "column 6: expected a number"));
	CHECK(rejects("node[a-b]", "column 6: expected a number"));
	CHECK(rejects("node[5-3]", "column 6: range ends below its start"));
	CHECK(rejects("n[1-[2-3]]", "column 5: nested '['"));
	CHECK(rejects("n[1[2]]", "column 4: nested '['"));
	CHECK(rejects("n[1-2;3]", "column 6: expected ','"));
	CHECK(rejects("no de", "column 3: invalid character"));
	CHECK(rejects("n[1234567890]", "number too long"));
	snprintf(big, sizeof(big), "a[1-2000]b[1-2000]");
	CHECK(rejects(big, "expands to more than"));
}

static void test_json_reader(void)
{
	static const char doc[] = "{\"a\": [1, -2.5e3, true, false, null, \"x\\u00e9\\n\"],"
				  " \"b\": {\"c\": \"\\ud83d\\ude00\"}}";
	struct fab_error err;
	struct json_buf key = { 0 }, val = { 0 };
	struct json j;
	unsigned i = 0;
	int found = 0;

	json_init(&j, doc, strlen(doc), "doc", &err);
	CHECK(!json_object_begin(&j));
	while (json_object_next(&j, &i, &key) > 0) {
		if (!strcmp(key.s, "b")) {
			unsigned k = 0;

			CHECK(!json_object_begin(&j));
			CHECK(json_object_next(&j, &k, &key) == 1 && !strcmp(key.s, "c"));
			CHECK(!json_string(&j, &val) && !strcmp(val.s, "\xf0\x9f\x98\x80"));
			CHECK(json_object_next(&j, &k, &key) == 0);
			found = 1;
		} else {
			CHECK(!json_skip(&j));
		}
	}
	CHECK(found && !json_end(&j));

	/* Errors name line and column. */
	json_init(&j, "{\"a\":\n  [1 2]}", 14, "doc", &err);
	CHECK(json_skip(&j) == -1 && strstr(err.msg, "doc: line 2, column 6: expected ','"));
	json_init(&j, "{\"a\": tru}", 10, "doc", &err);
	CHECK(json_skip(&j) == -1 && strstr(err.msg, "invalid literal"));
	json_init(&j, "[\"a\x01\"]", 5, "doc", &err);
	CHECK(json_skip(&j) == -1 && strstr(err.msg, "control character"));
	json_init(&j, "[01]", 4, "doc", &err);
	CHECK(json_skip(&j) == -1);
	json_buf_free(&key);
	json_buf_free(&val);
}

/* What the writer escapes reads back unchanged, and it writes nothing else escaped. */
static void test_json_writer(void)
{
	static const char text[] = "say \"hi\" \\ tab\there\nline\x01 caf\xc3\xa9";
	struct json_buf val = { 0 };
	struct fab_error err;
	struct json j;
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	out = open_memstream(&buf, &len);
	CHECK(out != NULL);
	if (!out)
		return;
	json_write_string(out, text);
	fclose(out);
	CHECK(!strcmp(buf, "\"say \\\"hi\\\" \\\\ tab\\u0009here\\u000aline\\u0001 caf\xc3\xa9\""));
	json_init(&j, buf, len, "written", &err);
	CHECK(!json_string(&j, &val) && !strcmp(val.s, text) && !json_end(&j));
	json_buf_free(&val);
	free(buf);
}

/* Slurm 22.05 layout: plain state and minutes; 23.02+: state array, time limit object. */
static const char squeue_2205[] =
	"{\"meta\": {\"plugin\": {\"type\": \"openapi/v0.0.38\"}}, \"errors\": [],\n"
	" \"jobs\": [\n"
	"  {\"job_id\": 11, \"job_state\": \"RUNNING\", \"nodes\": \"node[0001-0004]\","
	"   \"partition\": \"all\", \"time_limit\": 60, \"array_task_id\": null,"
	"   \"job_resources\": {\"nodes\": \"x\", \"allocated_nodes\": [{\"nodename\": \"y\"}]}},\n"
	"  {\"job_id\": 12, \"job_state\": \"PENDING\", \"nodes\": \"\", \"partition\": \"all\","
	"   \"time_limit\": 4294967295},\n"
	"  {\"job_id\": 13, \"job_state\": \"RUNNING\", \"nodes\": \"node0005\","
	"   \"partition\": \"debug\", \"time_limit\": 4294967295}\n"
	" ]}\n";

static const char squeue_2302[] =
	"{\"jobs\": [{\"job_id\": 21, \"job_state\": [\"RUNNING\"], \"nodes\": \"n[1-2]\","
	" \"partition\": \"p\", \"time_limit\": {\"set\": true, \"infinite\": false, \"number\": 5}},"
	" {\"job_id\": 22, \"job_state\": [\"RUNNING\", \"COMPLETING\"], \"nodes\": \"n3\","
	" \"partition\": \"p\", \"time_limit\": {\"set\": true, \"infinite\": true, \"number\": 0}}],"
	" \"meta\": {}}";

static void test_squeue_json(void)
{
	struct slurm_jobs s;
	struct fab_error err;
	char garbage[sizeof(squeue_2205)];

	slurm_jobs_init(&s);
	CHECK(!slurm_jobs_parse_json(&s, squeue_2205, strlen(squeue_2205), "sq", &err));
	CHECK(s.n == 3);
	if (s.n == 3) {
		CHECK(!strcmp(slurm_str(&s, s.v[0].id), "11") && s.v[0].running &&
		      !strcmp(slurm_str(&s, s.v[0].nodes), "node[0001-0004]") &&
		      !strcmp(slurm_str(&s, s.v[0].partition), "all") && s.v[0].time_limit == 60);
		CHECK(!s.v[1].running && s.v[1].time_limit == SLURM_TIME_UNLIMITED);
		CHECK(s.v[2].running && !strcmp(slurm_str(&s, s.v[2].partition), "debug"));
	}
	CHECK(!slurm_jobs_parse_json(&s, squeue_2302, strlen(squeue_2302), "sq", &err));
	CHECK(s.n == 2 && s.v[0].running && s.v[0].time_limit == 5 && s.v[1].running &&
	      s.v[1].time_limit == SLURM_TIME_UNLIMITED);

	/* Truncated output, garbage, wrong shapes: rejected whole, position named. */
	CHECK(slurm_jobs_parse_json(&s, squeue_2205, 200, "sq", &err) == -1 && s.n == 0 &&
	      strstr(err.msg, "sq: line "));
	CHECK(slurm_jobs_parse_json(&s, "garbage", 7, "sq", &err) == -1 &&
	      strstr(err.msg, "line 1, column 1: expected an object"));
	CHECK(slurm_jobs_parse_json(&s, "", 0, "sq", &err) == -1 &&
	      strstr(err.msg, "unexpected end"));
	CHECK(slurm_jobs_parse_json(&s, "{\"meta\": {}}", 12, "sq", &err) == -1 &&
	      strstr(err.msg, "no \"jobs\""));
	CHECK(slurm_jobs_parse_json(&s, "{\"jobs\": {}}", 12, "sq", &err) == -1 &&
	      strstr(err.msg, "expected an array"));
	CHECK(slurm_jobs_parse_json(&s, "{\"jobs\": [{\"nodes\": \"a\"}]}", 26, "sq", &err) == -1 &&
	      strstr(err.msg, "job_id"));
	CHECK(slurm_jobs_parse_json(&s, "{\"jobs\": []} x", 14, "sq", &err) == -1 &&
	      strstr(err.msg, "unexpected text after"));
	CHECK(slurm_jobs_parse_json(&s, "{\"jobs\": [{\"job_id\": 1, \"time_limit\": 2.5}]}", 44,
				    "sq", &err) == -1 &&
	      strstr(err.msg, "time_limit"));
	/* Past 2^64 a double has no integer to convert to: unlimited, like INFINITE. */
	{
		static const char huge[] =
			"{\"jobs\": [{\"job_id\": 1, \"time_limit\": 88888888888888888888888}]}";
		static const char negative[] = "{\"jobs\": [{\"job_id\": 1, \"time_limit\": -1}]}";

		CHECK(!slurm_jobs_parse_json(&s, huge, strlen(huge), "sq", &err) && s.n == 1 &&
		      s.v[0].time_limit == SLURM_TIME_UNLIMITED);
		CHECK(slurm_jobs_parse_json(&s, negative, strlen(negative), "sq", &err) == -1 &&
		      strstr(err.msg, "time_limit"));
	}
	memcpy(garbage, squeue_2205, sizeof(garbage));
	garbage[150] = '\x07';
	CHECK(slurm_jobs_parse_json(&s, garbage, strlen(garbage), "sq", &err) == -1);
	CHECK(!slurm_jobs_parse_json(&s, "{\"jobs\": []}", 12, "sq", &err) && s.n == 0);
	slurm_jobs_free(&s);
}

/* json (len SIZE_MAX: up to its NUL) rejected, and the message contains want. */
static int json_rejects(const char *json, size_t len, const char *want)
{
	struct slurm_jobs s;
	struct fab_error err = { "" };
	int ok;

	if (len == SIZE_MAX)
		len = strlen(json);
	slurm_jobs_init(&s);
	ok = slurm_jobs_parse_json(&s, json, len, "sq", &err) == -1 && s.n == 0 &&
	     strstr(err.msg, want);
	if (!ok)
		fprintf(stderr, "want an error with '%s', got '%s'\n", want, err.msg);
	slurm_jobs_free(&s);
	return ok;
}

#define JOB_PREFIX "{\"jobs\": [{\"job_id\": 7, \"job_state\": \"RUNNING\", "

/*
 * Values squeue never writes: a NUL would cut "host3\u0000,host5" to host3 (a two-leaf job
 * taken as single-switch), a number for the node list became host "42", and a running job with
 * null nodes passed as a job without nodes.  Each refuses the poll, naming the job.
 */
static void test_squeue_hostile(void)
{
	static const char raw_nul[] = JOB_PREFIX "\"nodes\": \"host3\0,host5\"}]}";
	static const char pending[] =
		"{\"jobs\": [{\"job_id\": \"8\", \"job_state\": \"PENDING\", \"nodes\": null,"
		" \"partition\": null}, {\"job_id\": 9, \"job_state\": [\"PENDING\"], \"nodes\": \"\"}]}";
	struct slurm_jobs s;
	struct fab_error err;

	CHECK(json_rejects(JOB_PREFIX "\"nodes\": \"host3\\u0000,host5\"}]}", SIZE_MAX,
			   "job 7: \"nodes\" contains a NUL character"));
	CHECK(json_rejects(raw_nul, sizeof(raw_nul) - 1, "sq: line 1, column "));
	CHECK(json_rejects(JOB_PREFIX "\"nodes\": 42}]}", SIZE_MAX,
			   "job 7: \"nodes\" is a number, expected a string"));
	CHECK(json_rejects(JOB_PREFIX "\"nodes\": [\"a\"]}]}", SIZE_MAX,
			   "job 7: \"nodes\" is not a string"));
	CHECK(json_rejects(JOB_PREFIX "\"nodes\": null}]}", SIZE_MAX,
			   "job 7: \"nodes\" is missing or null, but the job is RUNNING"));
	CHECK(json_rejects(JOB_PREFIX "\"partition\": \"p\"}]}", SIZE_MAX,
			   "job 7: \"nodes\" is missing"));
	CHECK(json_rejects(JOB_PREFIX "\"nodes\": \"a\", \"partition\": 3}]}", SIZE_MAX,
			   "job 7: \"partition\" is a number"));
	CHECK(json_rejects(JOB_PREFIX "\"nodes\": \"a\", \"partition\": \"p\\u0000\"}]}", SIZE_MAX,
			   "job 7: \"partition\" contains a NUL"));
	CHECK(json_rejects("{\"jobs\": [{\"job_id\": 7, \"job_state\": [\"RUNNING\\u0000\"]}]}",
			   SIZE_MAX, "job 7: \"job_state\" contains a NUL"));
	CHECK(json_rejects("{\"jobs\": [{\"job_id\": 7, \"job_state\": 1}]}", SIZE_MAX,
			   "job 7: \"job_state\" is neither"));
	CHECK(json_rejects("{\"jobs\": [{\"job_id\": 7.5}]}", SIZE_MAX,
			   "job #1 of the list: \"job_id\" is not a whole number"));
	CHECK(json_rejects("{\"jobs\": [{\"job_id\": null}]}", SIZE_MAX,
			   "\"job_id\" is null, expected a string"));
	CHECK(json_rejects("{\"jobs\": [{\"job_id\": 1}, {\"nodes\": false, \"job_id\": 2}]}",
			   SIZE_MAX, "job #2 of the list: \"nodes\" is not a string"));
	/* A key with a NUL inside is another key, not "nodes". */
	CHECK(json_rejects(JOB_PREFIX "\"nodes\\u0000x\": \"host3\"}]}", SIZE_MAX,
			   "\"nodes\" is missing"));

	/* What Slurm does write still parses: a pending job with null or empty nodes. */
	slurm_jobs_init(&s);
	CHECK(!slurm_jobs_parse_json(&s, pending, strlen(pending), "sq", &err));
	CHECK(s.n == 2 && !s.v[0].running && !slurm_str(&s, s.v[0].nodes)[0] &&
	      !strcmp(slurm_str(&s, s.v[0].id), "8") && !strcmp(slurm_str(&s, s.v[1].id), "9"));
	slurm_jobs_free(&s);
}

static void test_squeue_text(void)
{
	static const char out[] = "101 RUNNING batch 1-00:00:00 node[0001-0002]\n"
				  "102 RUNNING debug 5:00 node0003\n"
				  "103 PENDING batch UNLIMITED\n"
				  "\n"
				  "104 RUNNING batch 2:00:00 n[1-3],m4\n";
	struct slurm_jobs s;
	struct fab_error err;
	uint32_t m;

	slurm_jobs_init(&s);
	CHECK(!slurm_jobs_parse_text(&s, out, strlen(out), "sq", &err));
	CHECK(s.n == 4);
	if (s.n == 4) {
		CHECK(s.v[0].time_limit == 1440 && s.v[0].running &&
		      !strcmp(slurm_str(&s, s.v[0].nodes), "node[0001-0002]"));
		CHECK(s.v[1].time_limit == 5 && !strcmp(slurm_str(&s, s.v[1].partition), "debug"));
		CHECK(!s.v[2].running && !slurm_str(&s, s.v[2].nodes)[0] &&
		      s.v[2].time_limit == SLURM_TIME_UNLIMITED);
		CHECK(s.v[3].time_limit == 120);
	}
	CHECK(slurm_jobs_parse_text(&s, "101 RUNNING\n", 12, "sq", &err) == -1 && s.n == 0 &&
	      strstr(err.msg, "sq:1: expected"));
	CHECK(slurm_jobs_parse_text(&s, "1 RUNNING p 10:00 a\n2 RUNNING p soon b\n", 39, "sq",
				    &err) == -1 &&
	      strstr(err.msg, "sq:2: column 13: bad time limit 'soon'"));
	CHECK(slurm_jobs_parse_text(&s, "1 R p 1 a b c\n", 14, "sq", &err) == -1);
	CHECK(slurm_jobs_parse_text(&s, "1 R p 1\0 a\n", 11, "sq", &err) == -1 &&
	      strstr(err.msg, "NUL"));

	CHECK(!slurm_parse_time("30", 2, &m) && m == 30);
	CHECK(!slurm_parse_time("9:30", 4, &m) && m == 10);
	CHECK(!slurm_parse_time("1:00:00", 7, &m) && m == 60);
	CHECK(!slurm_parse_time("2-3", 3, &m) && m == 2 * 1440 + 180);
	CHECK(!slurm_parse_time("1-00:01", 7, &m) && m == 1441);
	CHECK(!slurm_parse_time("UNLIMITED", 9, &m) && m == SLURM_TIME_UNLIMITED);
	CHECK(slurm_parse_time("", 0, &m) == -1);
	CHECK(slurm_parse_time("1:2:3:4", 7, &m) == -1);
	CHECK(slurm_parse_time("1-2-3", 5, &m) == -1);
	CHECK(slurm_parse_time("x", 1, &m) == -1);
	slurm_jobs_free(&s);
}

/* Fabric: 3 leaf switches in a line with 4 hosts each, "host0".."host11" (host k on switch k / 4).
 */
static int build_topo(struct topo *t)
{
	static const unsigned links[][2] = { { 0, 1 }, { 1, 2 } };
	unsigned hosts[3] = { 4, 4, 4 };
	struct fabric f;
	struct fab_error err;
	int ret;

	if (testfab_build_hosts(&f, 3, hosts, 1, links, 2, 0))
		return -1;
	topo_init(t);
	ret = topo_from_fabric(t, &f, JOB_MATCH_FIRST_WORD, &err);
	fabric_free(&f);
	if (ret)
		return -1;
	return 0;
}

static void test_topology(void)
{
	struct topo t, c, s;
	struct fab_error err;
	uint32_t h;
	FILE *fp;
	char path[] = "/tmp/sarnue-topoconf-XXXXXX";
	int fd;

	CHECK(!build_topo(&t));
	CHECK(topo_hosts(&t) == 12 && t.nleaves == 3);
	h = topo_find(&t, "host5", 5);
	CHECK(h != FAB_NONE && t.leaf_off[h + 1] - t.leaf_off[h] == 1);
	CHECK(topo_find(&t, "host", 4) == FAB_NONE && topo_find(&t, "host55", 6) == FAB_NONE);
	CHECK(topo_find(&t, "host5x", 5) == h);

	topo_init(&c);
	CHECK(!topo_from_ctl(&c,
			     "host a 0x1 0x11 0x0000000000001000\n"
			     "host dual 0x2 0x21 0x0000000000001000\n"
			     "host dual 0x3 0x31 0x0000000000001001\n",
			     "ctl", &err));
	h = topo_find(&c, "dual", 4);
	CHECK(topo_hosts(&c) == 2 && c.nleaves == 2 && h != FAB_NONE &&
	      c.leaf_off[h + 1] - c.leaf_off[h] == 2 && c.ports == 3);
	topo_free(&c);
	topo_init(&c);
	CHECK(topo_from_ctl(&c, "host a 0x1\n", "ctl", &err) == -1 &&
	      strstr(err.msg, "ctl: reply line 1"));
	topo_free(&c);
	/* An empty reply (no hosts routed yet) is an empty topology; nothing to copy or sort. */
	topo_init(&c);
	CHECK(!topo_from_ctl(&c, "", "ctl", &err) && topo_hosts(&c) == 0 && c.nleaves == 0);
	topo_free(&c);
	/* sscanf took a negative GUID and wrapped a 17-digit one: GUIDs are 0x and 1-16 digits. */
	{
		static const char *const bad[] = {
			"host a -0x1 0x2 0x3",	    "host a 0x1 0x2 0x12345678901234567",
			"host a 0x1 0x2 0x3 extra", "host a 0x1 0x2 0x3x",
			"hosta 0x1 0x2 0x3",	    "host  0x1 0x2 0x3",
			"host a 1 0x2 0x3",
		};
		char longname[400];
		unsigned i;

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			topo_init(&c);
			CHECK(topo_from_ctl(&c, bad[i], "ctl", &err) == -1 &&
			      strstr(err.msg, "ctl: reply line 1"));
			topo_free(&c);
		}
		snprintf(longname, sizeof(longname), "host %0300d 0x1 0x2 0x3", 7);
		topo_init(&c);
		CHECK(topo_from_ctl(&c, longname, "ctl", &err) == -1);
		topo_free(&c);
		topo_init(&c);
		CHECK(!topo_from_ctl(&c, "host b 0x1 0x2 0xffffffffffffffff \r\n", "ctl", &err) &&
		      topo_hosts(&c) == 1 && c.leaf_guid[0] == UINT64_MAX);
		topo_free(&c);
	}

	fd = mkstemp(path);
	fp = fd >= 0 ? fdopen(fd, "w") : NULL;
	CHECK(fp != NULL);
	if (fp) {
		fputs("# leaves\nSwitchName=s1 Nodes=n[1-4]\nSwitchName=s2 Nodes=n[5-8] "
		      "LinkSpeed=1\nSwitchName=top Switches=s[1-2]\n",
		      fp);
		fclose(fp);
		topo_init(&s);
		CHECK(!topo_from_slurm_conf(&s, path, &err) && topo_hosts(&s) == 8 &&
		      s.nleaves == 2);
		topo_free(&s);
		fp = fopen(path, "w");
		if (fp) {
			fputs("SwitchName=s1 Nodes=n[1-\n", fp);
			fclose(fp);
		}
		topo_init(&s);
		CHECK(topo_from_slurm_conf(&s, path, &err) == -1 && strstr(err.msg, ":1: Nodes="));
		topo_free(&s);
		unlink(path);
	}
	topo_free(&t);
}

/* squeue text output into a job set, the filter defaults plus partition "debug*" excluded. */
static int build_set(struct jobset *js, const struct topo *t, const char *squeue,
		     struct fab_error *err)
{
	static const char *const ex[] = { "debug*" };
	struct filter_conf c = { .min_time_limit = 10, .exclude_parts = ex, .nexclude = 1 };
	struct slurm_jobs s;
	int ret;

	slurm_jobs_init(&s);
	ret = slurm_jobs_parse_text(&s, squeue, strlen(squeue), "sq", err)
		      ? -1
		      : jobset_build(js, &s, t, &c, err);
	slurm_jobs_free(&s);
	return ret;
}

static void test_jobset(void)
{
	struct topo t;
	struct jobset js;
	struct fab_error err;
	char *map = NULL;
	size_t len = 0;
	FILE *out;

	CHECK(!build_topo(&t));
	jobset_init(&js);
	CHECK(!build_set(&js, &t,
			 "1 RUNNING batch 1:00:00 host[3-4]\n"	    /* switches 0 and 1: multi */
			 "2 RUNNING batch 1:00:00 host[0-2]\n"	    /* switch 0 only */
			 "3 RUNNING batch 5:00 host[4,8]\n"	    /* short */
			 "4 RUNNING debugq 1:00:00 host[4,8]\n"	    /* excluded partition */
			 "5 PENDING batch 1:00:00\n"		    /* not running */
			 "6 RUNNING batch UNLIMITED host9,ghost1\n" /* one known host */
			 "7 RUNNING batch 1:00:00 host[8,11],ghost2,ghost1\n",
			 &err));
	CHECK(js.st.jobs == 7 && js.st.running == 6 && js.st.short_jobs == 1 &&
	      js.st.excluded == 1 && js.st.single_switch == 3 && js.st.multi_switch == 1);
	CHECK(js.keys.n == 1 && !strcmp(hostlist_get(&js.keys, 0), "host3,host4"));
	CHECK(js.unknown.n == 2 && !strcmp(hostlist_get(&js.unknown, 0), "ghost1"));
	out = open_memstream(&map, &len);
	CHECK(out && !jobset_write_map(&js, &t, out));
	if (out)
		fclose(out);
	CHECK(map && strstr(map, "\nhost3 1\nhost4 1\n") && !strstr(map, "host0"));
	free(map);

	/* Duplicate hosts in one list and two jobs on the same nodes: one node set. */
	CHECK(!build_set(&js, &t,
			 "8 RUNNING batch 1:00:00 host[4,3,3]\n"
			 "9 RUNNING batch 1:00:00 host3,host4\n",
			 &err));
	CHECK(js.st.multi_switch == 2 && js.keys.n == 1 && js.st.multi_hosts == 4);

	/* A malformed node list fails the whole set, naming the job and the column. */
	CHECK(build_set(&js, &t, "1 RUNNING batch 1:00:00 host[3-\n", &err) &&
	      strstr(err.msg, "job 1 node list") && strstr(err.msg, "column 8"));
	jobset_free(&js);
	topo_free(&t);
}

/* Jobs 1..n, each running on nodes, as squeue's text output. */
static char *many_jobs(unsigned n, const char *nodes)
{
	size_t size = (size_t)n * (strlen(nodes) + 40) + 1, pos = 0;
	char *text = malloc(size);
	unsigned i;

	for (i = 0; text && i < n; i++)
		pos += (size_t)snprintf(text + pos, size - pos, "%u RUNNING b 1:00:00 %s\n", i + 1,
					nodes);
	return text;
}

/*
 * Host budgets: one list may name HOSTLIST_MAX_HOSTS, one poll JOBSET_MAX_HOSTS together.  A
 * hundred node[1-1000000] lists (each within the first) took half a minute and 1.5 GB and
 * passed; they are refused, and before anything is expanded, so this test is quick.
 */
static void test_host_budget(void)
{
	struct filter_conf c = { .min_time_limit = 10 };
	struct slurm_jobs s;
	struct fab_error err = { "" };
	struct jobset js;
	struct topo t;
	uint32_t n = 0;
	char *text;

	CHECK(!hostlist_count("a[1-3],b,c[08-09]", 17, "t", &n, &err) && n == 6);
	CHECK(hostlist_count("a[1-3", 5, "t", &n, &err) == -1 && strstr(err.msg, "t: column 2"));
	CHECK(!hostlist_count("n[1-1048576]", 12, "t", &n, &err) && n == HOSTLIST_MAX_HOSTS);
	CHECK(hostlist_count("n[0-1048576]", 12, "t", &n, &err) == -1 &&
	      strstr(err.msg, "expands to more than 1048576 hosts"));

	CHECK(!build_topo(&t));
	jobset_init(&js);
	slurm_jobs_init(&s);
	text = many_jobs(100, "node[1-1000000]");
	CHECK(text && !slurm_jobs_parse_text(&s, text, strlen(text), "sq", &err));
	free(text);
	CHECK(jobset_build(&js, &s, &t, &c, &err) == -1 &&
	      strstr(err.msg, "node lists name more than 4194304 hosts together") &&
	      strstr(err.msg, "job 5 passes it"));
	CHECK(js.scratch.n == 0 && js.unknown.n == 0);

	/* A budget of its own: 2 x 3 hosts fit in 6, not in 5; skipped jobs do not count. */
	text = many_jobs(2, "host[3-5]");
	CHECK(text && !slurm_jobs_parse_text(&s, text, strlen(text), "sq", &err));
	free(text);
	c.max_hosts = 6;
	CHECK(!jobset_build(&js, &s, &t, &c, &err) && js.st.multi_switch == 2);
	c.max_hosts = 5;
	CHECK(jobset_build(&js, &s, &t, &c, &err) == -1 &&
	      strstr(err.msg, "more than 5 hosts together") && strstr(err.msg, "job 2 passes"));
	c.min_time_limit = 120;
	CHECK(!jobset_build(&js, &s, &t, &c, &err) && js.st.short_jobs == 2);
	slurm_jobs_free(&s);
	jobset_free(&js);
	topo_free(&t);
}

/* decide() with installed and current given as texts of node sets separated by ';'. */
static enum filter_decision decide(const char *installed, const char *current, double now,
				   double last, struct decide_out *out)
{
	struct hostlist a, b;
	const char *p;
	struct decide_in in;

	hostlist_init(&a);
	hostlist_init(&b);
	for (p = installed; *p; p += strcspn(p, ";") + (p[strcspn(p, ";")] ? 1 : 0))
		hostlist_add(&a, p, strcspn(p, ";"));
	for (p = current; *p; p += strcspn(p, ";") + (p[strcspn(p, ";")] ? 1 : 0))
		hostlist_add(&b, p, strcspn(p, ";"));
	keys_normalize(&a);
	keys_normalize(&b);
	in.installed = &a;
	in.current = &b;
	in.now = now;
	in.last_reroute = last;
	in.min_interval = 600;
	filter_decide(&in, out);
	hostlist_free(&a);
	hostlist_free(&b);
	return out->decision;
}

static void test_decision(void)
{
	struct topo t;
	struct jobset before, after;
	struct fab_error err;
	struct decide_out out;
	struct decide_in in;

	/* Symmetric: order and duplicates do not matter, both directions count. */
	CHECK(decide("a,b;c,d", "c,d;a,b;a,b", 1000, -1, &out) == DECIDE_NO_CHANGE);
	CHECK(decide("a,b", "a,b;c,d", 1000, -1, &out) == DECIDE_REROUTE && out.added == 1 &&
	      out.removed == 0);
	/* A job ending is a change (the reference filter missed it). */
	CHECK(decide("a,b;c,d", "a,b", 1000, -1, &out) == DECIDE_REROUTE && out.added == 0 &&
	      out.removed == 1);
	CHECK(decide("a,b", "", 1000, -1, &out) == DECIDE_REROUTE);
	CHECK(decide("", "", 1000, -1, &out) == DECIDE_NO_CHANGE);
	/* A job growing to more nodes is another node set. */
	CHECK(decide("a,b", "a,b,c", 1000, -1, &out) == DECIDE_REROUTE && out.added == 1 &&
	      out.removed == 1);
	/* Hysteresis: too soon after the last reroute is deferred, with the time left. */
	CHECK(decide("a,b", "c,d", 1000, 700, &out) == DECIDE_DEFERRED && out.wait == 300);
	CHECK(decide("a,b", "c,d", 1300, 700, &out) == DECIDE_REROUTE);
	CHECK(decide("a,b", "a,b", 1000, 999, &out) == DECIDE_NO_CHANGE);

	/* Job replaced by another on the same nodes, through the whole pipeline: no change. */
	CHECK(!build_topo(&t));
	jobset_init(&before);
	jobset_init(&after);
	CHECK(!build_set(&before, &t, "100 RUNNING b 1:00:00 host[3-4]\n", &err));
	CHECK(!build_set(&after, &t, "200 RUNNING b 2:00:00 host3,host4\n", &err));
	in.installed = &before.keys;
	in.current = &after.keys;
	in.now = 5000;
	in.last_reroute = -1;
	in.min_interval = 600;
	filter_decide(&in, &out);
	CHECK(out.decision == DECIDE_NO_CHANGE);
	/* The job ends: a change. */
	CHECK(!build_set(&after, &t, "", &err));
	filter_decide(&in, &out);
	CHECK(out.decision == DECIDE_REROUTE && out.removed == 1);
	jobset_free(&before);
	jobset_free(&after);
	topo_free(&t);
}

static void test_keys_from_map(void)
{
	struct job_map jm;
	struct hostlist keys;
	struct fab_error err;

	job_map_init(&jm);
	hostlist_init(&keys);
	CHECK(!job_map_parse_text(&jm,
				  "# written by sarnue-filterd\nh2 7\nh1 7\nh1 7\nh9 8\nh3 8\n"
				  "h4 9\nh1 9\nh2 9\n",
				  "map", &err));
	CHECK(!jobset_keys_from_map(&jm, &keys, &err));
	/* Job 7 and 9 differ (h4), 8 is h3,h9: three sets, sorted. */
	CHECK(keys.n == 3 && !strcmp(hostlist_get(&keys, 0), "h1,h2") &&
	      !strcmp(hostlist_get(&keys, 1), "h1,h2,h4") &&
	      !strcmp(hostlist_get(&keys, 2), "h3,h9"));
	hostlist_free(&keys);
	job_map_free(&jm);
}

int main(void)
{
	test_hostlist();
	test_json_reader();
	test_json_writer();
	test_squeue_json();
	test_squeue_hostile();
	test_squeue_text();
	test_topology();
	test_jobset();
	test_host_budget();
	test_decision();
	test_keys_from_map();
	return CHECK_RESULT();
}
