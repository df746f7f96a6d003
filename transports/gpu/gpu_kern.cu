/* SPDX-License-Identifier: MIT */
/*
 * transports/gpu/gpu_kern.cu - the gpu transport's device code: one
 * reduction kernel per (datatype, op) and a copy kernel, compiled by nvcc
 * into a fatbin that the module embeds and loads through the driver API
 * (cuModuleLoadData); nothing here is linked against the CUDA runtime.
 *
 * Every kernel is a grid-stride loop over 16-byte vectors when all its
 * pointers are 16-byte aligned (the usual case: buffers come from
 * cuMemAlloc, and chunks are cut at element multiples of 512 KiB), four
 * vectors in flight per thread before the first use, then a scalar tail.
 * The loads of the reduction's second operand may be the sender's buffer
 * mapped through CUDA IPC: that is the fused receive-and-reduce, one pass
 * over memory instead of a copy and then a reduction.
 *
 * Results are bit-exact with the host's (coll/reduce.c): integer sums and
 * products on the unsigned twin (wrap-around); float16 and bfloat16 with
 * the native correctly rounded __hadd/__hmul, which equal the host's
 * widen-to-float-and-round-once (float's 24 bits are at least 2p + 2 for
 * p = 11 and 8, so the double rounding there is innocuous); min and max as
 * (b < a ? b : a) and (b > a ? b : a), the host's very expressions; no
 * fast-math, no contraction (a sum or a product alone has nothing to
 * contract).
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "gpu_kernels.h"

#define UNROLL 4

template <typename T> struct alignas(16) Vec {
	T e[16 / sizeof(T)];
};

struct OpSum {
	template <typename T> __device__ static T f(T x, T y)
	{
		return static_cast<T>(x + y);
	}
};
struct OpProd {
	template <typename T> __device__ static T f(T x, T y)
	{
		return static_cast<T>(x * y);
	}
};
struct OpMin {
	template <typename T> __device__ static T f(T x, T y)
	{
		return y < x ? y : x;
	}
};
struct OpMax {
	template <typename T> __device__ static T f(T x, T y)
	{
		return y > x ? y : x;
	}
};

template <typename T, typename Op>
__device__ __forceinline__ void reduce_body(T *dst, const T *a, const T *b,
                                            size_t n)
{
	const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	const size_t nthr = (size_t)gridDim.x * blockDim.x;
	constexpr int L = 16 / sizeof(T);
	size_t done = 0;

	if ((((uintptr_t)dst | (uintptr_t)a | (uintptr_t)b) & 15) == 0) {
		typedef Vec<T> V;
		const V *va = reinterpret_cast<const V *>(a);
		const V *vb = reinterpret_cast<const V *>(b);
		V *vd = reinterpret_cast<V *>(dst);
		const size_t nv = n / L;
		for (size_t base = tid; base < nv; base += nthr * UNROLL) {
			V x[UNROLL], y[UNROLL];
#pragma unroll
			for (int u = 0; u < UNROLL; u++) {
				size_t i = base + (size_t)u * nthr;
				if (i < nv) {
					x[u] = va[i];
					y[u] = vb[i];
				}
			}
#pragma unroll
			for (int u = 0; u < UNROLL; u++) {
				size_t i = base + (size_t)u * nthr;
				if (i < nv) {
					V r;
#pragma unroll
					for (int k = 0; k < L; k++)
						r.e[k] = Op::f(x[u].e[k],
						               y[u].e[k]);
					vd[i] = r;
				}
			}
		}
		done = nv * L;
	}
	for (size_t i = done + tid; i < n; i += nthr)
		dst[i] = Op::f(a[i], b[i]);
}

#define KERNEL(op, OpT, name, T)                                               \
	extern "C" __global__ void __launch_bounds__(GPU_THREADS)              \
	        cb_gpu_##op##_##name(void *d, const void *a, const void *b,    \
	                             size_t n)                                 \
	{                                                                      \
		reduce_body<T, OpT>((T *)d, (const T *)a, (const T *)b, n);    \
	}

#define KERNELS(E, name, T, U)                                                 \
	KERNEL(sum, OpSum, name, U)                                            \
	KERNEL(prod, OpProd, name, U)                                          \
	KERNEL(min, OpMin, name, T)                                            \
	KERNEL(max, OpMax, name, T)

GPU_DTYPES(KERNELS)

extern "C" __global__ void __launch_bounds__(GPU_THREADS)
        cb_gpu_copy(void *d, const void *s, size_t bytes)
{
	const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	const size_t nthr = (size_t)gridDim.x * blockDim.x;
	size_t done = 0;

	if ((((uintptr_t)d | (uintptr_t)s) & 15) == 0) {
		const uint4 *vs = reinterpret_cast<const uint4 *>(s);
		uint4 *vd = reinterpret_cast<uint4 *>(d);
		const size_t nv = bytes / 16;
		for (size_t base = tid; base < nv; base += nthr * UNROLL) {
			uint4 x[UNROLL];
#pragma unroll
			for (int u = 0; u < UNROLL; u++) {
				size_t i = base + (size_t)u * nthr;
				if (i < nv)
					x[u] = vs[i];
			}
#pragma unroll
			for (int u = 0; u < UNROLL; u++) {
				size_t i = base + (size_t)u * nthr;
				if (i < nv)
					vd[i] = x[u];
			}
		}
		done = nv * 16;
	}
	for (size_t i = done + tid; i < bytes; i += nthr)
		((char *)d)[i] = ((const char *)s)[i];
}
