/* SPDX-License-Identifier: MIT */
/*
 * transports/gpu/gpu_mem.c - the gpu transport's memory: device
 * allocations, registrations (an IPC handle per device allocation; host
 * memory pinned), export and import between local ranks, dma-bufs for
 * NICs, and the local engine the core queues copies and reductions on.
 *
 * A peer's allocation is identified by its IPC handle's bytes, not by its
 * address: an allocation freed and another made at the same address has a
 * different handle, so a stale mapping is never used for it.  Mappings are
 * kept per peer (GPU_IMPORTS of them; the least recently used one that no
 * import holds is closed first), because cuIpcOpenMemHandle costs far more
 * than a message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "transports/gpu/gpu.h"
#include "transports/gpu/gpu_kernels.h"

static inline CUdeviceptr dptr(const void *p)
{
	return (CUdeviceptr)(uintptr_t)p;
}

cb_status_t gpu_mem_alloc(struct cb_tp_ctx *ctx, size_t bytes,
                          enum cb_mem_kind kind, int device, void **buf)
{
	CUdeviceptr p;
	CUresult r;

	if (kind != CB_MEM_GPU)
		return CB_ERR_UNSUPPORTED; /* host memory: the core's */
	if (device >= 0 && device != ctx->dev_index)
		return ctx->host->fail(ctx->host, CB_ERR_UNSUPPORTED,
		                       "gpu: this rank drives GPU %d, not %d",
		                       ctx->dev_index, device);
	if ((r = ctx->cu.MemAlloc(&p, bytes ? bytes : 256)) != CUDA_SUCCESS) {
		char what[96];
		snprintf(what, sizeof(what),
		         "cannot allocate %zu bytes on GPU %d", bytes,
		         ctx->dev_index);
		return gpu_cu_fail(ctx, r, what);
	}
	*buf = (void *)(uintptr_t)p;
	return CB_OK;
}

void gpu_mem_free(struct cb_tp_ctx *ctx, void *buf, size_t bytes)
{
	(void)bytes;
	if (buf)
		ctx->cu.MemFree(dptr(buf));
}

cb_status_t gpu_mem_reg(struct cb_tp_ctx *ctx, const struct cb_tp_mem *mem,
                        struct cb_tp_mr **out)
{
	struct gpu_cu *cu = &ctx->cu;
	struct cb_tp_mr *mr = calloc(1, sizeof(*mr));
	CUresult r;

	if (!mr)
		return ctx->host->fail(ctx->host, CB_ERR_NOMEM,
		                       "gpu: out of memory");
	mr->kind = mem->kind;
	mr->base = mem->base;
	mr->bytes = mem->bytes;
	if (mem->kind == CB_MEM_GPU) {
		r = cu->MemGetAddressRange(&mr->alloc_base, &mr->alloc_bytes,
		                           dptr(mem->base));
		if (r != CUDA_SUCCESS) {
			free(mr);
			return gpu_cu_fail(ctx, r,
			                   "registering device memory this "
			                   "context does not know");
		}
		/* Peers need the handle; memory that cannot have one (not
		 * from cuMemAlloc) still moves, but only from here. */
		mr->have_handle =
		        cu->IpcGetMemHandle(&mr->handle, mr->alloc_base) ==
		        CUDA_SUCCESS;
	} else if (mem->bytes) {
		/* Pinned, so the core's staging copies are asynchronous DMA;
		 * memory pinned already (or that refuses) is used as it is. */
		mr->pinned = cu->MemHostRegister(mem->base, mem->bytes,
		                                 CU_MEMHOSTREGISTER_PORTABLE) ==
		             CUDA_SUCCESS;
	}
	ctx->stats.registrations++;
	*out = mr;
	return CB_OK;
}

void gpu_mem_dereg(struct cb_tp_ctx *ctx, struct cb_tp_mr *mr)
{
	if (!mr)
		return;
	if (mr->pinned)
		ctx->cu.MemHostUnregister(mr->base);
	free(mr);
}

void gpu_export_of(struct cb_tp_ctx *ctx, const struct cb_tp_mr *mr,
                   uint64_t base, uint64_t bytes, struct gpu_export *x)
{
	*x = (struct gpu_export){ .magic = GPU_MAGIC,
		                  .pid = ctx->addr.lp.pid,
		                  .rank = ctx->host->rank,
		                  .alloc_base = mr->alloc_base,
		                  .alloc_bytes = mr->alloc_bytes,
		                  .base = base,
		                  .bytes = bytes,
		                  .handle = mr->handle };
}

cb_status_t gpu_mem_export(struct cb_tp_ctx *ctx, const struct cb_tp_mem *mem,
                           void *blob, size_t *bytes)
{
	const struct cb_tp_mr *mr = mem->mr;
	struct gpu_export x;

	if (!mr || mr->kind != CB_MEM_GPU || !mr->have_handle)
		return ctx->host->fail(
		        ctx->host, CB_ERR_UNSUPPORTED,
		        "gpu: only device memory from cuMemAlloc "
		        "can be exported (host memory: shm)");
	if (*bytes < sizeof(x))
		return CB_ERR_INVALID;
	gpu_export_of(ctx, mr, (uint64_t)(uintptr_t)mem->base, mem->bytes, &x);
	memcpy(blob, &x, sizeof(x));
	*bytes = sizeof(x);
	return CB_OK;
}

cb_status_t gpu_import_get(struct cb_tp_ep *ep, const struct gpu_export *x,
                           struct gpu_import **out)
{
	struct cb_tp_ctx *ctx = ep->ctx;
	struct gpu_import *slot = NULL;
	CUdeviceptr p;
	CUresult r;

	ep->use_clock++;
	for (unsigned i = 0; i < GPU_IMPORTS; i++) {
		struct gpu_import *m = &ep->imp[i];
		if (m->base &&
		    !memcmp(&m->handle, &x->handle, sizeof(x->handle))) {
			m->last_use = ep->use_clock;
			*out = m;
			return CB_OK;
		}
		if (!m->base && !slot)
			slot = m;
	}
	if (!slot) {
		/* full: close the least recently used one nobody holds */
		for (unsigned i = 0; i < GPU_IMPORTS; i++) {
			struct gpu_import *m = &ep->imp[i];
			if (!m->refs && (!slot || m->last_use < slot->last_use))
				slot = m;
		}
		if (!slot)
			return ctx->host->fail(
			        ctx->host, CB_ERR_NOMEM,
			        "gpu: more than %u of rank %d's buffers "
			        "imported at once",
			        GPU_IMPORTS, ep->lp.peer);
		ctx->cu.IpcCloseMemHandle(slot->base);
		memset(slot, 0, sizeof(*slot));
	}
	r = ctx->cu.IpcOpenMemHandle(&p, x->handle,
	                             CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
	if (r != CUDA_SUCCESS) {
		char what[160];
		snprintf(
		        what, sizeof(what),
		        "cannot map rank %d's device memory (GPU %s) here (GPU "
		        "%s) with cuIpcOpenMemHandle",
		        ep->lp.peer, ep->pci, ctx->pci);
		return ep->lp.err = gpu_cu_fail(ctx, r, what);
	}
	*slot = (struct gpu_import){ .base = p,
		                     .handle = x->handle,
		                     .rbase = x->alloc_base,
		                     .bytes = x->alloc_bytes,
		                     .last_use = ep->use_clock };
	*out = slot;
	return CB_OK;
}

void gpu_imports_drop(struct cb_tp_ep *ep)
{
	for (unsigned i = 0; i < GPU_IMPORTS; i++)
		if (ep->imp[i].base)
			ep->ctx->cu.IpcCloseMemHandle(ep->imp[i].base);
	memset(ep->imp, 0, sizeof(ep->imp));
}

/* Does an export (a blob, or an RTS) describe a range of one allocation of
 * the peer's? */
int gpu_export_ok(const struct cb_tp_ep *ep, const struct gpu_export *x)
{
	return x->magic == GPU_MAGIC && x->pid == ep->lp.pid &&
	       x->rank == ep->lp.peer && x->base >= x->alloc_base &&
	       x->bytes <= x->alloc_bytes &&
	       x->base - x->alloc_base <= x->alloc_bytes - x->bytes;
}

cb_status_t gpu_mem_import(struct cb_tp_ep *ep, const void *blob, size_t bytes,
                           struct cb_tp_rmem **out, void **local)
{
	const struct cb_tp_host *h = ep->ctx->host;
	struct gpu_import *imp;
	struct cb_tp_rmem *rm;
	struct gpu_export x;
	cb_status_t st;

	memcpy(&x, blob, bytes < sizeof(x) ? bytes : sizeof(x));
	if (bytes != sizeof(x) || !gpu_export_ok(ep, &x))
		return h->fail(h, CB_ERR_PROTO,
		               "gpu: rank %d's exported memory handle does not "
		               "parse",
		               ep->lp.peer);
	if ((st = gpu_import_get(ep, &x, &imp)))
		return st;
	if (!(rm = calloc(1, sizeof(*rm))))
		return h->fail(h, CB_ERR_NOMEM, "gpu: out of memory");
	imp->refs++;
	rm->imp = imp;
	rm->local = imp->base + (x.base - x.alloc_base);
	rm->bytes = x.bytes;
	*out = rm;
	if (local)
		*local = (void *)(uintptr_t)rm->local;
	return CB_OK;
}

void gpu_mem_unimport(struct cb_tp_ep *ep, struct cb_tp_rmem *rm)
{
	(void)ep;
	if (!rm)
		return;
	rm->imp->refs--;
	free(rm);
}

cb_status_t gpu_mem_dmabuf(struct cb_tp_ctx *ctx, const void *base,
                           size_t bytes, int *fd, uint64_t *offset)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t page = pg > 0 ? (uint64_t)pg : 4096;
	uint64_t b = (uint64_t)(uintptr_t)base, lo = b & ~(page - 1);
	uint64_t hi = (b + bytes + page - 1) & ~(page - 1);
	static int said;
	int handle = -1;
	CUresult r;

	if (!ctx->cu.MemGetHandleForAddressRange)
		return CB_ERR_UNSUPPORTED;
	r = ctx->cu.MemGetHandleForAddressRange(
	        &handle, (CUdeviceptr)lo, hi - lo,
	        CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
	if (r != CUDA_SUCCESS || handle < 0) {
		if (!said++) {
			char err[160];
			gpu_cu_err(&ctx->cu, r, err, sizeof(err));
			ctx->host->log(
			        ctx->host, CB_TP_LOG_INFO,
			        "no dma-buf for device memory (%s): NICs "
			        "stage it through host memory",
			        err);
		}
		return CB_ERR_UNSUPPORTED;
	}
	*fd = handle;
	*offset = b - lo;
	return CB_OK;
}

/* ---- launching ---- */

/* Blocks for @units 16-byte vectors: enough to cover them once with four
 * per thread, at most 8 per SM (the loops stride over the rest). */
static unsigned grid_for(const struct cb_tp_ctx *ctx, size_t units)
{
	size_t per = (size_t)GPU_THREADS * 4;
	size_t g = (units + per - 1) / per;
	size_t cap = (size_t)ctx->sms * 8;

	return (unsigned)(g < 1 ? 1 : g > cap ? cap : g);
}

cb_status_t gpu_launch_copy(struct cb_tp_ctx *ctx, CUstream stream, int mode,
                            CUdeviceptr dst, CUdeviceptr src, size_t bytes)
{
	CUresult r;

	if (!bytes)
		return CB_OK;
	if (mode == GPU_COPY_CE) {
		r = ctx->cu.MemcpyAsync(dst, src, bytes, stream);
		return r == CUDA_SUCCESS ? CB_OK
		                         : gpu_cu_fail(ctx, r, "cuMemcpyAsync");
	}
	void *args[] = { &dst, &src, &bytes };
	r = ctx->cu.LaunchKernel(ctx->copy, grid_for(ctx, bytes / 16 + 1), 1, 1,
	                         GPU_THREADS, 1, 1, 0, stream, args, NULL);
	return r == CUDA_SUCCESS
	               ? CB_OK
	               : gpu_cu_fail(ctx, r, "launching the copy kernel");
}

cb_status_t gpu_launch_reduce(struct cb_tp_ctx *ctx, CUstream stream,
                              const struct cb_tp_reduce *red, CUdeviceptr dst,
                              CUdeviceptr a, CUdeviceptr b, size_t count)
{
	CUresult r;

	if ((unsigned)red->dtype >= CB_DT_COUNT ||
	    (unsigned)red->op >= CB_OP_COUNT)
		return ctx->host->fail(ctx->host, CB_ERR_INVALID,
		                       "gpu: no kernel for datatype %d op %d",
		                       (int)red->dtype, (int)red->op);
	if (!count)
		return CB_OK;
	void *args[] = { &dst, &a, &b, &count };
	r = ctx->cu.LaunchKernel(
	        ctx->red[red->dtype][red->op],
	        grid_for(ctx, count * red->elem_bytes / 16 + 1), 1, 1,
	        GPU_THREADS, 1, 1, 0, stream, args, NULL);
	return r == CUDA_SUCCESS
	               ? CB_OK
	               : gpu_cu_fail(ctx, r,
	                             gpu_kernel_name(red->dtype, red->op));
}

/* ---- the local engine (the core's copies and reductions) ---- */

/* Record the local operation just queued on an event of the pool, or wait
 * for it (@req NULL); @launched: how queueing it went (failed: the event
 * goes back, the failure is returned). */
static cb_status_t local_finish(struct cb_tp_ctx *ctx, int ev,
                                struct cb_tp_req *req, cb_status_t launched)
{
	CUresult r;

	if (launched) {
		if (ev >= 0)
			gpu_ev_give(ctx->lev_free, &ctx->nlev_free, ev);
		return launched;
	}
	if (!req) {
		r = ctx->cu.StreamSynchronize(ctx->lstream);
		return r == CUDA_SUCCESS
		               ? CB_OK
		               : gpu_cu_fail(ctx, r, "waiting for the GPU");
	}
	if ((r = ctx->cu.EventRecord(ctx->lev[ev], ctx->lstream)) !=
	    CUDA_SUCCESS) {
		gpu_ev_give(ctx->lev_free, &ctx->nlev_free, ev);
		return gpu_cu_fail(ctx, r, "cuEventRecord");
	}
	req->priv.u64[0] = (uint64_t)ev;
	ctx->lev_seq_busy++;
	return CB_OK;
}

cb_status_t gpu_mem_copy(struct cb_tp_ctx *ctx, void *dst, const void *src,
                         size_t bytes, struct cb_tp_req *req)
{
	int ev = -1;

	if (req && (ev = gpu_ev_take(ctx->lev_free, &ctx->nlev_free)) < 0)
		return CB_AGAIN;
	/* the copy engine always: either side may be host memory */
	return local_finish(ctx, ev, req,
	                    gpu_launch_copy(ctx, ctx->lstream, GPU_COPY_CE,
	                                    dptr(dst), dptr(src), bytes));
}

cb_status_t gpu_mem_reduce(struct cb_tp_ctx *ctx, void *dst, const void *a,
                           const void *b, size_t count,
                           const struct cb_tp_reduce *red,
                           struct cb_tp_req *req)
{
	int ev = -1;

	if (req && (ev = gpu_ev_take(ctx->lev_free, &ctx->nlev_free)) < 0)
		return CB_AGAIN;
	return local_finish(ctx, ev, req,
	                    gpu_launch_reduce(ctx, ctx->lstream, red, dptr(dst),
	                                      dptr(a), dptr(b), count));
}

cb_status_t gpu_local_test(struct cb_tp_ctx *ctx, struct cb_tp_req *req)
{
	uint64_t ev = req->priv.u64[0];
	CUresult r;

	if (ev == R_NOEV)
		return CB_OK;
	if (ev >= GPU_LOC_EVENTS)
		return ctx->host->fail(ctx->host, CB_ERR_INVALID,
		                       "gpu: a local request that was never "
		                       "posted");
	r = ctx->cu.EventQuery(ctx->lev[ev]);
	if (r == CUDA_ERROR_NOT_READY)
		return CB_AGAIN;
	gpu_ev_give(ctx->lev_free, &ctx->nlev_free, (int)ev);
	req->priv.u64[0] = R_NOEV;
	ctx->lev_seq_busy--;
	return r == CUDA_SUCCESS ? CB_OK
	                         : gpu_cu_fail(ctx, r, "a copy or reduction");
}
