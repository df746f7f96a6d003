/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_results.c - the CSV and JSON writers on a fixed run
 * (golden files in tests/data/results), the JSON reader: a round trip
 * (read the golden file, write it, same bytes) and every kind of bad file
 * refused with one line; and compare on an identical and a regressed pair.
 *
 * COLLBENCH_UPDATE_GOLDEN=1 rewrites the golden files instead of checking
 * them (then review the diff).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/log.h"
#include "reports/report.h"
#include "reports/results.h"

static const struct cb_row fixed[] = {
	{ "allreduce", "ring", "shm", "float32", "sum",  4,   1,     8,   2,
	  0,           -1,     1.25,  0.0064,    0.0096, 0,   1.125, 1.0, 1.2,
	  2.5,         3.75,   2,     NAN,       NAN,    NAN, NAN,   NAN, 20 },
	{ "allreduce", "ring", "shm", "float32",  "sum",  4, 1,     8,   2,
	  1,           -1,     1.5,   0.00533333, 0.008,  0, 1.125, 1.1, 1.4,
	  2.0,         2.25,   3,     1234.5,     1234.5, 1, 3,     7,   20 },
	{ "allreduce", "rd",      "shm",    "float32", "sum",   4,
	  1,           67108864,  16777216, 0,         -1,      12345.678,
	  5.43593,     8.15390,   0,        11000.5,   12000.0, 12300.0,
	  13000.25,    14000.125, 1,        NAN,       NAN,     NAN,
	  NAN,         NAN,       20 },
	{ "broadcast", "tree", "shm+tcp", "bfloat16", "none", 8,      2,
	  1024,        512,    0,         3,          10.0,   0.1024, 0.1024,
	  7,           9.5,    9.0,       10.0,       11.0,   12.0,   0,
	  NAN,         NAN,    NAN,       NAN,        NAN,    20 },
	{ "barrier", "dissemination",
	  "tcp",     "float32",
	  "none",    2,
	  2,         0,
	  0,         0,
	  -1,        20.5,
	  0,         0,
	  0,         18.0,
	  19.0,      20.0,
	  25.0,      30.0,
	  -1,        NAN,
	  NAN,       NAN,
	  NAN,       NAN,
	  20 },
};
#define NFIXED (int)(sizeof(fixed) / sizeof(fixed[0]))

static const struct cb_run_info info = {
	.colls = "allreduce, broadcast, barrier",
	.algo = "ring,rd,tree,dissemination",
	.transport = "shm+tcp",
	.ranks = 8,
	.hosts = 2,
	.host_names = "node01, node02",
	.iters = 20,
	.warmup = 5,
	.check = 1,
	.alpha_us = 1.5,
	.beta_gbps = 12.5,
	.gamma_gbps = 20.25,
	.model_source = "alpha and beta measured between ranks 0 and 4; "
	                "gamma measured",
	.binding = "rank 0 -> core 0 (NUMA 0, cpus 0; NIC eth0)",
	.inventory = "2 hosts: node01, node02: 2 cores\nnode02 differs: "
	             "\"eth0\" <slow> & 'down'",
};

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *b = NULL;
	size_t n = 0;

	if (!f)
		return NULL;
	FILE *m = open_memstream(&b, &n);
	int c;
	while ((c = fgetc(f)) != EOF)
		fputc(c, m);
	fclose(m);
	fclose(f);
	return b;
}

/* @got (a file) equals @golden, or, updating, becomes it. */
static int same_file(const char *got, const char *golden)
{
	char *a = slurp(got), *b;
	int ok;

	if (getenv("COLLBENCH_UPDATE_GOLDEN")) {
		FILE *f = fopen(golden, "w");
		fputs(a, f);
		fclose(f);
	}
	b = slurp(golden);
	ok = a && b && !strcmp(a, b);
	if (!ok)
		fprintf(stderr, "%s differs from %s\n", got, golden);
	free(a);
	free(b);
	return ok;
}

static struct cb_results *fixed_results(void)
{
	char *argv[] = { "collbench", "--coll", "allreduce,broadcast,barrier",
		         "-O", "x \"y\".json" };
	char *hosts[] = { "node01", "node02" };
	char *env[] = { "HOME=/root",
		        "COLLBENCH_SHM_MAP=0",
		        "RANK=0",
		        "SLURM_JOB_ID=77",
		        "MASTER_ADDR=node01",
		        "COLLBENCH_TCP_IF=eth0",
		        "PATH=/bin",
		        NULL };
	struct cb_run_settings o = {
		.min_bytes = 8,
		.max_bytes = 64u << 20,
		.factor = 2,
		.iters = 20,
		.warmup = 5,
		.check = 1,
		.ndtypes = 2,
		.dtypes = { CB_DT_FLOAT32, CB_DT_BFLOAT16 },
		.nops = 1,
		.ops = { CB_OP_SUM },
		.timeout_s = 30,
		.sweep_by = "nodes",
		.sweep_list = "1,2",
		.average = 1,
		.cycles = 1,
	};
	struct cb_results_meta m = {
		.argc = 5,
		.argv = argv,
		.build = "meson 1.0.1, gcc 12.2.0, buildtype release",
		.start = 1796083200, /* 2026-12-01T00:00:00Z */
		.ri = &info,
		.settings = &o,
		.hosts = hosts,
		.nhosts = 2,
		.env = env,
	};
	struct cb_results *r = NULL;

	CHECK(cb_results_from_meta(&m, &r) == CB_OK);
	if (!r)
		exit(1);
	cb_results_add_rows(r, fixed, NFIXED);
	cb_results_end(r, 0, NULL);
	return r;
}

static void writers(const char *data, const char *tmp)
{
	char got[512], golden[512];
	struct cb_results *r = fixed_results();
	FILE *f;

	snprintf(got, sizeof(got), "%s/fixed.csv", tmp);
	f = fopen(got, "w");
	cb_report_header(f, CB_FMT_CSV, &info);
	for (int i = 0; i < NFIXED; i++)
		cb_report_point(f, CB_FMT_CSV, &fixed[i], 1);
	cb_report_footer(f, CB_FMT_CSV, 7, 1.0, 0);
	fclose(f);
	snprintf(golden, sizeof(golden), "%s/golden.csv", data);
	CHECK(same_file(got, golden));

	snprintf(got, sizeof(got), "%s/fixed.json", tmp);
	f = fopen(got, "w");
	CHECK(cb_results_write(f, r) == CB_OK);
	fclose(f);
	snprintf(golden, sizeof(golden), "%s/golden.json", data);
	CHECK(same_file(got, golden));
	cb_results_free(r);

	/* read the golden file back and write it: the same bytes */
	struct cb_results *back = NULL;
	CHECK(cb_results_load(golden, &back) == CB_OK);
	if (!back)
		return;
	CHECK(back->nrows == (size_t)NFIXED);
	CHECK(back->rows[3].root == 3 && back->rows[0].root == -1);
	CHECK(back->rows[3].wrong == 7 && back->rows[1].inplace == 1);
	CHECK(back->rows[4].slowest == -1 && back->rows[2].bytes == 67108864);
	CHECK(fabs(back->rows[2].time_us - 12345.678) < 1e-9);
	CHECK(!strcmp(back->rows[3].dtype, "bfloat16"));
	CHECK(!strcmp(cb_results_str(back, "status"), "complete"));
	snprintf(got, sizeof(got), "%s/again.json", tmp);
	f = fopen(got, "w");
	CHECK(cb_results_write(f, back) == CB_OK);
	fclose(f);
	CHECK(same_file(got, golden));

	/* compare: identical, then one row regressed and one only in new */
	struct cb_compare_sum sum;
	FILE *null = fopen("/dev/null", "w");
	cb_compare(null, back, back, 0.10, &sum);
	/* row 3 has wrong values: compare flags it even against itself */
	CHECK(sum.matched == NFIXED && sum.regressions == 1 && sum.wrong == 1);
	back->rows[3].wrong = 0;
	cb_compare(null, back, back, 0.10, &sum);
	CHECK(sum.regressions == 0 && sum.only_base == 0 && sum.only_new == 0);
	struct cb_results *worse = NULL;
	CHECK(cb_results_load(golden, &worse) == CB_OK);
	worse->rows[3].wrong = 0;
	worse->rows[2].busbw_gbps *= 0.85; /* beyond 10% */
	worse->rows[0].busbw_gbps *= 0.95; /* within */
	worse->rows[4].time_us *= 1.5;     /* barrier: by time */
	worse->rows[1].bytes = 16;         /* only in each */
	cb_compare(null, back, worse, 0.10, &sum);
	CHECK(sum.regressions == 2 && sum.only_base == 1 && sum.only_new == 1);
	cb_compare(null, back, worse, 0.60, &sum);
	CHECK(sum.regressions == 0);
	fclose(null);
	cb_results_free(worse);
	cb_results_free(back);
}

/* @text as a file fails to load with one line that holds @needle. */
static int refused(const char *tmp, const char *text, const char *needle)
{
	char path[512];
	struct cb_results *r = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "%s/bad.json", tmp);
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	cb_fail_clear();
	cb_status_t st = cb_results_load(path, &r);
	const char *msg = cb_fail_msg();
	int ok = st == CB_ERR_USAGE && r == NULL && msg &&
	         strstr(msg, needle) && !strchr(msg, '\n');
	if (!ok)
		fprintf(stderr, "'%s': got '%s', want '%s'\n", text,
		        msg ? msg : "(none)", needle);
	return ok;
}

#define HEAD "{\"schema\": \"collbench-results\", \"schema_version\": 1, "
#define ROW                                                                    \
	"\"collective\": \"allreduce\", \"algo\": \"ring\", \"transport\": "   \
	"\"shm\", \"dtype\": \"float32\", \"op\": \"sum\", \"ranks\": 2, "     \
	"\"hosts\": 1, \"bytes\": 8, \"count\": 2, \"inplace\": false, "       \
	"\"time_us\": 1, \"algbw_gbps\": 0.008, \"busbw_gbps\": 0.008, "       \
	"\"wrong\": 0, \"algo_model_us\": 1, \"time_min_us\": 1, "             \
	"\"time_p50_us\": 1, \"time_p99_us\": 1, \"time_max_us\": 1, "         \
	"\"slowest_rank\": 0"

static void bad_files(const char *tmp)
{
	struct cb_results *r = NULL;

	cb_fail_clear();
	CHECK(cb_results_load("/nonexistent/x.json", &r) == CB_ERR_USAGE &&
	      strstr(cb_fail_msg(), "cannot read"));
	CHECK(refused(tmp, "", "empty"));
	CHECK(refused(tmp, "collbench 0.1.0\n", "not JSON"));
	CHECK(refused(tmp, "{\n\"schema\": \n", "cut short"));
	CHECK(refused(tmp, "{\"a\": 1}", "not collbench results"));
	CHECK(refused(tmp, "[1, 2]", "not collbench results"));
	CHECK(refused(tmp, HEAD "\"rows\": []} x", "text after"));
	CHECK(refused(tmp,
	              "{\"schema\": \"collbench-results\", "
	              "\"schema_version\": 2, \"rows\": []}",
	              "newer"));
	CHECK(refused(tmp,
	              "{\"schema\": \"collbench-results\", "
	              "\"schema_version\": \"1\", \"rows\": []}",
	              "schema_version"));
	CHECK(refused(tmp, HEAD "\"rows\": {}}", "no \"rows\""));
	CHECK(refused(tmp, HEAD "\"rows\": [7]}", "row 0 is not an object"));
	CHECK(refused(tmp, HEAD "\"rows\": [{" ROW "}]}",
	              "\"root\" is missing"));
	CHECK(refused(tmp, HEAD "\"rows\": [{" ROW ", \"root\": \"0\"}]}",
	              "\"root\" is not a whole number"));
	CHECK(refused(tmp,
	              HEAD "\"rows\": [{" ROW ", \"root\": null}, {" ROW
	                   ", \"root\": -2}]}",
	              "row 1: \"root\" is out of range"));
	CHECK(refused(tmp,
	              HEAD "\"rows\": [{\"collective\": \"allreduce0123456789"
	                   "0123456789\"}]}",
	              "\"collective\" is too long"));
	/* a good one with an unknown member: kept, not refused */
	char path[512];
	snprintf(path, sizeof(path), "%s/ok.json", tmp);
	FILE *f = fopen(path, "w");
	fputs(HEAD "\"future\": {\"x\": 1}, \"rows\": [{" ROW
	           ", \"root\": null, \"extra\": true}]}",
	      f);
	fclose(f);
	CHECK(cb_results_load(path, &r) == CB_OK && r && r->nrows == 1 &&
	      r->rows[0].root == -1 && r->rows[0].busbw_gbps == 0.008);
	cb_results_free(r);
}

int main(int argc, char **argv)
{
	char tmp[] = "/tmp/cb-test-results-XXXXXX";

	if (argc < 2) {
		fprintf(stderr, "usage: test_results DATA_DIR\n");
		return 2;
	}
	if (!mkdtemp(tmp))
		return 1;
	writers(argv[1], tmp);
	bad_files(tmp);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmp);
	return check_result("results");
}
