/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/check.h - the smallest test harness that tells what failed:
 * CHECK() prints the expression and its place and counts the failure; a
 * test's main returns check_result().
 */
#ifndef CB_TEST_CHECK_H
#define CB_TEST_CHECK_H

#include <stdio.h>

static int check_failures, check_count;

#define CHECK(cond)                                                            \
	do {                                                                   \
		check_count++;                                                 \
		if (!(cond)) {                                                 \
			check_failures++;                                      \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, \
			        __LINE__, #cond);                              \
		}                                                              \
	} while (0)

static inline int check_result(const char *name)
{
	printf("%s: %d checks, %d failed\n", name, check_count, check_failures);
	return check_failures ? 1 : check_count ? 0 : 1;
}

#endif
