/* SPDX-License-Identifier: MIT */
/*
 * acceptance/switches.c - --switches FILE: which leaf switch each host
 * hangs off, so the judge can name a leaf's slow uplink instead of every
 * host behind it (acceptance/plan_leaves.c).  Two forms, a line each, '#'
 * starting a comment:
 *   node07 leaf3                          a host and its leaf switch
 *   SwitchName=leaf3 Nodes=node[05-08,12] Slurm's topology.conf: a switch
 *                                         with Nodes= is a leaf; one with
 *                                         Switches= only is above them
 * Slurm's host lists are expanded as Slurm does (prefix[01-16,20]suffix,
 * several brackets, the width of the range's first number kept), a line
 * ending in '\' goes on on the next.  A host under two leaves, a bad range
 * or key: one line naming the file and line (CB_ERR_USAGE).  Hosts of the
 * file that the job does not have are fine (a file for the whole
 * cluster); a host of the job the file does not name is refused where the
 * two meet (cb_acc_switches_apply).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "acceptance/accept.h"
#include "core/log.h"
#include "core/mem.h"

#define SW_FILE_MAX  ((size_t)64 << 20)
#define SW_HOSTS_MAX (1 << 20) /* names a file may expand to */
#define SW_NAME      64        /* a host's name, as cb_acc_host's */
#define SW_LEAF      32        /* a switch's name, as cb_acc_host's sw */

struct cb_acc_switches {
	char file[256]; /* its name, for messages */
	int n, cap;
	struct sw_host {
		char name[SW_NAME];
		int leaf;
	} * h;
	int nleaf, capleaf;
	char (*leaf)[SW_LEAF];
};

void cb_acc_switches_free(struct cb_acc_switches *s)
{
	if (s)
		cb_free_all(s->h, s->leaf, s);
}

struct parse {
	struct cb_acc_switches *s;
	const char *file;
	int line;
};

static cb_status_t bad(const struct parse *p, const char *what, const char *s,
                       size_t len)
{
	return cb_fail(CB_ERR_USAGE, "--switches %s: line %d: %s '%.*s'",
	               p->file, p->line, what, (int)(len > 60 ? 60 : len), s);
}

static int leaf_of(struct parse *p, const char *name, size_t len)
{
	struct cb_acc_switches *s = p->s;

	for (int i = 0; i < s->nleaf; i++)
		if (strlen(s->leaf[i]) == len && !memcmp(s->leaf[i], name, len))
			return i;
	if (s->nleaf == s->capleaf) {
		int cap = s->capleaf ? 2 * s->capleaf : 16;
		void *v = realloc(s->leaf, (size_t)cap * sizeof(*s->leaf));
		if (!v)
			return -1;
		s->leaf = v;
		s->capleaf = cap;
	}
	snprintf(s->leaf[s->nleaf], SW_LEAF, "%.*s", (int)len, name);
	return s->nleaf++;
}

static cb_status_t add_host(struct parse *p, const char *name, size_t len,
                            int leaf)
{
	struct cb_acc_switches *s = p->s;

	if (!len || len >= SW_NAME)
		return bad(p,
		           len ? "a host name over 63 characters"
		               : "an empty host name in",
		           name, len);
	if (memchr(name, '=', len) || memchr(name, '\\', len))
		return bad(p, "a host name with '=' or '\\' in", name, len);
	if (s->n >= SW_HOSTS_MAX)
		return bad(p, "more than 1048576 hosts in all at", name, len);
	if (s->n == s->cap) {
		int cap = s->cap ? 2 * s->cap : 64;
		void *v = realloc(s->h, (size_t)cap * sizeof(*s->h));
		if (!v)
			return cb_fail(CB_ERR_NOMEM, "out of memory");
		s->h = v;
		s->cap = cap;
	}
	snprintf(s->h[s->n].name, SW_NAME, "%.*s", (int)len, name);
	s->h[s->n++].leaf = leaf;
	return CB_OK;
}

/* One term of a Slurm host list (no top-level comma): @t[0..@len) with
 * its brackets expanded into @out (@at bytes of it already the prefix). */
static cb_status_t expand(struct parse *p, const char *t, size_t len, char *out,
                          size_t at, int leaf)
{
	const char *lb = memchr(t, '[', len);

	if (!lb) {
		if (memchr(t, ']', len))
			return bad(p, "a ']' with no '[' in", t, len);
		if (at + len >= SW_NAME)
			return bad(p, "a host name over 63 characters", t, len);
		memcpy(out + at, t, len);
		return add_host(p, out, at + len, leaf);
	}
	size_t pre = (size_t)(lb - t);
	const char *rb = memchr(lb, ']', len - pre);
	if (!rb || memchr(t, ']', pre))
		return bad(p, "unbalanced brackets in", t, len);
	if (at + pre >= SW_NAME)
		return bad(p, "a host name over 63 characters", t, len);
	memcpy(out + at, t, pre);
	at += pre;
	const char *r = lb + 1, *end = rb, *rest = rb + 1;
	size_t nrest = len - (size_t)(rest - t);
	while (r < end) {
		const char *comma = memchr(r, ',', (size_t)(end - r));
		const char *e = comma ? comma : end,
		           *dash = memchr(r, '-', (size_t)(e - r));
		const char *he = dash ? dash : e;
		size_t w = (size_t)(he - r);
		unsigned long lo = 0, hi = 0;
		int ok = w > 0 && w <= 9 &&
		         (!dash || (e - dash - 1 > 0 && e - dash - 1 <= 9));
		for (const char *c = r; ok && c < he; c++)
			ok = isdigit((unsigned char)*c),
			lo = lo * 10 + (unsigned long)(*c - '0');
		hi = lo;
		if (dash) {
			hi = 0;
			for (const char *c = dash + 1; ok && c < e; c++)
				ok = isdigit((unsigned char)*c),
				hi = hi * 10 + (unsigned long)(*c - '0');
		}
		if (!ok || hi < lo)
			return bad(p,
			           "a range that is not N or N-M (N <= M) in",
			           t, len);
		if (hi - lo >= SW_HOSTS_MAX)
			return bad(p, "more than 1048576 hosts in", t, len);
		for (unsigned long v = lo; v <= hi; v++) {
			int k = snprintf(out + at, SW_NAME - at, "%0*lu",
			                 (int)w, v);
			if (k < 0 || at + (size_t)k >= SW_NAME)
				return bad(p, "a host name over 63 characters",
				           t, len);
			cb_status_t st = expand(p, rest, nrest, out,
			                        at + (size_t)k, leaf);
			if (st)
				return st;
		}
		r = comma ? comma + 1 : end;
		if (comma && r == end)
			return bad(p, "a range list ending in ',' in", t, len);
	}
	if (lb + 1 == end)
		return bad(p, "an empty range in", t, len);
	return CB_OK;
}

/* A Slurm host list: terms split at commas outside brackets. */
static cb_status_t hostlist(struct parse *p, const char *v, size_t len,
                            int leaf)
{
	char out[SW_NAME];
	size_t i = 0, start = 0;
	int depth = 0;

	if (!len)
		return bad(p, "an empty host list in", "Nodes=", 6);
	for (; i <= len; i++) {
		if (i < len && v[i] == '[')
			depth++;
		else if (i < len && v[i] == ']')
			depth--;
		if (depth < 0 || depth > 1)
			return bad(p, "unbalanced brackets in", v, len);
		if (i < len && (v[i] != ',' || depth))
			continue;
		if (i == start)
			return bad(p, "an empty host name in", v, len);
		cb_status_t st = expand(p, v + start, i - start, out, 0, leaf);
		if (st)
			return st;
		start = i + 1;
	}
	return depth ? bad(p, "unbalanced brackets in", v, len) : CB_OK;
}

/* Words of @l (@len bytes, no newline) into @w (@max at most). */
static int words(const char *l, size_t len, const char **w, size_t *wl, int max)
{
	int n = 0;

	for (size_t i = 0; i < len;) {
		while (i < len && isspace((unsigned char)l[i]))
			i++;
		if (i == len)
			break;
		size_t s = i;
		while (i < len && !isspace((unsigned char)l[i]))
			i++;
		if (n < max) {
			w[n] = l + s;
			wl[n] = i - s;
		}
		n++;
	}
	return n;
}

static cb_status_t slurm_line(struct parse *p, const char **w, const size_t *wl,
                              int n)
{
	const char *name = NULL, *nodes = NULL;
	size_t nname = 0, nnodes = 0;

	for (int i = 0; i < n; i++) {
		const char *eq = memchr(w[i], '=', wl[i]);
		if (!eq)
			return bad(p, "a word that is not KEY=VALUE", w[i],
			           wl[i]);
		size_t k = (size_t)(eq - w[i]), vl = wl[i] - k - 1;
		if (k == 10 && !strncasecmp(w[i], "SwitchName", k))
			name = eq + 1, nname = vl;
		else if (k == 5 && !strncasecmp(w[i], "Nodes", k))
			nodes = eq + 1, nnodes = vl;
		else if (!((k == 8 && !strncasecmp(w[i], "Switches", k)) ||
		           (k == 9 && !strncasecmp(w[i], "LinkSpeed", k))))
			return bad(p,
			           "a key that is not SwitchName, Nodes, "
			           "Switches or LinkSpeed",
			           w[i], wl[i]);
	}
	if (name && memchr(name, '\\', nname))
		return bad(p, "a switch name with '\\' in", name, nname);
	if (!name || !nname || nname >= SW_LEAF)
		return bad(p,
		           "no SwitchName (of 1-31 characters) on the line of",
		           w[0], wl[0]);
	if (!nodes)
		return CB_OK; /* a switch above the leaves */
	int leaf = leaf_of(p, name, nname);
	return leaf < 0 ? cb_fail(CB_ERR_NOMEM, "out of memory")
	                : hostlist(p, nodes, nnodes, leaf);
}

static cb_status_t one_line(struct parse *p, const char *l, size_t len)
{
	const char *w[64];
	size_t wl[64];
	const char *hash = memchr(l, '#', len);
	int n = words(l, hash ? (size_t)(hash - l) : len, w, wl, 64);

	if (n == 0)
		return CB_OK;
	if (n > 64)
		return bad(p, "more than 64 words on the line of", w[0], wl[0]);
	if (memchr(w[0], '=', wl[0]))
		return slurm_line(p, w, wl, n);
	if (n != 2)
		return bad(p,
		           "not 'HOST LEAF' nor Slurm's 'SwitchName=S "
		           "Nodes=HOSTS':",
		           w[0], (size_t)(l + len - w[0]));
	if (wl[1] >= SW_LEAF)
		return bad(p, "a switch name over 31 characters", w[1], wl[1]);
	if (memchr(w[1], '\\', wl[1]))
		return bad(p, "a switch name with '\\' in", w[1], wl[1]);
	int leaf = leaf_of(p, w[1], wl[1]);
	return leaf < 0 ? cb_fail(CB_ERR_NOMEM, "out of memory")
	                : add_host(p, w[0], wl[0], leaf);
}

static int by_name(const void *x, const void *y)
{
	const struct sw_host *a = x, *b = y;
	int c = strcmp(a->name, b->name);

	return c ? c : a->leaf - b->leaf;
}

cb_status_t cb_acc_switches_parse(const char *text, size_t len,
                                  const char *name,
                                  struct cb_acc_switches **out)
{
	struct parse p = { .file = name };
	char *joined = malloc(len + 1);
	cb_status_t st = CB_OK;
	size_t jl = 0;
	int first = 1, phys = 0;

	*out = NULL;
	p.s = calloc(1, sizeof(*p.s));
	if (!p.s || !joined) {
		free(joined);
		free(p.s);
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	}
	snprintf(p.s->file, sizeof(p.s->file), "%s", name);
	if (memchr(text, '\0', len))
		st = cb_fail(CB_ERR_USAGE,
		             "--switches %s: a NUL byte: not a text file",
		             name);
	for (size_t i = 0; !st && i < len;) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t e = nl ? (size_t)(nl - text) : len, l = e - i;
		phys++;
		if (first)
			p.line = phys,
			first = 0; /* where a joined one starts */
		if (l && text[i + l - 1] == '\r')
			l--;
		memcpy(joined + jl, text + i, l);
		jl += l;
		i = e + 1;
		if (jl && joined[jl - 1] == '\\' && i < len) {
			joined[jl - 1] = ' ';
			continue;
		}
		st = one_line(&p, joined, jl);
		jl = 0;
		first = 1;
	}
	free(joined);
	if (!st && p.s->n == 0)
		st = cb_fail(CB_ERR_USAGE, "--switches %s: names no host",
		             name);
	if (!st) {
		qsort(p.s->h, (size_t)p.s->n, sizeof(*p.s->h), by_name);
		for (int i = 1; !st && i < p.s->n; i++)
			if (!strcmp(p.s->h[i].name, p.s->h[i - 1].name) &&
			    p.s->h[i].leaf != p.s->h[i - 1].leaf)
				st = cb_fail(CB_ERR_USAGE,
				             "--switches %s: host %s is under "
				             "two switches, %s and %s",
				             name, p.s->h[i].name,
				             p.s->leaf[p.s->h[i - 1].leaf],
				             p.s->leaf[p.s->h[i].leaf]);
	}
	if (st)
		cb_acc_switches_free(p.s);
	else
		*out = p.s;
	return st;
}

cb_status_t cb_acc_switches_load(const char *path, struct cb_acc_switches **out)
{
	char *text;
	size_t len;
	cb_status_t st = cb_acc_read_file("--switches", path, SW_FILE_MAX,
	                                  "a switches file", &text, &len);

	*out = NULL;
	if (!st)
		st = cb_acc_switches_parse(text, len, path, out);
	free(text);
	return st;
}

const char *cb_acc_switches_leaf(const struct cb_acc_switches *s,
                                 const char *host, int *leaf)
{
	struct sw_host key;
	const struct sw_host *h;

	snprintf(key.name, sizeof(key.name), "%s", host);
	key.leaf = -1; /* before any entry of that name */
	/* the first entry of that name (duplicates share their leaf) */
	int lo = 0, hi = s->n;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (by_name(&s->h[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	h = lo < s->n && !strcmp(s->h[lo].name, host) ? &s->h[lo] : NULL;
	if (!h)
		return NULL;
	if (leaf)
		*leaf = h->leaf;
	return s->leaf[h->leaf];
}

int cb_acc_switches_count(const struct cb_acc_switches *s, int *nleaf)
{
	if (nleaf)
		*nleaf = s->nleaf;
	return s->n;
}

const char *cb_acc_switches_host(const struct cb_acc_switches *s, int i,
                                 int *leaf)
{
	if (i < 0 || i >= s->n)
		return NULL;
	*leaf = s->h[i].leaf;
	return s->h[i].name;
}

cb_status_t cb_acc_switches_apply(const struct cb_acc_switches *s,
                                  struct cb_acc *a)
{
	int *job = calloc((size_t)s->nleaf + 1, sizeof(int)); /* 1 + index */

	if (!job)
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	a->nleaves = 0;
	for (int h = 0; h < a->nhosts; h++) {
		int l;
		const char *sw = cb_acc_switches_leaf(s, a->hosts[h].name, &l);
		if (!sw) {
			free(job);
			a->nleaves = 0;
			return cb_fail(
			        CB_ERR_USAGE,
			        "--switches %s: host %s of this job is "
			        "not in it (its leaf switch is not known)",
			        s->file, a->hosts[h].name);
		}
		if (!job[l])
			job[l] = ++a->nleaves;
		a->hosts[h].leaf = job[l] - 1;
		snprintf(a->hosts[h].sw, sizeof(a->hosts[h].sw), "%s", sw);
	}
	free(job);
	return CB_OK;
}
