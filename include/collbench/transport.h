/* SPDX-License-Identifier: MIT */
/*
 * collbench/transport.h - the transport plugin ABI.
 *
 * A transport is one `struct cb_tp_ops` table.  tcp and shm are compiled into
 * the binary; verbs and gpu are shared modules that export the table as the
 * symbol `cb_tp_ops_v1` (CB_TP_SYMBOL) and are loaded at run time, so the
 * binary runs where libibverbs or CUDA are missing.
 *
 * Life of a transport in one rank:
 *
 *   query()                         may this transport run here at all?
 *   open(host)        -> ctx        one per process and transport
 *   address(ctx)      -> blob       published through the bootstrap store
 *   ep_connect(ctx, peer, blob) -> ep   then ep_test() until CB_OK
 *   mem_reg(ctx, buf) -> mr         outside timed regions; core caches them
 *   isend/irecv(ep, ..., req)       then test(req) / progress(ctx)
 *   ep_close, mem_dereg, close
 *
 * Threading: a context and everything made from it is used by one thread at a
 * time.  No call blocks for longer than a bounded local operation (a memcpy,
 * one CMA copy, one non-blocking syscall): every wait happens in the core,
 * which owns the deadline.
 *
 * Matching: messages on one endpoint are delivered in the order they were
 * sent, and receives complete in the order they were posted.  The tag is a
 * check, not a selector: a receive whose tag differs from the arriving
 * message's fails with CB_ERR_PROTO, which catches schedule bugs and foreign
 * traffic instead of silently pairing the wrong buffers.  Collective
 * schedules always know their peer and their order, so no wildcard matching
 * is needed.
 *
 * Every function returns a cb_status_t.  On an error the transport reports one
 * line through host->fail() where it detects the problem ("log once, where
 * detected") and returns the code; the core passes it upward unchanged.
 */
#ifndef COLLBENCH_TRANSPORT_H
#define COLLBENCH_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include <collbench/status.h>
#include <collbench/types.h>

#define CB_TP_ABI      1u
#define CB_TP_SYMBOL   "cb_tp_ops_v1"
#define CB_TP_ADDR_MAX 256 /* bytes in an address blob */

/* Capability bits (struct cb_tp_ops.caps). */
enum cb_tp_cap {
	CB_TP_CAP_HOST_MEM = 1u << 0, /* host buffers */
	CB_TP_CAP_GPU_MEM = 1u << 1,  /* device buffers (gpu, verbs+peermem) */
	CB_TP_CAP_PUT = 1u << 2,      /* put() and notify_poll() */
	CB_TP_CAP_PEER_MAP = 1u
	                     << 3, /* peer_map(): load/store a peer's buffer */
	CB_TP_CAP_SAME_HOST = 1u << 4, /* can connect only ranks of one host */
	CB_TP_CAP_NEEDS_REG = 1u << 5, /* isend/irecv need an mr from mem_reg */
	CB_TP_CAP_HELPER_THR = 1u << 6, /* starts threads of its own */
};

enum cb_mem_kind {
	CB_MEM_HOST = 0,
	CB_MEM_GPU = 1,
};

/* Opaque per-transport objects. */
struct cb_tp_ctx;
struct cb_tp_ep;
struct cb_tp_mr;

/*
 * What the core lends a transport.  A transport keeps the pointer for the
 * life of its context and uses only members below `size`.
 */
struct cb_tp_host {
	uint32_t size;
	int rank;                 /* this process */
	int world;                /* number of ranks */
	const int *host_of_rank;  /* [world]: host index of every rank */
	const char *const *hosts; /* [nhosts]: host names, for messages */
	uint64_t job_id;          /* random, the same on every rank of a job */
	int local_ranks;          /* ranks on this host */
	int oversubscribed;       /* more local ranks than online CPUs */
	const char *local_ip;     /* address this rank used to reach the
	                           * rendezvous: a default interface */
	double timeout_s;         /* the job's deadline for one wait */
	/* Option lookup: "tcp-if", "tcp-streams", ... (CLI, then environment);
	 * NULL when unset. */
	const char *(*option)(const char *key);
	/* Log a line at level 0 (error) .. 3 (debug), with the transport's
	 * name as prefix. */
	void (*log)(int level, const char *fmt, ...)
	        __attribute__((format(printf, 2, 3)));
	/* Record the one line that describes a failure (the first one wins) and
	 * return @st, so a transport writes `return host->fail(CB_ERR_...,
	 * ...)`. */
	cb_status_t (*fail)(cb_status_t st, const char *fmt, ...)
	        __attribute__((format(printf, 2, 3)));
};

/*
 * A request: storage owned by the caller (so a timed region allocates
 * nothing), contents owned by the transport from isend/irecv until test()
 * returns anything other than CB_AGAIN.
 */
struct cb_tp_req {
	uint64_t tag; /* set by the transport from the call */
	size_t bytes; /* on completion: bytes sent or received */
	void *next;   /* free for the transport's queues */
	union {       /* private to the transport */
		uint64_t u64[8];
		void *ptr[8];
	} priv;
};

/* What irecv_reduce() combines with: dst = src OP message, element-wise. */
struct cb_tp_reduce {
	void (*fn)(enum cb_dtype dt, enum cb_op op, void *dst, const void *a,
	           const void *b, size_t count);
	enum cb_dtype dtype;
	enum cb_op op;
	size_t elem_bytes;
};

struct cb_tp_ops {
	uint32_t abi;  /* CB_TP_ABI; a module with another value is refused */
	uint32_t size; /* sizeof(struct cb_tp_ops) as the module was built */
	const char *name;        /* "tcp", "shm", "verbs", "gpu" */
	const char *description; /* one line for `collbench info` */
	uint32_t caps;           /* enum cb_tp_cap bits */

	/*
	 * query - can this transport run on this machine?  Called before open
	 * and by `collbench info`.  Returns CB_OK, or CB_ERR_UNAVAILABLE with
	 * a one-line reason in @why ("no RDMA device found").  Never blocks.
	 * Optional: NULL means always available.
	 */
	cb_status_t (*query)(char *why, size_t why_bytes);

	/* open - make this process's context: listeners, shared segments,
	 * device contexts.  @host outlives the context. */
	cb_status_t (*open)(const struct cb_tp_host *host,
	                    struct cb_tp_ctx **ctx);

	/* close - free everything made from @ctx; endpoints first. */
	void (*close)(struct cb_tp_ctx *ctx);

	/* address - write this context's address blob (at most CB_TP_ADDR_MAX
	 * bytes) to @blob and its length to @bytes; the core publishes it. */
	cb_status_t (*address)(struct cb_tp_ctx *ctx, void *blob,
	                       size_t *bytes);

	/*
	 * ep_connect - start connecting to rank @peer, whose published blob is
	 * @blob.  Returns the endpoint at once; it is usable after ep_test()
	 * returns CB_OK.  Both ranks of a pair call it, each with the other's
	 * blob.  CB_ERR_UNSUPPORTED when this transport cannot reach @peer
	 * (shm and a rank of another host).
	 */
	cb_status_t (*ep_connect)(struct cb_tp_ctx *ctx, int peer,
	                          const void *blob, size_t bytes,
	                          struct cb_tp_ep **ep);

	/* ep_test - CB_OK once connected, CB_AGAIN while not, an error when
	 * the connection failed.  Makes progress on the handshake. */
	cb_status_t (*ep_test)(struct cb_tp_ep *ep);

	/* ep_close - release one endpoint; pending requests are dropped. */
	void (*ep_close)(struct cb_tp_ep *ep);

	/*
	 * mem_reg / mem_dereg - register a buffer for transfers; outside timed
	 * regions only (the core keeps a cache).  Optional: NULL when the
	 * transport needs no registration, and then mr arguments are NULL.
	 */
	cb_status_t (*mem_reg)(struct cb_tp_ctx *ctx, void *buf, size_t bytes,
	                       enum cb_mem_kind kind, struct cb_tp_mr **mr);
	void (*mem_dereg)(struct cb_tp_ctx *ctx, struct cb_tp_mr *mr);

	/*
	 * isend - send @bytes from @buf to the endpoint's peer.  @buf must not
	 * change until test() reports completion.  CB_OK means posted (not
	 * done); CB_AGAIN means no resources now: progress and post again.
	 */
	cb_status_t (*isend)(struct cb_tp_ep *ep, const void *buf, size_t bytes,
	                     struct cb_tp_mr *mr, uint64_t tag,
	                     struct cb_tp_req *req);

	/* irecv - receive the next message on @ep into @buf (capacity @cap);
	 * a larger message fails with CB_ERR_TRUNCATE. */
	cb_status_t (*irecv)(struct cb_tp_ep *ep, void *buf, size_t cap,
	                     struct cb_tp_mr *mr, uint64_t tag,
	                     struct cb_tp_req *req);

	/* test - CB_OK when @req is complete (req->bytes set), CB_AGAIN when
	 * not, an error when it failed.  Does not itself wait. */
	cb_status_t (*test)(struct cb_tp_ep *ep, struct cb_tp_req *req);

	/* progress - move every endpoint of @ctx forward as far as it goes
	 * without waiting.  Returns CB_OK (something moved), CB_AGAIN
	 * (nothing did) or an error (a peer failed). */
	cb_status_t (*progress)(struct cb_tp_ctx *ctx);

	/*
	 * Optional one-sided operations (CB_TP_CAP_PUT): write @bytes into the
	 * peer's registered memory at @raddr and raise @notify there, read by
	 * the peer with notify_poll() (CB_AGAIN when none arrived).
	 */
	cb_status_t (*put)(struct cb_tp_ep *ep, const void *buf, size_t bytes,
	                   struct cb_tp_mr *mr, uint64_t raddr,
	                   const void *rkey, uint32_t notify,
	                   struct cb_tp_req *req);
	cb_status_t (*notify_poll)(struct cb_tp_ep *ep, uint32_t *notify);

	/*
	 * Optional direct access (CB_TP_CAP_PEER_MAP): make @bytes of the
	 * peer's memory at @raddr loadable and storable here, as shm mappings
	 * and CUDA IPC handles allow; algorithms then fuse copy and reduce.
	 */
	cb_status_t (*peer_map)(struct cb_tp_ep *ep, uint64_t raddr,
	                        size_t bytes, void **local);

	/*
	 * Optional: allocate host memory that local peers can reach directly
	 * (shm: a memfd mapping they map too), so receives of data sent from
	 * it are plain loads instead of a copy through the kernel.  Outside
	 * timed regions.  Memory from elsewhere still works, just slower.
	 */
	cb_status_t (*mem_alloc)(struct cb_tp_ctx *ctx, size_t bytes,
	                         void **buf);
	void (*mem_free)(struct cb_tp_ctx *ctx, void *buf, size_t bytes);

	/*
	 * Optional: receive the next message and reduce it on arrival:
	 * dst[i] = src[i] OP message[i] (@dst may be @src).  A transport that
	 * can read the sender's memory fuses the copy into the reduction and
	 * saves a pass over memory; without this member the core receives into
	 * a staging buffer and reduces from there.  @bytes is exact.
	 */
	cb_status_t (*irecv_reduce)(struct cb_tp_ep *ep, void *dst,
	                            const void *src, size_t bytes,
	                            const struct cb_tp_reduce *red,
	                            uint64_t tag, struct cb_tp_req *req);

	/*
	 * Optional: progress() has found nothing to do many times in a row;
	 * sleep until something may have arrived or @timeout_us passed.  For
	 * transports whose polling costs a system call (tcp), so that waiting
	 * ranks leave the CPU to the kernel that moves their data.  NULL:
	 * the core keeps polling.
	 */
	void (*idle_wait)(struct cb_tp_ctx *ctx, int timeout_us);
};

/* Calls to optional members go through these, never straight through the
 * table, so a module built against an older, shorter table stays safe. */
#define CB_TP_HAS(ops, member)                                                 \
	((ops)->size > offsetof(struct cb_tp_ops, member) && (ops)->member)

#endif
