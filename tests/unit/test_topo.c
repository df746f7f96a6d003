/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_topo.c - topology on recorded machines (tests/data/topo)
 * and hwloc synthetic ones, never the machine running the test: NUMA, core
 * and device counts, the path matrix, the nearest NIC of each GPU, the
 * binding plan for 1-16 local ranks, overrides and their errors, XML export
 * and reload, link speed from a made-up sysfs tree, and the inventory
 * comparison flagging exactly the host that differs.
 *
 * usage: test_topo DATA_DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "core/log.h"
#include "topo/topo.h"

static const char *data;

static struct cb_topo *load(const char *file)
{
	char path[1024];
	struct cb_topo *t = NULL;

	snprintf(path, sizeof(path), "%s/%s", data, file);
	cb_fail_clear();
	if (cb_topo_load(path, NULL, &t)) {
		fprintf(stderr, "cannot load %s: %s\n", path, cb_fail_msg());
		exit(1);
	}
	return t;
}

static struct cb_topo *synth(const char *desc)
{
	struct cb_topo *t = NULL;

	cb_fail_clear();
	if (cb_topo_load(NULL, desc, &t)) {
		fprintf(stderr, "cannot load '%s': %s\n", desc, cb_fail_msg());
		exit(1);
	}
	return t;
}

static int nic_named(const struct cb_topo *t, int n, const char *name)
{
	return n >= 0 && n < t->nnics && !strcmp(cb_topo_nic(t, n)->name, name);
}

static enum cb_topo_path gpu_nic(const struct cb_topo *t, int g, int n)
{
	return cb_topo_path(t, g, t->ngpus + n);
}

static void test_24em64t(void)
{
	struct cb_topo *t = load("24em64t-2n6c2t-pci.xml");

	CHECK(t->npackages == 2 && t->nnuma == 2);
	CHECK(t->ncores == 12 && t->npus == 24);
	CHECK(t->numa[0].ncores == 6 && t->numa[1].ncores == 6);
	CHECK(!strcmp(t->host, "mirage004"));
	CHECK(t->ngpus == 3 && t->nnics == 3);
	/* Sorted by bus id: eth0, eth1 (04:00.x), mlx4_0 (05:00.0). */
	CHECK(nic_named(t, 0, "eth0") && nic_named(t, 2, "mlx4_0"));
	CHECK(cb_topo_nic(t, 2)->rdma &&
	      !strcmp(cb_topo_nic(t, 2)->kind, "InfiniBand"));
	CHECK(strstr(cb_topo_nic(t, 2)->aliases, "ib0") != NULL);
	CHECK(cb_topo_gpu(t, 0)->numa == 0 && cb_topo_gpu(t, 1)->numa == 1 &&
	      cb_topo_gpu(t, 2)->numa == 1);
	/* The path matrix. */
	CHECK(cb_topo_path(t, 0, 0) == CB_TOPO_PATH_X);
	CHECK(cb_topo_path(t, 0, 1) == CB_TOPO_PATH_SYS);
	CHECK(cb_topo_path(t, 1, 2) == CB_TOPO_PATH_PHB);
	CHECK(gpu_nic(t, 0, 2) == CB_TOPO_PATH_PHB);
	CHECK(gpu_nic(t, 1, 2) == CB_TOPO_PATH_SYS);
	CHECK(cb_topo_path(t, 3, 4) == CB_TOPO_PATH_PIX); /* eth0-eth1 */
	CHECK(cb_topo_path(t, 3, 5) == CB_TOPO_PATH_PHB);
	for (int i = 0; i < 6; i++)
		for (int k = 0; k < 6; k++)
			CHECK(cb_topo_path(t, i, k) == cb_topo_path(t, k, i));
	/* Nearest NIC: the verbs one wins the tie with the Ethernet ports. */
	for (int g = 0; g < 3; g++)
		CHECK(nic_named(t, cb_topo_nearest_nic(t, g), "mlx4_0"));
	/* The header's GPU line for 3 ranks, one GPU each, mlx4_0 for all. */
	struct cb_topo_slot s[3];
	char note[64], line[512];
	CHECK(cb_topo_plan(t, CB_TOPO_BIND_AUTO, 3, NULL, -1, s, note,
	                   sizeof(note)) == CB_OK);
	cb_topo_gpu_paths(t, s, 3, line, sizeof(line));
	CHECK(!strcmp(line, "GPU0 (local rank 0), GPU1 (local rank 1), GPU2 "
	                    "(local rank 2); GPU0-GPU1 SYS, GPU0-GPU2 SYS, "
	                    "GPU1-GPU2 PHB; GPU0-NIC mlx4_0 PHB, GPU1-NIC "
	                    "mlx4_0 SYS, GPU2-NIC mlx4_0 SYS"));
	/* no GPU planned: nothing to say */
	for (int r = 0; r < 3; r++)
		s[r].gpu = -1;
	cb_topo_gpu_paths(t, s, 3, line, sizeof(line));
	CHECK(line[0] == '\0');
	/* A recording says nothing about links, and this machine's sysfs is
	 * not mixed in. */
	for (int n = 0; n < t->nnics; n++)
		CHECK(cb_topo_nic(t, n)->speed_mbps == -1 &&
		      !strcmp(cb_topo_nic(t, n)->state, "unknown"));
	CHECK(t->unknown & CB_TOPO_UNK_LINK);
	CHECK(!t->this_system);
	cb_topo_free(t);
}

static void test_32em64t(void)
{
	struct cb_topo *t = load("32em64t-2n8c2t-pci-wholeio.xml");

	CHECK(t->nnuma == 2 && t->ncores == 16 && t->npus == 32);
	CHECK(t->ngpus == 4 && t->nnics == 3);
	CHECK(!strcmp(cb_topo_gpu(t, 2)->name, "cuda0"));
	CHECK(!strcmp(cb_topo_gpu(t, 2)->kind, "CUDA"));
	CHECK(!strcmp(cb_topo_gpu(t, 3)->name, "opencl0d1"));
	CHECK(nic_named(t, 0, "mlx5_0"));
	/* hwloc's recorded port state of the verbs device. */
	CHECK(!strcmp(cb_topo_nic(t, 0)->state, "active"));
	CHECK(gpu_nic(t, 0, 0) == CB_TOPO_PATH_SYS);
	CHECK(gpu_nic(t, 1, 0) == CB_TOPO_PATH_PHB);
	CHECK(gpu_nic(t, 2, 0) == CB_TOPO_PATH_PIX);
	CHECK(cb_topo_path(t, 2, 3) == CB_TOPO_PATH_PIX); /* 84:00.0/.1 */
	for (int g = 0; g < 4; g++)
		CHECK(nic_named(t, cb_topo_nearest_nic(t, g), "mlx5_0"));
	cb_topo_free(t);
}

static void test_96em64t(void)
{
	struct cb_topo *t = load("96em64t-4n4d3ca2co-pci.xml");

	CHECK(t->npackages == 16 && t->nnuma == 4);
	CHECK(t->ncores == 96 && t->npus == 96);
	CHECK(t->ngpus == 0 && t->nnics == 8);
	CHECK(cb_topo_path(t, 0, 1) == CB_TOPO_PATH_PIX);
	CHECK(cb_topo_path(t, 0, 2) == CB_TOPO_PATH_SYS);
	for (int n = 0; n < 8; n++)
		CHECK(cb_topo_nic(t, n)->numa == n / 2);
	CHECK(cb_topo_nearest_nic(t, 0) == -1);

	/* No GPU: ranks round-robin over the 4 nodes, each with the NIC of
	 * its node. */
	struct cb_topo_slot s[8];
	char note[64];
	CHECK(cb_topo_plan(t, CB_TOPO_BIND_AUTO, 8, NULL, -1, s, note,
	                   sizeof(note)) == CB_OK);
	for (int r = 0; r < 8; r++) {
		CHECK(s[r].numa == r % 4 && s[r].gpu == -1);
		CHECK(s[r].nic >= 0 && cb_topo_nic(t, s[r].nic)->numa == r % 4);
	}
	CHECK(s[0].nic != s[4].nic); /* two ranks, two NICs on node 0 */
	cb_topo_free(t);
}

static void test_power8(void)
{
	struct cb_topo *t = load("power8gpudistances.xml");

	CHECK(t->nnuma == 2 && t->ncores == 8 && t->npus == 16);
	CHECK(!strcmp(t->arch, "ppc64le"));
	CHECK(t->ngpus == 4 && t->nnics == 0);
	for (int g = 0; g < 4; g++) {
		char name[8];
		snprintf(name, sizeof(name), "cuda%d", g);
		CHECK(!strcmp(cb_topo_gpu(t, g)->name, name));
		CHECK(cb_topo_gpu(t, g)->numa == g / 2);
		CHECK(cb_topo_nearest_nic(t, g) == -1);
	}
	CHECK(cb_topo_path(t, 0, 1) == CB_TOPO_PATH_NVL);
	CHECK(cb_topo_path(t, 2, 3) == CB_TOPO_PATH_NVL);
	CHECK(cb_topo_path(t, 0, 2) == CB_TOPO_PATH_SYS);
	/* The header's GPU line: 8 ranks, two to a GPU, by local rank. */
	struct cb_topo_slot s[8];
	char note[64], line[512];
	CHECK(cb_topo_plan(t, CB_TOPO_BIND_AUTO, 8, NULL, -1, s, note,
	                   sizeof(note)) == CB_OK);
	cb_topo_gpu_paths(t, s, 8, line, sizeof(line));
	CHECK(!strcmp(line, "GPU0 (local ranks 0,4: shared), GPU1 (local "
	                    "ranks 1,5: shared), GPU2 (local ranks 2,6: "
	                    "shared), GPU3 (local ranks 3,7: shared); "
	                    "GPU0-GPU1 NVL, GPU0-GPU2 SYS, GPU0-GPU3 SYS, "
	                    "GPU1-GPU2 SYS, GPU1-GPU3 SYS, GPU2-GPU3 NVL"));
	/* --gpu 3 for all: one GPU, no pairs, no NIC on this machine */
	CHECK(cb_topo_plan(t, CB_TOPO_BIND_AUTO, 2, NULL, 3, s, note,
	                   sizeof(note)) == CB_OK);
	cb_topo_gpu_paths(t, s, 2, line, sizeof(line));
	CHECK(!strcmp(line, "GPU3 (local ranks 0,1: shared)"));
	cb_topo_free(t);
}

/* Every plan of 1..16 ranks on a 2x2-NUMA, 16-core synthetic machine. */
static void test_synthetic_plans(void)
{
	struct cb_topo *t = synth("pack:2 numa:2 core:4 pu:2");
	struct cb_topo_slot s[17];
	char note[64];

	CHECK(t->npackages == 2 && t->nnuma == 4);
	CHECK(t->ncores == 16 && t->npus == 32);
	CHECK(t->ngpus == 0 && t->nnics == 0);
	CHECK(!(t->unknown & CB_TOPO_UNK_PCI));
	for (int n = 1; n <= 16; n++) {
		int used[16] = { 0 }, per_numa[4] = { 0 };
		CHECK(cb_topo_plan(t, CB_TOPO_BIND_AUTO, n, NULL, -1, s, note,
		                   sizeof(note)) == CB_OK);
		CHECK(note[0] == '\0');
		for (int r = 0; r < n; r++) {
			CHECK(s[r].core >= 0 && s[r].core < 16);
			CHECK(s[r].numa == r % 4); /* round-robin */
			CHECK(t->cores[s[r].core].numa == s[r].numa);
			used[s[r].core]++;
			per_numa[s[r].numa]++;
		}
		for (int c = 0; c < 16; c++)
			CHECK(used[c] <= 1); /* own core each */
		for (int k = 0; k < 4; k++)  /* spread evenly */
			CHECK(per_numa[k] == n / 4 + (k < n % 4));
		/* core: compact, in order; numa: whole nodes, round-robin */
		CHECK(cb_topo_plan(t, CB_TOPO_BIND_CORE, n, NULL, -1, s, note,
		                   sizeof(note)) == CB_OK);
		for (int r = 0; r < n; r++)
			CHECK(s[r].core == r && s[r].numa == r / 4);
		CHECK(cb_topo_plan(t, CB_TOPO_BIND_NUMA, n, NULL, -1, s, note,
		                   sizeof(note)) == CB_OK);
		for (int r = 0; r < n; r++)
			CHECK(s[r].core == -1 && s[r].numa == r % 4);
		CHECK(cb_topo_plan(t, CB_TOPO_BIND_NONE, n, NULL, -1, s, note,
		                   sizeof(note)) == CB_OK);
		for (int r = 0; r < n; r++)
			CHECK(s[r].core == -1 && s[r].numa == -1);
	}
	/* More ranks than cores: auto binds nothing and says why. */
	CHECK(cb_topo_plan(t, CB_TOPO_BIND_AUTO, 17, NULL, -1, s, note,
	                   sizeof(note)) == CB_OK);
	CHECK(strstr(note, "17 local ranks on 16 cores") != NULL);
	for (int r = 0; r < 17; r++)
		CHECK(s[r].core == -1 && s[r].numa == -1);
	char buf[200];
	CHECK(cb_topo_plan(t, CB_TOPO_BIND_AUTO, 2, NULL, -1, s, note,
	                   sizeof(note)) == CB_OK);
	cb_topo_slot_str(t, &s[1], buf, sizeof(buf));
	CHECK(!strcmp(buf, "core 4 (NUMA 1, cpus 8-9)"));
	cb_topo_free(t);

	/* One node, no SMT; and no core level at all. */
	t = synth("core:4 pu:1");
	CHECK(t->nnuma == 1 && t->ncores == 4);
	CHECK(cb_topo_plan(t, CB_TOPO_BIND_AUTO, 4, NULL, -1, s, note,
	                   sizeof(note)) == CB_OK);
	for (int r = 0; r < 4; r++)
		CHECK(s[r].core == r && s[r].numa == 0);
	cb_topo_free(t);
	t = synth("pu:3");
	CHECK(t->ncores == 3 && t->npus == 3);
	cb_topo_free(t);
}

/* Ranks follow their GPUs; a full NUMA node passes ranks on. */
static void test_gpu_plans(void)
{
	struct cb_topo *t = load("24em64t-2n6c2t-pci.xml");
	struct cb_topo_slot s[16];
	char note[64];

	for (int n = 1; n <= 16; n++) {
		int used[12] = { 0 }, per_numa[2] = { 0 };
		CHECK(cb_topo_plan(t, CB_TOPO_BIND_AUTO, n, NULL, -1, s, note,
		                   sizeof(note)) == CB_OK);
		if (n > 12) {
			CHECK(strstr(note, "not bound") != NULL);
			continue;
		}
		for (int r = 0; r < n; r++) {
			CHECK(s[r].gpu == r % 3);
			CHECK(nic_named(t, s[r].nic, "mlx4_0"));
			CHECK(s[r].core >= 0);
			used[s[r].core]++;
			per_numa[s[r].numa]++;
		}
		for (int c = 0; c < 12; c++)
			CHECK(used[c] <= 1);
		/* GPU 0 is on node 0, GPUs 1 and 2 on node 1: node 1 fills
		 * first, and only a full node 1 sends ranks to node 0. */
		int want1 = (n / 3) * 2 + (n % 3 == 2);
		if (want1 > 6)
			want1 = 6;
		CHECK(per_numa[1] == want1);
	}
	/* n = 4: ranks 0 and 3 share GPU 0 on node 0. */
	CHECK(cb_topo_plan(t, CB_TOPO_BIND_AUTO, 4, NULL, -1, s, note,
	                   sizeof(note)) == CB_OK);
	CHECK(s[0].core == 0 && s[1].core == 6 && s[2].core == 7 &&
	      s[3].core == 1);
	/* Overrides: --gpu for every rank, --nic by any of its names. */
	CHECK(cb_topo_plan(t, CB_TOPO_BIND_AUTO, 3, "ib0", 2, s, note,
	                   sizeof(note)) == CB_OK);
	for (int r = 0; r < 3; r++)
		CHECK(s[r].gpu == 2 && s[r].numa == 1 &&
		      nic_named(t, s[r].nic, "mlx4_0"));
	CHECK(cb_topo_plan(t, CB_TOPO_BIND_AUTO, 2, "eth1", -1, s, note,
	                   sizeof(note)) == CB_OK);
	CHECK(nic_named(t, s[0].nic, "eth1") && nic_named(t, s[1].nic, "eth1"));
	/* Bad overrides: one line, usage. */
	cb_fail_clear();
	CHECK(cb_topo_plan(t, CB_TOPO_BIND_AUTO, 2, NULL, 3, s, note,
	                   sizeof(note)) == CB_ERR_USAGE);
	CHECK(cb_fail_msg() && strstr(cb_fail_msg(), "out of range") &&
	      strstr(cb_fail_msg(), "3 GPUs"));
	cb_fail_clear();
	CHECK(cb_topo_plan(t, CB_TOPO_BIND_AUTO, 2, "mlx5_9", -1, s, note,
	                   sizeof(note)) == CB_ERR_USAGE);
	CHECK(cb_fail_msg() && strstr(cb_fail_msg(), "mlx5_9") &&
	      strstr(cb_fail_msg(), "mlx4_0"));
	cb_fail_clear();
	cb_topo_free(t);

	t = load("96em64t-4n4d3ca2co-pci.xml");
	CHECK(cb_topo_plan(t, CB_TOPO_BIND_AUTO, 1, NULL, 0, s, note,
	                   sizeof(note)) == CB_ERR_USAGE);
	CHECK(cb_fail_msg() && strstr(cb_fail_msg(), "no GPU"));
	cb_fail_clear();
	cb_topo_free(t);
}

static void test_bind_parse(void)
{
	enum cb_topo_bind b = CB_TOPO_BIND_NONE;

	CHECK(cb_topo_bind_parse("auto", "--bind", &b) == CB_OK &&
	      b == CB_TOPO_BIND_AUTO);
	CHECK(cb_topo_bind_parse("numa", "--bind", &b) == CB_OK &&
	      b == CB_TOPO_BIND_NUMA);
	cb_fail_clear();
	CHECK(cb_topo_bind_parse("socket", "--bind", &b) == CB_ERR_USAGE &&
	      b == CB_TOPO_BIND_NUMA);
	CHECK(cb_fail_msg() && strstr(cb_fail_msg(), "'socket'"));
	cb_fail_clear();
}

static void test_bad_files(void)
{
	struct cb_topo *t = NULL;
	char path[1024];
	FILE *f;

	cb_fail_clear();
	CHECK(cb_topo_load("/nonexistent/x.xml", NULL, &t) == CB_ERR_USAGE);
	CHECK(cb_fail_msg() && strstr(cb_fail_msg(), "/nonexistent/x.xml"));
	cb_fail_clear();
	snprintf(path, sizeof(path), "/tmp/cb-topo-junk-%d.xml", (int)getpid());
	f = fopen(path, "w");
	fputs("<?xml version=\"1.0\"?>\n<topology><object type=", f);
	fclose(f);
	CHECK(cb_topo_load(path, NULL, &t) == CB_ERR_USAGE);
	CHECK(cb_fail_msg() && strstr(cb_fail_msg(), "not an hwloc XML"));
	unlink(path);
	cb_fail_clear();
	CHECK(cb_topo_load(NULL, "pack:two", &t) == CB_ERR_USAGE);
	cb_fail_clear();
}

/* Export, reload: the same machine, and link infos survive. */
static void test_roundtrip(void)
{
	struct cb_topo *a = load("32em64t-2n8c2t-pci-wholeio.xml"), *b = NULL;
	char path[256];
	int ndev = a->ngpus + a->nnics;

	snprintf(path, sizeof(path), "/tmp/cb-topo-rt-%d.xml", (int)getpid());
	CHECK(cb_topo_export_xml(a, path) == CB_OK);
	cb_fail_clear();
	CHECK(cb_topo_load(path, NULL, &b) == CB_OK);
	unlink(path);
	if (!b)
		return;
	CHECK(a->nnuma == b->nnuma && a->ncores == b->ncores &&
	      a->npus == b->npus && a->mem_bytes == b->mem_bytes);
	CHECK(a->ngpus == b->ngpus && a->nnics == b->nnics);
	CHECK(!memcmp(a->path, b->path, (size_t)(ndev * ndev)));
	for (int i = 0; i < ndev; i++)
		CHECK(!strcmp(a->dev[i].name, b->dev[i].name) &&
		      a->dev[i].numa == b->dev[i].numa &&
		      !strcmp(a->dev[i].state, b->dev[i].state));
	cb_topo_free(a);
	cb_topo_free(b);
}

static void put(const char *root, const char *rel, const char *text)
{
	char path[512], dir[1100];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(dir, sizeof(dir), "mkdir -p \"$(dirname '%s')\"", path);
	if (system(dir) != 0)
		return;
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void test_link_sysfs(void)
{
	char root[64], cmd[128];
	struct cb_topo_dev d = { .name = "mlx5_0",
		                 .aliases = "ib0",
		                 .rdma = 1 };

	snprintf(root, sizeof(root), "/tmp/cb-topo-sys-%d", (int)getpid());
	put(root, "class/infiniband/mlx5_0/ports/1/state", "1: DOWN\n");
	put(root, "class/infiniband/mlx5_0/ports/1/rate", "10 Gb/sec (4X)\n");
	put(root, "class/infiniband/mlx5_0/ports/2/state", "4: ACTIVE\n");
	put(root, "class/infiniband/mlx5_0/ports/2/rate",
	    "100 Gb/sec (4X EDR)\n");
	put(root, "class/infiniband/mlx5_0/ports/2/link_layer", "Ethernet\n");
	put(root, "class/net/eth3/operstate", "up\n");
	put(root, "class/net/eth3/speed", "25000\n");
	put(root, "class/net/eth4/operstate", "down\n");
	put(root, "class/net/eth4/speed", "-1\n");
	cb_topo_link_read(root, &d);
	CHECK(d.speed_mbps == 100000 && !strcmp(d.state, "active"));
	CHECK(!strcmp(d.kind, "RoCE") && strstr(d.link_note, "port 2"));

	struct cb_topo_dev e = { .name = "eth3" };
	cb_topo_link_read(root, &e);
	CHECK(e.speed_mbps == 25000 && !strcmp(e.state, "up"));
	struct cb_topo_dev g = { .name = "eth4" };
	cb_topo_link_read(root, &g);
	CHECK(g.speed_mbps == -1 && !strcmp(g.state, "down"));
	struct cb_topo_dev h = { .name = "eth9" };
	cb_topo_link_read(root, &h);
	CHECK(h.speed_mbps == -1 && !strcmp(h.state, "unknown"));
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CHECK(system(cmd) == 0);
}

static struct cb_topo_inv host(const char *name)
{
	struct cb_topo_inv v = { .packages = 2,
		                 .numa = 2,
		                 .cores = 32,
		                 .pus = 64,
		                 .nics = 2,
		                 .gpus = 4,
		                 .mem_bytes = 256ll << 30 };
	snprintf(v.host, sizeof(v.host), "%s", name);
	snprintf(v.source, sizeof(v.source), "live");
	snprintf(v.nic[0].name, sizeof(v.nic[0].name), "eth0");
	v.nic[0].speed_mbps = 25000;
	snprintf(v.nic[0].state, sizeof(v.nic[0].state), "up");
	snprintf(v.nic[1].name, sizeof(v.nic[1].name), "mlx5_0");
	v.nic[1].speed_mbps = 200000;
	snprintf(v.nic[1].state, sizeof(v.nic[1].state), "active");
	return v;
}

static int only(const struct cb_topo_inv_diff *d, int n, int who,
                const char *needle)
{
	for (int i = 0; i < n; i++)
		if (d[i].differs != (i == who))
			return 0;
	return who < 0 || strstr(d[who].why, needle) != NULL;
}

static void test_inventory(void)
{
	struct cb_topo_inv v[5];
	struct cb_topo_inv_diff d[5];

	for (int i = 0; i < 5; i++) {
		char name[16];
		snprintf(name, sizeof(name), "node%d", i);
		v[i] = host(name);
	}
	CHECK(cb_topo_inv_compare(v, 5, d) == 0 && only(d, 5, -1, ""));
	/* Memory within 2% is alike (firmware reserves differ). */
	v[2].mem_bytes -= (256ll << 30) / 100;
	CHECK(cb_topo_inv_compare(v, 5, d) == 0);
	v[2].mem_bytes = 240ll << 30;
	CHECK(cb_topo_inv_compare(v, 5, d) == 1 && only(d, 5, 2, "memory"));
	v[2] = host("node2");
	/* A NIC at a lower rate. */
	v[3].nic[1].speed_mbps = 100000;
	CHECK(cb_topo_inv_compare(v, 5, d) == 1 &&
	      only(d, 5, 3, "NIC mlx5_0 speed 100 Gb/s (others: 200 Gb/s)"));
	v[3] = host("node3");
	/* Rank 0's host is the odd one: it is flagged, not the others. */
	v[0].nic[0].state[0] = '\0';
	snprintf(v[0].nic[0].state, sizeof(v[0].nic[0].state), "down");
	CHECK(cb_topo_inv_compare(v, 5, d) == 1 &&
	      only(d, 5, 0, "NIC eth0 state down (others: up)"));
	v[0] = host("node0");
	/* A missing NIC, a missing GPU, fewer cores: each on its host. */
	v[1].nics = 1;
	v[4].gpus = 3;
	v[2].cores = 30;
	CHECK(cb_topo_inv_compare(v, 5, d) == 3);
	CHECK(d[1].differs && strstr(d[1].why, "NICs 1 (others: 2)"));
	CHECK(d[4].differs && strstr(d[4].why, "GPUs 3 (others: 4)"));
	CHECK(d[2].differs && strstr(d[2].why, "cores 30 (others: 32)"));
	CHECK(!d[0].differs && !d[3].differs);
	/* Two hosts: a tie goes to the first (rank 0's) host. */
	v[1] = host("node1");
	v[1].pus = 32;
	CHECK(cb_topo_inv_compare(v, 2, d) == 1 && only(d, 2, 1, "PUs 32"));
	/* One host: nothing to compare. */
	CHECK(cb_topo_inv_compare(v, 1, d) == 0);

	char buf[512];
	v[0] = host("node0");
	cb_topo_inv_str(&v[0], buf, sizeof(buf));
	CHECK(strstr(buf, "32 cores, 64 PUs, memory 256.0 GiB, 4 GPUs, 2 NICs: "
	                  "eth0 25 Gb/s up, mlx5_0 200 Gb/s active") != NULL);
}

int main(int argc, char **argv)
{
	data = argc > 1 ? argv[1] : "tests/data/topo";
	test_24em64t();
	test_32em64t();
	test_96em64t();
	test_power8();
	test_synthetic_plans();
	test_gpu_plans();
	test_bind_parse();
	test_bad_files();
	test_roundtrip();
	test_link_sysfs();
	test_inventory();
	return check_result("test_topo");
}
