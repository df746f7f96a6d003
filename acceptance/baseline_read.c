/* SPDX-License-Identifier: MIT */
/*
 * acceptance/baseline_read.c - --baseline FILE read: an earlier acceptance
 * run's JSON (as -O x.json writes it) into struct cb_acc_base (its nodes'
 * and hosts' names, each pair's slower direction, its collectives, sizes and
 * noise).  A file that is not one: one line, CB_ERR_USAGE.  What is judged
 * against it is baseline.c.
 */
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acceptance/accept.h"
#include "core/mem.h"

#define BASE_MAX_BYTES (256u << 20)

void cb_acc_base_free(struct cb_acc_base *b)
{
	if (!b)
		return;
	cb_free_all(b->names, b->hosts, b->pairs, b);
}

static json_object *member(json_object *o, const char *k, json_type t)
{
	json_object *v = NULL;

	if (!o || !json_object_object_get_ex(o, k, &v) ||
	    !json_object_is_type(v, t))
		return NULL;
	return v;
}

static double dbl(json_object *o, const char *k)
{
	json_object *v = NULL;

	if (!o || !json_object_object_get_ex(o, k, &v) ||
	    !(json_object_is_type(v, json_type_double) ||
	      json_object_is_type(v, json_type_int)))
		return 0;
	double d = json_object_get_double(v);
	return isfinite(d) && d > 0 ? d : 0;
}

/* Names of @arr's objects' "name" into @out (@w bytes each). */
static int names(json_object *arr, char *out, size_t w)
{
	size_t n = json_object_array_length(arr);

	for (size_t i = 0; i < n; i++) {
		json_object *v = member(json_object_array_get_idx(arr, i),
		                        "name", json_type_string);
		if (!v)
			return (int)i;
		snprintf(out + i * w, w, "%s", json_object_get_string(v));
	}
	return -1;
}

/* The acceptance member @acc into @b; one line on what is wrong. */
static cb_status_t base_from(json_object *acc, struct cb_acc_base *b)
{
	json_object *nodes = member(acc, "nodes", json_type_array),
	            *hosts = member(acc, "hosts", json_type_array),
	            *pairs = member(acc, "pairs", json_type_array),
	            *colls = member(acc, "collectives", json_type_array),
	            *set = member(acc, "settings", json_type_object), *v;
	int bad;

	if (!nodes || !hosts || !pairs)
		return cb_fail(CB_ERR_USAGE,
		               "--baseline %s: its \"acceptance\" member has "
		               "no nodes, hosts or pairs arrays",
		               b->path);
	b->nnames = (int)json_object_array_length(nodes);
	b->nhosts = (int)json_object_array_length(hosts);
	b->npairs = (int)json_object_array_length(pairs);
	b->names = calloc((size_t)b->nnames + 1, sizeof(*b->names));
	b->hosts = calloc((size_t)b->nhosts + 1, sizeof(*b->hosts));
	b->pairs = calloc((size_t)b->npairs + 1, sizeof(*b->pairs));
	if (!b->names || !b->hosts || !b->pairs)
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	if ((bad = names(nodes, &b->names[0][0], sizeof(b->names[0]))) >= 0 ||
	    (bad = names(hosts, &b->hosts[0][0], sizeof(b->hosts[0]))) >= 0)
		return cb_fail(CB_ERR_USAGE,
		               "--baseline %s: a node or host (%d) has no "
		               "name",
		               b->path, bad);
	for (int i = 0; i < b->npairs; i++) {
		json_object *p = json_object_array_get_idx(pairs, i), *x, *y;
		x = member(p, "a", json_type_int);
		y = member(p, "b", json_type_int);
		int ia = x ? json_object_get_int(x) : -1,
		    ib = y ? json_object_get_int(y) : -1;
		if (ia < 0 || ib < 0 || ia >= b->nnames || ib >= b->nnames)
			return cb_fail(CB_ERR_USAGE,
			               "--baseline %s: pair %d names no node "
			               "of its %d",
			               b->path, i, b->nnames);
		v = member(p, "ok", json_type_boolean);
		double ab = dbl(p, "bw_ab_gbps"), ba = dbl(p, "bw_ba_gbps");
		b->pairs[i] = (struct cb_acc_base_pair){
			.a = ia,
			.b = ib,
			.bw_gbps = v && json_object_get_boolean(v)
			                   ? (ab < ba ? ab : ba)
			                   : 0,
		};
	}
	for (size_t i = 0;
	     colls && i < json_object_array_length(colls) && b->ncolls < 4;
	     i++) {
		json_object *c = json_object_array_get_idx(colls, i);
		json_object *n = member(c, "collective", json_type_string),
		            *al = member(c, "algo", json_type_string);
		struct cb_acc_coll *k = &b->colls[b->ncolls];
		if (!n)
			continue;
		snprintf(k->coll, sizeof(k->coll), "%s",
		         json_object_get_string(n));
		snprintf(k->algo, sizeof(k->algo), "%s",
		         al ? json_object_get_string(al) : "");
		k->bytes = (uint64_t)dbl(c, "bytes");
		k->busbw_gbps = dbl(c, "busbw_gbps");
		b->ncolls++;
	}
	b->sigma_rep =
	        dbl(member(acc, "noise", json_type_object), "sigma_repeats");
	b->bw_bytes = (uint64_t)dbl(set, "bw_bytes");
	b->coll_bytes = (uint64_t)dbl(set, "coll_bytes");
	v = member(set, "rails", json_type_boolean);
	b->rails = v && json_object_get_boolean(v);
	return CB_OK;
}

cb_status_t cb_acc_base_load(const char *path, struct cb_acc_base **out)
{
	FILE *f = fopen(path, "rb");
	char *text = f ? malloc(BASE_MAX_BYTES + 1) : NULL;
	size_t len = text ? fread(text, 1, BASE_MAX_BYTES + 1, f) : 0;
	struct cb_acc_base *b = calloc(1, sizeof(*b));
	json_tokener *tok = json_tokener_new();
	json_object *doc = NULL, *acc;
	cb_status_t st = CB_OK;

	*out = NULL;
	if (!b || !tok) {
		st = cb_fail(CB_ERR_NOMEM, "out of memory");
		goto out;
	}
	snprintf(b->path, sizeof(b->path), "%s", path);
	if (!f || !text || ferror(f)) {
		st = cb_fail(CB_ERR_USAGE, "--baseline %s: cannot read it",
		             path);
		goto out;
	}
	if (len > BASE_MAX_BYTES) {
		st = cb_fail(CB_ERR_USAGE,
		             "--baseline %s: larger than %u MiB, not an "
		             "acceptance JSON",
		             path, BASE_MAX_BYTES >> 20);
		goto out;
	}
	doc = json_tokener_parse_ex(tok, text, (int)len);
	enum json_tokener_error je = json_tokener_get_error(tok);
	if (!doc || je != json_tokener_success ||
	    tok->char_offset < (int)len - (int)strspn(text + tok->char_offset,
	                                              " \t\r\n")) {
		st = cb_fail(
		        CB_ERR_USAGE,
		        "--baseline %s: not JSON (%s, at byte %d)", path,
		        doc && je == json_tokener_success
		                ? "more after the document"
		                : json_tokener_error_desc(
		                          je == json_tokener_continue
		                                  ? json_tokener_error_parse_eof
		                                  : je),
		        tok->char_offset);
		goto out;
	}
	acc = member(doc, "acceptance", json_type_object);
	if (!acc) {
		st = cb_fail(CB_ERR_USAGE,
		             "--baseline %s: not an acceptance run's JSON (no "
		             "\"acceptance\" member; write one with collbench "
		             "acceptance -O FILE.json)",
		             path);
		goto out;
	}
	if (!(st = base_from(acc, b))) {
		*out = b;
		b = NULL;
	}
out:
	if (doc)
		json_object_put(doc);
	if (tok)
		json_tokener_free(tok);
	cb_acc_base_free(b);
	free(text);
	if (f)
		fclose(f);
	return st;
}
