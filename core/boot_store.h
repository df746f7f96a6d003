/* SPDX-License-Identifier: MIT */
/*
 * core/boot_store.h - the parts of the rendezvous store that know nothing of
 * sockets' owners: counted byte buffers and a client's queue of them, and the
 * keys with the GETs and gathers that wait on them (core/boot_store.c).
 * Internal to core/boot_server.c (and its tests).
 */
#ifndef CB_CORE_BOOT_STORE_H
#define CB_CORE_BOOT_STORE_H

#include <stddef.h>
#include <stdint.h>

/* Bytes on their way to clients; one answer to a gather is shared by every
 * client it goes to (built once, counted). */
struct boot_sbuf {
	int refs;
	uint32_t bytes;
	uint8_t data[];
};

struct boot_sbuf *boot_sbuf_new(size_t bytes);
void boot_sbuf_put(struct boot_sbuf *b);
/* A whole message: header, key, value. */
struct boot_sbuf *boot_msg_new(uint32_t type, const void *key,
                               uint32_t key_bytes, const void *val,
                               uint32_t val_bytes);

/* What one client has not taken yet, oldest first: the store never waits on
 * one client's socket while others wait on the store. */
struct boot_outq {
	struct boot_oseg {
		struct boot_sbuf *b;
		uint32_t off;
	} * seg;
	int head, n, cap;
	uint64_t stuck_ns; /* since when nothing has moved; 0: empty */
};

/* Queue @b (counted) and write what @fd takes now.  -1 out of memory. */
int boot_outq_push(struct boot_outq *q, int fd, struct boot_sbuf *b);
/* Write what @fd takes now.  A failed write clears the queue (the reader
 * of that socket then sees it end). */
void boot_outq_flush(struct boot_outq *q, int fd);
void boot_outq_clear(struct boot_outq *q);
static inline int boot_outq_pending(const struct boot_outq *q)
{
	return q->head < q->n;
}

/* ---- keys, and what waits on them ---- */

struct boot_kv;

/* How the store answers client @client with the value @body (a VALUE's
 * payload; the callee takes its own reference). */
typedef void (*boot_answer_fn)(void *ctx, int client, struct boot_sbuf *body);

struct boot_kv *boot_kv_new(int world, boot_answer_fn answer, void *ctx);
void boot_kv_free(struct boot_kv *kv);
/* SET: answers the GETs and gathers it completes. */
void boot_kv_set(struct boot_kv *kv, const char *key, const void *val,
                 uint32_t bytes);
/* GET: answered now, or when the key is set. */
void boot_kv_get(struct boot_kv *kv, int client, const char *key);
/* GATHER of keys "<prefix>0".."<prefix>n-1" (@req: struct
 * boot_gather_req, or its first member alone, in network order). */
void boot_kv_gather(struct boot_kv *kv, int client, const char *prefix,
                    const void *req, uint32_t bytes);
/* Answer the gathers whose deadline passed; 1 while some wait with one. */
int boot_kv_timers(struct boot_kv *kv, uint64_t now_ns);
/* @client is gone: nothing waits for it any more. */
void boot_kv_forget_client(struct boot_kv *kv, int client);
int boot_kv_has(struct boot_kv *kv, const char *key);
void boot_kv_stats(struct boot_kv *kv, size_t *keys, uint64_t *replies);

#endif
