/* SPDX-License-Identifier: MIT */
/*
 * core/boot_ops.c - the rendezvous store's operations, once a rank has
 * joined (core/bootstrap.c): set a key, get one (waiting for it), wait for a
 * flag, and the gathers and the barrier built on the store's GATHER.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/boot_client.h"
#include "core/boot_wire.h"

cb_status_t cb_boot_set(struct cb_boot *b, const char *key, const void *val,
                        size_t bytes)
{
	if (strlen(key) > BOOT_KEY_MAX || bytes > BOOT_VAL_MAX)
		return cb_fail(CB_ERR_INVALID,
		               "bootstrap key or value too big");
	return boot_send(b, MSG_SET, key, val, (uint32_t)bytes);
}

cb_status_t cb_boot_get_wait(struct cb_boot *b, const char *key, void *val,
                             size_t cap, size_t *bytes, double timeout_s)
{
	char what[BOOT_KEY_MAX + 32];
	uint8_t *v;
	uint32_t vb;
	cb_status_t st;

	snprintf(what, sizeof(what), "key '%s'", key);
	if ((st = boot_send(b, MSG_GET, key, NULL, 0)) ||
	    (st = boot_expect(b, cb_now_ns() + (uint64_t)(timeout_s * 1e9),
	                      MSG_VALUE, what, &v, &vb)))
		return st;
	if (vb > cap) {
		free(v);
		return cb_fail(CB_ERR_TRUNCATE,
		               "bootstrap value of '%s' has %u "
		               "bytes, expected at most %zu",
		               key, vb, cap);
	}
	memcpy(val, v, vb);
	*bytes = vb;
	free(v);
	return CB_OK;
}

cb_status_t cb_boot_wait_flag(struct cb_boot *b, const char *key,
                              double timeout_s)
{
	uint8_t *v;
	uint32_t vb, type;
	cb_status_t st;

	struct cb_fail_rec why; /* a timeout is an answer here */

	if ((st = boot_send(b, MSG_GET, key, NULL, 0)))
		return st;
	cb_fail_open(&why);
	st = boot_recv(b, cb_now_ns() + (uint64_t)(timeout_s * 1e9), key, &type,
	               &v, &vb);
	cb_fail_close(&why, st != CB_ERR_TIMEOUT);
	if (st == CB_ERR_TIMEOUT) {
		/* Set it ourselves: the store answers the GET it holds, and
		 * the connection stays in step. */
		if ((st = boot_send(b, MSG_SET, key, "", 0)) ||
		    (st = boot_recv(b, boot_deadline(b), key, &type, &v, &vb)))
			return st;
		free(v);
		return CB_ERR_TIMEOUT;
	}
	if (!st)
		free(v);
	return st;
}

cb_status_t cb_boot_get(struct cb_boot *b, const char *key, void *val,
                        size_t cap, size_t *bytes)
{
	return cb_boot_get_wait(b, key, val, cap, bytes, b->timeout_s);
}

/*
 * One gather of every rank's @bytes at @mine under the next sequence number,
 * the store's answer in *@v (*@vb bytes): each rank's part as a 32-bit size
 * (BOOT_ABSENT: none) and its bytes, in rank order.  @root_only: only rank 0
 * asks for (and receives) the values; the others return once theirs is sent
 * (*@v NULL).  @partial_s > 0: rank 0 takes what arrived by then.
 */
static cb_status_t gather_ask(struct cb_boot *b, const char *what,
                              const void *mine, size_t bytes, int root_only,
                              double partial_s, double idle_s,
                              const unsigned char *gone, uint8_t **v,
                              uint32_t *vb)
{
	char key[64], prefix[48];
	struct boot_gather_req req = {
		.n = htonl((uint32_t)b->world),
		.waiters = htonl(root_only ? 1u : (uint32_t)b->world),
		.timeout_ms = htonl((uint32_t)(partial_s * 1e3)),
		.idle_ms = htonl((uint32_t)(idle_s * 1e3)),
	};
	cb_status_t st;

	*v = NULL;
	*vb = 0;
	snprintf(prefix, sizeof(prefix), "g/%u/", b->seq++);
	snprintf(key, sizeof(key), "%s%d", prefix, b->rank);
	if ((st = cb_boot_set(b, key, mine, bytes)) || (root_only && b->rank))
		return st;
	/* Ranks rank 0 knows are gone: an empty part each, so the gather
	 * does not wait for them (read back as absent). */
	for (int r = 0; gone && r < b->world; r++) {
		char k[64];
		snprintf(k, sizeof(k), "%s%d", prefix, r);
		if (gone[r] && r != b->rank && (st = cb_boot_set(b, k, "", 0)))
			return st;
	}
	snprintf(b->gathering, sizeof(b->gathering), "%s", prefix);
	/* Answered at the latest when the store's own deadline passes. */
	double wait_s = partial_s > b->timeout_s ? partial_s + 5 : b->timeout_s;
	if (!(st = boot_send(b, MSG_GATHER, prefix, &req, sizeof(req))))
		st = boot_expect(b, cb_now_ns() + (uint64_t)(wait_s * 1e9),
		                 MSG_VALUE, what, v, vb);
	b->gathering[0] = '\0';
	return st;
}

/* The size of the part at *@p of an answer ending at @end, *@p moved past
 * it; 0 when the answer ends first. */
static int part_size(const uint8_t **p, const uint8_t *end, uint32_t *nb)
{
	if (end - *p < 4)
		return 0;
	memcpy(nb, *p, 4);
	*nb = ntohl(*nb);
	*p += 4;
	return 1;
}

/* gather_ask with every part @bytes long, copied to @all in rank order. */
static cb_status_t boot_gather(struct cb_boot *b, const char *what,
                               const void *mine, size_t bytes, void *all,
                               int root_only, double partial_s, double idle_s,
                               const unsigned char *gone,
                               unsigned char *present)
{
	uint8_t *v;
	uint32_t vb;
	cb_status_t st;

	if ((st = gather_ask(b, what, mine, bytes, root_only, partial_s, idle_s,
	                     gone, &v, &vb)) ||
	    !v)
		return st;
	const uint8_t *p = v, *end = v + vb;
	for (int r = 0; r < b->world; r++) {
		uint32_t nb;
		if (!part_size(&p, end, &nb))
			goto bad;
		if (nb == 0 && bytes > 0 && gone && gone[r])
			nb = BOOT_ABSENT;
		if (present)
			present[r] = nb != BOOT_ABSENT;
		if (nb == BOOT_ABSENT && (partial_s > 0 || (gone && gone[r]))) {
			memset((char *)all + (size_t)r * bytes, 0, bytes);
			continue;
		}
		if (nb != bytes || (size_t)(end - p) < bytes)
			goto bad;
		memcpy((char *)all + (size_t)r * bytes, p, bytes);
		p += bytes;
	}
	free(v);
	return CB_OK;
bad:
	free(v);
	return cb_fail(CB_ERR_PROTO,
	               "ranks disagree on the size of a bootstrap gather (%u "
	               "bytes for %d ranks of %zu)",
	               vb, b->world, bytes);
}

cb_status_t cb_boot_gather_root_var(struct cb_boot *b, const char *what,
                                    const void *mine, size_t bytes, size_t max,
                                    void **all, uint32_t *lens)
{
	uint8_t *v, *out;
	uint32_t vb;
	cb_status_t st;

	if (b->rank == 0)
		*all = NULL;
	if (bytes > max)
		return cb_fail(CB_ERR_INVALID,
		               "a bootstrap gather's part of %zu bytes is over "
		               "its %zu",
		               bytes, max);
	if ((st = gather_ask(b, what, mine, bytes, 1, 0, 0, NULL, &v, &vb)) ||
	    !v)
		return st;
	/* Packed where it lies: each part moves down over the sizes. */
	const uint8_t *p = v, *end = v + vb;
	out = v;
	for (int r = 0; r < b->world; r++) {
		uint32_t nb;
		if (!part_size(&p, end, &nb) || nb > max ||
		    (size_t)(end - p) < nb)
			goto bad;
		memmove(out, p, nb);
		out += nb;
		p += nb;
		lens[r] = nb;
	}
	*all = v;
	return CB_OK;
bad:
	free(v);
	return cb_fail(CB_ERR_PROTO,
	               "a bootstrap gather's answer does not hold %d parts of "
	               "at most %zu bytes (%u bytes)",
	               b->world, max, vb);
}

cb_status_t cb_boot_allgather(struct cb_boot *b, const char *what,
                              const void *mine, size_t bytes, void *all)
{
	return boot_gather(b, what, mine, bytes, all, 0, 0, 0, NULL, NULL);
}

cb_status_t cb_boot_gather_root(struct cb_boot *b, const char *what,
                                const void *mine, size_t bytes, void *all,
                                double partial_s, unsigned char *present)
{
	return boot_gather(b, what, mine, bytes, all, 1, partial_s, 0, NULL,
	                   present);
}

cb_status_t cb_boot_gather_root_idle(struct cb_boot *b, const char *what,
                                     const void *mine, size_t bytes, void *all,
                                     double partial_s, double idle_s,
                                     const unsigned char *gone,
                                     unsigned char *present)
{
	return boot_gather(b, what, mine, bytes, all, 1, partial_s, idle_s,
	                   gone, present);
}

cb_status_t cb_boot_barrier(struct cb_boot *b)
{
	char *all = malloc((size_t)b->world);
	cb_status_t st;
	char one = 1;

	if (!all)
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	st = boot_gather(b, "every rank to reach a barrier", &one, 1, all, 0, 0,
	                 0, NULL, NULL);
	free(all);
	return st;
}
