/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_strbuf.c - cb_buf_appendf (core/strbuf.h): text that does
 * not fit is cut, the length stays inside the buffer, and pieces appended
 * after a cut one neither write past the end nor move the length (the
 * `n += snprintf(buf + n, cap - n, ...)` it replaces wraps `cap - n`).
 */
#include <string.h>

#include "check.h"
#include "core/strbuf.h"

#define CAP   16
#define GUARD 48

/* A buffer of CAP bytes followed by guard bytes that must stay untouched. */
static char mem[CAP + GUARD];

static int guard_intact(void)
{
	for (int i = CAP; i < CAP + GUARD; i++)
		if (mem[i] != '#')
			return 0;
	return 1;
}

static void fits(void)
{
	size_t n = 0;

	memset(mem, '#', sizeof(mem));
	mem[0] = '\0';
	CHECK(cb_buf_appendf(mem, CAP, &n, "%s", "abc") == 1);
	CHECK(cb_buf_appendf(mem, CAP, &n, "-%d", 42) == 1);
	CHECK(n == 6 && !strcmp(mem, "abc-42"));
	CHECK(cb_buf_appendf(mem, CAP, &n, "%s", "") == 1 && n == 6);
	/* Exactly full: CAP - 1 characters and the NUL. */
	CHECK(cb_buf_appendf(mem, CAP, &n, "%s", "123456789") == 1);
	CHECK(n == CAP - 1 && strlen(mem) == CAP - 1);
	CHECK(guard_intact());
}

static void cut(void)
{
	size_t n = 0;

	memset(mem, '#', sizeof(mem));
	mem[0] = '\0';
	CHECK(cb_buf_appendf(mem, CAP, &n, "%s", "0123456789") == 1);
	/* One piece too long: cut, and the length stops at the end. */
	CHECK(cb_buf_appendf(mem, CAP, &n, "%s", "abcdefghij") == 0);
	CHECK(n == CAP - 1);
	CHECK(!strcmp(mem, "0123456789abcde"));
	/* Every later piece: nothing written, nothing past the end. */
	for (int i = 0; i < 8; i++)
		CHECK(cb_buf_appendf(mem, CAP, &n, "more text %d", i) == 0);
	CHECK(n == CAP - 1 && strlen(mem) == CAP - 1);
	CHECK(!strcmp(mem, "0123456789abcde"));
	CHECK(guard_intact());
}

static void odd_lengths(void)
{
	size_t n = CAP + 100; /* a caller's length already past the end */

	memset(mem, '#', sizeof(mem));
	CHECK(cb_buf_appendf(mem, CAP, &n, "x") == 0);
	CHECK(n == CAP - 1 && mem[CAP - 1] == '\0');
	CHECK(guard_intact());
	n = 5;
	CHECK(cb_buf_appendf(mem, 0, &n, "x") == 0 && n == 0);
	CHECK(guard_intact());
	/* One byte: only the NUL fits. */
	n = 0;
	CHECK(cb_buf_appendf(mem, 1, &n, "abc") == 0);
	CHECK(n == 0 && mem[0] == '\0');
}

int main(void)
{
	fits();
	cut();
	odd_lengths();
	return check_result("strbuf");
}
