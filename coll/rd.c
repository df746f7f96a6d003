/* SPDX-License-Identifier: MIT */
/* coll/rd.c - (being written) */
#include "coll/sched.h"

const struct cb_algo cb_algo_rd = {
	.name = "rd",
	.description = "not written yet",
};

const struct cb_algo cb_algo_rabenseifner = {
	.name = "rabenseifner",
	.description = "not written yet",
};

