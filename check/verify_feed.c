/*
 * verify_feed.c - the verifier beside the routing (verify.h: verify_feed_attach): a thread on
 * the other CPU walks the LFT columns an engine has promised final while the engine goes on,
 * with the same walk verify_routing runs (walker.h).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check/walker.h"
#include "lib/assert.h"
#include "lib/threads.h"

/*
 * The verifier beside the routing (verify.h).  The thread takes the promised columns in whole
 * blocks of FEED_BLOCK LIDs, a little behind the engine's latest promise, so it seldom reads a
 * cache line the engine is still writing to.  It polls: the engine's promises come every few
 * microseconds, and waking the thread for each would cost the engine a system call every time.
 * The copy of the columns is allocated at the first promise, so engines that never promise cost
 * nothing but the feed itself.
 */
#define FEED_BLOCK 16u
#define FEED_STEP (16u * FEED_BLOCK) /* columns checked between looks at the stop flag */
#define FEED_POLL_NS 50000L

enum feed_state {
	FEED_IDLE,	/* nothing promised yet */
	FEED_RUNNING,	/* the thread checks the promised columns */
	FEED_NO_THREAD, /* not streamed: the report verifies the final tables */
};

struct verify_feed {
	const struct fabric *f;
	struct routing *r;
	struct routing view; /* r's SL settings at the first promise, LFTs from copy */
	uint8_t *copy;	     /* the promised columns, laid out as r->lft */
	struct verify_report rep;
	uint32_t end;		      /* max_lid + 1 */
	_Atomic uint32_t final_below; /* the engine's latest promise */
	atomic_int stop;	      /* the report is not wanted: leave at once */
	int checked;		      /* the thread checked every column and the dependencies */
	enum feed_state state;	      /* the engine's thread only */
	pthread_t thread;
};

static void copy_columns(struct verify_feed *vf, uint32_t from, uint32_t to)
{
	size_t len = vf->r->lft_len, s;

	sn_assert(from <= to && to <= len);
	for (s = 0; s < vf->r->nswitches; s++)
		memcpy(vf->copy + s * len + from, vf->r->lft + s * len + from, to - from);
}

/* The next block end the engine's promise covers, or end once it covers everything. */
static uint32_t promised_upto(struct verify_feed *vf)
{
	uint32_t below = atomic_load_explicit(&vf->final_below, memory_order_acquire);

	return below >= vf->end ? vf->end : below - below % FEED_BLOCK;
}

static void *feed_main(void *arg)
{
	struct verify_feed *vf = arg;
	struct timespec nap = { .tv_nsec = FEED_POLL_NS };
	struct source_groups groups;
	struct walker w;
	uint32_t done = 0, upto;

	if (verify_walker_open(&w, &groups, vf->f, &vf->view, &vf->rep))
		goto out;
	while (!atomic_load_explicit(&vf->stop, memory_order_relaxed)) {
		upto = promised_upto(vf);
		if (upto > done + FEED_STEP)
			upto = done + FEED_STEP;
		/* Promises only rise, and never past the table. */
		sn_assert(upto >= done && upto <= vf->end);
		if (upto > done) {
			copy_columns(vf, done, upto);
			/* LID 0 is nobody's, but its column is compared at the end as well. */
			if (verify_walker_check(&w, done ? done : 1, upto))
				goto out;
			done = upto;
		} else if (done >= vf->end) {
			vf->checked = !verify_walker_close(&w);
			break;
		} else {
			nanosleep(&nap, NULL);
		}
	}
out:
	verify_walker_free(&w, &groups);
	return NULL;
}

/* The engine's promise (routing_columns_final); the first one starts the thread. */
static void feed_columns_final(void *arg, uint32_t below)
{
	struct verify_feed *vf = arg;

	if (vf->state == FEED_NO_THREAD)
		return;
	/* One thread makes the promises, with rising bounds (routing.h). */
	sn_assert(below <= vf->end &&
		  below >= atomic_load_explicit(&vf->final_below, memory_order_relaxed));
	atomic_store_explicit(&vf->final_below, below, memory_order_release);
	if (vf->state == FEED_RUNNING)
		return;
	/* Per-source SLs and per-port SL2VL live in arrays the final check does not compare. */
	vf->state = FEED_NO_THREAD;
	if (vf->r->sl_mode != ROUTING_SL_UNIFORM || vf->r->sl2vl)
		return;
	vf->copy = malloc((size_t)vf->r->nswitches * vf->r->lft_len + 1);
	if (!vf->copy)
		return;
	vf->view = *vf->r;
	vf->view.lft = vf->copy;
	vf->view.columns_final = NULL;
	if (!thread_start_beside(&vf->thread, feed_main, vf))
		vf->state = FEED_RUNNING;
}

struct verify_feed *verify_feed_attach(const struct fabric *f, struct routing *r)
{
	struct verify_feed *vf = calloc(1, sizeof(*vf));

	if (!vf)
		return NULL;
	vf->f = f;
	vf->r = r;
	vf->end = f->max_lid + 1;
	atomic_init(&vf->final_below, 0);
	atomic_init(&vf->stop, 0);
	r->columns_final = feed_columns_final;
	r->columns_final_arg = vf;
	return vf;
}

static void feed_stop(struct verify_feed *vf, int wanted)
{
	if (vf->state != FEED_RUNNING)
		return;
	if (wanted)
		atomic_store_explicit(&vf->final_below, vf->end, memory_order_release);
	else
		atomic_store_explicit(&vf->stop, 1, memory_order_relaxed);
	pthread_join(vf->thread, NULL);
	vf->state = FEED_NO_THREAD;
}

/* Whether the thread checked exactly the tables and SL settings r holds now. */
static int checked_final_tables(const struct verify_feed *vf)
{
	const struct routing *r = vf->r, *v = &vf->view;

	return vf->checked && r->sl_mode == v->sl_mode && r->sl_uniform == v->sl_uniform &&
	       !r->sl2vl && !memcmp(r->sl2vl_uniform, v->sl2vl_uniform, sizeof(v->sl2vl_uniform)) &&
	       !memcmp(r->lft, vf->copy, (size_t)r->nswitches * r->lft_len);
}

int verify_feed_report(struct verify_feed *vf, struct verify_report *rep, int *streamed)
{
	return verify_feed_report_progress(vf, rep, streamed, NULL);
}

int verify_feed_report_progress(struct verify_feed *vf, struct verify_report *rep, int *streamed,
				const struct progress_hook *progress)
{
	int was_running = vf->state == FEED_RUNNING;

	feed_stop(vf, 1);
	*streamed = was_running && checked_final_tables(vf);
	if (!*streamed)
		return verify_routing_progress(vf->f, vf->r, rep, progress);
	*rep = vf->rep;
	return 0;
}

void verify_feed_detach(struct verify_feed *vf)
{
	if (!vf)
		return;
	feed_stop(vf, 0);
	if (vf->r->columns_final_arg == vf) {
		vf->r->columns_final = NULL;
		vf->r->columns_final_arg = NULL;
	}
	free(vf->copy);
	free(vf);
}
