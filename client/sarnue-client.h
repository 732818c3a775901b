/*
 * sarnue-client.h - the host side of sarnue's five-phase update (libsarnue-client).
 *
 * A process that holds reliable connections subscribes through the subnet administrator
 * (SA InformInfo) to the UnPath (trap 68) and RePath (trap 69) reports the sarnue plugin sends
 * before and after it rewrites the base-LID routes.  sarnue_client_poll() receives the reports,
 * answers each with the ReportResp IBA requires, calls the handler once per update and
 * report kind, and acknowledges to the subnet manager with a trap 144 when the handler
 * succeeded.  Repeated reports (lost MADs, the plugin's retries) re-send the acknowledgement
 * without running the handler again.  The wire format is in doc/five-phase.md.
 *
 * The MAD part needs access to the umad device of the port (root, or a udev rule for
 * /dev/infiniband/umad*).  The verbs helpers at the end move reliable-connection queue pairs
 * between the base-LID and high-LID planes with automatic path migration; they need real
 * HCAs.  A client handle is not thread-safe: use it from one thread.
 */
#ifndef SARNUE_CLIENT_H
#define SARNUE_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SARNUE_CLIENT_MAX_RANGES 10

enum sarnue_kind {
	SARNUE_REPORT_OTHER = 0,  /* a report of another trap the client subscribed to */
	SARNUE_REPORT_UNPATH = 1, /* trap 68: move reliable connections to the high LIDs */
	SARNUE_REPORT_REPATH = 2, /* trap 69: move them back to the base LIDs */
};

enum sarnue_log_level {
	SARNUE_LOG_ERROR = 0,
	SARNUE_LOG_WARN = 1,
	SARNUE_LOG_INFO = 2,
	SARNUE_LOG_DEBUG = 3,
};

struct sarnue_lid_range {
	uint16_t first, last;
};

struct sarnue_report {
	enum sarnue_kind kind;
	uint16_t trap_num;
	uint16_t issuer_lid;
	uint32_t seq; /* update sequence number; 0 for other traps */
	uint8_t lmc;  /* LMC of the fabric: the high LID of base LID b is b + 1 */
	/* Base LIDs whose routes change; none means every LID. */
	unsigned nranges;
	struct sarnue_lid_range ranges[SARNUE_CLIENT_MAX_RANGES];
	uint8_t notice[80]; /* the Notice attribute as received */
};

/* Handler results. */
#define SARNUE_HANDLER_DONE 0  /* the connections moved: acknowledge now */
#define SARNUE_HANDLER_LATER 1 /* the work goes on: sarnue_client_complete() follows */
/* Any negative value: failed, nothing is acknowledged. */

/*
 * Called once per new report.  For UnPath/RePath, return SARNUE_HANDLER_DONE once the
 * reliable connections have moved: the client then acknowledges.  SARNUE_HANDLER_LATER lets
 * the application finish the work while it keeps calling sarnue_client_poll() (so that
 * repeated reports are still answered), then report the outcome with sarnue_client_complete().
 * A failed report is not handled again when it is repeated.  For other traps the result is
 * ignored.
 */
typedef int (*sarnue_report_fn)(const struct sarnue_report *r, void *arg);
typedef void (*sarnue_log_fn)(void *arg, enum sarnue_log_level level, const char *msg);

struct sarnue_client_config {
	const char *ca;	     /* HCA name; NULL: the first one */
	int port;	     /* port number; 0: the first active port */
	unsigned timeout_ms; /* per SA request; 0: 1000 */
	unsigned retries;    /* per SA request after the first try; 0: 3 */
	sarnue_log_fn log;   /* NULL: silent */
	void *log_arg;
};

struct sarnue_client_stats {
	unsigned long reports;	 /* Report MADs received (also repeats) */
	unsigned long handled;	 /* handler calls */
	unsigned long repeats;	 /* reports recognised as repeats */
	unsigned long malformed; /* MADs rejected */
	unsigned long acks;	 /* trap 144 acknowledgements sent (also re-sends) */
	unsigned long handler_failures;
};

struct sarnue_port_info {
	char ca[64];
	int port;
	uint64_t port_guid;
	uint16_t lid, sm_lid;
	uint8_t lmc;
};

struct sarnue_client;

/* Opens the port and registers the MAD agents.  Returns 0, or -1 with err filled. */
int sarnue_client_open(const struct sarnue_client_config *cfg, struct sarnue_client **out,
		       char *err, size_t errlen);
void sarnue_client_close(struct sarnue_client *c);

/* Subscribe to or unsubscribe from one generic trap number (0xFFFF: all traps). */
int sarnue_client_subscribe(struct sarnue_client *c, uint16_t trap, char *err, size_t errlen);
int sarnue_client_unsubscribe(struct sarnue_client *c, uint16_t trap, char *err, size_t errlen);
/* Subscribes to traps 68 and 69. */
int sarnue_client_subscribe_paths(struct sarnue_client *c, char *err, size_t errlen);
/* Unsubscribes from everything this handle subscribed to; errors are logged. */
void sarnue_client_unsubscribe_all(struct sarnue_client *c);

/* The descriptor to poll() for readability, for event loops. */
int sarnue_client_fd(const struct sarnue_client *c);

/*
 * Waits up to timeout_ms (-1: forever) for MADs and handles every one that arrives before the
 * wait ends.  Returns the number of handler calls, or -1 on a port error (err filled).
 */
int sarnue_client_poll(struct sarnue_client *c, int timeout_ms, sarnue_report_fn fn, void *arg,
		       char *err, size_t errlen);

/*
 * Finishes a report whose handler returned SARNUE_HANDLER_LATER: acknowledges it when ok is
 * non-zero.  Returns 0, or -1 when no such report is pending.
 */
int sarnue_client_complete(struct sarnue_client *c, enum sarnue_kind kind, uint32_t seq, int ok);

void sarnue_client_get_stats(const struct sarnue_client *c, struct sarnue_client_stats *s);
/* Re-reads the port's LID, SM LID and LMC from the port itself. */
int sarnue_client_port(struct sarnue_client *c, struct sarnue_port_info *pi, char *err,
		       size_t errlen);
const char *sarnue_kind_name(enum sarnue_kind kind);

/*
 * Verbs helpers for reliable-connection queue pairs (libibverbs).  The fabric runs LMC 1:
 * a peer reachable at base LID b is also reachable at b + 1 over the escape plane.  These need
 * real HCAs: ibsim simulates no data path.
 */
struct ibv_qp;

struct sarnue_qp_path {
	uint16_t dlid;	       /* destination LID of the path */
	uint8_t src_path_bits; /* 0: our base LID as source, 1: our high LID */
	int sl;		       /* service level, or -1 to keep the primary path's SL */
};

/* Loads the alternate path of an RC QP in RTS and re-arms migration (PathMigState REARM). */
int sarnue_qp_load_alt_path(struct ibv_qp *qp, const struct sarnue_qp_path *p, char *err,
			    size_t errlen);
/* Makes the armed alternate path the primary one (PathMigState MIGRATED). */
int sarnue_qp_migrate(struct ibv_qp *qp, char *err, size_t errlen);
/* Moves an RC QP from RTS to SQD with an async event once drained (IBA 10.3.1.5). */
int sarnue_qp_drain(struct ibv_qp *qp, char *err, size_t errlen);
/* Returns a drained QP from SQD to RTS. */
int sarnue_qp_resume(struct ibv_qp *qp, char *err, size_t errlen);
/*
 * Moves an RC QP to a plane (0: base LIDs, 1: high LIDs) with the given SL (-1 keeps it):
 * loads that plane's path as alternate, migrates to it, then loads the other plane's path as
 * the new alternate.  Does nothing when the QP already uses the plane.  Call it after
 * sarnue_qp_drain() reported drained where firmware supports SQD; without draining, packets
 * in flight may arrive out of order.
 */
int sarnue_qp_move_to_plane(struct ibv_qp *qp, int plane, int sl, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
