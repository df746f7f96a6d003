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

/* A put at the head of the queue: the copy, then its notification (in a
 * slot, after the data: the release store orders them). */
static int shm_send_put(struct cb_tp_ep *ep, struct cb_tp_req *req)
{
	struct cb_tp_rmem *rm = req->priv.ptr[R_MR];

	if (req->tag && !lring_tx_slot(&ep->lp.ring))
		return 0;
	memcpy(rm->local + req->priv.u64[R_ROFF], req->priv.ptr[R_BUF],
	       req->bytes);
	return lp_put_notify(&ep->lp, req); /* room: above */
}

/* A send larger than --shm-rndv-bytes, to a peer that can read our
 * memory: a rendezvous, the slot describing our buffer (its region's
 * memfd when it came from mem_alloc). */
static uint32_t shm_send_rndv(struct cb_tp_ep *ep, struct cb_tp_req *req,
                              struct lring_hdr *s)
{
	struct cb_tp_ctx *ctx = ep->ctx;
	const struct cb_tp_mr *r = req->priv.ptr[R_MR];
	struct shm_export x = { .magic = SHM_MAGIC, .pid = ctx->addr.lp.pid };

	if (!ep->cma || req->bytes <= ctx->rndv_bytes)
		return 0;
	if (r)
		x = (struct shm_export){
			.magic = SHM_MAGIC,
			.pid = ctx->addr.lp.pid,
			.fd = r->fd,
			.id = r->id,
			.region_base = (uint64_t)(uintptr_t)r->base,
			.region_bytes = r->bytes,
		};
	s->addr = (uint64_t)(uintptr_t)req->priv.ptr[R_BUF];
	memcpy(lring_data(s), &x, sizeof(x));
	return sizeof(x);
}

static const struct lp_send_ops shm_send_ops = { shm_send_put, shm_send_rndv };

cb_status_t shm_isend(struct cb_tp_ep *ep, const void *buf, size_t bytes,
                      const struct cb_tp_mem *mem, uint64_t tag,
                      struct cb_tp_req *req)
{
	if (ep->lp.err)
		return ep->lp.err;
	lp_send_init(req, tag, bytes, buf, SEND_EAGER, mem->mr);
	return lp_post_send(&ep->lp, req, &shm_send_ops);
}

cb_status_t shm_put(struct cb_tp_ep *ep, const void *buf, size_t bytes,
                    const struct cb_tp_mem *mem, struct cb_tp_rmem *rmem,
                    uint64_t roff, uint32_t notify, struct cb_tp_req *req)
{
	cb_status_t st;

	(void)mem;
	if (ep->lp.err)
		return ep->lp.err;
	if ((st = tpu_put_fits(ep->ctx->host, "shm", ep->lp.peer, bytes, roff,
	                       rmem->bytes)))
		return st;
	lp_send_init(req, notify, bytes, buf, SEND_PUT, rmem);
	req->priv.u64[R_ROFF] = roff;
	return lp_post_send(&ep->lp, req, &shm_send_ops);
}

cb_status_t shm_irecv(struct cb_tp_ep *ep, void *buf, size_t cap,
                      const struct cb_tp_mem *mem, uint64_t tag,
                      struct cb_tp_req *req)
{
	(void)mem;
	return lp_irecv(&ep->lp, req, buf, cap, tag, 0, NULL, NULL);
}

cb_status_t shm_irecv_reduce(struct cb_tp_ep *ep, void *dst, const void *src,
                             size_t bytes, const struct cb_tp_mem *mem,
                             const struct cb_tp_reduce *red, uint64_t tag,
                             struct cb_tp_req *req)
{
	(void)mem;
	return lp_irecv(&ep->lp, req, dst, bytes, tag, 0, src, red);
}

cb_status_t shm_test(struct cb_tp_ep *ep, struct cb_tp_req *req)
{
	return lp_test(&ep->lp, req);
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
		ssize_t got = process_vm_readv(ep->lp.pid, &l, 1, &r, 1, 0);
		if (got <= 0)
			return lp_fail(&ep->lp,
			               ctx->host->fail(ctx->host, CB_ERR_PEER,
			                               "shm: copying from rank "
			                               "%d failed: %s",
			                               ep->lp.peer,
			                               strerror(errno)));
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
	void *p = lseg_map_peer(ep->lp.pid, x->fd, x->region_bytes, 1);
	if (p == MAP_FAILED) {
		ep->ctx->host->log(ep->ctx->host, CB_TP_LOG_INFO,
		                   "cannot map rank %d's buffers (%s): reading "
		                   "them with CMA instead",
		                   ep->lp.peer, strerror(errno));
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
	return lp_notify_poll(&ep->lp, notify);
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

/* A rendezvous slot into the receive @req: its data read from the
 * sender's memory, the slot and the sender's buffer freed. */
static int shm_recv_single(struct cb_tp_ep *ep, struct cb_tp_req *req,
                           const struct lring_hdr *s)
{
	if (shm_recv_rndv(ep, req, s))
		return 0;
	lring_rx_consume(&ep->lp.ring);
	atomic_fetch_add_explicit(&ep->lp.rx->done, 1, memory_order_release);
	lp_recv_done(&ep->lp, req);
	return 1;
}

static cb_status_t shm_recv_eager(struct cb_tp_ep *ep, struct cb_tp_req *req,
                                  const struct lring_hdr *s)
{
	lp_recv_host(ep->ctx->host, req, s);
	return CB_OK;
}

static const struct lp_recv_ops shm_recv_ops = { shm_recv_single,
	                                         shm_recv_eager };

static cb_status_t shm_ep_progress(struct cb_tp_ep *ep, int *moved)
{
	if (ep->lp.err)
		return ep->lp.err;
	if (ep->lp.sq_head)
		*moved |= lp_send_progress(&ep->lp, &shm_send_ops);
	*moved |= lp_recv_progress(&ep->lp, &shm_recv_ops);
	return ep->lp.err;
}

cb_status_t shm_progress(struct cb_tp_ctx *ctx)
{
	return lp_progress(&ctx->lp, shm_ep_progress);
}
