/* SPDX-License-Identifier: MIT */
/*
 * transports/tcp.h - the tcp transport's internals, shared by its set-up and
 * connections (tcp.c) and its data path (tcp_data.c).  Nothing here is seen
 * outside transports/.
 */
#ifndef CB_TRANSPORTS_TCP_H
#define CB_TRANSPORTS_TCP_H

#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <collbench/transport.h>

#include "transports/tputil.h"
#define TCP_MAGIC       0x43425450u /* "CBTP" */
#define TCP_MAX_STREAMS 8
#define TCP_QDEPTH      128 /* outstanding requests per stream and direction */
#define TCP_BOUNCE      (64u << 10)
#define TCP_PENDING     64 /* accepted sockets whose hello is not in yet */

#define TCP_HIDDEN __attribute__((visibility("hidden")))

/* What travels: the message header (on stream 0, before the payload). */
struct tcp_hdr {
	uint32_t magic, pad;
	uint64_t tag, bytes;
};

/* The first bytes of every stream, from the dialer.  @gen is the
 * endpoint's generation: 0 at first, one more each time the pair connects
 * again after a close (CB_TP_CAP_RECONNECT), so a stream of an attempt
 * given up is never filed under the next one. */
struct tcp_hello {
	uint32_t magic;
	int32_t rank, stream, streams;
	uint64_t job_id;
	uint32_t gen, pad;
};

struct tcp_addr {
	uint32_t magic;
	int32_t rank;
	struct sockaddr_storage sa;
	socklen_t len;
	char ifname[16]; /* the interface it listens on, for messages */
};

/* A FIFO of requests; head is the one in progress. */
struct tcp_fifo {
	struct cb_tp_req *q[TCP_QDEPTH];
	uint32_t head, tail;
};

enum { S_NONE, S_DIALING, S_HELLO, S_READY };

struct tcp_stream {
	int fd;
	int state;        /* S_*: a dialer's stream goes through all four */
	size_t hello_off; /* bytes of the hello sent */
	struct tcp_fifo sq, rq;
	size_t s_off, r_off; /* progress on the head piece */
	struct tcp_hdr s_hdr;
};

struct cb_tp_ep {
	struct cb_tp_ctx *ctx;
	int peer;
	int dialer;     /* we connect (the higher rank); else we accept */
	int nconnected; /* streams in S_READY */
	int started;    /* ep_connect() was called */
	int closed;     /* ep_close(): given up, no longer progressed */
	uint32_t gen;   /* connections made again after a close */
	cb_status_t err;
	struct tcp_addr to; /* the peer's listener */
	struct tcp_stream s[TCP_MAX_STREAMS];
	uint8_t *bounce; /* stream 0 read-ahead */
	size_t b_start, b_end;
};

/* An accepted socket waiting for its hello, or with the hello of the
 * endpoint's next generation, kept (@parked) until this rank connects
 * again too. */
struct tcp_pending {
	int fd;
	int parked;
	size_t got;
	struct tcp_hello hello;
	uint64_t since_ns;
	char from[64];
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
	struct tcp_pending pending[TCP_PENDING];
	int npending;
	struct cb_tp_stats stats;
};

/* Request private state. */
enum { R_PENDING, R_BUF, R_CAP, R_ERR, R_HDR_DONE };

/* Record @ep's first failure: "tcp: @what rank N (host H)", and @err's text
 * when not 0; returns the one recorded. */
static inline cb_status_t tcp_ep_fail(struct cb_tp_ep *ep, cb_status_t st,
                                      const char *what, int err)
{
	const struct cb_tp_host *h = ep->ctx->host;

	if (!ep->err)
		ep->err = h->fail(h, st, "tcp: %s rank %d (host %s)%s%s", what,
		                  ep->peer, tpu_host(ep->ctx->host, ep->peer),
		                  err ? ": " : "", err ? strerror(err) : "");
	return ep->err;
}

/* tcp_data.c: the data path, below tcp.c (set-up, connections and the ops
 * table): tcp_isend, _irecv, _test, _progress, _idle_wait */
TPU_OPS_MSG(TCP_HIDDEN, tcp);
TCP_HIDDEN TPU_OP(idle_wait) tcp_idle_wait;
/* Check a message header that arrived for @req; the fuzzable part. */
TCP_HIDDEN cb_status_t tcp_hdr_check(const struct tcp_hdr *h, uint64_t tag,
                                     uint64_t cap, const char **why);

#endif
