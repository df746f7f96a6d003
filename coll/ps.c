/* SPDX-License-Identifier: MIT */
/* coll/ps.c - (being written) */
#include "coll/sched.h"

const struct cb_algo cb_algo_ps = {
	.name = "ps",
	.description = "not written yet",
};

