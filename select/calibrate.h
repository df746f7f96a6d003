/* SPDX-License-Identifier: MIT */
/* select/calibrate.h - the cost model's link and reduction parameters. */
#ifndef CB_SELECT_CALIBRATE_H
#define CB_SELECT_CALIBRATE_H

#include "bench/options.h"
#include "core/comm.h"

struct cb_model {
	double alpha_us, beta_gbps, gamma_gbps;
	char source[128]; /* "alpha and beta measured between ranks 0 and 1;
	                     gamma measured" */
};

/* Measure (or take from --alpha-us/--beta-gbps) the model's parameters;
 * a collective call: every rank calls it and gets rank 0's figures. */
cb_status_t cb_calibrate(struct cb_comm *c, const struct cb_opts *o,
                         struct cb_model *m);

#endif
