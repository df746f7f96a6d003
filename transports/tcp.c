/* SPDX-License-Identifier: MIT */
/*
 * transports/tcp.c - TCP sockets, between hosts or on one.
 *
 * Each pair of ranks shares S streams (sockets), S = --tcp-streams (default 2,
 * at most 8).  A message travels as a 24-byte header {magic, tag, bytes} on
 * stream 0 followed by its payload; a message of at least --tcp-split-bytes
 * (default 1 MiB) is cut into S contiguous pieces, piece i on stream i, so
 * large messages use several flows (and, between hosts, several NIC queues).
 * Header and first piece leave in one writev; every socket is non-blocking
 * with TCP_NODELAY.
 *
 * Buffering is bounded: the receiver reads a header only when a receive is
 * posted, lands payload straight in the user's buffer, and keeps at most one
 * 64 KiB bounce buffer per peer for what one read brought in past a header.
 * Socket buffers are left to Linux autotuning (setting SO_RCVBUF would turn
 * it off).
 *
 * Connections: the higher rank dials each stream of the lower rank's one
 * listener and says hello {magic, job id, rank, stream, streams}; the
 * listener sorts accepted sockets by that hello.  The interface is
 * --tcp-if / COLLBENCH_TCP_IF, or else the one that reached the rendezvous.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <collbench/transport.h>

#include "core/log.h"
#include "core/sock.h"

#define TCP_MAGIC       0x43425450u /* "CBTP" */
#define TCP_MAX_STREAMS 8
#define TCP_QDEPTH      128 /* outstanding requests per stream and direction */
#define TCP_BOUNCE      (64u << 10)

struct tcp_hdr {
	uint32_t magic, pad;
	uint64_t tag, bytes;
};

struct tcp_hello {
	uint32_t magic;
	int32_t rank, stream, streams;
	uint64_t job_id;
};

struct tcp_addr {
	uint32_t magic;
	int32_t rank;
	struct sockaddr_storage sa;
	socklen_t len;
};

/* A FIFO of requests; head is the one in progress. */
struct tcp_fifo {
	struct cb_tp_req *q[TCP_QDEPTH];
	uint32_t head, tail;
};

struct tcp_stream {
	int fd;
	struct tcp_fifo sq, rq;
	size_t s_off, r_off; /* progress on the head piece */
	struct tcp_hdr s_hdr;
};

struct cb_tp_ep {
	struct cb_tp_ctx *ctx;
	int peer;
	int nconnected;
	cb_status_t err;
	struct tcp_stream s[TCP_MAX_STREAMS];
	uint8_t *bounce; /* stream 0 read-ahead */
	size_t b_start, b_end;
};

struct cb_tp_ctx {
	const struct cb_tp_host *host;
	int listen_fd;
	struct tcp_addr addr;
	int nstreams;
	size_t split_bytes;
	struct cb_tp_ep **eps; /* [world], made when first needed */
	int *active;           /* peers with an endpoint, for progress */
	int nactive;
};

/* Request private state. */
enum { R_PENDING, R_BUF, R_CAP, R_ERR, R_HDR_DONE };

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

static const char *tcp_host(const struct cb_tp_ctx *ctx, int peer)
{
	return ctx->host->hosts[ctx->host->host_of_rank[peer]];
}

static cb_status_t tcp_ep_fail(struct cb_tp_ep *ep, cb_status_t st,
                               const char *what, int err)
{
	const struct cb_tp_host *h = ep->ctx->host;

	if (!ep->err)
		ep->err = h->fail(st, "tcp: %s rank %d (host %s)%s%s", what,
		                  ep->peer, tcp_host(ep->ctx, ep->peer),
		                  err ? ": " : "", err ? strerror(err) : "");
	return ep->err;
}

/* ---------------------------------------------------------- setup */

static int tcp_find_if(const char *name, struct sockaddr_storage *sa,
                       char *have, size_t have_bytes)
{
	struct ifaddrs *ifa, *i;
	int found = 0;

	have[0] = '\0';
	if (getifaddrs(&ifa) != 0)
		return 0;
	for (i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
			continue;
		if (!strstr(have, i->ifa_name) &&
		    strlen(have) + strlen(i->ifa_name) + 3 < have_bytes)
			snprintf(have + strlen(have), have_bytes - strlen(have),
			         "%s%s", have[0] ? ", " : "", i->ifa_name);
		if (!found && !strcmp(i->ifa_name, name)) {
			memcpy(sa, i->ifa_addr, sizeof(struct sockaddr_in));
			found = 1;
		}
	}
	freeifaddrs(ifa);
	return found;
}

static cb_status_t tcp_parse_opts(const struct cb_tp_host *h,
                                  struct cb_tp_ctx *ctx)
{
	const char *s = h->option("tcp-streams");
	const char *sp = h->option("tcp-split-bytes");
	char *end;

	ctx->nstreams = 2;
	ctx->split_bytes = 1u << 20;
	if (s) {
		long v = strtol(s, &end, 10);
		if (*end || v < 1 || v > TCP_MAX_STREAMS)
			return h->fail(
			        CB_ERR_USAGE,
			        "tcp: streams per peer '%s' is not 1..%d", s,
			        TCP_MAX_STREAMS);
		ctx->nstreams = (int)v;
	}
	if (sp) {
		long long v = strtoll(sp, &end, 10);
		if (*end || v < 4096)
			return h->fail(CB_ERR_USAGE,
			               "tcp: split size '%s' is not a byte "
			               "count of at least 4096",
			               sp);
		ctx->split_bytes = (size_t)v;
	}
	return CB_OK;
}

static cb_status_t tcp_open(const struct cb_tp_host *h, struct cb_tp_ctx **out)
{
	struct cb_tp_ctx *ctx = calloc(1, sizeof(*ctx));
	struct sockaddr_storage sa = { 0 };
	const char *ifname = h->option("tcp-if");
	char have[256];
	cb_status_t st;

	if (!ctx)
		return h->fail(CB_ERR_NOMEM, "tcp: out of memory");
	ctx->host = h;
	ctx->listen_fd = -1;
	if ((st = tcp_parse_opts(h, ctx)))
		goto fail;
	ctx->eps = calloc((size_t)h->world, sizeof(*ctx->eps));
	ctx->active = calloc((size_t)h->world, sizeof(int));
	if (!ctx->eps || !ctx->active) {
		st = h->fail(CB_ERR_NOMEM, "tcp: out of memory");
		goto fail;
	}
	if (ifname) {
		if (!tcp_find_if(ifname, &sa, have, sizeof(have))) {
			st = h->fail(CB_ERR_USAGE,
			             "tcp: interface '%s' does not exist or "
			             "has no IPv4 address (interfaces: %s)",
			             ifname, have);
			goto fail;
		}
	} else {
		socklen_t l;
		if (cb_sock_resolve(h->local_ip && *h->local_ip ? h->local_ip
		                                                : "127.0.0.1",
		                    "0", &sa, &l)) {
			st = CB_ERR_SYS;
			goto fail;
		}
	}
	((struct sockaddr_in *)&sa)->sin_port = 0;
	socklen_t len = sa.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
	                                         : sizeof(struct sockaddr_in);
	if (cb_sock_listen((struct sockaddr *)&sa, len, &ctx->listen_fd)) {
		char a[80];
		cb_sock_ntop((struct sockaddr *)&sa, a, sizeof(a));
		st = h->fail(CB_ERR_SYS, "tcp: cannot listen on %s: %s", a,
		             strerror(errno));
		goto fail;
	}
	cb_sock_set_nonblock(ctx->listen_fd, 1);
	ctx->addr.magic = TCP_MAGIC;
	ctx->addr.rank = h->rank;
	ctx->addr.len = sizeof(ctx->addr.sa);
	getsockname(ctx->listen_fd, (struct sockaddr *)&ctx->addr.sa,
	            &ctx->addr.len);
	*out = ctx;
	return CB_OK;
fail:
	if (ctx->listen_fd >= 0)
		close(ctx->listen_fd);
	free(ctx->eps);
	free(ctx->active);
	free(ctx);
	return st;
}

static void tcp_ep_free(struct cb_tp_ep *ep)
{
	for (int i = 0; i < TCP_MAX_STREAMS; i++)
		if (ep->s[i].fd >= 0)
			close(ep->s[i].fd);
	free(ep->bounce);
	free(ep);
}

static void tcp_close(struct cb_tp_ctx *ctx)
{
	for (int p = 0; p < ctx->host->world; p++)
		if (ctx->eps[p])
			tcp_ep_free(ctx->eps[p]);
	close(ctx->listen_fd);
	free(ctx->eps);
	free(ctx->active);
	free(ctx);
}

static cb_status_t tcp_address(struct cb_tp_ctx *ctx, void *blob, size_t *bytes)
{
	if (*bytes < sizeof(ctx->addr))
		return CB_ERR_INVALID;
	memcpy(blob, &ctx->addr, sizeof(ctx->addr));
	*bytes = sizeof(ctx->addr);
	return CB_OK;
}

static struct cb_tp_ep *tcp_ep_get(struct cb_tp_ctx *ctx, int peer)
{
	struct cb_tp_ep *ep = ctx->eps[peer];

	if (ep)
		return ep;
	ep = calloc(1, sizeof(*ep));
	if (!ep || !(ep->bounce = malloc(TCP_BOUNCE))) {
		free(ep);
		return NULL;
	}
	ep->ctx = ctx;
	ep->peer = peer;
	for (int i = 0; i < TCP_MAX_STREAMS; i++)
		ep->s[i].fd = -1;
	ctx->eps[peer] = ep;
	ctx->active[ctx->nactive++] = peer;
	return ep;
}

static void tcp_tune(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	cb_sock_set_nonblock(fd, 1);
}

/* Accept every pending connection and file it under its hello. */
static cb_status_t tcp_accept(struct cb_tp_ctx *ctx)
{
	const struct cb_tp_host *h = ctx->host;

	for (;;) {
		struct sockaddr_storage sa;
		socklen_t sl = sizeof(sa);
		struct tcp_hello hello;
		char from[80];
		int err = 0;
		int fd = accept4(ctx->listen_fd, (struct sockaddr *)&sa, &sl,
		                 SOCK_CLOEXEC);

		if (fd < 0)
			return CB_OK;
		cb_sock_ntop((struct sockaddr *)&sa, from, sizeof(from));
		/* The dialer sends its hello right after connecting. */
		if (cb_sock_recv_all(fd, &hello, sizeof(hello),
		                     cb_now_ns() + 5000000000ull, &err) ||
		    hello.magic != TCP_MAGIC || hello.job_id != h->job_id ||
		    hello.rank <= h->rank || hello.rank >= h->world ||
		    hello.stream < 0 || hello.stream >= TCP_MAX_STREAMS) {
			h->log(CB_LOG_WARN,
			       "dropped a connection from %s that is not a "
			       "peer of this job (its hello does not parse)",
			       from);
			close(fd);
			continue;
		}
		if (hello.streams != ctx->nstreams) {
			close(fd);
			return h->fail(CB_ERR_USAGE,
			               "tcp: rank %d uses %d streams per peer "
			               "and rank %d uses %d: set --tcp-streams "
			               "the same on every rank",
			               hello.rank, hello.streams, h->rank,
			               ctx->nstreams);
		}
		struct cb_tp_ep *ep = tcp_ep_get(ctx, hello.rank);
		if (!ep) {
			close(fd);
			return h->fail(CB_ERR_NOMEM, "tcp: out of memory");
		}
		if (ep->s[hello.stream].fd >= 0) {
			close(fd);
			continue;
		}
		tcp_tune(fd);
		ep->s[hello.stream].fd = fd;
		ep->nconnected++;
	}
}

static cb_status_t tcp_ep_connect(struct cb_tp_ctx *ctx, int peer,
                                  const void *blob, size_t bytes,
                                  struct cb_tp_ep **out)
{
	const struct cb_tp_host *h = ctx->host;
	struct tcp_addr a;
	struct cb_tp_ep *ep = tcp_ep_get(ctx, peer);

	if (!ep)
		return h->fail(CB_ERR_NOMEM, "tcp: out of memory");
	if (bytes != sizeof(a))
		return h->fail(CB_ERR_PROTO,
		               "tcp: the address of rank %d does not parse",
		               peer);
	memcpy(&a, blob, sizeof(a));
	if (a.magic != TCP_MAGIC || a.rank != peer)
		return h->fail(CB_ERR_PROTO,
		               "tcp: the address of rank %d does not parse",
		               peer);
	*out = ep;
	if (peer > h->rank)
		return CB_OK; /* the higher rank dials */
	for (int s = 0; s < ctx->nstreams; s++) {
		struct tcp_hello hello = { TCP_MAGIC, h->rank, s, ctx->nstreams,
			                   h->job_id };
		uint64_t dl = cb_now_ns() + (uint64_t)(h->timeout_s * 1e9);
		int fd, err = 0;
		char to[80];

		cb_sock_ntop((struct sockaddr *)&a.sa, to, sizeof(to));
		if (cb_sock_connect((struct sockaddr *)&a.sa, a.len, dl, &fd,
		                    &err))
			return h->fail(
			        CB_ERR_PEER,
			        "tcp: cannot connect to rank %d (host %s) "
			        "at %s: %s",
			        peer, tcp_host(ctx, peer), to, strerror(err));
		if (cb_sock_send_all(fd, &hello, sizeof(hello), dl, &err)) {
			close(fd);
			return h->fail(
			        CB_ERR_PEER,
			        "tcp: rank %d (host %s) at %s closed the "
			        "connection during the handshake",
			        peer, tcp_host(ctx, peer), to);
		}
		tcp_tune(fd);
		ep->s[s].fd = fd;
		ep->nconnected++;
	}
	return CB_OK;
}

static cb_status_t tcp_ep_test(struct cb_tp_ep *ep)
{
	cb_status_t st = tcp_accept(ep->ctx);

	if (st)
		return st;
	return ep->nconnected == ep->ctx->nstreams ? CB_OK : CB_AGAIN;
}

static void tcp_ep_close(struct cb_tp_ep *ep)
{
	(void)ep; /* freed with the context, which owns the table */
}

/* ---------------------------------------------------------- data path */

static cb_status_t tcp_isend(struct cb_tp_ep *ep, const void *buf, size_t bytes,
                             struct cb_tp_mr *mr, uint64_t tag,
                             struct cb_tp_req *req)
{
	int k = tcp_pieces(ep->ctx, bytes);

	(void)mr;
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

static cb_status_t tcp_irecv(struct cb_tp_ep *ep, void *buf, size_t cap,
                             struct cb_tp_mr *mr, uint64_t tag,
                             struct cb_tp_req *req)
{
	(void)mr;
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

static cb_status_t tcp_test(struct cb_tp_ep *ep, struct cb_tp_req *req)
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

static cb_status_t tcp_header(struct cb_tp_ep *ep, struct cb_tp_req *req)
{
	struct tcp_hdr h;
	const struct cb_tp_host *host = ep->ctx->host;

	memcpy(&h, ep->bounce + ep->b_start, sizeof(h));
	ep->b_start += sizeof(h);
	if (h.magic != TCP_MAGIC) {
		ep->err = host->fail(
		        CB_ERR_PROTO,
		        "tcp: rank %d (host %s) sent a message that "
		        "does not parse (magic 0x%08x)",
		        ep->peer, tcp_host(ep->ctx, ep->peer), h.magic);
		return ep->err;
	}
	if (h.tag != req->tag) {
		ep->err =
		        host->fail(CB_ERR_PROTO,
		                   "tcp: rank %d sent message tag 0x%llx where "
		                   "this rank expected 0x%llx (schedules "
		                   "disagree)",
		                   ep->peer, (unsigned long long)h.tag,
		                   (unsigned long long)req->tag);
		return ep->err;
	}
	if (h.bytes > req->priv.u64[R_CAP]) {
		ep->err = host->fail(
		        CB_ERR_TRUNCATE,
		        "tcp: rank %d sent %llu bytes to a %llu-byte "
		        "receive",
		        ep->peer, (unsigned long long)h.bytes,
		        (unsigned long long)req->priv.u64[R_CAP]);
		return ep->err;
	}
	int k = tcp_pieces(ep->ctx, h.bytes);
	req->bytes = h.bytes;
	req->priv.u64[R_PENDING] = (uint64_t)k;
	req->priv.u64[R_HDR_DONE] = 1;
	for (int i = 1; i < k; i++)
		if (fifo_push(&ep->s[i].rq, req))
			return ep->err = host->fail(
			               CB_ERR_PROTO,
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

static cb_status_t tcp_progress(struct cb_tp_ctx *ctx)
{
	int moved = 0;

	for (int i = 0; i < ctx->nactive; i++) {
		struct cb_tp_ep *ep = ctx->eps[ctx->active[i]];
		cb_status_t st = CB_OK;

		if (ep->err)
			return ep->err;
		for (int s = 0; s < ctx->nstreams && ep->s[s].fd >= 0; s++) {
			if (!fifo_empty(&ep->s[s].sq))
				moved |= tcp_send_stream(ep, s, &st);
			if (!st && !fifo_empty(&ep->s[s].rq))
				moved |= tcp_recv_stream(ep, s, &st);
			if (st)
				return st;
		}
	}
	return moved ? CB_OK : CB_AGAIN;
}

static void tcp_idle_wait(struct cb_tp_ctx *ctx, int timeout_us)
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

const struct cb_tp_ops cb_tp_tcp = {
	.abi = CB_TP_ABI,
	.size = sizeof(struct cb_tp_ops),
	.name = "tcp",
	.description = "TCP sockets; several streams per peer for large "
	               "messages",
	.caps = CB_TP_CAP_HOST_MEM,
	.query = NULL, /* sockets exist everywhere */
	.open = tcp_open,
	.close = tcp_close,
	.address = tcp_address,
	.ep_connect = tcp_ep_connect,
	.ep_test = tcp_ep_test,
	.ep_close = tcp_ep_close,
	.mem_reg = NULL, /* no registration needed */
	.mem_dereg = NULL,
	.isend = tcp_isend,
	.irecv = tcp_irecv,
	.test = tcp_test,
	.progress = tcp_progress,
	.put = NULL, /* two-sided only */
	.notify_poll = NULL,
	.peer_map = NULL,
	.idle_wait = tcp_idle_wait,
};
