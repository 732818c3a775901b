/*
 * dfsssptest.h - what the unit tests of sar-dfsssp share: a test fabric with hosts per switch
 * and 8 VLs, and DFSSSP's routing of one into a fresh routing.
 */
#ifndef SARNUE_DFSSSPTEST_H
#define SARNUE_DFSSSPTEST_H

#include <stdio.h>

#include "engines/dfsssp/dfsssp.h"
#include "testfab.h"

/* Switches with hosts[i] hosts each ("h<i>.<j>"), then links[] between switches. */
static inline int build(struct fabric *f, unsigned nsw, const unsigned *hosts,
			const unsigned (*links)[2], unsigned npairs, unsigned lmc)
{
	if (testfab_build_hosts(f, nsw, hosts, 0, links, npairs, lmc))
		return -1;
	testfab_set_vls(f, 8);
	return 0;
}

static inline int route(const struct fabric *f, const struct dfsssp_opts *o, struct routing *r,
			struct dfsssp_report *rep)
{
	struct fab_error err = { "" };
	int rc;

	if (routing_init(r, f, "sar-dfsssp"))
		return -1;
	rc = dfsssp_route(f, o, r, rep, &err);
	if (rc)
		fprintf(stderr, "dfsssp_route: %s\n", err.msg);
	return rc;
}

#endif
