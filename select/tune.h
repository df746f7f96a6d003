/* SPDX-License-Identifier: MIT */
/*
 * select/tune.h - `collbench tune`: the sweep runs every applicable
 * algorithm at every size, --rounds times over (interleaved: round 1 of
 * every size and algorithm, then round 2, ...), and rank 0 keeps each
 * out-of-place row's time here; at the end, the median per algorithm and
 * size goes into the tuning table (select/tuning.h), merged with what the
 * file held for other job shapes, and a summary goes to stdout.
 */
#ifndef CB_SELECT_TUNE_H
#define CB_SELECT_TUNE_H

#include <stdio.h>

#include "select/tuning.h"
#include "reports/report.h"

struct cb_tuner;

cb_status_t cb_tuner_new(struct cb_tuner **out);
void cb_tuner_free(struct cb_tuner *t);
/* Keep @row's time (out-of-place rows of the first dtype and op). */
void cb_tuner_record(struct cb_tuner *t, const struct cb_row *row);
/* Medians into @tab, written to @path; a summary on @f. */
cb_status_t cb_tuner_finish(struct cb_tuner *t, struct cb_tuning *tab,
                            const char *path, FILE *f);

#endif
