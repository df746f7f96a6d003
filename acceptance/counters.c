/* SPDX-License-Identifier: MIT */
/*
 * acceptance/counters.c - what the hosts' retransmission and link
 * counters (topo/hostctr.h) name, pure: no reads, no clock.
 *
 * Every rank reads its host's counters at each gather of a stage (every
 * pairwise round, each collective, the start and the end of the run);
 * rank 0 keeps what moved during each stage (cb_acc_ctr_note), and, in
 * rounds where each host was in one pair, what both ends of that pair
 * retransmitted and sent (the record's pairs).
 *
 * Lossy.  TCP retransmits what a lossy cable drops, while the bandwidth
 * at a short round trip can stay within the noise.  Per pair, its loss
 * rate: segments retransmitted over segments sent, both ends, over every
 * measurement of it.  A node's score is the median of its pairs'; a node
 * whose score is above CB_ACC_LOSS_RATE, more than CB_ACC_LOSS_RATIO
 * times the median of the other nodes' scores, whose pairs retransmitted
 * at least CB_ACC_LOSS_MIN segments, and which has two such pairs, is
 * named.  (One bad node is in only one of each other node's pairs, so
 * their medians stay clean; a drop on either side of the cable - the
 * node's own segments, or its peers' to it - counts.)  A pair above the
 * same thresholds against the median pair, in every one of two or more
 * measurements, neither end named, is named as the path between them.
 *
 * Where no round gave a pair its own counters (--rails, or no pairwise
 * stage), each stage's totals are judged host by host the same way: more
 * than CB_ACC_LOSS_RATIO times the median of the other hosts.  That cannot
 * tell a host from a path at one of its ends.
 *
 * Flapping.  A link going down moves carrier_changes (2 a flap, down and
 * up) and carrier_down_count, or an RDMA port's link_downed and
 * link_error_recovery; on a healthy cluster none of these moves during a
 * run.  A host whose did is named, and the counters said; where the plan
 * already named it (a link that flaps, a host cut off), the counters are
 * added to that finding.
 *
 * A host already named for another reason gets the counters' evidence
 * added to its finding rather than a second one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acceptance/accept.h"
#include "core/strbuf.h"

#define RETRANS (1u << CB_HC_RETRANS)
#define SEGS    (1u << CB_HC_OUTSEGS)

void cb_acc_ctr_note(struct cb_acc *a, enum cb_acc_stage_id s, int h,
                     const struct cb_hostctr *snap, struct cb_hostctr *moved)
{
	struct cb_acc_host *ho = &a->hosts[h];
	struct cb_hostctr d = { .have = 0 };

	if (snap->have && !ho->ctr0.have) {
		ho->ctr0 = *snap;
		ho->ctr_last = *snap;
	} else if (snap->have) {
		cb_hostctr_delta(&ho->ctr_last, snap, &d);
		cb_hostctr_add(&ho->moved[s], &d);
		ho->ctr_last = *snap;
	}
	if (moved)
		*moved = d;
}

static double rate(uint64_t r, uint64_t segs)
{
	return segs ? (double)r / (double)segs : 0;
}

static const char *host_label(const struct cb_acc *a, int h, char *buf,
                              size_t bytes)
{
	const struct cb_acc_host *ho = &a->hosts[h];

	if (ho->nic[0])
		snprintf(buf, bytes, "%s (%s)", ho->name, ho->nic);
	else
		snprintf(buf, bytes, "%s", ho->name);
	return buf;
}

/* The finding that already names host @ha (and @hb, -1 none), or NULL;
 * the plan's flapping one first. */
static struct cb_acc_finding *named(struct cb_acc *a, int ha, int hb)
{
	if (hb < 0 && a->hosts[ha].flap_find > 0 &&
	    a->hosts[ha].flap_find <= a->nfindings)
		return &a->findings[a->hosts[ha].flap_find - 1];
	for (int i = 0; i < a->nfindings; i++) {
		struct cb_acc_finding *f = &a->findings[i];
		if ((f->ha == ha && f->hb == hb) ||
		    (hb >= 0 && f->ha == hb && f->hb == ha))
			return f;
	}
	return NULL;
}

/* Add @what to the finding naming @ha (@hb), or make one of @line. */
static void evidence(struct cb_acc *a, enum cb_acc_stage_id stage,
                     const char *kind, int ha, int hb, const char *what,
                     const char *line)
{
	struct cb_acc_finding *f = named(a, ha, hb);

	if (f) {
		size_t n = strlen(f->line);
		cb_buf_appendf(f->line, sizeof(f->line), &n, "; %s", what);
		return;
	}
	cb_acc_find(a, stage, kind, ha, hb, "%s", line);
}

/* The other hosts' retransmissions in stage @s: "0-12". */
static void others(const struct cb_acc *a, int s, int h, char *buf,
                   size_t bytes)
{
	uint64_t lo = UINT64_MAX, hi = 0;

	for (int g = 0; g < a->nhosts; g++) {
		const struct cb_hostctr *m = &a->hosts[g].moved[s];
		if (g == h || !(m->have & RETRANS))
			continue;
		lo = m->v[CB_HC_RETRANS] < lo ? m->v[CB_HC_RETRANS] : lo;
		hi = m->v[CB_HC_RETRANS] > hi ? m->v[CB_HC_RETRANS] : hi;
	}
	if (lo == UINT64_MAX)
		snprintf(buf, bytes, "none read");
	else if (lo == hi)
		snprintf(buf, bytes, "%llu", (unsigned long long)lo);
	else
		snprintf(buf, bytes, "%llu-%llu", (unsigned long long)lo,
		         (unsigned long long)hi);
}

/* Node @x's pairs with counters: how many, the median rate, the sum. */
static int node_score(const struct cb_acc *a, int x, double *v, double *score,
                      uint64_t *sum)
{
	int k = 0;

	*sum = 0;
	for (int i = 0; i < a->npairs; i++) {
		const struct cb_acc_pair *p = &a->pairs[i];
		if (p->ctr_meas <= 0 || (p->a != x && p->b != x))
			continue;
		v[k++] = rate(p->retrans, p->out_segs);
		*sum += p->retrans;
	}
	*score = cb_acc_median(v, k);
	return k;
}

/* The pairwise stage's rule, by pairs; 0 when no pair has counters. */
static int lossy_pairs(struct cb_acc *a, const unsigned char *flapped,
                       unsigned char *hit)
{
	int n = a->nnodes, any = 0;
	double *score = calloc((size_t)n + 1, sizeof(double));
	double *v = calloc((size_t)a->npairs + n + 1, sizeof(double));
	int *cnt = calloc((size_t)n + 1, sizeof(int));
	uint64_t *sum = calloc((size_t)n + 1, sizeof(uint64_t));
	char label[160], range[64], what[400], line[800];

	if (!score || !v || !cnt || !sum)
		goto out;
	for (int x = 0; x < n; x++) {
		cnt[x] = node_score(a, x, v, &score[x], &sum[x]);
		any |= cnt[x] > 0;
	}
	for (int x = 0; x < n; x++) {
		/* against the pairs without it, whose ends' links held */
		int k = 0;
		for (int i = 0; i < a->npairs; i++) {
			const struct cb_acc_pair *p = &a->pairs[i];
			if (p->ctr_meas > 0 && p->a != x && p->b != x &&
			    !flapped[a->nodes[p->a].host] &&
			    !flapped[a->nodes[p->b].host])
				v[k++] = rate(p->retrans, p->out_segs);
		}
		if (cnt[x] < 2 || k < 2 || flapped[a->nodes[x].host])
			continue;
		double lo = v[0], hi = v[0];
		for (int i = 1; i < k; i++) {
			lo = v[i] < lo ? v[i] : lo;
			hi = v[i] > hi ? v[i] : hi;
		}
		double ref = cb_acc_median(v, k);
		if (score[x] < CB_ACC_LOSS_RATE ||
		    sum[x] < (uint64_t)CB_ACC_LOSS_MIN ||
		    score[x] <= CB_ACC_LOSS_RATIO * ref)
			continue;
		int h = a->nodes[x].host;
		const struct cb_hostctr *m =
		        &a->hosts[h].moved[CB_ACC_PAIRWISE];
		hit[x] = 1;
		others(a, CB_ACC_PAIRWISE, h, range, sizeof(range));
		char theirs[48];
		if (hi - lo < 5e-5)
			snprintf(theirs, sizeof(theirs), "%.2g%%", 100 * lo);
		else
			snprintf(theirs, sizeof(theirs), "%.2g-%.2g%%",
			         100 * lo, 100 * hi);
		snprintf(what, sizeof(what),
		         "its pairs retransmitted %.2g%% of their TCP segments "
		         "during pairwise (median; %llu segments; the pairs "
		         "without it %s); this host resent %llu, each other "
		         "host %s (what it loses on the way in, its peers "
		         "resend): a lossy cable or port",
		         100 * score[x], (unsigned long long)sum[x], theirs,
		         (unsigned long long)m->v[CB_HC_RETRANS], range);
		snprintf(line, sizeof(line), "host %s: %s",
		         host_label(a, h, label, sizeof(label)), what);
		evidence(a, CB_ACC_PAIRWISE, "node", h, -1, what, line);
	}
	/* A pair that stands out with neither end named: the path. */
	int k = 0;
	for (int i = 0; i < a->npairs; i++)
		if (a->pairs[i].ctr_meas > 0 &&
		    !flapped[a->nodes[a->pairs[i].a].host] &&
		    !flapped[a->nodes[a->pairs[i].b].host])
			v[k++] =
			        rate(a->pairs[i].retrans, a->pairs[i].out_segs);
	double ref = cb_acc_median(v, k);
	for (int i = 0; k >= 3 && i < a->npairs; i++) {
		const struct cb_acc_pair *p = &a->pairs[i];
		double r = rate(p->retrans, p->out_segs);
		/* lossy in every one of two measurements at least: a burst
		 * of congestion on a healthy pair is not */
		if (p->ctr_meas < 2 || p->ctr_lossy < p->ctr_meas ||
		    hit[p->a] || hit[p->b] || flapped[a->nodes[p->a].host] ||
		    flapped[a->nodes[p->b].host] || r < CB_ACC_LOSS_RATE ||
		    p->retrans < (uint64_t)CB_ACC_LOSS_MIN ||
		    r <= CB_ACC_LOSS_RATIO * ref)
			continue;
		char lb[160];
		int ha = a->nodes[p->a].host, hb = a->nodes[p->b].host;
		snprintf(
		        what, sizeof(what),
		        "%llu TCP retransmissions, %.2g%% of its segments (the "
		        "median pair %.2g%%)",
		        (unsigned long long)p->retrans, 100 * r, 100 * ref);
		snprintf(line, sizeof(line),
		         "path %s - %s: %s: the cable or switch ports between "
		         "them",
		         host_label(a, ha, label, sizeof(label)),
		         host_label(a, hb, lb, sizeof(lb)), what);
		evidence(a, CB_ACC_PAIRWISE, "path", ha, hb, what, line);
	}
out:
	free(score);
	free(v);
	free(cnt);
	free(sum);
	return any;
}

/* Each stage's totals, host by host (no pair had counters of its own). */
static void lossy_hosts(struct cb_acc *a, const unsigned char *flapped)
{
	unsigned char *hit = calloc((size_t)a->nhosts + 1, 1);
	double *v = calloc((size_t)a->nhosts + 1, sizeof(double));
	char label[160], range[64], what[400], line[800];

	for (int s = 0; hit && v && s < CB_ACC_NSTAGES; s++)
		for (int h = 0; h < a->nhosts; h++) {
			const struct cb_hostctr *m = &a->hosts[h].moved[s];
			int k = 0;
			for (int g = 0; g < a->nhosts; g++)
				if (g != h &&
				    (a->hosts[g].moved[s].have & RETRANS))
					v[k++] = (double)a->hosts[g]
					                 .moved[s]
					                 .v[CB_HC_RETRANS];
			if (hit[h] || flapped[h] || k < 2 ||
			    (m->have & (RETRANS | SEGS)) != (RETRANS | SEGS))
				continue;
			double d = (double)m->v[CB_HC_RETRANS];
			if (d < CB_ACC_LOSS_MIN ||
			    rate(m->v[CB_HC_RETRANS], m->v[CB_HC_OUTSEGS]) <
			            CB_ACC_LOSS_RATE ||
			    d <= CB_ACC_LOSS_RATIO * cb_acc_median(v, k))
				continue;
			hit[h] = 1;
			others(a, s, h, range, sizeof(range));
			snprintf(
			        what, sizeof(what),
			        "%llu TCP retransmissions during %s (%.2g%% of "
			        "its segments), the others %s: a lossy cable "
			        "or "
			        "port (or the path at one of its ends)",
			        (unsigned long long)m->v[CB_HC_RETRANS],
			        cb_acc_stage_name(s),
			        100 * rate(m->v[CB_HC_RETRANS],
			                   m->v[CB_HC_OUTSEGS]),
			        range);
			snprintf(line, sizeof(line), "host %s: %s",
			         host_label(a, h, label, sizeof(label)), what);
			evidence(a, s, "host", h, -1, what, line);
		}
	free(hit);
	free(v);
}

/* Hosts whose link went down during the run. */
static void flaps(struct cb_acc *a)
{
	char label[160], what[400], line[800];

	for (int h = 0; h < a->nhosts; h++) {
		const struct cb_acc_host *ho = &a->hosts[h];
		size_t n = 0;
		int first = -1;
		what[0] = '\0';
		for (int s = 0; s < CB_ACC_NSTAGES; s++) {
			size_t n0 = n;
			for (int i = 0; i < CB_HC_N; i++)
				if (cb_hostctr_is_link(i) &&
				    (ho->moved[s].have & 1u << i) &&
				    ho->moved[s].v[i])
					cb_buf_appendf(
					        what, sizeof(what), &n,
					        "%s%s +%llu",
					        n == n0 ? (n ? "; " : "")
					                : ", ",
					        cb_hostctr_name(i),
					        (unsigned long long)ho->moved[s]
					                .v[i]);
			if (n == n0)
				continue;
			cb_buf_appendf(what, sizeof(what), &n, " (%s)",
			               cb_acc_stage_name(s));
			if (first < 0)
				first = s;
		}
		if (first < 0)
			continue;
		char had[320];
		snprintf(had, sizeof(had), "link counters moved: %s", what);
		snprintf(line, sizeof(line),
		         "host %s: its link went down during the run: %s: a "
		         "link "
		         "that flaps (its cable, port or NIC)",
		         host_label(a, h, label, sizeof(label)), what);
		evidence(a, first, "node", h, -1, had, line);
	}
}

/* 1 when a link counter of host @h moved during the run. */
static int went_down(const struct cb_acc_host *ho)
{
	for (int s = 0; s < CB_ACC_NSTAGES; s++)
		for (int i = 0; i < CB_HC_N; i++)
			if (cb_hostctr_is_link(i) &&
			    (ho->moved[s].have & 1u << i) && ho->moved[s].v[i])
				return 1;
	return 0;
}

void cb_acc_judge_loss(struct cb_acc *a)
{
	unsigned char *hit = calloc((size_t)a->nnodes + 1, 1);
	unsigned char *flapped = calloc((size_t)a->nhosts + 1, 1);

	if (!hit || !flapped)
		goto out;
	/* A link that went down retransmits what it lost meanwhile: that
	 * is its finding, not loss (nor loss on its pairs). */
	for (int h = 0; h < a->nhosts; h++)
		flapped[h] = (unsigned char)went_down(&a->hosts[h]);
	if (!lossy_pairs(a, flapped, hit))
		lossy_hosts(a, flapped);
	flaps(a);
out:
	free(hit);
	free(flapped);
}
