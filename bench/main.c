/* SPDX-License-Identifier: MIT */
/*
 * bench/main.c - the collbench command: parse, decide how ranks start
 * (forked here, or one per process under a launcher), run, and turn the
 * outcome into one line and an exit status.
 *
 * Exit status: 0 ok; 1 the run failed (wrong values, a rank failed, a
 * deadline passed); 2 usage; 77 the requested transport is not available.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/options.h"
#include "bench/results_cmd.h"
#include "bench/sweep.h"
#include "bench/topo_cmd.h"
#include "coll/coll.h"
#include "coll/reduce.h"
#include "core/comm.h"
#include "core/log.h"
#include "core/sock.h"

#ifndef CB_BUILD_INFO
#define CB_BUILD_INFO "unknown"
#endif

struct job {
	struct cb_opts *o;
	const char *host; /* rendezvous */
};

static int exit_code(cb_status_t st)
{
	/* Stopped by another rank: exit as that rank does, so a launcher
	 * sees one status for the job. */
	if (st == CB_ERR_ABORTED && cb_fail_status() != CB_ERR_ABORTED &&
	    cb_fail_status() != CB_OK)
		st = cb_fail_status();
	switch (st) {
	case CB_OK:
		return 0;
	case CB_ERR_USAGE:
		return 2;
	case CB_ERR_UNAVAILABLE:
		return 77;
	default:
		return 1;
	}
}

static int rank_main(void *arg, int rank, int listen_fd, const char *port)
{
	struct job *j = arg;
	struct cb_comm *comm = NULL;
	uint64_t wrong = 0;
	cb_status_t st;
	struct cb_comm_cfg cfg = {
		.rank = rank,
		.world = j->o->np,
		.host = j->host,
		.port = port,
		.listen_fd = listen_fd,
		.timeout_s = j->o->timeout_s,
		.transport = j->o->transport,
		.reduce = cb_reduce,
	};

	cb_log_set_rank(rank);
	st = cb_comm_create(&cfg, &comm);
	if (st) {
		if (!cb_fail_quiet())
			cb_log(CB_LOG_ERROR, "%s",
			       cb_fail_msg() ? cb_fail_msg()
			                     : cb_status_str(st));
		return exit_code(st);
	}
	if (rank == 0)
		cb_log(CB_LOG_INFO, "%d ranks on %d hosts, transport %s",
		       comm->world, comm->nhosts, comm->transport);
	st = cb_sweep(comm, j->o, &wrong);
	if (st && cb_comm_fail(comm, st))
		cb_log(CB_LOG_ERROR, "%s",
		       cb_fail_msg() ? cb_fail_msg() : cb_status_str(st));
	if (!st && rank == 0 && wrong)
		cb_log(CB_LOG_ERROR, "%llu wrong values",
		       (unsigned long long)wrong);
	/* Everyone finished: line up once more so no rank tears down what a
	 * slower one still reads. */
	if (!st)
		st = cb_boot_barrier(comm->boot);
	cb_comm_destroy(comm);
	if (st)
		return exit_code(st);
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
	printf("\nbuild:        %s\n", CB_BUILD_INFO);
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
	struct cb_launch_env env;
	struct job j = { .o = &o, .host = "127.0.0.1" };

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
	case CB_CMD_RESULTS:
		return cb_results_cmd(argc - 1, argv + 1);
	default:
		break;
	}
	cb_log_level = CB_LOG_WARN + o.verbose;
	if (cb_env_detect(o.rendezvous, &env))
		return usage_error();

	/* An unavailable transport is known before any rank starts. */
	if (strcmp(o.transport, "auto")) {
		struct cb_tp_entry e;
		cb_tp_find(o.transport, &e);
		if (!e.ops || !e.available) {
			fprintf(stderr,
			        "collbench: transport %s is not available "
			        "here: "
			        "%s\n",
			        o.transport, e.why);
			return 77;
		}
	}

	if (!env.found) {
		if (env.rdv_source && o.rendezvous)
			cb_log(CB_LOG_WARN,
			       "--rendezvous ignored: no launcher set a rank "
			       "(forking %d local ranks)",
			       o.np);
		return cb_launch_local(o.np, o.timeout_s + 5.0, rank_main, &j);
	}

	/* Under a launcher: one rank per process. */
	if (o.np_set && o.np != env.world) {
		cb_fail(CB_ERR_USAGE,
		        "--np %d disagrees with the launcher's world size %d "
		        "(%s)",
		        o.np, env.world, env.source);
		return usage_error();
	}
	o.np = env.world;
	if (env.world == 1 && !env.rdv_source) {
		struct sockaddr_in sa = { .sin_family = AF_INET,
			                  .sin_addr.s_addr =
			                          htonl(INADDR_LOOPBACK) };
		socklen_t sl = sizeof(sa);
		char port[16];
		int fd;
		if (cb_sock_listen((struct sockaddr *)&sa, sl, &fd) ||
		    getsockname(fd, (struct sockaddr *)&sa, &sl)) {
			fprintf(stderr,
			        "collbench: cannot listen on loopback: %s\n",
			        strerror(errno));
			return 1;
		}
		snprintf(port, sizeof(port), "%u", ntohs(sa.sin_port));
		return rank_main(&j, 0, fd, port);
	}
	if (!env.rdv_source) {
		cb_fail(CB_ERR_USAGE,
		        "rank %d of %d (from %s) needs a rendezvous: "
		        "--rendezvous HOST:PORT, COLLBENCH_ROOT or "
		        "MASTER_ADDR/MASTER_PORT (rank 0 serves it)",
		        env.rank, env.world, env.source);
		return usage_error();
	}
	j.host = env.host;
	return rank_main(&j, env.rank, -1, env.port);
}
