/*
 * error.h - how sarnue reports an error to its caller: one message of a fixed size that names
 * the input and the position, filled where the error is found and passed up unchanged.
 */
#ifndef SARNUE_ERROR_H
#define SARNUE_ERROR_H

struct fab_error {
	char msg[512];
};

void fab_error_set(struct fab_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
