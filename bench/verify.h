/* SPDX-License-Identifier: MIT */
/*
 * bench/verify.h - deterministic inputs and independently computed expected
 * results, compared bit for bit.
 *
 * Input of rank r at index i is a small integer (so every float sum and
 * product below is exact): sum (r+1)*((i%11)-5); prod 2, -1 or 1 by
 * (i+r) mod 5 and 7; min and max ((7i+13r) mod 101)-50.  The expected value
 * is computed with plain scalar arithmetic over all ranks (a closed form for
 * sum), never with the reduction kernels under test.
 */
#ifndef CB_BENCH_VERIFY_H
#define CB_BENCH_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include <collbench/types.h>

void cb_fill(enum cb_dtype dt, enum cb_op op, int rank, void *buf,
             size_t count);
/* Number of elements of @buf that differ from the allreduce of @nranks
 * ranks' inputs. */
uint64_t cb_check_allreduce(enum cb_dtype dt, enum cb_op op, int nranks,
                            const void *buf, size_t count);
/* The input value itself (exposed for the unit tests). */
int64_t cb_input_value(enum cb_op op, int rank, size_t i);

#endif
