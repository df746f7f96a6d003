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
 */
#include "coll/sched.h"

#include <stdlib.h>
#include <string.h>

#include "coll/reduce.h"
#include "core/log.h"

/* ST_REDUCE: received, its reduction not yet queued (the engine had no
 * room); ST_REDUCING: the reduction is queued on the device engine. */
enum { ST_IDLE, ST_POSTED, ST_REDUCE, ST_REDUCING, ST_DONE };

#define NONE UINT32_MAX

struct segstate {
	uint32_t lo, hi,
	        end;      /* current round's ops [lo, hi); seg ends at end */
	uint32_t pending; /* ops of [lo, hi) not done */
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
	uint8_t *state;
	uint32_t *chain_next;
	uint64_t *tag;
	int32_t *slot; /* staging slot of a receive-and-reduce, or -1 */
	struct cb_req *req;
	uint32_t *head_send, *head_recv; /* [n]: next op to post per chain */
	uint32_t *tail_send, *tail_recv; /* [n]: while linking */
	uint32_t *pos_send, *pos_recv;   /* [n]: position within the segment */
	uint32_t *lastseg_send, *lastseg_recv;
	uint32_t *seg_first; /* [nsegs + 1] */
	int *want;           /* [n]: peers to connect */
	struct segstate *segs;
	uint32_t nsegs;
	struct cb_coll_stats stats;
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
			s->overflow = 2;
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

/* Chains, tags, staging slots and segment boundaries for the ops added. */
static cb_status_t link_ops(struct cb_sched *s)
{
	uint32_t stage_used = 0, cur_seg = NONE;

	if (s->overflow == 1)
		return cb_fail(CB_ERR_INVALID,
		               "%s: schedule longer than planned (%zu "
		               "operations)",
		               s->algo, s->cfg.max_ops);
	if (s->overflow == 2)
		return cb_fail(CB_ERR_INVALID,
		               "%s: schedule not in (segment, round) order",
		               s->algo);
	for (int p = 0; p < s->n; p++) {
		s->head_send[p] = s->head_recv[p] = NONE;
		s->tail_send[p] = s->tail_recv[p] = NONE;
		s->lastseg_send[p] = s->lastseg_recv[p] = NONE;
	}
	s->nsegs = 0;
	for (uint32_t i = 0; i < s->nops; i++) {
		struct cb_sop *op = &s->ops[i];
		s->state[i] = ST_IDLE;
		s->chain_next[i] = NONE;
		s->slot[i] = -1;
		if (op->seg != cur_seg) {
			/* segments are numbered by the generator; keep only
			 * those that have ops, in order */
			cur_seg = op->seg;
			s->seg_first[s->nsegs++] = i;
			stage_used = 0;
		}
		if (op->kind == CB_SOP_COPY)
			continue;
		if (op->peer < 0 || op->peer >= s->n || op->peer == s->me)
			return cb_fail(CB_ERR_INVALID,
			               "%s: schedule names peer %d of %d "
			               "(self or out of range)",
			               s->algo, op->peer, s->n);
		int sending = op->kind == CB_SOP_SEND;
		uint32_t *head = sending ? s->head_send : s->head_recv;
		uint32_t *tail = sending ? s->tail_send : s->tail_recv;
		uint32_t *pos = sending ? s->pos_send : s->pos_recv;
		uint32_t *lseg = sending ? s->lastseg_send : s->lastseg_recv;
		int p = op->peer;
		if (tail[p] == NONE)
			head[p] = i;
		else
			s->chain_next[tail[p]] = i;
		tail[p] = i;
		if (lseg[p] != op->seg) {
			lseg[p] = op->seg;
			pos[p] = 0;
		}
		s->tag[i] = (s->seq << 40) |
		            ((uint64_t)(op->seg & 0xffffff) << 16) |
		            (pos[p]++ & 0xffff);
		if (op->kind == CB_SOP_RECV_REDUCE &&
		    !cb_comm_can_recv_reduce(s->comm, s->members[p])) {
			if ((int)stage_used >= s->cfg.stage_per_seg ||
			    op->bytes > s->cfg.stage_bytes)
				return cb_fail(CB_ERR_INVALID,
				               "%s: receive-and-reduce beyond "
				               "the planned staging",
				               s->algo);
			s->slot[i] =
			        (int32_t)(((s->nsegs - 1) % CB_SCHED_WINDOW) *
			                          (uint32_t)
			                                  s->cfg.stage_per_seg +
			                  stage_used++);
		}
	}
	s->seg_first[s->nsegs] = (uint32_t)s->nops;
	return CB_OK;
}

/* The end of the round that starts at op @lo (ops of a segment are sorted
 * by round). */
static uint32_t round_end(const struct cb_sched *s, uint32_t lo, uint32_t end)
{
	uint32_t hi = lo;

	while (hi < end && s->ops[hi].round == s->ops[lo].round)
		hi++;
	return hi;
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
		st = cb_comm_isend(c, peer, dst, op->bytes, s->mem[op->buf],
		                   s->tag[i], &s->req[i]);
		if (st == CB_OK) {
			s->stats.msgs_sent++;
			s->stats.bytes_sent += op->bytes;
		}
		break;
	case CB_SOP_RECV:
		st = cb_comm_irecv(c, peer, dst, op->bytes, s->mem[op->buf],
		                   s->tag[i], &s->req[i]);
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

/* A posted op finished: account, and reduce a staged receive (on host
 * memory at once; on device memory the reduction is queued and the op
 * stays pending in ST_REDUCE). */
static void retire(struct cb_sched *s, uint32_t i)
{
	struct cb_sop *op = &s->ops[i];

	s->state[i] = ST_DONE;
	if (op->kind == CB_SOP_SEND || op->kind == CB_SOP_COPY)
		return;
	s->stats.msgs_recv++;
	s->stats.bytes_recv += s->req[i].tp.bytes;
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

static cb_status_t stalled(struct cb_sched *s, uint32_t lo_seg)
{
	struct segstate *g = &s->segs[lo_seg % CB_SCHED_WINDOW];
	const struct cb_sop *op = NULL;
	uint32_t i;

	for (i = g->lo; i < g->hi; i++)
		if (s->state[i] != ST_DONE && s->ops[i].kind != CB_SOP_COPY) {
			op = &s->ops[i];
			break;
		}
	if (!op)
		return cb_fail(CB_ERR_TIMEOUT,
		               "timed out after %g s without progress in %s %s",
		               s->comm->timeout_s, s->algo,
		               cb_coll_name(s->a.coll));
	int peer = s->members[op->peer];
	int recv = op->kind != CB_SOP_SEND;
	cb_comm_stalled_on(s->comm, peer);
	return cb_fail(CB_ERR_TIMEOUT,
	               "timed out after %g s without progress: rank %d waits "
	               "for rank %d (host %s) to %s %s %s segment %u round "
	               "%u%s",
	               s->comm->timeout_s, s->comm->rank, peer,
	               cb_comm_host_name(s->comm, peer),
	               recv ? "send" : "receive", s->algo,
	               cb_coll_name(s->a.coll), s->ops[i].seg, op->round,
	               s->state[i] == ST_IDLE ? " (not yet posted)" : "");
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

cb_status_t cb_sched_run(struct cb_sched *s)
{
	struct cb_comm *c = s->comm;
	struct cb_wait wait = { 0 };
	uint32_t lo_seg = 0, hi_seg = 0;
	cb_status_t st;

	s->seq++;
	if ((st = link_ops(s)) || (st = connect_used(s, 1)))
		return st;
	while (lo_seg < s->nsegs) {
		int moved = 0;

		/* Open segments up to the window. */
		while (hi_seg < s->nsegs && hi_seg < lo_seg + CB_SCHED_WINDOW) {
			struct segstate *g = &s->segs[hi_seg % CB_SCHED_WINDOW];
			g->lo = s->seg_first[hi_seg];
			g->end = s->seg_first[hi_seg + 1];
			g->hi = round_end(s, g->lo, g->end);
			g->pending = g->hi - g->lo;
			hi_seg++;
		}
		for (uint32_t k = lo_seg; k < hi_seg; k++) {
			struct segstate *g = &s->segs[k % CB_SCHED_WINDOW];
			for (;;) {
				/* Post what the round allows. */
				for (uint32_t i = g->lo; i < g->hi; i++) {
					struct cb_sop *op = &s->ops[i];
					if (s->state[i] != ST_IDLE)
						continue;
					uint32_t *head = NULL;
					if (op->kind == CB_SOP_SEND)
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
					moved = 1;
				}
				/* Retire what completed. */
				for (uint32_t i = g->lo; i < g->hi; i++) {
					int done = 1;
					if (s->state[i] == ST_REDUCE ||
					    s->state[i] == ST_REDUCING) {
						if ((st = reduce_dev(s, i,
						                     &done)))
							return st;
						if (done) {
							g->pending--;
							moved = 1;
						}
						continue;
					}
					if (s->state[i] != ST_POSTED)
						continue;
					st = cb_comm_test(&s->req[i]);
					if (st == CB_AGAIN)
						continue;
					if (st)
						return st;
					retire(s, i);
					moved = 1;
					if (s->state[i] == ST_DONE)
						g->pending--;
				}
				if (g->pending || g->hi == g->end)
					break;
				/* Round complete: on to the next one. */
				g->lo = g->hi;
				g->hi = round_end(s, g->lo, g->end);
				g->pending = g->hi - g->lo;
			}
		}
		while (lo_seg < hi_seg) {
			struct segstate *g = &s->segs[lo_seg % CB_SCHED_WINDOW];
			if (g->pending || g->hi != g->end)
				break;
			lo_seg++;
		}
		if (lo_seg == s->nsegs)
			break;
		if ((st = cb_comm_progress(c)) < 0)
			return st;
		if (cb_wait_expired(&wait, moved || st == CB_OK, c->timeout_s))
			return stalled(s, lo_seg);
	}
	return CB_OK;
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
	s->segs = calloc(CB_SCHED_WINDOW, sizeof(*s->segs));
	s->want = malloc(n * sizeof(int));
	uint32_t *pp = malloc(8 * n * sizeof(uint32_t));
	s->head_send = pp;
	if (!s->members || !s->ops || !s->state || !s->chain_next || !s->tag ||
	    !s->slot || !s->req || !s->seg_first || !s->segs || !s->want || !pp)
		goto nomem;
	s->head_recv = pp + n;
	s->tail_send = pp + 2 * n;
	s->tail_recv = pp + 3 * n;
	s->pos_send = pp + 4 * n;
	s->pos_recv = pp + 5 * n;
	s->lastseg_send = pp + 6 * n;
	s->lastseg_recv = pp + 7 * n;
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
