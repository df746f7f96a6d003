/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_options.c - size parsing, option errors, and the numbers the
 * table prints (busbw factors, algbw units), and the result check catching
 * planted errors.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/measure.h"
#include "bench/options.h"
#include "core/comm.h"
#include "bench/verify.h"
#include "coll/reduce.h"
#include "check.h"
#include "reports/report.h"
#include "core/log.h"

static int size_ok(const char *s, size_t want)
{
	size_t got = 0;
	cb_fail_clear();
	return cb_parse_size(s, "-b", &got) == CB_OK && got == want;
}

static int size_bad(const char *s)
{
	size_t got = 12345;
	cb_fail_clear();
	int bad = cb_parse_size(s, "-b", &got) == CB_ERR_USAGE &&
	          got == 12345 && cb_fail_msg() && strstr(cb_fail_msg(), s);
	return bad;
}

/* Parse a command line given as one string. */
static cb_status_t parse(const char *line, struct cb_opts *o)
{
	static char buf[512];
	char *argv[64];
	int argc = 0;

	snprintf(buf, sizeof(buf), "collbench %s", line);
	for (char *save, *t = strtok_r(buf, " ", &save); t && argc < 63;
	     t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	argv[argc] = NULL;
	cb_fail_clear();
	return cb_opts_parse(argc, argv, o);
}

static int usage_err(const char *line, const char *needle)
{
	struct cb_opts o;
	cb_status_t st = parse(line, &o);
	int ok = st == CB_ERR_USAGE && cb_fail_msg() &&
	         strstr(cb_fail_msg(), needle) && !strchr(cb_fail_msg(), '\n');
	if (!ok)
		fprintf(stderr, "  '%s' -> %d '%s'\n", line, st,
		        cb_fail_msg() ? cb_fail_msg() : "");
	return ok;
}

/* @line is refused (usage) with exactly @msg. */
static int refused(const char *line, const char *msg)
{
	struct cb_opts o;
	cb_status_t st = parse(line, &o);
	const char *got = cb_fail_msg() ? cb_fail_msg() : "";
	int ok = st == CB_ERR_USAGE && !strcmp(got, msg);

	if (!ok)
		fprintf(stderr, "  '%s' -> %d '%s'\n    want '%s'\n", line, st,
		        got, msg);
	return ok;
}

/* The options with a plain value (a number, a size, a name): the short
 * and the long spelling land in one place, and a bad value gets one line
 * that names the option as it always did. */
static void plain_values(void)
{
	struct cb_opts o;

	CHECK(parse("--minbytes 1K --maxbytes 2K --warmup_iters 3 "
	            "--check 0 --average 2 --run_cycles 5 "
	            "--report_timestamps 1 --duration 0.5 --root 1 "
	            "--ps-servers 2 --alpha-us 3 --beta-gbps 4 --rounds 6 "
	            "--scaling-size 8K --np 3 --timeout 9 --report_gbits "
	            "--touch --datatype int8 --op max --coll broadcast "
	            "--algo linear --schedule-log s.txt --tuning t.csv",
	            &o) == CB_OK);
	CHECK(o.min_bytes == 1024 && o.max_bytes == 2048 && o.warmup == 3 &&
	      o.check == 0 && o.average == 2 && o.cycles == 5 &&
	      o.timestamps == 1 && o.duration_s == 0.5 && o.root == 1 &&
	      o.ps_servers == 2 && o.alpha_us == 3 && o.beta_gbps == 4 &&
	      o.rounds == 6 && o.scaling_bytes == 8192 && o.np == 3 &&
	      o.np_set && o.timeout_s == 9 && o.report_gbits && o.touch &&
	      o.dtypes[0] == CB_DT_INT8 && o.ops[0] == CB_OP_MAX &&
	      o.colls[0] == CB_COLL_BROADCAST && !strcmp(o.algo, "linear") &&
	      !strcmp(o.schedule_log, "s.txt") && !strcmp(o.tuning, "t.csv"));
	CHECK(parse("-b 16 -w 1 -c 0 -a 0 -N 0 -S 1 -D 2 -r 0 -T 1", &o) ==
	              CB_OK &&
	      o.min_bytes == 16 && o.warmup == 1 && o.check == 0 &&
	      o.average == 0 && o.cycles == 0 && o.timestamps == 1 &&
	      o.duration_s == 2 && o.root == 0 && o.timeout_s == 1);
	CHECK(parse("--tcp-streams 2 --gid-index 3 --ib-sl 4", &o) == CB_OK &&
	      !strcmp(cb_optset_get(&o.tp, "tcp-streams"), "2") &&
	      !strcmp(cb_optset_get(&o.tp, "gid-index"), "3") &&
	      !strcmp(cb_optset_get(&o.tp, "ib-sl"), "4"));
	/* -n and -D: one or the other */
	CHECK(parse("--iters 4", &o) == CB_OK && o.iters == 4 && o.iters_set);
	CHECK(parse("-n 5", &o) == CB_OK && o.iters == 5 && o.iters_set);
	CHECK(refused("-w -1", "-w '-1' is not a whole number in 0..1000000"));
	CHECK(refused("--warmup_iters x",
	              "-w 'x' is not a whole number in 0..1000000"));
	CHECK(refused("--iters 0",
	              "-n '0' is not a whole number in 1..100000000"));
	CHECK(refused("--check 2", "-c '2' is not a whole number in 0..1"));
	CHECK(refused("--average 4", "-a '4' is not a whole number in 0..3"));
	CHECK(refused("--run_cycles -1",
	              "-N '-1' is not a whole number in 0..1000000000"));
	CHECK(refused("--report_timestamps 2",
	              "-S '2' is not a whole number in 0..1"));
	CHECK(refused("--rounds 0",
	              "--rounds '0' is not a whole number in 1..1000"));
	CHECK(refused("-r x",
	              "--root 'x' is not a whole number in 0..16777216"));
	CHECK(refused("--ps-servers -1", "--ps-servers '-1' is not a whole "
	                                 "number in 0..16777216"));
	CHECK(refused("--np 0", "--np '0' is not a whole number in 1..256"));
	CHECK(refused("--stepfactor 1", "-f '1' is not a number in "
	                                "1.0001..1024"));
	CHECK(refused("--duration 0",
	              "-D/--duration '0' is not a number in 0.001..86400"));
	CHECK(refused("-T 0", "--timeout '0' is not a number in 0.1..86400"));
	CHECK(refused("--alpha-us 0",
	              "--alpha-us '0' is not a number in 1e-06..1e+07"));
	CHECK(refused("--beta-gbps 1e7",
	              "--beta-gbps '1e7' is not a number in 1e-06..1e+06"));
	CHECK(refused("--minbytes 1Q", "-b '1Q' is not a size (a number with "
	                               "an optional K, M, G or T suffix)"));
	CHECK(refused("--maxbytes x", "-e 'x' is not a size (a number with an "
	                              "optional K, M, G or T suffix)"));
	CHECK(refused("--scaling-size x", "--scaling-size 'x' is not a size (a "
	                                  "number with an optional K, M, G or "
	                                  "T suffix)"));
	CHECK(refused("--stepbytes 0", "-i must be above 0"));
	CHECK(refused("--chunk-bytes 7", "--chunk-bytes must be at least 8"));
	CHECK(refused("--tcp-streams 0",
	              "--tcp-streams '0' is not a whole number in 1..8"));
	CHECK(refused("--gid-index 256",
	              "--gid-index '256' is not a whole number in 0..255"));
	CHECK(refused("--ib-sl 16", "--ib-sl '16' is not a whole number in "
	                            "0..15"));
	CHECK(refused("--np", "option --np needs a value"));
	CHECK(refused("-w", "option -w needs a value"));
	CHECK(refused("--touch=1", "unknown option '--touch=1'"));
	CHECK(refused("-Q", "unknown option '-Q'"));
}

int main(void)
{
	/* sizes */
	CHECK(size_ok("0", 0));
	CHECK(size_ok("8", 8));
	CHECK(size_ok("1K", 1024));
	CHECK(size_ok("64k", 65536));
	CHECK(size_ok("64M", 64u << 20));
	CHECK(size_ok("2G", 2ull << 30));
	CHECK(size_ok("1T", 1ull << 40));
	CHECK(size_ok("4KiB", 4096));
	CHECK(size_ok("100B", 100));
	CHECK(size_bad("1X"));
	CHECK(size_bad("-4"));
	CHECK(size_bad(""));
	CHECK(size_bad("K"));
	CHECK(size_bad("1.5M"));
	CHECK(size_bad("12 34"));
	CHECK(size_bad("99999999999999999999999"));
	CHECK(size_bad("2T"));

	/* option defaults and values */
	struct cb_opts o;
	CHECK(parse("", &o) == CB_OK && o.min_bytes == 8 &&
	      o.max_bytes == 64u << 20 && o.np == 2 && o.iters == 20 &&
	      o.check == 1 && !strcmp(o.transport, "auto"));
	CHECK(parse("-b 1K -e 1M -f 4 -n 7 -w 0 -c 0 -d all -o max,min", &o) ==
	              CB_OK &&
	      o.min_bytes == 1024 && o.max_bytes == 1u << 20 && o.factor == 4 &&
	      o.iters == 7 && o.warmup == 0 && o.check == 0 &&
	      o.ndtypes == CB_DT_COUNT && o.nops == 2 && o.ops[0] == CB_OP_MAX);
	CHECK(parse("-b 128M", &o) == CB_OK && o.max_bytes == 128u << 20);
	CHECK(parse("-b 1M", &o) == CB_OK && o.max_bytes == 64u << 20);
	CHECK(parse("run --np 5 --transport tcp -i 4K", &o) == CB_OK &&
	      o.np == 5 && o.step_bytes == 4096 && o.cmd == CB_CMD_RUN);
	CHECK(parse("info", &o) == CB_OK && o.cmd == CB_CMD_INFO);
	CHECK(parse("-O x.csv -O y.txt --format csv", &o) == CB_OK &&
	      o.noutputs == 3 && o.outputs[1].format == CB_FMT_CSV &&
	      o.outputs[2].format == CB_FMT_TABLE &&
	      o.outputs[0].format == CB_FMT_CSV);

	/* collectives and algorithms */
	CHECK(parse("--coll all", &o) == CB_OK && o.ncolls == CB_COLL_COUNT &&
	      o.algo_mode == CB_ALGO_AUTO);
	CHECK(parse("--coll broadcast,reduce -r 3 --algo linear", &o) ==
	              CB_OK &&
	      o.ncolls == 2 && o.colls[1] == CB_COLL_REDUCE && o.root == 3 &&
	      o.algo_mode == CB_ALGO_LIST && o.nalgos == 1 &&
	      !strcmp(o.algos[0].algo->name, "linear"));
	CHECK(parse("--algo ring,tree", &o) == CB_OK && o.nalgos == 2 &&
	      !strcmp(o.algos[1].algo->name, "tree"));
	CHECK(parse("--algo all", &o) == CB_OK && o.nalgos >= 12);
	CHECK(parse("--algo rd:0-64K;ring:64K-max", &o) == CB_OK &&
	      o.algo_mode == CB_ALGO_RANGES && o.nalgos == 2 &&
	      o.algos[0].lo == 0 && o.algos[0].hi == 65536 &&
	      o.algos[1].lo == 65536 && o.algos[1].hi == SIZE_MAX);
	CHECK(parse("--ps-servers 2 --algo ps --alpha-us 2.5 --beta-gbps 10",
	            &o) == CB_OK &&
	      o.ps_servers == 2 && o.alpha_us == 2.5 && o.beta_gbps == 10);
	CHECK(parse("--ranks 2:max:x2 --scaling-size 1M", &o) == CB_OK &&
	      o.ranks && o.scaling_bytes == 1u << 20);
	{
		int v[CB_MAX_COUNTS], n;
		CHECK(cb_parse_counts("2:max:x2", "--ranks", 16, v, &n) ==
		              CB_OK &&
		      n == 4 && v[0] == 2 && v[3] == 16);
		CHECK(cb_parse_counts("1:8:+3", "--ranks", 16, v, &n) ==
		              CB_OK &&
		      n == 3 && v[0] == 1 && v[1] == 4 && v[2] == 7);
		CHECK(cb_parse_counts("8,2,4,2", "--nodes", 6, v, &n) ==
		              CB_OK &&
		      n == 2 && v[0] == 2 && v[1] == 4);
		CHECK(cb_parse_counts("3,max", "--ranks", 5, v, &n) == CB_OK &&
		      n == 2 && v[1] == 5);
		CHECK(cb_parse_counts("9", "--ranks", 4, v, &n) ==
		      CB_ERR_USAGE);
		CHECK(cb_parse_counts("1:max:x1", "--ranks", 4, v, &n) ==
		      CB_ERR_USAGE);
		CHECK(cb_parse_counts("1:max:+1", "--ranks", 1000, v, &n) ==
		      CB_ERR_USAGE);
		CHECK(cb_parse_counts("1:max:+1", "--ranks", 0, v, &n) ==
		      CB_OK);
		/* a list: too many values is an error; checking the syntax
		 * alone (max 0), a list of more is read to its end */
		char many[400] = "";
		for (int i = 1; i <= CB_MAX_COUNTS + 1; i++)
			strcat(many, i > 1 ? ",2" : "2");
		CHECK(cb_parse_counts(many, "--ranks", 1000, v, &n) ==
		      CB_ERR_USAGE);
		CHECK(cb_parse_counts(many, "--ranks", 0, v, &n) == CB_OK);
		strcat(many, ",x");
		CHECK(cb_parse_counts(many, "--ranks", 0, v, &n) ==
		      CB_ERR_USAGE);
	}

	/* option errors: one line naming the problem */
	CHECK(usage_err("--algo rd:0-64K;ring", "size range"));
	CHECK(usage_err("--algo rd:64K-1K", "empty"));
	CHECK(usage_err("--algo ring,rd:0-1K", "every entry"));
	CHECK(usage_err("--algo ring,nope", "nope"));
	CHECK(usage_err("--coll alltoall --algo ring", "pairwise"));
	CHECK(usage_err("--coll barrier,allreduce --algo ring",
	                "dissemination"));
	CHECK(usage_err("--ranks 0,2", "--ranks"));
	CHECK(usage_err("--nodes two", "--nodes"));
	CHECK(usage_err("--ranks 2 --nodes 1", "one sweep"));
	CHECK(usage_err("-r -1", "--root"));
	CHECK(usage_err("--ps-servers x", "--ps-servers"));
	CHECK(usage_err("--alpha-us 0", "--alpha-us"));
	CHECK(usage_err("--beta-gbps fast", "--beta-gbps"));
	CHECK(usage_err("--scaling-size 1Q", "--scaling-size"));
	CHECK(usage_err("--transport carrier-pigeon", "carrier-pigeon"));
	CHECK(usage_err("--algo bogus", "bogus"));
	CHECK(usage_err("--coll allgatherv", "allgatherv"));
	CHECK(usage_err("-d float128", "float128"));
	CHECK(usage_err("-o avg2", "avg2"));
	CHECK(usage_err("-b 1X", "1X"));
	CHECK(usage_err("-b -4", "-4"));
	CHECK(usage_err("-b 1M -e 1K", "below -b"));
	CHECK(usage_err("--np 0", "--np"));
	CHECK(usage_err("--np 100000", "--np"));
	CHECK(usage_err("--np two", "--np"));
	CHECK(usage_err("-n 0", "-n"));
	CHECK(usage_err("-c 2", "-c"));
	CHECK(usage_err("-f 1", "-f"));
	CHECK(usage_err("-i 0", "-i"));
	CHECK(usage_err("--timeout 0", "--timeout"));
	CHECK(usage_err("--timeout soon", "--timeout"));
	CHECK(usage_err("--format xml", "xml"));
	CHECK(usage_err("-O out.pdf", "out.pdf"));
	CHECK(usage_err("--rendezvous nohostport", "nohostport"));
	CHECK(usage_err("--rendezvous host:99999", "host:99999"));
	CHECK(usage_err("--rendezvous :5000", ":5000"));
	CHECK(usage_err("--tcp-streams 9", "--tcp-streams"));
	CHECK(usage_err("--frobnicate", "--frobnicate"));
	CHECK(usage_err("-b", "-b"));
	CHECK(usage_err("launch", "launch"));

	/* nccl-tests' and perftest's spellings (docs/options.md) */
	CHECK(parse("", &o) == CB_OK && o.average == 1 && o.cycles == 1 &&
	      o.timestamps == 0);
	CHECK(parse("-T 5", &o) == CB_OK && o.timeout_s == 5);
	CHECK(parse("--timeout 7.5", &o) == CB_OK && o.timeout_s == 7.5);
	CHECK(parse("-a 0", &o) == CB_OK && o.average == 0);
	CHECK(parse("--average 3", &o) == CB_OK && o.average == 3);
	CHECK(parse("-N 0", &o) == CB_OK && o.cycles == 0);
	CHECK(parse("--run_cycles 4", &o) == CB_OK && o.cycles == 4);
	CHECK(parse("-S 1", &o) == CB_OK && o.timestamps == 1);
	CHECK(parse("--report_timestamps 0", &o) == CB_OK && o.timestamps == 0);
	CHECK(parse("-J r.json", &o) == CB_OK && o.noutputs == 2 &&
	      o.outputs[1].format == CB_FMT_JSON &&
	      !strcmp(o.outputs[1].path, "r.json"));
	CHECK(parse("--output_file results", &o) == CB_OK && o.noutputs == 2 &&
	      o.outputs[1].format == CB_FMT_JSON);
	CHECK(parse("--verbs-eager-bytes 4K", &o) == CB_OK &&
	      cb_optset_get(&o.tp, "verbs-eager-bytes") &&
	      !strcmp(cb_optset_get(&o.tp, "verbs-eager-bytes"), "4096"));
	CHECK(parse("--verbs-eager-bytes 100", &o) == CB_OK &&
	      !strcmp(cb_optset_get(&o.tp, "verbs-eager-bytes"), "100"));
	CHECK(usage_err("--verbs-eager-bytes 9K", "--verbs-eager-bytes"));
	CHECK(usage_err("--verbs-eager-bytes 1X", "1X"));
	CHECK(usage_err("-a 4", "-a"));
	CHECK(usage_err("-N -1", "-N"));
	CHECK(usage_err("tune -N 2", "--rounds"));
	CHECK(usage_err("-S 2", "-S"));
	CHECK(usage_err("-J r.csv", "-O r.csv"));
	CHECK(usage_err("-T never", "--timeout"));
	CHECK(usage_err("-z 0", "always blocking"));
	CHECK(usage_err("--blocking 1", "always blocking"));
	/* perftest's -D and --report_gbits */
	CHECK(parse("", &o) == CB_OK && o.duration_s == 0 &&
	      o.report_gbits == 0);
	CHECK(parse("-D 2.5", &o) == CB_OK && o.duration_s == 2.5);
	CHECK(parse("--duration 10", &o) == CB_OK && o.duration_s == 10);
	CHECK(parse("--report_gbits", &o) == CB_OK && o.report_gbits == 1);
	CHECK(usage_err("-D 0", "-D/--duration '0'"));
	CHECK(usage_err("-D -3", "-D/--duration '-3'"));
	CHECK(usage_err("-D 10s", "-D/--duration '10s'"));
	CHECK(usage_err("-D 100000", "0.001..86400"));
	CHECK(usage_err("-D 1 -n 5", "give one"));
	CHECK(usage_err("-n 5 --duration 1", "give one"));
	CHECK(usage_err("tune -D 1", "tune: -D"));
	CHECK(usage_err("--algo ps-async -D 1", "ps-async runs sessions"));
	CHECK(usage_err("--algo ring,ps-async -D 1", "ps-async runs sessions"));
	CHECK(parse("--algo all -D 1", &o) == CB_OK);
	/* lists with an empty item, overlapping ranges: refused */
	CHECK(usage_err("--coll allreduce,", "empty item"));
	CHECK(usage_err("--coll ,allreduce", "empty item"));
	CHECK(usage_err("-d float32,,int8", "empty item"));
	CHECK(usage_err("-o sum,", "empty item"));
	CHECK(usage_err("--algo ring,", "empty item"));
	CHECK(usage_err("--algo rd:0-1K;;ring:1K-max", "empty item"));
	CHECK(usage_err("--algo ring:0-1M;rd:512K-max", "overlap"));
	CHECK(usage_err("--algo rd:0-max;ring:64K-max", "overlap"));
	CHECK(parse("--algo rd:0-512K;ring:512K-max", &o) == CB_OK);
	/* each collective's own algorithm over all sizes: no overlap */
	CHECK(parse("--coll allreduce,alltoall --algo "
	            "ring:0-max;pairwise:0-max",
	            &o) == CB_OK &&
	      o.nalgos == 2);

	/* -a: the row's time from the workers' means */
	{
		int members[3] = { 0, 1, 2 };
		struct cb_sect g = { .coll = CB_COLL_ALLREDUCE,
			             .members = members,
			             .n = 3,
			             .me = 0,
			             .nhosts = 1 };
		struct cb_rank_result all[3] = { { .mean = { 20, 20 } },
			                         { .mean = { 10, 10 } },
			                         { .mean = { 60, 60 } } };
		struct cb_coll_args a = { .coll = CB_COLL_ALLREDUCE,
			                  .count = 2 };
		struct cb_row rows[2];
		const struct cb_algo *ring = cb_algo_find("ring");
		const double want[4] = { 20, 30, 10, 60 };
		for (int av = 0; av < 4; av++) {
			char line[16];
			snprintf(line, sizeof(line), "-a %d", av);
			CHECK(parse(line, &o) == CB_OK && ring);
			cb_measure_rows(&o, &g, all, ring, &a, 8, 0, rows);
			CHECK(fabs(rows[0].time_us - want[av]) < 1e-9 &&
			      rows[0].slowest == 2);
		}
	}

	/* busbw factors as nccl-tests defines them, algbw in 1e9 B/s */
	CHECK(cb_coll_busbw_factor(CB_COLL_ALLREDUCE, 2) == 1.0);
	CHECK(fabs(cb_coll_busbw_factor(CB_COLL_ALLREDUCE, 4) - 1.5) < 1e-12);
	CHECK(fabs(cb_coll_busbw_factor(CB_COLL_ALLREDUCE, 3) - 4.0 / 3) <
	      1e-12);
	CHECK(cb_coll_busbw_factor(CB_COLL_ALLREDUCE, 1) == 0.0);
	CHECK(fabs(cb_algbw_gbps(1000000000, 1e6) - 1.0) < 1e-12);
	CHECK(fabs(cb_algbw_gbps(64u << 20, 1000.0) - 67.108864) < 1e-9);
	CHECK(cb_algbw_gbps(8, 0.0) == 0.0);
	CHECK(fabs(cb_busbw(2.0, 1.5) - 3.0) < 1e-12);

	/* the result check is exact and can fail: compute a correct
	 * allreduce by hand, then plant errors */
	for (int dt = 0; dt < CB_DT_COUNT; dt++) {
		for (int op = 0; op < CB_OP_COUNT; op++) {
			enum { NR = 5, CNT = 257 };
			size_t es = cb_dtype_bytes(dt);
			char *acc = calloc(CNT, es), *in = calloc(CNT, es);
			cb_fill(dt, op, 0, acc, CNT);
			for (int r = 1; r < NR; r++) {
				cb_fill(dt, op, r, in, CNT);
				cb_reduce(dt, op, acc, acc, in, CNT);
			}
			CHECK(cb_check_allreduce(dt, op, NR, acc, CNT) == 0);
			/* one rank too few is wrong somewhere */
			CHECK(cb_check_allreduce(dt, op, NR - 1, acc, CNT) > 0);
			/* a flipped low bit in two elements is seen */
			acc[3 * es] ^= 1;
			acc[200 * es] ^= 1;
			CHECK(cb_check_allreduce(dt, op, NR, acc, CNT) == 2);
			free(acc);
			free(in);
		}
	}
	/* the option view (core/env.h): the flags, then, once, the
	 * documented variables and no others; a flag wins */
	{
		struct cb_opts o;
		struct cb_optset s = { 0 };
		static char big[2000];
		char key[16];
		const char *v;

		setenv("COLLBENCH_TCP_STREAMS", "3", 1);
		setenv("COLLBENCH_TCP_IF", "eth9", 1);
		setenv("COLLBENCH_NIC", "mlx5_0", 1); /* not one of them */
		CHECK(parse("--tcp-if lo", &o) == CB_OK);
		CHECK((v = cb_optset_get(&o.tp, "tcp-if")) && !strcmp(v, "lo"));
		CHECK((v = cb_optset_get(&o.tp, "tcp-streams")) &&
		      !strcmp(v, "3"));
		CHECK(cb_optset_get(&o.tp, "nic") == NULL);
		CHECK(o.ring_put == 1);
		/* parsed once: a later change does not reach the view */
		setenv("COLLBENCH_TCP_STREAMS", "5", 1);
		CHECK((v = cb_optset_get(&o.tp, "tcp-streams")) &&
		      !strcmp(v, "3"));
		setenv("COLLBENCH_RING_PUT", "0", 1);
		CHECK(parse("", &o) == CB_OK && o.ring_put == 0);
		setenv("COLLBENCH_RING_PUT", "1", 1);
		CHECK(parse("", &o) == CB_OK && o.ring_put == 1);
		unsetenv("COLLBENCH_RING_PUT");
		unsetenv("COLLBENCH_TCP_STREAMS");
		unsetenv("COLLBENCH_TCP_IF");
		unsetenv("COLLBENCH_NIC");
		memset(big, 'x', sizeof(big) - 1);
		setenv("COLLBENCH_TOPO_XML", big, 1);
		CHECK(usage_err("",
		                "COLLBENCH_TOPO_XML: the value is too long"));
		unsetenv("COLLBENCH_TOPO_XML");
		/* put replaces; a full view says so */
		CHECK(cb_optset_put(&s, "a", "1") == CB_OK &&
		      cb_optset_put(&s, "a", "2") == CB_OK && s.n == 1 &&
		      !strcmp(cb_optset_get(&s, "a"), "2"));
		for (int i = 1; i < CB_OPTSET_MAX; i++) {
			snprintf(key, sizeof(key), "k%d", i);
			CHECK(cb_optset_put(&s, key, "v") == CB_OK);
		}
		cb_fail_clear();
		CHECK(cb_optset_put(&s, "one-more", "v") == CB_ERR_USAGE &&
		      cb_fail_msg() && strstr(cb_fail_msg(), "one-more"));
		CHECK(cb_optset_get(NULL, "a") == NULL);
	}
	plain_values();
	/* inputs differ between ranks, or the check would prove little */
	CHECK(cb_input_value(CB_OP_SUM, 0, 3) !=
	      cb_input_value(CB_OP_SUM, 1, 3));
	CHECK(cb_input_value(CB_OP_MAX, 0, 3) !=
	      cb_input_value(CB_OP_MAX, 1, 3));
	return check_result("options");
}
