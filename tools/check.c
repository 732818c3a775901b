/*
 * check.c - `sarnue check`: loads a topology and routing tables (OpenSM dump files, sarnue's own
 * dumps, or the live fabric through libibmad) and runs the verifier on them, so any engine's
 * result, ours or OpenSM's built-in ones, is judged by the same code the plugin uses.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "live.h"
#include "loaders.h"
#include "verify.h"

static const char check_usage[] =
	"usage: sarnue check [OPTIONS] --dump-dir DIR\n"
	"       sarnue check [OPTIONS] --subnet FILE --fdbs FILE [--path-sl FILE] [--sl2vl FILE]\n"
	"       sarnue check [OPTIONS] --live [--ca NAME] [--port N] [--path-sl FILE]\n"
	"\n"
	"Verifies unicast routing tables: every source port must reach every destination LID,\n"
	"no path may loop, and the channel dependency graph of every VL must be acyclic (no\n"
	"credit loop; one cycle is printed when found).  Also reports hop statistics and the\n"
	"SLs and VLs used.\n"
	"\n"
	"inputs:\n"
	"  --dump-dir DIR   OpenSM's dump_files_dir: opensm-subnet.lst and opensm.fdbs, plus\n"
	"                   sarnue-path-sl.dump and sarnue-sl2vl.dump when present (without\n"
	"                   them every path is taken to use SL 0 on VL 0, as ibdmchk does)\n"
	"  --subnet FILE    topology in opensm-subnet.lst format\n"
	"  --fdbs FILE      LFTs in opensm.fdbs or opensm-lfts.dump format\n"
	"  --path-sl FILE   path SLs ('0xGUID DLID SL' lines); also with --live, since\n"
	"                   switches hold no path SLs (the SM hands them out in path records)\n"
	"  --sl2vl FILE     SL2VL tables ('0xGUID IN OUT' and 8 hex bytes)\n"
	"  --live           discover the fabric and read LFTs and SL2VL tables from the switches\n"
	"                   through libibumad (real HCA, or ibsim under umad2sim)\n"
	"  --ca NAME, --port N   local HCA and port for --live (default: first active)\n"
	"\n"
	"options:\n"
	"  --lmc N          LMC of end ports (dump files do not record it; default 0)\n"
	"  --json           one JSON object on stdout instead of text\n"
	"  -h, --help       this text\n"
	"\n"
	"exit status: 0 verified, 1 unreachable pairs, loops or credit loops, 2 usage,\n"
	"3 unreadable or malformed input.\n";

struct check_args {
	const char *dump_dir, *subnet, *fdbs, *path_sl, *sl2vl, *ca;
	int json, live, port;
	unsigned lmc;
};

static char *join(const char *dir, const char *name)
{
	size_t len = strlen(dir) + strlen(name) + 2;
	char *p = malloc(len);

	if (p)
		snprintf(p, len, "%s/%s", dir, name);
	return p;
}

static int parse_args(int argc, char **argv, struct check_args *a)
{
	static const struct option longopts[] = { { "dump-dir", required_argument, NULL, 'd' },
						  { "subnet", required_argument, NULL, 's' },
						  { "fdbs", required_argument, NULL, 'f' },
						  { "path-sl", required_argument, NULL, 'c' },
						  { "sl2vl", required_argument, NULL, 'v' },
						  { "lmc", required_argument, NULL, 'l' },
						  { "json", no_argument, NULL, 'j' },
						  { "live", no_argument, NULL, 'L' },
						  { "ca", required_argument, NULL, 'C' },
						  { "port", required_argument, NULL, 'P' },
						  { "help", no_argument, NULL, 'h' },
						  { NULL, 0, NULL, 0 } };
	int c;
	char *end;

	memset(a, 0, sizeof(*a));
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			a->dump_dir = optarg;
			break;
		case 's':
			a->subnet = optarg;
			break;
		case 'f':
			a->fdbs = optarg;
			break;
		case 'c':
			a->path_sl = optarg;
			break;
		case 'v':
			a->sl2vl = optarg;
			break;
		case 'j':
			a->json = 1;
			break;
		case 'L':
			a->live = 1;
			break;
		case 'C':
			a->ca = optarg;
			break;
		case 'P':
			a->port = (int)strtol(optarg, &end, 10);
			if (*end || a->port < 0 || a->port > 254) {
				cli_error("check", "--port %s: expected a port number", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'l':
			a->lmc = (unsigned)strtoul(optarg, &end, 10);
			if (*end || a->lmc > 7) {
				cli_error("check", "--lmc %s: expected 0..7", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			fputs(check_usage, stdout);
			return -1;
		default:
			fputs(check_usage, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		cli_error("check", "unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	if (!a->live && !a->dump_dir && !(a->subnet && a->fdbs)) {
		cli_error("check", "give --dump-dir DIR, --subnet and --fdbs, or --live");
		return EXIT_USAGE;
	}
	return 0;
}

/* Fills in the dump-directory file names; optional SL files only when they exist. */
static int resolve_dump_dir(struct check_args *a, char **owned)
{
	owned[0] = join(a->dump_dir, "opensm-subnet.lst");
	owned[1] = join(a->dump_dir, "opensm.fdbs");
	owned[2] = join(a->dump_dir, "sarnue-path-sl.dump");
	owned[3] = join(a->dump_dir, "sarnue-sl2vl.dump");
	if (!owned[0] || !owned[1] || !owned[2] || !owned[3])
		return -1;
	if (!a->subnet)
		a->subnet = owned[0];
	if (!a->fdbs)
		a->fdbs = owned[1];
	if (!a->path_sl && !access(owned[2], R_OK))
		a->path_sl = owned[2];
	if (!a->sl2vl && !access(owned[3], R_OK))
		a->sl2vl = owned[3];
	return 0;
}

static int load_from_files(const struct check_args *a, struct fabric *f, struct routing *r,
			   struct fab_error *err)
{
	if (fabric_load_subnet_lst(f, a->subnet, a->lmc, 15, err))
		return -1;
	if (routing_init(r, f, "dump")) {
		fab_error_set(err, "out of memory");
		return -1;
	}
	if (routing_load_lfts(r, f, a->fdbs, err))
		return -1;
	if (a->path_sl && routing_load_path_sl(r, f, a->path_sl, err))
		return -1;
	if (a->sl2vl && routing_load_sl2vl(r, f, a->sl2vl, err))
		return -1;
	return 0;
}

int check_main(int argc, char **argv)
{
	struct check_args a;
	struct fabric f;
	struct routing r;
	struct verify_report rep;
	struct fab_error err = { "" };
	char *owned[4] = { NULL, NULL, NULL, NULL };
	int rc, i;

	rc = parse_args(argc, argv, &a);
	if (rc)
		return rc < 0 ? 0 : rc;
	fabric_init(&f);
	memset(&r, 0, sizeof(r));
	if (a.dump_dir && resolve_dump_dir(&a, owned)) {
		cli_error("check", "out of memory");
		rc = EXIT_INPUT;
		goto out;
	}
	if (a.live ? live_load(&f, &r, a.ca, a.port, &err) ||
			     (a.path_sl && routing_load_path_sl(&r, &f, a.path_sl, &err))
		   : load_from_files(&a, &f, &r, &err)) {
		cli_error("check", "%s", err.msg);
		rc = EXIT_INPUT;
		goto out;
	}
	if (verify_routing(&f, &r, &rep)) {
		cli_error("check", "out of memory");
		rc = EXIT_INPUT;
		goto out;
	}
	if (a.json)
		verify_print_json(&rep, a.live ? "live" : "dump", stdout);
	else
		verify_print_text(&rep, stdout);
	rc = verify_ok(&rep) ? EXIT_VERIFIED : EXIT_ROUTING_FAULT;
out:
	routing_free(&r);
	fabric_free(&f);
	for (i = 0; i < 4; i++)
		free(owned[i]);
	return rc;
}
