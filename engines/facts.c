/*
 * facts.c - what an engine run reports besides its tables (engines.h): the figures of its
 * result as key/value pairs beside the prose summary (what `sarnue route --json` prints for
 * scripts), and its warnings, one per line.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "engines/engines.h"

static struct engine_fact *fact_slot(struct engine_result *res, const char *key)
{
	unsigned i;

	for (i = 0; i < res->nfacts; i++)
		if (!strcmp(res->facts[i].key, key))
			return &res->facts[i];
	if (res->nfacts == ENGINE_MAX_FACTS)
		return NULL;
	i = res->nfacts++;
	memset(&res->facts[i], 0, sizeof(res->facts[i]));
	snprintf(res->facts[i].key, sizeof(res->facts[i].key), "%s", key);
	return &res->facts[i];
}

void engine_fact(struct engine_result *res, const char *key, double value)
{
	struct engine_fact *f = fact_slot(res, key);

	if (f) {
		f->value = value;
		f->text[0] = '\0';
	}
}

void engine_fact_text(struct engine_result *res, const char *key, const char *text)
{
	struct engine_fact *f = fact_slot(res, key);

	if (f)
		snprintf(f->text, sizeof(f->text), "%s", text && *text ? text : "-");
}

void engine_warn(struct engine_result *res, const char *fmt, ...)
{
	size_t used = strlen(res->warning);
	va_list ap;

	if (used && used + 1 < sizeof(res->warning)) {
		res->warning[used] = '\n';
		used++;
	}
	va_start(ap, fmt);
	vsnprintf(res->warning + used, sizeof(res->warning) - used, fmt, ap);
	va_end(ap);
}

const char *engine_warning_next(const char **s, int *len)
{
	const char *line = *s, *nl;

	if (!*line)
		return NULL;
	nl = strchr(line, '\n');
	if (!nl)
		nl = line + strlen(line);
	*len = (int)(nl - line);
	*s = *nl ? nl + 1 : nl;
	return line;
}
