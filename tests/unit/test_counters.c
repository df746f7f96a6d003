/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_counters.c - a host's retransmission and link counters
 * (topo/hostctr.c) read from made-up /proc and /sys trees, and what
 * acceptance/counters.c names from them on made-up clusters: a lossy host,
 * a lossy path, a link that went down, and nothing on a healthy one.  And
 * the CPU probe (topo/cpuprobe.c), with what acceptance/cpu.c says of a
 * named host whose probe was slow (the host) or as fast as the others'
 * (its link).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acceptance/accept.h"
#include "acceptance/plan.h"
#include "check.h"
#include "topo/cpuprobe.h"
#include "topo/hostctr.h"

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

static const char snmp[] =
        "Ip: Forwarding DefaultTTL InReceives\n"
        "Ip: 1 64 12345\n"
        "Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens "
        "AttemptFails EstabResets CurrEstab InSegs OutSegs RetransSegs "
        "InErrs OutRsts InCsumErrors\n"
        "Tcp: 1 200 120000 -1 35 23 1 2 8 1033 98765 4321 0 15 0\n"
        "Udp: InDatagrams NoPorts\n"
        "Udp: 5 6\n";

static void test_read(void)
{
	char root[] = "/tmp/cb-hostctr-XXXXXX", proc[64], sys[64], cmd[128];
	struct cb_hostctr c, d, e;
	uint64_t v = 0;

	CHECK(!cb_snmp_field(snmp, "Tcp", "RetransSegs", &v) && v == 4321);
	CHECK(!cb_snmp_field(snmp, "Udp", "NoPorts", &v) && v == 6);
	CHECK(cb_snmp_field(snmp, "Tcp", "Nothing", &v) == -1);
	CHECK(cb_snmp_field(snmp, "Icmp", "InMsgs", &v) == -1);
	CHECK(cb_snmp_field("Tcp: A B\n", "Tcp", "A", &v) ==
	      -1); /* no values */
	CHECK(cb_snmp_field("", "Tcp", "A", &v) == -1);

	CHECK(mkdtemp(root) != NULL);
	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(sys, sizeof(sys), "%s/sys", root);
	put(proc, "net/snmp", snmp);
	put(proc, "net/netstat",
	    "TcpExt: SyncookiesSent TCPDSACKRecv TCPDSACKRecvSegs\n"
	    "TcpExt: 0 290 300\n"
	    "IpExt: InNoRoutes\nIpExt: 0\n");
	put(sys, "class/net/eth0/carrier_changes", "7\n");
	put(sys, "class/net/eth0/carrier_down_count", "3\n");
	put(sys, "class/infiniband/mlx5_0/ports/1/counters/link_downed", "2\n");
	put(sys, "class/infiniband/mlx5_0/ports/1/counters/symbol_error",
	    "5\n");
	put(sys, "class/infiniband/mlx5_0/ports/2/counters/link_downed", "1\n");
	cb_hostctr_read(proc, sys, "eth0", "mlx5_0", &c);
	/* less the 300 the receivers reported they already had */
	CHECK(c.have & 1u << CB_HC_RETRANS && c.v[CB_HC_RETRANS] == 4021);
	CHECK(c.have & 1u << CB_HC_OUTSEGS && c.v[CB_HC_OUTSEGS] == 98765);
	CHECK(c.v[CB_HC_CARRIER] == 7 && c.v[CB_HC_CARRIER_DOWN] == 3);
	CHECK(c.v[CB_HC_LINK_DOWNED] == 3); /* both ports */
	CHECK(c.v[CB_HC_SYMBOL] == 5);
	/* absent files are not reported */
	CHECK(!(c.have & 1u << CB_HC_RCV_ERRORS));
	CHECK(!(c.have & 1u << CB_HC_XMIT_DISCARDS));
	/* one port only */
	cb_hostctr_read(proc, sys, NULL, "mlx5_0/2", &d);
	CHECK(d.v[CB_HC_LINK_DOWNED] == 1 && !(d.have & 1u << CB_HC_SYMBOL));
	CHECK(!(d.have & 1u << CB_HC_CARRIER));
	/* nothing there: nothing reported */
	cb_hostctr_read("/nonexistent", "/nonexistent", "eth9", "x", &e);
	CHECK(e.have == 0);
	/* deltas: only what both have; a counter reset counts from 0 */
	put(proc, "net/snmp", "Tcp: OutSegs RetransSegs\nTcp: 100000 4400\n");
	put(sys, "class/net/eth0/carrier_changes", "2\n");
	cb_hostctr_read(proc, sys, "eth0", NULL, &e);
	cb_hostctr_delta(&c, &e, &d);
	CHECK(d.v[CB_HC_RETRANS] == 79 && d.v[CB_HC_OUTSEGS] == 1235);
	CHECK(d.v[CB_HC_CARRIER] == 2);
	CHECK(!(d.have & 1u << CB_HC_LINK_DOWNED));
	cb_hostctr_add(&d, &d);
	CHECK(d.v[CB_HC_RETRANS] == 158);
	/* D-SACKs for segments retransmitted before: none lost, not a
	 * counter reset */
	put(proc, "net/netstat", "TcpExt: TCPDSACKRecvSegs\nTcpExt: 500\n");
	cb_hostctr_read(proc, sys, "eth0", NULL, &d);
	CHECK(d.v[CB_HC_RETRANS] == 3900);
	cb_hostctr_delta(&c, &d, &e);
	CHECK(e.have & 1u << CB_HC_RETRANS && e.v[CB_HC_RETRANS] == 0);
	CHECK(strcmp(cb_hostctr_name(CB_HC_RETRANS), "tcp_retrans_segs") == 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK(system(cmd) == 0);
}

/* A made-up cluster of @n hosts, one node each, every pair measured. */
static void cluster(struct cb_acc *a, int n)
{
	memset(a, 0, sizeof(*a));
	a->set.transport = "tcp";
	a->nhosts = a->nnodes = n;
	a->hosts = calloc((size_t)n, sizeof(*a->hosts));
	a->nodes = calloc((size_t)n, sizeof(*a->nodes));
	a->pairs = calloc((size_t)n * n, sizeof(*a->pairs));
	for (int i = 0; i < n; i++) {
		snprintf(a->hosts[i].name, sizeof(a->hosts[i].name), "node%d",
		         i);
		snprintf(a->hosts[i].nic, sizeof(a->hosts[i].nic), "eth0");
		a->nodes[i].host = i;
		a->nodes[i].rank = i;
		snprintf(a->nodes[i].name, sizeof(a->nodes[i].name), "node%d",
		         i);
	}
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++) {
			struct cb_acc_pair *p = &a->pairs[a->npairs++];
			p->a = i;
			p->b = j;
			p->ok = 1;
			p->bw_ab_gbps = p->bw_ba_gbps = 1;
		}
}

/* Host counters noted as rank 0 does: a start, then one pairwise reading
 * with @retrans[h] retransmitted of 100000 segments each, and @carrier
 * carrier changes on host @flap. */
static void hosts_moved(struct cb_acc *a, const uint64_t *retrans, int flap,
                        uint64_t carrier)
{
	for (int h = 0; h < a->nhosts; h++) {
		struct cb_hostctr s = { .have = 0xf };
		s.v[CB_HC_RETRANS] = 1000;
		s.v[CB_HC_OUTSEGS] = 5000;
		s.v[CB_HC_CARRIER] = 1;
		cb_acc_ctr_note(a, CB_ACC_INVENTORY, h, &s, NULL);
		s.v[CB_HC_RETRANS] += retrans[h];
		s.v[CB_HC_OUTSEGS] += 100000;
		s.v[CB_HC_CARRIER] += h == flap ? carrier : 0;
		struct cb_hostctr m;
		cb_acc_ctr_note(a, CB_ACC_PAIRWISE, h, &s, &m);
		CHECK(m.v[CB_HC_RETRANS] == retrans[h]);
	}
}

/* Pairs' own counters: each pair with node @bad (or the pair @pa-@pb)
 * lost @lost of its 20000 segments; the others @clean. */
static void pairs_moved(struct cb_acc *a, int bad, int pa, int pb,
                        uint64_t lost, uint64_t clean)
{
	for (int i = 0; i < a->npairs; i++) {
		struct cb_acc_pair *p = &a->pairs[i];
		int hit = p->a == bad || p->b == bad ||
		          (p->a == pa && p->b == pb);
		p->retrans = hit ? lost : clean;
		p->out_segs = 20000;
		p->ctr_meas = 2;
		p->ctr_lossy = p->retrans >= 0.001 * 20000 ? 2 : 0;
	}
}

static int finds(const struct cb_acc *a, const char *what)
{
	int k = 0;

	for (int i = 0; i < a->nfindings; i++)
		k += strstr(a->findings[i].line, what) != NULL;
	return k;
}

static void dump(const struct cb_acc *a)
{
	for (int i = 0; i < a->nfindings; i++)
		fprintf(stderr, "  finding: %s\n", a->findings[i].line);
}

static void test_judge(void)
{
	struct cb_acc a;
	uint64_t healthy[8] = { 3, 0, 12, 1, 0, 5, 2, 0 };
	uint64_t lossy[8] = { 40, 31, 25, 1234, 38, 29, 33, 30 };

	/* healthy: a few retransmissions anywhere name no one */
	cluster(&a, 8);
	hosts_moved(&a, healthy, -1, 0);
	pairs_moved(&a, -1, -1, -1, 0, 3);
	cb_acc_judge_loss(&a);
	CHECK(a.nfindings == 0);
	dump(&a);
	cb_acc_free(&a);

	/* node3 drops 2% both ways: its pairs lose 400 of 20000 segments,
	 * and each of its peers retransmits a seventh of what it does */
	cluster(&a, 8);
	hosts_moved(&a, lossy, -1, 0);
	pairs_moved(&a, 3, -1, -1, 400, 2);
	cb_acc_judge_loss(&a);
	CHECK(a.nfindings == 1 && a.findings[0].ha == 3 &&
	      finds(&a, "host node3 (eth0): its pairs retransmitted 2% of "
	                "their TCP segments during pairwise (median; 2800 "
	                "segments; the pairs without it 0.01%); this host "
	                "resent 1234, each other host 25-40") == 1 &&
	      finds(&a, "a lossy cable or port") == 1);
	dump(&a);
	CHECK(a.fail);
	cb_acc_free(&a);

	/* 4 hosts: 3 of 6 pairs touch the bad one; still named alone */
	cluster(&a, 4);
	hosts_moved(&a, lossy, -1, 0);
	pairs_moved(&a, 3, -1, -1, 400, 0);
	cb_acc_judge_loss(&a);
	CHECK(a.nfindings == 1 && a.findings[0].ha == 3);
	dump(&a);
	cb_acc_free(&a);

	/* under the floor (CB_ACC_LOSS_MIN): not named */
	cluster(&a, 4);
	hosts_moved(&a, healthy, -1, 0);
	pairs_moved(&a, 3, -1, -1, 10, 0);
	cb_acc_judge_loss(&a);
	CHECK(a.nfindings == 0);
	dump(&a);
	cb_acc_free(&a);

	/* every pair alike (the whole fabric loses): no host stands out */
	cluster(&a, 8);
	hosts_moved(&a, lossy, -1, 0);
	pairs_moved(&a, -1, -1, -1, 400, 400);
	cb_acc_judge_loss(&a);
	CHECK(a.nfindings == 0);
	cb_acc_free(&a);

	/* one lossy path: the path, not its ends */
	cluster(&a, 8);
	hosts_moved(&a, healthy, -1, 0);
	pairs_moved(&a, -1, 2, 5, 400, 1);
	cb_acc_judge_loss(&a);
	CHECK(a.nfindings == 1 && finds(&a, "path node2 (eth0) - node5") == 1);
	dump(&a);
	cb_acc_free(&a);

	/* ... but not when only one of its measurements lost */
	cluster(&a, 8);
	hosts_moved(&a, healthy, -1, 0);
	pairs_moved(&a, -1, 2, 5, 400, 1);
	cb_acc_pair_of(&a, 2, 5)->ctr_lossy = 1;
	cb_acc_judge_loss(&a);
	CHECK(a.nfindings == 0);
	cb_acc_free(&a);

	/* already named slow: the counters are added to that finding */
	cluster(&a, 8);
	cb_acc_find(&a, CB_ACC_PAIRWISE, "node", 3, -1, "host node3: slow");
	hosts_moved(&a, lossy, -1, 0);
	pairs_moved(&a, 3, -1, -1, 400, 2);
	cb_acc_judge_loss(&a);
	CHECK(a.nfindings == 1 &&
	      finds(&a, "host node3: slow; its pairs retransmitted 2%") == 1);
	cb_acc_free(&a);

	/* no pair has counters of its own (--rails): host totals */
	cluster(&a, 8);
	hosts_moved(&a, (uint64_t[8]){ 3, 0, 12, 1234, 0, 5, 2, 0 }, -1, 0);
	cb_acc_judge_loss(&a);
	CHECK(a.nfindings == 1 && a.findings[0].ha == 3 &&
	      finds(&a, "1234 TCP retransmissions during pairwise (1.2% of "
	                "its segments), the others 0-12") == 1);
	dump(&a);
	cb_acc_free(&a);

	/* a link that went down: named with the counters that moved */
	cluster(&a, 4);
	hosts_moved(&a, healthy, 2, 4);
	pairs_moved(&a, -1, -1, -1, 0, 0);
	cb_acc_judge_loss(&a);
	CHECK(a.nfindings == 1 && a.findings[0].ha == 2 &&
	      finds(&a, "host node2 (eth0): its link went down during the "
	                "run: carrier_changes +4 (pairwise): a link that "
	                "flaps") == 1);
	dump(&a);
	cb_acc_free(&a);

	/* a link that went down retransmits: no loss named for it, nor for
	 * its pairs */
	cluster(&a, 8);
	hosts_moved(&a, lossy, 3, 2);
	pairs_moved(&a, 3, 1, 2, 400, 2);
	cb_acc_judge_loss(&a);
	CHECK(a.nfindings == 2 && finds(&a, "its link went down") == 1 &&
	      finds(&a, "path node1 (eth0) - node2") == 1);
	dump(&a);
	cb_acc_free(&a);

	/* ... and added to the plan's flapping finding where it made one */
	cluster(&a, 4);
	cb_acc_find(&a, CB_ACC_PAIRWISE, "path", 2, 1, "path node2 - node1");
	a.hosts[2].flap_find = a.nfindings + 1;
	cb_acc_find(&a, CB_ACC_PAIRWISE, "node", 2, -1, "host node2: flaps");
	hosts_moved(&a, healthy, 2, 4);
	cb_acc_judge_loss(&a);
	CHECK(a.nfindings == 2 &&
	      finds(&a, "host node2: flaps; link counters moved: "
	                "carrier_changes +4 (pairwise)") == 1);
	dump(&a);
	cb_acc_free(&a);
}

/* The probe runs for its time and reports a share of a core; what the
 * judge says of a slow host, a slow link and a path with one slow end. */
static void test_cpu(void)
{
	struct cb_cpu_rate r;
	struct cb_acc a;

	CHECK(cb_cpu_probe(0.02, &r) == 0);
	CHECK(r.gbps > 0 && r.share > 0 && r.share <= 1 && r.seconds >= 0.02);

	/* host 2 copied a fifth of the others: named, it is the host */
	cluster(&a, 4);
	for (int h = 0; h < 4; h++) {
		a.hosts[h].cpu_gbps = h == 2 ? 2 : 10 + h;
		a.hosts[h].cpu_share = h == 2 ? 0.2 : 0.98;
	}
	cb_acc_find(&a, CB_ACC_PAIRWISE, "node", 2, -1, "host node2: slow");
	cb_acc_find(&a, CB_ACC_PAIRWISE, "path", 2, 1, "path node2 - node1");
	cb_acc_find(&a, CB_ACC_PAIRWISE, "path", 0, 3, "path node0 - node3");
	cb_acc_judge_cpu(&a);
	dump(&a);
	CHECK(a.nfindings == 3);
	CHECK(strstr(a.findings[0].line,
	             "host node2: slow; node2's CPU copied 19% of what the "
	             "median host's did at inventory (with 20% of a core): "
	             "the host itself") != NULL);
	CHECK(strstr(a.findings[1].line,
	             "; node2's CPU copied 19% of what the median host's did "
	             "at inventory (with 20% of a core): that host more "
	             "likely than the cable") != NULL);
	CHECK(strchr(a.findings[2].line, ';') == NULL);
	CHECK(strstr(a.stage[CB_ACC_INVENTORY].summary,
	             "CPU probe: node2 copied 19% of the median host's") !=
	      NULL);
	cb_acc_free(&a);

	/* the noise too wide to name anyone: where to look first */
	cluster(&a, 4);
	for (int h = 0; h < 4; h++) {
		a.hosts[h].cpu_gbps = h == 2 ? 2 : 10 + h;
		a.hosts[h].cpu_share = h == 2 ? 0.05 : 0.5;
	}
	cb_acc_warn(&a, CB_ACC_PAIRWISE, "a fault under 60%% cannot be told");
	cb_acc_warn(&a, CB_ACC_BURN, "a fault under 60%% cannot be told");
	cb_acc_find(&a, CB_ACC_PAIRWISE, "path", 0, 1, "path node0 - node1");
	cb_acc_judge_cpu(&a);
	CHECK(a.nwarnings == 2 &&
	      strstr(a.warnings[0].line,
	             "told; node2's CPU copied 19% of what the median host's "
	             "did at inventory (with 5% of a core): a host short of "
	             "CPU is slow and erratic to its peers, look at it "
	             "first") != NULL &&
	      strchr(a.warnings[1].line, ';') == NULL);
	cb_acc_free(&a);
	/* ... said in the finding instead where one named that host */
	cluster(&a, 4);
	for (int h = 0; h < 4; h++)
		a.hosts[h].cpu_gbps = h == 2 ? 2 : 10 + h;
	cb_acc_warn(&a, CB_ACC_PAIRWISE, "a fault under 60%% cannot be told");
	cb_acc_find(&a, CB_ACC_PAIRWISE, "node", 2, -1, "host node2: slow");
	cb_acc_judge_cpu(&a);
	CHECK(strchr(a.warnings[0].line, ';') == NULL &&
	      strstr(a.findings[0].line, "the host itself") != NULL);
	cb_acc_free(&a);

	/* no warning to say it in, its pairs slow in the rounds and cleared
	 * alone: a warning of its own; not while one of them stays slow */
	for (int clear = 1; clear >= 0; clear--) {
		cluster(&a, 4);
		for (int h = 0; h < 4; h++) {
			a.hosts[h].cpu_gbps = h == 2 ? 1 : 10 + h;
			a.hosts[h].cpu_share = h == 2 ? 0.05 : 0.5;
		}
		for (int i = 0; i < a.npairs; i++)
			if (a.pairs[i].a == 2 || a.pairs[i].b == 2) {
				a.pairs[i].suspect = i != 1;
				a.pairs[i].cleared = clear;
			}
		a.pairs[0].suspect = 1; /* node0-node1 */
		a.pairs[0].cleared = 0;
		cb_acc_judge_cpu(&a);
		CHECK(a.nfindings == 0);
		CHECK(clear ? a.nwarnings == 1 &&
		                      strcmp(a.warnings[0].line,
		                             "host node2: slow in the rounds, "
		                             "within the noise measured again "
		                             "(2 pairs); node2's CPU copied "
		                             "10% of what the median host's "
		                             "did at inventory (with 5% of a "
		                             "core): a host short of CPU "
		                             "keeps up with one peer and falls "
		                             "behind beside other traffic, "
		                             "look at it first") == 0
		            : a.nwarnings == 0);
		cb_acc_free(&a);
	}
	/* ... and where no pair of it was a suspect, one at inventory */
	cluster(&a, 4);
	for (int h = 0; h < 4; h++) {
		a.hosts[h].cpu_gbps = h == 2 ? 1 : 10 + h;
		a.hosts[h].cpu_share = h == 2 ? 0.05 : 0.5;
	}
	cb_acc_judge_cpu(&a);
	CHECK(a.nwarnings == 1 && a.warnings[0].stage == CB_ACC_INVENTORY &&
	      strcmp(a.warnings[0].line,
	             "host node2: its CPU copied 10% of what the median "
	             "host's did (with 5% of a core): a CPU cap, throttling "
	             "or other work on it; no pair of it was slow enough to "
	             "be a suspect (over TCP the kernel does most of the "
	             "work), a job's compute will be, look at it first") == 0);
	cb_acc_free(&a);
	/* ... none where every probe is within half of the median */
	cluster(&a, 4);
	for (int h = 0; h < 4; h++)
		a.hosts[h].cpu_gbps = h == 2 ? 6 : 10 + h;
	cb_acc_judge_cpu(&a);
	CHECK(a.nwarnings == 0);
	cb_acc_free(&a);

	/* host 2 as fast as the others: named, it is its link */
	cluster(&a, 4);
	for (int h = 0; h < 4; h++) {
		a.hosts[h].cpu_gbps = 10 + h;
		a.hosts[h].cpu_share = 0.97;
	}
	cb_acc_find(&a, CB_ACC_PAIRWISE, "node", 2, -1, "host node2: slow");
	cb_acc_find(&a, CB_ACC_PAIRWISE, "path", 2, 1, "path node2 - node1");
	cb_acc_find(&a, CB_ACC_BURN, "node", 2, -1, "host node2: slow again");
	cb_acc_judge_cpu(&a);
	dump(&a);
	CHECK(a.nfindings == 3);
	CHECK(strchr(a.findings[2].line, ';') == NULL); /* said once */
	CHECK(strstr(a.findings[0].line,
	             "host node2: slow; node2's CPU copied as much as the "
	             "others' at inventory (104% of the median host's): its "
	             "NIC, port or cable, not its CPU") != NULL);
	CHECK(strchr(a.findings[1].line, ';') == NULL);
	CHECK(strchr(a.stage[CB_ACC_INVENTORY].summary, ';') == NULL);
	cb_acc_warn(&a, CB_ACC_PAIRWISE, "a fault under 60%% cannot be told");
	cb_acc_judge_cpu(&a); /* (again: no host is slow, nothing added) */
	CHECK(strchr(a.warnings[0].line, ';') == NULL);
	cb_acc_free(&a);

	/* no probes (an older rank): nothing said */
	cluster(&a, 4);
	cb_acc_find(&a, CB_ACC_PAIRWISE, "node", 2, -1, "host node2: slow");
	cb_acc_judge_cpu(&a);
	CHECK(a.nfindings == 1 && strchr(a.findings[0].line, ';') == NULL);
	cb_acc_free(&a);
}

/* The real planner over @n nodes (12: quick rounds of disjoint pairs, so
 * node 2 has unmet partners to be located against; 4: every pair, so
 * only confirm measures again) where node 2's pairs measure @quick of
 * the others' in the quick tier and repeats and @later after (1: it
 * cleared), node 0's pair with it @path0 of that in the quick tier and
 * @path1 after (1: no path); then drive.c's marks and cpu.c's warning
 * for node 2, its probe a tenth of the others'. */
static int planned(struct cb_acc *a, int n, double quick, double later,
                   double path0, double path1)
{
	int located = 0; /* node 2's locate measurements, each marked */
	struct cb_accp_cfg cfg = { .n = n, .tolerance = 0.9 };
	struct cb_accp *P = cb_accp_new(&cfg);
	int pairs[6][2], stage, m, round = 0;
	int map[12] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 };

	cluster(a, n);
	for (int h = 0; h < n; h++) {
		a->hosts[h].cpu_gbps = h == 2 ? 1 : 10 + h;
		a->hosts[h].cpu_share = h == 2 ? 0.05 : 0.5;
	}
	CHECK(P != NULL);
	while (P && (m = cb_accp_next(P, pairs, &stage)) > 0 && round++ < 60) {
		double bw[6];
		int ok[6];
		for (int i = 0; i < m; i++) {
			int x = pairs[i][0], y = pairs[i][1];
			/* a spread of a few tenths of a percent */
			bw[i] = 1 + 0.002 * ((x * 7 + y * 3 + round) % 5 - 2);
			if (x == 2 || y == 2)
				bw[i] *=
				        stage <= CB_ACCP_REPEAT ? quick : later;
			if (x == 0 && y == 2)
				bw[i] *=
				        stage <= CB_ACCP_REPEAT ? path0 : path1;
			ok[i] = 1;
		}
		cb_accp_feed(P, bw, ok);
	}
	CHECK(round < 60);
	if (P) {
		const struct cb_accp_result *r = cb_accp_verdict(P);
		cb_acc_mark_suspects(a, r, map);
		for (int i = 0; i < r->nmeas; i++) {
			const struct cb_accp_meas *e = &r->meas[i];
			if (e->stage != CB_ACCP_LOCATE ||
			    (e->a != 2 && e->b != 2))
				continue;
			CHECK(cb_acc_pair_of(a, e->a, e->b)->suspect);
			located++;
		}
	}
	cb_acc_judge_cpu(a);
	cb_accp_free(P);
	return located;
}

/* How many pairs are marked suspect and cleared. */
static void marks(const struct cb_acc *a, int *sus, int *clr)
{
	*sus = *clr = 0;
	for (int i = 0; i < a->npairs; i++) {
		*sus += a->pairs[i].suspect;
		*clr += a->pairs[i].cleared;
	}
}

/* The pairs measured again for a suspect are marked as the planner
 * measured them (drive.c), and cpu.c's warning follows from the marks
 * alone: none of this is set by hand. */
static void test_planned(void)
{
	struct cb_acc a;
	int sus = 0, clr = 0, other = 0;

	/* node 2 slow in the rounds, normal against cleared partners */
	CHECK(planned(&a, 12, 0.7, 1, 1, 1) >= 3);
	for (int i = 0; i < a.npairs; i++) {
		const struct cb_acc_pair *p = &a.pairs[i];
		int two = p->a == 2 || p->b == 2;
		sus += two && p->suspect;
		clr += two && p->cleared;
		other += !two && p->suspect;
	}
	dump(&a);
	CHECK(sus >= 2 && clr == sus && other == 0);
	CHECK(a.nwarnings == 1 &&
	      strstr(a.warnings[0].line, "host node2: slow in the rounds, "
	                                 "within the noise measured again (") ==
	              a.warnings[0].line);
	/* the VERDICT line's count is the warning's: the pairs marked */
	char said[48];
	snprintf(said, sizeof(said), "measured again (%d pairs)", sus);
	CHECK(a.retested == sus && a.cleared == clr &&
	      strstr(a.warnings[0].line, said) != NULL);
	cb_acc_free(&a);
	/* node 0 - node 2 slow every time: a path, its pair a suspect not
	 * cleared, and no warning of a host that cleared */
	planned(&a, 4, 1, 1, 0.6, 0.6);
	marks(&a, &sus, &clr);
	dump(&a);
	CHECK(cb_acc_pair_of(&a, 0, 2)->suspect &&
	      !cb_acc_pair_of(&a, 0, 2)->cleared && clr == 0);
	CHECK(a.retested == sus && sus >= 1 && a.cleared == 0);
	CHECK(a.nwarnings == 0);
	cb_acc_free(&a);
	/* node 0 - node 2 slow in the quick tier only: that pair measured
	 * again, cleared, and the warning for node 2 */
	planned(&a, 4, 1, 1, 0.6, 1);
	marks(&a, &sus, &clr);
	CHECK(cb_acc_pair_of(&a, 0, 2)->cleared && clr == sus);
	CHECK(a.retested == sus && a.cleared == clr);
	CHECK(a.nwarnings == 1 &&
	      strstr(a.warnings[0].line, "host node2: slow in the rounds") ==
	              a.warnings[0].line);
	cb_acc_free(&a);
	/* pairs all alike: nothing measured again, and node 2's probe said
	 * at inventory alone */
	planned(&a, 12, 1, 1, 1, 1);
	sus = 0;
	for (int i = 0; i < a.npairs; i++)
		sus += a.pairs[i].suspect;
	CHECK(sus == 0 && a.nwarnings == 1 &&
	      a.warnings[0].stage == CB_ACC_INVENTORY);
	cb_acc_free(&a);
}

int main(void)
{
	test_read();
	test_judge();
	test_cpu();
	test_planned();
	return check_result("counters");
}
