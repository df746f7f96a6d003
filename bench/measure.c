/* SPDX-License-Identifier: MIT */
/*
 * bench/measure.c - one point on this rank, and its row.
 *
 * Out of place then (where the collective has one) in place: fill the
 * input and run once to check the result (-c 1), run -w warm-up
 * iterations, then time -n back-to-back iterations, each one read from
 * the clock.  A rank's time is the elapsed time over the iterations
 * divided by their number; the row shows the mean of the ranks' times
 * (nccl-tests' default -a 1) and the spread of the per-iteration times.
 * Nothing is allocated, logged or registered between the clock reads.
 *
 * With device buffers (--mem gpu) the inputs are filled and the poison laid
 * in host shadows of the buffers, copied up before the checked call, and
 * the result copied down after it and checked there: the same values and
 * the same checks as on host memory, none of it timed.
 */
#include "bench/measure.h"

#include <stdlib.h>
#include <string.h>

#include "bench/verify.h"
#include "core/log.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int cb_measure_has_inplace(enum cb_coll coll)
{
	return coll != CB_COLL_BARRIER && coll != CB_COLL_SENDRECV &&
	       coll != CB_COLL_PINGPONG;
}

void cb_measure_buffers(const struct cb_meter *mt, int me,
                        struct cb_coll_args *a, int inplace)
{
	size_t blk = a->count * cb_dtype_bytes(a->dtype) * (size_t)me;

	a->sendbuf = mt->sendbuf;
	a->recvbuf = mt->recvbuf;
	if (!inplace)
		return;
	switch (a->coll) {
	case CB_COLL_REDUCE_SCATTER:
		a->sendbuf = mt->recvbuf;
		a->recvbuf = mt->recvbuf + blk;
		break;
	case CB_COLL_ALLGATHER:
		a->sendbuf = mt->recvbuf + blk;
		break;
	default:
		a->sendbuf = mt->recvbuf;
		break;
	}
}

int cb_measure_workers(const struct cb_opts *o, const struct cb_algo *algo,
                       int n)
{
	if (!strcmp(algo->name, "ps") && o->ps_servers > 0 && o->ps_servers < n)
		return n - o->ps_servers;
	return n;
}

/* The shadow of @p (inside one of the meter's device buffers). */
static char *shadow(const struct cb_meter *mt, const void *p)
{
	const char *q = p;

	if (q >= mt->sendbuf && q < mt->sendbuf + mt->buf_bytes)
		return mt->hsend + (q - mt->sendbuf);
	return mt->hrecv + (q - mt->recvbuf);
}

/* Copy [@p, @p + @bytes) between a device buffer and its shadow. */
static cb_status_t sync_shadow(const struct cb_meter *mt, const void *p,
                               size_t bytes, int up)
{
	char *h = shadow(mt, p);

	if (!bytes)
		return CB_OK;
	return up ? cb_comm_copy(mt->c, (void *)p, NULL, h, NULL, bytes, NULL)
	          : cb_comm_copy(mt->c, h, NULL, p, NULL, bytes, NULL);
}

cb_status_t cb_measure_point(struct cb_meter *mt, const struct cb_sect *g,
                             const struct cb_algo *algo, struct cb_plan *plan,
                             struct cb_coll_args *a, int inplace,
                             struct cb_rank_result *me)
{
	const struct cb_opts *o = mt->o;
	double div = algo->time_div > 0 ? algo->time_div : 1;
	cb_status_t st;

	cb_measure_buffers(mt, g->me, a, inplace);
	me->wrong[inplace] = 0;
	if (o->check) {
		struct cb_verify v = {
			.coll = a->coll,
			.dtype = a->dtype,
			.op = a->op,
			.n = g->n,
			.me = g->me,
			.root = a->root,
			.nin = cb_measure_workers(o, algo, g->n),
			.count = a->count,
		};
		size_t es = cb_dtype_bytes(a->dtype);
		size_t sb = cb_coll_send_elems(a->coll, a->count, g->n) * es;
		size_t rb = cb_coll_recv_elems(a->coll, a->count, g->n) * es;
		int dev = mt->hsend != NULL;
		void *rv = dev ? shadow(mt, a->recvbuf) : a->recvbuf;
		void *sv = dev ? shadow(mt, a->sendbuf) : (void *)a->sendbuf;
		cb_verify_poison(&v, rv);
		cb_verify_fill(&v, sv);
		/* in place, the input lies in the receive buffer: its shadow
		 * holds poison and input alike, so copy the receive range
		 * first and the send range over it */
		if (dev && ((st = sync_shadow(mt, a->recvbuf, rb, 1)) ||
		            (st = sync_shadow(mt, a->sendbuf, sb, 1))))
			return st;
		if ((st = algo->run(plan, a)))
			return st;
		if (dev && (st = sync_shadow(mt, a->recvbuf, rb, 0)))
			return st;
		if (!((algo->flags & CB_ALGO_ONEWAY) && g->me == 0))
			me->wrong[inplace] = cb_verify_check(&v, rv);
	}
	for (int i = 0; i < o->warmup; i++)
		if ((st = algo->run(plan, a)))
			return st;
	uint64_t t0 = cb_now_ns(), prev = t0;
	for (int i = 0; i < o->iters; i++) {
		if ((st = algo->run(plan, a)))
			return st;
		uint64_t t = cb_now_ns();
		if ((size_t)i < mt->nsamples)
			mt->samples[i] = (double)(t - prev);
		prev = t;
	}
	if (!inplace)
		me->sched = *algo->stats(plan);
	size_t ns = (size_t)o->iters < mt->nsamples ? (size_t)o->iters
	                                            : mt->nsamples;
	qsort(mt->samples, ns, sizeof(double), cmp_double);
	double us = 1e3 * div;
	me->mean[inplace] = (double)(prev - t0) / o->iters / us;
	me->min[inplace] = mt->samples[0] / us;
	me->p50[inplace] = mt->samples[(ns - 1) / 2] / us;
	size_t i99 = (size_t)(0.99 * (double)ns + 0.999999);
	me->p99[inplace] = mt->samples[i99 ? i99 - 1 : 0] / us;
	me->max[inplace] = mt->samples[ns - 1] / us;
	return CB_OK;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	return n ? v[(n - 1) / 2] : 0.0;
}

static void copy_str(char *dst, size_t cap, const char *src)
{
	snprintf(dst, cap, "%s", src);
}

int cb_measure_rows(const struct cb_opts *o, const struct cb_sect *g,
                    const struct cb_rank_result *all,
                    const struct cb_algo *algo, const struct cb_coll_args *a,
                    size_t bytes, double model_us, struct cb_row rows[2])
{
	int nrows = cb_measure_has_inplace(a->coll) ? 2 : 1;
	int workers = cb_measure_workers(o, algo, g->n);
	double factor = cb_coll_busbw_factor(a->coll, workers);
	double p50s[CB_MAX_LOCAL_RANKS * 4];

	for (int ip = 0; ip < nrows; ip++) {
		struct cb_row *r = &rows[ip];
		double t = 0, tmax = -1;
		int np50 = 0;
		*r = (struct cb_row){
			.ranks = g->n,
			.hosts = g->nhosts,
			.bytes = bytes,
			.count = cb_coll_size_elems(a->coll, a->count, g->n),
			.inplace = ip,
			.root = cb_coll_rooted(a->coll) ? a->root : -1,
			.model_us = model_us,
			.min_us = 1e300,
			.slowest = -1,
		};
		copy_str(r->coll, sizeof(r->coll), cb_coll_name(a->coll));
		copy_str(r->algo, sizeof(r->algo), algo->name);
		copy_str(r->transport, sizeof(r->transport), g->transport);
		copy_str(r->dtype, sizeof(r->dtype), cb_dtype_name(a->dtype));
		copy_str(r->op, sizeof(r->op),
		         cb_coll_reduces(a->coll) ? cb_op_name(a->op) : "none");
		for (int k = 0; k < g->n; k++) {
			const struct cb_rank_result *x = &all[g->members[k]];
			r->wrong += x->wrong[ip];
			if (k >= workers)
				continue;
			t += x->mean[ip];
			if (x->mean[ip] > tmax) {
				tmax = x->mean[ip];
				r->slowest = g->members[k];
			}
			if (x->min[ip] < r->min_us)
				r->min_us = x->min[ip];
			if (x->p99[ip] > r->p99_us)
				r->p99_us = x->p99[ip];
			if (x->max[ip] > r->max_us)
				r->max_us = x->max[ip];
			if (np50 < (int)(sizeof(p50s) / sizeof(p50s[0])))
				p50s[np50++] = x->p50[ip];
		}
		r->p50_us = median(p50s, np50);
		r->time_us = t / workers;
		r->algbw_gbps = cb_algbw_gbps(
		        bytes * (size_t)(algo->bw_mult > 0 ? algo->bw_mult : 1),
		        r->time_us);
		r->busbw_gbps = cb_busbw(r->algbw_gbps, factor);
	}
	return nrows;
}
