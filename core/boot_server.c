/* SPDX-License-Identifier: MIT */
/*
 * core/boot_server.c - the rendezvous store, served by rank 0.
 *
 * Requests: HELLO (rank, world, pid, host, job token), SET, GET (answered
 * when the key exists), GATHER (answered when keys "<prefix>0" ..
 * "<prefix>N-1" all exist, with their values concatenated, or at its
 * deadline with what is there), ABORT (a rank failed: tell every rank, the
 * one that reported too) and BYE.  Replies: WELCOME (job id), VALUE, ERROR (a
 * line), ABORT (origin rank, a line).  The keys and gathers themselves are
 * core/boot_store.c's.
 *
 * One thread polls every connection.  It never waits on one client: replies
 * are queued and written as each socket takes them, so a rank that stops
 * reading holds up nobody (and is dropped after the deadline).  A HELLO
 * without the job's token is refused with one line and logged once.
 *
 * It is the only place that sees every rank, so it is the job's failure
 * detector too: a rank whose connection closes before its goodbye has died,
 * and everyone else is told.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cb_config.h"
#include "core/boot_store.h"
#include "core/boot_wire.h"
#include "core/log.h"
#include "core/strbuf.h"
#include "core/sock.h"

struct client {
	int fd;
	int rank; /* -1 until HELLO */
	int bye;
	char addr[64];
	char host[64];
	uint8_t *in;
	size_t in_bytes, in_cap;
	struct boot_outq out; /* replies it has not taken yet */
};

struct boot_server {
	int listen_fd;
	int world;
	uint64_t job_id;
	double timeout_s;
	char token[BOOT_TOKEN_MAX];
	struct boot_kv *kv;
	struct client *clients;
	int nclients, cap_clients;
	int aborted;
	int byes;
	int gone; /* ranks rank 0 said not to wait for (boot_server_gone) */
	/* Stall reports ("rank R waits for rank B") held for a moment, so the
	 * one at the end of a chain of waiting ranks is the one told. */
	struct stall {
		int origin, blame;
		char line[600];
	} * stalls;
	int nstalls;
	uint64_t decide_ns;
	int stall_ms;    /* tests: sleep at the first ABORT (srv_main) */
	atomic_int stop; /* rank 0 is closing */
	/* Held while the thread changes clients or keys, so rank 0's own
	 * client can ask who is missing (boot_server_missing). */
	pthread_mutex_t lock;
	pthread_t thread;
};

static int srv_send(struct boot_server *srv, struct client *c, uint32_t type,
                    const void *key, uint32_t key_bytes, const void *val,
                    uint32_t val_bytes)
{
	struct boot_sbuf *b;
	int rc;

	(void)srv;
	if (c->fd < 0 ||
	    !(b = boot_msg_new(type, key, key_bytes, val, val_bytes)))
		return -1;
	rc = boot_outq_push(&c->out, c->fd, b);
	boot_sbuf_put(b);
	return rc;
}

/* The store's answer to client @ci: a VALUE whose payload @body may be
 * shared with other clients. */
static void srv_answer(void *ctx, int ci, struct boot_sbuf *body)
{
	struct boot_server *srv = ctx;
	struct client *c = &srv->clients[ci];
	struct boot_sbuf *h = boot_msg_new(MSG_VALUE, NULL, 0, NULL, 0);

	if (!h || c->fd < 0) {
		boot_sbuf_put(h);
		return;
	}
	boot_hdr_encode((struct boot_hdr *)(void *)h->data, MSG_VALUE, 0,
	                body->bytes);
	if (boot_outq_push(&c->out, c->fd, h) == 0)
		boot_outq_push(&c->out, c->fd, body);
	boot_sbuf_put(h);
}

/* Tell every rank, @origin too, that the job failed with @status: a rank
 * that reported waits for this answer before it tears anything down (see
 * cb_comm_fail), and learns what the store added to its line. */
static void srv_abort_all(struct boot_server *srv, int origin, int status,
                          const char *why)
{
	int32_t o[2] = { (int32_t)htonl((uint32_t)origin),
		         (int32_t)htonl((uint32_t)status) };

	if (srv->aborted)
		return;
	srv->aborted = 1;
	for (int i = 0; i < srv->nclients; i++)
		if (srv->clients[i].rank >= 0)
			srv_send(srv, &srv->clients[i], MSG_ABORT, o, sizeof(o),
			         why, (uint32_t)strlen(why));
}

static void srv_missing(struct boot_server *srv, const char *prefix, int n,
                        char *out, size_t bytes);

/* A rank's deadline passed while it waited for @blame.  Its neighbours' pass
 * at about the same moment, each waiting for the next, so the first report
 * to arrive often blames a rank that is itself only waiting.  Hold reports
 * for a moment, then tell everyone the one whose blamed rank reported
 * nothing: that rank is the one that stopped. */
static void srv_stall(struct boot_server *srv, int origin, int blame,
                      const char *line)
{
	struct stall *st;

	if (srv->aborted)
		return;
	st = realloc(srv->stalls, (size_t)(srv->nstalls + 1) * sizeof(*st));
	if (!st) {
		srv_abort_all(srv, origin, CB_ERR_TIMEOUT, line);
		return;
	}
	srv->stalls = st;
	st = &srv->stalls[srv->nstalls++];
	st->origin = origin;
	st->blame = blame;
	snprintf(st->line, sizeof(st->line), "%s", line);
	if (!srv->decide_ns)
		srv->decide_ns = cb_now_ns() + 300000000ull;
}

static void srv_stall_decide(struct boot_server *srv)
{
	int pick = 0;

	for (int i = 0; i < srv->nstalls; i++) {
		int blamed_waits = 0;
		for (int j = 0; j < srv->nstalls; j++)
			if (srv->stalls[j].origin == srv->stalls[i].blame)
				blamed_waits = 1;
		if (!blamed_waits) {
			pick = i;
			break;
		}
	}
	srv_abort_all(srv, srv->stalls[pick].origin, CB_ERR_TIMEOUT,
	              srv->stalls[pick].line);
	srv->decide_ns = 0;
}

static void srv_drop(struct boot_server *srv, struct client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->in);
	c->in = NULL;
	c->in_bytes = c->in_cap = 0;
	boot_outq_clear(&c->out);
	boot_kv_forget_client(srv->kv, (int)(c - srv->clients));
}

/* Compared in constant time: how long a refusal takes says nothing of how
 * much of a guess was right. */
static int token_ok(const char *want, const char *got)
{
	unsigned char diff = 0;

	if (!want[0])
		return 1;
	for (size_t i = 0; i < BOOT_TOKEN_MAX; i++)
		diff |= (unsigned char)(want[i] ^ got[i]);
	return diff == 0;
}

static void srv_hello(struct boot_server *srv, struct client *c,
                      const void *val, uint32_t bytes)
{
	struct boot_hello h;
	char line[256];

	if (boot_hello_decode(val, bytes, &h)) {
		srv_drop(srv, c);
		return;
	}
	line[0] = '\0';
	if (!token_ok(srv->token, h.token)) {
		/* Not one of ours: a stranger, a rank of another job, or a
		 * launcher that gave the ranks different secrets.  The job
		 * goes on; the rank it claims may still arrive. */
		cb_log(CB_LOG_WARN,
		       "rendezvous: refused %s (says rank %d on %s): %s",
		       c->addr, h.rank, h.host,
		       h.token[0] ? "its job token is not this job's"
		                  : "it has no job token");
		snprintf(line, sizeof(line),
		         "the rendezvous refused this rank: %s (ranks of one "
		         "job "
		         "share a token: from PMIx, the launcher, or "
		         "COLLBENCH_JOB_TOKEN)",
		         h.token[0]
		                 ? "its job token is not the job's"
		                 : "it has no job token and the job has one");
	} else if (h.world != srv->world)
		snprintf(line, sizeof(line),
		         "rank %d on %s says the job has %d ranks, rank 0 says "
		         "%d "
		         "(launcher and --np disagree?)",
		         h.rank, h.host, h.world, srv->world);
	else if (h.rank < 0 || h.rank >= srv->world)
		snprintf(line, sizeof(line), "rank %d on %s is outside 0..%d",
		         h.rank, h.host, srv->world - 1);
	for (int i = 0; !line[0] && i < srv->nclients; i++)
		if (srv->clients[i].rank == h.rank)
			snprintf(
			        line, sizeof(line),
			        "two processes claim rank %d (hosts %s and %s)",
			        h.rank, srv->clients[i].host, h.host);
	if (line[0]) {
		srv_send(srv, c, MSG_ERROR, NULL, 0, line,
		         (uint32_t)strlen(line));
		srv_drop(srv, c);
		return;
	}
	c->rank = h.rank;
	snprintf(c->host, sizeof(c->host), "%s", h.host);
	uint64_t job = srv->job_id;
	srv_send(srv, c, MSG_WELCOME, NULL, 0, &job, sizeof(job));
}

static void srv_message(struct boot_server *srv, int ci,
                        const struct boot_hdr *h, const char *key,
                        const uint8_t *key_raw, const uint8_t *val)
{
	struct client *c = &srv->clients[ci];

	if (c->rank < 0 && h->type != MSG_HELLO) {
		srv_drop(srv, c);
		return;
	}
	switch (h->type) {
	case MSG_HELLO:
		srv_hello(srv, c, val, h->val_bytes);
		return;
	case MSG_SET:
		boot_kv_set(srv->kv, key, val, h->val_bytes);
		return;
	case MSG_GET:
		boot_kv_get(srv->kv, ci, key);
		return;
	case MSG_GATHER:
		boot_kv_gather(srv->kv, ci, key, val, h->val_bytes);
		return;
	case MSG_ABORT: {
		char line[600];
		snprintf(line, sizeof(line), "%.*s", (int)h->val_bytes,
		         (const char *)val);
		boot_line_clean(line);
		int32_t k[2] = { CB_ERR_PEER, -1 }; /* status, blamed rank */
		if (boot_pair_decode(key_raw, h->key_bytes, k) == 0) {
			k[0] = boot_status_decode(k[0]);
			if (k[1] >= srv->world)
				k[1] = -1;
		}
		/* A rank that timed out in the rendezvous itself cannot see
		 * who is missing; the store can (a rank stopped at start-up
		 * is then named, not only the rank that waited for it). */
		const char *stuck = k[0] == CB_ERR_TIMEOUT && k[1] < 0
		                            ? boot_kv_stuck_gather(srv->kv)
		                            : NULL;
		if (stuck && !strstr(line, "still missing")) {
			char who[256];
			srv_missing(srv, stuck, srv->world, who, sizeof(who));
			if (who[0]) {
				snprintf(line + strlen(line),
				         sizeof(line) - strlen(line),
				         "; still missing: rank %s", who);
				srv_abort_all(srv, c->rank, k[0], line);
				return;
			}
		}
		if (k[0] == CB_ERR_TIMEOUT && k[1] >= 0)
			srv_stall(srv, c->rank, k[1], line);
		else
			srv_abort_all(srv, c->rank, k[0], line);
		return;
	}
	case MSG_BYE:
		c->bye = 1;
		srv->byes++;
		return;
	default:
		break;
	}
	/* An unknown type from a rank: same as garbage. */
	char line[256];
	snprintf(line, sizeof(line),
	         "rank %d (%s) sent the rendezvous a message that does not "
	         "parse (type %u)",
	         c->rank, c->host, h->type);
	srv_abort_all(srv, -1, CB_ERR_PEER, line);
	srv_drop(srv, c);
}

/* Parse what arrived from client @ci; returns -1 when it was dropped. */
static int srv_parse(struct boot_server *srv, int ci)
{
	struct client *c = &srv->clients[ci];
	struct boot_in m;
	long used;

	while (c->fd >= 0 && (used = boot_frame(c->in, c->in_bytes, &m))) {
		if (used < 0) {
			char line[256];
			if (c->rank >= 0) {
				snprintf(line, sizeof(line),
				         "rank %d (%s) sent the rendezvous a "
				         "message that does not parse (magic "
				         "0x%08x)",
				         c->rank, c->host, m.h.magic);
				srv_abort_all(srv, -1, CB_ERR_PEER, line);
			} else {
				cb_log(CB_LOG_WARN,
				       "rendezvous: dropped a connection from "
				       "%s that is not a collbench rank (its "
				       "first message does not parse)",
				       c->addr);
			}
			srv_drop(srv, c);
			return -1;
		}
		srv_message(srv, ci, &m.h, m.key, m.key_raw, m.val);
		if (c->fd < 0)
			return -1;
		memmove(c->in, c->in + used, c->in_bytes - (size_t)used);
		c->in_bytes -= (size_t)used;
	}
	return 0;
}

/* Room for @more bytes in client @c's input; -1 when there is none. */
static int srv_room(struct client *c, size_t more)
{
	if (c->in_cap - c->in_bytes >= more)
		return 0;
	size_t cap = c->in_cap ? c->in_cap : 131072;
	while (cap - c->in_bytes < more)
		cap *= 2;
	uint8_t *in = realloc(c->in, cap);
	if (!in)
		return -1;
	c->in = in;
	c->in_cap = cap;
	return 0;
}

/* Client @ci's connection ended: a rank that did not say goodbye died. */
static void srv_eof(struct boot_server *srv, int ci)
{
	struct client *c = &srv->clients[ci];

	if (c->rank >= 0 && !c->bye) {
		char line[256];
		snprintf(line, sizeof(line),
		         "rank %d (host %s) left the job without "
		         "finishing: it exited or was killed",
		         c->rank, c->host);
		srv_abort_all(srv, -1, CB_ERR_PEER, line);
	}
	srv_drop(srv, c);
}

static void srv_read(struct boot_server *srv, int ci)
{
	struct client *c = &srv->clients[ci];

	for (;;) {
		if (srv_room(c, 65536))
			return;
		ssize_t n = recv(c->fd, c->in + c->in_bytes,
		                 c->in_cap - c->in_bytes, MSG_DONTWAIT);
		if (n > 0) {
			c->in_bytes += (size_t)n;
			if (srv_parse(srv, ci) < 0)
				return;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		srv_eof(srv, ci);
		return;
	}
}

/* A new connection @fd (now the store's); its index, or -1. */
static int srv_add_client(struct boot_server *srv, int fd, const char *addr)
{
	if (srv->nclients == srv->cap_clients) {
		int cap = srv->cap_clients ? srv->cap_clients * 2 : 64;
		struct client *cl = realloc(srv->clients, cap * sizeof(*cl));
		if (!cl) {
			close(fd);
			return -1;
		}
		srv->clients = cl;
		srv->cap_clients = cap;
	}
	struct client *c = &srv->clients[srv->nclients];
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->rank = -1;
	snprintf(c->addr, sizeof(c->addr), "%s", addr);
	return srv->nclients++;
}

static void srv_accept(struct boot_server *srv)
{
	struct sockaddr_storage sa;
	socklen_t sl = sizeof(sa);
	int fd = accept4(srv->listen_fd, (struct sockaddr *)&sa, &sl,
	                 SOCK_CLOEXEC | SOCK_NONBLOCK);

	char addr[64];

	if (fd < 0)
		return;
	/* Replies are small and answer a request: never wait for Nagle. */
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	cb_sock_ntop((struct sockaddr *)&sa, addr, sizeof(addr));
	srv_add_client(srv, fd, addr);
}

/* The deadlines the poll loop keeps: gathers answered with what is there,
 * and clients that stopped taking their replies. */
static int srv_timers(struct boot_server *srv)
{
	uint64_t now = cb_now_ns();
	int pending = boot_kv_timers(srv->kv, now);

	for (int i = 0; i < srv->nclients; i++) {
		struct client *c = &srv->clients[i];
		if (c->fd < 0 || !c->out.stuck_ns ||
		    now - c->out.stuck_ns < (uint64_t)(srv->timeout_s * 1e9))
			continue;
		if (c->rank >= 0 && !c->bye) {
			char line[256];
			snprintf(line, sizeof(line),
			         "rank %d (host %s) stopped taking the "
			         "rendezvous's replies for %g s",
			         c->rank, c->host, srv->timeout_s);
			srv_abort_all(srv, -1, CB_ERR_PEER, line);
		}
		srv_drop(srv, c);
	}
	return pending;
}

/* Before the thread ends: what is queued (an ABORT, the last answers) goes
 * out, for at most a second. */
static void srv_drain_output(struct boot_server *srv)
{
	uint64_t dl = cb_now_ns() + 1000000000ull;

	for (;;) {
		int left = 0;
		for (int i = 0; i < srv->nclients; i++) {
			struct client *c = &srv->clients[i];
			boot_outq_flush(&c->out, c->fd);
			left += c->fd >= 0 && boot_outq_pending(&c->out);
		}
		if (!left || cb_now_ns() > dl)
			return;
		usleep(1000);
	}
}

/* 1 when a client's next message is an ABORT (read later, not now). */
static int srv_abort_next(const struct pollfd *pfd, int n)
{
	struct boot_hdr h;

	for (int i = 1; i <= n; i++)
		if (pfd[i].fd >= 0 && (pfd[i].revents & POLLIN) &&
		    cb_sock_peek(pfd[i].fd, &h, sizeof(h)) &&
		    ntohl(h.type) == MSG_ABORT)
			return 1;
	return 0;
}

static void *srv_main(void *arg)
{
	struct boot_server *srv = arg;
	uint64_t stop_deadline = 0, abort_deadline = 0;
	struct pollfd *pfd = NULL;
	int cap = 0, timers = 0;

	for (;;) {
		if (atomic_load(&srv->stop)) {
			if (!stop_deadline)
				stop_deadline =
				        cb_now_ns() +
				        (uint64_t)(srv->timeout_s * 1e9);
			if (srv->byes + srv->gone >= srv->world ||
			    cb_now_ns() > stop_deadline)
				break;
			/* Every rank has been sent the ABORT.  Keep the
			 * connections open until the ranks close them, for a
			 * moment at most: a rank that is still writing a
			 * request (slow to start on a loaded host) then reads
			 * the ABORT and exits with the job's status, instead
			 * of a broken pipe and status 1. */
			if (srv->aborted) {
				int open = 0;
				if (!abort_deadline)
					abort_deadline =
					        cb_now_ns() + 2000000000ull;
				for (int i = 0; i < srv->nclients; i++)
					open += srv->clients[i].fd >= 0 &&
					        srv->clients[i].rank != 0;
				if (!open || cb_now_ns() > abort_deadline)
					break;
			}
		}
		if (cap < srv->nclients + 1) {
			cap = (srv->nclients + 1) * 2;
			struct pollfd *p = realloc(pfd, cap * sizeof(*p));
			if (!p)
				break;
			pfd = p;
		}
		pfd[0] = (struct pollfd){ .fd = srv->listen_fd,
			                  .events = POLLIN };
		for (int i = 0; i < srv->nclients; i++) {
			struct client *c = &srv->clients[i];
			pfd[i + 1] = (struct pollfd){
				.fd = c->fd,
				.events = POLLIN |
				          (boot_outq_pending(&c->out) ? POLLOUT
				                                      : 0),
			};
		}
		int n = srv->nclients;
		if (srv->decide_ns && !srv->aborted &&
		    cb_now_ns() >= srv->decide_ns) {
			pthread_mutex_lock(&srv->lock);
			srv_stall_decide(srv);
			pthread_mutex_unlock(&srv->lock);
		}
		int ready =
		        poll(pfd, n + 1, srv->decide_ns || timers ? 10 : 50);
		/* tests: a thread kept off the cores as the first ABORT comes
		 */
		if (ready > 0 && srv->stall_ms > 0 && srv_abort_next(pfd, n)) {
			usleep((useconds_t)srv->stall_ms * 1000);
			srv->stall_ms = 0;
			ready = poll(pfd, n + 1, 0);
		}
		pthread_mutex_lock(&srv->lock);
		for (int i = 0; ready > 0 && i < n; i++) {
			if (pfd[i + 1].fd < 0 || !pfd[i + 1].revents)
				continue;
			if (pfd[i + 1].revents & POLLOUT)
				boot_outq_flush(&srv->clients[i].out,
				                srv->clients[i].fd);
			if (pfd[i + 1].revents & ~POLLOUT)
				srv_read(srv, i);
		}
		if (ready > 0 && (pfd[0].revents & POLLIN))
			srv_accept(srv);
		timers = srv_timers(srv);
		pthread_mutex_unlock(&srv->lock);
	}
	pthread_mutex_lock(&srv->lock);
	srv_drain_output(srv);
	pthread_mutex_unlock(&srv->lock);
	free(pfd);
	return NULL;
}

static void srv_free(struct boot_server *srv)
{
	for (int i = 0; i < srv->nclients; i++)
		srv_drop(srv, &srv->clients[i]);
	free(srv->clients);
	free(srv->stalls);
	boot_kv_free(srv->kv);
	if (srv->listen_fd >= 0)
		close(srv->listen_fd);
	pthread_mutex_destroy(&srv->lock);
	free(srv);
}

cb_status_t boot_server_start(int listen_fd, int world, double timeout_s,
                              const char *token, struct boot_server **out)
{
	struct boot_server *srv = calloc(1, sizeof(*srv));

	if (!srv) {
		close(listen_fd);
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	}
	srv->world = world;
	srv->timeout_s = timeout_s;
#if CB_TEST_HOOKS /* -Dtest_hooks=false: none (DEBUGGING, collbench(1)) */
	const char *stall = getenv("COLLBENCH_TEST_STORE_STALL_MS");
	char *end = NULL;
	long ms = stall ? strtol(stall, &end, 10) : 0;
	if (stall && (end == stall || *end || ms < 1 || ms > 10000))
		cb_log(CB_LOG_WARN, "%s=%s ignored (ms, 1 to 10000)",
		       "COLLBENCH_TEST_STORE_STALL_MS", stall);
	else
		srv->stall_ms = (int)ms;
#endif
	srv->listen_fd = listen_fd;
	snprintf(srv->token, sizeof(srv->token), "%s", token ? token : "");
	if (!(srv->kv = boot_kv_new(world, srv_answer, srv))) {
		close(listen_fd);
		free(srv);
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	}
	pthread_mutex_init(&srv->lock, NULL);
	if (getrandom(&srv->job_id, sizeof(srv->job_id), 0) !=
	    sizeof(srv->job_id))
		srv->job_id = cb_now_ns() ^ ((uint64_t)getpid() << 32);
	cb_sock_set_nonblock(listen_fd, 1);
	/* SIGINT and SIGTERM belong to the main thread, which turns them into
	 * the job's interrupted status: the store's thread starts with them
	 * blocked (a thread inherits its creator's mask). */
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	int err = pthread_create(&srv->thread, NULL, srv_main, srv);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		close(listen_fd);
		free(srv);
		return cb_fail(CB_ERR_SYS,
		               "cannot start the rendezvous thread");
	}
	*out = srv;
	return CB_OK;
}

void boot_server_stop(struct boot_server *srv, int drain)
{
	if (!srv)
		return;
	if (!drain)
		srv->aborted = 1;
	atomic_store(&srv->stop, 1);
	pthread_join(srv->thread, NULL);
	srv_free(srv);
}

/* boot_server_missing, with the lock held. */
static void srv_missing(struct boot_server *srv, const char *prefix, int n,
                        char *out, size_t bytes)
{
	char key[BOOT_KEY_MAX + 16];
	size_t len = 0;
	int shown = 0, more = 0;

	out[0] = '\0';
	for (int r = 0; r < n; r++) {
		snprintf(key, sizeof(key), "%s%d", prefix, r);
		if (boot_kv_has(srv->kv, key))
			continue;
		if (shown == 8) {
			more++;
			continue;
		}
		int joined = 0;
		for (int i = 0; i < srv->nclients && !joined; i++)
			joined = srv->clients[i].rank == r &&
			         srv->clients[i].fd >= 0;
		cb_buf_appendf(out, bytes, &len, "%s%d%s", shown ? ", " : "", r,
		               joined ? "" : " (never connected)");
		shown++;
	}
	if (more)
		cb_buf_appendf(out, bytes, &len, " and %d more", more);
}

void boot_server_missing(struct boot_server *srv, const char *prefix, int n,
                         char *out, size_t bytes)
{
	pthread_mutex_lock(&srv->lock);
	srv_missing(srv, prefix, n, out, bytes);
	pthread_mutex_unlock(&srv->lock);
}

void boot_server_stats(struct boot_server *srv, size_t *keys, uint64_t *replies)
{
	pthread_mutex_lock(&srv->lock);
	boot_kv_stats(srv->kv, keys, replies);
	pthread_mutex_unlock(&srv->lock);
}

void boot_server_gone(struct boot_server *srv, int rank)
{
	pthread_mutex_lock(&srv->lock);
	for (int i = 0; i < srv->nclients; i++)
		if (srv->clients[i].rank == rank && !srv->clients[i].bye) {
			srv->clients[i].bye = 1; /* counted once */
			srv->gone++;
		}
	pthread_mutex_unlock(&srv->lock);
}

/* ---- the store driven by hand (tests/fuzz/fuzz_boot_server.c) ---- */

cb_status_t boot_server_detached(int world, const char *token,
                                 struct boot_server **out)
{
	struct boot_server *srv = calloc(1, sizeof(*srv));

	if (!srv || !(srv->kv = boot_kv_new(world, srv_answer, srv))) {
		free(srv);
		return CB_ERR_NOMEM;
	}
	srv->listen_fd = -1;
	srv->world = world;
	srv->timeout_s = 3600;
	snprintf(srv->token, sizeof(srv->token), "%s", token ? token : "");
	pthread_mutex_init(&srv->lock, NULL);
	*out = srv;
	return CB_OK;
}

int boot_server_add(struct boot_server *srv, int fd)
{
	return srv_add_client(srv, fd, "fuzz");
}

void boot_server_input(struct boot_server *srv, int ci, const void *buf,
                       size_t bytes)
{
	struct client *c = &srv->clients[ci];

	if (c->fd >= 0 && !bytes) {
		srv_eof(srv, ci);
	} else if (c->fd >= 0 && srv_room(c, bytes) == 0) {
		memcpy(c->in + c->in_bytes, buf, bytes);
		c->in_bytes += bytes;
		srv_parse(srv, ci);
	}
	boot_server_flush(srv);
}

void boot_server_flush(struct boot_server *srv)
{
	for (int i = 0; i < srv->nclients; i++)
		boot_outq_flush(&srv->clients[i].out, srv->clients[i].fd);
}

void boot_server_expire(struct boot_server *srv)
{
	if (srv->decide_ns && !srv->aborted)
		srv_stall_decide(srv);
	boot_kv_timers(srv->kv, cb_now_ns() + 3600000000000ull);
	boot_server_flush(srv);
}

void boot_server_free(struct boot_server *srv)
{
	srv_free(srv);
}
