/*
 * build.c - the in-memory fabric that every family builder fills in, and the seeded PRNG.
 *
 * A builder first names every switch and says how many ports it needs, then gen_fabric_ports()
 * lays the ports out in one flat array and the builder wires them: link_sw() for a switch
 * link, attach_hosts()/attach_spread() for hosts, link_clique() for all-to-all groups.  Wiring
 * a port twice or outside its switch marks the fabric as in conflict, which gen.c reports as
 * an internal error; gen_fabric_check() then asserts that every link is listed on both ends.
 */
#include "cli/gen/gen_private.h"
#include "lib/assert.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* splitmix64 to seed, xoshiro256** to draw: small, fast and well mixed. */
static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void rng_seed(struct rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ (stream * 0xd1b54a32d192ed03ULL);
	int i;

	for (i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

static uint64_t rotl64(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t res = rotl64(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl64(s[3], 45);
	return res;
}

/* Uniform in [0, n); rejection avoids the modulo bias. */
uint64_t rng_below(struct rng *r, uint64_t n)
{
	uint64_t lim = -n % n;
	uint64_t x;

	do
		x = rng_next(r);
	while (x < lim);
	return x % n;
}

void shuffle_u32(struct rng *r, uint32_t *v, uint32_t n)
{
	uint32_t i, j, t;

	for (i = n; i > 1; i--) {
		j = (uint32_t)rng_below(r, i);
		t = v[i - 1];
		v[i - 1] = v[j];
		v[j] = t;
	}
}

void gen_fabric_free(struct gen_fabric *f)
{
	free(f->base);
	free(f->peer);
	free(f->desc);
	free(f->dead);
	free(f->host_sw);
	free(f->host_port);
	memset(f, 0, sizeof(*f));
}

int gen_fabric_init(struct gen_fabric *f, uint64_t nsw, uint64_t nhost, unsigned long radix)
{
	if (nsw > GEN_MAX_SWITCHES)
		return gen_usage("fabric too large: %" PRIu64 " switches (at most %lu)", nsw,
				 GEN_MAX_SWITCHES);
	if (nhost > GEN_MAX_HOSTS)
		return gen_usage("fabric too large: %" PRIu64 " hosts (at most %lu)", nhost,
				 GEN_MAX_HOSTS);

	f->nsw = (uint32_t)nsw;
	f->nhost = (uint32_t)nhost;
	f->radix = radix;
	f->base = calloc(nsw + 1, sizeof(*f->base));
	f->desc = calloc(nsw ? nsw : 1, sizeof(*f->desc));
	f->dead = calloc(nsw ? nsw : 1, sizeof(*f->dead));
	f->host_sw = calloc(nhost ? nhost : 1, sizeof(*f->host_sw));
	f->host_port = calloc(nhost ? nhost : 1, sizeof(*f->host_port));
	if (!f->base || !f->desc || !f->dead || !f->host_sw || !f->host_port)
		return gen_nomem();
	return GEN_OK;
}

void sw_desc(struct gen_fabric *f, uint32_t s, const char *fmt, ...)
{
	va_list ap;

	sn_assert(s < f->nsw);
	va_start(ap, fmt);
	vsnprintf(f->desc[s], sizeof(f->desc[s]), fmt, ap);
	va_end(ap);
}

/* Record how many ports switch s needs; gen_fabric_ports() turns it into slots. */
void gen_fabric_need(struct gen_fabric *f, uint32_t s, uint64_t need)
{
	/* the counts are only read before the ports are laid out */
	sn_assert(s < f->nsw && !f->peer);
	f->base[s + 1] = need > UINT32_MAX ? UINT32_MAX : (uint32_t)need;
}

int gen_fabric_ports(struct gen_fabric *f)
{
	unsigned long limit = f->radix ? f->radix : GEN_MAX_PORTS;
	uint64_t total = 0;
	uint32_t s;

	sn_assert(!f->peer);
	f->base[0] = 0;
	for (s = 0; s < f->nsw; s++) {
		uint32_t need = f->base[s + 1];

		if (need > limit) {
			if (f->radix)
				return gen_usage("--radix %lu: switch S-%04u (%s) needs %u ports",
						 f->radix, s + 1, f->desc[s], need);
			return gen_usage(
				"switch S-%04u (%s) would need %u ports; InfiniBand switches have at most %d",
				s + 1, f->desc[s], need, GEN_MAX_PORTS);
		}
		total += f->radix ? f->radix : (need ? need : 1);
		if (total > GEN_MAX_PORT_SLOTS)
			return gen_usage("fabric too large: more than %lu switch ports",
					 GEN_MAX_PORT_SLOTS);
		f->base[s + 1] = (uint32_t)total;
	}

	f->peer = malloc((total ? total : 1) * sizeof(*f->peer));
	if (!f->peer)
		return gen_nomem();
	for (s = 0; s < total; s++) {
		f->peer[s].node = NO_NODE;
		f->peer[s].port = 0;
	}
	return GEN_OK;
}

uint32_t sw_nports(const struct gen_fabric *f, uint32_t s)
{
	sn_assert(s < f->nsw);
	return f->base[s + 1] - f->base[s];
}

static struct peer *port_slot(struct gen_fabric *f, uint32_t s, uint64_t port)
{
	if (port < 1 || port > sw_nports(f, s)) {
		f->conflict = true;
		return NULL;
	}
	return &f->peer[f->base[s] + port - 1];
}

void link_sw(struct gen_fabric *f, uint32_t a, uint64_t pa, uint32_t b, uint64_t pb)
{
	struct peer *x = port_slot(f, a, pa);
	struct peer *y = port_slot(f, b, pb);

	if (!x || !y || x->node != NO_NODE || y->node != NO_NODE || x == y) {
		f->conflict = true;
		return;
	}
	x->node = b;
	x->port = (uint16_t)pb;
	y->node = a;
	y->port = (uint16_t)pa;
}

static void attach_host(struct gen_fabric *f, uint32_t h, uint32_t s, uint64_t port)
{
	struct peer *x = port_slot(f, s, port);

	sn_assert(h < f->nhost);
	if (!x || x->node != NO_NODE) {
		f->conflict = true;
		return;
	}
	x->node = f->nsw + h;
	x->port = 1;
	f->host_sw[h] = s;
	f->host_port[h] = (uint16_t)port;
}

/* Hosts take ports 1..per of switches first..first+n-1, in switch order. */
void attach_hosts(struct gen_fabric *f, uint32_t first, uint32_t n, uint32_t per)
{
	attach_spread(f, first, n, 0, (uint64_t)n * per);
}

/* Hosts take ports 1.. of switches first..first+n-1, spread evenly. */
void attach_spread(struct gen_fabric *f, uint32_t first, uint32_t n, uint32_t host, uint64_t nhosts)
{
	uint32_t s, i;

	sn_assert((uint64_t)first + n <= f->nsw && host + nhosts <= f->nhost);
	for (s = 0; s < n; s++) {
		uint64_t per = nhosts / n + (s < nhosts % n);

		for (i = 0; i < per; i++)
			attach_host(f, host++, first + s, i + 1);
	}
}

/*
 * All-to-all among the n switches first, first + stride, ...: each has a
 * block of (n - 1) * r ports from first_port on, r per peer in peer order,
 * skipping itself, so a port names the same peer on every switch.
 */
void link_clique(struct gen_fabric *f, uint32_t first, uint32_t stride, uint32_t n,
		 uint64_t first_port, uint64_t r)
{
	uint32_t i, j;
	uint64_t k;

	sn_assert(!n || first + (uint64_t)(n - 1) * stride < f->nsw);
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			for (k = 0; k < r; k++)
				link_sw(f, first + i * stride, first_port + (j - 1) * r + k,
					first + j * stride, first_port + i * r + k);
}

/*
 * Groups joined all-to-all by n links per pair (cascade.c, dfplus.c): group x has its global
 * ports on switches x*stride + off .. and per switches each, from port first on; they are
 * numbered as slots (switch-major) and the links to the group's j-th other group (in group
 * order) take slots j*n .. j*n + n - 1.  So a group's links to one peer are neighbours, and
 * the slot of a link follows from its two groups alone.
 */
void link_groups(struct gen_fabric *f, uint32_t g, uint32_t stride, uint32_t off, uint32_t per,
		 uint64_t first, uint32_t n)
{
	uint32_t x, t, m;

	for (x = 0; x < g; x++) {
		for (t = x + 1; t < g; t++) {
			/* t is x's (t - 1)-th peer, x is t's x-th */
			uint64_t sx = (uint64_t)(t - 1) * n, st = (uint64_t)x * n;

			for (m = 0; m < n; m++, sx++, st++)
				link_sw(f, x * stride + off + (uint32_t)(sx / per),
					first + sx % per, t * stride + off + (uint32_t)(st / per),
					first + st % per);
		}
	}
}

/*
 * What every later step relies on once a builder is done without a conflict: every link is
 * listed on both ends (a switch port's peer names it back, a host's switch port names the
 * host), every port lies within its switch and every host is attached.
 */
void gen_fabric_check(const struct gen_fabric *f)
{
	uint32_t s, p, h;

	for (s = 0; s < f->nsw; s++) {
		sn_assert(sw_nports(f, s) <= GEN_MAX_PORTS);
		sn_assert(!f->radix || sw_nports(f, s) == f->radix);
		for (p = 0; p < sw_nports(f, s); p++) {
			const struct peer *pe = &f->peer[f->base[s] + p];
			const struct peer *back;

			if (pe->node == NO_NODE)
				continue;
			if (pe->node >= f->nsw) {
				h = pe->node - f->nsw;
				sn_assert(h < f->nhost && pe->port == 1);
				sn_assert(f->host_sw[h] == s && f->host_port[h] == p + 1);
				continue;
			}
			sn_assert(pe->port >= 1 && pe->port <= sw_nports(f, pe->node));
			back = &f->peer[f->base[pe->node] + pe->port - 1];
			sn_assert(back->node == s && back->port == p + 1);
		}
	}
	for (h = 0; h < f->nhost; h++) {
		s = f->host_sw[h];
		sn_assert(s < f->nsw);
		sn_assert(f->host_port[h] >= 1 && f->host_port[h] <= sw_nports(f, s));
		sn_assert(f->peer[f->base[s] + f->host_port[h] - 1].node == f->nsw + h);
	}
}

uint32_t live_switches(const struct gen_fabric *f)
{
	uint32_t s, n = 0;

	for (s = 0; s < f->nsw; s++)
		n += !f->dead[s];
	return n;
}

uint64_t live_links(const struct gen_fabric *f)
{
	uint64_t i, ends = 0;

	for (i = 0; i < f->base[f->nsw]; i++)
		ends += f->peer[i].node < f->nsw;
	/* both ends of a link are listed and removed together */
	sn_assert(ends % 2 == 0);
	return ends / 2;
}
