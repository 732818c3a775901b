/*
 * topoorder.c - `sarnue topo-order`: the hosts of a fat tree, or of one job, in topology order
 * (leaf by leaf as fat_tree_recognise() orders the leaves, then by the leaf's port number), the
 * rank order in which D-mod-k routing carries every shift permutation without contention.
 * Written as plain lines, a Slurm host list for --distribution=arbitrary, an MPI hostfile,
 * a Slurm topology.conf or JSON.  The writers are topoformat.c.
 *
 * A host is the first word of a CA's node description, the job map's default rule, so the
 * names printed are the names a job map or Slurm uses.  A host with several HCAs is listed
 * once, where its first HCA comes in topology order.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/topoorder.h"
#include "fabric/jobmap.h"
#include "fabric/loaders.h"
#include "lib/hostlist.h"

static const char topo_usage[] =
	"NAME\n"
	"    sarnue topo-order - hosts of a fat tree or of a job in topology order\n"
	"\n"
	"SYNOPSIS\n"
	"    sarnue topo-order [OPTIONS] TOPOLOGY\n"
	"    sarnue topo-order [OPTIONS] --subnet FILE | --dump-dir DIR\n"
	"\n"
	"DESCRIPTION\n"
	"    Prints the hosts of a fat tree in topology order: leaf switch by leaf switch, in the\n"
	"    order of the tree's subtrees, and on each leaf by port number.  Ranks placed in this\n"
	"    order are the order D-mod-k routing (sar-dmodk) is optimal for: every shift\n"
	"    permutation rank i -> rank i+s runs without two flows on one link of a complete\n"
	"    tree.  Give it a job's hosts (--job, --hosts) to get the rank order of that job.\n"
	"\n"
	"    The tree is recognised from the links alone (no names, no root list); a fabric that\n"
	"    is no fat tree (torus, dragonfly, ...) is refused with the reason.  A host is the\n"
	"    first word of a CA's node description, as in job maps; a host with several HCAs is\n"
	"    listed once, where its first HCA comes.  Hosts hung on switches above the leaves\n"
	"    (storage, service nodes) are not in the topology order: they are left out of the\n"
	"    fabric's list and come last when a job names them, with a note on stderr.\n"
	"\n"
	"INPUTS (one of)\n"
	"    TOPOLOGY         an ibsim or ibnetdiscover net file, OpenSM's opensm-subnet.lst\n"
	"                     (a name ending in .lst) or an OpenSM dump directory holding one\n"
	"    --subnet FILE    OpenSM's opensm-subnet.lst, whatever its name\n"
	"    --dump-dir DIR   OpenSM's dump_files_dir (its opensm-subnet.lst is read)\n"
	"\n"
	"HOSTS (default: every host on the leaves)\n"
	"    --job JOBID --job-map FILE\n"
	"                     the hosts of one job of a job map ('hostname jobid' lines, the\n"
	"                     format of the plugin's job_map option and of sarnue-filterd)\n"
	"    --hosts LIST     a Slurm host list ('node[001-016,020],login1') or a comma list,\n"
	"                     e.g. \"$SLURM_JOB_NODELIST\"\n"
	"\n"
	"OUTPUT\n"
	"    --format FORMAT  one of:\n"
	"        lines            one host per line (default)\n"
	"        slurm-arbitrary  the hosts on one line, comma-separated: a SLURM_HOSTFILE\n"
	"                         for srun --distribution=arbitrary, or its -w list\n"
	"        hostfile         an MPI hostfile, 'HOST slots=1' per line (Open MPI: ranks\n"
	"                         follow the lines, one per host, with --map-by node)\n"
	"        topology-conf    a Slurm topology.conf of the whole fabric: one\n"
	"                         'SwitchName=LEAF Nodes=HOSTS' line per leaf, then one\n"
	"                         'SwitchName=S Switches=CHILDREN' line per switch above,\n"
	"                         level by level.  A switch is named by its net-file name\n"
	"                         when that is one word of letters, digits and '.-_:' and\n"
	"                         unique, else by its GUID (0x...)\n"
	"        json             {\"hosts\": [...], \"placement\": [{\"host\", \"switch\",\n"
	"                         \"switch_guid\", \"port\", \"leaf_position\"}, ...]}\n"
	"\n"
	"OPTIONS\n"
	"    -h, --help       this text\n"
	"    -V, --version    print the version\n"
	"\n"
	"EXAMPLES\n"
	"    sarnue topo-order /var/log/opensm-dumps --hosts \"$SLURM_JOB_NODELIST\" \\\n"
	"        --format slurm-arbitrary > hosts.txt\n"
	"    SLURM_HOSTFILE=hosts.txt srun --distribution=arbitrary -n 64 ./app\n"
	"    sarnue topo-order fabric.net --job 4711 --job-map jobs.map \\\n"
	"        --format hostfile > hf\n"
	"    mpirun --hostfile hf --map-by node ./app\n"
	"\n"
	"EXIT STATUS\n"
	"    0 printed, 1 the fabric is no fat tree, 2 usage (also a malformed --hosts list,\n"
	"    named with its column), 3 unreadable or malformed input (fabric or job map, named\n"
	"    with file:line), an unknown job, or a host the fabric does not have.\n";

struct topo_args {
	const char *topology, *job, *job_map, *hosts;
	enum topology_format format;
	enum topo_format out;
};

static const struct {
	const char *name;
	enum topo_format fmt;
} formats[] = {
	{ "lines", TOPO_LINES },       { "slurm-arbitrary", TOPO_SLURM_ARBITRARY },
	{ "hostfile", TOPO_HOSTFILE }, { "topology-conf", TOPO_TOPOLOGY_CONF },
	{ "json", TOPO_JSON },
};

static int parse_format(const char *s, enum topo_format *out)
{
	size_t i;

	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		if (!strcmp(s, formats[i].name)) {
			*out = formats[i].fmt;
			return 0;
		}
	}
	cli_usage("topo-order",
		  "--format %s: expected lines, slurm-arbitrary, hostfile, topology-conf or json",
		  s);
	return -1;
}

/* One input only: a path, --subnet or --dump-dir. */
static int set_topology(struct topo_args *a, const char *path, enum topology_format format)
{
	if (a->topology) {
		cli_usage("topo-order",
			  "give one topology: TOPOLOGY, --subnet FILE or --dump-dir DIR");
		return -1;
	}
	a->topology = path;
	a->format = format;
	return 0;
}

static int check_args(const struct topo_args *a)
{
	if (!a->topology) {
		cli_usage("topo-order",
			  "give a topology: TOPOLOGY, --subnet FILE or --dump-dir DIR");
		return EXIT_USAGE;
	}
	if (!a->job != !a->job_map) {
		cli_usage("topo-order", "--job and --job-map go together");
		return EXIT_USAGE;
	}
	if (a->job && a->hosts) {
		cli_usage("topo-order", "give either --job with --job-map or --hosts, not both");
		return EXIT_USAGE;
	}
	if (a->out == TOPO_TOPOLOGY_CONF && (a->job || a->hosts)) {
		cli_usage("topo-order",
			  "--format topology-conf describes the whole fabric: no --job or --hosts");
		return EXIT_USAGE;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct topo_args *a)
{
	static const struct option longopts[] = {
		{ "subnet", required_argument, NULL, 's' },
		{ "dump-dir", required_argument, NULL, 'd' },
		{ "job", required_argument, NULL, 'J' },
		{ "job-map", required_argument, NULL, 'm' },
		{ "hosts", required_argument, NULL, 'H' },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c, bad = 0;

	memset(a, 0, sizeof(*a));
	a->out = TOPO_LINES;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hV", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			bad = set_topology(a, optarg, TOPOLOGY_SUBNET_LST);
			break;
		case 'd':
			bad = set_topology(a, optarg, TOPOLOGY_BY_NAME);
			break;
		case 'J':
			a->job = optarg;
			break;
		case 'm':
			a->job_map = optarg;
			break;
		case 'H':
			a->hosts = optarg;
			break;
		case 'f':
			bad = parse_format(optarg, &a->out);
			break;
		case 'h':
			fputs(topo_usage, stdout);
			return -1;
		case 'V':
			cli_version();
			return -1;
		default:
			return cli_getopt_error("topo-order", c, argv);
		}
		if (bad)
			return EXIT_USAGE;
	}
	for (; optind < argc; optind++)
		if (set_topology(a, argv[optind], TOPOLOGY_BY_NAME))
			return EXIT_USAGE;
	return check_args(a);
}

/* The hostname of CA node n: the first word of its description, else its GUID. */
static int add_host_name(struct hostlist *names, const struct fabric *f, uint32_t node)
{
	const char *desc = fabric_node_desc(f, node);
	size_t len = job_map_host_len(desc, JOB_MATCH_FIRST_WORD);
	char guid[24];

	if (len)
		return hostlist_add(names, desc, len);
	snprintf(guid, sizeof(guid), "0x%016llx", (unsigned long long)f->nodes[node].guid);
	return hostlist_add(names, guid, strlen(guid));
}

static int cmp_name_pos(const void *a, const void *b, void *ctx)
{
	const struct hostlist *names = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c = strcmp(hostlist_get(names, x), hostlist_get(names, y));

	return c ? c : (x > y) - (x < y);
}

/* CA/router ports with a LID on switches above the leaves, in LID order. */
static int add_service_ports(struct topo_hosts *h, struct hostlist *names, uint32_t *port,
			     uint32_t *n)
{
	const struct fabric *f = h->f;
	uint32_t i;

	for (i = 0; i < f->nendports; i++) {
		uint32_t p = f->endports[i];

		if (fabric_is_switch(f, f->ports[p].node) || h->tree.term_index[p] != FAB_NONE ||
		    fabric_attached_switch(f, p) == FAB_NONE)
			continue;
		if (add_host_name(names, f, f->ports[p].node))
			return -1;
		port[(*n)++] = p;
	}
	return 0;
}

/*
 * Keeps the first position of every name: idx lists positions sorted by (name, position), so a
 * position whose name equals its predecessor's is a repeat.
 */
static int keep_first(struct topo_hosts *h, const struct hostlist *names, const uint32_t *port,
		      const uint32_t *idx, uint32_t n, uint32_t *newidx)
{
	uint32_t i, pos;

	for (i = 0; i < n; i++)
		newidx[idx[i]] =
			i && !strcmp(hostlist_get(names, idx[i]), hostlist_get(names, idx[i - 1]))
				? FAB_NONE
				: 0;
	for (pos = 0; pos < n; pos++) {
		if (newidx[pos] == FAB_NONE)
			continue;
		newidx[pos] = h->n;
		if (hostlist_add(&h->names, hostlist_get(names, pos),
				 strlen(hostlist_get(names, pos))))
			return -1;
		h->port[h->n] = port[pos];
		h->nleaf += pos < h->tree.nterminals;
		h->n++;
	}
	for (i = 0, h->nnames = 0; i < n; i++)
		if (newidx[idx[i]] != FAB_NONE)
			h->by_name[h->nnames++] = newidx[idx[i]];
	return 0;
}

/*
 * Every host once, at its first port in topology order (leaf hosts, then service hosts), and
 * the hosts sorted by name for the look-ups.
 */
static int hosts_build(struct topo_hosts *h)
{
	const struct fabric *f = h->f;
	uint32_t *port = malloc(sizeof(*port) * (f->nports + 1));
	uint32_t *idx = malloc(sizeof(*idx) * (f->nports + 1));
	uint32_t *newidx = malloc(sizeof(*newidx) * (f->nports + 1));
	uint32_t i, n = 0;
	struct hostlist names;
	int ret = -1;

	hostlist_init(&names);
	h->port = malloc(sizeof(*h->port) * (f->nports + 1));
	h->by_name = malloc(sizeof(*h->by_name) * (f->nports + 1));
	if (!port || !idx || !newidx || !h->port || !h->by_name)
		goto out;
	for (i = 0; i < h->tree.nterminals; i++) {
		port[n++] = h->tree.terminals[i];
		if (add_host_name(&names, f, f->ports[h->tree.terminals[i]].node))
			goto out;
	}
	if (add_service_ports(h, &names, port, &n))
		goto out;
	for (i = 0; i < n; i++)
		idx[i] = i;
	qsort_r(idx, n, sizeof(*idx), cmp_name_pos, &names);
	ret = keep_first(h, &names, port, idx, n, newidx);
	if (!ret)
		h->selected = calloc(h->n + 1, 1);
	if (!h->selected)
		ret = -1;
out:
	hostlist_free(&names);
	free(port);
	free(idx);
	free(newidx);
	return ret;
}

/* Index of the host called name, or FAB_NONE. */
static uint32_t host_find(const struct topo_hosts *h, const char *name)
{
	uint32_t lo = 0, hi = h->nnames;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, hostlist_get(&h->names, h->by_name[mid]));

		if (!c)
			return h->by_name[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return FAB_NONE;
}

static void host_select(struct topo_hosts *h, uint32_t k)
{
	if (!h->selected[k]) {
		h->selected[k] = 1;
		h->nselected++;
	}
}

/* --hosts: a malformed list is a usage error, a host the fabric lacks an input error. */
static int select_hosts(struct topo_hosts *h, const char *list, const char *topology)
{
	struct fab_error err = { "" };
	struct hostlist want;
	uint32_t i, k;
	int rc = 0;

	hostlist_init(&want);
	if (hostlist_expand(&want, list, strlen(list), "--hosts", &err)) {
		cli_error("topo-order", "%s", err.msg);
		rc = EXIT_USAGE;
		goto out;
	}
	for (i = 0; i < want.n; i++) {
		k = host_find(h, hostlist_get(&want, i));
		if (k == FAB_NONE) {
			cli_error("topo-order",
				  "--hosts: host %u of the list, '%s', is not a host of %s", i + 1,
				  hostlist_get(&want, i), topology);
			rc = EXIT_INPUT;
			goto out;
		}
		host_select(h, k);
	}
out:
	hostlist_free(&want);
	return rc;
}

static uint32_t job_index(const struct job_map *jm, const char *job)
{
	uint32_t j;

	for (j = 0; j < jm->njobs; j++)
		if (!strcmp(job_map_job_name(jm, j), job))
			return j;
	return FAB_NONE;
}

/* --job: every line of the job must name a host of the fabric. */
static int select_job(struct topo_hosts *h, const struct topo_args *a)
{
	struct fab_error err = { "" };
	struct job_map jm;
	uint32_t j, e, k;
	int rc = 0;

	job_map_init(&jm);
	if (job_map_parse(&jm, a->job_map, &err)) {
		cli_error("topo-order", "%s", err.msg);
		rc = EXIT_INPUT;
		goto out;
	}
	j = job_index(&jm, a->job);
	if (j == FAB_NONE) {
		cli_error("topo-order", "job map %s: no job '%s' (%u jobs in it)", a->job_map,
			  a->job, jm.njobs);
		rc = EXIT_INPUT;
		goto out;
	}
	for (e = 0; e < jm.nentries; e++) {
		const char *host = jm.strings + jm.entries[e].host;

		if (jm.entries[e].job != j)
			continue;
		k = host_find(h, host);
		if (k == FAB_NONE) {
			cli_error("topo-order", "%s:%u: host '%s' of job %s is not a host of %s",
				  a->job_map, jm.entries[e].line, host, a->job, a->topology);
			rc = EXIT_INPUT;
			goto out;
		}
		host_select(h, k);
	}
out:
	job_map_free(&jm);
	return rc;
}

/* Selected hosts above the leaves come last, out of the topology order: say so. */
static void note_service(const struct topo_hosts *h, int whole_fabric)
{
	uint32_t k, n = 0;

	for (k = h->nleaf; k < h->n; k++)
		n += h->selected[k];
	if (whole_fabric && h->n > h->nleaf)
		cli_error("topo-order",
			  "note: %u host(s) on switches above the leaves (storage, service) left "
			  "out, first '%s'",
			  h->n - h->nleaf, hostlist_get(&h->names, h->nleaf));
	else if (n)
		cli_error(
			"topo-order",
			"note: %u of the hosts hang on switches above the leaves; they come last, "
			"outside the topology order",
			n);
}

static int load(struct topo_hosts *h, const struct topo_args *a)
{
	struct topology_opts o = {
		.format = a->format,
		.net = { .lmc = 0, .op_vls = 8 },
		.lst_op_vls = 8,
	};
	struct fab_error err = { "" };

	if (fabric_load_topology(&h->fabric, a->topology, &o, NULL, 0, &err)) {
		cli_error("topo-order", "%s", err.msg);
		return EXIT_INPUT;
	}
	if (fat_tree_recognise(h->f, &h->tree, &err)) {
		cli_error("topo-order", "%s: not a fat tree (%s); topology order needs one",
			  a->topology, err.msg);
		return EXIT_ROUTING_FAULT;
	}
	if (hosts_build(h)) {
		cli_error("topo-order", "out of memory");
		return EXIT_INPUT;
	}
	return 0;
}

static int select_all(struct topo_hosts *h, const struct topo_args *a)
{
	uint32_t k;

	if (a->hosts)
		return select_hosts(h, a->hosts, a->topology);
	if (a->job)
		return select_job(h, a);
	for (k = 0; k < h->nleaf; k++)
		host_select(h, k);
	return 0;
}

int topo_order_main(int argc, char **argv)
{
	struct topo_args a;
	struct topo_hosts h;
	int rc;

	rc = parse_args(argc, argv, &a);
	if (rc)
		return rc < 0 ? 0 : rc;
	memset(&h, 0, sizeof(h));
	fabric_init(&h.fabric);
	fat_tree_init(&h.tree);
	hostlist_init(&h.names);
	h.f = &h.fabric;
	rc = load(&h, &a);
	if (!rc)
		rc = select_all(&h, &a);
	if (rc)
		goto out;
	note_service(&h, !a.job && !a.hosts);
	if (topo_write(&h, a.out, a.topology, stdout)) {
		cli_error("topo-order", "out of memory or write error");
		rc = EXIT_INPUT;
	}
out:
	free(h.port);
	free(h.by_name);
	free(h.selected);
	hostlist_free(&h.names);
	fat_tree_free(&h.tree);
	fabric_free(&h.fabric);
	return rc;
}
