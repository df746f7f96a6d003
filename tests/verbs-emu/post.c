/* SPDX-License-Identifier: MIT */
/*
 * tests/verbs-emu/post.c - posting work: ibv_post_send, ibv_post_recv and
 * the ibv_wr_* builders of struct ibv_qp_ex, and turning send WQEs into
 * messages on the QP's connection.
 *
 * What fails at post time, and how, follows mlx5: a QP in RESET, INIT or
 * RTR refuses sends (EINVAL; receives are accepted from INIT), too many
 * SGEs or inline bytes or a full queue is ENOMEM, an opcode or flag the
 * device does not have is EINVAL (atomics; immediate data on iWARP).  What
 * hardware finds only when it executes the WQE is a completion error: a
 * local key that does not cover the buffer (IBV_WC_LOC_PROT_ERR), a message
 * over max_msg_sz (IBV_WC_LOC_LEN_ERR).
 *
 * A WQE's header and iovec live in its send-queue slot, so transmitting
 * allocates nothing; the payload is gathered from the application's
 * registered memory by writev() when the connection drains.
 */
#include "emu.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static struct iovec *swqe_iov(struct emu_qp *qp, struct emu_swqe *w)
{
	return (struct iovec *)(emu_swqe_sge(w) + qp->max_send_sge);
}

static uint8_t *swqe_inl(struct emu_qp *qp, struct emu_swqe *w)
{
	return (uint8_t *)(swqe_iov(qp, w) + qp->max_send_sge + 1);
}

/* Validate the gather list against the MR table (eng.keys held). */
static enum ibv_wc_status gather(struct emu_qp *qp, struct emu_swqe *w,
                                 struct iovec *iov, int *n)
{
	struct ibv_sge *sge = emu_swqe_sge(w);
	uint64_t total = 0;
	*n = 0;
	if (w->flags & IBV_SEND_INLINE) {
		iov[0].iov_base = swqe_inl(qp, w);
		iov[0].iov_len = w->len;
		*n = w->len ? 1 : 0;
		return IBV_WC_SUCCESS;
	}
	for (int i = 0; i < w->nsge; i++) {
		struct emu_mr *mr;
		uintptr_t a = (uintptr_t)sge[i].addr;
		if (!sge[i].length)
			continue;
		mr = emu_mr_lookup(sge[i].lkey);
		if (!mr || mr->mr.pd != qp->qpx.qp_base.pd ||
		    a < (uintptr_t)mr->mr.addr ||
		    a + sge[i].length > (uintptr_t)mr->mr.addr + mr->mr.length)
			return IBV_WC_LOC_PROT_ERR;
		/* A READ lands in these buffers: they must be writable (and
		 * on iWARP remotely writable, the RNIC's quirk). */
		if (w->opcode == IBV_WR_RDMA_READ &&
		    (!(mr->access & IBV_ACCESS_LOCAL_WRITE) ||
		     (emu_iwarp() && !(mr->access & IBV_ACCESS_REMOTE_WRITE))))
			return IBV_WC_LOC_PROT_ERR;
		iov[*n].iov_base = (void *)a;
		iov[*n].iov_len = sge[i].length;
		(*n)++;
		total += sge[i].length;
	}
	if (total > EMU_MAX_MSG)
		return IBV_WC_LOC_LEN_ERR;
	w->len = (uint32_t)total;
	return IBV_WC_SUCCESS;
}

static uint8_t wire_type(int opcode)
{
	switch (opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return WT_SEND;
	case IBV_WR_RDMA_READ:
		return WT_READ_REQ;
	default:
		return WT_WRITE;
	}
}

/* Queue what was posted and not sent yet on the QP's connection
 * (qp->lock held); returns the connection to flush, if any: the posting
 * paths flush it after dropping the QP's lock, so the progress thread,
 * acknowledging on that QP, does not wait for a sendmsg(). */
static struct emu_conn *transmit(struct emu_qp *qp)
{
	struct emu_dev *d = qp->ctx->dev;
	bool sent = false;
	if (qp->qpx.qp_base.state != IBV_QPS_RTS || qp->sq_tx == qp->sq_head)
		return NULL;
	if (!qp->conn || !atomic_load_explicit(&d->up, memory_order_relaxed) ||
	    qp->retx_at)
		return NULL; /* the retry timer decides */
	pthread_rwlock_rdlock(&emu_eng.keys);
	while (qp->sq_tx != qp->sq_head) {
		struct emu_swqe *w = emu_swqe_at(qp, qp->sq_tx);
		struct iovec *iov = swqe_iov(qp, w);
		enum ibv_wc_status st;
		uint32_t payload;
		int n;
		w->hdr.rkey = w->rkey;
		if (qp->mpa_responder && !atomic_load(&qp->mpa_heard)) {
			/* as siw: the initiator reads the message with the
			 * MPA reply, fails the connection (EPROTO) and resets
			 */
			emu_log("iWARP: QP %u accepted through rdma_cm sent "
			        "before the initiator had: MPA (RFC 5044) has "
			        "the initiator send first; the connection "
			        "fails",
			        qp->qpx.qp_base.qp_num);
			pthread_rwlock_unlock(&emu_eng.keys);
			emu_async_event(qp->ctx, IBV_EVENT_QP_FATAL, &qp->qpx);
			emu_qp_to_error(qp, IBV_WC_WR_FLUSH_ERR);
			return NULL;
		}
		if (w->state == W_POSTED && emu_fault_on_message(qp, w) &&
		    (qp->qpx.qp_base.state != IBV_QPS_RTS ||
		     !atomic_load(&d->up)))
			break; /* the fault killed the QP or the port */
		st = gather(qp, w, iov + 1, &n);
		if (st == IBV_WC_SUCCESS && w->opcode == IBV_WR_RDMA_READ &&
		    qp->max_rd_atomic == 0)
			st = IBV_WC_LOC_QP_OP_ERR;
		if (st != IBV_WC_SUCCESS) {
			pthread_rwlock_unlock(&emu_eng.keys);
			qp->sq_tx++;
			emu_qp_to_error(qp, st);
			return NULL;
		}
		if (w->state == W_POSTED) /* a retransmission keeps its seq */
			w->seq = qp->next_seq++;
		w->hdr.type = wire_type(w->opcode);
		w->hdr.flags =
		        (uint8_t)((w->opcode == IBV_WR_SEND_WITH_IMM ||
		                                   w->opcode ==
		                                           IBV_WR_RDMA_WRITE_WITH_IMM
		                           ? WF_IMM
		                           : 0) |
		                  (w->flags & IBV_SEND_SOLICITED ? WF_SOLICITED
		                                                 : 0));
		w->hdr.mtu = (uint8_t)qp->path_mtu;
		w->hdr.dst_qpn = qp->dest_qpn;
		w->hdr.src_qpn = qp->qpx.qp_base.qp_num;
		w->hdr.psn = qp->tx_psn;
		qp->tx_psn = (qp->tx_psn + emu_npkts(w->len, qp->path_mtu)) &
		             0xffffff;
		w->hdr.len = w->len;
		w->hdr.imm = w->imm;
		w->hdr.rnr_retry = qp->rnr_retry;
		w->hdr.opcode = w->opcode;
		w->hdr.seq = w->seq;
		w->hdr.raddr = w->raddr;
		payload = w->hdr.type == WT_READ_REQ ? 0 : w->len;
		iov[0].iov_base = &w->hdr;
		iov[0].iov_len = sizeof(w->hdr);
		w->tx.iov = iov;
		w->tx.iovcnt = w->hdr.type == WT_READ_REQ ? 1 : 1 + n;
		w->niov = n;
		w->tx.total = sizeof(w->hdr) + payload;
		w->tx.done = 0;
		w->tx.qp = qp;
		w->tx.owned = NULL;
		w->hdr.epoch = qp->tx_epoch;
		if (w->state ==
		    W_POSTED) /* the retry deadline runs from here */
			w->tx_ns = emu_now_ns();
		w->state = W_SENT;
		emu_counter_add(d->index, EMU_C_XMIT_DATA,
		                emu_wire_words(payload, qp->path_mtu));
		emu_counter_add(d->index, EMU_C_XMIT_PKTS,
		                emu_npkts(payload, qp->path_mtu));
		emu_conn_enqueue(qp->conn, &w->tx);
		qp->sq_tx++;
		sent = true;
	}
	pthread_rwlock_unlock(&emu_eng.keys);
	return sent ? qp->conn : NULL;
}

int emu_qp_transmit(struct emu_qp *qp)
{
	struct emu_conn *c = transmit(qp);
	if (c)
		emu_conn_flush(c);
	return 0;
}

static int check_opcode(struct emu_qp *qp, int op, unsigned flags)
{
	const unsigned known = IBV_SEND_FENCE | IBV_SEND_SIGNALED |
	                       IBV_SEND_SOLICITED | IBV_SEND_INLINE;
	(void)qp;
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_RDMA_WRITE:
		break;
	case IBV_WR_RDMA_READ:
		if (flags & IBV_SEND_INLINE)
			return EINVAL;
		break;
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		if (emu_iwarp())
			return EINVAL; /* RNICs carry no immediate data */
		break;
	default:
		return EINVAL; /* atomics, MW, invalidate: not on this device */
	}
	return flags & ~known ? EINVAL : 0;
}

/* A new WQE at the head of the send queue, or NULL if it is full. */
static struct emu_swqe *sq_new(struct emu_qp *qp)
{
	struct emu_swqe *w;
	if (qp->sq_head - atomic_load(&qp->sq_tail) >= qp->max_send_wr)
		return NULL;
	w = emu_swqe_at(qp, qp->sq_head);
	memset(w, 0, sizeof(*w));
	w->post_ns = emu_now_ns();
	return w;
}

/* After new WQEs: flushed at once in ERR, queued in RTS (the caller
 * flushes the connection returned once it has dropped the QP's lock). */
static struct emu_conn *sq_posted(struct emu_qp *qp)
{
	if (qp->qpx.qp_base.state == IBV_QPS_ERR) {
		qp->sq_tx = qp->sq_head;
		while (qp->sq_acked != qp->sq_head)
			emu_send_complete(qp, emu_swqe_at(qp, qp->sq_acked),
			                  IBV_WC_WR_FLUSH_ERR);
		return NULL;
	}
	return transmit(qp);
}

static bool can_send(struct emu_qp *qp)
{
	enum ibv_qp_state s = qp->qpx.qp_base.state;
	return s == IBV_QPS_RTS || s == IBV_QPS_SQD || s == IBV_QPS_ERR;
}

int emu_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
                  struct ibv_send_wr **bad)
{
	struct emu_qp *qp = emu_qp(ibqp);
	struct emu_conn *c;
	int rc = 0;
	pthread_mutex_lock(&qp->lock);
	if (!can_send(qp)) {
		*bad = wr;
		pthread_mutex_unlock(&qp->lock);
		return EINVAL;
	}
	for (; wr; wr = wr->next) {
		struct emu_swqe *w;
		uint32_t inl = 0;
		rc = check_opcode(qp, wr->opcode, wr->send_flags);
		if (!rc && (wr->num_sge < 0 ||
		            (uint32_t)wr->num_sge > qp->max_send_sge))
			rc = ENOMEM;
		if (!rc && (wr->send_flags & IBV_SEND_INLINE)) {
			for (int i = 0; i < wr->num_sge; i++)
				inl += wr->sg_list[i].length;
			if (inl > qp->max_inline)
				rc = ENOMEM;
		}
		if (!rc && !(w = sq_new(qp)))
			rc = ENOMEM;
		if (rc) {
			*bad = wr;
			break;
		}
		w->wr_id = wr->wr_id;
		w->opcode = (uint8_t)wr->opcode;
		w->flags = wr->send_flags;
		w->imm = wr->imm_data;
		w->raddr = wr->wr.rdma.remote_addr;
		w->rkey = wr->wr.rdma.rkey;
		w->nsge = wr->num_sge;
		if (wr->send_flags & IBV_SEND_INLINE) {
			uint8_t *p = swqe_inl(qp, w);
			for (int i = 0; i < wr->num_sge; i++) {
				memcpy(p,
				       (void *)(uintptr_t)wr->sg_list[i].addr,
				       wr->sg_list[i].length);
				p += wr->sg_list[i].length;
			}
			w->len = inl;
		} else if (wr->num_sge) {
			memcpy(emu_swqe_sge(w), wr->sg_list,
			       sizeof(struct ibv_sge) * (size_t)wr->num_sge);
		}
		qp->sq_head++;
	}
	c = sq_posted(qp);
	pthread_mutex_unlock(&qp->lock);
	if (c)
		emu_conn_flush(c);
	return rc;
}

int emu_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
                  struct ibv_recv_wr **bad)
{
	struct emu_qp *qp = emu_qp(ibqp);
	int rc = 0;
	bool wake;
	pthread_mutex_lock(&qp->lock);
	if (ibqp->state == IBV_QPS_RESET) {
		*bad = wr;
		pthread_mutex_unlock(&qp->lock);
		return EINVAL;
	}
	for (; wr; wr = wr->next) {
		struct emu_rwqe *r;
		if (wr->num_sge < 0 ||
		    (uint32_t)wr->num_sge > qp->max_recv_sge ||
		    qp->rq_head - atomic_load(&qp->rq_tail) >=
		            qp->max_recv_wr) {
			*bad = wr;
			rc = ENOMEM;
			break;
		}
		r = emu_rwqe_at(qp, qp->rq_head);
		r->wr_id = wr->wr_id;
		r->nsge = wr->num_sge;
		memcpy(emu_rwqe_sge(r), wr->sg_list,
		       sizeof(struct ibv_sge) * (size_t)wr->num_sge);
		qp->rq_head++;
	}
	if (ibqp->state == IBV_QPS_ERR)
		emu_qp_flush(qp);
	wake = qp->held != NULL;
	pthread_mutex_unlock(&qp->lock);
	if (wake) { /* a message waits for this receive (RNR) */
		atomic_store(&emu_eng.need_scan, true);
		emu_engine_wake();
	}
	return rc;
}

/* ---- struct ibv_qp_ex: ibv_wr_start ... ibv_wr_complete ---- */

static struct emu_qp *X(struct ibv_qp_ex *q)
{
	return (struct emu_qp *)q;
}

static struct emu_swqe *wr_cur(struct emu_qp *qp)
{
	return qp->sq_head == qp->wr_first ? NULL
	                                   : emu_swqe_at(qp, qp->sq_head - 1);
}

static void wr_start(struct ibv_qp_ex *q)
{
	struct emu_qp *qp = X(q);
	pthread_mutex_lock(&qp->lock);
	qp->wr_open = true;
	qp->wr_err = 0;
	qp->wr_first = qp->sq_head;
}

static void wr_new(struct ibv_qp_ex *q, int op, uint32_t rkey, uint64_t raddr,
                   __be32 imm)
{
	struct emu_qp *qp = X(q);
	struct emu_swqe *w;
	if (qp->wr_err)
		return;
	qp->wr_err = check_opcode(qp, op, q->wr_flags & ~IBV_SEND_INLINE);
	if (qp->wr_err)
		return;
	w = sq_new(qp);
	if (!w) {
		qp->wr_err = ENOMEM;
		return;
	}
	w->wr_id = q->wr_id;
	w->flags = q->wr_flags;
	w->opcode = (uint8_t)op;
	w->rkey = rkey;
	w->raddr = raddr;
	w->imm = imm;
	qp->sq_head++;
}

static void wr_write(struct ibv_qp_ex *q, uint32_t rkey, uint64_t raddr)
{
	wr_new(q, IBV_WR_RDMA_WRITE, rkey, raddr, 0);
}

static void wr_write_imm(struct ibv_qp_ex *q, uint32_t rkey, uint64_t raddr,
                         __be32 imm)
{
	wr_new(q, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, raddr, imm);
}

static void wr_read(struct ibv_qp_ex *q, uint32_t rkey, uint64_t raddr)
{
	wr_new(q, IBV_WR_RDMA_READ, rkey, raddr, 0);
}

static void wr_send(struct ibv_qp_ex *q)
{
	wr_new(q, IBV_WR_SEND, 0, 0, 0);
}

static void wr_send_imm(struct ibv_qp_ex *q, __be32 imm)
{
	wr_new(q, IBV_WR_SEND_WITH_IMM, 0, 0, imm);
}

static void wr_set_sge_list(struct ibv_qp_ex *q, size_t n,
                            const struct ibv_sge *sg)
{
	struct emu_qp *qp = X(q);
	struct emu_swqe *w = wr_cur(qp);
	if (qp->wr_err || !w)
		return;
	if (n > qp->max_send_sge) {
		qp->wr_err = ENOMEM;
		return;
	}
	memcpy(emu_swqe_sge(w), sg, n * sizeof(*sg));
	w->nsge = (int)n;
	w->flags &= ~(unsigned)IBV_SEND_INLINE;
}

static void wr_set_sge(struct ibv_qp_ex *q, uint32_t lkey, uint64_t addr,
                       uint32_t len)
{
	struct ibv_sge s = { .addr = addr, .length = len, .lkey = lkey };
	wr_set_sge_list(q, 1, &s);
}

static void wr_set_inline_list(struct ibv_qp_ex *q, size_t n,
                               const struct ibv_data_buf *b)
{
	struct emu_qp *qp = X(q);
	struct emu_swqe *w = wr_cur(qp);
	size_t total = 0;
	uint8_t *p;
	if (qp->wr_err || !w)
		return;
	for (size_t i = 0; i < n; i++)
		total += b[i].length;
	if (total > qp->max_inline || w->opcode == IBV_WR_RDMA_READ) {
		qp->wr_err = w->opcode == IBV_WR_RDMA_READ ? EINVAL : ENOMEM;
		return;
	}
	p = swqe_inl(qp, w);
	for (size_t i = 0; i < n; i++) {
		memcpy(p, b[i].addr, b[i].length);
		p += b[i].length;
	}
	w->len = (uint32_t)total;
	w->nsge = 0;
	w->flags |= IBV_SEND_INLINE;
}

static void wr_set_inline(struct ibv_qp_ex *q, void *addr, size_t len)
{
	struct ibv_data_buf b = { .addr = addr, .length = len };
	wr_set_inline_list(q, 1, &b);
}

static int wr_complete(struct ibv_qp_ex *q)
{
	struct emu_qp *qp = X(q);
	struct emu_conn *c = NULL;
	int rc = qp->wr_err;
	if (!rc && !can_send(qp))
		rc = EINVAL;
	if (rc)
		qp->sq_head = qp->wr_first;
	else
		c = sq_posted(qp);
	qp->wr_open = false;
	pthread_mutex_unlock(&qp->lock);
	if (c)
		emu_conn_flush(c);
	return rc;
}

static void wr_abort(struct ibv_qp_ex *q)
{
	struct emu_qp *qp = X(q);
	qp->sq_head = qp->wr_first;
	qp->wr_open = false;
	pthread_mutex_unlock(&qp->lock);
}

#define U __attribute__((unused))
/* Builders for operations the QP was not created with: real providers
 * leave the pointer NULL (a crash); this says which call it was. */
#define UNASKED(fn, flag, ...)                                                 \
	static void fn(struct ibv_qp_ex *q, ##__VA_ARGS__)                     \
	{                                                                      \
		(void)q;                                                       \
		emu_log("ibv_" #fn " on a QP created without " #flag           \
		        " in send_ops_flags (a NULL pointer on real "          \
		        "providers)");                                         \
		abort();                                                       \
	}
UNASKED(wr_rdma_write, IBV_QP_EX_WITH_RDMA_WRITE, uint32_t a U, uint64_t b U)
UNASKED(wr_rdma_write_imm, IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM, uint32_t a U,
        uint64_t b U, __be32 c U)
UNASKED(wr_rdma_read, IBV_QP_EX_WITH_RDMA_READ, uint32_t a U, uint64_t b U)
UNASKED(wr_send_, IBV_QP_EX_WITH_SEND)
UNASKED(wr_send_imm_, IBV_QP_EX_WITH_SEND_WITH_IMM, __be32 a U)
UNASKED(wr_atomic_cmp_swp, atomics, uint32_t a U, uint64_t b U, uint64_t c U,
        uint64_t d U)
UNASKED(wr_atomic_fetch_add, atomics, uint32_t a U, uint64_t b U, uint64_t c U)

void emu_qp_ex_init(struct emu_qp *qp, uint64_t ops)
{
	struct ibv_qp_ex *q = &qp->qpx;
	q->wr_start = wr_start;
	q->wr_complete = wr_complete;
	q->wr_abort = wr_abort;
	q->wr_set_sge = wr_set_sge;
	q->wr_set_sge_list = wr_set_sge_list;
	q->wr_set_inline_data = wr_set_inline;
	q->wr_set_inline_data_list = wr_set_inline_list;
	q->wr_rdma_write =
	        ops & IBV_QP_EX_WITH_RDMA_WRITE ? wr_write : wr_rdma_write;
	q->wr_rdma_write_imm = ops & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM
	                               ? wr_write_imm
	                               : wr_rdma_write_imm;
	q->wr_rdma_read =
	        ops & IBV_QP_EX_WITH_RDMA_READ ? wr_read : wr_rdma_read;
	q->wr_send = ops & IBV_QP_EX_WITH_SEND ? wr_send : wr_send_;
	q->wr_send_imm =
	        ops & IBV_QP_EX_WITH_SEND_WITH_IMM ? wr_send_imm : wr_send_imm_;
	q->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	q->wr_atomic_fetch_add = wr_atomic_fetch_add;
}
