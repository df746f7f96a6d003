/* SPDX-License-Identifier: MIT */
/* reports/markup.c - HTML and XML escaping, inline PNG (reports/markup.h). */
#include "reports/markup.h"

#include <stdlib.h>

void cb_markup_esc(FILE *f, const char *s)
{
	static const char *const ent[256] = {
		['&'] = "&amp;",  ['<'] = "&lt;",   ['>'] = "&gt;",
		['"'] = "&quot;", ['\''] = "&#39;",
	};

	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (ent[c])
			fputs(ent[c], f);
		else if (c >= 0x20 || c == '\n' || c == '\t')
			fputc(c, f);
	}
}

static void b64(FILE *f, const unsigned char *p, size_t n)
{
	static const char t[] =
	        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	        "0123456789+/";

	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16;
		if (i + 1 < n)
			v |= (unsigned)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		fputc(t[v >> 18 & 63], f);
		fputc(t[v >> 12 & 63], f);
		fputc(i + 1 < n ? t[v >> 6 & 63] : '=', f);
		fputc(i + 2 < n ? t[v & 63] : '=', f);
	}
}

int cb_html_embed_png(FILE *f, const char *path, const char *alt)
{
	FILE *in = fopen(path, "rb");
	unsigned char *buf = NULL;
	long n;

	if (!in)
		return 0;
	if (fseek(in, 0, SEEK_END) || (n = ftell(in)) <= 0 ||
	    fseek(in, 0, SEEK_SET) || !(buf = malloc((size_t)n)) ||
	    fread(buf, 1, (size_t)n, in) != (size_t)n) {
		free(buf);
		fclose(in);
		return 0;
	}
	fclose(in);
	fputs("<figure><img alt=\"", f);
	cb_markup_esc(f, alt);
	fputs("\" src=\"data:image/png;base64,", f);
	b64(f, buf, (size_t)n);
	fputs("\"><figcaption>", f);
	cb_markup_esc(f, alt);
	fputs("</figcaption></figure>\n", f);
	free(buf);
	return 1;
}
