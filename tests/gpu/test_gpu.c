/* SPDX-License-Identifier: MIT */
/*
 * tests/gpu/test_gpu.c - the gpu transport's host side, on its own:
 * `test_gpu CUBIN FATBIN FAKECUDA` with the module's sources linked in and
 * COLLBENCH_GPU_LIBCUDA naming tests/gpu/fakecuda.c's library
 * (FAKECUDA_DEVICES=2).
 *
 *   dispatch   every (datatype, op) has a kernel name, as this test spells
 *              it, all 32 distinct, and nothing outside the enums; every
 *              name, and the copy kernel's, is a symbol of the cubin nvcc
 *              built and of the fatbin the module embeds;
 *   pick       which driver ordinal a rank uses: by PCI bus id (the
 *              topology's numbering), round-robin by local rank, a GPU
 *              that is not there refused with a line;
 *   probe      the probe (a child process) reports the devices, or one
 *              line naming what is missing: no library, no GPU;
 *   engine     a context on the stand-in: device allocations, host memory
 *              refused without a line recorded, registration gives an IPC
 *              handle, export of device memory only; copies up and down;
 *              every (datatype, op) reduction through the dispatch table
 *              equals the host's; local operations complete only when
 *              polled, in queue order, and the event pool runs dry at
 *              GPU_LOC_EVENTS with CB_AGAIN and fills again as they
 *              complete; dma-bufs unsupported without a line;
 *   exports    a peer's buffer description is accepted only when it lies
 *              inside the allocation it names, from that peer.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coll/reduce.h"
#include "core/types.h"
#include "transports/gpu/gpu.h"

extern const struct cb_tp_ops cb_tp_gpu;

static int failures;
#define FAIL(...)                                                              \
	do {                                                                   \
		fprintf(stderr, "FAIL: ");                                     \
		fprintf(stderr, __VA_ARGS__);                                  \
		fprintf(stderr, "\n");                                         \
		failures++;                                                    \
	} while (0)

/* ---- a host table ---- */

static char last_fail[512];

static const char *h_option(const struct cb_tp_host *self, const char *key)
{
	(void)self;
	(void)key;
	return NULL;
}

static void h_log(const struct cb_tp_host *self, int level, const char *fmt,
                  ...)
{
	(void)self;
	(void)level;
	(void)fmt;
}

static cb_status_t h_fail(const struct cb_tp_host *self, cb_status_t st,
                          const char *fmt, ...)
{
	va_list ap;

	(void)self;
	va_start(ap, fmt);
	vsnprintf(last_fail, sizeof(last_fail), fmt, ap);
	va_end(ap);
	return st;
}

static uint64_t h_now(const struct cb_tp_host *self)
{
	(void)self;
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void h_reduce(const struct cb_tp_host *self, enum cb_dtype dt,
                     enum cb_op op, void *dst, const void *a, const void *b,
                     size_t count)
{
	(void)self;
	cb_reduce(dt, op, dst, a, b, count);
}

static const int host_of_rank[1] = { 0 };
static const char *const hosts[1] = { "here" };

static const struct cb_tp_host host = {
	.size = sizeof(struct cb_tp_host),
	.rank = 0,
	.world = 1,
	.host_of_rank = host_of_rank,
	.hosts = hosts,
	.job_id = 42,
	.local_ranks = 1,
	.gpu = -1,
	.option = h_option,
	.log = h_log,
	.fail = h_fail,
	.now_ns = h_now,
	.reduce = h_reduce,
};

/* ---- dispatch ---- */

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long len;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (len = ftell(f)) > 0 &&
	    !fseek(f, 0, SEEK_SET) && (buf = malloc((size_t)len)) &&
	    fread(buf, 1, (size_t)len, f) != (size_t)len) {
		free(buf);
		buf = NULL;
	}
	*n = buf ? (size_t)len : 0;
	fclose(f);
	return buf;
}

/* @name as a whole symbol in an image: NUL before and after it. */
static int has_symbol(const char *img, size_t n, const char *name)
{
	size_t k = strlen(name);

	for (const char *p = img; p && p + k + 1 < img + n;
	     p = memchr(p + 1, name[0], (size_t)(img + n - p - 1))) {
		if (p > img && p[-1] == '\0' && !memcmp(p, name, k) &&
		    p[k] == '\0')
			return 1;
	}
	return 0;
}

static void test_dispatch(const char *cubin, const char *fatbin)
{
	/* the test's own spelling of the names, not the module's list */
	static const char *const ops[CB_OP_COUNT] = { [CB_OP_SUM] = "sum",
		                                      [CB_OP_PROD] = "prod",
		                                      [CB_OP_MIN] = "min",
		                                      [CB_OP_MAX] = "max" };
	static const char *const dts[CB_DT_COUNT] = {
		[CB_DT_FLOAT32] = "f32", [CB_DT_FLOAT64] = "f64",
		[CB_DT_INT32] = "i32",   [CB_DT_INT64] = "i64",
		[CB_DT_INT8] = "i8",     [CB_DT_UINT8] = "u8",
		[CB_DT_FLOAT16] = "f16", [CB_DT_BFLOAT16] = "bf16",
	};
	const char *seen[CB_DT_COUNT * CB_OP_COUNT];
	size_t ncu = 0, nfat = 0;
	char *cu = slurp(cubin, &ncu), *fat = slurp(fatbin, &nfat);
	int k = 0;

	if (!cu || !fat)
		FAIL("cannot read %s or %s", cubin, fatbin);
	for (int d = 0; d < CB_DT_COUNT; d++)
		for (int o = 0; o < CB_OP_COUNT; o++) {
			const char *name = gpu_kernel_name(d, o);
			char want[40];
			snprintf(want, sizeof(want), "cb_gpu_%s_%s", ops[o],
			         dts[d]);
			if (!name || strcmp(name, want)) {
				FAIL("%s %s: kernel %s, want %s",
				     cb_dtype_name(d), cb_op_name(o),
				     name ? name : "(none)", want);
				continue;
			}
			for (int j = 0; j < k; j++)
				if (!strcmp(seen[j], name))
					FAIL("%s named twice", name);
			seen[k++] = name;
			if (cu && !has_symbol(cu, ncu, name))
				FAIL("%s is not a symbol of %s", name, cubin);
			if (fat && !has_symbol(fat, nfat, name))
				FAIL("%s is not in the embedded fatbin", name);
		}
	if (gpu_kernel_name(CB_DT_COUNT, CB_OP_SUM) ||
	    gpu_kernel_name(CB_DT_FLOAT32, CB_OP_COUNT) ||
	    gpu_kernel_name((enum cb_dtype) - 1, CB_OP_SUM))
		FAIL("a kernel name for a datatype or op outside the enums");
	if (cu && !has_symbol(cu, ncu, gpu_copy_kernel_name()))
		FAIL("the copy kernel is not in the cubin");
	/* the check itself: a name the build never made is not found */
	if (cu && has_symbol(cu, ncu, "cb_gpu_sum_f128"))
		FAIL("has_symbol finds a kernel that does not exist");
	if (nfat != gpu_fatbin_bytes || (fat && memcmp(fat, gpu_fatbin, nfat)))
		FAIL("the embedded fatbin (%zu bytes) differs from %s (%zu)",
		     gpu_fatbin_bytes, fatbin, nfat);
	printf("dispatch: %d kernels named, all in the cubin and the fatbin\n",
	       k);
	free(cu);
	free(fat);
}

/* ---- which GPU ---- */

static void test_pick(void)
{
	/* ordinals as a driver may number them (fastest first) */
	const char pci[4][16] = { "0000:81:00.0", "0000:05:00.0",
		                  "0000:C1:00.0", "0000:41:00.0" };
	char why[200] = "";
	/* by bus id: 05 (ordinal 1), 41 (3), 81 (0), C1 (2) */
	const int by_bus[4] = { 1, 3, 0, 2 };

	for (int g = 0; g < 4; g++)
		if (gpu_pick_device(pci, 4, g, 0, why, sizeof(why)) !=
		    by_bus[g])
			FAIL("--gpu %d: ordinal %d, want %d", g,
			     gpu_pick_device(pci, 4, g, 0, why, sizeof(why)),
			     by_bus[g]);
	for (int l = 0; l < 9; l++)
		if (gpu_pick_device(pci, 4, -1, l, why, sizeof(why)) !=
		    by_bus[l % 4])
			FAIL("local rank %d: ordinal %d, want %d", l,
			     gpu_pick_device(pci, 4, -1, l, why, sizeof(why)),
			     by_bus[l % 4]);
	why[0] = '\0';
	if (gpu_pick_device(pci, 4, 4, 0, why, sizeof(why)) != -1 ||
	    !strstr(why, "GPU 4 is not there") || !strstr(why, "4 GPUs"))
		FAIL("--gpu 4 of 4: '%s'", why);
	why[0] = '\0';
	if (gpu_pick_device(pci, 0, -1, 0, why, sizeof(why)) != -1 ||
	    !strstr(why, "no GPU"))
		FAIL("no device: '%s'", why);
	printf("pick: by PCI bus id and by local rank\n");
}

/* ---- the probe ---- */

static void test_probe(const char *fake)
{
	struct gpu_probe p;

	gpu_probe(fake, &p);
	if (p.status != CB_OK || p.ndev != 2 ||
	    strcmp(p.dev[1].pci, "0000:10:00.0") ||
	    strncmp(p.dev[0].name, "FakeCUDA", 8) || p.driver_version != 13000)
		FAIL("probe of the stand-in: status %d, %d devices, '%s' '%s'",
		     p.status, p.ndev, p.dev[1].pci, p.why);
	gpu_probe("/nonexistent/libcuda.so.1", &p);
	if (p.status != CB_ERR_UNAVAILABLE ||
	    !strstr(p.why, "no NVIDIA driver") ||
	    !strstr(p.why, "/nonexistent/libcuda.so.1"))
		FAIL("probe without a driver: '%s'", p.why);
	setenv("FAKECUDA_DEVICES", "0", 1);
	gpu_probe(fake, &p);
	setenv("FAKECUDA_DEVICES", "2", 1);
	if (p.status != CB_ERR_UNAVAILABLE || !strstr(p.why, "cuInit") ||
	    !strstr(p.why, "CUDA_ERROR_NO_DEVICE"))
		FAIL("probe with no GPU: '%s'", p.why);
	printf("probe: devices, no driver, no GPU\n");
}

/* ---- the engine on the stand-in ---- */

static cb_status_t wait_local(struct cb_tp_ctx *ctx, struct cb_tp_req *r,
                              int *polls)
{
	cb_status_t st;

	*polls = 0;
	while ((st = cb_tp_gpu.local_test(ctx, r)) == CB_AGAIN)
		if (++*polls > 1000000)
			return CB_ERR_TIMEOUT;
	return st;
}

static void fill_bytes(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 37 + i * 11 + (i >> 8));
}

static void test_reductions(struct cb_tp_ctx *ctx, void *dev)
{
	const size_t n = 1000; /* elements: not a multiple of a vector */
	uint8_t a[8000], b[8000], got[8000], want[8000];
	char *d = dev;
	int polls;

	for (int dt = 0; dt < CB_DT_COUNT; dt++)
		for (int op = 0; op < CB_OP_COUNT; op++) {
			size_t es = cb_dtype_bytes(dt), bytes = n * es;
			struct cb_tp_reduce red = { dt, op, (uint32_t)es };
			struct cb_tp_req r;
			fill_bytes(a, bytes, (unsigned)(dt * 7 + op));
			fill_bytes(b, bytes, (unsigned)(dt * 7 + op + 100));
			if (dt == CB_DT_FLOAT16 || dt == CB_DT_BFLOAT16 ||
			    dt == CB_DT_FLOAT32 || dt == CB_DT_FLOAT64)
				for (size_t i = 0; i < bytes; i += es)
					a[i + es - 1] &= 0x3f, /* finite */
					        b[i + es - 1] &= 0x3f;
			cb_reduce(dt, op, want, a, b, n);
			if (cb_tp_gpu.mem_copy(ctx, d, a, bytes, NULL) ||
			    cb_tp_gpu.mem_copy(ctx, d + 8192, b, bytes, NULL) ||
			    cb_tp_gpu.mem_reduce(ctx, d + 16384, d, d + 8192, n,
			                         &red, &r) ||
			    wait_local(ctx, &r, &polls) ||
			    cb_tp_gpu.mem_copy(ctx, got, d + 16384, bytes,
			                       NULL)) {
				FAIL("%s %s: %s", cb_dtype_name(dt),
				     cb_op_name(op), last_fail);
				continue;
			}
			if (memcmp(got, want, bytes))
				FAIL("%s %s through the dispatch table differs "
				     "from the host's reduction",
				     cb_dtype_name(dt), cb_op_name(op));
			if (polls < 1)
				FAIL("%s %s complete without being polled",
				     cb_dtype_name(dt), cb_op_name(op));
		}
}

static void test_engine(void)
{
	static struct cb_tp_req reqs[GPU_LOC_EVENTS + 1];
	const size_t mb = 1 << 20;
	struct cb_tp_ctx *ctx = NULL;
	uint8_t *h = malloc(mb), *h2 = malloc(mb);
	void *dev = NULL, *hostp = NULL;
	struct cb_tp_mr *mr = NULL;
	char line[256];
	int polls, fd = -1;
	uint64_t off;

	if (cb_tp_gpu.open(&host, &ctx)) {
		FAIL("open on the stand-in: %s", last_fail);
		return;
	}
	/* FAKECUDA_DEVICES=2: ordinal 1 has the lower bus id, so it is
	 * GPU 0 by PCI order, local rank 0's */
	cb_tp_gpu.describe(ctx, line, sizeof(line));
	if (ctx->dev_index != 1 || !strstr(line, "GPU 0: FakeCUDA GPU 1") ||
	    !strstr(line, "0000:10:00.0, CUDA device 1") ||
	    !strstr(line, "copy engine"))
		FAIL("local rank 0 drives ordinal %d: '%s'", ctx->dev_index,
		     line);
	last_fail[0] = '\0';
	if (cb_tp_gpu.mem_alloc(ctx, mb, CB_MEM_HOST, -1, &hostp) !=
	            CB_ERR_UNSUPPORTED ||
	    last_fail[0])
		FAIL("host memory from the gpu transport: '%s'", last_fail);
	if (cb_tp_gpu.mem_alloc(ctx, 4 * mb, CB_MEM_GPU, -1, &dev)) {
		FAIL("device allocation: %s", last_fail);
		goto out;
	}
	struct cb_tp_mem mem = { .base = (char *)dev + 4096,
		                 .bytes = mb,
		                 .kind = CB_MEM_GPU,
		                 .device = -1 };
	if (cb_tp_gpu.mem_reg(ctx, &mem, &mr) || !mr->have_handle ||
	    mr->alloc_base != (CUdeviceptr)(uintptr_t)dev ||
	    mr->alloc_bytes < 4 * mb)
		FAIL("registering part of an allocation: %s", last_fail);
	mem.mr = mr;
	uint8_t blob[CB_TP_MEM_BLOB_MAX];
	size_t bn = sizeof(blob);
	struct gpu_export x;
	if (cb_tp_gpu.mem_export(ctx, &mem, blob, &bn) || bn != sizeof(x)) {
		FAIL("export: %s", last_fail);
	} else {
		memcpy(&x, blob, sizeof(x));
		if (x.base != (uint64_t)(uintptr_t)mem.base || x.bytes != mb ||
		    x.alloc_base != mr->alloc_base)
			FAIL("the export describes another range");
	}
	struct cb_tp_mem hmem = { .base = h, .bytes = mb, .kind = CB_MEM_HOST };
	struct cb_tp_mr *hmr = NULL;
	bn = sizeof(blob);
	if (cb_tp_gpu.mem_reg(ctx, &hmem, &hmr) || !hmr->pinned)
		FAIL("host memory is not pinned when registered");
	hmem.mr = hmr;
	if (cb_tp_gpu.mem_export(ctx, &hmem, blob, &bn) != CB_ERR_UNSUPPORTED)
		FAIL("host memory was exported");
	cb_tp_gpu.mem_dereg(ctx, hmr);

	/* up and down */
	fill_bytes(h, mb, 3);
	memset(h2, 0, mb);
	if (cb_tp_gpu.mem_copy(ctx, dev, h, mb, NULL) ||
	    cb_tp_gpu.mem_copy(ctx, h2, dev, mb, NULL) || memcmp(h, h2, mb))
		FAIL("a megabyte up and down again differs");

	/* the pool: GPU_LOC_EVENTS operations in flight, then CB_AGAIN */
	int posted = 0;
	for (unsigned i = 0; i < GPU_LOC_EVENTS; i++)
		posted += cb_tp_gpu.mem_copy(ctx, (char *)dev + (i % 64) * 64,
		                             h + i * 64, 64, &reqs[i]) == CB_OK;
	if (posted != (int)GPU_LOC_EVENTS ||
	    cb_tp_gpu.mem_copy(ctx, dev, h, 64, &reqs[GPU_LOC_EVENTS]) !=
	            CB_AGAIN)
		FAIL("%d of %u posted, then not CB_AGAIN", posted,
		     GPU_LOC_EVENTS);
	/* the last completes only after all before it (one stream) */
	if (wait_local(ctx, &reqs[GPU_LOC_EVENTS - 1], &polls) ||
	    polls < (int)GPU_LOC_EVENTS)
		FAIL("the last of %u queued copies completed after %d polls",
		     GPU_LOC_EVENTS, polls);
	for (unsigned i = 0; i < GPU_LOC_EVENTS; i++)
		if (wait_local(ctx, &reqs[i], &polls))
			FAIL("copy %u: %s", i, last_fail);
	if (ctx->nlev_free != (int)GPU_LOC_EVENTS || ctx->lev_seq_busy)
		FAIL("%d events free after all completed, want %u",
		     ctx->nlev_free, GPU_LOC_EVENTS);
	if (cb_tp_gpu.local_test(ctx, &reqs[0]) != CB_OK)
		FAIL("a completed request tested again is not done");

	test_reductions(ctx, (char *)dev + 2 * mb);

	last_fail[0] = '\0';
	if (cb_tp_gpu.mem_dmabuf(ctx, dev, mb, &fd, &off) !=
	            CB_ERR_UNSUPPORTED ||
	    last_fail[0])
		FAIL("a dma-buf where the driver has none: '%s'", last_fail);
	cb_tp_gpu.mem_dereg(ctx, mr);
	cb_tp_gpu.mem_free(ctx, dev, 4 * mb);
	printf("engine: memory, copies, %d reductions, the event pool\n",
	       CB_DT_COUNT * CB_OP_COUNT);
out:
	cb_tp_gpu.close(ctx);
	free(h);
	free(h2);
}

/* ---- peers' buffer descriptions ---- */

static void test_exports(void)
{
	struct cb_tp_ep ep = { .lp = { .peer = 3, .pid = 1234 } };
	struct gpu_export ok = { .magic = GPU_MAGIC,
		                 .pid = 1234,
		                 .rank = 3,
		                 .alloc_base = 1 << 20,
		                 .alloc_bytes = 1 << 20,
		                 .base = (1 << 20) + 4096,
		                 .bytes = 8192 };
	struct gpu_export x;

	if (!gpu_export_ok(&ep, &ok))
		FAIL("a good export refused");
	x = ok, x.pid = 99;
	if (gpu_export_ok(&ep, &x))
		FAIL("an export of another process taken");
	x = ok, x.rank = 2;
	if (gpu_export_ok(&ep, &x))
		FAIL("an export of another rank taken");
	x = ok, x.base = ok.alloc_base - 1;
	if (gpu_export_ok(&ep, &x))
		FAIL("an export below its allocation taken");
	x = ok, x.bytes = ok.alloc_bytes;
	if (gpu_export_ok(&ep, &x))
		FAIL("an export past its allocation's end taken");
	x = ok, x.base = UINT64_MAX - 10, x.bytes = 100;
	if (gpu_export_ok(&ep, &x))
		FAIL("an export that wraps around taken");
	x = ok, x.magic = 0;
	if (gpu_export_ok(&ep, &x))
		FAIL("an export without its magic taken");
	printf("exports: ranges inside their allocation, from their peer\n");
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: test_gpu CUBIN FATBIN FAKECUDA\n");
		return 2;
	}
	test_dispatch(argv[1], argv[2]);
	test_pick();
	test_probe(argv[3]);
	test_engine();
	test_exports();
	printf("%s\n", failures ? "FAILED" : "passed");
	return failures ? 1 : 0;
}
