/* SPDX-License-Identifier: MIT */
/*
 * topo/link.c - a NIC's link speed and state from sysfs, for the live
 * machine only.
 *
 * A verbs device: /sys/class/infiniband/DEV/ports/N/{state,rate} of its first
 * ACTIVE port (else port 1): "4: ACTIVE", "100 Gb/sec (4X EDR)"; link_layer
 * tells RoCE from InfiniBand and node_type "4: RNIC" means iWARP.  A netdev:
 * /sys/class/net/DEV/speed (Mb/s; -1 or unreadable while the link is down)
 * and operstate.  The root is a parameter so that tests read a made-up tree.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/nic.h"
#include "topo/topo.h"

/* "4: ACTIVE" -> "active" */
static void ib_state(const char *s, char *out, size_t bytes)
{
	const char *p = strchr(s, ':');
	size_t n = 0;

	p = p ? p + 1 : s;
	while (*p == ' ')
		p++;
	for (; *p && n + 1 < bytes; p++)
		out[n++] = (char)tolower((unsigned char)*p);
	out[n] = '\0';
}

static void read_ib(const char *sysroot, struct cb_topo_dev *d)
{
	char dir[512], path[1024], state[64], rate[64];
	int best = -1, best_active = 0;
	DIR *ports;
	struct dirent *e;

	snprintf(dir, sizeof(dir), "%s/class/infiniband/%s/ports", sysroot,
	         d->name);
	if (!(ports = opendir(dir)))
		return;
	while ((e = readdir(ports))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/state", dir, e->d_name);
		if (cb_sysfs_line(path, state, sizeof(state)))
			continue;
		int num = atoi(e->d_name);
		int active = strstr(state, "ACTIVE") != NULL;
		/* The first active port, else the lowest-numbered one. */
		if (best >= 0 && (best_active > active ||
		                  (best_active == active && num > best)))
			continue;
		best = num;
		best_active = active;
		ib_state(state, d->state, sizeof(d->state));
		snprintf(path, sizeof(path), "%s/%s/rate", dir, e->d_name);
		d->speed_mbps = -1;
		if (!cb_sysfs_line(path, rate, sizeof(rate)) &&
		    strstr(rate, "Gb/sec"))
			d->speed_mbps = (int)(atof(rate) * 1000.0 + 0.5);
		snprintf(path, sizeof(path), "%s/%s/link_layer", dir,
		         e->d_name);
		if (!cb_sysfs_line(path, rate, sizeof(rate)))
			snprintf(d->kind, sizeof(d->kind), "%s",
			         !strcmp(rate, "Ethernet") ? "RoCE"
			                                   : "InfiniBand");
	}
	closedir(ports);
	snprintf(path, sizeof(path), "%s/class/infiniband/%s/node_type",
	         sysroot, d->name);
	if (!cb_sysfs_line(path, rate, sizeof(rate)) && strstr(rate, "RNIC"))
		snprintf(d->kind, sizeof(d->kind), "iWARP");
	if (best >= 0)
		snprintf(d->link_note, sizeof(d->link_note), "sysfs, port %d",
		         best);
}

static void read_net(const char *sysroot, const char *name,
                     struct cb_topo_dev *d)
{
	char path[512], v[64];

	snprintf(path, sizeof(path), "%s/class/net/%s/operstate", sysroot,
	         name);
	if (cb_sysfs_line(path, v, sizeof(v)))
		return;
	snprintf(d->state, sizeof(d->state), "%.15s", v[0] ? v : "unknown");
	snprintf(path, sizeof(path), "%s/class/net/%s/speed", sysroot, name);
	/* Reading speed fails (EINVAL) on a link that is down. */
	if (!cb_sysfs_line(path, v, sizeof(v)) && atoi(v) > 0)
		d->speed_mbps = atoi(v);
	snprintf(d->link_note, sizeof(d->link_note), "sysfs");
}

void cb_topo_link_read(const char *sysroot, struct cb_topo_dev *d)
{
	char names[sizeof(d->aliases) + sizeof(d->name) + 1];

	d->speed_mbps = -1;
	snprintf(d->state, sizeof(d->state), "unknown");
	snprintf(d->link_note, sizeof(d->link_note),
	         "not in sysfs (another network namespace?)");
	if (d->rdma)
		read_ib(sysroot, d);
	if (d->speed_mbps >= 0 && strcmp(d->state, "unknown"))
		return;
	/* The netdevs of the device, its own name first. */
	snprintf(names, sizeof(names), "%s,%s", d->name, d->aliases);
	for (char *save, *n = strtok_r(names, ",", &save); n;
	     n = strtok_r(NULL, ",", &save)) {
		struct cb_topo_dev nd = { .speed_mbps = -1,
			                  .state = "unknown" };
		read_net(sysroot, n, &nd);
		if (!strcmp(nd.state, "unknown") && nd.speed_mbps < 0)
			continue;
		if (!strcmp(d->state, "unknown"))
			snprintf(d->state, sizeof(d->state), "%s", nd.state);
		if (d->speed_mbps < 0)
			d->speed_mbps = nd.speed_mbps;
		snprintf(d->link_note, sizeof(d->link_note), "sysfs");
		break;
	}
}
