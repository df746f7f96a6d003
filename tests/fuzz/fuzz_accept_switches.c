/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_accept_switches.c - the text of a switches file
 * (`collbench acceptance --switches FILE`), as cb_acc_switches_parse reads
 * it: the input is the file.
 *
 * Beyond not crashing: a refusal is CB_ERR_USAGE with one line naming the
 * file, and hands nothing back; what is accepted names a host or more,
 * each a name of 1-63 characters without spaces under a leaf of 1-31, and
 * reads back the same once written out as HOST LEAF lines.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "acceptance/accept.h"
#include "core/log.h"
#include "fuzz.h"

#define NAME "sw.conf"

static int word(const char *s, size_t max)
{
	size_t n = strlen(s);

	for (size_t i = 0; i < n; i++)
		if (isspace((unsigned char)s[i]) || s[i] == '#')
			return 0;
	return n >= 1 && n <= max;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cb_acc_switches *s = (void *)1, *again = NULL;
	cb_status_t st;

	cb_fail_clear();
	st = cb_acc_switches_parse((const char *)data, size, NAME, &s);
	if (st) {
		const char *msg = cb_fail_msg();
		FUZZ_CHECK(st == CB_ERR_USAGE && msg != NULL && s == NULL);
		FUZZ_CHECK(!strncmp(msg, "--switches " NAME ": ",
		                    strlen("--switches " NAME ": ")));
		FUZZ_CHECK(strchr(msg, '\n') == NULL);
		return 0;
	}
	FUZZ_CHECK(s != NULL && cb_fail_msg() == NULL);
	int nleaf = 0, n = cb_acc_switches_count(s, &nleaf);
	FUZZ_CHECK(n >= 1 && nleaf >= 1);
	/* written out as HOST LEAF lines, read back the same */
	size_t cap = (size_t)n * (64 + 32 + 2) + 1, len = 0;
	char *text = malloc(cap);
	FUZZ_CHECK(text != NULL);
	for (int i = 0; i < n; i++) {
		int l;
		const char *h = cb_acc_switches_host(s, i, &l);
		const char *leaf = cb_acc_switches_leaf(s, h, NULL);
		FUZZ_CHECK(h && word(h, 63) && l >= 0 && l < nleaf && leaf &&
		           word(leaf, 31));
		len += (size_t)snprintf(text + len, cap - len, "%s %s\n", h,
		                        leaf);
	}
	FUZZ_CHECK(cb_acc_switches_parse(text, len, NAME, &again) == CB_OK);
	int nl2 = 0;
	FUZZ_CHECK(cb_acc_switches_count(again, &nl2) == n && nl2 <= nleaf);
	for (int i = 0; i < n; i++) {
		int l;
		const char *h = cb_acc_switches_host(s, i, &l);
		const char *a = cb_acc_switches_leaf(s, h, NULL);
		const char *b = cb_acc_switches_leaf(again, h, NULL);
		FUZZ_CHECK(a && b && !strcmp(a, b));
	}
	free(text);
	cb_acc_switches_free(again);
	cb_acc_switches_free(s);
	return 0;
}
