/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_worker.c - the one wait (core/worker.c) against a made-up
 * transport whose isend says "no room" (CB_AGAIN) as long as a test wants:
 * a post is posted again until it goes, not failed (acceptance counted
 * CB_AGAIN as a bad pair); a peer that never makes room ends the post at
 * the deadline, naming the step and the peer (ps-async retried forever);
 * progress keeps an idle deadline from firing, not one counted from the
 * start (connecting); a transport's error passes through; SIGINT ends a
 * wait at once (the connect wait ignored it); cb_comm_wait is the same wait
 * (it had a loop of its own, which named nobody and saw ^C only at the
 * store's check).  No store: the communicator
 * is made by hand, and its abort check never comes due.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/comm.h"
#include "core/log.h"
#include "core/worker.h"

static int again_left; /* isend says CB_AGAIN this many more times */
static int isends, progresses;
static cb_status_t isend_error = CB_OK;

static cb_status_t fake_isend(struct cb_tp_ep *ep, const void *buf,
                              size_t bytes, const struct cb_tp_mem *mem,
                              uint64_t tag, struct cb_tp_req *req)
{
	(void)ep, (void)buf, (void)bytes, (void)mem, (void)tag, (void)req;
	isends++;
	if (isend_error)
		return isend_error;
	if (again_left > 0) {
		again_left--;
		return CB_AGAIN;
	}
	return CB_OK;
}

static cb_status_t fake_test(struct cb_tp_ep *ep, struct cb_tp_req *req)
{
	(void)ep, (void)req;
	return CB_AGAIN; /* never completes */
}

static cb_status_t fake_progress(struct cb_tp_ctx *ctx)
{
	(void)ctx;
	progresses++;
	return CB_AGAIN;
}

static const struct cb_tp_ops fake = {
	.abi = CB_TP_ABI,
	.size = sizeof(struct cb_tp_ops),
	.name = "fake",
	.isend = fake_isend,
	.test = fake_test,
	.progress = fake_progress,
};

static int host_of_rank[2] = { 0, 1 };
static char h0[] = "h0", h1[] = "h1";
static char *hosts[2] = { h0, h1 };
static struct cb_ep eps[2];

static void make(struct cb_comm *c)
{
	memset(c, 0, sizeof(*c));
	c->rank = 0;
	c->world = 2;
	c->nhosts = 2;
	c->host_of_rank = host_of_rank;
	c->hosts = hosts;
	c->timeout_s = 0.2;
	c->stalled_on = -1;
	c->engine = -1;
	c->next_check_ns = UINT64_MAX; /* no store to ask */
	c->tp[0].ops = &fake;
	c->ntp = c->nwire = 1;
	eps[1] =
	        (struct cb_ep){ .ops = &fake, .peer = 1, .state = CB_EP_READY };
	c->eps = eps; /* and c->fail, clean: each wait's line is its own */
}

/* Says CB_AGAIN, reporting progress, until @arg's deadline (ns). */
static cb_status_t busy_until(struct cb_comm *c, struct cb_wait_spec *w)
{
	(void)c;
	w->moved = 1;
	return cb_now_ns() < *(const uint64_t *)w->arg ? CB_AGAIN : CB_OK;
}

static int calls;

static cb_status_t raise_third(struct cb_comm *c, struct cb_wait_spec *w)
{
	(void)c, (void)w;
	if (++calls == 3)
		raise(SIGINT);
	return CB_AGAIN;
}

int main(void)
{
	struct cb_comm c;
	struct cb_req r;
	char buf[8] = "";
	uint64_t t0, until;
	cb_status_t st;

	/* no room four times: posted on the fifth, no failure recorded */
	make(&c);
	again_left = 4;
	isends = progresses = 0;
	st = cb_worker_isend(&c, 1, buf, 8, NULL, 1, &r, 0, "posting to");
	CHECK(st == CB_OK);
	CHECK(isends == 5 && progresses == 4);
	CHECK(cb_fail_rec_msg(&c.fail) == NULL);

	/* never room: the deadline (the job's, 0.2 s), naming step and peer */
	make(&c);
	again_left = 1 << 30;
	t0 = cb_now_ns();
	st = cb_worker_isend(&c, 1, buf, 8, NULL, 1, &r, 0,
	                     "ps-async: posting a send to");
	CHECK(st == CB_ERR_TIMEOUT);
	CHECK(cb_now_ns() - t0 < 5000000000ull);
	CHECK(cb_fail_rec_msg(&c.fail) &&
	      !strcmp(cb_fail_rec_msg(&c.fail),
	              "timed out after 0.2 s ps-async: posting "
	              "a send to rank 1 (host h1)"));
	CHECK(c.stalled_on == 1);

	/* the caller's own deadline beats the job's */
	make(&c);
	c.timeout_s = 60;
	t0 = cb_now_ns();
	st = cb_worker_isend(&c, 1, buf, 8, NULL, 1, &r, 0.1, "posting to");
	CHECK(st == CB_ERR_TIMEOUT && cb_now_ns() - t0 < 5000000000ull);
	CHECK(cb_fail_rec_msg(&c.fail) &&
	      strstr(cb_fail_rec_msg(&c.fail), "after 0.1 s posting to"));

	/* a transport's error ends it as it is */
	make(&c);
	isend_error = CB_ERR_PEER;
	st = cb_worker_isend(&c, 1, buf, 8, NULL, 1, &r, 0, "posting to");
	CHECK(st == CB_ERR_PEER);
	isend_error = CB_OK;

	/* progress for 0.5 s keeps a 0.2 s idle deadline away ... */
	make(&c);
	until = cb_now_ns() + 500000000ull;
	struct cb_wait_spec w = { .attempt = busy_until,
		                  .arg = &until,
		                  .what = "waiting on",
		                  .peer = 1 };
	CHECK(cb_worker_wait(&c, &w) == CB_OK);
	/* ... not one counted from the start, which names the transport */
	make(&c);
	until = cb_now_ns() + 5000000000ull;
	w.from_start = 1;
	w.over = "fake";
	w.what = "connecting to";
	w.pause_us = 20;
	t0 = cb_now_ns();
	CHECK(cb_worker_wait(&c, &w) == CB_ERR_TIMEOUT);
	CHECK(cb_now_ns() - t0 < 2000000000ull);
	CHECK(cb_fail_rec_msg(&c.fail) &&
	      !strcmp(cb_fail_rec_msg(&c.fail),
	              "timed out after 0.2 s connecting to rank "
	              "1 (host h1) over fake"));

	/* a message that never completes: the job's deadline, naming the
	 * peer and its transport, which the job learns stalled */
	make(&c);
	memset(&r, 0, sizeof(r));
	r.ep = &eps[1];
	t0 = cb_now_ns();
	CHECK(cb_comm_wait(&c, &r) == CB_ERR_TIMEOUT);
	CHECK(cb_now_ns() - t0 < 5000000000ull);
	CHECK(cb_fail_rec_msg(&c.fail) &&
	      !strcmp(cb_fail_rec_msg(&c.fail),
	              "timed out after 0.2 s waiting for a message to complete "
	              "with rank 1 (host h1) over fake"));
	CHECK(c.stalled_on == 1);
	if (check_failures)
		fprintf(stderr, "line: %s\n", cb_fail_rec_msg(&c.fail));

	/* ^C: at once, long before a deadline of a minute (last: it stays) */
	make(&c);
	c.timeout_s = 60;
	cb_signals_catch();
	struct cb_wait_spec ws = { .attempt = raise_third,
		                   .what = "waiting on",
		                   .peer = 1,
		                   .from_start = 1 };
	t0 = cb_now_ns();
	CHECK(cb_worker_wait(&c, &ws) == CB_ERR_INTERRUPTED);
	CHECK(calls == 3 && cb_now_ns() - t0 < 1000000000ull);
	CHECK(cb_fail_rec_msg(&c.fail) &&
	      strstr(cb_fail_rec_msg(&c.fail), "SIGINT"));

	/* ... and a message's wait too (the store's check never comes due) */
	make(&c);
	c.timeout_s = 60;
	t0 = cb_now_ns();
	CHECK(cb_comm_wait(&c, &r) == CB_ERR_INTERRUPTED);
	CHECK(cb_now_ns() - t0 < 1000000000ull);

	return check_result("worker");
}
