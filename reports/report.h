/* SPDX-License-Identifier: MIT */
/*
 * reports/report.h - the result record and the writers that print it as it
 * is measured: the human table (reports/table.c) and the CSV
 * (reports/csv.c).  The JSON document, plots, comparisons and the HTML
 * report are in reports/results.h; all of them read the same struct cb_row.
 *
 * Nothing here knows the command line: the driver (bench/) fills these
 * structs and hands them down.
 */
#ifndef CB_REPORTS_REPORT_H
#define CB_REPORTS_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <collbench/types.h>

enum cb_format { CB_FMT_TABLE, CB_FMT_CSV, CB_FMT_JSON };

/* One output of a run: a file (or stdout) in one format. */
struct cb_output {
	const char *path; /* NULL: stdout */
	enum cb_format format;
};

/*
 * One measured point, one row of the CSV (in its column order): nccl-tests'
 * columns plus who, what and how spread.  The strings are owned, so a row
 * read back from a file and a row measured now are the same thing.
 */
struct cb_row {
	char coll[24], algo[24], transport[32], dtype[16];
	char op[16]; /* "sum", ..., or "none" */
	int ranks, hosts;
	uint64_t bytes, count;
	int inplace;
	int root; /* -1: not a rooted collective (null in JSON) */
	double time_us, algbw_gbps, busbw_gbps;
	uint64_t wrong;
	double model_us;
	double min_us, p50_us, p99_us, max_us;
	int slowest; /* comm rank with the largest mean time; -1: unknown */
	/* Parameter servers (ps, ps-async; NaN for other algorithms): per
	 * worker, pushes and pulls per second (one of each per shard and
	 * step); staleness of the pushes (updates from other workers the
	 * copy a worker stepped from lacked): p50, p99, max; 0 for sync. */
	double push_per_s, pull_per_s;
	double stale_p50, stale_p99, stale_max;
	/* timed calls (steps) each rank ran for the row: -n, or what -D's
	 * duration held; 0: unknown (files of earlier versions) */
	uint64_t iters;
};

/* The settings a run was made with, for the record (JSON "settings"). */
struct cb_run_settings {
	size_t min_bytes, max_bytes, step_bytes; /* step 0: factor */
	double factor;
	int iters, warmup, check;
	int ndtypes, nops;
	enum cb_dtype dtypes[CB_DT_COUNT];
	enum cb_op ops[CB_OP_COUNT];
	int root, ps_servers;
	size_t chunk_bytes; /* 0: each algorithm's default */
	double timeout_s;
	const char *sweep_by;   /* "ranks", "nodes", or NULL: no sweep */
	const char *sweep_list; /* as given */
	size_t scaling_bytes;   /* 0: the largest size */
	int touch;              /* --touch */
	int average;            /* -a: 0 first rank, 1 mean, 2 min, 3 max */
	int cycles;             /* -N: sweeps; 0 until stopped */
	double duration_s;      /* -D: seconds of timed calls per point; 0 -n */
	int report_gbits;       /* --report_gbits: table and CSV in Gb/s */
};

/* What the header says about the whole run. */
struct cb_run_info {
	const char *colls, *algo, *transport;
	int ranks, hosts;
	const char *host_names; /* "a, b" */
	int iters, warmup, check;
	int touch; /* --touch */
	double alpha_us, beta_gbps, gamma_gbps;
	const char *model_source; /* "measured between ranks 0 and 1" */
	const char *binding;      /* topo: "rank 0 -> core 0 (...)", or NULL */
	const char *inventory;    /* topo: lines, '\n' between; or NULL */
	const char *transport_detail; /* rank 0's devices, per transport,
	                               * '\n' between; or NULL */
	const char *gpu_paths;        /* topo: per host, the GPUs in use and
	                               * their paths (NVL, PIX, ...), '\n'
	                               * between; NULL without GPUs */
	/* --mem gpu: "gpu", and what drives the device memory (each GPU in
	 * use and its ranks, how each transport moves it), '\n' between;
	 * NULL for host buffers */
	const char *mem_kind, *memory;
	const char *auto_source; /* what decides --algo auto, or NULL */
	/* which rank's mean a row's time is (-a), e.g. "the largest
	 * across ranks"; NULL: "averaged across ranks" */
	const char *across;
	double duration_s; /* -D: each point timed for this long; 0: -n */
	int gbits;         /* --report_gbits: bandwidth in Gb/s */
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
	int gbits; /* --report_gbits: bandwidth in Gb/s (1e9 bits/s) */
};

/* One point of the scaling summary: busbw of (collective, algorithm) on a
 * group of @k ranks (@hosts hosts) at @bytes. */
struct cb_scale_pt {
	const char *coll, *algo;
	int coll_order; /* sorts collectives (their enum's order) */
	int k, hosts;
	double busbw_gbps;
	size_t bytes;
};

/* How much a device counter moved over a run, on one host (verbs port
 * counters: port_xmit_data, symbol_error, ...). */
struct cb_port_delta {
	char host[64];
	char dev[48];  /* "mlx5_0:1" */
	char name[40]; /* "port_xmit_data" */
	int64_t delta;
	int is_error; /* a counter of trouble: non-zero is flagged */
};

/* --report_gbits: the table's and the CSV's bandwidth in Gb/s (1e9 bits/s,
 * 8 x GB/s); @rows scaled in place (JSON rows keep GB/s). */
#define CB_GBITS_PER_GBPS 8.0
void cb_rows_to_gbits(struct cb_row *rows, int n);

/* Busbw from algbw as nccl-tests defines it. */
double cb_busbw(double algbw_gbps, double factor);
/* GB/s (1e9 B/s) for @bytes in @time_us; 0 when time is 0. */
double cb_algbw_gbps(size_t bytes, double time_us);

/* The writers, by format (JSON is written whole at the end: results.h). */
void cb_report_header(FILE *f, enum cb_format fmt,
                      const struct cb_run_info *ri);
void cb_report_section(FILE *f, enum cb_format fmt,
                       const struct cb_section *sec);
/* One size and algorithm: the out-of-place row and, when @n == 2, the
 * in-place one. */
void cb_report_point(FILE *f, enum cb_format fmt, const struct cb_row *rows,
                     int n);
/* The port counters' changes (table: comment lines; errors flagged, as
 * perftest's -W). */
void cb_report_counters(FILE *f, enum cb_format fmt,
                        const struct cb_port_delta *d, int n);
/* @gbits: @avg_busbw is in Gb/s (--report_gbits), else GB/s. */
void cb_report_footer(FILE *f, enum cb_format fmt, uint64_t wrong,
                      double avg_busbw, int gbits);
/* The table's scaling summary after a --ranks/--nodes sweep: @pts sorted
 * here (by collective, algorithm, group size); @by_hosts: the group size
 * column counts hosts. */
void cb_report_scaling(FILE *f, struct cb_scale_pt *pts, int n, int by_hosts,
                       int gbits);

/* The table writer (reports/table.c) and the CSV's (reports/csv.c),
 * behind cb_report_*. */
void cb_table_header(FILE *f, const struct cb_run_info *ri);
void cb_table_section(FILE *f, const struct cb_section *sec);
void cb_table_point(FILE *f, const struct cb_row *rows, int n);
void cb_table_footer(FILE *f, uint64_t wrong, double avg_busbw, int gbits);
/* @gbits: the bandwidth columns are algbw_gbits, busbw_gbits (Gb/s) */
void cb_csv_header(FILE *f, int gbits);
void cb_csv_row(FILE *f, const struct cb_row *r);

#endif
