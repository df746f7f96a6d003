/* SPDX-License-Identifier: MIT */
/*
 * acceptance/drive.c - the pairwise stage driven by the planner and judge
 * of acceptance/plan.c, over the real fabric: rank 0 holds the plan,
 * tells every rank each round (a store key per round), every rank runs
 * its pair of it (cb_acc_stage_pairs), rank 0 feeds back what was
 * measured, and at the end turns the plan's verdict into findings and
 * warnings in the record.  The same plan runs over the fabric simulator
 * (collbench-accept-sim).
 *
 * Rounds run as the connectivity stage decided: concurrent, or where
 * ranks share cores one pair at a time (the rounds' repetitions for the
 * quick tier, more for locate and confirm).  Expectations (--expect-bw,
 * --expect-lat) and the latency tolerance are still judged by
 * acceptance/judge.c over the measured pairs; bandwidth relative to the
 * cluster is the noise judge's alone.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acceptance/accept.h"
#include "acceptance/plan.h"
#include "core/mem.h"
#include "core/strbuf.h"

static const char *label(const struct cb_acc *a, int x, char *buf, size_t n)
{
	const struct cb_acc_node *d = &a->nodes[x];

	if (d->nic[0])
		snprintf(buf, n, "%s (%s)", d->name, d->nic);
	else
		snprintf(buf, n, "%s", d->name);
	return buf;
}

/* A measured pair into the record: its first figures, then the better
 * of its repeats (failures do not hide a working measurement). */
static void record(struct cb_acc *a, const struct cb_acc_pair *m)
{
	struct cb_acc_pair *p = cb_acc_pair_of(a, m->a, m->b);

	if (!p)
		return;
	if (p->fail_stage != CB_ACC_PAIRWISE) {
		cb_acc_pair_take(p, m, CB_ACC_PAIRWISE, m);
		return;
	}
	/* The counters add up over every measurement of the pair. */
	struct cb_acc_pair sum = *p;
	sum.retrans += m->retrans;
	sum.out_segs += m->out_segs;
	sum.ctr_meas += m->ctr_meas;
	sum.ctr_lossy += m->ctr_lossy;
	if (!p->remeasured) {
		p->first_bw_gbps = cb_acc_pair_bw(p);
		p->first_lat_us = p->lat_p50_us;
	}
	double fbw = p->first_bw_gbps, flat = p->first_lat_us;
	int better = m->ok && (!p->ok || cb_acc_pair_bw(m) > cb_acc_pair_bw(p));
	cb_acc_pair_take(p, better ? m : p, CB_ACC_PAIRWISE, &sum);
	p->remeasured = 1;
	p->first_bw_gbps = fbw;
	p->first_lat_us = flat;
}

/* The hosts of planner group @g (r->group): their names into @buf (8 at
 * most), each marked @mark in fgroup where @mark > 0; the first into
 * *@first; how many. */
static int group_hosts(struct cb_acc *a, const struct cb_accp_result *r, int g,
                       const int *map, int n, char *buf, size_t cap, int *first,
                       int mark)
{
	size_t len = 0;
	int nh = 0;

	buf[0] = '\0';
	*first = -1;
	for (int h = 0; h < a->nhosts; h++) {
		int in = 0;
		for (int j = 0; !in && j < n; j++)
			in = r->group[j] == g && a->nodes[map[j]].host == h;
		if (!in)
			continue;
		if (*first < 0)
			*first = h;
		if (mark > 0)
			a->hosts[h].fgroup = mark;
		if (nh++ < 8)
			cb_buf_appendf(buf, cap, &len, "%s%s",
			               nh > 1 ? ", " : "", a->hosts[h].name);
	}
	if (nh > 8)
		cb_buf_appendf(buf, cap, &len, " and %d more", nh - 8);
	return nh;
}

/* A leaf switch slow to the others (--switches): its hosts, named
 * together, and none of them alone. */
static void uplink_line(struct cb_acc *a, const struct cb_accp_result *r,
                        const struct cb_accp_find *f, const int *map, int n)
{
	char hosts[400];
	int first;

	group_hosts(a, r, f->a, map, n, hosts, sizeof(hosts), &first, 0);
	const char *sw = first >= 0 ? a->hosts[first].sw : "?";
	cb_acc_find(a, CB_ACC_PAIRWISE, "uplink", first, -1,
	            "leaf switch %s (hosts %s): bandwidth %.3g GB/s to hosts "
	            "of other leaves, %.0f%% of the median %.3g GB/s, in %d "
	            "measurements between hosts that are normal inside their "
	            "leaves: the uplink of %s (its cables, ports or links to "
	            "the spine)",
	            sw, hosts, f->bw, r->ref > 0 ? 100 * f->bw / r->ref : 0,
	            r->ref, f->tries, sw);
}

/* No switches given, and the pairs split the hosts into groups normal
 * inside and slow between (r->group_inferred): the groups named, not
 * each host; two groups (each slow to the other) in one line. */
static void group_lines(struct cb_acc *a, const struct cb_accp_result *r,
                        const int *map, int n)
{
	const struct cb_accp_find *g[2];
	int k = 0, ng = 0;

	for (int i = 0; i < r->nfinds; i++)
		if (r->finds[i].kind == CB_ACCP_UPLINK && k++ < 2)
			g[k - 1] = &r->finds[i];
	for (int j = 0; j < n; j++)
		ng = r->group[j] + 1 > ng ? r->group[j] + 1 : ng;
	if (k == 2 && ng == 2) {
		char ha[400], hb[400];
		int fa, fb, mark = 1 + 2 * a->nfindings;
		int na = group_hosts(a, r, g[0]->a, map, n, ha, sizeof(ha), &fa,
		                     mark);
		int nb = group_hosts(a, r, g[1]->a, map, n, hb, sizeof(hb), &fb,
		                     mark + 1);
		int s = nb < na; /* the smaller group first */
		double bw = fmin(g[0]->bw, g[1]->bw);
		cb_acc_find(
		        a, CB_ACC_PAIRWISE, "group", s ? fb : fa, s ? fa : fb,
		        "hosts %s to hosts %s: bandwidth %.3g GB/s, %.0f%% "
		        "of the median %.3g GB/s, normal within each group: "
		        "a switch or uplink between them, or the NICs of the "
		        "%d host%s first named (--switches FILE tells a leaf's "
		        "uplink from its hosts)",
		        s ? hb : ha, s ? ha : hb, bw,
		        r->ref > 0 ? 100 * bw / r->ref : 0, r->ref, s ? nb : na,
		        (s ? nb : na) == 1 ? "" : "s");
		return;
	}
	/* else each group named slow to the others, a line each */
	for (int i = 0; i < r->nfinds; i++) {
		const struct cb_accp_find *e = &r->finds[i];
		char hs[400];
		int f, mark = 1 + 2 * a->nfindings;
		if (e->kind != CB_ACCP_UPLINK)
			continue;
		int nh = group_hosts(a, r, e->a, map, n, hs, sizeof(hs), &f,
		                     mark);
		cb_acc_find(
		        a, CB_ACC_PAIRWISE, "group", f, -1,
		        "hosts %s: bandwidth %.3g GB/s to the other hosts, "
		        "%.0f%% of the median %.3g GB/s, in %d measurements, "
		        "normal to each other: the switch or uplink they "
		        "share, or each one's NIC (%d hosts; --switches FILE "
		        "tells a leaf's uplink from its hosts)",
		        hs, e->bw, r->ref > 0 ? 100 * e->bw / r->ref : 0,
		        r->ref, e->tries, nh);
	}
}

static void find_line(struct cb_acc *a, const struct cb_accp_result *r,
                      const struct cb_accp_find *g, const int *map, int n)
{
	/* the planner's nodes (a rail's hosts with --rails) to the record's */
	struct cb_accp_find m = *g, *f = &m;
	if (g->kind == CB_ACCP_UPLINK) { /* a is a leaf, not a node */
		if (!r->group_inferred)
			uplink_line(a, r, g, map, n);
		return; /* (else group_lines) */
	}
	m.a = map[g->a];
	m.b = g->b >= 0 ? map[g->b] : -1;
	const char *what = a->set.rails ? "node" : "host";
	char la[160], lb[160];
	int ha = a->nodes[f->a].host;
	double pct = r->ref > 0 ? 100 * f->bw / r->ref : 0;

	switch (f->kind) {
	case CB_ACCP_NODE: {
		/* named by the single floor, or by all below the floor of
		 * that many together */
		char why[160];
		if (f->all_below > 0)
			snprintf(
			        why, sizeof(why),
			        "each of %d measurements against cleared hosts "
			        "under %.0f%% of the median, %d of them "
			        "outside "
			        "the noise alone",
			        f->tries, 100 * f->all_below, f->outside);
		else
			snprintf(why, sizeof(why),
			         "outside the noise in %d of %d measurements "
			         "against cleared hosts",
			         f->outside, f->tries);
		cb_acc_find(a, CB_ACC_PAIRWISE, "node", ha, -1,
		            "%s %s: bandwidth %.3g GB/s to every peer, %.0f%% "
		            "of the median %.3g GB/s: %s",
		            what, label(a, f->a, la, sizeof(la)), f->bw, pct,
		            r->ref, why);
		break;
	}
	case CB_ACCP_PATH:
		label(a, f->b, lb, sizeof(lb));
		if (f->bw <= 0)
			cb_acc_find(a, CB_ACC_PAIRWISE, "path", ha,
			            a->nodes[f->b].host,
			            "path %s - %s: failed %d of %d times, both "
			            "normal to their other peers",
			            label(a, f->a, la, sizeof(la)), lb,
			            f->outside, f->tries);
		else
			cb_acc_find(
			        a, CB_ACC_PAIRWISE, "path", ha,
			        a->nodes[f->b].host,
			        "path %s - %s: bandwidth %.3g GB/s, %.0f%% of "
			        "the median %.3g GB/s, outside in %d of %d "
			        "measurements again (%s)",
			        label(a, f->a, la, sizeof(la)), lb, f->bw, pct,
			        r->ref, f->outside, f->tries,
			        a->nnodes > 2
			                ? "both are normal to their other "
			                  "peers: "
			                  "the cable or switch ports between "
			                  "them"
			                : "only two hosts: either one's NIC, "
			                  "the "
			                  "cables or the switch ports between "
			                  "them");
		break;
	case CB_ACCP_FLAP:
		a->hosts[ha].flap_find = a->nfindings + 1;
		cb_acc_find(a, CB_ACC_PAIRWISE, "node", ha, -1,
		            "%s %s: %d measurements with different partners "
		            "failed and later ones worked: a link that flaps "
		            "(its cable, port or NIC)",
		            what, label(a, f->a, la, sizeof(la)), f->tries);
		break;
	case CB_ACCP_DEAD:
		a->hosts[ha].flap_find = a->nfindings + 1;
		cb_acc_find(a, CB_ACC_PAIRWISE, "node", ha, -1,
		            "%s %s: every measurement with its peers failed "
		            "from round %d on (%d failures): it is cut off",
		            what, label(a, f->a, la, sizeof(la)),
		            f->first_bad + 1, f->tries);
		break;
	case CB_ACCP_UPLINK: /* (above) */
		break;
	}
}

/* Expectations and latency over the measured pairs (judge.c), with the
 * relative bandwidth tolerance off: that is the noise judge's. */
static void judge_rest(struct cb_acc *a)
{
	struct cb_acc t = *a;
	int k = 0;

	t.pairs = calloc((size_t)a->npairs + 1, sizeof(*t.pairs));
	if (!t.pairs)
		return;
	for (int i = 0; i < a->npairs; i++)
		if (a->pairs[i].fail_stage == CB_ACC_PAIRWISE && a->pairs[i].ok)
			t.pairs[k++] = a->pairs[i];
	t.npairs = k;
	cb_acc_refs(&t);
	a->ref_bibw_gbps = t.ref_bibw_gbps;
	a->ref_lat_us = t.ref_lat_us;
	t.set.bw_tolerance = 0;
	cb_acc_judge_pairs(&t, CB_ACC_PAIRWISE);
	a->findings = t.findings;
	a->nfindings = t.nfindings;
	a->cap_findings = t.cap_findings;
	a->fail = t.fail;
	a->stage[CB_ACC_PAIRWISE].state = t.stage[CB_ACC_PAIRWISE].state;
	free(t.pairs);
}

/* Did a finding of @r name the pair of planner nodes @x, @y (an end of
 * it as a node, the pair as a path, or an uplink it crosses)? */
static int named(const struct cb_accp_result *r, int x, int y)
{
	const int *group = r->group;

	for (int i = 0; i < r->nfinds; i++) {
		const struct cb_accp_find *f = &r->finds[i];
		if (f->kind == CB_ACCP_UPLINK) {
			if (group && (group[x] == f->a) != (group[y] == f->a))
				return 1;
			continue;
		}
		if (f->kind == CB_ACCP_PATH ? (f->a == x && f->b == y) ||
		                                      (f->a == y && f->b == x)
		                            : f->a == x || f->a == y)
			return 1;
	}
	return 0;
}

/* (accept.h; cpu.c reads both marks) */
void cb_acc_mark_suspects(struct cb_acc *a, const struct cb_accp_result *r,
                          const int *map)
{
	for (int i = 0; i < r->nmeas; i++) {
		const struct cb_accp_meas *m = &r->meas[i];
		struct cb_acc_pair *p =
		        m->suspect ? cb_acc_pair_of(a, map[m->a], map[m->b])
		                   : NULL;
		if (!p)
			continue;
		p->suspect = 1;
		p->cleared = !named(r, m->a, m->b);
	}
	/* what the VERDICT line and the pairwise summary count: the whole
	 * record's, so a later rail's call counts the earlier ones' too */
	a->retested = a->cleared = 0;
	for (int i = 0; i < a->npairs; i++) {
		a->retested += a->pairs[i].suspect != 0;
		a->cleared += a->pairs[i].suspect && a->pairs[i].cleared;
	}
}

/* What the plan saw of the fabric but named no part of: pairs in two
 * modes, uplinks not told apart. */
static void leaf_warnings(struct cb_acc *a, const struct cb_accp_result *r)
{
	double pct = r->high_bw > 0 ? 100 * r->low_bw / r->high_bw : 0;

	if (r->low_busy)
		cb_acc_warn(
		        a, CB_ACC_PAIRWISE,
		        "%d of %d pairs of the quick tier, across leaf "
		        "switches, ran at %.3g GB/s, %.0f%% of the others' "
		        "%.3g GB/s; measured again beside control pairs, their "
		        "leaves were at full rate: rounds run while the fabric "
		        "or the machine was busy; nothing is named for them",
		        r->low_n, r->low_of, r->low_bw, pct, r->high_bw);
	else if (r->low_n && r->low_cut <= 0)
		cb_acc_warn(
		        a, CB_ACC_PAIRWISE,
		        "%d of %d pairs of the quick tier ran at %.3g GB/s, "
		        "%.0f%% of the others' %.3g GB/s, with none between: "
		        "a part of the fabric slower (leaf uplinks: "
		        "--switches FILE tells which) or rounds run while the "
		        "machine was busy; no host is named for it",
		        r->low_n, r->low_of, r->low_bw, pct, r->high_bw);
	if (r->leaves_unknown)
		cb_acc_warn(
		        a, CB_ACC_PAIRWISE,
		        "every pair measured across the %d leaf switches "
		        "that met was slow, none at full rate: every uplink "
		        "slow, or the fabric oversubscribed; no uplink or "
		        "host is named for it (--baseline FILE tells it from "
		        "an earlier run)",
		        r->leaves_unknown);
	if (r->untold)
		cb_acc_warn(
		        a, CB_ACC_PAIRWISE,
		        "%d host%s slow to partners in other leaves, with no "
		        "host of %s own leaf cleared to measure against: "
		        "%s uplink or %s cable, not told; not named",
		        r->untold, r->untold == 1 ? "" : "s",
		        r->untold == 1 ? "its" : "their",
		        r->untold == 1 ? "its" : "their",
		        r->untold == 1 ? "its" : "their");
}

/* Rail @rail's verdict (of @nrails) into the record; @map its @n nodes. */
static void verdict(struct cb_acc *a, struct cb_accp *P, const int *map, int n,
                    int rail, int nrails)
{
	const struct cb_accp_result *r = cb_accp_verdict(P);

	a->suspects += r->suspect_pairs;
	if (rail == 0) {
		/* the figures shown: the first rail's */
		a->ref_bw_gbps = r->ref;
		a->noise = (struct cb_acc_noise){ .have = 1,
			                          .sigma = r->sigma,
			                          .sigma_rep = r->sigma_rep,
			                          .sigma_cl = r->sigma_cl,
			                          .k = r->k,
			                          .floor_gbps = r->floor,
			                          .vary_pct = r->vary_pct,
			                          .tell_pct = r->tell_pct,
			                          .sigma_node = r->sigma_node,
			                          .tell_node_pct =
			                                  r->tell_node_pct,
			                          .node_pairs = r->node_pairs };
		a->nplan = 0;
	}
	for (int s = 0; s < CB_ACCP_NSTAGES; s++) {
		struct cb_acc_plan_step *p = &a->plan[s];
		if (rail == 0) {
			a->nplan++;
			snprintf(p->name, sizeof(p->name), "%s",
			         cb_accp_stage_name(s));
			snprintf(p->why, sizeof(p->why), "%.170s%s", r->why[s],
			         nrails > 1 ? " (all rails at once)" : "");
			p->rounds = p->pairs = 0;
		}
		if (r->rounds[s] > p->rounds)
			p->rounds = r->rounds[s];
		p->pairs += r->pairs[s];
	}
	for (int i = 0; i < r->nfinds; i++)
		find_line(a, r, &r->finds[i], map, n);
	if (r->group_inferred)
		group_lines(a, r, map, n);
	cb_acc_mark_suspects(a, r, map);
	leaf_warnings(a, r);
	if (!r->warn)
		return;
	/* where a host slow to every peer is told from less, say so */
	char host[128] = ", and no host is named for one";
	if (r->tell_node_pct < r->tell_pct - 1)
		snprintf(host, sizeof(host),
		         " in one pair, and no path is named for one; a host "
		         "slow to all its %d peers is told from %.0f%%",
		         r->node_pairs, r->tell_node_pct);
	cb_acc_warn(a, CB_ACC_PAIRWISE,
	            "measurements vary by %.0f%% between repeats of the same "
	            "pair (robust sigma %.1f%%, across the cluster %.1f%%); a "
	            "fault under %.0f%% cannot be told at %.1f sigma%s",
	            r->vary_pct, 100 * r->sigma_rep, 100 * r->sigma_cl,
	            r->tell_pct, r->k, host);
}

/* Rank 0's round to everyone: [n, stage, a0, b0, ...]. */
static cb_status_t share(struct cb_acc_ctx *x, int32_t *msg, int cap,
                         double wait_s)
{
	char key[48];
	size_t got, bytes = (2 + 2 * (size_t)cap) * sizeof(int32_t);
	cb_status_t st;

	snprintf(key, sizeof(key), "acc/round/%u", x->seq++);
	if (x->c->rank == 0)
		return cb_boot_set(x->c->boot, key, msg,
		                   (2 + 2 * (size_t)msg[0]) * sizeof(int32_t));
	st = cb_boot_get_wait(x->c->boot, key, msg, bytes, &got, wait_s);
	if (!st && (got < 2 * sizeof(int32_t) || msg[0] < 0 || msg[0] > cap ||
	            got != (2 + 2 * (size_t)msg[0]) * sizeof(int32_t)))
		st = cb_fail(CB_ERR_PROTO, "rank 0's round does not parse");
	for (int i = 0; !st && i < 2 * msg[0]; i++)
		if (msg[2 + i] < 0 || msg[2 + i] >= x->a->nnodes)
			st = cb_fail(CB_ERR_PROTO,
			             "rank 0's round names node %d of %d",
			             msg[2 + i], x->a->nnodes);
	return st;
}

/* The planners: one over every node, or with --rails one per rail (rank
 * i of every host: NIC i), all rails measured in the same rounds. */
struct rails {
	int n, per;         /* rails; nodes in each */
	int *map;           /* [rail * per + i]: the record's node */
	int *group;         /* [rail * per + i]: its leaf; NULL unknown */
	struct cb_accp **P; /* rank 0 */
	int *done, *at;     /* a rail's plan is over; its pairs in the round */
	int *cnt;
};

static void rails_free(struct rails *R)
{
	for (int i = 0; R->P && i < R->n; i++)
		cb_accp_free(R->P[i]);
	cb_free_all(R->P, R->map, R->group, R->done, R->at, R->cnt);
}

static cb_status_t rails_new(struct cb_acc_ctx *x, struct rails *R)
{
	const struct cb_acc *a = x->a;
	int rails = a->set.rails && a->nhosts > 1 ? a->nnodes / a->nhosts : 1;

	memset(R, 0, sizeof(*R));
	R->n = rails;
	R->per = a->nnodes / rails;
	R->map = calloc((size_t)a->nnodes, sizeof(int));
	R->P = calloc((size_t)rails, sizeof(*R->P));
	R->done = calloc((size_t)rails, sizeof(int));
	R->at = calloc((size_t)rails, sizeof(int));
	R->cnt = calloc((size_t)rails, sizeof(int));
	if (!R->map || !R->P || !R->done || !R->at || !R->cnt)
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	for (int i = 0; i < a->nnodes; i++)
		if (rails == 1)
			R->map[i] = i;
		else
			R->map[a->nodes[i].local * R->per + a->nodes[i].host] =
			        i;
	if (x->c->rank == 0 && a->nleaves > 0) {
		if (!(R->group = calloc((size_t)a->nnodes, sizeof(int))))
			return cb_fail(CB_ERR_NOMEM, "out of memory");
		for (int i = 0; i < a->nnodes; i++)
			R->group[i] = a->hosts[a->nodes[R->map[i]].host].leaf;
	}
	for (int r = 0; x->c->rank == 0 && r < rails; r++) {
		struct cb_accp_cfg cfg = {
			.n = R->per,
			.group = R->group ? R->group + r * R->per : NULL,
			.tolerance = a->set.bw_tolerance
		};
		if (!(R->P[r] = cb_accp_new(&cfg)))
			return cb_fail(CB_ERR_NOMEM, "out of memory");
	}
	return CB_OK;
}

/* Rank 0: the next round of every rail still planning, as record nodes
 * into @pairs; its stage (the furthest) into *@stage. */
static int rails_next(struct rails *R, int (*pairs)[2], int (*tmp)[2],
                      int *stage)
{
	int np = 0;

	*stage = 0;
	for (int r = 0; r < R->n; r++) {
		int st = 0,
		    m = R->done[r] ? 0 : cb_accp_next(R->P[r], tmp, &st);
		R->at[r] = np;
		R->cnt[r] = m;
		R->done[r] |= m == 0;
		if (m && st > *stage)
			*stage = st;
		for (int i = 0; i < m; i++) {
			pairs[np][0] = R->map[r * R->per + tmp[i][0]];
			pairs[np][1] = R->map[r * R->per + tmp[i][1]];
			np++;
		}
	}
	return np;
}

cb_status_t cb_acc_planned(struct cb_acc_ctx *x, int serial)
{
	struct cb_acc *a = x->a;
	const struct cb_acc_opts *o = x->o;
	int n = a->nnodes, cap = n / 2 + 1;
	int(*pairs)[2] = malloc((size_t)cap * sizeof(*pairs));
	int(*tmp)[2] = malloc((size_t)cap * sizeof(*tmp));
	struct cb_acc_pair *got = calloc((size_t)cap, sizeof(*got));
	double *bw = calloc((size_t)cap, sizeof(double));
	int *ok = calloc((size_t)cap, sizeof(int));
	int32_t *msg = calloc(2 + 2 * (size_t)cap, sizeof(int32_t));
	struct rails R;
	/* the longest a round may take: every pair one at a time */
	double round_s = (cap + 2) * o->set.pair_timeout_s + o->timeout_s;
	cb_status_t st = rails_new(x, &R);

	if (!st && (!pairs || !tmp || !got || !bw || !ok || !msg))
		st = cb_fail(CB_ERR_NOMEM, "out of memory");
	while (!st) {
		int stage = 0;
		if (x->c->rank == 0) {
			msg[0] = rails_next(&R, pairs, tmp, &stage);
			msg[1] = stage;
			for (int i = 0; i < msg[0]; i++) {
				msg[2 + 2 * i] = pairs[i][0];
				msg[3 + 2 * i] = pairs[i][1];
			}
		}
		if ((st = share(x, msg, cap, 2 * round_s + o->timeout_s)) ||
		    !msg[0])
			break;
		int np = msg[0];
		stage = msg[1];
		for (int i = 0; i < np; i++) {
			pairs[i][0] = msg[2 + 2 * i];
			pairs[i][1] = msg[3 + 2 * i];
		}
		/* One at a time where ranks share cores: the rounds'
		 * repetitions for the quick tier, more for the re-measures
		 * (4 of ~80 ms, the best counts).  The suspects' effort for
		 * every round doubled the time and, on this 2-core machine
		 * under other jobs, did not narrow the repeats' spread. */
		int mode = !serial                   ? CB_ACC_CONCURRENT
		           : stage >= CB_ACCP_LOCATE ? CB_ACC_ALONE_SUSPECT
		                                     : CB_ACC_ALONE_SERIAL;
		if ((st = cb_acc_stage_pairs(
		             x, pairs, np, 1, mode,
		             (serial ? np + 2 : 3) * o->set.pair_timeout_s +
		                     o->timeout_s,
		             got)))
			break;
		if (x->c->rank != 0)
			continue;
		for (int i = 0; i < np; i++) {
			ok[i] = got[i].ok;
			bw[i] = got[i].ok ? cb_acc_pair_bw(&got[i]) : 0;
			record(a, &got[i]);
		}
		for (int r = 0; r < R.n; r++)
			if (R.cnt[r])
				cb_accp_feed(R.P[r], bw + R.at[r],
				             ok + R.at[r]);
		for (int i = 0; x->gone && i < n; i++)
			if (x->gone[a->nodes[i].rank])
				for (int r = 0; r < R.n; r++)
					for (int j = 0; j < R.per; j++)
						if (R.map[r * R.per + j] == i)
							cb_accp_drop(R.P[r], j);
	}
	if (!st && x->c->rank == 0) {
		a->suspects = 0;
		for (int r = 0; r < R.n; r++)
			verdict(a, R.P[r], R.map + r * R.per, R.per, r, R.n);
		judge_rest(a);
	}
	rails_free(&R);
	free(pairs);
	free(tmp);
	free(got);
	free(bw);
	free(ok);
	free(msg);
	return st;
}
