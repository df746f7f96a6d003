/* SPDX-License-Identifier: MIT */
/*
 * bench/report.c - the human table (nccl-tests' layout, plus an algorithm
 * column and the spread of the iterations) and the CSV whose columns
 * scripts rely on: never reorder them, only append.
 */
#include "bench/report.h"

#include <string.h>

double cb_algbw_gbps(size_t bytes, double time_us)
{
	return time_us > 0 ? (double)bytes / (time_us * 1e3) : 0.0;
}

double cb_busbw(double algbw_gbps, double factor)
{
	return algbw_gbps * factor;
}

void cb_report_header(FILE *f, enum cb_format fmt, const struct cb_run_info *ri)
{
	if (fmt == CB_FMT_JSON)
		return; /* written whole at the end (reports/results.h) */
	if (fmt == CB_FMT_CSV) {
		/* The foundation's 14 columns, then what came later. */
		fputs("collective,algo,transport,dtype,op,ranks,hosts,bytes,"
		      "count,inplace,time_us,algbw_gbps,busbw_gbps,wrong,"
		      "algo_model_us,time_min_us,time_p50_us,time_p99_us,"
		      "time_max_us,slowest_rank,root\n",
		      f);
		fflush(f);
		return;
	}
	fprintf(f,
	        "# collbench %s: %s, algorithm %s, transport %s, %d rank%s on "
	        "%d host%s (%s)\n",
	        CB_VERSION, ri->colls, ri->algo, ri->transport, ri->ranks,
	        ri->ranks == 1 ? "" : "s", ri->hosts, ri->hosts == 1 ? "" : "s",
	        ri->host_names);
	fprintf(f,
	        "# time: mean of %d iterations after %d warm-up, averaged "
	        "across ranks; %s\n",
	        ri->iters, ri->warmup,
	        ri->check ? "results checked bit-exact (#wrong)"
	                  : "results not checked (-c 0)");
	fprintf(f,
	        "# min/p50/p99/max: per-iteration times (min of the ranks' "
	        "minima, median of their\n#   medians, max of their p99s and "
	        "maxima); slow: the rank with the largest mean\n");
	fprintf(f,
	        "# model: alpha %.3g us, beta %.3g GB/s, gamma %.3g GB/s "
	        "(%s)\n",
	        ri->alpha_us, ri->beta_gbps, ri->gamma_gbps, ri->model_source);
	if (ri->binding)
		fprintf(f, "# binding: %s\n", ri->binding);
	for (const char *p = ri->inventory; p && *p;) {
		int n = (int)strcspn(p, "\n");
		fprintf(f, "# inventory: %.*s\n", n, p);
		p += n + (p[n] == '\n');
	}
	fflush(f);
}

void cb_report_section(FILE *f, enum cb_format fmt,
                       const struct cb_section *sec)
{
	if (fmt == CB_FMT_CSV || fmt == CB_FMT_JSON)
		return;
	fprintf(f, "#\n# %s on %d rank%s, %d host%s (%s)\n", sec->coll,
	        sec->ranks, sec->ranks == 1 ? "" : "s", sec->hosts,
	        sec->hosts == 1 ? "" : "s", sec->members);
	fprintf(f,
	        "# algbw = size / time; busbw = algbw * %s (%s; = %.3g here); "
	        "GB/s = 1e9 bytes/s\n",
	        sec->busbw_formula, sec->coll, sec->busbw_factor);
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
	        "(B)", "(elements)", "", "", "", "", "(us)", "(GB/s)", "(GB/s)",
	        "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(us)", "(us)",
	        "(us)", "(us)", "rank");
	fflush(f);
}

static void csv_row(FILE *f, const struct cb_row *r)
{
	fprintf(f,
	        "%s,%s,%s,%s,%s,%d,%d,%zu,%zu,%d,%.3f,%.4f,%.4f,%llu,%.3f,"
	        "%.3f,%.3f,%.3f,%.3f,%d,%d\n",
	        r->coll, r->algo, r->transport, cb_dtype_name(r->dtype), r->op,
	        r->ranks, r->hosts, r->bytes, r->count, r->inplace, r->time_us,
	        r->algbw_gbps, r->busbw_gbps, (unsigned long long)r->wrong,
	        r->model_us, r->min_us, r->p50_us, r->p99_us, r->max_us,
	        r->slowest, r->root);
}

void cb_report_point(FILE *f, enum cb_format fmt, const struct cb_row *rows,
                     int n)
{
	const struct cb_row *r = &rows[0];

	if (fmt == CB_FMT_JSON)
		return;
	if (fmt == CB_FMT_CSV) {
		for (int i = 0; i < n; i++)
			csv_row(f, &rows[i]);
		fflush(f);
		return;
	}
	char root[16] = "-";
	if (r->root >= 0)
		snprintf(root, sizeof(root), "%d", r->root);
	fprintf(f, "  %10zu %12zu %8s %6s %4s %13s", r->bytes, r->count,
	        cb_dtype_name(r->dtype), r->op, root, r->algo);
	for (int i = 0; i < 2; i++) {
		if (i < n)
			fprintf(f, " %10.2f %7.3f %7.3f %6llu", rows[i].time_us,
			        rows[i].algbw_gbps, rows[i].busbw_gbps,
			        (unsigned long long)rows[i].wrong);
		else
			fprintf(f, " %10s %7s %7s %6s", "n/a", "", "", "");
	}
	fprintf(f, " %9.2f %9.2f %9.2f %9.2f %9.2f %4d\n", r->model_us,
	        r->min_us, r->p50_us, r->p99_us, r->max_us, r->slowest);
	fflush(f);
}

void cb_report_footer(FILE *f, enum cb_format fmt, uint64_t wrong,
                      double avg_busbw_gbps)
{
	if (fmt == CB_FMT_CSV || fmt == CB_FMT_JSON)
		return;
	fprintf(f, "# Wrong values: %llu %s\n", (unsigned long long)wrong,
	        wrong ? "FAILED" : "OK");
	fprintf(f, "# Avg bus bandwidth: %.3f GB/s\n", avg_busbw_gbps);
	fprintf(f, "#\n");
	fflush(f);
}
