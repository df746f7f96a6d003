/* SPDX-License-Identifier: MIT */
/*
 * transports/tputil.h - what the transports' own files share beside the
 * slot ring (lring.h) and the shared segment (lseg.h): declaring the ops a
 * data file gives its ops table, the FIFO of requests, progress over the
 * connected peers, a rank's host for messages.
 *
 * Header only, as lring.h: each transport links apart (tcp and shm in the
 * core's library, verbs and gpu as modules), and these are on the message
 * path.  Nothing of the core: only the ABI (include/collbench/transport.h).
 */
#ifndef CB_TRANSPORTS_TPUTIL_H
#define CB_TRANSPORTS_TPUTIL_H

#include <stddef.h>
#include <stdint.h>

#include <collbench/transport.h>

/*
 * The type of ops member @op (isend, irecv, test, progress, ...), for a data
 * file's entry points that its transport's ops table names:
 *     SHM_HIDDEN TPU_OP(isend) shm_isend;
 * declares shm_isend with the ABI's own prototype, which it then cannot
 * drift from.
 */
#define TPU_OP(op) __typeof__(*((struct cb_tp_ops *)0)->op)

/* The two-sided entry points every data file has: @p_isend, @p_irecv,
 * @p_test and @p_progress, each @vis (its visibility attribute). */
#define TPU_OPS_MSG(vis, p)                                                    \
	vis TPU_OP(isend) p##_isend;                                           \
	vis TPU_OP(irecv) p##_irecv;                                           \
	vis TPU_OP(test) p##_test;                                             \
	vis TPU_OP(progress) p##_progress

/* One-sided ones: @p_put and @p_notify_poll. */
#define TPU_OPS_PUT(vis, p)                                                    \
	vis TPU_OP(put) p##_put;                                               \
	vis TPU_OP(notify_poll) p##_notify_poll

/* The first members of an ops table (CB_TP_DEFINE): the ABI's header. */
#define TPU_TABLE_ABI .abi = CB_TP_ABI, .size = sizeof(struct cb_tp_ops)

/* stats(): a context that keeps its struct cb_tp_stats as ctx->stats
 * defines its @p_stats with this. */
#define TPU_STATS(p)                                                           \
	static void p##_stats(struct cb_tp_ctx *ctx, struct cb_tp_stats *out)  \
	{                                                                      \
		*out = ctx->stats;                                             \
	}

/* The host rank @rank runs on (the host table's name), for messages. */
static inline const char *tpu_host(const struct cb_tp_host *h, int rank)
{
	return h->hosts[h->host_of_rank[rank]];
}

/* put(): whether @bytes at @roff fit rank @peer's exported buffer of @cap
 * bytes; one line (transport @tp's) and CB_ERR_INVALID if not. */
static inline cb_status_t tpu_put_fits(const struct cb_tp_host *h,
                                       const char *tp, int peer, size_t bytes,
                                       uint64_t roff, uint64_t cap)
{
	if (roff <= cap && bytes <= cap - roff)
		return CB_OK;
	return h->fail(h, CB_ERR_INVALID,
	               "%s: a put of %zu bytes at offset %llu does not fit "
	               "rank %d's %llu-byte exported buffer",
	               tp, bytes, (unsigned long long)roff, peer,
	               (unsigned long long)cap);
}

/* A FIFO of requests through their next pointers: @r at the tail. */
static inline void tpu_q_push(struct cb_tp_req **head, struct cb_tp_req **tail,
                              struct cb_tp_req *r)
{
	r->next = NULL;
	if (*tail)
		(*tail)->next = r;
	else
		*head = r;
	*tail = r;
}

/* ... and its head off (there is one). */
static inline void tpu_q_pop(struct cb_tp_req **head, struct cb_tp_req **tail)
{
	*head = (*head)->next;
	if (!*head)
		*tail = NULL;
}

/*
 * progress(): @one on each connected peer's endpoint (@eps[@active[i]],
 * @n of them), in turn; it sets *moved when something moved and returns
 * the endpoint's failure, which stops the round and is returned.  CB_AGAIN
 * when nothing moved anywhere.
 */
static inline cb_status_t
tpu_progress(struct cb_tp_ep **eps, const int *active, int n,
             cb_status_t (*one)(struct cb_tp_ep *, int *moved))
{
	int moved = 0;
	cb_status_t st;

	for (int i = 0; i < n; i++)
		if ((st = one(eps[active[i]], &moved)))
			return st;
	return moved ? CB_OK : CB_AGAIN;
}

#endif
