/* SPDX-License-Identifier: MIT */
/*
 * select/calibrate.c - the cost model's parameters, measured once at the
 * start of a run: alpha (latency) and beta (bandwidth) of the slowest kind
 * of link by a short ping-pong between two ranks, gamma (the local
 * reduction rate) on rank 0; everyone takes rank 0's figures.  Given
 * --alpha-us and --beta-gbps, nothing is measured between ranks.
 */
#include "select/calibrate.h"

#include <stdlib.h>
#include <string.h>

#include "coll/reduce.h"
#include "core/log.h"

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

	/* the run's memory: device buffers move differently */
	if ((st = cb_comm_mem_alloc_kind(c, 2 * bytes + 64, c->mem_kind, &buf)))
		return st;
	if (c->mem_kind == CB_MEM_HOST)
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
cb_status_t cb_calibrate(struct cb_comm *c, const struct cb_opts *o,
                         struct cb_model *m)
{
	struct cb_model mine = { 0 };
	int pair[2] = { 0, 1 }, me = -1;
	cb_status_t st = CB_OK;

	/* Everyone takes rank 0's: 256 ranks on a few cores each reducing
	 * 8 MiB five times cost seconds of start-up for nothing. */
	mine.gamma_gbps = c->rank == 0 ? measure_gamma() : 0.0;
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
	/* Rank 0's figures to everyone: a key, not an allgather (a world of
	 * models to each of a world of ranks). */
	static unsigned seq;
	char key[64];
	size_t got = 0;
	/* (the key is what a rank that waits too long names) */
	snprintf(key, sizeof(key), "the cost model rank 0 measures #%u", seq++);
	if (c->rank == 0) {
		*m = mine;
		st = cb_boot_set(c->boot, key, &mine, sizeof(mine));
	} else if (!(st = cb_boot_get(c->boot, key, m, sizeof(*m), &got)) &&
	           got != sizeof(*m)) {
		st = cb_fail(CB_ERR_PROTO,
		             "rank 0's cost model has %zu bytes, expected %zu",
		             got, sizeof(*m));
	}
	if (!st && c->world == 1) {
		m->alpha_us = o->alpha_us > 0 ? o->alpha_us : 0.0;
		m->beta_gbps = o->beta_gbps > 0 ? o->beta_gbps : 0.0;
	}
	if (!st && c->rank == 0 && o->verbose)
		cb_log(CB_LOG_INFO,
		       "model: alpha %.3g us, beta %.3g GB/s, gamma %.3g GB/s "
		       "(%s)",
		       m->alpha_us, m->beta_gbps, m->gamma_gbps, m->source);
	return st;
}
