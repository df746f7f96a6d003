/* SPDX-License-Identifier: MIT */
/*
 * transports/verbs/verbs_recv.c - the verbs data path's receiving side (see
 * verbs_data.c for the protocol), completions and asynchronous events.
 *
 * A receive is found by its sequence number (ep->rseq), so a message, an
 * immediate or a piece goes straight to its receive; messages that arrive
 * before their receive is posted wait in order (an EAGER in its slot, an
 * RTS as a note).  A receive larger than the eager limit, into registered
 * memory, sends its RTR as soon as it is posted; one that learns of its
 * message from an RTS sends it then.  Receives complete in the order they
 * were posted.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "transports/verbs/verbs.h"

enum {
	K_WANT = 0x8000, /* owes an RTR, not sent yet */
	K_SZC = 0x10000, /* its RTS said the sender writes zero-copy */
};

static inline uint64_t *kind(struct cb_tp_req *req)
{
	return &req->priv.u64[R_KIND];
}

/* A receive's data is all in; complete receives in posting order. */
static void landed_recv(struct cb_tp_ep *ep, struct cb_tp_req *req)
{
	req->priv.u64[R_DONE] = 1;
	while (ep->rseq[ep->recv_upto % VB_RNDV_Q] &&
	       ep->rseq[ep->recv_upto % VB_RNDV_Q]->priv.u64[R_DONE]) {
		ep->rseq[ep->recv_upto % VB_RNDV_Q] = NULL;
		ep->recv_upto++;
	}
}

static void check_done(struct cb_tp_ep *ep, struct cb_tp_req *req)
{
	uint64_t k = *kind(req);

	if (!(k & K_SIZED) || req->priv.u64[R_DONE])
		return;
	if (k & K_FRAG ? req->priv.u64[R_OFF] == req->bytes
	               : (k & K_IMM) && req->priv.u64[R_WAIT] == 0) {
		if (!(k & K_FRAG)) {
			ep->ctx->stats.zcopy_msgs++;
			ep->ctx->stats.zcopy_bytes += req->bytes;
		}
		landed_recv(ep, req);
	}
}

/* The posted receive of message @seq, or NULL. */
static struct cb_tp_req *recv_of(struct cb_tp_ep *ep, uint32_t seq)
{
	struct cb_tp_req *req = ep->rseq[seq % VB_RNDV_Q];

	if (!req || (uint32_t)req->priv.u64[R_SEQ] != seq)
		return NULL;
	return req;
}

static void want_rtr(struct cb_tp_ep *ep, struct cb_tp_req *req)
{
	if (*kind(req) & (K_WANT | K_RTR))
		return;
	*kind(req) |= K_WANT;
	ep->rtr_due++;
}

/* Message @a met its receive @req. */
static cb_status_t arrived(struct cb_tp_ep *ep, struct cb_tp_req *req,
                           const struct vb_arrival *a)
{
	uint64_t *k = kind(req);

	if (a->tag != req->tag)
		return vb_ep_err(ep, CB_ERR_PROTO,
		                 "sent message tag 0x%llx where this rank "
		                 "expected 0x%llx (schedules disagree)",
		                 a->tag, req->tag);
	if (a->bytes > req->priv.u64[R_CAP])
		return vb_ep_err(ep, CB_ERR_TRUNCATE,
		                 "sent %llu bytes to a %llu-byte receive",
		                 a->bytes, req->priv.u64[R_CAP]);
	req->bytes = a->bytes;
	*k |= K_SIZED;
	if (a->type == VB_EAGER) {
		if (a->bytes && (*k & K_GPU))
			return vb_ep_err(ep, CB_ERR_PROTO,
			                 "sent %llu bytes through host buffers "
			                 "into device memory%.0llu",
			                 a->bytes, 0);
		memcpy(req->priv.ptr[R_BUF],
		       vb_recv_slot(&ep->q[0], a->slot) + VB_HDR, a->bytes);
		if (*k & K_WANT)
			ep->rtr_due--; /* an early RTR it no longer needs */
		*k &= ~(uint64_t)K_WANT;
		landed_recv(ep, req);
		return vb_repost(ep, 0, a->slot);
	}
	/* an RTS: zero-copy if both ends can, else through the slots */
	*k |= K_RTS | (a->zcopy ? K_SZC : 0);
	if ((*k & K_RTR) && (!(*k & K_ZC) || !a->zcopy))
		*k |= K_FRAG;
	if (!(*k & K_RTR))
		want_rtr(ep, req);
	if ((*k & K_GPU) && (!a->zcopy || !vb_req_mr(req)))
		return vb_ep_err(ep, CB_ERR_PROTO,
		                 "sent %llu bytes through host buffers into "
		                 "device memory%.0llu",
		                 a->bytes, 0);
	check_done(ep, req);
	return CB_OK;
}

cb_status_t vb_recv_posted(struct cb_tp_ep *ep, struct cb_tp_req *req)
{
	uint32_t seq = (uint32_t)req->priv.u64[R_SEQ];
	int moved = 0;
	cb_status_t st;

	if (ep->arr_head != ep->arr_tail) {
		struct vb_arrival *a = &ep->arr[ep->arr_head % VB_ARRIVALS];
		if (a->seq != seq)
			return vb_ep_err(ep, CB_ERR_PROTO,
			                 "sent message %llu where this rank "
			                 "expected %llu",
			                 a->seq, seq);
		ep->arr_head++;
		if ((st = arrived(ep, req, a)))
			return st;
	} else if (req->priv.u64[R_CAP] > ep->ctx->eager_max &&
	           vb_req_mr(req)) {
		want_rtr(ep, req); /* before the sender asks */
	}
	return ep->rtr_due ? vb_recv_rtrs(ep, &moved) : CB_OK;
}

/* Send the RTRs receives owe, oldest first, as credit allows. */
cb_status_t vb_recv_rtrs(struct cb_tp_ep *ep, int *moved)
{
	for (uint32_t s = ep->recv_upto; ep->rtr_due && s != ep->recv_seq;
	     s++) {
		struct cb_tp_req *req = ep->rseq[s % VB_RNDV_Q];
		if (!req || !(*kind(req) & K_WANT))
			continue;
		const struct cb_tp_mr *mr = vb_req_mr(req);
		uint64_t k = *kind(req);
		int zc = mr && (!(k & K_RTS) || (k & K_SZC));
		struct vb_hdr h = { .type = VB_RTR,
			            .seq = s,
			            .bytes = req->priv.u64[R_CAP],
			            .addr = (uintptr_t)req->priv.ptr[R_BUF] };
		for (int j = 0; zc && j < ep->nrails; j++)
			h.rkey[j] = mr->mr[j]->rkey;
		int done;
		cb_status_t st =
		        vb_send_msg(ep, 0, &h, NULL, 0, 0, NULL, &done);
		if (st == CB_AGAIN)
			return CB_OK; /* no credit now: later */
		if (st)
			return st;
		*kind(req) = (k & ~(uint64_t)K_WANT) | K_RTR | (zc ? K_ZC : 0);
		if ((k & K_RTS) && !zc)
			*kind(req) |= K_FRAG;
		ep->rtr_due--;
		*moved = 1;
		check_done(ep, req);
	}
	return CB_OK;
}

/* A write with immediate (or a FIN) of rendezvous @seq: @k rails in all
 * (1..nrails: vb_wire_*).  @sized: this tells the message's size: @bytes,
 * or (~0) the receive's capacity, which the message fills. */
static cb_status_t rndv_in(struct cb_tp_ep *ep, uint32_t seq, int k, int sized,
                           uint64_t bytes)
{
	struct cb_tp_req *req = recv_of(ep, seq);

	if (req && bytes == ~(uint64_t)0)
		bytes = req->priv.u64[R_CAP];

	if (!req || !(*kind(req) & K_RTR) || (*kind(req) & K_FRAG) ||
	    (*kind(req) & K_IMM && req->priv.u64[R_WAIT] == 0))
		return vb_ep_err(
		        ep, CB_ERR_PROTO,
		        "finished a large message (%llu) this rank did "
		        "not ask for%.0llu",
		        seq, 0);
	if (sized && bytes > req->priv.u64[R_CAP])
		return vb_ep_err(ep, CB_ERR_TRUNCATE,
		                 "sent %llu bytes to a %llu-byte receive",
		                 bytes, req->priv.u64[R_CAP]);
	if (!(*kind(req) & K_IMM)) {
		*kind(req) |= K_IMM;
		req->priv.u64[R_WAIT] = (uint64_t)k;
	}
	req->priv.u64[R_WAIT]--;
	if (sized && !(*kind(req) & K_SIZED)) {
		req->bytes = bytes;
		*kind(req) |= K_SIZED;
	}
	check_done(ep, req);
	return CB_OK;
}

static cb_status_t frag_in(struct cb_tp_ep *ep, const struct vb_hdr *h,
                           const uint8_t *payload)
{
	struct cb_tp_req *req = recv_of(ep, h->seq);

	if (!req || !(*kind(req) & K_FRAG) || !(*kind(req) & K_SIZED) ||
	    h->bytes > VB_EAGER_MAX || h->addr > req->bytes ||
	    h->bytes > req->bytes - h->addr)
		return vb_ep_err(
		        ep, CB_ERR_PROTO,
		        "sent a piece (%llu bytes at %llu) of no message "
		        "this rank receives",
		        h->bytes, h->addr);
	memcpy((char *)req->priv.ptr[R_BUF] + h->addr, payload, h->bytes);
	ep->ctx->stats.bounce_bytes += h->bytes;
	req->priv.u64[R_OFF] += h->bytes;
	check_done(ep, req);
	return CB_OK;
}

static cb_status_t notify_in(struct cb_tp_ep *ep, uint32_t v)
{
	if (ep->nq_tail - ep->nq_head == VB_NOTIFY_Q)
		return vb_ep_err(ep, CB_ERR_PROTO,
		                 "raised more than %llu notifications nobody "
		                 "read%.0llu",
		                 VB_NOTIFY_Q, 0);
	ep->notify[ep->nq_tail++ % VB_NOTIFY_Q] = v;
	return CB_OK;
}

/* An EAGER or RTS: to its receive, or in order to wait for it. */
static cb_status_t message_in(struct cb_tp_ep *ep, int slot,
                              const struct vb_hdr *h)
{
	struct vb_arrival a = {
		.type = h->type,
		.zcopy = h->type == VB_RTS && h->addr,
		.slot = (uint16_t)slot,
		.seq = h->seq,
		.tag = h->tag,
		.bytes = h->bytes,
	};
	uint32_t next = ep->recv_seq + (ep->arr_tail - ep->arr_head);
	cb_status_t st;

	if (VB_SEQ_LT(h->seq, ep->recv_seq)) {
		struct cb_tp_req *req = recv_of(ep, h->seq);
		if (!req || ep->arr_head != ep->arr_tail)
			return vb_ep_err(ep, CB_ERR_PROTO,
			                 "sent message %llu twice or out of "
			                 "order%.0llu",
			                 h->seq, 0);
		if ((st = arrived(ep, req, &a)))
			return st;
		return h->type == VB_RTS ? vb_repost(ep, 0, slot) : CB_OK;
	}
	if (h->seq != next || ep->arr_tail - ep->arr_head == VB_ARRIVALS)
		return vb_ep_err(ep, CB_ERR_PROTO,
		                 "sent message %llu where this rank expected "
		                 "%llu",
		                 h->seq, next);
	ep->arr[ep->arr_tail++ % VB_ARRIVALS] = a;
	/* an EAGER keeps its slot until its receive takes it */
	return h->type == VB_RTS ? vb_repost(ep, 0, slot) : CB_OK;
}

static cb_status_t recv_done(struct cb_tp_ep *ep, int rail, int slot,
                             const struct ibv_wc *wc)
{
	struct vb_qp *q = &ep->q[rail];
	const uint8_t *buf = vb_recv_slot(q, slot);
	struct vb_wire_win w = {
		.nrails = ep->nrails,
		.rail = rail,
		.credits = q->credits,
		.recv_seq = ep->recv_seq,
		.arrivals = ep->arr_tail - ep->arr_head,
		.send_seq = ep->send_seq,
	};
	struct vb_hdr hd, *h = &hd;
	char why[160];
	cb_status_t st = CB_OK;

	if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
		struct vb_imm m;
		if (vb_wire_imm(ntohl(wc->imm_data), &w, &m, why, sizeof(why)))
			return vb_ep_say(ep, CB_ERR_PROTO, why);
		st = m.rndv ? rndv_in(ep, m.seq, m.k, m.sized, ~(uint64_t)0)
		            : notify_in(ep, m.value);
		return st ? st : vb_repost(ep, rail, slot);
	}
	if (vb_wire_msg(buf, wc->byte_len, &w, h, why, sizeof(why)))
		return vb_ep_say(ep, CB_ERR_PROTO, why);
	q->credits += h->credits;
	switch (h->type) {
	case VB_EAGER:
	case VB_RTS:
		return message_in(ep, slot, h);
	case VB_RTR:
		ep->rtr[h->seq % VB_RNDV_Q].seq = h->seq;
		ep->rtr[h->seq % VB_RNDV_Q].got = 1;
		ep->rtr[h->seq % VB_RNDV_Q].addr = h->addr;
		ep->rtr[h->seq % VB_RNDV_Q].cap = h->bytes;
		memcpy(ep->rtr[h->seq % VB_RNDV_Q].rkey, h->rkey,
		       sizeof(h->rkey));
		break;
	case VB_FRAG:
		st = frag_in(ep, h, buf + VB_HDR);
		break;
	case VB_FIN:
		st = rndv_in(ep, h->seq, (int)h->addr, 1, h->bytes);
		break;
	case VB_NOTIFY:
		st = notify_in(ep, (uint32_t)h->tag);
		break;
	case VB_HELLO:
		st = vb_hello_in(ep, rail);
		break;
	case VB_CREDIT:
		break;
	default: /* vb_wire_msg knows every type */
		break;
	}
	return st ? st : vb_repost(ep, rail, slot);
}

/* Signalled send @seq completed: it and everything before it. */
static void send_done(struct cb_tp_ep *ep, int rail, uint64_t seq)
{
	struct vb_qp *q = &ep->q[rail];

	while (q->sq_done <= seq && q->sq_done < q->sq_posted) {
		struct cb_tp_req *o = q->owner[q->sq_done % VB_SEND_SLOTS];
		q->owner[q->sq_done % VB_SEND_SLOTS] = NULL;
		/* all of a request's work requests are posted before any
		 * completion is polled, so zero means all done */
		if (o && --o->priv.u64[R_WAIT] == 0)
			o->priv.u64[R_DONE] = 1;
		q->sq_done++;
	}
}

static cb_status_t poll_one(struct cb_tp_ctx *ctx, int i, struct ibv_cq *cq,
                            int *moved)
{
	struct ibv_wc wc[32];
	int n;
	cb_status_t st;

	while ((n = ibv_poll_cq(cq, 32, wc)) > 0) {
		*moved = 1;
		for (int k = 0; k < n; k++) {
			const struct ibv_wc *w = &wc[k];
			int peer = (int)((w->wr_id & ~VB_WR_RECV) >> 40);
			int rail = (int)((w->wr_id >> 36) & 15);
			struct cb_tp_ep *ep = ctx->eps[peer];
			if (!ep || ep->closed)
				continue; /* given up: its echoes */
			if (w->status == IBV_WC_WR_FLUSH_ERR) {
				if (!ctx->flush_deadline_ns) {
					ctx->flush_wc = *w;
					ctx->flush_rail = rail;
					ctx->flush_deadline_ns =
					        ctx->host->now_ns(ctx->host) +
					        1000000000ull;
				}
				continue;
			}
			if (w->status != IBV_WC_SUCCESS)
				return vb_wc_fail(ctx, rail, w);
			if (w->wr_id & VB_WR_RECV) {
				st = recv_done(ep, rail,
				               (int)(w->wr_id & VB_WR_LOW), w);
				if (st)
					return st;
			} else {
				send_done(ep, rail, w->wr_id & VB_WR_LOW);
			}
		}
	}
	if (n < 0)
		return ctx->host->fail(ctx->host, CB_ERR_SYS,
		                       "verbs: polling %s's CQ failed",
		                       ctx->rail[i].name);
	return CB_OK;
}

cb_status_t vb_poll_cq(struct cb_tp_ctx *ctx, int i, int *moved)
{
	const struct vb_rail *r = &ctx->rail[i];
	cb_status_t st;

	for (int c = 0; c < r->ncq; c++)
		if ((st = poll_one(ctx, i, r->cqs[c].cq, moved)))
			return st;
	return CB_OK;
}

static const char *wc_meaning(enum ibv_wc_status s)
{
	switch (s) {
	case IBV_WC_RETRY_EXC_ERR:
		return "stopped answering";
	case IBV_WC_RNR_RETRY_EXC_ERR:
		return "had no receive posted for too long";
	case IBV_WC_REM_ACCESS_ERR:
		return "refused the access (key or bounds)";
	case IBV_WC_LOC_LEN_ERR:
	case IBV_WC_REM_INV_REQ_ERR:
		return "sent more than the receive holds";
	case IBV_WC_WR_FLUSH_ERR:
		return "failed earlier: the queue pair was flushed";
	default:
		return "failed";
	}
}

cb_status_t vb_wc_fail(struct cb_tp_ctx *ctx, int rail, const struct ibv_wc *wc)
{
	int peer = (int)((wc->wr_id & ~VB_WR_RECV) >> 40);
	struct cb_tp_ep *ep = peer < ctx->host->world ? ctx->eps[peer] : NULL;
	const struct vb_rail *r = &ctx->rail[rail];

	if (!ep)
		return ctx->host->fail(ctx->host, CB_ERR_PEER,
		                       "verbs: %s on %s:%d (QP 0x%x)",
		                       ibv_wc_status_str(wc->status), r->name,
		                       r->port, wc->qp_num);
	if (ep->err)
		return ep->err;
	return ep->err = ctx->host->fail(
	               ctx->host, CB_ERR_PEER,
	               "verbs: %s: peer %d (%s, %s:%d) %s (QP 0x%x on %s:%d)",
	               ibv_wc_status_str(wc->status), peer,
	               tpu_host(ctx->host, peer),
	               ep->peer_dev[rail][0] ? ep->peer_dev[rail] : "?",
	               ep->peer_port[rail], wc_meaning(wc->status), wc->qp_num,
	               r->name, r->port);
}

/* The device stopped queue pair @qpn (an asynchronous event of type @t). */
static cb_status_t qp_event(struct cb_tp_ctx *ctx, uint32_t qpn,
                            enum ibv_event_type t)
{
	for (int k = 0; k < ctx->nactive; k++) {
		struct cb_tp_ep *ep = ctx->eps[ctx->active[k]];
		for (int j = 0; j < ep->nrails; j++) {
			if (!ep->q[j].qp || ep->q[j].qp->qp_num != qpn)
				continue;
			if (ep->err)
				return ep->err;
			if (t == IBV_EVENT_QP_ACCESS_ERR)
				return ep->err = ctx->host->fail(
				               ctx->host, CB_ERR_PEER,
				               "verbs: rank %d (host %s) wrote "
				               "with a "
				               "wrong key or outside the "
				               "memory this "
				               "rank gave it: access refused "
				               "on queue "
				               "pair 0x%x, %s:%d",
				               ep->peer,
				               tpu_host(ctx->host, ep->peer),
				               qpn, ctx->rail[j].name,
				               ctx->rail[j].port);
			return ep->err = ctx->host->fail(
			               ctx->host, CB_ERR_PEER,
			               "verbs: %s on the queue pair 0x%x to "
			               "rank "
			               "%d (host %s) on %s:%d: the device "
			               "stopped "
			               "it",
			               ibv_event_type_str(t), qpn, ep->peer,
			               tpu_host(ctx->host, ep->peer),
			               ctx->rail[j].name, ctx->rail[j].port);
		}
	}
	return CB_OK;
}

/* Asynchronous events: a port that went down, a QP the device killed, a
 * device that failed, a CQ that overran: each ends the run, one line. */
cb_status_t vb_async_events(struct cb_tp_ctx *ctx)
{
	for (int i = 0; i < ctx->nrails; i++) {
		struct vb_rail *r = &ctx->rail[i];
		struct ibv_async_event ev;
		if (!ctx->async_fl)
			fcntl(r->ctx->async_fd, F_SETFL,
			      fcntl(r->ctx->async_fd, F_GETFL) | O_NONBLOCK);
		while (ibv_get_async_event(r->ctx, &ev) == 0) {
			enum ibv_event_type t = ev.event_type;
			int on_qp = t == IBV_EVENT_QP_FATAL ||
			            t == IBV_EVENT_QP_REQ_ERR ||
			            t == IBV_EVENT_QP_ACCESS_ERR;
			uint32_t qpn = on_qp ? ev.element.qp->qp_num : 0;
			cb_status_t st;
			ibv_ack_async_event(&ev);
			if (t == IBV_EVENT_PORT_ERR)
				return ctx->host->fail(
				        ctx->host, CB_ERR_PEER,
				        "verbs: port %s:%d went down (%s)",
				        r->name, r->port,
				        ibv_event_type_str(t));
			if (t == IBV_EVENT_DEVICE_FATAL)
				return ctx->host->fail(
				        ctx->host, CB_ERR_SYS,
				        "verbs: device %s failed (%s): every "
				        "queue pair on it is gone",
				        r->name, ibv_event_type_str(t));
			if (t == IBV_EVENT_CQ_ERR)
				return ctx->host->fail(
				        ctx->host, CB_ERR_SYS,
				        "verbs: a completion queue on %s:%d "
				        "overran (%s; %d entries for up to %d "
				        "queue pairs): completions were lost",
				        r->name, r->port, ibv_event_type_str(t),
				        r->cqe, r->cq_qps);
			if (on_qp && (st = qp_event(ctx, qpn, t)))
				return st;
			ctx->host->log(ctx->host, CB_TP_LOG_INFO, "%s:%d: %s",
			               r->name, r->port, ibv_event_type_str(t));
		}
	}
	ctx->async_fl = 1;
	return CB_OK;
}
