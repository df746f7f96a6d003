/* SPDX-License-Identifier: MIT */
/*
 * acceptance/plan.c - the acceptance plan and its judge, pure code
 * (acceptance/plan.h; docs/acceptance-judging.md):
 *
 *   quick    up to CB_ACCP_FULL_MAX nodes (or --pairs all) every pair, in
 *            the n - 1 rounds of the circle method; beyond, ceil(log2 n)
 *            rounds of a hypercube over the nodes in switch order: round d
 *            pairs position p with p ^ 2^(L-1-d), so each node meets a
 *            node of the other half, quarter, ... (other switches first,
 *            its own last);
 *   repeat   round 1 again: the same pairs twice give the noise of
 *            repeats;
 *   judge    the reference is the median over nodes of each node's
 *            median pair; the noise sigma is the larger of the repeats'
 *            robust spread (median |ln x1 - ln x2| x 1.4826 / sqrt 2) and
 *            the cluster's (1.4826 x MAD of ln x over pairs), at least
 *            0.5%; a pair is outside below ref x min(tolerance,
 *            exp(-k sigma)).  When exp(-k sigma) < tolerance the noise
 *            hides faults of the asked size: a warning, never a host;
 *   locate   every node with a pair outside that is not cleared (a node
 *            is cleared with no failure and fewer than half its pairs
 *            outside, and not two) is measured against 3 cleared partners
 *            (6 where a pair failed), all suspects at once where partners
 *            are disjoint; named when every one is outside (4 of 5 after
 *            a tie-break at 2 of 3);
 *   confirm  a pair outside whose ends were both cleared is measured 3
 *            more times: named (the path) only when all 3 are outside.
 * A node whose pairs failed with two different partners and worked again
 * is flapping; one whose every measurement failed from some round on is
 * dead.  With switches known, a leaf whose pairs to other leaves are
 * outside while those inside it are not is its uplink.
 */
#include "acceptance/plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acceptance/accept.h"

#define MAXP  8 /* locate partners per node, at most */
#define CONFS 3 /* confirmations of a path */

struct conf {
	int a, b, left, tries, outs;
	double v[CONFS];
};

struct cb_accp {
	struct cb_accp_cfg c;
	int n, L, full, stage, r, quick_rounds;
	int *order; /* position -> node */
	int (*batch)[2], *who, nb, bstage, total;
	int (*first)[2], nfirst, nrep, rep_at[4]; /* the first rounds' pairs */
	struct cb_accp_meas *m;
	int nm, capm;
	struct cb_accp_find *f;
	int nf, capf;
	unsigned char *dropped, *cleared, *suspect, *named, *busy, *tied;
	int *need, *lt, *lo; /* locate: partners wanted, measured, outside */
	int *qt, *qo;        /* the quick tier: pairs, outside */
	int *used;           /* [n][MAXP] locate partners */
	double *lv;          /* [n][MAXP] */
	int npool, *pool, rot;
	struct conf *conf;
	int nconf;
	struct cb_accp_result res;
};

static const char *const stage_names[CB_ACCP_NSTAGES] = { "quick", "repeat",
	                                                  "locate", "confirm" };

const char *cb_accp_stage_name(int s)
{
	return s >= 0 && s < CB_ACCP_NSTAGES ? stage_names[s] : "?";
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	if (n <= 0)
		return 0;
	qsort(v, (size_t)n, sizeof(*v), cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

/* Nodes in switch order (by leaf, then index), so that the hypercube's
 * high bits cross switches. */
static int switch_order(struct cb_accp *p)
{
	long long *k = malloc((size_t)p->n * sizeof(*k));

	if (!k)
		return -1;
	for (int i = 0; i < p->n; i++)
		k[i] = (long long)p->c.group[i] * p->n + i;
	qsort(k, (size_t)p->n, sizeof(*k), cmp_ll);
	for (int i = 0; i < p->n; i++)
		p->order[i] = (int)(k[i] % p->n);
	free(k);
	return 0;
}

struct cb_accp *cb_accp_new(const struct cb_accp_cfg *c)
{
	struct cb_accp *p = calloc(1, sizeof(*p));
	int n = c->n;

	if (!p || n < 2) {
		free(p);
		return NULL;
	}
	p->c = *c;
	p->n = n;
	if (p->c.k <= 0)
		p->c.k = CB_ACCP_K;
	if (p->c.full_max <= 0)
		p->c.full_max = CB_ACCP_FULL_MAX;
	if (p->c.tolerance <= 0 || p->c.tolerance > 1)
		p->c.tolerance = 0.9;
	p->full = c->full > 0 || (c->full == 0 && n <= p->c.full_max);
	while ((1 << p->L) < n)
		p->L++;
	p->quick_rounds = p->full ? cb_acc_rounds(n) : p->L;
	p->order = calloc((size_t)n, sizeof(int));
	p->batch = calloc((size_t)n, sizeof(*p->batch));
	p->first = calloc(2 * (size_t)n, sizeof(*p->first));
	p->who = calloc((size_t)n, sizeof(int));
	p->dropped = calloc((size_t)n, 6);
	p->need = calloc((size_t)n, 5 * sizeof(int));
	p->used = calloc((size_t)n * MAXP, sizeof(int));
	p->lv = calloc((size_t)n * MAXP, sizeof(double));
	p->pool = calloc((size_t)n, sizeof(int));
	if (!p->order || !p->batch || !p->first || !p->who || !p->dropped ||
	    !p->need || !p->used || !p->lv || !p->pool) {
		cb_accp_free(p);
		return NULL;
	}
	p->cleared = p->dropped + n;
	p->suspect = p->dropped + 2 * n;
	p->named = p->dropped + 3 * n;
	p->busy = p->dropped + 4 * n;
	p->tied = p->dropped + 5 * n;
	p->lt = p->need + n;
	p->lo = p->need + 2 * n;
	p->qt = p->need + 3 * n;
	p->qo = p->need + 4 * n;
	p->res.k = p->c.k;
	for (int i = 0; i < n; i++)
		p->order[i] = i;
	if (c->group && switch_order(p)) {
		cb_accp_free(p);
		return NULL;
	}
	return p;
}

void cb_accp_free(struct cb_accp *p)
{
	if (!p)
		return;
	free(p->order);
	free(p->batch);
	free(p->first);
	free(p->who);
	free(p->m);
	free(p->f);
	free(p->dropped);
	free(p->need);
	free(p->used);
	free(p->lv);
	free(p->pool);
	free(p->conf);
	free(p);
}

void cb_accp_drop(struct cb_accp *p, int x)
{
	if (p && x >= 0 && x < p->n)
		p->dropped[x] = 1;
}

static void put(struct cb_accp *p, int a, int b, int who)
{
	if (a == b || p->dropped[a] || p->dropped[b])
		return;
	p->batch[p->nb][0] = a < b ? a : b;
	p->batch[p->nb][1] = a < b ? b : a;
	p->who[p->nb++] = who;
}

/* ---- the quick tier ---- */

static void quick_round(struct cb_accp *p, int r)
{
	int n = p->n;

	p->nb = 0;
	if (p->full) {
		int(*r2)[2] = malloc(((size_t)n / 2 + 1) * sizeof(*r2));
		int m = r2 ? cb_acc_round_pairs(n, r, r2) : 0;
		for (int i = 0; i < m; i++) /* (put skips dropped nodes) */
			put(p, r2[i][0], r2[i][1], -1);
		free(r2);
		return;
	}
	int bit = 1 << (p->L - 1 - r), left = -1;
	for (int q = 0; q < n; q++) {
		int o = q ^ bit, x = p->order[q];
		if (p->dropped[x])
			continue;
		if (o < n && !p->dropped[p->order[o]]) {
			if (q < o)
				put(p, x, p->order[o], -1);
			continue;
		}
		/* its partner is past the end: pair it with another such */
		if (left < 0) {
			left = x;
		} else {
			put(p, left, x, -1);
			left = -1;
		}
	}
}

/* ---- the judge of the quick tier ---- */

struct qpair {
	int a, b, nv, fails;
	double v[2];
};

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
		if (p->m[i].stage <= CB_ACCP_REPEAT)
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
		else if (e->nv < 2)
			e->v[e->nv++] = s[i].bw;
	}
	free(s);
	*nq = n;
	return q;
}

static double qvalue(const struct qpair *e)
{
	return e->nv == 2 ? (e->v[0] + e->v[1]) / 2 : e->nv ? e->v[0] : 0;
}

static int q_out(const struct cb_accp *p, const struct qpair *e)
{
	return e->fails || !e->nv || qvalue(e) < p->res.floor;
}

/* The spread of repeats and across the cluster, over the pairs neither
 * end of which is in @skip; sets sigma and the floor. */
static void spread(struct cb_accp *p, struct qpair *q, int nq, double *w,
                   const unsigned char *skip)
{
	struct cb_accp_result *r = &p->res;
	int k = 0;

	for (int i = 0; i < nq; i++)
		if (q[i].nv == 2 && q[i].v[0] > 0 && q[i].v[1] > 0 &&
		    !skip[q[i].a] && !skip[q[i].b])
			w[k++] = fabs(log(q[i].v[0] / q[i].v[1]));
	double md = median(w, k);
	r->sigma_rep = 1.4826 * md / sqrt(2.0);
	r->vary_pct = 100 * (exp(md) - 1);
	k = 0;
	for (int i = 0; i < nq; i++)
		if (q[i].nv && qvalue(&q[i]) > 0 && !skip[q[i].a] &&
		    !skip[q[i].b])
			w[k++] = log(qvalue(&q[i]));
	double mid = median(w, k); /* (sorts w) */
	double q25 = k ? exp(w[(k - 1) / 4]) : r->ref;
	for (int i = 0; i < k; i++)
		w[i] = fabs(w[i] - mid);
	r->sigma_cl = 1.4826 * median(w, k);
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
static void noise(struct cb_accp *p, struct qpair *q, int nq, double *w)
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
				w[j++] = qvalue(&q[i]);
		if (j)
			node[nn++] = nodemed[x] = median(w, j);
	}
	p->res.ref = median(node, nn);
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

static void find(struct cb_accp *p, enum cb_accp_kind kind, int a, int b,
                 double bw, int tries, int outs)
{
	if (p->nf == p->capf) {
		int cap = p->capf ? 2 * p->capf : 16;
		struct cb_accp_find *f =
		        realloc(p->f, (size_t)cap * sizeof(*f));
		if (!f)
			return;
		p->f = f;
		p->capf = cap;
	}
	p->f[p->nf++] = (struct cb_accp_find){ .kind = kind,
		                               .a = a,
		                               .b = b,
		                               .bw = bw,
		                               .tries = tries,
		                               .outside = outs,
		                               .first_bad = -1 };
}

/* With switches known: a leaf slow to the others, normal inside. */
static void uplinks(struct cb_accp *p, struct qpair *q, int nq, double *w)
{
	const int *g = p->c.group;
	int ng = 0;

	if (!g)
		return;
	for (int x = 0; x < p->n; x++)
		ng = g[x] + 1 > ng ? g[x] + 1 : ng;
	for (int l = 0; l < ng; l++) {
		int kc = 0, kw = 0;
		double *in = w + nq + 1;
		for (int i = 0; i < nq; i++) {
			int ia = g[q[i].a] == l, ib = g[q[i].b] == l;
			if (!ia && !ib)
				continue;
			double v = q[i].nv ? qvalue(&q[i]) : 0;
			if (ia && ib)
				in[kw++] = v;
			else
				w[kc++] = v;
		}
		if (kc < 3 || !kw)
			continue;
		double mc = median(w, kc), mw = median(in, kw);
		if (mc >= p->res.floor || mw < p->res.floor)
			continue;
		find(p, CB_ACCP_UPLINK, l, -1, mc, kc, kc);
		for (int x = 0; x < p->n; x++)
			if (g[x] == l)
				p->named[x] = 2; /* explained by its uplink */
	}
}

static void judge_quick(struct cb_accp *p)
{
	int nq = 0, n = p->n;
	struct qpair *q = quick_pairs(p, &nq);
	double *w = calloc(2 * (size_t)nq + (size_t)n + 2, sizeof(double));
	int *tot = p->qt, *out = p->qo;
	int *fail = calloc((size_t)n, sizeof(int));

	if (!q || !w || !fail)
		goto done;
	noise(p, q, nq, w);
	uplinks(p, q, nq, w);
	for (int i = 0; i < nq; i++) {
		int o = q_out(p, &q[i]);
		for (int s = 0; s < 2; s++) {
			int x = s ? q[i].b : q[i].a;
			tot[x]++;
			out[x] += o;
			fail[x] += q[i].fails > 0;
		}
		p->res.suspect_pairs += o;
	}
	for (int x = 0; x < n; x++) {
		p->cleared[x] =
		        !p->dropped[x] && !fail[x] && tot[x] &&
		        (!out[x] || (tot[x] >= 3 && 2 * out[x] < tot[x]));
		/* two pairs outside: located even where cleared, rather
		 * than its pairs confirmed one after the other */
		p->suspect[x] = !p->dropped[x] && out[x] && !p->named[x] &&
		                (!p->cleared[x] || out[x] >= 2);
		p->cleared[x] &= !p->suspect[x];
		p->need[x] = p->suspect[x] ? (fail[x] ? 6 : 3) : 0;
		p->res.suspect_nodes += p->suspect[x];
	}
	/* partners: the cleared; failing that, nodes with a pair inside */
	for (int x = 0; x < n; x++)
		if (p->cleared[x])
			p->pool[p->npool++] = x;
	for (int i = 0; !p->npool && i < nq; i++)
		if (!q_out(p, &q[i]))
			p->busy[q[i].a] = p->busy[q[i].b] = 1;
	for (int x = 0; !p->npool && x < n; x++)
		if (p->busy[x] && !p->dropped[x])
			p->pool[p->npool++] = x;
	/* the suspect pairs with no suspect node: confirm later */
	p->conf = calloc((size_t)nq + 1, sizeof(*p->conf));
	for (int i = 0; p->conf && i < nq; i++)
		if (q_out(p, &q[i]))
			p->conf[p->nconf++] = (struct conf){ .a = q[i].a,
				                             .b = q[i].b,
				                             .left = CONFS };
done:
	memset(p->busy, 0, (size_t)n);
	free(q);
	free(w);
	free(fail);
}

/* ---- locate ---- */

static int met(const struct cb_accp *p, int x, int y)
{
	for (int i = 0; i < p->lt[x] && i < MAXP; i++)
		if (p->used[x * MAXP + i] == y)
			return 1;
	return 0;
}

static void locate_round(struct cb_accp *p)
{
	int n = p->n;

	p->nb = 0;
	memset(p->busy, 0, (size_t)n);
	for (int k = 0; k < n; k++) {
		int x = (k + p->rot) % n;
		if (!p->suspect[x] || p->lt[x] >= p->need[x] || p->busy[x])
			continue;
		int y = -1;
		for (int j = 0; j < p->npool && y < 0; j++) {
			int c = p->pool[(j + x * 7 + p->rot) % p->npool];
			if (c != x && !p->busy[c] && !p->dropped[c] &&
			    !met(p, x, c))
				y = c;
		}
		if (y < 0) {
			/* nobody free: wait for the next round, unless no
			 * one is left at all */
			int any = 0;
			for (int j = 0; j < p->npool && !any; j++) {
				int c = p->pool[j];
				any = c != x && !p->dropped[c] && !met(p, x, c);
			}
			if (!any)
				p->need[x] = p->lt[x];
			continue;
		}
		p->busy[x] = p->busy[y] = 1;
		put(p, x, y, x);
	}
	p->rot += 13;
}

static int outside_v(const struct cb_accp *p, int ok, double bw)
{
	return !ok || bw < p->res.floor;
}

/* After the locate rounds: ties get two partners more. */
static int tie_break(struct cb_accp *p)
{
	int more = 0;

	for (int x = 0; x < p->n; x++)
		if (p->suspect[x] && !p->tied[x] && p->lt[x] == 3 &&
		    p->lo[x] == 2) {
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
		find(p, dead ? CB_ACCP_DEAD : CB_ACCP_FLAP, x, -1, 0, nf[x],
		     nf[x]);
		p->f[p->nf - 1].first_bad = first[x];
		p->named[x] = 1;
	}
	memset(p->busy, 0, (size_t)n);
	free(nf);
}

static void judge_locate(struct cb_accp *p)
{
	failures(p);
	for (int x = 0; x < p->n; x++) {
		int t = p->lt[x], o = p->lo[x];
		if (!p->suspect[x] || p->named[x] || !t)
			continue;
		int named = t >= 5 ? o >= t - 1 : o == t;
		if (t == 1) /* one partner only: and every quick pair */
			named = o == 1 && p->qt[x] >= 2 && p->qo[x] == p->qt[x];
		if (!named)
			continue;
		double v = median(&p->lv[x * MAXP], t < MAXP ? t : MAXP);
		find(p, CB_ACCP_NODE, x, -1, v, t, o);
		p->named[x] = 1;
	}
	/* what is left to confirm: pairs neither end of which is named */
	int k = 0;
	for (int i = 0; i < p->nconf; i++) {
		struct conf *c = &p->conf[i];
		if (!p->named[c->a] && !p->named[c->b] && !p->dropped[c->a] &&
		    !p->dropped[c->b])
			p->conf[k++] = *c;
	}
	p->nconf = k;
}

/* ---- confirm ---- */

static void confirm_round(struct cb_accp *p)
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
		put(p, c->a, c->b, i);
	}
}

static void judge_confirm(struct cb_accp *p)
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
	/* a node on two or more such paths is the node, not the paths */
	for (int x = 0; x < p->n; x++) {
		double v[2 * MAXP];
		int k = 0, t = 0;
		if (paths[x] < 2)
			continue;
		for (int i = 0; i < p->nconf; i++) {
			struct conf *c = &p->conf[i];
			if (!c->left || (c->a != x && c->b != x))
				continue;
			c->left = 0;
			t += c->tries;
			for (int j = 0; j < CONFS && k < 2 * MAXP; j++)
				v[k++] = c->v[j];
		}
		find(p, CB_ACCP_NODE, x, -1, median(v, k), t, t);
		p->named[x] = 1;
	}
	for (int i = 0; i < p->nconf; i++) {
		struct conf *c = &p->conf[i];
		if (c->left)
			find(p, CB_ACCP_PATH, c->a, c->b, median(c->v, CONFS),
			     c->tries, c->outs);
	}
	free(paths);
}

/* ---- the plan ---- */

static void explain(struct cb_accp *p)
{
	struct cb_accp_result *r = &p->res;
	int npool = 0;

	for (int x = 0; x < p->n; x++)
		npool += p->cleared[x];
	if (p->full)
		snprintf(r->why[CB_ACCP_QUICK], sizeof(r->why[0]),
		         "every pair (%s): %d rounds of the circle method",
		         p->c.full > 0 ? "--pairs all" : "a small cluster",
		         p->quick_rounds);
	else
		snprintf(r->why[CB_ACCP_QUICK], sizeof(r->why[0]),
		         "log2 of %d nodes: each meets a node of the other "
		         "half, quarter, ... of the %s",
		         p->n, p->c.group ? "switches" : "node order");
	snprintf(r->why[CB_ACCP_REPEAT], sizeof(r->why[0]),
	         "the first %d round%s again: %d pairs measured twice give "
	         "the noise",
	         p->nrep, p->nrep == 1 ? "" : "s", p->nfirst);
	snprintf(r->why[CB_ACCP_LOCATE], sizeof(r->why[0]),
	         "%d suspect node%s against %d cleared partners, in parallel",
	         r->suspect_nodes, r->suspect_nodes == 1 ? "" : "s", npool);
	snprintf(r->why[CB_ACCP_CONFIRM], sizeof(r->why[0]),
	         "%d pair%s outside with no node to blame, up to %d times "
	         "more",
	         p->nconf, p->nconf == 1 ? "" : "s", CONFS);
}

int cb_accp_next(struct cb_accp *p, int (*pairs)[2], int *stage)
{
	for (;;) {
		p->nb = 0;
		switch (p->stage) {
		case CB_ACCP_QUICK:
			if (p->r >= p->quick_rounds) {
				p->stage = CB_ACCP_REPEAT;
				p->r = 0;
				continue;
			}
			quick_round(p, p->r++);
			/* the first rounds' pairs, for the repeats: at least
			 * 12 pairs (up to 3 rounds) so the noise is measured
			 * on more than a handful */
			if (p->nrep < 3 && p->nfirst < 12 &&
			    p->nfirst + p->nb <= 2 * p->n) {
				memcpy(p->first + p->nfirst, p->batch,
				       (size_t)p->nb * sizeof(*p->first));
				p->nfirst += p->nb;
				p->rep_at[++p->nrep] = p->nfirst;
			}
			break;
		case CB_ACCP_REPEAT:
			if (p->r < p->nrep) {
				/* quick round r's pairs again, as measured */
				for (int i = p->rep_at[p->r];
				     i < p->rep_at[p->r + 1]; i++)
					put(p, p->first[i][0], p->first[i][1],
					    -1);
				p->r++;
				break;
			}
			judge_quick(p);
			p->stage = CB_ACCP_LOCATE;
			continue;
		case CB_ACCP_LOCATE:
			locate_round(p);
			if (p->nb || tie_break(p))
				break;
			judge_locate(p);
			p->stage = CB_ACCP_CONFIRM;
			continue;
		case CB_ACCP_CONFIRM:
			confirm_round(p);
			if (p->nb)
				break;
			judge_confirm(p);
			explain(p);
			p->stage = CB_ACCP_NSTAGES;
			continue;
		default:
			return 0;
		}
		if (!p->nb)
			continue;
		p->bstage = p->stage;
		p->res.rounds[p->stage]++;
		p->res.pairs[p->stage] += p->nb;
		memcpy(pairs, p->batch, (size_t)p->nb * sizeof(*pairs));
		*stage = p->stage;
		return p->nb;
	}
}

void cb_accp_feed(struct cb_accp *p, const double *bw, const int *ok)
{
	if (p->nm + p->nb > p->capm) {
		int cap = 2 * (p->nm + p->nb) + 64;
		struct cb_accp_meas *m =
		        realloc(p->m, (size_t)cap * sizeof(*m));
		if (!m)
			return;
		p->m = m;
		p->capm = cap;
	}
	for (int i = 0; i < p->nb; i++) {
		int good = ok[i] && bw[i] > 0, w = p->who[i];
		double v = good ? bw[i] : 0;
		p->m[p->nm++] = (struct cb_accp_meas){ .a = p->batch[i][0],
			                               .b = p->batch[i][1],
			                               .stage = p->bstage,
			                               .round = p->total,
			                               .ok = good,
			                               .bw = v };
		if (p->bstage == CB_ACCP_LOCATE && w >= 0) {
			int y = p->batch[i][0] == w ? p->batch[i][1]
			                            : p->batch[i][0];
			if (p->lt[w] < MAXP) {
				p->used[w * MAXP + p->lt[w]] = y;
				p->lv[w * MAXP + p->lt[w]] = v;
			}
			p->lt[w]++;
			p->lo[w] += outside_v(p, good, v);
		} else if (p->bstage == CB_ACCP_CONFIRM && w >= 0) {
			struct conf *c = &p->conf[w];
			c->v[c->tries < CONFS ? c->tries : CONFS - 1] = v;
			c->tries++;
			c->outs += outside_v(p, good, v);
			c->left--;
		}
	}
	p->total++;
	p->nb = 0;
}

const struct cb_accp_result *cb_accp_result(struct cb_accp *p)
{
	p->res.finds = p->f;
	p->res.nfinds = p->nf;
	p->res.meas = p->m;
	p->res.nmeas = p->nm;
	return &p->res;
}
