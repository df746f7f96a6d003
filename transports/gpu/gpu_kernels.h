/* SPDX-License-Identifier: MIT */
/*
 * transports/gpu/gpu_kernels.h - the device kernels' names, from one list
 * that both the CUDA source (gpu_kern.cu, which defines them) and the
 * dispatch table (gpu_cuda.c, which looks them up in the embedded fatbin)
 * expand, so a kernel cannot exist under one name and be looked up under
 * another.
 *
 * Reductions: one kernel per (datatype, op), named cb_gpu_<op>_<type>,
 * void (void *dst, const void *a, const void *b, size_t count):
 * dst[i] = a[i] OP b[i].  The fused receive-and-reduce is the same kernel
 * with b the sender's buffer, mapped here through CUDA IPC.  Copy:
 * cb_gpu_copy(void *dst, const void *src, size_t bytes), the load/store
 * alternative to the copy engine.
 *
 * GPU_DTYPES(X): X(enum suffix, short name, element type, the type sums and
 * products run on (the unsigned twin of a signed integer: wrap-around is
 * defined there and bit-identical, as in coll/reduce.c)).
 */
#ifndef CB_GPU_KERNELS_H
#define CB_GPU_KERNELS_H

#define GPU_DTYPES(X)                                                          \
	X(FLOAT32, f32, float, float)                                          \
	X(FLOAT64, f64, double, double)                                        \
	X(INT32, i32, int32_t, uint32_t)                                       \
	X(INT64, i64, int64_t, uint64_t)                                       \
	X(INT8, i8, int8_t, uint8_t)                                           \
	X(UINT8, u8, uint8_t, uint8_t)                                         \
	X(FLOAT16, f16, __half, __half)                                        \
	X(BFLOAT16, bf16, __nv_bfloat16, __nv_bfloat16)

/* X(enum suffix, short name) */
#define GPU_OPS(X)                                                             \
	X(SUM, sum)                                                            \
	X(PROD, prod)                                                          \
	X(MIN, min)                                                            \
	X(MAX, max)

#define GPU_KERNEL_NAME(op, type) "cb_gpu_" #op "_" #type
#define GPU_COPY_KERNEL           "cb_gpu_copy"

/* Threads per block of every kernel. */
#define GPU_THREADS 512

#endif
