/* SPDX-License-Identifier: MIT */
/*
 * coll/ps_async.c - the asynchronous parameter server (ps-async): workers
 * push their updates and pull the current parameters at their own pace,
 * never waiting for each other; servers apply each update as it arrives.
 * The synchronous ps (coll/ps.c) is one lock-step allreduce per step; here
 * a fast worker runs ahead of a slow one, and a pulled copy may lack the
 * updates other workers have not pushed yet: its staleness.
 *
 * Roles as for ps (--ps-servers K): K > 0, the last K ranks serve and the
 * first W = n - K work; K = 0, every rank works and serves shard r of n.
 * The vector is cut into K shards (sizes differ by at most one element).
 *
 * One call is a session of S steps on every worker (the driver's -n), not
 * one collective: a worker's step is, for each server (starting at its own
 * index, so the first pushes spread): push its update of that shard, and
 * receive the server's reply: per-worker update counts (the version of
 * the copy: a vector clock) and the shard as it was right after applying
 * that push.  On a push, a server adds the update into its shard (the
 * reduction kernel), counts it, snapshots counts and shard, and sends both
 * back.  Every message is a small header and its data; a colocated pair
 * carries pushes and replies both ways, interleaved as the two ranks'
 * paces make them, and the transports keep a pair's messages in order, so
 * each rank keeps one header receive posted per peer and posts the data's
 * receive once the header says what it is and where it goes.  A colocated rank
 * serves its own shard to itself without messages.  It serves between its
 * own steps and after them, until every worker has pushed S updates.
 *
 * Staleness of a push: the updates from other workers that the server
 * applied between its previous reply to that worker (the copy the worker
 * stepped from) and this push: 0 when nobody else moved.  Each server keeps
 * a histogram; the row reports p50, p99 and max (median of the servers'
 * medians, max of their p99s and maxima).
 *
 * Checked exactly (cb_session.check, from the driver): every pulled copy
 * against the sum its header names (initial value plus counts[w] times
 * worker w's update, for every w), and each server's final shard against
 * every update pushed.  Per step and worker: K pushes and K replies (a
 * header and V/K bytes each), V bytes each way; no model (auto never picks it:
 * it is not one collective call).
 */
#include <stdlib.h>
#include <string.h>

#include "coll/ps_async_int.h"
#include "coll/sched.h"
#include "core/log.h"
#include "core/mem.h"
#include "core/worker.h"

static const char *psa_refuse(enum cb_coll coll, int n, int ps_servers)
{
	(void)coll;
	if (ps_servers < 0 || ps_servers >= n)
		return "ps-async: --ps-servers must leave at least one worker "
		       "(fewer servers than ranks)";
	return NULL;
}

static const char *psa_refuse_dtype(enum cb_dtype dt)
{
	if (dt == CB_DT_FLOAT16 || dt == CB_DT_BFLOAT16)
		return "ps-async: its sums of updates outgrow the integers "
		       "float16 and bfloat16 hold exactly (use float32, "
		       "float64 or an integer type)";
	return NULL;
}

static void psa_free(struct cb_plan *p)
{
	if (!p)
		return;
	size_t sb = slot_bytes(p);
	if (p->params) {
		cb_comm_mem_free(p->c, p->params, sb);
		cb_comm_mem_free(p->c, p->stage, (size_t)p->w * sb);
		cb_comm_mem_free(p->c, p->snap, (size_t)p->w * sb);
	}
	cb_free_all(p->members, p->links, p->hbufs, p->counts,
	            p->others_at_read, p->whdr, p);
}

static cb_status_t psa_build(struct cb_comm *c, const struct cb_plan_cfg *cfg,
                             struct cb_plan **out)
{
	const char *why = psa_refuse(cfg->coll, cfg->group.n, cfg->ps_servers);
	struct cb_plan *p;
	cb_status_t st;

	if (why || (why = psa_refuse_dtype(cfg->dtype)))
		return cb_fail(CB_ERR_USAGE, "%s", why);
	if (!(p = calloc(1, sizeof(*p))))
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	p->c = c;
	p->n = cfg->group.n;
	p->me = cfg->group.me;
	p->dedicated = cfg->ps_servers > 0;
	p->k = p->dedicated ? cfg->ps_servers : p->n;
	p->w = p->n - cfg->ps_servers;
	p->dt = cfg->dtype;
	p->es = cb_dtype_bytes(cfg->dtype);
	p->max_count = cfg->max_count;
	p->shard_cap = cb_block_len(cfg->max_count, p->k, 0);
	p->shard = shard_of(p, p->me);
	p->hdr_bytes = sizeof(struct psa_hdr) + (size_t)p->w * sizeof(uint64_t);
	size_t w = (size_t)p->w, n = (size_t)p->n;
	size_t sb = slot_bytes(p);
	p->members = calloc(n, sizeof(int));
	p->links = calloc(n, sizeof(struct link));
	p->hbufs = calloc(n * 3, p->hdr_bytes);
	p->counts = calloc(w, sizeof(uint64_t));
	p->others_at_read = calloc(w, sizeof(uint64_t));
	p->whdr = calloc((size_t)p->k * w, sizeof(uint64_t));
	if (!p->members || !p->links || !p->hbufs || !p->counts ||
	    !p->others_at_read || !p->whdr) {
		psa_free(p);
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	}
	memcpy(p->members, cfg->group.members, n * sizeof(int));
	for (size_t q = 0; q < n; q++) {
		char *h = p->hbufs + q * 3 * p->hdr_bytes;
		p->links[q].rh = (struct psa_hdr *)h;
		p->links[q].ph = (struct psa_hdr *)(h + p->hdr_bytes);
		p->links[q].sh = (struct psa_hdr *)(h + 2 * p->hdr_bytes);
	}
	/* Shareable memory, so shm reads snapshots and stages in one copy. */
	if (p->shard >= 0 &&
	    ((st = cb_comm_mem_alloc(c, sb, (void **)&p->params)) ||
	     (st = cb_comm_mem_alloc(c, w * sb, (void **)&p->stage)) ||
	     (st = cb_comm_mem_alloc(c, w * sb, (void **)&p->snap)))) {
		psa_free(p);
		return st;
	}
	if (p->shard >= 0) {
		p->stage_mem = cb_comm_mem_find(c, p->stage, 0);
		p->snap_mem = cb_comm_mem_find(c, p->snap, 0);
	}
	/* Connect the peers we exchange with (symmetric: a worker and each
	 * server, a server and each worker). */
	int *want = calloc(n ? n : 1, sizeof(int)), k = 0;
	if (!want) {
		psa_free(p);
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	}
	for (int q = 0; q < p->n; q++)
		if (q != p->me && ((p->me < p->w && shard_of(p, q) >= 0) ||
		                   (p->shard >= 0 && q < p->w)))
			want[k++] = p->members[q];
	st = k ? cb_comm_connect(c, want, k, 0) : CB_OK;
	free(want);
	if (st) {
		psa_free(p);
		return st;
	}
	*out = p;
	return CB_OK;
}

/* A wait of ps-async's: serve (poll) until @until says so. */
struct psa_wait {
	struct cb_plan *p;
	const struct cb_coll_args *a;
	/* 1 when the wait is over; an error in *st ends it too */
	int (*until)(struct psa_wait *pw, cb_status_t *st);
	struct link *l; /* whose pushes (until_pushed) */
	uint64_t end;   /* until_time's */
};

static cb_status_t psa_attempt(struct cb_comm *c, struct cb_wait_spec *w)
{
	struct psa_wait *pw = w->arg;
	cb_status_t st = CB_OK;
	int moved = 0;

	(void)c;
	if (pw->until(pw, &st) || st)
		return st;
	if ((st = psa_poll(pw->p, pw->a, &moved)))
		return st;
	w->moved = moved;
	if (pw->until(pw, &st) || st)
		return st;
	w->peer = psa_waited_on(pw->p);
	return CB_AGAIN;
}

/* Poll and progress until @pw->until holds, under the one wait: the job's
 * deadline without progress, ^C, another rank's abort, the peer named. */
static cb_status_t wait_until(struct psa_wait *pw, const char *what)
{
	struct cb_wait_spec w = { .attempt = psa_attempt,
		                  .arg = pw,
		                  .what = what,
		                  .peer = psa_waited_on(pw->p) };

	return cb_worker_wait(pw->p->c, &w);
}

static int until_time(struct psa_wait *pw, cb_status_t *st)
{
	(void)st;
	return cb_now_ns() >= pw->end;
}

static int until_pushed(struct psa_wait *pw, cb_status_t *st)
{
	return psa_done(&pw->l->push[0], st) && psa_done(&pw->l->push[1], st);
}

static int until_replied(struct psa_wait *pw, cb_status_t *st)
{
	(void)st;
	return pw->p->replies_left == 0;
}

static int until_quiet(struct psa_wait *pw, cb_status_t *st)
{
	return psa_quiet(pw->p, st);
}

/* One step of this worker: push to every server, wait for every reply,
 * serving meanwhile. */
static cb_status_t step(struct cb_plan *p, const struct cb_coll_args *a,
                        struct cb_session *s, uint64_t n)
{
	size_t off, len;
	int me = p->me;
	cb_status_t st = CB_OK;
	struct psa_wait pw = { .p = p, .a = a };

	/* A straggler's "compute": its server keeps serving meanwhile, as a
	 * parameter server's own threads would. */
	if (me == s->straggler && s->delay_us > 0) {
		pw.until = until_time;
		pw.end = cb_now_ns() + (uint64_t)(s->delay_us * 1e3);
		if ((st = wait_until(&pw, "ps-async: serving through a delay, "
		                          "from")))
			return st;
	}
	p->replies_left = 0;
	for (int i = 0; i < p->k; i++) {
		int k = (me + i) % p->k, srv = server_of(p, k);
		struct link *l = &p->links[srv];
		shard_span(p, a->count, k, &off, &len);
		const char *upd = (const char *)a->sendbuf + off * p->es;
		if (srv == me) { /* our own shard: no messages */
			psa_apply(p, me, upd, len);
			memcpy(p->whdr + (size_t)k * p->w, p->counts,
			       (size_t)p->w * sizeof(uint64_t));
			memcpy((char *)a->recvbuf + off * p->es, p->params,
			       len * p->es);
			continue;
		}
		/* our previous push to it has left: we had its reply */
		pw.until = until_pushed;
		pw.l = l;
		if ((st = wait_until(&pw, "ps-async: waiting for a push to "
		                          "leave, on")))
			return st;
		l->ph->kind = PSA_PUSH;
		l->ph->step = n;
		if ((st = psa_send_msg(p, srv, l->ph, upd, len * p->es,
		                       p->send_mem, l->push)))
			return st;
		p->replies_left++;
	}
	pw.until = until_replied;
	if ((st = wait_until(&pw, "ps-async: waiting for replies to this "
	                          "step's pushes, from")))
		return st;
	for (int k = 0; k < p->k && s->check; k++) {
		shard_span(p, a->count, k, &off, &len);
		s->wrong +=
		        s->check(s->ctx, (char *)a->recvbuf + off * p->es, off,
		                 len, p->whdr + (size_t)k * p->w, p->w);
	}
	return CB_OK;
}

static int is_worker(const struct cb_plan *p, int q)
{
	return q < p->w;
}

static cb_status_t psa_session(struct cb_plan *p, const struct cb_coll_args *a,
                               struct cb_session *s)
{
	size_t off = 0, len = 0;
	cb_status_t st = CB_OK;

	if (a->count > p->max_count)
		return cb_fail(CB_ERR_USAGE,
		               "ps-async: %zu elements, the plan holds %zu",
		               a->count, p->max_count);
	memset(&p->stats, 0, sizeof(p->stats));
	memset(p->hist, 0, sizeof(p->hist));
	memset(p->counts, 0, (size_t)p->w * sizeof(uint64_t));
	memset(p->others_at_read, 0, (size_t)p->w * sizeof(uint64_t));
	p->total = p->stale_max = 0;
	s->wrong = s->pushes = s->pulls = s->elapsed_ns = 0;
	s->worker = is_worker(p, p->me);
	p->send_mem = cb_comm_mem_find(p->c, a->sendbuf, 0);
	p->recv_mem = cb_comm_mem_find(p->c, a->recvbuf, 0);
	s->server = p->shard >= 0;
	if (s->server) {
		shard_span(p, a->count, p->shard, &off, &len);
		s->fill(s->ctx, p->params, off, len, -1);
	}
	/* What each peer will send us: pushes if it works and we serve,
	 * replies if it serves and we work.  One header receive posted per
	 * peer that has something to send. */
	for (int q = 0; q < p->n; q++) {
		struct link *l = &p->links[q];
		if (q == p->me)
			continue;
		l->rleft = 0;
		if (s->server && is_worker(p, q))
			l->rleft += s->steps;
		if (s->worker && shard_of(p, q) >= 0)
			l->rleft += s->steps;
		if (l->rleft &&
		    (st = psa_post(p, 0, q, l->rh, p->hdr_bytes, NULL,
		                   TAG_HDR | l->rseq, &l->hreq)))
			return st;
		l->hposted = l->rleft > 0;
	}
	if (s->worker) {
		s->fill(s->ctx, (void *)a->sendbuf, 0, a->count, p->me);
		uint64_t t0 = cb_now_ns(), prev = t0;
		for (uint64_t n = 0; n < s->steps; n++) {
			if ((st = step(p, a, s, n)))
				return st;
			uint64_t t = cb_now_ns();
			if (s->step_ns && n < s->nstep_ns)
				s->step_ns[n] = (double)(t - prev);
			prev = t;
		}
		s->elapsed_ns = prev - t0;
		s->pushes = s->pulls = s->steps * (uint64_t)p->k;
	}
	/* serve until every worker is through, and every send has left */
	struct psa_wait pw = { .p = p, .a = a, .until = until_quiet };
	if ((st = wait_until(&pw, "ps-async: serving the other workers' "
	                          "pushes, from")))
		return st;
	if (s->server) {
		shard_span(p, a->count, p->shard, &off, &len);
		if (s->check)
			s->wrong += s->check(s->ctx, p->params, off, len,
			                     p->counts, p->w);
		memcpy(s->stale_hist, p->hist, sizeof(p->hist));
		s->stale_max = p->stale_max;
	}
	return CB_OK;
}

/* Not one collective call: the driver runs sessions (cb_algo.session). */
static cb_status_t psa_run(struct cb_plan *p, const struct cb_coll_args *a)
{
	(void)p;
	(void)a;
	return cb_fail(CB_ERR_UNSUPPORTED,
	               "ps-async runs as a session of steps, not one call");
}

static const struct cb_coll_stats *psa_stats(const struct cb_plan *p)
{
	return &p->stats;
}

const struct cb_algo cb_algo_ps_async = {
	.name = "ps-async",
	.description = "asynchronous parameter server: each worker pushes its "
	               "update and pulls the parameters at its own pace for -n "
	               "steps; staleness reported (only when named)",
	.colls = 1u << CB_COLL_ALLREDUCE,
	.flags = CB_ALGO_NAMED_ONLY | CB_ALGO_HOST_ONLY,
	.refuse = psa_refuse,
	.refuse_dtype = psa_refuse_dtype,
	.plan_build = psa_build,
	.run = psa_run,
	.session = psa_session,
	.plan_free = psa_free,
	.stats = psa_stats,
};
