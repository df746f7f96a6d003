/* SPDX-License-Identifier: MIT */
/*
 * topo/discover_cpu.c - the CPU side of one host's hwloc topology
 * (topo/discover.c loads it): machine identity, packages, NUMA nodes with
 * their memory, cores (a PU each where there is no core level) and caches.
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/log.h"
#include "topo/hw.h"
#include "topo/topo.h"

static void extract_machine(struct cb_topo *t)
{
	hwloc_topology_t hw = t->hw;
	hwloc_obj_t root = hwloc_get_root_obj(hw);
	const char *v;

	snprintf(t->host, sizeof(t->host), "%s",
	         (v = info(root, "HostName")) ? v : "unknown");
	snprintf(t->arch, sizeof(t->arch), "%s",
	         (v = info(root, "Architecture")) ? v : "unknown");
	if (!(v = info(root, "DMIProductName")))
		if (!(v = info(root, "PlatformModel")))
			v = info(root, "PlatformName");
	snprintf(t->model, sizeof(t->model), "%s", v ? v : "");
	t->npackages = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_PACKAGE);
	t->nnuma = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_NUMANODE);
	t->npus = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_PU);
	t->mem_bytes = root->total_memory ? (int64_t)root->total_memory : -1;
	if (t->mem_bytes < 0)
		t->unknown |= CB_TOPO_UNK_MEMORY;
	/* Live, hwloc says whether the OS told it about NUMA; without that
	 * it made up one node.  A recording is taken as it is. */
	if (t->this_system && !hwloc_topology_get_support(hw)->discovery->numa)
		t->unknown |= CB_TOPO_UNK_NUMA;
}

static cb_status_t extract_cpus(struct cb_topo *t)
{
	hwloc_topology_t hw = t->hw;
	hwloc_obj_type_t ctype = HWLOC_OBJ_CORE;

	/* Some machines (and synthetic descriptions) have no core level:
	 * each PU is then its own core. */
	if (hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_CORE) <= 0)
		ctype = HWLOC_OBJ_PU;
	t->ncores = hwloc_get_nbobjs_by_type(hw, ctype);
	t->numa =
	        calloc((size_t)(t->nnuma > 0 ? t->nnuma : 1), sizeof(*t->numa));
	t->cores = calloc((size_t)(t->ncores > 0 ? t->ncores : 1),
	                  sizeof(*t->cores));
	if (!t->numa || !t->cores)
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	for (int i = 0; i < t->nnuma; i++) {
		hwloc_obj_t n = hwloc_get_obj_by_type(hw, HWLOC_OBJ_NUMANODE,
		                                      (unsigned)i);
		struct cb_topo_numa *tn = &t->numa[i];
		tn->os_index = (int)n->os_index;
		tn->mem_bytes =
		        n->attr->numanode.local_memory
		                ? (int64_t)n->attr->numanode.local_memory
		                : -1;
		tn->ncores = hwloc_get_nbobjs_inside_cpuset_by_type(
		        hw, n->cpuset, ctype);
		tn->npus = hwloc_get_nbobjs_inside_cpuset_by_type(hw, n->cpuset,
		                                                  HWLOC_OBJ_PU);
		list_str(n->cpuset, tn->cpus, sizeof(tn->cpus));
	}
	for (int i = 0; i < t->ncores; i++) {
		hwloc_obj_t c = hwloc_get_obj_by_type(hw, ctype, (unsigned)i);
		hwloc_obj_t p = hwloc_get_ancestor_obj_by_type(
		        hw, HWLOC_OBJ_PACKAGE, c);
		struct cb_topo_core *tc = &t->cores[i];
		tc->package = p ? (int)p->logical_index : -1;
		tc->numa = -1;
		for (int k = 0; k < t->nnuma && tc->numa < 0; k++) {
			hwloc_obj_t n = hwloc_get_obj_by_type(
			        hw, HWLOC_OBJ_NUMANODE, (unsigned)k);
			if (hwloc_bitmap_isincluded(c->cpuset, n->cpuset))
				tc->numa = k;
		}
		list_str(c->cpuset, tc->cpus, sizeof(tc->cpus));
	}
	return CB_OK;
}

static void extract_caches(struct cb_topo *t)
{
	static const hwloc_obj_type_t types[] = {
		HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE,
		HWLOC_OBJ_L4CACHE, HWLOC_OBJ_L5CACHE,
	};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		int depth = hwloc_get_type_depth(t->hw, types[i]);
		if (depth < 0 || t->ncaches == CB_TOPO_MAX_CACHES)
			continue;
		hwloc_obj_t c = hwloc_get_obj_by_depth(t->hw, depth, 0);
		t->cache[t->ncaches].level = (int)c->attr->cache.depth;
		t->cache[t->ncaches].type =
		        c->attr->cache.type == HWLOC_OBJ_CACHE_DATA ? 'd'
		        : c->attr->cache.type == HWLOC_OBJ_CACHE_INSTRUCTION
		                ? 'i'
		                : 'u';
		t->cache[t->ncaches].bytes = (int64_t)c->attr->cache.size;
		t->cache[t->ncaches].count =
		        (int)hwloc_get_nbobjs_by_depth(t->hw, depth);
		t->ncaches++;
	}
}

cb_status_t cb_topo_hw_host(struct cb_topo *t)
{
	cb_status_t st;

	extract_machine(t);
	if ((st = extract_cpus(t)))
		return st;
	extract_caches(t);
	return CB_OK;
}
