/* SPDX-License-Identifier: MIT */
/*
 * bench/measure.h - one point on this rank (check, warm up, time), and the
 * row made from every rank's figures.
 */
#ifndef CB_BENCH_MEASURE_H
#define CB_BENCH_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#include "bench/options.h"
#include "coll/coll.h"
#include "reports/report.h"

/* The group a section runs on: the first k ranks, or the ranks of the
 * first k hosts (cli/sweep.c). */
struct cb_sect {
	enum cb_coll coll;
	int *members; /* [n] comm ranks */
	int n, me;    /* me: this rank's index, or -1 outside the group */
	int nhosts;
	char transport[32]; /* what connects the group's members */
};

/* One rank's figures for one point, [0] out of place, [1] in place; what
 * ranks exchange after every point (plain data). */
struct cb_rank_result {
	double mean[2], min[2], p50[2], p99[2], max[2];
	uint64_t wrong[2];
	struct cb_coll_stats sched; /* one out-of-place call */
	int member;                 /* group index, or -1 */
	/* sessions (ps-async): this worker's pushes and pulls per second,
	 * this server's staleness p50/p99/max (-1: not a server) */
	double push_per_s, pull_per_s;
	double stale_p50, stale_p99, stale_max;
	uint64_t iters[2]; /* timed calls (steps): -n, or what -D held */
};

/* -D: what the group's first member decided after a batch of calls
 * (every other rank sends zeros). */
struct cb_dur_msg {
	uint64_t next; /* calls in the next batch; 0: the point is done */
};

/* This rank's measuring kit, allocated before any timed region. */
struct cb_meter {
	const struct cb_opts *o;
	struct cb_comm *c;
	char *sendbuf, *recvbuf; /* of the run's kind (--mem) */
	size_t buf_bytes;        /* each */
	/* --mem gpu: host shadows of the two device buffers, same layout:
	 * inputs are filled there and copied up, results copied down and
	 * checked there, all outside the timed region; else NULL */
	char *hsend, *hrecv;
	double *samples; /* per-iteration times */
	size_t nsamples;
	char *touch; /* --touch: a copy of the call's input, else NULL */
	struct cb_dur_msg *dur_all; /* -D: [world], the gathers' room */
};

/* The collective has an in-place form (sessions have none). */
int cb_measure_has_inplace(enum cb_coll coll);
int cb_measure_algo_inplace(const struct cb_algo *algo, enum cb_coll coll);
/* A parameter server (ps, ps-async): servers, pushes and pulls. */
int cb_measure_is_ps(const struct cb_algo *algo);
/* Ranks that hold input for @algo on @n ranks: all but ps's dedicated
 * servers. */
int cb_measure_workers(const struct cb_opts *o, const struct cb_algo *algo,
                       int n);
/* Point @a at the meter's buffers, out of place or in place
 * (coll/coll.h's layouts). */
void cb_measure_buffers(const struct cb_meter *mt, int me,
                        struct cb_coll_args *a, int inplace);
/* Check once (-c 1), warm up, and time -n calls of @algo: into
 * @me->..[inplace].  The --straggler rank waits its delay before every
 * warm-up and timed call.  A session algorithm (ps-async) runs a checked
 * session, a warm-up session of -w steps and a timed one of -n steps
 * instead, out of place only. */
cb_status_t cb_measure_point(struct cb_meter *mt, const struct cb_sect *g,
                             const struct cb_algo *algo, struct cb_plan *plan,
                             struct cb_coll_args *a, int inplace,
                             struct cb_rank_result *me);
/* -D (cb_measure_point): after the warm-up the group runs timed batches of
 * calls until the duration is spent; after each batch the group's first
 * member decides what comes next from its own time so far, and every rank
 * of the job hears it in a gather through the store (the run's deadline;
 * not timed).  A rank outside the group takes part
 * in those gathers here, once for each form the members measure. */
cb_status_t cb_measure_duration_peer(struct cb_meter *mt,
                                     const struct cb_sect *g);
/* The point's rows from every rank's figures (@all, by comm rank): the
 * mean of the workers' means, the spread, the slowest rank.  Returns the
 * number of rows (2 with an in-place form, else 1). */
int cb_measure_rows(const struct cb_opts *o, const struct cb_sect *g,
                    const struct cb_rank_result *all,
                    const struct cb_algo *algo, const struct cb_coll_args *a,
                    size_t bytes, double model_us, struct cb_row rows[2]);

#endif
