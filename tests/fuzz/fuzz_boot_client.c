/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_boot_client.c - a rank's client of the rendezvous
 * (core/bootstrap.c), talking to a "store" that sends the input: the
 * client joins (HELLO, then WELCOME expected), then runs the requests the
 * first byte picks - get, allgather (the second and fourth request: a
 * gather to rank 0 of parts of their own sizes), barrier, check for an
 * abort - until one fails.  The stream then ends, so nothing waits for a
 * deadline.
 *
 * Input: one byte of requests (2 bits each, four of them), one byte for
 * the world size (1 + b % 8) and this rank, then what the store sends.
 *
 * Beyond not crashing: a failure is recorded with a line, and an abort
 * notice is one printable line.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/boot_wire.h"
#include "core/bootstrap.h"
#include "core/log.h"
#include "fuzz.h"

/* The store's end takes what the client sends without anyone reading it:
 * a few requests, far below a socket's buffer. */
#define STREAM_MAX (96u << 10)

static cb_status_t one(struct cb_boot *b, int what, int world, int i)
{
	uint8_t val[64], mine[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, all[8 * 8];
	size_t bytes;
	int origin;

	switch (what) {
	case 0:
		return cb_boot_get(b, "key", val, sizeof(val), &bytes);
	case 1:
		if (i %
		    2) { /* the second and fourth: parts of their own size */
			uint32_t lens[8];
			void *got = NULL;
			size_t sum = 0;
			cb_status_t st = cb_boot_gather_root_var(
			        b, "every rank's fuzz", mine, 3, sizeof(mine),
			        &got, lens);
			for (int r = 0; !st && got && r < world; r++) {
				FUZZ_CHECK(lens[r] <= sizeof(mine));
				sum += lens[r];
			}
			/* the parts are readable where the answer says */
			for (size_t k = 0; k < sum; k++)
				val[k % sizeof(val)] ^= ((uint8_t *)got)[k];
			free(got);
			return st;
		}
		return cb_boot_allgather(b, "every rank's fuzz", mine,
		                         sizeof(mine), all);
	case 2:
		return cb_boot_barrier(b);
	default:
		return cb_boot_check(b, 0, &origin);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cb_boot_cfg cfg = { .host = "fuzz",
		                   .port = "1",
		                   .listen_fd = -1,
		                   .timeout_s = 5,
		                   .hostname = "fuzzhost" };
	struct cb_boot *b = NULL;
	cb_status_t st;
	int sv[2];

	if (size < 2)
		return 0;
	cfg.world = 1 + data[1] % 8;
	cfg.rank = (data[1] >> 3) % cfg.world;
	FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	size_t n = size - 2 < STREAM_MAX ? size - 2 : STREAM_MAX;
	FUZZ_CHECK(write(sv[1], data + 2, n) == (ssize_t)n || n == 0);
	shutdown(sv[1], SHUT_WR);

	cb_fail_clear();
	st = boot_client_on_fd(&cfg, sv[0], &b);
	for (int i = 0; !st && i < 4; i++)
		st = one(b, (data[0] >> (2 * i)) & 3, cfg.world, i);
	if (st) {
		FUZZ_CHECK(st < 0);
		FUZZ_CHECK(cb_fail_msg() != NULL);
	}
	if (b) {
		const char *line = cb_boot_abort_line(b);
		for (; line && *line; line++)
			FUZZ_CHECK((unsigned char)*line >= 0x20 &&
			           *line != 0x7f);
		cb_boot_close(b);
	}
	close(sv[1]);
	return 0;
}
