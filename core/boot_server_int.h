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
	uint8_t *in; /* a message not whole yet (NULL between messages) */
	size_t in_bytes, in_cap;
	struct boot_outq out; /* replies it has not taken yet */
	/* A rank behind a host's relay (core/boot_relay.h) has no socket of
	 * its own (fd -1): its bytes come and go as FWD on connection @via,
	 * channel @chan.  -1: a connection of its own. */
	int via;
	uint32_t chan;
	/* A host's relay (rank -1 all the same): relay_rank and host its
	 * leader's (from RELAY), vc[chan] the client index of channel chan
	 * (-1 none yet, -2 gone). */
	int relay, relay_rank;
	int *vc, nvc;
	/* A relay's answer staged for several of its clients: every channel
	 * in mc_chan gets mc_body, sent as one FWDM (boot_srv_mc_flush), so
	 * a gather's answer crosses to a host once, not once per rank. */
	struct boot_sbuf *mc_body;
	uint32_t *mc_chan;
	int mc_n, mc_cap;
};

/* The client still speaks to the store, on its socket or through a relay. */
static inline int boot_cl_live(const struct client *c)
{
	return c->fd >= 0 || c->via >= 0;
}

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
	int *mc_relays; /* relays with an answer staged (repeats allowed) */
	int n_mc, cap_mc;
	/* What one read takes from a socket: parsed where it lies, so a
	 * client keeps no buffer of its own between messages. */
	uint8_t scratch[65536];
};

/* ---- core/boot_requests.c ---- */

/* Client @ci's connection ended: a rank that did not say goodbye died. */
void boot_srv_eof(struct boot_server *srv, int ci);
/* A new client, @fd its socket (-1: a rank behind a relay); its index, or
 * -1.  It may move every client: hold indexes, not pointers, across it. */
int boot_srv_add_client(struct boot_server *srv, int fd, const char *addr);
/* Bytes @p[0..@n) arrived from client @ci (a socket read, or a relay's FWD):
 * its whole messages handled where they lie, only an unfinished one's
 * bytes kept in its input (so a client holds no buffer between messages).
 * Returns -1 when the client was dropped. */
int boot_srv_feed(struct boot_server *srv, int ci, const uint8_t *p, size_t n);

/* Close client @c and forget what it waited for. */
void boot_srv_drop(struct boot_server *srv, struct client *c);
/* A client of relay @ci (channel @chan) sent @bytes (0: it closed). */
void boot_srv_forward(struct boot_server *srv, int ci, uint32_t chan,
                      const uint8_t *bytes, uint32_t n);
/* The store's answer to client @ci (boot_answer_fn).  For a rank behind a
 * relay it is staged, to go once to all of that relay's ranks that get the
 * same answer: boot_srv_mc_flush sends what is staged. */
void boot_srv_answer(void *ctx, int ci, struct boot_sbuf *body);
void boot_srv_mc_flush(struct boot_server *srv);
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
