/*
 * workers.c - Nue's second thread: a second candidate routing with its own state and tables
 * (struct nue_worker), either the other choice of weights for switch LIDs beside the first
 * (nue.c, route_best) or, with one layer, the other order of equally far destinations racing the
 * first (nue_route_one_layer).  The result never depends on whether the thread ran: without it the
 * caller routes the same candidates one after the other.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engines/nue/nue_private.h"
#include "lib/assert.h"
#include "lib/threads.h"

/* ------------------------------------------------------ a candidate on a thread of its own */

/* The SWW_NONE candidate on a thread of its own, with its own state and tables. */
struct nue_worker {
	struct nue n;
	struct routing r;
	struct nue_report rep;
	struct nue_best best;
	struct fab_error err;
	const uint8_t *part;
	const char *engine;
	pthread_t thread;
	int rc;
	atomic_int finished; /* rc is final; only first_pass_main sets it */
};

/* The second CPU is free for the caller's work as soon as a worker thread is done. */
static void *worker_main(void *arg)
{
	static const enum sw_weights none = SWW_NONE;
	struct nue_worker *w = arg;

	w->rc = nue_run_candidates(&w->n, &w->best, 0, &none, 1, &w->err);
	cpu_gate_open(w->n.o->spare_cpu);
	return NULL;
}

void nue_worker_free(struct nue_worker *w)
{
	nue_free_best(&w->best);
	nue_free(&w->n);
	routing_free(&w->r);
	free(w);
}

/* A second routing state beside n's; NULL if memory is short.  worker_prepare fills it. */
static struct nue_worker *worker_new(const struct nue *n)
{
	struct nue_worker *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->rep = *n->rep;
	w->n = (struct nue){ .f = n->f,
			     .o = n->o,
			     .r = &w->r,
			     .rep = &w->rep,
			     .k = n->k,
			     .no_deferral = n->no_deferral,
			     .group_lids = n->group_lids,
			     .roots = n->roots };
	w->part = n->part;
	w->engine = n->r->engine;
	return w;
}

/* Tables, memory and indexes of w's state, for the same fabric and partition; 0 or -1. */
static int worker_prepare(struct nue_worker *w)
{
	if (routing_init(&w->r, w->n.f, w->engine)) {
		fab_error_set(&w->err, "out of memory for a second candidate's tables");
		return -1;
	}
	return nue_prepare(&w->n, w->part, &w->err);
}

/* NULL when memory or a thread is short: the caller routes every candidate itself then. */
struct nue_worker *nue_worker_start(const struct nue *n)
{
	struct nue_worker *w = worker_new(n);

	if (w && (worker_prepare(w) || thread_start_beside(&w->thread, worker_main, w))) {
		nue_worker_free(w);
		return NULL;
	}
	return w;
}

/* Joins w; its routing replaces n's if better, and best is then its score.  0 or -1. */
int nue_worker_finish(struct nue *n, struct nue_score *best, struct nue_worker *w,
		      struct fab_error *err)
{
	pthread_join(w->thread, NULL);
	n->deferred_any |= w->n.deferred_any;
	if (w->rc) {
		*err = w->err;
		return -1;
	}
	/* Routed for the same fabric: its tables have the shape of n's. */
	sn_assert(w->r.nswitches == n->r->nswitches && w->r.lft_len == n->r->lft_len);
	if (nue_better(&w->best.score, best)) {
		nue_swap_tables(n, &w->r.lft, &w->r.hops, &w->n.lid_layer);
		*n->rep = w->rep;
		*best = w->best.score;
	}
	return 0;
}

/* ------------------------------------------- layer roots shared by the weight candidates */

enum {
	ROOT_FREE,
	ROOT_BUSY,
	ROOT_CHOSEN
};

/* Roots n has chosen already count as chosen; 0 or -1. */
int shared_roots_init(struct shared_roots *sr, const struct nue *n)
{
	unsigned layer;

	memset(sr->state, ROOT_FREE, sizeof(sr->state));
	sr->nchosen = 0;
	for (layer = 0; layer < n->k; layer++) {
		sr->root[layer] = n->layer_root[layer];
		if (sr->root[layer] != FAB_NONE)
			sr->state[layer] = ROOT_CHOSEN;
	}
	return lock_and_cond_init(&sr->lock, &sr->chosen);
}

void shared_roots_destroy(struct shared_roots *sr)
{
	lock_and_cond_destroy(&sr->lock, &sr->chosen);
}

/*
 * The root of a layer, chosen from the layer's destinations as nue_order_layer counts them (for
 * a layer n has not routed yet, as it will count them: before move_fallbacks every LID is in its
 * home layer, the same in both candidates).  FAB_NONE when memory is short.
 */
static uint32_t choose_root(const struct nue *n, unsigned layer)
{
	uint32_t *dest = malloc(sizeof(uint32_t) * n->nsw), *ca = malloc(sizeof(uint32_t) * n->nsw);
	uint32_t nca, root = FAB_NONE;

	if (dest && ca) {
		nca = nue_count_layer(n, layer, dest, ca);
		root = nue_central_switch(n->f, dest, nca ? ca : NULL);
	}
	free(dest);
	free(ca);
	return root;
}

/* Chooses the root of layer (marked busy by the caller) unlocked, then publishes it. */
static uint32_t choose_and_publish(const struct nue *n, struct shared_roots *sr, unsigned layer)
{
	uint32_t root;

	pthread_mutex_unlock(&sr->lock);
	root = choose_root(n, layer);
	pthread_mutex_lock(&sr->lock);
	sr->root[layer] = root;
	sr->state[layer] = ROOT_CHOSEN;
	sr->nchosen++;
	pthread_cond_broadcast(&sr->chosen);
	return root;
}

/* A later layer (never 0) whose root nobody chooses yet, or 0. */
static unsigned free_layer_after(const struct nue *n, const struct shared_roots *sr, unsigned layer)
{
	unsigned l;

	for (l = layer + 1; l < n->k; l++)
		if (sr->state[l] == ROOT_FREE)
			return l;
	return 0;
}

/*
 * The root of the current layer (1..k-1, its destinations counted by nue_order_layer), chosen
 * once for both weight candidates.  Their threads reach each layer at about the same time:
 * the first chooses its root, and the other, instead of waiting, chooses the root of a later
 * layer meanwhile.  Each thread so runs Brandes' betweenness for about half of the layers,
 * which took a tenth of sar-nue's route time with 8 VLs on the random graph of 4,000 switches.
 * A root depends only on the layer's destinations, so the tables are those of choosing every
 * root in both threads.
 */
uint32_t nue_shared_root(struct nue *n, unsigned layer)
{
	struct shared_roots *sr = n->roots;
	uint32_t root;
	unsigned ahead;

	sn_assert(sr && layer > 0 && layer < n->k);
	pthread_mutex_lock(&sr->lock);
	for (;;) {
		if (sr->state[layer] == ROOT_CHOSEN) {
			root = sr->root[layer];
			break;
		}
		if (sr->state[layer] == ROOT_FREE) {
			sr->state[layer] = ROOT_BUSY;
			root = choose_and_publish(n, sr, layer);
			break;
		}
		ahead = free_layer_after(n, sr, layer);
		if (ahead) {
			sr->state[ahead] = ROOT_BUSY;
			choose_and_publish(n, sr, ahead);
			continue;
		}
		pthread_cond_wait(&sr->chosen, &sr->lock);
	}
	pthread_mutex_unlock(&sr->lock);
	return root;
}

unsigned nue_threads_to_use(const struct nue_opts *o)
{
	long cpus;

	if (o->threads)
		return o->threads;
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	return cpus >= 2 ? 2 : 1;
}

/* ------------------------------------------------ the race of two destination orders */

static void *first_pass_main(void *arg)
{
	struct nue_worker *w = arg;

	w->rc = worker_prepare(w);
	if (!w->rc)
		w->rc = nue_route_first_pass(&w->n, SWW_CA_SWITCHES, &w->err);
	cpu_gate_open(w->n.o->spare_cpu);
	atomic_store_explicit(&w->finished, 1, memory_order_release);
	return NULL;
}

/* w's first pass won: its tables go to n's routing, where the verifier watches the final pass. */
static void adopt_tables(struct nue *n, struct nue_worker *w)
{
	size_t cells = (size_t)n->r->nswitches * n->r->lft_len;

	sn_assert(w->r.nswitches == n->r->nswitches && w->r.lft_len == n->r->lft_len);
	memcpy(n->r->lft, w->r.lft, cells);
	memcpy(n->r->hops, w->r.hops, cells);
	memcpy(n->lid_layer, w->n.lid_layer, n->f->max_lid + 1);
	w->n.r = n->r;
}

/* The other order's first pass beside n's has ended (or, with wait, ends): which won. */
enum race_state nue_settle_race(struct order_race *race, int wait)
{
	struct nue_worker *w = race->other;
	struct nue_score theirs;

	if (race->state != RACE_OPEN)
		return race->state;
	if (!wait && !atomic_load_explicit(&w->finished, memory_order_acquire))
		return RACE_OPEN;
	if (race->other_thread)
		pthread_join(w->thread, NULL);
	/* Joined, or run on this thread before: its first pass is over. */
	sn_assert(atomic_load_explicit(&w->finished, memory_order_acquire));
	theirs = nue_score_of(&w->n);
	if (w->rc)
		race->state = RACE_FAILED;
	else
		race->state = nue_better(&theirs, &race->mine) ? RACE_LOST : RACE_WON;
	return race->state;
}

/*
 * n's first pass is done; w's runs beside it on a thread of its own (other_thread), or ran
 * before on this one.  n's rebalancing starts at once: if n wins, as the ascending order mostly
 * does, nothing waited for w, and if w wins, n's work is dropped and w's candidate is rebalanced
 * as it would have been after waiting.  The verifier gets no promise from n before n has won.
 * Without the rebalancing pass the race is decided after it, on the first passes alone.  Inside
 * OpenSM on the Kautz graph 3-3 the descending order's pass ended 0.3 to 4 ms after the ascending
 * one (other processes share the CPUs) and the routing waited for it; racing cut the median of 12
 * OpenSM runs from 19.8 to 17.6 ms.  The tables are those of waiting.  0 or -1; the winner's tables
 * are in n's routing then.
 */
static int race_orders(struct nue *n, struct nue_worker *w, int other_thread, struct nue **winner,
		       struct fab_error *err)
{
	struct order_race race = { .other = w,
				   .other_thread = other_thread,
				   .mine = nue_score_of(n),
				   .state = RACE_OPEN };
	int rc;

	n->race = &race;
	rc = nue_finish_candidate(n, err);
	n->race = NULL;
	nue_settle_race(&race, 1);
	sn_assert(race.state != RACE_OPEN);
	if (rc < 0)
		return -1;
	if (race.state == RACE_FAILED) {
		*err = w->err;
		return -1;
	}
	if (race.state == RACE_WON)
		return 0;
	adopt_tables(n, w);
	*winner = &w->n;
	return nue_finish_candidate(*winner, err) ? -1 : 0;
}

/*
 * Whether the second order's own LFT and hop tables would take more than
 * NUE_TWO_ORDERS_MAX_BYTES.  On Fishnet-lite of 9,702 switches and 48,510 LIDs each order's
 * tables took 0.9 GB and the routing peaked at 2.3 GB; one order keeps it under 2 GB.
 */
static int two_orders_too_big(const struct nue *n)
{
	uint64_t limit =
		n->o->two_orders_max_bytes ? n->o->two_orders_max_bytes : NUE_TWO_ORDERS_MAX_BYTES;

	return (uint64_t)n->r->nswitches * n->r->lft_len * 2 > limit;
}

/*
 * One layer.  Which turns close the layer is decided by the order of the destinations, and
 * far-first (order_far_first) leaves many destinations equally far from the root, in LID order.
 * With nue_orders=2 the first pass is routed twice, equally far destinations by ascending and by
 * descending LID, and the better (see nue_better()) is rebalanced.  With the LIDs OpenSM gave under
 * ibsim the descending order won on the dragonfly a8p4h4 (CA hops 5.0513 against 5.0739) and on
 * the 8x8x8 torus with 1% of links removed (10 fall-backs against 1,233); the ascending one won
 * on Kautz, random-256 and the whole torus.  With two threads the second order runs beside the
 * first, on the CPU the verifier needs only in the final pass, and the result is the same as in
 * one thread (race_orders).  The caller's own work beside the routing (the plugin's hop rows)
 * waits at spare_cpu until the second order is done: run alongside, it slowed that order's pass
 * by 3 to 8 ms on the Kautz graph inside OpenSM, the routing waited for it, and two orders cost
 * 35% more time there instead of about 5%.  Hence the default; with one CPU it costs a first
 * pass.
 *
 * In tree-like fabrics the first order is by LID alone (by_lid; far-first again from its first
 * fall-back on, see nue_route_first_pass), the second as elsewhere.  On complete fat trees the
 * first wins or ties (see order_far_first); with faults either may win (an 8-ary 3-tree with 3%
 * of links removed: maximum EFI 920 far-first by descending LID, 1,576 by LID; a 3-level tree of
 * 24-port switches with 900 hosts and 2% removed fell back by LID and started again far-first,
 * 1,640 and no fall-back).  With nue_orders=1 the order stays far-first there.
 */
int nue_route_one_layer(struct nue *n, struct fab_error *err)
{
	struct nue_worker *w;
	struct nue *winner = n;
	int beside, rc;

	sn_assert(n->k == 1);
	n->rep->one_order_for_memory = n->o->orders >= 2 && two_orders_too_big(n);
	if (n->o->orders < 2 || n->rep->one_order_for_memory) {
		cpu_gate_open(n->o->spare_cpu);
		return nue_route_candidate(n, SWW_CA_SWITCHES, err);
	}
	w = worker_new(n);
	if (!w) {
		fab_error_set(err, "out of memory for the second destination order");
		return -1;
	}
	n->by_lid = nue_tree_like(n);
	w->n.ties_descending = 1;
	w->n.group_lids = n->group_lids;
	beside = nue_threads_to_use(n->o) > 1 &&
		 !thread_start_beside(&w->thread, first_pass_main, w);
	if (!beside)
		cpu_gate_open(n->o->spare_cpu);
	rc = nue_route_first_pass(n, SWW_CA_SWITCHES, err);
	if (!rc && !beside)
		first_pass_main(w);
	if (!rc)
		rc = race_orders(n, w, beside, &winner, err);
	else if (beside)
		pthread_join(w->thread, NULL);
	if (!rc && winner != n) {
		*n->rep = w->rep;
		n->rep->second_order = 1;
	}
	n->by_lid = 0;
	nue_worker_free(w);
	return rc;
}
