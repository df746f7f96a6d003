/* SPDX-License-Identifier: MIT */
#include "coll/reduce.h"

#include <stdint.h>

#include "coll/half.h"

/* One kernel per (type, op), generated; each a single loop the compiler
 * vectorizes at -O2 -ftree-vectorize / -O3. */
#define OP_SUM(x, y)  ((x) + (y))
#define OP_PROD(x, y) ((x) * (y))
#define OP_MIN(x, y)  ((y) < (x) ? (y) : (x))
#define OP_MAX(x, y)  ((y) > (x) ? (y) : (x))

#define KERNEL(name, T, OP)                                                    \
	static void name(T *dst, const T *a, const T *b, size_t n)             \
	{                                                                      \
		for (size_t i = 0; i < n; i++)                                 \
			dst[i] = OP(a[i], b[i]);                               \
	}

#define KERNELS(tname, T)                                                      \
	KERNEL(sum_##tname, T, OP_SUM)                                         \
	KERNEL(prod_##tname, T, OP_PROD)                                       \
	KERNEL(min_##tname, T, OP_MIN)                                         \
	KERNEL(max_##tname, T, OP_MAX)

KERNELS(f32, float)
KERNELS(f64, double)
/* Signed integers: sum and product on the unsigned twin (wrap-around is
 * defined there and bit-identical); min and max need the sign. */
KERNEL(sum_i32, uint32_t, OP_SUM)
KERNEL(prod_i32, uint32_t, OP_PROD)
KERNEL(min_i32, int32_t, OP_MIN)
KERNEL(max_i32, int32_t, OP_MAX)
KERNEL(sum_i64, uint64_t, OP_SUM)
KERNEL(prod_i64, uint64_t, OP_PROD)
KERNEL(min_i64, int64_t, OP_MIN)
KERNEL(max_i64, int64_t, OP_MAX)
KERNEL(sum_i8, uint8_t, OP_SUM)
KERNEL(prod_i8, uint8_t, OP_PROD)
KERNEL(min_i8, int8_t, OP_MIN)
KERNEL(max_i8, int8_t, OP_MAX)
/* uint8 products are taken in int after promotion: 255 * 255 fits. */
KERNELS(u8, uint8_t)

/* 16-bit floats: widened to float, reduced, rounded once (to nearest even).
 * float's 24 bits are at least 2p+2 for both (p = 11 and 8), so rounding
 * the float result again gives the correctly rounded 16-bit sum; products
 * of two 16-bit floats are exact in float, min and max exact anyway. */
#define KERNEL16(name, OP, to32, to16)                                         \
	static void name(uint16_t *dst, const uint16_t *a, const uint16_t *b,  \
	                 size_t n)                                             \
	{                                                                      \
		for (size_t i = 0; i < n; i++) {                               \
			float x = to32(a[i]), y = to32(b[i]);                  \
			dst[i] = to16(OP(x, y));                               \
		}                                                              \
	}

#define KERNELS16(tname, to32, to16)                                           \
	KERNEL16(sum_##tname, OP_SUM, to32, to16)                              \
	KERNEL16(prod_##tname, OP_PROD, to32, to16)                            \
	KERNEL16(min_##tname, OP_MIN, to32, to16)                              \
	KERNEL16(max_##tname, OP_MAX, to32, to16)

KERNELS16(f16, cb_f16_to_f32, cb_f32_to_f16)
KERNELS16(bf16, cb_bf16_to_f32, cb_f32_to_bf16)

void cb_reduce(enum cb_dtype dt, enum cb_op op, void *dst, const void *a,
               const void *b, size_t n)
{
#define DISPATCH(tname, T, UT)                                                 \
	switch (op) {                                                          \
	case CB_OP_SUM:                                                        \
		sum_##tname((UT *)dst, (const UT *)a, (const UT *)b, n);       \
		return;                                                        \
	case CB_OP_PROD:                                                       \
		prod_##tname((UT *)dst, (const UT *)a, (const UT *)b, n);      \
		return;                                                        \
	case CB_OP_MIN:                                                        \
		min_##tname((T *)dst, (const T *)a, (const T *)b, n);          \
		return;                                                        \
	case CB_OP_MAX:                                                        \
		max_##tname((T *)dst, (const T *)a, (const T *)b, n);          \
		return;                                                        \
	default:                                                               \
		return;                                                        \
	}
	switch (dt) {
	case CB_DT_FLOAT32:
		DISPATCH(f32, float, float)
	case CB_DT_FLOAT64:
		DISPATCH(f64, double, double)
	case CB_DT_INT32:
		DISPATCH(i32, int32_t, uint32_t)
	case CB_DT_INT64:
		DISPATCH(i64, int64_t, uint64_t)
	case CB_DT_INT8:
		DISPATCH(i8, int8_t, uint8_t)
	case CB_DT_UINT8:
		DISPATCH(u8, uint8_t, uint8_t)
	case CB_DT_FLOAT16:
		DISPATCH(f16, uint16_t, uint16_t)
	case CB_DT_BFLOAT16:
		DISPATCH(bf16, uint16_t, uint16_t)
	default:
		return;
	}
#undef DISPATCH
}
