/* SPDX-License-Identifier: MIT */
/*
 * transports/verbs/verbs_wire.h - what the verbs transport exchanges with
 * its peers, byte for byte, and the checks every such byte passes before
 * it is used (verbs_wire.c).  Plain C: nothing here needs libibverbs, so
 * the fuzz target (tests/fuzz/fuzz_verbs_wire.c) builds it anywhere.
 *
 * From a peer come: its address (struct vb_addr) and connection blob
 * (struct vb_ep_blob) through the bootstrap; exported memory handles
 * (struct vb_export); and at run time SENDs (struct vb_hdr, then payload)
 * and the 32-bit immediates of writes.  Their fields index rings and
 * rails and give sizes, so each is checked against what this rank can
 * hold (struct vb_wire_win) before the transport looks at it.
 */
#ifndef CB_TRANSPORTS_VERBS_WIRE_H
#define CB_TRANSPORTS_VERBS_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define VB_HIDDEN __attribute__((visibility("hidden")))

#define VB_MAGIC      0x43425642u /* "CBVB" */
#define VB_MAX_RAILS  4           /* NICs (device:port) one rank stripes over */
#define VB_SLOT_BYTES 8192u       /* one eager buffer: header + payload */
#define VB_RECV_SLOTS 64          /* receives posted per queue pair */
#define VB_RNDV_Q     512         /* rendezvous in flight per endpoint */
#define VB_ARRIVALS   (VB_RNDV_Q + VB_RECV_SLOTS)

/* enum ibv_mtu's values (IBV_MTU_256 .. IBV_MTU_4096; verbs.c checks). */
#define VB_MTU_MIN 1
#define VB_MTU_MAX 5

/* Queue pair numbers and packet sequence numbers are 24 bits. */
#define VB_QPN_MAX 0xffffffu
#define VB_PSN_MAX 0xffffffu

/* Sequence numbers wrap: a before b. */
#define VB_SEQ_LT(a, b) ((int32_t)((a) - (b)) < 0)

/*
 * imm_data of a write with immediate: a put's notification (bit 31 clear,
 * the value), or the end of a rendezvous: bit 31 set, bit 30 "the message
 * fills the receive (no RTS told its size)", bits 28-29 the rails it was
 * striped over less one, bits 0-27 its sequence number.
 */
#define VB_IMM_RNDV  0x80000000u
#define VB_IMM_SIZED 0x40000000u
#define VB_IMM_SEQ   0x0fffffffu
#define VB_IMM_K(k)  ((uint32_t)((k)-1) << 28)

enum vb_link { VB_LINK_IB, VB_LINK_ROCE, VB_LINK_IWARP, VB_LINK_N };

/* What travels in a SEND: a header, then (EAGER, FRAG) payload. */
enum vb_type {
	VB_EAGER = 1, /* a whole message */
	VB_RTS,       /* a large message is ready: {seq, tag, bytes; addr: 1
	               * when the sender writes zero-copy} */
	VB_RTR,       /* a receive is posted: {seq, addr, bytes = capacity,
	               * rkeys} (no rkey: send it in FRAGs) */
	VB_FRAG,      /* a piece of a large message, through slots */
	VB_FIN,       /* iWARP: the writes of rendezvous seq are done
	               * {seq, bytes, addr = rails} */
	VB_NOTIFY,    /* iWARP: a put's notification */
	VB_CREDIT,    /* credits only */
	VB_HELLO,     /* first message: the pair is connected both ways */
};

struct vb_hdr {
	uint8_t type;
	uint8_t pad;
	uint16_t credits; /* receive slots re-posted since the last report */
	uint32_t seq;     /* RTS/RTR/FRAG/FIN: the message's sequence number */
	uint64_t tag;     /* EAGER/RTS: the message's; NOTIFY: the value */
	uint64_t bytes;   /* EAGER/RTS/FIN: message bytes; FRAG: piece
	                   * bytes; RTR: the receive's capacity */
	uint64_t addr;    /* RTR: receive buffer; FRAG: offset */
	uint32_t rkey[VB_MAX_RAILS]; /* RTR: per rail, 0: no zero copy */
};

#define VB_HDR       sizeof(struct vb_hdr)
#define VB_EAGER_MAX (VB_SLOT_BYTES - sizeof(struct vb_hdr))

/* The exported form of registered memory (mem_export's blob). */
struct vb_export {
	uint32_t magic, nrails;
	uint64_t addr, bytes;
	uint32_t rkey[VB_MAX_RAILS];
};

/* What ep_create publishes for one peer: a QP per rail. */
struct vb_ep_blob {
	uint32_t magic;
	int32_t rank;
	uint32_t nrails, pad;
	struct {
		uint32_t qpn, psn;
		uint16_t lid;
		uint8_t port, mtu, link, pad[3];
		uint8_t gid[16];
		char dev[16]; /* for messages */
	} rail[VB_MAX_RAILS];
};

/* The context's address: how to reach its rails with rdma_cm. */
struct vb_addr {
	uint32_t magic;
	int32_t rank;
	uint32_t nrails, cm;
	struct {
		uint32_t ipv4;
		uint16_t cm_port;
		uint16_t pad;
	} rail[VB_MAX_RAILS];
};

/* The layout is the format: ranks of one job may be different builds. */
_Static_assert(sizeof(struct vb_hdr) == 48, "struct vb_hdr is a wire format");
_Static_assert(sizeof(struct vb_export) == 40, "vb_export is a wire format");
_Static_assert(sizeof(struct vb_ep_blob) == 208, "vb_ep_blob is a wire format");
_Static_assert(sizeof(struct vb_addr) == 48, "vb_addr is a wire format");

/*
 * What the receiving endpoint can hold when a message comes: its sequence
 * numbers and room, and the rail it came on.
 */
struct vb_wire_win {
	int nrails;        /* rails in use with this peer, 1..VB_MAX_RAILS */
	int rail;          /* the one this came on, < nrails */
	int credits;       /* that rail's credits (the peer's free slots) */
	uint32_t recv_seq; /* the next receive this rank will post; those
	                    * posted are the VB_RNDV_Q before it at most */
	uint32_t arrivals; /* messages waiting for their receive */
	uint32_t send_seq; /* the next message this rank will send */
};

/* An immediate, decoded. */
struct vb_imm {
	int rndv;       /* the end of a rendezvous; else a notification */
	int sized;      /* rndv: the message fills its receive */
	int k;          /* rndv: rails it was striped over, 1..VB_MAX_RAILS */
	uint32_t seq;   /* rndv: its sequence number (all 32 bits) */
	uint32_t value; /* notification: the value, below 2^31 */
};

/*
 * The checks.  Each returns 0 with the peer's bytes decoded into the
 * caller's struct, or -1 with @why (@why_bytes) saying what is wrong in
 * words that follow "rank N (host H) " or "the connection data of rank N
 * does not parse: ".  Nothing they accept indexes out of bounds.
 */

/* A peer's address and connection blob: for rank @peer, sizes exact,
 * magic, rank, rails 1..VB_MAX_RAILS and the same in both, cm 0 or 1 (and
 * a port when 1); per rail an MTU of enum ibv_mtu, a known link layer, a
 * port, 24-bit QP and packet sequence numbers, a NUL-terminated device. */
VB_HIDDEN int vb_wire_conn(const void *addr, size_t addr_bytes,
                           const void *blob, size_t blob_bytes, int peer,
                           struct vb_addr *a, struct vb_ep_blob *b, char *why,
                           size_t why_bytes);

/* An exported memory handle: size, magic, rails, a range that does not
 * wrap. */
VB_HIDDEN int vb_wire_export(const void *blob, size_t bytes,
                             struct vb_export *x, char *why, size_t why_bytes);

/* A SEND of @len bytes at @buf (the receive slot) against @w: its header
 * in *@h.  The type known; the length the type's (EAGER and FRAG: header
 * and payload, the rest: a header); credits no more than slots used; the
 * rail one in use, and rail 0 for all but FIN, HELLO and CREDIT; sequence
 * numbers in the window (a posted receive's, or the next arrival when
 * there is room; an RTR's not beyond the receives the peer can have
 * posted); FIN's rails 1..nrails and covering the one it came on; a
 * notification below 2^31. */
VB_HIDDEN int vb_wire_msg(const void *buf, uint32_t len,
                          const struct vb_wire_win *w, struct vb_hdr *h,
                          char *why, size_t why_bytes);

/* An immediate (host order) against @w: a rendezvous's rails 1..nrails
 * covering the rail it came on, its sequence number a posted receive's
 * (returned whole, from the 28 bits). */
VB_HIDDEN int vb_wire_imm(uint32_t imm, const struct vb_wire_win *w,
                          struct vb_imm *m, char *why, size_t why_bytes);

/* The immediate for @m (host order): the inverse of vb_wire_imm. */
VB_HIDDEN uint32_t vb_imm_encode(const struct vb_imm *m);

#endif
