/*
 * mcast_glue.c - multicast trees inside OpenSM for every sarnue engine.
 *
 * OpenSM calls mcast_build_stree once per MLID: after each unicast routing for every group,
 * and later for a group whose members changed.  The tree is the group's part of the spanning
 * tree the engines keep free on the VL of SL 0 (mcast_tree_choose: sar-nue and sar-dfsssp
 * reserve its turns before they route, and on a fat tree it climbs and descends as the Up*\/Down*
 * and D-mod-k routes do), so groups of SL 0 fit by construction.  Before OpenSM gets a tree the
 * verifier checks it anyway, with the unicast routes and the trees already built, on the VL the
 * group's SL maps to; a tree that closes a credit loop is not used: breadth-first trees from
 * other roots are tried, and when none fits the group gets no tree and the log says why.
 * Trees never move unicast routes.
 */
#include "plugin/mcast_glue.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <opensm/osm_mcast_mgr.h>
#include <opensm/osm_opensm.h>
#include <opensm/osm_sm.h>
#include <opensm/osm_switch.h>

#include "check/verify.h"
#include "engines/mcasttree.h"
#include "fabric/mcast.h"
#include "lib/assert.h"
#include "plugin/ctl.h"
#include "plugin/log.h"

#define MCAST_ROOT_TRIES 4

struct mcast_state {
	struct mcast built; /* the trees OpenSM holds since the routing, one group per MLID */
	struct mcast trial; /* built, with the group in hand replaced */
	int have_order;	    /* roots[] chosen for this routing */
	uint32_t roots[MCAST_ROOT_TRIES];
	unsigned nroots;
	struct mcast_tree tree; /* the reserved tree (mcast_tree_choose), kept across groups */
	/* The routing's unicast dependencies, so a group's check walks no unicast path again. */
	struct verify_deps *unicast;
	/* MLIDs refused since the routing: a group refused again (each join) logs at verbose. */
	uint8_t refused[(0xffff - MCAST_FIRST_MLID + 1 + 7) / 8];
	int have_tree;
	/* Fat trees under an Up*\/Down* engine: groups spread over the top switches. */
	int spread_wanted;
	int spread_ok; /* 0 not tried for this routing, 1 a fat tree, -1 not */
	struct mcast_spread spread;
	/* OpenSM's pass over every group after the routing, summed up in one line at its end. */
	struct {
		unsigned expected, done, trees, spread, refused, empty;
		unsigned vls; /* bit per VL a tree's SL maps to */
		double seconds;
	} pass;
};

struct mcast_state *mcast_state_new(int spread_over_tops)
{
	struct mcast_state *s = calloc(1, sizeof(*s));

	if (s) {
		s->spread_wanted = spread_over_tops;
		mcast_init(&s->built);
		mcast_init(&s->trial);
	}
	return s;
}

void mcast_state_reset(struct mcast_state *s)
{
	if (!s)
		return;
	mcast_clear(&s->built);
	memset(s->refused, 0, sizeof(s->refused));
	verify_deps_free(s->unicast);
	s->unicast = NULL;
	if (s->have_tree)
		mcast_tree_free(&s->tree);
	s->have_tree = 0;
	s->have_order = 0;
	if (s->spread_ok == 1)
		mcast_spread_free(&s->spread);
	s->spread_ok = 0;
	memset(&s->pass, 0, sizeof(s->pass));
}

void mcast_state_free(struct mcast_state *s)
{
	if (!s)
		return;
	mcast_state_reset(s);
	mcast_free(&s->built);
	mcast_free(&s->trial);
	free(s);
}

static unsigned switch_links(const struct fabric *f, uint32_t sw)
{
	return f->sw_adj_off[sw + 1] - f->sw_adj_off[sw];
}

/*
 * Roots of the trees tried after the reserved one (mcast_tree_choose): the switches with the
 * most switch links, lowest index first on ties.
 */
static void choose_roots(struct mcast_state *s, const struct fabric *f)
{
	uint32_t i, j;

	s->nroots = 0;
	for (i = 0; i < f->nswitches; i++) {
		unsigned at = s->nroots;

		while (at > 0 && switch_links(f, s->roots[at - 1]) < switch_links(f, i))
			at--;
		if (at >= MCAST_ROOT_TRIES)
			continue;
		if (s->nroots < MCAST_ROOT_TRIES)
			s->nroots++;
		for (j = s->nroots - 1; j > at; j--)
			s->roots[j] = s->roots[j - 1];
		s->roots[at] = i;
	}
	s->have_order = 1;
}

/* Copies group g of src into dst as a whole group. */
static int copy_group(struct mcast *dst, const struct mcast *src, const struct mcast_group *g)
{
	uint32_t i;
	unsigned w, p;

	if (mcast_begin_group(dst, g->mlid, g->sl))
		return -1;
	for (i = 0; i < g->nmembers; i++)
		if (mcast_add_member(dst, src->members[g->first_member + i]))
			return -1;
	for (i = 0; i < g->nentries; i++) {
		const struct mcast_entry *e = &src->entries[g->first_entry + i];

		for (w = 0; w < MCAST_MASK_WORDS; w++)
			for (p = 0; p < 64; p++)
				if (e->ports[w] >> p & 1 && mcast_set_port(dst, e->sw, w * 64 + p))
					return -1;
	}
	mcast_end_group(dst);
	return 0;
}

/* dst = src without the group of mlid. */
static int copy_without(struct mcast *dst, const struct mcast *src, uint16_t mlid)
{
	uint32_t i;

	mcast_clear(dst);
	for (i = 0; i < src->ngroups; i++)
		if (src->groups[i].mlid != mlid && copy_group(dst, src, &src->groups[i]))
			return -1;
	return 0;
}

/* The member ports of the box as fabric port indices; OpenSM's port list, then its LIDs. */
static uint32_t box_members(const struct fabric *f, osm_mgrp_box_t *mbox, uint32_t **out)
{
	cl_qlist_t list;
	cl_qmap_t map;
	cl_list_item_t *it;
	uint32_t n = 0, *ports;

	*out = NULL;
	if (osm_mcast_make_port_list_and_map(&list, &map, mbox))
		return 0;
	ports = malloc(sizeof(*ports) * (cl_qlist_count(&list) + 1));
	for (it = cl_qlist_head(&list); ports && it != cl_qlist_end(&list);
	     it = cl_qlist_next(it)) {
		osm_mcast_work_obj_t *w = cl_item_obj(it, w, list_item);
		unsigned lid = cl_ntoh16(osm_port_get_base_lid(w->p_port));

		/* A port without a live link can be reached by no tree: it is left out. */
		if (lid && lid <= f->max_lid && f->lid_port[lid] != FAB_NONE &&
		    fabric_endport_switch(f, f->lid_port[lid]) != FAB_NONE)
			ports[n++] = f->lid_port[lid];
	}
	osm_mcast_drop_port_list(&list);
	*out = ports;
	return n;
}

static uint8_t box_sl(osm_mgrp_box_t *mbox)
{
	osm_mgrp_t *mgrp;
	uint8_t sl, hop;
	uint32_t flow;

	if (cl_is_qlist_empty(&mbox->mgrp_list))
		return 0;
	mgrp = cl_item_obj(cl_qlist_head(&mbox->mgrp_list), mgrp, list_item);
	ib_member_get_sl_flow_hop(mgrp->mcmember_rec.sl_flow_hop, &sl, &flow, &hop);
	return sl;
}

/* OpenSM's multicast tables of the group's switches, from the model's masks. */
static void program_tables(const struct mcast *m, const struct mcast_group *g,
			   osm_switch_t **osm_switches)
{
	uint32_t i;
	unsigned w, p;

	for (i = 0; i < g->nentries; i++) {
		const struct mcast_entry *e = &m->entries[g->first_entry + i];
		osm_mcast_tbl_t *tbl = osm_switch_get_mcast_tbl_ptr(osm_switches[e->sw]);

		for (w = 0; w < MCAST_MASK_WORDS; w++)
			for (p = 0; p < 64; p++)
				if (e->ports[w] >> p & 1)
					osm_mcast_tbl_set(tbl, g->mlid, (uint8_t)(w * 64 + p));
	}
}

/*
 * The tree of attempt k: with spreading, 0 is the group's top switch; then the reserved tree,
 * then the other roots.  Sets *t to the tree (s->tree or *other); 0, 1 when there is no such
 * attempt, -1 without memory.
 */
static int attempt_tree(struct mcast_state *s, const struct fabric *f, unsigned k, unsigned top,
			struct mcast_tree *other, struct mcast_tree **t)
{
	if (s->spread_ok == 1) {
		if (k == 0) {
			*t = other;
			return mcast_spread_tree(f, &s->spread, top, other);
		}
		k--;
	}
	if (k == 0) {
		if (!s->have_tree) {
			if (mcast_tree_choose(f, &s->tree))
				return -1;
			s->have_tree = 1;
		}
		*t = &s->tree;
		return 0;
	}
	if (k - 1 >= s->nroots)
		return 1;
	*t = other;
	return mcast_tree_build(f, s->roots[k - 1], NULL, other);
}

/* Tries tree t for the group; 1 when it fits (the trial holds it), 0 when not, -1 without memory.
 */
static int try_tree(struct mcast_state *s, const struct fabric *f, struct routing *r,
		    struct mcast_tree *t, uint16_t mlid, uint8_t sl, const uint32_t *members,
		    uint32_t nmembers, struct verify_report *rep)
{
	int ok, missed;

	ok = copy_without(&s->trial, &s->built, mlid) || mcast_begin_group(&s->trial, mlid, sl) ? -1
												: 0;
	if (!ok) {
		missed = mcast_tree_group(f, t, &s->trial, members, nmembers);
		ok = missed < 0 ? -1 : 0;
	}
	if (!ok) {
		mcast_end_group(&s->trial);
		r->mcast = &s->trial;
		/* The first group after a routing walks the unicast routes once, for all groups. */
		if (!s->unicast)
			s->unicast = verify_deps_new(f, r);
		if (s->unicast)
			ok = verify_with_deps(s->unicast, f, r, rep) ? -1 : verify_ok(rep);
		else
			ok = verify_routing(f, r, rep) ? -1 : verify_ok(rep);
		r->mcast = NULL;
	}
	return ok;
}

/* Groups refused a tree since the routing and not built since. */
static unsigned refused_count(const struct mcast_state *s)
{
	unsigned n = 0;
	size_t i;

	for (i = 0; i < sizeof(s->refused); i++)
		n += (unsigned)__builtin_popcount(s->refused[i]);
	return n;
}

static void mark_refused(struct mcast_state *s, uint16_t mlid, int refused)
{
	unsigned bit = (unsigned)mlid - MCAST_FIRST_MLID;

	if (mlid < MCAST_FIRST_MLID)
		return;
	if (refused)
		s->refused[bit / 8] |= (uint8_t)(1u << (bit % 8));
	else
		s->refused[bit / 8] &= (uint8_t) ~(1u << (bit % 8));
}

/* Drops the tree of mlid from the built ones (without memory it stays: checks only stricter). */
static void forget_group(struct mcast_state *s, uint16_t mlid)
{
	if (!copy_without(&s->trial, &s->built, mlid)) {
		struct mcast tmp = s->built;

		s->built = s->trial;
		s->trial = tmp;
	}
}

static double seconds_between(const struct timespec *t0, const struct timespec *t1)
{
	return (double)(t1->tv_sec - t0->tv_sec) + (double)(t1->tv_nsec - t0->tv_nsec) / 1e9;
}

/* Groups OpenSM holds: after a routing it asks for the tree of every one of them in turn. */
static unsigned count_groups(const struct sarnue_plugin *p)
{
	const osm_subn_t *subn = &p->osm->subn;
	unsigned i, n = 0;

	for (i = 0; i + IB_LID_MCAST_START_HO <= subn->max_mcast_lid_ho; i++)
		n += subn->mboxes[i] != NULL;
	return n;
}

enum pass_outcome {
	PASS_EMPTY,
	PASS_TREE,
	PASS_REFUSED
};

/* One group of the pass is done; the last one logs the routing's multicast in one line. */
static void pass_note(struct sarnue_plugin *p, const char *engine, struct mcast_state *s,
		      enum pass_outcome outcome, int spread, unsigned vl, double seconds)
{
	char vls[64] = "";
	size_t used = 0;
	unsigned v;

	if (s->pass.done >= s->pass.expected)
		return;
	s->pass.done++;
	s->pass.trees += outcome == PASS_TREE;
	s->pass.refused += outcome == PASS_REFUSED;
	s->pass.empty += outcome == PASS_EMPTY;
	s->pass.spread += spread;
	s->pass.vls |= outcome == PASS_TREE ? 1u << (vl & 15) : 0;
	s->pass.seconds += seconds;
	if (s->pass.done < s->pass.expected)
		return;
	for (v = 0; v < 16 && used < sizeof(vls); v++)
		if (s->pass.vls >> v & 1)
			used += (size_t)snprintf(vls + used, sizeof(vls) - used, "%s%u",
						 used ? "," : "", v);
	plog(p, OSM_LOG_INFO,
	     "%s: multicast after the routing: %u group(s), %u tree(s) built (%u from their own "
	     "top switch), %u refused, %u with fewer than 2 members, VL(s) %s, %.3f s",
	     engine, s->pass.expected, s->pass.trees, s->pass.spread, s->pass.refused,
	     s->pass.empty, *vls ? vls : "none", s->pass.seconds);
}

ib_api_status_t mcast_glue_build(struct sarnue_plugin *p, const char *engine, struct mcast_state *s,
				 const struct fabric *f, struct routing *r,
				 osm_switch_t **osm_switches, osm_mgrp_box_t *mbox)
{
	struct verify_report rep;
	struct mcast_tree other, *t = NULL;
	struct timespec t0, t1;
	uint16_t mlid = mbox->mlid;
	uint8_t sl = box_sl(mbox);
	uint32_t *members = NULL, nmembers, root = FAB_NONE;
	unsigned attempt, top = 0;
	int ok = 0, have;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!s->have_order) {
		/* The first group since the routing: OpenSM's pass over all of them begins. */
		choose_roots(s, f);
		s->pass.expected = count_groups(p);
	}
	nmembers = box_members(f, mbox, &members);
	if (nmembers < 2) {
		/* Nothing to forward; the old tree, if any, is gone (OpenSM cleared the MLID). */
		forget_group(s, mlid);
		mark_refused(s, mlid, 0);
		ctl_note_mcast(p, s->built.ngroups, refused_count(s));
		free(members);
		pass_note(p, engine, s, PASS_EMPTY, 0, 0, 0);
		return IB_SUCCESS;
	}
	if (s->spread_wanted && !s->spread_ok)
		s->spread_ok = mcast_spread_init(&s->spread, f) == 1 ? 1 : -1;
	if (s->spread_ok == 1)
		top = mcast_spread_pick(&s->spread, mlid);
	memset(&rep, 0, sizeof(rep));
	for (attempt = 0; ok == 0; attempt++) {
		have = attempt_tree(s, f, attempt, top, &other, &t);
		if (have)
			break;
		ok = try_tree(s, f, r, t, mlid, sl, members, nmembers, &rep);
		root = t->root;
		if (t == &other)
			mcast_tree_free(&other);
	}
	free(members);
	if (ok < 0 || have < 0)
		goto oom;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (!ok) {
		unsigned bit = mlid - MCAST_FIRST_MLID;
		int again = mlid >= MCAST_FIRST_MLID && (s->refused[bit / 8] >> (bit % 8) & 1);

		mark_refused(s, mlid, 1);
		forget_group(s, mlid); /* OpenSM cleared its tables before asking */
		ctl_note_mcast(p, s->built.ngroups, refused_count(s));
		plog(p, again ? OSM_LOG_VERBOSE : OSM_LOG_ERROR,
		     "ERR %s: multicast MLID 0x%04x (SL %u): no tree from %u root(s) fits the "
		     "unicast routes: %s%s; the group gets no tree",
		     engine, mlid, sl, attempt,
		     *rep.first_mcast_problem ? rep.first_mcast_problem : "credit loop ",
		     *rep.first_mcast_problem ? "" : rep.cycle);
		pass_note(p, engine, s, PASS_REFUSED, 0, 0, seconds_between(&t0, &t1));
		return IB_ERROR;
	}
	{
		struct mcast tmp = s->built;
		const struct mcast_group *g;
		int spread = s->spread_ok == 1 && attempt == 1;

		s->built = s->trial;
		s->trial = tmp;
		g = mcast_find_group(&s->built, mlid);
		sn_assert(g != NULL);
		program_tables(&s->built, g, osm_switches);
		mark_refused(s, mlid, 0);
		if (s->spread_ok == 1)
			mcast_spread_set(&s->spread, mlid, spread ? top : UINT_MAX, nmembers);
		ctl_note_mcast(p, s->built.ngroups, refused_count(s));
		plog(p, OSM_LOG_INFO,
		     "%s: multicast MLID 0x%04x: SL %u on VL %u, %u members, tree of %u switches "
		     "from %s %s (try %u), checked with the unicast routes and %u other tree(s): "
		     "no credit loop, %.3f s",
		     engine, mlid, sl, r->sl2vl_uniform[sl & 15], nmembers, g->nentries,
		     spread ? "top switch" : "root", fabric_node_desc(f, f->switches[root]),
		     attempt, s->built.ngroups - 1, seconds_between(&t0, &t1));
		pass_note(p, engine, s, PASS_TREE, spread, r->sl2vl_uniform[sl & 15],
			  seconds_between(&t0, &t1));
	}
	return IB_SUCCESS;
oom:
	plog(p, OSM_LOG_ERROR, "ERR %s: multicast MLID 0x%04x: out of memory", engine, mlid);
	return IB_ERROR;
}

void mcast_glue_after_reroute(struct sarnue_plugin *p)
{
	osm_opensm_t *osm = p->osm;
	osm_subn_t *subn = &osm->subn;
	unsigned i, n = 0;

	if (p->opts.mcast_opensm || subn->opt.disable_multicast)
		return;
	CL_PLOCK_EXCL_ACQUIRE(&osm->lock);
	for (i = 0; i + IB_LID_MCAST_START_HO <= subn->max_mcast_lid_ho; i++)
		if (subn->mboxes[i]) {
			osm_sm_reroute_mlid(&osm->sm,
					    cl_hton16((uint16_t)(i + IB_LID_MCAST_START_HO)));
			n++;
		}
	CL_PLOCK_RELEASE(&osm->lock);
	if (n)
		plog(p, OSM_LOG_INFO,
		     "multicast: OpenSM's reroute keeps the trees built for the previous routes; "
		     "%u group(s) queued to be built again on the new ones",
		     n);
}
