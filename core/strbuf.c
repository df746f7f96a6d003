/* SPDX-License-Identifier: MIT */
/* core/strbuf.c - clamped appends (core/strbuf.h). */
#include <stdio.h>
#include <string.h>

#include "core/strbuf.h"

int cb_buf_vappendf(char *buf, size_t cap, size_t *len, const char *fmt,
                    va_list ap)
{
	int w;

	if (!cap) {
		*len = 0;
		return 0;
	}
	if (*len >= cap) {
		*len = cap - 1;
		buf[*len] = '\0';
		return 0;
	}
	w = vsnprintf(buf + *len, cap - *len, fmt, ap);
	if (w < 0) {
		buf[*len] = '\0';
		return 0;
	}
	if ((size_t)w >= cap - *len) {
		*len = cap - 1;
		return 0;
	}
	*len += (size_t)w;
	return 1;
}

int cb_buf_appendf(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int fit;

	va_start(ap, fmt);
	fit = cb_buf_vappendf(buf, cap, len, fmt, ap);
	va_end(ap);
	return fit;
}

uint64_t cb_str_hash(uint64_t h, const char *s)
{
	return cb_mem_hash(h, s, strlen(s));
}

uint64_t cb_mem_hash(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}
