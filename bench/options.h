/* SPDX-License-Identifier: MIT */
/*
 * bench/options.h - the command line, with nccl-tests' meanings.
 */
#ifndef CB_BENCH_OPTIONS_H
#define CB_BENCH_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include <collbench/status.h>
#include <collbench/types.h>

#include "coll/coll.h"
#include "core/env.h"
#include "reports/report.h"

#define CB_MAX_LOCAL_RANKS 256
#define CB_MAX_OUTPUTS     8

#define CB_MAX_ALGO_SEL 16
#define CB_MAX_COUNTS   64

/* One entry of --algo: an algorithm, for sizes lo <= size < hi (bytes;
 * hi == SIZE_MAX: no upper end). */
struct cb_algo_sel {
	const struct cb_algo *algo;
	size_t lo, hi;
};

enum cb_algo_mode {
	CB_ALGO_AUTO,   /* the model's choice at each size */
	CB_ALGO_LIST,   /* each listed algorithm that implements the coll */
	CB_ALGO_RANGES, /* the one whose size range holds the size */
};

struct cb_opts {
	enum {
		CB_CMD_RUN,
		CB_CMD_INFO,
		CB_CMD_HELP,
		CB_CMD_VERSION,
		CB_CMD_TOPO,
		CB_CMD_RESULTS, /* plot, compare, report: cli/results_cmd.c */
		CB_CMD_TUNE,    /* a run that writes the tuning table */
		CB_CMD_ACCEPT   /* acceptance: acceptance/cmd.c */
	} cmd;
	size_t min_bytes, max_bytes, step_bytes; /* step 0: use factor */
	double factor;
	int warmup, iters, check;
	int ndtypes, nops, ncolls;
	enum cb_dtype dtypes[CB_DT_COUNT];
	enum cb_op ops[CB_OP_COUNT];
	enum cb_coll colls[CB_COLL_COUNT];
	const char *transport; /* "auto" or a name */
	const char *mem;       /* the buffers: "host" or "gpu" (--mem) */
	const char *algo;      /* as given */
	enum cb_algo_mode algo_mode;
	struct cb_algo_sel algos[CB_MAX_ALGO_SEL];
	int nalgos;
	int root;
	int ps_servers;
	int straggler; /* comm rank delayed every step, or -1 */
	int touch;     /* --touch: input rewritten, result read between calls */
	double straggler_us;        /* by this much */
	double alpha_us, beta_gbps; /* > 0: given, no calibration */
	const char *ranks, *nodes;  /* sweep lists as given, or NULL */
	size_t scaling_bytes;       /* 0: the largest size */
	const char *schedule_log;   /* per-rank message counts, for tests */
	int np, np_set;
	double timeout_s;
	size_t chunk_bytes;
	const char *rendezvous;
	struct cb_output outputs[CB_MAX_OUTPUTS];
	int noutputs;
	int verbose;
	char *argv_line; /* for the record */
	int argc;        /* the command line as given, for the JSON record */
	char **argv;
	const char *plot;   /* --plot FILE.png|.svg, or NULL */
	const char *tuning; /* --tuning FILE, or NULL (select/tuning.h) */
	int rounds;         /* tune: interleaved rounds (default 3) */
	int iters_set;      /* -n was given */
	/* -a: a row's time from the workers' means: 0 rank 0's (the
	 * group's first worker), 1 their average (default), 2 the
	 * smallest, 3 the largest (nccl-tests' -a) */
	int average;
	int cycles;        /* -N: the sweep this many times; 0: until stopped */
	int timestamps;    /* -S 1: a table row starts with the local time */
	int report_gbits;  /* --report_gbits: table and CSV in Gb/s */
	double duration_s; /* -D: time each point this long, not -n calls */
	int ring_put;      /* the ring's one-sided allgather (default 1;
	                    * COLLBENCH_RING_PUT=0: messages) */
	/* What the communicator and its transports read by name (--tcp-if,
	 * --bind, ..., then their documented variables), checked here:
	 * handed to the core as the communicator's option view. */
	struct cb_optset tp;
};

/* Parse a count list: "2,4,8", "2:16:x2" (multiply), "1:8:+1" (add), where
 * "max" stands for @max; values above @max are dropped, below 1 refused.
 * Sorted, without repeats.  CB_ERR_USAGE (recorded) naming @what.  @max 0:
 * check the syntax only. */
cb_status_t cb_parse_counts(const char *s, const char *what, int max, int *out,
                            int *n);

/* Parse "8", "64K", "1M", "2G", "1T" (binary multiples; an optional
 * trailing B or iB).  CB_ERR_USAGE (and a recorded line naming @what) for
 * anything else, negative numbers and overflow included. */
cb_status_t cb_parse_size(const char *s, const char *what, size_t *bytes);

/* A command's options as one table (bench/options.c, acceptance/opts.c,
 * cli/topo_cmd.c): a row names an option and says how its value is
 * taken: by the command's code (CB_OPT_CODE, CB_OPT_BARE without a value:
 * getopt_long gives the row's id, a short letter or the command's own),
 * or by its kind into its place.  The kinds every command shares are
 * these; a command's own (its numbers, with their messages) follow
 * CB_OPT_OWN. */
enum { CB_OPT_CODE, CB_OPT_BARE, CB_OPT_FLAG, CB_OPT_STR, CB_OPT_OWN };

struct cb_optrow {
	const char *name; /* the long option, without "--" */
	int id;           /* the short letter or the command's id; 0 none */
	int kind;
	int *i;            /* CB_OPT_FLAG: set to 1; or a whole number */
	double *num;       /* a number */
	size_t *bytes;     /* a size */
	uint64_t *u64;     /* a size, kept as 64 bits */
	const char **str;  /* CB_OPT_STR: the value as given */
	double lo, hi;     /* the value's range */
	int pct;           /* "90%" is 0.9 */
	const char *range; /* the range as the message says it */
	int *given;        /* set to 1 when the option is given */
	const char *what;  /* its messages' name, where not "-x" or "--name" */
};

struct option;
/* getopt_long's table for @rows (@n of them; @lo holds @n + 1): a row's
 * value is its id, else @base + its index.  And getopt set to start over
 * at optind 0: glibc then forgets a cluster ("-vb8") an earlier parse left
 * half-read, which pointed into that parse's arguments. */
void cb_opt_table(const struct cb_optrow *rows, int n, int base,
                  struct option *lo);
/* The row getopt_long's @c stands for, or NULL. */
const struct cb_optrow *cb_opt_row(const struct cb_optrow *rows, int n,
                                   int base, int c);
/* @r's value (@arg) into its place: the shared kinds here, a command's
 * own kinds by @own, given the option as its messages name it. */
typedef cb_status_t (*cb_opt_own_fn)(const struct cb_optrow *r,
                                     const char *what, const char *arg,
                                     void *ctx);
cb_status_t cb_opt_value(const struct cb_optrow *r, const char *arg,
                         cb_opt_own_fn own, void *ctx);
/* getopt_long's ':' (@argv's last word wants a value: "@needs%s needs a
 * value") or anything else ("unknown option '%s'"), as one line. */
cb_status_t cb_opt_refuse(int c, char **argv, const char *needs);

/* Fill @o from the command line.  CB_ERR_USAGE with a recorded one-line
 * reason on bad input.  The options are docs/options.md's, the man
 * page's and --help's (tests/integration/options_doc.sh holds them
 * equal). */
cb_status_t cb_opts_parse(int argc, char **argv, struct cb_opts *o);

void cb_opts_usage(void);

/* Inside the parse: what one parse holds beside the options, the lists
 * as given, checked at the end, and which options were given. */
struct cb_opts_given {
	const char *dl, *ol, *cl; /* -d, -o, --coll */
	int bset, eset, mem_given, cycles_set;
	const char *name; /* the long option's name (OPT_TOPO) */
};

/* After the last option (bench/opts_check.c): the lists, the option
 * view's documented variables (cb_optset_env), and what the options say
 * together. */
cb_status_t cb_opts_check(struct cb_opts *o, const struct cb_opts_given *g);

/* Inside the parse (bench/opts_algo.c): --algo @s into @o's algorithm
 * selection; then whether it fits the collectives asked for (every one
 * has an algorithm; size ranges of two algorithms of one collective do
 * not overlap).  A list given as @s for option @flag has no empty item
 * ("allreduce,", "ring,,tree"), @sep separating items. */
cb_status_t cb_opts_algo_parse(const char *s, struct cb_opts *o);
cb_status_t cb_opts_algo_check(const struct cb_opts *o);
cb_status_t cb_opts_no_empty_item(const char *s, const char *flag, char sep);

#endif
