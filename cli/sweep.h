/* SPDX-License-Identifier: MIT */
/* cli/sweep.h - one rank's part of a run: sizes x dtypes x ops x placement.
 */
#ifndef CB_CLI_SWEEP_H
#define CB_CLI_SWEEP_H

#include <stdint.h>

#include "bench/options.h"
#include "core/comm.h"

/* Runs the sweep; rank 0 writes the outputs.  *@wrong gets the job's total
 * of wrong values (on rank 0). */
cb_status_t cb_sweep(struct cb_comm *c, const struct cb_opts *o,
                     uint64_t *wrong);

#endif
