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

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/verify.h"
#include "core/bootstrap.h"
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

int cb_measure_algo_inplace(const struct cb_algo *algo, enum cb_coll coll)
{
	return cb_measure_has_inplace(coll) && !algo->session;
}

int cb_measure_is_ps(const struct cb_algo *algo)
{
	return !strcmp(algo->name, "ps") || !strcmp(algo->name, "ps-async");
}

int cb_measure_workers(const struct cb_opts *o, const struct cb_algo *algo,
                       int n)
{
	if (cb_measure_is_ps(algo) && o->ps_servers > 0 && o->ps_servers < n)
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

static void spin_us(double us)
{
	uint64_t end = cb_now_ns() + (uint64_t)(us * 1e3);

	while (cb_now_ns() < end)
		;
}

/* The straggler's group index in @g, or -1. */
static int straggler_of(const struct cb_opts *o, const struct cb_sect *g)
{
	for (int k = 0; o->straggler >= 0 && k < g->n; k++)
		if (g->members[k] == o->straggler)
			return k;
	return -1;
}

static void spread(struct cb_meter *mt, size_t ns, double us,
                   struct cb_rank_result *me, int ip)
{
	qsort(mt->samples, ns, sizeof(double), cmp_double);
	me->min[ip] = mt->samples[0] / us;
	me->p50[ip] = mt->samples[(ns - 1) / 2] / us;
	size_t i99 = (size_t)(0.99 * (double)ns + 0.999999);
	me->p99[ip] = mt->samples[i99 ? i99 - 1 : 0] / us;
	me->max[ip] = mt->samples[ns - 1] / us;
}

/* The staleness at quantile @q of a server's histogram (the last bucket
 * holds "that many or more": the exact maximum is kept beside it). */
static double hist_q(const uint32_t *h, double q, uint64_t max)
{
	uint64_t n = 0, acc = 0;

	for (int i = 0; i < CB_STALE_BUCKETS; i++)
		n += h[i];
	if (!n)
		return 0;
	uint64_t want = (uint64_t)(q * (double)n + 0.999999);
	for (int i = 0; i < CB_STALE_BUCKETS; i++)
		if ((acc += h[i]) >= (want ? want : 1))
			return i == CB_STALE_BUCKETS - 1 ? (double)max : i;
	return (double)max;
}

static cb_status_t measure_session(struct cb_meter *mt, const struct cb_sect *g,
                                   const struct cb_algo *algo,
                                   struct cb_plan *plan, struct cb_coll_args *a,
                                   struct cb_rank_result *me)
{
	const struct cb_opts *o = mt->o;
	enum cb_dtype dt = a->dtype;
	struct cb_session s = {
		.straggler = straggler_of(o, g),
		.delay_us = o->straggler_us,
		.fill = cb_verify_ps_fill,
		.ctx = &dt,
	};
	cb_status_t st;

	cb_measure_buffers(mt, g->me, a, 0);
	me->wrong[0] = 0;
	if (o->check) {
		/* a short session, every pulled copy checked */
		s.steps = o->iters < 64 ? (uint64_t)o->iters : 64;
		s.check = cb_verify_ps_check;
		if ((st = algo->session(plan, a, &s)))
			return st;
		me->wrong[0] = s.wrong;
		s.check = NULL;
	}
	if (o->warmup > 0) {
		s.steps = (uint64_t)o->warmup;
		if ((st = algo->session(plan, a, &s)))
			return st;
	}
	s.steps = (uint64_t)o->iters;
	me->iters[0] = s.steps;
	s.step_ns = mt->samples;
	s.nstep_ns = mt->nsamples;
	if ((st = algo->session(plan, a, &s)))
		return st;
	me->sched = *algo->stats(plan);
	me->push_per_s = me->pull_per_s = 0;
	me->stale_p50 = me->stale_p99 = me->stale_max = -1;
	if (s.worker && s.elapsed_ns) {
		size_t ns = (size_t)o->iters < mt->nsamples ? (size_t)o->iters
		                                            : mt->nsamples;
		me->mean[0] = (double)s.elapsed_ns / o->iters / 1e3;
		spread(mt, ns, 1e3, me, 0);
		me->push_per_s =
		        (double)s.pushes / ((double)s.elapsed_ns / 1e9);
		me->pull_per_s = (double)s.pulls / ((double)s.elapsed_ns / 1e9);
	}
	if (s.server) {
		me->stale_p50 = hist_q(s.stale_hist, 0.5, s.stale_max);
		me->stale_p99 = hist_q(s.stale_hist, 0.99, s.stale_max);
		me->stale_max = (double)s.stale_max;
	}
	return CB_OK;
}

/* --touch: what an application step does around the call, outside the
 * time: the last result read (a load per cache line), then the input
 * written anew (from the copy taken before the first call, so in place
 * too every call starts from the same input).  In that order: in place the
 * input lies inside the result. */
static volatile unsigned touch_sink; /* the reads must happen */

static void touch_buffers(const struct cb_meter *mt,
                          const struct cb_coll_args *a, size_t sb, size_t rb)
{
	const volatile unsigned char *r = a->recvbuf;
	unsigned x = 0;

	for (size_t i = 0; i < rb; i += 64)
		x += r[i];
	touch_sink = x;
	memcpy((void *)a->sendbuf, mt->touch, sb);
}

/* The calls of one point on this rank: what they need and, timed, what
 * they took so far. */
struct calls {
	const struct cb_algo *algo; /* NULL: outside the group (no calls) */
	struct cb_plan *plan;
	struct cb_coll_args *a;
	size_t sb, rb;   /* --touch: send and receive bytes */
	double delay_us; /* --straggler: this rank's wait before each */
	uint64_t done;   /* timed calls so far (the samples' index) */
	uint64_t ns;     /* their time, --touch's work left out */
};

/* @n calls, timed into @k (each call's time a sample) when @timed. */
static cb_status_t run_calls(struct cb_meter *mt, struct calls *k, uint64_t n,
                             int timed)
{
	uint64_t t0 = cb_now_ns(), prev = t0, untimed = 0;
	cb_status_t st;

	for (uint64_t i = 0; k->algo && i < n; i++) {
		if (mt->touch) {
			touch_buffers(mt, k->a, k->sb, k->rb);
			uint64_t t = cb_now_ns();
			untimed += t - prev;
			prev = t;
		}
		if (k->delay_us > 0)
			spin_us(k->delay_us);
		if ((st = k->algo->run(k->plan, k->a)))
			return st;
		uint64_t t = cb_now_ns();
		if (timed && k->done + i < mt->nsamples)
			mt->samples[k->done + i] = (double)(t - prev);
		prev = t;
	}
	if (timed) {
		k->done += n;
		k->ns += prev - t0 - untimed;
	}
	return CB_OK;
}

/*
 * -D's rule, on the group's first member, after each timed batch: the
 * next batch (@m->next), or 0 once less than half a call's time is left.
 * A batch is half of what the time left holds at the rate so far, and at
 * most as many calls as were made so far: 1, 2, 4, ... while the rate is
 * learnt, then halving towards the end, so a rate that drops to half
 * within a batch still ends on time.
 */
static void duration_rule(double duration_s, const struct calls *k,
                          struct cb_dur_msg *m)
{
	double per = (double)(k->ns ? k->ns : 1) / (double)k->done;
	double left = duration_s * 1e9 - (double)k->ns;

	m->next = 0;
	if (left < per / 2)
		return;
	double n = ceil(left / 2 / per);
	n = fmin(n, (double)k->done);
	m->next = n < 1 ? 1 : (uint64_t)fmin(n, (double)(1u << 30));
}

/* -D: batches of calls until the duration is spent, every rank told by
 * the group's first member after each (a gather through the store, with
 * the run's deadline; not timed).  @k->algo NULL: a rank outside the group
 * takes part in the gathers only. */
static cb_status_t duration_calls(struct cb_meter *mt, const struct cb_sect *g,
                                  struct calls *k)
{
	struct cb_comm *c = mt->c;
	int lead = g->members[0];
	cb_status_t st;

	for (uint64_t b = 1;;) {
		struct cb_dur_msg mine = { 0 };
		if ((st = run_calls(mt, k, b, 1)))
			return st;
		if (c->rank == lead)
			duration_rule(mt->o->duration_s, k, &mine);
		if ((st = cb_boot_allgather(c->boot, "every rank (-D)", &mine,
		                            sizeof(mine), mt->dur_all)))
			return st;
		if (!(b = mt->dur_all[lead].next))
			return CB_OK;
	}
}

cb_status_t cb_measure_duration_peer(struct cb_meter *mt,
                                     const struct cb_sect *g)
{
	struct calls k = { 0 };

	return duration_calls(mt, g, &k);
}

cb_status_t cb_measure_point(struct cb_meter *mt, const struct cb_sect *g,
                             const struct cb_algo *algo, struct cb_plan *plan,
                             struct cb_coll_args *a, int inplace,
                             struct cb_rank_result *me)
{
	const struct cb_opts *o = mt->o;
	double div = algo->time_div > 0 ? algo->time_div : 1;
	cb_status_t st;

	if (algo->session)
		return measure_session(mt, g, algo, plan, a, me);

	cb_measure_buffers(mt, g->me, a, inplace);
	me->wrong[inplace] = 0;
	size_t es = cb_dtype_bytes(a->dtype);
	struct calls k = {
		.algo = algo,
		.plan = plan,
		.a = a,
		.sb = cb_coll_send_elems(a->coll, a->count, g->n) * es,
		.rb = cb_coll_recv_elems(a->coll, a->count, g->n) * es,
		.delay_us = straggler_of(o, g) == g->me ? o->straggler_us : 0,
	};
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
	int checked =
	        o->check && !((algo->flags & CB_ALGO_ONEWAY) && g->me == 0);
	if (o->check) {
		int dev = mt->hsend != NULL;
		void *rv = dev ? shadow(mt, a->recvbuf) : a->recvbuf;
		void *sv = dev ? shadow(mt, a->sendbuf) : (void *)a->sendbuf;
		cb_verify_poison(&v, rv);
		cb_verify_fill(&v, sv);
		/* --touch (host buffers): every call's input is this one */
		if (mt->touch)
			memcpy(mt->touch, a->sendbuf, k.sb);
		/* in place, the input lies in the receive buffer: its shadow
		 * holds poison and input alike, so copy the receive range
		 * first and the send range over it */
		if (dev && ((st = sync_shadow(mt, a->recvbuf, k.rb, 1)) ||
		            (st = sync_shadow(mt, a->sendbuf, k.sb, 1))))
			return st;
		if ((st = algo->run(plan, a)))
			return st;
		if (dev && (st = sync_shadow(mt, a->recvbuf, k.rb, 0)))
			return st;
		if (checked)
			me->wrong[inplace] = cb_verify_check(&v, rv);
	} else if (mt->touch) {
		memcpy(mt->touch, a->sendbuf, k.sb);
	}
	if ((st = run_calls(mt, &k, (uint64_t)o->warmup, 0)))
		return st;
	if (o->duration_s > 0)
		st = duration_calls(mt, g, &k);
	else
		st = run_calls(mt, &k, (uint64_t)o->iters, 1);
	if (st)
		return st;
	/* --touch: each call started from the checked input, so the last
	 * timed call's result is checked too (outside the time) */
	if (mt->touch && checked)
		me->wrong[inplace] += cb_verify_check(&v, a->recvbuf);
	if (!inplace)
		me->sched = *algo->stats(plan);
	uint64_t n = k.done ? k.done : 1;
	size_t ns = n < mt->nsamples ? (size_t)n : mt->nsamples;
	double us = 1e3 * div;
	me->mean[inplace] = (double)k.ns / (double)n / us;
	me->iters[inplace] = k.done;
	spread(mt, ns, us, me, inplace);
	return CB_OK;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	return n ? v[(n - 1) / 2] : 0.0;
}

/* A session row: the workers' push and pull rates (mean), the servers'
 * staleness (median of their medians, max of p99s and maxima). */
static void session_row(const struct cb_sect *g,
                        const struct cb_rank_result *all, int workers,
                        struct cb_row *r)
{
	double p50s[CB_MAX_LOCAL_RANKS * 4];
	int n50 = 0;

	r->push_per_s = r->pull_per_s = 0;
	r->stale_p99 = r->stale_max = 0;
	for (int k = 0; k < g->n; k++) {
		const struct cb_rank_result *x = &all[g->members[k]];
		if (k < workers) {
			r->push_per_s += x->push_per_s / workers;
			r->pull_per_s += x->pull_per_s / workers;
		}
		if (x->stale_max < 0)
			continue;
		if (n50 < (int)(sizeof(p50s) / sizeof(p50s[0])))
			p50s[n50++] = x->stale_p50;
		if (x->stale_p99 > r->stale_p99)
			r->stale_p99 = x->stale_p99;
		if (x->stale_max > r->stale_max)
			r->stale_max = x->stale_max;
	}
	r->stale_p50 = median(p50s, n50);
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
	int nrows = cb_measure_algo_inplace(algo, a->coll) ? 2 : 1;
	int workers = cb_measure_workers(o, algo, g->n);
	int shards = o->ps_servers > 0 ? o->ps_servers : g->n;
	double factor = cb_coll_busbw_factor(a->coll, workers);
	double p50s[CB_MAX_LOCAL_RANKS * 4];

	for (int ip = 0; ip < nrows; ip++) {
		struct cb_row *r = &rows[ip];
		double t = 0, tmax = -1, tmin = -1, t0 = -1;
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
			if (t0 < 0)
				t0 = x->mean[ip];
			if (tmin < 0 || x->mean[ip] < tmin)
				tmin = x->mean[ip];
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
		r->iters = all[g->members[0]].iters[ip];
		/* -a: the first worker's, the average (default), the
		 * smallest or the largest of the workers' means */
		r->time_us = o->average == 0   ? t0
		             : o->average == 2 ? tmin
		             : o->average == 3 ? tmax
		                               : t / workers;
		r->algbw_gbps = cb_algbw_gbps(
		        bytes * (size_t)(algo->bw_mult > 0 ? algo->bw_mult : 1),
		        r->time_us);
		r->busbw_gbps = cb_busbw(r->algbw_gbps, factor);
		r->push_per_s = r->pull_per_s = NAN;
		r->stale_p50 = r->stale_p99 = r->stale_max = NAN;
		if (algo->session)
			session_row(g, all, workers, r);
		else if (cb_measure_is_ps(algo) && r->time_us > 0) {
			/* one push and one pull per shard and step; a
			 * synchronous step has everyone's update */
			r->push_per_s = r->pull_per_s =
			        shards * 1e6 / r->time_us;
			r->stale_p50 = r->stale_p99 = r->stale_max = 0;
		}
	}
	return nrows;
}
