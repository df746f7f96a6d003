/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_tcp.c - the tcp transport as rank 0 of a job sees it,
 * with the fuzzer as rank 1: the peer's address blob (ep_connect), the
 * hellos on the streams it dials to rank 0's listener (its accept path),
 * and every byte on those streams (message headers, payloads, pieces of
 * split messages), read by receives of several sizes.  Real loopback
 * sockets, through the transport's own ops table and a host table as the
 * core lends it.
 *
 * Input: a flags byte - bits 0-1: streams per peer (1..3), bit 2: split
 * messages from 4 KiB (else 1 MiB), bit 3: the address blob comes from the
 * input, bit 4: so do the hellos, bits 5-7: receives to post (0..7).  Then,
 * when the flags say so, the blob (a length byte, the bytes) and one hello
 * per stream (the same); one byte per receive (its size, from a table);
 * then records of one byte (the stream), two bytes of length
 * (little-endian) and the bytes rank 0 reads on that stream.  Every stream
 * closes after its last record.
 *
 * Beyond not crashing: a failure is recorded with a line; and once every
 * stream has closed, every receive ends - done or failed - within a bounded
 * number of progress calls (nothing waits for bytes that cannot come).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <collbench/transport.h>

#include "core/comm.h"
#include "core/log.h"
#include "fuzz.h"
#include "transports/tcp.h"

#define MAX_STREAMS 3
#define MAX_RECVS   7
#define JOB_ID      0x1234567890abcdefull

static char streams_opt[4], split_opt[16];

static const char *option(const struct cb_tp_host *self, const char *key)
{
	(void)self;
	if (!strcmp(key, "tcp-streams"))
		return streams_opt;
	if (!strcmp(key, "tcp-split-bytes"))
		return split_opt;
	return NULL;
}

static void quiet_log(const struct cb_tp_host *self, int level, const char *fmt,
                      ...)
{
	(void)self;
	(void)level;
	(void)fmt;
}

static cb_status_t fail(const struct cb_tp_host *self, cb_status_t st,
                        const char *fmt, ...)
{
	char line[512];
	va_list ap;

	(void)self;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	return cb_fail(st, "%s", line);
}

static uint64_t now_ns(const struct cb_tp_host *self)
{
	(void)self;
	return cb_now_ns();
}

static const int host_of_rank[2] = { 0, 0 };
static const char *const hosts[1] = { "fuzzhost" };

static const struct cb_tp_host host = {
	.size = sizeof(struct cb_tp_host),
	.rank = 0,
	.world = 2,
	.host_of_rank = host_of_rank,
	.hosts = hosts,
	.job_id = JOB_ID,
	.local_ranks = 2,
	.local_ip = "127.0.0.1",
	.timeout_s = 5,
	.gpu = -1,
	.option = option,
	.log = quiet_log,
	.fail = fail,
	.now_ns = now_ns,
};

/* Receive sizes: empty, a header's worth, around the bounce buffer, and
 * past the split size. */
static const size_t caps[8] = {
	0, 1, 24, 4096, 65536, 65537, (1u << 20) + 7, 3u << 20,
};

struct in {
	const uint8_t *p;
	size_t left;
};

static int take(struct in *in, void *out, size_t n)
{
	if (in->left < n)
		return -1;
	memcpy(out, in->p, n);
	in->p += n;
	in->left -= n;
	return 0;
}

struct out {
	int fd;
	uint8_t *buf;
	size_t bytes, off;
	int shut;
};

/* Write what the socket takes now; close the stream once all is out. */
static void pump(struct out *o)
{
	while (o->fd >= 0 && o->off < o->bytes) {
		ssize_t n = send(o->fd, o->buf + o->off, o->bytes - o->off,
		                 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n <= 0)
			break;
		o->off += (size_t)n;
	}
	if (o->fd >= 0 && !o->shut && o->off == o->bytes) {
		shutdown(o->fd, SHUT_WR);
		o->shut = 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	struct cb_tp_entry e;
	struct cb_tp_ctx *ctx = NULL;
	struct cb_tp_ep *ep = NULL;
	struct tcp_addr peer;
	struct out out[MAX_STREAMS];
	struct cb_tp_req req[MAX_RECVS];
	uint8_t *rbuf[MAX_RECVS] = { 0 };
	int done[MAX_RECVS] = { 0 };
	uint8_t flags, len8;
	size_t blob_bytes = sizeof(peer);
	cb_status_t st;

	if (take(&in, &flags, 1))
		return 0;
	for (int s = 0; s < MAX_STREAMS; s++)
		out[s] = (struct out){ .fd = -1 };
	int nstreams = 1 + (flags & 3) % MAX_STREAMS;
	int nrecv = flags >> 5;
	snprintf(streams_opt, sizeof(streams_opt), "%d", nstreams);
	snprintf(split_opt, sizeof(split_opt), "%u",
	         flags & 4 ? 4096u : 1u << 20);
	cb_tp_find("tcp", &e);
	FUZZ_CHECK(e.ops != NULL);
	cb_fail_clear();
	if (e.ops->open(&host, &ctx))
		return 0; /* no loopback to listen on: nothing to fuzz */

	/* Rank 1's address: its own listener (never dialled: the higher
	 * rank dials), or bytes from the input. */
	struct tcp_addr mine;
	size_t mb = sizeof(mine);
	FUZZ_CHECK(e.ops->address(ctx, &mine, &mb) == CB_OK);
	peer = mine;
	peer.rank = 1;
	if (flags & 8) {
		memset(&peer, 0, sizeof(peer));
		if (take(&in, &len8, 1) || len8 > in.left)
			goto out;
		blob_bytes = len8;
		memcpy(&peer, in.p, len8 < sizeof(peer) ? len8 : sizeof(peer));
		in.p += len8;
		in.left -= len8;
	}
	size_t eb = 0;
	FUZZ_CHECK(e.ops->ep_create(ctx, 1, &ep, NULL, &eb) == CB_OK);
	if ((st = e.ops->ep_connect(ep, &peer, blob_bytes, NULL, 0))) {
		FUZZ_CHECK(st < 0 && cb_fail_msg() != NULL);
		goto out;
	}

	/* Rank 1 dials every stream and says hello. */
	for (int s = 0; s < nstreams; s++) {
		struct tcp_hello h = { .magic = TCP_MAGIC,
			               .rank = 1,
			               .stream = s,
			               .streams = nstreams,
			               .job_id = JOB_ID };
		uint8_t raw[sizeof(h)];
		size_t hb = sizeof(h);
		memcpy(raw, &h, sizeof(h));
		if (flags & 16) {
			if (take(&in, &len8, 1))
				goto out;
			hb = len8 % (sizeof(h) + 1);
			if (take(&in, raw, hb))
				goto out;
		}
		out[s].fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		FUZZ_CHECK(out[s].fd >= 0);
		if (connect(out[s].fd, (struct sockaddr *)&mine.sa, mine.len)) {
			close(out[s].fd);
			out[s].fd = -1;
			goto out;
		}
		FUZZ_CHECK(send(out[s].fd, raw, hb, MSG_NOSIGNAL) ==
		           (ssize_t)hb);
	}
	/* On loopback a connect is accepted, and a hello delivered, by the
	 * time the call returns: a few passes are enough. */
	int connected = 0;
	for (int i = 0; i < 20 && !connected; i++) {
		st = e.ops->ep_test(ep);
		if (st < 0) {
			FUZZ_CHECK(cb_fail_msg() != NULL);
			goto out;
		}
		connected = st == CB_OK;
	}
	if (!connected)
		goto out; /* a hello that was not one: dropped, as it should */

	/* What rank 0 posts, and what rank 1 sends on each stream. */
	for (int i = 0; i < nrecv; i++) {
		uint8_t c;
		if (take(&in, &c, 1)) {
			nrecv = i;
			break;
		}
		size_t cap = caps[c & 7];
		struct cb_tp_mem mem;
		rbuf[i] = malloc(cap ? cap : 1);
		FUZZ_CHECK(rbuf[i] != NULL);
		mem = (struct cb_tp_mem){ .base = rbuf[i],
			                  .bytes = cap,
			                  .kind = CB_MEM_HOST,
			                  .device = -1 };
		st = e.ops->irecv(ep, rbuf[i], cap, &mem, (uint64_t)(c >> 3),
		                  &req[i]);
		if (st) {
			FUZZ_CHECK(st == CB_AGAIN || cb_fail_msg() != NULL);
			nrecv = i;
			free(rbuf[i]);
			rbuf[i] = NULL;
			break;
		}
	}
	for (;;) {
		uint8_t s;
		uint16_t n;
		if (take(&in, &s, 1) || take(&in, &n, 2))
			break;
		struct out *o = &out[s % nstreams];
		size_t len = n < in.left ? n : in.left;
		o->buf = realloc(o->buf, o->bytes + len + 1);
		FUZZ_CHECK(o->buf != NULL);
		memcpy(o->buf + o->bytes, in.p, len);
		o->bytes += len;
		in.p += len;
		in.left -= len;
	}

	/* Progress until every receive ended.  Once every stream is closed
	 * and its bytes delivered, that must take a bounded number of
	 * calls. */
	int idle = 0;
	for (int iter = 0; iter < 1000000; iter++) {
		int all_out = 1, pending = 0;
		for (int s = 0; s < nstreams; s++) {
			pump(&out[s]);
			all_out &= out[s].shut;
		}
		st = e.ops->progress(ctx);
		if (st < 0) {
			FUZZ_CHECK(cb_fail_msg() != NULL);
			break;
		}
		for (int i = 0; i < nrecv; i++) {
			if (done[i])
				continue;
			cb_status_t t = e.ops->test(ep, &req[i]);
			if (t == CB_AGAIN) {
				pending = 1;
				continue;
			}
			done[i] = 1;
			FUZZ_CHECK(t == CB_OK || cb_fail_msg() != NULL);
			if (t == CB_OK)
				FUZZ_CHECK(req[i].bytes <= caps[7]);
		}
		if (!pending)
			break;
		/* everything sent is in rank 0's sockets by now (on loopback,
		 * when send returns); 50 ms more for a busy machine */
		idle = all_out && st == CB_AGAIN ? idle + 1 : 0;
		if (idle > 1000)
			usleep(1000);
		FUZZ_CHECK(idle < 1050);
	}
out:
	for (int s = 0; s < MAX_STREAMS; s++) {
		if (out[s].fd >= 0)
			close(out[s].fd);
		free(out[s].buf);
	}
	if (ctx)
		e.ops->close(ctx);
	for (int i = 0; i < MAX_RECVS; i++)
		free(rbuf[i]);
	return 0;
}
