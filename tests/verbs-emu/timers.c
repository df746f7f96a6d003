/* SPDX-License-Identifier: MIT */
/*
 * tests/verbs-emu/timers.c - what the progress thread does on its clock:
 * messages parked at a responder (delivered when a receive is posted, or
 * RNR retry exceeded), the requester's retry timer and go-back-N
 * retransmission, the ports (their interface's state and the admin file;
 * async events and link_downed when they change), the counter files.
 */
#include "wire.h"

#include <stdlib.h>
#include <string.h>

static int64_t rnr_timer_ns(uint8_t t)
{
	static const uint32_t us[32] = {
		655360, 10,    20,    30,     40,     60,     80,     120,
		160,    240,   320,   480,    640,    960,    1280,   1920,
		2560,   3840,  5120,  7680,   10240,  15360,  20480,  30720,
		40960,  61440, 81920, 122880, 163840, 245760, 327680, 491520
	};
	return (int64_t)us[t & 31] * 1000;
}

void emu_rx_drop_held(struct emu_qp *qp)
{
	while (qp->held) {
		struct emu_held *h = qp->held;
		qp->held = h->next;
		free(h->data);
		free(h);
	}
	qp->held_tail = &qp->held;
}

void emu_rx_deliver_held(struct emu_qp *qp, int64_t now)
{
	while (qp->held) {
		struct emu_held *m = qp->held;
		struct plan p;
		emu_rx_plan(qp, &m->hdr, &p, true);
		if (p.v == V_RNR) {
			int64_t lim = rnr_timer_ns(qp->min_rnr_timer) *
			              (m->hdr.rnr_retry + 1);
			if (lim < emu_host.retry_floor_ns)
				lim = emu_host.retry_floor_ns;
			if (lim > emu_host.retry_cap_ns)
				lim = emu_host.retry_cap_ns;
			if (m->hdr.rnr_retry < 7 &&
			    now - qp->rnr_since_ns > lim) {
				emu_rx_ack(m->conn, WT_NAK, NAK_RNR_EXC,
				           m->hdr.src_qpn, m->hdr.dst_qpn,
				           m->hdr.seq, m->hdr.epoch);
				emu_rx_drop_held(qp);
			}
			return;
		}
		qp->held = m->next;
		if (!qp->held)
			qp->held_tail = &qp->held;
		if (p.v == V_OK) {
			size_t off = 0;
			for (int i = 0;
			     i < p.niov && m->hdr.type != WT_READ_REQ; i++) {
				memcpy(p.iov[i].iov_base, m->data + off,
				       p.iov[i].iov_len);
				off += p.iov[i].iov_len;
			}
			emu_rx_done(m->conn, qp, &m->hdr, &p);
			qp->rnr_since_ns = now;
		} else if (p.v == V_DUP) {
			emu_rx_ack(m->conn, WT_ACK, 0, m->hdr.src_qpn,
			           m->hdr.dst_qpn, qp->rx_seq, 0);
		} else {
			emu_rx_ack(m->conn, WT_NAK,
			           p.v == V_DROP ? NAK_DROP : p.nak,
			           m->hdr.src_qpn, m->hdr.dst_qpn, m->hdr.seq,
			           m->hdr.epoch);
			if (p.v == V_NAK)
				emu_rx_drop_held(qp);
		}
		free(m->data);
		free(m);
	}
}

static void check_retry(struct emu_qp *qp, int64_t now)
{
	struct emu_swqe *w;
	struct emu_conn *c = qp->conn;
	int64_t start, ref;
	bool dead;
	if (qp->sq_acked == qp->sq_head || qp->rnr_wait)
		return;
	if (qp->retx_at && now >= qp->retx_at) { /* go back to the oldest */
		struct emu_swqe *h = emu_swqe_at(qp, qp->sq_acked);
		if (qp->conn)
			emu_conn_detach_qp(qp->conn, qp);
		if (h->state == W_SENT)
			qp->tx_psn = h->hdr.psn;
		qp->sq_tx = qp->sq_acked;
		qp->retx_at = 0;
	}
	if (qp->sq_tx != qp->sq_head)
		emu_qp_transmit(qp);
	if (qp->qpx.qp_base.state != IBV_QPS_RTS &&
	    qp->qpx.qp_base.state != IBV_QPS_SQD)
		return;
	w = emu_swqe_at(qp, qp->sq_acked);
	start = w->state == W_SENT ? w->tx_ns : w->post_ns;
	dead = qp->path_dead || !c || c->dead ||
	       !atomic_load(&qp->ctx->dev->up);
	ref = start;
	if (!dead) {
		if (c->last_rx_ns > ref)
			ref = c->last_rx_ns;
		if (qp->last_progress_ns > ref)
			ref = qp->last_progress_ns;
	}
	if (now - ref > emu_qp_deadline_ns(qp)) {
		emu_log("qp %u: retry exceeded: oldest unacked %u (%s %.3f s "
		        "ago), sent up to %u of %u, last from the peer %.3f s "
		        "ago, progress %.3f s ago%s",
		        qp->qpx.qp_base.qp_num, qp->sq_acked,
		        w->state == W_SENT ? "sent" : "posted",
		        (double)(now - start) * 1e-9, qp->sq_tx, qp->sq_head,
		        c ? (double)(now - c->last_rx_ns) * 1e-9 : -1.0,
		        (double)(now - qp->last_progress_ns) * 1e-9,
		        dead ? ", path dead" : "");
		emu_counter_add(qp->ctx->dev->index, EMU_C_LOCAL_ACK_TIMEOUT,
		                1);
		emu_qp_to_error(qp, IBV_WC_RETRY_EXC_ERR);
	}
}

static void poll_ports(int64_t now)
{
	if (now - emu_eng.last_port_poll_ns < 50000000 &&
	    !atomic_exchange(&emu_eng.need_port_poll, false))
		return;
	emu_eng.last_port_poll_ns = now;
	for (int i = 0; i < emu_host.ndev; i++) {
		struct emu_dev *d = &emu_host.dev[i];
		bool up = emu_port_up(d);
		uint32_t was = up ? 0 : 1;
		atomic_store(&d->up, up);
		if (up == (bool)d->reported)
			continue;
		d->reported = up;
		/* one process of the host counts the transition */
		if (!up && atomic_compare_exchange_strong(
		                   &emu_host.sh->port[i].seen_up, &was, 0))
			emu_counter_add(i, EMU_C_LINK_DOWNED, 1);
		if (up)
			atomic_store(&emu_host.sh->port[i].seen_up, 1);
		emu_port_event_all(d, up);
		emu_counters_flush(true);
	}
}

void emu_timers(int64_t now)
{
	emu_faults_tick(now);
	poll_ports(now);
	if (atomic_exchange(&emu_eng.need_scan, false) ||
	    now - emu_eng.last_scan_ns >= 2000000) {
		emu_eng.last_scan_ns = now;
		for (uint32_t i = 1; i <= emu_eng.qp_hi; i++) {
			struct emu_qp *qp = emu_eng.qp[i];
			if (!qp)
				continue;
			pthread_mutex_lock(&qp->lock);
			if (qp->held)
				emu_rx_deliver_held(qp, now);
			check_retry(qp, now);
			pthread_mutex_unlock(&qp->lock);
		}
	}
	if (now - emu_eng.last_flush_ns >= 20000000) {
		emu_eng.last_flush_ns = now;
		emu_counters_flush(false);
	}
}
