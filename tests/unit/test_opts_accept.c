/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_opts_accept.c - `collbench acceptance`'s options: the
 * defaults, each value where it lands, and the exact line a bad value
 * gets (acceptance/opts.c parses them from one table of rows).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acceptance/accept.h"
#include "check.h"
#include "core/log.h"

/* Parse "acceptance LINE" (words split at spaces) into @o. */
static cb_status_t parse(const char *line, struct cb_acc_opts *o)
{
	static char buf[512];
	char *argv[64];
	int argc = 0;

	snprintf(buf, sizeof(buf), "acceptance %s", line);
	for (char *save, *t = strtok_r(buf, " ", &save); t && argc < 63;
	     t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	argv[argc] = NULL;
	cb_fail_clear();
	return cb_acc_parse(argc, argv, o);
}

/* @line is refused (usage) with exactly @msg. */
static int refused(const char *line, const char *msg)
{
	struct cb_acc_opts o;
	cb_status_t st = parse(line, &o);
	const char *got = cb_fail_msg() ? cb_fail_msg() : "";
	int ok = st == CB_ERR_USAGE && !strcmp(got, msg);

	if (!ok)
		fprintf(stderr, "  '%s' -> %d '%s'\n    want '%s'\n", line, st,
		        got, msg);
	return ok;
}

int main(void)
{
	struct cb_acc_opts o;

	/* defaults */
	CHECK(parse("", &o) == CB_OK && o.np == 2 && !o.np_set &&
	      !strcmp(o.transport, "auto") && o.timeout_s == 30 &&
	      o.set.bw_tolerance == 0.9 && o.set.lat_tolerance == 2 &&
	      o.set.coll_tolerance == 0.5 && o.set.bw_bytes == 1u << 20 &&
	      o.set.lat_iters == 200 && o.set.coll_bytes == 16u << 20 &&
	      o.set.pair_timeout_s == 10 && o.set.baseline_tolerance == 0.05 &&
	      o.set.duration_s == 0 && o.set.window_s == 0 && !o.set.rails &&
	      !o.help && !o.verbose && o.nout == 1 &&
	      o.out[0].kind == CB_ACC_OUT_TABLE && !o.out[0].path &&
	      o.stages == (1u << CB_ACC_NSTAGES) - 1);

	/* each value where it lands */
	CHECK(parse("--np 5 --transport tcp --rendezvous h:1 --rails "
	            "--duration 2m --window 30s --bw-tolerance 80% "
	            "--lat-tolerance 3 --coll-tolerance 0.25 --expect-bw "
	            "100Gb/s --expect-lat 4.5 --bw-bytes 1001 --lat-iters 7.9 "
	            "--coll-bytes 2K --pair-timeout 0.5 --timeout 60 "
	            "--baseline-tolerance 10% -v -v --format json -O a.csv "
	            "--output b.xml --stages pairwise",
	            &o) == CB_OK);
	CHECK(o.np == 5 && o.np_set && !strcmp(o.transport, "tcp") &&
	      !strcmp(o.rendezvous, "h:1") && o.set.rails == 1 &&
	      o.set.duration_s == 120 && o.set.window_s == 30 &&
	      o.set.bw_tolerance == 0.8 && o.set.lat_tolerance == 3 &&
	      o.set.coll_tolerance == 0.25 && o.set.expect_bw_gbps == 12.5 &&
	      o.set.expect_lat_us == 4.5);
	/* bw-bytes rounds down to 8; lat-iters takes the whole part */
	CHECK(o.set.bw_bytes == 1000 && o.set.lat_iters == 7 &&
	      o.set.coll_bytes == 2048 && o.set.pair_timeout_s == 0.5 &&
	      o.timeout_s == 60 && o.set.baseline_tolerance == 0.1 &&
	      o.verbose == 2);
	CHECK(o.nout == 3 && o.out[0].kind == CB_ACC_OUT_JSON &&
	      !strcmp(o.out[1].path, "a.csv") &&
	      o.out[1].kind == CB_ACC_OUT_CSV &&
	      o.out[2].kind == CB_ACC_OUT_XML &&
	      o.stages == (1u << CB_ACC_INVENTORY | 1u << CB_ACC_CONNECTIVITY |
	                   1u << CB_ACC_PAIRWISE));
	CHECK(parse("--help --tcp-if lo", &o) == CB_OK && o.help &&
	      !strcmp(o.tcp_if, "lo"));
	CHECK(parse("--expect-bw 12.5GB/s --duration 1h", &o) == CB_OK &&
	      o.set.expect_bw_gbps == 12.5 && o.set.duration_s == 3600);

	/* every bad value: its one line */
	CHECK(refused("--np 0", "--np '0' is not a number in 1..4096"));
	CHECK(refused("--np 4097", "--np '4097' is not a number in 1..4096"));
	CHECK(refused("--np 1.5", "--np '1.5' is not a whole number"));
	CHECK(refused("--np", "--np needs a value"));
	CHECK(refused("--transport foo", "--transport 'foo' is not auto, tcp, "
	                                 "shm, verbs or gpu"));
	CHECK(refused("--duration 0", "--duration '0' is not a duration (90, "
	                              "30s, 10m, 2h; up to 30 days)"));
	CHECK(refused("--duration 31d", "--duration '31d' is not a duration "
	                                "(90, 30s, 10m, 2h; up to 30 days)"));
	CHECK(refused("--window 5x", "--window '5x' is not a duration (90, "
	                             "30s, 10m, 2h; up to 30 days)"));
	CHECK(refused("--bw-tolerance 120%",
	              "--bw-tolerance '120%' is not a number in 0.01..1"));
	CHECK(refused("--lat-tolerance 0.5",
	              "--lat-tolerance '0.5' is not a number in 1..1000"));
	CHECK(refused("--lat-tolerance 50%",
	              "--lat-tolerance '50%' is not a number in 1..1000"));
	CHECK(refused("--coll-tolerance 2",
	              "--coll-tolerance '2' is not a number in 0..1"));
	CHECK(refused("--expect-bw -1", "--expect-bw '-1' is not a rate (GB/s, "
	                                "e.g. 11.5, or 100Gb/s)"));
	CHECK(refused("--expect-lat 0",
	              "--expect-lat '0' is not a number in 0.001..1e+07"));
	CHECK(refused("--bw-bytes 4", "--bw-bytes '4' is not in 8..256M"));
	CHECK(refused("--bw-bytes 257M",
	              "--bw-bytes '257M' is not in 8..256M"));
	CHECK(refused("--bw-bytes x", "--bw-bytes 'x' is not a size (a number "
	                              "with an optional K, M, G or T suffix)"));
	CHECK(refused("--lat-iters 1",
	              "--lat-iters '1' is not a number in 2..1e+06"));
	CHECK(refused("--coll-bytes 1023", "--coll-bytes '1023' is not in "
	                                   "1K..4G"));
	CHECK(refused("--coll-bytes 5G", "--coll-bytes '5G' is not in 1K..4G"));
	CHECK(refused("--pair-timeout 4000",
	              "--pair-timeout '4000' is not a number in 0.1..3600"));
	CHECK(refused("--timeout 0.01",
	              "--timeout '0.01' is not a number in 0.1..86400"));
	CHECK(refused("--baseline-tolerance 1",
	              "--baseline-tolerance '1' is not a number in 0..0.99"));
	CHECK(refused(
	        "--stages foo",
	        "--stages: 'foo' is not a stage (inventory, connectivity, "
	        "pairwise, collectives, burn)"));
	CHECK(refused("--format xml", "--format 'xml' is not table, json, csv, "
	                              "junit or html"));
	CHECK(refused("-O x.pdf", "-O x.pdf: the name must end in .json, .csv, "
	                          ".xml, .html or .txt"));
	CHECK(refused("-O", "-O needs a value"));
	CHECK(refused("--frob", "unknown option '--frob'"));
	CHECK(refused("--rails x", "unexpected argument 'x'"));
	CHECK(refused("--window 10", "--window needs --duration (the burn it "
	                             "divides)"));
	CHECK(refused("-O 1.json -O 2.json -O 3.json -O 4.json -O 5.json "
	              "-O 6.json -O 7.json -O 8.json",
	              "too many -O files"));
	/* the first bad option is the one named */
	CHECK(refused("--lat-iters 0 --np 0",
	              "--lat-iters '0' is not a number in 2..1e+06"));
	/* a short option refused inside its word ("-vx") is forgotten by
	 * the next parse, which reads its own words from the first */
	CHECK(refused("-vx", "unknown option '-vx'"));
	CHECK(parse("--np 3", &o) == CB_OK && o.np == 3);
	return check_result("test_opts_accept");
}
