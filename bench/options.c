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
	OPT_REPORT_GBITS,
};

/* The short options; nccl-tests' letters mean what they mean there
 * (-T timeout, -a, -z, -N, -S, -J), and perftest's -D too.
 * docs/options.md lists every one, with the ones kept from perftest. */
#define SHORTOPTS "+:b:e:f:i:w:n:c:d:o:O:r:vhT:a:z:N:S:J:D:"

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
	{ "average", required_argument, NULL, 'a' },
	{ "blocking", required_argument, NULL, 'z' },
	{ "run_cycles", required_argument, NULL, 'N' },
	{ "report_timestamps", required_argument, NULL, 'S' },
	{ "output_file", required_argument, NULL, 'J' },
	{ "duration", required_argument, NULL, 'D' },
	{ "report_gbits", no_argument, NULL, OPT_REPORT_GBITS },
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
	{ "timeout", required_argument, NULL, 'T' },
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

/* A value checked here, handed on to a transport through @o's option
 * view. */
static cb_status_t view_int(struct cb_opts *o, const char *key, const char *arg,
                            long lo, long hi)
{
	char flag[48];
	int v;
	cb_status_t st;

	snprintf(flag, sizeof(flag), "--%s", key);
	if (!(st = parse_int(arg, flag, lo, hi, &v)))
		st = cb_optset_put(&o->tp, key, arg);
	return st;
}

/* -J FILE: nccl-tests' JSON report, as -O FILE.json. */
static cb_status_t add_json(struct cb_opts *o, const char *path)
{
	const char *dot = strrchr(path, '.');

	if (dot && strcasecmp(dot, ".json") &&
	    (!strcasecmp(dot, ".csv") || !strcasecmp(dot, ".txt") ||
	     !strcasecmp(dot, ".table")))
		return cb_fail(CB_ERR_USAGE,
		               "-J %s writes JSON: for another format, -O %s",
		               path, path);
	if (o->noutputs == CB_MAX_OUTPUTS)
		return cb_fail(CB_ERR_USAGE, "at most %d -O files",
		               CB_MAX_OUTPUTS - 1);
	o->outputs[o->noutputs++] = (struct cb_output){ path, CB_FMT_JSON };
	return CB_OK;
}

/* Sizes, iterations, what is measured and how it is reported: 1 if @c is
 * one of them (*@st its verdict), else 0. */
static int opt_measure(int c, const char *arg, struct cb_opts *o,
                       struct cb_opts_given *ps, cb_status_t *st)
{
	switch (c) {
	case 'b':
		*st = cb_parse_size(arg, "-b", &o->min_bytes);
		ps->bset = 1;
		return 1;
	case 'e':
		*st = cb_parse_size(arg, "-e", &o->max_bytes);
		ps->eset = 1;
		return 1;
	case 'f':
		*st = parse_double(arg, "-f", 1.0001, 1024, &o->factor);
		o->step_bytes = 0;
		return 1;
	case 'i':
		*st = cb_parse_size(arg, "-i", &o->step_bytes);
		if (!*st && o->step_bytes == 0)
			*st = cb_fail(CB_ERR_USAGE, "-i must be above 0");
		return 1;
	case 'w':
		*st = parse_int(arg, "-w", 0, 1000000, &o->warmup);
		return 1;
	case 'n':
		*st = parse_int(arg, "-n", 1, 100000000, &o->iters);
		o->iters_set = 1;
		return 1;
	case 'c':
		*st = parse_int(arg, "-c", 0, 1, &o->check);
		return 1;
	case 'd':
		ps->dl = arg;
		return 1;
	case 'o':
		ps->ol = arg;
		return 1;
	case 'a':
		*st = parse_int(arg, "-a", 0, 3, &o->average);
		return 1;
	case 'N':
		*st = parse_int(arg, "-N", 0, 1000000000, &o->cycles);
		ps->cycles_set = 1;
		return 1;
	case 'z':
		*st = cb_fail(CB_ERR_USAGE,
		              "-z %s: collbench's calls are always blocking "
		              "(each completes before the next starts); there "
		              "is no other mode (perftest's -z is --verbs-cm "
		              "rdma_cm)",
		              arg);
		return 1;
	case 'D':
		/* perftest's -D: each point times calls for this long */
		*st = parse_double(arg, "-D/--duration", 0.001, 86400,
		                   &o->duration_s);
		return 1;
	case OPT_REPORT_GBITS:
		o->report_gbits = 1;
		return 1;
	case 'S':
		*st = parse_int(arg, "-S", 0, 1, &o->timestamps);
		return 1;
	case OPT_ROUNDS:
		*st = parse_int(arg, "--rounds", 1, 1000, &o->rounds);
		return 1;
	case OPT_TOUCH:
		o->touch = 1;
		return 1;
	}
	return 0;
}

/* --straggler RANK:DELAY_US */
static cb_status_t parse_straggler(const char *arg, struct cb_opts *o)
{
	const char *colon = strchr(arg, ':');
	char rk[32];
	cb_status_t st;

	if (!colon || (size_t)(colon - arg) >= sizeof(rk))
		return cb_fail(CB_ERR_USAGE,
		               "--straggler '%s' is not RANK:DELAY_US (e.g. "
		               "1:500)",
		               arg);
	snprintf(rk, sizeof(rk), "%.*s", (int)(colon - arg), arg);
	if ((st = parse_int(rk, "--straggler rank", 0, 1 << 24, &o->straggler)))
		return st;
	return parse_double(colon + 1, "--straggler delay", 0, 1e8,
	                    &o->straggler_us);
}

/* Collectives, algorithms and the model. */
static int opt_coll(int c, const char *arg, struct cb_opts *o,
                    struct cb_opts_given *ps, cb_status_t *st)
{
	switch (c) {
	case OPT_COLL:
		ps->cl = arg;
		return 1;
	case OPT_ALGO:
		o->algo = arg;
		return 1;
	case 'r':
		*st = parse_int(arg, "--root", 0, 1 << 24, &o->root);
		return 1;
	case OPT_PS_SERVERS:
		*st = parse_int(arg, "--ps-servers", 0, 1 << 24,
		                &o->ps_servers);
		return 1;
	case OPT_ALPHA:
		*st = parse_double(arg, "--alpha-us", 1e-6, 1e7, &o->alpha_us);
		return 1;
	case OPT_BETA:
		*st = parse_double(arg, "--beta-gbps", 1e-6, 1e6,
		                   &o->beta_gbps);
		return 1;
	case OPT_RANKS:
	case OPT_NODES: {
		int tmp[CB_MAX_COUNTS], n;
		const char *what = c == OPT_RANKS ? "--ranks" : "--nodes";
		/* the syntax now; the values once the world is known */
		*st = cb_parse_counts(arg, what, 0, tmp, &n);
		*(c == OPT_RANKS ? &o->ranks : &o->nodes) = arg;
		return 1;
	}
	case OPT_SCALING_SIZE:
		*st = cb_parse_size(arg, "--scaling-size", &o->scaling_bytes);
		return 1;
	case OPT_CHUNK:
		*st = cb_parse_size(arg, "--chunk-bytes", &o->chunk_bytes);
		if (!*st && o->chunk_bytes < 8)
			*st = cb_fail(CB_ERR_USAGE,
			              "--chunk-bytes must be at least 8");
		return 1;
	case OPT_TUNING:
		o->tuning = arg;
		return 1;
	case OPT_STRAGGLER:
		*st = parse_straggler(arg, o);
		return 1;
	}
	return 0;
}

/* Ranks, transports, topology. */
static int opt_transport(int c, const char *arg, struct cb_opts *o,
                         struct cb_opts_given *ps, cb_status_t *st)
{
	char h[256], p[16];

	switch (c) {
	case OPT_NP:
		*st = parse_int(arg, "--np", 1, CB_MAX_LOCAL_RANKS, &o->np);
		o->np_set = 1;
		return 1;
	case OPT_TRANSPORT:
		o->transport = arg;
		*st = check_transport(arg);
		return 1;
	case OPT_MEM:
		o->mem = arg;
		ps->mem_given = 1;
		if (strcmp(arg, "host") && strcmp(arg, "gpu"))
			*st = cb_fail(CB_ERR_USAGE, "--mem '%s': host or gpu",
			              arg);
		return 1;
	case OPT_RENDEZVOUS:
		o->rendezvous = arg;
		*st = cb_boot_parse_hostport(arg, h, sizeof(h), p, sizeof(p));
		return 1;
	case 'T':
		*st = parse_double(arg, "--timeout", 0.1, 86400, &o->timeout_s);
		return 1;
	case OPT_TCP_IF:
		*st = cb_optset_put(&o->tp, "tcp-if", arg);
		return 1;
	case OPT_TCP_STREAMS:
		*st = view_int(o, "tcp-streams", arg, 1, 8);
		return 1;
	case OPT_GID_INDEX:
		*st = view_int(o, "gid-index", arg, 0, 255);
		return 1;
	case OPT_IB_SL:
		*st = view_int(o, "ib-sl", arg, 0, 15);
		return 1;
	case OPT_VERBS_CM:
		if (strcmp(arg, "oob") && strcmp(arg, "rdma_cm"))
			*st = cb_fail(CB_ERR_USAGE,
			              "--verbs-cm '%s' is not oob or rdma_cm",
			              arg);
		else
			*st = cb_optset_put(&o->tp, "verbs-cm", arg);
		return 1;
	case OPT_VERBS_EAGER: {
		size_t v;
		char bytes[32];
		/* a size, 4K as 4096: the transport reads plain bytes */
		if (!(*st = cb_parse_size(arg, "--verbs-eager-bytes", &v)) &&
		    v > 8192)
			*st = cb_fail(CB_ERR_USAGE,
			              "--verbs-eager-bytes '%s' is above 8K "
			              "(8192)",
			              arg);
		snprintf(bytes, sizeof(bytes), "%zu", v);
		if (!*st)
			*st = cb_optset_put(&o->tp, "verbs-eager-bytes", bytes);
		return 1;
	}
	case OPT_TOPO:
		*st = cb_topo_opt_check(ps->name, arg);
		if (!*st)
			*st = cb_optset_put(&o->tp, ps->name, arg);
		return 1;
	}
	return 0;
}

/* Outputs, and what stops the parse at once (help, version). */
static int opt_output(int c, const char *arg, struct cb_opts *o,
                      cb_status_t *st)
{
	const char *dot;

	switch (c) {
	case 'O':
		*st = add_output(o, arg);
		return 1;
	case 'J':
		*st = add_json(o, arg);
		return 1;
	case 'v':
		o->verbose++;
		return 1;
	case OPT_SCHEDULE_LOG:
		o->schedule_log = arg;
		return 1;
	case OPT_FORMAT:
		if (!strcmp(arg, "table"))
			o->outputs[0].format = CB_FMT_TABLE;
		else if (!strcmp(arg, "csv"))
			o->outputs[0].format = CB_FMT_CSV;
		else if (!strcmp(arg, "json"))
			o->outputs[0].format = CB_FMT_JSON;
		else
			*st = cb_fail(
			        CB_ERR_USAGE,
			        "unknown format '%s' (table, csv or json)",
			        arg);
		return 1;
	case OPT_PLOT:
		dot = strrchr(arg, '.');
		o->plot = arg;
		if (!dot || (strcmp(dot, ".png") && strcmp(dot, ".svg")))
			*st = cb_fail(CB_ERR_USAGE,
			              "--plot %s: the image is FILE.png or "
			              "FILE.svg",
			              arg);
		return 1;
	}
	return 0;
}

static void defaults(struct cb_opts *o)
{
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
		.average = 1,
		.cycles = 1,
	};
}

/* The command, if any, comes first: 1 when its own parser takes the rest
 * (topo, acceptance, plot, compare, report); else the arguments after
 * it (run, tune, info) are left in *@argc, *@argv. */
static int command(int *argc, char ***argv, struct cb_opts *o)
{
	const char *w = *argc > 1 ? (*argv)[1] : "";

	if (!strcmp(w, "topo"))
		o->cmd = CB_CMD_TOPO;
	else if (!strcmp(w, "acceptance"))
		o->cmd = CB_CMD_ACCEPT;
	else if (!strcmp(w, "plot") || !strcmp(w, "compare") ||
	         !strcmp(w, "report"))
		o->cmd = CB_CMD_RESULTS;
	if (o->cmd != CB_CMD_RUN)
		return 1;
	o->argc = *argc;
	o->argv = *argv;
	if (!strcmp(w, "info"))
		o->cmd = CB_CMD_INFO;
	if (!strcmp(w, "tune"))
		o->cmd = CB_CMD_TUNE;
	if (!strcmp(w, "info") || !strcmp(w, "run") || !strcmp(w, "tune")) {
		(*argv)++;
		(*argc)--;
	}
	return 0;
}

cb_status_t cb_opts_parse(int argc, char **argv, struct cb_opts *o)
{
	struct cb_opts_given ps = { "float32", "sum", "allreduce", 0,
		                    0,         0,     0,           NULL };
	cb_status_t st = CB_OK;
	int c, li = 0;

	defaults(o);
	if (command(&argc, &argv, o))
		return CB_OK;
	/* 0, not 1: glibc then forgets a cluster (-vb8) left half-read by
	 * an earlier parse, which pointed into that parse's arguments. */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, SHORTOPTS, longopts, &li)) != -1) {
		ps.name = longopts[li].name;
		if (c == 'h' || c == OPT_VERSION) {
			o->cmd = c == 'h' ? CB_CMD_HELP : CB_CMD_VERSION;
			return CB_OK;
		}
		if (c == ':')
			st = cb_fail(CB_ERR_USAGE, "option %s needs a value",
			             argv[optind - 1]);
		else if (!opt_measure(c, optarg, o, &ps, &st) &&
		         !opt_coll(c, optarg, o, &ps, &st) &&
		         !opt_transport(c, optarg, o, &ps, &st) &&
		         !opt_output(c, optarg, o, &st))
			st = cb_fail(CB_ERR_USAGE, "unknown option '%s'",
			             argv[optind - 1]);
		if (st)
			return st;
	}
	if (optind < argc)
		return cb_fail(
		        CB_ERR_USAGE,
		        "unexpected argument '%s' (commands run, tune, info, "
		        "topo and acceptance come first)",
		        argv[optind]);
	return cb_opts_check(o, &ps);
}
