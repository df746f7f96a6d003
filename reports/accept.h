/* SPDX-License-Identifier: MIT */
/*
 * reports/accept.h - the record of one `collbench acceptance` run, and its
 * writers: the terminal table (stages, a host x host matrix, findings, the
 * verdict), JSON (the results schema's "acceptance" member:
 * docs/results-schema.md), CSV of pairs, JUnit XML, and the HTML page with
 * a verdict banner and a pair-bandwidth heatmap drawn by gnuplot.
 *
 * bench/accept*.c fills it on rank 0; everything here is plain data and
 * pure writers, so the unit tests write a fixed record against golden
 * files.
 */
#ifndef CB_REPORTS_ACCEPT_H
#define CB_REPORTS_ACCEPT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <collbench/status.h>

#include "topo/hostctr.h"
#include "topo/nic.h"

enum cb_acc_state { CB_ACC_PASS, CB_ACC_FAIL, CB_ACC_SKIP };
const char *cb_acc_state_name(enum cb_acc_state s); /* "PASS", ... */

/* Stages, in the order vendors' bring-up procedures run them. */
enum cb_acc_stage_id {
	CB_ACC_INVENTORY,
	CB_ACC_CONNECTIVITY,
	CB_ACC_PAIRWISE,
	CB_ACC_COLLECTIVES,
	CB_ACC_BURN,
	CB_ACC_NSTAGES
};
const char *cb_acc_stage_name(enum cb_acc_stage_id s); /* "inventory" */

struct cb_acc_stage {
	enum cb_acc_state state;
	double seconds;
	char summary[256]; /* one line: "28 pairs, 2 suspects re-measured" */
};

/* An end of a measured pair: a host (one rank per host), or with --rails
 * one rank of a host and its NIC. */
struct cb_acc_node {
	int host;      /* index into hosts[] */
	int rank;      /* the comm rank measuring for it */
	int local;     /* its index among its host's ranks */
	char nic[32];  /* the NIC it uses ("eth0"), "" unknown */
	char name[96]; /* "node07" or "node07 rank 3" */
};

struct cb_acc_host {
	char name[64];
	int nranks;
	char nic[32]; /* the NIC its first rank uses */
	char addr[48];
	int reported; /* its inventory reached rank 0 */
	int nnics;
	struct cb_nic_info nics[CB_NIC_MAX]; /* counters: before the run */
	uint64_t after[CB_NIC_MAX][CB_NIC_COUNTERS]; /* at the end (burn) */
	int have_after;
	char differs[512]; /* what is unlike the other hosts; "" alike */
	/* Its leaf switch (--switches): its name, and its index among the
	 * job's leaves (valid where the record's nleaves > 0). */
	char sw[32];
	int leaf;
	/* Without switches: 1 + the group of hosts (normal inside, slow to
	 * the others) a "group" finding of the pairwise judge names; 0 none */
	int fgroup;
	/* Its retransmission and link counters (topo/hostctr.h): as first
	 * read (inventory), as last read, and what moved during each stage
	 * (have 0: none read). */
	struct cb_hostctr ctr0, ctr_last, moved[CB_ACC_NSTAGES];
	int flap_find; /* 1 + the finding that named it flapping; 0 none */
	/* Its CPU probe at inventory (topo/cpuprobe.h; gbps 0: not run):
	 * bytes copied per wall second, the thread's share of a core. */
	double cpu_gbps, cpu_share;
};

/* One measured pair of nodes a < b.  Directions: ab = a sends to b. */
struct cb_acc_pair {
	int a, b;                        /* node indices */
	int round;                       /* tournament round */
	int ok;                          /* connected and measured */
	enum cb_acc_stage_id fail_stage; /* where it failed (when !ok) */
	char error[240];
	double connect_ms;
	double lat_p50_us, lat_p99_us;
	double bw_ab_gbps, bw_ba_gbps, bibw_gbps;
	int remeasured; /* measured more than once (repeats, suspects) */
	/* measured again as a suspect (against a cleared partner, or the
	 * pair itself again), not as a control or a repeat; cleared: and in
	 * the end not named (acceptance/drive.c) */
	int suspect;
	int cleared;
	double first_bw_gbps, first_lat_us; /* the round's figures */
	/* TCP segments both ends retransmitted and sent during the rounds
	 * it was measured in where it was each end's only pair (ctr_meas:
	 * how many such measurements; 0 none). */
	uint64_t retrans, out_segs;
	int ctr_meas;
	int ctr_lossy; /* ... of them, those that lost CB_ACC_LOSS_RATE */
};

struct cb_acc_finding {
	enum cb_acc_stage_id stage;
	char kind[8]; /* "host", "node", "path", "group", "job" */
	int ha, hb;   /* hosts named (-1: none) */
	char line[640];
};

/* A warning: the run could not tell something (the noise too wide for
 * the fault size asked for); it names no host and fails nothing. */
struct cb_acc_warning {
	enum cb_acc_stage_id stage;
	char line[640];
};

/* One step of the pairwise plan (acceptance/plan.h): its rounds, pairs
 * measured, and why that many. */
struct cb_acc_plan_step {
	char name[12];
	int rounds, pairs;
	char why[192];
};

/* The noise the pairwise judge measured (have 0: not judged so). */
struct cb_acc_noise {
	int have;
	double sigma, sigma_rep, sigma_cl, k; /* of ln(bandwidth) */
	double floor_gbps;                    /* a pair below is outside */
	double vary_pct; /* the median difference between repeats */
	double tell_pct; /* the smallest fault it can tell */
	/* a host slow to all its peers: its median pair against the noise
	 * of a median of node_pairs (sigma_node: the nodes' medians' MAD) */
	double sigma_node, tell_node_pct;
	int node_pairs;
};

struct cb_acc_coll {
	char coll[24], algo[24];
	int ranks, hosts;
	uint64_t bytes;
	double time_us, busbw_gbps;
	double model_busbw_gbps; /* what the measured links predict */
	uint64_t wrong;
};

struct cb_acc_pass {
	double t_s; /* since the burn started */
	double median_bw_gbps, min_bw_gbps, median_lat_us;
	int min_a, min_b; /* the slowest pair's nodes (-1: none) */
	double t0_s;      /* when the pass started */
	double allreduce_busbw_gbps;
	int slow_pairs, failed_pairs;
	/* each pair's bandwidth in this pass, by index in cb_acc.pairs (0:
	 * failed); NULL where it was not kept */
	double *bw_gbps;
};

struct cb_acc_settings {
	const char *transport; /* what connects the nodes: "tcp", ... */
	int rails;
	double bw_tolerance;  /* a pair below this x the median fails */
	double lat_tolerance; /* a pair above this x the median fails */
	double coll_tolerance;
	double expect_bw_gbps; /* 0: none */
	double expect_lat_us;  /* 0: none */
	uint64_t bw_bytes, coll_bytes;
	int lat_iters;
	double pair_timeout_s, duration_s;
	/* --expect's band that set expect_bw_gbps / expect_lat_us ("1M-16M";
	 * "" a flat line or the option) */
	char expect_bw_band[32], expect_lat_band[32];
	double baseline_tolerance; /* --baseline: a drop beyond this fails */
	double window_s;           /* --window: the burn's windows; 0 none */
};

/* What --baseline compared (have 0: no baseline). */
struct cb_acc_base_sum {
	int have;
	char file[200];
	int compared, dropped; /* pairs */
	int colls;             /* collectives compared */
	double ratio;          /* the median node's median pair, now / then */
	double allow_pct;  /* the drop a pair may show (tolerance or noise) */
	char skipped[320]; /* what could not be compared; "" all */
};

/* One window of the burn (--window): its slowest pair. */
struct cb_acc_window {
	double t0_s, t1_s;
	int a, b; /* nodes; -1 none measured */
	double min_bw_gbps, median_bw_gbps;
	double pass_t0_s, pass_t1_s; /* the pass it was measured in (a pass
	                              * belongs to the window it started in) */
	int failed;
	int outside;
	/* the pair against its own median over the burn's passes (0: not
	 * judged so: fewer than 3 passes measured it) */
	double self_ratio;
	int self_passes;
};

struct cb_results_meta;

struct cb_acc {
	struct cb_acc_settings set;
	/* The run object's facts (argv, hosts, topology, environment);
	 * NULL: a bare one (the unit tests). */
	const struct cb_results_meta *meta;
	const char *version, *start_time; /* start_time NULL: unknown */
	int argc;
	char *const *argv;
	int ranks;
	struct cb_acc_host *hosts;
	int nhosts;
	int nleaves; /* leaf switches of the hosts (--switches); 0 unknown */
	struct cb_acc_node *nodes;
	int nnodes;
	struct cb_acc_pair *pairs;
	int npairs;
	struct cb_acc_stage stage[CB_ACC_NSTAGES];
	struct cb_acc_finding *findings;
	int nfindings, cap_findings;
	struct cb_acc_warning *warnings;
	int nwarnings, cap_warnings;
	struct cb_acc_plan_step plan[4];
	int nplan;
	struct cb_acc_noise noise;
	struct cb_acc_coll colls[4];
	int ncolls;
	struct cb_acc_pass *passes;
	int npasses;
	struct cb_acc_window *windows;
	int nwindows;
	struct cb_acc_base_sum base;
	double ref_bw_gbps, ref_bibw_gbps, ref_lat_us; /* the cluster's
	                                                * median pair */
	/* The same of the control pairs measured alone beside the suspects
	 * (0: none); a suspect measured again alone is judged against these. */
	double alone_bw_gbps, alone_bibw_gbps, alone_lat_us;
	double link_gbps; /* the NICs' common speed; 0 unknown */
	/* suspects: pairs outside the noise in the quick tier; retested:
	 * the record's pairs measured again for them (marked suspect), and
	 * cleared: of those, the ones no finding named (acceptance/drive.c) */
	int suspects, retested, cleared;
	/* "8 ranks share the 2 cores of one machine": collectives, and
	 * latency against the median, are then reported, not judged; ""
	 * otherwise. */
	char shared_cores[96];
	int fail; /* the verdict: any finding fails */
	double seconds;
};

/* Add a finding (printf-style line); the verdict becomes FAIL. */
void cb_acc_find(struct cb_acc *a, enum cb_acc_stage_id stage, const char *kind,
                 int ha, int hb, const char *fmt, ...)
        __attribute__((format(printf, 6, 7)));

/* Add a warning (printf-style line); the verdict stays. */
void cb_acc_warn(struct cb_acc *a, enum cb_acc_stage_id stage, const char *fmt,
                 ...) __attribute__((format(printf, 3, 4)));

/* The pair of nodes (i, j) in any order, or NULL. */
struct cb_acc_pair *cb_acc_pair_of(const struct cb_acc *a, int i, int j);
/* @m's figures into the record's pair @p: it keeps its round, gets
 * @stage as its fail_stage, and the TCP counters of @ctr (@p's own, @m's
 * or a sum; any may be @p). */
void cb_acc_pair_take(struct cb_acc_pair *p, const struct cb_acc_pair *m,
                      enum cb_acc_stage_id stage,
                      const struct cb_acc_pair *ctr);
/* The bandwidth a pair is judged by: the slower direction (0 when not
 * measured). */
double cb_acc_pair_bw(const struct cb_acc_pair *p);
/* The reference @p is judged against: the control pairs measured alone for
 * a suspect measured again alone, else the cluster's median pair. */
void cb_acc_ref_for(const struct cb_acc *a, const struct cb_acc_pair *p,
                    double *bw_gbps, double *bibw_gbps, double *lat_us);

/* The writers.  CB_ERR_SYS when the stream fails. */
cb_status_t cb_acc_write_table(FILE *f, const struct cb_acc *a);
cb_status_t cb_acc_write_csv(FILE *f, const struct cb_acc *a);
cb_status_t cb_acc_write_junit(FILE *f, const struct cb_acc *a);
/* The results-schema document: the run object with "acceptance" and the
 * collectives stage's rows. */
cb_status_t cb_acc_write_json(FILE *f, const struct cb_acc *a);
/* One self-contained page; the heatmap is drawn with gnuplot in a
 * temporary folder (without gnuplot: the page says so, *@no_plot = 1). */
cb_status_t cb_acc_write_html(FILE *f, const struct cb_acc *a, int *no_plot);

void cb_acc_free(struct cb_acc *a);

#endif
