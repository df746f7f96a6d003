/* SPDX-License-Identifier: MIT */
/*
 * transports/verbs/verbs.h - the verbs transport's internals, shared by its
 * files, each calling only those below it:
 *   verbs.c       context, memory, the ops table (on top: calls them all)
 *   verbs_data.c  the data path: posting, the sending side, progress
 *   verbs_recv.c  the receiving side, completions, asynchronous events
 *   verbs_conn.c  queue pairs and their connection (oob or rdma_cm)
 *   verbs_qp.c    completion queues, posting on a queue pair
 *   verbs_dev.c   devices, ports, GIDs, counters
 *   verbs_wire.c  what travels between peers and its checks (verbs_wire.h)
 * Nothing here is seen outside transports/verbs/.
 */
#ifndef CB_TRANSPORTS_VERBS_H
#define CB_TRANSPORTS_VERBS_H

#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <collbench/transport.h>

#include "transports/verbs/verbs_wire.h"
#include "transports/tputil.h"

/* verbs_wire.c checks MTUs without libibverbs: its codes are these. */
_Static_assert(VB_MTU_MIN == IBV_MTU_256 && VB_MTU_MAX == IBV_MTU_4096,
               "enum ibv_mtu changed");

#define VB_SEND_SLOTS     128 /* send buffers (and SQ depth) per QP */
#define VB_CREDIT_RESERVE 2   /* kept for credit returns alone */
#define VB_SIGNAL_EVERY   16  /* an unsignalled send every ... gets one */
#define VB_STRIPE_MIN     (256u << 10) /* smallest message striped over rails */
#define VB_NOTIFY_Q       64
/* rdma_cm, the active side: HELLO again after 50 ms, 100, ... (at most
 * VB_HELLO_TRIES in all) until the passive side's comes (vb_cm_hello) */
#define VB_HELLO_NUDGE_NS 50000000ull
#define VB_HELLO_TRIES    10
/* Completions one QP can have queued: every send and receive it can have
 * posted.  A CQ serves as many QPs as it holds this many for. */
#define VB_CQE_PER_QP (VB_SEND_SLOTS + VB_RECV_SLOTS)

/* One completion queue of a rail and the queue pairs it serves. */
struct vb_cq {
	struct ibv_cq *cq;
	int nqp;
};

/* One rail: a device, one of its ports, its protection domain and CQs
 * (as many as its queue pairs need, cq_qps QPs each). */
struct vb_rail {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct vb_cq *cqs;
	int ncq, cq_qps, cqe; /* CQs, QPs per CQ, entries per CQ */
	char name[64];        /* device name */
	int port;
	enum vb_link link;
	uint16_t lid;
	int gid_index; /* -1: none (IB without GRH) */
	union ibv_gid gid;
	enum ibv_mtu mtu;
	uint32_t max_inline;
	uint64_t max_msg;
	uint32_t ipv4; /* network order, for rdma_cm; 0 unknown */
	char netdev[32];
	/* rdma_cm (iWARP, --verbs-cm rdma_cm): this rail's listener */
	struct rdma_cm_id *listen_id;
	uint16_t cm_port;
};

/* A registration: one MR per rail. */
struct cb_tp_mr {
	struct ibv_mr *mr[VB_MAX_RAILS];
	void *base;
	size_t bytes;
};

/* A peer's memory, imported. */
struct cb_tp_rmem {
	uint64_t addr, bytes;
	uint32_t rkey[VB_MAX_RAILS];
};

/* One queue pair of an endpoint, on one rail. */
struct vb_qp {
	struct ibv_qp *qp;
	struct rdma_cm_id *cm_id; /* rdma_cm mode */
	int state;                /* QP_* below */
	int cq; /* 1 + index of the rail's CQ it completes on; 0: none */
	uint32_t psn;
	uint8_t *slots; /* send slots, then receive slots */
	struct ibv_mr *slots_mr;
	struct cb_tp_req *owner[VB_SEND_SLOTS]; /* request a signalled WR
	                                         * completes, by wr seq */
	uint64_t sq_posted; /* work requests posted (their wr_id) */
	uint64_t sq_done;   /* completed, through a signalled one */
	uint64_t sq_last_signal;
	int credits;    /* receives the peer has posted for us */
	int unreported; /* receives we re-posted, not yet told */
	int hello_in, hello_out;
	int hellos;        /* rdma_cm: HELLOs sent (the active side repeats */
	uint64_t hello_ns; /* its until the answer comes), the last when */
};

enum { QP_NONE, QP_CREATED, QP_RTS, QP_CM_WAIT, QP_ERR };

/* A message that arrived and waits for its receive (in order). */
struct vb_arrival {
	uint8_t type;  /* VB_EAGER or VB_RTS */
	uint8_t zcopy; /* RTS: the sender can write from registered memory */
	uint16_t slot; /* the receive slot holding it (EAGER) */
	uint32_t seq;
	uint64_t tag, bytes;
};

/* What an RTR said, kept by the sender until its message goes. */
struct vb_rtr {
	uint32_t seq;
	int got;
	uint64_t addr, cap;
	uint32_t rkey[VB_MAX_RAILS];
};

struct cb_tp_ep {
	struct cb_tp_ctx *ctx;
	int peer;
	int connected, started;
	int closed; /* ep_close: QPs gone, completions ignored */
	int nrails; /* used with this peer: min of both ends' */
	int dialer; /* rdma_cm: this rank connects, the peer listens */
	cb_status_t err;
	struct vb_ep_blob mine;
	char peer_dev[VB_MAX_RAILS][16]; /* the peer's device per rail, and */
	int peer_port[VB_MAX_RAILS];     /* port: for messages */
	struct vb_qp q[VB_MAX_RAILS];
	uint32_t send_seq; /* next message's sequence number */
	uint32_t recv_seq; /* next receive's */
	/* sends not finished posting, in order */
	struct cb_tp_req *sq_head, *sq_tail;
	/* messages that arrived before their receive was posted (always
	 * the ones from recv_seq on, in order) */
	struct vb_arrival arr[VB_ARRIVALS];
	uint32_t arr_head, arr_tail;
	/* large sends waiting for their RTR, oldest first; and what the RTRs
	 * that came said, by sequence number (early ones included) */
	struct cb_tp_req *rndv_send[VB_RNDV_Q];
	uint32_t rfifo[VB_RNDV_Q];
	uint32_t rf_head, rf_tail;
	struct vb_rtr rtr[VB_RNDV_Q];
	/* every posted receive, by sequence number (messages find theirs
	 * here), completed in that order */
	struct cb_tp_req *rseq[VB_RNDV_Q];
	uint32_t recv_upto; /* receives [.., recv_upto) are complete */
	uint32_t rtr_due;   /* receives that still owe an RTR */
	uint32_t notify[VB_NOTIFY_Q];
	uint32_t nq_head, nq_tail;
};

struct cb_tp_ctx {
	const struct cb_tp_host *host;
	struct vb_rail rail[VB_MAX_RAILS];
	int nrails;
	int use_cm; /* connect with rdma_cm */
	int sl;     /* --ib-sl */
	struct rdma_event_channel *cm_ch;
	struct ibv_context **cm_devs; /* rdma_get_devices(), in cm mode */
	struct cb_tp_ep **eps;        /* [world] */
	int *active;
	int nactive;
	size_t eager_max; /* --verbs-eager-bytes */
	struct cb_tp_stats stats;
	uint64_t next_async_ns;
	/* A flushed work request is the echo of an error elsewhere (the
	 * peer's, or the device's event): kept, and reported only if nothing
	 * better comes within a second. */
	struct ibv_wc flush_wc;
	int flush_rail;
	uint64_t flush_deadline_ns; /* 0: none pending */
	int async_fl;               /* the async fds are non-blocking */
	int gpudirect;              /* device memory registered (dma-buf) */
};

/* Request private state (priv.u64 / priv.ptr indices). */
enum {
	R_DONE, /* 1 when complete */
	R_BUF,  /* user buffer */
	R_CAP,  /* receive capacity */
	R_KIND, /* K_* below */
	R_MR,   /* struct cb_tp_mr *, or NULL */
	R_SEQ,  /* message sequence number */
	R_WAIT, /* send: work requests still to complete; receive: writes
	         * with immediate still due, once the first came */
	R_OFF,  /* progress in bytes */
};
enum {
	K_SEND,
	K_RECV,
	K_PUT,
	K_MASK = 0xff,
	K_GPU = 0x100,   /* the buffer is device memory */
	K_RTR = 0x200,   /* receive: its RTR went out (with keys: K_ZC) */
	K_ZC = 0x400,    /* receive: written zero-copy; send: RTR had keys */
	K_SIZED = 0x800, /* receive: its message's size is known */
	K_IMM = 0x1000,  /* receive: a write with immediate came */
	K_RTS = 0x2000,  /* receive: its RTS came; send: RTS went out */
	K_FRAG = 0x4000, /* receive: comes through the slots */
};

/* verbs_qp.c: completion queues, posting on a queue pair, an endpoint's
 * failure line (below verbs_conn.c, verbs_recv.c and verbs_data.c).
 * vb_cq_size sizes @r's CQs for the job; vb_cq_attach finds room for one
 * more QP on @rail (a new CQ when every one is full) and says which in
 * *@cqi; vb_cq_detach gives it back. */
VB_HIDDEN cb_status_t vb_cq_size(struct cb_tp_ctx *ctx, struct vb_rail *r);
VB_HIDDEN cb_status_t vb_cq_attach(struct cb_tp_ctx *ctx, int rail, int *cqi);
VB_HIDDEN void vb_cq_detach(struct cb_tp_ctx *ctx, int rail, int cqi);
/* Post @wr on @rail; @owner (may be NULL) completes when it does. */
VB_HIDDEN cb_status_t vb_post_wr(struct cb_tp_ep *ep, int rail,
                                 struct ibv_send_wr *wr,
                                 struct cb_tp_req *owner);
/* Post the receive slots of @q (all, at connect). */
VB_HIDDEN cb_status_t vb_post_recv_slots(struct cb_tp_ep *ep, int rail);
/* Send a header-only message on @rail (HELLO, CREDIT). */
VB_HIDDEN cb_status_t vb_send_ctrl(struct cb_tp_ep *ep, int rail, uint8_t type,
                                   uint32_t seq, uint64_t tag);
/* A SEND of header @h and @n bytes of payload (@lkey 0: copied into the
 * slot); CB_AGAIN without credit or room; *@done: the payload has left. */
VB_HIDDEN cb_status_t vb_send_msg(struct cb_tp_ep *ep, int rail,
                                  const struct vb_hdr *h, const void *payload,
                                  size_t n, uint32_t lkey,
                                  struct cb_tp_req *owner, int *done);
/* Re-post receive slot @slot of @rail (and owe the peer a credit). */
VB_HIDDEN cb_status_t vb_repost(struct cb_tp_ep *ep, int rail, int slot);
/* Record @ep's failure, one line naming the peer: @line, or @fmt with
 * @a and @b. */
VB_HIDDEN cb_status_t vb_ep_say(struct cb_tp_ep *ep, cb_status_t st,
                                const char *line);
VB_HIDDEN cb_status_t vb_ep_err(struct cb_tp_ep *ep, cb_status_t st,
                                const char *fmt, unsigned long long a,
                                unsigned long long b);

/* verbs_dev.c */
VB_HIDDEN cb_status_t vb_devices(struct cb_tp_dev *devs, int max, int *n);
VB_HIDDEN cb_status_t vb_open_rails(struct cb_tp_ctx *ctx);
VB_HIDDEN void vb_close_rails(struct cb_tp_ctx *ctx);
VB_HIDDEN cb_status_t vb_counters(struct cb_tp_ctx *ctx,
                                  struct cb_tp_counter *out, int max, int *n);
VB_HIDDEN const char *vb_link_name(enum vb_link l);

/* verbs_conn.c (below verbs_recv.c and verbs_data.c; it calls verbs_qp.c) */
VB_HIDDEN cb_status_t vb_ep_create(struct cb_tp_ctx *ctx, int peer,
                                   struct cb_tp_ep **ep, void *blob,
                                   size_t *bytes);
VB_HIDDEN cb_status_t vb_ep_connect(struct cb_tp_ep *ep, const void *addr,
                                    size_t addr_bytes, const void *blob,
                                    size_t blob_bytes);
VB_HIDDEN cb_status_t vb_ep_ready(struct cb_tp_ep *ep);
VB_HIDDEN void vb_ep_free(struct cb_tp_ep *ep);
VB_HIDDEN void vb_ep_drop_qps(struct cb_tp_ep *ep);
VB_HIDDEN cb_status_t vb_cm_listen(struct cb_tp_ctx *ctx);
VB_HIDDEN cb_status_t vb_cm_progress(struct cb_tp_ctx *ctx);
/* rdma_cm: send rail @i's HELLO when it may go (vb_may_send), and on the
 * active side again until the passive side's has come. */
VB_HIDDEN cb_status_t vb_cm_hello(struct cb_tp_ep *ep, int i);
/* The peer's HELLO came on rail @i (hello_in counts them); with rdma_cm
 * the passive side's turn to say its own. */
VB_HIDDEN cb_status_t vb_hello_in(struct cb_tp_ep *ep, int i);

/* Work request ids: receives have bit 63; then peer (23 bits), rail (4),
 * and the send's sequence on its QP or the receive's slot (36). */
#define VB_WR_RECV (1ull << 63)
#define VB_WR_LOW  ((1ull << 36) - 1)

static inline uint64_t vb_wr_id(int peer, int rail, uint64_t v)
{
	return ((uint64_t)peer << 40) | ((uint64_t)rail << 36) |
	       (v & VB_WR_LOW);
}

static inline uint8_t *vb_send_slot(struct vb_qp *q, uint64_t seq)
{
	return q->slots + (seq % VB_SEND_SLOTS) * VB_SLOT_BYTES;
}

static inline uint8_t *vb_recv_slot(struct vb_qp *q, int i)
{
	return q->slots + (size_t)(VB_SEND_SLOTS + i) * VB_SLOT_BYTES;
}

/* Whether @q of @ep may carry a message now: established, and through
 * rdma_cm the passive (listening) side only once the active side's first
 * message (HELLO) came.  iWARP's MPA (RFC 5044) has the initiator send the
 * first FPDU: siw's initiator fails the connection (EPROTO, a reset at the
 * peer) when a message trails the MPA reply before it has read it. */
static inline int vb_may_send(const struct cb_tp_ep *ep, const struct vb_qp *q)
{
	return q->state == QP_RTS &&
	       (!ep->ctx->use_cm || ep->dialer || q->hello_in);
}

static inline const struct cb_tp_mr *vb_req_mr(const struct cb_tp_req *req)
{
	return req->priv.ptr[R_MR];
}

/* Whether @q's send queue has room for @n more work requests. */
static inline int vb_sq_room(const struct vb_qp *q, int n)
{
	return q->sq_posted + (uint64_t)n - q->sq_done < VB_SEND_SLOTS - 1;
}

/* verbs_data.c: posting, the sending side, progress (the top of the data
 * path: it calls verbs_recv.c, verbs_conn.c and verbs_qp.c): vb_isend,
 * _irecv, _test, _progress, _put, _notify_poll */
TPU_OPS_MSG(VB_HIDDEN, vb);
TPU_OPS_PUT(VB_HIDDEN, vb);
/* verbs_recv.c: the receiving side, completions, events (below
 * verbs_data.c; it calls verbs_conn.c and verbs_qp.c) */
VB_HIDDEN cb_status_t vb_recv_posted(struct cb_tp_ep *ep,
                                     struct cb_tp_req *req);
VB_HIDDEN cb_status_t vb_recv_rtrs(struct cb_tp_ep *ep, int *moved);
VB_HIDDEN cb_status_t vb_poll_cq(struct cb_tp_ctx *ctx, int rail, int *moved);
VB_HIDDEN cb_status_t vb_async_events(struct cb_tp_ctx *ctx);
/* A work completion's failure, in one line naming the peer. */
VB_HIDDEN cb_status_t vb_wc_fail(struct cb_tp_ctx *ctx, int rail,
                                 const struct ibv_wc *wc);

#endif
