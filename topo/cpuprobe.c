/* SPDX-License-Identifier: MIT */
/*
 * topo/cpuprobe.c - the copy loop of topo/cpuprobe.h.  32 KiB each way fits
 * any core's L1 or L2, so the figure is the core's work and its share of
 * time, not the memory's bandwidth (which the host's other ranks share).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topo/cpuprobe.h"

#define PROBE_BYTES (32u * 1024u)

static double clock_s(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts))
		return -1;
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int cb_cpu_probe(double seconds, struct cb_cpu_rate *out)
{
	unsigned char *a = malloc(2 * PROBE_BYTES), *b;
	double t0, c0, t, c;
	unsigned long long bytes = 0;

	memset(out, 0, sizeof(*out));
	if (!a)
		return -1;
	b = a + PROBE_BYTES;
	memset(a, 0x5a, 2 * PROBE_BYTES);
	if (seconds < 0.01)
		seconds = 0.01;
	t0 = clock_s(CLOCK_MONOTONIC);
	c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
	if (t0 < 0 || c0 < 0) {
		free(a);
		return -1;
	}
	do {
		/* 64 copies (~2 MiB, well under a millisecond) between
		 * clock reads; the barrier keeps the copies from being
		 * dropped as unused. */
		for (int i = 0; i < 64; i++) {
			memcpy(i & 1 ? a : b, i & 1 ? b : a, PROBE_BYTES);
			__asm__ __volatile__("" : : "r"(a), "r"(b) : "memory");
		}
		bytes += 64ull * PROBE_BYTES;
		t = clock_s(CLOCK_MONOTONIC);
	} while (t - t0 < seconds);
	c = clock_s(CLOCK_THREAD_CPUTIME_ID);
	free(a);
	out->seconds = t - t0;
	out->gbps = (double)bytes / out->seconds / 1e9;
	out->share = c >= c0 ? (c - c0) / out->seconds : 0;
	if (out->share > 1)
		out->share = 1;
	return 0;
}
