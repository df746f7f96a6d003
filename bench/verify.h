/* SPDX-License-Identifier: MIT */
/*
 * bench/verify.h - deterministic inputs for every collective and the
 * results they must give, computed independently and compared bit for bit.
 *
 * The driver calls cb_verify_poison(recvbuf), then cb_verify_fill(sendbuf)
 * (in place the send buffer overlaps the receive buffer, as coll/coll.h
 * says, and the fill overwrites the poison there), runs the collective
 * once and counts the wrong elements with cb_verify_check(recvbuf).
 *
 * Moving collectives (allgather, broadcast, alltoall, sendrecv, pingpong)
 * carry "data": element j from group index s (to d, for alltoall) is a
 * 64-bit hash of (s, d, j) cut to the type's width; for the floating types
 * the exponent is then forced into the normal range (never infinity, NaN,
 * zero or subnormal), so no step may turn the bits into another value.
 * Every element of every source differs from its neighbours with
 * overwhelming probability, so wrong offsets, wrong sources (the root's
 * data, not a non-root's own) and partial copies all show.
 *
 * Reducing collectives (allreduce, reduce, reduce_scatter) carry "inputs":
 * integers that every type holds exactly, chosen so that every partial
 * reduction, in any order, is exact too, for groups up to 256 reduced
 * ranks (and beyond: see sum).  With h a hash of (rank, op, i mod 4093):
 *
 *   type               sum               prod              min, max
 *   int8/32/64, uint8  h, full width     h | 1 (odd)       h, full width
 *   float16            -8..8             -1, 1, 2          -2048..2048
 *   bfloat16           -1..1             -1, 1, 2          -256..256
 *   float32            -2^16..2^16       -1, 1, 2          -2^24..2^24
 *   float64            -2^45..2^45       -1, 1, 2          -2^53..2^53
 *
 * Integers wrap (sums and products modulo 2^bits, which any order gives
 * alike); min and max compare signed or unsigned as the type does.  Float
 * sums stay within the integers the type holds exactly (2^11, 2^8, 2^24,
 * 2^53 = 256 ranks times the bound); with more than 256 reduced ranks only
 * 256 of them, a different set at each index, contribute non-zero values.
 * Float products are signed powers of two, exact up to overflow, and once
 * infinite stay infinite with the right sign whatever the order (no factor
 * is below 1 in magnitude, none is zero); float16 overflows past 15 twos.
 * No input or partial result is -0, so min and max never meet +0 and -0.
 * The index enters as i mod 4093 (a prime, so no power-of-two chunking
 * lines up with it) and through a per-index sign: at a hashed half of the
 * indices every input is negated (integer sums, min and max: complemented,
 * which reverses their order without overflow), for prod only rank 0's, so
 * a block moved by a multiple of 4093 still shows.
 *
 * The expected results are computed here with scalar integer arithmetic
 * (uint64 modulo 2^64, then cut; counts of twos and minus ones for the
 * float products) and encoded into the type's bits by hand, never with the
 * reduction kernels under test.  Because inputs repeat with the index mod
 * 4093, checking a reduction costs O(min(count, 4093) * ranks + count).
 */
#ifndef CB_BENCH_VERIFY_H
#define CB_BENCH_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include <collbench/types.h>

#include "coll/coll.h"

struct cb_verify {
	enum cb_coll coll;
	enum cb_dtype dtype;
	enum cb_op op; /* reducing collectives only */
	int n;         /* ranks in the group */
	int me;        /* this rank's index in the group */
	int root;      /* broadcast and reduce: group index of the root */
	/* Ranks whose inputs are reduced: group indices 0..nin-1 (0 means
	 * n).  A parameter server with K dedicated servers has nin = n - K:
	 * the server ranks (me >= nin) hold no result to check and their
	 * input is not part of anyone's result.  Reducing collectives only. */
	int nin;
	size_t count; /* as the table in coll/coll.h defines it */
};

/* Fill this rank's send buffer (cb_coll_send_elems(coll, count, n)
 * elements); every rank fills, a broadcast's non-roots with their own
 * data. */
void cb_verify_fill(const struct cb_verify *v, void *sendbuf);
/* Make every element of this rank's receive buffer (cb_coll_recv_elems
 * elements) differ from its expected value (its bitwise complement), so a
 * collective that writes nothing is caught.  Writes nothing where this rank
 * has no result (see cb_verify_check), so @recvbuf may be NULL there. */
void cb_verify_poison(const struct cb_verify *v, void *recvbuf);
/* Number of elements of this rank's result that differ bit for bit from
 * the expected value; 0 where this rank has no result (reduce on a
 * non-root, barrier, server ranks me >= nin, pingpong beyond ranks 0 and
 * 1). */
uint64_t cb_verify_check(const struct cb_verify *v, const void *recvbuf);

/*
 * The allreduce-only interface cli/sweep.c still uses: thin wrappers
 * over the above (cb_fill fills as rank @rank of an allreduce, and
 * cb_check_allreduce checks as its rank 0 on @nranks ranks), valid up to
 * 256 ranks.  To go once the driver uses struct cb_verify.
 */
void cb_fill(enum cb_dtype dt, enum cb_op op, int rank, void *buf,
             size_t count);
uint64_t cb_check_allreduce(enum cb_dtype dt, enum cb_op op, int nranks,
                            const void *buf, size_t count);
/*
 * The asynchronous parameter server's inputs and check (struct
 * cb_session's fill and check; @ctx points to the enum cb_dtype):
 * parameters start at i mod 13 and worker w's update is 1 + (i + 3w) mod
 * 5, so a copy that has counts[w] updates of each worker w must hold
 * exactly i mod 13 + sum of counts[w] (1 + (i + 3w) mod 5).
 */
void cb_verify_ps_fill(void *ctx, void *buf, size_t off, size_t n, int who);
uint64_t cb_verify_ps_check(void *ctx, const void *buf, size_t off, size_t n,
                            const uint64_t *counts, int nworkers);

/* Rank @rank's float32 allreduce input at @i (for the unit tests). */
int64_t cb_input_value(enum cb_op op, int rank, size_t i);

#endif
