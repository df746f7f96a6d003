/* SPDX-License-Identifier: MIT */
/*
 * tests/verbs-emu/stream.c - the receiving end of a connection: the byte
 * stream cut into headers and payloads, each payload going where rx.c
 * decided (registered memory, a buffer for a parked message, nowhere),
 * large ones read from the socket straight into place.  Copies into a
 * QP's memory happen under that QP's lock and stop when it leaves RTR/RTS,
 * so a flushed receive's buffer is never written after its completion.
 */
#include "wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void message_done(struct emu_conn *c);

static void on_header(struct emu_conn *c, const struct wire_hdr *h)
{
	c->cur = *h;
	emu_dbg("pid %d fd %d rx type %u nak %u %06x->%06x seq %llu len %u",
	        (int)getpid(), c->fd, h->type, h->nak, h->src_qpn, h->dst_qpn,
	        (unsigned long long)h->seq, h->len);
	switch (h->type) {
	case WT_HELLO: {
		struct sockaddr_in sa;
		socklen_t l = sizeof(sa);
		if (h->seq != emu_host.fabric_id) {
			emu_log("a process of another fabric (state directory) "
			        "connected; ignored");
			emu_conn_kill(c, "fabric");
			return;
		}
		if (getpeername(c->fd, (struct sockaddr *)&sa, &l) == 0) {
			c->ip = sa.sin_addr;
			c->port = (uint16_t)h->dst_qpn;
			c->keyed = true;
		}
		break;
	}
	case WT_ACK:
		emu_rx_on_ack(h);
		break;
	case WT_NAK:
		emu_rx_on_nak(h);
		break;
	case WT_SEND:
	case WT_WRITE:
	case WT_READ_REQ:
		emu_rx_request(c, h);
		break;
	case WT_READ_RESP:
		emu_rx_on_read_resp(c, h);
		break;
	case WT_PROGRESS:
		break;
	default:
		emu_log("garbage on the wire (type %u); connection dropped",
		        h->type);
		emu_conn_kill(c, "garbage");
		return;
	}
	if (emu_payload_of(h)) {
		c->in_payload = true;
		c->remaining = emu_payload_of(h);
		if (c->sink == SINK_NONE)
			c->sink = SINK_DISCARD;
	} else if (c->sink != SINK_NONE) {
		message_done(c); /* zero bytes: parked or placed already */
	}
}

/* The sink may be written (sqp->lock taken) or has gone (discard). */
static bool sink_enter(struct emu_conn *c)
{
	enum ibv_qp_state s;
	if (c->sink == SINK_DISCARD || !c->sqp)
		return c->sink != SINK_DISCARD;
	pthread_mutex_lock(&c->sqp->lock);
	s = c->sqp->qpx.qp_base.state;
	if (c->sink == SINK_DIRECT &&
	    (c->sqp->dead || s == IBV_QPS_ERR || s == IBV_QPS_RESET)) {
		pthread_mutex_unlock(&c->sqp->lock);
		c->sink = SINK_DISCARD;
		return false;
	}
	return true;
}

static void sink_leave(struct emu_conn *c)
{
	if (c->sqp && c->sink != SINK_DISCARD)
		pthread_mutex_unlock(&c->sqp->lock);
}

static void sink_advance(struct emu_conn *c, size_t n)
{
	while (n && c->siov_i < c->nsiov) {
		size_t room = c->siov[c->siov_i].iov_len - c->siov_off;
		size_t k = n < room ? n : room;
		c->siov_off += k;
		n -= k;
		if (c->siov_off == c->siov[c->siov_i].iov_len) {
			c->siov_i++;
			c->siov_off = 0;
		}
	}
}

static void sink_copy(struct emu_conn *c, const uint8_t *src, size_t n)
{
	if (!sink_enter(c))
		return;
	while (n && c->siov_i < c->nsiov) {
		size_t room = c->siov[c->siov_i].iov_len - c->siov_off;
		size_t k = n < room ? n : room;
		memcpy((char *)c->siov[c->siov_i].iov_base + c->siov_off, src,
		       k);
		src += k;
		n -= k;
		sink_advance(c, k);
	}
	sink_leave(c);
}

static void message_done(struct emu_conn *c)
{
	struct emu_qp *qp = c->sqp;
	struct wire_hdr *h = &c->cur;
	c->in_payload = false;
	if (c->sink == SINK_HOLD && qp) {
		pthread_mutex_lock(&qp->lock);
		if (!qp->dead && qp->qpx.qp_base.state != IBV_QPS_ERR &&
		    qp->qpx.qp_base.state != IBV_QPS_RESET) {
			if (!qp->held)
				qp->rnr_since_ns = emu_now_ns();
			*qp->held_tail = c->hold;
			qp->held_tail = &c->hold->next;
			c->hold = NULL;
			emu_rx_deliver_held(qp, emu_now_ns());
		}
		pthread_mutex_unlock(&qp->lock);
	} else if (c->sink == SINK_DIRECT && qp) {
		pthread_mutex_lock(&qp->lock);
		if (!qp->dead && qp->qpx.qp_base.state != IBV_QPS_ERR &&
		    qp->qpx.qp_base.state != IBV_QPS_RESET) {
			if (h->type == WT_READ_RESP)
				emu_rx_read_done(qp, h);
			else
				emu_rx_done(c, qp, h, NULL);
		}
		pthread_mutex_unlock(&qp->lock);
	}
	emu_rx_sink_reset(c);
}

static void process(struct emu_conn *c)
{
	while (!c->dead) {
		size_t avail = c->rw - c->rr;
		if (c->in_payload) {
			size_t k = avail < c->remaining ? avail
			                                : (size_t)c->remaining;
			if (k == 0 && c->remaining)
				return;
			sink_copy(c, c->rbuf + c->rr, k);
			c->rr += k;
			c->remaining -= k;
			if (c->remaining == 0)
				message_done(c);
			continue;
		}
		if (avail < sizeof(struct wire_hdr))
			return;
		{
			struct wire_hdr h;
			memcpy(&h, c->rbuf + c->rr, sizeof(h));
			c->rr += sizeof(h);
			on_header(c, &h);
		}
	}
}

/* Large payloads go from the socket straight into place.  1: progress,
 * 0: nothing more to read now, -1: the sink went away (read normally). */
static int read_direct(struct emu_conn *c)
{
	struct iovec iov[EMU_MAX_SGE];
	size_t want = 0;
	int n = 0;
	ssize_t r;
	if (!sink_enter(c))
		return -1;
	for (int i = c->siov_i; i < c->nsiov && want < c->remaining; i++) {
		size_t off = i == c->siov_i ? c->siov_off : 0;
		iov[n].iov_base = (char *)c->siov[i].iov_base + off;
		iov[n].iov_len = c->siov[i].iov_len - off;
		if (want + iov[n].iov_len > c->remaining)
			iov[n].iov_len = c->remaining - want;
		want += iov[n].iov_len;
		n++;
	}
	r = n ? readv(c->fd, iov, n) : 0;
	sink_leave(c);
	if (r <= 0) {
		if (r == 0 || (errno != EAGAIN && errno != EINTR))
			emu_conn_kill(c, "eof");
		return 0;
	}
	c->last_rx_ns = emu_now_ns();
	c->got_payload = true;
	sink_advance(c, (size_t)r);
	c->remaining -= (size_t)r;
	if (c->remaining == 0)
		message_done(c);
	return 1;
}

void emu_rx_readable(struct emu_conn *c)
{
	for (int round = 0; round < 64 && !c->dead; round++) {
		ssize_t r;
		if (c->in_payload && c->rr == c->rw && c->remaining >= 16384 &&
		    c->sink != SINK_DISCARD) {
			int k = read_direct(c);
			if (k == 0)
				return;
			if (k > 0)
				continue;
		}
		if (c->rr == c->rw) {
			c->rr = c->rw = 0;
		} else if (c->rcap - c->rw < sizeof(struct wire_hdr)) {
			memmove(c->rbuf, c->rbuf + c->rr, c->rw - c->rr);
			c->rw -= c->rr;
			c->rr = 0;
		}
		r = read(c->fd, c->rbuf + c->rw, c->rcap - c->rw);
		if (r <= 0) {
			if (r == 0 || (errno != EAGAIN && errno != EINTR))
				emu_conn_kill(c, "eof");
			return;
		}
		c->rw += (size_t)r;
		c->last_rx_ns = emu_now_ns();
		if (c->in_payload)
			c->got_payload = true;
		process(c);
	}
}

/* ---- objects going away (eng.lock held) ---- */

void emu_engine_forget_qp(struct emu_qp *qp)
{
	/* qp->lock is held too: sinks are switched without taking it */
	for (struct emu_conn *c = emu_eng.conns; c; c = c->next)
		if (c->sqp == qp && c->sink != SINK_NONE) {
			if (c->hold) {
				free(c->hold->data);
				free(c->hold);
				c->hold = NULL;
			}
			c->sink = SINK_DISCARD;
			c->nsiov = 0;
			/* the reference is dropped by emu_rx_sink_reset later
			 */
		}
	emu_rx_drop_held(qp);
}

void emu_engine_forget_mr(struct emu_mr *mr)
{
	for (struct emu_conn *c = emu_eng.conns; c; c = c->next) {
		emu_conn_forget_range(c, mr->mr.addr, mr->mr.length);
		for (int i = 0; i < c->nsmr; i++)
			if (c->smr[i] == mr && c->sink == SINK_DIRECT) {
				c->sink = SINK_DISCARD;
				c->nsiov = 0;
			}
	}
}
