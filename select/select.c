/* SPDX-License-Identifier: MIT */
/*
 * select/select.c - which algorithms run at each point (select/select.h).
 *
 * --algo auto takes every algorithm that implements the collective on
 * this group (ps with dedicated servers only by name: it changes what is
 * measured; ps-async never: it is not one call) and, at each size, the
 * one `collbench tune` measured fastest for this job's shape
 * (select/tuning.h), or, for a shape the table does not hold, the one
 * whose alpha-beta-gamma model (coll/, with the parameters of
 * select/calibrate.c) is fastest.
 */
#include "select/select.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/log.h"

cb_status_t cb_select_candidates(const struct cb_select *s, int quiet,
                                 struct cb_cands *cd)
{
	const struct cb_opts *o = s->o;
	int explicit_one = o->algo_mode != CB_ALGO_AUTO && o->nalgos == 1;

	cd->n = 0;
	cd->skipped[0] = 0;
	if (o->algo_mode == CB_ALGO_AUTO) {
		for (int i = 0; cb_algos[i] && cd->n < CB_MAX_CAND; i++) {
			const struct cb_algo *a = cb_algos[i];
			const char *why;
			if (!a->colls || !cb_algo_does(a, s->coll) ||
			    (a->flags & CB_ALGO_NAMED_ONLY))
				continue;
			if (a->refuse &&
			    (why = a->refuse(s->coll, s->n, o->ps_servers))) {
				snprintf(cd->skipped, sizeof(cd->skipped),
				         "%s on %d ranks: %s",
				         cb_coll_name(s->coll), s->n, why);
				continue;
			}
			/* ps's dedicated servers change what is measured:
			 * only when asked for by name */
			if (!strcmp(a->name, "ps") && o->ps_servers > 0)
				continue;
			cd->a[cd->n] = a;
			cd->lo[cd->n] = 0;
			cd->hi[cd->n] = SIZE_MAX;
			cd->n++;
		}
		return CB_OK;
	}
	for (int i = 0; i < o->nalgos && cd->n < CB_MAX_CAND; i++) {
		const struct cb_algo *a = o->algos[i].algo;
		const char *why;
		if (!cb_algo_does(a, s->coll))
			continue;
		if (a->refuse &&
		    (why = a->refuse(s->coll, s->n, o->ps_servers))) {
			if (explicit_one && !o->ranks && !o->nodes)
				return cb_fail(CB_ERR_USAGE,
				               "%s %s on %d ranks: %s", a->name,
				               cb_coll_name(s->coll), s->n,
				               why);
			snprintf(cd->skipped, sizeof(cd->skipped),
			         "%s %s on %d ranks: %s", a->name,
			         cb_coll_name(s->coll), s->n, why);
			if (s->log && !quiet)
				cb_log(CB_LOG_WARN, "skipping %s", cd->skipped);
			continue;
		}
		cd->a[cd->n] = a;
		cd->lo[cd->n] = o->algos[i].lo;
		cd->hi[cd->n] = o->algos[i].hi;
		cd->n++;
	}
	return CB_OK;
}

double cb_select_model_us(const struct cb_select *s, const struct cb_algo *a,
                          size_t bytes)
{
	if (!a->model_us || s->m->beta_gbps <= 0)
		return 0.0;
	return cb_algo_model_us(a, s->coll, bytes, s->n, s->o->ps_servers,
	                        s->m->alpha_us, s->m->beta_gbps,
	                        cb_coll_reduces(s->coll) ? s->m->gamma_gbps
	                                                 : 0.0);
}

/* The measured fastest of the candidates at the table's point nearest
 * @bytes for this shape; -1 when the table has no say. */
static int table_pick(const struct cb_select *s, const struct cb_cands *cd,
                      size_t bytes, int inplace, double *best_us)
{
	struct cb_tuning_shape sh = {
		.coll = cb_coll_name(s->coll),
		.transport = s->transport,
		.ranks = s->n,
		.hosts = s->hosts,
	};
	const struct cb_tuning_point *p;
	int best = -1;

	if (!s->tab || !(p = cb_tuning_find(s->tab, &sh, bytes)))
		return -1;
	/* in place: the in-place times, when tune measured them */
	const double *t = p->time_us;
	for (int k = 0; inplace && k < p->nalgos; k++)
		if (p->inplace_us[k] > 0)
			t = p->inplace_us;
	for (int i = 0; i < cd->n; i++)
		for (int k = 0; k < p->nalgos; k++)
			if (t[k] > 0 && !strcmp(p->algo[k], cd->a[i]->name) &&
			    (best < 0 || t[k] < *best_us)) {
				best = i;
				*best_us = t[k];
			}
	/* (an in-place pick without in-place times is the same: said once) */
	if (best >= 0 && s->o->verbose && s->log &&
	    (!inplace || t == p->inplace_us)) {
		char alt[512] = "";
		for (int k = 0; k < p->nalgos; k++)
			if (t[k] > 0 && strcmp(p->algo[k], cd->a[best]->name))
				snprintf(alt + strlen(alt),
				         sizeof(alt) - strlen(alt), "%s%s %.3g",
				         alt[0] ? ", " : "", p->algo[k], t[k]);
		cb_log(CB_LOG_INFO,
		       "auto: %s %zu B%s on %d ranks -> %s (tuned at %zu B%s: "
		       "%.3g us measured; %s; model %.3g us)",
		       cb_coll_name(s->coll), bytes, inplace ? " in place" : "",
		       s->n, cd->a[best]->name, p->bytes,
		       t == p->inplace_us ? " in place" : "", *best_us, alt,
		       cb_select_model_us(s, cd->a[best], bytes));
	}
	return best;
}

int cb_select_pick(const struct cb_select *s, const struct cb_cands *cd,
                   size_t bytes, int inplace, int *idx)
{
	const struct cb_opts *o = s->o;
	int n = 0;

	if (o->algo_mode == CB_ALGO_LIST || s->coll == CB_COLL_PINGPONG ||
	    s->tune) {
		for (int i = 0; i < cd->n; i++)
			idx[n++] = i;
		return n;
	}
	if (o->algo_mode == CB_ALGO_RANGES) {
		for (int i = 0; i < cd->n; i++)
			if (bytes >= cd->lo[i] &&
			    (bytes < cd->hi[i] ||
			     (cd->hi[i] == SIZE_MAX && bytes == SIZE_MAX))) {
				idx[n++] = i;
				break;
			}
		return n;
	}
	/* auto: the table's fastest, else the model's */
	int best = -1;
	double bt = 0;
	if ((best = table_pick(s, cd, bytes, inplace, &bt)) >= 0) {
		idx[n++] = best;
		return n;
	}
	for (int i = 0; i < cd->n; i++) {
		double t = cb_select_model_us(s, cd->a[i], bytes);
		if (!cd->a[i]->model_us)
			continue;
		if (best < 0 || t < bt) {
			best = i;
			bt = t;
		}
	}
	if (best < 0)
		return 0;
	idx[n++] = best;
	if (o->verbose && s->log && !inplace) {
		char alt[256] = "";
		for (int i = 0; i < cd->n; i++)
			if (i != best)
				snprintf(
				        alt + strlen(alt),
				        sizeof(alt) - strlen(alt), "%s%s %.3g",
				        alt[0] ? ", " : "", cd->a[i]->name,
				        cb_select_model_us(s, cd->a[i], bytes));
		cb_log(CB_LOG_INFO,
		       "auto: %s %zu B on %d ranks -> %s (model %.3g us; %s)",
		       cb_coll_name(s->coll), bytes, s->n, cd->a[best]->name,
		       bt, alt);
	}
	return n;
}
