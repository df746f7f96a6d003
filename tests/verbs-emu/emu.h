/* SPDX-License-Identifier: MIT */
/*
 * tests/verbs-emu/emu.h - internals of the verbs emulation (a test fixture).
 *
 * libibverbs.so.1 stand-in: devices per host (a network namespace is a host),
 * RC queue pairs whose traffic crosses the namespace network over TCP, with
 * the completions and errors real adapters give.  README.md in this directory
 * has the design; this header holds the objects every file shares.
 *
 * Locks, always taken in this order (never the reverse):
 *   eng.lock (the "big" lock: tables, receive path, timers, acks)
 *     -> qp->lock (send/receive queues, QP state)
 *        -> eng.keys (MR table, read-mostly)  and  conn->txlock (send stream)
 *        -> cq->lock (completion ring)
 * The progress thread holds eng.lock while it works (never while it sleeps);
 * post_send/post_recv/poll_cq never take it, so the fast paths meet the
 * progress thread only on the QP and CQ they use.
 */
#ifndef CBEMU_EMU_H
#define CBEMU_EMU_H

#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <net/if.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#define EMU_VISIBLE           __attribute__((visibility("default")))
#define EMU_MAX_DEV           8
#define EMU_MAX_GID           16
#define EMU_MAX_SGE           30
#define EMU_MAX_INLINE        256
#define EMU_MAX_QP_WR         32768
#define EMU_MAX_CQE           4194303
#define EMU_MAX_MSG           (1u << 30) /* max_msg_sz, as ConnectX reports it */
#define EMU_MAX_RD_ATOM       16
#define EMU_QP_IDX_BITS       12 /* QPN = slot << 12 | index */
#define EMU_MAX_QP            (1 << EMU_QP_IDX_BITS)
#define EMU_PORT_BASE_DEFAULT 46000
#define EMU_VENDOR_ID         0 /* no vendor */
/* ConnectX-5's part id: perftest switches on the part id alone, and takes
 * its default path (the ibv_wr_* API) only for parts it knows;
 * COLLBENCH_EMU_PART_ID=0 makes it fall back to ibv_post_send. */
#define EMU_PART_ID_DEFAULT 4119
#define EMU_FW_VER          "cbemu 1.0"

enum emu_link { EMU_LINK_IB, EMU_LINK_ROCE, EMU_LINK_IWARP };

/* Port counters kept in the host's shared state (all processes of a host
 * add to them), written out as the fake sysfs tree's counters/ and
 * hw_counters/ files. */
enum emu_counter {
	EMU_C_XMIT_DATA, /* 4-byte words, as IB counters are */
	EMU_C_RCV_DATA,
	EMU_C_XMIT_PKTS,
	EMU_C_RCV_PKTS,
	EMU_C_SYMBOL_ERR,
	EMU_C_LINK_DOWNED,
	EMU_C_RCV_ERR,
	EMU_C_XMIT_DISCARDS,
	EMU_C_OUT_OF_BUFFER,      /* hw: receive with no posted WQE (RNR) */
	EMU_C_OUT_OF_SEQUENCE,    /* hw: PSN mismatch seen by a responder */
	EMU_C_LOCAL_ACK_TIMEOUT,  /* hw: retry exceeded */
	EMU_C_RNR_RETRY_ERR,      /* hw: RNR retry exceeded */
	EMU_C_REQ_REMOTE_ACCESS,  /* hw: requester saw remote access error */
	EMU_C_RESP_REMOTE_ACCESS, /* hw: responder refused an access */
	EMU_C_RESP_LOCAL_LENGTH,  /* hw: receive buffer too small */
	EMU_C_COUNT
};

struct emu_counter_def {
	const char *dir; /* "counters" or "hw_counters" */
	const char *name;
};
extern const struct emu_counter_def emu_counter_defs[EMU_C_COUNT];

/* One port's state shared by every process of a host (mmap of a file in the
 * host's state directory). */
struct emu_shport {
	_Atomic uint64_t counter[EMU_C_COUNT];
	_Atomic uint32_t
	        seen_up; /* last state any process saw; for link_downed */
	_Atomic uint32_t lid;
};

struct emu_shared {
	uint64_t magic;
	struct emu_shport port[EMU_MAX_DEV];
};

struct emu_port {
	char netdev[IF_NAMESIZE];
	struct in_addr ip; /* the address peers reach this port on */
	uint8_t mac[6];
	int netdev_mtu;
	uint16_t lid;
	int ngid;
	union ibv_gid gid[EMU_MAX_GID];
	enum ibv_gid_type gid_type[EMU_MAX_GID];
	char admin_path[512]; /* exists = port forced down */
};

struct emu_dev {
	struct ibv_device ibdev; /* first: handed out as struct ibv_device * */
	int index;
	uint64_t guid;        /* host order */
	struct emu_port port; /* one port: port 1 */
	_Atomic int up;       /* the port carries traffic (1 = ACTIVE) */
	int reported;         /* the state the last async event told */
};

struct emu_host {
	bool ready;
	enum emu_link link;
	uint64_t host_id; /* inode of /proc/self/ns/net */
	uint32_t fabric_id;
	char state_dir[150]; /* short: sysfs paths are 256 bytes at most */
	char host_dir[180];
	char sysfs_root[190];
	int ndev;
	struct emu_dev dev[EMU_MAX_DEV];
	struct ibv_device *list[EMU_MAX_DEV + 1];
	struct emu_shared *sh;
	uint16_t port_base;
	uint32_t part_id;
	int64_t retry_floor_ns, retry_cap_ns;
	int max_cqe; /* COLLBENCH_EMU_MAX_CQE: the device's max_cqe */
};
extern struct emu_host emu_host;

static inline bool emu_iwarp(void)
{
	return emu_host.link == EMU_LINK_IWARP;
}

/* ---- objects ---- */

struct emu_ctx {
	struct verbs_context vctx; /* ends with the struct ibv_context */
	struct emu_dev *dev;
	int async_wr; /* write end of the async event pipe */
	struct emu_ctx *next;
	int last_port_up;
};

static inline struct emu_ctx *emu_ctx(struct ibv_context *c)
{
	return (struct emu_ctx *)((char *)c -
	                          offsetof(struct verbs_context, context));
}

struct emu_pd {
	struct ibv_pd pd;
	_Atomic int users; /* MRs and QPs: dealloc is EBUSY while any */
};

struct emu_mr {
	struct ibv_mr mr;
	uint64_t iova; /* what remote addresses are relative to */
	struct emu_pd *pd;
	int access;
	uint32_t index;
};

struct emu_cqe {
	struct ibv_wc wc;
	struct emu_qp *qp;
	uint32_t sq_idx; /* send completions: the WQE it frees up to */
	uint8_t is_send;
	uint8_t solicited;
};

struct emu_cq {
	struct ibv_cq cq; /* first */
	pthread_mutex_t lock;
	struct emu_cqe *ring;
	uint32_t cap, head, count;
	bool armed, armed_solicited, overrun_reported;
	_Atomic int users; /* QPs using it: destroy is EBUSY while any */
	unsigned events_reported;
};

enum emu_wqe_state { W_POSTED, W_SENT, W_DONE };

struct emu_txitem {
	struct emu_txitem *next;
	struct emu_qp *qp; /* owner, NULL for control items */
	int iovcnt;
	struct iovec *iov; /* iov[0] is the header */
	size_t total, done;
	void *owned; /* malloc'd storage freed when written */
	bool queued;
};

struct wire_hdr {
	uint8_t type;
	uint8_t flags;
	uint8_t nak;
	uint8_t mtu; /* sender's path MTU (enum ibv_mtu) */
	uint32_t dst_qpn;
	uint32_t src_qpn;
	uint32_t psn;
	uint32_t len; /* payload bytes after this header (or READ length) */
	uint32_t rkey;
	uint32_t imm; /* network order, as the WR gave it */
	uint8_t rnr_retry;
	uint8_t opcode; /* the WR opcode, for the receiver's completion */
	uint8_t epoch;  /* the requester's go-back-N round (NAKs echo it) */
	uint8_t pad;
	uint64_t seq;
	uint64_t raddr;
};

enum wire_type {
	WT_HELLO = 1,
	WT_SEND,
	WT_WRITE,
	WT_READ_REQ,
	WT_READ_RESP,
	WT_ACK,
	WT_NAK,
	WT_PROGRESS,
};
#define WF_IMM       1
#define WF_SOLICITED 2

enum wire_nak {
	NAK_DROP = 1, /* no answer: no such QP, wrong state, PSN, port down */
	NAK_ACCESS,   /* remote access error */
	NAK_INV_REQ,  /* remote invalid request (too long for the buffer) */
	NAK_RNR_WAIT, /* receiver not ready: held until a receive is posted */
	NAK_RNR_EXC,  /* RNR retries exhausted */
	NAK_REM_OP,   /* remote operation error (bad receive WQE) */
};

struct emu_swqe {
	uint64_t wr_id;
	uint64_t seq;
	int64_t post_ns, tx_ns;
	uint32_t len, rkey, imm;
	uint64_t raddr;
	uint8_t opcode, state, status;
	unsigned int flags;
	int nsge, niov; /* niov: data iovecs gathered at transmit */
	struct wire_hdr hdr;
	struct emu_txitem tx;
	/* then: struct ibv_sge sge[max_send_sge], struct iovec iov[sge + 1],
	 * uint8_t inl[max_inline] */
};

struct emu_rwqe {
	uint64_t wr_id;
	int nsge;
	/* then: struct ibv_sge sge[max_recv_sge] */
};

struct emu_held; /* a message parked at an RNR-waiting responder */
struct emu_conn;

struct emu_qp {
	struct ibv_qp_ex qpx; /* first: qpx.qp_base is the struct ibv_qp */
	struct emu_ctx *ctx;
	pthread_mutex_t lock;
	_Atomic int refs;
	bool dead;
	bool ex; /* created with send_ops_flags: ibv_qp_to_qp_ex works */
	bool cm_attached; /* iWARP: rdma_cm owns it, RTR allowed */
	uint32_t index;
	/* caps */
	uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge;
	uint32_t max_inline;
	size_t swqe_size, rwqe_size;
	bool sq_sig_all;
	/* attributes */
	uint8_t port_num, timeout, retry_cnt, rnr_retry, min_rnr_timer;
	uint8_t max_rd_atomic, max_dest_rd_atomic;
	uint16_t pkey_index;
	int access;
	enum ibv_mtu path_mtu;
	uint32_t dest_qpn, rq_psn, sq_psn;
	struct ibv_ah_attr ah;
	/* send queue: slots [sq_tail, sq_head) are in use; sq_tail moves when
	 * poll_cq returns a send completion (as mlx5 frees WQEs) */
	uint8_t *sq;
	uint32_t sq_head, sq_tx, sq_acked;
	_Atomic uint32_t sq_tail;
	uint64_t next_seq;
	uint32_t tx_psn;
	/* receive queue: [rq_tail, rq_head) posted or completed-unpolled;
	 * rq_next is the next to consume */
	uint8_t *rq;
	uint32_t rq_head, rq_next;
	_Atomic uint32_t rq_tail;
	/* responder state */
	uint32_t rx_psn;
	uint64_t rx_seq;       /* last message completed (for acks) */
	struct emu_held *held; /* messages waiting for a receive (RNR) */
	struct emu_held **held_tail;
	int64_t rnr_since_ns;
	/* requester path */
	struct emu_conn *conn;
	bool path_dead;   /* nothing answers: fail at the deadline */
	bool rnr_wait;    /* the responder parked our message (RNR) */
	uint8_t tx_epoch; /* go-back-N round: NAKs of older rounds are stale */
	int64_t retx_at;  /* when to send again from the oldest unacked */
	int64_t last_progress_ns;
	/* ibv_wr_* batch */
	bool wr_open;
	int wr_err;
	uint32_t wr_first;
	/* iWARP/rdma_cm */
	void *cm_owner;
	/* iWARP: accepted through rdma_cm (MPA's responder), which may send
	 * only once a request of the initiator has come (RFC 5044) */
	bool mpa_responder;
	_Atomic bool mpa_heard;
};

static inline struct emu_qp *emu_qp(struct ibv_qp *q)
{
	return (struct emu_qp *)q;
}

static inline struct emu_swqe *emu_swqe_at(struct emu_qp *qp, uint32_t i)
{
	return (struct emu_swqe *)(qp->sq + (size_t)(i % qp->max_send_wr) *
	                                            qp->swqe_size);
}

static inline struct ibv_sge *emu_swqe_sge(struct emu_swqe *w)
{
	return (struct ibv_sge *)(w + 1);
}

static inline struct emu_rwqe *emu_rwqe_at(struct emu_qp *qp, uint32_t i)
{
	return (struct emu_rwqe *)(qp->rq + (size_t)(i % qp->max_recv_wr) *
	                                            qp->rwqe_size);
}

static inline struct ibv_sge *emu_rwqe_sge(struct emu_rwqe *w)
{
	return (struct ibv_sge *)(w + 1);
}

/* ---- the engine: one per process ---- */
struct emu_engine {
	pthread_mutex_t lock; /* the big lock */
	pthread_rwlock_t keys;
	int users;
	int lfd, epfd, wakefd;
	uint32_t slot;
	pthread_t thread;
	bool running;
	_Atomic bool stop;
	struct emu_conn *conns;
	struct emu_qp *qp[EMU_MAX_QP];
	uint32_t qp_next, qp_hi;
	_Atomic bool need_scan; /* a receive was posted for a parked message */
	_Atomic bool need_port_poll;
	int64_t last_scan_ns;
	struct emu_mr **mr;
	uint32_t mr_cap, mr_next;
	uint32_t key_gen;
	struct emu_ctx *ctxs;
	int64_t start_ns, last_port_poll_ns, last_flush_ns;
	_Atomic bool counters_dirty;
	_Atomic uint64_t
	        msgs_sent; /* data messages: fault triggers count these */
};
extern struct emu_engine emu_eng;

/* ---- functions shared between files ---- */
int64_t emu_now_ns(void);
void emu_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern int emu_debug; /* COLLBENCH_EMU_DEBUG=1: trace the wire */
#define emu_dbg(...)                                                           \
	do {                                                                   \
		if (emu_debug)                                                 \
			emu_log(__VA_ARGS__);                                  \
	} while (0)

/* host.c */
int emu_host_init(void);
void emu_counter_add(int dev, enum emu_counter c, uint64_t v);
void emu_counters_flush(bool force);
bool emu_port_up(struct emu_dev *d);
int emu_port_set_admin(struct emu_dev *d, bool up);
int emu_resolve_lid(uint16_t lid, struct in_addr *ip);
int emu_resolve_gid(const union ibv_gid *gid, struct in_addr *ip);
struct emu_dev *emu_dev_by_name(const char *name);
int emu_ibv_mtu_bytes(enum ibv_mtu m);
enum ibv_mtu emu_port_active_mtu(struct emu_dev *d);

/* device.c */
void emu_async_event(struct emu_ctx *c, enum ibv_event_type type, void *elem);
void emu_port_event_all(struct emu_dev *d, bool up);

/* mem.c */
struct emu_mr *emu_mr_lookup(uint32_t key); /* caller holds eng.keys */

/* cq.c */
void emu_cq_push(struct emu_cq *cq, const struct emu_cqe *e);
void emu_cq_purge_qp(struct emu_cq *cq, struct emu_qp *qp);

/* qp.c */
void emu_qp_to_error(struct emu_qp *qp, enum ibv_wc_status first);
void emu_qp_flush(struct emu_qp *qp);
void emu_qp_put(struct emu_qp *qp);
int64_t emu_qp_deadline_ns(struct emu_qp *qp);
int emu_qp_modify(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask);
int emu_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
                  struct ibv_send_wr **bad);
int emu_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
                  struct ibv_recv_wr **bad);
void emu_qp_ex_init(struct emu_qp *qp, uint64_t ops);
void emu_send_complete(struct emu_qp *qp, struct emu_swqe *w,
                       enum ibv_wc_status st);
int emu_qp_transmit(struct emu_qp *qp);

/* wire.c */
int emu_engine_get(void);
void emu_engine_put(void);
void emu_engine_wake(void);
void emu_progress_try(void);
struct emu_conn *emu_conn_for(struct in_addr ip, uint16_t port);
void emu_conn_enqueue(struct emu_conn *c, struct emu_txitem *it);
void emu_conn_flush(struct emu_conn *c);
bool emu_conn_dead(struct emu_conn *c);
int64_t emu_conn_last_rx(struct emu_conn *c);
void emu_conn_detach_qp(struct emu_conn *c, struct emu_qp *qp);
void emu_conn_forget_range(struct emu_conn *c, const void *addr, size_t len);
void emu_engine_forget_qp(struct emu_qp *qp);
void emu_engine_forget_mr(struct emu_mr *mr);
int emu_qp_path(struct emu_qp *qp);
void emu_rx_drop_held(struct emu_qp *qp);

/* faults.c */
void emu_faults_init(void);
void emu_faults_tick(int64_t now);
uint32_t emu_fault_on_message(struct emu_qp *qp, struct emu_swqe *w);
/* cq_overrun:cqe=N: what a CQ asked for @cqe entries really holds. */
int emu_fault_cq_hold(int cqe);
size_t emu_rate_budget(void);
void emu_rate_used(size_t bytes);

/* packets on the wire for a message: for counters and PSNs */
static inline uint32_t emu_npkts(uint32_t len, enum ibv_mtu mtu)
{
	uint32_t m = (uint32_t)emu_ibv_mtu_bytes(mtu);
	return len == 0 ? 1 : (len + m - 1) / m;
}

/* What a message costs on the wire in the 4-byte words IB counters count:
 * payload plus each packet's headers (LRH+BTH+ICRC+VCRC on IB; Ethernet,
 * IPv4, UDP, BTH, ICRC and FCS on RoCE v2; Ethernet, IP, TCP, MPA, DDP and
 * RDMAP on iWARP). */
static inline uint64_t emu_wire_words(uint32_t payload, enum ibv_mtu mtu)
{
	static const uint32_t overhead[] = { 26, 62, 82 };
	return ((uint64_t)payload +
	        (uint64_t)overhead[emu_host.link] * emu_npkts(payload, mtu)) /
	       4;
}

#endif
