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

enum {
	O_NP = 256,
	O_TRANSPORT,
	O_RDV,
	O_RAILS,
	O_DURATION,
	O_BW_TOL,
	O_LAT_TOL,
	O_COLL_TOL,
	O_EXPECT_BW,
	O_EXPECT_LAT,
	O_EXPECT,
	O_BW_BYTES,
	O_LAT_ITERS,
	O_COLL_BYTES,
	O_PAIR_TIMEOUT,
	O_TIMEOUT,
	O_TCP_IF,
	O_FORMAT,
	O_STAGES,
	O_BASELINE,
	O_BASE_TOL,
	O_WINDOW,
};

static const struct option longopts[] = {
	{ "np", required_argument, NULL, O_NP },
	{ "transport", required_argument, NULL, O_TRANSPORT },
	{ "rendezvous", required_argument, NULL, O_RDV },
	{ "rails", no_argument, NULL, O_RAILS },
	{ "duration", required_argument, NULL, O_DURATION },
	{ "bw-tolerance", required_argument, NULL, O_BW_TOL },
	{ "lat-tolerance", required_argument, NULL, O_LAT_TOL },
	{ "coll-tolerance", required_argument, NULL, O_COLL_TOL },
	{ "expect-bw", required_argument, NULL, O_EXPECT_BW },
	{ "expect-lat", required_argument, NULL, O_EXPECT_LAT },
	{ "expect", required_argument, NULL, O_EXPECT },
	{ "bw-bytes", required_argument, NULL, O_BW_BYTES },
	{ "lat-iters", required_argument, NULL, O_LAT_ITERS },
	{ "coll-bytes", required_argument, NULL, O_COLL_BYTES },
	{ "pair-timeout", required_argument, NULL, O_PAIR_TIMEOUT },
	{ "timeout", required_argument, NULL, O_TIMEOUT },
	{ "tcp-if", required_argument, NULL, O_TCP_IF },
	{ "format", required_argument, NULL, O_FORMAT },
	{ "stages", required_argument, NULL, O_STAGES },
	{ "baseline", required_argument, NULL, O_BASELINE },
	{ "baseline-tolerance", required_argument, NULL, O_BASE_TOL },
	{ "window", required_argument, NULL, O_WINDOW },
	{ "output", required_argument, NULL, 'O' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

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

/* One option (getopt_long's @c, optarg) into @o; *@fmt: --format. */
static cb_status_t one(int c, char **argv, struct cb_acc_opts *o, int *fmt)
{
	cb_status_t st = CB_OK;
	double d = 0;
	size_t sz;

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
	case O_RDV:
		o->rendezvous = optarg;
		break;
	case O_RAILS:
		o->set.rails = 1;
		break;
	case O_DURATION:
		st = duration(optarg, "--duration", &o->set.duration_s);
		break;
	case O_BW_TOL:
		st = cb_acc_number(optarg, "--bw-tolerance", 0.01, 1, 1,
		                   &o->set.bw_tolerance);
		break;
	case O_LAT_TOL:
		st = cb_acc_number(optarg, "--lat-tolerance", 1, 1000, 0,
		                   &o->set.lat_tolerance);
		break;
	case O_COLL_TOL:
		st = cb_acc_number(optarg, "--coll-tolerance", 0, 1, 1,
		                   &o->set.coll_tolerance);
		break;
	case O_EXPECT_BW:
		st = cb_acc_rate(optarg, "--expect-bw", &o->set.expect_bw_gbps);
		break;
	case O_EXPECT_LAT:
		st = cb_acc_number(optarg, "--expect-lat", 0.001, 1e7, 0,
		                   &o->set.expect_lat_us);
		break;
	case O_EXPECT:
		o->expect_file = optarg;
		break;
	case O_BW_BYTES:
		st = cb_parse_size(optarg, "--bw-bytes", &sz);
		if (!st && (sz < 8 || sz > (256u << 20)))
			st = cb_fail(CB_ERR_USAGE,
			             "--bw-bytes '%s' is not in 8..256M",
			             optarg);
		o->set.bw_bytes = sz & ~(size_t)7;
		break;
	case O_LAT_ITERS:
		st = cb_acc_number(optarg, "--lat-iters", 2, 1000000, 0, &d);
		o->set.lat_iters = (int)d;
		break;
	case O_COLL_BYTES:
		st = cb_parse_size(optarg, "--coll-bytes", &sz);
		if (!st && (sz < 1024 || sz > (4ull << 30)))
			st = cb_fail(CB_ERR_USAGE,
			             "--coll-bytes '%s' is not in 1K..4G",
			             optarg);
		o->set.coll_bytes = sz;
		break;
	case O_PAIR_TIMEOUT:
		st = cb_acc_number(optarg, "--pair-timeout", 0.1, 3600, 0,
		                   &o->set.pair_timeout_s);
		break;
	case O_TIMEOUT:
		st = cb_acc_number(optarg, "--timeout", 0.1, 86400, 0,
		                   &o->timeout_s);
		break;
	case O_TCP_IF:
		o->tcp_if = optarg;
		st = cb_optset_put(&o->tp, "tcp-if", optarg);
		break;
	case O_STAGES:
		st = stages(optarg, &o->stages);
		break;
	case O_BASELINE:
		o->baseline_file = optarg;
		break;
	case O_BASE_TOL:
		st = cb_acc_number(optarg, "--baseline-tolerance", 0, 0.99, 1,
		                   &o->set.baseline_tolerance);
		break;
	case O_WINDOW:
		st = duration(optarg, "--window", &o->set.window_s);
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
	case ':':
		st = cb_fail(CB_ERR_USAGE, "%s needs a value",
		             argv[optind - 1]);
		break;
	default:
		st = cb_fail(CB_ERR_USAGE, "unknown option '%s'",
		             argv[optind - 1]);
	}
	return st;
}

cb_status_t cb_acc_parse(int argc, char **argv, struct cb_acc_opts *o)
{
	cb_status_t st = CB_OK;
	int c, fmt = CB_ACC_OUT_TABLE;

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
	optind = 1;
	opterr = 0;
	while (!st &&
	       (c = getopt_long(argc, argv, "+:O:vh", longopts, NULL)) != -1) {
		st = one(c, argv, o, &fmt);
	}
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
	if (!st)
		st = cb_optset_env(&o->tp);
	/* stdout first, then the files */
	memmove(&o->out[1], &o->out[0], (size_t)o->nout * sizeof(o->out[0]));
	o->out[0].path = NULL;
	o->out[0].kind = fmt;
	o->nout++;
	return st;
}
