/* SPDX-License-Identifier: MIT */
/*
 * topo/out_table.c - `collbench topo` for people: a compact lstopo (machine,
 * caches, NUMA nodes), the GPUs and NICs with their locality and links, the
 * path matrix as `nvidia-smi topo -m` prints it, the binding plan when asked
 * for, and what could not be found out.
 */
#include <stdio.h>
#include <string.h>

#include "topo/topo.h"

static void size_str(int64_t bytes, char *buf, size_t n)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	int u = 0;

	if (bytes < 0) {
		snprintf(buf, n, "unknown");
		return;
	}
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	/* GiB and up with a decimal, so near-equal sizes line up. */
	snprintf(buf, n, u < 3 && v == (int64_t)v ? "%.0f %s" : "%.1f %s", v,
	         units[u]);
}

static void machine(FILE *f, const struct cb_topo *t)
{
	char mem[32], sz[32];

	size_str(t->mem_bytes, mem, sizeof(mem));
	fprintf(f, "host %s, %s%s%s (%s)\n", t->host, t->arch,
	        t->model[0] ? ", " : "", t->model,
	        !strcmp(t->source, "live") ? "live" : t->source);
	fprintf(f,
	        "machine: %d package%s, %d NUMA node%s, %d cores, %d PUs, "
	        "memory %s\n",
	        t->npackages, t->npackages == 1 ? "" : "s", t->nnuma,
	        t->nnuma == 1 ? "" : "s", t->ncores, t->npus, mem);
	if (t->ncaches) {
		fprintf(f, "caches: ");
		for (int i = 0; i < t->ncaches; i++) {
			size_str(t->cache[i].bytes, sz, sizeof(sz));
			fprintf(f, "%sL%d%s %s x%d", i ? ", " : "",
			        t->cache[i].level,
			        t->cache[i].type == 'd'   ? "d"
			        : t->cache[i].type == 'i' ? "i"
			                                  : "",
			        sz, t->cache[i].count);
		}
		fputc('\n', f);
	}
	fprintf(f, "\n%-5s %10s %6s %5s  %s\n", "NUMA", "memory", "cores",
	        "PUs", "cpus");
	for (int i = 0; i < t->nnuma; i++) {
		size_str(t->numa[i].mem_bytes, mem, sizeof(mem));
		fprintf(f, "%-5d %10s %6d %5d  %s\n", t->numa[i].os_index, mem,
		        t->numa[i].ncores, t->numa[i].npus, t->numa[i].cpus);
	}
}

static void numa_str(const struct cb_topo_dev *d, char *buf, size_t n)
{
	if (d->numa >= 0)
		snprintf(buf, n, "NUMA %d", d->numa);
	else if (d->numas[0])
		snprintf(buf, n, "NUMA %s", d->numas);
	else
		snprintf(buf, n, "NUMA ?");
}

static void devices(FILE *f, const struct cb_topo *t)
{
	char numa[80], speed[32], names[160];

	fprintf(f, "\nGPUs:%s\n", t->ngpus ? "" : " none found");
	for (int i = 0; i < t->ngpus; i++) {
		const struct cb_topo_dev *d = cb_topo_gpu(t, i);
		int nic = cb_topo_nearest_nic(t, i);
		numa_str(d, numa, sizeof(numa));
		fprintf(f, "  GPU%-3d %-12s %-12s %-8s %-7s %s", i,
		        strcmp(d->name, d->pci) ? d->name : "-",
		        d->pci[0] ? d->pci : "-", numa, d->kind,
		        d->model[0] ? d->model : "-");
		if (nic >= 0)
			fprintf(f, "; nearest NIC %s (%s)",
			        cb_topo_nic(t, nic)->name,
			        cb_topo_path_name(
			                cb_topo_path(t, i, t->ngpus + nic)));
		fputc('\n', f);
	}
	fprintf(f, "NICs:%s\n", t->nnics ? "" : " none found");
	for (int i = 0; i < t->nnics; i++) {
		const struct cb_topo_dev *d = cb_topo_nic(t, i);
		numa_str(d, numa, sizeof(numa));
		cb_topo_speed_str(d->speed_mbps, speed, sizeof(speed));
		snprintf(names, sizeof(names), "%s%s%s%s", d->name,
		         d->aliases[0] ? " (" : "", d->aliases,
		         d->aliases[0] ? ")" : "");
		fprintf(f,
		        "  NIC%-3d %-22s %-12s %-8s %-10s link %s, %s (%s)\n",
		        i, names, d->pci[0] ? d->pci : "-", numa, d->kind,
		        d->speed_mbps < 0 ? "speed unknown" : speed, d->state,
		        d->link_note);
	}
}

static void matrix(FILE *f, const struct cb_topo *t)
{
	int ndev = t->ngpus + t->nnics;
	char label[16];

	if (!ndev)
		return;
	fprintf(f, "\npaths (as nvidia-smi topo -m):\n%-7s", "");
	for (int i = 0; i < ndev; i++) {
		snprintf(label, sizeof(label), "%s%d",
		         i < t->ngpus ? "GPU" : "NIC",
		         i < t->ngpus ? i : i - t->ngpus);
		fprintf(f, " %-5s", label);
	}
	fprintf(f, " %-20s %s\n", "CPU Affinity", "NUMA Affinity");
	for (int i = 0; i < ndev; i++) {
		const struct cb_topo_dev *d = &t->dev[i];
		snprintf(label, sizeof(label), "%s%d",
		         i < t->ngpus ? "GPU" : "NIC",
		         i < t->ngpus ? i : i - t->ngpus);
		fprintf(f, "%-7s", label);
		for (int k = 0; k < ndev; k++)
			fprintf(f, " %-5s",
			        cb_topo_path_name(cb_topo_path(t, i, k)));
		fprintf(f, " %-20s %s\n", d->cpus[0] ? d->cpus : "N/A",
		        d->numas[0] ? d->numas : "N/A");
	}
	fprintf(f, "\nLegend:\n"
	           "  X    = Self\n"
	           "  SYS  = Connection traversing PCIe as well as the SMP "
	           "interconnect between NUMA nodes\n"
	           "         (e.g., QPI/UPI), or of unknown locality\n"
	           "  NODE = Connection traversing PCIe as well as the "
	           "interconnect between PCIe Host\n"
	           "         Bridges within a NUMA node\n"
	           "  PHB  = Connection traversing PCIe as well as a PCIe Host "
	           "Bridge (typically the CPU)\n"
	           "  PXB  = Connection traversing multiple PCIe bridges "
	           "(without traversing the PCIe\n"
	           "         Host Bridge)\n"
	           "  PIX  = Connection traversing at most a single PCIe "
	           "bridge\n"
	           "  NVL  = Connection traversing NVLink\n");
	if (t->nnics) {
		fprintf(f, "\nNIC Legend:\n");
		for (int i = 0; i < t->nnics; i++)
			fprintf(f, "  NIC%d: %s\n", i, cb_topo_nic(t, i)->name);
	}
}

static void plan(FILE *f, const struct cb_topo_show *s)
{
	char buf[400];

	fprintf(f, "\nbinding plan for %d local rank%s (--bind %s):\n",
	        s->nranks, s->nranks == 1 ? "" : "s",
	        cb_topo_bind_name(s->mode));
	for (int r = 0; r < s->nranks; r++) {
		cb_topo_slot_str(s->t, &s->slots[r], buf, sizeof(buf));
		fprintf(f, "  rank %d -> %s\n", r, buf);
	}
	if (s->plan_note && s->plan_note[0])
		fprintf(f, "  (%s)\n", s->plan_note);
}

static void unknowns(FILE *f, const struct cb_topo *t)
{
	static const struct {
		unsigned bit;
		const char *what;
	} list[] = {
		{ CB_TOPO_UNK_NUMA, "NUMA nodes (the OS reported none; one "
		                    "assumed)" },
		{ CB_TOPO_UNK_MEMORY, "memory size" },
		{ CB_TOPO_UNK_PCI, "PCI devices: none visible (a container "
		                   "or VM without PCI information), so NICs "
		                   "and GPUs may be missing" },
		{ CB_TOPO_UNK_LINK, "link speed or state of some NICs (see "
		                    "above)" },
		{ CB_TOPO_UNK_LOCALITY, "the NUMA node of some devices" },
	};

	if (!t->unknown)
		return;
	fprintf(f, "\nunknown:\n");
	for (size_t i = 0; i < sizeof(list) / sizeof(list[0]); i++)
		if (t->unknown & list[i].bit)
			fprintf(f, "  %s\n", list[i].what);
}

cb_status_t cb_topo_write_table(FILE *f, const struct cb_topo_show *s)
{
	machine(f, s->t);
	devices(f, s->t);
	matrix(f, s->t);
	if (s->nranks > 0)
		plan(f, s);
	unknowns(f, s->t);
	fflush(f);
	return CB_OK;
}
