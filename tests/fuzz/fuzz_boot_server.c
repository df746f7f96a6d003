/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_boot_server.c - the rendezvous store (core/boot_server.c)
 * as up to eight connections see it, with no thread and no listener: each
 * connection is a socketpair, the store's end fed by hand.
 *
 * Input: one byte, the world size (1 + b % 8); then records of one byte
 * (low 3 bits: the connection; 0x80: it closes; 0x40: then an hour
 * passes, so held stall reports are decided and gathers with a deadline
 * answered), two bytes of length (little-endian) and that many bytes that
 * arrive on it.  Anything goes: HELLOs for ranks in and out of the world,
 * with and without a token, keys without end, gathers of any count and
 * deadline, aborts blaming anyone, junk.
 *
 * Beyond not crashing: everything the store sends back frames as a reply
 * (WELCOME, VALUE, ERROR, ABORT with its 8-byte key; to a host's relay, FWD
 * with its 4-byte channel, and FWDM: channels, then one whole VALUE), and a
 * stream ends on a reply's boundary unless the store cut the connection.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/boot_wire.h"
#include "core/log.h"
#include "fuzz.h"

#define CONNS 8
/* The job's token; the seeds' HELLOs carry it (tests/fuzz/make_seeds.py). */
#define FUZZ_TOKEN "fuzz-token"

struct peer {
	int fd; /* our end; -1: not open */
	int ci; /* the store's client index */
	int eof;
	uint8_t *in;
	size_t bytes, cap;
};

/* A relay's FWDM: a list of n >= 1 channels, then exactly one VALUE. */
static void check_fwdm(const struct boot_in *m)
{
	uint32_t n;
	struct boot_in v;

	FUZZ_CHECK(m->h.key_bytes == 0 && m->h.val_bytes > sizeof(n));
	memcpy(&n, m->val, sizeof(n));
	n = ntohl(n);
	size_t off = sizeof(n) * (1 + (size_t)n);
	FUZZ_CHECK(n >= 1 && off < m->h.val_bytes);
	long used = boot_frame(m->val + off, m->h.val_bytes - off, &v);
	FUZZ_CHECK(used == (long)(m->h.val_bytes - off));
	FUZZ_CHECK(v.h.type == MSG_VALUE);
}

/* Read what the store sent @p so far and check it frames; 1 if any came. */
static int drain(struct peer *p)
{
	size_t before = p->bytes;

	for (;;) {
		if (p->cap - p->bytes < 65536) {
			p->cap = p->cap ? 2 * p->cap : 131072;
			p->in = realloc(p->in, p->cap);
			FUZZ_CHECK(p->in != NULL);
		}
		ssize_t n = recv(p->fd, p->in + p->bytes, p->cap - p->bytes,
		                 MSG_DONTWAIT);
		if (n > 0) {
			p->bytes += (size_t)n;
			continue;
		}
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			p->eof = 1;
		break;
	}
	size_t off = 0;
	for (;;) {
		struct boot_in m;
		long used = boot_frame(p->in + off, p->bytes - off, &m);
		if (used == 0)
			break;
		FUZZ_CHECK(used > 0);
		FUZZ_CHECK(m.h.type == MSG_WELCOME || m.h.type == MSG_VALUE ||
		           m.h.type == MSG_ERROR || m.h.type == MSG_ABORT ||
		           m.h.type == MSG_FWD || m.h.type == MSG_FWDM);
		FUZZ_CHECK(m.h.type != MSG_ABORT || m.h.key_bytes == 8);
		FUZZ_CHECK(m.h.type != MSG_FWD || m.h.key_bytes == 4);
		if (m.h.type == MSG_FWDM)
			check_fwdm(&m);
		off += (size_t)used;
	}
	memmove(p->in, p->in + off, p->bytes - off);
	p->bytes -= off;
	return off > 0 || p->bytes != before;
}

/* Take everything the store has for everyone, as its sockets let it out. */
static void drain_all(struct boot_server *srv, struct peer *peers)
{
	for (int more = 1; more;) {
		more = 0;
		for (int i = 0; i < CONNS; i++)
			if (peers[i].fd >= 0 && !peers[i].eof)
				more |= drain(&peers[i]);
		boot_server_flush(srv);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct peer peers[CONNS];
	struct boot_server *srv;
	size_t at = 1;

	if (size < 1)
		return 0;
	memset(peers, 0, sizeof(peers));
	for (int i = 0; i < CONNS; i++)
		peers[i].fd = -1;
	cb_fail_clear();
	FUZZ_CHECK(boot_server_detached(1 + data[0] % 8, FUZZ_TOKEN, &srv) ==
	           CB_OK);
	while (at + 3 <= size) {
		int c = data[at] & (CONNS - 1), close_it = data[at] & 0x80,
		    expire = data[at] & 0x40;
		size_t len = data[at + 1] | (size_t)data[at + 2] << 8;
		struct peer *p = &peers[c];
		at += 3;
		if (len > size - at)
			len = size - at;
		if (p->fd < 0 && !p->eof) {
			int sv[2];
			FUZZ_CHECK(socketpair(AF_UNIX,
			                      SOCK_STREAM | SOCK_CLOEXEC, 0,
			                      sv) == 0);
			fcntl(sv[0], F_SETFL, O_NONBLOCK);
			p->fd = sv[1];
			p->ci = boot_server_add(srv, sv[0]);
			FUZZ_CHECK(p->ci >= 0);
		}
		if (p->fd >= 0)
			boot_server_input(srv, p->ci, data + at,
			                  close_it ? 0 : len);
		if (!close_it)
			at += len;
		if (expire)
			boot_server_expire(srv);
		drain_all(srv, peers);
		if (close_it && p->fd >= 0) {
			close(p->fd);
			p->fd = -1;
			p->eof = 1;
		}
	}
	char missing[256];
	boot_server_missing(srv, "g/0/", 1 + data[0] % 8, missing,
	                    sizeof(missing));
	drain_all(srv, peers);
	for (int i = 0; i < CONNS; i++)
		/* A cut stream may end mid-reply; a whole one may not. */
		FUZZ_CHECK(peers[i].fd < 0 || peers[i].eof ||
		           peers[i].bytes == 0);
	boot_server_free(srv);
	for (int i = 0; i < CONNS; i++) {
		if (peers[i].fd >= 0)
			close(peers[i].fd);
		free(peers[i].in);
	}
	return 0;
}
