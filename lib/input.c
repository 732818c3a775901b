/*
 * input.c - opening and reading the files sarnue is given, declared in input.h.
 *
 * Every reader of the project (loaders, options, job maps, layers, storage lists, the filter
 * daemon's Slurm files) comes through here, so the rules live in one place: a non-blocking open
 * that refuses anything but a regular file, a size limit per kind, and errors told apart from
 * the end of the file.
 */
#include "lib/input.h"
#include "lib/assert.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *fab_strerror(int errnum)
{
	switch (errnum) {
	case FAB_ENOTREG:
		return "not a regular file (a FIFO, device, socket or directory)";
	case FAB_ENUL:
		return "binary data (a NUL byte)";
	case EFBIG:
		return "larger than the limit for this kind of file (see README, Limits)";
	default:
		return strerror(errnum);
	}
}

/*
 * O_NONBLOCK makes the open of a FIFO without a writer return at once instead of waiting on
 * OpenSM's thread; the file is then refused by type before a single byte is read.
 */
static int open_regular(const char *path, uint64_t max_bytes)
{
	struct stat st;
	int fd, saved;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st))
		goto fail;
	if (!S_ISREG(st.st_mode)) {
		errno = FAB_ENOTREG;
		goto fail;
	}
	if ((uint64_t)st.st_size > max_bytes) {
		errno = EFBIG;
		goto fail;
	}
	if (fcntl(fd, F_SETFL, 0))
		goto fail;
	return fd;
fail:
	saved = errno;
	close(fd);
	errno = saved;
	return -1;
}

FILE *fab_open_read(const char *path, uint64_t max_bytes)
{
	int fd = open_regular(path, max_bytes), saved;
	FILE *in;

	if (fd < 0)
		return NULL;
	in = fdopen(fd, "r");
	if (!in) {
		saved = errno;
		close(fd);
		errno = saved;
	}
	return in;
}

int line_reader_open(struct line_reader *lr, const char *path, uint64_t max_bytes)
{
	memset(lr, 0, sizeof(*lr));
	lr->in = fab_open_read(path, max_bytes);
	lr->left = max_bytes;
	return lr->in ? 0 : -1;
}

char *line_reader_next(struct line_reader *lr)
{
	ssize_t n;

	if (lr->error)
		return NULL;
	errno = 0;
	n = getline(&lr->line, &lr->cap, lr->in);
	if (n < 0) {
		/* getline says -1 for the end, a read error and a failed allocation alike. */
		if (!feof(lr->in) || ferror(lr->in))
			lr->error = errno ? errno : EIO;
		return NULL;
	}
	/* getline returns at least the newline or one byte before the end. */
	sn_assert(n > 0 && lr->line && (size_t)n < lr->cap);
	lr->lineno++;
	if ((uint64_t)n > lr->left) {
		lr->error = EFBIG;
		return NULL;
	}
	lr->left -= (uint64_t)n;
	if (memchr(lr->line, '\0', (size_t)n)) {
		lr->error = FAB_ENUL;
		return NULL;
	}
	return lr->line;
}

int line_reader_failed(const struct line_reader *lr)
{
	return lr->error != 0;
}

void line_reader_describe(const struct line_reader *lr, const char *path, char *buf, size_t len)
{
	if (lr->error == FAB_ENUL || lr->error == EFBIG)
		snprintf(buf, len, "%s:%u: %s", path, lr->lineno, fab_strerror(lr->error));
	else
		snprintf(buf, len, "%s:%u: read error: %s", path, lr->lineno + 1,
			 fab_strerror(lr->error));
}

void line_reader_close(struct line_reader *lr)
{
	free(lr->line);
	lr->line = NULL;
	if (lr->in)
		fclose(lr->in);
	lr->in = NULL;
}

int fab_read_text(const char *path, uint64_t max_bytes, char **text, size_t *len)
{
	int fd = open_regular(path, max_bytes), saved = 0;
	size_t cap = 4096, used = 0;
	char *buf = NULL, *grown;
	ssize_t n;

	if (fd < 0)
		return -1;
	for (;;) {
		if (!buf || used + 1 >= cap) {
			cap = buf ? cap * 2 : cap;
			grown = realloc(buf, cap);
			if (!grown) {
				saved = ENOMEM;
				goto out;
			}
			buf = grown;
		}
		/* One byte stays free for the NUL that ends the text. */
		sn_assert(used + 1 < cap);
		n = read(fd, buf + used, cap - used - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			saved = errno;
			goto out;
		}
		if (n == 0)
			break;
		used += (size_t)n;
		sn_assert(used < cap);
		if (used > max_bytes) {
			saved = EFBIG;
			goto out;
		}
	}
	buf[used] = '\0';
	if (memchr(buf, '\0', used)) {
		*len = (size_t)((char *)memchr(buf, '\0', used) - buf);
		saved = FAB_ENUL;
		goto out;
	}
	*text = buf;
	*len = used;
	buf = NULL;
out:
	free(buf);
	close(fd);
	errno = saved;
	return saved ? -1 : 0;
}

void fab_error_from_reader(struct fab_error *err, const struct line_reader *lr, const char *path)
{
	if (err)
		line_reader_describe(lr, path, err->msg, sizeof(err->msg));
}

int fab_read_lines(const char *path, uint64_t max_bytes, const char *what,
		   int (*each)(void *ctx, char *line, unsigned lineno, struct fab_error *err),
		   void *ctx, struct fab_error *err)
{
	struct line_reader lr;
	char *line;
	int ret = -1;

	if (line_reader_open(&lr, path, max_bytes)) {
		fab_error_set(err, "%s%s%s: %s", what ? what : "", what ? " " : "", path,
			      fab_strerror(errno));
		return -1;
	}
	while ((line = line_reader_next(&lr)))
		if (each(ctx, line, lr.lineno, err))
			goto out;
	if (line_reader_failed(&lr)) {
		fab_error_from_reader(err, &lr, path);
		goto out;
	}
	ret = 0;
out:
	line_reader_close(&lr);
	return ret;
}

int fab_read_text_named(const char *path, const char *name, uint64_t max_bytes, char **text,
			size_t *len, struct fab_error *err)
{
	if (!fab_read_text(path, max_bytes, text, len))
		return 0;
	if (errno == FAB_ENUL)
		fab_error_set(err, "%s: binary data (NUL byte at offset %zu)", name, *len);
	else
		fab_error_set(err, "%s: %s", name, fab_strerror(errno));
	return -1;
}
