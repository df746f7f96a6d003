/* SPDX-License-Identifier: MIT */
/*
 * tests/verbs-emu/qp.c - RC queue pairs: creation, the state machine,
 * queries, destruction, and the error state.
 *
 * ibv_modify_qp accepts exactly the transitions and attribute masks the
 * kernel's qp_state_table accepts for RC (required attributes missing or
 * an attribute not allowed for the transition: EINVAL), and checks the
 * values the kernel and mlx5 check (port, P_Key index, MTU, rd_atomic
 * limits, sgid index; RoCE without a GRH: EINVAL).  iWARP QPs reach RTR
 * only through rdma_cm (librdmacm stand-in), as on real RNICs.
 *
 * A QP that enters ERR (a completion error, a fatal fault, or the user)
 * flushes every outstanding work request with IBV_WC_WR_FLUSH_ERR, the
 * first with the error that caused it; work requests posted in ERR are
 * flushed at once.  Moving to RESET discards everything without
 * completions and removes the QP's entries from its CQs.
 */
#include "emu.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum {
	M_STATE = IBV_QP_STATE,
	M_CUR = IBV_QP_CUR_STATE,
	M_ACCESS = IBV_QP_ACCESS_FLAGS,
	M_PKEY = IBV_QP_PKEY_INDEX,
	M_PORT = IBV_QP_PORT,
	M_AV = IBV_QP_AV,
	M_MTU = IBV_QP_PATH_MTU,
	M_TIMEOUT = IBV_QP_TIMEOUT,
	M_RETRY = IBV_QP_RETRY_CNT,
	M_RNR_RETRY = IBV_QP_RNR_RETRY,
	M_RQ_PSN = IBV_QP_RQ_PSN,
	M_RD_ATOMIC = IBV_QP_MAX_QP_RD_ATOMIC,
	M_ALT = IBV_QP_ALT_PATH,
	M_MIN_RNR = IBV_QP_MIN_RNR_TIMER,
	M_SQ_PSN = IBV_QP_SQ_PSN,
	M_DEST_RD = IBV_QP_MAX_DEST_RD_ATOMIC,
	M_MIG = IBV_QP_PATH_MIG_STATE,
	M_DEST_QPN = IBV_QP_DEST_QPN,
	M_SQD_NOTIFY = IBV_QP_EN_SQD_ASYNC_NOTIFY,
};

/* The kernel's qp_state_table, RC column. */
static const struct {
	bool ok;
	int req, opt;
} trans[IBV_QPS_ERR + 1][IBV_QPS_ERR + 1] = {
	[IBV_QPS_RESET] = {
		[IBV_QPS_RESET] = { true, 0, 0 },
		[IBV_QPS_INIT] = { true, M_PKEY | M_PORT | M_ACCESS, 0 },
	},
	[IBV_QPS_INIT] = {
		[IBV_QPS_RESET] = { true, 0, 0 },
		[IBV_QPS_ERR] = { true, 0, 0 },
		[IBV_QPS_INIT] = { true, 0, M_PKEY | M_PORT | M_ACCESS },
		[IBV_QPS_RTR] = { true,
				  M_AV | M_MTU | M_DEST_QPN | M_RQ_PSN |
					  M_DEST_RD | M_MIN_RNR,
				  M_ALT | M_ACCESS | M_PKEY },
	},
	[IBV_QPS_RTR] = {
		[IBV_QPS_RESET] = { true, 0, 0 },
		[IBV_QPS_ERR] = { true, 0, 0 },
		[IBV_QPS_RTS] = { true,
				  M_TIMEOUT | M_RETRY | M_RNR_RETRY | M_SQ_PSN |
					  M_RD_ATOMIC,
				  M_CUR | M_ALT | M_ACCESS | M_MIN_RNR | M_MIG },
	},
	[IBV_QPS_RTS] = {
		[IBV_QPS_RESET] = { true, 0, 0 },
		[IBV_QPS_ERR] = { true, 0, 0 },
		[IBV_QPS_RTS] = { true, 0,
				  M_CUR | M_ACCESS | M_ALT | M_MIG | M_MIN_RNR },
		[IBV_QPS_SQD] = { true, 0, M_SQD_NOTIFY },
	},
	[IBV_QPS_SQD] = {
		[IBV_QPS_RESET] = { true, 0, 0 },
		[IBV_QPS_ERR] = { true, 0, 0 },
		[IBV_QPS_RTS] = { true, 0,
				  M_CUR | M_ALT | M_ACCESS | M_MIN_RNR | M_MIG },
		[IBV_QPS_SQD] = { true, 0,
				  M_PKEY | M_PORT | M_AV | M_TIMEOUT | M_RETRY |
					  M_RNR_RETRY | M_RD_ATOMIC |
					  M_DEST_RD | M_CUR | M_ALT |
					  M_ACCESS | M_MIN_RNR | M_MIG },
	},
	[IBV_QPS_ERR] = {
		[IBV_QPS_RESET] = { true, 0, 0 },
		[IBV_QPS_ERR] = { true, 0, 0 },
	},
};

int64_t emu_qp_deadline_ns(struct emu_qp *qp)
{
	int64_t t;
	if (qp->timeout == 0) /* infinite in the spec; every wait here ends */
		return emu_host.retry_cap_ns;
	t = (int64_t)4096 << qp->timeout; /* 4.096 us * 2^timeout */
	t *= qp->retry_cnt + 1;
	if (t < emu_host.retry_floor_ns)
		t = emu_host.retry_floor_ns;
	if (t > emu_host.retry_cap_ns)
		t = emu_host.retry_cap_ns;
	return t;
}

struct ibv_qp *emu_create_qp_ex(struct ibv_context *context,
                                struct ibv_qp_init_attr_ex *a)
{
	const uint64_t ops_ok =
	        IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
	        IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
	        IBV_QP_EX_WITH_RDMA_READ;
	struct emu_cq *scq = (struct emu_cq *)a->send_cq;
	struct emu_cq *rcq = (struct emu_cq *)a->recv_cq;
	struct emu_qp *qp;
	struct ibv_cq *bad_cq = NULL;
	uint32_t idx;
	if (a->comp_mask &
	    ~(uint32_t)(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS |
	                IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(a->comp_mask & IBV_QP_INIT_ATTR_PD) || !a->pd || !scq || !rcq) {
		errno = EINVAL;
		return NULL;
	}
	if (a->qp_type != IBV_QPT_RC || a->srq ||
	    ((a->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	     a->create_flags)) {
		errno = EOPNOTSUPP; /* RC without SRQ is what is emulated */
		return NULL;
	}
	if (a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		uint64_t ops = a->send_ops_flags;
		if (emu_iwarp())
			ops &= ~(uint64_t)(IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
			                   IBV_QP_EX_WITH_SEND_WITH_IMM);
		if (ops & ~ops_ok || ops != a->send_ops_flags) {
			errno = EOPNOTSUPP;
			return NULL;
		}
	}
	if (a->cap.max_send_wr > EMU_MAX_QP_WR ||
	    a->cap.max_recv_wr > EMU_MAX_QP_WR ||
	    a->cap.max_send_sge > EMU_MAX_SGE ||
	    a->cap.max_recv_sge > EMU_MAX_SGE ||
	    a->cap.max_inline_data > EMU_MAX_INLINE) {
		errno = EINVAL;
		return NULL;
	}
	if (scq->cq.context != context)
		bad_cq = &scq->cq;
	if (rcq->cq.context != context)
		bad_cq = &rcq->cq;
	if (bad_cq || a->pd->context != context) {
		errno = EINVAL;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	qp->ctx = emu_ctx(context);
	qp->max_send_wr = a->cap.max_send_wr;
	qp->max_recv_wr = a->cap.max_recv_wr;
	qp->max_send_sge = a->cap.max_send_sge ? a->cap.max_send_sge : 1;
	qp->max_recv_sge = a->cap.max_recv_sge ? a->cap.max_recv_sge : 1;
	qp->max_inline = a->cap.max_inline_data;
	qp->swqe_size = (sizeof(struct emu_swqe) +
	                 qp->max_send_sge * sizeof(struct ibv_sge) +
	                 (qp->max_send_sge + 1) * sizeof(struct iovec) +
	                 qp->max_inline + 15) &
	                ~(size_t)15;
	qp->rwqe_size = (sizeof(struct emu_rwqe) +
	                 qp->max_recv_sge * sizeof(struct ibv_sge) + 15) &
	                ~(size_t)15;
	qp->sq = calloc(qp->max_send_wr ? qp->max_send_wr : 1, qp->swqe_size);
	qp->rq = calloc(qp->max_recv_wr ? qp->max_recv_wr : 1, qp->rwqe_size);
	if (!qp->sq || !qp->rq) {
		free(qp->sq);
		free(qp->rq);
		free(qp);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&qp->lock, NULL);
	atomic_store(&qp->refs, 1);
	qp->sq_sig_all = a->sq_sig_all != 0;
	qp->port_num = 1;
	qp->path_mtu = IBV_MTU_1024;
	qp->held_tail = &qp->held;
	qp->next_seq = 1;
	qp->qpx.qp_base.context = context;
	qp->qpx.qp_base.qp_context = a->qp_context;
	qp->qpx.qp_base.pd = a->pd;
	qp->qpx.qp_base.send_cq = a->send_cq;
	qp->qpx.qp_base.recv_cq = a->recv_cq;
	qp->qpx.qp_base.state = IBV_QPS_RESET;
	qp->qpx.qp_base.qp_type = IBV_QPT_RC;
	pthread_mutex_init(&qp->qpx.qp_base.mutex, NULL);
	pthread_cond_init(&qp->qpx.qp_base.cond, NULL);
	if (a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		qp->ex = true;
		emu_qp_ex_init(qp, a->send_ops_flags);
	}

	pthread_mutex_lock(&emu_eng.lock);
	for (idx = 1; idx < EMU_MAX_QP; idx++) {
		uint32_t i = (emu_eng.qp_next + idx) % EMU_MAX_QP;
		if (i && !emu_eng.qp[i]) {
			idx = i;
			break;
		}
	}
	if (idx >= EMU_MAX_QP || emu_eng.qp[idx]) {
		pthread_mutex_unlock(&emu_eng.lock);
		free(qp->sq);
		free(qp->rq);
		free(qp);
		errno = ENOMEM;
		return NULL;
	}
	emu_eng.qp_next = idx;
	if (idx > emu_eng.qp_hi)
		emu_eng.qp_hi = idx;
	emu_eng.qp[idx] = qp;
	qp->index = idx;
	qp->qpx.qp_base.qp_num = emu_eng.slot << EMU_QP_IDX_BITS | idx;
	qp->qpx.qp_base.handle = idx;
	pthread_mutex_unlock(&emu_eng.lock);
	atomic_fetch_add(&((struct emu_pd *)a->pd)->users, 1);
	atomic_fetch_add(&scq->users, 1);
	atomic_fetch_add(&rcq->users, 1);
	return &qp->qpx.qp_base;
}

EMU_VISIBLE struct ibv_qp *ibv_create_qp(struct ibv_pd *pd,
                                         struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex a;
	struct ibv_qp *qp;
	memset(&a, 0, sizeof(a));
	memcpy(&a, attr, sizeof(*attr));
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	a.pd = pd;
	qp = emu_create_qp_ex(pd->context, &a);
	if (qp)
		attr->cap = a.cap; /* exactly what was asked: no rounding */
	return qp;
}

EMU_VISIBLE struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	return emu_qp(qp)->ex ? &emu_qp(qp)->qpx : NULL;
}

static void push_flush(struct emu_cq *cq, struct emu_qp *qp, uint64_t wr_id,
                       enum ibv_wc_status st, bool is_send, uint32_t idx,
                       int opcode, uint32_t len)
{
	struct emu_cqe e = { .qp = qp, .sq_idx = idx, .is_send = is_send };
	e.wc.wr_id = wr_id;
	e.wc.status = st;
	e.wc.opcode = opcode;
	e.wc.byte_len = len;
	e.wc.qp_num = qp->qpx.qp_base.qp_num;
	emu_cq_push(cq, &e);
}

/* Send completion of WQE w (qp->lock held).  Unsignaled successes produce
 * nothing; errors always do. */
void emu_send_complete(struct emu_qp *qp, struct emu_swqe *w,
                       enum ibv_wc_status st)
{
	static const int wc_op[] = {
		[IBV_WR_RDMA_WRITE] = IBV_WC_RDMA_WRITE,
		[IBV_WR_RDMA_WRITE_WITH_IMM] = IBV_WC_RDMA_WRITE,
		[IBV_WR_SEND] = IBV_WC_SEND,
		[IBV_WR_SEND_WITH_IMM] = IBV_WC_SEND,
		[IBV_WR_RDMA_READ] = IBV_WC_RDMA_READ,
	};
	uint32_t idx = qp->sq_acked;
	w->state = W_DONE;
	w->status = (uint8_t)st;
	qp->sq_acked++;
	if (st == IBV_WC_SUCCESS && !(w->flags & IBV_SEND_SIGNALED) &&
	    !qp->sq_sig_all)
		return;
	push_flush((struct emu_cq *)qp->qpx.qp_base.send_cq, qp, w->wr_id, st,
	           true, idx, w->opcode < 5 ? wc_op[w->opcode] : IBV_WC_SEND,
	           w->len);
}

/* Flush everything outstanding (qp->lock held; state is ERR). */
void emu_qp_flush(struct emu_qp *qp)
{
	struct emu_cq *rcq = (struct emu_cq *)qp->qpx.qp_base.recv_cq;
	if (qp->conn)
		emu_conn_detach_qp(qp->conn, qp);
	while (qp->sq_acked != qp->sq_head)
		emu_send_complete(qp, emu_swqe_at(qp, qp->sq_acked),
		                  IBV_WC_WR_FLUSH_ERR);
	qp->sq_tx = qp->sq_head;
	emu_rx_drop_held(qp);
	while (qp->rq_next != qp->rq_head) {
		struct emu_rwqe *r = emu_rwqe_at(qp, qp->rq_next);
		push_flush(rcq, qp, r->wr_id, IBV_WC_WR_FLUSH_ERR, false, 0,
		           IBV_WC_RECV, 0);
		qp->rq_next++;
	}
}

void emu_qp_to_error(struct emu_qp *qp, enum ibv_wc_status first)
{
	qp->qpx.qp_base.state = IBV_QPS_ERR;
	if (first != IBV_WC_WR_FLUSH_ERR && qp->sq_acked != qp->sq_head)
		emu_send_complete(qp, emu_swqe_at(qp, qp->sq_acked), first);
	emu_qp_flush(qp);
}

static void qp_reset(struct emu_qp *qp)
{
	if (qp->conn)
		emu_conn_detach_qp(qp->conn, qp);
	emu_engine_forget_qp(qp); /* drops held messages, receive sinks */
	emu_cq_purge_qp((struct emu_cq *)qp->qpx.qp_base.send_cq, qp);
	emu_cq_purge_qp((struct emu_cq *)qp->qpx.qp_base.recv_cq, qp);
	qp->sq_head = qp->sq_tx = qp->sq_acked = 0;
	atomic_store(&qp->sq_tail, 0);
	qp->rq_head = qp->rq_next = 0;
	atomic_store(&qp->rq_tail, 0);
	qp->next_seq = 1;
	qp->rx_seq = 0;
	qp->path_dead = qp->rnr_wait = false;
	qp->retx_at = 0;
	qp->conn = NULL;
}

static int check_attrs(struct emu_qp *qp, struct ibv_qp_attr *a, int mask,
                       enum ibv_qp_state to)
{
	struct emu_dev *d = qp->ctx->dev;
	const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
	                IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	if ((mask & M_PORT) && a->port_num != 1)
		return EINVAL;
	if ((mask & M_PKEY) && a->pkey_index != 0)
		return EINVAL;
	if ((mask & M_ACCESS) && (a->qp_access_flags & ~acc))
		return EINVAL;
	if ((mask & M_MTU) &&
	    (a->path_mtu < IBV_MTU_256 || a->path_mtu > IBV_MTU_4096))
		return EINVAL;
	if ((mask & M_DEST_RD) && a->max_dest_rd_atomic > EMU_MAX_RD_ATOM)
		return EINVAL;
	if ((mask & M_RD_ATOMIC) && a->max_rd_atomic > EMU_MAX_RD_ATOM)
		return EINVAL;
	if ((mask & M_TIMEOUT) && a->timeout > 31)
		return EINVAL;
	if ((mask & M_RETRY) && a->retry_cnt > 7)
		return EINVAL;
	if ((mask & M_RNR_RETRY) && a->rnr_retry > 7)
		return EINVAL;
	if ((mask & M_MIN_RNR) && a->min_rnr_timer > 31)
		return EINVAL;
	if ((mask & M_DEST_QPN) && a->dest_qp_num > 0xffffff)
		return EINVAL;
	if (mask & M_AV) {
		if (a->ah_attr.port_num != 1)
			return EINVAL;
		if (emu_host.link == EMU_LINK_ROCE && !a->ah_attr.is_global)
			return EINVAL; /* RoCE needs a GRH */
		if (a->ah_attr.is_global &&
		    a->ah_attr.grh.sgid_index >= d->port.ngid)
			return EINVAL;
	}
	if (to == IBV_QPS_RTR && emu_iwarp() && !qp->cm_attached) {
		static _Atomic bool said;
		if (!atomic_exchange(&said, true))
			emu_log("iWARP: a QP reaches RTR only through rdma_cm "
			        "(ibv_modify_qp to RTR refused)");
		return EINVAL;
	}
	return 0;
}

static void apply_attrs(struct emu_qp *qp, struct ibv_qp_attr *a, int mask)
{
	if (mask & M_PORT)
		qp->port_num = a->port_num;
	if (mask & M_PKEY)
		qp->pkey_index = a->pkey_index;
	if (mask & M_ACCESS)
		qp->access = (int)a->qp_access_flags;
	if (mask & M_MTU)
		qp->path_mtu = a->path_mtu;
	if (mask & M_DEST_RD)
		qp->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & M_RD_ATOMIC)
		qp->max_rd_atomic = a->max_rd_atomic;
	if (mask & M_TIMEOUT)
		qp->timeout = a->timeout;
	if (mask & M_RETRY)
		qp->retry_cnt = a->retry_cnt;
	if (mask & M_RNR_RETRY)
		qp->rnr_retry = a->rnr_retry;
	if (mask & M_MIN_RNR)
		qp->min_rnr_timer = a->min_rnr_timer;
	if (mask & M_DEST_QPN)
		qp->dest_qpn = a->dest_qp_num;
	if (mask & M_RQ_PSN)
		qp->rq_psn = qp->rx_psn = a->rq_psn & 0xffffff;
	if (mask & M_SQ_PSN)
		qp->sq_psn = qp->tx_psn = a->sq_psn & 0xffffff;
	if (mask & M_AV)
		qp->ah = a->ah_attr;
}

int emu_qp_modify(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask)
{
	struct emu_qp *qp = emu_qp(ibqp);
	enum ibv_qp_state cur, to;
	int rc;
	pthread_mutex_lock(&emu_eng.lock);
	pthread_mutex_lock(&qp->lock);
	cur = ibqp->state;
	to = (mask & M_STATE) ? attr->qp_state : cur;
	if ((unsigned)to > IBV_QPS_ERR || to == IBV_QPS_SQE ||
	    !trans[cur][to].ok ||
	    (mask & trans[cur][to].req) != trans[cur][to].req ||
	    (mask & ~(trans[cur][to].req | trans[cur][to].opt | M_STATE))) {
		rc = EINVAL;
		goto out;
	}
	rc = check_attrs(qp, attr, mask, to);
	if (rc)
		goto out;
	apply_attrs(qp, attr, mask);
	if (to == IBV_QPS_RESET && cur != IBV_QPS_RESET)
		qp_reset(qp);
	ibqp->state = to;
	if (to == IBV_QPS_RTR && cur == IBV_QPS_INIT) {
		qp->rx_seq = 0;
		emu_qp_path(qp);
	}
	if (to == IBV_QPS_RTS && cur != IBV_QPS_RTS) {
		qp->last_progress_ns = emu_now_ns();
		emu_qp_transmit(qp);
	}
	if (to == IBV_QPS_ERR && cur != IBV_QPS_ERR)
		emu_qp_flush(qp);
out:
	pthread_mutex_unlock(&qp->lock);
	pthread_mutex_unlock(&emu_eng.lock);
	return rc;
}

EMU_VISIBLE int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
                              int attr_mask)
{
	return emu_qp_modify(qp, attr, attr_mask);
}

EMU_VISIBLE int ibv_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *a,
                             int attr_mask, struct ibv_qp_init_attr *init)
{
	struct emu_qp *qp = emu_qp(ibqp);
	(void)attr_mask; /* everything is cheap to fill */
	memset(a, 0, sizeof(*a));
	memset(init, 0, sizeof(*init));
	pthread_mutex_lock(&qp->lock);
	a->qp_state = a->cur_qp_state = ibqp->state;
	a->path_mtu = qp->path_mtu;
	a->qp_access_flags = (unsigned)qp->access;
	a->pkey_index = qp->pkey_index;
	a->port_num = qp->port_num;
	a->ah_attr = qp->ah;
	a->dest_qp_num = qp->dest_qpn;
	a->rq_psn = qp->rq_psn;
	a->sq_psn = qp->sq_psn;
	a->timeout = qp->timeout;
	a->retry_cnt = qp->retry_cnt;
	a->rnr_retry = qp->rnr_retry;
	a->min_rnr_timer = qp->min_rnr_timer;
	a->max_rd_atomic = qp->max_rd_atomic;
	a->max_dest_rd_atomic = qp->max_dest_rd_atomic;
	a->cap.max_send_wr = init->cap.max_send_wr = qp->max_send_wr;
	a->cap.max_recv_wr = init->cap.max_recv_wr = qp->max_recv_wr;
	a->cap.max_send_sge = init->cap.max_send_sge = qp->max_send_sge;
	a->cap.max_recv_sge = init->cap.max_recv_sge = qp->max_recv_sge;
	a->cap.max_inline_data = init->cap.max_inline_data = qp->max_inline;
	init->qp_context = ibqp->qp_context;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->qp_type = IBV_QPT_RC;
	init->sq_sig_all = qp->sq_sig_all;
	pthread_mutex_unlock(&qp->lock);
	return 0;
}

void emu_qp_put(struct emu_qp *qp)
{
	if (atomic_fetch_sub(&qp->refs, 1) != 1)
		return;
	pthread_mutex_destroy(&qp->lock);
	free(qp->sq);
	free(qp->rq);
	free(qp);
}

EMU_VISIBLE int ibv_destroy_qp(struct ibv_qp *ibqp)
{
	struct emu_qp *qp = emu_qp(ibqp);
	pthread_mutex_lock(&emu_eng.lock);
	pthread_mutex_lock(&qp->lock);
	emu_eng.qp[qp->index] = NULL;
	qp->dead = true;
	qp_reset(qp);
	pthread_mutex_unlock(&qp->lock);
	pthread_mutex_unlock(&emu_eng.lock);
	atomic_fetch_sub(&((struct emu_pd *)ibqp->pd)->users, 1);
	atomic_fetch_sub(&((struct emu_cq *)ibqp->send_cq)->users, 1);
	atomic_fetch_sub(&((struct emu_cq *)ibqp->recv_cq)->users, 1);
	emu_qp_put(qp);
	return 0;
}

/* rdma_cm stand-in hook: this QP accepts a connection; on iWARP it is
 * MPA's responder, which must not send before the initiator has (post.c). */
EMU_VISIBLE void cbemu_cm_qp_responder(struct ibv_qp *ibqp)
{
	emu_qp(ibqp)->mpa_responder = emu_iwarp();
}

/* rdma_cm stand-in hook: this QP is connected by rdma_cm, which on iWARP is
 * the only way to RTR. */
EMU_VISIBLE void cbemu_cm_qp_attach(struct ibv_qp *ibqp)
{
	emu_qp(ibqp)->cm_attached = true;
}
