/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_accept_expect.c - the text of an acceptance expectations
 * file (`collbench acceptance --expect FILE`), as cb_acc_expect_parse reads
 * it: the input is the file.
 *
 * Beyond not crashing: a refusal is CB_ERR_USAGE with one line naming the
 * file and leaves the settings as they were; what is accepted is in range
 * (a rate in (0, 1e6] GB/s, a latency in [0.001, 1e7] us) and reads back
 * the same once written out as a file again ("%.17g" round-trips a
 * double).
 */
#include <math.h>
#include <string.h>

#include "acceptance/accept.h"
#include "core/log.h"
#include "fuzz.h"

#define NAME "exp.txt"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* sentinels: what a refusal must leave, and "not set" */
	const struct cb_acc_settings before = { .expect_bw_gbps = -1,
		                                .expect_lat_us = -2 };
	struct cb_acc_settings s = before, again = before;
	char text[128];
	cb_status_t st;

	cb_fail_clear();
	st = cb_acc_expect_parse((const char *)data, size, NAME, &s);
	if (st) {
		const char *msg = cb_fail_msg();
		FUZZ_CHECK(st == CB_ERR_USAGE && msg != NULL);
		FUZZ_CHECK(!strncmp(msg, "--expect " NAME ": ",
		                    strlen("--expect " NAME ": ")));
		FUZZ_CHECK(strchr(msg, '\n') == NULL);
		FUZZ_CHECK(s.expect_bw_gbps == before.expect_bw_gbps &&
		           s.expect_lat_us == before.expect_lat_us);
		return 0;
	}
	FUZZ_CHECK(cb_fail_msg() == NULL);
	FUZZ_CHECK(s.expect_bw_gbps == -1 ||
	           (isfinite(s.expect_bw_gbps) && s.expect_bw_gbps > 0 &&
	            s.expect_bw_gbps <= 1e6));
	FUZZ_CHECK(s.expect_lat_us == -2 ||
	           (isfinite(s.expect_lat_us) && s.expect_lat_us >= 0.001 &&
	            s.expect_lat_us <= 1e7));
	int n = 0;
	if (s.expect_lat_us != -2)
		n += snprintf(text + n, sizeof(text) - (size_t)n,
		              "lat_us = %.17g\n", s.expect_lat_us);
	if (s.expect_bw_gbps != -1)
		n += snprintf(text + n, sizeof(text) - (size_t)n,
		              "# written again\n\tbw_gbps=%.17g  # GB/s\r\n",
		              s.expect_bw_gbps);
	FUZZ_CHECK(n >= 0 && (size_t)n < sizeof(text));
	FUZZ_CHECK(cb_acc_expect_parse(text, (size_t)n, NAME, &again) == CB_OK);
	FUZZ_CHECK(again.expect_bw_gbps == s.expect_bw_gbps);
	FUZZ_CHECK(again.expect_lat_us == s.expect_lat_us);
	return 0;
}
