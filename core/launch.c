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

int cb_launch_local(int np, double grace_s,
                    int (*rank_main)(void *arg, int rank, int listen_fd,
                                     const char *port),
                    void *arg)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
		                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	pid_t *pids = calloc((size_t)np, sizeof(*pids));
	int listen_fd, running = 0, code = 0, failed = 0, we_killed = 0;
	int done_rank = -1; /* the first rank that ended with status 0 */
	uint64_t kill_at = 0;
	char port[16];
	pid_t parent = getpid();

	if (!pids) {
		cb_log(CB_LOG_ERROR, "out of memory");
		return 1;
	}
	if (cb_sock_listen((struct sockaddr *)&sa, sl, &listen_fd) ||
	    getsockname(listen_fd, (struct sockaddr *)&sa, &sl)) {
		cb_log(CB_LOG_ERROR, "cannot listen on loopback: %s",
		       strerror(errno));
		free(pids);
		return 1;
	}
	snprintf(port, sizeof(port), "%u", ntohs(sa.sin_port));
	fflush(stdout);
	fflush(stderr);
	for (int r = 0; r < np; r++) {
		pid_t pid = fork();
		if (pid == 0) {
			/* Ranks do not outlive the launcher (killed with ^C
			 * or by a test harness). */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent)
				_exit(1);
			free(pids);
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
				kill(pids[k], SIGKILL);
			np = r;
			code = 1;
			failed = 1;
			kill_at = cb_now_ns();
			break;
		}
		pids[r] = pid;
		running++;
	}
	close(listen_fd);

	int signals = cb_signals_count(), sig = 0;

	while (running > 0) {
		int status;
		pid_t pid = waitpid(-1, &status, WNOHANG);

		if (cb_signals_count() != signals) {
			/* the first: pass it on and wait as after a failure;
			 * the next: kill */
			int now_sig = cb_status_signal(cb_interrupted());
			for (int r = 0; r < np; r++)
				if (pids[r] > 0)
					kill(pids[r], sig ? SIGKILL : now_sig);
			if (sig)
				we_killed = 1;
			else if (!kill_at)
				kill_at =
				        cb_now_ns() + (uint64_t)(grace_s * 1e9);
			sig = now_sig;
			signals = cb_signals_count();
		}
		if (pid == 0) {
			if (kill_at && cb_now_ns() > kill_at) {
				for (int r = 0; r < np; r++) {
					if (pids[r] <= 0)
						continue;
					if (!failed && !sig)
						cb_log(CB_LOG_ERROR,
						       "rank %d (pid %d) had "
						       "not "
						       "ended %.0f s after "
						       "rank %d "
						       "finished (stopped or "
						       "stuck): killed",
						       r, (int)pids[r], grace_s,
						       done_rank);
					kill(pids[r], SIGKILL);
				}
				kill_at = 0;
				we_killed = 1;
			}
			usleep(2000);
			continue;
		}
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		int r = 0;
		while (r < np && pids[r] != pid)
			r++;
		if (r == np)
			continue;
		pids[r] = -1;
		running--;
		int rc;
		if (WIFSIGNALED(status)) {
			if (!we_killed)
				cb_log(CB_LOG_ERROR,
				       "rank %d (pid %d) was killed by signal "
				       "%d "
				       "(%s)",
				       r, (int)pid, WTERMSIG(status),
				       strsignal(WTERMSIG(status)));
			rc = 1;
		} else {
			rc = WEXITSTATUS(status);
		}
		if (rc == 0 && done_rank < 0) {
			/* The others end right after a rank that finished
			 * (the last line-up is behind it); one that does not
			 * is stopped or stuck where no deadline of its own
			 * reaches it. */
			done_rank = r;
			if (!kill_at)
				kill_at =
				        cb_now_ns() + (uint64_t)(grace_s * 1e9);
		}
		if (rc != 0) {
			if (!failed) {
				code = rc;
				failed = 1;
				kill_at =
				        cb_now_ns() + (uint64_t)(grace_s * 1e9);
			} else if (code != rc) {
				code = 1;
			}
		}
	}
	free(pids);
	return sig ? 128 + sig : code;
}
