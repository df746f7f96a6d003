/* SPDX-License-Identifier: MIT */
/*
 * cli/counters.c - port counters before and after a run (see counters.h).
 *
 * Each rank reads the counters of the devices it uses; ranks of one host
 * share ports, so rank 0 keeps the lowest rank's reading per host and port.
 */
#include "cli/counters.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "reports/report.h"

/* What each rank sends rank 0. */
struct cnt_rank {
	int32_t n;
	struct {
		char dev[48];
		char name[40];
		uint64_t delta;
		int32_t err;
	} c[CB_CNT_MAX];
};

cb_status_t cb_counters_begin(struct cb_comm *c, struct cb_counters *k)
{
	memset(k, 0, sizeof(*k));
	k->on = cb_comm_has_counters(c);
	if (!k->on)
		return CB_OK;
	return cb_comm_counters(c, k->before, CB_CNT_MAX, &k->n);
}

static int seen(const struct cb_port_delta *d, int n, const char *host,
                const char *dev, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(d[i].host, host) && !strcmp(d[i].dev, dev) &&
		    !strcmp(d[i].name, name))
			return 1;
	return 0;
}

cb_status_t cb_counters_end(struct cb_comm *c, struct cb_counters *k,
                            struct cb_outputs *w)
{
	struct cb_tp_counter now[CB_CNT_MAX];
	struct cnt_rank mine = { 0 }, *all = NULL;
	struct cb_port_delta *d = NULL;
	int n = 0, nd = 0;
	cb_status_t st;

	if (!k->on)
		return CB_OK;
	if ((st = cb_comm_counters(c, now, CB_CNT_MAX, &n)))
		return st;
	for (int i = 0; i < n && i < CB_CNT_MAX; i++) {
		uint64_t b = 0;
		for (int j = 0; j < k->n; j++)
			if (!strcmp(k->before[j].dev, now[i].dev) &&
			    !strcmp(k->before[j].name, now[i].name))
				b = k->before[j].value;
		snprintf(mine.c[i].dev, sizeof(mine.c[i].dev), "%.47s",
		         now[i].dev);
		snprintf(mine.c[i].name, sizeof(mine.c[i].name), "%.39s",
		         now[i].name);
		mine.c[i].delta = now[i].value - b;
		mine.c[i].err = now[i].is_error;
		mine.n++;
	}
	all = c->rank == 0 ? calloc((size_t)c->world, sizeof(*all))
	                   : malloc(sizeof(*all) * (size_t)c->world);
	d = calloc((size_t)c->world * CB_CNT_MAX, sizeof(*d));
	if (!all || !d) {
		free(all);
		free(d);
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	}
	st = cb_boot_allgather(c->boot, "every rank's port counters", &mine,
	                       sizeof(mine), all);
	for (int r = 0; !st && c->rank == 0 && r < c->world; r++) {
		const char *host = cb_comm_host_name(c, r);
		for (int i = 0; i < all[r].n && i < CB_CNT_MAX; i++) {
			if (seen(d, nd, host, all[r].c[i].dev,
			         all[r].c[i].name))
				continue;
			struct cb_port_delta *x = &d[nd++];
			snprintf(x->host, sizeof(x->host), "%.63s", host);
			snprintf(x->dev, sizeof(x->dev), "%.47s",
			         all[r].c[i].dev);
			snprintf(x->name, sizeof(x->name), "%s",
			         all[r].c[i].name);
			x->delta = (int64_t)all[r].c[i].delta;
			x->is_error = all[r].c[i].err;
		}
	}
	if (!st && c->rank == 0)
		cb_output_counters(w, d, nd);
	free(all);
	free(d);
	return st;
}
