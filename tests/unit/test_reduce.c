/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_reduce.c - every reduction kernel against a scalar
 * reference, at lengths around the vector widths, in place and out of place,
 * with wrap-around for integers and negative values for min and max.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "coll/reduce.h"

#define N 1031

static int64_t ref(enum cb_op op, int64_t a, int64_t b)
{
	switch (op) {
	case CB_OP_SUM:
		return a + b;
	case CB_OP_PROD:
		return a * b;
	case CB_OP_MIN:
		return a < b ? a : b;
	default:
		return a > b ? a : b;
	}
}

static int64_t val(int which, size_t i)
{
	/* Small signed integers, exact in every type. */
	return which ? (int64_t)((i * 7) % 23) - 11
	             : (int64_t)((i * 5) % 19) - 9;
}

#define TEST_TYPE(T, dt)                                                       \
	do {                                                                   \
		T a[N], b[N], d[N];                                            \
		for (int op = 0; op < CB_OP_COUNT; op++) {                     \
			for (size_t n = 0; n < N; n += (n < 40 ? 1 : 97)) {    \
				for (size_t i = 0; i < N; i++) {               \
					a[i] = (T)val(0, i);                   \
					b[i] = (T)val(1, i);                   \
					d[i] = (T)-77;                         \
				}                                              \
				cb_reduce(dt, op, d, a, b, n);                 \
				int bad = 0;                                   \
				for (size_t i = 0; i < n; i++)                 \
					bad |= d[i] != (T)ref(op, val(0, i),   \
					                      val(1, i));      \
				for (size_t i = n; i < N; i++)                 \
					bad |= d[i] != (T)-77;                 \
				CHECK(!bad);                                   \
				/* in place: dst == a */                       \
				cb_reduce(dt, op, a, a, b, n);                 \
				CHECK(!memcmp(a, d, n * sizeof(T)));           \
			}                                                      \
		}                                                              \
	} while (0)

int main(void)
{
	TEST_TYPE(float, CB_DT_FLOAT32);
	TEST_TYPE(double, CB_DT_FLOAT64);
	TEST_TYPE(int32_t, CB_DT_INT32);
	TEST_TYPE(int64_t, CB_DT_INT64);

	/* Integer sums and products wrap like the hardware. */
	int32_t x[3] = { INT32_MAX, INT32_MIN, 65536 }, y[3] = { 1, -1, 65536 },
	        z[3];
	cb_reduce(CB_DT_INT32, CB_OP_SUM, z, x, y, 3);
	CHECK(z[0] == INT32_MIN && z[1] == INT32_MAX);
	cb_reduce(CB_DT_INT32, CB_OP_PROD, z, x, y, 3);
	CHECK(z[2] == 0);
	int64_t p[1] = { INT64_MAX }, q[1] = { 1 }, r[1];
	cb_reduce(CB_DT_INT64, CB_OP_SUM, r, p, q, 1);
	CHECK(r[0] == INT64_MIN);
	/* min/max keep the sign */
	int32_t m1[2] = { -5, 7 }, m2[2] = { 3, -9 }, mo[2];
	cb_reduce(CB_DT_INT32, CB_OP_MIN, mo, m1, m2, 2);
	CHECK(mo[0] == -5 && mo[1] == -9);
	cb_reduce(CB_DT_INT32, CB_OP_MAX, mo, m1, m2, 2);
	CHECK(mo[0] == 3 && mo[1] == 7);
	return check_result("reduce");
}
