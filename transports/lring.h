/* SPDX-License-Identifier: MIT */
/*
 * transports/lring.h - the slot ring shm and gpu share: between two ranks of
 * one host, a single-producer single-consumer ring of fixed-size slots that
 * lies in the receiver's memory segment and is written by one peer alone.
 *
 * The sender fills the slot at its count and publishes it by storing the
 * count + 1 in the slot's seq (release); the receiver waits for the next
 * number (acquire), consumes the slot and publishes how many it consumed,
 * which the sender reads (acquire) only when its ring looks full.
 * Notifications (a put's) travel in slots of their own kind and wait in a
 * small queue of the receiver's until notify_poll takes them.
 *
 * A pure data structure over memory both processes map: no system call,
 * nothing of the core, no state beyond struct lring.  Each transport keeps
 * its slot size and count; a slot is a struct lring_hdr, its data right
 * behind; the other slot kinds are transports/lpeer.h's.  Header only: every
 * call is on the message path (each transport links apart, so a shared .c
 * would be compiled twice anyway).
 */
#ifndef CB_TRANSPORTS_LRING_H
#define CB_TRANSPORTS_LRING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <collbench/status.h>

#define LRING_NOTIFY   3u  /* the kind of a put's notification slot */
#define LRING_NOTIFY_Q 64u /* notifications waiting for notify_poll */

/* The head of every slot (40 bytes); the slot's data follows it. */
struct lring_hdr {
	_Atomic uint64_t seq; /* the sender's count + 1, stored last */
	uint64_t tag;         /* LRING_NOTIFY: the notification */
	uint64_t bytes;       /* the whole message's */
	union {
		uint64_t addr; /* shm's rendezvous: the sender's buffer */
		uint64_t off;  /* an eager fragment's offset */
	};
	uint32_t kind;
	uint32_t frag_bytes; /* bytes of data in this slot */
};
_Static_assert(sizeof(struct lring_hdr) == 40, "a slot's head: 40 bytes");

/* One endpoint's two rings: the one it writes (in the peer's segment), the
 * one it reads (in its own). */
struct lring {
	unsigned char *tx, *rx;           /* slot 0 of each */
	_Atomic uint64_t *tx_freed;       /* the peer's count of consumed */
	_Atomic uint64_t *rx_freed;       /* ours, for the peer */
	size_t slot_bytes, data_bytes;    /* a slot's, the data in it */
	uint32_t mask;                    /* slots - 1 (a power of two) */
	uint64_t tx_seq, tx_seen, rx_seq; /* published, seen freed, taken */
	uint32_t notify[LRING_NOTIFY_Q];  /* taken, not yet polled */
	uint32_t nq_head, nq_tail;
};

/* The ring we read: @nslots slots of @slot_bytes at @slots, @freed the
 * counter the peer reads. */
static inline void lring_init_rx(struct lring *r, void *slots,
                                 _Atomic uint64_t *freed, size_t slot_bytes,
                                 uint32_t nslots)
{
	r->rx = slots;
	r->rx_freed = freed;
	r->slot_bytes = slot_bytes;
	r->data_bytes = slot_bytes - sizeof(struct lring_hdr);
	r->mask = nslots - 1;
}

/* The ring we write, in the peer's segment (same geometry). */
static inline void lring_init_tx(struct lring *r, void *slots,
                                 _Atomic uint64_t *freed)
{
	r->tx = slots;
	r->tx_freed = freed;
}

/* The data behind a slot's head (a slot the caller may write, or one it
 * only reads: const is the caller's to keep). */
static inline void *lring_data(const struct lring_hdr *s)
{
	return (unsigned char *)(uintptr_t)s + sizeof(*s);
}

/* The slot to fill next, or NULL while the peer has not freed one. */
static inline struct lring_hdr *lring_tx_slot(struct lring *r)
{
	if (r->tx_seq - r->tx_seen > r->mask) {
		r->tx_seen =
		        atomic_load_explicit(r->tx_freed, memory_order_acquire);
		if (r->tx_seq - r->tx_seen > r->mask)
			return NULL;
	}
	return (struct lring_hdr *)(void *)(r->tx + (r->tx_seq & r->mask) *
	                                                    r->slot_bytes);
}

/* Hand the filled slot @s over: everything written to it before is seen
 * by the peer once it sees this. */
static inline void lring_tx_publish(struct lring *r, struct lring_hdr *s)
{
	atomic_store_explicit(&s->seq, ++r->tx_seq, memory_order_release);
}

/* A put's notification, behind what was published before; 0: no room. */
static inline int lring_tx_notify(struct lring *r, uint32_t notify)
{
	struct lring_hdr *s = lring_tx_slot(r);

	if (!s)
		return 0;
	s->tag = notify;
	s->bytes = 0;
	s->kind = LRING_NOTIFY;
	s->frag_bytes = 0;
	lring_tx_publish(r, s);
	return 1;
}

/*
 * The next fragment of @buf (@bytes, @off sent so far) into slot @s, as
 * @kind, published; returns the new offset.  A zero-byte message is one
 * empty fragment.
 */
static inline size_t lring_tx_eager(struct lring *r, struct lring_hdr *s,
                                    uint32_t kind, const void *buf,
                                    size_t bytes, size_t off)
{
	size_t n = bytes - off;

	if (n > r->data_bytes)
		n = r->data_bytes;
	s->kind = kind;
	s->off = off;
	s->frag_bytes = (uint32_t)n;
	if (n)
		memcpy(lring_data(s), (const char *)buf + off, n);
	lring_tx_publish(r, s);
	return off + n;
}

/* The slot the peer published next, or NULL. */
static inline struct lring_hdr *lring_rx_head(struct lring *r)
{
	struct lring_hdr *s =
	        (struct lring_hdr *)(void *)(r->rx + (r->rx_seq & r->mask) *
	                                                     r->slot_bytes);

	if (atomic_load_explicit(&s->seq, memory_order_acquire) !=
	    r->rx_seq + 1)
		return NULL;
	return s;
}

/* Done with the head slot: the peer may fill it again. */
static inline void lring_rx_consume(struct lring *r)
{
	r->rx_seq++;
	atomic_store_explicit(r->rx_freed, r->rx_seq, memory_order_release);
}

/* Take notifications off the head of the ring into the queue; 1 if any. */
static inline int lring_take_notifies(struct lring *r)
{
	struct lring_hdr *s;
	int moved = 0;

	while ((s = lring_rx_head(r)) && s->kind == LRING_NOTIFY &&
	       r->nq_tail - r->nq_head != LRING_NOTIFY_Q) {
		r->notify[r->nq_tail++ % LRING_NOTIFY_Q] = (uint32_t)s->tag;
		lring_rx_consume(r);
		moved = 1;
	}
	return moved;
}

/* The next slot that is not a notification (those go to the queue first),
 * or NULL: nothing yet, or the queue is full (notify_poll empties it).
 * Sets *moved when it took notifications. */
static inline struct lring_hdr *lring_rx_next(struct lring *r, int *moved)
{
	struct lring_hdr *s;

	while ((s = lring_rx_head(r)) && s->kind == LRING_NOTIFY) {
		if (!lring_take_notifies(r))
			return NULL;
		*moved = 1;
	}
	return s;
}

/* notify_poll: the oldest notification, or CB_AGAIN. */
static inline cb_status_t lring_notify_poll(struct lring *r, uint32_t *notify)
{
	lring_take_notifies(r);
	if (r->nq_head == r->nq_tail)
		return CB_AGAIN;
	*notify = r->notify[r->nq_head++ % LRING_NOTIFY_Q];
	return CB_OK;
}

#endif
