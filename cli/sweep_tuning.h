/* SPDX-License-Identifier: MIT */
/* cli/sweep_tuning.h - the tuning table of a sweep (cli/sweep_tuning.c). */
#ifndef CB_CLI_SWEEP_TUNING_H
#define CB_CLI_SWEEP_TUNING_H

#include "bench/options.h"
#include "core/comm.h"
#include "select/tuning.h"

struct cb_sweep_tuning {
	/* auto's measured table, or (tune) the one being made */
	struct cb_tuning *tab;
	const char *path;
	char source[4200]; /* the header's "# auto:" line */
};

/*
 * The tuning table: for auto, the one --tuning, $COLLBENCH_TUNING or the
 * per-user file names (a named one must be there; the default may be
 * missing: the model decides); for tune, the file to merge into.  Every
 * rank reads it and decides alone, so every rank must read the same
 * bytes: checked, one line if not.  Collective: every rank calls it.
 */
cb_status_t cb_sweep_tuning(struct cb_comm *c, const struct cb_opts *o,
                            struct cb_sweep_tuning *t);

#endif
