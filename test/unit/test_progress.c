/*
 * test_progress.c - the progress reporter on a fake clock: nothing before a phase has lasted
 * `after` seconds, at most one line per `every`, the estimate of what is left, passes that
 * count again, the final line of a long phase, nothing at all when off, and the hook's coarse
 * grain and owner thread.
 */
#include <pthread.h>
#include <string.h>

#include "lib/progress.h"
#include "check.h"

struct fake {
	double t;
	char lines[16][256];
	unsigned n;
};

static double fake_clock(void *ctx)
{
	return ((struct fake *)ctx)->t;
}

static void sink(void *ctx, const char *line)
{
	struct fake *f = ctx;

	if (f->n < 16)
		snprintf(f->lines[f->n], sizeof(f->lines[0]), "%s", line);
	f->n++;
}

static void init(struct progress *p, struct fake *f, enum progress_style style)
{
	struct progress_config c = {
		.prefix = "t",
		.style = style,
		.sink = sink,
		.sink_ctx = f,
		.after = 2,
		.every = 0.5,
		.clock = fake_clock,
		.clock_ctx = f,
	};

	memset(f, 0, sizeof(*f));
	progress_init(p, &c);
}

static void test_threshold_and_rate(void)
{
	struct progress p;
	struct fake f;

	init(&p, &f, PROGRESS_LINES);
	progress_phase(&p, "routing");
	f.t = 1.9;
	progress_update(&p, "routing", 10, 100);
	CHECK(f.n == 0); /* before 2 s: nothing */
	f.t = 2.0;
	progress_update(&p, "routing", 20, 100);
	CHECK(f.n == 1);
	CHECK(!strcmp(f.lines[0], "t: routing: 20% of 100, 2.0 s, about 8 s left"));
	f.t = 2.4;
	progress_update(&p, "routing", 25, 100);
	CHECK(f.n == 1); /* rate limit */
	f.t = 2.5;
	progress_update(&p, "routing", 50, 100);
	CHECK(f.n == 2);
	CHECK(!strcmp(f.lines[1], "t: routing: 50% of 100, 2.5 s, about 2 s left"));
	f.t = 3.0;
	progress_end(&p);
	CHECK(f.n == 3);
	CHECK(!strcmp(f.lines[2], "t: routing: done in 3.0 s"));
	progress_end(&p); /* twice: nothing more */
	CHECK(f.n == 3);
}

static void test_phases(void)
{
	struct progress p;
	struct fake f;

	init(&p, &f, PROGRESS_LINES);
	progress_phase(&p, "loading");
	f.t = 1;
	progress_phase(&p, "routing"); /* a short phase leaves nothing */
	CHECK(f.n == 0);
	f.t = 5;
	progress_phase(&p, "verifying"); /* a long one its time, with no count */
	CHECK(f.n == 1 && !strcmp(f.lines[0], "t: routing: done in 4.0 s"));
	/* A new name from an update starts its phase: its 2 s count from there. */
	f.t = 6;
	progress_update(&p, "metrics", 1, 10);
	CHECK(f.n == 1);
	f.t = 9;
	progress_update(&p, "metrics", 5, 10);
	CHECK(f.n == 2 && !strcmp(f.lines[1], "t: metrics: 50% of 10, 3.0 s, about 3 s left"));
}

static void test_passes(void)
{
	struct progress p;
	struct fake f;

	init(&p, &f, PROGRESS_LINES);
	progress_phase(&p, "routing");
	f.t = 3;
	progress_update(&p, "routing", 100, 100);
	f.t = 4;
	progress_update(&p, "routing", 10, 100); /* again from below: pass 2, its own estimate */
	CHECK(f.n == 2);
	CHECK(!strcmp(f.lines[1], "t: routing, pass 2: 10% of 100, 4.0 s"));
	f.t = 5;
	progress_update(&p, "routing", 20, 100);
	CHECK(!strcmp(f.lines[2], "t: routing, pass 2: 20% of 100, 5.0 s, about 4 s left"));
}

static void test_format(void)
{
	char b[256];

	progress_format(b, sizeof(b), "sar-nue", "routing", 1, 20000, 40000, 12.1, 12.1);
	CHECK(!strcmp(b, "sar-nue: routing: 50% of 40000, 12.1 s, about 12 s left"));
	progress_format(b, sizeof(b), "x", "routing", 1, 2, 100, 10, 10);
	CHECK(!strcmp(b, "x: routing: 2% of 100, 10.0 s, about 8 min left"));
	progress_format(b, sizeof(b), "x", "loading", 1, 0, 0, 3.24, 3.24);
	CHECK(!strcmp(b, "x: loading: 3.2 s"));
	progress_format(b, sizeof(b), "x", "y", 1, 0, 10, 3, 3); /* nothing done: no estimate */
	CHECK(!strcmp(b, "x: y: 0% of 10, 3.0 s"));
	progress_format(b, sizeof(b), "x", "y", 1, 10, 10, 3, 3);
	CHECK(!strcmp(b, "x: y: 100% of 10, 3.0 s"));
}

static void test_off(void)
{
	struct progress p;
	struct fake f;

	init(&p, &f, PROGRESS_OFF);
	progress_phase(&p, "routing");
	f.t = 100;
	progress_update(&p, "routing", 1, 2);
	progress_end(&p);
	CHECK(f.n == 0);
}

static void test_terminal(void)
{
	struct progress_config c = { .prefix = "t",
				     .style = PROGRESS_TERMINAL,
				     .after = 2,
				     .every = 0.5,
				     .clock = fake_clock };
	struct progress p;
	struct fake f = { 0 };
	char buf[512] = "";
	FILE *out = fmemopen(buf, sizeof(buf) - 1, "w");

	CHECK(out != NULL);
	if (!out)
		return;
	c.out = out;
	c.clock_ctx = &f;
	progress_init(&p, &c);
	progress_phase(&p, "routing");
	f.t = 2;
	progress_update(&p, "routing", 1, 4);
	CHECK(p.open);
	progress_clear(&p);
	CHECK(!p.open);
	f.t = 4;
	progress_end(&p);
	fclose(out);
	CHECK(!strcmp(buf, "\rt: routing: 25% of 4, 2.0 s, about 6 s left\033[K\r\033[K"
			   "\rt: routing: done in 4.0 s\033[K\n"));
}

struct calls {
	unsigned n;
	uint64_t last;
};

static void count_call(void *ctx, const char *phase, uint64_t done, uint64_t total)
{
	struct calls *c = ctx;

	(void)phase;
	(void)total;
	c->n++;
	c->last = done;
}

static void *step_elsewhere(void *arg)
{
	progress_step(arg, "routing", 100, 100);
	return NULL;
}

static void test_hook(void)
{
	struct progress_hook h;
	struct calls c = { 0, 0 };
	pthread_t t;
	uint64_t i;

	progress_hook_init(&h, count_call, &c);
	for (i = 0; i <= 1000; i++)
		progress_step(&h, "routing", i, 1000);
	CHECK(c.n == 100 && c.last == 1000); /* once per percent, the last item included */
	c.n = 0;
	for (i = 0; i <= 7; i++)
		progress_step(&h, "routing", i, 7); /* fewer items than percents: each */
	CHECK(c.n == 7);
	progress_step(NULL, "routing", 1, 1);
	progress_note(NULL, "verifying");
	c.n = 0;
	progress_note(&h, "verifying");
	CHECK(c.n == 1 && c.last == 0);
	c.n = 0;
	if (!pthread_create(&t, NULL, step_elsewhere, &h)) {
		pthread_join(t, NULL);
		CHECK(c.n == 0); /* another thread never reports */
	}
}

int main(void)
{
	test_threshold_and_rate();
	test_phases();
	test_passes();
	test_format();
	test_off();
	test_terminal();
	test_hook();
	return CHECK_RESULT();
}
