/* SPDX-License-Identifier: MIT */
#include "bench/verify.h"

#include <string.h>

int64_t cb_input_value(enum cb_op op, int rank, size_t i)
{
	switch (op) {
	case CB_OP_SUM:
		return (int64_t)(rank + 1) * ((int64_t)(i % 11) - 5);
	case CB_OP_PROD:
		if ((i + (size_t)rank) % 7 == 0)
			return -1;
		return (i + (size_t)rank) % 5 == 0 ? 2 : 1;
	default:
		return (int64_t)((7 * (i % 101) + 13 * (size_t)rank) % 101) -
		       50;
	}
}

static int64_t expected(enum cb_op op, int n, size_t i)
{
	int64_t acc;

	if (op == CB_OP_SUM)
		return ((int64_t)(i % 11) - 5) * (int64_t)n * (n + 1) / 2;
	acc = cb_input_value(op, 0, i);
	for (int r = 1; r < n; r++) {
		int64_t v = cb_input_value(op, r, i);
		if (op == CB_OP_PROD)
			acc *= v;
		else if (op == CB_OP_MIN)
			acc = v < acc ? v : acc;
		else
			acc = v > acc ? v : acc;
	}
	return acc;
}

/* Store an integer as the datatype; all values used are exact in each. */
static inline void store(enum cb_dtype dt, void *buf, size_t i, int64_t v)
{
	switch (dt) {
	case CB_DT_FLOAT32:
		((float *)buf)[i] = (float)v;
		break;
	case CB_DT_FLOAT64:
		((double *)buf)[i] = (double)v;
		break;
	case CB_DT_INT32:
		((int32_t *)buf)[i] = (int32_t)v;
		break;
	case CB_DT_INT64:
		((int64_t *)buf)[i] = v;
		break;
	default:
		break;
	}
}

void cb_fill(enum cb_dtype dt, enum cb_op op, int rank, void *buf, size_t count)
{
	for (size_t i = 0; i < count; i++)
		store(dt, buf, i, cb_input_value(op, rank, i));
}

uint64_t cb_check_allreduce(enum cb_dtype dt, enum cb_op op, int n,
                            const void *buf, size_t count)
{
	size_t es = cb_dtype_bytes(dt);
	uint64_t wrong = 0;
	char want[8];

	for (size_t i = 0; i < count; i++) {
		store(dt, want, 0, expected(op, n, i));
		if (memcmp(want, (const char *)buf + i * es, es))
			wrong++;
	}
	return wrong;
}
