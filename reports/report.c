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

void cb_report_header(FILE *f, enum cb_format fmt, const struct cb_run_info *ri)
{
	if (fmt == CB_FMT_CSV)
		cb_csv_header(f);
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
                      double avg_busbw_gbps)
{
	if (fmt == CB_FMT_TABLE)
		cb_table_footer(f, wrong, avg_busbw_gbps);
}
