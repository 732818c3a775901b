/*
 * test_traffic.c - the traffic matrix (fabric/traffic.h): lines parsed with their errors named
 * by file and line, repeats added up, self-traffic and zero bytes dropped; hostnames bound to
 * the fabric's CA nodes with unknown ones counted; weights in units of a quarter of the mean
 * pair, the lightest pair at least 1; the hosts as one job for the job phase.
 */
#include <stdlib.h>
#include <string.h>

#include "fabric/traffic.h"
#include "check.h"
#include "testfab.h"

static void test_parse_errors(void)
{
	struct traffic t;
	struct fab_error err = { "" };

	traffic_init(&t);
	CHECK(traffic_parse_text(&t, "a b 10\n# c\nc d\n", "m.txt", &err) == -1);
	CHECK(strstr(err.msg, "m.txt:3: expected 'SRC DST BYTES', got 2 word(s)") != NULL);
	CHECK(t.npairs == 0);
	CHECK(traffic_parse_text(&t, "a b -10\n", "m.txt", &err) == -1);
	CHECK(strstr(err.msg, "m.txt:1: BYTES '-10': expected decimal digits") != NULL);
	CHECK(traffic_parse_text(&t, "a b 1e6\n", "m.txt", &err) == -1);
	CHECK(traffic_parse_text(&t, "a b 10 extra\n", "m.txt", &err) == -1);
	CHECK(traffic_parse_text(&t, "a b 10  # a comment\n\n a a 99\n c d 0\n", "m", &err) == 0);
	CHECK(t.npairs == 1 && t.total_bytes == 10);
	traffic_free(&t);
}

/* Two switches of two hosts each: h0.0 h0.1 on sw0, h1.0 h1.1 on sw1. */
static void test_bind_and_weights(void)
{
	unsigned links[1][2] = { { 0, 1 } };
	unsigned hosts[2] = { 2, 2 };
	struct traffic t;
	struct fabric f;
	struct fab_error err = { "" };
	uint32_t a, b, c, d;
	char *text = NULL;
	size_t len = 0;

	CHECK(testfab_build_hosts(&f, 2, hosts, 0, links, 1, 0) == 0);
	a = fabric_find_node_by_id(&f, "h0.0");
	b = fabric_find_node_by_id(&f, "h0.1");
	c = fabric_find_node_by_id(&f, "h1.0");
	d = fabric_find_node_by_id(&f, "h1.1");
	traffic_init(&t);
	/* mean of the three bound pairs: (100 + 1 + 300) / 3; the ghost's pair is left out */
	CHECK(traffic_parse_text(&t,
				 "h0.0 h1.0 60\nh0.0 h1.0 40\nh0.1 h1.1 1\nh1.1 h0.0 300\n"
				 "ghost h0.0 5\n",
				 "m", &err) == 0);
	CHECK(t.npairs == 5);
	CHECK(traffic_bind(&t, &f, JOB_MATCH_DESCRIPTION, NULL, &err) == 0);
	CHECK(t.bound_pairs == 4 && t.unknown_hosts == 1 && !strcmp(t.first_unknown, "ghost"));
	/* 4 * 100 / 133.67 = 2.99 -> 3; 4 * 1 / 133.67 -> at least 1; 4 * 300 / 133.67 = 8.98 */
	CHECK(traffic_weight(&t, a, c) == 3);
	CHECK(traffic_weight(&t, b, d) == 1);
	CHECK(traffic_weight(&t, d, a) == 9);
	CHECK(traffic_weight(&t, c, a) == 0 && traffic_weight(&t, a, b) == 0);
	CHECK(traffic_hosts_text(&t, &text, &len) == 0);
	CHECK(text && strstr(text, "h0.0 traffic\n") && strstr(text, "h1.1 traffic\n") &&
	      !strstr(text, "ghost"));
	free(text);
	traffic_free(&t);
	fabric_free(&f);
}

int main(void)
{
	test_parse_errors();
	test_bind_and_weights();
	return CHECK_RESULT();
}
