/* SPDX-License-Identifier: MIT */
/*
 * acceptance/plan_impl.h - the planner's state, shared by acceptance/plan.c
 * (the rounds), acceptance/plan_judge.c and acceptance/plan_leaves.c (the
 * judge), acceptance/plan_util.c (pieces they share).  Private: callers
 * use acceptance/plan.h.
 */
#ifndef CB_ACCEPTANCE_PLAN_IMPL_H
#define CB_ACCEPTANCE_PLAN_IMPL_H

#include "acceptance/plan.h"

#define MAXP            8    /* locate partners per node, at most */
#define CONFS           3    /* confirmations of a path */
#define CB_ACCP_CTRL    (-2) /* who: a control pair */
#define CB_ACCP_MAXCTRL 8
/* A quick round whose median pair is below this share of the median of
 * the quick rounds' medians ran while the machine or fabric was busy:
 * it is measured again (twice at most).  Only a retry: the verdict
 * comes from the noise measured, not from this. */
#define CB_ACCP_BUSY 0.8

struct conf {
	int a, b, left, tries, outs;
	double v[CONFS];
};

struct cb_accp {
	struct cb_accp_cfg c;
	int n, L, full, stage, r, quick_rounds;
	int *order; /* position -> node */
	int (*batch)[2], *who, nb, bstage, total;
	int (*first)[2], nfirst, nrep, rep_at[4]; /* the first rounds' pairs */
	struct cb_accp_meas *m;
	int nm, capm;
	struct cb_accp_find *f;
	int nf, capf;
	unsigned char *dropped, *cleared, *suspect, *named, *busy, *tied;
	int *need, *lt, *lo;   /* locate: partners wanted, measured, outside */
	int *qt, *qo;          /* the quick tier: pairs, outside */
	int *qm;               /* ... with a value: the node median's count */
	double *nmed;          /* [n] each node's median quick pair */
	double *ls;            /* [n][MAXP] locate values / the round's scale */
	double *lc;            /* [n][MAXP] the round's controls / the ref */
	double rscale;         /* the last round's: controls' median / ref */
	double allb[MAXP + 1]; /* t measurements all below: a node (t >= 3) */
	int *used;             /* [n][MAXP] locate partners */
	double *lv;            /* [n][MAXP] */
	int npool, *pool, rot;
	struct conf *conf;
	int nconf;
	int *redo, nredo, iredo, redo_pass; /* busy quick rounds to redo */
	int (*good)[2], ngood;              /* quick pairs inside: controls */
	int *igroup; /* no switches given: groups the pairs showed, or NULL */
	struct cb_accp_result res;
};

double cb_accp_median(double *v, int n); /* sorts @v */

/* A pair of the quick tier (plan_judge.c) with up to 3 measurements;
 * its value and whether it is outside: plan_util.c. */
struct qpair {
	int a, b, nv, fails;
	double v[3]; /* up to 3 measurements of it */
};
double cb_accp_qvalue(const struct qpair *e); /* its median; 0 none */
/* failed, unmeasured or below the floor */
int cb_accp_q_out(const struct cb_accp *p, const struct qpair *e);
/* plan_leaves.c: with leaves known, the slow uplinks found and named
 * (their hosts' named = 2; @w: @nq doubles of scratch) */
void cb_accp_uplinks(struct cb_accp *p, const struct qpair *q, int nq,
                     double *w);
/* No switches given: where every quick pair splits the nodes into
 * groups of 2 or more, normal inside and outside between, those are the
 * leaves (p->igroup, p->c.group; res.group_inferred). */
void cb_accp_infer_groups(struct cb_accp *p, const struct qpair *q, int nq);
/* @x and @y may be measured together to judge one: not across an
 * uplink named slow */
int cb_accp_same_side(const struct cb_accp *p, int x, int y);

/* Add pair (a, b) to the round being built for @who (-1: none). */
void cb_accp_put(struct cb_accp *p, int a, int b, int who);
void cb_accp_find(struct cb_accp *p, enum cb_accp_kind kind, int a, int b,
                  double bw, int tries, int outs);
/* After the quick tier: reference, noise, suspects, partners. */
void cb_accp_judge_quick(struct cb_accp *p);
void cb_accp_locate_round(struct cb_accp *p);
int cb_accp_tie_break(struct cb_accp *p);
void cb_accp_judge_locate(struct cb_accp *p);
void cb_accp_confirm_round(struct cb_accp *p);
void cb_accp_judge_confirm(struct cb_accp *p);
/* Outside the noise, with the floor scaled by what the round's control
 * pairs got (cb_accp_round_scale, called once per round before). */
int cb_accp_outside(const struct cb_accp *p, int ok, double bw, double scale);
double cb_accp_round_scale(struct cb_accp *p, const double *bw, const int *ok);
/* The floor of a node's median of @m pairs (0: no node rule under 2). */
double cb_accp_node_floor(const struct cb_accp *p, int m);

#endif
