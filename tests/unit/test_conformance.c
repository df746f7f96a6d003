/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_conformance.c - what every transport must do, checked the
 * same way for each: `test_conformance TRANSPORT [NP [MEM]]` forks NP
 * local ranks (default 2) that talk through the communicator over
 * TRANSPORT, with their buffers in MEM: host (default) or gpu (device
 * memory; the test fills and checks it through copies to and from a host
 * shadow, and the transports that cannot move device memory are staged by
 * the core).
 *
 * In one job, rank 0 and rank 1 run, in order:
 *   order       200 messages of varied sizes (0 B .. 1 MiB), each with its
 *               own tag and contents, received in order and checked;
 *   zero        zero-byte messages both ways;
 *   max         the largest message (COLLBENCH_CONF_MAX_BYTES, default
 *               64 MiB) both ways, checked;
 *   many        512 sends posted before any is tested (CB_AGAIN retried),
 *               against 512 receives;
 *   backpressure  the sender posts 64 MiB in 1 MiB messages while the
 *               receiver sleeps 300 ms before posting: nothing is lost;
 *   reuse       one region registered once: sends from 100 offsets in it,
 *               re-registration returns the cached one, a sub-buffer is
 *               found, dereg and reg again cycle 50 times;
 *   reduce      irecv_reduce (where the transport has it) sums exactly;
 *   put         (CB_TP_CAP_PUT, and the buffer not staged) rank 1 exports
 *               a buffer, rank 0 imports it and puts 16 pieces with
 *               notifications; rank 1 checks the notifications' order and
 *               the data; a put past the end is refused; (CB_TP_CAP_MAP)
 *               the import maps it;
 *   reconnect   (CB_TP_CAP_RECONNECT) three times both connect anew, rank 0
 *               300 ms after rank 1 once: a message left unreceived on the
 *               connection before never reaches the next one, and messages
 *               both ways after are checked; without the bit it is refused
 *               with CB_ERR_UNSUPPORTED and the connection still works;
 *   lazy        with NP > 3: a ring connects 2 peers, not NP - 1.
 * Then, each in a job of its own, what must fail - and how:
 *   tag         a receive whose tag differs fails with CB_ERR_PROTO;
 *   truncate    a message larger than its receive fails with
 *               CB_ERR_TRUNCATE;
 *   dies        rank 1 exits in the middle of a message; rank 0 fails
 *               within the deadline, with a line naming rank 1.
 *
 * Every wait has a deadline (10 s; 3 s for what must fail).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/place.h"
#include "coll/reduce.h"
#include "core/comm.h"
#include "core/log.h"

static const char *transport;
static enum cb_mem_kind mem_kind = CB_MEM_HOST;
static int failures;

/* Device buffers: the one buffer of a rank (g_dev, g_bytes) has a host
 * shadow the test writes and reads; up() and down() copy between them. */
static struct cb_comm *g_c;
static uint8_t *g_dev, *g_shadow;
static size_t g_bytes;

static int in_dev(const uint8_t *p)
{
	return mem_kind == CB_MEM_GPU && g_dev && p >= g_dev &&
	       p < g_dev + g_bytes;
}

/* Where the test reads and writes the bytes at @p. */
static uint8_t *H(uint8_t *p)
{
	return in_dev(p) ? g_shadow + (p - g_dev) : p;
}

static void up(uint8_t *p, size_t n)
{
	if (in_dev(p) && n &&
	    cb_comm_copy(g_c, p, NULL, H(p), NULL, n, NULL) != CB_OK) {
		fprintf(stderr, "copy to the device failed: %s\n",
		        cb_fail_msg());
		exit(3);
	}
}

static void down(uint8_t *p, size_t n)
{
	if (in_dev(p) && n &&
	    cb_comm_copy(g_c, H(p), NULL, p, NULL, n, NULL) != CB_OK) {
		fprintf(stderr, "copy from the device failed: %s\n",
		        cb_fail_msg());
		exit(3);
	}
}

static void set(uint8_t *p, int v, size_t n)
{
	memset(H(p), v, n);
	up(p, n);
}
static const char *cur_case = "setup";

#define FAIL(...)                                                              \
	do {                                                                   \
		fprintf(stderr, "rank %d: %s: ", comm_rank, cur_case);         \
		fprintf(stderr, __VA_ARGS__);                                  \
		fprintf(stderr, "\n");                                         \
		failures++;                                                    \
	} while (0)

static int comm_rank = -1;

/* Wait for @req; the status it ended with (CB_ERR_TIMEOUT at @dl_s). */
static cb_status_t wait_req(struct cb_comm *c, struct cb_req *req, double dl_s)
{
	uint64_t dl = cb_now_ns() + (uint64_t)(dl_s * 1e9);
	cb_status_t st;

	while ((st = cb_comm_test(req)) == CB_AGAIN) {
		if ((st = cb_comm_progress(c)) < 0)
			return st;
		if (cb_now_ns() > dl)
			return CB_ERR_TIMEOUT;
	}
	return st;
}

/* Post, retrying while the transport says CB_AGAIN. */
#define POST(c, call)                                                          \
	({                                                                     \
		cb_status_t _st;                                               \
		uint64_t _dl = cb_now_ns() + 10000000000ull;                   \
		while ((_st = (call)) == CB_AGAIN && cb_now_ns() < _dl)        \
			cb_comm_progress(c);                                   \
		_st;                                                           \
	})

static void fill(uint8_t *p, size_t n, uint64_t seed)
{
	uint8_t *h = H(p);

	for (size_t i = 0; i < n; i++)
		h[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 12));
	up(p, n);
}

static int same(uint8_t *p, size_t n, uint64_t seed)
{
	const uint8_t *h = H(p);

	down(p, n);
	for (size_t i = 0; i < n; i++)
		if (h[i] != (uint8_t)(seed * 131 + i * 7 + (i >> 12)))
			return 0;
	return 1;
}

/* Send or receive one checked message between ranks 0 and 1. */
static int xfer(struct cb_comm *c, int sender, uint8_t *buf, size_t n,
                uint64_t tag)
{
	const struct cb_mem *m = cb_comm_mem_find(c, buf, n);
	struct cb_req r;
	cb_status_t st;

	if (c->rank == sender) {
		fill(buf, n, tag);
		st = POST(c, cb_comm_isend(c, 1 - c->rank, buf, n, m, tag, &r));
	} else {
		set(buf, 0, n);
		st = POST(c, cb_comm_irecv(c, 1 - c->rank, buf, n, m, tag, &r));
	}
	if (!st)
		st = wait_req(c, &r, 10);
	if (st) {
		FAIL("%zu bytes, tag %llu: %s (%s)", n, (unsigned long long)tag,
		     cb_status_str(st), cb_fail_msg() ? cb_fail_msg() : "");
		return -1;
	}
	if (c->rank != sender && (r.tp.bytes != n || !same(buf, n, tag))) {
		FAIL("%zu bytes, tag %llu: received %zu bytes, contents %s", n,
		     (unsigned long long)tag, r.tp.bytes,
		     same(buf, n, tag) ? "right" : "wrong");
		return -1;
	}
	return 0;
}

static void case_order(struct cb_comm *c, uint8_t *buf)
{
	static struct cb_req r[200];
	size_t off = 0, sz[200];

	cur_case = "order";
	/* All posted before any is waited for, from distinct pieces. */
	for (int i = 0; i < 200; i++) {
		sz[i] = i % 7 == 0 ? 0 : ((size_t)1 << (i % 21)) + (size_t)i;
		uint8_t *p = buf + off;
		const struct cb_mem *m = cb_comm_mem_find(c, p, sz[i]);
		cb_status_t st;
		if (c->rank == 0) {
			fill(p, sz[i], (uint64_t)i);
			st = POST(c, cb_comm_isend(c, 1, p, sz[i], m,
			                           1000 + (uint64_t)i, &r[i]));
		} else {
			set(p, 0xee, sz[i]);
			st = POST(c, cb_comm_irecv(c, 0, p, sz[i], m,
			                           1000 + (uint64_t)i, &r[i]));
		}
		if (st) {
			FAIL("post %d: %s", i, cb_status_str(st));
			return;
		}
		off += (sz[i] + 63) / 64 * 64;
	}
	off = 0;
	for (int i = 0; i < 200; i++) {
		cb_status_t st = wait_req(c, &r[i], 10);
		if (st) {
			FAIL("message %d: %s", i, cb_status_str(st));
			return;
		}
		if (c->rank == 1 && (r[i].tp.bytes != sz[i] ||
		                     !same(buf + off, sz[i], (uint64_t)i))) {
			FAIL("message %d (%zu bytes) arrived wrong", i, sz[i]);
			return;
		}
		off += (sz[i] + 63) / 64 * 64;
	}
}

static void case_many(struct cb_comm *c, uint8_t *buf)
{
	static struct cb_req r[512];
	const struct cb_mem *m = cb_comm_mem_find(c, buf, 512 * 64);

	cur_case = "many";
	for (int i = 0; i < 512; i++) {
		uint8_t *p = buf + (size_t)i * 64;
		cb_status_t st;
		if (c->rank == 0) {
			fill(p, 64, (uint64_t)i);
			st = POST(c, cb_comm_isend(c, 1, p, 64, m, 5000 + i,
			                           &r[i]));
		} else {
			st = POST(c, cb_comm_irecv(c, 0, p, 64, m, 5000 + i,
			                           &r[i]));
		}
		if (st) {
			FAIL("post %d: %s", i, cb_status_str(st));
			return;
		}
	}
	for (int i = 0; i < 512; i++) {
		cb_status_t st = wait_req(c, &r[i], 10);
		if (st || (c->rank == 1 &&
		           !same(buf + (size_t)i * 64, 64, (uint64_t)i))) {
			FAIL("message %d: %s", i, cb_status_str(st));
			return;
		}
	}
}

static void case_backpressure(struct cb_comm *c, uint8_t *buf)
{
	static struct cb_req r[64];
	const size_t piece = 1u << 20;

	cur_case = "backpressure";
	if (c->rank == 1)
		usleep(300000);
	for (int i = 0; i < 64; i++) {
		uint8_t *p = buf + (size_t)i * piece;
		const struct cb_mem *m = cb_comm_mem_find(c, p, piece);
		cb_status_t st;
		if (c->rank == 0) {
			fill(p, piece, (uint64_t)i + 77);
			st = POST(c, cb_comm_isend(c, 1, p, piece, m, 9000 + i,
			                           &r[i]));
		} else {
			set(p, 0, piece);
			st = POST(c, cb_comm_irecv(c, 0, p, piece, m, 9000 + i,
			                           &r[i]));
		}
		if (st) {
			FAIL("post %d: %s", i, cb_status_str(st));
			return;
		}
	}
	for (int i = 0; i < 64; i++) {
		cb_status_t st = wait_req(c, &r[i], 20);
		if (st || (c->rank == 1 && !same(buf + (size_t)i * piece, piece,
		                                 (uint64_t)i + 77))) {
			FAIL("message %d: %s", i, cb_status_str(st));
			return;
		}
	}
}

static void case_reuse(struct cb_comm *c)
{
	const struct cb_mem *m, *m2, *sub;
	uint8_t *own = aligned_alloc(4096, 1 << 20);
	int before = c->nmem;

	cur_case = "reuse";
	if (cb_comm_mem_reg(c, own, 1 << 20, CB_MEM_HOST, -1, &m)) {
		FAIL("register: %s", cb_fail_msg());
		free(own);
		return;
	}
	if (cb_comm_mem_reg(c, own, 1 << 20, CB_MEM_HOST, -1, &m2) || m2 != m)
		FAIL("registering the same buffer again made a new entry");
	sub = cb_comm_mem_find(c, own + 4096, 100);
	if (sub != m)
		FAIL("a piece of a registered buffer is not found in it");
	if (cb_comm_mem_find(c, own + (1 << 20) - 10, 100))
		FAIL("a range past the end is found in the region");
	for (int i = 0; i < 100; i++)
		if (xfer(c, i & 1, own + (size_t)i * 8192, 4000 + (size_t)i,
		         20000 + (uint64_t)i))
			break;
	cb_comm_mem_dereg(c, own);
	for (int i = 0; i < 50; i++) {
		if (cb_comm_mem_reg(c, own, 1 << 20, CB_MEM_HOST, -1, &m)) {
			FAIL("cycle %d: %s", i, cb_fail_msg());
			break;
		}
		cb_comm_mem_dereg(c, own);
	}
	if (c->nmem != before)
		FAIL("%d regions after deregistering, %d before", c->nmem,
		     before);
	free(own);
}

static void case_reduce(struct cb_comm *c, uint8_t *buf)
{
	const struct cb_tp_reduce red = { CB_DT_INT32, CB_OP_SUM, 4 };
	const size_t n = 1u << 18; /* int32s: past any eager limit */
	int32_t *a = (int32_t *)H(buf), *b = a + n, *d = b + n;
	int32_t *da = (int32_t *)buf, *db = da + n, *dd = db + n;
	const struct cb_mem *m = cb_comm_mem_find(c, buf, 3 * n * 4);
	struct cb_req r;
	cb_status_t st;

	cur_case = "reduce";
	if (!cb_comm_can_recv_reduce(c, 1 - c->rank))
		return; /* the core stages: covered by every collective */
	for (size_t i = 0; i < n; i++) {
		a[i] = (int32_t)(i * 3 + 1);
		b[i] = (int32_t)(100000 - i);
	}
	up(buf, 2 * n * 4);
	if (c->rank == 0)
		st = POST(c, cb_comm_isend(c, 1, da, n * 4, m, 31, &r));
	else
		st = POST(c, cb_comm_irecv_reduce(c, 0, dd, db, n * 4, m, &red,
		                                  31, &r));
	if (!st)
		st = wait_req(c, &r, 10);
	if (st) {
		FAIL("%s", cb_status_str(st));
		return;
	}
	down((uint8_t *)dd, n * 4);
	for (size_t i = 0; c->rank == 1 && i < n; i++)
		if (d[i] != (int32_t)(i * 3 + 1) + (int32_t)(100000 - i)) {
			FAIL("element %zu is %d", i, d[i]);
			return;
		}
}

static void case_put(struct cb_comm *c, uint8_t *buf)
{
	const struct cb_ep *e = &c->eps[1 - c->rank];
	const struct cb_tp_ops *ops = e->ops;
	struct cb_tp_ctx *ctx = c->tp[e->tpi].ctx;
	const struct cb_mem *m = cb_comm_mem_find(c, buf, 1 << 20);
	const struct cb_tp_mem *tm = cb_comm_tp_mem(e, m);
	uint8_t blob[CB_TP_MEM_BLOB_MAX];
	size_t bn = sizeof(blob);
	struct cb_req r;
	cb_status_t st;

	cur_case = "put";
	/* one-sided access to device memory needs a transport that moves it
	 * (the core stages only messages) */
	if (!(ops->caps & CB_TP_CAP_PUT) || (m && m->staged[e->tpi]))
		return;
	if (c->rank == 1) {
		set(buf, 0, 1 << 20);
		if ((st = ops->mem_export(ctx, tm, blob, &bn))) {
			FAIL("export: %s", cb_fail_msg());
			return;
		}
		uint64_t n64 = bn;
		memcpy(H(buf) + (1 << 20) - 256, &n64, 8);
		memcpy(H(buf) + (1 << 20) - 248, blob, bn);
		up(buf + (1 << 20) - 256, 256);
		st = POST(c, cb_comm_isend(c, 0, buf + (1 << 20) - 256, 256, m,
		                           40, &r));
		if (!st)
			st = wait_req(c, &r, 10);
		for (uint32_t want = 1; !st && want <= 16; want++) {
			uint32_t got = 0;
			uint64_t dl = cb_now_ns() + 10000000000ull;
			while ((st = ops->notify_poll(e->ep, &got)) ==
			               CB_AGAIN &&
			       cb_now_ns() < dl)
				cb_comm_progress(c);
			if (st == CB_OK && got != want)
				FAIL("notification %u where %u was due", got,
				     want);
			if (st == CB_OK &&
			    !same(buf + (want - 1) * 4096, 4096, want))
				FAIL("piece %u is wrong at its notification",
				     want);
		}
		if (st)
			FAIL("waiting for notifications: %s",
			     cb_status_str(st));
		return;
	}
	uint8_t *in = buf + (1 << 20) - 256;
	st = POST(c, cb_comm_irecv(c, 1, in, 256, m, 40, &r));
	if (!st)
		st = wait_req(c, &r, 10);
	if (st) {
		FAIL("receiving the handle: %s", cb_status_str(st));
		return;
	}
	struct cb_tp_rmem *rm = NULL;
	void *local = NULL;
	uint64_t n64;
	down(in, 256);
	memcpy(&n64, H(in), 8);
	if ((st = ops->mem_import(e->ep, H(in) + 8, n64, &rm, &local))) {
		FAIL("import: %s", cb_fail_msg());
		return;
	}
	if ((ops->caps & CB_TP_CAP_MAP) && !local)
		FAIL("a transport that maps gave no address");
	for (uint32_t i = 1; i <= 16; i++) {
		uint8_t *p = buf + 65536 + (i - 1) * 4096;
		fill(p, 4096, i);
		st = POST(c, ops->put(e->ep, p, 4096, tm, rm, (i - 1) * 4096, i,
		                      &r.tp));
		r.ep = e;
		if (!st)
			st = wait_req(c, &r, 10);
		if (st) {
			FAIL("put %u: %s", i, cb_status_str(st));
			break;
		}
	}
	cb_fail_clear();
	st = ops->put(e->ep, buf, 4096, tm, rm, (uint64_t)1 << 40, 0, &r.tp);
	if (st == CB_OK)
		FAIL("a put past the end of the exported buffer was taken");
	cb_fail_clear();
	ops->mem_unimport(e->ep, rm);
}

/*
 * A transport that needs registration (verbs) moves large messages between
 * registered buffers without copying them: every case above used registered
 * memory, so nothing went through bounce buffers (@s, before this case).
 * Then a large message from and to unregistered memory must: the counter
 * can tell the two apart.
 */
static void case_zcopy(struct cb_comm *c, const struct cb_tp_stats *s)
{
	const struct cb_tp_ops *ops = c->eps[1 - c->rank].ops;
	struct cb_tp_stats after;
	const size_t n = 100000;
	uint8_t *own = malloc(n);
	struct cb_req r;
	cb_status_t st;

	cur_case = "zcopy";
	if (!(ops->caps & CB_TP_CAP_NEEDS_REG)) {
		free(own);
		return;
	}
	if (s->bounce_bytes != 0 || s->zcopy_bytes == 0)
		FAIL("registered buffers: %llu bytes through bounce buffers, "
		     "%llu zero-copy",
		     (unsigned long long)s->bounce_bytes,
		     (unsigned long long)s->zcopy_bytes);
	fill(own, n, 99);
	if (c->rank == 0)
		st = POST(c, cb_comm_isend(c, 1, own, n, NULL, 77, &r));
	else
		st = POST(c, cb_comm_irecv(c, 0, own, n, NULL, 77, &r));
	if (!st)
		st = wait_req(c, &r, 10);
	cb_comm_tp_stats(c, &after);
	if (st)
		FAIL("unregistered: %s", cb_status_str(st));
	else if (after.bounce_bytes - s->bounce_bytes != n)
		FAIL("a %zu-byte message from unregistered memory: %llu bytes "
		     "counted through bounce buffers",
		     n,
		     (unsigned long long)(after.bounce_bytes -
		                          s->bounce_bytes));
	else if (c->rank == 1 && !same(own, n, 99))
		FAIL("unregistered: wrong contents");
	free(own);
}

static void case_reconnect(struct cb_comm *c, uint8_t *buf)
{
	int peer = 1 - c->rank;
	const struct cb_mem *m = cb_comm_mem_find(c, buf, 64);
	cb_status_t st;

	cur_case = "reconnect";
	if (!(c->eps[peer].ops->caps & CB_TP_CAP_RECONNECT)) {
		st = cb_comm_reconnect(c, peer, 10);
		if (st != CB_ERR_UNSUPPORTED || !cb_comm_connected(c, peer))
			FAIL("without CB_TP_CAP_RECONNECT: %s, %s",
			     cb_status_str(st),
			     cb_comm_connected(c, peer) ? "connected"
			                                : "not connected");
		cb_fail_clear();
		xfer(c, 0, buf, 100, 90);
		return;
	}
	for (int g = 1; g <= 3; g++) {
		if (c->rank == 0) {
			/* left behind: rank 1 never posts its receive */
			struct cb_req r;
			fill(buf, 64, 1000 + g);
			st = POST(c, cb_comm_isend(c, peer, buf, 64, m,
			                           1000 + g, &r));
			if (!st)
				st = wait_req(c, &r, 2);
			if (st)
				FAIL("the message left behind: %s",
				     cb_status_str(st));
			if (g == 2)
				usleep(300000);
		}
		if ((st = cb_comm_reconnect(c, peer, 10))) {
			FAIL("connecting again (%d): %s (%s)", g,
			     cb_status_str(st), cb_fail_msg());
			return;
		}
		if (c->eps[peer].gen != g)
			FAIL("generation %d after connecting again %d times",
			     c->eps[peer].gen, g);
		if (xfer(c, 0, buf, 4096, 2000 + g) ||
		    xfer(c, 1, buf, 1u << 20, 3000 + g))
			return;
	}
}

static void case_lazy(struct cb_comm *c)
{
	int ring[2] = { (c->rank + 1) % c->world,
		        (c->rank + c->world - 1) % c->world };

	cur_case = "lazy";
	if (cb_comm_connect(c, ring, 2, 10)) {
		FAIL("ring connect: %s", cb_fail_msg());
		return;
	}
	int n = 0;
	for (int p = 0; p < c->world; p++)
		n += p != c->rank && cb_comm_connected(c, p);
	if (n != 2)
		FAIL("%d peers connected after a ring on %d ranks, want 2", n,
		     c->world);
}

static struct cb_comm *make_comm(int rank, int np, int listen_fd,
                                 const char *port, double timeout_s)
{
	struct cb_comm *c = NULL;
	struct cb_comm_cfg cfg = { .rank = rank,
		                   .world = np,
		                   .host = "127.0.0.1",
		                   .port = port,
		                   .listen_fd = listen_fd,
		                   .timeout_s = timeout_s,
		                   .transport = transport,
		                   .mem = mem_kind == CB_MEM_GPU ? "gpu"
		                                                 : "host",
		                   .reduce = cb_reduce,
		                   .place = &cb_place_topo };

	comm_rank = rank;
	cb_log_set_rank(rank);
	if (cb_comm_create(&cfg, &c)) {
		fprintf(stderr, "rank %d: %s\n", rank, cb_fail_msg());
		return NULL;
	}
	return c;
}

static int good_rank(void *arg, int rank, int listen_fd, const char *port)
{
	int np = *(int *)arg;
	struct cb_comm *c = make_comm(rank, np, listen_fd, port, 10);
	size_t maxb = 64u << 20;
	const char *e = getenv("COLLBENCH_CONF_MAX_BYTES");
	uint8_t *buf = NULL;

	if (!c)
		return 1;
	if (e)
		maxb = strtoull(e, NULL, 10);
	if (maxb < (64u << 20))
		maxb = 64u << 20; /* backpressure moves 64 MiB */
	if (rank < 2) {
		int peer = 1 - rank;
		if (cb_comm_connect(c, &peer, 1, 10) ||
		    cb_comm_mem_alloc_kind(c, maxb, mem_kind, (void **)&buf)) {
			fprintf(stderr, "rank %d: %s\n", rank, cb_fail_msg());
			cb_comm_destroy(c);
			return 1;
		}
		g_c = c;
		g_dev = buf;
		g_bytes = maxb;
		if (mem_kind == CB_MEM_GPU && !(g_shadow = malloc(maxb))) {
			fprintf(stderr, "rank %d: out of memory\n", rank);
			return 1;
		}
		case_order(c, buf);
		cur_case = "zero";
		xfer(c, 0, buf, 0, 1);
		xfer(c, 1, buf, 0, 2);
		cur_case = "max";
		xfer(c, 0, buf, maxb, 3);
		xfer(c, 1, buf, maxb, 4);
		case_many(c, buf);
		case_backpressure(c, buf);
		case_reuse(c);
		case_reduce(c, buf);
		case_put(c, buf);
		case_reconnect(c, buf);
		struct cb_tp_stats s;
		cb_comm_tp_stats(c, &s);
		case_zcopy(c, &s);
		printf("rank %d over %s (%s memory): %llu connects, eager %llu "
		       "B, zero-copy %llu B, bounce %llu B, put %llu B\n",
		       rank, transport,
		       mem_kind == CB_MEM_GPU ? "device" : "host",
		       (unsigned long long)s.connects,
		       (unsigned long long)s.eager_bytes,
		       (unsigned long long)s.zcopy_bytes,
		       (unsigned long long)s.bounce_bytes,
		       (unsigned long long)s.put_bytes);
	}
	cur_case = "barrier";
	if (cb_boot_barrier(c->boot))
		FAIL("%s", cb_fail_msg());
	if (np > 3)
		case_lazy(c);
	if (cb_boot_barrier(c->boot))
		FAIL("%s", cb_fail_msg());
	if (buf)
		cb_comm_mem_free(c, buf, maxb);
	cb_comm_destroy(c);
	return failures ? 1 : 0;
}

/* What must fail.  Rank 0 reports how; rank 1 misbehaves. */
enum bad { BAD_TAG, BAD_TRUNCATE, BAD_DIES };
static enum bad bad_case;
static const char *bad_names[] = { "tag", "truncate", "dies" };

static int bad_rank(void *arg, int rank, int listen_fd, const char *port)
{
	/* 10 s to start (a host's discovery is one rank's, and the others
	 * wait for it); what must fail has 3 s of its own below */
	struct cb_comm *c = make_comm(rank, 2, listen_fd, port, 10);
	uint8_t *buf;
	struct cb_req r;
	cb_status_t st, want;
	int peer = 1 - rank;

	(void)arg;
	cur_case = bad_names[bad_case];
	/* both connected before anyone misbehaves: a rank that dies while
	 * the other still connects fails the connection, not the case */
	if (!c || cb_comm_connect(c, &peer, 1, 10) ||
	    cb_comm_mem_alloc_kind(c, 1 << 20, mem_kind, (void **)&buf) ||
	    cb_boot_barrier(c->boot))
		return 3;
	const struct cb_mem *m = cb_comm_mem_find(c, buf, 1 << 20);
	if (rank == 1) {
		size_t n = bad_case == BAD_TRUNCATE ? 300000 : 200000;
		st = POST(c, cb_comm_isend(c, 0, buf, n, m,
		                           bad_case == BAD_TAG ? 8 : 7, &r));
		if (bad_case == BAD_DIES) {
			/* leave before the message can be taken */
			_exit(0);
		}
		wait_req(c, &r, 3);
		usleep(500000);
		_exit(0);
	}
	usleep(bad_case == BAD_DIES ? 300000 : 0);
	st = POST(c, cb_comm_irecv(c, 1, buf, 250000, m, 7, &r));
	if (!st)
		st = wait_req(c, &r, 3);
	want = bad_case == BAD_TAG        ? CB_ERR_PROTO
	       : bad_case == BAD_TRUNCATE ? CB_ERR_TRUNCATE
	                                  : CB_ERR_PEER;
	const char *line = cb_fail_msg() ? cb_fail_msg() : "";
	/* A death may be seen by the transport or by the store first;
	 * either way it is an error naming rank 1, before the deadline. */
	int ok = (bad_case == BAD_DIES ? st < 0 && st != CB_ERR_TIMEOUT
	                               : st == want) &&
	         strstr(line, "rank 1");
	printf("%s over %s: %s%s%s -> %s\n", cur_case, transport,
	       cb_status_str(st), *line ? ": " : "", line, ok ? "ok" : "WRONG");
	fflush(stdout);
	_exit(ok ? 0 : 1);
}

int main(int argc, char **argv)
{
	int np = argc > 2 ? atoi(argv[2]) : 2;
	int fails = 0;

	if (argc < 2 || np < 2 ||
	    (argc > 3 && strcmp(argv[3], "host") && strcmp(argv[3], "gpu"))) {
		fprintf(stderr, "usage: test_conformance TRANSPORT [NP >= 2 "
		                "[host|gpu]]\n");
		return 2;
	}
	transport = argv[1];
	if (argc > 3 && !strcmp(argv[3], "gpu"))
		mem_kind = CB_MEM_GPU;
	struct cb_tp_entry e;
	cb_tp_find(transport, &e);
	if (!e.ops || !e.available) {
		/* meson, a build with the verbs module: never a skip */
		const char *req = getenv("COLLBENCH_EMU_REQUIRED");
		if (req && !strcmp(req, "1") && !strcmp(transport, "verbs")) {
			printf("%s: %s: FAILED (this build has the verbs "
			       "module; COLLBENCH_EMU_REQUIRED=1)\n",
			       transport, e.why);
			return 1;
		}
		printf("%s: %s: skipped\n", transport, e.why);
		return 77;
	}
	if (mem_kind == CB_MEM_GPU) {
		/* device memory comes from the gpu module's engine */
		cb_tp_find("gpu", &e);
		if (!e.ops || !e.available) {
			printf("device memory: gpu: %s: skipped\n", e.why);
			return 77;
		}
	}
	cb_log_level = CB_LOG_WARN;
	if (cb_launch_local(np, 30, good_rank, &np)) {
		fprintf(stderr, "the %s conformance job failed\n", transport);
		fails++;
	}
	for (int b = 0; b < 3; b++) {
		bad_case = (enum bad)b;
		/* rank 0's exit status says whether it failed as it must */
		int code = cb_launch_local(2, 10, bad_rank, NULL);
		if (code != 0) {
			fprintf(stderr, "%s: failed the wrong way (exit %d)\n",
			        bad_names[b], code);
			fails++;
		}
	}
	printf("conformance %s (%s memory): %s\n", transport,
	       mem_kind == CB_MEM_GPU ? "device" : "host",
	       fails ? "FAILED" : "passed");
	return fails ? 1 : 0;
}
