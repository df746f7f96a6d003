/* SPDX-License-Identifier: MIT */
/*
 * bench/sweep.c - the sweep driver.
 *
 * For each datatype, op and size, out-of-place then in-place: fill the input
 * and run once to check the result (-c 1), run -w warm-up iterations, then
 * time -n back-to-back iterations.  A rank's time is the elapsed time over
 * the iterations divided by their number; the row shows the mean of the
 * ranks' times (nccl-tests' default -a 1).  Nothing is allocated, logged or
 * registered between the two clock reads.
 */
#include "bench/sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/report.h"
#include "bench/verify.h"
#include "coll/coll.h"
#include "core/log.h"
#include "topo/topo.h"

struct rank_result {
	double time_us[2];
	uint64_t wrong[2];
};

struct sweep {
	struct cb_comm *c;
	const struct cb_opts *o;
	const struct cb_algo *algo;
	FILE *out[CB_MAX_OUTPUTS];
	struct rank_result *all;
	char *sendbuf, *recvbuf;
	int nsizes, done_sizes;
	int progress_shown; /* a progress line is on the terminal */
	uint64_t t_start;
	double busbw_sum;
	int busbw_n;
	uint64_t wrong;
};

static size_t next_size(const struct cb_opts *o, size_t bytes)
{
	if (o->step_bytes)
		return bytes + o->step_bytes;
	size_t next = (size_t)((double)bytes * o->factor);
	return next > bytes ? next : bytes + 1;
}

static int count_sizes(const struct cb_opts *o)
{
	int n = 0;

	for (size_t b = o->min_bytes; b <= o->max_bytes; b = next_size(o, b))
		n++;
	return n;
}

static void progress_line(struct sweep *sw, size_t bytes)
{
	if (sw->c->rank != 0 || !isatty(STDERR_FILENO))
		return;
	if (cb_now_ns() - sw->t_start < 2000000000ull)
		return;
	fprintf(stderr, "\rcollbench: %d/%d points done, now %zu bytes   ",
	        sw->done_sizes, sw->nsizes, bytes);
	fflush(stderr);
	sw->progress_shown = 1;
}

static cb_status_t run_point(struct sweep *sw, struct cb_plan *plan,
                             struct cb_coll_args *a, int inplace,
                             struct rank_result *me)
{
	const struct cb_opts *o = sw->o;
	cb_status_t st;

	a->recvbuf = sw->recvbuf;
	a->sendbuf = inplace ? sw->recvbuf : sw->sendbuf;
	me->wrong[inplace] = 0;
	if (o->check) {
		cb_fill(a->dtype, a->op, sw->c->rank, (void *)a->sendbuf,
		        a->count);
		if ((st = sw->algo->run(plan, a)))
			return st;
		me->wrong[inplace] = cb_check_allreduce(
		        a->dtype, a->op, sw->c->world, a->recvbuf, a->count);
	}
	for (int i = 0; i < o->warmup; i++)
		if ((st = sw->algo->run(plan, a)))
			return st;
	uint64_t t0 = cb_now_ns();
	for (int i = 0; i < o->iters; i++)
		if ((st = sw->algo->run(plan, a)))
			return st;
	uint64_t t1 = cb_now_ns();
	me->time_us[inplace] = (double)(t1 - t0) / 1e3 / o->iters;
	return CB_OK;
}

static void emit(struct sweep *sw, const struct cb_coll_args *a, size_t bytes)
{
	struct cb_comm *c = sw->c;
	struct cb_row rows[2];
	double factor = cb_coll_busbw_factor(a->coll, c->world);

	for (int ip = 0; ip < 2; ip++) {
		double t = 0;
		uint64_t wrong = 0;
		for (int r = 0; r < c->world; r++) {
			t += sw->all[r].time_us[ip];
			wrong += sw->all[r].wrong[ip];
		}
		t /= c->world;
		rows[ip] = (struct cb_row){
			.coll = cb_coll_name(a->coll),
			.algo = sw->algo->name,
			.transport = c->transport,
			.dtype = a->dtype,
			.op = a->op,
			.ranks = c->world,
			.hosts = c->nhosts,
			.bytes = bytes,
			.count = a->count,
			.inplace = ip,
			.time_us = t,
			.algbw_gbps = cb_algbw_gbps(bytes, t),
			.wrong = wrong,
		};
		rows[ip].busbw_gbps = cb_busbw(rows[ip].algbw_gbps, factor);
		sw->busbw_sum += rows[ip].busbw_gbps;
		sw->busbw_n++;
		sw->wrong += wrong;
	}
	if (sw->progress_shown) {
		fputs("\r\033[K", stderr);
		sw->progress_shown = 0;
	}
	for (int i = 0; i < sw->o->noutputs; i++)
		if (sw->out[i])
			cb_report_size(sw->out[i], sw->o->outputs[i].format,
			               rows);
}

static cb_status_t open_outputs(struct sweep *sw)
{
	const struct cb_opts *o = sw->o;
	struct cb_comm *c = sw->c;
	char hosts[512] = "";

	for (int h = 0; h < c->nhosts; h++)
		snprintf(hosts + strlen(hosts), sizeof(hosts) - strlen(hosts),
		         "%s%s", h ? ", " : "", c->hosts[h]);
	struct cb_run_info ri = {
		.coll = cb_coll_name(o->coll),
		.algo = sw->algo->name,
		.transport = c->transport,
		.ranks = c->world,
		.hosts = c->nhosts,
		.host_names = hosts,
		.iters = o->iters,
		.warmup = o->warmup,
		.check = o->check,
		.busbw_factor = cb_coll_busbw_factor(o->coll, c->world),
		.busbw_formula = "2(n-1)/n",
		.binding = cb_topo_job_binding(c->topo),
		.inventory = cb_topo_job_inventory(c->topo),
	};
	for (int i = 0; i < o->noutputs; i++) {
		const char *path = o->outputs[i].path;
		sw->out[i] = path ? fopen(path, "w") : stdout;
		if (!sw->out[i])
			return cb_fail(CB_ERR_SYS, "cannot write %s", path);
		cb_report_header(sw->out[i], o->outputs[i].format, &ri);
	}
	return CB_OK;
}

static cb_status_t sweep_dtype(struct sweep *sw, struct cb_plan_cfg *pc,
                               enum cb_dtype dt)
{
	const struct cb_opts *o = sw->o;
	struct cb_plan *plan = NULL;
	size_t es = cb_dtype_bytes(dt);
	cb_status_t st;

	pc->dtype = dt;
	pc->max_count = o->max_bytes / es;
	if ((st = sw->algo->plan_build(sw->c, pc, &plan)))
		return st;
	/* Wake the whole path once (connections, page tables, caches,
	 * branch predictors) before the first timed point, so the first row
	 * of a sweep is not the cost of a cold start. */
	struct cb_coll_args wake = { .coll = o->coll,
		                     .dtype = dt,
		                     .op = o->ops[0],
		                     .sendbuf = sw->sendbuf,
		                     .recvbuf = sw->recvbuf,
		                     .count = o->min_bytes / es };
	for (int i = 0; i < 50 && !st; i++)
		st = sw->algo->run(plan, &wake);
	for (int k = 0; k < o->nops && !st; k++) {
		for (size_t b = o->min_bytes; b <= o->max_bytes && !st;
		     b = next_size(o, b)) {
			struct cb_coll_args a = { .coll = o->coll,
				                  .dtype = dt,
				                  .op = o->ops[k],
				                  .count = b / es };
			struct rank_result me;
			progress_line(sw, b);
			if ((st = run_point(sw, plan, &a, 0, &me)) ||
			    (st = run_point(sw, plan, &a, 1, &me)))
				break;
			/* The gather through the store is also the point
			 * where ranks line up before the next size. */
			if ((st = cb_boot_allgather(sw->c->boot,
			                            "every rank's timings", &me,
			                            sizeof(me), sw->all)))
				break;
			sw->done_sizes++;
			if (sw->c->rank == 0)
				emit(sw, &a, a.count * es);
		}
	}
	sw->algo->plan_free(plan);
	return st;
}

cb_status_t cb_sweep(struct cb_comm *c, const struct cb_opts *o,
                     uint64_t *wrong)
{
	struct sweep sw = { .c = c, .o = o };
	int *members = calloc((size_t)c->world, sizeof(int));
	cb_status_t st = CB_OK;

	sw.algo = cb_algo_find(strcmp(o->algo, "auto") ? o->algo : "ring");
	sw.all = calloc((size_t)c->world, sizeof(*sw.all));
	/* Two buffers per local rank must fit in what the host has free:
	 * asking for more gets a line here instead of the OOM killer. */
	double avail =
	        (double)sysconf(_SC_AVPHYS_PAGES) * sysconf(_SC_PAGESIZE);
	double need = 2.0 * (double)(o->max_bytes + 64) * c->local_size;
	if (!members || !sw.all || need > 0.9 * avail) {
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
	for (int r = 0; r < c->world; r++)
		members[r] = r;
	struct cb_plan_cfg pc = {
		.group = { .members = members, .n = c->world, .me = c->rank },
		.chunk_bytes = o->chunk_bytes,
	};
	sw.nsizes = count_sizes(o) * o->ndtypes * o->nops;
	sw.t_start = cb_now_ns();
	if (c->rank == 0 && (st = open_outputs(&sw)))
		goto out;
	for (int d = 0; d < o->ndtypes && !st; d++)
		st = sweep_dtype(&sw, &pc, o->dtypes[d]);
	if (!st && c->rank == 0)
		for (int i = 0; i < o->noutputs; i++)
			cb_report_footer(
			        sw.out[i], o->outputs[i].format, sw.wrong,
			        sw.busbw_n ? sw.busbw_sum / sw.busbw_n : 0.0);
	*wrong = sw.wrong;
out:
	for (int i = 0; i < o->noutputs; i++)
		if (sw.out[i] && sw.out[i] != stdout)
			fclose(sw.out[i]);
	cb_comm_mem_free(c, sw.sendbuf, o->max_bytes + 64);
	cb_comm_mem_free(c, sw.recvbuf, o->max_bytes + 64);
	free(sw.all);
	free(members);
	return st;
}
