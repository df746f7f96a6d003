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

/* Send relay @r's staged answer: FWDM {n, its channels} with the VALUE
 * header, then the answer itself, shared. */
static void mc_send(struct client *r)
{
	if (!r->mc_n)
		return;
	uint32_t n = (uint32_t)r->mc_n, body = r->mc_body->bytes;
	size_t list = sizeof(uint32_t) * (1 + n);
	struct boot_sbuf *h = boot_sbuf_new(2 * sizeof(struct boot_hdr) + list);

	if (h && r->fd >= 0) {
		uint8_t *p = h->data;
		boot_hdr_encode((struct boot_hdr *)(void *)p, MSG_FWDM, 0,
		                (uint32_t)(list + sizeof(struct boot_hdr)) +
		                        body);
		p += sizeof(struct boot_hdr);
		uint32_t k = htonl(n);
		memcpy(p, &k, sizeof(k));
		for (uint32_t i = 0; i < n; i++) {
			k = htonl(r->mc_chan[i]);
			memcpy(p + sizeof(k) * (1 + i), &k, sizeof(k));
		}
		p += list;
		boot_hdr_encode((struct boot_hdr *)(void *)p, MSG_VALUE, 0,
		                body);
		if (!boot_outq_push(&r->out, r->fd, h))
			boot_outq_push(&r->out, r->fd, r->mc_body);
	}
	boot_sbuf_put(h);
	boot_sbuf_put(r->mc_body);
	r->mc_body = NULL;
	r->mc_n = 0;
}

void boot_srv_mc_flush(struct boot_server *srv)
{
	for (int i = 0; i < srv->n_mc; i++)
		mc_send(&srv->clients[srv->mc_relays[i]]);
	srv->n_mc = 0;
}

/* Stage @body for relayed client @c; -1 when it cannot be (send it alone). */
static int mc_stage(struct boot_server *srv, struct client *c,
                    struct boot_sbuf *body)
{
	struct client *r = &srv->clients[c->via];

	if (r->mc_n && r->mc_body != body)
		mc_send(r); /* another answer staged first: it goes first */
	if (r->mc_n == r->mc_cap) {
		int cap = r->mc_cap ? r->mc_cap * 2 : 16;
		uint32_t *ch = realloc(r->mc_chan, (size_t)cap * sizeof(*ch));
		if (!ch)
			return -1;
		r->mc_chan = ch;
		r->mc_cap = cap;
	}
	if (!r->mc_n) {
		if (srv->n_mc == srv->cap_mc) {
			int cap = srv->cap_mc ? srv->cap_mc * 2 : 16;
			int *l = realloc(srv->mc_relays,
			                 (size_t)cap * sizeof(*l));
			if (!l)
				return -1;
			srv->mc_relays = l;
			srv->cap_mc = cap;
		}
		srv->mc_relays[srv->n_mc++] = c->via;
		r->mc_body = body;
		body->refs++;
	}
	r->mc_chan[r->mc_n++] = c->chan;
	return 0;
}

/* Queue message @a, then @b (NULL: none), for client @c: on its socket, or
 * as one FWD on its relay's, after what is staged there.  -1 when it is gone
 * or out of memory. */
static int srv_push(struct boot_server *srv, struct client *c,
                    struct boot_sbuf *a, struct boot_sbuf *b)
{
	struct client *to = c->via >= 0 ? &srv->clients[c->via] : c;
	int rc = 0;

	if (to->fd < 0)
		return -1;
	if (c->via >= 0) {
		mc_send(to);
		uint32_t k = htonl(c->chan);
		struct boot_sbuf *f =
		        boot_msg_new(MSG_FWD, &k, sizeof(k), NULL, 0);
		if (!f)
			return -1;
		boot_hdr_encode((struct boot_hdr *)(void *)f->data, MSG_FWD,
		                sizeof(k), a->bytes + (b ? b->bytes : 0));
		rc = boot_outq_push(&to->out, to->fd, f);
		boot_sbuf_put(f);
	}
	if (!rc)
		rc = boot_outq_push(&to->out, to->fd, a);
	if (!rc && b)
		rc = boot_outq_push(&to->out, to->fd, b);
	return rc;
}

static int srv_send(struct boot_server *srv, struct client *c, uint32_t type,
                    const void *key, uint32_t key_bytes, const void *val,
                    uint32_t val_bytes)
{
	struct boot_sbuf *b;
	int rc;

	if (!boot_cl_live(c) ||
	    !(b = boot_msg_new(type, key, key_bytes, val, val_bytes)))
		return -1;
	rc = srv_push(srv, c, b, NULL);
	boot_sbuf_put(b);
	return rc;
}

/* Room for @more bytes after what client @c holds: grown to what is asked
 * (doubling), not to a socket read's size, since most clients hold nothing
 * between reads (boot_srv_feed); -1 when there is none. */
static int srv_room(struct client *c, size_t more)
{
	if (c->in_cap - c->in_bytes >= more)
		return 0;
	size_t cap = c->in_cap ? c->in_cap : 256;
	while (cap - c->in_bytes < more)
		cap *= 2;
	uint8_t *in = realloc(c->in, cap);
	if (!in)
		return -1;
	c->in = in;
	c->in_cap = cap;
	return 0;
}

int boot_srv_add_client(struct boot_server *srv, int fd, const char *addr)
{
	if (srv->nclients == srv->cap_clients) {
		int cap = srv->cap_clients ? srv->cap_clients * 2 : 64;
		struct client *cl = realloc(srv->clients, cap * sizeof(*cl));
		if (!cl) {
			close(fd);
			return -1;
		}
		srv->clients = cl;
		srv->cap_clients = cap;
	}
	struct client *c = &srv->clients[srv->nclients];
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->rank = -1;
	c->via = -1;
	snprintf(c->addr, sizeof(c->addr), "%s", addr);
	return srv->nclients++;
}

/* Close client @c and forget what it waited for.  A relayed rank's relay is
 * told to close its local socket; a relay's ranks go with it. */
void boot_srv_drop(struct boot_server *srv, struct client *c)
{
	int ci = (int)(c - srv->clients);

	if (c->via >= 0) {
		struct client *r = &srv->clients[c->via];
		uint32_t k = htonl(c->chan);
		mc_send(r); /* what it was answered goes before the close */
		struct boot_sbuf *f =
		        boot_msg_new(MSG_FWD, &k, sizeof(k), NULL, 0);
		if (f && r->fd >= 0)
			boot_outq_push(&r->out, r->fd, f);
		boot_sbuf_put(f);
		if (c->chan < (uint32_t)r->nvc)
			r->vc[c->chan] = -2;
		c->via = -1;
	}
	if (c->relay) {
		for (int k = 0; k < c->nvc; k++) {
			int vi = c->vc[k];
			c->vc[k] = -2;
			if (vi >= 0 && srv->clients[vi].via == ci) {
				srv->clients[vi].via = -1;
				boot_srv_drop(srv, &srv->clients[vi]);
			}
		}
		free(c->vc);
		c->vc = NULL;
		c->nvc = 0;
		boot_sbuf_put(c->mc_body); /* its ranks are gone */
		c->mc_body = NULL;
		c->mc_n = 0;
		free(c->mc_chan);
		c->mc_chan = NULL;
		c->mc_cap = 0;
	}
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->in);
	c->in = NULL;
	c->in_bytes = c->in_cap = 0;
	boot_outq_clear(&c->out);
	boot_kv_forget_client(srv->kv, ci);
}

/* Relay @ci's connection ended: its leader's process is gone, and every
 * rank of its host that had not finished with it. */
static void srv_relay_eof(struct boot_server *srv, int ci)
{
	struct client *r = &srv->clients[ci];
	int lost = 0, leader = 0;

	for (int k = 0; k < r->nvc; k++) {
		const struct client *v =
		        r->vc[k] >= 0 ? &srv->clients[r->vc[k]] : NULL;
		if (v && v->rank >= 0 && !v->bye) {
			lost++;
			leader |= v->rank == r->relay_rank;
		}
	}
	if (lost && leader)
		boot_srv_abortf(
		        srv,
		        "rank %d (host %s) left the job without "
		        "finishing: it exited or was killed (it relayed "
		        "to the rendezvous %d unfinished rank%s of its "
		        "host, itself included)",
		        r->relay_rank, r->host, lost, lost == 1 ? "" : "s");
	else if (lost)
		boot_srv_abortf(
		        srv,
		        "host %s's relay to the rendezvous (kept by rank "
		        "%d) closed with %d rank%s of that host still in "
		        "the job",
		        r->host, r->relay_rank, lost, lost == 1 ? "" : "s");
	boot_srv_drop(srv, r);
}

void boot_srv_eof(struct boot_server *srv, int ci)
{
	struct client *c = &srv->clients[ci];

	if (c->relay) {
		srv_relay_eof(srv, ci);
		return;
	}
	if (c->rank >= 0 && !c->bye)
		boot_srv_abortf(srv,
		                "rank %d (host %s) left the job without "
		                "finishing: it exited or was killed",
		                c->rank, c->host);
	boot_srv_drop(srv, c);
}

void boot_srv_forward(struct boot_server *srv, int ci, uint32_t chan,
                      const uint8_t *bytes, uint32_t n)
{
	struct client *r = &srv->clients[ci];

	if (chan >= (uint32_t)r->nvc) {
		if (chan >= 65536u || !n)
			return; /* the relay takes no more; nothing to close */
		int nvc = (int)chan + 64;
		int *vc = realloc(r->vc, (size_t)nvc * sizeof(*vc));
		if (!vc)
			return;
		for (int k = r->nvc; k < nvc; k++)
			vc[k] = -1;
		r->vc = vc;
		r->nvc = nvc;
	}
	int vi = r->vc[chan];
	if (vi == -2 || (vi == -1 && !n))
		return; /* dropped, or closed before it said anything */
	if (vi == -1) {
		char addr[64];
		snprintf(addr, sizeof(addr), "%s", r->addr);
		if ((vi = boot_srv_add_client(srv, -1, addr)) < 0)
			return;
		r = &srv->clients[ci]; /* the clients may have moved */
		srv->clients[vi].via = ci;
		srv->clients[vi].chan = chan;
		r->vc[chan] = vi;
	}
	if (!n)
		boot_srv_eof(srv, vi);
	else
		boot_srv_feed(srv, vi, bytes, n);
}

/* The store's answer to client @ci: a VALUE whose payload @body may be
 * shared with other clients. */
void boot_srv_answer(void *ctx, int ci, struct boot_sbuf *body)
{
	struct boot_server *srv = ctx;
	struct client *c = &srv->clients[ci];

	if (c->via >= 0 && srv->clients[c->via].fd >= 0 &&
	    !mc_stage(srv, c, body))
		return;
	struct boot_sbuf *h = boot_msg_new(MSG_VALUE, NULL, 0, NULL, 0);
	if (!h || !boot_cl_live(c)) {
		boot_sbuf_put(h);
		return;
	}
	boot_hdr_encode((struct boot_hdr *)(void *)h->data, MSG_VALUE, 0,
	                body->bytes);
	srv_push(srv, c, h, body);
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
			         boot_cl_live(&srv->clients[i]);
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
	/* The job id, then where the store saw this rank come from (its
	 * relay's address, for a relayed rank: the host's address). */
	uint8_t w[sizeof(uint64_t) + sizeof(c->addr)];
	size_t al = strlen(c->addr);
	memcpy(w, &srv->job_id, sizeof(uint64_t));
	memcpy(w + sizeof(uint64_t), c->addr, al);
	srv_send(srv, c, MSG_WELCOME, NULL, 0, w,
	         (uint32_t)(sizeof(uint64_t) + al));
}

static void srv_message(struct boot_server *srv, int ci,
                        const struct boot_hdr *h, const char *key,
                        const uint8_t *key_raw, const uint8_t *val)
{
	struct client *c = &srv->clients[ci];

	/* A host's relay: it says who keeps it, then only forwards. */
	if (h->type == MSG_RELAY && c->rank < 0 && c->via < 0 && !c->relay &&
	    h->val_bytes == sizeof(struct boot_relay_hello)) {
		struct boot_relay_hello rh;
		memcpy(&rh, val, sizeof(rh));
		rh.host[sizeof(rh.host) - 1] = '\0';
		boot_line_clean(rh.host);
		c->relay = 1;
		c->relay_rank = (int)ntohl((uint32_t)rh.rank);
		snprintf(c->host, sizeof(c->host), "%s", rh.host);
		return;
	}
	if (c->relay) {
		uint32_t k;
		if (h->type != MSG_FWD || h->key_bytes != sizeof(k)) {
			boot_srv_abortf(
			        srv,
			        "host %s's relay to the rendezvous sent a "
			        "message that does not parse (type %u)",
			        c->host, h->type);
			boot_srv_drop(srv, c);
			return;
		}
		memcpy(&k, key_raw, sizeof(k));
		boot_srv_forward(srv, ci, ntohl(k), val, h->val_bytes);
		return;
	}
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

/* Handle the whole messages in @p[0..@n) from client @ci: the bytes used,
 * or -1 when it was dropped. */
static long srv_parse(struct boot_server *srv, int ci, const uint8_t *p,
                      size_t n)
{
	struct client *c = &srv->clients[ci];
	struct boot_in m;
	size_t done = 0;
	long used;

	while (boot_cl_live(c) && (used = boot_frame(p + done, n - done, &m))) {
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
		c = &srv->clients[ci]; /* a relay's message may add clients */
		if (!boot_cl_live(c))
			return -1;
		done += (size_t)used;
	}
	return boot_cl_live(c) ? (long)done : -1;
}

int boot_srv_feed(struct boot_server *srv, int ci, const uint8_t *p, size_t n)
{
	struct client *c = &srv->clients[ci];
	int held = c->in_bytes > 0;
	long used;

	if (held) { /* after the part of a message it sent before */
		if (srv_room(c, n))
			goto nomem;
		memcpy(c->in + c->in_bytes, p, n);
		c->in_bytes += n;
		p = c->in;
		n = c->in_bytes;
	}
	if ((used = srv_parse(srv, ci, p, n)) < 0)
		return -1;
	c = &srv->clients[ci];
	if (held) {
		memmove(c->in, c->in + used, c->in_bytes - (size_t)used);
		c->in_bytes -= (size_t)used;
	} else if ((size_t)used < n) {
		if (srv_room(c, n - (size_t)used))
			goto nomem;
		memcpy(c->in, p + used, n - (size_t)used);
		c->in_bytes = n - (size_t)used;
	}
	if (!c->in_bytes) { /* most clients, between two messages */
		free(c->in);
		c->in = NULL;
		c->in_cap = 0;
	}
	return 0;
nomem:
	boot_srv_abortf(srv, "the rendezvous is out of memory");
	return -1;
}

void boot_server_missing(struct boot_server *srv, const char *prefix, int n,
                         char *out, size_t bytes)
{
	pthread_mutex_lock(&srv->lock);
	srv_missing(srv, prefix, n, out, bytes);
	pthread_mutex_unlock(&srv->lock);
}