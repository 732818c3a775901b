/*
 * gen_private.h - what the pieces of `sarnue gen` share.
 *
 * gen.c parses and checks the command line into struct opts and hands it to one family's
 * builder (fattree.c, torus.c, random.c, hyperx.c, dragonfly.c, slimfly.c, kautz.c, and the
 * exascale families fishnet.c, mlfm.c, oft.c, cascade.c, dfplus.c).  A builder
 * sizes and wires a struct gen_fabric through the calls of build.c; faults.c then removes
 * switches and links without splitting the switch graph, and write.c writes the ibsim net file.
 * help.c holds the text of --help.
 * Nothing here is seen outside cli/gen/: cli/sarnue.c knows only gen.h.
 */
#ifndef SARNUE_GEN_PRIVATE_H
#define SARNUE_GEN_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/progress.h"

#define GEN_OK 0
#define GEN_FAIL 1  /* I/O or memory trouble */
#define GEN_USAGE 2 /* the parameters cannot work */

/* NodeInfo.NumPorts is 8 bits and port 255 is reserved. */
#define GEN_MAX_PORTS 254
/* Far beyond any real fabric; keeps every product below in 64 bits. */
#define GEN_MAX_PARAM 1000000UL
#define GEN_MAX_SWITCHES (1UL << 20)
#define GEN_MAX_HOSTS (1UL << 24)
#define GEN_MAX_PORT_SLOTS (1UL << 25)
/* NodeDescription is 64 bytes and ibsim keeps 63 characters of it. */
#define DESC_MAX 63
#define SW_DESC_LEN 48

/* Switch levels of a tree: 2^20 switches allow no more than 20 anyway. */
#define TREE_MAX_LEVELS 20

#define NO_NODE UINT32_MAX
#define NO_PORT UINT16_MAX

/* Independent PRNG streams so that, e.g., adding faults keeps the graph. */
#define STREAM_RM_SWITCHES 1
#define STREAM_RM_LINKS 2
#define STREAM_RANDOM 0x1000

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

enum topo {
	TOPO_NONE,
	TOPO_FATTREE2,
	TOPO_KTREE,
	TOPO_TORUS,
	TOPO_RANDOM,
	TOPO_DRAGONFLY,
	TOPO_XGFT,
	TOPO_FATTREE,
	TOPO_ISLANDS,
	TOPO_HYPERX,
	TOPO_SLIMFLY,
	TOPO_KAUTZ,
	TOPO_FISHNET,
	TOPO_FISHNET_LITE,
	TOPO_MLFM,
	TOPO_OFT,
	TOPO_CASCADE,
	TOPO_DFPLUS,
};

enum opt_id {
	OPT_HELP,
	OPT_VERSION,
	OPT_QUIET,
	OPT_OUT,
	OPT_HOSTPAT,
	OPT_RADIX,
	OPT_SEED,
	OPT_RM_LINKS,
	OPT_RM_SWITCHES,
	OPT_RM_SWITCH_ID,
	OPT_LEAVES,
	OPT_SPINES,
	OPT_HPL,
	OPT_LPP,
	OPT_K,
	OPT_N,
	OPT_DIMS,
	OPT_MESH,
	OPT_LAYERS_FILE,
	OPT_HPS,
	OPT_SWITCHES,
	OPT_DEGREE,
	OPT_A,
	OPT_P,
	OPT_H,
	OPT_G,
	OPT_M,
	OPT_W,
	OPT_LEVELS,
	OPT_HOSTS,
	OPT_TAPER,
	OPT_ISLANDS,
	OPT_HPI,
	OPT_CORE_TAPER,
	OPT_CORE_RADIX,
	OPT_Q,
	OPT_D,
	OPT_BASE,
	OPT_L,
	OPT_BLACK,
	OPT_COUNT
};

/* down:up ports of a switch, as in "2:1" */
struct ratio {
	unsigned long down;
	unsigned long up;
};

struct opts {
	const char *topo_name;
	enum topo topo;
	bool help, version;
	bool set[OPT_COUNT];
	const char *name[OPT_COUNT]; /* spelling the user chose */
	const char *val[OPT_COUNT];  /* raw value, for messages */
	unsigned long num[OPT_COUNT];
	uint64_t seed;
	unsigned long dims[3];
	unsigned int ndims;
	bool rm_pct;
	double rm_links_pct;
	unsigned long rm_links;
	const char **rm_ids;
	unsigned int n_rm_ids;
	unsigned long m[TREE_MAX_LEVELS + 1]; /* xgft --m, 1-based */
	unsigned long w[TREE_MAX_LEVELS + 1];
	unsigned int nm;
	unsigned int nw;
	struct ratio taper;
	struct ratio core_taper;
};

struct hostfmt {
	char prefix[DESC_MAX + 1];
	char suffix[DESC_MAX + 1];
	bool left;
	bool zero;
	bool alt;
	int width;
	int prec; /* -1: none given */
	char conv;
};

struct peer {
	uint32_t node; /* switch index, nsw + host index, or NO_NODE */
	uint16_t port;
};

/*
 * Ports live in one flat array: switch s owns peer[base[s] .. base[s + 1]),
 * port p at peer[base[s] + p - 1].  This keeps a 20,000-host fabric at a
 * few allocations and makes the graph walks cache friendly.
 */
struct gen_fabric {
	uint32_t nsw;
	uint32_t nhost;
	unsigned long radix; /* 0: size each switch to what it needs */
	uint32_t *base;
	struct peer *peer;
	char (*desc)[SW_DESC_LEN];
	uint8_t *dead;
	uint32_t *host_sw;
	uint16_t *host_port;
	bool conflict; /* a builder wired a port twice: a bug */
};

struct rng {
	uint64_t s[4];
};

struct rm_event {
	bool is_switch;
	uint32_t a;
	uint32_t b;
	uint16_t pa;
	uint16_t pb;
	uint32_t hosts;
};

struct rm_log {
	struct rm_event *ev;
	uint32_t n;
	uint32_t cap;
};

/* gen.c: messages go to stderr as "sarnue gen: ..." and give back the exit status. */
int gen_error(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define gen_usage(...) gen_error(GEN_USAGE, __VA_ARGS__)
#define gen_fail(...) gen_error(GEN_FAIL, __VA_ARGS__)
#define gen_nomem() gen_fail("out of memory")

static inline uint64_t ceil_div(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

/* help.c */
void gen_print_help(FILE *fp);

/* build.c: the seeded PRNG */
void rng_seed(struct rng *r, uint64_t seed, uint64_t stream);
uint64_t rng_next(struct rng *r);
uint64_t rng_below(struct rng *r, uint64_t n);
void shuffle_u32(struct rng *r, uint32_t *v, uint32_t n);

/*
 * build.c: the in-memory fabric.  A builder calls gen_fabric_init(), names every switch with
 * sw_desc() and states its ports with gen_fabric_need(), lays the ports out with
 * gen_fabric_ports() and then wires them with link_sw() and the attach and clique helpers.
 */
int gen_fabric_init(struct gen_fabric *f, uint64_t nsw, uint64_t nhost, unsigned long radix);
void gen_fabric_free(struct gen_fabric *f);
void sw_desc(struct gen_fabric *f, uint32_t s, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void gen_fabric_need(struct gen_fabric *f, uint32_t s, uint64_t need);
int gen_fabric_ports(struct gen_fabric *f);
uint32_t sw_nports(const struct gen_fabric *f, uint32_t s);
void link_sw(struct gen_fabric *f, uint32_t a, uint64_t pa, uint32_t b, uint64_t pb);
void attach_spread(struct gen_fabric *f, uint32_t first, uint32_t n, uint32_t host,
		   uint64_t nhosts);
void attach_hosts(struct gen_fabric *f, uint32_t first, uint32_t n, uint32_t per);
void link_clique(struct gen_fabric *f, uint32_t first, uint32_t stride, uint32_t n,
		 uint64_t first_port, uint64_t r);
void link_groups(struct gen_fabric *f, uint32_t g, uint32_t stride, uint32_t off, uint32_t per,
		 uint64_t first, uint32_t n);
void gen_fabric_check(const struct gen_fabric *f);
uint32_t live_switches(const struct gen_fabric *f);
uint64_t live_links(const struct gen_fabric *f);

/* The families: a validate_* completes and checks the options, a build_* wires the fabric. */
int build_fattree2(struct gen_fabric *f, const struct opts *o);
int validate_xgft(struct opts *o);
int build_ktree(struct gen_fabric *f, const struct opts *o);
int build_xgft(struct gen_fabric *f, const struct opts *o);
int validate_fattree(struct opts *o);
int build_fattree(struct gen_fabric *f, const struct opts *o);
int build_islands(struct gen_fabric *f, const struct opts *o);
int build_torus(struct gen_fabric *f, const struct opts *o);
void write_layers(FILE *fp, const struct gen_fabric *f, const struct opts *o);
int validate_random(const struct opts *o);
int build_random(struct gen_fabric *f, const struct opts *o);
int validate_hyperx(const struct opts *o);
int build_hyperx(struct gen_fabric *f, const struct opts *o);
int validate_dragonfly(struct opts *o);
int build_dragonfly(struct gen_fabric *f, const struct opts *o);
int validate_slimfly(const struct opts *o);
int build_slimfly(struct gen_fabric *f, const struct opts *o);
int build_kautz(struct gen_fabric *f, const struct opts *o);
bool gf_is_prime_power(uint64_t q);
int gf_tables(uint32_t q, uint32_t **add_out, uint32_t **mul_out);
int mms_graph(uint32_t q, uint32_t **adj_out, uint32_t *n_out, uint32_t *k_out);
int validate_fishnet(struct opts *o);
int build_fishnet(struct gen_fabric *f, const struct opts *o);
int validate_mlfm(struct opts *o);
int build_mlfm(struct gen_fabric *f, const struct opts *o);
int validate_oft(struct opts *o);
int build_oft(struct gen_fabric *f, const struct opts *o);
int validate_cascade(struct opts *o);
int build_cascade(struct gen_fabric *f, const struct opts *o);
int validate_dfplus(struct opts *o);
int build_dfplus(struct gen_fabric *f, const struct opts *o);

/* faults.c: --remove-switch-id, --remove-switches and --remove-links, and what they did. */
int apply_faults(struct gen_fabric *f, const struct opts *o, struct rm_log *log);
void gen_report(const struct gen_fabric *f, const struct rm_log *log, uint32_t nhosts);

/* write.c: host names and the net file. */
int hostfmt_parse(struct hostfmt *hf, const char *pat);
uint32_t number_hosts(const struct gen_fabric *f, uint32_t *hid);
int check_hostnames(const struct hostfmt *hf, const char *pat, uint32_t nhosts);
int open_temp(const char *out, char **tmp_out, FILE **fp_out);
int commit_temp(FILE *fp, char *tmp, const char *out);
int write_output(const struct gen_fabric *f, const struct opts *o, const struct hostfmt *hf,
		 const uint32_t *hid, uint32_t nhosts, int argc, char **argv,
		 const struct progress_hook *progress);

#endif /* SARNUE_GEN_PRIVATE_H */
