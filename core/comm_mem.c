/* SPDX-License-Identifier: MIT */
/*
 * core/comm_mem.c - the communicator's memory: allocation from the transport
 * that makes memory shareable with local peers, and the registration cache;
 * and what the transports count (their own work, their devices').
 *
 * Every region is registered with every open transport once, outside timed
 * regions; an operation then names its region (struct cb_mem) and each
 * transport finds its own registration in it without a lookup.  The cache is
 * a small array: a run has a handful of regions (send and receive buffers,
 * a plan's scratch and staging), so finding one is a short scan done once
 * per call, not per message.
 *
 * Device memory is registered with the transports that move it themselves
 * (CB_TP_CAP_GPU_MEM) and marked staged for the others, which then get a
 * pinned host twin of the region to send from and receive into
 * (core/comm_dev.c copies through it).  The twin is a region of its own,
 * registered like any host memory (the engine pins it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/comm.h"
#include "core/log.h"
#include "core/strbuf.h"

const struct cb_tp_mem cb_mem_unknown = {
	.base = NULL,
	.bytes = 0,
	.kind = CB_MEM_HOST,
	.device = -1,
	.mr = NULL,
};

static cb_status_t mem_twin(struct cb_comm *c, struct cb_mem *m);
static void mem_release(struct cb_comm *c, int idx);

/* Register @m with every open transport; undo what was done on failure. */
static cb_status_t mem_register(struct cb_comm *c, struct cb_mem *m)
{
	for (int i = 0; i < c->ntp; i++) {
		const struct cb_tp_ops *ops = c->tp[i].ops;
		int gpu = m->kind == CB_MEM_GPU;
		m->tp[i] = (struct cb_tp_mem){ .base = m->base,
			                       .bytes = m->bytes,
			                       .kind = m->kind,
			                       .device = m->device };
		if (gpu && !(ops->caps & CB_TP_CAP_GPU_MEM)) {
			m->staged[i] = 1;
			continue;
		}
		if (!CB_TP_HAS(ops, mem_reg))
			continue;
		cb_status_t st =
		        ops->mem_reg(c->tp[i].ctx, &m->tp[i], &m->tp[i].mr);
		if (st == CB_ERR_UNSUPPORTED && gpu) {
			/* this region, not this transport: stage it */
			m->tp[i].mr = NULL;
			m->staged[i] = 1;
			continue;
		}
		if (st) {
			while (i-- > 0)
				if (m->tp[i].mr &&
				    CB_TP_HAS(c->tp[i].ops, mem_dereg))
					c->tp[i].ops->mem_dereg(c->tp[i].ctx,
					                        m->tp[i].mr);
			return st;
		}
	}
	return CB_OK;
}

static cb_status_t mem_add(struct cb_comm *c, void *base, size_t bytes,
                           enum cb_mem_kind kind, int device, int owner,
                           struct cb_mem **out)
{
	struct cb_mem *m;
	cb_status_t st;

	if (c->nmem == CB_MEM_MAX)
		return cb_fail(CB_ERR_NOMEM,
		               "more than %d registered buffers in one run",
		               CB_MEM_MAX);
	if (!(m = calloc(1, sizeof(*m))))
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	*m = (struct cb_mem){ .base = base,
		              .bytes = bytes,
		              .kind = kind,
		              .device = device,
		              .owner = owner };
	if ((st = mem_register(c, m))) {
		free(m);
		return st;
	}
	c->mem[c->nmem++] = m;
	if ((st = mem_twin(c, m))) {
		m->owner = -2; /* the caller frees the memory itself */
		mem_release(c, c->nmem - 1);
		return st;
	}
	*out = m;
	return CB_OK;
}

/* A pinned host twin for device memory some transport cannot move. */
static cb_status_t mem_twin(struct cb_comm *c, struct cb_mem *m)
{
	int need = 0;
	void *p;

	for (int i = 0; i < c->ntp; i++)
		need |= m->staged[i];
	if (!need)
		return CB_OK;
	if (posix_memalign(&p, 4096, m->bytes ? m->bytes : 1))
		return cb_fail(CB_ERR_NOMEM,
		               "cannot allocate %zu bytes of host memory to "
		               "stage device memory through",
		               m->bytes);
	cb_status_t st = mem_add(c, p, m->bytes, CB_MEM_HOST, -1, -1, &m->twin);
	if (st)
		free(p);
	return st;
}

static void mem_release(struct cb_comm *c, int idx)
{
	struct cb_mem *m = c->mem[idx];

	if (m->twin) {
		for (int i = 0; i < c->nmem; i++)
			if (c->mem[i] == m->twin) {
				mem_release(c, i);
				break;
			}
		/* the array moved: find @m again */
		for (idx = 0; c->mem[idx] != m; idx++)
			;
	}
	for (int i = 0; i < c->nmem; i++)
		if (c->mem[i]->twin == m)
			c->mem[i]->twin = NULL;
	for (int i = 0; i < c->ntp; i++)
		if (m->tp[i].mr && CB_TP_HAS(c->tp[i].ops, mem_dereg))
			c->tp[i].ops->mem_dereg(c->tp[i].ctx, m->tp[i].mr);
	if (m->owner >= 0)
		c->tp[m->owner].ops->mem_free(c->tp[m->owner].ctx, m->base,
		                              m->bytes);
	else if (m->owner == -1)
		free(m->base);
	c->mem[idx] = c->mem[--c->nmem];
	free(m);
}

cb_status_t cb_comm_mem_alloc_kind(struct cb_comm *c, size_t bytes,
                                   enum cb_mem_kind kind, void **buf)
{
	struct cb_mem *m;
	cb_status_t st;
	int owner = -1;
	void *p = NULL;

	for (int i = 0; i < c->ntp && owner < 0; i++) {
		if (!CB_TP_HAS(c->tp[i].ops, mem_alloc))
			continue;
		st = c->tp[i].ops->mem_alloc(c->tp[i].ctx, bytes, kind, -1, &p);
		if (st == CB_ERR_UNSUPPORTED)
			continue; /* not this kind: the next one */
		if (st)
			return st;
		owner = i;
	}
	if (owner < 0 && kind == CB_MEM_GPU)
		return cb_fail(CB_ERR_UNAVAILABLE,
		               "no transport of this run allocates device "
		               "memory (--mem gpu needs the gpu transport)");
	if (owner < 0 && posix_memalign(&p, 4096, bytes ? bytes : 1))
		return cb_fail(CB_ERR_NOMEM, "cannot allocate %zu bytes",
		               bytes);
	if ((st = mem_add(c, p, bytes, kind, -1, owner, &m))) {
		if (owner >= 0)
			c->tp[owner].ops->mem_free(c->tp[owner].ctx, p, bytes);
		else
			free(p);
		return st;
	}
	*buf = p;
	return CB_OK;
}

cb_status_t cb_comm_mem_alloc(struct cb_comm *c, size_t bytes, void **buf)
{
	return cb_comm_mem_alloc_kind(c, bytes, CB_MEM_HOST, buf);
}

cb_status_t cb_comm_scratch_alloc(struct cb_comm *c, size_t bytes, void **buf)
{
	return cb_comm_mem_alloc_kind(c, bytes, c->mem_kind, buf);
}

void cb_comm_mem_free(struct cb_comm *c, void *buf, size_t bytes)
{
	(void)bytes;
	if (buf)
		cb_comm_mem_dereg(c, buf);
}

cb_status_t cb_comm_mem_reg(struct cb_comm *c, void *buf, size_t bytes,
                            enum cb_mem_kind kind, int device,
                            const struct cb_mem **out)
{
	const struct cb_mem *have = cb_comm_mem_find(c, buf, bytes);
	struct cb_mem *m;
	cb_status_t st;

	if (have) {
		*out = have;
		return CB_OK;
	}
	if ((st = mem_add(c, buf, bytes, kind, device, -2, &m)))
		return st;
	*out = m;
	return CB_OK;
}

void cb_comm_mem_dereg(struct cb_comm *c, void *buf)
{
	for (int i = 0; i < c->nmem; i++)
		if (c->mem[i]->base == buf) {
			mem_release(c, i);
			return;
		}
}

const struct cb_mem *cb_comm_mem_find(const struct cb_comm *c, const void *p,
                                      size_t bytes)
{
	const char *q = p;

	if (!p)
		return NULL;
	for (int i = 0; i < c->nmem; i++) {
		const char *b = c->mem[i]->base;
		if (q >= b && q + bytes <= b + c->mem[i]->bytes)
			return c->mem[i];
	}
	return NULL;
}

void cb_comm_tp_stats(const struct cb_comm *c, struct cb_tp_stats *out)
{
	memset(out, 0, sizeof(*out));
	for (int i = 0; i < c->ntp; i++) {
		struct cb_tp_stats s = { 0 };
		if (!CB_TP_HAS(c->tp[i].ops, stats))
			continue;
		c->tp[i].ops->stats(c->tp[i].ctx, &s);
		out->eager_msgs += s.eager_msgs;
		out->eager_bytes += s.eager_bytes;
		out->zcopy_msgs += s.zcopy_msgs;
		out->zcopy_bytes += s.zcopy_bytes;
		out->bounce_bytes += s.bounce_bytes;
		out->put_msgs += s.put_msgs;
		out->put_bytes += s.put_bytes;
		out->connects += s.connects;
		out->registrations += s.registrations;
	}
}

cb_status_t cb_comm_counters(const struct cb_comm *c, struct cb_tp_counter *out,
                             int max, int *n)
{
	*n = 0;
	for (int i = 0; i < c->ntp; i++) {
		int k = 0;
		cb_status_t st;
		if (!CB_TP_HAS(c->tp[i].ops, counters))
			continue;
		st = c->tp[i].ops->counters(c->tp[i].ctx, out + *n,
		                            max - *n > 0 ? max - *n : 0, &k);
		if (st)
			return st;
		*n += k < max - *n ? k : max - *n;
	}
	return CB_OK;
}

int cb_comm_has_counters(const struct cb_comm *c)
{
	for (int i = 0; i < c->ntp; i++)
		if (CB_TP_HAS(c->tp[i].ops, counters))
			return 1;
	return 0;
}

void cb_comm_describe(const struct cb_comm *c, char *buf, size_t bytes)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; i < c->ntp && n + 1 < bytes; i++) {
		char line[512];
		if (!CB_TP_HAS(c->tp[i].ops, describe))
			continue;
		c->tp[i].ops->describe(c->tp[i].ctx, line, sizeof(line));
		cb_buf_appendf(buf, bytes, &n, "%s%s: %s", n ? "\n" : "",
		               c->tp[i].ops->name, line);
	}
	if (c->auto_line[0] && n + 1 < bytes)
		snprintf(buf + n, bytes - n, "%sauto: %s", n ? "\n" : "",
		         c->auto_line);
}
