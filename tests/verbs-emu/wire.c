/* SPDX-License-Identifier: MIT */
/*
 * tests/verbs-emu/wire.c - the emulated fabric between processes: one
 * engine per process (a listening socket, an epoll set, a progress thread)
 * and one TCP connection per pair of processes that talk.
 *
 * Every process listens on port COLLBENCH_EMU_PORT_BASE + slot, the first
 * slot it can bind, and its QP numbers are slot << 12 | index: a QP number
 * and the address its LID or GID resolves to (host.c) are enough to reach
 * it, with no directory.  Messages are a 48-byte header and the payload,
 * gathered straight from the sender's registered memory by writev() and,
 * for large messages, read straight into the destination by readv().
 *
 * The connection is real TCP over the namespaces' network, so a link taken
 * down with `ip link set down` or shaped with `tc ... tbf` affects the
 * fabric, and a peer that is gone is seen as one: nothing comes back, and
 * the QP's retry timer (rx.c) fails its work requests with
 * IBV_WC_RETRY_EXC_ERR.
 */
#include "wire.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

struct emu_engine emu_eng = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.keys = PTHREAD_RWLOCK_INITIALIZER,
	.lfd = -1,
	.epfd = -1,
	.wakefd = -1,
};

#define EV_LISTEN ((void *)1)
#define EV_WAKE   ((void *)2)

void emu_engine_wake(void)
{
	uint64_t one = 1;
	if (write(emu_eng.wakefd, &one, sizeof(one)) < 0) {
		/* the counter is already non-zero: it will wake */
	}
}

static void set_events(struct emu_conn *c)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
	if (c->want_out || c->connecting)
		ev.events |= EPOLLOUT;
	epoll_ctl(emu_eng.epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

static struct emu_conn *conn_new(int fd)
{
	struct emu_conn *c = calloc(1, sizeof(*c));
	struct epoll_event ev = { .events = EPOLLIN };
	int one = 1;
	if (!c)
		return NULL;
	c->rcap = 256 << 10;
	c->rbuf = malloc(c->rcap);
	if (!c->rbuf) {
		free(c);
		return NULL;
	}
	c->fd = fd;
	c->txq_tail = &c->txq;
	c->last_rx_ns = emu_now_ns();
	pthread_mutex_init(&c->txlock, NULL);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	ev.data.ptr = c;
	epoll_ctl(emu_eng.epfd, EPOLL_CTL_ADD, fd, &ev);
	c->next = emu_eng.conns;
	emu_eng.conns = c;
	return c;
}

/* Control messages (acks, NAKs, READ responses, the hello) are owned
 * items: their bytes are freed once written. */
void emu_conn_send_owned(struct emu_conn *c, void *buf, size_t len)
{
	struct emu_txitem *it = malloc(sizeof(*it) + sizeof(struct iovec));
	if (!it) {
		free(buf);
		return;
	}
	memset(it, 0, sizeof(*it));
	it->iov = (struct iovec *)(it + 1);
	it->iov[0].iov_base = buf;
	it->iov[0].iov_len = len;
	it->iovcnt = 1;
	it->total = len;
	it->owned = buf;
	emu_conn_enqueue(c, it);
	emu_conn_flush(c);
}

struct emu_conn *emu_conn_for(struct in_addr ip, uint16_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
		                  .sin_port = htons(port),
		                  .sin_addr = ip };
	struct emu_conn *c;
	struct wire_hdr *h;
	int fd;
	/* eng.lock held */
	for (c = emu_eng.conns; c; c = c->next)
		if (c->keyed && !c->dead && c->ip.s_addr == ip.s_addr &&
		    c->port == port)
			return c;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return NULL;
	c = conn_new(fd);
	if (!c) {
		close(fd);
		return NULL;
	}
	c->ip = ip;
	c->port = port;
	c->keyed = true;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		c->connecting = false;
	} else if (errno == EINPROGRESS) {
		c->connecting = true;
		set_events(c);
	} else {
		emu_conn_kill(c, "connect");
		return c;
	}
	h = calloc(1, sizeof(*h));
	if (h) {
		h->type = WT_HELLO;
		h->dst_qpn = emu_host.port_base + emu_eng.slot;
		h->seq = emu_host.fabric_id;
		h->raddr = emu_host.host_id;
		emu_conn_send_owned(c, h, sizeof(*h));
	}
	return c;
}

bool emu_conn_dead(struct emu_conn *c)
{
	return c->dead;
}

int64_t emu_conn_last_rx(struct emu_conn *c)
{
	return c->last_rx_ns;
}

void emu_conn_enqueue(struct emu_conn *c, struct emu_txitem *it)
{
	pthread_mutex_lock(&c->txlock);
	if (c->dead) {
		pthread_mutex_unlock(&c->txlock);
		if (it->owned) {
			free(it->owned);
			free(it);
		}
		return;
	}
	it->next = NULL;
	it->queued = true;
	*c->txq_tail = it;
	c->txq_tail = &it->next;
	pthread_mutex_unlock(&c->txlock);
}

static void item_done(struct emu_txitem *it)
{
	it->queued = false;
	if (it->owned) {
		free(it->owned);
		free(it);
	}
}

void emu_conn_flush(struct emu_conn *c)
{
	struct iovec iov[64];
	pthread_mutex_lock(&c->txlock);
	while (c->txq && !c->connecting && !c->dead) {
		size_t budget = emu_rate_budget(), want = 0;
		struct msghdr mh = { .msg_iov = iov };
		int n = 0;
		ssize_t w;
		for (struct emu_txitem *it = c->txq; it && n < 64;
		     it = it->next) {
			size_t skip = it == c->txq ? it->done : 0;
			for (int i = 0; i < it->iovcnt && n < 64; i++) {
				size_t l = it->iov[i].iov_len;
				if (skip >= l) {
					skip -= l;
					continue;
				}
				iov[n].iov_base =
				        (char *)it->iov[i].iov_base + skip;
				iov[n].iov_len = l - skip;
				if (want + iov[n].iov_len > budget)
					iov[n].iov_len = budget - want;
				want += iov[n].iov_len;
				skip = 0;
				if (iov[n].iov_len)
					n++;
				if (want >= budget)
					break;
			}
			if (want >= budget)
				break;
		}
		/* A slow link sends whole pieces (4 KiB, an MTU) when its
		 * budget allows them: a budget spent as it trickles in (a few
		 * bytes a system call) kept this loop busy for the whole
		 * transfer, and the acks that came meanwhile unread until the
		 * retry timer ran out (emu-faults, slow:mbps=40 under load). */
		if (n == 0 || (want >= budget && want < 4096)) {
			c->rate_blocked =
			        true; /* the progress thread retries */
			break;
		}
		mh.msg_iovlen = (size_t)n;
		w = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		emu_dbg("pid %d fd %d sent %zd of %zu", (int)getpid(), c->fd, w,
		        want);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				if (!c->want_out) {
					c->want_out = true;
					set_events(c);
				}
			} else {
				c->dead = true; /* the progress thread cleans up
				                 */
				emu_engine_wake();
			}
			break;
		}
		emu_rate_used((size_t)w);
		while (w > 0 && c->txq) {
			struct emu_txitem *it = c->txq;
			size_t left = it->total - it->done;
			if ((size_t)w < left) {
				it->done += (size_t)w;
				break;
			}
			w -= (ssize_t)left;
			it->done = it->total;
			c->txq = it->next;
			if (!c->txq)
				c->txq_tail = &c->txq;
			item_done(it);
		}
	}
	if (!c->txq && c->want_out && !c->connecting) {
		c->want_out = false;
		set_events(c);
	}
	pthread_mutex_unlock(&c->txlock);
}

/* Replace *@pp by an owned copy of the bytes it still has to send, so
 * nothing more is read from the memory it points into; false without
 * memory (txlock held). */
static bool copy_rest(struct emu_conn *c, struct emu_txitem **pp)
{
	struct emu_txitem *it = *pp;
	size_t skip = it == c->txq ? it->done : 0, left = it->total - skip;
	struct emu_txitem *cp = malloc(sizeof(*cp) + sizeof(struct iovec));
	uint8_t *buf = malloc(left ? left : 1), *p = buf;
	if (!cp || !buf) {
		free(cp);
		free(buf);
		return false;
	}
	for (int i = 0; i < it->iovcnt; i++) {
		size_t l = it->iov[i].iov_len;
		if (skip >= l) {
			skip -= l;
			continue;
		}
		memcpy(p, (char *)it->iov[i].iov_base + skip, l - skip);
		p += l - skip;
		skip = 0;
	}
	memset(cp, 0, sizeof(*cp));
	cp->iov = (struct iovec *)(cp + 1);
	cp->iov[0].iov_base = buf;
	cp->iov[0].iov_len = left;
	cp->iovcnt = 1;
	cp->total = left;
	cp->owned = buf;
	cp->queued = true;
	cp->next = it->next;
	*pp = cp;
	if (c->txq_tail == &it->next)
		c->txq_tail = &cp->next;
	it->queued = false;
	return true;
}

/* A region the application deregisters (and may free next): queued
 * messages that still read from it go from a copy made now, as a device
 * never reads deregistered memory.  eng.lock held. */
void emu_conn_forget_range(struct emu_conn *c, const void *addr, size_t len)
{
	uintptr_t lo = (uintptr_t)addr, hi = lo + len;
	pthread_mutex_lock(&c->txlock);
	for (struct emu_txitem **pp = &c->txq; *pp; pp = &(*pp)->next) {
		struct emu_txitem *it = *pp;
		bool in = false;
		for (int i = 0; !it->owned && i < it->iovcnt && !in; i++) {
			uintptr_t b = (uintptr_t)it->iov[i].iov_base;
			in = b < hi && b + it->iov[i].iov_len > lo;
		}
		if (in && !copy_rest(c, pp)) {
			c->dead = true; /* cannot finish it: the stream dies */
			break;
		}
	}
	pthread_mutex_unlock(&c->txlock);
}

/* The QP leaves (error, reset, destroy): its queued messages go; one that
 * is half written is finished from a copy, so the stream stays whole and
 * the application may free its buffer after the flush completion. */
void emu_conn_detach_qp(struct emu_conn *c, struct emu_qp *qp)
{
	struct emu_txitem **pp;
	pthread_mutex_lock(&c->txlock);
	for (pp = &c->txq; *pp;) {
		struct emu_txitem *it = *pp;
		if (it->qp != qp) {
			pp = &it->next;
			continue;
		}
		if (it == c->txq && it->done > 0) {
			if (!copy_rest(c, pp)) {
				/* cannot finish it: the stream dies */
				c->dead = true;
				pp = &it->next;
				continue;
			}
			pp = &(*pp)->next;
			continue;
		}
		*pp = it->next;
		if (c->txq_tail == &it->next)
			c->txq_tail = pp;
		it->queued = false;
	}
	pthread_mutex_unlock(&c->txlock);
}

void emu_conn_kill(struct emu_conn *c, const char *why)
{
	(void)why;
	/* eng.lock held */
	pthread_mutex_lock(&c->txlock);
	c->dead = true;
	while (c->txq) {
		struct emu_txitem *it = c->txq;
		c->txq = it->next;
		item_done(it);
	}
	c->txq_tail = &c->txq;
	pthread_mutex_unlock(&c->txlock);
	emu_rx_cancel(c);
	if (c->fd >= 0) {
		epoll_ctl(emu_eng.epfd, EPOLL_CTL_DEL, c->fd, NULL);
		close(c->fd);
		c->fd = -1;
	}
}

static int listen_slot(void)
{
	for (uint32_t s = 1; s < (1u << (24 - EMU_QP_IDX_BITS)); s++) {
		struct sockaddr_in sa = {
			.sin_family = AF_INET,
			.sin_port = htons((uint16_t)(emu_host.port_base + s)),
			.sin_addr.s_addr = htonl(INADDR_ANY),
		};
		int fd;
		if (emu_host.port_base + s > 65535)
			break;
		fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		            0);
		if (fd < 0)
			return -1;
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
		    listen(fd, 128) == 0) {
			emu_eng.lfd = fd;
			emu_eng.slot = s;
			return 0;
		}
		close(fd);
	}
	return -1;
}

static void do_accept(void)
{
	for (;;) {
		int fd = accept4(emu_eng.lfd, NULL, NULL,
		                 SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		if (!conn_new(fd))
			close(fd);
	}
}

static void connected(struct emu_conn *c)
{
	int err = 0;
	socklen_t l = sizeof(err);
	getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &l);
	if (err) {
		emu_conn_kill(c, "connect");
		return;
	}
	pthread_mutex_lock(&c->txlock);
	c->connecting = false;
	c->want_out = c->txq != NULL;
	set_events(c);
	pthread_mutex_unlock(&c->txlock);
	emu_conn_flush(c);
}

/* One round: what epoll reported, then timers and acknowledgements
 * (eng.lock held). */
static void progress_round(struct epoll_event *ev, int n)
{
	int64_t now;
	for (int i = 0; i < n; i++) {
		struct emu_conn *c = ev[i].data.ptr;
		if (ev[i].data.ptr == EV_LISTEN) {
			do_accept();
			continue;
		}
		if (ev[i].data.ptr == EV_WAKE) {
			uint64_t v;
			if (read(emu_eng.wakefd, &v, sizeof(v)) < 0) {
				/* spurious: nothing to drain */
			}
			continue;
		}
		if (c->dead)
			continue;
		if (c->connecting) {
			if (ev[i].events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
				connected(c);
			continue;
		}
		if (ev[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP))
			emu_rx_readable(c);
		if (!c->dead && (ev[i].events & EPOLLOUT))
			emu_conn_flush(c);
	}
	now = emu_now_ns();
	emu_timers(now);
	for (struct emu_conn *c = emu_eng.conns; c; c = c->next) {
		if (c->dead && c->fd >= 0)
			emu_conn_kill(c, "write");
		if (c->dead)
			continue;
		emu_rx_send_acks(c);
		if (c->rate_blocked) {
			c->rate_blocked = false;
			emu_conn_flush(c);
		}
	}
}

static void *progress(void *arg)
{
	struct epoll_event ev[64];
	(void)arg;
	while (!atomic_load(&emu_eng.stop)) {
		int n = epoll_wait(emu_eng.epfd, ev, 64, 5);
		pthread_mutex_lock(&emu_eng.lock);
		progress_round(ev, n < 0 ? 0 : n);
		pthread_mutex_unlock(&emu_eng.lock);
	}
	return NULL;
}

/* A thread polling an empty CQ drives the wire itself when the progress
 * thread is not at it: on a loaded machine a busy poller would otherwise
 * wait for the scheduler to run the progress thread (milliseconds). */
void emu_progress_try(void)
{
	struct epoll_event ev[64];
	int n;
	if (!emu_eng.running || pthread_mutex_trylock(&emu_eng.lock))
		return;
	n = epoll_wait(emu_eng.epfd, ev, 64, 0);
	if (n > 0 || emu_now_ns() - emu_eng.last_scan_ns >= 2000000)
		progress_round(ev, n < 0 ? 0 : n);
	pthread_mutex_unlock(&emu_eng.lock);
}

int emu_engine_get(void)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int rc = 0;
	if (emu_host_init())
		return -1;
	pthread_mutex_lock(&emu_eng.lock);
	if (emu_eng.users++ > 0)
		goto out;
	emu_eng.epfd = epoll_create1(EPOLL_CLOEXEC);
	emu_eng.wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (emu_eng.epfd < 0 || emu_eng.wakefd < 0 || listen_slot()) {
		emu_log("cannot listen on a port from %u: %s",
		        emu_host.port_base + 1, strerror(errno));
		rc = -1;
		goto fail;
	}
	ev.data.ptr = EV_LISTEN;
	epoll_ctl(emu_eng.epfd, EPOLL_CTL_ADD, emu_eng.lfd, &ev);
	ev.data.ptr = EV_WAKE;
	epoll_ctl(emu_eng.epfd, EPOLL_CTL_ADD, emu_eng.wakefd, &ev);
	emu_eng.start_ns = emu_now_ns();
	emu_faults_init();
	atomic_store(&emu_eng.stop, false);
	if (pthread_create(&emu_eng.thread, NULL, progress, NULL)) {
		rc = -1;
		goto fail;
	}
	emu_eng.running = true;
	goto out;
fail:
	emu_eng.users--;
	if (emu_eng.lfd >= 0)
		close(emu_eng.lfd);
	if (emu_eng.epfd >= 0)
		close(emu_eng.epfd);
	if (emu_eng.wakefd >= 0)
		close(emu_eng.wakefd);
	emu_eng.lfd = emu_eng.epfd = emu_eng.wakefd = -1;
out:
	pthread_mutex_unlock(&emu_eng.lock);
	return rc;
}

void emu_engine_put(void)
{
	pthread_mutex_lock(&emu_eng.lock);
	if (--emu_eng.users > 0 || !emu_eng.running) {
		pthread_mutex_unlock(&emu_eng.lock);
		return;
	}
	atomic_store(&emu_eng.stop, true);
	emu_engine_wake();
	pthread_mutex_unlock(&emu_eng.lock);
	pthread_join(emu_eng.thread, NULL);
	pthread_mutex_lock(&emu_eng.lock);
	emu_eng.running = false;
	while (emu_eng.conns) {
		struct emu_conn *c = emu_eng.conns;
		emu_eng.conns = c->next;
		emu_conn_kill(c, "close");
		free(c->acks);
		free(c->rbuf);
		pthread_mutex_destroy(&c->txlock);
		free(c);
	}
	close(emu_eng.lfd);
	close(emu_eng.epfd);
	close(emu_eng.wakefd);
	emu_eng.lfd = emu_eng.epfd = emu_eng.wakefd = -1;
	pthread_mutex_unlock(&emu_eng.lock);
}

/* Where the QP's peer is (at RTR): its LID (IB) or GID resolves to an
 * address, its QP number to a slot.  Unresolvable: nothing will answer,
 * and the retry timer fails the first send, as on a fabric. */
int emu_qp_path(struct emu_qp *qp)
{
	struct in_addr ip;
	int rc;
	if (qp->ah.is_global)
		rc = emu_resolve_gid(&qp->ah.grh.dgid, &ip);
	else
		rc = emu_resolve_lid(qp->ah.dlid, &ip);
	qp->conn = NULL;
	qp->path_dead = false;
	if (rc) {
		qp->path_dead = true;
		return -1;
	}
	qp->conn =
	        emu_conn_for(ip, (uint16_t)(emu_host.port_base +
	                                    (qp->dest_qpn >> EMU_QP_IDX_BITS)));
	if (!qp->conn)
		qp->path_dead = true;
	return qp->conn ? 0 : -1;
}
