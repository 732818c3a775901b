/*
 * topology.c - one way for every program to load "the fabric" a user names: an ibsim or
 * ibnetdiscover net file, OpenSM's opensm-subnet.lst, or (when the path decides) an OpenSM dump
 * directory holding one.  `sarnue route` and `sarnue check` say which format they expect through
 * their options; sarnue-filterd's --fabric lets the name decide.  The format loaders themselves
 * are netfile.c and osmdump.c; this file only chooses between them and hands each its options,
 * so the three programs cannot drift apart on what a path means or which LMC and VLs apply.
 */
#include "fabric/loaders.h"
#include "lib/assert.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define SUBNET_LST_NAME "opensm-subnet.lst"

int topology_resolve(const char *path, enum topology_format format, char *file, size_t size,
		     enum topology_format *kind)
{
	struct stat st;
	size_t n = strlen(path);

	sn_assert(file && size > 0);
	*kind = format;
	if (format == TOPOLOGY_BY_NAME && !stat(path, &st) && S_ISDIR(st.st_mode)) {
		*kind = TOPOLOGY_SUBNET_LST;
		return snprintf(file, size, "%s/" SUBNET_LST_NAME, path) >= (int)size ? -1 : 0;
	}
	if (format == TOPOLOGY_BY_NAME) {
		int ends_lst = n >= 4 && !strcmp(path + n - 4, ".lst");

		*kind = ends_lst ? TOPOLOGY_SUBNET_LST : TOPOLOGY_NETFILE;
	}
	return snprintf(file, size, "%s", path) >= (int)size ? -1 : 0;
}

int fabric_load_topology(struct fabric *f, const char *path, const struct topology_opts *o,
			 char *file, size_t size, struct fab_error *err)
{
	char own[PATH_MAX];
	enum topology_format kind = o->format;
	const char *source = path;

	/* A name that must be resolved needs room for the result even when nobody asks for it. */
	if (!file && o->format == TOPOLOGY_BY_NAME) {
		file = own;
		size = sizeof(own);
	}
	if (file) {
		if (topology_resolve(path, o->format, file, size, &kind)) {
			fab_error_set(err, "%s: path too long", path);
			return -1;
		}
		source = file;
	}
	sn_assert(kind == TOPOLOGY_NETFILE || kind == TOPOLOGY_SUBNET_LST);
	/* The callers took LMC and VLs from their command lines, where the ranges were checked. */
	sn_assert(o->net.lmc <= 7);
	if (kind == TOPOLOGY_SUBNET_LST) {
		sn_assert(o->lst_op_vls >= 1 && o->lst_op_vls <= 15);
		return fabric_load_subnet_lst(f, source, o->net.lmc, o->lst_op_vls, err);
	}
	sn_assert(o->net.op_vls >= 1 && o->net.op_vls <= 15);
	return fabric_load_netfile(f, source, &o->net, err);
}
