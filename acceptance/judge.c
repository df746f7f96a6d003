/* SPDX-License-Identifier: MIT */
/*
 * acceptance/judge.c - which pairs are outside tolerance, and what to
 * blame: a node, a host, a group of hosts, or the path between two.
 *
 * A pair is judged against the cluster itself and against absolute
 * expectations, as vendors' acceptance procedures do: its bandwidth (the
 * slower direction) below --bw-tolerance (0.9) of the reference, its
 * bidirectional bandwidth likewise, its median latency above
 * --lat-tolerance (2.0) times the reference, or either past --expect-bw /
 * --expect-lat.  The reference is the median over nodes of each node's
 * median pair: on 4 hosts one bad host touches half the pairs, and the
 * median of all pairs would sink with them; the median of medians does not
 * while fewer than half the nodes are bad.
 *
 * Localisation, on the pairs still outside tolerance after being measured
 * alone:
 *   - a node whose every pair (two or more) is slow: the node (its NIC,
 *     port or cable); with --rails, every node of a host: the host;
 *   - of the rest, nodes with the same set of slow partners (two or more
 *     each side, the two sets apart): a shared switch or uplink between
 *     the groups;
 *   - what is left: the path between two nodes.
 * The same for pairs that failed (could not connect, or a measurement
 * broke off): a node all of whose pairs failed, else each pair.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acceptance/accept.h"
#include "core/strbuf.h"

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double cb_acc_median(double *v, int n)
{
	if (n <= 0)
		return 0;
	qsort(v, (size_t)n, sizeof(*v), cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

enum metric { M_BW, M_BIBW, M_LAT };

static double value(const struct cb_acc_pair *p, enum metric m)
{
	return m == M_BW     ? cb_acc_pair_bw(p)
	       : m == M_BIBW ? p->bibw_gbps
	                     : p->lat_p50_us;
}

static double ref_of(struct cb_acc *a, enum metric m)
{
	double *node = calloc((size_t)a->nnodes + 1, sizeof(double));
	double *mine = calloc((size_t)a->npairs + 1, sizeof(double));
	double r = 0;
	int nn = 0;

	if (!node || !mine)
		goto out;
	for (int x = 0; x < a->nnodes; x++) {
		int k = 0;
		for (int i = 0; i < a->npairs; i++) {
			const struct cb_acc_pair *p = &a->pairs[i];
			if (p->ok && (p->a == x || p->b == x) &&
			    value(p, m) > 0)
				mine[k++] = value(p, m);
		}
		if (k)
			node[nn++] = cb_acc_median(mine, k);
	}
	r = cb_acc_median(node, nn);
out:
	free(node);
	free(mine);
	return r;
}

void cb_acc_refs(struct cb_acc *a)
{
	a->ref_bw_gbps = ref_of(a, M_BW);
	a->ref_bibw_gbps = ref_of(a, M_BIBW);
	a->ref_lat_us = ref_of(a, M_LAT);
}

int cb_acc_outside(const struct cb_acc *a, const struct cb_acc_pair *p,
                   char *why, size_t bytes)
{
	const struct cb_acc_settings *s = &a->set;
	double bw = cb_acc_pair_bw(p), rbw, rbibw, rlat;

	why[0] = '\0';
	if (!p->ok)
		return 0;
	cb_acc_ref_for(a, p, &rbw, &rbibw, &rlat);
	if (rbw > 0 && bw < s->bw_tolerance * rbw)
		snprintf(why, bytes,
		         "bandwidth %.3g GB/s, %.0f%% of the median", bw,
		         100 * bw / rbw);
	else if (s->expect_bw_gbps > 0 && bw < s->expect_bw_gbps)
		snprintf(why, bytes, "bandwidth %.3g GB/s, below %.3g GB/s", bw,
		         s->expect_bw_gbps);
	else if (rbibw > 0 && p->bibw_gbps < s->bw_tolerance * rbibw)
		snprintf(why, bytes,
		         "bidirectional bandwidth %.3g GB/s, %.0f%% of the "
		         "median",
		         p->bibw_gbps, 100 * p->bibw_gbps / rbibw);
	else if (rlat > 0 && p->lat_p50_us > s->lat_tolerance * rlat)
		snprintf(why, bytes, "latency %.3g us, %.1fx the median",
		         p->lat_p50_us, p->lat_p50_us / rlat);
	else if (s->expect_lat_us > 0 && p->lat_p50_us > s->expect_lat_us)
		snprintf(why, bytes, "latency %.3g us, above %.3g us",
		         p->lat_p50_us, s->expect_lat_us);
	return why[0] != '\0';
}

/* Which metric makes @p slow (the first that does), or -1. */
static int slow_metric(const struct cb_acc *a, const struct cb_acc_pair *p)
{
	const struct cb_acc_settings *s = &a->set;
	double bw = cb_acc_pair_bw(p), rbw, rbibw, rlat;

	if (!p->ok)
		return -1;
	cb_acc_ref_for(a, p, &rbw, &rbibw, &rlat);
	if ((rbw > 0 && bw < s->bw_tolerance * rbw) ||
	    (s->expect_bw_gbps > 0 && bw < s->expect_bw_gbps))
		return M_BW;
	if (rbibw > 0 && p->bibw_gbps < s->bw_tolerance * rbibw)
		return M_BIBW;
	if ((rlat > 0 && p->lat_p50_us > s->lat_tolerance * rlat) ||
	    (s->expect_lat_us > 0 && p->lat_p50_us > s->expect_lat_us))
		return M_LAT;
	return -1;
}

/* "bandwidth 0.31 GB/s ..., 11% of the median 2.8 GB/s (25% of the
 * 10 Gb/s link)" for @v of metric @m. */
static void describe(const struct cb_acc *a, const struct cb_acc_pair *p,
                     enum metric m, double v, const char *to, int rel,
                     char *buf, size_t bytes)
{
	const struct cb_acc_settings *s = &a->set;
	double rbw, rbibw, rlat;
	size_t n = 0;

	cb_acc_ref_for(a, p, &rbw, &rbibw, &rlat);
	if (m == M_LAT) {
		cb_buf_appendf(buf, bytes, &n, "latency %.3g us%s", v, to);
		if (rlat > 0)
			cb_buf_appendf(buf, bytes, &n,
			               ", %.1fx the median %.3g us", v / rlat,
			               rlat);
		if (s->expect_lat_us > 0 && v > s->expect_lat_us)
			cb_buf_appendf(buf, bytes, &n,
			               " (expected at most %.3g us)",
			               s->expect_lat_us);
		return;
	}
	double ref = m == M_BW ? rbw : rbibw;
	cb_buf_appendf(buf, bytes, &n, "%s %.3g GB/s%s",
	               m == M_BW ? "bandwidth" : "bidirectional bandwidth", v,
	               to);
	if (ref > 0 && rel)
		cb_buf_appendf(buf, bytes, &n,
		               ", %.0f%% of the median %.3g GB/s",
		               100 * v / ref, ref);
	if (m == M_BW && s->expect_bw_gbps > 0 && v < s->expect_bw_gbps)
		cb_buf_appendf(buf, bytes, &n, " (expected at least %.3g GB/s)",
		               s->expect_bw_gbps);
	if (m == M_BW && a->link_gbps > 0)
		cb_buf_appendf(buf, bytes, &n,
		               " (%.0f%% of the %.3g Gb/s link)",
		               100 * v / a->link_gbps, a->link_gbps * 8);
}

static const char *node_label(const struct cb_acc *a, int x, char *buf,
                              size_t bytes)
{
	const struct cb_acc_node *n = &a->nodes[x];

	if (n->nic[0])
		snprintf(buf, bytes, "%s (%s)", n->name, n->nic);
	else
		snprintf(buf, bytes, "%s", n->name);
	return buf;
}

/* ---- the pairwise stage ---- */

struct pairset {
	unsigned char *slow; /* [npairs]: still to explain */
	int *metric;         /* [npairs] */
};

/* 1 when node @x has two or more working pairs and all are slow. */
static int all_slow(const struct cb_acc *a, const struct pairset *ps, int x)
{
	int m = 0, s = 0;

	for (int i = 0; i < a->npairs; i++) {
		const struct cb_acc_pair *p = &a->pairs[i];
		if (!p->ok || (p->a != x && p->b != x))
			continue;
		m++;
		s += ps->slow[i];
	}
	return m >= 2 && s == m;
}

/* Every node slow to every peer: the fabric as a whole (or the
 * expectation) - one finding, not one per host. */
static int judge_all(struct cb_acc *a, enum cb_acc_stage_id stage,
                     struct pairset *ps)
{
	double *v = calloc((size_t)a->npairs + 1, sizeof(double));
	int k = 0, metric = -1;
	const struct cb_acc_pair *first = NULL;
	char what[300];

	for (int x = 0; x < a->nnodes; x++)
		if (!all_slow(a, ps, x)) {
			free(v);
			return 0;
		}
	for (int i = 0; v && i < a->npairs; i++)
		if (ps->slow[i]) {
			if (metric < 0) {
				metric = ps->metric[i];
				first = &a->pairs[i];
			}
			v[k++] = value(&a->pairs[i], metric);
			ps->slow[i] = 0;
		}
	describe(a, first, metric, v ? cb_acc_median(v, k) : 0,
	         " (median pair)", 0, what, sizeof(what));
	free(v);
	cb_acc_find(a, stage, "job", -1, -1,
	            "every pair of all %d nodes: %s: the whole fabric, or the "
	            "expectation",
	            a->nnodes, what);
	return 1;
}

static void judge_nodes(struct cb_acc *a, enum cb_acc_stage_id stage,
                        struct pairset *ps, unsigned char *flagged)
{
	char label[160], what[300];
	double *v = calloc((size_t)a->npairs + 1, sizeof(double));

	if (!v)
		return;
	if (a->nnodes > 2 && judge_all(a, stage, ps)) {
		free(v);
		return;
	}
	for (int x = 0; x < a->nnodes; x++) {
		int m = 0, s = 0, k = 0, metric = -1;
		const struct cb_acc_pair *first = NULL;
		for (int i = 0; i < a->npairs; i++) {
			const struct cb_acc_pair *p = &a->pairs[i];
			if (!p->ok || (p->a != x && p->b != x))
				continue;
			m++;
			if (!ps->slow[i])
				continue;
			s++;
			if (metric < 0) {
				metric = ps->metric[i];
				first = p;
			}
		}
		if (m < 2 || s < m)
			continue;
		flagged[x] = 1;
		for (int i = 0; i < a->npairs; i++) {
			const struct cb_acc_pair *p = &a->pairs[i];
			if (p->ok && (p->a == x || p->b == x))
				v[k++] = value(p, metric);
		}
		describe(a, first, metric, cb_acc_median(v, k),
		         " to every peer", 1, what, sizeof(what));
		cb_acc_find(a, stage, "node", a->nodes[x].host, -1, "%s %s: %s",
		            a->set.rails ? "node" : "host",
		            node_label(a, x, label, sizeof(label)), what);
	}
	free(v);
	for (int i = 0; i < a->npairs; i++)
		if (flagged[a->pairs[i].a] || flagged[a->pairs[i].b])
			ps->slow[i] = 0;
}

/* With --rails: a host all of whose nodes were named is named once. */
static void merge_hosts(struct cb_acc *a, int first, const unsigned char *fl)
{
	for (int h = 0; h < a->nhosts; h++) {
		int all = 1, any = 0;
		for (int x = 0; x < a->nnodes; x++)
			if (a->nodes[x].host == h) {
				all &= fl[x];
				any |= fl[x];
			}
		if (!any || !all)
			continue;
		/* Drop the node findings of this host, name the host. */
		int w = first;
		for (int i = first; i < a->nfindings; i++)
			if (strcmp(a->findings[i].kind, "node") ||
			    a->findings[i].ha != h)
				a->findings[w++] = a->findings[i];
		a->nfindings = w;
		cb_acc_find(
		        a, CB_ACC_PAIRWISE, "host", h, -1,
		        "host %s: every one of its %d NICs is slow to every "
		        "peer (the host itself: PCIe, NUMA placement, "
		        "firmware, or its switch)",
		        a->hosts[h].name, a->hosts[h].nranks);
	}
}

static void names(const struct cb_acc *a, const unsigned char *set, char *buf,
                  size_t bytes)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int x = 0; x < a->nnodes; x++)
		if (set[x])
			cb_buf_appendf(buf, bytes, &n, "%s%s", n ? "," : "",
			               a->nodes[x].name);
}

static void judge_groups(struct cb_acc *a, enum cb_acc_stage_id stage,
                         struct pairset *ps)
{
	int nn = a->nnodes;
	unsigned char *t = calloc((size_t)nn * nn, 1), *done = calloc(nn, 1);
	unsigned char *s = calloc(nn, 1);
	char sn[300], tn[300], what[300];

	if (!t || !done || !s)
		goto out;
	for (int i = 0; i < a->npairs; i++)
		if (ps->slow[i]) {
			t[a->pairs[i].a * nn + a->pairs[i].b] = 1;
			t[a->pairs[i].b * nn + a->pairs[i].a] = 1;
		}
	for (int x = 0; x < nn; x++) {
		int ns = 0, nt = 0, disjoint = 1;
		if (done[x])
			continue;
		memset(s, 0, nn);
		for (int y = 0; y < nn; y++)
			if (!memcmp(&t[x * nn], &t[y * nn], nn))
				s[y] = 1, ns++;
		for (int y = 0; y < nn; y++) {
			nt += t[x * nn + y];
			disjoint &= !(t[x * nn + y] && s[y]);
		}
		if (ns < 2 || nt < 2 || !disjoint)
			continue;
		/* T's own slow sets must be exactly S, for a clean cut. */
		int clean = 1;
		for (int y = 0; y < nn && clean; y++)
			if (t[x * nn + y])
				for (int z = 0; z < nn; z++)
					clean &= t[y * nn + z] == s[z];
		if (!clean)
			continue;
		double *v = calloc((size_t)a->npairs + 1, sizeof(double));
		int k = 0, metric = -1;
		const struct cb_acc_pair *first = NULL;
		for (int i = 0; v && i < a->npairs; i++) {
			const struct cb_acc_pair *p = &a->pairs[i];
			if (ps->slow[i] && (s[p->a] || s[p->b])) {
				if (metric < 0) {
					metric = ps->metric[i];
					first = p;
				}
				v[k++] = value(p, metric);
				ps->slow[i] = 0;
			}
		}
		names(a, s, sn, sizeof(sn));
		names(a, &t[x * nn], tn, sizeof(tn));
		describe(a, first, metric, v ? cb_acc_median(v, k) : 0, "", 1,
		         what, sizeof(what));
		free(v);
		cb_acc_find(
		        a, stage, "group", -1, -1,
		        "hosts %s to hosts %s: %s, normal within each group: "
		        "a shared switch or uplink between them",
		        sn, tn, what);
		for (int y = 0; y < nn; y++)
			done[y] |= s[y] | t[x * nn + y];
	}
out:
	free(t);
	free(done);
	free(s);
}

static void judge_paths(struct cb_acc *a, enum cb_acc_stage_id stage,
                        struct pairset *ps)
{
	char la[160], lb[160], what[300];

	for (int i = 0; i < a->npairs; i++) {
		const struct cb_acc_pair *p = &a->pairs[i];
		if (!ps->slow[i])
			continue;
		describe(a, p, ps->metric[i], value(p, ps->metric[i]), "", 1,
		         what, sizeof(what));
		cb_acc_find(
		        a, stage, "path", a->nodes[p->a].host,
		        a->nodes[p->b].host, "path %s - %s: %s (%s)",
		        node_label(a, p->a, la, sizeof(la)),
		        node_label(a, p->b, lb, sizeof(lb)), what,
		        a->nnodes > 2
		                ? "both are normal to their other peers: the "
		                  "cable or switch ports between them"
		                : "only two hosts: either one's NIC, the "
		                  "cables or the switch ports between them");
	}
}

void cb_acc_judge_pairs(struct cb_acc *a, enum cb_acc_stage_id stage)
{
	struct pairset ps = {
		.slow = calloc((size_t)a->npairs + 1, 1),
		.metric = calloc((size_t)a->npairs + 1, sizeof(int)),
	};
	unsigned char *flagged = calloc((size_t)a->nnodes + 1, 1);
	int first = a->nfindings;

	if (!ps.slow || !ps.metric || !flagged)
		goto out;
	for (int i = 0; i < a->npairs; i++) {
		ps.metric[i] = slow_metric(a, &a->pairs[i]);
		ps.slow[i] = ps.metric[i] >= 0;
	}
	judge_nodes(a, stage, &ps, flagged);
	if (a->set.rails)
		merge_hosts(a, first, flagged);
	judge_groups(a, stage, &ps);
	judge_paths(a, stage, &ps);
out:
	free(ps.slow);
	free(ps.metric);
	free(flagged);
}

/* ---- connectivity ---- */

void cb_acc_judge_connect(struct cb_acc *a, enum cb_acc_stage_id stage)
{
	unsigned char *dead = calloc((size_t)a->nnodes + 1, 1);
	char la[160], lb[160];

	if (!dead)
		return;
	for (int x = 0; x < a->nnodes; x++) {
		int m = 0, f = 0;
		const char *err = NULL;
		for (int i = 0; i < a->npairs; i++) {
			const struct cb_acc_pair *p = &a->pairs[i];
			if ((p->a != x && p->b != x) ||
			    (!p->ok && (int)p->fail_stage < (int)stage))
				continue;
			m++;
			if (!p->ok) {
				f++;
				if (!err)
					err = p->error;
			}
		}
		if (m < 2 || f < m)
			continue;
		dead[x] = 1;
		cb_acc_find(a, stage, "node", a->nodes[x].host, -1,
		            stage == CB_ACC_CONNECTIVITY
		                    ? "%s %s cannot reach any of its %d peers "
		                      "over %s: %s"
		                    : "%s %s: every measurement with its %d "
		                      "peers over %s failed: %s",
		            a->set.rails ? "node" : "host",
		            node_label(a, x, la, sizeof(la)), m,
		            a->set.transport, err ? err : "no answer");
	}
	for (int i = 0; i < a->npairs; i++) {
		const struct cb_acc_pair *p = &a->pairs[i];
		if (p->ok || p->fail_stage != stage || dead[p->a] || dead[p->b])
			continue;
		cb_acc_find(a, stage, "path", a->nodes[p->a].host,
		            a->nodes[p->b].host,
		            stage == CB_ACC_CONNECTIVITY
		                    ? "%s cannot reach %s over %s: %s"
		                    : "%s and %s failed over %s: %s",
		            node_label(a, p->a, la, sizeof(la)),
		            node_label(a, p->b, lb, sizeof(lb)),
		            a->set.transport,
		            p->error[0] ? p->error : "no answer");
	}
	free(dead);
}
