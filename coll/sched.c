/* SPDX-License-Identifier: MIT */
/*
 * coll/sched.c - the schedule executor (see coll/sched.h).
 *
 * After an algorithm has added its operations, a pass links the
 * operations on each directed pair into a chain in the order they were
 * added, gives each message its tag (call, segment, position on the pair
 * within the segment) and its staging slot.  Then the loop: for each
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
#include "core/log.h"
#include "core/worker.h"

/* ST_REDUCE: received, its reduction not yet queued (the engine had no
 * room); ST_REDUCING: the reduction is queued on the device engine. */
enum { ST_IDLE, ST_POSTED, ST_REDUCE, ST_REDUCING, ST_DONE };

#define NONE UINT32_MAX

struct segstate {
	/* current round's ops ord[lo .. hi); the segment ends at ord[end] */
	uint32_t lo, hi, end;
	uint32_t
	        pending; /* ops of [lo, hi) not done that the round waits for */
	/* trailing sends (cfg.trail_sends) not done, all in [tlo, hi) */
	uint32_t trail, tlo;
};

struct cb_sched {
	struct cb_comm *comm;
	int *members;
	int n, me;
	struct cb_sched_cfg cfg;
	const char *algo;
	struct cb_coll_args a;
	size_t esize;
	char *base[3];
	uint8_t *tmp, *stage;
	size_t stage_total;
	const struct cb_mem *mem[3]; /* regions of base[] (NULL: unknown) */
	int dev[3];                  /* base[i] is device memory */
	const struct cb_mem *tmp_mem, *stage_mem;
	int stage_dev;           /* the staging slots are device memory */
	int fused_all;           /* every peer's transport reduces on arrival */
	struct cb_tp_reduce red; /* the transport keeps a pointer to it */
	uint64_t seq;

	struct cb_sop *ops;
	size_t nops;
	int overflow;
	int interleaved; /* ops not added in (segment, round) order */
	uint8_t *state;
	uint32_t *chain_next;
	uint64_t *tag;
	/* a receive-and-reduce's staging slot (-1: none); a put's or a
	 * notification's number on its pair */
	int32_t *slot;
	struct cb_req *req;
	uint32_t *ord; /* op indices in (segment, round) order */
	uint32_t *cnt; /* [max_ops + 1]: while sorting */
	uint32_t *head_send, *head_recv; /* [n]: next op to post per chain */
	uint32_t *tail_send, *tail_recv; /* [n]: while linking */
	uint32_t *pos_send, *pos_recv;   /* [n]: position on the pair */
	uint32_t *note_send, *note_recv; /* [n]: puts, notifications so far */
	uint32_t *note_next;             /* [n]: the notification due next */
	uint32_t *seg_first;             /* [nsegs + 1], into ord */
	int *want;                       /* [n]: peers to connect */
	struct segstate *segs;
	uint32_t nsegs, lo_seg, hi_seg;
	/* this call's one-sided path (cb_sched_put_path) */
	cb_sched_put_ready_fn put_ready;
	void *put_arg;
	int put_known;
	struct cb_sched_put_path path;
	struct cb_coll_stats stats;
	char what[64], detail[224]; /* the stall line's words */
};

static int add(struct cb_sched *s, const struct cb_sop *op)
{
	if (s->nops >= s->cfg.max_ops) {
		s->overflow = 1;
		return -1;
	}
	if (s->nops) {
		const struct cb_sop *p = &s->ops[s->nops - 1];
		if (op->seg < p->seg ||
		    (op->seg == p->seg && op->round < p->round))
			s->interleaved = 1;
	}
	s->ops[s->nops++] = *op;
	return 0;
}

static int xfer(struct cb_sched *s, enum cb_sop_kind kind, uint32_t seg,
                int round, int peer, enum cb_sbuf buf, size_t off, size_t bytes)
{
	return add(s, &(struct cb_sop){ .kind = kind,
	                                .buf = (uint8_t)buf,
	                                .round = (uint16_t)round,
	                                .seg = seg,
	                                .peer = peer,
	                                .off = off,
	                                .bytes = bytes });
}

int cb_sched_send(struct cb_sched *s, uint32_t seg, int round, int peer,
                  enum cb_sbuf buf, size_t off, size_t bytes)
{
	return xfer(s, CB_SOP_SEND, seg, round, peer, buf, off, bytes);
}

int cb_sched_recv(struct cb_sched *s, uint32_t seg, int round, int peer,
                  enum cb_sbuf buf, size_t off, size_t bytes)
{
	return xfer(s, CB_SOP_RECV, seg, round, peer, buf, off, bytes);
}

int cb_sched_recv_reduce(struct cb_sched *s, uint32_t seg, int round, int peer,
                         enum cb_sbuf dst, size_t doff, enum cb_sbuf src,
                         size_t soff, size_t bytes)
{
	return add(s, &(struct cb_sop){ .kind = CB_SOP_RECV_REDUCE,
	                                .buf = (uint8_t)dst,
	                                .sbuf = (uint8_t)src,
	                                .round = (uint16_t)round,
	                                .seg = seg,
	                                .peer = peer,
	                                .off = doff,
	                                .soff = soff,
	                                .bytes = bytes });
}

int cb_sched_copy(struct cb_sched *s, uint32_t seg, int round, enum cb_sbuf dst,
                  size_t doff, enum cb_sbuf src, size_t soff, size_t bytes)
{
	if (dst == src && doff == soff)
		return 0;
	return add(s, &(struct cb_sop){ .kind = CB_SOP_COPY,
	                                .buf = (uint8_t)dst,
	                                .sbuf = (uint8_t)src,
	                                .round = (uint16_t)round,
	                                .seg = seg,
	                                .peer = -1,
	                                .off = doff,
	                                .soff = soff,
	                                .bytes = bytes });
}

int cb_sched_put(struct cb_sched *s, uint32_t seg, int round, int peer,
                 enum cb_sbuf buf, size_t off, size_t roff, size_t bytes)
{
	return add(s, &(struct cb_sop){ .kind = CB_SOP_PUT,
	                                .buf = (uint8_t)buf,
	                                .round = (uint16_t)round,
	                                .seg = seg,
	                                .peer = peer,
	                                .off = off,
	                                .soff = roff,
	                                .bytes = bytes });
}

int cb_sched_notify(struct cb_sched *s, uint32_t seg, int round, int peer,
                    size_t bytes)
{
	return xfer(s, CB_SOP_NOTIFY, seg, round, peer, CB_SB_RECV, 0, bytes);
}

void cb_sched_put_path(struct cb_sched *s, cb_sched_put_ready_fn ready,
                       void *arg)
{
	s->put_ready = ready;
	s->put_arg = arg;
}

void cb_sched_begin(struct cb_sched *s, const struct cb_coll_args *a)
{
	s->a = *a;
	s->esize = cb_dtype_bytes(a->dtype);
	s->red = (struct cb_tp_reduce){ .dtype = a->dtype,
		                        .op = a->op,
		                        .elem_bytes = (uint32_t)s->esize };
	s->base[CB_SB_SEND] = (char *)a->sendbuf;
	s->base[CB_SB_RECV] = (char *)a->recvbuf;
	s->base[CB_SB_TMP] = (char *)s->tmp;
	/* Which registered region each buffer is: once per call, so every
	 * operation hands its transport the registration without a lookup. */
	s->mem[CB_SB_SEND] = cb_comm_mem_find(s->comm, a->sendbuf, 0);
	s->mem[CB_SB_RECV] = cb_comm_mem_find(s->comm, a->recvbuf, 0);
	s->mem[CB_SB_TMP] = s->tmp_mem;
	for (int k = 0; k < 3; k++)
		s->dev[k] = cb_mem_is_gpu(s->mem[k]);
	s->nops = 0;
	s->overflow = 0;
	s->interleaved = 0;
	s->put_ready = NULL;
	s->put_arg = NULL;
	memset(&s->stats, 0, sizeof(s->stats));
}

void *cb_sched_tmp(struct cb_sched *s)
{
	return s->tmp;
}

const struct cb_coll_stats *cb_sched_stats(const struct cb_sched *s)
{
	return &s->stats;
}

static inline int sends(const struct cb_sop *op)
{
	return op->kind == CB_SOP_SEND || op->kind == CB_SOP_PUT;
}

/* A send the next round does not wait for (cfg.trail_sends). */
static inline int trails(const struct cb_sched *s, const struct cb_sop *op)
{
	return s->cfg.trail_sends && sends(op);
}

/* The notification value of put @k of call @seq on a pair. */
static inline uint32_t note_of(uint64_t seq, uint32_t k)
{
	return 0x80000000u | ((uint32_t)(seq & 0x7f) << 24) | (k & 0xffffffu);
}

/* ord: the ops in (segment, round) order (a stable counting sort by
 * segment where they interleave), and where each segment starts. */
static cb_status_t order_ops(struct cb_sched *s)
{
	uint32_t nops = (uint32_t)s->nops, cur = NONE;

	if (!s->interleaved) {
		for (uint32_t x = 0; x < nops; x++)
			s->ord[x] = x;
	} else {
		memset(s->cnt, 0, (s->nops + 1) * sizeof(uint32_t));
		for (uint32_t i = 0; i < nops; i++) {
			if (s->ops[i].seg >= nops)
				return cb_fail(
				        CB_ERR_INVALID,
				        "%s: segment %u of an interleaved "
				        "schedule of %u operations",
				        s->algo, s->ops[i].seg, nops);
			s->cnt[s->ops[i].seg + 1]++;
		}
		for (uint32_t k = 1; k <= nops; k++)
			s->cnt[k] += s->cnt[k - 1];
		for (uint32_t i = 0; i < nops; i++)
			s->ord[s->cnt[s->ops[i].seg]++] = i;
	}
	s->nsegs = 0;
	for (uint32_t x = 0; x < nops; x++) {
		const struct cb_sop *op = &s->ops[s->ord[x]];
		if (op->seg != cur) {
			/* segments are numbered by the generator; keep only
			 * those that have ops, in order */
			cur = op->seg;
			s->seg_first[s->nsegs++] = x;
		} else if (op->round < s->ops[s->ord[x - 1]].round) {
			return cb_fail(CB_ERR_INVALID,
			               "%s: schedule not in (segment, round) "
			               "order",
			               s->algo);
		}
	}
	s->seg_first[s->nsegs] = nops;
	return CB_OK;
}

/* Staging slots: the staged receive-and-reduce ops of one round of a
 * segment each get their own; the next round reuses them (a round's
 * reductions are done before the next one posts), the segment
 * CB_SCHED_WINDOW later reuses the group. */
static cb_status_t assign_slots(struct cb_sched *s)
{
	for (uint32_t k = 0; k < s->nsegs; k++) {
		uint32_t used = 0;
		for (uint32_t x = s->seg_first[k]; x < s->seg_first[k + 1];
		     x++) {
			uint32_t i = s->ord[x];
			const struct cb_sop *op = &s->ops[i];
			if (x > s->seg_first[k] &&
			    op->round != s->ops[s->ord[x - 1]].round)
				used = 0;
			if (op->kind != CB_SOP_RECV_REDUCE ||
			    cb_comm_can_recv_reduce(s->comm,
			                            s->members[op->peer]))
				continue;
			if ((int)used >= s->cfg.stage_per_seg ||
			    op->bytes > s->cfg.stage_bytes)
				return cb_fail(CB_ERR_INVALID,
				               "%s: receive-and-reduce beyond "
				               "the planned staging",
				               s->algo);
			s->slot[i] =
			        (int32_t)((k % CB_SCHED_WINDOW) *
			                          (uint32_t)
			                                  s->cfg.stage_per_seg +
			                  used++);
		}
	}
	return CB_OK;
}

/* Chains, tags, notification numbers, segments and staging slots for the
 * ops added. */
static cb_status_t link_ops(struct cb_sched *s)
{
	cb_status_t st;

	if (s->overflow)
		return cb_fail(CB_ERR_INVALID,
		               "%s: schedule longer than planned (%zu "
		               "operations)",
		               s->algo, s->cfg.max_ops);
	for (int p = 0; p < s->n; p++) {
		s->head_send[p] = s->head_recv[p] = NONE;
		s->tail_send[p] = s->tail_recv[p] = NONE;
		s->pos_send[p] = s->pos_recv[p] = 0;
		s->note_send[p] = s->note_recv[p] = s->note_next[p] = 0;
	}
	for (uint32_t i = 0; i < s->nops; i++) {
		struct cb_sop *op = &s->ops[i];
		s->state[i] = ST_IDLE;
		s->chain_next[i] = NONE;
		s->slot[i] = -1;
		if (op->kind == CB_SOP_COPY)
			continue;
		if (op->peer < 0 || op->peer >= s->n || op->peer == s->me)
			return cb_fail(CB_ERR_INVALID,
			               "%s: schedule names peer %d of %d "
			               "(self or out of range)",
			               s->algo, op->peer, s->n);
		int sending = sends(op), p = op->peer;
		uint32_t *head = sending ? s->head_send : s->head_recv;
		uint32_t *tail = sending ? s->tail_send : s->tail_recv;
		uint32_t *pos = sending ? s->pos_send : s->pos_recv;
		if (tail[p] == NONE)
			head[p] = i;
		else
			s->chain_next[tail[p]] = i;
		tail[p] = i;
		s->tag[i] = (s->seq << 40) |
		            ((uint64_t)(op->seg & 0xffffff) << 16) |
		            (pos[p]++ & 0xffff);
		if (op->kind == CB_SOP_PUT)
			s->slot[i] = (int32_t)(s->note_send[p]++ & 0xffffff);
		else if (op->kind == CB_SOP_NOTIFY)
			s->slot[i] = (int32_t)(s->note_recv[p]++ & 0xffffff);
	}
	if ((st = order_ops(s)))
		return st;
	return assign_slots(s);
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

/*
 * Connect the peers the linked schedule uses that are not connected yet.
 * Plans do it when they are built (a dry run of the generator); a call
 * that still finds one (a size or root the plan did not foresee) connects
 * it here, counted as a late connection.  Every rank of the call does the
 * same for its own peers, which are symmetric, so nobody waits for a peer
 * that will not come.
 */
static cb_status_t connect_used(struct cb_sched *s, int late)
{
	int k = 0;

	for (int p = 0; p < s->n; p++) {
		if (s->head_send[p] == NONE && s->head_recv[p] == NONE)
			continue;
		if (!cb_comm_connected(s->comm, s->members[p]))
			s->want[k++] = s->members[p];
	}
	if (!k)
		return CB_OK;
	if (late)
		s->comm->late_connects += (uint32_t)k;
	return cb_comm_connect(s->comm, s->want, k, 0);
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
	if ((st = link_ops(s)) || (st = connect_used(s, 1)))
		return st;
	s->lo_seg = s->hi_seg = 0;
	return cb_worker_wait(s->comm, &w);
}

cb_status_t cb_sched_create(struct cb_comm *c, const struct cb_group *g,
                            const struct cb_sched_cfg *cfg,
                            struct cb_sched **out)
{
	struct cb_sched *s = calloc(1, sizeof(*s));
	size_t n = (size_t)g->n, m = cfg->max_ops ? cfg->max_ops : 1;

	if (!s)
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	s->comm = c;
	s->n = g->n;
	s->me = g->me;
	s->cfg = *cfg;
	s->cfg.max_ops = m;
	s->algo = cfg->algo ? cfg->algo : "schedule";
	s->members = malloc(n * sizeof(int));
	s->ops = malloc(m * sizeof(*s->ops));
	s->state = malloc(m);
	s->chain_next = malloc(m * sizeof(uint32_t));
	s->tag = malloc(m * sizeof(uint64_t));
	s->slot = malloc(m * sizeof(int32_t));
	s->req = calloc(m, sizeof(*s->req));
	s->seg_first = malloc((m + 1) * sizeof(uint32_t));
	s->ord = malloc(m * sizeof(uint32_t));
	s->cnt = malloc((m + 1) * sizeof(uint32_t));
	s->segs = calloc(CB_SCHED_WINDOW, sizeof(*s->segs));
	s->want = malloc(n * sizeof(int));
	uint32_t *pp = malloc(9 * n * sizeof(uint32_t));
	s->head_send = pp;
	if (!s->members || !s->ops || !s->state || !s->chain_next || !s->tag ||
	    !s->slot || !s->req || !s->seg_first || !s->ord || !s->cnt ||
	    !s->segs || !s->want || !pp)
		goto nomem;
	s->head_recv = pp + n;
	s->tail_send = pp + 2 * n;
	s->tail_recv = pp + 3 * n;
	s->pos_send = pp + 4 * n;
	s->pos_recv = pp + 5 * n;
	s->note_send = pp + 6 * n;
	s->note_recv = pp + 7 * n;
	s->note_next = pp + 8 * n;
	memcpy(s->members, g->members, n * sizeof(int));
	if (cfg->tmp_bytes) {
		/* From the communicator: registered, of the run's kind, and
		 * shareable with local peers (shm reads it in place, as it
		 * does the user's). */
		void *t;
		if (cb_comm_scratch_alloc(c, cfg->tmp_bytes, &t))
			goto fail;
		s->tmp = t;
		s->tmp_mem = cb_comm_mem_find(c, t, 0);
		if (!cb_mem_is_gpu(s->tmp_mem))
			memset(s->tmp, 0, cfg->tmp_bytes);
	}
	s->fused_all = 1;
	for (int i = 0; i < g->n; i++)
		if (i != g->me && !cb_comm_can_recv_reduce(c, g->members[i]))
			s->fused_all = 0;
	if (!s->fused_all && cfg->stage_per_seg && cfg->stage_bytes) {
		size_t sb = (size_t)CB_SCHED_WINDOW * cfg->stage_per_seg *
		            cfg->stage_bytes;
		s->stage_total = sb;
		if (c->mem_kind == CB_MEM_GPU) {
			/* received where the reduction reads it: on the
			 * device */
			void *t;
			if (cb_comm_scratch_alloc(c, sb, &t))
				goto fail;
			s->stage = t;
			s->stage_dev = 1;
			s->stage_mem = cb_comm_mem_find(c, t, 0);
		} else {
			/* Not touched here: slot groups of segments an
			 * algorithm never opens (one-segment schedules use
			 * one group) stay untouched virtual memory. */
			if (posix_memalign((void **)&s->stage, 4096, sb))
				goto nomem;
			if (cb_comm_mem_reg(c, s->stage, sb, CB_MEM_HOST, -1,
			                    &s->stage_mem))
				goto fail;
		}
	}
	*out = s;
	return CB_OK;
nomem:
	cb_fail(CB_ERR_NOMEM, "out of memory for a %s schedule", s->algo);
fail:
	cb_sched_destroy(s);
	return cb_fail_status() ? cb_fail_status() : CB_ERR_NOMEM;
}

void cb_sched_destroy(struct cb_sched *s)
{
	if (!s)
		return;
	free(s->members);
	free(s->ops);
	free(s->state);
	free(s->chain_next);
	free(s->tag);
	free(s->slot);
	free(s->req);
	free(s->seg_first);
	free(s->ord);
	free(s->cnt);
	free(s->segs);
	free(s->want);
	free(s->head_send);
	if (s->tmp)
		cb_comm_mem_free(s->comm, s->tmp, s->cfg.tmp_bytes);
	if (s->stage_dev) {
		cb_comm_mem_free(s->comm, s->stage, s->stage_total);
	} else {
		if (s->stage_mem)
			cb_comm_mem_dereg(s->comm, s->stage);
		free(s->stage);
	}
	free(s);
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
	if ((st = link_ops(pl->s)) || (st = connect_used(pl->s, 0)))
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
