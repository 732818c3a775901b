/*
 * metrics_net.h - private to check/metrics.c and check/patterns.c: the terminals grouped by
 * switch and the scratch of one destination's in-tree that every metric works on, and the
 * report pieces patterns.c prints for metrics_print_text() and metrics_print_json().
 */
#ifndef SARNUE_METRICS_NET_H
#define SARNUE_METRICS_NET_H

#include <stdint.h>
#include <stdio.h>

#include "check/metrics.h"

/* What every metric needs: terminals grouped by switch, and the in-tree of one destination. */
struct net {
	const struct fabric *f;
	const struct routing *r;
	uint32_t nsw, nch;
	uint32_t *chan_of_port; /* [nports]: channel of C* leaving that port, or FAB_NONE */
	uint8_t *lft_by_lid;	/* routing_lfts_by_lid, or NULL: tree_build reads r */
	uint32_t nterm, detached;
	uint32_t *term;	       /* [nterm] terminal port indices, ascending LID */
	uint32_t *term_sw;     /* [nterm] switch each attaches to */
	uint32_t *sw_term_off; /* [nsw + 1] CSR: terminals (indices into term) per switch */
	uint32_t *sw_term;

	/* The in-tree towards one LID; order lists reached switches, parents first. */
	uint32_t *next;	 /* [nsw] parent switch, TREE_ROOT, or FAB_NONE when not delivered */
	uint32_t *chan;	 /* [nsw] channel of C* to the parent */
	uint32_t *hops;	 /* [nsw] links from the switch to the destination port */
	uint32_t *order; /* [nsw] */
	uint32_t *child_off, *child, *fill;
	uint32_t nreach;

	uint64_t *acc;	/* [nsw] sources per switch, then per subtree */
	uint32_t *dist; /* [nsw] BFS distance over C*, for the stretch */
};

/* Fills n for f and r; -1 when out of memory (n is then freed). */
int metrics_net_init(struct net *n, const struct fabric *f, const struct routing *r);
void metrics_net_free(struct net *n);

/* Calls o's progress callback when there is one. */
void metrics_progress(const struct metrics_options *o, const char *phase, uint64_t done,
		      uint64_t total);

/* The patterns' part of the report, and the fat tree's next to the EFI. */
void metrics_patterns_print_text(const struct metrics_report *m, FILE *out);
void metrics_patterns_print_json(const struct metrics_report *m, FILE *out);
void metrics_fat_tree_print_text(const struct metrics_report *m, FILE *out);
void metrics_fat_tree_print_json(const struct metrics_report *m, FILE *out);

#endif
