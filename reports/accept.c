/* SPDX-License-Identifier: MIT */
/*
 * reports/accept.c - the acceptance record's helpers and its plain-text
 * writers: the terminal table (stages, the host x host bandwidth and
 * latency matrices up to 32 nodes, the findings, the verdict), the CSV of
 * pairs and JUnit XML (one test case per stage and per host, for CI
 * dashboards).  JSON and HTML: reports/accept_json.c.
 */
#include "reports/accept.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/mem.h"
#include "reports/markup.h"

#define MATRIX_MAX 32 /* nodes shown as a matrix; more: the slowest pairs */

static const char *const state_names[] = {
	[CB_ACC_PASS] = "PASS",
	[CB_ACC_FAIL] = "FAIL",
	[CB_ACC_SKIP] = "SKIP",
};

static const char *const stage_names[CB_ACC_NSTAGES] = {
	[CB_ACC_INVENTORY] = "inventory",
	[CB_ACC_CONNECTIVITY] = "connectivity",
	[CB_ACC_PAIRWISE] = "pairwise",
	[CB_ACC_COLLECTIVES] = "collectives",
	[CB_ACC_BURN] = "burn",
};

const char *cb_acc_state_name(enum cb_acc_state s)
{
	return state_names[s];
}

const char *cb_acc_stage_name(enum cb_acc_stage_id s)
{
	return stage_names[s];
}

/* Room for one more of @n entries of @size in *@arr (*@cap of them;
 * first @first); -1 out of memory. */
static int grow(void **arr, int *cap, int n, size_t size, int first)
{
	if (n < *cap)
		return 0;
	int c = *cap ? 2 * *cap : first;
	void *p = realloc(*arr, (size_t)c * size);
	if (!p)
		return -1;
	*arr = p;
	*cap = c;
	return 0;
}

void cb_acc_find(struct cb_acc *a, enum cb_acc_stage_id stage, const char *kind,
                 int ha, int hb, const char *fmt, ...)
{
	va_list ap;

	if (grow((void **)&a->findings, &a->cap_findings, a->nfindings,
	         sizeof(*a->findings), 16))
		return;
	struct cb_acc_finding *f = &a->findings[a->nfindings++];
	f->stage = stage;
	snprintf(f->kind, sizeof(f->kind), "%s", kind);
	f->ha = ha;
	f->hb = hb;
	va_start(ap, fmt);
	vsnprintf(f->line, sizeof(f->line), fmt, ap);
	va_end(ap);
	a->fail = 1;
	a->stage[stage].state = CB_ACC_FAIL;
}

void cb_acc_warn(struct cb_acc *a, enum cb_acc_stage_id stage, const char *fmt,
                 ...)
{
	va_list ap;

	if (grow((void **)&a->warnings, &a->cap_warnings, a->nwarnings,
	         sizeof(*a->warnings), 4))
		return;
	struct cb_acc_warning *w = &a->warnings[a->nwarnings++];
	w->stage = stage;
	va_start(ap, fmt);
	vsnprintf(w->line, sizeof(w->line), fmt, ap);
	va_end(ap);
}

struct cb_acc_pair *cb_acc_pair_of(const struct cb_acc *a, int i, int j)
{
	for (int k = 0; k < a->npairs; k++)
		if ((a->pairs[k].a == i && a->pairs[k].b == j) ||
		    (a->pairs[k].a == j && a->pairs[k].b == i))
			return &a->pairs[k];
	return NULL;
}

void cb_acc_pair_take(struct cb_acc_pair *p, const struct cb_acc_pair *m,
                      enum cb_acc_stage_id stage, const struct cb_acc_pair *ctr)
{
	struct cb_acc_pair c = *ctr;
	int round = p->round;

	*p = *m;
	p->round = round;
	p->fail_stage = stage;
	p->retrans = c.retrans;
	p->out_segs = c.out_segs;
	p->ctr_meas = c.ctr_meas;
	p->ctr_lossy = c.ctr_lossy;
}

double cb_acc_pair_bw(const struct cb_acc_pair *p)
{
	if (!p->ok)
		return 0;
	return p->bw_ab_gbps < p->bw_ba_gbps ? p->bw_ab_gbps : p->bw_ba_gbps;
}

void cb_acc_ref_for(const struct cb_acc *a, const struct cb_acc_pair *p,
                    double *bw_gbps, double *bibw_gbps, double *lat_us)
{
	int alone = p && p->remeasured && a->alone_bw_gbps > 0;

	*bw_gbps = alone ? a->alone_bw_gbps : a->ref_bw_gbps;
	*bibw_gbps = alone ? a->alone_bibw_gbps : a->ref_bibw_gbps;
	*lat_us = alone ? a->alone_lat_us : a->ref_lat_us;
	/* Where ranks share cores, an 8-byte round trip measures the
	 * scheduler (a few us spinning, tens once a rank sleeps), and both
	 * directions at once measure who gets a core: latency and
	 * bidirectional bandwidth are then judged only against --expect-lat
	 * and --expect-bw; one direction at a time stays link-bound. */
	if (a->shared_cores[0]) {
		*lat_us = 0;
		*bibw_gbps = 0;
	}
}

void cb_acc_free(struct cb_acc *a)
{
	if (!a)
		return;
	for (int i = 0; i < a->npasses; i++)
		free(a->passes[i].bw_gbps);
	cb_free_all(a->hosts, a->nodes, a->pairs, a->findings, a->warnings,
	            a->passes, a->windows);
	memset(a, 0, sizeof(*a));
}

static cb_status_t done(FILE *f, const char *what)
{
	if (fflush(f) || ferror(f))
		return cb_fail(CB_ERR_SYS, "cannot write the %s: %s", what,
		               strerror(errno));
	return CB_OK;
}

/* ---- table ---- */

static int outside(const struct cb_acc *a, const struct cb_acc_pair *p, int lat)
{
	double rbw, rbibw, rlat;

	if (!p->ok)
		return 1;
	cb_acc_ref_for(a, p, &rbw, &rbibw, &rlat);
	if (lat)
		return (rlat > 0 &&
		        p->lat_p50_us > a->set.lat_tolerance * rlat) ||
		       (a->set.expect_lat_us > 0 &&
		        p->lat_p50_us > a->set.expect_lat_us);
	double bw = cb_acc_pair_bw(p);
	/* judged against the noise it measured: its floor, not the band */
	if (a->noise.have)
		return bw < a->noise.floor_gbps || (a->set.expect_bw_gbps > 0 &&
		                                    bw < a->set.expect_bw_gbps);
	return (rbw > 0 && bw < a->set.bw_tolerance * rbw) ||
	       (rbibw > 0 && p->bibw_gbps < a->set.bw_tolerance * rbibw) ||
	       (a->set.expect_bw_gbps > 0 && bw < a->set.expect_bw_gbps);
}

static void short_name(const char *name, char *buf, size_t bytes)
{
	snprintf(buf, bytes, "%.*s", (int)bytes - 1, name);
}

/* Row sends to column: bandwidth from the pair's direction; latency is the
 * same both ways. */
static void matrix(FILE *f, const struct cb_acc *a, int lat)
{
	char nm[12];

	fprintf(f,
	        "#\n# %s (row to column; * outside tolerance, + measured "
	        "again, x failed)",
	        lat ? "latency p50, us" : "bandwidth, GB/s");
	if (lat && a->ref_lat_us > 0)
		fprintf(f, "; median %.3g us\n", a->ref_lat_us);
	else if (!lat && a->ref_bw_gbps > 0)
		fprintf(f, "; median pair %.3g GB/s\n", a->ref_bw_gbps);
	else
		fputc('\n', f);
	if (!lat && a->alone_bw_gbps > 0)
		fprintf(f,
		        "# (pairs measured again alone, marked +, are judged "
		        "against control pairs measured alone: %.3g GB/s)\n",
		        a->alone_bw_gbps);
	fprintf(f, "# %-10s", "");
	for (int j = 0; j < a->nnodes; j++) {
		short_name(a->nodes[j].name, nm, sizeof(nm));
		fprintf(f, " %10s", nm);
	}
	fputc('\n', f);
	for (int i = 0; i < a->nnodes; i++) {
		short_name(a->nodes[i].name, nm, sizeof(nm));
		fprintf(f, "  %-10s", nm);
		for (int j = 0; j < a->nnodes; j++) {
			const struct cb_acc_pair *p =
			        i == j ? NULL : cb_acc_pair_of(a, i, j);
			if (!p) {
				fprintf(f, " %10s", "-");
				continue;
			}
			if (!p->ok) {
				fprintf(f, " %10s", "x");
				continue;
			}
			double v = lat         ? p->lat_p50_us
			           : p->a == i ? p->bw_ab_gbps
			                       : p->bw_ba_gbps;
			fprintf(f, " %9.3g%c", v,
			        outside(a, p, lat) ? '*'
			        : p->remeasured    ? '+'
			                           : ' ');
		}
		fputc('\n', f);
	}
}

static int by_bw(const void *x, const void *y)
{
	double a = cb_acc_pair_bw(*(const struct cb_acc_pair *const *)x);
	double b = cb_acc_pair_bw(*(const struct cb_acc_pair *const *)y);

	return (a > b) - (a < b);
}

static void slowest(FILE *f, const struct cb_acc *a)
{
	const struct cb_acc_pair **s =
	        calloc((size_t)a->npairs + 1, sizeof(*s));

	if (!s)
		return;
	for (int i = 0; i < a->npairs; i++)
		s[i] = &a->pairs[i];
	qsort(s, (size_t)a->npairs, sizeof(*s), by_bw);
	fprintf(f,
	        "#\n# %d nodes: too many for a matrix (see the CSV or JSON); "
	        "the slowest pairs:\n",
	        a->nnodes);
	for (int i = 0; i < a->npairs && i < 10; i++)
		fprintf(f, "  %-24s %-24s %9.3g GB/s %9.3g us%s\n",
		        a->nodes[s[i]->a].name, a->nodes[s[i]->b].name,
		        cb_acc_pair_bw(s[i]), s[i]->lat_p50_us,
		        s[i]->ok ? "" : " (failed)");
	free(s);
}

/* What moved on each host's counters, stage by stage (only where they
 * were read): "pairwise 1234/60123 carrier_changes +4". */
static void counters(FILE *f, const struct cb_acc *a)
{
	int any = 0;

	for (int h = 0; h < a->nhosts; h++) {
		const struct cb_acc_host *ho = &a->hosts[h];
		if (!ho->ctr0.have)
			continue;
		if (!any++)
			fprintf(f, "#\n# counters that moved, by stage (TCP "
			           "segments retransmitted/sent; links; RDMA "
			           "ports):\n");
		fprintf(f, "  %-24s", ho->name);
		for (int s = 0; s < CB_ACC_NSTAGES; s++) {
			const struct cb_hostctr *m = &ho->moved[s];
			uint32_t rs = 1u << CB_HC_RETRANS | 1u << CB_HC_OUTSEGS;
			if (!m->have)
				continue;
			fprintf(f, " %s", stage_names[s]);
			if ((m->have & rs) == rs)
				fprintf(f, " %llu/%llu",
				        (unsigned long long)m->v[CB_HC_RETRANS],
				        (unsigned long long)
				                m->v[CB_HC_OUTSEGS]);
			for (int i = CB_HC_OUTSEGS + 1; i < CB_HC_N; i++)
				if ((m->have & 1u << i) && m->v[i])
					fprintf(f, " %s +%llu",
					        cb_hostctr_name(i),
					        (unsigned long long)m->v[i]);
			fputc(';', f);
		}
		fputc('\n', f);
	}
}

cb_status_t cb_acc_write_table(FILE *f, const struct cb_acc *a)
{
	fprintf(f,
	        "# collbench %s acceptance: %d host%s, %d ranks, %d nodes "
	        "measured%s, transport %s\n",
	        a->version, a->nhosts, a->nhosts == 1 ? "" : "s", a->ranks,
	        a->nnodes,
	        a->set.rails ? " (every NIC: --rails)" : " (one rank per host)",
	        a->set.transport);
	fprintf(f,
	        "# tolerances: bandwidth %.0f%% of the median pair, latency "
	        "%.1fx the median",
	        100 * a->set.bw_tolerance, a->set.lat_tolerance);
	if (a->set.expect_bw_gbps > 0)
		fprintf(f, "; expected at least %.3g GB/s",
		        a->set.expect_bw_gbps);
	if (a->set.expect_bw_band[0])
		fprintf(f, " (--expect band %s)", a->set.expect_bw_band);
	if (a->set.expect_lat_us > 0)
		fprintf(f, "; expected at most %.3g us", a->set.expect_lat_us);
	if (a->set.expect_lat_band[0])
		fprintf(f, " (--expect band %s)", a->set.expect_lat_band);
	if (a->base.have)
		fprintf(f,
		        "\n# baseline %s: %d pairs compared, the median node's "
		        "pairs at %.0f%% of then (a pair may drop %.0f%%: "
		        "--baseline-tolerance or the noise); %d collectives",
		        a->base.file, a->base.compared, 100 * a->base.ratio,
		        a->base.allow_pct, a->base.colls);
	if (a->shared_cores[0])
		fprintf(f,
		        "\n# note: %s: figures say as much about the CPUs "
		        "as about the links; collectives, latency and "
		        "bidirectional bandwidth are shown, not judged against "
		        "the cluster (--expect-bw/--expect-lat still are)",
		        a->shared_cores);
	fprintf(f, "\n#\n# %-13s %-5s %9s  %s\n", "stage", "state", "time (s)",
	        "summary");
	for (int s = 0; s < CB_ACC_NSTAGES; s++) {
		const struct cb_acc_stage *st = &a->stage[s];
		char t[16] = "-";
		if (st->state != CB_ACC_SKIP)
			snprintf(t, sizeof(t), "%.2f", st->seconds);
		fprintf(f, "  %-13s %-5s %9s  %s\n", stage_names[s],
		        state_names[st->state], t, st->summary);
	}
	for (int i = 0; i < a->nplan; i++) {
		const struct cb_acc_plan_step *p = &a->plan[i];
		if (!i)
			fprintf(f, "#\n# pairwise plan: %-8s %6s %6s  %s\n",
			        "step", "rounds", "pairs", "why");
		fprintf(f, "                  %-8s %6d %6d  %s\n", p->name,
		        p->rounds, p->pairs, p->why);
	}
	if (a->noise.have)
		fprintf(f,
		        "# noise: sigma %.1f%% (repeats %.1f%%, cluster "
		        "%.1f%%); "
		        "a pair is outside below %.3g GB/s (%.1f sigma, or the "
		        "tolerance)\n",
		        100 * a->noise.sigma, 100 * a->noise.sigma_rep,
		        100 * a->noise.sigma_cl, a->noise.floor_gbps,
		        a->noise.k);
	if (a->npairs && a->nnodes <= MATRIX_MAX) {
		matrix(f, a, 0);
		matrix(f, a, 1);
	} else if (a->npairs) {
		slowest(f, a);
	}
	for (int i = 0; i < a->ncolls; i++) {
		const struct cb_acc_coll *c = &a->colls[i];
		if (!i)
			fprintf(f, "#\n# collectives over %d ranks:\n",
			        c->ranks);
		fprintf(f,
		        "  %-10s %-9s %10llu B  %10.1f us  busbw %7.3g GB/s"
		        "  model %7.3g GB/s  #wrong %llu\n",
		        c->coll, c->algo, (unsigned long long)c->bytes,
		        c->time_us, c->busbw_gbps, c->model_busbw_gbps,
		        (unsigned long long)c->wrong);
	}
	for (int i = 0; i < a->npasses; i++) {
		const struct cb_acc_pass *p = &a->passes[i];
		if (!i)
			fprintf(f,
			        "#\n# burn: %-4s %8s %12s %12s %11s %11s %6s\n",
			        "pass", "t (s)", "median GB/s", "min GB/s",
			        "median us", "allreduce", "slow");
		fprintf(f,
		        "        %4d %8.1f %12.3g %12.3g %11.3g %11.3g %6d\n",
		        i + 1, p->t_s, p->median_bw_gbps, p->min_bw_gbps,
		        p->median_lat_us, p->allreduce_busbw_gbps,
		        p->slow_pairs);
	}
	for (int i = 0; i < a->nwindows; i++) {
		const struct cb_acc_window *w = &a->windows[i];
		if (!i)
			fprintf(f,
			        "#\n# burn windows of %.0f s, the slowest "
			        "pair of each (against its own median over "
			        "the passes, where 3 measured it):\n",
			        a->set.window_s);
		if (w->a < 0) {
			fprintf(f, "  %6.0f-%-6.0f (no pass started)\n",
			        w->t0_s, w->t1_s);
			continue;
		}
		char self[32] = "";
		if (w->self_passes)
			snprintf(self, sizeof(self), " %5.0f%% of its own",
			         100 * w->self_ratio);
		fprintf(f, "  %6.0f-%-6.0f %-12s %-12s %9.3g GB/s%s%s\n",
		        w->t0_s, w->t1_s, a->nodes[w->a].name,
		        a->nodes[w->b].name, w->min_bw_gbps, self,
		        w->outside ? " *" : "");
	}
	counters(f, a);
	fprintf(f, "#\n");
	for (int i = 0; i < a->nfindings; i++)
		fprintf(f, "FAIL %s: %s\n", stage_names[a->findings[i].stage],
		        a->findings[i].line);
	for (int i = 0; i < a->nwarnings; i++)
		fprintf(f, "WARN %s: %s\n", stage_names[a->warnings[i].stage],
		        a->warnings[i].line);
	char nw[32] = "";
	if (a->nwarnings)
		snprintf(nw, sizeof(nw), "; %d warning%s", a->nwarnings,
		         a->nwarnings == 1 ? "" : "s");
	fprintf(f,
	        "VERDICT: %s (%d finding%s%s; %d pair%s outside the noise, "
	        "%d measured again for them, %d cleared; %.1f s)\n",
	        a->fail ? "FAIL" : "PASS", a->nfindings,
	        a->nfindings == 1 ? "" : "s", nw, a->suspects,
	        a->suspects == 1 ? "" : "s", a->retested, a->cleared,
	        a->seconds);
	return done(f, "table");
}

/* ---- CSV ---- */

static void csv_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

cb_status_t cb_acc_write_csv(FILE *f, const struct cb_acc *a)
{
	fputs("node_a,host_a,nic_a,node_b,host_b,nic_b,round,ok,connect_ms,"
	      "lat_p50_us,lat_p99_us,bw_ab_gbps,bw_ba_gbps,bibw_gbps,"
	      "remeasured,suspect,cleared,first_bw_gbps,outside,error\n",
	      f);
	for (int i = 0; i < a->npairs; i++) {
		const struct cb_acc_pair *p = &a->pairs[i];
		const struct cb_acc_node *x = &a->nodes[p->a],
		                         *y = &a->nodes[p->b];
		csv_str(f, x->name);
		fprintf(f, ",%s,%s,", a->hosts[x->host].name, x->nic);
		csv_str(f, y->name);
		fprintf(f,
		        ",%s,%s,%d,%d,%.3f,%.3f,%.3f,%.6g,%.6g,%.6g,%d,%d,%d,"
		        "%.6g,%d,",
		        a->hosts[y->host].name, y->nic, p->round, p->ok,
		        p->connect_ms, p->lat_p50_us, p->lat_p99_us,
		        p->bw_ab_gbps, p->bw_ba_gbps, p->bibw_gbps,
		        p->remeasured, p->suspect, p->cleared, p->first_bw_gbps,
		        outside(a, p, 0) || outside(a, p, 1));
		csv_str(f, p->error);
		fputc('\n', f);
	}
	return done(f, "CSV");
}

/* ---- JUnit XML ---- */

/* Does finding @k concern host @h? (a group names its hosts in the line) */
static int about(const struct cb_acc *a, const struct cb_acc_finding *k, int h)
{
	if (k->ha == h || k->hb == h)
		return 1;
	if (strcmp(k->kind, "group"))
		return 0;
	const char *n = a->hosts[h].name, *p = k->line;
	size_t len = strlen(n);
	while ((p = strstr(p, n))) {
		char before = p == k->line ? ' ' : p[-1], after = p[len];
		if ((before == ' ' || before == ',') &&
		    (after == ',' || after == ' ' || after == ':' || !after))
			return 1;
		p += len;
	}
	return 0;
}

static void testcase(FILE *f, const char *cls, const char *name, double s,
                     const struct cb_acc *a, int stage, int host, int skip)
{
	int n = 0;

	fprintf(f, "    <testcase classname=\"%s\" name=\"", cls);
	cb_markup_esc(f, name);
	fprintf(f, "\" time=\"%.3f\">", s);
	for (int i = 0; i < a->nfindings; i++) {
		const struct cb_acc_finding *k = &a->findings[i];
		if ((stage >= 0 && (int)k->stage != stage) ||
		    (host >= 0 && !about(a, k, host)))
			continue;
		if (!n++) {
			fputs("\n      <failure message=\"", f);
			cb_markup_esc(f, k->line);
			fputs("\">", f);
		}
		fprintf(f, "FAIL %s: ", stage_names[k->stage]);
		cb_markup_esc(f, k->line);
		fputc('\n', f);
	}
	if (n)
		fputs("</failure>\n    ", f);
	else if (skip)
		fputs("<skipped/>", f);
	fputs("</testcase>\n", f);
}

cb_status_t cb_acc_write_junit(FILE *f, const struct cb_acc *a)
{
	int sf = 0, hf = 0, skipped = 0;

	for (int s = 0; s < CB_ACC_NSTAGES; s++) {
		sf += a->stage[s].state == CB_ACC_FAIL;
		skipped += a->stage[s].state == CB_ACC_SKIP;
	}
	for (int h = 0; h < a->nhosts; h++)
		for (int i = 0; i < a->nfindings; i++)
			if (about(a, &a->findings[i], h)) {
				hf++;
				break;
			}
	fprintf(f,
	        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	        "<testsuites name=\"collbench acceptance\" tests=\"%d\" "
	        "failures=\"%d\" time=\"%.3f\">\n",
	        CB_ACC_NSTAGES + a->nhosts, sf + hf, a->seconds);
	fprintf(f,
	        "  <testsuite name=\"acceptance.stages\" tests=\"%d\" "
	        "failures=\"%d\" skipped=\"%d\">\n",
	        CB_ACC_NSTAGES, sf, skipped);
	for (int s = 0; s < CB_ACC_NSTAGES; s++)
		testcase(f, "acceptance.stage", stage_names[s],
		         a->stage[s].seconds, a, s, -1,
		         a->stage[s].state == CB_ACC_SKIP);
	fprintf(f,
	        "  </testsuite>\n  <testsuite name=\"acceptance.hosts\" "
	        "tests=\"%d\" failures=\"%d\">\n",
	        a->nhosts, hf);
	for (int h = 0; h < a->nhosts; h++)
		testcase(f, "acceptance.host", a->hosts[h].name, 0, a, -1, h,
		         0);
	fputs("  </testsuite>\n</testsuites>\n", f);
	return done(f, "JUnit XML");
}
