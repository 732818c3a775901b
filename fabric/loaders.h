/*
 * loaders.h - reading fabrics and routing tables from files, and writing them back.
 *
 * Inputs: ibsim/ibnetdiscover net files; OpenSM's opensm-subnet.lst (topology) and opensm.fdbs
 * or opensm-lfts.dump (LFTs), opensm.mcfdbs and opensm-sa.dump (multicast); sarnue's path-SL
 * and SL2VL dumps.  Outputs use the formats OpenSM
 * and ibdmchk use, so that an independent tool can check whatever sarnue produced.
 * Every parse error names the file and the line.
 */
#ifndef SARNUE_LOADERS_H
#define SARNUE_LOADERS_H

#include "fabric/fabric.h"
#include "fabric/routing.h"

struct netfile_opts {
	unsigned lmc;	 /* LMC given to every CA/router port */
	unsigned op_vls; /* operational VLs assumed on every port */
	/*
	 * Whether lmc was asked for: when not, LIDs the file gives ("lid 16 lmc 1") are kept with
	 * their LMC; when it was and the file's LMC differs, every port gets a new LID.
	 */
	int lmc_given;
};

int fabric_load_netfile(struct fabric *f, const char *path, const struct netfile_opts *opts,
			struct fab_error *err);

/* opensm-subnet.lst; LMC is not in that file, so the caller supplies it. */
int fabric_load_subnet_lst(struct fabric *f, const char *path, unsigned lmc, unsigned op_vls,
			   struct fab_error *err);

/*
 * What a topology path is.  TOPOLOGY_BY_NAME lets the path decide: a directory is an OpenSM dump
 * directory (its opensm-subnet.lst is read), a name ending in ".lst" is a subnet.lst, anything
 * else a net file.
 */
enum topology_format {
	TOPOLOGY_BY_NAME,
	TOPOLOGY_NETFILE,
	TOPOLOGY_SUBNET_LST,
};

struct topology_opts {
	enum topology_format format;
	struct netfile_opts net; /* its lmc applies to both formats, its op_vls to net files */
	unsigned lst_op_vls;	 /* VLs of every port of a subnet.lst, which does not record them */
};

/*
 * The file path stands for, into file[size], and its format into *kind (format itself unless it
 * is TOPOLOGY_BY_NAME).  Returns 0, or -1 when the name does not fit.
 */
int topology_resolve(const char *path, enum topology_format format, char *file, size_t size,
		     enum topology_format *kind);

/*
 * Loads the topology path names into f (fabric_init()ed; the caller frees it on failure too).
 * When file is not NULL it receives the name of the file read, as topology_resolve() gives it.
 * Errors are the format loader's, naming the file and line, or "PATH: path too long".
 */
int fabric_load_topology(struct fabric *f, const char *path, const struct topology_opts *o,
			 char *file, size_t size, struct fab_error *err);

/* opensm.fdbs or opensm-lfts.dump into r, which routing_init() prepared for f. */
int routing_load_lfts(struct routing *r, const struct fabric *f, const char *path,
		      struct fab_error *err);
int routing_load_path_sl(struct routing *r, const struct fabric *f, const char *path,
			 struct fab_error *err);
int routing_load_sl2vl(struct routing *r, const struct fabric *f, const char *path,
		       struct fab_error *err);

struct mcast;

/*
 * OpenSM's opensm.mcfdbs (every switch's multicast forwarding table) and, when sa_dump_path is
 * not NULL, its opensm-sa.dump (sa_db_dump: each group's SL and member ports) into m, one group
 * per MLID in ascending order.  A group the SA dump does not describe gets MCAST_SL_UNKNOWN
 * and, as members, the end ports its tree reaches.  An empty opensm.mcfdbs means no trees.
 * On an error m is left as it was and err names the file and line.
 */
int mcast_load_mcfdbs(struct mcast *m, const struct fabric *f, const char *mcfdbs_path,
		      const char *sa_dump_path, struct fab_error *err);

/*
 * Forms of the path-SL dump (fabric/sldump.c).  The full form has a line per (source end port,
 * destination LID), as ibdmchk -c needs; the compact form a line per destination LID whose SL
 * differs from the common one, which ibdmchk reads as SL 0 everywhere (it stops on one that
 * names another SL).  The loader reads both.
 */
enum path_sl_form {
	PATH_SL_AUTO,	 /* compact when every path uses SL 0, where ibdmchk reads it exactly */
	PATH_SL_FULL,	 /* always the full form */
	PATH_SL_COMPACT, /* compact unless the SL towards some destination varies by source */
};

/* The form a request for want gives on routing r: PATH_SL_FULL or PATH_SL_COMPACT. */
enum path_sl_form routing_path_sl_form(const struct routing *r, const struct fabric *f,
				       enum path_sl_form want);

/* Writers; each returns 0 or -1 with errno set. */
int fabric_write_subnet_lst(const struct fabric *f, FILE *out);
int routing_write_fdbs(const struct routing *r, const struct fabric *f, FILE *out);
int routing_write_path_sl(const struct routing *r, const struct fabric *f, FILE *out); /* full */
int routing_write_path_sl_as(const struct routing *r, const struct fabric *f,
			     enum path_sl_form form, FILE *out);
int routing_write_sl2vl(const struct routing *r, const struct fabric *f, FILE *out);

enum dump_set {
	DUMP_TOPOLOGY = 1, /* opensm-subnet.lst, and an empty opensm.mcfdbs for ibdmchk */
	DUMP_LFTS = 2,	   /* opensm.fdbs */
	DUMP_SLS = 4,	   /* sarnue-path-sl.dump, sarnue-sl2vl.dump */
};

/*
 * Writes the chosen dump files into dir, each atomically, the path-SL dump in the PATH_SL_AUTO
 * form.  Returns 0, or -1 with errno set and the path that failed in failed_path.
 */
int routing_write_dumps(const char *dir, const struct fabric *f, const struct routing *r,
			unsigned set, char *failed_path, size_t failed_len);

struct dump_opts {
	unsigned set; /* enum dump_set bits */
	enum path_sl_form path_sl;
	/* Called after each file is in place, e.g. to report its size; may be NULL. */
	void (*wrote)(void *arg, const char *path);
	void *arg;
};

/* routing_write_dumps with the path-SL form chosen and a report per file. */
int routing_write_dumps_opts(const char *dir, const struct fabric *f, const struct routing *r,
			     const struct dump_opts *o, char *failed_path, size_t failed_len);

/* Writes a file through a temporary name and rename(), so readers never see half a file. */
int write_file_atomic(const char *path, int (*writer)(const void *ctx, FILE *out), const void *ctx);

#endif
