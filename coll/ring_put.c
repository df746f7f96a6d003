/* SPDX-License-Identifier: MIT */
/* coll/ring_put.c - the ring allreduce's one-sided allgather
 * (coll/ring_put.h). */
#include "coll/ring_put.h"

#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/worker.h"

/* Tags of its own messages: step fields no call of the ring uses. */
#define TAG_OFFER (0xfffdull << 24)
#define TAG_AGREE (0xfffcull << 24)
#define TAG_WHERE (0xfffeull << 24)

/* Post a small message (a send when @send), retrying while the transport
 * has no room, within the job's deadline. */
static cb_status_t post(struct cb_comm *c, int send, int peer, void *buf,
                        size_t bytes, uint64_t tag, struct cb_req *q)
{
	if (send)
		return cb_worker_isend(c, peer, buf, bytes, NULL, tag, q, 0,
		                       "ring: posting a send to");
	return cb_worker_irecv(c, peer, buf, bytes, NULL, tag, q, 0,
	                       "ring: posting a receive from");
}

/* Describe @recvbuf (inside @m) for the left neighbour; flag 0 where it
 * cannot be shared. */
static void describe(struct cb_comm *c, struct ring_put *rp,
                     const struct cb_mem *m, const void *recvbuf)
{
	size_t n = sizeof(rp->out.blob);

	rp->out.flag = 0;
	rp->out.bytes = 0;
	rp->out.off = 0;
	if (!m || cb_mem_is_gpu(m))
		return;
	/* not shareable: messages, not a failure */
	struct cb_fail_rec why;
	cb_fail_open(&why);
	cb_status_t st = cb_comm_mem_export(c, rp->left, m, rp->out.blob, &n);
	cb_fail_close(&why, 0);
	if (st != CB_OK)
		return;
	rp->out.flag = 1;
	rp->out.bytes = (uint32_t)n;
	rp->out.off = (uint64_t)((const char *)recvbuf - (const char *)m->base);
}

/* Map the right's region described by rp->in (the last one kept). */
static cb_status_t import(struct cb_comm *c, struct ring_put *rp)
{
	const struct ring_where *w = &rp->in;
	cb_status_t st;

	if (w->bytes > sizeof(w->blob))
		return cb_fail(CB_ERR_PROTO,
		               "ring: rank %d's buffer description does not "
		               "parse (%u bytes)",
		               rp->right, w->bytes);
	if (rp->rrm && rp->rrm_of.bytes == w->bytes &&
	    !memcmp(rp->rrm_of.blob, w->blob, w->bytes))
		return CB_OK;
	cb_comm_mem_unimport(c, rp->right, rp->rrm);
	rp->rrm = NULL;
	if ((st = cb_comm_mem_import(c, rp->right, w->blob, w->bytes,
	                             &rp->rrm))) {
		rp->rrm = NULL;
		return st;
	}
	rp->rrm_of = *w;
	return CB_OK;
}

cb_status_t cb_ring_put_agree(struct cb_comm *c, struct ring_put *rp, int on,
                              int left, int right, const struct cb_mem *probe)
{
	uint32_t ok = 0, left_ok = 0;
	cb_status_t st;

	memset(rp, 0, sizeof(*rp));
	rp->left = left;
	rp->right = right;
	/* offer the left a region to write into; try the right's */
	if (on && cb_comm_can_put(c, left))
		describe(c, rp, probe, probe ? probe->base : NULL);
	if ((st = post(c, 1, left, &rp->out, sizeof(rp->out), TAG_OFFER,
	               &rp->rq_out)) ||
	    (st = post(c, 0, right, &rp->in, sizeof(rp->in), TAG_OFFER,
	               &rp->rq_in)) ||
	    (st = cb_comm_wait(c, &rp->rq_out)) ||
	    (st = cb_comm_wait(c, &rp->rq_in)))
		return st;
	if (on && rp->in.flag && cb_comm_can_put(c, right)) {
		struct cb_fail_rec why;
		cb_fail_open(&why);
		ok = import(c, rp) == CB_OK;
		cb_fail_close(&why, 0);
		if (!ok)
			cb_log(CB_LOG_INFO,
			       "ring: cannot write into rank %d's memory (%s): "
			       "its allgather goes as messages",
			       right,
			       cb_fail_rec_msg(&why) ? cb_fail_rec_msg(&why)
			                             : "?");
	}
	/* tell the right whether this rank will write into it */
	if ((st = post(c, 1, right, &ok, sizeof(ok), TAG_AGREE, &rp->rq_out)) ||
	    (st = post(c, 0, left, &left_ok, sizeof(left_ok), TAG_AGREE,
	               &rp->rq_in)) ||
	    (st = cb_comm_wait(c, &rp->rq_out)) ||
	    (st = cb_comm_wait(c, &rp->rq_in)))
		return st;
	rp->to_right = ok == 1;
	rp->from_left = left_ok == 1;
	if (rp->to_right)
		cb_log(CB_LOG_DEBUG,
		       "ring: allgather chunks written straight into rank %d's "
		       "receive buffer",
		       right);
	return CB_OK;
}

cb_status_t cb_ring_put_begin(struct cb_comm *c, struct ring_put *rp,
                              const struct cb_mem *m, const void *recvbuf,
                              uint64_t seq)
{
	cb_status_t st;

	rp->put = rp->notify = rp->have_in = 0;
	rp->posted_out = rp->posted_in = 0;
	if (rp->from_left) {
		describe(c, rp, m, recvbuf);
		rp->notify = (int)rp->out.flag;
		if ((st = post(c, 1, rp->left, &rp->out, sizeof(rp->out),
		               (seq << 40) | TAG_WHERE, &rp->rq_out)))
			return st;
		rp->posted_out = 1;
	}
	if (rp->to_right) {
		if ((st = post(c, 0, rp->right, &rp->in, sizeof(rp->in),
		               (seq << 40) | TAG_WHERE, &rp->rq_in)))
			return st;
		rp->posted_in = 1;
	}
	return CB_OK;
}

cb_status_t cb_ring_put_ready(struct cb_comm *c, struct ring_put *rp)
{
	cb_status_t st;

	if (!rp->posted_in || rp->have_in)
		return CB_OK;
	if ((st = cb_comm_test(&rp->rq_in)))
		return st; /* CB_AGAIN: not yet */
	rp->have_in = 1;
	if (!rp->in.flag)
		return CB_OK;
	if ((st = import(c, rp)))
		return st;
	rp->put = 1;
	return CB_OK;
}

cb_status_t cb_ring_put_end(struct cb_comm *c, struct ring_put *rp)
{
	cb_status_t st;

	if (rp->posted_out && (st = cb_comm_wait(c, &rp->rq_out)))
		return st;
	rp->posted_out = 0;
	if (rp->posted_in && !rp->have_in && (st = cb_comm_wait(c, &rp->rq_in)))
		return st;
	rp->posted_in = 0;
	return CB_OK;
}

void cb_ring_put_free(struct cb_comm *c, struct ring_put *rp)
{
	cb_comm_mem_unimport(c, rp->right, rp->rrm);
	rp->rrm = NULL;
}
