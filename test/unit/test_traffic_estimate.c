/*
 * test_traffic_estimate.c - the traffic matrix estimated from port counters
 * (fabric/traffic_estimate.c): a host's bytes come from the switch port facing it (its own
 * port's counters only when the switch's are missing), the gravity model spreads each sender's
 * bytes over the receivers of its job in proportion to what they received, a shared host
 * splits its bytes over its jobs, counters of other links are ignored, and the result binds
 * and weighs like a file's matrix.
 */
#include <stdlib.h>
#include <string.h>

#include "fabric/jobmap.h"
#include "fabric/traffic.h"
#include "check.h"
#include "testfab.h"

/* Switch i is GUID 0x1000 + i; host k (h0.0 h0.1 h0.2 h1.0 h1.1 h1.2) 0x100000 + 16 k. */
#define SW(i) (0x1000u + (i))
#define HOST(k) (0x100000u + 16u * (k))

static void build(struct fabric *f)
{
	unsigned links[1][2] = { { 0, 1 } };
	unsigned hosts[2] = { 3, 3 };

	CHECK(testfab_build_hosts(f, 2, hosts, 0, links, 1, 0) == 0);
}

/* The estimated bytes from src to dst (all entries of the pair added), 0 when none. */
static uint64_t pair_bytes(const struct traffic *t, const char *src, const char *dst)
{
	uint64_t sum = 0;
	uint32_t i;

	for (i = 0; i < t->npairs; i++)
		if (!strcmp(t->strings + t->pairs[i].src, src) &&
		    !strcmp(t->strings + t->pairs[i].dst, dst))
			sum += t->pairs[i].bytes;
	return sum;
}

static void test_gravity_one_job(void)
{
	/* h0.0 sent 600 (its switch port received it); h1.0 received 400, h1.1 200. */
	const struct traffic_counter c[] = {
		{ SW(0), 1, 0, 600 },
		{ SW(1), 1, 400, 0 },
		{ SW(1), 2, 200, 0 },
		/* the host's own port: the switch's view wins */
		{ HOST(0), 1, 99999, 0 },
		/* h1.2 has only its own port's counters: they count */
		{ HOST(5), 1, 60, 0 },
		/* a switch-to-switch link, port 0, a port too high, an unknown node */
		{ SW(0), 4, 5000, 5000 },
		{ SW(0), 0, 5000, 5000 },
		{ SW(0), 40, 5000, 5000 },
		{ 0xdead, 1, 5000, 5000 },
	};
	struct traffic_estimate_report rep;
	struct fab_error err = { "" };
	struct traffic t;
	struct fabric f;

	build(&f);
	traffic_init(&t);
	CHECK(traffic_estimate(&t, &f, c, sizeof(c) / sizeof(c[0]), NULL, JOB_MATCH_FIRST_WORD,
			       NULL, &rep, &err) == 0);
	CHECK(rep.counters_used == 5);
	CHECK(rep.hosts_sent == 2 && rep.hosts_received == 2 && rep.jobs == 1);
	CHECK(rep.sent == 660);
	/* 600 * 400 / 600 and 600 * 200 / 600 */
	CHECK(pair_bytes(&t, "h0.0", "h1.0") == 400);
	CHECK(pair_bytes(&t, "h0.0", "h1.1") == 200);
	/* 60 * 400 / 600 = 40, 60 * 200 / 600 = 20 */
	CHECK(pair_bytes(&t, "h1.2", "h1.0") == 40);
	CHECK(pair_bytes(&t, "h1.2", "h1.1") == 20);
	CHECK(t.npairs == 4 && t.total_bytes == 660);
	/* It binds like a file's matrix: every pair, the heavier the more weight. */
	CHECK(traffic_bind(&t, &f, JOB_MATCH_FIRST_WORD, NULL, &err) == 0);
	CHECK(t.bound_pairs == 4 && t.unknown_hosts == 0);
	CHECK(traffic_weight(&t, fabric_find_node_by_id(&f, "h0.0"),
			     fabric_find_node_by_id(&f, "h1.0")) >
	      traffic_weight(&t, fabric_find_node_by_id(&f, "h0.0"),
			     fabric_find_node_by_id(&f, "h1.1")));
	traffic_free(&t);
	fabric_free(&f);
}

static void bind_jobs(struct job_map *jm, const struct fabric *f, const char *text)
{
	struct fab_error err = { "" };

	job_map_init(jm);
	CHECK(job_map_parse_text(jm, text, "jobs", &err) == 0);
	CHECK(job_map_bind(jm, f, JOB_MATCH_FIRST_WORD, NULL, &err) == 0);
}

static void test_jobs(void)
{
	/* h0.0 sent 1000 and h1.0 received 1000; h0.1 sent 10 and h1.1 received 10. */
	const struct traffic_counter c[] = {
		{ SW(0), 1, 0, 1000 },
		{ SW(1), 1, 1000, 0 },
		{ SW(0), 2, 0, 10 },
		{ SW(1), 2, 10, 0 },
	};
	struct traffic_estimate_report rep;
	struct fab_error err = { "" };
	struct job_map jm;
	struct traffic t;
	struct fabric f;

	build(&f);
	traffic_init(&t);
	/* One job of all: the heavy sender's bytes leak to the light receiver. */
	CHECK(traffic_estimate(&t, &f, c, 4, NULL, JOB_MATCH_FIRST_WORD, NULL, &rep, &err) == 0);
	CHECK(pair_bytes(&t, "h0.0", "h1.1") == 10); /* 1000 * 10 / 1010 */
	/* Two jobs: each sender's bytes stay with its job's receiver. */
	bind_jobs(&jm, &f, "h0.0 a\nh1.0 a\nh0.1 b\nh1.1 b\n");
	CHECK(traffic_estimate(&t, &f, c, 4, &jm, JOB_MATCH_FIRST_WORD, NULL, &rep, &err) == 0);
	CHECK(t.npairs == 2 && rep.jobs == 2);
	CHECK(pair_bytes(&t, "h0.0", "h1.0") == 1000 && pair_bytes(&t, "h0.1", "h1.1") == 10);
	job_map_free(&jm);
	/* h1.0 in both jobs: its 1000 received bytes split 500 and 500. */
	bind_jobs(&jm, &f, "h0.0 a\nh1.0 a\nh0.1 b\nh1.0 b\nh1.1 b\n");
	CHECK(traffic_estimate(&t, &f, c, 4, &jm, JOB_MATCH_FIRST_WORD, NULL, &rep, &err) == 0);
	CHECK(pair_bytes(&t, "h0.0", "h1.0") == 1000);
	CHECK(pair_bytes(&t, "h0.1", "h1.0") == 10); /* 10 * 500 / 510 */
	CHECK(pair_bytes(&t, "h0.1", "h1.1") == 0);  /* 10 * 10 / 510: under a byte */
	CHECK(pair_bytes(&t, "h0.0", "h1.1") == 0);  /* not in one job */
	job_map_free(&jm);
	/* A job of hosts without bytes, and no counters at all: no pairs, no error. */
	bind_jobs(&jm, &f, "h0.2 c\nh1.2 c\n");
	CHECK(traffic_estimate(&t, &f, c, 4, &jm, JOB_MATCH_FIRST_WORD, NULL, &rep, &err) == 0);
	CHECK(t.npairs == 0 && rep.jobs == 0 && rep.hosts_sent == 2);
	CHECK(traffic_estimate(&t, &f, NULL, 0, &jm, JOB_MATCH_FIRST_WORD, NULL, &rep, &err) == 0);
	CHECK(t.npairs == 0 && rep.counters_used == 0);
	job_map_free(&jm);
	traffic_free(&t);
	fabric_free(&f);
}

int main(void)
{
	test_gravity_one_job();
	test_jobs();
	return CHECK_RESULT();
}
