/* SPDX-License-Identifier: MIT */
/*
 * coll/rd.c - recursive doubling (allreduce, allgather) and Rabenseifner's
 * allreduce (recursive-halving reduce-scatter, then recursive-doubling
 * allgather) and reduce_scatter (the halving alone), on the schedule
 * executor.
 *
 * Any rank count n: with p' = 2^floor(log2 n) and r = n - p', the first 2r
 * ranks pair up before and after the power-of-two part (Thakur, Rabenseifner
 * and Gropp 2005, as MPICH does).  Odd rank 2i+1 (i < r) hands its vector to
 * 2i and waits for the result; the p' ranks left - 2i for i < r, then r+i..
 * renumbered i = 0..p'-1 - run the power-of-two algorithm.  lg = log2 p'.
 *
 * rd allreduce, V bytes, cut into pieces of at most --chunk-bytes (default
 * 256 KiB, sizes balanced), each piece its own pipelined segment:
 *     pre:   2i+1 sends its piece to 2i, which reduces it in
 *     k = 0 .. lg-1: exchange the whole piece with the rank whose index
 *            differs in bit k; reduce what arrives
 *     post:  2i sends the result to 2i+1
 *   A send never reads a buffer its own round writes (shm reduces straight
 *   out of the sender's memory), so the rounds alternate between recvbuf and
 *   the scratch buffer, arranged to end in recvbuf.
 *   Cost: lg (alpha + V beta + V gamma) + [r>0] (2 alpha + 2 V beta + V gamma)
 *
 * rd allgather, blocks of B bytes (one segment):
 *     pre:   2i+1 sends its block to 2i
 *     k:     exchange everything gathered so far with the partner in bit k
 *            (renumbered rank i holds the real blocks [s(i), s(i+1)),
 *            s(i) = 2i below r and i + r above, so every range is one
 *            contiguous message)
 *     post:  2i sends 2i+1 everything but its own block (two messages)
 *   Cost: (lg + 2[r>0]) alpha + sum_k (2^k + min(2^k, r)) B beta
 *         + [r>0] n B beta
 *
 * rabenseifner allreduce, pieces of at most --chunk-bytes (default 1 MiB)
 * as above, each piece cut into p' blocks (sizes differ by at most one
 * element, so any count works; empty blocks send nothing):
 *     pre:   as rd
 *     halving, mask = p'/2 .. 1: keep the half of the current block range on
 *            our side of the mask, send the other half to the partner, and
 *            reduce the partner's copy of ours in; we end holding our block
 *     doubling, mask = 1 .. p'/2: exchange the block ranges gathered so far
 *     post:  as rd
 *   Sent and received halves never overlap, so everything stays in recvbuf.
 *   Cost: 2 lg alpha + 2 (p'-1)/p' V beta + (p'-1)/p' V gamma
 *         + [r>0] (2 alpha + 2 V beta + V gamma)
 *
 * rabenseifner reduce_scatter (V = n blocks of B bytes): the halving alone,
 * over the real blocks (renumbered rank i owns [s(i), s(i+1)) as in the
 * allgather above, so a folded-in 2i ends with blocks 2i and 2i+1 and sends
 * 2i+1 its block).  Piece j is elements [e0, e0 + c) of every block, with
 * n c elements at most --chunk-bytes; it is first copied into the scratch
 * buffer with its n slices side by side, so every range the halving sends
 * is one message.  The last halving step reduces straight into recvbuf.
 *   Cost: lg alpha + (p'-1)/p' V (beta + gamma)
 *         + [r>0] (2 alpha + V beta + B beta + V gamma)
 *
 * Reductions compute dst = (our partial) OP (the message); the partners of a
 * round compute a OP b and b OP a, equal for every op here, so every rank
 * ends with the same bits.
 */
#include "coll/sched.h"

#define RD_CHUNK_DEFAULT  (256u << 10)
#define RAB_CHUNK_DEFAULT (1u << 20)

static size_t es_of(const struct cb_plan_cfg *cfg)
{
	return cb_dtype_bytes(cfg->dtype);
}

/* The power-of-two part of n ranks, and where rank me sits in it. */
struct fold {
	int p2, r, lg; /* p' ranks, r folded-in extras, lg = log2 p' */
	int nr;        /* our index among the p', or -1 (an odd extra) */
};

static struct fold fold_of(int n, int me)
{
	struct fold f = { .lg = 0 };

	while ((2 << f.lg) <= n)
		f.lg++;
	f.p2 = 1 << f.lg;
	f.r = n - f.p2;
	if (me < 2 * f.r)
		f.nr = me % 2 ? -1 : me / 2;
	else
		f.nr = me - f.r;
	return f;
}

/* The group index of renumbered rank nr; for nr = 0..p' also the first
 * real block that nr holds once the extras are folded in. */
static inline int fold_rank(const struct fold *f, int nr)
{
	return nr < f->r ? 2 * nr : nr + f->r;
}

static inline int folded_in(const struct fold *f, int me)
{
	return me < 2 * f->r; /* 2i or 2i+1 with i < r */
}

/* ---- rd ---- */

static cb_status_t rd_size(const struct cb_plan_cfg *cfg,
                           struct cb_sched_cfg *sc)
{
	struct fold f = fold_of(cfg->group.n, cfg->group.me);
	size_t es = es_of(cfg), chunk = cb_chunk_elems(cfg, RD_CHUNK_DEFAULT);

	sc->algo = "rd";
	if (cfg->coll == CB_COLL_ALLGATHER) {
		/* copy, pre, lg exchanges, a two-message post */
		sc->max_ops = 2 * (size_t)f.lg + 4;
		return CB_OK;
	}
	/* per piece: pre or copy, lg exchanges, post */
	sc->max_ops =
	        cb_div_up(cfg->max_count, chunk) * (2 * (size_t)f.lg + 2) + 1;
	sc->tmp_bytes = cfg->max_count * es;
	sc->stage_bytes =
	        (cfg->max_count < chunk ? cfg->max_count : chunk) * es;
	sc->stage_per_seg = f.lg + 1;
	return CB_OK;
}

static void rd_allreduce_piece(struct cb_sched *s, const struct fold *f, int me,
                               uint32_t seg, enum cb_sbuf in, size_t e0,
                               size_t cnt, size_t es)
{
	size_t off = e0 * es, len = cnt * es;
	/* Round k of the doubling writes dst(k), alternating so that the
	 * last lands in recvbuf. */
	enum cb_sbuf first = f->lg % 2 ? CB_SB_RECV : CB_SB_TMP;
	enum cb_sbuf cur = in;

	if (f->nr < 0) {
		cb_sched_send(s, seg, 0, me - 1, in, off, len);
		cb_sched_recv(s, seg, 1, me - 1, CB_SB_RECV, off, len);
		return;
	}
	if (folded_in(f, me)) {
		/* no send this round: any target will do */
		cur = first == CB_SB_RECV ? CB_SB_TMP : CB_SB_RECV;
		cb_sched_recv_reduce(s, seg, 0, me + 1, cur, off, in, off, len);
	} else if (cur == first) {
		/* in place with an odd lg: start from a copy */
		cb_sched_copy(s, seg, 0, CB_SB_TMP, off, cur, off, len);
		cur = CB_SB_TMP;
	}
	for (int k = 0; k < f->lg; k++) {
		int peer = fold_rank(f, f->nr ^ (1 << k));
		enum cb_sbuf dst = (f->lg - 1 - k) % 2 ? CB_SB_TMP : CB_SB_RECV;
		cb_sched_send(s, seg, 1 + k, peer, cur, off, len);
		cb_sched_recv_reduce(s, seg, 1 + k, peer, dst, off, cur, off,
		                     len);
		cur = dst;
	}
	if (folded_in(f, me))
		cb_sched_send(s, seg, 1 + f->lg, me + 1, CB_SB_RECV, off, len);
}

static void rd_allgather(struct cb_sched *s, const struct fold *f, int n,
                         int me, const struct cb_coll_args *a, size_t blk)
{
	if ((const char *)a->sendbuf != (char *)a->recvbuf + (size_t)me * blk)
		cb_sched_copy(s, 0, 0, CB_SB_RECV, (size_t)me * blk, CB_SB_SEND,
		              0, blk);
	if (n == 1 || blk == 0)
		return;
	if (f->nr < 0) {
		cb_sched_send(s, 0, 1, me - 1, CB_SB_RECV, (size_t)me * blk,
		              blk);
		cb_sched_recv(s, 0, 2, me - 1, CB_SB_RECV, 0, (size_t)me * blk);
		cb_sched_recv(s, 0, 2, me - 1, CB_SB_RECV,
		              (size_t)(me + 1) * blk,
		              (size_t)(n - me - 1) * blk);
		return;
	}
	if (folded_in(f, me))
		cb_sched_recv(s, 0, 1, me + 1, CB_SB_RECV,
		              (size_t)(me + 1) * blk, blk);
	for (int k = 0; k < f->lg; k++) {
		int mask = 1 << k, peer = fold_rank(f, f->nr ^ mask);
		int lo = f->nr & ~(mask - 1),
		    plo = (f->nr ^ mask) & ~(mask - 1);
		size_t a0 = (size_t)fold_rank(f, lo);
		size_t a1 = (size_t)fold_rank(f, lo + mask);
		size_t p0 = (size_t)fold_rank(f, plo);
		size_t p1 = (size_t)fold_rank(f, plo + mask);
		cb_sched_send(s, 0, 2 + k, peer, CB_SB_RECV, a0 * blk,
		              (a1 - a0) * blk);
		cb_sched_recv(s, 0, 2 + k, peer, CB_SB_RECV, p0 * blk,
		              (p1 - p0) * blk);
	}
	if (folded_in(f, me)) {
		cb_sched_send(s, 0, 2 + f->lg, me + 1, CB_SB_RECV, 0,
		              (size_t)(me + 1) * blk);
		cb_sched_send(s, 0, 2 + f->lg, me + 1, CB_SB_RECV,
		              (size_t)(me + 2) * blk,
		              (size_t)(n - me - 2) * blk);
	}
}

/* One piece of an allreduce: elements [e0, e0 + cnt) in segment @seg. */
typedef void (*piece_fn)(struct cb_sched *s, const struct fold *f, int me,
                         uint32_t seg, enum cb_sbuf in, size_t e0, size_t cnt,
                         size_t es);

/* rd's and rab's allreduce: the vector in pieces of --chunk-bytes (else
 * @chunk_dflt), each its own segment. */
static void allreduce_pieces(struct cb_sched *s, const struct cb_plan_cfg *cfg,
                             const struct cb_coll_args *a, size_t chunk_dflt,
                             piece_fn piece)
{
	int n = cfg->group.n, me = cfg->group.me;
	struct fold f = fold_of(n, me);
	size_t es = es_of(cfg);
	enum cb_sbuf in = a->sendbuf == a->recvbuf ? CB_SB_RECV : CB_SB_SEND;

	if (n == 1) {
		cb_sched_copy(s, 0, 0, CB_SB_RECV, 0, in, 0, a->count * es);
		return;
	}
	size_t np = cb_div_up(a->count, cb_chunk_elems(cfg, chunk_dflt));
	for (size_t j = 0; j < np; j++)
		piece(s, &f, me, (uint32_t)j, in,
		      cb_block_start(a->count, (int)np, (int)j),
		      cb_block_len(a->count, (int)np, (int)j), es);
}

static void rd_gen(struct cb_sched *s, const struct cb_plan_cfg *cfg,
                   const struct cb_coll_args *a)
{
	if (a->coll == CB_COLL_ALLGATHER) {
		int n = cfg->group.n, me = cfg->group.me;
		struct fold f = fold_of(n, me);
		rd_allgather(s, &f, n, me, a, a->count * es_of(cfg));
		return;
	}
	allreduce_pieces(s, cfg, a, RD_CHUNK_DEFAULT, rd_allreduce_piece);
}

static const struct cb_sched_algo rd_sa = { rd_size, rd_gen };

/* What both models start from: the fold for the call's ranks, the bytes,
 * the link's bytes per us, the time one reduction of the bytes takes, and
 * what folding the extra ranks in and out costs an allreduce (an extra
 * rank's whole vector in, reduced, the result back out; 0 when n is a
 * power of two). */
struct rd_cost {
	struct fold f;
	double v, bw, red, fold_us;
};

static struct rd_cost cost_of(const struct cb_model_in *in)
{
	struct rd_cost c = { .f = fold_of(in->n > 0 ? in->n : 1, 0),
		             .v = (double)in->bytes,
		             .bw = in->beta_gbps * 1e3 };

	c.red = cb_model_reduce_us(in, c.v);
	c.fold_us = (c.f.r > 0) * (2 * in->alpha_us + 2 * c.v / c.bw + c.red);
	return c;
}

static double rd_model_us(const struct cb_model_in *in)
{
	struct rd_cost c = cost_of(in);
	int extra = c.f.r > 0;

	if (in->n < 2)
		return 0.0;
	if (in->coll == CB_COLL_ALLGATHER) {
		/* bytes is the gathered buffer: n blocks */
		double blk = c.v / in->n,
		       t = (c.f.lg + 2 * extra) * in->alpha_us;
		for (int k = 0; k < c.f.lg; k++) {
			int g = 1 << k;
			t += (g + (g < c.f.r ? g : c.f.r)) * blk / c.bw;
		}
		return t + extra * in->n * blk / c.bw;
	}
	return c.f.lg * (in->alpha_us + c.v / c.bw + c.red) + c.fold_us;
}

const struct cb_algo cb_algo_rd = {
	.name = "rd",
	.description = "recursive doubling: lg n rounds of whole-vector "
	               "exchanges (extra ranks folded in); latency-optimal",
	.colls = 1u << CB_COLL_ALLREDUCE | 1u << CB_COLL_ALLGATHER,
	.refuse = NULL, /* any rank count */
	.model_us = rd_model_us,
	CB_SCHED_PLAN_OPS(rd_sa),
};

/* ---- rabenseifner ---- */

/* reduce_scatter: elements per block of one piece, so that a piece's n
 * blocks fit the chunk. */
static size_t rs_slice(const struct cb_plan_cfg *cfg)
{
	size_t c =
	        cb_chunk_elems(cfg, RAB_CHUNK_DEFAULT) / (size_t)cfg->group.n;

	return c ? c : 1;
}

static cb_status_t rab_size(const struct cb_plan_cfg *cfg,
                            struct cb_sched_cfg *sc)
{
	struct fold f = fold_of(cfg->group.n, cfg->group.me);
	size_t es = es_of(cfg), n = (size_t)cfg->group.n;

	sc->algo = "rabenseifner";
	sc->stage_per_seg = f.lg + 1;
	if (cfg->coll == CB_COLL_REDUCE_SCATTER) {
		size_t slice = rs_slice(cfg);
		/* per piece: n copies, pre, lg exchanges, post copy and send */
		sc->max_ops = cb_div_up(cfg->max_count, slice) *
		                      (n + 2 * (size_t)f.lg + 3) +
		              1;
		sc->tmp_bytes = n * cfg->max_count * es;
		sc->stage_bytes =
		        n * (cfg->max_count < slice ? cfg->max_count : slice) *
		        es;
		return CB_OK;
	}
	size_t chunk = cb_chunk_elems(cfg, RAB_CHUNK_DEFAULT);
	/* per piece: pre, lg halving and lg doubling exchanges, post */
	sc->max_ops =
	        cb_div_up(cfg->max_count, chunk) * (4 * (size_t)f.lg + 2) + 1;
	sc->stage_bytes =
	        (cfg->max_count < chunk ? cfg->max_count : chunk) * es;
	return CB_OK;
}

/* One piece of cnt elements at element e0. */
static void rab_piece(struct cb_sched *s, const struct fold *f, int me,
                      uint32_t seg, enum cb_sbuf in, size_t e0, size_t cnt,
                      size_t es)
{
	enum cb_sbuf cur = in;
	int round = 1, lo = 0;
#define BLK(i) ((e0 + cb_block_start(cnt, f->p2, (i))) * es)

	if (f->nr < 0) {
		cb_sched_send(s, seg, 0, me - 1, in, e0 * es, cnt * es);
		cb_sched_recv(s, seg, 1, me - 1, CB_SB_RECV, e0 * es, cnt * es);
		return;
	}
	if (folded_in(f, me)) {
		cb_sched_recv_reduce(s, seg, 0, me + 1, CB_SB_RECV, e0 * es, in,
		                     e0 * es, cnt * es);
		cur = CB_SB_RECV;
	}
	for (int mask = f->p2 / 2; mask >= 1; mask /= 2, round++) {
		int peer = fold_rank(f, f->nr ^ mask);
		int klo = f->nr & mask ? lo + mask : lo;
		int slo = f->nr & mask ? lo : lo + mask;
		size_t kb = BLK(klo + mask) - BLK(klo);
		size_t sb = BLK(slo + mask) - BLK(slo);
		if (sb)
			cb_sched_send(s, seg, round, peer, cur, BLK(slo), sb);
		if (kb)
			cb_sched_recv_reduce(s, seg, round, peer, CB_SB_RECV,
			                     BLK(klo), cur, BLK(klo), kb);
		cur = CB_SB_RECV;
		lo = klo;
	}
	for (int mask = 1; mask < f->p2; mask *= 2, round++) {
		int peer = fold_rank(f, f->nr ^ mask);
		int mlo = f->nr & ~(mask - 1),
		    plo = (f->nr ^ mask) & ~(mask - 1);
		size_t mb = BLK(mlo + mask) - BLK(mlo);
		size_t pb = BLK(plo + mask) - BLK(plo);
		if (mb)
			cb_sched_send(s, seg, round, peer, CB_SB_RECV, BLK(mlo),
			              mb);
		if (pb)
			cb_sched_recv(s, seg, round, peer, CB_SB_RECV, BLK(plo),
			              pb);
	}
#undef BLK
	if (folded_in(f, me))
		cb_sched_send(s, seg, round, me + 1, CB_SB_RECV, e0 * es,
		              cnt * es);
}

/*
 * reduce_scatter, piece j: elements [e0, e0 + cnt) of every rank's block.
 * The scratch buffer holds the pieces one after another, each as its n
 * blocks side by side (block b of piece j at n e0 + b cnt), so that every
 * block range the halving sends is one contiguous message.
 */
static void rs_piece(struct cb_sched *s, const struct fold *f, int n, int me,
                     uint32_t seg, size_t count, size_t e0, size_t cnt,
                     size_t es)
{
	size_t base = (size_t)n * e0 * es, bb = cnt * es;
	int round = 2, lo = 0;
#define SUB(b) (base + (size_t)(b)*bb) /* block b of this piece in tmp */

	for (int b = 0; b < n; b++)
		cb_sched_copy(s, seg, 0, CB_SB_TMP, SUB(b), CB_SB_SEND,
		              ((size_t)b * count + e0) * es, bb);
	if (f->nr < 0) {
		cb_sched_send(s, seg, 1, me - 1, CB_SB_TMP, base,
		              (size_t)n * bb);
		cb_sched_recv(s, seg, 2, me - 1, CB_SB_RECV, e0 * es, bb);
		return;
	}
	if (folded_in(f, me))
		cb_sched_recv_reduce(s, seg, 1, me + 1, CB_SB_TMP, base,
		                     CB_SB_TMP, base, (size_t)n * bb);
	for (int mask = f->p2 / 2; mask >= 1; mask /= 2, round++) {
		int peer = fold_rank(f, f->nr ^ mask);
		int klo = f->nr & mask ? lo + mask : lo;
		int slo = f->nr & mask ? lo : lo + mask;
		int k0 = fold_rank(f, klo), k1 = fold_rank(f, klo + mask);
		int s0 = fold_rank(f, slo), s1 = fold_rank(f, slo + mask);
		cb_sched_send(s, seg, round, peer, CB_SB_TMP, SUB(s0),
		              (size_t)(s1 - s0) * bb);
		if (k1 - k0 == 1) /* our own block: the result */
			cb_sched_recv_reduce(s, seg, round, peer, CB_SB_RECV,
			                     e0 * es, CB_SB_TMP, SUB(k0), bb);
		else
			cb_sched_recv_reduce(s, seg, round, peer, CB_SB_TMP,
			                     SUB(k0), CB_SB_TMP, SUB(k0),
			                     (size_t)(k1 - k0) * bb);
		lo = klo;
	}
	if (folded_in(f, me)) {
		cb_sched_copy(s, seg, round, CB_SB_RECV, e0 * es, CB_SB_TMP,
		              SUB(me), bb);
		cb_sched_send(s, seg, round, me + 1, CB_SB_TMP, SUB(me + 1),
		              bb);
	}
#undef SUB
}

static void rab_gen(struct cb_sched *s, const struct cb_plan_cfg *cfg,
                    const struct cb_coll_args *a)
{
	if (a->coll == CB_COLL_REDUCE_SCATTER) {
		int n = cfg->group.n, me = cfg->group.me;
		struct fold f = fold_of(n, me);
		size_t es = es_of(cfg), np = cb_div_up(a->count, rs_slice(cfg));
		if (n == 1) {
			if (a->sendbuf != a->recvbuf)
				cb_sched_copy(s, 0, 0, CB_SB_RECV, 0,
				              CB_SB_SEND, 0, a->count * es);
			return;
		}
		for (size_t j = 0; j < np; j++)
			rs_piece(s, &f, n, me, (uint32_t)j, a->count,
			         cb_block_start(a->count, (int)np, (int)j),
			         cb_block_len(a->count, (int)np, (int)j), es);
		return;
	}
	allreduce_pieces(s, cfg, a, RAB_CHUNK_DEFAULT, rab_piece);
}

static const struct cb_sched_algo rab_sa = { rab_size, rab_gen };

static double rab_model_us(const struct cb_model_in *in)
{
	struct rd_cost c = cost_of(in);
	double part = (double)(c.f.p2 - 1) / c.f.p2;

	if (in->n < 2)
		return 0.0;
	if (in->coll == CB_COLL_REDUCE_SCATTER) /* bytes: all n blocks */
		return c.f.lg * in->alpha_us + part * (c.v / c.bw + c.red) +
		       (c.f.r > 0) * (2 * in->alpha_us + c.v / c.bw +
		                      c.v / in->n / c.bw + c.red);
	return 2 * c.f.lg * in->alpha_us + 2 * part * c.v / c.bw +
	       part * c.red + c.fold_us;
}

const struct cb_algo cb_algo_rabenseifner = {
	.name = "rabenseifner",
	.description = "recursive-halving reduce-scatter + recursive-doubling "
	               "allgather (extra ranks folded in); for large vectors",
	.colls = 1u << CB_COLL_ALLREDUCE | 1u << CB_COLL_REDUCE_SCATTER,
	.refuse = NULL, /* any rank count */
	.model_us = rab_model_us,
	CB_SCHED_PLAN_OPS(rab_sa),
};
