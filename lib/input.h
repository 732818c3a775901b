/*
 * input.h - the one way sarnue opens and reads the files it is given: net files, OpenSM's
 * dumps, job maps, configs, layers and storage lists.
 *
 * These files are named by operators and, through options, run on OpenSM's own threads, so a
 * read must never block (a FIFO), never grow without bound (/dev/zero, a huge file), and never
 * take an error for the end of the file.  Only regular files are read, each kind up to a size
 * limit that README states; errors name the file and, once reading, the line.
 */
#ifndef SARNUE_INPUT_H
#define SARNUE_INPUT_H

#include <stdint.h>
#include <stdio.h>

#include "lib/error.h"

/* Size limits per kind of input; README's "Limits on input files" lists them. */
#define FAB_LIMIT_CONFIG (1ull << 20)	/* config=, opensm.conf-style option files */
#define FAB_LIMIT_LIST (64ull << 20)	/* job maps, layers, storage GUIDs, node-name maps */
#define FAB_LIMIT_TOPOLOGY (1ull << 30) /* net files, ibnetdiscover output, subnet.lst */
#define FAB_LIMIT_TABLES (64ull << 30)	/* LFT, path-SL and SL2VL dumps: quadratic in size */

/* errno values of sarnue's own, beyond the system's; fab_strerror() words them. */
enum {
	FAB_ENOTREG = 0x10000, /* a FIFO, device, socket or directory where a file belongs */
	FAB_ENUL,	       /* a NUL byte inside a text line: binary data */
};

/* strerror() that also knows FAB_ENOTREG and FAB_ENUL. */
const char *fab_strerror(int errnum);

/*
 * Opens a regular file for reading without ever blocking; NULL with errno set: FAB_ENOTREG for
 * anything but a regular file, EFBIG when it is larger than max_bytes.
 */
FILE *fab_open_read(const char *path, uint64_t max_bytes);

/*
 * Reads a text file line by line and counts the lines, for the file readers whose errors name
 * the file and the line.
 */
struct line_reader {
	FILE *in;
	char *line;
	size_t cap;
	uint64_t left;	 /* bytes still allowed; a file that grows past its limit is an error */
	unsigned lineno; /* of the line line_reader_next() returned last, from 1 */
	int error;	 /* 0 at the end of the file, else the errno that stopped reading */
};

/* 0, or -1 with errno set; the caller words the error: "path: fab_strerror(errno)". */
int line_reader_open(struct line_reader *lr, const char *path, uint64_t max_bytes);
/*
 * The next line, newline included, or NULL at the end of the file and on any error: a read
 * error, out of memory, a NUL byte in the line or the size limit passed (line_reader_failed).
 */
char *line_reader_next(struct line_reader *lr);
/* Whether reading stopped on an error rather than at the end of the file. */
int line_reader_failed(const struct line_reader *lr);
/* "PATH:LINE: why reading stopped" into buf, LINE being the one that failed. */
void line_reader_describe(const struct line_reader *lr, const char *path, char *buf, size_t len);
void line_reader_close(struct line_reader *lr);

/*
 * Reads a whole regular file of at most max_bytes into a NUL-terminated buffer that the caller
 * frees; *len gets its length.  -1 with errno set, FAB_ENUL when it holds a NUL byte (its
 * offset in *len).
 */
int fab_read_text(const char *path, uint64_t max_bytes, char **text, size_t *len);

/* The same, with the reason in err as "NAME: why" (a NUL byte: "binary data" and its offset). */
int fab_read_text_named(const char *path, const char *name, uint64_t max_bytes, char **text,
			size_t *len, struct fab_error *err);

/*
 * Calls each(ctx, line, lineno, err) for every line of the file at path (of a kind limited to
 * max_bytes) until one returns non-zero, having set err.  0, or -1 with err set; an open error
 * reads "WHAT PATH: why" (WHAT omitted when NULL).
 */
int fab_read_lines(const char *path, uint64_t max_bytes, const char *what,
		   int (*each)(void *ctx, char *line, unsigned lineno, struct fab_error *err),
		   void *ctx, struct fab_error *err);
/* "PATH:LINE: why" into err, for a line_reader that stopped on an error. */
void fab_error_from_reader(struct fab_error *err, const struct line_reader *lr, const char *path);
#endif
