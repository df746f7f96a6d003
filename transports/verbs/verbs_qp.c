/* SPDX-License-Identifier: MIT */
/*
 * transports/verbs/verbs_qp.c - what one queue pair does on its own: its
 * completion queue (shared by up to cq_qps QPs of a rail), posting its
 * receive slots and its sends (credits, selective signalling), and the one
 * line an endpoint's failure is.
 *
 * The bottom of the transport's files but the pure wire checks
 * (verbs_wire.c) and the devices (verbs_dev.c): connections (verbs_conn.c),
 * the receiving side (verbs_recv.c) and the data path (verbs_data.c) call
 * down into it, verbs.c (the ops table) into all of them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transports/verbs/verbs.h"

/*
 * Completion queues.  A QP can have VB_CQE_PER_QP completions queued (every
 * send and receive it may post), so a CQ of N such entries serves N QPs and
 * can never overrun; a rail gets another CQ when its QPs fill one (no
 * ibv_resize_cq: siw and others have none).  A CQ holds up to 64 QPs, fewer
 * if the device's max_cqe is smaller; one that cannot hold one QP's
 * completions is refused with one line.
 */
cb_status_t vb_cq_size(struct cb_tp_ctx *ctx, struct vb_rail *r)
{
	const struct cb_tp_host *h = ctx->host;
	int peers = h->world < 64 ? h->world : 64;
	struct ibv_device_attr da;

	if (ibv_query_device(r->ctx, &da))
		da.max_cqe = VB_CQE_PER_QP * peers;
	if (da.max_cqe < VB_CQE_PER_QP)
		return h->fail(h, CB_ERR_UNSUPPORTED,
		               "verbs: %s holds at most %d completions a queue "
		               "(max_cqe), and one queue pair needs %d",
		               r->name, da.max_cqe, VB_CQE_PER_QP);
	r->cq_qps = da.max_cqe / VB_CQE_PER_QP;
	if (r->cq_qps > peers)
		r->cq_qps = peers;
	r->cqe = r->cq_qps * VB_CQE_PER_QP;
	return CB_OK;
}

cb_status_t vb_cq_attach(struct cb_tp_ctx *ctx, int rail, int *cqi)
{
	struct vb_rail *r = &ctx->rail[rail];
	struct vb_cq *more;
	int i = 0;

	while (i < r->ncq && r->cqs[i].nqp >= r->cq_qps)
		i++;
	if (i == r->ncq) {
		more = realloc(r->cqs, (size_t)(r->ncq + 1) * sizeof(*more));
		if (!more)
			return ctx->host->fail(ctx->host, CB_ERR_NOMEM,
			                       "verbs: out of memory");
		r->cqs = more;
		more[i].nqp = 0;
		more[i].cq = ibv_create_cq(r->ctx, r->cqe, NULL, NULL, 0);
		if (!more[i].cq)
			return ctx->host->fail(
			        ctx->host, CB_ERR_SYS,
			        "verbs: cannot make completion queue %d "
			        "(%d entries) on %s: %s",
			        i + 1, r->cqe, r->name, strerror(errno));
		r->ncq++;
		if (i > 0)
			ctx->host->log(ctx->host, CB_TP_LOG_INFO,
			               "%s: completion queue %d of %d entries, "
			               "for queue pairs %d to %d",
			               r->name, i + 1, r->cqe,
			               i * r->cq_qps + 1, (i + 1) * r->cq_qps);
	}
	r->cqs[i].nqp++;
	*cqi = i;
	return CB_OK;
}

void vb_cq_detach(struct cb_tp_ctx *ctx, int rail, int cqi)
{
	struct vb_rail *r = &ctx->rail[rail];

	if (cqi >= 0 && cqi < r->ncq && r->cqs[cqi].nqp > 0)
		r->cqs[cqi].nqp--;
}

cb_status_t vb_ep_say(struct cb_tp_ep *ep, cb_status_t st, const char *line)
{
	const struct cb_tp_host *h = ep->ctx->host;

	if (ep->err)
		return ep->err;
	return ep->err = h->fail(h, st, "verbs: rank %d (host %s) %s", ep->peer,
	                         tpu_host(ep->ctx->host, ep->peer), line);
}

cb_status_t vb_ep_err(struct cb_tp_ep *ep, cb_status_t st, const char *fmt,
                      unsigned long long a, unsigned long long b)
{
	char line[256];

	if (ep->err)
		return ep->err;
	snprintf(line, sizeof(line), fmt, a, b);
	return vb_ep_say(ep, st, line);
}

cb_status_t vb_repost(struct cb_tp_ep *ep, int rail, int slot)
{
	struct vb_qp *q = &ep->q[rail];
	struct ibv_sge sge = { (uintptr_t)vb_recv_slot(q, slot), VB_SLOT_BYTES,
		               q->slots_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id =
		                          VB_WR_RECV | vb_wr_id(ep->peer, rail,
		                                                (uint64_t)slot),
		                  .sg_list = &sge,
		                  .num_sge = 1 },
	                   *bad;

	if (ibv_post_recv(q->qp, &wr, &bad))
		return vb_ep_err(ep, CB_ERR_SYS,
		                 "cannot re-post a receive (error %llu)%.0llu",
		                 (unsigned long long)errno, 0);
	q->unreported++;
	return CB_OK;
}

cb_status_t vb_post_recv_slots(struct cb_tp_ep *ep, int rail)
{
	cb_status_t st;

	for (int i = 0; i < VB_RECV_SLOTS; i++)
		if ((st = vb_repost(ep, rail, i)))
			return st;
	ep->q[rail].unreported = 0; /* the initial credits are implied */
	return CB_OK;
}

cb_status_t vb_post_wr(struct cb_tp_ep *ep, int rail, struct ibv_send_wr *wr,
                       struct cb_tp_req *owner)
{
	struct vb_qp *q = &ep->q[rail];
	uint64_t seq = q->sq_posted;
	struct ibv_send_wr *bad;

	if (owner || seq - q->sq_last_signal >= VB_SIGNAL_EVERY ||
	    !vb_sq_room(q, 2)) {
		wr->send_flags |= IBV_SEND_SIGNALED;
		q->sq_last_signal = seq;
	}
	q->owner[seq % VB_SEND_SLOTS] = owner;
	if (owner)
		owner->priv.u64[R_WAIT]++;
	wr->wr_id = vb_wr_id(ep->peer, rail, seq);
	if (ibv_post_send(q->qp, wr, &bad)) {
		if (owner)
			owner->priv.u64[R_WAIT]--;
		return vb_ep_err(ep, CB_ERR_SYS,
		                 "cannot post a send (error %llu)%.0llu",
		                 (unsigned long long)errno, 0);
	}
	q->sq_posted++;
	return CB_OK;
}

cb_status_t vb_send_msg(struct cb_tp_ep *ep, int rail, const struct vb_hdr *h,
                        const void *payload, size_t n, uint32_t lkey,
                        struct cb_tp_req *owner, int *done)
{
	struct vb_qp *q = &ep->q[rail];
	const struct vb_rail *r = &ep->ctx->rail[rail];
	int ctrl = h->type == VB_CREDIT || h->type == VB_HELLO;
	struct ibv_sge sge[2];
	int nsge = 1;

	if (!vb_may_send(ep, q))
		return ep->err ? ep->err : CB_AGAIN;
	if (q->credits <= (ctrl ? 0 : VB_CREDIT_RESERVE) || !vb_sq_room(q, 1))
		return CB_AGAIN;
	uint8_t *slot = vb_send_slot(q, q->sq_posted);
	struct vb_hdr *hd = (struct vb_hdr *)slot;
	*hd = *h;
	hd->credits = (uint16_t)(q->unreported > 65535 ? 65535 : q->unreported);
	q->unreported -= hd->credits;
	sge[0] = (struct ibv_sge){ (uintptr_t)slot, (uint32_t)VB_HDR,
		                   q->slots_mr->lkey };
	if (n && !lkey) {
		memcpy(slot + VB_HDR, payload, n);
		sge[0].length += (uint32_t)n;
	} else if (n) {
		sge[nsge++] = (struct ibv_sge){ (uintptr_t)payload, (uint32_t)n,
			                        lkey };
	}
	struct ibv_send_wr wr = { .sg_list = sge,
		                  .num_sge = nsge,
		                  .opcode = IBV_WR_SEND };
	int inl = VB_HDR + n <= r->max_inline;
	if (inl)
		wr.send_flags = IBV_SEND_INLINE;
	/* the payload has left the user's buffer once copied or inline; a
	 * request with nothing to send (FIN, a zero-byte message) still
	 * completes with its work request */
	*done = n && (!lkey || inl);
	cb_status_t st = vb_post_wr(ep, rail, &wr, *done ? NULL : owner);
	if (!st)
		q->credits--;
	return st;
}

cb_status_t vb_send_ctrl(struct cb_tp_ep *ep, int rail, uint8_t type,
                         uint32_t seq, uint64_t tag)
{
	struct vb_hdr h = { .type = type, .seq = seq, .tag = tag };
	int done;
	cb_status_t st = vb_send_msg(ep, rail, &h, NULL, 0, 0, NULL, &done);

	return st == CB_AGAIN ? CB_OK : st; /* a credit return can wait */
}
