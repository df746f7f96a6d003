/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_boot.c - the rendezvous store with real sockets on
 * loopback: ranks are threads of this process (each its own client and
 * connection), and a raw socket plays a rank that misbehaves.
 *
 *  - every gather's answer is built once and its keys are forgotten once
 *    every waiter has it (allgather, gather to rank 0, barrier);
 *  - a gather to rank 0 at its deadline names the rank that did not send
 *    in time, and forgets its part when it comes;
 *  - a client that stops reading does not hold up the others (the store
 *    queues its replies instead of waiting on its socket);
 *  - the job token: a client without it, or with another, is refused with
 *    one line; with it, admitted.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "core/boot_wire.h"
#include "core/bootstrap.h"
#include "core/log.h"
#include "core/sock.h"

#define GATHERS 40

struct rank {
	int rank, world, listen_fd;
	char port[16];
	const char *token;
	int late; /* this rank sends its part of the partial gather late */
	double gather_s; /* time of its allgathers */
	int errors, bad_values;
	unsigned char present[8];
	size_t keys_after;
	uint64_t replies;
	int have_stats;
};

static void *rank_main(void *arg)
{
	struct rank *r = arg;
	struct cb_boot *b;
	struct cb_boot_cfg cfg = { .rank = r->rank,
		                   .world = r->world,
		                   .host = "127.0.0.1",
		                   .port = r->port,
		                   .listen_fd = r->rank ? -1 : r->listen_fd,
		                   .timeout_s = 10,
		                   .hostname = "testhost",
		                   .token = r->token };
	int32_t mine[2], all[2 * 8];

	if (cb_boot_open(&cfg, &b)) {
		r->errors++;
		return NULL;
	}
	uint64_t t0 = cb_now_ns();
	for (int k = 0; k < GATHERS; k++) {
		mine[0] = r->rank;
		mine[1] = k;
		if (cb_boot_allgather(b, "test", mine, sizeof(mine), all)) {
			r->errors++;
			break;
		}
		for (int q = 0; q < r->world; q++)
			r->bad_values += all[2 * q] != q || all[2 * q + 1] != k;
		if (cb_boot_gather_root(b, "test", mine, sizeof(mine), all, 0,
		                        NULL)) {
			r->errors++;
			break;
		}
		for (int q = 0; r->rank == 0 && q < r->world; q++)
			r->bad_values += all[2 * q] != q || all[2 * q + 1] != k;
	}
	r->gather_s = (double)(cb_now_ns() - t0) / 1e9;
	/* Parts of their own sizes (rank q sends q + 1 bytes of value q, rank
	 * 1 none): rank 0 gets them packed, each one's size beside. */
	{
		unsigned char part[8];
		uint32_t lens[8];
		void *got = NULL;
		size_t nb = r->rank == 1 ? 0 : (size_t)r->rank + 1;
		memset(part, r->rank, sizeof(part));
		if (cb_boot_gather_root_var(b, "var", part, nb, 8, &got, lens))
			r->errors++;
		else if (r->rank == 0) {
			const unsigned char *p = got;
			for (int q = 0; q < r->world; q++) {
				uint32_t want = q == 1 ? 0 : (uint32_t)q + 1;
				r->bad_values += lens[q] != want;
				for (uint32_t i = 0;
				     i < want && lens[q] == want; i++)
					r->bad_values += p[i] != q;
				p += lens[q];
			}
			free(got);
		}
		/* a part over its bound: refused here, nothing sent */
		if (r->rank == 0 &&
		    cb_boot_gather_root_var(b, "big", part, 8, 4, &got, lens) !=
		            CB_ERR_INVALID)
			r->bad_values++;
	}
	if (cb_boot_barrier(b))
		r->errors++;
	/* The last rank is late to a gather to rank 0 with a deadline. */
	if (r->late)
		usleep(800000);
	if (cb_boot_gather_root(b, "partial", mine, sizeof(mine), all, 0.3,
	                        r->present))
		r->errors++;
	if (cb_boot_barrier(b))
		r->errors++;
	if (r->rank == 0) {
		/* The partial gather's keys are gone too: those that came in
		 * time with the answer, the late one when it came. */
		r->have_stats = cb_boot_store_stats(b, &r->keys_after,
		                                    &r->replies) == CB_OK;
	}
	cb_boot_close(b);
	return NULL;
}

static int listen_any(char *port, size_t bytes)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
		                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	int fd;

	if (cb_sock_listen((struct sockaddr *)&sa, sl, &fd) ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl))
		return -1;
	snprintf(port, bytes, "%u", ntohs(sa.sin_port));
	return fd;
}

static void start(struct rank *r, int world, const char *tok)
{
	char port[16];
	int fd = listen_any(port, sizeof(port));

	for (int i = 0; i < world; i++) {
		r[i] = (struct rank){
			.rank = i, .world = world, .listen_fd = fd, .token = tok
		};
		snprintf(r[i].port, sizeof(r[i].port), "%s", port);
	}
}

/* Every gather answered once and forgotten; the partial gather names the
 * rank that did not send. */
static void test_gathers(void)
{
	enum { W = 5 };
	struct rank r[W];
	pthread_t th[W];

	start(r, W, "s3cret");
	r[W - 1].late = 1;
	for (int i = 0; i < W; i++)
		pthread_create(&th[i], NULL, rank_main, &r[i]);
	for (int i = 0; i < W; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < W; i++) {
		CHECK(r[i].errors == 0);
		CHECK(r[i].bad_values == 0);
	}
	CHECK(r[0].have_stats);
	/* As many as before the gather of parts of their own sizes, and one
	 * for it. */
	printf("gathers: %llu answers built for %d gathers, %zu keys left\n",
	       (unsigned long long)r[0].replies, 2 * GATHERS + 3,
	       r[0].keys_after);
	CHECK(r[0].replies == 2 * GATHERS + 3);
	CHECK(r[0].keys_after == 0);
	for (int i = 0; i < W - 1; i++)
		CHECK(r[0].present[i] == 1);
	CHECK(r[0].present[W - 1] == 0);
}

/* A raw client: HELLO with @token as rank @rank of @world; returns the fd
 * and the reply's type and line. */
static int raw_join(const char *port, int rank, int world, const char *token,
                    uint32_t *type, char *line, size_t bytes)
{
	struct sockaddr_storage sa;
	socklen_t sl = sizeof(sa);
	int fd, err;
	struct boot_hello h = { .rank = (int32_t)htonl((uint32_t)rank),
		                .world = (int32_t)htonl((uint32_t)world),
		                .pid = (int32_t)htonl(4242u) };
	struct boot_hdr hdr = { htonl(BOOT_MAGIC), htonl(MSG_HELLO), 0,
		                htonl(sizeof(h)) };
	uint64_t dl = cb_now_ns() + 5000000000ull;

	snprintf(h.host, sizeof(h.host), "rawhost");
	snprintf(h.token, sizeof(h.token), "%s", token);
	if (cb_sock_resolve("127.0.0.1", port, &sa, &sl) ||
	    cb_sock_connect((struct sockaddr *)&sa, sl, dl, &fd, &err))
		return -1;
	cb_sock_send_all(fd, &hdr, sizeof(hdr), dl, &err);
	cb_sock_send_all(fd, &h, sizeof(h), dl, &err);
	line[0] = '\0';
	*type = 0;
	if (cb_sock_recv_all(fd, &hdr, sizeof(hdr), dl, &err) == CB_OK) {
		uint32_t kb = ntohl(hdr.key_bytes), vb = ntohl(hdr.val_bytes);
		char buf[1024];
		*type = ntohl(hdr.type);
		if (kb + vb < sizeof(buf) &&
		    cb_sock_recv_all(fd, buf, kb + vb, dl, &err) == CB_OK) {
			buf[kb + vb] = '\0';
			snprintf(line, bytes, "%s", buf + kb);
		}
	}
	return fd;
}

static void raw_send(int fd, uint32_t type, const char *key, const void *val,
                     uint32_t vb)
{
	struct boot_hdr h = { htonl(BOOT_MAGIC), htonl(type),
		              htonl((uint32_t)strlen(key)), htonl(vb) };
	uint64_t dl = cb_now_ns() + 5000000000ull;
	int err;

	cb_sock_send_all(fd, &h, sizeof(h), dl, &err);
	cb_sock_send_all(fd, key, strlen(key), dl, &err);
	if (vb)
		cb_sock_send_all(fd, val, vb, dl, &err);
}

struct plain {
	struct rank r;
	int errors;
	double seconds;
};

/* Ranks 0-1 gather among themselves to rank 0 while rank 2, a raw socket,
 * asks for a big value over and over and reads none of it. */
static void *busy_rank(void *arg)
{
	struct plain *p = arg;
	struct cb_boot *b;
	struct cb_boot_cfg cfg = { .rank = p->r.rank,
		                   .world = 3,
		                   .host = "127.0.0.1",
		                   .port = p->r.port,
		                   .listen_fd = p->r.rank ? -1 : p->r.listen_fd,
		                   .timeout_s = 20,
		                   .hostname = "testhost" };
	int32_t mine = p->r.rank, all[3];

	if (cb_boot_open(&cfg, &b)) {
		p->errors++;
		return NULL;
	}
	cb_boot_set(b, p->r.rank ? "up1" : "up0", "", 0);
	uint64_t t0 = cb_now_ns();
	/* Gathers to rank 0 with a deadline: rank 2 never sends, so each
	 * is answered at 20 ms with ranks 0 and 1 - unless the store is
	 * stuck writing to rank 2. */
	for (int k = 0; k < 20; k++) {
		unsigned char present[3];
		if (cb_boot_gather_root(b, "busy", &mine, sizeof(mine), all,
		                        0.02, present))
			p->errors++;
	}
	p->seconds = (double)(cb_now_ns() - t0) / 1e9;
	size_t n;
	char v;
	/* Wait until rank 2 has read everything and says goodbye. */
	cb_boot_get(b, "done", &v, 1, &n);
	cb_boot_close(b);
	return NULL;
}

static void test_slow_reader(void)
{
	struct plain p[2];
	pthread_t th[2];
	char port[16], line[512], buf[65536];
	int fd = listen_any(port, sizeof(port));
	uint32_t type;
	static char big[1 << 20];
	const size_t want = 48 * (sizeof(big) + 16);
	size_t got = 0;

	for (int i = 0; i < 2; i++) {
		p[i] = (struct plain){ .r = { .rank = i, .listen_fd = fd } };
		snprintf(p[i].r.port, sizeof(p[i].r.port), "%s", port);
		pthread_create(&th[i], NULL, busy_rank, &p[i]);
	}
	int raw = raw_join(port, 2, 3, "", &type, line, sizeof(line));
	CHECK(raw >= 0 && type == MSG_WELCOME);
	raw_send(raw, MSG_SET, "big", big, sizeof(big));
	/* 48 MiB asked for, none read yet: far more than socket buffers
	 * hold. */
	for (int i = 0; i < 48; i++)
		raw_send(raw, MSG_GET, "big", NULL, 0);
	uint64_t dl = cb_now_ns() + 30000000000ull;
	while (!(p[0].seconds > 0 && p[1].seconds > 0) && cb_now_ns() < dl)
		usleep(10000);
	printf("slow reader: ranks 0 and 1 did 20 gathers in %.3f s and "
	       "%.3f s\n",
	       p[0].seconds, p[1].seconds);
	CHECK(p[0].errors == 0 && p[1].errors == 0);
	/* Rank 0 waits 20 x 20 ms for rank 2's parts. */
	CHECK(p[0].seconds >= 0.4 && p[0].seconds < 5.0);
	/* Everything queued for the slow reader still arrives, whole. */
	while (got < want) {
		ssize_t n = recv(raw, buf, sizeof(buf), 0);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	CHECK(got == want);
	raw_send(raw, MSG_SET, "done", "x", 1);
	raw_send(raw, MSG_BYE, "", NULL, 0);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	close(raw);
}

/* The token: without it, or with another, refused with one line; with it,
 * admitted (and the job, two thread ranks and the raw one, goes on). */
static void test_token(void)
{
	char line[512], port[16];
	uint32_t type;
	int fd0 = listen_any(port, sizeof(port));
	struct cb_boot *b0;
	struct cb_boot_cfg cfg = { .rank = 0,
		                   .world = 3,
		                   .host = "127.0.0.1",
		                   .port = port,
		                   .listen_fd = fd0,
		                   .timeout_s = 10,
		                   .hostname = "testhost",
		                   .token = "right-token" };
	CHECK(cb_boot_open(&cfg, &b0) == CB_OK);
	int a = raw_join(port, 1, 3, "", &type, line, sizeof(line));
	printf("no token: type %u: %s\n", type, line);
	CHECK(a >= 0 && type == MSG_ERROR && strstr(line, "has no job token"));
	int c = raw_join(port, 1, 3, "wrong-token", &type, line, sizeof(line));
	printf("wrong token: type %u: %s\n", type, line);
	CHECK(c >= 0 && type == MSG_ERROR &&
	      strstr(line, "job token is not the job's"));
	/* Refused connections are closed by the store. */
	char x;
	CHECK(a >= 0 && recv(a, &x, 1, 0) == 0);
	/* The same rank number, with the token, is admitted. */
	int d = raw_join(port, 1, 3, "right-token", &type, line, sizeof(line));
	CHECK(d >= 0 && type == MSG_WELCOME);
	/* A client of this process with another token is refused, with the
	 * line recorded for the CLI to print. */
	struct cb_boot *b2;
	struct cb_boot_cfg cfg2 = cfg;
	cfg2.rank = 2;
	cfg2.listen_fd = -1;
	cfg2.token = "another";
	cb_fail_clear();
	CHECK(cb_boot_open(&cfg2, &b2) != CB_OK);
	CHECK(cb_fail_msg() && strstr(cb_fail_msg(), "refused this rank"));
	printf("refused client's line: %s\n", cb_fail_msg());
	cb_fail_clear();
	cfg2.token = "right-token";
	CHECK(cb_boot_open(&cfg2, &b2) == CB_OK);
	raw_send(d, MSG_BYE, "", NULL, 0);
	cb_boot_close(b2);
	cb_boot_close(b0);
	close(a);
	close(c);
	close(d);
}

int main(void)
{
	cb_log_level = CB_LOG_ERROR;
	test_gathers();
	test_slow_reader();
	test_token();
	return check_result("boot");
}
