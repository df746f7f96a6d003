/* SPDX-License-Identifier: MIT */
/*
 * acceptance/expect.c - --expect FILE: expectations, a line each,
 * "bw_gbps = 11.5" and "lat_us = 3" ('#' starts a comment), flat or for a
 * band of message sizes ("bw_gbps[1M-16M] = 10": for pairs measured at a
 * size in it; a band beats the flat line; bands of a key do not overlap).
 * A bad line: one line naming its number, and nothing set.  Also the
 * number and rate parsers the options use.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acceptance/accept.h"
#include "bench/options.h"
#include "core/log.h"

cb_status_t cb_acc_number(const char *s, const char *what, double lo, double hi,
                          int pct, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end != s && pct && !strcmp(end, "%")) {
		v /= 100;
		end++;
	}
	if (end == s || *end || !isfinite(v) || v < lo || v > hi)
		return cb_fail(CB_ERR_USAGE,
		               "%s '%s' is not a number in %g..%g", what, s, lo,
		               hi);
	*out = v;
	return CB_OK;
}

cb_status_t cb_acc_rate(const char *s, const char *what, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end != s && (!strcmp(end, "Gb/s") || !strcmp(end, "Gbit/s")))
		v /= 8, end += strlen(end);
	else if (end != s && !strcmp(end, "GB/s"))
		end += 4;
	if (end == s || *end || !isfinite(v) || v <= 0 || v > 1e6)
		return cb_fail(CB_ERR_USAGE,
		               "%s '%s' is not a rate (GB/s, e.g. 11.5, or "
		               "100Gb/s)",
		               what, s);
	*out = v;
	return CB_OK;
}

#define EXPECT_LINE_MAX 255
#define EXPECT_FILE_MAX ((size_t)1 << 20)
#define EXPECT_BANDS    32

/* What an expectations file said so far, per key (bw_gbps, lat_us): its
 * flat line, and its bands (message sizes lo..hi, their lines), the band
 * that holds the size measured (the pairs' --bw-bytes; 8 B for latency). */
struct expect {
	int flat_line[2];
	double flat[2];
	int nband[2], band_line[2][EXPECT_BANDS];
	size_t lo[2][EXPECT_BANDS], hi[2][EXPECT_BANDS];
	int use_line[2]; /* the band that applies: its line; 0 none */
	double use[2];
	char use_band[2][32];
};

/* "[1M-16M]" after a key: the band, into @lo, @hi; @end past the ']'. */
static cb_status_t band(char *p, const char *name, int n, size_t *lo,
                        size_t *hi, char **end)
{
	char *close = strchr(p, ']'), *dash;

	if (!close)
		return cb_fail(CB_ERR_USAGE,
		               "--expect %s: line %d: a band is [LO-HI] (e.g. "
		               "bw_gbps[1M-16M] = 10)",
		               name, n);
	*close = 0;
	dash = strchr(p + 1, '-');
	if (!dash)
		return cb_fail(CB_ERR_USAGE,
		               "--expect %s: line %d: band '%.40s' is not "
		               "[LO-HI] (e.g. [1M-16M])",
		               name, n, p + 1);
	*dash = 0;
	if (cb_parse_size(p + 1, "a band's low end", lo) ||
	    cb_parse_size(dash + 1, "a band's high end", hi) || *lo > *hi) {
		cb_fail_clear();
		return cb_fail(
		        CB_ERR_USAGE,
		        "--expect %s: line %d: band [%.20s-%.20s] is not "
		        "two sizes, low to high (e.g. [1M-16M])",
		        name, n, p + 1, dash + 1);
	}
	*end = close + 1;
	return CB_OK;
}

/* Key @k's value @val, from line @n, flat or in band [@lo, @hi] (@banded):
 * each flat key once, no two bands of a key overlapping. */
static cb_status_t expect_take(struct expect *e, int k, const char *key,
                               const char *val, int banded, size_t lo,
                               size_t hi, const char *name, int n,
                               const struct cb_acc_settings *s)
{
	char what[320];
	double v;
	cb_status_t st;

	if (!banded && e->flat_line[k])
		return cb_fail(CB_ERR_USAGE,
		               "--expect %s: line %d: %s again (first on line "
		               "%d)",
		               name, n, key, e->flat_line[k]);
	for (int i = 0; banded && i < e->nband[k]; i++)
		if (lo <= e->hi[k][i] && e->lo[k][i] <= hi)
			return cb_fail(CB_ERR_USAGE,
			               "--expect %s: line %d: this %s band "
			               "overlaps the one on line %d",
			               name, n, key, e->band_line[k][i]);
	if (banded && e->nband[k] == EXPECT_BANDS)
		return cb_fail(CB_ERR_USAGE,
		               "--expect %s: line %d: more than %d %s bands",
		               name, n, EXPECT_BANDS, key);
	snprintf(what, sizeof(what), "--expect %s: line %d: %s", name, n, key);
	st = k == 0 ? cb_acc_rate(val, what, &v)
	            : cb_acc_number(val, what, 0.001, 1e7, 0, &v);
	if (st)
		return st;
	if (!banded) {
		e->flat_line[k] = n;
		e->flat[k] = v;
		return CB_OK;
	}
	e->lo[k][e->nband[k]] = lo;
	e->hi[k][e->nband[k]] = hi;
	e->band_line[k][e->nband[k]++] = n;
	size_t at = k == 0 ? (size_t)s->bw_bytes : 8;
	if (at >= lo && at <= hi) {
		e->use_line[k] = n;
		e->use[k] = v;
		snprintf(e->use_band[k], sizeof(e->use_band[k]), "%s", key);
	}
	return CB_OK;
}

/* One line of an expectations file, NUL-terminated, without its end:
 * blank, a comment, or "key = value" / "key[LO-HI] = value" with an
 * optional comment after. */
static cb_status_t expect_line(char *line, const char *name, int n,
                               struct expect *e,
                               const struct cb_acc_settings *s)
{
	static const char *const keys[] = { "bw_gbps", "lat_us" };
	char *p = line + strspn(line, " \t"), *key, *val, *bstart = NULL;
	size_t klen, vlen, lo = 0, hi = 0;
	cb_status_t st;
	int k;

	if (!*p || *p == '#')
		return CB_OK;
	key = p;
	klen = strspn(p, "abcdefghijklmnopqrstuvwxyz_");
	p += klen;
	if (klen && *p == '[') {
		bstart = p;
		if ((st = band(p, name, n, &lo, &hi, &p)))
			return st;
	}
	p += strspn(p, " \t");
	if (!klen || *p != '=')
		return cb_fail(CB_ERR_USAGE,
		               "--expect %s: line %d is not 'key = value'",
		               name, n);
	*p++ = 0;
	key[klen] = 0; /* (may be the '[' or the '=') */
	val = p + strspn(p, " \t");
	vlen = strcspn(val, " \t#");
	p = val + vlen;
	p += strspn(p, " \t");
	if (!vlen || (*p && *p != '#'))
		return cb_fail(CB_ERR_USAGE,
		               "--expect %s: line %d is not 'key = value'",
		               name, n);
	val[vlen] = 0;
	for (k = 0; k < 2 && strcmp(key, keys[k]); k++)
		;
	if (k == 2)
		return cb_fail(CB_ERR_USAGE,
		               "--expect %s: line %d: unknown key '%.64s' "
		               "(bw_gbps, lat_us, each with an optional "
		               "[LO-HI] size band)",
		               name, n, key);
	if ((st = expect_take(e, k, key, val, bstart != NULL, lo, hi, name, n,
	                      s)))
		return st;
	if (bstart && e->use_line[k] == n)
		snprintf(e->use_band[k], sizeof(e->use_band[k]), "%.15s-%.15s",
		         bstart + 1, bstart + 2 + strlen(bstart + 1));
	return CB_OK;
}

cb_status_t cb_acc_expect_parse(const char *text, size_t len, const char *name,
                                struct cb_acc_settings *s)
{
	struct expect e;
	char line[EXPECT_LINE_MAX + 2];
	int n = 0;
	cb_status_t st;

	memset(&e, 0, sizeof(e));
	for (size_t at = 0; at < len;) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - text) : len, ll = end - at;
		n++;
		if (ll && text[end - 1] == '\r')
			ll--; /* written on Windows */
		if (ll > EXPECT_LINE_MAX)
			return cb_fail(CB_ERR_USAGE,
			               "--expect %s: line %d is longer than %d "
			               "characters",
			               name, n, EXPECT_LINE_MAX);
		for (size_t i = 0; i < ll; i++) {
			unsigned char c = (unsigned char)text[at + i];
			if ((c < 0x20 && c != '\t') || c == 0x7f)
				return cb_fail(CB_ERR_USAGE,
				               "--expect %s: line %d is not "
				               "text (byte 0x%02x)",
				               name, n, c);
		}
		memcpy(line, text + at, ll);
		line[ll] = 0;
		if ((st = expect_line(line, name, n, &e, s)))
			return st;
		at = end + 1;
	}
	/* A band holding the measured size beats the flat line. */
	double *to[2] = { &s->expect_bw_gbps, &s->expect_lat_us };
	char *bands[2] = { s->expect_bw_band, s->expect_lat_band };
	for (int k = 0; k < 2; k++) {
		if (e.use_line[k]) {
			*to[k] = e.use[k];
			snprintf(bands[k], sizeof(s->expect_bw_band), "%s",
			         e.use_band[k]);
		} else if (e.flat_line[k]) {
			*to[k] = e.flat[k];
		}
	}
	return CB_OK;
}

cb_status_t cb_acc_read_file(const char *opt, const char *path, size_t max,
                             const char *kind, char **text, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *t = f ? malloc(max + 1) : NULL;
	size_t n = t ? fread(t, 1, max + 1, f) : 0;
	cb_status_t st = CB_OK;

	if (!f || !t || ferror(f))
		st = cb_fail(CB_ERR_USAGE, "%s %s: cannot read it", opt, path);
	else if (n > max)
		st = cb_fail(CB_ERR_USAGE, "%s %s: larger than %zu MiB, not %s",
		             opt, path, max >> 20, kind);
	if (f)
		fclose(f);
	if (st) {
		free(t);
		t = NULL;
		n = 0;
	}
	*text = t;
	*len = n;
	return st;
}

cb_status_t cb_acc_expect_file(const char *path, struct cb_acc_settings *s)
{
	char *text;
	size_t len;
	cb_status_t st = cb_acc_read_file("--expect", path, EXPECT_FILE_MAX,
	                                  "an expectations file", &text, &len);

	if (!st)
		st = cb_acc_expect_parse(text, len, path, s);
	free(text);
	return st;
}
