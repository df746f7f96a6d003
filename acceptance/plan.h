/* SPDX-License-Identifier: MIT */
/*
 * acceptance/plan.h - acceptance's planner and judge as pure code: no
 * sockets, no communicator, no clock.  It is given the number of nodes
 * (and, where known, the leaf switch of each), hands out rounds of
 * disjoint pairs to measure, takes back what each pair measured (its
 * bandwidth, or that it failed), and ends with a verdict: the nodes,
 * paths and uplinks it names, and whether the noise it measured is too
 * wide to tell a fault of the asked size.
 *
 * `collbench acceptance` drives it over the real fabric (acceptance/cmd.c);
 * the fabric simulator (tests/sim/sim.c, collbench-accept-sim) drives the
 * same code over a modelled fat tree.  docs/acceptance-judging.md says how
 * it judges and how the plan grows.
 */
#ifndef CB_ACCEPTANCE_PLAN_H
#define CB_ACCEPTANCE_PLAN_H

#include <stddef.h>

/* The confidence a pair is judged at: a pair is outside when its
 * bandwidth is below the reference by more than CB_ACCP_K robust
 * standard deviations of the measured noise (one-sided, under a
 * log-normal model: p = 2.3e-4 per healthy measurement). */
#define CB_ACCP_K 3.5
/* Up to this many nodes every pair is measured by default. */
#define CB_ACCP_FULL_MAX 8

enum cb_accp_stage {
	CB_ACCP_QUICK,   /* rounds of disjoint pairs (or every pair) */
	CB_ACCP_REPEAT,  /* the first rounds again: the noise of repeats */
	CB_ACCP_LOCATE,  /* suspects against cleared partners */
	CB_ACCP_CONFIRM, /* suspect pairs with no one to blame, again */
	CB_ACCP_NSTAGES
};
const char *cb_accp_stage_name(int stage); /* "quick", ... */

enum cb_accp_kind {
	CB_ACCP_NODE,   /* slow to every cleared partner */
	CB_ACCP_PATH,   /* one pair slow (or failing) every time */
	CB_ACCP_UPLINK, /* a leaf slow to every other leaf, normal inside */
	CB_ACCP_FLAP,   /* failed with different partners, and recovered */
	CB_ACCP_DEAD,   /* every measurement failed from some round on */
};

struct cb_accp_cfg {
	int n;            /* nodes */
	const int *group; /* [n] each node's leaf switch; NULL unknown */
	double tolerance; /* a fault this far below is asked for (0.9) */
	double k;         /* 0: CB_ACCP_K */
	int full;         /* 1 every pair (--pairs all); 0 up to full_max;
	                   * -1 never */
	int full_max;     /* 0: CB_ACCP_FULL_MAX */
};

/* One measurement the planner asked for and got back. */
struct cb_accp_meas {
	int a, b; /* nodes, a < b */
	int stage, round;
	int ok;
	double bw;   /* GB/s, 0 when !ok */
	int redone;  /* its round ran busy and was measured again */
	int suspect; /* for a suspect (locate, confirm), not a control */
	int probe;   /* between leaves (cb_accp_leaf_probe): judges uplinks
	              * only, never a host or the noise */
};

struct cb_accp_find {
	enum cb_accp_kind kind;
	int a, b;      /* nodes (b -1); UPLINK: a is the leaf */
	double bw;     /* the median of the pairs that named it */
	int tries;     /* measurements that named it */
	int outside;   /* ... of them outside (or failed) */
	int first_bad; /* DEAD: the round of its first failure */
	/* NODE: named because every measurement against cleared hosts was
	 * below this share of the reference (0: by the single floor) */
	double all_below;
};

struct cb_accp_result {
	double ref;       /* the median over nodes of each node's median */
	double sigma;     /* the repeats' spread used, at least 0.5% */
	double sigma_rep; /* between repeats of the same pair */
	double sigma_cl;  /* between pairs, over the cluster (MAD) */
	double sigma_lo;  /* ... those below the reference alone */
	/* The quick tier's pairs below a gap wider than the noise, a
	 * quarter to a half of them: low_n of low_of, their median and the
	 * others'; 0 where none.  Where they are across leaf switches given
	 * (pairs behind slow uplinks) they are left out of the cluster's
	 * spread, its lower quartile and the floors of measurements all
	 * below (low_cut: the lowest pair above the gap); else 0 and the
	 * verdict warns of them. */
	int low_n, low_of;
	double low_bw, high_bw, low_cut;
	int low_busy; /* ... across leaves, but at full rate measured again */
	double k;
	double floor;    /* bandwidth below which a pair is outside */
	int warn;        /* the noise hides faults of the asked size */
	double vary_pct; /* the median difference between repeats, % */
	double tell_pct; /* the smallest fault it can tell, % */
	/* A host slow to all its peers: its median pair is judged against
	 * the noise of a median of that many (sigma1 per measurement: from
	 * how much the nodes' medians differ, sigma_node, with 5 nodes or
	 * more in it; else the repeats', or more where the medians differ
	 * more). */
	double sigma_node;    /* the nodes' medians' spread (MAD) */
	double sigma1;        /* per measurement, for the node rule */
	int node_pairs;       /* the median node's quick pairs */
	double tell_node_pct; /* the smallest such fault it can tell, % */
	int rounds[CB_ACCP_NSTAGES], pairs[CB_ACCP_NSTAGES];
	char why[CB_ACCP_NSTAGES][192]; /* why that many rounds */
	int suspect_pairs, suspect_nodes, cleared_pairs;
	int redo_rounds; /* quick rounds measured again: they ran busy */
	double redo_pct; /* the slowest of them, % of the others' median */
	int ctrl_pairs;  /* control pairs measured beside locate/confirm */
	const struct cb_accp_find *finds;
	int nfinds;
	/* The leaves UPLINK finds name: cb_accp_cfg.group, or where none
	 * was given and the quick tier's pairs split the nodes into groups
	 * normal within and slow between, those (group_inferred 1; an UPLINK
	 * is then such a group, slow to the others: its switch, its uplink
	 * or each host).  NULL: none. */
	const int *group;
	int group_inferred;
	/* Switches given, more than two leaves met and every pair across
	 * slow: how many leaves (no uplink named: all slow, or the fabric
	 * oversubscribed); 0 otherwise */
	int leaves_unknown;
	/* Switches given: hosts slow to partners in other leaves alone,
	 * none of their own leaf cleared to measure them against: their
	 * uplink or their cables, not told; not named */
	int untold;
	const struct cb_accp_meas *meas; /* everything measured, in order */
	int nmeas;
};

struct cb_accp;

/* NULL when out of memory or @c is not usable (n < 2). */
struct cb_accp *cb_accp_new(const struct cb_accp_cfg *c);
void cb_accp_free(struct cb_accp *p);

/* The next round: up to n / 2 disjoint pairs into @pairs (a < b), its
 * stage into *@stage.  0: the plan is done (cb_accp_verdict). */
int cb_accp_next(struct cb_accp *p, int (*pairs)[2], int *stage);
/* What the round just handed out measured: @bw[i] GB/s (the slower
 * direction), @ok[i] 0 when pair i failed. */
void cb_accp_feed(struct cb_accp *p, const double *bw, const int *ok);
/* Node @x stopped answering: no more pairs with it (what it measured so
 * far still counts). */
void cb_accp_drop(struct cb_accp *p, int x);

/* The verdict, once cb_accp_next returned 0 (valid until cb_accp_free). */
const struct cb_accp_result *cb_accp_verdict(struct cb_accp *p);

#endif
