/* SPDX-License-Identifier: MIT */
/*
 * reports/markup.h - text into HTML and XML: the one escaper the report page,
 * its acceptance section and the JUnit writer share, and inline images.  A
 * leaf: it knows no report.
 */
#ifndef CB_REPORTS_MARKUP_H
#define CB_REPORTS_MARKUP_H

#include <stdio.h>

/* @s (NULL: nothing) as HTML or XML text or attribute value: & < > " '
 * escaped, control characters other than tab and newline left out (XML 1.0
 * cannot carry them, and a page has no use for them). */
void cb_markup_esc(FILE *f, const char *s);

/* <figure> with @path's PNG inline (base64), @alt its text and caption; 0
 * when it cannot be read. */
int cb_html_embed_png(FILE *f, const char *path, const char *alt);

#endif
