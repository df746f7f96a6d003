/* SPDX-License-Identifier: MIT */
/*
 * coll/ps_async_int.h - what the asynchronous parameter server's two halves
 * share: coll/ps_async.c (plans, sessions, a worker's steps, the waits) and
 * coll/ps_async_link.c (each pair's messages: headers and their data posted
 * in the pair's order, pushes applied and answered as they arrive).  Inside
 * coll only.
 */
#ifndef CB_COLL_PS_ASYNC_INT_H
#define CB_COLL_PS_ASYNC_INT_H

#include <stdint.h>

#include "coll/sched.h"

#define TAG_HDR  0x5053410000000000ull /* "PSA": headers */
#define TAG_DATA 0x5053440000000000ull /* "PSD": their data */

enum { PSA_PUSH = 1, PSA_REPLY = 2 };

struct psa_hdr {
	uint32_t kind;
	uint32_t pad;
	uint64_t step;
	uint64_t counts[]; /* a reply's: the version of the copy */
};

/* What this rank has with one peer. */
struct link {
	struct cb_req hreq, dreq;
	int hposted, dposted;
	uint64_t rseq, sseq; /* messages received from / sent to the peer */
	uint64_t rleft;      /* messages still to come in this session */
	struct psa_hdr *rh;  /* the header receive's buffer */
	struct psa_hdr *ph;  /* our push's header (worker) */
	struct psa_hdr *sh;  /* our reply's header (server) */
	struct cb_req push[2], rep[2]; /* in flight: header, data */
	int rkind;                     /* what the data in flight is */
	int have_push; /* server: a push from this worker waits to apply */
};

struct cb_plan {
	struct cb_comm *c;
	int *members;
	int n, me, k, w;
	int dedicated;
	enum cb_dtype dt;
	size_t es, max_count, shard_cap; /* elements */
	size_t hdr_bytes;
	int shard;          /* the shard this rank serves, or -1 */
	struct link *links; /* [n] */
	char *hbufs;        /* the links' headers: [n][3][hdr_bytes] */
	/* server */
	char *params, *stage, *snap; /* [shard], [w][shard], [w][shard] */
	uint64_t *counts;            /* [w] updates applied, per worker */
	uint64_t *others_at_read;    /* [w] */
	uint64_t total;
	uint32_t hist[CB_STALE_BUCKETS];
	uint64_t stale_max;
	const struct cb_mem *stage_mem, *snap_mem; /* registered regions */
	const struct cb_mem *send_mem, *recv_mem;  /* this session's buffers */
	/* worker */
	uint64_t *whdr; /* [k][w]: the version of each pulled shard */
	int replies_left;
	struct cb_coll_stats stats;
};

static inline int server_of(const struct cb_plan *p, int shard)
{
	return p->dedicated ? p->w + shard : shard;
}

/* The shard rank @q serves, or -1. */
static inline int shard_of(const struct cb_plan *p, int q)
{
	if (!p->dedicated)
		return q;
	return q >= p->w ? q - p->w : -1;
}

static inline void shard_span(const struct cb_plan *p, size_t count, int k,
                              size_t *off, size_t *len)
{
	*off = cb_block_start(count, p->k, k);
	*len = cb_block_len(count, p->k, k);
}

/* One worker's slot in the stage and snapshot areas (a shard and a byte,
 * never empty), rounded up to a cache line: each slot's elements are then
 * aligned for their type (an odd stride made every other slot's floats
 * misaligned: UndefinedBehaviorSanitizer), and two workers' slots never
 * share a line. */
static inline size_t slot_bytes(const struct cb_plan *p)
{
	return (p->shard_cap * p->es + 1 + 63) & ~(size_t)63;
}

/* Post a send (@send) or receive to rank index @peer, counted in the stats;
 * a transport with no room is tried again within the job's deadline. */
cb_status_t psa_post(struct cb_plan *p, int send, int peer, void *buf,
                     size_t bytes, const struct cb_mem *m, uint64_t tag,
                     struct cb_req *r);
/* 1 once @r (NULL ep: never posted, or done) has completed. */
int psa_done(struct cb_req *r, cb_status_t *st);
/* A header and its data to @peer, back to back (our own pair order). */
cb_status_t psa_send_msg(struct cb_plan *p, int peer, struct psa_hdr *h,
                         const void *data, size_t bytes, const struct cb_mem *m,
                         struct cb_req *r);
/* Server: add worker @w's update into the shard, count its staleness. */
void psa_apply(struct cb_plan *p, int w, const void *upd, size_t len);
/* Everything that arrived on every link: data (a push to apply, a reply
 * counted), headers, pushes waiting to be answered. */
cb_status_t psa_poll(struct cb_plan *p, const struct cb_coll_args *a,
                     int *moved);
/* The rank a wait of @p waits on now (for the line a timeout prints). */
int psa_waited_on(const struct cb_plan *p);
/* Nothing more to come, to answer or to leave on any link. */
int psa_quiet(struct cb_plan *p, cb_status_t *st);

#endif
