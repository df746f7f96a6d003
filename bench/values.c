/* SPDX-License-Identifier: MIT */
/*
 * bench/values.c - the values options take that other commands share:
 * sizes with K/M/G/T suffixes and lists or ranges of counts (--ranks,
 * --nodes), and the table of a command's options (bench/options.h).  Bad
 * input gets one usage line (cb_fail), never a guess.
 */
#include "bench/options.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/log.h"

cb_status_t cb_parse_size(const char *s, const char *what, size_t *bytes)
{
	const char *p = s;
	unsigned long long v = 0, mult = 1;

	while (isspace((unsigned char)*p))
		p++;
	if (!isdigit((unsigned char)*p))
		goto bad;
	errno = 0;
	char *end;
	v = strtoull(p, &end, 10);
	if (errno == ERANGE)
		goto bad;
	static const char units[] = "KMGT"; /* 2^10, 2^20, 2^30, 2^40 */
	const char *suf =
	        *end ? strchr(units, toupper((unsigned char)*end)) : NULL;
	if (suf) {
		mult = 1ull << (10 * (suf - units + 1));
		end++;
	}
	if (mult > 1 && (end[0] == 'i' || end[0] == 'I') &&
	    (end[1] == 'B' || end[1] == 'b'))
		end += 2;
	else if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		goto bad;
	if (v > (1ull << 40) / mult)
		return cb_fail(CB_ERR_USAGE,
		               "%s '%s' is too large (at most 1T)", what, s);
	*bytes = (size_t)(v * mult);
	return CB_OK;
bad:
	return cb_fail(CB_ERR_USAGE,
	               "%s '%s' is not a size (a number with an optional K, M, "
	               "G or T suffix)",
	               what, s);
}

/* 0: @x added; 1: full, but only the syntax is checked; -1: too many. */
static int put_count(long *v, int *k, long x, int syntax_only)
{
	if (*k < CB_MAX_COUNTS) {
		v[(*k)++] = x;
		return 0;
	}
	return syntax_only ? 1 : -1;
}

cb_status_t cb_parse_counts(const char *s, const char *what, int max, int *out,
                            int *n)
{
	char buf[256];
	long v[CB_MAX_COUNTS];
	int k = 0, syntax_only = max == 0;

	if (syntax_only)
		max = CB_MAX_COUNTS;
	if (strlen(s) >= sizeof(buf) || !*s)
		goto bad;
	snprintf(buf, sizeof(buf), "%s", s);
	char *c1 = strchr(buf, ':');
	if (c1) {
		char *c2 = strchr(c1 + 1, ':'), *end;
		long lo, hi, step;
		int mul;
		if (!c2)
			goto bad;
		*c1 = *c2 = 0;
		lo = strtol(buf, &end, 10);
		if (end == buf || *end)
			goto bad;
		if (!strcmp(c1 + 1, "max")) {
			hi = max;
		} else {
			hi = strtol(c1 + 1, &end, 10);
			if (end == c1 + 1 || *end)
				goto bad;
		}
		mul = c2[1] == 'x' || c2[1] == '*';
		if (!mul && c2[1] != '+')
			goto bad;
		step = strtol(c2 + 2, &end, 10);
		if (end == c2 + 2 || *end || step < (mul ? 2 : 1) || lo < 1)
			goto bad;
		for (long x = lo; x <= hi && x <= max;) {
			int r = put_count(v, &k, x, syntax_only);
			if (r > 0)
				break;
			if (r < 0)
				goto many;
			/* past max already? then stop before the step
			 * overflows (1:8:+9223372036854775807) */
			if (mul ? x > max / step : x > max - step)
				break;
			x = mul ? x * step : x + step;
		}
	} else {
		for (char *save, *t = strtok_r(buf, ",", &save); t;
		     t = strtok_r(NULL, ",", &save)) {
			char *end;
			long x = strcmp(t, "max") ? strtol(t, &end, 10) : max;
			if (strcmp(t, "max") && (end == t || *end))
				goto bad;
			if (x < 1)
				goto bad;
			if (x <= max && put_count(v, &k, x, syntax_only) < 0)
				goto many;
		}
	}
	if (syntax_only) {
		*n = k;
		return CB_OK;
	}
	/* sorted, unique */
	*n = 0;
	for (long want = 1; k && want <= max; want++)
		for (int i = 0; i < k; i++)
			if (v[i] == want) {
				out[(*n)++] = (int)want;
				break;
			}
	if (*n == 0)
		return cb_fail(
		        CB_ERR_USAGE,
		        "%s '%s' leaves nothing to run (at most %d here)", what,
		        s, max);
	return CB_OK;
many:
	return cb_fail(CB_ERR_USAGE, "%s '%s': more than %d values", what, s,
	               CB_MAX_COUNTS);
bad:
	return cb_fail(CB_ERR_USAGE,
	               "%s '%s' is not a list of counts (e.g. 2,4,8 or "
	               "2:max:x2 or 1:8:+1)",
	               what, s);
}

void cb_opt_table(const struct cb_optrow *rows, int n, int base,
                  struct option *lo)
{
	for (int i = 0; i < n; i++) {
		int bare = rows[i].kind == CB_OPT_BARE ||
		           rows[i].kind == CB_OPT_FLAG;
		lo[i] = (struct option){ rows[i].name,
			                 bare ? no_argument : required_argument,
			                 NULL,
			                 rows[i].id ? rows[i].id : base + i };
	}
	lo[n] = (struct option){ 0 };
	optind = 0;
	opterr = 0;
}

const struct cb_optrow *cb_opt_row(const struct cb_optrow *rows, int n,
                                   int base, int c)
{
	if (c >= base && c < base + n && !rows[c - base].id)
		return &rows[c - base];
	for (int i = 0; i < n; i++)
		if (rows[i].id == c)
			return &rows[i];
	return NULL;
}

cb_status_t cb_opt_value(const struct cb_optrow *r, const char *arg,
                         cb_opt_own_fn own, void *ctx)
{
	char what[48];

	if (r->what)
		snprintf(what, sizeof(what), "%s", r->what);
	else if (r->id > 0 && r->id < 128)
		snprintf(what, sizeof(what), "-%c", r->id);
	else
		snprintf(what, sizeof(what), "--%s", r->name);
	if (r->given)
		*r->given = 1;
	if (r->kind == CB_OPT_FLAG)
		*r->i = 1;
	else if (r->kind == CB_OPT_STR)
		*r->str = arg;
	else if (r->kind >= CB_OPT_OWN)
		return own(r, what, arg, ctx);
	return CB_OK;
}

cb_status_t cb_opt_refuse(int c, char **argv, const char *needs)
{
	if (c == ':')
		return cb_fail(CB_ERR_USAGE, "%s%s needs a value", needs,
		               argv[optind - 1]);
	return cb_fail(CB_ERR_USAGE, "unknown option '%s'", argv[optind - 1]);
}
