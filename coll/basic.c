/* SPDX-License-Identifier: MIT */
/*
 * coll/basic.c - the simple patterns: the naive baselines and the
 * point-to-point tests.
 *
 *   linear         broadcast, reduce: the root talks to every other rank
 *                  itself (n-1 messages per piece at the root), in pieces
 *                  of --chunk-bytes so reduce staging stays bounded.
 *   pairwise       alltoall: n-1 steps; at step k rank r sends its block
 *                  for r+k and receives the block of r-k (mod n), one step
 *                  at a time as MPI libraries do for large blocks.
 *   dissemination  barrier: ceil(log2 n) rounds; in round k rank r
 *                  signals r+2^k and waits for r-2^k (Hensgen, Finkel and
 *                  Manber 1988).  Zero-byte messages.
 *   direct         sendrecv: r sends to r+1 and receives from r-1, at
 *                  once (nccl-tests' sendrecv).
 *   latency        pingpong, osu_latency: 0 sends, 1 sends back; the row's
 *                  time is half the round trip.
 *   bw             pingpong, osu_bw: 0 sends a window of 64 messages, 1
 *                  answers with one empty message; the row's time is per
 *                  message.
 *   bibw           pingpong, osu_bibw: both send a window of 64 messages
 *                  to each other at once; algbw counts both directions.
 */
#include <stdio.h>
#include <string.h>

#include "coll/sched.h"

#define LINEAR_CHUNK_DEFAULT (512u << 10)
#define PP_WINDOW            64

static size_t es_of(const struct cb_plan_cfg *cfg)
{
	return cb_dtype_bytes(cfg->dtype);
}

static size_t nsegs(size_t bytes, size_t chunk)
{
	return bytes ? (bytes + chunk - 1) / chunk : 1;
}

/* ---- linear ---- */

static cb_status_t linear_size(const struct cb_plan_cfg *cfg,
                               struct cb_sched_cfg *sc)
{
	size_t chunk = cb_chunk_bytes(cfg, LINEAR_CHUNK_DEFAULT);
	size_t bytes = cfg->max_count * es_of(cfg);

	sc->algo = "linear";
	/* per piece: a copy and n-1 messages (root), one message (others) */
	sc->max_ops = nsegs(bytes, chunk) * ((size_t)cfg->group.n + 1);
	sc->stage_bytes = chunk;
	sc->stage_per_seg = cfg->group.n - 1;
	sc->tmp_bytes = 0;
	return CB_OK;
}

static void linear_gen(struct cb_sched *s, const struct cb_plan_cfg *cfg,
                       const struct cb_coll_args *a)
{
	int n = cfg->group.n, me = cfg->group.me, root = a->root;
	size_t es = es_of(cfg), bytes = a->count * es;
	size_t chunk = cb_chunk_bytes(cfg, LINEAR_CHUNK_DEFAULT);

	if (n == 1 || bytes == 0) {
		cb_sched_copy(s, 0, 0, CB_SB_RECV, 0, CB_SB_SEND, 0, bytes);
		return;
	}
	for (size_t k = 0, off = 0; off < bytes; k++, off += chunk) {
		size_t len = bytes - off < chunk ? bytes - off : chunk;
		uint32_t seg = (uint32_t)k;
		if (a->coll == CB_COLL_BROADCAST) {
			if (me == root) {
				cb_sched_copy(s, seg, 0, CB_SB_RECV, off,
				              CB_SB_SEND, off, len);
				for (int i = 1; i < n; i++)
					cb_sched_send(s, seg, 0, (root + i) % n,
					              CB_SB_SEND, off, len);
			} else {
				cb_sched_recv(s, seg, 0, root, CB_SB_RECV, off,
				              len);
			}
		} else { /* reduce */
			if (me == root) {
				cb_sched_copy(s, seg, 0, CB_SB_RECV, off,
				              CB_SB_SEND, off, len);
				for (int i = 1; i < n; i++)
					cb_sched_recv_reduce(
					        s, seg, 1, (root + i) % n,
					        CB_SB_RECV, off, CB_SB_RECV,
					        off, len);
			} else {
				cb_sched_send(s, seg, 0, root, CB_SB_SEND, off,
				              len);
			}
		}
	}
}

static const struct cb_sched_algo linear_sa = { linear_size, linear_gen };

static double linear_model_us(const struct cb_model_in *in)
{
	if (in->n < 2)
		return 0.0;
	/* The root's link carries n-1 copies, one after another. */
	double t = (in->n - 1) * cb_model_msg_us(in, (double)in->bytes);
	if (in->coll == CB_COLL_REDUCE)
		t += cb_model_reduce_us(in, (in->n - 1) * (double)in->bytes);
	return t;
}

const struct cb_algo cb_algo_linear = {
	.name = "linear",
	.description = "flat: the root sends to or receives from every rank "
	               "itself; the naive baseline",
	.colls = 1u << CB_COLL_BROADCAST | 1u << CB_COLL_REDUCE,
	.model_us = linear_model_us,
	CB_SCHED_PLAN_OPS(linear_sa),
};

/* ---- pairwise alltoall ---- */

static cb_status_t pairwise_size(const struct cb_plan_cfg *cfg,
                                 struct cb_sched_cfg *sc)
{
	size_t n = (size_t)cfg->group.n;

	sc->algo = "pairwise";
	sc->max_ops = 2 * n + 2;
	/* in place: the send blocks are saved here first */
	sc->tmp_bytes = n * cfg->max_count * es_of(cfg);
	return CB_OK;
}

static void pairwise_gen(struct cb_sched *s, const struct cb_plan_cfg *cfg,
                         const struct cb_coll_args *a)
{
	int n = cfg->group.n, me = cfg->group.me;
	size_t blk = a->count * es_of(cfg);
	enum cb_sbuf src = CB_SB_SEND;

	if (a->sendbuf == a->recvbuf) {
		cb_sched_copy(s, 0, 0, CB_SB_TMP, 0, CB_SB_SEND, 0,
		              (size_t)n * blk);
		src = CB_SB_TMP;
	}
	cb_sched_copy(s, 0, 1, CB_SB_RECV, (size_t)me * blk, src,
	              (size_t)me * blk, blk);
	if (blk == 0)
		return;
	for (int k = 1; k < n; k++) {
		int to = (me + k) % n, from = (me - k + n) % n;
		cb_sched_send(s, 0, 1 + k, to, src, (size_t)to * blk, blk);
		cb_sched_recv(s, 0, 1 + k, from, CB_SB_RECV, (size_t)from * blk,
		              blk);
	}
}

static const struct cb_sched_algo pairwise_sa = { pairwise_size, pairwise_gen };

static double pairwise_model_us(const struct cb_model_in *in)
{
	if (in->n < 2)
		return 0.0;
	/* bytes is the whole buffer: n blocks, n-1 of them leave */
	return (in->n - 1) * cb_model_msg_us(in, (double)in->bytes / in->n);
}

const struct cb_algo cb_algo_pairwise = {
	.name = "pairwise",
	.description = "n-1 steps; at step k send to rank+k, receive from "
	               "rank-k",
	.colls = 1u << CB_COLL_ALLTOALL,
	.model_us = pairwise_model_us,
	CB_SCHED_PLAN_OPS(pairwise_sa),
};

/* ---- dissemination barrier ---- */

static cb_status_t dissemination_size(const struct cb_plan_cfg *cfg,
                                      struct cb_sched_cfg *sc)
{
	sc->algo = "dissemination";
	sc->max_ops = 2 * (size_t)cb_ceil_log2(cfg->group.n) + 1;
	return CB_OK;
}

static void dissemination_gen(struct cb_sched *s, const struct cb_plan_cfg *cfg,
                              const struct cb_coll_args *a)
{
	int n = cfg->group.n, me = cfg->group.me;

	(void)a;
	for (int k = 0; (1 << k) < n; k++) {
		int d = 1 << k;
		cb_sched_send(s, 0, k, (me + d) % n, CB_SB_RECV, 0, 0);
		cb_sched_recv(s, 0, k, (me - d % n + n) % n, CB_SB_RECV, 0, 0);
	}
}

static const struct cb_sched_algo dissemination_sa = { dissemination_size,
	                                               dissemination_gen };

static double dissemination_model_us(const struct cb_model_in *in)
{
	return cb_ceil_log2(in->n) * in->alpha_us;
}

const struct cb_algo cb_algo_dissemination = {
	.name = "dissemination",
	.description = "ceil(log2 n) rounds; in round k signal rank+2^k, wait "
	               "for rank-2^k",
	.colls = 1u << CB_COLL_BARRIER,
	.model_us = dissemination_model_us,
	CB_SCHED_PLAN_OPS(dissemination_sa),
};

/* ---- direct sendrecv ---- */

static cb_status_t direct_size(const struct cb_plan_cfg *cfg,
                               struct cb_sched_cfg *sc)
{
	(void)cfg;
	sc->algo = "direct";
	sc->max_ops = 2;
	return CB_OK;
}

static void direct_gen(struct cb_sched *s, const struct cb_plan_cfg *cfg,
                       const struct cb_coll_args *a)
{
	int n = cfg->group.n, me = cfg->group.me;
	size_t bytes = a->count * es_of(cfg);

	if (n == 1) {
		cb_sched_copy(s, 0, 0, CB_SB_RECV, 0, CB_SB_SEND, 0, bytes);
		return;
	}
	cb_sched_send(s, 0, 0, (me + 1) % n, CB_SB_SEND, 0, bytes);
	cb_sched_recv(s, 0, 0, (me - 1 + n) % n, CB_SB_RECV, 0, bytes);
}

static const struct cb_sched_algo direct_sa = { direct_size, direct_gen };

static double direct_model_us(const struct cb_model_in *in)
{
	if (in->n < 2)
		return 0.0;
	return cb_model_msg_us(in, (double)in->bytes);
}

const struct cb_algo cb_algo_direct = {
	.name = "direct",
	.description = "every rank sends to the next and receives from the "
	               "previous at once",
	.colls = 1u << CB_COLL_SENDRECV,
	.model_us = direct_model_us,
	CB_SCHED_PLAN_OPS(direct_sa),
};

/* ---- pingpong: latency, bw, bibw ---- */

static const char *pingpong_refuse(enum cb_coll coll, int n, int ps_servers)
{
	(void)coll;
	(void)ps_servers;
	return n == 2 ? NULL
	              : "pingpong runs between exactly 2 ranks (use --np 2, "
	                "or --ranks 2 in a larger job)";
}

static cb_status_t pp_size(const struct cb_plan_cfg *cfg,
                           struct cb_sched_cfg *sc)
{
	(void)cfg;
	sc->algo = "pingpong";
	sc->max_ops = 2 * PP_WINDOW + 2;
	return CB_OK;
}

static void latency_gen(struct cb_sched *s, const struct cb_plan_cfg *cfg,
                        const struct cb_coll_args *a)
{
	size_t bytes = a->count * es_of(cfg);

	if (cfg->group.me == 0) {
		cb_sched_send(s, 0, 0, 1, CB_SB_SEND, 0, bytes);
		cb_sched_recv(s, 0, 1, 1, CB_SB_RECV, 0, bytes);
	} else {
		cb_sched_recv(s, 0, 0, 0, CB_SB_RECV, 0, bytes);
		cb_sched_send(s, 0, 1, 0, CB_SB_SEND, 0, bytes);
	}
}

static void bw_gen(struct cb_sched *s, const struct cb_plan_cfg *cfg,
                   const struct cb_coll_args *a)
{
	size_t bytes = a->count * es_of(cfg);

	for (int i = 0; i < PP_WINDOW; i++)
		if (cfg->group.me == 0)
			cb_sched_send(s, 0, 0, 1, CB_SB_SEND, 0, bytes);
		else
			cb_sched_recv(s, 0, 0, 0, CB_SB_RECV, 0, bytes);
	if (cfg->group.me == 0)
		cb_sched_recv(s, 0, 1, 1, CB_SB_RECV, 0, 0);
	else
		cb_sched_send(s, 0, 1, 0, CB_SB_SEND, 0, 0);
}

static void bibw_gen(struct cb_sched *s, const struct cb_plan_cfg *cfg,
                     const struct cb_coll_args *a)
{
	size_t bytes = a->count * es_of(cfg);
	int peer = 1 - cfg->group.me;

	for (int i = 0; i < PP_WINDOW; i++) {
		cb_sched_send(s, 0, 0, peer, CB_SB_SEND, 0, bytes);
		cb_sched_recv(s, 0, 0, peer, CB_SB_RECV, 0, bytes);
	}
}

static const struct cb_sched_algo latency_sa = { pp_size, latency_gen };
static const struct cb_sched_algo bw_sa = { pp_size, bw_gen };
static const struct cb_sched_algo bibw_sa = { pp_size, bibw_gen };

/* Per row (the row's time is per message, see time_div). */
static double pp_model_us(const struct cb_model_in *in)
{
	return cb_model_msg_us(in, (double)in->bytes);
}

static double stream_model_us(const struct cb_model_in *in)
{
	/* a window overlaps the latencies: one per window, not per message */
	return in->alpha_us / PP_WINDOW +
	       (double)in->bytes / (in->beta_gbps * 1e3);
}

const struct cb_algo cb_algo_latency = {
	.name = "latency",
	.description = "ping-pong round trips; time is half a round trip "
	               "(osu_latency)",
	.colls = 1u << CB_COLL_PINGPONG,
	.time_div = 2,
	.refuse = pingpong_refuse,
	.model_us = pp_model_us,
	CB_SCHED_PLAN_OPS(latency_sa),
};

const struct cb_algo cb_algo_bw = {
	.name = "bw",
	.description = "windows of 64 messages one way, then an empty reply; "
	               "time per message (osu_bw)",
	.colls = 1u << CB_COLL_PINGPONG,
	.flags = CB_ALGO_ONEWAY,
	.time_div = PP_WINDOW,
	.refuse = pingpong_refuse,
	.model_us = stream_model_us,
	CB_SCHED_PLAN_OPS(bw_sa),
};

const struct cb_algo cb_algo_bibw = {
	.name = "bibw",
	.description = "windows of 64 messages both ways at once; algbw counts "
	               "both directions (osu_bibw)",
	.colls = 1u << CB_COLL_PINGPONG,
	.time_div = PP_WINDOW,
	.bw_mult = 2,
	.refuse = pingpong_refuse,
	.model_us = stream_model_us,
	CB_SCHED_PLAN_OPS(bibw_sa),
};
