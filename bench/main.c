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
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "bench/options.h"
#include "bench/results_cmd.h"
#include "bench/sweep.h"
#include "bench/topo_cmd.h"
#include "coll/coll.h"
#include "core/comm.h"
#include "core/log.h"
#include "core/pmix.h"
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

/* 32 hex digits from the kernel's random source. */
static void make_token(char *out, size_t bytes)
{
	unsigned char r[16];

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
		uint64_t t = cb_now_ns() ^ ((uint64_t)getpid() << 40);
		memcpy(r, &t, sizeof(t));
		memcpy(r + 8, &t, sizeof(t));
	}
	for (size_t i = 0; i < sizeof(r) && 2 * i + 2 < bytes; i++)
		snprintf(out + 2 * i, 3, "%02x", r[i]);
}

/*
 * The job token when the ranks meet at a rendezvous given by hand:
 * COLLBENCH_JOB_TOKEN, else the secret Open MPI's mpirun gives every
 * process of a job (OMPI_MCA_orte_precondition_transports, made for PSM's
 * job key), else none (anyone who reaches the port may join; said at -v).
 */
static void launcher_token(void)
{
	const char *t = getenv("COLLBENCH_JOB_TOKEN");

	if (!t || !*t)
		t = getenv("OMPI_MCA_orte_precondition_transports");
	if (t && *t)
		cb_boot_set_job_token(t);
	else
		cb_log(CB_LOG_INFO,
		       "no job token (COLLBENCH_JOB_TOKEN): any process that "
		       "reaches the rendezvous may join");
}

/* Rank 0's IPv4 addresses, comma-separated, loopback left out. */
static void local_addrs(char *out, size_t bytes)
{
	struct ifaddrs *ifa, *i;
	size_t n = 0;

	out[0] = '\0';
	if (getifaddrs(&ifa))
		return;
	for (i = ifa; i; i = i->ifa_next) {
		char ip[INET_ADDRSTRLEN];
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET ||
		    !(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK))
			continue;
		inet_ntop(
		        AF_INET,
		        &((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr,
		        ip, sizeof(ip));
		if (n + strlen(ip) + 2 < bytes)
			n += (size_t)snprintf(out + n, bytes - n, "%s%s",
			                      n ? "," : "", ip);
	}
	freeifaddrs(ifa);
}

/*
 * Under a PMIx launcher with no rendezvous given: rank 0 listens on every
 * address, and its port, addresses, host identity and the job token reach
 * the other ranks through PMIx.  A rank on rank 0's host (same identity,
 * network namespace included) tries loopback first.  Returns -1 when the
 * job goes on (j, listen_fd and port set), else the exit status.
 */
static int pmix_meet(struct job *j, struct cb_launch_env *env, int *listen_fd,
                     char *port, size_t port_bytes)
{
	static char hosts[1100];
	char val[1400], addrs[1024] = "", name[64], key[128], token[80];
	int rank, world;

	if (cb_pmix_open(&rank, &world)) {
		fprintf(stderr,
		        "collbench: %s: give --rendezvous HOST:PORT instead\n",
		        cb_fail_msg());
		return 1;
	}
	if (env->found && (env->rank != rank || env->world != world)) {
		fprintf(stderr,
		        "collbench: PMIx says rank %d of %d, %s says rank %d "
		        "of "
		        "%d\n",
		        rank, world, env->source, env->rank, env->world);
		return 2;
	}
	env->rank = rank;
	env->world = world;
	env->source = "PMIx";
	cb_host_identity(name, sizeof(name), key, sizeof(key));
	*listen_fd = -1;
	if (rank == 0) {
		struct sockaddr_in sa = { .sin_family = AF_INET,
			                  .sin_addr.s_addr =
			                          htonl(INADDR_ANY) };
		socklen_t sl = sizeof(sa);
		const char *t = getenv("COLLBENCH_JOB_TOKEN");
		if (cb_sock_listen((struct sockaddr *)&sa, sl, listen_fd) ||
		    getsockname(*listen_fd, (struct sockaddr *)&sa, &sl)) {
			fprintf(stderr, "collbench: cannot listen: %s\n",
			        strerror(errno));
			return 1;
		}
		if (t && *t)
			snprintf(token, sizeof(token), "%.63s", t);
		else
			make_token(token, sizeof(token));
		local_addrs(addrs, sizeof(addrs));
		snprintf(val, sizeof(val), "%u %s %s %s", ntohs(sa.sin_port),
		         token, key, addrs[0] ? addrs : "-");
	}
	if (cb_pmix_share(rank, "collbench.rendezvous", val, val, sizeof(val),
	                  j->o->timeout_s)) {
		fprintf(stderr, "collbench: rank %d: %s\n", rank,
		        cb_fail_msg());
		return 1;
	}
	char p0[16], k0[128];
	if (sscanf(val, "%15s %79s %127s %1023s", p0, token, k0, addrs) != 4) {
		fprintf(stderr,
		        "collbench: rank %d: rank 0's rendezvous in PMIx does "
		        "not parse\n",
		        rank);
		return 1;
	}
	snprintf(port, port_bytes, "%s", p0);
	snprintf(hosts, sizeof(hosts), "%s%s%s",
	         !strcmp(k0, key) ? "127.0.0.1" : "",
	         !strcmp(k0, key) && strcmp(addrs, "-") ? "," : "",
	         strcmp(addrs, "-") ? addrs : "");
	if (!hosts[0]) {
		fprintf(stderr,
		        "collbench: rank %d: rank 0 has no address another "
		        "host can reach (only loopback)\n",
		        rank);
		return 1;
	}
	j->host = hosts;
	cb_log(CB_LOG_INFO,
	       "rank %d: rank 0's rendezvous from PMIx: %s port %s", rank,
	       hosts, port);
	const char *t = getenv("COLLBENCH_JOB_TOKEN");
	cb_boot_set_job_token(t && *t ? t : token);
	return -1;
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

	if (!env.rdv_source && cb_pmix_launched() && cb_pmix_built &&
	    (!env.found || env.world > 1)) {
		char port[16];
		int fd, rc = pmix_meet(&j, &env, &fd, port, sizeof(port));
		if (rc < 0 && o.np_set && o.np != env.world) {
			cb_fail(CB_ERR_USAGE,
			        "--np %d disagrees with the launcher's world "
			        "size "
			        "%d (PMIx)",
			        o.np, env.world);
			rc = usage_error();
		} else if (rc < 0) {
			o.np = env.world;
			rc = rank_main(&j, env.rank, fd, port);
		}
		cb_pmix_close();
		return rc;
	}
	if (!env.found) {
		const char *t = getenv("COLLBENCH_JOB_TOKEN");
		char token[40];
		/* The forked ranks inherit it; nobody else knows it. */
		if (t && *t) {
			cb_boot_set_job_token(t);
		} else {
			make_token(token, sizeof(token));
			cb_boot_set_job_token(token);
		}
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
	launcher_token();
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
		        "MASTER_ADDR/MASTER_PORT (rank 0 serves it)%s",
		        env.rank, env.world, env.source,
		        cb_pmix_launched() && !cb_pmix_built
		                ? "; a PMIx launcher started it, but this "
		                  "build has no PMIx (libpmix-dev)"
		                : "");
		return usage_error();
	}
	j.host = env.host;
	return rank_main(&j, env.rank, -1, env.port);
}
