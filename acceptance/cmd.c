/* SPDX-License-Identifier: MIT */
/*
 * acceptance/cmd.c - `collbench acceptance`: accept a newly cabled
 * cluster in one command, under the launchers clusters already run, and
 * name the bad node or cable with a verdict.
 *
 * Stages, in the order vendors' bring-up procedures use, each reported as
 * it finishes (acceptance/accept.h lists who does what):
 *   inventory     hosts alike, NICs up at the same speed, MTU, driver,
 *                 firmware;
 *   connectivity  every pair of nodes connects and exchanges a small
 *                 checked message both ways, within --pair-timeout;
 *   pairwise      latency and bandwidth in rounds of disjoint pairs as
 *                 acceptance/plan.c plans them (every pair up to 8 nodes,
 *                 log2 n rounds beyond), judged against the noise it
 *                 measured; suspects measured again against cleared
 *                 partners before anything is named (drive.c);
 *   collectives   allreduce and alltoall over all ranks, against what the
 *                 measured links predict;
 *   burn          with --duration: pairwise and allreduce again and again
 *                 for that long, drift, and NIC error counters.
 * A node is one rank per host; with --rails, or on a single host, every
 * rank.  Rank 0 decides after each stage and tells the others through the
 * store (a key per decision), so a host that vanished costs a deadline,
 * never the verdict.
 *
 * Exit status (accept.h): 0 PASS (warnings too), 1 FAIL, 2 usage or a bad
 * file, 3 could not run (a rank did not start or stopped, a deadline,
 * an output not written), 77 the transport is not available.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acceptance/accept.h"
#include "bench/cli.h"
#include "bench/options.h"
#include "bench/place.h"
#include "cb_config.h"
#include "core/log.h"
#include "reports/results.h"
#include "topo/topo.h"

/* ---- decisions from rank 0 ---- */

/* What rank 0 tells everyone after a stage: which pairs go on (by index
 * in the stage's list), whether collectives run, whether the burn goes
 * on. */
struct plan {
	int32_t go;     /* burn: another pass; else unused */
	int32_t colls;  /* run the collectives */
	int32_t serial; /* ranks share cores: one pair at a time */
	int32_t n;      /* entries in idx */
	int32_t idx[];  /* pair indices */
};

static cb_status_t tell(struct cb_acc_ctx *x, struct plan *p, int cap,
                        double wait_s)
{
	char key[48];
	size_t bytes = sizeof(*p) + (size_t)cap * sizeof(int32_t), got;
	cb_status_t st;

	snprintf(key, sizeof(key), "acc/plan/%u", x->seq++);
	if (x->c->rank == 0)
		return cb_boot_set(x->c->boot, key, p,
		                   sizeof(*p) + (size_t)p->n * sizeof(int32_t));
	/* Rank 0 decides after waiting up to @wait_s for the stage's late
	 * ranks: wait longer than that. */
	st = cb_boot_get_wait(x->c->boot, key, p, bytes, &got,
	                      2 * wait_s + x->o->timeout_s);
	if (!st && (got < sizeof(*p) ||
	            got != sizeof(*p) + (size_t)p->n * sizeof(int32_t)))
		st = cb_fail(CB_ERR_PROTO, "rank 0's plan does not parse");
	return st;
}

/* ---- the nodes and the tournament ---- */

static cb_status_t setup_nodes(struct cb_comm *c, const struct cb_acc_opts *o,
                               struct cb_acc *a)
{
	int per_host = c->world / (c->nhosts ? c->nhosts : 1);
	int every = o->set.rails || c->nhosts == 1;

	a->nhosts = c->nhosts;
	a->ranks = c->world;
	a->hosts = calloc((size_t)c->nhosts, sizeof(*a->hosts));
	a->nodes = calloc((size_t)c->world, sizeof(*a->nodes));
	if (!a->hosts || !a->nodes)
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	for (int h = 0; h < c->nhosts; h++)
		snprintf(a->hosts[h].name, sizeof(a->hosts[h].name), "%s",
		         c->hosts[h]);
	for (int r = 0; r < c->world; r++) {
		int h = c->host_of_rank[r];
		struct cb_acc_node *n = &a->nodes[a->nnodes];
		int local = a->hosts[h].nranks++;
		if (!every && local > 0)
			continue;
		if (o->set.rails && c->nhosts > 1 &&
		    per_host * c->nhosts != c->world)
			return cb_fail(CB_ERR_USAGE,
			               "--rails needs the same number of ranks "
			               "on every host (%d ranks on %d hosts)",
			               c->world, c->nhosts);
		n->host = h;
		n->rank = r;
		n->local = local;
		if (every && c->nhosts > 1)
			snprintf(n->name, sizeof(n->name), "%.60s.%d",
			         c->hosts[h], local);
		else if (every)
			snprintf(n->name, sizeof(n->name), "rank%d", r);
		else
			snprintf(n->name, sizeof(n->name), "%.60s",
			         c->hosts[h]);
		a->nnodes++;
	}
	return CB_OK;
}

/* Every pair of the tournament, round-major; with --rails only
 * rail-aligned pairs (rank i of a host with rank i of another: each NIC
 * with the same NIC of the other host, not k^2 pairs of every host pair;
 * the NICs under test are between hosts). */
static int tournament(const struct cb_acc *a, int (*pairs)[2], int *round)
{
	int(*r)[2] = malloc(((size_t)a->nnodes / 2 + 1) * sizeof(*r)), n = 0;

	for (int k = 0; r && k < cb_acc_rounds(a->nnodes); k++) {
		int m = cb_acc_round_pairs(a->nnodes, k, r);
		for (int i = 0; i < m; i++) {
			const struct cb_acc_node *x = &a->nodes[r[i][0]],
			                         *y = &a->nodes[r[i][1]];
			if (a->nhosts > 1 &&
			    (x->host == y->host ||
			     (a->set.rails && x->local != y->local)))
				continue;
			pairs[n][0] = r[i][0];
			pairs[n][1] = r[i][1];
			round[n++] = k;
		}
	}
	free(r);
	return n;
}

/* ---- the stages ---- */

static double now_s(void)
{
	return (double)cb_now_ns() / 1e9;
}

static double wait_for(const struct cb_acc_opts *o, int rounds)
{
	return (rounds + 2) * o->set.pair_timeout_s + o->timeout_s;
}

/* Copy measured figures into the record's pair of the same nodes. */
static void take(struct cb_acc *a, const struct cb_acc_pair *m, int n,
                 enum cb_acc_stage_id stage)
{
	for (int i = 0; i < n; i++) {
		struct cb_acc_pair *p = cb_acc_pair_of(a, m[i].a, m[i].b);
		if (!p)
			continue;
		/* the pairwise stage's counters stay the pair's */
		cb_acc_pair_take(p, &m[i], stage, p);
	}
}

/* One burn pass over the pairs rank 0 kept (@keep), in rounds (one pair
 * at a time where ranks share cores); rank 0's record gets the figures. */
static cb_status_t burn_pass(struct cb_acc_ctx *x, int (*all)[2],
                             const struct plan *keep, int rounds)
{
	int n = keep->n, (*pairs)[2] = malloc(((size_t)n + 1) * sizeof(*pairs));
	struct cb_acc_pair *got = calloc((size_t)n + 1, sizeof(*got));
	cb_status_t st;

	if (!pairs || !got) {
		st = cb_fail(CB_ERR_NOMEM, "out of memory");
		goto out;
	}
	for (int i = 0; i < n; i++) {
		pairs[i][0] = all[keep->idx[i]][0];
		pairs[i][1] = all[keep->idx[i]][1];
	}
	st = cb_acc_stage_pairs(x, pairs, n, 1,
	                        keep->serial ? CB_ACC_ALONE_SERIAL
	                                     : CB_ACC_CONCURRENT,
	                        wait_for(x->o, keep->serial ? n : rounds), got);
	if (!st && x->c->rank == 0) {
		take(x->a, got, n, CB_ACC_BURN);
		cb_acc_refs(x->a);
	}
out:
	free(pairs);
	free(got);
	return st;
}

static void stage_done(struct cb_acc *a, enum cb_acc_stage_id s, double t0)
{
	a->stage[s].seconds = now_s() - t0;
	if (a->stage[s].state != CB_ACC_FAIL)
		a->stage[s].state = CB_ACC_PASS;
	/* Said as each stage finishes (stderr; the results go to stdout):
	 * an operator at 2 a.m. watches it go. */
	fprintf(stderr, "collbench acceptance: %-12s %s in %.2f s: %s\n",
	        cb_acc_stage_name(s), cb_acc_state_name(a->stage[s].state),
	        a->stage[s].seconds, a->stage[s].summary);
}

/* ---- one rank ---- */

struct run {
	struct cb_acc_ctx x;
	int (*all)[2]; /* the tournament's pairs */
	int *round;
	int nall, rounds;
	struct plan *keep; /* the pairs still measured */
};

/* Pairs tried again at most this many rounds of disjoint pairs. */
#define CONNECT_AGAIN_ROUNDS 4

/*
 * Rank 0: the next round of the second try at connecting, in @p (pair
 * indices; n 0 when done).  Pairs that failed at the first try go again,
 * each node in at most one pair a round, whose ends failed the fewest
 * first: the first pass runs each node's pairs one after another, so one
 * pair that waits out its deadline makes its nodes late for their next
 * partners, whose pairs fail though nothing is wrong between them.  A round
 * of disjoint pairs after a barrier cannot do that.
 */
static void again_round(const struct run *R, const unsigned char *tried,
                        int done, struct plan *p)
{
	const struct cb_acc *a = R->x.a;
	unsigned char *busy = calloc((size_t)a->nnodes + 1, 1);
	int *fails = calloc((size_t)a->nnodes + 1, sizeof(int));

	p->n = 0;
	if (!busy || !fails || done >= CONNECT_AGAIN_ROUNDS)
		goto out;
	for (int i = 0; i < R->nall; i++)
		if (!a->pairs[i].ok) {
			fails[a->pairs[i].a]++;
			fails[a->pairs[i].b]++;
		}
	for (;;) {
		int best = -1, bf = 0;
		for (int i = 0; i < R->nall; i++) {
			const struct cb_acc_pair *q = &a->pairs[i];
			int r0 = a->nodes[q->a].rank, r1 = a->nodes[q->b].rank;
			if (q->ok || tried[i] || busy[q->a] || busy[q->b] ||
			    (R->x.gone && (R->x.gone[r0] || R->x.gone[r1])))
				continue;
			if (best < 0 || fails[q->a] + fails[q->b] < bf) {
				best = i;
				bf = fails[q->a] + fails[q->b];
			}
		}
		if (best < 0)
			break;
		busy[a->pairs[best].a] = busy[a->pairs[best].b] = 1;
		p->idx[p->n++] = best;
	}
out:
	free(busy);
	free(fails);
}

/* The second try: rounds of the pairs that failed, each after rank 0 says
 * which (a barrier), connected anew; rank 0 keeps what works then. */
static cb_status_t connect_again(struct run *R, int *again, int *rescued)
{
	struct cb_acc_ctx *x = &R->x;
	struct cb_acc *a = x->a;
	struct plan *p =
	        calloc(1, sizeof(*p) + ((size_t)R->nall + 1) * sizeof(int32_t));
	unsigned char *tried = calloc((size_t)R->nall + 1, 1);
	int(*pairs)[2] = malloc(((size_t)a->nnodes / 2 + 1) * sizeof(*pairs));
	struct cb_acc_pair *got =
	        calloc((size_t)a->nnodes / 2 + 1, sizeof(*got));
	cb_status_t st = CB_OK;

	if (!p || !tried || !pairs || !got)
		st = cb_fail(CB_ERR_NOMEM, "out of memory");
	for (int round = 0; !st; round++) {
		if (x->c->rank == 0)
			again_round(R, tried, round, p);
		if ((st = tell(x, p, a->nnodes / 2 + 1, wait_for(x->o, 1))) ||
		    !p->n)
			break;
		for (int i = 0; i < p->n; i++) {
			pairs[i][0] = R->all[p->idx[i]][0];
			pairs[i][1] = R->all[p->idx[i]][1];
		}
		x->again = 1;
		st = cb_acc_stage_pairs(x, pairs, p->n, 0, 0, wait_for(x->o, 1),
		                        got);
		x->again = 0;
		for (int i = 0; !st && x->c->rank == 0 && i < p->n; i++) {
			struct cb_acc_pair *q = &a->pairs[p->idx[i]];
			tried[p->idx[i]] = 1;
			++*again;
			if (!got[i].ok)
				continue; /* the first try's line stays */
			q->ok = 1;
			q->connect_ms = got[i].connect_ms;
			q->error[0] = '\0';
			++*rescued;
		}
	}
	free(p);
	free(tried);
	free(pairs);
	free(got);
	return st;
}

static cb_status_t stage_connect(struct run *R)
{
	struct cb_acc_ctx *x = &R->x;
	struct cb_acc *a = x->a;
	double t0 = now_s();
	int again = 0, rescued = 0;
	cb_status_t st;

	x->stage = CB_ACC_CONNECTIVITY;
	a->pairs = calloc((size_t)R->nall + 1, sizeof(*a->pairs));
	if (!a->pairs)
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	/* A node late from its pairs that waited out their deadlines is
	 * not cut off: wait for it up to three of them. */
	x->idle_s = 3 * x->o->set.pair_timeout_s + 1;
	x->defer_cutoff = 1;
	st = cb_acc_stage_pairs(x, R->all, R->nall, 0, 0,
	                        wait_for(x->o, R->rounds), a->pairs);
	x->idle_s = 0;
	x->defer_cutoff = 0;
	if (st || (st = connect_again(R, &again, &rescued)))
		return st;
	/* Every one of this node's (2 or more) pairs failed, those tried
	 * again too: it is this host that is cut off; rank 0 names it from
	 * the others' side. */
	if (x->c->rank != 0 && x->pairs_run >= 2 && !x->pairs_ok)
		return cb_fail(CB_ERR_PEER,
		               "acceptance: none of this node's %d pairs "
		               "worked: this host looks cut off from the "
		               "others (rank 0 names it)",
		               x->pairs_run);
	R->keep->n = 0;
	if (x->c->rank == 0) {
		int bad = 0;
		double *ms = calloc((size_t)R->nall + 1, sizeof(double));
		int k = 0;
		a->npairs = R->nall;
		for (int i = 0; i < R->nall; i++) {
			a->pairs[i].round = R->round[i];
			a->pairs[i].fail_stage = CB_ACC_CONNECTIVITY;
			if (a->pairs[i].ok) {
				R->keep->idx[R->keep->n++] = i;
				if (ms)
					ms[k++] = a->pairs[i].connect_ms;
			} else {
				bad++;
			}
		}
		cb_acc_judge_connect(a, CB_ACC_CONNECTIVITY);
		char tries[96] = "";
		if (again)
			snprintf(tries, sizeof(tries),
			         " (%d tried again alone, %d connected then)",
			         again, rescued);
		snprintf(a->stage[CB_ACC_CONNECTIVITY].summary,
		         sizeof(a->stage[0].summary),
		         "%d pairs in %d rounds, %d could not connect%s; "
		         "connect p50 %.3g ms",
		         R->nall, R->rounds, bad, tries,
		         ms ? cb_acc_median(ms, k) : 0);
		free(ms);
		R->keep->colls = bad == 0;
		/* Ranks that share cores: pairs one at a time (a round's
		 * concurrent pairs would measure who gets a core). */
		R->keep->serial = a->shared_cores[0] != 0;
		stage_done(a, CB_ACC_CONNECTIVITY, t0);
	}
	return tell(x, R->keep, R->nall, wait_for(x->o, R->rounds));
}

static cb_status_t stage_pairwise(struct run *R)
{
	struct cb_acc_ctx *x = &R->x;
	struct cb_acc *a = x->a;
	double t0 = now_s();
	cb_status_t st;
	int colls = R->keep->colls;

	x->stage = CB_ACC_PAIRWISE;
	/* The plan and its judge (acceptance/plan.c, driven by drive.c):
	 * the findings are made there. */
	if ((st = cb_acc_planned(x, R->keep->serial)))
		return st;
	if (x->c->rank == 0) {
		int failed = 0, rounds = 0, meas = 0;
		for (int i = 0; i < a->npairs; i++)
			failed += !a->pairs[i].ok;
		for (int i = 0; i < a->nplan; i++) {
			rounds += a->plan[i].rounds;
			meas += a->plan[i].pairs;
		}
		snprintf(a->stage[CB_ACC_PAIRWISE].summary,
		         sizeof(a->stage[0].summary),
		         "%d measurements in %d rounds; median %.3g GB/s, %.3g "
		         "GB/s both ways, %.3g us; %d outside the noise, "
		         "%d measured again for them, %d cleared%s",
		         meas, rounds, a->ref_bw_gbps, a->ref_bibw_gbps,
		         a->ref_lat_us, a->suspects, a->retested, a->cleared,
		         failed ? "; some pairs failed" : "");
		stage_done(a, CB_ACC_PAIRWISE, t0);
		R->keep->colls = colls && !failed;
	}
	/* The collectives need every pair: rank 0 says whether to run. */
	return tell(x, R->keep, R->nall, wait_for(x->o, R->rounds));
}

static cb_status_t stage_colls(struct run *R, double *allreduce)
{
	struct cb_acc_ctx *x = &R->x;
	struct cb_acc *a = x->a;
	double t0 = now_s();
	cb_status_t st;

	if (!R->keep->colls) {
		if (x->c->rank == 0)
			snprintf(a->stage[CB_ACC_COLLECTIVES].summary,
			         sizeof(a->stage[0].summary),
			         "skipped: not every pair of nodes works");
		return CB_OK;
	}
	if (x->stage != CB_ACC_BURN)
		x->stage = CB_ACC_COLLECTIVES;
	if ((st = cb_acc_collectives(x, allreduce)))
		return st;
	if (x->c->rank == 0) {
		cb_acc_judge_colls(a);
		stage_done(a, CB_ACC_COLLECTIVES, t0);
	}
	return CB_OK;
}

static cb_status_t stage_burn(struct run *R)
{
	struct cb_acc_ctx *x = &R->x;
	struct cb_acc *a = x->a;
	double t0 = now_s(), first = 0, last = 0;
	cb_status_t st = CB_OK;

	x->stage = CB_ACC_BURN;
	for (;;) {
		double allreduce = 0, start = now_s() - t0;
		if ((st = burn_pass(x, R->all, R->keep, R->rounds)) ||
		    (st = stage_colls(R, &allreduce)))
			break;
		if (x->c->rank == 0) {
			cb_acc_pass_summary(a, now_s() - t0, allreduce);
			struct cb_acc_pass *p = &a->passes[a->npasses - 1];
			p->t0_s = start;
			if (a->npasses == 1)
				first = p->median_bw_gbps;
			last = p->median_bw_gbps;
			R->keep->go = now_s() - t0 < a->set.duration_s &&
			              !p->failed_pairs;
			fprintf(stderr,
			        "collbench acceptance: burn pass %d at %.0f s: "
			        "median %.3g GB/s, slowest %.3g GB/s, %d slow, "
			        "%d failed\n",
			        a->npasses, p->t_s, p->median_bw_gbps,
			        p->min_bw_gbps, p->slow_pairs, p->failed_pairs);
		}
		if ((st = tell(x, R->keep, R->nall,
		               wait_for(x->o, R->rounds))) ||
		    !R->keep->go)
			break;
	}
	if (!st && x->c->rank == 0) {
		int slow = 0, failed = 0;
		for (int i = 0; i < a->npasses; i++) {
			slow += a->passes[i].slow_pairs;
			failed += a->passes[i].failed_pairs;
		}
		cb_acc_judge_connect(a, CB_ACC_BURN);
		cb_acc_judge_drift(a);
		cb_acc_judge_windows(a);
		snprintf(a->stage[CB_ACC_BURN].summary,
		         sizeof(a->stage[0].summary),
		         "%d passes in %.0f s; median bandwidth %.3g -> %.3g "
		         "GB/s; "
		         "%d slow and %d failed pair measurements",
		         a->npasses, now_s() - t0, first, last, slow, failed);
	}
	if (!st && x->c->rank == 0)
		stage_done(a, CB_ACC_BURN, t0);
	return st;
}

static void settings_for(struct cb_comm *c, const struct cb_acc_opts *o,
                         struct cb_acc *a, char *tr, size_t bytes)
{
	a->set = o->set;
	/* What connects the nodes: under auto, what this rank reaches the
	 * other hosts with (verbs or tcp: core/comm_auto.c). */
	if (!strcmp(o->transport, "auto")) {
		const char *t = c->transport;
		for (int p = 0; p < c->world && c->nhosts > 1; p++)
			if (c->host_of_rank[p] != c->host) {
				t = c->tp[cb_comm_pick(c, p)].ops->name;
				break;
			}
		snprintf(tr, bytes, "%s", t);
	} else
		snprintf(tr, bytes, "%s", o->transport);
	a->set.transport = tr;
}

static int acc_rank(void *arg, const struct cb_cli_rank *r)
{
	const struct cb_acc_opts *o = arg;
	struct cb_comm *c = NULL;
	struct cb_acc a = { .version = CB_VERSION };
	struct run R = { .x = { .o = o, .a = &a, .me = -1 } };
	struct cb_comm_cfg cfg =
	        cb_place_comm_cfg(r, o->timeout_s, o->transport, NULL, &o->tp);
	char tr[32], hn[1024];
	struct cb_results_meta meta;
	struct cb_run_info ri;
	struct cb_acc_base *base = o->base, *own = NULL;    /* --baseline */
	struct cb_acc_switches *sw = o->sw, *own_sw = NULL; /* --switches */
	double t0 = now_s();
	cb_status_t st;
	int rc = 0;

	cb_log_set_rank(r->rank);
	if ((st = cb_comm_create(&cfg, &c))) {
		if (!cb_fail_quiet())
			cb_log(CB_LOG_ERROR, "%s",
			       cb_fail_msg() ? cb_fail_msg()
			                     : cb_status_str(st));
		return cb_acc_exit(st);
	}
	R.x.c = c;
	settings_for(c, o, &a, tr, sizeof(tr));
	if (c->rank == 0 && o->baseline_file && !base &&
	    (st = cb_acc_base_load(o->baseline_file, &own)))
		goto fail;
	base = base ? base : own;
	if (c->rank == 0 && o->switches_file && !sw &&
	    (st = cb_acc_switches_load(o->switches_file, &own_sw)))
		goto fail;
	sw = sw ? sw : own_sw;
	if ((st = setup_nodes(c, o, &a)) ||
	    (base && (st = cb_acc_base_check(base, &a))) ||
	    (c->rank == 0 && sw && (st = cb_acc_switches_apply(sw, &a))))
		goto fail;
	if (a.nnodes < 2) {
		st = cb_fail(
		        CB_ERR_USAGE,
		        "acceptance needs two nodes at least (hosts, or ranks "
		        "on one host); %d rank%s on %d host%s: nothing to "
		        "measure",
		        c->world, c->world == 1 ? "" : "s", c->nhosts,
		        c->nhosts == 1 ? "" : "s");
		goto fail;
	}
	for (int i = 0; i < a.nnodes; i++)
		if (a.nodes[i].rank == c->rank)
			R.x.me = i;
	size_t maxp = (size_t)a.nnodes * (a.nnodes + 1) / 2 + 1;
	R.all = malloc(maxp * sizeof(*R.all));
	R.round = malloc(maxp * sizeof(int));
	R.keep = calloc(1, sizeof(*R.keep) + maxp * sizeof(int32_t));
	R.x.samples = malloc((size_t)o->set.lat_iters * sizeof(double) + 8);
	R.x.gone = calloc((size_t)c->world, 1);
	if (!R.all || !R.round || !R.keep || !R.x.samples || !R.x.gone) {
		st = cb_fail(CB_ERR_NOMEM, "out of memory");
		goto fail;
	}
	R.nall = tournament(&a, R.all, R.round);
	R.rounds = cb_acc_rounds(a.nnodes);
	if (R.x.me >= 0) {
		R.x.buf_bytes = (size_t)o->set.bw_bytes * 5 + 4096;
		if ((st = cb_comm_mem_alloc(c, R.x.buf_bytes, &R.x.buf)))
			goto fail;
		R.x.mem = cb_comm_mem_find(c, R.x.buf, R.x.buf_bytes);
	}
	for (int s = 0; s < CB_ACC_NSTAGES; s++)
		a.stage[s].state = CB_ACC_SKIP;

	double ts = now_s();
	if ((st = cb_acc_inventory(&R.x)))
		goto fail;
	if (c->rank == 0) {
		for (int i = 0; i < a.nnodes; i++) {
			const struct cb_acc_host *h = &a.hosts[a.nodes[i].host];
			snprintf(a.nodes[i].nic, sizeof(a.nodes[i].nic), "%s",
			         h->nic);
		}
		stage_done(&a, CB_ACC_INVENTORY, ts);
	}
	/* --stages: the later stages need the earlier ones' pairs. */
	unsigned want = o->stages;
	if ((st = stage_connect(&R)) ||
	    ((want & 1u << CB_ACC_PAIRWISE) && (st = stage_pairwise(&R))))
		goto fail;
	if (!(want & 1u << CB_ACC_PAIRWISE))
		R.keep->colls = 0;
	if ((want & 1u << CB_ACC_COLLECTIVES) && (st = stage_colls(&R, NULL)))
		goto fail;
	if (o->set.duration_s > 0 && R.keep->colls && (st = stage_burn(&R)))
		goto fail;
	for (int s = CB_ACC_PAIRWISE; c->rank == 0 && s < CB_ACC_NSTAGES; s++)
		if (!(want & 1u << s))
			snprintf(a.stage[s].summary, sizeof(a.stage[0].summary),
			         "not asked for (--stages)");
	if (c->rank == 0 && (want & 1u << CB_ACC_BURN) &&
	    o->set.duration_s > 0 && !R.keep->colls)
		snprintf(a.stage[CB_ACC_BURN].summary,
		         sizeof(a.stage[0].summary),
		         "skipped: not every pair of nodes works");
	else if (c->rank == 0 && o->set.duration_s <= 0)
		snprintf(a.stage[CB_ACC_BURN].summary,
		         sizeof(a.stage[0].summary),
		         "not asked for (--duration)");
	if ((st = cb_acc_counters(&R.x)))
		goto fail;
	if (c->rank == 0) {
		cb_acc_judge_counters(&a);
		cb_acc_judge_loss(&a);
		if (base)
			cb_acc_judge_base(&a, base);
		cb_acc_judge_cpu(&a);
		a.seconds = now_s() - t0;
		cb_acc_meta(c, o, &a, &meta, &ri, hn, sizeof(hn));
		rc = cb_acc_outputs(o, &a);
	}
	goto out;
fail:
	/* Rank 0 failing stops everyone (nobody is left to decide).  Another
	 * rank failing is most often a host cut off from the others: rank 0
	 * names it when it does not report; stopping the job would lose the
	 * verdict. */
	if (c->rank == 0 ? cb_comm_fail(c, st)
	                 : st != CB_ERR_ABORTED && st != CB_ERR_USAGE &&
	                           !cb_fail_quiet())
		cb_log(CB_LOG_ERROR, "%s",
		       cb_fail_msg() ? cb_fail_msg() : cb_status_str(st));
	rc = cb_acc_exit(st);
out:
	for (int r = 0; R.x.gone && r < c->world; r++)
		if (R.x.gone[r])
			cb_boot_gone(c->boot, r);
	if (R.x.buf)
		cb_comm_mem_free(c, R.x.buf, R.x.buf_bytes);
	cb_comm_destroy(c);
	free(R.all);
	free(R.round);
	free(R.keep);
	free(R.x.samples);
	free(R.x.gone);
	cb_acc_free(&a);
	cb_acc_base_free(own);
	cb_acc_switches_free(own_sw);
	return rc;
}

int cb_acceptance_cmd(int argc, char **argv)
{
	struct cb_acc_opts o;
	cb_status_t st = cb_acc_parse(argc, argv, &o);
	int rc = 0;

	if (!st && o.help) {
		cb_acc_usage();
		cb_acc_opts_free(&o);
		return 0;
	}
	if (st) {
		cb_cli_say("acceptance", st);
		cb_acc_opts_free(&o);
		return cb_acc_exit(st);
	}
	cb_log_level = CB_LOG_WARN + o.verbose;
	if (strcmp(o.transport, "auto")) {
		struct cb_tp_entry e;
		cb_tp_find(o.transport, &e);
		if (!e.ops || !e.available) {
			fprintf(stderr,
			        "collbench acceptance: transport %s is not "
			        "available here: %s\n",
			        o.transport, e.why);
			cb_acc_opts_free(&o);
			return CB_ACC_EXIT_UNAVAIL;
		}
	}
	struct cb_cli_job job = { .np = o.np,
		                  .np_set = o.np_set,
		                  .rendezvous = o.rendezvous,
		                  .timeout_s = o.timeout_s +
		                               4 * o.set.pair_timeout_s };
	if ((st = cb_cli_start(&job, acc_rank, &o, &rc))) {
		cb_cli_say("acceptance", st);
		rc = cb_acc_exit(st);
	}
	cb_acc_opts_free(&o);
	return rc;
}
