/* SPDX-License-Identifier: MIT */
/*
 * reports/plot.c - gnuplot plots of results: FILE.dat (the numbers, one
 * block per series) and FILE.gp (the script) beside FILE.png or FILE.svg,
 * then gnuplot run on them (fork and exec, no shell), so a user can
 * restyle the plot by editing FILE.gp and running `gnuplot FILE.gp` in
 * that folder.
 *
 * The size plot: the metric of every out-of-place row with a size above
 * 0, against the size on a log2 axis with labels 1K, 1M, 1G; one series
 * per run file x collective x algorithm x transport (x dtype, op and group
 * where these vary); a series title names only what varies between the
 * series, the plot title what they share.  Time goes on a log axis.  The
 * scaling plot (FILE-scaling.EXT), when the rows hold more than one group
 * size: busbw at each series' largest size against the rank count, or the
 * host count after a --nodes sweep.
 */
#include "reports/results.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/log.h"

#define NCOMP 8 /* run, coll, algo, transport, dtype, op, ranks, hosts */

struct pt {
	int run;
	const struct cb_row *r;
};

struct series {
	size_t first, n; /* a run of equal keys in the sorted points */
	char comp[NCOMP][64];
};

int cb_plot_metric_parse(const char *s)
{
	if (!strcmp(s, "busbw"))
		return CB_PLOT_BUSBW;
	if (!strcmp(s, "algbw"))
		return CB_PLOT_ALGBW;
	if (!strcmp(s, "time"))
		return CB_PLOT_TIME;
	return -1;
}

static double value(const struct cb_row *r, enum cb_plot_metric m)
{
	return m == CB_PLOT_BUSBW   ? r->busbw_gbps
	       : m == CB_PLOT_ALGBW ? r->algbw_gbps
	                            : r->time_us;
}

/* @scaling: the key leaves out the group (ranks, hosts). */
static int key_cmp(const struct pt *a, const struct pt *b, int scaling)
{
	const struct cb_row *x = a->r, *y = b->r;
	int c;

	if (a->run != b->run)
		return a->run < b->run ? -1 : 1;
	if ((c = strcmp(x->coll, y->coll)) || (c = strcmp(x->algo, y->algo)) ||
	    (c = strcmp(x->transport, y->transport)) ||
	    (c = strcmp(x->dtype, y->dtype)) || (c = strcmp(x->op, y->op)))
		return c;
	if (!scaling && x->ranks != y->ranks)
		return x->ranks < y->ranks ? -1 : 1;
	if (!scaling && x->hosts != y->hosts)
		return x->hosts < y->hosts ? -1 : 1;
	return 0;
}

static int by_key_size(const void *pa, const void *pb)
{
	const struct pt *a = pa, *b = pb;
	int c = key_cmp(a, b, 0);

	if (c)
		return c;
	return a->r->bytes < b->r->bytes ? -1 : a->r->bytes > b->r->bytes;
}

static int by_key_group(const void *pa, const void *pb)
{
	const struct pt *a = pa, *b = pb;
	int c = key_cmp(a, b, 1);

	if (c)
		return c;
	if (a->r->ranks != b->r->ranks)
		return a->r->ranks < b->r->ranks ? -1 : 1;
	return a->r->bytes < b->r->bytes ? -1 : a->r->bytes > b->r->bytes;
}

/* A gnuplot string literal: single quotes, '' for a quote, no control
 * characters, so nothing in a result file can end the string. */
static void gp_str(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("''", f);
		else if ((unsigned char)*s >= 0x20 && *s != 0x7f)
			fputc(*s, f);
	}
	fputc('\'', f);
}

static void human(unsigned long long b, char *buf, size_t n)
{
	static const char unit[] = "KMGTPE";
	int u = -1;

	while (b >= 1024 && b % 1024 == 0 && u < 5) {
		b /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, n, "%llu", b);
	else
		snprintf(buf, n, "%llu%c", b, unit[u]);
}

static void fill_comp(struct series *s, const struct pt *p,
                      struct cb_results *const *runs)
{
	const struct cb_row *r = p->r;

	cb_results_label(runs[p->run], s->comp[0], sizeof(s->comp[0]));
	snprintf(s->comp[1], sizeof(s->comp[1]), "%s", r->coll);
	snprintf(s->comp[2], sizeof(s->comp[2]), "%s", r->algo);
	snprintf(s->comp[3], sizeof(s->comp[3]), "%s", r->transport);
	snprintf(s->comp[4], sizeof(s->comp[4]), "%s", r->dtype);
	snprintf(s->comp[5], sizeof(s->comp[5]), "%s",
	         strcmp(r->op, "none") ? r->op : "");
	snprintf(s->comp[6], sizeof(s->comp[6]), "%d rank%s", r->ranks,
	         r->ranks == 1 ? "" : "s");
	snprintf(s->comp[7], sizeof(s->comp[7]), "%d host%s", r->hosts,
	         r->hosts == 1 ? "" : "s");
}

/* Titles: what varies goes in each series' title, the rest in the plot's. */
static void titles(struct series *s, int ns, int ncomp, char *plot_title,
                   size_t pt_bytes, char (*st)[256])
{
	int varies[NCOMP] = { 0 }, any = 0;

	for (int c = 0; c < ncomp; c++)
		for (int i = 1; i < ns; i++)
			varies[c] |= strcmp(s[i].comp[c], s[0].comp[c]) != 0;
	for (int c = 0; c < ncomp; c++)
		any |= varies[c];
	if (!any)
		varies[2] = 1; /* one series: call it by its algorithm */
	plot_title[0] = 0;
	for (int c = 1; c < ncomp; c++)
		if (!varies[c] && s[0].comp[c][0])
			snprintf(plot_title + strlen(plot_title),
			         pt_bytes - strlen(plot_title), "%s%s",
			         plot_title[0] ? ", " : "", s[0].comp[c]);
	for (int i = 0; i < ns; i++) {
		st[i][0] = 0;
		for (int c = 1; c <= ncomp; c++) {
			int k = c % ncomp; /* the run's label last */
			if (varies[k] && s[i].comp[k][0])
				snprintf(st[i] + strlen(st[i]),
				         sizeof(st[i]) - strlen(st[i]),
				         "%s%s%s%s", st[i][0] ? " " : "",
				         k ? "" : "(", s[i].comp[k],
				         k ? "" : ")");
		}
	}
}

static int find_gnuplot(char *path, size_t bytes)
{
	const char *p = getenv("PATH");

	while (p && *p) {
		size_t n = strcspn(p, ":");
		snprintf(path, bytes, "%.*s/gnuplot", (int)n, p);
		if (n && access(path, X_OK) == 0)
			return 1;
		p += n + (p[n] == ':');
	}
	return 0;
}

/* Run gnuplot on @gp in @dir; one line from its stderr when it fails. */
static cb_status_t run_gnuplot(const char *exe, const char *dir, const char *gp)
{
	int fds[2], status;
	char err[4096] = "";
	size_t n = 0;
	pid_t pid;

	if (pipe(fds))
		return cb_fail(CB_ERR_SYS, "pipe: %s", strerror(errno));
	if ((pid = fork()) < 0) {
		close(fds[0]);
		close(fds[1]);
		return cb_fail(CB_ERR_SYS, "cannot start gnuplot: %s",
		               strerror(errno));
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDWR);
		dup2(devnull, 0);
		dup2(devnull, 1);
		dup2(fds[1], 2);
		close(fds[0]);
		if (chdir(dir) == 0)
			execl(exe, "gnuplot", gp, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	for (;;) {
		ssize_t got = read(fds[0], err + n, sizeof(err) - 1 - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		n += (size_t)got;
		if (n == sizeof(err) - 1) { /* keep the end */
			memmove(err, err + n / 2, n - n / 2);
			n -= n / 2;
		}
	}
	err[n] = 0;
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return CB_OK;
	/* the last line that says something */
	while (n && strchr(" \t\r\n", err[n - 1]))
		err[--n] = 0;
	char *last = strrchr(err, '\n');
	last = last ? last + 1 : err;
	return cb_fail(CB_ERR_SYS, "gnuplot failed on %s/%s: %s", dir, gp,
	               *last ? last
	               : WIFEXITED(status) && WEXITSTATUS(status) == 127
	                       ? "cannot run it"
	                       : "no message");
}

struct files {
	char dir[4096], base[1024], ext[8];
};

static cb_status_t split_out(const char *out, struct files *fl)
{
	const char *slash = strrchr(out, '/'), *name = slash ? slash + 1 : out;
	const char *dot = strrchr(name, '.');

	if (!dot || (strcmp(dot, ".png") && strcmp(dot, ".svg")) || dot == name)
		return cb_fail(CB_ERR_USAGE,
		               "%s: the image is FILE.png or FILE.svg", out);
	if (strlen(out) >= sizeof(fl->dir) ||
	    (size_t)(dot - name) >= sizeof(fl->base) - 16)
		return cb_fail(CB_ERR_USAGE, "%s: name too long", out);
	if (slash)
		snprintf(fl->dir, sizeof(fl->dir), "%.*s",
		         slash == out ? 1 : (int)(slash - out), out);
	else
		snprintf(fl->dir, sizeof(fl->dir), ".");
	snprintf(fl->base, sizeof(fl->base), "%.*s", (int)(dot - name), name);
	snprintf(fl->ext, sizeof(fl->ext), "%s", dot + 1);
	return CB_OK;
}

static void terminal(FILE *gp, const struct files *fl,
                     const struct cb_plot_cfg *cfg, const char *suffix)
{
	char img[1100];

	if (!strcmp(fl->ext, "svg"))
		fprintf(gp,
		        "set terminal svg size %d,%d noenhanced font "
		        "'sans,11' background rgb 'white'\n",
		        cfg->width, cfg->height);
	else
		fprintf(gp,
		        "set terminal pngcairo size %d,%d noenhanced font "
		        "'sans,10'\n",
		        cfg->width, cfg->height);
	snprintf(img, sizeof(img), "%s%s.%s", fl->base, suffix, fl->ext);
	fputs("set output ", gp);
	gp_str(gp, img);
	fputc('\n', gp);
}

static void plot_cmd(FILE *gp, const char *dat, int first, int ns,
                     char (*st)[256])
{
	fputs("plot ", gp);
	for (int i = 0; i < ns; i++) {
		if (i)
			fputs(", \\\n     ", gp);
		if (i == 0)
			gp_str(gp, dat);
		else
			fputs("''", gp);
		/* gnuplot cycles 8 colours: dashes tell the next 8 apart */
		fprintf(gp,
		        " index %d using 1:2 with linespoints lw 2 dt %d "
		        "title ",
		        first + i, i / 8 + 1);
		gp_str(gp, st[i]);
	}
	fputc('\n', gp);
}

static const char *const ylabel[] = {
	[CB_PLOT_BUSBW] = "bus bandwidth (GB/s, 1e9 B/s)",
	[CB_PLOT_ALGBW] = "algorithm bandwidth (GB/s, 1e9 B/s)",
	[CB_PLOT_TIME] = "time (us)",
};

/* A --nodes sweep in any run: the scaling plot's x is the host count. */
static int by_nodes(struct cb_results *const *runs, int nruns)
{
	for (int i = 0; i < nruns; i++) {
		json_object *s, *w, *by;
		if (json_object_object_get_ex(runs[i]->run, "settings", &s) &&
		    json_object_object_get_ex(s, "sweep", &w) &&
		    json_object_object_get_ex(w, "by", &by) &&
		    !strcmp(json_object_get_string(by), "nodes"))
			return 1;
	}
	return 0;
}

/* The size plot's script: @ns series of @st over sizes @lo..@hi. */
static void size_plot(FILE *gp, const struct files *fl,
                      const struct cb_plot_cfg *cfg, const char *title,
                      const char *dname, unsigned long long lo,
                      unsigned long long hi, int ns, char (*st)[256])
{
	terminal(gp, fl, cfg, "");
	fputs("set title ", gp);
	gp_str(gp, title);
	fputs("\nset xlabel 'message size (bytes)'\nset ylabel ", gp);
	gp_str(gp, ylabel[cfg->metric]);
	fputs("\nset grid\nset logscale x 2\n", gp);
	int klo = 0, khi = 0;
	while (klo < 63 && (1ull << (klo + 1)) <= lo)
		klo++;
	while (khi < 63 && (1ull << khi) < hi)
		khi++;
	if (klo == khi) {
		klo = klo > 0 ? klo - 1 : 0;
		khi++;
	}
	int step = (khi - klo) / 12 + 1;
	/* a margin, so the end tics keep their labels */
	fprintf(gp, "set xrange [%.6g:%.6g]\nset xtics (",
	        (double)(1ull << klo) / 1.15, (double)(1ull << khi) * 1.15);
	for (int k = klo; k <= khi; k += step) {
		char lab[32];
		human(1ull << k, lab, sizeof(lab));
		fprintf(gp, "%s'%s' %llu", k > klo ? ", " : "", lab, 1ull << k);
	}
	fputs(")\n", gp);
	if (cfg->metric == CB_PLOT_TIME)
		fputs("set logscale y 10\n", gp);
	else
		fputs("set yrange [0:*]\n", gp);
	fprintf(gp, "set key %s\n", ns > 8 ? "outside right top" : "left top");
	plot_cmd(gp, dname, 0, ns, st);
}

/* The scaling plot, where the rows have several group sizes: its data
 * (series after the @ns of the size plot, in @s and @st) and script.
 * Returns how many series it has (0: no plot, one point per series). */
static int scaling_plot(FILE *dat, FILE *gp, const struct files *fl,
                        const struct cb_plot_cfg *cfg,
                        struct cb_results *const *runs, int nruns, struct pt *p,
                        size_t np, struct series *s, int ns, char (*st)[256],
                        char *title, size_t title_bytes, const char *dname)
{
	int nscale = 0;

	int nodes = by_nodes(runs, nruns), first = ns, maxg = 0;
	qsort(p, np, sizeof(*p), by_key_group);
	fprintf(dat, "# scaling: busbw at the largest size of each "
	             "group\n");
	for (size_t i = 0; i < np;) {
		size_t j = i, pts = 0;
		while (j < np && !key_cmp(&p[i], &p[j], 1))
			j++;
		struct series *sc = &s[ns + nscale];
		*sc = (struct series){ .first = i, .n = j - i };
		fill_comp(sc, &p[i], runs);
		for (size_t k = i; k < j; k++) {
			pts += k + 1 == j || p[k + 1].r->ranks != p[k].r->ranks;
			int g = nodes ? p[k].r->hosts : p[k].r->ranks;
			maxg = g > maxg ? g : maxg;
		}
		if (pts > 1) {
			fprintf(dat,
			        "# index %d: %s %s %s %s %s\n# %s "
			        "busbw_gbps bytes\n",
			        first + nscale, sc->comp[0], sc->comp[1],
			        sc->comp[2], sc->comp[3], sc->comp[4],
			        nodes ? "hosts" : "ranks");
			for (size_t k = i; k < j; k++)
				if (k + 1 == j ||
				    p[k + 1].r->ranks != p[k].r->ranks)
					fprintf(dat, "%d %.6g %llu\n",
					        nodes ? p[k].r->hosts
					              : p[k].r->ranks,
					        p[k].r->busbw_gbps,
					        (unsigned long long)p[k]
					                .r->bytes);
			fputs("\n\n", dat);
			nscale++;
		}
		i = j;
	}
	if (nscale) {
		titles(s + ns, nscale, 6, title, title_bytes, st + ns);
		fputs("\nreset\n", gp);
		terminal(gp, fl, cfg, "-scaling");
		fputs("set title ", gp);
		char t2[600];
		snprintf(t2, sizeof(t2),
		         "scaling%s%s: busbw at the "
		         "largest size",
		         title[0] ? ", " : "", title);
		gp_str(gp, t2);
		fprintf(gp,
		        "\nset xlabel '%s'\nset ylabel 'bus bandwidth "
		        "(GB/s, 1e9 B/s)'\nset grid\nset yrange [0:*]\n"
		        "set offsets 0.5, 0.5, 0, 0\n%s"
		        "set key %s\n",
		        nodes ? "hosts" : "ranks",
		        maxg <= 16 ? "set xtics 1\n" : "",
		        nscale > 8 ? "outside right top" : "left top");
		plot_cmd(gp, dname, first, nscale, st + ns);
	}
	return nscale;
}

cb_status_t cb_plot(struct cb_results *const *runs, int nruns,
                    const struct cb_plot_cfg *cfg, int *scaling)
{
	struct files fl;
	struct pt *p = NULL;
	struct series *s = NULL;
	char(*st)[256] = NULL;
	char path[5200], title[512], exe[4096];
	size_t np = 0, total = 0;
	int ns = 0, groups = 0, first_ranks = -1, ndone = 0;
	FILE *dat = NULL, *gp = NULL;
	cb_status_t rc;
	unsigned long long lo = 0, hi = 0;

	if (scaling)
		*scaling = 0;
	if ((rc = split_out(cfg->out, &fl)))
		return rc;
	for (int i = 0; i < nruns; i++)
		total += runs[i]->nrows;
	if (!(p = calloc(total + 1, sizeof(*p))) ||
	    !(s = calloc(2 * total + 1, sizeof(*s))) ||
	    !(st = calloc(2 * total + 1, sizeof(*st)))) {
		rc = cb_fail(CB_ERR_NOMEM, "out of memory");
		goto out;
	}
	for (int i = 0; i < nruns; i++)
		for (size_t k = 0; k < runs[i]->nrows; k++) {
			const struct cb_row *r = &runs[i]->rows[k];
			double v = value(r, cfg->metric);
			if (r->inplace || r->bytes == 0 || !isfinite(v) ||
			    (cfg->metric == CB_PLOT_TIME && v <= 0))
				continue;
			p[np++] = (struct pt){ i, r };
			if (first_ranks < 0)
				first_ranks = r->ranks;
			groups |= r->ranks != first_ranks;
			lo = !lo || r->bytes < lo ? r->bytes : lo;
			hi = r->bytes > hi ? r->bytes : hi;
		}
	if (np == 0) {
		rc = cb_fail(
		        CB_ERR_USAGE,
		        "nothing to plot: no out-of-place rows with a size "
		        "above 0%s",
		        cfg->metric == CB_PLOT_TIME ? " and a time" : "");
		goto out;
	}
	qsort(p, np, sizeof(*p), by_key_size);
	for (size_t i = 0; i < np; i++)
		if (i == 0 || key_cmp(&p[i - 1], &p[i], 0)) {
			s[ns] = (struct series){ .first = i };
			fill_comp(&s[ns], &p[i], runs);
			ns++;
		}
	for (int i = 0; i < ns; i++)
		s[i].n = (i + 1 < ns ? s[i + 1].first : np) - s[i].first;

	snprintf(path, sizeof(path), "%s/%s.dat", fl.dir, fl.base);
	if (!(dat = fopen(path, "w"))) {
		rc = cb_fail(CB_ERR_SYS, "cannot write %s: %s", path,
		             strerror(errno));
		goto out;
	}
	snprintf(path, sizeof(path), "%s/%s.gp", fl.dir, fl.base);
	if (!(gp = fopen(path, "w"))) {
		rc = cb_fail(CB_ERR_SYS, "cannot write %s: %s", path,
		             strerror(errno));
		goto out;
	}
	titles(s, ns, NCOMP, title, sizeof(title), st);
	fprintf(dat, "# collbench plot data: one block per series (gnuplot "
	             "'index N'); out-of-place rows\n");
	for (int i = 0; i < ns; i++) {
		fprintf(dat, "# index %d: %s\n# bytes %s\n", i, st[i],
		        cfg->metric == CB_PLOT_TIME    ? "time_us"
		        : cfg->metric == CB_PLOT_ALGBW ? "algbw_gbps"
		                                       : "busbw_gbps");
		for (size_t k = s[i].first; k < s[i].first + s[i].n; k++)
			fprintf(dat, "%llu %.6g\n",
			        (unsigned long long)p[k].r->bytes,
			        value(p[k].r, cfg->metric));
		fputs("\n\n", dat);
	}

	/* the size plot */
	char dname[1100];
	snprintf(dname, sizeof(dname), "%s.dat", fl.base);
	fprintf(gp,
	        "# collbench: %s.%s from %s; edit, then run `gnuplot "
	        "%s.gp` in this folder\n",
	        fl.base, fl.ext, dname, fl.base);
	size_plot(gp, &fl, cfg, title, dname, lo, hi, ns, st);

	/* the scaling plot: busbw at each series' largest size per group */
	if (groups &&
	    scaling_plot(dat, gp, &fl, cfg, runs, nruns, p, np, s, ns, st,
	                 title, sizeof(title), dname) &&
	    scaling)
		*scaling = 1;
	ndone = 1;
out:;
	/* both closed, whatever the first one says */
	int bad = dat && fclose(dat);
	if (gp && fclose(gp))
		bad = 1;
	if (bad && ndone) {
		rc = cb_fail(CB_ERR_SYS, "cannot write %s/%s.dat or .gp: %s",
		             fl.dir, fl.base, strerror(errno));
		ndone = 0;
	}
	free(p);
	free(s);
	free(st);
	if (!ndone)
		return rc;
	if (!find_gnuplot(exe, sizeof(exe)))
		return cb_fail(CB_ERR_UNAVAILABLE,
		               "gnuplot is not on PATH (Debian: apt install "
		               "gnuplot-nox): wrote %s/%s.dat and %s/%s.gp, no "
		               "image",
		               fl.dir, fl.base, fl.dir, fl.base);
	snprintf(path, sizeof(path), "%s.gp", fl.base);
	return run_gnuplot(exe, fl.dir, path);
}

int cb_gnuplot_find(char *path, size_t bytes)
{
	return find_gnuplot(path, bytes);
}

cb_status_t cb_gnuplot_run(const char *exe, const char *dir, const char *gp)
{
	return run_gnuplot(exe, dir, gp);
}
