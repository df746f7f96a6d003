/* SPDX-License-Identifier: MIT */
/*
 * reports/html.c - `collbench report`: one self-contained HTML page for
 * one or more result files, readable from disk without a server: a
 * verdict, warnings (failed runs, wrong values, hosts that differ,
 * unchecked or reproducible runs, missing plots), the plots as base64 PNG
 * drawn by gnuplot in a temporary folder, each run's metadata and rows.
 * Every string from a result file is escaped.
 */
#include "reports/results.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cb_config.h"
#include "core/log.h"
#include "reports/markup.h"

/* run.a.b: the member at that path, or NULL. */
static json_object *jget(const struct cb_results *r, const char *a,
                         const char *b)
{
	json_object *v = NULL, *w = NULL;

	if (!json_object_object_get_ex(r->run, a, &v) || !b)
		return v;
	if (!json_object_is_type(v, json_type_object) ||
	    !json_object_object_get_ex(v, b, &w))
		return NULL;
	return w;
}

static const char *jstr(json_object *v)
{
	return v ? json_object_get_string(v) : "unknown";
}

static void unlink_plot(const char *dir, const char *base)
{
	static const char *const ext[] = { ".png", "-scaling.png", ".dat",
		                           ".gp" };
	char p[4200];

	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s%s", dir, base, ext[i]);
		unlink(p);
	}
}

struct plots {
	int missing;    /* gnuplot not on PATH */
	char note[512]; /* why a plot is absent */
};

static void plots(FILE *f, struct cb_results *const *runs, int nruns,
                  struct plots *pl)
{
	static const struct {
		const char *base, *alt;
		enum cb_plot_metric m;
	} want[] = {
		{ "busbw", "bus bandwidth against message size",
		  CB_PLOT_BUSBW },
		{ "time", "time against message size (log scale)",
		  CB_PLOT_TIME },
	};
	const char *tmp = getenv("TMPDIR");
	char dir[4096], out[4200];
	int any = 0;

	snprintf(dir, sizeof(dir), "%s/collbench-report-XXXXXX",
	         tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		snprintf(pl->note, sizeof(pl->note),
		         "no plots: cannot make a temporary folder: %s",
		         strerror(errno));
		return;
	}
	fputs("<h2 id=\"plots\">Plots</h2>\n<div class=\"plots\">\n", f);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct cb_plot_cfg cfg = {
			.out = out,
			.metric = want[i].m,
			.width = 1000,
			.height = 560,
		};
		int scaling = 0;
		struct cb_fail_rec why; /* a plot that fails is a note */
		snprintf(out, sizeof(out), "%s/%s.png", dir, want[i].base);
		cb_fail_open(&why);
		cb_status_t st = cb_plot(runs, nruns, &cfg, &scaling);
		cb_fail_close(&why, 0);
		if (st == CB_ERR_UNAVAILABLE) {
			/* not cb_plot's line: it names the temporary files */
			pl->missing = 1;
			snprintf(pl->note, sizeof(pl->note),
			         "gnuplot is not on PATH (Debian: apt install "
			         "gnuplot-nox): no plots");
		}
		if (st && !pl->note[0])
			snprintf(pl->note, sizeof(pl->note), "%s",
			         cb_fail_rec_msg(&why) ? cb_fail_rec_msg(&why)
			                               : "plot failed");
		if (!st) {
			any |= cb_html_embed_png(f, out, want[i].alt);
			if (scaling && i == 0) {
				snprintf(out, sizeof(out),
				         "%s/busbw-scaling.png", dir);
				cb_html_embed_png(
				        f, out,
				        "scaling: bus bandwidth at the largest "
				        "size against the group size");
			}
		}
		unlink_plot(dir, want[i].base);
		if (st == CB_ERR_UNAVAILABLE)
			break;
	}
	rmdir(dir);
	if (!any)
		fputs("<p class=\"note\">No plots (see the warnings).</p>\n",
		      f);
	fputs("</div>\n", f);
}

static void human(double bytes, char *buf, size_t n)
{
	static const char *const u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int k = 0;

	while (bytes >= 1024 && k < 4) {
		bytes /= 1024;
		k++;
	}
	snprintf(buf, n, k ? "%.4g %s" : "%.0f %s", bytes, u[k]);
}

struct warn_ctx {
	FILE *f;
	int n;
};

static void warn(struct warn_ctx *w, const char *label, const char *what,
                 const char *detail)
{
	if (w->n++ == 0)
		fputs("<ul class=\"warnings\">\n", w->f);
	fputs("<li><b>", w->f);
	cb_markup_esc(w->f, label);
	fputs("</b>: ", w->f);
	cb_markup_esc(w->f, what);
	if (detail) {
		fputs(" ", w->f);
		cb_markup_esc(w->f, detail);
	}
	fputs("</li>\n", w->f);
}

static int run_failed(const struct cb_results *r, uint64_t *wrong,
                      size_t *bad_rows)
{
	json_object *st = jget(r, "status", NULL);

	*wrong = 0;
	*bad_rows = 0;
	for (size_t i = 0; i < r->nrows; i++) {
		*wrong += r->rows[i].wrong;
		*bad_rows += r->rows[i].wrong > 0;
	}
	return (st && strcmp(json_object_get_string(st), "complete")) || *wrong;
}

static void warnings(FILE *f, struct cb_results *const *runs, int nruns,
                     const struct plots *pl)
{
	struct warn_ctx w = { f, 0 };
	char label[128], buf[512];

	fputs("<h2 id=\"warnings\">Warnings</h2>\n", f);
	for (int i = 0; i < nruns; i++) {
		const struct cb_results *r = runs[i];
		json_object *v, *hosts;
		uint64_t wrong;
		size_t bad;
		cb_results_label(r, label, sizeof(label));
		run_failed(r, &wrong, &bad);
		v = jget(r, "status", NULL);
		if (v && strcmp(json_object_get_string(v), "complete"))
			warn(&w, label, "the run did not complete:",
			     jstr(jget(r, "error", NULL)));
		if (wrong) {
			for (size_t k = 0; k < r->nrows; k++)
				if (r->rows[k].wrong) {
					const struct cb_row *x = &r->rows[k];
					snprintf(buf, sizeof(buf),
					         "(first: %s %s %s %s %s, %llu "
					         "bytes, %s, %d ranks)",
					         x->coll, x->algo, x->transport,
					         x->dtype, x->op,
					         (unsigned long long)x->bytes,
					         x->inplace ? "in place"
					                    : "out of place",
					         x->ranks);
					break;
				}
			char what[128];
			snprintf(what, sizeof(what),
			         "%llu wrong values in %zu row%s",
			         (unsigned long long)wrong, bad,
			         bad == 1 ? "" : "s");
			warn(&w, label, what, buf);
		}
		hosts = jget(r, "topology", "hosts");
		for (size_t k = 0;
		     hosts && json_object_is_type(hosts, json_type_array) &&
		     k < json_object_array_length(hosts);
		     k++) {
			json_object *h = json_object_array_get_idx(hosts, k),
			            *d, *why, *name;
			if (json_object_object_get_ex(h, "differs", &d) &&
			    json_object_get_boolean(d) &&
			    json_object_object_get_ex(h, "host", &name)) {
				json_object_object_get_ex(h, "why", &why);
				snprintf(buf, sizeof(buf),
				         "host %s differs from the others:",
				         json_object_get_string(name));
				warn(&w, label, buf, jstr(why));
			}
		}
		v = jget(r, "settings", "check");
		if (v && !json_object_get_boolean(v))
			warn(&w, label, "results were not checked (-c 0)",
			     NULL);
		v = jget(r, "reproducible", NULL);
		if (v && json_object_get_boolean(v))
			warn(&w, label,
			     "reproducible mode: times and bandwidths are zero",
			     NULL);
		if (r->nrows == 0)
			warn(&w, label, "no rows", NULL);
	}
	if (pl->note[0])
		warn(&w, "plots", pl->note, NULL);
	fputs(w.n ? "</ul>\n" : "<p class=\"ok\">None.</p>\n", f);
}

static void kv(FILE *f, const char *k, const char *v)
{
	fputs("<tr><th>", f);
	cb_markup_esc(f, k);
	fputs("</th><td>", f);
	cb_markup_esc(f, v);
	fputs("</td></tr>\n", f);
}

static void join(json_object *a, const char *sep, char *buf, size_t n)
{
	buf[0] = 0;
	if (!a || !json_object_is_type(a, json_type_array)) {
		snprintf(buf, n, "%s", jstr(a));
		return;
	}
	for (size_t i = 0; i < json_object_array_length(a); i++)
		snprintf(buf + strlen(buf), n - strlen(buf), "%s%s",
		         i ? sep : "", jstr(json_object_array_get_idx(a, i)));
}

static void metadata(FILE *f, const struct cb_results *r)
{
	char buf[4096];
	json_object *v;

	fputs("<table class=\"meta\">\n", f);
	kv(f, "file", r->path ? r->path : "(this run)");
	snprintf(buf, sizeof(buf), "%s", jstr(jget(r, "status", NULL)));
	if ((v = jget(r, "error", NULL)))
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), ": %s",
		         json_object_get_string(v));
	kv(f, "status", buf);
	join(jget(r, "argv", NULL), " ", buf, sizeof(buf));
	kv(f, "command", buf);
	snprintf(buf, sizeof(buf), "%s (%s)",
	         jstr(jget(r, "collbench", "version")),
	         jstr(jget(r, "collbench", "build")));
	kv(f, "collbench", buf);
	kv(f, "start time (UTC)", jstr(jget(r, "start_time", NULL)));
	join(jget(r, "hosts", NULL), ", ", buf, sizeof(buf));
	char line[4200];
	snprintf(line, sizeof(line), "%s ranks on %s",
	         jstr(jget(r, "ranks", NULL)), buf);
	kv(f, "ranks and hosts", line);
	kv(f, "transport", jstr(jget(r, "transport", NULL)));
	join(jget(r, "collectives", NULL), ", ", buf, sizeof(buf));
	snprintf(line, sizeof(line), "%s; algorithm %s", buf,
	         jstr(jget(r, "algo", NULL)));
	kv(f, "collectives", line);
	snprintf(buf, sizeof(buf),
	         "%s iterations after %s warm-up; check %s; sizes %s to %s "
	         "bytes",
	         jstr(jget(r, "settings", "iters")),
	         jstr(jget(r, "settings", "warmup")),
	         jstr(jget(r, "settings", "check")),
	         jstr(jget(r, "settings", "min_bytes")),
	         jstr(jget(r, "settings", "max_bytes")));
	kv(f, "measurement", buf);
	snprintf(buf, sizeof(buf),
	         "alpha %s us, beta %s GB/s, gamma %s GB/s (%s)",
	         jstr(jget(r, "model", "alpha_us")),
	         jstr(jget(r, "model", "beta_gbps")),
	         jstr(jget(r, "model", "gamma_gbps")),
	         jstr(jget(r, "model", "source")));
	kv(f, "model", buf);
	if ((v = jget(r, "topology", "binding")))
		kv(f, "binding", json_object_get_string(v));
	if ((v = jget(r, "topology", "inventory")))
		for (size_t i = 0; i < json_object_array_length(v); i++)
			kv(f, "inventory",
			   jstr(json_object_array_get_idx(v, i)));
	if ((v = jget(r, "environment", NULL)) &&
	    json_object_is_type(v, json_type_object)) {
		buf[0] = 0;
		json_object_object_foreach(v, key, val)
		{
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf),
			         "%s%s=%s", buf[0] ? " " : "", key, jstr(val));
		}
		kv(f, "environment", buf[0] ? buf : "(none relevant)");
	}
	fputs("</table>\n", f);
}

static void rows(FILE *f, const struct cb_results *r)
{
	static const char *const head[] = {
		"collective", "algo",       "transport",    "dtype",
		"op",         "ranks",      "hosts",        "size",
		"placement",  "time (us)",  "algbw (GB/s)", "busbw (GB/s)",
		"#wrong",     "model (us)", "min (us)",     "p50 (us)",
		"p99 (us)",   "max (us)",   "slowest rank",
	};

	fputs("<div class=\"scroll\"><table class=\"rows\">\n<thead><tr>", f);
	for (size_t i = 0; i < sizeof(head) / sizeof(head[0]); i++) {
		fputs("<th>", f);
		cb_markup_esc(f, head[i]);
		fputs("</th>", f);
	}
	fputs("</tr></thead>\n<tbody>\n", f);
	for (size_t i = 0; i < r->nrows; i++) {
		const struct cb_row *x = &r->rows[i];
		char size[32], slow[16] = "-";
		human((double)x->bytes, size, sizeof(size));
		if (x->slowest >= 0)
			snprintf(slow, sizeof(slow), "%d", x->slowest);
		fprintf(f, "<tr%s><td>", x->wrong ? " class=\"bad\"" : "");
		cb_markup_esc(f, x->coll);
		fputs("</td><td>", f);
		cb_markup_esc(f, x->algo);
		fputs("</td><td>", f);
		cb_markup_esc(f, x->transport);
		fputs("</td><td>", f);
		cb_markup_esc(f, x->dtype);
		fputs("</td><td>", f);
		cb_markup_esc(f, x->op);
		fprintf(f,
		        "</td><td class=\"n\">%d</td><td class=\"n\">%d</td>"
		        "<td class=\"n\" title=\"%llu bytes\">%s</td><td>%s"
		        "</td><td class=\"n\">%.2f</td><td class=\"n\">%.3f"
		        "</td><td class=\"n\">%.3f</td><td class=\"n\">%llu"
		        "</td><td class=\"n\">%.2f</td><td class=\"n\">%.2f"
		        "</td><td class=\"n\">%.2f</td><td class=\"n\">%.2f"
		        "</td><td class=\"n\">%.2f</td><td class=\"n\">%s"
		        "</td></tr>\n",
		        x->ranks, x->hosts, (unsigned long long)x->bytes, size,
		        x->inplace ? "in place" : "out of place", x->time_us,
		        x->algbw_gbps, x->busbw_gbps,
		        (unsigned long long)x->wrong, x->model_us, x->min_us,
		        x->p50_us, x->p99_us, x->max_us, slow);
	}
	fputs("</tbody></table></div>\n", f);
}

static const char style[] =
        "body{font-family:sans-serif;margin:2em auto;max-width:1100px;"
        "color:#222;padding:0 1em}\n"
        "h1{margin-bottom:0}.sub{color:#666;margin-top:.3em}\n"
        "h2{border-bottom:1px solid #ccc;padding-bottom:.2em;"
        "margin-top:2em}\n"
        ".verdict{font-size:1.3em;font-weight:bold;padding:.5em 1em;"
        "border-radius:6px;display:inline-block}\n"
        ".pass{background:#dff3df;color:#175e17}"
        ".fail{background:#fbe0e0;color:#8a1414}\n"
        "table{border-collapse:collapse;font-size:.9em}\n"
        "td,th{border:1px solid #ddd;padding:.25em .5em;text-align:left;"
        "vertical-align:top}\n"
        "th{background:#f4f4f4}.n{text-align:right;"
        "font-variant-numeric:tabular-nums}\n"
        "table.meta th{width:12em}table.meta td{word-break:break-word}\n"
        "tr.bad td{background:#fbe0e0}table.rows td{white-space:nowrap}\n"
        ".scroll{overflow-x:auto;max-height:40em;overflow-y:auto}\n"
        "figure{margin:1em 0}img{max-width:100%;border:1px solid #eee}\n"
        "figcaption{color:#666;font-size:.9em}\n"
        "ul.warnings li{color:#8a1414;margin:.3em 0}.ok{color:#175e17}\n"
        ".note{color:#666}\n"
        ".banner{font-size:2em;font-weight:bold;padding:.6em 1em;"
        "margin:1em 0;border-radius:.3em;color:#fff}\n"
        ".banner span{font-size:.45em;font-weight:normal;margin-left:1em}\n"
        ".banner.pass{background:#1a7f37}.banner.fail{background:#b42318}\n"
        "td.bad{background:#fbe0e0}\n";

cb_status_t cb_report_html(FILE *f, struct cb_results *const *runs, int nruns,
                           int *plots_missing)
{
	struct plots pl = { 0 };
	char label[128];
	int failed = 0;

	for (int i = 0; i < nruns; i++) {
		uint64_t wrong;
		size_t bad;
		json_object *acc = jget(runs[i], "acceptance", NULL);
		failed |= run_failed(runs[i], &wrong, &bad);
		failed |= acc && cb_acc_html_failed(acc);
	}
	fprintf(f,
	        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
	        "charset=\"utf-8\">\n<title>collbench report</title>\n"
	        "<style>\n%s</style>\n</head>\n<body>\n"
	        "<h1>collbench report</h1>\n<p class=\"sub\">",
	        style);
	for (int i = 0; i < nruns; i++) {
		cb_results_label(runs[i], label, sizeof(label));
		fputs(i ? ", " : "", f);
		cb_markup_esc(f, label);
	}
	fprintf(f, " &middot; made by collbench %s</p>\n", CB_VERSION);
	fprintf(f, "<p class=\"verdict %s\">%s</p>\n", failed ? "fail" : "pass",
	        failed ? "FAILED: a run failed, has wrong values, or an "
	                 "acceptance verdict is FAIL"
	               : "OK: every run completed, every value checked "
	                 "correct");
	/* Acceptance runs: their verdict, findings and heatmap first. */
	for (int i = 0; i < nruns; i++) {
		json_object *acc = jget(runs[i], "acceptance", NULL);
		if (acc && json_object_is_type(acc, json_type_object))
			cb_acc_html(f, acc, &pl.missing);
	}

	/* Draw first, so a missing gnuplot is among the warnings above. */
	char *pbuf = NULL;
	size_t plen = 0;
	FILE *pf = open_memstream(&pbuf, &plen);
	if (!pf)
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	plots(pf, runs, nruns, &pl);
	fclose(pf);
	warnings(f, runs, nruns, &pl);
	fwrite(pbuf, 1, plen, f);
	free(pbuf);

	for (int i = 0; i < nruns; i++) {
		cb_results_label(runs[i], label, sizeof(label));
		fputs("<h2>Run ", f);
		cb_markup_esc(f, label);
		fputs("</h2>\n", f);
		metadata(f, runs[i]);
		fprintf(f, "<h3>Results (%zu row%s)</h3>\n", runs[i]->nrows,
		        runs[i]->nrows == 1 ? "" : "s");
		rows(f, runs[i]);
	}
	fputs("</body>\n</html>\n", f);
	if (plots_missing)
		*plots_missing = pl.missing;
	if (fflush(f) || ferror(f))
		return cb_fail(CB_ERR_SYS, "cannot write the report: %s",
		               strerror(errno));
	return CB_OK;
}
