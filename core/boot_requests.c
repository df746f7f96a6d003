/* SPDX-License-Identifier: MIT */
/*
 * core/boot_requests.c - what the rendezvous store (core/boot_server.c) does
 * with each message a rank sends: HELLO's admission (job token, world size,
 * rank claimed once), SET, GET and GATHER handed to the keys
 * (core/boot_store.c), ABORT told to every rank, stall reports held a moment
 * to blame the rank that stopped, and garbage turned into one line.  Replies
 * are queued on the client, never written here.
 */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/boot_server_int.h"
#include "core/log.h"
#include "core/strbuf.h"

static int srv_send(struct boot_server *srv, struct client *c, uint32_t type,
                    const void *key, uint32_t key_bytes, const void *val,
                    uint32_t val_bytes)
{
	struct boot_sbuf *b;
	int rc;

	(void)srv;
	if (c->fd < 0 ||
	    !(b = boot_msg_new(type, key, key_bytes, val, val_bytes)))
		return -1;
	rc = boot_outq_push(&c->out, c->fd, b);
	boot_sbuf_put(b);
	return rc;
}

/* Close client @c and forget what it waited for. */
void boot_srv_drop(struct boot_server *srv, struct client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->in);
	c->in = NULL;
	c->in_bytes = c->in_cap = 0;
	boot_outq_clear(&c->out);
	boot_kv_forget_client(srv->kv, (int)(c - srv->clients));
}

/* The store's answer to client @ci: a VALUE whose payload @body may be
 * shared with other clients. */
void boot_srv_answer(void *ctx, int ci, struct boot_sbuf *body)
{
	struct boot_server *srv = ctx;
	struct client *c = &srv->clients[ci];
	struct boot_sbuf *h = boot_msg_new(MSG_VALUE, NULL, 0, NULL, 0);

	if (!h || c->fd < 0) {
		boot_sbuf_put(h);
		return;
	}
	boot_hdr_encode((struct boot_hdr *)(void *)h->data, MSG_VALUE, 0,
	                body->bytes);
	if (boot_outq_push(&c->out, c->fd, h) == 0)
		boot_outq_push(&c->out, c->fd, body);
	boot_sbuf_put(h);
}

/* Tell every rank, @origin too, that the job failed with @status: a rank
 * that reported waits for this answer before it tears anything down (see
 * cb_comm_fail), and learns what the store added to its line. */
void boot_srv_abort_all(struct boot_server *srv, int origin, int status,
                        const char *why)
{
	int32_t o[2] = { (int32_t)htonl((uint32_t)origin),
		         (int32_t)htonl((uint32_t)status) };

	if (srv->aborted)
		return;
	srv->aborted = 1;
	for (int i = 0; i < srv->nclients; i++)
		if (srv->clients[i].rank >= 0)
			srv_send(srv, &srv->clients[i], MSG_ABORT, o, sizeof(o),
			         why, (uint32_t)strlen(why));
}

void boot_srv_abortf(struct boot_server *srv, const char *fmt, ...)
{
	char line[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	boot_srv_abort_all(srv, -1, CB_ERR_PEER, line);
}

/* A rank's deadline passed while it waited for @blame.  Its neighbours' pass
 * at about the same moment, each waiting for the next, so the first report
 * to arrive often blames a rank that is itself only waiting.  Hold reports
 * for a moment, then tell everyone the one whose blamed rank reported
 * nothing: that rank is the one that stopped. */
static void srv_stall(struct boot_server *srv, int origin, int blame,
                      const char *line)
{
	struct stall *st;

	if (srv->aborted)
		return;
	st = realloc(srv->stalls, (size_t)(srv->nstalls + 1) * sizeof(*st));
	if (!st) {
		boot_srv_abort_all(srv, origin, CB_ERR_TIMEOUT, line);
		return;
	}
	srv->stalls = st;
	st = &srv->stalls[srv->nstalls++];
	st->origin = origin;
	st->blame = blame;
	snprintf(st->line, sizeof(st->line), "%s", line);
	if (!srv->decide_ns)
		srv->decide_ns = cb_now_ns() + 300000000ull;
}

void boot_srv_stall_decide(struct boot_server *srv)
{
	int pick = 0;

	for (int i = 0; i < srv->nstalls; i++) {
		int blamed_waits = 0;
		for (int j = 0; j < srv->nstalls; j++)
			if (srv->stalls[j].origin == srv->stalls[i].blame)
				blamed_waits = 1;
		if (!blamed_waits) {
			pick = i;
			break;
		}
	}
	boot_srv_abort_all(srv, srv->stalls[pick].origin, CB_ERR_TIMEOUT,
	                   srv->stalls[pick].line);
	srv->decide_ns = 0;
}

/* boot_server_missing, with the lock held. */
static void srv_missing(struct boot_server *srv, const char *prefix, int n,
                        char *out, size_t bytes)
{
	char key[BOOT_KEY_MAX + 16];
	size_t len = 0;
	int shown = 0, more = 0;

	out[0] = '\0';
	for (int r = 0; r < n; r++) {
		snprintf(key, sizeof(key), "%s%d", prefix, r);
		if (boot_kv_has(srv->kv, key))
			continue;
		if (shown == 8) {
			more++;
			continue;
		}
		int joined = 0;
		for (int i = 0; i < srv->nclients && !joined; i++)
			joined = srv->clients[i].rank == r &&
			         srv->clients[i].fd >= 0;
		cb_buf_appendf(out, bytes, &len, "%s%d%s", shown ? ", " : "", r,
		               joined ? "" : " (never connected)");
		shown++;
	}
	if (more)
		cb_buf_appendf(out, bytes, &len, " and %d more", more);
}

/* Compared in constant time: how long a refusal takes says nothing of how
 * much of a guess was right. */
static int token_ok(const char *want, const char *got)
{
	unsigned char diff = 0;

	if (!want[0])
		return 1;
	for (size_t i = 0; i < BOOT_TOKEN_MAX; i++)
		diff |= (unsigned char)(want[i] ^ got[i]);
	return diff == 0;
}

static void srv_hello(struct boot_server *srv, struct client *c,
                      const void *val, uint32_t bytes)
{
	struct boot_hello h;
	char line[256];

	if (boot_hello_decode(val, bytes, &h)) {
		boot_srv_drop(srv, c);
		return;
	}
	line[0] = '\0';
	if (!token_ok(srv->token, h.token)) {
		/* Not one of ours: a stranger, a rank of another job, or a
		 * launcher that gave the ranks different secrets.  The job
		 * goes on; the rank it claims may still arrive. */
		cb_log(CB_LOG_WARN,
		       "rendezvous: refused %s (says rank %d on %s): %s",
		       c->addr, h.rank, h.host,
		       h.token[0] ? "its job token is not this job's"
		                  : "it has no job token");
		snprintf(line, sizeof(line),
		         "the rendezvous refused this rank: %s (ranks of one "
		         "job "
		         "share a token: from PMIx, the launcher, or "
		         "COLLBENCH_JOB_TOKEN)",
		         h.token[0]
		                 ? "its job token is not the job's"
		                 : "it has no job token and the job has one");
	} else if (h.world != srv->world)
		snprintf(line, sizeof(line),
		         "rank %d on %s says the job has %d ranks, rank 0 says "
		         "%d "
		         "(launcher and --np disagree?)",
		         h.rank, h.host, h.world, srv->world);
	else if (h.rank < 0 || h.rank >= srv->world)
		snprintf(line, sizeof(line), "rank %d on %s is outside 0..%d",
		         h.rank, h.host, srv->world - 1);
	for (int i = 0; !line[0] && i < srv->nclients; i++)
		if (srv->clients[i].rank == h.rank)
			snprintf(
			        line, sizeof(line),
			        "two processes claim rank %d (hosts %s and %s)",
			        h.rank, srv->clients[i].host, h.host);
	if (line[0]) {
		srv_send(srv, c, MSG_ERROR, NULL, 0, line,
		         (uint32_t)strlen(line));
		boot_srv_drop(srv, c);
		return;
	}
	c->rank = h.rank;
	snprintf(c->host, sizeof(c->host), "%s", h.host);
	uint64_t job = srv->job_id;
	srv_send(srv, c, MSG_WELCOME, NULL, 0, &job, sizeof(job));
}

static void srv_message(struct boot_server *srv, int ci,
                        const struct boot_hdr *h, const char *key,
                        const uint8_t *key_raw, const uint8_t *val)
{
	struct client *c = &srv->clients[ci];

	if (c->rank < 0 && h->type != MSG_HELLO) {
		boot_srv_drop(srv, c);
		return;
	}
	switch (h->type) {
	case MSG_HELLO:
		srv_hello(srv, c, val, h->val_bytes);
		return;
	case MSG_SET:
		boot_kv_set(srv->kv, key, val, h->val_bytes);
		return;
	case MSG_GET:
		boot_kv_get(srv->kv, ci, key);
		return;
	case MSG_GATHER:
		boot_kv_gather(srv->kv, ci, key, val, h->val_bytes);
		return;
	case MSG_ABORT: {
		char line[600];
		snprintf(line, sizeof(line), "%.*s", (int)h->val_bytes,
		         (const char *)val);
		boot_line_clean(line);
		int32_t k[2] = { CB_ERR_PEER, -1 }; /* status, blamed rank */
		if (boot_pair_decode(key_raw, h->key_bytes, k) == 0) {
			k[0] = boot_status_decode(k[0]);
			if (k[1] >= srv->world)
				k[1] = -1;
		}
		/* A rank that timed out in the rendezvous itself cannot see
		 * who is missing; the store can (a rank stopped at start-up
		 * is then named, not only the rank that waited for it). */
		const char *stuck = k[0] == CB_ERR_TIMEOUT && k[1] < 0
		                            ? boot_kv_stuck_gather(srv->kv)
		                            : NULL;
		if (stuck && !strstr(line, "still missing")) {
			char who[256];
			srv_missing(srv, stuck, srv->world, who, sizeof(who));
			if (who[0]) {
				snprintf(line + strlen(line),
				         sizeof(line) - strlen(line),
				         "; still missing: rank %s", who);
				boot_srv_abort_all(srv, c->rank, k[0], line);
				return;
			}
		}
		if (k[0] == CB_ERR_TIMEOUT && k[1] >= 0)
			srv_stall(srv, c->rank, k[1], line);
		else
			boot_srv_abort_all(srv, c->rank, k[0], line);
		return;
	}
	case MSG_BYE:
		c->bye = 1;
		srv->byes++;
		return;
	default:
		break;
	}
	/* An unknown type from a rank: same as garbage. */
	boot_srv_abortf(srv,
	                "rank %d (%s) sent the rendezvous a message that "
	                "does not parse (type %u)",
	                c->rank, c->host, h->type);
	boot_srv_drop(srv, c);
}

/* Parse what arrived from client @ci; returns -1 when it was dropped. */
int boot_srv_parse(struct boot_server *srv, int ci)
{
	struct client *c = &srv->clients[ci];
	struct boot_in m;
	long used;

	while (c->fd >= 0 && (used = boot_frame(c->in, c->in_bytes, &m))) {
		if (used < 0) {
			if (c->rank >= 0) {
				boot_srv_abortf(
				        srv,
				        "rank %d (%s) sent the rendezvous "
				        "a message that does not parse "
				        "(magic 0x%08x)",
				        c->rank, c->host, m.h.magic);
			} else {
				cb_log(CB_LOG_WARN,
				       "rendezvous: dropped a connection from "
				       "%s that is not a collbench rank (its "
				       "first message does not parse)",
				       c->addr);
			}
			boot_srv_drop(srv, c);
			return -1;
		}
		srv_message(srv, ci, &m.h, m.key, m.key_raw, m.val);
		if (c->fd < 0)
			return -1;
		memmove(c->in, c->in + used, c->in_bytes - (size_t)used);
		c->in_bytes -= (size_t)used;
	}
	return 0;
}

void boot_server_missing(struct boot_server *srv, const char *prefix, int n,
                         char *out, size_t bytes)
{
	pthread_mutex_lock(&srv->lock);
	srv_missing(srv, prefix, n, out, bytes);
	pthread_mutex_unlock(&srv->lock);
}