/* SPDX-License-Identifier: MIT */
/*
 * reports/results.c - the result set, and the JSON document it is stored
 * as (docs/results-schema.md), written and read with json-c.
 *
 * Numbers are written with a fixed precision (times to the nanosecond,
 * bandwidths to six significant digits), through json-c's
 * json_object_new_double_s, so a file reads back to the same values and
 * writes back to the same bytes; a value that is not finite is null.
 */
#include "reports/results.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "core/mem.h"

cb_status_t cb_results_new(struct cb_results **out)
{
	struct cb_results *r = calloc(1, sizeof(*r));

	if (!r || !(r->run = json_object_new_object())) {
		free(r);
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	}
	json_object_object_add(r->run, "schema",
	                       json_object_new_string(CB_RESULTS_SCHEMA));
	json_object_object_add(r->run, "schema_version",
	                       json_object_new_int(CB_RESULTS_SCHEMA_VERSION));
	*out = r;
	return CB_OK;
}

void cb_results_free(struct cb_results *r)
{
	if (!r)
		return;
	json_object_put(r->run);
	cb_free_all(r->rows, r->path, r);
}

cb_status_t cb_results_add(struct cb_results *r, const struct cb_row *row)
{
	if (r->nrows == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 64;
		void *p = realloc(r->rows, cap * sizeof(*r->rows));
		if (!p)
			return cb_fail(CB_ERR_NOMEM, "out of memory");
		r->rows = p;
		r->cap = cap;
	}
	r->rows[r->nrows++] = *row;
	return CB_OK;
}

const char *cb_results_str(const struct cb_results *r, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(r->run, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

void cb_results_label(const struct cb_results *r, char *buf, size_t bytes)
{
	const char *p = r->path, *slash;
	size_t n;

	if (!p) {
		snprintf(buf, bytes, "run");
		return;
	}
	if ((slash = strrchr(p, '/')))
		p = slash + 1;
	n = strlen(p);
	if (n > 5 && !strcmp(p + n - 5, ".json"))
		n -= 5;
	snprintf(buf, bytes, "%.*s", (int)n, p);
}

/* ---- writing ---- */

static json_object *num(double v, const char *fmt)
{
	char s[64];

	if (!isfinite(v))
		return NULL;
	snprintf(s, sizeof(s), fmt, v);
	return json_object_new_double_s(v, s);
}

static json_object *row_json(const struct cb_row *w)
{
	json_object *o = json_object_new_object();
#define ADD(k, v) json_object_object_add(o, k, v)
	ADD("collective", json_object_new_string(w->coll));
	ADD("algo", json_object_new_string(w->algo));
	ADD("transport", json_object_new_string(w->transport));
	ADD("dtype", json_object_new_string(w->dtype));
	ADD("op", json_object_new_string(w->op));
	ADD("ranks", json_object_new_int(w->ranks));
	ADD("hosts", json_object_new_int(w->hosts));
	ADD("bytes", json_object_new_int64((int64_t)w->bytes));
	ADD("count", json_object_new_int64((int64_t)w->count));
	ADD("inplace", json_object_new_boolean(w->inplace));
	ADD("time_us", num(w->time_us, "%.3f"));
	ADD("algbw_gbps", num(w->algbw_gbps, "%.6g"));
	ADD("busbw_gbps", num(w->busbw_gbps, "%.6g"));
	ADD("wrong", json_object_new_int64((int64_t)w->wrong));
	ADD("algo_model_us", num(w->model_us, "%.3f"));
	ADD("time_min_us", num(w->min_us, "%.3f"));
	ADD("time_p50_us", num(w->p50_us, "%.3f"));
	ADD("time_p99_us", num(w->p99_us, "%.3f"));
	ADD("time_max_us", num(w->max_us, "%.3f"));
	ADD("slowest_rank",
	    w->slowest < 0 ? NULL : json_object_new_int(w->slowest));
	ADD("root", w->root < 0 ? NULL : json_object_new_int(w->root));
	ADD("push_per_s", num(w->push_per_s, "%.1f"));
	ADD("pull_per_s", num(w->pull_per_s, "%.1f"));
	ADD("staleness_p50", num(w->stale_p50, "%.0f"));
	ADD("staleness_p99", num(w->stale_p99, "%.0f"));
	ADD("staleness_max", num(w->stale_max, "%.0f"));
	ADD("iters",
	    w->iters ? json_object_new_int64((int64_t)w->iters) : NULL);
#undef ADD
	return o;
}

cb_status_t cb_results_write(FILE *f, const struct cb_results *r)
{
	json_object *doc = json_object_new_object(), *rows;
	const char *s;
	int bad;

	json_object_object_foreach(r->run, key, val)
	{
		if (strcmp(key, "rows"))
			json_object_object_add(doc, key, json_object_get(val));
	}
	rows = json_object_new_array_ext((int)r->nrows);
	for (size_t i = 0; i < r->nrows; i++)
		json_object_array_add(rows, row_json(&r->rows[i]));
	json_object_object_add(doc, "rows", rows);
	s = json_object_to_json_string_ext(
	        doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
	                     JSON_C_TO_STRING_NOSLASHESCAPE);
	bad = fputs(s, f) == EOF || fputc('\n', f) == EOF || fflush(f);
	json_object_put(doc);
	return bad ? cb_fail(CB_ERR_SYS, "cannot write the JSON results: %s",
	                     strerror(errno))
	           : CB_OK;
}

cb_status_t cb_results_save(const struct cb_results *r, const char *path)
{
	char tmp[4096];
	FILE *f;
	cb_status_t st;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.part", path) >= sizeof(tmp))
		return cb_fail(CB_ERR_SYS, "cannot write %s: name too long",
		               path);
	if (!(f = fopen(tmp, "w")))
		return cb_fail(CB_ERR_SYS, "cannot write %s: %s", tmp,
		               strerror(errno));
	st = cb_results_write(f, r);
	if (fclose(f) && !st)
		st = cb_fail(CB_ERR_SYS, "cannot write %s: %s", tmp,
		             strerror(errno));
	if (!st && rename(tmp, path))
		st = cb_fail(CB_ERR_SYS, "cannot write %s: %s", path,
		             strerror(errno));
	if (st)
		unlink(tmp);
	return st;
}

/* ---- reading ---- */

struct rd {
	const char *path;
	size_t row;
};

static cb_status_t bad_row(const struct rd *rd, const char *key,
                           const char *what)
{
	return cb_fail(CB_ERR_USAGE, "%s: row %zu: \"%s\" %s", rd->path,
	               rd->row, key, what);
}

static cb_status_t get(const struct rd *rd, json_object *o, const char *key,
                       json_type t, int null_ok, json_object **v)
{
	static const char *const tn[] = {
		[json_type_null] = "null",
		[json_type_boolean] = "a boolean",
		[json_type_double] = "a number",
		[json_type_int] = "a whole number",
		[json_type_object] = "an object",
		[json_type_array] = "an array",
		[json_type_string] = "a string",
	};

	if (!json_object_object_get_ex(o, key, v))
		return bad_row(rd, key, "is missing");
	if (*v == NULL && null_ok)
		return CB_OK;
	if (json_object_is_type(*v, t) ||
	    (t == json_type_double && json_object_is_type(*v, json_type_int)))
		return CB_OK;
	char what[64];
	snprintf(what, sizeof(what), "is not %s", tn[t]);
	return bad_row(rd, key, what);
}

static cb_status_t get_str(const struct rd *rd, json_object *o, const char *key,
                           char *buf, size_t bytes)
{
	json_object *v;
	cb_status_t st = get(rd, o, key, json_type_string, 0, &v);

	if (st)
		return st;
	if ((size_t)json_object_get_string_len(v) >= bytes)
		return bad_row(rd, key, "is too long");
	snprintf(buf, bytes, "%s", json_object_get_string(v));
	return CB_OK;
}

/* A whole number in lo..hi; null reads as @null_as when @null_ok. */
static cb_status_t get_int(const struct rd *rd, json_object *o, const char *key,
                           int64_t lo, int64_t hi, int null_ok, int64_t null_as,
                           int64_t *out)
{
	json_object *v;
	cb_status_t st = get(rd, o, key, json_type_int, null_ok, &v);

	if (st)
		return st;
	if (!v) {
		*out = null_as;
		return CB_OK;
	}
	errno = 0;
	int64_t x = json_object_get_int64(v);
	if (errno || x < lo || x > hi) {
		char what[80];
		snprintf(what, sizeof(what), "is out of range (%lld..%lld)",
		         (long long)lo, (long long)hi);
		return bad_row(rd, key, what);
	}
	*out = x;
	return CB_OK;
}

static cb_status_t get_num(const struct rd *rd, json_object *o, const char *key,
                           double *out)
{
	json_object *v;
	cb_status_t st = get(rd, o, key, json_type_double, 1, &v);

	if (st)
		return st;
	*out = v ? json_object_get_double(v) : NAN;
	if (v && (*out < 0 || !isfinite(*out)))
		return bad_row(rd, key, "is negative");
	return CB_OK;
}

static cb_status_t read_row(const struct rd *rd, json_object *o,
                            struct cb_row *w)
{
	const int64_t big = INT64_MAX, ranks_max = 1 << 24;
	int64_t ranks, hosts, bytes, count, wrong, slowest, root;
	json_object *ip;
	cb_status_t st;

	if (!json_object_is_type(o, json_type_object))
		return cb_fail(CB_ERR_USAGE, "%s: row %zu is not an object",
		               rd->path, rd->row);
	memset(w, 0, sizeof(*w));
	if ((st = get_str(rd, o, "collective", w->coll, sizeof(w->coll))) ||
	    (st = get_str(rd, o, "algo", w->algo, sizeof(w->algo))) ||
	    (st = get_str(rd, o, "transport", w->transport,
	                  sizeof(w->transport))) ||
	    (st = get_str(rd, o, "dtype", w->dtype, sizeof(w->dtype))) ||
	    (st = get_str(rd, o, "op", w->op, sizeof(w->op))) ||
	    (st = get_int(rd, o, "ranks", 1, ranks_max, 0, 0, &ranks)) ||
	    (st = get_int(rd, o, "hosts", 1, ranks_max, 0, 0, &hosts)) ||
	    (st = get_int(rd, o, "bytes", 0, big, 0, 0, &bytes)) ||
	    (st = get_int(rd, o, "count", 0, big, 0, 0, &count)) ||
	    (st = get(rd, o, "inplace", json_type_boolean, 0, &ip)) ||
	    (st = get_num(rd, o, "time_us", &w->time_us)) ||
	    (st = get_num(rd, o, "algbw_gbps", &w->algbw_gbps)) ||
	    (st = get_num(rd, o, "busbw_gbps", &w->busbw_gbps)) ||
	    (st = get_int(rd, o, "wrong", 0, big, 0, 0, &wrong)) ||
	    (st = get_num(rd, o, "algo_model_us", &w->model_us)) ||
	    (st = get_num(rd, o, "time_min_us", &w->min_us)) ||
	    (st = get_num(rd, o, "time_p50_us", &w->p50_us)) ||
	    (st = get_num(rd, o, "time_p99_us", &w->p99_us)) ||
	    (st = get_num(rd, o, "time_max_us", &w->max_us)) ||
	    (st = get_int(rd, o, "slowest_rank", 0, ranks_max, 1, -1,
	                  &slowest)) ||
	    (st = get_int(rd, o, "root", 0, ranks_max, 1, -1, &root)))
		return st;
	w->ranks = (int)ranks;
	w->hosts = (int)hosts;
	w->bytes = (uint64_t)bytes;
	w->count = (uint64_t)count;
	w->inplace = json_object_get_boolean(ip);
	w->wrong = (uint64_t)wrong;
	w->slowest = (int)slowest;
	w->root = (int)root;
	/* Later members: absent in files of earlier versions (NaN then). */
	static const char *const later[] = { "push_per_s", "pull_per_s",
		                             "staleness_p50", "staleness_p99",
		                             "staleness_max" };
	double *dst[] = { &w->push_per_s, &w->pull_per_s, &w->stale_p50,
		          &w->stale_p99, &w->stale_max };
	for (int i = 0; i < 5; i++) {
		*dst[i] = NAN;
		if (json_object_object_get_ex(o, later[i], NULL) &&
		    (st = get_num(rd, o, later[i], dst[i])))
			return st;
	}
	int64_t iters = 0;
	if (json_object_object_get_ex(o, "iters", NULL) &&
	    (st = get_int(rd, o, "iters", 1, big, 1, 0, &iters)))
		return st;
	w->iters = (uint64_t)iters;
	return CB_OK;
}

static cb_status_t read_file(const char *path, char **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 16, n = 0;
	char *b;

	if (!f)
		return cb_fail(CB_ERR_USAGE, "%s: cannot read: %s", path,
		               strerror(errno));
	if (!(b = malloc(cap))) {
		fclose(f);
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	}
	for (;;) {
		if (n + 1 >= cap) {
			char *nb =
			        cap < (1ul << 31) ? realloc(b, cap * 2) : NULL;
			if (!nb) {
				free(b);
				fclose(f);
				return cb_fail(CB_ERR_USAGE,
				               "%s: too large to read", path);
			}
			b = nb;
			cap *= 2;
		}
		size_t got = fread(b + n, 1, cap - n - 1, f);
		n += got;
		if (got == 0)
			break;
	}
	int err = ferror(f);
	fclose(f);
	if (err) {
		free(b);
		return cb_fail(CB_ERR_USAGE, "%s: cannot read: %s", path,
		               strerror(EIO));
	}
	b[n] = 0;
	*buf = b;
	*len = n;
	return CB_OK;
}

static cb_status_t parse(const char *path, const char *buf, size_t len,
                         json_object **out)
{
	json_tokener *tok = json_tokener_new();
	json_object *o;
	size_t end, line = 1;

	if (!tok)
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	if (len > INT32_MAX) {
		json_tokener_free(tok);
		return cb_fail(CB_ERR_USAGE, "%s: too large to read", path);
	}
	o = json_tokener_parse_ex(tok, buf, (int)len);
	enum json_tokener_error err = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (!o || err != json_tokener_success) {
		json_object_put(o);
		for (size_t i = 0; i < end && i < len; i++)
			line += buf[i] == '\n';
		if (err == json_tokener_continue)
			return cb_fail(CB_ERR_USAGE,
			               "%s: not a complete JSON document (cut "
			               "short?)",
			               path);
		return cb_fail(CB_ERR_USAGE, "%s: line %zu: not JSON: %s", path,
		               line, json_tokener_error_desc(err));
	}
	while (end < len && buf[end] && strchr(" \t\r\n", buf[end]))
		end++;
	if (end < len) {
		json_object_put(o);
		return cb_fail(CB_ERR_USAGE, "%s: text after the JSON document",
		               path);
	}
	*out = o;
	return CB_OK;
}

cb_status_t cb_results_load(const char *path, struct cb_results **out)
{
	char *buf = NULL;
	size_t len = 0;
	cb_status_t st;

	if ((st = read_file(path, &buf, &len)))
		return st;
	st = cb_results_parse(path, buf, len, out);
	free(buf);
	return st;
}

cb_status_t cb_results_parse(const char *path, const char *buf, size_t len,
                             struct cb_results **out)
{
	struct cb_results *r = NULL;
	json_object *doc = NULL, *v, *rows;
	cb_status_t st;
	size_t blank = 0;

	while (blank < len && buf[blank] && strchr(" \t\r\n", buf[blank]))
		blank++;
	if (blank == len)
		return cb_fail(CB_ERR_USAGE,
		               "%s: empty (a run killed before its end writes "
		               "nothing)",
		               path);
	if ((st = parse(path, buf, len, &doc)))
		return st;
	if (!json_object_is_type(doc, json_type_object) ||
	    !json_object_object_get_ex(doc, "schema", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    strcmp(json_object_get_string(v), CB_RESULTS_SCHEMA)) {
		st = cb_fail(
		        CB_ERR_USAGE,
		        "%s: not collbench results (no \"schema\": \"%s\")",
		        path, CB_RESULTS_SCHEMA);
		goto fail;
	}
	if (!json_object_object_get_ex(doc, "schema_version", &v) ||
	    !json_object_is_type(v, json_type_int) ||
	    json_object_get_int(v) < 1) {
		st = cb_fail(CB_ERR_USAGE, "%s: no valid \"schema_version\"",
		             path);
		goto fail;
	}
	if (json_object_get_int(v) > CB_RESULTS_SCHEMA_VERSION) {
		st = cb_fail(CB_ERR_USAGE,
		             "%s: schema version %d is newer than this "
		             "collbench reads (%d)",
		             path, json_object_get_int(v),
		             CB_RESULTS_SCHEMA_VERSION);
		goto fail;
	}
	if (!json_object_object_get_ex(doc, "rows", &rows) ||
	    !json_object_is_type(rows, json_type_array)) {
		st = cb_fail(CB_ERR_USAGE, "%s: no \"rows\" array", path);
		goto fail;
	}
	if (!(r = calloc(1, sizeof(*r))) || !(r->path = strdup(path))) {
		st = cb_fail(CB_ERR_NOMEM, "out of memory");
		goto fail;
	}
	struct rd rd = { .path = path };
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		struct cb_row w;
		rd.row = i;
		if ((st = read_row(&rd, json_object_array_get_idx(rows, i),
		                   &w)) ||
		    (st = cb_results_add(r, &w)))
			goto fail;
	}
	json_object_object_del(doc, "rows");
	r->run = doc;
	*out = r;
	return CB_OK;
fail:
	cb_results_free(r); /* r->run is still NULL: doc is put below */
	json_object_put(doc);
	return st;
}
