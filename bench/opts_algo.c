/* SPDX-License-Identifier: MIT */
/*
 * bench/opts_algo.c - --algo: a name, a list, all, or size ranges, and
 * whether what was asked for fits the collectives asked for (see
 * bench/options.h); and the list rule every option's lists share.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bench/options.h"
#include "core/log.h"

/* An item of a comma (or ';') list is never empty: "allreduce," and
 * "ring,,tree" are refused, not read as one item less. */
cb_status_t cb_opts_no_empty_item(const char *s, const char *flag, char sep)
{
	size_t n = strlen(s);

	for (size_t i = 0; i < n; i++)
		if (s[i] == sep && (i == 0 || i + 1 == n || s[i + 1] == sep))
			return cb_fail(CB_ERR_USAGE,
			               "%s '%s': an empty item in the list (a "
			               "'%c' too many)",
			               flag, s, sep);
	return CB_OK;
}

static void algo_names(char *names, size_t cap)
{
	snprintf(names, cap, "auto, all");
	for (int i = 0; cb_algos[i]; i++)
		snprintf(names + strlen(names), cap - strlen(names), ", %s",
		         cb_algos[i]->name);
}

static cb_status_t find_algo(const char *name, const struct cb_algo **out)
{
	char names[256];

	if ((*out = cb_algo_find(name)) && (*out)->colls)
		return CB_OK;
	algo_names(names, sizeof(names));
	return cb_fail(CB_ERR_USAGE, "unknown algorithm '%s' (one of: %s)",
	               name, names);
}

/* "auto"; "all"; "ring,tree"; or "rd:0-64K;ring:64K-max". */
cb_status_t cb_opts_algo_parse(const char *s, struct cb_opts *o)
{
	char buf[512];
	cb_status_t st;

	o->nalgos = 0;
	if (!strcmp(s, "auto")) {
		o->algo_mode = CB_ALGO_AUTO;
		return CB_OK;
	}
	o->algo_mode = CB_ALGO_LIST;
	if (!strcmp(s, "all")) {
		/* all but those that run only when named (ps-async) */
		for (int i = 0; cb_algos[i] && o->nalgos < CB_MAX_ALGO_SEL; i++)
			if (cb_algos[i]->colls &&
			    !(cb_algos[i]->flags & CB_ALGO_NAMED_ONLY))
				o->algos[o->nalgos++] =
				        (struct cb_algo_sel){ cb_algos[i], 0,
					                      SIZE_MAX };
		return CB_OK;
	}
	if (strlen(s) >= sizeof(buf))
		return cb_fail(CB_ERR_USAGE, "--algo value too long");
	snprintf(buf, sizeof(buf), "%s", s);
	int ranges = strchr(s, ':') != NULL;
	if (ranges)
		o->algo_mode = CB_ALGO_RANGES;
	if ((st = cb_opts_no_empty_item(s, "--algo", ranges ? ';' : ',')))
		return st;
	for (char *save, *t = strtok_r(buf, ranges ? ";" : ",", &save); t;
	     t = strtok_r(NULL, ranges ? ";" : ",", &save)) {
		struct cb_algo_sel sel = { NULL, 0, SIZE_MAX };
		char *colon = strchr(t, ':');
		if (o->nalgos == CB_MAX_ALGO_SEL)
			return cb_fail(CB_ERR_USAGE,
			               "--algo: at most %d entries",
			               CB_MAX_ALGO_SEL);
		if (ranges) {
			char *dash;
			if (!colon || !(dash = strchr(colon + 1, '-')))
				return cb_fail(CB_ERR_USAGE,
				               "--algo '%s': a size range is "
				               "NAME:LOW-HIGH, e.g. "
				               "rd:0-64K;ring:64K-max",
				               t);
			*colon = *dash = 0;
			if (strchr(t, ','))
				return cb_fail(
				        CB_ERR_USAGE,
				        "--algo '%s': with size ranges, "
				        "separate the entries with ';' and "
				        "give every entry a range",
				        s);
			if ((st = cb_parse_size(colon + 1, "--algo range start",
			                        &sel.lo)))
				return st;
			if (strcmp(dash + 1, "max") &&
			    (st = cb_parse_size(dash + 1, "--algo range end",
			                        &sel.hi)))
				return st;
			if (sel.hi <= sel.lo)
				return cb_fail(
				        CB_ERR_USAGE,
				        "--algo %s: the range %s-%s is empty",
				        t, colon + 1, dash + 1);
		} else if (colon) {
			return cb_fail(CB_ERR_USAGE,
			               "--algo '%s': give every entry a size "
			               "range, or none",
			               s);
		}
		if ((st = find_algo(t, &sel.algo)))
			return st;
		o->algos[o->nalgos++] = sel;
	}
	if (o->nalgos == 0)
		return cb_fail(CB_ERR_USAGE, "empty --algo list");
	return CB_OK;
}

/* Size ranges of two algorithms that implement one collective asked for
 * do not overlap: each size of it has one algorithm ("ring:0-1M;
 * rd:512K-max" is refused; "ring:0-max;pairwise:0-max" for allreduce and
 * alltoall is not ambiguous). */
static cb_status_t check_ranges(const struct cb_opts *o)
{
	char lo[32], hi[32];

	for (int i = 0; i < o->nalgos; i++)
		for (int j = i + 1; j < o->nalgos; j++) {
			const struct cb_algo_sel *x = &o->algos[i],
			                         *y = &o->algos[j];
			int common = 0;
			for (int k = 0; k < o->ncolls; k++)
				common |= cb_algo_does(x->algo, o->colls[k]) &&
				          cb_algo_does(y->algo, o->colls[k]);
			if (!common || x->lo >= y->hi || y->lo >= x->hi)
				continue;
			snprintf(lo, sizeof(lo), "%zu",
			         x->lo > y->lo ? x->lo : y->lo);
			if ((x->hi < y->hi ? x->hi : y->hi) == SIZE_MAX)
				snprintf(hi, sizeof(hi), "max");
			else
				snprintf(hi, sizeof(hi), "%zu",
				         x->hi < y->hi ? x->hi : y->hi);
			return cb_fail(CB_ERR_USAGE,
			               "--algo %s: the ranges of %s and %s "
			               "overlap (bytes %s-%s); give each size "
			               "one algorithm",
			               o->algo, x->algo->name, y->algo->name,
			               lo, hi);
		}
	return CB_OK;
}

/* Every collective asked for must have an algorithm asked for. */
cb_status_t cb_opts_algo_check(const struct cb_opts *o)
{
	cb_status_t st;

	if (o->algo_mode == CB_ALGO_AUTO)
		return CB_OK;
	if (o->algo_mode == CB_ALGO_RANGES && (st = check_ranges(o)))
		return st;
	for (int i = 0; i < o->nalgos && !strcmp(o->mem, "gpu"); i++)
		if (o->algos[i].algo->flags & CB_ALGO_HOST_ONLY)
			return cb_fail(
			        CB_ERR_USAGE,
			        "--algo %s runs on host memory only (its "
			        "steps work on the CPU): not with device "
			        "buffers (--mem gpu, --transport gpu)",
			        o->algos[i].algo->name);
	for (int k = 0; k < o->ncolls; k++) {
		int any = 0;
		for (int i = 0; i < o->nalgos; i++)
			any |= cb_algo_does(o->algos[i].algo, o->colls[k]);
		if (any)
			continue;
		{
			char names[256] = "";
			for (int i = 0; cb_algos[i]; i++)
				if (cb_algo_does(cb_algos[i], o->colls[k]))
					snprintf(names + strlen(names),
					         sizeof(names) - strlen(names),
					         "%s%s", names[0] ? ", " : "",
					         cb_algos[i]->name);
			return cb_fail(CB_ERR_USAGE,
			               "--algo %s: no algorithm given "
			               "implements %s (those that do: %s)",
			               o->algo, cb_coll_name(o->colls[k]),
			               names);
		}
	}
	return CB_OK;
}
