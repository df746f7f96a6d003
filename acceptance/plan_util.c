/* SPDX-License-Identifier: MIT */
/*
 * acceptance/plan_util.c - what the planner's files share: the median, a
 * finding, a quick-tier pair's value and whether it is outside.  Pure code.
 */
#include <stdlib.h>

#include "acceptance/plan_impl.h"

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double cb_accp_median(double *v, int n)
{
	if (n <= 0)
		return 0;
	qsort(v, (size_t)n, sizeof(*v), cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void cb_accp_find(struct cb_accp *p, enum cb_accp_kind kind, int a, int b,
                  double bw, int tries, int outs)
{
	if (p->nf == p->capf) {
		int cap = p->capf ? 2 * p->capf : 16;
		struct cb_accp_find *f =
		        realloc(p->f, (size_t)cap * sizeof(*f));
		if (!f)
			return;
		p->f = f;
		p->capf = cap;
	}
	p->f[p->nf++] = (struct cb_accp_find){ .kind = kind,
		                               .a = a,
		                               .b = b,
		                               .bw = bw,
		                               .tries = tries,
		                               .outside = outs,
		                               .first_bad = -1 };
}

double cb_accp_qvalue(const struct qpair *e)
{
	double v[3] = { e->v[0], e->v[1], e->v[2] };

	return e->nv ? cb_accp_median(v, e->nv) : 0;
}

int cb_accp_q_out(const struct cb_accp *p, const struct qpair *e)
{
	return e->fails || !e->nv || cb_accp_qvalue(e) < p->res.floor;
}

void cb_accp_put(struct cb_accp *p, int a, int b, int who)
{
	if (a == b || p->dropped[a] || p->dropped[b])
		return;
	p->batch[p->nb][0] = a < b ? a : b;
	p->batch[p->nb][1] = a < b ? b : a;
	p->who[p->nb++] = who;
}
