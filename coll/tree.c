/* SPDX-License-Identifier: MIT */
/* coll/tree.c - (being written) */
#include "coll/sched.h"

const struct cb_algo cb_algo_tree = {
	.name = "tree",
	.description = "not written yet",
};

