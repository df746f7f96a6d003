/* SPDX-License-Identifier: MIT */
/*
 * transports/shm.c - shared memory between the ranks of one host.
 *
 * Every rank owns one POSIX shared-memory segment holding one inbound channel
 * per local peer (so the memory a rank polls is its own, first touched by
 * itself: NUMA-local to the receiver, as NCCL does).  A channel is a ring of
 * 16 slots of 4 KiB written by exactly one sender:
 *
 *   slot = {seq, tag, bytes, addr, kind, frag bytes, data...}
 *
 * The sender fills a slot and then publishes it with a release store of seq;
 * the receiver polls seq with an acquire load.  The first 24 bytes of data
 * share the cache line with seq, so a small message costs the receiver one
 * cache miss.  Sequence numbers, not flags, mark full slots, so the receiver
 * never writes the sender's lines; it returns slots through a counter on a
 * line of its own.
 *
 * Messages up to --shm-rndv-bytes (default 16 KiB) are copied through slots,
 * fragment by fragment (pipelined).  Larger ones are single-copy: the sender
 * posts {addr, bytes} and the receiver reads straight from the sender's
 * memory, then bumps a done counter that completes the send.  It reads
 *  - with plain loads, when the buffer came from mem_alloc(): a memfd that
 *    the receiver maps once through /proc/PID/fd (COLLBENCH_SHM_MAP=0 turns
 *    this off).  irecv_reduce() then reduces straight out of the peer's
 *    memory: one pass instead of copy-then-reduce;
 *  - else with process_vm_readv (CMA), in pieces through a small bounce
 *    buffer when it has to reduce.
 * Where CMA is refused (ptrace policy, seccomp), each pair finds out at
 * connect time and falls back to slots; COLLBENCH_SHM_CMA=0 forces that.
 *
 * A peer that dies cannot be seen here: the core's store notices and aborts
 * the job, and the core's deadline bounds every wait.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <collbench/transport.h>

#define SHM_MAGIC      0x434253484d303031ull /* "CBSHM001" */
#define SHM_SLOTS      16u
#define SHM_SLOT_BYTES 4096u
#define SHM_HDR_BYTES  40u
#define SHM_DATA_BYTES (SHM_SLOT_BYTES - SHM_HDR_BYTES)

#define SHM_MAX_REGIONS  8
#define SHM_BOUNCE_BYTES (256u << 10)

enum { KIND_EAGER = 1, KIND_RNDV = 2 };
enum { CMA_UNKNOWN = 0, CMA_YES = 1, CMA_NO = 2 };

struct shm_slot {
	_Atomic uint64_t seq;
	uint64_t tag;
	uint64_t bytes;
	uint64_t addr;
	uint32_t kind;
	uint32_t frag_bytes;
	uint8_t data[SHM_DATA_BYTES];
};

/* In the receiver's segment; slots written by one sender. */
struct shm_chan {
	alignas(64) _Atomic uint64_t consumed;  /* receiver: slots freed */
	alignas(64) _Atomic uint64_t rndv_done; /* receiver: copies done */
	alignas(64) _Atomic uint32_t attached;  /* sender: mapped us */
	_Atomic uint32_t cma;                   /* receiver: can read sender */
	alignas(64) struct shm_slot slots[SHM_SLOTS];
};

struct shm_seg {
	uint64_t magic;
	uint64_t job_id;
	int32_t owner;
	int32_t nchan;
	alignas(64) struct shm_chan chan[];
};

struct shm_addr {
	uint64_t magic;
	int32_t rank, pid;
	uint64_t seg_addr; /* the owner's own mapping, for the CMA probe */
	uint64_t seg_bytes;
	char name[64];
};

/* What a rendezvous slot says about the sender's buffer, in its data. */
struct shm_rndv {
	uint64_t region_id; /* 0: not from mem_alloc */
	uint64_t region_base, region_bytes;
	int32_t region_fd;
};

/* A buffer of ours from mem_alloc, and a peer's as mapped here. */
struct shm_region {
	void *base;
	size_t bytes;
	int fd;
	uint64_t id;
};

struct cb_tp_ep {
	struct cb_tp_ctx *ctx;
	struct shm_region maps[SHM_MAX_REGIONS]; /* base = ours, id = theirs */
	uint64_t map_rbase[SHM_MAX_REGIONS];
	int nmaps, no_map;
	int peer;
	pid_t pid;
	int cma; /* we may post rendezvous to the peer */
	struct shm_seg *peer_seg;
	size_t peer_seg_bytes;
	struct shm_chan *tx; /* in the peer's segment */
	struct shm_chan *rx; /* in ours */
	uint64_t tx_seq, tx_consumed, tx_rndv;
	uint64_t rx_seq;
	struct cb_tp_req *sq_head, *sq_tail; /* sends not fully posted */
	struct cb_tp_req *rq_head, *rq_tail; /* receives not complete */
	cb_status_t err;
};

struct cb_tp_ctx {
	const struct cb_tp_host *host;
	struct shm_seg *seg;
	size_t seg_bytes;
	struct shm_addr addr;
	int *local_index; /* [world]: index among this host's ranks, or -1 */
	struct cb_tp_ep **eps;
	int neps, unlinked, allow_cma, allow_map;
	size_t rndv_bytes;
	struct shm_region regions[SHM_MAX_REGIONS];
	int nregions;
	uint64_t next_region_id;
	uint8_t *bounce; /* CMA pieces on their way into a reduction */
};

/* Request private state. */
enum { R_DONE, R_BUF, R_CAP, R_OFF, R_STARTED, R_RNDV, R_SRC, R_RED };

static const char *shm_host(const struct cb_tp_ctx *ctx, int r)
{
	return ctx->host->hosts[ctx->host->host_of_rank[r]];
}

static cb_status_t shm_open_ctx(const struct cb_tp_host *h,
                                struct cb_tp_ctx **out)
{
	struct cb_tp_ctx *ctx = calloc(1, sizeof(*ctx));
	const char *cma = h->option("shm-cma"),
	           *rb = h->option("shm-rndv-bytes");
	cb_status_t st;
	int fd = -1, n = 0;

	if (!ctx)
		return h->fail(CB_ERR_NOMEM, "shm: out of memory");
	ctx->host = h;
	const char *map = h->option("shm-map");
	ctx->allow_cma = !(cma && !strcmp(cma, "0"));
	ctx->allow_map = !(map && !strcmp(map, "0"));
	ctx->next_region_id = 1;
	if ((cma && strcmp(cma, "0") && strcmp(cma, "1")) ||
	    (map && strcmp(map, "0") && strcmp(map, "1"))) {
		st = h->fail(
		        CB_ERR_USAGE,
		        "shm: COLLBENCH_SHM_CMA and COLLBENCH_SHM_MAP take 0 "
		        "or 1, not '%s'",
		        cma && strcmp(cma, "0") && strcmp(cma, "1") ? cma
		                                                    : map);
		goto fail;
	}
	ctx->rndv_bytes = 16u << 10;
	if (rb) {
		char *end;
		long long v = strtoll(rb, &end, 10);
		if (*end || v < 0) {
			st = h->fail(CB_ERR_USAGE,
			             "shm: rendezvous size '%s' is not a byte "
			             "count",
			             rb);
			goto fail;
		}
		ctx->rndv_bytes = (size_t)v;
	}
	ctx->local_index = calloc((size_t)h->world, sizeof(int));
	ctx->eps = calloc((size_t)h->world, sizeof(*ctx->eps));
	ctx->bounce = aligned_alloc(4096, SHM_BOUNCE_BYTES);
	if (!ctx->local_index || !ctx->eps || !ctx->bounce) {
		st = h->fail(CB_ERR_NOMEM, "shm: out of memory");
		goto fail;
	}
	for (int r = 0; r < h->world; r++)
		ctx->local_index[r] =
		        h->host_of_rank[r] == h->host_of_rank[h->rank] ? n++
		                                                       : -1;

	ctx->seg_bytes =
	        sizeof(struct shm_seg) + (size_t)n * sizeof(struct shm_chan);
	snprintf(ctx->addr.name, sizeof(ctx->addr.name),
	         "/collbench-%016llx-%d", (unsigned long long)h->job_id,
	         h->rank);
	fd = shm_open(ctx->addr.name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
	              0600);
	if (fd < 0) {
		st = h->fail(CB_ERR_SYS, "shm: cannot create %s: %s",
		             ctx->addr.name, strerror(errno));
		goto fail;
	}
	/* Reserve the pages now: a full /dev/shm fails here, not with a
	 * SIGBUS in the middle of a run. */
	int e = posix_fallocate(fd, 0, (off_t)ctx->seg_bytes);
	if (e) {
		st = h->fail(CB_ERR_SYS,
		             "shm: cannot reserve %zu bytes in /dev/shm: %s",
		             ctx->seg_bytes, strerror(e));
		goto fail;
	}
	ctx->seg = mmap(NULL, ctx->seg_bytes, PROT_READ | PROT_WRITE,
	                MAP_SHARED | MAP_POPULATE, fd, 0);
	if (ctx->seg == MAP_FAILED) {
		ctx->seg = NULL;
		st = h->fail(CB_ERR_SYS, "shm: cannot map %s: %s",
		             ctx->addr.name, strerror(errno));
		goto fail;
	}
	close(fd);
	fd = -1;
	ctx->seg->magic = SHM_MAGIC;
	ctx->seg->job_id = h->job_id;
	ctx->seg->owner = h->rank;
	ctx->seg->nchan = n;
	ctx->addr.magic = SHM_MAGIC;
	ctx->addr.rank = h->rank;
	ctx->addr.pid = getpid();
	ctx->addr.seg_addr = (uint64_t)(uintptr_t)ctx->seg;
	ctx->addr.seg_bytes = ctx->seg_bytes;
	/* Let local peers read our buffers with CMA under Yama ptrace
	 * scope 1. */
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	ctx->neps = n - 1;
	if (ctx->neps == 0) {
		shm_unlink(ctx->addr.name);
		ctx->unlinked = 1;
	}
	*out = ctx;
	return CB_OK;
fail:
	if (fd >= 0) {
		close(fd);
		shm_unlink(ctx->addr.name);
	}
	free(ctx->local_index);
	free(ctx->eps);
	free(ctx->bounce);
	free(ctx);
	return st;
}

static void shm_close(struct cb_tp_ctx *ctx)
{
	for (int p = 0; p < ctx->host->world; p++) {
		struct cb_tp_ep *ep = ctx->eps[p];
		if (!ep)
			continue;
		if (ep->peer_seg)
			munmap(ep->peer_seg, ep->peer_seg_bytes);
		for (int i = 0; i < ep->nmaps; i++)
			munmap(ep->maps[i].base, ep->maps[i].bytes);
		free(ep);
	}
	for (int i = 0; i < ctx->nregions; i++) {
		munmap(ctx->regions[i].base, ctx->regions[i].bytes);
		close(ctx->regions[i].fd);
	}
	if (!ctx->unlinked)
		shm_unlink(ctx->addr.name);
	munmap(ctx->seg, ctx->seg_bytes);
	free(ctx->bounce);
	free(ctx->local_index);
	free(ctx->eps);
	free(ctx);
}

static cb_status_t shm_address(struct cb_tp_ctx *ctx, void *blob, size_t *bytes)
{
	if (*bytes < sizeof(ctx->addr))
		return CB_ERR_INVALID;
	memcpy(blob, &ctx->addr, sizeof(ctx->addr));
	*bytes = sizeof(ctx->addr);
	return CB_OK;
}

static cb_status_t shm_ep_connect(struct cb_tp_ctx *ctx, int peer,
                                  const void *blob, size_t bytes,
                                  struct cb_tp_ep **out)
{
	const struct cb_tp_host *h = ctx->host;
	struct shm_addr a;
	struct cb_tp_ep *ep;
	int fd;

	if (ctx->local_index[peer] < 0)
		return h->fail(
		        CB_ERR_UNSUPPORTED,
		        "shm: rank %d is on host %s, not on this host %s", peer,
		        shm_host(ctx, peer), shm_host(ctx, h->rank));
	memcpy(&a, blob, bytes < sizeof(a) ? bytes : sizeof(a));
	if (bytes != sizeof(a) || a.magic != SHM_MAGIC || a.rank != peer)
		return h->fail(CB_ERR_PROTO,
		               "shm: the address of rank %d does not parse",
		               peer);
	a.name[sizeof(a.name) - 1] = '\0';
	if (!(ep = calloc(1, sizeof(*ep))))
		return h->fail(CB_ERR_NOMEM, "shm: out of memory");
	ep->ctx = ctx;
	ep->peer = peer;
	ep->pid = a.pid;
	fd = shm_open(a.name, O_RDWR | O_CLOEXEC, 0);
	if (fd < 0) {
		free(ep);
		return h->fail(CB_ERR_SYS,
		               "shm: cannot open rank %d's segment %s: %s "
		               "(is /dev/shm shared between the ranks?)",
		               peer, a.name, strerror(errno));
	}
	ep->peer_seg_bytes = a.seg_bytes;
	ep->peer_seg = mmap(NULL, a.seg_bytes, PROT_READ | PROT_WRITE,
	                    MAP_SHARED, fd, 0);
	close(fd);
	if (ep->peer_seg == MAP_FAILED || ep->peer_seg->magic != SHM_MAGIC ||
	    ep->peer_seg->job_id != h->job_id) {
		if (ep->peer_seg != MAP_FAILED)
			munmap(ep->peer_seg, a.seg_bytes);
		free(ep);
		return h->fail(CB_ERR_PROTO,
		               "shm: rank %d's segment %s is not this job's",
		               peer, a.name);
	}
	ep->tx = &ep->peer_seg->chan[ctx->local_index[h->rank]];
	ep->rx = &ctx->seg->chan[ctx->local_index[peer]];

	/* Can we copy out of the peer's memory?  Try once on its segment
	 * header, where we know what to expect. */
	int cma = CMA_NO;
	if (ctx->allow_cma) {
		uint64_t magic = 0;
		struct iovec l = { &magic, sizeof(magic) };
		struct iovec r = { (void *)(uintptr_t)a.seg_addr,
			           sizeof(magic) };
		if (process_vm_readv(a.pid, &l, 1, &r, 1, 0) == sizeof(magic) &&
		    magic == SHM_MAGIC)
			cma = CMA_YES;
		else
			h->log(2,
			       "CMA (process_vm_readv) from rank %d refused: "
			       "%s; messages from it are copied through slots",
			       peer, strerror(errno));
	}
	atomic_store_explicit(&ep->rx->cma, (uint32_t)cma,
	                      memory_order_release);
	atomic_store_explicit(&ep->tx->attached, 1, memory_order_release);
	ctx->eps[peer] = ep;
	*out = ep;
	return CB_OK;
}

static cb_status_t shm_ep_test(struct cb_tp_ep *ep)
{
	struct cb_tp_ctx *ctx = ep->ctx;

	/* Connected once the peer has mapped our segment and told us
	 * whether it can read our memory. */
	if (!atomic_load_explicit(&ep->rx->attached, memory_order_acquire))
		return CB_AGAIN;
	uint32_t cma = atomic_load_explicit(&ep->tx->cma, memory_order_acquire);
	if (cma == CMA_UNKNOWN)
		return CB_AGAIN;
	ep->cma = cma == CMA_YES;
	if (!ctx->unlinked) {
		/* Everyone has mapped us: the name can go, so nothing is left
		 * in /dev/shm however the job ends. */
		int all = 1;
		for (int p = 0; p < ctx->host->world && all; p++)
			if (p != ctx->host->rank && ctx->local_index[p] >= 0 &&
			    !atomic_load(&ctx->seg->chan[ctx->local_index[p]]
			                          .attached))
				all = 0;
		if (all) {
			shm_unlink(ctx->addr.name);
			ctx->unlinked = 1;
		}
	}
	return CB_OK;
}

static void shm_ep_close(struct cb_tp_ep *ep)
{
	(void)ep; /* freed with the context */
}

static inline void q_push(struct cb_tp_req **head, struct cb_tp_req **tail,
                          struct cb_tp_req *r)
{
	r->next = NULL;
	if (*tail)
		(*tail)->next = r;
	else
		*head = r;
	*tail = r;
}

static inline void q_pop(struct cb_tp_req **head, struct cb_tp_req **tail)
{
	*head = (*head)->next;
	if (!*head)
		*tail = NULL;
}

static int shm_send_progress(struct cb_tp_ep *ep);

static cb_status_t shm_isend(struct cb_tp_ep *ep, const void *buf, size_t bytes,
                             struct cb_tp_mr *mr, uint64_t tag,
                             struct cb_tp_req *req)
{
	(void)mr;
	if (ep->err)
		return ep->err;
	req->tag = tag;
	req->bytes = bytes;
	req->priv.u64[R_DONE] = 0;
	req->priv.ptr[R_BUF] = (void *)buf;
	req->priv.u64[R_OFF] = 0;
	req->priv.u64[R_STARTED] = 0;
	req->priv.u64[R_RNDV] = 0;
	q_push(&ep->sq_head, &ep->sq_tail, req);
	/* Nothing queued before it: publish now, not at the next progress
	 * call; the peer may already be polling for it. */
	if (ep->sq_head == req)
		shm_send_progress(ep);
	return CB_OK;
}

static cb_status_t shm_irecv(struct cb_tp_ep *ep, void *buf, size_t cap,
                             struct cb_tp_mr *mr, uint64_t tag,
                             struct cb_tp_req *req)
{
	(void)mr;
	if (ep->err)
		return ep->err;
	req->tag = tag;
	req->bytes = 0;
	req->priv.u64[R_DONE] = 0;
	req->priv.ptr[R_BUF] = buf;
	req->priv.u64[R_CAP] = cap;
	req->priv.u64[R_OFF] = 0;
	req->priv.u64[R_STARTED] = 0;
	req->priv.u64[R_RNDV] = 0; /* a receive never waits for a send's
	                             rendezvous (the request may have been
	                             one) */
	req->priv.ptr[R_RED] = NULL;
	q_push(&ep->rq_head, &ep->rq_tail, req);
	return CB_OK;
}

static cb_status_t shm_mem_alloc(struct cb_tp_ctx *ctx, size_t bytes,
                                 void **out)
{
	const struct cb_tp_host *h = ctx->host;
	struct shm_region *r;
	int fd, e;

	if (ctx->nregions == SHM_MAX_REGIONS)
		return h->fail(CB_ERR_NOMEM, "shm: more than %d shared buffers",
		               SHM_MAX_REGIONS);
	r = &ctx->regions[ctx->nregions];
	bytes = bytes ? (bytes + 4095) / 4096 * 4096 : 4096;
	fd = memfd_create("collbench-buffer", MFD_CLOEXEC);
	if (fd < 0)
		return h->fail(CB_ERR_SYS, "shm: memfd_create: %s",
		               strerror(errno));
	/* Reserve now: too large fails here with a line, not later with a
	 * SIGBUS. */
	if ((e = posix_fallocate(fd, 0, (off_t)bytes))) {
		close(fd);
		return h->fail(CB_ERR_NOMEM,
		               "shm: cannot reserve a %zu-byte buffer: %s",
		               bytes, strerror(e));
	}
	r->base = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
	               MAP_SHARED | MAP_POPULATE, fd, 0);
	if (r->base == MAP_FAILED) {
		close(fd);
		return h->fail(CB_ERR_NOMEM,
		               "shm: cannot map a %zu-byte buffer: %s", bytes,
		               strerror(errno));
	}
	r->bytes = bytes;
	r->fd = fd;
	r->id = ctx->next_region_id++;
	ctx->nregions++;
	*out = r->base;
	return CB_OK;
}

static void shm_mem_free(struct cb_tp_ctx *ctx, void *buf, size_t bytes)
{
	(void)bytes;
	for (int i = 0; i < ctx->nregions; i++) {
		if (ctx->regions[i].base != buf)
			continue;
		munmap(buf, ctx->regions[i].bytes);
		close(ctx->regions[i].fd);
		ctx->regions[i] = ctx->regions[--ctx->nregions];
		return;
	}
}

static cb_status_t shm_irecv_reduce(struct cb_tp_ep *ep, void *dst,
                                    const void *src, size_t bytes,
                                    const struct cb_tp_reduce *red,
                                    uint64_t tag, struct cb_tp_req *req)
{
	cb_status_t st = shm_irecv(ep, dst, bytes, NULL, tag, req);

	req->priv.ptr[R_SRC] = (void *)src;
	req->priv.ptr[R_RED] = (void *)red;
	return st;
}

static cb_status_t shm_test(struct cb_tp_ep *ep, struct cb_tp_req *req)
{
	if (req->priv.u64[R_DONE])
		return CB_OK;
	if (req->priv.u64[R_RNDV] &&
	    atomic_load_explicit(&ep->tx->rndv_done, memory_order_acquire) >=
	            req->priv.u64[R_RNDV]) {
		req->priv.u64[R_DONE] = 1;
		return CB_OK;
	}
	return ep->err ? ep->err : CB_AGAIN;
}

static inline struct shm_slot *tx_slot(struct cb_tp_ep *ep)
{
	if (ep->tx_seq - ep->tx_consumed >= SHM_SLOTS) {
		ep->tx_consumed = atomic_load_explicit(&ep->tx->consumed,
		                                       memory_order_acquire);
		if (ep->tx_seq - ep->tx_consumed >= SHM_SLOTS)
			return NULL;
	}
	return &ep->tx->slots[ep->tx_seq % SHM_SLOTS];
}

static inline void tx_publish(struct cb_tp_ep *ep, struct shm_slot *s)
{
	atomic_store_explicit(&s->seq, ++ep->tx_seq, memory_order_release);
}

/* Fill @d with the mem_alloc region holding [buf, buf + bytes), if any. */
static void shm_describe(const struct cb_tp_ctx *ctx, const void *buf,
                         size_t bytes, struct shm_rndv *d)
{
	const char *p = buf;

	d->region_id = 0;
	for (int i = 0; i < ctx->nregions; i++) {
		const struct shm_region *r = &ctx->regions[i];
		if (p >= (char *)r->base &&
		    p + bytes <= (char *)r->base + r->bytes) {
			*d = (struct shm_rndv){ r->id,
				                (uint64_t)(uintptr_t)r->base,
				                r->bytes, r->fd };
			return;
		}
	}
}

static int shm_send_progress(struct cb_tp_ep *ep)
{
	int moved = 0;

	while (ep->sq_head) {
		struct cb_tp_req *req = ep->sq_head;
		struct shm_slot *s = tx_slot(ep);

		if (!s)
			break;
		s->tag = req->tag;
		s->bytes = req->bytes;
		moved = 1;
		if (ep->cma && req->bytes > ep->ctx->rndv_bytes) {
			s->kind = KIND_RNDV;
			s->addr = (uint64_t)(uintptr_t)req->priv.ptr[R_BUF];
			s->frag_bytes = sizeof(struct shm_rndv);
			shm_describe(ep->ctx, req->priv.ptr[R_BUF], req->bytes,
			             (struct shm_rndv *)s->data);
			req->priv.u64[R_RNDV] = ++ep->tx_rndv;
			tx_publish(ep, s);
			q_pop(&ep->sq_head, &ep->sq_tail);
			continue;
		}
		size_t off = req->priv.u64[R_OFF];
		size_t n = req->bytes - off;
		if (n > SHM_DATA_BYTES)
			n = SHM_DATA_BYTES;
		s->kind = KIND_EAGER;
		s->addr = off;
		s->frag_bytes = (uint32_t)n;
		memcpy(s->data, (const char *)req->priv.ptr[R_BUF] + off, n);
		tx_publish(ep, s);
		off += n;
		req->priv.u64[R_OFF] = off;
		if (off == req->bytes) {
			req->priv.u64[R_DONE] = 1;
			q_pop(&ep->sq_head, &ep->sq_tail);
		}
	}
	return moved;
}

static cb_status_t shm_recv_fail(struct cb_tp_ep *ep, cb_status_t st,
                                 const char *what, unsigned long long a,
                                 unsigned long long b)
{
	const struct cb_tp_host *h = ep->ctx->host;

	if (st == CB_ERR_PROTO)
		ep->err = h->fail(
		        st,
		        "shm: rank %d sent message tag 0x%llx where "
		        "this rank expected 0x%llx (schedules disagree)",
		        ep->peer, a, b);
	else if (st == CB_ERR_TRUNCATE)
		ep->err = h->fail(st,
		                  "shm: rank %d sent %llu bytes to a %llu-byte "
		                  "receive",
		                  ep->peer, a, b);
	else
		ep->err = h->fail(st, "shm: %s rank %d failed: %s", what,
		                  ep->peer, strerror((int)a));
	return ep->err;
}

/*
 * Where the peer's buffer @raddr can be read with plain loads here: its
 * mem_alloc region, mapped once per region through /proc/PID/fd.  NULL when
 * it is not such a buffer or mapping is not allowed.
 */
static const char *shm_peer_view(struct cb_tp_ep *ep, const struct shm_rndv *d,
                                 uint64_t raddr, size_t bytes)
{
	char path[64];
	int i, fd;

	if (!d->region_id || ep->no_map || !ep->ctx->allow_map ||
	    raddr < d->region_base ||
	    raddr + bytes > d->region_base + d->region_bytes)
		return NULL;
	for (i = 0; i < ep->nmaps; i++)
		if (ep->maps[i].id == d->region_id)
			return (char *)ep->maps[i].base +
			       (raddr - ep->map_rbase[i]);
	if (ep->nmaps == SHM_MAX_REGIONS) {
		/* The peer freed some: forget them all and start again. */
		for (i = 0; i < ep->nmaps; i++)
			munmap(ep->maps[i].base, ep->maps[i].bytes);
		ep->nmaps = 0;
	}
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)ep->pid,
	         d->region_fd);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	void *p = fd < 0 ? MAP_FAILED
	                 : mmap(NULL, d->region_bytes, PROT_READ, MAP_SHARED,
	                        fd, 0);
	if (fd >= 0)
		close(fd);
	if (p == MAP_FAILED) {
		ep->ctx->host->log(2,
		                   "cannot map rank %d's buffers (%s): reading "
		                   "them with CMA instead",
		                   ep->peer, strerror(errno));
		ep->no_map = 1;
		return NULL;
	}
	i = ep->nmaps++;
	ep->maps[i] =
	        (struct shm_region){ p, d->region_bytes, -1, d->region_id };
	ep->map_rbase[i] = d->region_base;
	return (char *)p + (raddr - d->region_base);
}

/* Copy (or copy and reduce) a rendezvous message with process_vm_readv. */
static cb_status_t shm_cma(struct cb_tp_ep *ep, struct cb_tp_req *req,
                           uint64_t raddr, size_t bytes)
{
	const struct cb_tp_reduce *red = req->priv.ptr[R_RED];
	char *dst = req->priv.ptr[R_BUF];
	const char *src = req->priv.ptr[R_SRC];
	size_t piece =
	        red ? SHM_BOUNCE_BYTES / red->elem_bytes * red->elem_bytes
	            : bytes;

	for (size_t done = 0; done < bytes;) {
		size_t n = bytes - done < piece ? bytes - done : piece;
		struct iovec l = { red ? (void *)ep->ctx->bounce : dst + done,
			           n };
		struct iovec r = { (void *)(uintptr_t)(raddr + done), n };
		ssize_t got = process_vm_readv(ep->pid, &l, 1, &r, 1, 0);
		if (got <= 0)
			return shm_recv_fail(ep, CB_ERR_PEER, "copying from",
			                     (unsigned long long)errno, 0);
		if (red) {
			/* Whole elements only; a short read is re-read. */
			got -= got % (ssize_t)red->elem_bytes;
			red->fn(red->dtype, red->op, dst + done, src + done,
			        ep->ctx->bounce, (size_t)got / red->elem_bytes);
		}
		done += (size_t)got;
	}
	return CB_OK;
}

static int shm_recv_progress(struct cb_tp_ep *ep, cb_status_t *st)
{
	int moved = 0;

	while (ep->rq_head) {
		struct cb_tp_req *req = ep->rq_head;
		struct shm_slot *s = &ep->rx->slots[ep->rx_seq % SHM_SLOTS];

		if (atomic_load_explicit(&s->seq, memory_order_acquire) !=
		    ep->rx_seq + 1)
			break;
		moved = 1;
		if (!req->priv.u64[R_STARTED]) {
			if (s->tag != req->tag) {
				*st = shm_recv_fail(ep, CB_ERR_PROTO, NULL,
				                    s->tag, req->tag);
				return moved;
			}
			if (s->bytes > req->priv.u64[R_CAP]) {
				*st = shm_recv_fail(ep, CB_ERR_TRUNCATE, NULL,
				                    s->bytes,
				                    req->priv.u64[R_CAP]);
				return moved;
			}
			req->priv.u64[R_STARTED] = 1;
			req->bytes = s->bytes;
		}
		char *dst = req->priv.ptr[R_BUF];
		const struct cb_tp_reduce *red = req->priv.ptr[R_RED];
		if (s->kind == KIND_RNDV) {
			struct shm_rndv d;
			memcpy(&d, s->data, sizeof(d));
			const char *peer =
			        shm_peer_view(ep, &d, s->addr, s->bytes);
			if (peer && red)
				red->fn(red->dtype, red->op, dst,
				        req->priv.ptr[R_SRC], peer,
				        s->bytes / red->elem_bytes);
			else if (peer)
				memcpy(dst, peer, s->bytes);
			else if ((*st = shm_cma(ep, req, s->addr, s->bytes)))
				return moved;
			req->priv.u64[R_OFF] = s->bytes;
			ep->rx_seq++;
			atomic_store_explicit(&ep->rx->consumed, ep->rx_seq,
			                      memory_order_release);
			atomic_fetch_add_explicit(&ep->rx->rndv_done, 1,
			                          memory_order_release);
		} else {
			if (red)
				red->fn(red->dtype, red->op, dst + s->addr,
				        (const char *)req->priv.ptr[R_SRC] +
				                s->addr,
				        s->data,
				        s->frag_bytes / red->elem_bytes);
			else
				memcpy(dst + s->addr, s->data, s->frag_bytes);
			req->priv.u64[R_OFF] += s->frag_bytes;
			ep->rx_seq++;
			atomic_store_explicit(&ep->rx->consumed, ep->rx_seq,
			                      memory_order_release);
		}
		if (req->priv.u64[R_OFF] == req->bytes) {
			req->priv.u64[R_DONE] = 1;
			q_pop(&ep->rq_head, &ep->rq_tail);
		}
	}
	return moved;
}

static cb_status_t shm_progress(struct cb_tp_ctx *ctx)
{
	int moved = 0;

	for (int p = 0; p < ctx->host->world; p++) {
		struct cb_tp_ep *ep = ctx->eps[p];
		cb_status_t st = CB_OK;

		if (!ep)
			continue;
		if (ep->err)
			return ep->err;
		if (ep->sq_head)
			moved |= shm_send_progress(ep);
		if (ep->rq_head)
			moved |= shm_recv_progress(ep, &st);
		if (st)
			return st;
	}
	return moved ? CB_OK : CB_AGAIN;
}

const struct cb_tp_ops cb_tp_shm = {
	.abi = CB_TP_ABI,
	.size = sizeof(struct cb_tp_ops),
	.name = "shm",
	.description = "shared memory on one host: cache-line slots, "
	               "single-copy (CMA) for large messages",
	.caps = CB_TP_CAP_HOST_MEM | CB_TP_CAP_SAME_HOST,
	.query = NULL, /* POSIX shared memory is always there */
	.open = shm_open_ctx,
	.close = shm_close,
	.address = shm_address,
	.ep_connect = shm_ep_connect,
	.ep_test = shm_ep_test,
	.ep_close = shm_ep_close,
	.mem_reg = NULL,
	.mem_dereg = NULL,
	.isend = shm_isend,
	.irecv = shm_irecv,
	.test = shm_test,
	.progress = shm_progress,
	.put = NULL,
	.notify_poll = NULL,
	.peer_map = NULL,
	.mem_alloc = shm_mem_alloc,
	.mem_free = shm_mem_free,
	.irecv_reduce = shm_irecv_reduce,
};
