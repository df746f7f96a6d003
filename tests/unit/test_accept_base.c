/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_accept_base.c - acceptance's baselines, bands, windows
 * and exit statuses, on made-up clusters (issue 19 §5):
 *  - --baseline: a record written as JSON and read back is its own
 *    baseline (nothing dropped); every pair 20% slower (the median cannot
 *    see it) names the fabric; two halves slow between them name the
 *    fabric with the pairs across; one host 20% slower (inside the run's
 *    own tolerance) is named; a slower collective; a baseline of other
 *    hosts or sizes refused, a malformed one refused with one line;
 *  - --expect bands: the band holding the measured size beats the flat
 *    line; overlapping or bad bands name their line;
 *  - the burn's windows: the window whose slowest pair is below the floor
 *    is named with the pair, the others not;
 *  - the burn's drift: a step down or a slide is named, one or two busy
 *    passes among steady ones are not, too few passes only warn;
 *  - the exit statuses: could not run (3) is not FAIL (1);
 *  - the JSON's states and baseline, and the page drawn from it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acceptance/accept.h"
#include "check.h"
#include "core/log.h"
#include "reports/results.h"

/* @n hosts, one node each (h0...), every pair at 1 GB/s each way. */
static void cluster(struct cb_acc *a, int n)
{
	memset(a, 0, sizeof(*a));
	a->version = "test";
	a->set = (struct cb_acc_settings){ .transport = "tcp",
		                           .bw_tolerance = 0.9,
		                           .lat_tolerance = 2.0,
		                           .coll_tolerance = 0.5,
		                           .bw_bytes = 1 << 20,
		                           .lat_iters = 200,
		                           .coll_bytes = 16 << 20,
		                           .pair_timeout_s = 10,
		                           .baseline_tolerance = 0.05 };
	a->nhosts = a->nnodes = a->ranks = n;
	a->hosts = calloc((size_t)n, sizeof(*a->hosts));
	a->nodes = calloc((size_t)n, sizeof(*a->nodes));
	a->pairs = calloc((size_t)n * n, sizeof(*a->pairs));
	for (int h = 0; h < n; h++) {
		snprintf(a->hosts[h].name, sizeof(a->hosts[h].name), "h%d", h);
		a->hosts[h].nranks = 1;
		a->nodes[h].host = a->nodes[h].rank = h;
		snprintf(a->nodes[h].name, sizeof(a->nodes[h].name), "h%d", h);
	}
	for (int x = 0; x < n; x++)
		for (int y = x + 1; y < n; y++)
			a->pairs[a->npairs++] = (struct cb_acc_pair){
				.a = x,
				.b = y,
				.ok = 1,
				.lat_p50_us = 10,
				.bw_ab_gbps = 1.0,
				.bw_ba_gbps = 1.0,
				.bibw_gbps = 1.8,
			};
	a->colls[a->ncolls++] = (struct cb_acc_coll){ .coll = "allreduce",
		                                      .algo = "ring",
		                                      .ranks = n,
		                                      .hosts = n,
		                                      .bytes = 16 << 20,
		                                      .time_us = 900,
		                                      .busbw_gbps = 1.5 };
	for (int s = 0; s < CB_ACC_NSTAGES; s++)
		a->stage[s].state = CB_ACC_PASS;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *b = f ? calloc(1, 1 << 20) : NULL;

	if (b)
		fread(b, 1, (1 << 20) - 1, f);
	if (f)
		fclose(f);
	return b;
}

static void scale(struct cb_acc *a, int x, int y, double f)
{
	struct cb_acc_pair *p = cb_acc_pair_of(a, x, y);

	p->bw_ab_gbps *= f;
	p->bw_ba_gbps *= f;
}

static int count(const struct cb_acc *a, const char *kind, const char *needle)
{
	int n = 0;

	for (int i = 0; i < a->nfindings; i++)
		n += (!kind || !strcmp(a->findings[i].kind, kind)) &&
		     (!needle || strstr(a->findings[i].line, needle));
	return n;
}

static void show(const char *what, const struct cb_acc *a)
{
	for (int i = 0; i < a->nfindings; i++)
		printf("  %s: FAIL %s\n", what, a->findings[i].line);
	for (int i = 0; i < a->nwarnings; i++)
		printf("  %s: WARN %s\n", what, a->warnings[i].line);
}

/* A fresh 8-host record compared with @b after @change. */
static void compare(const struct cb_acc_base *b, struct cb_acc *a,
                    void (*change)(struct cb_acc *), const char *what)
{
	cluster(a, 8);
	if (change)
		change(a);
	cb_acc_judge_base(a, b);
	show(what, a);
}

static void all_slower(struct cb_acc *a)
{
	for (int i = 0; i < a->npairs; i++)
		scale(a, a->pairs[i].a, a->pairs[i].b, 0.8);
}

static void halves(struct cb_acc *a)
{
	for (int x = 0; x < 4; x++)
		for (int y = 4; y < 8; y++)
			scale(a, x, y, 0.5);
}

static void host3(struct cb_acc *a)
{
	for (int y = 0; y < 8; y++)
		if (y != 3)
			scale(a, 3, y, 0.8);
}

static void path25(struct cb_acc *a)
{
	scale(a, 2, 5, 0.5);
	cb_acc_pair_of(a, 2, 5)->remeasured = 1; /* measured more than once */
}

static void once25(struct cb_acc *a)
{
	scale(a, 2, 5, 0.5); /* measured once: a busy moment, maybe */
}

static void coll(struct cb_acc *a)
{
	a->colls[0].busbw_gbps = 1.2;
}

static void noisy(struct cb_acc *a)
{
	all_slower(a);
	/* repeats vary by ~20%: a 20% drop of the fabric cannot be told */
	a->noise = (struct cb_acc_noise){
		.have = 1, .sigma_rep = 0.2, .k = 3.5, .vary_pct = 20
	};
}

/* The JSON of @a read back and drawn: the warning and the baseline are
 * on the page, each finding and warning with its state in the JSON. */
static void page(const struct cb_acc *a, const char *dir)
{
	char path[256], html[256];
	struct cb_results *r = NULL;
	FILE *f;
	int no_plot = 0;

	snprintf(path, sizeof(path), "%s/page.json", dir);
	snprintf(html, sizeof(html), "%s/page.html", dir);
	f = fopen(path, "w");
	CHECK(f && cb_acc_write_json(f, a) == CB_OK);
	fclose(f);
	CHECK(cb_results_load(path, &r) == CB_OK && r);
	if (!r)
		return;
	f = fopen(html, "w");
	CHECK(cb_report_html(f, &r, 1, &no_plot) == CB_OK);
	fclose(f);
	cb_results_free(r);
	char *t = slurp(path), *h = slurp(html);
	CHECK(t && strstr(t, "\"state\": \"WARN\"") &&
	      strstr(t, "\"pairs_compared\": 21"));
	CHECK(h && strstr(h, "<li>WARN pairwise: baseline") &&
	      strstr(h, "Baseline ") && strstr(h, "21 pairs compared"));
	free(t);
	free(h);
}

static void test_baseline(void)
{
	char dir[] = "/tmp/cb-accbase-XXXXXX", path[256], bad[256];
	struct cb_acc a;
	struct cb_acc_base *b = NULL;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	cluster(&a, 8);
	snprintf(path, sizeof(path), "%s/base.json", dir);
	f = fopen(path, "w");
	CHECK(f && cb_acc_write_json(f, &a) == CB_OK);
	fclose(f);
	cb_acc_free(&a);
	CHECK(cb_acc_base_load(path, &b) == CB_OK && b);
	if (!b)
		return;
	CHECK(b->nnames == 8 && b->npairs == 28 && b->ncolls == 1);

	compare(b, &a, NULL, "same");
	CHECK(a.nfindings == 0 && a.base.have && a.base.compared == 28);
	CHECK(cb_acc_base_check(b, &a) == CB_OK);
	cb_acc_free(&a);

	/* the in-run judge sees nothing here: every pair alike */
	compare(b, &a, all_slower, "all 20% slower");
	CHECK(a.nfindings == 1 && count(&a, "job",
	                                "the fabric: the median "
	                                "pair is 20% below"));
	CHECK(count(&a, "job", "28 of 28 pairs compared dropped"));
	cb_acc_free(&a);

	compare(b, &a, halves, "two halves");
	CHECK(a.nfindings == 1 &&
	      count(&a, "job", "16 of 28 pairs compared dropped"));
	cb_acc_free(&a);

	compare(b, &a, host3, "host 3 20% slower");
	CHECK(a.nfindings == 1 && count(&a, "node",
	                                "host h3: its median "
	                                "pair is 20% below"));
	cb_acc_free(&a);

	compare(b, &a, path25, "path 2-5 at half");
	CHECK(a.nfindings == 1 && count(&a, "path",
	                                "path h2 - h5: bandwidth "
	                                "0.5 GB/s, 50% below"));
	cb_acc_free(&a);

	compare(b, &a, once25, "path 2-5 at half, once");
	CHECK(a.nfindings == 0 && a.nwarnings == 1 &&
	      strstr(a.warnings[0].line, "1 pair measured once this run is "
	                                 "below the baseline beyond 5% "
	                                 "(h2-h5 -50%)"));
	cb_acc_free(&a);

	compare(b, &a, coll, "allreduce slower");
	CHECK(a.nfindings == 1 &&
	      count(&a, "job", "allreduce (ring): busbw 1.2 GB/s, 20% below"));
	CHECK(a.stage[CB_ACC_COLLECTIVES].state == CB_ACC_FAIL);
	cb_acc_free(&a);

	compare(b, &a, noisy, "noisy, all 20% slower");
	CHECK(a.nfindings == 0 && a.nwarnings == 1 &&
	      strstr(a.warnings[0].line, "cannot be told"));
	cb_acc_free(&a);

	/* other hosts, other sizes: refused; some hosts new: said */
	cluster(&a, 8);
	snprintf(a.hosts[7].name, sizeof(a.hosts[7].name), "new7");
	snprintf(a.nodes[7].name, sizeof(a.nodes[7].name), "new7");
	CHECK(cb_acc_base_check(b, &a) == CB_OK);
	cb_acc_judge_base(&a, b);
	show("a host new", &a);
	CHECK(a.base.compared == 21 && a.nfindings == 0 &&
	      strstr(a.base.skipped, "new here: new7; absent: h7"));
	CHECK(a.nwarnings == 1);
	page(&a, dir);
	cb_acc_free(&a);
	cluster(&a, 4);
	for (int h = 0; h < 4; h++)
		snprintf(a.hosts[h].name, sizeof(a.hosts[h].name), "x%d", h);
	CHECK(cb_acc_base_check(b, &a) == CB_ERR_USAGE);
	printf("  other hosts: %s\n", cb_fail_msg());
	CHECK(strstr(cb_fail_msg(), "another cluster"));
	cb_fail_clear();
	cb_acc_free(&a);
	cluster(&a, 8);
	a.set.bw_bytes = 256 << 10;
	a.set.coll_bytes = 1 << 20;
	CHECK(cb_acc_base_check(b, &a) == CB_ERR_USAGE);
	printf("  other sizes: %s\n", cb_fail_msg());
	cb_fail_clear();
	cb_acc_free(&a);
	cb_acc_base_free(b);

	static const char *const broken[] = {
		"{\"schema\": \"collbench-results\", \"acc",
		"[1, 2]",
		"{\"acceptance\": {\"nodes\": [], \"hosts\": []}}",
		("{\"acceptance\": {\"nodes\": [{\"name\": \"a\"}], \"hosts\": "
		 "[{\"name\": \"a\"}], \"pairs\": [{\"a\": 0, \"b\": 5}]}}"),
		"{} {}",
	};
	for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
		snprintf(bad, sizeof(bad), "%s/bad.json", dir);
		f = fopen(bad, "w");
		fputs(broken[i], f);
		fclose(f);
		b = NULL;
		CHECK(cb_acc_base_load(bad, &b) == CB_ERR_USAGE && !b);
		printf("  broken %zu: %s\n", i, cb_fail_msg());
		CHECK(cb_fail_msg() && !strchr(cb_fail_msg(), '\n'));
		cb_fail_clear();
	}
	CHECK(cb_acc_base_load("/nonexistent/x.json", &b) == CB_ERR_USAGE);
	cb_fail_clear();
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	CHECK(system(path) == 0);
}

static cb_status_t expect(const char *text, uint64_t bw_bytes,
                          struct cb_acc_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->bw_bytes = bw_bytes;
	return cb_acc_expect_parse(text, strlen(text), "e.txt", s);
}

static void test_bands(void)
{
	const char *t = "bw_gbps = 5\n"
	                "bw_gbps[1M-16M] = 10 # the large messages\n"
	                "bw_gbps[32M-64M] = 20\n"
	                "lat_us[0-64] = 3\n";
	struct cb_acc_settings s;

	CHECK(expect(t, 1 << 20, &s) == CB_OK && s.expect_bw_gbps == 10 &&
	      !strcmp(s.expect_bw_band, "1M-16M") && s.expect_lat_us == 3 &&
	      !strcmp(s.expect_lat_band, "0-64"));
	CHECK(expect(t, 256 << 10, &s) == CB_OK && s.expect_bw_gbps == 5 &&
	      !s.expect_bw_band[0]);
	CHECK(expect(t, 48 << 20, &s) == CB_OK && s.expect_bw_gbps == 20);
	CHECK(expect("bw_gbps[1M-4M] = 100Gb/s\n", 2 << 20, &s) == CB_OK &&
	      s.expect_bw_gbps == 12.5);
	/* the old flat lines as before */
	CHECK(expect("bw_gbps = 11.5\nlat_us = 3\n", 1 << 20, &s) == CB_OK &&
	      s.expect_bw_gbps == 11.5 && s.expect_lat_us == 3);

	static const struct {
		const char *text, *want;
	} bad[] = {
		{ "bw_gbps[1M-16M] = 1\nbw_gbps[8M-32M] = 2\n",
		  "line 2: this bw_gbps band overlaps the one on line 1" },
		{ "# x\nbw_gbps[16M-1M] = 1\n", "line 2: band [16M-1M]" },
		{ "bw_gbps[1M16M] = 1\n", "line 1: band '1M16M'" },
		{ "bw_gbps[1M-16M = 1\n", "line 1: a band is [LO-HI]" },
		{ "bw_gbps[a-b] = 1\n", "line 1: band [a-b]" },
		{ "bw_gbps[1M-2M] = fast\n", "line 1: bw_gbps" },
		{ "busbw[1M-2M] = 1\n", "line 1: unknown key 'busbw'" },
		{ "bw_gbps = 1\nbw_gbps = 2\n", "line 2: bw_gbps again" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		s.expect_bw_gbps = -1;
		cb_status_t st = expect(bad[i].text, 1 << 20, &s);
		printf("  band %zu: %s\n", i, cb_fail_msg());
		CHECK(st == CB_ERR_USAGE && cb_fail_msg() &&
		      strstr(cb_fail_msg(), bad[i].want));
		CHECK(s.expect_bw_gbps == 0); /* left alone */
		cb_fail_clear();
	}
}

static void pass(struct cb_acc *a, double t0, double t1, int x, int y,
                 double min)
{
	a->passes = realloc(a->passes,
	                    (size_t)(a->npasses + 1) * sizeof(*a->passes));
	a->passes[a->npasses++] = (struct cb_acc_pass){ .t0_s = t0,
		                                        .t_s = t1,
		                                        .median_bw_gbps = 1,
		                                        .min_bw_gbps = min,
		                                        .min_a = x,
		                                        .min_b = y };
}

static void test_windows(void)
{
	struct cb_acc a;

	cluster(&a, 4);
	a.noise = (struct cb_acc_noise){ .have = 1, .floor_gbps = 0.8 };
	pass(&a, 0, 3, 0, 1, 0.95);
	pass(&a, 3, 6, 1, 2, 0.9);
	pass(&a, 6, 9, 2, 3, 0.3); /* the link slow at times */
	pass(&a, 9, 12, 0, 2, 0.92);
	cb_acc_judge_windows(&a); /* no --window: nothing */
	CHECK(a.nwindows == 0 && a.nfindings == 0);
	a.set.window_s = 5;
	cb_acc_judge_windows(&a);
	show("windows", &a);
	CHECK(a.nwindows == 2 && a.nfindings == 1);
	CHECK(count(&a, "path",
	            "window 5-10 s: its slowest pair h2 - h3 at "
	            "0.3 GB/s (the pass from 6.0 to 9.0 s)"));
	CHECK(a.windows[0].a == 1 && !a.windows[0].outside &&
	      a.windows[1].outside);
	CHECK(a.stage[CB_ACC_BURN].state == CB_ACC_FAIL);
	cb_acc_free(&a);
}

/* Pass @k of a burn over a->pairs at @bw each (pair j's both ways), as
 * the burn records it: every pair's figure kept. */
static void pass_of(struct cb_acc *a, int k, const double *bw, double coll)
{
	for (int j = 0; j < a->npairs; j++)
		a->pairs[j].bw_ab_gbps = a->pairs[j].bw_ba_gbps = bw[j];
	cb_acc_pass_summary(a, 3.0 * (k + 1), coll);
	a->passes[a->npasses - 1].t0_s = 3.0 * k;
}

/* Against each pair's own passes: one pair a little slower in every pass
 * (below the floor, but always) is not "slow at times", nor one at 60% of
 * its own median once (shared cores dip so); a pair at a third in one
 * pass is, with its own median said; so is an allreduce at a fifth
 * of its median in a pass whose pairs were all within. */
static void test_windows_self(void)
{
	struct cb_acc a;
	/* pairs h0-h1 h0-h2 h0-h3 h1-h2 h1-h3 h2-h3 */
	static const double bw[5][6] = {
		{ 1.00, 0.98, 0.76, 1.02, 0.99, 1.01 },
		{ 0.97, 1.01, 0.74, 0.60, 1.03, 0.98 }, /* a dip, not half */
		{ 1.02, 0.99, 0.72, 1.01, 0.97, 0.33 },
		{ 0.99, 1.03, 0.78, 0.98, 1.00, 1.02 },
		{ 1.01, 0.97, 0.75, 1.00, 1.02, 0.99 },
	};

	cluster(&a, 4);
	a.set.window_s = 3;
	a.noise = (struct cb_acc_noise){ .have = 1, .floor_gbps = 0.8 };
	static const double coll[5] = { 2.0, 1.7, 2.1, 1.9, 0.4 };
	for (int k = 0; k < 5; k++)
		pass_of(&a, k, bw[k], coll[k]);
	cb_acc_judge_windows(&a);
	show("windows-self", &a);
	CHECK(a.nwindows == 5 && a.nfindings == 2);
	CHECK(count(&a, "job",
	            "window 12-15 s: the allreduce of the pass from 12.0 to "
	            "15.0 s at 0.4 GB/s busbw, 21% of its median 1.9 GB/s "
	            "over 5 passes"));
	CHECK(count(&a, "path",
	            "window 6-9 s: its slowest pair h2 - h3 at 0.33 GB/s (the "
	            "pass from 6.0 to 9.0 s), 34% of that pass's median 0.98 "
	            "GB/s and 33% of its own median over 5 passes"));
	for (int w = 0; w < 5; w++)
		CHECK(a.windows[w].outside == (w == 2 || w == 4));
	CHECK(a.windows[2].a == 2 && a.windows[2].b == 3);
	cb_acc_free(&a);

	/* two passes: no pair's own median; the floor alone, as before */
	cluster(&a, 4);
	a.set.window_s = 3;
	a.noise = (struct cb_acc_noise){ .have = 1, .floor_gbps = 0.8 };
	for (int k = 0; k < 2; k++)
		pass_of(&a, k, bw[k], coll[4 * k]);
	cb_acc_judge_windows(&a);
	CHECK(a.nwindows == 2 && a.nfindings == 2);
	CHECK(count(&a, "path", "its slowest pair h0 - h3 at 0.76 GB/s") == 1);
	cb_acc_free(&a);
}

/* A burn of @n passes whose median pairs were @m, on a 4-host record. */
static void drift(struct cb_acc *a, const double *m, int n)
{
	cluster(a, 4);
	for (int i = 0; i < n; i++) {
		pass(a, 3.0 * i, 3.0 * (i + 1), 0, 1, m[i]);
		a->passes[i].median_bw_gbps = m[i];
	}
	cb_acc_judge_drift(a);
	show("drift", a);
}

static void test_drift(void)
{
	struct cb_acc a;
	/* the false alarm seen on shared cores: passes 5% apart, the last
	 * at half (then the old first-to-last rule failed the run) */
	static const double busy_last[6] = { 4.87, 4.6, 5.0, 4.7, 4.9, 2.54 };
	/* two busy passes among steady ones */
	static const double busy_two[8] = { 4.9, 4.7, 2.6, 5.0,
		                            2.7, 4.8, 4.6, 4.95 };
	static const double step[6] = { 5.0, 4.9, 5.1, 2.5, 2.45, 2.55 };
	static const double slide[6] = { 5.0, 4.5, 4.0, 3.5, 3.0, 2.5 };
	static const double noisy_slide[6] = { 5.0, 3.9, 4.6, 3.3, 3.6, 3.8 };
	static const double two[2] = { 4.9, 2.4 };

	drift(&a, busy_last, 6);
	CHECK(a.nfindings == 0 && a.nwarnings == 0);
	cb_acc_free(&a);
	drift(&a, busy_two, 8);
	CHECK(a.nfindings == 0 && a.nwarnings == 0);
	cb_acc_free(&a);
	/* passes that vary by 10-40% end 15% lower: within their spread */
	drift(&a, noisy_slide, 6);
	CHECK(a.nfindings == 0 && a.nwarnings == 0);
	cb_acc_free(&a);
	drift(&a, step, 6);
	CHECK(a.nfindings == 1 &&
	      count(&a, "job",
	            "the median pair's bandwidth drifted from 4.95 GB/s (the "
	            "first 2 passes) to 2.55 GB/s at best (the last 2), 52% "
	            "of it over 6 passes") == 1);
	cb_acc_free(&a);
	drift(&a, slide, 6);
	CHECK(a.nfindings == 1 &&
	      count(&a, "job",
	            "drifted from 4.75 GB/s (the first 2 passes) "
	            "to 3 GB/s at best") == 1);
	cb_acc_free(&a);
	drift(&a, two, 2);
	CHECK(a.nfindings == 0 && a.nwarnings == 1 &&
	      strstr(a.warnings[0].line, "fell from 4.9 to 2.4 GB/s between "
	                                 "the first and the last of 2 "
	                                 "passes: too few to tell"));
	cb_acc_free(&a);
}

static void test_exit(void)
{
	CHECK(cb_acc_exit(CB_OK) == CB_ACC_EXIT_PASS);
	CHECK(cb_acc_exit(CB_ERR_USAGE) == CB_ACC_EXIT_USAGE);
	CHECK(cb_acc_exit(CB_ERR_TIMEOUT) == CB_ACC_EXIT_NORUN);
	CHECK(cb_acc_exit(CB_ERR_PEER) == CB_ACC_EXIT_NORUN);
	CHECK(cb_acc_exit(CB_ERR_UNAVAILABLE) == CB_ACC_EXIT_UNAVAIL);
	CHECK(CB_ACC_EXIT_NORUN != CB_ACC_EXIT_FAIL);
}

int main(void)
{
	cb_log_level = CB_LOG_ERROR;
	test_baseline();
	test_bands();
	test_windows();
	test_windows_self();
	test_drift();
	test_exit();
	return check_result("accept-baseline");
}
