/* SPDX-License-Identifier: MIT */
/*
 * reports/run.c - the run object of a live run, and its end.
 *
 * Rank 0 keeps the rows in memory and writes the JSON document once, at
 * the end of the run, whether the run completed or failed (then with
 * "status": "failed" and the error line, and the rows measured so far), so
 * the file is valid JSON whenever collbench got to finish.  The file is
 * opened (emptied) when the measurements start, so a run killed before
 * its end leaves an empty file, never a stale or half-written one.
 */
#include "reports/results.h"
#include "reports/report.h"

#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cb_config.h"
#include "core/comm.h"
#include "core/log.h"
#include "topo/topo.h"

extern char **environ;

static void add(json_object *o, const char *key, json_object *v)
{
	json_object_object_add(o, key, v);
}

static json_object *str_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

/* A size in bytes; 0 (not set) as null. */
static json_object *bytes_or_null(size_t v)
{
	return v ? json_object_new_int64((int64_t)v) : NULL;
}

static json_object *dbl(double v, const char *fmt)
{
	char s[64];

	snprintf(s, sizeof(s), fmt, v);
	return json_object_new_double_s(v, s);
}

/* "a, b, c" as ["a", "b", "c"] */
static json_object *split(const char *s, const char *sep)
{
	json_object *a = json_object_new_array();
	size_t n = strlen(sep);

	while (s && *s) {
		const char *e = strstr(s, sep);
		size_t len = e ? (size_t)(e - s) : strlen(s);
		json_object_array_add(a,
		                      json_object_new_string_len(s, (int)len));
		s = e ? e + n : NULL;
	}
	return a;
}

/* Launchers' and collbench's own variables: what decides how a run ran. */
static int env_relevant(const char *kv)
{
	static const char *const prefix[] = {
		"COLLBENCH_",
		"OMPI_COMM_WORLD_",
		"PMI_",
		"PMIX_RANK",
	};
	static const char *const exact[] = {
		"RANK",
		"WORLD_SIZE",
		"LOCAL_RANK",
		"LOCAL_WORLD_SIZE",
		"MASTER_ADDR",
		"MASTER_PORT",
		"SLURM_JOB_ID",
		"SLURM_JOB_NODELIST",
		"SLURM_NNODES",
		"SLURM_NTASKS",
		"SLURM_PROCID",
		"SLURM_LOCALID",
		"SLURM_STEP_ID",
		"CUDA_VISIBLE_DEVICES",
		"OMP_NUM_THREADS",
	};
	size_t n = strcspn(kv, "=");

	for (size_t i = 0; i < sizeof(prefix) / sizeof(prefix[0]); i++)
		if (!strncmp(kv, prefix[i], strlen(prefix[i])))
			return 1;
	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (strlen(exact[i]) == n && !strncmp(kv, exact[i], n))
			return 1;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted by name, so two runs' files diff cleanly. */
static json_object *environment(char *const *env)
{
	json_object *o = json_object_new_object();
	size_t n = 0, k = 0;

	for (size_t i = 0; env && env[i]; i++)
		n += env_relevant(env[i]) && strchr(env[i], '=');
	const char **v = n ? malloc(n * sizeof(*v)) : NULL;
	for (size_t i = 0; v && env[i]; i++)
		if (env_relevant(env[i]) && strchr(env[i], '='))
			v[k++] = env[i];
	if (k) /* qsort(NULL, 0) is undefined: no variable to record */
		qsort(v, k, sizeof(*v), cmp_str);
	for (size_t i = 0; i < k; i++) {
		size_t eq = strcspn(v[i], "=");
		char key[128];
		if (eq >= sizeof(key))
			continue;
		snprintf(key, sizeof(key), "%.*s", (int)eq, v[i]);
		/* A secret is kept out of files people share. */
		add(o, key,
		    json_object_new_string(strcmp(key, "COLLBENCH_JOB_TOKEN")
		                                   ? v[i] + eq + 1
		                                   : "(set, not shown)"));
	}
	free(v);
	return o;
}

static json_object *settings(const struct cb_run_settings *o)
{
	json_object *s = json_object_new_object(), *a;

	add(s, "min_bytes", json_object_new_int64((int64_t)o->min_bytes));
	add(s, "max_bytes", json_object_new_int64((int64_t)o->max_bytes));
	add(s, "step_factor", o->step_bytes ? NULL : dbl(o->factor, "%g"));
	add(s, "step_bytes", bytes_or_null(o->step_bytes));
	add(s, "iters", json_object_new_int(o->iters));
	add(s, "warmup", json_object_new_int(o->warmup));
	add(s, "check", json_object_new_boolean(o->check));
	a = json_object_new_array();
	for (int i = 0; i < o->ndtypes; i++)
		json_object_array_add(
		        a, json_object_new_string(cb_dtype_name(o->dtypes[i])));
	add(s, "dtypes", a);
	a = json_object_new_array();
	for (int i = 0; i < o->nops; i++)
		json_object_array_add(
		        a, json_object_new_string(cb_op_name(o->ops[i])));
	add(s, "ops", a);
	add(s, "root", json_object_new_int(o->root));
	add(s, "ps_servers", json_object_new_int(o->ps_servers));
	add(s, "chunk_bytes", bytes_or_null(o->chunk_bytes));
	add(s, "timeout_s", dbl(o->timeout_s, "%g"));
	if (o->sweep_by) {
		json_object *w = json_object_new_object();
		add(w, "by", json_object_new_string(o->sweep_by));
		add(w, "list", str_or_null(o->sweep_list));
		add(s, "sweep", w);
	} else {
		add(s, "sweep", NULL);
	}
	add(s, "scaling_bytes", bytes_or_null(o->scaling_bytes));
	add(s, "touch", json_object_new_boolean(o->touch));
	add(s, "average", json_object_new_int(o->average));
	add(s, "run_cycles", json_object_new_int(o->cycles));
	add(s, "duration_s",
	    o->duration_s > 0 ? dbl(o->duration_s, "%g") : NULL);
	add(s, "report_gbits", json_object_new_boolean(o->report_gbits));
	return s;
}

static json_object *inv_host(const struct cb_topo_inv *v,
                             const struct cb_topo_inv_diff *d)
{
	json_object *h = json_object_new_object(), *nics;
	char line[512];

	add(h, "host", json_object_new_string(v->host));
	add(h, "source", json_object_new_string(v->source));
	add(h, "packages", json_object_new_int(v->packages));
	add(h, "numa_nodes", json_object_new_int(v->numa));
	add(h, "cores", json_object_new_int(v->cores));
	add(h, "pus", json_object_new_int(v->pus));
	add(h, "memory_bytes",
	    v->mem_bytes < 0 ? NULL : json_object_new_int64(v->mem_bytes));
	add(h, "gpus", json_object_new_int(v->gpus));
	nics = json_object_new_array();
	for (int i = 0; i < v->nics && i < CB_TOPO_INV_NICS; i++) {
		json_object *n = json_object_new_object();
		add(n, "name", json_object_new_string(v->nic[i].name));
		add(n, "speed_mbps",
		    v->nic[i].speed_mbps < 0
		            ? NULL
		            : json_object_new_int(v->nic[i].speed_mbps));
		add(n, "state", json_object_new_string(v->nic[i].state));
		json_object_array_add(nics, n);
	}
	add(h, "nics", nics);
	cb_topo_inv_str(v, line, sizeof(line));
	add(h, "summary", json_object_new_string(line));
	add(h, "differs", json_object_new_boolean(d && d->differs));
	add(h, "why", d && d->differs ? json_object_new_string(d->why) : NULL);
	return h;
}

static json_object *topology(const struct cb_results_meta *m)
{
	const struct cb_topo_inv *inv;
	const struct cb_topo_inv_diff *diff;
	int n = m->topo ? cb_topo_job_hosts(m->topo, &inv, &diff) : 0;
	json_object *t, *hosts;

	if (!m->ri->binding && !m->ri->inventory && n == 0)
		return NULL;
	t = json_object_new_object();
	add(t, "binding", str_or_null(m->ri->binding));
	add(t, "inventory", split(m->ri->inventory, "\n"));
	add(t, "gpu_paths",
	    m->ri->gpu_paths ? split(m->ri->gpu_paths, "\n") : NULL);
	hosts = json_object_new_array();
	for (int i = 0; i < n; i++)
		json_object_array_add(
		        hosts, inv_host(&inv[i], diff ? &diff[i] : NULL));
	add(t, "hosts", hosts);
	return t;
}

/* null for host buffers; else their kind and what drives them */
static json_object *memory(const struct cb_results_meta *m)
{
	json_object *o;

	if (!m->ri->mem_kind)
		return NULL;
	o = json_object_new_object();
	add(o, "kind", json_object_new_string(m->ri->mem_kind));
	add(o, "devices", m->reproducible ? NULL : split(m->ri->memory, "\n"));
	return o;
}

cb_status_t cb_results_from_meta(const struct cb_results_meta *m,
                                 struct cb_results **out)
{
	const struct cb_run_info *ri = m->ri;
	struct cb_results *r;
	json_object *o, *v;
	cb_status_t st;
	char buf[64];

	if ((st = cb_results_new(&r)))
		return st;
	o = r->run;
	v = json_object_new_object();
	add(v, "version", json_object_new_string(CB_VERSION));
	add(v, "build", m->reproducible ? NULL : str_or_null(m->build));
	add(o, "collbench", v);
	v = json_object_new_array();
	for (int i = 0; i < m->argc; i++)
		json_object_array_add(
		        v, json_object_new_string(i == 0 && m->reproducible
		                                          ? "collbench"
		                                          : m->argv[i]));
	add(o, "argv", v);
	v = NULL;
	if (m->start > 0 && !m->reproducible) {
		time_t t = (time_t)m->start;
		struct tm tm;
		if (gmtime_r(&t, &tm) &&
		    strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm))
			v = json_object_new_string(buf);
	}
	add(o, "start_time", v);
	add(o, "reproducible", json_object_new_boolean(m->reproducible));
	add(o, "status", json_object_new_string("running"));
	add(o, "error", NULL);
	add(o, "ranks", json_object_new_int(ri->ranks));
	v = json_object_new_array();
	for (int i = 0; i < m->nhosts; i++) {
		snprintf(buf, sizeof(buf), "host%d", i);
		json_object_array_add(
		        v, json_object_new_string(
		                   m->reproducible ? buf : m->hosts[i]));
	}
	add(o, "hosts", v);
	add(o, "transport", json_object_new_string(ri->transport));
	if (ri->transport_detail && !m->reproducible)
		add(o, "transport_detail", split(ri->transport_detail, "\n"));
	add(o, "collectives", split(ri->colls, ", "));
	add(o, "algo", json_object_new_string(ri->algo));
	add(o, "auto", m->reproducible ? NULL : str_or_null(ri->auto_source));
	add(o, "settings", m->settings ? settings(m->settings) : NULL);
	v = json_object_new_object();
	add(v, "alpha_us", dbl(m->reproducible ? 0 : ri->alpha_us, "%.4g"));
	add(v, "beta_gbps", dbl(m->reproducible ? 0 : ri->beta_gbps, "%.4g"));
	add(v, "gamma_gbps", dbl(m->reproducible ? 0 : ri->gamma_gbps, "%.4g"));
	add(v, "source", str_or_null(ri->model_source));
	add(o, "model", v);
	add(o, "topology", m->reproducible ? NULL : topology(m));
	add(o, "memory", memory(m));
	add(o, "environment", environment(m->reproducible ? NULL : m->env));
	add(o, "wrong", json_object_new_int64(0));
	add(o, "avg_busbw_gbps", dbl(0, "%.6g"));
	*out = r;
	return CB_OK;
}

int cb_results_wanted(const struct cb_output *outs, int nouts, const char *plot)
{
	for (int i = 0; i < nouts; i++)
		if (outs[i].format == CB_FMT_JSON)
			return 1;
	return plot != NULL;
}

int cb_results_reproducible(void)
{
	const char *e = getenv("COLLBENCH_REPRODUCIBLE");

	return e && !strcmp(e, "1");
}

cb_status_t cb_results_for_run(int argc, char *const *argv,
                               const struct cb_run_settings *settings,
                               const struct cb_comm *c,
                               const struct cb_run_info *ri,
                               struct cb_results **out)
{
	struct cb_results_meta m = {
		.argc = argc,
		.argv = argv,
		.build = CB_BUILD_INFO,
		.start = (long long)time(NULL),
		.ri = ri,
		.settings = settings,
		.hosts = c->hosts,
		.nhosts = c->nhosts,
		.topo = c->topo,
		.env = environ,
		.reproducible = cb_results_reproducible(),
	};

	return cb_results_from_meta(&m, out);
}

void cb_results_scrub(struct cb_row *rows, int n)
{
	if (!cb_results_reproducible())
		return;
	for (int i = 0; i < n; i++) {
		struct cb_row *r = &rows[i];
		r->time_us = r->algbw_gbps = r->busbw_gbps = r->model_us = 0;
		r->min_us = r->p50_us = r->p99_us = r->max_us = 0;
		r->slowest = -1;
		double *v[] = { &r->push_per_s, &r->pull_per_s, &r->stale_p50,
			        &r->stale_p99, &r->stale_max };
		for (int k = 0; k < 5; k++)
			if (!isnan(*v[k]))
				*v[k] = 0;
	}
}

void cb_results_add_rows(struct cb_results *r, const struct cb_row *rows, int n)
{
	struct cb_fail_rec lost;

	/* Out of memory loses a row of the record, not the run. */
	cb_fail_open(&lost);
	for (int i = 0; r && i < n; i++)
		(void)cb_results_add(r, &rows[i]);
	cb_fail_close(&lost, 0);
}

void cb_results_set_counters(struct cb_results *r,
                             const struct cb_port_delta *d, int n)
{
	struct json_object *a = json_object_new_array();

	for (int i = 0; i < n; i++) {
		struct json_object *o = json_object_new_object();
		add(o, "host", json_object_new_string(d[i].host));
		add(o, "port", json_object_new_string(d[i].dev));
		add(o, "counter", json_object_new_string(d[i].name));
		add(o, "delta", json_object_new_int64(d[i].delta));
		add(o, "error", json_object_new_boolean(d[i].is_error));
		json_object_array_add(a, o);
	}
	add(r->run, "port_counters", a);
}

void cb_results_end(struct cb_results *r, cb_status_t st, const char *error)
{
	uint64_t wrong = 0;
	double sum = 0;

	for (size_t i = 0; i < r->nrows; i++) {
		wrong += r->rows[i].wrong;
		sum += r->rows[i].busbw_gbps;
	}
	add(r->run, "status",
	    json_object_new_string(st == CB_OK            ? "complete"
	                           : cb_status_signal(st) ? "interrupted"
	                                                  : "failed"));
	add(r->run, "error", st ? str_or_null(error) : NULL);
	add(r->run, "wrong", json_object_new_int64((int64_t)wrong));
	add(r->run, "avg_busbw_gbps",
	    dbl(r->nrows ? sum / (double)r->nrows : 0, "%.6g"));
}

void cb_results_unfinished(struct cb_results *r)
{
	cb_results_end(r, CB_ERR_PEER,
	               "the run did not finish: collbench stopped before "
	               "its end (killed?); the rows are those measured until "
	               "then");
}

cb_status_t cb_results_save_all(const struct cb_results *r,
                                const struct cb_output *outs, int nouts)
{
	cb_status_t wst = CB_OK;

	for (int i = 0; i < nouts; i++)
		if (outs[i].path && outs[i].format == CB_FMT_JSON && !wst)
			wst = cb_results_save(r, outs[i].path);
	return wst;
}

cb_status_t cb_results_early(int argc, char *const *argv,
                             const struct cb_output *outs, int nouts,
                             cb_status_t st)
{
	struct cb_results *r;
	cb_status_t wst;
	json_object *v;

	if (!cb_results_wanted(outs, nouts, NULL))
		return CB_OK;
	if (st == CB_ERR_ABORTED && cb_fail_status() != CB_OK)
		st = cb_fail_status(); /* the status of the rank that failed */
	if ((wst = cb_results_new(&r)))
		return wst;
	v = json_object_new_object();
	add(v, "version", json_object_new_string(CB_VERSION));
	add(v, "build", str_or_null(CB_BUILD_INFO));
	add(r->run, "collbench", v);
	v = json_object_new_array();
	for (int i = 0; i < argc; i++)
		json_object_array_add(v, json_object_new_string(argv[i]));
	add(r->run, "argv", v);
	if (st)
		cb_results_end(r, st,
		               cb_fail_msg() ? cb_fail_msg()
		                             : cb_status_str(st));
	else
		cb_results_unfinished(r);
	wst = cb_results_save_all(r, outs, nouts);
	cb_results_free(r);
	return wst;
}

cb_status_t cb_results_finish(struct cb_results *r,
                              const struct cb_output *outs, int nouts,
                              const char *plot, FILE *const *f, cb_status_t st)
{
	cb_status_t wst = CB_OK;

	/* Stopped by another rank: the status that rank failed with (a
	 * SIGINT there makes this run "interrupted" too). */
	if (st == CB_ERR_ABORTED && cb_fail_status() != CB_OK)
		st = cb_fail_status();
	cb_results_end(r, st,
	               cb_fail_msg() ? cb_fail_msg() : cb_status_str(st));
	for (int i = 0; i < nouts; i++)
		if (f[i] && outs[i].format == CB_FMT_JSON && !wst)
			wst = cb_results_write(f[i], r);
	if (!wst)
		wst = cb_results_save_all(r, outs, nouts);
	if (st || wst || !plot)
		return wst;
	struct cb_plot_cfg cfg = {
		.out = plot,
		.metric = CB_PLOT_BUSBW,
		.width = 1000,
		.height = 600,
	};
	struct cb_fail_rec why;
	cb_fail_open(&why);
	wst = cb_plot(&r, 1, &cfg, NULL);
	cb_fail_close(&why, wst != CB_ERR_UNAVAILABLE);
	if (wst == CB_ERR_UNAVAILABLE) {
		/* one line; the measurement stands */
		cb_log(CB_LOG_WARN, "%s", cb_fail_rec_msg(&why));
		wst = CB_OK;
	}
	return wst;
}
