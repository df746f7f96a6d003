/* SPDX-License-Identifier: MIT */
/*
 * core/boot_relay.h - a host's relay to the rendezvous store (inside core).
 *
 * Under a launcher that says which rank is which on a host, the store sees
 * hosts, not ranks: local rank 0 keeps the host's one connection to it and
 * relays the others' over a local socket (an abstract unix socket, private
 * to the host's network namespace).  Each local rank still speaks the
 * store's protocol unchanged (HELLO with the job's token, ...); the relay
 * only carries bytes: what local client k sends goes up as FWD {k, bytes},
 * a FWD {k, bytes} from the store goes to client k, and an empty FWD is a
 * close, either way (core/boot_wire.h).
 */
#ifndef CB_CORE_BOOT_RELAY_H
#define CB_CORE_BOOT_RELAY_H

#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <collbench/status.h>

struct boot_relay;

/* The local socket's address for a job: from its token, rendezvous and this
 * host's name, so two jobs on a host never meet. */
void boot_relay_addr(const char *token, const char *host, const char *port,
                     const char *hostname, struct sockaddr_un *sa,
                     socklen_t *len);

/* Local rank 0: listen on @sa (before anything else, so the others can
 * connect as soon as they start).  CB_ERR_SYS with a line when another
 * process of this job on this host holds it. */
cb_status_t boot_relay_listen(const struct sockaddr_un *sa, socklen_t len,
                              int *fd);

/* Relay, from a thread of its own, between the clients that connect to
 * @listen_fd and the store on @upstream_fd (connected; both now the
 * relay's).  The first message up is RELAY {@leader_rank, @hostname}: the
 * store names the leader if this connection ends early. */
cb_status_t boot_relay_start(int listen_fd, int upstream_fd, int leader_rank,
                             const char *hostname, double timeout_s,
                             struct boot_relay **out);

/* Stop and free.  @wait: the relay first keeps going (to its deadline)
 * until the store closes the connection, which it does once every rank has
 * said goodbye: the host's other ranks still use it while they finish. */
void boot_relay_stop(struct boot_relay *r, int wait);

#endif
