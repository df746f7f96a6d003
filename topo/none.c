/* SPDX-License-Identifier: MIT */
/*
 * topo/none.c - a build without hwloc (-Dhwloc=disabled): no topology can be
 * loaded, so nothing is bound and `collbench topo` says so and exits 77.
 * Planning, comparing and printing (pure code) are still built.
 */
#include <stdlib.h>

#include "core/log.h"
#include "topo/topo.h"

cb_status_t cb_topo_load(const char *xml, const char *synthetic,
                         struct cb_topo **out)
{
	(void)xml;
	(void)synthetic;
	(void)out;
	return cb_fail(CB_ERR_UNAVAILABLE,
	               "this build of collbench has no hwloc (built with "
	               "-Dhwloc=disabled): no topology");
}

cb_status_t cb_topo_load_host(const char *xml, struct cb_topo **out)
{
	return cb_topo_load(xml, NULL, out);
}

cb_status_t cb_topo_export_xml(struct cb_topo *t, const char *path)
{
	(void)t;
	(void)path;
	return cb_fail(CB_ERR_UNAVAILABLE, "this build has no hwloc");
}

cb_status_t cb_topo_bind_apply(const struct cb_topo *t,
                               const struct cb_topo_slot *s)
{
	(void)t;
	(void)s;
	return CB_OK;
}

int cb_topo_bound_already(const struct cb_topo *t, char *cpus, size_t bytes)
{
	(void)t;
	(void)cpus;
	(void)bytes;
	return 0;
}

cb_status_t cb_topo_write_json(FILE *f, const struct cb_topo_show *s)
{
	(void)f;
	(void)s;
	return cb_fail(CB_ERR_UNAVAILABLE, "this build has no json-c");
}

cb_status_t cb_topo_write_inv_json(FILE *f, const struct cb_topo_job *j)
{
	(void)f;
	(void)j;
	return cb_fail(CB_ERR_UNAVAILABLE, "this build has no json-c");
}
const int cb_topo_have_hwloc = 0;
