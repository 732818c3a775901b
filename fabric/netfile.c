/*
 * netfile.c - loads ibsim net files and ibnetdiscover output into the fabric model.
 *
 * Both formats are records of a header ("Switch 36 \"id\" # \"desc\" ... lid 1 lmc 0",
 * "Hca"/"Ca"/"Rt") followed by "[port](guid) \"remote-id\"[remote-port](guid) # ..." lines, with
 * ibnetdiscover's attribute lines (vendid=, switchguid=, ...), section titles ("Non-Chassis
 * Nodes", "Chassis 1 ..."), [ext N] port numbers and, before the first record, whatever the tool
 * printed while discovering.  doc/input-formats.md gives the grammar with examples.
 *
 * GUIDs follow ibsim, so offline results line up with what OpenSM sees under ibsim on the same
 * file: a switchguid=/caguid=/rtguid= line gives the next node's GUID, else an ibnetdiscover id
 * ("S-0008f10400411a08") does, else ibsim's counters (switches from 0x200000, CAs from 0x100000
 * with one GUID per port after the node GUID).  LIDs written in the file ("lid 5 lmc 0") are the
 * fabric's own and are kept, as OpenSM keeps what ibsim presets; missing ones are assigned.
 * Links may be listed on one or both sides; when the two sides disagree (ports, LIDs, GUIDs)
 * the file contradicts itself and loading stops with the line.
 */
#include "fabric/loaders.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lib/numbers.h"
#include "lib/scan.h"
#include "lib/arena.h"
#include "lib/input.h"
#include "lib/assert.h"

#define SIM_FIRST_SWITCH_GUID 0x200000ull
#define SIM_FIRST_CA_GUID 0x100000ull

struct pending_link {
	uint32_t node;
	uint32_t line;
	uint32_t remote_id;   /* offset into the id pool */
	uint64_t remote_guid; /* the far port's GUID as this line gives it, 0 when not given */
	uint16_t remote_lid;  /* the far end's LID as this line's comment gives it, 0: none */
	uint8_t port, remote_port;
};

struct id_index {
	uint32_t *slots; /* node index + 1, 0 = empty */
	uint32_t cap;
};

/* What the file says of a port beyond its link: LID, LMC, GUID given explicitly. */
struct port_facts {
	uint16_t lid;
	uint8_t lmc;
	uint8_t guid_given;
};

struct netparse {
	const char *path;
	struct fabric *f;
	const struct netfile_opts *opts;
	struct fab_error *err;
	struct id_index index;
	struct pending_link *links;
	uint32_t nlinks, links_cap;
	struct port_facts *facts; /* per fabric port */
	uint32_t facts_cap;
	uint32_t *node_line; /* per node: the line of its header */
	uint32_t node_line_cap;
	char *ids;
	size_t ids_len, ids_cap;
	uint32_t cur_node, line;
	int seen_record;	/* a record or attribute line was read: the preamble is over */
	uint32_t first_skipped; /* the first preamble line skipped, for a file with no node */
	uint64_t next_guid[4];	/* ibsim's GUID counters by node type */
	uint64_t given_guid[4]; /* from a switchguid=/caguid=/rtguid= line, for the next node */
	uint8_t guid_pending[4];
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

	sn_assert(node < np->f->nnodes);
	/* Growing rehashes every node of the fabric, this one included. */
	if (np->f->nnodes * 2 >= np->index.cap)
		return index_grow(np);
	/* Under half full and a power of two: the probe below ends, the mask wraps it. */
	sn_assert(np->f->nnodes * 2 < np->index.cap && !(np->index.cap & (np->index.cap - 1)));
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

		sn_assert(n < np->f->nnodes);
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

/* "(hex digits)" as ibnetdiscover writes port GUIDs; s is left alone when none is there. */
static char *read_paren_guid(char *s, uint64_t *guid, int *bad)
{
	const char *p = skip_ws(s);

	*bad = 0;
	if (*p != '(')
		return s;
	p++;
	if (fab_scan_hex_digits(&p, 16, guid) || *p != ')') {
		*bad = 1;
		return s;
	}
	return s + (p + 1 - s);
}

/* "[ext 12]": the front-panel number of a chassis port, which routing does not need. */
static char *skip_ext(char *s)
{
	char *end;

	if (strncmp(s, "[ext ", 5))
		return s;
	end = strchr(s, ']');
	return end ? end + 1 : s;
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

static uint64_t node_guid(struct netparse *np, enum fab_node_type type, unsigned nports,
			  const char *id)
{
	uint64_t g;

	/* Routers without rtguid= count with the CAs, where ibsim's router counter starts at 0. */
	unsigned counter = type == FAB_ROUTER && !np->guid_pending[type] ? FAB_CA : type;

	if (np->guid_pending[type])
		g = np->given_guid[type];
	else if (guid_from_id(id, &g))
		g = np->next_guid[counter];
	np->guid_pending[type] = 0;
	np->next_guid[counter] = g + (type == FAB_SWITCH ? 1 : nports + 1);
	return g;
}

/*
 * "lid N" and "lmc M" among the words of a comment, up to stop (or the end): a switch header's
 * "... port 0 lid 1 lmc 0", a CA port's "# lid 6 lmc 0 \"remote\" ...".
 */
static void comment_lid(const char *s, const char *stop, unsigned *lid, unsigned *lmc)
{
	const char *p;

	for (p = s; (p = strstr(p, "lid ")) && (!stop || p < stop); p += 4) {
		const char *q = p + 4;

		if (p > s && p[-1] != ' ' && p[-1] != '\t')
			continue;
		if (fab_scan_decimal(&q, FAB_MAX_LID + 1, lid))
			continue;
		fab_skip_blanks(&q);
		if (!strncmp(q, "lmc ", 4)) {
			q += 4;
			if (fab_scan_decimal(&q, 8, lmc))
				*lmc = 0;
		}
		return;
	}
}

static int grow_per_port(struct netparse *np)
{
	uint32_t old = np->facts_cap;

	if (fab_grow((void **)&np->facts, &np->facts_cap, np->f->nports, sizeof(*np->facts), 1024))
		return -1;
	memset(np->facts + old, 0, (np->facts_cap - old) * sizeof(*np->facts));
	return fab_grow((void **)&np->node_line, &np->node_line_cap, np->f->nnodes,
			sizeof(*np->node_line), 256);
}

/* The description after '#': quoted, or up to ibsim's keywords when it is not. */
static char *header_desc(char *rest, char **desc)
{
	static const char *const ends[] = { " enhanced port ", " base port ", " lid ", " lmc " };
	char *s = skip_ws(rest + 1), *e;
	unsigned i;

	if (*s == '"')
		return read_quoted(s, desc);
	*desc = s;
	for (i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		e = strstr(s, ends[i]);
		if (e) {
			*e = '\0';
			return e + 1;
		}
	}
	return s + strlen(s);
}

static int parse_header(struct netparse *np, char *s)
{
	char *id, *desc = NULL, *rest, *after = NULL;
	unsigned lid = 0, lmc = 0;
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
		after = header_desc(rest, &desc);
		if (!after)
			return fail(np, "unterminated node description");
		comment_lid(after, NULL, &lid, &lmc);
	}
	if (index_get(np, id) != FAB_NONE)
		return fail(np, "node id defined twice");
	guid = node_guid(np, type, nports, id);
	np->cur_node = fabric_add_node(np->f, type, guid, nports, id, desc ? desc : id);
	if (np->cur_node == FAB_NONE || index_put(np, np->cur_node) || grow_per_port(np))
		return fail(np, "out of memory");
	sn_assert(np->cur_node < np->node_line_cap && np->f->nports <= np->facts_cap);
	np->node_line[np->cur_node] = np->line;
	if (type == FAB_SWITCH)
		np->facts[fabric_port_index(np->f, np->cur_node, 0)].lid = (uint16_t)lid;
	return 0;
}

static uint32_t keep_id(struct netparse *np, const char *id)
{
	uint32_t off;

	if (fab_strings_put(&np->ids, &np->ids_len, &np->ids_cap, id, strlen(id), &off))
		return FAB_NONE;
	return off;
}

/* The link's rate: the last word of the comment that reads as one ("4xEDR"), else 0. */
static unsigned comment_rate(const char *s)
{
	unsigned rate = 0, r;

	while (*s) {
		s += strspn(s, " \t");
		r = fabric_rate_ibnd(s);
		if (r)
			rate = r;
		s += strcspn(s, " \t");
	}
	return rate;
}

/*
 * The comment after a link: a switch's port line says "\"remote desc\" lid N 4xEDR", a CA's
 * "lid OWN lmc M \"remote desc\" lid N 4xEDR".  The LID before the quoted description is the
 * CA port's own, the one after it the far end's.
 */
static void port_comment(struct netparse *np, char *c, struct pending_link *l)
{
	uint32_t own_port = fabric_port_index(np->f, l->node, l->port);
	struct port_facts *own = &np->facts[own_port];
	char *quote = strchr(c, '"'), *close = quote ? strchr(quote + 1, '"') : NULL;
	unsigned lid = 0, lmc = 0;

	/* parse_port_line checked the port against the node before recording the link. */
	sn_assert(own_port != FAB_NONE && own_port < np->facts_cap);
	if (!fabric_is_switch(np->f, l->node)) {
		comment_lid(c, quote, &lid, &lmc);
		sn_assert(lid <= FAB_MAX_LID && lmc < 8);
		own->lid = (uint16_t)lid;
		own->lmc = (uint8_t)lmc;
	}
	if (close) {
		lid = 0;
		comment_lid(close + 1, NULL, &lid, &lmc);
		l->remote_lid = (uint16_t)lid;
	}
	np->f->ports[own_port].rate = (uint16_t)comment_rate(close ? close + 1 : c);
}

static struct pending_link *new_link(struct netparse *np)
{
	if (fab_grow((void **)&np->links, &np->links_cap, np->nlinks + 1, sizeof(*np->links), 1024))
		return NULL;
	memset(&np->links[np->nlinks], 0, sizeof(*np->links));
	return &np->links[np->nlinks++];
}

/* "[1](portguid) \"remote\"[3](portguid) # comment", each "(guid)" and "[ext N]" optional. */
static int parse_port_line(struct netparse *np, char *s)
{
	unsigned long port, rport;
	struct pending_link *l;
	uint64_t own_guid = 0;
	char *rest, *rid;
	int bad;

	if (np->cur_node == FAB_NONE)
		return fail(np, "port line outside a node record");
	rest = read_uint(s + 1, 254, &port);
	if (!rest || *rest != ']' || port == 0 || port > np->f->nodes[np->cur_node].nports)
		return fail(np, "bad local port number");
	rest = skip_ext(rest + 1);
	rest = read_paren_guid(rest, &own_guid, &bad);
	if (bad)
		return fail(np, "port GUID in parentheses: expected 1 to 16 hex digits");
	rest = read_quoted(rest, &rid);
	if (!rest)
		return fail(np, "expected \"remote-id\"[port]");
	rest = skip_ws(rest);
	if (*rest != '[')
		return fail(np, "expected [remote-port] after the remote id");
	rest = read_uint(rest + 1, 254, &rport);
	if (!rest || *rest != ']' || rport == 0)
		return fail(np, "bad remote port number");
	l = new_link(np);
	if (!l)
		return fail(np, "out of memory");
	l->node = np->cur_node;
	l->port = (uint8_t)port;
	l->remote_port = (uint8_t)rport;
	l->line = np->line;
	rest = read_paren_guid(skip_ext(rest + 1), &l->remote_guid, &bad);
	if (bad)
		return fail(np, "remote port GUID in parentheses: expected 1 to 16 hex digits");
	if (own_guid && !fabric_is_switch(np->f, np->cur_node)) {
		uint32_t p = fabric_port_index(np->f, np->cur_node, (unsigned)port);

		sn_assert(p != FAB_NONE && p < np->facts_cap);
		np->f->ports[p].guid = own_guid;
		np->facts[p].guid_given = 1;
	}
	rest = strchr(rest, '#');
	if (rest)
		port_comment(np, rest + 1, l);
	l->remote_id = keep_id(np, rid);
	if (l->remote_id == FAB_NONE)
		return fail(np, "out of memory");
	return 0;
}

/*
 * switchguid=0x..(..), caguid=0x.., hcaguids=0x.., rtguid=0x..: ibsim gives the next node of
 * that type this GUID.  1 when s is such a line, -1 when its value is malformed.
 */
static int guid_base_line(struct netparse *np, const char *s)
{
	static const struct {
		const char *key;
		enum fab_node_type type;
	} keys[] = { { "switchguid=", FAB_SWITCH },
		     { "caguid=", FAB_CA },
		     { "hcaguids=", FAB_CA },
		     { "rtguid=", FAB_ROUTER } };
	unsigned i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *p = s + strlen(keys[i].key);
		uint64_t g;

		if (strncmp(s, keys[i].key, strlen(keys[i].key)))
			continue;
		if (fab_scan_guid(&p, &g) || (*p != '(' && !fab_rest_blank(p) && *p != '#'))
			return -1;
		np->given_guid[keys[i].type] = g;
		np->guid_pending[keys[i].type] = 1;
		return 1;
	}
	return 0;
}

/* Lines that carry nothing for routing: attributes ibsim reads and ibnetdiscover's titles. */
static int is_ignored_line(const char *s)
{
	static const char *const keys[] = {
		"vendid=", "devid=", "sysimgguid=", "width=",	"speed=",    "extspeed=",
		"module",  "pdebug", "do ",	    "Chassis ", "Hostname:", "Non-Chassis Nodes",
		NULL
	};
	unsigned i;

	for (i = 0; keys[i]; i++)
		if (!strncmp(s, keys[i], strlen(keys[i])))
			return 1;
	return 0;
}

static int parse_line(struct netparse *np, char *s)
{
	enum fab_node_type type;
	int r;

	s = skip_ws(s);
	s[strcspn(s, "\r\n")] = '\0';
	if (!*s) {
		np->cur_node = FAB_NONE;
		return 0;
	}
	if (*s == '#')
		return 0;
	r = guid_base_line(np, s);
	if (r < 0)
		return fail(np, "expected a GUID after '=' (0x and 1 to 16 hex digits)");
	if (r > 0 || is_ignored_line(s)) {
		np->seen_record = 1;
		return 0;
	}
	if (!strncmp(s, "include", 7))
		return fail(np, "'include' is not supported; concatenate the files instead");
	if (*s == '[')
		return parse_port_line(np, s);
	/* ibnetdiscover's progress and error lines come before the topology: skip them there. */
	if (!np->seen_record && !read_type(s, &type)) {
		if (!np->first_skipped)
			np->first_skipped = np->line;
		return 0;
	}
	np->seen_record = 1;
	return parse_header(np, s);
}

/* Where the file says what the far end of a link is: its LID, its port GUID. */
static int check_far_end(struct netparse *np, const struct pending_link *l, uint32_t remote,
			 const char *rid)
{
	struct fabric *f = np->f;
	int sw = fabric_is_switch(f, remote);
	uint32_t rp = fabric_port_index(f, remote, sw ? 0 : l->remote_port);
	struct port_facts *far;
	char msg[400];

	/* resolve_links checked the remote port against the node's ports. */
	sn_assert(rp != FAB_NONE && rp < np->facts_cap);
	far = &np->facts[rp];

	if (l->remote_lid && far->lid && far->lid != l->remote_lid) {
		snprintf(msg, sizeof(msg),
			 "this line gives \"%.200s\"%s LID %u, its own line (%u) LID %u", rid,
			 sw ? "" : " port", l->remote_lid, np->node_line[remote], far->lid);
		return fail(np, msg);
	}
	if (l->remote_lid && !far->lid)
		far->lid = l->remote_lid;
	if (!l->remote_guid || sw)
		return 0;
	if (far->guid_given && f->ports[rp].guid != l->remote_guid) {
		snprintf(msg, sizeof(msg),
			 "this line gives \"%.200s\"[%u] port GUID %" PRIx64
			 ", its own line %" PRIx64,
			 rid, l->remote_port, l->remote_guid, f->ports[rp].guid);
		return fail(np, msg);
	}
	f->ports[rp].guid = l->remote_guid;
	far->guid_given = 1;
	return 0;
}

static int resolve_links(struct netparse *np)
{
	uint32_t i;

	for (i = 0; i < np->nlinks; i++) {
		const struct pending_link *l = &np->links[i];
		const char *rid;
		uint32_t remote;
		struct fab_error lerr;
		char msg[300];

		sn_assert(l->remote_id < np->ids_len && l->node < np->f->nnodes);
		rid = np->ids + l->remote_id;
		remote = index_get(np, rid);

		np->line = l->line;
		if (remote == FAB_NONE) {
			snprintf(msg, sizeof(msg), "link to unknown node \"%.200s\"", rid);
			return fail(np, msg);
		}
		if (l->remote_port > np->f->nodes[remote].nports) {
			snprintf(msg, sizeof(msg), "node \"%.200s\" has no port %u", rid,
				 l->remote_port);
			return fail(np, msg);
		}
		if (remote == l->node && l->remote_port == l->port)
			return fail(np, "a port cabled to itself");
		if (check_far_end(np, l, remote, rid))
			return -1;
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

/*
 * Puts the LIDs the file gave into the model and returns the LMC to fill the others with: the
 * file's own, unless another one was asked for.  Then OpenSM would hand out new LIDs, and so
 * does fabric_fill_lids() when none is kept here.
 */
static unsigned apply_file_lids(struct netparse *np)
{
	const struct netfile_opts *o = np->opts;
	unsigned lmc = o ? o->lmc : 0, file_lmc = 0;
	struct fabric *f = np->f;
	int any = 0;
	uint32_t p;

	/* Every node added grew the per-port facts with it. */
	sn_assert(f->nports <= np->facts_cap);
	for (p = 0; p < f->nports; p++) {
		const struct fab_port *port = &f->ports[p];

		if (!np->facts[p].lid || !port->num || fabric_is_switch(f, port->node) ||
		    port->remote == FAB_NONE)
			continue;
		if (any && np->facts[p].lmc != file_lmc)
			return lmc;
		file_lmc = np->facts[p].lmc;
		any = 1;
	}
	if (any && o && o->lmc_given && file_lmc != lmc)
		return lmc;
	for (p = 0; p < f->nports; p++) {
		f->ports[p].base_lid = np->facts[p].lid;
		f->ports[p].lmc = fabric_is_switch(f, f->ports[p].node) ? 0 : np->facts[p].lmc;
	}
	return any ? file_lmc : lmc;
}

/*
 * Node GUIDs, and the port GUIDs of linked CA and router ports, are unique and not 0: OpenSM
 * keys the subnet by them.  ("S-0002c9..." and "S-0002C9..." are two ids for one GUID.)  The
 * error names the lines of the nodes.
 */
static int check_guids(struct netparse *np)
{
	const char *what;
	struct fab_guid_clash c;
	int found = fabric_find_guid_clash(np->f, &c);

	np->line = 0;
	if (found < 0)
		return fail(np, "out of memory");
	if (!found)
		return 0;
	what = c.port ? "port GUID" : "node GUID";
	sn_assert(c.first < np->f->nnodes && (c.second == FAB_NONE || c.second < np->f->nnodes));
	if (c.second == FAB_NONE) {
		np->line = np->node_line[c.first];
		fab_error_set(np->err, "%s:%u: %s 0 is not a valid GUID", np->path, np->line, what);
		return -1;
	}
	np->line = np->node_line[c.second];
	fab_error_set(np->err, "%s:%u: %s 0x%016" PRIx64 " already belongs to \"%.150s\" (line %u)",
		      np->path, np->line, what, c.guid, fabric_node_id(np->f, c.first),
		      np->node_line[c.first]);
	return -1;
}

int fabric_load_netfile(struct fabric *f, const char *path, const struct netfile_opts *opts,
			struct fab_error *err)
{
	struct netparse np = { .path = path, .f = f, .opts = opts, .err = err };
	struct fab_error lerr;
	struct line_reader lr;
	char *line;
	int ret = -1;

	np.cur_node = FAB_NONE;
	np.next_guid[FAB_SWITCH] = SIM_FIRST_SWITCH_GUID;
	np.next_guid[FAB_CA] = SIM_FIRST_CA_GUID;
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
		np.line = np.first_skipped;
		fail(&np, np.first_skipped
				  ? "expected a node header (Switch, Hca, Ca or Rt); the file "
				    "has no node record"
				  : "no nodes in file");
		goto out;
	}
	if (resolve_links(&np) || check_guids(&np))
		goto out;
	activate_linked_ports(f, opts ? opts->op_vls : 8);
	if (fabric_fill_lids(f, apply_file_lids(&np), &lerr)) {
		fab_error_set(err, "%s: %s", path, lerr.msg);
		goto out;
	}
	ret = 0;
out:
	line_reader_close(&lr);
	free(np.links);
	free(np.ids);
	free(np.facts);
	free(np.node_line);
	free(np.index.slots);
	return ret;
}
