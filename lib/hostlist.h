/*
 * hostlist.h - Slurm hostlist expressions ("node[001-040,052],login1", "r[1-2]n[01-16]") expanded
 * into host names, so that sarnue-filterd needs neither `scontrol show hostnames` per job nor a
 * Slurm library.  Also reads the Nodes= lists of Slurm's topology.conf.
 *
 * Grammar: a comma-separated list of names; a name is literal text and bracket groups, each
 * group a comma-separated list of numbers or ranges LO-HI.  Numbers keep the width of LO
 * ("[08-11]" gives 08 09 10 11).  Several groups in one name expand to every combination, the
 * last group varying fastest, as Slurm does.  Brackets do not nest.
 */
#ifndef SARNUE_HOSTLIST_H
#define SARNUE_HOSTLIST_H

#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"

/* One expression may name at most this many hosts: a typo like [1-999999999] is an error. */
#define HOSTLIST_MAX_HOSTS (1u << 20)

struct hostlist {
	char *buf; /* the names, each NUL-terminated */
	size_t len, cap;
	uint32_t *off; /* [n]: where each name starts in buf */
	uint32_t n, ncap;
};

void hostlist_init(struct hostlist *hl);
void hostlist_free(struct hostlist *hl);
/* Forgets the names, keeps the memory. */
void hostlist_clear(struct hostlist *hl);

/*
 * Appends the hosts of expr[0..len) to hl.  On error hl is as before and err says
 * "what: column C: reason", C counting from 1.
 */
int hostlist_expand(struct hostlist *hl, const char *expr, size_t len, const char *what,
		    struct fab_error *err);

/*
 * Checks expr[0..len) as hostlist_expand() does and counts its hosts without expanding them,
 * so that a caller can bound the names of many expressions together first.
 */
int hostlist_count(const char *expr, size_t len, const char *what, uint32_t *count,
		   struct fab_error *err);

/* Appends one name as it is (no expansion): the list also serves as a plain string list. */
int hostlist_add(struct hostlist *hl, const char *name, size_t len);

/* Replaces dst's names by a copy of src's. */
int hostlist_copy(struct hostlist *dst, const struct hostlist *src);

static inline const char *hostlist_get(const struct hostlist *hl, uint32_t i)
{
	return hl->buf + hl->off[i];
}

#endif
