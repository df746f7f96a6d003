/* SPDX-License-Identifier: MIT */
/*
 * coll/sched.c - the schedule executor (see coll/sched.h): running a call.
 *
 * After an algorithm has added its operations, a pass (sched_build.c)
 * links the operations on each directed pair into a chain in the order they
 * were added, gives each message its tag (call, segment, position on the
 * pair) and its staging slot, and sorts the operations into segments and
 * rounds where the generator interleaved them.  Then the loop: for each
 * segment in the window, post what its current round allows (a send or a
 * receive only when it heads its chain), progress the transports, retire
 * what completed (reducing staged receives), move segments whose round is
 * done to the next round.  Nothing is allocated per call.
 *
 * Device memory (--mem gpu): the scratch and staging buffers are of the
 * run's kind, and the local steps - copies, and the reduction of a staged
 * receive - are queued on the device engine (cb_comm_copy,
 * cb_comm_reduce_local) and complete through cb_comm_test like messages: a
 * copy is posted and retired as a receive is, and a staged receive goes on
 * to a reduction before it counts as done.  On host memory both happen at
 * once, as before.
 *
 * The loop is one cb_worker_wait (core/worker.h): a pass over the window
 * is its attempt, so a schedule's deadline, ^C and stall line are those of
 * every other wait, the line naming the step (the algorithm's own words
 * where it gives them: cfg.where), the peer, its host and the transport.
 */
#include "coll/sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/reduce.h"
#include "coll/sched_int.h"
#include "core/log.h"
#include "core/worker.h"

/* The notification value of put @k of call @seq on a pair. */
static inline uint32_t note_of(uint64_t seq, uint32_t k)
{
	return 0x80000000u | ((uint32_t)(seq & 0x7f) << 24) | (k & 0xffffffu);
}

/* Segment @g's round that starts at ord[g->lo] (ops of a segment are in
 * round order): where it ends, what it waits for. */
static void open_round(const struct cb_sched *s, struct segstate *g)
{
	uint32_t hi = g->lo;
	uint16_t r = s->ops[s->ord[hi]].round;

	g->pending = 0;
	for (; hi < g->end && s->ops[s->ord[hi]].round == r; hi++) {
		if (trails(s, &s->ops[s->ord[hi]]))
			g->trail++;
		else
			g->pending++;
	}
	g->hi = hi;
}

/* A put: written into the peer's memory where this call's path is on, else
 * sent. */
static cb_status_t post_put(struct cb_sched *s, uint32_t i, int peer)
{
	const struct cb_sop *op = &s->ops[i];
	const char *src = s->base[op->buf] + op->off;
	cb_status_t st;

	if (!s->put_known) {
		s->path = (struct cb_sched_put_path){ 0 };
		if (s->put_ready &&
		    (st = s->put_ready(s->comm, s->put_arg, &s->path)))
			return st; /* CB_AGAIN: not known yet */
		s->put_known = 1;
	}
	if (s->path.on)
		return cb_comm_put(
		        s->comm, peer, src, op->bytes, s->mem[op->buf],
		        s->path.rm, s->path.roff + op->soff,
		        note_of(s->seq, (uint32_t)s->slot[i]), &s->req[i]);
	return cb_comm_isend(s->comm, peer, src, op->bytes, s->mem[op->buf],
	                     s->tag[i], &s->req[i]);
}

static cb_status_t post(struct cb_sched *s, uint32_t i)
{
	struct cb_sop *op = &s->ops[i];
	struct cb_comm *c = s->comm;
	char *dst = s->base[op->buf] + op->off;
	int peer = op->peer >= 0 ? s->members[op->peer] : -1;
	cb_status_t st;

	switch (op->kind) {
	case CB_SOP_COPY:
		if (op->bytes && (s->dev[op->buf] || s->dev[op->sbuf])) {
			st = cb_comm_copy(c, dst, s->mem[op->buf],
			                  s->base[op->sbuf] + op->soff,
			                  s->mem[op->sbuf], op->bytes,
			                  &s->req[i]);
			break;
		}
		if (op->bytes)
			memmove(dst, s->base[op->sbuf] + op->soff, op->bytes);
		s->state[i] = ST_DONE;
		return CB_OK;
	case CB_SOP_SEND:
	case CB_SOP_PUT:
		st = op->kind == CB_SOP_PUT
		             ? post_put(s, i, peer)
		             : cb_comm_isend(c, peer, dst, op->bytes,
		                             s->mem[op->buf], s->tag[i],
		                             &s->req[i]);
		if (st == CB_OK) {
			s->stats.msgs_sent++;
			s->stats.bytes_sent += op->bytes;
		}
		break;
	case CB_SOP_RECV:
		st = cb_comm_irecv(c, peer, dst, op->bytes, s->mem[op->buf],
		                   s->tag[i], &s->req[i]);
		break;
	case CB_SOP_NOTIFY:
		st = CB_OK; /* nothing to post: it is polled for, in order */
		break;
	default: /* CB_SOP_RECV_REDUCE */
		if (s->slot[i] < 0) {
			/* the transport is told dst's region (src is
			 * memory of the same kind) */
			st = cb_comm_irecv_reduce(
			        c, peer, dst, s->base[op->sbuf] + op->soff,
			        op->bytes, s->mem[op->buf], &s->red, s->tag[i],
			        &s->req[i]);
		} else {
			st = cb_comm_irecv(
			        c, peer,
			        s->stage +
			                (size_t)s->slot[i] * s->cfg.stage_bytes,
			        op->bytes, s->stage_mem, s->tag[i], &s->req[i]);
		}
		break;
	}
	if (st == CB_OK)
		s->state[i] = ST_POSTED;
	return st;
}

/* A notification: only the one due next from its peer is polled for. */
static cb_status_t test_notify(struct cb_sched *s, uint32_t i)
{
	const struct cb_sop *op = &s->ops[i];
	uint32_t k = (uint32_t)s->slot[i], got, want;
	cb_status_t st;

	if (s->note_next[op->peer] != k)
		return CB_AGAIN;
	st = cb_comm_notify_poll(s->comm, s->members[op->peer], &got);
	if (st)
		return st;
	want = note_of(s->seq, k);
	if (got != want)
		return cb_fail(CB_ERR_PROTO,
		               "%s: rank %d's write %#x arrived where %#x was "
		               "due",
		               s->algo, s->members[op->peer], got, want);
	s->note_next[op->peer]++;
	return CB_OK;
}

/* A posted op finished: account, and reduce a staged receive (on host
 * memory at once; on device memory the reduction is queued and the op
 * stays pending in ST_REDUCE). */
static void retire(struct cb_sched *s, uint32_t i)
{
	struct cb_sop *op = &s->ops[i];

	s->state[i] = ST_DONE;
	if (sends(op) || op->kind == CB_SOP_COPY)
		return;
	s->stats.msgs_recv++;
	s->stats.bytes_recv +=
	        op->kind == CB_SOP_NOTIFY ? op->bytes : s->req[i].tp.bytes;
	if (op->kind != CB_SOP_RECV_REDUCE || s->slot[i] < 0)
		return;
	if (s->stage_dev) {
		s->state[i] = ST_REDUCE;
		return;
	}
	cb_reduce(s->a.dtype, s->a.op, s->base[op->buf] + op->off,
	          s->base[op->sbuf] + op->soff,
	          s->stage + (size_t)s->slot[i] * s->cfg.stage_bytes,
	          op->bytes / s->esize);
}

/* ST_REDUCE and ST_REDUCING: queue a staged receive's reduction on the
 * device engine, then wait for it.  1 when the op is done. */
static cb_status_t reduce_dev(struct cb_sched *s, uint32_t i, int *done)
{
	struct cb_sop *op = &s->ops[i];
	cb_status_t st;

	*done = 0;
	if (s->state[i] == ST_REDUCE) {
		st = cb_comm_reduce_local(s->comm, s->base[op->buf] + op->off,
		                          s->base[op->sbuf] + op->soff,
		                          s->stage + (size_t)s->slot[i] *
		                                             s->cfg.stage_bytes,
		                          op->bytes / s->esize, &s->red,
		                          s->mem[op->buf], &s->req[i]);
		if (st)
			return st == CB_AGAIN ? CB_OK : st;
		s->state[i] = ST_REDUCING;
	}
	st = cb_comm_test(&s->req[i]);
	if (st == CB_AGAIN)
		return CB_OK;
	if (st)
		return st;
	s->state[i] = ST_DONE;
	*done = 1;
	return CB_OK;
}

/* At the deadline (cb_worker_wait's stuck hook): the first op of the
 * oldest open segment's round that is not done, in the line's words. */
static void sched_stuck(struct cb_comm *c, struct cb_wait_spec *w)
{
	struct cb_sched *s = w->arg;
	struct segstate *g = &s->segs[s->lo_seg % CB_SCHED_WINDOW];
	const struct cb_sop *op = NULL;
	uint32_t i = 0;
	char where[96];

	for (uint32_t x = g->trail ? g->tlo : g->lo; x < g->hi; x++) {
		i = s->ord[x];
		if (s->state[i] != ST_DONE && s->ops[i].kind != CB_SOP_COPY) {
			op = &s->ops[i];
			break;
		}
	}
	if (!op) {
		snprintf(s->what, sizeof(s->what), "without progress in %s %s",
		         s->algo, cb_coll_name(s->a.coll));
		w->what = s->what;
		w->peer = -1;
		return;
	}
	if (s->cfg.where)
		s->cfg.where(where, sizeof(where), op, s->n);
	else
		snprintf(where, sizeof(where), "segment %u round %u", op->seg,
		         op->round);
	w->peer = s->members[op->peer];
	snprintf(s->what, sizeof(s->what),
	         "without progress: rank %d waits for", c->rank);
	snprintf(s->detail, sizeof(s->detail), "to %s %s %s %s%s",
	         sends(op) ? "receive" : "send", s->algo,
	         cb_coll_name(s->a.coll), where,
	         s->state[i] == ST_IDLE ? " (not yet posted)" : "");
	w->what = s->what;
	w->detail = s->detail;
	w->over = c->eps[w->peer].ops ? c->eps[w->peer].ops->name : NULL;
}
/* Post what segment @g's round allows: a send or a receive only when it
 * heads its chain. */
static cb_status_t seg_post(struct cb_sched *s, struct segstate *g, int *moved)
{
	for (uint32_t x = g->lo; x < g->hi; x++) {
		uint32_t i = s->ord[x], *head = NULL;
		struct cb_sop *op = &s->ops[i];
		cb_status_t st;
		if (s->state[i] != ST_IDLE)
			continue;
		if (sends(op))
			head = &s->head_send[op->peer];
		else if (op->kind != CB_SOP_COPY)
			head = &s->head_recv[op->peer];
		if (head && *head != i)
			continue;
		st = post(s, i);
		if (st == CB_AGAIN)
			break;
		if (st)
			return st;
		if (head)
			*head = s->chain_next[i];
		if (s->state[i] == ST_DONE)
			g->pending--;
		*moved = 1;
	}
	return CB_OK;
}

/* Retire what of segment @g's round, and of its trailing sends,
 * completed. */
static cb_status_t seg_retire(struct cb_sched *s, struct segstate *g,
                              int *moved)
{
	for (uint32_t x = g->trail ? g->tlo : g->lo; x < g->hi; x++) {
		uint32_t i = s->ord[x];
		int done = 1;
		cb_status_t st;
		if (s->state[i] == ST_REDUCE || s->state[i] == ST_REDUCING) {
			if ((st = reduce_dev(s, i, &done)))
				return st;
			if (done) {
				g->pending--;
				*moved = 1;
			}
			continue;
		}
		if (s->state[i] != ST_POSTED)
			continue;
		st = s->ops[i].kind == CB_SOP_NOTIFY ? test_notify(s, i)
		                                     : cb_comm_test(&s->req[i]);
		if (st == CB_AGAIN)
			continue;
		if (st)
			return st;
		retire(s, i);
		*moved = 1;
		if (s->state[i] != ST_DONE)
			continue;
		if (trails(s, &s->ops[i]))
			g->trail--;
		else
			g->pending--;
	}
	while (g->tlo < g->lo && s->state[s->ord[g->tlo]] == ST_DONE)
		g->tlo++;
	return CB_OK;
}

/* One pass over the window (cb_worker_wait's attempt): open segments up to
 * it, move each as far as it goes, close the finished ones.  CB_OK once
 * every segment is done. */
static cb_status_t sched_pass(struct cb_comm *c, struct cb_wait_spec *w)
{
	struct cb_sched *s = w->arg;
	cb_status_t st;
	int moved = 0;

	(void)c;
	while (s->hi_seg < s->nsegs &&
	       s->hi_seg < s->lo_seg + CB_SCHED_WINDOW) {
		struct segstate *g = &s->segs[s->hi_seg % CB_SCHED_WINDOW];
		g->lo = g->tlo = s->seg_first[s->hi_seg];
		g->end = s->seg_first[s->hi_seg + 1];
		g->trail = 0;
		open_round(s, g);
		s->hi_seg++;
	}
	for (uint32_t k = s->lo_seg; k < s->hi_seg; k++) {
		struct segstate *g = &s->segs[k % CB_SCHED_WINDOW];
		for (;;) {
			if ((st = seg_post(s, g, &moved)) ||
			    (st = seg_retire(s, g, &moved)))
				return st;
			if (g->pending || g->hi == g->end)
				break;
			/* Round complete: on to the next one. */
			g->lo = g->hi;
			open_round(s, g);
		}
	}
	while (s->lo_seg < s->hi_seg) {
		struct segstate *g = &s->segs[s->lo_seg % CB_SCHED_WINDOW];
		if (g->pending || g->trail || g->hi != g->end)
			break;
		s->lo_seg++;
	}
	w->moved = moved;
	return s->lo_seg == s->nsegs ? CB_OK : CB_AGAIN;
}

cb_status_t cb_sched_run(struct cb_sched *s)
{
	struct cb_wait_spec w = { .attempt = sched_pass,
		                  .arg = s,
		                  .stuck = sched_stuck,
		                  .what = "without progress in a schedule",
		                  .peer = -1 };
	cb_status_t st;

	s->seq++;
	s->put_known = 0;
	if ((st = cb_sched_link(s)) || (st = cb_sched_connect_used(s, 1)))
		return st;
	s->lo_seg = s->hi_seg = 0;
	return cb_worker_wait(s->comm, &w);
}

/* ---- plans that are a schedule and a generator ---- */

struct cb_plan {
	const struct cb_sched_algo *sa;
	struct cb_plan_cfg cfg;
	int *members;
	struct cb_sched *s;
};

/* Connect the peers of the largest call the plan allows: generate it
 * without running it (generators compare buffer addresses, never read
 * them). */
static cb_status_t plan_connect(struct cb_plan *pl)
{
	struct cb_coll_args a = {
		.coll = pl->cfg.coll,
		.dtype = pl->cfg.dtype,
		.op = CB_OP_SUM,
		.sendbuf = (const void *)(uintptr_t)4096,
		.recvbuf = (void *)(uintptr_t)8192,
		.count = pl->cfg.max_count,
		.root = pl->cfg.root,
	};
	cb_status_t st;

	cb_sched_begin(pl->s, &a);
	pl->sa->gen(pl->s, &pl->cfg, &a);
	if ((st = cb_sched_link(pl->s)) ||
	    (st = cb_sched_connect_used(pl->s, 0)))
		return st;
	pl->s->nops = 0;
	return CB_OK;
}

cb_status_t cb_sched_plan_build(const struct cb_sched_algo *sa,
                                struct cb_comm *c,
                                const struct cb_plan_cfg *cfg,
                                struct cb_plan **out)
{
	struct cb_plan *pl = calloc(1, sizeof(*pl));
	struct cb_sched_cfg sc = { 0 };
	cb_status_t st;

	if (!pl)
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	pl->sa = sa;
	pl->cfg = *cfg;
	pl->members = malloc((size_t)cfg->group.n * sizeof(int));
	if (!pl->members) {
		free(pl);
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	}
	memcpy(pl->members, cfg->group.members,
	       (size_t)cfg->group.n * sizeof(int));
	pl->cfg.group.members = pl->members;
	if ((st = sa->size(&pl->cfg, &sc)) ||
	    (st = cb_sched_create(c, &pl->cfg.group, &sc, &pl->s)) ||
	    (st = plan_connect(pl))) {
		cb_sched_plan_free(pl);
		return st;
	}
	*out = pl;
	return CB_OK;
}

cb_status_t cb_sched_plan_run(struct cb_plan *pl, const struct cb_coll_args *a)
{
	if (a->count > pl->cfg.max_count)
		return cb_fail(CB_ERR_INVALID, "%s: count above the plan's",
		               pl->s->algo);
	cb_sched_begin(pl->s, a);
	pl->sa->gen(pl->s, &pl->cfg, a);
	return cb_sched_run(pl->s);
}

void cb_sched_plan_free(struct cb_plan *pl)
{
	if (!pl)
		return;
	cb_sched_destroy(pl->s);
	free(pl->members);
	free(pl);
}

const struct cb_coll_stats *cb_sched_plan_stats(const struct cb_plan *pl)
{
	return cb_sched_stats(pl->s);
}
