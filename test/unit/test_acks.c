/*
 * test_acks.c - acknowledgement bookkeeping of the five-phase update: one count per
 * (port, sequence, kind), duplicates and stale sequence numbers change nothing, silent
 * subscribers expire after the allowed rounds and come back when they answer, and the
 * subscriber set follows the InformInfo list.
 */
#include "update/acks.h"
#include "check.h"

static const struct acks_port three[] = { { 0xA, 1 }, { 0xB, 2 }, { 0xC, 3 } };

static void test_basic(void)
{
	struct acks a;

	acks_init(&a, 2);
	CHECK(acks_sync(&a, three, 3) == 0);
	CHECK(acks_pending(&a) == 0); /* nothing outstanding yet */
	CHECK(acks_record(&a, 0xA, 1, 5, 1, 0) == ACKS_STALE);
	acks_begin(&a, 5, 1);
	CHECK(acks_pending(&a) == 3);
	CHECK(acks_record(&a, 0xA, 1, 5, 1, 0) == ACKS_NEW);
	CHECK(acks_record(&a, 0xA, 1, 5, 1, 0) == ACKS_DUPLICATE);
	CHECK(acks_record(&a, 0xB, 2, 4, 1, 0) == ACKS_STALE); /* an older update */
	CHECK(acks_record(&a, 0xB, 2, 5, 2, 0) == ACKS_STALE); /* RePath while waiting for UnPath */
	CHECK(acks_record(&a, 0xD, 9, 5, 1, 0) == ACKS_UNKNOWN);
	CHECK(acks_pending(&a) == 2);
	CHECK(acks_record(&a, 0, 2, 5, 1, 0) == ACKS_NEW); /* no GUID: matched by LID */
	CHECK(acks_record(&a, 0xC, 3, 5, 1, 0) == ACKS_NEW);
	CHECK(acks_pending(&a) == 0);
	CHECK(a.duplicates == 1 && a.stale == 3 && a.unknown == 1);
	/* The RePath of the same update starts everyone over. */
	acks_begin(&a, 5, 2);
	CHECK(acks_pending(&a) == 3);
	acks_end(&a);
	CHECK(acks_pending(&a) == 0);
	acks_free(&a);
}

static void test_expiry(void)
{
	struct acks_port out[4];
	struct acks a;

	acks_init(&a, 2);
	CHECK(acks_sync(&a, three, 3) == 0);
	acks_begin(&a, 7, 1);
	CHECK(acks_record(&a, 0xA, 1, 7, 1, 0) == ACKS_NEW);
	CHECK(acks_round(&a, out, 4) == 0);
	CHECK(acks_record(&a, 0xB, 2, 7, 1, 0) == ACKS_NEW);
	CHECK(acks_round(&a, out, 4) == 0); /* C missed 2 rounds: allowed */
	CHECK(acks_pending(&a) == 1);
	CHECK(acks_round(&a, out, 4) == 1); /* third round: expired */
	CHECK(out[0].guid == 0xC && out[0].lid == 3);
	CHECK(acks_pending(&a) == 0);
	CHECK(acks_round(&a, out, 4) == 0); /* expires once */
	/* Not waited for in the next update... */
	acks_begin(&a, 8, 1);
	CHECK(acks_pending(&a) == 2);
	/* ...until it answers again, even with a stale acknowledgement. */
	CHECK(acks_record(&a, 0xC, 3, 7, 1, 0) == ACKS_STALE);
	CHECK(a.revived == 1);
	CHECK(acks_pending(&a) == 3);
	CHECK(acks_record(&a, 0xC, 3, 8, 1, 0) == ACKS_NEW);
	CHECK(acks_pending(&a) == 2);
	acks_free(&a);
}

/*
 * A subscriber whose handler failed or still runs answers with a non-zero status: alive, so it
 * never expires, but still pending, so only the update's timeout policy ends the wait.
 */
static void test_not_done(void)
{
	struct acks_port out[4];
	struct acks a;
	int round;

	acks_init(&a, 2);
	CHECK(acks_sync(&a, three, 3) == 0);
	acks_begin(&a, 9, 1);
	CHECK(acks_record(&a, 0xA, 1, 9, 1, 0) == ACKS_NEW);
	CHECK(acks_record(&a, 0xB, 2, 9, 1, 0) == ACKS_NEW);
	for (round = 0; round < 6; round++) {
		CHECK(acks_record(&a, 0xC, 3, 9, 1, 1) == ACKS_NOT_DONE);
		CHECK(acks_round(&a, out, 4) == 0);
	}
	CHECK(acks_pending(&a) == 1 && a.not_done == 6);
	/* A status for another report proves nothing about this one. */
	CHECK(acks_record(&a, 0xC, 3, 8, 1, 2) == ACKS_STALE);
	/* Once it falls silent it expires like any other (it already missed the last round). */
	CHECK(acks_round(&a, out, 4) == 0);
	CHECK(acks_round(&a, out, 4) == 1 && out[0].guid == 0xC);
	/* A late success still counts. */
	acks_begin(&a, 10, 2);
	CHECK(acks_record(&a, 0xC, 3, 10, 2, 2) == ACKS_NOT_DONE);
	CHECK(acks_record(&a, 0xC, 3, 10, 2, 0) == ACKS_NEW);
	CHECK(acks_record(&a, 0xC, 3, 10, 2, 1) == ACKS_DUPLICATE);
	acks_free(&a);
}

static void test_sync(void)
{
	const struct acks_port dup[] = { { 0xA, 1 }, { 0xA, 1 }, { 0xB, 2 } };
	const struct acks_port moved[] = { { 0xB, 20 }, { 0xE, 5 } };
	struct acks a;

	acks_init(&a, 1);
	CHECK(acks_sync(&a, dup, 3) == 0);
	CHECK(a.nsubs == 2); /* subscribed to trap 68 and 69: one subscriber */
	acks_begin(&a, 3, 1);
	CHECK(acks_record(&a, 0xB, 2, 3, 1, 0) == ACKS_NEW);
	/* A unsubscribed, B got a new LID and keeps its acknowledgement, E is new. */
	CHECK(acks_sync(&a, moved, 2) == 0);
	CHECK(a.nsubs == 2);
	CHECK(acks_pending(&a) == 1);
	CHECK(acks_record(&a, 0xA, 1, 3, 1, 0) == ACKS_UNKNOWN);
	CHECK(acks_record(&a, 0, 20, 3, 1, 0) == ACKS_DUPLICATE);
	CHECK(acks_record(&a, 0xE, 5, 3, 1, 0) == ACKS_NEW);
	CHECK(acks_pending(&a) == 0);
	/* No subscribers at all: nothing to wait for. */
	CHECK(acks_sync(&a, NULL, 0) == 0);
	acks_begin(&a, 4, 1);
	CHECK(acks_pending(&a) == 0);
	acks_free(&a);
}

int main(void)
{
	test_basic();
	test_expiry();
	test_not_done();
	test_sync();
	return CHECK_RESULT();
}
