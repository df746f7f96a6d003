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
 * After reduce-scatter rank r holds the reduced segment (r + 1) mod p.  Each
 * step's segment is cut into chunks (--chunk-bytes, default 512 KiB) that
 * flow through a pipeline: chunk j of step s goes out as soon as chunk j of
 * step s-1 has arrived and been reduced, while up to RING_WINDOW chunks are
 * in flight each way.  So reduction overlaps the wire, and a large message
 * never needs more staging than the window.  Where the transport can reduce
 * on arrival (irecv_reduce: shm reads the peer's buffer directly), the
 * reduce-scatter receives skip the staging buffer and its extra pass.  On
 * device memory the staging chunks are device memory too, and a staged
 * chunk's reduction is queued on the device engine: its window slot stays
 * busy (received, then reducing) until the engine reports it done.  Where
 * the transport writes into mapped peer memory (shm), the allgather chunks
 * are written straight into the right neighbour's receive buffer instead
 * of sent, and the receiver waits for their notifications
 * (coll/ring_put.h): the reducer's freshly written lines go out from its
 * own cache instead of being pulled out of it by the other core.
 *
 * Cost (alpha-beta-gamma, n bytes, p ranks):
 *   2(p-1) alpha + 2 (p-1)/p n beta + (p-1)/p n gamma
 * bandwidth-optimal, latency linear in p.
 *
 * The other collectives run on the schedule executor (coll/sched.h), one
 * segment per chunk j of the blocks (or of the buffer), its steps as rounds:
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
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/reduce.h"
#include "coll/ring_put.h"
#include "coll/sched.h"
#include "core/log.h"

#define RING_WINDOW        8
#define RING_CHUNK_DEFAULT (512u << 10)

struct cb_plan {
	struct cb_comm *comm;
	struct cb_group group;
	int left, right; /* comm ranks */
	size_t chunk_bytes;
	size_t max_count;
	uint8_t *tmp; /* RING_WINDOW staging chunks */
	const struct cb_mem *tmp_mem;
	struct cb_req rreq[RING_WINDOW], sreq[RING_WINDOW];
	/* per receive slot: 0 receiving, 1 received and its reduction not
	 * yet queued (device memory), 2 reducing on the device */
	uint8_t rstate[RING_WINDOW];
	uint64_t seq; /* calls so far: the tag's high bits */
	int fused;    /* the left peer's transport reduces on arrival */
	struct cb_tp_reduce red;
	struct cb_coll_stats stats;
	/* reduce_scatter, allgather, broadcast: a schedule (else NULL) */
	struct cb_sched *sched;
	enum cb_coll coll;
	struct ring_put put; /* the one-sided allgather (coll/ring_put.h) */
};

/* A position in the flattened (step, chunk) sequence. */
struct cursor {
	int s;
	size_t j;
};

struct ring_call {
	struct cb_plan *pl;
	const struct cb_coll_args *a;
	size_t esize, chunk_elems;
	int p, r, steps;
};

static inline size_t seg_len(size_t count, int p, int i)
{
	return count / (size_t)p + ((size_t)i < count % (size_t)p);
}

static inline size_t seg_start(size_t count, int p, int i)
{
	size_t rem = count % (size_t)p;

	return (size_t)i * (count / (size_t)p) +
	       ((size_t)i < rem ? (size_t)i : rem);
}

static inline int mod(int x, int p)
{
	return ((x % p) + p) % p;
}

/* Segment received at step s (reduce-scatter, then allgather). */
static inline int recv_seg(const struct ring_call *c, int s)
{
	return s < c->p - 1 ? mod(c->r - s - 1, c->p)
	                    : mod(c->r - (s - (c->p - 1)), c->p);
}

/* Segment sent at step s: the one received at step s-1 (own at step 0). */
static inline int send_seg(const struct ring_call *c, int s)
{
	return s == 0 ? c->r : recv_seg(c, s - 1);
}

static inline size_t nchunks(const struct ring_call *c, int seg)
{
	size_t len = seg_len(c->a->count, c->p, seg);

	return (len + c->chunk_elems - 1) / c->chunk_elems;
}

/* Elements [*off, *off + *len) of chunk j of segment seg. */
static inline void chunk_range(const struct ring_call *c, int seg, size_t j,
                               size_t *off, size_t *len)
{
	size_t start = seg_start(c->a->count, c->p, seg);
	size_t slen = seg_len(c->a->count, c->p, seg);
	size_t lo = j * c->chunk_elems;

	*off = start + lo;
	*len = slen - lo < c->chunk_elems ? slen - lo : c->chunk_elems;
}

/* Move to the next chunk, skipping steps whose segment is empty. */
static void advance(const struct ring_call *c, struct cursor *k, int sending)
{
	k->j++;
	while (k->s < c->steps &&
	       k->j >= nchunks(c, sending ? send_seg(c, k->s)
	                                  : recv_seg(c, k->s))) {
		k->s++;
		k->j = 0;
	}
}

static void first(const struct ring_call *c, struct cursor *k, int sending)
{
	k->s = 0;
	k->j = (size_t)-1;
	advance(c, k, sending);
}

static inline int before(const struct cursor *a, const struct cursor *b)
{
	return a->s < b->s || (a->s == b->s && a->j < b->j);
}

static inline uint64_t tag_of(const struct cb_plan *pl, const struct cursor *k)
{
	return (pl->seq << 40) | ((uint64_t)k->s << 24) | (k->j & 0xffffff);
}

static cb_status_t ring_stalled(const struct ring_call *c,
                                const struct cursor *rc,
                                const struct cursor *sc)
{
	const struct cb_plan *pl = c->pl;
	int p = c->p;
	int waiting_recv = rc->s < c->steps;
	const struct cursor *k = waiting_recv ? rc : sc;
	int peer = waiting_recv ? pl->left : pl->right;

	cb_comm_stalled_on(pl->comm, peer);
	return cb_fail(
	        CB_ERR_TIMEOUT,
	        "timed out after %g s without progress: rank %d waits for "
	        "rank %d (host %s) to %s ring allreduce %s step %d, chunk "
	        "%zu",
	        pl->comm->timeout_s, pl->comm->rank, peer,
	        cb_comm_host_name(pl->comm, peer),
	        waiting_recv ? "send" : "receive",
	        k->s < p - 1 ? "reduce-scatter" : "allgather",
	        k->s < p - 1 ? k->s : k->s - (p - 1), k->j);
}

static cb_status_t ring_allreduce_run(struct cb_plan *pl,
                                      const struct cb_coll_args *a)
{
	struct ring_call c = {
		.pl = pl, .a = a, .p = pl->group.n, .r = pl->group.me
	};
	struct cb_comm *comm = pl->comm;
	struct cursor rp, rc, sp, sc;
	uint64_t rposted = 0, rdone = 0, sposted = 0, sdone = 0;
	struct cb_wait wait = { 0 };
	cb_status_t st;

	memset(&pl->stats, 0, sizeof(pl->stats)); /* counted per call */
	c.esize = cb_dtype_bytes(a->dtype);
	if (a->count > pl->max_count)
		return cb_fail(CB_ERR_INVALID, "ring: count above the plan's");
	if (c.p == 1 || a->count == 0) {
		struct cb_req q;
		if (a->sendbuf == a->recvbuf || !a->count)
			return CB_OK;
		/* nothing else is queued: the engine has room */
		st = cb_comm_copy(comm, a->recvbuf, NULL, a->sendbuf, NULL,
		                  a->count * c.esize, &q);
		return st ? st : cb_comm_wait(comm, &q);
	}
	c.steps = 2 * (c.p - 1);
	c.chunk_elems = pl->chunk_bytes / c.esize;
	if (c.chunk_elems == 0)
		c.chunk_elems = 1;
	pl->seq++;
	pl->red.dtype = a->dtype;
	pl->red.op = a->op;
	pl->red.elem_bytes = (uint32_t)c.esize;
	const struct cb_mem *smem = cb_comm_mem_find(comm, a->sendbuf, 0);
	const struct cb_mem *rmem = cb_comm_mem_find(comm, a->recvbuf, 0);
	int dev = cb_mem_is_gpu(rmem);
	uint64_t ag_sent = 0, ag_got = 0; /* one-sided allgather chunks */
	int ready = 0;
	if ((st = cb_ring_put_begin(comm, &pl->put, rmem, a->recvbuf, pl->seq)))
		return st;
	first(&c, &rp, 0);
	first(&c, &rc, 0);
	first(&c, &sp, 1);
	first(&c, &sc, 1);

	while (rc.s < c.steps || sc.s < c.steps) {
		int moved = 0;

		/* Post receives ahead, up to the window. */
		while (rp.s < c.steps && rposted - rdone < RING_WINDOW) {
			if (rp.s >= c.p - 1 && pl->put.notify) {
				/* allgather: the left writes it in place */
				pl->rstate[rposted % RING_WINDOW] = 3;
				rposted++;
				advance(&c, &rp, 0);
				continue;
			}
			int seg = recv_seg(&c, rp.s);
			size_t off, len;
			chunk_range(&c, seg, rp.j, &off, &len);
			struct cb_req *q = &pl->rreq[rposted % RING_WINDOW];
			if (rp.s < c.p - 1 && pl->fused) {
				/* reduce-scatter, reduced by the transport */
				st = cb_comm_irecv_reduce(
				        comm, pl->left,
				        (char *)a->recvbuf + off * c.esize,
				        (const char *)a->sendbuf +
				                off * c.esize,
				        len * c.esize, rmem, &pl->red,
				        tag_of(pl, &rp), q);
			} else {
				/* reduce-scatter into staging, or allgather
				 * straight into place */
				void *dst =
				        rp.s < c.p - 1
				                ? (void *)(pl->tmp +
				                           (rposted %
				                            RING_WINDOW) *
				                                   pl->chunk_bytes)
				                : (void *)((char *)a->recvbuf +
				                           off * c.esize);
				st = cb_comm_irecv(
				        comm, pl->left, dst, len * c.esize,
				        rp.s < c.p - 1 ? pl->tmp_mem : rmem,
				        tag_of(pl, &rp), q);
			}
			if (st == CB_AGAIN)
				break;
			if (st)
				return st;
			pl->rstate[rposted % RING_WINDOW] = 0;
			rposted++;
			advance(&c, &rp, 0);
		}
		/* Send every chunk whose data is final, up to the window. */
		while (sp.s < c.steps && sposted - sdone < RING_WINDOW &&
		       (sp.s == 0 ||
		        before(&(struct cursor){ sp.s - 1, sp.j }, &rc))) {
			int seg = send_seg(&c, sp.s);
			size_t off, len;
			int ag = sp.s >= c.p - 1;
			if (ag && !ready) {
				/* how the allgather goes: the right's answer */
				if ((st = cb_ring_put_ready(comm, &pl->put)) ==
				    CB_AGAIN)
					break;
				if (st)
					return st;
				ready = 1;
			}
			chunk_range(&c, seg, sp.j, &off, &len);
			const char *src = sp.s == 0 ? a->sendbuf : a->recvbuf;
			struct cb_req *q = &pl->sreq[sposted % RING_WINDOW];
			if (ag && pl->put.put)
				st = cb_comm_put(
				        comm, pl->right, src + off * c.esize,
				        len * c.esize, rmem, pl->put.rrm,
				        pl->put.in.off + off * c.esize,
				        cb_ring_put_note(pl->seq, ag_sent), q);
			else
				st = cb_comm_isend(
				        comm, pl->right, src + off * c.esize,
				        len * c.esize, sp.s == 0 ? smem : rmem,
				        tag_of(pl, &sp), q);
			if (st == CB_AGAIN)
				break;
			if (st)
				return st;
			ag_sent += ag && pl->put.put;
			pl->stats.msgs_sent++;
			pl->stats.bytes_sent += len * c.esize;
			sposted++;
			advance(&c, &sp, 1);
		}
		if ((st = cb_comm_progress(comm)) < 0)
			return st;
		/* Retire receives in order; reduce-scatter ones get reduced. */
		while (rdone < rposted) {
			struct cb_req *q = &pl->rreq[rdone % RING_WINDOW];
			uint8_t *rs = &pl->rstate[rdone % RING_WINDOW];
			if (*rs == 3) {
				/* written in place by the left: its note */
				uint32_t got, want = cb_ring_put_note(pl->seq,
				                                      ag_got);
				st = cb_comm_notify_poll(comm, pl->left, &got);
				if (st == CB_AGAIN)
					break;
				if (st)
					return st;
				if (got != want)
					return cb_fail(CB_ERR_PROTO,
					               "ring: rank %d's write "
					               "%#x arrived where %#x "
					               "was due",
					               pl->left, got, want);
				size_t off, len;
				chunk_range(&c, recv_seg(&c, rc.s), rc.j, &off,
				            &len);
				pl->stats.msgs_recv++;
				pl->stats.bytes_recv += len * c.esize;
				ag_got++;
				*rs = 0;
				rdone++;
				advance(&c, &rc, 0);
				moved = 1;
				continue;
			}
			int staged = rc.s < c.p - 1 && !pl->fused;
			size_t off = 0, len = 0;
			if (staged)
				chunk_range(&c, recv_seg(&c, rc.s), rc.j, &off,
				            &len);
			char *dst = (char *)a->recvbuf + off * c.esize;
			const char *in =
			        (const char *)a->sendbuf + off * c.esize;
			uint8_t *got = pl->tmp +
			               (rdone % RING_WINDOW) * pl->chunk_bytes;
			if (*rs == 0) {
				st = cb_comm_test(q);
				if (st == CB_AGAIN)
					break;
				if (st)
					return st;
				pl->stats.msgs_recv++;
				pl->stats.bytes_recv += q->tp.bytes;
				if (staged && dev)
					*rs = 1;
				else if (staged)
					cb_reduce(a->dtype, a->op, dst, in, got,
					          len);
			}
			if (*rs == 1) {
				st = cb_comm_reduce_local(comm, dst, in, got,
				                          len, &pl->red, rmem,
				                          q);
				if (st == CB_AGAIN)
					break;
				if (st)
					return st;
				*rs = 2;
			}
			if (*rs == 2) {
				st = cb_comm_test(q);
				if (st == CB_AGAIN)
					break;
				if (st)
					return st;
				*rs = 0;
			}
			rdone++;
			advance(&c, &rc, 0);
			moved = 1;
		}
		while (sdone < sposted) {
			st = cb_comm_test(&pl->sreq[sdone % RING_WINDOW]);
			if (st == CB_AGAIN)
				break;
			if (st)
				return st;
			sdone++;
			advance(&c, &sc, 1);
			moved = 1;
		}
		if (cb_wait_expired(&wait, moved, comm->timeout_s))
			return ring_stalled(&c, &rc, &sc);
	}
	return cb_ring_put_end(comm, &pl->put);
}

/* ---- reduce_scatter, allgather, broadcast on the executor ---- */

static inline size_t ring_chunk(const struct cb_plan *pl, size_t es)
{
	size_t c = pl->chunk_bytes / es * es;

	return c ? c : es;
}

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
	if (!pl->sched)
		return ring_allreduce_run(pl, a);
	if (a->count > pl->max_count)
		return cb_fail(CB_ERR_INVALID, "ring: count above the plan's");
	if (a->coll != pl->coll)
		return cb_fail(CB_ERR_INVALID, "ring: a %s plan cannot run %s",
		               cb_coll_name(pl->coll), cb_coll_name(a->coll));
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
	pl->fused = cb_comm_can_recv_reduce(comm, pl->left);
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
	cb_status_t cst = g->n > 1 ? cb_comm_connect(comm, nb, 2, 0) : CB_OK;
	if (cst) {
		free(pl);
		return cst;
	}
	if (cfg->coll != CB_COLL_ALLREDUCE) {
		struct cb_sched_cfg sc = { 0 };
		cb_status_t st;
		if ((st = ring_sched_size(cfg, pl->chunk_bytes, &sc)) ||
		    (st = cb_sched_create(comm, g, &sc, &pl->sched))) {
			free(pl);
			return st;
		}
		*out = pl;
		return CB_OK;
	}
	void *t;
	if (cb_comm_scratch_alloc(comm, RING_WINDOW * pl->chunk_bytes, &t)) {
		free(pl);
		return cb_fail_status();
	}
	pl->tmp = t;
	pl->tmp_mem = cb_comm_mem_find(comm, t, 0);
	if (!cb_mem_is_gpu(pl->tmp_mem))
		memset(pl->tmp, 0, RING_WINDOW * pl->chunk_bytes);
	cb_status_t st = g->n > 1 ? cb_ring_put_agree(comm, &pl->put, pl->left,
	                                              pl->right, pl->tmp_mem)
	                          : CB_OK;
	if (st) {
		ring_plan_free(pl);
		return st;
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
	if (pl->tmp)
		cb_comm_mem_free(pl->comm, pl->tmp,
		                 RING_WINDOW * pl->chunk_bytes);
	free(pl);
}

static const struct cb_coll_stats *ring_stats(const struct cb_plan *pl)
{
	return pl->sched ? cb_sched_stats(pl->sched) : &pl->stats;
}

static double ring_model_us(enum cb_coll coll, size_t bytes, int p,
                            int ps_servers, double alpha_us, double beta_gbps,
                            double gamma_gbps)
{
	/* beta and gamma in GB/s = 1e3 bytes per us */
	double bw = beta_gbps * 1e3, m = (double)bytes, k, t;

	(void)ps_servers;
	if (p < 2)
		return 0.0;
	switch (coll) {
	case CB_COLL_ALLREDUCE:
		t = 2.0 * (p - 1) * alpha_us + 2.0 * (p - 1) / p * m / bw;
		if (gamma_gbps > 0)
			t += (double)(p - 1) / p * m / (gamma_gbps * 1e3);
		return t;
	case CB_COLL_REDUCE_SCATTER:
	case CB_COLL_ALLGATHER:
		/* m is the row's size, all p blocks */
		k = (double)((bytes / (size_t)p + RING_CHUNK_DEFAULT - 1) /
		             RING_CHUNK_DEFAULT);
		t = (p - 1) * (k > 1 ? k : 1) * alpha_us +
		    (double)(p - 1) / p * m / bw;
		if (coll == CB_COLL_REDUCE_SCATTER && gamma_gbps > 0)
			t += (double)(p - 1) / p * m / (gamma_gbps * 1e3);
		return t;
	case CB_COLL_BROADCAST:
		k = (double)((bytes + RING_CHUNK_DEFAULT - 1) /
		             RING_CHUNK_DEFAULT);
		if (k < 1)
			k = 1;
		return (p - 2 + k) * (alpha_us + m / k / bw);
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
