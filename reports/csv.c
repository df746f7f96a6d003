/* SPDX-License-Identifier: MIT */
/*
 * reports/csv.c - the CSV whose columns scripts rely on: the foundation's
 * 14 first, then what came later.  Never reorder them, only append.
 */
#include <inttypes.h>
#include <math.h>

#include "reports/report.h"

void cb_csv_header(FILE *f, int gbits)
{
	/* --report_gbits: the same columns in Gb/s, named so */
	fprintf(f,
	        "collective,algo,transport,dtype,op,ranks,hosts,bytes,"
	        "count,inplace,time_us,%s,%s,wrong,"
	        "algo_model_us,time_min_us,time_p50_us,time_p99_us,"
	        "time_max_us,slowest_rank,root,push_per_s,pull_per_s,"
	        "staleness_p50,staleness_p99,staleness_max,iters\n",
	        gbits ? "algbw_gbits" : "algbw_gbps",
	        gbits ? "busbw_gbits" : "busbw_gbps");
	fflush(f);
}

void cb_csv_row(FILE *f, const struct cb_row *r)
{
	fprintf(f,
	        "%s,%s,%s,%s,%s,%d,%d,%" PRIu64 ",%" PRIu64
	        ",%d,%.3f,%.4f,%.4f,%" PRIu64 ",%.3f,"
	        "%.3f,%.3f,%.3f,%.3f,%d,%d",
	        r->coll, r->algo, r->transport, r->dtype, r->op, r->ranks,
	        r->hosts, r->bytes, r->count, r->inplace, r->time_us,
	        r->algbw_gbps, r->busbw_gbps, r->wrong, r->model_us, r->min_us,
	        r->p50_us, r->p99_us, r->max_us, r->slowest, r->root);
	/* parameter-server columns: empty where they do not apply */
	const double v[] = { r->push_per_s, r->pull_per_s, r->stale_p50,
		             r->stale_p99, r->stale_max };
	for (int i = 0; i < 5; i++)
		if (isnan(v[i]))
			fputc(',', f);
		else
			fprintf(f, i < 2 ? ",%.1f" : ",%.0f", v[i]);
	if (r->iters)
		fprintf(f, ",%" PRIu64 "\n", r->iters);
	else
		fputs(",\n", f);
}
