/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_plan.c - acceptance's planner and judge
 * (acceptance/plan.c) driven with made-up measurements, for what its
 * findings must carry: every node or path named rests on measurements of
 * its own (the confirm stage once named a node whose paths an earlier
 * node had taken: "0 of 0 measurements", 0 GB/s), and a group of hosts
 * slow to the rest with no switches given is named as one; what locate
 * measured of a pair counts towards its confirmation.
 */
#include <stdio.h>
#include <string.h>

#include "acceptance/plan.h"
#include "check.h"

static const int none[][2] = { { -1 } };

/* Is pair (a, b) in @l (pairs of nodes, -1 ended)? */
static int in(const int (*l)[2], int a, int b)
{
	for (int s = 0; l[s][0] >= 0; s++)
		if ((a == l[s][0] && b == l[s][1]) ||
		    (a == l[s][1] && b == l[s][0]))
			return 1;
	return 0;
}

/* The plan over @n nodes, every pair at 1 GB/s but those in @slow at
 * 0.3, and those in @once in the quick tier and repeats only; its
 * verdict's findings checked: each has measurements behind it. */
static const struct cb_accp_result *
drive(struct cb_accp *p, const int (*slow)[2], const int (*once)[2])
{
	int pairs[16][2], stage, m, round = 0;

	while ((m = cb_accp_next(p, pairs, &stage)) > 0 && round++ < 200) {
		double bw[16];
		int ok[16];
		for (int i = 0; i < m; i++) {
			bw[i] = 1 + 0.001 * ((pairs[i][0] * 7 +
			                      pairs[i][1] * 3 + round) %
			                     5);
			if (in(slow, pairs[i][0], pairs[i][1]) ||
			    (stage <= CB_ACCP_REPEAT &&
			     in(once, pairs[i][0], pairs[i][1])))
				bw[i] *= 0.3;
			ok[i] = 1;
		}
		cb_accp_feed(p, bw, ok);
	}
	CHECK(round < 200);
	return cb_accp_verdict(p);
}

static int evidence(const struct cb_accp_result *r)
{
	for (int i = 0; i < r->nfinds; i++) {
		const struct cb_accp_find *f = &r->finds[i];
		if ((f->kind == CB_ACCP_NODE || f->kind == CB_ACCP_PATH) &&
		    (f->tries < 1 || f->bw <= 0)) {
			fprintf(stderr,
			        "  finding %d (kind %d, node %d): %d "
			        "tries, %g GB/s\n",
			        i, f->kind, f->a, f->tries, f->bw);
			return 0;
		}
	}
	return 1;
}

static int count(const struct cb_accp_result *r, enum cb_accp_kind k)
{
	int n = 0;

	for (int i = 0; i < r->nfinds; i++)
		n += r->finds[i].kind == k;
	return n;
}

int main(void)
{
	/* 8 nodes, every pair measured: 0, 2 and 3 slow to each other,
	 * each normal to the other 5 (locate clears all three against
	 * them): the three pairs are confirmed as paths, and a node on two
	 * of them named with its own; no node named with none */
	static const int tri[][2] = { { 0, 2 }, { 0, 3 }, { 2, 3 }, { -1 } };
	struct cb_accp_cfg c4 = { .n = 8, .tolerance = 0.9 };
	struct cb_accp *p = cb_accp_new(&c4);
	CHECK(p != NULL);
	if (p) {
		const struct cb_accp_result *r = drive(p, tri, none);
		CHECK(evidence(r));
		CHECK(count(r, CB_ACCP_NODE) + count(r, CB_ACCP_PATH) >= 1);
		CHECK(count(r, CB_ACCP_NODE) <= 1);
		cb_accp_free(p);
	}

	/* 6 nodes, no switches: 4 and 5 slow to 0-3, normal to each other
	 * and 0-3 among themselves: one group each side, no node, no path */
	static const int up[][2] = { { 0, 4 }, { 1, 4 }, { 2, 4 },
		                     { 3, 4 }, { 0, 5 }, { 1, 5 },
		                     { 2, 5 }, { 3, 5 }, { -1 } };
	struct cb_accp_cfg c6 = { .n = 6, .tolerance = 0.9 };
	p = cb_accp_new(&c6);
	CHECK(p != NULL);
	if (p) {
		const struct cb_accp_result *r = drive(p, up, none);
		CHECK(evidence(r));
		CHECK(r->group_inferred == 1 && r->group != NULL);
		CHECK(count(r, CB_ACCP_UPLINK) == 2 &&
		      count(r, CB_ACCP_NODE) == 0 &&
		      count(r, CB_ACCP_PATH) == 0);
		CHECK(r->group && r->group[4] == r->group[5] &&
		      r->group[0] == r->group[3] && r->group[0] != r->group[4]);
		cb_accp_free(p);
	}

	/* 8 nodes, 1-5 and 1-6 slow in the quick tier only (a busy moment):
	 * node 1 is located, against 5 and 6 first, and those measurements
	 * are the two pairs' first confirmations: inside, so no confirm
	 * round and nothing named (before: 2 confirm rounds) */
	static const int once[][2] = { { 1, 5 }, { 1, 6 }, { -1 } };
	p = cb_accp_new(&c4);
	CHECK(p != NULL);
	if (p) {
		const struct cb_accp_result *r = drive(p, none, once);
		CHECK(r->rounds[CB_ACCP_LOCATE] >= 3);
		CHECK(r->rounds[CB_ACCP_CONFIRM] == 0);
		CHECK(r->nfinds == 0);
		cb_accp_free(p);
	}
	/* 8 nodes, 6 slow to every peer, 1-5 slow in the quick tier only:
	 * 6 explains 1's and 5's pairs with it, so they are judged on the
	 * rest (one pair outside of 6: cleared) and only 6 is located; 1-5
	 * is inside when confirmed.  6 named, nothing else (before: 1 and 5
	 * suspects too, 3 in all) */
	static const int six[][2] = { { 0, 6 }, { 1, 6 }, { 2, 6 }, { 3, 6 },
		                      { 4, 6 }, { 5, 6 }, { 6, 7 }, { -1 } };
	static const int p15[][2] = { { 1, 5 }, { -1 } };
	p = cb_accp_new(&c4);
	CHECK(p != NULL);
	if (p) {
		const struct cb_accp_result *r = drive(p, six, p15);
		CHECK(r->suspect_nodes == 1);
		CHECK(r->rounds[CB_ACCP_LOCATE] == 3);
		CHECK(r->nfinds == 1 && count(r, CB_ACCP_NODE) == 1 &&
		      r->finds[0].a == 6);
		cb_accp_free(p);
	}
	/* 16 nodes under 4 leaf switches of 4 (switches given), leaves 1
	 * and 2 slow to the others: the quick tier meets 2 of a leaf's 3
	 * others, and 0 and 3 slow to 1 and 2 reads as 1 and 2 slow as
	 * well as 0 and 3 (before: all 4 named, or none where the floor
	 * fell among the slow pairs).  A probe round between the leaves
	 * that had not met tells them: uplinks 1 and 2 named, no host,
	 * no path */
	static int leaf[16], slowup[16 * 15 / 2 + 1][2];
	int ns = 0;
	for (int x = 0; x < 16; x++)
		leaf[x] = x / 4;
	for (int a = 0; a < 16; a++)
		for (int b = a + 1; b < 16; b++)
			if (leaf[a] != leaf[b] &&
			    (leaf[a] == 1 || leaf[a] == 2 || leaf[b] == 1 ||
			     leaf[b] == 2)) {
				slowup[ns][0] = a;
				slowup[ns++][1] = b;
			}
	slowup[ns][0] = -1;
	struct cb_accp_cfg c16 = { .n = 16, .tolerance = 0.9, .group = leaf };
	p = cb_accp_new(&c16);
	CHECK(p != NULL);
	if (p) {
		const struct cb_accp_result *r =
		        drive(p, (const int(*)[2])slowup, none);
		int l1 = 0, l2 = 0;
		for (int i = 0; i < r->nfinds; i++) {
			l1 += r->finds[i].kind == CB_ACCP_UPLINK &&
			      r->finds[i].a == 1;
			l2 += r->finds[i].kind == CB_ACCP_UPLINK &&
			      r->finds[i].a == 2;
		}
		CHECK(r->nfinds == 2 && l1 == 1 && l2 == 1);
		CHECK(strstr(r->why[CB_ACCP_REPEAT], "between leaves") != NULL);
		CHECK(r->leaves_unknown == 0);
		cb_accp_free(p);
	}
	/* leaves 1, 2 and 3 slow: every pair across slow, nothing tells
	 * which (or an oversubscribed fabric): no uplink and no host named,
	 * said so (leaves_unknown) */
	ns = 0;
	for (int a = 0; a < 16; a++)
		for (int b = a + 1; b < 16; b++)
			if (leaf[a] != leaf[b] &&
			    (leaf[a] != 0 || leaf[b] != 0)) {
				slowup[ns][0] = a;
				slowup[ns++][1] = b;
			}
	slowup[ns][0] = -1;
	p = cb_accp_new(&c16);
	CHECK(p != NULL);
	if (p) {
		const struct cb_accp_result *r =
		        drive(p, (const int(*)[2])slowup, none);
		CHECK(r->nfinds == 0 && r->leaves_unknown == 4);
		cb_accp_free(p);
	}
	return check_result("plan");
}
