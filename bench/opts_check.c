/* SPDX-License-Identifier: MIT */
/*
 * bench/opts_check.c - after the last option: the lists as given (-d, -o,
 * --coll), the settings the environment adds to the option view, and what
 * the options say together.  One line and exit status 2 for a bad one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/options.h"
#include "core/log.h"

static cb_status_t parse_list(const char *s, const char *flag, const char *what,
                              int all, int (*parse)(const char *), int *out,
                              int *n, const char *names)
{
	char buf[256];
	cb_status_t st;

	*n = 0;
	if (!strcmp(s, "all")) {
		for (int i = 0; i < all; i++)
			out[(*n)++] = i;
		return CB_OK;
	}
	if ((st = cb_opts_no_empty_item(s, flag, ',')))
		return st;
	snprintf(buf, sizeof(buf), "%s", s);
	for (char *save, *t = strtok_r(buf, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		int v = parse(t);
		if (v < 0)
			return cb_fail(CB_ERR_USAGE,
			               "unknown %s '%s' (one of: %s, all)",
			               what, t, names);
		if (*n < all)
			out[(*n)++] = v;
	}
	if (*n == 0)
		return cb_fail(CB_ERR_USAGE, "empty %s list", what);
	return CB_OK;
}

/* The lists, and what the options say together. */
static cb_status_t check_lists(struct cb_opts *o, const struct cb_opts_given *g)
{
	char dnames[256] = "";
	cb_status_t st;

	if (g->bset && !g->eset && o->min_bytes > o->max_bytes)
		o->max_bytes = o->min_bytes;
	if (o->max_bytes < o->min_bytes)
		return cb_fail(CB_ERR_USAGE,
		               "-e (%zu bytes) is below -b (%zu bytes)",
		               o->max_bytes, o->min_bytes);
	for (int i = 0; i < CB_DT_COUNT; i++)
		snprintf(dnames + strlen(dnames),
		         sizeof(dnames) - strlen(dnames), "%s%s", i ? ", " : "",
		         cb_dtype_name(i));
	if ((st = parse_list(g->dl, "-d", "datatype", CB_DT_COUNT,
	                     cb_dtype_parse, (int *)o->dtypes, &o->ndtypes,
	                     dnames)))
		return st;
	if ((st = parse_list(g->ol, "-o", "op", CB_OP_COUNT, cb_op_parse,
	                     (int *)o->ops, &o->nops, "sum, prod, min, max")))
		return st;
	return parse_list(g->cl, "--coll", "collective", CB_COLL_COUNT,
	                  cb_coll_parse, (int *)o->colls, &o->ncolls,
	                  "allreduce, reduce_scatter, allgather, "
	                  "broadcast, reduce, alltoall, barrier, "
	                  "sendrecv, pingpong");
}

/* -D: every point timed for a while instead of -n calls. */
static cb_status_t check_duration(const struct cb_opts *o)
{
	if (o->duration_s <= 0)
		return CB_OK;
	if (o->cmd == CB_CMD_TUNE)
		return cb_fail(CB_ERR_USAGE,
		               "tune: -D does not apply (-n and --rounds set "
		               "how long each size is timed)");
	if (o->iters_set)
		return cb_fail(CB_ERR_USAGE,
		               "-D %g and -n %d: give one (a duration per "
		               "point, or a count of calls)",
		               o->duration_s, o->iters);
	for (int i = 0; i < o->nalgos; i++)
		if (o->algos[i].algo->session)
			return cb_fail(
			        CB_ERR_USAGE,
			        "-D: %s runs sessions of -n steps, not "
			        "timed calls; leave it out of --algo, or "
			        "time it with -n instead",
			        o->algos[i].algo->name);
	return CB_OK;
}

/* The variables that are 0 or 1: COLLBENCH_REPRODUCIBLE (read again
 * where the JSON is written, reports/run.c) and COLLBENCH_RING_PUT, from
 * the option view into @o->ring_put. */
static cb_status_t check_flags(struct cb_opts *o)
{
	const char *rep = getenv("COLLBENCH_REPRODUCIBLE");
	const char *rp = cb_optset_get(&o->tp, "ring-put");

	if (rep && strcmp(rep, "0") && strcmp(rep, "1"))
		return cb_fail(CB_ERR_USAGE, "%s '%s' is not 0 or 1",
		               "COLLBENCH_REPRODUCIBLE", rep);
	if (rp && strcmp(rp, "0") && strcmp(rp, "1"))
		return cb_fail(CB_ERR_USAGE, "%s '%s' is not 0 or 1",
		               "COLLBENCH_RING_PUT", rp);
	o->ring_put = !(rp && !strcmp(rp, "0"));
	return CB_OK;
}

static cb_status_t check_combos(struct cb_opts *o,
                                const struct cb_opts_given *g)
{
	cb_status_t st;

	if (o->ranks && o->nodes)
		return cb_fail(CB_ERR_USAGE,
		               "--ranks and --nodes: give one sweep, not both");
	/* the gpu transport moves device memory: its buffers are there */
	if (!strcmp(o->transport, "gpu")) {
		if (!strcmp(o->mem, "host") && g->mem_given)
			return cb_fail(CB_ERR_USAGE,
			               "--transport gpu moves device memory: "
			               "--mem host does not apply");
		o->mem = "gpu";
	}
	if (o->touch && strcmp(o->mem, "host"))
		return cb_fail(CB_ERR_USAGE,
		               "--touch rewrites and reads the buffers from "
		               "the host: --mem host only");
	if ((st = check_flags(o)))
		return st;
	if ((st = cb_opts_algo_parse(o->algo, o)) || (st = check_duration(o)))
		return st;
	if (o->cmd == CB_CMD_TUNE) {
		if (o->algo_mode == CB_ALGO_RANGES)
			return cb_fail(CB_ERR_USAGE,
			               "tune times algorithms at every size: "
			               "--algo takes a list here, not ranges");
		if (o->ranks || o->nodes)
			return cb_fail(
			        CB_ERR_USAGE,
			        "tune: --ranks/--nodes not supported "
			        "(tune each job shape with its own --np)");
		if (g->cycles_set)
			return cb_fail(CB_ERR_USAGE,
			               "tune: -N does not apply (--rounds sets "
			               "how often each size is timed)");
		if (!o->iters_set)
			o->iters =
			        50; /* medians of rounds want steady points */
		/* the table is per collective and shape: the first dtype and
		 * op stand for the others */
		o->ndtypes = o->nops = 1;
	}
	return cb_opts_algo_check(o);
}

cb_status_t cb_opts_check(struct cb_opts *o, const struct cb_opts_given *g)
{
	cb_status_t st;

	if ((st = check_lists(o, g)) || (st = cb_optset_env(&o->tp)))
		return st;
	return check_combos(o, g);
}
