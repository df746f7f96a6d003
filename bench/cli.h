/* SPDX-License-Identifier: MIT */
/*
 * bench/cli.h - what every collbench command shares: how a status becomes
 * an exit status and one line on stderr, and how a command's ranks start
 * (forked here, or one per process under a launcher).
 */
#ifndef CB_BENCH_CLI_H
#define CB_BENCH_CLI_H

#include <collbench/status.h>

/*
 * The exit status of @st: 0 ok; 1 the run failed (wrong values, a rank
 * failed, a deadline passed, a regression, a write failed); 2 usage; 77
 * unavailable (transport, hwloc, gnuplot; meson counts it as a skip); 130
 * or 143 when SIGINT or SIGTERM stopped the job (128 + the signal).  A
 * rank stopped by another (CB_ERR_ABORTED) exits as that rank does, so a
 * launcher sees one status for the job.
 */
int cb_cli_exit(cb_status_t st);

/* One line, "collbench[ CMD]: WHY" (the recorded line, else the status's
 * name), then cb_cli_exit(@st).  @cmd NULL: the run command. */
int cb_cli_say(const char *cmd, cb_status_t st);

/* One rank of a command's job. */
struct cb_cli_rank {
	int rank, world;
	const char *host, *port; /* the rendezvous */
	int listen_fd;           /* rank 0 of a local fork, else -1 */
	int relay; /* CB_BOOT_DIRECT, or its place in its host's relay to the
	            * store (the launcher said which local rank it is) */
};

typedef int (*cb_cli_rank_fn)(void *arg, const struct cb_cli_rank *r);

struct cb_cli_job {
	int np, np_set;         /* --np, and whether it was given */
	const char *rendezvous; /* --rendezvous, or NULL */
	double timeout_s;       /* the ranks' deadline (local forks get 5 s
	                           more before the launcher kills them) */
	/* Called once, before local ranks are forked (not under a launcher);
	 * NULL: nothing.  The run command writes its JSON placeholder here,
	 * so the file is this run's even if rank 0 dies at once. */
	void (*before_fork)(void *arg);
};

/*
 * Start @fn for this process's ranks: with no launcher (or a launcher's
 * world of one and no rendezvous), fork @j->np local ranks on a loopback
 * rendezvous; under a launcher, run one rank, the launcher's, which meets
 * the others at the rendezvous.  *@exit_status gets the job's exit status.
 * CB_ERR_USAGE (recorded, nothing started) when the environment does not
 * parse, --np disagrees with the launcher's world, or a launched job has
 * no rendezvous.
 */
cb_status_t cb_cli_start(const struct cb_cli_job *j, cb_cli_rank_fn fn,
                         void *arg, int *exit_status);

#endif
