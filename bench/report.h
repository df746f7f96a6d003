/* SPDX-License-Identifier: MIT */
/*
 * bench/report.h - result rows and their writers (table, CSV).
 */
#ifndef CB_BENCH_REPORT_H
#define CB_BENCH_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "bench/options.h"

/* One measured point: nccl-tests' columns plus who and what. */
struct cb_row {
	const char *coll, *algo, *transport;
	enum cb_dtype dtype;
	enum cb_op op;
	int ranks, hosts;
	size_t bytes, count;
	int inplace;
	double time_us, algbw_gbps, busbw_gbps;
	uint64_t wrong;
};

/* What the header says about the run. */
struct cb_run_info {
	const char *coll, *algo, *transport;
	int ranks, hosts;
	const char *host_names; /* "a, b" */
	int iters, warmup, check;
	double busbw_factor;
	const char *busbw_formula; /* "2(n-1)/n" */
	const char *binding;       /* topo: "rank 0 -> core 0 (...)", or NULL */
	const char *inventory;     /* topo: lines, '\n' between; or NULL */
};

/* Busbw from algbw as nccl-tests defines it. */
double cb_busbw(double algbw_gbps, double factor);
/* GB/s (1e9 B/s) for @bytes in @time_us; 0 when time is 0. */
double cb_algbw_gbps(size_t bytes, double time_us);

void cb_report_header(FILE *f, enum cb_format fmt,
                      const struct cb_run_info *ri);
/* One size: its out-of-place and in-place rows. */
void cb_report_size(FILE *f, enum cb_format fmt, const struct cb_row rows[2]);
void cb_report_footer(FILE *f, enum cb_format fmt, uint64_t wrong,
                      double avg_busbw_gbps);

#endif
