/* SPDX-License-Identifier: MIT */
/*
 * acceptance/plan_judge.c - the judge of acceptance's plan (the rules are
 * in acceptance/plan.c's header and docs/acceptance-judging.md): the
 * reference and the noise after the quick tier, the suspects and their
 * partners, the locate and confirm rounds and what they name.  Pure code.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acceptance/plan_impl.h"

void cb_accp_put(struct cb_accp *p, int a, int b, int who)
{
	if (a == b || p->dropped[a] || p->dropped[b])
		return;
	p->batch[p->nb][0] = a < b ? a : b;
	p->batch[p->nb][1] = a < b ? b : a;
	p->who[p->nb++] = who;
}

/* ---- the judge of the quick tier ---- */

static int by_pair(const void *x, const void *y)
{
	const struct cb_accp_meas *a = x, *b = y;

	if (a->a != b->a)
		return (a->a > b->a) - (a->a < b->a);
	return (a->b > b->b) - (a->b < b->b);
}

/* The quick tier's pairs, each with its (up to 2) values. */
static struct qpair *quick_pairs(struct cb_accp *p, int *nq)
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
/* 1.4826 x the median distance of @v[0..@n) from their median (@v is
 * overwritten): the sigma of a normal sample, robustly. */
static double mad_log(double *v, int n)
{
	double mid = cb_accp_median(v, n);

	for (int i = 0; i < n; i++)
		v[i] = fabs(v[i] - mid);
	return 1.4826 * cb_accp_median(v, n);
}

static void noise(struct cb_accp *p, struct qpair *q, int nq, double *w)
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
static void all_below(const struct cb_accp *p, const unsigned char *skip,
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
		if (m->stage <= CB_ACCP_REPEAT && !m->redone && m->ok &&
		    m->bw > 0 && !skip[m->a] && !skip[m->b])
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

/* @ex[x]: x's pairs outside, not failed (a failure is a flapping link's
 * evidence, kept), whose other end is outside with every peer (3 or more
 * pairs): that end explains them, and x is judged on its others.  (One
 * slow host made each node with one more pair outside by chance a
 * suspect; at 8 nodes under busy cores 5 of them queued for 3 cleared
 * partners: 6-9 locate rounds.)  Counted as the pairs were (p->qt,
 * p->qo: a host's pairs across an uplink named slow are the uplink's). */
static void explained(const struct cb_accp *p, const struct qpair *q, int nq,
                      int *ex)
{
	const int *tot = p->qt, *out = p->qo;

	for (int i = 0; i < nq; i++) {
		int across =
		        p->c.group && p->c.group[q[i].a] != p->c.group[q[i].b];
		if (!cb_accp_q_out(p, &q[i]) || q[i].fails)
			continue;
		for (int s = 0; s < 2; s++) {
			int x = s ? q[i].b : q[i].a, y = s ? q[i].a : q[i].b;
			if (across && (p->named[x] == 2 || p->named[y] == 2))
				continue;
			ex[x] += tot[y] >= 3 && out[y] == tot[y] &&
			         !p->dropped[y];
		}
	}
}

void cb_accp_judge_quick(struct cb_accp *p)
{
	int nq = 0, n = p->n;
	struct qpair *q = quick_pairs(p, &nq);
	double *w = calloc(3 * (size_t)nq + 2 * (size_t)n + 2, sizeof(double));
	int *tot = p->qt, *out = p->qo;
	int *fail = calloc(2 * (size_t)n, sizeof(int)), *ex = fail + n;
	unsigned char *slowx = calloc((size_t)n, 1);

	if (!q || !w || !fail || !slowx)
		goto done;
	noise(p, q, nq, w);
	cb_accp_infer_groups(p, q, nq);
	cb_accp_uplinks(p, q, nq, w);
	for (int i = 0; i < nq; i++) {
		int o = cb_accp_q_out(p, &q[i]);
		int across =
		        p->c.group && p->c.group[q[i].a] != p->c.group[q[i].b];
		for (int s = 0; s < 2; s++) {
			int x = s ? q[i].b : q[i].a;
			/* a host behind an uplink named slow is judged on its
			 * pairs inside its leaf: those across are the
			 * uplink's (a slow host there was missed before) */
			if (across && p->named[x] == 2)
				continue;
			tot[x]++;
			out[x] += o;
			fail[x] += q[i].fails > 0;
		}
		p->res.suspect_pairs += o;
	}
	explained(p, q, nq, ex);
	for (int x = 0; x < n; x++) {
		int behind = p->named[x] == 2;
		/* its pairs but those explained by a node slow to all */
		int o = out[x] - ex[x], t = tot[x] - ex[x];
		/* slow to all its peers, if to none alone by that much (its
		 * median counts pairs across: not behind a slow uplink) */
		int slow = !behind && p->nmed[x] > 0 &&
		           p->nmed[x] < cb_accp_node_floor(p, p->qm[x]);
		p->cleared[x] = !p->dropped[x] && !fail[x] && tot[x] && !slow &&
		                (!o || (t >= 3 && 2 * o < t));
		/* two pairs outside: located even where cleared, rather
		 * than its pairs confirmed one after the other */
		p->suspect[x] = !p->dropped[x] && (o || slow) &&
		                p->named[x] != 1 && (!p->cleared[x] || o >= 2);
		p->cleared[x] &= !p->suspect[x];
		p->need[x] = p->suspect[x] ? (fail[x] ? 6 : 3) : 0;
		p->res.suspect_nodes += p->suspect[x];
		/* (its pairs across are the uplink's: not in the sample) */
		slowx[x] = slow || p->dropped[x] || behind;
	}
	/* for the warning: the measured floor from every node the screen
	 * did not hold (each suspect is judged against its own, below) */
	all_below(p, slowx, p->allb);
	struct cb_accp_result *r = &p->res;
	/* a host slow to all its peers is told from the lower of the
	 * screen's floor and that of 3 measurements all below (no such
	 * rule: as one pair) */
	r->tell_node_pct = r->tell_pct;
	if (r->node_pairs >= 2 && p->allb[3] > 0)
		r->tell_node_pct =
		        100 *
		        (1 - fmin(p->allb[3], exp(-r->k * 1.25 * r->sigma1 /
		                                  sqrt(r->node_pairs))));
	/* partners: the cleared; failing that, nodes with a pair inside */
	for (int x = 0; x < n; x++)
		if (p->cleared[x])
			p->pool[p->npool++] = x;
	for (int i = 0; !p->npool && i < nq; i++)
		if (!cb_accp_q_out(p, &q[i]))
			p->busy[q[i].a] = p->busy[q[i].b] = 1;
	for (int x = 0; !p->npool && x < n; x++)
		if (p->busy[x] && !p->dropped[x])
			p->pool[p->npool++] = x;
	/* the pairs inside: controls for the rounds to come */
	p->good = calloc((size_t)nq + 1, sizeof(*p->good));
	for (int i = 0; p->good && i < nq; i++)
		if (!cb_accp_q_out(p, &q[i])) {
			p->good[p->ngood][0] = q[i].a;
			p->good[p->ngood++][1] = q[i].b;
		}
	/* the suspect pairs with no suspect node: confirm later */
	p->conf = calloc((size_t)nq + 1, sizeof(*p->conf));
	for (int i = 0; p->conf && i < nq; i++)
		if (cb_accp_q_out(p, &q[i]))
			p->conf[p->nconf++] = (struct conf){ .a = q[i].a,
				                             .b = q[i].b,
				                             .left = CONFS };
done:
	memset(p->busy, 0, (size_t)n);
	free(q);
	free(w);
	free(fail);
	free(slowx);
}

/* ---- locate ---- */

static int met(const struct cb_accp *p, int x, int y)
{
	for (int i = 0; i < p->lt[x] && i < MAXP; i++)
		if (p->used[x * MAXP + i] == y)
			return 1;
	return 0;
}

/* Control pairs, up to @max, from the nodes free in the round being
 * built: quick pairs that were inside the noise first, then two cleared
 * nodes.  The number placed. */
static int controls(struct cb_accp *p, int max)
{
	int placed = 0, left = -1;

	for (int i = 0; i < p->ngood && placed < max; i++) {
		int j = (i + p->rot) % p->ngood, a = p->good[j][0],
		    b = p->good[j][1];
		if (p->busy[a] || p->busy[b] || p->dropped[a] ||
		    p->dropped[b] || p->named[a] || p->named[b])
			continue;
		p->busy[a] = p->busy[b] = 1;
		cb_accp_put(p, a, b, CB_ACCP_CTRL);
		placed++;
	}
	for (int j = 0; j < p->npool && placed < max; j++) {
		int c = p->pool[(j + p->rot) % p->npool];
		if (p->busy[c] || p->dropped[c] || p->named[c])
			continue;
		if (left < 0) {
			left = c;
			continue;
		}
		p->busy[left] = p->busy[c] = 1;
		cb_accp_put(p, left, c, CB_ACCP_CTRL);
		left = -1;
		placed++;
	}
	return placed;
}

/* Controls for the round built: up to one per two measured pairs, at
 * least one; where none fits, the round's last pairs wait for the next
 * round (to the last one: a round nothing can control runs as it is). */
static void control_round(struct cb_accp *p)
{
	int want = p->nb / 2 > 3 ? 3 : p->nb / 2 > 1 ? p->nb / 2 : 1;

	while (p->nb && !controls(p, want) && p->nb > 1) {
		p->nb--;
		p->busy[p->batch[p->nb][0]] = p->busy[p->batch[p->nb][1]] = 0;
	}
}

/* A partner for suspect @x free this round whose quick pair with @x was
 * outside, or -1: measured first, so that the measurement is also that
 * pair's first confirmation (cb_accp_judge_locate), and a pair outside
 * by chance needs no confirm rounds. */
static int conf_partner(const struct cb_accp *p, int x)
{
	for (int i = 0; i < p->nconf; i++) {
		const struct conf *c = &p->conf[i];
		int z = c->a == x ? c->b : c->b == x ? c->a : -1;
		if (z < 0 || p->busy[z] || p->dropped[z] || met(p, x, z) ||
		    !cb_accp_same_side(p, x, z))
			continue;
		for (int j = 0; j < p->npool; j++)
			if (p->pool[j] == z)
				return z;
	}
	return -1;
}

void cb_accp_locate_round(struct cb_accp *p)
{
	int n = p->n;

	p->nb = 0;
	memset(p->busy, 0, (size_t)n);
	for (int k = 0; k < n; k++) {
		int x = (k + p->rot) % n;
		if (!p->suspect[x] || p->lt[x] >= p->need[x] || p->busy[x])
			continue;
		int y = conf_partner(p, x);
		for (int j = 0; j < p->npool && y < 0; j++) {
			int c = p->pool[(j + x * 7 + p->rot) % p->npool];
			if (c != x && !p->busy[c] && !p->dropped[c] &&
			    !met(p, x, c) && cb_accp_same_side(p, x, c))
				y = c;
		}
		if (y < 0) {
			/* nobody free: wait for the next round, unless no
			 * one is left at all */
			int any = 0;
			for (int j = 0; j < p->npool && !any; j++) {
				int c = p->pool[j];
				any = c != x && !p->dropped[c] &&
				      !met(p, x, c) &&
				      cb_accp_same_side(p, x, c);
			}
			if (!any)
				p->need[x] = p->lt[x];
			continue;
		}
		p->busy[x] = p->busy[y] = 1;
		cb_accp_put(p, x, y, x);
	}
	control_round(p);
	p->rot += 13;
}

/* The round's control pairs against the reference: what the machine
 * gave this round.  A suspect is outside only when it is also below the
 * control by more than the noise allows: the floor moves down with the
 * control's median, less half the band for the control's own noise, and
 * never up (a quicker round does not raise the bar).  p->rscale: the
 * controls' median over the reference itself (at most 1; 1 without
 * controls). */
double cb_accp_round_scale(struct cb_accp *p, const double *bw, const int *ok)
{
	double v[CB_ACCP_MAXCTRL];
	int k = 0;

	for (int i = 0; i < p->nb && k < CB_ACCP_MAXCTRL; i++)
		if (p->who[i] == CB_ACCP_CTRL && ok[i] && bw[i] > 0)
			v[k++] = bw[i];
	p->res.ctrl_pairs += k;
	p->rscale = 1;
	if (!k || p->res.ref <= 0)
		return 1;
	p->rscale = fmin(1, cb_accp_median(v, k) / p->res.ref);
	return fmin(1, p->rscale * exp(p->res.k * p->res.sigma / 2));
}

int cb_accp_outside(const struct cb_accp *p, int ok, double bw, double scale)
{
	return !ok || bw < p->res.floor * scale;
}

/* Suspect @x's 3 locate measurements, each over its round's scale, are
 * all below ref x F_5 but not all below ref x F_3 (p->allb: the floors
 * over the nodes the screen did not hold; judge_locate takes each
 * suspect's own): 5 might name it where 3 cannot (F_5 is the higher
 * floor), and only where the first 3 are below it already.  Not where
 * a round's controls ran below CB_ACCP_BUSY of the reference: with the
 * repeats' sigma wide, the scale leaves such a round as it is, and two
 * more rounds in the same busy phase named good hosts (simulator, 64
 * hosts, --busy-rounds 0.2: 22 in 3000 runs, against 11 without the
 * 2 rounds more). */
static int below5(const struct cb_accp *p, int x)
{
	double hi = 0, ref = p->res.ref;

	if (p->allb[5] <= 0 || ref <= 0)
		return 0;
	for (int i = 0; i < 3; i++) {
		if (p->lc[x * MAXP + i] < CB_ACCP_BUSY)
			return 0;
		hi = fmax(hi, p->ls[x * MAXP + i]);
	}
	return hi < ref * p->allb[5] &&
	       (p->allb[3] <= 0 || hi >= ref * p->allb[3]);
}

/* After the locate rounds: ties (2 of 3 outside) and suspects below5()
 * get two partners more. */
int cb_accp_tie_break(struct cb_accp *p)
{
	int more = 0;

	for (int x = 0; x < p->n; x++)
		if (p->suspect[x] && !p->tied[x] && p->lt[x] == 3 &&
		    (p->lo[x] == 2 || (p->lo[x] < 3 && below5(p, x)))) {
			p->tied[x] = 1; /* once: partners may run out */
			p->need[x] = 5;
			more = 1;
		}
	return more;
}

/* Failures over everything measured: flapping and dead nodes. */
static void failures(struct cb_accp *p)
{
	int n = p->n;
	int *nf = calloc((size_t)n, 5 * sizeof(int)), *fp = nf + n,
	    *fd = nf + 2 * n, *after = nf + 3 * n, *first = nf + 4 * n;

	if (!nf)
		return;
	for (int pass = 0; pass < 2; pass++) {
		memset(nf, 0, (size_t)n * 4 * sizeof(int));
		for (int x = 0; x < n; x++)
			first[x] = pass ? first[x] : -1;
		for (int i = 0; i < p->nm; i++) {
			const struct cb_accp_meas *e = &p->m[i];
			for (int s = 0; s < 2; s++) {
				int x = s ? e->b : e->a, y = s ? e->a : e->b;
				if (e->ok) {
					after[x] |= nf[x] > 0;
					continue;
				}
				/* second pass: a partner that is itself a
				 * candidate does not count */
				if (pass && p->busy[y])
					continue;
				if (!nf[x]++ && !pass)
					first[x] = e->round;
				if (!fd[x] || (fd[x] == 1 && fp[x] != y)) {
					fp[x] = fd[x] ? fp[x] : y;
					fd[x]++;
				}
			}
		}
		for (int x = 0; !pass && x < n; x++)
			p->busy[x] = fd[x] >= 2;
	}
	for (int x = 0; x < n; x++) {
		int dead = (fd[x] >= 2 && !after[x]) ||
		           (p->dropped[x] && first[x] >= 0);
		if (!dead && !(fd[x] >= 2 && after[x]))
			continue;
		cb_accp_find(p, dead ? CB_ACCP_DEAD : CB_ACCP_FLAP, x, -1, 0,
		             nf[x], nf[x]);
		p->f[p->nf - 1].first_bad = first[x];
		p->named[x] = 1;
	}
	memset(p->busy, 0, (size_t)n);
	free(nf);
}

/* Suspect @x's locate measurements against @y: tries of path @c. */
static void located(struct cb_accp *p, struct conf *c, int x, int y)
{
	if (!p->suspect[x])
		return;
	for (int i = 0; i < p->lt[x] && i < MAXP && c->tries < CONFS; i++) {
		double v = p->lv[x * MAXP + i], s = p->ls[x * MAXP + i];
		if (p->used[x * MAXP + i] != y)
			continue;
		c->v[c->tries++] = v;
		c->left--;
		c->outs += v <= 0 || s < p->res.floor;
	}
}

void cb_accp_judge_locate(struct cb_accp *p)
{
	unsigned char *skip = calloc((size_t)p->n, 1);
	double fl[MAXP + 1];

	failures(p);
	for (int x = 0; x < p->n; x++) {
		int t = p->lt[x], o = p->lo[x];
		if (!p->suspect[x] || p->named[x] == 1 || !t)
			continue;
		int named = t >= 5 ? o >= t - 1 : o == t;
		if (t == 1) /* one partner only: and every quick pair */
			named = o == 1 && p->qt[x] >= 2 && p->qo[x] == p->qt[x];
		/* or 3 or more, each scaled by its round's controls, all
		 * below the floor that many together are held to */
		int mt = t < MAXP ? t : MAXP;
		double below = 0;
		if (!named && mt >= 3 && skip) {
			/* its floor from every measurement of the nodes not
			 * named, but its own: another suspect's pairs stay in
			 * (a good host held by the screen keeps the sample
			 * large enough at 8 nodes; a bad one only lowers
			 * the floor) */
			for (int y = 0; y < p->n; y++)
				skip[y] =
				        p->named[y] || p->dropped[y] || y == x;
			all_below(p, skip, fl);
			double hi = 0;
			for (int i = 0; i < mt; i++)
				hi = fmax(hi, p->ls[x * MAXP + i]);
			if (fl[mt] > 0 && hi < p->res.ref * fl[mt])
				named = 1, below = fl[mt];
		}
		if (!named)
			continue;
		double v = cb_accp_median(&p->lv[x * MAXP], mt);
		int had = p->nf;
		cb_accp_find(p, CB_ACCP_NODE, x, -1, v, t, o);
		if (p->nf > had)
			p->f[p->nf - 1].all_below = below;
		p->named[x] = 1;
	}
	/* what is left to confirm: pairs neither end of which is named,
	 * with what locate measured of them already (scaled by the round's
	 * controls, as confirm's own tries) */
	int k = 0;
	for (int i = 0; i < p->nconf; i++) {
		struct conf *c = &p->conf[i];
		if (p->named[c->a] || p->named[c->b] || p->dropped[c->a] ||
		    p->dropped[c->b])
			continue;
		for (int s = 0; s < 2; s++)
			located(p, c, s ? c->b : c->a, s ? c->a : c->b);
		p->conf[k++] = *c;
	}
	p->nconf = k;
	free(skip);
}

/* ---- confirm ---- */

void cb_accp_confirm_round(struct cb_accp *p)
{
	p->nb = 0;
	memset(p->busy, 0, (size_t)p->n);
	for (int i = 0; i < p->nconf; i++) {
		struct conf *c = &p->conf[i];
		/* a pair inside once is not a path: no need to go on */
		if (!c->left || c->outs < c->tries || p->busy[c->a] ||
		    p->busy[c->b])
			continue;
		p->busy[c->a] = p->busy[c->b] = 1;
		cb_accp_put(p, c->a, c->b, i);
	}
	control_round(p);
	p->rot += 13;
}

void cb_accp_judge_confirm(struct cb_accp *p)
{
	int *paths = calloc((size_t)p->n, sizeof(int));

	if (!paths)
		return;
	for (int i = 0; i < p->nconf; i++) {
		struct conf *c = &p->conf[i];
		c->left = c->tries == CONFS && c->outs == CONFS; /* a path */
		paths[c->a] += c->left;
		paths[c->b] += c->left;
		p->res.cleared_pairs += !c->left;
	}
	/* a node on two or more such paths is the node, not the paths: the
	 * one on the most first, then the others on what is left (in node
	 * order, a node whose paths an earlier one had taken was named with
	 * none: "0 of 0 measurements", 0 GB/s) */
	for (;;) {
		double v[2 * MAXP];
		int k = 0, t = 0, x = -1;
		for (int y = 0; y < p->n; y++)
			if (paths[y] >= 2 && (x < 0 || paths[y] > paths[x]))
				x = y;
		if (x < 0)
			break;
		for (int i = 0; i < p->nconf; i++) {
			struct conf *c = &p->conf[i];
			if (!c->left || (c->a != x && c->b != x))
				continue;
			c->left = 0;
			paths[c->a]--;
			paths[c->b]--;
			t += c->tries;
			for (int j = 0; j < CONFS && k < 2 * MAXP; j++)
				v[k++] = c->v[j];
		}
		cb_accp_find(p, CB_ACCP_NODE, x, -1, cb_accp_median(v, k), t,
		             t);
		p->named[x] = 1;
	}
	for (int i = 0; i < p->nconf; i++) {
		struct conf *c = &p->conf[i];
		if (c->left)
			cb_accp_find(p, CB_ACCP_PATH, c->a, c->b,
			             cb_accp_median(c->v, CONFS), c->tries,
			             c->outs);
	}
	free(paths);
}
