/*
 * progress.c - the progress hook of the engines and the reporter of long steps (progress.h).
 * The estimate assumes the rest of a pass goes as fast as what is done of it: destination loops
 * are even enough for that, and the words say "about".
 */
#include "lib/progress.h"
#include "lib/clock.h"

#include <string.h>

void progress_hook_init(struct progress_hook *h, progress_fn *fn, void *ctx)
{
	h->fn = fn;
	h->ctx = ctx;
	h->owner = pthread_self();
}

void progress_step(const struct progress_hook *h, const char *phase, uint64_t done, uint64_t total)
{
	if (!h || !h->fn || !total || done > total)
		return;
	/* Only when a whole percent is crossed: two divisions, no clock, no call. */
	if (done != total && (done == 0 || done * 100 / total == (done - 1) * 100 / total))
		return;
	if (!pthread_equal(pthread_self(), h->owner))
		return;
	h->fn(h->ctx, phase, done, total);
}

void progress_note(const struct progress_hook *h, const char *phase)
{
	if (h && h->fn && pthread_equal(pthread_self(), h->owner))
		h->fn(h->ctx, phase, 0, 0);
}

static double monotonic_seconds(void *ctx)
{
	(void)ctx;
	return sn_now();
}

static double now(const struct progress *p)
{
	return p->c.clock(p->c.clock_ctx);
}

void progress_init(struct progress *p, const struct progress_config *c)
{
	memset(p, 0, sizeof(*p));
	p->c = *c;
	if (!p->c.clock)
		p->c.clock = monotonic_seconds;
	if (!p->c.out)
		p->c.out = stderr;
	/* The first line of a run waits only for `after`. */
	p->last_shown = -1e300;
}

/* The estimate in words: seconds, minutes from 100 s on. */
static void format_left(char *buf, size_t len, double left)
{
	if (left < 100)
		snprintf(buf, len, ", about %.0f s left", left);
	else
		snprintf(buf, len, ", about %.0f min left", left / 60);
}

void progress_format(char *buf, size_t len, const char *prefix, const char *phase, unsigned pass,
		     uint64_t done, uint64_t total, double elapsed, double pass_elapsed)
{
	char passname[24] = "", left[48] = "";

	if (pass > 1)
		snprintf(passname, sizeof(passname), ", pass %u", pass);
	if (!total) {
		snprintf(buf, len, "%s: %s%s: %.1f s", prefix, phase, passname, elapsed);
		return;
	}
	if (done > total)
		done = total;
	if (done && done < total && pass_elapsed > 0)
		format_left(left, sizeof(left),
			    pass_elapsed * (double)(total - done) / (double)done);
	snprintf(buf, len, "%s: %s%s: %u%% of %llu, %.1f s%s", prefix, phase, passname,
		 (unsigned)(done * 100 / total), (unsigned long long)total, elapsed, left);
}

/* One line; final ones end the terminal line, the others are rewritten by the next. */
static void emit(struct progress *p, const char *line, int final)
{
	if (p->c.style == PROGRESS_LINES) {
		if (p->c.sink)
			p->c.sink(p->c.sink_ctx, line);
		else
			fprintf(p->c.out, "%s\n", line);
		return;
	}
	fprintf(p->c.out, "\r%s\033[K%s", line, final ? "\n" : "");
	fflush(p->c.out);
	p->open = !final;
}

void progress_clear(struct progress *p)
{
	if (!p->open)
		return;
	fputs("\r\033[K", p->c.out);
	fflush(p->c.out);
	p->open = 0;
}

/* A phase that lasted long gets its time said once it is over; a short one leaves nothing. */
static void end_phase(struct progress *p, double t)
{
	char line[256];

	if (!p->active)
		return;
	p->active = 0;
	if (t - p->phase_start >= p->c.after) {
		snprintf(line, sizeof(line), "%s: %s: done in %.1f s", p->c.prefix, p->phase,
			 t - p->phase_start);
		emit(p, line, 1);
		return;
	}
	progress_clear(p);
}

static void start_phase(struct progress *p, const char *phase, double t)
{
	end_phase(p, t);
	snprintf(p->phase, sizeof(p->phase), "%s", phase);
	p->phase_start = p->pass_start = t;
	p->last_done = 0;
	p->pass = 1;
	p->active = 1;
}

void progress_phase(struct progress *p, const char *phase)
{
	if (p->c.style == PROGRESS_OFF)
		return;
	start_phase(p, phase, now(p));
}

void progress_update(void *ctx, const char *phase, uint64_t done, uint64_t total)
{
	struct progress *p = ctx;
	char line[256];
	double t;

	if (p->c.style == PROGRESS_OFF)
		return;
	t = now(p);
	if (!p->active || strncmp(p->phase, phase, sizeof(p->phase) - 1))
		start_phase(p, phase, t);
	/* Counting again from below: another pass over the same items. */
	if (done < p->last_done) {
		p->pass++;
		p->pass_start = t;
	}
	p->last_done = done;
	if (t - p->phase_start < p->c.after || t - p->last_shown < p->c.every)
		return;
	progress_format(line, sizeof(line), p->c.prefix, p->phase, p->pass, done, total,
			t - p->phase_start, t - p->pass_start);
	emit(p, line, 0);
	p->last_shown = t;
}

void progress_end(struct progress *p)
{
	if (p->c.style == PROGRESS_OFF)
		return;
	end_phase(p, now(p));
}
