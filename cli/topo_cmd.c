/* SPDX-License-Identifier: MIT */
/*
 * cli/topo_cmd.c - `collbench topo`: this host's topology (or a recorded
 * or synthetic one), the binding plan for N local ranks, an hwloc XML
 * export; and with --all, the inventory check over every host of a job.
 *
 * Exit status: 0 ok; 1 hosts differ (--all) or the job failed; 2 usage; 77
 * this build has no hwloc.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/cli.h"
#include "bench/options.h"
#include "cli/topo_cmd.h"
#include "bench/place.h"
#include "core/bootstrap.h"
#include "core/comm.h"
#include "core/log.h"
#include "topo/topo.h"

struct topo_opts {
	int json, all, np, np_set, plan;
	const char *topo_xml, *synthetic, *xml_out, *rendezvous;
	const char *nic;
	int gpu;
	enum cb_topo_bind mode;
	double timeout_s;
};

static void usage(void)
{
	printf("usage: collbench topo [options]   this host's topology, "
	       "NIC/GPU paths, binding plan\n"
	       "  --format F        table (default) or json\n"
	       "  --topo-xml FILE   a recorded hwloc XML topology instead of "
	       "this machine\n"
	       "  --synthetic DESC  an hwloc synthetic topology, e.g. "
	       "\"pack:2 numa:2 core:4 pu:2\"\n"
	       "  --xml FILE        also write the topology to FILE as hwloc "
	       "XML\n"
	       "  --np N            the binding plan for N local ranks (with "
	       "--all: fork N ranks)\n"
	       "  --bind MODE       none, core, numa or auto (default auto)\n"
	       "  --nic NAME        every rank uses this NIC\n"
	       "  --gpu INDEX       every rank uses this GPU\n"
	       "  --all             compare every host of the job (under a "
	       "launcher, or --np N\n"
	       "                    local ranks); exit 1 when hosts differ\n"
	       "  --rendezvous H:P  where ranks meet under a launcher (--all)\n"
	       "  --timeout S       give up after S seconds (--all; default "
	       "30)\n"
	       "\nExit status: 0 ok, 1 hosts differ (--all), 2 usage, 77 no "
	       "hwloc in this build.\n");
}

/* The options: a row of the table (bench/options.h) each; --format and
 * --bind are the code's, the rest go into their places by their kinds. */
enum { K_NUM = CB_OPT_OWN, K_WHOLE, K_GPU };
enum { O_FORMAT = 256, O_BIND, O_ROW };
#define MAX_ROWS 16

static cb_status_t parse_num(const char *s, const char *what, double lo,
                             double hi, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !(v >= lo && v <= hi))
		return cb_fail(CB_ERR_USAGE,
		               "%s '%s' is not a number in %g..%g", what, s, lo,
		               hi);
	*out = v;
	return CB_OK;
}

/* A whole number in lo..hi; @noun says what a fraction is not. */
static cb_status_t parse_int(const char *s, const char *what, int lo, int hi,
                             const char *noun, int *out)
{
	double v = 0;
	cb_status_t st = parse_num(s, what, lo, hi, &v);

	if (!st && v != (int)v)
		st = cb_fail(CB_ERR_USAGE, "%s '%s' is not %s", what, s, noun);
	*out = (int)v;
	return st;
}

/* topo's own kinds: @r's value (@arg; the option: @what). */
static cb_status_t value(const struct cb_optrow *r, const char *what,
                         const char *arg, void *ctx)
{
	(void)ctx;
	if (r->kind == K_NUM)
		return parse_num(arg, what, r->lo, r->hi, r->num);
	return parse_int(arg, what, (int)r->lo, (int)r->hi,
	                 r->kind == K_GPU ? "a GPU index" : "a whole number",
	                 r->i);
}

/* Every option, with where its value goes in @o; *@n: how many. */
static void rows_of(struct topo_opts *o, struct cb_optrow *t, int *n)
{
	/* --np, --bind, --nic and --gpu ask for the binding plan */
	const struct cb_optrow rows[] = {
		{ "format", .id = O_FORMAT },
		{ "topo-xml", 0, CB_OPT_STR, .str = &o->topo_xml },
		{ "synthetic", 0, CB_OPT_STR, .str = &o->synthetic },
		{ "xml", 0, CB_OPT_STR, .str = &o->xml_out },
		{ "np", 0, K_WHOLE, .i = &o->np, .lo = 1, .hi = 256,
		  .given = &o->np_set },
		{ "bind", .id = O_BIND },
		{ "nic", 0, CB_OPT_STR, .str = &o->nic, .given = &o->plan },
		{ "gpu", 0, K_GPU, .i = &o->gpu, .hi = 1023,
		  .given = &o->plan },
		{ "all", 0, CB_OPT_FLAG, .i = &o->all },
		{ "rendezvous", 0, CB_OPT_STR, .str = &o->rendezvous },
		{ "timeout", 0, K_NUM, .num = &o->timeout_s, .lo = 0.1,
		  .hi = 86400 },
		{ "help", .id = 'h', .kind = CB_OPT_BARE },
	};

	_Static_assert(sizeof(rows) / sizeof(rows[0]) <= MAX_ROWS,
	               "MAX_ROWS holds every row");
	*n = (int)(sizeof(rows) / sizeof(rows[0]));
	memcpy(t, rows, sizeof(rows));
}

/* 1: help shown; 0: parsed; -1: usage error (recorded). */
static int parse(int argc, char **argv, struct topo_opts *o)
{
	cb_status_t st = CB_OK;
	int c, n;
	struct cb_optrow rows[MAX_ROWS];
	struct option lo[MAX_ROWS + 1];

	*o = (struct topo_opts){
		.np = 1, .gpu = -1, .mode = CB_TOPO_BIND_AUTO, .timeout_s = 30
	};
	rows_of(o, rows, &n);
	cb_opt_table(rows, n, O_ROW, lo);
	while ((c = getopt_long(argc, argv, "+:h", lo, NULL)) != -1) {
		const struct cb_optrow *r = cb_opt_row(rows, n, O_ROW, c);
		if (c == 'h') {
			usage();
			return 1;
		}
		if (r && r->kind > CB_OPT_BARE)
			st = cb_opt_value(r, optarg, value, NULL);
		else if (c == O_FORMAT) {
			if (!strcmp(optarg, "json") || !strcmp(optarg, "table"))
				o->json = !strcmp(optarg, "json");
			else
				st = cb_fail(
				        CB_ERR_USAGE,
				        "unknown format '%s' (table or json)",
				        optarg);
		} else if (c == O_BIND) {
			st = cb_topo_bind_parse(optarg, "--bind", &o->mode);
			o->plan = 1;
		} else
			st = cb_opt_refuse(c, argv, "option ");
		if (st)
			return -1;
	}
	o->plan |= o->np_set;
	if (optind < argc) {
		cb_fail(CB_ERR_USAGE, "unexpected argument '%s'", argv[optind]);
		return -1;
	}
	if (o->topo_xml && o->synthetic) {
		cb_fail(CB_ERR_USAGE, "--topo-xml and --synthetic: one or the "
		                      "other");
		return -1;
	}
	if (o->all && (o->topo_xml || o->synthetic || o->xml_out)) {
		cb_fail(CB_ERR_USAGE,
		        "--all compares the hosts' own topologies (to load a "
		        "recording, set COLLBENCH_TOPO_XML)");
		return -1;
	}
	return 0;
}

static int say(cb_status_t st)
{
	return cb_cli_say("topo", st);
}

/* ---- one host ---- */

static int show(const struct topo_opts *o)
{
	struct cb_topo *t = NULL;
	struct cb_topo_slot *slots = NULL;
	char note[128] = "";
	cb_status_t st;

	if ((st = cb_topo_load(o->topo_xml, o->synthetic, &t)))
		return say(st);
	if (o->plan) {
		if (!(slots = calloc((size_t)o->np, sizeof(*slots)))) {
			st = cb_fail(CB_ERR_NOMEM, "out of memory");
			goto out;
		}
		if ((st = cb_topo_plan(t, o->mode, o->np, o->nic, o->gpu, slots,
		                       note, sizeof(note))))
			goto out;
	}
	if (o->xml_out && (st = cb_topo_export_xml(t, o->xml_out)))
		goto out;
	struct cb_topo_show s = { .t = t,
		                  .nranks = o->plan ? o->np : 0,
		                  .mode = o->mode,
		                  .slots = slots,
		                  .plan_note = note };
	st = o->json ? cb_topo_write_json(stdout, &s)
	             : cb_topo_write_table(stdout, &s);
out:
	free(slots);
	cb_topo_free(t);
	return st ? say(st) : 0;
}

/* ---- every host of a job ---- */

static int all_rank(void *arg, const struct cb_cli_rank *r)
{
	const struct topo_opts *o = arg;
	int rank = r->rank;
	struct cb_boot *boot = NULL;
	struct cb_topo_job *j = NULL;
	char name[64], key[128];
	struct cb_optset view = { 0 }; /* --bind, --topo-xml: the variables' */
	int rc = 0;
	cb_status_t st;

	cb_log_set_rank(rank);
	cb_host_identity(name, sizeof(name), key, sizeof(key));
	struct cb_boot_cfg bc = { .rank = rank,
		                  .world = r->world,
		                  .host = r->host,
		                  .port = r->port,
		                  .listen_fd = r->listen_fd,
		                  .relay = r->relay,
		                  .timeout_s = o->timeout_s,
		                  .hostname = name };
	if ((st = cb_boot_open(&bc, &boot)))
		return say(st);
	if (!(st = cb_optset_env(&view)))
		st = cb_place_job(boot, rank, r->world, -1, 0, NULL, &view, &j);
	if (st) {
		int origin = -1;
		if (st != CB_ERR_ABORTED) {
			cb_boot_abort(boot, st, -1,
			              cb_fail_msg() ? cb_fail_msg() : "failed");
			/* Several ranks failing at once: one line (the
			 * store answers every report, its origin's too). */
			if (cb_boot_check(boot, 1500, &origin) !=
			            CB_ERR_ABORTED ||
			    origin == rank)
				say(st);
		}
		cb_boot_close(boot);
		return cb_cli_exit(st);
	}
	if (rank == 0) {
		if (o->json) {
			cb_topo_write_inv_json(stdout, j);
		} else {
			printf("inventory: %s\n", cb_topo_job_inventory(j));
			fflush(stdout);
		}
		rc = cb_topo_job_differing(j) ? 1 : 0;
	}
	cb_topo_job_free(j);
	st = cb_boot_barrier(boot);
	cb_boot_close(boot);
	return st ? cb_cli_exit(st) : rc;
}

static int check_all(struct topo_opts *o)
{
	struct cb_cli_job job = {
		.np = o->np,
		.np_set = o->np_set,
		.rendezvous = o->rendezvous,
		.timeout_s = o->timeout_s,
	};
	cb_status_t st;
	int rc;

	if ((st = cb_cli_start(&job, all_rank, o, &rc)))
		return say(st);
	return rc;
}

int cb_topo_cmd(int argc, char **argv)
{
	struct topo_opts o;
	int r = parse(argc, argv, &o);

	if (r)
		return r > 0 ? 0 : say(CB_ERR_USAGE);
	if (!cb_topo_have_hwloc) {
		fprintf(stderr, "collbench topo: this build has no hwloc "
		                "(built with -Dhwloc=disabled)\n");
		return 77;
	}
	return o.all ? check_all(&o) : show(&o);
}
