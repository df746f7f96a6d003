/* SPDX-License-Identifier: MIT */
/*
 * acceptance/baseline.c - --baseline FILE: what dropped since an earlier
 * acceptance run (its JSON, as -O x.json writes it, read by baseline_read.c).
 *
 * The cluster judges its pairs against its own median, so a fault that
 * slows most pairs alike (a whole-fabric regression: a firmware, a driver,
 * a switch setting; two halves behind one bad uplink) becomes the median
 * and is not seen.  Against a baseline it is: each pair's bandwidth now
 * over then, matched by the nodes' names.
 *   - the fabric: the median over nodes of each node's median ratio (one
 *     bad host does not move it) dropped beyond the tolerance;
 *   - a node: its median ratio dropped beyond the tolerance, and below
 *     what the fabric as a whole did by --bw-tolerance (or a pair's
 *     noise, if wider);
 *   - a pair: likewise, neither end named, measured more than once this
 *     run (one measurement may be a busy moment: said in a warning);
 *   - a collective of the same name and size: its busbw dropped (not
 *     where ranks share cores: it measures the CPUs there).
 * "Beyond the tolerance" is beyond --baseline-tolerance (5%) and beyond
 * what the noise both runs measured allows for a ratio of two such
 * measurements (k robust sigmas of ln bandwidth, k at least the run's and
 * enough that a healthy run names none of the pairs (nodes) judged with
 * 99% confidence; less for a median of m).  What could not be compared (hosts
 * new or absent, another --bw-bytes) is said; a baseline with nothing in common
 * is refused.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acceptance/accept.h"
#include "core/mem.h"
#include "core/strbuf.h"

static int base_host(const struct cb_acc_base *b, const char *name)
{
	for (int i = 0; i < b->nhosts; i++)
		if (!strcmp(b->hosts[i], name))
			return i;
	return -1;
}

/* "1M" for the messages. */
static void size_str(uint64_t v, char *buf, size_t n)
{
	if (v >= (1u << 20) && v % (1u << 20) == 0)
		snprintf(buf, n, "%lluM", (unsigned long long)(v >> 20));
	else if (v >= 1024 && v % 1024 == 0)
		snprintf(buf, n, "%lluK", (unsigned long long)(v >> 10));
	else
		snprintf(buf, n, "%llu", (unsigned long long)v);
}

cb_status_t cb_acc_base_check(const struct cb_acc_base *b,
                              const struct cb_acc *a)
{
	int common = 0;
	char here[200] = "", there[200] = "", s1[24], s2[24], s3[24], s4[24];
	size_t n = 0, m = 0;

	for (int h = 0; h < a->nhosts; h++) {
		common += base_host(b, a->hosts[h].name) >= 0;
		if (h < 4)
			cb_buf_appendf(here, sizeof(here), &n, "%s%s",
			               h ? ", " : "", a->hosts[h].name);
	}
	for (int h = 0; h < b->nhosts && h < 4; h++)
		cb_buf_appendf(there, sizeof(there), &m, "%s%s", h ? ", " : "",
		               b->hosts[h]);
	if (!common)
		return cb_fail(CB_ERR_USAGE,
		               "--baseline %s: another cluster: none of its %d "
		               "hosts (%s%s) is in this run (%s%s)",
		               b->path, b->nhosts, there,
		               b->nhosts > 4 ? ", ..." : "", here,
		               a->nhosts > 4 ? ", ..." : "");
	if (b->rails != a->set.rails)
		return cb_fail(CB_ERR_USAGE,
		               "--baseline %s: measured %s --rails, this run "
		               "%s: its nodes are not these",
		               b->path, b->rails ? "with" : "without",
		               a->set.rails ? "with" : "without");
	if (b->bw_bytes != a->set.bw_bytes &&
	    b->coll_bytes != a->set.coll_bytes) {
		size_str(b->bw_bytes, s1, sizeof(s1));
		size_str(a->set.bw_bytes, s2, sizeof(s2));
		size_str(b->coll_bytes, s3, sizeof(s3));
		size_str(a->set.coll_bytes, s4, sizeof(s4));
		return cb_fail(CB_ERR_USAGE,
		               "--baseline %s: other sizes: --bw-bytes %s and "
		               "--coll-bytes %s there, %s and %s here: nothing "
		               "to compare",
		               b->path, s1, s3, s2, s4);
	}
	return CB_OK;
}

/* The drop a median of @m ratios may show from noise alone. */
/* z with P(N(0,1) > z) = @p (bisection: a few calls a run). */
static double z_upper(double p)
{
	double lo = 0, hi = 10;

	for (int i = 0; i < 60; i++) {
		double mid = (lo + hi) / 2;
		if (0.5 * erfc(mid / sqrt(2.0)) > p)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* The drop a median of @m ratios may show from noise alone, one of
 * @tests judged alike: the spread of a ratio of two runs' measurements
 * (this run's sigma and the baseline's, or this one's twice), ~1.25 /
 * sqrt(m) of it for a median, at the run's k or at what keeps a healthy
 * run's chance of naming any of the @tests under 1%, whichever is more. */
static double allowed(const struct cb_acc *a, const struct cb_acc_base *b,
                      int m, int tests)
{
	double tol = a->set.baseline_tolerance, s1, s2, k;

	if (!a->noise.have || m < 1)
		return tol;
	s1 = a->noise.sigma_rep;
	s2 = b->sigma_rep > 0 ? b->sigma_rep : s1;
	k = z_upper(0.01 / (tests > 1 ? tests : 1));
	k = k > a->noise.k ? k : a->noise.k;
	double sig = sqrt(s1 * s1 + s2 * s2) * (m > 1 ? 1.25 / sqrt(m) : 1);
	double d = 1 - exp(-k * sig);
	return d > tol ? d : tol;
}

struct key {
	uint64_t k;
	double bw;
};

static int by_key(const void *x, const void *y)
{
	uint64_t a = ((const struct key *)x)->k, b = ((const struct key *)y)->k;

	return (a > b) - (a < b);
}

static int by_name(const void *x, const void *y, void *arg)
{
	const struct cb_acc_base *b = arg;

	return strcmp(b->names[*(const int *)x], b->names[*(const int *)y]);
}

/* Each record pair's ratio now / then (<= 0: not compared): the base's
 * names and pairs sorted once, so 4096 hosts cost n log n, not n^2. */
static int ratios(const struct cb_acc *a, const struct cb_acc_base *b,
                  double *r)
{
	int *order = calloc((size_t)b->nnames + 1, sizeof(int));
	int *map = calloc((size_t)a->nnodes + 1, sizeof(int));
	struct key *keys = calloc((size_t)b->npairs + 1, sizeof(*keys));
	int k = 0, nk = 0;

	for (int i = 0; i < a->npairs; i++)
		r[i] = 0;
	if (!order || !map || !keys || b->bw_bytes != a->set.bw_bytes)
		goto out;
	for (int i = 0; i < b->nnames; i++)
		order[i] = i;
	qsort_r(order, (size_t)b->nnames, sizeof(int), by_name, (void *)b);
	for (int x = 0; x < a->nnodes; x++) {
		int lo = 0, hi = b->nnames - 1;
		map[x] = -1;
		while (lo <= hi) {
			int mid = (lo + hi) / 2,
			    c = strcmp(a->nodes[x].name, b->names[order[mid]]);
			if (!c) {
				map[x] = order[mid];
				break;
			}
			if (c < 0)
				hi = mid - 1;
			else
				lo = mid + 1;
		}
	}
	for (int j = 0; j < b->npairs; j++) {
		const struct cb_acc_base_pair *q = &b->pairs[j];
		uint64_t lo = (uint64_t)(q->a < q->b ? q->a : q->b),
		         hi = (uint64_t)(q->a < q->b ? q->b : q->a);
		if (q->bw_gbps > 0)
			keys[nk++] = (struct key){ lo << 32 | hi, q->bw_gbps };
	}
	qsort(keys, (size_t)nk, sizeof(*keys), by_key);
	for (int i = 0; i < a->npairs; i++) {
		const struct cb_acc_pair *p = &a->pairs[i];
		int x = map[p->a], y = map[p->b];
		if (x < 0 || y < 0 || !p->ok)
			continue;
		struct key want = { (uint64_t)(x < y ? x : y) << 32 |
			                    (uint64_t)(x < y ? y : x),
			            0 };
		const struct key *got =
		        bsearch(&want, keys, (size_t)nk, sizeof(*keys), by_key);
		if (got) {
			r[i] = cb_acc_pair_bw(p) / got->bw;
			k++;
		}
	}
out:
	cb_free_all(order, map, keys);
	return k;
}

/* Node @x's median ratio over its compared pairs (@m: how many). */
static double node_ratio(const struct cb_acc *a, const double *r, int x,
                         double *tmp, int *m)
{
	int k = 0;

	for (int i = 0; i < a->npairs; i++)
		if (r[i] > 0 && (a->pairs[i].a == x || a->pairs[i].b == x))
			tmp[k++] = r[i];
	*m = k;
	return cb_acc_median(tmp, k);
}

static void skipped(struct cb_acc *a, const struct cb_acc_base *b)
{
	char *s = a->base.skipped;
	size_t n = 0, cap = sizeof(a->base.skipped);
	int k = 0;

	for (int h = 0; h < a->nhosts; h++)
		if (base_host(b, a->hosts[h].name) < 0)
			cb_buf_appendf(
			        s, cap, &n, "%s%s",
			        k++ ? ", " : "new here: ", a->hosts[h].name);
	k = 0;
	for (int h = 0; h < b->nhosts; h++) {
		int found = 0;
		for (int i = 0; i < a->nhosts && !found; i++)
			found = !strcmp(a->hosts[i].name, b->hosts[h]);
		if (!found)
			cb_buf_appendf(s, cap, &n, "%s%s",
			               k++ ? ", "
			               : n ? "; absent: "
			                   : "absent: ",
			               b->hosts[h]);
	}
	if (b->bw_bytes != a->set.bw_bytes)
		cb_buf_appendf(s, cap, &n,
		               "%spairs (--bw-bytes %llu there, %llu here)",
		               n ? "; " : "", (unsigned long long)b->bw_bytes,
		               (unsigned long long)a->set.bw_bytes);
	if (a->shared_cores[0] && a->ncolls)
		cb_buf_appendf(s, cap, &n, "%scollectives (%s)", n ? "; " : "",
		               a->shared_cores);
	else if (b->coll_bytes != a->set.coll_bytes && a->ncolls)
		cb_buf_appendf(s, cap, &n, "%scollectives (other sizes)",
		               n ? "; " : "");
}

static void judge_colls(struct cb_acc *a, const struct cb_acc_base *b)
{
	double tol = a->set.baseline_tolerance;

	for (int i = 0; !a->shared_cores[0] && i < a->ncolls; i++) {
		const struct cb_acc_coll *c = &a->colls[i];
		for (int j = 0; j < b->ncolls; j++) {
			const struct cb_acc_coll *o = &b->colls[j];
			if (strcmp(c->coll, o->coll) || c->bytes != o->bytes ||
			    o->busbw_gbps <= 0)
				continue;
			a->base.colls++;
			if (c->busbw_gbps < (1 - tol) * o->busbw_gbps)
				cb_acc_find(a, CB_ACC_COLLECTIVES, "job", -1,
				            -1,
				            "%s (%s): busbw %.3g GB/s, %.0f%% "
				            "below the baseline's %.3g GB/s "
				            "(beyond %.0f%%)",
				            c->coll, c->algo, c->busbw_gbps,
				            100 * (1 - c->busbw_gbps /
				                               o->busbw_gbps),
				            o->busbw_gbps, 100 * tol);
			break;
		}
	}
}

/* The fabric as a whole: one finding, with the pairs that dropped. */
static void judge_fabric(struct cb_acc *a, const double *r, double R,
                         double allow, enum cb_acc_stage_id stage)
{
	char list[300] = "";
	size_t n = 0;
	int shown = 0;

	for (int i = 0; i < a->npairs; i++)
		if (r[i] > 0 && r[i] < 1 - allow && shown++ < 6)
			cb_buf_appendf(list, sizeof(list), &n, "%s%s-%s",
			               shown > 1 ? ", " : "",
			               a->nodes[a->pairs[i].a].name,
			               a->nodes[a->pairs[i].b].name);
	cb_acc_find(a, stage, "job", -1, -1,
	            "the fabric: the median pair is %.0f%% below the "
	            "baseline %s (beyond %.0f%%); %d of %d pairs compared "
	            "dropped%s%s%s: %s",
	            100 * (1 - R), a->base.file, 100 * allow, a->base.dropped,
	            a->base.compared, shown ? " (" : "", list,
	            shown > 6 ? ", ...)"
	            : shown   ? ")"
	                      : "",
	            a->base.dropped == a->base.compared
	                    ? "every pair, a regression of the whole fabric "
	                      "(switches, firmware, drivers, settings)"
	                    : "most pairs: a switch or uplink they share, or "
	                      "the whole fabric");
}

void cb_acc_judge_base(struct cb_acc *a, const struct cb_acc_base *b)
{
	enum cb_acc_stage_id stage = a->npasses ? CB_ACC_BURN : CB_ACC_PAIRWISE;
	double *r = calloc((size_t)a->npairs + 1, sizeof(double));
	double *tmp = calloc((size_t)a->npairs + 1, sizeof(double));
	double *med = calloc((size_t)a->nnodes + 1, sizeof(double));
	unsigned char *named = calloc((size_t)a->nnodes + 1, 1);
	int nm = 0, paths = 0, once = 0, m;
	char olist[200] = "";
	size_t on = 0;

	if (!b || !r || !tmp || !med || !named)
		goto out;
	a->base.have = 1;
	snprintf(a->base.file, sizeof(a->base.file), "%s", b->path);
	a->base.compared = ratios(a, b, r);
	skipped(a, b);
	judge_colls(a, b);
	for (int x = 0; x < a->nnodes; x++) {
		double v = node_ratio(a, r, x, tmp, &m);
		if (m)
			med[nm++] = v;
	}
	if (!a->base.compared)
		goto out;
	double R = cb_acc_median(med, nm);
	double pair_allow = allowed(a, b, 1, a->base.compared);
	double fab_allow = allowed(a, b, a->base.compared, 1);
	a->base.ratio = R;
	a->base.allow_pct = 100 * pair_allow;
	for (int i = 0; i < a->npairs; i++)
		a->base.dropped += r[i] > 0 && r[i] < 1 - pair_allow;
	if (fab_allow > a->set.baseline_tolerance)
		cb_acc_warn(a, stage,
		            "baseline: repeats of a pair vary by %.0f%%: a "
		            "drop since the baseline under %.0f%% of the "
		            "fabric (%.0f%% of a pair) cannot be told",
		            a->noise.vary_pct, 100 * fab_allow,
		            100 * pair_allow);
	if (R < 1 - fab_allow)
		judge_fabric(a, r, R, pair_allow, stage);
	/* Nodes and pairs: beyond the tolerance, and below what the fabric
	 * did as far as the run's own judge asks (--bw-tolerance) or a pair's
	 * noise allows: a node as slow as the fabric is the fabric's. */
	double rel = 1 - pair_allow < a->set.bw_tolerance ? 1 - pair_allow
	                                                  : a->set.bw_tolerance;
	const char *what = a->set.rails ? "node" : "host";
	for (int x = 0; x < a->nnodes; x++) {
		double v = node_ratio(a, r, x, tmp, &m),
		       d = allowed(a, b, m, a->nnodes);
		if (!m || v >= 1 - d || v >= R * rel)
			continue;
		named[x] = 1;
		cb_acc_find(a, stage, "node", a->nodes[x].host, -1,
		            "%s %s: its median pair is %.0f%% below the "
		            "baseline (%d pairs; the fabric %+.0f%%): its NIC, "
		            "port or cable",
		            what, a->nodes[x].name, 100 * (1 - v), m,
		            100 * (R - 1));
	}
	for (int i = 0; i < a->npairs; i++) {
		const struct cb_acc_pair *p = &a->pairs[i];
		if (r[i] <= 0 || r[i] >= 1 - pair_allow || r[i] >= R * rel ||
		    named[p->a] || named[p->b])
			continue;
		/* One measurement may be a busy moment: said, not named. */
		if (!p->remeasured) {
			if (once++ < 4)
				cb_buf_appendf(olist, sizeof(olist), &on,
				               "%s%s-%s %.0f%%", on ? ", " : "",
				               a->nodes[p->a].name,
				               a->nodes[p->b].name,
				               100 * (r[i] - 1));
			continue;
		}
		if (paths++ == 8) {
			cb_acc_find(
			        a, stage, "path", -1, -1,
			        "more pairs dropped below the baseline than "
			        "these 8 (see the JSON's pairs)");
			break;
		}
		cb_acc_find(a, stage, "path", a->nodes[p->a].host,
		            a->nodes[p->b].host,
		            "path %s - %s: bandwidth %.3g GB/s, %.0f%% below "
		            "the baseline (the fabric %+.0f%%)",
		            a->nodes[p->a].name, a->nodes[p->b].name,
		            cb_acc_pair_bw(p), 100 * (1 - r[i]), 100 * (R - 1));
	}
	if (once)
		cb_acc_warn(
		        a, stage,
		        "baseline: %d pair%s measured once this run %s "
		        "below the baseline beyond %.0f%% (%s%s): not named "
		        "from one measurement",
		        once, once == 1 ? "" : "s", once == 1 ? "is" : "are",
		        100 * pair_allow, olist, once > 4 ? ", ..." : "");
out:
	if (b && a->base.have && (a->base.skipped[0] || !a->base.compared))
		cb_acc_warn(a, stage,
		            "baseline %s: %d pairs compared; not "
		            "compared: %s",
		            b->path, a->base.compared,
		            a->base.skipped[0] ? a->base.skipped
		                               : "no pair measured in both");
	cb_free_all(r, tmp, med, named);
}
