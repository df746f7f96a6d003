/* SPDX-License-Identifier: MIT */
/*
 * core/launch.c - the embedded launcher: `collbench --np N` forks N ranks on
 * this host.  They meet at a rendezvous on a loopback port that the parent
 * binds before forking (so there is no race and no port to choose); rank 0
 * inherits the listener and serves the store, exactly as under mpirun.
 *
 * The parent only waits: ranks find failures themselves (the store tells them
 * when one dies).  It kills what is left @grace_s after the first failure,
 * or after the first rank that finished, so even a rank stuck in a way no
 * deadline covers (stopped after the last line-up) cannot hang the job.
 *
 * SIGINT or SIGTERM to the parent (kill, or ^C, which reaches every rank
 * too) is passed on to every rank, which stops as on a failure: rank 0
 * writes the results so far.  The parent then exits 128 + the signal.  A
 * second signal kills the ranks at once.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/comm.h"
#include "core/log.h"
#include "core/sock.h"

/* In an AddressSanitizer build: LeakSanitizer's check.  A rank ends with
 * _exit, which skips the check LeakSanitizer makes at exit, so it is made
 * here (a leak ends the rank with ASan's exit code); NULL in other builds. */
extern void __lsan_do_leak_check(void) __attribute__((weak));

/* The local job as the launcher sees it. */
struct launch {
	pid_t *pids; /* [np]; -1 once reaped */
	int np, running, code, failed, we_killed;
	int done_rank;    /* the first rank that ended with status 0 */
	int signals, sig; /* signals seen; the one passed on, or 0 */
	uint64_t kill_at; /* kill what still runs then (0: no deadline) */
	double grace_s;
};

static void launch_grace(struct launch *L)
{
	L->kill_at = cb_now_ns() + (uint64_t)(L->grace_s * 1e9);
}

/* Fork the ranks; a failed fork kills those started and ends the job. */
static void launch_fork(struct launch *L, int listen_fd, const char *port,
                        int (*rank_main)(void *arg, int rank, int listen_fd,
                                         const char *port),
                        void *arg)
{
	pid_t parent = getpid();

	fflush(stdout);
	fflush(stderr);
	for (int r = 0; r < L->np; r++) {
		pid_t pid = fork();
		if (pid == 0) {
			/* Ranks do not outlive the launcher (killed with ^C
			 * or by a test harness). */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent)
				_exit(1);
			free(L->pids);
			if (r != 0) {
				close(listen_fd);
				listen_fd = -1;
			}
			int rc = rank_main(arg, r, listen_fd, port);
			fflush(stdout);
			fflush(stderr);
			if (__lsan_do_leak_check)
				__lsan_do_leak_check();
			_exit(rc);
		}
		if (pid < 0) {
			cb_log(CB_LOG_ERROR, "cannot fork rank %d: %s", r,
			       strerror(errno));
			/* The ranks already started will time out on the
			 * missing one; stop them now instead. */
			for (int k = 0; k < r; k++)
				kill(L->pids[k], SIGKILL);
			L->np = r;
			L->code = 1;
			L->failed = 1;
			L->kill_at = cb_now_ns();
			return;
		}
		L->pids[r] = pid;
		L->running++;
	}
}

/* A signal to the launcher: the first is passed on (then the ranks get the
 * grace period, as after a failure); the next kills. */
static void launch_signal(struct launch *L)
{
	int now_sig = cb_status_signal(cb_interrupted());

	for (int r = 0; r < L->np; r++)
		if (L->pids[r] > 0)
			kill(L->pids[r], L->sig ? SIGKILL : now_sig);
	if (L->sig)
		L->we_killed = 1;
	else if (!L->kill_at)
		launch_grace(L);
	L->sig = now_sig;
	L->signals = cb_signals_count();
}

/* Past the grace period: kill what still runs. */
static void launch_overdue(struct launch *L)
{
	for (int r = 0; r < L->np; r++) {
		if (L->pids[r] <= 0)
			continue;
		if (!L->failed && !L->sig)
			cb_log(CB_LOG_ERROR,
			       "rank %d (pid %d) had not ended %.0f s after "
			       "rank %d finished (stopped or stuck): killed",
			       r, (int)L->pids[r], L->grace_s, L->done_rank);
		kill(L->pids[r], SIGKILL);
	}
	L->kill_at = 0;
	L->we_killed = 1;
}

/* Rank @pid ended with @status. */
static void launch_reaped(struct launch *L, pid_t pid, int status)
{
	int r = 0, rc;

	while (r < L->np && L->pids[r] != pid)
		r++;
	if (r == L->np)
		return;
	L->pids[r] = -1;
	L->running--;
	if (WIFSIGNALED(status)) {
		if (!L->we_killed)
			cb_log(CB_LOG_ERROR,
			       "rank %d (pid %d) was killed by signal %d (%s)",
			       r, (int)pid, WTERMSIG(status),
			       strsignal(WTERMSIG(status)));
		rc = 1;
	} else {
		rc = WEXITSTATUS(status);
	}
	if (rc == 0 && L->done_rank < 0) {
		/* The others end right after a rank that finished (the last
		 * line-up is behind it); one that does not is stopped or
		 * stuck where no deadline of its own reaches it. */
		L->done_rank = r;
		if (!L->kill_at)
			launch_grace(L);
	}
	if (rc != 0) {
		if (!L->failed) {
			L->code = rc;
			L->failed = 1;
			launch_grace(L);
		} else if (L->code != rc) {
			L->code = 1;
		}
	}
}

int cb_launch_local(int np, double grace_s,
                    int (*rank_main)(void *arg, int rank, int listen_fd,
                                     const char *port),
                    void *arg)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
		                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	struct launch L = { .pids = calloc((size_t)np, sizeof(pid_t)),
		            .np = np,
		            .done_rank = -1,
		            .grace_s = grace_s };
	int listen_fd;
	char port[16];

	if (!L.pids) {
		cb_log(CB_LOG_ERROR, "out of memory");
		return 1;
	}
	if (cb_sock_listen((struct sockaddr *)&sa, sl, &listen_fd) ||
	    getsockname(listen_fd, (struct sockaddr *)&sa, &sl)) {
		cb_log(CB_LOG_ERROR, "cannot listen on loopback: %s",
		       strerror(errno));
		free(L.pids);
		return 1;
	}
	snprintf(port, sizeof(port), "%u", ntohs(sa.sin_port));
	launch_fork(&L, listen_fd, port, rank_main, arg);
	close(listen_fd);

	L.signals = cb_signals_count();
	while (L.running > 0) {
		int status;
		pid_t pid = waitpid(-1, &status, WNOHANG);

		if (cb_signals_count() != L.signals)
			launch_signal(&L);
		if (pid == 0) {
			if (L.kill_at && cb_now_ns() > L.kill_at)
				launch_overdue(&L);
			usleep(2000);
			continue;
		}
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		launch_reaped(&L, pid, status);
	}
	free(L.pids);
	return L.sig ? 128 + L.sig : L.code;
}
