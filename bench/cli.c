/* SPDX-License-Identifier: MIT */
/*
 * bench/cli.c - the exit status of every command, and the one decision of
 * how a command's ranks start (see bench/cli.h).
 */
#include "bench/cli.h"

#include <stdio.h>

#include "core/comm.h"
#include "core/log.h"

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

cb_status_t cb_cli_start(const struct cb_cli_job *j, cb_cli_rank_fn fn,
                         void *arg, int *exit_status)
{
	struct cb_launch_env env;
	cb_status_t st;

	if ((st = cb_env_detect(j->rendezvous, &env)))
		return st;
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
		local.fn = fn;
		local.arg = arg;
		local.world = env.found ? 1 : j->np;
		*exit_status = cb_launch_local(local.world, j->timeout_s + 5.0,
		                               local_rank, NULL);
		return CB_OK;
	}
	if (!env.rdv_source)
		return cb_fail(CB_ERR_USAGE,
		               "rank %d of %d (from %s) needs a rendezvous: "
		               "--rendezvous HOST:PORT, COLLBENCH_ROOT or "
		               "MASTER_ADDR/MASTER_PORT (rank 0 serves it)",
		               env.rank, env.world, env.source);
	struct cb_cli_rank r = {
		.rank = env.rank,
		.world = env.world,
		.host = env.host,
		.port = env.port,
		.listen_fd = -1,
	};
	*exit_status = fn(arg, &r);
	return CB_OK;
}
