/* SPDX-License-Identifier: MIT */
/*
 * cli/sweep.c - the sweep driver: for each collective, each group (all
 * ranks, or the first k ranks or hosts of a --ranks/--nodes sweep),
 * datatype, op and size, and each algorithm that applies at that size
 * (select/select.c), measure the point on every member (bench/measure.c),
 * gather every rank's figures at rank 0 and hand the rows to the outputs
 * (cli/output.c).  Ranks outside the group wait at the store.  The
 * model's parameters are measured once before the first point
 * (select/calibrate.c).
 */
#include "cli/sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "select/calibrate.h"
#include "cli/counters.h"
#include "bench/measure.h"
#include "cli/output.h"
#include "select/select.h"
#include "select/tune.h"
#include "select/tuning.h"
#include "cli/sweep_tuning.h"
#include "bench/verify.h"
#include "coll/coll.h"
#include "core/log.h"

#define MAX_SAMPLES (1u << 20)

/*
 * The pipelining chunk on device memory when --chunk-bytes is not given:
 * every chunk costs a request, a kernel launch or a copy and an event
 * (some 10 us of host work), against 8 us for 16 MiB at 2 TB/s, so the
 * algorithms' host-sized defaults (256-512 KiB) would leave the GPU
 * waiting for the CPU.  benchmarks/gpu-check.sh measures 4 to 64 MiB.
 */
#define DEV_CHUNK_BYTES (16u << 20)

struct sweep {
	struct cb_comm *c;
	const struct cb_opts *o;
	struct cb_rank_result *all; /* [world]: every rank's figures */
	struct cb_meter meter;
	struct cb_model m;
	struct cb_outputs w; /* rank 0 */
	struct cb_counters counters;
	struct cb_sect g;           /* the section running now */
	int sections;               /* (collective, group) pairs with work */
	char skipped[256];          /* why the last one skipped did not run */
	struct cb_sweep_tuning tab; /* auto's table, or the one tune makes */
	struct cb_tuner *tuner;     /* tune, rank 0 */
};

static struct cb_select selection(const struct sweep *sw)
{
	return (struct cb_select){
		.o = sw->o,
		.m = &sw->m,
		.coll = sw->g.coll,
		.n = sw->g.n,
		.log = sw->c->rank == 0,
		.tab = sw->o->cmd == CB_CMD_TUNE ? NULL : sw->tab.tab,
		.transport = sw->g.transport,
		.hosts = sw->g.nhosts,
		.tune = sw->o->cmd == CB_CMD_TUNE,
	};
}

/* The candidates of the section now, remembering why one was skipped. */
static cb_status_t candidates(struct sweep *sw, struct cb_cands *cd, int quiet)
{
	struct cb_select s = selection(sw);
	cb_status_t st = cb_select_candidates(&s, quiet, cd);

	if (cd->skipped[0])
		snprintf(sw->skipped, sizeof(sw->skipped), "%s", cd->skipped);
	return st;
}

/* Some candidate takes some dtype asked for (else @why says why not). */
static int usable(const struct cb_opts *o, const struct cb_cands *cd, char *why,
                  size_t cap)
{
	for (int i = 0; i < cd->n; i++)
		for (int d = 0; d < o->ndtypes; d++) {
			const char *no =
			        cd->a[i]->refuse_dtype
			                ? cd->a[i]->refuse_dtype(o->dtypes[d])
			                : NULL;
			if (!no)
				return 1;
			snprintf(why, cap, "%s", no);
		}
	return 0;
}

static size_t next_size(const struct cb_opts *o, size_t bytes)
{
	if (o->step_bytes)
		return bytes + o->step_bytes;
	size_t next = (size_t)((double)bytes * o->factor);
	return next > bytes ? next : bytes + 1;
}

/* ---- one section: a collective on one group ---- */

/* The plans of the candidates that take @dt (@skip[i] = 1 for those that
 * cannot: every rank decides alike; a note says so once), each woken once. */
static cb_status_t section_plans(struct sweep *sw, struct cb_cands *cd,
                                 enum cb_dtype dt, int *skip)
{
	const struct cb_opts *o = sw->o;
	struct cb_comm *c = sw->c;
	struct cb_sect *g = &sw->g;
	size_t es = cb_dtype_bytes(dt);
	int member = g->me >= 0;
	int blocks = cb_coll_blocks(g->coll);
	cb_status_t st = CB_OK;
	struct cb_plan_cfg pc = {
		.group = { .members = g->members, .n = g->n, .me = g->me },
		.coll = g->coll,
		.dtype = dt,
		.max_count = o->max_bytes / es / (blocks ? (size_t)g->n : 1),
		.chunk_bytes = o->chunk_bytes              ? o->chunk_bytes
		               : c->mem_kind == CB_MEM_GPU ? DEV_CHUNK_BYTES
		                                           : 0,
		.ps_servers = o->ps_servers,
		.root = o->root,
		.ring_put_off = !o->ring_put,
	};

	for (int i = 0; i < cd->n; i++) {
		const char *why = cd->a[i]->refuse_dtype
		                          ? cd->a[i]->refuse_dtype(dt)
		                          : NULL;
		cd->plan[i] = NULL;
		if (why && (skip[i] = 1) && c->rank == 0)
			cb_log(CB_LOG_WARN, "skipping %s", why);
	}
	for (int i = 0; i < cd->n && member && !st; i++)
		if (!skip[i])
			st = cb_algo_plan_build(cd->a[i], c, &pc, &cd->plan[i]);
	/* Wake the whole path once (connections, page tables, caches,
	 * branch predictors) before the first timed point, so the first row
	 * of a sweep is not the cost of a cold start. */
	for (int i = 0; i < cd->n && member && !st; i++) {
		if (skip[i])
			continue;
		struct cb_coll_args wake = {
			.coll = g->coll,
			.dtype = dt,
			.op = o->ops[0],
			.root = o->root,
			.count =
			        o->min_bytes / es / (blocks ? (size_t)g->n : 1),
		};
		cb_measure_buffers(&sw->meter, g->me, &wake, 0);
		if (cd->a[i]->session) {
			enum cb_dtype d = dt;
			struct cb_session ws = { .steps = 20,
				                 .straggler = -1,
				                 .fill = cb_verify_ps_fill,
				                 .ctx = &d };
			st = cd->a[i]->session(cd->plan[i], &wake, &ws);
			continue;
		}
		for (int k = 0; k < 20 && !st; k++)
			st = cd->a[i]->run(cd->plan[i], &wake);
	}
	return st;
}

/* Candidate @ai at one size: measured (and in place: by candidate @ipick
 * when >= 0), gathered to rank 0 and written there. */
static cb_status_t section_point(struct sweep *sw, struct cb_cands *cd,
                                 struct cb_select *sel, int ai, int ipick,
                                 struct cb_coll_args *a, size_t bytes)
{
	const struct cb_opts *o = sw->o;
	struct cb_comm *c = sw->c;
	struct cb_sect *g = &sw->g;
	struct cb_rank_result me = { .member = g->me };
	const struct cb_algo *al = cd->a[ai];
	struct cb_plan *plan = cd->plan[ai];
	cb_status_t st;

	if (g->me >= 0) {
		st = cb_measure_point(&sw->meter, g, al, plan, a, 0, &me);
		if (!st && ipick >= 0)
			st = cb_measure_point(&sw->meter, g, cd->a[ipick],
			                      cd->plan[ipick], a, 1, &me);
		else if (!st && cb_measure_algo_inplace(al, g->coll))
			st = cb_measure_point(&sw->meter, g, al, plan, a, 1,
			                      &me);
		if (st)
			return st;
	} else if (o->duration_s > 0) {
		/* -D: the members' gathers, once per form they measure */
		int forms = 1 + (ipick >= 0 ||
		                 cb_measure_algo_inplace(al, g->coll));
		for (int f = 0; f < forms; f++)
			if ((st = cb_measure_duration_peer(&sw->meter, g)))
				return st;
	}
	/* The gather through the store is also where ranks line up before
	 * the next point; ranks outside the group wait here. */
	if ((st = cb_boot_allgather(c->boot, "every rank's timings", &me,
	                            sizeof(me), sw->all)))
		return st;
	if (c->rank != 0)
		return CB_OK;
	struct cb_row rows[2];
	int nr = cb_measure_rows(o, g, sw->all, al, a, bytes,
	                         cb_select_model_us(sel, al, bytes), rows);
	if (ipick >= 0) {
		/* the in-place row is the other algorithm's */
		struct cb_row r2[2];
		const struct cb_algo *a2 = cd->a[ipick];
		cb_measure_rows(o, g, sw->all, a2, a, bytes,
		                cb_select_model_us(sel, a2, bytes), r2);
		rows[1] = r2[1];
	}
	if (!sw->tuner) {
		cb_output_point(&sw->w, g, sw->all, al, a, bytes, rows, nr);
		return CB_OK;
	}
	for (int r = 0; r < nr; r++) {
		cb_tuner_record(sw->tuner, &rows[r]);
		sw->w.wrong += rows[r].wrong;
	}
	return CB_OK;
}

/* One size @b of op @op: which candidates run it, then each one's point. */
static cb_status_t section_size(struct sweep *sw, struct cb_cands *cd,
                                struct cb_select *sel, const int *skip,
                                enum cb_dtype dt, enum cb_op op, size_t b)
{
	const struct cb_opts *o = sw->o;
	struct cb_sect *g = &sw->g;
	size_t es = cb_dtype_bytes(dt);
	int blocks = cb_coll_blocks(g->coll);
	cb_status_t st = CB_OK;
	struct cb_coll_args a = {
		.coll = g->coll,
		.dtype = dt,
		.op = op,
		.root = o->root,
		.count = b / es / (blocks ? (size_t)g->n : 1),
	};

	if (g->coll == CB_COLL_BARRIER)
		a.count = 0;
	size_t bytes = cb_coll_size_elems(g->coll, a.count, g->n) * es;
	int idx[CB_MAX_CAND];
	int np = cb_select_pick(sel, cd, bytes, 0, idx), kept = 0;
	for (int j = 0; j < np; j++)
		if (!skip[idx[j]])
			idx[kept++] = idx[j];
	np = kept;
	/* auto: the in-place call's own pick, where the table measured
	 * another algorithm faster in place */
	int ipick = -1;
	if (o->algo_mode == CB_ALGO_AUTO && !sw->tuner && np == 1 &&
	    cb_measure_algo_inplace(cd->a[idx[0]], g->coll)) {
		int i2[CB_MAX_CAND];
		if (cb_select_pick(sel, cd, bytes, 1, i2) == 1 &&
		    i2[0] != idx[0] && !skip[i2[0]] &&
		    cb_measure_algo_inplace(cd->a[i2[0]], g->coll))
			ipick = i2[0];
	}
	if (sw->c->rank == 0 && !sw->tuner)
		cb_output_progress(&sw->w, sw->c->rank, g->coll, b);
	for (int j = 0; j < np && !st; j++)
		st = section_point(sw, cd, sel, idx[j], ipick, &a, bytes);
	return st;
}

static cb_status_t section_dtype(struct sweep *sw, struct cb_cands *cd,
                                 enum cb_dtype dt)
{
	const struct cb_opts *o = sw->o;
	struct cb_sect *g = &sw->g;
	struct cb_select sel = selection(sw);
	int skip[CB_MAX_CAND] = { 0 };
	cb_status_t st = section_plans(sw, cd, dt, skip);
	int nops = cb_coll_reduces(g->coll) ? o->nops : 1;

	for (int k = 0; k < nops && !st; k++) {
		for (size_t b = o->min_bytes; b <= o->max_bytes && !st;
		     b = next_size(o, b)) {
			st = section_size(sw, cd, &sel, skip, dt, o->ops[k], b);
			sw->w.done_points++;
			/* a barrier has one size */
			if (g->coll == CB_COLL_BARRIER)
				break;
		}
	}
	for (int i = 0; i < cd->n; i++)
		if (cd->plan[i])
			cd->a[i]->plan_free(cd->plan[i]);
	return st;
}

static void section_header(struct sweep *sw, const struct cb_cands *cd)
{
	const struct cb_opts *o = sw->o;
	const struct cb_sect *g = &sw->g;
	char members[256];
	int contiguous = 1, only_ps = 1, workers = g->n;

	/* the header's factor: ps's with dedicated servers when only ps
	 * runs; with others beside it, theirs, and a note for ps's rows */
	for (int i = 0; i < cd->n; i++) {
		if (!cb_measure_is_ps(cd->a[i]))
			only_ps = 0;
		else if (o->ps_servers > 0)
			workers = g->n - o->ps_servers;
	}
	for (int k = 0; k < g->n; k++)
		contiguous &= g->members[k] == k;
	if (contiguous)
		snprintf(members, sizeof(members), "ranks 0-%d", g->n - 1);
	else
		snprintf(members, sizeof(members),
		         "ranks of the first %d hosts", g->nhosts);
	struct cb_section sec = {
		.coll = cb_coll_name(g->coll),
		.ranks = g->n,
		.hosts = g->nhosts,
		.members = members,
		.busbw_factor =
		        cb_coll_busbw_factor(g->coll, only_ps ? workers : g->n),
		.busbw_formula = cb_coll_busbw_formula(g->coll),
		.ps_servers = workers < g->n ? o->ps_servers : 0,
		.has_inplace = cb_measure_has_inplace(g->coll),
	};
	cb_output_section(&sw->w, &sec);
}

static cb_status_t section(struct sweep *sw)
{
	const struct cb_opts *o = sw->o;
	struct cb_cands cd;
	cb_status_t st;

	if (cb_coll_rooted(sw->g.coll) && o->root >= sw->g.n)
		return cb_fail(CB_ERR_USAGE,
		               "--root %d: the group has only %d rank%s",
		               o->root, sw->g.n, sw->g.n == 1 ? "" : "s");
	if ((st = candidates(sw, &cd, 0)))
		return st;
	if (cd.n == 0) {
		/* nothing applies here (a note said so for listed ones) */
		if (sw->c->rank == 0 && o->algo_mode == CB_ALGO_AUTO)
			cb_log(CB_LOG_WARN, "skipping %s", sw->skipped);
		return CB_OK;
	}
	if (sw->c->rank == 0)
		section_header(sw, &cd);
	for (int d = 0; d < o->ndtypes && !st; d++)
		st = section_dtype(sw, &cd, o->dtypes[d]);
	return st;
}

/* The group of the first @k ranks, or of the ranks of the first @k hosts. */
static void make_group(struct sweep *sw, enum cb_coll coll, int k, int by_hosts)
{
	struct cb_comm *c = sw->c;
	struct cb_sect *g = &sw->g;
	int seen[CB_MAX_LOCAL_RANKS * 4] = { 0 }, local_pair = 0;

	g->coll = coll;
	g->n = 0;
	g->me = -1;
	g->nhosts = 0;
	for (int r = 0; r < c->world; r++) {
		int h = c->host_of_rank[r];
		if (by_hosts ? h >= k : r >= k)
			continue;
		if (r == c->rank)
			g->me = g->n;
		g->members[g->n++] = r;
		if (h < (int)(sizeof(seen) / sizeof(seen[0]))) {
			if (!seen[h]++)
				g->nhosts++;
			else
				local_pair = 1;
		}
	}
	/* With a transport inside hosts and another between them (auto),
	 * a group uses the first only if it stays on one host, the second
	 * only if no host holds two of its ranks. */
	snprintf(g->transport, sizeof(g->transport), "%s", c->transport);
	if (c->nwire == 2 && g->nhosts == 1)
		snprintf(g->transport, sizeof(g->transport), "%s",
		         c->tp[0].ops->name);
	else if (c->nwire == 2 && !local_pair)
		snprintf(g->transport, sizeof(g->transport), "%s",
		         c->tp[1].ops->name);
}

cb_status_t cb_sweep(struct cb_comm *c, const struct cb_opts *o,
                     uint64_t *wrong)
{
	struct sweep sw = { .c = c, .o = o };
	struct cb_meter *mt = &sw.meter;
	int counts[CB_MAX_COUNTS], ncounts = 1;
	cb_status_t st = CB_OK;

	cb_comm_fail_fast(c);
	sw.all = calloc((size_t)c->world, sizeof(*sw.all));
	sw.g.members = calloc((size_t)c->world, sizeof(int));
	mt->o = o;
	mt->nsamples = o->duration_s > 0                ? MAX_SAMPLES
	               : (size_t)o->iters < MAX_SAMPLES ? (size_t)o->iters
	                                                : MAX_SAMPLES;
	mt->samples = calloc(mt->nsamples, sizeof(double));
	mt->dur_all = calloc((size_t)c->world, sizeof(*mt->dur_all));
	/* Two buffers per local rank must fit in what the host has free:
	 * asking for more gets a line here instead of the OOM killer. */
	double avail =
	        (double)sysconf(_SC_AVPHYS_PAGES) * sysconf(_SC_PAGESIZE);
	double need = 2.0 * (double)(o->max_bytes + 64) * c->local_size;
	if (!sw.all || !sw.g.members || !mt->samples || !mt->dur_all ||
	    need > 0.9 * avail) {
		st = cb_fail(CB_ERR_NOMEM,
		             "cannot allocate two %zu-byte buffers for each of "
		             "%d local ranks: %.1f GB needed, %.1f GB free (-e "
		             "too large for this host)",
		             o->max_bytes, c->local_size, need / 1e9,
		             avail / 1e9);
		goto out;
	}
	mt->c = c;
	mt->buf_bytes = o->max_bytes + 64;
	if (o->touch && !(mt->touch = malloc(mt->buf_bytes))) {
		st = cb_fail(CB_ERR_NOMEM, "out of memory");
		goto out;
	}
	if ((st = cb_comm_mem_alloc_kind(c, mt->buf_bytes, c->mem_kind,
	                                 (void **)&mt->sendbuf)) ||
	    (st = cb_comm_mem_alloc_kind(c, mt->buf_bytes, c->mem_kind,
	                                 (void **)&mt->recvbuf)))
		goto out;
	if (c->mem_kind == CB_MEM_GPU) {
		/* host shadows to fill and check through (bench/measure.c) */
		mt->hsend = calloc(1, mt->buf_bytes);
		mt->hrecv = calloc(1, mt->buf_bytes);
		if (!mt->hsend || !mt->hrecv) {
			st = cb_fail(CB_ERR_NOMEM, "out of memory");
			goto out;
		}
		/* and zeroed device buffers, as on the host */
		if ((st = cb_comm_copy(c, mt->sendbuf, NULL, mt->hsend, NULL,
		                       mt->buf_bytes, NULL)) ||
		    (st = cb_comm_copy(c, mt->recvbuf, NULL, mt->hrecv, NULL,
		                       mt->buf_bytes, NULL)))
			goto out;
	} else {
		/* Touch every page now, not in the first timed iteration. */
		memset(mt->sendbuf, 0, o->max_bytes);
		memset(mt->recvbuf, 0, o->max_bytes);
	}
	if (o->ranks || o->nodes) {
		int max = o->ranks ? c->world : c->nhosts;
		if ((st = cb_parse_counts(o->ranks ? o->ranks : o->nodes,
		                          o->ranks ? "--ranks" : "--nodes", max,
		                          counts, &ncounts)))
			goto out;
	} else {
		counts[0] = c->world;
	}
	/* Before any output: does anything apply at all?  (Every rank
	 * decides alike: same options, same groups.) */
	for (int k = 0; k < o->ncolls && !st; k++)
		for (int j = 0; j < ncounts && !st; j++) {
			struct cb_cands cd;
			make_group(&sw, o->colls[k], counts[j],
			           o->nodes != NULL);
			st = candidates(&sw, &cd, 1);
			sw.sections += !st && usable(o, &cd, sw.skipped,
			                             sizeof(sw.skipped));
		}
	if (!st && sw.sections == 0)
		st = cb_fail(CB_ERR_USAGE, "nothing to run: %s", sw.skipped);
	if (!st && o->straggler >= c->world)
		st = cb_fail(CB_ERR_USAGE,
		             "--straggler %d: the job has only %d rank%s",
		             o->straggler, c->world, c->world == 1 ? "" : "s");
	if (st)
		goto out;
	if ((st = cb_counters_begin(c, &sw.counters)) ||
	    (st = cb_calibrate(c, o, &sw.m)) ||
	    (st = cb_sweep_tuning(c, o, &sw.tab)))
		goto out;
	if (o->cmd == CB_CMD_TUNE) {
		if (c->rank == 0 && (st = cb_tuner_new(&sw.tuner)))
			goto out;
	} else if (c->rank == 0 &&
	           (st = cb_output_open(&sw.w, o, c, &sw.m,
	                                o->algo_mode == CB_ALGO_AUTO
	                                        ? sw.tab.source
	                                        : NULL))) {
		goto out;
	}
	/* tune: every size and algorithm once per round, rounds in turn;
	 * a run: the sweep -N times (0: until a signal stops it) */
	int rounds = o->cmd == CB_CMD_TUNE ? o->rounds : o->cycles;
	for (int r = 0; (rounds == 0 || r < rounds) && !st; r += rounds > 0)
		for (int k = 0; k < o->ncolls && !st; k++)
			for (int j = 0; j < ncounts && !st; j++) {
				make_group(&sw, o->colls[k], counts[j],
				           o->nodes != NULL);
				st = section(&sw);
			}
	if (!st)
		st = cb_counters_end(c, &sw.counters, &sw.w);
	*wrong = sw.w.wrong;
	if (!st && sw.tuner)
		st = cb_tuner_finish(sw.tuner, sw.tab.tab, sw.tab.path, stdout);
out:
	/* Failed: the store hears it before the buffers peers write into are
	 * released (main asks again and gets the same answer). */
	if (st)
		(void)cb_comm_fail(c, st);
	/* Stopped before the outputs opened: the JSON files say why. */
	if (st && c->rank == 0 && !sw.w.o && o->cmd != CB_CMD_TUNE)
		cb_results_early(o->argc, o->argv, o->outputs, o->noutputs, st);
	st = cb_output_close(&sw.w, st);
	cb_comm_mem_free(c, mt->sendbuf, o->max_bytes + 64);
	cb_comm_mem_free(c, mt->recvbuf, o->max_bytes + 64);
	free(mt->hsend);
	free(mt->hrecv);
	free(sw.all);
	free(sw.g.members);
	free(mt->samples);
	free(mt->dur_all);
	free(mt->touch);
	cb_tuner_free(sw.tuner);
	cb_tuning_free(sw.tab.tab);
	return st;
}
