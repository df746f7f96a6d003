/* SPDX-License-Identifier: MIT */
/*
 * core/boot_client.h - what core/bootstrap.c (joining, aborts, closing) and
 * core/boot_ops.c (the store's operations: set, get, gathers, barrier) share
 * of a rank's client of the rendezvous store.  Inside core only.
 */
#ifndef CB_CORE_BOOT_CLIENT_H
#define CB_CORE_BOOT_CLIENT_H

#include <stdint.h>

#include "core/bootstrap.h"
#include "core/log.h"

struct cb_boot {
	int fd;
	int rank, world;
	uint64_t job_id;
	double timeout_s;
	uint32_t seq;    /* allgather / barrier round, the same on every rank */
	char where[300]; /* "the rendezvous at host:port" */
	char local_ip[64];
	int aborted, abort_origin; /* an ABORT arrived, from whom */
	int sent_abort;
	char abort_line[512];
	char gathering[48]; /* key prefix of the gather waited for, or "" */
	struct boot_server *srv;
	struct boot_relay *relay; /* local rank 0's relay, or NULL */
	int relayed;              /* this rank speaks through a relay */
	int joined;               /* the store admitted it */
};

static inline uint64_t boot_deadline(const struct cb_boot *b)
{
	return cb_now_ns() + (uint64_t)(b->timeout_s * 1e9);
}

/* Send one message (header, key, value) by the store's deadline. */
cb_status_t boot_send(struct cb_boot *b, uint32_t type, const char *key,
                      const void *val, uint32_t val_bytes);
/* Read one message.  An ABORT is turned into CB_ERR_ABORTED here, so callers
 * only ever see the reply they wait for.  *@val is malloc'ed. */
cb_status_t boot_recv(struct cb_boot *b, uint64_t deadline,
                      const char *waiting_for, uint32_t *type, uint8_t **val,
                      uint32_t *val_bytes);
/* boot_recv, and a message of type @want or a failure line. */
cb_status_t boot_expect(struct cb_boot *b, uint64_t deadline, uint32_t want,
                        const char *waiting_for, uint8_t **val,
                        uint32_t *val_bytes);

#endif
