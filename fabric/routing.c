/*
 * routing.c - storage and accessors for an engine's output tables (see routing.h).
 */
#include "fabric/routing.h"
#include "lib/arena.h"
#include "lib/assert.h"

#include <stdlib.h>
#include <string.h>

int routing_init(struct routing *r, const struct fabric *f, const char *engine)
{
	size_t cells;
	uint32_t s;

	memset(r, 0, sizeof(*r));
	snprintf(r->engine, sizeof(r->engine), "%s", engine);
	r->nswitches = f->nswitches;
	for (s = 0; s < f->nswitches; s++)
		if (f->nodes[f->switches[s]].nports > r->max_port)
			r->max_port = (uint8_t)f->nodes[f->switches[s]].nports;
	r->lft_len = f->max_lid + 1;
	sn_assert(f->max_lid <= FAB_MAX_LID);
	cells = (size_t)r->nswitches * r->lft_len;
	r->lft = malloc(cells ? cells : 1);
	r->hops = malloc(cells ? cells : 1);
	if (!r->lft || !r->hops) {
		routing_free(r);
		return -1;
	}
	memset(r->lft, FAB_NO_PORT, cells);
	memset(r->hops, 0xff, cells);
	r->sl_mode = ROUTING_SL_UNIFORM;
	r->vls_used = 1;
	return 0;
}

void routing_free(struct routing *r)
{
	free(r->lft);
	free(r->hops);
	free(r->sl_by_dlid);
	free(r->sl_by_pair);
	free(r->sl_src_sw);
	free(r->sl2vl);
	memset(r, 0, sizeof(*r));
}

uint8_t routing_path_sl(const struct routing *r, uint16_t slid, uint16_t dlid)
{
	if (dlid >= r->lft_len)
		return r->sl_uniform;
	if (r->sl_mode == ROUTING_SL_PER_DLID) {
		sn_assert(r->sl_by_dlid);
		return r->sl_by_dlid[dlid];
	}
	if (r->sl_mode == ROUTING_SL_PER_SWITCH_DLID && slid < r->lft_len &&
	    r->sl_src_sw[slid] < r->nswitches)
		return r->sl_by_pair[(size_t)r->sl_src_sw[slid] * r->lft_len + dlid];
	return r->sl_uniform;
}

uint8_t routing_sl2vl(const struct routing *r, uint32_t sw, unsigned in_port, unsigned out_port,
		      unsigned sl)
{
	size_t s = r->sl2vl_stride;

	sl &= ROUTING_MAX_SL - 1;
	if (!r->sl2vl || sw >= r->nswitches || in_port >= s || out_port >= s)
		return r->sl2vl_uniform[sl];
	return routing_sl2vl_map(r, sw, in_port, out_port)[sl];
}

int routing_alloc_sl2vl(struct routing *r, const struct fabric *f)
{
	uint32_t i, stride = 1;
	size_t maps, m;

	for (i = 0; i < f->nswitches; i++)
		if (f->nodes[f->switches[i]].nports + 1u > stride)
			stride = f->nodes[f->switches[i]].nports + 1u;
	/* A node has at most 254 ports plus port 0: ports index the maps as bytes. */
	sn_assert(stride <= 256 && r->nswitches == f->nswitches);
	maps = (size_t)r->nswitches * stride * stride;
	free(r->sl2vl);
	r->sl2vl = malloc(maps * ROUTING_MAX_SL + 1);
	if (!r->sl2vl)
		return -1;
	r->sl2vl_stride = stride;
	for (m = 0; m < maps; m++)
		memcpy(r->sl2vl + m * ROUTING_MAX_SL, r->sl2vl_uniform, ROUTING_MAX_SL);
	return 0;
}

/*
 * Whether every port pair a route can take through switch sw has the same map as *first; the
 * first pair seen sets *first when it is NULL.
 */
static int switch_maps_equal(const struct routing *r, const struct fabric *f, uint32_t sw,
			     const uint8_t **first)
{
	unsigned nports = f->nodes[f->switches[sw]].nports, in, out;

	sn_assert(sw < r->nswitches && nports < r->sl2vl_stride);
	for (in = 0; in <= nports; in++) {
		for (out = 1; out <= nports; out++) {
			const uint8_t *map = routing_sl2vl_map(r, sw, in, out);

			if (in == out)
				continue;
			if (!*first)
				*first = map;
			else if (memcmp(*first, map, ROUTING_MAX_SL))
				return 0;
		}
	}
	return 1;
}

int routing_sl2vl_collapse(struct routing *r, const struct fabric *f)
{
	const uint8_t *first = NULL;
	uint32_t sw;

	if (!r->sl2vl)
		return 0;
	for (sw = 0; sw < f->nswitches; sw++)
		if (!switch_maps_equal(r, f, sw, &first))
			return 0;
	if (first)
		memcpy(r->sl2vl_uniform, first, ROUTING_MAX_SL);
	free(r->sl2vl);
	r->sl2vl = NULL;
	r->sl2vl_stride = 0;
	return 1;
}

int routing_alloc_sl_by_dlid(struct routing *r)
{
	free(r->sl_by_dlid);
	r->sl_by_dlid = malloc(r->lft_len);
	if (!r->sl_by_dlid)
		return -1;
	memset(r->sl_by_dlid, r->sl_uniform, r->lft_len);
	r->sl_mode = ROUTING_SL_PER_DLID;
	return 0;
}

uint32_t routing_lid_switch(const struct fabric *f, uint32_t lid)
{
	uint8_t exit_port;

	return fabric_lid_switch(f, lid, &exit_port);
}

int routing_alloc_sl_by_pair(struct routing *r, const struct fabric *f)
{
	size_t cells = (size_t)r->nswitches * r->lft_len;
	uint32_t lid;

	free(r->sl_by_pair);
	free(r->sl_src_sw);
	r->sl_by_pair = malloc(cells ? cells : 1);
	r->sl_src_sw = malloc(sizeof(*r->sl_src_sw) * r->lft_len);
	if (!r->sl_by_pair || !r->sl_src_sw) {
		free(r->sl_by_pair);
		free(r->sl_src_sw);
		r->sl_by_pair = NULL;
		r->sl_src_sw = NULL;
		return -1;
	}
	memset(r->sl_by_pair, r->sl_uniform, cells);
	sn_assert(r->lft_len == f->max_lid + 1 && r->nswitches == f->nswitches);
	for (lid = 0; lid < r->lft_len; lid++) {
		r->sl_src_sw[lid] = lid ? routing_lid_switch(f, lid) : FAB_NONE;
		sn_assert(r->sl_src_sw[lid] == FAB_NONE || r->sl_src_sw[lid] < r->nswitches);
	}
	r->sl_mode = ROUTING_SL_PER_SWITCH_DLID;
	return 0;
}

uint8_t *routing_lfts_by_lid(const struct routing *r, uint64_t max_bytes)
{
	uint32_t nsw = r->nswitches, len = r->lft_len, s, l, b;
	uint8_t *by_lid;

	if ((uint64_t)nsw * len > max_bytes)
		return NULL;
	by_lid = malloc((size_t)nsw * len + 1);
	if (!by_lid)
		return NULL;
	/* 64 LIDs of a row at a time: one cache line read, 64 written a block apart. */
	for (b = 0; b < len; b += 64)
		for (s = 0; s < nsw; s++) {
			const uint8_t *row = routing_lft(r, s);

			for (l = b; l < b + 64 && l < len; l++)
				by_lid[(size_t)l * nsw + s] = row[l];
		}
	return by_lid;
}

/* The SL a packet entering at switch src_sw takes towards dlid. */
static uint8_t sl_from_switch(const struct routing *r, uint32_t src_sw, uint32_t dlid)
{
	sn_assert(src_sw < r->nswitches && dlid < r->lft_len);
	switch (r->sl_mode) {
	case ROUTING_SL_PER_DLID:
		return r->sl_by_dlid[dlid];
	case ROUTING_SL_PER_SWITCH_DLID:
		return r->sl_by_pair[(size_t)src_sw * r->lft_len + dlid];
	case ROUTING_SL_UNIFORM:
		break;
	}
	return r->sl_uniform;
}

static int lid_changed(const struct routing *a, const struct routing *b, uint32_t lid)
{
	uint32_t sw;

	for (sw = 0; sw < a->nswitches; sw++) {
		size_t at = (size_t)sw * a->lft_len + lid;

		if (a->lft[at] != b->lft[at] ||
		    sl_from_switch(a, sw, lid) != sl_from_switch(b, sw, lid))
			return 1;
	}
	return 0;
}

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

/* Merges neighbouring ranges across the smallest gaps until at most max remain. */
static unsigned merge_ranges(struct routing_lid_range *rg, unsigned n, unsigned max)
{
	uint32_t *gaps, limit;
	unsigned i, k = 0;

	if (n <= max)
		return n;
	gaps = malloc(sizeof(*gaps) * (n - 1));
	if (!gaps) {
		/* One range over everything names no changed LID too few. */
		rg[0].last = rg[n - 1].last;
		return 1;
	}
	for (i = 0; i + 1 < n; i++) {
		/* Ranges come ascending and apart: adjacent LIDs were joined when found. */
		sn_assert(rg[i + 1].first > rg[i].last + 1);
		gaps[i] = rg[i + 1].first - rg[i].last;
	}
	qsort(gaps, n - 1, sizeof(*gaps), cmp_u32);
	limit = max > 1 ? gaps[n - max - 1] : UINT32_MAX;
	free(gaps);
	for (i = 1; i < n; i++) {
		if (rg[i].first - rg[k].last <= limit)
			rg[k].last = rg[i].last;
		else
			rg[++k] = rg[i];
	}
	/* At least n - max gaps are at or below the limit and merged away. */
	sn_assert(k + 1 <= max);
	return k + 1;
}

int routing_changed_lids(const struct routing *a, const struct routing *b,
			 struct routing_lid_range *out, unsigned max, uint32_t *changed)
{
	struct routing_lid_range *rg = NULL;
	uint32_t n = 0, cap = 0, lid;

	*changed = 0;
	if (a->nswitches != b->nswitches || a->lft_len != b->lft_len || !max)
		return -1;
	for (lid = 1; lid < a->lft_len; lid++) {
		if (!lid_changed(a, b, lid))
			continue;
		(*changed)++;
		if (n && rg[n - 1].last + 1 == lid) {
			rg[n - 1].last = lid;
			continue;
		}
		if (fab_grow((void **)&rg, &cap, n + 1, sizeof(*rg), 64)) {
			free(rg);
			return -1;
		}
		sn_assert(!n || rg[n - 1].last + 1 < lid);
		rg[n].first = rg[n].last = lid;
		n++;
	}
	n = merge_ranges(rg, n, max);
	sn_assert(n <= max && n <= *changed);
	if (n)
		memcpy(out, rg, sizeof(*rg) * n);
	free(rg);
	return (int)n;
}
