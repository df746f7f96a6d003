/* SPDX-License-Identifier: MIT */
/*
 * acceptance/pair.c - acceptance's pairs: the round-robin tournament that
 * schedules them, and what two nodes do together.
 *
 * The tournament (the circle method): n - 1 rounds of disjoint pairs (n
 * rounds when n is odd, each node sitting out once), so every pair meets
 * once and no node is in two pairs at a time: each link is measured
 * without sharing, and the whole matrix costs about n - 1 pair measurements.
 *
 * A pair is driven by its lower node, which times everything; the other
 * serves commands (an 8-byte control message) until told to stop:
 *
 *   LAT  N round trips of 8 bytes (after 10 untimed): p50 and p99 of
 *        half a round trip;
 *   AB   windows of 4 messages of --bw-bytes from the lower node, then a
 *        1-byte acknowledgement: their time from the command;
 *   BA   the same the other way, started by the command itself;
 *   BI   both at once.
 * Each bandwidth pattern runs up to 3 times (the best counts: a shared
 * machine only ever adds time): once with one window, then with as many
 * as take about 50 ms, fewer times once 0.4 s went by (a slow link is
 * slow; repeating it only costs time); a suspect measured again alone, up
 * to 4 times of about 80 ms, or 0.8 s (8 times, 1.6 s, the second time).  The
 * first message of each direction is checked word by word against the pattern
 * its sender wrote, outside the timed region, so a link that corrupts data
 * fails.
 *
 * Every wait has the pair's deadline (--pair-timeout, counted from the last
 * progress); a pair that fails is recorded with its one line, and the peer
 * is disconnected, so nothing it left queued can touch a later pair.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acceptance/accept.h"
#include "core/log.h"
#include "core/worker.h"

#define WINDOW   4
#define LAT_WARM 10
#define SMALL    4096 /* the control and small-message area */

enum { CMD_END, CMD_LAT, CMD_AB, CMD_BA, CMD_BI, CMD_HELLO };

int cb_acc_rounds(int m)
{
	return m < 2 ? 0 : m % 2 ? m : m - 1;
}

int cb_acc_round_pairs(int m, int r, int (*pairs)[2])
{
	int big = m + (m % 2), k = 0; /* a ghost player when m is odd */

	for (int i = 0; i < big / 2; i++) {
		/* player 0 stays; the others turn one place per round */
		int x = i == 0 ? 0 : 1 + (i - 1 + r) % (big - 1);
		int j = big - 1 - i;
		int y = 1 + (j - 1 + r) % (big - 1);
		if (x >= m || y >= m)
			continue;
		pairs[k][0] = x < y ? x : y;
		pairs[k][1] = x < y ? y : x;
		k++;
	}
	return k;
}

static uint64_t pattern_word(int node, size_t i)
{
	return ((uint64_t)node + 1) * 0x9e3779b97f4a7c15ull ^ (uint64_t)i;
}

static void pattern_fill(void *buf, size_t bytes, int node)
{
	uint64_t *w = buf;

	for (size_t i = 0; i < bytes / 8; i++)
		w[i] = pattern_word(node, i);
}

/* Words of @buf that differ from @node's pattern. */
static size_t pattern_check(const void *buf, size_t bytes, int node)
{
	const uint64_t *w = buf;
	size_t bad = 0;

	for (size_t i = 0; i < bytes / 8; i++)
		bad += w[i] != pattern_word(node, i);
	return bad;
}

struct reqs {
	struct cb_req *r;
	int n;
	unsigned done;
};

static cb_status_t reqs_attempt(struct cb_comm *c, struct cb_wait_spec *w)
{
	struct reqs *q = w->arg;
	cb_status_t st;

	(void)c;
	for (int i = 0; i < q->n; i++) {
		if (q->done & (1u << i))
			continue;
		st = cb_comm_test(&q->r[i]);
		if (st == CB_OK) {
			q->done |= 1u << i;
			w->moved = 1;
		} else if (st != CB_AGAIN) {
			return st;
		}
	}
	return q->done == (1u << q->n) - 1 ? CB_OK : CB_AGAIN;
}

/* Wait for @n requests, the pair's deadline counted from the last
 * progress.  CB_ERR_ABORTED (another rank failed the job) is the caller's
 * to pass up; anything else fails only this pair. */
static cb_status_t pair_wait(struct cb_acc_ctx *x, struct cb_req *r, int n,
                             int peer_rank, const char *what)
{
	struct reqs q = { r, n, 0 };
	struct cb_wait_spec w = { .attempt = reqs_attempt,
		                  .arg = &q,
		                  .what = what,
		                  .peer = peer_rank,
		                  .timeout_s = x->o->set.pair_timeout_s };

	return cb_worker_wait(x->c, &w);
}

struct pair {
	struct cb_acc_ctx *x;
	int peer;  /* node */
	int prank; /* its comm rank */
	char *send, *recv, *small;
	/* [0, 2W): a window's receives and sends; 2W: the acknowledgement;
	 * 2W + 1: the served command; 2W + 2: the command sent */
	struct cb_req req[2 * WINDOW + 3];
};

/* Post; "no room now" (CB_AGAIN) is no failure: post again, within the
 * pair's deadline. */
static cb_status_t post_send(struct pair *p, const void *buf, size_t bytes,
                             uint64_t tag, struct cb_req *r)
{
	return cb_worker_isend(p->x->c, p->prank, buf, bytes, p->x->mem, tag, r,
	                       p->x->o->set.pair_timeout_s,
	                       "posting a send to");
}

static cb_status_t post_recv(struct pair *p, void *buf, size_t bytes,
                             uint64_t tag, struct cb_req *r)
{
	return cb_worker_irecv(p->x->c, p->prank, buf, bytes, p->x->mem, tag, r,
	                       p->x->o->set.pair_timeout_s,
	                       "posting a receive from");
}

/* One command to the serving side. */
static cb_status_t command(struct pair *p, uint32_t cmd, uint32_t arg,
                           struct cb_req *r)
{
	uint32_t *m = (uint32_t *)(void *)(p->small + 64);

	m[0] = cmd;
	m[1] = arg;
	return post_send(p, m, 8, 0xacc0, r);
}

static cb_status_t latency(struct pair *p, int lower, struct cb_acc_meas *m)
{
	struct cb_acc_ctx *x = p->x;
	int iters = x->o->set.lat_iters;
	char *out = p->small, *in = p->small + 8;
	cb_status_t st;

	for (int i = 0; i < LAT_WARM + iters; i++) {
		uint64_t t0 = cb_now_ns();
		if (lower) {
			if ((st = post_recv(p, in, 8, 0xacc1, &p->req[0])) ||
			    (st = post_send(p, out, 8, 0xacc1, &p->req[1])) ||
			    (st = pair_wait(x, p->req, 2, p->prank,
			                    "timing latency with")))
				return st;
			if (i >= LAT_WARM)
				x->samples[i - LAT_WARM] =
				        (double)(cb_now_ns() - t0) / 2e3;
		} else if ((st = post_recv(p, in, 8, 0xacc1, &p->req[0])) ||
		           (st = pair_wait(x, p->req, 1, p->prank,
		                           "timing latency with")) ||
		           (st = post_send(p, out, 8, 0xacc1, &p->req[1])) ||
		           (st = pair_wait(x, p->req + 1, 1, p->prank,
		                           "timing latency with"))) {
			return st;
		}
	}
	if (lower) {
		double *s = x->samples;
		for (int i = 1; i < iters; i++) /* insertion: small n */
			for (int j = i; j > 0 && s[j - 1] > s[j]; j--) {
				double t = s[j];
				s[j] = s[j - 1];
				s[j - 1] = t;
			}
		m->lat_p50_us = s[iters / 2];
		m->lat_p99_us = s[(int)(0.99 * (iters - 1) + 0.5)];
	}
	return CB_OK;
}

/* One bandwidth pattern, from the lower node's side: the time of one
 * window, in ns. */
/* Post one window of the pattern (receives and/or sends) and wait for it. */
static cb_status_t window(struct pair *p, int recvs, int sends,
                          const char *what)
{
	size_t b = (size_t)p->x->o->set.bw_bytes;
	int k = 0;
	cb_status_t st;

	for (int i = 0; recvs && i < WINDOW; i++)
		if ((st = post_recv(p, p->recv + i * b, b, 0xacc2,
		                    &p->req[k++])))
			return st;
	for (int i = 0; sends && i < WINDOW; i++)
		if ((st = post_send(p, p->send, b, 0xacc2, &p->req[k++])))
			return st;
	return pair_wait(p->x, p->req, k, p->prank, what);
}

/* One bandwidth pattern of @w windows, from the lower node's side: its
 * time in ns, from the command to the last byte (and, one way, the
 * acknowledgement). */
static cb_status_t pattern_lower(struct pair *p, int cmd, int w, uint64_t *ns)
{
	struct cb_acc_ctx *x = p->x;
	struct cb_req *ack = &p->req[2 * WINDOW], *cr = &p->req[2 * WINDOW + 2];
	int sends = cmd != CMD_BA, recvs = cmd != CMD_AB;
	cb_status_t st;
	const char *what = cmd == CMD_BI ? "measuring bandwidth both ways with"
	                                 : "measuring bandwidth with";

	if (cmd == CMD_AB && (st = post_recv(p, p->small + 16, 1, 0xacc3, ack)))
		return st;
	uint64_t t0 = cb_now_ns();
	if ((st = command(p, (uint32_t)cmd, (uint32_t)w, cr)))
		return st;
	for (int i = 0; i < w; i++)
		if ((st = window(p, recvs, sends, what)))
			return st;
	if ((st = pair_wait(x, cr, 1, p->prank, what)) ||
	    (cmd == CMD_AB && (st = pair_wait(x, ack, 1, p->prank, what))))
		return st;
	*ns = cb_now_ns() - t0;
	return CB_OK;
}

/* The serving side of one bandwidth pattern of @w windows. */
static cb_status_t pattern_upper(struct pair *p, int cmd, int w)
{
	const char *what = "measuring bandwidth with";
	cb_status_t st;

	for (int i = 0; i < w; i++)
		if ((st = window(p, cmd != CMD_BA, cmd != CMD_AB, what)))
			return st;
	if (cmd == CMD_AB &&
	    ((st = post_send(p, p->small + 16, 1, 0xacc3, &p->req[0])) ||
	     (st = pair_wait(p->x, p->req, 1, p->prank, what))))
		return st;
	return CB_OK;
}

static cb_status_t check_data(struct pair *p, int from_node)
{
	size_t b = (size_t)p->x->o->set.bw_bytes;
	size_t bad = pattern_check(p->recv, b, from_node);

	if (bad)
		return cb_fail(
		        CB_ERR_PROTO,
		        "%zu of %zu words from rank %d (host %s) arrived "
		        "wrong: the link corrupts data",
		        bad, b / 8, p->prank,
		        cb_comm_host_name(p->x->c, p->prank));
	return CB_OK;
}

static cb_status_t drive(struct pair *p, struct cb_acc_meas *m)
{
	struct cb_acc_ctx *x = p->x;
	double bytes = (double)x->o->set.bw_bytes * WINDOW;
	double *out[] = { NULL, NULL, &m->bw_ab_gbps, &m->bw_ba_gbps,
		          &m->bibw_gbps };
	cb_status_t st;

	if ((st = command(p, CMD_LAT, 0, &p->req[0])) ||
	    (st = pair_wait(x, p->req, 1, p->prank, "timing latency with")) ||
	    (st = latency(p, 1, m)))
		return st;
	for (int cmd = CMD_AB; cmd <= CMD_BI; cmd++) {
		/* The first repetition is one window; the next ones as many
		 * as fill about 50 ms (80 ms for a suspect measured alone),
		 * so a fast link is timed over enough bytes and a slow one is
		 * not waited for needlessly. */
		int effort = x->alone == CB_ACC_ALONE_SUSPECT   ? 1
		             : x->alone == CB_ACC_ALONE_CONFIRM ? 2
		                                                : 0;
		double best = 0, target = effort ? 0.08 : 0.05;
		int reps = effort == 2 ? 8 : effort ? 4 : 3, w = 1;
		uint64_t spent = 0,
		         budget = effort == 2 ? 1600000000ull
		                  : effort    ? 800000000ull
		                              : 400000000ull,
		         ns;
		for (int rep = 0; rep < reps && spent < budget; rep++) {
			if ((st = pattern_lower(p, cmd, w, &ns)))
				return st;
			spent += ns;
			double gbps = bytes * w * (cmd == CMD_BI ? 2 : 1) /
			              (double)(ns ? ns : 1);
			if (gbps > best)
				best = gbps;
			if (cmd == CMD_BA && rep == 0 &&
			    (st = check_data(p, p->peer)))
				return st;
			if (rep == 0) {
				double per = (double)ns / 1e9;
				w = (int)ceil(target / (per > 0 ? per : 1e-9));
				w = w < 1 ? 1 : w > 64 ? 64 : w;
			}
		}
		*out[cmd] = best;
	}
	if ((st = command(p, CMD_END, 0, &p->req[0])))
		return st;
	return pair_wait(x, p->req, 1, p->prank, "finishing with");
}

static cb_status_t serve(struct pair *p)
{
	struct cb_acc_ctx *x = p->x;
	uint32_t *m = (uint32_t *)(void *)(p->small + 128);
	int first_ab = 1;
	cb_status_t st;

	for (;;) {
		if ((st = post_recv(p, m, 8, 0xacc0,
		                    &p->req[2 * WINDOW + 1])) ||
		    (st = pair_wait(x, &p->req[2 * WINDOW + 1], 1, p->prank,
		                    "waiting for the next measurement from")))
			return st;
		switch (m[0]) {
		case CMD_END:
			return CB_OK;
		case CMD_LAT:
			st = latency(p, 0, NULL);
			break;
		case CMD_AB:
		case CMD_BA:
		case CMD_BI:
			st = pattern_upper(p, (int)m[0],
			                   m[1] >= 1 && m[1] <= 64 ? (int)m[1]
			                                           : 1);
			if (!st && m[0] == CMD_AB && first_ab) {
				first_ab = 0;
				st = check_data(p, p->peer);
			}
			break;
		default:
			st = cb_fail(
			        CB_ERR_PROTO,
			        "rank %d (host %s) sent an unknown command %u",
			        p->prank, cb_comm_host_name(x->c, p->prank),
			        m[0]);
		}
		if (st)
			return st;
	}
}

static void pair_init(struct pair *p, struct cb_acc_ctx *x, int peer)
{
	size_t b = (size_t)x->o->set.bw_bytes;

	memset(p, 0, sizeof(*p));
	p->x = x;
	p->peer = peer;
	p->prank = x->a->nodes[peer].rank;
	p->send = x->buf;
	p->recv = (char *)x->buf + b;
	p->small = (char *)x->buf + b * (WINDOW + 1);
}

/* Record a pair's failure; an abort of the whole job is passed up. */
static cb_status_t pair_failed(struct pair *p, cb_status_t st,
                               struct cb_acc_meas *m)
{
	m->ok = 0;
	snprintf(m->error, sizeof(m->error), "%s",
	         cb_fail_msg() ? cb_fail_msg() : cb_status_str(st));
	if (st == CB_ERR_ABORTED)
		return st;
	cb_log(CB_LOG_INFO, "acceptance: %s", m->error);
	cb_fail_clear();
	cb_comm_disconnect(p->x->c, p->prank);
	return CB_OK;
}

cb_status_t cb_acc_pair_connect(struct cb_acc_ctx *x, int peer,
                                struct cb_acc_meas *m)
{
	struct pair p;
	uint64_t t0 = cb_now_ns();
	cb_status_t st;

	pair_init(&p, x, peer);
	m->ok = 0;
	cb_fail_clear();
	st = x->again ? cb_comm_reconnect(x->c, p.prank,
	                                  x->o->set.pair_timeout_s)
	              : cb_comm_connect(x->c, &p.prank, 1,
	                                x->o->set.pair_timeout_s);
	if (st)
		return pair_failed(&p, st, m);
	m->connect_ms = (double)(cb_now_ns() - t0) / 1e6;
	/* A small message both ways, checked. */
	pattern_fill(p.small, 64, x->me);
	memset(p.small + 256, 0, 64);
	if ((st = post_recv(&p, p.small + 256, 64, 0xacc4, &p.req[0])) ||
	    (st = post_send(&p, p.small, 64, 0xacc4, &p.req[1])) ||
	    (st = pair_wait(x, p.req, 2, p.prank, "exchanging a message with")))
		goto fail;
	if (pattern_check(p.small + 256, 64, peer)) {
		st = cb_fail(CB_ERR_PROTO,
		             "a message from rank %d (host %s) arrived wrong",
		             p.prank, cb_comm_host_name(x->c, p.prank));
		goto fail;
	}
	m->ok = 1;
	return CB_OK;
fail:
	return pair_failed(&p, st, m);
}

cb_status_t cb_acc_pair_measure(struct cb_acc_ctx *x, int peer,
                                struct cb_acc_meas *m)
{
	struct pair p;
	cb_status_t st;

	pair_init(&p, x, peer);
	cb_fail_clear();
	if (!cb_comm_connected(x->c, p.prank)) {
		/* The connectivity stage reached it; a re-measure may come
		 * after a failure in between. */
		st = cb_comm_connect(x->c, &p.prank, 1,
		                     x->o->set.pair_timeout_s);
		if (st)
			return pair_failed(&p, st, m);
	}
	pattern_fill(p.send, (size_t)x->o->set.bw_bytes, x->me);
	st = x->me < peer ? drive(&p, m) : serve(&p);
	m->ok = st == CB_OK;
	return st ? pair_failed(&p, st, m) : CB_OK;
}
