/* SPDX-License-Identifier: MIT */
/*
 * cli/counters.h - device counters (verbs port counters) read before and
 * after a run; their changes, per host and port, go after the table and
 * into the JSON, with error counters that moved flagged.
 */
#ifndef CB_CLI_COUNTERS_H
#define CB_CLI_COUNTERS_H

#include <collbench/status.h>

#include "cli/output.h"
#include "core/comm.h"

#define CB_CNT_MAX 64

struct cb_counters {
	int on; /* the transports have counters (the same on every rank) */
	int n;
	struct cb_tp_counter before[CB_CNT_MAX];
};

/* Every rank, before the run. */
cb_status_t cb_counters_begin(struct cb_comm *c, struct cb_counters *k);
/* Every rank, after it (a gather); rank 0 writes to @w. */
cb_status_t cb_counters_end(struct cb_comm *c, struct cb_counters *k,
                            struct cb_outputs *w);

#endif
