/*
 * faults.c - seeded faults on a built fabric: --remove-switch-id, --remove-switches and
 * --remove-links, in that order, none of which may split the switch graph (a Tarjan pass finds
 * the articulation switches and bridge links before every removal), and the report of what was
 * removed on standard error.
 */
#include "cli/gen/gen_private.h"
#include "lib/arena.h"
#include "lib/assert.h"
#include "lib/numbers.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct cut {
	uint32_t *disc;
	uint32_t *low;
	uint32_t *stack;
	uint16_t *next;	 /* next port index to explore */
	uint16_t *entry; /* port index we were reached through */
	uint16_t *up;	 /* parent's port index towards us */
	uint8_t *art;	 /* articulation point */
	uint8_t *bridge; /* per port slot */
};

static void cut_free(struct cut *c)
{
	free(c->disc);
	free(c->low);
	free(c->stack);
	free(c->next);
	free(c->entry);
	free(c->up);
	free(c->art);
	free(c->bridge);
}

static int cut_alloc(struct cut *c, const struct gen_fabric *f)
{
	size_t n = f->nsw ? f->nsw : 1;

	memset(c, 0, sizeof(*c));
	c->disc = malloc(n * sizeof(*c->disc));
	c->low = malloc(n * sizeof(*c->low));
	c->stack = malloc(n * sizeof(*c->stack));
	c->next = malloc(n * sizeof(*c->next));
	c->entry = malloc(n * sizeof(*c->entry));
	c->up = malloc(n * sizeof(*c->up));
	c->art = malloc(n);
	c->bridge = malloc(f->base[f->nsw] + 1);
	if (!c->disc || !c->low || !c->stack || !c->next || !c->entry || !c->up || !c->art ||
	    !c->bridge)
		return gen_nomem();
	return GEN_OK;
}

/*
 * Iterative Tarjan over the live switch graph: marks articulation switches
 * and bridge links so faults never split the fabric.  Parallel links are
 * told apart by port, so a doubled link is correctly not a bridge.
 * Returns the number of connected components.
 */
static uint32_t cut_analyze(const struct gen_fabric *f, struct cut *c)
{
	uint32_t t = 0, comps = 0, root;

	memset(c->disc, 0, f->nsw * sizeof(*c->disc));
	memset(c->art, 0, f->nsw);
	memset(c->bridge, 0, f->base[f->nsw]);

	for (root = 0; root < f->nsw; root++) {
		uint32_t sp = 0, kids = 0;

		if (f->dead[root] || c->disc[root])
			continue;
		comps++;
		c->disc[root] = c->low[root] = ++t;
		c->next[root] = 0;
		c->entry[root] = NO_PORT;
		c->stack[sp++] = root;
		while (sp) {
			uint32_t v = c->stack[sp - 1], u;

			if (c->next[v] < sw_nports(f, v)) {
				uint16_t p = c->next[v]++;
				const struct peer *pe = &f->peer[f->base[v] + p];
				uint32_t w = pe->node;

				if (w >= f->nsw || p == c->entry[v])
					continue;
				if (!c->disc[w]) {
					/* each switch is pushed once, so the stack holds them all
					 */
					sn_assert(sp < f->nsw);
					c->disc[w] = c->low[w] = ++t;
					c->next[w] = 0;
					c->entry[w] = pe->port - 1;
					c->up[w] = p;
					c->stack[sp++] = w;
					if (v == root)
						kids++;
				} else if (c->disc[w] < c->low[v]) {
					c->low[v] = c->disc[w];
				}
				continue;
			}
			if (--sp == 0)
				break;
			u = c->stack[sp - 1];
			if (c->low[v] < c->low[u])
				c->low[u] = c->low[v];
			if (c->low[v] > c->disc[u]) {
				c->bridge[f->base[u] + c->up[v]] = 1;
				c->bridge[f->base[v] + c->entry[v]] = 1;
			}
			if (u != root && c->low[v] >= c->disc[u])
				c->art[u] = 1;
		}
		if (kids > 1)
			c->art[root] = 1;
	}
	return comps;
}

static int log_push(struct rm_log *log, const struct rm_event *ev)
{
	if (fab_grow((void **)&log->ev, &log->cap, log->n + 1, sizeof(*log->ev), 64))
		return gen_nomem();
	log->ev[log->n++] = *ev;
	return GEN_OK;
}

static int remove_switch(struct gen_fabric *f, uint32_t s, struct rm_log *log)
{
	struct rm_event ev = { .is_switch = true, .a = s };
	uint32_t p;

	for (p = 0; p < sw_nports(f, s); p++) {
		struct peer *pe = &f->peer[f->base[s] + p];

		if (pe->node == NO_NODE)
			continue;
		if (pe->node < f->nsw) {
			struct peer *back = &f->peer[f->base[pe->node] + pe->port - 1];

			sn_assert(back->node == s && back->port == p + 1);
			back->node = NO_NODE;
		} else {
			ev.hosts++;
		}
		pe->node = NO_NODE;
	}
	f->dead[s] = 1;
	return log_push(log, &ev);
}

static int remove_link(struct gen_fabric *f, uint32_t s, uint32_t p, struct rm_log *log)
{
	struct peer *pe = &f->peer[f->base[s] + p];
	struct rm_event ev = {
		.a = s,
		.pa = (uint16_t)(p + 1),
		.b = pe->node,
		.pb = pe->port,
	};

	sn_assert(pe->node < f->nsw);
	sn_assert(f->peer[f->base[pe->node] + pe->port - 1].node == s &&
		  f->peer[f->base[pe->node] + pe->port - 1].port == p + 1);
	f->peer[f->base[pe->node] + pe->port - 1].node = NO_NODE;
	pe->node = NO_NODE;
	return log_push(log, &ev);
}

static int parse_switch_id(const struct gen_fabric *f, const char *id, uint32_t *s)
{
	uint64_t v;

	if (strncmp(id, "S-", 2) || num_parse_u64(id + 2, UINT64_MAX, &v))
		return gen_usage("--remove-switch-id %s: expected a switch id such as S-0005", id);
	if (v < 1 || v > f->nsw)
		return gen_usage(
			"--remove-switch-id %s: no such switch (switches are S-0001 to S-%04u)", id,
			f->nsw);
	*s = (uint32_t)(v - 1);
	return GEN_OK;
}

static int remove_named(struct gen_fabric *f, struct cut *c, const struct opts *o,
			struct rm_log *log)
{
	uint32_t i, s = 0;
	int rc;

	for (i = 0; i < o->n_rm_ids; i++) {
		const char *id = o->rm_ids[i];

		rc = parse_switch_id(f, id, &s);
		if (rc)
			return rc;
		if (f->dead[s])
			return gen_usage("--remove-switch-id %s: switch already removed", id);
		if (live_switches(f) == 1)
			return gen_usage("--remove-switch-id %s: it is the last switch", id);
		cut_analyze(f, c);
		if (c->art[s])
			return gen_usage(
				"--remove-switch-id %s: removing it (%s) would split the switch graph",
				id, f->desc[s]);
		rc = remove_switch(f, s, log);
		if (rc)
			return rc;
	}
	return GEN_OK;
}

static int remove_random_switches(struct gen_fabric *f, struct cut *c, const struct opts *o,
				  struct rm_log *log)
{
	uint64_t want = o->num[OPT_RM_SWITCHES], done;
	uint32_t *cand, n = 0, s, i;
	struct rng r;
	int rc = GEN_OK;

	if (!want)
		return GEN_OK;
	/* a connected graph always has a non-cut vertex, down to one switch */
	if (want >= live_switches(f))
		return gen_usage("%s %s: the fabric has only %u switches left and one must remain",
				 o->name[OPT_RM_SWITCHES], o->val[OPT_RM_SWITCHES],
				 live_switches(f));
	cand = malloc(f->nsw * sizeof(*cand));
	if (!cand)
		return gen_nomem();
	for (s = 0; s < f->nsw; s++)
		if (!f->dead[s])
			cand[n++] = s;
	rng_seed(&r, o->seed, STREAM_RM_SWITCHES);
	shuffle_u32(&r, cand, n);

	for (done = 0; done < want; done++) {
		cut_analyze(f, c);
		for (i = 0; i < n; i++)
			if (!f->dead[cand[i]] && !c->art[cand[i]])
				break;
		if (i == n) {
			rc = gen_usage(
				"%s %s: only %" PRIu64
				" switches can be removed without splitting the switch graph",
				o->name[OPT_RM_SWITCHES], o->val[OPT_RM_SWITCHES], done);
			break;
		}
		rc = remove_switch(f, cand[i], log);
		if (rc)
			break;
	}
	free(cand);
	return rc;
}

struct link_ref {
	uint32_t s;
	uint32_t p; /* port index, 0-based */
};

static int remove_random_links(struct gen_fabric *f, struct cut *c, const struct opts *o,
			       struct rm_log *log)
{
	uint64_t total = live_links(f), want, spare, done, i, n = 0;
	struct link_ref *cand;
	uint32_t s, p, comps;
	struct rng r;
	int rc = GEN_OK;

	if (!o->set[OPT_RM_LINKS])
		return GEN_OK;
	want = o->rm_pct ? (uint64_t)(o->rm_links_pct * (double)total / 100.0 + 0.5) : o->rm_links;
	if (!want)
		return GEN_OK;
	/* links beyond a spanning forest are exactly the removable ones */
	comps = cut_analyze(f, c);
	spare = total - (live_switches(f) - comps);
	if (want > spare)
		return gen_usage(
			"%s %s: only %" PRIu64 " of the %" PRIu64
			" switch links can be removed without splitting the switch graph (asked for %" PRIu64
			")",
			o->name[OPT_RM_LINKS], o->val[OPT_RM_LINKS], spare, total, want);

	cand = malloc((total ? total : 1) * sizeof(*cand));
	if (!cand)
		return gen_nomem();
	for (s = 0; s < f->nsw; s++) {
		for (p = 0; p < sw_nports(f, s); p++) {
			uint32_t w = f->peer[f->base[s] + p].node;

			if (w < f->nsw && w > s) {
				cand[n].s = s;
				cand[n].p = p;
				n++;
			}
		}
	}
	rng_seed(&r, o->seed, STREAM_RM_LINKS);
	for (i = n; i > 1; i--) {
		uint64_t j = rng_below(&r, i);
		struct link_ref t = cand[i - 1];

		cand[i - 1] = cand[j];
		cand[j] = t;
	}

	for (done = 0; done < want; done++) {
		if (done)
			cut_analyze(f, c);
		for (i = 0; i < n; i++) {
			uint32_t slot = f->base[cand[i].s] + cand[i].p;

			if (f->peer[slot].node != NO_NODE && !c->bridge[slot])
				break;
		}
		if (i == n) {
			rc = gen_fail("internal error: no removable link left after %" PRIu64,
				      done);
			break;
		}
		rc = remove_link(f, cand[i].s, cand[i].p, log);
		if (rc)
			break;
	}
	free(cand);
	return rc;
}

int apply_faults(struct gen_fabric *f, const struct opts *o, struct rm_log *log)
{
	struct cut c;
	int rc;

	if (!o->n_rm_ids && !o->num[OPT_RM_SWITCHES] && !o->set[OPT_RM_LINKS])
		return GEN_OK;
	rc = cut_alloc(&c, f);
	if (!rc)
		rc = remove_named(f, &c, o, log);
	if (!rc)
		rc = remove_random_switches(f, &c, o, log);
	if (!rc)
		rc = remove_random_links(f, &c, o, log);
	cut_free(&c);
	return rc;
}

void gen_report(const struct gen_fabric *f, const struct rm_log *log, uint32_t nhosts)
{
	size_t i;

	for (i = 0; i < log->n; i++) {
		const struct rm_event *ev = &log->ev[i];

		if (ev->is_switch)
			fprintf(stderr, "gen: removed switch S-%04u \"%s\" (%u hosts)\n", ev->a + 1,
				f->desc[ev->a], ev->hosts);
		else
			fprintf(stderr, "gen: removed link S-%04u[%u] <-> S-%04u[%u]\n", ev->a + 1,
				ev->pa, ev->b + 1, ev->pb);
	}
	fprintf(stderr, "gen: %u switches, %u hosts, %" PRIu64 " switch links\n", live_switches(f),
		nhosts, live_links(f));
}
