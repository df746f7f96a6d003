/* SPDX-License-Identifier: MIT */
/*
 * transports/verbs/verbs.c - RDMA verbs over InfiniBand, RoCE and iWARP: the
 * context, memory registration and export, and the ops table.
 *
 * A shared module (libcollbench-verbs.so), built when libibverbs and
 * librdmacm are found, so collbench itself runs where they are not.  RC
 * queue pairs, one per peer and rail, connected lazily when a plan first
 * needs the peer (verbs_conn.c); eager sends with credits, inline where the
 * device allows, and zero-copy rendezvous by RDMA write with immediate for
 * large messages, striped over rails (verbs_data.c); devices, ports, GIDs
 * and counters in verbs_dev.c.
 *
 * Options (collbench flags; but --nic, also COLLBENCH_<NAME> in the
 * environment):
 *   --nic DEV[:PORT][,...]  rails to use (default: topology's NIC, else the
 *                           first device with an ACTIVE port)
 *   --gid-index N           RoCE: the GID (default: RoCE v2 on the route)
 *   --ib-sl N               InfiniBand service level, 0-15 (default 0)
 *   --verbs-cm oob|rdma_cm  how queue pairs connect (default oob; iWARP
 *                           always uses rdma_cm)
 *   --verbs-eager-bytes N   largest message sent eagerly (default and
 *                           most: one 8 KiB slot less its header)
 *
 * Memory: mem_reg registers a buffer on every rail's protection domain
 * (local write, remote write and read); mem_export hands a peer its address
 * and one rkey per rail; put writes into it.  Device memory (--mem gpu) is
 * registered through a dma-buf of the GPU's (GPUDirect RDMA) where the
 * driver, kernel and NIC allow, else the core stages it through pinned
 * host memory; the run header says which.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "transports/verbs/verbs.h"

static cb_status_t vb_query(char *why, size_t why_bytes)
{
	int n = 0;
	struct ibv_device **l = ibv_get_device_list(&n);

	if (l)
		ibv_free_device_list(l);
	if (n > 0)
		return CB_OK;
	snprintf(why, why_bytes,
	         "no RDMA device found (ibv_devices lists none%s%s)",
	         errno ? ": " : "", errno ? strerror(errno) : "");
	return CB_ERR_UNAVAILABLE;
}

static cb_status_t parse_int(const struct cb_tp_host *h, const char *key,
                             long lo, long hi, long dflt, long *out)
{
	const char *v = h->option(h, key);
	char *end;

	*out = dflt;
	if (!v)
		return CB_OK;
	long x = strtol(v, &end, 10);
	if (*end || end == v || x < lo || x > hi)
		return h->fail(h, CB_ERR_USAGE,
		               "verbs: --%s '%s' is not %ld..%ld", key, v, lo,
		               hi);
	*out = x;
	return CB_OK;
}

static void vb_close(struct cb_tp_ctx *ctx);

static cb_status_t vb_open(const struct cb_tp_host *h, struct cb_tp_ctx **out)
{
	struct cb_tp_ctx *ctx = calloc(1, sizeof(*ctx));
	const char *cm = h->option(h, "verbs-cm");
	cb_status_t st;
	long v;

	if (!ctx)
		return h->fail(h, CB_ERR_NOMEM, "verbs: out of memory");
	ctx->host = h;
	srand48((long)(h->now_ns(h) ^ (uint64_t)getpid() ^
	               ((uint64_t)h->rank << 20)));
	if (cm && strcmp(cm, "oob") && strcmp(cm, "rdma_cm")) {
		st = h->fail(h, CB_ERR_USAGE,
		             "verbs: --verbs-cm '%s' is not oob or rdma_cm",
		             cm);
		goto fail;
	}
	ctx->use_cm = cm && !strcmp(cm, "rdma_cm");
	if ((st = parse_int(h, "ib-sl", 0, 15, 0, &v)))
		goto fail;
	ctx->sl = (int)v;
	if ((st = parse_int(h, "verbs-eager-bytes", 0, (long)VB_EAGER_MAX,
	                    (long)VB_EAGER_MAX, &v)))
		goto fail;
	ctx->eager_max = (size_t)v;
	ctx->eps = calloc((size_t)h->world, sizeof(*ctx->eps));
	ctx->active = calloc((size_t)h->world, sizeof(int));
	if (!ctx->eps || !ctx->active) {
		st = h->fail(h, CB_ERR_NOMEM, "verbs: out of memory");
		goto fail;
	}
	if ((st = vb_open_rails(ctx)))
		goto fail;
	/* iWARP connects through rdma_cm alone; reopen that way */
	if (!ctx->use_cm && ctx->rail[0].link == VB_LINK_IWARP) {
		if (cm) {
			st = h->fail(
			        h, CB_ERR_USAGE,
			        "verbs: %s is iWARP, which connects "
			        "through rdma_cm only (drop --verbs-cm oob)",
			        ctx->rail[0].name);
			goto fail;
		}
		vb_close_rails(ctx);
		memset(ctx->rail, 0, sizeof(ctx->rail));
		ctx->use_cm = 1;
		if ((st = vb_open_rails(ctx)))
			goto fail;
	}
	for (int i = 0; i < ctx->nrails; i++) {
		struct vb_rail *r = &ctx->rail[i];
		int cqi;
		r->pd = ibv_alloc_pd(r->ctx);
		if (!r->pd) {
			st = h->fail(h, CB_ERR_SYS,
			             "verbs: cannot make a protection domain "
			             "on %s: %s",
			             r->name, strerror(errno));
			goto fail;
		}
		if ((st = vb_cq_size(ctx, r)) ||
		    (st = vb_cq_attach(ctx, i, &cqi)))
			goto fail;
		vb_cq_detach(ctx, i, cqi); /* made now: a refusal says so */
		r->max_inline = 128;
	}
	if (ctx->use_cm && (st = vb_cm_listen(ctx)))
		goto fail;
	for (int i = 0; i < ctx->nrails; i++)
		h->log(h, CB_TP_LOG_INFO, "rail %d: %s:%d, %s, MTU %u%s", i,
		       ctx->rail[i].name, ctx->rail[i].port,
		       vb_link_name(ctx->rail[i].link),
		       128u << ctx->rail[i].mtu,
		       ctx->use_cm ? ", rdma_cm" : "");
	*out = ctx;
	return CB_OK;
fail:
	vb_close(ctx);
	return st;
}

static void vb_close(struct cb_tp_ctx *ctx)
{
	for (int p = 0; ctx->eps && p < ctx->host->world; p++)
		if (ctx->eps[p])
			vb_ep_free(ctx->eps[p]);
	vb_close_rails(ctx);
	if (ctx->cm_ch)
		rdma_destroy_event_channel(ctx->cm_ch);
	free(ctx->eps);
	free(ctx->active);
	free(ctx);
}

static cb_status_t vb_address(struct cb_tp_ctx *ctx, void *blob, size_t *bytes)
{
	struct vb_addr a = { .magic = VB_MAGIC,
		             .rank = ctx->host->rank,
		             .nrails = (uint32_t)ctx->nrails,
		             .cm = (uint32_t)ctx->use_cm };

	if (*bytes < sizeof(a))
		return CB_ERR_INVALID;
	for (int i = 0; i < ctx->nrails; i++) {
		a.rail[i].ipv4 = ctx->rail[i].ipv4;
		a.rail[i].cm_port = ctx->rail[i].cm_port;
	}
	memcpy(blob, &a, sizeof(a));
	*bytes = sizeof(a);
	return CB_OK;
}

/* Connected once every rail is in RTS and its HELLO came; progress moves
 * it on meanwhile. */
static cb_status_t vb_ep_test(struct cb_tp_ep *ep)
{
	cb_status_t st;

	if (ep->err)
		return ep->err;
	if (ep->connected)
		return CB_OK;
	if ((st = vb_progress(ep->ctx)) < 0)
		return st;
	for (int i = 0; i < ep->nrails; i++)
		if (ep->q[i].state != QP_RTS || !ep->q[i].hello_in)
			return CB_AGAIN;
	ep->connected = 1;
	ep->ctx->stats.connects++;
	return CB_OK;
}

/* One peer given up (acceptance goes on without it): its queue pairs go,
 * it leaves progress, and its failure no longer fails the others.  The
 * struct stays until close: completions already queued name it. */
static void vb_ep_close(struct cb_tp_ep *ep)
{
	struct cb_tp_ctx *ctx = ep->ctx;

	if (ep->closed)
		return;
	ep->closed = 1;
	for (int i = 0; i < ctx->nactive; i++)
		if (ctx->active[i] == ep->peer) {
			ctx->active[i] = ctx->active[--ctx->nactive];
			break;
		}
	vb_ep_drop_qps(ep);
}

/*
 * Device memory: GPUDirect RDMA, the NIC registering the GPU's memory
 * through a dma-buf the device engine exports (ibv_reg_dmabuf_mr).  Where
 * the driver, the kernel or the NIC cannot, CB_ERR_UNSUPPORTED without a
 * line: the core then stages that memory through pinned host memory.
 */
static cb_status_t vb_reg_device(struct cb_tp_ctx *ctx,
                                 const struct cb_tp_mem *mem,
                                 struct cb_tp_mr *mr)
{
	const struct cb_tp_host *h = ctx->host;
	uint64_t off = 0;
	int fd = -1;

	if (h->size <= offsetof(struct cb_tp_host, gpu_dmabuf) ||
	    !h->gpu_dmabuf ||
	    h->gpu_dmabuf(h, mem->base, mem->bytes, &fd, &off) != CB_OK)
		return CB_ERR_UNSUPPORTED;
	for (int i = 0; i < ctx->nrails; i++) {
		mr->mr[i] = ibv_reg_dmabuf_mr(ctx->rail[i].pd, off, mem->bytes,
		                              (uintptr_t)mem->base, fd,
		                              IBV_ACCESS_LOCAL_WRITE |
		                                      IBV_ACCESS_REMOTE_WRITE |
		                                      IBV_ACCESS_REMOTE_READ);
		if (!mr->mr[i]) {
			h->log(h, CB_TP_LOG_INFO,
			       "GPUDirect RDMA refused on %s (%s): device "
			       "memory goes through pinned host memory",
			       ctx->rail[i].name, strerror(errno));
			while (i-- > 0)
				ibv_dereg_mr(mr->mr[i]);
			close(fd);
			return CB_ERR_UNSUPPORTED;
		}
	}
	close(fd);
	ctx->gpudirect = 1;
	return CB_OK;
}

static cb_status_t vb_mem_reg(struct cb_tp_ctx *ctx,
                              const struct cb_tp_mem *mem,
                              struct cb_tp_mr **out)
{
	const struct cb_tp_host *h = ctx->host;
	struct cb_tp_mr *mr;
	cb_status_t st;

	if (!(mr = calloc(1, sizeof(*mr))))
		return h->fail(h, CB_ERR_NOMEM, "verbs: out of memory");
	mr->base = mem->base;
	mr->bytes = mem->bytes;
	if (mem->kind == CB_MEM_GPU) {
		if ((st = vb_reg_device(ctx, mem, mr))) {
			free(mr);
			return st;
		}
		ctx->stats.registrations++;
		*out = mr;
		return CB_OK;
	}
	for (int i = 0; i < ctx->nrails; i++) {
		mr->mr[i] = ibv_reg_mr(
		        ctx->rail[i].pd, mem->base, mem->bytes ? mem->bytes : 1,
		        IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		                IBV_ACCESS_REMOTE_READ);
		if (!mr->mr[i]) {
			int e = errno;
			while (i-- > 0)
				ibv_dereg_mr(mr->mr[i]);
			free(mr);
			return h->fail(
			        h, CB_ERR_SYS,
			        "verbs: cannot register %zu bytes on %s: "
			        "%s%s",
			        mem->bytes, ctx->rail[0].name, strerror(e),
			        e == ENOMEM ? " (ulimit -l: locked memory "
			                      "may be too small)"
			                    : "");
		}
	}
	ctx->stats.registrations++;
	*out = mr;
	return CB_OK;
}

static void vb_mem_dereg(struct cb_tp_ctx *ctx, struct cb_tp_mr *mr)
{
	for (int i = 0; mr && i < ctx->nrails; i++)
		if (mr->mr[i])
			ibv_dereg_mr(mr->mr[i]);
	free(mr);
}

static cb_status_t vb_mem_export(struct cb_tp_ctx *ctx,
                                 const struct cb_tp_mem *mem, void *blob,
                                 size_t *bytes)
{
	struct vb_export x = { .magic = VB_MAGIC,
		               .nrails = (uint32_t)ctx->nrails,
		               .addr = (uintptr_t)mem->base,
		               .bytes = mem->bytes };

	if (!mem->mr)
		return ctx->host->fail(ctx->host, CB_ERR_UNSUPPORTED,
		                       "verbs: only registered memory can be "
		                       "exported");
	if (*bytes < sizeof(x))
		return CB_ERR_INVALID;
	for (int i = 0; i < ctx->nrails; i++)
		x.rkey[i] = mem->mr->mr[i]->rkey;
	memcpy(blob, &x, sizeof(x));
	*bytes = sizeof(x);
	return CB_OK;
}

static cb_status_t vb_mem_import(struct cb_tp_ep *ep, const void *blob,
                                 size_t bytes, struct cb_tp_rmem **out,
                                 void **local)
{
	struct vb_export x;
	struct cb_tp_rmem *rm;
	char why[128];

	if (vb_wire_export(blob, bytes, &x, why, sizeof(why)))
		return ep->ctx->host->fail(ep->ctx->host, CB_ERR_PROTO,
		                           "verbs: rank %d's exported memory "
		                           "handle does not parse: %s",
		                           ep->peer, why);
	if (!(rm = calloc(1, sizeof(*rm))))
		return ep->ctx->host->fail(ep->ctx->host, CB_ERR_NOMEM,
		                           "verbs: out of memory");
	rm->addr = x.addr;
	rm->bytes = x.bytes;
	memcpy(rm->rkey, x.rkey, sizeof(rm->rkey));
	*out = rm;
	if (local)
		*local = NULL; /* another host's memory: no loads */
	return CB_OK;
}

static void vb_mem_unimport(struct cb_tp_ep *ep, struct cb_tp_rmem *rm)
{
	(void)ep;
	free(rm);
}

TPU_STATS(vb)

static void vb_describe(struct cb_tp_ctx *ctx, char *buf, size_t bytes)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; i < ctx->nrails && n < bytes; i++) {
		const struct vb_rail *r = &ctx->rail[i];
		char addr[64] = "";
		if (r->link == VB_LINK_IB)
			snprintf(addr, sizeof(addr), " LID %u", r->lid);
		else if (r->gid_index >= 0)
			snprintf(addr, sizeof(addr), " GID index %d",
			         r->gid_index);
		n += (size_t)snprintf(buf + n, bytes - n, "%s%s:%d %s%s%s",
		                      i ? ", " : "rank 0 on ", r->name, r->port,
		                      vb_link_name(r->link), addr,
		                      r->link == VB_LINK_ROCE ? " (RoCE v2)"
		                                              : "");
	}
	if (n < bytes)
		snprintf(buf + n, bytes - n,
		         ", MTU %u; eager to %zu B, then %s%s%s",
		         128u << ctx->rail[0].mtu, ctx->eager_max,
		         ctx->rail[0].link == VB_LINK_IWARP
		                 ? "RDMA write + FIN"
		                 : "RDMA write with immediate",
		         ctx->nrails > 1 ? ", striped over the rails" : "",
		         ctx->use_cm ? "; connected by rdma_cm" : "");
	if (ctx->gpudirect && strlen(buf) + 40 < bytes)
		snprintf(buf + strlen(buf), bytes - strlen(buf),
		         "; device memory by GPUDirect RDMA");
}

CB_TP_DEFINE(verbs) = {
	TPU_TABLE_ABI,
	.name = "verbs",
	.description = "RDMA verbs (InfiniBand, RoCE, iWARP): RC queue pairs, "
	               "eager with credits, zero-copy write with immediate",
	.caps = CB_TP_CAP_HOST_MEM | CB_TP_CAP_GPU_MEM | CB_TP_CAP_PUT |
	        CB_TP_CAP_NEEDS_REG | CB_TP_CAP_EP_BLOB,
	.query = vb_query,
	.devices = vb_devices,
	.open = vb_open,
	.close = vb_close,
	.address = vb_address,
	.ep_create = vb_ep_create,
	.ep_connect = vb_ep_connect,
	.ep_ready = vb_ep_ready,
	.ep_test = vb_ep_test,
	.ep_close = vb_ep_close,
	.mem_reg = vb_mem_reg,
	.mem_dereg = vb_mem_dereg,
	.isend = vb_isend,
	.irecv = vb_irecv,
	.test = vb_test,
	.progress = vb_progress,
	.mem_export = vb_mem_export,
	.mem_import = vb_mem_import,
	.mem_unimport = vb_mem_unimport,
	.put = vb_put,
	.notify_poll = vb_notify_poll,
	.mem_alloc = NULL,
	.mem_free = NULL,
	.irecv_reduce = NULL, /* the core stages and reduces */
	.idle_wait = NULL,    /* completions are polled: a benchmark spins */
	.stats = vb_stats,
	.counters = vb_counters,
	.describe = vb_describe,
};
