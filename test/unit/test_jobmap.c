/*
 * test_jobmap.c - the job map parser and its binding to fabric nodes: comments, shared nodes,
 * multi-HCA hosts, unknown hostnames, hosts named only by a node-name map, and malformed files
 * rejected whole with file:line.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fabric/jobmap.h"

/* One switch; HCAs alpha (two of them), beta, and "gamma rack7" for the description match. */
static int build(struct fabric *f)
{
	static const char *const descs[] = { "alpha HCA-1", "alpha HCA-2", "beta HCA-1",
					     "gamma rack7" };
	struct fab_error err;
	uint32_t sw, n, i;

	fabric_init(f);
	sw = fabric_add_node(f, FAB_SWITCH, 0x1000, 8, "sw", "sw");
	if (sw == FAB_NONE)
		return -1;
	for (i = 0; i < 4; i++) {
		n = fabric_add_node(f, FAB_CA, 0x2000 + i, 1, descs[i], descs[i]);
		if (n == FAB_NONE || fabric_link(f, sw, i + 1, n, 1, &err))
			return -1;
	}
	for (i = 0; i < f->nports; i++)
		if (f->ports[i].remote != FAB_NONE)
			f->ports[i].state = FAB_PORT_ACTIVE;
	return fabric_assign_lids(f, 0, &err);
}

static void test_parse_and_bind(const struct fabric *f)
{
	struct job_map jm;
	struct fab_error err;
	const uint32_t *jobs;
	uint32_t n;

	job_map_init(&jm);
	CHECK(job_map_parse_text(&jm,
				 "# jobs\n"
				 "alpha 17   # trailing comment\n"
				 "\n"
				 "  beta\t17\n"
				 "beta 18_3\n"
				 "beta 18_3\n"
				 "ghost 18_3\n"
				 "ghost 19\n",
				 "jobs.map", &err) == 0);
	CHECK(jm.njobs == 3);
	CHECK(jm.nentries == 6);
	CHECK(!strcmp(job_map_job_name(&jm, 1), "18_3"));
	CHECK(job_map_bind(&jm, f, JOB_MATCH_FIRST_WORD, NULL, &err) == 0);

	/* Both alpha HCAs (nodes 1 and 2) run job 0; beta (node 3) runs 0 and 1 once each. */
	jobs = job_map_node_jobs(&jm, 1, &n);
	CHECK(n == 1 && jobs[0] == 0);
	jobs = job_map_node_jobs(&jm, 2, &n);
	CHECK(n == 1 && jobs[0] == 0);
	jobs = job_map_node_jobs(&jm, 3, &n);
	CHECK(n == 2 && jobs[0] == 0 && jobs[1] == 1);
	job_map_node_jobs(&jm, 0, &n);
	CHECK(n == 0);
	job_map_node_jobs(&jm, 4, &n);
	CHECK(n == 0);

	CHECK(job_map_share_job(&jm, 1, 3));
	CHECK(job_map_share_job(&jm, 1, 2));
	CHECK(!job_map_share_job(&jm, 1, 4));
	CHECK(!job_map_share_job(&jm, 0, 1));
	CHECK(jm.job_ports[0] == 3 && jm.job_ports[1] == 1 && jm.job_ports[2] == 0);
	CHECK(jm.unknown_hosts == 1);
	CHECK(!strcmp(jm.first_unknown, "ghost"));
	CHECK(job_map_bound_nodes(&jm) == 3);
	job_map_free(&jm);
}

static void test_description_match(const struct fabric *f)
{
	struct job_map jm;
	struct fab_error err;
	uint32_t n;

	job_map_init(&jm);
	CHECK(job_map_parse_text(&jm, "gamma 1\n", "m", &err) == 0);
	CHECK(job_map_bind(&jm, f, JOB_MATCH_DESCRIPTION, NULL, &err) == 0);
	CHECK(jm.unknown_hosts == 1);
	CHECK(job_map_parse_text(&jm, "gamma 1\n", "m", &err) == 0);
	CHECK(job_map_bind(&jm, f, JOB_MATCH_FIRST_WORD, NULL, &err) == 0);
	job_map_node_jobs(&jm, 4, &n);
	CHECK(n == 1 && jm.unknown_hosts == 0);
	job_map_free(&jm);
}

/* Two HCAs of one host, each with its own description, are not an ambiguous hostname. */
static int test_two_hcas_not_ambiguous(const struct fabric *f)
{
	struct job_map jm;
	struct fab_error err;
	int bad;

	job_map_init(&jm);
	CHECK(job_map_parse_text(&jm, "alpha 1\n", "m", &err) == 0);
	CHECK(job_map_bind(&jm, f, JOB_MATCH_FIRST_WORD, NULL, &err) == 0);
	bad = jm.ambiguous_hosts != 0 || job_map_bound_nodes(&jm) != 2;
	job_map_free(&jm);
	return bad;
}

static void expect_error(const char *text, const char *fragment)
{
	struct job_map jm;
	struct fab_error err;

	job_map_init(&jm);
	err.msg[0] = '\0';
	CHECK(job_map_parse_text(&jm, text, "bad.map", &err) == -1);
	if (!strstr(err.msg, fragment)) {
		fprintf(stderr, "error '%s' lacks '%s'\n", err.msg, fragment);
		CHECK(0);
	}
	CHECK(jm.nentries == 0 && jm.njobs == 0);
	job_map_free(&jm);
}

static void test_malformed(void)
{
	char longname[400];

	expect_error("alpha 1\nbeta\n", "bad.map:2: expected 'hostname jobid', got one word");
	expect_error("alpha 1 extra\n", "bad.map:1:");
	expect_error("a 1\n\n\nb 2 3 # x\n", "bad.map:4: expected 'hostname jobid', got more");
	memset(longname, 'x', sizeof(longname) - 3);
	strcpy(longname + sizeof(longname) - 3, " 1");
	expect_error(longname, "bad.map:1: hostname longer than 255");
}

static void test_file(void)
{
	struct job_map jm;
	struct fab_error err;
	char path[] = "/tmp/test_jobmapXXXXXX";
	int fd = mkstemp(path);
	FILE *fp;

	CHECK(fd >= 0);
	fp = fdopen(fd, "w");
	fputs("n1 5\nn2 5\nn3 6\n", fp);
	fclose(fp);
	job_map_init(&jm);
	CHECK(job_map_parse(&jm, path, &err) == 0);
	CHECK(jm.njobs == 2 && jm.nentries == 3);
	fp = fopen(path, "w");
	fputs("n1 5\n\x01\x02 3 4\n", fp);
	fclose(fp);
	CHECK(job_map_parse(&jm, path, &err) == -1);
	CHECK(strstr(err.msg, ":2:") != NULL);
	unlink(path);
	CHECK(job_map_parse(&jm, path, &err) == -1);
	CHECK(strstr(err.msg, "No such file") != NULL);
	/* A directory, like a FIFO or a device, is refused by type before any read. */
	strcpy(path + strlen(path) - 6, "XXXXXX");
	CHECK(mkdtemp(path) != NULL);
	CHECK(job_map_parse(&jm, path, &err) == -1);
	CHECK(strstr(err.msg, "not a regular file") != NULL && strstr(err.msg, path) != NULL);
	rmdir(path);
	job_map_free(&jm);
}

/* Many jobs and hosts: the hash tables grow and stay consistent. */
static void test_many(void)
{
	struct job_map jm;
	struct fab_error err;
	size_t cap = 64 * 5000, len = 0;
	char *text = malloc(cap);
	unsigned i;

	for (i = 0; i < 5000; i++)
		len += (size_t)snprintf(text + len, cap - len, "host%u job%u\n", i, i / 3);
	job_map_init(&jm);
	CHECK(job_map_parse_text(&jm, text, "big", &err) == 0);
	CHECK(jm.njobs == 1667 && jm.nentries == 5000);
	CHECK(!strcmp(job_map_job_name(&jm, 1666), "job1666"));
	job_map_free(&jm);
	free(text);
}

/*
 * Real fabrics: HCAs that keep the firmware's description all share one name.  A hostname that
 * stands for several of them is bound to all and counted as ambiguous; two HCAs of one host
 * with their own descriptions ("alpha HCA-1", "alpha HCA-2") are not.  A node-name map then
 * names the hosts by GUID.
 */
static void test_default_descriptions(void)
{
	static const char *const desc = "MT25408 ConnectX Mellanox Technologies";
	char path[] = "/tmp/sarnue-names.XXXXXX";
	struct node_name_map names;
	struct fabric f;
	struct job_map jm;
	struct fab_error err;
	uint32_t sw, n, i;
	FILE *fp;
	int fd;

	fabric_init(&f);
	sw = fabric_add_node(&f, FAB_SWITCH, 0x1000, 8, "sw", "sw");
	for (i = 0; i < 3; i++) {
		n = fabric_add_node(&f, FAB_CA, 0x2000 + 4 * i, 1, NULL, desc);
		CHECK(n != FAB_NONE && fabric_link(&f, sw, i + 1, n, 1, &err) == 0);
	}
	for (i = 0; i < f.nports; i++)
		if (f.ports[i].remote != FAB_NONE)
			f.ports[i].state = FAB_PORT_ACTIVE;
	CHECK(fabric_assign_lids(&f, 0, &err) == 0);

	job_map_init(&jm);
	CHECK(job_map_parse_text(&jm, "MT25408 1\nMT25408 2\n", "m", &err) == 0);
	CHECK(job_map_bind(&jm, &f, JOB_MATCH_FIRST_WORD, NULL, &err) == 0);
	CHECK(jm.ambiguous_hosts == 1 && jm.first_ambiguous_hcas == 3);
	CHECK(!strcmp(jm.first_ambiguous, "MT25408") && !strcmp(jm.first_ambiguous_name, desc));
	CHECK(job_map_bound_nodes(&jm) == 3);

	fd = mkstemp(path);
	CHECK(fd >= 0 && (fp = fdopen(fd, "w")) != NULL);
	fprintf(fp, "# hosts\n0x2000 \"node01\"\n0x0000000000002004 \"node02 rack 3\"\n");
	fclose(fp);
	node_name_map_init(&names);
	CHECK(node_name_map_load(&names, path, &err) == 0);
	CHECK(!strcmp(node_name_map_get(&names, 0x2004), "node02 rack 3"));
	CHECK(node_name_map_get(&names, 0x2008) == NULL);
	CHECK(job_map_parse_text(&jm, "node02 5\nnode01 5\n", "m", &err) == 0);
	CHECK(job_map_bind(&jm, &f, JOB_MATCH_FIRST_WORD, &names, &err) == 0);
	CHECK(jm.ambiguous_hosts == 0 && jm.unknown_hosts == 0 && job_map_bound_nodes(&jm) == 2);
	job_map_node_jobs(&jm, 3, &n);
	CHECK(n == 0);
	node_name_map_free(&names);

	fp = fopen(path, "w");
	CHECK(fp != NULL);
	fprintf(fp, "0x2000 \"a\"\n0x2000 \"b\"\n");
	fclose(fp);
	CHECK(node_name_map_load(&names, path, &err) == -1 && strstr(err.msg, ":2: GUID") != NULL);
	fp = fopen(path, "w");
	CHECK(fp != NULL);
	fprintf(fp, "0x2000 node01\n");
	fclose(fp);
	CHECK(node_name_map_load(&names, path, &err) == -1 &&
	      strstr(err.msg, ":1: expected GUID \"name\"") != NULL);
	unlink(path);
	job_map_free(&jm);
	fabric_free(&f);
}

int main(void)
{
	struct fabric f;

	CHECK(build(&f) == 0);
	test_parse_and_bind(&f);
	test_description_match(&f);
	test_default_descriptions();
	CHECK(test_two_hcas_not_ambiguous(&f) == 0);
	test_malformed();
	test_file();
	test_many();
	fabric_free(&f);
	return CHECK_RESULT();
}
