/* SPDX-License-Identifier: MIT */
/*
 * coll/ring.c - ring allreduce: reduce-scatter, then allgather.
 *
 * The buffer is cut into p segments (sizes differ by at most one element, so
 * any count works, zero and counts below p included).  Rank r, with left
 * neighbour L and right neighbour R:
 *
 *   reduce-scatter, step s = 0 .. p-2:
 *       send segment (r - s) mod p to R, receive (r - s - 1) mod p from L,
 *       out[seg] = in[seg] OP received
 *   allgather, step t = 0 .. p-2:
 *       send segment (r + 1 - t) mod p to R, receive (r - t) mod p from L
 *       straight into out
 *
 * After reduce-scatter rank r holds the reduced segment (r + 1) mod p.  It
 * runs on the schedule executor (coll/sched.h) like every other algorithm:
 * each step's segment is cut into chunks (--chunk-bytes, default 512 KiB),
 * one executor segment per chunk index and one round per step, so chunk j
 * of step s goes out as soon as chunk j of step s-1 has arrived and been
 * reduced, while up to CB_SCHED_WINDOW chunks are in flight each way.  So
 * reduction overlaps the wire, and a large message never needs more
 * staging than the window.  Where the transport can reduce on arrival
 * (irecv_reduce: shm reads the peer's buffer directly), the reduce-scatter
 * receives skip the staging buffer and its extra pass; on device memory
 * the executor queues a staged chunk's reduction on the device engine.
 * Where the transport writes into mapped peer memory (shm), the allgather
 * chunks are the executor's puts, written straight into the right
 * neighbour's receive buffer instead of sent, and the receiver waits for
 * their notifications (coll/ring_put.h): the reducer's freshly written
 * lines go out from its own cache instead of being pulled out of it by the
 * other core.
 *
 * Cost (alpha-beta-gamma, n bytes, p ranks):
 *   2(p-1) alpha + 2 (p-1)/p n beta + (p-1)/p n gamma
 * bandwidth-optimal, latency linear in p.
 *
 * The other collectives run on the executor the same way, one segment per
 * chunk j of the blocks (or of the buffer), its steps as rounds:
 *
 *   reduce_scatter (n = p blocks of count elements), step s = 0 .. p-2:
 *       send block (r - s - 1) mod p to R (the input at step 0, else the
 *       partial sum of the step before), receive block (r - s - 2) mod p
 *       from L and reduce it with the input into a scratch chunk (two per
 *       segment, alternating), at the last step into recvbuf: rank r ends
 *       with block r.
 *   allgather, step s = 0 .. p-2: send block (r - s) mod p to R (own from
 *       sendbuf at step 0), receive (r - s - 1) mod p from L into place;
 *       out of place, the own block is copied in round 0.
 *   broadcast: a chain root -> root+1 -> ... -> root-1, each chunk received
 *       (round 0) then passed on (round 1); pieces follow each other down
 *       the chain, so the pipeline fills in p - 2 chunk times.
 *
 * Cost, k chunks (s bytes each) per block or buffer, m bytes the row size:
 *   reduce_scatter  (p-1) k alpha + (p-1)/p m beta + (p-1)/p m gamma
 *   allgather       (p-1) k alpha + (p-1)/p m beta
 *   broadcast       (p - 2 + k)(alpha + s beta) ~ m beta for large m
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/reduce.h"
#include "coll/ring_put.h"
#include "coll/sched.h"
#include "core/log.h"

#define RING_CHUNK_DEFAULT (512u << 10)

struct cb_plan {
	struct cb_comm *comm;
	struct cb_group group;
	int left, right; /* comm ranks */
	size_t chunk_bytes;
	size_t max_count;
	uint64_t seq; /* allreduce calls so far: ring_put's tags */
	struct cb_sched *sched;
	enum cb_coll coll;
	struct ring_put put; /* the one-sided allgather (coll/ring_put.h) */
};

static inline int mod(int x, int p)
{
	return ((x % p) + p) % p;
}

static inline size_t ring_chunk(const struct cb_plan *pl, size_t es)
{
	size_t c = pl->chunk_bytes / es * es;

	return c ? c : es;
}

/* ---- allreduce ---- */

/* Block received at step s (reduce-scatter, then allgather); the one sent
 * is the one received the step before (own at step 0). */
static inline int ar_recv_blk(int p, int r, int s)
{
	return s < p - 1 ? mod(r - s - 1, p) : mod(r - (s - (p - 1)), p);
}
static inline int ar_send_blk(int p, int r, int s)
{
	return s == 0 ? r : ar_recv_blk(p, r, s - 1);
}

/* Bytes [*off, *off + *len) of chunk j of block b; 0 where it has none. */
static inline int ar_chunk(size_t count, int p, int b, size_t j, size_t ce,
                           size_t es, size_t *off, size_t *len)
{
	size_t blen = cb_block_len(count, p, b), lo = j * ce;

	if (lo >= blen)
		return 0;
	*off = (cb_block_start(count, p, b) + lo) * es;
	*len = (blen - lo < ce ? blen - lo : ce) * es;
	return 1;
}

/*
 * One segment per chunk j of the blocks, its steps as rounds: round s of
 * segment j sends chunk j of the block of step s to the right and receives
 * (reduce-scatter: and reduces) chunk j of the block of step s from the
 * left, so chunk j of a step goes out as soon as chunk j of the step
 * before is in.  The wire order is a step of every chunk of a group of
 * CB_SCHED_WINDOW chunks, then the next step: the segments interleave, up
 * to CB_SCHED_WINDOW chunks in flight each way.  The allgather's sends are
 * puts where the right offered its buffer (coll/ring_put.h), and the
 * receives from a left that writes are its notifications.
 */
static void gen_allreduce(struct cb_plan *pl, const struct cb_coll_args *a)
{
	struct cb_sched *s = pl->sched;
	int p = pl->group.n, r = pl->group.me, steps = 2 * (p - 1);
	int left = (r + p - 1) % p, right = (r + 1) % p;
	size_t es = cb_dtype_bytes(a->dtype), ce = ring_chunk(pl, es) / es;
	size_t nch = cb_div_up(cb_block_len(a->count, p, 0), ce), off, len;

	if (p == 1 || a->count == 0) {
		if (a->count && a->sendbuf != a->recvbuf)
			cb_sched_copy(s, 0, 0, CB_SB_RECV, 0, CB_SB_SEND, 0,
			              a->count * es);
		return;
	}
	for (size_t g0 = 0; g0 < nch; g0 += CB_SCHED_WINDOW) {
		size_t g1 =
		        nch - g0 < CB_SCHED_WINDOW ? nch : g0 + CB_SCHED_WINDOW;
		for (int st = 0; st < steps; st++) {
			int sb = ar_send_blk(p, r, st),
			    rb = ar_recv_blk(p, r, st);
			int ag = st >= p - 1;
			for (size_t j = g0; j < g1; j++) {
				uint32_t seg = (uint32_t)j;
				if (ar_chunk(a->count, p, sb, j, ce, es, &off,
				             &len)) {
					if (ag && pl->put.to_right)
						cb_sched_put(s, seg, st, right,
						             CB_SB_RECV, off,
						             off, len);
					else
						cb_sched_send(s, seg, st, right,
						              st ? CB_SB_RECV
						                 : CB_SB_SEND,
						              off, len);
				}
				if (!ar_chunk(a->count, p, rb, j, ce, es, &off,
				              &len))
					continue;
				if (!ag)
					cb_sched_recv_reduce(
					        s, seg, st, left, CB_SB_RECV,
					        off, CB_SB_SEND, off, len);
				else if (pl->put.notify)
					cb_sched_notify(s, seg, st, left, len);
				else
					cb_sched_recv(s, seg, st, left,
					              CB_SB_RECV, off, len);
			}
		}
	}
}

/* The stall line's words for an allreduce op: its phase, step and chunk. */
static void ar_where(char *buf, size_t cap, const struct cb_sop *op, int p)
{
	int st = op->round;

	snprintf(buf, cap, "%s step %d, chunk %u",
	         st < p - 1 ? "reduce-scatter" : "allgather",
	         st < p - 1 ? st : st - (p - 1), op->seg);
}

/* cb_sched_put_path's question: how this call's allgather goes. */
static cb_status_t ar_put_ready(struct cb_comm *c, void *arg,
                                struct cb_sched_put_path *out)
{
	struct ring_put *rp = arg;
	cb_status_t st = cb_ring_put_ready(c, rp);

	if (st)
		return st;
	out->on = rp->put;
	out->rm = rp->rrm;
	out->roff = rp->in.off;
	return CB_OK;
}

static cb_status_t ring_allreduce_run(struct cb_plan *pl,
                                      const struct cb_coll_args *a)
{
	struct cb_comm *comm = pl->comm;
	const struct cb_mem *rmem;
	cb_status_t st;

	cb_sched_begin(pl->sched, a);
	if (pl->group.n == 1 || a->count == 0) {
		gen_allreduce(pl, a);
		return cb_sched_run(pl->sched);
	}
	pl->seq++;
	rmem = cb_sched_mem(pl->sched, CB_SB_RECV);
	if ((st = cb_ring_put_begin(comm, &pl->put, rmem, a->recvbuf, pl->seq)))
		return st;
	gen_allreduce(pl, a);
	if (pl->put.to_right)
		cb_sched_put_path(pl->sched, ar_put_ready, &pl->put);
	if ((st = cb_sched_run(pl->sched)))
		return st;
	return cb_ring_put_end(comm, &pl->put);
}

/* ---- reduce_scatter, allgather, broadcast ---- */

/* Scratch chunk h (0, 1) of segment j: segment j + CB_SCHED_WINDOW opens
 * only once segment j is done, and every rank has work in every segment
 * (each block's chunk j is sent or received at some step). */
static inline size_t rs_tmp(size_t j, int h, size_t chunk)
{
	return ((j % CB_SCHED_WINDOW) * 2 + (size_t)h) * chunk;
}

static void gen_reduce_scatter(struct cb_plan *pl, const struct cb_coll_args *a)
{
	struct cb_sched *s = pl->sched;
	int p = pl->group.n, r = pl->group.me;
	int left = (r + p - 1) % p, right = (r + 1) % p;
	size_t es = cb_dtype_bytes(a->dtype), blk = a->count * es;
	size_t chunk = ring_chunk(pl, es);

	if (p == 1) {
		if (a->sendbuf != a->recvbuf)
			cb_sched_copy(s, 0, 0, CB_SB_RECV, 0, CB_SB_SEND, 0,
			              blk);
		return;
	}
	for (size_t po = 0, j = 0; po < blk; po += chunk, j++) {
		size_t len = blk - po < chunk ? blk - po : chunk;
		for (int st = 0; st < p - 1; st++) {
			size_t sb = (size_t)mod(r - st - 1, p) * blk + po;
			size_t rb = (size_t)mod(r - st - 2, p) * blk + po;
			if (st == 0)
				cb_sched_send(s, (uint32_t)j, st, right,
				              CB_SB_SEND, sb, len);
			else
				cb_sched_send(
				        s, (uint32_t)j, st, right, CB_SB_TMP,
				        rs_tmp(j, (st - 1) & 1, chunk), len);
			if (st == p - 2)
				cb_sched_recv_reduce(s, (uint32_t)j, st, left,
				                     CB_SB_RECV, po, CB_SB_SEND,
				                     rb, len);
			else
				cb_sched_recv_reduce(s, (uint32_t)j, st, left,
				                     CB_SB_TMP,
				                     rs_tmp(j, st & 1, chunk),
				                     CB_SB_SEND, rb, len);
		}
	}
}

static void gen_allgather(struct cb_plan *pl, const struct cb_coll_args *a)
{
	struct cb_sched *s = pl->sched;
	int p = pl->group.n, r = pl->group.me;
	int left = (r + p - 1) % p, right = (r + 1) % p;
	size_t es = cb_dtype_bytes(a->dtype), blk = a->count * es;
	size_t chunk = ring_chunk(pl, es), mine = (size_t)r * blk;
	int inplace = (const char *)a->sendbuf == (char *)a->recvbuf + mine;

	for (size_t po = 0, j = 0; po < blk; po += chunk, j++) {
		size_t len = blk - po < chunk ? blk - po : chunk;
		for (int st = 0; st < p - 1; st++) {
			size_t sb = (size_t)mod(r - st, p) * blk + po;
			size_t rb = (size_t)mod(r - st - 1, p) * blk + po;
			if (st == 0)
				cb_sched_send(s, (uint32_t)j, 0, right,
				              CB_SB_SEND, po, len);
			else
				cb_sched_send(s, (uint32_t)j, st, right,
				              CB_SB_RECV, sb, len);
			cb_sched_recv(s, (uint32_t)j, st, left, CB_SB_RECV, rb,
			              len);
			/* after the first step's posts: it overlaps them */
			if (st == 0 && !inplace)
				cb_sched_copy(s, (uint32_t)j, 0, CB_SB_RECV,
				              mine + po, CB_SB_SEND, po, len);
		}
		if (p == 1 && !inplace)
			cb_sched_copy(s, (uint32_t)j, 0, CB_SB_RECV, po,
			              CB_SB_SEND, po, len);
	}
}

static void gen_broadcast(struct cb_plan *pl, const struct cb_coll_args *a)
{
	struct cb_sched *s = pl->sched;
	int p = pl->group.n, v = mod(pl->group.me - a->root, p);
	int left = mod(pl->group.me - 1, p), right = (pl->group.me + 1) % p;
	size_t es = cb_dtype_bytes(a->dtype), bytes = a->count * es;
	size_t chunk = ring_chunk(pl, es);

	for (size_t off = 0, j = 0; off < bytes; off += chunk, j++) {
		size_t len = bytes - off < chunk ? bytes - off : chunk;
		if (v == 0) {
			if (p > 1)
				cb_sched_send(s, (uint32_t)j, 0, right,
				              CB_SB_SEND, off, len);
			if (a->sendbuf != a->recvbuf)
				cb_sched_copy(s, (uint32_t)j, 0, CB_SB_RECV,
				              off, CB_SB_SEND, off, len);
			continue;
		}
		cb_sched_recv(s, (uint32_t)j, 0, left, CB_SB_RECV, off, len);
		if (v < p - 1)
			cb_sched_send(s, (uint32_t)j, 1, right, CB_SB_RECV, off,
			              len);
	}
}

static cb_status_t ring_run(struct cb_plan *pl, const struct cb_coll_args *a)
{
	if (a->count > pl->max_count)
		return cb_fail(CB_ERR_INVALID, "ring: count above the plan's");
	if (a->coll != pl->coll)
		return cb_fail(CB_ERR_INVALID, "ring: a %s plan cannot run %s",
		               cb_coll_name(pl->coll), cb_coll_name(a->coll));
	if (a->coll == CB_COLL_ALLREDUCE)
		return ring_allreduce_run(pl, a);
	cb_sched_begin(pl->sched, a);
	switch (a->coll) {
	case CB_COLL_REDUCE_SCATTER:
		gen_reduce_scatter(pl, a);
		break;
	case CB_COLL_ALLGATHER:
		gen_allgather(pl, a);
		break;
	case CB_COLL_BROADCAST:
		gen_broadcast(pl, a);
		break;
	default:
		break; /* ring_sched_size() built no other */
	}
	return cb_sched_run(pl->sched);
}

/* Operations and scratch of one call at the plan's largest count. */
static cb_status_t ring_sched_size(const struct cb_plan_cfg *cfg, size_t chunk,
                                   struct cb_sched_cfg *sc)
{
	size_t p = (size_t)cfg->group.n;
	size_t nseg =
	        (cfg->max_count * cb_dtype_bytes(cfg->dtype) + chunk - 1) /
	        chunk;

	sc->algo = "ring";
	switch (cfg->coll) {
	case CB_COLL_ALLREDUCE:
		/* nseg counted over the whole buffer: more than the largest
		 * block has; a page of scratch offers the left a region to
		 * write into at build (coll/ring_put.h) */
		sc->max_ops = nseg * 4 * (p - 1) + 1;
		sc->tmp_bytes = p > 1 ? 4096 : 0;
		sc->stage_bytes = chunk;
		sc->stage_per_seg = 1;
		sc->where = ar_where;
		sc->trail_sends = 1;
		return CB_OK;
	case CB_COLL_REDUCE_SCATTER:
		sc->max_ops = nseg * 2 * (p - 1) + 1;
		if (p > 2)
			sc->tmp_bytes =
			        (nseg < CB_SCHED_WINDOW ? nseg
			                                : CB_SCHED_WINDOW) *
			        2 * chunk;
		sc->stage_bytes = chunk;
		sc->stage_per_seg = (int)p - 1;
		return CB_OK;
	case CB_COLL_ALLGATHER:
		sc->max_ops = nseg * (2 * (p - 1) + 1) + 1;
		return CB_OK;
	case CB_COLL_BROADCAST:
		sc->max_ops = nseg * 3 + 1;
		return CB_OK;
	default:
		return cb_fail(CB_ERR_INVALID, "ring: no %s",
		               cb_coll_name(cfg->coll));
	}
}

static void ring_plan_free(struct cb_plan *pl);

static cb_status_t ring_plan_build(struct cb_comm *comm,
                                   const struct cb_plan_cfg *cfg,
                                   struct cb_plan **out)
{
	struct cb_plan *pl = calloc(1, sizeof(*pl));
	const struct cb_group *g = &cfg->group;

	if (!pl)
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	pl->comm = comm;
	pl->group = *g;
	pl->left = g->members[(g->me + g->n - 1) % g->n];
	pl->right = g->members[(g->me + 1) % g->n];
	pl->max_count = cfg->max_count;
	pl->chunk_bytes =
	        cfg->chunk_bytes ? cfg->chunk_bytes : RING_CHUNK_DEFAULT;
	/* Whole elements per chunk. */
	size_t es = cb_dtype_bytes(cfg->dtype);
	pl->chunk_bytes = pl->chunk_bytes / es * es;
	if (pl->chunk_bytes < es)
		pl->chunk_bytes = es;
	pl->coll = cfg->coll;
	/* Every ring schedule talks to these two only. */
	int nb[2] = { pl->left, pl->right };
	struct cb_sched_cfg sc = { 0 };
	cb_status_t st = g->n > 1 ? cb_comm_connect(comm, nb, 2, 0) : CB_OK;
	if (st || (st = ring_sched_size(cfg, pl->chunk_bytes, &sc)) ||
	    (st = cb_sched_create(comm, g, &sc, &pl->sched))) {
		free(pl);
		return st;
	}
	if (cfg->coll == CB_COLL_ALLREDUCE && g->n > 1) {
		void *probe = cb_sched_tmp(pl->sched);
		if ((st = cb_ring_put_agree(
		             comm, &pl->put, !cfg->ring_put_off, pl->left,
		             pl->right, cb_comm_mem_find(comm, probe, 0)))) {
			ring_plan_free(pl);
			return st;
		}
	}
	*out = pl;
	return CB_OK;
}

static void ring_plan_free(struct cb_plan *pl)
{
	if (!pl)
		return;
	cb_sched_destroy(pl->sched);
	cb_ring_put_free(pl->comm, &pl->put);
	free(pl);
}

static const struct cb_coll_stats *ring_stats(const struct cb_plan *pl)
{
	return cb_sched_stats(pl->sched);
}

static double ring_model_us(const struct cb_model_in *in)
{
	int p = in->n;
	/* beta and gamma in GB/s = 1e3 bytes per us */
	double bw = in->beta_gbps * 1e3, m = (double)in->bytes, k, t;

	if (p < 2)
		return 0.0;
	switch (in->coll) {
	case CB_COLL_ALLREDUCE:
		t = 2.0 * (p - 1) * in->alpha_us + 2.0 * (p - 1) / p * m / bw;
		return t + cb_model_reduce_us(in, (double)(p - 1) / p * m);
	case CB_COLL_REDUCE_SCATTER:
	case CB_COLL_ALLGATHER:
		/* m is the row's size, all p blocks */
		k = cb_model_pieces(in->bytes / (size_t)p, RING_CHUNK_DEFAULT);
		t = (p - 1) * k * in->alpha_us + (double)(p - 1) / p * m / bw;
		if (in->coll == CB_COLL_REDUCE_SCATTER)
			t += cb_model_reduce_us(in, (double)(p - 1) / p * m);
		return t;
	case CB_COLL_BROADCAST:
		k = cb_model_pieces(in->bytes, RING_CHUNK_DEFAULT);
		return (p - 2 + k) * cb_model_msg_us(in, m / k);
	default:
		return 0.0;
	}
}

const struct cb_algo cb_algo_ring = {
	.name = "ring",
	.description = "reduce-scatter + allgather around a ring, pipelined in "
	               "chunks; bandwidth-optimal; chained broadcast",
	.colls = 1u << CB_COLL_ALLREDUCE | 1u << CB_COLL_REDUCE_SCATTER |
	         1u << CB_COLL_ALLGATHER | 1u << CB_COLL_BROADCAST,
	.refuse = NULL, /* any rank count */
	.model_us = ring_model_us,
	.plan_build = ring_plan_build,
	.run = ring_run,
	.plan_free = ring_plan_free,
	.stats = ring_stats,
};
