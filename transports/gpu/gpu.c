/* SPDX-License-Identifier: MIT */
/*
 * transports/gpu/gpu.c - GPU peer copy between the ranks of one host:
 * set-up, the driver context, connections, the header line.  Memory is in
 * gpu_mem.c, the data path in gpu_data.c, the driver table in gpu_cuda.c,
 * the kernels in gpu_kern.cu.
 *
 * Buffers live on the rank's GPU: the one the topology gave it (--gpu, or
 * local rank i on GPU i mod #GPUs, numbered by PCI bus id as nvidia-smi
 * does), mapped to the driver's ordinal by bus id.  Several ranks may share
 * one GPU (each its own context on it); the header says so.
 *
 * Messages.  A device buffer is never copied through the host: the sender
 * posts a request-to-send (RTS) naming its buffer - the allocation's CUDA
 * IPC handle, its id, the offset - into the receiver's control channel.
 * The receiver maps the sender's allocation once (cuIpcOpenMemHandle,
 * kept per peer and allocation, least recently used unmapped first) and
 * moves the bytes itself, on a stream of its own for that peer:
 *   - a receive: a copy, on the copy engine (cuMemcpyAsync; default) or
 *     as a load/store kernel (COLLBENCH_GPU_COPY=kernel) - both are built
 *     so that benchmarks/gpu-check.sh measures them side by side;
 *   - a receive-and-reduce: one kernel that reads the sender's mapped
 *     buffer and the local operand and writes the result (NCCL's fused
 *     way: one pass over memory instead of a copy, then a reduction).
 * It records an event behind the work and polls it in progress(): nothing
 * waits on the device.  When the event has completed it bumps a counter the
 * sender reads, which completes the send: the sender's buffer is free
 * again.  Host buffers (and zero-byte messages) go through the channel's
 * slots in fragments, as shm's eager path does.
 *
 * The control channel is shm's, with smaller slots (transports/lpeer.h,
 * the code both run): every rank owns a memfd segment with one inbound
 * ring of slots per local peer, written by that peer alone (sequence
 * numbers published with release stores, polled with acquire loads),
 * which peers map through /proc/PID/fd; nothing is named in /dev/shm.
 *
 * One-sided: mem_export gives the IPC handle of a device region, mem_import
 * maps it (a device address: kernels on this GPU load and store through
 * it), put copies into it on the peer's stream and, once its event has
 * completed, raises the notification through the slots, in order with the
 * sends.
 *
 * Local work for the core (mem_copy, mem_reduce) runs on one local stream
 * with events from a pool; the core polls them through local_test().  So
 * the algorithms' own copies and staged reductions never block either.
 *
 * Options (environment): COLLBENCH_GPU_COPY=ce|kernel (how messages are
 * copied), COLLBENCH_GPU_LIBCUDA=PATH (another driver library; the tests'
 * stand-in).  Ranks of other hosts: the core uses tcp (staged through
 * pinned host memory) or verbs (GPUDirect RDMA through host->gpu_dmabuf).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#include "transports/gpu/gpu.h"
#include "transports/lseg.h"

static const char *gpu_libcuda(void)
{
	return getenv("COLLBENCH_GPU_LIBCUDA");
}

/* ---- may it run here (a probe in a child: see gpu_cuda.c) ---- */

static struct gpu_probe probed;
static int probe_done;

static const struct gpu_probe *gpu_probed(void)
{
	if (!probe_done) {
		gpu_probe(gpu_libcuda(), &probed);
		probe_done = 1;
	}
	return &probed;
}

static cb_status_t gpu_query(char *why, size_t why_bytes)
{
	const struct gpu_probe *p = gpu_probed();

	if (p->status)
		snprintf(why, why_bytes, "%s", p->why);
	return p->status ? CB_ERR_UNAVAILABLE : CB_OK;
}

static cb_status_t gpu_devices(struct cb_tp_dev *devs, int max, int *n)
{
	const struct gpu_probe *p = gpu_probed();

	*n = p->status ? 0 : p->ndev;
	for (int i = 0; i < *n && i < max; i++) {
		devs[i] = (struct cb_tp_dev){ .link_layer = "CUDA",
			                      .state = "up",
			                      .gpu_mem = 1 };
		snprintf(devs[i].name, sizeof(devs[i].name), "cuda%d", i);
		snprintf(devs[i].detail, sizeof(devs[i].detail),
		         "%s, %s, %.1f GiB, %d SMs, compute %d.%d, driver "
		         "CUDA %d.%d",
		         p->dev[i].name, p->dev[i].pci,
		         (double)p->dev[i].mem_bytes / (1 << 30), p->dev[i].sms,
		         p->dev[i].cc_major, p->dev[i].cc_minor,
		         p->driver_version / 1000,
		         p->driver_version % 1000 / 10);
	}
	return CB_OK;
}

/* ---- the context ---- */

static cb_status_t gpu_parse_opts(const struct cb_tp_host *h,
                                  struct cb_tp_ctx *ctx)
{
	const char *m = h->option(h, "gpu-copy");

	ctx->copy_mode = GPU_COPY_CE;
	if (!m || !strcmp(m, "ce"))
		return CB_OK;
	if (!strcmp(m, "kernel")) {
		ctx->copy_mode = GPU_COPY_KERNEL;
		return CB_OK;
	}
	return h->fail(h, CB_ERR_USAGE,
	               "gpu: COLLBENCH_GPU_COPY takes ce (the copy engine) or "
	               "kernel (loads and stores), not '%s'",
	               m);
}

/* The driver, the device, its context, the kernels, the local stream. */
static cb_status_t gpu_open_device(struct cb_tp_ctx *ctx)
{
	const struct cb_tp_host *h = ctx->host;
	struct gpu_cu *cu = &ctx->cu;
	char why[256], pci[GPU_PROBE_DEVS][16];
	CUresult r;
	int n = 0;

	if (gpu_cu_load(gpu_libcuda(), cu, why, sizeof(why)))
		return h->fail(h, CB_ERR_UNAVAILABLE, "gpu: %s", why);
	if ((r = cu->Init(0)) != CUDA_SUCCESS)
		return gpu_cu_fail(ctx, r, "cuInit");
	if ((r = cu->DeviceGetCount(&n)) != CUDA_SUCCESS)
		return gpu_cu_fail(ctx, r, "cuDeviceGetCount");
	n = n < GPU_PROBE_DEVS ? n : GPU_PROBE_DEVS;
	memset(pci, 0, sizeof(pci));
	for (int i = 0; i < n; i++) {
		CUdevice d;
		if (cu->DeviceGet(&d, i) == CUDA_SUCCESS)
			cu->DeviceGetPCIBusId(pci[i], sizeof(pci[i]), d);
	}
	int local = ctx->lp.local_index[h->rank];
	ctx->dev_index = gpu_pick_device((const char(*)[16])pci, n, h->gpu,
	                                 local, why, sizeof(why));
	if (ctx->dev_index < 0)
		return h->fail(h,
		               h->gpu >= 0 ? CB_ERR_USAGE : CB_ERR_UNAVAILABLE,
		               "gpu: %s", why);
	if ((r = cu->DeviceGet(&ctx->dev, ctx->dev_index)) != CUDA_SUCCESS)
		return gpu_cu_fail(ctx, r, "cuDeviceGet");
	snprintf(ctx->pci, sizeof(ctx->pci), "%s", pci[ctx->dev_index]);
	/* its number as nvidia-smi and the topology count: by bus id */
	for (int i = 0; i < n; i++)
		ctx->pci_index += strcasecmp(pci[i], ctx->pci) < 0;
	cu->DeviceGetName(ctx->dev_name, sizeof(ctx->dev_name), ctx->dev);
	cu->DeviceGetAttribute(
	        &ctx->sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, ctx->dev);
	if (ctx->sms <= 0)
		ctx->sms = 1;
	if ((r = cu->DevicePrimaryCtxRetain(&ctx->cuctx, ctx->dev)) !=
	    CUDA_SUCCESS) {
		ctx->cuctx = NULL;
		return gpu_cu_fail(ctx, r,
		                   "cannot make a context on the GPU (another "
		                   "process may hold it in exclusive mode)");
	}
	if ((r = cu->CtxSetCurrent(ctx->cuctx)) != CUDA_SUCCESS)
		return gpu_cu_fail(ctx, r, "cuCtxSetCurrent");
	if ((r = cu->ModuleLoadData(&ctx->mod, gpu_fatbin)) != CUDA_SUCCESS) {
		ctx->mod = NULL;
		return gpu_cu_fail(ctx, r,
		                   "cannot load collbench's kernels (built for "
		                   "sm_80, sm_90 and compute_90 PTX)");
	}
	for (int d = 0; d < CB_DT_COUNT; d++)
		for (int o = 0; o < CB_OP_COUNT; o++) {
			const char *name = gpu_kernel_name(d, o);
			r = cu->ModuleGetFunction(&ctx->red[d][o], ctx->mod,
			                          name);
			if (r != CUDA_SUCCESS)
				return gpu_cu_fail(ctx, r, name);
		}
	r = cu->ModuleGetFunction(&ctx->copy, ctx->mod, gpu_copy_kernel_name());
	if (r != CUDA_SUCCESS)
		return gpu_cu_fail(ctx, r, gpu_copy_kernel_name());
	if ((r = cu->StreamCreate(&ctx->lstream, CU_STREAM_NON_BLOCKING)) !=
	    CUDA_SUCCESS) {
		ctx->lstream = NULL;
		return gpu_cu_fail(ctx, r, "cuStreamCreate");
	}
	for (unsigned i = 0; i < GPU_LOC_EVENTS; i++) {
		if ((r = cu->EventCreate(&ctx->lev[i],
		                         CU_EVENT_DISABLE_TIMING)) !=
		    CUDA_SUCCESS)
			return gpu_cu_fail(ctx, r, "cuEventCreate");
		gpu_ev_give(ctx->lev_free, &ctx->nlev_free, (int)i);
	}
	return CB_OK;
}

static cb_status_t gpu_segment(struct cb_tp_ctx *ctx)
{
	cb_status_t st = lp_segment(&ctx->lp, "collbench-gpu", &ctx->addr.lp);

	if (st)
		return st;
	ctx->addr.lp.own = ctx->dev_index;
	ctx->addr.seg_bytes = ctx->lp.seg_bytes;
	snprintf(ctx->addr.pci, sizeof(ctx->addr.pci), "%s", ctx->pci);
	return CB_OK;
}

static void gpu_close(struct cb_tp_ctx *ctx);

static cb_status_t gpu_open_ctx(const struct cb_tp_host *h,
                                struct cb_tp_ctx **out)
{
	struct cb_tp_ctx *ctx = calloc(1, sizeof(*ctx));
	cb_status_t st;

	if (!ctx)
		return h->fail(h, CB_ERR_NOMEM, "gpu: out of memory");
	ctx->host = h;
	if ((st = lp_open(&ctx->lp, h, "gpu", GPU_MAGIC, GPU_SLOT_BYTES,
	                  GPU_SLOTS, &ctx->stats)) ||
	    (st = gpu_parse_opts(h, ctx)) || (st = gpu_open_device(ctx)) ||
	    (st = gpu_segment(ctx)))
		goto fail;
	h->log(h, CB_TP_LOG_INFO,
	       "rank %d on GPU %d (%s, %s), copies on the %s", h->rank,
	       ctx->pci_index, ctx->dev_name, ctx->pci,
	       ctx->copy_mode == GPU_COPY_CE ? "copy engine" : "SMs");
	*out = ctx;
	return CB_OK;
fail:
	gpu_close(ctx);
	return st;
}

/* The events of @ev[@n] that were made (an endpoint's, or the context's
 * local ones). */
static void gpu_events_destroy(struct gpu_cu *cu, CUevent *ev, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (ev[i])
			cu->EventDestroy(ev[i]);
}

/* An endpoint's own (its mapping of the peer's segment: lp_close). */
static void gpu_ep_free(struct cb_tp_ep *ep)
{
	struct gpu_cu *cu = &ep->ctx->cu;

	if (ep->stream)
		cu->StreamSynchronize(ep->stream);
	gpu_imports_drop(ep);
	gpu_events_destroy(cu, ep->ev, GPU_EP_EVENTS);
	if (ep->stream)
		cu->StreamDestroy(ep->stream);
	ep->ctx->lp.eps[ep->lp.peer] = NULL;
	free(ep);
}

static void gpu_close(struct cb_tp_ctx *ctx)
{
	struct gpu_cu *cu = &ctx->cu;

	if (ctx->lstream)
		cu->StreamSynchronize(ctx->lstream);
	lp_close(&ctx->lp, gpu_ep_free);
	gpu_events_destroy(cu, ctx->lev, GPU_LOC_EVENTS);
	if (ctx->lstream)
		cu->StreamDestroy(ctx->lstream);
	if (ctx->mod)
		cu->ModuleUnload(ctx->mod);
	if (ctx->cuctx)
		cu->DevicePrimaryCtxRelease(ctx->dev);
	gpu_cu_unload(cu);
	free(ctx);
}

static cb_status_t gpu_address(struct cb_tp_ctx *ctx, void *blob, size_t *bytes)
{
	return lseg_address(&ctx->addr, sizeof(ctx->addr), blob, bytes);
}

/* ---- endpoints ---- */

static cb_status_t gpu_ep_create(struct cb_tp_ctx *ctx, int peer,
                                 struct cb_tp_ep **out, void *blob,
                                 size_t *bytes)
{
	struct cb_tp_ep *ep;
	CUresult r;
	int fresh;
	cb_status_t st = lp_ep_create(&ctx->lp, peer,
	                              ": GPU peer copy reaches ranks of one "
	                              "host (use --transport auto, which "
	                              "moves device memory between hosts "
	                              "over tcp)",
	                              sizeof(*ep), out, &fresh);

	(void)blob;
	*bytes = 0;
	if (st || !fresh)
		return st;
	ep = *out;
	ep->ctx = ctx;
	/* One stream per peer: copies from different peers overlap, those
	 * from one peer stay in order. */
	if ((r = ctx->cu.StreamCreate(&ep->stream, CU_STREAM_NON_BLOCKING)) !=
	    CUDA_SUCCESS) {
		ep->stream = NULL;
		gpu_ep_free(ep);
		return gpu_cu_fail(ctx, r, "cuStreamCreate");
	}
	for (unsigned i = 0; i < GPU_EP_EVENTS; i++) {
		if ((r = ctx->cu.EventCreate(&ep->ev[i],
		                             CU_EVENT_DISABLE_TIMING)) !=
		    CUDA_SUCCESS) {
			ep->ev[i] = NULL;
			gpu_ep_free(ep);
			return gpu_cu_fail(ctx, r, "cuEventCreate");
		}
		gpu_ev_give(ep->ev_free, &ep->nev_free, (int)i);
	}
	return CB_OK;
}

static cb_status_t gpu_ep_connect(struct cb_tp_ep *ep, const void *blob,
                                  size_t bytes, const void *pblob,
                                  size_t pbytes)
{
	struct gpu_addr a;
	cb_status_t st = lp_ep_address(&ep->lp, blob, bytes, &a, sizeof(a));

	(void)pblob;
	(void)pbytes;
	if (st || ep->lp.peer_seg)
		return st;
	snprintf(ep->pci, sizeof(ep->pci), "%.15s", a.pci);
	if ((st = lp_ep_attach(&ep->lp, "control segment", &a.lp, a.seg_bytes)))
		return st;
	lp_ep_attached(&ep->lp);
	return CB_OK;
}

static cb_status_t gpu_ep_test(struct cb_tp_ep *ep)
{
	if (ep->lp.connected)
		return CB_OK;
	if (!lp_ep_both_attached(&ep->lp))
		return CB_AGAIN;
	return lp_ep_up(&ep->lp);
}

static void gpu_ep_close(struct cb_tp_ep *ep)
{
	(void)ep; /* freed with the context */
}

/* ---- what the header says ---- */

static void gpu_describe(struct cb_tp_ctx *ctx, char *buf, size_t bytes)
{
	/* Ranks with the same line on one host share this GPU: the core
	 * groups them in the header. */
	snprintf(buf, bytes,
	         "GPU %d: %s (%s, CUDA device %d), copies on the %s, "
	         "reductions in kernels",
	         ctx->pci_index, ctx->dev_name, ctx->pci, ctx->dev_index,
	         ctx->copy_mode == GPU_COPY_CE ? "copy engine"
	                                       : "SMs (load/store kernel)");
}

TPU_STATS(gpu)

CB_TP_DEFINE(gpu) = {
	TPU_TABLE_ABI,
	.name = "gpu",
	.description = "GPU peer copy on one host: CUDA IPC, per-peer "
	               "streams, fused receive-and-reduce kernels",
	.caps = CB_TP_CAP_HOST_MEM | CB_TP_CAP_GPU_MEM | CB_TP_CAP_PUT |
	        CB_TP_CAP_MAP | CB_TP_CAP_SAME_HOST | CB_TP_CAP_HELPER_THR,
	.query = gpu_query,
	.devices = gpu_devices,
	.open = gpu_open_ctx,
	.close = gpu_close,
	.address = gpu_address,
	.ep_create = gpu_ep_create,
	.ep_connect = gpu_ep_connect,
	.ep_test = gpu_ep_test,
	.ep_close = gpu_ep_close,
	.mem_reg = gpu_mem_reg,
	.mem_dereg = gpu_mem_dereg,
	.isend = gpu_isend,
	.irecv = gpu_irecv,
	.test = gpu_test,
	.progress = gpu_progress,
	.mem_export = gpu_mem_export,
	.mem_import = gpu_mem_import,
	.mem_unimport = gpu_mem_unimport,
	.put = gpu_put,
	.notify_poll = gpu_notify_poll,
	.mem_alloc = gpu_mem_alloc,
	.mem_free = gpu_mem_free,
	.irecv_reduce = gpu_irecv_reduce,
	.idle_wait = NULL, /* polling is a load and an event query */
	.stats = gpu_stats,
	.counters = NULL,
	.mem_copy = gpu_mem_copy,
	.mem_reduce = gpu_mem_reduce,
	.local_test = gpu_local_test,
	.mem_dmabuf = gpu_mem_dmabuf,
	.describe = gpu_describe,
};
