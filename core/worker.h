/* SPDX-License-Identifier: MIT */
/*
 * core/worker.h - the one wait.  The communicator is the worker (as a
 * ucp_worker or a uv_loop_t): it owns the open transports and their
 * progress, and every wait outside a collective's own schedule goes through
 * cb_worker_wait, so each such wait has the same deadline, sees ^C and
 * another rank's abort the same way, posts again when a transport has no
 * room, and names the step and the peer when it gives up.
 */
#ifndef CB_CORE_WORKER_H
#define CB_CORE_WORKER_H

#include "core/comm.h"

struct cb_wait_spec {
	/*
	 * What is waited for: post the operation, test the request, test the
	 * handshakes.  CB_AGAIN: not yet (no room to post, not complete):
	 * progress and call again; anything else ends the wait with that
	 * status.  It may set @moved (something completed: the deadline counts
	 * again from now) and @peer (whom it waits on now).
	 */
	cb_status_t (*attempt)(struct cb_comm *c, struct cb_wait_spec *w);
	void *arg;
	/* For the line a timeout prints: "timed out after T s WHAT rank PEER
	 * (host H)[ over OVER]", e.g. "connecting to", "over" "tcp". */
	const char *what;
	const char *over; /* a transport's name, or NULL */
	int peer;         /* the rank waited on, -1: nobody in particular */
	/* The deadline: @timeout_s (<= 0: the job's --timeout) without
	 * progress; with @from_start, since the wait began, progress or not. */
	double timeout_s;
	int from_start;
	int pause_us; /* sleep between passes: for waits on the kernel's
	               * pace (connection handshakes), 0: spin */
	int moved;    /* set by @attempt, cleared by the wait */
	/* At the deadline, before the line is written: may set @peer, @what,
	 * @over and @detail to say what is stuck (a schedule's step); NULL:
	 * they stand as they are. */
	void (*stuck)(struct cb_comm *c, struct cb_wait_spec *w);
	/* After the peer: "to send tree allreduce segment 2 round 1"; or
	 * NULL.  The line: "timed out after T s WHAT rank PEER (host H)
	 * [DETAIL][ over OVER]", or without a peer "... WHAT[ DETAIL]". */
	const char *detail;
};

/*
 * Call @w->attempt until it says anything but CB_AGAIN, progressing every
 * transport between calls (cb_comm_progress: a transport's error, and every
 * few milliseconds another rank's abort through the store).  Ends early,
 * the status recorded with one line: on SIGINT or SIGTERM (looked at on
 * every pass, CB_ERR_INTERRUPTED or CB_ERR_TERMINATED); at the deadline
 * (CB_ERR_TIMEOUT, naming the step and the peer, which the job then learns
 * stopped: cb_comm.stalled_on).  Outside timed regions it may sleep
 * (@pause_us); inside, it allocates nothing and logs nothing.
 */
cb_status_t cb_worker_wait(struct cb_comm *c, struct cb_wait_spec *w);

/* Post a send to @peer, or a receive from it, posting again while its
 * transport has no room (CB_AGAIN), under cb_worker_wait's deadline: the
 * job's, or @timeout_s > 0, without progress.  @what names the step in the
 * timeout line ("ps-async: posting a send to"). */
cb_status_t cb_worker_isend(struct cb_comm *c, int peer, const void *buf,
                            size_t bytes, const struct cb_mem *m, uint64_t tag,
                            struct cb_req *req, double timeout_s,
                            const char *what);
cb_status_t cb_worker_irecv(struct cb_comm *c, int peer, void *buf, size_t cap,
                            const struct cb_mem *m, uint64_t tag,
                            struct cb_req *req, double timeout_s,
                            const char *what);

#endif
