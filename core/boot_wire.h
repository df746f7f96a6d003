/* SPDX-License-Identifier: MIT */
/*
 * core/boot_wire.h - the rendezvous wire format, shared by the store
 * (core/boot_server.c) and its clients (core/bootstrap.c); internal.
 *
 * A message is a 16-byte header {magic, type, key bytes, value bytes} in
 * network order, then the key, then the value.
 *
 * GATHER's value is struct boot_gather_req (or, the short form, its first
 * member alone: every one of the n ranks waits for the answer).  Its answer
 * is one VALUE of n entries {u32 bytes, value}; in an answer given at the
 * request's deadline, an entry whose key never came has bytes
 * BOOT_ABSENT and no value.
 */
#ifndef CB_CORE_BOOT_WIRE_H
#define CB_CORE_BOOT_WIRE_H

#include <stdint.h>

#include <collbench/status.h>

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

#define BOOT_TOKEN_MAX 64u
#define BOOT_ABSENT    0xffffffffu

struct boot_hello {
	int32_t rank, world, pid;
	char host[64];
	char token[BOOT_TOKEN_MAX]; /* the job's secret; "" none */
};

/* A gather of keys "<prefix>0" .. "<prefix>n-1" (network order). */
struct boot_gather_req {
	uint32_t n;          /* keys */
	uint32_t waiters;    /* ranks that send this GATHER: the keys are
	                      * forgotten once every one has its answer */
	uint32_t timeout_ms; /* 0: wait for every key; else answer at this
	                      * deadline with what is there */
	uint32_t idle_ms;    /* with timeout_ms: answer as well once no key
	                      * came for this long (the late ones are gone);
	                      * 0: no such rule */
};

struct boot_server;

/* Serve the store on @listen_fd (bound and listening; now the server's) for
 * @world ranks, from a thread of its own.  @token: the job's secret, which
 * every client must present (NULL or "": anyone who reaches the port may
 * join, as before tokens). */
cb_status_t boot_server_start(int listen_fd, int world, double timeout_s,
                              const char *token, struct boot_server **out);
/* Into @out, the ranks among 0..@n-1 that have not set "<prefix><rank>"
 * yet, marked when they never connected (rank 0's view of a stuck
 * allgather). */
void boot_server_missing(struct boot_server *srv, const char *prefix, int n,
                         char *out, size_t bytes);
/* Keys the store holds now, and how many gather answers it has built. */
void boot_server_stats(struct boot_server *srv, size_t *keys,
                       uint64_t *replies);
/* Rank 0 knows @rank is gone (cut off): closing does not wait for its
 * goodbye. */
void boot_server_gone(struct boot_server *srv, int rank);
/* Stop and free.  @drain: first wait (to the deadline) until every rank has
 * said goodbye, so nobody loses the store while still using it. */
void boot_server_stop(struct boot_server *srv, int drain);

#endif
