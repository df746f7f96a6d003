/* SPDX-License-Identifier: MIT */
/*
 * tests/sim/sim_main.c - collbench-accept-sim: acceptance's real planner
 * and judge (acceptance/plan.c) driven over the modelled fabric of
 * tests/sim/sim.c, run after run with seeds S, S+1, ...; one line a run
 * and a summary: faults named exactly, false alarms (a good host, leaf or
 * path named), rounds against 2 log2(n) + 4k + 10 (and + 8, the goal),
 * modelled time.
 *
 * A separate program, not a subcommand of collbench: it is a test
 * instrument for the judge, not something an operator runs on a cluster,
 * and the installed CLI stays as it was.  --assert makes it a test: exit
 * 1 on more false alarms than --max-false, more runs over the bound (+10)
 * than --max-over (both 0 unless given), or more misses than --max-miss.
 * The summary also counts the runs over the goal (+8).  --baseline-drop
 * also runs the baseline judge (sim_base.c).
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acceptance/plan.h"
#include "sim.h"

struct opts {
	struct cb_accsim_cfg sim;
	int runs, full, switches, assert, max_miss, max_false, max_over, quiet;
	double tolerance;
	double base_drop, base_tol; /* --baseline-drop (< 0: off) */
};

struct score {
	int faults, named, false_alarms, imprecise, warn, rounds, bound;
	double seconds;
};

static void usage(void)
{
	printf("usage: collbench-accept-sim [options]\n"
	       "  --hosts N --leaf L     hosts, hosts per leaf switch (64, "
	       "32)\n"
	       "  --slow K --lossy K --flap K --uplink K   faults of each "
	       "kind\n"
	       "  --noise S              sigma of ln(bandwidth) a measurement "
	       "(0.03)\n"
	       "  --tail P               chance of a busy moment (0.01)\n"
	       "  --lower S              noise that only lowers: x "
	       "exp(-S |N(0,1)|) (0)\n"
	       "  --cpu F [--spike S] [--host-sigma H]   pairs bound by "
	       "shared cores\n"
	       "                         (namespace hosts): at most F x the "
	       "rate x exp(S |N(0,1)|)\n"
	       "                         (0.5) x the slower end's own factor "
	       "exp(H N(0,1)) (0)\n"
	       "  --busy-rounds P        chance a round starts a busy phase "
	       "(~5 rounds at 0.4-0.6x; 0)\n"
	       "  --slow-factor F        a slow cable's share of the rate "
	       "(0.333)\n"
	       "  --loss P --flap-p P --uplink-factor F\n"
	       "  --seed S --runs R      first seed, runs (1, 1)\n"
	       "  --full                 every pair (--pairs all)\n"
	       "  --no-switches          the planner is not told the leaves\n"
	       "  --tolerance F          the fault size asked for (0.9)\n"
	       "  --assert [--max-miss M] [--max-false F] [--max-over R]\n"
	       "                         exit 1 on more than M misses, F "
	       "false alarms (0),\n"
	       "                         R runs over the round bound (0)\n"
	       "  --baseline-drop F      also: the baseline judge, the same "
	       "fabric healthy, then\n"
	       "                         with the faults and every cable at "
	       "1 - F (0.2: 20%% slower)\n"
	       "  --baseline-tolerance T  its --baseline-tolerance (0.05)\n"
	       "  -q                     the summary only\n");
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "hosts", 1, 0, 'n' },
		{ "leaf", 1, 0, 'l' },
		{ "slow", 1, 0, 1 },
		{ "lossy", 1, 0, 2 },
		{ "flap", 1, 0, 3 },
		{ "uplink", 1, 0, 4 },
		{ "noise", 1, 0, 5 },
		{ "tail", 1, 0, 6 },
		{ "slow-factor", 1, 0, 7 },
		{ "loss", 1, 0, 8 },
		{ "flap-p", 1, 0, 9 },
		{ "uplink-factor", 1, 0, 10 },
		{ "seed", 1, 0, 's' },
		{ "runs", 1, 0, 'r' },
		{ "full", 0, 0, 11 },
		{ "no-switches", 0, 0, 12 },
		{ "tolerance", 1, 0, 13 },
		{ "assert", 0, 0, 14 },
		{ "max-miss", 1, 0, 15 },
		{ "max-false", 1, 0, 26 },
		{ "max-over", 1, 0, 27 },
		{ "busy-rounds", 1, 0, 16 },
		{ "baseline-drop", 1, 0, 17 },
		{ "baseline-tolerance", 1, 0, 18 },
		{ "lower", 1, 0, 19 },
		{ "cpu", 1, 0, 20 },
		{ "spike", 1, 0, 21 },
		{ "host-sigma", 1, 0, 22 },
		{ "help", 0, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	int c;

	*o = (struct opts){
		.sim = { .n = 64,
		         .leaf = 32,
		         .rate = 12.5,
		         .over = 1,
		         .lat_us = 2,
		         .noise = 0.03,
		         .cable_sigma = 0.02,
		         .spike = 0.5,
		         .tail = 0.01,
		         .pair_timeout_s = 10,
		         .seed = 1,
		         .slow = 1.0 / 3,
		         .loss = 0.01,
		         .flap = 0.3,
		         .uplink = 0.25 },
		.runs = 1,
		.switches = 1,
		.tolerance = 0.9,
		.base_drop = -1,
		.base_tol = 0.05,
	};
	while ((c = getopt_long(argc, argv, "n:l:s:r:qh", lo, NULL)) != -1) {
		char *end = NULL;
		double v = optarg ? strtod(optarg, &end) : 0;
		if (optarg &&
		    (end == optarg || *end || !isfinite(v) || v < 0)) {
			fprintf(stderr,
			        "collbench-accept-sim: '%s' is not a number\n",
			        optarg);
			return 2;
		}
		switch (c) {
		case 'n':
			o->sim.n = (int)v;
			break;
		case 'l':
			o->sim.leaf = (int)v;
			break;
		case 1:
		case 2:
		case 3:
		case 4:
			o->sim.faults[c - 1] = (int)v;
			break;
		case 5:
			o->sim.noise = v;
			break;
		case 6:
			o->sim.tail = v;
			break;
		case 7:
			o->sim.slow = v;
			break;
		case 8:
			o->sim.loss = v;
			break;
		case 9:
			o->sim.flap = v;
			break;
		case 10:
			o->sim.uplink = v;
			break;
		case 's':
			o->sim.seed = (uint64_t)v;
			break;
		case 'r':
			o->runs = (int)v;
			break;
		case 11:
			o->full = 1;
			break;
		case 12:
			o->switches = 0;
			break;
		case 13:
			o->tolerance = v;
			break;
		case 14:
			o->assert = 1;
			break;
		case 15:
			o->max_miss = (int)v;
			break;
		case 26:
			o->max_false = (int)v;
			break;
		case 27:
			o->max_over = (int)v;
			break;
		case 16:
			o->sim.busy_round = v;
			break;
		case 17:
			o->base_drop = v;
			break;
		case 18:
			o->base_tol = v;
			break;
		case 19:
			o->sim.lower = v;
			break;
		case 20:
			o->sim.cpu = v;
			break;
		case 21:
			o->sim.spike = v;
			break;
		case 22:
			o->sim.host_sigma = v;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'h':
			usage();
			exit(0);
		default:
			fprintf(stderr, "collbench-accept-sim: bad option "
			                "(--help)\n");
			return 2;
		}
	}
	if (o->sim.n < 2 || o->sim.n > 65536 || o->sim.leaf < 1 ||
	    o->runs < 1 || optind < argc) {
		fprintf(stderr, "collbench-accept-sim: --hosts 2..65536, "
		                "--leaf >= 1, --runs >= 1\n");
		return 2;
	}
	return 0;
}

/* A group the judge found without switches (r->group_inferred): the bad
 * leaf whose hosts it is exactly, or -1. */
static int group_leaf(const struct cb_accsim *s, const struct cb_accp_result *r,
                      int g, int n)
{
	int leaf = -2;

	for (int x = 0; x < n; x++)
		if (r->group[x] == g)
			leaf = leaf == -2 || leaf == cb_accsim_leaf_of(s, x)
			               ? cb_accsim_leaf_of(s, x)
			               : -1;
	if (leaf < 0 || !cb_accsim_uplink_bad(s, leaf))
		return -1;
	for (int x = 0; x < n; x++)
		if (cb_accsim_leaf_of(s, x) == leaf && r->group[x] != g)
			return -1;
	return leaf;
}

/* Did finding @f of @r name a fault (1), something near one (2), or a
 * good part of the fabric (0)? */
static int judge_find(const struct cb_accsim *s, const struct cb_accp_result *r,
                      const struct cb_accp_find *f, unsigned char *found, int n)
{
	if (f->kind == CB_ACCP_UPLINK && r->group_inferred) {
		/* a group slow to the rest: a bad leaf's hosts exactly;
		 * of two such groups, the other is the rest of the fabric
		 * (the finding names the two together: near, not false) */
		int l = group_leaf(s, r, f->a, n), other = 0;
		if (l >= 0) {
			found[n + l] = 1;
			return 1;
		}
		for (int i = 0; i < r->nfinds; i++)
			other |= r->finds[i].kind == CB_ACCP_UPLINK &&
			         r->finds[i].a != f->a &&
			         group_leaf(s, r, r->finds[i].a, n) >= 0;
		return other ? 2 : 0;
	}
	if (f->kind == CB_ACCP_UPLINK) {
		if (!cb_accsim_uplink_bad(s, f->a))
			return 0;
		found[n + f->a] = 1;
		return 1;
	}
	if (f->kind == CB_ACCP_PATH) {
		for (int e = 0; e < 2; e++) {
			int x = e ? f->b : f->a;
			if (cb_accsim_host_fault(s, x) >= 0 ||
			    cb_accsim_uplink_bad(s, cb_accsim_leaf_of(s, x)))
				return 2;
		}
		return 0;
	}
	if (cb_accsim_host_fault(s, f->a) < 0)
		return 0;
	found[f->a] = 1;
	return 1;
}

static int one_run(const struct opts *o, uint64_t seed, struct score *sc)
{
	struct cb_accsim_cfg sc_cfg = o->sim;
	int n = o->sim.n, np, stage;

	sc_cfg.seed = seed;
	struct cb_accsim *s = cb_accsim_new(&sc_cfg);
	int *group = malloc((size_t)n * sizeof(int));
	int(*pairs)[2] = malloc(((size_t)n / 2 + 1) * sizeof(*pairs));
	double *bw = malloc(((size_t)n / 2 + 1) * sizeof(double));
	int *ok = malloc(((size_t)n / 2 + 1) * sizeof(int));
	int nleaf = (n + o->sim.leaf - 1) / o->sim.leaf;
	unsigned char *found = calloc((size_t)n + (size_t)nleaf, 1);

	if (!s || !group || !pairs || !bw || !ok || !found) {
		fprintf(stderr, "collbench-accept-sim: cannot make that fabric "
		                "(more faults than hosts or leaves?)\n");
		return 2;
	}
	for (int x = 0; x < n; x++)
		group[x] = cb_accsim_leaf_of(s, x);
	struct cb_accp_cfg pc = { .n = n,
		                  .group = o->switches ? group : NULL,
		                  .tolerance = o->tolerance,
		                  .full = o->full ? 1 : 0 };
	struct cb_accp *p = cb_accp_new(&pc);
	if (!p)
		return 2;
	memset(sc, 0, sizeof(*sc));
	while ((np = cb_accp_next(p, pairs, &stage)) > 0) {
		sc->seconds += cb_accsim_round(s, pairs, np, bw, ok);
		cb_accp_feed(p, bw, ok);
	}
	const struct cb_accp_result *r = cb_accp_verdict(p);
	for (int k = 0; k < SIM_NKINDS; k++)
		sc->faults += o->sim.faults[k];
	for (int i = 0; i < r->nfinds; i++) {
		int v = judge_find(s, r, &r->finds[i], found, n);
		sc->false_alarms += v == 0;
		sc->imprecise += v == 2;
	}
	for (int i = 0; i < n + nleaf; i++)
		sc->named += found[i];
	for (int st = 0; st < CB_ACCP_NSTAGES; st++)
		sc->rounds += r->rounds[st];
	/* 2 log2 n + 4 a fault + 10 (at 4-8 nodes the full tournament and
	 * the repeats take most of + 8: a suspect's tie-break or a path to
	 * confirm goes over it under heavy noise), and the busy rounds it
	 * measured again (reported to the user) */
	sc->bound = (int)floor(2 * log2((double)n) + 4 * sc->faults + 10) +
	            r->redo_rounds;
	sc->warn = r->warn || r->leaves_unknown || r->untold ||
	           (r->low_n && r->low_cut <= 0);
	if (!o->quiet) {
		printf("seed %llu: %d/%d named, %d false, %d near; rounds %d "
		       "(quick %d, repeat %d, locate %d, confirm %d; bound "
		       "%d); %.1f s; ref %.3g GB/s, sigma %.3f (repeats "
		       "%.3f, cluster %.3f, below %.3f, nodes %.3f), floor "
		       "%.3g%s%s\n",
		       (unsigned long long)seed, sc->named, sc->faults,
		       sc->false_alarms, sc->imprecise, sc->rounds,
		       r->rounds[0], r->rounds[1], r->rounds[2], r->rounds[3],
		       sc->bound, sc->seconds, r->ref, r->sigma, r->sigma_rep,
		       r->sigma_cl, r->sigma_lo, r->sigma_node, r->floor,
		       r->warn ? " WARN" : "",
		       r->leaves_unknown ? " WARN(every pair across slow)"
		       : r->low_n && r->low_cut <= 0 ? " WARN(two modes)"
		                                     : "");
		for (int i = 0; i < r->nfinds; i++) {
			const struct cb_accp_find *f = &r->finds[i];
			static const char *const kn[] = { "node", "path",
				                          "uplink", "flap",
				                          "dead" };
			char b[16] = "";
			if (f->b >= 0)
				snprintf(b, sizeof(b), "-%d", f->b);
			printf("  %s %d%s: %.3g GB/s, %d of %d outside\n",
			       kn[f->kind], f->a, b, f->bw, f->outside,
			       f->tries);
		}
		/* and the faults it did not name */
		static const char *const fk[] = { "slow", "lossy", "flap" };
		for (int x = 0; x < n; x++) {
			int k = cb_accsim_host_fault(s, x);
			if (k >= 0 && !found[x])
				printf("  missed: %s host %d\n",
				       k < 3 ? fk[k] : "?", x);
		}
		for (int g = 0; g < nleaf; g++)
			if (cb_accsim_uplink_bad(s, g) && !found[n + g])
				printf("  missed: uplink %d\n", g);
	}
	cb_accp_free(p);
	cb_accsim_free(s);
	free(group);
	free(pairs);
	free(bw);
	free(ok);
	free(found);
	return 0;
}

struct base_total {
	int fabric, cannot_tell, missed, named, false_alarms;
};

/* --baseline-drop: one run of the baseline judge, added to @bt. */
static int base_run(const struct opts *o, uint64_t seed, struct base_total *bt)
{
	struct cb_accsim_cfg c = o->sim;
	struct cb_accsim_base_score sc;
	int *group = malloc((size_t)c.n * sizeof(int));
	struct cb_accsim *s;
	int rc;

	c.seed = seed;
	if (!group || !(s = cb_accsim_new(&c))) {
		free(group);
		return 2;
	}
	for (int x = 0; x < c.n; x++)
		group[x] = cb_accsim_leaf_of(s, x);
	cb_accsim_free(s);
	rc = cb_accsim_base_run(&c, o->tolerance, o->base_drop, o->base_tol,
	                        o->switches ? group : NULL, &sc);
	free(group);
	if (rc)
		return rc;
	int missed = o->base_drop > 0 && !sc.fabric && !sc.cannot_tell;
	bt->fabric += sc.fabric;
	bt->cannot_tell += sc.cannot_tell && !sc.fabric;
	bt->missed += missed;
	bt->named += sc.named;
	bt->false_alarms += sc.false_alarms;
	if (!o->quiet || sc.false_alarms || missed) {
		printf("seed %llu baseline: %d pairs compared, ratio %.3f; "
		       "fabric %s%s; %d hosts named, %d false\n",
		       (unsigned long long)seed, sc.compared, sc.ratio,
		       sc.fabric ? "named" : "not named",
		       sc.cannot_tell ? " (noise: cannot tell)" : "", sc.named,
		       sc.false_alarms);
		for (int i = 0; i < sc.lines; i++)
			printf("  %s\n", sc.line[i]);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct score t = { 0 }, sc;
	struct base_total bt = { 0 };
	int rc = parse(argc, argv, &o), alarm_runs = 0, over = 0, warn = 0;
	int over_goal = 0;
	int max_rounds = 0;
	double max_s = 0;

	if (rc)
		return rc;
	for (int i = 0; i < o.runs; i++) {
		if ((rc = one_run(&o, o.sim.seed + (uint64_t)i, &sc)))
			return rc;
		t.faults += sc.faults;
		t.named += sc.named;
		t.false_alarms += sc.false_alarms;
		t.imprecise += sc.imprecise;
		t.rounds += sc.rounds;
		t.seconds += sc.seconds;
		alarm_runs += sc.false_alarms > 0;
		over += sc.rounds > sc.bound;
		over_goal += sc.rounds > sc.bound - 2; /* the goal: + 8 */
		warn += sc.warn;
		max_rounds = sc.rounds > max_rounds ? sc.rounds : max_rounds;
		max_s = fmax(max_s, sc.seconds);
		t.bound = sc.bound;
		if (o.base_drop >= 0 &&
		    (rc = base_run(&o, o.sim.seed + (uint64_t)i, &bt)))
			return rc;
	}
	printf("SUMMARY hosts=%d leaf=%d faults=slow:%d,lossy:%d,flap:%d,"
	       "uplink:%d noise=%g tail=%g runs=%d named=%d/%d "
	       "false_alarms=%d runs_with_false_alarm=%d near=%d warn_runs=%d "
	       "rounds_mean=%.1f rounds_max=%d bound=%d over_bound=%d "
	       "over_goal=%d modelled_s_mean=%.1f modelled_s_max=%.1f\n",
	       o.sim.n, o.sim.leaf, o.sim.faults[0], o.sim.faults[1],
	       o.sim.faults[2], o.sim.faults[3], o.sim.noise, o.sim.tail,
	       o.runs, t.named, t.faults, t.false_alarms, alarm_runs,
	       t.imprecise, warn, (double)t.rounds / o.runs, max_rounds,
	       t.bound, over, over_goal, t.seconds / o.runs, max_s);
	if (o.base_drop >= 0)
		printf("BASELINE drop=%g tolerance=%g runs=%d fabric_named=%d "
		       "cannot_tell=%d missed=%d hosts_named=%d "
		       "false_alarms=%d\n",
		       o.base_drop, o.base_tol, o.runs, bt.fabric,
		       bt.cannot_tell, bt.missed, bt.named, bt.false_alarms);
	if (o.assert && o.base_drop >= 0 &&
	    (bt.false_alarms || bt.missed > o.max_miss)) {
		printf("FAILED: baseline: %d false alarms, %d drops missed "
		       "(at most %d allowed)\n",
		       bt.false_alarms, bt.missed, o.max_miss);
		return 1;
	}
	if (o.assert && (t.false_alarms > o.max_false || over > o.max_over ||
	                 t.faults - t.named > o.max_miss)) {
		printf("FAILED: %d false alarms (at most %d allowed), %d runs "
		       "over the round bound (%d), %d of %d faults missed "
		       "(%d)\n",
		       t.false_alarms, o.max_false, over, o.max_over,
		       t.faults - t.named, t.faults, o.max_miss);
		return 1;
	}
	return 0;
}
