/* SPDX-License-Identifier: MIT */
/*
 * transports/lpeer.h - what shm and gpu share above the slot ring
 * (lring.h) and the segment (lseg.h): the context's segment of inbound
 * channels, an endpoint's two rings and request queues, and the data path
 * over them: sends published slot by slot (eager fragments, a single-copy
 * send's descriptor, a put's notification), receives matched against the
 * slot at the ring's head, the test of a single-copy send.  A transport
 * embeds struct lp_ctx and struct lp_ep first in its context and endpoint
 * and gives the data path what is its own (how a single-copy message is
 * described and moved, how a put is done, where an eager fragment goes) as
 * functions, which the calls here inline.
 *
 * Header only, as lring.h: each transport links apart (shm in the core's
 * library, gpu as a module), and most of this is on the message path.
 */
#ifndef CB_TRANSPORTS_LPEER_H
#define CB_TRANSPORTS_LPEER_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

#include <collbench/transport.h>

#include "transports/lring.h"
#include "transports/lseg.h"
#include "transports/tputil.h"

/* Slot kinds (and LRING_NOTIFY).  EAGER: a fragment of the message in the
 * slot.  SINGLE: the slot describes the sender's buffer, which the
 * receiver reads from directly (shm's rendezvous, gpu's RTS). */
enum { LP_EAGER = 1, LP_SINGLE = 2 };

/* The head of a channel, in the receiver's segment: written by one sender
 * (its ring of slots follows, from sizeof(struct lp_chan) on). */
struct lp_chan {
	alignas(64) _Atomic uint64_t consumed; /* receiver: slots freed */
	alignas(64) _Atomic uint64_t done; /* receiver: single copies done */
	alignas(64) _Atomic uint32_t attached; /* sender: mapped us */
	_Atomic uint32_t cma; /* shm: receiver can read sender */
	alignas(64) unsigned char slots[];
};
_Static_assert(offsetof(struct lp_chan, slots) == 192,
               "the counters on lines of their own, then the slots");

/* A segment: its head, then one channel per local rank. */
struct lp_seg {
	struct lseg_head head;
	alignas(64) unsigned char chan[];
};

/* The head of a context's address (the blob ep_connect() parses): where
 * its segment is.  The transport's address follows it. */
struct lp_addr {
	uint64_t magic;
	int32_t rank, pid;
	int32_t seg_fd;
	int32_t own; /* the transport's (gpu: its device) */
};

/*
 * Request private state (struct cb_tp_req.priv.u64[]).  Sends: R_BUF the
 * buffer, R_MR its registration (a put's: the rmem), R_OFF eager bytes
 * sent, R_KIND, R_SEQ the single copy's number (done when the peer's done
 * counter reaches it).  Receives: R_BUF, R_CAP, R_OFF bytes in, R_KIND
 * (RECV and flags), R_RED the reduction (NULL: a plain receive), R_SRC its
 * other operand.  R_OWN: the transport's own.
 */
enum { R_DONE, R_BUF, R_CAP, R_OFF, R_KIND, R_SEQ, R_OWN, R_RED };
#define R_MR  R_CAP /* sends have no capacity */
#define R_SRC R_SEQ /* receives have no single-copy number */
enum { SEND_EAGER = 0, SEND_SINGLE = 1, SEND_PUT = 2 };
enum { RECV = 4, RECV_STARTED = 8 }; /* a transport's flags: 16 and up */

struct lp_ctx {
	const struct cb_tp_host *host;
	const char *tp; /* "shm", "gpu": for messages */
	uint64_t magic;
	size_t slot_bytes, chan_bytes;
	uint32_t nslots;
	struct lp_seg *seg;
	size_t seg_bytes;
	int seg_fd;
	int *local_index; /* [world]: index among this host's ranks, or -1 */
	int nlocal;
	struct cb_tp_ep **eps; /* each a struct lp_ep first */
	int *active;           /* peers with an endpoint, for progress */
	int nactive;
	struct cb_tp_stats *stats; /* the context's */
};

struct lp_ep {
	struct lp_ctx *lc;
	int peer, connected;
	pid_t pid;
	struct lp_seg *peer_seg;
	size_t peer_seg_bytes;
	struct lp_chan *tx;                  /* in the peer's segment */
	struct lp_chan *rx;                  /* in ours */
	struct lring ring;                   /* over tx->slots and rx->slots */
	uint64_t tx_single;                  /* single-copy sends published */
	struct cb_tp_req *sq_head, *sq_tail; /* sends and puts not finished
	                                      * on our side */
	struct cb_tp_req *rq_head, *rq_tail; /* receives not matched */
	cb_status_t err;
};

/* The transport's endpoint, whose first member @lp is. */
static inline struct cb_tp_ep *lp_tp(struct lp_ep *lp)
{
	return (struct cb_tp_ep *)(void *)lp;
}

static inline struct lp_ep *lp_of(struct cb_tp_ep *ep)
{
	return (struct lp_ep *)(void *)ep;
}

/* Channel @i of segment @seg. */
static inline struct lp_chan *lp_chan(const struct lp_ctx *c,
                                      struct lp_seg *seg, int i)
{
	return (struct lp_chan *)(void *)(seg->chan +
	                                  (size_t)i * c->chan_bytes);
}

/* A failure of the endpoint: the first one stays. */
static inline cb_status_t lp_fail(struct lp_ep *lp, cb_status_t st)
{
	if (!lp->err)
		lp->err = st;
	return lp->err;
}

/* ---- set-up ---- */

/* open(): @c for transport @tp (@magic: its segments'), rings of @nslots
 * slots of @slot_bytes; the tables, and this host's ranks.  lp_close()
 * undoes it, also when it fails. */
static inline cb_status_t lp_open(struct lp_ctx *c, const struct cb_tp_host *h,
                                  const char *tp, uint64_t magic,
                                  size_t slot_bytes, uint32_t nslots,
                                  struct cb_tp_stats *stats)
{
	*c = (struct lp_ctx){ .host = h,
		              .tp = tp,
		              .magic = magic,
		              .slot_bytes = slot_bytes,
		              .chan_bytes = sizeof(struct lp_chan) +
		                            slot_bytes * nslots,
		              .nslots = nslots,
		              .seg_fd = -1,
		              .stats = stats };
	c->local_index = calloc((size_t)h->world, sizeof(int));
	c->eps = calloc((size_t)h->world, sizeof(*c->eps));
	c->active = calloc((size_t)h->world, sizeof(int));
	if (!c->local_index || !c->eps || !c->active)
		return h->fail(h, CB_ERR_NOMEM, "%s: out of memory", tp);
	c->nlocal = lseg_local_index(h, c->local_index);
	return CB_OK;
}

/* The context's segment, one channel per local rank (@what names the
 * memfd), and the head of the context's address, @a, saying where. */
static inline cb_status_t lp_segment(struct lp_ctx *c, const char *what,
                                     struct lp_addr *a)
{
	void *seg;
	cb_status_t st;

	c->seg_bytes =
	        sizeof(struct lp_seg) + (size_t)c->nlocal * c->chan_bytes;
	if ((st = lseg_segment(c->host, c->tp, what, c->magic, c->seg_bytes,
	                       c->nlocal, &c->seg_fd, &seg)))
		return st;
	c->seg = seg;
	*a = (struct lp_addr){ .magic = c->magic,
		               .rank = c->host->rank,
		               .pid = getpid(),
		               .seg_fd = c->seg_fd };
	return CB_OK;
}

/* close(): each endpoint's mapping of its peer's segment, then the
 * endpoint by @ep_free; the segment and the tables. */
static inline void lp_close(struct lp_ctx *c,
                            void (*ep_free)(struct cb_tp_ep *))
{
	for (int p = 0; c->eps && p < c->host->world; p++) {
		struct lp_ep *lp = lp_of(c->eps[p]);
		if (!lp)
			continue;
		if (lp->peer_seg)
			munmap(lp->peer_seg, lp->peer_seg_bytes);
		ep_free(c->eps[p]);
	}
	if (c->seg)
		munmap(c->seg, c->seg_bytes);
	if (c->seg_fd >= 0)
		close(c->seg_fd);
	free(c->local_index);
	free(c->eps);
	free(c->active);
}

/*
 * ep_create(): rank @peer's endpoint into *@out (@why ends the line when
 * the peer is on another host): the one made before, or (*@fresh set) a
 * new one of @bytes, zeroed but for its struct lp_ep, our ring from it
 * set up, in the table.
 */
static inline cb_status_t lp_ep_create(struct lp_ctx *c, int peer,
                                       const char *why, size_t bytes,
                                       struct cb_tp_ep **out, int *fresh)
{
	const struct cb_tp_host *h = c->host;
	struct lp_ep *lp;
	cb_status_t st;

	*fresh = 0;
	if ((st = lseg_local_peer(h, c->tp, c->local_index, peer, why)))
		return st;
	if ((*out = c->eps[peer]))
		return CB_OK;
	if (!(lp = calloc(1, bytes)))
		return h->fail(h, CB_ERR_NOMEM, "%s: out of memory", c->tp);
	lp->lc = c;
	lp->peer = peer;
	lp->rx = lp_chan(c, c->seg, c->local_index[peer]);
	lring_init_rx(&lp->ring, lp->rx->slots, &lp->rx->consumed,
	              c->slot_bytes, c->nslots);
	*out = c->eps[peer] = lp_tp(lp);
	*fresh = 1;
	return CB_OK;
}

/* ep_connect(): the peer's address (@bytes at @blob) into @a, the
 * transport's (@size bytes, a struct lp_addr first); one line when it does
 * not parse as rank lp->peer's. */
static inline cb_status_t lp_ep_address(struct lp_ep *lp, const void *blob,
                                        size_t bytes, void *a, size_t size)
{
	const struct cb_tp_host *h = lp->lc->host;
	const struct lp_addr *la = a;

	memcpy(a, blob, bytes < size ? bytes : size);
	if (bytes != size || la->magic != lp->lc->magic || la->rank != lp->peer)
		return h->fail(h, CB_ERR_PROTO,
		               "%s: the address of rank %d does not parse",
		               lp->lc->tp, lp->peer);
	return CB_OK;
}

/* ... then the peer's segment (@bytes; @seg_name for messages), which @a
 * says where it is, mapped, our ring in it set up.  Then the transport
 * says so with lp_ep_attached(). */
static inline cb_status_t lp_ep_attach(struct lp_ep *lp, const char *seg_name,
                                       const struct lp_addr *a, size_t bytes)
{
	struct lp_ctx *c = lp->lc;
	void *seg;
	cb_status_t st;

	lp->pid = a->pid;
	st = lseg_attach(c->host, c->tp, seg_name, c->magic, lp->peer, a->pid,
	                 a->seg_fd, bytes, &seg);
	if (seg) {
		lp->peer_seg = seg;
		lp->peer_seg_bytes = bytes;
	}
	if (st)
		return st;
	lp->tx = lp_chan(c, lp->peer_seg, c->local_index[c->host->rank]);
	lring_init_tx(&lp->ring, lp->tx->slots, &lp->tx->consumed);
	return CB_OK;
}

static inline void lp_ep_attached(struct lp_ep *lp)
{
	atomic_store_explicit(&lp->tx->attached, 1, memory_order_release);
}

/* ep_test(): whether both have mapped the other's segment. */
static inline int lp_ep_both_attached(const struct lp_ep *lp)
{
	return lp->tx &&
	       atomic_load_explicit(&lp->rx->attached, memory_order_acquire);
}

/* ... and then: connected, polled by progress(). */
static inline cb_status_t lp_ep_up(struct lp_ep *lp)
{
	struct lp_ctx *c = lp->lc;

	lp->connected = 1;
	c->active[c->nactive++] = lp->peer;
	c->stats->connects++;
	return CB_OK;
}

/* ---- the data path ---- */

/* What a send and a put set alike in @req: its tag (a put's: the
 * notification), its bytes and buffer, its kind and R_MR. */
static inline void lp_send_init(struct cb_tp_req *req, uint64_t tag,
                                size_t bytes, const void *buf, uint64_t kind,
                                const void *mr)
{
	req->tag = tag;
	req->bytes = bytes;
	req->priv.u64[R_DONE] = 0;
	req->priv.ptr[R_BUF] = (void *)buf;
	req->priv.ptr[R_MR] = (void *)mr;
	req->priv.u64[R_OFF] = 0;
	req->priv.u64[R_KIND] = kind;
	req->priv.u64[R_SEQ] = 0;
}

/* irecv() and irecv_reduce(): @req set (RECV | @flags; @red and @src: the
 * reduction, or NULLs) and queued. */
static inline cb_status_t lp_irecv(struct lp_ep *lp, struct cb_tp_req *req,
                                   void *buf, size_t cap, uint64_t tag,
                                   uint64_t flags, const void *src,
                                   const struct cb_tp_reduce *red)
{
	if (lp->err)
		return lp->err;
	req->tag = tag;
	req->bytes = 0;
	req->priv.u64[R_DONE] = 0;
	req->priv.ptr[R_BUF] = buf;
	req->priv.u64[R_CAP] = cap;
	req->priv.u64[R_OFF] = 0;
	req->priv.u64[R_KIND] = RECV | flags;
	req->priv.ptr[R_SRC] = (void *)src;
	req->priv.ptr[R_RED] = (void *)red;
	tpu_q_push(&lp->rq_head, &lp->rq_tail, req);
	return CB_OK;
}

/* test(): done, or a single-copy send the peer has finished reading. */
static inline cb_status_t lp_test(const struct lp_ep *lp, struct cb_tp_req *req)
{
	if (req->priv.u64[R_DONE])
		return CB_OK;
	if (req->priv.u64[R_KIND] == SEND_SINGLE && req->priv.u64[R_SEQ] &&
	    atomic_load_explicit(&lp->tx->done, memory_order_acquire) >=
	            req->priv.u64[R_SEQ]) {
		req->priv.u64[R_DONE] = 1;
		return CB_OK;
	}
	return lp->err ? lp->err : CB_AGAIN;
}

/* notify_poll(): the oldest notification, or CB_AGAIN. */
static inline cb_status_t lp_notify_poll(struct lp_ep *lp, uint32_t *notify)
{
	if (lp->err)
		return lp->err;
	return lring_notify_poll(&lp->ring, notify);
}

/* A put's data is where it goes: its notification (if any) behind it;
 * 0: no room yet. */
static inline int lp_put_notify(struct lp_ep *lp, struct cb_tp_req *req)
{
	uint32_t notify = (uint32_t)req->tag;

	if (notify && !lring_tx_notify(&lp->ring, notify))
		return 0;
	lp->lc->stats->put_msgs++;
	lp->lc->stats->put_bytes += req->bytes;
	req->priv.u64[R_DONE] = 1;
	return 1;
}

/*
 * The transport's part of the sends: @put moves a put at the queue's head
 * (its data, then lp_put_notify: 0 while it must wait); @single fills the
 * slot @s with the description of @req's buffer and returns its size, or
 * 0 when @req goes eagerly, through the slots.
 */
struct lp_send_ops {
	int (*put)(struct cb_tp_ep *ep, struct cb_tp_req *req);
	uint32_t (*single)(struct cb_tp_ep *ep, struct cb_tp_req *req,
	                   struct lring_hdr *s);
};

/* progress()'s sends: the queue's head published while the peer's ring
 * has room; whether anything moved. */
static inline int lp_send_progress(struct lp_ep *lp,
                                   const struct lp_send_ops *ops)
{
	int moved = 0;

	while (lp->sq_head && !lp->err) {
		struct cb_tp_req *req = lp->sq_head;
		struct lring_hdr *s;
		uint32_t n;

		if (req->priv.u64[R_KIND] == SEND_PUT) {
			if (!ops->put(lp_tp(lp), req))
				break;
			tpu_q_pop(&lp->sq_head, &lp->sq_tail);
			moved = 1;
			continue;
		}
		if (!(s = lring_tx_slot(&lp->ring)))
			break;
		s->tag = req->tag;
		s->bytes = req->bytes;
		moved = 1;
		if ((n = ops->single(lp_tp(lp), req, s))) {
			s->kind = LP_SINGLE;
			s->frag_bytes = n;
			req->priv.u64[R_KIND] = SEND_SINGLE;
			req->priv.u64[R_SEQ] = ++lp->tx_single;
			lring_tx_publish(&lp->ring, s);
			tpu_q_pop(&lp->sq_head, &lp->sq_tail);
			continue;
		}
		size_t off = lring_tx_eager(&lp->ring, s, LP_EAGER,
		                            req->priv.ptr[R_BUF], req->bytes,
		                            req->priv.u64[R_OFF]);
		req->priv.u64[R_OFF] = off;
		if (off == req->bytes) {
			req->priv.u64[R_DONE] = 1;
			tpu_q_pop(&lp->sq_head, &lp->sq_tail);
			lp->lc->stats->eager_msgs++;
			lp->lc->stats->eager_bytes += req->bytes;
		}
	}
	return moved;
}

/* isend() and put(): @req queued behind the sends before it; when nothing
 * is ahead of it, published now: the peer may already be polling. */
static inline cb_status_t lp_post_send(struct lp_ep *lp, struct cb_tp_req *req,
                                       const struct lp_send_ops *ops)
{
	tpu_q_push(&lp->sq_head, &lp->sq_tail, req);
	if (lp->sq_head == req)
		lp_send_progress(lp, ops);
	return lp->err;
}

/* The receive @req at the queue's head against the slot @s that came: its
 * tag and size checked the first time; 0: they are wrong (lp->err set). */
static inline int lp_recv_match(struct lp_ep *lp, struct cb_tp_req *req,
                                const struct lring_hdr *s)
{
	const struct cb_tp_host *h = lp->lc->host;

	if (req->priv.u64[R_KIND] & RECV_STARTED)
		return 1;
	if (s->tag != req->tag) {
		lp_fail(lp, h->fail(h, CB_ERR_PROTO,
		                    "%s: rank %d sent message tag 0x%llx where "
		                    "this rank expected 0x%llx (schedules "
		                    "disagree)",
		                    lp->lc->tp, lp->peer,
		                    (unsigned long long)s->tag,
		                    (unsigned long long)req->tag));
		return 0;
	}
	if (s->bytes > req->priv.u64[R_CAP]) {
		lp_fail(lp,
		        h->fail(h, CB_ERR_TRUNCATE,
		                "%s: rank %d sent %llu bytes to a %llu-byte "
		                "receive",
		                lp->lc->tp, lp->peer,
		                (unsigned long long)s->bytes,
		                (unsigned long long)req->priv.u64[R_CAP]));
		return 0;
	}
	req->priv.u64[R_KIND] |= RECV_STARTED;
	req->bytes = s->bytes;
	return 1;
}

/* An eager fragment into a receive's host memory: copied, or reduced with
 * the receive's other operand. */
static inline void lp_recv_host(const struct cb_tp_host *h,
                                struct cb_tp_req *req,
                                const struct lring_hdr *s)
{
	const struct cb_tp_reduce *red = req->priv.ptr[R_RED];
	char *dst = (char *)req->priv.ptr[R_BUF] + s->off;

	if (red)
		h->reduce(h, red->dtype, red->op, dst,
		          (const char *)req->priv.ptr[R_SRC] + s->off,
		          lring_data(s), s->frag_bytes / red->elem_bytes);
	else
		memcpy(dst, lring_data(s), s->frag_bytes);
}

/* The receive at the queue's head is complete. */
static inline void lp_recv_done(struct lp_ep *lp, struct cb_tp_req *req)
{
	req->priv.u64[R_DONE] = 1;
	tpu_q_pop(&lp->rq_head, &lp->rq_tail);
}

/*
 * The transport's part of the receives: @single takes a single-copy slot
 * @s for @req, the head of the receive queue (it consumes the slot and
 * moves @req on: 1; 0 while it must wait, or with lp->err set); @eager
 * puts an eager fragment's data in place.
 */
struct lp_recv_ops {
	int (*single)(struct cb_tp_ep *ep, struct cb_tp_req *req,
	              const struct lring_hdr *s);
	cb_status_t (*eager)(struct cb_tp_ep *ep, struct cb_tp_req *req,
	                     const struct lring_hdr *s);
};

/* progress()'s receives: notifications off the ring's head into their
 * queue, the slots that came into the receives posted; whether anything
 * moved. */
static inline int lp_recv_progress(struct lp_ep *lp,
                                   const struct lp_recv_ops *ops)
{
	int moved = lring_take_notifies(&lp->ring);
	cb_status_t st;

	while (lp->rq_head && !lp->err) {
		struct cb_tp_req *req = lp->rq_head;
		const struct lring_hdr *s = lring_rx_next(&lp->ring, &moved);

		if (!s || !lp_recv_match(lp, req, s))
			break;
		if (s->kind == LP_SINGLE) {
			if (!ops->single(lp_tp(lp), req, s))
				break;
			moved = 1;
			continue;
		}
		if ((st = ops->eager(lp_tp(lp), req, s))) {
			lp_fail(lp, st);
			break;
		}
		req->priv.u64[R_OFF] += s->frag_bytes;
		lring_rx_consume(&lp->ring);
		moved = 1;
		if (req->priv.u64[R_OFF] == req->bytes)
			lp_recv_done(lp, req);
	}
	return moved;
}

/* progress(): @one on each connected peer's endpoint (tpu_progress). */
static inline cb_status_t
lp_progress(struct lp_ctx *c, cb_status_t (*one)(struct cb_tp_ep *, int *moved))
{
	return tpu_progress(c->eps, c->active, c->nactive, one);
}

#endif
