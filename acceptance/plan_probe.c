/* SPDX-License-Identifier: MIT */
/*
 * acceptance/plan_probe.c - one round between leaves after the quick
 * tier (switches given, or groups the quick tier found), where the quick
 * tier cannot tell which uplinks are slow or a slow one may be a busy
 * moment: its pairs judge uplinks only, never a host or the noise.
 * Pure code.
 */
#include <stdlib.h>
#include <string.h>

#include "acceptance/plan_impl.h"

/* Leaf @l's fine hosts free this round meet those of leaf @m, all at
 * once as in the quick tier (a slow uplink shows under the load of its
 * leaf); leaf l's nodes are @o[@start[l] .. @start[l + 1]).  The pairs
 * placed. */
static int meet(struct cb_accp *p, int l, int m, const int *start, const int *o,
                const unsigned char *fine, unsigned char *used)
{
	int k = 0;

	for (int i = start[l], j = start[m];
	     i < start[l + 1] && j < start[m + 1];) {
		int x = o[i], y = o[j];
		if (!fine[x] || used[x]) {
			i++;
			continue;
		}
		if (!fine[y] || used[y]) {
			j++;
			continue;
		}
		used[x] = used[y] = 1;
		cb_accp_put(p, x, y, -1);
		k++;
	}
	return k;
}

static int free_in(int l, const int *start, const int *o,
                   const unsigned char *fine, const unsigned char *used)
{
	for (int i = start[l]; i < start[l + 1]; i++)
		if (fine[o[i]] && !used[o[i]])
			return 1;
	return 0;
}

/* Up to @max pairs inside leaves not in @cand, of fine hosts free. */
static int controls(struct cb_accp *p, const unsigned char *cand,
                    const int *start, const int *o, int ng,
                    const unsigned char *fine, unsigned char *used, int max)
{
	int k = 0;

	for (int l = 0; l < ng && k < max; l++) {
		int left = -1;
		for (int i = start[l]; !cand[l] && i < start[l + 1] && k < max;
		     i++) {
			int x = o[i];
			if (!fine[x] || used[x])
				continue;
			if (left < 0) {
				left = x;
				continue;
			}
			used[x] = used[left] = 1;
			cb_accp_put(p, left, x, -1);
			left = -1;
			k++;
		}
	}
	return k;
}

/* (plan_impl.h) Into the round: (1) a leaf whose pairs across are all
 * slow and met only leaves as unproven as itself meets a leaf it has not
 * met, a proven one first (4 leaves, 2 slow uplinks: the quick tier
 * meets 2 of a leaf's 3 others, and 0 and 3 slow to 1 and 2 is 1 and 2
 * slow as well as 0 and 3; both pairs named good leaves in 10 of 30
 * simulated runs); (2) each leaf in @cand (the uplinks the quick tier
 * would name) meets proven leaves not in it, beside controls: pairs
 * inside the other leaves, 2 before, up to 8 in all. */
void cb_accp_leaf_probe(struct cb_accp *p, const struct qpair *q, int nq,
                        const unsigned char *cand, double *w)
{
	const int *g = p->c.group;
	int n = p->n, ng = 0, ne;
	struct cb_accp_ledge *e = NULL;

	if (!g)
		return;
	for (int x = 0; x < n; x++)
		ng = g[x] + 1 > ng ? g[x] + 1 : ng;
	unsigned char *fine = calloc(2 * (size_t)n + 3 * (size_t)ng, 1);
	int *start = calloc((size_t)ng + 2 + (size_t)n, sizeof(int));
	int *o = start + ng + 2;
	if (!fine || !start ||
	    (ne = cb_accp_leaf_edges(p, q, nq, NULL, 0, fine, &e)) < 0)
		goto out;
	unsigned char *used = fine + n, *proven = used + n,
	              *doubt = proven + ng, *seen = doubt + ng;
	cb_accp_proven_leaves(p, e, ne, proven, w);
	for (int i = 0; i < ne; i++)
		seen[e[i].l] = seen[e[i].m] = 1;
	for (int l = 0; l < ng; l++)
		doubt[l] = seen[l] && !proven[l];
	for (int i = 0; i < ne; i++)
		if (proven[e[i].m] || proven[e[i].l])
			doubt[e[i].l] = doubt[e[i].m] = 0;
	/* leaf l's nodes: o[start[l] .. start[l + 1]) */
	for (int x = 0; x < n; x++)
		start[g[x] + 2]++;
	for (int l = 2; l <= ng + 1; l++)
		start[l] += start[l - 1];
	for (int x = 0; x < n; x++)
		o[start[g[x] + 1]++] = x;
	for (int l = 0; l < ng; l++) {
		int best = -1;
		for (int m = 0; doubt[l] && m < ng; m++) {
			if (m == l || cb_accp_leaves_met(e, ne, l, m) ||
			    (best >= 0 && !(proven[m] && !proven[best])))
				continue;
			if (free_in(m, start, o, fine, used))
				best = m;
		}
		if (best >= 0)
			meet(p, l, best, start, o, fine, used);
	}
	/* two controls first (every host may be wanted across: 4 of 8
	 * leaves measured again took them all, and a busy round named
	 * them), the rest from the hosts left */
	int k = cand ? controls(p, cand, start, o, ng, fine, used, 2) : 0;
	int nv = 0;
	for (int l = 0; cand && l < ng; l++)
		for (int m = 0; cand[l] && m < ng; m++)
			if (m != l && proven[m] && !cand[m] &&
			    free_in(l, start, o, fine, used))
				nv += meet(p, l, m, start, o, fine, used);
	if (nv)
		controls(p, cand, start, o, ng, fine, used,
		         CB_ACCP_MAXCTRL - k);
out:
	free(e);
	free(fine);
	free(start);
}
