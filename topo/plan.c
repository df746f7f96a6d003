/* SPDX-License-Identifier: MIT */
/*
 * topo/plan.c - where the local ranks of one host go.
 *
 * GPUs: local rank i uses GPU i mod #GPUs (the convention of torchrun and
 * nccl-tests), or the one --gpu names.  Then, by mode:
 *   none  nothing is bound;
 *   core  rank i on core i, in hwloc's order (mpirun --bind-to core);
 *   numa  rank on all cores of a NUMA node: its GPU's node, else
 *         round-robin over the nodes that have cores;
 *   auto  one core each: on its GPU's NUMA node (or --nic's), else
 *         round-robin over NUMA nodes, then the node's next free core; a
 *         full node passes the rank on to the next.  More ranks than cores:
 *         nothing is bound (sharing cores while spinning is worse than
 *         letting the scheduler move ranks).
 * NICs: the one --nic names, else the nearest to the rank's GPU by PCI path,
 * else one on the rank's NUMA node; ties go to the NIC with fewest ranks so
 * far.  Verbs NICs whose link is not down are preferred to plain ones.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/mem.h"
#include "core/strbuf.h"
#include "topo/topo.h"

static int is_down(const char *state)
{
	static const char *const down[] = { "down",       "lowerlayerdown",
		                            "notpresent", "dormant",
		                            "init",       "armed",
		                            "nop",        NULL };
	for (int i = 0; down[i]; i++)
		if (!strcmp(state, down[i]))
			return 1;
	return 0;
}

static int numa_index(const struct cb_topo *t, int os_index)
{
	for (int i = 0; os_index >= 0 && i < t->nnuma; i++)
		if (t->numa[i].os_index == os_index)
			return i;
	return -1;
}

static int has_name(const struct cb_topo_dev *d, const char *name)
{
	char list[sizeof(d->aliases)];

	if (!strcmp(d->name, name))
		return 1;
	snprintf(list, sizeof(list), "%s", d->aliases);
	for (char *save, *a = strtok_r(list, ",", &save); a;
	     a = strtok_r(NULL, ",", &save))
		if (!strcmp(a, name))
			return 1;
	return 0;
}

int cb_topo_nic_find(const struct cb_topo *t, const char *name)
{
	for (int n = 0; n < t->nnics; n++)
		if (has_name(cb_topo_nic(t, n), name))
			return n;
	return -1;
}

static cb_status_t check_overrides(const struct cb_topo *t, const char *nic,
                                   int gpu, int *nic_fixed)
{
	char names[512] = "";

	*nic_fixed = -1;
	if (gpu >= t->ngpus) {
		if (!t->ngpus)
			return cb_fail(CB_ERR_USAGE,
			               "--gpu %d: this host has no GPU", gpu);
		return cb_fail(CB_ERR_USAGE,
		               "--gpu %d is out of range: this host has %d "
		               "GPU%s (0-%d)",
		               gpu, t->ngpus, t->ngpus == 1 ? "" : "s",
		               t->ngpus - 1);
	}
	if (!nic)
		return CB_OK;
	for (int n = 0; n < t->nnics; n++) {
		const struct cb_topo_dev *d = cb_topo_nic(t, n);
		if (has_name(d, nic)) {
			*nic_fixed = n;
			return CB_OK;
		}
		snprintf(names + strlen(names), sizeof(names) - strlen(names),
		         "%s%s%s%s%s", n ? ", " : "", d->name,
		         d->aliases[0] ? " (" : "", d->aliases,
		         d->aliases[0] ? ")" : "");
	}
	return cb_fail(CB_ERR_USAGE,
	               "--nic %s: this host has no such NIC (%s%s)", nic,
	               t->nnics ? "it has: " : "it has none", names);
}

/* The NUMA node (index) a rank should sit on. */
static int want_numa(const struct cb_topo *t, const struct cb_topo_slot *s,
                     int nic_fixed, int r, const int *with_cores, int nwc)
{
	int n = -1;

	if (s->gpu >= 0)
		n = numa_index(t, cb_topo_gpu(t, s->gpu)->numa);
	if (n < 0 && nic_fixed >= 0)
		n = numa_index(t, cb_topo_nic(t, nic_fixed)->numa);
	if (n < 0 && nwc > 0)
		n = with_cores[r % nwc];
	return n;
}

static int free_core(const struct cb_topo *t, int numa, const int *used)
{
	for (int c = 0; c < t->ncores; c++)
		if (!used[c] && t->cores[c].numa == numa)
			return c;
	return -1;
}

static void place_auto(const struct cb_topo *t, struct cb_topo_slot *s,
                       int want, int *used, const int *with_cores, int nwc)
{
	int c = want >= 0 ? free_core(t, want, used) : -1;
	int start = 0;

	while (start < nwc && with_cores[start] != want)
		start++;
	for (int k = 1; c < 0 && k <= nwc; k++)
		c = free_core(t, with_cores[(start + k) % nwc], used);
	for (int k = 0; c < 0 && k < t->ncores; k++)
		if (!used[k])
			c = k; /* cores whose NUMA node is unknown */
	if (c < 0)
		return;
	used[c] = 1;
	s->core = c;
	s->numa = t->cores[c].numa;
}

static void pick_nic(const struct cb_topo *t, struct cb_topo_slot *s, int *load)
{
	int any_rdma = 0, any_up = 0, best = -1;
	long best_key = 0;

	for (int n = 0; n < t->nnics; n++) {
		const struct cb_topo_dev *d = cb_topo_nic(t, n);
		any_up |= !is_down(d->state);
		any_rdma |= d->rdma && !is_down(d->state);
	}
	for (int n = 0; n < t->nnics; n++) {
		const struct cb_topo_dev *d = cb_topo_nic(t, n);
		long dist;
		if ((any_rdma && !d->rdma) || (any_up && is_down(d->state)))
			continue;
		if (s->gpu >= 0)
			dist = cb_topo_path(t, s->gpu, t->ngpus + n);
		else if (s->numa >= 0)
			dist = d->numa == t->numa[s->numa].os_index ? 0
			       : d->numa < 0                        ? 1
			                                            : 2;
		else
			dist = 0;
		long key = dist * 1000000L + load[n] * 1000L + n;
		if (best < 0 || key < best_key) {
			best = n;
			best_key = key;
		}
	}
	if (best >= 0) {
		s->nic = best;
		load[best]++;
	}
}

cb_status_t cb_topo_plan(const struct cb_topo *t, enum cb_topo_bind mode,
                         int nranks, const char *nic, int gpu,
                         struct cb_topo_slot *slots, char *note,
                         size_t note_bytes)
{
	int nic_fixed, nwc = 0;
	cb_status_t st;

	if (note_bytes)
		note[0] = '\0';
	if ((st = check_overrides(t, nic, gpu, &nic_fixed)))
		return st;
	int *used = calloc((size_t)t->ncores + 1, sizeof(int));
	int *load = calloc((size_t)t->nnics + 1, sizeof(int));
	int *with_cores = calloc((size_t)t->nnuma + 1, sizeof(int));
	if (!used || !load || !with_cores) {
		cb_free_all(used, load, with_cores);
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	}
	for (int i = 0; i < t->nnuma; i++)
		if (t->numa[i].ncores > 0)
			with_cores[nwc++] = i;
	if (mode == CB_TOPO_BIND_AUTO && nranks > t->ncores) {
		snprintf(note, note_bytes,
		         "%d local ranks on %d cores: not bound", nranks,
		         t->ncores);
		mode = CB_TOPO_BIND_NONE;
	} else if (mode == CB_TOPO_BIND_CORE && nranks > t->ncores) {
		snprintf(note, note_bytes, "%d local ranks on %d cores: shared",
		         nranks, t->ncores);
	}
	for (int r = 0; r < nranks; r++) {
		struct cb_topo_slot *s = &slots[r];
		*s = (struct cb_topo_slot){
			.core = -1, .numa = -1, .gpu = -1, .nic = -1
		};
		s->gpu = gpu >= 0 ? gpu : t->ngpus ? r % t->ngpus : -1;
		int want = want_numa(t, s, nic_fixed, r, with_cores, nwc);
		switch (mode) {
		case CB_TOPO_BIND_CORE:
			if (t->ncores > 0) {
				s->core = r % t->ncores;
				s->numa = t->cores[s->core].numa;
			}
			break;
		case CB_TOPO_BIND_NUMA:
			s->numa = want;
			break;
		case CB_TOPO_BIND_AUTO:
			place_auto(t, s, want, used, with_cores, nwc);
			break;
		case CB_TOPO_BIND_NONE:
			break;
		}
		if (nic_fixed >= 0)
			s->nic = nic_fixed;
		else
			pick_nic(t, s, load);
	}
	cb_free_all(used, load, with_cores);
	return CB_OK;
}

void cb_topo_slot_str(const struct cb_topo *t, const struct cb_topo_slot *s,
                      char *buf, size_t bytes)
{
	size_t n;
	int dev = s->gpu >= 0 || s->nic >= 0;

	if (s->core >= 0 && s->numa >= 0)
		snprintf(buf, bytes, "core %d (NUMA %d, cpus %s", s->core,
		         t->numa[s->numa].os_index, t->cores[s->core].cpus);
	else if (s->core >= 0)
		snprintf(buf, bytes, "core %d (cpus %s", s->core,
		         t->cores[s->core].cpus);
	else if (s->numa >= 0)
		snprintf(buf, bytes, "NUMA %d (cpus %s",
		         t->numa[s->numa].os_index, t->numa[s->numa].cpus);
	else
		snprintf(buf, bytes, "unbound%s", dev ? " (" : "");
	n = strlen(buf);
	if (dev && (s->core >= 0 || s->numa >= 0))
		cb_buf_appendf(buf, bytes, &n, "; ");
	if (s->gpu >= 0)
		cb_buf_appendf(buf, bytes, &n, "GPU %d%s", s->gpu,
		               s->nic >= 0 ? ", " : "");
	if (s->nic >= 0)
		cb_buf_appendf(buf, bytes, &n, "NIC %s",
		               cb_topo_nic(t, s->nic)->name);
	if (s->core >= 0 || s->numa >= 0 || dev)
		cb_buf_appendf(buf, bytes, &n, ")");
}
