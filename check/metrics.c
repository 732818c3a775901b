/*
 * metrics.c - edge forwarding index, effective EFI and dark fiber, and stretch (see metrics.h
 * for the definitions), and the text and JSON report of all metrics; the traffic patterns are
 * patterns.c.  Runs on the fabric model and routing tables only, so `sarnue check` and the
 * filter daemon can judge any engine's tables.
 *
 * LFTs are followed with verify_lft_step(), the verifier's own step, so a route counted here is
 * exactly a route the verifier calls delivered.  The EFIs use one in-tree per destination LID
 * (children before parents, O(switches)).
 */
#include "check/metrics.h"
#include "check/metrics_net.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "check/verify.h"
#include "lib/assert.h"
#include "lib/threads.h"

#define TREE_ROOT (FAB_NONE - 1) /* the switch hands the packet to the destination */

void metrics_net_free(struct net *n)
{
	free(n->chan_of_port);
	free(n->lft_by_lid);
	free(n->term);
	free(n->term_sw);
	free(n->sw_term_off);
	free(n->sw_term);
	free(n->next);
	free(n->chan);
	free(n->hops);
	free(n->order);
	free(n->child_off);
	free(n->child);
	free(n->fill);
	free(n->acc);
	free(n->dist);
	/* Freeing twice (a failed metrics_net_init, then its caller's cleanup) is harmless. */
	memset(n, 0, sizeof(*n));
}

static int net_terminals(struct net *n)
{
	const struct fabric *f = n->f;
	uint32_t i, k;

	n->term = malloc(sizeof(*n->term) * (f->nendports + 1));
	n->term_sw = malloc(sizeof(*n->term_sw) * (f->nendports + 1));
	n->sw_term_off = calloc(n->nsw + 2, sizeof(*n->sw_term_off));
	n->sw_term = malloc(sizeof(*n->sw_term) * (f->nendports + 1));
	if (!n->term || !n->term_sw || !n->sw_term_off || !n->sw_term)
		return -1;
	for (i = 0; i < f->nendports; i++) {
		uint32_t p = f->endports[i], sw;

		if (fabric_is_switch(f, f->ports[p].node))
			continue;
		sw = fabric_attached_switch(f, p);
		if (sw == FAB_NONE) {
			n->detached++;
			continue;
		}
		n->term[n->nterm] = p;
		n->term_sw[n->nterm++] = f->nodes[sw].sw;
		sn_assert(f->nodes[sw].sw < n->nsw);
	}
	sn_assert(n->nterm + n->detached <= f->nendports);
	for (i = 0; i < n->nterm; i++)
		n->sw_term_off[n->term_sw[i] + 2]++;
	for (k = 0; k < n->nsw; k++)
		n->sw_term_off[k + 2] += n->sw_term_off[k + 1];
	for (i = 0; i < n->nterm; i++)
		n->sw_term[n->sw_term_off[n->term_sw[i] + 1]++] = i;
	/* Placing shifted every row's start to its end: the last row ends at nterm. */
	sn_assert(n->sw_term_off[0] == 0 && n->sw_term_off[n->nsw] == n->nterm);
	return 0;
}

int metrics_net_init(struct net *n, const struct fabric *f, const struct routing *r)
{
	uint32_t i;

	memset(n, 0, sizeof(*n));
	n->f = f;
	n->r = r;
	n->nsw = f->nswitches;
	n->nch = f->sw_adj_off[f->nswitches];
	n->chan_of_port = malloc(sizeof(*n->chan_of_port) * (f->nports + 1));
	n->next = malloc(sizeof(*n->next) * (n->nsw + 1));
	n->chan = malloc(sizeof(*n->chan) * (n->nsw + 1));
	n->hops = malloc(sizeof(*n->hops) * (n->nsw + 1));
	n->order = malloc(sizeof(*n->order) * (n->nsw + 1));
	n->child_off = malloc(sizeof(*n->child_off) * (n->nsw + 2));
	n->child = malloc(sizeof(*n->child) * (n->nsw + 1));
	n->fill = malloc(sizeof(*n->fill) * (n->nsw + 1));
	n->acc = malloc(sizeof(*n->acc) * (n->nsw + 1));
	n->dist = malloc(sizeof(*n->dist) * (n->nsw + 1));
	if (!n->chan_of_port || !n->next || !n->chan || !n->hops || !n->order || !n->child_off ||
	    !n->child || !n->fill || !n->acc || !n->dist)
		goto fail;
	for (i = 0; i < f->nports; i++)
		n->chan_of_port[i] = FAB_NONE;
	for (i = 0; i < n->nch; i++) {
		sn_assert(f->sw_adj_port[i] < f->nports);
		n->chan_of_port[f->sw_adj_port[i]] = i;
	}
	if (net_terminals(n))
		goto fail;
	return 0;
fail:
	metrics_net_free(n);
	return -1;
}

static uint32_t sw_terminals(const struct net *n, uint32_t sw)
{
	sn_assert(sw < n->nsw && n->sw_term_off[sw] <= n->sw_term_off[sw + 1]);
	return n->sw_term_off[sw + 1] - n->sw_term_off[sw];
}

/* Where each switch sends dlid, and the switches that get it delivered, nearest first. */
static void tree_build(struct net *n, unsigned dlid)
{
	uint32_t sw, i, head = 0;

	memset(n->child_off, 0, sizeof(*n->child_off) * (n->nsw + 2));
	n->nreach = 0;
	for (sw = 0; sw < n->nsw; sw++) {
		uint32_t q, nx;
		enum lft_step step =
			n->lft_by_lid
				? verify_lft_entry_step(n->f, sw, dlid,
							n->lft_by_lid[(size_t)dlid * n->nsw + sw],
							&q, &nx)
				: verify_lft_step(n->f, n->r, sw, dlid, &q, &nx);

		n->next[sw] = FAB_NONE;
		if (step == LFT_STEP_SWITCH) {
			n->next[sw] = nx;
			n->chan[sw] = n->chan_of_port[q];
			/* A step to another switch leaves by a channel of C*. */
			sn_assert(nx < n->nsw && n->chan[sw] < n->nch);
			n->child_off[nx + 2]++;
		} else if (step == LFT_STEP_DELIVERED) {
			n->next[sw] = TREE_ROOT;
			n->hops[sw] = q != FAB_NONE;
			n->order[n->nreach++] = sw;
		}
	}
	for (sw = 0; sw < n->nsw; sw++)
		n->child_off[sw + 2] += n->child_off[sw + 1];
	for (sw = 0; sw < n->nsw; sw++)
		if (n->next[sw] < n->nsw)
			n->child[n->child_off[n->next[sw] + 1]++] = sw;
	/*
	 * Breadth first from the delivering switches: switches in a forwarding loop, or leading
	 * to a failing entry, are never reached and stay out of order[].
	 */
	while (head < n->nreach) {
		uint32_t p = n->order[head++];

		for (i = n->child_off[p]; i < n->child_off[p + 1]; i++) {
			uint32_t c = n->child[i];

			/* A tree has no cycle: each switch joins order[] once, within nsw links. */
			sn_assert(n->nreach < n->nsw && n->hops[p] < n->nsw);
			n->hops[c] = n->hops[p] + 1;
			n->order[n->nreach++] = c;
		}
	}
}

/*
 * Pushes the source counts in acc[] up the tree, adding each subtree's count to the channel
 * towards the parent.  Returns the number of sources delivered.  When touched is given, the
 * channels whose load leaves 0 are appended to it.
 */
static uint64_t tree_accumulate(struct net *n, uint64_t *load, uint32_t *touched,
				uint32_t *ntouched)
{
	uint64_t delivered = 0;
	uint32_t i;

	for (i = n->nreach; i-- > 0;) {
		uint32_t sw = n->order[i], p = n->next[sw];
		uint64_t a = n->acc[sw];

		if (p == TREE_ROOT) {
			delivered += a;
			continue;
		}
		if (!a)
			continue;
		sn_assert(p < n->nsw && n->chan[sw] < n->nch);
		if (touched && !load[n->chan[sw]])
			touched[(*ntouched)++] = n->chan[sw];
		load[n->chan[sw]] += a;
		n->acc[p] += a;
	}
	return delivered;
}

/* Hop distances from switch `from` over C* (links are symmetric: also towards it). */
static void bfs(struct net *n, uint32_t from)
{
	const struct fabric *f = n->f;
	uint32_t head = 0, tail = 0, e;

	for (e = 0; e < n->nsw; e++)
		n->dist[e] = FAB_NONE;
	n->dist[from] = 0;
	n->fill[tail++] = from;
	while (head < tail) {
		uint32_t u = n->fill[head++];

		for (e = f->sw_adj_off[u]; e < f->sw_adj_off[u + 1]; e++) {
			uint32_t v = f->nodes[f->ports[f->ports[f->sw_adj_port[e]].remote].node].sw;

			if (n->dist[v] == FAB_NONE) {
				sn_assert(tail < n->nsw);
				n->dist[v] = n->dist[u] + 1;
				n->fill[tail++] = v;
			}
		}
	}
}

static unsigned lids_per_terminal(const struct net *n, uint32_t t, const struct metrics_options *o)
{
	return o->all_lids ? 1u << n->f->ports[n->term[t]].lmc : 1;
}

void metrics_progress(const struct metrics_options *o, const char *phase, uint64_t done,
		      uint64_t total)
{
	if (o->progress)
		o->progress(o->progress_ctx, phase, done, total);
}

void metrics_options_default(struct metrics_options *o)
{
	memset(o, 0, sizeof(*o));
	o->permutations = 100;
	o->bisections = 100;
	o->seed = 1;
}

static void dist_compute(const uint64_t *v, uint32_t n, struct metrics_dist *d)
{
	double sum = 0, sq = 0;
	uint32_t i;

	memset(d, 0, sizeof(*d));
	d->channels = n;
	if (!n)
		return;
	d->min = v[0];
	for (i = 0; i < n; i++) {
		d->min = v[i] < d->min ? v[i] : d->min;
		d->max = v[i] > d->max ? v[i] : d->max;
		d->zero += !v[i];
		sum += (double)v[i];
	}
	d->mean = sum / n;
	for (i = 0; i < n; i++)
		sq += ((double)v[i] - d->mean) * ((double)v[i] - d->mean);
	d->sdv = sqrt(sq / n);
	d->bin_width = (d->max + METRICS_HIST_BINS) / METRICS_HIST_BINS; /* ceil((max+1)/BINS) */
	d->nbins = (uint32_t)(d->max / d->bin_width) + 1;
	sn_assert(d->nbins <= METRICS_HIST_BINS);
	for (i = 0; i < n; i++)
		d->bins[v[i] / d->bin_width]++;
}

/* Sums over delivered routes, divided by their number at the end. */
struct efi_sums {
	double stretch, ratio, hops;
};

/* Routes from the sources counted in acc[] (before accumulation) towards a tree's root. */
static void add_stretch(struct metrics_efi *e, const struct net *n, struct efi_sums *sum)
{
	uint32_t i;

	for (i = 0; i < n->nreach; i++) {
		uint32_t sw = n->order[i];
		uint64_t c = n->acc[sw];
		unsigned taken, fewest, s;

		if (!c || n->dist[sw] == FAB_NONE)
			continue;
		/* Terminal to switch, hops[sw] links on, against the same two end links. */
		taken = n->hops[sw] + 1;
		fewest = n->dist[sw] + 2;
		s = taken > fewest ? taken - fewest : 0;
		if (s)
			e->nonminimal += c;
		if (s > e->max_stretch)
			e->max_stretch = s;
		e->stretch_hist[s > METRICS_MAX_STRETCH ? METRICS_MAX_STRETCH : s] += c;
		sum->stretch += (double)s * (double)c;
		sum->ratio += (double)taken / fewest * (double)c;
		sum->hops += (double)taken * (double)c;
	}
}

/* Sources per switch for the destination terminal t: everyone but t itself. */
static uint64_t init_all_sources(struct net *n, uint32_t t)
{
	uint32_t sw;

	for (sw = 0; sw < n->nsw; sw++)
		n->acc[sw] = sw_terminals(n, sw);
	/* t itself is one of its switch's terminals. */
	sn_assert(t < n->nterm && n->acc[n->term_sw[t]] > 0);
	n->acc[n->term_sw[t]]--;
	return n->nterm - 1;
}

static void efi_destination_switch(struct net *n, const struct metrics_options *o, uint32_t dsw,
				   struct metrics_efi *e, struct efi_sums *sum)
{
	uint32_t k, t;
	unsigned l;

	bfs(n, dsw);
	for (k = n->sw_term_off[dsw]; k < n->sw_term_off[dsw + 1]; k++) {
		t = n->sw_term[k];
		for (l = 0; l < lids_per_terminal(n, t, o); l++) {
			unsigned dlid = n->f->ports[n->term[t]].base_lid + l;
			uint64_t sources, got;

			if (dlid > n->f->max_lid || n->f->lid_port[dlid] != n->term[t])
				continue;
			tree_build(n, dlid);
			sources = init_all_sources(n, t);
			add_stretch(e, n, sum);
			got = tree_accumulate(n, e->load, NULL, NULL);
			sn_assert(got <= sources);
			e->routes += got;
			e->unrouted += sources - got;
		}
	}
}

static void port_label(const struct fabric *f, uint32_t p, char *buf, size_t len)
{
	snprintf(buf, len, "%s[%u]", fabric_node_desc(f, f->ports[p].node), f->ports[p].num);
}

/*
 * The METRICS_HOT channels with the highest EFI, named by their ports, so that an operator can
 * find the cables a picture of thousands of switches cannot show.  One pass over the ports,
 * keeping a short sorted list.
 */
static void hottest_channels(const struct net *n, struct metrics_efi *e)
{
	uint32_t idx[METRICS_HOT], p, i;
	unsigned k = 0;

	for (p = 0; p < n->f->nports; p++) {
		uint32_t c = n->chan_of_port[p];

		if (c == FAB_NONE || !e->load[c])
			continue;
		if (k == METRICS_HOT && e->load[c] <= e->load[n->chan_of_port[idx[k - 1]]])
			continue;
		i = k < METRICS_HOT ? k++ : k - 1;
		while (i > 0 && e->load[n->chan_of_port[idx[i - 1]]] < e->load[c]) {
			idx[i] = idx[i - 1];
			i--;
		}
		idx[i] = p;
	}
	e->nhot = k;
	for (i = 0; i < k; i++) {
		e->hot[i].load = e->load[n->chan_of_port[idx[i]]];
		port_label(n->f, idx[i], e->hot[i].from, sizeof(e->hot[i].from));
		port_label(n->f, n->f->ports[idx[i]].remote, e->hot[i].to, sizeof(e->hot[i].to));
	}
}

/*
 * The destination switches from..to-1, each half's own tree scratch, loads and sums: the EFI
 * walks every destination's tree, about 3.4 s for 40,000 hosts, and the halves split it over two
 * CPUs.  Both halves are always counted apart and then added, on one thread or two, so the
 * result never depends on whether the second thread ran (the sums of ratios are not integers).
 */
struct efi_half {
	struct net n;
	const struct metrics_options *o;
	struct metrics_efi e;
	struct efi_sums sum;
	uint32_t from, to;
	int report; /* the progress the caller sees: the lower half's share of its terminals */
	pthread_t thread;
};

static void *efi_half_main(void *arg)
{
	struct efi_half *h = arg;
	uint32_t dsw, done = 0, total = h->n.sw_term_off[h->to] - h->n.sw_term_off[h->from];

	for (dsw = h->from; dsw < h->to; dsw++) {
		if (!sw_terminals(&h->n, dsw))
			continue;
		efi_destination_switch(&h->n, h->o, dsw, &h->e, &h->sum);
		done += sw_terminals(&h->n, dsw);
		if (h->report)
			metrics_progress(h->o, "edge forwarding index", done, total);
	}
	return NULL;
}

/* The first switch of the upper half: about half of the terminals attach below it. */
static uint32_t middle_switch(const struct net *n)
{
	uint32_t sw = 0;

	while (sw < n->nsw && 2 * n->sw_term_off[sw] < n->nterm)
		sw++;
	return sw;
}

/* Adds b's counts to a's. */
static void efi_merge(struct efi_half *a, const struct efi_half *b)
{
	uint32_t c;

	for (c = 0; c < a->n.nch; c++)
		a->e.load[c] += b->e.load[c];
	a->e.routes += b->e.routes;
	a->e.unrouted += b->e.unrouted;
	a->e.nonminimal += b->e.nonminimal;
	if (b->e.max_stretch > a->e.max_stretch)
		a->e.max_stretch = b->e.max_stretch;
	for (c = 0; c <= METRICS_MAX_STRETCH; c++)
		a->e.stretch_hist[c] += b->e.stretch_hist[c];
	a->sum.stretch += b->sum.stretch;
	a->sum.ratio += b->sum.ratio;
	a->sum.hops += b->sum.hops;
}

/* Both halves ready, sharing lo's LID-by-LID copy of the tables; -1 without memory. */
static int efi_halves_init(struct efi_half *lo, struct efi_half *hi, const struct fabric *f,
			   const struct routing *r)
{
	if (metrics_net_init(&lo->n, f, r))
		return -1;
	/* A tree per destination LID: read LID by LID when memory allows. */
	lo->n.lft_by_lid = routing_lfts_by_lid(r, ROUTING_BY_LID_MAX_BYTES);
	if (metrics_net_init(&hi->n, f, r))
		return -1;
	hi->n.lft_by_lid = lo->n.lft_by_lid;
	lo->e.load = calloc(lo->n.nch + 1, sizeof(*lo->e.load));
	hi->e.load = calloc(hi->n.nch + 1, sizeof(*hi->e.load));
	if (!lo->e.load || !hi->e.load)
		return -1;
	lo->from = 0;
	lo->to = hi->from = middle_switch(&lo->n);
	hi->to = lo->n.nsw;
	lo->report = 1;
	return 0;
}

static void efi_halves_free(struct efi_half *lo, struct efi_half *hi)
{
	free(hi->e.load);
	free(lo->e.load);
	hi->n.lft_by_lid = NULL;
	metrics_net_free(&hi->n);
	metrics_net_free(&lo->n);
}

int metrics_efi(const struct fabric *f, const struct routing *r, const struct metrics_options *o,
		struct metrics_efi *e)
{
	struct efi_half lo = { .o = o }, hi = { .o = o };
	uint64_t cells = (uint64_t)f->nswitches * f->max_lid;
	int beside;

	memset(e, 0, sizeof(*e));
	if (efi_halves_init(&lo, &hi, f, r)) {
		efi_halves_free(&lo, &hi);
		return -1;
	}
	/* As the verifier's halves (verify.h): below that size a thread costs more than it saves.
	 */
	beside = cells >= VERIFY_SPLIT_FROM_CELLS &&
		 !thread_start_beside(&hi.thread, efi_half_main, &hi);
	efi_half_main(&lo);
	if (beside)
		pthread_join(hi.thread, NULL);
	else
		efi_half_main(&hi);
	efi_merge(&lo, &hi);
	*e = lo.e;
	lo.e.load = NULL;
	e->nchannels = lo.n.nch;
	e->terminals = lo.n.nterm;
	e->detached = lo.n.detached;
	dist_compute(e->load, lo.n.nch, &e->dist);
	hottest_channels(&lo.n, e);
	if (e->routes) {
		e->mean_stretch = lo.sum.stretch / (double)e->routes;
		e->mean_ratio = lo.sum.ratio / (double)e->routes;
		e->mean_hops = lo.sum.hops / (double)e->routes;
	}
	efi_halves_free(&lo, &hi);
	return 0;
}

void metrics_efi_free(struct metrics_efi *e)
{
	free(e->load);
	e->load = NULL;
}

/* Terminals of every job, CSR over jobs (indices into net.term). */
struct job_terms {
	uint32_t *off, *term;
};

static int job_terms_build(const struct net *n, const struct job_map *jm, struct job_terms *jt,
			   uint32_t *bound)
{
	uint32_t t, i, njobs, total = 0;
	const uint32_t *jobs;

	jt->off = calloc(jm->njobs + 2, sizeof(*jt->off));
	if (!jt->off)
		return -1;
	for (t = 0; t < n->nterm; t++) {
		jobs = job_map_node_jobs(jm, n->f->ports[n->term[t]].node, &njobs);
		for (i = 0; i < njobs; i++) {
			sn_assert(jobs[i] < jm->njobs);
			jt->off[jobs[i] + 2]++;
		}
		total += njobs;
		*bound += njobs > 0;
	}
	for (i = 0; i < jm->njobs; i++)
		jt->off[i + 2] += jt->off[i + 1];
	jt->term = malloc(sizeof(*jt->term) * (total + 1));
	if (!jt->term)
		return -1;
	for (t = 0; t < n->nterm; t++) {
		jobs = job_map_node_jobs(jm, n->f->ports[n->term[t]].node, &njobs);
		for (i = 0; i < njobs; i++)
			jt->term[jt->off[jobs[i] + 1]++] = t;
	}
	sn_assert(jt->off[jm->njobs] == total);
	return 0;
}

/* Scratch for one job: its terminals per switch and its own channel loads. */
struct job_pass {
	uint64_t *count; /* [nsw] */
	uint64_t *load;	 /* [nch] */
	uint32_t *touched;
	uint32_t ntouched;
};

static void job_destination(struct net *n, struct job_pass *jp, uint32_t nterms, uint32_t t,
			    unsigned dlid, struct metrics_jobs *out, struct metrics_job *job)
{
	uint64_t got;

	tree_build(n, dlid);
	memcpy(n->acc, jp->count, sizeof(*n->acc) * n->nsw);
	sn_assert(n->acc[n->term_sw[t]] > 0);
	n->acc[n->term_sw[t]]--;
	got = tree_accumulate(n, jp->load, jp->touched, &jp->ntouched);
	/* Paths added equal paths counted: a job's route is delivered once or not at all. */
	sn_assert(got <= nterms - 1 && jp->ntouched <= n->nch);
	job->routes += got;
	out->routes += got;
	out->unrouted += nterms - 1 - got;
}

static void job_run(struct net *n, const struct metrics_options *o, struct job_pass *jp,
		    const uint32_t *terms, uint32_t nterms, struct metrics_jobs *out,
		    struct metrics_job *job)
{
	uint32_t i;
	unsigned l;

	job->terminals = nterms;
	for (i = 0; i < nterms; i++)
		if (!jp->count[n->term_sw[terms[i]]]++)
			job->switches++;
	jp->ntouched = 0;
	for (i = 0; i < nterms; i++) {
		uint32_t t = terms[i];

		for (l = 0; l < lids_per_terminal(n, t, o); l++) {
			unsigned dlid = n->f->ports[n->term[t]].base_lid + l;

			if (dlid <= n->f->max_lid && n->f->lid_port[dlid] == n->term[t])
				job_destination(n, jp, nterms, t, dlid, out, job);
		}
	}
	for (i = 0; i < jp->ntouched; i++) {
		uint32_t c = jp->touched[i];

		if (jp->load[c] > job->max_efi)
			job->max_efi = jp->load[c];
		out->load[c] += jp->load[c];
		jp->load[c] = 0;
	}
	job->channels = jp->ntouched;
	for (i = 0; i < nterms; i++)
		jp->count[n->term_sw[terms[i]]] = 0;
}

static void jobs_summary(struct metrics_jobs *out)
{
	double sum_max = 0, sum_ch = 0;
	uint32_t j;

	for (j = 0; j < out->njobs; j++) {
		if (out->job[j].switches < 2)
			continue;
		out->multi_switch_jobs++;
		sum_max += (double)out->job[j].max_efi;
		sum_ch += out->job[j].channels;
	}
	if (out->multi_switch_jobs) {
		out->mean_job_max_efi = sum_max / out->multi_switch_jobs;
		out->mean_job_channels = sum_ch / out->multi_switch_jobs;
	}
	dist_compute(out->load, out->nchannels, &out->dist);
	out->dark_fiber = out->nchannels ? 100.0 * out->dist.zero / out->nchannels : 0.0;
}

int metrics_effective_efi(const struct fabric *f, const struct routing *r, const struct job_map *jm,
			  const struct metrics_options *o, struct metrics_jobs *out)
{
	struct job_terms jt = { NULL, NULL };
	struct job_pass jp = { NULL, NULL, NULL, 0 };
	struct net n;
	uint32_t j;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	if (metrics_net_init(&n, f, r))
		return -1;
	out->nchannels = n.nch;
	out->njobs = jm->njobs;
	out->load = calloc(n.nch + 1, sizeof(*out->load));
	out->job = calloc(jm->njobs + 1, sizeof(*out->job));
	jp.count = calloc(n.nsw + 1, sizeof(*jp.count));
	jp.load = calloc(n.nch + 1, sizeof(*jp.load));
	jp.touched = malloc(sizeof(*jp.touched) * (n.nch + 1));
	if (!out->load || !out->job || !jp.count || !jp.load || !jp.touched ||
	    job_terms_build(&n, jm, &jt, &out->bound_terminals))
		goto out;
	for (j = 0; j < jm->njobs; j++) {
		job_run(&n, o, &jp, jt.term + jt.off[j], jt.off[j + 1] - jt.off[j], out,
			&out->job[j]);
		metrics_progress(o, "effective EFI", j + 1, jm->njobs);
	}
	jobs_summary(out);
	ret = 0;
out:
	if (ret)
		metrics_jobs_free(out);
	free(jt.off);
	free(jt.term);
	free(jp.count);
	free(jp.load);
	free(jp.touched);
	metrics_net_free(&n);
	return ret;
}

void metrics_jobs_free(struct metrics_jobs *j)
{
	free(j->load);
	free(j->job);
	j->load = NULL;
	j->job = NULL;
}

static void print_hist_text(const struct metrics_dist *d, FILE *out)
{
	uint32_t b;

	for (b = 0; b < d->nbins; b++) {
		if (!d->bins[b])
			continue;
		if (d->bin_width == 1)
			fprintf(out, " %" PRIu64 ":%" PRIu64, (uint64_t)b, d->bins[b]);
		else
			fprintf(out, " %" PRIu64 "-%" PRIu64 ":%" PRIu64, b * d->bin_width,
				(b + 1) * d->bin_width - 1, d->bins[b]);
	}
	fputc('\n', out);
}

static void print_dist_text(const char *name, const struct metrics_dist *d, FILE *out)
{
	fprintf(out, "%-17s min %" PRIu64 ", max %" PRIu64 ", mean %.3f, sdv %.3f\n", name, d->min,
		d->max, d->mean, d->sdv);
	fprintf(out, "%-16s", "  histogram:");
	print_hist_text(d, out);
}

static void print_efi_text(const struct metrics_efi *e, int all_lids, FILE *out)
{
	unsigned s;

	fprintf(out, "\nrouting metrics (routes from every terminal to the %s of every other)\n",
		all_lids ? "LIDs" : "base LID");
	fprintf(out, "terminals:        %u (%u without a link to a switch)\n", e->terminals,
		e->detached);
	fprintf(out, "routes:           %" PRIu64 " delivered, %" PRIu64 " not delivered\n",
		e->routes, e->unrouted);
	fprintf(out, "channels (C*):    %u switch-to-switch\n", e->nchannels);
	print_dist_text("EFI:", &e->dist, out);
	fprintf(out, "hops:             mean %.3f per route (end links included)\n", e->mean_hops);
	fprintf(out,
		"stretch:          mean %.3f hops, max %u, mean ratio %.3f, non-minimal routes "
		"%" PRIu64 "\n",
		e->mean_stretch, e->max_stretch, e->mean_ratio, e->nonminimal);
	fprintf(out, "  histogram:    ");
	for (s = 0; s <= METRICS_MAX_STRETCH; s++)
		if (e->stretch_hist[s])
			fprintf(out, " %u:%" PRIu64, s, e->stretch_hist[s]);
	fputc('\n', out);
	if (e->nhot)
		fprintf(out, "hottest channels (EFI, routes crossing):\n");
	for (s = 0; s < e->nhot; s++)
		fprintf(out, "  %10" PRIu64 "  %s -> %s\n", e->hot[s].load, e->hot[s].from,
			e->hot[s].to);
}

#define JOBS_LISTED 20

static void print_jobs_text(const struct metrics_report *m, FILE *out)
{
	const struct metrics_jobs *j = m->jobs;
	uint32_t k;

	fprintf(out, "\njob map:          %s: %u jobs, %u terminals in jobs, %u unknown hostnames",
		m->job_map_name ? m->job_map_name : "", j->njobs, j->bound_terminals,
		m->jm->unknown_hosts);
	if (m->jm->unknown_hosts)
		fprintf(out, " (first: %s)", m->jm->first_unknown);
	fputc('\n', out);
	fprintf(out, "intra-job routes: %" PRIu64 " delivered, %" PRIu64 " not delivered\n",
		j->routes, j->unrouted);
	print_dist_text("effective EFI:", &j->dist, out);
	fprintf(out, "dark fiber:       %.2f%% (%u of %u channels carry no intra-job route)\n",
		j->dark_fiber, j->dist.zero, j->nchannels);
	fprintf(out,
		"per job:          mean max EFI %.3f, mean channels %.3f (%u multi-switch jobs)\n",
		j->mean_job_max_efi, j->mean_job_channels, j->multi_switch_jobs);
	fprintf(out, "  %-20s %9s %8s %10s %8s %8s\n", "job", "terminals", "switches", "routes",
		"max EFI", "channels");
	for (k = 0; k < j->njobs && k < JOBS_LISTED; k++)
		fprintf(out, "  %-20s %9u %8u %10" PRIu64 " %8" PRIu64 " %8u\n",
			job_map_job_name(m->jm, k), j->job[k].terminals, j->job[k].switches,
			j->job[k].routes, j->job[k].max_efi, j->job[k].channels);
	if (j->njobs > JOBS_LISTED)
		fprintf(out, "  ... %u more jobs (--json lists all)\n", j->njobs - JOBS_LISTED);
}

void metrics_print_text(const struct metrics_report *m, FILE *out)
{
	print_efi_text(m->efi, m->options->all_lids, out);
	if (m->tree)
		metrics_fat_tree_print_text(m, out);
	if (m->jobs)
		print_jobs_text(m, out);
	if (m->patterns)
		metrics_patterns_print_text(m, out);
}

static void print_dist_json(const struct metrics_dist *d, FILE *out)
{
	uint32_t b;

	fprintf(out,
		"\"min\": %" PRIu64 ", \"max\": %" PRIu64 ", \"mean\": %.4f, \"sdv\": %.4f, "
		"\"zero\": %u, \"histogram\": {\"bin_width\": %" PRIu64 ", \"counts\": [",
		d->min, d->max, d->mean, d->sdv, d->zero, d->bin_width);
	for (b = 0; b < d->nbins; b++)
		fprintf(out, "%s%" PRIu64, b ? ", " : "", d->bins[b]);
	fputs("]}", out);
}

static void print_efi_json(const struct metrics_efi *e, FILE *out)
{
	unsigned s, first = 1;

	fprintf(out,
		"\"terminals\": %u, \"detached_terminals\": %u, \"routes\": %" PRIu64
		", \"unrouted_routes\": %" PRIu64 ", \"channels\": %u, \"efi\": {",
		e->terminals, e->detached, e->routes, e->unrouted, e->nchannels);
	print_dist_json(&e->dist, out);
	fprintf(out,
		"}, \"mean_hops\": %.4f, \"stretch\": {\"mean\": %.4f, \"max\": %u, "
		"\"mean_ratio\": %.4f, \"nonminimal_routes\": %" PRIu64 ", \"histogram\": {",
		e->mean_hops, e->mean_stretch, e->max_stretch, e->mean_ratio, e->nonminimal);
	for (s = 0; s <= METRICS_MAX_STRETCH; s++) {
		if (!e->stretch_hist[s])
			continue;
		fprintf(out, "%s\"%u\": %" PRIu64, first ? "" : ", ", s, e->stretch_hist[s]);
		first = 0;
	}
	fputs("}}, \"hot_channels\": [", out);
	for (s = 0; s < e->nhot; s++) {
		fprintf(out, "%s{\"efi\": %" PRIu64 ", \"from\": ", s ? ", " : "", e->hot[s].load);
		json_write_string(out, e->hot[s].from);
		fputs(", \"to\": ", out);
		json_write_string(out, e->hot[s].to);
		fputc('}', out);
	}
	fputc(']', out);
}

static void print_jobs_json(const struct metrics_report *m, FILE *out)
{
	const struct metrics_jobs *j = m->jobs;
	uint32_t k;

	fputs(", \"effective_efi\": {\"job_map\": ", out);
	json_write_string(out, m->job_map_name ? m->job_map_name : "");
	fprintf(out, ", \"jobs\": %u, \"unknown_hosts\": %u, \"first_unknown_host\": ", j->njobs,
		m->jm->unknown_hosts);
	json_write_string(out, m->jm->first_unknown);
	fprintf(out,
		", \"bound_terminals\": %u, \"intra_job_routes\": %" PRIu64
		", \"unrouted_intra_job_routes\": %" PRIu64 ", ",
		j->bound_terminals, j->routes, j->unrouted);
	print_dist_json(&j->dist, out);
	fprintf(out,
		", \"dark_fiber_percent\": %.4f, \"dark_channels\": %u, \"multi_switch_jobs\": %u, "
		"\"mean_job_max_efi\": %.4f, \"mean_channels_per_job\": %.4f, \"per_job\": [",
		j->dark_fiber, j->dist.zero, j->multi_switch_jobs, j->mean_job_max_efi,
		j->mean_job_channels);
	for (k = 0; k < j->njobs; k++) {
		fprintf(out, "%s{\"job\": ", k ? ", " : "");
		json_write_string(out, job_map_job_name(m->jm, k));
		fprintf(out,
			", \"terminals\": %u, \"switches\": %u, \"routes\": %" PRIu64
			", \"max_efi\": %" PRIu64 ", \"channels\": %u}",
			j->job[k].terminals, j->job[k].switches, j->job[k].routes,
			j->job[k].max_efi, j->job[k].channels);
	}
	fputs("]}", out);
}

void metrics_print_json(const struct metrics_report *m, FILE *out)
{
	fprintf(out, "{\"route_lids\": \"%s\", ", m->options->all_lids ? "all" : "base");
	print_efi_json(m->efi, out);
	if (m->tree)
		metrics_fat_tree_print_json(m, out);
	if (m->jobs)
		print_jobs_json(m, out);
	if (m->patterns)
		metrics_patterns_print_json(m, out);
	fputc('}', out);
}
