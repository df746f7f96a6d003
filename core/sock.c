/* SPDX-License-Identifier: MIT */
#include "core/sock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"

cb_status_t cb_sock_resolve(const char *host, const char *port,
                            struct sockaddr_storage *sa, socklen_t *len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res;
	int rc = getaddrinfo(host, port, &hints, &res);

	if (rc)
		return cb_fail(CB_ERR_INVALID, "cannot resolve %s:%s: %s", host,
		               port, gai_strerror(rc));
	memcpy(sa, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return CB_OK;
}

void cb_sock_ntop(const struct sockaddr *sa, char *out, size_t out_bytes)
{
	char ip[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)sa;
		inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip));
		port = ntohs(in->sin_port);
		snprintf(out, out_bytes, "%s:%u", ip, port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)sa;
		inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof(ip));
		port = ntohs(in6->sin6_port);
		snprintf(out, out_bytes, "[%s]:%u", ip, port);
	} else {
		snprintf(out, out_bytes, "?");
	}
}

int cb_sock_set_nonblock(int fd, int on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -1;
	return fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
}

cb_status_t cb_sock_listen(const struct sockaddr *sa, socklen_t len, int *out)
{
	int one = 1;
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return CB_ERR_SYS;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* The largest backlog the kernel allows: it caps what is asked at
	 * net.core.somaxconn, so INT_MAX is that, raised or not (SOMAXCONN,
	 * 4096, would ignore a raise).  The rendezvous takes every rank's
	 * connect at once, and at 1024 a 4096-rank start lost connections
	 * and timed out. */
	if (bind(fd, sa, len) < 0 || listen(fd, INT_MAX) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return CB_ERR_SYS;
	}
	*out = fd;
	return CB_OK;
}

static int wait_fd(int fd, short events, uint64_t deadline_ns)
{
	for (;;) {
		uint64_t now = cb_now_ns();
		struct pollfd p = { .fd = fd, .events = events };
		int ms, rc;

		if (cb_interrupted()) { /* SIGINT or SIGTERM: stop waiting */
			errno = EINTR;
			return -1;
		}
		if (now >= deadline_ns)
			return 0;
		ms = (int)((deadline_ns - now + 999999) / 1000000);
		rc = poll(&p, 1, ms > 100 ? 100 : ms);
		if (rc > 0)
			return 1;
		if (rc < 0 && errno != EINTR)
			return -1;
	}
}

cb_status_t cb_sock_connect(const struct sockaddr *sa, socklen_t len,
                            uint64_t deadline_ns, int *out, int *err)
{
	int one = 1;

	for (;;) {
		int fd = socket(sa->sa_family,
		                SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		int rc, soerr = 0;
		socklen_t sl = sizeof(soerr);

		if (fd < 0) {
			*err = errno;
			return CB_ERR_SYS;
		}
		rc = connect(fd, sa, len);
		if (rc < 0 && errno == EINPROGRESS) {
			rc = wait_fd(fd, POLLOUT, deadline_ns);
			if (rc > 0) {
				getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr,
				           &sl);
				rc = soerr ? -1 : 0;
				errno = soerr;
			} else {
				errno = rc == 0 ? ETIMEDOUT : errno;
				rc = -1;
			}
		}
		if (rc == 0) {
			cb_sock_set_nonblock(fd, 0);
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
			           sizeof(one));
			*out = fd;
			return CB_OK;
		}
		*err = errno;
		close(fd);
		if (cb_interrupted())
			return cb_interrupted();
		/* Refused or unreachable: the listener may still be starting.
		 */
		if (cb_now_ns() + 100000000ull >= deadline_ns)
			return CB_ERR_TIMEOUT;
		if (*err != ECONNREFUSED && *err != ECONNRESET &&
		    *err != ETIMEDOUT && *err != EHOSTUNREACH &&
		    *err != ENETUNREACH && *err != ECONNABORTED)
			return CB_ERR_SYS;
		usleep(50000);
	}
}

/* Send (@out) or receive all @bytes, waiting for the socket by the
 * deadline while it has no room or nothing yet. */
static cb_status_t io_all(int fd, char *p, size_t bytes, uint64_t deadline_ns,
                          int *err, int out)
{
	while (bytes) {
		ssize_t n =
		        out ? send(fd, p, bytes, MSG_NOSIGNAL | MSG_DONTWAIT)
		            : recv(fd, p, bytes, MSG_DONTWAIT);

		if (n > 0) {
			p += n;
			bytes -= (size_t)n;
			continue;
		}
		if (n == 0 && !out)
			return CB_ERR_PEER;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			int rc = wait_fd(fd, out ? POLLOUT : POLLIN,
			                 deadline_ns);
			if (rc == 0)
				return CB_ERR_TIMEOUT;
			if (rc > 0)
				continue;
			if (cb_interrupted())
				return cb_interrupted();
		}
		*err = errno;
		return errno == ECONNRESET || (out && errno == EPIPE)
		               ? CB_ERR_PEER
		               : CB_ERR_SYS;
	}
	return CB_OK;
}

cb_status_t cb_sock_send_all(int fd, const void *buf, size_t bytes,
                             uint64_t deadline_ns, int *err)
{
	return io_all(fd, (char *)buf, bytes, deadline_ns, err, 1);
}

cb_status_t cb_sock_recv_all(int fd, void *buf, size_t bytes,
                             uint64_t deadline_ns, int *err)
{
	return io_all(fd, buf, bytes, deadline_ns, err, 0);
}

int cb_sock_peek(int fd, void *buf, size_t bytes)
{
	return recv(fd, buf, bytes, MSG_PEEK | MSG_DONTWAIT) == (ssize_t)bytes;
}
