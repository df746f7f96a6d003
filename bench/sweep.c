/* SPDX-License-Identifier: MIT */
/*
 * bench/sweep.c - the sweep driver.
 *
 * For each collective, each group (all ranks, or the first k ranks or hosts
 * of a --ranks/--nodes sweep), datatype, op and size, and each algorithm
 * that applies at that size: out-of-place then (where the collective has
 * one) in-place, fill the input and run once to check the result (-c 1),
 * run -w warm-up iterations, then time -n back-to-back iterations, each
 * one read from the clock.  A rank's time is the elapsed time over the
 * iterations divided by their number; the row shows the mean of the
 * ranks' times (nccl-tests' default -a 1) and the spread of the
 * per-iteration times.  Ranks outside the group wait at the store.
 * Nothing is allocated, logged or registered between the clock reads.
 *
 * The model column is each algorithm's alpha-beta(-gamma) cost with the
 * link latency and bandwidth measured at start-up by a short ping-pong
 * (or given), and the local reduction rate measured here; --algo auto
 * picks, at each size, the algorithm the model says is fastest.
 */
#include "bench/sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/report.h"
#include "bench/verify.h"
#include "coll/coll.h"
#include "coll/reduce.h"
#include "core/log.h"
#include "reports/results.h"
#include "topo/topo.h"

#define MAX_SAMPLES (1u << 20)
#define MAX_CAND    16

struct rank_result {
	double mean[2], min[2], p50[2], p99[2], max[2];
	uint64_t wrong[2];
	struct cb_coll_stats sched; /* one out-of-place call */
	int member;                 /* group index, or -1 */
};

struct model {
	double alpha_us, beta_gbps, gamma_gbps;
	char source[128];
};

struct scale_pt {
	int coll, k, hosts;
	const struct cb_algo *algo;
	double busbw;
	size_t bytes;
};

struct sweep {
	struct cb_comm *c;
	const struct cb_opts *o;
	FILE *out[CB_MAX_OUTPUTS];
	FILE *schedlog;
	struct rank_result *all;
	char *sendbuf, *recvbuf;
	double *samples;
	size_t nsamples;
	struct model m;
	int done_sizes;
	int progress_shown; /* a progress line is on the terminal */
	uint64_t t_start;
	double busbw_sum;
	int busbw_n;
	uint64_t wrong;
	struct scale_pt *scale;
	int nscale, scale_cap;
	/* the group of the section running now */
	int *members, n, me, nhosts_group;
	enum cb_coll coll;
	int workers; /* ranks that hold input in this section's ps rows */
	char transport[32];     /* what connects the group's members */
	int sections;           /* (collective, group) pairs with work */
	char skipped[256];      /* why the last one skipped did not run */
	struct cb_results *res; /* rank 0, for JSON and --plot; else NULL */
};

static size_t next_size(const struct cb_opts *o, size_t bytes)
{
	if (o->step_bytes)
		return bytes + o->step_bytes;
	size_t next = (size_t)((double)bytes * o->factor);
	return next > bytes ? next : bytes + 1;
}

static void progress_line(struct sweep *sw, size_t bytes)
{
	if (sw->c->rank != 0 || !isatty(STDERR_FILENO))
		return;
	if (cb_now_ns() - sw->t_start < 2000000000ull)
		return;
	fprintf(stderr, "\rcollbench: %d points done, now %s %zu bytes   ",
	        sw->done_sizes, cb_coll_name(sw->coll), bytes);
	fflush(stderr);
	sw->progress_shown = 1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int has_inplace(enum cb_coll coll)
{
	return coll != CB_COLL_BARRIER && coll != CB_COLL_SENDRECV &&
	       coll != CB_COLL_PINGPONG;
}

/* Buffers of one call, out of place or in place (coll/coll.h's layouts). */
static void set_buffers(const struct sweep *sw, struct cb_coll_args *a,
                        int inplace)
{
	size_t blk = a->count * cb_dtype_bytes(a->dtype) * (size_t)sw->me;

	a->sendbuf = sw->sendbuf;
	a->recvbuf = sw->recvbuf;
	if (!inplace)
		return;
	switch (a->coll) {
	case CB_COLL_REDUCE_SCATTER:
		a->sendbuf = sw->recvbuf;
		a->recvbuf = sw->recvbuf + blk;
		break;
	case CB_COLL_ALLGATHER:
		a->sendbuf = sw->recvbuf + blk;
		break;
	default:
		a->sendbuf = sw->recvbuf;
		break;
	}
}

/* Ranks that hold input for @algo: all but ps's dedicated servers. */
static int workers_of(const struct sweep *sw, const struct cb_algo *algo)
{
	if (!strcmp(algo->name, "ps") && sw->o->ps_servers > 0 &&
	    sw->o->ps_servers < sw->n)
		return sw->n - sw->o->ps_servers;
	return sw->n;
}

static cb_status_t run_point(struct sweep *sw, const struct cb_algo *algo,
                             struct cb_plan *plan, struct cb_coll_args *a,
                             int inplace, struct rank_result *me)
{
	const struct cb_opts *o = sw->o;
	double div = algo->time_div > 0 ? algo->time_div : 1;
	cb_status_t st;

	set_buffers(sw, a, inplace);
	me->wrong[inplace] = 0;
	if (o->check) {
		struct cb_verify v = {
			.coll = a->coll,
			.dtype = a->dtype,
			.op = a->op,
			.n = sw->n,
			.me = sw->me,
			.root = a->root,
			.nin = workers_of(sw, algo),
			.count = a->count,
		};
		cb_verify_poison(&v, a->recvbuf);
		cb_verify_fill(&v, (void *)a->sendbuf);
		if ((st = algo->run(plan, a)))
			return st;
		if (!((algo->flags & CB_ALGO_ONEWAY) && sw->me == 0))
			me->wrong[inplace] = cb_verify_check(&v, a->recvbuf);
	}
	for (int i = 0; i < o->warmup; i++)
		if ((st = algo->run(plan, a)))
			return st;
	uint64_t t0 = cb_now_ns(), prev = t0;
	for (int i = 0; i < o->iters; i++) {
		if ((st = algo->run(plan, a)))
			return st;
		uint64_t t = cb_now_ns();
		if ((size_t)i < sw->nsamples)
			sw->samples[i] = (double)(t - prev);
		prev = t;
	}
	if (!inplace)
		me->sched = *algo->stats(plan);
	size_t ns = (size_t)o->iters < sw->nsamples ? (size_t)o->iters
	                                            : sw->nsamples;
	qsort(sw->samples, ns, sizeof(double), cmp_double);
	double us = 1e3 * div;
	me->mean[inplace] = (double)(prev - t0) / o->iters / us;
	me->min[inplace] = sw->samples[0] / us;
	me->p50[inplace] = sw->samples[(ns - 1) / 2] / us;
	size_t i99 = (size_t)(0.99 * (double)ns + 0.999999);
	me->p99[inplace] = sw->samples[i99 ? i99 - 1 : 0] / us;
	me->max[inplace] = sw->samples[ns - 1] / us;
	return CB_OK;
}

static double model_of(const struct sweep *sw, const struct cb_algo *algo,
                       size_t bytes)
{
	if (!algo->model_us || sw->m.beta_gbps <= 0)
		return 0.0;
	return algo->model_us(sw->coll, bytes, sw->n, sw->o->ps_servers,
	                      sw->m.alpha_us, sw->m.beta_gbps,
	                      cb_coll_reduces(sw->coll) ? sw->m.gamma_gbps
	                                                : 0.0);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	return n ? v[(n - 1) / 2] : 0.0;
}

static void emit(struct sweep *sw, const struct cb_algo *algo,
                 const struct cb_coll_args *a, size_t bytes)
{
	struct cb_row rows[2];
	int nrows = has_inplace(a->coll) ? 2 : 1;
	int workers = workers_of(sw, algo);
	double factor = cb_coll_busbw_factor(a->coll, workers);
	double p50s[CB_MAX_LOCAL_RANKS * 4];

	for (int ip = 0; ip < nrows; ip++) {
		struct cb_row *r = &rows[ip];
		double t = 0, tmax = -1;
		int np50 = 0;
		*r = (struct cb_row){
			.coll = cb_coll_name(a->coll),
			.algo = algo->name,
			.transport = sw->transport,
			.dtype = a->dtype,
			.op = cb_coll_reduces(a->coll) ? cb_op_name(a->op)
			                               : "none",
			.ranks = sw->n,
			.hosts = sw->nhosts_group,
			.bytes = bytes,
			.count = cb_coll_size_elems(a->coll, a->count, sw->n),
			.inplace = ip,
			.root = cb_coll_rooted(a->coll) ? a->root : -1,
			.model_us = model_of(sw, algo, bytes),
			.min_us = 1e300,
			.slowest = -1,
		};
		for (int g = 0; g < sw->n; g++) {
			const struct rank_result *x = &sw->all[sw->members[g]];
			r->wrong += x->wrong[ip];
			if (g >= workers)
				continue;
			t += x->mean[ip];
			if (x->mean[ip] > tmax) {
				tmax = x->mean[ip];
				r->slowest = sw->members[g];
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
		sw->busbw_sum += r->busbw_gbps;
		sw->busbw_n++;
		sw->wrong += r->wrong;
	}
	cb_results_scrub(rows, nrows);
	cb_results_add_rows(sw->res, rows, nrows);
	if (sw->progress_shown) {
		fputs("\r\033[K", stderr);
		sw->progress_shown = 0;
	}
	for (int i = 0; i < sw->o->noutputs; i++)
		if (sw->out[i])
			cb_report_point(sw->out[i], sw->o->outputs[i].format,
			                rows, nrows);
	if (sw->schedlog)
		for (int g = 0; g < sw->n; g++) {
			const struct rank_result *x = &sw->all[sw->members[g]];
			fprintf(sw->schedlog,
			        "%s %s %s %d %d %d %zu %zu %llu %llu %llu "
			        "%llu\n",
			        cb_coll_name(a->coll), algo->name,
			        cb_dtype_name(a->dtype), sw->n, g,
			        cb_coll_rooted(a->coll) ? a->root : -1,
			        a->count, bytes,
			        (unsigned long long)x->sched.msgs_sent,
			        (unsigned long long)x->sched.bytes_sent,
			        (unsigned long long)x->sched.msgs_recv,
			        (unsigned long long)x->sched.bytes_recv);
		}
	/* the scaling summary's point: the first dtype and op, out of
	 * place, the largest size up to --scaling-size */
	const struct cb_opts *o = sw->o;
	size_t target = o->scaling_bytes ? o->scaling_bytes : o->max_bytes;
	if ((o->ranks || o->nodes) && a->dtype == o->dtypes[0] &&
	    (!cb_coll_reduces(a->coll) || a->op == o->ops[0]) &&
	    bytes <= target) {
		struct scale_pt *p = NULL;
		for (int i = 0; i < sw->nscale; i++)
			if (sw->scale[i].coll == (int)a->coll &&
			    sw->scale[i].k == sw->n &&
			    sw->scale[i].algo == algo)
				p = &sw->scale[i];
		if (!p && sw->nscale < sw->scale_cap)
			p = &sw->scale[sw->nscale++];
		if (p && (p->algo == NULL || bytes >= p->bytes))
			*p = (struct scale_pt){ a->coll,
				                sw->n,
				                sw->nhosts_group,
				                algo,
				                rows[0].busbw_gbps,
				                bytes };
	}
}

static cb_status_t open_outputs(struct sweep *sw)
{
	const struct cb_opts *o = sw->o;
	struct cb_comm *c = sw->c;
	char hosts[512] = "", colls[256] = "";

	for (int h = 0; h < c->nhosts; h++)
		snprintf(hosts + strlen(hosts), sizeof(hosts) - strlen(hosts),
		         "%s%s", h ? ", " : "", c->hosts[h]);
	for (int k = 0; k < o->ncolls; k++)
		snprintf(colls + strlen(colls), sizeof(colls) - strlen(colls),
		         "%s%s", k ? ", " : "", cb_coll_name(o->colls[k]));
	struct cb_run_info ri = {
		.colls = colls,
		.algo = o->algo,
		.transport = c->transport,
		.ranks = c->world,
		.hosts = c->nhosts,
		.host_names = hosts,
		.iters = o->iters,
		.warmup = o->warmup,
		.check = o->check,
		.alpha_us = sw->m.alpha_us,
		.beta_gbps = sw->m.beta_gbps,
		.gamma_gbps = sw->m.gamma_gbps,
		.model_source = sw->m.source,
		.binding = cb_topo_job_binding(c->topo),
		.inventory = cb_topo_job_inventory(c->topo),
	};
	cb_status_t st;
	if (cb_results_wanted(o) &&
	    (st = cb_results_for_run(o, c, &ri, &sw->res)))
		return st;
	for (int i = 0; i < o->noutputs; i++) {
		const char *path = o->outputs[i].path;
		sw->out[i] = path ? fopen(path, "w") : stdout;
		if (!sw->out[i])
			return cb_fail(CB_ERR_SYS, "cannot write %s", path);
		cb_report_header(sw->out[i], o->outputs[i].format, &ri);
	}
	if (o->schedule_log && !(sw->schedlog = fopen(o->schedule_log, "w")))
		return cb_fail(CB_ERR_SYS, "cannot write %s", o->schedule_log);
	return CB_OK;
}

/* ---- the model's parameters ---- */

/* Local reduction rate: GB/s of one input consumed by float32 sum, on
 * buffers larger than the caches of most machines' cores. */
static double measure_gamma(void)
{
	size_t n = (8u << 20) / sizeof(float);
	float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
	double best = 0;

	if (!a || !b) {
		free(a);
		free(b);
		return 0.0;
	}
	memset(a, 0, n * sizeof(float));
	memset(b, 0, n * sizeof(float));
	for (int i = 0; i < 5; i++) {
		uint64_t t0 = cb_now_ns();
		cb_reduce(CB_DT_FLOAT32, CB_OP_SUM, a, a, b, n);
		uint64_t t1 = cb_now_ns();
		double r = (double)(n * sizeof(float)) / (double)(t1 - t0);
		if (r > best)
			best = r;
	}
	free(a);
	free(b);
	return best;
}

/* The best of @batches batches of @calls calls of @algo on the pair, after
 * @warm untimed ones: the time per row (the algorithm's time_div applied),
 * in us.  The best batch, because a shared machine's noise only ever adds
 * time. */
static cb_status_t pair_time(struct cb_comm *c, const int pair[2], int me,
                             const struct cb_algo *algo, size_t bytes, int warm,
                             int batches, int calls, double *us)
{
	struct cb_plan_cfg pc = {
		.group = { .members = pair, .n = 2, .me = me },
		.coll = CB_COLL_PINGPONG,
		.dtype = CB_DT_FLOAT32,
		.max_count = bytes / 4,
	};
	struct cb_plan *plan;
	void *buf = NULL;
	cb_status_t st;

	if ((st = cb_comm_mem_alloc(c, 2 * bytes + 64, &buf)))
		return st;
	memset(buf, 0, 2 * bytes + 64);
	if ((st = cb_algo_plan_build(algo, c, &pc, &plan))) {
		cb_comm_mem_free(c, buf, 2 * bytes + 64);
		return st;
	}
	struct cb_coll_args a = {
		.coll = CB_COLL_PINGPONG,
		.dtype = CB_DT_FLOAT32,
		.op = CB_OP_SUM,
		.sendbuf = buf,
		.recvbuf = (char *)buf + bytes,
		.count = bytes / 4,
	};
	for (int i = 0; i < warm && !st; i++)
		st = algo->run(plan, &a);
	*us = 0;
	for (int k = 0; k < batches && !st; k++) {
		uint64_t t0 = cb_now_ns();
		for (int i = 0; i < calls && !st; i++)
			st = algo->run(plan, &a);
		double t = (double)(cb_now_ns() - t0) / 1e3 / calls /
		           (algo->time_div > 0 ? algo->time_div : 1);
		if (k == 0 || t < *us)
			*us = t;
	}
	algo->plan_free(plan);
	cb_comm_mem_free(c, buf, 2 * bytes + 64);
	return st;
}

/*
 * alpha: half the round trip of 8 bytes; beta: the rate of a window of
 * 256 KiB messages one way - between rank 0 and rank 1, or, when the job
 * spans hosts, the first rank of the second host (the slower link bounds
 * most algorithms).  Everyone takes rank 0's figures.
 */
static cb_status_t calibrate(struct sweep *sw)
{
	struct cb_comm *c = sw->c;
	const struct cb_opts *o = sw->o;
	struct model mine = { 0 }, *all;
	int pair[2] = { 0, 1 }, me = -1;
	cb_status_t st = CB_OK;

	mine.gamma_gbps = measure_gamma();
	mine.alpha_us = o->alpha_us;
	mine.beta_gbps = o->beta_gbps;
	if (c->nhosts > 1)
		for (int r = 1; r < c->world; r++)
			if (c->host_of_rank[r] != c->host_of_rank[0]) {
				pair[1] = r;
				break;
			}
	if (c->rank == pair[0])
		me = 0;
	else if (c->rank == pair[1])
		me = 1;
	int need = c->world > 1 && (o->alpha_us <= 0 || o->beta_gbps <= 0);
	if (need && me >= 0) {
		double lat, per_msg;
		const size_t big = 256u << 10;
		if ((st = pair_time(c, pair, me, cb_algo_find("latency"), 8, 20,
		                    10, 20, &lat)) ||
		    (st = pair_time(c, pair, me, cb_algo_find("bw"), big, 1, 3,
		                    1, &per_msg)))
			return st;
		if (o->alpha_us <= 0)
			mine.alpha_us = lat;
		if (o->beta_gbps <= 0)
			mine.beta_gbps = (double)big / (per_msg * 1e3);
	}
	snprintf(mine.source, sizeof(mine.source), "%s",
	         !need              ? (c->world > 1 ? "alpha and beta given"
	                                            : "one rank: no links")
	         : o->alpha_us > 0  ? "alpha given, beta measured"
	         : o->beta_gbps > 0 ? "beta given, alpha measured"
	                            : "alpha and beta measured");
	if (need)
		snprintf(mine.source + strlen(mine.source),
		         sizeof(mine.source) - strlen(mine.source),
		         " between ranks %d and %d; gamma measured", pair[0],
		         pair[1]);
	else
		snprintf(mine.source + strlen(mine.source),
		         sizeof(mine.source) - strlen(mine.source),
		         "; gamma measured");
	if (!(all = calloc((size_t)c->world, sizeof(*all))))
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	st = cb_boot_allgather(c->boot, "every rank to calibrate the model",
	                       &mine, sizeof(mine), all);
	if (!st)
		sw->m = all[0];
	free(all);
	if (!st && c->world == 1) {
		sw->m.alpha_us = o->alpha_us > 0 ? o->alpha_us : 0.0;
		sw->m.beta_gbps = o->beta_gbps > 0 ? o->beta_gbps : 0.0;
	}
	if (!st && c->rank == 0 && o->verbose)
		cb_log(CB_LOG_INFO,
		       "model: alpha %.3g us, beta %.3g GB/s, gamma %.3g GB/s "
		       "(%s)",
		       sw->m.alpha_us, sw->m.beta_gbps, sw->m.gamma_gbps,
		       sw->m.source);
	return st;
}

/* ---- which algorithms run ---- */

struct cands {
	const struct cb_algo *a[MAX_CAND];
	size_t lo[MAX_CAND], hi[MAX_CAND];
	struct cb_plan *plan[MAX_CAND];
	int n;
};

/* The algorithms this section may run; CB_ERR_USAGE when the one asked for
 * refuses, notes on stderr for those skipped from a list. */
static cb_status_t candidates(struct sweep *sw, struct cands *cd, int quiet)
{
	const struct cb_opts *o = sw->o;
	int explicit_one = o->algo_mode != CB_ALGO_AUTO && o->nalgos == 1;

	cd->n = 0;
	if (o->algo_mode == CB_ALGO_AUTO) {
		for (int i = 0; cb_algos[i]; i++) {
			const struct cb_algo *a = cb_algos[i];
			const char *why;
			if (!a->colls || !cb_algo_does(a, sw->coll))
				continue;
			if (a->refuse &&
			    (why = a->refuse(sw->coll, sw->n, o->ps_servers))) {
				snprintf(sw->skipped, sizeof(sw->skipped),
				         "%s on %d ranks: %s",
				         cb_coll_name(sw->coll), sw->n, why);
				continue;
			}
			/* ps's dedicated servers change what is measured:
			 * only when asked for by name */
			if (!strcmp(a->name, "ps") && o->ps_servers > 0)
				continue;
			cd->a[cd->n] = a;
			cd->lo[cd->n] = 0;
			cd->hi[cd->n] = SIZE_MAX;
			cd->n++;
		}
		return CB_OK;
	}
	for (int i = 0; i < o->nalgos && cd->n < MAX_CAND; i++) {
		const struct cb_algo *a = o->algos[i].algo;
		const char *why;
		if (!cb_algo_does(a, sw->coll))
			continue;
		if (a->refuse &&
		    (why = a->refuse(sw->coll, sw->n, o->ps_servers))) {
			if (explicit_one && !o->ranks && !o->nodes)
				return cb_fail(CB_ERR_USAGE,
				               "%s %s on %d ranks: %s", a->name,
				               cb_coll_name(sw->coll), sw->n,
				               why);
			snprintf(sw->skipped, sizeof(sw->skipped),
			         "%s %s on %d ranks: %s", a->name,
			         cb_coll_name(sw->coll), sw->n, why);
			if (sw->c->rank == 0 && !quiet)
				cb_log(CB_LOG_WARN, "skipping %s", sw->skipped);
			continue;
		}
		cd->a[cd->n] = a;
		cd->lo[cd->n] = o->algos[i].lo;
		cd->hi[cd->n] = o->algos[i].hi;
		cd->n++;
	}
	return CB_OK;
}

/* The algorithms to run at @bytes: indices into @cd. */
static int pick(struct sweep *sw, const struct cands *cd, size_t bytes,
                int *idx)
{
	const struct cb_opts *o = sw->o;
	int n = 0;

	if (o->algo_mode == CB_ALGO_LIST || sw->coll == CB_COLL_PINGPONG) {
		for (int i = 0; i < cd->n; i++)
			idx[n++] = i;
		return n;
	}
	if (o->algo_mode == CB_ALGO_RANGES) {
		for (int i = 0; i < cd->n; i++)
			if (bytes >= cd->lo[i] &&
			    (bytes < cd->hi[i] ||
			     (cd->hi[i] == SIZE_MAX && bytes == SIZE_MAX))) {
				idx[n++] = i;
				break;
			}
		return n;
	}
	/* auto: the model's fastest */
	int best = -1;
	double bt = 0;
	for (int i = 0; i < cd->n; i++) {
		double t = model_of(sw, cd->a[i], bytes);
		if (!cd->a[i]->model_us)
			continue;
		if (best < 0 || t < bt) {
			best = i;
			bt = t;
		}
	}
	if (best >= 0) {
		idx[n++] = best;
		if (o->verbose && sw->c->rank == 0) {
			char alt[256] = "";
			for (int i = 0; i < cd->n; i++)
				if (i != best)
					snprintf(alt + strlen(alt),
					         sizeof(alt) - strlen(alt),
					         "%s%s %.3g",
					         alt[0] ? ", " : "",
					         cd->a[i]->name,
					         model_of(sw, cd->a[i], bytes));
			cb_log(CB_LOG_INFO,
			       "auto: %s %zu B on %d ranks -> %s (model %.3g "
			       "us; %s)",
			       cb_coll_name(sw->coll), bytes, sw->n,
			       cd->a[best]->name, bt, alt);
		}
	}
	return n;
}

/* ---- one section: a collective on one group ---- */

static cb_status_t section_dtype(struct sweep *sw, struct cands *cd,
                                 enum cb_dtype dt)
{
	const struct cb_opts *o = sw->o;
	struct cb_comm *c = sw->c;
	size_t es = cb_dtype_bytes(dt);
	int member = sw->me >= 0;
	int blocks = cb_coll_blocks(sw->coll);
	cb_status_t st = CB_OK;
	struct cb_plan_cfg pc = {
		.group = { .members = sw->members, .n = sw->n, .me = sw->me },
		.coll = sw->coll,
		.dtype = dt,
		.max_count = o->max_bytes / es / (blocks ? (size_t)sw->n : 1),
		.chunk_bytes = o->chunk_bytes,
		.ps_servers = o->ps_servers,
		.root = o->root,
	};

	for (int i = 0; i < cd->n; i++)
		cd->plan[i] = NULL;
	for (int i = 0; i < cd->n && member && !st; i++)
		st = cb_algo_plan_build(cd->a[i], c, &pc, &cd->plan[i]);
	/* Wake the whole path once (connections, page tables, caches,
	 * branch predictors) before the first timed point, so the first row
	 * of a sweep is not the cost of a cold start. */
	for (int i = 0; i < cd->n && member && !st; i++) {
		struct cb_coll_args wake = {
			.coll = sw->coll,
			.dtype = dt,
			.op = o->ops[0],
			.root = o->root,
			.count = o->min_bytes / es /
			         (blocks ? (size_t)sw->n : 1),
		};
		set_buffers(sw, &wake, 0);
		for (int k = 0; k < 20 && !st; k++)
			st = cd->a[i]->run(cd->plan[i], &wake);
	}
	int nops = cb_coll_reduces(sw->coll) ? o->nops : 1;
	for (int k = 0; k < nops && !st; k++) {
		for (size_t b = o->min_bytes; b <= o->max_bytes && !st;
		     b = next_size(o, b)) {
			struct cb_coll_args a = {
				.coll = sw->coll,
				.dtype = dt,
				.op = o->ops[k],
				.root = o->root,
				.count = b / es / (blocks ? (size_t)sw->n : 1),
			};
			if (sw->coll == CB_COLL_BARRIER)
				a.count = 0;
			size_t bytes =
			        cb_coll_size_elems(sw->coll, a.count, sw->n) *
			        es;
			int idx[MAX_CAND], np = pick(sw, cd, bytes, idx);
			progress_line(sw, b);
			for (int j = 0; j < np && !st; j++) {
				struct rank_result me = { .member = sw->me };
				const struct cb_algo *al = cd->a[idx[j]];
				if (member) {
					st = run_point(sw, al, cd->plan[idx[j]],
					               &a, 0, &me);
					if (!st && has_inplace(sw->coll))
						st = run_point(sw, al,
						               cd->plan[idx[j]],
						               &a, 1, &me);
					if (st)
						break;
				}
				/* The gather through the store is also where
				 * ranks line up before the next point; ranks
				 * outside the group wait here. */
				if ((st = cb_boot_allgather(
				             c->boot, "every rank's timings",
				             &me, sizeof(me), sw->all)))
					break;
				if (c->rank == 0)
					emit(sw, al, &a, bytes);
			}
			sw->done_sizes++;
			/* a barrier has one size */
			if (sw->coll == CB_COLL_BARRIER)
				break;
		}
	}
	for (int i = 0; i < cd->n; i++)
		if (cd->plan[i])
			cd->a[i]->plan_free(cd->plan[i]);
	return st;
}

static cb_status_t section(struct sweep *sw)
{
	const struct cb_opts *o = sw->o;
	struct cands cd;
	cb_status_t st;

	if (cb_coll_rooted(sw->coll) && o->root >= sw->n)
		return cb_fail(CB_ERR_USAGE,
		               "--root %d: the group has only %d rank%s",
		               o->root, sw->n, sw->n == 1 ? "" : "s");
	sw->workers = sw->n;
	if ((st = candidates(sw, &cd, 0)))
		return st;
	if (cd.n == 0) {
		/* nothing applies here (a note said so for listed ones) */
		if (sw->c->rank == 0 && o->algo_mode == CB_ALGO_AUTO)
			cb_log(CB_LOG_WARN, "skipping %s", sw->skipped);
		return CB_OK;
	}
	/* the header's factor: ps's with dedicated servers when only ps
	 * runs; with others beside it, theirs, and a note for ps's rows */
	int only_ps = 1;
	for (int i = 0; i < cd.n; i++) {
		if (strcmp(cd.a[i]->name, "ps"))
			only_ps = 0;
		else if (o->ps_servers > 0)
			sw->workers = sw->n - o->ps_servers;
	}
	if (sw->c->rank == 0) {
		char members[256];
		int contiguous = 1;
		for (int g = 0; g < sw->n; g++)
			contiguous &= sw->members[g] == g;
		if (contiguous)
			snprintf(members, sizeof(members), "ranks 0-%d",
			         sw->n - 1);
		else
			snprintf(members, sizeof(members),
			         "ranks of the first %d hosts",
			         sw->nhosts_group);
		struct cb_section sec = {
			.coll = cb_coll_name(sw->coll),
			.ranks = sw->n,
			.hosts = sw->nhosts_group,
			.members = members,
			.busbw_factor = cb_coll_busbw_factor(
			        sw->coll, only_ps ? sw->workers : sw->n),
			.busbw_formula = cb_coll_busbw_formula(sw->coll),
			.ps_servers = sw->workers < sw->n ? o->ps_servers : 0,
			.has_inplace = has_inplace(sw->coll),
		};
		for (int i = 0; i < o->noutputs; i++)
			cb_report_section(sw->out[i], o->outputs[i].format,
			                  &sec);
	}
	for (int d = 0; d < o->ndtypes && !st; d++)
		st = section_dtype(sw, &cd, o->dtypes[d]);
	return st;
}

/* The group of the first @k ranks, or of the ranks of the first @k hosts. */
static void make_group(struct sweep *sw, int k, int by_hosts)
{
	struct cb_comm *c = sw->c;
	int seen[CB_MAX_LOCAL_RANKS * 4] = { 0 }, local_pair = 0;

	sw->n = 0;
	sw->me = -1;
	sw->nhosts_group = 0;
	for (int r = 0; r < c->world; r++) {
		int h = c->host_of_rank[r];
		if (by_hosts ? h >= k : r >= k)
			continue;
		if (r == c->rank)
			sw->me = sw->n;
		sw->members[sw->n++] = r;
		if (h < (int)(sizeof(seen) / sizeof(seen[0]))) {
			if (!seen[h]++)
				sw->nhosts_group++;
			else
				local_pair = 1;
		}
	}
	/* With a transport inside hosts and another between them (auto),
	 * a group uses the first only if it stays on one host, the second
	 * only if no host holds two of its ranks. */
	snprintf(sw->transport, sizeof(sw->transport), "%s", c->transport);
	if (c->ntp == 2 && sw->nhosts_group == 1)
		snprintf(sw->transport, sizeof(sw->transport), "%s",
		         c->tp[0].ops->name);
	else if (c->ntp == 2 && !local_pair)
		snprintf(sw->transport, sizeof(sw->transport), "%s",
		         c->tp[1].ops->name);
}

static void scaling_summary(struct sweep *sw, FILE *f)
{
	if (sw->nscale == 0)
		return;
	fprintf(f,
	        "#\n# Scaling (busbw, out of place, first dtype/op; "
	        "efficiency against the smallest group\n# that moves data)\n");
	/* grouped by collective and algorithm, groups in order */
	for (int i = 1; i < sw->nscale; i++)
		for (int j = i; j > 0; j--) {
			struct scale_pt *x = &sw->scale[j - 1],
			                *y = &sw->scale[j];
			int before =
			        y->coll < x->coll ||
			        (y->coll == x->coll && y->algo != x->algo &&
			         strcmp(y->algo->name, x->algo->name) < 0);
			if (!before)
				break;
			struct scale_pt t = *x;
			*x = *y;
			*y = t;
		}
	fprintf(f, "# %-14s %-13s %6s %12s %10s %10s\n", "collective", "algo",
	        sw->o->nodes ? "hosts" : "ranks", "size (B)", "busbw",
	        "efficiency");
	for (int i = 0; i < sw->nscale; i++) {
		struct scale_pt *p = &sw->scale[i], *base = NULL;
		/* the smallest group with a bandwidth (one rank moves
		 * nothing: its busbw is 0 by definition) */
		for (int j = 0; j < sw->nscale; j++)
			if (sw->scale[j].coll == p->coll &&
			    sw->scale[j].algo == p->algo &&
			    sw->scale[j].busbw > 0 &&
			    (!base || sw->scale[j].k < base->k))
				base = &sw->scale[j];
		int k = sw->o->nodes ? p->hosts : p->k;
		char eff[16] = "-";
		if (base && p->busbw > 0)
			snprintf(eff, sizeof(eff), "%.1f%%",
			         100.0 * p->busbw / base->busbw);
		fprintf(f, "  %-14s %-13s %6d %12zu %10.3f %10s\n",
		        cb_coll_name(p->coll), p->algo->name, k, p->bytes,
		        p->busbw, eff);
	}
	fflush(f);
}

cb_status_t cb_sweep(struct cb_comm *c, const struct cb_opts *o,
                     uint64_t *wrong)
{
	struct sweep sw = { .c = c, .o = o };
	int counts[CB_MAX_COUNTS], ncounts = 1;
	cb_status_t st = CB_OK;

	sw.all = calloc((size_t)c->world, sizeof(*sw.all));
	sw.members = calloc((size_t)c->world, sizeof(int));
	sw.nsamples =
	        (size_t)o->iters < MAX_SAMPLES ? (size_t)o->iters : MAX_SAMPLES;
	sw.samples = calloc(sw.nsamples, sizeof(double));
	sw.scale_cap = CB_COLL_COUNT * CB_MAX_COUNTS * MAX_CAND;
	sw.scale = calloc((size_t)sw.scale_cap, sizeof(*sw.scale));
	/* Two buffers per local rank must fit in what the host has free:
	 * asking for more gets a line here instead of the OOM killer. */
	double avail =
	        (double)sysconf(_SC_AVPHYS_PAGES) * sysconf(_SC_PAGESIZE);
	double need = 2.0 * (double)(o->max_bytes + 64) * c->local_size;
	if (!sw.all || !sw.members || !sw.samples || !sw.scale ||
	    need > 0.9 * avail) {
		st = cb_fail(CB_ERR_NOMEM,
		             "cannot allocate two %zu-byte buffers for each of "
		             "%d local ranks: %.1f GB needed, %.1f GB free (-e "
		             "too large for this host)",
		             o->max_bytes, c->local_size, need / 1e9,
		             avail / 1e9);
		goto out;
	}
	if ((st = cb_comm_mem_alloc(c, o->max_bytes + 64,
	                            (void **)&sw.sendbuf)) ||
	    (st = cb_comm_mem_alloc(c, o->max_bytes + 64,
	                            (void **)&sw.recvbuf)))
		goto out;
	/* Touch every page now, not in the first timed iteration. */
	memset(sw.sendbuf, 0, o->max_bytes);
	memset(sw.recvbuf, 0, o->max_bytes);
	if (o->ranks || o->nodes) {
		int max = o->ranks ? c->world : c->nhosts;
		if ((st = cb_parse_counts(o->ranks ? o->ranks : o->nodes,
		                          o->ranks ? "--ranks" : "--nodes", max,
		                          counts, &ncounts)))
			goto out;
	} else {
		counts[0] = c->world;
	}
	/* Before any output: does anything apply at all?  (Every rank
	 * decides alike: same options, same groups.) */
	for (int k = 0; k < o->ncolls && !st; k++) {
		sw.coll = o->colls[k];
		for (int j = 0; j < ncounts && !st; j++) {
			struct cands cd;
			make_group(&sw, counts[j], o->nodes != NULL);
			st = candidates(&sw, &cd, 1);
			sw.sections += !st && cd.n > 0;
		}
	}
	if (!st && sw.sections == 0)
		st = cb_fail(CB_ERR_USAGE, "nothing to run: %s", sw.skipped);
	if (st)
		goto out;
	if ((st = calibrate(&sw)))
		goto out;
	sw.t_start = cb_now_ns();
	if (c->rank == 0 && (st = open_outputs(&sw)))
		goto out;
	for (int k = 0; k < o->ncolls && !st; k++) {
		sw.coll = o->colls[k];
		for (int j = 0; j < ncounts && !st; j++) {
			make_group(&sw, counts[j], o->nodes != NULL);
			st = section(&sw);
		}
	}
	if (!st && c->rank == 0)
		for (int i = 0; i < o->noutputs; i++) {
			if (o->outputs[i].format == CB_FMT_TABLE)
				scaling_summary(&sw, sw.out[i]);
			cb_report_footer(
			        sw.out[i], o->outputs[i].format, sw.wrong,
			        sw.busbw_n ? sw.busbw_sum / sw.busbw_n : 0.0);
		}
	*wrong = sw.wrong;
out:
	if (sw.res) {
		cb_status_t wst = cb_results_finish(sw.res, o, sw.out, st);
		st = st ? st : wst;
		cb_results_free(sw.res);
	}
	for (int i = 0; i < o->noutputs; i++)
		if (sw.out[i] && sw.out[i] != stdout)
			fclose(sw.out[i]);
	if (sw.schedlog)
		fclose(sw.schedlog);
	cb_comm_mem_free(c, sw.sendbuf, o->max_bytes + 64);
	cb_comm_mem_free(c, sw.recvbuf, o->max_bytes + 64);
	free(sw.all);
	free(sw.members);
	free(sw.samples);
	free(sw.scale);
	return st;
}
