/*
 * numbers.h - the one strict reader of the numbers operators type: command-line arguments,
 * event_plugin_options values and the fields of dump and net files.
 *
 * Decimal digits only.  strtoul and strtod, which these replace, skip leading blanks, take a
 * sign ("-1" wraps to the largest value), and strtod takes "nan", "inf" and exponents, so a
 * typo could become a value nobody wrote.  Header-only because sarnue-agent, which links only
 * the client library, reads its options with it too.
 */
#ifndef SARNUE_NUMBERS_H
#define SARNUE_NUMBERS_H

#include <stdint.h>
#include <stdlib.h>

/* One or more decimal digits whose value is at most max; advances *p past them.  -1 otherwise. */
static inline int num_scan_u64(const char **p, uint64_t max, uint64_t *v)
{
	const uint64_t tens = max / 10, last = max % 10; /* divided once, not per digit */
	const char *start = *p;
	uint64_t x = 0;

	for (; **p >= '0' && **p <= '9'; (*p)++) {
		unsigned d = (unsigned)(**p - '0');

		if (x > tens || (x == tens && d > last))
			return -1;
		x = x * 10 + d;
	}
	if (*p == start)
		return -1;
	*v = x;
	return 0;
}

/* The whole of s is a decimal number of at most max; -1 otherwise. */
static inline int num_parse_u64(const char *s, uint64_t max, uint64_t *v)
{
	uint64_t x;

	if (num_scan_u64(&s, max, &x) || *s)
		return -1;
	*v = x;
	return 0;
}

/* The whole of s is a decimal number from lo to hi, as an unsigned; -1 otherwise. */
static inline int num_parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *v)
{
	uint64_t x;

	if (num_parse_u64(s, hi, &x) || x < lo)
		return -1;
	*v = (unsigned)x;
	return 0;
}

/*
 * The whole of s is a decimal number with an optional fraction ("10", "0.5", ".5", "2.") from lo
 * to hi; -1 otherwise.  For seconds and rates: no sign, exponent, "inf" or "nan".
 */
static inline int num_parse_real(const char *s, double lo, double hi, double *v)
{
	const char *p = s;
	unsigned digits = 0;
	double x;

	for (; *p >= '0' && *p <= '9'; p++)
		digits++;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			digits++;
	if (!digits || *p)
		return -1;
	x = strtod(s, NULL);
	if (!(x >= lo && x <= hi))
		return -1;
	*v = x;
	return 0;
}

#endif
