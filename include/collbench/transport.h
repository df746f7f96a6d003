/* SPDX-License-Identifier: MIT */
/*
 * collbench/transport.h - the transport plugin ABI, version 3.
 *
 * A transport is one `struct cb_tp_ops` table.  tcp and shm are compiled into
 * the binary; verbs and gpu are shared modules that export the table as the
 * symbol `cb_tp_ops_v3` (CB_TP_SYMBOL) and are loaded at run time, so the
 * binary runs where libibverbs or CUDA are missing.  A transport reaches the
 * core only through the `struct cb_tp_host` it is lent (logging, failures,
 * options, the clock, host reductions): built in or as a module, the same
 * source links nothing of the executable (the build checks it).  Every
 * transport is lent a table of its own, and every callback in it takes that
 * table as its first argument (`self`, as a libuv callback gets its loop):
 * what the core keeps per transport (the name its log lines carry) comes
 * from there, never from a process-wide global.  Version 3 added `self`; a
 * module built against version 2 is refused with one line.
 *
 * Life of a transport in one rank:
 *
 *   query()                          may this transport run here at all?
 *   devices()                        what it could use (collbench info)
 *   open(host)         -> ctx        one per process and transport
 *   address(ctx)       -> blob       published once through the bootstrap
 *   mem_reg(ctx, mem)  -> mr         outside timed regions; the core caches
 *                                    registrations and hands the right one
 *                                    down with every operation
 *   -- for each peer a plan uses, when it is first needed (lazily): --
 *   ep_create(ctx, peer) -> ep, blob blob: what this rank tells that peer
 *                                    (verbs: the QP number made for it)
 *   ep_connect(ep, addr, blob)       the peer's address and its blob for us
 *   ep_ready(ep)                     optional: the peer has connected too
 *   ep_test(ep) until CB_OK          non-blocking; the core owns the deadline
 *   isend/irecv(ep, ..., req)        then test(req) / progress(ctx)
 *   mem_export/mem_import, put       optional one-sided and mapped access
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

#define CB_TP_ABI          3u
#define CB_TP_SYMBOL       "cb_tp_ops_v3"
#define CB_TP_ADDR_MAX     256 /* bytes in an address or a per-peer blob */
#define CB_TP_MEM_BLOB_MAX 128 /* bytes of an exported memory handle */

/* Capability bits (struct cb_tp_ops.caps). */
enum cb_tp_cap {
	CB_TP_CAP_HOST_MEM = 1u << 0,   /* host buffers */
	CB_TP_CAP_GPU_MEM = 1u << 1,    /* device buffers, moved directly */
	CB_TP_CAP_PUT = 1u << 2,        /* mem_export/mem_import, put, notify */
	CB_TP_CAP_MAP = 1u << 3,        /* mem_import maps peers' memory for
	                                 * loads and stores (shm, CUDA IPC) */
	CB_TP_CAP_SAME_HOST = 1u << 4,  /* can connect only ranks of one host */
	CB_TP_CAP_NEEDS_REG = 1u << 5,  /* zero-copy only from registered
	                                 * memory (verbs): unregistered buffers
	                                 * go through bounce buffers */
	CB_TP_CAP_HELPER_THR = 1u << 6, /* starts threads of its own */
	CB_TP_CAP_EP_BLOB = 1u << 7,    /* ep_create writes per-peer data */
	CB_TP_CAP_RECONNECT = 1u << 8,  /* ep_create again after ep_close
	                                 * connects the pair anew (below) */
};

/*
 * Device memory and transports.  A transport with CB_TP_CAP_GPU_MEM is
 * handed device buffers (struct cb_tp_mem.kind CB_MEM_GPU) and moves them
 * itself; its mem_reg may still return CB_ERR_UNSUPPORTED, not recorded,
 * for one region (verbs where the driver cannot export it as a dma-buf).
 * For that region, and for every device region with a transport without
 * the bit (tcp, shm), the core stages: it keeps a pinned host twin of the
 * region and copies each message through it on the engine of the transport
 * that owns device memory (the one with mem_copy: gpu), so the wire
 * transport only ever sees host memory.
 */

enum cb_mem_kind {
	CB_MEM_HOST = 0,
	CB_MEM_GPU = 1,
};

/* Log levels of cb_tp_host.log(). */
enum { CB_TP_LOG_ERROR = 0, CB_TP_LOG_WARN, CB_TP_LOG_INFO, CB_TP_LOG_DEBUG };

/* Opaque per-transport objects. */
struct cb_tp_ctx;
struct cb_tp_ep;
struct cb_tp_mr;   /* a registration of local memory */
struct cb_tp_rmem; /* a peer's exported memory, imported here */

/*
 * What the core lends a transport: one table per open transport.  A
 * transport keeps the pointer for the life of its context, uses only members
 * below `size`, and passes the pointer back as @self to every callback.
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
	/* The NICs chosen for this rank, comma-separated ("mlx5_0,mlx5_1";
	 * --nic, else the one topology found nearest), or NULL; and its GPU
	 * index, or -1.  A transport maps the names to its own devices. */
	const char *nic;
	int gpu;
	/* Option lookup: "tcp-if", "tcp-streams", ... (CLI, then environment);
	 * NULL when unset. */
	const char *(*option)(const struct cb_tp_host *self, const char *key);
	/* Log a line at a CB_TP_LOG_* level, with the name of the transport
	 * @self was lent to as prefix. */
	void (*log)(const struct cb_tp_host *self, int level, const char *fmt,
	            ...) __attribute__((format(printf, 3, 4)));
	/* Record the one line that describes a failure (the first one wins) and
	 * return @st, so a transport writes `return host->fail(host,
	 * CB_ERR_..., ...)`. */
	cb_status_t (*fail)(const struct cb_tp_host *self, cb_status_t st,
	                    const char *fmt, ...)
	        __attribute__((format(printf, 3, 4)));
	/* A monotonic clock, in ns. */
	uint64_t (*now_ns)(const struct cb_tp_host *self);
	/* dst[i] = a[i] OP b[i] for @count host elements (the core's reduction
	 * kernels, bit-exact with the verification). */
	void (*reduce)(const struct cb_tp_host *self, enum cb_dtype dt,
	               enum cb_op op, void *dst, const void *a, const void *b,
	               size_t count);
	/*
	 * A dma-buf file descriptor for the device memory [@base, @base +
	 * @bytes), from the transport that owns device memory in @self's
	 * communicator (gpu: cuMemGetHandleForAddressRange), for a NIC to
	 * register it directly (verbs: ibv_reg_dmabuf_mr(pd, *@offset, @bytes,
	 * iova = @base, *@fd, access): GPUDirect RDMA).  *@offset: where @base
	 * lies in the dma-buf (page alignment).  The caller owns *@fd and
	 * closes it once registered.  CB_ERR_UNSUPPORTED, not recorded, when
	 * no device memory engine is open or the driver or kernel cannot
	 * export it (the caller then declines the memory, and the core stages
	 * it through pinned host memory).  Outside timed regions.  NULL in a
	 * core without device memory.
	 */
	cb_status_t (*gpu_dmabuf)(const struct cb_tp_host *self,
	                          const void *base, size_t bytes, int *fd,
	                          uint64_t *offset);
};

/*
 * A buffer as the core hands it to a transport: the registered region that
 * holds the bytes an operation names.  The core keeps one per region and
 * transport (its registration cache); @mr is what this transport's mem_reg
 * returned for it, NULL when the transport registers nothing or the region is
 * unknown to the core (kind is then CB_MEM_HOST).
 */
struct cb_tp_mem {
	void *base;
	size_t bytes;
	enum cb_mem_kind kind;
	int device; /* GPU index for CB_MEM_GPU, else -1 */
	struct cb_tp_mr *mr;
};

/*
 * A request: storage owned by the caller (so a timed region allocates
 * nothing), contents owned by the transport from isend/irecv/put until test()
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

/* What irecv_reduce() combines with: dst = src OP message, element-wise.
 * A host transport calls host->reduce(); one with its own engine (gpu) runs
 * its kernels for the same dtype and op. */
struct cb_tp_reduce {
	enum cb_dtype dtype;
	enum cb_op op;
	uint32_t elem_bytes;
};

/* One device (NIC, port, GPU, or the transport's own notion) for
 * `collbench info` and for choosing among several. */
struct cb_tp_dev {
	char name[64];       /* "mlx5_0", "eth0", "shm" */
	int port;            /* 1-based port; 0 when ports do not apply */
	char link_layer[16]; /* "InfiniBand", "Ethernet", "iWARP", "memory" */
	char state[16];      /* "ACTIVE", "DOWN", "up", ... */
	double speed_gbps;   /* link rate; 0 unknown */
	uint32_t mtu;        /* active MTU in bytes; 0 unknown */
	uint32_t max_inline; /* bytes sent inline with a work request */
	uint64_t max_msg;    /* largest single message; 0 unlimited */
	int gpu_mem;         /* can move GPU memory directly (GPUDirect) */
	char netdev[32];     /* the network interface behind it, or "" */
	char detail[160];    /* "GID[3] ::ffff:10.0.0.1 RoCE v2", "LID 4" */
};

/* Counters a transport moved or a device recorded (verbs port counters,
 * an interface's statistics), read before and after a run. */
struct cb_tp_counter {
	char dev[48];   /* "mlx5_0:1", "eth0" */
	char name[40];  /* "port_xmit_data", "symbol_error" */
	uint64_t value; /* in the counter's own unit */
	int is_error;   /* a non-zero change means trouble */
};

/* What a context did, for checks and the run header. */
struct cb_tp_stats {
	uint64_t eager_msgs, eager_bytes; /* through the transport's buffers */
	uint64_t zcopy_msgs, zcopy_bytes; /* straight into the user's buffer */
	uint64_t bounce_bytes;            /* copied through bounce buffers
	                                   * because memory was unregistered */
	uint64_t put_msgs, put_bytes;     /* one-sided */
	uint64_t connects, registrations; /* set-up work */
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

	/*
	 * devices - list up to @max devices this transport could use here into
	 * @devs and their number in *@n (which may exceed @max).  Never blocks;
	 * no context needed.  Optional.
	 */
	cb_status_t (*devices)(struct cb_tp_dev *devs, int max, int *n);

	/* open - make this process's context: listeners, shared segments,
	 * device contexts (on host->nic).  @host outlives the context. */
	cb_status_t (*open)(const struct cb_tp_host *host,
	                    struct cb_tp_ctx **ctx);

	/* close - free everything made from @ctx; endpoints first. */
	void (*close)(struct cb_tp_ctx *ctx);

	/* address - write this context's address (at most CB_TP_ADDR_MAX
	 * bytes) to @blob and its length to @bytes; the core publishes it
	 * once, and hands it to every peer's ep_connect(). */
	cb_status_t (*address)(struct cb_tp_ctx *ctx, void *blob,
	                       size_t *bytes);

	/*
	 * ep_create - make the endpoint for rank @peer.  With
	 * CB_TP_CAP_EP_BLOB, write what this rank tells that one peer (at most
	 * CB_TP_ADDR_MAX bytes: a queue-pair number per NIC, a PSN) to @blob
	 * and its length to *@bytes; the core publishes it for the peer.
	 * CB_ERR_UNSUPPORTED (recorded) when this transport cannot reach @peer
	 * (shm and a rank of another host).  With CB_TP_CAP_RECONNECT it may
	 * be called again for a peer whose endpoint was closed: the pair's
	 * next generation, which both ranks make, each once per ep_close;
	 * nothing of an earlier generation reaches it.
	 */
	cb_status_t (*ep_create)(struct cb_tp_ctx *ctx, int peer,
	                         struct cb_tp_ep **ep, void *blob,
	                         size_t *bytes);

	/*
	 * ep_connect - start connecting @ep, given the peer's address and the
	 * blob its ep_create wrote for this rank (NULL, 0 without
	 * CB_TP_CAP_EP_BLOB).  Returns at once; both ranks of a pair call it.
	 */
	cb_status_t (*ep_connect)(struct cb_tp_ep *ep, const void *addr,
	                          size_t addr_bytes, const void *blob,
	                          size_t blob_bytes);

	/*
	 * ep_ready - optional: the peer's ep_connect() has returned too (the
	 * core learns it through the bootstrap before calling this).  For a
	 * transport whose first message must not reach a peer that cannot
	 * receive yet (verbs: a queue pair not yet in RTR drops it).  Never
	 * blocks.
	 */
	cb_status_t (*ep_ready)(struct cb_tp_ep *ep);

	/* ep_test - CB_OK once connected, CB_AGAIN while not, an error when
	 * the connection failed.  Makes progress on the handshake. */
	cb_status_t (*ep_test)(struct cb_tp_ep *ep);

	/* ep_close - release one endpoint; pending requests are dropped. */
	void (*ep_close)(struct cb_tp_ep *ep);

	/*
	 * mem_reg / mem_dereg - register @mem (base, bytes, kind, device) for
	 * transfers; outside timed regions only (the core caches them).  *@mr
	 * may be set to NULL: nothing to register for this memory.  Optional:
	 * without it, every struct cb_tp_mem this transport sees has mr NULL.
	 */
	cb_status_t (*mem_reg)(struct cb_tp_ctx *ctx,
	                       const struct cb_tp_mem *mem,
	                       struct cb_tp_mr **mr);
	void (*mem_dereg)(struct cb_tp_ctx *ctx, struct cb_tp_mr *mr);

	/*
	 * isend - send @bytes from @buf (inside @mem) to the endpoint's peer.
	 * @buf must not change until test() reports completion.  CB_OK means
	 * posted (not done); CB_AGAIN means no resources now: progress and post
	 * again.
	 */
	cb_status_t (*isend)(struct cb_tp_ep *ep, const void *buf, size_t bytes,
	                     const struct cb_tp_mem *mem, uint64_t tag,
	                     struct cb_tp_req *req);

	/* irecv - receive the next message on @ep into @buf (capacity @cap,
	 * inside @mem); a larger message fails with CB_ERR_TRUNCATE. */
	cb_status_t (*irecv)(struct cb_tp_ep *ep, void *buf, size_t cap,
	                     const struct cb_tp_mem *mem, uint64_t tag,
	                     struct cb_tp_req *req);

	/* test - CB_OK when @req is complete (req->bytes set), CB_AGAIN when
	 * not, an error when it failed.  Does not itself wait. */
	cb_status_t (*test)(struct cb_tp_ep *ep, struct cb_tp_req *req);

	/* progress - move every endpoint of @ctx forward as far as it goes
	 * without waiting.  Returns CB_OK (something moved), CB_AGAIN
	 * (nothing did) or an error (a peer failed). */
	cb_status_t (*progress)(struct cb_tp_ctx *ctx);

	/*
	 * Optional one-sided access (CB_TP_CAP_PUT).
	 *
	 * mem_export - describe registered memory @mem so that a peer can
	 * reach it: at most CB_TP_MEM_BLOB_MAX bytes (verbs: address and rkey;
	 * shm: pid, memfd and offset; gpu: an IPC handle).  Outside timed
	 * regions.  The blob travels however the caller likes (a message).
	 *
	 * mem_import - turn a peer's exported blob, received on @ep, into a
	 * handle for put(); with CB_TP_CAP_MAP also an address in *@local this
	 * process can load from and store to (else *@local = NULL).  Outside
	 * timed regions; mem_unimport releases it.
	 *
	 * put - write @bytes from @buf (inside @mem) to byte @roff of @rmem on
	 * the endpoint's peer.  With @notify != 0 the peer's notify_poll()
	 * returns @notify after the data is in place (verbs: write with
	 * immediate; iWARP: write, then a send).  Puts and sends on one
	 * endpoint are ordered.  Completion through test(req) is local.
	 *
	 * notify_poll - the next notification peers' puts raised on @ep, in
	 * arrival order: CB_OK with *@notify set, CB_AGAIN when none.
	 */
	cb_status_t (*mem_export)(struct cb_tp_ctx *ctx,
	                          const struct cb_tp_mem *mem, void *blob,
	                          size_t *bytes);
	cb_status_t (*mem_import)(struct cb_tp_ep *ep, const void *blob,
	                          size_t bytes, struct cb_tp_rmem **rmem,
	                          void **local);
	void (*mem_unimport)(struct cb_tp_ep *ep, struct cb_tp_rmem *rmem);
	cb_status_t (*put)(struct cb_tp_ep *ep, const void *buf, size_t bytes,
	                   const struct cb_tp_mem *mem, struct cb_tp_rmem *rmem,
	                   uint64_t roff, uint32_t notify,
	                   struct cb_tp_req *req);
	cb_status_t (*notify_poll)(struct cb_tp_ep *ep, uint32_t *notify);

	/*
	 * Optional: allocate memory of @kind on @device that local peers can
	 * reach directly (shm: a memfd mapping they map too; gpu: device
	 * memory), so receives of data sent from it are plain loads instead of
	 * a copy through the kernel.  Outside timed regions.  Memory from
	 * elsewhere still works, just slower.  CB_ERR_UNSUPPORTED, not
	 * recorded, for a kind this transport does not allocate: the core asks
	 * the next one.  @device -1: the GPU this rank uses (host->gpu, or the
	 * transport's own choice).
	 */
	cb_status_t (*mem_alloc)(struct cb_tp_ctx *ctx, size_t bytes,
	                         enum cb_mem_kind kind, int device, void **buf);
	void (*mem_free)(struct cb_tp_ctx *ctx, void *buf, size_t bytes);

	/*
	 * Optional: receive the next message and reduce it on arrival:
	 * dst[i] = src[i] OP message[i] (@dst may be @src; both inside
	 * @mem).  A transport that can read the sender's memory fuses the
	 * copy into the reduction and saves a pass over memory; without this
	 * member the core receives into a staging buffer and reduces from
	 * there.  @bytes is exact.
	 */
	cb_status_t (*irecv_reduce)(struct cb_tp_ep *ep, void *dst,
	                            const void *src, size_t bytes,
	                            const struct cb_tp_mem *mem,
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

	/* Optional: what @ctx has done since open (cheap; any time). */
	void (*stats)(struct cb_tp_ctx *ctx, struct cb_tp_stats *out);

	/*
	 * Optional: the counters of the devices @ctx uses, up to @max into
	 * @out, their number in *@n.  Reads sysfs: outside timed regions.
	 */
	cb_status_t (*counters)(struct cb_tp_ctx *ctx,
	                        struct cb_tp_counter *out, int max, int *n);

	/*
	 * The device memory engine (optional; gpu has it, and the core uses
	 * it for every copy and reduction on device memory: the algorithms'
	 * local steps, staging for transports that cannot move device memory,
	 * fill and verification).
	 *
	 * mem_copy - copy @bytes from @src to @dst, each device memory of this
	 * transport's or host memory (registered or not), queued on the
	 * context's local stream after everything queued there before.  With
	 * @req: returns at once, CB_OK (queued; completion through
	 * local_test) or CB_AGAIN (no room now: post again after progress);
	 * @req NULL: done when it returns (fill and verification, outside
	 * timed regions: it waits for the device).
	 *
	 * mem_reduce - dst[i] = a[i] OP b[i] for @count elements of device
	 * memory (@dst may be @a), bit-exact with host->reduce; queued and
	 * completed as mem_copy.
	 *
	 * local_test - CB_OK when the local operation @req is done, CB_AGAIN
	 * while not, an error when it failed.  Never waits.
	 */
	cb_status_t (*mem_copy)(struct cb_tp_ctx *ctx, void *dst,
	                        const void *src, size_t bytes,
	                        struct cb_tp_req *req);
	cb_status_t (*mem_reduce)(struct cb_tp_ctx *ctx, void *dst,
	                          const void *a, const void *b, size_t count,
	                          const struct cb_tp_reduce *red,
	                          struct cb_tp_req *req);
	cb_status_t (*local_test)(struct cb_tp_ctx *ctx, struct cb_tp_req *req);

	/*
	 * Optional: a dma-buf file descriptor for device memory of this
	 * context's (see cb_tp_host.gpu_dmabuf, through which the core lends
	 * it to other transports).  CB_ERR_UNSUPPORTED, not recorded, where
	 * the driver or the kernel cannot.
	 */
	cb_status_t (*mem_dmabuf)(struct cb_tp_ctx *ctx, const void *base,
	                          size_t bytes, int *fd, uint64_t *offset);

	/*
	 * Optional: one line on what this context drives, for the run header
	 * ("GPU 0 NVIDIA H200 (0000:18:00.0), copies on the copy engine").
	 * Cheap; outside timed regions.
	 */
	void (*describe)(struct cb_tp_ctx *ctx, char *buf, size_t bytes);
};

/* Calls to optional members go through these, never straight through the
 * table, so a module built against an older, shorter table stays safe. */
#define CB_TP_HAS(ops, member)                                                 \
	((ops)->size > offsetof(struct cb_tp_ops, member) && (ops)->member)

/*
 * How a transport source defines its table: built in, the table is
 * `cb_tp_<name>`; built as a module (-DCB_TP_MODULE), it is the exported
 * symbol CB_TP_SYMBOL, the only name the module exports.
 */
#ifdef CB_TP_MODULE
#define CB_TP_DEFINE(name)                                                     \
	__attribute__((visibility("default")))                                 \
	const struct cb_tp_ops cb_tp_ops_v3
#else
#define CB_TP_DEFINE(name) const struct cb_tp_ops cb_tp_##name
#endif

#endif
