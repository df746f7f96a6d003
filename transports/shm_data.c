/* SPDX-License-Identifier: MIT */
/*
 * transports/shm_data.c - the shm transport's data path: sends, receives,
 * reductions on arrival, puts and notifications (see shm.c for the design).
 *
 * Per endpoint, sends and puts share one FIFO (so a put's notification is
 * ordered with the messages around it) and receives another; progress()
 * publishes what the peer's ring has room for and consumes what arrived.  A
 * notification at the head of the inbound ring is taken off whether or not a
 * receive is posted, into a small queue notify_poll() reads.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "transports/lseg.h"
#include "transports/shm.h"

static int shm_send_progress(struct cb_tp_ep *ep);

static cb_status_t shm_post_send(struct cb_tp_ep *ep, struct cb_tp_req *req)
{
	tpu_q_push(&ep->sq_head, &ep->sq_tail, req);
	/* Nothing queued before it: publish now, not at the next progress
	 * call; the peer may already be polling for it. */
	if (ep->sq_head == req)
		shm_send_progress(ep);
	return CB_OK;
}

/* What a send and a put set alike in @req: its tag (a put's: the
 * notification), its bytes and buffer, its kind (SEND_MSG or SEND_PUT) and
 * R_SRC (a send's registration, a put's rmem). */
static void shm_send_init(struct cb_tp_req *req, uint64_t tag, size_t bytes,
                          const void *buf, uint64_t kind, void *src)
{
	req->tag = tag;
	req->bytes = bytes;
	req->priv.u64[R_DONE] = 0;
	req->priv.ptr[R_BUF] = (void *)buf;
	req->priv.u64[R_CAP] = kind;
	req->priv.u64[R_RNDV] = 0;
	req->priv.ptr[R_SRC] = src;
}

cb_status_t shm_isend(struct cb_tp_ep *ep, const void *buf, size_t bytes,
                      const struct cb_tp_mem *mem, uint64_t tag,
                      struct cb_tp_req *req)
{
	if (ep->err)
		return ep->err;
	shm_send_init(req, tag, bytes, buf, SEND_MSG, mem->mr);
	req->priv.u64[R_OFF] = 0;
	return shm_post_send(ep, req);
}

cb_status_t shm_put(struct cb_tp_ep *ep, const void *buf, size_t bytes,
                    const struct cb_tp_mem *mem, struct cb_tp_rmem *rmem,
                    uint64_t roff, uint32_t notify, struct cb_tp_req *req)
{
	(void)mem;
	if (ep->err)
		return ep->err;
	if (roff > rmem->bytes || bytes > rmem->bytes - roff)
		return ep->ctx->host->fail(
		        ep->ctx->host, CB_ERR_INVALID,
		        "shm: a put of %zu bytes at offset %llu does not fit "
		        "rank %d's %llu-byte exported buffer",
		        bytes, (unsigned long long)roff, ep->peer,
		        (unsigned long long)rmem->bytes);
	shm_send_init(req, notify, bytes, buf, SEND_PUT, rmem);
	req->priv.u64[R_STARTED] = roff;
	return shm_post_send(ep, req);
}

cb_status_t shm_irecv(struct cb_tp_ep *ep, void *buf, size_t cap,
                      const struct cb_tp_mem *mem, uint64_t tag,
                      struct cb_tp_req *req)
{
	(void)mem;
	if (ep->err)
		return ep->err;
	req->tag = tag;
	req->bytes = 0;
	req->priv.u64[R_DONE] = 0;
	req->priv.ptr[R_BUF] = buf;
	req->priv.u64[R_CAP] = cap;
	req->priv.u64[R_OFF] = 0;
	req->priv.u64[R_STARTED] = 0;
	req->priv.u64[R_RNDV] = 0; /* a receive never waits for a send's
	                             rendezvous (the request may have been
	                             one) */
	req->priv.ptr[R_RED] = NULL;
	tpu_q_push(&ep->rq_head, &ep->rq_tail, req);
	return CB_OK;
}

cb_status_t shm_irecv_reduce(struct cb_tp_ep *ep, void *dst, const void *src,
                             size_t bytes, const struct cb_tp_mem *mem,
                             const struct cb_tp_reduce *red, uint64_t tag,
                             struct cb_tp_req *req)
{
	cb_status_t st = shm_irecv(ep, dst, bytes, mem, tag, req);

	req->priv.ptr[R_SRC] = (void *)src;
	req->priv.ptr[R_RED] = (void *)red;
	return st;
}

cb_status_t shm_test(struct cb_tp_ep *ep, struct cb_tp_req *req)
{
	if (req->priv.u64[R_DONE])
		return CB_OK;
	if (req->priv.u64[R_RNDV] &&
	    atomic_load_explicit(&ep->tx->rndv_done, memory_order_acquire) >=
	            req->priv.u64[R_RNDV]) {
		req->priv.u64[R_DONE] = 1;
		return CB_OK;
	}
	return ep->err ? ep->err : CB_AGAIN;
}

/* A put at the head of the queue: the copy, then its notification (in a
 * slot, after the data: the release store orders them). */
static int shm_send_put(struct cb_tp_ep *ep, struct cb_tp_req *req)
{
	struct cb_tp_rmem *rm = req->priv.ptr[R_SRC];
	uint32_t notify = (uint32_t)req->tag;

	if (notify && !lring_tx_slot(&ep->ring))
		return 0;
	memcpy(rm->local + req->priv.u64[R_STARTED], req->priv.ptr[R_BUF],
	       req->bytes);
	if (notify)
		(void)lring_tx_notify(&ep->ring, notify); /* room: above */
	ep->ctx->stats.put_msgs++;
	ep->ctx->stats.put_bytes += req->bytes;
	req->priv.u64[R_DONE] = 1;
	return 1;
}

static int shm_send_progress(struct cb_tp_ep *ep)
{
	struct cb_tp_ctx *ctx = ep->ctx;
	int moved = 0;

	while (ep->sq_head) {
		struct cb_tp_req *req = ep->sq_head;
		struct lring_hdr *s;

		if (req->priv.u64[R_CAP] == SEND_PUT) {
			if (!shm_send_put(ep, req))
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
		if (ep->cma && req->bytes > ctx->rndv_bytes) {
			const struct cb_tp_mr *r = req->priv.ptr[R_SRC];
			struct shm_export x = { .magic = SHM_MAGIC,
				                .pid = ctx->addr.pid };
			if (r)
				x = (struct shm_export){
					.magic = SHM_MAGIC,
					.pid = ctx->addr.pid,
					.fd = r->fd,
					.id = r->id,
					.region_base =
					        (uint64_t)(uintptr_t)r->base,
					.region_bytes = r->bytes,
				};
			s->kind = KIND_RNDV;
			s->addr = (uint64_t)(uintptr_t)req->priv.ptr[R_BUF];
			s->frag_bytes = sizeof(x);
			memcpy(lring_data(s), &x, sizeof(x));
			req->priv.u64[R_RNDV] = ++ep->tx_rndv;
			lring_tx_publish(&ep->ring, s);
			tpu_q_pop(&ep->sq_head, &ep->sq_tail);
			continue;
		}
		size_t off = lring_tx_eager(&ep->ring, s, KIND_EAGER,
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

static cb_status_t shm_recv_fail(struct cb_tp_ep *ep, cb_status_t st,
                                 const char *what, unsigned long long a,
                                 unsigned long long b)
{
	const struct cb_tp_host *h = ep->ctx->host;

	if (st == CB_ERR_PROTO)
		ep->err = h->fail(
		        h, st,
		        "shm: rank %d sent message tag 0x%llx where "
		        "this rank expected 0x%llx (schedules disagree)",
		        ep->peer, a, b);
	else if (st == CB_ERR_TRUNCATE)
		ep->err = h->fail(h, st,
		                  "shm: rank %d sent %llu bytes to a %llu-byte "
		                  "receive",
		                  ep->peer, a, b);
	else
		ep->err = h->fail(h, st, "shm: %s rank %d failed: %s", what,
		                  ep->peer, strerror((int)a));
	return ep->err;
}

/* Copy (or copy and reduce) a rendezvous message with process_vm_readv. */
static cb_status_t shm_cma(struct cb_tp_ep *ep, struct cb_tp_req *req,
                           uint64_t raddr, size_t bytes)
{
	const struct cb_tp_reduce *red = req->priv.ptr[R_RED];
	struct cb_tp_ctx *ctx = ep->ctx;
	char *dst = req->priv.ptr[R_BUF];
	const char *src = req->priv.ptr[R_SRC];
	size_t piece =
	        red ? SHM_BOUNCE_BYTES / red->elem_bytes * red->elem_bytes
	            : bytes;

	for (size_t done = 0; done < bytes;) {
		size_t n = bytes - done < piece ? bytes - done : piece;
		struct iovec l = { red ? (void *)ctx->bounce : dst + done, n };
		struct iovec r = { (void *)(uintptr_t)(raddr + done), n };
		ssize_t got = process_vm_readv(ep->pid, &l, 1, &r, 1, 0);
		if (got <= 0)
			return shm_recv_fail(ep, CB_ERR_PEER, "copying from",
			                     (unsigned long long)errno, 0);
		if (red) {
			/* Whole elements only; a short read is re-read. */
			got -= got % (ssize_t)red->elem_bytes;
			ctx->host->reduce(ctx->host, red->dtype, red->op,
			                  dst + done, src + done, ctx->bounce,
			                  (size_t)got / red->elem_bytes);
			ctx->stats.bounce_bytes += (size_t)got;
		}
		done += (size_t)got;
	}
	return CB_OK;
}

/* A peer's region @x as mapped here (mapping it the first time), or NULL
 * when it cannot be (then: CMA). */
struct shm_view *shm_view_get(struct cb_tp_ep *ep, const struct shm_export *x)
{
	int i, free_slot = -1;

	if (!x->id || ep->no_map || !ep->ctx->allow_map)
		return NULL;
	for (i = 0; i < ep->nviews; i++) {
		if (ep->views[i].id == x->id)
			return &ep->views[i];
		if (!ep->views[i].id && free_slot < 0)
			free_slot = i;
	}
	if (free_slot < 0 && ep->nviews == SHM_MAX_VIEWS) {
		/* The peer freed some: forget those nobody imported (in
		 * place: imported handles point at their view). */
		for (i = 0; i < ep->nviews; i++) {
			if (ep->views[i].refs)
				continue;
			munmap(ep->views[i].base, ep->views[i].bytes);
			ep->views[i].id = 0;
			if (free_slot < 0)
				free_slot = i;
		}
		if (free_slot < 0)
			return NULL;
	}
	void *p = lseg_map_peer(ep->pid, x->fd, x->region_bytes, 1);
	if (p == MAP_FAILED) {
		ep->ctx->host->log(ep->ctx->host, CB_TP_LOG_INFO,
		                   "cannot map rank %d's buffers (%s): reading "
		                   "them with CMA instead",
		                   ep->peer, strerror(errno));
		ep->no_map = 1;
		return NULL;
	}
	i = free_slot >= 0 ? free_slot : ep->nviews++;
	ep->views[i] = (struct shm_view){ .id = x->id,
		                          .rbase = x->region_base,
		                          .base = p,
		                          .bytes = x->region_bytes };
	return &ep->views[i];
}

/* Where the sender's rendezvous buffer can be read with plain loads here,
 * or NULL (then: CMA). */
static const char *shm_peer_view(struct cb_tp_ep *ep, const struct lring_hdr *s)
{
	struct shm_export x;
	struct shm_view *v;

	memcpy(&x, lring_data(s), sizeof(x));
	if (s->addr < x.region_base ||
	    s->addr + s->bytes > x.region_base + x.region_bytes)
		return NULL;
	if (!(v = shm_view_get(ep, &x)))
		return NULL;
	return (const char *)v->base + (s->addr - v->rbase);
}

cb_status_t shm_notify_poll(struct cb_tp_ep *ep, uint32_t *notify)
{
	if (ep->err)
		return ep->err;
	return lring_notify_poll(&ep->ring, notify);
}

static cb_status_t shm_recv_rndv(struct cb_tp_ep *ep, struct cb_tp_req *req,
                                 const struct lring_hdr *s)
{
	const struct cb_tp_reduce *red = req->priv.ptr[R_RED];
	struct cb_tp_ctx *ctx = ep->ctx;
	char *dst = req->priv.ptr[R_BUF];
	const char *peer = shm_peer_view(ep, s);
	cb_status_t st;

	if (peer && red)
		ctx->host->reduce(ctx->host, red->dtype, red->op, dst,
		                  req->priv.ptr[R_SRC], peer,
		                  s->bytes / red->elem_bytes);
	else if (peer)
		memcpy(dst, peer, s->bytes);
	else if ((st = shm_cma(ep, req, s->addr, s->bytes)))
		return st;
	ctx->stats.zcopy_msgs++;
	ctx->stats.zcopy_bytes += s->bytes;
	return CB_OK;
}

static int shm_recv_progress(struct cb_tp_ep *ep, cb_status_t *st)
{
	int moved = lring_take_notifies(&ep->ring);

	while (ep->rq_head) {
		struct cb_tp_req *req = ep->rq_head;
		const struct lring_hdr *s = lring_rx_next(&ep->ring, &moved);

		if (!s)
			break;
		moved = 1;
		if (!req->priv.u64[R_STARTED]) {
			if (s->tag != req->tag) {
				*st = shm_recv_fail(ep, CB_ERR_PROTO, NULL,
				                    s->tag, req->tag);
				return moved;
			}
			if (s->bytes > req->priv.u64[R_CAP]) {
				*st = shm_recv_fail(ep, CB_ERR_TRUNCATE, NULL,
				                    s->bytes,
				                    req->priv.u64[R_CAP]);
				return moved;
			}
			req->priv.u64[R_STARTED] = 1;
			req->bytes = s->bytes;
		}
		char *dst = req->priv.ptr[R_BUF];
		const struct cb_tp_reduce *red = req->priv.ptr[R_RED];
		if (s->kind == KIND_RNDV) {
			if ((*st = shm_recv_rndv(ep, req, s)))
				return moved;
			req->priv.u64[R_OFF] = s->bytes;
			lring_rx_consume(&ep->ring);
			atomic_fetch_add_explicit(&ep->rx->rndv_done, 1,
			                          memory_order_release);
		} else {
			if (red)
				ep->ctx->host->reduce(
				        ep->ctx->host, red->dtype, red->op,
				        dst + s->addr,
				        (const char *)req->priv.ptr[R_SRC] +
				                s->addr,
				        lring_data(s),
				        s->frag_bytes / red->elem_bytes);
			else
				memcpy(dst + s->addr, lring_data(s),
				       s->frag_bytes);
			req->priv.u64[R_OFF] += s->frag_bytes;
			lring_rx_consume(&ep->ring);
		}
		if (req->priv.u64[R_OFF] == req->bytes) {
			req->priv.u64[R_DONE] = 1;
			tpu_q_pop(&ep->rq_head, &ep->rq_tail);
		}
	}
	return moved;
}

static cb_status_t shm_ep_progress(struct cb_tp_ep *ep, int *moved)
{
	cb_status_t st = CB_OK;

	if (ep->err)
		return ep->err;
	if (ep->sq_head)
		*moved |= shm_send_progress(ep);
	*moved |= shm_recv_progress(ep, &st);
	return st;
}

cb_status_t shm_progress(struct cb_tp_ctx *ctx)
{
	return tpu_progress(ctx->eps, ctx->active, ctx->nactive,
	                    shm_ep_progress);
}
