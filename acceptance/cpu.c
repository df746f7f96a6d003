/* SPDX-License-Identifier: MIT */
/*
 * acceptance/cpu.c - telling a slow host from a slow link by the hosts'
 * CPU probes (accept.h, cb_acc_judge_cpu): pure, no clock.
 *
 * A pair's bandwidth over TCP is bound by the cores of both ends as much
 * as by the cable, so a host whose ranks are capped (a cgroup, a power or
 * thermal limit, a stray job) is slow to every peer exactly as one with a
 * bad cable is.  Its probe tells them apart: a capped or throttled host
 * copies a fraction of what the others copy in the same quarter second,
 * a host with a bad cable as much as they do.  Where the probe is as fast
 * as the others' the finding says so and names the link; where no probe
 * came (an older rank, a host cut off) it says nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acceptance/accept.h"
#include "core/strbuf.h"

/* Host @h's probe over the median host's; -1 unknown. */
static double ratio(const struct cb_acc *a, int h, double ref)
{
	if (h < 0 || h >= a->nhosts || ref <= 0 || a->hosts[h].cpu_gbps <= 0)
		return -1;
	return a->hosts[h].cpu_gbps / ref;
}

/* Was host @h named by a finding before @i? */
static int named_before(const struct cb_acc *a, int i, int h)
{
	for (int k = 0; k < i; k++)
		if (a->findings[k].stage != CB_ACC_INVENTORY &&
		    (a->findings[k].ha == h || a->findings[k].hb == h))
			return 1;
	return 0;
}

/* Warn of host @h (its probe @r of the median's), named by no finding
 * and no noise warning: where pairs of it were measured again as
 * suspects (drive.c marks them) they all cleared; else none of its pairs
 * was slow enough to be a suspect. */
static void slow_unnamed(struct cb_acc *a, int h, double r)
{
	int rem = 0, clr = 0;

	for (int i = 0; i < a->npairs; i++) {
		const struct cb_acc_pair *p = &a->pairs[i];
		if (p->a < 0 || p->b < 0 || p->a >= a->nnodes ||
		    p->b >= a->nnodes || !p->suspect ||
		    (a->nodes[p->a].host != h && a->nodes[p->b].host != h))
			continue;
		rem++;
		clr += p->cleared != 0;
	}
	if (clr != rem)
		return; /* (a finding named it) */
	if (!rem) {
		cb_acc_warn(a, CB_ACC_INVENTORY,
		            "host %s: its CPU copied %.0f%% of what the median "
		            "host's did (with %.0f%% of a core): a CPU cap, "
		            "throttling or other work on it; no pair of it was "
		            "slow enough to be a suspect (over TCP the kernel "
		            "does most of the work), a job's compute will be, "
		            "look at it first",
		            a->hosts[h].name, 100 * r,
		            100 * a->hosts[h].cpu_share);
		return;
	}
	cb_acc_warn(a, CB_ACC_PAIRWISE,
	            "host %s: slow in the rounds, within the noise measured "
	            "again (%d pair%s); %s's CPU copied %.0f%% of what the "
	            "median host's did at inventory (with %.0f%% of a core): "
	            "a host short of CPU keeps up with one peer and falls "
	            "behind beside other traffic, look at it first",
	            a->hosts[h].name, rem, rem == 1 ? "" : "s",
	            a->hosts[h].name, 100 * r, 100 * a->hosts[h].cpu_share);
}

void cb_acc_judge_cpu(struct cb_acc *a)
{
	double *v = calloc((size_t)a->nhosts + 1, sizeof(double));
	int n = 0, slowest = -1;

	if (!v)
		return;
	for (int h = 0; h < a->nhosts; h++)
		if (a->hosts[h].cpu_gbps > 0)
			v[n++] = a->hosts[h].cpu_gbps;
	double ref = n >= 2 ? cb_acc_median(v, n) : 0;
	free(v);
	if (ref <= 0)
		return;
	for (int i = 0; i < a->nfindings; i++) {
		struct cb_acc_finding *f = &a->findings[i];
		if (f->stage == CB_ACC_INVENTORY || f->ha < 0)
			continue;
		double ra = ratio(a, f->ha, ref), rb = ratio(a, f->hb, ref);
		size_t len = strlen(f->line);
		if (f->hb < 0 && ra >= 0 && !named_before(a, i, f->ha)) {
			const struct cb_acc_host *ho = &a->hosts[f->ha];
			if (ra < CB_ACC_CPU_SLOW)
				cb_buf_appendf(
				        f->line, sizeof(f->line), &len,
				        "; %s's CPU copied %.0f%% of what the "
				        "median host's did at inventory (with "
				        "%.0f%% of a core): the host itself (a "
				        "CPU cap, throttling or other work on "
				        "it) more likely than its link",
				        ho->name, 100 * ra,
				        100 * ho->cpu_share);
			else
				cb_buf_appendf(
				        f->line, sizeof(f->line), &len,
				        "; %s's CPU copied as much as the "
				        "others' at inventory (%.0f%% of the "
				        "median host's): its NIC, port or "
				        "cable, not its CPU",
				        ho->name, 100 * ra);
		} else if (f->hb >= 0 && ra >= 0 && rb >= 0 &&
		           (ra < CB_ACC_CPU_SLOW) != (rb < CB_ACC_CPU_SLOW)) {
			int h = ra < CB_ACC_CPU_SLOW ? f->ha : f->hb;
			cb_buf_appendf(
			        f->line, sizeof(f->line), &len,
			        "; %s's CPU copied %.0f%% of what the "
			        "median host's did at inventory (with "
			        "%.0f%% of a core): that host more likely "
			        "than the cable",
			        a->hosts[h].name, 100 * (h == f->ha ? ra : rb),
			        100 * a->hosts[h].cpu_share);
		}
	}
	for (int h = 0; h < a->nhosts; h++) {
		double r = ratio(a, h, ref);
		if (r >= 0 && r < CB_ACC_CPU_SLOW &&
		    (slowest < 0 || r < ratio(a, slowest, ref)))
			slowest = h;
	}
	/* The pairwise noise too wide to name anyone (drive.c): a host short
	 * of CPU makes the measurements beside it slow and erratic, so it is
	 * where to look first (it is not named: the noise may be elsewhere);
	 * unless a finding named it already. */
	int named = slowest >= 0 && named_before(a, a->nfindings, slowest);
	int said = named;
	for (int i = 0; slowest >= 0 && !named && i < a->nwarnings; i++) {
		struct cb_acc_warning *w = &a->warnings[i];
		const struct cb_acc_host *ho = &a->hosts[slowest];
		size_t len = strlen(w->line);
		if (w->stage != CB_ACC_PAIRWISE ||
		    !strstr(w->line, "cannot be told"))
			continue;
		cb_buf_appendf(w->line, sizeof(w->line), &len,
		               "; %s's CPU copied %.0f%% of what the median "
		               "host's did at inventory (with %.0f%% of a "
		               "core): a host short of CPU is slow and erratic "
		               "to its peers, look at it first",
		               ho->name, 100 * ratio(a, slowest, ref),
		               100 * ho->cpu_share);
		said = 1;
	}
	/* No finding and no noise warning to say it in: pairs of that host
	 * slow in the rounds and within the noise measured again (a host
	 * short of CPU keeps up with one peer and falls behind beside the
	 * others' traffic), or none of them slow at all.  Either way a host
	 * whose CPU does a fraction of the others' is worth a look: said as
	 * a warning of its own, never a finding (healthy hosts' probes were
	 * 93-170% of the median here, capped ones 6-22%). */
	if (slowest >= 0 && !said)
		slow_unnamed(a, slowest, ratio(a, slowest, ref));
	if (slowest >= 0) {
		struct cb_acc_stage *s = &a->stage[CB_ACC_INVENTORY];
		size_t len = strlen(s->summary);
		cb_buf_appendf(s->summary, sizeof(s->summary), &len,
		               "; CPU probe: %s copied %.0f%% of the median "
		               "host's",
		               a->hosts[slowest].name,
		               100 * ratio(a, slowest, ref));
	}
}
