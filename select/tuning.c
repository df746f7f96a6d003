/* SPDX-License-Identifier: MIT */
/*
 * select/tuning.c - the tuning table (select/tuning.h) as a small JSON file,
 * read and written with json-c:
 *
 *   { "schema": "collbench-tuning", "schema_version": 1,
 *     "collbench": "0.1.0",
 *     "shapes": [ { "collective": "allreduce", "transport": "shm",
 *                   "ranks": 2, "hosts": 1,
 *                   "points": [ { "bytes": 8, "best": "rd",
 *                                 "time_us": { "rd": 0.41, "ring": 0.9 },
 *                                 "best_inplace": "rd",
 *                                 "inplace_us": { "rd": 0.6, "ring": 1.1 } },
 *                               ... ] } ] }
 *
 * "best" and "best_inplace" are for people reading the file; auto takes
 * the fastest of "time_us" among the algorithms it may run, and for a call
 * in place (send buffer = receive buffer) the fastest of "inplace_us"
 * (optional: without it, of "time_us").
 */
#include "select/tuning.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cb_config.h"
#include "core/log.h"
#include "core/mem.h"

struct shape {
	char coll[24], transport[32];
	int ranks, hosts;
	struct cb_tuning_point *pts;
	int npts;
};

struct cb_tuning {
	struct shape *shapes;
	int n;
};

const char *cb_tuning_path(const char *given, int *explicit_)
{
	static char buf[4096];
	const char *e = getenv("COLLBENCH_TUNING"), *x, *h;

	*explicit_ = 1;
	if (given && !strcmp(given, "none"))
		return NULL; /* the model, whatever files there are */
	if (given)
		return given;
	if (e && *e)
		return e;
	*explicit_ = 0;
	if ((x = getenv("XDG_CONFIG_HOME")) && *x)
		snprintf(buf, sizeof(buf), "%s/collbench/tuning.json", x);
	else if ((h = getenv("HOME")) && *h)
		snprintf(buf, sizeof(buf), "%s/.config/collbench/tuning.json",
		         h);
	else
		return NULL;
	return buf;
}

cb_status_t cb_tuning_new(struct cb_tuning **out)
{
	if (!(*out = calloc(1, sizeof(**out))))
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	return CB_OK;
}

void cb_tuning_free(struct cb_tuning *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->n; i++)
		free(t->shapes[i].pts);
	cb_free_all(t->shapes, t);
}

int cb_tuning_shapes(const struct cb_tuning *t)
{
	return t ? t->n : 0;
}

static int same(const struct shape *x, const struct cb_tuning_shape *s)
{
	return !strcmp(x->coll, s->coll) &&
	       !strcmp(x->transport, s->transport) && x->ranks == s->ranks &&
	       x->hosts == s->hosts;
}

const struct cb_tuning_point *cb_tuning_find(const struct cb_tuning *t,
                                             const struct cb_tuning_shape *s,
                                             size_t bytes)
{
	for (int i = 0; t && i < t->n; i++) {
		const struct shape *x = &t->shapes[i];
		const struct cb_tuning_point *best = NULL;
		double bd = 0, lb = log2((double)bytes + 1);
		if (!same(x, s))
			continue;
		for (int k = 0; k < x->npts; k++) {
			double d = fabs(log2((double)x->pts[k].bytes + 1) - lb);
			if (!best || d < bd) {
				best = &x->pts[k];
				bd = d;
			}
		}
		return best;
	}
	return NULL;
}

cb_status_t cb_tuning_put(struct cb_tuning *t, const struct cb_tuning_shape *s,
                          const struct cb_tuning_point *pts, int n)
{
	struct shape *x = NULL;

	for (int i = 0; i < t->n && !x; i++)
		if (same(&t->shapes[i], s))
			x = &t->shapes[i];
	if (!x) {
		void *p = realloc(t->shapes, (size_t)(t->n + 1) * sizeof(*x));
		if (!p)
			return cb_fail(CB_ERR_NOMEM, "out of memory");
		t->shapes = p;
		x = &t->shapes[t->n++];
		*x = (struct shape){ .ranks = s->ranks, .hosts = s->hosts };
		snprintf(x->coll, sizeof(x->coll), "%s", s->coll);
		snprintf(x->transport, sizeof(x->transport), "%s",
		         s->transport);
	}
	free(x->pts);
	x->pts = NULL;
	x->npts = 0;
	if (n && !(x->pts = malloc((size_t)n * sizeof(*pts))))
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	memcpy(x->pts, pts, (size_t)n * sizeof(*pts));
	x->npts = n;
	return CB_OK;
}

/* ---- reading ---- */

static cb_status_t bad(const char *path, const char *what)
{
	return cb_fail(CB_ERR_USAGE, "%s: not a collbench tuning table: %s",
	               path, what);
}

static int get(json_object *o, const char *key, json_type t, json_object **v)
{
	return json_object_object_get_ex(o, key, v) &&
	       json_object_is_type(*v, t);
}

static cb_status_t read_shape(const char *path, json_object *o, struct shape *x)
{
	json_object *v, *pts;

	memset(x, 0, sizeof(*x));
	if (!get(o, "collective", json_type_string, &v))
		return bad(path, "a shape without \"collective\"");
	snprintf(x->coll, sizeof(x->coll), "%s", json_object_get_string(v));
	if (!get(o, "transport", json_type_string, &v))
		return bad(path, "a shape without \"transport\"");
	snprintf(x->transport, sizeof(x->transport), "%s",
	         json_object_get_string(v));
	if (!get(o, "ranks", json_type_int, &v) ||
	    (x->ranks = json_object_get_int(v)) < 1)
		return bad(path, "a shape without \"ranks\" (1 or more)");
	if (!get(o, "hosts", json_type_int, &v) ||
	    (x->hosts = json_object_get_int(v)) < 1)
		return bad(path, "a shape without \"hosts\" (1 or more)");
	if (!get(o, "points", json_type_array, &pts))
		return bad(path, "a shape without \"points\"");
	int n = (int)json_object_array_length(pts);
	if (n && !(x->pts = calloc((size_t)n, sizeof(*x->pts))))
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	for (int i = 0; i < n; i++) {
		json_object *p = json_object_array_get_idx(pts, i), *tm;
		struct cb_tuning_point *q = &x->pts[x->npts];
		if (!get(p, "bytes", json_type_int, &v) ||
		    json_object_get_int64(v) < 0 ||
		    !get(p, "time_us", json_type_object, &tm))
			return bad(path, "a point without \"bytes\" or "
			                 "\"time_us\"");
		q->bytes = (size_t)json_object_get_int64(v);
		json_object_object_foreach(tm, name, t)
		{
			if (q->nalgos == CB_TUNING_ALGOS ||
			    !(json_object_is_type(t, json_type_double) ||
			      json_object_is_type(t, json_type_int)) ||
			    !(json_object_get_double(t) > 0))
				return bad(path, "a time that is not a "
				                 "positive number");
			snprintf(q->algo[q->nalgos], sizeof(q->algo[0]), "%s",
			         name);
			q->time_us[q->nalgos++] = json_object_get_double(t);
		}
		/* optional (tables from before it have none) */
		if (json_object_object_get_ex(p, "inplace_us", &tm)) {
			if (!json_object_is_type(tm, json_type_object))
				return bad(path, "\"inplace_us\" is not an "
				                 "object");
			json_object_object_foreach(tm, iname, it)
			{
				int k = 0;
				while (k < q->nalgos &&
				       strcmp(q->algo[k], iname))
					k++;
				if (k == q->nalgos)
					return bad(path,
					           "an in-place time of an "
					           "algorithm without "
					           "\"time_us\"");
				if (!(json_object_is_type(it,
				                          json_type_double) ||
				      json_object_is_type(it, json_type_int)) ||
				    !(json_object_get_double(it) > 0))
					return bad(path, "a time that is not a "
					                 "positive number");
				q->inplace_us[k] = json_object_get_double(it);
			}
		}
		x->npts++;
	}
	return CB_OK;
}

cb_status_t cb_tuning_load(const char *path, struct cb_tuning **out)
{
	json_object *doc = json_object_from_file(path), *v, *shapes;
	struct cb_tuning *t = NULL;
	cb_status_t st;

	if (!doc) {
		if (access(path, R_OK))
			return cb_fail(CB_ERR_USAGE, "--tuning %s: %s", path,
			               strerror(errno));
		return bad(path, "not JSON");
	}
	if (!get(doc, "schema", json_type_string, &v) ||
	    strcmp(json_object_get_string(v), CB_TUNING_SCHEMA)) {
		st = bad(path, "no \"schema\": \"" CB_TUNING_SCHEMA "\"");
		goto out;
	}
	if (!get(doc, "schema_version", json_type_int, &v) ||
	    json_object_get_int(v) != CB_TUNING_VERSION) {
		st = bad(path, "a schema_version this collbench does not read");
		goto out;
	}
	if (!get(doc, "shapes", json_type_array, &shapes)) {
		st = bad(path, "no \"shapes\" array");
		goto out;
	}
	if ((st = cb_tuning_new(&t)))
		goto out;
	int n = (int)json_object_array_length(shapes);
	if (n && !(t->shapes = calloc((size_t)n, sizeof(*t->shapes)))) {
		st = cb_fail(CB_ERR_NOMEM, "out of memory");
		goto out;
	}
	for (int i = 0; i < n; i++) {
		st = read_shape(path, json_object_array_get_idx(shapes, i),
		                &t->shapes[i]);
		t->n++;
		if (st)
			goto out;
	}
	*out = t;
	t = NULL;
out:
	cb_tuning_free(t);
	json_object_put(doc);
	return st;
}

/* ---- writing ---- */

static json_object *num(double v)
{
	char s[32];

	snprintf(s, sizeof(s), "%.3f", v);
	return json_object_new_double_s(v, s);
}

static cb_status_t make_dirs(const char *path)
{
	char d[4096];

	snprintf(d, sizeof(d), "%s", path);
	for (char *p = d + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(d, 0755) && errno != EEXIST)
			return cb_fail(CB_ERR_SYS, "cannot make %s: %s", d,
			               strerror(errno));
		*p = '/';
	}
	return CB_OK;
}

cb_status_t cb_tuning_write(const struct cb_tuning *t, const char *path)
{
	json_object *doc = json_object_new_object(), *shapes;
	char tmp[4200];
	cb_status_t st;

	json_object_object_add(doc, "schema",
	                       json_object_new_string(CB_TUNING_SCHEMA));
	json_object_object_add(doc, "schema_version",
	                       json_object_new_int(CB_TUNING_VERSION));
	json_object_object_add(doc, "collbench",
	                       json_object_new_string(CB_VERSION));
	shapes = json_object_new_array();
	for (int i = 0; i < t->n; i++) {
		const struct shape *x = &t->shapes[i];
		json_object *o = json_object_new_object(), *pts;
		json_object_object_add(o, "collective",
		                       json_object_new_string(x->coll));
		json_object_object_add(o, "transport",
		                       json_object_new_string(x->transport));
		json_object_object_add(o, "ranks",
		                       json_object_new_int(x->ranks));
		json_object_object_add(o, "hosts",
		                       json_object_new_int(x->hosts));
		pts = json_object_new_array();
		for (int k = 0; k < x->npts; k++) {
			const struct cb_tuning_point *q = &x->pts[k];
			json_object *p = json_object_new_object();
			json_object *tm = json_object_new_object();
			json_object *ip = json_object_new_object();
			int best = -1, ibest = -1;
			for (int a = 0; a < q->nalgos; a++) {
				json_object_object_add(tm, q->algo[a],
				                       num(q->time_us[a]));
				if (best < 0 ||
				    q->time_us[a] < q->time_us[best])
					best = a;
				if (!(q->inplace_us[a] > 0))
					continue;
				json_object_object_add(ip, q->algo[a],
				                       num(q->inplace_us[a]));
				if (ibest < 0 ||
				    q->inplace_us[a] < q->inplace_us[ibest])
					ibest = a;
			}
			json_object_object_add(
			        p, "bytes",
			        json_object_new_int64((int64_t)q->bytes));
			json_object_object_add(
			        p, "best",
			        best < 0 ? NULL
			                 : json_object_new_string(
			                           q->algo[best]));
			json_object_object_add(p, "time_us", tm);
			if (ibest >= 0) {
				json_object_object_add(
				        p, "best_inplace",
				        json_object_new_string(q->algo[ibest]));
				json_object_object_add(p, "inplace_us", ip);
			} else {
				json_object_put(ip);
			}
			json_object_array_add(pts, p);
		}
		json_object_object_add(o, "points", pts);
		json_object_array_add(shapes, o);
	}
	json_object_object_add(doc, "shapes", shapes);
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
	if ((st = make_dirs(path)))
		goto out;
	if (json_object_to_file_ext(tmp, doc,
	                            JSON_C_TO_STRING_PRETTY |
	                                    JSON_C_TO_STRING_SPACED) ||
	    rename(tmp, path)) {
		st = cb_fail(CB_ERR_SYS, "cannot write %s: %s", path,
		             strerror(errno));
		unlink(tmp);
	}
out:
	json_object_put(doc);
	return st;
}
