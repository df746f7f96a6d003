/* SPDX-License-Identifier: MIT */
/*
 * cli/main.c - the collbench command: parse, decide how ranks start
 * (forked here, or one per process under a launcher), run, and turn the
 * outcome into one line and an exit status.
 *
 * Exit status: 0 ok; 1 the run failed (wrong values, a rank failed, a
 * deadline passed); 2 usage; 77 the requested transport is not available.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "acceptance/accept.h"
#include "bench/cli.h"
#include "bench/options.h"
#include "bench/place.h"
#include "cli/results_cmd.h"
#include "cli/sweep.h"
#include "cli/topo_cmd.h"
#include "cb_config.h"
#include "coll/coll.h"
#include "core/comm.h"
#include "core/log.h"
#include "reports/results.h"
#include "core/pmix.h"

/* The JSON files are this run's from the start, whatever happens next. */
static void json_placeholder(void *arg)
{
	const struct cb_opts *o = arg;

	if (cb_results_early(o->argc, o->argv, o->outputs, o->noutputs, CB_OK))
		cb_fail_clear(); /* rank 0 says it when it writes for real */
}

static int rank_main(void *arg, const struct cb_cli_rank *r)
{
	const struct cb_opts *o = arg;
	struct cb_comm *comm = NULL;
	uint64_t wrong = 0;
	cb_status_t st;
	struct cb_comm_cfg cfg = cb_place_comm_cfg(
	        r, o->timeout_s, o->transport, o->mem, &o->tp);

	cb_log_set_rank(r->rank);
	if (r->rank == 0 && r->listen_fd < 0) /* under a launcher */
		json_placeholder(arg);
	st = cb_comm_create(&cfg, &comm);
	if (st && r->rank == 0)
		cb_results_early(o->argc, o->argv, o->outputs, o->noutputs, st);
	if (st) {
		if (!cb_fail_quiet())
			cb_log(CB_LOG_ERROR, "%s",
			       cb_fail_msg() ? cb_fail_msg()
			                     : cb_status_str(st));
		return cb_cli_exit(st);
	}
	if (r->rank == 0)
		cb_log(CB_LOG_INFO, "%d ranks on %d hosts, transport %s",
		       comm->world, comm->nhosts, comm->transport);
	st = cb_sweep(comm, o, &wrong);
	if (st && cb_comm_fail(comm, st))
		cb_log(CB_LOG_ERROR, "%s",
		       cb_fail_msg() ? cb_fail_msg() : cb_status_str(st));
	if (!st && r->rank == 0 && wrong)
		cb_log(CB_LOG_ERROR, "%llu wrong values",
		       (unsigned long long)wrong);
	/* Everyone finished: line up once more so no rank tears down what a
	 * slower one still reads.  A rank lost here (killed as the results
	 * were written) fails the job like any other, with its line. */
	if (!st && (st = cb_boot_barrier(comm->boot)) && cb_comm_fail(comm, st))
		cb_log(CB_LOG_ERROR, "%s",
		       cb_fail_msg() ? cb_fail_msg() : cb_status_str(st));
	cb_comm_destroy(comm);
	if (st)
		return cb_cli_exit(st);
	return wrong ? 1 : 0;
}

/* A transport's devices, one line each: what `--nic` may name. */
static void info_devices(const struct cb_tp_ops *ops)
{
	struct cb_tp_dev d[16];
	int n = 0;

	if (!CB_TP_HAS(ops, devices) || ops->devices(d, 16, &n) != CB_OK)
		return;
	for (int i = 0; i < n && i < 16; i++) {
		char port[16] = "", speed[24] = "", mtu[24] = "";
		if (d[i].port)
			snprintf(port, sizeof(port), ":%d", d[i].port);
		if (d[i].speed_gbps > 0)
			snprintf(speed, sizeof(speed), " %g Gb/s",
			         d[i].speed_gbps);
		if (d[i].mtu)
			snprintf(mtu, sizeof(mtu), " MTU %u", d[i].mtu);
		printf("  %6s   %s%s %s %s%s%s%s%s\n", "", d[i].name, port,
		       d[i].link_layer, d[i].state, speed, mtu,
		       d[i].detail[0] ? ", " : "", d[i].detail);
	}
	if (n > 16)
		printf("  %6s   ... and %d more\n", "", n - 16);
}

static void info(void)
{
	printf("collbench %s\n\ntransports:\n", CB_VERSION);
	for (int i = 0; cb_tp_names[i]; i++) {
		struct cb_tp_entry e;
		cb_tp_find(cb_tp_names[i], &e);
		printf("  %-6s %-13s %s\n", e.name,
		       !e.ops        ? "not built"
		       : e.available ? "available"
		                     : "not usable",
		       e.ops && e.available ? e.ops->description : e.why);
		if (e.ops && e.available)
			info_devices(e.ops);
	}
	printf("\nalgorithms:\n");
	for (int i = 0; cb_algos[i]; i++) {
		char colls[128] = "";
		for (int k = 0; k < CB_COLL_COUNT; k++)
			if (cb_algos[i]->colls & (1u << k))
				snprintf(colls + strlen(colls),
				         sizeof(colls) - strlen(colls), "%s%s",
				         colls[0] ? "," : "", cb_coll_name(k));
		if (!cb_algos[i]->colls)
			continue;
		printf("  %-13s %s\n  %13s   (%s)\n", cb_algos[i]->name,
		       cb_algos[i]->description, "", colls);
	}
	printf("\ndatatypes:   ");
	for (int i = 0; i < CB_DT_COUNT; i++)
		printf(" %s", cb_dtype_name(i));
	printf("\nops:         ");
	for (int i = 0; i < CB_OP_COUNT; i++)
		printf(" %s", cb_op_name(i));
	printf("\nbootstrap:    %s\n",
	       cb_pmix_built ? "PMIx under mpirun and srun --mpi=pmix, else "
	                       "--rendezvous"
	                     : "--rendezvous (built without PMIx)");
	printf("build:        %s\n", CB_BUILD_INFO);
}

static int usage_error(void)
{
	fprintf(stderr, "collbench: %s (see collbench --help)\n",
	        cb_fail_msg() ? cb_fail_msg() : "usage error");
	return 2;
}

int main(int argc, char **argv)
{
	struct cb_opts o;
	int rc;

	signal(SIGPIPE, SIG_IGN);
	if (cb_opts_parse(argc, argv, &o))
		return usage_error();
	switch (o.cmd) {
	case CB_CMD_HELP:
		cb_opts_usage();
		return 0;
	case CB_CMD_VERSION:
		printf("collbench %s\n", CB_VERSION);
		return 0;
	case CB_CMD_INFO:
		info();
		return 0;
	case CB_CMD_TOPO:
		return cb_topo_cmd(argc - 1, argv + 1);
	case CB_CMD_ACCEPT:
		return cb_acceptance_cmd(argc - 1, argv + 1);
	case CB_CMD_RESULTS:
		return cb_results_cmd(argc - 1, argv + 1);
	case CB_CMD_TUNE: /* a run: the sweep writes the table */
	default:
		break;
	}
	cb_log_level = CB_LOG_WARN + o.verbose;

	/* An unavailable transport is known before any rank starts; so is
	 * a missing GPU for device buffers (the gpu module's engine moves
	 * them whatever the transport). */
	const char *need[2] = {
		strcmp(o.transport, "auto") ? o.transport : NULL,
		!strcmp(o.mem, "gpu") && strcmp(o.transport, "gpu") ? "gpu"
		                                                    : NULL,
	};
	for (int i = 0; i < 2; i++) {
		struct cb_tp_entry e;
		if (!need[i])
			continue;
		cb_tp_find(need[i], &e);
		if (!e.ops || !e.available) {
			fprintf(stderr,
			        "collbench: %s%s is not available here: "
			        "%s\n",
			        i ? "--mem gpu: transport " : "transport ",
			        need[i], e.why);
			return 77;
		}
	}
	struct cb_cli_job job = {
		.np = o.np,
		.np_set = o.np_set,
		.rendezvous = o.rendezvous,
		.timeout_s = o.timeout_s,
		.before_fork = json_placeholder,
	};
	if (cb_cli_start(&job, rank_main, &o, &rc))
		return usage_error();
	return rc;
}
