/* SPDX-License-Identifier: MIT */
/*
 * core/comm_conn.c - connecting peers lazily, only those a plan uses.
 *
 * A rank starts with no connection at all: its transports' addresses are in
 * the store (comm.c).  When a plan needs peers, every rank of the plan calls
 * cb_comm_connect() with its own peers, which are symmetric (if A's plan
 * sends to B, B's receives from A):
 *
 *   1. for each new peer: ep_create(), and publish the per-peer blob it
 *      wrote ("tp/<transport>/<me>/<peer>": a verbs QP number) - nothing
 *      here waits, so no order of calls among ranks can deadlock;
 *   2. for each: fetch the peer's address and its blob for us (these wait,
 *      in the store, until the peer reaches its step 1), ep_connect();
 *   3. for a transport with ep_ready (verbs): say "connected" through the
 *      store for each peer, wait for each peer's, then ep_ready() - the
 *      out-of-band barrier RDMA needs before the first message;
 *   4. poll every pending ep_test() and every transport's progress (a
 *      listener accepts there) until all are connected, a handshake fails,
 *      the deadline passes, or another rank aborts the job.
 *
 * So a ring connects two peers per rank, not n - 1, and a job never pays for
 * pairs it does not use.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/comm.h"
#include "core/log.h"
#include "core/worker.h"

cb_status_t cb_comm_not_connected(struct cb_comm *c, int peer)
{
	return cb_fail(CB_ERR_INVALID,
	               "rank %d used rank %d (host %s) before connecting to "
	               "it: the plan did not connect the peers it uses",
	               c->rank, peer, cb_comm_host_name(c, peer));
}

/* A key of a pair's connection: after the first it carries the pair's
 * generation (cb_comm_reconnect), so no rank reads what an earlier try
 * published. */
static void conn_key(char *key, size_t n, const struct cb_ep *e, int from,
                     int to, const char *tail)
{
	if (e->gen)
		snprintf(key, n, "tp/%s/%d/%d%s/g%d", e->ops->name, from, to,
		         tail, e->gen);
	else
		snprintf(key, n, "tp/%s/%d/%d%s", e->ops->name, from, to, tail);
}

/* Steps 1 and 2 for one peer. */
static cb_status_t conn_create(struct cb_comm *c, int p)
{
	struct cb_ep *e = &c->eps[p];
	const struct cb_tp_ops *ops = e->ops;
	uint8_t blob[CB_TP_ADDR_MAX];
	size_t n = 0;
	char key[64];
	cb_status_t st;

	if (e->state != CB_EP_NONE)
		return CB_OK; /* an earlier call got this far */
	st = ops->ep_create(c->tp[e->tpi].ctx, p, &e->ep, blob, &n);
	if (st) {
		e->state = CB_EP_FAILED;
		return st;
	}
	e->state = CB_EP_CREATED;
	if (!(ops->caps & CB_TP_CAP_EP_BLOB))
		return CB_OK;
	if (n > sizeof(blob))
		return cb_fail(CB_ERR_INVALID,
		               "%s wrote a %zu-byte connection blob", ops->name,
		               n);
	conn_key(key, sizeof(key), e, c->rank, p, "");
	return cb_boot_set(c->boot, key, blob, n);
}

static cb_status_t conn_fetch(struct cb_comm *c, const char *key, int p,
                              uint8_t *val, size_t *n)
{
	struct cb_fail_rec why;
	cb_status_t st;

	cb_fail_open(&why);
	st = cb_boot_get(c->boot, key, val, CB_TP_ADDR_MAX, n);
	/* The store's line names a key; a timeout's says what it means. */
	cb_fail_close(&why, st != CB_ERR_TIMEOUT);
	if (st == CB_ERR_TIMEOUT) {
		c->stalled_on = p;
		st = cb_fail(CB_ERR_TIMEOUT,
		             "timed out after %g s waiting for rank %d (host "
		             "%s) to connect over %s: it did not reach the "
		             "same plan",
		             c->timeout_s, p, cb_comm_host_name(c, p),
		             c->eps[p].ops->name);
	}
	return st;
}

static cb_status_t conn_start(struct cb_comm *c, int p)
{
	struct cb_ep *e = &c->eps[p];
	uint8_t addr[CB_TP_ADDR_MAX], blob[CB_TP_ADDR_MAX];
	size_t an = 0, bn = 0;
	char key[64];
	cb_status_t st;

	if (e->state != CB_EP_CREATED)
		return CB_OK;
	snprintf(key, sizeof(key), "tp/%s/%d", e->ops->name, p);
	if ((st = conn_fetch(c, key, p, addr, &an)))
		return st;
	if (e->ops->caps & CB_TP_CAP_EP_BLOB) {
		conn_key(key, sizeof(key), e, p, c->rank, "");
		if ((st = conn_fetch(c, key, p, blob, &bn)))
			return st;
	}
	st = e->ops->ep_connect(e->ep, addr, an,
	                        e->ops->caps & CB_TP_CAP_EP_BLOB ? blob : NULL,
	                        bn);
	e->state = st ? CB_EP_FAILED : CB_EP_CONNECTING;
	return st;
}

/* Step 3 for one peer: @phase 0 publishes, 1 waits and calls ep_ready. */
static cb_status_t conn_ready(struct cb_comm *c, int p, int phase)
{
	struct cb_ep *e = &c->eps[p];
	uint8_t v[CB_TP_ADDR_MAX];
	char key[64];
	size_t n;
	cb_status_t st;

	if (e->state != CB_EP_CONNECTING || !CB_TP_HAS(e->ops, ep_ready))
		return CB_OK;
	if (phase == 0) {
		conn_key(key, sizeof(key), e, c->rank, p, "/up");
		return cb_boot_set(c->boot, key, "1", 1);
	}
	conn_key(key, sizeof(key), e, p, c->rank, "/up");
	if ((st = conn_fetch(c, key, p, v, &n)))
		return st;
	if ((st = e->ops->ep_ready(e->ep)))
		e->state = CB_EP_FAILED;
	return st;
}

struct conn_todo {
	const int *todo;
	int k;
};

/* Every pending handshake, tested once; the first still pending is the one
 * the wait names. */
static cb_status_t conn_attempt(struct cb_comm *c, struct cb_wait_spec *w)
{
	const struct conn_todo *t = w->arg;
	cb_status_t st;

	w->peer = -1;
	for (int i = 0; i < t->k; i++) {
		struct cb_ep *e = &c->eps[t->todo[i]];
		if (e->state != CB_EP_CONNECTING)
			continue;
		st = e->ops->ep_test(e->ep);
		if (st == CB_OK) {
			e->state = CB_EP_READY;
			c->connects++;
			w->moved = 1;
			continue;
		}
		if (st != CB_AGAIN) {
			e->state = CB_EP_FAILED;
			return st;
		}
		if (w->peer < 0) {
			w->peer = t->todo[i];
			w->over = e->ops->name;
		}
	}
	return w->peer < 0 ? CB_OK : CB_AGAIN;
}

/* Until every handshake is done (a listener accepts in the transports'
 * progress), one fails, the deadline passes since the start, ^C, or
 * another rank aborts the job. */
static cb_status_t conn_wait(struct cb_comm *c, const int *todo, int k,
                             double timeout_s)
{
	struct conn_todo t = { todo, k };
	struct cb_wait_spec w = { .attempt = conn_attempt,
		                  .arg = &t,
		                  .what = "connecting to",
		                  .peer = -1,
		                  .timeout_s = timeout_s,
		                  .from_start = 1,
		                  .pause_us = c->oversubscribed ? 200 : 20 };
	cb_status_t st = cb_worker_wait(c, &w);

	if (st == CB_ERR_TIMEOUT && w.peer >= 0)
		c->eps[w.peer].state = CB_EP_FAILED;
	return st;
}

cb_status_t cb_comm_connect(struct cb_comm *c, const int *peers, int n,
                            double timeout_s)
{
	int *todo = NULL, k = 0;
	cb_status_t st = CB_OK;

	for (int i = 0; i < n; i++) {
		int p = peers[i];
		if (p < 0 || p >= c->world)
			return cb_fail(CB_ERR_INVALID,
			               "connect: rank %d of %d does not exist",
			               p, c->world);
		if (p == c->rank || c->eps[p].state == CB_EP_READY)
			continue;
		if (c->eps[p].state == CB_EP_FAILED)
			return cb_fail(CB_ERR_PEER,
			               "rank %d (host %s) could not be reached "
			               "over %s earlier in this run",
			               p, cb_comm_host_name(c, p),
			               c->eps[p].ops->name);
		if (!todo && !(todo = malloc((size_t)n * sizeof(int))))
			return cb_fail(CB_ERR_NOMEM, "out of memory");
		int dup = 0;
		for (int j = 0; j < k && !dup; j++)
			dup = todo[j] == p;
		if (!dup)
			todo[k++] = p;
	}
	if (timeout_s <= 0)
		timeout_s = c->timeout_s;
	for (int i = 0; i < k && !st; i++)
		st = conn_create(c, todo[i]);
	for (int i = 0; i < k && !st; i++)
		st = conn_start(c, todo[i]);
	for (int phase = 0; phase < 2; phase++)
		for (int i = 0; i < k && !st; i++)
			st = conn_ready(c, todo[i], phase);
	if (!st)
		st = conn_wait(c, todo, k, timeout_s);
	free(todo);
	return st;
}

cb_status_t cb_comm_reconnect(struct cb_comm *c, int peer, double timeout_s)
{
	struct cb_ep *e;

	if (peer < 0 || peer >= c->world || peer == c->rank)
		return cb_comm_connect(c, &peer, 1, timeout_s);
	e = &c->eps[peer];
	if (!e->ops || !(e->ops->caps & CB_TP_CAP_RECONNECT))
		return cb_fail(CB_ERR_UNSUPPORTED,
		               "%s cannot connect rank %d (host %s) again",
		               e->ops ? e->ops->name : "its transport", peer,
		               cb_comm_host_name(c, peer));
	if (e->ep)
		e->ops->ep_close(e->ep);
	e->ep = NULL;
	e->state = CB_EP_NONE;
	e->gen++;
	return cb_comm_connect(c, &peer, 1, timeout_s);
}

void cb_comm_disconnect(struct cb_comm *c, int peer)
{
	struct cb_ep *e;

	if (peer < 0 || peer >= c->world || peer == c->rank)
		return;
	e = &c->eps[peer];
	if (e->ops && e->ep)
		e->ops->ep_close(e->ep);
	e->ep = NULL;
	e->state = CB_EP_FAILED;
}
