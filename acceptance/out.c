/* SPDX-License-Identifier: MIT */
/*
 * acceptance/out.c - what rank 0 makes of acceptance's figures beside the
 * pairs: the collectives' and the burn's judgement and summaries (its
 * windows: --window), the run object's facts, the outputs (stdout and
 * every -O file) and the exit status.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acceptance/accept.h"
#include "bench/cli.h"
#include "core/strbuf.h"
#include "cb_config.h"
#include "core/log.h"
#include "reports/results.h"
#include "topo/topo.h"

void cb_acc_judge_colls(struct cb_acc *a)
{
	for (int i = 0; i < a->ncolls && !a->shared_cores[0]; i++) {
		const struct cb_acc_coll *c = &a->colls[i];
		if (c->wrong)
			cb_acc_find(a, CB_ACC_COLLECTIVES, "job", -1, -1,
			            "%s (%s): %llu wrong values over %d ranks",
			            c->coll, c->algo,
			            (unsigned long long)c->wrong, c->ranks);
		else if (c->model_busbw_gbps > 0 &&
		         c->busbw_gbps <
		                 a->set.coll_tolerance * c->model_busbw_gbps)
			cb_acc_find(
			        a, CB_ACC_COLLECTIVES, "job", -1, -1,
			        "%s (%s): busbw %.3g GB/s, %.0f%% of the %.3g "
			        "GB/s the measured links predict (alpha-beta "
			        "model of the median pair)",
			        c->coll, c->algo, c->busbw_gbps,
			        100 * c->busbw_gbps / c->model_busbw_gbps,
			        c->model_busbw_gbps);
	}
	size_t n = 0;
	char *s = a->stage[CB_ACC_COLLECTIVES].summary;
	for (int i = 0; i < a->ncolls; i++)
		cb_buf_appendf(s, sizeof(a->stage[0].summary), &n,
		               "%s%s busbw %.3g GB/s (model %.3g)",
		               i ? "; " : "", a->colls[i].coll,
		               a->colls[i].busbw_gbps,
		               a->colls[i].model_busbw_gbps);
	if (a->shared_cores[0])
		cb_buf_appendf(s, sizeof(a->stage[0].summary), &n,
		               "; not judged against the model: %s",
		               a->shared_cores);
}

/* One burn pass's summary, from rank 0's record. */
void cb_acc_pass_summary(struct cb_acc *a, double t, double allreduce)
{
	struct cb_acc_pass *p =
	        realloc(a->passes, (size_t)(a->npasses + 1) * sizeof(*p));
	double *bw = calloc((size_t)a->npairs + 1, sizeof(double));
	double *lat = calloc((size_t)a->npairs + 1, sizeof(double));
	int k = 0;
	char why[160];

	if (!p || !bw || !lat) {
		free(bw);
		free(lat);
		if (p)
			a->passes = p;
		return;
	}
	a->passes = p;
	p = &a->passes[a->npasses++];
	memset(p, 0, sizeof(*p));
	p->t_s = t;
	p->allreduce_busbw_gbps = allreduce;
	p->min_bw_gbps = INFINITY;
	p->min_a = p->min_b = -1;
	p->bw_gbps = calloc((size_t)a->npairs + 1, sizeof(double));
	for (int i = 0; i < a->npairs; i++) {
		const struct cb_acc_pair *q = &a->pairs[i];
		if (!q->ok) {
			p->failed_pairs++;
			continue;
		}
		bw[k] = cb_acc_pair_bw(q);
		if (p->bw_gbps)
			p->bw_gbps[i] = bw[k];
		lat[k] = q->lat_p50_us;
		if (bw[k] < p->min_bw_gbps) {
			p->min_bw_gbps = bw[k];
			p->min_a = q->a;
			p->min_b = q->b;
		}
		p->slow_pairs += cb_acc_outside(a, q, why, sizeof(why));
		k++;
	}
	p->median_bw_gbps = cb_acc_median(bw, k);
	p->median_lat_us = cb_acc_median(lat, k);
	if (!k)
		p->min_bw_gbps = 0;
	free(bw);
	free(lat);
}

/* Each pair's median over the passes that measured it (0 where fewer than
 * CB_ACC_SELF_PASSES did; *cnt how many), and the passes' spread: 1.4826 x
 * the median |log(bw / the pair's median)| over every pair and pass, a
 * robust sigma of a pair's pass-to-pass change.  0 when no pass kept its
 * pairs' figures. */
static double self_medians(const struct cb_acc *a, double *med, int *cnt)
{
	size_t cap = (size_t)a->npasses * (size_t)a->npairs + 1;
	double *v = calloc((size_t)a->npasses + 1, sizeof(double));
	double *d = calloc(cap, sizeof(double));
	double sigma = 0;
	int nd = 0;

	for (int i = 0; v && d && i < a->npairs; i++) {
		int k = 0;
		for (int j = 0; j < a->npasses; j++)
			if (a->passes[j].bw_gbps && a->passes[j].bw_gbps[i] > 0)
				v[k++] = a->passes[j].bw_gbps[i];
		cnt[i] = k;
		med[i] = k >= CB_ACC_SELF_PASSES ? cb_acc_median(v, k) : 0;
		for (int j = 0; med[i] > 0 && j < a->npasses; j++)
			if (a->passes[j].bw_gbps && a->passes[j].bw_gbps[i] > 0)
				d[nd++] = fabs(
				        log(a->passes[j].bw_gbps[i] / med[i]));
	}
	if (nd)
		sigma = 1.4826 * cb_acc_median(d, nd);
	free(v);
	free(d);
	return sigma;
}

/* A link slow only while the collectives ran: a pass's allreduce below
 * CB_ACC_SELF_DROP of its median over the burn's passes and CB_ACC_SELF_Z
 * sigmas of their spread (or of the pairs', if wider), while that pass's pairs
 * may all be within.  A finding for the window the pass began in, naming no
 * host (a ring's time is its slowest link's, and which one it was the
 * collective cannot say). */
static void judge_colls_at_times(struct cb_acc *a, double sigma)
{
	double *v = calloc((size_t)a->npasses + 1, sizeof(double));
	int k = 0;

	for (int i = 0; v && i < a->npasses; i++)
		if (a->passes[i].allreduce_busbw_gbps > 0)
			v[k++] = a->passes[i].allreduce_busbw_gbps;
	if (k < CB_ACC_SELF_PASSES) {
		free(v);
		return;
	}
	double m = cb_acc_median(v, k);
	for (int i = 0; i < k; i++)
		v[i] = fabs(log(v[i] / m));
	double sc = 1.4826 * cb_acc_median(v, k);
	free(v);
	if (sc < sigma)
		sc = sigma;
	double drop = fmax(CB_ACC_SELF_Z * sc, -log(CB_ACC_SELF_DROP));
	for (int i = 0; i < a->npasses; i++) {
		const struct cb_acc_pass *p = &a->passes[i];
		double c = p->allreduce_busbw_gbps;
		if (c <= 0 || log(c / m) >= -drop)
			continue;
		struct cb_acc_window *w =
		        &a->windows[(int)(p->t0_s / a->set.window_s)];
		w->outside = 1;
		cb_acc_find(
		        a, CB_ACC_BURN, "job", -1, -1,
		        "window %.0f-%.0f s: the allreduce of the pass from "
		        "%.1f to %.1f s at %.3g GB/s busbw, %.0f%% of its "
		        "median %.3g GB/s over %d passes (passes vary by "
		        "%.0f%%): a link slow at times, while the "
		        "collectives ran",
		        w->t0_s, w->t1_s, p->t0_s, p->t_s, c, 100 * c / m, m, k,
		        100 * (exp(sc) - 1));
	}
}

void cb_acc_judge_windows(struct cb_acc *a)
{
	double W = a->set.window_s,
	       floor = a->noise.have ? a->noise.floor_gbps
	                             : a->set.bw_tolerance * a->ref_bw_gbps;
	int nw;

	if (W <= 0 || !a->npasses)
		return;
	if (a->set.expect_bw_gbps > floor)
		floor = a->set.expect_bw_gbps;
	nw = (int)(a->passes[a->npasses - 1].t0_s / W) + 1;
	double *med = calloc((size_t)a->npairs + 1, sizeof(double));
	int *cnt = calloc((size_t)a->npairs + 1, sizeof(int));
	if (!med || !cnt ||
	    !(a->windows = calloc((size_t)nw, sizeof(*a->windows)))) {
		free(med);
		free(cnt);
		return;
	}
	/* "Slow at times" is a pair below its own usual rate: under half of
	 * it (CB_ACC_SELF_DROP), and by more than CB_ACC_SELF_Z sigmas of the
	 * passes' own spread.  A pair a little slower in every pass (a host
	 * whose cores are busier) is not a link slow at times; a pair slow
	 * throughout is the pairwise stage's to name. */
	double sigma = self_medians(a, med, cnt);
	double drop = fmax(CB_ACC_SELF_Z * sigma, -log(CB_ACC_SELF_DROP));
	a->nwindows = nw;
	for (int w = 0; w < nw; w++)
		a->windows[w] = (struct cb_acc_window){
			.t0_s = w * W, .t1_s = (w + 1) * W, .a = -1, .b = -1
		};
	for (int i = 0; i < a->npasses; i++) {
		const struct cb_acc_pass *p = &a->passes[i];
		struct cb_acc_window *w = &a->windows[(int)(p->t0_s / W)];
		int x = p->min_a, y = p->min_b, self = -1;
		double bw = p->min_bw_gbps, r = 0;
		w->failed += p->failed_pairs;
		/* with the pairs' figures: the pair furthest below its own
		 * median (@self, its index), where one is judged so */
		for (int j = 0; p->bw_gbps && j < a->npairs; j++) {
			double rj = med[j] > 0 ? p->bw_gbps[j] / med[j] : 0;
			if (rj > 0 && (self < 0 || rj < r)) {
				self = j;
				r = rj;
			}
		}
		if (self >= 0) {
			x = a->pairs[self].a;
			y = a->pairs[self].b;
			bw = p->bw_gbps[self];
		}
		if (x < 0)
			continue;
		int better =
		        w->a < 0 ||
		        (self >= 0 ? !w->self_passes || r < w->self_ratio
		                   : !w->self_passes && bw < w->min_bw_gbps);
		if (!better)
			continue;
		w->a = x;
		w->b = y;
		w->min_bw_gbps = bw;
		w->median_bw_gbps = p->median_bw_gbps;
		w->pass_t0_s = p->t0_s;
		w->pass_t1_s = p->t_s;
		w->self_ratio = self >= 0 ? r : 0;
		w->self_passes = self >= 0 ? cnt[self] : 0;
	}
	free(med);
	free(cnt);
	judge_colls_at_times(a, sigma);
	for (int i = 0; i < nw; i++) {
		struct cb_acc_window *w = &a->windows[i];
		int low = w->a >= 0 && w->min_bw_gbps < floor;
		if (w->self_passes)
			low = low && log(w->self_ratio) < -drop;
		w->outside = w->outside || w->failed || low;
		if (!(w->failed || low) || w->a < 0)
			continue;
		char self[160] = "";
		if (w->self_passes)
			snprintf(self, sizeof(self),
			         " and %.0f%% of its own median over %d passes "
			         "(a pair's passes vary by %.0f%%)",
			         100 * w->self_ratio, w->self_passes,
			         100 * (exp(sigma) - 1));
		cb_acc_find(
		        a, CB_ACC_BURN, "path", a->nodes[w->a].host,
		        a->nodes[w->b].host,
		        "window %.0f-%.0f s: its slowest pair %s - %s at "
		        "%.3g GB/s (the pass from %.1f to %.1f s), %.0f%% of "
		        "that pass's median %.3g GB/s%s, below %.3g GB/s (the "
		        "pairwise stage's floor)%s: a link that is slow at "
		        "times",
		        w->t0_s, w->t1_s, a->nodes[w->a].name,
		        a->nodes[w->b].name, w->min_bw_gbps, w->pass_t0_s,
		        w->pass_t1_s,
		        w->median_bw_gbps > 0
		                ? 100 * w->min_bw_gbps / w->median_bw_gbps
		                : 0,
		        w->median_bw_gbps, self, floor,
		        w->failed ? "; some pairs failed" : "");
	}
}

int cb_acc_exit(cb_status_t st)
{
	int rc = cb_cli_exit(st);

	/* cb_cli_exit's 1 is a job that stopped: it could not run */
	return rc == 1 ? CB_ACC_EXIT_NORUN : rc;
}

/* Rank 0 writes every output. */
int cb_acc_outputs(const struct cb_acc_opts *o, struct cb_acc *a)
{
	int rc = a->fail ? CB_ACC_EXIT_FAIL : CB_ACC_EXIT_PASS;

	for (int i = 0; i < o->nout; i++) {
		FILE *f = o->out[i].path ? fopen(o->out[i].path, "w") : stdout;
		cb_status_t st;
		int no_plot = 0;
		if (!f) {
			fprintf(stderr,
			        "collbench acceptance: cannot write %s\n",
			        o->out[i].path);
			rc = CB_ACC_EXIT_NORUN;
			continue;
		}
		switch (o->out[i].kind) {
		case CB_ACC_OUT_JSON:
			st = cb_acc_write_json(f, a);
			break;
		case CB_ACC_OUT_CSV:
			st = cb_acc_write_csv(f, a);
			break;
		case CB_ACC_OUT_XML:
			st = cb_acc_write_junit(f, a);
			break;
		case CB_ACC_OUT_HTML:
			st = cb_acc_write_html(f, a, &no_plot);
			if (no_plot)
				fprintf(stderr,
				        "collbench acceptance: gnuplot is not "
				        "on "
				        "PATH: %s has no heatmap\n",
				        o->out[i].path ? o->out[i].path
				                       : "the page");
			break;
		default:
			st = cb_acc_write_table(f, a);
		}
		if (f != stdout && fclose(f) && !st)
			st = cb_fail(CB_ERR_SYS, "cannot write %s",
			             o->out[i].path);
		if (st) {
			fprintf(stderr, "collbench acceptance: %s\n",
			        cb_fail_msg() ? cb_fail_msg() : "write failed");
			cb_fail_clear();
			rc = CB_ACC_EXIT_NORUN;
		}
	}
	return rc;
}

void cb_acc_meta(struct cb_comm *c, const struct cb_acc_opts *o,
                 struct cb_acc *a, struct cb_results_meta *m,
                 struct cb_run_info *ri, char *host_names, size_t bytes)
{
	extern char **environ;
	size_t n = 0;

	host_names[0] = '\0';
	for (int h = 0; h < c->nhosts; h++)
		cb_buf_appendf(host_names, bytes, &n, "%s%s", h ? ", " : "",
		               c->hosts[h]);
	*ri = (struct cb_run_info){
		.colls = "allreduce, alltoall",
		.algo = "ring,pairwise",
		.transport = a->set.transport,
		.ranks = c->world,
		.hosts = c->nhosts,
		.host_names = host_names,
		.iters = 5,
		.warmup = 2,
		.check = 1,
		.alpha_us = a->ref_lat_us,
		.beta_gbps = a->ref_bw_gbps,
		.model_source = "acceptance: the median pair's latency and "
		                "bandwidth",
		.binding = cb_topo_job_binding(c->topo),
		.inventory = cb_topo_job_inventory(c->topo),
	};
	*m = (struct cb_results_meta){
		.argc = o->argc,
		.argv = o->argv,
		.build = CB_BUILD_INFO,
		.start = (long long)time(NULL),
		.ri = ri,
		.hosts = c->hosts,
		.nhosts = c->nhosts,
		.topo = c->topo,
		.env = environ,
	};
	a->meta = m;
}

/* The passes' spread, sigma of ln(median pair) from one pass to the
 * next, with whatever trend they have taken out: the smaller of what the
 * differences of neighbours say (a step moves one of them) and, with 5
 * passes or more, what the second differences say (a steady slide moves
 * none of them); @v scratch of npasses. */
static double pass_sigma(const struct cb_acc *a, double *v)
{
	int n = a->npasses, k = 0;
	double l[3], s1, s2 = INFINITY;

	for (int i = 0; i + 1 < n; i++) {
		double x = a->passes[i].median_bw_gbps,
		       y = a->passes[i + 1].median_bw_gbps;
		if (x > 0 && y > 0)
			v[k++] = fabs(log(y / x));
	}
	s1 = 1.4826 * cb_acc_median(v, k) / sqrt(2.0);
	k = 0;
	for (int i = 0; n >= 5 && i + 2 < n; i++) {
		int ok = 1;
		for (int j = 0; j < 3; j++) {
			double x = a->passes[i + j].median_bw_gbps;
			ok &= x > 0;
			l[j] = ok ? log(x) : 0;
		}
		if (ok)
			v[k++] = fabs(l[2] - 2 * l[1] + l[0]);
	}
	if (k >= 3)
		s2 = 1.4826 * cb_acc_median(v, k) / sqrt(6.0);
	return fmax(fmin(s1, s2), 0.01);
}

void cb_acc_judge_drift(struct cb_acc *a)
{
	int n = a->npasses, third = (n + 2) / 3, k = 0;
	double *v = calloc((size_t)n + 1, sizeof(double));
	double early, late = 0;

	if (!v || n < 2) {
		free(v);
		return;
	}
	/* the first third's median; the last third's best pass (one busy
	 * pass at the end is not a drift) */
	for (int i = 0; i < third; i++)
		if (a->passes[i].median_bw_gbps > 0)
			v[k++] = a->passes[i].median_bw_gbps;
	early = k ? cb_acc_median(v, k) : 0;
	for (int i = n - third; i < n; i++)
		late = fmax(late, a->passes[i].median_bw_gbps);
	if (early <= 0 || late <= 0 || late >= a->set.bw_tolerance * early) {
		free(v);
		return;
	}
	if (n < CB_ACC_DRIFT_PASSES) {
		free(v);
		cb_acc_warn(
		        a, CB_ACC_BURN,
		        "the median pair's bandwidth fell from %.3g to %.3g "
		        "GB/s between the first and the last of %d passes: "
		        "too few to tell a drift from a busy moment (a "
		        "longer --duration can)",
		        early, late, n);
		return;
	}
	double sigma = pass_sigma(a, v);
	free(v);
	/* a median of m passes varies by about 1.25 sigma / sqrt(m) */
	double allow = CB_ACC_SELF_Z * 1.25 * sigma * sqrt(2.0 / third);
	if (log(early / late) <= allow)
		return;
	cb_acc_find(a, CB_ACC_BURN, "job", -1, -1,
	            "the median pair's bandwidth drifted from %.3g GB/s (the "
	            "first %d passes) to %.3g GB/s at best (the last %d), "
	            "%.0f%% of it over %d passes, beyond the passes' own "
	            "spread (%.1f%%)",
	            early, third, late, third, 100 * late / early, n,
	            100 * sigma);
}
