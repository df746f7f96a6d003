/* SPDX-License-Identifier: MIT */
/*
 * core/boot_relay.c - a host's relay to the rendezvous store (see
 * core/boot_relay.h): one thread polls the store's connection, the local
 * listener and every local client.  It never waits on one of them: what
 * each is owed is queued and written as its socket takes it, as the store
 * itself does.
 */
#include "core/boot_relay.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/boot_store.h"
#include "core/boot_wire.h"
#include "core/log.h"
#include "core/sock.h"
#include "core/strbuf.h"

#define RELAY_CHANS 65536 /* local clients one relay takes, in all */
#define RELAY_CHUNK 65536 /* bytes read from a local client at once */

struct lclient {
	int fd;      /* -1 once closed */
	int closing; /* the store closed it: close once its queue is out */
	uint64_t closing_ns;
	struct boot_outq out;
};

struct boot_relay {
	int lfd, up;
	struct lclient *cl;
	int ncl, cap;
	uint8_t *in; /* from the store: [off, bytes) not parsed yet */
	size_t off, bytes, in_cap;
	uint8_t chunk[RELAY_CHUNK];
	struct boot_outq up_out;
	double timeout_s;
	atomic_int stop, wait;
	pthread_t thread;
};

void boot_relay_addr(const char *token, const char *host, const char *port,
                     const char *hostname, struct sockaddr_un *sa,
                     socklen_t *len)
{
	const char *part[4] = { token, host, port, hostname };
	uint64_t h = CB_STR_HASH0;

	for (int i = 0; i < 4; i++)
		h = cb_str_hash(cb_str_hash(h, part[i] ? part[i] : ""), "|");
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	/* sun_path[0] = '\0': an abstract name, gone with its last socket */
	int n = snprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1,
	                 "collbench-boot-%016llx", (unsigned long long)h);
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
	                   (size_t)n);
}

cb_status_t boot_relay_listen(const struct sockaddr_un *sa, socklen_t len,
                              int *out)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return cb_fail(CB_ERR_SYS,
		               "cannot make this host's relay to "
		               "the rendezvous: %s",
		               strerror(errno));
	if (bind(fd, (const struct sockaddr *)sa, len) || listen(fd, INT_MAX)) {
		int e = errno;
		close(fd);
		return cb_fail(CB_ERR_SYS,
		               "cannot open this host's relay to the "
		               "rendezvous: %s%s",
		               strerror(e),
		               e == EADDRINUSE
		                       ? " (another process of this job "
		                         "holds it: do two ranks here "
		                         "say they are local rank 0?)"
		                       : "");
	}
	*out = fd;
	return CB_OK;
}

/* FWD {@chan, @bytes} to the store (empty: client @chan closed). */
static void up_fwd(struct boot_relay *r, int chan, const void *data,
                   size_t bytes)
{
	uint32_t k = htonl((uint32_t)chan);
	struct boot_sbuf *b =
	        boot_msg_new(MSG_FWD, &k, sizeof(k), data, (uint32_t)bytes);

	if (b)
		boot_outq_push(&r->up_out, r->up, b);
	boot_sbuf_put(b);
}

static void local_close(struct boot_relay *r, int chan, int tell)
{
	struct lclient *c = &r->cl[chan];

	if (c->fd < 0)
		return;
	close(c->fd);
	c->fd = -1;
	boot_outq_clear(&c->out);
	if (tell)
		up_fwd(r, chan, NULL, 0);
}

static void local_accept(struct boot_relay *r)
{
	int fd = accept4(r->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0)
		return;
	if (r->ncl == r->cap) {
		int cap = r->cap ? r->cap * 2 : 16;
		struct lclient *cl = cap <= RELAY_CHANS
		                             ? realloc(r->cl, cap * sizeof(*cl))
		                             : NULL;
		if (!cl) {
			close(fd);
			return;
		}
		r->cl = cl;
		r->cap = cap;
	}
	r->cl[r->ncl++] = (struct lclient){ .fd = fd };
}

static void local_read(struct boot_relay *r, int chan)
{
	for (int rounds = 0; r->cl[chan].fd >= 0 && rounds < 16; rounds++) {
		ssize_t n = recv(r->cl[chan].fd, r->chunk, sizeof(r->chunk),
		                 MSG_DONTWAIT);
		if (n > 0) {
			up_fwd(r, chan, r->chunk, (size_t)n);
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		local_close(r, chan, 1);
	}
}

/* FWDM: the same bytes for each channel listed; -1 when it does not parse. */
static int up_multi(struct boot_relay *r, const struct boot_in *m)
{
	uint32_t n, k;

	if (m->h.key_bytes || m->h.val_bytes < sizeof(n))
		return -1;
	memcpy(&n, m->val, sizeof(n));
	n = ntohl(n);
	size_t off = sizeof(n) * (1 + (size_t)n);
	if (!n || off >= m->h.val_bytes)
		return -1; /* no room for the list and a byte of message */
	struct boot_sbuf *b = boot_sbuf_new(m->h.val_bytes - off);
	if (!b)
		return -1;
	memcpy(b->data, m->val + off, b->bytes);
	for (uint32_t i = 0; i < n; i++) {
		memcpy(&k, m->val + sizeof(n) * (1 + i), sizeof(k));
		k = ntohl(k);
		if (k < (uint32_t)r->ncl && r->cl[k].fd >= 0 &&
		    !r->cl[k].closing)
			boot_outq_push(&r->cl[k].out, r->cl[k].fd, b);
	}
	boot_sbuf_put(b);
	return 0;
}

/* One message from the store; -1 when it is not one a relay takes. */
static int up_message(struct boot_relay *r, const struct boot_in *m)
{
	uint32_t k;

	if (m->h.type == MSG_FWDM)
		return up_multi(r, m);
	if (m->h.type != MSG_FWD || m->h.key_bytes != sizeof(k))
		return -1;
	memcpy(&k, m->key_raw, sizeof(k));
	k = ntohl(k);
	if (k >= (uint32_t)r->ncl || r->cl[k].fd < 0)
		return 0; /* it closed already */
	struct lclient *c = &r->cl[k];
	if (!m->h.val_bytes) {
		c->closing = 1;
		c->closing_ns = cb_now_ns();
		return 0;
	}
	struct boot_sbuf *b = boot_sbuf_new(m->h.val_bytes);
	if (!b)
		return -1;
	memcpy(b->data, m->val, m->h.val_bytes);
	boot_outq_push(&c->out, c->fd, b);
	boot_sbuf_put(b);
	return 0;
}

/* What the store sent; -1 when its connection ended or sent garbage. */
static int up_read(struct boot_relay *r)
{
	for (;;) {
		if (r->off && r->off == r->bytes)
			r->off = r->bytes = 0;
		if (r->in_cap - r->bytes < 65536) {
			if (r->off) {
				memmove(r->in, r->in + r->off,
				        r->bytes - r->off);
				r->bytes -= r->off;
				r->off = 0;
			}
			size_t cap = r->in_cap ? r->in_cap : 131072;
			while (cap - r->bytes < 65536)
				cap *= 2;
			uint8_t *in =
			        cap == r->in_cap ? r->in : realloc(r->in, cap);
			if (!in)
				return -1;
			r->in = in;
			r->in_cap = cap;
		}
		ssize_t n = recv(r->up, r->in + r->bytes, r->in_cap - r->bytes,
		                 MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		if (n <= 0)
			return -1;
		r->bytes += (size_t)n;
		struct boot_in m;
		long used;
		while ((used = boot_frame(r->in + r->off, r->bytes - r->off,
		                          &m))) {
			if (used < 0 || up_message(r, &m))
				return -1;
			r->off += (size_t)used;
		}
	}
}

/* The store is gone: what it sent still goes out, for a second at most,
 * then every local client sees its connection end. */
static void relay_end(struct boot_relay *r)
{
	uint64_t dl = cb_now_ns() + 1000000000ull;
	int left;

	do {
		left = 0;
		for (int i = 0; i < r->ncl; i++) {
			boot_outq_flush(&r->cl[i].out, r->cl[i].fd);
			left += r->cl[i].fd >= 0 &&
			        boot_outq_pending(&r->cl[i].out);
		}
		if (left)
			usleep(1000);
	} while (left && cb_now_ns() < dl);
	for (int i = 0; i < r->ncl; i++)
		local_close(r, i, 0);
}

static void *relay_main(void *arg)
{
	struct boot_relay *r = arg;
	struct pollfd *pfd = NULL;
	int cap = 0;
	uint64_t stop_dl = 0;

	for (;;) {
		if (atomic_load(&r->stop)) {
			if (!atomic_load(&r->wait))
				break;
			if (!stop_dl)
				stop_dl = cb_now_ns() +
				          (uint64_t)(r->timeout_s * 1e9);
			if (cb_now_ns() > stop_dl)
				break;
		}
		if (cap < r->ncl + 2) {
			cap = (r->ncl + 2) * 2;
			struct pollfd *p = realloc(pfd, cap * sizeof(*p));
			if (!p)
				break;
			pfd = p;
		}
		pfd[0] = (struct pollfd){ .fd = r->lfd, .events = POLLIN };
		pfd[1] = (struct pollfd){
			.fd = r->up,
			.events = POLLIN |
			          (boot_outq_pending(&r->up_out) ? POLLOUT : 0)
		};
		uint64_t now = cb_now_ns();
		for (int i = 0; i < r->ncl; i++) {
			struct lclient *c = &r->cl[i];
			if (c->closing && (!boot_outq_pending(&c->out) ||
			                   now - c->closing_ns > 1000000000ull))
				local_close(r, i, 0);
			pfd[i + 2] = (struct pollfd){
				.fd = c->fd,
				.events = (c->closing ? 0 : POLLIN) |
				          (boot_outq_pending(&c->out) ? POLLOUT
				                                      : 0)
			};
		}
		int n = r->ncl;
		if (poll(pfd, (nfds_t)n + 2, 50) < 0 && errno != EINTR)
			break;
		if (pfd[1].revents & POLLOUT)
			boot_outq_flush(&r->up_out, r->up);
		if ((pfd[1].revents & ~POLLOUT) && up_read(r))
			break;
		for (int i = 0; i < n; i++) {
			if (pfd[i + 2].fd < 0 || !pfd[i + 2].revents)
				continue;
			if (pfd[i + 2].revents & POLLOUT)
				boot_outq_flush(&r->cl[i].out, r->cl[i].fd);
			if (pfd[i + 2].revents & ~POLLOUT)
				local_read(r, i);
		}
		if (pfd[0].revents & POLLIN)
			local_accept(r);
	}
	relay_end(r);
	free(pfd);
	return NULL;
}

cb_status_t boot_relay_start(int listen_fd, int upstream_fd, int leader_rank,
                             const char *hostname, double timeout_s,
                             struct boot_relay **out)
{
	struct boot_relay *r = calloc(1, sizeof(*r));
	struct boot_relay_hello who = { .rank = (int32_t)htonl(
		                                (uint32_t)leader_rank) };

	if (!r) {
		close(listen_fd);
		close(upstream_fd);
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	}
	r->lfd = listen_fd;
	r->up = upstream_fd;
	r->timeout_s = timeout_s;
	cb_sock_set_nonblock(listen_fd, 1);
	cb_sock_set_nonblock(upstream_fd, 1);
	snprintf(who.host, sizeof(who.host), "%s", hostname ? hostname : "");
	struct boot_sbuf *b =
	        boot_msg_new(MSG_RELAY, NULL, 0, &who, sizeof(who));
	if (b)
		boot_outq_push(&r->up_out, r->up, b);
	boot_sbuf_put(b);
	/* Signals are the main thread's (as for the store's thread). */
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	int err = pthread_create(&r->thread, NULL, relay_main, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!b || err) {
		if (!err) {
			atomic_store(&r->stop, 1);
			pthread_join(r->thread, NULL);
		}
		boot_outq_clear(&r->up_out);
		close(listen_fd);
		close(upstream_fd);
		free(r);
		return cb_fail(CB_ERR_SYS, "cannot start this host's relay to "
		                           "the rendezvous");
	}
	*out = r;
	return CB_OK;
}

void boot_relay_stop(struct boot_relay *r, int wait)
{
	if (!r)
		return;
	atomic_store(&r->wait, wait);
	atomic_store(&r->stop, 1);
	pthread_join(r->thread, NULL);
	boot_outq_clear(&r->up_out);
	for (int i = 0; i < r->ncl; i++)
		boot_outq_clear(&r->cl[i].out);
	close(r->lfd);
	close(r->up);
	free(r->cl);
	free(r->in);
	free(r);
}
