/*
 * verbs.c - moving reliable-connection queue pairs between the two LID planes of the
 * five-phase update with automatic path migration (IBA 10.4), as in the thesis' phase 2:
 * drain (SQD), migrate to the alternate path, back to RTS, load the opposite path as the new
 * alternate.  With LMC 1 a port's base LID b routes over the SAR plane and b + 1 over the
 * escape plane; the alternate path differs from the primary only in DLID, source path bits
 * and possibly SL.
 *
 * These calls need a real HCA: ibsim simulates management datagrams, not queue pairs, so they
 * are compiled but not exercised by the test suite.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "client/sarnue-client.h"

static int verr(char *err, size_t errlen, const char *what, int rc)
{
	if (err && errlen)
		snprintf(err, errlen, "%s: %s", what, strerror(rc > 0 ? rc : errno));
	return -1;
}

static int query(struct ibv_qp *qp, struct ibv_qp_attr *attr, char *err, size_t errlen)
{
	struct ibv_qp_init_attr init;
	int rc;

	rc = ibv_query_qp(qp, attr,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE |
				  IBV_QP_PORT | IBV_QP_PKEY_INDEX | IBV_QP_TIMEOUT,
			  &init);
	if (rc)
		return verr(err, errlen, "ibv_query_qp", rc);
	if (qp->qp_type != IBV_QPT_RC) {
		if (err && errlen)
			snprintf(err, errlen, "QP 0x%06x is not a reliable connection", qp->qp_num);
		return -1;
	}
	return 0;
}

int sarnue_qp_load_alt_path(struct ibv_qp *qp, const struct sarnue_qp_path *p, char *err,
			    size_t errlen)
{
	struct ibv_qp_attr attr, mod;
	int rc;

	if (query(qp, &attr, err, errlen))
		return -1;
	memset(&mod, 0, sizeof(mod));
	mod.alt_ah_attr = attr.ah_attr;
	mod.alt_ah_attr.dlid = p->dlid;
	mod.alt_ah_attr.src_path_bits = p->src_path_bits;
	if (p->sl >= 0)
		mod.alt_ah_attr.sl = (uint8_t)p->sl;
	mod.alt_port_num = attr.port_num;
	mod.alt_pkey_index = attr.pkey_index;
	mod.alt_timeout = attr.timeout;
	mod.path_mig_state = IBV_MIG_REARM;
	rc = ibv_modify_qp(qp, &mod, IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE);
	if (rc)
		return verr(err, errlen, "loading the alternate path (ibv_modify_qp)", rc);
	return 0;
}

int sarnue_qp_migrate(struct ibv_qp *qp, char *err, size_t errlen)
{
	struct ibv_qp_attr mod;
	int rc;

	memset(&mod, 0, sizeof(mod));
	mod.path_mig_state = IBV_MIG_MIGRATED;
	rc = ibv_modify_qp(qp, &mod, IBV_QP_PATH_MIG_STATE);
	if (rc)
		return verr(err, errlen, "migrating to the alternate path (ibv_modify_qp)", rc);
	return 0;
}

int sarnue_qp_drain(struct ibv_qp *qp, char *err, size_t errlen)
{
	struct ibv_qp_attr mod;
	int rc;

	memset(&mod, 0, sizeof(mod));
	mod.qp_state = IBV_QPS_SQD;
	mod.en_sqd_async_notify = 1;
	rc = ibv_modify_qp(qp, &mod, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY);
	if (rc)
		return verr(err, errlen, "RTS to SQD (firmware may not support draining)", rc);
	return 0;
}

int sarnue_qp_resume(struct ibv_qp *qp, char *err, size_t errlen)
{
	struct ibv_qp_attr mod;
	int rc;

	memset(&mod, 0, sizeof(mod));
	mod.qp_state = IBV_QPS_RTS;
	mod.cur_qp_state = IBV_QPS_SQD;
	rc = ibv_modify_qp(qp, &mod, IBV_QP_STATE | IBV_QP_CUR_STATE);
	if (rc)
		return verr(err, errlen, "SQD to RTS", rc);
	return 0;
}

int sarnue_qp_move_to_plane(struct ibv_qp *qp, int plane, int sl, char *err, size_t errlen)
{
	struct ibv_qp_attr attr;
	struct sarnue_qp_path to, back;
	uint16_t base;

	if (plane != 0 && plane != 1) {
		if (err && errlen)
			snprintf(err, errlen, "plane %d is neither 0 (base) nor 1 (high)", plane);
		return -1;
	}
	if (query(qp, &attr, err, errlen))
		return -1;
	/* OpenSM aligns LID ranges to 2^LMC, so the base LID is even with LMC 1. */
	base = attr.ah_attr.dlid & ~1u;
	if ((attr.ah_attr.dlid & 1u) == (unsigned)plane)
		return 0;
	to.dlid = base + plane;
	to.src_path_bits = (uint8_t)plane;
	to.sl = sl;
	back.dlid = attr.ah_attr.dlid;
	back.src_path_bits = attr.ah_attr.src_path_bits;
	back.sl = attr.ah_attr.sl;
	if (sarnue_qp_load_alt_path(qp, &to, err, errlen) || sarnue_qp_migrate(qp, err, errlen))
		return -1;
	return sarnue_qp_load_alt_path(qp, &back, err, errlen);
}
