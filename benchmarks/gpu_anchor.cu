// SPDX-License-Identifier: MIT
// benchmarks/gpu_anchor.cu - the anchors benchmarks/gpu-check.sh puts beside
// collbench's gpu figures, on the same GPU in the same run:
//
//   gpu_anchor memcpy BYTES      cudaMemcpy device to device, BYTES each
//                                call: the copy rate (bytes / time) a peer
//                                copy is held against;
//   gpu_anchor add BYTES         a standalone c = a + b kernel on float32
//                                arrays of BYTES each (16-byte loads, four
//                                in flight per thread): the HBM traffic rate
//                                (3 * BYTES / time) a reduction can reach;
//   gpu_anchor nccl DEVS BYTES   NCCL allreduce (float32 sum) of BYTES over
//                                one process driving the GPUs DEVS
//                                ("0,1"; "0,0" asks for two ranks on one
//                                GPU, which NCCL refuses: the answer is
//                                printed as it comes); busbw as nccl-tests.
//
// Each prints one line "anchor NAME key=value ...": the median of 5 runs of
// 20 timed calls after 3 warm-up calls, timed with CUDA events.  Built by
// gpu-check.sh with nvcc (-DWITH_NCCL and -lnccl where NCCL is found).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>
#ifdef WITH_NCCL
#include <nccl.h>
#endif

#define CK(x)                                                                  \
	do {                                                                   \
		cudaError_t e_ = (x);                                          \
		if (e_ != cudaSuccess) {                                       \
			fprintf(stderr, "gpu_anchor: %s: %s\n", #x,            \
			        cudaGetErrorString(e_));                       \
			exit(1);                                               \
		}                                                              \
	} while (0)

static const int WARM = 3, CALLS = 20, RUNS = 5;

__global__ void __launch_bounds__(512)
        add_f32(float4 *c, const float4 *a, const float4 *b, size_t n)
{
	size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	size_t nthr = (size_t)gridDim.x * blockDim.x;
	for (size_t base = tid; base < n; base += nthr * 4) {
		float4 x[4], y[4];
#pragma unroll
		for (int u = 0; u < 4; u++) {
			size_t i = base + u * nthr;
			if (i < n) {
				x[u] = a[i];
				y[u] = b[i];
			}
		}
#pragma unroll
		for (int u = 0; u < 4; u++) {
			size_t i = base + u * nthr;
			if (i < n)
				c[i] = make_float4(x[u].x + y[u].x,
				                   x[u].y + y[u].y,
				                   x[u].z + y[u].z,
				                   x[u].w + y[u].w);
		}
	}
}

// Median over RUNS of the mean time of CALLS calls of @fn, in us.
template <typename F> static double time_us(F fn, cudaStream_t s)
{
	cudaEvent_t t0, t1;
	std::vector<double> v;

	CK(cudaEventCreate(&t0));
	CK(cudaEventCreate(&t1));
	for (int i = 0; i < WARM; i++)
		fn();
	CK(cudaStreamSynchronize(s));
	for (int r = 0; r < RUNS; r++) {
		float ms = 0;
		CK(cudaEventRecord(t0, s));
		for (int i = 0; i < CALLS; i++)
			fn();
		CK(cudaEventRecord(t1, s));
		CK(cudaEventSynchronize(t1));
		CK(cudaEventElapsedTime(&ms, t0, t1));
		v.push_back(ms * 1e3 / CALLS);
	}
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

static int do_memcpy(size_t bytes)
{
	void *a, *b;
	cudaStream_t s;

	CK(cudaStreamCreate(&s));
	CK(cudaMalloc(&a, bytes));
	CK(cudaMalloc(&b, bytes));
	CK(cudaMemset(a, 1, bytes));
	double us = time_us(
	        [&] {
		        CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice,
		                           s));
	        },
	        s);
	printf("anchor memcpy_d2d bytes=%zu time_us=%.2f copy_gbps=%.1f\n",
	       bytes, us, bytes / us / 1e3);
	return 0;
}

static int do_add(size_t bytes)
{
	float4 *a, *b, *c;
	cudaStream_t s;
	int dev, sms;
	size_t n = bytes / sizeof(float4);

	CK(cudaGetDevice(&dev));
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
	CK(cudaStreamCreate(&s));
	CK(cudaMalloc(&a, bytes));
	CK(cudaMalloc(&b, bytes));
	CK(cudaMalloc(&c, bytes));
	CK(cudaMemset(a, 0, bytes));
	CK(cudaMemset(b, 0, bytes));
	// the best of a few grid sizes: this is the ceiling, not a kernel
	// under test
	double best = 1e30;
	int best_g = 0;
	for (int g : { sms * 2, sms * 4, sms * 8, sms * 16 }) {
		double us = time_us(
		        [&] { add_f32<<<g, 512, 0, s>>>(c, a, b, n); }, s);
		CK(cudaGetLastError());
		if (us < best) {
			best = us;
			best_g = g;
		}
	}
	printf("anchor add_f32 bytes=%zu time_us=%.2f hbm_gbps=%.1f blocks=%d\n",
	       bytes, best, 3.0 * bytes / best / 1e3, best_g);
	return 0;
}

#ifdef WITH_NCCL
static int do_nccl(const char *devs, size_t bytes)
{
	std::vector<int> list;
	char buf[256];

	snprintf(buf, sizeof(buf), "%s", devs);
	for (char *t = strtok(buf, ","); t; t = strtok(NULL, ","))
		list.push_back(atoi(t));
	int n = (int)list.size();
	std::vector<ncclComm_t> comms(n);
	ncclResult_t r = ncclCommInitAll(comms.data(), n, list.data());
	if (r != ncclSuccess) {
		printf("anchor nccl devs=%s refused: %s (%s)\n", devs,
		       ncclGetErrorString(r), ncclGetLastError(NULL));
		return 0;
	}
	std::vector<float *> bufs(n);
	std::vector<cudaStream_t> ss(n);
	size_t count = bytes / sizeof(float);
	for (int i = 0; i < n; i++) {
		CK(cudaSetDevice(list[i]));
		CK(cudaMalloc(&bufs[i], bytes));
		CK(cudaMemset(bufs[i], 0, bytes));
		CK(cudaStreamCreate(&ss[i]));
	}
	auto call = [&] {
		ncclGroupStart();
		for (int i = 0; i < n; i++)
			ncclAllReduce(bufs[i], bufs[i], count, ncclFloat,
			              ncclSum, comms[i], ss[i]);
		ncclGroupEnd();
	};
	// time on device 0's stream, the others joined before each stop
	std::vector<double> v;
	cudaEvent_t t0, t1;
	CK(cudaSetDevice(list[0]));
	CK(cudaEventCreate(&t0));
	CK(cudaEventCreate(&t1));
	for (int i = 0; i < WARM; i++)
		call();
	for (int i = 0; i < n; i++) {
		CK(cudaSetDevice(list[i]));
		CK(cudaStreamSynchronize(ss[i]));
	}
	for (int run = 0; run < RUNS; run++) {
		float ms = 0;
		CK(cudaSetDevice(list[0]));
		CK(cudaEventRecord(t0, ss[0]));
		for (int i = 0; i < CALLS; i++)
			call();
		for (int i = 0; i < n; i++) {
			CK(cudaSetDevice(list[i]));
			CK(cudaStreamSynchronize(ss[i]));
		}
		CK(cudaSetDevice(list[0]));
		CK(cudaEventRecord(t1, ss[0]));
		CK(cudaEventSynchronize(t1));
		CK(cudaEventElapsedTime(&ms, t0, t1));
		v.push_back(ms * 1e3 / CALLS);
	}
	std::sort(v.begin(), v.end());
	double us = v[v.size() / 2], alg = bytes / us / 1e3;
	printf("anchor nccl devs=%s bytes=%zu time_us=%.2f algbw_gbps=%.1f "
	       "busbw_gbps=%.1f\n",
	       devs, bytes, us, alg, alg * 2.0 * (n - 1) / n);
	for (int i = 0; i < n; i++)
		ncclCommDestroy(comms[i]);
	return 0;
}
#endif

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "memcpy"))
		return do_memcpy(strtoull(argv[2], NULL, 0));
	if (argc >= 3 && !strcmp(argv[1], "add"))
		return do_add(strtoull(argv[2], NULL, 0));
#ifdef WITH_NCCL
	if (argc >= 4 && !strcmp(argv[1], "nccl"))
		return do_nccl(argv[2], strtoull(argv[3], NULL, 0));
#endif
	fprintf(stderr, "usage: gpu_anchor memcpy BYTES | add BYTES%s\n",
#ifdef WITH_NCCL
	        " | nccl DEVS BYTES"
#else
	        " (built without NCCL)"
#endif
	);
	return 2;
}
