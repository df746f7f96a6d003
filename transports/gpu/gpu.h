/* SPDX-License-Identifier: MIT */
/*
 * transports/gpu/gpu.h - the gpu transport's internals, shared by its
 * files: the driver table (gpu_cuda.c), set-up and connections (gpu.c),
 * memory (gpu_mem.c) and the data path (gpu_data.c).  The design is in
 * gpu.c's opening comment.
 */
#ifndef CB_TRANSPORTS_GPU_H
#define CB_TRANSPORTS_GPU_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include <cuda.h> /* types and prototypes only: nothing is linked */

#include <collbench/transport.h>

#include "transports/lpeer.h"

#define GPU_HIDDEN __attribute__((visibility("hidden")))

/* ---- the driver, loaded with dlopen (gpu_cuda.c) ---- */

/*
 * Every driver entry point the transport calls: X(member, function,
 * required).  The member's type is the prototype cuda.h declares, and the
 * symbol looked up is the name cuda.h maps the function to (cuMemAlloc is
 * cuMemAlloc_v2), so the table cannot disagree with the header.
 */
#define GPU_CU_SYMS(X)                                                         \
	X(Init, cuInit, 1)                                                     \
	X(DriverGetVersion, cuDriverGetVersion, 1)                             \
	X(GetErrorString, cuGetErrorString, 1)                                 \
	X(GetErrorName, cuGetErrorName, 1)                                     \
	X(DeviceGetCount, cuDeviceGetCount, 1)                                 \
	X(DeviceGet, cuDeviceGet, 1)                                           \
	X(DeviceGetName, cuDeviceGetName, 1)                                   \
	X(DeviceGetAttribute, cuDeviceGetAttribute, 1)                         \
	X(DeviceGetPCIBusId, cuDeviceGetPCIBusId, 1)                           \
	X(DeviceTotalMem, cuDeviceTotalMem, 1)                                 \
	X(DevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, 1)                 \
	X(DevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease, 1)               \
	X(CtxSetCurrent, cuCtxSetCurrent, 1)                                   \
	X(ModuleLoadData, cuModuleLoadData, 1)                                 \
	X(ModuleUnload, cuModuleUnload, 1)                                     \
	X(ModuleGetFunction, cuModuleGetFunction, 1)                           \
	X(LaunchKernel, cuLaunchKernel, 1)                                     \
	X(StreamCreate, cuStreamCreate, 1)                                     \
	X(StreamDestroy, cuStreamDestroy, 1)                                   \
	X(StreamSynchronize, cuStreamSynchronize, 1)                           \
	X(EventCreate, cuEventCreate, 1)                                       \
	X(EventDestroy, cuEventDestroy, 1)                                     \
	X(EventRecord, cuEventRecord, 1)                                       \
	X(EventQuery, cuEventQuery, 1)                                         \
	X(MemAlloc, cuMemAlloc, 1)                                             \
	X(MemFree, cuMemFree, 1)                                               \
	X(MemGetAddressRange, cuMemGetAddressRange, 1)                         \
	X(MemcpyAsync, cuMemcpyAsync, 1)                                       \
	X(MemHostRegister, cuMemHostRegister, 1)                               \
	X(MemHostUnregister, cuMemHostUnregister, 1)                           \
	X(PointerGetAttribute, cuPointerGetAttribute, 1)                       \
	X(IpcGetMemHandle, cuIpcGetMemHandle, 1)                               \
	X(IpcOpenMemHandle, cuIpcOpenMemHandle, 1)                             \
	X(IpcCloseMemHandle, cuIpcCloseMemHandle, 1)                           \
	X(MemGetHandleForAddressRange, cuMemGetHandleForAddressRange, 0)

struct gpu_cu {
	void *lib;
#define GPU_CU_MEMBER(m, fn, req) __typeof__(fn) *m;
	GPU_CU_SYMS(GPU_CU_MEMBER)
#undef GPU_CU_MEMBER
};

/* Load the driver: COLLBENCH_GPU_LIBCUDA (option "gpu-libcuda": another
 * libcuda, or the tests' stand-in), else libcuda.so.1.  CB_OK, or
 * CB_ERR_UNAVAILABLE with one line in @why naming what is missing. */
GPU_HIDDEN cb_status_t gpu_cu_load(const char *path, struct gpu_cu *cu,
                                   char *why, size_t why_bytes);
GPU_HIDDEN void gpu_cu_unload(struct gpu_cu *cu);
/* "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)" */
GPU_HIDDEN void gpu_cu_err(const struct gpu_cu *cu, CUresult r, char *buf,
                           size_t bytes);

/* The kernels' names, by datatype and op, and the copy kernel's: the
 * dispatch table (NULL for a pair outside the enums). */
GPU_HIDDEN const char *gpu_kernel_name(enum cb_dtype dt, enum cb_op op);
GPU_HIDDEN const char *gpu_copy_kernel_name(void);
/* The fatbin the build embedded, and its size. */
GPU_HIDDEN extern const unsigned char gpu_fatbin[];
GPU_HIDDEN extern const size_t gpu_fatbin_bytes;

/* What the probe (a child process: CUDA must not be initialized in the
 * parent of the forked ranks) found. */
#define GPU_PROBE_DEVS 16
struct gpu_probe {
	int status; /* CB_OK or CB_ERR_UNAVAILABLE */
	char why[200];
	int driver_version;
	int ndev;
	struct {
		char name[64];
		char pci[16];
		uint64_t mem_bytes;
		int sms, cc_major, cc_minor;
	} dev[GPU_PROBE_DEVS];
};
GPU_HIDDEN void gpu_probe(const char *libcuda, struct gpu_probe *p);

/* ---- the control channel between the local ranks (gpu.c) ---- */

#define GPU_MAGIC      0x434247505530303dull /* "CBGPU00=" */
#define GPU_SLOTS      32u
#define GPU_SLOT_BYTES 2048u
#define GPU_DATA_BYTES (GPU_SLOT_BYTES - sizeof(struct lring_hdr))
#define GPU_EP_EVENTS  64u  /* copies, reductions and puts in flight per peer */
#define GPU_LOC_EVENTS 256u /* local operations in flight */
#define GPU_IMPORTS    32u  /* peers' regions kept mapped, per peer */

_Static_assert((GPU_SLOTS & (GPU_SLOTS - 1)) == 0, "slots: a power of two");

/*
 * The slots (transports/lpeer.h, shm's): EAGER fragments of host memory;
 * SINGLE, an RTS: a device buffer the receiver copies (or reduces) from
 * directly, the slot carrying its struct gpu_export; a put's NOTIFY.
 */

/*
 * A device region as a peer reaches it (an RTS's payload, and mem_export's
 * blob): the owner's allocation (its IPC handle, base and size) and the
 * range meant.  The receiver keeps the mapping per (peer, handle).
 */
struct gpu_export {
	uint64_t magic;
	int32_t pid, rank;
	uint64_t alloc_base, alloc_bytes; /* the owner's allocation */
	uint64_t base, bytes;             /* the range */
	CUipcMemHandle handle;
};

/* The context's address: where its segment is, and its GPU. */
struct gpu_addr {
	struct lp_addr lp; /* own: the device's ordinal */
	uint64_t seg_bytes;
	char pci[16];
};

/* ---- memory (gpu_mem.c) ---- */

/* A registration: a device allocation of ours (exportable), or pinned host
 * memory (cuMemHostRegister). */
struct cb_tp_mr {
	int kind;               /* CB_MEM_* */
	int pinned;             /* host: registered with the driver here */
	CUdeviceptr alloc_base; /* device: the whole allocation */
	size_t alloc_bytes;
	CUipcMemHandle handle;
	int have_handle;
	void *base;
	size_t bytes;
};

/* A peer's allocation mapped here. */
struct gpu_import {
	CUdeviceptr base; /* here; 0: a free entry */
	CUipcMemHandle handle;
	uint64_t rbase, bytes; /* at the owner */
	uint64_t last_use;
	int refs; /* mem_import handles on it */
};

/* An imported range (struct cb_tp_rmem). */
struct cb_tp_rmem {
	struct gpu_import *imp;
	CUdeviceptr local;
	uint64_t bytes;
};

/* ---- contexts, endpoints, requests ---- */

/* An endpoint: the slot rings' (transports/lpeer.h), then the GPU's. */
struct cb_tp_ep {
	struct lp_ep lp;
	struct cb_tp_ctx *ctx;
	char pci[16]; /* the peer's GPU */
	CUstream stream;
	CUevent ev[GPU_EP_EVENTS];
	uint16_t ev_free[GPU_EP_EVENTS];
	int nev_free;
	struct cb_tp_req *fq_head, *fq_tail; /* receives copying */
	struct gpu_import imp[GPU_IMPORTS];
	uint64_t use_clock;
};

_Static_assert(offsetof(struct cb_tp_ep, lp) == 0,
               "lp_tp() and lp_of(): the endpoint is its struct lp_ep");

/* How a device message is moved: the copy engine (cuMemcpyAsync) or SMs
 * (the copy kernel's loads and stores). */
enum { GPU_COPY_CE = 0, GPU_COPY_KERNEL = 1 };

struct cb_tp_ctx {
	struct lp_ctx lp;
	const struct cb_tp_host *host;
	struct gpu_cu cu;
	CUdevice dev;
	int dev_index; /* the driver's ordinal */
	int pci_index; /* its place by PCI bus id (nvidia-smi's number) */
	char dev_name[64], pci[16];
	int sms;
	CUcontext cuctx;
	CUmodule mod;
	CUfunction red[CB_DT_COUNT][CB_OP_COUNT], copy;
	int copy_mode;
	CUstream lstream; /* local copies and reductions */
	CUevent lev[GPU_LOC_EVENTS];
	uint16_t lev_free[GPU_LOC_EVENTS];
	int nlev_free;
	int lev_seq_busy; /* debugging aid: local events in flight */
	struct gpu_addr addr;
	struct cb_tp_stats stats;
	char bounce[GPU_DATA_BYTES]; /* an eager fragment on its way to the
	                              * device */
};

/* A request's state: transports/lpeer.h's; R_EV the event of a put or of
 * a receive's copy.  A receive's flag: its destination is device memory. */
#define R_EV R_OWN
enum { RECV_DEV = 16 };
#define R_NOEV UINT64_MAX

/*
 * Events come from fixed pools (made at open and ep_create, outside timed
 * regions): an index is taken when an operation is queued and given back
 * when its completion has been seen.  -1: none free (the caller says
 * CB_AGAIN and progress frees some).
 */
static inline int gpu_ev_take(uint16_t *free_list, int *nfree)
{
	return *nfree ? free_list[--*nfree] : -1;
}

static inline void gpu_ev_give(uint16_t *free_list, int *nfree, int i)
{
	free_list[(*nfree)++] = (uint16_t)i;
}

/* gpu_cuda.c: which driver ordinal to use.  @pci: the driver's devices'
 * PCI bus ids, by ordinal; @hint: the rank's GPU as the topology numbers
 * them (by PCI bus id, as nvidia-smi does), or -1: local rank @local,
 * round-robin.  Returns the ordinal, or -1 with a line in @why. */
GPU_HIDDEN int gpu_pick_device(const char (*pci)[16], int n, int hint,
                               int local, char *why, size_t why_bytes);

/* Record a driver call's failure: "gpu: @what: " and the driver's words
 * (out of memory: CB_ERR_NOMEM). */
static inline cb_status_t gpu_cu_fail(struct cb_tp_ctx *ctx, CUresult r,
                                      const char *what)
{
	char err[200];

	gpu_cu_err(&ctx->cu, r, err, sizeof(err));
	return ctx->host->fail(ctx->host,
	                       r == CUDA_ERROR_OUT_OF_MEMORY ? CB_ERR_NOMEM
	                                                     : CB_ERR_SYS,
	                       "gpu: %s: %s", what, err);
}

/* gpu_mem.c: memory, below the data path (gpu_data.c) and set-up (gpu.c,
 * the ops table, on top) */
GPU_HIDDEN cb_status_t gpu_mem_alloc(struct cb_tp_ctx *ctx, size_t bytes,
                                     enum cb_mem_kind kind, int device,
                                     void **buf);
GPU_HIDDEN void gpu_mem_free(struct cb_tp_ctx *ctx, void *buf, size_t bytes);
GPU_HIDDEN cb_status_t gpu_mem_reg(struct cb_tp_ctx *ctx,
                                   const struct cb_tp_mem *mem,
                                   struct cb_tp_mr **mr);
GPU_HIDDEN void gpu_mem_dereg(struct cb_tp_ctx *ctx, struct cb_tp_mr *mr);
GPU_HIDDEN cb_status_t gpu_mem_export(struct cb_tp_ctx *ctx,
                                      const struct cb_tp_mem *mem, void *blob,
                                      size_t *bytes);
GPU_HIDDEN cb_status_t gpu_mem_import(struct cb_tp_ep *ep, const void *blob,
                                      size_t bytes, struct cb_tp_rmem **rmem,
                                      void **local);
GPU_HIDDEN void gpu_mem_unimport(struct cb_tp_ep *ep, struct cb_tp_rmem *rmem);
GPU_HIDDEN cb_status_t gpu_mem_dmabuf(struct cb_tp_ctx *ctx, const void *base,
                                      size_t bytes, int *fd, uint64_t *offset);
GPU_HIDDEN cb_status_t gpu_mem_copy(struct cb_tp_ctx *ctx, void *dst,
                                    const void *src, size_t bytes,
                                    struct cb_tp_req *req);
GPU_HIDDEN cb_status_t gpu_mem_reduce(struct cb_tp_ctx *ctx, void *dst,
                                      const void *a, const void *b,
                                      size_t count,
                                      const struct cb_tp_reduce *red,
                                      struct cb_tp_req *req);
GPU_HIDDEN cb_status_t gpu_local_test(struct cb_tp_ctx *ctx,
                                      struct cb_tp_req *req);
/* The export of the region @mr, range [@base, @base + @bytes). */
GPU_HIDDEN void gpu_export_of(struct cb_tp_ctx *ctx, const struct cb_tp_mr *mr,
                              uint64_t base, uint64_t bytes,
                              struct gpu_export *x);
/* A peer's allocation mapped here (mapping it the first time, evicting
 * the least recently used unreferenced one when the cache is full). */
GPU_HIDDEN cb_status_t gpu_import_get(struct cb_tp_ep *ep,
                                      const struct gpu_export *x,
                                      struct gpu_import **out);
GPU_HIDDEN void gpu_imports_drop(struct cb_tp_ep *ep);
/* Whether @x describes a range of one of the peer's allocations. */
GPU_HIDDEN int gpu_export_ok(const struct cb_tp_ep *ep,
                             const struct gpu_export *x);
/* Queue a copy (the copy engine, or the copy kernel) or a reduction on
 * @stream. */
GPU_HIDDEN cb_status_t gpu_launch_copy(struct cb_tp_ctx *ctx, CUstream stream,
                                       int mode, CUdeviceptr dst,
                                       CUdeviceptr src, size_t bytes);
GPU_HIDDEN cb_status_t gpu_launch_reduce(struct cb_tp_ctx *ctx, CUstream stream,
                                         const struct cb_tp_reduce *red,
                                         CUdeviceptr dst, CUdeviceptr a,
                                         CUdeviceptr b, size_t count);

/* gpu_data.c: gpu_isend, _irecv, _test, _progress, _put, _notify_poll,
 * _irecv_reduce */
TPU_OPS_MSG(GPU_HIDDEN, gpu);
TPU_OPS_PUT(GPU_HIDDEN, gpu);
GPU_HIDDEN TPU_OP(irecv_reduce) gpu_irecv_reduce;

#endif
