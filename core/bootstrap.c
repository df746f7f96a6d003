/* SPDX-License-Identifier: MIT */
/*
 * core/bootstrap.c - every rank's client of the rendezvous store: joining
 * it (rank 0 also serves it), reading its messages, abort notices, closing.
 * The operations on the store (set, get, gathers, barrier) are in
 * core/boot_ops.c.
 *
 * The wire format and the store itself are in core/boot_wire.h and
 * core/boot_server.c.  Between requests the store sends a client only ABORT;
 * ranks look for one in their wait loops (cb_boot_check).
 */
#include "core/bootstrap.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/boot_client.h"
#include "core/boot_relay.h"
#include "core/boot_wire.h"
#include "core/log.h"
#include "core/sock.h"

/* The job's secret, set once per process before the first cb_boot_open
 * (by the CLI: from PMIx, the launcher, COLLBENCH_JOB_TOKEN, or made up by
 * the local fork); a cfg's own token wins. */
static char job_token[BOOT_TOKEN_MAX];

void cb_boot_set_job_token(const char *token)
{
	snprintf(job_token, sizeof(job_token), "%s", token ? token : "");
}

const char *cb_boot_job_token(void)
{
	return job_token;
}

/* 1 when an ABORT was already in this rank's receive queue (read now). */
static int boot_abort_waiting(struct cb_boot *b)
{
	struct pollfd p = { .fd = b->fd, .events = POLLIN };
	uint32_t type;
	uint8_t *val;
	uint32_t vb;

	while (!b->aborted && b->fd >= 0 && poll(&p, 1, 0) > 0 &&
	       (p.revents & POLLIN)) {
		/* A failure to read is not this wait's to report: only an
		 * abort's line is kept. */
		struct cb_fail_rec why;
		cb_fail_open(&why);
		cb_status_t st = boot_recv(b, cb_now_ns() + 100000000ull,
		                           "an abort notice", &type, &val, &vb);
		cb_fail_close(&why, b->aborted);
		if (st)
			break;
		free(val); /* a late answer: not what we look for */
	}
	return b->aborted;
}

cb_status_t boot_send(struct cb_boot *b, uint32_t type, const char *key,
                      const void *val, uint32_t val_bytes)
{
	uint32_t kb = key ? (uint32_t)strlen(key) : 0;
	struct boot_hdr h;
	uint64_t dl = boot_deadline(b);
	cb_status_t st;
	int err = 0;

	boot_hdr_encode(&h, type, kb, val_bytes);
	st = cb_sock_send_all(b->fd, &h, sizeof(h), dl, &err);
	if (!st && kb)
		st = cb_sock_send_all(b->fd, key, kb, dl, &err);
	if (!st && val_bytes)
		st = cb_sock_send_all(b->fd, val, val_bytes, dl, &err);
	if (st == CB_ERR_TIMEOUT)
		return cb_fail(st, "timed out after %g s sending to %s",
		               b->timeout_s, b->where);
	if (cb_status_signal(st))
		return cb_fail(st, "%s", cb_status_str(st));
	/* The store closes a failed job's connections once it has told
	 * everyone: an ABORT may be waiting behind the closed socket, and it
	 * is the line (and status) that explains. */
	if (st && boot_abort_waiting(b))
		return CB_ERR_ABORTED;
	if (st)
		return cb_fail(CB_ERR_PEER, "lost %s (rank 0): %s", b->where,
		               err ? strerror(err) : "connection closed");
	return CB_OK;
}

static cb_status_t boot_lost(struct cb_boot *b, cb_status_t st, int err,
                             const char *waiting_for)
{
	if (st == CB_ERR_TIMEOUT && b->srv && b->gathering[0]) {
		/* Rank 0 serves the store and can say who is missing. */
		char who[256];
		boot_server_missing(b->srv, b->gathering, b->world, who,
		                    sizeof(who));
		return cb_fail(st,
		               "timed out after %g s waiting for %s from %s; "
		               "still missing: rank %s",
		               b->timeout_s, waiting_for, b->where, who);
	}
	if (st == CB_ERR_TIMEOUT)
		return cb_fail(st,
		               "timed out after %g s waiting for %s from %s "
		               "(served by rank 0)",
		               b->timeout_s, waiting_for, b->where);
	if (cb_status_signal(st))
		return cb_fail(st, "%s while waiting for %s", cb_status_str(st),
		               waiting_for);
	return cb_fail(CB_ERR_PEER,
	               "lost %s (served by rank 0) waiting for %s: %s",
	               b->where, waiting_for,
	               err ? strerror(err) : "connection closed");
}

cb_status_t boot_recv(struct cb_boot *b, uint64_t deadline,
                      const char *waiting_for, uint32_t *type, uint8_t **val,
                      uint32_t *val_bytes)
{
	struct boot_hdr raw, h;
	int err = 0;
	cb_status_t st =
	        cb_sock_recv_all(b->fd, &raw, sizeof(raw), deadline, &err);

	if (st)
		return boot_lost(b, st, err, waiting_for);
	if (boot_hdr_decode(&raw, &h) || h.type < MSG_HELLO || h.type > MSG_BYE)
		return cb_fail(
		        CB_ERR_PROTO,
		        "%s sent a message that does not parse (magic "
		        "0x%08x, type %u): is it a collbench rendezvous?",
		        b->where, h.magic, h.type);
	uint8_t *buf = malloc(h.key_bytes + h.val_bytes + 1);
	if (!buf)
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	st = cb_sock_recv_all(b->fd, buf, h.key_bytes + h.val_bytes, deadline,
	                      &err);
	if (st) {
		free(buf);
		return boot_lost(b, st, err, waiting_for);
	}
	buf[h.key_bytes + h.val_bytes] = '\0';
	if (h.type == MSG_ABORT || h.type == MSG_ERROR) {
		/* ABORT's key: the origin rank (-1: the store saw a rank
		 * vanish) and the status it failed with, so every rank of
		 * the job can exit with the same status. */
		int32_t k[2] = { -1, CB_ERR_PEER };
		if (h.type == MSG_ABORT &&
		    boot_pair_decode(buf, h.key_bytes, k) == 0) {
			k[1] = boot_status_decode(k[1]);
			if (k[0] < -1 || k[0] >= b->world)
				k[0] = -1;
		}
		b->aborted = 1;
		b->abort_origin = k[0];
		snprintf(b->abort_line, sizeof(b->abort_line), "%s",
		         (char *)buf + h.key_bytes);
		boot_line_clean(b->abort_line);
		cb_fail(h.type == MSG_ABORT ? (cb_status_t)k[1]
		                            : CB_ERR_INVALID,
		        "%s", b->abort_line);
		free(buf);
		return h.type == MSG_ABORT ? CB_ERR_ABORTED : CB_ERR_INVALID;
	}
	memmove(buf, buf + h.key_bytes, h.val_bytes + 1);
	*type = h.type;
	*val = buf;
	*val_bytes = h.val_bytes;
	return CB_OK;
}

cb_status_t boot_expect(struct cb_boot *b, uint64_t deadline, uint32_t want,
                        const char *waiting_for, uint8_t **val,
                        uint32_t *val_bytes)
{
	uint32_t type;
	cb_status_t st =
	        boot_recv(b, deadline, waiting_for, &type, val, val_bytes);

	if (st)
		return st;
	if (type != want) {
		free(*val);
		return cb_fail(CB_ERR_PROTO,
		               "%s answered with message type %u, expected %u",
		               b->where, type, want);
	}
	return CB_OK;
}

cb_status_t cb_boot_parse_hostport(const char *s, char *host, size_t host_bytes,
                                   char *port, size_t port_bytes)
{
	const char *colon, *h = s;
	size_t hl;

	if (s[0] == '[') {
		const char *end = strchr(s, ']');
		if (!end || end[1] != ':')
			goto bad;
		h = s + 1;
		hl = (size_t)(end - h);
		colon = end + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			goto bad;
		hl = (size_t)(colon - s);
	}
	char *endp;
	long p = strtol(colon + 1, &endp, 10);
	if (hl == 0 || hl >= host_bytes || *endp || colon[1] == '\0' || p < 1 ||
	    p > 65535)
		goto bad;
	memcpy(host, h, hl);
	host[hl] = '\0';
	snprintf(port, port_bytes, "%ld", p);
	return CB_OK;
bad:
	return cb_fail(CB_ERR_USAGE,
	               "rendezvous '%s' is not HOST:PORT (port 1-65535)", s);
}

static const char *boot_token(const struct cb_boot_cfg *cfg)
{
	return cfg->token && cfg->token[0] ? cfg->token : job_token;
}

static cb_status_t boot_serve(const struct cb_boot_cfg *cfg, struct cb_boot *b,
                              struct sockaddr_storage *sa, socklen_t *sl)
{
	int fd = cfg->listen_fd;

	if (fd < 0 && cb_sock_listen((struct sockaddr *)sa, *sl, &fd)) {
		int e = errno;
		return cb_fail(CB_ERR_SYS,
		               "cannot serve the rendezvous on %s:%s: %s%s",
		               cfg->host, cfg->port, strerror(e),
		               e == EADDRNOTAVAIL ? " (rank 0 must run on "
		                                    "the rendezvous host)"
		                                  : "");
	}
	/* Connect our own client to where the listener really is. */
	*sl = sizeof(*sa);
	getsockname(fd, (struct sockaddr *)sa, sl);
	if (sa->ss_family == AF_INET &&
	    ((struct sockaddr_in *)sa)->sin_addr.s_addr == htonl(INADDR_ANY))
		((struct sockaddr_in *)sa)->sin_addr.s_addr =
		        htonl(INADDR_LOOPBACK);
	return boot_server_start(fd, cfg->world, cfg->timeout_s,
	                         boot_token(cfg), &b->srv);
}

/*
 * Connect to the first of cfg->host's addresses (a comma-separated list:
 * PMIx hands over every address rank 0 has) that answers.  All but the last
 * get a short deadline of their own: an address that refuses or does not
 * route must not use up the job's.  Rank 0 serves the store here too when
 * it was given no listener.
 */
static cb_status_t boot_connect_any(const struct cb_boot_cfg *cfg,
                                    struct cb_boot *b)
{
	char list[512], *save, *h;
	struct sockaddr_storage sa;
	socklen_t sl = sizeof(sa);
	cb_status_t st = CB_ERR_INVALID;
	int err = 0, n = 1;

	snprintf(list, sizeof(list), "%s", cfg->host);
	for (const char *p = list; *p; p++)
		n += *p == ',';
	for (h = strtok_r(list, ",", &save); h;
	     h = strtok_r(NULL, ",", &save)) {
		int last = --n == 0;
		uint64_t dl = boot_deadline(b), now = cb_now_ns();
		if (!last && dl - now > 2000000000ull)
			dl = now + 2000000000ull;
		snprintf(b->where, sizeof(b->where), "the rendezvous at %s:%s",
		         h, cfg->port);
		sl = sizeof(sa);
		struct cb_fail_rec why; /* the last name's failure is the one */
		cb_fail_open(&why);
		st = cb_sock_resolve(h, cfg->port, &sa, &sl);
		cb_fail_close(&why, last);
		if (st && last)
			return st;
		if (st)
			continue;
		if (cfg->rank == 0 && !b->srv &&
		    (st = boot_serve(cfg, b, &sa, &sl)))
			return st;
		st = cb_sock_connect((struct sockaddr *)&sa, sl, dl, &b->fd,
		                     &err);
		if (st == CB_OK)
			return CB_OK;
		cb_log(CB_LOG_DEBUG, "bootstrap: %s: %s", b->where,
		       err ? strerror(err) : "no answer");
	}
	if (st == CB_ERR_TIMEOUT)
		return cb_fail(CB_ERR_TIMEOUT,
		               "%s did not answer within %g s (%s; is rank 0 "
		               "running there?)",
		               b->where, b->timeout_s,
		               err ? strerror(err) : "no answer");
	return cb_fail(st, "cannot reach %s: %s", b->where,
	               err ? strerror(err) : "no address");
}

static struct cb_boot *boot_new(const struct cb_boot_cfg *cfg)
{
	struct cb_boot *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->fd = -1;
	b->rank = cfg->rank;
	b->world = cfg->world;
	b->timeout_s = cfg->timeout_s;
	snprintf(b->where, sizeof(b->where), "the rendezvous at %s:%s",
	         cfg->host, cfg->port);
	return b;
}

/* "ip:port" or "[ip6]:port" to the address alone. */
static void boot_ip_only(const char *ipport, char *ip, size_t bytes)
{
	char tmp[80], *colon;

	snprintf(tmp, sizeof(tmp), "%s", ipport);
	if ((colon = strrchr(tmp, ':')))
		*colon = '\0';
	size_t n = strlen(tmp);
	if (n && tmp[n - 1] == ']')
		tmp[n - 1] = '\0';
	snprintf(ip, bytes, "%.63s", tmp[0] == '[' ? tmp + 1 : tmp);
}

/* HELLO, and the store's WELCOME (or its ERROR line). */
static cb_status_t boot_join(struct cb_boot *b, const struct cb_boot_cfg *cfg)
{
	struct boot_hello h = { .rank = (int32_t)htonl((uint32_t)cfg->rank),
		                .world = (int32_t)htonl((uint32_t)cfg->world),
		                .pid = (int32_t)htonl((uint32_t)getpid()) };
	uint8_t *val;
	uint32_t vb;
	cb_status_t st;

	snprintf(h.host, sizeof(h.host), "%s", cfg->hostname);
	snprintf(h.token, sizeof(h.token), "%s", boot_token(cfg));
	if ((st = boot_send(b, MSG_HELLO, NULL, &h, sizeof(h))) ||
	    (st = boot_expect(b, boot_deadline(b), MSG_WELCOME,
	                      "the rendezvous to admit this rank", &val, &vb)))
		return st;
	if (vb >= sizeof(b->job_id))
		memcpy(&b->job_id, val, sizeof(b->job_id));
	/* Behind a relay, this rank's address is the one the store saw its
	 * host's relay come from. */
	if (b->relayed && vb > sizeof(b->job_id)) {
		char seen[80];
		snprintf(seen, sizeof(seen), "%.*s",
		         (int)(vb - sizeof(b->job_id)),
		         (const char *)val + sizeof(b->job_id));
		boot_ip_only(seen, b->local_ip, sizeof(b->local_ip));
	}
	free(val);
	b->joined = 1;
	return CB_OK;
}

cb_status_t boot_client_on_fd(const struct cb_boot_cfg *cfg, int fd,
                              struct cb_boot **out)
{
	struct cb_boot *b = boot_new(cfg);
	cb_status_t st;

	if (!b) {
		close(fd);
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	}
	b->fd = fd;
	if ((st = boot_join(b, cfg))) {
		cb_boot_close(b);
		return st;
	}
	*out = b;
	return CB_OK;
}

/* A connection of this rank's own to the store (rank 0 serves it first). */
static cb_status_t boot_connect_store(const struct cb_boot_cfg *cfg,
                                      struct cb_boot *b)
{
	struct sockaddr_storage sa;
	socklen_t sl = sizeof(sa);
	cb_status_t st;
	int err = 0;

	if (cfg->rank == 0 && cfg->listen_fd >= 0) {
		if ((st = boot_serve(cfg, b, &sa, &sl)))
			return st;
		st = cb_sock_connect((struct sockaddr *)&sa, sl,
		                     boot_deadline(b), &b->fd, &err);
		if (st)
			return cb_fail(st, "cannot reach %s: %s", b->where,
			               strerror(err));
	} else if ((st = boot_connect_any(cfg, b))) {
		return st;
	}
	struct sockaddr_storage me;
	socklen_t ml = sizeof(me);
	char ipport[80];
	getsockname(b->fd, (struct sockaddr *)&me, &ml);
	cb_sock_ntop((struct sockaddr *)&me, ipport, sizeof(ipport));
	boot_ip_only(ipport, b->local_ip, sizeof(b->local_ip));
	return CB_OK;
}

/*
 * Local rank 0 opens the host's relay before it reaches the store (the
 * others may already wait for it), then hands its own connection to the
 * relay and joins through it like everyone else; the others connect to it,
 * retrying while it is not up yet.
 */
static cb_status_t boot_via_relay(const struct cb_boot_cfg *cfg,
                                  struct cb_boot *b)
{
	struct sockaddr_un ua;
	socklen_t ul;
	cb_status_t st;
	int lfd = -1, err = 0;

	boot_relay_addr(boot_token(cfg), cfg->host, cfg->port, cfg->hostname,
	                &ua, &ul);
	if (cfg->relay == CB_BOOT_LEADER) {
		if ((st = boot_relay_listen(&ua, ul, &lfd)))
			return st;
		if ((st = boot_connect_store(cfg, b))) {
			close(lfd);
			return st;
		}
		st = boot_relay_start(lfd, b->fd, cfg->rank, cfg->hostname,
		                      b->timeout_s, &b->relay);
		b->fd = -1;
		if (st)
			return st;
		cb_log(CB_LOG_DEBUG,
		       "bootstrap: rank %d relays this host's ranks to %s",
		       cfg->rank, b->where);
	}
	b->relayed = 1;
	st = cb_sock_connect((struct sockaddr *)&ua, ul, boot_deadline(b),
	                     &b->fd, &err);
	if (st == CB_ERR_TIMEOUT)
		return cb_fail(st,
		               "this host's relay to %s did not open within %g "
		               "s (local rank 0 keeps it: is it running?)",
		               b->where, b->timeout_s);
	if (st)
		return cb_fail(st, "cannot reach this host's relay to %s: %s",
		               b->where, strerror(err));
	return CB_OK;
}

cb_status_t cb_boot_open(const struct cb_boot_cfg *cfg, struct cb_boot **out)
{
	struct cb_boot *b = boot_new(cfg);
	cb_status_t st;

	if (!b)
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	st = cfg->relay == CB_BOOT_DIRECT ? boot_connect_store(cfg, b)
	                                  : boot_via_relay(cfg, b);
	if (st || (st = boot_join(b, cfg)))
		goto fail;
	*out = b;
	return CB_OK;
fail:
	cb_boot_close(b);
	return st;
}

const char *cb_boot_abort_line(const struct cb_boot *b)
{
	return b->aborted ? b->abort_line : NULL;
}

cb_status_t cb_boot_store_stats(const struct cb_boot *b, size_t *keys,
                                uint64_t *replies)
{
	if (!b->srv)
		return CB_ERR_INVALID;
	boot_server_stats(b->srv, keys, replies);
	return CB_OK;
}

void cb_boot_gone(struct cb_boot *b, int rank)
{
	if (b->srv)
		boot_server_gone(b->srv, rank);
}

uint64_t cb_boot_job_id(const struct cb_boot *b)
{
	return b->job_id;
}

int cb_boot_local_addr(const struct cb_boot *b, char *ip, size_t ip_bytes)
{
	snprintf(ip, ip_bytes, "%s", b->local_ip);
	return 0;
}

cb_status_t cb_boot_check(struct cb_boot *b, int grace_ms, int *origin)
{
	struct pollfd p = { .fd = b->fd, .events = POLLIN };
	uint32_t type;
	uint8_t *val;
	uint32_t vb;
	cb_status_t st;

	if (origin)
		*origin = b->abort_origin;
	if (b->aborted)
		return CB_ERR_ABORTED;
	if (b->fd < 0 || poll(&p, 1, grace_ms) <= 0)
		return CB_OK;
	/* Between collectives the store sends only ABORT; anything else that
	 * arrives (or EOF) is a failure too. */
	st = boot_recv(b, cb_now_ns() + 1000000000ull, "the job to finish",
	               &type, &val, &vb);
	if (st == CB_OK) {
		free(val);
		return cb_fail(CB_ERR_PROTO, "%s sent an unexpected message",
		               b->where);
	}
	/* No abort notice but a lost store: rank 0 is the one gone. */
	if (origin)
		*origin = b->aborted ? b->abort_origin : 0;
	return st;
}

void cb_boot_abort(struct cb_boot *b, cb_status_t st, int blame,
                   const char *why)
{
	int32_t k[2] = { (int32_t)htonl((uint32_t)st),
		         (int32_t)htonl((uint32_t)blame) };
	struct boot_hdr h;
	uint32_t len = (uint32_t)strlen(why);
	uint64_t dl = cb_now_ns() + 1000000000ull;
	int err;

	if (b->fd < 0 || b->aborted || b->sent_abort)
		return;
	/* Best effort, and not through boot_send: its failure must not
	 * replace the line that explains the original failure. */
	boot_hdr_encode(&h, MSG_ABORT, sizeof(k), len);
	if (!cb_sock_send_all(b->fd, &h, sizeof(h), dl, &err) &&
	    !cb_sock_send_all(b->fd, k, sizeof(k), dl, &err))
		cb_sock_send_all(b->fd, why, len, dl, &err);
	b->sent_abort = 1;
}

void cb_boot_close(struct cb_boot *b)
{
	if (!b)
		return;
	if (b->fd >= 0 && !b->aborted && !b->sent_abort) {
		struct boot_hdr h;
		int err;
		boot_hdr_encode(&h, MSG_BYE, 0, 0);
		cb_sock_send_all(b->fd, &h, sizeof(h),
		                 cb_now_ns() + 1000000000ull, &err);
	}
	/* Rank 0 keeps serving until everyone said goodbye; a host's relay
	 * until the store closes it, which is then. */
	int drain = b->fd >= 0;
	boot_server_stop(b->srv, drain);
	if (b->fd >= 0)
		close(b->fd);
	boot_relay_stop(b->relay, drain && b->joined);
	free(b);
}
