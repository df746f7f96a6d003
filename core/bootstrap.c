/* SPDX-License-Identifier: MIT */
/*
 * core/bootstrap.c - rank 0's key-value store and every rank's client.
 *
 * Wire format: a 16-byte header {magic, type, key bytes, value bytes} in
 * network order, then the key, then the value.  Requests: HELLO (rank, world,
 * pid, host), SET, GET (answered when the key exists), GATHER (answered when
 * keys "<prefix>0" .. "<prefix>N-1" all exist, with their values
 * concatenated), ABORT (a rank failed: tell the others) and BYE.  Replies:
 * WELCOME (job id), VALUE, ERROR (a line), ABORT (origin rank, a line).
 *
 * The server is one thread in rank 0 polling every connection; it is the
 * only place that sees every rank, so it is the failure detector too.
 */
#include "core/bootstrap.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/log.h"
#include "core/sock.h"

#define BOOT_MAGIC   0x43424b56u /* "CBKV" */
#define BOOT_KEY_MAX 256u
#define BOOT_VAL_MAX (64u << 20)

enum boot_msg {
	MSG_HELLO = 1,
	MSG_WELCOME,
	MSG_SET,
	MSG_GET,
	MSG_GATHER,
	MSG_VALUE,
	MSG_ERROR,
	MSG_ABORT,
	MSG_BYE,
};

struct boot_hdr {
	uint32_t magic, type, key_bytes, val_bytes;
};

struct boot_hello {
	int32_t rank, world, pid;
	char host[64];
};

/* ---------------------------------------------------------------- server */

struct kv {
	struct kv *next;
	char *key;
	void *val;
	uint32_t bytes;
};

struct client {
	int fd;
	int rank; /* -1 until HELLO */
	int bye;
	char addr[64];
	char host[64];
	uint8_t *in;
	size_t in_bytes, in_cap;
};

struct waiter {
	struct waiter *next;
	int client; /* index into srv->clients */
	uint32_t type;
	uint32_t n; /* GATHER: number of keys */
	char key[BOOT_KEY_MAX + 1];
};

#define KV_BUCKETS 4096

struct server {
	int listen_fd;
	int world;
	uint64_t job_id;
	double timeout_s;
	struct kv *kv[KV_BUCKETS];
	struct client *clients;
	int nclients, cap_clients;
	struct waiter *waiters;
	int aborted;
	int byes;
	atomic_int stop; /* rank 0 is closing */
	pthread_t thread;
};

static unsigned kv_hash(const char *s)
{
	unsigned h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h % KV_BUCKETS;
}

static struct kv *kv_find(struct server *srv, const char *key)
{
	for (struct kv *e = srv->kv[kv_hash(key)]; e; e = e->next)
		if (!strcmp(e->key, key))
			return e;
	return NULL;
}

static int kv_put(struct server *srv, const char *key, const void *val,
                  uint32_t bytes)
{
	struct kv *e = kv_find(srv, key);
	void *copy = malloc(bytes ? bytes : 1);

	if (!copy)
		return -1;
	memcpy(copy, val, bytes);
	if (!e) {
		unsigned h = kv_hash(key);
		e = calloc(1, sizeof(*e));
		if (!e || !(e->key = strdup(key))) {
			free(e);
			free(copy);
			return -1;
		}
		e->next = srv->kv[h];
		srv->kv[h] = e;
	} else {
		free(e->val);
	}
	e->val = copy;
	e->bytes = bytes;
	return 0;
}

static int srv_send(struct server *srv, struct client *c, uint32_t type,
                    const void *key, uint32_t key_bytes, const void *val,
                    uint32_t val_bytes)
{
	struct boot_hdr h = {htonl(BOOT_MAGIC), htonl(type), htonl(key_bytes),
	                     htonl(val_bytes)};
	uint64_t dl = cb_now_ns() + (uint64_t)(srv->timeout_s * 1e9);
	int err;

	if (c->fd < 0)
		return -1;
	if (cb_sock_send_all(c->fd, &h, sizeof(h), dl, &err) ||
	    (key_bytes && cb_sock_send_all(c->fd, key, key_bytes, dl, &err)) ||
	    (val_bytes && cb_sock_send_all(c->fd, val, val_bytes, dl, &err)))
		return -1;
	return 0;
}

static void srv_abort_all(struct server *srv, int origin, const char *why)
{
	int32_t o = htonl((uint32_t)origin);

	if (srv->aborted)
		return;
	srv->aborted = 1;
	for (int i = 0; i < srv->nclients; i++)
		if (srv->clients[i].rank >= 0 && srv->clients[i].rank != origin)
			srv_send(srv, &srv->clients[i], MSG_ABORT, &o,
			         sizeof(o), why, (uint32_t)strlen(why));
}

static void srv_drop(struct server *srv, struct client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->in);
	c->in = NULL;
	c->in_bytes = c->in_cap = 0;
	for (struct waiter **w = &srv->waiters; *w;) {
		if (&srv->clients[(*w)->client] == c) {
			struct waiter *dead = *w;
			*w = dead->next;
			free(dead);
		} else {
			w = &(*w)->next;
		}
	}
}

/* Answer a waiter if it can be answered now; 1 when answered. */
static int srv_try_answer(struct server *srv, struct waiter *w)
{
	struct client *c = &srv->clients[w->client];

	if (w->type == MSG_GET) {
		struct kv *e = kv_find(srv, w->key);
		if (!e)
			return 0;
		srv_send(srv, c, MSG_VALUE, NULL, 0, e->val, e->bytes);
		return 1;
	}
	/* GATHER: every key present? then one reply of [u32 bytes, value]... */
	size_t total = 0;
	char key[BOOT_KEY_MAX + 16];

	for (uint32_t i = 0; i < w->n; i++) {
		snprintf(key, sizeof(key), "%s%u", w->key, i);
		struct kv *e = kv_find(srv, key);
		if (!e)
			return 0;
		total += 4 + e->bytes;
	}
	uint8_t *buf = malloc(total ? total : 1), *p = buf;
	if (!buf)
		return 0;
	for (uint32_t i = 0; i < w->n; i++) {
		snprintf(key, sizeof(key), "%s%u", w->key, i);
		struct kv *e = kv_find(srv, key);
		uint32_t nb = htonl(e->bytes);
		memcpy(p, &nb, 4);
		memcpy(p + 4, e->val, e->bytes);
		p += 4 + e->bytes;
	}
	srv_send(srv, c, MSG_VALUE, NULL, 0, buf, (uint32_t)total);
	free(buf);
	return 1;
}

static void srv_answer_waiters(struct server *srv)
{
	for (struct waiter **w = &srv->waiters; *w;) {
		if (srv_try_answer(srv, *w)) {
			struct waiter *done = *w;
			*w = done->next;
			free(done);
		} else {
			w = &(*w)->next;
		}
	}
}

static void srv_hello(struct server *srv, struct client *c, const void *val,
                      uint32_t bytes)
{
	struct boot_hello h;
	char line[256];

	if (bytes != sizeof(h)) {
		srv_drop(srv, c);
		return;
	}
	memcpy(&h, val, sizeof(h));
	h.host[sizeof(h.host) - 1] = '\0';
	h.rank = (int32_t)ntohl((uint32_t)h.rank);
	h.world = (int32_t)ntohl((uint32_t)h.world);
	line[0] = '\0';
	if (h.world != srv->world)
		snprintf(
		    line, sizeof(line),
		    "rank %d on %s says the job has %d ranks, rank 0 says %d "
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

static void srv_message(struct server *srv, int ci, const struct boot_hdr *h,
                        const char *key, const uint8_t *val)
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
		if (kv_put(srv, key, val, h->val_bytes) == 0)
			srv_answer_waiters(srv);
		return;
	case MSG_GET:
	case MSG_GATHER: {
		struct waiter *w = calloc(1, sizeof(*w));
		if (!w)
			return;
		w->client = ci;
		w->type = h->type;
		memcpy(w->key, key, h->key_bytes + 1);
		if (h->type == MSG_GATHER && h->val_bytes == 4) {
			memcpy(&w->n, val, 4);
			w->n = ntohl(w->n);
		}
		if (srv_try_answer(srv, w)) {
			free(w);
		} else {
			w->next = srv->waiters;
			srv->waiters = w;
		}
		return;
	}
	case MSG_ABORT: {
		char line[600];
		snprintf(line, sizeof(line), "%.*s", (int)h->val_bytes,
		         (const char *)val);
		srv_abort_all(srv, c->rank, line);
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
	srv_abort_all(srv, -1, line);
	srv_drop(srv, c);
}

/* Parse what arrived from client @ci; returns -1 when it was dropped. */
static int srv_parse(struct server *srv, int ci)
{
	struct client *c = &srv->clients[ci];

	while (c->fd >= 0 && c->in_bytes >= sizeof(struct boot_hdr)) {
		struct boot_hdr h;
		memcpy(&h, c->in, sizeof(h));
		h.magic = ntohl(h.magic);
		h.type = ntohl(h.type);
		h.key_bytes = ntohl(h.key_bytes);
		h.val_bytes = ntohl(h.val_bytes);
		if (h.magic != BOOT_MAGIC || h.key_bytes > BOOT_KEY_MAX ||
		    h.val_bytes > BOOT_VAL_MAX) {
			char line[256];
			if (c->rank >= 0) {
				snprintf(line, sizeof(line),
				         "rank %d (%s) sent the rendezvous a "
				         "message that does not parse (magic "
				         "0x%08x)",
				         c->rank, c->host, h.magic);
				srv_abort_all(srv, -1, line);
			} else {
				cb_log(
				    CB_LOG_WARN,
				    "rendezvous: dropped a connection from %s "
				    "that is not a collbench rank (its first "
				    "message does not parse)",
				    c->addr);
			}
			srv_drop(srv, c);
			return -1;
		}
		size_t need = sizeof(h) + h.key_bytes + h.val_bytes;
		if (c->in_bytes < need)
			break;
		char key[BOOT_KEY_MAX + 1];
		memcpy(key, c->in + sizeof(h), h.key_bytes);
		key[h.key_bytes] = '\0';
		srv_message(srv, ci, &h, key, c->in + sizeof(h) + h.key_bytes);
		if (c->fd < 0)
			return -1;
		memmove(c->in, c->in + need, c->in_bytes - need);
		c->in_bytes -= need;
	}
	return 0;
}

static void srv_read(struct server *srv, int ci)
{
	struct client *c = &srv->clients[ci];

	for (;;) {
		if (c->in_cap - c->in_bytes < 65536) {
			size_t cap = c->in_cap ? c->in_cap * 2 : 131072;
			uint8_t *in = realloc(c->in, cap);
			if (!in)
				return;
			c->in = in;
			c->in_cap = cap;
		}
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
		/* EOF or error: a rank that did not say goodbye has died. */
		if (c->rank >= 0 && !c->bye) {
			char line[256];
			snprintf(line, sizeof(line),
			         "rank %d (host %s) left the job without "
			         "finishing: it exited or was killed",
			         c->rank, c->host);
			srv_abort_all(srv, -1, line);
		}
		srv_drop(srv, c);
		return;
	}
}

static void srv_accept(struct server *srv)
{
	struct sockaddr_storage sa;
	socklen_t sl = sizeof(sa);
	int fd = accept4(srv->listen_fd, (struct sockaddr *)&sa, &sl,
	                 SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0)
		return;
	/* Replies are small and answer a request: never wait for Nagle. */
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (srv->nclients == srv->cap_clients) {
		int cap = srv->cap_clients ? srv->cap_clients * 2 : 64;
		struct client *cl = realloc(srv->clients, cap * sizeof(*cl));
		if (!cl) {
			close(fd);
			return;
		}
		srv->clients = cl;
		srv->cap_clients = cap;
	}
	struct client *c = &srv->clients[srv->nclients++];
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->rank = -1;
	cb_sock_ntop((struct sockaddr *)&sa, c->addr, sizeof(c->addr));
}

static void *srv_main(void *arg)
{
	struct server *srv = arg;
	uint64_t stop_deadline = 0;
	struct pollfd *pfd = NULL;
	int cap = 0;

	for (;;) {
		if (atomic_load(&srv->stop)) {
			if (!stop_deadline)
				stop_deadline =
				    cb_now_ns() +
				    (uint64_t)(srv->timeout_s * 1e9);
			if (srv->byes >= srv->world || srv->aborted ||
			    cb_now_ns() > stop_deadline)
				break;
		}
		if (cap < srv->nclients + 1) {
			cap = (srv->nclients + 1) * 2;
			struct pollfd *p = realloc(pfd, cap * sizeof(*p));
			if (!p)
				break;
			pfd = p;
		}
		pfd[0] =
		    (struct pollfd){.fd = srv->listen_fd, .events = POLLIN};
		for (int i = 0; i < srv->nclients; i++)
			pfd[i + 1] = (struct pollfd){.fd = srv->clients[i].fd,
			                             .events = POLLIN};
		int n = srv->nclients;
		if (poll(pfd, n + 1, 50) <= 0)
			continue;
		for (int i = 0; i < n; i++)
			if (pfd[i + 1].fd >= 0 && pfd[i + 1].revents)
				srv_read(srv, i);
		if (pfd[0].revents & POLLIN)
			srv_accept(srv);
	}
	free(pfd);
	return NULL;
}

static void srv_free(struct server *srv)
{
	for (int i = 0; i < srv->nclients; i++)
		srv_drop(srv, &srv->clients[i]);
	free(srv->clients);
	for (int b = 0; b < KV_BUCKETS; b++)
		for (struct kv *e = srv->kv[b], *n; e; e = n) {
			n = e->next;
			free(e->key);
			free(e->val);
			free(e);
		}
	close(srv->listen_fd);
	free(srv);
}

/* ---------------------------------------------------------------- client */

struct cb_boot {
	int fd;
	int rank, world;
	uint64_t job_id;
	double timeout_s;
	uint32_t seq;    /* allgather / barrier round, the same on every rank */
	char where[300]; /* "the rendezvous at host:port" */
	char local_ip[64];
	int aborted, abort_origin; /* an ABORT arrived, from whom */
	int sent_abort;
	char abort_line[512];
	struct server *srv;
};

static uint64_t boot_deadline(const struct cb_boot *b)
{
	return cb_now_ns() + (uint64_t)(b->timeout_s * 1e9);
}

static cb_status_t boot_send(struct cb_boot *b, uint32_t type, const char *key,
                             const void *val, uint32_t val_bytes)
{
	uint32_t kb = key ? (uint32_t)strlen(key) : 0;
	struct boot_hdr h = {htonl(BOOT_MAGIC), htonl(type), htonl(kb),
	                     htonl(val_bytes)};
	uint64_t dl = boot_deadline(b);
	cb_status_t st;
	int err = 0;

	st = cb_sock_send_all(b->fd, &h, sizeof(h), dl, &err);
	if (!st && kb)
		st = cb_sock_send_all(b->fd, key, kb, dl, &err);
	if (!st && val_bytes)
		st = cb_sock_send_all(b->fd, val, val_bytes, dl, &err);
	if (st == CB_ERR_TIMEOUT)
		return cb_fail(st, "timed out after %g s sending to %s",
		               b->timeout_s, b->where);
	if (st)
		return cb_fail(CB_ERR_PEER, "lost %s (rank 0): %s", b->where,
		               err ? strerror(err) : "connection closed");
	return CB_OK;
}

static cb_status_t boot_lost(struct cb_boot *b, cb_status_t st, int err,
                             const char *waiting_for)
{
	if (st == CB_ERR_TIMEOUT)
		return cb_fail(st,
		               "timed out after %g s waiting for %s from %s",
		               b->timeout_s, waiting_for, b->where);
	return cb_fail(
	    CB_ERR_PEER, "lost %s (served by rank 0) waiting for %s: %s",
	    b->where, waiting_for, err ? strerror(err) : "connection closed");
}

/* Read one message.  An ABORT is turned into CB_ERR_ABORTED here, so callers
 * only ever see the reply they wait for.  *@val is malloc'ed. */
static cb_status_t boot_recv(struct cb_boot *b, uint64_t deadline,
                             const char *waiting_for, uint32_t *type,
                             uint8_t **val, uint32_t *val_bytes)
{
	struct boot_hdr h;
	int err = 0;
	cb_status_t st = cb_sock_recv_all(b->fd, &h, sizeof(h), deadline, &err);

	if (st)
		return boot_lost(b, st, err, waiting_for);
	h.magic = ntohl(h.magic);
	h.type = ntohl(h.type);
	h.key_bytes = ntohl(h.key_bytes);
	h.val_bytes = ntohl(h.val_bytes);
	if (h.magic != BOOT_MAGIC || h.key_bytes > BOOT_KEY_MAX ||
	    h.val_bytes > BOOT_VAL_MAX || h.type < MSG_HELLO ||
	    h.type > MSG_BYE)
		return cb_fail(
		    CB_ERR_PROTO,
		    "%s sent a message that does not parse (magic "
		    "0x%08x, type %u): is it a collbench rendezvous?",
		    b->where, h.magic, h.type);
	uint8_t *buf = malloc(h.key_bytes + h.val_bytes + 1);
	if (!buf)
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	st = cb_sock_recv_all(b->fd, buf, h.key_bytes + h.val_bytes, deadline,
	                      &err);
	if (st) {
		free(buf);
		return boot_lost(b, st, err, waiting_for);
	}
	buf[h.key_bytes + h.val_bytes] = '\0';
	if (h.type == MSG_ABORT || h.type == MSG_ERROR) {
		int32_t origin = -1;
		if (h.type == MSG_ABORT && h.key_bytes == 4) {
			memcpy(&origin, buf, 4);
			origin = (int32_t)ntohl((uint32_t)origin);
		}
		b->aborted = 1;
		b->abort_origin = origin;
		snprintf(b->abort_line, sizeof(b->abort_line), "%s",
		         (char *)buf + h.key_bytes);
		cb_fail(h.type == MSG_ABORT ? CB_ERR_ABORTED : CB_ERR_INVALID,
		        "%s", (char *)buf + h.key_bytes);
		free(buf);
		return h.type == MSG_ABORT ? CB_ERR_ABORTED : CB_ERR_INVALID;
	}
	memmove(buf, buf + h.key_bytes, h.val_bytes + 1);
	*type = h.type;
	*val = buf;
	*val_bytes = h.val_bytes;
	return CB_OK;
}

static cb_status_t boot_expect(struct cb_boot *b, uint32_t want,
                               const char *waiting_for, uint8_t **val,
                               uint32_t *val_bytes)
{
	uint32_t type;
	cb_status_t st =
	    boot_recv(b, boot_deadline(b), waiting_for, &type, val, val_bytes);

	if (st)
		return st;
	if (type != want) {
		free(*val);
		return cb_fail(CB_ERR_PROTO,
		               "%s answered with message type %u, expected %u",
		               b->where, type, want);
	}
	return CB_OK;
}

cb_status_t cb_boot_parse_hostport(const char *s, char *host, size_t host_bytes,
                                   char *port, size_t port_bytes)
{
	const char *colon, *h = s;
	size_t hl;

	if (s[0] == '[') {
		const char *end = strchr(s, ']');
		if (!end || end[1] != ':')
			goto bad;
		h = s + 1;
		hl = (size_t)(end - h);
		colon = end + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			goto bad;
		hl = (size_t)(colon - s);
	}
	char *endp;
	long p = strtol(colon + 1, &endp, 10);
	if (hl == 0 || hl >= host_bytes || *endp || colon[1] == '\0' || p < 1 ||
	    p > 65535)
		goto bad;
	memcpy(host, h, hl);
	host[hl] = '\0';
	snprintf(port, port_bytes, "%ld", p);
	return CB_OK;
bad:
	return cb_fail(CB_ERR_USAGE,
	               "rendezvous '%s' is not HOST:PORT (port 1-65535)", s);
}

static cb_status_t boot_serve(const struct cb_boot_cfg *cfg, struct cb_boot *b,
                              struct sockaddr_storage *sa, socklen_t *sl)
{
	struct server *srv = calloc(1, sizeof(*srv));

	if (!srv)
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	srv->world = cfg->world;
	srv->timeout_s = cfg->timeout_s;
	srv->listen_fd = cfg->listen_fd;
	if (getrandom(&srv->job_id, sizeof(srv->job_id), 0) !=
	    sizeof(srv->job_id))
		srv->job_id = cb_now_ns() ^ ((uint64_t)getpid() << 32);
	if (srv->listen_fd < 0 &&
	    cb_sock_listen((struct sockaddr *)sa, *sl, &srv->listen_fd)) {
		int e = errno;
		free(srv);
		return cb_fail(CB_ERR_SYS,
		               "cannot serve the rendezvous on %s:%s: %s%s",
		               cfg->host, cfg->port, strerror(e),
		               e == EADDRNOTAVAIL ? " (rank 0 must run on "
		                                    "the rendezvous host)"
		                                  : "");
	}
	/* Connect our own client to where the listener really is. */
	*sl = sizeof(*sa);
	getsockname(srv->listen_fd, (struct sockaddr *)sa, sl);
	if (sa->ss_family == AF_INET &&
	    ((struct sockaddr_in *)sa)->sin_addr.s_addr == htonl(INADDR_ANY))
		((struct sockaddr_in *)sa)->sin_addr.s_addr =
		    htonl(INADDR_LOOPBACK);
	cb_sock_set_nonblock(srv->listen_fd, 1);
	if (pthread_create(&srv->thread, NULL, srv_main, srv)) {
		close(srv->listen_fd);
		free(srv);
		return cb_fail(CB_ERR_SYS,
		               "cannot start the rendezvous thread");
	}
	b->srv = srv;
	return CB_OK;
}

cb_status_t cb_boot_open(const struct cb_boot_cfg *cfg, struct cb_boot **out)
{
	struct cb_boot *b = calloc(1, sizeof(*b));
	struct sockaddr_storage sa;
	socklen_t sl = sizeof(sa);
	cb_status_t st;
	int err = 0;

	if (!b)
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	b->fd = -1;
	b->rank = cfg->rank;
	b->world = cfg->world;
	b->timeout_s = cfg->timeout_s;
	snprintf(b->where, sizeof(b->where), "the rendezvous at %s:%s",
	         cfg->host, cfg->port);
	if (cfg->listen_fd < 0 || cfg->rank != 0) {
		st = cb_sock_resolve(cfg->host, cfg->port, &sa, &sl);
		if (st)
			goto fail;
	}
	if (cfg->rank == 0 && (st = boot_serve(cfg, b, &sa, &sl)))
		goto fail;

	st = cb_sock_connect((struct sockaddr *)&sa, sl, boot_deadline(b),
	                     &b->fd, &err);
	if (st == CB_ERR_TIMEOUT) {
		st = cb_fail(CB_ERR_TIMEOUT,
		             "%s did not answer within %g s (%s; is rank 0 "
		             "running there?)",
		             b->where, b->timeout_s,
		             err ? strerror(err) : "no answer");
		goto fail;
	} else if (st) {
		st =
		    cb_fail(st, "cannot reach %s: %s", b->where, strerror(err));
		goto fail;
	}
	struct sockaddr_storage me;
	socklen_t ml = sizeof(me);
	char ipport[80];
	getsockname(b->fd, (struct sockaddr *)&me, &ml);
	cb_sock_ntop((struct sockaddr *)&me, ipport, sizeof(ipport));
	*strrchr(ipport, ':') = '\0';
	snprintf(b->local_ip, sizeof(b->local_ip), "%.63s",
	         ipport[0] == '[' ? ipport + 1 : ipport);
	if (b->local_ip[strlen(b->local_ip) - 1] == ']')
		b->local_ip[strlen(b->local_ip) - 1] = '\0';

	struct boot_hello h = {.rank = (int32_t)htonl((uint32_t)cfg->rank),
	                       .world = (int32_t)htonl((uint32_t)cfg->world),
	                       .pid = (int32_t)htonl((uint32_t)getpid())};
	snprintf(h.host, sizeof(h.host), "%s", cfg->hostname);
	if ((st = boot_send(b, MSG_HELLO, NULL, &h, sizeof(h))))
		goto fail;
	uint8_t *val;
	uint32_t vb;
	if ((st = boot_expect(b, MSG_WELCOME,
	                      "the rendezvous to admit this "
	                      "rank",
	                      &val, &vb)))
		goto fail;
	if (vb == sizeof(b->job_id))
		memcpy(&b->job_id, val, sizeof(b->job_id));
	free(val);
	*out = b;
	return CB_OK;
fail:
	cb_boot_close(b);
	return st;
}

const char *cb_boot_abort_line(const struct cb_boot *b)
{
	return b->aborted ? b->abort_line : NULL;
}

uint64_t cb_boot_job_id(const struct cb_boot *b)
{
	return b->job_id;
}

int cb_boot_local_addr(const struct cb_boot *b, char *ip, size_t ip_bytes)
{
	snprintf(ip, ip_bytes, "%s", b->local_ip);
	return 0;
}

cb_status_t cb_boot_set(struct cb_boot *b, const char *key, const void *val,
                        size_t bytes)
{
	if (strlen(key) > BOOT_KEY_MAX || bytes > BOOT_VAL_MAX)
		return cb_fail(CB_ERR_INVALID,
		               "bootstrap key or value too big");
	return boot_send(b, MSG_SET, key, val, (uint32_t)bytes);
}

cb_status_t cb_boot_get(struct cb_boot *b, const char *key, void *val,
                        size_t cap, size_t *bytes)
{
	char what[BOOT_KEY_MAX + 32];
	uint8_t *v;
	uint32_t vb;
	cb_status_t st;

	snprintf(what, sizeof(what), "key '%s'", key);
	if ((st = boot_send(b, MSG_GET, key, NULL, 0)) ||
	    (st = boot_expect(b, MSG_VALUE, what, &v, &vb)))
		return st;
	if (vb > cap) {
		free(v);
		return cb_fail(CB_ERR_TRUNCATE,
		               "bootstrap value of '%s' has %u "
		               "bytes, expected at most %zu",
		               key, vb, cap);
	}
	memcpy(val, v, vb);
	*bytes = vb;
	free(v);
	return CB_OK;
}

static cb_status_t boot_gather(struct cb_boot *b, const char *what,
                               const void *mine, size_t bytes, void *all)
{
	char key[64], prefix[48];
	uint32_t n = htonl((uint32_t)b->world);
	uint8_t *v;
	uint32_t vb;
	cb_status_t st;

	snprintf(prefix, sizeof(prefix), "g/%u/", b->seq++);
	snprintf(key, sizeof(key), "%s%d", prefix, b->rank);
	if ((st = cb_boot_set(b, key, mine, bytes)) ||
	    (st = boot_send(b, MSG_GATHER, prefix, &n, sizeof(n))) ||
	    (st = boot_expect(b, MSG_VALUE, what, &v, &vb)))
		return st;
	if (vb != (uint32_t)b->world * (4 + bytes)) {
		free(v);
		return cb_fail(CB_ERR_PROTO,
		               "ranks disagree on the size of a bootstrap "
		               "allgather (%u bytes for %d ranks of %zu)",
		               vb, b->world, bytes);
	}
	for (int r = 0; r < b->world; r++)
		memcpy((char *)all + (size_t)r * bytes,
		       v + (size_t)r * (4 + bytes) + 4, bytes);
	free(v);
	return CB_OK;
}

cb_status_t cb_boot_allgather(struct cb_boot *b, const void *mine, size_t bytes,
                              void *all)
{
	return boot_gather(b, "every rank's contribution to an allgather", mine,
	                   bytes, all);
}

cb_status_t cb_boot_barrier(struct cb_boot *b)
{
	char *all = malloc((size_t)b->world);
	cb_status_t st;
	char one = 1;

	if (!all)
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	st = boot_gather(b, "every rank to reach a barrier", &one, 1, all);
	free(all);
	return st;
}

cb_status_t cb_boot_check(struct cb_boot *b, int grace_ms, int *origin)
{
	struct pollfd p = {.fd = b->fd, .events = POLLIN};
	uint32_t type;
	uint8_t *val;
	uint32_t vb;
	cb_status_t st;

	if (origin)
		*origin = b->abort_origin;
	if (b->aborted)
		return CB_ERR_ABORTED;
	if (b->fd < 0 || poll(&p, 1, grace_ms) <= 0)
		return CB_OK;
	/* Between collectives the store sends only ABORT; anything else that
	 * arrives (or EOF) is a failure too. */
	st = boot_recv(b, cb_now_ns() + 1000000000ull, "the job to finish",
	               &type, &val, &vb);
	if (origin)
		*origin = b->abort_origin;
	if (st == CB_OK) {
		free(val);
		return cb_fail(CB_ERR_PROTO, "%s sent an unexpected message",
		               b->where);
	}
	if (st == CB_ERR_PEER)
		b->abort_origin = 0;
	if (origin)
		*origin = b->aborted ? b->abort_origin : 0;
	return st;
}

void cb_boot_abort(struct cb_boot *b, const char *why)
{
	int32_t me = (int32_t)htonl((uint32_t)b->rank);
	struct boot_hdr h;
	uint32_t len = (uint32_t)strlen(why);
	uint64_t dl = cb_now_ns() + 1000000000ull;
	int err;

	if (b->fd < 0 || b->aborted || b->sent_abort)
		return;
	/* Best effort, and not through boot_send: its failure must not
	 * replace the line that explains the original failure. */
	h = (struct boot_hdr){htonl(BOOT_MAGIC), htonl(MSG_ABORT), htonl(4),
	                      htonl(len)};
	if (!cb_sock_send_all(b->fd, &h, sizeof(h), dl, &err) &&
	    !cb_sock_send_all(b->fd, &me, 4, dl, &err))
		cb_sock_send_all(b->fd, why, len, dl, &err);
	b->sent_abort = 1;
}

void cb_boot_close(struct cb_boot *b)
{
	if (!b)
		return;
	if (b->fd >= 0) {
		if (!b->aborted && !b->sent_abort) {
			struct boot_hdr h = {htonl(BOOT_MAGIC), htonl(MSG_BYE),
			                     0, 0};
			int err;
			cb_sock_send_all(b->fd, &h, sizeof(h),
			                 cb_now_ns() + 1000000000ull, &err);
		}
		if (b->srv) {
			/* Keep serving until everyone said goodbye. */
			atomic_store(&b->srv->stop, 1);
			pthread_join(b->srv->thread, NULL);
		}
		close(b->fd);
	} else if (b->srv) {
		atomic_store(&b->srv->stop, 1);
		b->srv->aborted = 1;
		pthread_join(b->srv->thread, NULL);
	}
	if (b->srv)
		srv_free(b->srv);
	free(b);
}
