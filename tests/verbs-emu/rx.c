/* SPDX-License-Identifier: MIT */
/*
 * tests/verbs-emu/rx.c - the responder and the requester's side of the
 * wire: what a message does when it arrives, acknowledgements, and the
 * timers (retry, RNR, ports).
 *
 * A request (SEND, WRITE, READ) is checked as a responder checks it, in
 * this order: the QP exists and is in RTR/RTS, the message comes from the
 * QP it is connected to, its port is up (all three: no answer at all, the
 * requester times out with IBV_WC_RETRY_EXC_ERR), its PSN is the expected
 * one (likewise), it fits the link MTU (likewise) and the QP's path MTU
 * (remote invalid request); then the opcode is allowed by the QP's access
 * flags (invalid request), the rkey names a region of the QP's PD with the
 * right access covering the range (remote access error; the responder QP
 * goes to ERR with IBV_EVENT_QP_ACCESS_ERR), a receive is posted (receiver
 * not ready: the message waits, see below) and its buffers are valid
 * (local protection error at the receiver, remote operation error at the
 * requester) and large enough (local length error / remote invalid
 * request).  Responder errors put the responder QP in ERR too.
 *
 * Receiver not ready: the message is parked at the responder (and every
 * later message of that QP behind it, to keep RC order) and the requester
 * is told to wait; a receive posted in time delivers it, else after
 * (rnr_retry + 1) RNR timer periods the requester gets
 * IBV_WC_RNR_RETRY_EXC_ERR (rnr_retry 7 waits for ever, as on hardware).
 *
 * A requester completes a send when the responder acknowledges it (data
 * placed, receive completed); acks are cumulative and sent once per batch
 * read.  Its retry timer: the oldest unacknowledged request fails with
 * IBV_WC_RETRY_EXC_ERR when nothing has come back on its path for
 * emu_qp_deadline_ns() (4.096 us * 2^timeout * (retry_cnt + 1), kept
 * within COLLBENCH_EMU_RETRY_FLOOR_MS and _CAP_MS).
 */
#include "wire.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct emu_qp *emu_qp_lookup(uint32_t qpn)
{
	struct emu_qp *qp;
	if ((qpn >> EMU_QP_IDX_BITS) != emu_eng.slot)
		return NULL;
	qp = emu_eng.qp[qpn & (EMU_MAX_QP - 1)];
	return qp && !qp->dead && qp->qpx.qp_base.qp_num == qpn ? qp : NULL;
}

void emu_rx_ack(struct emu_conn *c, uint8_t type, uint8_t nak, uint32_t qpn,
                uint32_t src, uint64_t seq, uint8_t epoch)
{
	struct ack_rec *a;
	if (c->dead)
		return;
	if (type == WT_ACK && c->nacks) {
		a = &c->acks[c->nacks - 1];
		if (a->type == WT_ACK && a->qpn == qpn && a->src == src) {
			a->seq = seq;
			return;
		}
	}
	if (c->nacks == c->acks_cap) {
		int cap = c->acks_cap ? 2 * c->acks_cap : 16;
		struct ack_rec *t = realloc(c->acks, (size_t)cap * sizeof(*t));
		if (!t)
			return;
		c->acks = t;
		c->acks_cap = cap;
	}
	c->acks[c->nacks++] = (struct ack_rec){
		.qpn = qpn,
		.src = src,
		.seq = seq,
		.type = type,
		.nak = nak,
		.epoch = epoch,
	};
}

void emu_rx_send_acks(struct emu_conn *c)
{
	int64_t now = emu_now_ns();
	struct wire_hdr *h;
	int n = c->nacks;
	if (!n && !(c->got_payload && now - c->last_tx_ctl_ns > 20000000))
		return;
	if (!n)
		n = 1; /* a keep-alive: bytes are arriving, the path works */
	h = calloc((size_t)n, sizeof(*h));
	if (!h)
		return;
	for (int i = 0; i < c->nacks; i++) {
		h[i].type = c->acks[i].type;
		h[i].nak = c->acks[i].nak;
		h[i].dst_qpn = c->acks[i].qpn;
		h[i].src_qpn = c->acks[i].src;
		h[i].seq = c->acks[i].seq;
		h[i].epoch = c->acks[i].epoch;
	}
	if (!c->nacks)
		h[0].type = WT_PROGRESS;
	c->nacks = 0;
	c->got_payload = false;
	c->last_tx_ctl_ns = now;
	emu_conn_send_owned(c, h, (size_t)n * sizeof(*h));
}

/* ---- the responder ---- */

static void responder_error(struct emu_qp *qp, enum ibv_wc_status rx_st,
                            bool access_event)
{
	struct emu_cq *rcq = (struct emu_cq *)qp->qpx.qp_base.recv_cq;
	if (rx_st != IBV_WC_SUCCESS && qp->rq_next != qp->rq_head) {
		struct emu_rwqe *r = emu_rwqe_at(qp, qp->rq_next);
		struct emu_cqe e = { .qp = qp };
		e.wc.wr_id = r->wr_id;
		e.wc.status = rx_st;
		e.wc.opcode = IBV_WC_RECV;
		e.wc.qp_num = qp->qpx.qp_base.qp_num;
		qp->rq_next++;
		emu_cq_push(rcq, &e);
	}
	if (access_event)
		emu_async_event(qp->ctx, IBV_EVENT_QP_ACCESS_ERR, &qp->qpx);
	emu_qp_to_error(qp, IBV_WC_WR_FLUSH_ERR);
}

static bool mr_covers(struct emu_mr *mr, struct emu_qp *qp, uint64_t raddr,
                      uint64_t len, int need)
{
	uint64_t off;
	if (!mr || mr->pd != (struct emu_pd *)qp->qpx.qp_base.pd ||
	    !(mr->access & need) || raddr < mr->iova)
		return false;
	off = raddr - mr->iova;
	return off <= mr->mr.length && len <= mr->mr.length - off;
}

void emu_rx_plan(struct emu_qp *qp, const struct wire_hdr *h, struct plan *p,
                 bool parked)
{
	struct emu_dev *d = qp->ctx->dev;
	enum ibv_qp_state s = qp->qpx.qp_base.state;
	uint32_t mtu_b = (uint32_t)emu_ibv_mtu_bytes(h->mtu);
	uint32_t first = h->len < mtu_b ? h->len : mtu_b;
	struct emu_mr *mr;
	p->v = V_OK;
	p->niov = p->nmr = 0;
	if ((s != IBV_QPS_RTR && s != IBV_QPS_RTS && s != IBV_QPS_SQD) ||
	    h->src_qpn != qp->dest_qpn || !atomic_load(&d->up)) {
		p->v = V_DROP;
		return;
	}
	if (!parked && qp->held) {
		p->v = V_RNR; /* behind a parked message: keep the order */
		return;
	}
	if (h->psn != qp->rx_psn) {
		uint32_t behind = (qp->rx_psn - h->psn) & 0xffffff;
		if (behind && behind < (1u << 23)) {
			p->v = V_DUP; /* a retransmission of something done */
			return;
		}
		emu_counter_add(d->index, EMU_C_OUT_OF_SEQUENCE, 1);
		p->v = V_DROP;
		return;
	}
	if (mtu_b > (uint32_t)emu_ibv_mtu_bytes(emu_port_active_mtu(d))) {
		emu_counter_add(d->index, EMU_C_RCV_ERR, 1);
		p->v = V_DROP; /* frames bigger than the link carries */
		return;
	}
	if (first > (uint32_t)emu_ibv_mtu_bytes(qp->path_mtu)) {
		p->v = V_NAK;
		p->nak = NAK_INV_REQ;
		responder_error(qp, IBV_WC_SUCCESS, false);
		return;
	}
	switch (h->type) {
	case WT_WRITE:
		if (!(qp->access & IBV_ACCESS_REMOTE_WRITE)) {
			p->v = V_NAK;
			p->nak = NAK_INV_REQ;
			responder_error(qp, IBV_WC_SUCCESS, false);
			return;
		}
		mr = emu_mr_lookup(h->rkey);
		if (!mr_covers(mr, qp, h->raddr, h->len,
		               IBV_ACCESS_REMOTE_WRITE)) {
			emu_counter_add(d->index, EMU_C_RESP_REMOTE_ACCESS, 1);
			p->v = V_NAK;
			p->nak = NAK_ACCESS;
			responder_error(qp, IBV_WC_SUCCESS, true);
			return;
		}
		if (emu_has_imm(h) && qp->rq_next == qp->rq_head) {
			p->v = V_RNR;
			return;
		}
		p->iov[0].iov_base =
		        (char *)mr->mr.addr + (h->raddr - mr->iova);
		p->iov[0].iov_len = h->len;
		p->niov = h->len ? 1 : 0;
		p->mr[p->nmr++] = mr;
		return;
	case WT_READ_REQ:
		if (!(qp->access & IBV_ACCESS_REMOTE_READ) ||
		    qp->max_dest_rd_atomic == 0) {
			p->v = V_NAK;
			p->nak = NAK_INV_REQ;
			responder_error(qp, IBV_WC_SUCCESS, false);
			return;
		}
		mr = emu_mr_lookup(h->rkey);
		if (!mr_covers(mr, qp, h->raddr, h->len,
		               IBV_ACCESS_REMOTE_READ)) {
			emu_counter_add(d->index, EMU_C_RESP_REMOTE_ACCESS, 1);
			p->v = V_NAK;
			p->nak = NAK_ACCESS;
			responder_error(qp, IBV_WC_SUCCESS, true);
			return;
		}
		p->iov[0].iov_base =
		        (char *)mr->mr.addr + (h->raddr - mr->iova);
		p->iov[0].iov_len = h->len;
		p->niov = 1;
		return;
	case WT_SEND: {
		struct emu_rwqe *r;
		struct ibv_sge *sge;
		uint64_t room = 0, left = h->len;
		if (qp->rq_next == qp->rq_head) {
			p->v = V_RNR;
			return;
		}
		r = emu_rwqe_at(qp, qp->rq_next);
		sge = emu_rwqe_sge(r);
		for (int i = 0; i < r->nsge; i++) {
			if (!sge[i].length)
				continue;
			mr = emu_mr_lookup(sge[i].lkey);
			if (!mr || mr->mr.pd != qp->qpx.qp_base.pd ||
			    !(mr->access & IBV_ACCESS_LOCAL_WRITE) ||
			    sge[i].addr < (uintptr_t)mr->mr.addr ||
			    sge[i].addr + sge[i].length >
			            (uintptr_t)mr->mr.addr + mr->mr.length) {
				p->v = V_NAK;
				p->nak = NAK_REM_OP;
				responder_error(qp, IBV_WC_LOC_PROT_ERR, false);
				return;
			}
			room += sge[i].length;
			if (left) {
				uint64_t l = left < sge[i].length
				                     ? left
				                     : sge[i].length;
				p->iov[p->niov].iov_base =
				        (void *)(uintptr_t)sge[i].addr;
				p->iov[p->niov++].iov_len = l;
				p->mr[p->nmr++] = mr;
				left -= l;
			}
		}
		if (room < h->len) {
			emu_counter_add(d->index, EMU_C_RESP_LOCAL_LENGTH, 1);
			p->v = V_NAK;
			p->nak = NAK_INV_REQ;
			responder_error(qp, IBV_WC_LOC_LEN_ERR, false);
		}
		return;
	}
	default:
		p->v = V_DROP;
	}
}

/* The message is all in place (qp->lock held): complete the receive,
 * answer a READ, acknowledge. */
void emu_rx_done(struct emu_conn *c, struct emu_qp *qp,
                 const struct wire_hdr *h, struct plan *p)
{
	struct emu_dev *d = qp->ctx->dev;
	uint32_t pkts = emu_npkts(h->len, h->mtu);
	qp->rx_psn = (qp->rx_psn + pkts) & 0xffffff;
	qp->rx_seq = h->seq;
	emu_counter_add(d->index, EMU_C_RCV_PKTS, pkts);
	emu_counter_add(d->index, EMU_C_RCV_DATA,
	                emu_wire_words(emu_payload_of(h), h->mtu));
	if (h->type == WT_READ_REQ) {
		struct wire_hdr *r = malloc(sizeof(*r) + h->len);
		if (!r)
			return;
		*r = *h;
		r->type = WT_READ_RESP;
		r->dst_qpn = h->src_qpn;
		r->src_qpn = h->dst_qpn;
		if (h->len)
			memcpy(r + 1, p->iov[0].iov_base, h->len);
		emu_counter_add(d->index, EMU_C_XMIT_DATA,
		                emu_wire_words(h->len, h->mtu));
		emu_counter_add(d->index, EMU_C_XMIT_PKTS, pkts);
		if (!c->dead)
			emu_conn_send_owned(c, r, sizeof(*r) + h->len);
		else
			free(r);
		return;
	}
	if (h->type == WT_SEND || emu_has_imm(h)) {
		struct emu_rwqe *rw = emu_rwqe_at(qp, qp->rq_next);
		struct emu_cqe e = { .qp = qp };
		e.wc.wr_id = rw->wr_id;
		e.wc.status = IBV_WC_SUCCESS;
		e.wc.opcode = h->type == WT_SEND ? IBV_WC_RECV
		                                 : IBV_WC_RECV_RDMA_WITH_IMM;
		e.wc.byte_len = h->len;
		e.wc.qp_num = qp->qpx.qp_base.qp_num;
		e.wc.src_qp = h->src_qpn;
		if (emu_has_imm(h)) {
			e.wc.imm_data = h->imm;
			e.wc.wc_flags = IBV_WC_WITH_IMM;
		}
		if (emu_host.link == EMU_LINK_IB)
			e.wc.slid = qp->ah.dlid;
		e.solicited = (h->flags & WF_SOLICITED) != 0;
		qp->rq_next++;
		emu_cq_push((struct emu_cq *)qp->qpx.qp_base.recv_cq, &e);
	}
	emu_rx_ack(c, WT_ACK, 0, h->src_qpn, h->dst_qpn, h->seq, 0);
}

void emu_rx_sink_reset(struct emu_conn *c)
{
	if (c->sqp)
		emu_qp_put(c->sqp);
	if (c->hold) {
		free(c->hold->data);
		free(c->hold);
	}
	c->sqp = NULL;
	c->hold = NULL;
	c->sink = SINK_NONE;
	c->nsiov = c->siov_i = c->nsmr = 0;
	c->siov_off = 0;
}

void emu_rx_cancel(struct emu_conn *c)
{
	emu_rx_sink_reset(c);
	c->in_payload = false;
	c->rr = c->rw = 0;
}

void emu_rx_set_sink(struct emu_conn *c, struct emu_qp *qp, struct plan *p)
{
	c->sink = SINK_DIRECT;
	memcpy(c->siov, p->iov, sizeof(p->iov[0]) * (size_t)p->niov);
	c->nsiov = p->niov;
	memcpy(c->smr, p->mr, sizeof(p->mr[0]) * (size_t)p->nmr);
	c->nsmr = p->nmr;
	c->sqp = qp;
	atomic_fetch_add(&qp->refs, 1);
}

void emu_rx_request(struct emu_conn *c, const struct wire_hdr *h)
{
	struct emu_qp *qp = emu_qp_lookup(h->dst_qpn);
	struct plan p;
	if (!qp) {
		emu_rx_ack(c, WT_NAK, NAK_DROP, h->src_qpn, h->dst_qpn, h->seq,
		           h->epoch);
		return;
	}
	pthread_mutex_lock(&qp->lock);
	atomic_store(&qp->mpa_heard, true);
	emu_rx_plan(qp, h, &p, false);
	switch (p.v) {
	case V_DROP:
		emu_rx_ack(c, WT_NAK, NAK_DROP, h->src_qpn, h->dst_qpn, h->seq,
		           h->epoch);
		break;
	case V_DUP: /* seen already: acknowledge again what is done */
		emu_rx_ack(c, WT_ACK, 0, h->src_qpn, h->dst_qpn, qp->rx_seq, 0);
		break;
	case V_NAK:
		emu_rx_ack(c, WT_NAK, p.nak, h->src_qpn, h->dst_qpn, h->seq,
		           h->epoch);
		break;
	case V_RNR:
		c->hold = calloc(1, sizeof(*c->hold));
		if (c->hold) {
			c->hold->hdr = *h;
			c->hold->conn = c;
			c->hold->data = malloc(h->len ? h->len : 1);
			if (!c->hold->data) {
				free(c->hold);
				c->hold = NULL;
				break;
			}
			c->sink = SINK_HOLD;
			c->siov[0].iov_base = c->hold->data;
			c->siov[0].iov_len = emu_payload_of(h);
			c->nsiov = emu_payload_of(h) ? 1 : 0;
			c->sqp = qp;
			atomic_fetch_add(&qp->refs, 1);
		}
		if (!qp->held)
			emu_counter_add(qp->ctx->dev->index,
			                EMU_C_OUT_OF_BUFFER, 1);
		emu_rx_ack(c, WT_NAK, NAK_RNR_WAIT, h->src_qpn, h->dst_qpn,
		           h->seq, h->epoch);
		break;
	case V_OK:
		if (h->type == WT_READ_REQ || emu_payload_of(h) == 0)
			emu_rx_done(c, qp, h, &p);
		else
			emu_rx_set_sink(c, qp, &p);
		break;
	}
	pthread_mutex_unlock(&qp->lock);
}

/* ---- the requester ---- */

static void complete_upto(struct emu_qp *qp, uint64_t seq)
{
	while (qp->sq_acked != qp->sq_tx) {
		struct emu_swqe *w = emu_swqe_at(qp, qp->sq_acked);
		if (w->state != W_SENT || w->seq > seq ||
		    w->opcode == IBV_WR_RDMA_READ)
			break;
		emu_send_complete(qp, w, IBV_WC_SUCCESS);
	}
}

static struct emu_qp *requester(const struct wire_hdr *h)
{
	struct emu_qp *qp = emu_qp_lookup(h->dst_qpn);
	if (!qp)
		return NULL;
	pthread_mutex_lock(&qp->lock);
	if (qp->dest_qpn != h->src_qpn ||
	    (qp->qpx.qp_base.state != IBV_QPS_RTS &&
	     qp->qpx.qp_base.state != IBV_QPS_SQD)) {
		pthread_mutex_unlock(&qp->lock);
		return NULL;
	}
	return qp;
}

void emu_rx_on_ack(const struct wire_hdr *h)
{
	struct emu_qp *qp = requester(h);
	uint32_t was;
	if (!qp)
		return;
	was = qp->sq_acked;
	complete_upto(qp, h->seq);
	if (qp->sq_acked != was)
		qp->path_dead = false; /* the path works (again) */
	qp->last_progress_ns = emu_now_ns();
	qp->rnr_wait = false;
	pthread_mutex_unlock(&qp->lock);
}

void emu_rx_on_nak(const struct wire_hdr *h)
{
	struct emu_qp *qp = requester(h);
	struct emu_swqe *w;
	int dev;
	if (!qp)
		return;
	dev = qp->ctx->dev->index;
	if (h->nak == NAK_RNR_WAIT) {
		/* parked (maybe behind another parked message): nothing
		 * before it is known to be done, the timer waits */
		qp->rnr_wait = true;
		qp->last_progress_ns = emu_now_ns();
		pthread_mutex_unlock(&qp->lock);
		return;
	}
	/* An error NAK means everything before it was done; a drop says
	 * nothing about the messages before it (dropped too, maybe). */
	if (h->nak != NAK_DROP)
		complete_upto(qp, h->seq - 1);
	w = qp->sq_acked != qp->sq_tx ? emu_swqe_at(qp, qp->sq_acked) : NULL;
	if (h->nak == NAK_DROP) {
		/* Nothing took it (QP not ready yet, gone, PSN): send again
		 * from it after a retry timeout, as a requester retries,
		 * until the deadline.  NAKs of earlier rounds are stale. */
		if (h->epoch == qp->tx_epoch && w && w->seq == h->seq &&
		    !qp->retx_at) {
			int64_t t = (int64_t)4096 << qp->timeout;
			if (qp->timeout == 0 || t > 100000000)
				t = 100000000;
			if (t < 2000000)
				t = 2000000;
			qp->path_dead = true;
			qp->tx_epoch++;
			qp->retx_at = emu_now_ns() + t;
		}
	} else if (!w || w->seq != h->seq) {
		/* stale: about a message already settled */
	} else {
		enum ibv_wc_status st = IBV_WC_REM_OP_ERR;
		if (h->nak == NAK_ACCESS) {
			st = IBV_WC_REM_ACCESS_ERR;
			emu_counter_add(dev, EMU_C_REQ_REMOTE_ACCESS, 1);
		} else if (h->nak == NAK_INV_REQ) {
			st = IBV_WC_REM_INV_REQ_ERR;
		} else if (h->nak == NAK_RNR_EXC) {
			st = IBV_WC_RNR_RETRY_EXC_ERR;
			emu_counter_add(dev, EMU_C_RNR_RETRY_ERR, 1);
		}
		emu_qp_to_error(qp, st);
	}
	pthread_mutex_unlock(&qp->lock);
}

void emu_rx_on_read_resp(struct emu_conn *c, const struct wire_hdr *h)
{
	struct emu_qp *qp = requester(h);
	struct emu_swqe *w;
	struct plan p = { .v = V_OK };
	if (!qp)
		return;
	complete_upto(qp, h->seq - 1);
	w = qp->sq_acked != qp->sq_tx ? emu_swqe_at(qp, qp->sq_acked) : NULL;
	if (w && w->seq == h->seq && w->opcode == IBV_WR_RDMA_READ &&
	    w->state == W_SENT && h->len == w->len) {
		struct iovec *iov =
		        (struct iovec *)(emu_swqe_sge(w) + qp->max_send_sge);
		memcpy(p.iov, iov + 1, sizeof(*iov) * (size_t)w->niov);
		p.niov = w->niov;
		emu_rx_set_sink(c, qp, &p);
	}
	pthread_mutex_unlock(&qp->lock);
}

void emu_rx_read_done(struct emu_qp *qp, const struct wire_hdr *h)
{
	struct emu_swqe *w;
	if (qp->sq_acked == qp->sq_tx)
		return;
	w = emu_swqe_at(qp, qp->sq_acked);
	if (w->seq == h->seq && w->state == W_SENT) {
		emu_counter_add(qp->ctx->dev->index, EMU_C_RCV_DATA,
		                emu_wire_words(h->len, h->mtu));
		emu_counter_add(qp->ctx->dev->index, EMU_C_RCV_PKTS,
		                emu_npkts(h->len, h->mtu));
		emu_send_complete(qp, w, IBV_WC_SUCCESS);
		qp->last_progress_ns = emu_now_ns();
	}
}
