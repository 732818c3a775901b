/*
 * sarnue gen: generates synthetic InfiniBand fabrics (fat trees: XGFTs,
 * k-ary n-trees, tapered real-life trees and multi-island machines; tori,
 * meshes and HyperX; random regular graphs, dragonflies, Slim Flies and
 * Kautz graphs; the exascale families Fishnet, Fishnet-lite, Multi-Layer
 * Full-Mesh, Orthogonal Fat Tree, Cray Cascade and Dragonfly+), optionally
 * with seeded faults, and writes them as ibsim net files, which ibnetdiscover
 * readers accept as well.  Used for tests, benchmarks and operators'
 * what-if studies, so the output must be a pure function of the command line.
 *
 * This file is the entry point: the option table, parsing, the checks common to all
 * families, and the dispatch to a family's builder.  Each family lives in its own file
 * (fattree.c, torus.c, random.c, hyperx.c, dragonfly.c, slimfly.c, kautz.c, fishnet.c,
 * mlfm.c, oft.c, cascade.c, dfplus.c); build.c holds the
 * fabric they fill in, faults.c the removals, write.c the net file, help.c the help text.
 */
#include "cli/cli.h"
#include "cli/gen/gen.h"
#include "cli/gen/gen_private.h"
#include "lib/numbers.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_HOSTNAME "node%04d"

#define TB(t) (1U << (t))
#define LPP_TOPOS                                                                \
	(TB(TOPO_FATTREE2) | TB(TOPO_TORUS) | TB(TOPO_XGFT) | TB(TOPO_FATTREE) | \
	 TB(TOPO_ISLANDS) | TB(TOPO_HYPERX) | TB(TOPO_SLIMFLY) | TB(TOPO_KAUTZ))
#define HPS_TOPOS                                                                                 \
	(TB(TOPO_TORUS) | TB(TOPO_RANDOM) | TB(TOPO_HYPERX) | TB(TOPO_SLIMFLY) | TB(TOPO_KAUTZ) | \
	 TB(TOPO_FISHNET) | TB(TOPO_FISHNET_LITE) | TB(TOPO_OFT))
#define FISHNETS (TB(TOPO_FISHNET) | TB(TOPO_FISHNET_LITE))

static const struct {
	const char *name;
	enum topo topo;
} topo_names[] = {
	{ "fattree2", TOPO_FATTREE2 },
	{ "ktree", TOPO_KTREE },
	{ "torus", TOPO_TORUS },
	{ "random", TOPO_RANDOM },
	{ "dragonfly", TOPO_DRAGONFLY },
	{ "xgft", TOPO_XGFT },
	{ "fattree", TOPO_FATTREE },
	{ "islands", TOPO_ISLANDS },
	{ "hyperx", TOPO_HYPERX },
	{ "slimfly", TOPO_SLIMFLY },
	{ "kautz", TOPO_KAUTZ },
	{ "fishnet", TOPO_FISHNET },
	{ "fishnet-lite", TOPO_FISHNET_LITE },
	{ "mlfm", TOPO_MLFM },
	{ "oft", TOPO_OFT },
	{ "cascade", TOPO_CASCADE },
	{ "dfplus", TOPO_DFPLUS },
};

#define TOPO_LIST                                                                              \
	"fattree2, ktree, torus, random, dragonfly, xgft, fattree, islands, hyperx, slimfly, " \
	"kautz, fishnet, fishnet-lite, mlfm, oft, cascade or dfplus"

enum opt_kind {
	ARG_NONE,
	ARG_NUM,
	ARG_STR,
};

struct opt_spec {
	const char *name;
	enum opt_id id;
	enum opt_kind kind;
	unsigned int topos; /* topologies taking it; 0 means all */
};

static const struct opt_spec opt_specs[] = {
	{ "--help", OPT_HELP, ARG_NONE, 0 },
	{ "-h", OPT_HELP, ARG_NONE, 0 },
	{ "--version", OPT_VERSION, ARG_NONE, 0 },
	{ "-V", OPT_VERSION, ARG_NONE, 0 },
	{ "--quiet", OPT_QUIET, ARG_NONE, 0 },
	{ "-q", OPT_QUIET, ARG_NONE, 0 },
	{ "-o", OPT_OUT, ARG_STR, 0 },
	{ "--output", OPT_OUT, ARG_STR, 0 },
	{ "--hostname-pattern", OPT_HOSTPAT, ARG_STR, 0 },
	{ "--radix", OPT_RADIX, ARG_NUM, 0 },
	{ "--seed", OPT_SEED, ARG_STR, 0 },
	{ "--remove-links", OPT_RM_LINKS, ARG_STR, 0 },
	{ "--remove-switches", OPT_RM_SWITCHES, ARG_NUM, 0 },
	{ "--remove-switch-id", OPT_RM_SWITCH_ID, ARG_STR, 0 },
	{ "--leaves", OPT_LEAVES, ARG_NUM, TB(TOPO_FATTREE2) | TB(TOPO_DFPLUS) },
	{ "--spines", OPT_SPINES, ARG_NUM, TB(TOPO_FATTREE2) | TB(TOPO_DFPLUS) },
	{ "--hosts-per-leaf", OPT_HPL, ARG_NUM,
	  TB(TOPO_FATTREE2) | TB(TOPO_KTREE) | TB(TOPO_DFPLUS) },
	{ "--links-per-pair", OPT_LPP, ARG_NUM, LPP_TOPOS },
	{ "--k", OPT_K, ARG_NUM, TB(TOPO_KTREE) | TB(TOPO_OFT) },
	{ "--n", OPT_N, ARG_NUM, TB(TOPO_KTREE) | TB(TOPO_KAUTZ) },
	{ "--dims", OPT_DIMS, ARG_STR, TB(TOPO_TORUS) | TB(TOPO_HYPERX) },
	{ "--mesh", OPT_MESH, ARG_NONE, TB(TOPO_TORUS) },
	{ "--layers-file", OPT_LAYERS_FILE, ARG_STR, TB(TOPO_TORUS) },
	{ "--hosts-per-switch", OPT_HPS, ARG_NUM, HPS_TOPOS },
	{ "--switches", OPT_SWITCHES, ARG_NUM, TB(TOPO_RANDOM) },
	{ "--degree", OPT_DEGREE, ARG_NUM, TB(TOPO_RANDOM) },
	{ "--a", OPT_A, ARG_NUM, TB(TOPO_DRAGONFLY) },
	{ "--p", OPT_P, ARG_NUM, TB(TOPO_DRAGONFLY) | TB(TOPO_MLFM) | TB(TOPO_CASCADE) },
	{ "--h", OPT_H, ARG_NUM,
	  TB(TOPO_DRAGONFLY) | TB(TOPO_XGFT) | TB(TOPO_MLFM) | TB(TOPO_CASCADE) | TB(TOPO_DFPLUS) },
	{ "--g", OPT_G, ARG_NUM, TB(TOPO_DRAGONFLY) | TB(TOPO_CASCADE) | TB(TOPO_DFPLUS) },
	{ "--m", OPT_M, ARG_STR, TB(TOPO_XGFT) },
	{ "--w", OPT_W, ARG_STR, TB(TOPO_XGFT) },
	{ "--levels", OPT_LEVELS, ARG_NUM, TB(TOPO_FATTREE) | TB(TOPO_ISLANDS) },
	{ "--hosts", OPT_HOSTS, ARG_NUM, TB(TOPO_FATTREE) },
	{ "--taper", OPT_TAPER, ARG_STR, TB(TOPO_FATTREE) | TB(TOPO_ISLANDS) },
	{ "--islands", OPT_ISLANDS, ARG_NUM, TB(TOPO_ISLANDS) },
	{ "--hosts-per-island", OPT_HPI, ARG_NUM, TB(TOPO_ISLANDS) },
	{ "--core-taper", OPT_CORE_TAPER, ARG_STR, TB(TOPO_ISLANDS) },
	{ "--core-radix", OPT_CORE_RADIX, ARG_NUM, TB(TOPO_ISLANDS) },
	{ "--q", OPT_Q, ARG_NUM, TB(TOPO_SLIMFLY) | FISHNETS },
	{ "--d", OPT_D, ARG_NUM, TB(TOPO_KAUTZ) },
	{ "--base", OPT_BASE, ARG_STR, FISHNETS },
	{ "--l", OPT_L, ARG_NUM, TB(TOPO_MLFM) },
	{ "--black-links", OPT_BLACK, ARG_NUM, TB(TOPO_CASCADE) },
};

int gen_error(int status, const char *fmt, ...)
{
	va_list ap;

	fputs("sarnue gen: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	/* A parameter that cannot work is a usage error: say where the help is, as every tool. */
	if (status == GEN_USAGE)
		fputs(" (try 'sarnue gen --help')", stderr);
	fputc('\n', stderr);
	return status;
}

static int parse_num(const char *name, const char *val, unsigned long *out)
{
	uint64_t v;

	if (num_parse_u64(val, UINT64_MAX, &v))
		return gen_usage("%s %s: not a non-negative whole number", name, val);
	if (v > GEN_MAX_PARAM)
		return gen_usage("%s %s: larger than %lu", name, val, GEN_MAX_PARAM);
	*out = (unsigned long)v;
	return GEN_OK;
}

/* How a list option is worded: --dims 8x8x4 or --m 4,4,2. */
struct list_words {
	const char *seps;    /* separators between the numbers */
	const char *noun;    /* one number: "dimension", "value" */
	const char *example; /* the expected form */
};

static const struct list_words dims_words = { "xX", "dimension", "sizes like 8x8x4" };
static const struct list_words values_words = { ",", "value", "numbers like 4,4,2" };

/* At most max whole numbers from 1 to GEN_MAX_PARAM into out[0..*count). */
static int parse_number_list(const char *name, const char *val, const struct list_words *lw,
			     unsigned long *out, unsigned int max, unsigned int *count)
{
	const char *s = val;
	unsigned int n = 0;

	for (;;) {
		const char *start = s;
		uint64_t v;

		if (n == max)
			return gen_usage("%s %s: at most %u %ss", name, val, max, lw->noun);
		if (num_scan_u64(&s, GEN_MAX_PARAM, &v)) {
			if (s == start)
				return gen_usage("%s %s: expected %s", name, val, lw->example);
			return gen_usage("%s %s: %s too large", name, val, lw->noun);
		}
		if (!v)
			return gen_usage("%s %s: every %s must be at least 1", name, val, lw->noun);
		out[n++] = (unsigned long)v;
		if (!*s)
			break;
		if (!strchr(lw->seps, *s))
			return gen_usage("%s %s: expected %s", name, val, lw->example);
		s++;
	}
	*count = n;
	return GEN_OK;
}

static int parse_ratio(const char *name, const char *val, struct ratio *r)
{
	const char *s = val;
	uint64_t down, up;

	if (num_scan_u64(&s, UINT64_MAX, &down) || *s++ != ':' ||
	    num_scan_u64(&s, UINT64_MAX, &up) || *s)
		return gen_usage("%s %s: expected DOWN:UP such as 2:1", name, val);
	if (!down || !up || down > GEN_MAX_PORTS || up > GEN_MAX_PORTS)
		return gen_usage("%s %s: both sides must be between 1 and %d", name, val,
				 GEN_MAX_PORTS);
	r->down = (unsigned long)down;
	r->up = (unsigned long)up;
	return GEN_OK;
}

static int parse_rm_links(struct opts *o, const char *name, const char *val)
{
	size_t len = strlen(val);

	if (len && val[len - 1] == '%') {
		char number[32];
		double pct;

		if (len > sizeof(number))
			return gen_usage("%s %s: expected a count or a percentage", name, val);
		memcpy(number, val, len - 1);
		number[len - 1] = '\0';
		if (num_parse_real(number, 0, 1e18, &pct))
			return gen_usage("%s %s: expected a count or a percentage", name, val);
		if (pct > 100.0)
			return gen_usage("%s %s: percentage must be between 0%% and 100%%", name,
					 val);
		o->rm_pct = true;
		o->rm_links_pct = pct;
		return GEN_OK;
	}
	o->rm_pct = false;
	return parse_num(name, val, &o->rm_links);
}

static int apply_option(struct opts *o, const struct opt_spec *sp, const char *val)
{
	enum opt_id id = sp->id;

	o->set[id] = true;
	o->name[id] = sp->name;
	o->val[id] = val;
	if (sp->kind == ARG_NUM)
		return parse_num(sp->name, val, &o->num[id]);

	switch (id) {
	case OPT_HELP:
		o->help = true;
		break;
	case OPT_VERSION:
		o->version = true;
		break;
	case OPT_SEED:
		if (num_parse_u64(val, UINT64_MAX, &o->seed))
			return gen_usage("%s %s: not a non-negative whole number", sp->name, val);
		break;
	case OPT_DIMS:
		return parse_number_list(sp->name, val, &dims_words, o->dims, 3, &o->ndims);
	case OPT_M:
		return parse_number_list(sp->name, val, &values_words, o->m + 1, TREE_MAX_LEVELS,
					 &o->nm);
	case OPT_W:
		return parse_number_list(sp->name, val, &values_words, o->w + 1, TREE_MAX_LEVELS,
					 &o->nw);
	case OPT_TAPER:
		return parse_ratio(sp->name, val, &o->taper);
	case OPT_CORE_TAPER:
		return parse_ratio(sp->name, val, &o->core_taper);
	case OPT_RM_LINKS:
		return parse_rm_links(o, sp->name, val);
	case OPT_RM_SWITCH_ID:
		o->rm_ids[o->n_rm_ids++] = val;
		break;
	default:
		/* plain strings and flags: recorded above */
		break;
	}
	return GEN_OK;
}

static const struct opt_spec *find_opt(const char *arg, size_t len)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(opt_specs); i++)
		if (strlen(opt_specs[i].name) == len && !strncmp(opt_specs[i].name, arg, len))
			return &opt_specs[i];
	return NULL;
}

static int parse_option(struct opts *o, int argc, char **argv, int *i)
{
	const char *arg = argv[*i];
	const char *val = NULL;
	const struct opt_spec *sp;
	size_t len;

	if (arg[1] == '-') {
		const char *eq = strchr(arg, '=');

		len = eq ? (size_t)(eq - arg) : strlen(arg);
		if (eq)
			val = eq + 1;
	} else {
		len = 2;
		if (arg[2])
			val = arg + 2;
	}

	sp = find_opt(arg, len);
	if (!sp)
		return gen_usage("unknown option '%.*s'", (int)len, arg);
	if (sp->kind == ARG_NONE) {
		if (val)
			return gen_usage("%s takes no value (got '%s')", sp->name, val);
	} else if (!val) {
		if (*i + 1 >= argc)
			return gen_usage("%s needs a value", sp->name);
		val = argv[++*i];
	}
	return apply_option(o, sp, val);
}

static int parse_args(struct opts *o, int argc, char **argv)
{
	bool only_args = false;
	int rc, i;

	memset(o, 0, sizeof(*o));
	o->seed = 1;
	o->rm_ids = calloc(argc > 0 ? (size_t)argc : 1, sizeof(*o->rm_ids));
	if (!o->rm_ids)
		return gen_nomem();

	for (i = 1; i < argc; i++) {
		const char *arg = argv[i];

		if (!only_args && !strcmp(arg, "--")) {
			only_args = true;
			continue;
		}
		if (only_args || arg[0] != '-' || !arg[1]) {
			if (o->topo_name)
				return gen_usage(
					"unexpected argument '%s' (topology is already %s)", arg,
					o->topo_name);
			o->topo_name = arg;
			continue;
		}
		rc = parse_option(o, argc, argv, &i);
		if (rc)
			return rc;
		/* "--help" and "--version" win over whatever else is on the line */
		if (o->help || o->version)
			return GEN_OK;
	}
	return GEN_OK;
}

static unsigned int opt_topos(enum opt_id id)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(opt_specs); i++)
		if (opt_specs[i].id == id)
			return opt_specs[i].topos;
	return 0;
}

static int require(const struct opts *o, enum opt_id id, const char *name)
{
	if (!o->set[id])
		return gen_usage("%s: missing %s", o->topo_name, name);
	return GEN_OK;
}

static int check_min(const struct opts *o, enum opt_id id, unsigned long min)
{
	if (o->set[id] && o->num[id] < min)
		return gen_usage("%s %s: must be at least %lu", o->name[id], o->val[id], min);
	return GEN_OK;
}

static int validate_topology(struct opts *o)
{
	static const struct {
		enum topo topo;
		enum opt_id id;
		const char *name;
	} required[] = {
		{ TOPO_FATTREE2, OPT_LEAVES, "--leaves" },
		{ TOPO_FATTREE2, OPT_SPINES, "--spines" },
		{ TOPO_FATTREE2, OPT_HPL, "--hosts-per-leaf" },
		{ TOPO_KTREE, OPT_K, "--k" },
		{ TOPO_KTREE, OPT_N, "--n" },
		{ TOPO_TORUS, OPT_DIMS, "--dims" },
		{ TOPO_RANDOM, OPT_SWITCHES, "--switches" },
		{ TOPO_RANDOM, OPT_DEGREE, "--degree" },
		{ TOPO_DRAGONFLY, OPT_A, "--a" },
		{ TOPO_DRAGONFLY, OPT_P, "--p" },
		{ TOPO_DRAGONFLY, OPT_H, "--h" },
		{ TOPO_XGFT, OPT_H, "--h" },
		{ TOPO_XGFT, OPT_M, "--m" },
		{ TOPO_XGFT, OPT_W, "--w" },
		{ TOPO_FATTREE, OPT_RADIX, "--radix" },
		{ TOPO_FATTREE, OPT_HOSTS, "--hosts" },
		{ TOPO_ISLANDS, OPT_ISLANDS, "--islands" },
		{ TOPO_ISLANDS, OPT_HPI, "--hosts-per-island" },
		{ TOPO_ISLANDS, OPT_RADIX, "--radix" },
		{ TOPO_HYPERX, OPT_DIMS, "--dims" },
		{ TOPO_SLIMFLY, OPT_Q, "--q" },
		{ TOPO_KAUTZ, OPT_D, "--d" },
		{ TOPO_KAUTZ, OPT_N, "--n" },
	};
	static const struct {
		enum opt_id id;
		unsigned long min;
	} minimum[] = {
		{ OPT_LEAVES, 1 }, { OPT_SPINES, 1 },	  { OPT_LPP, 1 },    { OPT_K, 2 },
		{ OPT_N, 1 },	   { OPT_SWITCHES, 2 },	  { OPT_DEGREE, 1 }, { OPT_A, 1 },
		{ OPT_G, 1 },	   { OPT_RADIX, 1 },	  { OPT_HOSTS, 1 },  { OPT_ISLANDS, 1 },
		{ OPT_HPI, 1 },	   { OPT_CORE_RADIX, 1 }, { OPT_D, 1 },
	};
	unsigned int i;
	int rc;

	for (i = 0; i < ARRAY_SIZE(required); i++) {
		if (required[i].topo != o->topo)
			continue;
		rc = require(o, required[i].id, required[i].name);
		if (rc)
			return rc;
	}
	for (i = 0; i < ARRAY_SIZE(minimum); i++) {
		rc = check_min(o, minimum[i].id, minimum[i].min);
		if (rc)
			return rc;
	}
	if (o->set[OPT_RADIX] && o->num[OPT_RADIX] > GEN_MAX_PORTS)
		return gen_usage("%s %s: InfiniBand switches have at most %d ports",
				 o->name[OPT_RADIX], o->val[OPT_RADIX], GEN_MAX_PORTS);

	if (!o->set[OPT_LPP])
		o->num[OPT_LPP] = 1;
	if (!o->set[OPT_HPS])
		o->num[OPT_HPS] = 1;
	if (o->topo == TOPO_KTREE && !o->set[OPT_HPL])
		o->num[OPT_HPL] = o->num[OPT_K];

	switch (o->topo) {
	case TOPO_RANDOM:
		return validate_random(o);
	case TOPO_XGFT:
		return validate_xgft(o);
	case TOPO_SLIMFLY:
		return validate_slimfly(o);
	case TOPO_HYPERX:
		return validate_hyperx(o);
	case TOPO_FATTREE:
	case TOPO_ISLANDS:
		return validate_fattree(o);
	case TOPO_DRAGONFLY:
		return validate_dragonfly(o);
	case TOPO_FISHNET:
	case TOPO_FISHNET_LITE:
		return validate_fishnet(o);
	case TOPO_MLFM:
		return validate_mlfm(o);
	case TOPO_OFT:
		return validate_oft(o);
	case TOPO_CASCADE:
		return validate_cascade(o);
	case TOPO_DFPLUS:
		return validate_dfplus(o);
	default:
		break;
	}
	return GEN_OK;
}

static int validate(struct opts *o, struct hostfmt *hf)
{
	unsigned int i;
	int rc;

	if (!o->topo_name)
		return gen_usage("missing topology: " TOPO_LIST);
	for (i = 0; i < ARRAY_SIZE(topo_names); i++)
		if (!strcmp(o->topo_name, topo_names[i].name))
			o->topo = topo_names[i].topo;
	if (o->topo == TOPO_NONE)
		return gen_usage("unknown topology '%s': expected " TOPO_LIST, o->topo_name);

	for (i = 0; i < OPT_COUNT; i++) {
		unsigned int t = opt_topos(i);

		if (o->set[i] && t && !(t & TB(o->topo)))
			return gen_usage("%s: not an option of the %s topology", o->name[i],
					 o->topo_name);
	}

	rc = validate_topology(o);
	if (rc)
		return rc;
	return hostfmt_parse(hf, o->set[OPT_HOSTPAT] ? o->val[OPT_HOSTPAT] : DEFAULT_HOSTNAME);
}

static int build(struct gen_fabric *f, const struct opts *o)
{
	int rc;

	switch (o->topo) {
	case TOPO_FATTREE2:
		rc = build_fattree2(f, o);
		break;
	case TOPO_KTREE:
		rc = build_ktree(f, o);
		break;
	case TOPO_XGFT:
		rc = build_xgft(f, o);
		break;
	case TOPO_FATTREE:
		rc = build_fattree(f, o);
		break;
	case TOPO_HYPERX:
		rc = build_hyperx(f, o);
		break;
	case TOPO_SLIMFLY:
		rc = build_slimfly(f, o);
		break;
	case TOPO_KAUTZ:
		rc = build_kautz(f, o);
		break;
	case TOPO_ISLANDS:
		rc = build_islands(f, o);
		break;
	case TOPO_TORUS:
		rc = build_torus(f, o);
		break;
	case TOPO_RANDOM:
		rc = build_random(f, o);
		break;
	case TOPO_DRAGONFLY:
		rc = build_dragonfly(f, o);
		break;
	case TOPO_FISHNET:
	case TOPO_FISHNET_LITE:
		rc = build_fishnet(f, o);
		break;
	case TOPO_MLFM:
		rc = build_mlfm(f, o);
		break;
	case TOPO_OFT:
		rc = build_oft(f, o);
		break;
	case TOPO_CASCADE:
		rc = build_cascade(f, o);
		break;
	case TOPO_DFPLUS:
		rc = build_dfplus(f, o);
		break;
	default:
		rc = gen_fail("internal error: no builder for %s", o->topo_name);
		break;
	}
	if (!rc && f->conflict)
		rc = gen_fail("internal error: %s wired a port twice", o->topo_name);
	if (!rc)
		gen_fabric_check(f);
	return rc;
}

int gen_main(int argc, char **argv)
{
	struct gen_fabric f = { 0 };
	struct rm_log log = { 0 };
	struct hostfmt hf;
	struct opts o;
	uint32_t *hid = NULL, nhosts;
	char *layers_tmp = NULL;
	FILE *layers_fp = NULL;
	struct progress progress;
	struct progress_hook hook;
	int rc;

	rc = parse_args(&o, argc, argv);
	if (rc)
		goto out;
	if (o.version) {
		cli_version();
		goto out;
	}
	if (o.help) {
		gen_print_help(stdout);
		if (fflush(stdout))
			rc = gen_fail("cannot write standard output: %s", strerror(errno));
		goto out;
	}
	rc = validate(&o, &hf);
	if (rc)
		goto out;
	/* No phase is open yet where the errors above are printed. */
	cli_progress_init(&progress, "sarnue gen", o.set[OPT_QUIET], 0);
	progress_hook_init(&hook, progress_update, &progress);
	progress_phase(&progress, "building");
	rc = build(&f, &o);
	if (rc)
		goto out_progress;
	progress_phase(&progress, "applying faults");
	rc = apply_faults(&f, &o, &log);
	if (rc)
		goto out_progress;

	hid = malloc((f.nhost ? f.nhost : 1) * sizeof(*hid));
	if (!hid) {
		rc = gen_nomem();
		goto out_progress;
	}
	nhosts = number_hosts(&f, hid);
	rc = check_hostnames(&hf, o.set[OPT_HOSTPAT] ? o.val[OPT_HOSTPAT] : DEFAULT_HOSTNAME,
			     nhosts);
	if (rc)
		goto out_progress;
	/* Created first, so that a layers file that cannot be written leaves no net file either. */
	if (o.set[OPT_LAYERS_FILE]) {
		rc = open_temp(o.val[OPT_LAYERS_FILE], &layers_tmp, &layers_fp);
		if (rc)
			goto out_progress;
	}
	progress_phase(&progress, "writing");
	rc = write_output(&f, &o, &hf, hid, nhosts, argc, argv, &hook);
	if (rc)
		goto out_progress;
	if (layers_fp) {
		write_layers(layers_fp, &f, &o);
		rc = commit_temp(layers_fp, layers_tmp, o.val[OPT_LAYERS_FILE]);
		layers_fp = NULL;
		if (rc)
			goto out_progress;
	}
	progress_end(&progress);
	gen_report(&f, &log, nhosts);
	goto out;
out_progress:
	progress_end(&progress);
out:
	if (layers_fp) {
		fclose(layers_fp);
		unlink(layers_tmp);
		free(layers_tmp);
	}
	free(hid);
	free(log.ev);
	free(o.rm_ids);
	gen_fabric_free(&f);
	return rc;
}
