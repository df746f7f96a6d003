/* SPDX-License-Identifier: MIT */
/*
 * core/worker.c - the one wait (core/worker.h): attempt, progress, look at
 * the signals and the deadline, attempt again.
 */
#include "core/worker.h"

#include <unistd.h>

#include "core/log.h"

/* The deadline of a wait without progress: --timeout counted from the last
 * progress.  Call once per pass with whether anything moved; the clock is
 * read only every 256th pass without progress, as reading it costs a poll.
 * Returns 1 once the deadline has passed. */
struct idle_wait {
	uint32_t idle;
	uint64_t since;
};

static int idle_expired(struct idle_wait *w, int moved, double timeout_s)
{
	if (moved) {
		w->idle = 0;
		return 0;
	}
	if ((++w->idle & 255) != 0)
		return 0;
	uint64_t now = cb_now_ns();
	if (w->idle == 256) {
		w->since = now;
		return 0;
	}
	return now - w->since > (uint64_t)(timeout_s * 1e9);
}

static cb_status_t worker_timeout(struct cb_comm *c, struct cb_wait_spec *w,
                                  double limit_s)
{
	const char *d;

	if (w->stuck)
		w->stuck(c, w);
	d = w->detail ? w->detail : "";
	if (w->peer < 0 || w->peer >= c->world)
		return cb_fail_to(&c->fail, CB_ERR_TIMEOUT,
		                  "timed out after %g s %s%s%s", limit_s,
		                  w->what, *d ? " " : "", d);
	/* the job can then name the rank that stopped */
	c->stalled_on = w->peer;
	return cb_fail_to(&c->fail, CB_ERR_TIMEOUT,
	                  "timed out after %g s %s rank %d (host %s)%s%s%s%s",
	                  limit_s, w->what, w->peer,
	                  cb_comm_host_name(c, w->peer), *d ? " " : "", d,
	                  w->over ? " over " : "", w->over ? w->over : "");
}

cb_status_t cb_worker_wait(struct cb_comm *c, struct cb_wait_spec *w)
{
	double limit_s = w->timeout_s > 0 ? w->timeout_s : c->timeout_s;
	uint64_t start = w->from_start ? cb_now_ns() : 0;
	struct idle_wait idle = { 0 };
	cb_status_t st, pst;
	int expired;

	for (;;) {
		w->moved = 0;
		if ((st = w->attempt(c, w)) != CB_AGAIN)
			return st;
		/* one relaxed load: cheap enough for every pass, and ^C ends
		 * any wait at once, not at the next store check */
		if ((st = cb_interrupted()))
			return cb_fail_to(&c->fail, st, "%s",
			                  cb_status_str(st));
		if ((pst = cb_comm_progress(c)) < 0)
			return pst;
		if (w->from_start)
			expired = (double)(cb_now_ns() - start) > limit_s * 1e9;
		else
			expired = idle_expired(&idle, w->moved || pst == CB_OK,
			                       limit_s);
		if (expired)
			return worker_timeout(c, w, limit_s);
		if (w->pause_us > 0)
			usleep((useconds_t)w->pause_us);
	}
}

struct post {
	int send;
	const void *sbuf;
	void *rbuf;
	size_t bytes;
	const struct cb_mem *m;
	uint64_t tag;
	struct cb_req *req;
};

static cb_status_t post_attempt(struct cb_comm *c, struct cb_wait_spec *w)
{
	const struct post *p = w->arg;

	return p->send ? cb_comm_isend(c, w->peer, p->sbuf, p->bytes, p->m,
	                               p->tag, p->req)
	               : cb_comm_irecv(c, w->peer, p->rbuf, p->bytes, p->m,
	                               p->tag, p->req);
}

static cb_status_t worker_post(struct cb_comm *c, int peer,
                               const struct post *p, double timeout_s,
                               const char *what)
{
	struct cb_wait_spec w = { .attempt = post_attempt,
		                  .arg = (void *)(uintptr_t)p,
		                  .what = what,
		                  .peer = peer,
		                  .timeout_s = timeout_s };

	return cb_worker_wait(c, &w);
}

cb_status_t cb_worker_isend(struct cb_comm *c, int peer, const void *buf,
                            size_t bytes, const struct cb_mem *m, uint64_t tag,
                            struct cb_req *req, double timeout_s,
                            const char *what)
{
	struct post p = { 1, buf, NULL, bytes, m, tag, req };

	return worker_post(c, peer, &p, timeout_s, what);
}

cb_status_t cb_worker_irecv(struct cb_comm *c, int peer, void *buf, size_t cap,
                            const struct cb_mem *m, uint64_t tag,
                            struct cb_req *req, double timeout_s,
                            const char *what)
{
	struct post p = { 0, NULL, buf, cap, m, tag, req };

	return worker_post(c, peer, &p, timeout_s, what);
}

static cb_status_t req_attempt(struct cb_comm *c, struct cb_wait_spec *w)
{
	(void)c;
	return cb_comm_test(w->arg);
}

cb_status_t cb_comm_wait(struct cb_comm *c, struct cb_req *req)
{
	const struct cb_ep *ep = req->kind == CB_REQ_WIRE ? req->ep : NULL;
	struct cb_wait_spec w = {
		.attempt = req_attempt,
		.arg = req,
		.what = "waiting for a copy or a message to complete",
		.peer = -1,
	};

	if (ep && ep->ops && ep->peer != c->rank) {
		w.what = "waiting for a message to complete with";
		w.over = ep->ops->name;
		w.peer = ep->peer;
	}
	return cb_worker_wait(c, &w);
}
