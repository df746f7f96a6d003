/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_sched.c - the schedule executor (coll/sched.c,
 * coll/sched_build.c) on what the ring allreduce added to it, between two
 * forked ranks over a real transport: `test_sched TRANSPORT` (tcp, shm).
 *
 *   pipelined  21 chunks (more than CB_SCHED_WINDOW segments), added
 *              interleaved the way the ring adds them (a step of every
 *              chunk of a group of 8, then the next step), sends trailing
 *              (cfg.trail_sends): rank 0 sends each chunk, rank 1 reduces
 *              it into its own and sends the sum back.  Both sums checked
 *              element by element, and the counters message by message.
 *   put        rank 1 offers its receive buffer, rank 0 imports it; rank 0
 *              puts 21 chunks (CB_SOP_PUT), rank 1 waits for each
 *              notification (CB_SOP_NOTIFY); the path is told late (the
 *              ready hook says CB_AGAIN a few times first, as the ring's
 *              does).  Twice, so the second call's notifications must
 *              carry its own number.  Where the transport cannot put
 *              (tcp), and again on shm with the path off: the puts go as
 *              sends and rank 1 receives them.  The data checked exactly.
 *   stall      (a job of its own, 2 s deadline) rank 1 puts or sends 2 of
 *              the 4 chunks rank 0 waits for, then stops: rank 0's run
 *              fails with CB_ERR_TIMEOUT and one line naming the peer
 *              (rank 1, its host), the step in the algorithm's words
 *              (cfg.where: "step 0, chunk 2") and the transport.
 *
 * Every wait has a deadline (10 s; 2 s for the stall).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll/reduce.h"
#include "coll/sched.h"
#include "core/comm.h"
#include "core/log.h"

#define CHUNK   256 /* elements (int32) */
#define NCHUNKS 21
#define COUNT   (CHUNK * (NCHUNKS - 1) + 3) /* the last chunk is short */
#define BYTES   ((size_t)COUNT * 4)

static const char *transport;
static int failures, comm_rank = -1;
static const char *cur_case = "setup";

#define FAIL(...)                                                              \
	do {                                                                   \
		fprintf(stderr, "rank %d: %s: ", comm_rank, cur_case);         \
		fprintf(stderr, __VA_ARGS__);                                  \
		fprintf(stderr, "\n");                                         \
		failures++;                                                    \
	} while (0)

static const int members[2] = { 0, 1 };

static size_t chunk_len(int k)
{
	return k < NCHUNKS - 1 ? CHUNK * 4 : (size_t)(COUNT - k * CHUNK) * 4;
}

static uint32_t val(int rank, size_t i, int call)
{
	return (uint32_t)(i * 2654435761u) ^ (uint32_t)(rank * 1000003 + call);
}

/* cfg.where: the algorithm's own words for a stalled step. */
static void where(char *buf, size_t cap, const struct cb_sop *op, int n)
{
	(void)n;
	snprintf(buf, cap, "step %u, chunk %u", op->round, op->seg);
}

static struct cb_sched *make_sched(struct cb_comm *c, int trail)
{
	struct cb_group g = { members, 2, c->rank };
	struct cb_sched_cfg sc = { .max_ops = 4 * NCHUNKS,
		                   .stage_bytes = CHUNK * 4,
		                   .stage_per_seg = 1,
		                   .algo = "schedtest",
		                   .where = where,
		                   .trail_sends = trail };
	struct cb_sched *s = NULL;

	if (cb_sched_create(c, &g, &sc, &s)) {
		FAIL("cb_sched_create: %s", cb_fail_msg());
		return NULL;
	}
	return s;
}

static void begin(struct cb_sched *s, const void *sbuf, void *rbuf)
{
	struct cb_coll_args a = { .coll = CB_COLL_ALLREDUCE,
		                  .dtype = CB_DT_INT32,
		                  .op = CB_OP_SUM,
		                  .sendbuf = sbuf,
		                  .recvbuf = rbuf,
		                  .count = COUNT };
	cb_sched_begin(s, &a);
}

static void check_stats(struct cb_sched *s, uint64_t sent, uint64_t recvd,
                        uint64_t bsent, uint64_t brecv)
{
	const struct cb_coll_stats *st = cb_sched_stats(s);

	if (st->msgs_sent != sent || st->msgs_recv != recvd ||
	    st->bytes_sent != bsent || st->bytes_recv != brecv)
		FAIL("counters: sent %llu (%llu B), received %llu (%llu B); "
		     "want %llu (%llu B), %llu (%llu B)",
		     (unsigned long long)st->msgs_sent,
		     (unsigned long long)st->bytes_sent,
		     (unsigned long long)st->msgs_recv,
		     (unsigned long long)st->bytes_recv,
		     (unsigned long long)sent, (unsigned long long)bsent,
		     (unsigned long long)recvd, (unsigned long long)brecv);
}

static void case_pipelined(struct cb_comm *c, uint32_t *sbuf, uint32_t *rbuf)
{
	struct cb_sched *s = make_sched(c, 1);
	int me = c->rank, peer = 1 - me;
	cb_status_t st;

	cur_case = "pipelined";
	if (!s)
		return;
	for (size_t i = 0; i < COUNT; i++) {
		sbuf[i] = val(me, i, 0);
		rbuf[i] = 0xdeadbeef;
	}
	begin(s, sbuf, rbuf);
	/* the ring's wire order: a step of every chunk of a group, then
	 * the next step, the groups no wider than the window */
	for (int g0 = 0; g0 < NCHUNKS; g0 += CB_SCHED_WINDOW)
		for (int step = 0; step < 2; step++)
			for (int k = g0;
			     k < NCHUNKS && k < g0 + CB_SCHED_WINDOW; k++) {
				size_t off = (size_t)k * CHUNK * 4,
				       len = chunk_len(k);
				uint32_t seg = (uint32_t)k;
				if (me == 0 && step == 0)
					cb_sched_send(s, seg, 0, peer,
					              CB_SB_SEND, off, len);
				else if (me == 0)
					cb_sched_recv(s, seg, 1, peer,
					              CB_SB_RECV, off, len);
				else if (step == 0)
					cb_sched_recv_reduce(
					        s, seg, 0, peer, CB_SB_RECV,
					        off, CB_SB_SEND, off, len);
				else
					cb_sched_send(s, seg, 1, peer,
					              CB_SB_RECV, off, len);
			}
	if ((st = cb_sched_run(s))) {
		FAIL("run: %s", cb_fail_msg());
	} else {
		size_t bad = COUNT;
		for (size_t i = 0; i < COUNT && bad == COUNT; i++)
			if (rbuf[i] != val(0, i, 0) + val(1, i, 0))
				bad = i;
		if (bad < COUNT)
			FAIL("element %zu is %#x, want %#x", bad, rbuf[bad],
			     val(0, bad, 0) + val(1, bad, 0));
		check_stats(s, NCHUNKS, NCHUNKS, BYTES, BYTES);
	}
	cb_sched_destroy(s);
}

/* The one-sided path as the ring's hook gives it: not known for the first
 * few passes, then on (with the imported region) or off. */
struct path {
	int on, again;
	struct cb_tp_rmem *rm;
};

static cb_status_t path_ready(struct cb_comm *c, void *arg,
                              struct cb_sched_put_path *out)
{
	struct path *p = arg;

	(void)c;
	if (p->again > 0) {
		p->again--;
		return CB_AGAIN;
	}
	out->on = p->on;
	out->rm = p->rm;
	out->roff = 0;
	return CB_OK;
}

/* Rank 1 offers @rbuf (the start of its registered region) to rank 0;
 * rank 0 imports it into @p->rm.  0 when done. */
static int offer(struct cb_comm *c, void *rbuf, struct path *p)
{
	uint8_t blob[8 + CB_TP_MEM_BLOB_MAX];
	size_t n = CB_TP_MEM_BLOB_MAX;
	uint64_t n64;
	struct cb_req r;

	if (c->rank == 1) {
		const struct cb_mem *m = cb_comm_mem_find(c, rbuf, BYTES);
		if (!m || cb_comm_mem_export(c, 0, m, blob + 8, &n)) {
			FAIL("export: %s", cb_fail_msg());
			return -1;
		}
		n64 = n;
		memcpy(blob, &n64, 8);
		if (cb_comm_isend(c, 0, blob, sizeof(blob), NULL, 9, &r) ||
		    cb_comm_wait(c, &r)) {
			FAIL("sending the offer: %s", cb_fail_msg());
			return -1;
		}
		return 0;
	}
	if (cb_comm_irecv(c, 1, blob, sizeof(blob), NULL, 9, &r) ||
	    cb_comm_wait(c, &r)) {
		FAIL("receiving the offer: %s", cb_fail_msg());
		return -1;
	}
	memcpy(&n64, blob, 8);
	if (cb_comm_mem_import(c, 1, blob + 8, n64, &p->rm)) {
		FAIL("import: %s", cb_fail_msg());
		return -1;
	}
	return 0;
}

/* Rank 0 puts chunks [0, @upto) to rank 1, which waits for all of them. */
static void put_sched(struct cb_sched *s, int me, int on, int upto)
{
	for (int k = 0; k < NCHUNKS; k++) {
		size_t off = (size_t)k * CHUNK * 4, len = chunk_len(k);
		uint32_t seg = (uint32_t)k;
		if (me == 0 && k < upto)
			cb_sched_put(s, seg, 0, 1, CB_SB_SEND, off, off, len);
		else if (me == 1 && on)
			cb_sched_notify(s, seg, 0, 0, len);
		else if (me == 1)
			cb_sched_recv(s, seg, 0, 0, CB_SB_RECV, off, len);
	}
}

static void case_put(struct cb_comm *c, uint32_t *sbuf, uint32_t *rbuf, int on)
{
	struct cb_sched *s = make_sched(c, 0);
	struct path p = { .on = on };
	int me = c->rank;
	cb_status_t st;

	cur_case = on ? "put" : "put as sends";
	if (!s)
		return;
	if (on && offer(c, rbuf, &p)) {
		cb_sched_destroy(s);
		return;
	}
	for (int call = 1; call <= 2 && !failures; call++) {
		for (size_t i = 0; i < COUNT; i++) {
			sbuf[i] = val(me, i, call);
			rbuf[i] = 0xdeadbeef;
		}
		/* rank 1's buffer is reset before rank 0 writes into it */
		if (cb_boot_barrier(c->boot)) {
			FAIL("barrier: %s", cb_fail_msg());
			break;
		}
		p.again = 3;
		begin(s, sbuf, rbuf);
		if (me == 0)
			cb_sched_put_path(s, path_ready, &p);
		put_sched(s, me, on, NCHUNKS);
		if ((st = cb_sched_run(s))) {
			FAIL("call %d: %s", call, cb_fail_msg());
			break;
		}
		if (me == 0) {
			if (p.again)
				FAIL("the path hook was not asked again");
			check_stats(s, NCHUNKS, 0, BYTES, 0);
			continue;
		}
		for (size_t i = 0; i < COUNT; i++)
			if (rbuf[i] != val(0, i, call)) {
				FAIL("call %d: element %zu is %#x, want %#x",
				     call, i, rbuf[i], val(0, i, call));
				break;
			}
		check_stats(s, 0, NCHUNKS, 0, BYTES);
	}
	/* rank 0's writes are done before rank 1 reuses its buffer */
	if (cb_boot_barrier(c->boot))
		FAIL("barrier: %s", cb_fail_msg());
	if (p.rm)
		cb_comm_mem_unimport(c, 1, p.rm);
	cb_sched_destroy(s);
}

static struct cb_comm *make_comm(int rank, int listen_fd, const char *port,
                                 double timeout_s, uint32_t **sbuf,
                                 uint32_t **rbuf)
{
	struct cb_comm *c = NULL;
	struct cb_comm_cfg cfg = { .rank = rank,
		                   .world = 2,
		                   .host = "127.0.0.1",
		                   .port = port,
		                   .listen_fd = listen_fd,
		                   .timeout_s = timeout_s,
		                   .transport = transport,
		                   .mem = "host",
		                   .reduce = cb_reduce };
	int peer = 1 - rank;

	comm_rank = rank;
	cb_log_set_rank(rank);
	if (cb_comm_create(&cfg, &c) || cb_comm_connect(c, &peer, 1, 10) ||
	    cb_comm_mem_alloc(c, BYTES, (void **)sbuf) ||
	    cb_comm_mem_alloc(c, BYTES, (void **)rbuf)) {
		fprintf(stderr, "rank %d: %s\n", rank, cb_fail_msg());
		return NULL;
	}
	return c;
}

static int good_rank(void *arg, int rank, int listen_fd, const char *port)
{
	uint32_t *sbuf, *rbuf;
	struct cb_comm *c = make_comm(rank, listen_fd, port, 10, &sbuf, &rbuf);

	(void)arg;
	if (!c)
		return 1;
	case_pipelined(c, sbuf, rbuf);
	if (cb_comm_can_put(c, 1 - rank))
		case_put(c, sbuf, rbuf, 1);
	else if (!strcmp(transport, "shm"))
		FAIL("shm offers no one-sided path");
	case_put(c, sbuf, rbuf, 0);
	if (rank == 0)
		printf("over %s: pipelined, %s, put as sends: %s\n", transport,
		       cb_comm_can_put(c, 1) ? "put (one-sided)"
		                             : "no one-sided path",
		       failures ? "FAILED" : "ok");
	cur_case = "end";
	if (cb_boot_barrier(c->boot))
		FAIL("barrier: %s", cb_fail_msg());
	cb_comm_mem_free(c, sbuf, BYTES);
	cb_comm_mem_free(c, rbuf, BYTES);
	cb_comm_destroy(c);
	return failures ? 1 : 0;
}

/* Rank 0 waits for 4 chunks; rank 1 delivers 2 and stops. */
static int stall_rank(void *arg, int rank, int listen_fd, const char *port)
{
	uint32_t *sbuf, *rbuf;
	struct cb_comm *c = make_comm(rank, listen_fd, port, 2, &sbuf, &rbuf);
	struct path p = { 0 };
	struct cb_sched *s;
	char want[128];

	(void)arg;
	cur_case = "stall";
	if (!c)
		return 3;
	/* here rank 0 is the one that offers its memory and waits */
	int waiter = 0, on = cb_comm_can_put(c, 1 - rank);
	if (on && rank == 0) {
		const struct cb_mem *m = cb_comm_mem_find(c, rbuf, BYTES);
		uint8_t blob[8 + CB_TP_MEM_BLOB_MAX];
		size_t n = CB_TP_MEM_BLOB_MAX;
		uint64_t n64;
		struct cb_req r;
		if (!m || cb_comm_mem_export(c, 1, m, blob + 8, &n))
			return 3;
		n64 = n;
		memcpy(blob, &n64, 8);
		if (cb_comm_isend(c, 1, blob, sizeof(blob), NULL, 9, &r) ||
		    cb_comm_wait(c, &r))
			return 3;
	} else if (on) {
		uint8_t blob[8 + CB_TP_MEM_BLOB_MAX];
		uint64_t n64;
		struct cb_req r;
		if (cb_comm_irecv(c, 0, blob, sizeof(blob), NULL, 9, &r) ||
		    cb_comm_wait(c, &r))
			return 3;
		memcpy(&n64, blob, 8);
		if (cb_comm_mem_import(c, 0, blob + 8, n64, &p.rm))
			return 3;
		p.on = 1;
	}
	if (!(s = make_sched(c, 0)))
		return 3;
	begin(s, sbuf, rbuf);
	if (rank != waiter)
		cb_sched_put_path(s, path_ready, &p);
	for (int k = 0; k < 4; k++) {
		size_t off = (size_t)k * CHUNK * 4, len = chunk_len(k);
		uint32_t seg = (uint32_t)k;
		if (rank != waiter && k < 2)
			cb_sched_put(s, seg, 0, waiter, CB_SB_SEND, off, off,
			             len);
		else if (rank == waiter && on)
			cb_sched_notify(s, seg, 0, 1, len);
		else if (rank == waiter)
			cb_sched_recv(s, seg, 0, 1, CB_SB_RECV, off, len);
	}
	cb_status_t st = cb_sched_run(s);
	if (rank != waiter) {
		/* delivered its two, then stops: the waiter's deadline ends
		 * the job */
		if (st)
			fprintf(stderr, "rank 1: stall: %s\n", cb_fail_msg());
		sleep(4);
		_exit(st ? 3 : 0);
	}
	const char *line = cb_fail_msg() ? cb_fail_msg() : "";
	snprintf(want, sizeof(want), "over %s", transport);
	int ok = st == CB_ERR_TIMEOUT &&
	         strstr(line, "rank 0 waits for rank 1 (host ") &&
	         strstr(line, "to send schedtest allreduce step 0, chunk 2") &&
	         strstr(line, want);
	printf("stall over %s (%s): %s: %s -> %s\n", transport,
	       on ? "put, notify" : "send, receive", cb_status_str(st), line,
	       ok ? "ok" : "WRONG");
	fflush(stdout);
	_exit(ok ? 0 : 1);
}

int main(int argc, char **argv)
{
	struct cb_tp_entry e;
	int fails = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: test_sched TRANSPORT\n");
		return 2;
	}
	transport = argv[1];
	cb_tp_find(transport, &e);
	if (!e.ops || !e.available) {
		printf("%s: %s: skipped\n", transport, e.why);
		return 77;
	}
	cb_log_level = CB_LOG_WARN;
	if (cb_launch_local(2, 30, good_rank, NULL)) {
		fprintf(stderr, "the %s schedule job failed\n", transport);
		fails++;
	}
	int code = cb_launch_local(2, 10, stall_rank, NULL);
	if (code != 0) {
		fprintf(stderr, "stall: failed the wrong way (exit %d)\n",
		        code);
		fails++;
	}
	printf("%s: %s\n", transport, fails ? "FAILED" : "ok");
	return fails ? 1 : 0;
}
