/*
 * planes.c - escape plane and merge of the two routing planes (see planes.h).  The engines route
 * plane views of the fabric (fabric_plane_view), so nothing here knows how an engine works; this
 * file only picks the escape routing, remembers it, and puts the two tables together.
 */
#include "engines/planes.h"
#include "lib/assert.h"

#include <string.h>

#include "check/metrics.h"
#include "engines/nue/nue.h"
#include "engines/updn/updn.h"

void escape_plane_init(struct escape_plane *e)
{
	memset(e, 0, sizeof(*e));
}

void escape_plane_free(struct escape_plane *e)
{
	routing_free(&e->r);
	escape_plane_init(e);
}

static uint64_t options_key(const struct sarnue_options *o, unsigned vl)
{
	uint64_t h = 0xcbf29ce484222325ull;
	unsigned i;

	h = (h ^ o->escape) * 0x100000001b3ull;
	h = (h ^ vl) * 0x100000001b3ull;
	for (i = 0; i < o->n_updn_roots; i++)
		h = (h ^ o->updn_roots[i]) * 0x100000001b3ull;
	return h;
}

int escape_plane_matches(const struct escape_plane *e, uint64_t fp, const struct sarnue_options *o,
			 unsigned vl)
{
	return e->valid && fp && e->fingerprint == fp && e->vl == vl &&
	       e->opts_key == options_key(o, vl);
}

/* Maximum EFI of the routes to every LID of the view (its high LIDs), or 0 on failure. */
static uint64_t plane_max_efi(const struct fabric *view, const struct routing *r)
{
	struct metrics_options mo;
	struct metrics_efi efi;
	uint64_t max = 0;

	metrics_options_default(&mo);
	mo.all_lids = 1;
	if (!metrics_efi(view, r, &mo, &efi))
		max = efi.dist.max;
	metrics_efi_free(&efi);
	return max;
}

static int route_updn(const struct fabric *view, const struct sarnue_options *o, struct routing *r,
		      struct fab_error *err)
{
	struct updn_opts uo = { .root_guids = o->updn_roots, .nroots = o->n_updn_roots };
	struct updn_report rep;

	return updn_route(view, &uo, r, &rep, err);
}

static int route_nue1(const struct fabric *view, struct routing *r, struct fab_error *err)
{
	/* One layer and no job map: the escape plane must not depend on the jobs. */
	struct nue_opts no = { .vls = 1, .jobs = NULL };
	struct nue_report rep;

	return nue_route(view, &no, r, &rep, err);
}

/* escape=auto: both routings, the lower maximum EFI wins, ties and failures of Nue to updn. */
static int route_auto(const struct fabric *view, const struct sarnue_options *o,
		      struct escape_plane *e, struct fab_error *err)
{
	struct fab_error nerr = { "" };
	struct routing nr;
	uint64_t updn_efi, nue_efi;
	int updn_ok, nue_ok;

	if (routing_init(&nr, view, "sar-nue")) {
		fab_error_set(err, "out of memory");
		return -1;
	}
	updn_ok = !route_updn(view, o, &e->r, err);
	nue_ok = !route_nue1(view, &nr, &nerr);
	updn_efi = updn_ok ? plane_max_efi(view, &e->r) : 0;
	nue_efi = nue_ok ? plane_max_efi(view, &nr) : 0;
	if (nue_ok && (!updn_ok || nue_efi < updn_efi)) {
		routing_free(&e->r);
		e->r = nr;
		e->engine = "sar-nue";
		e->max_efi = nue_efi;
		e->other_max_efi = updn_efi;
		return 0;
	}
	routing_free(&nr);
	if (!updn_ok) {
		fab_error_set(err, "escape plane: neither Up*/Down* (%.200s) nor Nue (%.200s)",
			      err->msg, nerr.msg);
		return -1;
	}
	e->engine = "sar-updn";
	e->max_efi = updn_efi;
	e->other_max_efi = nue_efi;
	return 0;
}

int escape_plane_route(const struct fabric *f, uint64_t fp, const struct sarnue_options *o,
		       unsigned vl, struct escape_plane *e, struct fab_error *err)
{
	struct fabric view;
	int rc = -1;

	escape_plane_free(e);
	sn_assert(vl < ROUTING_MAX_SL);
	if (fabric_plane_view(f, FAB_PLANE_HIGH, &view)) {
		fab_error_set(err, "out of memory");
		return -1;
	}
	if (routing_init(&e->r, &view, "escape")) {
		fab_error_set(err, "out of memory");
		goto out;
	}
	if (o->escape == OPT_ESCAPE_AUTO) {
		rc = route_auto(&view, o, e, err);
	} else if (o->escape == OPT_ESCAPE_NUE) {
		e->engine = "sar-nue";
		rc = route_nue1(&view, &e->r, err);
	} else {
		e->engine = "sar-updn";
		rc = route_updn(&view, o, &e->r, err);
	}
	if (rc)
		goto out;
	e->valid = 1;
	e->fingerprint = fp;
	e->vl = vl;
	e->opts_key = options_key(o, vl);
out:
	fabric_plane_view_free(&view);
	if (rc)
		escape_plane_free(e);
	return rc;
}

static int merge_sls(const struct fabric *f, const struct routing *base, uint8_t esc,
		     struct routing *out)
{
	uint32_t s, dlid;

	sn_assert(esc < ROUTING_MAX_SL && out->nswitches == f->nswitches);
	out->sl_uniform = base->sl_uniform;
	if (base->sl_mode == ROUTING_SL_PER_SWITCH_DLID) {
		/* Sources now include high LIDs: sl_src_sw comes from the whole fabric. */
		if (routing_alloc_sl_by_pair(out, f))
			return -1;
		memcpy(out->sl_by_pair, base->sl_by_pair, (size_t)out->nswitches * out->lft_len);
		for (dlid = 1; dlid < out->lft_len; dlid++)
			if (fabric_lid_is_high(f, dlid))
				for (s = 0; s < out->nswitches; s++)
					routing_set_pair_sl(out, s, dlid, esc);
		return 0;
	}
	if (routing_alloc_sl_by_dlid(out))
		return -1;
	for (dlid = 1; dlid < out->lft_len; dlid++)
		out->sl_by_dlid[dlid] = fabric_lid_is_high(f, dlid)
						? esc
						: routing_path_sl(base, 0, (uint16_t)dlid);
	return 0;
}

/* No SL that base's paths use may reach the escape VL anywhere. */
static int check_base_vls(const struct fabric *f, const struct routing *out, uint8_t esc,
			  struct fab_error *err)
{
	uint32_t s, dlid;
	uint16_t used = 0;
	unsigned sl;

	sn_assert(esc < ROUTING_MAX_SL && out->lft_len == f->max_lid + 1);
	for (dlid = 1; dlid < out->lft_len; dlid++) {
		if (f->lid_port[dlid] == FAB_NONE || fabric_lid_is_high(f, dlid))
			continue;
		if (out->sl_mode != ROUTING_SL_PER_SWITCH_DLID) {
			used |= (uint16_t)(1u << routing_path_sl(out, 0, (uint16_t)dlid));
			continue;
		}
		for (s = 0; s < out->nswitches; s++)
			used |= (uint16_t)(1u << out->sl_by_pair[(size_t)s * out->lft_len + dlid]);
	}
	for (sl = 0; sl < ROUTING_MAX_SL; sl++) {
		if (!(used & (1u << sl)))
			continue;
		if (sl == esc || out->sl2vl_uniform[sl] == esc) {
			fab_error_set(err, "base plane uses SL %u on the escape VL %u", sl, esc);
			return -1;
		}
	}
	return 0;
}

int planes_merge(const struct fabric *f, const struct routing *base, const struct escape_plane *e,
		 struct routing *out, struct fab_error *err)
{
	uint8_t esc = (uint8_t)e->vl;
	size_t cells = (size_t)out->nswitches * out->lft_len, m, maps;
	uint32_t s, dlid;

	if (base->lft_len != out->lft_len || e->r.lft_len != out->lft_len ||
	    base->nswitches != out->nswitches || e->r.nswitches != out->nswitches) {
		fab_error_set(err, "planes: tables of different fabrics");
		return -1;
	}
	/* The escape VL is the last of at most 16. */
	sn_assert(e->vl < ROUTING_MAX_SL && out->nswitches == f->nswitches);
	memcpy(out->lft, base->lft, cells);
	memcpy(out->hops, base->hops, cells);
	for (dlid = 1; dlid < out->lft_len; dlid++) {
		if (!fabric_lid_is_high(f, dlid))
			continue;
		for (s = 0; s < out->nswitches; s++) {
			sn_assert(routing_lft(&e->r, s)[dlid] == FAB_NO_PORT ||
				  routing_lft(&e->r, s)[dlid] <= out->max_port);
			routing_lft(out, s)[dlid] = routing_lft(&e->r, s)[dlid];
			routing_hops(out, s)[dlid] = routing_hops(&e->r, s)[dlid];
		}
	}
	memcpy(out->sl2vl_uniform, base->sl2vl_uniform, sizeof(out->sl2vl_uniform));
	out->sl2vl_uniform[esc] = esc;
	if (merge_sls(f, base, esc, out))
		goto oom;
	if (base->sl2vl) {
		if (routing_alloc_sl2vl(out, f))
			goto oom;
		maps = (size_t)out->nswitches * out->sl2vl_stride * out->sl2vl_stride;
		memcpy(out->sl2vl, base->sl2vl, maps * ROUTING_MAX_SL);
		for (m = 0; m < maps; m++)
			out->sl2vl[m * ROUTING_MAX_SL + esc] = esc;
	}
	out->vls_used = esc + 1u;
	return check_base_vls(f, out, esc, err);
oom:
	fab_error_set(err, "out of memory");
	return -1;
}
