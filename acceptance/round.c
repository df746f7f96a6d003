/* SPDX-License-Identifier: MIT */
/*
 * acceptance/round.c - one round of acceptance's pairs across the job:
 * every node runs its pairs of the list (pair.c), one at a time in turn
 * where asked (a store key passes the turn), then every rank's entries and
 * counters go to rank 0, which waits for late ranks only so long, merges
 * the two sides of each pair and gives each pair what its ends' hosts
 * retransmitted where it was their only pair.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acceptance/accept.h"
#include "core/log.h"

/* Both sides' entries of one pair, merged on rank 0: the lower node's
 * figures, ok only when both sides say so, the first error line. */
static void merge(const struct cb_acc *a, const struct cb_acc_meas *lo,
                  const struct cb_acc_meas *hi, int lo_in, int hi_in,
                  double wait_s, struct cb_acc_pair *out)
{
	const struct cb_acc_node *na = &a->nodes[out->a],
	                         *nb = &a->nodes[out->b];

	out->ok = lo && hi && lo->ok && hi->ok;
	if (lo) {
		out->connect_ms = lo->connect_ms;
		out->lat_p50_us = lo->lat_p50_us;
		out->lat_p99_us = lo->lat_p99_us;
		out->bw_ab_gbps = lo->bw_ab_gbps;
		out->bw_ba_gbps = lo->bw_ba_gbps;
		out->bibw_gbps = lo->bibw_gbps;
	}
	if (out->ok)
		return;
	const struct cb_acc_meas *e = lo && !lo->ok && lo->error[0]   ? lo
	                              : hi && !hi->ok && hi->error[0] ? hi
	                                                              : NULL;
	if (e)
		snprintf(out->error, sizeof(out->error), "%s", e->error);
	else
		snprintf(out->error, sizeof(out->error),
		         "%s did not report (it stopped, or cannot reach rank "
		         "0)",
		         !lo_in ? na->name : nb->name);
	(void)hi_in;
	(void)wait_s;
}

/* 1 when every host of the job is one node, in at most one of @pairs:
 * then what a host's counters moved is its pair's. */
static int one_pair_each(const struct cb_acc *a, int (*pairs)[2], int n)
{
	unsigned char *seen;
	int ok = a->nnodes == a->nhosts;

	if (!ok || !(seen = calloc((size_t)a->nnodes + 1, 1)))
		return 0;
	for (int i = 0; ok && i < n; i++)
		for (int s = 0; s < 2; s++)
			ok &= !seen[pairs[i][s]]++;
	free(seen);
	return ok;
}

/* With @alone, pair @i waits for its turn: key "acc/turn/SEQ/i", set by
 * rank 0 for the first pair and by the lower node of pair i - 1 when it is
 * done, so no two pairs ever run at once. */
static void turn_wait(struct cb_acc_ctx *x, uint32_t seq, int i)
{
	char key[64];

	snprintf(key, sizeof(key), "acc/turn/%u/%d", seq, i);
	/* A turn that never comes (the pair before died): go anyway. */
	if (cb_boot_wait_flag(x->c->boot, key, 3 * x->o->set.pair_timeout_s) ==
	    CB_ERR_TIMEOUT)
		cb_log(CB_LOG_INFO, "acceptance: turn %d never came", i);
}

static void turn_pass(struct cb_acc_ctx *x, uint32_t seq, int i)
{
	char key[64];

	snprintf(key, sizeof(key), "acc/turn/%u/%d", seq, i);
	if (cb_boot_set(x->c->boot, key, "t", 1))
		cb_fail_clear();
}

cb_status_t cb_acc_stage_pairs(struct cb_acc_ctx *x, int (*pairs)[2], int n,
                               int run, int alone, double wait_s,
                               struct cb_acc_pair *out)
{
	uint32_t seq = x->seq++;
	const struct cb_acc *a = x->a;
	int per = a->nnodes > 1 ? a->nnodes - 1 : 1, k = 0, world = x->c->world;
	/* a block: the rank's counters (cb_acc_ctr_gathered), its entries */
	size_t head = (sizeof(struct cb_hostctr) + 15) / 16 * 16;
	size_t block = head + (size_t)per * sizeof(struct cb_acc_meas);
	char *mblock = calloc(1, block), *all = NULL;
	struct cb_acc_meas *mine =
	        (struct cb_acc_meas *)(void *)(mblock + head);
	struct cb_hostctr *moved = NULL;
	unsigned char *present = NULL;
	cb_status_t st = CB_OK;

	if (!mblock)
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	for (int i = 0; i < per; i++)
		mine[i].a = mine[i].b = -1;
	if (alone && x->c->rank == 0)
		turn_pass(x, seq, 0);
	x->alone = alone;
	for (int i = 0; x->me >= 0 && i < n && !st; i++) {
		int peer = pairs[i][0] == x->me   ? pairs[i][1]
		           : pairs[i][1] == x->me ? pairs[i][0]
		                                  : -1;
		if (peer < 0 || k == per)
			continue;
		struct cb_acc_meas *m = &mine[k++];
		m->a = pairs[i][0];
		m->b = pairs[i][1];
		if (alone)
			turn_wait(x, seq, i);
		st = run ? cb_acc_pair_measure(x, peer, m)
		         : cb_acc_pair_connect(x, peer, m);
		x->pairs_run += !x->again; /* its pairs, not the tries */
		x->pairs_ok += m->ok;
		if (alone && x->me == pairs[i][0])
			turn_pass(x, seq, i + 1);
	}
	x->alone = 0;
	if (st)
		goto out;
	if (x->c->rank == 0 &&
	    (!(all = calloc((size_t)world, block)) ||
	     !(present = calloc((size_t)world, 1)) ||
	     !(moved = calloc((size_t)a->nhosts + 1, sizeof(*moved))))) {
		st = cb_fail(CB_ERR_NOMEM, "out of memory");
		goto out;
	}
	cb_acc_ctr_read(x, (struct cb_hostctr *)(void *)mblock);
	/* A rank whose last pair failed reports a pair deadline after the
	 * others; once nobody has reported for longer than that, those
	 * missing are cut off. */
	st = cb_boot_gather_root_idle(
	        x->c->boot, "every rank's pairs", mblock, block, all, wait_s,
	        x->idle_s > 0 ? x->idle_s : 1.5 * x->o->set.pair_timeout_s + 1,
	        x->gone, present);
	if (!st && x->c->rank != 0 && k >= 2 && !x->defer_cutoff) {
		/* Every one of this node's pairs failed: it is this host that
		 * is cut off; rank 0 names it from the others' side. */
		int failed = 0;
		for (int i = 0; i < k; i++)
			failed += !mine[i].ok;
		if (failed == k)
			st = cb_fail(CB_ERR_PEER,
			             "acceptance: none of this node's %d pairs "
			             "worked: this host looks cut off from the "
			             "others (rank 0 names it)",
			             k);
	}
	if (st || x->c->rank != 0)
		goto out;
	for (int r = 0; x->gone && r < world; r++)
		x->gone[r] |= !present[r];
	cb_acc_ctr_gathered(x, all, block, present, moved);
	int own = one_pair_each(a, pairs, n);
	for (int i = 0; i < n; i++) {
		const struct cb_acc_meas *side[2] = { NULL, NULL };
		int in[2];
		out[i] = (struct cb_acc_pair){ .a = pairs[i][0],
			                       .b = pairs[i][1] };
		for (int s = 0; s < 2; s++) {
			int r = a->nodes[pairs[i][s]].rank;
			const struct cb_acc_meas *e =
			        (const struct cb_acc_meas
			                 *)(const void *)(all +
			                                  (size_t)r * block +
			                                  head);
			in[s] = present[r];
			for (int j = 0; in[s] && j < per; j++)
				if (e[j].a == pairs[i][0] &&
				    e[j].b == pairs[i][1])
					side[s] = &e[j];
		}
		merge(a, side[0], side[1], in[0], in[1], wait_s, &out[i]);
		/* Each end's only pair this time: what its host retransmitted
		 * is this pair's. */
		const struct cb_hostctr
		        *ma = &moved[a->nodes[pairs[i][0]].host],
		        *mb = &moved[a->nodes[pairs[i][1]].host];
		uint32_t both = 1u << CB_HC_RETRANS | 1u << CB_HC_OUTSEGS;
		if (own && (ma->have & both) == both &&
		    (mb->have & both) == both) {
			out[i].retrans =
			        ma->v[CB_HC_RETRANS] + mb->v[CB_HC_RETRANS];
			out[i].out_segs =
			        ma->v[CB_HC_OUTSEGS] + mb->v[CB_HC_OUTSEGS];
			out[i].ctr_meas = 1;
			out[i].ctr_lossy =
			        out[i].retrans >=
			        CB_ACC_LOSS_RATE * (double)out[i].out_segs;
		}
	}
out:
	free(mblock);
	free(all);
	free(present);
	free(moved);
	return st;
}
