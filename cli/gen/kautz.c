/*
 * kautz.c - Kautz graphs K(d, n) as switch fabrics: (d + 1) * d^n switches, every one with d
 * arcs out and d in, diameter n + 1.
 *
 * Port order: hosts on ports 1..T; ports T+1..T+d*r carry the d out arcs, r (--links-per-pair)
 * each in the order of the appended symbol's offset; ports T+d*r+1..T+2*d*r the d in arcs,
 * r each, in the order of the sending switch's first offset digit.
 */
#include "cli/gen/gen_private.h"
#include "lib/assert.h"

#include <inttypes.h>
#include <stdio.h>

/*
 * Kautz graph K(d, n): switch v is a string a_0..a_n over d + 1 symbols
 * with a_i != a_(i+1), numbered by a_0 and then the offsets e_i =
 * a_i - a_(i-1) - 1 mod (d + 1) as base-d digits.  Every arc a_0..a_n ->
 * a_1..a_n b becomes its own link(s), as in the thesis: a pair with arcs
 * both ways (the alternating strings) gets two bundles, there are no self
 * loops, and every switch has d out and d in ports.
 */
static void kautz_desc(struct gen_fabric *f, uint32_t v, uint64_t d, uint64_t n, uint64_t dn)
{
	char str[SW_DESC_LEN];
	uint64_t a = v / dn, off = v % dn, scale = dn, i;
	size_t at = 0;

	for (i = 0; i <= n && at < sizeof(str); i++) {
		if (i) {
			scale /= d;
			a = (a + 1 + off / scale % d) % (d + 1);
		}
		at += (size_t)snprintf(str + at, sizeof(str) - at, "%s%" PRIu64,
				       i && d > 9 ? "." : "", a);
	}
	sw_desc(f, v, "kautz %s", str);
}

int build_kautz(struct gen_fabric *f, const struct opts *o)
{
	uint64_t d = o->num[OPT_D], n = o->num[OPT_N], t = o->num[OPT_HPS], r = o->num[OPT_LPP];
	uint64_t dn = 1, nsw, v, e, k, i;
	int rc;

	for (i = 0; i < n; i++) {
		dn *= d;
		if ((d + 1) * dn > GEN_MAX_SWITCHES)
			return gen_usage(
				"--d %lu --n %lu: fabric too large (more than %lu switches)",
				o->num[OPT_D], o->num[OPT_N], GEN_MAX_SWITCHES);
	}
	nsw = (d + 1) * dn;
	rc = gen_fabric_init(f, nsw, nsw * t, o->num[OPT_RADIX]);
	if (rc)
		return rc;
	for (v = 0; v < nsw; v++) {
		kautz_desc(f, (uint32_t)v, d, n, dn);
		gen_fabric_need(f, (uint32_t)v, t + 2 * d * r);
	}
	rc = gen_fabric_ports(f);
	if (rc)
		return rc;

	attach_hosts(f, 0, f->nsw, (uint32_t)t);
	for (v = 0; v < nsw; v++) {
		uint64_t off = v % dn, e1 = off / (dn / d), rest = off % (dn / d);
		uint64_t a1 = (v / dn + 1 + e1) % (d + 1);

		for (e = 0; e < d; e++) {
			uint64_t u = a1 * dn + rest * d + e;

			/* a Kautz string never repeats a symbol, so there are no self loops */
			sn_assert(u < nsw && u != v);

			for (k = 0; k < r; k++)
				link_sw(f, (uint32_t)v, t + e * r + k + 1, (uint32_t)u,
					t + (d + e1) * r + k + 1);
		}
	}
	return GEN_OK;
}
