/*
 * write.c - the output side of `sarnue gen`: the --hostname-pattern (interpreted here, never
 * handed to printf), the dense numbering of the hosts that survived the faults, and the ibsim
 * net file, written to a temporary name and renamed so that a failed run leaves nothing
 * half-written.
 */
#include "cli/gen/gen_private.h"
#include "lib/assert.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The longest host name we ever format; check_hostnames() keeps it to DESC_MAX. */
#define HOSTBUF 256
/* ibsim reads lines of at most 255 characters; keep comments well short. */
#define CMDLINE_MAX 200

static int hostfmt_error(const char *pat, const char *why)
{
	return gen_usage("--hostname-pattern %s: %s", pat, why);
}

/*
 * The pattern is checked and interpreted here instead of being handed to
 * printf: a user-supplied format string must never reach the C library.
 */
int hostfmt_parse(struct hostfmt *hf, const char *pat)
{
	char *dst = hf->prefix;
	bool seen = false;
	const char *s;
	size_t n = 0;

	memset(hf, 0, sizeof(*hf));
	hf->prec = -1;
	if (strlen(pat) > DESC_MAX)
		return hostfmt_error(pat, "longer than 63 characters");

	for (s = pat; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch < 0x20 || ch == 0x7f || ch == '"')
			return hostfmt_error(pat, "quotes and control characters are not allowed");
		if (ch != '%') {
			dst[n++] = (char)ch;
			continue;
		}
		if (s[1] == '%') {
			dst[n++] = '%';
			s++;
			continue;
		}
		if (seen)
			return hostfmt_error(pat, "more than one conversion");
		for (s++; *s == '-' || *s == '0' || *s == '#'; s++) {
			if (*s == '-')
				hf->left = true;
			else if (*s == '0')
				hf->zero = true;
			else
				hf->alt = true;
		}
		for (; *s >= '0' && *s <= '9'; s++) {
			hf->width = hf->width * 10 + (*s - '0');
			if (hf->width > DESC_MAX)
				return hostfmt_error(pat, "field width too large");
		}
		if (*s == '.') {
			hf->prec = 0;
			for (s++; *s >= '0' && *s <= '9'; s++) {
				hf->prec = hf->prec * 10 + (*s - '0');
				if (hf->prec > DESC_MAX)
					return hostfmt_error(pat, "precision too large");
			}
		}
		if (!*s || !strchr("diuxXo", *s))
			return hostfmt_error(
				pat, "only one integer conversion (d, i, u, x, X, o) is supported");
		if (hf->alt && (*s == 'd' || *s == 'i' || *s == 'u'))
			return hostfmt_error(pat, "the # flag needs an x, X or o conversion");
		hf->conv = *s;
		seen = true;
		dst[n] = '\0';
		dst = hf->suffix;
		n = 0;
	}
	dst[n] = '\0';
	if (!seen)
		return hostfmt_error(
			pat, "needs one integer conversion, such as %04d, for the host number");
	return GEN_OK;
}

static size_t put_chars(char *buf, size_t len, size_t at, char c, size_t count)
{
	while (count--) {
		if (at + 1 < len)
			buf[at] = c;
		at++;
	}
	return at;
}

static size_t put_str(char *buf, size_t len, size_t at, const char *s)
{
	for (; *s; s++, at++)
		if (at + 1 < len)
			buf[at] = *s;
	return at;
}

/* Returns the full length; the text is truncated to fit buf. */
static size_t hostfmt_format(const struct hostfmt *hf, uint32_t v, char *buf, size_t len)
{
	const char *xd = hf->conv == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
	unsigned int base = 10;
	const char *pfx = "";
	size_t nd = 0, zeros = 0, pad = 0, body, at = 0;
	char digits[16];

	if (hf->conv == 'x' || hf->conv == 'X')
		base = 16;
	else if (hf->conv == 'o')
		base = 8;
	do {
		digits[nd++] = xd[v % base];
		v /= base;
	} while (v);

	if (hf->prec > 0 && (size_t)hf->prec > nd)
		zeros = (size_t)hf->prec - nd;
	if (hf->alt && base == 16)
		pfx = hf->conv == 'X' ? "0X" : "0x";
	if (hf->alt && base == 8 && !zeros)
		zeros = 1;
	body = strlen(pfx) + zeros + nd;
	if ((size_t)hf->width > body)
		pad = (size_t)hf->width - body;
	if (hf->zero && !hf->left && hf->prec < 0) {
		zeros += pad;
		pad = 0;
	}

	at = put_str(buf, len, at, hf->prefix);
	if (!hf->left)
		at = put_chars(buf, len, at, ' ', pad);
	at = put_str(buf, len, at, pfx);
	at = put_chars(buf, len, at, '0', zeros);
	while (nd)
		at = put_chars(buf, len, at, digits[--nd], 1);
	if (hf->left)
		at = put_chars(buf, len, at, ' ', pad);
	at = put_str(buf, len, at, hf->suffix);
	if (len)
		buf[at < len ? at : len - 1] = '\0';
	return at;
}

/* Dense 1-based numbers for the hosts that survived; 0 for removed ones. */
uint32_t number_hosts(const struct gen_fabric *f, uint32_t *hid)
{
	uint32_t h, m = 0;

	for (h = 0; h < f->nhost; h++) {
		sn_assert(f->host_sw[h] < f->nsw);
		hid[h] = f->dead[f->host_sw[h]] ? 0 : ++m;
	}
	return m;
}

int check_hostnames(const struct hostfmt *hf, const char *pat, uint32_t nhosts)
{
	char name[HOSTBUF];
	size_t len;

	if (!nhosts)
		return GEN_OK;
	/* every conversion grows with the value, so the last host is longest */
	len = hostfmt_format(hf, nhosts, name, sizeof(name));
	if (len + strlen(" HCA-1") > DESC_MAX)
		return gen_usage(
			"--hostname-pattern %s: \"%s HCA-1\" is longer than the %d characters of a node description",
			pat, name, DESC_MAX);
	return GEN_OK;
}

/*
 * Echo the command as a comment for provenance, minus the output file so
 * that the same fabric written to two places is byte-identical.
 */
static void write_cmdline(FILE *fp, int argc, char **argv)
{
	size_t used = 0;
	int i;

	fputs("# Command: sarnue", fp);
	for (i = 0; i < argc; i++) {
		const char *s = argv[i];

		if (i && (!strcmp(s, "-o") || !strcmp(s, "--output"))) {
			i++;
			continue;
		}
		if (i && (!strncmp(s, "-o", 2) || !strncmp(s, "--output=", 9)))
			continue;
		for (fputc(' ', fp), used++; *s; s++, used++) {
			if (used >= CMDLINE_MAX) {
				fputs(" ...\n", fp);
				return;
			}
			fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, fp);
		}
	}
	fputc('\n', fp);
}

static void write_net(FILE *fp, const struct gen_fabric *f, const struct hostfmt *hf,
		      const uint32_t *hid, uint32_t nhosts, int argc, char **argv,
		      const struct progress_hook *progress)
{
	char name[HOSTBUF];
	uint32_t s, p, h;

	fputs("#\n# Topology file: generated by sarnue gen\n", fp);
	write_cmdline(fp, argc, argv);
	fprintf(fp, "# %u switches, %u hosts, %" PRIu64 " switch links\n#\n", live_switches(f),
		nhosts, live_links(f));

	for (s = 0; s < f->nsw; s++) {
		progress_step(progress, "writing", s + 1, f->nsw);
		if (f->dead[s])
			continue;
		fprintf(fp, "\nSwitch\t%u \"S-%04u\"\t# \"%s\"\n", sw_nports(f, s), s + 1,
			f->desc[s]);
		for (p = 0; p < sw_nports(f, s); p++) {
			const struct peer *pe = &f->peer[f->base[s] + p];

			if (pe->node == NO_NODE)
				continue;
			if (pe->node < f->nsw) {
				fprintf(fp, "[%u]\t\"S-%04u\"[%u]\n", p + 1, pe->node + 1,
					pe->port);
				continue;
			}
			/* a host on a live switch survived, so it has a number */
			sn_assert(hid[pe->node - f->nsw]);
			fprintf(fp, "[%u]\t\"H-%04u\"[1]\n", p + 1, hid[pe->node - f->nsw]);
		}
	}
	for (h = 0; h < f->nhost; h++) {
		if (!hid[h])
			continue;
		hostfmt_format(hf, hid[h], name, sizeof(name));
		fprintf(fp, "\nHca\t1 \"H-%04u\"\t# \"%s HCA-1\"\n[1]\t\"S-%04u\"[%u]\n", hid[h],
			name, f->host_sw[h] + 1, f->host_port[h]);
	}
}

/* O_EXCL on a fresh name: never follows a planted symlink, umask applies. */
int open_temp(const char *out, char **tmp_out, FILE **fp_out)
{
	size_t len = strlen(out) + 48;
	char *tmp = malloc(len);
	unsigned int i;
	int fd = -1;

	if (!tmp)
		return gen_nomem();
	for (i = 0; i < 100 && fd < 0; i++) {
		snprintf(tmp, len, "%s.%ld.%u.tmp", out, (long)getpid(), i);
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		int err = errno;

		free(tmp);
		return gen_fail("cannot create %s: %s", out, strerror(err));
	}
	*fp_out = fdopen(fd, "w");
	if (!*fp_out) {
		int err = errno;

		close(fd);
		unlink(tmp);
		free(tmp);
		return gen_fail("cannot write %s: %s", out, strerror(err));
	}
	*tmp_out = tmp;
	return GEN_OK;
}

/* Closes what open_temp opened and renames it to out, or removes it if writing failed. */
int commit_temp(FILE *fp, char *tmp, const char *out)
{
	int err = ferror(fp) ? (errno ? errno : EIO) : 0, rc = GEN_OK;

	if (fclose(fp) && !err)
		err = errno;
	if (!err && rename(tmp, out))
		err = errno;
	if (err) {
		unlink(tmp);
		rc = gen_fail("cannot write %s: %s", out, strerror(err));
	}
	free(tmp);
	return rc;
}

int write_output(const struct gen_fabric *f, const struct opts *o, const struct hostfmt *hf,
		 const uint32_t *hid, uint32_t nhosts, int argc, char **argv,
		 const struct progress_hook *progress)
{
	const char *out = o->set[OPT_OUT] ? o->val[OPT_OUT] : "-";
	char *tmp = NULL;
	FILE *fp;
	int rc;

	if (!strcmp(out, "-")) {
		write_net(stdout, f, hf, hid, nhosts, argc, argv, progress);
		if (fflush(stdout) || ferror(stdout))
			return gen_fail("cannot write standard output: %s", strerror(errno));
		return GEN_OK;
	}

	rc = open_temp(out, &tmp, &fp);
	if (rc)
		return rc;
	write_net(fp, f, hf, hid, nhosts, argc, argv, progress);
	return commit_temp(fp, tmp, out);
}
