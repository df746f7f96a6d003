/* SPDX-License-Identifier: MIT */
/*
 * bench/options.c - command-line parsing.  Every value is checked here, so a
 * bad one gets one line and exit status 2 before any rank starts.
 */
#include "bench/options.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/comm.h"
#include "core/log.h"
#include "topo/topo.h"

static cb_status_t parse_int(const char *s, const char *what, long lo, long hi,
                             int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return cb_fail(CB_ERR_USAGE,
		               "%s '%s' is not a whole number in "
		               "%ld..%ld",
		               what, s, lo, hi);
	*out = (int)v;
	return CB_OK;
}

static cb_status_t parse_double(const char *s, const char *what, double lo,
                                double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi)
		return cb_fail(CB_ERR_USAGE,
		               "%s '%s' is not a number in %g..%g", what, s, lo,
		               hi);
	*out = v;
	return CB_OK;
}

static cb_status_t parse_list(const char *s, const char *what, int all,
                              int (*parse)(const char *), int *out, int *n,
                              const char *names)
{
	char buf[256];

	*n = 0;
	if (!strcmp(s, "all")) {
		for (int i = 0; i < all; i++)
			out[(*n)++] = i;
		return CB_OK;
	}
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

static cb_status_t add_output(struct cb_opts *o, const char *path)
{
	const char *dot = strrchr(path, '.');
	enum cb_format f;

	if (dot && !strcasecmp(dot, ".csv"))
		f = CB_FMT_CSV;
	else if (dot && !strcasecmp(dot, ".json"))
		f = CB_FMT_JSON;
	else if (dot &&
	         (!strcasecmp(dot, ".txt") || !strcasecmp(dot, ".table")))
		f = CB_FMT_TABLE;
	else
		return cb_fail(CB_ERR_USAGE,
		               "-O %s: the format comes from the extension: "
		               ".csv, .json or .txt",
		               path);
	if (o->noutputs == CB_MAX_OUTPUTS)
		return cb_fail(CB_ERR_USAGE, "at most %d -O files",
		               CB_MAX_OUTPUTS - 1);
	o->outputs[o->noutputs++] = (struct cb_output){ path, f };
	return CB_OK;
}

enum {
	OPT_COLL = 256,
	OPT_ALGO,
	OPT_NP,
	OPT_TRANSPORT,
	OPT_RENDEZVOUS,
	OPT_TCP_IF,
	OPT_TCP_STREAMS,
	OPT_GID_INDEX,
	OPT_IB_SL,
	OPT_VERBS_CM,
	OPT_VERBS_EAGER,
	OPT_TIMEOUT,
	OPT_FORMAT,
	OPT_CHUNK,
	OPT_VERSION,
	OPT_PS_SERVERS,
	OPT_ALPHA,
	OPT_BETA,
	OPT_RANKS,
	OPT_NODES,
	OPT_SCALING_SIZE,
	OPT_SCHEDULE_LOG,
	OPT_TOPO, /* --bind, --nic, --gpu, --topo-xml: checked by topo/ */
	OPT_PLOT,
	OPT_MEM,
	OPT_STRAGGLER,
	OPT_TUNING,
	OPT_ROUNDS,
	OPT_TOUCH,
};

static const struct option longopts[] = {
	{ "minbytes", required_argument, NULL, 'b' },
	{ "maxbytes", required_argument, NULL, 'e' },
	{ "stepfactor", required_argument, NULL, 'f' },
	{ "stepbytes", required_argument, NULL, 'i' },
	{ "warmup_iters", required_argument, NULL, 'w' },
	{ "iters", required_argument, NULL, 'n' },
	{ "check", required_argument, NULL, 'c' },
	{ "datatype", required_argument, NULL, 'd' },
	{ "op", required_argument, NULL, 'o' },
	{ "output", required_argument, NULL, 'O' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "coll", required_argument, NULL, OPT_COLL },
	{ "algo", required_argument, NULL, OPT_ALGO },
	{ "np", required_argument, NULL, OPT_NP },
	{ "transport", required_argument, NULL, OPT_TRANSPORT },
	{ "rendezvous", required_argument, NULL, OPT_RENDEZVOUS },
	{ "tcp-if", required_argument, NULL, OPT_TCP_IF },
	{ "tcp-streams", required_argument, NULL, OPT_TCP_STREAMS },
	{ "gid-index", required_argument, NULL, OPT_GID_INDEX },
	{ "ib-sl", required_argument, NULL, OPT_IB_SL },
	{ "verbs-cm", required_argument, NULL, OPT_VERBS_CM },
	{ "verbs-eager-bytes", required_argument, NULL, OPT_VERBS_EAGER },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "chunk-bytes", required_argument, NULL, OPT_CHUNK },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "root", required_argument, NULL, 'r' },
	{ "ps-servers", required_argument, NULL, OPT_PS_SERVERS },
	{ "alpha-us", required_argument, NULL, OPT_ALPHA },
	{ "beta-gbps", required_argument, NULL, OPT_BETA },
	{ "ranks", required_argument, NULL, OPT_RANKS },
	{ "nodes", required_argument, NULL, OPT_NODES },
	{ "scaling-size", required_argument, NULL, OPT_SCALING_SIZE },
	{ "schedule-log", required_argument, NULL, OPT_SCHEDULE_LOG },
	{ "bind", required_argument, NULL, OPT_TOPO },
	{ "nic", required_argument, NULL, OPT_TOPO },
	{ "gpu", required_argument, NULL, OPT_TOPO },
	{ "topo-xml", required_argument, NULL, OPT_TOPO },
	{ "plot", required_argument, NULL, OPT_PLOT },
	{ "mem", required_argument, NULL, OPT_MEM },
	{ "straggler", required_argument, NULL, OPT_STRAGGLER },
	{ "tuning", required_argument, NULL, OPT_TUNING },
	{ "rounds", required_argument, NULL, OPT_ROUNDS },
	{ "touch", no_argument, NULL, OPT_TOUCH },
	{ NULL, 0, NULL, 0 },
};

static cb_status_t check_transport(const char *t)
{
	if (!strcmp(t, "auto"))
		return CB_OK;
	for (int i = 0; cb_tp_names[i]; i++)
		if (!strcmp(cb_tp_names[i], t))
			return CB_OK;
	return cb_fail(CB_ERR_USAGE,
	               "unknown transport '%s' (one of: auto, tcp, shm, verbs, "
	               "gpu)",
	               t);
}

static void algo_names(char *names, size_t cap)
{
	snprintf(names, cap, "auto, all");
	for (int i = 0; cb_algos[i]; i++)
		snprintf(names + strlen(names), cap - strlen(names), ", %s",
		         cb_algos[i]->name);
}

static cb_status_t find_algo(const char *name, const struct cb_algo **out)
{
	char names[256];

	if ((*out = cb_algo_find(name)) && (*out)->colls)
		return CB_OK;
	algo_names(names, sizeof(names));
	return cb_fail(CB_ERR_USAGE, "unknown algorithm '%s' (one of: %s)",
	               name, names);
}

/* "auto"; "all"; "ring,tree"; or "rd:0-64K;ring:64K-max". */
static cb_status_t parse_algo(const char *s, struct cb_opts *o)
{
	char buf[512];
	cb_status_t st;

	o->nalgos = 0;
	if (!strcmp(s, "auto")) {
		o->algo_mode = CB_ALGO_AUTO;
		return CB_OK;
	}
	o->algo_mode = CB_ALGO_LIST;
	if (!strcmp(s, "all")) {
		/* all but those that run only when named (ps-async) */
		for (int i = 0; cb_algos[i] && o->nalgos < CB_MAX_ALGO_SEL; i++)
			if (cb_algos[i]->colls &&
			    !(cb_algos[i]->flags & CB_ALGO_NAMED_ONLY))
				o->algos[o->nalgos++] =
				        (struct cb_algo_sel){ cb_algos[i], 0,
					                      SIZE_MAX };
		return CB_OK;
	}
	if (strlen(s) >= sizeof(buf))
		return cb_fail(CB_ERR_USAGE, "--algo value too long");
	snprintf(buf, sizeof(buf), "%s", s);
	int ranges = strchr(s, ':') != NULL;
	if (ranges)
		o->algo_mode = CB_ALGO_RANGES;
	for (char *save, *t = strtok_r(buf, ranges ? ";" : ",", &save); t;
	     t = strtok_r(NULL, ranges ? ";" : ",", &save)) {
		struct cb_algo_sel sel = { NULL, 0, SIZE_MAX };
		char *colon = strchr(t, ':');
		if (o->nalgos == CB_MAX_ALGO_SEL)
			return cb_fail(CB_ERR_USAGE,
			               "--algo: at most %d entries",
			               CB_MAX_ALGO_SEL);
		if (ranges) {
			char *dash;
			if (!colon || !(dash = strchr(colon + 1, '-')))
				return cb_fail(CB_ERR_USAGE,
				               "--algo '%s': a size range is "
				               "NAME:LOW-HIGH, e.g. "
				               "rd:0-64K;ring:64K-max",
				               t);
			*colon = *dash = 0;
			if (strchr(t, ','))
				return cb_fail(
				        CB_ERR_USAGE,
				        "--algo '%s': with size ranges, "
				        "separate the entries with ';' and "
				        "give every entry a range",
				        s);
			if ((st = cb_parse_size(colon + 1, "--algo range start",
			                        &sel.lo)))
				return st;
			if (strcmp(dash + 1, "max") &&
			    (st = cb_parse_size(dash + 1, "--algo range end",
			                        &sel.hi)))
				return st;
			if (sel.hi <= sel.lo)
				return cb_fail(
				        CB_ERR_USAGE,
				        "--algo %s: the range %s-%s is empty",
				        t, colon + 1, dash + 1);
		} else if (colon) {
			return cb_fail(CB_ERR_USAGE,
			               "--algo '%s': give every entry a size "
			               "range, or none",
			               s);
		}
		if ((st = find_algo(t, &sel.algo)))
			return st;
		o->algos[o->nalgos++] = sel;
	}
	if (o->nalgos == 0)
		return cb_fail(CB_ERR_USAGE, "empty --algo list");
	return CB_OK;
}

/* Every collective asked for must have an algorithm asked for. */
static cb_status_t check_algos(const struct cb_opts *o)
{
	if (o->algo_mode == CB_ALGO_AUTO)
		return CB_OK;
	for (int i = 0; i < o->nalgos && !strcmp(o->mem, "gpu"); i++)
		if (o->algos[i].algo->flags & CB_ALGO_HOST_ONLY)
			return cb_fail(
			        CB_ERR_USAGE,
			        "--algo %s runs on host memory only (its "
			        "steps work on the CPU): not with device "
			        "buffers (--mem gpu, --transport gpu)",
			        o->algos[i].algo->name);
	for (int k = 0; k < o->ncolls; k++) {
		int any = 0;
		for (int i = 0; i < o->nalgos; i++)
			any |= cb_algo_does(o->algos[i].algo, o->colls[k]);
		if (any)
			continue;
		{
			char names[256] = "";
			for (int i = 0; cb_algos[i]; i++)
				if (cb_algo_does(cb_algos[i], o->colls[k]))
					snprintf(names + strlen(names),
					         sizeof(names) - strlen(names),
					         "%s%s", names[0] ? ", " : "",
					         cb_algos[i]->name);
			return cb_fail(CB_ERR_USAGE,
			               "--algo %s: no algorithm given "
			               "implements %s (those that do: %s)",
			               o->algo, cb_coll_name(o->colls[k]),
			               names);
		}
	}
	return CB_OK;
}

cb_status_t cb_opts_parse(int argc, char **argv, struct cb_opts *o)
{
	cb_status_t st = CB_OK;
	int c, li = 0, bset = 0, eset = 0, mem_given = 0;
	const char *dl = "float32", *ol = "sum", *cl = "allreduce";

	*o = (struct cb_opts){
		.cmd = CB_CMD_RUN,
		.min_bytes = 8,
		.max_bytes = 64u << 20,
		.factor = 2.0,
		.warmup = 5,
		.iters = 20,
		.check = 1,
		.ncolls = 1,
		.colls = { CB_COLL_ALLREDUCE },
		.transport = "auto",
		.mem = "host",
		.algo = "auto",
		.np = 2,
		.straggler = -1,
		.rounds = 3,
		.timeout_s = 30.0,
		.noutputs = 1,
		.outputs = { { NULL, CB_FMT_TABLE } },
	};
	/* A command, if any, comes first; `topo` parses its own options. */
	if (argc > 1 && !strcmp(argv[1], "topo")) {
		o->cmd = CB_CMD_TOPO;
		return CB_OK;
	}
	if (argc > 1 && !strcmp(argv[1], "acceptance")) {
		o->cmd = CB_CMD_ACCEPT;
		return CB_OK;
	}
	if (argc > 1 &&
	    (!strcmp(argv[1], "plot") || !strcmp(argv[1], "compare") ||
	     !strcmp(argv[1], "report"))) {
		o->cmd = CB_CMD_RESULTS;
		return CB_OK;
	}
	o->argc = argc;
	o->argv = argv;
	if (argc > 1 && !strcmp(argv[1], "info"))
		o->cmd = CB_CMD_INFO;
	if (argc > 1 && !strcmp(argv[1], "tune"))
		o->cmd = CB_CMD_TUNE;
	if (argc > 1 && (!strcmp(argv[1], "info") || !strcmp(argv[1], "run") ||
	                 !strcmp(argv[1], "tune"))) {
		argv++;
		argc--;
	}
	/* 0, not 1: glibc then forgets a cluster (-vb8) left half-read by
	 * an earlier parse, which pointed into that parse's arguments. */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:b:e:f:i:w:n:c:d:o:O:r:vh",
	                        longopts, &li)) != -1) {
		switch (c) {
		case 'b':
			st = cb_parse_size(optarg, "-b", &o->min_bytes);
			bset = 1;
			break;
		case 'e':
			st = cb_parse_size(optarg, "-e", &o->max_bytes);
			eset = 1;
			break;
		case 'f':
			st = parse_double(optarg, "-f", 1.0001, 1024,
			                  &o->factor);
			o->step_bytes = 0;
			break;
		case 'i':
			st = cb_parse_size(optarg, "-i", &o->step_bytes);
			if (!st && o->step_bytes == 0)
				st = cb_fail(CB_ERR_USAGE,
				             "-i must be above 0");
			break;
		case 'w':
			st = parse_int(optarg, "-w", 0, 1000000, &o->warmup);
			break;
		case 'n':
			st = parse_int(optarg, "-n", 1, 100000000, &o->iters);
			o->iters_set = 1;
			break;
		case 'c':
			st = parse_int(optarg, "-c", 0, 1, &o->check);
			break;
		case 'd':
			dl = optarg;
			break;
		case 'o':
			ol = optarg;
			break;
		case 'O':
			st = add_output(o, optarg);
			break;
		case 'v':
			o->verbose++;
			break;
		case 'h':
			o->cmd = CB_CMD_HELP;
			return CB_OK;
		case OPT_VERSION:
			o->cmd = CB_CMD_VERSION;
			return CB_OK;
		case OPT_COLL:
			cl = optarg;
			break;
		case OPT_ALGO:
			o->algo = optarg;
			break;
		case 'r':
			st = parse_int(optarg, "--root", 0, 1 << 24, &o->root);
			break;
		case OPT_PS_SERVERS:
			st = parse_int(optarg, "--ps-servers", 0, 1 << 24,
			               &o->ps_servers);
			break;
		case OPT_ALPHA:
			st = parse_double(optarg, "--alpha-us", 1e-6, 1e7,
			                  &o->alpha_us);
			break;
		case OPT_BETA:
			st = parse_double(optarg, "--beta-gbps", 1e-6, 1e6,
			                  &o->beta_gbps);
			break;
		case OPT_RANKS:
		case OPT_NODES: {
			int tmp[CB_MAX_COUNTS], n;
			const char *what =
			        c == OPT_RANKS ? "--ranks" : "--nodes";
			/* the syntax now; the values once the world is known */
			st = cb_parse_counts(optarg, what, 0, tmp, &n);
			*(c == OPT_RANKS ? &o->ranks : &o->nodes) = optarg;
			break;
		}
		case OPT_SCALING_SIZE:
			st = cb_parse_size(optarg, "--scaling-size",
			                   &o->scaling_bytes);
			break;
		case OPT_SCHEDULE_LOG:
			o->schedule_log = optarg;
			break;
		case OPT_NP:
			st = parse_int(optarg, "--np", 1, CB_MAX_LOCAL_RANKS,
			               &o->np);
			o->np_set = 1;
			break;
		case OPT_TRANSPORT:
			o->transport = optarg;
			st = check_transport(optarg);
			break;
		case OPT_MEM:
			o->mem = optarg;
			mem_given = 1;
			if (strcmp(optarg, "host") && strcmp(optarg, "gpu"))
				st = cb_fail(CB_ERR_USAGE,
				             "--mem '%s': host or gpu", optarg);
			break;
		case OPT_RENDEZVOUS: {
			char h[256], p[16];
			o->rendezvous = optarg;
			st = cb_boot_parse_hostport(optarg, h, sizeof(h), p,
			                            sizeof(p));
			break;
		}
		case OPT_TCP_IF:
			cb_opt_set("tcp-if", optarg);
			break;
		case OPT_TCP_STREAMS: {
			int v;
			st = parse_int(optarg, "--tcp-streams", 1, 8, &v);
			cb_opt_set("tcp-streams", optarg);
			break;
		}
		case OPT_GID_INDEX: {
			int v;
			st = parse_int(optarg, "--gid-index", 0, 255, &v);
			cb_opt_set("gid-index", optarg);
			break;
		}
		case OPT_IB_SL: {
			int v;
			st = parse_int(optarg, "--ib-sl", 0, 15, &v);
			cb_opt_set("ib-sl", optarg);
			break;
		}
		case OPT_VERBS_CM:
			if (strcmp(optarg, "oob") && strcmp(optarg, "rdma_cm"))
				st = cb_fail(CB_ERR_USAGE,
				             "--verbs-cm '%s' is not oob or "
				             "rdma_cm",
				             optarg);
			cb_opt_set("verbs-cm", optarg);
			break;
		case OPT_VERBS_EAGER: {
			int v;
			st = parse_int(optarg, "--verbs-eager-bytes", 0, 8192,
			               &v);
			cb_opt_set("verbs-eager-bytes", optarg);
			break;
		}
		case OPT_TIMEOUT:
			st = parse_double(optarg, "--timeout", 0.1, 86400,
			                  &o->timeout_s);
			break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "table"))
				o->outputs[0].format = CB_FMT_TABLE;
			else if (!strcmp(optarg, "csv"))
				o->outputs[0].format = CB_FMT_CSV;
			else if (!strcmp(optarg, "json"))
				o->outputs[0].format = CB_FMT_JSON;
			else
				st = cb_fail(
				        CB_ERR_USAGE,
				        "unknown format '%s' (table, csv or "
				        "json)",
				        optarg);
			break;
		case OPT_CHUNK:
			st = cb_parse_size(optarg, "--chunk-bytes",
			                   &o->chunk_bytes);
			if (!st && o->chunk_bytes < 8)
				st = cb_fail(
				        CB_ERR_USAGE,
				        "--chunk-bytes must be at least 8");
			break;
		case OPT_TOPO:
			st = cb_topo_opt_check(longopts[li].name, optarg);
			if (!st)
				cb_opt_set(longopts[li].name, optarg);
			break;
		case OPT_TUNING:
			o->tuning = optarg;
			break;
		case OPT_ROUNDS:
			st = parse_int(optarg, "--rounds", 1, 1000, &o->rounds);
			break;
		case OPT_TOUCH:
			o->touch = 1;
			break;
		case OPT_STRAGGLER: {
			char *colon = strchr(optarg, ':'), rk[32];
			if (!colon || (size_t)(colon - optarg) >= sizeof(rk)) {
				st = cb_fail(
				        CB_ERR_USAGE,
				        "--straggler '%s' is not RANK:DELAY_US "
				        "(e.g. 1:500)",
				        optarg);
				break;
			}
			snprintf(rk, sizeof(rk), "%.*s", (int)(colon - optarg),
			         optarg);
			if (!(st = parse_int(rk, "--straggler rank", 0, 1 << 24,
			                     &o->straggler)))
				st = parse_double(colon + 1,
				                  "--straggler delay", 0, 1e8,
				                  &o->straggler_us);
			break;
		}
		case OPT_PLOT: {
			const char *dot = strrchr(optarg, '.');
			o->plot = optarg;
			if (!dot ||
			    (strcmp(dot, ".png") && strcmp(dot, ".svg")))
				st = cb_fail(
				        CB_ERR_USAGE,
				        "--plot %s: the image is FILE.png or "
				        "FILE.svg",
				        optarg);
			break;
		}
		case ':':
			st = cb_fail(CB_ERR_USAGE, "option %s needs a value",
			             argv[optind - 1]);
			break;
		default:
			st = cb_fail(CB_ERR_USAGE, "unknown option '%s'",
			             argv[optind - 1]);
			break;
		}
		if (st)
			return st;
	}
	if (optind < argc)
		return cb_fail(
		        CB_ERR_USAGE,
		        "unexpected argument '%s' (commands run, tune, info, "
		        "topo and acceptance come first)",
		        argv[optind]);
	if (bset && !eset && o->min_bytes > o->max_bytes)
		o->max_bytes = o->min_bytes;
	if (o->max_bytes < o->min_bytes)
		return cb_fail(CB_ERR_USAGE,
		               "-e (%zu bytes) is below -b (%zu bytes)",
		               o->max_bytes, o->min_bytes);
	char dnames[256] = "";
	for (int i = 0; i < CB_DT_COUNT; i++)
		snprintf(dnames + strlen(dnames),
		         sizeof(dnames) - strlen(dnames), "%s%s", i ? ", " : "",
		         cb_dtype_name(i));
	if ((st = parse_list(dl, "datatype", CB_DT_COUNT, cb_dtype_parse,
	                     (int *)o->dtypes, &o->ndtypes, dnames)))
		return st;
	if ((st = parse_list(ol, "op", CB_OP_COUNT, cb_op_parse, (int *)o->ops,
	                     &o->nops, "sum, prod, min, max")))
		return st;
	if ((st = parse_list(cl, "collective", CB_COLL_COUNT, cb_coll_parse,
	                     (int *)o->colls, &o->ncolls,
	                     "allreduce, reduce_scatter, allgather, "
	                     "broadcast, reduce, alltoall, barrier, "
	                     "sendrecv, pingpong")))
		return st;
	if (o->ranks && o->nodes)
		return cb_fail(CB_ERR_USAGE,
		               "--ranks and --nodes: give one sweep, not both");
	/* the gpu transport moves device memory: its buffers are there */
	if (!strcmp(o->transport, "gpu")) {
		if (!strcmp(o->mem, "host") && mem_given)
			return cb_fail(CB_ERR_USAGE,
			               "--transport gpu moves device memory: "
			               "--mem host does not apply");
		o->mem = "gpu";
	}
	if (o->touch && strcmp(o->mem, "host"))
		return cb_fail(CB_ERR_USAGE,
		               "--touch rewrites and reads the buffers from "
		               "the host: --mem host only");
	static const char *const flags[] = { "COLLBENCH_REPRODUCIBLE",
		                             "COLLBENCH_RING_PUT" };
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		const char *v = getenv(flags[i]);
		if (v && strcmp(v, "0") && strcmp(v, "1"))
			return cb_fail(CB_ERR_USAGE, "%s '%s' is not 0 or 1",
			               flags[i], v);
	}
	if ((st = parse_algo(o->algo, o)))
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
		if (!o->iters_set)
			o->iters =
			        50; /* medians of rounds want steady points */
		/* the table is per collective and shape: the first dtype and
		 * op stand for the others */
		o->ndtypes = o->nops = 1;
	}
	return check_algos(o);
}
