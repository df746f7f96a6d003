/* SPDX-License-Identifier: MIT */
/*
 * reports/table.c - the human table: nccl-tests' layout, plus an algorithm
 * column, the model's prediction and the spread of the iterations; and the
 * scaling summary after a --ranks/--nodes sweep.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "cb_config.h"
#include "reports/report.h"

/* Each line of @text (none when NULL) after @prefix. */
static void each_line(FILE *f, const char *prefix, const char *text)
{
	for (const char *p = text; p && *p;) {
		int n = (int)strcspn(p, "\n");
		fprintf(f, "%s%.*s\n", prefix, n, p);
		p += n + (p[n] == '\n');
	}
}

void cb_table_header(FILE *f, const struct cb_run_info *ri)
{
	fprintf(f,
	        "# collbench %s: %s, algorithm %s, transport %s, %d rank%s on "
	        "%d host%s (%s)\n",
	        CB_VERSION, ri->colls, ri->algo, ri->transport, ri->ranks,
	        ri->ranks == 1 ? "" : "s", ri->hosts, ri->hosts == 1 ? "" : "s",
	        ri->host_names);
	const char *across = ri->across ? ri->across : "averaged across ranks";
	const char *check = ri->check ? "results checked bit-exact (#wrong)"
	                              : "results not checked (-c 0)";
	if (ri->duration_s > 0)
		fprintf(f,
		        "# time: mean of the iterations that fill %g s per "
		        "point (-D; counted after %d warm-up,\n#   rank 0 "
		        "decides, each row's count follows it), %s; %s\n",
		        ri->duration_s, ri->warmup, across, check);
	else
		fprintf(f,
		        "# time: mean of %d iterations after %d warm-up, %s; "
		        "%s\n",
		        ri->iters, ri->warmup, across, check);
	if (ri->touch)
		fprintf(f, "# --touch: between timed calls each rank rewrites "
		           "the input and reads the result\n#   (not timed), "
		           "as an application step would\n");
	fprintf(f,
	        "# min/p50/p99/max: per-iteration times (min of the ranks' "
	        "minima, median of their\n#   medians, max of their p99s and "
	        "maxima); slow: the rank with the largest mean\n");
	fprintf(f,
	        "# model: alpha %.3g us, beta %.3g GB/s, gamma %.3g GB/s "
	        "(%s)\n",
	        ri->alpha_us, ri->beta_gbps, ri->gamma_gbps, ri->model_source);
	if (ri->auto_source)
		fprintf(f, "# auto: %s\n", ri->auto_source);
	each_line(f, "# transport ", ri->transport_detail);
	if (ri->binding)
		fprintf(f, "# binding: %s\n", ri->binding);
	each_line(f, "# inventory: ", ri->inventory);
	each_line(f, "# gpu paths: ", ri->gpu_paths);
	if (ri->mem_kind)
		fprintf(f,
		        "# memory: buffers in %s memory (--mem %s); fill, "
		        "poison and checks on host shadows, untimed\n",
		        strcmp(ri->mem_kind, "gpu") ? ri->mem_kind : "device",
		        ri->mem_kind);
	each_line(f, "# memory: ", ri->memory);
	fflush(f);
}

void cb_table_section(FILE *f, const struct cb_section *sec)
{
	const char *bw = sec->gbits ? "(Gb/s)" : "(GB/s)";

	fprintf(f, "#\n# %s on %d rank%s, %d host%s (%s)\n", sec->coll,
	        sec->ranks, sec->ranks == 1 ? "" : "s", sec->hosts,
	        sec->hosts == 1 ? "" : "s", sec->members);
	fprintf(f,
	        "# algbw = size / time; busbw = algbw * %s (%s; = %.3g here); "
	        "%s\n",
	        sec->busbw_formula, sec->coll, sec->busbw_factor,
	        sec->gbits ? "Gb/s = 1e9 bits/s (--report_gbits)"
	                   : "GB/s = 1e9 bytes/s");
	if (sec->ps_servers > 0)
		fprintf(f,
		        "# ps: the last %d rank%s serve only: no input of "
		        "their "
		        "own, left out of ps's times and of its busbw's n "
		        "(%d)\n",
		        sec->ps_servers, sec->ps_servers == 1 ? "" : "s",
		        sec->ranks - sec->ps_servers);
	fprintf(f, "# %63s %-33s %-33s\n", "", "out-of-place",
	        sec->has_inplace ? "in-place" : "");
	fprintf(f,
	        "# %10s %12s %8s %6s %4s %13s %10s %7s %7s %6s %10s %7s %7s "
	        "%6s %9s %9s %9s %9s %9s %4s\n",
	        "size", "count", "type", "redop", "root", "algo", "time",
	        "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong",
	        "model", "min", "p50", "p99", "max", "slow");
	fprintf(f,
	        "# %10s %12s %8s %6s %4s %13s %10s %7s %7s %6s %10s %7s %7s "
	        "%6s %9s %9s %9s %9s %9s %4s\n",
	        "(B)", "(elements)", "", "", "", "", "(us)", bw, bw, "", "(us)",
	        bw, bw, "", "(us)", "(us)", "(us)", "(us)", "(us)", "rank");
	fflush(f);
}

void cb_table_point(FILE *f, const struct cb_row *rows, int n)
{
	const struct cb_row *r = &rows[0];
	char root[16] = "-";

	if (r->root >= 0)
		snprintf(root, sizeof(root), "%d", r->root);
	fprintf(f, "  %10" PRIu64 " %12" PRIu64 " %8s %6s %4s %13s", r->bytes,
	        r->count, r->dtype, r->op, root, r->algo);
	for (int i = 0; i < 2; i++) {
		if (i < n)
			fprintf(f, " %10.2f %7.3f %7.3f %6" PRIu64,
			        rows[i].time_us, rows[i].algbw_gbps,
			        rows[i].busbw_gbps, rows[i].wrong);
		else
			fprintf(f, " %10s %7s %7s %6s", "n/a", "", "", "");
	}
	fprintf(f, " %9.2f %9.2f %9.2f %9.2f %9.2f %4d\n", r->model_us,
	        r->min_us, r->p50_us, r->p99_us, r->max_us, r->slowest);
	if (n == 2 && strcmp(rows[1].algo, r->algo))
		fprintf(f,
		        "#   in place: %s (auto's pick for a call in place)\n",
		        rows[1].algo);
	if (!isnan(r->push_per_s))
		fprintf(f,
		        "#   %s: per worker %.0f pushes/s and %.0f pulls/s; "
		        "staleness (updates from other workers a copy lacked "
		        "when used) p50 %.0f, p99 %.0f, max %.0f\n",
		        r->algo, r->push_per_s, r->pull_per_s, r->stale_p50,
		        r->stale_p99, r->stale_max);
	fflush(f);
}

void cb_table_footer(FILE *f, uint64_t wrong, double avg_busbw, int gbits)
{
	fprintf(f, "# Wrong values: %" PRIu64 " %s\n", wrong,
	        wrong ? "FAILED" : "OK");
	fprintf(f, "# Avg bus bandwidth: %.3f %s\n", avg_busbw,
	        gbits ? "Gb/s" : "GB/s");
	fprintf(f, "#\n");
	fflush(f);
}

void cb_report_scaling(FILE *f, struct cb_scale_pt *pts, int n, int by_hosts,
                       int gbits)
{
	if (n == 0)
		return;
	fprintf(f,
	        "#\n# Scaling (busbw%s, out of place, first dtype/op; "
	        "efficiency against the smallest group\n# that moves data)\n",
	        gbits ? " in Gb/s" : "");
	/* grouped by collective and algorithm, groups in order (the points
	 * arrive in group order; an insertion sort keeps it) */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0; j--) {
			struct cb_scale_pt *x = &pts[j - 1], *y = &pts[j];
			int before = y->coll_order < x->coll_order ||
			             (y->coll_order == x->coll_order &&
			              strcmp(y->algo, x->algo) < 0);
			if (!before)
				break;
			struct cb_scale_pt t = *x;
			*x = *y;
			*y = t;
		}
	fprintf(f, "# %-14s %-13s %6s %12s %10s %10s\n", "collective", "algo",
	        by_hosts ? "hosts" : "ranks", "size (B)", "busbw",
	        "efficiency");
	for (int i = 0; i < n; i++) {
		struct cb_scale_pt *p = &pts[i], *base = NULL;
		/* the smallest group with a bandwidth (one rank moves
		 * nothing: its busbw is 0 by definition) */
		for (int j = 0; j < n; j++)
			if (pts[j].coll_order == p->coll_order &&
			    !strcmp(pts[j].algo, p->algo) &&
			    pts[j].busbw_gbps > 0 &&
			    (!base || pts[j].k < base->k))
				base = &pts[j];
		int k = by_hosts ? p->hosts : p->k;
		char eff[16] = "-";
		if (base && p->busbw_gbps > 0)
			snprintf(eff, sizeof(eff), "%.1f%%",
			         100.0 * p->busbw_gbps / base->busbw_gbps);
		fprintf(f, "  %-14s %-13s %6d %12zu %10.3f %10s\n", p->coll,
		        p->algo, k, p->bytes,
		        p->busbw_gbps * (gbits ? CB_GBITS_PER_GBPS : 1), eff);
	}
	fflush(f);
}
