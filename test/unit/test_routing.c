/*
 * test_routing.c - routing_changed_lids(), which names the LIDs an update announces in its
 * UnPath report: every changed LFT entry or SL is covered, unchanged LIDs stay out as long as
 * the ranges fit, and too many ranges merge across the smallest gaps.
 */
#include <string.h>

#include "check.h"
#include "routing.h"
#include "testfab.h"

static void copy_tables(struct routing *dst, const struct routing *src)
{
	size_t cells = (size_t)src->nswitches * src->lft_len;

	memcpy(dst->lft, src->lft, cells);
	dst->sl_uniform = src->sl_uniform;
}

static void test_changed(const struct fabric *f)
{
	struct routing a, b;
	struct routing_lid_range rg[10];
	uint32_t changed, lid;
	int n;

	CHECK(routing_init(&a, f, "a") == 0 && routing_init(&b, f, "b") == 0);
	memset(a.lft, 1, (size_t)a.nswitches * a.lft_len);
	copy_tables(&b, &a);
	CHECK(routing_changed_lids(&a, &b, rg, 10, &changed) == 0 && changed == 0);

	/* LIDs 3, 4 and 9 change on one switch each: two ranges. */
	routing_lft(&b, 0)[3] = 2;
	routing_lft(&b, 1)[4] = 2;
	routing_lft(&b, 2)[9] = 2;
	n = routing_changed_lids(&a, &b, rg, 10, &changed);
	CHECK(n == 2 && changed == 3);
	CHECK(rg[0].first == 3 && rg[0].last == 4 && rg[1].first == 9 && rg[1].last == 9);

	/* A changed SL counts although the LFTs agree. */
	copy_tables(&b, &a);
	CHECK(routing_alloc_sl_by_dlid(&b) == 0);
	b.sl_by_dlid[7] = 1;
	n = routing_changed_lids(&a, &b, rg, 10, &changed);
	CHECK(n == 1 && changed == 1 && rg[0].first == 7 && rg[0].last == 7);

	/* Every odd LID changes: more ranges than fit, merged; no changed LID left out. */
	b.sl_by_dlid[7] = 0;
	for (lid = 1; lid < b.lft_len; lid += 2)
		routing_lft(&b, 0)[lid] = 3;
	n = routing_changed_lids(&a, &b, rg, 4, &changed);
	CHECK(n >= 1 && n <= 4 && changed == (b.lft_len) / 2);
	for (lid = 1; lid < b.lft_len; lid += 2) {
		int covered = 0, i;

		for (i = 0; i < n; i++)
			covered |= rg[i].first <= lid && lid <= rg[i].last;
		CHECK(covered);
	}
	for (lid = 1; lid < (uint32_t)n; lid++)
		CHECK(rg[lid - 1].last < rg[lid].first);

	/* Routings of different fabrics cannot be compared. */
	b.lft_len--;
	CHECK(routing_changed_lids(&a, &b, rg, 10, &changed) == -1);
	b.lft_len++;
	routing_free(&a);
	routing_free(&b);
}

int main(void)
{
	unsigned links[16][2];
	struct fabric f;
	unsigned n = testfab_ring(links, 4);

	CHECK(testfab_build(&f, 4, 3, (const unsigned(*)[2])links, n, 0) == 0);
	test_changed(&f);
	fabric_free(&f);
	return CHECK_RESULT();
}
