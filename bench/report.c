/* SPDX-License-Identifier: MIT */
/*
 * bench/report.c - the human table (nccl-tests' layout) and the CSV whose
 * columns scripts rely on: never reorder them, only append.
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
	if (fmt == CB_FMT_CSV) {
		fputs("collective,algo,transport,dtype,op,ranks,hosts,bytes,"
		      "count,inplace,time_us,algbw_gbps,busbw_gbps,wrong\n",
		      f);
		fflush(f);
		return;
	}
	fprintf(f,
	        "# collbench %s: %s, algorithm %s, transport %s, %d rank%s on "
	        "%d host%s (%s)\n",
	        CB_VERSION, ri->coll, ri->algo, ri->transport, ri->ranks,
	        ri->ranks == 1 ? "" : "s", ri->hosts, ri->hosts == 1 ? "" : "s",
	        ri->host_names);
	fprintf(f,
	        "# time: mean of %d iterations after %d warm-up, averaged "
	        "across ranks; %s\n",
	        ri->iters, ri->warmup,
	        ri->check ? "results checked bit-exact (#wrong)"
	                  : "results not checked (-c 0)");
	fprintf(f,
	        "# algbw = size / time; busbw = algbw * %s (%s; = %.3g here); "
	        "GB/s = 1e9 bytes/s\n",
	        ri->busbw_formula, ri->coll, ri->busbw_factor);
	if (ri->binding)
		fprintf(f, "# binding: %s\n", ri->binding);
	for (const char *p = ri->inventory; p && *p;) {
		int n = (int)strcspn(p, "\n");
		fprintf(f, "# inventory: %.*s\n", n, p);
		p += n + (p[n] == '\n');
	}
	fprintf(f, "#\n");
	fprintf(f, "# %50s %-33s %s\n", "", "out-of-place", "in-place");
	fprintf(f, "# %10s %12s %8s %6s %10s %7s %7s %6s %10s %7s %7s %6s\n",
	        "size", "count", "type", "redop", "time", "algbw", "busbw",
	        "#wrong", "time", "algbw", "busbw", "#wrong");
	fprintf(f, "# %10s %12s %8s %6s %10s %7s %7s %6s %10s %7s %7s %6s\n",
	        "(B)", "(elements)", "", "", "(us)", "(GB/s)", "(GB/s)", "",
	        "(us)", "(GB/s)", "(GB/s)", "");
	fflush(f);
}

static void csv_row(FILE *f, const struct cb_row *r)
{
	fprintf(f, "%s,%s,%s,%s,%s,%d,%d,%zu,%zu,%d,%.3f,%.4f,%.4f,%llu\n",
	        r->coll, r->algo, r->transport, cb_dtype_name(r->dtype),
	        cb_op_name(r->op), r->ranks, r->hosts, r->bytes, r->count,
	        r->inplace, r->time_us, r->algbw_gbps, r->busbw_gbps,
	        (unsigned long long)r->wrong);
}

void cb_report_size(FILE *f, enum cb_format fmt, const struct cb_row rows[2])
{
	if (fmt == CB_FMT_CSV) {
		csv_row(f, &rows[0]);
		csv_row(f, &rows[1]);
	} else {
		fprintf(f, "  %10zu %12zu %8s %6s", rows[0].bytes,
		        rows[0].count, cb_dtype_name(rows[0].dtype),
		        cb_op_name(rows[0].op));
		for (int i = 0; i < 2; i++)
			fprintf(f, " %10.2f %7.3f %7.3f %6llu", rows[i].time_us,
			        rows[i].algbw_gbps, rows[i].busbw_gbps,
			        (unsigned long long)rows[i].wrong);
		fputc('\n', f);
	}
	fflush(f);
}

void cb_report_footer(FILE *f, enum cb_format fmt, uint64_t wrong,
                      double avg_busbw_gbps)
{
	if (fmt == CB_FMT_CSV)
		return;
	fprintf(f, "# Wrong values: %llu %s\n", (unsigned long long)wrong,
	        wrong ? "FAILED" : "OK");
	fprintf(f, "# Avg bus bandwidth: %.3f GB/s\n", avg_busbw_gbps);
	fprintf(f, "#\n");
	fflush(f);
}
