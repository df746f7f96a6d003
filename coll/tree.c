/* SPDX-License-Identifier: MIT */
/*
 * coll/tree.c - trees, pipelined: binomial broadcast and reduce, and the
 * double binary tree allreduce (NCCL's "Tree"), on the schedule executor.
 *
 * The buffer is cut into pieces of --chunk-bytes (default 512 KiB, whole
 * elements); each piece is one executor segment, so up to CB_SCHED_WINDOW
 * pieces are in flight and a piece moves down (or up) the tree while the
 * next one follows.  512 KiB, as ring's: measured on shm, np 4 and 8, 256K
 * to 8M, it was as fast as 256 KiB or faster everywhere (up to 1.5x at
 * 1-8 MiB: fewer round transitions on an oversubscribed host), 64-128 KiB
 * lost up to 2x, 1 MiB won nothing more; tcp showed no difference above
 * the noise.  Staging for tcp: 4 chunks per segment, 8 segments.
 *
 * Binomial tree over virtual ranks v = (rank - root) mod n: v's parent is
 * v with its lowest set bit cleared, its children v + 2^k for 2^k below
 * that bit (the root: every 2^k < n).  The root has ceil(log2 n) children.
 *
 *   broadcast, per piece: receive from the parent (round 0), then send to
 *     every child, largest subtree first (round 1; the root in round 0).
 *   reduce, per piece: a node whose lowest set bit is 2^K receives and
 *     reduces child v + 2^k in round k + 1 (its subtree is complete by
 *     then: the child sends in round k + 1 itself) and sends up in round
 *     K + 1.  The children are taken one round each, so the first one
 *     reduces straight from the input (dst = input OP message) and the
 *     others accumulate (src == dst): no copy of the input is needed.  The
 *     accumulator is the root's recvbuf, elsewhere one scratch chunk per
 *     window slot (segment s uses slot s mod CB_SCHED_WINDOW; segment s+W
 *     opens only once segment s is done here).
 *
 * Double binary tree (allreduce): tree 0 is the in-order binary tree on
 * indices 0..n-1 whose node i (lowest set bit b) has children i - b/2 and
 * the largest i + b' (b' <= b/2) below n; index 0 is the root, with one
 * child, the largest power of two below n.  Tree 1 is tree 0 mirrored
 * (rank n-1-i, even n) or shifted (rank i+1, odd n), so the leaves of one
 * (the odd indices) are the inner nodes of the other: every rank forwards
 * in at most one tree (for odd n, rank 0 has one child in each).  The
 * vector is split in two halves, half t reduced up tree t to its root and
 * broadcast back down; segment s carries piece s of both halves, so both
 * trees work at once.
 *
 * Rounds are global levels, the same for sender and receiver: a message up
 * from a node of height h is round h + 1 at both ends (in tree index space
 * a node's height is log2 of its lowest set bit, because its left subtree
 * is always complete); a message down from a node at depth d is round
 * K + d, K = 2 + height of the root.  A rank does level by level, so the two
 * trees never wait on each other in a cycle (n = 4: ranks 1 and 2 are each
 * other's child in one tree and parent in the other), and two messages on
 * one directed pair in one segment (the trees can share an edge) are added
 * in (round, tree) order at both ends.  Out of place, an inner node copies
 * its input piece into recvbuf in round 0 unless its first child is alone
 * in its round (then that child reduces from the input directly).
 *
 * Cost, alpha-beta-gamma, m bytes, p ranks, L = ceil(log2 p), k pieces of
 * s = m/k bytes (single port: a rank sends one message at a time):
 *   broadcast   L (k alpha + m beta)      (the root sends each piece to L
 *               children, one after the other; pipelining buys overlap of
 *               the levels only where a rank's sends overlap, as shm's
 *               reader-side copies do: then (L + k - 1)(alpha + s beta))
 *   reduce      L (k alpha + m beta + m gamma)
 *   allreduce   (2D + 4(k-1))(alpha + s beta) + (D + 2(k-1)) s gamma,
 *               k pieces per half, s = m/(2k), D the trees' depth: the
 *               first piece goes up D levels and down D; then an inner
 *               rank sends and receives 4 pieces per segment (3 in its
 *               inner tree, 1 as a leaf) and reduces 2, so each further
 *               segment adds 4 message times: ~ 4k alpha + 2m beta + m gamma
 *               for large m (ring: 2(p-1)/p m beta), 2D alpha for small m
 *               (ring: 2(p-1) alpha).
 */
#include <string.h>

#include "coll/reduce.h"
#include "coll/sched.h"
#include "core/log.h"

#define TREE_CHUNK_DEFAULT (512u << 10)

static int log2_exact(unsigned x)
{
	return __builtin_ctz(x);
}

/* ---- binomial tree (broadcast, reduce) ---- */

static inline int to_rank(int v, int root, int n)
{
	return (v + root) % n;
}

/* Lowest set bit of virtual rank v; the root's is above every child. */
static inline long low_bit(int v, int n)
{
	return v ? (long)(v & -v) : 2L * n;
}

/* Where a rank stands in a binomial tree rooted at the collective's root:
 * its virtual rank (the root's is 0), that rank's lowest set bit, its
 * parent; and the pieces the bytes go in. */
struct binom {
	int n, root, v, parent;
	long lb;
	size_t bytes, chunk;
};

static struct binom binom_of(const struct cb_plan_cfg *cfg,
                             const struct cb_coll_args *a)
{
	struct binom t = { .n = cfg->group.n, .root = a->root };

	t.v = (cfg->group.me - t.root + t.n) % t.n;
	t.lb = low_bit(t.v, t.n);
	t.parent = to_rank(t.v & (t.v - 1), t.root, t.n);
	t.bytes = a->count * cb_dtype_bytes(a->dtype);
	t.chunk = cb_chunk_bytes(cfg, TREE_CHUNK_DEFAULT);
	return t;
}

/* 1 when virtual rank @t.v has a child at distance 2^k. */
static int has_child(const struct binom *t, int k)
{
	return (1L << k) < t->lb && t->v + (1L << k) < t->n;
}

static void gen_bcast(struct cb_sched *s, const struct cb_plan_cfg *cfg,
                      const struct cb_coll_args *a)
{
	struct binom t = binom_of(cfg, a);
	int top = 0; /* largest 2^k: children v + 2^top .. v + 1 */
	uint32_t seg = 0;

	while (has_child(&t, top + 1))
		top++;
	for (size_t off = 0; off < t.bytes; off += t.chunk, seg++) {
		size_t len = t.bytes - off < t.chunk ? t.bytes - off : t.chunk;
		int round = 0;
		enum cb_sbuf from = CB_SB_SEND;
		if (t.v) {
			cb_sched_recv(s, seg, 0, t.parent, CB_SB_RECV, off,
			              len);
			round = 1;
			from = CB_SB_RECV;
		}
		for (int k = top; k >= 0; k--)
			if (has_child(&t, k))
				cb_sched_send(
				        s, seg, round,
				        to_rank(t.v + (1 << k), t.root, t.n),
				        from, off, len);
		/* After the sends: they are on their way while it copies. */
		if (!t.v && a->sendbuf != a->recvbuf)
			cb_sched_copy(s, seg, 0, CB_SB_RECV, off, CB_SB_SEND,
			              off, len);
	}
}

static void gen_reduce(struct cb_sched *s, const struct cb_plan_cfg *cfg,
                       const struct cb_coll_args *a)
{
	struct binom t = binom_of(cfg, a);
	int up_round = t.v ? log2_exact((unsigned)t.v) + 1 : 0;
	enum cb_sbuf acc = t.v ? CB_SB_TMP : CB_SB_RECV;
	uint32_t seg = 0;

	for (size_t off = 0; off < t.bytes; off += t.chunk, seg++) {
		size_t len = t.bytes - off < t.chunk ? t.bytes - off : t.chunk;
		size_t aoff = t.v ? (seg % CB_SCHED_WINDOW) * t.chunk : off;
		enum cb_sbuf src = CB_SB_SEND;
		size_t soff = off;
		for (int k = 0; has_child(&t, k); k++) {
			cb_sched_recv_reduce(
			        s, seg, k + 1,
			        to_rank(t.v + (1 << k), t.root, t.n), acc, aoff,
			        src, soff, len);
			src = acc;
			soff = aoff;
		}
		/* src: the input where no child came, else the accumulator */
		if (t.v)
			cb_sched_send(s, seg, up_round, t.parent, src, soff,
			              len);
		else if (src == CB_SB_SEND && a->sendbuf != a->recvbuf)
			cb_sched_copy(s, seg, 0, CB_SB_RECV, off, CB_SB_SEND,
			              off, len);
	}
}

/* ---- double binary tree (allreduce) ---- */

struct btnode {
	int parent;   /* tree index, -1 at the root */
	int child[2]; /* tree indices, -1 when absent */
};

/* Node @i of the in-order binary tree on 0..n-1 (see the top). */
static struct btnode btree(int n, int i)
{
	struct btnode t = { -1, { -1, -1 } };

	if (i == 0) {
		int p2 = 1;
		while (2 * p2 < n)
			p2 *= 2;
		if (n > 1)
			t.child[1] = p2;
		return t;
	}
	int b = i & -i;
	t.parent = (i & 2 * b) || i + b >= n ? i - b : i + b;
	for (int h = b / 2; h; h /= 2) {
		if (t.child[0] < 0)
			t.child[0] = i - h; /* always below n */
		if (i + h < n) {
			t.child[1] = i + h;
			break;
		}
	}
	return t;
}

/* Height in tree index space: log2 of the lowest set bit (the left
 * subtree is complete); the root sits one above its only child. */
static int bt_height(int n, int i)
{
	if (i)
		return log2_exact((unsigned)i);
	return n > 1 ? cb_ceil_log2(n) : 0;
}

static int bt_depth(int n, int i)
{
	int d = 0;

	while (i) {
		i = btree(n, i).parent;
		d++;
	}
	return d;
}

static inline int bt_index(int t, int r, int n)
{
	if (!t)
		return r;
	return n % 2 ? (r - 1 + n) % n : n - 1 - r;
}

static inline int bt_rank(int t, int i, int n)
{
	if (!t)
		return i;
	return n % 2 ? (i + 1) % n : n - 1 - i;
}

/* One operation of a segment, before offsets: tree t's piece. */
struct top {
	uint8_t kind, buf, sbuf, t;
	uint16_t round;
	int peer;
};

#define DBT_MAX_OPS 7 /* per tree: copy, 2 reduces, up, down, 2 sends */

static void add_top(struct top *ops, int *nops, struct top op)
{
	/* insertion by (round, tree): both ends add in this order */
	int i = (*nops)++;

	while (i > 0 &&
	       (ops[i - 1].round > op.round ||
	        (ops[i - 1].round == op.round && ops[i - 1].t > op.t))) {
		ops[i] = ops[i - 1];
		i--;
	}
	ops[i] = op;
}

/* This rank's operations for one segment of tree t. */
static void dbt_tree_ops(int n, int me, int t, int inplace, struct top *ops,
                         int *nops)
{
	int i = bt_index(t, me, n);
	struct btnode nd = btree(n, i);
	int down = 2 + bt_height(n, 0); /* first round of the way down */
	int d = bt_depth(n, i);
	int nch = 0, ch[2], cr[2];

	for (int c = 0; c < 2; c++)
		if (nd.child[c] >= 0) {
			ch[nch] = nd.child[c];
			cr[nch++] = bt_height(n, nd.child[c]) + 1;
		}
	/* the child that arrives first first */
	if (nch == 2 && cr[1] < cr[0]) {
		int x = ch[0], y = cr[0];
		ch[0] = ch[1], cr[0] = cr[1], ch[1] = x, cr[1] = y;
	}
	int copy = nch && !inplace && (nch == 2 && cr[0] == cr[1]);
	if (copy)
		add_top(ops, nops,
		        (struct top){ CB_SOP_COPY, CB_SB_RECV, CB_SB_SEND,
		                      (uint8_t)t, 0, -1 });
	for (int c = 0; c < nch; c++) {
		int from_input = c == 0 && !copy;
		add_top(ops, nops,
		        (struct top){ CB_SOP_RECV_REDUCE, CB_SB_RECV,
		                      from_input ? CB_SB_SEND : CB_SB_RECV,
		                      (uint8_t)t, (uint16_t)cr[c],
		                      bt_rank(t, ch[c], n) });
	}
	if (nd.parent >= 0) {
		int p = bt_rank(t, nd.parent, n);
		add_top(ops, nops,
		        (struct top){ CB_SOP_SEND,
		                      nch ? CB_SB_RECV : CB_SB_SEND, 0,
		                      (uint8_t)t,
		                      (uint16_t)(bt_height(n, i) + 1), p });
		add_top(ops, nops,
		        (struct top){ CB_SOP_RECV, CB_SB_RECV, 0, (uint8_t)t,
		                      (uint16_t)(down + d - 1), p });
	}
	for (int c = nch - 1; c >= 0; c--) /* larger subtree first */
		add_top(ops, nops,
		        (struct top){ CB_SOP_SEND, CB_SB_RECV, 0, (uint8_t)t,
		                      (uint16_t)(down + d),
		                      bt_rank(t, ch[c], n) });
}

static void gen_allreduce(struct cb_sched *s, const struct cb_plan_cfg *cfg,
                          const struct cb_coll_args *a)
{
	int n = cfg->group.n, me = cfg->group.me;
	size_t es = cb_dtype_bytes(a->dtype);
	size_t chunk = cb_chunk_bytes(cfg, TREE_CHUNK_DEFAULT);
	size_t hoff[2], hlen[2];
	struct top ops[2 * DBT_MAX_OPS];
	int nops = 0;

	if (n == 1) {
		if (a->count && a->sendbuf != a->recvbuf)
			cb_sched_copy(s, 0, 0, CB_SB_RECV, 0, CB_SB_SEND, 0,
			              a->count * es);
		return;
	}
	for (int t = 0; t < 2; t++) {
		hoff[t] = cb_block_start(a->count, 2, t) * es;
		hlen[t] = cb_block_len(a->count, 2, t) * es;
		dbt_tree_ops(n, me, t, a->sendbuf == a->recvbuf, ops, &nops);
	}
	for (uint32_t seg = 0; (size_t)seg * chunk < hlen[0]; seg++) {
		for (int k = 0; k < nops; k++) {
			const struct top *op = &ops[k];
			size_t po = (size_t)seg * chunk;
			if (po >= hlen[op->t])
				continue; /* half 1 can be a piece shorter */
			size_t off = hoff[op->t] + po;
			size_t len = hlen[op->t] - po < chunk ? hlen[op->t] - po
			                                      : chunk;
			switch (op->kind) {
			case CB_SOP_COPY:
				cb_sched_copy(s, seg, op->round, op->buf, off,
				              op->sbuf, off, len);
				break;
			case CB_SOP_RECV_REDUCE:
				cb_sched_recv_reduce(s, seg, op->round,
				                     op->peer, op->buf, off,
				                     op->sbuf, off, len);
				break;
			case CB_SOP_SEND:
				cb_sched_send(s, seg, op->round, op->peer,
				              op->buf, off, len);
				break;
			default:
				cb_sched_recv(s, seg, op->round, op->peer,
				              op->buf, off, len);
				break;
			}
		}
	}
}

/* ---- the algorithm ---- */

static cb_status_t tree_size(const struct cb_plan_cfg *cfg,
                             struct cb_sched_cfg *sc)
{
	int n = cfg->group.n, lg = cb_ceil_log2(n);
	size_t es = cb_dtype_bytes(cfg->dtype);
	size_t chunk = cb_chunk_bytes(cfg, TREE_CHUNK_DEFAULT);
	size_t bytes = cfg->max_count * es, segs;

	sc->algo = "tree";
	switch (cfg->coll) {
	case CB_COLL_BROADCAST:
		/* a receive, the sends, a copy */
		sc->max_ops = cb_div_up(bytes, chunk) * (size_t)(lg + 2) + 1;
		return CB_OK;
	case CB_COLL_REDUCE:
		segs = cb_div_up(bytes, chunk);
		sc->max_ops = segs * (size_t)(lg + 2) + 1;
		sc->tmp_bytes =
		        (segs < CB_SCHED_WINDOW ? segs : CB_SCHED_WINDOW) *
		        chunk;
		sc->stage_bytes = chunk;
		sc->stage_per_seg = lg;
		return CB_OK;
	case CB_COLL_ALLREDUCE:
		segs = cb_div_up(cb_block_len(cfg->max_count, 2, 0) * es,
		                 chunk);
		sc->max_ops = segs * 2 * DBT_MAX_OPS + 1;
		sc->stage_bytes = chunk;
		/* a rank is inner in one tree (two children), or rank 0 of
		 * an odd n in both with one child each */
		sc->stage_per_seg = 2;
		return CB_OK;
	default:
		return cb_fail(CB_ERR_INVALID, "tree: no %s",
		               cb_coll_name(cfg->coll));
	}
}

static void tree_gen(struct cb_sched *s, const struct cb_plan_cfg *cfg,
                     const struct cb_coll_args *a)
{
	switch (cfg->coll) { /* what the plan was sized for */
	case CB_COLL_BROADCAST:
		gen_bcast(s, cfg, a);
		break;
	case CB_COLL_REDUCE:
		gen_reduce(s, cfg, a);
		break;
	default:
		gen_allreduce(s, cfg, a);
		break;
	}
}

static const struct cb_sched_algo tree_sched = {
	.size = tree_size,
	.gen = tree_gen,
};

static double tree_model_us(const struct cb_model_in *in)
{
	int p = in->n;
	/* beta and gamma in GB/s = 1e3 bytes per us */
	double bw = in->beta_gbps * 1e3;
	double m = (double)in->bytes, k, s;
	int lg = cb_ceil_log2(p), depth = 0;

	if (p < 2)
		return 0.0;
	switch (in->coll) {
	case CB_COLL_BROADCAST:
	case CB_COLL_REDUCE:
		k = cb_model_pieces(in->bytes, TREE_CHUNK_DEFAULT);
		return lg *
		       (k * in->alpha_us + m / bw +
		        (in->coll == CB_COLL_REDUCE ? cb_model_reduce_us(in, m)
		                                    : 0));
	case CB_COLL_ALLREDUCE:
		for (int i = 1; i < p; i++)
			if (bt_depth(p, i) > depth)
				depth = bt_depth(p, i);
		k = cb_model_pieces((in->bytes + 1) / 2, TREE_CHUNK_DEFAULT);
		s = m / (2 * k);
		return (2 * depth + 4 * (k - 1)) * cb_model_msg_us(in, s) +
		       cb_model_reduce_us(in, (depth + 2 * (k - 1)) * s);
	default:
		return 0.0;
	}
}

const struct cb_algo cb_algo_tree = {
	.name = "tree",
	.description = "binomial broadcast/reduce, double binary tree "
	               "allreduce; pipelined in chunks",
	.colls = 1u << CB_COLL_ALLREDUCE | 1u << CB_COLL_BROADCAST |
	         1u << CB_COLL_REDUCE,
	.refuse = NULL, /* any rank count */
	.model_us = tree_model_us,
	CB_SCHED_PLAN_OPS(tree_sched),
};
