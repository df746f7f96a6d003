/* SPDX-License-Identifier: MIT */
/*
 * core/sock.h - socket helpers with deadlines, shared by the bootstrap and
 * the tcp transport.
 */
#ifndef CB_CORE_SOCK_H
#define CB_CORE_SOCK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <collbench/status.h>

/* Resolve host:port (numeric or by name) to one IPv4/IPv6 address. */
cb_status_t cb_sock_resolve(const char *host, const char *port,
                            struct sockaddr_storage *sa, socklen_t *len);
/* Format an address as "ip:port". */
void cb_sock_ntop(const struct sockaddr *sa, char *out, size_t out_bytes);
/* Bound, listening socket (SO_REUSEADDR, close-on-exec). */
cb_status_t cb_sock_listen(const struct sockaddr *sa, socklen_t len, int *fd);
/* Connect, retrying refused attempts until @deadline_ns (the listener may not
 * be up yet).  The socket is blocking, TCP_NODELAY, close-on-exec. */
cb_status_t cb_sock_connect(const struct sockaddr *sa, socklen_t len,
                            uint64_t deadline_ns, int *fd, int *err);
/* Write or read exactly @bytes before @deadline_ns.  CB_ERR_PEER on EOF,
 * CB_ERR_TIMEOUT at the deadline, CB_ERR_SYS with *err = errno;
 * CB_ERR_INTERRUPTED or CB_ERR_TERMINATED when a wait ends on SIGINT or
 * SIGTERM (so does cb_sock_connect). */
cb_status_t cb_sock_send_all(int fd, const void *buf, size_t bytes,
                             uint64_t deadline_ns, int *err);
cb_status_t cb_sock_recv_all(int fd, void *buf, size_t bytes,
                             uint64_t deadline_ns, int *err);
int cb_sock_set_nonblock(int fd, int on);
/* 1 when @bytes bytes are waiting on @fd (copied to @buf, left unread). */
int cb_sock_peek(int fd, void *buf, size_t bytes);

#endif
