/* SPDX-License-Identifier: MIT */
/*
 * reports/accept_json.c - an acceptance run as a results document (the
 * run object every run has, the collectives stage's rows, and the
 * "acceptance" member: docs/results-schema.md), and its HTML page: a
 * verdict banner, the stages, the findings, a pair-bandwidth heatmap
 * (gnuplot, inline PNG) and the matrix.  The page is drawn from the JSON
 * member, so `collbench report accept.json` draws the same section.
 */
#include "reports/accept.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/log.h"
#include "reports/results.h"

static void add(json_object *o, const char *k, json_object *v)
{
	json_object_object_add(o, k, v);
}

static json_object *num(double v)
{
	char buf[32];

	if (!isfinite(v))
		return NULL;
	snprintf(buf, sizeof(buf), "%.6g", v);
	return json_object_new_double_s(v, buf);
}

static json_object *str(const char *s)
{
	return s && *s ? json_object_new_string(s) : NULL;
}

static json_object *nic_json(const struct cb_nic_info *n, const uint64_t *after,
                             int have_after, const char *const *names)
{
	json_object *o = json_object_new_object(), *c;

	add(o, "name", json_object_new_string(n->name));
	add(o, "kind", json_object_new_string(n->kind));
	add(o, "state", json_object_new_string(n->state));
	add(o, "speed_mbps",
	    n->speed_mbps < 0 ? NULL : json_object_new_int(n->speed_mbps));
	add(o, "mtu", n->mtu < 0 ? NULL : json_object_new_int(n->mtu));
	add(o, "driver", str(n->driver));
	add(o, "driver_version", str(n->driver_version));
	add(o, "firmware", str(n->firmware));
	add(o, "address", str(n->addr));
	c = json_object_new_object();
	for (int i = 0; names && names[i] && i < n->ncounters; i++) {
		json_object *v = json_object_new_object();
		add(v, "before",
		    json_object_new_int64((int64_t)n->counters[i]));
		add(v, "after",
		    have_after ? json_object_new_int64((int64_t)after[i])
		               : NULL);
		add(c, names[i], v);
	}
	add(o, "error_counters", c);
	return o;
}

/* The pairwise judge's noise, its plan and its warnings (only where the
 * run has them, so older documents and their readers are unchanged). */
static void plan_json(json_object *o, const struct cb_acc *a)
{
	json_object *v, *w;

	if (a->noise.have) {
		v = json_object_new_object();
		add(v, "sigma", num(a->noise.sigma));
		add(v, "sigma_repeats", num(a->noise.sigma_rep));
		add(v, "sigma_cluster", num(a->noise.sigma_cl));
		add(v, "k", num(a->noise.k));
		add(v, "floor_gbps", num(a->noise.floor_gbps));
		add(v, "vary_pct", num(a->noise.vary_pct));
		add(v, "tell_pct", num(a->noise.tell_pct));
		add(v, "sigma_nodes", num(a->noise.sigma_node));
		add(v, "node_pairs", json_object_new_int(a->noise.node_pairs));
		add(v, "tell_node_pct", num(a->noise.tell_node_pct));
		add(o, "noise", v);
	}
	if (a->nplan) {
		v = json_object_new_array();
		for (int i = 0; i < a->nplan; i++) {
			w = json_object_new_object();
			add(w, "step", json_object_new_string(a->plan[i].name));
			add(w, "rounds",
			    json_object_new_int(a->plan[i].rounds));
			add(w, "pairs", json_object_new_int(a->plan[i].pairs));
			add(w, "why", json_object_new_string(a->plan[i].why));
			json_object_array_add(v, w);
		}
		add(o, "plan", v);
	}
	if (a->nwarnings) {
		v = json_object_new_array();
		for (int i = 0; i < a->nwarnings; i++) {
			w = json_object_new_object();
			add(w, "stage",
			    json_object_new_string(
			            cb_acc_stage_name(a->warnings[i].stage)));
			add(w, "line",
			    json_object_new_string(a->warnings[i].line));
			add(w, "state", json_object_new_string("WARN"));
			json_object_array_add(v, w);
		}
		add(o, "warnings", v);
	}
}

static json_object *settings_json(const struct cb_acc_settings *set)
{
	json_object *v;

	v = json_object_new_object();
	add(v, "transport", json_object_new_string(set->transport));
	add(v, "rails", json_object_new_boolean(set->rails));
	add(v, "bw_tolerance", num(set->bw_tolerance));
	add(v, "lat_tolerance", num(set->lat_tolerance));
	add(v, "coll_tolerance", num(set->coll_tolerance));
	add(v, "expect_bw_gbps",
	    set->expect_bw_gbps > 0 ? num(set->expect_bw_gbps) : NULL);
	add(v, "expect_lat_us",
	    set->expect_lat_us > 0 ? num(set->expect_lat_us) : NULL);
	add(v, "bw_bytes", json_object_new_int64((int64_t)set->bw_bytes));
	add(v, "lat_iters", json_object_new_int(set->lat_iters));
	add(v, "coll_bytes", json_object_new_int64((int64_t)set->coll_bytes));
	add(v, "pair_timeout_s", num(set->pair_timeout_s));
	add(v, "duration_s", num(set->duration_s));
	/* only where given, so older documents are unchanged */
	if (set->expect_bw_band[0])
		add(v, "expect_bw_band", str(set->expect_bw_band));
	if (set->expect_lat_band[0])
		add(v, "expect_lat_band", str(set->expect_lat_band));
	if (set->window_s > 0)
		add(v, "window_s", num(set->window_s));
	return v;
}

static json_object *ctr_json(const struct cb_hostctr *c)
{
	json_object *o = json_object_new_object();

	for (int i = 0; i < CB_HC_N; i++)
		if (c->have & 1u << i)
			add(o, cb_hostctr_name(i),
			    json_object_new_int64((int64_t)c->v[i]));
	return o;
}

/* A host's counters: as first read, and what moved in each stage (only
 * where they were read, so older documents are unchanged). */
static void host_ctr_json(json_object *w, const struct cb_acc_host *ho)
{
	json_object *o, *m;

	if (!ho->ctr0.have)
		return;
	o = json_object_new_object();
	add(o, "start", ctr_json(&ho->ctr0));
	m = json_object_new_object();
	for (int s = 0; s < CB_ACC_NSTAGES; s++)
		if (ho->moved[s].have)
			add(m, cb_acc_stage_name(s), ctr_json(&ho->moved[s]));
	add(o, "moved", m);
	add(w, "counters", o);
}

static json_object *pairs_json(const struct cb_acc *a)
{
	json_object *v, *w;

	v = json_object_new_array();
	for (int i = 0; i < a->npairs; i++) {
		const struct cb_acc_pair *p = &a->pairs[i];
		w = json_object_new_object();
		add(w, "a", json_object_new_int(p->a));
		add(w, "b", json_object_new_int(p->b));
		add(w, "round", json_object_new_int(p->round));
		add(w, "ok", json_object_new_boolean(p->ok));
		add(w, "error", str(p->error));
		add(w, "connect_ms", p->ok ? num(p->connect_ms) : NULL);
		add(w, "lat_p50_us", p->ok ? num(p->lat_p50_us) : NULL);
		add(w, "lat_p99_us", p->ok ? num(p->lat_p99_us) : NULL);
		add(w, "bw_ab_gbps", p->ok ? num(p->bw_ab_gbps) : NULL);
		add(w, "bw_ba_gbps", p->ok ? num(p->bw_ba_gbps) : NULL);
		add(w, "bibw_gbps", p->ok ? num(p->bibw_gbps) : NULL);
		add(w, "remeasured", json_object_new_boolean(p->remeasured));
		add(w, "suspect", json_object_new_boolean(p->suspect));
		add(w, "cleared", json_object_new_boolean(p->cleared));
		add(w, "first_bw_gbps",
		    p->remeasured ? num(p->first_bw_gbps) : NULL);
		if (p->ctr_meas > 0) {
			add(w, "tcp_retrans_segs",
			    json_object_new_int64((int64_t)p->retrans));
			add(w, "tcp_out_segs",
			    json_object_new_int64((int64_t)p->out_segs));
		}
		json_object_array_add(v, w);
	}
	return v;
}

static json_object *findings_json(const struct cb_acc *a)
{
	json_object *v, *w;

	v = json_object_new_array();
	for (int i = 0; i < a->nfindings; i++) {
		const struct cb_acc_finding *k = &a->findings[i];
		json_object *hs = json_object_new_array();
		w = json_object_new_object();
		add(w, "stage",
		    json_object_new_string(cb_acc_stage_name(k->stage)));
		add(w, "kind", json_object_new_string(k->kind));
		/* an uplink: every host behind its leaf switch; a group
		 * the judge found: every host of it (of both, with hb) */
		int up = !strcmp(k->kind, "uplink");
		int fg = !up && !strcmp(k->kind, "group") && k->ha >= 0 &&
		         a->hosts[k->ha].fgroup > 0;
		for (int e = 0; e < 2; e++) {
			int x = e ? k->hb : k->ha;
			if (x < 0)
				continue;
			json_object_array_add(
			        hs, json_object_new_string(a->hosts[x].name));
			for (int h = 0; (up || fg) && h < a->nhosts; h++)
				if (h != x &&
				    (up ? a->hosts[h].leaf == a->hosts[x].leaf
				        : a->hosts[h].fgroup ==
				                     a->hosts[x].fgroup))
					json_object_array_add(
					        hs, json_object_new_string(
					                    a->hosts[h].name));
		}
		add(w, "hosts", hs);
		add(w, "line", json_object_new_string(k->line));
		add(w, "state", json_object_new_string("FAIL"));
		json_object_array_add(v, w);
	}
	return v;
}

/* --baseline's comparison and the burn's windows (only where the run
 * has them). */
static void base_json(json_object *o, const struct cb_acc *a)
{
	json_object *v, *w;

	if (a->base.have) {
		v = json_object_new_object();
		add(v, "file", str(a->base.file));
		add(v, "tolerance", num(a->set.baseline_tolerance));
		add(v, "pairs_compared", json_object_new_int(a->base.compared));
		add(v, "pairs_dropped", json_object_new_int(a->base.dropped));
		add(v, "collectives_compared",
		    json_object_new_int(a->base.colls));
		add(v, "ratio", a->base.compared ? num(a->base.ratio) : NULL);
		add(v, "allow_pct", num(a->base.allow_pct));
		add(v, "not_compared", str(a->base.skipped));
		add(o, "baseline", v);
	}
	if (!a->nwindows)
		return;
	v = json_object_new_array();
	for (int i = 0; i < a->nwindows; i++) {
		const struct cb_acc_window *x = &a->windows[i];
		w = json_object_new_object();
		add(w, "t0_s", num(x->t0_s));
		add(w, "t1_s", num(x->t1_s));
		add(w, "a", x->a >= 0 ? json_object_new_int(x->a) : NULL);
		add(w, "b", x->b >= 0 ? json_object_new_int(x->b) : NULL);
		add(w, "min_bw_gbps", x->a >= 0 ? num(x->min_bw_gbps) : NULL);
		add(w, "median_bw_gbps",
		    x->a >= 0 ? num(x->median_bw_gbps) : NULL);
		add(w, "failed_pairs", json_object_new_int(x->failed));
		add(w, "outside", json_object_new_boolean(x->outside));
		add(w, "self_ratio",
		    x->self_passes ? num(x->self_ratio) : NULL);
		json_object_array_add(v, w);
	}
	add(o, "windows", v);
}

static json_object *acc_json(const struct cb_acc *a)
{
	const struct cb_nic_reader *rd = cb_nic_reader_for(a->set.transport);
	json_object *o = json_object_new_object(), *v, *w;

	add(o, "verdict", json_object_new_string(a->fail ? "FAIL" : "PASS"));
	add(o, "seconds", num(a->seconds));
	add(o, "settings", settings_json(&a->set));
	v = json_object_new_object();
	add(v, "bw_gbps", num(a->ref_bw_gbps));
	add(v, "bibw_gbps", num(a->ref_bibw_gbps));
	add(v, "lat_us", num(a->ref_lat_us));
	add(v, "link_gbps", a->link_gbps > 0 ? num(a->link_gbps) : NULL);
	add(v, "alone_bw_gbps",
	    a->alone_bw_gbps > 0 ? num(a->alone_bw_gbps) : NULL);
	add(v, "alone_bibw_gbps",
	    a->alone_bibw_gbps > 0 ? num(a->alone_bibw_gbps) : NULL);
	add(v, "alone_lat_us",
	    a->alone_lat_us > 0 ? num(a->alone_lat_us) : NULL);
	add(o, "reference", v);
	plan_json(o, a);
	v = json_object_new_array();
	for (int s = 0; s < CB_ACC_NSTAGES; s++) {
		w = json_object_new_object();
		add(w, "name", json_object_new_string(cb_acc_stage_name(s)));
		add(w, "state",
		    json_object_new_string(
		            cb_acc_state_name(a->stage[s].state)));
		add(w, "seconds",
		    a->stage[s].state == CB_ACC_SKIP
		            ? NULL
		            : num(a->stage[s].seconds));
		add(w, "summary", json_object_new_string(a->stage[s].summary));
		json_object_array_add(v, w);
	}
	add(o, "stages", v);
	v = json_object_new_array();
	for (int h = 0; h < a->nhosts; h++) {
		const struct cb_acc_host *ho = &a->hosts[h];
		json_object *n = json_object_new_array();
		w = json_object_new_object();
		add(w, "name", json_object_new_string(ho->name));
		add(w, "ranks", json_object_new_int(ho->nranks));
		add(w, "nic", str(ho->nic));
		add(w, "address", str(ho->addr));
		add(w, "reported", json_object_new_boolean(ho->reported));
		for (int k = 0; k < ho->nnics; k++)
			json_object_array_add(
			        n, nic_json(&ho->nics[k], ho->after[k],
			                    ho->have_after,
			                    rd ? rd->counter_names : NULL));
		add(w, "nics", n);
		add(w, "differs", str(ho->differs));
		add(w, "switch", a->nleaves > 0 ? str(ho->sw) : NULL);
		if (ho->cpu_gbps > 0) {
			json_object *cpu = json_object_new_object();
			add(cpu, "copy_gbps", num(ho->cpu_gbps));
			add(cpu, "core_share", num(ho->cpu_share));
			add(w, "cpu", cpu);
		} else {
			add(w, "cpu", NULL);
		}
		host_ctr_json(w, ho);
		json_object_array_add(v, w);
	}
	add(o, "hosts", v);
	v = json_object_new_array();
	for (int i = 0; i < a->nnodes; i++) {
		w = json_object_new_object();
		add(w, "name", json_object_new_string(a->nodes[i].name));
		add(w, "host", json_object_new_int(a->nodes[i].host));
		add(w, "rank", json_object_new_int(a->nodes[i].rank));
		add(w, "nic", str(a->nodes[i].nic));
		json_object_array_add(v, w);
	}
	add(o, "nodes", v);
	add(o, "pairs", pairs_json(a));
	add(o, "findings", findings_json(a));
	v = json_object_new_array();
	for (int i = 0; i < a->ncolls; i++) {
		const struct cb_acc_coll *c = &a->colls[i];
		w = json_object_new_object();
		add(w, "collective", json_object_new_string(c->coll));
		add(w, "algo", json_object_new_string(c->algo));
		add(w, "bytes", json_object_new_int64((int64_t)c->bytes));
		add(w, "busbw_gbps", num(c->busbw_gbps));
		add(w, "model_busbw_gbps", num(c->model_busbw_gbps));
		add(w, "wrong", json_object_new_int64((int64_t)c->wrong));
		json_object_array_add(v, w);
	}
	add(o, "collectives", v);
	v = json_object_new_array();
	for (int i = 0; i < a->npasses; i++) {
		const struct cb_acc_pass *p = &a->passes[i];
		w = json_object_new_object();
		add(w, "t_s", num(p->t_s));
		add(w, "median_bw_gbps", num(p->median_bw_gbps));
		add(w, "min_bw_gbps", num(p->min_bw_gbps));
		add(w, "median_lat_us", num(p->median_lat_us));
		add(w, "allreduce_busbw_gbps", num(p->allreduce_busbw_gbps));
		add(w, "slow_pairs", json_object_new_int(p->slow_pairs));
		add(w, "failed_pairs", json_object_new_int(p->failed_pairs));
		if (p->min_a >= 0) { /* the slowest pair, and when it began */
			add(w, "t0_s", num(p->t0_s));
			add(w, "min_a", json_object_new_int(p->min_a));
			add(w, "min_b", json_object_new_int(p->min_b));
		}
		json_object_array_add(v, w);
	}
	add(o, "burn", v);
	base_json(o, a);
	return o;
}

/* The document: @a->meta's run object (or a bare one), the rows, and the
 * acceptance member. */
static cb_status_t acc_doc(const struct cb_acc *a, struct cb_results **out)
{
	struct cb_results *r;
	cb_status_t st;

	st = a->meta ? cb_results_from_meta(a->meta, &r) : cb_results_new(&r);
	if (st)
		return st;
	for (int i = 0; i < a->ncolls; i++) {
		const struct cb_acc_coll *c = &a->colls[i];
		struct cb_row w = {
			.ranks = c->ranks,
			.hosts = c->hosts,
			.bytes = c->bytes,
			.count = c->bytes / 4,
			.root = -1,
			.time_us = c->time_us,
			.busbw_gbps = c->busbw_gbps,
			.wrong = c->wrong,
			.model_us = NAN,
			.min_us = NAN,
			.p50_us = NAN,
			.p99_us = NAN,
			.max_us = c->time_us,
			.slowest = -1,
			.push_per_s = NAN,
			.pull_per_s = NAN,
			.stale_p50 = NAN,
			.stale_p99 = NAN,
			.stale_max = NAN,
		};
		snprintf(w.coll, sizeof(w.coll), "%s", c->coll);
		snprintf(w.algo, sizeof(w.algo), "%s", c->algo);
		snprintf(w.transport, sizeof(w.transport), "%s",
		         a->set.transport);
		snprintf(w.dtype, sizeof(w.dtype), "float32");
		snprintf(w.op, sizeof(w.op), "%s",
		         strcmp(c->coll, "allreduce") ? "none" : "sum");
		w.algbw_gbps = c->time_us > 0
		                       ? (double)c->bytes / (c->time_us * 1e3)
		                       : 0;
		cb_results_add_rows(r, &w, 1);
	}
	json_object_object_add(r->run, "acceptance", acc_json(a));
	cb_results_end(r, 0, NULL);
	*out = r;
	return CB_OK;
}

cb_status_t cb_acc_write_json(FILE *f, const struct cb_acc *a)
{
	struct cb_results *r;
	cb_status_t st = acc_doc(a, &r);

	if (st)
		return st;
	st = cb_results_write(f, r);
	cb_results_free(r);
	return st;
}

cb_status_t cb_acc_write_html(FILE *f, const struct cb_acc *a, int *no_plot)
{
	struct cb_results *r;
	cb_status_t st = acc_doc(a, &r);

	if (st)
		return st;
	st = cb_report_html(f, &r, 1, no_plot);
	cb_results_free(r);
	return st;
}
