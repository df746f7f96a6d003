/* SPDX-License-Identifier: MIT */
/*
 * cli/output.h - where a run's results go, on rank 0: the outputs
 * (table, CSV and JSON through reports/), the schedule log, the progress
 * line on a terminal, and the points of the scaling summary.
 */
#ifndef CB_CLI_OUTPUT_H
#define CB_CLI_OUTPUT_H

#include <stdint.h>
#include <stdio.h>

#include "select/calibrate.h"
#include "bench/measure.h"
#include "bench/options.h"
#include "reports/report.h"
#include "reports/results.h"

struct cb_outputs {
	const struct cb_opts *o;
	FILE *out[CB_MAX_OUTPUTS];
	FILE *schedlog;
	struct cb_results *res; /* for JSON and --plot; else NULL */
	struct cb_run_settings settings;
	uint64_t t_start_ns;
	uint64_t saved_ns; /* the JSON files were last saved then */
	int done_points;
	int progress_shown; /* a progress line is on the terminal */
	double busbw_sum;
	int busbw_n;
	uint64_t wrong;
	struct cb_scale_pt *scale;
	int nscale, scale_cap;
	char transport_detail[1024];
};

/* The run's port counter changes, after the table and in the JSON. */
struct cb_port_delta;
void cb_output_counters(struct cb_outputs *w, const struct cb_port_delta *d,
                        int n);

/* Open every output and write the headers (rank 0). */
cb_status_t cb_output_open(struct cb_outputs *w, const struct cb_opts *o,
                           const struct cb_comm *c, const struct cb_model *m,
                           const char *auto_source);
/* A section's header. */
void cb_output_section(struct cb_outputs *w, const struct cb_section *sec);
/* "N points done, now ..." on a terminal, after two seconds (rank 0). */
void cb_output_progress(struct cb_outputs *w, int rank, enum cb_coll coll,
                        size_t bytes);
/* One point: its rows everywhere, every rank's message counts in the
 * schedule log, and the scaling summary's point. */
void cb_output_point(struct cb_outputs *w, const struct cb_sect *g,
                     const struct cb_rank_result *all,
                     const struct cb_algo *algo, const struct cb_coll_args *a,
                     size_t bytes, struct cb_row *rows, int nrows);
/* The end: the footers and the scaling summary when @st is CB_OK, the
 * JSON document and --plot (reports/run.c), then close everything.
 * Returns @st, or the first failure to write. */
cb_status_t cb_output_close(struct cb_outputs *w, cb_status_t st);

#endif
