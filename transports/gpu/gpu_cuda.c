/* SPDX-License-Identifier: MIT */
/*
 * transports/gpu/gpu_cuda.c - the CUDA driver, reached through dlopen: the
 * table of entry points, error text, the kernels' dispatch table, and the
 * probe that `collbench info` and the start-up check use.
 *
 * Why dlopen and the driver API rather than linking the runtime: the module
 * must load where no driver exists (CI, a login node), so that
 * `--transport gpu` can say in one line what is missing and exit 77; and a
 * module that links nothing but libc passes the same -z defs check as tcp
 * and shm.  The kernels come from a fatbin nvcc built and the build
 * embedded (gpu_fatbin.c), loaded with cuModuleLoadData: sm_80 and sm_90
 * code, plus compute_90 PTX the driver compiles for newer GPUs.
 *
 * Why a probe process: CUDA does not survive fork(), and collbench forks
 * its local ranks after checking that the transport is usable.  So the
 * check runs cuInit in a child that reports through a pipe and exits; the
 * parent never initializes the driver.
 */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "transports/gpu/gpu.h"
#include "transports/gpu/gpu_kernels.h"

#define STR_(x) #x
#define STR(x)  STR_(x)

cb_status_t gpu_cu_load(const char *path, struct gpu_cu *cu, char *why,
                        size_t why_bytes)
{
	const char *lib = path && *path ? path : "libcuda.so.1";

	memset(cu, 0, sizeof(*cu));
	cu->lib = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!cu->lib) {
		const char *e = dlerror();
		snprintf(why, why_bytes,
		         "no NVIDIA driver: %s cannot be loaded (%s)", lib,
		         e ? e : "unknown error");
		return CB_ERR_UNAVAILABLE;
	}
#define GPU_CU_LOAD(m, fn, req)                                                \
	cu->m = (__typeof__(fn) *)dlsym(cu->lib, STR(fn));                     \
	if (!cu->m && (req)) {                                                 \
		snprintf(why, why_bytes,                                       \
		         "the NVIDIA driver %s lacks %s: too old (CUDA 11.7 "  \
		         "or newer needed)",                                   \
		         lib, STR(fn));                                        \
		gpu_cu_unload(cu);                                             \
		return CB_ERR_UNAVAILABLE;                                     \
	}
	GPU_CU_SYMS(GPU_CU_LOAD)
#undef GPU_CU_LOAD
	return CB_OK;
}

void gpu_cu_unload(struct gpu_cu *cu)
{
	if (cu->lib)
		dlclose(cu->lib);
	memset(cu, 0, sizeof(*cu));
}

void gpu_cu_err(const struct gpu_cu *cu, CUresult r, char *buf, size_t bytes)
{
	const char *name = NULL, *text = NULL;

	if (cu->GetErrorName)
		cu->GetErrorName(r, &name);
	if (cu->GetErrorString)
		cu->GetErrorString(r, &text);
	if (name && text) {
		snprintf(buf, bytes, "%s (%s)", name, text);
		return;
	}
	/* the driver could not say (a stub library answers nothing) */
	static const struct {
		CUresult r;
		const char *what;
	} known[] = {
		{ CUDA_ERROR_STUB_LIBRARY, "CUDA_ERROR_STUB_LIBRARY (the CUDA "
		                           "toolkit's stub libcuda, not a "
		                           "driver)" },
		{ CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE (no GPU)" },
		{ CUDA_ERROR_SYSTEM_DRIVER_MISMATCH,
		  "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (the kernel module and "
		  "libcuda differ in version)" },
		{ CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED" },
	};
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (known[i].r == r) {
			snprintf(buf, bytes, "%s", known[i].what);
			return;
		}
	snprintf(buf, bytes, "CUDA error %d", (int)r);
}

/* ---- the dispatch table ---- */

#define GPU_OP_ROW(E, tname)                                                   \
	{ GPU_KERNEL_NAME(sum, tname), GPU_KERNEL_NAME(prod, tname),           \
	  GPU_KERNEL_NAME(min, tname), GPU_KERNEL_NAME(max, tname) },
#define GPU_DT_ROW(E, tname, T, U) [CB_DT_##E] = GPU_OP_ROW(E, tname)

/* Indexed by enum cb_dtype, then enum cb_op (sum, prod, min, max: the
 * order of GPU_OPS and of CB_OP_MAP, which the unit test checks). */
static const char *const kernel_names[CB_DT_COUNT][CB_OP_COUNT] = { GPU_DTYPES(
	GPU_DT_ROW) };

const char *gpu_kernel_name(enum cb_dtype dt, enum cb_op op)
{
	if ((unsigned)dt >= CB_DT_COUNT || (unsigned)op >= CB_OP_COUNT)
		return NULL;
	return kernel_names[dt][op];
}

const char *gpu_copy_kernel_name(void)
{
	return GPU_COPY_KERNEL;
}

/* ---- which GPU ---- */

int gpu_pick_device(const char (*pci)[16], int n, int hint, int local,
                    char *why, size_t why_bytes)
{
	int order[GPU_PROBE_DEVS], k = n < GPU_PROBE_DEVS ? n : GPU_PROBE_DEVS;

	if (k <= 0) {
		snprintf(why, why_bytes, "the NVIDIA driver sees no GPU");
		return -1;
	}
	/* the driver's ordinals, sorted by PCI bus id (insertion sort: a
	 * handful of devices) */
	for (int i = 0; i < k; i++) {
		int j = i;
		while (j > 0 && strcasecmp(pci[order[j - 1]], pci[i]) > 0) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = i;
	}
	if (hint >= k) {
		snprintf(why, why_bytes,
		         "GPU %d is not there: the NVIDIA driver sees %d GPU%s "
		         "(0-%d, by PCI bus id)",
		         hint, k, k == 1 ? "" : "s", k - 1);
		return -1;
	}
	return order[hint >= 0 ? hint : (local < 0 ? 0 : local) % k];
}

/* ---- the probe ---- */

static void probe_here(const char *libcuda, struct gpu_probe *p)
{
	struct gpu_cu cu;
	char err[160];
	CUresult r;
	int n = 0;

	p->status = gpu_cu_load(libcuda, &cu, p->why, sizeof(p->why));
	if (p->status)
		return;
	p->status = CB_ERR_UNAVAILABLE;
	if ((r = cu.Init(0)) != CUDA_SUCCESS) {
		gpu_cu_err(&cu, r, err, sizeof(err));
		snprintf(p->why, sizeof(p->why),
		         "the NVIDIA driver does not start: cuInit: %.150s",
		         err);
		return;
	}
	cu.DriverGetVersion(&p->driver_version);
	if ((r = cu.DeviceGetCount(&n)) != CUDA_SUCCESS || n == 0) {
		snprintf(p->why, sizeof(p->why),
		         "the NVIDIA driver sees no GPU");
		return;
	}
	p->ndev = n < GPU_PROBE_DEVS ? n : GPU_PROBE_DEVS;
	for (int i = 0; i < p->ndev; i++) {
		CUdevice d;
		size_t mem = 0;
		if (cu.DeviceGet(&d, i) != CUDA_SUCCESS)
			continue;
		cu.DeviceGetName(p->dev[i].name, sizeof(p->dev[i].name), d);
		cu.DeviceGetPCIBusId(p->dev[i].pci, sizeof(p->dev[i].pci), d);
		cu.DeviceTotalMem(&mem, d);
		p->dev[i].mem_bytes = mem;
		cu.DeviceGetAttribute(&p->dev[i].sms,
		                      CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
		                      d);
		cu.DeviceGetAttribute(
		        &p->dev[i].cc_major,
		        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d);
		cu.DeviceGetAttribute(
		        &p->dev[i].cc_minor,
		        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d);
	}
	p->status = CB_OK;
}

void gpu_probe(const char *libcuda, struct gpu_probe *p)
{
	int fds[2], status;
	pid_t pid;

	memset(p, 0, sizeof(*p));
	p->status = CB_ERR_UNAVAILABLE;
	if (pipe(fds)) {
		snprintf(p->why, sizeof(p->why), "cannot probe the GPU: %s",
		         strerror(errno));
		return;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(p->why, sizeof(p->why), "cannot probe the GPU: %s",
		         strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return;
	}
	if (pid == 0) {
		struct gpu_probe mine;
		memset(&mine, 0, sizeof(mine));
		close(fds[0]);
		probe_here(libcuda, &mine);
		ssize_t w = write(fds[1], &mine, sizeof(mine));
		_exit(w == (ssize_t)sizeof(mine) ? 0 : 1);
	}
	close(fds[1]);
	/* A driver that hangs in cuInit must not hang collbench: 20 s. */
	struct pollfd pf = { .fd = fds[0], .events = POLLIN };
	size_t got = 0;
	while (got < sizeof(*p)) {
		int r = poll(&pf, 1, 20000);
		if (r <= 0)
			break;
		ssize_t n = read(fds[0], (char *)p + got, sizeof(*p) - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fds[0]);
	if (got < sizeof(*p)) {
		kill(pid, SIGKILL);
		memset(p, 0, sizeof(*p));
		p->status = CB_ERR_UNAVAILABLE;
		snprintf(p->why, sizeof(p->why),
		         "the GPU probe (cuInit in a child process) did not "
		         "answer within 20 s");
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
}
