/* SPDX-License-Identifier: MIT */
/*
 * acceptance/opts.c - `collbench acceptance`'s options: every value is
 * checked here, so a bad one gets one line and status 2 before any rank
 * starts.  Tolerances take "0.9" or "90%"; rates GB/s or "100Gb/s";
 * durations "90", "30s", "10m", "2h".  An expectations file holds lines
 * "bw_gbps = 11.5" and "lat_us = 3" ('#' starts a comment), flat or for a
 * band of message sizes ("bw_gbps[1M-16M] = 10"); a baseline (an earlier
 * run's JSON) is read here too (acceptance/baseline.c).
 */
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acceptance/accept.h"
#include "bench/options.h"
#include "core/log.h"

void cb_acc_usage(void)
{
	printf("usage: collbench acceptance [options]   accept a cluster: "
	       "name the bad node or cable\n"
	       "  --np N              fork N local ranks (default 2); under "
	       "a launcher, its world\n"
	       "  --transport T       auto (default: tcp between hosts), tcp, "
	       "verbs\n"
	       "  --rendezvous H:P    where ranks meet (not needed under a "
	       "PMIx launcher)\n"
	       "  --rails             measure every rank (NIC) of every host, "
	       "not one per host\n"
	       "  --duration T        burn: pairwise and allreduce again for "
	       "T (90, 30s, 10m, 2h)\n"
	       "  --bw-tolerance F    a pair below F x the median pair fails "
	       "(default 0.9; 90%% too)\n"
	       "  --lat-tolerance F   a pair above F x the median latency "
	       "fails (default 2)\n"
	       "  --coll-tolerance F  a collective below F x its model fails "
	       "(default 0.5)\n"
	       "  --expect-bw GBPS    fail any pair below this (GB/s; or "
	       "100Gb/s)\n"
	       "  --expect-lat US     fail any pair above this latency (us)\n"
	       "  --expect FILE       expectations: lines 'bw_gbps = X', "
	       "'lat_us = Y', or per\n"
	       "                      message-size band: 'bw_gbps[1M-16M] = "
	       "X'\n"
	       "  --baseline FILE     compare with an earlier run's JSON (-O "
	       "x.json): a pair,\n"
	       "                      a host's median or a collective that "
	       "dropped fails\n"
	       "  --baseline-tolerance F  ... beyond F (default 0.05; 5%% "
	       "too)\n"
	       "  --switches FILE     each host's leaf switch ('HOST LEAF' "
	       "lines or Slurm's\n"
	       "                      topology.conf): a slow uplink is named, "
	       "not its hosts\n"
	       "  --window T          burn: judge the slowest pair of every "
	       "window of T\n"
	       "  --bw-bytes N        the large message (default 1M; windows "
	       "of 4 in flight,\n"
	       "                      as many as fill about 50 ms)\n"
	       "  --lat-iters N       round trips per pair (default 200)\n"
	       "  --coll-bytes N      collectives' size (default 16M)\n"
	       "  --pair-timeout S    a pair's deadline (default 10)\n"
	       "  --stages LIST       inventory,connectivity,pairwise,"
	       "collectives,burn (default\n"
	       "                      all; inventory and connectivity always "
	       "run)\n"
	       "  --timeout S         the job's deadline for one wait "
	       "(default 30)\n"
	       "  --tcp-if NAME       tcp interface\n"
	       "  -O FILE             also write FILE: .json, .csv (pairs), "
	       ".xml (JUnit), .html, .txt\n"
	       "  --format F          stdout: table (default), json, csv, "
	       "junit, html\n"
	       "  -v                  more on stderr\n"
	       "\nExit status: 0 PASS (warnings too), 1 FAIL (a finding), 2 "
	       "usage or a bad\n"
	       "file, 3 could not run (a rank did not start or stopped, a "
	       "deadline passed,\n"
	       "an output could not be written), 77 the transport is not "
	       "available here.\n");
}

/* "90", "90s", "30m", "2h" -> seconds; @what names the option. */
static cb_status_t duration(const char *s, const char *what, double *out)
{
	char *end;
	double v = strtod(s, &end), mult = 1;

	if (end != s && *end && !end[1])
		mult = *end == 's'   ? 1
		       : *end == 'm' ? 60
		       : *end == 'h' ? 3600
		                     : 0;
	if (end == s || (*end && (end[1] || !mult)) || !isfinite(v) || v <= 0 ||
	    v * mult > 30 * 86400.0)
		return cb_fail(
		        CB_ERR_USAGE,
		        "%s '%s' is not a duration (90, 30s, 10m, 2h; up "
		        "to 30 days)",
		        what, s);
	*out = v * mult;
	return CB_OK;
}

static cb_status_t stages(const char *s, unsigned *out)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "%s", s);
	*out = 1u << CB_ACC_INVENTORY | 1u << CB_ACC_CONNECTIVITY;
	for (char *save, *t = strtok_r(buf, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		int k = 0;
		while (k < CB_ACC_NSTAGES && strcmp(t, cb_acc_stage_name(k)))
			k++;
		if (k == CB_ACC_NSTAGES)
			return cb_fail(
			        CB_ERR_USAGE,
			        "--stages: '%s' is not a stage (inventory, "
			        "connectivity, pairwise, collectives, "
			        "burn)",
			        t);
		*out |= 1u << k;
	}
	if ((*out & 1u << CB_ACC_COLLECTIVES) &&
	    !(*out & 1u << CB_ACC_PAIRWISE))
		return cb_fail(CB_ERR_USAGE,
		               "--stages: collectives need pairwise (the model "
		               "is made of the measured pairs)");
	return CB_OK;
}

static int out_kind(const char *path)
{
	const char *dot = strrchr(path, '.');

	if (!dot)
		return -1;
	return !strcmp(dot, ".json")   ? CB_ACC_OUT_JSON
	       : !strcmp(dot, ".csv")  ? CB_ACC_OUT_CSV
	       : !strcmp(dot, ".xml")  ? CB_ACC_OUT_XML
	       : !strcmp(dot, ".html") ? CB_ACC_OUT_HTML
	       : !strcmp(dot, ".txt")  ? CB_ACC_OUT_TABLE
	                               : -1;
}

/* The options: a row of the table (bench/options.h) each.  The code
 * below takes those with an id (an O_ here, or the short letter); the
 * rest go into their places by their kinds, with each kind's message. */
enum { K_NUM = CB_OPT_OWN, K_INT, K_SIZE, K_DUR, K_RATE };
enum { O_NP = 256, O_TRANSPORT, O_TCP_IF, O_STAGES, O_FORMAT, O_ROW };
#define MAX_ROWS 32

/* Acceptance's own kinds: @r's value (@arg; the option: @what). */
static cb_status_t value(const struct cb_optrow *r, const char *what,
                         const char *arg, void *ctx)
{
	cb_status_t st = CB_OK;
	double d = 0;
	size_t sz;

	(void)ctx;
	switch (r->kind) {
	case K_NUM:
		st = cb_acc_number(arg, what, r->lo, r->hi, r->pct, r->num);
		break;
	case K_INT: /* the whole part */
		if (!(st = cb_acc_number(arg, what, r->lo, r->hi, 0, &d)))
			*r->i = (int)d;
		break;
	case K_SIZE:
		st = cb_parse_size(arg, what, &sz);
		if (!st && (sz < r->lo || sz > r->hi))
			st = cb_fail(CB_ERR_USAGE, "%s '%s' is not in %s", what,
			             arg, r->range);
		if (!st)
			*r->u64 = sz;
		break;
	case K_DUR:
		st = duration(arg, what, r->num);
		break;
	case K_RATE:
		st = cb_acc_rate(arg, what, r->num);
		break;
	}
	return st;
}

/* A coded row's option (getopt_long's @c, optarg) into @o; *@fmt: --format. */
static cb_status_t one(int c, char **argv, struct cb_acc_opts *o, int *fmt)
{
	cb_status_t st = CB_OK;
	double d = 0;

	switch (c) {
	case O_NP:
		st = cb_acc_number(optarg, "--np", 1, 4096, 0, &d);
		o->np = (int)d;
		o->np_set = 1;
		if (!st && d != (int)d)
			st = cb_fail(CB_ERR_USAGE,
			             "--np '%s' is not a whole number", optarg);
		break;
	case O_TRANSPORT:
		o->transport = optarg;
		if (strcmp(optarg, "auto") && strcmp(optarg, "tcp") &&
		    strcmp(optarg, "shm") && strcmp(optarg, "verbs") &&
		    strcmp(optarg, "gpu"))
			st = cb_fail(CB_ERR_USAGE,
			             "--transport '%s' is not auto, tcp, "
			             "shm, verbs or gpu",
			             optarg);
		break;
	case O_TCP_IF:
		o->tcp_if = optarg;
		st = cb_optset_put(&o->tp, "tcp-if", optarg);
		break;
	case O_STAGES:
		st = stages(optarg, &o->stages);
		break;
	case O_FORMAT:
		*fmt = !strcmp(optarg, "table")   ? CB_ACC_OUT_TABLE
		       : !strcmp(optarg, "json")  ? CB_ACC_OUT_JSON
		       : !strcmp(optarg, "csv")   ? CB_ACC_OUT_CSV
		       : !strcmp(optarg, "junit") ? CB_ACC_OUT_XML
		       : !strcmp(optarg, "html")  ? CB_ACC_OUT_HTML
		                                  : -1;
		if (*fmt < 0)
			st = cb_fail(CB_ERR_USAGE,
			             "--format '%s' is not table, json, "
			             "csv, junit or html",
			             optarg);
		break;
	case 'O':
		if (o->nout >= CB_ACC_MAX_OUT - 1)
			st = cb_fail(CB_ERR_USAGE, "too many -O files");
		else if (out_kind(optarg) < 0)
			st = cb_fail(CB_ERR_USAGE,
			             "-O %s: the name must end in .json, "
			             ".csv, .xml, .html or .txt",
			             optarg);
		else {
			o->out[o->nout].path = optarg;
			o->out[o->nout++].kind = out_kind(optarg);
		}
		break;
	case 'v':
		o->verbose++;
		break;
	case 'h':
		o->help = 1;
		break;
	default: /* ':' too */
		st = cb_opt_refuse(c, argv, "");
	}
	return st;
}

/* Every option, with where its value goes in @o; *@n: how many. */
static void rows_of(struct cb_acc_opts *o, struct cb_optrow *t, int *n)
{
	struct cb_acc_settings *s = &o->set;
	const struct cb_optrow rows[] = {
		{ "np", .id = O_NP },
		{ "transport", .id = O_TRANSPORT },
		{ "rendezvous", 0, CB_OPT_STR, .str = &o->rendezvous },
		{ "rails", 0, CB_OPT_FLAG, .i = &s->rails },
		{ "duration", 0, K_DUR, .num = &s->duration_s },
		{ "bw-tolerance", 0, K_NUM, .num = &s->bw_tolerance, .lo = 0.01,
		  .hi = 1, .pct = 1 },
		{ "lat-tolerance", 0, K_NUM, .num = &s->lat_tolerance, .lo = 1,
		  .hi = 1000 },
		{ "coll-tolerance", 0, K_NUM, .num = &s->coll_tolerance,
		  .lo = 0, .hi = 1, .pct = 1 },
		{ "expect-bw", 0, K_RATE, .num = &s->expect_bw_gbps },
		{ "expect-lat", 0, K_NUM, .num = &s->expect_lat_us, .lo = 0.001,
		  .hi = 1e7 },
		{ "expect", 0, CB_OPT_STR, .str = &o->expect_file },
		{ "bw-bytes", 0, K_SIZE, .u64 = &s->bw_bytes, .lo = 8,
		  .hi = 256u << 20, .range = "8..256M" },
		{ "lat-iters", 0, K_INT, .i = &s->lat_iters, .lo = 2,
		  .hi = 1e6 },
		{ "coll-bytes", 0, K_SIZE, .u64 = &s->coll_bytes, .lo = 1024,
		  .hi = 4ull << 30, .range = "1K..4G" },
		{ "pair-timeout", 0, K_NUM, .num = &s->pair_timeout_s,
		  .lo = 0.1, .hi = 3600 },
		{ "timeout", 0, K_NUM, .num = &o->timeout_s, .lo = 0.1,
		  .hi = 86400 },
		{ "tcp-if", .id = O_TCP_IF },
		{ "format", .id = O_FORMAT },
		{ "stages", .id = O_STAGES },
		{ "baseline", 0, CB_OPT_STR, .str = &o->baseline_file },
		{ "switches", 0, CB_OPT_STR, .str = &o->switches_file },
		{ "baseline-tolerance", 0, K_NUM, .num = &s->baseline_tolerance,
		  .lo = 0, .hi = 0.99, .pct = 1 },
		{ "window", 0, K_DUR, .num = &s->window_s },
		{ "output", .id = 'O' },
		{ "verbose", .id = 'v', .kind = CB_OPT_BARE },
		{ "help", .id = 'h', .kind = CB_OPT_BARE },
	};

	_Static_assert(sizeof(rows) / sizeof(rows[0]) <= MAX_ROWS,
	               "MAX_ROWS holds every row");
	*n = (int)(sizeof(rows) / sizeof(rows[0]));
	memcpy(t, rows, sizeof(rows));
}

void cb_acc_opts_free(struct cb_acc_opts *o)
{
	cb_acc_base_free(o->base);
	cb_acc_switches_free(o->sw);
	o->base = NULL;
	o->sw = NULL;
}

cb_status_t cb_acc_parse(int argc, char **argv, struct cb_acc_opts *o)
{
	cb_status_t st = CB_OK;
	int c, n, fmt = CB_ACC_OUT_TABLE;
	struct cb_optrow rows[MAX_ROWS];
	struct option lo[MAX_ROWS + 1];

	*o = (struct cb_acc_opts){
		.transport = "auto",
		.np = 2,
		.timeout_s = 30,
		.set = { .bw_tolerance = 0.9,
		         .lat_tolerance = 2.0,
		         .coll_tolerance = 0.5,
		         .bw_bytes = 1u << 20,
		         .lat_iters = 200,
		         .coll_bytes = 16u << 20,
		         .pair_timeout_s = 10,
		         .baseline_tolerance = 0.05 },
		.argc = argc,
		.argv = argv,
		.stages = (1u << CB_ACC_NSTAGES) - 1,
	};
	rows_of(o, rows, &n);
	cb_opt_table(rows, n, O_ROW, lo);
	while (!st && (c = getopt_long(argc, argv, "+:O:vh", lo, NULL)) != -1) {
		const struct cb_optrow *r = cb_opt_row(rows, n, O_ROW, c);
		st = r && r->kind > CB_OPT_BARE
		             ? cb_opt_value(r, optarg, value, o)
		             : one(c, argv, o, &fmt);
	}
	o->set.bw_bytes &= ~(uint64_t)7; /* whole 8-byte words */
	if (!st && optind < argc)
		st = cb_fail(CB_ERR_USAGE, "unexpected argument '%s'",
		             argv[optind]);
	if (!st && o->expect_file)
		st = cb_acc_expect_file(o->expect_file, &o->set);
	if (!st && o->set.window_s > 0 && o->set.duration_s <= 0)
		st = cb_fail(CB_ERR_USAGE,
		             "--window needs --duration (the burn it divides)");
	/* Read here where it can be (a bad file stops every rank at once);
	 * a file only rank 0's host has is read there (cmd.c). */
	if (!st && o->baseline_file && !access(o->baseline_file, R_OK))
		st = cb_acc_base_load(o->baseline_file, &o->base);
	if (!st && o->switches_file && !access(o->switches_file, R_OK))
		st = cb_acc_switches_load(o->switches_file, &o->sw);
	if (!st)
		st = cb_optset_env(&o->tp);
	/* stdout first, then the files */
	memmove(&o->out[1], &o->out[0], (size_t)o->nout * sizeof(o->out[0]));
	o->out[0].path = NULL;
	o->out[0].kind = fmt;
	o->nout++;
	return st;
}
