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
	int probed, nprobe; /* cb_accp_leaf_probe done; its pairs */
	unsigned char *
	        cand; /* [leaf] measured again (1), at full rate (2); or NULL */
	int no_cut;   /* the pairs below a gap across leaves were no uplink's */
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
/* plan_noise.c: the quick tier's pairs (@probes 0: without the probe
 * round's, 1: with, 2: those alone); NULL out of memory */
struct qpair *cb_accp_quick_pairs(struct cb_accp *p, int *nq, int probes);
/* the reference, the noise and the floor (res); @w: 3 @nq + 2 n + 2
 * doubles of scratch */
void cb_accp_noise(struct cb_accp *p, struct qpair *q, int nq, double *w);
/* the floors t measurements (3..MAXP) all below are held to, as shares
 * of the reference, from the nodes not in @skip; 0: no such rule */
void cb_accp_all_below(const struct cb_accp *p, const unsigned char *skip,
                       double *out);
/* failed, unmeasured or below the floor */
int cb_accp_q_out(const struct cb_accp *p, const struct qpair *e);
/* plan_leaves.c: with leaves known, the slow uplinks found and named
 * (their hosts' named = 2); @qp: the probe round's pairs; @w: @nq +
 * @nqp doubles of scratch */
void cb_accp_uplinks(struct cb_accp *p, const struct qpair *q, int nq,
                     const struct qpair *qp, int nqp, double *w);
/* A pair across leaves (l < m) between fine hosts: a partner at full
 * rate inside their own leaf. */
struct cb_accp_ledge {
	int l, m;
	double v;
};
/* @fine[n] set from @q; *@out: @q's and @qp's pairs across between fine
 * hosts, by leaf pair; their count, -1 out of memory */
int cb_accp_leaf_edges(const struct cb_accp *p, const struct qpair *q, int nq,
                       const struct qpair *qp, int nqp, unsigned char *fine,
                       struct cb_accp_ledge **out);
int cb_accp_leaves_met(const struct cb_accp_ledge *e, int ne, int l, int m);
/* @proven[l] = 1 where the pairs with some other leaf have their median
 * at the floor or above (l's uplink carries the full rate); @w: @ne
 * doubles; how many leaves are */
int cb_accp_proven_leaves(const struct cb_accp *p,
                          const struct cb_accp_ledge *e, int ne,
                          unsigned char *proven, double *w);
/* No switches given: where every quick pair splits the nodes into
 * groups of 2 or more, normal inside and outside between, those are the
 * leaves (p->igroup, p->c.group; res.group_inferred). */
void cb_accp_infer_groups(struct cb_accp *p, const struct qpair *q, int nq);
/* plan_probe.c: a round between leaves, into p->batch: leaves whose
 * pairs across are all slow and met only such leaves meet others; the
 * leaves in @cand (NULL: none) meet proven ones, beside controls */
void cb_accp_leaf_probe(struct cb_accp *p, const struct qpair *q, int nq,
                        const unsigned char *cand, double *w);
/* plan_judge.c: the noise so far and cb_accp_leaf_probe; p->nb */
int cb_accp_probe_round(struct cb_accp *p);
/* A pair across an uplink named slow, or one slow in
 * the quick tier but at full rate measured again (p->cand 2), or across
 * any where every pair across was slow (res.leaves_unknown): the
 * uplinks' or a busy moment's, never a host's; its ends are not
 * measured together to judge one of them */
int cb_accp_uplink_pair(const struct cb_accp *p, int x, int y);

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
