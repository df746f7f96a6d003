/* SPDX-License-Identifier: MIT */
/*
 * core/boot_wire.h - the rendezvous wire format, shared by the store
 * (core/boot_server.c) and its clients (core/bootstrap.c); internal.
 *
 * A message is a 16-byte header {magic, type, key bytes, value bytes} in
 * network order, then the key, then the value.
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
};

struct boot_hdr {
	uint32_t magic, type, key_bytes, val_bytes;
};

struct boot_hello {
	int32_t rank, world, pid;
	char host[64];
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
 * NUL-terminated and printable. */
int boot_hello_decode(const void *val, size_t bytes, struct boot_hello *h);
/* Two network-order int32 (ABORT's key); -1 unless @key_bytes is 8. */
int boot_pair_decode(const void *key, size_t key_bytes, int32_t pair[2]);
/* A status sent by a peer: a known error, else CB_ERR_PEER. */
cb_status_t boot_status_decode(int32_t v);
/* A GATHER reply, @world records [u32 length, value], into @world values of
 * @bytes at @all; -1 when any record is not @bytes long. */
int boot_gather_unpack(const uint8_t *v, size_t vb, int world, size_t bytes,
                       void *all);
/* Control characters of a line from the wire become spaces. */
void boot_line_clean(char *s);

/* ---- the store (core/boot_server.c) ---- */

struct boot_server;

/* Serve the store on @listen_fd (bound and listening; now the server's) for
 * @world ranks, from a thread of its own. */
cb_status_t boot_server_start(int listen_fd, int world, double timeout_s,
                              struct boot_server **out);
/* Into @out, the ranks among 0..@n-1 that have not set "<prefix><rank>"
 * yet, marked when they never connected (rank 0's view of a stuck
 * allgather). */
void boot_server_missing(struct boot_server *srv, const char *prefix, int n,
                         char *out, size_t bytes);
/* Stop and free.  @drain: first wait (to the deadline) until every rank has
 * said goodbye, so nobody loses the store while still using it. */
void boot_server_stop(struct boot_server *srv, int drain);

/* For the fuzz target: a store with no thread, no listener and no deadline
 * (a reply that does not fit is dropped), fed by hand.  boot_server_add
 * takes a connected socket and returns its client index; boot_server_input
 * handles @bytes as if they arrived from client @ci (0 bytes: it closed),
 * then decides held stall reports at once. */
cb_status_t boot_server_detached(int world, struct boot_server **out);
int boot_server_add(struct boot_server *srv, int fd);
void boot_server_input(struct boot_server *srv, int ci, const void *buf,
                       size_t bytes);
void boot_server_free(struct boot_server *srv);

/* ---- a client (core/bootstrap.c) ---- */

struct cb_boot;
struct cb_boot_cfg;

/* For the fuzz target: cb_boot_open on an already connected @fd (now the
 * client's): HELLO, then WELCOME expected. */
cb_status_t boot_client_on_fd(const struct cb_boot_cfg *cfg, int fd,
                              struct cb_boot **out);

#endif
