/* SPDX-License-Identifier: MIT */
/*
 * coll/sched.h - the schedule executor most algorithms are written on.
 *
 * An algorithm describes one call as a list of operations - send, receive,
 * receive-and-reduce, local copy - each tagged with a segment and a round.
 * The executor runs them:
 *
 *   - Rounds order the work inside one segment: the operations of round r
 *     of a segment are posted once every operation of rounds < r of that
 *     segment has completed (receives landed, reductions applied).
 *   - Segments pipeline: different segments progress independently, up to
 *     a window of CB_SCHED_WINDOW segments at a time.  An algorithm that
 *     cuts its buffer into pieces with the same schedule each (a chain or
 *     a tree, pipelined) puts each piece in its own segment; one that
 *     cannot pipeline uses segment 0 only.
 *   - Messages between two ranks, in each direction, travel in the order
 *     the operations were added (the transports deliver in order and check
 *     tags).  So the sender and the receiver must add the operations on
 *     their pair in the same order; the executor posts them in that order.
 *     A schedule that breaks this fails with a tag or size mismatch error -
 *     loudly, never with wrong data.
 *   - Operations are added in (segment, round) order, or, where the wire
 *     order the algorithm wants differs from that (the ring allreduce: a
 *     step of every chunk, then the next step), segments may interleave:
 *     then each segment's own operations still come in round order, and
 *     segment numbers stay below the plan's operation count.  Such a
 *     schedule must not make a message wait for a segment beyond the
 *     window: its wire order visits segments in groups of at most
 *     CB_SCHED_WINDOW.
 *   - One-sided writes: a CB_SOP_PUT writes its piece straight into the
 *     peer's memory and raises a notification there, where the path the
 *     call set (cb_sched_put_path) is on; where it is off it goes as a
 *     send.  The peer waits for it with a CB_SOP_NOTIFY (when it offered
 *     its memory) or a receive (when not): both ends decide alike.
 *
 * Offsets and sizes are in bytes, against three buffers: the call's send
 * and receive buffers and the plan's scratch buffer (CB_SB_TMP, sized at
 * create time).  A receive-and-reduce computes dst = src OP message for
 * the call's dtype and op; it is fused into the transport where the peer's
 * transport can (shm reads the peer's buffer directly), else it lands in
 * an executor staging slot and is reduced on completion.  When several
 * receives reduce into the same dst in one round, make src == dst and copy
 * the initial value in an earlier round: their order is not fixed.
 *
 * Zero-byte sends and receives are real messages (barriers use them); skip
 * empty pieces in the generator, on both sides alike.
 */
#ifndef CB_COLL_SCHED_H
#define CB_COLL_SCHED_H

#include "coll/coll.h"

#define CB_SCHED_WINDOW 8

enum cb_sbuf { CB_SB_SEND, CB_SB_RECV, CB_SB_TMP };

enum cb_sop_kind {
	CB_SOP_SEND,
	CB_SOP_RECV,
	CB_SOP_RECV_REDUCE,
	CB_SOP_COPY,
	CB_SOP_PUT,    /* a send that may write into the peer's memory */
	CB_SOP_NOTIFY, /* the receiving end of a put: its notification */
};

struct cb_sop {
	uint8_t kind, buf, sbuf; /* kind; dst (or the send's source) buffer;
	                            src buffer of a reduce or copy */
	uint16_t round;
	uint32_t seg;
	int peer; /* group index */
	size_t off, soff, bytes;
};

struct cb_sched;

struct cb_sched_cfg {
	size_t max_ops;     /* most operations one call adds */
	size_t tmp_bytes;   /* scratch buffer (CB_SB_TMP) */
	size_t stage_bytes; /* largest receive-and-reduce piece */
	int stage_per_seg;  /* most receive-and-reduce ops in one round of a
	                       segment */
	const char *algo;   /* for messages: "tree" */
	/* For the line a stall prints: where @op is in the algorithm
	 * ("reduce-scatter step 2, chunk 0"; NULL: "segment S round R"),
	 * @n ranks in the group. */
	void (*where)(char *buf, size_t cap, const struct cb_sop *op, int n);
	/* A round does not wait for its sends (and puts) to complete, only
	 * its segment's end does: for schedules in which no later round
	 * writes what an earlier send reads before the peer has used it (the
	 * ring allreduce: a block comes back only after the whole ring has
	 * read it). */
	int trail_sends;
};

cb_status_t cb_sched_create(struct cb_comm *c, const struct cb_group *g,
                            const struct cb_sched_cfg *cfg,
                            struct cb_sched **out);
void cb_sched_destroy(struct cb_sched *s);

/* Start describing a call. */
void cb_sched_begin(struct cb_sched *s, const struct cb_coll_args *a);

/* Add operations (return 0, or -1 once the capacity is exceeded: the run
 * then fails with a clear message). */
int cb_sched_send(struct cb_sched *s, uint32_t seg, int round, int peer,
                  enum cb_sbuf buf, size_t off, size_t bytes);
int cb_sched_recv(struct cb_sched *s, uint32_t seg, int round, int peer,
                  enum cb_sbuf buf, size_t off, size_t bytes);
int cb_sched_recv_reduce(struct cb_sched *s, uint32_t seg, int round, int peer,
                         enum cb_sbuf dst, size_t doff, enum cb_sbuf src,
                         size_t soff, size_t bytes);
int cb_sched_copy(struct cb_sched *s, uint32_t seg, int round, enum cb_sbuf dst,
                  size_t doff, enum cb_sbuf src, size_t soff, size_t bytes);
/* A put of @bytes at @off of @buf to byte @roff of the peer's region (past
 * the path's base), or a send where the path is off; and its receiving
 * end, which waits for the notification (@bytes: for the counters). */
int cb_sched_put(struct cb_sched *s, uint32_t seg, int round, int peer,
                 enum cb_sbuf buf, size_t off, size_t roff, size_t bytes);
int cb_sched_notify(struct cb_sched *s, uint32_t seg, int round, int peer,
                    size_t bytes);

/*
 * The one-sided path of this call's puts (set after cb_sched_begin; none:
 * puts go as sends).  @ready is asked before the first put is posted:
 * CB_AGAIN while it cannot tell yet, else CB_OK with @on (0: as sends),
 * @rm (the peer's imported region) and @roff (the base puts add to), or an
 * error.
 */
struct cb_sched_put_path {
	int on;
	struct cb_tp_rmem *rm;
	uint64_t roff;
};
typedef cb_status_t (*cb_sched_put_ready_fn)(struct cb_comm *c, void *arg,
                                             struct cb_sched_put_path *out);
void cb_sched_put_path(struct cb_sched *s, cb_sched_put_ready_fn ready,
                       void *arg);

/* Run what was described; counters in cb_sched_stats() (reset by begin). */
cb_status_t cb_sched_run(struct cb_sched *s);
const struct cb_coll_stats *cb_sched_stats(const struct cb_sched *s);
/* The scratch buffer, for algorithms that prepare it themselves. */
void *cb_sched_tmp(struct cb_sched *s);
/* The registered region of one of this call's buffers (NULL: unknown). */
const struct cb_mem *cb_sched_mem(const struct cb_sched *s, enum cb_sbuf b);

/*
 * The usual shape of an algorithm on the executor: a plan that is just a
 * schedule plus the algorithm's generator.  coll/algos.c turns such a
 * description into a struct cb_algo's plan_build/run/plan_free/stats.
 */
struct cb_sched_algo {
	/* Sizes for a plan (fill @sc from @cfg); CB_OK or a recorded error. */
	cb_status_t (*size)(const struct cb_plan_cfg *cfg,
	                    struct cb_sched_cfg *sc);
	/* Describe one call: cb_sched_begin() already done. */
	void (*gen)(struct cb_sched *s, const struct cb_plan_cfg *cfg,
	            const struct cb_coll_args *a);
};

cb_status_t cb_sched_plan_build(const struct cb_sched_algo *sa,
                                struct cb_comm *c,
                                const struct cb_plan_cfg *cfg,
                                struct cb_plan **plan);
cb_status_t cb_sched_plan_run(struct cb_plan *plan,
                              const struct cb_coll_args *a);
void cb_sched_plan_free(struct cb_plan *plan);
const struct cb_coll_stats *cb_sched_plan_stats(const struct cb_plan *plan);

/* The cb_algo members of an algorithm on the executor:
 *   { .name = ..., CB_SCHED_PLAN_OPS(my_sched_algo), ... } */
#define CB_SCHED_PLAN_OPS(sa)                                                  \
	.sched = &(sa), .run = cb_sched_plan_run,                              \
	.plan_free = cb_sched_plan_free, .stats = cb_sched_plan_stats

/* Helpers generators share. */

/* The pipelining unit: --chunk-bytes, else @dflt, in whole elements of the
 * plan's dtype (at least one). */
static inline size_t cb_chunk_bytes(const struct cb_plan_cfg *cfg, size_t dflt)
{
	size_t es = cb_dtype_bytes(cfg->dtype);
	size_t c = cfg->chunk_bytes ? cfg->chunk_bytes : dflt;

	return c / es ? c / es * es : es;
}
static inline size_t cb_chunk_elems(const struct cb_plan_cfg *cfg, size_t dflt)
{
	return cb_chunk_bytes(cfg, dflt) / cb_dtype_bytes(cfg->dtype);
}
static inline size_t cb_div_up(size_t a, size_t b)
{
	return (a + b - 1) / b;
}
static inline int cb_ceil_log2(int n)
{
	int l = 0;

	while ((1L << l) < n)
		l++;
	return l;
}
static inline size_t cb_block_len(size_t count, int p, int i)
{
	return count / (size_t)p + ((size_t)i < count % (size_t)p);
}
static inline size_t cb_block_start(size_t count, int p, int i)
{
	size_t rem = count % (size_t)p;

	return (size_t)i * (count / (size_t)p) +
	       ((size_t)i < rem ? (size_t)i : rem);
}

#endif
