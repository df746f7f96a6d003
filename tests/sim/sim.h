/* SPDX-License-Identifier: MIT */
/*
 * tests/sim/sim.h - a modelled fabric for acceptance's planner and judge
 * (acceptance/plan.h): hosts on leaf switches of a two-level fat tree,
 * each with its cable's rate, uplinks shared by the pairs that cross them
 * in a round, a latency, and faults (a slow cable, a lossy one, a link
 * that flaps, a slow uplink) placed by a seeded generator, as is the
 * noise every measurement gets.  A round of pairs returns what that
 * fabric would measure, and how long the real tool would take for it.
 * Used by collbench-accept-sim (tests/sim/sim_main.c) only: a test
 * instrument, outside the product folders.
 */
#ifndef CB_ACCEPTANCE_SIM_H
#define CB_ACCEPTANCE_SIM_H

#include <stdint.h>

enum { SIM_SLOW, SIM_LOSSY, SIM_FLAP, SIM_UPLINK, SIM_NKINDS };

struct cb_accsim_cfg {
	int n, leaf;        /* hosts; hosts per leaf switch */
	double rate;        /* GB/s of a host's cable (12.5) */
	double over;        /* uplink oversubscription (1: non-blocking) */
	double lat_us;      /* one way (2) */
	double noise;       /* sigma of ln(bandwidth), per measurement */
	double cable_sigma; /* sigma of ln(rate) from cable to cable */
	double tail;        /* probability of a busy moment (0.5-0.95x) */
	double lower;       /* noise that only lowers: each measurement
	                     * x exp(-lower |N(0,1)|) (CPU contention) */
	double cpu;         /* > 0: pairs bound by the cores the hosts
	                     * share (namespace hosts on one machine): a
	                     * measurement is at most cpu x rate x
	                     * exp(spike |N(0,1)|) (a pair is fast when its
	                     * ranks happen to run at once, never slower than
	                     * the cores' share) x the slower end's own
	                     * factor exp(host_sigma N(0,1)), drawn once (its
	                     * place on the cores) */
	double spike, host_sigma;
	double busy_round; /* probability that a whole round runs while
	                    * the machine is busy (every pair 0.4-0.6x) */
	double pair_timeout_s;
	uint64_t seed;
	int faults[SIM_NKINDS]; /* how many of each kind */
	double slow;            /* a slow cable's factor (1/3) */
	double loss;            /* a lossy cable's loss (0.01) */
	double flap;            /* the chance a flapping link is down (0.3) */
	double uplink;          /* a slow uplink's factor (0.25) */
};

struct cb_accsim;

struct cb_accsim *cb_accsim_new(const struct cb_accsim_cfg *c);
void cb_accsim_free(struct cb_accsim *s);
/* One round of disjoint pairs at once: @bw (GB/s, the slower direction)
 * and @ok for each; the modelled seconds it takes. */
double cb_accsim_round(struct cb_accsim *s, int (*pairs)[2], int n, double *bw,
                       int *ok);
/* The truth: host @x's fault (SIM_*, -1 none); leaf @g's uplink is slow. */
int cb_accsim_host_fault(const struct cb_accsim *s, int x);
int cb_accsim_uplink_bad(const struct cb_accsim *s, int g);
int cb_accsim_leaf_of(const struct cb_accsim *s, int x);

/* --baseline-drop (sim_base.c): the same fabric planned twice, healthy
 * (the baseline) and with its faults and every cable at (1 - @drop) of
 * its rate; the real baseline judge compares them (@tol: the plan's
 * --bw-tolerance, @base_tol: --baseline-tolerance).  2: out of memory. */
struct cb_accsim_base_score {
	int compared;     /* pairs in both runs */
	double ratio;     /* the median node's median ratio */
	int fabric;       /* the fabric named */
	int cannot_tell;  /* the judge said the noise hides such a drop */
	int named;        /* host or path findings naming a faulty host */
	int false_alarms; /* ... naming only good ones; a fabric not dropped */
	int lines;
	char line[3][208];
};
int cb_accsim_base_run(const struct cb_accsim_cfg *c, double tol, double drop,
                       double base_tol, const int *group,
                       struct cb_accsim_base_score *sc);

#endif
