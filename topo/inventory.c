/* SPDX-License-Identifier: MIT */
/*
 * topo/inventory.c - one host's summary, and the comparison that finds the
 * hosts unlike the others: the first check when a newly cabled cluster is
 * slow is whether one node has fewer cores, less memory, a missing NIC, a
 * link at a lower rate or down, or a missing GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "topo/topo.h"

static int cmp_nic_name(const void *a, const void *b)
{
	const struct cb_topo_dev *const *x = a, *const *y = b;

	return strcmp((*x)->name, (*y)->name);
}

void cb_topo_inv_fill(const struct cb_topo *t, const char *host,
                      struct cb_topo_inv *inv)
{
	const struct cb_topo_dev *nics[64];
	int n = t->nnics < 64 ? t->nnics : 64;
	const char *src = t->source;

	memset(inv, 0, sizeof(*inv));
	snprintf(inv->host, sizeof(inv->host), "%s", host ? host : t->host);
	if (!strncmp(src, "xml ", 4)) {
		src += 4;
		if (strrchr(src, '/'))
			src = strrchr(src, '/') + 1;
	}
	snprintf(inv->source, sizeof(inv->source), "%.47s", src);
	inv->packages = t->npackages;
	inv->numa = t->nnuma;
	inv->cores = t->ncores;
	inv->pus = t->npus;
	inv->nics = t->nnics;
	inv->gpus = t->ngpus;
	inv->mem_bytes = t->mem_bytes;
	inv->unknown = t->unknown;
	for (int i = 0; i < n; i++)
		nics[i] = cb_topo_nic(t, i);
	qsort(nics, (size_t)n, sizeof(nics[0]), cmp_nic_name);
	for (int i = 0; i < n && i < CB_TOPO_INV_NICS; i++) {
		snprintf(inv->nic[i].name, sizeof(inv->nic[i].name), "%s",
		         nics[i]->name);
		inv->nic[i].speed_mbps = nics[i]->speed_mbps;
		snprintf(inv->nic[i].state, sizeof(inv->nic[i].state), "%s",
		         nics[i]->state);
	}
}

static void mem_str(int64_t bytes, char *buf, size_t n)
{
	if (bytes < 0)
		snprintf(buf, n, "unknown");
	else
		snprintf(buf, n, "%.1f GiB", (double)bytes / (1u << 30));
}

static int inv_nics(const struct cb_topo_inv *inv)
{
	return inv->nics < CB_TOPO_INV_NICS ? inv->nics : CB_TOPO_INV_NICS;
}

void cb_topo_inv_str(const struct cb_topo_inv *inv, char *buf, size_t bytes)
{
	char mem[32], speed[32];
	size_t n = 0;

	mem_str(inv->mem_bytes, mem, sizeof(mem));
	cb_buf_appendf(buf, bytes, &n,
	               "%d package%s, %d NUMA node%s, %d cores, %d "
	               "PUs, memory %s, %d GPU%s, %d NIC%s",
	               inv->packages, inv->packages == 1 ? "" : "s", inv->numa,
	               inv->numa == 1 ? "" : "s", inv->cores, inv->pus, mem,
	               inv->gpus, inv->gpus == 1 ? "" : "s", inv->nics,
	               inv->nics == 1 ? "" : "s");
	for (int i = 0; i < inv_nics(inv); i++) {
		int nostate = !strcmp(inv->nic[i].state, "unknown");
		cb_topo_speed_str(inv->nic[i].speed_mbps, speed, sizeof(speed));
		if (inv->nic[i].speed_mbps < 0 && nostate)
			snprintf(speed, sizeof(speed), "link unknown");
		else if (inv->nic[i].speed_mbps < 0)
			speed[0] = '\0';
		cb_buf_appendf(buf, bytes, &n, "%s%s %s%s%s", i ? ", " : ": ",
		               inv->nic[i].name, speed,
		               speed[0] && !nostate ? " " : "",
		               nostate ? "" : inv->nic[i].state);
	}
	if (inv->nics > CB_TOPO_INV_NICS)
		cb_buf_appendf(buf, bytes, &n, ", ...");
	if (strcmp(inv->source, "live"))
		cb_buf_appendf(buf, bytes, &n, " [%s]", inv->source);
}

/* ---- comparison ---- */

enum field {
	F_CORES,
	F_PUS,
	F_NUMA,
	F_MEM,
	F_GPUS,
	F_NICS,
	F_NIC_NAMES,
	F_NIC_SPEED, /* of the NIC named by the caller */
	F_NIC_STATE,
};

static const char *const field_label[] = {
	[F_CORES] = "cores",         [F_PUS] = "PUs",
	[F_NUMA] = "NUMA nodes",     [F_MEM] = "memory",
	[F_GPUS] = "GPUs",           [F_NICS] = "NICs",
	[F_NIC_NAMES] = "NIC names", [F_NIC_SPEED] = "speed",
	[F_NIC_STATE] = "state",
};

static int find_nic(const struct cb_topo_inv *inv, const char *name)
{
	for (int i = 0; name && i < inv_nics(inv); i++)
		if (!strcmp(inv->nic[i].name, name))
			return i;
	return -1;
}

static void nic_names(const struct cb_topo_inv *inv, char *buf, size_t n)
{
	size_t k = 0;

	buf[0] = '\0';
	for (int i = 0; i < inv_nics(inv); i++)
		cb_buf_appendf(buf, n, &k, "%s%s", i ? "," : "",
		               inv->nic[i].name);
	if (!inv_nics(inv))
		snprintf(buf, n, "none");
}

static int valid(const struct cb_topo_inv *a, enum field f, const char *nic)
{
	return f < F_NIC_SPEED || find_nic(a, nic) >= 0;
}

/* The fields that are a count. */
static int count_of(const struct cb_topo_inv *a, enum field f)
{
	return f == F_CORES  ? a->cores
	       : f == F_PUS  ? a->pus
	       : f == F_NUMA ? a->numa
	       : f == F_GPUS ? a->gpus
	                     : a->nics;
}

static void value(const struct cb_topo_inv *a, enum field f, const char *nic,
                  char *buf, size_t n)
{
	int k = f >= F_NIC_SPEED ? find_nic(a, nic) : -1;

	buf[0] = '\0';

	switch (f) {
	case F_CORES:
	case F_PUS:
	case F_NUMA:
	case F_GPUS:
	case F_NICS:
		snprintf(buf, n, "%d", count_of(a, f));
		break;
	case F_MEM:
		mem_str(a->mem_bytes, buf, n);
		break;
	case F_NIC_NAMES:
		nic_names(a, buf, n);
		break;
	case F_NIC_SPEED:
		if (k >= 0)
			cb_topo_speed_str(a->nic[k].speed_mbps, buf, n);
		break;
	case F_NIC_STATE:
		if (k >= 0)
			snprintf(buf, n, "%s", a->nic[k].state);
		break;
	}
}

static int equal(const struct cb_topo_inv *a, const struct cb_topo_inv *b,
                 enum field f, const char *nic)
{
	char x[256], y[256];

	if (f == F_MEM) {
		int64_t p = a->mem_bytes, q = b->mem_bytes;
		int64_t hi = p > q ? p : q, d = p > q ? p - q : q - p;
		/* Identical nodes differ by what firmware and kernel
		 * reserve; a missing DIMM is more than 2%. */
		if (p < 0 || q < 0)
			return p == q;
		return d * 50 <= hi;
	}
	value(a, f, nic, x, sizeof(x));
	value(b, f, nic, y, sizeof(y));
	return !strcmp(x, y);
}

static void compare_field(const struct cb_topo_inv *inv, int n,
                          struct cb_topo_inv_diff *d, enum field f,
                          const char *nic)
{
	int best = -1, best_count = 0;
	char have[64], want[64];

	for (int i = 0; i < n; i++) {
		int count = 0;
		if (!valid(&inv[i], f, nic))
			continue;
		for (int j = 0; j < n; j++)
			count += valid(&inv[j], f, nic) &&
			         equal(&inv[i], &inv[j], f, nic);
		/* Strictly more: a tie keeps the earliest host's value. */
		if (count > best_count) {
			best = i;
			best_count = count;
		}
	}
	for (int i = 0; best >= 0 && i < n; i++) {
		size_t k = strlen(d[i].why);
		if (!valid(&inv[i], f, nic) ||
		    equal(&inv[i], &inv[best], f, nic))
			continue;
		value(&inv[i], f, nic, have, sizeof(have));
		value(&inv[best], f, nic, want, sizeof(want));
		d[i].differs = 1;
		if (nic)
			snprintf(d[i].why + k, sizeof(d[i].why) - k,
			         "%sNIC %s %s %s (others: %s)", k ? "; " : "",
			         nic, field_label[f], have, want);
		else
			snprintf(d[i].why + k, sizeof(d[i].why) - k,
			         "%s%s %s (others: %s)", k ? "; " : "",
			         field_label[f], have, want);
	}
}

int cb_topo_inv_compare(const struct cb_topo_inv *inv, int n,
                        struct cb_topo_inv_diff *d)
{
	int differing = 0;

	memset(d, 0, (size_t)n * sizeof(*d));
	for (enum field f = F_CORES; f <= F_NIC_NAMES; f++)
		compare_field(inv, n, d, f, NULL);
	/* Each NIC name any host has, compared among the hosts that have
	 * it (a missing NIC already shows in the names). */
	for (int i = 0; i < n; i++)
		for (int k = 0; k < inv_nics(&inv[i]); k++) {
			const char *name = inv[i].nic[k].name;
			int seen = 0;
			for (int p = 0; p < i && !seen; p++)
				seen = find_nic(&inv[p], name) >= 0;
			if (seen)
				continue;
			compare_field(inv, n, d, F_NIC_SPEED, name);
			compare_field(inv, n, d, F_NIC_STATE, name);
		}
	for (int i = 0; i < n; i++)
		differing += d[i].differs;
	return differing;
}
