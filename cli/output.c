/* SPDX-License-Identifier: MIT */
/*
 * cli/output.c - where a run's results go (cli/output.h).  The
 * writers themselves are reports/'s; this file decides which get what.
 */
#include "cli/output.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "topo/topo.h"

#define MAX_SCALE (CB_COLL_COUNT * CB_MAX_COUNTS * 16)

static void settings_of(const struct cb_opts *o, struct cb_run_settings *s)
{
	*s = (struct cb_run_settings){
		.min_bytes = o->min_bytes,
		.max_bytes = o->max_bytes,
		.step_bytes = o->step_bytes,
		.factor = o->factor,
		.iters = o->iters,
		.warmup = o->warmup,
		.check = o->check,
		.ndtypes = o->ndtypes,
		.nops = o->nops,
		.root = o->root,
		.ps_servers = o->ps_servers,
		.chunk_bytes = o->chunk_bytes,
		.timeout_s = o->timeout_s,
		.sweep_by = o->ranks   ? "ranks"
		            : o->nodes ? "nodes"
		                       : NULL,
		.sweep_list = o->ranks ? o->ranks : o->nodes,
		.scaling_bytes = o->scaling_bytes,
		.touch = o->touch,
		.average = o->average,
		.cycles = o->cycles,
		.duration_s = o->duration_s,
		.report_gbits = o->report_gbits,
	};
	memcpy(s->dtypes, o->dtypes, sizeof(s->dtypes));
	memcpy(s->ops, o->ops, sizeof(s->ops));
}

/*
 * The JSON files as they stand: the rows so far, "status": "failed" (the
 * run has not finished), each file replaced whole.  So a run killed
 * outright - rank 0 included, at any moment - leaves valid JSON with the
 * rows measured until then (but for the last SAVE_NS).
 */
#define SAVE_NS 200000000ull

static cb_status_t save_so_far(struct cb_outputs *w)
{
	w->saved_ns = cb_now_ns();
	cb_results_unfinished(w->res);
	return cb_results_save_all(w->res, w->o->outputs, w->o->noutputs);
}

/* -a's words for the table's header */
static const char *const across[4] = {
	"the first rank's (-a 0)",
	"averaged across ranks",
	"the smallest across ranks (-a 2)",
	"the largest across ranks (-a 3)",
};

cb_status_t cb_output_open(struct cb_outputs *w, const struct cb_opts *o,
                           const struct cb_comm *c, const struct cb_model *m,
                           const char *auto_source)
{
	char hosts[512] = "", colls[256] = "";
	cb_status_t st;

	*w = (struct cb_outputs){ .o = o, .t_start_ns = cb_now_ns() };
	if (!(w->scale = calloc(MAX_SCALE, sizeof(*w->scale))))
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	w->scale_cap = MAX_SCALE;
	settings_of(o, &w->settings);
	cb_comm_describe(c, w->transport_detail, sizeof(w->transport_detail));
	for (int h = 0; h < c->nhosts; h++)
		snprintf(hosts + strlen(hosts), sizeof(hosts) - strlen(hosts),
		         "%s%s", h ? ", " : "", c->hosts[h]);
	for (int k = 0; k < o->ncolls; k++)
		snprintf(colls + strlen(colls), sizeof(colls) - strlen(colls),
		         "%s%s", k ? ", " : "", cb_coll_name(o->colls[k]));
	struct cb_run_info ri = {
		.colls = colls,
		.algo = o->algo,
		.transport = c->transport,
		.ranks = c->world,
		.hosts = c->nhosts,
		.host_names = hosts,
		.iters = o->iters,
		.warmup = o->warmup,
		.check = o->check,
		.touch = o->touch,
		.alpha_us = m->alpha_us,
		.beta_gbps = m->beta_gbps,
		.gamma_gbps = m->gamma_gbps,
		.model_source = m->source,
		.binding = cb_topo_job_binding(c->topo),
		.transport_detail =
		        w->transport_detail[0] ? w->transport_detail : NULL,
		.inventory = cb_topo_job_inventory(c->topo),
		.gpu_paths = cb_topo_job_gpu_paths(c->topo),
		.mem_kind = c->mem_kind == CB_MEM_GPU ? "gpu" : NULL,
		.memory = cb_comm_mem_summary(c),
		.auto_source = auto_source,
		.across = across[o->average & 3],
		.duration_s = o->duration_s,
		.gbits = o->report_gbits,
	};
	if (cb_results_wanted(o->outputs, o->noutputs, o->plot) &&
	    (st = cb_results_for_run(o->argc, o->argv, &w->settings, c, &ri,
	                             &w->res)))
		return st;
	for (int i = 0; i < o->noutputs; i++) {
		const char *path = o->outputs[i].path;
		/* a JSON file is saved whole, again and again (below) */
		if (path && o->outputs[i].format == CB_FMT_JSON)
			continue;
		w->out[i] = path ? fopen(path, "w") : stdout;
		if (!w->out[i])
			return cb_fail(CB_ERR_SYS, "cannot write %s", path);
		cb_report_header(w->out[i], o->outputs[i].format, &ri);
	}
	if (w->res && (st = save_so_far(w)))
		return st;
	if (o->schedule_log && !(w->schedlog = fopen(o->schedule_log, "w")))
		return cb_fail(CB_ERR_SYS, "cannot write %s", o->schedule_log);
	return CB_OK;
}

void cb_output_section(struct cb_outputs *w, const struct cb_section *sec)
{
	struct cb_section s;

	if (!w->o)
		return; /* not opened: tune prints its own summary */
	s = *sec;
	s.gbits = w->o->report_gbits;
	for (int i = 0; i < w->o->noutputs; i++)
		cb_report_section(w->out[i], w->o->outputs[i].format, &s);
}

void cb_output_progress(struct cb_outputs *w, int rank, enum cb_coll coll,
                        size_t bytes)
{
	if (rank != 0 || !isatty(STDERR_FILENO))
		return;
	if (cb_now_ns() - w->t_start_ns < 2000000000ull)
		return;
	fprintf(stderr, "\rcollbench: %d points done, now %s %zu bytes   ",
	        w->done_points, cb_coll_name(coll), bytes);
	fflush(stderr);
	w->progress_shown = 1;
}

static void schedule_log(struct cb_outputs *w, const struct cb_sect *g,
                         const struct cb_rank_result *all,
                         const struct cb_algo *algo,
                         const struct cb_coll_args *a, size_t bytes)
{
	for (int k = 0; k < g->n; k++) {
		const struct cb_rank_result *x = &all[g->members[k]];
		fprintf(w->schedlog,
		        "%s %s %s %d %d %d %zu %zu %llu %llu %llu %llu\n",
		        cb_coll_name(a->coll), algo->name,
		        cb_dtype_name(a->dtype), g->n, k,
		        cb_coll_rooted(a->coll) ? a->root : -1, a->count, bytes,
		        (unsigned long long)x->sched.msgs_sent,
		        (unsigned long long)x->sched.bytes_sent,
		        (unsigned long long)x->sched.msgs_recv,
		        (unsigned long long)x->sched.bytes_recv);
	}
}

/* The scaling summary's point: the first dtype and op, out of place, the
 * largest size up to --scaling-size. */
static void scale_point(struct cb_outputs *w, const struct cb_sect *g,
                        const struct cb_algo *algo,
                        const struct cb_coll_args *a, size_t bytes,
                        double busbw_gbps)
{
	const struct cb_opts *o = w->o;
	size_t target = o->scaling_bytes ? o->scaling_bytes : o->max_bytes;
	struct cb_scale_pt *p = NULL;

	if (!(o->ranks || o->nodes) || a->dtype != o->dtypes[0] ||
	    (cb_coll_reduces(a->coll) && a->op != o->ops[0]) || bytes > target)
		return;
	for (int i = 0; i < w->nscale; i++)
		if (w->scale[i].coll_order == (int)a->coll &&
		    w->scale[i].k == g->n && w->scale[i].algo == algo->name)
			p = &w->scale[i];
	if (!p && w->nscale < w->scale_cap)
		p = &w->scale[w->nscale++];
	if (p && (p->algo == NULL || bytes >= p->bytes))
		*p = (struct cb_scale_pt){
			.coll = cb_coll_name(a->coll),
			.algo = algo->name,
			.coll_order = (int)a->coll,
			.k = g->n,
			.hosts = g->nhosts,
			.busbw_gbps = busbw_gbps,
			.bytes = bytes,
		};
}

/* -S 1: a table row starts with the local time, as nccl-tests'. */
static void timestamp(FILE *f)
{
	char buf[32];
	time_t now = time(NULL);
	struct tm tm;

	if (localtime_r(&now, &tm) &&
	    strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm))
		fprintf(f, "[%s]", buf);
}

/* -D: how many calls filled the duration (the CSV's and JSON's iters). */
static void iters_line(FILE *f, const struct cb_row *rows, int n)
{
	if (n == 2)
		fprintf(f, "#   -D: %llu calls out of place, %llu in place\n",
		        (unsigned long long)rows[0].iters,
		        (unsigned long long)rows[1].iters);
	else
		fprintf(f, "#   -D: %llu calls\n",
		        (unsigned long long)rows[0].iters);
	fflush(f);
}

void cb_output_point(struct cb_outputs *w, const struct cb_sect *g,
                     const struct cb_rank_result *all,
                     const struct cb_algo *algo, const struct cb_coll_args *a,
                     size_t bytes, struct cb_row *rows, int nrows)
{
	const struct cb_opts *o = w->o;
	double busbw0 = rows[0].busbw_gbps;

	for (int i = 0; i < nrows; i++) {
		w->busbw_sum += rows[i].busbw_gbps;
		w->busbw_n++;
		w->wrong += rows[i].wrong;
	}
	cb_results_scrub(rows, nrows);
	cb_results_add_rows(w->res, rows, nrows);
	/* Between points, outside any timed region; a failure to write is
	 * the end's to report. */
	if (w->res && cb_now_ns() - w->saved_ns >= SAVE_NS &&
	    save_so_far(w) != CB_OK)
		cb_fail_clear();
	if (w->progress_shown) {
		fputs("\r\033[K", stderr);
		w->progress_shown = 0;
	}
	/* --report_gbits: the table and the CSV in Gb/s; JSON keeps GB/s */
	struct cb_row shown[2];
	memcpy(shown, rows, (size_t)nrows * sizeof(*rows));
	if (o->report_gbits)
		cb_rows_to_gbits(shown, nrows);
	for (int i = 0; i < o->noutputs; i++) {
		enum cb_format fmt = o->outputs[i].format;
		if (!w->out[i])
			continue;
		if (o->timestamps && fmt == CB_FMT_TABLE)
			timestamp(w->out[i]);
		cb_report_point(w->out[i], fmt, shown, nrows);
		if (o->duration_s > 0 && fmt == CB_FMT_TABLE)
			iters_line(w->out[i], rows, nrows);
	}
	if (w->schedlog)
		schedule_log(w, g, all, algo, a, bytes);
	scale_point(w, g, algo, a, bytes, busbw0);
}

void cb_output_counters(struct cb_outputs *w, const struct cb_port_delta *d,
                        int n)
{
	const struct cb_opts *o = w->o;

	if (!o)
		return;
	for (int i = 0; i < o->noutputs; i++)
		cb_report_counters(w->out[i], o->outputs[i].format, d, n);
	if (w->res)
		cb_results_set_counters(w->res, d, n);
}

cb_status_t cb_output_close(struct cb_outputs *w, cb_status_t st)
{
	const struct cb_opts *o = w->o;

	if (!o)
		return st; /* never opened (not rank 0, or failed before) */
	if (!st)
		for (int i = 0; i < o->noutputs; i++) {
			if (o->outputs[i].format == CB_FMT_TABLE)
				cb_report_scaling(w->out[i], w->scale,
				                  w->nscale, o->nodes != NULL,
				                  o->report_gbits);
			double avg =
			        w->busbw_n ? w->busbw_sum / w->busbw_n : 0.0;
			cb_report_footer(
			        w->out[i], o->outputs[i].format, w->wrong,
			        avg * (o->report_gbits ? CB_GBITS_PER_GBPS : 1),
			        o->report_gbits);
		}
	/* Stopped by SIGINT or SIGTERM: a table says its rows are all
	 * there is (the JSON says "interrupted"). */
	for (int i = 0; cb_status_signal(cb_fail_status()) && i < o->noutputs;
	     i++)
		if (o->outputs[i].format == CB_FMT_TABLE && w->out[i])
			fprintf(w->out[i],
			        "# %s: the rows above are the results so far\n",
			        cb_status_str(cb_fail_status()));
	if (w->res) {
		cb_status_t wst = cb_results_finish(
		        w->res, o->outputs, o->noutputs, o->plot, w->out, st);
		st = st ? st : wst;
		cb_results_free(w->res);
	}
	for (int i = 0; i < o->noutputs; i++)
		if (w->out[i] && w->out[i] != stdout)
			fclose(w->out[i]);
	if (w->schedlog)
		fclose(w->schedlog);
	free(w->scale);
	*w = (struct cb_outputs){ 0 };
	return st;
}
