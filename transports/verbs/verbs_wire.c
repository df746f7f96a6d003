/* SPDX-License-Identifier: MIT */
/*
 * transports/verbs/verbs_wire.c - the checks on every byte a peer sends the
 * verbs transport (see verbs_wire.h for what travels).
 *
 * A peer is another collbench of the same job, so a check that fails here
 * means a different build, memory corruption or a stranger on the fabric:
 * the transport fails the job with one line naming the peer, and what this
 * file wrote in @why says which field was wrong.  The checks are pure (no
 * libibverbs, no state but what the caller passes) so that the fuzz target
 * runs them on arbitrary bytes: whatever they accept is safe to index
 * with.  Sequence numbers are checked against windows, not just reduced
 * modulo a ring's size: a number from outside the window would land on
 * another message's entry.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "transports/verbs/verbs_wire.h"

__attribute__((format(printf, 3, 4))) static int bad(char *why, size_t n,
                                                     const char *fmt, ...)
{
	va_list ap;

	if (n) {
		va_start(ap, fmt);
		vsnprintf(why, n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

int vb_wire_conn(const void *addr, size_t addr_bytes, const void *blob,
                 size_t blob_bytes, int peer, struct vb_addr *a,
                 struct vb_ep_blob *b, char *why, size_t n)
{
	if (blob_bytes != sizeof(*b) || addr_bytes != sizeof(*a))
		return bad(why, n, "%zu and %zu bytes, not %zu and %zu",
		           addr_bytes, blob_bytes, sizeof(*a), sizeof(*b));
	memcpy(b, blob, sizeof(*b));
	memcpy(a, addr, sizeof(*a));
	if (b->magic != VB_MAGIC || a->magic != VB_MAGIC)
		return bad(why, n, "magic 0x%x and 0x%x, not 0x%x", a->magic,
		           b->magic, VB_MAGIC);
	if (a->rank != peer || b->rank != peer)
		return bad(why, n, "it says it is rank %d and %d", a->rank,
		           b->rank);
	if (b->nrails < 1 || b->nrails > VB_MAX_RAILS || a->nrails != b->nrails)
		return bad(why, n, "%u and %u rails, not the same 1..%d",
		           a->nrails, b->nrails, VB_MAX_RAILS);
	if (a->cm > 1)
		return bad(why, n, "connection mode %u (0 or 1)", a->cm);
	for (uint32_t i = 0; i < b->nrails; i++) {
		if (a->cm && !a->rail[i].cm_port)
			return bad(why, n, "rail %u has no rdma_cm port", i);
		if (b->rail[i].mtu < VB_MTU_MIN || b->rail[i].mtu > VB_MTU_MAX)
			return bad(why, n, "rail %u: MTU code %u (%d..%d)", i,
			           b->rail[i].mtu, VB_MTU_MIN, VB_MTU_MAX);
		if (b->rail[i].link >= VB_LINK_N)
			return bad(why, n, "rail %u: link layer %u", i,
			           b->rail[i].link);
		if (!b->rail[i].port)
			return bad(why, n, "rail %u: port 0", i);
		if (b->rail[i].qpn > VB_QPN_MAX || b->rail[i].psn > VB_PSN_MAX)
			return bad(
			        why, n,
			        "rail %u: QP number 0x%x, PSN 0x%x (24 bits)",
			        i, b->rail[i].qpn, b->rail[i].psn);
		if (!memchr(b->rail[i].dev, 0, sizeof(b->rail[i].dev)))
			return bad(why, n,
			           "rail %u: the device name does not "
			           "end",
			           i);
	}
	return 0;
}

int vb_wire_export(const void *blob, size_t bytes, struct vb_export *x,
                   char *why, size_t n)
{
	if (bytes != sizeof(*x))
		return bad(why, n, "%zu bytes, not %zu", bytes, sizeof(*x));
	memcpy(x, blob, sizeof(*x));
	if (x->magic != VB_MAGIC)
		return bad(why, n, "magic 0x%x, not 0x%x", x->magic, VB_MAGIC);
	if (x->nrails < 1 || x->nrails > VB_MAX_RAILS)
		return bad(why, n, "%u rails (1..%d)", x->nrails, VB_MAX_RAILS);
	if (x->addr + x->bytes < x->addr)
		return bad(why, n, "%llu bytes at 0x%llx wrap around",
		           (unsigned long long)x->bytes,
		           (unsigned long long)x->addr);
	return 0;
}

/* @seq (whole) is a receive this rank has posted: one of the VB_RNDV_Q
 * before recv_seq. */
static int posted(const struct vb_wire_win *w, uint32_t seq)
{
	int32_t d = (int32_t)(seq - w->recv_seq);

	return d < 0 && d >= -VB_RNDV_Q;
}

static const char *const type_name[] = {
	[VB_EAGER] = "EAGER",   [VB_RTS] = "RTS",     [VB_RTR] = "RTR",
	[VB_FRAG] = "FRAG",     [VB_FIN] = "FIN",     [VB_NOTIFY] = "NOTIFY",
	[VB_CREDIT] = "CREDIT", [VB_HELLO] = "HELLO",
};

int vb_wire_msg(const void *buf, uint32_t len, const struct vb_wire_win *w,
                struct vb_hdr *h, char *why, size_t n)
{
	if (len < VB_HDR || len > VB_SLOT_BYTES)
		return bad(why, n, "sent a %u-byte message that does not parse",
		           len);
	if (w->rail < 0 || w->rail >= w->nrails)
		return bad(why, n, "sent a message on rail %d of %d", w->rail,
		           w->nrails);
	memcpy(h, buf, sizeof(*h));
	if (h->type < VB_EAGER || h->type > VB_HELLO)
		return bad(why, n, "sent a message of unknown type %u",
		           h->type);
	const char *t = type_name[h->type];
	/* credits come back for slots used: never more than were */
	if (h->credits > VB_RECV_SLOTS - w->credits)
		return bad(why, n,
		           "returned %u credits on rail %d, where %d were in "
		           "use",
		           h->credits, w->rail, VB_RECV_SLOTS - w->credits);
	int payload = h->type == VB_EAGER || h->type == VB_FRAG;
	if (payload ? len - VB_HDR != h->bytes : len != VB_HDR)
		return bad(why, n, "sent %u bytes for a %s of %llu", len, t,
		           (unsigned long long)(payload ? h->bytes : 0));
	/* all but FIN, HELLO and CREDIT go on rail 0 */
	if (h->type != VB_FIN && h->type != VB_HELLO && h->type != VB_CREDIT &&
	    w->rail != 0)
		return bad(why, n, "sent a %s on rail %d", t, w->rail);
	uint32_t next = w->recv_seq + w->arrivals;
	switch (h->type) {
	case VB_EAGER:
	case VB_RTS:
		/* a posted receive's, or the next to wait for one */
		if (posted(w, h->seq))
			break;
		if (w->arrivals >= VB_ARRIVALS)
			return bad(why, n,
			           "sent message %u while %u waited for their "
			           "receives, all this rank holds",
			           h->seq, w->arrivals);
		if (h->seq != next)
			return bad(
			        why, n,
			        "sent message %u where this rank expected %u",
			        h->seq, next);
		break;
	case VB_RTR:
		/* the peer posts receives for messages this rank has sent or
		 * will: at most VB_RNDV_Q past the last one it completed,
		 * which this rank sent */
		if ((int32_t)(h->seq - w->send_seq) >= VB_RNDV_Q)
			return bad(why, n,
			           "sent an RTR for message %u, more than %d "
			           "past this rank's %u",
			           h->seq, VB_RNDV_Q, w->send_seq);
		break;
	case VB_FRAG:
	case VB_FIN:
		if (h->type == VB_FIN &&
		    (h->addr < 1 || h->addr > (uint64_t)w->nrails ||
		     (uint64_t)w->rail >= h->addr))
			return bad(why, n,
			           "finished message %u over %llu rail(s), on "
			           "rail %d of %d",
			           h->seq, (unsigned long long)h->addr, w->rail,
			           w->nrails);
		/* a piece or the end of a message a receive is posted for */
		if (!posted(w, h->seq))
			return bad(why, n,
			           "%s message %u, which this rank does not "
			           "receive",
			           h->type == VB_FRAG ? "sent a piece of"
			                              : "finished",
			           h->seq);
		break;
	case VB_NOTIFY:
		if (h->tag & ~(uint64_t)(VB_IMM_RNDV - 1))
			return bad(why, n,
			           "sent notification %llu (they are below "
			           "2^31)",
			           (unsigned long long)h->tag);
		break;
	default: /* CREDIT, HELLO: nothing more */
		break;
	}
	return 0;
}

int vb_wire_imm(uint32_t imm, const struct vb_wire_win *w, struct vb_imm *m,
                char *why, size_t n)
{
	*m = (struct vb_imm){ 0 };
	if (w->rail < 0 || w->rail >= w->nrails)
		return bad(why, n, "wrote on rail %d of %d", w->rail,
		           w->nrails);
	if (!(imm & VB_IMM_RNDV)) {
		m->value = imm;
		return 0;
	}
	m->rndv = 1;
	m->sized = !!(imm & VB_IMM_SIZED);
	m->k = (int)((imm >> 28) & 3) + 1;
	/* the 28 bits back to a whole number near recv_seq */
	uint32_t d28 = (imm - w->recv_seq) & VB_IMM_SEQ;
	int32_t d =
	        d28 & 0x08000000u ? (int32_t)d28 - 0x10000000 : (int32_t)d28;
	m->seq = w->recv_seq + (uint32_t)d;
	if (m->k > w->nrails || w->rail >= m->k)
		return bad(why, n,
		           "wrote message %u over %d rail(s), on rail %d of %d",
		           m->seq, m->k, w->rail, w->nrails);
	if (!posted(w, m->seq))
		return bad(why, n,
		           "finished a large message (%u) this rank did not "
		           "ask for",
		           m->seq);
	return 0;
}

uint32_t vb_imm_encode(const struct vb_imm *m)
{
	if (!m->rndv)
		return m->value & ~VB_IMM_RNDV;
	return VB_IMM_RNDV | (m->sized ? VB_IMM_SIZED : 0) | VB_IMM_K(m->k) |
	       (m->seq & VB_IMM_SEQ);
}
