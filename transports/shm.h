/* SPDX-License-Identifier: MIT */
/*
 * transports/shm.h - the shm transport's internals, shared by its set-up
 * (shm.c) and its data path (shm_data.c).  Nothing here is seen outside
 * transports/.
 */
#ifndef CB_TRANSPORTS_SHM_H
#define CB_TRANSPORTS_SHM_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include <collbench/transport.h>

#include "transports/lring.h"
#include "transports/lseg.h"
#include "transports/tputil.h"

#define SHM_MAGIC      0x434253484d303032ull /* "CBSHM002" */
#define SHM_SLOTS      16u
#define SHM_SLOT_BYTES 4096u
#define SHM_HDR_BYTES  40u
#define SHM_DATA_BYTES (SHM_SLOT_BYTES - SHM_HDR_BYTES)

#define SHM_BOUNCE_BYTES (256u << 10)

#define SHM_HIDDEN __attribute__((visibility("hidden")))

enum { KIND_EAGER = 1, KIND_RNDV = 2, KIND_NOTIFY = LRING_NOTIFY };
enum { CMA_UNKNOWN = 0, CMA_YES = 1, CMA_NO = 2 };

/* A slot of the ring (transports/lring.h): its head, then the data (an
 * eager fragment, or a rendezvous's struct shm_export). */
struct shm_slot {
	struct lring_hdr h;
	uint8_t data[SHM_DATA_BYTES];
};
_Static_assert(sizeof(struct lring_hdr) == SHM_HDR_BYTES &&
                       offsetof(struct shm_slot, data) == SHM_HDR_BYTES &&
                       (SHM_SLOTS & (SHM_SLOTS - 1)) == 0,
               "the slot's data follows its head; slots: a power of two");

/* In the receiver's segment; slots written by one sender. */
struct shm_chan {
	alignas(64) _Atomic uint64_t consumed;  /* receiver: slots freed */
	alignas(64) _Atomic uint64_t rndv_done; /* receiver: copies done */
	alignas(64) _Atomic uint32_t attached;  /* sender: mapped us */
	_Atomic uint32_t cma;                   /* receiver: can read sender */
	alignas(64) struct shm_slot slots[SHM_SLOTS];
};

struct shm_seg {
	struct lseg_head head;
	alignas(64) struct shm_chan chan[];
};

/* The context's address: where its segment is (a memfd of this process,
 * opened by peers through /proc, so no name is ever left in /dev/shm). */
struct shm_addr {
	uint64_t magic;
	int32_t rank, pid;
	int32_t seg_fd, pad;
	uint64_t seg_addr; /* the owner's own mapping, for the CMA probe */
	uint64_t seg_bytes;
};

/*
 * Exported memory (mem_export's blob, and what a rendezvous slot carries
 * about the sender's buffer): a memfd region of the owner's, and the range
 * of it meant.  id 0: not from mem_alloc (CMA only).
 */
struct shm_export {
	uint64_t magic;
	int32_t pid, fd;
	uint64_t id;
	uint64_t region_base, region_bytes; /* the whole memfd, at the owner */
	uint64_t base, bytes;               /* the range exported */
};

/* A buffer of ours from mem_alloc: also its registration (struct
 * cb_tp_mr). */
struct cb_tp_mr {
	void *base;
	size_t bytes;
	int fd;
	uint64_t id;
	struct cb_tp_mr *next;
};

/* A peer's region mapped here. */
struct shm_view {
	uint64_t id;
	uint64_t rbase; /* its base at the owner */
	void *base;     /* here */
	size_t bytes;
	int refs; /* mem_import handles on it */
};

/* An imported range (struct cb_tp_rmem). */
struct cb_tp_rmem {
	struct shm_view *view;
	char *local;
	uint64_t bytes;
};

#define SHM_MAX_VIEWS 64

struct cb_tp_ep {
	struct cb_tp_ctx *ctx;
	struct shm_view views[SHM_MAX_VIEWS];
	int nviews, no_map;
	int peer;
	int connected;
	pid_t pid;
	int cma; /* we may post rendezvous to the peer */
	struct shm_seg *peer_seg;
	size_t peer_seg_bytes;
	struct shm_chan *tx; /* in the peer's segment */
	struct shm_chan *rx; /* in ours */
	struct lring ring;   /* over tx->slots and rx->slots */
	uint64_t tx_rndv;
	struct cb_tp_req *sq_head, *sq_tail; /* sends not fully posted */
	struct cb_tp_req *rq_head, *rq_tail; /* receives not complete */
	cb_status_t err;
};

struct cb_tp_ctx {
	const struct cb_tp_host *host;
	struct shm_seg *seg;
	size_t seg_bytes;
	int seg_fd;
	struct shm_addr addr;
	int *local_index; /* [world]: index among this host's ranks, or -1 */
	struct cb_tp_ep **eps;
	int *active; /* peers with an endpoint, for progress */
	int nactive;
	int allow_cma, allow_map;
	size_t rndv_bytes;
	struct cb_tp_mr *regions;
	uint64_t next_region_id;
	uint8_t *bounce; /* CMA pieces on their way into a reduction */
	struct cb_tp_stats stats;
};

/* Request private state. */
enum {
	R_DONE,
	R_BUF,
	R_CAP,
	R_OFF,
	R_STARTED,
	R_RNDV,
	R_SRC,
	R_RED,
};
/* A send's kind, in R_CAP (sends have no capacity). */
enum { SEND_MSG = 0, SEND_PUT = 1 };
/* A put's extra state: R_SRC = the rmem, R_STARTED = roff, R_RED = notify */

/* shm_data.c: the data path, below shm.c (set-up and the ops table):
 * shm_isend, _irecv, _test, _progress, _put, _notify_poll, _irecv_reduce */
TPU_OPS_MSG(SHM_HIDDEN, shm);
TPU_OPS_PUT(SHM_HIDDEN, shm);
SHM_HIDDEN TPU_OP(irecv_reduce) shm_irecv_reduce;

/* A peer's region @x as mapped here (mapping it the first time), or NULL
 * when it cannot be (then: CMA); mem_import's too. */
SHM_HIDDEN struct shm_view *shm_view_get(struct cb_tp_ep *ep,
                                         const struct shm_export *x);

#endif
