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
#include "core/boot_server_int.h"
#include "core/log.h"
#include "core/sock.h"

static void srv_read(struct boot_server *srv, int ci)
{
	for (;;) {
		ssize_t n = recv(srv->clients[ci].fd, srv->scratch,
		                 sizeof(srv->scratch), MSG_DONTWAIT);
		if (n > 0) {
			if (boot_srv_feed(srv, ci, srv->scratch, (size_t)n) < 0)
				return;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		boot_srv_eof(srv, ci);
		return;
	}
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
	boot_srv_add_client(srv, fd, addr);
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
		if ((c->rank >= 0 && !c->bye) || c->relay)
			boot_srv_abortf(srv,
			                "%s %d (host %s) stopped taking the "
			                "rendezvous's replies for %g s",
			                c->relay ? "the relay of rank" : "rank",
			                c->relay ? c->relay_rank : c->rank,
			                c->host, srv->timeout_s);
		boot_srv_drop(srv, c);
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
					open += boot_cl_live(
					                &srv->clients[i]) &&
					        !srv->clients[i].relay &&
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
			boot_srv_stall_decide(srv);
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
		boot_srv_mc_flush(srv);
		pthread_mutex_unlock(&srv->lock);
	}
	pthread_mutex_lock(&srv->lock);
	boot_srv_mc_flush(srv);
	srv_drain_output(srv);
	pthread_mutex_unlock(&srv->lock);
	free(pfd);
	return NULL;
}

static void srv_free(struct boot_server *srv)
{
	for (int i = 0; i < srv->nclients; i++)
		boot_srv_drop(srv, &srv->clients[i]);
	free(srv->clients);
	free(srv->mc_relays);
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
	if (!(srv->kv = boot_kv_new(world, boot_srv_answer, srv))) {
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

	if (!srv || !(srv->kv = boot_kv_new(world, boot_srv_answer, srv))) {
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
	return boot_srv_add_client(srv, fd, "fuzz");
}

void boot_server_input(struct boot_server *srv, int ci, const void *buf,
                       size_t bytes)
{
	struct client *c = &srv->clients[ci];

	if (c->fd >= 0 && !bytes)
		boot_srv_eof(srv, ci);
	else if (c->fd >= 0)
		boot_srv_feed(srv, ci, buf, bytes);
	boot_server_flush(srv);
}

void boot_server_flush(struct boot_server *srv)
{
	boot_srv_mc_flush(srv);
	for (int i = 0; i < srv->nclients; i++)
		boot_outq_flush(&srv->clients[i].out, srv->clients[i].fd);
}

void boot_server_expire(struct boot_server *srv)
{
	if (srv->decide_ns && !srv->aborted)
		boot_srv_stall_decide(srv);
	boot_kv_timers(srv->kv, cb_now_ns() + 3600000000000ull);
	boot_server_flush(srv);
}

void boot_server_free(struct boot_server *srv)
{
	srv_free(srv);
}
