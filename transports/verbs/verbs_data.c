/* SPDX-License-Identifier: MIT */
/*
 * transports/verbs/verbs_data.c - the verbs data path: posting, the sending
 * side, progress.  The receiving side is verbs_recv.c.
 *
 * Per peer and rail one RC queue pair with VB_RECV_SLOTS receive slots of
 * 8 KiB posted and VB_SEND_SLOTS send slots; credits count the peer's posted
 * slots, come back in every header (or in a CREDIT message when half are
 * owed), and two are kept for credit returns alone, so the pair can never
 * wedge.  Every message has a sequence number per direction; the receiver
 * finds the receive a message belongs to by it.
 *
 * Messages up to the eager limit (one slot less its header; lower with
 * --verbs-eager-bytes) travel as one SEND: header from a send slot, payload
 * straight from the user's registered buffer (or copied into the slot when
 * it is not registered), inline when the whole fits the device's inline
 * limit.  Larger ones are zero-copy, driven by the receiver's buffer:
 *
 *   receiver, when a receive larger than the eager limit is posted into
 *   registered memory:   RTR {seq, address, capacity, rkey per rail}
 *   sender, once it has the RTR:   RDMA WRITE ... WRITE WITH IMMEDIATE
 *   (seq; "sized": the message fills the receive), per rail
 *
 * so a posted receive costs one message and a large send one write: no
 * handshake on the way.  A sender that gets there first says RTS {seq,
 * size} and waits for the RTR; one whose message is smaller than the
 * receive sends an RTS too (the receiver learns the size from it).  From
 * 256 KiB a message is cut into one piece per rail (striping), pieces into
 * chunks within the port's max message.  iWARP has no immediate: WRITE,
 * then a FIN {seq, size} on the same queue pair.  When either buffer is
 * not registered the message goes through the slots in FRAG pieces: those
 * bytes are counted (stats.bounce_bytes), so a test shows the large path
 * copies nothing.  Sends are signalled selectively: those a request waits
 * for, and one in VB_SIGNAL_EVERY so the slots come back.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "transports/verbs/verbs.h"

static inline void landed_send(struct cb_tp_req *req)
{
	if (req->priv.u64[R_WAIT] == 0)
		req->priv.u64[R_DONE] = 1;
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

/* What a send and a put set alike in @req, which then joins the send
 * queue: its tag (a put's: the notification), bytes, buffer and its
 * registration, its kind; R_SEQ, R_CAP: @seq, @cap. */
static void sq_post(struct cb_tp_ep *ep, struct cb_tp_req *req, uint64_t tag,
                    size_t bytes, const void *buf, const struct cb_tp_mem *mem,
                    uint64_t kind, uint64_t seq, uint64_t cap)
{
	req->tag = tag;
	req->bytes = bytes;
	req->priv.u64[R_DONE] = 0;
	req->priv.ptr[R_BUF] = (void *)buf;
	req->priv.u64[R_KIND] = kind;
	req->priv.ptr[R_MR] = mem->mr;
	req->priv.u64[R_SEQ] = seq;
	req->priv.u64[R_CAP] = cap;
	req->priv.u64[R_WAIT] = 0;
	req->priv.u64[R_OFF] = 0;
	tpu_q_push(&ep->sq_head, &ep->sq_tail, req);
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
	if (big)
		ep->rndv_send[ep->send_seq % VB_RNDV_Q] = req;
	/* sends have no capacity: R_CAP says zero-copy */
	sq_post(ep, req, tag, bytes, buf, mem, K_SEND, ep->send_seq++,
	        (uint64_t)big);
	return CB_OK;
}

cb_status_t vb_put(struct cb_tp_ep *ep, const void *buf, size_t bytes,
                   const struct cb_tp_mem *mem, struct cb_tp_rmem *rm,
                   uint64_t roff, uint32_t notify, struct cb_tp_req *req)
{
	const struct cb_tp_host *h = ep->ctx->host;

	if (ep->err)
		return ep->err;
	cb_status_t st;

	if ((st = tpu_put_fits(h, "verbs", ep->peer, bytes, roff, rm->bytes)))
		return st;
	if (notify & VB_IMM_RNDV)
		return h->fail(h, CB_ERR_INVALID,
		               "verbs: put notifications are below 2^31");
	if (!mem->mr)
		return h->fail(h, CB_ERR_UNSUPPORTED,
		               "verbs: a put needs registered memory");
	/* a put's R_CAP: where it goes, R_SEQ: its rkey */
	sq_post(ep, req, notify, bytes, buf, mem, K_PUT, rm->rkey[0],
	        rm->addr + roff);
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
	req->priv.u64[R_KIND] = K_RECV | (mem->kind == CB_MEM_GPU ? K_GPU : 0);
	req->priv.ptr[R_MR] = mem->mr;
	req->priv.u64[R_SEQ] = ep->recv_seq;
	req->priv.u64[R_WAIT] = 0;
	req->priv.u64[R_OFF] = 0;
	ep->rseq[ep->recv_seq++ % VB_RNDV_Q] = req;
	return vb_recv_posted(ep, req);
}

cb_status_t vb_test(struct cb_tp_ep *ep, struct cb_tp_req *req)
{
	if (req->priv.u64[R_DONE] &&
	    ((req->priv.u64[R_KIND] & K_MASK) != K_RECV ||
	     VB_SEQ_LT((uint32_t)req->priv.u64[R_SEQ], ep->recv_upto)))
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

/* ---- the sending side ---- */

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
	const struct cb_tp_mr *mr = vb_req_mr(req);
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
		if (!vb_may_send(ep, &ep->q[j]) ||
		    !vb_sq_room(&ep->q[j], need) ||
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
			st = vb_post_wr(ep, j, &wr,
			                last && how != W_SEND ? req : NULL);
			if (st)
				return st;
		}
		if (how == W_SEND) {
			int done;
			st = vb_send_msg(ep, j, after, NULL, 0, 0, req, &done);
			if (st)
				return st == CB_AGAIN
				               ? vb_ep_err(
				                         ep, CB_ERR_PROTO,
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

static cb_status_t send_rts(struct cb_tp_ep *ep, struct cb_tp_req *req,
                            int zcopy)
{
	struct vb_hdr h = { .type = VB_RTS,
		            .seq = (uint32_t)req->priv.u64[R_SEQ],
		            .tag = req->tag,
		            .bytes = req->bytes,
		            .addr = (uint64_t)zcopy };
	int done;
	cb_status_t st = vb_send_msg(ep, 0, &h, NULL, 0, 0, NULL, &done);

	if (!st)
		req->priv.u64[R_KIND] |= K_RTS;
	return st;
}

/*
 * A large send whose RTR is here: write it (after an RTS when the receiver
 * does not know its size yet), or send it through the slots.  CB_AGAIN:
 * call again (a FRAG stream resumes where it stopped).
 */
static cb_status_t rndv_go(struct cb_tp_ep *ep, struct cb_tp_req *req)
{
	uint32_t seq = (uint32_t)req->priv.u64[R_SEQ];
	const struct vb_rtr *r = &ep->rtr[seq % VB_RNDV_Q];
	int iwarp = ep->ctx->rail[0].link == VB_LINK_IWARP;
	int zc = r->rkey[0] && vb_req_mr(req) && req->bytes <= r->cap;
	int rts = req->priv.u64[R_KIND] & K_RTS;
	cb_status_t st;

	if (zc) {
		int k = req->bytes >= VB_STRIPE_MIN ? ep->nrails : 1;
		/* the receiver learns the size from an RTS, or from the
		 * immediate when the message fills its receive */
		if (!rts && req->bytes != r->cap && (st = send_rts(ep, req, 1)))
			return st;
		rts = req->priv.u64[R_KIND] & K_RTS;
		uint32_t imm = vb_imm_encode(&(struct vb_imm){
		        .rndv = 1, .sized = !rts, .k = k, .seq = seq });
		struct vb_hdr fin = { .type = VB_FIN,
			              .seq = seq,
			              .bytes = req->bytes,
			              .addr = (uint64_t)k };
		st = write_all(ep, req, k, r->addr, r->rkey,
		               iwarp ? W_SEND : W_IMM, imm, &fin);
		if (st)
			return st;
		ep->ctx->stats.zcopy_msgs++;
		ep->ctx->stats.zcopy_bytes += req->bytes;
		return CB_OK;
	}
	/* through the slots: the receiver must know the size first */
	if (!rts && (st = send_rts(ep, req, 0)))
		return st;
	if (req->bytes > r->cap)
		return CB_OK; /* it refuses the RTS: its line */
	while (req->priv.u64[R_OFF] < req->bytes) {
		size_t off = req->priv.u64[R_OFF];
		size_t n = req->bytes - off;
		if (n > VB_EAGER_MAX)
			n = VB_EAGER_MAX;
		struct vb_hdr h = {
			.type = VB_FRAG, .seq = seq, .bytes = n, .addr = off
		};
		int done;
		st = vb_send_msg(ep, 0, &h, (char *)req->priv.ptr[R_BUF] + off,
		                 n, 0, NULL, &done);
		if (st)
			return st;
		req->priv.u64[R_OFF] = off + n;
		ep->ctx->stats.bounce_bytes += n;
	}
	landed_send(req);
	return CB_OK;
}

static int rtr_here(const struct cb_tp_ep *ep, uint32_t seq)
{
	return ep->rtr[seq % VB_RNDV_Q].got &&
	       ep->rtr[seq % VB_RNDV_Q].seq == seq;
}

static cb_status_t send_head(struct cb_tp_ep *ep, struct cb_tp_req *req)
{
	struct cb_tp_ctx *ctx = ep->ctx;
	const struct cb_tp_mr *mr = vb_req_mr(req);
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
		st = vb_send_msg(ep, 0, &h, req->priv.ptr[R_BUF], req->bytes,
		                 mr ? mr->mr[0]->lkey : 0, req, &done);
		if (st)
			return st;
		ctx->stats.eager_msgs++;
		ctx->stats.eager_bytes += req->bytes;
		if (done)
			landed_send(req);
		return CB_OK;
	}
	/* the receiver's RTR first, or say we are ready and wait for it */
	if (!rtr_here(ep, seq) && (st = send_rts(ep, req, mr != NULL)))
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
		if (!rtr_here(ep, seq))
			break;
		if ((st = rndv_go(ep, ep->rndv_send[seq % VB_RNDV_Q])) ==
		    CB_AGAIN)
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

cb_status_t vb_progress(struct cb_tp_ctx *ctx)
{
	int moved = 0;
	cb_status_t st;

	if (ctx->use_cm && (st = vb_cm_progress(ctx)))
		return st;
	for (int i = 0; i < ctx->nrails; i++)
		if ((st = vb_poll_cq(ctx, i, &moved)))
			return st;
	for (int i = 0; i < ctx->nactive; i++) {
		struct cb_tp_ep *ep = ctx->eps[ctx->active[i]];
		if (ep->err)
			return ep->err;
		if ((ep->rtr_due && (st = vb_recv_rtrs(ep, &moved))) ||
		    (st = send_progress(ep, &moved)))
			return st;
		for (int j = 0; j < ep->nrails; j++)
			if ((ctx->use_cm &&
			     (!ep->q[j].hello_out || !ep->q[j].hello_in) &&
			     (st = vb_cm_hello(ep, j))) ||
			    (ep->q[j].unreported >= VB_RECV_SLOTS / 2 &&
			     (st = vb_send_ctrl(ep, j, VB_CREDIT, 0, 0))))
				return st;
	}
	uint64_t now = ctx->host->now_ns(ctx->host);
	if (now >= ctx->next_async_ns || ctx->flush_deadline_ns) {
		ctx->next_async_ns = now + 10000000ull;
		if ((st = vb_async_events(ctx)))
			return st;
	}
	/* A flush with no cause found here: the peer's line (through the
	 * store) had its second; this one names what we saw. */
	if (ctx->flush_deadline_ns && now > ctx->flush_deadline_ns)
		return vb_wc_fail(ctx, ctx->flush_rail, &ctx->flush_wc);
	return moved ? CB_OK : CB_AGAIN;
}
