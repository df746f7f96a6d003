/* SPDX-License-Identifier: MIT */
/*
 * cli/results_cmd.c - `collbench plot`, `collbench compare` and
 * `collbench report`: what is made from JSON result files (reports/).
 *
 * Exit status: 0 ok; 1 compare found a regression, or gnuplot or a write
 * failed; 2 usage or a file that is not collbench results; 77 plot: gnuplot
 * is not on PATH (FILE.dat and FILE.gp are written all the same).
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/cli.h"
#include "cli/results_cmd.h"
#include "core/log.h"
#include "reports/results.h"

#define MAX_RUNS 64

static const char usage_text[] =
        "usage: collbench plot RESULT.json [MORE.json...] -o FILE.png|.svg\n"
        "                      [--metric busbw|algbw|time] [--size WxH]\n"
        "         writes FILE.dat and FILE.gp beside the image and runs "
        "gnuplot;\n"
        "         FILE-scaling.EXT too when the results hold a --ranks or "
        "--nodes sweep\n"
        "       collbench compare BASE.json NEW.json [--tolerance 10%]\n"
        "         rows side by side with new/base; exit 1 on a regression "
        "beyond the\n"
        "         tolerance (busbw lower; time higher where a row has no "
        "bandwidth)\n"
        "       collbench report RESULT.json... -o report.html\n"
        "         one self-contained HTML page: verdict, warnings, plots, "
        "metadata, rows\n"
        "\nExit status: 0 ok, 1 a regression (compare) or a failure to "
        "draw or write,\n2 usage or a bad result file, 77 gnuplot is not "
        "on PATH (plot).\n";

static int usage(const char *cmd, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

static int usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "collbench %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see collbench %s --help)\n", cmd);
	return 2;
}

static int status_exit(cb_status_t st)
{
	return cb_cli_say(NULL, st);
}

enum { O_METRIC = 256, O_SIZE, O_TOL };

static const struct option longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "metric", required_argument, NULL, O_METRIC },
	{ "size", required_argument, NULL, O_SIZE },
	{ "tolerance", required_argument, NULL, O_TOL },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct args {
	const char *cmd, *out;
	int metric, width, height;
	double tol;
	const char *files[MAX_RUNS];
	int nfiles;
	int help;
};

static int parse(int argc, char **argv, struct args *a)
{
	int c;
	char *end;

	/* 0, not 1: glibc then forgets a cluster (-vb8) left half-read by
	 * an earlier parse, which pointed into that parse's arguments. */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			a->out = optarg;
			break;
		case 'h':
			a->help = 1;
			return 0;
		case O_METRIC:
			if (strcmp(a->cmd, "plot"))
				return usage(a->cmd, "--metric is for plot");
			if ((a->metric = cb_plot_metric_parse(optarg)) < 0)
				return usage(
				        a->cmd,
				        "unknown metric '%s' (busbw, algbw "
				        "or time)",
				        optarg);
			break;
		case O_SIZE: {
			long w, h;
			if (strcmp(a->cmd, "plot"))
				return usage(a->cmd, "--size is for plot");
			w = strtol(optarg, &end, 10);
			if (end == optarg || (*end != 'x' && *end != 'X'))
				return usage(a->cmd,
				             "--size '%s' is not WIDTHxHEIGHT "
				             "(e.g. 1000x600)",
				             optarg);
			char *hs = end + 1;
			h = strtol(hs, &end, 10);
			if (end == hs || *end || w < 100 || h < 100 ||
			    w > 10000 || h > 10000)
				return usage(a->cmd,
				             "--size '%s' is not WIDTHxHEIGHT, "
				             "each 100..10000 pixels",
				             optarg);
			a->width = (int)w;
			a->height = (int)h;
			break;
		}
		case O_TOL: {
			if (strcmp(a->cmd, "compare"))
				return usage(a->cmd, "--tolerance is for "
				                     "compare");
			double t = strtod(optarg, &end);
			if (end == optarg || (*end && strcmp(end, "%")) ||
			    !(t >= 0 && t <= 1000))
				return usage(
				        a->cmd,
				        "--tolerance '%s' is not a "
				        "percentage in 0..1000 (e.g. 10%%)",
				        optarg);
			a->tol = t / 100;
			break;
		}
		case ':':
			return usage(a->cmd, "option %s needs a value",
			             argv[optind - 1]);
		default:
			return usage(a->cmd, "unknown option '%s'",
			             argv[optind - 1]);
		}
	}
	for (; optind < argc; optind++) {
		if (a->nfiles == MAX_RUNS)
			return usage(a->cmd, "at most %d result files",
			             MAX_RUNS);
		a->files[a->nfiles++] = argv[optind];
	}
	return 0;
}

static int load_all(const struct args *a, struct cb_results **runs)
{
	for (int i = 0; i < a->nfiles; i++) {
		cb_status_t st = cb_results_load(a->files[i], &runs[i]);
		if (st) {
			for (int k = 0; k < i; k++)
				cb_results_free(runs[k]);
			return status_exit(st);
		}
	}
	return 0;
}

static void free_all(struct cb_results **runs, int n)
{
	for (int i = 0; i < n; i++)
		cb_results_free(runs[i]);
}

static int cmd_plot(const struct args *a, struct cb_results **runs)
{
	struct cb_plot_cfg cfg = {
		.out = a->out,
		.metric = (enum cb_plot_metric)a->metric,
		.width = a->width,
		.height = a->height,
	};
	int scaling, rc = 0;
	cb_status_t st = cb_plot(runs, a->nfiles, &cfg, &scaling);

	if (st)
		rc = status_exit(st);
	free_all(runs, a->nfiles);
	return rc;
}

static int cmd_compare(const struct args *a, struct cb_results **runs)
{
	struct cb_compare_sum sum;

	cb_compare(stdout, runs[0], runs[1], a->tol, &sum);
	fflush(stdout);
	free_all(runs, 2);
	return sum.regressions ? 1 : 0;
}

static int cmd_report(const struct args *a, struct cb_results **runs)
{
	FILE *f = fopen(a->out, "w");
	int missing = 0, rc = 0;
	cb_status_t st;

	if (!f) {
		free_all(runs, a->nfiles);
		return status_exit(
		        cb_fail(CB_ERR_SYS, "cannot write %s: %m", a->out));
	}
	st = cb_report_html(f, runs, a->nfiles, &missing);
	if (fclose(f) && !st)
		st = cb_fail(CB_ERR_SYS, "cannot write %s: %m", a->out);
	if (st)
		rc = status_exit(st);
	else if (missing)
		fprintf(stderr,
		        "collbench: gnuplot is not on PATH (Debian: apt "
		        "install gnuplot-nox): %s has no plots\n",
		        a->out);
	free_all(runs, a->nfiles);
	return rc;
}

int cb_results_cmd(int argc, char **argv)
{
	struct cb_results *runs[MAX_RUNS];
	struct args a = {
		.cmd = argv[0],
		.metric = CB_PLOT_BUSBW,
		.width = 1000,
		.height = 600,
		.tol = 0.10,
	};
	int rc;

	if ((rc = parse(argc, argv, &a)))
		return rc;
	if (a.help) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (!strcmp(a.cmd, "compare")) {
		if (a.nfiles != 2)
			return usage(a.cmd,
			             "give two result files, BASE and NEW");
		if (a.out)
			return usage(a.cmd, "-o is for plot and report");
	} else {
		if (a.nfiles == 0)
			return usage(a.cmd, "give at least one result file");
		if (!a.out)
			return usage(a.cmd, "-o FILE is required");
		const char *dot = strrchr(a.out, '.');
		if (!strcmp(a.cmd, "plot") &&
		    (!dot || (strcmp(dot, ".png") && strcmp(dot, ".svg"))))
			return usage(a.cmd,
			             "-o %s: the image is FILE.png or FILE.svg",
			             a.out);
		if (!strcmp(a.cmd, "report") &&
		    (!dot || (strcmp(dot, ".html") && strcmp(dot, ".htm"))))
			return usage(a.cmd, "-o %s: the report is FILE.html",
			             a.out);
	}
	if ((rc = load_all(&a, runs)))
		return rc;
	if (!strcmp(a.cmd, "plot"))
		return cmd_plot(&a, runs);
	if (!strcmp(a.cmd, "compare"))
		return cmd_compare(&a, runs);
	return cmd_report(&a, runs);
}
