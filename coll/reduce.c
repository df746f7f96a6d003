/* SPDX-License-Identifier: MIT */
#include "coll/reduce.h"

#include <stdint.h>

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
	default:
		return;
	}
#undef DISPATCH
}
