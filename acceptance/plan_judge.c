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

/* ---- the judge of the quick tier ---- */

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
		if (!cb_accp_q_out(p, &q[i]) || q[i].fails ||
		    cb_accp_uplink_pair(p, q[i].a, q[i].b))
			continue;
		for (int s = 0; s < 2; s++) {
			int x = s ? q[i].b : q[i].a, y = s ? q[i].a : q[i].b;
			ex[x] += tot[y] >= 3 && out[y] == tot[y] &&
			         !p->dropped[y];
		}
	}
}

int cb_accp_probe_round(struct cb_accp *p)
{
	int nq = 0;
	struct qpair *q = cb_accp_quick_pairs(p, &nq, 0);
	double *w =
	        calloc(3 * (size_t)nq + 2 * (size_t)p->n + 2, sizeof(double));

	unsigned char *cand = calloc((size_t)p->n, 1);
	int any = 0;

	if (q && w && cand) {
		cb_accp_noise(p, q, nq, w);
		/* no switches: the groups so far, found again after */
		cb_accp_infer_groups(p, q, nq);
		/* with switches: the uplinks the quick tier would name,
		 * measured again beside controls (then forgotten) */
		int nf = p->nf;
		if (!p->igroup && p->c.group) {
			cb_accp_uplinks(p, q, nq, NULL, 0, w);
			for (int x = 0; x < p->n; x++)
				if (p->named[x] == 2) {
					any = cand[p->c.group[x]] = 1;
					p->named[x] = 0;
				}
			p->nf = nf;
			p->res.leaves_unknown = 0;
		}
		cb_accp_leaf_probe(p, q, nq, any ? cand : NULL, w);
		if (p->igroup) {
			free(p->igroup);
			p->igroup = NULL;
			p->c.group = NULL;
			p->res.group_inferred = 0;
		}
	}
	free(q);
	free(w);
	if (p->nb && any)
		p->cand = cand;
	else
		free(cand);
	p->nprobe = p->nb;
	return p->nb;
}

void cb_accp_judge_quick(struct cb_accp *p)
{
	int nq = 0, na = 0, np = 0, n = p->n;
	struct qpair *q = cb_accp_quick_pairs(p, &nq, 0);
	/* the probe round's pairs: for the leaves alone (@qp), and the
	 * groups found without switches (@qa, with the quick tier's) */
	struct qpair *qa =
	        p->nprobe && !p->c.group ? cb_accp_quick_pairs(p, &na, 1) : q;
	struct qpair *qp = p->nprobe ? cb_accp_quick_pairs(p, &np, 2) : q;
	double *w = calloc(3 * (size_t)(nq + p->nprobe) + 2 * (size_t)n + 2,
	                   sizeof(double));
	int *tot = p->qt, *out = p->qo;
	int *fail = calloc(2 * (size_t)n, sizeof(int)), *ex = fail + n;
	unsigned char *slowx = calloc((size_t)n, 1);

	if (!q || !qa || !qp || !w || !fail || !slowx)
		goto done;
	na = qa != q ? na : nq;
	cb_accp_noise(p, q, nq, w);
	cb_accp_infer_groups(p, qa, na);
	cb_accp_uplinks(p, q, nq, qp, np, w);
	/* pairs below a gap across leaves, but no uplink named once
	 * measured again beside controls: rounds across leaves that ran
	 * busy, the cluster's own spread after all (64 hosts in leaves of
	 * 8 under busy phases: the floor above them made every host a
	 * suspect, 63 locate rounds) */
	int named_up = 0;
	for (int x = 0; x < n; x++)
		named_up |= p->named[x] == 2;
	if (p->res.low_cut > 0 && !named_up) {
		p->no_cut = 1;
		cb_accp_noise(p, q, nq, w);
		p->res.low_busy = 1;
	}
	for (int i = 0; i < nq; i++) {
		int o = cb_accp_q_out(p, &q[i]);
		int up = cb_accp_uplink_pair(p, q[i].a, q[i].b);
		for (int s = 0; s < 2; s++) {
			int x = s ? q[i].b : q[i].a;
			/* a host behind an uplink named slow is judged on its
			 * pairs inside its leaf: those across are the
			 * uplink's (a slow host there was missed before), as
			 * are its partners' across but where they failed
			 * (a flapping link's evidence) */
			if (up && (p->named[x] == 2 || !q[i].fails))
				continue;
			tot[x]++;
			out[x] += o;
			fail[x] += q[i].fails > 0;
		}
		p->res.suspect_pairs += o;
	}
	explained(p, q, nq, ex);
	for (int x = 0; x < n; x++) {
		int behind = p->named[x] == 2 || p->res.leaves_unknown;
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
	cb_accp_all_below(p, slowx, p->allb);
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
		if (cb_accp_q_out(p, &q[i]) &&
		    (q[i].fails || !cb_accp_uplink_pair(p, q[i].a, q[i].b)))
			p->conf[p->nconf++] = (struct conf){ .a = q[i].a,
				                             .b = q[i].b,
				                             .left = CONFS };
done:
	memset(p->busy, 0, (size_t)n);
	if (qa != q)
		free(qa);
	if (qp != q)
		free(qp);
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
		    cb_accp_uplink_pair(p, x, z))
			continue;
		for (int j = 0; j < p->npool; j++)
			if (p->pool[j] == z)
				return z;
	}
	return -1;
}

/* Whether leaves are not given (none, or found by the judge), or @x was
 * located against a partner of its own leaf. */
static int inside_partner(const struct cb_accp *p, int x)
{
	const int *g = p->c.group;

	if (!g || p->igroup)
		return 1;
	for (int i = 0; i < p->lt[x] && i < MAXP; i++)
		if (g[p->used[x * MAXP + i]] == g[x])
			return 1;
	return 0;
}

/* With switches given, a cleared partner in @x's own leaf free this
 * round, while @x has none there yet, or -1: a host is not named on
 * partners behind uplinks alone (at 256 hosts with 2 slow uplinks and
 * busy phases, where the noise hid the uplinks, 1116 good hosts behind
 * them were named in 200 simulated runs on partners in other leaves). */
static int leaf_partner(const struct cb_accp *p, int x)
{
	const int *g = p->c.group;

	if (inside_partner(p, x))
		return -1;
	for (int j = 0; j < p->npool; j++) {
		int c = p->pool[(j + x * 7 + p->rot) % p->npool];
		if (c != x && g[c] == g[x] && !p->busy[c] && !p->dropped[c] &&
		    !met(p, x, c))
			return c;
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
		int y = leaf_partner(p, x);
		if (y < 0)
			y = conf_partner(p, x);
		for (int j = 0; j < p->npool && y < 0; j++) {
			int c = p->pool[(j + x * 7 + p->rot) % p->npool];
			if (c != x && !p->busy[c] && !p->dropped[c] &&
			    !met(p, x, c) && !cb_accp_uplink_pair(p, x, c))
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
				      !cb_accp_uplink_pair(p, x, c);
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

/* Whether locate names @x (*@below: the floor of all below it was held
 * to, 0 by the single floor); @skip: n bytes of scratch. */
static int locate_names(struct cb_accp *p, int x, unsigned char *skip,
                        double *below)
{
	int t = p->lt[x], o = p->lo[x];
	double fl[MAXP + 1];

	*below = 0;
	if (!p->suspect[x] || p->named[x] == 1 || !t)
		return 0;
	int named = t >= 5 ? o >= t - 1 : o == t;
	if (t == 1) /* one partner only: and every quick pair */
		named = o == 1 && p->qt[x] >= 2 && p->qo[x] == p->qt[x];
	/* or 3 or more, each scaled by its round's controls, all below the
	 * floor that many together are held to */
	int mt = t < MAXP ? t : MAXP;
	if (!named && mt >= 3) {
		/* its floor from every measurement of the nodes not named,
		 * but its own: another suspect's pairs stay in (a good host
		 * held by the screen keeps the sample large enough at 8
		 * nodes; a bad one only lowers the floor) */
		for (int y = 0; y < p->n; y++)
			skip[y] = p->named[y] || p->dropped[y] || y == x;
		cb_accp_all_below(p, skip, fl);
		double hi = 0;
		for (int i = 0; i < mt; i++)
			hi = fmax(hi, p->ls[x * MAXP + i]);
		if (fl[mt] > 0 && hi < p->res.ref * fl[mt])
			named = 1, *below = fl[mt];
	}
	return named;
}

/* Switches given: @x was measured against partners in other leaves
 * alone, and none in its own leaf was cleared to be one (all suspects:
 * a leaf behind a slow uplink the quick tier's noise hid looks so).  Its
 * uplink and its cable are not told apart: not named (at 256 hosts with
 * 2 slow uplinks under busy phases, 1116 good hosts in 200 simulated
 * runs were). */
static int untold(const struct cb_accp *p, int x)
{
	const int *g = p->c.group;
	int mates = 0;

	if (inside_partner(p, x))
		return 0;
	for (int j = 0; j < p->npool; j++)
		if (p->pool[j] != x && g[p->pool[j]] == g[x])
			return 0;
	for (int y = 0; y < p->n && !mates; y++)
		mates = y != x && g[y] == g[x];
	return mates;
}

void cb_accp_judge_locate(struct cb_accp *p)
{
	unsigned char *skip = calloc((size_t)p->n, 1);

	failures(p);
	for (int x = 0; skip && x < p->n; x++) {
		double below;
		if (!locate_names(p, x, skip, &below))
			continue;
		if (untold(p, x)) {
			p->res.untold++;
			continue;
		}
		int t = p->lt[x], mt = t < MAXP ? t : MAXP;
		double v = cb_accp_median(&p->lv[x * MAXP], mt);
		int had = p->nf;
		cb_accp_find(p, CB_ACCP_NODE, x, -1, v, t, p->lo[x]);
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
