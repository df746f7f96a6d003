/* SPDX-License-Identifier: MIT */
/*
 * acceptance/plan_noise.c - the quick tier's pairs and the noise the
 * judge measures from them (acceptance/plan.c's header and
 * docs/acceptance-judging.md, section 1): a pair's value, the reference,
 * the best-of floor and the single measurements' floor.  Pure code.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acceptance/plan_impl.h"

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double cb_accp_median(double *v, int n)
{
	if (n <= 0)
		return 0;
	qsort(v, (size_t)n, sizeof(*v), cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int by_pair(const void *x, const void *y)
{
	const struct cb_accp_meas *a = x, *b = y;

	if (a->a != b->a)
		return (a->a > b->a) - (a->a < b->a);
	return (a->b > b->b) - (a->b < b->b);
}

/* The quick tier's pairs, each with its (up to 2) values. */
struct qpair *cb_accp_quick_pairs(struct cb_accp *p, int *nq)
{
	struct cb_accp_meas *s = malloc(((size_t)p->nm + 1) * sizeof(*s));
	struct qpair *q = calloc((size_t)p->nm + 1, sizeof(*q));
	int k = 0, n = 0;

	if (!s || !q) {
		free(s);
		free(q);
		return NULL;
	}
	for (int i = 0; i < p->nm; i++)
		if (p->m[i].stage <= CB_ACCP_REPEAT && !p->m[i].redone)
			s[k++] = p->m[i];
	qsort(s, (size_t)k, sizeof(*s), by_pair);
	for (int i = 0; i < k; i++) {
		if (!n || q[n - 1].a != s[i].a || q[n - 1].b != s[i].b) {
			q[n].a = s[i].a;
			q[n++].b = s[i].b;
		}
		struct qpair *e = &q[n - 1];
		if (!s[i].ok)
			e->fails++;
		else if (e->nv < 3)
			e->v[e->nv++] = s[i].bw;
	}
	free(s);
	*nq = n;
	return q;
}

/* A pair's value: the best of its measurements.  What slows a healthy
 * pair (cores taken by others, a busy moment, a connection still
 * opening) only ever lowers it; a slow cable is slow every time. */
double cb_accp_qvalue(const struct qpair *e)
{
	double v = 0;

	for (int i = 0; i < e->nv; i++)
		v = fmax(v, e->v[i]);
	return v;
}

/* The quick tier's single measurements (neither end in @skip): their
 * median (ref1) and their spread below it (sigma1), without the rounds
 * that ran busy (their median below CB_ACCP_BUSY of the rounds'
 * median): a phase that slows every pair of a few rounds (another job on
 * the machine) is what the locate rounds' controls take out
 * (cb_accp_round_scale); what the floor must hold is how far one
 * measurement falls in a round that is not busy. */
static void single_spread(struct cb_accp *p, const unsigned char *skip,
                          struct cb_accp_result *r)
{
	size_t cap = (size_t)p->nm + 1;
	double *x = malloc(cap * 3 * sizeof(double)), *med = x + cap,
	       *tmp = x + 2 * cap;
	int *at = malloc((cap + 1) * sizeof(int));
	int nx = 0, nr = 0, k = 0;

	r->ref1 = r->ref;
	r->sigma1 = r->sigma;
	if (!x || !at)
		goto out;
	/* (p->m is in round order) each round's singles, x[at[r]..] */
	for (int lo = 0; lo < p->nm;) {
		int hi = lo;
		while (hi < p->nm && p->m[hi].round == p->m[lo].round)
			hi++;
		at[nr] = nx;
		for (int i = lo; i < hi; i++) {
			const struct cb_accp_meas *e = &p->m[i];
			if (e->stage <= CB_ACCP_REPEAT && !e->redone && e->ok &&
			    e->bw > 0 && !skip[e->a] && !skip[e->b])
				x[nx++] = log(e->bw);
		}
		int m = nx - at[nr];
		if (m) {
			memcpy(tmp, x + at[nr], (size_t)m * sizeof(double));
			med[nr++] = m >= 2 ? cb_accp_median(tmp, m) : INFINITY;
		}
		lo = hi;
	}
	at[nr] = nx;
	int nm = 0;
	for (int i = 0; i < nr; i++)
		if (isfinite(med[i]))
			tmp[nm++] = med[i];
	double cut = nm >= 3 ? cb_accp_median(tmp, nm) + log(CB_ACCP_BUSY)
	                     : -INFINITY;
	for (int i = 0; i < nr; i++)
		if (med[i] >= cut)
			for (int j = at[i]; j < at[i + 1]; j++)
				x[k++] = x[j];
	if (!k)
		goto out;
	double mid = cb_accp_median(x, k); /* sorts */
	int nd = 0;
	for (int i = 0; i < k && x[i] <= mid; i++)
		tmp[nd++] = mid - x[i];
	/* a single is never above a best-of, nor less spread: where few
	 * measurements are left (small clusters, nodes set aside) their
	 * median and spread are held to that */
	r->ref1 = fmin(exp(mid), r->ref);
	r->sigma1 = fmax(1.4826 * cb_accp_median(tmp, nd), r->sigma);
out:
	free(x);
	free(at);
}

/* The spread of repeats and across the cluster, over the pairs neither
 * end of which is in @skip; sets sigma and the floor. */
static void spread(struct cb_accp *p, struct qpair *q, int nq, double *w,
                   const unsigned char *skip)
{
	struct cb_accp_result *r = &p->res;
	int k = 0;

	/* A pair measured 3 times: its last two only, both on a warm
	 * connection (a fresh one can be slow for a while: TCP's window,
	 * the verbs emulation); twice: the two. */
	for (int i = 0; i < nq; i++) {
		int x = q[i].nv - 2;
		if (x >= 0 && !skip[q[i].a] && !skip[q[i].b] && q[i].v[x] > 0 &&
		    q[i].v[x + 1] > 0)
			w[k++] = fabs(log(q[i].v[x] / q[i].v[x + 1]));
	}
	double md = cb_accp_median(w, k);
	r->sigma_rep = 1.4826 * md / sqrt(2.0);
	r->vary_pct = 100 * (exp(md) - 1);
	k = 0;
	for (int i = 0; i < nq; i++)
		if (q[i].nv && cb_accp_qvalue(&q[i]) > 0 && !skip[q[i].a] &&
		    !skip[q[i].b])
			w[k++] = log(cb_accp_qvalue(&q[i]));
	double mid = cb_accp_median(w, k); /* (sorts w) */
	for (int i = 0; i < k; i++)
		w[i] = fabs(w[i] - mid);
	r->sigma_cl = 1.4826 * cb_accp_median(w, k);
	/* The floor is under the healthy pairs' own distribution: the
	 * robust spread of their best-of values below the median (1.4826 x
	 * the median distance of those below it), which holds both what
	 * still lowers a best-of (cores taken, a busy moment) and how
	 * healthy pairs differ (placement, cables).  The side above is left
	 * out: nothing a fault does raises a pair, and what slows a healthy
	 * one only lowers it.  The repeats' spread of raw measurements
	 * (sigma_rep) is reported, not used: on a machine whose cores the
	 * hosts share it is wide while the best-of values agree. */
	k = 0;
	for (int i = 0; i < nq; i++)
		if (q[i].nv && cb_accp_qvalue(&q[i]) > 0 && !skip[q[i].a] &&
		    !skip[q[i].b] && log(cb_accp_qvalue(&q[i])) <= mid)
			w[k++] = mid - log(cb_accp_qvalue(&q[i]));
	r->sigma_lo = 1.4826 * cb_accp_median(w, k);
	r->sigma = fmax(r->sigma_lo, 0.005);
	double band = exp(-r->k * r->sigma);
	r->floor = r->ref * fmin(p->c.tolerance, band);
	/* A re-measurement (locate, confirm, their controls) is one
	 * measurement, not a best-of: it is judged against the single
	 * measurements' own median and lower-side spread, like against
	 * like, or a healthy node's re-measurements fall below a best-of
	 * floor as often as the noise lowers one measurement. */
	single_spread(p, skip, r);
	double band1 = exp(-r->k * r->sigma1);
	r->floor1 = r->ref1 * fmin(p->c.tolerance, band1);
	/* what it can tell: a node is named only when both hold */
	r->tell_pct = 100 * (1 - fmin(band, band1));
	r->warn = band < p->c.tolerance || band1 < p->c.tolerance;
}

/* The reference, then the noise: once over every pair, then again
 * without the nodes whose median pair is outside (a bad node's pairs
 * would widen the very spread it is judged against; on 8 nodes it has a
 * quarter of them, on 4 half).  Those are the nodes whose median pair is
 * below the tolerance (the fault size asked for), while fewer than half
 * the nodes are. */
void cb_accp_noise(struct cb_accp *p, struct qpair *q, int nq, double *w)
{
	double *nodemed = calloc((size_t)p->n + 1, sizeof(double));
	double *node = w + nq + 1;
	unsigned char *skip = p->busy; /* (clear on entry and exit) */
	int nn = 0, ns = 0;

	if (!nodemed)
		return;
	for (int x = 0; x < p->n; x++) {
		int j = 0;
		for (int i = 0; i < nq; i++)
			if (q[i].nv && (q[i].a == x || q[i].b == x))
				w[j++] = cb_accp_qvalue(&q[i]);
		if (j)
			node[nn++] = nodemed[x] = cb_accp_median(w, j);
	}
	p->res.ref = cb_accp_median(node, nn);
	memset(skip, 0, (size_t)p->n);
	spread(p, q, nq, w, skip);
	for (int x = 0; x < p->n; x++) {
		skip[x] = nodemed[x] > 0 &&
		          nodemed[x] < p->res.ref * p->c.tolerance;
		ns += skip[x];
	}
	if (ns && 2 * ns < nn)
		spread(p, q, nq, w, skip);
	memset(skip, 0, (size_t)p->n);
	free(nodemed);
}
