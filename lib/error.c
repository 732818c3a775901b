/*
 * error.c - fills a struct fab_error (see error.h).
 */
#include "lib/error.h"

#include <stdarg.h>
#include <stdio.h>

void fab_error_set(struct fab_error *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
}
