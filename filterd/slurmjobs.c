/*
 * slurmjobs.c - parsers for squeue's JSON and fixed-format text output (see slurmjobs.h).
 *
 * JSON layouts: Slurm 22.05 gives "job_state": "RUNNING" and "time_limit": minutes (4294967295
 * or 4294967294 for none); 23.02 and later give "job_state": ["RUNNING"] and "time_limit":
 * {"set": true, "infinite": false, "number": 60}.  Both are accepted; members not needed are
 * skipped (and still syntax-checked).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "filterd/slurmjobs.h"
#include "lib/arena.h"

void slurm_jobs_init(struct slurm_jobs *s)
{
	memset(s, 0, sizeof(*s));
}

void slurm_jobs_free(struct slurm_jobs *s)
{
	free(s->strings);
	free(s->v);
	slurm_jobs_init(s);
}

static int put_string(struct slurm_jobs *s, const char *str, size_t n, uint32_t *off)
{
	return fab_strings_put(&s->strings, &s->len, &s->cap, str, n, off);
}

/* A new job with every string empty. */
static struct slurm_job *add_job(struct slurm_jobs *s)
{
	struct slurm_job *job;
	uint32_t empty;

	if (fab_grow((void **)&s->v, &s->ncap, s->n + 1, sizeof(*s->v), 64))
		return NULL;
	if (put_string(s, "", 0, &empty))
		return NULL;
	job = &s->v[s->n++];
	job->id = job->partition = job->nodes = empty;
	job->time_limit = SLURM_TIME_UNLIMITED;
	job->running = 0;
	return job;
}

static void reset(struct slurm_jobs *s)
{
	s->len = 0;
	s->n = 0;
}

/* ------------------------------------------------------------------ time notation */

/* Up to three ':'-separated numbers at s; count in *n. */
static int clock_fields(const char *s, size_t len, uint32_t *f, int *n)
{
	size_t i = 0;

	*n = 0;
	for (;;) {
		size_t start = i;
		uint32_t v = 0;

		while (i < len && s[i] >= '0' && s[i] <= '9') {
			if (v > 100000000)
				return -1;
			v = v * 10 + (uint32_t)(s[i++] - '0');
		}
		if (i == start || *n == 3)
			return -1;
		f[(*n)++] = v;
		if (i == len)
			return 0;
		if (s[i++] != ':')
			return -1;
	}
}

int slurm_parse_time(const char *s, size_t len, uint32_t *minutes)
{
	const char *dash = memchr(s, '-', len);
	uint32_t f[3], days = 0;
	uint64_t secs;
	int n;

	if ((len == 9 && !memcmp(s, "UNLIMITED", 9)) || (len == 7 && !memcmp(s, "NOT_SET", 7))) {
		*minutes = SLURM_TIME_UNLIMITED;
		return 0;
	}
	if (dash) {
		uint32_t d[3];

		if (clock_fields(s, (size_t)(dash - s), d, &n) || n != 1)
			return -1;
		days = d[0];
		len -= (size_t)(dash - s) + 1;
		s = dash + 1;
	}
	if (clock_fields(s, len, f, &n))
		return -1;
	if (dash) /* D-HH, D-HH:MM, D-HH:MM:SS */
		secs = (uint64_t)f[0] * 3600 + (n > 1 ? f[1] * 60ull : 0) + (n > 2 ? f[2] : 0);
	else if (n == 1) /* MM */
		secs = (uint64_t)f[0] * 60;
	else if (n == 2) /* MM:SS */
		secs = (uint64_t)f[0] * 60 + f[1];
	else /* HH:MM:SS */
		secs = (uint64_t)f[0] * 3600 + (uint64_t)f[1] * 60 + f[2];
	secs += (uint64_t)days * 86400;
	if ((secs + 59) / 60 >= SLURM_TIME_UNLIMITED)
		return -1;
	*minutes = (uint32_t)((secs + 59) / 60);
	return 0;
}

/* ------------------------------------------------------------------ JSON */

struct json_ctx {
	struct json j;
	struct json_buf key, val;
	struct slurm_jobs *s;
	char label[96]; /* the job being read, for errors: "job 7" or "job #3 of the list" */
};

/*
 * Fails naming the job: Slurm sets nodes and partitions, never users, so a value of the wrong
 * kind means the output is not what squeue writes, and the whole poll is refused.
 */
static int job_fail(struct json_ctx *c, const char *member, const char *problem)
{
	char reason[256];

	snprintf(reason, sizeof(reason), "%s: \"%s\" %s", c->label, member, problem);
	return json_fail(&c->j, reason);
}

/* Members are matched with their length: a key with a NUL inside ("nodes\u0000x") is another. */
static int key_is(const struct json_ctx *c, const char *name)
{
	return c->key.len == strlen(name) && !memcmp(c->key.s, name, c->key.len);
}

/*
 * A string without NUL into c->val.  The rest of the daemon sees C strings: a NUL would cut
 * "host3\u0000,host5" to host3 and make a two-leaf job look single-switch.
 */
static int read_text(struct json_ctx *c, const char *member)
{
	enum json_type t = json_peek(&c->j);

	if (t != JSON_STRING && t != JSON_BAD)
		return job_fail(c, member,
				t == JSON_NUMBER ? "is a number, expected a string"
				: t == JSON_NULL ? "is null, expected a string"
						 : "is not a string");
	if (json_string(&c->j, &c->val))
		return -1;
	if (memchr(c->val.s, '\0', c->val.len))
		return job_fail(c, member, "contains a NUL character");
	return 0;
}

static int store(struct json_ctx *c, uint32_t *off)
{
	return put_string(c->s, c->val.s, c->val.len, off) ? json_fail(&c->j, "out of memory") : 0;
}

/* "job_id": a whole number (as Slurm writes it) or a string; names the job from then on. */
static int read_id(struct json_ctx *c, uint32_t *off)
{
	char num[32];
	double v;
	int n;

	if (json_peek(&c->j) != JSON_NUMBER) {
		if (read_text(c, "job_id"))
			return -1;
		if (!c->val.len)
			return job_fail(c, "job_id", "is empty");
		snprintf(c->label, sizeof(c->label), "job %.80s", c->val.s);
		return store(c, off);
	}
	if (json_number(&c->j, &v))
		return -1;
	/* Below 2^53 every whole double is exact, and converting it is defined. */
	if (!(v >= 0 && v < 9007199254740992.0) || v != (double)(uint64_t)v)
		return job_fail(c, "job_id", "is not a whole number");
	n = snprintf(num, sizeof(num), "%llu", (unsigned long long)v);
	snprintf(c->label, sizeof(c->label), "job %s", num);
	return put_string(c->s, num, (size_t)n, off) ? json_fail(&c->j, "out of memory") : 0;
}

/* "partition" or "nodes": a string, or null (*is_null set) as for a job not yet placed. */
static int read_optional(struct json_ctx *c, const char *member, uint32_t *off, int *is_null)
{
	*is_null = json_peek(&c->j) == JSON_NULL;
	if (*is_null)
		return json_null(&c->j);
	if (read_text(c, member))
		return -1;
	return store(c, off);
}

/* One state word; "RUNNING" sets *running. */
static int read_state_word(struct json_ctx *c, int *running)
{
	if (read_text(c, "job_state"))
		return -1;
	if (!strcmp(c->val.s, "RUNNING"))
		*running = 1;
	return 0;
}

/* "job_state": "RUNNING" or ["RUNNING", "COMPLETING"]. */
static int read_state(struct json_ctx *c, int *running)
{
	enum json_type t = json_peek(&c->j);
	unsigned i = 0;
	int more;

	*running = 0;
	if (t == JSON_STRING)
		return read_state_word(c, running);
	if (t != JSON_ARRAY && t != JSON_BAD)
		return job_fail(c, "job_state", "is neither a string nor an array of strings");
	if (json_array_begin(&c->j))
		return -1;
	while ((more = json_array_next(&c->j, &i)) > 0)
		if (read_state_word(c, running))
			return -1;
	return more;
}

static int minutes_of(struct json_ctx *c, double v, uint32_t *out)
{
	/* Slurm's INFINITE and NO_VAL, and beyond: converting those to an integer is undefined. */
	if (v >= 4294967294.0) {
		*out = SLURM_TIME_UNLIMITED;
		return 0;
	}
	if (!(v >= 0) || v != (double)(uint32_t)v)
		return json_fail(&c->j, "time_limit is not a whole number of minutes");
	*out = (uint32_t)v;
	return 0;
}

/* "time_limit": N, null, or {"set": B, "infinite": B, "number": N}. */
static int read_time_limit(struct json_ctx *c, uint32_t *out)
{
	int set = 1, infinite = 0, more;
	double number = 0;
	unsigned i = 0;

	switch (json_peek(&c->j)) {
	case JSON_NUMBER:
		if (json_number(&c->j, &number))
			return -1;
		return minutes_of(c, number, out);
	case JSON_NULL:
		*out = SLURM_TIME_UNLIMITED;
		return json_null(&c->j);
	default:
		break;
	}
	if (json_object_begin(&c->j))
		return -1;
	while ((more = json_object_next(&c->j, &i, &c->key)) > 0) {
		int r;

		if (key_is(c, "set"))
			r = json_bool(&c->j, &set);
		else if (key_is(c, "infinite"))
			r = json_bool(&c->j, &infinite);
		else if (key_is(c, "number"))
			r = json_number(&c->j, &number);
		else
			r = json_skip(&c->j);
		if (r)
			return -1;
	}
	if (more < 0)
		return -1;
	if (!set || infinite) {
		*out = SLURM_TIME_UNLIMITED;
		return 0;
	}
	return minutes_of(c, number, out);
}

/* One member of a job object into the last job of c->s. */
static int read_member(struct json_ctx *c, int *have_id, int *have_nodes)
{
	/* add_job() and store() may move c->s->v: index, not pointer. */
	struct slurm_job *job = &c->s->v[c->s->n - 1];
	int is_null;

	if (key_is(c, "job_id")) {
		*have_id = 1;
		return read_id(c, &job->id);
	}
	if (key_is(c, "job_state"))
		return read_state(c, &job->running);
	if (key_is(c, "partition"))
		return read_optional(c, "partition", &job->partition, &is_null);
	if (key_is(c, "nodes")) {
		if (read_optional(c, "nodes", &job->nodes, &is_null))
			return -1;
		*have_nodes = !is_null;
		return 0;
	}
	if (key_is(c, "time_limit"))
		return read_time_limit(c, &job->time_limit);
	return json_skip(&c->j);
}

static int read_job(struct json_ctx *c, unsigned index)
{
	unsigned i = 0;
	int more, have_id = 0, have_nodes = 0;

	if (!add_job(c->s))
		return json_fail(&c->j, "out of memory");
	snprintf(c->label, sizeof(c->label), "job #%u of the list", index);
	if (json_object_begin(&c->j))
		return -1;
	while ((more = json_object_next(&c->j, &i, &c->key)) > 0)
		if (read_member(c, &have_id, &have_nodes))
			return -1;
	if (more < 0)
		return -1;
	if (!have_id)
		return json_fail(&c->j, "job without \"job_id\"");
	/* A running job always has nodes: without them it would pass as "no nodes" unseen. */
	if (c->s->v[c->s->n - 1].running && !have_nodes)
		return job_fail(c, "nodes", "is missing or null, but the job is RUNNING");
	return 0;
}

static int read_jobs(struct json_ctx *c)
{
	unsigned i = 0;
	int more;

	if (json_array_begin(&c->j))
		return -1;
	while ((more = json_array_next(&c->j, &i)) > 0)
		if (read_job(c, i))
			return -1;
	return more;
}

int slurm_jobs_parse_json(struct slurm_jobs *s, const char *text, size_t len, const char *name,
			  struct fab_error *err)
{
	struct json_ctx c = { .s = s };
	unsigned i = 0;
	int more, have_jobs = 0, ret = -1;

	reset(s);
	json_init(&c.j, text, len, name, err);
	if (json_object_begin(&c.j))
		goto out;
	while ((more = json_object_next(&c.j, &i, &c.key)) > 0) {
		if (key_is(&c, "jobs")) {
			if (read_jobs(&c))
				goto out;
			have_jobs = 1;
		} else if (json_skip(&c.j)) {
			goto out;
		}
	}
	if (more < 0 || json_end(&c.j))
		goto out;
	if (!have_jobs) {
		fab_error_set(err, "%s: no \"jobs\" member in the JSON object", name);
		goto out;
	}
	ret = 0;
out:
	if (ret)
		reset(s);
	json_buf_free(&c.key);
	json_buf_free(&c.val);
	return ret;
}

/* ------------------------------------------------------------------ text */

/* Splits line into at most max blank-separated words; returns their count. */
static int split_words(const char *line, size_t len, const char **w, size_t *wl, int max)
{
	size_t i = 0;
	int n = 0;

	while (i < len) {
		while (i < len && (line[i] == ' ' || line[i] == '\t'))
			i++;
		if (i == len)
			break;
		if (n == max)
			return max + 1;
		w[n] = line + i;
		while (i < len && line[i] != ' ' && line[i] != '\t')
			i++;
		wl[n] = (size_t)(line + i - w[n]);
		n++;
	}
	return n;
}

static int text_line(struct slurm_jobs *s, const char *line, size_t len, const char *name,
		     unsigned lineno, struct fab_error *err)
{
	const char *w[5];
	size_t wl[5];
	struct slurm_job *job;
	int n = split_words(line, len, w, wl, 5);
	uint32_t off;

	if (n == 0)
		return 0;
	/* A pending job has no node list: four words. */
	if (n < 4 || n > 5) {
		fab_error_set(
			err,
			"%s:%u: expected \"%s\" (job, state, partition, time limit, nodes), got %d words",
			name, lineno, SLURM_SQUEUE_FORMAT, n > 5 ? 6 : n);
		return -1;
	}
	job = add_job(s);
	if (!job)
		goto oom;
	if (put_string(s, w[0], wl[0], &off))
		goto oom;
	s->v[s->n - 1].id = off;
	s->v[s->n - 1].running = wl[1] == 7 && !memcmp(w[1], "RUNNING", 7);
	if (put_string(s, w[2], wl[2], &off))
		goto oom;
	s->v[s->n - 1].partition = off;
	if (slurm_parse_time(w[3], wl[3], &s->v[s->n - 1].time_limit)) {
		fab_error_set(err, "%s:%u: column %zu: bad time limit '%.*s'", name, lineno,
			      (size_t)(w[3] - line) + 1, (int)(wl[3] > 40 ? 40 : wl[3]), w[3]);
		return -1;
	}
	if (n == 5) {
		if (put_string(s, w[4], wl[4], &off))
			goto oom;
		s->v[s->n - 1].nodes = off;
	}
	return 0;
oom:
	fab_error_set(err, "%s: out of memory", name);
	return -1;
}

int slurm_jobs_parse_text(struct slurm_jobs *s, const char *text, size_t len, const char *name,
			  struct fab_error *err)
{
	size_t pos = 0;
	unsigned lineno = 0;

	reset(s);
	if (memchr(text, '\0', len)) {
		fab_error_set(err, "%s: binary data (NUL byte) in squeue output", name);
		return -1;
	}
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;

		lineno++;
		if (text_line(s, text + pos, end - pos, name, lineno, err)) {
			reset(s);
			return -1;
		}
		pos = end + 1;
	}
	return 0;
}
