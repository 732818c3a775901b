/*
 * mcast.c - the multicast model's builder and lookups (see mcast.h).  The arrays grow by
 * doubling; a group's entries are collected unsorted and put in switch order once at its end,
 * so a tree of thousands of switches costs one sort, not a search per port.
 */
#include "fabric/mcast.h"

#include <stdlib.h>
#include <string.h>

#include "lib/assert.h"

void mcast_init(struct mcast *m)
{
	memset(m, 0, sizeof(*m));
}

void mcast_free(struct mcast *m)
{
	free(m->groups);
	free(m->members);
	free(m->entries);
	mcast_init(m);
}

void mcast_clear(struct mcast *m)
{
	m->ngroups = 0;
	m->nmembers = 0;
	m->nentries = 0;
}

/* Room for one more element of size sz in *arr of *cap; 0, or -1 without memory. */
static int grow(void **arr, uint32_t n, uint32_t *cap, size_t sz)
{
	uint32_t ncap;
	void *p;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	p = realloc(*arr, (size_t)ncap * sz);
	if (!p)
		return -1;
	*arr = p;
	*cap = ncap;
	return 0;
}

int mcast_begin_group(struct mcast *m, uint16_t mlid, uint8_t sl)
{
	struct mcast_group *g;

	if (grow((void **)&m->groups, m->ngroups, &m->groups_cap, sizeof(*m->groups)))
		return -1;
	g = &m->groups[m->ngroups++];
	memset(g, 0, sizeof(*g));
	g->mlid = mlid;
	g->sl = sl;
	g->first_member = m->nmembers;
	g->first_entry = m->nentries;
	return 0;
}

int mcast_add_member(struct mcast *m, uint32_t port)
{
	sn_assert(m->ngroups > 0);
	if (grow((void **)&m->members, m->nmembers, &m->members_cap, sizeof(*m->members)))
		return -1;
	m->members[m->nmembers++] = port;
	m->groups[m->ngroups - 1].nmembers++;
	return 0;
}

int mcast_set_port(struct mcast *m, uint32_t sw, unsigned port)
{
	struct mcast_group *g;
	struct mcast_entry *e;

	sn_assert(m->ngroups > 0 && port < 64 * MCAST_MASK_WORDS);
	g = &m->groups[m->ngroups - 1];
	/* Consecutive ports of one switch, the usual order, share an entry before the sort. */
	if (g->nentries && m->entries[m->nentries - 1].sw == sw) {
		mcast_mask_set(m->entries[m->nentries - 1].ports, port);
		return 0;
	}
	if (grow((void **)&m->entries, m->nentries, &m->entries_cap, sizeof(*m->entries)))
		return -1;
	e = &m->entries[m->nentries++];
	memset(e, 0, sizeof(*e));
	e->sw = sw;
	mcast_mask_set(e->ports, port);
	g->nentries++;
	return 0;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct mcast_entry *x = a, *y = b;

	return (x->sw > y->sw) - (x->sw < y->sw);
}

void mcast_end_group(struct mcast *m)
{
	struct mcast_group *g;
	struct mcast_entry *e;
	uint32_t i, out = 0;
	unsigned w;

	sn_assert(m->ngroups > 0);
	g = &m->groups[m->ngroups - 1];
	if (!g->nentries)
		return; /* entries may still be NULL: no arithmetic on it */
	e = m->entries + g->first_entry;
	qsort(e, g->nentries, sizeof(*e), entry_cmp);
	for (i = 0; i < g->nentries; i++) {
		if (out && e[out - 1].sw == e[i].sw) {
			for (w = 0; w < MCAST_MASK_WORDS; w++)
				e[out - 1].ports[w] |= e[i].ports[w];
			continue;
		}
		e[out++] = e[i];
	}
	m->nentries -= g->nentries - out;
	g->nentries = out;
}

const struct mcast_entry *mcast_find_entry(const struct mcast *m, const struct mcast_group *g,
					   uint32_t sw)
{
	const struct mcast_entry *e;
	uint32_t lo = 0, hi = g->nentries;

	if (!hi)
		return NULL;
	e = m->entries + g->first_entry;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (e[mid].sw < sw)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < g->nentries && e[lo].sw == sw ? &e[lo] : NULL;
}

const struct mcast_group *mcast_find_group(const struct mcast *m, uint16_t mlid)
{
	uint32_t i;

	for (i = 0; i < m->ngroups; i++)
		if (m->groups[i].mlid == mlid)
			return &m->groups[i];
	return NULL;
}
