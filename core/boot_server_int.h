/* SPDX-License-Identifier: MIT */
/*
 * core/boot_server_int.h - the rendezvous store's state, shared by its two
 * halves: core/boot_server.c (the thread: sockets, the poll loop, timers,
 * start and stop) and core/boot_requests.c (what the store does with each
 * message a rank sends).  Inside core only.
 */
#ifndef CB_CORE_BOOT_SERVER_INT_H
#define CB_CORE_BOOT_SERVER_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/boot_store.h"
#include "core/boot_wire.h"

struct client {
	int fd;
	int rank; /* -1 until HELLO */
	int bye;
	char addr[64];
	char host[64];
	uint8_t *in;
	size_t in_bytes, in_cap;
	struct boot_outq out; /* replies it has not taken yet */
};

struct boot_server {
	int listen_fd;
	int world;
	uint64_t job_id;
	double timeout_s;
	char token[BOOT_TOKEN_MAX];
	struct boot_kv *kv;
	struct client *clients;
	int nclients, cap_clients;
	int aborted;
	int byes;
	int gone; /* ranks rank 0 said not to wait for (boot_server_gone) */
	/* Stall reports ("rank R waits for rank B") held for a moment, so the
	 * one at the end of a chain of waiting ranks is the one told. */
	struct stall {
		int origin, blame;
		char line[600];
	} * stalls;
	int nstalls;
	uint64_t decide_ns;
	int stall_ms;    /* tests: sleep at the first ABORT (srv_main) */
	atomic_int stop; /* rank 0 is closing */
	/* Held while the thread changes clients or keys, so rank 0's own
	 * client can ask who is missing (boot_server_missing). */
	pthread_mutex_t lock;
	pthread_t thread;
};

/* ---- core/boot_requests.c ---- */

/* Close client @c and forget what it waited for. */
void boot_srv_drop(struct boot_server *srv, struct client *c);
/* Parse what arrived from client @ci; returns -1 when it was dropped. */
int boot_srv_parse(struct boot_server *srv, int ci);
/* The store's answer to client @ci (boot_answer_fn). */
void boot_srv_answer(void *ctx, int ci, struct boot_sbuf *body);
/* Tell every rank, @origin too, that the job failed with @status. */
void boot_srv_abort_all(struct boot_server *srv, int origin, int status,
                        const char *why);
/* The store's own verdict on a rank (origin -1, CB_ERR_PEER): one line. */
void boot_srv_abortf(struct boot_server *srv, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
/* The stall reports held for a moment: tell everyone the one that blames a
 * rank that itself reported nothing. */
void boot_srv_stall_decide(struct boot_server *srv);

#endif
