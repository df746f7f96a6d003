/* SPDX-License-Identifier: MIT */
/*
 * tests/verbs-emu/wire.h - a connection between two processes of the
 * emulated fabric (shared by wire.c, the stream, and rx.c, the receiver).
 */
#ifndef CBEMU_WIRE_H
#define CBEMU_WIRE_H

#include "emu.h"

enum sink_kind {
	SINK_NONE,
	SINK_DISCARD, /* payload nobody may see: read and dropped */
	SINK_DIRECT,  /* into registered memory (a WRITE, a receive, a READ
	                 response) */
	SINK_HOLD,    /* into a buffer: the message waits for a receive */
};

/* A message parked at a responder QP that has no receive posted (RNR). */
struct emu_held {
	struct emu_held *next;
	struct wire_hdr hdr;
	struct emu_conn *conn;
	uint8_t *data;
};

struct ack_rec {
	uint32_t qpn, src;
	uint64_t seq;
	uint8_t type, nak, epoch;
};

struct emu_conn {
	struct emu_conn *next;
	int fd;
	struct in_addr ip; /* the peer's address and listening port: the key */
	uint16_t port;
	bool keyed, connecting, dead;
	int64_t last_rx_ns, last_tx_ctl_ns;

	/* send stream (txlock) */
	pthread_mutex_t txlock;
	struct emu_txitem *txq, **txq_tail;
	bool want_out;
	bool rate_blocked;

	/* receive stream (progress thread, eng.lock) */
	uint8_t *rbuf;
	size_t rcap, rr, rw;
	bool in_payload;
	struct wire_hdr cur;
	uint64_t remaining;
	enum sink_kind sink;
	struct iovec siov[EMU_MAX_SGE];
	int nsiov, siov_i;
	size_t siov_off;
	struct emu_mr *smr[EMU_MAX_SGE]; /* regions the sink writes into */
	int nsmr;
	struct emu_qp *sqp; /* the QP the message is for (a reference) */
	struct emu_held *hold;
	bool got_payload;

	/* acknowledgements and NAKs to send after this batch */
	struct ack_rec *acks;
	int nacks, acks_cap;
};

/* what a responder does with a request (rx.c) */
enum verdict { V_OK, V_DROP, V_DUP, V_NAK, V_RNR };

struct plan {
	enum verdict v;
	uint8_t nak;
	struct iovec iov[EMU_MAX_SGE];
	int niov;
	struct emu_mr *mr[EMU_MAX_SGE];
	int nmr;
};

static inline uint32_t emu_payload_of(const struct wire_hdr *h)
{
	return h->type == WT_SEND || h->type == WT_WRITE ||
	                       h->type == WT_READ_RESP
	               ? h->len
	               : 0;
}

static inline bool emu_has_imm(const struct wire_hdr *h)
{
	return h->flags & WF_IMM;
}

/* rx.c */
struct emu_qp *emu_qp_lookup(uint32_t qpn);
void emu_rx_plan(struct emu_qp *qp, const struct wire_hdr *h, struct plan *p,
                 bool parked);
void emu_rx_done(struct emu_conn *c, struct emu_qp *qp,
                 const struct wire_hdr *h, struct plan *p);
void emu_rx_request(struct emu_conn *c, const struct wire_hdr *h);
void emu_rx_on_ack(const struct wire_hdr *h);
void emu_rx_on_nak(const struct wire_hdr *h);
void emu_rx_on_read_resp(struct emu_conn *c, const struct wire_hdr *h);
void emu_rx_read_done(struct emu_qp *qp, const struct wire_hdr *h);
void emu_rx_set_sink(struct emu_conn *c, struct emu_qp *qp, struct plan *p);
void emu_rx_sink_reset(struct emu_conn *c);
/* timers.c */
void emu_rx_deliver_held(struct emu_qp *qp, int64_t now);
void emu_rx_readable(struct emu_conn *c);
void emu_rx_cancel(struct emu_conn *c);
void emu_rx_send_acks(struct emu_conn *c);
void emu_rx_ack(struct emu_conn *c, uint8_t type, uint8_t nak, uint32_t qpn,
                uint32_t src, uint64_t seq, uint8_t epoch);
void emu_timers(int64_t now);

/* wire.c */
void emu_conn_kill(struct emu_conn *c, const char *why);
void emu_conn_send_owned(struct emu_conn *c, void *buf, size_t len);

#endif
