/* SPDX-License-Identifier: MIT */
/*
 * tests/gpu/fakecuda.c - a stand-in for the CUDA driver (libcuda.so.1), for
 * testing the gpu transport's host side on machines without a GPU: the
 * module loads it through COLLBENCH_GPU_LIBCUDA.  It runs no GPU code and
 * measures nothing; what it checks is that the host logic around the
 * device is right.  It is strict where the real driver is, and stricter
 * where that catches bugs:
 *
 *   - Device memory is a memfd mapped twice: the address handed out is a
 *     PROT_NONE mapping, so any host load or store through a device pointer
 *     (a missed copy in collbench) crashes the test; the fake itself works
 *     through a second, writable mapping.
 *   - Work queued on a stream (copies, kernels) runs only as the program
 *     polls: each cuEventQuery runs at most one queued operation of the
 *     event's stream and reports CUDA_ERROR_NOT_READY at least once for
 *     every recording.  A program that treats queued work as done, or
 *     never polls, sees stale data or hangs, as on a GPU.  Streams do not
 *     wait for each other (all are created non-blocking).
 *   - cuIpcGetMemHandle takes an allocation's base only; a handle opens in
 *     other processes only (through /proc/PID/fd, as shm maps its peers),
 *     and a process that died cannot be opened.
 *   - cuModuleLoadData accepts a fatbin only (its magic), and
 *     cuModuleGetFunction finds a kernel only if its name is in the image
 *     and is one of the kernels this file can run: cb_gpu_copy and
 *     cb_gpu_<sum|prod|min|max>_<f32|f64|i32|i64|i8|u8|f16|bf16>.  Kernels
 *     run as the host's reductions (coll/reduce.c): the GPU kernels' own
 *     arithmetic is checked on a GPU, by benchmarks/gpu-check.sh.
 *
 * Environment: FAKECUDA_DEVICES (default 1; 0: no device), whose PCI bus
 * ids run opposite to their ordinals, so that choosing by bus id shows.
 */
#include <cuda.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coll/reduce.h"

#define EXPORT     __attribute__((visibility("default")))
#define MAX_ALLOCS 4096
#define FAT_MAGIC  0xBA55ED50u

static int inited, ndev = -1;

static int devices(void)
{
	if (ndev < 0) {
		const char *e = getenv("FAKECUDA_DEVICES");
		ndev = e ? atoi(e) : 1;
	}
	return ndev;
}

/* ---- memory ---- */

struct alloc {
	uintptr_t dev; /* the PROT_NONE address programs see; 0: free */
	size_t size;
	char *mem; /* where the fake reads and writes */
	int fd;    /* own allocations: the memfd; imported: -1 */
	int imported;
	uint64_t serial;
};

static struct alloc allocs[MAX_ALLOCS];
static uint64_t next_serial = 1;

static struct alloc *alloc_slot(void)
{
	for (int i = 0; i < MAX_ALLOCS; i++)
		if (!allocs[i].dev)
			return &allocs[i];
	return NULL;
}

static struct alloc *alloc_of(uintptr_t p)
{
	for (int i = 0; i < MAX_ALLOCS; i++)
		if (allocs[i].dev && p >= allocs[i].dev &&
		    p < allocs[i].dev + allocs[i].size)
			return &allocs[i];
	return NULL;
}

/* Where the fake touches @p: device memory through its writable view,
 * anything else as the host pointer it is. */
static char *at(uintptr_t p, size_t n)
{
	struct alloc *a = alloc_of(p);

	if (!a)
		return (char *)p;
	if (p + n > a->dev + a->size) {
		fprintf(stderr,
		        "fakecuda: access of %zu bytes at 0x%lx runs past its "
		        "allocation\n",
		        n, (unsigned long)p);
		abort();
	}
	return a->mem + (p - a->dev);
}

static int map_twice(int fd, size_t size, uintptr_t *dev, char **mem)
{
	void *d = mmap(NULL, size, PROT_NONE, MAP_SHARED, fd, 0);
	void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (d == MAP_FAILED || m == MAP_FAILED) {
		if (d != MAP_FAILED)
			munmap(d, size);
		if (m != MAP_FAILED)
			munmap(m, size);
		return -1;
	}
	*dev = (uintptr_t)d;
	*mem = m;
	return 0;
}

/* ---- streams and events ---- */

enum { OP_COPY, OP_KERNEL };

struct func {
	int copy; /* the copy kernel; else a reduction */
	enum cb_dtype dt;
	enum cb_op op;
};

struct op {
	int kind;
	const struct func *f;
	uintptr_t dst, a, b;
	size_t n; /* bytes (copies), elements (reductions) */
};

struct CUstream_st {
	struct op *q;
	size_t cap, head, tail; /* ops [head, tail) queued */
	uint64_t issued, done;
};

struct CUevent_st {
	struct CUstream_st *s;
	uint64_t pos;
	int recorded, queried;
};

static const size_t dt_bytes[CB_DT_COUNT] = {
	[CB_DT_FLOAT32] = 4, [CB_DT_FLOAT64] = 8,  [CB_DT_INT32] = 4,
	[CB_DT_INT64] = 8,   [CB_DT_INT8] = 1,     [CB_DT_UINT8] = 1,
	[CB_DT_FLOAT16] = 2, [CB_DT_BFLOAT16] = 2,
};

static void run_op(const struct op *o)
{
	if (o->kind == OP_COPY || o->f->copy) {
		if (o->n)
			memmove(at(o->dst, o->n), at(o->a, o->n), o->n);
		return;
	}
	size_t b = o->n * dt_bytes[o->f->dt];
	cb_reduce(o->f->dt, o->f->op, at(o->dst, b), at(o->a, b), at(o->b, b),
	          o->n);
}

static void run_one(struct CUstream_st *s)
{
	if (s->head == s->tail)
		return;
	run_op(&s->q[s->head % s->cap]);
	s->head++;
	s->done++;
}

static CUresult enqueue(struct CUstream_st *s, const struct op *o)
{
	if (!s)
		return CUDA_ERROR_INVALID_HANDLE; /* the legacy stream: unused
		                                   */
	if (s->tail - s->head == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct op *q = malloc(cap * sizeof(*q));
		if (!q)
			return CUDA_ERROR_OUT_OF_MEMORY;
		for (size_t i = s->head; i < s->tail; i++)
			q[i - s->head] = s->q[i % s->cap];
		free(s->q);
		s->q = q;
		s->tail -= s->head;
		s->head = 0;
		s->cap = cap;
	}
	s->q[s->tail % s->cap] = *o;
	s->tail++;
	s->issued++;
	return CUDA_SUCCESS;
}

/* ---- the API ---- */

#define CHECK_INIT()                                                           \
	do {                                                                   \
		if (!inited)                                                   \
			return CUDA_ERROR_NOT_INITIALIZED;                     \
	} while (0)

EXPORT CUresult cuInit(unsigned int flags)
{
	(void)flags;
	if (devices() <= 0)
		return CUDA_ERROR_NO_DEVICE;
	/* peers open our memfds through /proc under Yama scope 1 */
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	inited = 1;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDriverGetVersion(int *v)
{
	*v = 13000;
	return CUDA_SUCCESS;
}

static const struct {
	CUresult r;
	const char *name, *text;
} errs[] = {
	{ CUDA_SUCCESS, "CUDA_SUCCESS", "no error" },
	{ CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE",
	  "invalid argument" },
	{ CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY",
	  "out of memory" },
	{ CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED",
	  "initialization error" },
	{ CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE",
	  "no CUDA-capable device is detected" },
	{ CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
	  "invalid device ordinal" },
	{ CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE",
	  "device kernel image is invalid" },
	{ CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT",
	  "invalid device context" },
	{ CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE",
	  "invalid resource handle" },
	{ CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND",
	  "named symbol not found" },
	{ CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready" },
	{ CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED",
	  "operation not supported" },
	{ CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
	  "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED",
	  "part or all of the requested memory range is already mapped" },
};

EXPORT CUresult cuGetErrorName(CUresult r, const char **s)
{
	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++)
		if (errs[i].r == r) {
			*s = errs[i].name;
			return CUDA_SUCCESS;
		}
	*s = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuGetErrorString(CUresult r, const char **s)
{
	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++)
		if (errs[i].r == r) {
			*s = errs[i].text;
			return CUDA_SUCCESS;
		}
	*s = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuDeviceGetCount(int *n)
{
	CHECK_INIT();
	*n = devices();
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
	CHECK_INIT();
	if (ordinal < 0 || ordinal >= devices())
		return CUDA_ERROR_INVALID_DEVICE;
	*d = ordinal;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
	CHECK_INIT();
	snprintf(name, (size_t)len, "FakeCUDA GPU %d", (int)d);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
	CHECK_INIT();
	(void)d;
	switch (a) {
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
		*v = 4;
		return CUDA_SUCCESS;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
		*v = 9;
		return CUDA_SUCCESS;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
		*v = 0;
		return CUDA_SUCCESS;
	default:
		*v = 0;
		return CUDA_SUCCESS;
	}
}

EXPORT CUresult cuDeviceGetPCIBusId(char *id, int len, CUdevice d)
{
	CHECK_INIT();
	/* opposite to the ordinals: ordinal 0 has the highest bus */
	snprintf(id, (size_t)len, "0000:%02X:00.0",
	         0x10 * (devices() - (int)d));
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceTotalMem(size_t *bytes, CUdevice d)
{
	CHECK_INIT();
	(void)d;
	*bytes = (size_t)1 << 30;
	return CUDA_SUCCESS;
}

static struct CUctx_st {
	int dev;
} ctxs[64];

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
	CHECK_INIT();
	if (d < 0 || d >= devices() || d >= 64)
		return CUDA_ERROR_INVALID_DEVICE;
	ctxs[d].dev = d;
	*c = &ctxs[d];
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice d)
{
	(void)d;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSetCurrent(CUcontext c)
{
	(void)c;
	return CUDA_SUCCESS;
}

/* ---- modules ---- */

struct CUmod_st {
	const unsigned char *image;
	size_t bytes;
};

static struct CUmod_st the_module;

EXPORT CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
	uint32_t magic;
	uint64_t rest;

	CHECK_INIT();
	memcpy(&magic, image, 4);
	if (magic != FAT_MAGIC)
		return CUDA_ERROR_INVALID_IMAGE;
	/* fatbin header: magic, version (2+2), header size (4), then the
	 * size of the rest (8) */
	memcpy(&rest, (const char *)image + 8, 8);
	the_module.image = image;
	the_module.bytes = 16 + rest;
	*m = &the_module;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleUnload(CUmodule m)
{
	(void)m;
	return CUDA_SUCCESS;
}

static const char *const op_names[CB_OP_COUNT] = { "sum", "prod", "min",
	                                           "max" };
static const char *const dt_names[CB_DT_COUNT] = {
	[CB_DT_FLOAT32] = "f32", [CB_DT_FLOAT64] = "f64",
	[CB_DT_INT32] = "i32",   [CB_DT_INT64] = "i64",
	[CB_DT_INT8] = "i8",     [CB_DT_UINT8] = "u8",
	[CB_DT_FLOAT16] = "f16", [CB_DT_BFLOAT16] = "bf16",
};
static struct func funcs[CB_DT_COUNT * CB_OP_COUNT + 1];

EXPORT CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
	CHECK_INIT();
	/* in the image, as a whole name (a symbol string ends in NUL) */
	if (!m->image || !memmem(m->image, m->bytes, name, strlen(name) + 1))
		return CUDA_ERROR_NOT_FOUND;
	if (!strcmp(name, "cb_gpu_copy")) {
		funcs[0] = (struct func){ .copy = 1 };
		*f = (CUfunction)&funcs[0];
		return CUDA_SUCCESS;
	}
	for (int o = 0; o < CB_OP_COUNT; o++)
		for (int d = 0; d < CB_DT_COUNT; d++) {
			char want[32];
			snprintf(want, sizeof(want), "cb_gpu_%s_%s",
			         op_names[o], dt_names[d]);
			if (strcmp(want, name))
				continue;
			struct func *fn = &funcs[1 + d * CB_OP_COUNT + o];
			*fn = (struct func){ .dt = d, .op = o };
			*f = (CUfunction)fn;
			return CUDA_SUCCESS;
		}
	return CUDA_ERROR_NOT_FOUND;
}

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy,
                               unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned shmem, CUstream s,
                               void **params, void **extra)
{
	const struct func *fn = (const struct func *)f;
	struct op o = { .kind = OP_KERNEL, .f = fn };

	CHECK_INIT();
	if (!gx || !gy || !gz || !bx || !by || !bz || bx * by * bz > 1024 ||
	    shmem || extra || !params)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(&o.dst, params[0], sizeof(CUdeviceptr));
	memcpy(&o.a, params[1], sizeof(CUdeviceptr));
	if (fn->copy) {
		memcpy(&o.n, params[2], sizeof(size_t));
	} else {
		memcpy(&o.b, params[2], sizeof(CUdeviceptr));
		memcpy(&o.n, params[3], sizeof(size_t));
	}
	return enqueue(s, &o);
}

/* ---- streams and events ---- */

EXPORT CUresult cuStreamCreate(CUstream *s, unsigned int flags)
{
	CHECK_INIT();
	if (!(flags & CU_STREAM_NON_BLOCKING))
		return CUDA_ERROR_INVALID_VALUE; /* the fake models those only
		                                  */
	*s = calloc(1, sizeof(**s));
	return *s ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuStreamSynchronize(CUstream s)
{
	CHECK_INIT();
	while (s && s->head != s->tail)
		run_one(s);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamDestroy(CUstream s)
{
	if (!s)
		return CUDA_ERROR_INVALID_HANDLE;
	cuStreamSynchronize(s);
	free(s->q);
	free(s);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuEventCreate(CUevent *e, unsigned int flags)
{
	CHECK_INIT();
	(void)flags;
	*e = calloc(1, sizeof(**e));
	return *e ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuEventDestroy(CUevent e)
{
	free(e);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuEventRecord(CUevent e, CUstream s)
{
	CHECK_INIT();
	if (!s)
		return CUDA_ERROR_INVALID_HANDLE;
	*e = (struct CUevent_st){ .s = s, .pos = s->issued, .recorded = 1 };
	return CUDA_SUCCESS;
}

EXPORT CUresult cuEventQuery(CUevent e)
{
	CHECK_INIT();
	if (!e->recorded)
		return CUDA_SUCCESS;
	if (e->s->done < e->pos) {
		run_one(e->s);
		return CUDA_ERROR_NOT_READY;
	}
	if (!e->queried++)
		return CUDA_ERROR_NOT_READY;
	return CUDA_SUCCESS;
}

/* ---- memory ---- */

EXPORT CUresult cuMemAlloc(CUdeviceptr *p, size_t bytes)
{
	struct alloc *a = alloc_slot();
	int fd;

	CHECK_INIT();
	if (!a || !bytes)
		return CUDA_ERROR_INVALID_VALUE;
	bytes = (bytes + 4095) / 4096 * 4096;
	if ((fd = memfd_create("fakecuda", MFD_CLOEXEC)) < 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (ftruncate(fd, (off_t)bytes) ||
	    map_twice(fd, bytes, &a->dev, &a->mem)) {
		close(fd);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	a->size = bytes;
	a->fd = fd;
	a->imported = 0;
	a->serial = next_serial++;
	*p = a->dev;
	return CUDA_SUCCESS;
}

static void alloc_drop(struct alloc *a)
{
	munmap((void *)a->dev, a->size);
	munmap(a->mem, a->size);
	if (a->fd >= 0)
		close(a->fd);
	memset(a, 0, sizeof(*a));
}

EXPORT CUresult cuMemFree(CUdeviceptr p)
{
	struct alloc *a = alloc_of(p);

	CHECK_INIT();
	if (!a || a->imported || a->dev != p)
		return CUDA_ERROR_INVALID_VALUE;
	alloc_drop(a);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemGetAddressRange(CUdeviceptr *base, size_t *size,
                                     CUdeviceptr p)
{
	struct alloc *a = alloc_of(p);

	CHECK_INIT();
	if (!a)
		return CUDA_ERROR_NOT_FOUND;
	if (base)
		*base = a->dev;
	if (size)
		*size = a->size;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                              CUstream s)
{
	struct op o = { .kind = OP_COPY, .dst = dst, .a = src, .n = bytes };

	CHECK_INIT();
	return enqueue(s, &o);
}

static struct {
	uintptr_t base;
	size_t bytes;
} pinned[MAX_ALLOCS];

EXPORT CUresult cuMemHostRegister(void *p, size_t bytes, unsigned int flags)
{
	uintptr_t b = (uintptr_t)p;
	int free_i = -1;

	CHECK_INIT();
	(void)flags;
	if (alloc_of(b))
		return CUDA_ERROR_INVALID_VALUE; /* device memory */
	for (int i = 0; i < MAX_ALLOCS; i++) {
		if (!pinned[i].base) {
			if (free_i < 0)
				free_i = i;
			continue;
		}
		if (b < pinned[i].base + pinned[i].bytes &&
		    pinned[i].base < b + bytes)
			return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
	}
	if (free_i < 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pinned[free_i].base = b;
	pinned[free_i].bytes = bytes;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemHostUnregister(void *p)
{
	for (int i = 0; i < MAX_ALLOCS; i++)
		if (pinned[i].base == (uintptr_t)p) {
			pinned[i].base = 0;
			return CUDA_SUCCESS;
		}
	return CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attr,
                                      CUdeviceptr p)
{
	struct alloc *a = alloc_of(p);

	CHECK_INIT();
	if (attr != CU_POINTER_ATTRIBUTE_MEMORY_TYPE)
		return CUDA_ERROR_NOT_SUPPORTED;
	*(unsigned int *)data = a ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
	return CUDA_SUCCESS;
}

/* ---- IPC: a handle is (pid, memfd, size, serial) ---- */

struct fake_handle {
	uint64_t magic;
	int32_t pid, fd;
	uint64_t size, serial;
};
#define HANDLE_MAGIC 0x4350494b454146ull /* "FAKEIPC" */

EXPORT CUresult cuIpcGetMemHandle(CUipcMemHandle *h, CUdeviceptr p)
{
	struct alloc *a = alloc_of(p);
	struct fake_handle fh;

	CHECK_INIT();
	if (!a || a->imported || a->dev != p)
		return CUDA_ERROR_INVALID_VALUE;
	fh = (struct fake_handle){ .magic = HANDLE_MAGIC,
		                   .pid = getpid(),
		                   .fd = a->fd,
		                   .size = a->size,
		                   .serial = a->serial };
	memset(h, 0, sizeof(*h));
	memcpy(h->reserved, &fh, sizeof(fh));
	return CUDA_SUCCESS;
}

EXPORT CUresult cuIpcOpenMemHandle(CUdeviceptr *p, CUipcMemHandle h,
                                   unsigned int flags)
{
	struct alloc *a = alloc_slot();
	struct fake_handle fh;
	char path[64];
	struct stat sb;
	int fd;

	CHECK_INIT();
	(void)flags;
	memcpy(&fh, h.reserved, sizeof(fh));
	if (fh.magic != HANDLE_MAGIC)
		return CUDA_ERROR_INVALID_HANDLE;
	if (fh.pid == getpid())
		return CUDA_ERROR_INVALID_CONTEXT; /* as the driver does */
	if (!a)
		return CUDA_ERROR_OUT_OF_MEMORY;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", fh.pid, fh.fd);
	if ((fd = open(path, O_RDWR | O_CLOEXEC)) < 0)
		return CUDA_ERROR_INVALID_HANDLE;
	if (fstat(fd, &sb) || (uint64_t)sb.st_size != fh.size ||
	    map_twice(fd, fh.size, &a->dev, &a->mem)) {
		close(fd);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	close(fd);
	a->size = fh.size;
	a->fd = -1;
	a->imported = 1;
	*p = a->dev;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuIpcCloseMemHandle(CUdeviceptr p)
{
	struct alloc *a = alloc_of(p);

	CHECK_INIT();
	if (!a || !a->imported || a->dev != p)
		return CUDA_ERROR_INVALID_VALUE;
	alloc_drop(a);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemGetHandleForAddressRange(void *handle, CUdeviceptr p,
                                              size_t size,
                                              CUmemRangeHandleType type,
                                              unsigned long long flags)
{
	(void)handle;
	(void)p;
	(void)size;
	(void)type;
	(void)flags;
	return CUDA_ERROR_NOT_SUPPORTED; /* no dma-bufs here */
}
