/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_mem.c - cb_free_n and cb_free_all (core/mem.h): NULLs and
 * an empty list are fine, every block listed is freed, and cb_free_all
 * evaluates each argument once, the object after its members.
 *
 * That each block is really freed is measured with glibc's mallinfo2 in the
 * plain builds; a sanitizer's allocator is not glibc's (mallinfo2 does not
 * see it), so there the leak check at exit (LSan, detect_leaks=1 in
 * tools/test.sh) is what fails on a block left over, and ASan on one freed
 * twice.
 */
#include <malloc.h>
#include <stdlib.h>

#include "check.h"
#include "core/mem.h"

#define BLOCK 4096

struct obj {
	char *a;
	int *b;
	double *c;
};

static int made;

static void *make(void)
{
	made++;
	return malloc(BLOCK);
}

/* Bytes the heap has handed out and not had back (0 where not glibc's). */
static size_t in_use(void)
{
#ifdef CB_SANITIZE_BUILD
	return 0;
#else
	return mallinfo2().uordblks;
#endif
}

static void nulls(void)
{
	void *none[3] = { NULL, NULL, NULL };

	cb_free_n(NULL, 0);
	cb_free_n(none, 3);
	cb_free_all(NULL);
	cb_free_all(NULL, NULL, NULL);
	CHECK(1); /* reached: nothing was dereferenced or freed */
}

static void frees_each(void)
{
	struct obj *o = calloc(1, BLOCK); /* as large as the rest: counted */

	CHECK(o != NULL);
	if (!o)
		return;
	o->a = malloc(BLOCK);
	o->b = malloc(BLOCK);
	o->c = NULL; /* a member never allocated */
	void *x = malloc(BLOCK);
	CHECK(o->a && o->b && x);
	size_t before = in_use();
	/* The object last: its members are read before anything is freed. */
	cb_free_all(o->a, o->b, o->c, x, o);
#ifndef CB_SANITIZE_BUILD
	CHECK(before - in_use() >= 4 * BLOCK);
#else
	(void)before;
#endif
}

static void once_each(void)
{
	made = 0;
	size_t before = in_use();
	cb_free_all(make(), make(), make());
	CHECK(made == 3); /* sizeof(...) in the macro evaluates nothing */
#ifndef CB_SANITIZE_BUILD
	CHECK(in_use() <= before);
#else
	(void)before;
#endif
}

int main(void)
{
	nulls();
	frees_each();
	once_each();
	return check_result("mem");
}
