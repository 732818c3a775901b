/*
 * acks.c - acknowledgement bookkeeping of the five-phase update (see acks.h).  Subscriber
 * sets are small (one per host or job), so plain arrays and linear search keep it obvious.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/assert.h"
#include "update/acks.h"

void acks_init(struct acks *a, unsigned max_rounds)
{
	memset(a, 0, sizeof(*a));
	a->max_rounds = max_rounds;
}

void acks_free(struct acks *a)
{
	free(a->subs);
	a->subs = NULL;
	a->nsubs = a->cap = 0;
}

static struct acks_sub *find(const struct acks *a, uint64_t guid, uint16_t lid)
{
	size_t i;

	for (i = 0; i < a->nsubs; i++)
		if (guid ? a->subs[i].guid == guid : a->subs[i].lid == lid)
			return &a->subs[i];
	return NULL;
}

static const struct acks_port *find_port(const struct acks_port *ports, size_t n, size_t upto,
					 uint64_t guid)
{
	size_t i;

	for (i = 0; i < n && i < upto; i++)
		if (ports[i].guid == guid)
			return &ports[i];
	return NULL;
}

int acks_sync(struct acks *a, const struct acks_port *ports, size_t n)
{
	struct acks_sub *subs = n ? calloc(n, sizeof(*subs)) : NULL;
	size_t i, k = 0;

	if (n && !subs)
		return -1;
	for (i = 0; i < n; i++) {
		const struct acks_sub *old;

		if (find_port(ports, n, i, ports[i].guid))
			continue; /* the same port subscribed to both traps */
		sn_assert(k < n); /* one entry per distinct port at most */
		old = find(a, ports[i].guid, ports[i].lid);
		if (old) {
			subs[k] = *old;
		} else {
			subs[k].guid = ports[i].guid;
			/* Joining during an update: it cannot have seen the report yet. */
			subs[k].acked = 0;
		}
		subs[k].lid = ports[i].lid;
		k++;
	}
	free(a->subs);
	a->subs = subs;
	a->nsubs = k;
	a->cap = n;
	return 0;
}

void acks_begin(struct acks *a, uint32_t seq, int kind)
{
	size_t i;

	/* seq 0 and kind 0 mean "no report outstanding": the update never sends them. */
	sn_assert(seq != 0 && kind != 0);
	a->seq = seq;
	a->kind = kind;
	for (i = 0; i < a->nsubs; i++) {
		a->subs[i].acked = 0;
		a->subs[i].missed = 0;
	}
}

enum acks_verdict acks_record(struct acks *a, uint64_t guid, uint16_t lid, uint32_t seq, int kind,
			      unsigned status)
{
	struct acks_sub *s = find(a, guid, lid);

	if (!s) {
		a->unknown++;
		return ACKS_UNKNOWN;
	}
	if (s->expired) {
		/* It answers again: wait for it from now on. */
		s->expired = 0;
		s->missed = 0;
		a->revived++;
	}
	if (!a->seq || seq != a->seq || kind != a->kind) {
		a->stale++;
		return ACKS_STALE;
	}
	if (s->acked) {
		a->duplicates++;
		return ACKS_DUPLICATE;
	}
	if (status) {
		s->missed = 0;
		a->not_done++;
		return ACKS_NOT_DONE;
	}
	s->acked = 1;
	return ACKS_NEW;
}

size_t acks_pending(const struct acks *a)
{
	size_t i, n = 0;

	if (!a->seq)
		return 0;
	for (i = 0; i < a->nsubs; i++)
		n += !a->subs[i].acked && !a->subs[i].expired;
	return n;
}

size_t acks_round(struct acks *a, struct acks_port *out, size_t max)
{
	size_t i, n = 0;

	if (!a->seq)
		return 0;
	for (i = 0; i < a->nsubs; i++) {
		struct acks_sub *s = &a->subs[i];

		if (s->acked || s->expired)
			continue;
		if (++s->missed <= a->max_rounds)
			continue;
		s->expired = 1;
		if (n < max) {
			out[n].guid = s->guid;
			out[n].lid = s->lid;
		}
		n++;
	}
	return n;
}

void acks_end(struct acks *a)
{
	a->seq = 0;
	a->kind = 0;
}

const char *acks_verdict_name(enum acks_verdict v)
{
	switch (v) {
	case ACKS_NEW:
		return "new";
	case ACKS_DUPLICATE:
		return "duplicate";
	case ACKS_STALE:
		return "stale";
	case ACKS_UNKNOWN:
		return "unknown port";
	case ACKS_NOT_DONE:
		return "not done";
	}
	return "?";
}
