/* SPDX-License-Identifier: MIT */
/*
 * bench/report.h - result rows and their writers (table, CSV).
 */
#ifndef CB_BENCH_REPORT_H
#define CB_BENCH_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "bench/options.h"

/* One measured point: nccl-tests' columns plus who, what and how spread. */
struct cb_row {
	const char *coll, *algo, *transport;
	enum cb_dtype dtype;
	const char *op; /* "sum", ..., or "none" */
	int ranks, hosts;
	size_t bytes, count;
	int inplace;
	int root; /* -1: not a rooted collective */
	double time_us, algbw_gbps, busbw_gbps;
	uint64_t wrong;
	double model_us;
	double min_us, p50_us, p99_us, max_us;
	int slowest; /* comm rank with the largest mean time */
};

/* What the header says about the whole run. */
struct cb_run_info {
	const char *colls, *algo, *transport;
	int ranks, hosts;
	const char *host_names; /* "a, b" */
	int iters, warmup, check;
	double alpha_us, beta_gbps, gamma_gbps;
	const char *model_source; /* "measured between ranks 0 and 1" */
	const char *binding;      /* topo: "rank 0 -> core 0 (...)", or NULL */
	const char *inventory;    /* topo: lines, '\n' between; or NULL */
};

/* What the header of one section (a collective on one group) says. */
struct cb_section {
	const char *coll;
	int ranks, hosts;
	const char *members; /* "ranks 0-3" */
	double busbw_factor;
	const char *busbw_formula;
	int ps_servers; /* > 0: dedicated servers, left out of busbw */
	int has_inplace;
};

/* Busbw from algbw as nccl-tests defines it. */
double cb_busbw(double algbw_gbps, double factor);
/* GB/s (1e9 B/s) for @bytes in @time_us; 0 when time is 0. */
double cb_algbw_gbps(size_t bytes, double time_us);

void cb_report_header(FILE *f, enum cb_format fmt,
                      const struct cb_run_info *ri);
void cb_report_section(FILE *f, enum cb_format fmt,
                       const struct cb_section *sec);
/* One size and algorithm: the out-of-place row and, when @n == 2, the
 * in-place one. */
void cb_report_point(FILE *f, enum cb_format fmt, const struct cb_row *rows,
                     int n);
void cb_report_footer(FILE *f, enum cb_format fmt, uint64_t wrong,
                      double avg_busbw_gbps);

#endif
