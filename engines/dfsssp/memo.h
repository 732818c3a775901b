/*
 * memo.h - the incremental reroute's memory of sar-dfsssp (struct dfsssp_memo in dfsssp.h):
 * signature hashing, matching a memo to a fabric, storing a routing.
 */
#ifndef SARNUE_DFSSSP_MEMO_H
#define SARNUE_DFSSSP_MEMO_H

#include "engines/dfsssp/dfsssp.h"

/* Folds v into the running hash h; never returns 0. */
uint64_t dfsssp_sig_mix(uint64_t h, uint64_t v);

/* The memo's key: the fabric's fingerprint and the options that shape paths beyond demand. */
uint64_t dfsssp_memo_key(const struct fabric *f, const struct dfsssp_opts *o);

/* m when it was made for the fabric key names with routing r's size; NULL otherwise. */
const struct dfsssp_memo *dfsssp_memo_match(const struct dfsssp_memo *m, uint64_t key,
					    const struct routing *r, uint32_t nsw);

/* Replaces m with r's columns and sig[r->lft_len] (taken over, freed on failure). */
int dfsssp_memo_store(struct dfsssp_memo *m, uint64_t key, const struct routing *r, uint32_t nsw,
		      uint64_t *sig);

#endif
