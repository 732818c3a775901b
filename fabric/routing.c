/*
 * routing.c - storage and accessors for an engine's output tables (see routing.h).
 */
#include "routing.h"

#include <stdlib.h>
#include <string.h>

int routing_init(struct routing *r, const struct fabric *f, const char *engine)
{
	size_t cells;

	memset(r, 0, sizeof(*r));
	snprintf(r->engine, sizeof(r->engine), "%s", engine);
	r->nswitches = f->nswitches;
	r->lft_len = f->max_lid + 1;
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
	if (r->sl_mode == ROUTING_SL_PER_DLID)
		return r->sl_by_dlid[dlid];
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
	return r->sl2vl[(((size_t)sw * s + in_port) * s + out_port) * ROUTING_MAX_SL + sl];
}

int routing_alloc_sl2vl(struct routing *r, const struct fabric *f)
{
	uint32_t i, stride = 1;
	size_t maps, m;

	for (i = 0; i < f->nswitches; i++)
		if (f->nodes[f->switches[i]].nports + 1u > stride)
			stride = f->nodes[f->switches[i]].nports + 1u;
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
	for (lid = 0; lid < r->lft_len; lid++)
		r->sl_src_sw[lid] = lid ? routing_lid_switch(f, lid) : FAB_NONE;
	r->sl_mode = ROUTING_SL_PER_SWITCH_DLID;
	return 0;
}
