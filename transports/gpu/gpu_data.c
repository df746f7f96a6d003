/* SPDX-License-Identifier: MIT */
/*
 * transports/gpu/gpu_data.c - the gpu transport's data path: sends (an RTS
 * for device memory, slot fragments for host memory), receives (a copy or a
 * fused reduction from the sender's mapped buffer, on the peer's stream,
 * completed by an event polled here), puts and notifications.  The design
 * is in gpu.c.
 *
 * Per endpoint: sends and puts share one FIFO (so a put's notification is
 * ordered with the messages around it); receives wait in a second one until
 * their message arrives, and those moving device memory wait in a third
 * until their event has completed.  The receiver bumps the channel's done
 * counter in the order the RTSs came, which is the order their copies
 * complete (one stream per peer), so the sender's n-th RTS is done when the
 * counter reaches n.
 */
#include <stdio.h>
#include <string.h>

#include "transports/gpu/gpu.h"

static inline CUdeviceptr dptr(const void *p)
{
	return (CUdeviceptr)(uintptr_t)p;
}

/* A put at the head of the queue: its copy done, then its notification. */
static int gpu_send_put(struct cb_tp_ep *ep, struct cb_tp_req *req)
{
	struct cb_tp_ctx *ctx = ep->ctx;

	if (!req->priv.u64[R_OFF]) {
		int ev = (int)req->priv.u64[R_EV];
		CUresult r = ctx->cu.EventQuery(ep->ev[ev]);
		if (r == CUDA_ERROR_NOT_READY)
			return 0;
		gpu_ev_give(ep->ev_free, &ep->nev_free, ev);
		req->priv.u64[R_EV] = R_NOEV;
		if (r != CUDA_SUCCESS) {
			lp_fail(&ep->lp, gpu_cu_fail(ctx, r, "a put"));
			return 0;
		}
		req->priv.u64[R_OFF] = 1;
	}
	return lp_put_notify(&ep->lp, req);
}

/* A send from device memory: an RTS, the slot describing our buffer. */
static uint32_t gpu_send_rts(struct cb_tp_ep *ep, struct cb_tp_req *req,
                             struct lring_hdr *s)
{
	struct gpu_export x;

	if (req->priv.u64[R_KIND] != SEND_SINGLE)
		return 0;
	gpu_export_of(ep->ctx, req->priv.ptr[R_MR],
	              (uint64_t)(uintptr_t)req->priv.ptr[R_BUF], req->bytes,
	              &x);
	s->off = 0;
	memcpy(lring_data(s), &x, sizeof(x));
	ep->ctx->stats.zcopy_msgs++;
	ep->ctx->stats.zcopy_bytes += req->bytes;
	return sizeof(x);
}

static const struct lp_send_ops gpu_send_ops = { gpu_send_put, gpu_send_rts };

cb_status_t gpu_isend(struct cb_tp_ep *ep, const void *buf, size_t bytes,
                      const struct cb_tp_mem *mem, uint64_t tag,
                      struct cb_tp_req *req)
{
	const struct cb_tp_mr *mr = mem->mr;
	int rts = mem->kind == CB_MEM_GPU && bytes;

	if (ep->lp.err)
		return ep->lp.err;
	lp_send_init(req, tag, bytes, buf, rts ? SEND_SINGLE : SEND_EAGER, mr);
	req->priv.u64[R_EV] = R_NOEV;
	if (rts && (!mr || mr->kind != CB_MEM_GPU || !mr->have_handle))
		return ep->ctx->host->fail(
		        ep->ctx->host, CB_ERR_UNSUPPORTED,
		        "gpu: a send from device memory that has no IPC handle "
		        "(not registered, or not from cuMemAlloc)");
	return lp_post_send(&ep->lp, req, &gpu_send_ops);
}

cb_status_t gpu_put(struct cb_tp_ep *ep, const void *buf, size_t bytes,
                    const struct cb_tp_mem *mem, struct cb_tp_rmem *rmem,
                    uint64_t roff, uint32_t notify, struct cb_tp_req *req)
{
	struct cb_tp_ctx *ctx = ep->ctx;
	cb_status_t st;
	CUresult r;
	int ev;

	if (ep->lp.err)
		return ep->lp.err;
	if ((st = tpu_put_fits(ctx->host, "gpu", ep->lp.peer, bytes, roff,
	                       rmem->bytes)))
		return st;
	if ((ev = gpu_ev_take(ep->ev_free, &ep->nev_free)) < 0)
		return CB_AGAIN;
	st = gpu_launch_copy(ctx, ep->stream,
	                     mem->kind == CB_MEM_GPU ? ctx->copy_mode
	                                             : GPU_COPY_CE,
	                     rmem->local + roff, dptr(buf), bytes);
	if (!st &&
	    (r = ctx->cu.EventRecord(ep->ev[ev], ep->stream)) != CUDA_SUCCESS)
		st = gpu_cu_fail(ctx, r, "cuEventRecord");
	if (st) {
		gpu_ev_give(ep->ev_free, &ep->nev_free, ev);
		return st;
	}
	/* R_OFF 1: the copy is done, the notification is not out yet */
	lp_send_init(req, notify, bytes, buf, SEND_PUT, rmem);
	req->priv.u64[R_EV] = (uint64_t)ev;
	return lp_post_send(&ep->lp, req, &gpu_send_ops);
}

cb_status_t gpu_irecv(struct cb_tp_ep *ep, void *buf, size_t cap,
                      const struct cb_tp_mem *mem, uint64_t tag,
                      struct cb_tp_req *req)
{
	return gpu_irecv_reduce(ep, buf, NULL, cap, mem, NULL, tag, req);
}

cb_status_t gpu_irecv_reduce(struct cb_tp_ep *ep, void *dst, const void *src,
                             size_t bytes, const struct cb_tp_mem *mem,
                             const struct cb_tp_reduce *red, uint64_t tag,
                             struct cb_tp_req *req)
{
	req->priv.u64[R_EV] = R_NOEV;
	return lp_irecv(&ep->lp, req, dst, bytes, tag,
	                mem->kind == CB_MEM_GPU ? RECV_DEV : 0, src, red);
}

cb_status_t gpu_test(struct cb_tp_ep *ep, struct cb_tp_req *req)
{
	return lp_test(&ep->lp, req);
}

cb_status_t gpu_notify_poll(struct cb_tp_ep *ep, uint32_t *notify)
{
	return lp_notify_poll(&ep->lp, notify);
}

/*
 * Start moving an RTS's device buffer into @req: map the sender's
 * allocation (once), queue the copy or the fused reduction on the peer's
 * stream and record event @ev behind it.  A host destination (mixed kinds:
 * correct, not fast) is copied at once.
 */
static cb_status_t gpu_start_rts(struct cb_tp_ep *ep, struct cb_tp_req *req,
                                 const struct gpu_export *x, int ev)
{
	struct cb_tp_ctx *ctx = ep->ctx;
	const struct cb_tp_reduce *red = req->priv.ptr[R_RED];
	struct gpu_import *imp;
	cb_status_t st;
	CUresult r;

	if ((st = gpu_import_get(ep, x, &imp)))
		return st;
	CUdeviceptr peer = imp->base + (x->base - x->alloc_base);
	CUdeviceptr dst = dptr(req->priv.ptr[R_BUF]);
	if (!(req->priv.u64[R_KIND] & RECV_DEV)) {
		if (red)
			return ctx->host->fail(
			        ctx->host, CB_ERR_UNSUPPORTED,
			        "gpu: rank %d's device data cannot be reduced "
			        "into host memory here",
			        ep->lp.peer);
		st = gpu_launch_copy(ctx, ep->stream, GPU_COPY_CE, dst, peer,
		                     req->bytes);
		if (!st &&
		    (r = ctx->cu.StreamSynchronize(ep->stream)) != CUDA_SUCCESS)
			st = gpu_cu_fail(ctx, r, "copying to host memory");
	} else if (red) {
		st = gpu_launch_reduce(ctx, ep->stream, red, dst,
		                       dptr(req->priv.ptr[R_SRC]), peer,
		                       req->bytes / red->elem_bytes);
	} else {
		st = gpu_launch_copy(ctx, ep->stream, ctx->copy_mode, dst, peer,
		                     req->bytes);
	}
	if (!st &&
	    (r = ctx->cu.EventRecord(ep->ev[ev], ep->stream)) != CUDA_SUCCESS)
		st = gpu_cu_fail(ctx, r, "cuEventRecord");
	if (st)
		return st;
	/* held while the copy reads it, so it is not unmapped under it */
	imp->refs++;
	req->priv.u64[R_OFF] = (uint64_t)(imp - ep->imp);
	req->priv.u64[R_EV] = (uint64_t)ev;
	return CB_OK;
}

/* An eager fragment into the receive @req. */
static cb_status_t gpu_recv_eager(struct cb_tp_ep *ep, struct cb_tp_req *req,
                                  const struct lring_hdr *s)
{
	struct cb_tp_ctx *ctx = ep->ctx;
	const struct cb_tp_reduce *red = req->priv.ptr[R_RED];
	char *dst = (char *)req->priv.ptr[R_BUF] + s->off;
	CUresult r;

	if (!s->frag_bytes)
		return CB_OK;
	if (!(req->priv.u64[R_KIND] & RECV_DEV)) {
		lp_recv_host(ctx->host, req, s);
		return CB_OK;
	}
	/* host data into device memory (mixed kinds: correct, not fast) */
	if (red)
		return ctx->host->fail(ctx->host, CB_ERR_UNSUPPORTED,
		                       "gpu: rank %d's host data cannot be "
		                       "reduced into device memory here",
		                       ep->lp.peer);
	memcpy(ctx->bounce, lring_data(s), s->frag_bytes);
	r = ctx->cu.MemcpyAsync(dptr(dst), dptr(ctx->bounce), s->frag_bytes,
	                        ep->stream);
	if (r == CUDA_SUCCESS)
		r = ctx->cu.StreamSynchronize(ep->stream);
	return r == CUDA_SUCCESS ? CB_OK
	                         : gpu_cu_fail(ctx, r, "copying to the GPU");
}

/* An RTS into the receive @req: the copy (or the reduction) queued, the
 * receive waiting for its event. */
static int gpu_recv_rts(struct cb_tp_ep *ep, struct cb_tp_req *req,
                        const struct lring_hdr *s)
{
	const struct cb_tp_host *h = ep->ctx->host;
	struct gpu_export x;
	cb_status_t st;
	int ev = gpu_ev_take(ep->ev_free, &ep->nev_free);

	if (ev < 0)
		return 0; /* 64 copies in flight: later */
	memcpy(&x, lring_data(s), sizeof(x));
	if (s->frag_bytes != sizeof(x) || !gpu_export_ok(ep, &x) ||
	    x.bytes != s->bytes)
		st = h->fail(h, CB_ERR_PROTO,
		             "gpu: rank %d's device buffer description does "
		             "not parse",
		             ep->lp.peer);
	else
		st = gpu_start_rts(ep, req, &x, ev);
	if (st) {
		gpu_ev_give(ep->ev_free, &ep->nev_free, ev);
		lp_fail(&ep->lp, st);
		return 0;
	}
	lring_rx_consume(&ep->lp.ring);
	tpu_q_pop(&ep->lp.rq_head, &ep->lp.rq_tail);
	tpu_q_push(&ep->fq_head, &ep->fq_tail, req);
	return 1;
}

static const struct lp_recv_ops gpu_recv_ops = { gpu_recv_rts, gpu_recv_eager };

/* Receives whose copies were queued: done when their events are, in order;
 * each one frees the sender's buffer. */
static int gpu_copies_progress(struct cb_tp_ep *ep)
{
	struct cb_tp_ctx *ctx = ep->ctx;
	int moved = 0;

	while (ep->fq_head && !ep->lp.err) {
		struct cb_tp_req *req = ep->fq_head;
		int ev = (int)req->priv.u64[R_EV];
		CUresult r = ctx->cu.EventQuery(ep->ev[ev]);
		if (r == CUDA_ERROR_NOT_READY)
			break;
		gpu_ev_give(ep->ev_free, &ep->nev_free, ev);
		req->priv.u64[R_EV] = R_NOEV;
		ep->imp[req->priv.u64[R_OFF]].refs--;
		if (r != CUDA_SUCCESS) {
			char what[64];
			snprintf(what, sizeof(what), "a copy from rank %d",
			         ep->lp.peer);
			lp_fail(&ep->lp, gpu_cu_fail(ctx, r, what));
			return moved;
		}
		tpu_q_pop(&ep->fq_head, &ep->fq_tail);
		req->priv.u64[R_DONE] = 1;
		atomic_fetch_add_explicit(&ep->lp.rx->done, 1,
		                          memory_order_release);
		moved = 1;
	}
	return moved;
}

static cb_status_t gpu_ep_progress(struct cb_tp_ep *ep, int *moved)
{
	if (ep->lp.err)
		return ep->lp.err;
	if (ep->lp.sq_head)
		*moved |= lp_send_progress(&ep->lp, &gpu_send_ops);
	*moved |= lp_recv_progress(&ep->lp, &gpu_recv_ops);
	if (ep->fq_head)
		*moved |= gpu_copies_progress(ep);
	return ep->lp.err;
}

cb_status_t gpu_progress(struct cb_tp_ctx *ctx)
{
	return lp_progress(&ctx->lp, gpu_ep_progress);
}
