/* SPDX-License-Identifier: MIT */
/* coll/basic.c - (being written) */
#include "coll/sched.h"

const struct cb_algo cb_algo_linear = {
	.name = "linear",
	.description = "not written yet",
};

const struct cb_algo cb_algo_pairwise = {
	.name = "pairwise",
	.description = "not written yet",
};

const struct cb_algo cb_algo_dissemination = {
	.name = "dissemination",
	.description = "not written yet",
};

const struct cb_algo cb_algo_direct = {
	.name = "direct",
	.description = "not written yet",
};

const struct cb_algo cb_algo_latency = {
	.name = "latency",
	.description = "not written yet",
};

const struct cb_algo cb_algo_bw = {
	.name = "bw",
	.description = "not written yet",
};

const struct cb_algo cb_algo_bibw = {
	.name = "bibw",
	.description = "not written yet",
};

