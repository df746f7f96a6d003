/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_results.c - a JSON results file, as `collbench compare`,
 * `report` and `plot` read it: the reader (reports/results.c) and then
 * everything that walks what it accepted - the comparison against itself
 * and against a known-good run, the HTML report (run object members of
 * any shape: hosts, topology, settings, status) and the plot data.
 *
 * gnuplot is kept off PATH here, so the plot and the report write their
 * data and say "no gnuplot", as they do on a machine without it.
 *
 * Beyond not crashing: a refusal is CB_ERR_USAGE with a recorded line; an
 * accepted file writes back and reads back to the same rows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "fuzz.h"
#include "reports/results.h"

static FILE *sink;
static struct cb_results *golden;
static char dir[64] = "/tmp/collbench-fuzz-XXXXXX", png[128];

static void cleanup(void)
{
	char p[160];

	for (const char *ext = "dat"; ext;
	     ext = strcmp(ext, "dat") ? NULL : "gp") {
		snprintf(p, sizeof(p), "%s/p.%s", dir, ext);
		unlink(p);
	}
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setenv("PATH", "/nonexistent", 1);
	if (!mkdtemp(dir))
		abort();
	setenv("TMPDIR", dir, 1);
	snprintf(png, sizeof(png), "%s/p.png", dir);
	atexit(cleanup);
	sink = fopen("/dev/null", "w");
	/* CB_FUZZ_DATA: tests/data/results, from meson. */
	if (!sink ||
	    cb_results_load(CB_FUZZ_DATA "/results/golden.json", &golden))
		abort();
	return 0;
}

static void round_trip(const struct cb_results *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct cb_results *back = NULL;

	FUZZ_CHECK(f != NULL);
	FUZZ_CHECK(cb_results_write(f, r) == CB_OK);
	fclose(f);
	cb_fail_clear();
	FUZZ_CHECK(cb_results_parse("again.json", text, len, &back) == CB_OK);
	FUZZ_CHECK(back->nrows == r->nrows);
	for (size_t i = 0; i < r->nrows; i++) {
		const struct cb_row *a = &r->rows[i], *b = &back->rows[i];
		FUZZ_CHECK(!strcmp(a->coll, b->coll) &&
		           !strcmp(a->algo, b->algo) && a->bytes == b->bytes &&
		           a->ranks == b->ranks && a->root == b->root &&
		           a->wrong == b->wrong && a->inplace == b->inplace);
	}
	cb_results_free(back);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cb_results *r = NULL;
	struct cb_compare_sum sum;
	cb_status_t st;

	if (!golden)
		LLVMFuzzerInitialize(NULL, NULL);
	cb_fail_clear();
	st = cb_results_parse("fuzz.json", (const char *)data, size, &r);
	if (st) {
		FUZZ_CHECK(st == CB_ERR_USAGE);
		FUZZ_CHECK(cb_fail_msg() != NULL);
		return 0;
	}
	round_trip(r);
	cb_compare(sink, r, r, 0.1, &sum);
	FUZZ_CHECK(sum.regressions == 0 || sum.wrong > 0);
	cb_compare(sink, golden, r, 0.1, &sum);
	cb_compare(sink, r, golden, 0.1, &sum);
	struct cb_results *runs[2] = { r, golden };
	int missing = 0;
	cb_fail_clear();
	cb_report_html(sink, runs, 2, &missing);
	for (int m = CB_PLOT_BUSBW; m <= CB_PLOT_TIME; m++) {
		struct cb_plot_cfg cfg = {
			.out = png, .metric = m, .width = 640, .height = 480
		};
		int scaling;
		cb_fail_clear();
		cb_plot(runs, 1, &cfg, &scaling);
	}
	cb_results_free(r);
	return 0;
}
