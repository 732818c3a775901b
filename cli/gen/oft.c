/*
 * oft.c - the two-level Orthogonal Fat Tree (Valerio et al.; Prisacari's thesis, Section
 * 7.2.2.4): three router levels L0, L1 and L2 of R = K^2 - K + 1 routers each.  L0 and L2
 * routers carry the hosts (K each by default) and K links to L1; router (0, i) and router
 * (2, i) both link to the L1 routers of row i of the K-ML3B table, so an L1 router has K links
 * down to L0 and K to L2, every router has radix 2K, and any two host routers are two hops
 * apart: through their one common L1 router, or any of K for (0, i) and (2, i).
 *
 * The K-ML3B table is built as the thesis does for K - 1 prime, over GF(K - 1) so that every
 * prime power works (it is the point-line incidence of the projective plane PG(2, K - 1)):
 * row 0 holds the L1 routers R-K..R-1; row 1 + b(K-1) + r holds R-K+b and then, in column
 * c = 0..K-2, the square b entry: r(K-1) + c for b = 0, its transpose c(K-1) + r for b = 1,
 * and c(K-1) + (r + a*c) for b = a + 1, the Latin square of slope a = 1..K-2 (the thesis's
 * orientation; the other one breaks the single-path property).
 *
 * Switch order: L0 routers 0..R-1, then L1, then L2.  L0 and L2 ports: hosts 1..T, then the K
 * L1 routers of the row in table order.  L1 ports: 1..K to its L0 routers in row order, K+1..2K
 * to the L2 routers of the same rows in the same order.
 */
#include "cli/gen/gen_private.h"
#include "lib/assert.h"

#include <stdlib.h>

/* K = 12 is the OFT the thesis simulates: 3,192 hosts on 399 routers of radix 24. */
#define OFT_DEFAULT_K 12

int validate_oft(struct opts *o)
{
	uint64_t k;

	if (!o->set[OPT_K])
		o->num[OPT_K] = OFT_DEFAULT_K;
	k = o->num[OPT_K];
	if (o->set[OPT_K] && (k < 3 || !gf_is_prime_power(k - 1)))
		return gen_usage("%s %s: K - 1 must be a prime power (the projective plane of "
				 "order K - 1): K = 3, 4, 5, 6, 8, 9, 10, 12, 14, ...",
				 o->name[OPT_K], o->val[OPT_K]);
	if (3 * (k * k - k + 1) > GEN_MAX_SWITCHES || 2 * k > GEN_MAX_PORTS)
		return gen_usage("%s %s: fabric too large (3(K^2-K+1) routers of radix 2K)",
				 o->name[OPT_K], o->val[OPT_K]);
	if (!o->set[OPT_HPS])
		o->num[OPT_HPS] = k;
	return GEN_OK;
}

/* Row i of the K-ML3B table into row[0..k). */
static void ml3b_row(uint32_t q, const uint32_t *add, const uint32_t *mul, uint32_t i,
		     uint32_t *row)
{
	uint32_t rl = q * q + q + 1, k = q + 1, b, r, c;

	if (!i) {
		for (c = 0; c < k; c++)
			row[c] = rl - k + c;
		return;
	}
	b = (i - 1) / q;
	r = (i - 1) % q;
	row[0] = rl - k + b;
	for (c = 0; c < q; c++) {
		if (b == 0)
			row[c + 1] = r * q + c;
		else if (b == 1)
			row[c + 1] = c * q + r;
		else
			row[c + 1] = c * q + add[(size_t)r * q + mul[(size_t)(b - 1) * q + c]];
	}
}

int build_oft(struct gen_fabric *f, const struct opts *o)
{
	uint32_t k = (uint32_t)o->num[OPT_K], q = k - 1, rl = k * k - k + 1;
	uint32_t *add = NULL, *mul = NULL, *row = NULL, *fill = NULL, i, c, lvl;
	uint64_t t = o->num[OPT_HPS];
	int rc;

	rc = gen_fabric_init(f, 3 * (uint64_t)rl, 2 * (uint64_t)rl * t, o->num[OPT_RADIX]);
	if (rc)
		return rc;
	for (lvl = 0; lvl < 3; lvl++) {
		for (i = 0; i < rl; i++) {
			sw_desc(f, lvl * rl + i, "oft L%u router %u", lvl, i);
			gen_fabric_need(f, lvl * rl + i, lvl == 1 ? 2 * k : t + k);
		}
	}
	rc = gen_fabric_ports(f);
	if (rc)
		return rc;

	rc = gf_tables(q, &add, &mul);
	if (rc)
		return rc;
	row = malloc(k * sizeof(*row));
	fill = calloc(rl, sizeof(*fill));
	if (!row || !fill) {
		rc = gen_nomem();
		goto out;
	}
	attach_hosts(f, 0, rl, (uint32_t)t);
	attach_spread(f, 2 * rl, rl, (uint32_t)(rl * t), (uint64_t)rl * t);
	for (i = 0; i < rl; i++) {
		ml3b_row(q, add, mul, i, row);
		for (c = 0; c < k; c++) {
			uint32_t l1 = row[c], at = fill[l1]++;

			/* more than K rows naming an L1 router would be a broken table */
			sn_assert(l1 < rl && at < k);
			link_sw(f, i, t + 1 + c, rl + l1, at + 1);
			link_sw(f, 2 * rl + i, t + 1 + c, rl + l1, k + at + 1);
		}
	}
	for (i = 0; i < rl; i++)
		sn_assert(fill[i] == k);
out:
	free(add);
	free(mul);
	free(row);
	free(fill);
	return rc;
}
