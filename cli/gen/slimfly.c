/*
 * slimfly.c - Slim Fly (Besta and Hoefler): the McKay-Miller-Siran graph of diameter 2 over the
 * field GF(q), 2q^2 switches (set, a, b), each of network radix (3q - delta) / 2.
 *
 * Port order: hosts on ports 1..T; then the local links within a column, r (--links-per-pair)
 * ports for each generator of the set's generator list in order (T + i*r + 1..); then the
 * global links between the sets, r ports per q in order: on (0, x, y) those towards (1, m, .)
 * for m = 0..q-1, on (1, m, c) those towards (0, x, .) for x = 0..q-1.
 * mms_graph() hands the same graph, as adjacency lists in that port order, to fishnet.c, whose
 * subnets are copies of it.
 */
#include "cli/gen/gen_private.h"
#include "lib/assert.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* GF(q) for Slim Fly: q = p^n below 2^20 switches has n < 20. */
#define GF_MAX_DEGREE 20

/* q = p^n with p prime; false if q is not a prime power. */
static bool prime_power(uint64_t q, uint32_t *p, uint32_t *n)
{
	uint64_t d;

	if (q < 2)
		return false;
	for (d = 2; d * d <= q && q % d; d++)
		;
	if (q % d)
		d = q;
	*p = (uint32_t)d;
	for (*n = 0; q % d == 0; q /= d)
		(*n)++;
	return q == 1;
}

int validate_slimfly(const struct opts *o)
{
	uint64_t q = o->num[OPT_Q];
	uint32_t p, n;

	if (!prime_power(q, &p, &n))
		return gen_usage("%s %s: not a prime power; the MMS construction needs a field "
				 "GF(q), q = 3, 4, 5, 7, 8, 9, 11, 13, 16, ...",
				 o->name[OPT_Q], o->val[OPT_Q]);
	if (q % 4 == 2)
		return gen_usage("%s %s: q = 4w + delta with w >= 1 and delta in {-1, 0, 1} "
				 "excludes q = 2; the smallest Slim Fly has q = 3",
				 o->name[OPT_Q], o->val[OPT_Q]);
	if (2 * q * q > GEN_MAX_SWITCHES)
		return gen_usage("%s %s: fabric too large (2q^2 switches, at most %lu)",
				 o->name[OPT_Q], o->val[OPT_Q], GEN_MAX_SWITCHES);
	return GEN_OK;
}

/*
 * GF(q) for q = p^n: an element is the number whose base-p digits are the
 * coefficients of a polynomial of degree < n; products go through the
 * logarithms to a primitive element xi, found as a root of the first
 * primitive polynomial, so the field is a pure function of q.
 */
struct gf {
	uint32_t q;
	uint32_t p;
	uint32_t n;
	uint32_t poly[GF_MAX_DEGREE]; /* x^n = -(poly[n-1] x^(n-1) + ... + poly[0]) */
	uint32_t *exp;		      /* exp[i] = xi^i, 0 <= i < q - 1 */
	uint32_t *log;		      /* log[a] for a != 0 */
};

static uint32_t gf_add(const struct gf *g, uint32_t a, uint32_t b)
{
	uint32_t r = 0, scale = 1, i;

	for (i = 0; i < g->n; i++, a /= g->p, b /= g->p, scale *= g->p)
		r += (a % g->p + b % g->p) % g->p * scale;
	return r;
}

static uint32_t gf_neg(const struct gf *g, uint32_t a)
{
	uint32_t r = 0, scale = 1, i;

	for (i = 0; i < g->n; i++, a /= g->p, scale *= g->p)
		r += (g->p - a % g->p) % g->p * scale;
	return r;
}

static uint32_t gf_mul(const struct gf *g, uint32_t a, uint32_t b)
{
	sn_assert(a < g->q && b < g->q);
	if (!a || !b)
		return 0;
	return g->exp[(g->log[a] + g->log[b]) % (g->q - 1)];
}

/* a * x modulo the field polynomial */
static uint32_t gf_times_x(const struct gf *g, uint32_t a)
{
	uint32_t d[GF_MAX_DEGREE + 1], top, r = 0, i;

	for (i = 0; i < g->n; i++, a /= g->p)
		d[i] = a % g->p;
	top = d[g->n - 1];
	for (i = g->n - 1; i > 0; i--)
		d[i] = d[i - 1];
	d[0] = 0;
	for (i = g->n; i-- > 0;)
		r = r * g->p + (d[i] + (g->p - g->poly[i]) * top) % g->p;
	return r;
}

/* x generates all q - 1 units modulo poly iff poly is primitive. */
static bool gf_try(struct gf *g, uint32_t code)
{
	uint32_t i, cur = 1;

	for (i = 0; i < g->n; i++, code /= g->p)
		g->poly[i] = code % g->p;
	for (i = 0; i + 1 < g->q; i++) {
		if (i && cur == 1)
			return false;
		g->exp[i] = cur;
		cur = gf_times_x(g, cur);
	}
	return cur == 1;
}

static void gf_free(struct gf *g)
{
	free(g->exp);
	free(g->log);
}

static int gf_init(struct gf *g, uint32_t q)
{
	uint32_t code, i;

	memset(g, 0, sizeof(*g));
	if (!prime_power(q, &g->p, &g->n) || g->n > GF_MAX_DEGREE)
		return gen_fail("internal error: GF(%u) is not a supported field", q);
	g->q = q;
	g->exp = malloc(q * sizeof(*g->exp));
	g->log = calloc(q, sizeof(*g->log));
	if (!g->exp || !g->log)
		return gen_nomem();
	for (code = 1; code < q; code++)
		if (gf_try(g, code))
			break;
	if (code == q)
		return gen_fail("internal error: no primitive polynomial for GF(%u)", q);
	for (i = 0; i + 1 < q; i++)
		g->log[g->exp[i]] = i;
	return GEN_OK;
}

/*
 * Exponents of xi in the generator sets X (set 0) and X' (set 1) of the
 * McKay-Miller-Siran graph for q = 4w + delta, as Hafner and Besta and
 * Hoefler give them.  Both sets are closed under negation.
 */
static uint32_t mms_exponent(uint32_t q, int delta, unsigned int set, uint32_t i)
{
	uint32_t w = (q + 1) / 4;

	if (delta != -1 || i < w)
		return (2 * i + set) % (q - 1);
	return (2 * w - 1 + set + 2 * (i - w)) % (q - 1);
}

static int mms_delta(uint64_t q)
{
	return q % 4 == 3 ? -1 : (int)(q % 4);
}

struct slimfly {
	struct gf g;
	uint32_t q;
	uint32_t half;	  /* |X| = |X'| = (q - delta) / 2 */
	uint32_t *gen[2]; /* X and X' */
	uint32_t *idx[2]; /* position of an element in X or X', or NO_NODE */
	uint64_t t;	  /* hosts per switch */
	uint64_t r;	  /* links per pair */
};

static void sf_free(struct slimfly *sf)
{
	unsigned int i;

	for (i = 0; i < 2; i++) {
		free(sf->gen[i]);
		free(sf->idx[i]);
	}
	gf_free(&sf->g);
}

static int sf_init(struct slimfly *sf, uint32_t q)
{
	int delta = mms_delta(q), rc;
	unsigned int set;
	uint32_t i;

	sf->q = q;
	sf->half = (uint32_t)((int)q - delta) / 2;
	rc = gf_init(&sf->g, q);
	if (rc)
		return rc;
	for (set = 0; set < 2; set++) {
		sf->gen[set] = malloc(sf->half * sizeof(*sf->gen[set]));
		sf->idx[set] = malloc(q * sizeof(*sf->idx[set]));
		if (!sf->gen[set] || !sf->idx[set])
			return gen_nomem();
		for (i = 0; i < q; i++)
			sf->idx[set][i] = NO_NODE;
		for (i = 0; i < sf->half; i++) {
			sf->gen[set][i] = sf->g.exp[mms_exponent(q, delta, set, i)];
			sf->idx[set][sf->gen[set][i]] = i;
		}
	}
	return GEN_OK;
}

/* (set, a, b) -> switch: set 0 holds (x, y), set 1 holds (m, c). */
static uint32_t sf_switch(const struct slimfly *sf, unsigned int set, uint32_t a, uint32_t b)
{
	sn_assert(set < 2 && a < sf->q && b < sf->q);
	return (set * sf->q + a) * sf->q + b;
}

/* (set, a, b) ~ (set, a, b') iff b - b' is in the set's generators. */
static void sf_link_local(struct gen_fabric *f, const struct slimfly *sf, unsigned int set)
{
	uint32_t a, b, i, j, b2;
	uint64_t k;

	for (a = 0; a < sf->q; a++) {
		for (b = 0; b < sf->q; b++) {
			for (i = 0; i < sf->half; i++) {
				b2 = gf_add(&sf->g, b, sf->gen[set][i]);
				j = sf->idx[set][gf_neg(&sf->g, sf->gen[set][i])];
				/* the generator sets are closed under negation */
				sn_assert(j < sf->half);
				/* each pair once: -g differs from g except in characteristic 2 */
				if (j < i || (j == i && b2 < b))
					continue;
				for (k = 0; k < sf->r; k++)
					link_sw(f, sf_switch(sf, set, a, b),
						sf->t + i * sf->r + k + 1,
						sf_switch(sf, set, a, b2),
						sf->t + j * sf->r + k + 1);
			}
		}
	}
}

/* (0, x, y) ~ (1, m, c) iff y = m x + c */
static void sf_link_global(struct gen_fabric *f, const struct slimfly *sf)
{
	uint64_t first = sf->t + (uint64_t)sf->half * sf->r + 1, k;
	uint32_t x, m, c, y;

	for (x = 0; x < sf->q; x++) {
		for (m = 0; m < sf->q; m++) {
			uint32_t mx = gf_mul(&sf->g, m, x);

			for (c = 0; c < sf->q; c++) {
				y = gf_add(&sf->g, mx, c);
				for (k = 0; k < sf->r; k++)
					link_sw(f, sf_switch(sf, 0, x, y), first + m * sf->r + k,
						sf_switch(sf, 1, m, c), first + x * sf->r + k);
			}
		}
	}
}

static uint64_t sf_radix(uint64_t q)
{
	return (3 * q - (uint64_t)mms_delta(q)) / 2;
}

int build_slimfly(struct gen_fabric *f, const struct opts *o)
{
	struct slimfly sf = { .q = (uint32_t)o->num[OPT_Q], .r = o->num[OPT_LPP] };
	uint64_t q = o->num[OPT_Q], nsw = 2 * q * q, k = sf_radix(q), s;
	int rc;

	sf.t = o->set[OPT_HPS] ? o->num[OPT_HPS] : ceil_div(k, 2);
	rc = gen_fabric_init(f, nsw, nsw * sf.t, o->num[OPT_RADIX]);
	if (rc)
		return rc;
	for (s = 0; s < nsw; s++) {
		sw_desc(f, (uint32_t)s, "slimfly %" PRIu64 ",%" PRIu64 ",%" PRIu64, s / (q * q),
			s / q % q, s % q);
		gen_fabric_need(f, (uint32_t)s, sf.t + k * sf.r);
	}
	rc = gen_fabric_ports(f);
	if (rc)
		return rc;

	rc = sf_init(&sf, (uint32_t)q);
	if (rc)
		goto out;
	attach_hosts(f, 0, f->nsw, (uint32_t)sf.t);
	sf_link_local(f, &sf, 0);
	sf_link_local(f, &sf, 1);
	sf_link_global(f, &sf);
out:
	sf_free(&sf);
	return rc;
}

/*
 * The McKay-Miller-Siran graph alone, for the Fishnet family: vertex s*q^2 + a*q + b is
 * (s, a, b) and its k = (3q - delta)/2 neighbours are listed at adj[v*k ..] in the port order
 * of build_slimfly() above, so a Fishnet subnet is wired like a Slim Fly with one link per pair.
 */
int mms_graph(uint32_t q, uint32_t **adj_out, uint32_t *n_out, uint32_t *k_out)
{
	struct slimfly sf = { .q = q };
	uint32_t n = 2 * q * q, k = (uint32_t)sf_radix(q), a, b, i, m, *adj;
	unsigned int set;
	int rc;

	adj = malloc((size_t)n * k * sizeof(*adj));
	if (!adj)
		return gen_nomem();
	rc = sf_init(&sf, q);
	if (rc)
		goto out;
	for (set = 0; set < 2; set++) {
		for (a = 0; a < q; a++) {
			for (b = 0; b < q; b++) {
				uint32_t *row = adj + (size_t)sf_switch(&sf, set, a, b) * k;

				for (i = 0; i < sf.half; i++)
					row[i] = sf_switch(&sf, set, a,
							   gf_add(&sf.g, b, sf.gen[set][i]));
				/* (0, x, y) ~ (1, m, y - m x); (1, m, c) ~ (0, x, m x + c) */
				for (m = 0; m < q; m++)
					row[sf.half + m] =
						set ? sf_switch(
							      &sf, 0, m,
							      gf_add(&sf.g, gf_mul(&sf.g, a, m), b))
						    : sf_switch(
							      &sf, 1, m,
							      gf_add(&sf.g, b,
								     gf_neg(&sf.g,
									    gf_mul(&sf.g, m, a))));
			}
		}
	}
	sn_assert(sf.half + q == k);
out:
	sf_free(&sf);
	if (rc) {
		free(adj);
		return rc;
	}
	*adj_out = adj;
	*n_out = n;
	*k_out = k;
	return GEN_OK;
}

bool gf_is_prime_power(uint64_t q)
{
	uint32_t p, n;

	return prime_power(q, &p, &n);
}

/*
 * Addition and multiplication tables of GF(q), q*q entries each, for oft.c's Latin squares;
 * the same field, element for element, as the Slim Fly's.
 */
int gf_tables(uint32_t q, uint32_t **add_out, uint32_t **mul_out)
{
	uint32_t *add, *mul, a, b;
	struct gf g;
	int rc;

	add = malloc((size_t)q * q * sizeof(*add));
	mul = malloc((size_t)q * q * sizeof(*mul));
	if (!add || !mul) {
		rc = gen_nomem();
		goto fail;
	}
	rc = gf_init(&g, q);
	if (rc) {
		gf_free(&g);
		goto fail;
	}
	for (a = 0; a < q; a++) {
		for (b = 0; b < q; b++) {
			add[(size_t)a * q + b] = gf_add(&g, a, b);
			mul[(size_t)a * q + b] = gf_mul(&g, a, b);
		}
	}
	gf_free(&g);
	*add_out = add;
	*mul_out = mul;
	return GEN_OK;
fail:
	free(add);
	free(mul);
	return rc;
}
