/*
 * dumps.c - loading a routing from OpenSM's and sarnue's dump files (dumps.h), for the
 * subcommands that inspect one (sarnue check, sarnue trace).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/dumps.h"
#include "fabric/loaders.h"

/* dir/name into buf; the name alone when dir is NULL. */
static const char *in_dir(const char *dir, const char *name, char *buf, size_t size)
{
	if (!dir)
		return NULL;
	if ((size_t)snprintf(buf, size, "%s/%s", dir, name) >= size)
		return NULL;
	return buf;
}

int dumps_load(const struct dump_inputs *in, struct fabric *f, struct routing *r,
	       struct fab_error *err)
{
	char subnet[4096], fdbs[4096], path_sl[4096], sl2vl[4096];
	const char *s =
		in->subnet ? in->subnet : in_dir(in->dir, "opensm-subnet.lst", subnet, 4096);
	const char *l = in->fdbs ? in->fdbs : in_dir(in->dir, "opensm.fdbs", fdbs, 4096);
	const char *p =
		in->path_sl ? in->path_sl : in_dir(in->dir, "sarnue-path-sl.dump", path_sl, 4096);
	const char *v = in->sl2vl ? in->sl2vl : in_dir(in->dir, "sarnue-sl2vl.dump", sl2vl, 4096);
	struct topology_opts o = {
		.format = TOPOLOGY_SUBNET_LST,
		.net = { .lmc = in->lmc },
		.lst_op_vls = 15,
	};

	if (!s || !l) {
		fab_error_set(err, "%s: path too long", in->dir ? in->dir : "dump");
		return -1;
	}
	/* the optional dumps count only when present, unless named on their own */
	if (!in->path_sl && p && access(p, R_OK))
		p = NULL;
	if (!in->sl2vl && v && access(v, R_OK))
		v = NULL;
	if (fabric_load_topology(f, s, &o, NULL, 0, err))
		return -1;
	if (routing_init(r, f, "dump")) {
		fab_error_set(err, "out of memory");
		return -1;
	}
	if (routing_load_lfts(r, f, l, err) || (p && routing_load_path_sl(r, f, p, err)) ||
	    (v && routing_load_sl2vl(r, f, v, err)))
		return -1;
	return 0;
}
