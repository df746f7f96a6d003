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

/* A receive's R_KIND: RECV, with flags. */
enum { RECV = 4, RECV_STARTED = 8, RECV_DEV = 16 };

static inline CUdeviceptr dptr(const void *p)
{
	return (CUdeviceptr)(uintptr_t)p;
}

static int gpu_send_progress(struct cb_tp_ep *ep);

static cb_status_t gpu_post_send(struct cb_tp_ep *ep, struct cb_tp_req *req)
{
	tpu_q_push(&ep->sq_head, &ep->sq_tail, req);
	/* nothing ahead of it: publish now, the peer may be polling */
	if (ep->sq_head == req)
		gpu_send_progress(ep);
	return ep->err;
}

cb_status_t gpu_isend(struct cb_tp_ep *ep, const void *buf, size_t bytes,
                      const struct cb_tp_mem *mem, uint64_t tag,
                      struct cb_tp_req *req)
{
	const struct cb_tp_mr *mr = mem->mr;

	if (ep->err)
		return ep->err;
	req->tag = tag;
	req->bytes = bytes;
	req->priv.u64[R_DONE] = 0;
	req->priv.ptr[R_BUF] = (void *)buf;
	req->priv.ptr[R_MR] = (void *)mr;
	req->priv.u64[R_OFF] = 0;
	req->priv.u64[R_SEQ] = 0;
	req->priv.u64[R_EV] = R_NOEV;
	req->priv.u64[R_KIND] =
	        mem->kind == CB_MEM_GPU && bytes ? SEND_RTS : SEND_EAGER;
	if (req->priv.u64[R_KIND] == SEND_RTS &&
	    (!mr || mr->kind != CB_MEM_GPU || !mr->have_handle))
		return ep->ctx->host->fail(
		        ep->ctx->host, CB_ERR_UNSUPPORTED,
		        "gpu: a send from device memory that has no IPC handle "
		        "(not registered, or not from cuMemAlloc)");
	return gpu_post_send(ep, req);
}

cb_status_t gpu_put(struct cb_tp_ep *ep, const void *buf, size_t bytes,
                    const struct cb_tp_mem *mem, struct cb_tp_rmem *rmem,
                    uint64_t roff, uint32_t notify, struct cb_tp_req *req)
{
	struct cb_tp_ctx *ctx = ep->ctx;
	cb_status_t st;
	CUresult r;
	int ev;

	if (ep->err)
		return ep->err;
	if (roff > rmem->bytes || bytes > rmem->bytes - roff)
		return ctx->host->fail(
		        ctx->host, CB_ERR_INVALID,
		        "gpu: a put of %zu bytes at offset %llu does not fit "
		        "rank %d's %llu-byte exported buffer",
		        bytes, (unsigned long long)roff, ep->peer,
		        (unsigned long long)rmem->bytes);
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
	req->tag = notify;
	req->bytes = bytes;
	req->priv.u64[R_DONE] = 0;
	req->priv.u64[R_KIND] = SEND_PUT;
	req->priv.u64[R_EV] = (uint64_t)ev;
	req->priv.u64[R_OFF] = 0; /* 1: the copy is done, the notification
	                            is not out yet */
	return gpu_post_send(ep, req);
}

cb_status_t gpu_irecv(struct cb_tp_ep *ep, void *buf, size_t cap,
                      const struct cb_tp_mem *mem, uint64_t tag,
                      struct cb_tp_req *req)
{
	if (ep->err)
		return ep->err;
	req->tag = tag;
	req->bytes = 0;
	req->priv.u64[R_DONE] = 0;
	req->priv.ptr[R_BUF] = buf;
	req->priv.u64[R_CAP] = cap;
	req->priv.u64[R_OFF] = 0;
	req->priv.u64[R_KIND] = RECV | (mem->kind == CB_MEM_GPU ? RECV_DEV : 0);
	req->priv.ptr[R_SRC] = NULL;
	req->priv.u64[R_EV] = R_NOEV;
	req->priv.ptr[R_RED] = NULL;
	tpu_q_push(&ep->rq_head, &ep->rq_tail, req);
	return CB_OK;
}

cb_status_t gpu_irecv_reduce(struct cb_tp_ep *ep, void *dst, const void *src,
                             size_t bytes, const struct cb_tp_mem *mem,
                             const struct cb_tp_reduce *red, uint64_t tag,
                             struct cb_tp_req *req)
{
	cb_status_t st = gpu_irecv(ep, dst, bytes, mem, tag, req);

	req->priv.ptr[R_SRC] = (void *)src;
	req->priv.ptr[R_RED] = (void *)red;
	return st;
}

cb_status_t gpu_test(struct cb_tp_ep *ep, struct cb_tp_req *req)
{
	if (req->priv.u64[R_DONE])
		return CB_OK;
	if (req->priv.u64[R_KIND] == SEND_RTS && req->priv.u64[R_SEQ] &&
	    atomic_load_explicit(&ep->tx->done, memory_order_acquire) >=
	            req->priv.u64[R_SEQ]) {
		req->priv.u64[R_DONE] = 1;
		return CB_OK;
	}
	return ep->err ? ep->err : CB_AGAIN;
}

/* ---- the slots ---- */

static cb_status_t ep_fail(struct cb_tp_ep *ep, cb_status_t st)
{
	if (!ep->err)
		ep->err = st;
	return ep->err;
}

/* A put at the head of the queue: its copy done, then its notification. */
static int gpu_send_put(struct cb_tp_ep *ep, struct cb_tp_req *req)
{
	struct cb_tp_ctx *ctx = ep->ctx;
	uint32_t notify = (uint32_t)req->tag;

	if (!req->priv.u64[R_OFF]) {
		int ev = (int)req->priv.u64[R_EV];
		CUresult r = ctx->cu.EventQuery(ep->ev[ev]);
		if (r == CUDA_ERROR_NOT_READY)
			return 0;
		gpu_ev_give(ep->ev_free, &ep->nev_free, ev);
		req->priv.u64[R_EV] = R_NOEV;
		if (r != CUDA_SUCCESS) {
			ep_fail(ep, gpu_cu_fail(ctx, r, "a put"));
			return 0;
		}
		req->priv.u64[R_OFF] = 1;
	}
	if (notify && !lring_tx_notify(&ep->ring, notify))
		return 0;
	ctx->stats.put_msgs++;
	ctx->stats.put_bytes += req->bytes;
	req->priv.u64[R_DONE] = 1;
	return 1;
}

static int gpu_send_progress(struct cb_tp_ep *ep)
{
	struct cb_tp_ctx *ctx = ep->ctx;
	int moved = 0;

	while (ep->sq_head && !ep->err) {
		struct cb_tp_req *req = ep->sq_head;
		struct lring_hdr *s;

		if (req->priv.u64[R_KIND] == SEND_PUT) {
			if (!gpu_send_put(ep, req))
				break;
			tpu_q_pop(&ep->sq_head, &ep->sq_tail);
			moved = 1;
			continue;
		}
		if (!(s = lring_tx_slot(&ep->ring)))
			break;
		s->tag = req->tag;
		s->bytes = req->bytes;
		moved = 1;
		if (req->priv.u64[R_KIND] == SEND_RTS) {
			struct gpu_export x;
			gpu_export_of(ctx, req->priv.ptr[R_MR],
			              (uint64_t)(uintptr_t)req->priv.ptr[R_BUF],
			              req->bytes, &x);
			s->kind = GPU_RTS;
			s->off = 0;
			s->frag_bytes = sizeof(x);
			memcpy(lring_data(s), &x, sizeof(x));
			req->priv.u64[R_SEQ] = ++ep->tx_rts;
			lring_tx_publish(&ep->ring, s);
			tpu_q_pop(&ep->sq_head, &ep->sq_tail);
			ctx->stats.zcopy_msgs++;
			ctx->stats.zcopy_bytes += req->bytes;
			continue;
		}
		size_t off = lring_tx_eager(&ep->ring, s, GPU_EAGER,
		                            req->priv.ptr[R_BUF], req->bytes,
		                            req->priv.u64[R_OFF]);
		req->priv.u64[R_OFF] = off;
		if (off == req->bytes) {
			req->priv.u64[R_DONE] = 1;
			tpu_q_pop(&ep->sq_head, &ep->sq_tail);
			ctx->stats.eager_msgs++;
			ctx->stats.eager_bytes += req->bytes;
		}
	}
	return moved;
}

static cb_status_t gpu_recv_fail(struct cb_tp_ep *ep, cb_status_t st,
                                 unsigned long long a, unsigned long long b)
{
	const struct cb_tp_host *h = ep->ctx->host;

	if (st == CB_ERR_PROTO)
		return ep_fail(ep, h->fail(h, st,
		                           "gpu: rank %d sent message tag "
		                           "0x%llx where this rank expected "
		                           "0x%llx (schedules disagree)",
		                           ep->peer, a, b));
	return ep_fail(ep,
	               h->fail(h, st,
	                       "gpu: rank %d sent %llu bytes to a %llu-byte "
	                       "receive",
	                       ep->peer, a, b));
}

cb_status_t gpu_notify_poll(struct cb_tp_ep *ep, uint32_t *notify)
{
	if (ep->err)
		return ep->err;
	return lring_notify_poll(&ep->ring, notify);
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
			        ep->peer);
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
		if (red)
			ctx->host->reduce(
			        ctx->host, red->dtype, red->op, dst,
			        (const char *)req->priv.ptr[R_SRC] + s->off,
			        lring_data(s), s->frag_bytes / red->elem_bytes);
		else
			memcpy(dst, lring_data(s), s->frag_bytes);
		return CB_OK;
	}
	/* host data into device memory (mixed kinds: correct, not fast) */
	if (red)
		return ctx->host->fail(ctx->host, CB_ERR_UNSUPPORTED,
		                       "gpu: rank %d's host data cannot be "
		                       "reduced into device memory here",
		                       ep->peer);
	memcpy(ctx->bounce, lring_data(s), s->frag_bytes);
	r = ctx->cu.MemcpyAsync(dptr(dst), dptr(ctx->bounce), s->frag_bytes,
	                        ep->stream);
	if (r == CUDA_SUCCESS)
		r = ctx->cu.StreamSynchronize(ep->stream);
	return r == CUDA_SUCCESS ? CB_OK
	                         : gpu_cu_fail(ctx, r, "copying to the GPU");
}

static int gpu_recv_progress(struct cb_tp_ep *ep)
{
	struct cb_tp_ctx *ctx = ep->ctx;
	int moved = lring_take_notifies(&ep->ring);
	cb_status_t st;

	while (ep->rq_head && !ep->err) {
		struct cb_tp_req *req = ep->rq_head;
		const struct lring_hdr *s = lring_rx_next(&ep->ring, &moved);

		if (!s)
			break;
		if (!(req->priv.u64[R_KIND] & RECV_STARTED)) {
			if (s->tag != req->tag) {
				gpu_recv_fail(ep, CB_ERR_PROTO, s->tag,
				              req->tag);
				return moved;
			}
			if (s->bytes > req->priv.u64[R_CAP]) {
				gpu_recv_fail(ep, CB_ERR_TRUNCATE, s->bytes,
				              req->priv.u64[R_CAP]);
				return moved;
			}
			req->priv.u64[R_KIND] |= RECV_STARTED;
			req->bytes = s->bytes;
		}
		if (s->kind == GPU_RTS) {
			struct gpu_export x;
			int ev = gpu_ev_take(ep->ev_free, &ep->nev_free);
			if (ev < 0)
				break; /* 64 copies in flight: later */
			memcpy(&x, lring_data(s), sizeof(x));
			if (s->frag_bytes != sizeof(x) ||
			    !gpu_export_ok(ep, &x) || x.bytes != s->bytes) {
				gpu_ev_give(ep->ev_free, &ep->nev_free, ev);
				ep_fail(ep,
				        ctx->host->fail(
				                ctx->host, CB_ERR_PROTO,
				                "gpu: rank %d's device buffer "
				                "description does not parse",
				                ep->peer));
				return moved;
			}
			if ((st = gpu_start_rts(ep, req, &x, ev))) {
				gpu_ev_give(ep->ev_free, &ep->nev_free, ev);
				ep_fail(ep, st);
				return moved;
			}
			lring_rx_consume(&ep->ring);
			tpu_q_pop(&ep->rq_head, &ep->rq_tail);
			tpu_q_push(&ep->fq_head, &ep->fq_tail, req);
			moved = 1;
			continue;
		}
		if ((st = gpu_recv_eager(ep, req, s))) {
			ep_fail(ep, st);
			return moved;
		}
		req->priv.u64[R_OFF] += s->frag_bytes;
		lring_rx_consume(&ep->ring);
		moved = 1;
		if (req->priv.u64[R_OFF] == req->bytes) {
			req->priv.u64[R_DONE] = 1;
			tpu_q_pop(&ep->rq_head, &ep->rq_tail);
		}
	}
	return moved;
}

/* Receives whose copies were queued: done when their events are, in order;
 * each one frees the sender's buffer. */
static int gpu_copies_progress(struct cb_tp_ep *ep)
{
	struct cb_tp_ctx *ctx = ep->ctx;
	int moved = 0;

	while (ep->fq_head && !ep->err) {
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
			         ep->peer);
			ep_fail(ep, gpu_cu_fail(ctx, r, what));
			return moved;
		}
		tpu_q_pop(&ep->fq_head, &ep->fq_tail);
		req->priv.u64[R_DONE] = 1;
		atomic_fetch_add_explicit(&ep->rx->done, 1,
		                          memory_order_release);
		moved = 1;
	}
	return moved;
}

static cb_status_t gpu_ep_progress(struct cb_tp_ep *ep, int *moved)
{
	if (ep->err)
		return ep->err;
	if (ep->sq_head)
		*moved |= gpu_send_progress(ep);
	*moved |= gpu_recv_progress(ep);
	if (ep->fq_head)
		*moved |= gpu_copies_progress(ep);
	return ep->err;
}

cb_status_t gpu_progress(struct cb_tp_ctx *ctx)
{
	return tpu_progress(ctx->eps, ctx->active, ctx->nactive,
	                    gpu_ep_progress);
}
