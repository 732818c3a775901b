/*
 * memo.c - what sar-dfsssp keeps from one routing for the next on the same fabric (the
 * incremental reroute, see dfsssp.h): demand signatures and forwarding columns per LID.
 */
#include "engines/dfsssp/dfsssp.h"
#include "engines/dfsssp/memo.h"

#include <stdlib.h>
#include <string.h>

void dfsssp_memo_free(struct dfsssp_memo *m)
{
	free(m->sig);
	free(m->lft);
	free(m->hops);
	memset(m, 0, sizeof(*m));
}

uint64_t dfsssp_sig_mix(uint64_t h, uint64_t v)
{
	/* splitmix64's finaliser over the running hash: order matters, as it should. */
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return h ? h : 1;
}

uint64_t dfsssp_memo_key(const struct fabric *f, const struct dfsssp_opts *o)
{
	uint64_t opts = (uint64_t)o->skip_job_sort | (uint64_t)o->skip_weight_reset << 1 |
			(uint64_t)o->skip_improve << 2;

	return dfsssp_sig_mix(fabric_fingerprint(f), opts);
}

const struct dfsssp_memo *dfsssp_memo_match(const struct dfsssp_memo *m, uint64_t key,
					    const struct routing *r, uint32_t nsw)
{
	if (!m || !key || m->key != key || m->nsw != nsw || m->lft_len != r->lft_len || !m->sig)
		return NULL;
	return m;
}

int dfsssp_memo_store(struct dfsssp_memo *m, uint64_t key, const struct routing *r, uint32_t nsw,
		      uint64_t *sig)
{
	size_t n = (size_t)nsw * r->lft_len;

	dfsssp_memo_free(m);
	m->lft = malloc(n + 1);
	m->hops = malloc(n + 1);
	if (!m->lft || !m->hops) {
		free(sig);
		dfsssp_memo_free(m);
		return -1;
	}
	memcpy(m->lft, r->lft, n);
	memcpy(m->hops, r->hops, n);
	m->sig = sig;
	m->nsw = nsw;
	m->lft_len = r->lft_len;
	m->key = key;
	return 0;
}
