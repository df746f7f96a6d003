/* SPDX-License-Identifier: MIT */
/*
 * coll/sched_build.c - the schedule executor's first half (coll/sched.h):
 * the operations a generator adds, their linking into per-pair chains,
 * segments and staging slots, and the executor's memory.  Running a call,
 * and the plans that are a schedule and a generator, are coll/sched.c.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/sched_int.h"
#include "core/log.h"
#include "core/mem.h"

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

/* One operation on buffer @buf at @off (a copy's or reduce's destination);
 * @sbuf at @soff is a copy's or reduce's source, @soff a put's offset at
 * the peer. */
static int op(struct cb_sched *s, enum cb_sop_kind kind, uint32_t seg,
              int round, int peer, enum cb_sbuf buf, size_t off, int sbuf,
              size_t soff, size_t bytes)
{
	return add(s, &(struct cb_sop){ .kind = kind,
	                                .buf = (uint8_t)buf,
	                                .sbuf = (uint8_t)sbuf,
	                                .round = (uint16_t)round,
	                                .seg = seg,
	                                .peer = peer,
	                                .off = off,
	                                .soff = soff,
	                                .bytes = bytes });
}

int cb_sched_send(struct cb_sched *s, uint32_t seg, int round, int peer,
                  enum cb_sbuf buf, size_t off, size_t bytes)
{
	return op(s, CB_SOP_SEND, seg, round, peer, buf, off, 0, 0, bytes);
}

int cb_sched_recv(struct cb_sched *s, uint32_t seg, int round, int peer,
                  enum cb_sbuf buf, size_t off, size_t bytes)
{
	return op(s, CB_SOP_RECV, seg, round, peer, buf, off, 0, 0, bytes);
}

int cb_sched_recv_reduce(struct cb_sched *s, uint32_t seg, int round, int peer,
                         enum cb_sbuf dst, size_t doff, enum cb_sbuf src,
                         size_t soff, size_t bytes)
{
	return op(s, CB_SOP_RECV_REDUCE, seg, round, peer, dst, doff, src, soff,
	          bytes);
}

int cb_sched_copy(struct cb_sched *s, uint32_t seg, int round, enum cb_sbuf dst,
                  size_t doff, enum cb_sbuf src, size_t soff, size_t bytes)
{
	if (dst == src && doff == soff)
		return 0;
	return op(s, CB_SOP_COPY, seg, round, -1, dst, doff, src, soff, bytes);
}

int cb_sched_put(struct cb_sched *s, uint32_t seg, int round, int peer,
                 enum cb_sbuf buf, size_t off, size_t roff, size_t bytes)
{
	return op(s, CB_SOP_PUT, seg, round, peer, buf, off, 0, roff, bytes);
}

int cb_sched_notify(struct cb_sched *s, uint32_t seg, int round, int peer,
                    size_t bytes)
{
	return op(s, CB_SOP_NOTIFY, seg, round, peer, CB_SB_RECV, 0, 0, 0,
	          bytes);
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

const struct cb_mem *cb_sched_mem(const struct cb_sched *s, enum cb_sbuf b)
{
	return s->mem[b];
}

const struct cb_coll_stats *cb_sched_stats(const struct cb_sched *s)
{
	return &s->stats;
}

/* ord: the ops in (segment, round) order (a stable counting sort by
 * segment where they interleave), and where each segment starts. */
static cb_status_t order_ops(struct cb_sched *s)
{
	uint32_t nops = (uint32_t)s->nops, cur = NONE;

	s->nsegs = 0;
	if (!s->interleaved) {
		/* already in order (add() saw to it): one pass */
		for (uint32_t x = 0; x < nops; x++) {
			s->ord[x] = x;
			if (s->ops[x].seg != cur) {
				cur = s->ops[x].seg;
				s->seg_first[s->nsegs++] = x;
			}
		}
		s->seg_first[s->nsegs] = nops;
		return CB_OK;
	}
	memset(s->cnt, 0, (s->nops + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < nops; i++) {
		if (s->ops[i].seg >= nops)
			return cb_fail(
			        CB_ERR_INVALID,
			        "%s: segment %u of an interleaved schedule "
			        "of %u operations",
			        s->algo, s->ops[i].seg, nops);
		s->cnt[s->ops[i].seg + 1]++;
	}
	for (uint32_t k = 1; k <= nops; k++)
		s->cnt[k] += s->cnt[k - 1];
	for (uint32_t i = 0; i < nops; i++)
		s->ord[s->cnt[s->ops[i].seg]++] = i;
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
cb_status_t cb_sched_link(struct cb_sched *s)
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
	/* where every peer's transport reduces on arrival, nothing is
	 * staged */
	return s->fused_all ? CB_OK : assign_slots(s);
}

/*
 * Connect the peers the linked schedule uses that are not connected yet.
 * Plans do it when they are built (a dry run of the generator); a call
 * that still finds one (a size or root the plan did not foresee) connects
 * it here, counted as a late connection.  Every rank of the call does the
 * same for its own peers, which are symmetric, so nobody waits for a peer
 * that will not come.
 */
cb_status_t cb_sched_connect_used(struct cb_sched *s, int late)
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
	if (s->tmp)
		cb_comm_mem_free(s->comm, s->tmp, s->cfg.tmp_bytes);
	if (s->stage_dev) {
		cb_comm_mem_free(s->comm, s->stage, s->stage_total);
		s->stage = NULL; /* not the heap's */
	} else if (s->stage_mem) {
		cb_comm_mem_dereg(s->comm, s->stage);
	}
	cb_free_all(s->members, s->ops, s->state, s->chain_next, s->tag,
	            s->slot, s->req, s->seg_first, s->ord, s->cnt, s->segs,
	            s->want, s->head_send, s->stage, s);
}
