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
	static void name(void *dst_, const void *a_, const void *b_, size_t n) \
	{                                                                      \
		T *dst = dst_;                                                 \
		const T *a = a_, *b = b_;                                      \
		for (size_t i = 0; i < n; i++)                                 \
			dst[i] = OP(a[i], b[i]);                               \
	}

/* Sum and product on @UT, min and max on @T.  Signed integers: sum and
 * product on the unsigned twin (wrap-around is defined there and
 * bit-identical); min and max need the sign.  uint8 products are taken in
 * int after promotion: 255 * 255 fits. */
#define KERNELS(id, tname, T, UT)                                              \
	KERNEL(sum_##tname, UT, OP_SUM)                                        \
	KERNEL(prod_##tname, UT, OP_PROD)                                      \
	KERNEL(min_##tname, T, OP_MIN)                                         \
	KERNEL(max_##tname, T, OP_MAX)

/* 16-bit floats: widened to float, reduced, rounded once (to nearest even).
 * float's 24 bits are at least 2p+2 for both (p = 11 and 8), so rounding
 * the float result again gives the correctly rounded 16-bit sum; products
 * of two 16-bit floats are exact in float, min and max exact anyway. */
#define KERNEL16(name, OP, to32, to16)                                         \
	static void name(void *dst_, const void *a_, const void *b_, size_t n) \
	{                                                                      \
		uint16_t *dst = dst_;                                          \
		const uint16_t *a = a_, *b = b_;                               \
		for (size_t i = 0; i < n; i++) {                               \
			float x = to32(a[i]), y = to32(b[i]);                  \
			dst[i] = to16(OP(x, y));                               \
		}                                                              \
	}

#define KERNELS16(id, tname, to32, to16)                                       \
	KERNEL16(sum_##tname, OP_SUM, to32, to16)                              \
	KERNEL16(prod_##tname, OP_PROD, to32, to16)                            \
	KERNEL16(min_##tname, OP_MIN, to32, to16)                              \
	KERNEL16(max_##tname, OP_MAX, to32, to16)

/* The types cb_reduce takes, once: X(dtype, kernels' name, T, UT) as for
 * KERNELS, X16(dtype, name, widen, round) for the 16-bit floats. */
#define REDUCE_TYPES(X, X16)                                                   \
	X(FLOAT32, f32, float, float)                                          \
	X(FLOAT64, f64, double, double)                                        \
	X(INT32, i32, int32_t, uint32_t)                                       \
	X(INT64, i64, int64_t, uint64_t)                                       \
	X(INT8, i8, int8_t, uint8_t)                                           \
	X(UINT8, u8, uint8_t, uint8_t)                                         \
	X16(FLOAT16, f16, cb_f16_to_f32, cb_f32_to_f16)                        \
	X16(BFLOAT16, bf16, cb_bf16_to_f32, cb_f32_to_bf16)

REDUCE_TYPES(KERNELS, KERNELS16)

typedef void (*kernel_fn)(void *dst, const void *a, const void *b, size_t n);

#define ROW(id, tname, x, y)                                                   \
	[CB_DT_##id] = { [CB_OP_SUM] = sum_##tname,                            \
		         [CB_OP_PROD] = prod_##tname,                          \
		         [CB_OP_MIN] = min_##tname,                            \
		         [CB_OP_MAX] = max_##tname },
static const kernel_fn kernels[CB_DT_COUNT][CB_OP_COUNT] = { REDUCE_TYPES(
	ROW, ROW) };
#undef ROW

void cb_reduce(enum cb_dtype dt, enum cb_op op, void *dst, const void *a,
               const void *b, size_t n)
{
	if ((unsigned)dt < CB_DT_COUNT && (unsigned)op < CB_OP_COUNT &&
	    kernels[dt][op])
		kernels[dt][op](dst, a, b, n);
}
