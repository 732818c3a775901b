/*
 * setup.c - what one Nue routing needs before its first route: memory for struct nue
 * (nue_private.h), the dependency graphs of the layers, the partition, the delivering switch and
 * layer of every LID, the job map indexed per job and switch, and the routing order of a layer's
 * destinations.  nue.c and the second candidate of workers.c prepare their state here.
 */
#include <stdlib.h>
#include <string.h>

#include "engines/nue/nue_private.h"
#include "fabric/fattree.h"
#include "lib/arena.h"
#include "lib/assert.h"
#include "lib/sortu64.h"

/* ------------------------------------------------------------------------------ set-up */

static int nue_alloc(struct nue *n)
{
	size_t sw = n->nsw ? n->nsw : 1, ch = n->nch ? n->nch : 1, lids = n->f->max_lid + 1;

	n->lid_sw = malloc(sizeof(uint32_t) * lids);
	n->lid_exit = calloc(lids, 1);
	n->lid_layer = calloc(lids, 1);
	n->home_layer = calloc(lids, 1);
	n->escaped = calloc(lids, 1);
	n->fell_back = malloc(sizeof(uint32_t) * lids);
	n->part = calloc(n->f->nendports ? n->f->nendports : 1, 1);
	n->dest = malloc(sizeof(uint32_t) * lids);
	n->keys = malloc(sizeof(uint64_t) * lids);
	n->ch_key = malloc(sizeof(uint64_t) * ch);
	n->dest_count = malloc(sizeof(uint32_t) * sw);
	n->ca_count = malloc(sizeof(uint32_t) * sw);
	n->w_all = malloc(sizeof(uint64_t) * ch);
	n->w_job = malloc(sizeof(uint64_t) * ch);
	n->src_lids = calloc(sw, sizeof(uint32_t));
	n->ca_lids = calloc(sw, sizeof(uint32_t));
	n->has_ca = calloc(sw, 1);
	n->ca_ports = calloc(sw, sizeof(uint32_t));
	n->efi = malloc(sizeof(uint64_t) * ch);
	n->esc_up = malloc(sizeof(uint32_t) * sw);
	n->esc_sub = malloc(sizeof(uint32_t) * sw);
	n->esc_order = malloc(sizeof(uint32_t) * sw);
	n->esc_child_off = malloc(sizeof(uint32_t) * (sw + 1));
	n->esc_child = malloc(sizeof(uint32_t) * sw);
	n->dist = malloc(sizeof(uint64_t) * sw);
	n->out = malloc(sizeof(uint32_t) * sw);
	n->kept_out = malloc(sizeof(uint32_t) * sw);
	n->group = malloc(sizeof(uint32_t) * ((size_t)n->f->max_lid + 1));
	n->done = malloc(sw);
	n->depth = malloc(sizeof(uint32_t) * sw);
	n->acc = malloc(sizeof(uint32_t) * sw);
	n->scratch = malloc(sizeof(uint32_t) * (sw + 2));
	n->children = malloc(sizeof(uint32_t) * sw);
	n->topo = malloc(sizeof(uint32_t) * sw);
	n->seen = calloc(sw, sizeof(uint32_t));
	n->hop = malloc(sizeof(uint32_t) * sw);
	n->move_first = malloc(sizeof(uint32_t) * sw);
	n->move_count = malloc(sw);
	n->move_ch = malloc(sizeof(uint32_t) * ch);
	n->move_cost = malloc(sizeof(uint64_t) * ch);
	n->hop_root = FAB_NONE;
	if (!n->lid_sw || !n->lid_exit || !n->lid_layer || !n->home_layer || !n->escaped ||
	    !n->fell_back || !n->part || !n->dest || !n->keys || !n->ch_key || !n->dest_count ||
	    !n->ca_count || !n->w_all || !n->w_job || !n->src_lids || !n->ca_lids || !n->has_ca ||
	    !n->ca_ports || !n->efi || !n->esc_up || !n->esc_sub || !n->esc_order ||
	    !n->esc_child_off || !n->esc_child || !n->dist || !n->out || !n->kept_out ||
	    !n->group || !n->done || !n->depth || !n->acc || !n->scratch || !n->children ||
	    !n->topo || !n->seen || !n->hop || !n->move_first || !n->move_count || !n->move_ch ||
	    !n->move_cost)
		return -1;
	return minheap_init(&n->heap, n->nsw);
}

/* Per-layer dependency graphs and escape trees, for move_fallbacks(); only with k > 1. */
static int alloc_layers(struct nue *n)
{
	unsigned i;

	if (n->k < 2)
		return 0;
	n->layer_cdg = calloc(n->k, sizeof(*n->layer_cdg));
	n->layer_esc_up = malloc(sizeof(uint32_t) * n->k * (n->nsw ? n->nsw : 1));
	n->layer_root = malloc(sizeof(uint32_t) * n->k);
	n->mark.w_all = malloc(sizeof(uint64_t) * (n->nch ? n->nch : 1));
	n->mark.w_job = malloc(sizeof(uint64_t) * (n->nch ? n->nch : 1));
	n->mark.efi = malloc(sizeof(uint64_t) * (n->nch ? n->nch : 1));
	if (!n->layer_cdg || !n->layer_esc_up || !n->layer_root || !n->mark.w_all ||
	    !n->mark.w_job || !n->mark.efi)
		return -1;
	memset(n->layer_root, 0xff, sizeof(uint32_t) * n->k);
	for (i = 0; i < n->k; i++)
		if (cdg_layer_alloc(&n->g, &n->layer_cdg[i]))
			return -1;
	return 0;
}

static void free_layers(struct nue *n)
{
	unsigned i;

	cdg_select(&n->g, NULL);
	for (i = 0; n->layer_cdg && i < n->k; i++)
		cdg_layer_free(&n->layer_cdg[i]);
	free(n->layer_cdg);
	free(n->layer_esc_up);
	free(n->layer_root);
	free(n->mark.w_all);
	free(n->mark.w_job);
	free(n->mark.efi);
}

void nue_free(struct nue *n)
{
	free(n->topo_rank);
	free(n->heap_item);
	free(n->heap_sw);
	free(n->lid_sw);
	free(n->lid_exit);
	free(n->lid_layer);
	free(n->home_layer);
	free(n->escaped);
	free(n->fell_back);
	free_layers(n);
	free(n->part);
	free(n->dest);
	free(n->keys);
	free(n->ch_key);
	free(n->dest_count);
	free(n->ca_count);
	free(n->w_all);
	free(n->w_job);
	free(n->src_lids);
	free(n->ca_lids);
	free(n->has_ca);
	free(n->ca_ports);
	free(n->efi);
	free(n->job_off);
	free(n->job_sw);
	free(n->job_lids);
	free(n->esc_up);
	nue_mcast_free(n);
	free(n->esc_sub);
	free(n->esc_order);
	free(n->esc_child_off);
	free(n->esc_child);
	free(n->dist);
	free(n->out);
	free(n->kept_out);
	free(n->group);
	free(n->done);
	free(n->depth);
	free(n->acc);
	free(n->scratch);
	free(n->children);
	free(n->topo);
	free(n->seen);
	free(n->hop);
	free(n->move_first);
	free(n->move_count);
	free(n->move_ch);
	free(n->move_cost);
	free(n->wet.turn);
	free(n->blocked.turn);
	free(n->attempt.turn);
	free(n->cand);
	minheap_free(&n->heap);
	cdg_free(&n->g);
}

/* Delivering switch and exit port of every LID, layer of every LID, sources per switch. */
static int index_destinations(struct nue *n, struct fab_error *err)
{
	const struct fabric *f = n->f;
	uint32_t i, lid;

	memset(n->lid_sw, 0xff, sizeof(uint32_t) * (f->max_lid + 1));
	for (i = 0; i < f->nendports; i++) {
		uint32_t p = f->endports[i];
		const struct fab_port *port = &f->ports[p];
		uint32_t nlids = 1u << port->lmc;

		for (lid = port->base_lid; lid < port->base_lid + nlids && lid <= f->max_lid;
		     lid++) {
			if (f->lid_port[lid] != p)
				continue;
			n->lid_sw[lid] = fabric_lid_switch(f, lid, &n->lid_exit[lid]);
			if (n->lid_sw[lid] == FAB_NONE) {
				fab_error_set(
					err,
					"%s port %u (LID %u) has a LID but no active link to a "
					"switch",
					fabric_node_id(f, port->node), port->num, lid);
				return -1;
			}
			sn_assert(n->lid_sw[lid] < n->nsw);
			/* Given layers were checked (nue_route); a partition makes them below k. */
			sn_assert(n->part[i] < n->k);
			n->home_layer[lid] = n->part[i];
			n->src_lids[n->lid_sw[lid]]++;
			n->has_ca[n->lid_sw[lid]] |= n->lid_exit[lid] != 0;
			n->ca_ports[n->lid_sw[lid]] += n->lid_exit[lid] && lid == port->base_lid;
		}
	}
	for (i = 0; i < n->nsw; i++)
		n->ca_lids[i] = n->has_ca[i] ? n->src_lids[i] : 0;
	return 0;
}

/* Per job, the LIDs it has at each switch: (job << 32 | switch) keys, merged into a CSR. */
static int index_jobs(struct nue *n)
{
	const struct fabric *f = n->f;
	const struct job_map *jm = n->o->jobs;
	uint64_t *keys = NULL;
	uint32_t nkeys = 0, cap = 0, lid, i, m = 0;
	int rc = -1;

	if (!jm || !jm->njobs || !jm->node_off)
		return 0;
	for (lid = 1; lid <= f->max_lid; lid++) {
		uint32_t cnt;
		const uint32_t *jobs;

		if (n->lid_sw[lid] == FAB_NONE)
			continue;
		jobs = job_map_node_jobs(jm, f->ports[f->lid_port[lid]].node, &cnt);
		for (i = 0; i < cnt; i++) {
			if (fab_grow((void **)&keys, &cap, nkeys + 1, sizeof(*keys), 1024))
				goto out;
			keys[nkeys++] = (uint64_t)jobs[i] << 32 | n->lid_sw[lid];
		}
	}
	sort_u64(keys, nkeys);
	n->job_off = calloc(jm->njobs + 1, sizeof(uint32_t));
	n->job_sw = malloc(sizeof(uint32_t) * (nkeys ? nkeys : 1));
	n->job_lids = malloc(sizeof(uint32_t) * (nkeys ? nkeys : 1));
	if (!n->job_off || !n->job_sw || !n->job_lids)
		goto out;
	for (i = 0; i < nkeys; i++) {
		uint32_t job = (uint32_t)(keys[i] >> 32);

		sn_assert(job < jm->njobs && (uint32_t)keys[i] < n->nsw);
		if (i && keys[i] == keys[i - 1]) {
			n->job_lids[m - 1]++;
			continue;
		}
		n->job_sw[m] = (uint32_t)keys[i];
		n->job_lids[m++] = 1;
		n->job_off[job + 1]++;
	}
	for (i = 0; i < jm->njobs; i++)
		n->job_off[i + 1] += n->job_off[i];
	/* Every (job, switch) pair counted in its job's range. */
	sn_assert(n->job_off[jm->njobs] == m);
	rc = 0;
out:
	free(keys);
	return rc;
}

/* Largest job a LID's node runs, for the job-phase order (thesis algorithm 5.1, line 5). */
static uint32_t job_size_of(const struct nue *n, uint32_t lid)
{
	uint32_t cnt, i, size = 0;
	const uint32_t *jobs =
		job_map_node_jobs(n->o->jobs, n->f->ports[n->f->lid_port[lid]].node, &cnt);

	for (i = 0; i < cnt; i++)
		if (n->o->jobs->job_ports[jobs[i]] > size)
			size = n->o->jobs->job_ports[jobs[i]];
	return size;
}

/* Routing class of a LID: job nodes by descending job size, then CAs and routers, then switches. */
static uint64_t dest_class(const struct nue *n, uint32_t lid)
{
	if (nue_job_phase_dest(n, lid))
		return 0x7fffffffull - job_size_of(n, lid);
	return n->lid_exit[lid] ? 0x80000000ull : 0x80000001ull;
}

static int in_layer(const struct nue *n, uint32_t lid, unsigned layer)
{
	return n->lid_sw[lid] != FAB_NONE && n->lid_layer[lid] == layer && !nue_kept(n, lid);
}

/* The layer's destinations and CA or router LIDs per switch ([nsw] each); the CA LIDs' sum. */
uint32_t nue_count_layer(const struct nue *n, unsigned layer, uint32_t *dest_count,
			 uint32_t *ca_count)
{
	uint32_t lid, nca = 0;

	memset(dest_count, 0, sizeof(uint32_t) * n->nsw);
	memset(ca_count, 0, sizeof(uint32_t) * n->nsw);
	for (lid = 1; lid <= n->f->max_lid; lid++) {
		if (!in_layer(n, lid, layer))
			continue;
		dest_count[n->lid_sw[lid]]++;
		ca_count[n->lid_sw[lid]] += n->lid_exit[lid] != 0;
		nca += n->lid_exit[lid] != 0;
	}
	return nca;
}

/*
 * The layer's destinations in routing order: LIDs of job nodes first, largest job first; then
 * CA and router LIDs; then switch LIDs, as the reference routes terminals before switches.
 * Within a class, ascending LID here; order_far_first then sorts by distance from the root.
 */
void nue_order_layer(struct nue *n, unsigned layer)
{
	uint32_t lid, i;

	/* A LID fits the low 16 bits of a sort key. */
	sn_assert(layer < n->k && n->f->max_lid <= FAB_MAX_LID);
	n->nca = nue_count_layer(n, layer, n->dest_count, n->ca_count);
	n->ndest = 0;
	for (lid = 1; lid <= n->f->max_lid; lid++)
		if (in_layer(n, lid, layer))
			n->keys[n->ndest++] = dest_class(n, lid) << 16 | lid;
	sort_u64(n->keys, n->ndest);
	for (i = 0; i < n->ndest; i++)
		n->dest[i] = (uint32_t)(n->keys[i] & 0xffff);
}

/*
 * On a recognised fat tree, the destinations' topology order (fabric/fattree.h), which by_lid
 * routing follows instead of the LIDs: OpenSM numbers LIDs in discovery order, not leaf by leaf
 * (16-ary 3-tree under OpenSM: maximum EFI 6,896 by LID against the bound of 4,080).  And the
 * switches' heap order: among equally far switches Dijkstra settles the lower heap item first,
 * so ties go to the same parent digit on every switch, as D-mod-k's do, whatever the GUIDs (a
 * 4-ary 3-tree with switches numbered at random: maximum EFI 92 by GUID, against the bound of
 * 60).  Any other fabric keeps both NULL.
 */
static int topology_rank(struct nue *n, struct fab_error *err)
{
	struct fab_error why;
	struct fat_tree t;
	int ret = 0;

	if (!nue_tree_like(n) || fat_tree_recognise(n->f, &t, &why))
		return 0;
	n->topo_rank = fat_tree_lid_rank(&t, n->f);
	n->heap_item = fat_tree_switch_rank(&t);
	n->heap_sw = malloc(sizeof(uint32_t) * (n->nsw + 1));
	if (t.complete && !t.nservice)
		n->efi_bound = fat_tree_efi_bound(&t, n->f);
	if (n->topo_rank && n->heap_item && n->heap_sw) {
		uint32_t s;

		for (s = 0; s < n->nsw; s++)
			n->heap_sw[n->heap_item[s]] = s;
	} else {
		fab_error_set(err, "out of memory for the topology order");
		ret = -1;
	}
	fat_tree_free(&t);
	return ret;
}

/* Memory, dependency graph, partition (copied from part when given) and indexes of a routing. */
int nue_prepare(struct nue *n, const uint8_t *part, struct fab_error *err)
{
	const struct fabric *f = n->f;

	sn_assert(n->k >= 1 && n->k <= NUE_MAX_VLS);
	n->expensive_checks = sn_expensive_checks();
	n->nsw = f->nswitches;
	n->nch = f->sw_adj_off[f->nswitches];
	if (nue_alloc(n) || cdg_build(&n->g, f) || alloc_layers(n) || nue_mcast_tree(n)) {
		fab_error_set(err, "out of memory for %u switches, %u channels", n->nsw, n->nch);
		return -1;
	}
	if (part) {
		memcpy(n->part, part, f->nendports);
	} else {
		n->rep->partitioner =
			nue_partition(f, n->k, n->o->partition, n->part, &n->rep->torus);
		if (!n->rep->partitioner) {
			fab_error_set(err, "out of memory partitioning %u destinations",
				      f->nendports);
			return -1;
		}
	}
	if (index_destinations(n, err))
		return -1;
	if (index_jobs(n)) {
		fab_error_set(err, "out of memory indexing the job map");
		return -1;
	}
	return topology_rank(n, err);
}
