/* SPDX-License-Identifier: MIT */
/*
 * transports/verbs/verbs_conn.c - RC queue pairs and how a pair of ranks
 * connects them, one per rail.
 *
 * Out of band (InfiniBand and RoCE, the default): ep_create makes the QPs
 * (INIT), posts their receive slots and writes {QP number, PSN, LID, GID,
 * port, MTU, link layer} per rail into the blob the core publishes for that
 * peer; ep_connect takes the peer's, moves the QPs to RTR (path MTU the
 * smaller of both ports', a GRH for RoCE) and RTS, and sends HELLO on each.
 * HELLO goes out only in ep_ready, once the core has learnt through the
 * bootstrap that the peer's QPs are in RTR too (a message to a QP that is
 * not would be dropped, and retried only until the retry count runs out):
 * the out-of-band barrier every RDMA program needs.  The pair is connected
 * once each side's HELLO has arrived.
 *
 * rdma_cm (iWARP, where it is the only way, or --verbs-cm rdma_cm): each
 * rail listens on its address (published as the context's address); the
 * higher rank of a pair resolves the lower one's, makes its QP on the
 * cm_id and connects with {magic, rank, rail, job} as private data; the
 * lower one accepts.  Events are read without blocking in progress().
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "transports/verbs/verbs.h"

struct vb_cm_priv {
	uint32_t magic;
	int32_t rank, rail, pad;
	uint64_t job_id;
};

static cb_status_t ep_fail(struct cb_tp_ep *ep, cb_status_t st,
                           const char *what, int err)
{
	const struct cb_tp_host *h = ep->ctx->host;

	if (!ep->err)
		ep->err =
		        h->fail(h, st, "verbs: %s rank %d (host %s)%s%s", what,
		                ep->peer, tpu_host(ep->ctx->host, ep->peer),
		                err ? ": " : "", err ? strerror(err) : "");
	return ep->err;
}

/*
 * rdma_cm, at -vv: one line per step of a pair's handshake (each event,
 * each HELLO out, the answer), timed in seconds since this host booted,
 * as dmesg times siw's own connection-manager messages: the log of a run
 * that stalls connecting says who waited for what.
 */
static void cm_trace(const struct cb_tp_ep *ep, int i, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static void cm_trace(const struct cb_tp_ep *ep, int i, const char *fmt, ...)
{
	static const char *const st[] = { "none", "created", "RTS", "cm-wait",
		                          "ERR" };
	const struct cb_tp_host *h = ep->ctx->host;
	const struct vb_qp *q = &ep->q[i];
	char line[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	h->log(h, CB_TP_LOG_DEBUG,
	       "rdma_cm %s rank %d, rail %d, %.3f s: %s (QP %s, HELLOs %d out, "
	       "%d in)",
	       ep->dialer ? "to" : "from", ep->peer, i,
	       (double)h->now_ns(h) / 1e9, line,
	       q->state >= 0 && q->state <= QP_ERR ? st[q->state] : "?",
	       q->hellos, q->hello_in);
}

static struct cb_tp_ep *ep_get(struct cb_tp_ctx *ctx, int peer)
{
	struct cb_tp_ep *ep = ctx->eps[peer];

	if (ep)
		return ep;
	if (!(ep = calloc(1, sizeof(*ep))))
		return NULL;
	ep->ctx = ctx;
	ep->peer = peer;
	ep->nrails = ctx->nrails;
	ep->dialer = peer < ctx->host->rank;
	ctx->eps[peer] = ep;
	ctx->active[ctx->nactive++] = peer;
	return ep;
}

/* The QP of @ep on @rail, its slots registered and its receives posted;
 * through rdma_cm when @id is given. */
static cb_status_t qp_make(struct cb_tp_ep *ep, int rail, struct rdma_cm_id *id)
{
	struct cb_tp_ctx *ctx = ep->ctx;
	struct vb_rail *r = &ctx->rail[rail];
	struct vb_qp *q = &ep->q[rail];
	size_t sb = (size_t)(VB_SEND_SLOTS + VB_RECV_SLOTS) * VB_SLOT_BYTES;
	int cqi = q->cq - 1;
	cb_status_t st;

	if (!q->cq) { /* room on one of the rail's CQs */
		if ((st = vb_cq_attach(ctx, rail, &cqi)))
			return ep->err ? ep->err : (ep->err = st);
		q->cq = cqi + 1;
	}
	struct ibv_qp_init_attr ia = {
		.send_cq = r->cqs[cqi].cq,
		.recv_cq = r->cqs[cqi].cq,
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 0,
		.cap = { .max_send_wr = VB_SEND_SLOTS,
		         .max_recv_wr = VB_RECV_SLOTS,
		         .max_send_sge = 2,
		         .max_recv_sge = 1,
		         .max_inline_data = r->max_inline },
	};

	if (!q->slots) {
		if (posix_memalign((void **)&q->slots, 4096, sb))
			return ep_fail(ep, CB_ERR_NOMEM,
			               "no memory for the buffers of", 0);
		memset(q->slots, 0, sb);
		q->slots_mr =
		        ibv_reg_mr(r->pd, q->slots, sb, IBV_ACCESS_LOCAL_WRITE);
		if (!q->slots_mr)
			return ep_fail(ep, CB_ERR_SYS,
			               "cannot register the buffers for",
			               errno);
	}
	if (id) {
		int bad = rdma_create_qp(id, r->pd, &ia);
		if (bad && ia.cap.max_inline_data) {
			/* siw takes 80 inline bytes at most */
			r->max_inline = ia.cap.max_inline_data = 0;
			bad = rdma_create_qp(id, r->pd, &ia);
		}
		if (bad)
			return ep_fail(ep, CB_ERR_SYS,
			               "rdma_create_qp failed for", errno);
		q->qp = id->qp;
		q->cm_id = id;
	} else {
		q->qp = ibv_create_qp(r->pd, &ia);
		if (!q->qp && ia.cap.max_inline_data) {
			/* a device with less inline room than we asked */
			r->max_inline = ia.cap.max_inline_data = 0;
			q->qp = ibv_create_qp(r->pd, &ia);
		}
		if (!q->qp)
			return ep_fail(ep, CB_ERR_SYS,
			               "cannot create a queue pair for", errno);
		struct ibv_qp_attr a = {
			.qp_state = IBV_QPS_INIT,
			.pkey_index = 0,
			.port_num = (uint8_t)r->port,
			.qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
			                   IBV_ACCESS_REMOTE_WRITE |
			                   IBV_ACCESS_REMOTE_READ,
		};
		if (ibv_modify_qp(q->qp, &a,
		                  IBV_QP_STATE | IBV_QP_PKEY_INDEX |
		                          IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
			return ep_fail(ep, CB_ERR_SYS,
			               "cannot move to INIT the queue pair for",
			               errno);
	}
	if (ia.cap.max_inline_data < r->max_inline)
		r->max_inline = ia.cap.max_inline_data;
	q->psn = (uint32_t)lrand48() & 0xffffff;
	q->credits = VB_RECV_SLOTS;
	q->state = QP_CREATED;
	return vb_post_recv_slots(ep, rail);
}

cb_status_t vb_ep_create(struct cb_tp_ctx *ctx, int peer, struct cb_tp_ep **out,
                         void *blob, size_t *bytes)
{
	struct cb_tp_ep *ep = ep_get(ctx, peer);
	cb_status_t st;

	if (!ep)
		return ctx->host->fail(ctx->host, CB_ERR_NOMEM,
		                       "verbs: out of memory");
	*out = ep;
	ep->mine = (struct vb_ep_blob){ .magic = VB_MAGIC,
		                        .rank = ctx->host->rank,
		                        .nrails = (uint32_t)ctx->nrails };
	for (int i = 0; i < ctx->nrails; i++) {
		const struct vb_rail *r = &ctx->rail[i];
		if (!ctx->use_cm) {
			if (ep->q[i].state == QP_NONE &&
			    (st = qp_make(ep, i, NULL)))
				return st;
			ep->mine.rail[i].qpn = ep->q[i].qp->qp_num;
			ep->mine.rail[i].psn = ep->q[i].psn;
		}
		ep->mine.rail[i].lid = r->lid;
		ep->mine.rail[i].port = (uint8_t)r->port;
		ep->mine.rail[i].mtu = (uint8_t)r->mtu;
		ep->mine.rail[i].link = (uint8_t)r->link;
		memcpy(ep->mine.rail[i].gid, r->gid.raw, 16);
		snprintf(ep->mine.rail[i].dev, sizeof(ep->mine.rail[i].dev),
		         "%.15s", r->name);
	}
	memcpy(blob, &ep->mine, sizeof(ep->mine));
	*bytes = sizeof(ep->mine);
	return CB_OK;
}

/* INIT -> RTR -> RTS against the peer's rail @i, then HELLO. */
static cb_status_t qp_connect(struct cb_tp_ep *ep, int i,
                              const struct vb_ep_blob *b)
{
	struct cb_tp_ctx *ctx = ep->ctx;
	const struct vb_rail *r = &ctx->rail[i];
	struct vb_qp *q = &ep->q[i];
	enum ibv_mtu mtu =
	        r->mtu < b->rail[i].mtu ? r->mtu : (enum ibv_mtu)b->rail[i].mtu;
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = mtu,
		.dest_qp_num = b->rail[i].qpn,
		.rq_psn = b->rail[i].psn,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = { .dlid = b->rail[i].lid,
		             .sl = (uint8_t)ctx->sl,
		             .port_num = (uint8_t)r->port },
	};

	if (b->rail[i].link != r->link)
		return ep->err = ctx->host->fail(
		               ctx->host, CB_ERR_UNSUPPORTED,
		               "verbs: rank %d (host %s) uses %s on %s and "
		               "this "
		               "rank %s on %s: they cannot connect",
		               ep->peer, tpu_host(ctx->host, ep->peer),
		               vb_link_name((enum vb_link)b->rail[i].link),
		               b->rail[i].dev, vb_link_name(r->link), r->name);
	if (r->gid_index >= 0) {
		a.ah_attr.is_global = 1;
		memcpy(a.ah_attr.grh.dgid.raw, b->rail[i].gid, 16);
		a.ah_attr.grh.sgid_index = (uint8_t)r->gid_index;
		a.ah_attr.grh.hop_limit = 64;
	}
	if (ibv_modify_qp(q->qp, &a,
	                  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
	                          IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
	                          IBV_QP_MAX_DEST_RD_ATOMIC |
	                          IBV_QP_MIN_RNR_TIMER))
		return ep_fail(ep, CB_ERR_SYS,
		               "cannot move to RTR the queue pair for", errno);
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS,
		                  .timeout = 17, /* 4.096 us << 17: 0.5 s */
		                  .retry_cnt = 7,
		                  .rnr_retry = 7,
		                  .sq_psn = q->psn,
		                  .max_rd_atomic = 1 };
	if (ibv_modify_qp(q->qp, &a,
	                  IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
	                          IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
	                          IBV_QP_MAX_QP_RD_ATOMIC))
		return ep_fail(ep, CB_ERR_SYS,
		               "cannot move to RTS the queue pair for", errno);
	q->state = QP_RTS;
	return CB_OK; /* HELLO once the peer is in RTR too: vb_ep_ready */
}

cb_status_t vb_ep_ready(struct cb_tp_ep *ep)
{
	cb_status_t st;

	if (ep->ctx->use_cm)
		return CB_OK; /* rdma_cm's ESTABLISHED says it: HELLO there */
	for (int i = 0; i < ep->nrails; i++)
		if ((st = vb_send_ctrl(ep, i, VB_HELLO, 0, 0)))
			return st;
	return CB_OK;
}

/*
 * The active side's HELLO goes at ESTABLISHED; the passive side's once that
 * HELLO is here (and its own ESTABLISHED, in whichever order the completion
 * and the event come), never first: see vb_may_send.
 *
 * The active side repeats its HELLO (50 ms, then twice as long each time)
 * until the passive side's comes, because siw can sit on it: the passive
 * side's socket goes over to the queue pair only after siw_accept has sent
 * the MPA reply, and a message that lands in between is left in the socket
 * (siw_cm_llp_data_ready ignores data in RDMA mode) until the next one
 * arrives.  With the passive side waiting for it, that is a deadlock; a
 * second HELLO wakes the socket, and the receiver takes any number.
 */
cb_status_t vb_cm_hello(struct cb_tp_ep *ep, int i)
{
	struct vb_qp *q = &ep->q[i];
	struct vb_hdr h = { .type = VB_HELLO };
	uint64_t now = 0;
	int done;
	cb_status_t st;

	if (!vb_may_send(ep, q))
		return CB_OK;
	if (q->hello_out) {
		if (!ep->dialer || q->hello_in || q->hellos >= VB_HELLO_TRIES)
			return CB_OK;
		now = ep->ctx->host->now_ns(ep->ctx->host);
		if (now - q->hello_ns < VB_HELLO_NUDGE_NS << (q->hellos - 1))
			return CB_OK;
	}
	st = vb_send_msg(ep, i, &h, NULL, 0, 0, NULL, &done);
	if (st)
		return st == CB_AGAIN ? CB_OK : st;
	q->hello_out = 1;
	q->hellos++;
	q->hello_ns = now ? now : ep->ctx->host->now_ns(ep->ctx->host);
	cm_trace(ep, i, "HELLO %d sent%s", q->hellos,
	         !ep->dialer                   ? ", the answer"
	         : q->hellos == VB_HELLO_TRIES ? ", the last one"
	                                       : "");
	return CB_OK;
}

cb_status_t vb_hello_in(struct cb_tp_ep *ep, int i)
{
	struct vb_qp *q = &ep->q[i];

	q->hello_in++;
	if (!ep->ctx->use_cm)
		return CB_OK;
	cm_trace(ep, i, "HELLO %d received", q->hello_in);
	return vb_cm_hello(ep, i); /* the passive side's turn to say it */
}

/* rdma_cm, dialing side: resolve the peer's rail @i. */
static cb_status_t cm_dial(struct cb_tp_ep *ep, int i, const struct vb_addr *a)
{
	struct cb_tp_ctx *ctx = ep->ctx;
	struct vb_qp *q = &ep->q[i];
	struct sockaddr_in src = { .sin_family = AF_INET,
		                   .sin_addr.s_addr = ctx->rail[i].ipv4 };
	struct sockaddr_in dst = { .sin_family = AF_INET,
		                   .sin_addr.s_addr = a->rail[i].ipv4,
		                   .sin_port = htons(a->rail[i].cm_port) };

	if (rdma_create_id(ctx->cm_ch, &q->cm_id, ep, RDMA_PS_TCP))
		return ep_fail(ep, CB_ERR_SYS, "rdma_create_id failed for",
		               errno);
	if (rdma_resolve_addr(q->cm_id, (struct sockaddr *)&src,
	                      (struct sockaddr *)&dst, 5000))
		return ep_fail(ep, CB_ERR_PEER, "cannot resolve the address of",
		               errno);
	q->state = QP_CM_WAIT;
	return CB_OK;
}

cb_status_t vb_ep_connect(struct cb_tp_ep *ep, const void *addr,
                          size_t addr_bytes, const void *blob,
                          size_t blob_bytes)
{
	struct cb_tp_ctx *ctx = ep->ctx;
	const struct cb_tp_host *h = ctx->host;
	struct vb_ep_blob b;
	struct vb_addr a;
	char why[160];
	cb_status_t st;

	if (vb_wire_conn(addr, addr_bytes, blob, blob_bytes, ep->peer, &a, &b,
	                 why, sizeof(why)))
		return h->fail(h, CB_ERR_PROTO,
		               "verbs: the connection data of rank %d does not "
		               "parse: %s",
		               ep->peer, why);
	if (a.cm != (uint32_t) !!ctx->use_cm)
		return h->fail(h, CB_ERR_USAGE,
		               "verbs: rank %d connects %s and this rank %s: "
		               "set --verbs-cm the same everywhere",
		               ep->peer, a.cm ? "with rdma_cm" : "out of band",
		               ctx->use_cm ? "with rdma_cm" : "out of band");
	if (ep->started)
		return CB_OK;
	ep->started = 1;
	for (uint32_t i = 0; i < b.nrails; i++) {
		/* NUL-terminated within its 16 bytes: vb_wire_conn */
		memcpy(ep->peer_dev[i], b.rail[i].dev, sizeof(ep->peer_dev[i]));
		ep->peer_port[i] = b.rail[i].port;
	}
	ep->nrails = (int)b.nrails < ctx->nrails ? (int)b.nrails : ctx->nrails;
	for (int i = 0; i < ep->nrails; i++) {
		if (ctx->use_cm)
			st = ep->dialer ? cm_dial(ep, i, &a) : CB_OK;
		else
			st = qp_connect(ep, i, &b);
		if (st)
			return st;
	}
	return CB_OK;
}

void vb_ep_drop_qps(struct cb_tp_ep *ep)
{
	for (int i = 0; i < VB_MAX_RAILS; i++) {
		struct vb_qp *q = &ep->q[i];
		if (q->cq)
			vb_cq_detach(ep->ctx, i, q->cq - 1);
		if (q->cm_id) {
			if (q->state == QP_RTS)
				rdma_disconnect(q->cm_id);
			if (q->qp)
				rdma_destroy_qp(q->cm_id);
			rdma_destroy_id(q->cm_id);
		} else if (q->qp) {
			ibv_destroy_qp(q->qp);
		}
		if (q->slots_mr)
			ibv_dereg_mr(q->slots_mr);
		free(q->slots);
		*q = (struct vb_qp){ .state = QP_ERR };
	}
}

void vb_ep_free(struct cb_tp_ep *ep)
{
	vb_ep_drop_qps(ep);
	free(ep);
}

/* ---- rdma_cm ---- */

cb_status_t vb_cm_listen(struct cb_tp_ctx *ctx)
{
	const struct cb_tp_host *h = ctx->host;

	ctx->cm_ch = rdma_create_event_channel();
	if (!ctx->cm_ch)
		return h->fail(h, CB_ERR_UNAVAILABLE,
		               "verbs: rdma_cm is not usable here: %s",
		               strerror(errno));
	fcntl(ctx->cm_ch->fd, F_SETFL,
	      fcntl(ctx->cm_ch->fd, F_GETFL) | O_NONBLOCK);
	for (int i = 0; i < ctx->nrails; i++) {
		struct vb_rail *r = &ctx->rail[i];
		struct sockaddr_in sa = { .sin_family = AF_INET,
			                  .sin_addr.s_addr = r->ipv4 };
		if (rdma_create_id(ctx->cm_ch, &r->listen_id, NULL,
		                   RDMA_PS_TCP) ||
		    rdma_bind_addr(r->listen_id, (struct sockaddr *)&sa) ||
		    rdma_listen(r->listen_id, 1024))
			return h->fail(h, CB_ERR_SYS,
			               "verbs: cannot listen with rdma_cm on "
			               "%s (%s): %s",
			               r->name, inet_ntoa(sa.sin_addr),
			               strerror(errno));
		r->cm_port = ntohs(rdma_get_src_port(r->listen_id));
	}
	return CB_OK;
}

static int cm_rail_of(const struct cb_tp_ctx *ctx, struct ibv_context *v)
{
	for (int i = 0; i < ctx->nrails; i++)
		if (ctx->rail[i].ctx == v)
			return i;
	return -1;
}

/* A connection request on a listener: accept it for its rank and rail. */
static cb_status_t cm_accept(struct cb_tp_ctx *ctx, struct rdma_cm_event *ev)
{
	const struct cb_tp_host *h = ctx->host;
	struct vb_cm_priv p = { 0 };
	/* retry_count too: an implementation may take the passive side's
	 * own (real librdmacm takes the REQ's) */
	struct rdma_conn_param cp = { .responder_resources = 1,
		                      .initiator_depth = 1,
		                      .retry_count = 7,
		                      .rnr_retry_count = 7 };
	cb_status_t st;

	if (ev->param.conn.private_data_len >= sizeof(p))
		memcpy(&p, ev->param.conn.private_data, sizeof(p));
	int rail = cm_rail_of(ctx, ev->id->verbs);
	if (p.magic != VB_MAGIC || p.job_id != h->job_id || p.rank <= h->rank ||
	    p.rank >= h->world || p.rail != rail || rail < 0) {
		h->log(h, CB_TP_LOG_WARN,
		       "refused an rdma_cm connection that is not from a "
		       "peer of this job (magic 0x%x, job %s, rank %d, rail "
		       "%d on device rail %d, %u bytes of private data)",
		       p.magic, p.job_id == h->job_id ? "ours" : "another",
		       p.rank, p.rail, rail,
		       (unsigned)ev->param.conn.private_data_len);
		rdma_reject(ev->id, NULL, 0);
		return CB_OK;
	}
	struct cb_tp_ep *ep = ep_get(ctx, p.rank);
	if (!ep)
		return h->fail(h, CB_ERR_NOMEM, "verbs: out of memory");
	ev->id->context = ep;
	if ((st = qp_make(ep, rail, ev->id)))
		return st;
	if (rdma_accept(ev->id, &cp))
		return ep_fail(ep, CB_ERR_PEER,
		               "cannot accept the connection of", errno);
	ep->q[rail].state = QP_CM_WAIT;
	cm_trace(ep, rail, "CONNECT_REQUEST accepted");
	return CB_OK;
}

static int cm_rail_of_id(const struct cb_tp_ep *ep, const struct rdma_cm_id *id)
{
	for (int i = 0; i < VB_MAX_RAILS; i++)
		if (ep->q[i].cm_id == id)
			return i;
	return -1;
}

static cb_status_t cm_event(struct cb_tp_ctx *ctx, struct rdma_cm_event *ev)
{
	struct cb_tp_ep *ep = ev->id->context;
	int i = ep ? cm_rail_of_id(ep, ev->id) : -1;
	struct rdma_conn_param cp = { .responder_resources = 1,
		                      .initiator_depth = 1,
		                      .retry_count = 7,
		                      .rnr_retry_count = 7 };
	cb_status_t st;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return cm_accept(ctx, ev);
	if (!ep || i < 0)
		return CB_OK; /* a listener's, or an old id's */
	struct vb_qp *q = &ep->q[i];
	cm_trace(ep, i, "%s, status %d", rdma_event_str(ev->event), ev->status);
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (rdma_resolve_route(ev->id, 5000))
			return ep_fail(ep, CB_ERR_PEER,
			               "cannot resolve a route to", errno);
		return CB_OK;
	case RDMA_CM_EVENT_ROUTE_RESOLVED: {
		struct vb_cm_priv p = { VB_MAGIC, ctx->host->rank, i, 0,
			                ctx->host->job_id };
		if (ev->id->verbs != ctx->rail[i].ctx)
			return ep_fail(ep, CB_ERR_UNSUPPORTED,
			               "rdma_cm routes through another device "
			               "than the rail's to",
			               0);
		if ((st = qp_make(ep, i, ev->id)))
			return st;
		q->state = QP_CM_WAIT;
		cp.private_data = &p;
		cp.private_data_len = sizeof(p);
		if (rdma_connect(ev->id, &cp))
			return ep_fail(ep, CB_ERR_PEER, "cannot connect to",
			               errno);
		return CB_OK;
	}
	case RDMA_CM_EVENT_ESTABLISHED:
		q->state = QP_RTS;
		return vb_cm_hello(ep, i);
	case RDMA_CM_EVENT_DISCONNECTED:
		if (q->state == QP_RTS)
			q->state = QP_ERR;
		return ep_fail(ep, CB_ERR_PEER, "lost the connection to", 0);
	case RDMA_CM_EVENT_REJECTED:
		return ep_fail(ep, CB_ERR_PEER,
		               "rdma_cm: the connection was rejected by", 0);
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR: {
		char what[96];
		snprintf(what, sizeof(what), "rdma_cm: %s from",
		         rdma_event_str(ev->event));
		return ep_fail(ep, CB_ERR_PEER, what,
		               ev->status < 0 ? -ev->status : 0);
	}
	default:
		return CB_OK;
	}
}

cb_status_t vb_cm_progress(struct cb_tp_ctx *ctx)
{
	struct rdma_cm_event *ev;
	cb_status_t st = CB_OK;

	while (!st && ctx->cm_ch && rdma_get_cm_event(ctx->cm_ch, &ev) == 0) {
		/* copy what we need: ack frees the event */
		struct rdma_cm_event e = *ev;
		uint8_t pd[64];
		if (e.param.conn.private_data_len &&
		    e.param.conn.private_data_len <= sizeof(pd)) {
			memcpy(pd, e.param.conn.private_data,
			       e.param.conn.private_data_len);
			e.param.conn.private_data = pd;
		}
		rdma_ack_cm_event(ev);
		st = cm_event(ctx, &e);
	}
	return st;
}
