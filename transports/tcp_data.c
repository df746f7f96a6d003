/* SPDX-License-Identifier: MIT */
/*
 * transports/tcp_data.c - the tcp transport's data path (see tcp.c): posting
 * sends and receives on per-stream FIFOs, and moving bytes in progress().
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "transports/tcp.h"

static inline int fifo_empty(const struct tcp_fifo *f)
{
	return f->head == f->tail;
}

static inline int fifo_push(struct tcp_fifo *f, struct cb_tp_req *r)
{
	if (f->tail - f->head == TCP_QDEPTH)
		return -1;
	f->q[f->tail++ % TCP_QDEPTH] = r;
	return 0;
}

static inline struct cb_tp_req *fifo_head(const struct tcp_fifo *f)
{
	return f->q[f->head % TCP_QDEPTH];
}

static inline int tcp_pieces(const struct cb_tp_ctx *ctx, size_t bytes)
{
	return ctx->nstreams > 1 && bytes >= ctx->split_bytes ? ctx->nstreams
	                                                      : 1;
}

static inline void tcp_piece(size_t bytes, int k, int i, size_t *a, size_t *b)
{
	*a = bytes / (size_t)k * (size_t)i;
	*b = i == k - 1 ? bytes : bytes / (size_t)k * (size_t)(i + 1);
}

cb_status_t tcp_isend(struct cb_tp_ep *ep, const void *buf, size_t bytes,
                      const struct cb_tp_mem *mem, uint64_t tag,
                      struct cb_tp_req *req)
{
	int k = tcp_pieces(ep->ctx, bytes);

	(void)mem;
	if (ep->err)
		return ep->err;
	for (int i = 0; i < k; i++)
		if (ep->s[i].sq.tail - ep->s[i].sq.head == TCP_QDEPTH)
			return CB_AGAIN;
	req->tag = tag;
	req->bytes = bytes;
	req->priv.u64[R_PENDING] = (uint64_t)k;
	req->priv.ptr[R_BUF] = (void *)buf;
	req->priv.u64[R_ERR] = 0;
	for (int i = 0; i < k; i++)
		fifo_push(&ep->s[i].sq, req);
	return CB_OK;
}

cb_status_t tcp_irecv(struct cb_tp_ep *ep, void *buf, size_t cap,
                      const struct cb_tp_mem *mem, uint64_t tag,
                      struct cb_tp_req *req)
{
	(void)mem;
	if (ep->err)
		return ep->err;
	if (ep->s[0].rq.tail - ep->s[0].rq.head == TCP_QDEPTH)
		return CB_AGAIN;
	req->tag = tag;
	req->bytes = 0;
	req->priv.u64[R_PENDING] = 1;
	req->priv.ptr[R_BUF] = buf;
	req->priv.u64[R_CAP] = cap;
	req->priv.u64[R_ERR] = 0;
	req->priv.u64[R_HDR_DONE] = 0;
	fifo_push(&ep->s[0].rq, req);
	return CB_OK;
}

cb_status_t tcp_test(struct cb_tp_ep *ep, struct cb_tp_req *req)
{
	if (req->priv.u64[R_ERR])
		return (cb_status_t)(int64_t)req->priv.u64[R_ERR];
	if (req->priv.u64[R_PENDING] == 0)
		return CB_OK;
	return ep->err ? ep->err : CB_AGAIN;
}

/* Push the send queue of stream @si; 1 if anything moved. */
static int tcp_send_stream(struct cb_tp_ep *ep, int si, cb_status_t *st)
{
	struct tcp_stream *s = &ep->s[si];
	int moved = 0;

	while (!fifo_empty(&s->sq)) {
		struct cb_tp_req *req = fifo_head(&s->sq);
		int k = tcp_pieces(ep->ctx, req->bytes);
		size_t a, b, hdr = si == 0 ? sizeof(struct tcp_hdr) : 0;
		struct iovec iov[2];
		int n = 0;

		tcp_piece(req->bytes, k, si, &a, &b);
		if (s->s_off == 0 && si == 0)
			s->s_hdr = (struct tcp_hdr){ TCP_MAGIC, 0, req->tag,
				                     req->bytes };
		if (s->s_off < hdr)
			iov[n++] = (struct iovec){ (char *)&s->s_hdr + s->s_off,
				                   hdr - s->s_off };
		size_t done = s->s_off > hdr ? s->s_off - hdr : 0;
		if (b - a > done)
			iov[n++] =
			        (struct iovec){ (char *)req->priv.ptr[R_BUF] +
				                        a + done,
				                b - a - done };
		if (n) {
			struct msghdr m = { .msg_iov = iov, .msg_iovlen = n };
			ssize_t w =
			        sendmsg(s->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (w < 0) {
				if (errno == EAGAIN || errno == EINTR)
					break;
				*st = tcp_ep_fail(ep, CB_ERR_PEER,
				                  "lost the connection to",
				                  errno);
				return moved;
			}
			s->s_off += (size_t)w;
			moved = 1;
			if (s->s_off < hdr + (b - a))
				break;
		}
		s->s_off = 0;
		s->sq.head++;
		req->priv.u64[R_PENDING]--;
	}
	return moved;
}

/* Read into @dst up to @want bytes; 0 when nothing was there. */
static ssize_t tcp_read(struct cb_tp_ep *ep, int fd, void *dst, size_t want,
                        cb_status_t *st)
{
	ssize_t n = recv(fd, dst, want, MSG_DONTWAIT);

	if (n > 0)
		return n;
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	*st = tcp_ep_fail(ep, CB_ERR_PEER,
	                  n == 0 ? "connection closed by"
	                         : "lost the connection to",
	                  n == 0 ? 0 : errno);
	return -1;
}

cb_status_t tcp_hdr_check(const struct tcp_hdr *h, uint64_t tag, uint64_t cap,
                          const char **why)
{
	if (h->magic != TCP_MAGIC) {
		*why = "magic";
		return CB_ERR_PROTO;
	}
	if (h->tag != tag) {
		*why = "tag";
		return CB_ERR_PROTO;
	}
	if (h->bytes > cap) {
		*why = "size";
		return CB_ERR_TRUNCATE;
	}
	return CB_OK;
}

static cb_status_t tcp_header(struct cb_tp_ep *ep, struct cb_tp_req *req)
{
	struct tcp_hdr h;
	const struct cb_tp_host *host = ep->ctx->host;
	const char *why = "";
	cb_status_t st;

	memcpy(&h, ep->bounce + ep->b_start, sizeof(h));
	ep->b_start += sizeof(h);
	st = tcp_hdr_check(&h, req->tag, req->priv.u64[R_CAP], &why);
	if (st && !strcmp(why, "magic"))
		return ep->err = host->fail(
		               host, CB_ERR_PROTO,
		               "tcp: rank %d (host %s) sent a message that "
		               "does not parse (magic 0x%08x)",
		               ep->peer, tpu_host(ep->ctx->host, ep->peer),
		               h.magic);
	if (st && !strcmp(why, "tag"))
		return ep->err = host->fail(
		               host, CB_ERR_PROTO,
		               "tcp: rank %d sent message tag 0x%llx where "
		               "this rank expected 0x%llx (schedules disagree)",
		               ep->peer, (unsigned long long)h.tag,
		               (unsigned long long)req->tag);
	if (st)
		return ep->err = host->fail(
		               host, CB_ERR_TRUNCATE,
		               "tcp: rank %d sent %llu bytes to a %llu-byte "
		               "receive",
		               ep->peer, (unsigned long long)h.bytes,
		               (unsigned long long)req->priv.u64[R_CAP]);
	int k = tcp_pieces(ep->ctx, h.bytes);
	req->bytes = h.bytes;
	req->priv.u64[R_PENDING] = (uint64_t)k;
	req->priv.u64[R_HDR_DONE] = 1;
	for (int i = 1; i < k; i++)
		if (fifo_push(&ep->s[i].rq, req))
			return ep->err = host->fail(
			               host, CB_ERR_PROTO,
			               "tcp: receive queue overflow");
	return CB_OK;
}

/* Pull data for the posted receives of stream @si; 1 if anything moved. */
static int tcp_recv_stream(struct cb_tp_ep *ep, int si, cb_status_t *st)
{
	struct tcp_stream *s = &ep->s[si];
	int moved = 0;

	while (!fifo_empty(&s->rq)) {
		struct cb_tp_req *req = fifo_head(&s->rq);

		if (si == 0 && !req->priv.u64[R_HDR_DONE]) {
			size_t have = ep->b_end - ep->b_start;
			if (have < sizeof(struct tcp_hdr)) {
				memmove(ep->bounce, ep->bounce + ep->b_start,
				        have);
				ep->b_start = 0;
				ep->b_end = have;
				/* Small receives read ahead (header and payload
				 * in one call, then a copy); large ones read
				 * the header alone so the payload lands in
				 * place. */
				size_t want =
				        req->priv.u64[R_CAP] > TCP_BOUNCE
				                ? sizeof(struct tcp_hdr) - have
				                : TCP_BOUNCE - have;
				ssize_t n = tcp_read(
				        ep, s->fd, ep->bounce + have, want, st);
				if (n <= 0)
					return moved;
				ep->b_end += (size_t)n;
				moved = 1;
				if (ep->b_end < sizeof(struct tcp_hdr))
					return moved;
			}
			if ((*st = tcp_header(ep, req)))
				return moved;
			s->r_off = 0;
		}
		int k = tcp_pieces(ep->ctx, req->bytes);
		size_t a, b;
		tcp_piece(req->bytes, k, si, &a, &b);
		char *dst = (char *)req->priv.ptr[R_BUF] + a;
		if (si == 0 && ep->b_end > ep->b_start && s->r_off < b - a) {
			size_t take = ep->b_end - ep->b_start;
			if (take > b - a - s->r_off)
				take = b - a - s->r_off;
			memcpy(dst + s->r_off, ep->bounce + ep->b_start, take);
			ep->b_start += take;
			s->r_off += take;
			moved = 1;
		}
		while (s->r_off < b - a) {
			ssize_t n = tcp_read(ep, s->fd, dst + s->r_off,
			                     b - a - s->r_off, st);
			if (n <= 0)
				return moved;
			s->r_off += (size_t)n;
			moved = 1;
		}
		s->r_off = 0;
		s->rq.head++;
		req->priv.u64[R_PENDING]--;
		moved = 1;
	}
	return moved;
}

static cb_status_t tcp_ep_progress(struct cb_tp_ep *ep, int *moved)
{
	cb_status_t st = CB_OK;

	if (ep->err)
		return ep->err;
	for (int s = 0; s < ep->ctx->nstreams && ep->s[s].state == S_READY;
	     s++) {
		if (!fifo_empty(&ep->s[s].sq))
			*moved |= tcp_send_stream(ep, s, &st);
		if (!st && !fifo_empty(&ep->s[s].rq))
			*moved |= tcp_recv_stream(ep, s, &st);
		if (st)
			return st;
	}
	return CB_OK;
}

cb_status_t tcp_progress(struct cb_tp_ctx *ctx)
{
	return tpu_progress(ctx->eps, ctx->active, ctx->nactive,
	                    tcp_ep_progress);
}

void tcp_idle_wait(struct cb_tp_ctx *ctx, int timeout_us)
{
	struct pollfd pfd[64];
	int n = 0;

	for (int i = 0; i < ctx->nactive && n < 64; i++) {
		struct cb_tp_ep *ep = ctx->eps[ctx->active[i]];
		for (int s = 0; s < ctx->nstreams && n < 64; s++) {
			short ev = 0;
			if (ep->s[s].fd < 0)
				continue;
			if (!fifo_empty(&ep->s[s].sq))
				ev |= POLLOUT;
			if (!fifo_empty(&ep->s[s].rq))
				ev |= POLLIN;
			if (ev)
				pfd[n++] =
				        (struct pollfd){ ep->s[s].fd, ev, 0 };
		}
	}
	/* Millisecond resolution: round up, so 0 never means spin. */
	if (n)
		poll(pfd, (nfds_t)n, (timeout_us + 999) / 1000);
}
