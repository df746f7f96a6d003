/* SPDX-License-Identifier: MIT */
/*
 * reports/compare.c - two runs side by side: "is the cluster as fast as
 * before the re-cabling?"
 *
 * Rows are matched by what was measured (collective, algorithm,
 * transport, dtype, op, ranks, hosts, bytes, in-place, root), in BASE's
 * order; each key is used once, so repeated rows pair up in order.  The
 * metric is busbw (higher is better), or the time (lower is better) for
 * rows that move no bandwidth: 0 bytes, barrier, one rank.
 */
#include "reports/results.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int key_cmp(const struct cb_row *x, const struct cb_row *y)
{
	int c;

	if ((c = strcmp(x->coll, y->coll)) || (c = strcmp(x->algo, y->algo)) ||
	    (c = strcmp(x->transport, y->transport)) ||
	    (c = strcmp(x->dtype, y->dtype)) || (c = strcmp(x->op, y->op)))
		return c;
#define CMP(f)                                                                 \
	if (x->f != y->f)                                                      \
		return x->f < y->f ? -1 : 1;
	CMP(ranks)
	CMP(hosts)
	CMP(bytes)
	CMP(inplace)
	CMP(root)
#undef CMP
	return 0;
}

static int by_key(const void *a, const void *b)
{
	const struct cb_row *const *x = a, *const *y = b;
	int c = key_cmp(*x, *y);

	/* equal keys keep file order, so repeats pair up in order */
	return c ? c : (*x < *y ? -1 : *x > *y);
}

static void key_str(const struct cb_row *r, char *buf, size_t n)
{
	char root[16] = "-";

	if (r->root >= 0)
		snprintf(root, sizeof(root), "%d", r->root);
	snprintf(buf, n, "%-14s %-12s %-8s %-8s %-4s %5d %5d %12llu %-3s %4s",
	         r->coll, r->algo, r->transport, r->dtype, r->op, r->ranks,
	         r->hosts, (unsigned long long)r->bytes,
	         r->inplace ? "in" : "out", root);
}

static void header(FILE *f)
{
	fprintf(f, "# %-14s %-12s %-8s %-8s %-4s %5s %5s %12s %-3s %4s\n",
	        "collective", "algo", "transport", "dtype", "op", "ranks",
	        "hosts", "bytes", "pl.", "root");
}

/* The @count rows of @r (labelled @label) that @matched[i] says found no
 * partner: "only in base" or "only in new". */
static void only_in(FILE *f, const char *side, const char *label, int count,
                    const struct cb_results *r, const char *matched)
{
	char k[160];

	if (!count)
		return;
	fprintf(f, "#\n# only in %s %s (%d row%s):\n", side, label, count,
	        count == 1 ? "" : "s");
	header(f);
	for (size_t i = 0; i < r->nrows; i++)
		if (!matched[i]) {
			key_str(&r->rows[i], k, sizeof(k));
			fprintf(f, "  %s\n", k);
		}
}

void cb_compare(FILE *f, const struct cb_results *base,
                const struct cb_results *new_, double tol,
                struct cb_compare_sum *sum)
{
	const struct cb_row **idx = NULL;
	char *used = NULL, *hit = NULL, b[128], n[128], k[160];

	memset(sum, 0, sizeof(*sum));
	cb_results_label(base, b, sizeof(b));
	cb_results_label(new_, n, sizeof(n));
	idx = calloc(new_->nrows + 1, sizeof(*idx));
	used = calloc(new_->nrows + 1, 1);
	hit = calloc(base->nrows + 1, 1);
	if (!idx || !used || !hit) {
		fprintf(f, "# out of memory\n");
		sum->regressions = 1;
		goto out;
	}
	for (size_t i = 0; i < new_->nrows; i++)
		idx[i] = &new_->rows[i];
	qsort(idx, new_->nrows, sizeof(*idx), by_key);

	fprintf(f,
	        "# collbench compare: base %s, new %s; tolerance %.3g%%\n"
	        "# busbw in GB/s (higher is better); rows without bandwidth "
	        "(0 bytes, barrier, one rank)\n# by time in us (lower is "
	        "better); ratio = new / base\n#\n",
	        b, n, tol * 100);
	fprintf(f,
	        "# %-14s %-12s %-8s %-8s %-4s %5s %5s %12s %-3s %4s %6s "
	        "%11s %11s %7s  %s\n",
	        "collective", "algo", "transport", "dtype", "op", "ranks",
	        "hosts", "bytes", "pl.", "root", "metric", "base", "new",
	        "ratio", "verdict");
	for (size_t i = 0; i < base->nrows; i++) {
		const struct cb_row *x = &base->rows[i], *y = NULL;
		size_t lo = 0, hi = new_->nrows;
		while (lo < hi) { /* the first NEW row with x's key */
			size_t mid = (lo + hi) / 2;
			if (key_cmp(idx[mid], x) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < new_->nrows && !key_cmp(idx[lo], x); lo++) {
			size_t j = (size_t)(idx[lo] - new_->rows);
			if (!used[j]) {
				used[j] = 1;
				y = idx[lo];
				break;
			}
		}
		if (!y)
			continue;
		hit[i] = 1;
		sum->matched++;
		int bw = x->busbw_gbps > 0 && y->busbw_gbps >= 0 &&
		         isfinite(x->busbw_gbps) && isfinite(y->busbw_gbps);
		double vb = bw ? x->busbw_gbps : x->time_us;
		double vn = bw ? y->busbw_gbps : y->time_us;
		double ratio = vb > 0 && isfinite(vn) ? vn / vb : NAN;
		const char *verdict = "ok";
		if (y->wrong) {
			verdict = "WRONG VALUES";
			sum->wrong++;
			sum->regressions++;
		} else if (isfinite(ratio) &&
		           (bw ? ratio < 1 - tol : ratio > 1 + tol)) {
			verdict = "REGRESSION";
			sum->regressions++;
		} else if (isfinite(ratio) &&
		           (bw ? ratio > 1 + tol : ratio < 1 - tol)) {
			verdict = "faster";
			sum->improvements++;
		} else if (!isfinite(ratio)) {
			verdict = "no base value";
		}
		char r[16] = "-";
		if (isfinite(ratio))
			snprintf(r, sizeof(r), "%.3f", ratio);
		key_str(x, k, sizeof(k));
		fprintf(f, "  %s %6s %11.4g %11.4g %7s  %s\n", k,
		        bw ? "busbw" : "time", vb, vn, r, verdict);
	}
	for (size_t i = 0; i < base->nrows; i++)
		sum->only_base += !hit[i];
	for (size_t i = 0; i < new_->nrows; i++)
		sum->only_new += !used[i];
	only_in(f, "base", b, sum->only_base, base, hit);
	only_in(f, "new", n, sum->only_new, new_, used);
	fprintf(f,
	        "#\n# %d row%s compared: %d regression%s beyond %.3g%% (%d "
	        "with wrong values), %d faster; %d only in base, %d only in "
	        "new: %s\n",
	        sum->matched, sum->matched == 1 ? "" : "s", sum->regressions,
	        sum->regressions == 1 ? "" : "s", tol * 100, sum->wrong,
	        sum->improvements, sum->only_base, sum->only_new,
	        sum->regressions ? "REGRESSED" : "OK");
out:
	free(idx);
	free(used);
	free(hit);
}
