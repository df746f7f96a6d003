/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_topo_parts.c - what rank 0 does with the topology parts
 * the other ranks send (topo/job.c): a summary in full (the host's first
 * local rank, the ranks the binding line shows) or a 40-byte head.  A fake
 * gather hands rank 0 parts made from its own: right ones are taken, each
 * wrong one (a size of another build, another rank's head, a head that
 * says full on a head-sized part, a head alone where the binding line
 * needs the whole, a head whose summary is not its host's) gets its one
 * line, or the inventory's warning.  The live machine's topology (hwloc)
 * is rank 0's; every other rank is made up.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/log.h"
#include "topo/topo.h"

/* struct head of topo/job.c: rank, has_topo, bound, full (int32 each),
 * then the hashes of host key, note and summary (uint64 each) */
#define HEAD_BYTES 40
#define OFF_RANK   0
#define OFF_FULL   12
#define OFF_INV    32

enum fault { OK, SIZE, RANK, FULL_FLAG, HEAD_SHOWN, INV_HASH };

struct fake {
	int world;
	int who; /* the rank whose part is wrong */
	enum fault f;
};

static cb_status_t allgather(void *ctx, const char *what, const void *mine,
                             size_t bytes, void *all)
{
	const struct fake *k = ctx;

	(void)what;
	for (int r = 0; r < k->world; r++)
		memcpy((char *)all + (size_t)r * bytes, mine, bytes);
	return CB_OK;
}

static void put32(char *p, size_t off, int32_t v)
{
	memcpy(p + off, &v, sizeof(v));
}

/* Rank r's part: rank 0's own, with its rank; a head alone from rank 16 on
 * (as a rank that is not its host's first sends). */
static cb_status_t gather_root(void *ctx, const char *what, const void *mine,
                               size_t bytes, size_t max, void **all,
                               uint32_t *lens)
{
	const struct fake *k = ctx;
	char *out = calloc((size_t)k->world, max + 64), *p = out;

	(void)what;
	if (!out || bytes != max)
		return cb_fail(CB_ERR_NOMEM, "the fake gather needs rank 0's "
		                             "full part");
	for (int r = 0; r < k->world; r++) {
		size_t n = r < 16 ? max : HEAD_BYTES;
		if (r == k->who && k->f == HEAD_SHOWN)
			n = HEAD_BYTES;
		memcpy(p, mine, n);
		put32(p, OFF_RANK, r);
		put32(p, OFF_FULL, n == max);
		if (r == k->who) {
			if (k->f == SIZE)
				n = max - 8;
			else if (k->f == RANK)
				put32(p, OFF_RANK, r + 1);
			else if (k->f == FULL_FLAG)
				put32(p, OFF_FULL, 1); /* on a head */
			else if (k->f == INV_HASH)
				p[OFF_INV] ^= 1;
		}
		lens[r] = (uint32_t)n;
		p += n;
	}
	*all = out;
	return CB_OK;
}

/* Rank 0 of @world given parts with fault @f at rank @who: its status,
 * the failure's line into @msg, the inventory's lines into @inv. */
static cb_status_t run(int world, int who, enum fault f, char *msg, char *inv)
{
	struct fake k = { .world = world, .who = who, .f = f };
	struct cb_topo_job_cfg cfg = { .rank = 0,
		                       .world = world,
		                       .local_rank = -1,
		                       .local_size = 1,
		                       .host_name = "node0",
		                       .host_key = "node0-key",
		                       .bind = "none",
		                       .ctx = &k,
		                       .allgather = allgather,
		                       .gather_root = gather_root };
	struct cb_topo_job *j = NULL;
	cb_status_t st;

	cb_fail_clear();
	st = cb_topo_job_setup(&cfg, &j);
	snprintf(msg, 512, "%s", cb_fail_msg() ? cb_fail_msg() : "");
	snprintf(inv, 2048, "%s",
	         j && cb_topo_job_inventory(j) ? cb_topo_job_inventory(j) : "");
	cb_topo_job_free(j);
	return st;
}

static int has(const char *s, const char *want)
{
	if (strstr(s, want))
		return 1;
	fprintf(stderr, "  '%s'\n    lacks '%s'\n", s, want);
	return 0;
}

int main(void)
{
	char msg[512], inv[2048];

	/* 20 ranks of one host, 16 whole and 4 heads: taken, no warning */
	CHECK(run(20, -1, OK, msg, inv) == CB_OK);
	CHECK(!strstr(inv, "WARNING") && !strstr(inv, "differ"));
	CHECK(run(3, -1, OK, msg, inv) == CB_OK);

	/* each wrong part: one line naming the rank and what is wrong */
	CHECK(run(3, 2, SIZE, msg, inv) == CB_ERR_PROTO &&
	      has(msg, "rank 2's topology part (") &&
	      has(msg, ") has a size unlike this build's"));
	CHECK(run(3, 1, RANK, msg, inv) == CB_ERR_PROTO &&
	      has(msg, "rank 1's topology part (") &&
	      has(msg, ") names another rank"));
	CHECK(run(20, 18, FULL_FLAG, msg, inv) == CB_ERR_PROTO &&
	      has(msg, "rank 18's topology part (40 bytes;") &&
	      has(msg, ") has a head and size that disagree"));
	CHECK(run(20, 5, HEAD_SHOWN, msg, inv) == CB_ERR_PROTO &&
	      has(msg, "rank 5's topology part (40 bytes;") &&
	      has(msg, ") is a head where the binding shown needs it whole"));
	CHECK(!strchr(msg, '\n'));

	/* a head whose summary is not its host's: the run goes on, and the
	 * inventory names the rank */
	CHECK(run(20, 17, INV_HASH, msg, inv) == CB_OK &&
	      has(inv, "WARNING: 1 rank (17) loaded a topology unlike their "
	               "host's first rank's"));
	return check_result("topo-parts");
}
