/*
 * testfab.h - small fabrics built in memory for the unit tests: rings, tori and trees of
 * switches with hosts, through the same builder API the loaders use.
 */
#ifndef SARNUE_TEST_TESTFAB_H
#define SARNUE_TEST_TESTFAB_H

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fabric/fabric.h"

/*
 * nsw switches, hosts[i] hosts on switch i; links[] lists switch pairs (a, b) to connect, npairs
 * of them.  Switch i gets GUID 0x1000 + i (so it is switch index i), the k-th host overall GUID
 * 0x100000 + 16 * k.  Hosts are named "h<switch>.<j>", or "host<k>" with global_names.
 */
static inline int testfab_build_hosts(struct fabric *f, unsigned nsw, const unsigned *hosts,
				      int global_names, const unsigned (*links)[2], unsigned npairs,
				      unsigned lmc)
{
	unsigned used[256] = { 0 };
	struct fab_error err;
	unsigned i, j, k = 0;
	char name[32];

	fabric_init(f);
	/* 32 ports, or as many as the switch's hosts and links need. */
	for (i = 0; i < nsw; i++)
		used[i] = hosts[i];
	for (i = 0; i < npairs; i++) {
		used[links[i][0]]++;
		used[links[i][1]]++;
	}
	for (i = 0; i < nsw; i++) {
		snprintf(name, sizeof(name), "sw%u", i);
		if (fabric_add_node(f, FAB_SWITCH, 0x1000 + i, used[i] > 32 ? used[i] : 32, name,
				    name) == FAB_NONE)
			return -1;
		used[i] = 0;
	}
	for (i = 0; i < nsw; i++) {
		for (j = 0; j < hosts[i]; j++, k++) {
			uint32_t h;

			if (global_names)
				snprintf(name, sizeof(name), "host%u", k);
			else
				snprintf(name, sizeof(name), "h%u.%u", i, j);
			h = fabric_add_node(f, FAB_CA, 0x100000 + 16 * k, 1, name, name);
			if (h == FAB_NONE || fabric_link(f, i, ++used[i], h, 1, &err))
				return -1;
		}
	}
	for (i = 0; i < npairs; i++)
		if (fabric_link(f, links[i][0], ++used[links[i][0]], links[i][1],
				++used[links[i][1]], &err))
			return -1;
	for (i = 0; i < f->nports; i++)
		if (f->ports[i].remote != FAB_NONE)
			f->ports[i].state = FAB_PORT_ACTIVE;
	return fabric_assign_lids(f, lmc, &err);
}

/* nsw switches with `hosts` hosts each (see testfab_build_hosts). */
static inline int testfab_build(struct fabric *f, unsigned nsw, unsigned hosts,
				const unsigned (*links)[2], unsigned npairs, unsigned lmc)
{
	unsigned per_switch[256], i;

	for (i = 0; i < nsw && i < 256; i++)
		per_switch[i] = hosts;
	return testfab_build_hosts(f, nsw, per_switch, 0, links, npairs, lmc);
}

/* Ring of n switches. */
static inline unsigned testfab_ring(unsigned (*links)[2], unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		links[i][0] = i;
		links[i][1] = (i + 1) % n;
	}
	return n;
}

/*
 * X x Y x Z torus (dimensions > 2 wrap); with skip >= 0 that switch is left out and the others
 * renumbered, so build it with x * y * z - 1 switches.
 */
static inline unsigned testfab_torus(unsigned (*links)[2], unsigned x, unsigned y, unsigned z,
				     int skip)
{
	unsigned dims[3] = { x, y, z }, n = 0, i, d;

	for (i = 0; i < x * y * z; i++) {
		unsigned c[3] = { i % x, (i / x) % y, i / (x * y) };

		for (d = 0; d < 3; d++) {
			unsigned nc[3] = { c[0], c[1], c[2] }, k;

			if (dims[d] < 2 || (dims[d] == 2 && c[d] == 1))
				continue;
			if (c[d] + 1 == dims[d] && dims[d] == 2)
				continue;
			nc[d] = (c[d] + 1) % dims[d];
			k = nc[0] + x * (nc[1] + y * nc[2]);
			if ((int)i == skip || (int)k == skip)
				continue;
			links[n][0] = skip >= 0 && i > (unsigned)skip ? i - 1 : i;
			links[n][1] = skip >= 0 && k > (unsigned)skip ? k - 1 : k;
			n++;
		}
	}
	return n;
}

/* Whether a helper thread can run on another CPU than the caller's (thread_start_beside). */
static inline int testfab_other_cpu(void)
{
	cpu_set_t set;

	return !sched_getaffinity(0, sizeof(set), &set) && CPU_COUNT(&set) > 1;
}

/* 2-level fat tree: 4 spines (0..3), 6 leaves (4..9) with hosts on the leaves only. */
static inline int testfab_fat_tree(struct fabric *f, unsigned lmc)
{
	unsigned links[24][2], n = 0, s, l;
	struct fab_error err;
	uint32_t i;

	for (l = 0; l < 6; l++)
		for (s = 0; s < 4; s++) {
			links[n][0] = 4 + l;
			links[n][1] = s;
			n++;
		}
	if (testfab_build(f, 10, 0, (const unsigned(*)[2])links, n, lmc))
		return -1;
	/* Hosts on leaves: add them to the free ports 5.. of switches 4..9. */
	for (l = 0; l < 6; l++)
		for (i = 0; i < 3; i++) {
			char name[16];
			uint32_t h;

			snprintf(name, sizeof(name), "h%u.%u", l, i);
			h = fabric_add_node(f, FAB_CA, 0x900000 + 16 * (l * 3 + i), 1, name, name);
			if (h == FAB_NONE || fabric_link(f, 4 + l, 5 + i, h, 1, &err))
				return -1;
			f->ports[f->nodes[h].first_port + 1].state = FAB_PORT_ACTIVE;
			fabric_port(f, 4 + l, 5 + i)->state = FAB_PORT_ACTIVE;
		}
	return fabric_assign_lids(f, lmc, &err);
}

/*
 * 4-ary 3-tree: levels of 16 switches (leaves 0..15 with 4 hosts each, middle 16..31, top
 * 32..47); switch w of top-down level l links to the switches of level l + 1 whose base-4 digits
 * differ from w only in digit l.
 */
static inline int testfab_4ary_3tree(struct fabric *f)
{
	unsigned links[128][2], hosts[48] = { 0 }, n = 0, l, w, x;

	for (l = 0; l < 2; l++)
		for (w = 0; w < 16; w++)
			for (x = 0; x < 4; x++) {
				unsigned other = l ? (w & ~3u) | x : (w & 3u) | x << 2;

				links[n][0] = (2 - l) * 16 + w;
				links[n][1] = (1 - l) * 16 + other;
				n++;
			}
	for (w = 0; w < 16; w++)
		hosts[w] = 4;
	return testfab_build_hosts(f, 48, hosts, 0, (const unsigned(*)[2])links, n, 0);
}

/* Every port of the fabric gets vls operational data VLs. */
static inline void testfab_set_vls(struct fabric *f, unsigned vls)
{
	uint32_t p;

	for (p = 0; p < f->nports; p++)
		f->ports[p].op_vls = (uint8_t)vls;
}

/* Writes text to a new temporary file made from the mkstemp() template path; 0 or -1. */
static inline int testfab_write_file(char *path, const char *text)
{
	int fd = mkstemp(path);
	ssize_t len = (ssize_t)strlen(text);

	if (fd < 0)
		return -1;
	if (write(fd, text, (size_t)len) != len) {
		close(fd);
		return -1;
	}
	return close(fd);
}

#endif
