/* SPDX-License-Identifier: MIT */
/*
 * topo/bind.c - applying a binding plan to this process (hwloc).  Only a
 * topology of this very machine is applied: a recording plans, it does not
 * bind.
 */
#include <errno.h>
#include <hwloc.h>
#include <stdio.h>
#include <string.h>

#include "core/log.h"
#include "topo/topo.h"

cb_status_t cb_topo_bind_apply(const struct cb_topo *t,
                               const struct cb_topo_slot *s)
{
	const char *cpus = s->core >= 0   ? t->cores[s->core].cpus
	                   : s->numa >= 0 ? t->numa[s->numa].cpus
	                                  : NULL;
	hwloc_bitmap_t set;
	cb_status_t st = CB_OK;

	if (!cpus || !cpus[0] || !t->this_system)
		return CB_OK;
	if (!(set = hwloc_bitmap_alloc()))
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	if (hwloc_bitmap_list_sscanf(set, cpus) != 0 ||
	    hwloc_set_cpubind(t->hw, set, HWLOC_CPUBIND_PROCESS) != 0)
		st = cb_fail(CB_ERR_SYS, "cannot bind to cpus %s: %s", cpus,
		             strerror(errno));
	hwloc_bitmap_free(set);
	return st;
}

int cb_topo_bound_already(const struct cb_topo *t, char *cpus, size_t bytes)
{
	hwloc_bitmap_t set;
	int bound = 0;

	if (!t->this_system || !(set = hwloc_bitmap_alloc()))
		return 0;
	if (hwloc_get_cpubind(t->hw, set, HWLOC_CPUBIND_PROCESS) == 0) {
		hwloc_const_bitmap_t all =
		        hwloc_topology_get_allowed_cpuset(t->hw);
		bound = hwloc_bitmap_isincluded(all, set) == 0 &&
		        hwloc_bitmap_isincluded(set, all);
		hwloc_bitmap_list_snprintf(cpus, bytes, set);
	}
	hwloc_bitmap_free(set);
	return bound;
}
