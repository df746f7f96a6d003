/* SPDX-License-Identifier: MIT */
/*
 * transports/shm.c - shared memory between the ranks of one host: set-up,
 * connections, memory.  The data path is in shm_data.c.
 *
 * Every rank owns one shared segment holding one inbound channel per local
 * peer (so the memory a rank polls is its own, first touched by itself:
 * NUMA-local to the receiver, as NCCL does).  A channel is a ring of 16 slots
 * of 4 KiB written by exactly one sender:
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
 * The segment and every buffer from mem_alloc() are memfds: a peer maps them
 * through /proc/PID/fd/FD.  Nothing is named in /dev/shm, so nothing is left
 * behind however a rank dies.
 *
 * Messages up to --shm-rndv-bytes (default 16 KiB) are copied through slots,
 * fragment by fragment (pipelined).  Larger ones are single-copy: the sender
 * posts a description of its buffer - the export of its registration, see
 * below - and the receiver reads straight from the sender's memory, then
 * bumps a done counter that completes the send.  It reads
 *  - with plain loads, when the buffer came from mem_alloc(): the receiver
 *    maps the sender's memfd once (COLLBENCH_SHM_MAP=0 turns this off);
 *    irecv_reduce() then reduces straight out of the peer's memory: one pass
 *    instead of copy-then-reduce;
 *  - else with process_vm_readv (CMA), in pieces through a small bounce
 *    buffer when it has to reduce.
 * Where CMA is refused (ptrace policy, seccomp), each pair finds out at
 * connect time and falls back to slots; COLLBENCH_SHM_CMA=0 forces that.
 *
 * Registration: mem_reg() of a mem_alloc() buffer returns its region (the
 * memfd); of anything else, NULL (CMA only).  mem_export() describes a
 * region as {pid, fd, range}; mem_import() maps it, so put() is a memcpy into
 * the peer's memory followed by a notification through the slots, in order
 * with the sends.
 *
 * A peer that dies cannot be seen here: the core's store notices and aborts
 * the job, and the core's deadline bounds every wait.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "transports/lseg.h"
#include "transports/shm.h"

static cb_status_t shm_parse_opts(const struct cb_tp_host *h,
                                  struct cb_tp_ctx *ctx)
{
	const char *cma = h->option(h, "shm-cma"),
	           *map = h->option(h, "shm-map");
	const char *rb = h->option(h, "shm-rndv-bytes");

	if ((cma && strcmp(cma, "0") && strcmp(cma, "1")) ||
	    (map && strcmp(map, "0") && strcmp(map, "1")))
		return h->fail(
		        h, CB_ERR_USAGE,
		        "shm: COLLBENCH_SHM_CMA and COLLBENCH_SHM_MAP take 0 "
		        "or 1, not '%s'",
		        cma && strcmp(cma, "0") && strcmp(cma, "1") ? cma
		                                                    : map);
	ctx->allow_cma = !(cma && !strcmp(cma, "0"));
	ctx->allow_map = !(map && !strcmp(map, "0"));
	ctx->rndv_bytes = 16u << 10;
	if (rb) {
		char *end;
		long long v = strtoll(rb, &end, 10);
		if (*end || v < 0 || end == rb)
			return h->fail(h, CB_ERR_USAGE,
			               "shm: rendezvous size '%s' is not a "
			               "byte count",
			               rb);
		ctx->rndv_bytes = (size_t)v;
	}
	return CB_OK;
}

static void shm_close(struct cb_tp_ctx *ctx);

static cb_status_t shm_open_ctx(const struct cb_tp_host *h,
                                struct cb_tp_ctx **out)
{
	struct cb_tp_ctx *ctx = calloc(1, sizeof(*ctx));
	cb_status_t st;

	if (!ctx)
		return h->fail(h, CB_ERR_NOMEM, "shm: out of memory");
	ctx->host = h;
	ctx->next_region_id = 1;
	if ((st = lp_open(&ctx->lp, h, "shm", SHM_MAGIC, SHM_SLOT_BYTES,
	                  SHM_SLOTS, &ctx->stats)) ||
	    (st = shm_parse_opts(h, ctx)))
		goto fail;
	if (!(ctx->bounce = aligned_alloc(4096, SHM_BOUNCE_BYTES))) {
		st = h->fail(h, CB_ERR_NOMEM, "shm: out of memory");
		goto fail;
	}
	if ((st = lp_segment(&ctx->lp, "collbench-shm", &ctx->addr.lp)))
		goto fail;
	ctx->addr.seg_addr = (uint64_t)(uintptr_t)ctx->lp.seg;
	ctx->addr.seg_bytes = ctx->lp.seg_bytes;
	*out = ctx;
	return CB_OK;
fail:
	shm_close(ctx);
	return st;
}

static void shm_ep_free(struct cb_tp_ep *ep)
{
	for (int i = 0; i < ep->nviews; i++)
		if (ep->views[i].id)
			munmap(ep->views[i].base, ep->views[i].bytes);
	free(ep);
}

static void shm_close(struct cb_tp_ctx *ctx)
{
	lp_close(&ctx->lp, shm_ep_free);
	while (ctx->regions) {
		struct cb_tp_mr *r = ctx->regions;
		ctx->regions = r->next;
		munmap(r->base, r->bytes);
		close(r->fd);
		free(r);
	}
	free(ctx->bounce);
	free(ctx);
}

static cb_status_t shm_address(struct cb_tp_ctx *ctx, void *blob, size_t *bytes)
{
	return lseg_address(&ctx->addr, sizeof(ctx->addr), blob, bytes);
}

static cb_status_t shm_ep_create(struct cb_tp_ctx *ctx, int peer,
                                 struct cb_tp_ep **out, void *blob,
                                 size_t *bytes)
{
	int fresh;
	cb_status_t st =
	        lp_ep_create(&ctx->lp, peer, "", sizeof(**out), out, &fresh);

	(void)blob;
	*bytes = 0;
	if (!st && fresh)
		(*out)->ctx = ctx;
	return st;
}

/* Can we copy out of process @pid's memory?  Tried once on its segment's
 * head (at @seg_addr there), where we know what to expect. */
static int shm_cma_probe(struct cb_tp_ep *ep, pid_t pid, uint64_t seg_addr)
{
	const struct cb_tp_host *h = ep->ctx->host;
	uint64_t magic = 0;
	struct iovec l = { &magic, sizeof(magic) };
	struct iovec r = { (void *)(uintptr_t)seg_addr, sizeof(magic) };

	if (!ep->ctx->allow_cma)
		return CMA_NO;
	if (process_vm_readv(pid, &l, 1, &r, 1, 0) == sizeof(magic) &&
	    magic == SHM_MAGIC)
		return CMA_YES;
	h->log(h, CB_TP_LOG_INFO,
	       "CMA (process_vm_readv) from rank %d refused: %s; messages "
	       "from it are copied through slots",
	       ep->lp.peer, strerror(errno));
	return CMA_NO;
}

static cb_status_t shm_ep_connect(struct cb_tp_ep *ep, const void *blob,
                                  size_t bytes, const void *pblob,
                                  size_t pbytes)
{
	struct shm_addr a;
	cb_status_t st = lp_ep_address(&ep->lp, blob, bytes, &a, sizeof(a));

	(void)pblob;
	(void)pbytes;
	if (st || ep->lp.peer_seg)
		return st;
	if ((st = lp_ep_attach(&ep->lp, "segment", &a.lp, a.seg_bytes)))
		return st;
	atomic_store_explicit(&ep->lp.rx->cma,
	                      (uint32_t)shm_cma_probe(ep, a.lp.pid, a.seg_addr),
	                      memory_order_release);
	lp_ep_attached(&ep->lp);
	return CB_OK;
}

static cb_status_t shm_ep_test(struct cb_tp_ep *ep)
{
	if (ep->lp.connected)
		return CB_OK;
	/* Connected once the peer has mapped our segment and told us
	 * whether it can read our memory. */
	if (!lp_ep_both_attached(&ep->lp))
		return CB_AGAIN;
	uint32_t cma =
	        atomic_load_explicit(&ep->lp.tx->cma, memory_order_acquire);
	if (cma == CMA_UNKNOWN)
		return CB_AGAIN;
	ep->cma = cma == CMA_YES;
	return lp_ep_up(&ep->lp);
}

static void shm_ep_close(struct cb_tp_ep *ep)
{
	(void)ep; /* freed with the context */
}

/* ---- memory ---- */

static cb_status_t shm_mem_alloc(struct cb_tp_ctx *ctx, size_t bytes,
                                 enum cb_mem_kind kind, int device, void **out)
{
	const struct cb_tp_host *h = ctx->host;
	struct cb_tp_mr *r;
	cb_status_t st;

	(void)device;
	if (kind != CB_MEM_HOST)
		return CB_ERR_UNSUPPORTED; /* the core asks the engine */
	if (!(r = calloc(1, sizeof(*r))))
		return h->fail(h, CB_ERR_NOMEM, "shm: out of memory");
	bytes = bytes ? (bytes + 4095) / 4096 * 4096 : 4096;
	if ((st = lseg_create(h, "shm", "collbench-buffer", bytes, &r->fd,
	                      &r->base))) {
		free(r);
		return st;
	}
	r->bytes = bytes;
	r->id = ctx->next_region_id++;
	r->next = ctx->regions;
	ctx->regions = r;
	*out = r->base;
	return CB_OK;
}

static void shm_mem_free(struct cb_tp_ctx *ctx, void *buf, size_t bytes)
{
	(void)bytes;
	for (struct cb_tp_mr **p = &ctx->regions; *p; p = &(*p)->next) {
		struct cb_tp_mr *r = *p;
		if (r->base != buf)
			continue;
		*p = r->next;
		munmap(r->base, r->bytes);
		close(r->fd);
		free(r);
		return;
	}
}

static cb_status_t shm_mem_reg(struct cb_tp_ctx *ctx,
                               const struct cb_tp_mem *mem,
                               struct cb_tp_mr **mr)
{
	const char *p = mem->base;

	if (mem->kind != CB_MEM_HOST)
		return ctx->host->fail(ctx->host, CB_ERR_UNSUPPORTED,
		                       "shm: cannot move GPU memory");
	*mr = NULL;
	for (struct cb_tp_mr *r = ctx->regions; r; r = r->next)
		if (p >= (char *)r->base &&
		    p + mem->bytes <= (char *)r->base + r->bytes)
			*mr = r;
	ctx->stats.registrations++;
	return CB_OK;
}

static void shm_mem_dereg(struct cb_tp_ctx *ctx, struct cb_tp_mr *mr)
{
	(void)ctx;
	(void)mr; /* the region lives until mem_free */
}

static cb_status_t shm_mem_export(struct cb_tp_ctx *ctx,
                                  const struct cb_tp_mem *mem, void *blob,
                                  size_t *bytes)
{
	const struct cb_tp_mr *r = mem->mr;
	struct shm_export x;

	if (!r)
		return ctx->host->fail(ctx->host, CB_ERR_UNSUPPORTED,
		                       "shm: only memory from mem_alloc can be "
		                       "exported");
	if (*bytes < sizeof(x))
		return CB_ERR_INVALID;
	x = (struct shm_export){ .magic = SHM_MAGIC,
		                 .pid = ctx->addr.lp.pid,
		                 .fd = r->fd,
		                 .id = r->id,
		                 .region_base = (uint64_t)(uintptr_t)r->base,
		                 .region_bytes = r->bytes,
		                 .base = (uint64_t)(uintptr_t)mem->base,
		                 .bytes = mem->bytes };
	memcpy(blob, &x, sizeof(x));
	*bytes = sizeof(x);
	return CB_OK;
}

static cb_status_t shm_mem_import(struct cb_tp_ep *ep, const void *blob,
                                  size_t bytes, struct cb_tp_rmem **out,
                                  void **local)
{
	const struct cb_tp_host *h = ep->ctx->host;
	struct shm_export x;
	struct cb_tp_rmem *rm;

	memcpy(&x, blob, bytes < sizeof(x) ? bytes : sizeof(x));
	if (bytes != sizeof(x) || x.magic != SHM_MAGIC || x.pid != ep->lp.pid ||
	    x.base < x.region_base ||
	    x.base + x.bytes > x.region_base + x.region_bytes)
		return h->fail(h, CB_ERR_PROTO,
		               "shm: rank %d's exported memory handle does not "
		               "parse",
		               ep->lp.peer);
	struct shm_view *v = shm_view_get(ep, &x);
	if (!v)
		return h->fail(h, CB_ERR_UNSUPPORTED,
		               "shm: cannot map rank %d's exported memory",
		               ep->lp.peer);
	if (!(rm = calloc(1, sizeof(*rm))))
		return h->fail(h, CB_ERR_NOMEM, "shm: out of memory");
	v->refs++;
	rm->view = v;
	rm->local = (char *)v->base + (x.base - x.region_base);
	rm->bytes = x.bytes;
	*out = rm;
	if (local)
		*local = rm->local;
	return CB_OK;
}

static void shm_mem_unimport(struct cb_tp_ep *ep, struct cb_tp_rmem *rm)
{
	(void)ep;
	if (!rm)
		return;
	rm->view->refs--;
	free(rm);
}

static cb_status_t shm_devices(struct cb_tp_dev *devs, int max, int *n)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);

	*n = 1;
	if (max < 1)
		return CB_OK;
	devs[0] = (struct cb_tp_dev){ .name = "shm",
		                      .link_layer = "memory",
		                      .state = "up",
		                      .max_inline = SHM_DATA_BYTES };
	snprintf(devs[0].detail, sizeof(devs[0].detail),
	         "%u slots of %u B per peer; %.1f GiB of memory", SHM_SLOTS,
	         SHM_SLOT_BYTES,
	         pages > 0 && psz > 0 ? (double)pages * psz / (1 << 30) : 0.0);
	return CB_OK;
}

TPU_STATS(shm)

CB_TP_DEFINE(shm) = {
	TPU_TABLE_ABI,
	.name = "shm",
	.description = "shared memory on one host: cache-line slots, "
	               "single-copy (mapped or CMA) for large messages",
	.caps = CB_TP_CAP_HOST_MEM | CB_TP_CAP_SAME_HOST | CB_TP_CAP_PUT |
	        CB_TP_CAP_MAP,
	.query = NULL, /* shared memory is always there */
	.devices = shm_devices,
	.open = shm_open_ctx,
	.close = shm_close,
	.address = shm_address,
	.ep_create = shm_ep_create,
	.ep_connect = shm_ep_connect,
	.ep_test = shm_ep_test,
	.ep_close = shm_ep_close,
	.mem_reg = shm_mem_reg,
	.mem_dereg = shm_mem_dereg,
	.isend = shm_isend,
	.irecv = shm_irecv,
	.test = shm_test,
	.progress = shm_progress,
	.mem_export = shm_mem_export,
	.mem_import = shm_mem_import,
	.mem_unimport = shm_mem_unimport,
	.put = shm_put,
	.notify_poll = shm_notify_poll,
	.mem_alloc = shm_mem_alloc,
	.mem_free = shm_mem_free,
	.irecv_reduce = shm_irecv_reduce,
	.idle_wait = NULL, /* polling is a load, not a system call */
	.stats = shm_stats,
	.counters = NULL,
};
