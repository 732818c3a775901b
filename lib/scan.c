/*
 * scan.c - field scanners (see scan.h).
 */
#include "lib/scan.h"
#include "lib/assert.h"

#include <string.h>

#include "lib/numbers.h"

int fab_skip_blanks(const char **p)
{
	const char *s = *p;

	while (**p == ' ' || **p == '\t')
		(*p)++;
	return *p != s;
}

int fab_scan_decimal(const char **p, unsigned limit, unsigned *v)
{
	uint64_t x;

	if (!limit || num_scan_u64(p, limit - 1, &x))
		return -1;
	sn_assert(x < limit);
	*v = (unsigned)x;
	return 0;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)(c | 0x20);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int fab_scan_hex_digits(const char **p, unsigned max_digits, uint64_t *v)
{
	unsigned digits = 0;
	int d;

	/* More digits than a 64-bit value holds would shift the first ones out unnoticed. */
	sn_assert(max_digits <= 16);
	*v = 0;
	for (; (d = hex_digit(**p)) >= 0; (*p)++) {
		if (++digits > max_digits)
			return -1;
		sn_assert(d < 16);
		*v = *v << 4 | (uint64_t)d;
	}
	return digits ? 0 : -1;
}

int fab_scan_hex(const char **p, unsigned max_digits, uint64_t *v)
{
	if ((*p)[0] != '0' || ((*p)[1] | 0x20) != 'x')
		return -1;
	*p += 2;
	return fab_scan_hex_digits(p, max_digits, v);
}

int fab_scan_guid(const char **p, uint64_t *guid)
{
	if ((*p)[0] == '0' && ((*p)[1] | 0x20) == 'x')
		return fab_scan_hex(p, 16, guid);
	return num_scan_u64(p, UINT64_MAX, guid);
}

int fab_rest_blank(const char *p)
{
	p += strspn(p, " \t\r\n");
	return *p == '\0';
}

unsigned fab_split_words(char *line, char **word, size_t *len, unsigned max)
{
	unsigned n = 0;
	char *p = line;

	for (;;) {
		p += strspn(p, " \t\r\n\v\f");
		if (!*p || *p == '#' || n == max)
			return n;
		word[n] = p;
		p += strcspn(p, " \t\r\n\v\f#");
		len[n] = (size_t)(p - word[n]);
		n++;
	}
}
