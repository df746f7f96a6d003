/* SPDX-License-Identifier: MIT */
/*
 * select/select.h - which algorithms run: the candidates of a section (a
 * collective on one group) from --algo, and at each size the one or ones
 * that run (all listed, the one whose range holds the size, or auto's
 * pick).
 */
#ifndef CB_SELECT_SELECT_H
#define CB_SELECT_SELECT_H

#include <stddef.h>

#include "select/calibrate.h"
#include "bench/options.h"
#include "select/tuning.h"
#include "coll/coll.h"

#define CB_MAX_CAND 16

/* What a choice depends on. */
struct cb_select {
	const struct cb_opts *o;
	const struct cb_model *m;
	enum cb_coll coll;
	int n;   /* ranks in the group */
	int log; /* this rank prints the notes (rank 0) */
	/* auto's measured table (NULL: the model decides), and the group's
	 * shape as the table keys it */
	const struct cb_tuning *tab;
	const char *transport;
	int hosts;
	int tune; /* `collbench tune`: every candidate at every size */
};

struct cb_cands {
	const struct cb_algo *a[CB_MAX_CAND];
	size_t lo[CB_MAX_CAND], hi[CB_MAX_CAND]; /* --algo's size ranges */
	struct cb_plan *plan[CB_MAX_CAND];       /* the driver's */
	int n;
	char skipped[256]; /* why the last one skipped cannot run; "" */
};

/* The algorithms this section may run.  CB_ERR_USAGE (recorded) when the
 * one algorithm asked for refuses (outside a group sweep); a note on
 * stderr for each one skipped from a list, unless @quiet. */
cb_status_t cb_select_candidates(const struct cb_select *s, int quiet,
                                 struct cb_cands *cd);

/* The model's time (us) of @a moving @bytes; 0 when it has no model or no
 * bandwidth was measured. */
double cb_select_model_us(const struct cb_select *s, const struct cb_algo *a,
                          size_t bytes);

/* The candidates to run at @bytes: indices into @cd in @idx, their number
 * returned.  auto takes the fastest the tuning table measured for this
 * shape at the nearest size, among the candidates it holds (for a call
 * @inplace, of the in-place times where the table has them), else the
 * model's fastest; with -v it prints its choice and the alternatives'
 * measured times and predictions. */
int cb_select_pick(const struct cb_select *s, const struct cb_cands *cd,
                   size_t bytes, int inplace, int *idx);

#endif
