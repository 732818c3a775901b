/*
 * facts.c - the figures of an engine's result as key/value pairs (engines.h), beside the prose
 * summary: what `sarnue route --json` prints for scripts, filled by each engine's runner in
 * dispatch.c.
 */
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
