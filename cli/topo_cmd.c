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

enum {
	O_FORMAT = 256,
	O_TOPO_XML,
	O_SYNTHETIC,
	O_XML,
	O_NP,
	O_BIND,
	O_NIC,
	O_GPU,
	O_ALL,
	O_RDV,
	O_TIMEOUT,
};

static const struct option longopts[] = {
	{ "format", required_argument, NULL, O_FORMAT },
	{ "topo-xml", required_argument, NULL, O_TOPO_XML },
	{ "synthetic", required_argument, NULL, O_SYNTHETIC },
	{ "xml", required_argument, NULL, O_XML },
	{ "np", required_argument, NULL, O_NP },
	{ "bind", required_argument, NULL, O_BIND },
	{ "nic", required_argument, NULL, O_NIC },
	{ "gpu", required_argument, NULL, O_GPU },
	{ "all", no_argument, NULL, O_ALL },
	{ "rendezvous", required_argument, NULL, O_RDV },
	{ "timeout", required_argument, NULL, O_TIMEOUT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

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

/* 1: help shown; 0: parsed; -1: usage error (recorded). */
static int parse(int argc, char **argv, struct topo_opts *o)
{
	cb_status_t st = CB_OK;
	int c;

	*o = (struct topo_opts){
		.np = 1, .gpu = -1, .mode = CB_TOPO_BIND_AUTO, .timeout_s = 30
	};
	/* 0, not 1: glibc then forgets a cluster (-vb8) left half-read by
	 * an earlier parse, which pointed into that parse's arguments. */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage();
			return 1;
		case O_FORMAT:
			if (!strcmp(optarg, "json") || !strcmp(optarg, "table"))
				o->json = !strcmp(optarg, "json");
			else
				st = cb_fail(
				        CB_ERR_USAGE,
				        "unknown format '%s' (table or json)",
				        optarg);
			break;
		case O_TOPO_XML:
			o->topo_xml = optarg;
			break;
		case O_SYNTHETIC:
			o->synthetic = optarg;
			break;
		case O_XML:
			o->xml_out = optarg;
			break;
		case O_NP:
			st = parse_int(optarg, "--np", 1, 256, "a whole number",
			               &o->np);
			o->np_set = o->plan = 1;
			break;
		case O_BIND:
			st = cb_topo_bind_parse(optarg, "--bind", &o->mode);
			o->plan = 1;
			break;
		case O_NIC:
			o->nic = optarg;
			o->plan = 1;
			break;
		case O_GPU:
			st = parse_int(optarg, "--gpu", 0, 1023, "a GPU index",
			               &o->gpu);
			o->plan = 1;
			break;
		case O_ALL:
			o->all = 1;
			break;
		case O_RDV:
			o->rendezvous = optarg;
			break;
		case O_TIMEOUT:
			st = parse_num(optarg, "--timeout", 0.1, 86400,
			               &o->timeout_s);
			break;
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
			return -1;
	}
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
