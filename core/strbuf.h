/* SPDX-License-Identifier: MIT */
/*
 * core/strbuf.h - text built piece by piece into a fixed buffer, clamped.
 *
 * `n += snprintf(buf + n, cap - n, ...)` goes wrong on the first piece that
 * does not fit: snprintf returns what it would have written, n passes cap,
 * and `cap - n` wraps to a huge size for the next piece.  cb_buf_appendf
 * keeps *len inside the buffer, so any number of pieces may follow.  A base
 * helper like core/log.h: every layer may use it.
 */
#ifndef CB_CORE_STRBUF_H
#define CB_CORE_STRBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Append printf-style text at @buf + *@len, never past @cap bytes: the text
 * is cut to fit, @buf stays NUL-terminated (when @cap > 0) and *@len ends at
 * most @cap - 1 (strlen(@buf) when it started inside the buffer).  Returns 1
 * when all of the text fit, 0 when it was cut or the buffer was full.
 */
int cb_buf_appendf(char *buf, size_t cap, size_t *len, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
int cb_buf_vappendf(char *buf, size_t cap, size_t *len, const char *fmt,
                    va_list ap) __attribute__((format(printf, 4, 0)));

/* A 64-bit hash of the string @s (FNV-1a), continued from @h (start with
 * CB_STR_HASH0): names that stand for long identities in gathers. */
#define CB_STR_HASH0 14695981039346656037ull
uint64_t cb_str_hash(uint64_t h, const char *s);
/* The same over @n bytes at @p. */
uint64_t cb_mem_hash(uint64_t h, const void *p, size_t n);

#endif
