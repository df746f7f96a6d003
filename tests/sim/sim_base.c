/* SPDX-License-Identifier: MIT */
/*
 * tests/sim/sim_base.c - collbench-accept-sim --baseline-drop F: the real
 * baseline judge (acceptance/baseline.c) over the modelled fabric.  Each
 * run plans and measures the same fabric (same seed: the same cables)
 * twice: healthy, which becomes the baseline, then with the run's faults
 * and every cable's rate cut by F (a whole-fabric regression the
 * cluster's own median cannot see).  Each run's pairs (the best of their
 * measurements, as the real tool keeps them) and its measured noise make
 * the record the judge reads; its findings are scored against the truth.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acceptance/accept.h"
#include "acceptance/plan.h"
#include "sim.h"

static int by_pair(const void *x, const void *y)
{
	const struct cb_accp_meas *a = x, *b = y;

	return a->a != b->a ? (a->a > b->a) - (a->a < b->a)
	                    : (a->b > b->b) - (a->b < b->b);
}

/* The record of one planned run over @s: nodes and hosts "h0"..., each
 * pair once with its best measurement, the noise the plan measured. */
static struct cb_acc *record_of(struct cb_accsim *s, int n, double tol,
                                const int *group)
{
	struct cb_accp_cfg pc = { .n = n, .group = group, .tolerance = tol };
	struct cb_accp *p = cb_accp_new(&pc);
	struct cb_acc *a = calloc(1, sizeof(*a));
	int(*pairs)[2] = malloc(((size_t)n / 2 + 1) * sizeof(*pairs));
	double *bw = malloc(((size_t)n / 2 + 1) * sizeof(double));
	int *ok = malloc(((size_t)n / 2 + 1) * sizeof(int)), np, stage;
	struct cb_accp_meas *m = NULL;

	if (!p || !a || !pairs || !bw || !ok)
		goto fail;
	while ((np = cb_accp_next(p, pairs, &stage)) > 0) {
		cb_accsim_round(s, pairs, np, bw, ok);
		cb_accp_feed(p, bw, ok);
	}
	const struct cb_accp_result *r = cb_accp_verdict(p);
	a->set = (struct cb_acc_settings){ .transport = "sim",
		                           .bw_tolerance = tol,
		                           .bw_bytes = 1 << 20 };
	a->noise = (struct cb_acc_noise){ .have = 1,
		                          .sigma = r->sigma,
		                          .sigma_rep = r->sigma_rep,
		                          .k = r->k,
		                          .floor_gbps = r->floor,
		                          .vary_pct = r->vary_pct };
	a->nhosts = a->nnodes = a->ranks = n;
	a->hosts = calloc((size_t)n, sizeof(*a->hosts));
	a->nodes = calloc((size_t)n, sizeof(*a->nodes));
	a->pairs = calloc((size_t)r->nmeas + 1, sizeof(*a->pairs));
	m = malloc(((size_t)r->nmeas + 1) * sizeof(*m));
	if (!a->hosts || !a->nodes || !a->pairs || !m)
		goto fail;
	for (int x = 0; x < n; x++) {
		snprintf(a->hosts[x].name, sizeof(a->hosts[x].name), "h%d", x);
		snprintf(a->nodes[x].name, sizeof(a->nodes[x].name), "h%d", x);
		a->nodes[x].host = a->nodes[x].rank = x;
	}
	memcpy(m, r->meas, (size_t)r->nmeas * sizeof(*m));
	qsort(m, (size_t)r->nmeas, sizeof(*m), by_pair);
	for (int i = 0; i < r->nmeas; i++) {
		struct cb_acc_pair *q = &a->pairs[a->npairs - 1];
		if (!a->npairs || q->a != m[i].a || q->b != m[i].b) {
			q = &a->pairs[a->npairs++];
			*q = (struct cb_acc_pair){ .a = m[i].a, .b = m[i].b };
		} else {
			q->remeasured = 1; /* measured more than once */
		}
		if (m[i].ok && m[i].bw > q->bw_ab_gbps) {
			q->ok = 1;
			q->bw_ab_gbps = q->bw_ba_gbps = m[i].bw;
		}
	}
	free(m);
	cb_accp_free(p);
	free(pairs);
	free(bw);
	free(ok);
	return a;
fail:
	free(m);
	cb_accp_free(p);
	free(pairs);
	free(bw);
	free(ok);
	if (a)
		cb_acc_free(a);
	free(a);
	return NULL;
}

/* The baseline the judge would read from @a's JSON. */
static struct cb_acc_base *base_of(const struct cb_acc *a)
{
	struct cb_acc_base *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	snprintf(b->path, sizeof(b->path), "healthy");
	b->nnames = b->nhosts = a->nnodes;
	b->npairs = a->npairs;
	b->bw_bytes = a->set.bw_bytes;
	b->sigma_rep = a->noise.sigma_rep;
	b->names = calloc((size_t)a->nnodes, sizeof(*b->names));
	b->hosts = calloc((size_t)a->nnodes, sizeof(*b->hosts));
	b->pairs = calloc((size_t)a->npairs + 1, sizeof(*b->pairs));
	if (!b->names || !b->hosts || !b->pairs) {
		cb_acc_base_free(b);
		return NULL;
	}
	for (int x = 0; x < a->nnodes; x++) {
		snprintf(b->names[x], sizeof(b->names[x]), "%s",
		         a->nodes[x].name);
		snprintf(b->hosts[x], sizeof(b->hosts[x]), "%s",
		         a->hosts[x].name);
	}
	for (int i = 0; i < a->npairs; i++)
		b->pairs[i] = (struct cb_acc_base_pair){
			.a = a->pairs[i].a,
			.b = a->pairs[i].b,
			.bw_gbps = cb_acc_pair_bw(&a->pairs[i]),
		};
	return b;
}

int cb_accsim_base_run(const struct cb_accsim_cfg *c, double tol, double drop,
                       double base_tol, const int *group,
                       struct cb_accsim_base_score *sc)
{
	struct cb_accsim_cfg h = *c, f = *c;
	struct cb_accsim *sh, *sf = NULL;
	struct cb_acc *ah = NULL, *af = NULL;
	struct cb_acc_base *b = NULL;
	int rc = 2;

	memset(sc, 0, sizeof(*sc));
	memset(h.faults, 0, sizeof(h.faults));
	f.rate *= 1 - drop;
	if (!(sh = cb_accsim_new(&h)) || !(sf = cb_accsim_new(&f)) ||
	    !(ah = record_of(sh, c->n, tol, group)) ||
	    !(af = record_of(sf, c->n, tol, group)) || !(b = base_of(ah)))
		goto out;
	af->set.baseline_tolerance = base_tol;
	cb_acc_judge_base(af, b);
	sc->compared = af->base.compared;
	sc->ratio = af->base.ratio;
	for (int i = 0; i < af->nfindings; i++) {
		const struct cb_acc_finding *k = &af->findings[i];
		int bad = 0;
		if (!strcmp(k->kind, "job"))
			sc->fabric = 1;
		else
			for (int e = 0; e < 2; e++) {
				int x = e ? k->hb : k->ha;
				bad |= x >= 0 &&
				       cb_accsim_host_fault(sf, x) >= 0;
			}
		sc->false_alarms += strcmp(k->kind, "job") && !bad;
		sc->named += strcmp(k->kind, "job") && bad;
	}
	/* a fabric named where it did not drop is a false alarm too */
	sc->false_alarms += sc->fabric && drop <= 0;
	for (int i = 0; i < af->nwarnings; i++)
		sc->cannot_tell |=
		        strstr(af->warnings[i].line, "cannot be told") !=
		                NULL &&
		        strstr(af->warnings[i].line, "baseline") != NULL;
	for (int i = 0; i < af->nfindings && sc->lines < 3; i++)
		snprintf(sc->line[sc->lines++], sizeof(sc->line[0]), "%.200s",
		         af->findings[i].line);
	rc = 0;
out:
	cb_accsim_free(sh);
	cb_accsim_free(sf);
	if (ah)
		cb_acc_free(ah);
	if (af)
		cb_acc_free(af);
	free(ah);
	free(af);
	cb_acc_base_free(b);
	return rc;
}
