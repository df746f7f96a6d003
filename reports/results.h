/* SPDX-License-Identifier: MIT */
/*
 * reports/results.h - a run's results as a file people keep: the JSON
 * document (docs/results-schema.md), its reader, and what is made from
 * it: gnuplot plots, the comparison of two runs, the HTML report.
 *
 * A result set is the run object (everything the file says about the run,
 * kept as the json-c tree it was read as or built as, so unknown members
 * of a newer minor version survive a read and write) and its rows as plain
 * structs, which is what plots, comparisons and reports work on.
 */
#ifndef CB_REPORTS_RESULTS_H
#define CB_REPORTS_RESULTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <collbench/status.h>

#include "reports/report.h"

#define CB_RESULTS_SCHEMA         "collbench-results"
#define CB_RESULTS_SCHEMA_VERSION 1

struct json_object;
struct cb_comm;
struct cb_topo_job;

struct cb_results {
	struct json_object *run; /* every member but "rows" */
	struct cb_row *rows;
	size_t nrows, cap;
	char *path; /* the file it was read from; NULL for a live run */
};

/* An empty set whose run object has only the schema's name and version. */
cb_status_t cb_results_new(struct cb_results **out);
void cb_results_free(struct cb_results *r);
cb_status_t cb_results_add(struct cb_results *r, const struct cb_row *row);

/* The document, pretty-printed, with a final newline.  CB_ERR_SYS when
 * the stream fails. */
cb_status_t cb_results_write(FILE *f, const struct cb_results *r);
/* The document into @path through PATH.part, renamed over it when whole:
 * a reader, or a kill at any moment, finds the old document or the new,
 * never part of one.  CB_ERR_SYS (recorded) when it cannot be written. */
cb_status_t cb_results_save(const struct cb_results *r, const char *path);
/* Read and check @path.  CB_ERR_USAGE, recorded as one line naming the
 * file (and the row and member), for a file that is missing, is not JSON,
 * is another schema or a newer major version, or lacks a member. */
cb_status_t cb_results_load(const char *path, struct cb_results **out);
/* The same from @len bytes at @buf (need not end with a NUL), read from
 * what @path names. */
cb_status_t cb_results_parse(const char *path, const char *buf, size_t len,
                             struct cb_results **out);

/* A string member of the run object, or NULL. */
const char *cb_results_str(const struct cb_results *r, const char *key);
/* A short name for legends and headings: the file's base name without
 * .json, or "run" for a live run. */
void cb_results_label(const struct cb_results *r, char *buf, size_t bytes);

/* ---- a live run (reports/run.c): called by the driver on rank 0 ---- */

/* What the run object is made from.  A live run fills it from the process
 * (cb_results_for_run); the unit test fills it with fixed values. */
struct cb_results_meta {
	int argc;
	char *const *argv;
	const char *build; /* CB_BUILD_INFO; NULL: unknown */
	long long start;   /* seconds since 1970 (UTC); <= 0: unknown */
	const struct cb_run_info *ri;
	const struct cb_run_settings *settings; /* NULL: none recorded */
	char *const *hosts;                     /* [nhosts] */
	int nhosts;
	const struct cb_topo_job *topo; /* NULL: no per-host inventory */
	char *const *env;               /* NULL-terminated; NULL: none */
	int reproducible;
};

/* 1 when the run writes JSON (one of @outs) or plots (@plot not NULL):
 * only then are rows kept. */
int cb_results_wanted(const struct cb_output *outs, int nouts,
                      const char *plot);
/* 1 under COLLBENCH_REPRODUCIBLE=1 (a test mode: see the schema). */
int cb_results_reproducible(void);
/* The run object: argv, version and build, start time, hosts, ranks,
 * transport, settings, the model, topology, environment. */
cb_status_t cb_results_from_meta(const struct cb_results_meta *m,
                                 struct cb_results **out);
/* The same from the live process on rank 0: @argc/@argv and @settings as
 * given, hosts and topology from @c, the header's facts from @ri, the
 * clock, the environment. */
cb_status_t cb_results_for_run(int argc, char *const *argv,
                               const struct cb_run_settings *settings,
                               const struct cb_comm *c,
                               const struct cb_run_info *ri,
                               struct cb_results **out);
/* In reproducible mode, zero what a measurement makes vary (times,
 * bandwidths, the model, the slowest rank); otherwise nothing. */
void cb_results_scrub(struct cb_row *rows, int n);
/* Keep @n rows.  NULL @r: nothing. */
void cb_results_add_rows(struct cb_results *r, const struct cb_row *rows,
                         int n);
/* Record the run's outcome: "status" complete (@st CB_OK), interrupted
 * (SIGINT, SIGTERM) or failed, with @error; the total of wrong values and
 * the mean busbw of the rows. */
void cb_results_end(struct cb_results *r, cb_status_t st, const char *error);
/* While the run goes on: "failed", because the run did not finish - what
 * the file says if collbench is killed before it writes its end. */
void cb_results_unfinished(struct cb_results *r);
/* cb_results_save to the path of each of @outs whose format is JSON. */
cb_status_t cb_results_save_all(const struct cb_results *r,
                                const struct cb_output *outs, int nouts);
/* Rank 0 before anything is measured: a document with the command line,
 * no rows and "status": "failed" - @st's line (recorded), or, @st CB_OK,
 * cb_results_unfinished's - to each JSON output with a path, so that from
 * the start the file is this run's, never an older one. */
cb_status_t cb_results_early(int argc, char *const *argv,
                             const struct cb_output *outs, int nouts,
                             cb_status_t st);
/* The run's port counter changes ("port_counters"). */
struct cb_port_delta;
void cb_results_set_counters(struct cb_results *r,
                             const struct cb_port_delta *d, int n);
/* The end of a run: cb_results_end from @st (and the recorded line),
 * write the document to @f[i] for each of @outs whose format is JSON (a
 * stream: stdout) and save it to each such output's path, and draw @plot
 * (NULL: none) when the run succeeded.  Returns the first failure to
 * write; a missing gnuplot is one warning line (the run's status stays the
 * measurement's). */
cb_status_t cb_results_finish(struct cb_results *r,
                              const struct cb_output *outs, int nouts,
                              const char *plot, FILE *const *f, cb_status_t st);

/* ---- plots (reports/plot.c) ---- */

enum cb_plot_metric { CB_PLOT_BUSBW, CB_PLOT_ALGBW, CB_PLOT_TIME };

struct cb_plot_cfg {
	const char *out; /* FILE.png or FILE.svg */
	enum cb_plot_metric metric;
	int width, height; /* pixels */
};

/* "busbw", "algbw", "time"; -1 for anything else. */
int cb_plot_metric_parse(const char *s);
/* Write FILE.dat and FILE.gp beside @cfg->out and run gnuplot on them,
 * which draws @cfg->out and, when the results hold more than one group
 * size, FILE-scaling.EXT.  @scaling (may be NULL) gets 1 in that case.
 * CB_ERR_UNAVAILABLE (recorded) when gnuplot is not on PATH: the .dat and
 * .gp files are there all the same; CB_ERR_USAGE when no row can be
 * plotted; CB_ERR_SYS when a file cannot be written or gnuplot fails. */
cb_status_t cb_plot(struct cb_results *const *runs, int nruns,
                    const struct cb_plot_cfg *cfg, int *scaling);

/* ---- compare (reports/compare.c) ---- */

struct cb_compare_sum {
	int matched, regressions, improvements, wrong, only_base, only_new;
};

/* Print the two runs side by side to @f; a row regresses when NEW's busbw
 * is below BASE's by more than @tolerance (0.10 = 10%), or, for rows
 * without a bandwidth (0 bytes, barrier, one rank), NEW's time is above
 * by more than that, or when NEW has wrong values. */
void cb_compare(FILE *f, const struct cb_results *base,
                const struct cb_results *new_, double tolerance,
                struct cb_compare_sum *sum);

/* ---- the HTML report (reports/html.c) ---- */

/* One self-contained page: plots as base64 PNG (when gnuplot is there),
 * metadata, warnings and the rows of each run.  @plots_missing gets 1
 * when gnuplot was not found (the page says so).  CB_ERR_SYS on a write
 * failure. */
cb_status_t cb_report_html(FILE *f, struct cb_results *const *runs, int nruns,
                           int *plots_missing);

/* ---- shared with the acceptance section (reports/accept_html.c) ---- */

/* gnuplot on PATH into @path; 0 when absent. */
int cb_gnuplot_find(char *path, size_t bytes);
/* Run @exe on script @gp in folder @dir, without a shell; its last error
 * line recorded on failure (CB_ERR_SYS). */
cb_status_t cb_gnuplot_run(const char *exe, const char *dir, const char *gp);
/* An acceptance run's section, from its "acceptance" member: the verdict
 * banner, findings, stages, the pair-bandwidth heatmap and matrix.
 * *@no_plot = 1 when gnuplot was not found. */
void cb_acc_html(FILE *f, struct json_object *acc, int *no_plot);
/* 1 when that member's verdict is FAIL. */
int cb_acc_html_failed(struct json_object *acc);

#endif
