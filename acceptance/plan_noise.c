/* SPDX-License-Identifier: MIT */
/*
 * acceptance/plan_noise.c - what the quick tier measured (its pairs, each
 * with its values), the reference and the noise around it: the repeats'
 * spread, the cluster's, the floor a pair is outside below, and the
 * floors of several measurements all below.  Pure code.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acceptance/plan_impl.h"

static int by_pair(const void *x, const void *y)
{
	const struct cb_accp_meas *a = x, *b = y;

	if (a->a != b->a)
		return (a->a > b->a) - (a->a < b->a);
	return (a->b > b->b) - (a->b < b->b);
}

/* The quick tier's pairs, each with its (up to 3) values: @probes 0
 * without the probe round's (cb_accp_leaf_probe), 1 with, 2 those
 * alone. */
struct qpair *cb_accp_quick_pairs(struct cb_accp *p, int *nq, int probes)
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
		if (p->m[i].stage <= CB_ACCP_REPEAT && !p->m[i].redone &&
		    (probes == 1 || (probes == 2) == !!p->m[i].probe))
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

/* 1.4826 x the median distance of @v[0..@n) from their median (@v is
 * overwritten): the sigma of a normal sample, robustly. */
static double mad_log(double *v, int n)
{
	double mid = cb_accp_median(v, n);

	for (int i = 0; i < n; i++)
		v[i] = fabs(v[i] - mid);
	return 1.4826 * cb_accp_median(v, n);
}

/* How many of the sorted logs @w[0..@k) lie below a second mode: below
 * the widest gap between neighbours in the lower half, where more than
 * a quarter of them do (the lower quartile would fall among them) and
 * that gap is wider than the fault size asked for and 4 sigmas of the
 * values above it and of the repeats.  Pairs across slow uplinks are
 * such a mode (3 slow leaves of 8 with the leaves known: a quarter of
 * the quick pairs or more in 12 of 30 simulated runs at 256 hosts, the
 * floor fell to the slow pairs' rate, an uplink was missed and its
 * hosts named instead); a healthy cluster's spread has no such gap. */
static int low_mode(const double *w, int k, double tol, double srep)
{
	int at = 0;
	double g = 0, *u;

	if (k < 8)
		return 0;
	for (int i = 1; 2 * i <= k; i++)
		if (w[i] - w[i - 1] > g)
			g = w[i] - w[i - 1], at = i;
	if (at <= (k - 1) / 4 || g < -log(tol) || g < 4 * srep)
		return 0;
	u = malloc((size_t)(k - at) * sizeof(*u));
	if (!u)
		return 0;
	memcpy(u, w + at, (size_t)(k - at) * sizeof(*u));
	double su = mad_log(u, k - at);
	free(u);
	return g >= 4 * su ? at : 0;
}

/* Whether 9 in 10 of the pairs below @cut (not in @skip) are across
 * leaf switches given (--switches, the simulator's fat tree): pairs
 * behind slow uplinks.  Quick rounds that ran busy (another job: every
 * pair of a round slower) are below it too, inside leaves as across:
 * the cluster's own spread (without switches the hypercube's rounds
 * split the nodes as leaves would: at 64 hosts under busy phases a
 * floor above them made every node a suspect, 63 locate rounds). */
static int across(const struct cb_accp *p, const struct qpair *q, int nq,
                  const unsigned char *skip, double cut)
{
	const int *g = p->c.group;
	int lo = 0, x = 0;

	if (!g || p->igroup)
		return 0;
	for (int i = 0; i < nq; i++) {
		double v = q[i].nv ? cb_accp_qvalue(&q[i]) : 0;
		if (skip[q[i].a] || skip[q[i].b] || v <= 0 || v >= cut)
			continue;
		lo++;
		x += g[q[i].a] != g[q[i].b];
	}
	return lo && 10 * x >= 9 * lo;
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
	cb_accp_median(w, k); /* (sorts w) */
	int lm = low_mode(w, k, p->c.tolerance, r->sigma_rep);
	r->low_n = lm;
	r->low_of = k;
	r->low_bw = lm ? exp(w[(lm - 1) / 2]) : 0;
	r->high_bw = lm ? exp(w[lm + (k - lm - 1) / 2]) : 0;
	if (lm && (p->no_cut || !across(p, q, nq, skip, exp(w[lm]))))
		lm = 0;
	r->low_cut = lm ? exp(w[lm]) : 0;
	w += lm; /* (the scratch after w + k is as long: k shrinks) */
	k -= lm;
	double mid = cb_accp_median(w, k);
	double q25 = k ? exp(w[(k - 1) / 4]) : r->ref;
	/* the lower side alone: a one-sided noise (a busy core only ever
	 * slows) has a longer tail below than its MAD says */
	int kl = 0;
	double *lw = w + k;
	for (int i = 0; i < k; i++)
		if (w[i] < mid)
			lw[kl++] = mid - w[i];
	r->sigma_lo = kl >= 3 ? 1.4826 * cb_accp_median(lw, kl) : 0;
	for (int i = 0; i < k; i++)
		w[i] = fabs(w[i] - mid);
	r->sigma_cl = 1.4826 * cb_accp_median(w, k);
	/* Below the cluster's lower quartile by more than k repeat sigmas:
	 * a cluster whose healthy pairs differ (placement, cables) widens
	 * the floor by its own spread, the repeats by theirs. */
	r->sigma = fmax(r->sigma_rep, 0.005);
	double band =
	        fmin(1, r->ref > 0 ? q25 / r->ref : 1) * exp(-r->k * r->sigma);
	r->floor = r->ref * fmin(p->c.tolerance, band);
	r->tell_pct = 100 * (1 - band);
	r->warn = band < p->c.tolerance;
}

/* The reference, then the noise: once over every pair, then again
 * without the nodes whose median pair is outside (a bad node's pairs
 * would widen the very spread it is judged against; on 8 nodes it has a
 * quarter of them, on 4 half).  Those are the nodes whose median pair is
 * below the tolerance (the fault size asked for), while fewer than half
 * the nodes are. */
void cb_accp_noise(struct cb_accp *p, struct qpair *q, int nq, double *w)
{
	double *nodemed = p->nmed, *node = w + nq + 1;
	unsigned char *skip = p->busy; /* (clear on entry and exit) */
	struct cb_accp_result *r = &p->res;
	int nn = 0, ns = 0;

	for (int x = 0; x < p->n; x++) {
		int j = 0;
		for (int i = 0; i < nq; i++)
			if (q[i].nv && (q[i].a == x || q[i].b == x))
				w[j++] = cb_accp_qvalue(&q[i]);
		p->qm[x] = j;
		if (j)
			node[nn++] = nodemed[x] = cb_accp_median(w, j);
	}
	r->ref = cb_accp_median(node, nn);
	memset(skip, 0, (size_t)p->n);
	spread(p, q, nq, w, skip);
	for (int x = 0; x < p->n; x++) {
		skip[x] =
		        nodemed[x] > 0 && nodemed[x] < r->ref * p->c.tolerance;
		ns += skip[x];
	}
	if (ns && 2 * ns < nn)
		spread(p, q, nq, w, skip);
	else
		memset(skip, 0, (size_t)p->n);
	/* The node rule's noise: how much the nodes' medians (those the
	 * spread was measured on) differ, as the sigma of one measurement
	 * in a median of that many.  With 5 nodes or more that is measured
	 * itself: repeats that jump up (pairs bound by shared cores) make
	 * the repeats' sigma far wider than the medians ever differ, and a
	 * host a third as fast then passed the screen.  With fewer, the
	 * repeats' sigma where it is wider (the MAD of 3 or 4 medians is no
	 * estimate).  It only picks suspects: naming them takes locate. */
	int k = 0, km = 0;
	double *cnt = node + p->n;
	for (int x = 0; x < p->n; x++) {
		if (nodemed[x] > 0 && !skip[x])
			node[k++] = log(nodemed[x]);
		if (p->qm[x])
			cnt[km++] = p->qm[x];
	}
	r->sigma_node = k >= 3 ? mad_log(node, k) : 0;
	r->node_pairs = (int)cb_accp_median(cnt, km);
	r->sigma1 = r->sigma;
	if (r->node_pairs >= 2 && k >= 5)
		r->sigma1 = r->sigma_node * sqrt(r->node_pairs) / 1.25;
	else if (r->node_pairs >= 2)
		r->sigma1 = fmax(r->sigma,
		                 r->sigma_node * sqrt(r->node_pairs) / 1.25);
	memset(skip, 0, (size_t)p->n);
}

/* The floors, as shares of the reference, that t healthy measurements
 * (3 to MAXP) are all below only as rarely as one is below k sigmas
 * (p = Phi(-k)), into @out[t] (0: no such rule).  Two estimates of the
 * healthy measurements' lower tail: the model's (each below it with
 * p^(1/t), 1.54 sigmas for 3, sigma the largest of the repeats', the
 * cluster's and its lower side's: partners differ, busy cores only slow;
 * below the tolerance, not the reference: a host just above the asked
 * fault size is as rarely named) and the measured one: q, the j-th lowest
 * of the quick tier's single measurements of the nodes not in @skip, j
 * the most whose chance to have t new ones below, E[U_(j)^t] over N
 * exchangeable, is at most p.  The floor is the lower of the two, but
 * never below tolerance x q x e^(-z_t sigma_node), the measured
 * estimate's own version of the model's (t measurements of a host at
 * the asked fault size all below it as rarely; sigma_node for what a
 * host's own place adds to all its measurements at once, which the
 * pooled q does not see): where the model puts the floor below that,
 * its symmetric spread says the lower tail is longer than the healthy
 * measurements showed it to be (pairs bound by shared cores never go
 * below the cores' floor, and jump up at moments: a wide spread that
 * is all above).  Without q (too few measurements), no rule. */
void cb_accp_all_below(const struct cb_accp *p, const unsigned char *skip,
                       double *out)
{
	const struct cb_accp_result *r = &p->res;
	double pk = 0.5 * erfc(r->k / sqrt(2.0)), *e;
	double sl = fmax(r->sigma, fmax(r->sigma_cl, r->sigma_lo));
	double tol = p->c.tolerance;
	int ne = 0;

	memset(out, 0, (MAXP + 1) * sizeof(*out));
	e = malloc(((size_t)p->nm + 1) * sizeof(*e));
	if (!e || r->ref <= 0) {
		free(e);
		return;
	}
	for (int i = 0; i < p->nm; i++) {
		const struct cb_accp_meas *m = &p->m[i];
		if (m->stage <= CB_ACCP_REPEAT && !m->redone && !m->probe &&
		    m->ok && m->bw > 0 && m->bw >= r->low_cut && !skip[m->a] &&
		    !skip[m->b])
			e[ne++] = m->bw;
	}
	cb_accp_median(e, ne); /* (sorts) */
	for (int t = 3; t <= MAXP; t++) {
		double pt = pow(pk, 1.0 / t), lo = 0, hi = r->k;
		for (int i = 0; i < 50; i++) { /* Phi(-z) = pt */
			double z = (lo + hi) / 2;
			if (0.5 * erfc(z / sqrt(2.0)) > pt)
				lo = z;
			else
				hi = z;
		}
		int j = 0;
		for (int c = 1; c <= ne; c++) {
			double eu = 1;
			for (int i = 0; i < t; i++)
				eu *= (double)(c + i) / (ne + 1 + i);
			if (eu > pk)
				break;
			j = c;
		}
		if (!j)
			continue;
		double q = e[j - 1] / r->ref;
		out[t] = fmin(
		        q, fmax(tol * exp(-lo * sl),
		                tol * fmin(1, q) * exp(-lo * r->sigma_node)));
	}
	free(e);
}

/* A node slow to every peer: its median of @m pairs below the reference
 * by more than k sigmas of such a median (1.25 sigma / sqrt m), and by
 * the fault size asked for at least. */
double cb_accp_node_floor(const struct cb_accp *p, int m)
{
	const struct cb_accp_result *r = &p->res;

	if (m < 2)
		return 0;
	return r->ref *
	       fmin(p->c.tolerance, exp(-r->k * 1.25 * r->sigma1 / sqrt(m)));
}
