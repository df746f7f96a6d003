/* SPDX-License-Identifier: MIT */
/* select/tune.c - `collbench tune`'s collection of times (select/tune.h). */
#include "select/tune.h"

#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/mem.h"

#define MAX_ROUNDS 1000

struct sample {
	struct cb_row key; /* coll, transport, ranks, hosts, algo, bytes */
	double *t;
	int n;
};

struct cb_tuner {
	struct sample *v;
	int n, cap;
};

cb_status_t cb_tuner_new(struct cb_tuner **out)
{
	if (!(*out = calloc(1, sizeof(**out))))
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	return CB_OK;
}

void cb_tuner_free(struct cb_tuner *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->n; i++)
		free(t->v[i].t);
	cb_free_all(t->v, t);
}

static int same_shape(const struct sample *s, const struct cb_row *r)
{
	return !strcmp(s->key.coll, r->coll) &&
	       !strcmp(s->key.transport, r->transport) &&
	       s->key.ranks == r->ranks && s->key.hosts == r->hosts;
}

void cb_tuner_record(struct cb_tuner *t, const struct cb_row *row)
{
	struct sample *s = NULL;

	if (!(row->time_us > 0))
		return;
	for (int i = 0; i < t->n && !s; i++)
		if (same_shape(&t->v[i], row) &&
		    !strcmp(t->v[i].key.algo, row->algo) &&
		    t->v[i].key.bytes == row->bytes &&
		    t->v[i].key.inplace == row->inplace)
			s = &t->v[i];
	if (!s) {
		if (t->n == t->cap) {
			int cap = t->cap ? 2 * t->cap : 64;
			void *p = realloc(t->v, (size_t)cap * sizeof(*t->v));
			if (!p)
				return; /* a lost sample: the median of fewer */
			t->v = p;
			t->cap = cap;
		}
		s = &t->v[t->n];
		*s = (struct sample){ .key = *row };
		if (!(s->t = calloc(MAX_ROUNDS, sizeof(double))))
			return;
		t->n++;
	}
	if (s->n < MAX_ROUNDS)
		s->t[s->n++] = row->time_us;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One line of the summary: the fastest of @t (0: not measured), then the
 * others; the size first, or @label. */
static void print_point(FILE *f, const struct cb_tuning_point *p,
                        const double *t, const char *label)
{
	int best = -1;

	for (int a = 0; a < p->nalgos; a++)
		if (t[a] > 0 && (best < 0 || t[a] < t[best]))
			best = a;
	if (best < 0)
		return;
	if (label[0])
		fprintf(f, "  %10s", label);
	else
		fprintf(f, "  %10zu", p->bytes);
	fprintf(f, "  %-13s %10.2f  (", p->algo[best], t[best]);
	for (int a = 0, first = 1; a < p->nalgos; a++)
		if (a != best && t[a] > 0) {
			fprintf(f, "%s%s %.2f", first ? "" : ", ", p->algo[a],
			        t[a]);
			first = 0;
		}
	fprintf(f, ")\n");
}

cb_status_t cb_tuner_finish(struct cb_tuner *t, struct cb_tuning *tab,
                            const char *path, FILE *f)
{
	cb_status_t st = CB_OK;
	char *done = calloc((size_t)t->n + 1, 1);
	struct cb_tuning_point *pts = calloc((size_t)t->n + 1, sizeof(*pts));

	if (!done || !pts) {
		st = cb_fail(CB_ERR_NOMEM, "out of memory");
		goto out;
	}
	for (int i = 0; i < t->n && !st; i++) {
		const struct sample *s0 = &t->v[i];
		int np = 0;
		if (done[i])
			continue;
		/* every sample of this shape, by size */
		for (int j = i; j < t->n; j++) {
			struct sample *s = &t->v[j];
			struct cb_tuning_point *p = NULL;
			if (done[j] || !same_shape(s, &s0->key))
				continue;
			done[j] = 1;
			for (int k = 0; k < np && !p; k++)
				if (pts[k].bytes == s->key.bytes)
					p = &pts[k];
			if (!p) {
				p = &pts[np++];
				memset(p, 0, sizeof(*p));
				p->bytes = s->key.bytes;
			}
			int a = 0;
			while (a < p->nalgos && strcmp(p->algo[a], s->key.algo))
				a++;
			if (a == CB_TUNING_ALGOS)
				continue;
			if (a == p->nalgos)
				snprintf(p->algo[p->nalgos++],
				         sizeof(p->algo[0]), "%s", s->key.algo);
			if (s->key.inplace)
				p->inplace_us[a] = median(s->t, s->n);
			else
				p->time_us[a] = median(s->t, s->n);
		}
		/* sizes in order, for people reading the file */
		for (int a = 1; a < np; a++)
			for (int b = a;
			     b > 0 && pts[b].bytes < pts[b - 1].bytes; b--) {
				struct cb_tuning_point x = pts[b];
				pts[b] = pts[b - 1];
				pts[b - 1] = x;
			}
		struct cb_tuning_shape sh = {
			.coll = s0->key.coll,
			.transport = s0->key.transport,
			.ranks = s0->key.ranks,
			.hosts = s0->key.hosts,
		};
		st = cb_tuning_put(tab, &sh, pts, np);
		fprintf(f,
		        "# tuned %s on %d rank%s, %d host%s, %s: median of %d "
		        "round%s (us)\n",
		        sh.coll, sh.ranks, sh.ranks == 1 ? "" : "s", sh.hosts,
		        sh.hosts == 1 ? "" : "s", sh.transport, s0->n,
		        s0->n == 1 ? "" : "s");
		for (int k = 0; k < np; k++) {
			print_point(f, &pts[k], pts[k].time_us, "");
			print_point(f, &pts[k], pts[k].inplace_us, "in place");
		}
	}
	if (!st && (st = cb_tuning_write(tab, path)) == CB_OK)
		fprintf(f, "# wrote %s (%d job shape%s)\n", path,
		        cb_tuning_shapes(tab),
		        cb_tuning_shapes(tab) == 1 ? "" : "s");
	fflush(f);
out:
	free(done);
	free(pts);
	return st;
}
