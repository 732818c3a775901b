/*
 * netfile.c - loads ibsim net files and ibnetdiscover output into the fabric model.
 *
 * Both formats are records of a header ("Switch 36 \"id\" # \"desc\"", "Hca"/"Ca"/"Rt") followed
 * by "[port] \"remote-id\"[remote-port]" lines.  Links may be listed on one or both sides; a
 * contradiction is an error.  Nodes without explicit GUIDs get the GUIDs ibsim would give them
 * (switches from 0x200000 upwards, CAs from 0x100000 with one GUID per port after the node GUID),
 * so offline results line up with what OpenSM sees under ibsim on the same file.
 */
#include "loaders.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "numbers.h"

#define SIM_FIRST_SWITCH_GUID 0x200000ull
#define SIM_FIRST_CA_GUID 0x100000ull

struct pending_link {
	uint32_t node;
	uint32_t line;
	uint32_t remote_id; /* offset into the id pool */
	uint8_t port, remote_port;
};

struct id_index {
	uint32_t *slots; /* node index + 1, 0 = empty */
	uint32_t cap;
};

struct netparse {
	const char *path;
	struct fabric *f;
	const struct netfile_opts *opts;
	struct fab_error *err;
	struct id_index index;
	struct pending_link *links;
	uint32_t nlinks, links_cap;
	char *ids;
	size_t ids_len, ids_cap;
	uint32_t cur_node, line;
	uint64_t next_sw_guid, next_ca_guid;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static int index_grow(struct netparse *np);

static int index_put(struct netparse *np, uint32_t node)
{
	const char *id = fabric_node_id(np->f, node);
	uint32_t i;

	if (np->f->nnodes * 2 >= np->index.cap && index_grow(np))
		return -1;
	i = (uint32_t)(hash_str(id) & (np->index.cap - 1));
	while (np->index.slots[i])
		i = (i + 1) & (np->index.cap - 1);
	np->index.slots[i] = node + 1;
	return 0;
}

static int index_grow(struct netparse *np)
{
	uint32_t cap = np->index.cap ? np->index.cap * 2 : 1024, n, *old = np->index.slots;

	np->index.slots = calloc(cap, sizeof(*np->index.slots));
	if (!np->index.slots) {
		np->index.slots = old;
		return -1;
	}
	np->index.cap = cap;
	free(old);
	for (n = 0; n < np->f->nnodes; n++) {
		uint32_t i = (uint32_t)(hash_str(fabric_node_id(np->f, n)) & (cap - 1));

		while (np->index.slots[i])
			i = (i + 1) & (cap - 1);
		np->index.slots[i] = n + 1;
	}
	return 0;
}

static uint32_t index_get(const struct netparse *np, const char *id)
{
	uint32_t i;

	if (!np->index.cap)
		return FAB_NONE;
	i = (uint32_t)(hash_str(id) & (np->index.cap - 1));
	while (np->index.slots[i]) {
		uint32_t n = np->index.slots[i] - 1;

		if (!strcmp(fabric_node_id(np->f, n), id))
			return n;
		i = (i + 1) & (np->index.cap - 1);
	}
	return FAB_NONE;
}

static int fail(struct netparse *np, const char *what)
{
	fab_error_set(np->err, "%s:%u: %s", np->path, np->line, what);
	return -1;
}

static char *skip_ws(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* Reads a double-quoted string in place; returns the text after the closing quote. */
static char *read_quoted(char *s, char **out)
{
	char *end;

	s = skip_ws(s);
	if (*s != '"')
		return NULL;
	end = strchr(s + 1, '"');
	if (!end)
		return NULL;
	*end = '\0';
	*out = s + 1;
	return end + 1;
}

static char *read_uint(char *s, unsigned long max, unsigned long *out)
{
	const char *p = skip_ws(s);
	uint64_t v;

	if (num_scan_u64(&p, max, &v))
		return NULL;
	*out = (unsigned long)v;
	return s + (p - s);
}

/* The node type word a header starts with; the text after it, or NULL for another word. */
static char *read_type(char *s, enum fab_node_type *type)
{
	static const struct {
		const char *word;
		enum fab_node_type type;
	} types[] = {
		{ "Switch", FAB_SWITCH }, { "Hca", FAB_CA },	    { "Ca", FAB_CA },
		{ "Rt", FAB_ROUTER },	  { "Router", FAB_ROUTER },
	};
	size_t len = strcspn(s, " \t"), i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		if (strlen(types[i].word) == len && !strncmp(s, types[i].word, len)) {
			*type = types[i].type;
			return s + len;
		}
	}
	return NULL;
}

/* ibnetdiscover writes the node GUID into the id ("S-0008f10400411a08", "H-..."). */
static int guid_from_id(const char *id, uint64_t *guid)
{
	const char *digits = id + 2;

	if ((id[0] != 'S' && id[0] != 'H' && id[0] != 'R') || id[1] != '-' || strlen(id) != 18)
		return -1;
	return fab_scan_hex_digits(&digits, 16, guid) || *digits ? -1 : 0;
}

static uint64_t next_guid(struct netparse *np, enum fab_node_type type, unsigned nports)
{
	uint64_t g;

	if (type == FAB_SWITCH)
		return np->next_sw_guid++;
	g = np->next_ca_guid;
	np->next_ca_guid += nports + 1;
	return g;
}

static int parse_header(struct netparse *np, char *s)
{
	char *id, *desc = NULL, *rest;
	enum fab_node_type type;
	unsigned long nports;
	uint64_t guid;

	rest = read_type(s, &type);
	if (!rest)
		return fail(np, "expected a node header (Switch, Hca, Ca or Rt)");
	rest = read_uint(rest, 254, &nports);
	if (!rest || nports == 0)
		return fail(np, "bad port count in node header (1..254)");
	rest = read_quoted(rest, &id);
	if (!rest || !*id)
		return fail(np, "node header without a quoted node id");
	rest = skip_ws(rest);
	if (*rest == '#') {
		if (!read_quoted(rest + 1, &desc))
			desc = NULL;
	}
	if (index_get(np, id) != FAB_NONE)
		return fail(np, "node id defined twice");
	if (guid_from_id(id, &guid))
		guid = next_guid(np, type, nports);
	np->cur_node = fabric_add_node(np->f, type, guid, nports, id, desc ? desc : id);
	if (np->cur_node == FAB_NONE || index_put(np, np->cur_node))
		return fail(np, "out of memory");
	return 0;
}

static uint32_t keep_id(struct netparse *np, const char *id)
{
	uint32_t off;

	if (fab_strings_put(&np->ids, &np->ids_len, &np->ids_cap, id, strlen(id), &off))
		return FAB_NONE;
	return off;
}

/* "[1](portguid) \"remote\"[3](portguid) ..." */
static int parse_port_line(struct netparse *np, char *s)
{
	unsigned long port, rport;
	struct pending_link *l;
	char *rest, *rid;

	if (np->cur_node == FAB_NONE)
		return fail(np, "port line outside a node record");
	rest = read_uint(s + 1, 254, &port);
	if (!rest || *rest != ']' || port == 0 || port > np->f->nodes[np->cur_node].nports)
		return fail(np, "bad local port number");
	rest++;
	if (*rest == '(') {
		rest = strchr(rest, ')');
		if (!rest)
			return fail(np, "unterminated port GUID");
		rest++;
	}
	rest = read_quoted(rest, &rid);
	if (!rest)
		return fail(np, "expected \"remote-id\"[port]");
	rest = skip_ws(rest);
	if (*rest != '[')
		return fail(np, "expected [remote-port] after the remote id");
	rest = read_uint(rest + 1, 254, &rport);
	if (!rest || *rest != ']' || rport == 0)
		return fail(np, "bad remote port number");
	if (fab_grow((void **)&np->links, &np->links_cap, np->nlinks + 1, sizeof(*np->links), 1024))
		return fail(np, "out of memory");
	l = &np->links[np->nlinks];
	l->node = np->cur_node;
	l->port = (uint8_t)port;
	l->remote_port = (uint8_t)rport;
	l->line = np->line;
	l->remote_id = keep_id(np, rid);
	if (l->remote_id == FAB_NONE)
		return fail(np, "out of memory");
	np->nlinks++;
	return 0;
}

static int is_attribute_line(const char *s)
{
	static const char *const keys[] = { "vendid=", "devid=",  "sysimgguid=", "switchguid=",
					    "caguid=", "rtguid=", "do ",	 NULL };
	unsigned i;

	for (i = 0; keys[i]; i++)
		if (!strncmp(s, keys[i], strlen(keys[i])))
			return 1;
	return 0;
}

static int parse_line(struct netparse *np, char *s)
{
	s = skip_ws(s);
	s[strcspn(s, "\r\n")] = '\0';
	if (!*s) {
		np->cur_node = FAB_NONE;
		return 0;
	}
	if (*s == '#' || is_attribute_line(s))
		return 0;
	if (!strncmp(s, "include", 7))
		return fail(np, "'include' is not supported; concatenate the files instead");
	if (*s == '[')
		return parse_port_line(np, s);
	return parse_header(np, s);
}

static int resolve_links(struct netparse *np)
{
	uint32_t i;

	for (i = 0; i < np->nlinks; i++) {
		const struct pending_link *l = &np->links[i];
		const char *rid = np->ids + l->remote_id;
		uint32_t remote = index_get(np, rid);
		struct fab_error lerr;

		np->line = l->line;
		if (remote == FAB_NONE) {
			char msg[300];

			snprintf(msg, sizeof(msg), "link to unknown node \"%.200s\"", rid);
			return fail(np, msg);
		}
		if (l->remote_port > np->f->nodes[remote].nports) {
			char msg[300];

			snprintf(msg, sizeof(msg), "node \"%.200s\" has no port %u", rid,
				 l->remote_port);
			return fail(np, msg);
		}
		if (fabric_link(np->f, l->node, l->port, remote, l->remote_port, &lerr))
			return fail(np, lerr.msg);
	}
	return 0;
}

static void activate_linked_ports(struct fabric *f, unsigned op_vls)
{
	uint32_t p;

	for (p = 0; p < f->nports; p++) {
		if (f->ports[p].num == 0 && f->nodes[f->ports[p].node].type == FAB_SWITCH) {
			f->ports[p].op_vls = (uint8_t)op_vls;
			continue;
		}
		if (f->ports[p].remote != FAB_NONE) {
			f->ports[p].state = FAB_PORT_ACTIVE;
			f->ports[p].op_vls = (uint8_t)op_vls;
		}
	}
}

int fabric_load_netfile(struct fabric *f, const char *path, const struct netfile_opts *opts,
			struct fab_error *err)
{
	struct netparse np = { .path = path, .f = f, .opts = opts, .err = err };
	struct line_reader lr;
	char *line;
	int ret = -1;

	np.cur_node = FAB_NONE;
	np.next_sw_guid = SIM_FIRST_SWITCH_GUID;
	np.next_ca_guid = SIM_FIRST_CA_GUID;
	if (line_reader_open(&lr, path, FAB_LIMIT_TOPOLOGY)) {
		fab_error_set(err, "%s: %s", path, fab_strerror(errno));
		return -1;
	}
	while ((line = line_reader_next(&lr))) {
		np.line = lr.lineno;
		if (parse_line(&np, line))
			goto out;
	}
	if (line_reader_failed(&lr)) {
		fab_error_from_reader(err, &lr, path);
		goto out;
	}
	if (!f->nnodes) {
		np.line = 0;
		fail(&np, "no nodes in file");
		goto out;
	}
	if (resolve_links(&np))
		goto out;
	activate_linked_ports(f, opts ? opts->op_vls : 8);
	ret = fabric_assign_lids(f, opts ? opts->lmc : 0, err);
out:
	line_reader_close(&lr);
	free(np.links);
	free(np.ids);
	free(np.index.slots);
	return ret;
}
