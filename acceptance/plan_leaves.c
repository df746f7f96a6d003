/* SPDX-License-Identifier: MIT */
/*
 * acceptance/plan_leaves.c - the judge where the leaf switches are known
 * (cb_accp_cfg.group: --switches FILE, the simulator's fat tree) or
 * found (no switches given: groups of hosts normal inside, slow between):
 * which leaves' uplinks are slow, and which hosts may be measured
 * together to judge one of them.  Pure code.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acceptance/plan_impl.h"

static int by_edge(const void *x, const void *y)
{
	const struct cb_accp_ledge *a = x, *b = y;

	if (a->l != b->l)
		return (a->l > b->l) - (a->l < b->l);
	return (a->m > b->m) - (a->m < b->m);
}

/* (plan_impl.h) */
int cb_accp_leaf_edges(const struct cb_accp *p, const struct qpair *q, int nq,
                       const struct qpair *qp, int nqp, unsigned char *fine,
                       struct cb_accp_ledge **out)
{
	const int *g = p->c.group;
	struct cb_accp_ledge *e =
	        malloc(((size_t)nq + (size_t)nqp + 1) * sizeof(*e));
	int ne = 0;

	if (!e)
		return -1;
	memset(fine, 0, (size_t)p->n);
	for (int i = 0; i < nq; i++)
		if (g[q[i].a] == g[q[i].b] && !cb_accp_q_out(p, &q[i]))
			fine[q[i].a] = fine[q[i].b] = 1;
	for (int i = 0; i < nq + nqp; i++) {
		const struct qpair *e1 = i < nq ? &q[i] : &qp[i - nq];
		int la = g[e1->a], lb = g[e1->b];
		if (la == lb || !fine[e1->a] || !fine[e1->b])
			continue;
		e[ne++] = (struct cb_accp_ledge){
			la < lb ? la : lb, la < lb ? lb : la,
			e1->nv && !e1->fails ? cb_accp_qvalue(e1) : 0
		};
	}
	qsort(e, (size_t)ne, sizeof(*e), by_edge);
	*out = e;
	return ne;
}

int cb_accp_leaves_met(const struct cb_accp_ledge *e, int ne, int l, int m)
{
	struct cb_accp_ledge k = { l < m ? l : m, l < m ? m : l, 0 };

	return bsearch(&k, e, (size_t)ne, sizeof(*e), by_edge) != NULL;
}

/* (plan_impl.h) */
int cb_accp_proven_leaves(const struct cb_accp *p,
                          const struct cb_accp_ledge *e, int ne,
                          unsigned char *proven, double *w)
{
	int np = 0;

	for (int i = 0, j; i < ne; i = j) {
		int k = 0;
		for (j = i; j < ne && e[j].l == e[i].l && e[j].m == e[i].m; j++)
			w[k++] = e[j].v;
		if (cb_accp_median(w, k) < p->res.floor)
			continue;
		np += !proven[e[i].l] + !proven[e[i].m];
		proven[e[i].l] = proven[e[i].m] = 1;
	}
	return np;
}

/* The probe round's controls (pairs inside a leaf) over the reference,
 * at most 1; 1 without any. */
static double probe_scale(const struct cb_accp *p, const struct qpair *qp,
                          int nqp, double *w)
{
	const int *g = p->c.group;
	int k = 0;

	for (int i = 0; i < nqp; i++)
		if (g[qp[i].a] == g[qp[i].b] && qp[i].nv && !qp[i].fails)
			w[k++] = cb_accp_qvalue(&qp[i]);
	if (!k || p->res.ref <= 0)
		return 1;
	return fmin(1, cb_accp_median(w, k) / p->res.ref);
}

/* Leaf @l's sample: its pairs across between fine hosts to leaves not
 * named (@bad) and, where any are, proven (@proven, @np) into @w; the
 * count, @ko those below @fl, @part the one leaf they were all with (-1
 * none yet, -2 several). */
static int leaf_sample(const struct cb_accp *p, const struct qpair *q, int nq,
                       int l, const unsigned char *fine,
                       const unsigned char *bad, const unsigned char *proven,
                       int np, double fl, double *w, int *ko, int *part)
{
	const int *g = p->c.group;
	int kc = 0;

	*ko = 0;
	*part = -1;
	for (int i = 0; i < nq; i++) {
		int ia = g[q[i].a] == l, ib = g[q[i].b] == l;
		int other = g[ia ? q[i].b : q[i].a];
		if (ia == ib || !fine[q[i].a] || !fine[q[i].b] || bad[other] ||
		    (np && !proven[other]))
			continue;
		w[kc] = q[i].nv ? cb_accp_qvalue(&q[i]) : 0;
		*ko += w[kc++] < fl;
		*part = *part == -1 || *part == other ? other : -2;
	}
	return kc;
}

/* With switches known: a leaf slow to the others, normal inside.  Its
 * hosts with a partner at full rate inside the leaf (they and the leaf
 * switch are fine) are slow to such hosts of the other leaves: the
 * uplink (a leaf whose hosts are mostly bad has no such host slow
 * across; a slow host of another leaf has no such partner).  Judged on
 * its pairs to leaves proven at full rate across, where any are (a
 * healthy leaf whose partners in the quick tier were behind slow uplinks
 * was named: 3 slow uplinks in 16 leaves, a false alarm in 173 of 200
 * simulated runs); where none is and more than two leaves met, nothing
 * tells which uplinks are slow (all, or a fabric oversubscribed): none
 * is named.  A leaf the probe round measured again against proven ones
 * (@qp, cb_accp_leaf_probe) is judged on that alone, its floor scaled by
 * the round's controls: quick rounds across leaves run while the machine
 * was busy made good leaves look slow (64 hosts in leaves of 8 under
 * busy phases: 4 good uplinks named in 100 simulated runs).  The leaf
 * slow to the largest share of its partners first, then the others
 * again without their pairs to a leaf already named. */
void cb_accp_uplinks(struct cb_accp *p, const struct qpair *q, int nq,
                     const struct qpair *qp, int nqp, double *w)
{
	const int *g = p->c.group;
	int ng = 0;
	unsigned char *bad, *fine, *proven;

	if (!g)
		return;
	for (int x = 0; x < p->n; x++)
		ng = g[x] + 1 > ng ? g[x] + 1 : ng;
	bad = calloc(2 * (size_t)ng + (size_t)p->n, 1);
	int *part = calloc(3 * (size_t)ng, sizeof(int)), *size = part + ng,
	    *ver = size + ng;
	double *cm = calloc((size_t)ng, sizeof(double));
	struct cb_accp_ledge *e = NULL;
	int ne = -1, np = 0, nl = 0;
	if (bad && part && cm) {
		fine = bad + ng;
		proven = fine + p->n;
		ne = cb_accp_leaf_edges(p, q, nq, qp, nqp, fine, &e);
	}
	if (ne < 0) {
		free(bad);
		free(part);
		free(cm);
		return;
	}
	for (int x = 0; x < p->n; x++)
		size[g[x]]++;
	if (!p->igroup) {
		np = cb_accp_proven_leaves(p, e, ne, proven, w);
		/* a leaf measured again is judged on that: its pairs at
		 * full rate may have been with few of its hosts across */
		for (int l = 0; p->cand && l < ng; l++)
			if (p->cand[l] && proven[l])
				proven[l] = 0, np--;
		for (int i = 0; i < ne; i++)
			cm[e[i].l] = cm[e[i].m] = 1;
		for (int l = 0; l < ng; l++)
			nl += cm[l] > 0;
		if (!np && nl > 2)
			p->res.leaves_unknown = nl;
	}
	free(e);
	double vfl = p->res.floor * (nqp ? probe_scale(p, qp, nqp, w) : 1);
	for (int l = 0; np && p->cand && l < ng; l++) {
		int ko, pt;
		ver[l] = p->cand[l] &&
		         leaf_sample(p, qp, nqp, l, fine, bad, proven, np, vfl,
		                     w, &ko, &pt) >= 3;
	}
	for (; !p->res.leaves_unknown;) {
		int worst = -1, wk = 0;
		double wm = 0, wf = 0;
		for (int l = 0; l < ng; l++) {
			int ko;
			double fl = ver[l] ? vfl : p->res.floor;
			cm[l] = 0;
			part[l] = -1;
			if (bad[l])
				continue;
			int kc = leaf_sample(p, ver[l] ? qp : q,
			                     ver[l] ? nqp : nq, l, fine, bad,
			                     proven, np, fl, w, &ko, &part[l]);
			if (kc < 3)
				continue;
			double mc = cb_accp_median(w, kc), f = (double)ko / kc;
			if (mc >= fl)
				continue;
			cm[l] = mc;
			/* the one slow to the most of its partners: a leaf
			 * paired with a slow uplink's is slow to that leaf
			 * alone; of those slow to all, the smaller group
			 * (found groups: two leaves at full rate to each
			 * other are one), then by the median */
			int sl = size[l], sw = worst < 0 ? 0 : size[worst];
			if (worst < 0 || f > wf ||
			    (f == wf && (sl < sw || (sl == sw && mc < wm))))
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
	/* measured again at full rate: its pairs across in the quick tier
	 * were a busy moment, no host's (2) */
	for (int l = 0; p->cand && l < ng; l++)
		if (p->cand[l] && !bad[l])
			p->cand[l] = 2;
	free(bad);
	free(part);
	free(cm);
}

/* (plan_impl.h) */
int cb_accp_uplink_pair(const struct cb_accp *p, int x, int y)
{
	const int *g = p->c.group;

	return g && g[x] != g[y] &&
	       (p->named[x] == 2 || p->named[y] == 2 || p->res.leaves_unknown ||
	        (p->cand && (p->cand[g[x]] == 2 || p->cand[g[y]] == 2)));
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
