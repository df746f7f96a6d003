/* SPDX-License-Identifier: MIT */
/*
 * reports/report.c - the writers by format: each call goes to the table
 * (reports/table.c) or the CSV (reports/csv.c); JSON is written whole at
 * the end of a run (reports/run.c), so it has nothing to do here.
 */
#include "reports/report.h"

double cb_algbw_gbps(size_t bytes, double time_us)
{
	return time_us > 0 ? (double)bytes / (time_us * 1e3) : 0.0;
}

double cb_busbw(double algbw_gbps, double factor)
{
	return algbw_gbps * factor;
}

void cb_rows_to_gbits(struct cb_row *rows, int n)
{
	for (int i = 0; i < n; i++) {
		rows[i].algbw_gbps *= CB_GBITS_PER_GBPS;
		rows[i].busbw_gbps *= CB_GBITS_PER_GBPS;
	}
}

void cb_report_header(FILE *f, enum cb_format fmt, const struct cb_run_info *ri)
{
	if (fmt == CB_FMT_CSV)
		cb_csv_header(f, ri->gbits);
	else if (fmt == CB_FMT_TABLE)
		cb_table_header(f, ri);
}

void cb_report_section(FILE *f, enum cb_format fmt,
                       const struct cb_section *sec)
{
	if (fmt == CB_FMT_TABLE)
		cb_table_section(f, sec);
}

void cb_report_point(FILE *f, enum cb_format fmt, const struct cb_row *rows,
                     int n)
{
	if (fmt == CB_FMT_CSV) {
		for (int i = 0; i < n; i++)
			cb_csv_row(f, &rows[i]);
		fflush(f);
	} else if (fmt == CB_FMT_TABLE) {
		cb_table_point(f, rows, n);
	}
}

void cb_report_footer(FILE *f, enum cb_format fmt, uint64_t wrong,
                      double avg_busbw, int gbits)
{
	if (fmt == CB_FMT_TABLE)
		cb_table_footer(f, wrong, avg_busbw, gbits);
}

void cb_report_counters(FILE *f, enum cb_format fmt,
                        const struct cb_port_delta *d, int n)
{
	int errors = 0;

	if (fmt != CB_FMT_TABLE || n == 0)
		return;
	fprintf(f, "# port counters, change over the run (per host and "
	           "port; data in 4-byte words as IB counts):\n");
	for (int i = 0; i < n; i++) {
		if (!d[i].delta && !d[i].is_error)
			continue;
		if (d[i].is_error && d[i].delta) {
			errors++;
			continue;
		}
		if (!d[i].is_error)
			fprintf(f, "#   %s %s %s %+lld\n", d[i].host, d[i].dev,
			        d[i].name, (long long)d[i].delta);
	}
	for (int i = 0; i < n; i++)
		if (d[i].is_error && d[i].delta)
			fprintf(f,
			        "# ERROR counter moved: %s %s %s %+lld (check "
			        "the cable, port and switch)\n",
			        d[i].host, d[i].dev, d[i].name,
			        (long long)d[i].delta);
	if (!errors)
		fprintf(f, "#   error counters: none moved\n");
}
