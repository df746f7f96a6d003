/* SPDX-License-Identifier: MIT */
/*
 * coll/ps_async_link.c - ps-async's messages (coll/ps_async.c has the
 * protocol's prose): every message is a header and its data, sent back to
 * back; each rank keeps one header receive posted per peer that has
 * something to send and posts the data's receive once the header says what
 * it is and where it goes.  A server applies a push as its data lands and
 * replies with its counts and a snapshot of the shard.
 */
#include <string.h>

#include "coll/ps_async_int.h"
#include "coll/reduce.h"
#include "core/log.h"
#include "core/worker.h"

/* Post, trying again while the transport has no room, within the job's
 * deadline (a stopped peer ends it: its name in the line). */
cb_status_t psa_post(struct cb_plan *p, int send, int peer, void *buf,
                     size_t bytes, const struct cb_mem *m, uint64_t tag,
                     struct cb_req *r)
{
	cb_status_t st;

	if (send)
		st = cb_worker_isend(p->c, p->members[peer], buf, bytes, m, tag,
		                     r, 0, "ps-async: posting a send to");
	else
		st = cb_worker_irecv(p->c, p->members[peer], buf, bytes, m, tag,
		                     r, 0, "ps-async: posting a receive from");
	if (st)
		return st;
	if (send) {
		p->stats.msgs_sent++;
		p->stats.bytes_sent += bytes;
	} else {
		p->stats.msgs_recv++;
		p->stats.bytes_recv += bytes;
	}
	return CB_OK;
}

/* 1 once @r (NULL ep: never posted, or done) has completed. */
int psa_done(struct cb_req *r, cb_status_t *st)
{
	if (!r->ep)
		return 1;
	*st = cb_comm_test(r);
	if (*st == CB_AGAIN) {
		*st = CB_OK;
		return 0;
	}
	r->ep = NULL;
	return 1;
}

/* A header and its data to @peer, back to back (our own pair order). */
cb_status_t psa_send_msg(struct cb_plan *p, int peer, struct psa_hdr *h,
                         const void *data, size_t bytes, const struct cb_mem *m,
                         struct cb_req *r)
{
	struct link *l = &p->links[peer];
	uint64_t seq = l->sseq++;
	cb_status_t st;

	if ((st = psa_post(p, 1, peer, h, p->hdr_bytes, NULL, TAG_HDR | seq,
	                   &r[0])))
		return st;
	return psa_post(p, 1, peer, (void *)data, bytes, m, TAG_DATA | seq,
	                &r[1]);
}

void psa_apply(struct cb_plan *p, int w, const void *upd, size_t len)
{
	uint64_t others = p->total - p->counts[w];
	uint64_t stale = others - p->others_at_read[w];

	cb_reduce(p->dt, CB_OP_SUM, p->params, p->params, upd, len);
	p->hist[stale < CB_STALE_BUCKETS ? stale : CB_STALE_BUCKETS - 1]++;
	if (stale > p->stale_max)
		p->stale_max = stale;
	p->counts[w]++;
	p->total++;
	p->others_at_read[w] = p->total - p->counts[w];
}

/* Server: apply worker @w's push waiting in its stage, and reply (once our
 * previous reply to @w has left: its buffers are reused). */
static cb_status_t answer(struct cb_plan *p, int w, size_t count, int *moved)
{
	struct link *l = &p->links[w];
	size_t off, len, sb = slot_bytes(p);
	cb_status_t st = CB_OK;

	if (!psa_done(&l->rep[0], &st) || st || !psa_done(&l->rep[1], &st) ||
	    st)
		return st;
	shard_span(p, count, p->shard, &off, &len);
	psa_apply(p, w, p->stage + (size_t)w * sb, len);
	l->have_push = 0;
	*moved = 1;
	char *snap = p->snap + (size_t)w * sb;
	l->sh->kind = PSA_REPLY;
	l->sh->step = p->counts[w] - 1;
	memcpy(l->sh->counts, p->counts, (size_t)p->w * sizeof(uint64_t));
	memcpy(snap, p->params, len * p->es);
	return psa_send_msg(p, w, l->sh, snap, len * p->es, p->snap_mem,
	                    l->rep);
}

/* A header arrived from @q: post its data's receive where it goes, then
 * the next header's (the pair's order). */
static cb_status_t on_header(struct cb_plan *p, const struct cb_coll_args *a,
                             int q)
{
	struct link *l = &p->links[q];
	size_t off, len, sb = slot_bytes(p);
	uint64_t seq = l->rseq++;
	const struct cb_mem *m;
	cb_status_t st;
	void *dst;

	l->hposted = 0;
	l->rleft--;
	l->rkind = (int)l->rh->kind;
	if (l->rkind == PSA_PUSH && p->shard >= 0 && q < p->w) {
		shard_span(p, a->count, p->shard, &off, &len);
		dst = p->stage + (size_t)q * sb;
		m = p->stage_mem;
	} else if (l->rkind == PSA_REPLY && shard_of(p, q) >= 0) {
		int k = shard_of(p, q);
		shard_span(p, a->count, k, &off, &len);
		dst = (char *)a->recvbuf + off * p->es;
		m = p->recv_mem;
		memcpy(p->whdr + (size_t)k * p->w, l->rh->counts,
		       (size_t)p->w * sizeof(uint64_t));
	} else {
		return cb_fail(CB_ERR_PROTO,
		               "ps-async: rank %d sent a message of kind %u "
		               "this rank does not take",
		               p->members[q], l->rh->kind);
	}
	if ((st = psa_post(p, 0, q, dst, len * p->es, m, TAG_DATA | seq,
	                   &l->dreq)))
		return st;
	l->dposted = 1;
	if (l->rleft && (st = psa_post(p, 0, q, l->rh, p->hdr_bytes, NULL,
	                               TAG_HDR | l->rseq, &l->hreq)))
		return st;
	l->hposted = l->rleft > 0;
	return CB_OK;
}

/* Everything that arrived on every link: data (a push to apply, a reply
 * counted), headers, pushes waiting to be answered. */
cb_status_t psa_poll(struct cb_plan *p, const struct cb_coll_args *a,
                     int *moved)
{
	cb_status_t st = CB_OK;

	for (int q = 0; q < p->n; q++) {
		struct link *l = &p->links[q];
		if (q == p->me)
			continue;
		if (l->dposted && psa_done(&l->dreq, &st) && !st) {
			l->dposted = 0;
			*moved = 1;
			if (l->rkind == PSA_PUSH)
				l->have_push = 1;
			else
				p->replies_left--;
		}
		if (st)
			return st;
		if (l->hposted && !l->dposted && psa_done(&l->hreq, &st) &&
		    !st) {
			*moved = 1;
			if ((st = on_header(p, a, q)))
				return st;
		}
		if (st)
			return st;
		if (l->have_push && (st = answer(p, q, a->count, moved)))
			return st;
	}
	return CB_OK;
}

/* The rank a wait of @p waits on now: the first with something to come
 * (for the line a timeout prints). */
int psa_waited_on(const struct cb_plan *p)
{
	int peer = -1;

	for (int q = 0; q < p->n && peer < 0; q++)
		if (q != p->me && (p->links[q].hposted || p->links[q].dposted))
			peer = q;
	if (peer < 0)
		peer = p->me ? 0 : p->n - 1;
	return p->members[peer];
}

/* Nothing more to come, to answer or to leave on any link. */
int psa_quiet(struct cb_plan *p, cb_status_t *st)
{
	for (int q = 0; q < p->n; q++) {
		struct link *l = &p->links[q];
		if (l->hposted || l->dposted || l->have_push)
			return 0;
		for (int i = 0; i < 2; i++)
			if (!psa_done(&l->push[i], st) || *st ||
			    !psa_done(&l->rep[i], st) || *st)
				return *st != CB_OK;
	}
	return 1;
}
