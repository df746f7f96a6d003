/* SPDX-License-Identifier: MIT */
/*
 * coll/sched_int.h - the schedule executor's state, shared by its two
 * halves: coll/sched_build.c (describing a call and linking it) and
 * coll/sched.c (running it, and the plans).  sched.c calls into
 * sched_build.c, never the other way.  Not for algorithms: they use
 * coll/sched.h.
 */
#ifndef CB_COLL_SCHED_INT_H
#define CB_COLL_SCHED_INT_H

#include "coll/sched.h"

/* ST_REDUCE: received, its reduction not yet queued (the engine had no
 * room); ST_REDUCING: the reduction is queued on the device engine. */
enum { ST_IDLE, ST_POSTED, ST_REDUCE, ST_REDUCING, ST_DONE };

#define NONE UINT32_MAX

struct segstate {
	/* current round's ops ord[lo .. hi); the segment ends at ord[end] */
	uint32_t lo, hi, end;
	/* ops of [lo, hi) not done that the round waits for */
	uint32_t pending;
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

static inline int sends(const struct cb_sop *op)
{
	return op->kind == CB_SOP_SEND || op->kind == CB_SOP_PUT;
}

/* A send the next round does not wait for (cfg.trail_sends). */
static inline int trails(const struct cb_sched *s, const struct cb_sop *op)
{
	return s->cfg.trail_sends && sends(op);
}

/* Chains, tags, notification numbers, segments and staging slots for the
 * ops added (sched_build.c). */
cb_status_t cb_sched_link(struct cb_sched *s);
/* Connect the peers the linked schedule uses (sched_build.c). */
cb_status_t cb_sched_connect_used(struct cb_sched *s, int late);

#endif
