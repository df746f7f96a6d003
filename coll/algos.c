/* SPDX-License-Identifier: MIT */
/* coll/algos.c - the table of algorithms (the collectives: coll/colls.c). */
#include <string.h>

#include "coll/coll.h"
#include "coll/sched.h"

extern const struct cb_algo cb_algo_ring;
extern const struct cb_algo cb_algo_tree;
extern const struct cb_algo cb_algo_rd;
extern const struct cb_algo cb_algo_rabenseifner;
extern const struct cb_algo cb_algo_ps;
extern const struct cb_algo cb_algo_ps_async;
extern const struct cb_algo cb_algo_pairwise;
extern const struct cb_algo cb_algo_linear;
extern const struct cb_algo cb_algo_dissemination;
extern const struct cb_algo cb_algo_direct;
extern const struct cb_algo cb_algo_latency;
extern const struct cb_algo cb_algo_bw;
extern const struct cb_algo cb_algo_bibw;

const struct cb_algo *const cb_algos[] = {
	&cb_algo_ring,
	&cb_algo_tree,
	&cb_algo_rd,
	&cb_algo_rabenseifner,
	&cb_algo_ps,
	&cb_algo_ps_async,
	&cb_algo_pairwise,
	&cb_algo_linear,
	&cb_algo_dissemination,
	&cb_algo_direct,
	&cb_algo_latency,
	&cb_algo_bw,
	&cb_algo_bibw,
	NULL,
};

cb_status_t cb_algo_plan_build(const struct cb_algo *a, struct cb_comm *c,
                               const struct cb_plan_cfg *cfg,
                               struct cb_plan **plan)
{
	if (a->sched)
		return cb_sched_plan_build(a->sched, c, cfg, plan);
	return a->plan_build(c, cfg, plan);
}

const struct cb_algo *cb_algo_find(const char *name)
{
	for (int i = 0; cb_algos[i]; i++)
		if (!strcmp(cb_algos[i]->name, name))
			return cb_algos[i];
	return NULL;
}
