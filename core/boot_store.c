/* SPDX-License-Identifier: MIT */
/*
 * core/boot_store.c - the store's keys and what waits on them, and the byte
 * queues its answers travel in.
 *
 * A gather's answer is built once, when its last key arrives, and shared by
 * every waiter (a world of values to a world of ranks is one buffer, not a
 * world of copies); once every waiter has it, its keys are forgotten, so a
 * long run's store holds only what is still wanted.  A gather with a
 * deadline (boot_gather_req.timeout_ms) is answered then with what is there,
 * absent keys marked; keys that come after that are dropped as they come.
 * Keys are found by hash; a SET finds the gather it completes by prefix,
 * and gathers count their keys, so a SET costs the number of open gathers,
 * not the number of keys.
 */
#include "core/boot_store.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "core/boot_wire.h"
#include "core/log.h"
#include "core/mem.h"

struct kv {
	struct kv *next;
	char *key;
	void *val;
	uint32_t bytes;
};

static void kv_entry_free(struct kv *e)
{
	cb_free_all(e->key, e->val, e);
}

/* A client waiting for a key (GET). */
struct waiter {
	struct waiter *next;
	int client;
	char key[BOOT_KEY_MAX + 1];
};

/* One gather: keys "<prefix>0" .. "<prefix>n-1", the clients waiting for
 * them, and the answer, built once when the last key arrives. */
struct gather {
	struct gather *next;
	char prefix[BOOT_KEY_MAX + 1];
	uint32_t n, waiters, answered, have;
	int closed; /* answered at a deadline: keys that come late go */
	struct boot_sbuf *reply;
	struct gwait {
		int client;
		uint64_t deadline_ns; /* 0: none */
		uint64_t cap_ns;      /* the absolute deadline */
		uint64_t idle_ns;     /* pushed back this far by each key */
	} * wait;
	int nwait, cap_wait;
};

#define KV_BUCKETS 4096

struct boot_kv {
	int world;
	boot_answer_fn answer;
	void *ctx;
	struct kv *kv[KV_BUCKETS];
	size_t nkeys;     /* live keys, for the tests of forgetting */
	uint64_t replies; /* gather answers built (once per gather) */
	struct waiter *waiters;
	struct gather *gathers;
};

/* ---- byte buffers and queues ---- */

struct boot_sbuf *boot_sbuf_new(size_t bytes)
{
	struct boot_sbuf *b = malloc(sizeof(*b) + (bytes ? bytes : 1));

	if (b) {
		b->refs = 1;
		b->bytes = (uint32_t)bytes;
	}
	return b;
}

void boot_sbuf_put(struct boot_sbuf *b)
{
	if (b && --b->refs == 0)
		free(b);
}

struct boot_sbuf *boot_msg_new(uint32_t type, const void *key,
                               uint32_t key_bytes, const void *val,
                               uint32_t val_bytes)
{
	struct boot_sbuf *b =
	        boot_sbuf_new(sizeof(struct boot_hdr) + key_bytes + val_bytes);
	struct boot_hdr h;

	if (!b)
		return NULL;
	boot_hdr_encode(&h, type, key_bytes, val_bytes);
	memcpy(b->data, &h, sizeof(h));
	if (key_bytes)
		memcpy(b->data + sizeof(h), key, key_bytes);
	if (val_bytes)
		memcpy(b->data + sizeof(h) + key_bytes, val, val_bytes);
	return b;
}

void boot_outq_clear(struct boot_outq *q)
{
	for (int i = q->head; i < q->n; i++)
		boot_sbuf_put(q->seg[i].b);
	free(q->seg);
	*q = (struct boot_outq){ 0 };
}

void boot_outq_flush(struct boot_outq *q, int fd)
{
	while (fd >= 0 && q->head < q->n) {
		struct boot_oseg *s = &q->seg[q->head];
		ssize_t n = send(fd, s->b->data + s->off, s->b->bytes - s->off,
		                 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			s->off += (uint32_t)n;
			q->stuck_ns = cb_now_ns();
			if (s->off == s->b->bytes) {
				boot_sbuf_put(s->b);
				q->head++;
			}
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		boot_outq_clear(q);
		return;
	}
	if (q->head == q->n) {
		q->head = q->n = 0;
		q->stuck_ns = 0;
	}
}

int boot_outq_push(struct boot_outq *q, int fd, struct boot_sbuf *b)
{
	if (q->n == q->cap && q->head > 0) {
		memmove(q->seg, q->seg + q->head,
		        (size_t)(q->n - q->head) * sizeof(*q->seg));
		q->n -= q->head;
		q->head = 0;
	}
	if (q->n == q->cap) {
		int cap = q->cap ? q->cap * 2 : 8;
		struct boot_oseg *s = realloc(q->seg, (size_t)cap * sizeof(*s));
		if (!s)
			return -1;
		q->seg = s;
		q->cap = cap;
	}
	b->refs++;
	q->seg[q->n++] = (struct boot_oseg){ .b = b, .off = 0 };
	if (!q->stuck_ns)
		q->stuck_ns = cb_now_ns();
	boot_outq_flush(q, fd);
	return 0;
}

/* ---- keys ---- */

static unsigned kv_hash(const char *s)
{
	unsigned h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h % KV_BUCKETS;
}

static struct kv *kv_find(struct boot_kv *srv, const char *key)
{
	for (struct kv *e = srv->kv[kv_hash(key)]; e; e = e->next)
		if (!strcmp(e->key, key))
			return e;
	return NULL;
}

/* 1 when @key is new, 0 when replaced, -1 out of memory. */
static int kv_put(struct boot_kv *srv, const char *key, const void *val,
                  uint32_t bytes)
{
	struct kv *e = kv_find(srv, key);
	void *copy = malloc(bytes ? bytes : 1);
	int fresh = !e;

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
		srv->nkeys++;
	} else {
		free(e->val);
	}
	e->val = copy;
	e->bytes = bytes;
	return fresh;
}

static void kv_del(struct boot_kv *srv, const char *key)
{
	for (struct kv **p = &srv->kv[kv_hash(key)]; *p; p = &(*p)->next)
		if (!strcmp((*p)->key, key)) {
			struct kv *e = *p;
			*p = e->next;
			kv_entry_free(e);
			srv->nkeys--;
			return;
		}
}

/* ---- gathers ---- */

/* The index of @key in @g ("<prefix><i>", i < n, no leading zeros), or -1. */
static long gather_index(const struct gather *g, const char *key)
{
	size_t pl = strlen(g->prefix);
	char *end;

	if (strncmp(key, g->prefix, pl) || !key[pl] ||
	    (key[pl] == '0' && key[pl + 1]) || key[pl] < '0' || key[pl] > '9')
		return -1;
	long i = strtol(key + pl, &end, 10);
	return *end || i < 0 || (uint32_t)i >= g->n ? -1 : i;
}

/* [u32 bytes, value] per key; BOOT_ABSENT for a key not there. */
static struct boot_sbuf *gather_build(struct boot_kv *srv,
                                      const struct gather *g)
{
	char key[BOOT_KEY_MAX + 16];
	size_t total = 0;
	struct boot_sbuf *b;

	for (uint32_t i = 0; i < g->n; i++) {
		snprintf(key, sizeof(key), "%s%u", g->prefix, i);
		struct kv *e = kv_find(srv, key);
		total += 4 + (e ? e->bytes : 0);
	}
	if (!(b = boot_sbuf_new(total)))
		return NULL;
	uint8_t *p = b->data;
	for (uint32_t i = 0; i < g->n; i++) {
		snprintf(key, sizeof(key), "%s%u", g->prefix, i);
		struct kv *e = kv_find(srv, key);
		uint32_t nb = htonl(e ? e->bytes : BOOT_ABSENT);
		memcpy(p, &nb, 4);
		if (e)
			memcpy(p + 4, e->val, e->bytes);
		p += 4 + (e ? e->bytes : 0);
	}
	return b;
}

/* Every waiter had its answer: the keys and the answer go.  A gather
 * answered at its deadline stays, closed, until its late keys have come
 * (and gone straight away). */
static void gather_forget(struct boot_kv *srv, struct gather *g)
{
	char key[BOOT_KEY_MAX + 16];

	for (uint32_t i = 0; i < g->n; i++) {
		snprintf(key, sizeof(key), "%s%u", g->prefix, i);
		kv_del(srv, key);
	}
	if (g->have < g->n) {
		g->closed = 1;
		boot_sbuf_put(g->reply);
		g->reply = NULL;
		return;
	}
	for (struct gather **p = &srv->gathers; *p; p = &(*p)->next)
		if (*p == g) {
			*p = g->next;
			break;
		}
	boot_sbuf_put(g->reply);
	free(g->wait);
	free(g);
}

/* Answer what can be answered now: everyone once every key is there, a
 * waiter whose deadline passed with what is there. */
static void gather_try(struct boot_kv *srv, struct gather *g, uint64_t now)
{
	if (g->have == g->n) {
		if (!g->reply) {
			if (!(g->reply = gather_build(srv, g)))
				return;
			srv->replies++;
		}
		for (int i = 0; i < g->nwait; i++)
			srv->answer(srv->ctx, g->wait[i].client, g->reply);
		g->answered += (uint32_t)g->nwait;
		g->nwait = 0;
	}
	for (int i = 0; i < g->nwait; i++) {
		if (!g->wait[i].deadline_ns || now < g->wait[i].deadline_ns)
			continue;
		struct boot_sbuf *part = gather_build(srv, g);
		if (!part)
			return;
		srv->answer(srv->ctx, g->wait[i].client, part);
		boot_sbuf_put(part);
		g->answered++;
		g->wait[i--] = g->wait[--g->nwait];
	}
	if (g->answered >= g->waiters)
		gather_forget(srv, g);
}

void boot_kv_gather(struct boot_kv *srv, int ci, const char *prefix,
                    const void *val, uint32_t bytes)
{
	struct boot_gather_req req = { 0 };
	struct gather *g;
	char key[BOOT_KEY_MAX + 16];

	if (bytes >= 4)
		memcpy(&req.n, val, 4);
	if (bytes >= sizeof(req))
		memcpy(&req, val, sizeof(req));
	else if (bytes >= 12)
		memcpy(&req, val, 12); /* without idle_ms */
	req.n = ntohl(req.n);
	req.waiters = bytes >= 12 ? ntohl(req.waiters) : req.n;
	req.timeout_ms = bytes >= 12 ? ntohl(req.timeout_ms) : 0;
	req.idle_ms = bytes >= sizeof(req) ? ntohl(req.idle_ms) : 0;
	if (req.n > (uint32_t)srv->world || req.waiters < 1)
		req.n = req.waiters = 1;
	for (g = srv->gathers; g && strcmp(g->prefix, prefix); g = g->next)
		;
	if (!g) {
		if (!(g = calloc(1, sizeof(*g))))
			return;
		snprintf(g->prefix, sizeof(g->prefix), "%s", prefix);
		g->n = req.n;
		g->waiters = req.waiters;
		/* Keys set before the first request count too. */
		for (uint32_t i = 0; i < g->n; i++) {
			snprintf(key, sizeof(key), "%s%u", g->prefix, i);
			g->have += kv_find(srv, key) != NULL;
		}
		g->next = srv->gathers;
		srv->gathers = g;
	}
	if (g->nwait == g->cap_wait) {
		int cap = g->cap_wait ? g->cap_wait * 2 : 8;
		struct gwait *w = realloc(g->wait, (size_t)cap * sizeof(*w));
		if (!w)
			return;
		g->wait = w;
		g->cap_wait = cap;
	}
	uint64_t now = cb_now_ns(), cap = 0, idle = 0;
	if (req.timeout_ms) {
		cap = now + req.timeout_ms * 1000000ull;
		idle = req.idle_ms * 1000000ull;
	}
	g->wait[g->nwait++] = (struct gwait){
		.client = ci,
		.deadline_ns = idle && now + idle < cap ? now + idle : cap,
		.cap_ns = cap,
		.idle_ns = idle,
	};
	gather_try(srv, g, cb_now_ns());
}

static void answer_value(struct boot_kv *srv, int client, const struct kv *e)
{
	struct boot_sbuf *b = boot_sbuf_new(e->bytes);

	if (!b)
		return;
	memcpy(b->data, e->val, e->bytes);
	srv->answer(srv->ctx, client, b);
	boot_sbuf_put(b);
}

void boot_kv_set(struct boot_kv *srv, const char *key, const void *val,
                 uint32_t bytes)
{
	int fresh = kv_put(srv, key, val, bytes);

	if (fresh < 0)
		return;
	for (struct waiter **w = &srv->waiters; *w;) {
		struct kv *e;
		if (strcmp((*w)->key, key) || !(e = kv_find(srv, key))) {
			w = &(*w)->next;
			continue;
		}
		struct waiter *done = *w;
		answer_value(srv, done->client, e);
		*w = done->next;
		free(done);
	}
	if (!fresh)
		return;
	for (struct gather *g = srv->gathers, *next; g; g = next) {
		next = g->next;
		if (gather_index(g, key) < 0)
			continue;
		g->have++;
		uint64_t now = cb_now_ns();
		for (int i = 0; i < g->nwait; i++) {
			struct gwait *w = &g->wait[i];
			if (w->idle_ns && now + w->idle_ns > w->deadline_ns)
				w->deadline_ns = now + w->idle_ns < w->cap_ns
				                         ? now + w->idle_ns
				                         : w->cap_ns;
		}
		if (g->closed) {
			kv_del(srv, key);
			if (g->have == g->n)
				gather_forget(srv, g);
			return;
		}
		gather_try(srv, g, cb_now_ns());
		return;
	}
}

void boot_kv_get(struct boot_kv *srv, int ci, const char *key)
{
	struct kv *e = kv_find(srv, key);
	struct waiter *w;

	if (e) {
		answer_value(srv, ci, e);
		return;
	}
	if (!(w = calloc(1, sizeof(*w))))
		return;
	w->client = ci;
	snprintf(w->key, sizeof(w->key), "%s", key);
	w->next = srv->waiters;
	srv->waiters = w;
}

int boot_kv_timers(struct boot_kv *srv, uint64_t now)
{
	int pending = 0;

	for (struct gather *g = srv->gathers, *next; g; g = next) {
		next = g->next;
		for (int i = 0; i < g->nwait; i++)
			if (g->wait[i].deadline_ns) {
				pending = 1;
				if (now >= g->wait[i].deadline_ns) {
					gather_try(srv, g, now);
					break;
				}
			}
	}
	return pending;
}

void boot_kv_forget_client(struct boot_kv *srv, int ci)
{
	for (struct waiter **w = &srv->waiters; *w;) {
		if ((*w)->client == ci) {
			struct waiter *dead = *w;
			*w = dead->next;
			free(dead);
		} else {
			w = &(*w)->next;
		}
	}
	for (struct gather *g = srv->gathers; g; g = g->next)
		for (int i = 0; i < g->nwait; i++)
			if (g->wait[i].client == ci)
				g->wait[i--] = g->wait[--g->nwait];
}

int boot_kv_has(struct boot_kv *srv, const char *key)
{
	return kv_find(srv, key) != NULL;
}

void boot_kv_stats(struct boot_kv *srv, size_t *keys, uint64_t *replies)
{
	*keys = srv->nkeys;
	*replies = srv->replies;
}

struct boot_kv *boot_kv_new(int world, boot_answer_fn answer, void *ctx)
{
	struct boot_kv *kv = calloc(1, sizeof(*kv));

	if (kv) {
		kv->world = world;
		kv->answer = answer;
		kv->ctx = ctx;
	}
	return kv;
}

void boot_kv_free(struct boot_kv *srv)
{
	if (!srv)
		return;
	while (srv->waiters) {
		struct waiter *w = srv->waiters;
		srv->waiters = w->next;
		free(w);
	}
	while (srv->gathers) {
		struct gather *g = srv->gathers;
		srv->gathers = g->next;
		boot_sbuf_put(g->reply);
		free(g->wait);
		free(g);
	}
	for (int b = 0; b < KV_BUCKETS; b++)
		for (struct kv *e = srv->kv[b], *n; e; e = n) {
			n = e->next;
			kv_entry_free(e);
		}
	free(srv);
}

const char *boot_kv_stuck_gather(struct boot_kv *srv)
{
	const char *oldest = NULL;

	/* newest first in the list: the last match is the oldest */
	for (struct gather *g = srv->gathers; g; g = g->next)
		if (!g->closed && g->nwait > 0 && g->have < g->n)
			oldest = g->prefix;
	return oldest;
}
