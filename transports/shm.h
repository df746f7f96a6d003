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

#include "transports/lpeer.h"

#define SHM_MAGIC      0x434253484d303032ull /* "CBSHM002" */
#define SHM_SLOTS      16u
#define SHM_SLOT_BYTES 4096u
#define SHM_DATA_BYTES (SHM_SLOT_BYTES - sizeof(struct lring_hdr))

#define SHM_BOUNCE_BYTES (256u << 10)

#define SHM_HIDDEN __attribute__((visibility("hidden")))

_Static_assert((SHM_SLOTS & (SHM_SLOTS - 1)) == 0, "slots: a power of two");

enum { CMA_UNKNOWN = 0, CMA_YES = 1, CMA_NO = 2 };

/* The context's address: where its segment is (a memfd of this process,
 * opened by peers through /proc, so no name is ever left in /dev/shm). */
struct shm_addr {
	struct lp_addr lp;
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

/* An endpoint: the slot rings' (transports/lpeer.h: a rendezvous is a
 * single-copy send), then shm's own. */
struct cb_tp_ep {
	struct lp_ep lp;
	struct cb_tp_ctx *ctx;
	struct shm_view views[SHM_MAX_VIEWS];
	int nviews, no_map;
	int cma; /* we may post rendezvous to the peer */
};

_Static_assert(offsetof(struct cb_tp_ep, lp) == 0,
               "lp_tp() and lp_of(): the endpoint is its struct lp_ep");

struct cb_tp_ctx {
	struct lp_ctx lp;
	const struct cb_tp_host *host;
	struct shm_addr addr;
	int allow_cma, allow_map;
	size_t rndv_bytes;
	struct cb_tp_mr *regions;
	uint64_t next_region_id;
	uint8_t *bounce; /* CMA pieces on their way into a reduction */
	struct cb_tp_stats stats;
};

/* A request's state: transports/lpeer.h's; a put's offset in its rmem in
 * R_ROFF. */
#define R_ROFF R_OWN

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
