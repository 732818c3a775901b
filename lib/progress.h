/*
 * progress.h - how far a long step got, for people waiting on it: the hook engines, the
 * verifier and the metrics call from their main loops, and the reporter that turns those calls
 * into a line on stderr (sarnue route, check and gen) or a log line (the plugin).
 *
 * A short run shows nothing: a phase must have lasted `after` seconds (2 s) before its first
 * line, and lines come at most every `every` seconds.  The reporter keeps no global state and
 * reads its clock through the configuration, so tests drive it with a fake one.
 */
#ifndef SARNUE_PROGRESS_H
#define SARNUE_PROGRESS_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

/* done of total units of phase are finished; total 0: a phase without a count. */
typedef void progress_fn(void *ctx, const char *phase, uint64_t done, uint64_t total);

/*
 * What an engine is handed to report through.  Engines may run helper threads on the same
 * options (Nue's second candidate): only the thread that set the hook up reports, so the
 * receiver never needs a lock.
 */
struct progress_hook {
	progress_fn *fn;
	void *ctx;
	pthread_t owner;
};

/* fn(ctx, ...) for calls from the calling thread only. */
void progress_hook_init(struct progress_hook *h, progress_fn *fn, void *ctx);

/*
 * Calls h for item done of total at a coarse grain: when done crosses a whole percent, and at
 * the last item.  Cheap enough for every iteration of a destination loop.  h may be NULL.
 */
void progress_step(const struct progress_hook *h, const char *phase, uint64_t done, uint64_t total);

/* A phase begins whose items are not counted (total 0); from h's owner only.  h may be NULL. */
void progress_note(const struct progress_hook *h, const char *phase);

enum progress_style {
	PROGRESS_OFF,
	PROGRESS_TERMINAL, /* one line rewritten in place ("\r"), a final line per long phase */
	PROGRESS_LINES,	   /* plain lines, for logs and --verbose */
};

struct progress_config {
	const char *prefix; /* "sarnue route", or "sar-nue" for the plugin's log */
	enum progress_style style;
	FILE *out; /* where lines go without a sink */
	/* PROGRESS_LINES: each line (without newline) goes here instead of out, when set */
	void (*sink)(void *ctx, const char *line);
	void *sink_ctx;
	double after; /* seconds a phase lasts before its first line */
	double every; /* seconds between two lines of a phase */
	/* seconds on a monotonic clock; NULL: CLOCK_MONOTONIC */
	double (*clock)(void *ctx);
	void *clock_ctx;
};

struct progress {
	struct progress_config c;
	char phase[64];
	double phase_start, pass_start, last_shown;
	uint64_t last_done;
	unsigned pass; /* the count started again from below (Nue's candidates): 2, 3, ... */
	int open;      /* a terminal line without its newline */
	int active;    /* a phase is running */
};

void progress_init(struct progress *p, const struct progress_config *c);

/* Ends the current phase (its final line when it lasted `after` seconds), starts another. */
void progress_phase(struct progress *p, const char *phase);

/* Where phase stands; a new phase name starts that phase.  ctx is a struct progress. */
void progress_update(void *ctx, const char *phase, uint64_t done, uint64_t total);

/* Ends the current phase; nothing stays open on the terminal. */
void progress_end(struct progress *p);

/* Blanks an open terminal line before other output; the next update draws it again. */
void progress_clear(struct progress *p);

/*
 * The text of one update: "PREFIX: PHASE: 42% of 40000, 12.1 s, about 17 s left" (the estimate
 * once something is done), for elapsed seconds of the phase and of its current pass.
 */
void progress_format(char *buf, size_t len, const char *prefix, const char *phase, unsigned pass,
		     uint64_t done, uint64_t total, double elapsed, double pass_elapsed);

#endif
