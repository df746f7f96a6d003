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
 *            median pair; the noise sigma is the repeats' robust spread
 *            (median |ln x1 - ln x2| x 1.4826 / sqrt 2, at least 0.5%),
 *            measured again without nodes whose median pair is below the
 *            tolerance; a pair is outside below ref x min(tolerance,
 *            Q25 / ref x exp(-k sigma)), Q25 the cluster's lower quartile
 *            (healthy pairs that differ widen it by their own spread).
 *            When that is below the tolerance the noise hides faults of
 *            the asked size: a warning, never a host.  The cluster's MAD
 *            is reported;
 *   locate   every node with a pair outside that is not cleared (a node
 *            is cleared with no failure and fewer than half its pairs
 *            outside, and not two) is measured against 3 cleared partners
 *            (6 where a pair failed), those its pairs outside were with
 *            first, all suspects at once where partners are disjoint;
 *            named when every one is outside (4 of 5 after a tie-break at
 *            2 of 3);
 *   confirm  a pair outside neither end of which is named is measured 3
 *            times, what locate measured of it counting: named (the
 *            path) only when all 3 are outside.
 * A node whose pairs failed with two different partners and worked again
 * is flapping; one whose every measurement failed from some round on is
 * dead.  With switches known, a leaf whose pairs to other leaves are
 * outside while those inside it are not is its uplink, once measured
 * again in a probe round after the repeats (to leaves proven at full
 * rate, beside controls); that round also pairs leaves not yet met
 * where the quick tier cannot tell which uplink is slow.  Without, where
 * every pair measured splits the nodes into groups (2 nodes or more
 * each) normal within and outside between, the groups are judged as
 * such leaves: named together, not each host.
 */
#include "acceptance/plan_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acceptance/accept.h"
#include "core/mem.h"

static const char *const stage_names[CB_ACCP_NSTAGES] = { "quick", "repeat",
	                                                  "locate", "confirm" };

const char *cb_accp_stage_name(int s)
{
	return s >= 0 && s < CB_ACCP_NSTAGES ? stage_names[s] : "?";
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
	p->need = calloc((size_t)n, 6 * sizeof(int));
	p->used = calloc((size_t)n * MAXP, sizeof(int));
	p->lv = calloc((size_t)n * (3 * MAXP + 1), sizeof(double));
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
	p->qm = p->need + 5 * n;
	p->ls = p->lv + (size_t)n * MAXP;
	p->lc = p->lv + 2 * (size_t)n * MAXP;
	p->nmed = p->lv + 3 * (size_t)n * MAXP;
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
	cb_free_all(p->order, p->batch, p->first, p->who, p->m, p->f,
	            p->dropped, p->need, p->used, p->lv, p->pool, p->conf,
	            p->redo, p->good, p->igroup, p->cand, p);
}

void cb_accp_drop(struct cb_accp *p, int x)
{
	if (p && x >= 0 && x < p->n)
		p->dropped[x] = 1;
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
			cb_accp_put(p, r2[i][0], r2[i][1], -1);
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
				cb_accp_put(p, x, p->order[o], -1);
			continue;
		}
		/* its partner is past the end: pair it with another such */
		if (left < 0) {
			left = x;
		} else {
			cb_accp_put(p, left, x, -1);
			left = -1;
		}
	}
}

/* The quick rounds that ran busy (their median pair below CB_ACCP_BUSY
 * of the median over rounds): their measurements are set aside and the
 * rounds queued to be measured again.  The number queued. */
static int busy_rounds(struct cb_accp *p)
{
	int nr = p->total, k = 0, nq = 0;
	double *med = calloc((size_t)nr + 1, sizeof(double));
	double *v = calloc((size_t)p->n + 1, sizeof(double));
	int *rr = calloc((size_t)nr + 1, sizeof(int));

	free(p->redo);
	p->redo = rr;
	p->nredo = p->iredo = 0;
	if (!med || !v || !rr)
		goto out;
	for (int r = 0; r < nr; r++) {
		int j = 0;
		for (int i = 0; i < p->nm; i++) {
			const struct cb_accp_meas *e = &p->m[i];
			if (e->round == r && e->stage == CB_ACCP_QUICK &&
			    !e->redone && e->ok && j < p->n)
				v[j++] = e->bw;
		}
		if (j >= 2) /* a round of one pair says nothing */
			med[k] = cb_accp_median(v, j), rr[k++] = r;
	}
	if (k < 3)
		goto out;
	double *all = calloc((size_t)k, sizeof(double));
	if (!all)
		goto out;
	memcpy(all, med, (size_t)k * sizeof(double));
	double mm = cb_accp_median(all, k);
	free(all);
	for (int i = 0; i < k; i++) {
		if (med[i] >= CB_ACCP_BUSY * mm)
			continue;
		double pct = 100 * med[i] / mm;
		if (!p->res.redo_rounds || pct < p->res.redo_pct)
			p->res.redo_pct = pct;
		p->res.redo_rounds++;
		for (int j = 0; j < p->nm; j++)
			if (p->m[j].round == rr[i] &&
			    p->m[j].stage == CB_ACCP_QUICK)
				p->m[j].redone = 1;
		rr[nq++] = rr[i];
	}
	p->nredo = nq;
out:
	free(med);
	free(v);
	return nq;
}

/* The pairs of quick round @r (as measured, set aside) again. */
static void redo_round(struct cb_accp *p, int r)
{
	for (int i = 0; i < p->nm; i++)
		if (p->m[i].round == r && p->m[i].redone &&
		    p->m[i].stage == CB_ACCP_QUICK)
			cb_accp_put(p, p->m[i].a, p->m[i].b, -1);
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
	if (r->redo_rounds) {
		size_t l = strlen(r->why[CB_ACCP_QUICK]);
		snprintf(r->why[CB_ACCP_QUICK] + l, sizeof(r->why[0]) - l,
		         "; %d ran busy (down to %.0f%% of the others) and "
		         "were measured again",
		         r->redo_rounds, r->redo_pct);
	}
	snprintf(r->why[CB_ACCP_REPEAT], sizeof(r->why[0]),
	         "the first %d round%s again: %d pairs measured twice give "
	         "the noise%s",
	         p->nrep, p->nrep == 1 ? "" : "s", p->nfirst,
	         p->nprobe ? "; 1 between leaves: slow uplinks checked beside "
	                     "controls, or leaves not yet met"
	                   : "");
	snprintf(r->why[CB_ACCP_LOCATE], sizeof(r->why[0]),
	         "%d suspect node%s against %d cleared partners, in parallel, "
	         "%d control pairs beside them",
	         r->suspect_nodes, r->suspect_nodes == 1 ? "" : "s", npool,
	         r->ctrl_pairs);
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
			if (p->r >= p->quick_rounds && p->iredo < p->nredo) {
				redo_round(p, p->redo[p->iredo++]);
				break;
			}
			if (p->r >= p->quick_rounds && p->redo_pass < 2 &&
			    (p->redo_pass++, busy_rounds(p)))
				continue;
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
			/* quick round r's pairs again, as measured; twice
			 * over where they are fewer than 12 pairs (4 nodes:
			 * 3 healthy pairs give 9 differences, not 3) */
			if (p->r < p->nrep * (p->nfirst < 12 ? 2 : 1)) {
				int rr = p->r % p->nrep;
				for (int i = p->rep_at[rr];
				     i < p->rep_at[rr + 1]; i++)
					cb_accp_put(p, p->first[i][0],
					            p->first[i][1], -1);
				p->r++;
				break;
			}
			if (!p->probed++ && cb_accp_probe_round(p))
				break;
			cb_accp_judge_quick(p);
			p->stage = CB_ACCP_LOCATE;
			continue;
		case CB_ACCP_LOCATE:
			cb_accp_locate_round(p);
			if (p->nb || cb_accp_tie_break(p))
				break;
			cb_accp_judge_locate(p);
			p->stage = CB_ACCP_CONFIRM;
			continue;
		case CB_ACCP_CONFIRM:
			cb_accp_confirm_round(p);
			if (p->nb)
				break;
			cb_accp_judge_confirm(p);
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
	double scale = p->bstage >= CB_ACCP_LOCATE
	                       ? cb_accp_round_scale(p, bw, ok)
	                       : 1;

	for (int i = 0; i < p->nb; i++) {
		int good = ok[i] && bw[i] > 0, w = p->who[i];
		double v = good ? bw[i] : 0;
		p->m[p->nm++] = (struct cb_accp_meas){
			.a = p->batch[i][0],
			.b = p->batch[i][1],
			.stage = p->bstage,
			.round = p->total,
			.ok = good,
			.bw = v,
			.suspect = p->bstage >= CB_ACCP_LOCATE && w >= 0,
			/* (the repeats' last round, after them) */
			.probe = p->bstage == CB_ACCP_REPEAT && p->probed
		};
		if (p->bstage == CB_ACCP_LOCATE && w >= 0) {
			int y = p->batch[i][0] == w ? p->batch[i][1]
			                            : p->batch[i][0];
			if (p->lt[w] < MAXP) {
				p->used[w * MAXP + p->lt[w]] = y;
				p->lv[w * MAXP + p->lt[w]] = v;
				p->ls[w * MAXP + p->lt[w]] =
				        scale > 0 ? v / scale : v;
				p->lc[w * MAXP + p->lt[w]] = p->rscale;
			}
			p->lt[w]++;
			p->lo[w] += cb_accp_outside(p, good, v, scale);
		} else if (p->bstage == CB_ACCP_CONFIRM && w >= 0) {
			struct conf *c = &p->conf[w];
			c->left--;
			c->v[c->tries < CONFS ? c->tries : CONFS - 1] = v;
			c->tries++;
			c->outs += cb_accp_outside(p, good, v, scale);
		}
	}
	p->total++;
	p->nb = 0;
}

const struct cb_accp_result *cb_accp_verdict(struct cb_accp *p)
{
	p->res.finds = p->f;
	p->res.nfinds = p->nf;
	p->res.group = p->c.group;
	p->res.meas = p->m;
	p->res.nmeas = p->nm;
	return &p->res;
}
