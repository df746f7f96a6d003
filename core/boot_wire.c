/* SPDX-License-Identifier: MIT */
/*
 * core/boot_wire.c - decoding the rendezvous wire format (core/boot_wire.h):
 * every byte the store takes from a client, and every byte a client takes
 * from the store, goes through one of these functions first.
 *
 * They are pure (no sockets, no state), so the fuzz targets in tests/fuzz/
 * call them, and the store and the client, with the same bytes.  A peer is
 * anything that can reach the port: nothing here trusts a length, a count,
 * a status or a string it did not check.
 */
#include "core/boot_wire.h"

#include <arpa/inet.h>
#include <string.h>

void boot_hdr_encode(struct boot_hdr *wire, uint32_t type, uint32_t key_bytes,
                     uint32_t val_bytes)
{
	*wire = (struct boot_hdr){ .magic = htonl(BOOT_MAGIC),
		                   .type = htonl(type),
		                   .key_bytes = htonl(key_bytes),
		                   .val_bytes = htonl(val_bytes) };
}

int boot_hdr_decode(const void *buf, struct boot_hdr *h)
{
	memcpy(h, buf, sizeof(*h));
	h->magic = ntohl(h->magic);
	h->type = ntohl(h->type);
	h->key_bytes = ntohl(h->key_bytes);
	h->val_bytes = ntohl(h->val_bytes);
	if (h->magic != BOOT_MAGIC || h->key_bytes > BOOT_KEY_MAX ||
	    h->val_bytes > BOOT_VAL_MAX)
		return -1;
	return 0;
}

long boot_frame(const uint8_t *in, size_t len, struct boot_in *m)
{
	size_t need;

	if (len < sizeof(struct boot_hdr))
		return 0;
	if (boot_hdr_decode(in, &m->h))
		return -1;
	need = sizeof(struct boot_hdr) + m->h.key_bytes + m->h.val_bytes;
	if (len < need)
		return 0;
	/* A key is a string: it ends at its first NUL, whatever its length
	 * said, so the store never keeps two spellings of one key. */
	memcpy(m->key, in + sizeof(struct boot_hdr), m->h.key_bytes);
	m->key[m->h.key_bytes] = '\0';
	m->key_raw = in + sizeof(struct boot_hdr);
	m->val = in + sizeof(struct boot_hdr) + m->h.key_bytes;
	return (long)need;
}

int boot_hello_decode(const void *val, size_t bytes, struct boot_hello *h)
{
	if (bytes != sizeof(*h))
		return -1;
	memcpy(h, val, sizeof(*h));
	h->rank = (int32_t)ntohl((uint32_t)h->rank);
	h->world = (int32_t)ntohl((uint32_t)h->world);
	h->pid = (int32_t)ntohl((uint32_t)h->pid);
	h->host[sizeof(h->host) - 1] = '\0';
	h->token[sizeof(h->token) - 1] = '\0';
	boot_line_clean(h->host);
	return 0;
}

int boot_pair_decode(const void *key, size_t key_bytes, int32_t pair[2])
{
	uint32_t w[2];

	if (key_bytes != sizeof(w))
		return -1;
	memcpy(w, key, sizeof(w));
	pair[0] = (int32_t)ntohl(w[0]);
	pair[1] = (int32_t)ntohl(w[1]);
	return 0;
}

cb_status_t boot_status_decode(int32_t v)
{
	/* A failure has an error status; anything else is the peer's. */
	if (v >= 0)
		return CB_ERR_PEER;
	switch (v) {
#define CB_STATUS_KNOWN(name, value, text)                                     \
	case value:                                                            \
		return CB_##name;
		CB_STATUS_MAP(CB_STATUS_KNOWN)
#undef CB_STATUS_KNOWN
	}
	return CB_ERR_PEER;
}

void boot_line_clean(char *s)
{
	/* A line from the wire is printed as one line of ours: no newline,
	 * no terminal escape gets through. */
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = ' ';
}
