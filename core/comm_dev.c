/* SPDX-License-Identifier: MIT */
/*
 * core/comm_dev.c - device memory in the communicator: local copies and
 * reductions on the engine, staging through pinned host memory for
 * transports that cannot move device memory, and what the run header says
 * about it.
 *
 * The engine is the open transport with CB_TP_CAP_GPU_MEM and mem_copy (the
 * gpu transport; opened for its engine alone when --mem gpu runs over tcp
 * or shm).  Every copy or reduction on device memory is queued there and
 * completes through cb_comm_test like a message, so an algorithm's wait
 * loop never blocks on the device.
 *
 * Staging.  A device region that a wire transport cannot move has a pinned
 * host twin (core/comm_mem.c).  A staged send queues a device-to-host copy
 * into the twin and hands the twin's bytes to the transport once the copy
 * is done; a staged receive lands in the twin and is then copied to the
 * device.  Sends to one peer must reach its transport in the order they
 * were posted (the peer receives in order and checks tags), so staged sends
 * wait on the endpoint's queue until their copy is done, and any send
 * posted behind them waits there too.  The queue moves whenever one of its
 * requests is tested and at every progress call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/comm.h"
#include "core/log.h"
#include "core/strbuf.h"

static inline const struct cb_tp_ops *eng(const struct cb_comm *c)
{
	return c->tp[c->engine].ops;
}

static inline struct cb_tp_ctx *eng_ctx(const struct cb_comm *c)
{
	return c->tp[c->engine].ctx;
}

static cb_status_t no_engine(void)
{
	return cb_fail(CB_ERR_INVALID,
	               "device memory in a run without a device engine "
	               "(--mem gpu opens one)");
}

/* A local operation done on the host, now: @req (if any) is complete. */
static cb_status_t host_done(struct cb_req *req)
{
	if (req)
		req->kind = CB_REQ_DONE;
	return CB_OK;
}

/* @req (if any) becomes the engine's local request; NULL: the engine
 * completes the operation before it returns. */
static struct cb_tp_req *engine_req(struct cb_comm *c, struct cb_req *req)
{
	if (!req)
		return NULL;
	req->kind = CB_REQ_LOCAL;
	req->comm = c;
	return &req->loc;
}

cb_status_t cb_comm_copy(struct cb_comm *c, void *dst, const struct cb_mem *dm,
                         const void *src, const struct cb_mem *sm, size_t bytes,
                         struct cb_req *req)
{
	if (!dm)
		dm = cb_comm_mem_find(c, dst, bytes);
	if (!sm)
		sm = cb_comm_mem_find(c, src, bytes);
	if (!cb_mem_is_gpu(dm) && !cb_mem_is_gpu(sm)) {
		if (bytes && dst != src)
			memmove(dst, src, bytes);
		return host_done(req);
	}
	if (c->engine < 0)
		return no_engine();
	return eng(c)->mem_copy(eng_ctx(c), dst, src, bytes,
	                        engine_req(c, req));
}

cb_status_t cb_comm_reduce_local(struct cb_comm *c, void *dst, const void *a,
                                 const void *b, size_t count,
                                 const struct cb_tp_reduce *red,
                                 const struct cb_mem *m, struct cb_req *req)
{
	if (!cb_mem_is_gpu(m)) {
		c->reduce(red->dtype, red->op, dst, a, b, count);
		return host_done(req);
	}
	if (c->engine < 0)
		return no_engine();
	return eng(c)->mem_reduce(eng_ctx(c), dst, a, b, count, red,
	                          engine_req(c, req));
}

/* Hand the endpoint's queued sends whose copies are done to its transport,
 * in order. */
static cb_status_t stq_pump(struct cb_comm *c, struct cb_ep *ep)
{
	struct cb_req *h;
	cb_status_t st;

	while ((h = ep->stq_head)) {
		if (h->step == 0) {
			st = eng(c)->local_test(eng_ctx(c), &h->loc);
			if (st == CB_AGAIN)
				return CB_OK;
			if (st)
				return st;
			h->step = 1;
		}
		st = ep->ops->isend(ep->ep, h->host, h->bytes,
		                    cb_comm_tp_mem(ep, h->twin), h->tag,
		                    &h->tp);
		if (st == CB_AGAIN)
			return CB_OK;
		if (st)
			return st;
		h->step = 2;
		ep->stq_head = h->next;
		if (!ep->stq_head)
			ep->stq_tail = NULL;
		c->nstaged--;
	}
	return CB_OK;
}

cb_status_t cb_comm_pump_staged(struct cb_comm *c)
{
	cb_status_t st;

	for (int p = 0; p < c->world && c->nstaged; p++)
		if (c->eps[p].stq_head && (st = stq_pump(c, &c->eps[p])))
			return st;
	return CB_OK;
}

cb_status_t cb_comm_isend_staged(struct cb_comm *c, int peer, const void *buf,
                                 size_t bytes, const struct cb_mem *m,
                                 uint64_t tag, struct cb_req *req)
{
	struct cb_ep *ep = &c->eps[peer];
	cb_status_t st;

	req->ep = ep;
	req->kind = CB_REQ_SSEND;
	req->comm = c;
	req->dev = (void *)buf;
	req->bytes = bytes;
	req->tag = tag;
	req->next = NULL;
	if (m && m->staged[ep->tpi]) {
		if (!m->twin || c->engine < 0)
			return no_engine();
		req->twin = m->twin;
		req->host = (char *)m->twin->base +
		            ((const char *)buf - (const char *)m->base);
		st = eng(c)->mem_copy(eng_ctx(c), req->host, buf, bytes,
		                      &req->loc);
		if (st)
			return st; /* CB_AGAIN: nothing was queued */
		req->step = 0;
	} else {
		/* host memory, behind staged sends: no copy, just the order */
		req->twin = m;
		req->host = (void *)buf;
		req->step = 1;
	}
	if (ep->stq_tail)
		ep->stq_tail->next = req;
	else
		ep->stq_head = req;
	ep->stq_tail = req;
	c->nstaged++;
	st = stq_pump(c, ep);
	return st < 0 ? st : CB_OK;
}

cb_status_t cb_comm_irecv_staged(struct cb_comm *c, int peer, void *buf,
                                 size_t cap, const struct cb_mem *m,
                                 uint64_t tag, struct cb_req *req)
{
	const struct cb_ep *ep = &c->eps[peer];

	if (!m->twin || c->engine < 0)
		return no_engine();
	req->ep = ep;
	req->kind = CB_REQ_SRECV;
	req->step = 0;
	req->comm = c;
	req->dev = buf;
	req->twin = m->twin;
	req->host = (char *)m->twin->base +
	            ((const char *)buf - (const char *)m->base);
	return ep->ops->irecv(ep->ep, req->host, cap,
	                      cb_comm_tp_mem(ep, m->twin), tag, &req->tp);
}

cb_status_t cb_comm_test_dev(struct cb_req *req)
{
	struct cb_comm *c = req->comm;
	const struct cb_ep *ep = req->ep;
	cb_status_t st;

	switch (req->kind) {
	case CB_REQ_DONE:
		return CB_OK;
	case CB_REQ_LOCAL:
		return eng(c)->local_test(eng_ctx(c), &req->loc);
	case CB_REQ_SSEND:
		if (req->step < 2) {
			if ((st = stq_pump(c, &c->eps[ep->peer])))
				return st;
			if (req->step < 2)
				return CB_AGAIN;
		}
		return ep->ops->test(ep->ep, &req->tp);
	case CB_REQ_SRECV:
		if (req->step == 0) {
			if ((st = ep->ops->test(ep->ep, &req->tp)))
				return st;
			req->step = 1;
		}
		if (req->step == 1) {
			st = eng(c)->mem_copy(eng_ctx(c), req->dev, req->host,
			                      req->tp.bytes, &req->loc);
			if (st)
				return st;
			req->step = 2;
		}
		if (req->step == 2) {
			if ((st = eng(c)->local_test(eng_ctx(c), &req->loc)))
				return st;
			req->step = 3;
		}
		return CB_OK;
	default:
		return cb_fail(CB_ERR_INVALID, "a request of unknown kind %d",
		               req->kind);
	}
}

/* ---- what the header says ---- */

#define DEV_LINE 200

cb_status_t cb_comm_dev_setup(struct cb_comm *c)
{
	char mine[DEV_LINE] = "", *all;
	cb_status_t st;

	if (c->engine < 0)
		return CB_OK;
	if (CB_TP_HAS(eng(c), describe))
		eng(c)->describe(eng_ctx(c), mine, sizeof(mine));
	if (!mine[0])
		snprintf(mine, sizeof(mine), "%s", eng(c)->name);
	if (!(all = calloc((size_t)c->world, DEV_LINE)))
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	st = cb_boot_allgather(c->boot, "every rank's device", mine, DEV_LINE,
	                       all);
	if (st || c->rank != 0) {
		free(all);
		return st;
	}
	size_t cap = (size_t)c->world * (DEV_LINE + 16) + 1024, n = 0;
	if (!(c->mem_lines = malloc(cap))) {
		free(all);
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	}
	c->mem_lines[0] = '\0';
	/* One line per device and host, with the ranks on it: ranks whose
	 * engines say the same on one host share that GPU. */
	for (int r = 0; r < c->world; r++) {
		const char *l = all + (size_t)r * DEV_LINE;
		int first = 1, k = 0;
		char ranks[256] = "";
		size_t rl = 0;
		for (int q = 0; q < r && first; q++)
			first = !(c->host_of_rank[q] == c->host_of_rank[r] &&
			          !strncmp(all + (size_t)q * DEV_LINE, l,
			                   DEV_LINE));
		if (!first)
			continue;
		for (int q = r; q < c->world; q++)
			if (c->host_of_rank[q] == c->host_of_rank[r] &&
			    !strncmp(all + (size_t)q * DEV_LINE, l, DEV_LINE)) {
				if (rl < sizeof(ranks) - 16)
					cb_buf_appendf(ranks, sizeof(ranks),
					               &rl, "%s%d",
					               k ? "," : "", q);
				k++;
			}
		cb_buf_appendf(c->mem_lines, cap, &n,
		               "rank%s %s on %s: %.*s%s\n", k > 1 ? "s" : "",
		               ranks, cb_comm_host_name(c, r), DEV_LINE - 1, l,
		               k > 1 ? " (shared by these ranks)" : "");
	}
	for (int i = 0; i < c->nwire; i++) {
		const struct cb_tp_ops *o = c->tp[i].ops;
		const char *where = c->nwire < 2 ? ""
		                    : (o->caps & CB_TP_CAP_SAME_HOST)
		                            ? " (same host)"
		                            : " (across hosts)";
		if (o->caps & CB_TP_CAP_GPU_MEM)
			cb_buf_appendf(c->mem_lines, cap, &n,
			               "%s pairs%s: %s\n", o->name, where,
			               o->description);
		else
			cb_buf_appendf(
			        c->mem_lines, cap, &n,
			        "%s pairs%s: staged through pinned host memory "
			        "(device copies on the %s engine; %s moves "
			        "host memory only)\n",
			        o->name, where, eng(c)->name, o->name);
	}
	if (n && c->mem_lines[n - 1] == '\n')
		c->mem_lines[n - 1] = '\0';
	free(all);
	return CB_OK;
}

const char *cb_comm_mem_summary(const struct cb_comm *c)
{
	return c->mem_lines;
}
