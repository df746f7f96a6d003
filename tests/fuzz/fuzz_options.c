/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_options.c - the command line: the input, split at NUL
 * bytes, is argv after "collbench".  That reaches every option parser:
 * sizes (-b, -e, -i, --chunk-bytes), --algo lists and size ranges,
 * --ranks/--nodes count lists, numbers, --rendezvous HOST:PORT, -O files.
 *
 * Beyond not crashing: a refusal is CB_ERR_USAGE with a recorded line; an
 * accepted line has -b <= -e <= 1T and non-empty ranges; a --ranks list,
 * expanded for several world sizes, is sorted, unique and within 1..max.
 */
#include <string.h>

#include "bench/options.h"
#include "core/log.h"
#include "fuzz.h"

#define MAX_ARGS 64

static void check_counts(const char *list, const char *what)
{
	static const int worlds[] = { 1, 2, 3, 8, 64, CB_MAX_LOCAL_RANKS };

	for (size_t w = 0; w < sizeof(worlds) / sizeof(worlds[0]); w++) {
		int out[CB_MAX_COUNTS], n = -1;
		cb_fail_clear();
		if (cb_parse_counts(list, what, worlds[w], out, &n)) {
			FUZZ_CHECK(cb_fail_msg() != NULL);
			continue;
		}
		FUZZ_CHECK(n >= 1 && n <= CB_MAX_COUNTS);
		for (int i = 0; i < n; i++) {
			FUZZ_CHECK(out[i] >= 1 && out[i] <= worlds[w]);
			FUZZ_CHECK(i == 0 || out[i] > out[i - 1]);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = malloc(size + 1), *argv[MAX_ARGS + 2];
	int argc = 0;
	struct cb_opts o;
	cb_status_t st;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	argv[argc++] = "collbench";
	for (char *p = copy; p <= copy + size && argc <= MAX_ARGS;
	     p += strlen(p) + 1)
		argv[argc++] = p;
	argv[argc] = NULL;

	cb_fail_clear();
	st = cb_opts_parse(argc, argv, &o);
	if (st) {
		FUZZ_CHECK(st == CB_ERR_USAGE);
		FUZZ_CHECK(cb_fail_msg() != NULL);
	} else if (o.cmd == CB_CMD_RUN) {
		FUZZ_CHECK(o.min_bytes <= o.max_bytes);
		FUZZ_CHECK(o.max_bytes <= (1ull << 40));
		FUZZ_CHECK(o.ndtypes >= 1 && o.nops >= 1 && o.ncolls >= 1);
		FUZZ_CHECK(o.algo_mode == CB_ALGO_AUTO || o.nalgos >= 1);
		for (int i = 0; i < o.nalgos; i++) {
			FUZZ_CHECK(o.algos[i].algo != NULL);
			FUZZ_CHECK(o.algos[i].lo < o.algos[i].hi);
		}
		if (o.ranks)
			check_counts(o.ranks, "--ranks");
		if (o.nodes)
			check_counts(o.nodes, "--nodes");
	}
	free(copy);
	return 0;
}
