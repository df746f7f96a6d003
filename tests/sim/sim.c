/* SPDX-License-Identifier: MIT */
/*
 * tests/sim/sim.c - the modelled fabric (tests/sim/sim.h).
 *
 * A pair's bandwidth is the slower of its two cables (each the nominal
 * rate times a log-normal cable-to-cable factor, times a fault's), and,
 * where it crosses switches, its share of each uplink it crosses (the
 * leaf's uplink capacity, leaf x rate / over, split between the round's
 * pairs that cross it).  Each measurement is then multiplied by a
 * log-normal noise and, with probability `tail`, by a busy moment
 * (uniform 0.5-0.95): the heavy tail a shared machine has; with `lower`,
 * by exp(-lower |N(0,1)|), noise that only ever lowers (CPU contention on
 * a machine whose cores the hosts share); with `cpu`, a pair is bound by
 * the cores the hosts share rather than its cables (at most cpu x rate,
 * more at moments its ranks happen to run at once: exp(spike |N|) up, and
 * each host's own share of the cores, drawn once); and, with
 * probability `busy_round` a round starts a busy phase of ~5 rounds (every
 * pair of them 0.4-0.6x: another job took the cores, as on a shared CI
 * machine, or a storage burst on a real fabric).  Faults:
 *   slow    the cable at `slow` of its rate;
 *   lossy   TCP under loss p: rate / (1 + p / 0.5%) (a model, not a law:
 *           at data-centre round trips Mathis' formula barely bites);
 *   flap    each measurement fails with probability `flap` (the link was
 *           down) and costs the pair deadline;
 *   uplink  the leaf's uplink at `uplink` of its capacity.
 * Time: connecting and 200 latency round trips, then three bandwidth
 * patterns of up to 0.4 s each (3 repetitions of ~50 ms, longer on a slow
 * link), as acceptance/pair.c does; a round lasts its slowest pair plus
 * the store's gather (5 ms + 20 us a host).
 */
#include "sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"

struct cb_accsim {
	struct cb_accsim_cfg c;
	uint64_t rng;
	int nleaf;
	signed char *fault; /* [n] */
	double *factor;     /* [n] cable */
	double *cpuf;       /* [n] its share of the cores (--cpu) */
	unsigned char *upbad;
	int *cross;  /* [nleaf] scratch */
	double busy; /* the busy phase's factor; 0 quiet */
};

static uint64_t next(struct cb_accsim *s)
{
	uint64_t z = (s->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double uni(struct cb_accsim *s)
{
	return ((double)(next(s) >> 11) + 0.5) / 9007199254740992.0;
}

static double gauss(struct cb_accsim *s)
{
	return sqrt(-2 * log(uni(s))) * cos(6.283185307179586 * uni(s));
}

/* @k distinct values below @n into @out (k <= n). */
static void pick(struct cb_accsim *s, int n, int k, int *out)
{
	for (int i = 0; i < k; i++) {
		int v, dup;
		do {
			v = (int)(next(s) % (uint64_t)n);
			dup = 0;
			for (int j = 0; j < i; j++)
				dup |= out[j] == v;
		} while (dup);
		out[i] = v;
	}
}

struct cb_accsim *cb_accsim_new(const struct cb_accsim_cfg *c)
{
	struct cb_accsim *s = calloc(1, sizeof(*s));
	int host_faults = 0;

	if (!s)
		return NULL;
	s->c = *c;
	s->rng = c->seed * 0x2545f4914f6cdd1dull + 1;
	if (s->c.leaf < 1)
		s->c.leaf = 1;
	s->nleaf = (c->n + s->c.leaf - 1) / s->c.leaf;
	s->fault = malloc((size_t)c->n);
	s->factor = malloc((size_t)c->n * sizeof(double));
	s->cpuf = malloc((size_t)c->n * sizeof(double));
	s->upbad = calloc((size_t)s->nleaf, 1);
	s->cross = calloc((size_t)s->nleaf, sizeof(int));
	for (int k = 0; k < SIM_UPLINK; k++)
		host_faults += c->faults[k];
	int *who =
	        calloc((size_t)host_faults + (size_t)s->nleaf + 1, sizeof(int));
	if (!s->fault || !s->factor || !s->cpuf || !s->upbad || !s->cross ||
	    !who || host_faults > c->n || c->faults[SIM_UPLINK] > s->nleaf) {
		free(who);
		cb_accsim_free(s);
		return NULL;
	}
	memset(s->fault, -1, (size_t)c->n);
	for (int x = 0; x < c->n; x++)
		s->factor[x] = exp(c->cable_sigma * gauss(s));
	for (int x = 0; x < c->n; x++) /* (no draw without: same streams) */
		s->cpuf[x] = c->cpu > 0 ? exp(c->host_sigma * gauss(s)) : 1;
	pick(s, c->n, host_faults, who);
	for (int k = 0, i = 0; k < SIM_UPLINK; k++)
		for (int j = 0; j < c->faults[k]; j++, i++) {
			int x = who[i];
			s->fault[x] = (signed char)k;
			if (k == SIM_SLOW)
				s->factor[x] *= c->slow;
			else if (k == SIM_LOSSY)
				s->factor[x] /= 1 + c->loss / 0.005;
		}
	pick(s, s->nleaf, c->faults[SIM_UPLINK], who);
	for (int j = 0; j < c->faults[SIM_UPLINK]; j++)
		s->upbad[who[j]] = 1;
	free(who);
	return s;
}

void cb_accsim_free(struct cb_accsim *s)
{
	if (!s)
		return;
	cb_free_all(s->fault, s->factor, s->cpuf, s->upbad, s->cross, s);
}

int cb_accsim_leaf_of(const struct cb_accsim *s, int x)
{
	return x / s->c.leaf;
}

int cb_accsim_host_fault(const struct cb_accsim *s, int x)
{
	return s->fault[x];
}

int cb_accsim_uplink_bad(const struct cb_accsim *s, int g)
{
	return g >= 0 && g < s->nleaf && s->upbad[g];
}

double cb_accsim_round(struct cb_accsim *s, int (*pairs)[2], int n, double *bw,
                       int *ok)
{
	const struct cb_accsim_cfg *c = &s->c;
	double up = c->leaf * c->rate / (c->over > 0 ? c->over : 1);
	double slowest = 0;
	double busy = 1;

	/* a busy phase starts with chance busy_round and lasts ~5 rounds
	 * (no draws at all without: the same streams as before) */
	if (c->busy_round > 0) {
		if (s->busy > 0 ? uni(s) < 0.2 : uni(s) >= c->busy_round)
			s->busy = 0;
		else if (s->busy == 0)
			s->busy = 0.4 + 0.2 * uni(s);
		busy = s->busy > 0 ? s->busy : 1;
	}

	memset(s->cross, 0, (size_t)s->nleaf * sizeof(int));
	for (int i = 0; i < n; i++) {
		int la = pairs[i][0] / c->leaf, lb = pairs[i][1] / c->leaf;
		if (la != lb)
			s->cross[la]++, s->cross[lb]++;
	}
	for (int i = 0; i < n; i++) {
		int a = pairs[i][0], b = pairs[i][1];
		int la = a / c->leaf, lb = b / c->leaf;
		double t;
		if ((s->fault[a] == SIM_FLAP && uni(s) < c->flap) ||
		    (s->fault[b] == SIM_FLAP && uni(s) < c->flap)) {
			ok[i] = 0;
			bw[i] = 0;
			t = c->pair_timeout_s;
		} else {
			double cap = c->rate * fmin(s->factor[a], s->factor[b]);
			for (int e = 0; la != lb && e < 2; e++) {
				int l = e ? lb : la;
				double u = up * (s->upbad[l] ? c->uplink : 1);
				cap = fmin(cap, u / s->cross[l]);
			}
			if (c->cpu > 0)
				cap = fmin(
				        cap,
				        c->cpu * c->rate *
				                exp(c->spike * fabs(gauss(s))) *
				                fmin(s->cpuf[a], s->cpuf[b]));
			double v = busy * cap * exp(c->noise * gauss(s));
			if (uni(s) < c->tail)
				v *= 0.5 + 0.45 * uni(s);
			if (c->lower > 0) /* (no draw without: same streams) */
				v *= exp(-c->lower * fabs(gauss(s)));
			ok[i] = 1;
			bw[i] = v;
			t = 0.002 + 400 * c->lat_us * 1e-6 +
			    3 * fmin(0.4, 0.15 * c->rate / v);
		}
		slowest = fmax(slowest, t);
	}
	return slowest + 0.005 + 20e-6 * c->n;
}
