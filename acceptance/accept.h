/* SPDX-License-Identifier: MIT */
/*
 * acceptance/accept.h - `collbench acceptance`, shared by its files:
 *
 *   cmd.c    options, the stages in order, outputs, exit status
 *   pair.c   the tournament and one pair's measurements
 *   round.c  a round of pairs across the job, gathered on rank 0
 *   judge.c  which pairs are outside tolerance, and who is to blame
 *   plan.c   the pairwise plan and its noise judge, pure (plan.h)
 *   drive.c  the pairwise stage: plan.c's rounds over the real fabric
 *   stage.c  inventory, collectives, the burn's counters; every rank's
 *            retransmission and link counters at each gather
 *   counters.c  what those counters name (lossy, flapping), pure
 *   baseline.c  --baseline: what dropped since an earlier run's JSON
 *   baseline_read.c  that JSON read
 *   expect.c --expect FILE's lines, flat and per size band
 *
 * The record itself (struct cb_acc) and its writers are reports/accept.h.
 */
#ifndef CB_ACCEPTANCE_ACCEPT_H
#define CB_ACCEPTANCE_ACCEPT_H

#include <stddef.h>
#include <stdint.h>

#include <collbench/status.h>

#include "core/comm.h"
#include "reports/accept.h"
#include "reports/report.h"

#define CB_ACC_MAX_OUT 8

struct cb_acc_opts {
	const char *transport; /* "auto" (tcp between hosts), "tcp", ... */
	const char *rendezvous;
	int np, np_set;
	double timeout_s;
	struct cb_acc_settings set;
	const char *expect_file;
	const char *baseline_file;
	struct cb_acc_base *base; /* --baseline, read (baseline.c) */
	const char *switches_file;
	struct cb_acc_switches *sw; /* --switches, read (switches.c) */
	const char *tcp_if;
	struct cb_optset tp; /* the communicator's option view (core/env.h) */
	int verbose, help;
	unsigned stages; /* 1u << enum cb_acc_stage_id: the stages asked for */
	struct {
		const char *path; /* NULL: stdout */
		int kind;         /* CB_ACC_OUT_* */
	} out[CB_ACC_MAX_OUT];
	int nout;
	int argc;
	char **argv;
};

enum {
	CB_ACC_OUT_TABLE,
	CB_ACC_OUT_JSON,
	CB_ACC_OUT_CSV,
	CB_ACC_OUT_XML,
	CB_ACC_OUT_HTML
};

/* ---- the tournament (pair.c) ---- */

/* Rounds of a round-robin tournament of @m players: m - 1, or m when m is
 * odd (each player sits out once). */
int cb_acc_rounds(int m);
/* The pairs of round @r (0-based), as player indices, lower first;
 * returns how many (floor(m / 2), one fewer when a player sits out). */
int cb_acc_round_pairs(int m, int r, int (*pairs)[2]);

/* ---- one rank's part of a stage (pair.c) ---- */

/* What one rank measured or saw, sent to rank 0 (plain data). */
struct cb_acc_meas {
	int32_t a, b; /* nodes; -1: no entry */
	int32_t ok;
	char error[240];
	double connect_ms, lat_p50_us, lat_p99_us;
	double bw_ab_gbps, bw_ba_gbps, bibw_gbps;
};

struct cb_acc_ctx {
	struct cb_comm *c;
	const struct cb_acc_opts *o;
	struct cb_acc *a; /* nodes[], nnodes on every rank; rank 0: all */
	int me;           /* this rank's node, or -1 (not measuring) */
	void *buf;        /* two bw_bytes halves and a small area */
	size_t buf_bytes;
	const struct cb_mem *mem;
	double *samples;     /* latency round trips */
	uint32_t seq;        /* keys of the stage's store exchanges */
	int alone;           /* measuring suspects alone: more repetitions */
	unsigned char *gone; /* rank 0: ranks that stopped reporting */
	/* Connectivity: its first pass waits longer for late ranks (@idle_s;
	 * 0: a pair deadline and a half), connects anew (@again: the second
	 * try of pairs that failed), and the cut-off check waits for that
	 * try (@defer_cutoff) with this node's pairs counted. */
	double idle_s;
	int again, defer_cutoff, pairs_run, pairs_ok;
	/* The stage running: the counters read at its gathers are its. */
	enum cb_acc_stage_id stage;
	char ctr_netdev[32], ctr_ibdev[32]; /* whose counters (inventory) */
};

/* Connect to node @peer's rank and exchange a small checked message both
 * ways, within the pair deadline.  Fills @m (ok, connect_ms, error).
 * Returns CB_ERR_ABORTED when another rank failed the job, else CB_OK. */
cb_status_t cb_acc_pair_connect(struct cb_acc_ctx *x, int peer,
                                struct cb_acc_meas *m);
/* Latency and bandwidth with node @peer (connected): the lower node times
 * and fills @m; the other serves.  A failure is recorded in @m, and the
 * peer is disconnected so its requests cannot touch later pairs.  Returns
 * as cb_acc_pair_connect. */
cb_status_t cb_acc_pair_measure(struct cb_acc_ctx *x, int peer,
                                struct cb_acc_meas *m);

/* How pairs run (cb_acc_stage_pairs' @alone). */
enum {
	CB_ACC_CONCURRENT,    /* a round's pairs at once */
	CB_ACC_ALONE_SUSPECT, /* one at a time, nothing else running, more
	                       * repetitions: the suspects and controls */
	CB_ACC_ALONE_CONFIRM, /* the same, more repetitions yet */
	CB_ACC_ALONE_SERIAL,  /* one at a time, the rounds' repetitions: where
	                       * ranks share cores, concurrent pairs would
	                       * measure the CPUs */
};

/* (round.c) Every node runs its pairs of @pairs (node pairs; every rank calls
 * with the same list), in order; then every rank's entries go to rank 0, which
 * waits at most @wait_s for late ranks and fills @out[i] for pair i.
 * @run: 0 connectivity, 1 measure.  @alone: CB_ACC_*. */
cb_status_t cb_acc_stage_pairs(struct cb_acc_ctx *x, int (*pairs)[2], int n,
                               int run, int alone, double wait_s,
                               struct cb_acc_pair *out);

/* ---- judgement (judge.c) ---- */

/* The cluster's reference figures: per node, the median of its pairs;
 * then the median over nodes (so one bad host's n - 1 pairs do not drag
 * the reference down with them). */
void cb_acc_refs(struct cb_acc *a);
/* 1 when @p is outside tolerance (or below an expectation); @why gets
 * what. */
int cb_acc_outside(const struct cb_acc *a, const struct cb_acc_pair *p,
                   char *why, size_t bytes);
/* Findings for the pairs that failed in @stage (fail_stage): a node none
 * of whose pairs worked, else each pair. */
void cb_acc_judge_connect(struct cb_acc *a, enum cb_acc_stage_id stage);
/* Findings of the pairwise stage: nodes, hosts, groups, paths. */
void cb_acc_judge_pairs(struct cb_acc *a, enum cb_acc_stage_id stage);

/* ---- the pairwise stage, planned (drive.c) ---- */

/* Every rank: the rounds acceptance/plan.c plans, one pair at a time
 * where @serial; rank 0 then has the record's pairs, findings, warnings,
 * plan and noise. */
cb_status_t cb_acc_planned(struct cb_acc_ctx *x, int serial);
/* The pairs the plan's verdict @r measured again for a suspect, marked in
 * the record: suspect, and cleared where no finding of @r named them in
 * the end (a node, path, or uplink or group it crosses); @map the
 * planner's nodes to the record's. */
struct cb_accp_result;
void cb_acc_mark_suspects(struct cb_acc *a, const struct cb_accp_result *r,
                          const int *map);

/* ---- the other stages (stage.c) ---- */

cb_status_t cb_acc_inventory(struct cb_acc_ctx *x);
cb_status_t cb_acc_collectives(struct cb_acc_ctx *x, double *busbw_out);
/* Re-read every NIC's error counters (rank 0: into hosts[].after). */
cb_status_t cb_acc_counters(struct cb_acc_ctx *x);
/* Rank 0: findings for counters that grew. */
void cb_acc_judge_counters(struct cb_acc *a);
/* This rank's retransmission and link counters, now (topo/hostctr.h). */
void cb_acc_ctr_read(const struct cb_acc_ctx *x, struct cb_hostctr *out);
/* Rank 0, after a gather whose every block (@stride bytes apart in @all)
 * begins with its rank's counters: each host's, from its first rank
 * present, into the record under x->stage; @moved[h] (NULL: not wanted)
 * gets what moved on host h since it was last read. */
void cb_acc_ctr_gathered(struct cb_acc_ctx *x, const void *all, size_t stride,
                         const unsigned char *present,
                         struct cb_hostctr *moved);

/* ---- what the counters name (counters.c, pure) ---- */

/* The rule: a host is named lossy in a stage when it (or, in the pairwise
 * stage, the median of its pairs) retransmitted more than
 * CB_ACC_LOSS_RATIO times the median of the other hosts (pairs), at least
 * CB_ACC_LOSS_MIN segments, and at least CB_ACC_LOSS_RATE of the
 * segments sent. */
#define CB_ACC_LOSS_RATIO 10.0
#define CB_ACC_LOSS_MIN   50
#define CB_ACC_LOSS_RATE  0.001

/* Host @h's counters @snap, read at a gather of stage @s: the first
 * reading is its start; later ones add what moved to moved[@s], and to
 * *@moved (NULL: not wanted). */
void cb_acc_ctr_note(struct cb_acc *a, enum cb_acc_stage_id s, int h,
                     const struct cb_hostctr *snap, struct cb_hostctr *moved);
/* Findings of the counters: lossy hosts (by the rule above) and links
 * that went down (carrier changes, link_downed: appended to the plan's
 * flapping finding for the host where it made one). */
void cb_acc_judge_loss(struct cb_acc *a);

/* ---- a slow host or a slow link (cpu.c, pure) ---- */

/* Every host runs topo/cpuprobe.h's copy loop for CB_ACC_CPU_PROBE_S at
 * inventory.  After the other judges: a host named (alone, or as one end
 * of a path) whose probe copied less than CB_ACC_CPU_SLOW of the median
 * host's is said to be slow itself (a CPU cap, throttling, other work);
 * a host named whose probe was as fast as the others' is said to be slow
 * in its NIC, port or cable.  The inventory's summary names the slowest
 * host's probe when it is below that bound, and so does a pairwise
 * warning that the noise is too wide to name anyone (where to look
 * first).  Changes no verdict. */
#define CB_ACC_CPU_PROBE_S 0.25
#define CB_ACC_CPU_SLOW    0.5
void cb_acc_judge_cpu(struct cb_acc *a);

/* ---- an earlier run to compare with (baseline.c) ---- */

/* The parts of an earlier run's JSON (-O x.json) compared: its nodes'
 * names, each pair's bandwidth (the slower direction; 0 failed), its
 * collectives, and the sizes they were measured at. */
struct cb_acc_base_pair {
	int a, b; /* into names */
	double bw_gbps;
};
struct cb_acc_base {
	char path[200];
	char (*names)[96]; /* its nodes */
	int nnames;
	char (*hosts)[64];
	int nhosts;
	struct cb_acc_base_pair *pairs;
	int npairs;
	struct cb_acc_coll colls[4];
	int ncolls;
	uint64_t bw_bytes, coll_bytes;
	int rails;
	double sigma_rep; /* its noise between repeats; 0 unknown */
};

/* Read @path (malformed: one line, CB_ERR_USAGE; baseline_read.c). */
cb_status_t cb_acc_base_load(const char *path, struct cb_acc_base **out);
void cb_acc_base_free(struct cb_acc_base *b);
/* Refuse (CB_ERR_USAGE, one line) a baseline of another cluster: no host
 * in common with @a's, other --rails, or neither size alike. */
cb_status_t cb_acc_base_check(const struct cb_acc_base *b,
                              const struct cb_acc *a);
/* Rank 0, at the end: findings for what dropped beyond
 * a->set.baseline_tolerance (and the noise the run measured) since @b:
 * the whole fabric (the median of the nodes' median pairs), a node's
 * median, a pair, a collective; a->base says what was compared. */
void cb_acc_judge_base(struct cb_acc *a, const struct cb_acc_base *b);

/* ---- the burn's windows (out.c) ---- */

/* Rank 0, after the burn with --window: each window's slowest pair; a
 * window whose slowest pair is outside (below the pairwise stage's noise
 * floor, or an expectation) or that had a failed pair is a finding.  Where
 * the passes kept their pairs' figures and a pair was measured in at least
 * CB_ACC_SELF_PASSES passes, "slowest" is against its own median over
 * them, and outside also means below CB_ACC_SELF_DROP of it and by more
 * than CB_ACC_SELF_Z sigmas of the pairs' pass-to-pass spread (on shared
 * cores healthy pairs dip to ~58% of their own median; a link slow at
 * times, to a fifth: 12-20%).  The same bounds judge each pass's
 * allreduce against its median over the burn. */
#define CB_ACC_SELF_PASSES 3
#define CB_ACC_SELF_DROP   0.5
#define CB_ACC_SELF_Z      3.0
void cb_acc_judge_windows(struct cb_acc *a);

/* Rank 0, after the burn: a drift is the best median pair of the last
 * third of the passes below the bandwidth tolerance of the first third's
 * median, by more than CB_ACC_SELF_Z sigmas of what a median of that many
 * passes varies by (the passes' own spread from one pass to the next,
 * their trend taken out): a step or a slide, not one busy pass (that is
 * the windows').  With fewer than CB_ACC_DRIFT_PASSES passes such a fall
 * is a warning that a drift cannot be told from a busy moment. */
#define CB_ACC_DRIFT_PASSES 4
void cb_acc_judge_drift(struct cb_acc *a);

/* ---- rank 0's summaries and outputs (out.c) ---- */

struct cb_results_meta;
struct cb_run_info;

/* Findings of the collectives stage (wrong values; busbw below
 * --coll-tolerance of the model, unless ranks share cores) and its
 * summary. */
void cb_acc_judge_colls(struct cb_acc *a);
/* The median of @v[0..@n) (sorted in place); 0 when @n <= 0. */
double cb_acc_median(double *v, int n);
/* One burn pass's figures from the record's pairs, at @t s. */
void cb_acc_pass_summary(struct cb_acc *a, double t, double allreduce);
/* The run object's facts for the JSON, into @m (and @ri, @hn). */
void cb_acc_meta(struct cb_comm *c, const struct cb_acc_opts *o,
                 struct cb_acc *a, struct cb_results_meta *m,
                 struct cb_run_info *ri, char *hn, size_t bytes);
/* Exit statuses. */
#define CB_ACC_EXIT_PASS  0 /* PASS, warnings or not */
#define CB_ACC_EXIT_FAIL  1 /* a finding */
#define CB_ACC_EXIT_USAGE 2 /* a bad option or file */
#define CB_ACC_EXIT_NORUN                                                      \
	3                      /* could not run: a rank did not start or       \
	                        * stopped, a deadline, an output unwritten */
#define CB_ACC_EXIT_UNAVAIL 77 /* the transport is not available here */
/* The exit status for a job that stopped with @st. */
int cb_acc_exit(cb_status_t st);
/* Every output; CB_ACC_EXIT_PASS, _FAIL, or _NORUN where one could not
 * be written. */
int cb_acc_outputs(const struct cb_acc_opts *o, struct cb_acc *a);

/* ---- the command (cmd.c, opts.c) ---- */

/* CB_ERR_USAGE, recorded, for a bad value; o->help for -h. */
cb_status_t cb_acc_parse(int argc, char **argv, struct cb_acc_opts *o);
/* What cb_acc_parse read (the baseline, the switches). */
void cb_acc_opts_free(struct cb_acc_opts *o);
/* The text of an expectations file (--expect; @name for messages): lines
 * "bw_gbps = X" and "lat_us = Y", '#' comments, each key once, or
 * "bw_gbps[1M-16M] = X": for pairs measured at a size in that band (the
 * band beats the flat line; bands of a key do not overlap).  Sets
 * @s's expectations, or leaves @s alone and fails with one line naming
 * the line (CB_ERR_USAGE). */
cb_status_t cb_acc_expect_parse(const char *text, size_t len, const char *name,
                                struct cb_acc_settings *s);
/* --switches FILE (switches.c): each host's leaf switch, as "HOST LEAF"
 * lines or Slurm's topology.conf ("SwitchName=S Nodes=node[01-16]").  A
 * file that is not one: one line naming its line (CB_ERR_USAGE). */
struct cb_acc_switches;
cb_status_t cb_acc_switches_parse(const char *text, size_t len,
                                  const char *name,
                                  struct cb_acc_switches **out);
cb_status_t cb_acc_switches_load(const char *path,
                                 struct cb_acc_switches **out);
void cb_acc_switches_free(struct cb_acc_switches *s);
/* The leaf switch of @host (its index into *@leaf), or NULL: not named. */
const char *cb_acc_switches_leaf(const struct cb_acc_switches *s,
                                 const char *host, int *leaf);
/* Hosts named (entries, sorted by name), and leaves (*@nleaf). */
int cb_acc_switches_count(const struct cb_acc_switches *s, int *nleaf);
const char *cb_acc_switches_host(const struct cb_acc_switches *s, int i,
                                 int *leaf);
/* Each of @a's hosts its leaf (hosts[].leaf, .sw; a->nleaves), or one
 * line naming a host the file does not (CB_ERR_USAGE). */
cb_status_t cb_acc_switches_apply(const struct cb_acc_switches *s,
                                  struct cb_acc *a);
/* The whole of file @path for option @opt into *@text (malloc'd, not
 * terminated; *@len bytes), or one line: it cannot be read, or it is
 * over @max bytes and so not @kind ("an expectations file"). */
cb_status_t cb_acc_read_file(const char *opt, const char *path, size_t max,
                             const char *kind, char **text, size_t *len);
/* Read --expect @path into @s (expect.c). */
cb_status_t cb_acc_expect_file(const char *path, struct cb_acc_settings *s);
/* A number in @lo..@hi ("90%" is 0.9 where @pct); GB/s ("100Gb/s",
 * "12.5GB/s" too).  @what names it in the one line of a bad value. */
cb_status_t cb_acc_number(const char *s, const char *what, double lo, double hi,
                          int pct, double *out);
cb_status_t cb_acc_rate(const char *s, const char *what, double *out);
void cb_acc_usage(void);
int cb_acceptance_cmd(int argc, char **argv);

#endif
