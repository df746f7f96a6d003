/* SPDX-License-Identifier: MIT */
/*
 * coll/ps.c - parameter-server allreduce: workers push shards to servers,
 * servers reduce, workers pull the result (synchronous, as ps-lite and
 * BytePS do it for one step).
 *
 * --ps-servers K:
 *   K > 0  the last K ranks are dedicated servers: W = n - K workers hold
 *          the input; the vector is cut into K shards (sizes differ by at
 *          most one element) and server k = W + k owns shard k.  Servers have
 *          no input; their recvbuf is scratch.
 *   K = 0  colocated: every rank is a worker and the server of shard r of n
 *          (a reduce-scatter and an allgather, each done with direct
 *          messages to every rank rather than around a ring).
 *
 * Each shard is cut into pieces of at most --chunk-bytes (default 256 KiB,
 * sizes balanced within the shard); piece j of every shard is segment j, so
 * a server reduces piece j while piece j+1 is being pushed.  Per segment:
 *   dedicated  worker: push piece to every server; then pull each back
 *              server k: receive worker k mod W's push into place, reduce
 *              the other W-1 in (any order); then send the piece to every
 *              worker
 *   colocated  rank r: copy its own piece into place; push piece j of
 *              shard k to every rank k and reduce the n-1 pushes of shard r
 *              in; then send shard r's piece to every rank and pull the
 *              others
 * Workers start at different servers (worker w begins with server w mod K)
 * so the first pushes do not all land on one server.
 *
 * Cost (V bytes, alpha charged per message a rank handles, as linear's
 * root): the busiest server's link carries W V / K bytes in and out, an
 * incast that grows with the workers per server:
 *   K > 0: 2 max(W, K) alpha + 2 max(W/K, 1) V beta + (W-1)/K V gamma
 *   K = 0: 2 (n-1) alpha + 2 (n-1)/n V beta + (n-1)/n V gamma
 */
#include <stdio.h>

#include "coll/sched.h"
#include "core/log.h"

#define PS_CHUNK_DEFAULT (256u << 10)

static size_t es_of(const struct cb_plan_cfg *cfg)
{
	return cb_dtype_bytes(cfg->dtype);
}

static const char *ps_refuse(enum cb_coll coll, int n, int ps_servers)
{
	static char why[128];

	(void)coll;
	if (ps_servers < 0)
		return "ps: --ps-servers must be 0 (colocated) or a count of "
		       "dedicated server ranks";
	if (ps_servers >= n) {
		snprintf(why, sizeof(why),
		         "ps: --ps-servers %d leaves no worker among %d ranks "
		         "(needs fewer servers than ranks)",
		         ps_servers, n);
		return why;
	}
	return NULL;
}

/* Who serves what, for one call of count elements. */
struct ps_layout {
	int n, me, k, w; /* ranks, us, shards, workers */
	int dedicated;
	size_t count, chunk;
};

static inline int server_of(const struct ps_layout *l, int shard)
{
	return l->dedicated ? l->w + shard : shard;
}

/* Piece j of shard k as bytes [*off, *off + *len); 0 when it has none. */
static int piece(const struct ps_layout *l, int k, size_t j, size_t es,
                 size_t *off, size_t *len)
{
	size_t s0 = cb_block_start(l->count, l->k, k);
	size_t sl = cb_block_len(l->count, l->k, k);
	size_t np = cb_div_up(sl, l->chunk);

	if (j >= np)
		return 0;
	*off = (s0 + cb_block_start(sl, (int)np, (int)j)) * es;
	*len = cb_block_len(sl, (int)np, (int)j) * es;
	return 1;
}

static cb_status_t ps_size(const struct cb_plan_cfg *cfg,
                           struct cb_sched_cfg *sc)
{
	int n = cfg->group.n, ks = cfg->ps_servers;
	const char *why = ps_refuse(cfg->coll, n, ks);
	size_t chunk = cb_chunk_elems(cfg, PS_CHUNK_DEFAULT), per_seg;

	sc->algo = "ps";
	if (why)
		return cb_fail(CB_ERR_USAGE, "%s", why);
	int shards = ks ? ks : n, w = n - ks;
	size_t most = cb_block_len(cfg->max_count, shards, 0); /* shard 0 */
	if (ks) /* worker: 2 per server; server: 2 per worker */
		per_seg = 2 * (size_t)(w > ks ? w : ks);
	else /* a copy, n-1 pushes and reduces, n-1 pulls each way */
		per_seg = 4 * (size_t)n - 3;
	sc->max_ops = cb_div_up(most, chunk) * per_seg + 1;
	sc->stage_bytes = (most < chunk ? most : chunk) * es_of(cfg);
	sc->stage_per_seg = ks ? w - 1 : n - 1;
	return CB_OK;
}

static void dedicated_seg(struct cb_sched *s, const struct ps_layout *l,
                          uint32_t j, enum cb_sbuf in, size_t es)
{
	size_t off, len;

	if (l->me < l->w) { /* worker */
		for (int i = 0; i < l->k; i++) {
			int k = (l->me + i) % l->k;
			if (piece(l, k, j, es, &off, &len))
				cb_sched_send(s, j, 0, server_of(l, k), in, off,
				              len);
		}
		for (int i = 0; i < l->k; i++) {
			int k = (l->me + i) % l->k;
			if (piece(l, k, j, es, &off, &len))
				cb_sched_recv(s, j, 1, server_of(l, k),
				              CB_SB_RECV, off, len);
		}
		return;
	}
	int k = l->me - l->w, first = k % l->w;
	if (!piece(l, k, j, es, &off, &len))
		return;
	/* The first push is the initial value; the rest reduce into it in
	 * whatever order they arrive. */
	cb_sched_recv(s, j, 0, first, CB_SB_RECV, off, len);
	for (int i = 1; i < l->w; i++)
		cb_sched_recv_reduce(s, j, 1, (first + i) % l->w, CB_SB_RECV,
		                     off, CB_SB_RECV, off, len);
	for (int i = 0; i < l->w; i++)
		cb_sched_send(s, j, 2, (first + i) % l->w, CB_SB_RECV, off,
		              len);
}

static void colocated_seg(struct cb_sched *s, const struct ps_layout *l,
                          uint32_t j, enum cb_sbuf in, size_t es)
{
	int n = l->n, me = l->me;
	size_t off, len, moff, mlen;
	int mine = piece(l, me, j, es, &moff, &mlen);

	/* Our own contribution is the initial value: in place before any
	 * push may reduce into it. */
	if (mine)
		cb_sched_copy(s, j, 0, CB_SB_RECV, moff, in, moff, mlen);
	for (int i = 1; i < n; i++) {
		int to = (me + i) % n, from = (me - i + n) % n;
		if (piece(l, to, j, es, &off, &len))
			cb_sched_send(s, j, 1, to, in, off, len);
		if (mine)
			cb_sched_recv_reduce(s, j, 1, from, CB_SB_RECV, moff,
			                     CB_SB_RECV, moff, mlen);
	}
	for (int i = 1; i < n; i++) {
		int to = (me + i) % n, from = (me - i + n) % n;
		if (mine)
			cb_sched_send(s, j, 2, to, CB_SB_RECV, moff, mlen);
		if (piece(l, from, j, es, &off, &len))
			cb_sched_recv(s, j, 2, from, CB_SB_RECV, off, len);
	}
}

static void ps_gen(struct cb_sched *s, const struct cb_plan_cfg *cfg,
                   const struct cb_coll_args *a)
{
	int n = cfg->group.n, ks = cfg->ps_servers;
	size_t es = es_of(cfg);
	enum cb_sbuf in = a->sendbuf == a->recvbuf ? CB_SB_RECV : CB_SB_SEND;
	struct ps_layout l = {
		.n = n,
		.me = cfg->group.me,
		.k = ks ? ks : n,
		.w = n - ks,
		.dedicated = ks > 0,
		.count = a->count,
		.chunk = cb_chunk_elems(cfg, PS_CHUNK_DEFAULT),
	};

	if (n == 1) {
		cb_sched_copy(s, 0, 0, CB_SB_RECV, 0, in, 0, a->count * es);
		return;
	}
	/* shard 0 is the largest: it has the most pieces */
	size_t segs = cb_div_up(cb_block_len(a->count, l.k, 0), l.chunk);
	for (size_t j = 0; j < segs; j++) {
		if (l.dedicated)
			dedicated_seg(s, &l, (uint32_t)j, in, es);
		else
			colocated_seg(s, &l, (uint32_t)j, in, es);
	}
}

static const struct cb_sched_algo ps_sa = { ps_size, ps_gen };

static double ps_model_us(const struct cb_model_in *in)
{
	double v = (double)in->bytes, bw = in->beta_gbps * 1e3;
	double red = cb_model_reduce_us(in, v);
	int ks = in->ps_servers, w = in->n - ks;

	if (in->n < 2 || ks < 0 || ks >= in->n)
		return 0.0;
	if (ks == 0)
		return 2.0 * (in->n - 1) * in->alpha_us +
		       2.0 * (in->n - 1) / in->n * v / bw +
		       (double)(in->n - 1) / in->n * red;
	double fan = (double)w / ks; /* workers per server */
	return 2.0 * (w > ks ? w : ks) * in->alpha_us +
	       2.0 * (fan > 1 ? fan : 1) * v / bw + (double)(w - 1) / ks * red;
}

const struct cb_algo cb_algo_ps = {
	.name = "ps",
	.description = "parameter server: workers push shards, servers "
	               "reduce, workers pull (--ps-servers K dedicated, "
	               "0 = colocated)",
	.colls = 1u << CB_COLL_ALLREDUCE,
	.refuse = ps_refuse,
	.model_us = ps_model_us,
	CB_SCHED_PLAN_OPS(ps_sa),
};
