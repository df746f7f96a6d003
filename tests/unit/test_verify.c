/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_verify.c - the result check of every collective against
 * a simulation written here: each rank's send buffer is filled, every
 * rank's result computed from all of them with plain integer and double
 * arithmetic (copies, for the moving collectives) and stored into the
 * type; the check must pass it, count every element of a poisoned buffer
 * and see a single flipped bit.  Also: the in-place layouts, parameter
 * servers (nin < n), reductions in several orders with the real kernels
 * (the inputs promise bit-identical results in any order), and the value
 * ranges bench/verify.h documents.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench/verify.h"
#include "check.h"
#include "coll/reduce.h"

static const int sizes[] = { 1, 2, 3, 5, 8 };
#define NSIZES (int)(sizeof(sizes) / sizeof(sizes[0]))
#define PERIOD 4093 /* bench/verify.c's */

static int is_float(enum cb_dtype dt)
{
	return dt == CB_DT_FLOAT32 || dt == CB_DT_FLOAT64 ||
	       dt == CB_DT_FLOAT16 || dt == CB_DT_BFLOAT16;
}

/* binary16 and bfloat16 by hand: fraction and exponent bits */
static void fmt16(enum cb_dtype dt, int *mbits, int *ebits)
{
	*mbits = dt == CB_DT_FLOAT16 ? 10 : 7;
	*ebits = dt == CB_DT_FLOAT16 ? 5 : 8;
}

static double getd(enum cb_dtype dt, const void *buf, size_t i)
{
	const char *p = (const char *)buf + i * cb_dtype_bytes(dt);
	float f;
	double d;
	uint16_t h;
	int mbits, ebits, e, bias;

	switch (dt) {
	case CB_DT_FLOAT32:
		memcpy(&f, p, 4);
		return f;
	case CB_DT_FLOAT64:
		memcpy(&d, p, 8);
		return d;
	default:
		memcpy(&h, p, 2);
		fmt16(dt, &mbits, &ebits);
		bias = (1 << (ebits - 1)) - 1;
		e = (h >> mbits) & ((1 << ebits) - 1);
		d = h & ((1 << mbits) - 1);
		if (e == (1 << ebits) - 1)
			d = d ? NAN : INFINITY;
		else if (e)
			d = ldexp(d + ldexp(1, mbits), e - bias - mbits);
		else
			d = ldexp(d, 1 - bias - mbits);
		return (h & 0x8000) ? -d : d;
	}
}

static int inexact; /* results the type could not hold exactly */

/* Store @x, which must be exact in the type or beyond its largest finite
 * value (then infinity). */
static void setd(enum cb_dtype dt, void *buf, size_t i, double x)
{
	char *p = (char *)buf + i * cb_dtype_bytes(dt);
	int mbits, ebits, bias, e;
	uint16_t h;
	float f;

	if (dt == CB_DT_FLOAT64) {
		memcpy(p, &x, 8);
		return;
	}
	if (dt == CB_DT_FLOAT32) {
		f = fabs(x) < 0x1p128 ? (float)x : x < 0 ? -INFINITY : INFINITY;
		inexact += fabs(x) < 0x1p128 && (double)f != x;
		memcpy(p, &f, 4);
		return;
	}
	fmt16(dt, &mbits, &ebits);
	bias = (1 << (ebits - 1)) - 1;
	h = signbit(x) ? 0x8000 : 0;
	if (fabs(x) >= ldexp(1, bias + 1)) {
		h |= (uint16_t)(((1 << ebits) - 1) << mbits);
	} else if (x != 0) {
		e = ilogb(x);
		double m = ldexp(fabs(x), mbits - e);
		inexact += e < 1 - bias || m != floor(m);
		h |= (uint16_t)((e + bias) << mbits) |
		     (uint16_t)((uint64_t)m & ((1u << mbits) - 1));
	}
	memcpy(p, &h, 2);
}

/* Integers as the type reads them (signed or not), and stored cut. */
static int64_t geti(enum cb_dtype dt, const void *buf, size_t i)
{
	const char *p = (const char *)buf + i * cb_dtype_bytes(dt);
	int8_t b;
	uint8_t u;
	int32_t w;
	int64_t x;

	switch (dt) {
	case CB_DT_INT8:
		memcpy(&b, p, 1);
		return b;
	case CB_DT_UINT8:
		memcpy(&u, p, 1);
		return u;
	case CB_DT_INT32:
		memcpy(&w, p, 4);
		return w;
	default:
		memcpy(&x, p, 8);
		return x;
	}
}

static void seti(enum cb_dtype dt, void *buf, size_t i, uint64_t x)
{
	memcpy((char *)buf + i * cb_dtype_bytes(dt), &x, cb_dtype_bytes(dt));
}

/* out[j] = OP over ranks g < nin of send[g][base + j], exactly. */
static void ref_reduce(enum cb_dtype dt, enum cb_op op, char **send, int nin,
                       size_t base, size_t cnt, void *out)
{
	for (size_t j = 0; j < cnt; j++) {
		if (is_float(dt)) {
			double acc = getd(dt, send[0], base + j);
			for (int g = 1; g < nin; g++) {
				double x = getd(dt, send[g], base + j);
				acc = op == CB_OP_SUM    ? acc + x
				      : op == CB_OP_PROD ? acc * x
				      : op == CB_OP_MIN  ? fmin(acc, x)
				                         : fmax(acc, x);
			}
			setd(dt, out, j, acc);
			continue;
		}
		int64_t acc = geti(dt, send[0], base + j);
		for (int g = 1; g < nin; g++) {
			int64_t x = geti(dt, send[g], base + j);
			acc = op == CB_OP_SUM
			              ? (int64_t)((uint64_t)acc + (uint64_t)x)
			      : op == CB_OP_PROD
			              ? (int64_t)((uint64_t)acc * (uint64_t)x)
			      : op == CB_OP_MIN ? (x < acc ? x : acc)
			                        : (x > acc ? x : acc);
		}
		seti(dt, out, j, (uint64_t)acc);
	}
}

/* Does rank @me of @v hold a result (its own simulation of the rules)? */
static int has_result(const struct cb_verify *v, int nin)
{
	switch (v->coll) {
	case CB_COLL_BARRIER:
		return 0;
	case CB_COLL_REDUCE:
		return v->me == v->root && v->me < nin;
	case CB_COLL_ALLREDUCE:
	case CB_COLL_REDUCE_SCATTER:
		return v->me < nin;
	case CB_COLL_PINGPONG:
		return v->me < 2 && v->n >= 2;
	default:
		return 1;
	}
}

/* What rank v->me must receive, from every rank's send buffer. */
static void simulate(const struct cb_verify *v, int nin, char **send,
                     void *recv)
{
	size_t es = cb_dtype_bytes(v->dtype), c = v->count;
	int n = v->n, me = v->me;

	switch (v->coll) {
	case CB_COLL_ALLREDUCE:
	case CB_COLL_REDUCE:
		ref_reduce(v->dtype, v->op, send, nin, 0, c, recv);
		break;
	case CB_COLL_REDUCE_SCATTER:
		ref_reduce(v->dtype, v->op, send, nin, (size_t)me * c, c, recv);
		break;
	case CB_COLL_ALLGATHER:
		for (int s = 0; s < n; s++)
			memcpy((char *)recv + s * c * es, send[s], c * es);
		break;
	case CB_COLL_BROADCAST:
		memcpy(recv, send[v->root], c * es);
		break;
	case CB_COLL_ALLTOALL:
		for (int s = 0; s < n; s++)
			memcpy((char *)recv + s * c * es,
			       send[s] + (size_t)me * c * es, c * es);
		break;
	case CB_COLL_SENDRECV:
		memcpy(recv, send[(me - 1 + n) % n], c * es);
		break;
	case CB_COLL_PINGPONG:
		if (me < 2 && n >= 2)
			memcpy(recv, send[1 - me], c * es);
		break;
	default:
		break;
	}
}

static char **fill_all(struct cb_verify v, size_t send_bytes)
{
	char **send = calloc((size_t)v.n, sizeof(*send));

	for (int g = 0; g < v.n; g++) {
		send[g] = malloc(send_bytes + 1);
		v.me = g;
		cb_verify_fill(&v, send[g]);
	}
	return send;
}

static void free_all(char **send, int n)
{
	for (int g = 0; g < n; g++)
		free(send[g]);
	free(send);
}

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/*
 * One collective, type, op and group: every rank (or a sample, on large
 * groups) checks its simulated result (0 wrong), a planted error (1), its
 * poisoned buffer (all wrong) and, where it has no result, garbage (0).
 */
static void run_case(enum cb_coll coll, enum cb_dtype dt, enum cb_op op, int n,
                     int nin, int root, size_t count)
{
	struct cb_verify v = { coll, dt, op, n, 0, root, nin, count };
	int nin_eff = nin ? nin : n;
	size_t es = cb_dtype_bytes(dt);
	size_t se = cb_coll_send_elems(coll, count, n);
	size_t re = cb_coll_recv_elems(coll, count, n);
	char **send = fill_all(v, se * es);
	char *recv = malloc(re * es + 1);
	int bad_ok = 0, bad_plant = 0, bad_poison = 0, bad_none = 0;

	for (int me = 0; me < n; me++) {
		if (n > 8 && me > 2 && me != root && me != n - 1 &&
		    me != nin_eff - 1 && me != nin_eff)
			continue;
		v.me = me;
		if (!has_result(&v, nin_eff)) {
			memset(recv, 0x5a, re * es);
			bad_none |= cb_verify_check(&v, recv) != 0;
			cb_verify_poison(&v, NULL); /* touches nothing */
			continue;
		}
		simulate(&v, nin_eff, send, recv);
		bad_ok |= cb_verify_check(&v, recv) != 0;
		if (re) {
			size_t k = next() % re;
			size_t bit = next() % (8 * es);
			recv[k * es + bit / 8] ^= (char)(1 << (bit % 8));
			bad_plant |= cb_verify_check(&v, recv) != 1;
		}
		cb_verify_poison(&v, recv);
		bad_poison |= cb_verify_check(&v, recv) != re;
	}
	CHECK(!bad_ok);
	CHECK(!bad_plant);
	CHECK(!bad_poison);
	CHECK(!bad_none);
	free(recv);
	free_all(send, n);
}

static void test_all_collectives(void)
{
	for (int c = 0; c < CB_COLL_COUNT; c++) {
		int red = cb_coll_reduces(c);
		for (int dt = 0; dt < CB_DT_COUNT; dt++) {
			for (int op = 0; op < (red ? CB_OP_COUNT : 1); op++) {
				for (int s = 0; s < NSIZES; s++) {
					int n = sizes[s];
					if (c == CB_COLL_PINGPONG && n != 2)
						continue;
					for (int root = 0; root < n;
					     root +=
					     (cb_coll_rooted(c) ? 1 : n))
						run_case(c, dt, op, n, 0, root,
						         37);
				}
				/* a large group, a count past the period */
				if (c != CB_COLL_PINGPONG)
					run_case(c, dt, op, 256, 0, 255, 9);
				run_case(c, dt, op, 2, 0, 1, 2 * PERIOD + 5);
			}
		}
	}
	/* no elements at all */
	run_case(CB_COLL_ALLREDUCE, CB_DT_FLOAT32, CB_OP_SUM, 3, 0, 0, 0);
	run_case(CB_COLL_ALLTOALL, CB_DT_INT8, CB_OP_SUM, 3, 0, 0, 0);
}

/* Parameter servers: ranks nin.. hold no result, and their inputs are
 * not in anyone's. */
static void test_servers(void)
{
	static const enum cb_coll red[] = { CB_COLL_ALLREDUCE,
		                            CB_COLL_REDUCE_SCATTER,
		                            CB_COLL_REDUCE };

	for (int c = 0; c < 3; c++)
		for (int dt = 0; dt < CB_DT_COUNT; dt++)
			for (int op = 0; op < CB_OP_COUNT; op++) {
				run_case(red[c], dt, op, 5, 3, 0, 41);
				run_case(red[c], dt, op, 8, 6, 5, 41);
				run_case(red[c], dt, op, 8, 7, 7, 41);
			}

	/* the servers' inputs included: wrong */
	for (int dt = 0; dt < CB_DT_COUNT; dt++) {
		for (int op = 0; op < CB_OP_COUNT; op++) {
			struct cb_verify v = {
				CB_COLL_ALLREDUCE, dt, op, 5, 1, 0, 3, 64
			};
			size_t es = cb_dtype_bytes(dt);
			char **send = fill_all(v, 64 * es);
			char *recv = malloc(64 * es);
			ref_reduce(dt, op, send, 5, 0, 64, recv);
			CHECK(cb_verify_check(&v, recv) > 0);
			ref_reduce(dt, op, send, 3, 0, 64, recv);
			CHECK(cb_verify_check(&v, recv) == 0);
			free(recv);
			free_all(send, 5);
		}
	}
}

/* In place: poison the receive buffer, fill the send buffer inside it,
 * run (simulated), check.  What the fill leaves must be right where the
 * layout says the rank's own contribution sits, and poisoned elsewhere. */
static void test_in_place(void)
{
	for (int dt = 0; dt < CB_DT_COUNT; dt++) {
		size_t es = cb_dtype_bytes(dt), c = 29;
		for (int s = 0; s < NSIZES; s++) {
			int n = sizes[s];
			for (int me = 0; me < n; me++) {
				/* allgather: sendbuf = recvbuf + me * count */
				struct cb_verify v = { CB_COLL_ALLGATHER,
					               dt,
					               CB_OP_SUM,
					               n,
					               me,
					               0,
					               0,
					               c };
				char **send = fill_all(v, c * es);
				char *buf = malloc(n * c * es);
				cb_verify_poison(&v, buf);
				cb_verify_fill(&v, buf + me * c * es);
				CHECK(cb_verify_check(&v, buf) == (n - 1) * c);
				for (int r = 0; r < n; r++)
					if (r != me)
						memcpy(buf + r * c * es,
						       send[r], c * es);
				CHECK(cb_verify_check(&v, buf) == 0);
				free_all(send, n);
				free(buf);

				/* reduce_scatter: recvbuf = sendbuf + me *
				 * count */
				for (int op = 0; op < CB_OP_COUNT; op++) {
					v.coll = CB_COLL_REDUCE_SCATTER;
					v.op = op;
					send = fill_all(v, n * c * es);
					buf = malloc(n * c * es);
					cb_verify_poison(&v, buf + me * c * es);
					cb_verify_fill(&v, buf);
					CHECK(!memcmp(buf, send[me],
					              n * c * es));
					ref_reduce(dt, op, send, n, me * c, c,
					           buf + me * c * es);
					CHECK(cb_verify_check(
					              &v, buf + me * c * es) ==
					      0);
					free_all(send, n);
					free(buf);
				}

				/* broadcast: sendbuf = recvbuf; a non-root's
				 * own data is wrong everywhere */
				v.coll = CB_COLL_BROADCAST;
				v.root = n - 1;
				send = fill_all(v, c * es);
				buf = malloc(c * es);
				cb_verify_poison(&v, buf);
				cb_verify_fill(&v, buf);
				CHECK(me == v.root
				              ? cb_verify_check(&v, buf) == 0
				              : cb_verify_check(&v, buf) >
				                        c / 2);
				memcpy(buf, send[v.root], c * es);
				CHECK(cb_verify_check(&v, buf) == 0);
				free_all(send, n);
				free(buf);
			}
		}
	}
}

/* The inputs promise the same bits in any order of reduction: reduce
 * with the kernels rank by rank forward, backward, from the middle, and as
 * a binary tree. */
static void test_orders(int n, size_t count)
{
	for (int dt = 0; dt < CB_DT_COUNT; dt++) {
		size_t es = cb_dtype_bytes(dt);
		for (int op = 0; op < CB_OP_COUNT; op++) {
			struct cb_verify v = {
				CB_COLL_ALLREDUCE, dt, op, n, 0, 0, 0, count
			};
			char **send = fill_all(v, count * es);
			char *acc = malloc(count * es);
			int bad = 0;
			for (int start = 0; start < 3; start++) {
				int g0 = start == 0   ? 0
				         : start == 1 ? n / 2
				                      : n - 1;
				memcpy(acc, send[g0], count * es);
				for (int k = 1; k < n; k++) {
					int g = start == 2 ? n - 1 - k
					                   : (g0 + k) % n;
					cb_reduce(dt, op, acc, acc, send[g],
					          count);
				}
				bad |= cb_verify_check(&v, acc) != 0;
			}
			for (int step = 1; step < n; step *= 2)
				for (int g = 0; g + step < n; g += 2 * step)
					cb_reduce(dt, op, send[g], send[g],
					          send[g + step], count);
			bad |= cb_verify_check(&v, send[0]) != 0;
			CHECK(!bad);
			free(acc);
			free_all(send, n);
		}
	}
}

/* Float sums over more than 256 ranks: at most 256 non-zero inputs at
 * any index, so no partial sum leaves the exact range. */
static void test_sparse(int n)
{
	for (int dt = 0; dt < CB_DT_COUNT; dt++) {
		if (!is_float(dt))
			continue;
		enum { C = 200 };
		struct cb_verify v = {
			CB_COLL_ALLREDUCE, dt, CB_OP_SUM, n, 0, 0, 0, C
		};
		size_t es = cb_dtype_bytes(dt);
		char **send = fill_all(v, C * es);
		int most = 0, least = n;
		for (size_t i = 0; i < C; i++) {
			int nz = 0;
			for (int g = 0; g < n; g++)
				nz += getd(dt, send[g], i) != 0;
			most = nz > most ? nz : most;
			least = nz < least ? nz : least;
		}
		CHECK(most <= 256 && least > 0);
		free_all(send, n);
	}
}

/* The inputs stay within the bounds bench/verify.h documents, and the
 * data of the moving collectives are finite, normal floats. */
static void test_ranges(void)
{
	static const double sum_amp[] = {
		[CB_DT_FLOAT32] = 0x1p16,
		[CB_DT_FLOAT64] = 0x1p45,
		[CB_DT_FLOAT16] = 8,
		[CB_DT_BFLOAT16] = 1,
	};
	static const double mm_amp[] = {
		[CB_DT_FLOAT32] = 0x1p24,
		[CB_DT_FLOAT64] = 0x1p53,
		[CB_DT_FLOAT16] = 2048,
		[CB_DT_BFLOAT16] = 256,
	};
	enum { C = 5000 };
	static char buf[C * 8];

	/* integers: the full width; odd for products (which then never
	 * collapse to 0, however many ranks) */
	for (int dt = 0; dt < CB_DT_COUNT; dt++) {
		if (is_float(dt))
			continue;
		int bits = 8 * (int)cb_dtype_bytes(dt), sgn = dt != CB_DT_UINT8;
		for (int op = 0; op < CB_OP_COUNT; op++) {
			struct cb_verify v = {
				CB_COLL_ALLREDUCE, dt, op, 2, 1, 0, 0, C
			};
			int even = 0, wide = 0;
			cb_verify_fill(&v, buf);
			for (size_t i = 0; i < C; i++) {
				int64_t x = geti(dt, buf, i);
				uint64_t mag =
				        x < 0 ? 0 - (uint64_t)x : (uint64_t)x;
				even |= op == CB_OP_PROD && !(x & 1);
				wide |= mag >> (bits - sgn - 1);
			}
			CHECK(!even && wide);
		}
	}

	for (int dt = 0; dt < CB_DT_COUNT; dt++) {
		if (!is_float(dt))
			continue;
		for (int op = 0; op < CB_OP_COUNT; op++) {
			double lo = 0, hi = 0;
			int odd = 0;
			for (int g = 0; g < 8; g++) {
				struct cb_verify v = {
					CB_COLL_ALLREDUCE, dt, op, 8, g, 0, 0, C
				};
				cb_verify_fill(&v, buf);
				for (size_t i = 0; i < C; i++) {
					double x = getd(dt, buf, i);
					lo = x < lo ? x : lo;
					hi = x > hi ? x : hi;
					odd |= x != floor(x);
					if (op == CB_OP_PROD)
						odd |= x != 1 && x != -1 &&
						       x != 2 && x != -2;
				}
			}
			double amp = op == CB_OP_SUM    ? sum_amp[dt]
			             : op == CB_OP_PROD ? 2
			                                : mm_amp[dt];
			CHECK(!odd && lo >= -amp && hi <= amp);
			/* and they use much of the range */
			CHECK(lo <= -amp / 2 && hi >= amp / 2);
		}
		int bad = 0;
		for (int g = 0; g < 3; g++) {
			struct cb_verify v = {
				CB_COLL_ALLGATHER, dt, CB_OP_SUM, 3, g, 0, 0, C
			};
			cb_verify_fill(&v, buf);
			for (size_t i = 0; i < C; i++) {
				double x = fabs(getd(dt, buf, i));
				bad |= !isfinite(x) || x == 0;
				bad |= dt == CB_DT_FLOAT16 && x < 0x1p-14;
				bad |= dt == CB_DT_FLOAT32 && x < 0x1p-126;
				bad |= dt == CB_DT_FLOAT64 && x < 0x1p-1022;
				bad |= dt == CB_DT_BFLOAT16 && x < 0x1p-126;
			}
		}
		CHECK(!bad);
	}
}

/* Wrong places: a block moved by the period, the wrong block, the wrong
 * rank's data, the wrong receiver's. */
static void test_misplaced(void)
{
	for (int dt = 0; dt < CB_DT_COUNT; dt++) {
		size_t es = cb_dtype_bytes(dt);
		for (int op = 0; op < CB_OP_COUNT; op++) {
			/* allreduce, the result shifted by the period */
			size_t c = 3 * PERIOD;
			struct cb_verify v = {
				CB_COLL_ALLREDUCE, dt, op, 3, 0, 0, 0, c
			};
			char **send = fill_all(v, c * es);
			char *recv = malloc(c * es);
			ref_reduce(dt, op, send, 3, 0, c, recv);
			memmove(recv, recv + PERIOD * es, 2 * PERIOD * es);
			CHECK(cb_verify_check(&v, recv) > PERIOD / 4);
			free_all(send, 3);
			free(recv);

			/* reduce_scatter, another rank's block */
			c = 50;
			v = (struct cb_verify){
				CB_COLL_REDUCE_SCATTER, dt, op, 4, 1, 0, 0, c
			};
			send = fill_all(v, 4 * c * es);
			recv = malloc(c * es);
			ref_reduce(dt, op, send, 4, 2 * c, c, recv);
			CHECK(cb_verify_check(&v, recv) > c / 2);
			free_all(send, 4);
			free(recv);
		}
		/* broadcast of a non-root's buffer; alltoall blocks meant
		 * for another receiver; sendrecv from the wrong side */
		size_t c = 50;
		struct cb_verify v = {
			CB_COLL_BROADCAST, dt, CB_OP_SUM, 4, 2, 1, 0, c
		};
		char **send = fill_all(v, c * es);
		CHECK(cb_verify_check(&v, send[0]) > c / 2);
		CHECK(cb_verify_check(&v, send[1]) == 0);
		free_all(send, 4);
		v.coll = CB_COLL_SENDRECV;
		send = fill_all(v, c * es);
		CHECK(cb_verify_check(&v, send[3]) > c / 2);
		CHECK(cb_verify_check(&v, send[1]) == 0);
		free_all(send, 4);
		v.coll = CB_COLL_ALLTOALL;
		send = fill_all(v, 4 * c * es);
		char *recv = malloc(4 * c * es);
		for (int s = 0; s < 4; s++)
			memcpy(recv + s * c * es, send[s] + 3 * c * es, c * es);
		CHECK(cb_verify_check(&v, recv) > 2 * c);
		for (int s = 0; s < 4; s++)
			memcpy(recv + s * c * es, send[s] + 2 * c * es, c * es);
		CHECK(cb_verify_check(&v, recv) == 0);
		free(recv);
		free_all(send, 4);
	}
}

int main(void)
{
	test_all_collectives();
	test_servers();
	test_in_place();
	for (int s = 0; s < NSIZES; s++)
		test_orders(sizes[s], 300);
	/* float16 products overflow after 15 twos, the others after 127:
	 * groups whose products straddle those */
	test_orders(64, 300);
	test_orders(256, 300);
	test_orders(512, 100); /* past 256 ranks: sparse float sums */
	test_sparse(512);
	test_sparse(1000);
	test_ranges();
	test_misplaced();
	/* every expected result the simulation stored was exact in its type
	 * (or an overflow to infinity) */
	CHECK(inexact == 0);
	/* barrier: nothing to fill, poison or check */
	struct cb_verify b = {
		CB_COLL_BARRIER, CB_DT_FLOAT32, CB_OP_SUM, 4, 1, 0, 0, 100
	};
	cb_verify_fill(&b, NULL);
	cb_verify_poison(&b, NULL);
	CHECK(cb_verify_check(&b, NULL) == 0);
	return check_result("verify");
}
