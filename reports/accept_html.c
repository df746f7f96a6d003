/* SPDX-License-Identifier: MIT */
/*
 * reports/accept_html.c - the acceptance section of the HTML report, drawn
 * from a results document's "acceptance" member (so `collbench report`
 * on a saved run draws what `acceptance -O x.html` drew): a verdict banner,
 * the stages, the findings, a heatmap of pair bandwidth (gnuplot, inline
 * PNG; rows send to columns) and the same figures as a table.
 */
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "reports/markup.h"
#include "reports/results.h"

static json_object *get(json_object *o, const char *k)
{
	json_object *v = NULL;

	if (!o || !json_object_object_get_ex(o, k, &v))
		return NULL;
	return v;
}

static const char *gstr(json_object *o, const char *k)
{
	json_object *v = get(o, k);

	return v && json_object_is_type(v, json_type_string)
	               ? json_object_get_string(v)
	               : "";
}

static double gnum(json_object *o, const char *k)
{
	json_object *v = get(o, k);

	return v && (json_object_is_type(v, json_type_double) ||
	             json_object_is_type(v, json_type_int))
	               ? json_object_get_double(v)
	               : NAN;
}

static int garr(json_object *o, const char *k, json_object **arr)
{
	*arr = get(o, k);
	return *arr && json_object_is_type(*arr, json_type_array)
	               ? (int)json_object_array_length(*arr)
	               : 0;
}

int cb_acc_html_failed(json_object *acc)
{
	return !strcmp(gstr(acc, "verdict"), "FAIL");
}

/* The pair-bandwidth matrix: [i * n + j] = i sends to j, NaN none. */
static double *bw_matrix(json_object *acc, int n)
{
	json_object *pairs;
	int np = garr(acc, "pairs", &pairs);
	double *m = malloc((size_t)n * n * sizeof(double) + 1);

	if (!m)
		return NULL;
	for (int i = 0; i < n * n; i++)
		m[i] = NAN;
	for (int i = 0; i < np; i++) {
		json_object *p = json_object_array_get_idx(pairs, (size_t)i);
		int a = (int)gnum(p, "a"), b = (int)gnum(p, "b");
		if (a < 0 || b < 0 || a >= n || b >= n)
			continue;
		m[a * n + b] = gnum(p, "bw_ab_gbps");
		m[b * n + a] = gnum(p, "bw_ba_gbps");
	}
	return m;
}

static void gp_quote(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++)
		fputs(*s == '\'' ? "''" : (char[2]){ *s, 0 }, f);
	fputc('\'', f);
}

/* Draw the heatmap; 0 when gnuplot is missing or fails (@note says). */
static int heatmap(FILE *f, json_object *nodes, int n, const double *m,
                   char *note, size_t bytes)
{
	char exe[4096], dir[4096], path[4200];
	const char *tmp = getenv("TMPDIR");
	int ok = 0;

	if (!cb_gnuplot_find(exe, sizeof(exe))) {
		snprintf(note, bytes,
		         "gnuplot is not on PATH (Debian: apt install "
		         "gnuplot-nox): no heatmap");
		return 0;
	}
	snprintf(dir, sizeof(dir), "%s/collbench-accept-XXXXXX",
	         tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		snprintf(note, bytes, "no heatmap: no temporary folder");
		return 0;
	}
	snprintf(path, sizeof(path), "%s/heat.dat", dir);
	FILE *d = fopen(path, "w");
	snprintf(path, sizeof(path), "%s/heat.gp", dir);
	FILE *g = fopen(path, "w");
	double hi = 0;
	for (int i = 0; i < n * n; i++)
		if (isfinite(m[i]) && m[i] > hi)
			hi = m[i];
	if (d && g) {
		for (int i = 0; i < n; i++) {
			for (int j = 0; j < n; j++)
				fprintf(d, "%s%.4g", j ? " " : "",
				        isfinite(m[i * n + j]) ? m[i * n + j]
				                               : NAN);
			fputc('\n', d);
		}
		int px = n < 8 ? 640 : n < 24 ? 900 : 1200;
		fprintf(g,
		        "set terminal pngcairo size %d,%d noenhanced font "
		        "'sans,10'\nset output 'heat.png'\n"
		        "set title 'pair bandwidth, GB/s (row sends to "
		        "column)'\nset palette defined (0 '#b2182b', 0.5 "
		        "'#fee08b', 1 '#1a9850')\nset cbrange [0:%g]\n"
		        "set yrange [%g:-0.5]\nset xrange [-0.5:%g]\n"
		        "set xtics rotate by 45 right\nset datafile missing "
		        "'nan'\n",
		        px, px * 4 / 5, hi > 0 ? hi : 1, n - 0.5, n - 0.5);
		for (int k = 0; k < 2; k++) {
			fputs(k ? "set ytics (" : "set xtics (", g);
			for (int i = 0; i < n; i++) {
				json_object *x = json_object_array_get_idx(
				        nodes, (size_t)i);
				fputs(i ? ", " : "", g);
				gp_quote(g, gstr(x, "name"));
				fprintf(g, " %d", i);
			}
			fputs(")\n", g);
		}
		fprintf(g, "plot 'heat.dat' matrix with image notitle%s\n",
		        n <= 16 ? ", '' matrix using 1:2:(sprintf('%.2g', $3)) "
		                  "with labels notitle"
		                : "");
	}
	if (d)
		fclose(d);
	if (g)
		fclose(g);
	if (d && g) {
		struct cb_fail_rec why; /* no heatmap is a note */
		cb_fail_open(&why);
		cb_status_t st = cb_gnuplot_run(exe, dir, "heat.gp");
		cb_fail_close(&why, 0);
		snprintf(path, sizeof(path), "%s/heat.png", dir);
		if (st == CB_OK)
			ok = cb_html_embed_png(f, path,
			                       "pair bandwidth heatmap: row "
			                       "sends to column");
		else
			snprintf(note, bytes, "no heatmap: %s",
			         cb_fail_rec_msg(&why) ? cb_fail_rec_msg(&why)
			                               : "gnuplot failed");
	}
	static const char *const files[] = { "heat.dat", "heat.gp",
		                             "heat.png" };
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
	return ok;
}

static void matrix_table(FILE *f, json_object *nodes, int n, const double *m,
                         double ref, double tol)
{
	fputs("<div class=\"scroll\"><table class=\"rows\"><tr><th>GB/s</th>",
	      f);
	for (int j = 0; j < n; j++) {
		fputs("<th>", f);
		cb_markup_esc(f,
		              gstr(json_object_array_get_idx(nodes, (size_t)j),
		                   "name"));
		fputs("</th>", f);
	}
	fputs("</tr>\n", f);
	for (int i = 0; i < n; i++) {
		fputs("<tr><th>", f);
		cb_markup_esc(f,
		              gstr(json_object_array_get_idx(nodes, (size_t)i),
		                   "name"));
		fputs("</th>", f);
		for (int j = 0; j < n; j++) {
			double v = m[i * n + j];
			if (i == j)
				fputs("<td>-</td>", f);
			else if (!isfinite(v))
				fputs("<td class=\"bad\">x</td>", f);
			else
				fprintf(f, "<td%s>%.3g</td>",
				        ref > 0 && v < tol * ref
				                ? " class=\"bad\""
				                : "",
				        v);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table></div>\n", f);
}

void cb_acc_html(FILE *f, json_object *acc, int *no_plot)
{
	json_object *stages, *findings, *warnings, *nodes,
	        *set = get(acc, "settings");
	int fail = cb_acc_html_failed(acc);
	int ns = garr(acc, "stages", &stages);
	int nf = garr(acc, "findings", &findings);
	int nw = garr(acc, "warnings", &warnings);
	int nn = garr(acc, "nodes", &nodes);
	char note[600] = "";

	fprintf(f,
	        "<div class=\"banner %s\">ACCEPTANCE %s<span>%d finding%s, "
	        "transport ",
	        fail ? "fail" : "pass", fail ? "FAIL" : "PASS", nf,
	        nf == 1 ? "" : "s");
	cb_markup_esc(f, gstr(set, "transport"));
	fprintf(f, ", %d nodes</span></div>\n", nn);
	if (nf || nw) {
		/* each with its state: FAIL (a finding), WARN (a warning) */
		fputs("<h2>Findings</h2>\n<ul class=\"warnings\">\n", f);
		for (int i = 0; i < nf + nw; i++) {
			json_object *k = json_object_array_get_idx(
			        i < nf ? findings : warnings,
			        (size_t)(i < nf ? i : i - nf));
			fputs(i < nf ? "<li>FAIL " : "<li>WARN ", f);
			cb_markup_esc(f, gstr(k, "stage"));
			fputs(": ", f);
			cb_markup_esc(f, gstr(k, "line"));
			fputs("</li>\n", f);
		}
		fputs("</ul>\n", f);
	}
	json_object *base = get(acc, "baseline");
	if (base) {
		double r = gnum(base, "ratio");
		fputs("<p class=\"note\">Baseline ", f);
		cb_markup_esc(f, gstr(base, "file"));
		fprintf(f, ": %d pairs compared",
		        (int)gnum(base, "pairs_compared"));
		if (isfinite(r))
			fprintf(f,
			        ", the median node's pairs at %.0f%% of then",
			        100 * r);
		fputs("; not compared: ", f);
		cb_markup_esc(f, get(base, "not_compared")
		                         ? gstr(base, "not_compared")
		                         : "-");
		fputs("</p>\n", f);
	}
	fputs("<h2>Stages</h2>\n<table class=\"rows\"><tr><th>stage</th>"
	      "<th>state</th><th>time (s)</th><th>summary</th></tr>\n",
	      f);
	for (int i = 0; i < ns; i++) {
		json_object *s = json_object_array_get_idx(stages, (size_t)i);
		double t = gnum(s, "seconds");
		fprintf(f, "<tr%s><td>",
		        !strcmp(gstr(s, "state"), "FAIL") ? " class=\"bad\""
		                                          : "");
		cb_markup_esc(f, gstr(s, "name"));
		fputs("</td><td>", f);
		cb_markup_esc(f, gstr(s, "state"));
		if (isfinite(t))
			fprintf(f, "</td><td>%.2f</td><td>", t);
		else
			fputs("</td><td>-</td><td>", f);
		cb_markup_esc(f, gstr(s, "summary"));
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
	if (nn >= 2) {
		double *m = bw_matrix(acc, nn);
		json_object *ref = get(acc, "reference");
		if (m) {
			fputs("<h2>Pair bandwidth</h2>\n", f);
			if (!heatmap(f, nodes, nn, m, note, sizeof(note))) {
				if (no_plot && strstr(note, "not on PATH"))
					*no_plot = 1;
				fputs("<p class=\"note\">", f);
				cb_markup_esc(f, note);
				fputs("</p>\n", f);
			}
			matrix_table(f, nodes, nn, m, gnum(ref, "bw_gbps"),
			             gnum(set, "bw_tolerance"));
			free(m);
		}
	}
}
