/*
 * patterns.c - static congestion under traffic patterns (shifts, random permutations, random
 * bisections; see metrics.h), the shifts also in a fat tree's topology order, and the fat-tree
 * figures the report sets beside the EFI: the tree's shape and the cut lower bound of the
 * maximum EFI.  Every flow walks its path through the LFTs with verify_lft_step(), the
 * verifier's own step.
 */
#include "check/metrics.h"
#include "check/metrics_net.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "check/verify.h"
#include "fabric/fattree.h"
#include "lib/assert.h"
#include "lib/json.h"

/* splitmix64: small, seedable, and the same sequence on every platform. */
struct rng {
	uint64_t s;
};

static uint64_t rng_next(struct rng *g)
{
	uint64_t z = (g->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t rng_below(struct rng *g, uint32_t n)
{
	return (uint32_t)(((unsigned __int128)rng_next(g) * n) >> 64);
}

static void shuffle(struct rng *g, uint32_t *a, uint32_t n)
{
	uint32_t i, j, x;

	for (i = n; i > 1; i--) {
		j = rng_below(g, i);
		sn_assert(j < i);
		x = a[i - 1];
		a[i - 1] = a[j];
		a[j] = x;
	}
}

/* One pattern instance: flows src[i] -> dst[i] (terminal indices) and the loads they cause. */
struct pattern_pass {
	struct net *n;
	uint32_t *path; /* [nsw + 1] */
	uint32_t *load; /* [nch] */
	uint32_t *touched, ntouched;
	uint32_t *src, *dst, nflows; /* [nterm] */
	uint32_t *perm;		     /* [nterm] */
};

struct instance {
	uint64_t max_load, unrouted;
	double unslowed, share; /* fractions of the flows */
};

/*
 * Channels of C* on the route from terminal src to dst's base LID; their number, or -1 when the
 * LFTs do not deliver it.  A route longer than the number of switches has looped.
 */
static int flow_path(const struct net *n, uint32_t src, uint32_t dst, uint32_t *path)
{
	unsigned dlid = n->f->ports[n->term[dst]].base_lid;
	uint32_t sw = n->term_sw[src], len = 0, q, nx;

	while (len <= n->nsw) {
		enum lft_step step = verify_lft_step(n->f, n->r, sw, dlid, &q, &nx);

		/* A delivered route meets no switch twice: fewer links than switches. */
		if (step == LFT_STEP_DELIVERED) {
			sn_assert(len < n->nsw);
			return (int)len;
		}
		if (step != LFT_STEP_SWITCH)
			return -1;
		sn_assert(n->chan_of_port[q] < n->nch);
		path[len++] = n->chan_of_port[q];
		sw = nx;
	}
	return -1;
}

/* Share of a link the flow gets: 1 / the highest load on its path. */
static void judge_flows(struct pattern_pass *pp, struct instance *res)
{
	uint64_t unslowed = 0;
	double share = 0;
	uint32_t i;

	for (i = 0; i < pp->nflows; i++) {
		int len = flow_path(pp->n, pp->src[i], pp->dst[i], pp->path), k;
		uint32_t m = 0;

		if (len < 0)
			continue;
		for (k = 0; k < len; k++)
			m = pp->load[pp->path[k]] > m ? pp->load[pp->path[k]] : m;
		unslowed += m <= 1;
		share += m > 1 ? 1.0 / m : 1.0;
	}
	res->unslowed = pp->nflows ? (double)unslowed / pp->nflows : 0.0;
	res->share = pp->nflows ? share / pp->nflows : 0.0;
}

static void instance_run(struct pattern_pass *pp, int judge, struct instance *res)
{
	uint32_t i;
	int k, len;

	memset(res, 0, sizeof(*res));
	pp->ntouched = 0;
	for (i = 0; i < pp->nflows; i++) {
		len = flow_path(pp->n, pp->src[i], pp->dst[i], pp->path);
		if (len < 0) {
			res->unrouted++;
			continue;
		}
		for (k = 0; k < len; k++)
			if (!pp->load[pp->path[k]]++)
				pp->touched[pp->ntouched++] = pp->path[k];
	}
	sn_assert(res->unrouted <= pp->nflows && pp->ntouched <= pp->n->nch);
	for (i = 0; i < pp->ntouched; i++)
		if (pp->load[pp->touched[i]] > res->max_load)
			res->max_load = pp->load[pp->touched[i]];
	if (judge)
		judge_flows(pp, res);
	for (i = 0; i < pp->ntouched; i++)
		pp->load[pp->touched[i]] = 0;
}

static void family_add(struct metrics_family *fam, const struct instance *in, uint32_t nflows)
{
	fam->instances++;
	fam->flows += nflows;
	fam->unrouted += in->unrouted;
	if (in->max_load > fam->max_load)
		fam->max_load = in->max_load;
	fam->mean_max_load += (double)in->max_load; /* a sum until family_end() */
}

static void family_end(struct metrics_family *fam)
{
	if (fam->instances)
		fam->mean_max_load /= fam->instances;
}

static uint32_t shift_count(uint32_t nterm, const struct metrics_options *o)
{
	uint32_t all = nterm ? nterm - 1 : 0;
	uint32_t k = o->shifts ? o->shifts
			       : (nterm <= METRICS_SHIFTS_ALL_MAX ? all : METRICS_SHIFTS_SAMPLE);

	return k < all ? k : all;
}

/*
 * Shifts i -> i+s mod m over the terminals ord[0..m) (indices into net.term; NULL: 0 .. m - 1,
 * the LID order).  With fewer shifts than m - 1, they are spread evenly over 1 .. m - 1.
 */
static void run_shifts(struct pattern_pass *pp, const struct metrics_options *o,
		       const uint32_t *ord, uint32_t m, const char *phase,
		       struct metrics_family *fam)
{
	uint32_t all = m ? m - 1 : 0, k, count, i, j;
	struct instance in;

	sn_assert(m <= pp->n->nterm);
	count = shift_count(m, o);
	for (k = 0; k < count; k++) {
		uint32_t s = count == all ? k + 1 : 1 + (uint32_t)((uint64_t)k * all / count);

		/* A shift of 0 or of m would send every terminal to itself. */
		sn_assert(s >= 1 && s <= all);

		for (i = 0; i < m; i++) {
			j = (uint32_t)(((uint64_t)i + s) % m);
			pp->src[i] = ord ? ord[i] : i;
			pp->dst[i] = ord ? ord[j] : j;
		}
		pp->nflows = m;
		instance_run(pp, 0, &in);
		family_add(fam, &in, pp->nflows);
		metrics_progress(o, phase, k + 1, count);
	}
	family_end(fam);
}

static void run_permutations(struct pattern_pass *pp, const struct metrics_options *o,
			     struct metrics_patterns *out)
{
	struct rng g = { o->seed };
	uint32_t nterm = pp->n->nterm, k, i;
	struct instance in;

	for (k = 0; k < o->permutations && nterm > 1; k++) {
		for (i = 0; i < nterm; i++)
			pp->perm[i] = i;
		shuffle(&g, pp->perm, nterm);
		pp->nflows = 0;
		for (i = 0; i < nterm; i++) {
			if (pp->perm[i] == i)
				continue; /* a terminal sending to itself is no flow */
			pp->src[pp->nflows] = i;
			pp->dst[pp->nflows++] = pp->perm[i];
		}
		instance_run(pp, 0, &in);
		family_add(&out->permutation, &in, pp->nflows);
		metrics_progress(o, "random permutations", k + 1, o->permutations);
	}
	family_end(&out->permutation);
}

/* Random halves, paired at random; each pair sends both ways (odd counts leave one out). */
static void run_bisections(struct pattern_pass *pp, const struct metrics_options *o,
			   struct metrics_patterns *out)
{
	struct rng g = { o->seed ^ 0x6a09e667f3bcc909ull };
	uint32_t nterm = pp->n->nterm, half = nterm / 2, k, i;
	double unslowed = 0, share = 0;
	struct instance in;

	for (k = 0; k < o->bisections && half; k++) {
		for (i = 0; i < nterm; i++)
			pp->perm[i] = i;
		shuffle(&g, pp->perm, nterm);
		for (i = 0; i < half; i++) {
			pp->src[2 * i] = pp->dst[2 * i + 1] = pp->perm[i];
			pp->dst[2 * i] = pp->src[2 * i + 1] = pp->perm[half + i];
		}
		pp->nflows = 2 * half;
		sn_assert(pp->nflows <= nterm);
		instance_run(pp, 1, &in);
		family_add(&out->bisection, &in, pp->nflows);
		unslowed += in.unslowed;
		share += in.share;
		metrics_progress(o, "random bisections", k + 1, o->bisections);
	}
	family_end(&out->bisection);
	if (out->bisection.instances) {
		out->ebb_unslowed = unslowed / out->bisection.instances;
		out->ebb_share = share / out->bisection.instances;
	}
}

/*
 * The shifts over the terminal ports order[0..norder), each terminal once: ports that are no
 * terminal, and repeated ones, are left out.
 */
static int run_order_shifts(struct pattern_pass *pp, const struct metrics_options *o,
			    const uint32_t *order, uint32_t norder, struct metrics_patterns *out)
{
	const struct net *n = pp->n;
	uint32_t *idx = malloc(sizeof(*idx) * (n->f->nports + 1));
	uint32_t *ord = malloc(sizeof(*ord) * (n->nterm + 1));
	uint32_t i, m = 0;
	int ret = -1;

	if (!idx || !ord)
		goto out;
	for (i = 0; i < n->f->nports; i++)
		idx[i] = FAB_NONE;
	for (i = 0; i < n->nterm; i++)
		idx[n->term[i]] = i;
	for (i = 0; i < norder; i++) {
		if (order[i] >= n->f->nports || idx[order[i]] == FAB_NONE)
			continue;
		sn_assert(m < n->nterm);
		ord[m++] = idx[order[i]];
		idx[order[i]] = FAB_NONE; /* taken */
	}
	out->have_order = 1;
	out->order_terminals = m;
	out->order_shifts_possible = m ? m - 1 : 0;
	run_shifts(pp, o, ord, m, "shift patterns, topology order", &out->order_shift);
	ret = 0;
out:
	free(idx);
	free(ord);
	return ret;
}

int metrics_patterns_in_order(const struct fabric *f, const struct routing *r,
			      const struct metrics_options *o, const uint32_t *order,
			      uint32_t norder, struct metrics_patterns *out)
{
	struct pattern_pass pp;
	struct net n;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	memset(&pp, 0, sizeof(pp));
	if (metrics_net_init(&n, f, r))
		return -1;
	pp.n = &n;
	pp.path = malloc(sizeof(*pp.path) * (n.nsw + 1));
	pp.load = calloc(n.nch + 1, sizeof(*pp.load));
	pp.touched = malloc(sizeof(*pp.touched) * (n.nch + 1));
	pp.src = malloc(sizeof(*pp.src) * (n.nterm + 1));
	pp.dst = malloc(sizeof(*pp.dst) * (n.nterm + 1));
	pp.perm = malloc(sizeof(*pp.perm) * (n.nterm + 1));
	if (!pp.path || !pp.load || !pp.touched || !pp.src || !pp.dst || !pp.perm)
		goto out;
	out->terminals = n.nterm;
	out->shifts_possible = n.nterm ? n.nterm - 1 : 0;
	run_shifts(&pp, o, NULL, n.nterm, "shift patterns", &out->shift);
	if (order && run_order_shifts(&pp, o, order, norder, out))
		goto out;
	run_permutations(&pp, o, out);
	run_bisections(&pp, o, out);
	ret = 0;
out:
	free(pp.path);
	free(pp.load);
	free(pp.touched);
	free(pp.src);
	free(pp.dst);
	free(pp.perm);
	metrics_net_free(&n);
	return ret;
}

int metrics_patterns(const struct fabric *f, const struct routing *r,
		     const struct metrics_options *o, struct metrics_patterns *out)
{
	return metrics_patterns_in_order(f, r, o, NULL, 0, out);
}

static void print_family_text(const char *name, const struct metrics_family *fam, FILE *out)
{
	fprintf(out,
		"  %-15s %u instances, max load %" PRIu64 ", mean max load %.3f, flows %" PRIu64
		", not delivered %" PRIu64 "\n",
		name, fam->instances, fam->max_load, fam->mean_max_load, fam->flows, fam->unrouted);
}

/* The shifts in topology order below those in LID order, or why there are none. */
static void print_order_text(const struct metrics_report *m, FILE *out)
{
	const struct metrics_patterns *p = m->patterns;

	if (p->have_order) {
		print_family_text("shift (topo):", &p->order_shift, out);
		fprintf(out,
			"  topology order: %u terminals leaf by leaf, then by port (%u of %u shifts); "
			"'shift:' is in LID order\n",
			p->order_terminals, p->order_shift.instances, p->order_shifts_possible);
	} else if (m->tree && !m->tree->recognised) {
		fprintf(out, "  topology order: not a fat tree (%s)\n", m->tree->why);
	}
}

void metrics_patterns_print_text(const struct metrics_report *m, FILE *out)
{
	const struct metrics_patterns *p = m->patterns;

	fprintf(out,
		"\npatterns (%u terminals, seed %" PRIu64 ", load = flows per channel of C*)\n",
		p->terminals, m->options->seed);
	fprintf(out, "  shifts:         %u of %u\n", p->shift.instances, p->shifts_possible);
	print_family_text("shift:", &p->shift, out);
	print_order_text(m, out);
	fprintf(out, "  %-15s max load %" PRIu64 " (the EFI)\n", "all-to-all:", m->efi->dist.max);
	print_family_text("permutation:", &p->permutation, out);
	print_family_text("bisection:", &p->bisection, out);
	fprintf(out,
		"  effective bisection bandwidth: %.4f of flows unslowed, mean link share %.4f\n",
		p->ebb_unslowed, p->ebb_share);
}

static void print_family_json(const char *name, const struct metrics_family *fam, FILE *out)
{
	fprintf(out,
		"\"%s\": {\"instances\": %u, \"flows\": %" PRIu64 ", \"unrouted_flows\": %" PRIu64
		", \"max_load\": %" PRIu64 ", \"mean_max_load\": %.4f}",
		name, fam->instances, fam->flows, fam->unrouted, fam->max_load, fam->mean_max_load);
}

void metrics_patterns_print_json(const struct metrics_report *m, FILE *out)
{
	const struct metrics_patterns *p = m->patterns;

	fprintf(out,
		", \"patterns\": {\"seed\": %" PRIu64
		", \"terminals\": %u, \"shifts_possible\": %u, ",
		m->options->seed, p->terminals, p->shifts_possible);
	print_family_json("shift", &p->shift, out);
	if (p->have_order) {
		fputs(", ", out);
		print_family_json("shift_topology_order", &p->order_shift, out);
		fprintf(out, ", \"topology_order_terminals\": %u", p->order_terminals);
	} else if (m->tree) {
		fputs(", \"shift_topology_order\": null", out);
	}
	fprintf(out, ", \"all_to_all\": {\"max_load\": %" PRIu64 "}, ", m->efi->dist.max);
	print_family_json("permutation", &p->permutation, out);
	fputs(", ", out);
	print_family_json("bisection", &p->bisection, out);
	fprintf(out, ", \"ebb_unslowed_fraction\": %.4f, \"ebb_mean_share\": %.4f}",
		p->ebb_unslowed, p->ebb_share);
}

void metrics_fat_tree_recognise(const struct fabric *f, struct fat_tree *t,
				struct metrics_fat_tree *out)
{
	struct fab_error why = { "" };

	memset(out, 0, sizeof(*out));
	if (fat_tree_recognise(f, t, &why)) {
		snprintf(out->why, sizeof(out->why), "%s", why.msg);
		return;
	}
	out->recognised = 1;
	snprintf(out->shape, sizeof(out->shape), "%s", t->shape);
	out->levels = t->levels;
	out->leaves = t->nleaves;
	out->hosts = t->nterminals;
	out->service = t->nservice;
	out->efi_bound = fat_tree_efi_bound(t, f);
}

/* Nothing for a fabric that is no fat tree: the EFI figures stand alone. */
void metrics_fat_tree_print_text(const struct metrics_report *m, FILE *out)
{
	const struct metrics_fat_tree *t = m->tree;

	if (!t->recognised)
		return;
	fprintf(out, "fat tree:         %s (%u terminals on %u leaves", t->shape, t->hosts,
		t->leaves);
	if (t->service)
		fprintf(out, ", %u above them", t->service);
	fputs(")\n", out);
	if (!t->efi_bound) {
		fputs("EFI cut bound:    none (no route leaves a block)\n", out);
		return;
	}
	fprintf(out,
		"EFI cut bound:    EFI max %" PRIu64 " (fat tree cut bound %" PRIu64
		", ratio %.2f)\n",
		m->efi->dist.max, t->efi_bound, (double)m->efi->dist.max / (double)t->efi_bound);
}

void metrics_fat_tree_print_json(const struct metrics_report *m, FILE *out)
{
	const struct metrics_fat_tree *t = m->tree;

	if (!t->recognised) {
		fputs(", \"fat_tree\": {\"recognised\": false, \"reason\": ", out);
		json_write_string(out, t->why);
		fputc('}', out);
		return;
	}
	fputs(", \"fat_tree\": {\"recognised\": true, \"shape\": ", out);
	json_write_string(out, t->shape);
	fprintf(out,
		", \"levels\": %u, \"leaves\": %u, \"terminals_on_leaves\": %u, "
		"\"terminals_above_leaves\": %u, "
		"\"efi_cut_bound\": %" PRIu64 ", \"efi_max_over_bound\": ",
		t->levels, t->leaves, t->hosts, t->service, t->efi_bound);
	if (t->efi_bound)
		fprintf(out, "%.4f}", (double)m->efi->dist.max / (double)t->efi_bound);
	else
		fputs("null}", out);
}
