/* SPDX-License-Identifier: MIT */
/*
 * bench/cli.c - the exit status of every command, and the one decision of
 * how a command's ranks start (see bench/cli.h): forked here, under a
 * launcher at a rendezvous given by hand, or under a PMIx launcher meeting
 * through PMIx; and where the job token comes from in each case.
 */
#include "bench/cli.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "core/comm.h"
#include "core/log.h"
#include "core/strbuf.h"
#include "core/pmix.h"
#include "core/sock.h"

int cb_cli_exit(cb_status_t st)
{
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
	case CB_ERR_INTERRUPTED:
	case CB_ERR_TERMINATED:
		/* as a shell reports a process the signal ended */
		return 128 + cb_status_signal(st);
	default:
		return 1;
	}
}

int cb_cli_say(const char *cmd, cb_status_t st)
{
	fprintf(stderr, "collbench%s%s: %s\n", cmd ? " " : "", cmd ? cmd : "",
	        cb_fail_msg() ? cb_fail_msg() : cb_status_str(st));
	return cb_cli_exit(st);
}

/* cb_launch_local's children know only their rank: the rest is here. */
static struct {
	cb_cli_rank_fn fn;
	void *arg;
	int world;
} local;

static int local_rank(void *arg, int rank, int listen_fd, const char *port)
{
	struct cb_cli_rank r = {
		.rank = rank,
		.world = local.world,
		.host = "127.0.0.1",
		.port = port,
		.listen_fd = listen_fd,
	};

	(void)arg;
	return local.fn(local.arg, &r);
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
static void launcher_token(const struct cb_launch_env *env)
{
	const char *t = env->job_token ? env->job_token : env->ompi_token;

	if (t)
		cb_boot_set_job_token(t);
	else
		cb_log(CB_LOG_INFO,
		       "no job token (COLLBENCH_JOB_TOKEN): any process that "
		       "reaches the rendezvous may join");
}

/* This host's IPv4 addresses, comma-separated, loopback left out. */
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
			cb_buf_appendf(out, bytes, &n, "%s%s", n ? "," : "",
			               ip);
	}
	freeifaddrs(ifa);
}

/*
 * Under a PMIx launcher with no rendezvous given: rank 0 listens on every
 * address, and its port, addresses, host identity and the job token reach
 * the other ranks through PMIx.  A rank on rank 0's host (same identity,
 * network namespace included) tries loopback first.  Fills @r; PMIx stays
 * open until the caller closes it.
 */
/* Where a launched rank stands in its host's relay to the store. */
static int relay_of(const struct cb_launch_env *env)
{
	if (env->local_rank < 0)
		return CB_BOOT_DIRECT;
	return env->local_rank == 0 ? CB_BOOT_LEADER : CB_BOOT_RELAYED;
}

static cb_status_t pmix_meet(const struct cb_cli_job *j,
                             const struct cb_launch_env *env,
                             struct cb_cli_rank *r)
{
	static char hosts[1100], port[16];
	char val[1400], addrs[1024] = "", name[64], key[128], token[80];
	int rank, world;
	cb_status_t st;

	if ((st = cb_pmix_open(&rank, &world)))
		return st;
	if (env->found && (env->rank != rank || env->world != world))
		return cb_fail(CB_ERR_USAGE,
		               "PMIx says rank %d of %d, %s says rank %d of %d",
		               rank, world, env->source, env->rank, env->world);
	if (j->np_set && j->np != world)
		return cb_fail(CB_ERR_USAGE,
		               "--np %d disagrees with the launcher's world "
		               "size %d (PMIx)",
		               j->np, world);
	cb_host_identity(name, sizeof(name), key, sizeof(key));
	*r = (struct cb_cli_rank){ .rank = rank,
		                   .world = world,
		                   .listen_fd = -1,
		                   .relay = relay_of(env) };
	if (rank == 0) {
		struct sockaddr_in sa = { .sin_family = AF_INET,
			                  .sin_addr.s_addr =
			                          htonl(INADDR_ANY) };
		socklen_t sl = sizeof(sa);
		const char *t = env->job_token;
		if (cb_sock_listen((struct sockaddr *)&sa, sl, &r->listen_fd) ||
		    getsockname(r->listen_fd, (struct sockaddr *)&sa, &sl))
			return cb_fail(CB_ERR_SYS,
			               "cannot listen for the rendezvous: %s",
			               strerror(errno));
		if (t)
			snprintf(token, sizeof(token), "%.63s", t);
		else
			make_token(token, sizeof(token));
		local_addrs(addrs, sizeof(addrs));
		snprintf(val, sizeof(val), "%u %s %s %s", ntohs(sa.sin_port),
		         token, key, addrs[0] ? addrs : "-");
	}
	if ((st = cb_pmix_share(rank, "collbench.rendezvous", val, val,
	                        sizeof(val), j->timeout_s)))
		return st;
	char k0[128];
	if (sscanf(val, "%15s %79s %127s %1023s", port, token, k0, addrs) != 4)
		return cb_fail(CB_ERR_PROTO,
		               "rank 0's rendezvous in PMIx does not parse");
	int same = !strcmp(k0, key), any = strcmp(addrs, "-") != 0;
	snprintf(hosts, sizeof(hosts), "%s%s%s", same ? "127.0.0.1" : "",
	         same && any ? "," : "", any ? addrs : "");
	if (!hosts[0])
		return cb_fail(CB_ERR_UNAVAILABLE,
		               "rank 0 has no address another host can reach "
		               "(only loopback)");
	r->host = hosts;
	r->port = port;
	cb_log(CB_LOG_INFO,
	       "rank %d: rank 0's rendezvous from PMIx: %s port %s", rank,
	       hosts, port);
	cb_boot_set_job_token(env->job_token ? env->job_token : token);
	return CB_OK;
}

cb_status_t cb_cli_start(const struct cb_cli_job *j, cb_cli_rank_fn fn,
                         void *arg, int *exit_status)
{
	struct cb_launch_env env;
	cb_status_t st;

	if ((st = cb_env_detect(j->rendezvous, &env)))
		return st;
	/* From here a SIGINT or SIGTERM ends the job as a failure does, with
	 * the results so far (every wait of a rank looks for it). */
	cb_signals_catch();
	if (!env.rdv_source && cb_pmix_launched() && cb_pmix_built &&
	    (!env.found || env.world > 1)) {
		struct cb_cli_rank r;
		if ((st = pmix_meet(j, &env, &r)) == CB_OK)
			*exit_status = fn(arg, &r);
		cb_pmix_close();
		return st;
	}
	if (env.found && j->np_set && j->np != env.world)
		return cb_fail(CB_ERR_USAGE,
		               "--np %d disagrees with the launcher's world "
		               "size %d (%s)",
		               j->np, env.world, env.source);
	if (!env.found || (env.world == 1 && !env.rdv_source)) {
		if (!env.found && env.rdv_source && j->rendezvous)
			cb_log(CB_LOG_WARN,
			       "--rendezvous ignored: no launcher set a rank "
			       "(forking %d local ranks)",
			       j->np);
		const char *t = env.job_token;
		char token[40];
		/* The forked ranks inherit it; nobody else knows it. */
		if (!t)
			make_token(token, sizeof(token));
		cb_boot_set_job_token(t ? t : token);
		local.fn = fn;
		local.arg = arg;
		local.world = env.found ? 1 : j->np;
		if (j->before_fork)
			j->before_fork(arg);
		*exit_status = cb_launch_local(local.world, j->timeout_s + 5.0,
		                               local_rank, NULL);
		return CB_OK;
	}
	if (!env.rdv_source)
		return cb_fail(
		        CB_ERR_USAGE,
		        "rank %d of %d (from %s) needs a rendezvous: "
		        "--rendezvous HOST:PORT, COLLBENCH_ROOT or "
		        "MASTER_ADDR/MASTER_PORT (rank 0 serves it)%s",
		        env.rank, env.world, env.source,
		        cb_pmix_launched() && !cb_pmix_built
		                ? "; a PMIx launcher started it, but this "
		                  "build has no PMIx (libpmix-dev)"
		                : "");
	launcher_token(&env);
	struct cb_cli_rank r = {
		.rank = env.rank,
		.world = env.world,
		.host = env.host,
		.port = env.port,
		.listen_fd = -1,
		.relay = relay_of(&env),
	};
	*exit_status = fn(arg, &r);
	return CB_OK;
}
