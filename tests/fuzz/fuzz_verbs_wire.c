/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_verbs_wire.c - the checks the verbs transport runs on
 * every byte from a peer (transports/verbs/verbs_wire.c, compiled in
 * here: no libibverbs needed), fed arbitrary bytes.
 *
 * Input: a mode byte - bits 0-1: what comes (0 address and connection
 * blob, 1 an exported memory handle, 2 a SEND, 3 an immediate), bit 2:
 * a why buffer of 8 bytes (else 160).  Then:
 *   0  the peer's rank (a byte), the address's length (a byte), the
 *      address, and the rest is the blob;
 *   1  the rest is the handle;
 *   2, 3  the receiver's window: rails and rail (a byte: nrails-1 in bits
 *      0-1, rail in bits 2-4), credits (a byte, mod 65), recv_seq (4
 *      bytes), arrivals (2 bytes, mod VB_ARRIVALS + 1), send_seq (4
 *      bytes); then the SEND's bytes (the rest), or the immediate (4).
 *
 * Beyond not crashing: what a check accepts has every property the
 * transport relies on when it indexes with it (rails, rings, sizes,
 * strings); what it refuses gets a reason of one line; and the encodings
 * round-trip: an accepted header decodes the same once written out again,
 * and an immediate encodes back to its bits (and any in-window immediate
 * built from the input decodes to what was encoded).
 */
#include <string.h>

#include "fuzz.h"
#include "transports/verbs/verbs_wire.h"

struct in {
	const uint8_t *p;
	size_t left;
};

static int take(struct in *in, void *out, size_t n)
{
	if (in->left < n)
		return -1;
	memcpy(out, in->p, n);
	in->p += n;
	in->left -= n;
	return 0;
}

/* A refusal says why, in one line. */
static void refused(const char *why, size_t n)
{
	FUZZ_CHECK(memchr(why, 0, n) != NULL);
	FUZZ_CHECK(why[0] != 0);
	FUZZ_CHECK(strchr(why, '\n') == NULL);
}

/* @seq is a receive the window has posted. */
static int posted(const struct vb_wire_win *w, uint32_t seq)
{
	int32_t d = (int32_t)(seq - w->recv_seq);

	return d < 0 && d >= -VB_RNDV_Q;
}

static void conn(struct in *in, char *why, size_t wn)
{
	uint8_t peer, alen;
	struct vb_addr a;
	struct vb_ep_blob b;

	if (take(in, &peer, 1) || take(in, &alen, 1) || alen > in->left)
		return;
	const uint8_t *addr = in->p, *blob = in->p + alen;
	size_t blen = in->left - alen;
	if (vb_wire_conn(addr, alen, blob, blen, peer, &a, &b, why, wn)) {
		refused(why, wn);
		return;
	}
	FUZZ_CHECK(alen == sizeof(a) && blen == sizeof(b));
	FUZZ_CHECK(!memcmp(&a, addr, sizeof(a)) && !memcmp(&b, blob, blen));
	FUZZ_CHECK(a.magic == VB_MAGIC && b.magic == VB_MAGIC);
	FUZZ_CHECK(a.rank == peer && b.rank == peer);
	FUZZ_CHECK(b.nrails >= 1 && b.nrails <= VB_MAX_RAILS);
	FUZZ_CHECK(a.nrails == b.nrails && a.cm <= 1);
	for (uint32_t i = 0; i < b.nrails; i++) {
		FUZZ_CHECK(b.rail[i].mtu >= VB_MTU_MIN &&
		           b.rail[i].mtu <= VB_MTU_MAX);
		FUZZ_CHECK(b.rail[i].link < VB_LINK_N && b.rail[i].port);
		FUZZ_CHECK(b.rail[i].qpn <= VB_QPN_MAX &&
		           b.rail[i].psn <= VB_PSN_MAX);
		FUZZ_CHECK(strlen(b.rail[i].dev) < sizeof(b.rail[i].dev));
		FUZZ_CHECK(!a.cm || a.rail[i].cm_port);
	}
}

static void export(struct in *in, char *why, size_t wn)
{
	struct vb_export x;

	if (vb_wire_export(in->p, in->left, &x, why, wn)) {
		refused(why, wn);
		return;
	}
	FUZZ_CHECK(in->left == sizeof(x) && !memcmp(&x, in->p, sizeof(x)));
	FUZZ_CHECK(x.magic == VB_MAGIC);
	FUZZ_CHECK(x.nrails >= 1 && x.nrails <= VB_MAX_RAILS);
	FUZZ_CHECK(x.addr + x.bytes >= x.addr);
}

static int window(struct in *in, struct vb_wire_win *w)
{
	uint8_t r, c;
	uint16_t arr;

	if (take(in, &r, 1) || take(in, &c, 1) || take(in, &w->recv_seq, 4) ||
	    take(in, &arr, 2) || take(in, &w->send_seq, 4))
		return -1;
	w->nrails = 1 + (r & 3);
	w->rail = (r >> 2) & 7;
	w->credits = c % (VB_RECV_SLOTS + 1);
	w->arrivals = arr % (VB_ARRIVALS + 1);
	return 0;
}

static void msg(struct in *in, char *why, size_t wn)
{
	struct vb_wire_win w;
	struct vb_hdr h, again;
	static uint8_t slot[VB_SLOT_BYTES];

	if (window(in, &w))
		return;
	uint32_t len = in->left > 0xffffffffu ? 0xffffffffu : in->left;
	if (vb_wire_msg(in->p, len, &w, &h, why, wn)) {
		refused(why, wn);
		return;
	}
	FUZZ_CHECK(len >= VB_HDR && len <= VB_SLOT_BYTES);
	FUZZ_CHECK(!memcmp(&h, in->p, sizeof(h)));
	FUZZ_CHECK(h.type >= VB_EAGER && h.type <= VB_HELLO);
	FUZZ_CHECK(w.rail >= 0 && w.rail < w.nrails);
	FUZZ_CHECK(w.credits + h.credits <= VB_RECV_SLOTS);
	if (h.type != VB_FIN && h.type != VB_HELLO && h.type != VB_CREDIT)
		FUZZ_CHECK(w.rail == 0);
	switch (h.type) {
	case VB_EAGER:
	case VB_FRAG:
		/* the payload is in the slot, and fits a receive's copy */
		FUZZ_CHECK(len == VB_HDR + h.bytes && h.bytes <= VB_EAGER_MAX);
		break;
	default:
		FUZZ_CHECK(len == VB_HDR);
	}
	switch (h.type) {
	case VB_EAGER:
	case VB_RTS:
		/* a posted receive's, or the next arrival, with room in the
		 * ring: it never overwrites one waiting there */
		FUZZ_CHECK(posted(&w, h.seq) ||
		           (h.seq == w.recv_seq + w.arrivals &&
		            w.arrivals < VB_ARRIVALS));
		break;
	case VB_FRAG:
		FUZZ_CHECK(posted(&w, h.seq));
		break;
	case VB_FIN:
		FUZZ_CHECK(posted(&w, h.seq));
		FUZZ_CHECK(h.addr >= 1 && h.addr <= (uint64_t)w.nrails &&
		           (uint64_t)w.rail < h.addr);
		break;
	case VB_RTR:
		FUZZ_CHECK((int32_t)(h.seq - w.send_seq) < VB_RNDV_Q);
		break;
	case VB_NOTIFY:
		FUZZ_CHECK(h.tag < VB_IMM_RNDV);
		break;
	}
	/* written out again (as vb_send_msg does: header, payload), it
	 * decodes the same */
	memcpy(slot, &h, sizeof(h));
	memcpy(slot + VB_HDR, in->p + VB_HDR, len - VB_HDR);
	FUZZ_CHECK(vb_wire_msg(slot, len, &w, &again, why, wn) == 0);
	FUZZ_CHECK(!memcmp(&h, &again, sizeof(h)));
}

static void imm(struct in *in, char *why, size_t wn)
{
	struct vb_wire_win w;
	struct vb_imm m, back;
	uint32_t v;

	if (window(in, &w) || take(in, &v, 4))
		return;
	if (vb_wire_imm(v, &w, &m, why, wn)) {
		refused(why, wn);
	} else {
		FUZZ_CHECK(vb_imm_encode(&m) == v);
		FUZZ_CHECK(w.rail >= 0 && w.rail < w.nrails);
		if (m.rndv) {
			FUZZ_CHECK(m.k >= 1 && m.k <= w.nrails && w.rail < m.k);
			FUZZ_CHECK(posted(&w, m.seq));
			FUZZ_CHECK((m.seq & VB_IMM_SEQ) == (v & VB_IMM_SEQ));
		} else {
			FUZZ_CHECK(m.value == v && m.value < VB_IMM_RNDV);
		}
	}
	/* decode(encode(x)) == x for any x a sender may build: the same
	 * bits read as a rendezvous in the window, on a rail it covers */
	if (w.rail >= w.nrails)
		return;
	m = (struct vb_imm){
		.rndv = 1,
		.sized = (v >> 31) & 1,
		.k = w.rail + 1 +
		     (int)((v >> 16) % (uint32_t)(w.nrails - w.rail)),
		.seq = w.recv_seq - 1 - (v % VB_RNDV_Q),
	};
	FUZZ_CHECK(vb_wire_imm(vb_imm_encode(&m), &w, &back, why, wn) == 0);
	FUZZ_CHECK(!memcmp(&m, &back, sizeof(m)));
	m = (struct vb_imm){ .value = v & ~VB_IMM_RNDV };
	FUZZ_CHECK(vb_wire_imm(vb_imm_encode(&m), &w, &back, why, wn) == 0);
	FUZZ_CHECK(!memcmp(&m, &back, sizeof(m)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	char why[160];
	uint8_t mode;

	if (take(&in, &mode, 1))
		return 0;
	size_t wn = mode & 4 ? 8 : sizeof(why);
	switch (mode & 3) {
	case 0:
		conn(&in, why, wn);
		break;
	case 1:
		export(&in, why, wn);
		break;
	case 2:
		msg(&in, why, wn);
		break;
	default:
		imm(&in, why, wn);
	}
	return 0;
}
