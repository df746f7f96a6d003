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

/* The options code below takes (a row's id), past the short letters. */
enum {
	OPT_TRANSPORT = 256,
	OPT_RENDEZVOUS,
	OPT_TCP_IF,
	OPT_VERBS_CM,
	OPT_VERBS_EAGER,
	OPT_FORMAT,
	OPT_CHUNK,
	OPT_VERSION,
	OPT_RANKS,
	OPT_NODES,
	OPT_TOPO, /* --bind, --nic, --gpu, --topo-xml: checked by topo/ */
	OPT_PLOT,
	OPT_MEM,
	OPT_STRAGGLER,
	OPT_ROW, /* rows[i] without an id: getopt_long gives OPT_ROW + i */
};

/* The short options; nccl-tests' letters mean what they mean there
 * (-T timeout, -a, -z, -N, -S, -J), and perftest's -D too.
 * docs/options.md lists every one, with the ones kept from perftest. */
#define SHORTOPTS "+:b:e:f:i:w:n:c:d:o:O:r:vhT:a:z:N:S:J:D:"

/* The plain options' own kinds (the rest: bench/options.h). */
enum { K_INT = CB_OPT_OWN, K_NUM, K_SIZE, K_VIEW };
#define MAX_ROWS 64

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

/* Every option, with where a plain value goes in @o (or @ps); *@n: how
 * many. */
static void rows_of(struct cb_opts *o, struct cb_opts_given *ps,
                    struct cb_optrow *t, int *n)
{
	const struct cb_optrow rows[] = {
		{ "minbytes", 'b', K_SIZE, .bytes = &o->min_bytes,
		  .given = &ps->bset },
		{ "maxbytes", 'e', K_SIZE, .bytes = &o->max_bytes,
		  .given = &ps->eset },
		{ "stepfactor", .id = 'f' },
		{ "stepbytes", .id = 'i' },
		{ "warmup_iters", 'w', K_INT, .i = &o->warmup, .hi = 1000000 },
		{ "iters", 'n', K_INT, .i = &o->iters, .lo = 1, .hi = 100000000,
		  .given = &o->iters_set },
		{ "check", 'c', K_INT, .i = &o->check, .hi = 1 },
		{ "datatype", 'd', CB_OPT_STR, .str = &ps->dl },
		{ "op", 'o', CB_OPT_STR, .str = &ps->ol },
		{ "output", .id = 'O' },
		{ "verbose", .id = 'v', .kind = CB_OPT_BARE },
		{ "help", .id = 'h', .kind = CB_OPT_BARE },
		{ "average", 'a', K_INT, .i = &o->average, .hi = 3 },
		{ "blocking", .id = 'z' },
		{ "run_cycles", 'N', K_INT, .i = &o->cycles, .hi = 1000000000,
		  .given = &ps->cycles_set },
		{ "report_timestamps", 'S', K_INT, .i = &o->timestamps,
		  .hi = 1 },
		{ "output_file", .id = 'J' },
		/* perftest's -D: each point times calls for this long */
		{ "duration", 'D', K_NUM, .num = &o->duration_s, .lo = 0.001,
		  .hi = 86400, .what = "-D/--duration" },
		{ "report_gbits", 0, CB_OPT_FLAG, .i = &o->report_gbits },
		{ "coll", 0, CB_OPT_STR, .str = &ps->cl },
		{ "algo", 0, CB_OPT_STR, .str = &o->algo },
		{ "np", 0, K_INT, .i = &o->np, .lo = 1,
		  .hi = CB_MAX_LOCAL_RANKS, .given = &o->np_set },
		{ "transport", .id = OPT_TRANSPORT },
		{ "rendezvous", .id = OPT_RENDEZVOUS },
		{ "tcp-if", .id = OPT_TCP_IF },
		{ "tcp-streams", 0, K_VIEW, .lo = 1, .hi = 8 },
		{ "gid-index", 0, K_VIEW, .hi = 255 },
		{ "ib-sl", 0, K_VIEW, .hi = 15 },
		{ "verbs-cm", .id = OPT_VERBS_CM },
		{ "verbs-eager-bytes", .id = OPT_VERBS_EAGER },
		{ "timeout", 'T', K_NUM, .num = &o->timeout_s, .lo = 0.1,
		  .hi = 86400, .what = "--timeout" },
		{ "format", .id = OPT_FORMAT },
		{ "chunk-bytes", .id = OPT_CHUNK },
		{ "version", .id = OPT_VERSION, .kind = CB_OPT_BARE },
		{ "root", 'r', K_INT, .i = &o->root, .hi = 1 << 24,
		  .what = "--root" },
		{ "ps-servers", 0, K_INT, .i = &o->ps_servers, .hi = 1 << 24 },
		{ "alpha-us", 0, K_NUM, .num = &o->alpha_us, .lo = 1e-6,
		  .hi = 1e7 },
		{ "beta-gbps", 0, K_NUM, .num = &o->beta_gbps, .lo = 1e-6,
		  .hi = 1e6 },
		{ "ranks", .id = OPT_RANKS },
		{ "nodes", .id = OPT_NODES },
		{ "scaling-size", 0, K_SIZE, .bytes = &o->scaling_bytes },
		{ "schedule-log", 0, CB_OPT_STR, .str = &o->schedule_log },
		{ "bind", .id = OPT_TOPO },
		{ "nic", .id = OPT_TOPO },
		{ "gpu", .id = OPT_TOPO },
		{ "topo-xml", .id = OPT_TOPO },
		{ "plot", .id = OPT_PLOT },
		{ "mem", .id = OPT_MEM },
		{ "straggler", .id = OPT_STRAGGLER },
		{ "tuning", 0, CB_OPT_STR, .str = &o->tuning },
		{ "rounds", 0, K_INT, .i = &o->rounds, .lo = 1, .hi = 1000 },
		{ "touch", 0, CB_OPT_FLAG, .i = &o->touch },
	};

	_Static_assert(sizeof(rows) / sizeof(rows[0]) <= MAX_ROWS,
	               "MAX_ROWS holds every row");
	*n = (int)(sizeof(rows) / sizeof(rows[0]));
	memcpy(t, rows, sizeof(rows));
}

/* The plain options' own kinds: @r's value (@arg; the option: @what). */
static cb_status_t value(const struct cb_optrow *r, const char *what,
                         const char *arg, void *o)
{
	switch (r->kind) {
	case K_INT:
		return parse_int(arg, what, (long)r->lo, (long)r->hi, r->i);
	case K_NUM:
		return parse_double(arg, what, r->lo, r->hi, r->num);
	case K_SIZE:
		return cb_parse_size(arg, what, r->bytes);
	case K_VIEW:
		return view_int(o, r->name, arg, (long)r->lo, (long)r->hi);
	}
	return CB_OK;
}

/* Sizes, iterations, what is measured and how it is reported: 1 if @c is
 * one of them (*@st its verdict), else 0. */
static int opt_measure(int c, const char *arg, struct cb_opts *o,
                       cb_status_t *st)
{
	switch (c) {
	case 'f':
		*st = parse_double(arg, "-f", 1.0001, 1024, &o->factor);
		o->step_bytes = 0;
		return 1;
	case 'i':
		*st = cb_parse_size(arg, "-i", &o->step_bytes);
		if (!*st && o->step_bytes == 0)
			*st = cb_fail(CB_ERR_USAGE, "-i must be above 0");
		return 1;
	case 'z':
		*st = cb_fail(CB_ERR_USAGE,
		              "-z %s: collbench's calls are always blocking "
		              "(each completes before the next starts); there "
		              "is no other mode (perftest's -z is --verbs-cm "
		              "rdma_cm)",
		              arg);
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
static int opt_coll(int c, const char *arg, struct cb_opts *o, cb_status_t *st)
{
	switch (c) {
	case OPT_RANKS:
	case OPT_NODES: {
		int tmp[CB_MAX_COUNTS], n;
		const char *what = c == OPT_RANKS ? "--ranks" : "--nodes";
		/* the syntax now; the values once the world is known */
		*st = cb_parse_counts(arg, what, 0, tmp, &n);
		*(c == OPT_RANKS ? &o->ranks : &o->nodes) = arg;
		return 1;
	}
	case OPT_CHUNK:
		*st = cb_parse_size(arg, "--chunk-bytes", &o->chunk_bytes);
		if (!*st && o->chunk_bytes < 8)
			*st = cb_fail(CB_ERR_USAGE,
			              "--chunk-bytes must be at least 8");
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
	case OPT_TCP_IF:
		*st = cb_optset_put(&o->tp, "tcp-if", arg);
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
	int c, n, li = 0;
	struct cb_optrow rows[MAX_ROWS];
	struct option lo[MAX_ROWS + 1];

	defaults(o);
	if (command(&argc, &argv, o))
		return CB_OK;
	rows_of(o, &ps, rows, &n);
	cb_opt_table(rows, n, OPT_ROW, lo);
	while ((c = getopt_long(argc, argv, SHORTOPTS, lo, &li)) != -1) {
		const struct cb_optrow *r = cb_opt_row(rows, n, OPT_ROW, c);
		ps.name = lo[li].name;
		if (c == 'h' || c == OPT_VERSION) {
			o->cmd = c == 'h' ? CB_CMD_HELP : CB_CMD_VERSION;
			return CB_OK;
		}
		if (r && r->kind > CB_OPT_BARE)
			st = cb_opt_value(r, optarg, value, o);
		else if (c == ':' || (!opt_measure(c, optarg, o, &st) &&
		                      !opt_coll(c, optarg, o, &st) &&
		                      !opt_transport(c, optarg, o, &ps, &st) &&
		                      !opt_output(c, optarg, o, &st)))
			st = cb_opt_refuse(c, argv, "option ");
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
