/* SPDX-License-Identifier: MIT */
/*
 * tests/verbs-emu/cm.h - internals of the librdmacm stand-in (cm.c, the
 * API; cm_wire.c, the connection protocol and its thread).
 */
#ifndef CBEMU_CM_H
#define CBEMU_CM_H

#include <infiniband/verbs.h>
#include <net/if.h>
#include <pthread.h>
#include <rdma/rdma_cma.h>
#include <stdbool.h>
#include <stdint.h>

#define CM_VISIBLE  __attribute__((visibility("default")))
#define CM_MAX_DEV  8
#define CM_PRIV_MAX 512

enum cm_state {
	CM_IDLE,
	CM_BOUND,
	CM_ADDR_RESOLVED,
	CM_ROUTE_RESOLVED,
	CM_LISTEN,
	CM_CONNECTING, /* active: REQ sent (or TCP connect under way) */
	CM_WAIT_REQ,   /* passive child: socket accepted, REQ not read */
	CM_REQ_RCVD,   /* passive child: CONNECT_REQUEST reported */
	CM_ACCEPTED,   /* passive child: REP sent, waiting for RTU */
	CM_CONNECTED,
	CM_DISCONNECTING, /* DREQ sent */
	CM_DISCONNECTED,
};

/* One message of the connection protocol, carried over TCP between the
 * hosts' addresses (the rdma_cm port is a TCP port here, as on iWARP). */
enum cm_msg_type { CMM_REQ = 1, CMM_REP, CMM_RTU, CMM_REJ, CMM_DREQ, CMM_DREP };

struct cm_msg {
	uint32_t magic;
	uint8_t type;
	uint8_t resp_res, init_depth, retry, rnr_retry;
	uint8_t mtu; /* sender's port active MTU (enum ibv_mtu) */
	uint16_t priv_len;
	uint32_t qpn, psn;
	uint16_t lid;
	uint8_t nobody; /* REJ: nobody listens (for this fabric) */
	uint8_t pad;
	uint32_t ip;     /* sender's address, network order */
	uint32_t fabric; /* hash of the fabric's state directory */
	uint8_t priv[CM_PRIV_MAX];
};
#define CM_MAGIC 0xcbe0c0de

struct cm_dev {
	struct ibv_context *verbs;
	char netdev[IF_NAMESIZE];
	enum ibv_mtu active_mtu;
	uint16_t lid;
	bool iwarp, roce;
};

struct cm_channel {
	struct rdma_event_channel ch; /* first */
	int wr;
	bool sync; /* a synchronous id's own */
};

struct cm_event {
	struct rdma_cm_event ev; /* first */
	uint8_t priv[CM_PRIV_MAX];
};

struct cm_id {
	struct rdma_cm_id id; /* first */
	struct cm_id *next;
	enum cm_state state;
	struct cm_dev *dev;
	int fd; /* the listening socket, or the connection's */
	bool destroyed, sync;
	int events_out;         /* events not yet acknowledged */
	struct cm_id *listener; /* a passive child's */
	int64_t deadline_ns;    /* active: connect must be answered by then */
	int64_t refused_until;  /* active: a refused connect is tried again */
	int64_t retry_at;       /* until then (see cm_wire.c) */
	uint8_t ack_timeout;
	uint32_t psn;
	struct cm_msg peer; /* what the other side said (REQ or REP) */
	uint8_t rbuf[sizeof(struct cm_msg)];
	size_t rlen;
	struct rdma_conn_param conn;
	uint8_t conn_priv[CM_PRIV_MAX]; /* conn.private_data: copied at the
	                                   call, as the kernel takes it */
	uint8_t resp_res, init_depth;
	struct ibv_pd *own_pd;
	struct ibv_cq *own_scq, *own_rcq;
};

extern pthread_mutex_t cm_lock;
extern struct cm_dev cm_devs[CM_MAX_DEV];
extern int cm_ndev;

int cm_init(void);
int cm_err(int e);
struct cm_dev *cm_dev_for_ip(uint32_t ip);
uint32_t cm_dev_ip(struct cm_dev *d);
void cm_event(struct cm_id *c, enum rdma_cm_event_type type, int status,
              const struct cm_msg *m);
int cm_send(struct cm_id *c, struct cm_msg *m);
void cm_fill_msg(struct cm_id *c, struct cm_msg *m, uint8_t type);
int cm_qp_rtr_rts(struct cm_id *c);
void cm_qp_error(struct cm_id *c);
int cm_watch(struct cm_id *c, bool out);
void cm_unwatch(struct cm_id *c);
/* Free @c, out of cm_ids and unwatched: after the event thread's next
 * round, which may hold an event for it from before (cm_lock held). */
void cm_id_release(struct cm_id *c);
size_t cm_priv_max(struct cm_id *c, uint8_t type);
int64_t cm_now_ns(void);

#endif
