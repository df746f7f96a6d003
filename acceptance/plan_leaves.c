/* SPDX-License-Identifier: MIT */
/*
 * acceptance/plan_leaves.c - the judge where the leaf switches are known
 * (cb_accp_cfg.group: --switches FILE, the simulator's fat tree) or
 * found (no switches given: groups of hosts normal inside, slow between):
 * which leaves' uplinks are slow, and which hosts may be measured
 * together to judge one of them.  Pure code.
 */
#include <stdlib.h>
#include <string.h>

#include "acceptance/plan_impl.h"

/* With switches known: a leaf slow to the others, normal inside.  Its
 * hosts with a partner at full rate inside the leaf (they and the leaf
 * switch are fine) are slow to such hosts of the other leaves: the
 * uplink (a leaf whose hosts are mostly bad has no such host slow
 * across; a slow host of another leaf has no such partner).  The leaf
 * slow to the largest share of its partners first, then the others again
 * without their pairs to a leaf already named: a healthy leaf whose
 * partners in the quick tier were half behind slow uplinks was named too
 * (3 slow uplinks in 16 leaves: a false alarm in 173 of 200 simulated
 * runs). */
void cb_accp_uplinks(struct cb_accp *p, const struct qpair *q, int nq,
                     double *w)
{
	const int *g = p->c.group;
	int ng = 0;
	unsigned char *bad, *fine;

	if (!g)
		return;
	for (int x = 0; x < p->n; x++)
		ng = g[x] + 1 > ng ? g[x] + 1 : ng;
	bad = calloc((size_t)ng + (size_t)p->n, 1);
	int *part = calloc((size_t)ng, sizeof(int));
	double *cm = calloc((size_t)ng, sizeof(double));
	if (!bad || !part || !cm) {
		free(bad);
		free(part);
		free(cm);
		return;
	}
	fine = bad + ng;
	for (int i = 0; i < nq; i++)
		if (g[q[i].a] == g[q[i].b] && !cb_accp_q_out(p, &q[i]))
			fine[q[i].a] = fine[q[i].b] = 1;
	for (;;) {
		int worst = -1, wk = 0;
		double wm = 0, wf = 0;
		for (int l = 0; l < ng; l++) {
			int kc = 0, ko = 0;
			cm[l] = 0;
			part[l] = -1;
			if (bad[l])
				continue;
			for (int i = 0; i < nq; i++) {
				int ia = g[q[i].a] == l, ib = g[q[i].b] == l;
				int other = g[ia ? q[i].b : q[i].a];
				if (ia == ib || !fine[q[i].a] ||
				    !fine[q[i].b] || bad[other])
					continue;
				w[kc] = q[i].nv ? cb_accp_qvalue(&q[i]) : 0;
				ko += w[kc++] < p->res.floor;
				part[l] = part[l] == -1 || part[l] == other
				                  ? other
				                  : -2;
			}
			if (kc < 3)
				continue;
			double mc = cb_accp_median(w, kc), f = (double)ko / kc;
			if (mc >= p->res.floor)
				continue;
			cm[l] = mc;
			/* the one slow to the most of its partners: a leaf
			 * paired with a slow uplink's is slow to that leaf
			 * alone (by the median, noise picked either) */
			if (worst < 0 || f > wf || (f == wf && mc < wm))
				worst = l, wm = mc, wk = kc, wf = f;
		}
		if (worst < 0)
			break;
		/* two leaves that met only each other, both slow across:
		 * either uplink; both are named (nothing tells them apart) */
		int twin = part[worst] >= 0 && part[part[worst]] == worst &&
		                           cm[part[worst]] > 0
		                   ? part[worst]
		                   : -1;
		for (int t = 0; t < 2; t++) {
			int l = t ? twin : worst;
			if (l < 0)
				continue;
			bad[l] = 1;
			cb_accp_find(p, CB_ACCP_UPLINK, l, -1, t ? cm[l] : wm,
			             wk, wk);
			for (int x = 0; x < p->n; x++)
				if (g[x] == l)
					p->named[x] = 2; /* its uplink's */
		}
	}
	free(bad);
	free(part);
	free(cm);
}

/* Whether @x and @y may be measured together to judge one of them: not
 * across an uplink named slow. */
int cb_accp_same_side(const struct cb_accp *p, int x, int y)
{
	const int *g = p->c.group;

	return !g || (p->named[x] != 2 && p->named[y] != 2) || g[x] == g[y];
}

static int root(int *u, int x)
{
	while (u[x] != x)
		x = u[x] = u[u[x]];
	return x;
}

/* (plan_impl.h) The components of the pairs inside the noise, where
 * every pair between two of them is outside, each has 2 nodes or more
 * and 3 pairs to the others: a group slow to the rest that is normal
 * inside is no host's fault alone (a slow host's pair with another slow
 * host is outside too, so two slow hosts are not such a group). */
void cb_accp_infer_groups(struct cb_accp *p, const struct qpair *q, int nq)
{
	int n = p->n, ng = 0, ok = 1;
	int *u = malloc(3 * (size_t)n * sizeof(int)), *size = u + n,
	    *cross = u + 2 * n;

	if (p->c.group || !u) {
		free(u);
		return;
	}
	for (int x = 0; x < n; x++)
		u[x] = x, size[x] = cross[x] = 0;
	for (int i = 0; i < nq; i++)
		if (!cb_accp_q_out(p, &q[i]))
			u[root(u, q[i].a)] = root(u, q[i].b);
	for (int x = 0; x < n; x++)
		size[root(u, x)] += !p->dropped[x];
	for (int i = 0; ok && i < nq; i++) {
		int ra = root(u, q[i].a), rb = root(u, q[i].b);
		if (ra == rb)
			continue;
		/* (outside: the pairs inside joined their ends) */
		ok = !q[i].fails;
		cross[ra]++;
		cross[rb]++;
	}
	for (int x = 0; ok && x < n; x++) {
		if (root(u, x) != x || !size[x])
			continue; /* (a node dropped: its pairs failed) */
		ok = size[x] >= 2 && cross[x] >= 3;
		ng++;
	}
	if (!ok || ng < 2) {
		free(u);
		return;
	}
	/* the groups numbered 0.. in node order, into u[0..n) */
	int *id = size; /* (reused: root -> group) */
	for (int x = 0; x < n; x++)
		id[x] = -1;
	ng = 0;
	for (int x = 0; x < n; x++) {
		int r = root(u, x);
		if (id[r] < 0)
			id[r] = ng++;
		cross[x] = id[r];
	}
	memmove(u, cross, (size_t)n * sizeof(int));
	p->igroup = u;
	p->c.group = u;
	p->res.group_inferred = 1;
}
