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
 *
 * A host's relay (core/boot_relay.h) opens with RELAY, then carries its
 * ranks' bytes as FWD {channel} both ways; an answer the store has for
 * several ranks of one relay goes down once, as FWDM.
 */
#ifndef CB_CORE_BOOT_WIRE_H
#define CB_CORE_BOOT_WIRE_H

#include <stddef.h>
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
	MSG_FWD,   /* a host's relay (core/boot_relay.h): key u32 channel,
	            * value that client's bytes; empty: it closed */
	MSG_RELAY, /* a relay's first message: struct boot_relay_hello */
	MSG_FWDM,  /* the store to a relay: the same bytes for several of its
	            * clients; value u32 n, n u32 channels, then the bytes */
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

/* Who keeps a host's relay (its local rank 0), so the store can name it. */
struct boot_relay_hello {
	int32_t rank;
	char host[64];
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

/* One framed message; key and val point into the buffer it came from. */
struct boot_in {
	struct boot_hdr h; /* host order */
	char key[BOOT_KEY_MAX + 1];
	const uint8_t *key_raw; /* the key's bytes as sent (ABORT's pair) */
	const uint8_t *val;
};

/* ---- decoding (core/boot_wire.c; pure, so the fuzz targets call it) ---- */

void boot_hdr_encode(struct boot_hdr *wire, uint32_t type, uint32_t key_bytes,
                     uint32_t val_bytes);
/* @buf holds sizeof(struct boot_hdr) bytes.  Fills @h (host order) and
 * returns 0, or -1 when the magic is not ours or a length is above its
 * limit.  The type is not checked here. */
int boot_hdr_decode(const void *buf, struct boot_hdr *h);
/* The first message in @in[0..@len): its length (and @m), 0 when it is not
 * all there yet, -1 when its header does not parse (@m->h as decoded). */
long boot_frame(const uint8_t *in, size_t len, struct boot_in *m);
/* HELLO's value: -1 unless it is exactly a struct boot_hello; the host is
 * NUL-terminated and printable, the token NUL-terminated. */
int boot_hello_decode(const void *val, size_t bytes, struct boot_hello *h);
/* Two network-order int32 (ABORT's key); -1 unless @key_bytes is 8. */
int boot_pair_decode(const void *key, size_t key_bytes, int32_t pair[2]);
/* A status sent by a peer: a known error, else CB_ERR_PEER. */
cb_status_t boot_status_decode(int32_t v);
/* Control characters of a line from the wire become spaces. */
void boot_line_clean(char *s);

/* ---- the store (core/boot_server.c) ---- */

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

/* For the fuzz target: a store with no thread and no listener, fed by
 * hand, for a job whose token is @token.  boot_server_add takes a connected
 * non-blocking socket and returns its client index; boot_server_input handles
 * @bytes as if they arrived from client @ci (0 bytes: it closed), then writes
 * what the sockets take (boot_server_flush); boot_server_expire acts as if an
 * hour passed: held stall reports are decided, gathers with a deadline
 * answered. */
cb_status_t boot_server_detached(int world, const char *token,
                                 struct boot_server **out);
int boot_server_add(struct boot_server *srv, int fd);
void boot_server_input(struct boot_server *srv, int ci, const void *buf,
                       size_t bytes);
void boot_server_flush(struct boot_server *srv);
void boot_server_expire(struct boot_server *srv);
void boot_server_free(struct boot_server *srv);

/* ---- a client (core/bootstrap.c) ---- */

struct cb_boot;
struct cb_boot_cfg;

/* For the fuzz target: cb_boot_open on an already connected @fd (now the
 * client's): HELLO, then WELCOME expected. */
cb_status_t boot_client_on_fd(const struct cb_boot_cfg *cfg, int fd,
                              struct cb_boot **out);

#endif
