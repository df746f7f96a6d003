/* SPDX-License-Identifier: MIT */
/*
 * tests/verbs-emu/cq.c - completion queues and completion channels.
 *
 * A CQ is a ring the progress thread (and the posting thread, for flushed
 * and local errors) pushes into and poll_cq drains.  Polling a send
 * completion frees the send-queue slots up to that WQE, unsignaled ones
 * before it included, as mlx5 does: an application that never signals
 * fills its send queue and gets ENOMEM, as on hardware.
 *
 * A completion channel is a pipe: arming a CQ (req_notify_cq) makes the
 * next completion added write the CQ's address to it once; entries already
 * in the CQ do not trigger, as on hardware.  A CQ that overflows reports
 * IBV_EVENT_CQ_ERR on the async channel and drops the completion (the
 * fault cq_overrun:cqe=N makes every CQ hold N entries, whatever it says).
 */
#include "emu.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct emu_channel {
	struct ibv_comp_channel ch;
	int wr;
};

EMU_VISIBLE struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *context)
{
	struct emu_channel *c = calloc(1, sizeof(*c));
	int p[2];
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	if (pipe2(p, O_CLOEXEC)) {
		free(c);
		return NULL;
	}
	c->ch.context = context;
	c->ch.fd = p[0];
	c->wr = p[1];
	return &c->ch;
}

EMU_VISIBLE int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct emu_channel *c = (struct emu_channel *)channel;
	if (channel->refcnt)
		return EBUSY;
	close(c->wr);
	close(channel->fd);
	free(c);
	return 0;
}

EMU_VISIBLE struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe,
                                         void *cq_context,
                                         struct ibv_comp_channel *channel,
                                         int comp_vector)
{
	struct emu_cq *cq;
	int hold;
	if (cqe < 1 || cqe > emu_host.max_cqe || comp_vector < 0 ||
	    comp_vector >= context->num_comp_vectors) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	hold = emu_fault_cq_hold(cqe);
	if (!cq || !(cq->ring = calloc((size_t)hold, sizeof(*cq->ring)))) {
		free(cq);
		errno = ENOMEM;
		return NULL;
	}
	cq->cap = (uint32_t)hold;
	pthread_mutex_init(&cq->lock, NULL);
	cq->cq.context = context;
	cq->cq.channel = channel;
	cq->cq.cq_context = cq_context;
	cq->cq.cqe = cqe;
	pthread_mutex_init(&cq->cq.mutex, NULL);
	pthread_cond_init(&cq->cq.cond, NULL);
	if (channel)
		channel->refcnt++;
	return &cq->cq;
}

EMU_VISIBLE int ibv_destroy_cq(struct ibv_cq *ibcq)
{
	struct emu_cq *cq = (struct emu_cq *)ibcq;
	if (atomic_load(&cq->users))
		return EBUSY;
	pthread_mutex_lock(&ibcq->mutex);
	if (ibcq->comp_events_completed != cq->events_reported)
		emu_log("ibv_destroy_cq: %u completion events not acknowledged "
		        "(real libibverbs waits for ibv_ack_cq_events here)",
		        cq->events_reported - ibcq->comp_events_completed);
	pthread_mutex_unlock(&ibcq->mutex);
	if (ibcq->channel)
		ibcq->channel->refcnt--;
	pthread_mutex_destroy(&cq->lock);
	free(cq->ring);
	free(cq);
	return 0;
}

void emu_cq_push(struct emu_cq *cq, const struct emu_cqe *e)
{
	struct emu_channel *ch = (struct emu_channel *)cq->cq.channel;
	bool notify = false;
	pthread_mutex_lock(&cq->lock);
	if (cq->count == cq->cap) {
		if (!cq->overrun_reported) {
			cq->overrun_reported = true;
			emu_async_event(emu_ctx(cq->cq.context),
			                IBV_EVENT_CQ_ERR, &cq->cq);
		}
		pthread_mutex_unlock(&cq->lock);
		return;
	}
	cq->ring[(cq->head + cq->count) % cq->cap] = *e;
	cq->count++;
	if (cq->armed && (!cq->armed_solicited || e->solicited ||
	                  e->wc.status != IBV_WC_SUCCESS)) {
		cq->armed = false;
		notify = true;
	}
	pthread_mutex_unlock(&cq->lock);
	if (notify && ch) {
		struct ibv_cq *p = &cq->cq;
		pthread_mutex_lock(&cq->cq.mutex);
		cq->events_reported++;
		pthread_mutex_unlock(&cq->cq.mutex);
		if (write(ch->wr, &p, sizeof(p)) != sizeof(p))
			emu_log("completion event lost (channel pipe full)");
	}
}

/* Remove a destroyed QP's completions (mlx5 cleans its CQs the same way). */
void emu_cq_purge_qp(struct emu_cq *cq, struct emu_qp *qp)
{
	uint32_t keep = 0;
	pthread_mutex_lock(&cq->lock);
	for (uint32_t i = 0; i < cq->count; i++) {
		struct emu_cqe *e = &cq->ring[(cq->head + i) % cq->cap];
		if (e->qp != qp)
			cq->ring[(cq->head + keep++) % cq->cap] = *e;
	}
	cq->count = keep;
	pthread_mutex_unlock(&cq->lock);
}

static void free_sq_upto(struct emu_qp *qp, uint32_t idx)
{
	uint32_t cur = atomic_load(&qp->sq_tail);
	while ((int32_t)(idx - cur) > 0 &&
	       !atomic_compare_exchange_weak(&qp->sq_tail, &cur, idx))
		;
}

int emu_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
	struct emu_cq *cq = (struct emu_cq *)ibcq;
	int got = 0;
	if (n < 0)
		return -1;
	pthread_mutex_lock(&cq->lock);
	while (got < n && cq->count) {
		struct emu_cqe *e = &cq->ring[cq->head];
		wc[got++] = e->wc;
		if (e->is_send)
			free_sq_upto(e->qp, e->sq_idx + 1);
		else
			atomic_fetch_add(&e->qp->rq_tail, 1);
		cq->head = (cq->head + 1) % cq->cap;
		cq->count--;
	}
	pthread_mutex_unlock(&cq->lock);
	if (got == 0) {
		/* Busy pollers share few cores with their peers here: drive
		 * the wire, then let the others run. */
		emu_progress_try();
		sched_yield();
	}
	return got;
}

int emu_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct emu_cq *cq = (struct emu_cq *)ibcq;
	pthread_mutex_lock(&cq->lock);
	cq->armed = true;
	cq->armed_solicited = solicited_only != 0;
	pthread_mutex_unlock(&cq->lock);
	return 0;
}

EMU_VISIBLE int ibv_get_cq_event(struct ibv_comp_channel *channel,
                                 struct ibv_cq **cq, void **cq_context)
{
	struct ibv_cq *p;
	if (read(channel->fd, &p, sizeof(p)) != sizeof(p))
		return -1;
	*cq = p;
	*cq_context = p->cq_context;
	return 0;
}

EMU_VISIBLE void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_signal(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}

EMU_VISIBLE int ibv_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct emu_cq *cq = (struct emu_cq *)ibcq;
	struct emu_cqe *ring;
	if (cqe < 1 || cqe > emu_host.max_cqe)
		return EINVAL;
	cqe = emu_fault_cq_hold(cqe);
	pthread_mutex_lock(&cq->lock);
	if ((uint32_t)cqe < cq->count) {
		pthread_mutex_unlock(&cq->lock);
		return EINVAL;
	}
	ring = calloc((size_t)cqe, sizeof(*ring));
	if (!ring) {
		pthread_mutex_unlock(&cq->lock);
		return ENOMEM;
	}
	for (uint32_t i = 0; i < cq->count; i++)
		ring[i] = cq->ring[(cq->head + i) % cq->cap];
	free(cq->ring);
	cq->ring = ring;
	cq->head = 0;
	cq->cap = (uint32_t)cqe;
	cq->cq.cqe = cqe;
	pthread_mutex_unlock(&cq->lock);
	return 0;
}
