/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_accept.c - acceptance's pure parts, on made-up clusters:
 *  - the round-robin tournament: every pair once, no node twice a round;
 *  - the judgement: a healthy cluster has no finding; one bad host is named
 *    as the host (4 and 8 hosts: the reference survives half the pairs being
 *    slow); one slow pair as the path; two groups slow to each other as a
 *    shared switch or uplink; latency; absolute expectations (the whole
 *    fabric once); --rails naming the host whose every NIC is slow;
 *    unreachable hosts and pairs; suspects judged against controls
 *    measured alone; shared cores leaving latency unjudged;
 *  - the writers: table, CSV, JUnit, and JSON read back by the results
 *    reader;
 *  - NIC readers and their comparison on a made-up sysfs tree.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acceptance/accept.h"
#include "check.h"
#include "core/log.h"
#include "reports/results.h"
#include "topo/nic.h"

static void test_tournament(void)
{
	int pairs[64][2];

	for (int m = 1; m <= 13; m++) {
		int seen[16][16] = { { 0 } }, total = 0;
		int rounds = cb_acc_rounds(m);
		CHECK(rounds == (m < 2 ? 0 : m % 2 ? m : m - 1));
		for (int r = 0; r < rounds; r++) {
			int busy[16] = { 0 };
			int n = cb_acc_round_pairs(m, r, pairs);
			CHECK(n == m / 2);
			for (int i = 0; i < n; i++) {
				int a = pairs[i][0], b = pairs[i][1];
				CHECK(a < b && a >= 0 && b < m);
				CHECK(!busy[a] && !busy[b]);
				busy[a] = busy[b] = 1;
				seen[a][b]++;
				total++;
			}
		}
		CHECK(total == m * (m - 1) / 2);
		for (int a = 0; a < m; a++)
			for (int b = a + 1; b < m; b++)
				CHECK(seen[a][b] == 1);
	}
}

/* A cluster of @n hosts, one node each, every pair at 1 GB/s each way,
 * 1.8 both ways, 10 us. */
static void cluster(struct cb_acc *a, int n, int per_host)
{
	memset(a, 0, sizeof(*a));
	a->version = "test";
	a->set = (struct cb_acc_settings){ .transport = "tcp",
		                           .bw_tolerance = 0.9,
		                           .lat_tolerance = 2.0,
		                           .coll_tolerance = 0.5,
		                           .bw_bytes = 4 << 20,
		                           .lat_iters = 200,
		                           .coll_bytes = 16 << 20,
		                           .pair_timeout_s = 10,
		                           .rails = per_host > 1 };
	a->nhosts = n;
	a->hosts = calloc((size_t)n, sizeof(*a->hosts));
	a->nnodes = n * per_host;
	a->ranks = a->nnodes;
	a->nodes = calloc((size_t)a->nnodes, sizeof(*a->nodes));
	a->pairs = calloc((size_t)a->nnodes * a->nnodes, sizeof(*a->pairs));
	for (int h = 0; h < n; h++) {
		snprintf(a->hosts[h].name, sizeof(a->hosts[h].name), "h%d", h);
		a->hosts[h].nranks = per_host;
		snprintf(a->hosts[h].nic, sizeof(a->hosts[h].nic), "eth0");
	}
	for (int x = 0; x < a->nnodes; x++) {
		a->nodes[x].host = x / per_host;
		a->nodes[x].rank = x;
		a->nodes[x].local = x % per_host;
		snprintf(a->nodes[x].nic, sizeof(a->nodes[x].nic), "eth%d",
		         x % per_host);
		if (per_host > 1)
			snprintf(a->nodes[x].name, sizeof(a->nodes[x].name),
			         "h%d.%d", x / per_host, x % per_host);
		else
			snprintf(a->nodes[x].name, sizeof(a->nodes[x].name),
			         "h%d", x);
	}
	for (int x = 0; x < a->nnodes; x++)
		for (int y = x + 1; y < a->nnodes; y++) {
			if (per_host > 1 && x / per_host == y / per_host)
				continue;
			a->pairs[a->npairs++] = (struct cb_acc_pair){
				.a = x,
				.b = y,
				.ok = 1,
				.lat_p50_us = 10,
				.lat_p99_us = 12,
				.bw_ab_gbps = 1.0,
				.bw_ba_gbps = 1.0,
				.bibw_gbps = 1.8,
			};
		}
}

static void slow(struct cb_acc *a, int x, int y, double f)
{
	struct cb_acc_pair *p = cb_acc_pair_of(a, x, y);

	p->bw_ab_gbps *= f;
	p->bw_ba_gbps *= f;
	p->bibw_gbps *= f;
}

static int count(const struct cb_acc *a, const char *kind, const char *needle)
{
	int n = 0;

	for (int i = 0; i < a->nfindings; i++)
		n += (!kind || !strcmp(a->findings[i].kind, kind)) &&
		     (!needle || strstr(a->findings[i].line, needle));
	return n;
}

static void judge(struct cb_acc *a)
{
	cb_acc_refs(a);
	cb_acc_judge_connect(a, CB_ACC_PAIRWISE);
	cb_acc_judge_pairs(a, CB_ACC_PAIRWISE);
	for (int i = 0; i < a->nfindings; i++)
		printf("  finding: %s\n", a->findings[i].line);
}

static void test_judge(void)
{
	struct cb_acc a;

	/* healthy, with a little noise */
	cluster(&a, 6, 1);
	slow(&a, 1, 2, 0.95);
	slow(&a, 3, 5, 1.05);
	judge(&a);
	CHECK(a.nfindings == 0 && !a.fail);
	cb_acc_free(&a);

	/* one bad host, 4 and 8 hosts */
	for (int n = 4; n <= 8; n += 4) {
		cluster(&a, n, 1);
		for (int y = 0; y < n; y++)
			if (y != 2)
				slow(&a, 2, y, 0.25);
		judge(&a);
		CHECK(a.ref_bw_gbps == 1.0);
		CHECK(a.nfindings == 1);
		CHECK(count(&a, "node",
		            "host h2 (eth0): bandwidth 0.25 GB/s "
		            "to every peer, 25% of the median") == 1);
		CHECK(a.fail && a.stage[CB_ACC_PAIRWISE].state == CB_ACC_FAIL);
		cb_acc_free(&a);
	}

	/* one slow path */
	cluster(&a, 5, 1);
	slow(&a, 1, 4, 0.5);
	judge(&a);
	CHECK(a.nfindings == 1 &&
	      count(&a, "path", "path h1 (eth0) - h4") == 1);
	CHECK(a.findings[0].ha == 1 && a.findings[0].hb == 4);
	cb_acc_free(&a);

	/* two groups behind an uplink: {0,1,2} slow to {5,6,7} (while
	 * fewer than half of each host's pairs are slow: beyond that, slow
	 * is the cluster's median, and only --expect-bw can tell) */
	cluster(&a, 8, 1);
	for (int x = 0; x < 3; x++)
		for (int y = 5; y < 8; y++)
			slow(&a, x, y, 0.4);
	judge(&a);
	CHECK(a.nfindings == 1 &&
	      count(&a, "group", "hosts h0,h1,h2 to hosts h5,h6,h7") == 1);
	cb_acc_free(&a);

	/* latency of one pair */
	cluster(&a, 4, 1);
	cb_acc_pair_of(&a, 0, 3)->lat_p50_us = 55;
	judge(&a);
	CHECK(a.nfindings == 1 && count(&a, "path", "latency 55 us") == 1);
	cb_acc_free(&a);
	/* ... not judged against the cluster where ranks share cores */
	cluster(&a, 4, 1);
	snprintf(a.shared_cores, sizeof(a.shared_cores), "4 ranks share 2");
	cb_acc_pair_of(&a, 0, 3)->lat_p50_us = 55;
	judge(&a);
	CHECK(a.nfindings == 0);
	a.set.expect_lat_us = 40; /* an expectation still applies */
	judge(&a);
	CHECK(count(&a, "path", "expected at most 40 us") == 1);
	cb_acc_free(&a);

	/* an expectation the whole fabric misses: said once */
	cluster(&a, 4, 1);
	a.set.expect_bw_gbps = 2.0;
	judge(&a);
	CHECK(a.nfindings == 1 &&
	      count(&a, "job", "expected at least 2 GB/s") == 1);
	cb_acc_free(&a);

	/* --rails: 3 hosts x 2 NICs, both of host 2's slow to everyone */
	cluster(&a, 3, 2);
	for (int x = 4; x < 6; x++)
		for (int y = 0; y < 4; y++)
			slow(&a, x, y, 0.3);
	judge(&a);
	CHECK(a.nfindings == 1 &&
	      count(&a, "host", "host h2: every one of its 2 NICs") == 1);
	cb_acc_free(&a);
	/* ... one NIC of host 1 */
	cluster(&a, 3, 2);
	for (int y = 0; y < 6; y++)
		if (y / 2 != 1)
			slow(&a, 3, y, 0.3);
	judge(&a);
	CHECK(a.nfindings == 1 && count(&a, "node", "node h1.1 (eth1)") == 1);
	cb_acc_free(&a);

	/* a suspect measured again alone is judged against the controls */
	cluster(&a, 4, 1);
	slow(&a, 0, 1, 0.8); /* 80% of the round's median: a suspect */
	cb_acc_refs(&a);
	CHECK(count(&a, NULL, NULL) == 0);
	struct cb_acc_pair *p = cb_acc_pair_of(&a, 0, 1);
	char why[160];
	CHECK(cb_acc_outside(&a, p, why, sizeof(why)));
	/* alone it is 1.5, the controls alone 1.6: inside */
	p->remeasured = 1;
	p->bw_ab_gbps = p->bw_ba_gbps = 1.5;
	p->bibw_gbps = 2.9;
	a.alone_bw_gbps = 1.6;
	a.alone_bibw_gbps = 3.0;
	a.alone_lat_us = 9;
	CHECK(!cb_acc_outside(&a, p, why, sizeof(why)));
	/* alone 1.2 against controls at 1.6: outside (75%) */
	p->bw_ab_gbps = p->bw_ba_gbps = 1.2;
	CHECK(cb_acc_outside(&a, p, why, sizeof(why)) && strstr(why, "75%"));
	cb_acc_free(&a);

	/* unreachable: host 3 to nobody, and the pair 0-1 */
	cluster(&a, 5, 1);
	for (int y = 0; y < 5; y++)
		if (y != 3) {
			struct cb_acc_pair *q = cb_acc_pair_of(&a, 3, y);
			q->ok = 0;
			q->fail_stage = CB_ACC_CONNECTIVITY;
			snprintf(q->error, sizeof(q->error), "connect refused");
		}
	p = cb_acc_pair_of(&a, 0, 1);
	p->ok = 0;
	p->fail_stage = CB_ACC_CONNECTIVITY;
	snprintf(p->error, sizeof(p->error), "no route");
	cb_acc_judge_connect(&a, CB_ACC_CONNECTIVITY);
	for (int i = 0; i < a.nfindings; i++)
		printf("  finding: %s\n", a.findings[i].line);
	CHECK(a.nfindings == 2);
	CHECK(count(&a, "node",
	            "host h3 (eth0) cannot reach any of its 4 "
	            "peers over tcp: connect refused") == 1);
	CHECK(count(&a, "path",
	            "h0 (eth0) cannot reach h1 (eth0) over tcp: "
	            "no route") == 1);
	/* ... and the pairwise stage does not name them again */
	int before = a.nfindings;
	cb_acc_judge_connect(&a, CB_ACC_PAIRWISE);
	CHECK(a.nfindings == before);
	cb_acc_free(&a);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *b = calloc(1, 1 << 20);

	if (f && b)
		b[fread(b, 1, (1 << 20) - 1, f)] = 0;
	if (f)
		fclose(f);
	return b;
}

static void test_writers(void)
{
	struct cb_acc a;
	char dir[] = "/tmp/cb-accept-XXXXXX", path[256];
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	cluster(&a, 4, 1);
	for (int y = 0; y < 4; y++)
		if (y != 2)
			slow(&a, 2, y, 0.25);
	for (int s = 0; s < CB_ACC_NSTAGES; s++)
		a.stage[s].state = CB_ACC_PASS;
	a.stage[CB_ACC_BURN].state = CB_ACC_SKIP;
	judge(&a);
	a.colls[a.ncolls++] = (struct cb_acc_coll){ .coll = "allreduce",
		                                    .algo = "ring",
		                                    .ranks = 4,
		                                    .hosts = 4,
		                                    .bytes = 1 << 20,
		                                    .time_us = 900,
		                                    .busbw_gbps = 1.7,
		                                    .model_busbw_gbps = 1.8 };

	snprintf(path, sizeof(path), "%s/t.txt", dir);
	f = fopen(path, "w");
	CHECK(cb_acc_write_table(f, &a) == CB_OK);
	fclose(f);
	char *t = slurp(path);
	CHECK(strstr(t, "FAIL pairwise: host h2 (eth0): bandwidth 0.25 GB/s"));
	CHECK(strstr(t, "VERDICT: FAIL (1 finding;"));
	CHECK(strstr(t, "0.25*"));
	free(t);

	snprintf(path, sizeof(path), "%s/t.csv", dir);
	f = fopen(path, "w");
	CHECK(cb_acc_write_csv(f, &a) == CB_OK);
	fclose(f);
	t = slurp(path);
	int lines = 0;
	for (char *c = t; *c; c++)
		lines += *c == '\n';
	CHECK(lines == 1 + 6);
	CHECK(!strncmp(t, "node_a,host_a,nic_a,node_b", 26));
	free(t);

	snprintf(path, sizeof(path), "%s/t.xml", dir);
	f = fopen(path, "w");
	CHECK(cb_acc_write_junit(f, &a) == CB_OK);
	fclose(f);
	t = slurp(path);
	CHECK(strstr(t, "<testsuites name=\"collbench acceptance\" tests=\"9\" "
	                "failures=\"2\""));
	CHECK(strstr(t, "<testcase classname=\"acceptance.host\" name=\"h2\""));
	CHECK(strstr(t, "<skipped/>"));
	free(t);

	snprintf(path, sizeof(path), "%s/t.json", dir);
	f = fopen(path, "w");
	CHECK(cb_acc_write_json(f, &a) == CB_OK);
	fclose(f);
	struct cb_results *r = NULL;
	CHECK(cb_results_load(path, &r) == CB_OK);
	if (r) {
		CHECK(r->nrows == 1 && !strcmp(r->rows[0].coll, "allreduce"));
		t = slurp(path);
		CHECK(strstr(t, "\"verdict\": \"FAIL\""));
		CHECK(strstr(t, "\"kind\": \"node\""));
		free(t);
		snprintf(path, sizeof(path), "%s/t.html", dir);
		f = fopen(path, "w");
		int no_plot = 0;
		CHECK(cb_report_html(f, &r, 1, &no_plot) == CB_OK);
		fclose(f);
		t = slurp(path);
		CHECK(strstr(t, "ACCEPTANCE FAIL"));
		CHECK(strstr(t, "host h2 (eth0): bandwidth 0.25 GB/s"));
		free(t);
		cb_results_free(r);
	}
	cb_acc_free(&a);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	CHECK(system(path) == 0);
}

static void put(const char *root, const char *rel, const char *val)
{
	char path[400], dir[512];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(dir, sizeof(dir), "mkdir -p $(dirname %s)", path);
	CHECK(system(dir) == 0);
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(val, f);
		fclose(f);
	}
}

static void test_nics(void)
{
	char root[] = "/tmp/cb-sysfs-XXXXXX", cmd[600];
	struct cb_nic_info n[4];

	CHECK(mkdtemp(root) != NULL);
	put(root, "class/net/eth0/operstate", "up\n");
	put(root, "class/net/eth0/speed", "25000\n");
	put(root, "class/net/eth0/mtu", "9000\n");
	put(root, "class/net/eth0/statistics/rx_errors", "3\n");
	put(root, "class/net/eth0/statistics/rx_crc_errors", "2\n");
	put(root, "bus/pci/drivers/mlx5_core/x", "");
	put(root, "module/mlx5_core/version", "5.8\n");
	put(root, "class/net/eth0/device/infiniband/mlx5_0/fw_ver",
	    "22.31.1014\n");
	snprintf(cmd, sizeof(cmd),
	         "ln -s %s/bus/pci/drivers/mlx5_core %s/class/net/eth0/device/"
	         "driver",
	         root, root);
	CHECK(system(cmd) == 0);
	put(root, "class/net/lo/operstate", "unknown\n"); /* left out */
	put(root, "class/infiniband/mlx5_0/fw_ver", "22.31.1014\n");
	put(root, "class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n");
	put(root, "class/infiniband/mlx5_0/ports/1/rate",
	    "100 Gb/sec (4X EDR)\n");
	put(root, "class/infiniband/mlx5_0/ports/1/counters/symbol_error",
	    "7\n");
	put(root, "class/infiniband/mlx5_0/ports/1/counters/link_downed",
	    "1\n");

	int k = cb_nic_netdev.list(root, n, 4);
	CHECK(k == 1);
	CHECK(!strcmp(n[0].name, "eth0") && !strcmp(n[0].state, "up"));
	CHECK(n[0].speed_mbps == 25000 && n[0].mtu == 9000);
	CHECK(!strcmp(n[0].driver, "mlx5_core") &&
	      !strcmp(n[0].driver_version, "5.8"));
	CHECK(!strcmp(n[0].firmware, "22.31.1014"));
	CHECK(n[0].ncounters == CB_NIC_COUNTERS && n[0].counters[0] == 3 &&
	      n[0].counters[4] == 2);
	put(root, "class/net/eth0/statistics/rx_errors", "10\n");
	CHECK(cb_nic_netdev.counters(root, &n[0]) == 0 &&
	      n[0].counters[0] == 10);

	k = cb_nic_infiniband.list(root, n, 4);
	CHECK(k == 1 && !strcmp(n[0].name, "mlx5_0/1"));
	CHECK(!strcmp(n[0].state, "active") && n[0].speed_mbps == 100000);
	CHECK(n[0].counters[0] == 7 && n[0].counters[2] == 1);
	CHECK(cb_nic_reader_for("tcp") == &cb_nic_netdev);
	CHECK(cb_nic_reader_for("verbs") == &cb_nic_infiniband);
	CHECK(cb_nic_reader_for("shm") == NULL);

	/* three hosts alike but for host 1's MTU, and a NIC only host 2 has */
	struct cb_nic_info h[3][2];
	const struct cb_nic_info *hs[3] = { h[0], h[1], h[2] };
	int counts[3] = { 1, 1, 2 };
	char why[3][256];
	memset(h, 0, sizeof(h));
	for (int i = 0; i < 3; i++) {
		h[i][0] = (struct cb_nic_info){ .name = "eth0",
			                        .kind = "netdev",
			                        .state = "up",
			                        .speed_mbps = 25000,
			                        .mtu = i == 1 ? 1500 : 9000,
			                        .driver = "mlx5_core" };
	}
	h[2][1] = h[2][0];
	snprintf(h[2][1].name, sizeof(h[2][1].name), "eth1");
	CHECK(cb_nic_compare(hs, counts, 3, why) == 2);
	printf("  nic: host1: %s; host2: %s\n", why[1], why[2]);
	CHECK(!strcmp(why[0], ""));
	CHECK(!strcmp(why[1], "eth0 MTU 1500 (others: 9000)"));
	CHECK(!strcmp(why[2], "eth1 only here"));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK(system(cmd) == 0);
}

int main(void)
{
	cb_log_level = CB_LOG_ERROR;
	test_tournament();
	test_judge();
	test_writers();
	test_nics();
	return check_result("accept");
}
