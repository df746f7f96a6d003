/* SPDX-License-Identifier: MIT */
/*
 * topo/hw.h - what topo/discover.c (devices) and topo/discover_cpu.c (the
 * CPU side) share of hwloc: two small readers, and the CPU side's entry.
 * Built only with hwloc.
 */
#ifndef CB_TOPO_HW_H
#define CB_TOPO_HW_H

#include <hwloc.h>

#include "topo/topo.h"

/* @set as a list ("0-3,8"), "" when empty or absent. */
static inline void list_str(hwloc_const_bitmap_t set, char *buf, size_t bytes)
{
	if (!set || hwloc_bitmap_iszero(set))
		buf[0] = '\0';
	else
		hwloc_bitmap_list_snprintf(buf, bytes, set);
}

static inline const char *info(hwloc_obj_t o, const char *name)
{
	const char *v = o ? hwloc_obj_get_info_by_name(o, name) : NULL;
	return v && *v ? v : NULL;
}

/* Machine identity, packages, NUMA nodes, cores and caches of @t->hw. */
cb_status_t cb_topo_hw_host(struct cb_topo *t);

#endif
