/* SPDX-License-Identifier: MIT */
/*
 * transports/verbs/verbs_data.c - the verbs data path.
 *
 * Per peer and rail one RC queue pair with VB_RECV_SLOTS receive slots of
 * 8 KiB posted and VB_SEND_SLOTS send slots; credits count the peer's posted
 * slots, come back in every header (or in a CREDIT message when half are
 * owed), and two are kept for credit returns alone, so the pair can never
 * wedge.
 *
 * Messages up to the eager limit (one slot less its header; lower with
 * --verbs-eager-bytes) travel as one SEND: header from a send slot, payload
 * straight from the user's registered buffer (or copied into the slot when
 * it is not registered), inline when the whole fits the device's inline
 * limit.  Larger ones are zero-copy, driven by the receiver's buffer:
 *
 *   sender                         receiver
 *   RTS {seq, tag, bytes}  ----->  (its receive is posted)
 *                          <-----  RTR {seq, address, rkey per rail}
 *   RDMA WRITE ... WRITE WITH IMMEDIATE (seq), per rail:
 *   the message is cut into one piece per rail from 256 KiB (striping),
 *   pieces into chunks within the port's max message.  iWARP has no
 *   immediate: WRITE, then a FIN message on the same queue pair.
 *
 * When either buffer is not registered the RTR carries no key and the
 * message goes through the slots in FRAG pieces: the bytes copied that way
 * are counted (stats.bounce_bytes), so a test can show the large path copies
 * nothing.  Sends are signalled selectively: those a request waits for, and
 * one in VB_SIGNAL_EVERY so the slots come back.  Receives complete in the
 * order they were posted; a message that arrives before its receive waits
 * in its slot (EAGER) or as a note (RTS).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "transports/verbs/verbs.h"

#define WR_RECV      (1ull << 63)
#define WR_LOW       ((1ull << 36) - 1)
#define HDR          sizeof(struct vb_hdr)
#define SEQ_LT(a, b) ((int32_t)((a) - (b)) < 0)

static inline uint64_t wr_id(int peer, int rail, uint64_t v)
{
	return ((uint64_t)peer << 40) | ((uint64_t)rail << 36) | (v & WR_LOW);
}

static inline uint8_t *send_slot(struct vb_qp *q, uint64_t seq)
{
	return q->slots + (seq % VB_SEND_SLOTS) * VB_SLOT_BYTES;
}

static inline uint8_t *recv_slot(struct vb_qp *q, int i)
{
	return q->slots + (size_t)(VB_SEND_SLOTS + i) * VB_SLOT_BYTES;
}

static inline int sq_room(const struct vb_qp *q, int n)
{
	return q->sq_posted + (uint64_t)n - q->sq_done < VB_SEND_SLOTS - 1;
}

static cb_status_t ep_err(struct cb_tp_ep *ep, cb_status_t st, const char *fmt,
                          unsigned long long a, unsigned long long b)
{
	const struct cb_tp_host *h = ep->ctx->host;
	char line[256];

	if (ep->err)
		return ep->err;
	snprintf(line, sizeof(line), fmt, a, b);
	return ep->err = h->fail(st, "verbs: rank %d (host %s) %s", ep->peer,
	                         vb_host(ep->ctx, ep->peer), line);
}

static cb_status_t repost(struct cb_tp_ep *ep, int rail, int slot)
{
	struct vb_qp *q = &ep->q[rail];
	struct ibv_sge sge = { (uintptr_t)recv_slot(q, slot), VB_SLOT_BYTES,
		               q->slots_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = WR_RECV | wr_id(ep->peer, rail,
		                                           (uint64_t)slot),
		                  .sg_list = &sge,
		                  .num_sge = 1 },
	                   *bad;

	if (ibv_post_recv(q->qp, &wr, &bad))
		return ep_err(ep, CB_ERR_SYS,
		              "cannot re-post a receive (error %llu)%.0llu",
		              (unsigned long long)errno, 0);
	q->unreported++;
	return CB_OK;
}

cb_status_t vb_post_recv_slots(struct cb_tp_ep *ep, int rail)
{
	cb_status_t st;

	for (int i = 0; i < VB_RECV_SLOTS; i++)
		if ((st = repost(ep, rail, i)))
			return st;
	ep->q[rail].unreported = 0; /* the initial credits are implied */
	return CB_OK;
}

/* Post @wr on @rail; @owner (may be NULL) completes when it does. */
static cb_status_t post_wr(struct cb_tp_ep *ep, int rail,
                           struct ibv_send_wr *wr, struct cb_tp_req *owner)
{
	struct vb_qp *q = &ep->q[rail];
	uint64_t seq = q->sq_posted;
	struct ibv_send_wr *bad;

	if (owner || seq - q->sq_last_signal >= VB_SIGNAL_EVERY ||
	    !sq_room(q, 2)) {
		wr->send_flags |= IBV_SEND_SIGNALED;
		q->sq_last_signal = seq;
	}
	q->owner[seq % VB_SEND_SLOTS] = owner;
	if (owner)
		owner->priv.u64[R_WAIT]++;
	wr->wr_id = wr_id(ep->peer, rail, seq);
	if (ibv_post_send(q->qp, wr, &bad)) {
		if (owner)
			owner->priv.u64[R_WAIT]--;
		return ep_err(ep, CB_ERR_SYS,
		              "cannot post a send (error %llu)%.0llu",
		              (unsigned long long)errno, 0);
	}
	q->sq_posted++;
	return CB_OK;
}

/*
 * A SEND of a header (and payload) on @rail.  @lkey 0: copy the payload
 * into the slot.  CB_AGAIN without credit or queue room.  *@done: the
 * payload has left the user's buffer (copied or inline).
 */
static cb_status_t send_msg(struct cb_tp_ep *ep, int rail,
                            const struct vb_hdr *h, const void *payload,
                            size_t n, uint32_t lkey, struct cb_tp_req *owner,
                            int *done)
{
	struct vb_qp *q = &ep->q[rail];
	const struct vb_rail *r = &ep->ctx->rail[rail];
	int ctrl = h->type == VB_CREDIT || h->type == VB_HELLO;
	struct ibv_sge sge[2];
	int nsge = 1;

	if (q->state != QP_RTS)
		return ep->err ? ep->err : CB_AGAIN;
	if (q->credits <= (ctrl ? 0 : VB_CREDIT_RESERVE) || !sq_room(q, 1))
		return CB_AGAIN;
	uint8_t *slot = send_slot(q, q->sq_posted);
	struct vb_hdr *hd = (struct vb_hdr *)slot;
	*hd = *h;
	hd->credits = (uint16_t)(q->unreported > 65535 ? 65535 : q->unreported);
	q->unreported -= hd->credits;
	sge[0] = (struct ibv_sge){ (uintptr_t)slot, (uint32_t)HDR,
		                   q->slots_mr->lkey };
	if (n && !lkey) {
		memcpy(slot + HDR, payload, n);
		sge[0].length += (uint32_t)n;
	} else if (n) {
		sge[nsge++] = (struct ibv_sge){ (uintptr_t)payload, (uint32_t)n,
			                        lkey };
	}
	struct ibv_send_wr wr = { .sg_list = sge,
		                  .num_sge = nsge,
		                  .opcode = IBV_WR_SEND };
	int inl = HDR + n <= r->max_inline;
	if (inl)
		wr.send_flags = IBV_SEND_INLINE;
	/* the payload has left the user's buffer once copied or inline; a
	 * request with nothing to send (FIN, a zero-byte message) still
	 * completes with its work request */
	*done = n && (!lkey || inl);
	cb_status_t st = post_wr(ep, rail, &wr, *done ? NULL : owner);
	if (!st)
		q->credits--;
	return st;
}

cb_status_t vb_send_ctrl(struct cb_tp_ep *ep, int rail, uint8_t type,
                         uint32_t seq, uint64_t tag)
{
	struct vb_hdr h = { .type = type, .seq = seq, .tag = tag };
	int done;
	cb_status_t st = send_msg(ep, rail, &h, NULL, 0, 0, NULL, &done);

	return st == CB_AGAIN ? CB_OK : st; /* a credit return can wait */
}

static inline void landed_send(struct cb_tp_req *req)
{
	if (req->priv.u64[R_WAIT] == 0)
		req->priv.u64[R_DONE] = 1;
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

static const struct cb_tp_mr *req_mr(const struct cb_tp_req *req)
{
	return req->priv.ptr[R_MR];
}

/* ---- posting ---- */

/* Whether a message goes zero-copy: large ones, and any from device memory
 * (the host never touches it; registered by dma-buf or else staged by the
 * core, never here unregistered). */
static inline int rndv(const struct cb_tp_ctx *ctx, size_t bytes,
                       const struct cb_tp_mem *mem)
{
	return bytes > ctx->eager_max || (mem->kind == CB_MEM_GPU && bytes);
}

cb_status_t vb_isend(struct cb_tp_ep *ep, const void *buf, size_t bytes,
                     const struct cb_tp_mem *mem, uint64_t tag,
                     struct cb_tp_req *req)
{
	int big = rndv(ep->ctx, bytes, mem);

	if (ep->err)
		return ep->err;
	if (big && ep->rndv_send[ep->send_seq % VB_RNDV_Q])
		return CB_AGAIN; /* too many large sends in flight */
	req->tag = tag;
	req->bytes = bytes;
	req->next = NULL;
	req->priv.u64[R_DONE] = 0;
	req->priv.ptr[R_BUF] = (void *)buf;
	req->priv.u64[R_KIND] = K_SEND;
	req->priv.ptr[R_MR] = mem->mr;
	req->priv.u64[R_SEQ] = ep->send_seq++;
	req->priv.u64[R_WAIT] = 0;
	req->priv.u64[R_OFF] = 0;
	req->priv.u64[R_CAP] = big; /* sends have no capacity: zero-copy */
	if (big)
		ep->rndv_send[req->priv.u64[R_SEQ] % VB_RNDV_Q] = req;
	if (ep->sq_tail)
		ep->sq_tail->next = req;
	else
		ep->sq_head = req;
	ep->sq_tail = req;
	return CB_OK;
}

cb_status_t vb_put(struct cb_tp_ep *ep, const void *buf, size_t bytes,
                   const struct cb_tp_mem *mem, struct cb_tp_rmem *rm,
                   uint64_t roff, uint32_t notify, struct cb_tp_req *req)
{
	const struct cb_tp_host *h = ep->ctx->host;

	if (ep->err)
		return ep->err;
	if (roff > rm->bytes || bytes > rm->bytes - roff)
		return h->fail(CB_ERR_INVALID,
		               "verbs: a put of %zu bytes at offset %llu does "
		               "not fit rank %d's %llu-byte exported buffer",
		               bytes, (unsigned long long)roff, ep->peer,
		               (unsigned long long)rm->bytes);
	if (notify & VB_IMM_RNDV)
		return h->fail(CB_ERR_INVALID,
		               "verbs: put notifications are below 2^31");
	if (!mem->mr)
		return h->fail(CB_ERR_UNSUPPORTED,
		               "verbs: a put needs registered memory");
	req->tag = notify;
	req->bytes = bytes;
	req->next = NULL;
	req->priv.u64[R_DONE] = 0;
	req->priv.ptr[R_BUF] = (void *)buf;
	req->priv.u64[R_KIND] = K_PUT;
	req->priv.ptr[R_MR] = mem->mr;
	req->priv.u64[R_CAP] = rm->addr + roff;
	req->priv.u64[R_SEQ] = rm->rkey[0];
	req->priv.u64[R_WAIT] = 0;
	if (ep->sq_tail)
		ep->sq_tail->next = req;
	else
		ep->sq_head = req;
	ep->sq_tail = req;
	return CB_OK;
}

cb_status_t vb_irecv(struct cb_tp_ep *ep, void *buf, size_t cap,
                     const struct cb_tp_mem *mem, uint64_t tag,
                     struct cb_tp_req *req)
{
	if (ep->err)
		return ep->err;
	if (ep->rseq[ep->recv_seq % VB_RNDV_Q])
		return CB_AGAIN; /* as many receives posted as we track */
	req->tag = tag;
	req->bytes = 0;
	req->next = NULL;
	req->priv.u64[R_DONE] = 0;
	req->priv.ptr[R_BUF] = buf;
	req->priv.u64[R_CAP] = cap;
	req->priv.u64[R_KIND] = K_RECV;
	req->priv.ptr[R_MR] = mem->mr;
	if (mem->kind == CB_MEM_GPU)
		req->priv.u64[R_KIND] |= K_GPU;
	req->priv.u64[R_SEQ] = ep->recv_seq;
	req->priv.u64[R_WAIT] = 0;
	req->priv.u64[R_OFF] = 0;
	ep->rseq[ep->recv_seq++ % VB_RNDV_Q] = req;
	if (ep->rq_tail)
		ep->rq_tail->next = req;
	else
		ep->rq_head = req;
	ep->rq_tail = req;
	return CB_OK;
}

cb_status_t vb_test(struct cb_tp_ep *ep, struct cb_tp_req *req)
{
	if (req->priv.u64[R_DONE] &&
	    ((req->priv.u64[R_KIND] & K_MASK) != K_RECV ||
	     SEQ_LT((uint32_t)req->priv.u64[R_SEQ], ep->recv_upto)))
		return CB_OK;
	return ep->err ? ep->err : CB_AGAIN;
}

cb_status_t vb_notify_poll(struct cb_tp_ep *ep, uint32_t *notify)
{
	cb_status_t st;

	if (ep->nq_head == ep->nq_tail && (st = vb_progress(ep->ctx)) < 0)
		return st;
	if (ep->nq_head == ep->nq_tail)
		return ep->err ? ep->err : CB_AGAIN;
	*notify = ep->notify[ep->nq_head++ % VB_NOTIFY_Q];
	return CB_OK;
}

/* ---- the sending side of progress ---- */

/*
 * RDMA writes of @req's buffer to @raddr (keys per rail), over @k rails (the
 * message in one piece per rail, each in chunks within the port's max
 * message), then, by @how:
 *   W_IMM    the last chunk of each rail a write with immediate @imm;
 *   W_PLAIN  nothing more (a put without notification);
 *   W_SEND   a SEND of @after on each rail (iWARP: FIN or NOTIFY).
 * All or nothing: CB_AGAIN, with nothing posted, when room or credit
 * lacks, so a message is never half sent.  @req completes with the last
 * work request of every rail.
 */
enum { W_IMM, W_PLAIN, W_SEND };

static cb_status_t write_all(struct cb_tp_ep *ep, struct cb_tp_req *req, int k,
                             uint64_t raddr, const uint32_t *rkey, int how,
                             uint32_t imm, const struct vb_hdr *after)
{
	const struct cb_tp_mr *mr = req_mr(req);
	size_t bytes = req->bytes;
	struct {
		size_t a, b, chunks;
	} piece[VB_MAX_RAILS];

	for (int j = 0; j < k; j++) {
		size_t a = bytes / (size_t)k * (size_t)j & ~(size_t)4095;
		size_t b = j == k - 1 ? bytes
		                      : bytes / (size_t)k * (size_t)(j + 1) &
		                                ~(size_t)4095;
		uint64_t mx = ep->ctx->rail[j].max_msg;
		piece[j].a = a;
		piece[j].b = b;
		piece[j].chunks = b > a ? (b - a + mx - 1) / mx : 1;
		int need = (int)piece[j].chunks + (how == W_SEND);
		if (!sq_room(&ep->q[j], need) ||
		    (how != W_PLAIN && ep->q[j].credits <= VB_CREDIT_RESERVE))
			return CB_AGAIN;
	}
	for (int j = 0; j < k; j++) {
		uint64_t mx = ep->ctx->rail[j].max_msg;
		cb_status_t st;
		for (size_t c = 0; c < piece[j].chunks; c++) {
			size_t a = piece[j].a + c * mx;
			size_t n = piece[j].b - a < mx ? piece[j].b - a : mx;
			int last = c == piece[j].chunks - 1;
			struct ibv_sge sge = { (uintptr_t)req->priv.ptr[R_BUF] +
				                       a,
				               (uint32_t)n, mr->mr[j]->lkey };
			struct ibv_send_wr wr = {
				.sg_list = &sge,
				.num_sge = 1,
				.opcode = IBV_WR_RDMA_WRITE,
				.wr.rdma = { raddr + a, rkey[j] },
			};
			if (last && how == W_IMM) {
				wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
				wr.imm_data = htonl(imm);
				ep->q[j].credits--;
			}
			st = post_wr(ep, j, &wr,
			             last && how != W_SEND ? req : NULL);
			if (st)
				return st;
		}
		if (how == W_SEND) {
			int done;
			st = send_msg(ep, j, after, NULL, 0, 0, req, &done);
			if (st)
				return st == CB_AGAIN
				               ? ep_err(ep, CB_ERR_PROTO,
				                        "(internal) a send "
				                        "after "
				                        "writes lost its room"
				                        "%.0llu%.0llu",
				                        0, 0)
				               : st;
		}
	}
	return CB_OK;
}

/* The writes (or FRAGs) of the oldest large send whose RTR came. */
static cb_status_t rndv_send(struct cb_tp_ep *ep, uint32_t seq)
{
	struct cb_tp_req *req = ep->rndv_send[seq % VB_RNDV_Q];
	int iwarp = ep->ctx->rail[0].link == VB_LINK_IWARP;
	cb_status_t st;

	if (ep->rtr[seq % VB_RNDV_Q].rkey[0] && req_mr(req)) {
		int k = req->bytes >= VB_STRIPE_MIN ? ep->nrails : 1;
		struct vb_hdr fin = { .type = VB_FIN, .seq = seq };
		st = write_all(ep, req, k, ep->rtr[seq % VB_RNDV_Q].addr,
		               ep->rtr[seq % VB_RNDV_Q].rkey,
		               iwarp ? W_SEND : W_IMM, VB_IMM_RNDV | seq, &fin);
		if (st)
			return st;
		ep->ctx->stats.zcopy_msgs++;
		ep->ctx->stats.zcopy_bytes += req->bytes;
		return CB_OK;
	}
	while (req->priv.u64[R_OFF] < req->bytes) {
		size_t off = req->priv.u64[R_OFF];
		size_t n = req->bytes - off;
		if (n > VB_EAGER_MAX)
			n = VB_EAGER_MAX;
		struct vb_hdr h = {
			.type = VB_FRAG, .seq = seq, .bytes = n, .addr = off
		};
		int done;
		st = send_msg(ep, 0, &h, (char *)req->priv.ptr[R_BUF] + off, n,
		              0, NULL, &done);
		if (st)
			return st;
		req->priv.u64[R_OFF] = off + n;
		ep->ctx->stats.bounce_bytes += n;
	}
	landed_send(req);
	return CB_OK;
}

static cb_status_t send_head(struct cb_tp_ep *ep, struct cb_tp_req *req)
{
	struct cb_tp_ctx *ctx = ep->ctx;
	const struct cb_tp_mr *mr = req_mr(req);
	uint32_t seq = (uint32_t)req->priv.u64[R_SEQ];
	int done = 0;
	cb_status_t st;

	if (req->priv.u64[R_KIND] == K_PUT) {
		/* on rail 0, with its key; the notification in the
		 * immediate, or (iWARP) a NOTIFY message after the write */
		uint32_t rkey[VB_MAX_RAILS] = {
			(uint32_t)req->priv.u64[R_SEQ]
		};
		int iwarp = ctx->rail[0].link == VB_LINK_IWARP;
		struct vb_hdr nt = { .type = VB_NOTIFY, .tag = req->tag };
		int how = !req->tag ? W_PLAIN : iwarp ? W_SEND : W_IMM;
		st = write_all(ep, req, 1, req->priv.u64[R_CAP], rkey, how,
		               (uint32_t)req->tag, &nt);
		if (st)
			return st;
		ctx->stats.put_msgs++;
		ctx->stats.put_bytes += req->bytes;
		return CB_OK;
	}
	if (!req->priv.u64[R_CAP]) {
		struct vb_hdr h = { .type = VB_EAGER,
			            .seq = seq,
			            .tag = req->tag,
			            .bytes = req->bytes };
		st = send_msg(ep, 0, &h, req->priv.ptr[R_BUF], req->bytes,
		              mr ? mr->mr[0]->lkey : 0, req, &done);
		if (st)
			return st;
		ctx->stats.eager_msgs++;
		ctx->stats.eager_bytes += req->bytes;
		if (done)
			landed_send(req);
		return CB_OK;
	}
	struct vb_hdr h = { .type = VB_RTS,
		            .seq = seq,
		            .tag = req->tag,
		            .bytes = req->bytes,
		            .addr = mr != NULL };
	if ((st = send_msg(ep, 0, &h, NULL, 0, 0, NULL, &done)))
		return st;
	ep->rfifo[ep->rf_tail++ % VB_RNDV_Q] = seq;
	return CB_OK;
}

static cb_status_t send_progress(struct cb_tp_ep *ep, int *moved)
{
	cb_status_t st;

	while (ep->sq_head) {
		struct cb_tp_req *req = ep->sq_head;
		if ((st = send_head(ep, req)) == CB_AGAIN)
			break;
		if (st)
			return st;
		ep->sq_head = req->next;
		if (!ep->sq_head)
			ep->sq_tail = NULL;
		*moved = 1;
	}
	/* large sends, in order, as their RTRs come */
	while (ep->rf_head != ep->rf_tail) {
		uint32_t seq = ep->rfifo[ep->rf_head % VB_RNDV_Q];
		if (!ep->rtr[seq % VB_RNDV_Q].got)
			break;
		if ((st = rndv_send(ep, seq)) == CB_AGAIN)
			break;
		if (st)
			return st;
		ep->rtr[seq % VB_RNDV_Q].got = 0;
		ep->rndv_send[seq % VB_RNDV_Q] = NULL;
		ep->rf_head++;
		*moved = 1;
	}
	return CB_OK;
}

/* ---- the receiving side ---- */

/* Match arrived messages with posted receives, in order. */
static cb_status_t match(struct cb_tp_ep *ep, int *moved)
{
	while (ep->rq_head && ep->arr_head != ep->arr_tail) {
		struct vb_arrival *a = &ep->arr[ep->arr_head % VB_ARRIVALS];
		struct cb_tp_req *req = ep->rq_head;
		uint32_t seq = (uint32_t)req->priv.u64[R_SEQ];

		if (a->seq != seq)
			return ep_err(ep, CB_ERR_PROTO,
			              "sent message %llu where this rank "
			              "expected %llu",
			              a->seq, seq);
		if (a->tag != req->tag)
			return ep_err(ep, CB_ERR_PROTO,
			              "sent message tag 0x%llx where this rank "
			              "expected 0x%llx (schedules disagree)",
			              a->tag, req->tag);
		if (a->bytes > req->priv.u64[R_CAP])
			return ep_err(ep, CB_ERR_TRUNCATE,
			              "sent %llu bytes to a %llu-byte receive",
			              a->bytes, req->priv.u64[R_CAP]);
		req->bytes = a->bytes;
		if (a->bytes && (a->type == VB_EAGER || !a->zcopy) &&
		    (req->priv.u64[R_KIND] & K_GPU))
			return ep_err(
			        ep, CB_ERR_PROTO,
			        "sent %llu bytes through host buffers into "
			        "device memory (its buffer is host memory "
			        "or unregistered)%.0llu",
			        a->bytes, 0);
		if (a->type == VB_EAGER) {
			memcpy(req->priv.ptr[R_BUF],
			       recv_slot(&ep->q[0], a->slot) + HDR, a->bytes);
			cb_status_t st = repost(ep, 0, a->slot);
			if (st)
				return st;
			landed_recv(ep, req);
		} else {
			const struct cb_tp_mr *mr = req_mr(req);
			int zc = a->zcopy && mr;
			int k = a->bytes >= VB_STRIPE_MIN ? ep->nrails : 1;
			struct vb_hdr h = {
				.type = VB_RTR,
				.seq = seq,
				.addr = (uintptr_t)req->priv.ptr[R_BUF]
			};
			for (int j = 0; zc && j < ep->nrails; j++)
				h.rkey[j] = mr->mr[j]->rkey;
			int done;
			cb_status_t st =
			        send_msg(ep, 0, &h, NULL, 0, 0, NULL, &done);
			if (st == CB_AGAIN)
				break; /* no credit now: later */
			if (st)
				return st;
			req->priv.u64[R_WAIT] = zc ? (uint64_t)k : 0;
			ep->rndv_recv[seq % VB_RNDV_Q] = req;
		}
		ep->arr_head++;
		ep->rq_head = req->next;
		if (!ep->rq_head)
			ep->rq_tail = NULL;
		*moved = 1;
	}
	return CB_OK;
}

/* A write with immediate (or a FIN) of rendezvous @seq arrived. */
static cb_status_t rndv_done(struct cb_tp_ep *ep, uint32_t seq)
{
	struct cb_tp_req *req = ep->rndv_recv[seq % VB_RNDV_Q];

	if (!req || (uint32_t)req->priv.u64[R_SEQ] != seq ||
	    !req->priv.u64[R_WAIT])
		return ep_err(ep, CB_ERR_PROTO,
		              "finished a large message (%llu) this rank did "
		              "not ask for%.0llu",
		              seq, 0);
	if (--req->priv.u64[R_WAIT] == 0) {
		ep->rndv_recv[seq % VB_RNDV_Q] = NULL;
		ep->ctx->stats.zcopy_msgs++;
		ep->ctx->stats.zcopy_bytes += req->bytes;
		landed_recv(ep, req);
	}
	return CB_OK;
}

static cb_status_t frag_in(struct cb_tp_ep *ep, const struct vb_hdr *h)
{
	struct cb_tp_req *req = ep->rndv_recv[h->seq % VB_RNDV_Q];

	if (!req || (uint32_t)req->priv.u64[R_SEQ] != h->seq ||
	    h->bytes > VB_EAGER_MAX || h->addr > req->bytes ||
	    h->bytes > req->bytes - h->addr)
		return ep_err(ep, CB_ERR_PROTO,
		              "sent a piece (%llu bytes at %llu) of no message "
		              "this rank receives",
		              h->bytes, h->addr);
	memcpy((char *)req->priv.ptr[R_BUF] + h->addr, (const uint8_t *)h + HDR,
	       h->bytes);
	ep->ctx->stats.bounce_bytes += h->bytes;
	req->priv.u64[R_OFF] += h->bytes;
	if (req->priv.u64[R_OFF] == req->bytes) {
		ep->rndv_recv[h->seq % VB_RNDV_Q] = NULL;
		landed_recv(ep, req);
	}
	return CB_OK;
}

static cb_status_t notify_in(struct cb_tp_ep *ep, uint32_t v)
{
	if (ep->nq_tail - ep->nq_head == VB_NOTIFY_Q)
		return ep_err(ep, CB_ERR_PROTO,
		              "raised more than %llu notifications nobody "
		              "read%.0llu",
		              VB_NOTIFY_Q, 0);
	ep->notify[ep->nq_tail++ % VB_NOTIFY_Q] = v;
	return CB_OK;
}

static cb_status_t recv_done(struct cb_tp_ep *ep, int rail, int slot,
                             const struct ibv_wc *wc)
{
	struct vb_qp *q = &ep->q[rail];
	const struct vb_hdr *h = (const void *)recv_slot(q, slot);
	cb_status_t st = CB_OK;

	if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
		uint32_t imm = ntohl(wc->imm_data);
		st = imm & VB_IMM_RNDV ? rndv_done(ep, imm & ~VB_IMM_RNDV)
		                       : notify_in(ep, imm);
		return st ? st : repost(ep, rail, slot);
	}
	if (wc->byte_len < HDR)
		return ep_err(ep, CB_ERR_PROTO,
		              "sent a %llu-byte message that does not "
		              "parse%.0llu",
		              wc->byte_len, 0);
	q->credits += h->credits;
	switch (h->type) {
	case VB_EAGER:
	case VB_RTS:
		if (rail != 0 || ep->arr_tail - ep->arr_head == VB_ARRIVALS)
			return ep_err(ep, CB_ERR_PROTO,
			              "sent more messages than it had credit "
			              "for (rail %llu)%.0llu",
			              rail, 0);
		if (h->type == VB_EAGER && wc->byte_len != HDR + h->bytes)
			return ep_err(ep, CB_ERR_PROTO,
			              "sent %llu bytes for a %llu-byte message",
			              wc->byte_len - HDR, h->bytes);
		ep->arr[ep->arr_tail++ % VB_ARRIVALS] = (struct vb_arrival){
			.type = h->type,
			.zcopy = h->type == VB_RTS && h->addr,
			.slot = (uint16_t)slot,
			.seq = h->seq,
			.tag = h->tag,
			.bytes = h->bytes,
		};
		/* an EAGER keeps its slot until its receive takes it */
		return h->type == VB_RTS ? repost(ep, rail, slot) : CB_OK;
	case VB_RTR:
		ep->rtr[h->seq % VB_RNDV_Q].got = 1;
		ep->rtr[h->seq % VB_RNDV_Q].addr = h->addr;
		memcpy(ep->rtr[h->seq % VB_RNDV_Q].rkey, h->rkey,
		       sizeof(h->rkey));
		break;
	case VB_FRAG:
		st = frag_in(ep, h);
		break;
	case VB_FIN:
		st = rndv_done(ep, h->seq);
		break;
	case VB_NOTIFY:
		st = notify_in(ep, (uint32_t)h->tag);
		break;
	case VB_HELLO:
		q->hello_in = 1;
		break;
	case VB_CREDIT:
		break;
	default:
		return ep_err(ep, CB_ERR_PROTO,
		              "sent a message of unknown type %llu%.0llu",
		              h->type, 0);
	}
	return st ? st : repost(ep, rail, slot);
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
	int peer = (int)((wc->wr_id & ~WR_RECV) >> 40);
	struct cb_tp_ep *ep = peer < ctx->host->world ? ctx->eps[peer] : NULL;
	const struct vb_rail *r = &ctx->rail[rail];

	if (!ep)
		return ctx->host->fail(CB_ERR_PEER,
		                       "verbs: %s on %s:%d (QP 0x%x)",
		                       ibv_wc_status_str(wc->status), r->name,
		                       r->port, wc->qp_num);
	if (ep->err)
		return ep->err;
	return ep->err = ctx->host->fail(
	               CB_ERR_PEER,
	               "verbs: %s: peer %d (%s, %s:%d) %s (QP 0x%x on %s:%d)",
	               ibv_wc_status_str(wc->status), peer, vb_host(ctx, peer),
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
				               CB_ERR_PEER,
				               "verbs: rank %d (host %s) wrote "
				               "with a "
				               "wrong key or outside the "
				               "memory this "
				               "rank gave it: access refused "
				               "on queue "
				               "pair 0x%x, %s:%d",
				               ep->peer, vb_host(ctx, ep->peer),
				               qpn, ctx->rail[j].name,
				               ctx->rail[j].port);
			return ep->err = ctx->host->fail(
			               CB_ERR_PEER,
			               "verbs: %s on the queue pair 0x%x to "
			               "rank "
			               "%d (host %s) on %s:%d: the device "
			               "stopped "
			               "it",
			               ibv_event_type_str(t), qpn, ep->peer,
			               vb_host(ctx, ep->peer),
			               ctx->rail[j].name, ctx->rail[j].port);
		}
	}
	return CB_OK;
}

/* Asynchronous events: a port that went down, a QP the device killed. */
static cb_status_t async_events(struct cb_tp_ctx *ctx)
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
			if (t == IBV_EVENT_PORT_ERR ||
			    t == IBV_EVENT_DEVICE_FATAL)
				return ctx->host->fail(
				        CB_ERR_PEER,
				        "verbs: port %s:%d went down (%s)",
				        r->name, r->port,
				        ibv_event_type_str(t));
			if (on_qp && (st = qp_event(ctx, qpn, t)))
				return st;
			ctx->host->log(CB_TP_LOG_INFO, "%s:%d: %s", r->name,
			               r->port, ibv_event_type_str(t));
		}
	}
	ctx->async_fl = 1;
	return CB_OK;
}

cb_status_t vb_progress(struct cb_tp_ctx *ctx)
{
	struct ibv_wc wc[32];
	int moved = 0;
	cb_status_t st;

	if (ctx->use_cm && (st = vb_cm_progress(ctx)))
		return st;
	for (int i = 0; i < ctx->nrails; i++) {
		int n;
		while ((n = ibv_poll_cq(ctx->rail[i].cq, 32, wc)) > 0) {
			moved = 1;
			for (int k = 0; k < n; k++) {
				const struct ibv_wc *w = &wc[k];
				int peer = (int)((w->wr_id & ~WR_RECV) >> 40);
				int rail = (int)((w->wr_id >> 36) & 15);
				struct cb_tp_ep *ep = ctx->eps[peer];
				if (!ep || ep->closed)
					continue; /* given up: its echoes */
				if (w->status == IBV_WC_WR_FLUSH_ERR) {
					if (!ctx->flush_deadline_ns) {
						ctx->flush_wc = *w;
						ctx->flush_rail = rail;
						ctx->flush_deadline_ns =
						        ctx->host->now_ns() +
						        1000000000ull;
					}
					continue;
				}
				if (w->status != IBV_WC_SUCCESS)
					return vb_wc_fail(ctx, rail, w);
				if (w->wr_id & WR_RECV)
					st = recv_done(ep, rail,
					               (int)(w->wr_id & WR_LOW),
					               w);
				else
					send_done(ep, rail, w->wr_id & WR_LOW),
					        st = CB_OK;
				if (st)
					return st;
			}
		}
		if (n < 0)
			return ctx->host->fail(CB_ERR_SYS,
			                       "verbs: polling %s's CQ failed",
			                       ctx->rail[i].name);
	}
	for (int i = 0; i < ctx->nactive; i++) {
		struct cb_tp_ep *ep = ctx->eps[ctx->active[i]];
		if (ep->err)
			return ep->err;
		if ((st = match(ep, &moved)) ||
		    (st = send_progress(ep, &moved)))
			return st;
		for (int j = 0; j < ep->nrails; j++)
			if (ep->q[j].unreported >= VB_RECV_SLOTS / 2 &&
			    (st = vb_send_ctrl(ep, j, VB_CREDIT, 0, 0)))
				return st;
	}
	uint64_t now = ctx->host->now_ns();
	if (now >= ctx->next_async_ns || ctx->flush_deadline_ns) {
		ctx->next_async_ns = now + 10000000ull;
		if ((st = async_events(ctx)))
			return st;
	}
	/* A flush with no cause found here: the peer's line (through the
	 * store) had its second; this one names what we saw. */
	if (ctx->flush_deadline_ns && now > ctx->flush_deadline_ns)
		return vb_wc_fail(ctx, ctx->flush_rail, &ctx->flush_wc);
	return moved ? CB_OK : CB_AGAIN;
}
