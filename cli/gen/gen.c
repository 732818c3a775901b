/*
 * sarnue gen: generates synthetic InfiniBand fabrics (fat trees: XGFTs,
 * k-ary n-trees, tapered real-life trees and multi-island machines; tori,
 * meshes and HyperX; random regular graphs, dragonflies, Slim Flies and
 * Kautz graphs), optionally
 * with seeded faults, and writes them as ibsim net files, which ibnetdiscover
 * readers accept as well.  Used for tests, benchmarks and operators'
 * what-if studies, so the output must be a pure function of the command line.
 */
#include "cli/gen/gen.h"
#include "fabric/fabric.h"
#include "lib/numbers.h"
#include "lib/arena.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
#define HOSTBUF 256
/* ibsim reads lines of at most 255 characters; keep comments well short. */
#define CMDLINE_MAX 200
/* A random 2-regular graph is one cycle with probability ~sqrt(pi / 2N). */
#define RANDOM_ATTEMPTS 1000

/* GF(q) for Slim Fly: q = p^n below 2^20 switches has n < 20. */
#define GF_MAX_DEGREE 20
/* Switch levels of a tree: 2^20 switches allow no more than 20 anyway. */
#define TREE_MAX_LEVELS 20

#define NO_NODE UINT32_MAX
#define NO_PORT UINT16_MAX

/* Independent PRNG streams so that, e.g., adding faults keeps the graph. */
#define STREAM_RM_SWITCHES 1
#define STREAM_RM_LINKS 2
#define STREAM_RANDOM 0x1000

#define DEFAULT_HOSTNAME "node%04d"

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
};

#define TB(t) (1U << (t))
#define LPP_TOPOS                                                                \
	(TB(TOPO_FATTREE2) | TB(TOPO_TORUS) | TB(TOPO_XGFT) | TB(TOPO_FATTREE) | \
	 TB(TOPO_ISLANDS) | TB(TOPO_HYPERX) | TB(TOPO_SLIMFLY) | TB(TOPO_KAUTZ))
#define HPS_TOPOS \
	(TB(TOPO_TORUS) | TB(TOPO_RANDOM) | TB(TOPO_HYPERX) | TB(TOPO_SLIMFLY) | TB(TOPO_KAUTZ))

static const struct {
	const char *name;
	enum topo topo;
} topo_names[] = {
	{ "fattree2", TOPO_FATTREE2 }, { "ktree", TOPO_KTREE },		{ "torus", TOPO_TORUS },
	{ "random", TOPO_RANDOM },     { "dragonfly", TOPO_DRAGONFLY }, { "xgft", TOPO_XGFT },
	{ "fattree", TOPO_FATTREE },   { "islands", TOPO_ISLANDS },	{ "hyperx", TOPO_HYPERX },
	{ "slimfly", TOPO_SLIMFLY },   { "kautz", TOPO_KAUTZ },
};

#define TOPO_LIST \
	"fattree2, ktree, torus, random, dragonfly, xgft, fattree, islands, hyperx, slimfly or kautz"

enum opt_id {
	OPT_HELP,
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
	OPT_COUNT
};

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
	{ "-o", OPT_OUT, ARG_STR, 0 },
	{ "--output", OPT_OUT, ARG_STR, 0 },
	{ "--hostname-pattern", OPT_HOSTPAT, ARG_STR, 0 },
	{ "--radix", OPT_RADIX, ARG_NUM, 0 },
	{ "--seed", OPT_SEED, ARG_STR, 0 },
	{ "--remove-links", OPT_RM_LINKS, ARG_STR, 0 },
	{ "--remove-switches", OPT_RM_SWITCHES, ARG_NUM, 0 },
	{ "--remove-switch-id", OPT_RM_SWITCH_ID, ARG_STR, 0 },
	{ "--leaves", OPT_LEAVES, ARG_NUM, TB(TOPO_FATTREE2) },
	{ "--spines", OPT_SPINES, ARG_NUM, TB(TOPO_FATTREE2) },
	{ "--hosts-per-leaf", OPT_HPL, ARG_NUM, TB(TOPO_FATTREE2) | TB(TOPO_KTREE) },
	{ "--links-per-pair", OPT_LPP, ARG_NUM, LPP_TOPOS },
	{ "--k", OPT_K, ARG_NUM, TB(TOPO_KTREE) },
	{ "--n", OPT_N, ARG_NUM, TB(TOPO_KTREE) | TB(TOPO_KAUTZ) },
	{ "--dims", OPT_DIMS, ARG_STR, TB(TOPO_TORUS) | TB(TOPO_HYPERX) },
	{ "--mesh", OPT_MESH, ARG_NONE, TB(TOPO_TORUS) },
	{ "--layers-file", OPT_LAYERS_FILE, ARG_STR, TB(TOPO_TORUS) },
	{ "--hosts-per-switch", OPT_HPS, ARG_NUM, HPS_TOPOS },
	{ "--switches", OPT_SWITCHES, ARG_NUM, TB(TOPO_RANDOM) },
	{ "--degree", OPT_DEGREE, ARG_NUM, TB(TOPO_RANDOM) },
	{ "--a", OPT_A, ARG_NUM, TB(TOPO_DRAGONFLY) },
	{ "--p", OPT_P, ARG_NUM, TB(TOPO_DRAGONFLY) },
	{ "--h", OPT_H, ARG_NUM, TB(TOPO_DRAGONFLY) | TB(TOPO_XGFT) },
	{ "--g", OPT_G, ARG_NUM, TB(TOPO_DRAGONFLY) },
	{ "--m", OPT_M, ARG_STR, TB(TOPO_XGFT) },
	{ "--w", OPT_W, ARG_STR, TB(TOPO_XGFT) },
	{ "--levels", OPT_LEVELS, ARG_NUM, TB(TOPO_FATTREE) | TB(TOPO_ISLANDS) },
	{ "--hosts", OPT_HOSTS, ARG_NUM, TB(TOPO_FATTREE) },
	{ "--taper", OPT_TAPER, ARG_STR, TB(TOPO_FATTREE) | TB(TOPO_ISLANDS) },
	{ "--islands", OPT_ISLANDS, ARG_NUM, TB(TOPO_ISLANDS) },
	{ "--hosts-per-island", OPT_HPI, ARG_NUM, TB(TOPO_ISLANDS) },
	{ "--core-taper", OPT_CORE_TAPER, ARG_STR, TB(TOPO_ISLANDS) },
	{ "--core-radix", OPT_CORE_RADIX, ARG_NUM, TB(TOPO_ISLANDS) },
	{ "--q", OPT_Q, ARG_NUM, TB(TOPO_SLIMFLY) },
	{ "--d", OPT_D, ARG_NUM, TB(TOPO_KAUTZ) },
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* down:up ports of a switch, as in "2:1" */
struct ratio {
	unsigned long down;
	unsigned long up;
};

struct opts {
	const char *topo_name;
	enum topo topo;
	bool help;
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

struct cut {
	uint32_t *disc;
	uint32_t *low;
	uint32_t *stack;
	uint16_t *next;	 /* next port index to explore */
	uint16_t *entry; /* port index we were reached through */
	uint16_t *up;	 /* parent's port index towards us */
	uint8_t *art;	 /* articulation point */
	uint8_t *bridge; /* per port slot */
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

struct rgraph {
	uint32_t n;
	uint32_t d;
	uint32_t *nbr; /* n * d neighbour slots */
	uint32_t *deg;
	uint32_t *ea;
	uint32_t *eb;
	uint32_t ne;
	uint32_t *open; /* switches with free ports, phase 1 only */
	uint32_t *opos;
	uint32_t nopen;
	uint32_t *scratch;
};

static const char *const help_text[] = {
	"NAME",
	"    sarnue gen - generate synthetic InfiniBand fabrics as ibsim net files",
	"",
	"SYNOPSIS",
	"    sarnue gen fattree2 --leaves L --spines S --hosts-per-leaf H",
	"                        [--links-per-pair R]",
	"    sarnue gen ktree --k K --n N [--hosts-per-leaf H]",
	"    sarnue gen torus --dims A[xB[xC]] [--mesh] [--hosts-per-switch T]",
	"                     [--links-per-pair R] [--layers-file FILE]",
	"    sarnue gen random --switches N --degree D [--hosts-per-switch T] [--seed S]",
	"    sarnue gen dragonfly --a A --p P --h H [--g G]",
	"    sarnue gen xgft --h H --m M1,...,MH --w 1,W2,...,WH [--links-per-pair R]",
	"    sarnue gen fattree --radix R --hosts N [--levels 2|3|4] [--taper D:U]",
	"                       [--links-per-pair P]",
	"    sarnue gen islands --islands I --hosts-per-island N --radix R",
	"                       [--levels 2|3] [--taper D:U] [--core-taper D:U]",
	"                       [--core-radix RC] [--links-per-pair P]",
	"    sarnue gen hyperx --dims S1[xS2[xS3]] [--links-per-pair K]",
	"                      [--hosts-per-switch T]",
	"    sarnue gen slimfly --q Q [--hosts-per-switch P] [--links-per-pair R]",
	"    sarnue gen kautz --d D --n N [--hosts-per-switch T] [--links-per-pair R]",
	"",
	"    Common options, accepted by every topology:",
	"    [-o FILE] [--hostname-pattern PAT] [--radix R] [--seed S]",
	"    [--remove-links N | --remove-links P%] [--remove-switches N]",
	"    [--remove-switch-id ID]...",
	"",
	"DESCRIPTION",
	"    Builds a synthetic fabric in memory and writes it in the ibsim net file",
	"    format, a subset of ibnetdiscover output that ibsim and ibnetdiscover",
	"    readers parse.  Use it to feed routing tests, benchmarks and what-if",
	"    studies (\"what happens to routing if this spine dies?\").",
	"",
	"    Switches are named S-0001, S-0002, ... in creation order (order given",
	"    per topology below); hosts are single-port HCAs named H-0001, ... with",
	"    node description \"<hostname> HCA-1\".  On every switch the host ports",
	"    come first (ports 1..H), followed by the switch-to-switch ports.",
	"    Every link is listed in both endpoints' records.",
	"",
	"    The output is a deterministic function of the command line: all",
	"    randomness comes from --seed.",
	"",
	"TOPOLOGIES",
	"    fattree2",
	"        Two-level fat tree.  Every one of the L leaves is linked to every",
	"        one of the S spines by R parallel links (--links-per-pair, default",
	"        1); each leaf has H hosts.  Leaves are created first, then spines.",
	"        Leaf ports: hosts, then spine 0's links, spine 1's links, ...",
	"        Spine ports: leaf 0's links, leaf 1's links, ...",
	"",
	"    ktree",
	"        k-ary n-tree: N levels of K^(N-1) switches, wired as the standard",
	"        butterfly (a level-l switch reaches, through its up port c, the",
	"        level-(l+1) switch whose index differs only in base-K digit l,",
	"        which is set to c).  Leaves (level 0) carry H hosts, default K,",
	"        for K^N hosts.  Created level by level from the leaves; ports are",
	"        hosts or down ports first, then up ports.  This is the XGFT",
	"        (N; H,K..K; 1,K..K) below, and built by the same code.",
	"",
	"    torus",
	"        1-, 2- or 3-dimensional torus (wraparound) or, with --mesh, mesh.",
	"        --dims 8x8x4 gives 256 switches; a dimension may be 1.  Each",
	"        neighbour pair is joined by R parallel links (--links-per-pair,",
	"        default 1); a dimension of size 2 joins its pair once, not twice.",
	"        T hosts per switch (--hosts-per-switch, default 1).  Switches are",
	"        created with the first coordinate varying fastest.  Ports: hosts,",
	"        then per dimension R ports towards +1 and R towards -1 (only R for",
	"        a dimension of size 2).  Mesh edge switches leave the ports of the",
	"        missing direction unconnected, so a port always means the same",
	"        direction.",
	"        --layers-file FILE also writes a switch layers file for sar-nue's",
	"        nue_layers= option: every dimension of size 2 or more is cut into",
	"        two halves, and each block of halves is a layer (8 layers for a",
	"        3-dimensional torus, 4 for 2, 2 for 1), one '\"torus X,Y,Z\" LAYER'",
	"        line (\"mesh X,Y,Z\" with --mesh) per switch left.  sar-nue cuts a",
	"        torus it recognises into such blocks itself (nue_partition=auto);",
	"        the file is a start for layers an operator wants to choose.",
	"",
	"    random",
	"        Random D-regular graph of N switches (Jellyfish construction:",
	"        random non-adjacent pairs with free ports are joined, leftover",
	"        ports are placed by edge swaps).  The graph is always connected;",
	"        unlucky draws are retried from further seed-derived streams.",
	"        N*D must be even.  T hosts per switch (--hosts-per-switch,",
	"        default 1).",
	"",
	"    dragonfly",
	"        G groups (--g, default A*H+1) of A routers each; routers inside a",
	"        group are linked all-to-all, each router has P hosts and H global",
	"        links.  Global links use the consecutive arrangement: global port",
	"        j of a group (router j/H, its link j%H) goes to group i+j+1 mod G,",
	"        so with G = A*H+1 every pair of groups shares exactly one link.",
	"        With fewer groups the links are spread round-robin over the other",
	"        groups.  G may not exceed A*H+1.  Router ports: hosts, then the",
	"        A-1 local links in router order, then the H global links.",
	"",
	"    xgft",
	"        Extended generalized fat tree XGFT(H; M1..MH; W1..WH) (Ohring et",
	"        al.): level 0 are the hosts, levels 1..H switches.  A level-l node",
	"        is a digit vector (a_H..a_1) with a_j < M_j for j > l and a_j < W_j",
	"        for j <= l; a level-(l-1) node and a level-l node are linked iff",
	"        their digits agree except at position l.  So a level-l switch has",
	"        M_l children and W_(l+1) parents, and there are M1*...*MH hosts.",
	"        W1 must be 1 (hosts have one port).  --links-per-pair R joins each",
	"        pair of switches by R links (a PGFT with p = 1,R..R).  A k-ary",
	"        n-tree is XGFT(n; k..k; 1,k..k); ktree is built this way.",
	"        Switches are created level by level from the leaves, digit 1",
	"        varying fastest; ports: hosts or down ports first (child by",
	"        child, R each), then up ports (parent by parent, R each).",
	"",
	"    fattree",
	"        Real-life fat tree of N hosts from switches of R ports (--radix),",
	"        all levels built from the same switch, as installations are:",
	"        - A leaf splits its ports by the taper D:U (--taper, default 1:1):",
	"          U' = ceil(R*U/(D+U)) up ports, R-U' host ports.  So 36 ports at",
	"          2:1 give 24 host and 12 up ports.  Only the leaves are tapered.",
	"        - The levels between leaves and top are non-blocking: a switch",
	"          uses at most K = R - ceil(R/2) down ports and at least as many",
	"          up ports as down ports in use.  Top switches use all R ports",
	"          for down links.",
	"        - L = ceil(N/(R-U')) leaves are needed.  Top-down, each switch",
	"          level gets as few subtrees as hold them (below the top, a",
	"          level-l switch's subtree holds at most K^(l-1) leaves; the top",
	"          takes at most R subtrees); the leaves are spread evenly, so",
	"          there may be a few more than L, and the hosts are spread",
	"          evenly over the leaves.",
	"        - Bottom-up, every switch joins each of its parents by the same",
	"          number p of parallel links: p and the number of parents are",
	"          chosen for the fewest parents (then the fewest up ports used);",
	"          --links-per-pair fixes p.",
	"        This is a PGFT; e.g. 36 ports, 324 hosts: 18 leaves joined to 9",
	"        spines by 2 links each; 11664 hosts: the classic 3-level tree of",
	"        648 leaves, 648 spines and 324 cores.  --levels defaults to the",
	"        fewest (2 to 4) that hold N hosts.  Switch names: leaf, spine,",
	"        core, super-core.",
	"",
	"    islands",
	"        I islands (--islands), each a fat tree of N hosts and --levels",
	"        levels (default 2) built as fattree above, joined by a layer of",
	"        director switches with RC ports (--core-radix, default R), as",
	"        in the Taurus machine.  The top switches of an island split",
	"        their ports by --core-taper D:U (default 1:1) between the island",
	"        and the directors; every director is joined to every island top",
	"        switch by the same number of links, again chosen for the fewest",
	"        directors.  All island top switches must fit the RC ports of a",
	"        director.  Switch names: island i leaf/spine/core j, director j.",
	"",
	"    hyperx",
	"        S1 x S2 [x S3] grid of switches (--dims, every S at least 2);",
	"        every switch is linked to every switch that differs in exactly",
	"        one coordinate, by K links (--links-per-pair, default 1).  T",
	"        hosts per switch (--hosts-per-switch, default 1).  The diameter",
	"        is the number of dimensions.  Switches are created with the",
	"        first coordinate varying fastest; ports: hosts, then per",
	"        dimension one block of (S-1)*K ports, peers in coordinate order.",
	"",
	"    slimfly",
	"        Slim Fly: the McKay-Miller-Siran graph for a prime power",
	"        Q = 4w + delta, delta in {-1, 0, 1} (so any prime power Q >= 3:",
	"        3, 4, 5, 7, 8, 9, 11, 13, 16, ...), over the field GF(Q).  2*Q^2",
	"        switches (0,x,y) and (1,m,c) of network radix (3Q-delta)/2 and",
	"        diameter 2: (0,x,y)~(0,x,y') iff y-y' is in X, (1,m,c)~(1,m,c')",
	"        iff c-c' is in X', (0,x,y)~(1,m,c) iff y = m*x+c, with X and X'",
	"        the even and odd powers of a primitive element as given by",
	"        Besta and Hoefler.  Default hosts per switch: ceil(radix/2), the",
	"        full-global-bandwidth choice of that paper.  Switch (s,a,b) is",
	"        number s*Q^2 + a*Q + b; ports: hosts, X (or X') in order, then",
	"        one block per m (or x).",
	"",
	"    kautz",
	"        Kautz graph K(D, N) (D >= 1, N >= 1): switches are the strings",
	"        a_0..a_N over D+1 symbols with no two equal neighbours,",
	"        (D+1)*D^N of them; the arc a_0..a_N -> a_1..a_N b becomes a link.",
	"        InfiniBand links are bidirectional: every arc is kept as its own",
	"        link, so a pair with arcs both ways (alternating strings such as",
	"        0101 and 1010) is joined by two parallel links and every switch",
	"        has exactly 2D switch ports (there are no self-loops).  The",
	"        diameter is at most N+1.  Kautz(d,k) in Domke's thesis, with",
	"        strings of length k, is --d d --n k-1.  Ports: hosts, D out-arc",
	"        ports by successor, then D in-arc ports by predecessor.",
	"",
	"OPTIONS",
	"    -o FILE, --output FILE",
	"        Write to FILE (default: standard output; \"-\" also means standard",
	"        output).  FILE is replaced atomically and only if generation",
	"        succeeded.",
	"",
	"    --hostname-pattern PAT",
	"        printf-style pattern for host names, given the host's 1-based",
	"        number; exactly one integer conversion (d, i, u, x, X or o with",
	"        optional -, 0, # flags, width and precision).  Default node%04d.",
	"        The resulting \"<hostname> HCA-1\" must fit in 63 characters.",
	"",
	"    --radix R",
	"        Give every switch R ports (1..254).  Default: exactly as many as",
	"        the topology needs (at least 1).  It is an error if a switch",
	"        needs more than R.  For fattree and islands it is required: the",
	"        radix the tree is planned for (directors: --core-radix).",
	"",
	"    --seed S",
	"        Seed for the random topology and for fault injection (default 1).",
	"",
	"    --links-per-pair R",
	"        Parallel links per connected switch pair (fattree2, torus, xgft,",
	"        hyperx, slimfly, kautz: default 1; fattree and islands: default",
	"        as many as save switches).",
	"",
	"FAULTS",
	"    Faults are applied in this order: named switches, random switches,",
	"    random links.  Random choices never split the switch graph; a choice",
	"    that would is skipped for the next candidate.  Ports of removed links",
	"    stay unconnected (nothing is renumbered), switch ids keep their",
	"    numbers, but hosts are renumbered densely (H-0001.., node0001..) over",
	"    the hosts that remain.",
	"",
	"    --remove-links N, --remove-links P%",
	"        Remove N (or P percent, rounded) switch-to-switch links, chosen",
	"        with the seed.  Host links are never removed.",
	"",
	"    --remove-switches N",
	"        Remove N switches chosen with the seed, together with their hosts.",
	"",
	"    --remove-switch-id ID",
	"        Remove switch ID (e.g. S-0005) and its hosts.  May be repeated.",
	"        Fails if the removal would split the switch graph.",
	"",
	"    Every removed element is reported on standard error, e.g.",
	"        gen: removed switch S-0012 \"spine-3\" (4 hosts)",
	"        gen: removed link S-0003[5] <-> S-0007[2]",
	"    followed by a summary line:",
	"        gen: N switches, M hosts, L switch links",
	"",
	"NOTES",
	"    ibsim prints \"cannot parse remote lid and connection type\" for every",
	"    port line; that is harmless (it looks for the optional LID and speed",
	"    data of real ibnetdiscover dumps, which this format leaves out so the",
	"    SM assigns LIDs).  ibsim's default limits (2048 nodes, 256 switches)",
	"    must be raised with -N, -S and -P for large fabrics.  Clients attach",
	"    to the first node in the file, S-0001, unless SIM_HOST names another",
	"    node (e.g. SIM_HOST=H-0001).",
	"",
	"EXIT STATUS",
	"    0 on success, 2 for bad or missing parameters (nothing is written),",
	"    1 for I/O or memory failures.",
	"",
	"EXAMPLES",
	"    sarnue gen fattree2 --leaves 18 --spines 9 --hosts-per-leaf 18 -o ft.net",
	"    sarnue gen torus --dims 4x4x3 --hosts-per-switch 4 \\",
	"        --remove-switch-id S-0005 -o torus.net",
	"    sarnue gen random --switches 32 --degree 6 --hosts-per-switch 4 \\",
	"        --seed 7 --remove-links 5% -o rr.net",
	"    sarnue gen xgft --h 2 --m 4,4 --w 1,4 -o xgft.net",
	"    sarnue gen fattree --levels 3 --radix 36 --hosts 2000 --taper 2:1 -o ft.net",
	"    sarnue gen islands --islands 6 --hosts-per-island 340 --radix 36 \\",
	"        --core-taper 3:1 --core-radix 216 -o taurus.net",
	"    sarnue gen hyperx --dims 8x8x4 --hosts-per-switch 4 -o hx.net",
	"    sarnue gen slimfly --q 7 --remove-links 1% -o sf.net",
	"    sarnue gen kautz --d 5 --n 2 --links-per-pair 2 -o kautz.net",
	"    ibsim -s torus.net",
};

static int gen_error(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int gen_error(int status, const char *fmt, ...)
{
	va_list ap;

	fputs("sarnue gen: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return status;
}

#define gen_usage(...) gen_error(GEN_USAGE, __VA_ARGS__)
#define gen_fail(...) gen_error(GEN_FAIL, __VA_ARGS__)
#define gen_nomem() gen_fail("out of memory")

/* splitmix64 to seed, xoshiro256** to draw: small, fast and well mixed. */
static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void rng_seed(struct rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ (stream * 0xd1b54a32d192ed03ULL);
	int i;

	for (i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

static uint64_t rotl64(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t res = rotl64(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl64(s[3], 45);
	return res;
}

/* Uniform in [0, n); rejection avoids the modulo bias. */
static uint64_t rng_below(struct rng *r, uint64_t n)
{
	uint64_t lim = -n % n;
	uint64_t x;

	do
		x = rng_next(r);
	while (x < lim);
	return x % n;
}

static void shuffle_u32(struct rng *r, uint32_t *v, uint32_t n)
{
	uint32_t i, j, t;

	for (i = n; i > 1; i--) {
		j = (uint32_t)rng_below(r, i);
		t = v[i - 1];
		v[i - 1] = v[j];
		v[j] = t;
	}
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

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

/* Up ports of a switch that splits its radix by r: rounded up, never more blocking. */
static uint64_t ratio_up(uint64_t ports, const struct ratio *r)
{
	return ceil_div(ports * r->up, r->down + r->up);
}

/* Up ports that carry d of down traffic at ratio r; rounded up likewise. */
static uint64_t ratio_up_for(uint64_t down, const struct ratio *r)
{
	return ceil_div(down * r->up, r->down);
}

static const struct ratio ratio_full = { 1, 1 };

/* q = p^n with p prime; false if q is not a prime power. */
static bool prime_power(uint64_t q, uint32_t *p, uint32_t *n)
{
	uint64_t d;

	if (q < 2)
		return false;
	for (d = 2; d * d <= q && q % d; d++)
		;
	if (q % d)
		d = q;
	*p = (uint32_t)d;
	for (*n = 0; q % d == 0; q /= d)
		(*n)++;
	return q == 1;
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
		return gen_usage("unknown option '%.*s' (see 'sarnue gen --help')", (int)len, arg);
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
		/* "--help" wins over whatever else is on the line */
		if (o->help)
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
		return gen_usage("%s: missing %s (see 'sarnue gen --help')", o->topo_name, name);
	return GEN_OK;
}

static int check_min(const struct opts *o, enum opt_id id, unsigned long min)
{
	if (o->set[id] && o->num[id] < min)
		return gen_usage("%s %s: must be at least %lu", o->name[id], o->val[id], min);
	return GEN_OK;
}

static int hostfmt_error(const char *pat, const char *why)
{
	return gen_usage("--hostname-pattern %s: %s", pat, why);
}

/*
 * The pattern is checked and interpreted here instead of being handed to
 * printf: a user-supplied format string must never reach the C library.
 */
static int hostfmt_parse(struct hostfmt *hf, const char *pat)
{
	char *dst = hf->prefix;
	bool seen = false;
	const char *s;
	size_t n = 0;

	memset(hf, 0, sizeof(*hf));
	hf->prec = -1;
	if (strlen(pat) > DESC_MAX)
		return hostfmt_error(pat, "longer than 63 characters");

	for (s = pat; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch < 0x20 || ch == 0x7f || ch == '"')
			return hostfmt_error(pat, "quotes and control characters are not allowed");
		if (ch != '%') {
			dst[n++] = (char)ch;
			continue;
		}
		if (s[1] == '%') {
			dst[n++] = '%';
			s++;
			continue;
		}
		if (seen)
			return hostfmt_error(pat, "more than one conversion");
		for (s++; *s == '-' || *s == '0' || *s == '#'; s++) {
			if (*s == '-')
				hf->left = true;
			else if (*s == '0')
				hf->zero = true;
			else
				hf->alt = true;
		}
		for (; *s >= '0' && *s <= '9'; s++) {
			hf->width = hf->width * 10 + (*s - '0');
			if (hf->width > DESC_MAX)
				return hostfmt_error(pat, "field width too large");
		}
		if (*s == '.') {
			hf->prec = 0;
			for (s++; *s >= '0' && *s <= '9'; s++) {
				hf->prec = hf->prec * 10 + (*s - '0');
				if (hf->prec > DESC_MAX)
					return hostfmt_error(pat, "precision too large");
			}
		}
		if (!*s || !strchr("diuxXo", *s))
			return hostfmt_error(
				pat, "only one integer conversion (d, i, u, x, X, o) is supported");
		if (hf->alt && (*s == 'd' || *s == 'i' || *s == 'u'))
			return hostfmt_error(pat, "the # flag needs an x, X or o conversion");
		hf->conv = *s;
		seen = true;
		dst[n] = '\0';
		dst = hf->suffix;
		n = 0;
	}
	dst[n] = '\0';
	if (!seen)
		return hostfmt_error(
			pat, "needs one integer conversion, such as %04d, for the host number");
	return GEN_OK;
}

static size_t put_chars(char *buf, size_t len, size_t at, char c, size_t count)
{
	while (count--) {
		if (at + 1 < len)
			buf[at] = c;
		at++;
	}
	return at;
}

static size_t put_str(char *buf, size_t len, size_t at, const char *s)
{
	for (; *s; s++, at++)
		if (at + 1 < len)
			buf[at] = *s;
	return at;
}

/* Returns the full length; the text is truncated to fit buf. */
static size_t hostfmt_format(const struct hostfmt *hf, uint32_t v, char *buf, size_t len)
{
	const char *xd = hf->conv == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
	unsigned int base = 10;
	const char *pfx = "";
	size_t nd = 0, zeros = 0, pad = 0, body, at = 0;
	char digits[16];

	if (hf->conv == 'x' || hf->conv == 'X')
		base = 16;
	else if (hf->conv == 'o')
		base = 8;
	do {
		digits[nd++] = xd[v % base];
		v /= base;
	} while (v);

	if (hf->prec > 0 && (size_t)hf->prec > nd)
		zeros = (size_t)hf->prec - nd;
	if (hf->alt && base == 16)
		pfx = hf->conv == 'X' ? "0X" : "0x";
	if (hf->alt && base == 8 && !zeros)
		zeros = 1;
	body = strlen(pfx) + zeros + nd;
	if ((size_t)hf->width > body)
		pad = (size_t)hf->width - body;
	if (hf->zero && !hf->left && hf->prec < 0) {
		zeros += pad;
		pad = 0;
	}

	at = put_str(buf, len, at, hf->prefix);
	if (!hf->left)
		at = put_chars(buf, len, at, ' ', pad);
	at = put_str(buf, len, at, pfx);
	at = put_chars(buf, len, at, '0', zeros);
	while (nd)
		at = put_chars(buf, len, at, digits[--nd], 1);
	if (hf->left)
		at = put_chars(buf, len, at, ' ', pad);
	at = put_str(buf, len, at, hf->suffix);
	if (len)
		buf[at < len ? at : len - 1] = '\0';
	return at;
}

static int validate_xgft(struct opts *o)
{
	unsigned long h = o->num[OPT_H];

	if (h < 1 || h > TREE_MAX_LEVELS)
		return gen_usage("%s %s: the height must be between 1 and %d", o->name[OPT_H],
				 o->val[OPT_H], TREE_MAX_LEVELS);
	if (o->nm != h)
		return gen_usage("%s %s: expected %lu values m1,...,mh (--h %lu)", o->name[OPT_M],
				 o->val[OPT_M], h, h);
	if (o->nw != h)
		return gen_usage("%s %s: expected %lu values w1,...,wh (--h %lu)", o->name[OPT_W],
				 o->val[OPT_W], h, h);
	if (o->w[1] != 1)
		return gen_usage(
			"%s %s: w1 must be 1: the level-0 nodes are hosts with one port each",
			o->name[OPT_W], o->val[OPT_W]);
	return GEN_OK;
}

/* The fewest levels (2..4) of radix-R switches that hold the hosts. */
static unsigned long fattree_levels(const struct opts *o)
{
	uint64_t r = o->num[OPT_RADIX], up = ratio_up(r, &o->taper);
	uint64_t hold = r > up ? (r - up) * r : 0;
	unsigned long l;

	for (l = 2; l < 4 && hold < o->num[OPT_HOSTS]; l++)
		hold *= r - ratio_up(r, &ratio_full);
	return l;
}

static int validate_fattree(struct opts *o)
{
	bool islands = o->topo == TOPO_ISLANDS;
	unsigned long lo = 2, hi = islands ? 3 : 4;

	if (!o->set[OPT_TAPER])
		o->taper = ratio_full;
	if (!o->set[OPT_CORE_TAPER])
		o->core_taper = ratio_full;
	if (!o->set[OPT_CORE_RADIX])
		o->num[OPT_CORE_RADIX] = o->num[OPT_RADIX];
	if (!o->set[OPT_LEVELS])
		o->num[OPT_LEVELS] = islands ? 2 : fattree_levels(o);
	if (o->num[OPT_LEVELS] < lo || o->num[OPT_LEVELS] > hi)
		return gen_usage("%s %s: must be between %lu and %lu", o->name[OPT_LEVELS],
				 o->val[OPT_LEVELS], lo, hi);
	if (o->num[OPT_CORE_RADIX] > GEN_MAX_PORTS)
		return gen_usage("%s %s: InfiniBand switches have at most %d ports",
				 o->name[OPT_CORE_RADIX], o->val[OPT_CORE_RADIX], GEN_MAX_PORTS);
	return GEN_OK;
}

static int validate_slimfly(const struct opts *o)
{
	uint64_t q = o->num[OPT_Q];
	uint32_t p, n;

	if (!prime_power(q, &p, &n))
		return gen_usage("%s %s: not a prime power; the MMS construction needs a field "
				 "GF(q), q = 3, 4, 5, 7, 8, 9, 11, 13, 16, ...",
				 o->name[OPT_Q], o->val[OPT_Q]);
	if (q % 4 == 2)
		return gen_usage("%s %s: q = 4w + delta with w >= 1 and delta in {-1, 0, 1} "
				 "excludes q = 2; the smallest Slim Fly has q = 3",
				 o->name[OPT_Q], o->val[OPT_Q]);
	if (2 * q * q > GEN_MAX_SWITCHES)
		return gen_usage("%s %s: fabric too large (2q^2 switches, at most %lu)",
				 o->name[OPT_Q], o->val[OPT_Q], GEN_MAX_SWITCHES);
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

	if (o->topo == TOPO_RANDOM) {
		unsigned long n = o->num[OPT_SWITCHES], d = o->num[OPT_DEGREE];

		if (d >= n)
			return gen_usage("%s %s: must be less than the number of switches (N=%lu)",
					 o->name[OPT_DEGREE], o->val[OPT_DEGREE], n);
		if ((n * d) % 2)
			return gen_usage("%s %s: N*D must be even (N=%lu)", o->name[OPT_DEGREE],
					 o->val[OPT_DEGREE], n);
		if (d == 1 && n > 2)
			return gen_usage(
				"%s %s: a connected 1-regular graph has exactly 2 switches (N=%lu)",
				o->name[OPT_DEGREE], o->val[OPT_DEGREE], n);
	}
	if (o->topo == TOPO_XGFT)
		return validate_xgft(o);
	if (o->topo == TOPO_SLIMFLY)
		return validate_slimfly(o);
	if (o->topo == TOPO_HYPERX)
		for (i = 0; i < o->ndims; i++)
			if (o->dims[i] < 2)
				return gen_usage("%s %s: every HyperX dimension must be at least 2",
						 o->name[OPT_DIMS], o->val[OPT_DIMS]);
	if (o->topo == TOPO_FATTREE || o->topo == TOPO_ISLANDS)
		return validate_fattree(o);
	if (o->topo == TOPO_DRAGONFLY) {
		unsigned long ah = o->num[OPT_A] * o->num[OPT_H];

		if (!o->set[OPT_G])
			o->num[OPT_G] = ah + 1;
		else if (o->num[OPT_G] > ah + 1)
			return gen_usage(
				"%s %s: at most A*H+1 = %lu groups can be connected (A=%lu, H=%lu)",
				o->name[OPT_G], o->val[OPT_G], ah + 1, o->num[OPT_A],
				o->num[OPT_H]);
	}
	return GEN_OK;
}

static int validate(struct opts *o, struct hostfmt *hf)
{
	unsigned int i;
	int rc;

	if (!o->topo_name)
		return gen_usage("missing topology: " TOPO_LIST " (see 'sarnue gen --help')");
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

static void gen_fabric_free(struct gen_fabric *f)
{
	free(f->base);
	free(f->peer);
	free(f->desc);
	free(f->dead);
	free(f->host_sw);
	free(f->host_port);
	memset(f, 0, sizeof(*f));
}

static int gen_fabric_init(struct gen_fabric *f, uint64_t nsw, uint64_t nhost, unsigned long radix)
{
	if (nsw > GEN_MAX_SWITCHES)
		return gen_usage("fabric too large: %" PRIu64 " switches (at most %lu)", nsw,
				 GEN_MAX_SWITCHES);
	if (nhost > GEN_MAX_HOSTS)
		return gen_usage("fabric too large: %" PRIu64 " hosts (at most %lu)", nhost,
				 GEN_MAX_HOSTS);

	f->nsw = (uint32_t)nsw;
	f->nhost = (uint32_t)nhost;
	f->radix = radix;
	f->base = calloc(nsw + 1, sizeof(*f->base));
	f->desc = calloc(nsw ? nsw : 1, sizeof(*f->desc));
	f->dead = calloc(nsw ? nsw : 1, sizeof(*f->dead));
	f->host_sw = calloc(nhost ? nhost : 1, sizeof(*f->host_sw));
	f->host_port = calloc(nhost ? nhost : 1, sizeof(*f->host_port));
	if (!f->base || !f->desc || !f->dead || !f->host_sw || !f->host_port)
		return gen_nomem();
	return GEN_OK;
}

static void sw_desc(struct gen_fabric *f, uint32_t s, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void sw_desc(struct gen_fabric *f, uint32_t s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(f->desc[s], sizeof(f->desc[s]), fmt, ap);
	va_end(ap);
}

/* Record how many ports switch s needs; gen_fabric_ports() turns it into slots. */
static void gen_fabric_need(struct gen_fabric *f, uint32_t s, uint64_t need)
{
	f->base[s + 1] = need > UINT32_MAX ? UINT32_MAX : (uint32_t)need;
}

static int gen_fabric_ports(struct gen_fabric *f)
{
	unsigned long limit = f->radix ? f->radix : GEN_MAX_PORTS;
	uint64_t total = 0;
	uint32_t s;

	f->base[0] = 0;
	for (s = 0; s < f->nsw; s++) {
		uint32_t need = f->base[s + 1];

		if (need > limit) {
			if (f->radix)
				return gen_usage("--radix %lu: switch S-%04u (%s) needs %u ports",
						 f->radix, s + 1, f->desc[s], need);
			return gen_usage(
				"switch S-%04u (%s) would need %u ports; InfiniBand switches have at most %d",
				s + 1, f->desc[s], need, GEN_MAX_PORTS);
		}
		total += f->radix ? f->radix : (need ? need : 1);
		if (total > GEN_MAX_PORT_SLOTS)
			return gen_usage("fabric too large: more than %lu switch ports",
					 GEN_MAX_PORT_SLOTS);
		f->base[s + 1] = (uint32_t)total;
	}

	f->peer = malloc((total ? total : 1) * sizeof(*f->peer));
	if (!f->peer)
		return gen_nomem();
	for (s = 0; s < total; s++) {
		f->peer[s].node = NO_NODE;
		f->peer[s].port = 0;
	}
	return GEN_OK;
}

static uint32_t sw_nports(const struct gen_fabric *f, uint32_t s)
{
	return f->base[s + 1] - f->base[s];
}

static struct peer *port_slot(struct gen_fabric *f, uint32_t s, uint64_t port)
{
	if (port < 1 || port > sw_nports(f, s)) {
		f->conflict = true;
		return NULL;
	}
	return &f->peer[f->base[s] + port - 1];
}

static void link_sw(struct gen_fabric *f, uint32_t a, uint64_t pa, uint32_t b, uint64_t pb)
{
	struct peer *x = port_slot(f, a, pa);
	struct peer *y = port_slot(f, b, pb);

	if (!x || !y || x->node != NO_NODE || y->node != NO_NODE || x == y) {
		f->conflict = true;
		return;
	}
	x->node = b;
	x->port = (uint16_t)pb;
	y->node = a;
	y->port = (uint16_t)pa;
}

static void attach_host(struct gen_fabric *f, uint32_t h, uint32_t s, uint64_t port)
{
	struct peer *x = port_slot(f, s, port);

	if (!x || x->node != NO_NODE) {
		f->conflict = true;
		return;
	}
	x->node = f->nsw + h;
	x->port = 1;
	f->host_sw[h] = s;
	f->host_port[h] = (uint16_t)port;
}

static void attach_spread(struct gen_fabric *f, uint32_t first, uint32_t n, uint32_t host,
			  uint64_t nhosts);

/* Hosts take ports 1..per of switches first..first+n-1, in switch order. */
static void attach_hosts(struct gen_fabric *f, uint32_t first, uint32_t n, uint32_t per)
{
	attach_spread(f, first, n, 0, (uint64_t)n * per);
}

static int build_fattree2(struct gen_fabric *f, const struct opts *o)
{
	uint64_t nl = o->num[OPT_LEAVES], ns = o->num[OPT_SPINES];
	uint64_t h = o->num[OPT_HPL], r = o->num[OPT_LPP];
	uint32_t l, s, k;
	int rc;

	rc = gen_fabric_init(f, nl + ns, nl * h, o->num[OPT_RADIX]);
	if (rc)
		return rc;
	for (l = 0; l < nl; l++) {
		sw_desc(f, l, "leaf-%u", l);
		gen_fabric_need(f, l, h + ns * r);
	}
	for (s = 0; s < ns; s++) {
		sw_desc(f, nl + s, "spine-%u", s);
		gen_fabric_need(f, nl + s, nl * r);
	}
	rc = gen_fabric_ports(f);
	if (rc)
		return rc;

	attach_hosts(f, 0, (uint32_t)nl, (uint32_t)h);
	for (l = 0; l < nl; l++)
		for (s = 0; s < ns; s++)
			for (k = 0; k < r; k++)
				link_sw(f, l, h + s * r + k + 1, nl + s, l * r + k + 1);
	return GEN_OK;
}

/*
 * A parallel-ports generalized fat tree PGFT(h; m; w; p) after Zahavi,
 * which covers XGFTs (all p = 1), k-ary n-trees and the real-life trees
 * below.  Level 0 are the hosts, levels 1..h switches.  A level-l node is
 * a digit vector a_h..a_1 with a_j < m_j above the level (j > l) and
 * a_j < w_j at or below it; a level-(l-1) and a level-l node are joined
 * by p_l links iff their digits agree everywhere except at position l.
 * Digit 1 varies fastest in the numbering, so the children of a switch
 * and the hosts of a leaf are consecutive.  With top_all the top level is
 * a crossbar instead: w_h switches, each joined to every level-(h-1)
 * switch, as directors join the islands of one machine.
 */
struct tree_shape {
	unsigned int h;
	uint64_t m[TREE_MAX_LEVELS + 2];
	uint64_t w[TREE_MAX_LEVELS + 2]; /* w[h + 1] stays 0: no up ports on top */
	uint64_t p[TREE_MAX_LEVELS + 2];
	uint64_t ports[TREE_MAX_LEVELS + 1]; /* radix of a level, 0: what it needs */
	uint64_t groups;		     /* top-level subtrees with their own hosts */
	uint64_t group_hosts;		     /* spread over a group's leaves; 0: m_1 each */
	bool top_all;			     /* top switches join every level h-1 switch */
	const char *const *names;	     /* per level; NULL: "<name> level <l>" */
	const char *name;
	unsigned int level0; /* number shown for level 1 */
};

static uint64_t tree_width(const struct tree_shape *t, unsigned int l)
{
	uint64_t n = 1;
	unsigned int j;

	if (t->top_all && l == t->h)
		return t->w[l];
	for (j = 1; j <= t->h; j++)
		n *= j > l ? t->m[j] : t->w[j];
	return n;
}

/* Switch count per level and in total, refusing shapes beyond the limits. */
static int tree_size(const struct tree_shape *t, uint64_t *first, const char *what)
{
	uint64_t total = 0, n = 1;
	unsigned int l, j;

	for (l = 1; l <= t->h; l++) {
		for (j = 1, n = 1; j <= t->h; j++) {
			n *= j > l ? t->m[j] : t->w[j];
			if (n > GEN_MAX_SWITCHES)
				break;
		}
		if (t->top_all && l == t->h)
			n = t->w[l];
		first[l] = total;
		total += n;
		if (n > GEN_MAX_SWITCHES || total > GEN_MAX_SWITCHES)
			return gen_usage("%s: fabric too large (more than %lu switches)", what,
					 GEN_MAX_SWITCHES);
	}
	first[t->h + 1] = total;
	return GEN_OK;
}

static void tree_desc(struct gen_fabric *f, const struct tree_shape *t, unsigned int l, uint32_t s,
		      uint64_t i)
{
	uint64_t per = tree_width(t, l) / t->m[t->h];

	if (!t->names)
		sw_desc(f, s, "%s level %u switch %" PRIu64, t->name, l - 1 + t->level0, i);
	else if (t->groups > 1 && l < t->h)
		sw_desc(f, s, "%s %" PRIu64 " %s %" PRIu64, t->name, i / per, t->names[l], i % per);
	else
		sw_desc(f, s, "%s %" PRIu64, t->names[l], i);
}

/* Hosts take ports 1.. of switches first..first+n-1, spread evenly. */
static void attach_spread(struct gen_fabric *f, uint32_t first, uint32_t n, uint32_t host,
			  uint64_t nhosts)
{
	uint32_t s, i;

	for (s = 0; s < n; s++) {
		uint64_t per = nhosts / n + (s < nhosts % n);

		for (i = 0; i < per; i++)
			attach_host(f, host++, first + s, i + 1);
	}
}

/* Joins every level-(l-1) switch to its w_l parents, p_l links each. */
static void tree_link_level(struct gen_fabric *f, const struct tree_shape *t, const uint64_t *first,
			    unsigned int l)
{
	uint64_t lo_n = 1, ml = t->m[l], wl = t->w[l], pl = t->p[l];
	uint64_t up0 = t->m[l - 1] * t->p[l - 1]; /* down ports of the lower switch */
	uint64_t x, n = first[l] - first[l - 1], b, k;
	unsigned int j;

	if (t->top_all && l == t->h)
		ml = n; /* one digit: the lower switch's number */
	else
		for (j = 1; j < l; j++)
			lo_n *= t->w[j];
	for (x = 0; x < n; x++) {
		uint64_t lo = x % lo_n, a = (x / lo_n) % ml, hi = x / lo_n / ml;

		for (b = 0; b < wl; b++) {
			uint64_t y = lo + lo_n * (b + wl * hi);

			for (k = 0; k < pl; k++)
				link_sw(f, (uint32_t)(first[l - 1] + x), up0 + b * pl + k + 1,
					(uint32_t)(first[l] + y), a * pl + k + 1);
		}
	}
}

static int tree_build(struct gen_fabric *f, const struct tree_shape *t, unsigned long radix,
		      const char *what)
{
	uint64_t first[TREE_MAX_LEVELS + 2], leaves, per_group, hosts, g;
	unsigned int l;
	uint64_t i;
	int rc;

	rc = tree_size(t, first, what);
	if (rc)
		return rc;
	leaves = first[2] - first[1];
	hosts = t->group_hosts ? t->groups * t->group_hosts : leaves * t->m[1];
	rc = gen_fabric_init(f, first[t->h + 1], hosts, radix);
	if (rc)
		return rc;
	for (l = 1; l <= t->h; l++) {
		uint64_t need = t->m[l] * t->p[l] + t->w[l + 1] * t->p[l + 1];

		if (t->ports[l])
			need = t->ports[l];
		for (i = first[l]; i < first[l + 1]; i++) {
			tree_desc(f, t, l, (uint32_t)i, i - first[l]);
			gen_fabric_need(f, (uint32_t)i, need);
		}
	}
	rc = gen_fabric_ports(f);
	if (rc)
		return rc;

	per_group = leaves / t->groups;
	for (g = 0; g < t->groups; g++)
		attach_spread(f, (uint32_t)(g * per_group), (uint32_t)per_group,
			      (uint32_t)(g * hosts / t->groups), hosts / t->groups);
	for (l = 2; l <= t->h; l++)
		tree_link_level(f, t, first, l);
	return GEN_OK;
}

/* XGFT(h; m; w) with level 0 as the hosts: hosts = prod m_j. */
static void tree_plain(struct tree_shape *t, unsigned int h, uint64_t r, const char *name)
{
	unsigned int l;

	memset(t, 0, sizeof(*t));
	t->h = h;
	t->name = name;
	t->level0 = 1;
	t->groups = 1;
	t->p[1] = 1;
	for (l = 2; l <= h; l++)
		t->p[l] = r;
}

/* A k-ary n-tree with H hosts per leaf is XGFT(n; H,k..k; 1,k..k). */
static int build_ktree(struct gen_fabric *f, const struct opts *o)
{
	uint64_t k = o->num[OPT_K], n = o->num[OPT_N];
	struct tree_shape t;
	char what[64];
	unsigned int l;

	snprintf(what, sizeof(what), "--k %lu --n %lu", o->num[OPT_K], o->num[OPT_N]);
	if (n > TREE_MAX_LEVELS)
		return gen_usage("%s: fabric too large (more than %lu switches)", what,
				 GEN_MAX_SWITCHES);
	tree_plain(&t, (unsigned int)n, 1, "ktree");
	t.level0 = 0;
	t.m[1] = o->num[OPT_HPL];
	t.w[1] = 1;
	for (l = 2; l <= n; l++) {
		t.m[l] = k;
		t.w[l] = k;
	}
	return tree_build(f, &t, o->num[OPT_RADIX], what);
}

static int build_xgft(struct gen_fabric *f, const struct opts *o)
{
	struct tree_shape t;
	unsigned int l, h = (unsigned int)o->num[OPT_H];

	tree_plain(&t, h, o->num[OPT_LPP], "xgft");
	for (l = 1; l <= h; l++) {
		t.m[l] = o->m[l];
		t.w[l] = o->w[l];
	}
	return tree_build(f, &t, o->num[OPT_RADIX], "xgft");
}

/*
 * Real-life fat trees: every switch has the same radix R, a leaf splits
 * its ports by the taper (down:up), the levels above the leaves are
 * non-blocking (as many up as used down ports) and the top level has only
 * down ports.  The shape is planned top-down (as few subtrees per level
 * as hold the leaves, the leaves spread evenly) and then bottom-up (each
 * switch joins each parent by as many parallel links as fit, so there are
 * as few parents as possible).  Islands are the same with one more level
 * on top, one subtree per island, whose switches are the directors.
 */
struct rlft_req {
	unsigned int levels; /* switch levels in total, directors included */
	uint64_t radix;
	uint64_t top_radix;
	struct ratio leaf;
	struct ratio top_up; /* down:up of the level under the top, islands only */
	bool islands;	     /* the top level are directors over whole islands */
	uint64_t groups;     /* islands, or 1 */
	uint64_t hosts;	     /* per group */
	uint64_t lpp;	     /* --links-per-pair, 0: as many as fit */
	const char *hosts_opt;
};

static const struct ratio *rlft_ratio(const struct rlft_req *rq, unsigned int l)
{
	if (l == 1)
		return &rq->leaf;
	if (rq->islands && l + 1 == rq->levels)
		return &rq->top_up;
	return &ratio_full;
}

/* Down ports a level-l switch may use. */
static uint64_t rlft_cap(const struct rlft_req *rq, unsigned int l)
{
	if (l == rq->levels)
		return rq->top_radix;
	return rq->radix - ratio_up(rq->radix, rlft_ratio(rq, l));
}

static int rlft_top_down(struct tree_shape *t, const struct rlft_req *rq, const uint64_t *cap_l)
{
	unsigned int h = rq->levels, l;
	uint64_t rem = ceil_div(rq->hosts, t->m[1]);

	if (rq->islands) {
		if (rem > cap_l[h - 1])
			return gen_usage("%s %" PRIu64 ": an island of %u levels of %" PRIu64
					 "-port switches with taper %lu:%lu holds at most %" PRIu64
					 " hosts",
					 rq->hosts_opt, rq->hosts, h - 1, rq->radix, rq->leaf.down,
					 rq->leaf.up, cap_l[h - 1] * t->m[1]);
		if (rq->groups > rq->top_radix)
			return gen_usage("--islands %" PRIu64 ": more islands than the %" PRIu64
					 " ports of a director switch (see --core-radix)",
					 rq->groups, rq->top_radix);
		t->m[h] = rq->groups;
	} else {
		t->m[h] = ceil_div(rem, cap_l[h - 1]);
		if (t->m[h] > rq->top_radix)
			return gen_usage("%s %" PRIu64 ": a fat tree of %u levels of %" PRIu64
					 "-port switches with taper %lu:%lu holds at most %" PRIu64
					 " hosts (use more --levels or a larger --radix)",
					 rq->hosts_opt, rq->hosts, h, rq->radix, rq->leaf.down,
					 rq->leaf.up, rq->top_radix * cap_l[h - 1] * t->m[1]);
		rem = ceil_div(rem, t->m[h]);
	}
	for (l = h - 1; l >= 2; l--) {
		t->m[l] = ceil_div(rem, cap_l[l - 1]);
		rem = ceil_div(rem, t->m[l]);
	}
	return GEN_OK;
}

/*
 * Up ports u (need <= u <= avail) and links per parent p of a level-(l-1)
 * switch: the fewest parents u / p whose down ports hold m_l * p links,
 * then the fewest up ports.  Returns 0 if nothing fits.
 */
static uint64_t rlft_parents(const struct rlft_req *rq, uint64_t m, uint64_t cap, uint64_t need,
			     uint64_t avail, uint64_t *pp)
{
	uint64_t u, p, best = 0;

	for (u = need; u <= avail; u++) {
		for (p = rq->lpp ? rq->lpp : 1; p <= u && m * p <= cap; p++) {
			if (!(u % p) && (!best || u / p < best)) {
				best = u / p;
				*pp = p;
			}
			if (rq->lpp)
				break;
		}
	}
	return best;
}

static int rlft_bottom_up(struct tree_shape *t, const struct rlft_req *rq, const uint64_t *cap)
{
	uint64_t need = ratio_up(rq->radix, &rq->leaf), avail = need, p = 1;
	unsigned int l;

	for (l = 2; l <= rq->levels; l++) {
		uint64_t m = t->top_all && l == t->h ? tree_width(t, l - 1) : t->m[l];

		t->w[l] = rlft_parents(rq, m, cap[l], need, avail, &p);
		if (!t->w[l] && !rq->lpp)
			return gen_usage("--islands %" PRIu64 ": the %" PRIu64
					 " top switches of the islands do not fit the %" PRIu64
					 " ports of a director switch (see --core-radix)",
					 rq->groups, m, cap[l]);
		if (!t->w[l])
			return gen_usage("--links-per-pair %" PRIu64
					 ": a level-%u switch has %" PRIu64 " to %" PRIu64
					 " up ports and its parents %" PRIu64
					 " down ports for %" PRIu64 " children; no multiple fits",
					 rq->lpp, l - 1, need, avail, cap[l], m);
		t->p[l] = p;
		t->ports[l] = l == rq->levels ? rq->top_radix : rq->radix;
		need = ratio_up_for(m * p, rlft_ratio(rq, l));
		avail = rq->radix - cap[l];
	}
	return GEN_OK;
}

static int rlft_plan(struct tree_shape *t, const struct rlft_req *rq)
{
	uint64_t cap[TREE_MAX_LEVELS + 1], cap_l[TREE_MAX_LEVELS + 1];
	unsigned int l;
	int rc;

	memset(t, 0, sizeof(*t));
	t->h = rq->levels;
	t->top_all = rq->islands;
	t->groups = rq->groups;
	t->group_hosts = rq->hosts;
	cap_l[1] = 1;
	for (l = 1; l <= rq->levels; l++) {
		cap[l] = rlft_cap(rq, l);
		if (!cap[l])
			return gen_usage("%s %lu:%lu: leaves no down port on a switch of %" PRIu64
					 " ports (--radix)",
					 l == 1 ? "--taper" : "--core-taper",
					 rlft_ratio(rq, l)->down, rlft_ratio(rq, l)->up, rq->radix);
		if (l >= 2)
			cap_l[l] = cap_l[l - 1] * cap[l];
	}
	t->m[1] = cap[1];
	t->w[1] = 1;
	t->p[1] = 1;
	t->ports[1] = rq->radix;
	rc = rlft_top_down(t, rq, cap_l);
	if (!rc)
		rc = rlft_bottom_up(t, rq, cap);
	return rc;
}

static int build_fattree(struct gen_fabric *f, const struct opts *o)
{
	static const char *const names[] = { "", "leaf", "spine", "core", "super-core" };
	struct rlft_req rq = {
		.levels = (unsigned int)o->num[OPT_LEVELS],
		.radix = o->num[OPT_RADIX],
		.top_radix = o->num[OPT_RADIX],
		.leaf = o->taper,
		.groups = 1,
		.hosts = o->num[OPT_HOSTS],
		.lpp = o->set[OPT_LPP] ? o->num[OPT_LPP] : 0,
		.hosts_opt = "--hosts",
	};
	struct tree_shape t;
	int rc;

	rc = rlft_plan(&t, &rq);
	if (rc)
		return rc;
	t.names = names;
	t.name = "fattree";
	return tree_build(f, &t, 0, "fattree");
}

static int build_islands(struct gen_fabric *f, const struct opts *o)
{
	const char *names[] = { "", "leaf", "spine", "core", "director" };
	struct rlft_req rq = {
		.levels = (unsigned int)o->num[OPT_LEVELS] + 1,
		.radix = o->num[OPT_RADIX],
		.top_radix = o->num[OPT_CORE_RADIX],
		.leaf = o->taper,
		.top_up = o->core_taper,
		.islands = true,
		.groups = o->num[OPT_ISLANDS],
		.hosts = o->num[OPT_HPI],
		.lpp = o->set[OPT_LPP] ? o->num[OPT_LPP] : 0,
		.hosts_opt = "--hosts-per-island",
	};
	struct tree_shape t;
	int rc;

	rc = rlft_plan(&t, &rq);
	if (rc)
		return rc;
	names[rq.levels] = "director";
	t.names = names;
	t.name = "island";
	return tree_build(f, &t, 0, "islands");
}

static int build_torus(struct gen_fabric *f, const struct opts *o)
{
	uint64_t t = o->num[OPT_HPS], r = o->num[OPT_LPP];
	uint64_t nsw = 1, need = t, stride[3], first[3];
	unsigned int nd = o->ndims, d;
	uint32_t s, k;
	char coord[40];
	int rc;

	for (d = 0; d < nd; d++) {
		stride[d] = nsw;
		nsw *= o->dims[d];
		if (nsw > GEN_MAX_SWITCHES)
			return gen_usage("%s %s: fabric too large (more than %lu switches)",
					 o->name[OPT_DIMS], o->val[OPT_DIMS], GEN_MAX_SWITCHES);
		first[d] = need + 1;
		if (o->dims[d] == 2)
			need += r;
		else if (o->dims[d] > 2)
			need += 2 * r;
	}
	rc = gen_fabric_init(f, nsw, nsw * t, o->num[OPT_RADIX]);
	if (rc)
		return rc;
	for (s = 0; s < nsw; s++) {
		size_t at = 0;

		for (d = 0; d < nd; d++)
			at += (size_t)snprintf(coord + at, sizeof(coord) - at, "%s%" PRIu64,
					       d ? "," : "", (s / stride[d]) % o->dims[d]);
		sw_desc(f, s, "%s %s", o->set[OPT_MESH] ? "mesh" : "torus", coord);
		gen_fabric_need(f, s, need);
	}
	rc = gen_fabric_ports(f);
	if (rc)
		return rc;

	attach_hosts(f, 0, f->nsw, (uint32_t)t);
	for (s = 0; s < nsw; s++) {
		for (d = 0; d < nd; d++) {
			uint64_t size = o->dims[d], c = (s / stride[d]) % size;
			uint32_t nb;

			if (size < 2)
				continue;
			if (size == 2) {
				/* the +1 and -1 neighbours coincide: one bundle */
				if (c)
					continue;
				for (k = 0; k < r; k++)
					link_sw(f, s, first[d] + k, s + stride[d], first[d] + k);
				continue;
			}
			if (c + 1 < size)
				nb = s + stride[d];
			else if (!o->set[OPT_MESH])
				nb = s - (size - 1) * stride[d];
			else
				continue;
			for (k = 0; k < r; k++)
				link_sw(f, s, first[d] + k, nb, first[d] + r + k);
		}
	}
	return GEN_OK;
}

static void rg_free(struct rgraph *g)
{
	free(g->nbr);
	free(g->deg);
	free(g->ea);
	free(g->eb);
	free(g->open);
	free(g->opos);
	free(g->scratch);
}

static int rg_alloc(struct rgraph *g, uint32_t n, uint32_t d)
{
	size_t ne = (size_t)n * d / 2 + 1;

	memset(g, 0, sizeof(*g));
	g->n = n;
	g->d = d;
	g->nbr = malloc((size_t)n * d * sizeof(*g->nbr));
	g->deg = malloc(n * sizeof(*g->deg));
	g->ea = malloc(ne * sizeof(*g->ea));
	g->eb = malloc(ne * sizeof(*g->eb));
	g->open = malloc(n * sizeof(*g->open));
	g->opos = malloc(n * sizeof(*g->opos));
	g->scratch = malloc(n * sizeof(*g->scratch));
	if (!g->nbr || !g->deg || !g->ea || !g->eb || !g->open || !g->opos || !g->scratch)
		return gen_nomem();
	return GEN_OK;
}

static bool rg_adjacent(const struct rgraph *g, uint32_t u, uint32_t v)
{
	const uint32_t *nb = g->nbr + (size_t)u * g->d;
	uint32_t i;

	for (i = 0; i < g->deg[u]; i++)
		if (nb[i] == v)
			return true;
	return false;
}

static void rg_adj_add(struct rgraph *g, uint32_t u, uint32_t v)
{
	g->nbr[(size_t)u * g->d + g->deg[u]++] = v;
	g->nbr[(size_t)v * g->d + g->deg[v]++] = u;
}

static void rg_adj_del_one(struct rgraph *g, uint32_t u, uint32_t v)
{
	uint32_t *nb = g->nbr + (size_t)u * g->d;
	uint32_t i;

	for (i = 0; i < g->deg[u]; i++) {
		if (nb[i] == v) {
			nb[i] = nb[--g->deg[u]];
			return;
		}
	}
}

static void rg_add_edge(struct rgraph *g, uint32_t u, uint32_t v)
{
	rg_adj_add(g, u, v);
	g->ea[g->ne] = u;
	g->eb[g->ne] = v;
	g->ne++;
}

/* Drop edge e=(x,y) and reuse its slot for (u,x); (v,y) is appended. */
static void rg_swap_edge(struct rgraph *g, uint32_t e, uint32_t u, uint32_t v)
{
	uint32_t x = g->ea[e], y = g->eb[e];

	rg_adj_del_one(g, x, y);
	rg_adj_del_one(g, y, x);
	rg_adj_add(g, u, x);
	g->ea[e] = u;
	g->eb[e] = x;
	rg_add_edge(g, v, y);
}

static void rg_close(struct rgraph *g, uint32_t v)
{
	uint32_t i, last;

	if (g->deg[v] < g->d || g->opos[v] == NO_NODE)
		return;
	i = g->opos[v];
	last = g->open[--g->nopen];
	g->open[i] = last;
	g->opos[last] = i;
	g->opos[v] = NO_NODE;
}

/*
 * Random draws stall once the open switches are nearly all adjacent;
 * then count the remaining non-adjacent ordered pairs and pick one
 * uniformly, or report that none is left.
 */
static bool rg_pick_exhaustive(struct rgraph *g, struct rng *r, uint32_t *pu, uint32_t *pv)
{
	uint64_t total = 0, pick;
	uint32_t i, j;

	for (i = 0; i < g->nopen; i++) {
		uint32_t u = g->open[i], c = 0;
		const uint32_t *nb = g->nbr + (size_t)u * g->d;

		for (j = 0; j < g->deg[u]; j++)
			if (g->opos[nb[j]] != NO_NODE)
				c++;
		g->scratch[i] = g->nopen - 1 - c;
		total += g->scratch[i];
	}
	if (!total)
		return false;
	pick = rng_below(r, total);
	for (i = 0; pick >= g->scratch[i]; i++)
		pick -= g->scratch[i];
	*pu = g->open[i];
	for (j = 0; j < g->nopen; j++) {
		uint32_t w = g->open[j];

		if (w == *pu || rg_adjacent(g, *pu, w))
			continue;
		if (!pick--) {
			*pv = w;
			return true;
		}
	}
	return false;
}

static void rg_join_random(struct rgraph *g, struct rng *r)
{
	uint32_t fails = 0, u, v, i, j;

	while (g->nopen >= 2) {
		i = (uint32_t)rng_below(r, g->nopen);
		j = (uint32_t)rng_below(r, g->nopen - 1);
		if (j >= i)
			j++;
		u = g->open[i];
		v = g->open[j];
		if (rg_adjacent(g, u, v)) {
			if (++fails < 2 * g->nopen + 16)
				continue;
			if (!rg_pick_exhaustive(g, r, &u, &v))
				return;
		}
		fails = 0;
		rg_add_edge(g, u, v);
		rg_close(g, u);
		rg_close(g, v);
	}
}

static uint64_t rg_tries(const struct rgraph *g)
{
	return 64 + 8 * (uint64_t)g->ne;
}

/* Jellyfish's fix-up: v takes over both ends of a random edge (x,y). */
static bool rg_fix_double(struct rgraph *g, struct rng *r, uint32_t v)
{
	uint64_t tries;

	for (tries = rg_tries(g); g->ne && tries; tries--) {
		uint32_t e = (uint32_t)rng_below(r, g->ne);
		uint32_t x = g->ea[e], y = g->eb[e];

		if (x == v || y == v || rg_adjacent(g, v, x) || rg_adjacent(g, v, y))
			continue;
		rg_swap_edge(g, e, v, v);
		return true;
	}
	return false;
}

/* Two adjacent switches with one free port each: u takes x, v takes y. */
static bool rg_fix_pair(struct rgraph *g, struct rng *r, uint32_t u, uint32_t v)
{
	uint64_t tries;

	if (!rg_adjacent(g, u, v)) {
		rg_add_edge(g, u, v);
		return true;
	}
	for (tries = rg_tries(g); g->ne && tries; tries--) {
		uint32_t e = (uint32_t)rng_below(r, g->ne);
		uint32_t x = g->ea[e], y = g->eb[e];

		if (rng_next(r) & 1) {
			g->ea[e] = y;
			g->eb[e] = x;
			x = g->ea[e];
			y = g->eb[e];
		}
		if (x == u || x == v || y == u || y == v || rg_adjacent(g, u, x) ||
		    rg_adjacent(g, v, y))
			continue;
		rg_swap_edge(g, e, u, v);
		return true;
	}
	return false;
}

static bool rg_connected(struct rgraph *g)
{
	uint32_t *queue = g->open, head = 0, tail = 0, i;
	uint8_t *seen = (uint8_t *)g->scratch;

	memset(seen, 0, g->n);
	queue[tail++] = 0;
	seen[0] = 1;
	while (head < tail) {
		uint32_t u = queue[head++];
		const uint32_t *nb = g->nbr + (size_t)u * g->d;

		for (i = 0; i < g->deg[u]; i++) {
			if (!seen[nb[i]]) {
				seen[nb[i]] = 1;
				queue[tail++] = nb[i];
			}
		}
	}
	return tail == g->n;
}

static bool rg_attempt(struct rgraph *g, struct rng *r)
{
	uint32_t v, pending = NO_NODE;

	g->ne = 0;
	g->nopen = g->n;
	for (v = 0; v < g->n; v++) {
		g->deg[v] = 0;
		g->open[v] = v;
		g->opos[v] = v;
	}

	rg_join_random(g, r);
	for (v = 0; v < g->n; v++)
		while (g->d - g->deg[v] >= 2)
			if (!rg_fix_double(g, r, v))
				return false;
	/* N*D is even, so the single free ports pair up exactly */
	for (v = 0; v < g->n; v++) {
		if (g->deg[v] == g->d)
			continue;
		if (pending == NO_NODE) {
			pending = v;
			continue;
		}
		if (!rg_fix_pair(g, r, pending, v))
			return false;
		pending = NO_NODE;
	}
	return pending == NO_NODE && rg_connected(g);
}

static int build_random(struct gen_fabric *f, const struct opts *o)
{
	uint32_t n = (uint32_t)o->num[OPT_SWITCHES], d = (uint32_t)o->num[OPT_DEGREE];
	uint64_t t = o->num[OPT_HPS];
	struct rgraph g;
	struct rng r;
	uint32_t attempt, s, e;
	bool ok = false;
	int rc;

	if (n > GEN_MAX_SWITCHES)
		return gen_usage("%s %s: fabric too large (at most %lu switches)",
				 o->name[OPT_SWITCHES], o->val[OPT_SWITCHES], GEN_MAX_SWITCHES);
	/* check port limits before spending time on the graph */
	rc = gen_fabric_init(f, n, (uint64_t)n * t, o->num[OPT_RADIX]);
	if (rc)
		return rc;
	for (s = 0; s < n; s++) {
		sw_desc(f, s, "random switch %u", s);
		gen_fabric_need(f, s, t + d);
	}
	rc = gen_fabric_ports(f);
	if (rc)
		return rc;

	rc = rg_alloc(&g, n, d);
	if (rc)
		goto out;
	for (attempt = 0; attempt < RANDOM_ATTEMPTS && !ok; attempt++) {
		rng_seed(&r, o->seed, STREAM_RANDOM + attempt);
		ok = rg_attempt(&g, &r);
	}
	if (!ok) {
		rc = gen_usage(
			"%s %s: no connected random graph found in %d attempts (N=%u); try another --seed or a larger degree",
			o->name[OPT_DEGREE], o->val[OPT_DEGREE], RANDOM_ATTEMPTS, n);
		goto out;
	}

	attach_hosts(f, 0, f->nsw, (uint32_t)t);
	memset(g.deg, 0, n * sizeof(*g.deg));
	for (e = 0; e < g.ne; e++) {
		uint32_t a = g.ea[e], b = g.eb[e];

		link_sw(f, a, t + 1 + g.deg[a]++, b, t + 1 + g.deg[b]++);
	}
out:
	rg_free(&g);
	return rc;
}

/*
 * All-to-all among the n switches first, first + stride, ...: each has a
 * block of (n - 1) * r ports from first_port on, r per peer in peer order,
 * skipping itself, so a port names the same peer on every switch.
 */
static void link_clique(struct gen_fabric *f, uint32_t first, uint32_t stride, uint32_t n,
			uint64_t first_port, uint64_t r)
{
	uint32_t i, j;
	uint64_t k;

	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			for (k = 0; k < r; k++)
				link_sw(f, first + i * stride, first_port + (j - 1) * r + k,
					first + j * stride, first_port + i * r + k);
}

/*
 * HyperX: switches on a grid, each joined to every switch that differs in
 * exactly one coordinate, i.e. a clique along every line of the grid.
 */
static int build_hyperx(struct gen_fabric *f, const struct opts *o)
{
	uint64_t t = o->num[OPT_HPS], r = o->num[OPT_LPP];
	uint64_t nsw = 1, need = t, stride[3], first[3];
	unsigned int nd = o->ndims, d;
	uint32_t s;
	char coord[40];
	int rc;

	for (d = 0; d < nd; d++) {
		stride[d] = nsw;
		nsw *= o->dims[d];
		if (nsw > GEN_MAX_SWITCHES)
			return gen_usage("%s %s: fabric too large (more than %lu switches)",
					 o->name[OPT_DIMS], o->val[OPT_DIMS], GEN_MAX_SWITCHES);
		first[d] = need + 1;
		need += (o->dims[d] - 1) * r;
	}
	rc = gen_fabric_init(f, nsw, nsw * t, o->num[OPT_RADIX]);
	if (rc)
		return rc;
	for (s = 0; s < nsw; s++) {
		size_t at = 0;

		for (d = 0; d < nd; d++)
			at += (size_t)snprintf(coord + at, sizeof(coord) - at, "%s%" PRIu64,
					       d ? "," : "", (s / stride[d]) % o->dims[d]);
		sw_desc(f, s, "hyperx %s", coord);
		gen_fabric_need(f, s, need);
	}
	rc = gen_fabric_ports(f);
	if (rc)
		return rc;

	attach_hosts(f, 0, f->nsw, (uint32_t)t);
	for (d = 0; d < nd; d++)
		for (s = 0; s < nsw; s++)
			if (!((s / stride[d]) % o->dims[d]))
				link_clique(f, s, (uint32_t)stride[d], (uint32_t)o->dims[d],
					    first[d], r);
	return GEN_OK;
}

/*
 * GF(q) for q = p^n: an element is the number whose base-p digits are the
 * coefficients of a polynomial of degree < n; products go through the
 * logarithms to a primitive element xi, found as a root of the first
 * primitive polynomial, so the field is a pure function of q.
 */
struct gf {
	uint32_t q;
	uint32_t p;
	uint32_t n;
	uint32_t poly[GF_MAX_DEGREE]; /* x^n = -(poly[n-1] x^(n-1) + ... + poly[0]) */
	uint32_t *exp;		      /* exp[i] = xi^i, 0 <= i < q - 1 */
	uint32_t *log;		      /* log[a] for a != 0 */
};

static uint32_t gf_add(const struct gf *g, uint32_t a, uint32_t b)
{
	uint32_t r = 0, scale = 1, i;

	for (i = 0; i < g->n; i++, a /= g->p, b /= g->p, scale *= g->p)
		r += (a % g->p + b % g->p) % g->p * scale;
	return r;
}

static uint32_t gf_neg(const struct gf *g, uint32_t a)
{
	uint32_t r = 0, scale = 1, i;

	for (i = 0; i < g->n; i++, a /= g->p, scale *= g->p)
		r += (g->p - a % g->p) % g->p * scale;
	return r;
}

static uint32_t gf_mul(const struct gf *g, uint32_t a, uint32_t b)
{
	if (!a || !b)
		return 0;
	return g->exp[(g->log[a] + g->log[b]) % (g->q - 1)];
}

/* a * x modulo the field polynomial */
static uint32_t gf_times_x(const struct gf *g, uint32_t a)
{
	uint32_t d[GF_MAX_DEGREE + 1], top, r = 0, i;

	for (i = 0; i < g->n; i++, a /= g->p)
		d[i] = a % g->p;
	top = d[g->n - 1];
	for (i = g->n - 1; i > 0; i--)
		d[i] = d[i - 1];
	d[0] = 0;
	for (i = g->n; i-- > 0;)
		r = r * g->p + (d[i] + (g->p - g->poly[i]) * top) % g->p;
	return r;
}

/* x generates all q - 1 units modulo poly iff poly is primitive. */
static bool gf_try(struct gf *g, uint32_t code)
{
	uint32_t i, cur = 1;

	for (i = 0; i < g->n; i++, code /= g->p)
		g->poly[i] = code % g->p;
	for (i = 0; i + 1 < g->q; i++) {
		if (i && cur == 1)
			return false;
		g->exp[i] = cur;
		cur = gf_times_x(g, cur);
	}
	return cur == 1;
}

static void gf_free(struct gf *g)
{
	free(g->exp);
	free(g->log);
}

static int gf_init(struct gf *g, uint32_t q)
{
	uint32_t code, i;

	memset(g, 0, sizeof(*g));
	if (!prime_power(q, &g->p, &g->n) || g->n > GF_MAX_DEGREE)
		return gen_fail("internal error: GF(%u) is not a supported field", q);
	g->q = q;
	g->exp = malloc(q * sizeof(*g->exp));
	g->log = calloc(q, sizeof(*g->log));
	if (!g->exp || !g->log)
		return gen_nomem();
	for (code = 1; code < q; code++)
		if (gf_try(g, code))
			break;
	if (code == q)
		return gen_fail("internal error: no primitive polynomial for GF(%u)", q);
	for (i = 0; i + 1 < q; i++)
		g->log[g->exp[i]] = i;
	return GEN_OK;
}

/*
 * Exponents of xi in the generator sets X (set 0) and X' (set 1) of the
 * McKay-Miller-Siran graph for q = 4w + delta, as Hafner and Besta and
 * Hoefler give them.  Both sets are closed under negation.
 */
static uint32_t mms_exponent(uint32_t q, int delta, unsigned int set, uint32_t i)
{
	uint32_t w = (q + 1) / 4;

	if (delta != -1 || i < w)
		return (2 * i + set) % (q - 1);
	return (2 * w - 1 + set + 2 * (i - w)) % (q - 1);
}

static int mms_delta(uint64_t q)
{
	return q % 4 == 3 ? -1 : (int)(q % 4);
}

struct slimfly {
	struct gf g;
	uint32_t q;
	uint32_t half;	  /* |X| = |X'| = (q - delta) / 2 */
	uint32_t *gen[2]; /* X and X' */
	uint32_t *idx[2]; /* position of an element in X or X', or NO_NODE */
	uint64_t t;	  /* hosts per switch */
	uint64_t r;	  /* links per pair */
};

static void sf_free(struct slimfly *sf)
{
	unsigned int i;

	for (i = 0; i < 2; i++) {
		free(sf->gen[i]);
		free(sf->idx[i]);
	}
	gf_free(&sf->g);
}

static int sf_init(struct slimfly *sf, uint32_t q)
{
	int delta = mms_delta(q), rc;
	unsigned int set;
	uint32_t i;

	sf->q = q;
	sf->half = (uint32_t)((int)q - delta) / 2;
	rc = gf_init(&sf->g, q);
	if (rc)
		return rc;
	for (set = 0; set < 2; set++) {
		sf->gen[set] = malloc(sf->half * sizeof(*sf->gen[set]));
		sf->idx[set] = malloc(q * sizeof(*sf->idx[set]));
		if (!sf->gen[set] || !sf->idx[set])
			return gen_nomem();
		for (i = 0; i < q; i++)
			sf->idx[set][i] = NO_NODE;
		for (i = 0; i < sf->half; i++) {
			sf->gen[set][i] = sf->g.exp[mms_exponent(q, delta, set, i)];
			sf->idx[set][sf->gen[set][i]] = i;
		}
	}
	return GEN_OK;
}

/* (set, a, b) -> switch: set 0 holds (x, y), set 1 holds (m, c). */
static uint32_t sf_switch(const struct slimfly *sf, unsigned int set, uint32_t a, uint32_t b)
{
	return (set * sf->q + a) * sf->q + b;
}

/* (set, a, b) ~ (set, a, b') iff b - b' is in the set's generators. */
static void sf_link_local(struct gen_fabric *f, const struct slimfly *sf, unsigned int set)
{
	uint32_t a, b, i, j, b2;
	uint64_t k;

	for (a = 0; a < sf->q; a++) {
		for (b = 0; b < sf->q; b++) {
			for (i = 0; i < sf->half; i++) {
				b2 = gf_add(&sf->g, b, sf->gen[set][i]);
				j = sf->idx[set][gf_neg(&sf->g, sf->gen[set][i])];
				/* each pair once: -g differs from g except in characteristic 2 */
				if (j < i || (j == i && b2 < b))
					continue;
				for (k = 0; k < sf->r; k++)
					link_sw(f, sf_switch(sf, set, a, b),
						sf->t + i * sf->r + k + 1,
						sf_switch(sf, set, a, b2),
						sf->t + j * sf->r + k + 1);
			}
		}
	}
}

/* (0, x, y) ~ (1, m, c) iff y = m x + c */
static void sf_link_global(struct gen_fabric *f, const struct slimfly *sf)
{
	uint64_t first = sf->t + (uint64_t)sf->half * sf->r + 1, k;
	uint32_t x, m, c, y;

	for (x = 0; x < sf->q; x++) {
		for (m = 0; m < sf->q; m++) {
			uint32_t mx = gf_mul(&sf->g, m, x);

			for (c = 0; c < sf->q; c++) {
				y = gf_add(&sf->g, mx, c);
				for (k = 0; k < sf->r; k++)
					link_sw(f, sf_switch(sf, 0, x, y), first + m * sf->r + k,
						sf_switch(sf, 1, m, c), first + x * sf->r + k);
			}
		}
	}
}

static uint64_t sf_radix(uint64_t q)
{
	return (3 * q - (uint64_t)mms_delta(q)) / 2;
}

static int build_slimfly(struct gen_fabric *f, const struct opts *o)
{
	struct slimfly sf = { .q = (uint32_t)o->num[OPT_Q], .r = o->num[OPT_LPP] };
	uint64_t q = o->num[OPT_Q], nsw = 2 * q * q, k = sf_radix(q), s;
	int rc;

	sf.t = o->set[OPT_HPS] ? o->num[OPT_HPS] : ceil_div(k, 2);
	rc = gen_fabric_init(f, nsw, nsw * sf.t, o->num[OPT_RADIX]);
	if (rc)
		return rc;
	for (s = 0; s < nsw; s++) {
		sw_desc(f, (uint32_t)s, "slimfly %" PRIu64 ",%" PRIu64 ",%" PRIu64, s / (q * q),
			s / q % q, s % q);
		gen_fabric_need(f, (uint32_t)s, sf.t + k * sf.r);
	}
	rc = gen_fabric_ports(f);
	if (rc)
		return rc;

	rc = sf_init(&sf, (uint32_t)q);
	if (rc)
		goto out;
	attach_hosts(f, 0, f->nsw, (uint32_t)sf.t);
	sf_link_local(f, &sf, 0);
	sf_link_local(f, &sf, 1);
	sf_link_global(f, &sf);
out:
	sf_free(&sf);
	return rc;
}

/*
 * Kautz graph K(d, n): switch v is a string a_0..a_n over d + 1 symbols
 * with a_i != a_(i+1), numbered by a_0 and then the offsets e_i =
 * a_i - a_(i-1) - 1 mod (d + 1) as base-d digits.  Every arc a_0..a_n ->
 * a_1..a_n b becomes its own link(s), as in the thesis: a pair with arcs
 * both ways (the alternating strings) gets two bundles, there are no self
 * loops, and every switch has d out and d in ports.
 */
static void kautz_desc(struct gen_fabric *f, uint32_t v, uint64_t d, uint64_t n, uint64_t dn)
{
	char str[SW_DESC_LEN];
	uint64_t a = v / dn, off = v % dn, scale = dn, i;
	size_t at = 0;

	for (i = 0; i <= n && at < sizeof(str); i++) {
		if (i) {
			scale /= d;
			a = (a + 1 + off / scale % d) % (d + 1);
		}
		at += (size_t)snprintf(str + at, sizeof(str) - at, "%s%" PRIu64,
				       i && d > 9 ? "." : "", a);
	}
	sw_desc(f, v, "kautz %s", str);
}

static int build_kautz(struct gen_fabric *f, const struct opts *o)
{
	uint64_t d = o->num[OPT_D], n = o->num[OPT_N], t = o->num[OPT_HPS], r = o->num[OPT_LPP];
	uint64_t dn = 1, nsw, v, e, k, i;
	int rc;

	for (i = 0; i < n; i++) {
		dn *= d;
		if ((d + 1) * dn > GEN_MAX_SWITCHES)
			return gen_usage(
				"--d %lu --n %lu: fabric too large (more than %lu switches)",
				o->num[OPT_D], o->num[OPT_N], GEN_MAX_SWITCHES);
	}
	nsw = (d + 1) * dn;
	rc = gen_fabric_init(f, nsw, nsw * t, o->num[OPT_RADIX]);
	if (rc)
		return rc;
	for (v = 0; v < nsw; v++) {
		kautz_desc(f, (uint32_t)v, d, n, dn);
		gen_fabric_need(f, (uint32_t)v, t + 2 * d * r);
	}
	rc = gen_fabric_ports(f);
	if (rc)
		return rc;

	attach_hosts(f, 0, f->nsw, (uint32_t)t);
	for (v = 0; v < nsw; v++) {
		uint64_t off = v % dn, e1 = off / (dn / d), rest = off % (dn / d);
		uint64_t a1 = (v / dn + 1 + e1) % (d + 1);

		for (e = 0; e < d; e++) {
			uint64_t u = a1 * dn + rest * d + e;

			for (k = 0; k < r; k++)
				link_sw(f, (uint32_t)v, t + e * r + k + 1, (uint32_t)u,
					t + (d + e1) * r + k + 1);
		}
	}
	return GEN_OK;
}

static uint64_t df_next_free(struct gen_fabric *f, uint64_t grp, uint64_t *cur, uint64_t a,
			     uint64_t h, uint64_t first)
{
	for (; *cur < a * h; (*cur)++) {
		uint32_t s = (uint32_t)(grp * a + *cur / h);

		if (f->peer[f->base[s] + first + *cur % h - 1].node == NO_NODE)
			return *cur;
	}
	return *cur;
}

/*
 * Global port j of group i sits on router j/H.  Links go to group
 * i + (j mod (G-1)) + 1; the m-th port of offset class o pairs with the
 * m-th port of class G-o in the target group.  For G = A*H+1 this is the
 * classic consecutive arrangement; when the classes differ in size a
 * round-robin pass joins what is left over.
 */
static int df_global(struct gen_fabric *f, uint64_t g, uint64_t a, uint64_t h, uint64_t first)
{
	uint64_t ah = a * h, per = g - 1, q = ah / per, rem = ah % per;
	uint64_t i, o, m, *cur;
	bool progress;

	for (i = 0; i < g; i++) {
		for (o = 1; o <= per; o++) {
			uint64_t o2 = g - o, t = (i + o) % g, cnt;
			uint64_t n1 = q + (o - 1 < rem), n2 = q + (o2 - 1 < rem);

			if (o > o2 || (o == o2 && t < i))
				continue;
			cnt = n1 < n2 ? n1 : n2;
			for (m = 0; m < cnt; m++) {
				uint64_t j1 = o - 1 + m * per, j2 = o2 - 1 + m * per;

				link_sw(f, (uint32_t)(i * a + j1 / h), first + j1 % h,
					(uint32_t)(t * a + j2 / h), first + j2 % h);
			}
		}
	}
	if (!rem)
		return GEN_OK;

	cur = calloc(g, sizeof(*cur));
	if (!cur)
		return gen_nomem();
	/*
	 * One link per group pair and round, nearest offsets first, so the
	 * extra links spread evenly; offsets o and G-o name the same pairs.
	 */
	do {
		progress = false;
		for (o = 1; 2 * o <= g; o++) {
			for (i = 0; i < g; i++) {
				uint64_t t = (i + o) % g, j1, j2;

				if (2 * o == g && t < i)
					continue;
				j1 = df_next_free(f, i, &cur[i], a, h, first);
				j2 = df_next_free(f, t, &cur[t], a, h, first);
				if (j1 >= ah || j2 >= ah)
					continue;
				link_sw(f, (uint32_t)(i * a + j1 / h), first + j1 % h,
					(uint32_t)(t * a + j2 / h), first + j2 % h);
				progress = true;
			}
		}
	} while (progress);
	free(cur);
	return GEN_OK;
}

static int build_dragonfly(struct gen_fabric *f, const struct opts *o)
{
	uint64_t a = o->num[OPT_A], p = o->num[OPT_P], h = o->num[OPT_H], g = o->num[OPT_G];
	uint64_t nsw = g * a, grp, r;
	int rc;

	rc = gen_fabric_init(f, nsw, nsw * p, o->num[OPT_RADIX]);
	if (rc)
		return rc;
	for (grp = 0; grp < g; grp++) {
		for (r = 0; r < a; r++) {
			sw_desc(f, (uint32_t)(grp * a + r), "group %" PRIu64 " router %" PRIu64,
				grp, r);
			gen_fabric_need(f, (uint32_t)(grp * a + r), p + a - 1 + h);
		}
	}
	rc = gen_fabric_ports(f);
	if (rc)
		return rc;

	attach_hosts(f, 0, f->nsw, (uint32_t)p);
	for (grp = 0; grp < g; grp++)
		link_clique(f, (uint32_t)(grp * a), 1, (uint32_t)a, p + 1, 1);
	if (g >= 2 && h)
		return df_global(f, g, a, h, p + a);
	return GEN_OK;
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
	default:
		rc = gen_fail("internal error: no builder for %s", o->topo_name);
		break;
	}
	if (!rc && f->conflict)
		rc = gen_fail("internal error: %s wired a port twice", o->topo_name);
	return rc;
}

static void cut_free(struct cut *c)
{
	free(c->disc);
	free(c->low);
	free(c->stack);
	free(c->next);
	free(c->entry);
	free(c->up);
	free(c->art);
	free(c->bridge);
}

static int cut_alloc(struct cut *c, const struct gen_fabric *f)
{
	size_t n = f->nsw ? f->nsw : 1;

	memset(c, 0, sizeof(*c));
	c->disc = malloc(n * sizeof(*c->disc));
	c->low = malloc(n * sizeof(*c->low));
	c->stack = malloc(n * sizeof(*c->stack));
	c->next = malloc(n * sizeof(*c->next));
	c->entry = malloc(n * sizeof(*c->entry));
	c->up = malloc(n * sizeof(*c->up));
	c->art = malloc(n);
	c->bridge = malloc(f->base[f->nsw] + 1);
	if (!c->disc || !c->low || !c->stack || !c->next || !c->entry || !c->up || !c->art ||
	    !c->bridge)
		return gen_nomem();
	return GEN_OK;
}

/*
 * Iterative Tarjan over the live switch graph: marks articulation switches
 * and bridge links so faults never split the fabric.  Parallel links are
 * told apart by port, so a doubled link is correctly not a bridge.
 * Returns the number of connected components.
 */
static uint32_t cut_analyze(const struct gen_fabric *f, struct cut *c)
{
	uint32_t t = 0, comps = 0, root;

	memset(c->disc, 0, f->nsw * sizeof(*c->disc));
	memset(c->art, 0, f->nsw);
	memset(c->bridge, 0, f->base[f->nsw]);

	for (root = 0; root < f->nsw; root++) {
		uint32_t sp = 0, kids = 0;

		if (f->dead[root] || c->disc[root])
			continue;
		comps++;
		c->disc[root] = c->low[root] = ++t;
		c->next[root] = 0;
		c->entry[root] = NO_PORT;
		c->stack[sp++] = root;
		while (sp) {
			uint32_t v = c->stack[sp - 1], u;

			if (c->next[v] < sw_nports(f, v)) {
				uint16_t p = c->next[v]++;
				const struct peer *pe = &f->peer[f->base[v] + p];
				uint32_t w = pe->node;

				if (w >= f->nsw || p == c->entry[v])
					continue;
				if (!c->disc[w]) {
					c->disc[w] = c->low[w] = ++t;
					c->next[w] = 0;
					c->entry[w] = pe->port - 1;
					c->up[w] = p;
					c->stack[sp++] = w;
					if (v == root)
						kids++;
				} else if (c->disc[w] < c->low[v]) {
					c->low[v] = c->disc[w];
				}
				continue;
			}
			if (--sp == 0)
				break;
			u = c->stack[sp - 1];
			if (c->low[v] < c->low[u])
				c->low[u] = c->low[v];
			if (c->low[v] > c->disc[u]) {
				c->bridge[f->base[u] + c->up[v]] = 1;
				c->bridge[f->base[v] + c->entry[v]] = 1;
			}
			if (u != root && c->low[v] >= c->disc[u])
				c->art[u] = 1;
		}
		if (kids > 1)
			c->art[root] = 1;
	}
	return comps;
}

static int log_push(struct rm_log *log, const struct rm_event *ev)
{
	if (fab_grow((void **)&log->ev, &log->cap, log->n + 1, sizeof(*log->ev), 64))
		return gen_nomem();
	log->ev[log->n++] = *ev;
	return GEN_OK;
}

static int remove_switch(struct gen_fabric *f, uint32_t s, struct rm_log *log)
{
	struct rm_event ev = { .is_switch = true, .a = s };
	uint32_t p;

	for (p = 0; p < sw_nports(f, s); p++) {
		struct peer *pe = &f->peer[f->base[s] + p];

		if (pe->node == NO_NODE)
			continue;
		if (pe->node < f->nsw)
			f->peer[f->base[pe->node] + pe->port - 1].node = NO_NODE;
		else
			ev.hosts++;
		pe->node = NO_NODE;
	}
	f->dead[s] = 1;
	return log_push(log, &ev);
}

static int remove_link(struct gen_fabric *f, uint32_t s, uint32_t p, struct rm_log *log)
{
	struct peer *pe = &f->peer[f->base[s] + p];
	struct rm_event ev = {
		.a = s,
		.pa = (uint16_t)(p + 1),
		.b = pe->node,
		.pb = pe->port,
	};

	f->peer[f->base[pe->node] + pe->port - 1].node = NO_NODE;
	pe->node = NO_NODE;
	return log_push(log, &ev);
}

static uint32_t live_switches(const struct gen_fabric *f)
{
	uint32_t s, n = 0;

	for (s = 0; s < f->nsw; s++)
		n += !f->dead[s];
	return n;
}

static uint64_t live_links(const struct gen_fabric *f)
{
	uint64_t i, ends = 0;

	for (i = 0; i < f->base[f->nsw]; i++)
		ends += f->peer[i].node < f->nsw;
	return ends / 2;
}

static int parse_switch_id(const struct gen_fabric *f, const char *id, uint32_t *s)
{
	uint64_t v;

	if (strncmp(id, "S-", 2) || num_parse_u64(id + 2, UINT64_MAX, &v))
		return gen_usage("--remove-switch-id %s: expected a switch id such as S-0005", id);
	if (v < 1 || v > f->nsw)
		return gen_usage(
			"--remove-switch-id %s: no such switch (switches are S-0001 to S-%04u)", id,
			f->nsw);
	*s = (uint32_t)(v - 1);
	return GEN_OK;
}

static int remove_named(struct gen_fabric *f, struct cut *c, const struct opts *o,
			struct rm_log *log)
{
	uint32_t i, s = 0;
	int rc;

	for (i = 0; i < o->n_rm_ids; i++) {
		const char *id = o->rm_ids[i];

		rc = parse_switch_id(f, id, &s);
		if (rc)
			return rc;
		if (f->dead[s])
			return gen_usage("--remove-switch-id %s: switch already removed", id);
		if (live_switches(f) == 1)
			return gen_usage("--remove-switch-id %s: it is the last switch", id);
		cut_analyze(f, c);
		if (c->art[s])
			return gen_usage(
				"--remove-switch-id %s: removing it (%s) would split the switch graph",
				id, f->desc[s]);
		rc = remove_switch(f, s, log);
		if (rc)
			return rc;
	}
	return GEN_OK;
}

static int remove_random_switches(struct gen_fabric *f, struct cut *c, const struct opts *o,
				  struct rm_log *log)
{
	uint64_t want = o->num[OPT_RM_SWITCHES], done;
	uint32_t *cand, n = 0, s, i;
	struct rng r;
	int rc = GEN_OK;

	if (!want)
		return GEN_OK;
	/* a connected graph always has a non-cut vertex, down to one switch */
	if (want >= live_switches(f))
		return gen_usage("%s %s: the fabric has only %u switches left and one must remain",
				 o->name[OPT_RM_SWITCHES], o->val[OPT_RM_SWITCHES],
				 live_switches(f));
	cand = malloc(f->nsw * sizeof(*cand));
	if (!cand)
		return gen_nomem();
	for (s = 0; s < f->nsw; s++)
		if (!f->dead[s])
			cand[n++] = s;
	rng_seed(&r, o->seed, STREAM_RM_SWITCHES);
	shuffle_u32(&r, cand, n);

	for (done = 0; done < want; done++) {
		cut_analyze(f, c);
		for (i = 0; i < n; i++)
			if (!f->dead[cand[i]] && !c->art[cand[i]])
				break;
		if (i == n) {
			rc = gen_usage(
				"%s %s: only %" PRIu64
				" switches can be removed without splitting the switch graph",
				o->name[OPT_RM_SWITCHES], o->val[OPT_RM_SWITCHES], done);
			break;
		}
		rc = remove_switch(f, cand[i], log);
		if (rc)
			break;
	}
	free(cand);
	return rc;
}

struct link_ref {
	uint32_t s;
	uint32_t p; /* port index, 0-based */
};

static int remove_random_links(struct gen_fabric *f, struct cut *c, const struct opts *o,
			       struct rm_log *log)
{
	uint64_t total = live_links(f), want, spare, done, i, n = 0;
	struct link_ref *cand;
	uint32_t s, p, comps;
	struct rng r;
	int rc = GEN_OK;

	if (!o->set[OPT_RM_LINKS])
		return GEN_OK;
	want = o->rm_pct ? (uint64_t)(o->rm_links_pct * (double)total / 100.0 + 0.5) : o->rm_links;
	if (!want)
		return GEN_OK;
	/* links beyond a spanning forest are exactly the removable ones */
	comps = cut_analyze(f, c);
	spare = total - (live_switches(f) - comps);
	if (want > spare)
		return gen_usage(
			"%s %s: only %" PRIu64 " of the %" PRIu64
			" switch links can be removed without splitting the switch graph (asked for %" PRIu64
			")",
			o->name[OPT_RM_LINKS], o->val[OPT_RM_LINKS], spare, total, want);

	cand = malloc((total ? total : 1) * sizeof(*cand));
	if (!cand)
		return gen_nomem();
	for (s = 0; s < f->nsw; s++) {
		for (p = 0; p < sw_nports(f, s); p++) {
			uint32_t w = f->peer[f->base[s] + p].node;

			if (w < f->nsw && w > s) {
				cand[n].s = s;
				cand[n].p = p;
				n++;
			}
		}
	}
	rng_seed(&r, o->seed, STREAM_RM_LINKS);
	for (i = n; i > 1; i--) {
		uint64_t j = rng_below(&r, i);
		struct link_ref t = cand[i - 1];

		cand[i - 1] = cand[j];
		cand[j] = t;
	}

	for (done = 0; done < want; done++) {
		if (done)
			cut_analyze(f, c);
		for (i = 0; i < n; i++) {
			uint32_t slot = f->base[cand[i].s] + cand[i].p;

			if (f->peer[slot].node != NO_NODE && !c->bridge[slot])
				break;
		}
		if (i == n) {
			rc = gen_fail("internal error: no removable link left after %" PRIu64,
				      done);
			break;
		}
		rc = remove_link(f, cand[i].s, cand[i].p, log);
		if (rc)
			break;
	}
	free(cand);
	return rc;
}

static int apply_faults(struct gen_fabric *f, const struct opts *o, struct rm_log *log)
{
	struct cut c;
	int rc;

	if (!o->n_rm_ids && !o->num[OPT_RM_SWITCHES] && !o->set[OPT_RM_LINKS])
		return GEN_OK;
	rc = cut_alloc(&c, f);
	if (!rc)
		rc = remove_named(f, &c, o, log);
	if (!rc)
		rc = remove_random_switches(f, &c, o, log);
	if (!rc)
		rc = remove_random_links(f, &c, o, log);
	cut_free(&c);
	return rc;
}

/* Dense 1-based numbers for the hosts that survived; 0 for removed ones. */
static uint32_t number_hosts(const struct gen_fabric *f, uint32_t *hid)
{
	uint32_t h, m = 0;

	for (h = 0; h < f->nhost; h++)
		hid[h] = f->dead[f->host_sw[h]] ? 0 : ++m;
	return m;
}

static int check_hostnames(const struct hostfmt *hf, const char *pat, uint32_t nhosts)
{
	char name[HOSTBUF];
	size_t len;

	if (!nhosts)
		return GEN_OK;
	/* every conversion grows with the value, so the last host is longest */
	len = hostfmt_format(hf, nhosts, name, sizeof(name));
	if (len + strlen(" HCA-1") > DESC_MAX)
		return gen_usage(
			"--hostname-pattern %s: \"%s HCA-1\" is longer than the %d characters of a node description",
			pat, name, DESC_MAX);
	return GEN_OK;
}

/*
 * Echo the command as a comment for provenance, minus the output file so
 * that the same fabric written to two places is byte-identical.
 */
static void write_cmdline(FILE *fp, int argc, char **argv)
{
	size_t used = 0;
	int i;

	fputs("# Command: sarnue", fp);
	for (i = 0; i < argc; i++) {
		const char *s = argv[i];

		if (i && (!strcmp(s, "-o") || !strcmp(s, "--output"))) {
			i++;
			continue;
		}
		if (i && (!strncmp(s, "-o", 2) || !strncmp(s, "--output=", 9)))
			continue;
		for (fputc(' ', fp), used++; *s; s++, used++) {
			if (used >= CMDLINE_MAX) {
				fputs(" ...\n", fp);
				return;
			}
			fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, fp);
		}
	}
	fputc('\n', fp);
}

static void write_net(FILE *fp, const struct gen_fabric *f, const struct hostfmt *hf,
		      const uint32_t *hid, uint32_t nhosts, int argc, char **argv)
{
	char name[HOSTBUF];
	uint32_t s, p, h;

	fputs("#\n# Topology file: generated by sarnue gen\n", fp);
	write_cmdline(fp, argc, argv);
	fprintf(fp, "# %u switches, %u hosts, %" PRIu64 " switch links\n#\n", live_switches(f),
		nhosts, live_links(f));

	for (s = 0; s < f->nsw; s++) {
		if (f->dead[s])
			continue;
		fprintf(fp, "\nSwitch\t%u \"S-%04u\"\t# \"%s\"\n", sw_nports(f, s), s + 1,
			f->desc[s]);
		for (p = 0; p < sw_nports(f, s); p++) {
			const struct peer *pe = &f->peer[f->base[s] + p];

			if (pe->node == NO_NODE)
				continue;
			if (pe->node < f->nsw)
				fprintf(fp, "[%u]\t\"S-%04u\"[%u]\n", p + 1, pe->node + 1,
					pe->port);
			else
				fprintf(fp, "[%u]\t\"H-%04u\"[1]\n", p + 1, hid[pe->node - f->nsw]);
		}
	}
	for (h = 0; h < f->nhost; h++) {
		if (!hid[h])
			continue;
		hostfmt_format(hf, hid[h], name, sizeof(name));
		fprintf(fp, "\nHca\t1 \"H-%04u\"\t# \"%s HCA-1\"\n[1]\t\"S-%04u\"[%u]\n", hid[h],
			name, f->host_sw[h] + 1, f->host_port[h]);
	}
}

/* O_EXCL on a fresh name: never follows a planted symlink, umask applies. */
static int open_temp(const char *out, char **tmp_out, FILE **fp_out)
{
	size_t len = strlen(out) + 48;
	char *tmp = malloc(len);
	unsigned int i;
	int fd = -1;

	if (!tmp)
		return gen_nomem();
	for (i = 0; i < 100 && fd < 0; i++) {
		snprintf(tmp, len, "%s.%ld.%u.tmp", out, (long)getpid(), i);
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		int err = errno;

		free(tmp);
		return gen_fail("cannot create %s: %s", out, strerror(err));
	}
	*fp_out = fdopen(fd, "w");
	if (!*fp_out) {
		int err = errno;

		close(fd);
		unlink(tmp);
		free(tmp);
		return gen_fail("cannot write %s: %s", out, strerror(err));
	}
	*tmp_out = tmp;
	return GEN_OK;
}

/* Closes what open_temp opened and renames it to out, or removes it if writing failed. */
static int commit_temp(FILE *fp, char *tmp, const char *out)
{
	int err = ferror(fp) ? (errno ? errno : EIO) : 0, rc = GEN_OK;

	if (fclose(fp) && !err)
		err = errno;
	if (!err && rename(tmp, out))
		err = errno;
	if (err) {
		unlink(tmp);
		rc = gen_fail("cannot write %s: %s", out, strerror(err));
	}
	free(tmp);
	return rc;
}

static int write_output(const struct gen_fabric *f, const struct opts *o, const struct hostfmt *hf,
			const uint32_t *hid, uint32_t nhosts, int argc, char **argv)
{
	const char *out = o->set[OPT_OUT] ? o->val[OPT_OUT] : "-";
	char *tmp = NULL;
	FILE *fp;
	int rc;

	if (!strcmp(out, "-")) {
		write_net(stdout, f, hf, hid, nhosts, argc, argv);
		if (fflush(stdout) || ferror(stdout))
			return gen_fail("cannot write standard output: %s", strerror(errno));
		return GEN_OK;
	}

	rc = open_temp(out, &tmp, &fp);
	if (rc)
		return rc;
	write_net(fp, f, hf, hid, nhosts, argc, argv);
	return commit_temp(fp, tmp, out);
}

/* Torus switch s's block of halves: bit i set in the upper half of the i-th cut dimension. */
static unsigned torus_block(const struct opts *o, uint32_t s)
{
	uint64_t stride = 1;
	unsigned d, bit = 0, layer = 0;

	for (d = 0; d < o->ndims; d++) {
		uint64_t c = (s / stride) % o->dims[d];

		if (o->dims[d] >= 2)
			layer |= (unsigned)(c * 2 / o->dims[d]) << bit++;
		stride *= o->dims[d];
	}
	return layer;
}

/* --layers-file: the torus's blocks of halves as a switch layers file (nue_layers=). */
static void write_layers(FILE *fp, const struct gen_fabric *f, const struct opts *o)
{
	uint32_t s;

	fprintf(fp, "# sar-nue switch layers (nue_layers=): blocks of half of each ring\n");
	for (s = 0; s < f->nsw; s++)
		if (!f->dead[s])
			fprintf(fp, "\"%s\" %u\n", f->desc[s], torus_block(o, s));
}

static void report(const struct gen_fabric *f, const struct rm_log *log, uint32_t nhosts)
{
	size_t i;

	for (i = 0; i < log->n; i++) {
		const struct rm_event *ev = &log->ev[i];

		if (ev->is_switch)
			fprintf(stderr, "gen: removed switch S-%04u \"%s\" (%u hosts)\n", ev->a + 1,
				f->desc[ev->a], ev->hosts);
		else
			fprintf(stderr, "gen: removed link S-%04u[%u] <-> S-%04u[%u]\n", ev->a + 1,
				ev->pa, ev->b + 1, ev->pb);
	}
	fprintf(stderr, "gen: %u switches, %u hosts, %" PRIu64 " switch links\n", live_switches(f),
		nhosts, live_links(f));
}

static void print_help(FILE *fp)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(help_text); i++) {
		fputs(help_text[i], fp);
		fputc('\n', fp);
	}
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
	int rc;

	rc = parse_args(&o, argc, argv);
	if (rc)
		goto out;
	if (o.help) {
		print_help(stdout);
		if (fflush(stdout))
			rc = gen_fail("cannot write standard output: %s", strerror(errno));
		goto out;
	}
	rc = validate(&o, &hf);
	if (rc)
		goto out;
	rc = build(&f, &o);
	if (rc)
		goto out;
	rc = apply_faults(&f, &o, &log);
	if (rc)
		goto out;

	hid = malloc((f.nhost ? f.nhost : 1) * sizeof(*hid));
	if (!hid) {
		rc = gen_nomem();
		goto out;
	}
	nhosts = number_hosts(&f, hid);
	rc = check_hostnames(&hf, o.set[OPT_HOSTPAT] ? o.val[OPT_HOSTPAT] : DEFAULT_HOSTNAME,
			     nhosts);
	if (rc)
		goto out;
	/* Created first, so that a layers file that cannot be written leaves no net file either. */
	if (o.set[OPT_LAYERS_FILE]) {
		rc = open_temp(o.val[OPT_LAYERS_FILE], &layers_tmp, &layers_fp);
		if (rc)
			goto out;
	}
	rc = write_output(&f, &o, &hf, hid, nhosts, argc, argv);
	if (rc)
		goto out;
	if (layers_fp) {
		write_layers(layers_fp, &f, &o);
		rc = commit_temp(layers_fp, layers_tmp, o.val[OPT_LAYERS_FILE]);
		layers_fp = NULL;
		if (rc)
			goto out;
	}
	report(&f, &log, nhosts);
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
