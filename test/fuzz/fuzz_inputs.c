/*
 * fuzz_inputs.c - a libFuzzer target for every reader of outside input: what operators write
 * (net files, option lines, job maps), what OpenSM dumps (opensm-subnet.lst, opensm.fdbs, the
 * path-SL and SL2VL dumps), what Slurm prints or reads (squeue JSON and text, host lists, time
 * limits, the switch lines of topology.conf), the control socket's topology reply, and the MADs
 * of the five-phase update.  Built and run by test/fuzz/run.sh, which make check runs for a
 * minute from a seed corpus.
 *
 * The first input byte picks the reader (enum kind), the rest is its input.  Beyond crashes and
 * sanitizer reports, a net file that loads is routed by every engine, and an engine that
 * returns tables the verifier rejects aborts the run: that would be tables pushed to OpenSM.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engines/engines.h"
#include "fabric/fabric.h"
#include "lib/hostlist.h"
#include "filterd/jobfilter.h"
#include "fabric/jobmap.h"
#include "fabric/loaders.h"
#include "fabric/traffic.h"
#include "engines/options.h"
#include "filterd/slurmjobs.h"
#include "update/wire.h"

enum kind {
	K_HOSTLIST,
	K_SQUEUE_JSON,
	K_SQUEUE_TEXT,
	K_SLURM_TIME,
	K_OPTIONS,
	K_CTL_TOPOLOGY,
	K_JOB_MAP,
	K_WIRE,
	K_NETFILE,
	K_SUBNET_LST,
	K_DUMPS,
	K_SLURM_CONF,
	K_TRAFFIC,
	K_KINDS
};

/* Routing is the slow part: bigger fabrics only get parsed. */
#define FUZZ_ROUTE_MAX_SWITCHES 24

/*
 * The dump readers read tables for the fabric of the net file SARNUE_FUZZ_NET names (run.sh
 * sets it and seeds the corpus with that fabric's dumps), loaded once.
 */
static struct fabric dump_fabric;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct netfile_opts opts = { .lmc = 0, .op_vls = 8 };
	const char *net = getenv("SARNUE_FUZZ_NET");
	struct fab_error err;

	(void)argc;
	(void)argv;
	fabric_init(&dump_fabric);
	if (!net || fabric_load_netfile(&dump_fabric, net, &opts, &err)) {
		fprintf(stderr, "fuzz: SARNUE_FUZZ_NET: %s\n", net ? err.msg : "not set");
		exit(2);
	}
	return 0;
}

static void ignore_option_error(void *ctx, const char *msg)
{
	(void)ctx;
	(void)msg;
}

/* The readers take paths: the input becomes an anonymous file named by /proc/self/fd. */
static int as_file(const char *text, size_t len, char *path, size_t size)
{
	int fd = memfd_create("fuzz", 0);

	if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
		perror("fuzz: memfd");
		abort();
	}
	snprintf(path, size, "/proc/self/fd/%d", fd);
	return fd;
}

static void jobs_against_topology(const struct slurm_jobs *jobs)
{
	static const char topo_text[] = "host node1 0x1 0x2 0x10\nhost node2 0x3 0x4 0x11\n"
					"host node3 0x5 0x6 0x10\n";
	/* Below the daemon's budget: a poll of 2^22 hosts under ASan would count as a hang. */
	struct filter_conf conf = { .max_hosts = 1u << 16 };
	struct fab_error err;
	struct jobset js;
	struct topo t;

	topo_init(&t);
	jobset_init(&js);
	if (!topo_from_ctl(&t, topo_text, "topology", &err) &&
	    !jobset_build(&js, jobs, &t, &conf, &err)) {
		char *map = NULL;
		size_t len = 0;
		FILE *out = open_memstream(&map, &len);

		if (out) {
			jobset_write_map(&js, &t, out);
			fclose(out);
		}
		free(map);
	}
	jobset_free(&js);
	topo_free(&t);
}

static void fuzz_squeue(const char *text, size_t len, int json)
{
	struct slurm_jobs jobs;
	struct fab_error err;

	slurm_jobs_init(&jobs);
	if (!(json ? slurm_jobs_parse_json : slurm_jobs_parse_text)(&jobs, text, len, "squeue",
								    &err))
		jobs_against_topology(&jobs);
	slurm_jobs_free(&jobs);
}

static void fuzz_wire(const uint8_t *mad, size_t len)
{
	struct wire_path_report report;
	struct wire_notice notice;
	struct wire_mad_hdr hdr;
	struct wire_ack ack;
	char err[256];

	if (!wire_report_decode(mad, len, &hdr, &notice, err, sizeof(err))) {
		wire_path_report_decode(&notice, &report, err, sizeof(err));
		wire_ack_decode(&notice, &ack, err, sizeof(err));
	}
	if (!wire_notice_decode(mad, len, &notice, err, sizeof(err))) {
		wire_path_report_decode(&notice, &report, err, sizeof(err));
		wire_ack_decode(&notice, &ack, err, sizeof(err));
	}
	wire_informinfo_resp_decode(mad, len, 1, 68, err, sizeof(err));
}

/* Routes f with one engine; tables that return as verified must be clean. */
static void route_one(const struct fabric *f, const char *engine, unsigned vls, int planes)
{
	struct sarnue_options o;
	struct engine_result res;
	struct fab_error err;
	struct routing r;

	options_defaults(&o);
	o.nue_vls = vls;
	o.nue_threads = 1;
	o.planes = planes;
	if (routing_init(&r, f, engine))
		abort();
	if (!engine_run(engine, f, &o, &r, &res, &err) && res.verified &&
	    (res.verify.unreachable || res.verify.loops || res.verify.credit_loop_vls)) {
		fprintf(stderr, "fuzz: %s returned tables that fail the verifier\n", engine);
		abort();
	}
	routing_free(&r);
}

static void fuzz_netfile(const char *text, size_t len, unsigned variant)
{
	struct netfile_opts opts = { .lmc = variant & 1, .op_vls = 1 + variant % 8 };
	struct fab_error err;
	struct fabric f;
	char path[64];
	int fd = as_file(text, len, path, sizeof(path));

	fabric_init(&f);
	if (!fabric_load_netfile(&f, path, &opts, &err) && f.nswitches <= FUZZ_ROUTE_MAX_SWITCHES) {
		route_one(&f, "sar-updn", 1, 0);
		route_one(&f, "sar-dfsssp", 1, 0);
		route_one(&f, "sar-nue", 1 + (variant >> 1) % opts.op_vls, (variant >> 4) & 1);
	}
	fabric_free(&f);
	close(fd);
}

static void fuzz_subnet_lst(const char *text, size_t len, unsigned variant)
{
	struct fab_error err;
	struct fabric f;
	char path[64];
	int fd = as_file(text, len, path, sizeof(path));

	fabric_init(&f);
	fabric_load_subnet_lst(&f, path, variant % 8, 1 + (variant >> 3) % 8, &err);
	fabric_free(&f);
	close(fd);
}

/* The LFT, path-SL and SL2VL readers on the fabric of SARNUE_FUZZ_NET. */
static void fuzz_dumps(const char *text, size_t len, unsigned variant)
{
	const struct fabric *f = &dump_fabric;
	struct fab_error err;
	struct routing r;
	char path[64];
	int fd = as_file(text, len, path, sizeof(path));

	if (routing_init(&r, f, "dump"))
		abort();
	if (variant % 3 == 0)
		routing_load_lfts(&r, f, path, &err);
	else if (variant % 3 == 1)
		routing_load_path_sl(&r, f, path, &err);
	else
		routing_load_sl2vl(&r, f, path, &err);
	routing_free(&r);
	close(fd);
}

/* slurm.conf's SwitchName lines, the filter daemon's topology without OpenSM. */
static void fuzz_slurm_conf(const char *text, size_t len)
{
	struct fab_error err;
	struct topo t;
	char path[64];
	int fd = as_file(text, len, path, sizeof(path));

	topo_init(&t);
	topo_from_slurm_conf(&t, path, &err);
	topo_free(&t);
	close(fd);
}

/* A traffic matrix, bound to the dump fabric (ring5's hostnames) when it parses. */
static void fuzz_traffic(const char *text)
{
	struct traffic t;
	struct fab_error err;
	char *hosts = NULL;
	size_t len = 0;

	traffic_init(&t);
	if (!traffic_parse_text(&t, text, "traffic", &err) &&
	    !traffic_bind(&t, &dump_fabric, JOB_MATCH_FIRST_WORD, NULL, &err)) {
		if (t.npairs)
			traffic_weight(&t, t.src_node ? t.src_node[0] : 0, 0);
		if (!traffic_hosts_text(&t, &hosts, &len))
			free(hosts);
	}
	traffic_free(&t);
}

static void fuzz_text(enum kind kind, const char *text, size_t len, unsigned variant)
{
	struct sarnue_options o;
	struct fab_error err;
	struct hostlist hl;
	struct job_map jm;
	struct topo t;
	uint32_t minutes;

	switch (kind) {
	case K_HOSTLIST:
		hostlist_init(&hl);
		hostlist_expand(&hl, text, len, "host list", &err);
		hostlist_free(&hl);
		break;
	case K_SQUEUE_JSON:
	case K_SQUEUE_TEXT:
		fuzz_squeue(text, len, kind == K_SQUEUE_JSON);
		break;
	case K_SLURM_TIME:
		slurm_parse_time(text, len, &minutes);
		break;
	case K_OPTIONS:
		options_defaults(&o);
		options_parse_line(&o, text, "options", 1, ignore_option_error, NULL);
		break;
	case K_CTL_TOPOLOGY:
		topo_init(&t);
		topo_from_ctl(&t, text, "topology", &err);
		topo_free(&t);
		break;
	case K_JOB_MAP:
		job_map_init(&jm);
		job_map_parse_text(&jm, text, "job map", &err);
		job_map_free(&jm);
		break;
	case K_NETFILE:
		fuzz_netfile(text, len, variant);
		break;
	case K_SUBNET_LST:
		fuzz_subnet_lst(text, len, variant);
		break;
	case K_DUMPS:
		fuzz_dumps(text, len, variant);
		break;
	case K_SLURM_CONF:
		fuzz_slurm_conf(text, len);
		break;
	case K_TRAFFIC:
		fuzz_traffic(text);
		break;
	default:
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum kind kind;
	unsigned variant;
	char *text;

	if (size < 1)
		return 0;
	/* Bits 0-3 pick the reader, bits 4-7 vary its settings (LMC, VLs, which dump). */
	kind = (enum kind)((data[0] & 15) % K_KINDS);
	variant = data[0] >> 4;
	if (kind == K_WIRE) {
		fuzz_wire(data + 1, size - 1);
		return 0;
	}
	/* The text readers get what their callers give them: NUL-terminated text. */
	text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	fuzz_text(kind, text, size - 1, variant);
	free(text);
	return 0;
}
