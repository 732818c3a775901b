/*
 * test_mcfdbs.c - the multicast dump loader (fabric/mcfdbs.c) on files OpenSM really wrote
 * under ibsim (test/data/mcast/torus3x3, see its README), and on broken variants, whose errors
 * must name the file and the right line and leave the model as it was.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fabric/loaders.h"
#include "fabric/mcast.h"
#include "test/unit/check.h"

#define SW_GUID(i) (0x200000ull + (i)) /* sarnue gen's switch GUIDs, S-0001 is 0x200000 */

static char data_dir[4096];

static const char *data(const char *name)
{
	/* Two at a time: a call passes both the MFT and the SA dump path. */
	static char path[2][4200];
	static unsigned next;
	char *p = path[next++ % 2];

	snprintf(p, sizeof(path[0]), "%s/%s", data_dir, name);
	return p;
}

static char *write_tmp(const char *text)
{
	char *path = strdup("/tmp/sarnue-test-mcfdbs-XXXXXX");
	FILE *f;
	int fd;

	if (!path)
		return NULL;
	fd = mkstemp(path);
	if (fd < 0) {
		free(path);
		return NULL;
	}
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	return path;
}

/* Index of the port with this GUID, FAB_NONE when none. */
static uint32_t port_by_guid(const struct fabric *f, uint64_t guid)
{
	uint32_t p;

	for (p = 0; p < f->nports; p++)
		if (f->ports[p].guid == guid &&
		    (f->ports[p].num || fabric_is_switch(f, f->ports[p].node)))
			return p;
	return FAB_NONE;
}

static int has_member(const struct mcast *m, const struct mcast_group *g, uint32_t port)
{
	uint32_t i;

	for (i = 0; i < g->nmembers; i++)
		if (m->members[g->first_member + i] == port)
			return 1;
	return 0;
}

/* Whether switch sw_guid forwards group g out of exactly the ports listed (ending with -1). */
static int tree_ports(const struct fabric *f, const struct mcast *m, const struct mcast_group *g,
		      uint64_t sw_guid, const int *ports)
{
	uint64_t want[MCAST_MASK_WORDS] = { 0 };
	const struct mcast_entry *e;

	e = mcast_find_entry(m, g, fabric_switch_by_guid(f, sw_guid));
	if (!e)
		return 0;
	for (; *ports >= 0; ports++)
		mcast_mask_set(want, (unsigned)*ports);
	return !memcmp(want, e->ports, sizeof(want));
}

static void check_members(const struct fabric *f, const struct mcast *m, uint16_t mlid,
			  const uint64_t *guids, uint32_t n)
{
	const struct mcast_group *g = mcast_find_group(m, mlid);
	uint32_t i;

	CHECK(g != NULL);
	if (!g)
		return;
	CHECK(g->nmembers == n);
	for (i = 0; i < n; i++)
		CHECK(has_member(m, g, port_by_guid(f, guids[i])));
}

static const uint64_t bcast_members[] = { 0x100001, 0x100009, 0x100011, 0x10001b, 0x100023 };
static const uint64_t sl0_members[] = { 0x100003, 0x100011, 0x100021 };
static const uint64_t sl1_members[] = { 0x100009, 0x100015, 0x100019 };

/* Both files: three groups with the SA's SLs and members, and OpenSM's trees. */
static void test_real_with_sa(const struct fabric *f)
{
	struct fab_error err = { "" };
	const struct mcast_group *g;
	struct mcast m;

	mcast_init(&m);
	CHECK(mcast_load_mcfdbs(&m, f, data("opensm.mcfdbs"), data("opensm-sa.dump"), &err) == 0);
	if (err.msg[0])
		fprintf(stderr, "%s\n", err.msg);
	CHECK(m.ngroups == 3);
	CHECK(m.ngroups == 3 && m.groups[0].mlid == 0xc000 && m.groups[1].mlid == 0xc001 &&
	      m.groups[2].mlid == 0xc002);
	g = mcast_find_group(&m, 0xc000);
	CHECK(g && g->sl == 0 && g->nentries == 6);
	if (g) {
		CHECK(tree_ports(f, &m, g, SW_GUID(0), (const int[]){ 1, 3, 4, 6, -1 }));
		CHECK(tree_ports(f, &m, g, SW_GUID(1), (const int[]){ 4, 5, -1 }));
		CHECK(tree_ports(f, &m, g, SW_GUID(8), (const int[]){ 2, 5, -1 }));
		CHECK(mcast_find_entry(&m, g, fabric_switch_by_guid(f, SW_GUID(3))) == NULL);
	}
	g = mcast_find_group(&m, 0xc001);
	CHECK(g && g->sl == 0 && g->nentries == 5);
	g = mcast_find_group(&m, 0xc002);
	CHECK(g && g->sl == 1 && g->nentries == 4);
	if (g)
		CHECK(tree_ports(f, &m, g, SW_GUID(8), (const int[]){ 3, 5, 6, -1 }));
	check_members(f, &m, 0xc000, bcast_members, 5);
	check_members(f, &m, 0xc001, sl0_members, 3);
	/* The send-only member (H-0013, scope_state 0x04) is a member too: OpenSM's tree reaches
	 * it. */
	check_members(f, &m, 0xc002, sl1_members, 3);
	mcast_free(&m);
}

/* opensm.mcfdbs alone: SL unknown, members the end ports the trees reach (here the same). */
static void test_real_without_sa(const struct fabric *f)
{
	struct fab_error err = { "" };
	struct mcast m;
	uint32_t i;

	mcast_init(&m);
	CHECK(mcast_load_mcfdbs(&m, f, data("opensm.mcfdbs"), NULL, &err) == 0);
	CHECK(m.ngroups == 3);
	for (i = 0; i < m.ngroups; i++)
		CHECK(m.groups[i].sl == MCAST_SL_UNKNOWN);
	check_members(f, &m, 0xc000, bcast_members, 5);
	check_members(f, &m, 0xc001, sl0_members, 3);
	check_members(f, &m, 0xc002, sl1_members, 3);
	mcast_free(&m);
}

/* What `sarnue route` writes, an empty opensm.mcfdbs, is a fabric without groups. */
static void test_empty(const struct fabric *f)
{
	struct fab_error err = { "" };
	char *path = write_tmp("");
	struct mcast m;

	mcast_init(&m);
	CHECK(path && mcast_load_mcfdbs(&m, f, path, NULL, &err) == 0 && m.ngroups == 0);
	if (path)
		unlink(path);
	free(path);
	mcast_free(&m);
}

/*
 * A broken file (mcfdbs_text, or with the real opensm.mcfdbs the SA dump sa_text) must fail
 * with "FILE:LINE: ..." containing needle, and leave the three groups loaded before in place.
 */
static void expect_error(const struct fabric *f, const char *mcfdbs_text, const char *sa_text,
			 unsigned line, const char *needle)
{
	struct fab_error err = { "" };
	char *path = write_tmp(mcfdbs_text ? mcfdbs_text : sa_text);
	char want[4200];
	struct mcast m;
	int rc;

	mcast_init(&m);
	CHECK(mcast_load_mcfdbs(&m, f, data("opensm.mcfdbs"), data("opensm-sa.dump"), &err) == 0);
	CHECK(path != NULL);
	if (!path)
		return;
	if (mcfdbs_text)
		rc = mcast_load_mcfdbs(&m, f, path, NULL, &err);
	else
		rc = mcast_load_mcfdbs(&m, f, data("opensm.mcfdbs"), path, &err);
	snprintf(want, sizeof(want), "%s:%u: ", path, line);
	CHECK(rc == -1);
	if (rc != -1 || strncmp(err.msg, want, strlen(want)) || !strstr(err.msg, needle)) {
		fprintf(stderr, "wanted '%s...%s', got '%s'\n", want, needle, err.msg);
		check_failures++;
	}
	CHECK(m.ngroups == 3 && mcast_find_group(&m, 0xc002) &&
	      mcast_find_group(&m, 0xc002)->sl == 1);
	unlink(path);
	free(path);
	mcast_free(&m);
}

static void test_broken(const struct fabric *f)
{
	static const char sw0[] = "\nSwitch 0x0000000000200000\nLID    : Out Port(s)\n";
	char buf[512];

	snprintf(buf, sizeof(buf), "%s0xC000 : 0x001  0x009 \n", sw0);
	expect_error(f, buf, NULL, 4, "port 9 beyond the switch's 6 ports");
	expect_error(f, "\n0xC000 : 0x001 \n", NULL, 2, "before any \"Switch 0x...\" line");
	expect_error(f, "\nSwitch 0x0000000000999999\n", NULL, 2, "is not in the topology");
	snprintf(buf, sizeof(buf), "%s0x0010 : 0x001 \n", sw0);
	expect_error(f, buf, NULL, 4, "outside the multicast range");
	snprintf(buf, sizeof(buf), "%s0xC000 : 0x001 \n0xC001 : 0x002 \n0xC000 : 0x003 \n", sw0);
	expect_error(f, buf, NULL, 6, "MLID 0xC000 listed twice");
	snprintf(buf, sizeof(buf), "%s0xC000 : \n", sw0);
	expect_error(f, buf, NULL, 4, "without ports");
	snprintf(buf, sizeof(buf), "%s0xC000 : 0x001 0x00z \n", sw0);
	expect_error(f, buf, NULL, 4, "expected a port number");
	snprintf(buf, sizeof(buf), "%s\nSwitch 0x0000000000200000\n", sw0);
	expect_error(f, buf, NULL, 5, "a second block");
	expect_error(f, "hello\n", NULL, 1, "not a line of opensm.mcfdbs");

	expect_error(f, NULL, "mcm_port: port_gid=0xfe80000000000000:0x0000000000100001\n", 1,
		     "before any \"MC Group\" line");
	expect_error(
		f, NULL,
		"MC Group 0xc001 : mgid=0xff15000000000000:0x00000000005a0001 mlid=0xc001 "
		"sl_flow_hop=0x00000000\n\nmcm_port: port_gid=0xfe80000000000000:0x0000000000abcdef "
		"scope_state=0x01 proxy_join=0x0\n",
		3, "member port GUID 0x0000000000abcdef is not in the topology");
	expect_error(f, NULL,
		     "MC Group 0xc001 : mgid=0xff15000000000000:0x00000000005a0001 mlid=0xc002 "
		     "sl_flow_hop=0x00000000\n",
		     1, "differs from the group's 0xc001");
	expect_error(f, NULL, "MC Group 0xc001 : mgid=0xff15000000000000:0x1 mlid=0xc001\n", 1,
		     "expected sl_flow_hop=0x");
	expect_error(f, NULL,
		     "MC Group 0xc001 : mgid=0xff15000000000000:0x1 mlid=0xc001 "
		     "sl_flow_hop=0x00000000\n\nMC Group 0xc001 : mgid=0xff15000000000000:0x2 "
		     "mlid=0xc001 sl_flow_hop=0x20000000\n",
		     3, "MLID 0xc001 has SL 2 here but SL 0 at line 1");
	expect_error(f, NULL, "GUIDInfo Record: whatever\nMC Grope\n", 2,
		     "not a line of an OpenSM SA dump");
}

int main(void)
{
	const char *srcdir = getenv("SARNUE_SRCDIR");
	struct fab_error err = { "" };
	struct fabric f;

	snprintf(data_dir, sizeof(data_dir), "%s/test/data/mcast/torus3x3",
		 srcdir && *srcdir ? srcdir : ".");
	fabric_init(&f);
	if (fabric_load_subnet_lst(&f, data("opensm-subnet.lst"), 0, 1, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	CHECK(f.nswitches == 9);
	test_real_with_sa(&f);
	test_real_without_sa(&f);
	test_empty(&f);
	test_broken(&f);
	fabric_free(&f);
	return CHECK_RESULT();
}
