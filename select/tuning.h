/* SPDX-License-Identifier: MIT */
/*
 * select/tuning.h - the measured tuning table `collbench tune` writes and
 * `--algo auto` reads: for each job shape (collective, transport, ranks,
 * hosts, dedicated servers) and size of a grid, every applicable
 * algorithm's median time over interleaved rounds, and so the fastest.
 *
 * Where auto finds it: --tuning FILE, else $COLLBENCH_TUNING, else
 * $XDG_CONFIG_HOME/collbench/tuning.json (~/.config/... without it) when
 * that file exists.  A shape the table does not hold falls back to the
 * cost model; the run's header says which decided.
 */
#ifndef CB_SELECT_TUNING_H
#define CB_SELECT_TUNING_H

#include <stddef.h>

#include <collbench/status.h>

#include "coll/coll.h"

#define CB_TUNING_SCHEMA  "collbench-tuning"
#define CB_TUNING_VERSION 1
#define CB_TUNING_ALGOS   16

/* A job shape, as the table keys it.  (--ps-servers is not part of it:
 * auto never runs ps with dedicated servers, and the other algorithms do
 * not depend on it; tune leaves such ps out too.) */
struct cb_tuning_shape {
	const char *coll, *transport;
	int ranks, hosts;
};

/* One size of one shape: the median time (us) of each algorithm, out of
 * place and (where the algorithm runs in place and tune measured it) in
 * place: on shared memory an in-place call's buffer is rewritten by every
 * call, which changes the order (0: not measured). */
struct cb_tuning_point {
	size_t bytes;
	int nalgos;
	char algo[CB_TUNING_ALGOS][24];
	double time_us[CB_TUNING_ALGOS];
	double inplace_us[CB_TUNING_ALGOS];
};

struct cb_tuning;

/* The path auto reads: @given (--tuning; "none": no table, NULL
 * returned), else $COLLBENCH_TUNING, else the per-user default.  *@explicit_
 * set when given or from the environment (then a missing file is an error, not
 * a fallback). */
const char *cb_tuning_path(const char *given, int *explicit_);

/* Read @path.  CB_ERR_USAGE (recorded, one line naming the file) for a
 * file that is not a tuning table of this schema. */
cb_status_t cb_tuning_load(const char *path, struct cb_tuning **out);
/* An empty table (to fill and write). */
cb_status_t cb_tuning_new(struct cb_tuning **out);
void cb_tuning_free(struct cb_tuning *t);
/* Number of shapes it holds. */
int cb_tuning_shapes(const struct cb_tuning *t);

/* The point for @s nearest to @bytes on a log scale (NULL: the table does
 * not hold the shape). */
const struct cb_tuning_point *cb_tuning_find(const struct cb_tuning *t,
                                             const struct cb_tuning_shape *s,
                                             size_t bytes);

/* Replace the points of shape @s with @pts. */
cb_status_t cb_tuning_put(struct cb_tuning *t, const struct cb_tuning_shape *s,
                          const struct cb_tuning_point *pts, int n);
/* Write the table to @path (its folder made when missing), atomically
 * (a temporary file renamed).  CB_ERR_SYS (recorded) on failure. */
cb_status_t cb_tuning_write(const struct cb_tuning *t, const char *path);

#endif
