/* SPDX-License-Identifier: MIT */
/*
 * topo/topo.c - small pure helpers on a discovered topology: path names,
 * the nearest NIC, speeds for people, --bind values; freeing one (with or
 * without hwloc).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "core/mem.h"
#include "topo/topo.h"

const char *cb_topo_path_name(enum cb_topo_path p)
{
	static const char *const names[] = {
		[CB_TOPO_PATH_X] = "X",     [CB_TOPO_PATH_NVL] = "NVL",
		[CB_TOPO_PATH_PIX] = "PIX", [CB_TOPO_PATH_PXB] = "PXB",
		[CB_TOPO_PATH_PHB] = "PHB", [CB_TOPO_PATH_NODE] = "NODE",
		[CB_TOPO_PATH_SYS] = "SYS",
	};
	return (unsigned)p < sizeof(names) / sizeof(names[0]) ? names[p] : "?";
}

int cb_topo_nearest_nic(const struct cb_topo *t, int gpu)
{
	int best = -1;
	enum cb_topo_path bp = CB_TOPO_PATH_SYS;

	if (gpu < 0 || gpu >= t->ngpus)
		return -1;
	for (int n = 0; n < t->nnics; n++) {
		enum cb_topo_path p = cb_topo_path(t, gpu, t->ngpus + n);
		if (best < 0 || p < bp ||
		    (p == bp && cb_topo_nic(t, n)->rdma &&
		     !cb_topo_nic(t, best)->rdma)) {
			best = n;
			bp = p;
		}
	}
	return best;
}

void cb_topo_speed_str(int speed_mbps, char *buf, size_t bytes)
{
	if (speed_mbps < 0)
		snprintf(buf, bytes, "unknown");
	else if (speed_mbps >= 1000)
		snprintf(buf, bytes, "%g Gb/s", speed_mbps / 1000.0);
	else
		snprintf(buf, bytes, "%d Mb/s", speed_mbps);
}

static const char *const bind_names[] = {
	[CB_TOPO_BIND_NONE] = "none",
	[CB_TOPO_BIND_CORE] = "core",
	[CB_TOPO_BIND_NUMA] = "numa",
	[CB_TOPO_BIND_AUTO] = "auto",
};

cb_status_t cb_topo_bind_parse(const char *s, const char *what,
                               enum cb_topo_bind *b)
{
	for (int i = 0; i < 4; i++)
		if (!strcmp(s, bind_names[i])) {
			*b = (enum cb_topo_bind)i;
			return CB_OK;
		}
	return cb_fail(CB_ERR_USAGE,
	               "%s '%s' is not a binding (none, core, numa or auto)",
	               what, s);
}

const char *cb_topo_bind_name(enum cb_topo_bind b)
{
	return (unsigned)b < 4 ? bind_names[b] : "?";
}

cb_status_t cb_topo_opt_check(const char *key, const char *value)
{
	enum cb_topo_bind b;
	char *end;

	if (!strcmp(key, "bind") && cb_topo_bind_parse(value, "--bind", &b))
		return CB_ERR_USAGE;
	if (!strcmp(key, "gpu") &&
	    (strtol(value, &end, 10) < 0 || end == value || *end))
		return cb_fail(CB_ERR_USAGE,
		               "--gpu '%s' is not a GPU index (0, 1, ...)",
		               value);
	if (!strcmp(key, "topo-xml") && access(value, R_OK) != 0)
		return cb_fail(CB_ERR_USAGE,
		               "cannot read topology file '%s': %s", value,
		               strerror(errno));
	return CB_OK;
}

void cb_topo_free(struct cb_topo *t)
{
	if (!t)
		return;
	if (t->hw && t->hw_free)
		t->hw_free(t->hw);
	cb_free_all(t->numa, t->cores, t->dev, t->path, t);
}
