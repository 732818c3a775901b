/*
 * scan.h - field scanners for the line-oriented readers of net files, dumps and lists.
 */
#ifndef SARNUE_SCAN_H
#define SARNUE_SCAN_H

#include <stddef.h>
#include <stdint.h>

/*
 * Field scanners for the line-oriented dump readers, stricter and much faster than sscanf on
 * dumps of millions of lines.  Each advances *p past what it read.
 */
/* Skips spaces and tabs; whether at least one was there. */
int fab_skip_blanks(const char **p);
/* A decimal number below limit; -1 when none or too large. */
int fab_scan_decimal(const char **p, unsigned limit, unsigned *v);
/* 1 to max_digits (at most 16) hex digits, no "0x"; -1 when there are none or more. */
int fab_scan_hex_digits(const char **p, unsigned max_digits, uint64_t *v);
/* "0x" and 1 to max_digits (at most 16) hex digits; -1 when malformed or longer. */
int fab_scan_hex(const char **p, unsigned max_digits, uint64_t *v);
/*
 * A GUID as operators write it: "0x" and 1 to 16 hex digits, or a decimal number below 2^64.
 * No sign and no octal: strtoull took "-1" for 0xffffffffffffffff and "010" for 8.
 */
int fab_scan_guid(const char **p, uint64_t *guid);
/* Whether only blanks and the line end are left at p. */
int fab_rest_blank(const char *p);
/*
 * The blank-separated words of a list file's line before a '#': up to max of them into word[]
 * and len[] (not NUL-terminated); returns how many, max meaning "max or more".
 */
unsigned fab_split_words(char *line, char **word, size_t *len, unsigned max);

#endif
