/* SPDX-License-Identifier: MIT */
/*
 * core/bootstrap.h - the rendezvous: a tiny TCP key-value store served by
 * rank 0, and the allgather and barrier built on it.
 *
 * Every rank (rank 0 too) is a client of the store.  The store doubles as the
 * job's failure detector: a client that disconnects without saying goodbye,
 * or that reports a failure, makes the server send ABORT to every other rank,
 * and ranks poll for that (cb_boot_check) in their wait loops.  So a dead rank
 * ends the job on every survivor even on transports (shm) that cannot see a
 * peer die.
 */
#ifndef CB_CORE_BOOTSTRAP_H
#define CB_CORE_BOOTSTRAP_H

#include <stddef.h>
#include <stdint.h>

#include <collbench/status.h>

struct cb_boot;

struct cb_boot_cfg {
	int rank, world;
	const char *host;     /* rendezvous host (name or address), or a
	                       * comma-separated list tried in order */
	const char *port;     /* rendezvous port */
	int listen_fd;        /* rank 0: an already bound listener, or -1 */
	double timeout_s;     /* deadline of every blocking step */
	const char *hostname; /* this rank's host, for messages */
	const char *token;    /* the job's secret; NULL: the process's
	                       * (cb_boot_set_job_token) */
	int relay;            /* CB_BOOT_DIRECT, or where this rank stands in
	                       * its host's relay (core/boot_relay.h) */
};

enum {
	CB_BOOT_DIRECT = 0, /* a connection of its own to the store */
	CB_BOOT_LEADER,     /* local rank 0: it relays its host's ranks */
	CB_BOOT_RELAYED,    /* another local rank: through local rank 0 */
};

/* The job token of this process's ranks (rank 0's store refuses a client
 * that does not present it; "" = none, anyone may join).  Set before
 * cb_boot_open; the local fork's children inherit it. */
void cb_boot_set_job_token(const char *token);
const char *cb_boot_job_token(void);

cb_status_t cb_boot_open(const struct cb_boot_cfg *cfg, struct cb_boot **boot);

/* Sends goodbye and closes; rank 0 first waits (to the deadline) for every
 * other rank's goodbye, so nobody loses the store while still using it. */
void cb_boot_close(struct cb_boot *boot);

/* Tell every other rank the job failed with @st: @why is the line they may
 * print, @st the status they exit with.  @blame: for a deadline that passed
 * while waiting for one rank, that rank (the store then looks for the rank
 * at the end of a chain of waiting ranks); else -1. */
void cb_boot_abort(struct cb_boot *boot, cb_status_t st, int blame,
                   const char *why);

uint64_t cb_boot_job_id(const struct cb_boot *boot);

cb_status_t cb_boot_set(struct cb_boot *boot, const char *key, const void *val,
                        size_t bytes);
/* Waits (to the deadline) until @key is set; CB_ERR_TRUNCATE when the value
 * is larger than @cap. */
cb_status_t cb_boot_get(struct cb_boot *boot, const char *key, void *val,
                        size_t cap, size_t *bytes);
/* Wait until @key is set, at most @timeout_s: CB_OK, or CB_ERR_TIMEOUT
 * (nothing recorded) after which the key is set by this rank, so the store
 * owes it nothing and the connection stays usable. */
cb_status_t cb_boot_wait_flag(struct cb_boot *boot, const char *key,
                              double timeout_s);
/* The same with a deadline of its own (@timeout_s from now) instead of the
 * run's: a rank that waits for rank 0 to finish a long stage.  After a
 * timeout the connection is no longer usable for requests. */
cb_status_t cb_boot_get_wait(struct cb_boot *boot, const char *key, void *val,
                             size_t cap, size_t *bytes, double timeout_s);
/* Every rank contributes @bytes at @mine; @all receives world * @bytes, in
 * rank order.  Every rank must call it with the same @bytes.  @what names
 * the wait in a timeout's message ("every rank to join"). */
cb_status_t cb_boot_allgather(struct cb_boot *boot, const char *what,
                              const void *mine, size_t bytes, void *all);
/* The same, gathered to rank 0 only: results meant for rank 0 do not travel
 * to everyone.  Ranks other than 0 return once their part is sent (@all
 * unused).  @partial_s > 0: rank 0 waits that long at most and takes what
 * arrived; @present (rank 0, may be NULL) gets 1 for each rank whose part
 * is in @all (the others' are zeroed).  With @partial_s 0 the run's
 * deadline applies, as in cb_boot_allgather. */
cb_status_t cb_boot_gather_root(struct cb_boot *boot, const char *what,
                                const void *mine, size_t bytes, void *all,
                                double partial_s, unsigned char *present);
/* The same, each rank's part of its own size, at most @max bytes: rank 0
 * gets the parts one after the other in rank order in *@all (its to free)
 * and each one's size in @lens[world] (the others: neither).  A large job
 * whose ranks mostly send a few bytes costs rank 0 that, not world * @max. */
cb_status_t cb_boot_gather_root_var(struct cb_boot *boot, const char *what,
                                    const void *mine, size_t bytes, size_t max,
                                    void **all, uint32_t *lens);
/* The same, answered as well once no rank's part came for @idle_s (the
 * ranks still missing then are taken as gone), @partial_s at the latest.
 * @gone (rank 0, may be NULL): ranks known to be gone, not waited for. */
cb_status_t cb_boot_gather_root_idle(struct cb_boot *boot, const char *what,
                                     const void *mine, size_t bytes, void *all,
                                     double partial_s, double idle_s,
                                     const unsigned char *gone,
                                     unsigned char *present);
cb_status_t cb_boot_barrier(struct cb_boot *boot);

/*
 * Non-blocking: CB_OK when the job is healthy, CB_ERR_ABORTED when another
 * rank failed (the reason is recorded with cb_fail), CB_ERR_PEER when the
 * store itself is gone.  @grace_ms > 0 waits up to that long for an abort
 * notice that may be on its way.  Sets *@origin to the rank that reported the
 * failure, or -1 when the server detected it (a rank vanished).
 */
cb_status_t cb_boot_check(struct cb_boot *boot, int grace_ms, int *origin);

/* Rank 0 (it serves the store): the keys the store holds now and the gather
 * answers it has built; CB_ERR_INVALID on other ranks.  For the tests. */
cb_status_t cb_boot_store_stats(const struct cb_boot *boot, size_t *keys,
                                uint64_t *replies);

/* Rank 0: @rank is known to be cut off; cb_boot_close does not wait for
 * its goodbye.  Elsewhere a no-op. */
void cb_boot_gone(struct cb_boot *boot, int rank);

/* The line of the ABORT this rank received, or NULL. */
const char *cb_boot_abort_line(const struct cb_boot *boot);

/* The local address this rank used to reach the store: the default
 * interface for transports that need one. */
int cb_boot_local_addr(const struct cb_boot *boot, char *ip, size_t ip_bytes);

/* Split "HOST:PORT" (or "[v6]:PORT"); CB_ERR_USAGE with a recorded line. */
cb_status_t cb_boot_parse_hostport(const char *s, char *host, size_t host_bytes,
                                   char *port, size_t port_bytes);

#endif
