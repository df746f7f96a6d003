/* SPDX-License-Identifier: MIT */
/*
 * transports/tcp.c - TCP sockets, between hosts or on one: set-up and
 * connections.  The data path is in tcp_data.c.
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
 * Connections are made when a plan first needs a peer, and never block: the
 * higher rank dials each stream of the lower rank's one listener
 * (non-blocking connect, polled in ep_test) and says hello {magic, job id,
 * rank, stream, streams}; the listener accepts in progress(), reads hellos
 * as they come (a socket without one for 5 s is dropped) and files each
 * stream under its hello.  A pair may connect again after a close
 * (CB_TP_CAP_RECONNECT): the hello carries the endpoint's generation, so a
 * stream of a given-up try is never filed under the next.  The interface is
 * --nic / --tcp-if / COLLBENCH_TCP_IF when it names an interface with an IPv4
 * address, else the one that reached the rendezvous.
 *
 * The transport uses nothing of the core but its host table (it links as a
 * module too).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "transports/tcp.h"

static void tcp_ntop(const struct sockaddr_storage *sa, char *out, size_t n)
{
	char ip[INET6_ADDRSTRLEN] = "?";
	int port = 0;

	if (sa->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const void *)sa;
		inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
		port = ntohs(a->sin_port);
	} else if (sa->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const void *)sa;
		inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof(ip));
		port = ntohs(a->sin6_port);
	}
	snprintf(out, n, "%s:%d", ip, port);
}

static void tcp_tune(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* ---------------------------------------------------------- setup */

/* The IPv4 address of interface @name into @sa (1), or 0; the interfaces
 * there are, for the message, into @have. */
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
	const char *s = h->option(h, "tcp-streams");
	const char *sp = h->option(h, "tcp-split-bytes");
	char *end;

	ctx->nstreams = 2;
	ctx->split_bytes = 1u << 20;
	if (s) {
		long v = strtol(s, &end, 10);
		if (*end || end == s || v < 1 || v > TCP_MAX_STREAMS)
			return h->fail(
			        h, CB_ERR_USAGE,
			        "tcp: streams per peer '%s' is not 1..%d", s,
			        TCP_MAX_STREAMS);
		ctx->nstreams = (int)v;
	}
	if (sp) {
		long long v = strtoll(sp, &end, 10);
		if (*end || end == sp || v < 4096)
			return h->fail(h, CB_ERR_USAGE,
			               "tcp: split size '%s' is not a byte "
			               "count of at least 4096",
			               sp);
		ctx->split_bytes = (size_t)v;
	}
	return CB_OK;
}

/* Where to listen: --tcp-if, else the chosen NIC when it is an interface
 * with an address, else the address that reached the rendezvous. */
static cb_status_t tcp_pick_addr(const struct cb_tp_host *h,
                                 struct sockaddr_storage *sa, char *ifname,
                                 size_t ifname_bytes)
{
	const char *want = h->option(h, "tcp-if");
	char have[256];

	if (want) {
		if (!tcp_find_if(want, sa, have, sizeof(have)))
			return h->fail(h, CB_ERR_USAGE,
			               "tcp: interface '%s' does not exist or "
			               "has no IPv4 address (interfaces: %s)",
			               want, have);
		snprintf(ifname, ifname_bytes, "%.15s", want);
		return CB_OK;
	}
	if (h->nic) {
		char first[64];
		snprintf(first, sizeof(first), "%.*s",
		         (int)strcspn(h->nic, ","), h->nic);
		if (tcp_find_if(first, sa, have, sizeof(have))) {
			snprintf(ifname, ifname_bytes, "%.15s", first);
			return CB_OK;
		}
	}
	struct sockaddr_in *in = (struct sockaddr_in *)sa;
	memset(sa, 0, sizeof(*sa));
	in->sin_family = AF_INET;
	const char *ip =
	        h->local_ip && *h->local_ip ? h->local_ip : "127.0.0.1";
	if (inet_pton(AF_INET, ip, &in->sin_addr) != 1) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)sa;
		memset(sa, 0, sizeof(*sa));
		in6->sin6_family = AF_INET6;
		if (inet_pton(AF_INET6, ip, &in6->sin6_addr) != 1)
			return h->fail(h, CB_ERR_INVALID,
			               "tcp: local address '%s' does not parse",
			               ip);
	}
	snprintf(ifname, ifname_bytes, "default");
	return CB_OK;
}

static void tcp_close(struct cb_tp_ctx *ctx);

static cb_status_t tcp_open(const struct cb_tp_host *h, struct cb_tp_ctx **out)
{
	struct cb_tp_ctx *ctx = calloc(1, sizeof(*ctx));
	struct sockaddr_storage sa;
	char where[80];
	cb_status_t st;
	int one = 1;

	if (!ctx)
		return h->fail(h, CB_ERR_NOMEM, "tcp: out of memory");
	ctx->host = h;
	ctx->listen_fd = -1;
	if ((st = tcp_parse_opts(h, ctx)))
		goto fail;
	ctx->eps = calloc((size_t)h->world, sizeof(*ctx->eps));
	ctx->active = calloc((size_t)h->world, sizeof(int));
	if (!ctx->eps || !ctx->active) {
		st = h->fail(h, CB_ERR_NOMEM, "tcp: out of memory");
		goto fail;
	}
	if ((st = tcp_pick_addr(h, &sa, ctx->addr.ifname,
	                        sizeof(ctx->addr.ifname))))
		goto fail;
	socklen_t len = sa.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
	                                         : sizeof(struct sockaddr_in);
	ctx->listen_fd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(ctx->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ctx->listen_fd < 0 ||
	    bind(ctx->listen_fd, (struct sockaddr *)&sa, len) != 0 ||
	    listen(ctx->listen_fd, 1024) != 0) {
		tcp_ntop(&sa, where, sizeof(where));
		st = h->fail(h, CB_ERR_SYS, "tcp: cannot listen on %s: %s",
		             where, strerror(errno));
		goto fail;
	}
	fcntl(ctx->listen_fd, F_SETFL,
	      fcntl(ctx->listen_fd, F_GETFL) | O_NONBLOCK);
	ctx->addr.magic = TCP_MAGIC;
	ctx->addr.rank = h->rank;
	ctx->addr.len = sizeof(ctx->addr.sa);
	getsockname(ctx->listen_fd, (struct sockaddr *)&ctx->addr.sa,
	            &ctx->addr.len);
	*out = ctx;
	return CB_OK;
fail:
	tcp_close(ctx);
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
	for (int p = 0; ctx->eps && p < ctx->host->world; p++)
		if (ctx->eps[p])
			tcp_ep_free(ctx->eps[p]);
	for (int i = 0; i < ctx->npending; i++)
		close(ctx->pending[i].fd);
	if (ctx->listen_fd >= 0)
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

/* The endpoint of @peer, made on first use: by ep_create, or by a hello that
 * came in first. */
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
	ep->dialer = peer < ctx->host->rank;
	for (int i = 0; i < TCP_MAX_STREAMS; i++)
		ep->s[i].fd = -1;
	ctx->eps[peer] = ep;
	ctx->active[ctx->nactive++] = peer;
	return ep;
}

/* ---------------------------------------------------------- connecting */

/* File an accepted stream under its hello; *@park when it is of the
 * endpoint's next generation (the peer connects again before this rank
 * does): kept until this rank does too, up to a minute. */
static cb_status_t tcp_file(struct cb_tp_ctx *ctx, struct tcp_pending *p,
                            int *park)
{
	const struct cb_tp_host *h = ctx->host;
	const struct tcp_hello *hl = &p->hello;

	*park = 0;
	/* A stream number beyond the streams the hello itself announces is
	 * junk: filed, it would count as connected while the stream a split
	 * message needs never comes. */
	if (hl->magic != TCP_MAGIC || hl->job_id != h->job_id ||
	    hl->rank <= h->rank || hl->rank >= h->world || hl->stream < 0 ||
	    hl->streams < 1 || hl->streams > TCP_MAX_STREAMS ||
	    hl->stream >= hl->streams) {
		h->log(h, CB_TP_LOG_WARN,
		       "dropped a connection from %s that is not a peer of "
		       "this job (its hello does not parse)",
		       p->from);
		close(p->fd);
		return CB_OK;
	}
	if (hl->streams != ctx->nstreams) {
		close(p->fd);
		return h->fail(
		        h, CB_ERR_USAGE,
		        "tcp: rank %d uses %d streams per peer and rank "
		        "%d uses %d: set --tcp-streams the same on every "
		        "rank",
		        hl->rank, hl->streams, h->rank, ctx->nstreams);
	}
	struct cb_tp_ep *ep = tcp_ep_get(ctx, hl->rank);
	if (!ep) {
		close(p->fd);
		return h->fail(h, CB_ERR_NOMEM, "tcp: out of memory");
	}
	if (hl->gen == ep->gen + 1) {
		*park = 1; /* until ep_close and ep_create here */
		return CB_OK;
	}
	if (ep->closed || hl->gen != ep->gen) {
		close(p->fd); /* we gave up on that peer, or it on that try */
		return CB_OK;
	}
	if (ep->s[hl->stream].fd >= 0) {
		close(p->fd); /* a duplicate */
		return CB_OK;
	}
	tcp_tune(p->fd);
	ep->s[hl->stream].fd = p->fd;
	ep->s[hl->stream].state = S_READY;
	ep->nconnected++;
	return CB_OK;
}

/* Accept what is pending on the listener, and read the hellos that came in
 * (never more than a hello: payload after it is the data path's). */
static cb_status_t tcp_accept(struct cb_tp_ctx *ctx)
{
	uint64_t now = ctx->host->now_ns(ctx->host);
	cb_status_t st;

	while (ctx->npending < TCP_PENDING) {
		struct sockaddr_storage sa;
		socklen_t sl = sizeof(sa);
		int fd = accept4(ctx->listen_fd, (struct sockaddr *)&sa, &sl,
		                 SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			break;
		struct tcp_pending *p = &ctx->pending[ctx->npending++];
		*p = (struct tcp_pending){ .fd = fd, .since_ns = now };
		tcp_ntop(&sa, p->from, sizeof(p->from));
	}
	for (int i = 0; i < ctx->npending;) {
		struct tcp_pending *p = &ctx->pending[i];
		ssize_t n = 0;
		if (p->got < sizeof(p->hello))
			n = recv(p->fd, (char *)&p->hello + p->got,
			         sizeof(p->hello) - p->got, MSG_DONTWAIT);
		int gone =
		        n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
		if (n > 0)
			p->got += (size_t)n;
		if (p->got == sizeof(p->hello)) {
			struct tcp_pending done = *p;
			int park;
			if ((st = tcp_file(ctx, &done, &park)))
				return st;
			/* a parked stream waits at most a minute */
			if (park && now - p->since_ns < 60000000000ull) {
				p->parked = 1;
				i++;
				continue;
			}
			if (park)
				close(p->fd);
			*p = ctx->pending[--ctx->npending];
			continue;
		}
		if (gone || now - p->since_ns > 5000000000ull) {
			ctx->host->log(ctx->host, CB_TP_LOG_WARN,
			               "dropped a connection from %s: no hello "
			               "%s",
			               p->from,
			               gone ? "before it closed" : "in 5 s");
			close(p->fd);
			*p = ctx->pending[--ctx->npending];
			continue;
		}
		i++;
	}
	return CB_OK;
}

static cb_status_t tcp_ep_create(struct cb_tp_ctx *ctx, int peer,
                                 struct cb_tp_ep **out, void *blob,
                                 size_t *bytes)
{
	struct cb_tp_ep *ep = tcp_ep_get(ctx, peer);

	(void)blob;
	*bytes = 0;
	if (!ep)
		return ctx->host->fail(ctx->host, CB_ERR_NOMEM,
		                       "tcp: out of memory");
	if (ep->closed) {
		/* Connecting again (CB_TP_CAP_RECONNECT): the next generation;
		 * its streams, parked or still to come, carry it. */
		ep->closed = 0;
		ep->gen++;
		ep->err = CB_OK;
		ep->started = 0;
		ep->b_start = ep->b_end = 0;
		ctx->active[ctx->nactive++] = peer;
	}
	*out = ep;
	return CB_OK;
}

/* A dialer's stream that cannot reach the peer's listener (@err). */
static cb_status_t tcp_unreachable(struct cb_tp_ep *ep, int err)
{
	const struct cb_tp_host *h = ep->ctx->host;
	char to[80];

	tcp_ntop(&ep->to.sa, to, sizeof(to));
	return ep->err = h->fail(h, CB_ERR_PEER,
	                         "tcp: rank %d (host %s) cannot reach rank %d "
	                         "(host %s) at %s (%s): %s",
	                         h->rank, tpu_host(ep->ctx->host, h->rank),
	                         ep->peer, tpu_host(ep->ctx->host, ep->peer),
	                         to, ep->to.ifname, strerror(err));
}

static cb_status_t tcp_ep_connect(struct cb_tp_ep *ep, const void *blob,
                                  size_t bytes, const void *pblob,
                                  size_t pbytes)
{
	struct cb_tp_ctx *ctx = ep->ctx;
	const struct cb_tp_host *h = ctx->host;

	(void)pblob;
	(void)pbytes;
	memcpy(&ep->to, blob, bytes < sizeof(ep->to) ? bytes : sizeof(ep->to));
	ep->to.ifname[sizeof(ep->to.ifname) - 1] = '\0';
	if (bytes != sizeof(ep->to) || ep->to.magic != TCP_MAGIC ||
	    ep->to.rank != ep->peer || ep->to.len > sizeof(ep->to.sa))
		return h->fail(h, CB_ERR_PROTO,
		               "tcp: the address of rank %d does not parse",
		               ep->peer);
	ep->started = 1;
	if (!ep->dialer)
		return CB_OK; /* the higher rank dials */
	for (int s = 0; s < ctx->nstreams; s++) {
		struct tcp_stream *st = &ep->s[s];
		st->fd = socket(ep->to.sa.ss_family,
		                SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (st->fd < 0)
			return tcp_ep_fail(ep, CB_ERR_SYS,
			                   "cannot make a socket for", errno);
		int one = 1;
		setsockopt(st->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (connect(st->fd, (struct sockaddr *)&ep->to.sa,
		            ep->to.len) != 0 &&
		    errno != EINPROGRESS && errno != EINTR) {
			return tcp_unreachable(ep, errno);
		}
		st->state = S_DIALING;
	}
	return CB_OK;
}

/* Move a dialer's stream on: connected? then its hello. */
static cb_status_t tcp_dial(struct cb_tp_ep *ep, int si)
{
	const struct cb_tp_host *h = ep->ctx->host;
	struct tcp_stream *s = &ep->s[si];

	if (s->state == S_DIALING) {
		struct pollfd p = { .fd = s->fd, .events = POLLOUT };
		int err = 0;
		socklen_t el = sizeof(err);
		if (poll(&p, 1, 0) <= 0)
			return CB_AGAIN;
		getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &el);
		if (err) {
			return tcp_unreachable(ep, err);
		}
		s->state = S_HELLO;
	}
	if (s->state == S_HELLO) {
		struct tcp_hello hello = { .magic = TCP_MAGIC,
			                   .rank = h->rank,
			                   .stream = si,
			                   .streams = ep->ctx->nstreams,
			                   .job_id = h->job_id,
			                   .gen = ep->gen };
		ssize_t n = send(s->fd, (char *)&hello + s->hello_off,
		                 sizeof(hello) - s->hello_off,
		                 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return tcp_ep_fail(ep, CB_ERR_PEER,
			                   "lost the connection (handshake) to",
			                   errno);
		if (n > 0)
			s->hello_off += (size_t)n;
		if (s->hello_off < sizeof(hello))
			return CB_AGAIN;
		s->state = S_READY;
		ep->nconnected++;
	}
	return CB_OK;
}

static cb_status_t tcp_ep_test(struct cb_tp_ep *ep)
{
	cb_status_t st;

	if (ep->err)
		return ep->err;
	if (ep->nconnected == ep->ctx->nstreams)
		return CB_OK;
	if ((st = tcp_accept(ep->ctx)))
		return st;
	for (int s = 0; ep->dialer && s < ep->ctx->nstreams; s++)
		if (ep->s[s].state != S_READY && (st = tcp_dial(ep, s)) < 0)
			return st;
	if (ep->nconnected < ep->ctx->nstreams)
		return CB_AGAIN;
	ep->ctx->stats.connects++;
	return CB_OK;
}

/*
 * Stop using @ep: its streams close, its queued requests are forgotten (the
 * caller may free them and their buffers), and progress no longer looks at
 * it, so one peer that failed does not fail every later operation of this
 * rank.  The struct stays in the context's table (freed with it), closed:
 * a late hello from that peer is turned away, and one of the next
 * generation is kept until ep_create opens it again.
 */
static void tcp_ep_close(struct cb_tp_ep *ep)
{
	struct cb_tp_ctx *ctx = ep->ctx;

	for (int i = 0; i < TCP_MAX_STREAMS; i++) {
		if (ep->s[i].fd >= 0)
			close(ep->s[i].fd);
		ep->s[i] = (struct tcp_stream){ .fd = -1, .state = S_NONE };
	}
	ep->nconnected = 0;
	ep->closed = 1;
	for (int i = 0; i < ctx->nactive; i++)
		if (ctx->active[i] == ep->peer) {
			ctx->active[i] = ctx->active[--ctx->nactive];
			break;
		}
}

/* Interfaces with an IPv4 address: what tcp could listen on. */
static cb_status_t tcp_devices(struct cb_tp_dev *devs, int max, int *n)
{
	struct ifaddrs *ifa;

	*n = 0;
	if (getifaddrs(&ifa) != 0)
		return CB_OK;
	for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
			continue;
		if (*n < max) {
			struct cb_tp_dev *d = &devs[*n];
			char ip[INET_ADDRSTRLEN];
			inet_ntop(
			        AF_INET,
			        &((struct sockaddr_in *)i->ifa_addr)->sin_addr,
			        ip, sizeof(ip));
			*d = (struct cb_tp_dev){ .port = 0 };
			snprintf(d->name, sizeof(d->name), "%s", i->ifa_name);
			snprintf(d->netdev, sizeof(d->netdev), "%s",
			         i->ifa_name);
			snprintf(d->link_layer, sizeof(d->link_layer), "%s",
			         i->ifa_flags & IFF_LOOPBACK ? "loopback"
			                                     : "Ethernet");
			snprintf(d->state, sizeof(d->state), "%s",
			         i->ifa_flags & IFF_RUNNING ? "up" : "down");
			snprintf(d->detail, sizeof(d->detail), "%s", ip);
		}
		(*n)++;
	}
	freeifaddrs(ifa);
	return CB_OK;
}

TPU_STATS(tcp)

CB_TP_DEFINE(tcp) = {
	TPU_TABLE_ABI,
	.name = "tcp",
	.description = "TCP sockets; several streams per peer for large "
	               "messages",
	.caps = CB_TP_CAP_HOST_MEM | CB_TP_CAP_RECONNECT,
	.query = NULL, /* sockets exist everywhere */
	.devices = tcp_devices,
	.open = tcp_open,
	.close = tcp_close,
	.address = tcp_address,
	.ep_create = tcp_ep_create,
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
	.idle_wait = tcp_idle_wait,
	.stats = tcp_stats,
};
