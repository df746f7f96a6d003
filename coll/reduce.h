/* SPDX-License-Identifier: MIT */
/*
 * coll/reduce.h - reduction kernels: dst[i] = a[i] OP b[i].
 *
 * @dst may be @a (accumulate in place); @b never overlaps either.  Plain
 * loops over restrict-free pointers that gcc and clang vectorize (with a
 * run-time overlap check); integer sums and products wrap, as two's
 * complement hardware does, instead of being undefined.  float16 and
 * bfloat16 are widened to float, reduced, and rounded once to nearest even
 * (NaN stays NaN, overflow gives infinity): for sums and products the
 * correctly rounded 16-bit result (conversions in coll/half.h).
 */
#ifndef CB_COLL_REDUCE_H
#define CB_COLL_REDUCE_H

#include <stddef.h>

#include <collbench/types.h>

void cb_reduce(enum cb_dtype dt, enum cb_op op, void *dst, const void *a,
               const void *b, size_t count);

#endif
