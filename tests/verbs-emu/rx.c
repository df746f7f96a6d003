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

enum verdict { V_OK, V_DROP, V_NAK, V_RNR };

struct plan {
	enum verdict v;
	uint8_t nak;
	struct iovec iov[EMU_MAX_SGE];
	int niov;
	struct emu_mr *mr[EMU_MAX_SGE];
	int nmr;
};

static struct emu_qp *qp_lookup(uint32_t qpn)
{
	struct emu_qp *qp;
	if ((qpn >> EMU_QP_IDX_BITS) != emu_eng.slot)
		return NULL;
	qp = emu_eng.qp[qpn & (EMU_MAX_QP - 1)];
	return qp && !qp->dead && qp->qpx.qp_base.qp_num == qpn ? qp : NULL;
}

static uint32_t payload_of(const struct wire_hdr *h)
{
	return h->type == WT_SEND || h->type == WT_WRITE ||
	                       h->type == WT_READ_RESP
	               ? h->len
	               : 0;
}

static bool has_imm(const struct wire_hdr *h)
{
	return h->flags & WF_IMM;
}

void emu_rx_ack(struct emu_conn *c, uint8_t type, uint8_t nak, uint32_t qpn,
                uint32_t src, uint64_t seq)
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
		.qpn = qpn, .src = src, .seq = seq, .type = type, .nak = nak
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

static void plan_request(struct emu_qp *qp, const struct wire_hdr *h,
                         struct plan *p, bool parked)
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
		if (has_imm(h) && qp->rq_next == qp->rq_head) {
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
static void request_done(struct emu_conn *c, struct emu_qp *qp,
                         const struct wire_hdr *h, struct plan *p)
{
	struct emu_dev *d = qp->ctx->dev;
	uint32_t pkts = emu_npkts(h->len, h->mtu);
	qp->rx_psn = (qp->rx_psn + pkts) & 0xffffff;
	qp->rx_seq = h->seq;
	emu_counter_add(d->index, EMU_C_RCV_PKTS, pkts);
	emu_counter_add(d->index, EMU_C_RCV_DATA,
	                emu_wire_words(payload_of(h), h->mtu));
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
	if (h->type == WT_SEND || has_imm(h)) {
		struct emu_rwqe *rw = emu_rwqe_at(qp, qp->rq_next);
		struct emu_cqe e = { .qp = qp };
		e.wc.wr_id = rw->wr_id;
		e.wc.status = IBV_WC_SUCCESS;
		e.wc.opcode = h->type == WT_SEND ? IBV_WC_RECV
		                                 : IBV_WC_RECV_RDMA_WITH_IMM;
		e.wc.byte_len = h->len;
		e.wc.qp_num = qp->qpx.qp_base.qp_num;
		e.wc.src_qp = h->src_qpn;
		if (has_imm(h)) {
			e.wc.imm_data = h->imm;
			e.wc.wc_flags = IBV_WC_WITH_IMM;
		}
		if (emu_host.link == EMU_LINK_IB)
			e.wc.slid = qp->ah.dlid;
		e.solicited = (h->flags & WF_SOLICITED) != 0;
		qp->rq_next++;
		emu_cq_push((struct emu_cq *)qp->qpx.qp_base.recv_cq, &e);
	}
	emu_rx_ack(c, WT_ACK, 0, h->src_qpn, h->dst_qpn, h->seq);
}

static void sink_reset(struct emu_conn *c)
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
	sink_reset(c);
	c->in_payload = false;
	c->rr = c->rw = 0;
}

static void set_sink(struct emu_conn *c, struct emu_qp *qp, struct plan *p)
{
	c->sink = SINK_DIRECT;
	memcpy(c->siov, p->iov, sizeof(p->iov[0]) * (size_t)p->niov);
	c->nsiov = p->niov;
	memcpy(c->smr, p->mr, sizeof(p->mr[0]) * (size_t)p->nmr);
	c->nsmr = p->nmr;
	c->sqp = qp;
	atomic_fetch_add(&qp->refs, 1);
}

static void on_request(struct emu_conn *c, const struct wire_hdr *h)
{
	struct emu_qp *qp = qp_lookup(h->dst_qpn);
	struct plan p;
	if (!qp) {
		emu_rx_ack(c, WT_NAK, NAK_DROP, h->src_qpn, h->dst_qpn, h->seq);
		return;
	}
	pthread_mutex_lock(&qp->lock);
	plan_request(qp, h, &p, false);
	switch (p.v) {
	case V_DROP:
		emu_rx_ack(c, WT_NAK, NAK_DROP, h->src_qpn, h->dst_qpn, h->seq);
		break;
	case V_NAK:
		emu_rx_ack(c, WT_NAK, p.nak, h->src_qpn, h->dst_qpn, h->seq);
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
			c->siov[0].iov_len = payload_of(h);
			c->nsiov = payload_of(h) ? 1 : 0;
			c->sqp = qp;
			atomic_fetch_add(&qp->refs, 1);
		}
		if (!qp->held)
			emu_counter_add(qp->ctx->dev->index,
			                EMU_C_OUT_OF_BUFFER, 1);
		emu_rx_ack(c, WT_NAK, NAK_RNR_WAIT, h->src_qpn, h->dst_qpn,
		           h->seq);
		break;
	case V_OK:
		if (h->type == WT_READ_REQ || payload_of(h) == 0)
			request_done(c, qp, h, &p);
		else
			set_sink(c, qp, &p);
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
	struct emu_qp *qp = qp_lookup(h->dst_qpn);
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

static void on_ack(const struct wire_hdr *h)
{
	struct emu_qp *qp = requester(h);
	if (!qp)
		return;
	complete_upto(qp, h->seq);
	qp->last_progress_ns = emu_now_ns();
	qp->rnr_wait = false;
	pthread_mutex_unlock(&qp->lock);
}

static void on_nak(const struct wire_hdr *h)
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
	complete_upto(qp, h->seq - 1);
	w = qp->sq_acked != qp->sq_tx ? emu_swqe_at(qp, qp->sq_acked) : NULL;
	if (h->nak == NAK_DROP) {
		qp->path_dead = true;
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

static void on_read_resp(struct emu_conn *c, const struct wire_hdr *h)
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
		set_sink(c, qp, &p);
	}
	pthread_mutex_unlock(&qp->lock);
}

static void read_done(struct emu_qp *qp, const struct wire_hdr *h)
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

/* ---- the byte stream ---- */

static void message_done(struct emu_conn *c);
static void deliver_held(struct emu_qp *qp, int64_t now);

static void on_header(struct emu_conn *c, const struct wire_hdr *h)
{
	c->cur = *h;
	emu_dbg("pid %d fd %d rx type %u nak %u %06x->%06x seq %llu len %u",
	        (int)getpid(), c->fd, h->type, h->nak, h->src_qpn, h->dst_qpn,
	        (unsigned long long)h->seq, h->len);
	switch (h->type) {
	case WT_HELLO: {
		struct sockaddr_in sa;
		socklen_t l = sizeof(sa);
		if (h->seq != emu_host.fabric_id) {
			emu_log("a process of another fabric (state directory) "
			        "connected; ignored");
			emu_conn_kill(c, "fabric");
			return;
		}
		if (getpeername(c->fd, (struct sockaddr *)&sa, &l) == 0) {
			c->ip = sa.sin_addr;
			c->port = (uint16_t)h->dst_qpn;
			c->keyed = true;
		}
		break;
	}
	case WT_ACK:
		on_ack(h);
		break;
	case WT_NAK:
		on_nak(h);
		break;
	case WT_SEND:
	case WT_WRITE:
	case WT_READ_REQ:
		on_request(c, h);
		break;
	case WT_READ_RESP:
		on_read_resp(c, h);
		break;
	case WT_PROGRESS:
		break;
	default:
		emu_log("garbage on the wire (type %u); connection dropped",
		        h->type);
		emu_conn_kill(c, "garbage");
		return;
	}
	if (payload_of(h)) {
		c->in_payload = true;
		c->remaining = payload_of(h);
		if (c->sink == SINK_NONE)
			c->sink = SINK_DISCARD;
	} else if (c->sink != SINK_NONE) {
		message_done(c); /* zero bytes: parked or placed already */
	}
}

/* The sink may be written (sqp->lock taken) or has gone (discard). */
static bool sink_enter(struct emu_conn *c)
{
	enum ibv_qp_state s;
	if (c->sink == SINK_DISCARD || !c->sqp)
		return c->sink != SINK_DISCARD;
	pthread_mutex_lock(&c->sqp->lock);
	s = c->sqp->qpx.qp_base.state;
	if (c->sink == SINK_DIRECT &&
	    (c->sqp->dead || s == IBV_QPS_ERR || s == IBV_QPS_RESET)) {
		pthread_mutex_unlock(&c->sqp->lock);
		c->sink = SINK_DISCARD;
		return false;
	}
	return true;
}

static void sink_leave(struct emu_conn *c)
{
	if (c->sqp && c->sink != SINK_DISCARD)
		pthread_mutex_unlock(&c->sqp->lock);
}

static void sink_advance(struct emu_conn *c, size_t n)
{
	while (n && c->siov_i < c->nsiov) {
		size_t room = c->siov[c->siov_i].iov_len - c->siov_off;
		size_t k = n < room ? n : room;
		c->siov_off += k;
		n -= k;
		if (c->siov_off == c->siov[c->siov_i].iov_len) {
			c->siov_i++;
			c->siov_off = 0;
		}
	}
}

static void sink_copy(struct emu_conn *c, const uint8_t *src, size_t n)
{
	if (!sink_enter(c))
		return;
	while (n && c->siov_i < c->nsiov) {
		size_t room = c->siov[c->siov_i].iov_len - c->siov_off;
		size_t k = n < room ? n : room;
		memcpy((char *)c->siov[c->siov_i].iov_base + c->siov_off, src,
		       k);
		src += k;
		n -= k;
		sink_advance(c, k);
	}
	sink_leave(c);
}

static void message_done(struct emu_conn *c)
{
	struct emu_qp *qp = c->sqp;
	struct wire_hdr *h = &c->cur;
	c->in_payload = false;
	if (c->sink == SINK_HOLD && qp) {
		pthread_mutex_lock(&qp->lock);
		if (!qp->dead && qp->qpx.qp_base.state != IBV_QPS_ERR &&
		    qp->qpx.qp_base.state != IBV_QPS_RESET) {
			if (!qp->held)
				qp->rnr_since_ns = emu_now_ns();
			*qp->held_tail = c->hold;
			qp->held_tail = &c->hold->next;
			c->hold = NULL;
			deliver_held(qp, emu_now_ns());
		}
		pthread_mutex_unlock(&qp->lock);
	} else if (c->sink == SINK_DIRECT && qp) {
		pthread_mutex_lock(&qp->lock);
		if (!qp->dead && qp->qpx.qp_base.state != IBV_QPS_ERR &&
		    qp->qpx.qp_base.state != IBV_QPS_RESET) {
			if (h->type == WT_READ_RESP)
				read_done(qp, h);
			else
				request_done(c, qp, h, NULL);
		}
		pthread_mutex_unlock(&qp->lock);
	}
	sink_reset(c);
}

static void process(struct emu_conn *c)
{
	while (!c->dead) {
		size_t avail = c->rw - c->rr;
		if (c->in_payload) {
			size_t k = avail < c->remaining ? avail
			                                : (size_t)c->remaining;
			if (k == 0 && c->remaining)
				return;
			sink_copy(c, c->rbuf + c->rr, k);
			c->rr += k;
			c->remaining -= k;
			if (c->remaining == 0)
				message_done(c);
			continue;
		}
		if (avail < sizeof(struct wire_hdr))
			return;
		{
			struct wire_hdr h;
			memcpy(&h, c->rbuf + c->rr, sizeof(h));
			c->rr += sizeof(h);
			on_header(c, &h);
		}
	}
}

/* Large payloads go from the socket straight into place.  1: progress,
 * 0: nothing more to read now, -1: the sink went away (read normally). */
static int read_direct(struct emu_conn *c)
{
	struct iovec iov[EMU_MAX_SGE];
	size_t want = 0;
	int n = 0;
	ssize_t r;
	if (!sink_enter(c))
		return -1;
	for (int i = c->siov_i; i < c->nsiov && want < c->remaining; i++) {
		size_t off = i == c->siov_i ? c->siov_off : 0;
		iov[n].iov_base = (char *)c->siov[i].iov_base + off;
		iov[n].iov_len = c->siov[i].iov_len - off;
		if (want + iov[n].iov_len > c->remaining)
			iov[n].iov_len = c->remaining - want;
		want += iov[n].iov_len;
		n++;
	}
	r = n ? readv(c->fd, iov, n) : 0;
	sink_leave(c);
	if (r <= 0) {
		if (r == 0 || (errno != EAGAIN && errno != EINTR))
			emu_conn_kill(c, "eof");
		return 0;
	}
	c->last_rx_ns = emu_now_ns();
	c->got_payload = true;
	sink_advance(c, (size_t)r);
	c->remaining -= (size_t)r;
	if (c->remaining == 0)
		message_done(c);
	return 1;
}

void emu_rx_readable(struct emu_conn *c)
{
	for (int round = 0; round < 64 && !c->dead; round++) {
		ssize_t r;
		if (c->in_payload && c->rr == c->rw && c->remaining >= 16384 &&
		    c->sink != SINK_DISCARD) {
			int k = read_direct(c);
			if (k == 0)
				return;
			if (k > 0)
				continue;
		}
		if (c->rr == c->rw) {
			c->rr = c->rw = 0;
		} else if (c->rcap - c->rw < sizeof(struct wire_hdr)) {
			memmove(c->rbuf, c->rbuf + c->rr, c->rw - c->rr);
			c->rw -= c->rr;
			c->rr = 0;
		}
		r = read(c->fd, c->rbuf + c->rw, c->rcap - c->rw);
		if (r <= 0) {
			if (r == 0 || (errno != EAGAIN && errno != EINTR))
				emu_conn_kill(c, "eof");
			return;
		}
		c->rw += (size_t)r;
		c->last_rx_ns = emu_now_ns();
		if (c->in_payload)
			c->got_payload = true;
		process(c);
	}
}

/* ---- parked messages, timers ---- */

static int64_t rnr_timer_ns(uint8_t t)
{
	static const uint32_t us[32] = {
		655360, 10,    20,    30,     40,     60,     80,     120,
		160,    240,   320,   480,    640,    960,    1280,   1920,
		2560,   3840,  5120,  7680,   10240,  15360,  20480,  30720,
		40960,  61440, 81920, 122880, 163840, 245760, 327680, 491520
	};
	return (int64_t)us[t & 31] * 1000;
}

void emu_rx_drop_held(struct emu_qp *qp)
{
	while (qp->held) {
		struct emu_held *h = qp->held;
		qp->held = h->next;
		free(h->data);
		free(h);
	}
	qp->held_tail = &qp->held;
}

static void deliver_held(struct emu_qp *qp, int64_t now)
{
	while (qp->held) {
		struct emu_held *m = qp->held;
		struct plan p;
		plan_request(qp, &m->hdr, &p, true);
		if (p.v == V_RNR) {
			int64_t lim = rnr_timer_ns(qp->min_rnr_timer) *
			              (m->hdr.rnr_retry + 1);
			if (lim < emu_host.retry_floor_ns)
				lim = emu_host.retry_floor_ns;
			if (lim > emu_host.retry_cap_ns)
				lim = emu_host.retry_cap_ns;
			if (m->hdr.rnr_retry < 7 &&
			    now - qp->rnr_since_ns > lim) {
				emu_rx_ack(m->conn, WT_NAK, NAK_RNR_EXC,
				           m->hdr.src_qpn, m->hdr.dst_qpn,
				           m->hdr.seq);
				emu_rx_drop_held(qp);
			}
			return;
		}
		qp->held = m->next;
		if (!qp->held)
			qp->held_tail = &qp->held;
		if (p.v == V_OK) {
			size_t off = 0;
			for (int i = 0;
			     i < p.niov && m->hdr.type != WT_READ_REQ; i++) {
				memcpy(p.iov[i].iov_base, m->data + off,
				       p.iov[i].iov_len);
				off += p.iov[i].iov_len;
			}
			request_done(m->conn, qp, &m->hdr, &p);
			qp->rnr_since_ns = now;
		} else {
			emu_rx_ack(m->conn, WT_NAK,
			           p.v == V_DROP ? NAK_DROP : p.nak,
			           m->hdr.src_qpn, m->hdr.dst_qpn, m->hdr.seq);
			if (p.v == V_NAK)
				emu_rx_drop_held(qp);
		}
		free(m->data);
		free(m);
	}
}

static void check_retry(struct emu_qp *qp, int64_t now)
{
	struct emu_swqe *w;
	struct emu_conn *c = qp->conn;
	int64_t start, ref;
	bool dead;
	if (qp->sq_acked == qp->sq_head || qp->rnr_wait)
		return;
	if (qp->sq_tx != qp->sq_head)
		emu_qp_transmit(qp);
	if (qp->qpx.qp_base.state != IBV_QPS_RTS &&
	    qp->qpx.qp_base.state != IBV_QPS_SQD)
		return;
	w = emu_swqe_at(qp, qp->sq_acked);
	start = w->state == W_SENT ? w->tx_ns : w->post_ns;
	dead = qp->path_dead || !c || c->dead ||
	       !atomic_load(&qp->ctx->dev->up);
	ref = start;
	if (!dead) {
		if (c->last_rx_ns > ref)
			ref = c->last_rx_ns;
		if (qp->last_progress_ns > ref)
			ref = qp->last_progress_ns;
	}
	if (now - ref > emu_qp_deadline_ns(qp)) {
		emu_counter_add(qp->ctx->dev->index, EMU_C_LOCAL_ACK_TIMEOUT,
		                1);
		emu_qp_to_error(qp, IBV_WC_RETRY_EXC_ERR);
	}
}

static void poll_ports(int64_t now)
{
	if (now - emu_eng.last_port_poll_ns < 50000000 &&
	    !atomic_exchange(&emu_eng.need_port_poll, false))
		return;
	emu_eng.last_port_poll_ns = now;
	for (int i = 0; i < emu_host.ndev; i++) {
		struct emu_dev *d = &emu_host.dev[i];
		bool up = emu_port_up(d);
		uint32_t was = up ? 0 : 1;
		atomic_store(&d->up, up);
		if (up == (bool)d->reported)
			continue;
		d->reported = up;
		/* one process of the host counts the transition */
		if (!up && atomic_compare_exchange_strong(
		                   &emu_host.sh->port[i].seen_up, &was, 0))
			emu_counter_add(i, EMU_C_LINK_DOWNED, 1);
		if (up)
			atomic_store(&emu_host.sh->port[i].seen_up, 1);
		emu_port_event_all(d, up);
		emu_counters_flush(true);
	}
}

void emu_timers(int64_t now)
{
	emu_faults_tick(now);
	poll_ports(now);
	if (atomic_exchange(&emu_eng.need_scan, false) ||
	    now - emu_eng.last_scan_ns >= 2000000) {
		emu_eng.last_scan_ns = now;
		for (uint32_t i = 1; i <= emu_eng.qp_hi; i++) {
			struct emu_qp *qp = emu_eng.qp[i];
			if (!qp)
				continue;
			pthread_mutex_lock(&qp->lock);
			if (qp->held)
				deliver_held(qp, now);
			check_retry(qp, now);
			pthread_mutex_unlock(&qp->lock);
		}
	}
	if (now - emu_eng.last_flush_ns >= 20000000) {
		emu_eng.last_flush_ns = now;
		emu_counters_flush(false);
	}
}

/* ---- objects going away (eng.lock held) ---- */

void emu_engine_forget_qp(struct emu_qp *qp)
{
	/* qp->lock is held too: sinks are switched without taking it */
	for (struct emu_conn *c = emu_eng.conns; c; c = c->next)
		if (c->sqp == qp && c->sink != SINK_NONE) {
			if (c->hold) {
				free(c->hold->data);
				free(c->hold);
				c->hold = NULL;
			}
			c->sink = SINK_DISCARD;
			c->nsiov = 0;
			/* the reference is dropped by sink_reset later */
		}
	emu_rx_drop_held(qp);
}

void emu_engine_forget_mr(struct emu_mr *mr)
{
	for (struct emu_conn *c = emu_eng.conns; c; c = c->next)
		for (int i = 0; i < c->nsmr; i++)
			if (c->smr[i] == mr && c->sink == SINK_DIRECT) {
				c->sink = SINK_DISCARD;
				c->nsiov = 0;
			}
}
