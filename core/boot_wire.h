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

#endif
