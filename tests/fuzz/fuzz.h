/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz.h - what every fuzz target shares.
 *
 * A target is one C file defining LLVMFuzzerTestOneInput (and, if it needs
 * one-time set-up, LLVMFuzzerInitialize).  The same file links against
 * libFuzzer in a fuzzing build (-Dfuzzing=true, clang) and against replay.c
 * in every build, where the suite runs it over its checked-in corpus.
 */
#ifndef CB_TESTS_FUZZ_H
#define CB_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A property the code under test promises: breaking it is a finding, as
 * a crash is. */
#define FUZZ_CHECK(cond)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: property failed: %s\n",        \
			        __FILE__, __LINE__, #cond);                    \
			abort();                                               \
		}                                                              \
	} while (0)

#endif
