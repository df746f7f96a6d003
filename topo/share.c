/* SPDX-License-Identifier: MIT */
/*
 * topo/share.c - which ranks share a machine (its boot id), and hwloc's
 * discovery done once per host: it reads PCI config space and sysfs, the
 * same work on every rank, and 256 ranks on a few cores wait for it.  A
 * host's local rank 0 discovers and keeps the result in a memory file its
 * host's other ranks load (cb_topo_load_host).  Anything that fails here
 * only costs the others their own discovery.
 */
#include "topo/share.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/log.h"
#include "core/strbuf.h"

/* The CPUs and memory nodes this process may use, hashed: a rank confined
 * to other CPUs than its leader (a per-task cgroup) discovers for itself. */
static uint64_t allowed_hash(void)
{
	uint64_t h = CB_STR_HASH0;
	char line[512];
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return h;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Cpus_allowed_list:", 18) ||
		    !strncmp(line, "Mems_allowed_list:", 18))
			h = cb_str_hash(h, line);
	fclose(f);
	return h;
}

/*
 * Which ranks share this machine's cores: those with our boot id.  Usually
 * the ranks of our host; but test hosts made of network namespaces, or
 * containers, are different hosts on one machine, and binding each host's
 * ranks from core 0 would pile them onto the same cores.  The same gather
 * carries each host leader's discovery (@mine->fd >= 0): @leader gets the
 * path of the one for our host and CPUs, or "".
 */
cb_status_t cb_topo_machine_place(const struct cb_topo_job_cfg *cfg,
                                  struct cb_topo_place *mine, int *mrank,
                                  int *msize, char *leader, size_t leader_bytes)
{
	int rank = cfg->rank, world = cfg->world;
	struct cb_topo_place *all;
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
	char boot[64] = "";
	cb_status_t st;

	if (f) {
		if (!fgets(boot, sizeof(boot), f))
			boot[0] = '\0';
		fclose(f);
	}
	if (!boot[0])
		gethostname(boot, sizeof(boot) - 1);
	mine->boot = cb_str_hash(CB_STR_HASH0, boot);
	mine->host = cb_str_hash(CB_STR_HASH0, cfg->host_key);
	mine->cpus = allowed_hash();
	if (!(all = calloc((size_t)world, sizeof(*all))))
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	st = cfg->allgather(cfg->ctx, "every rank's machine", mine,
	                    sizeof(*mine), all);
	*mrank = *msize = 0;
	leader[0] = '\0';
	for (int r = 0; !st && r < world; r++) {
		const struct cb_topo_place *p = &all[r];
		if (p->boot != mine->boot)
			continue;
		*mrank += r < rank;
		(*msize)++;
		if (!leader[0] && r != rank && p->fd >= 0 &&
		    p->host == mine->host && p->cpus == mine->cpus)
			snprintf(leader, leader_bytes, "/proc/%d/fd/%d",
			         (int)p->pid, (int)p->fd);
	}
	free(all);
	return st;
}

int cb_topo_share_discovery(struct cb_topo *t, int *fd)
{
	struct cb_fail_rec why;
	char path[64];
	int d = memfd_create("collbench-topology", MFD_CLOEXEC);

	if (d < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", d);
	cb_fail_open(&why);
	cb_status_t st = cb_topo_export_xml(t, path);
	cb_fail_close(&why, 0);
	if (st) {
		close(d);
		return -1;
	}
	*fd = d;
	return 0;
}

/* This rank's topology: @xml if given, else its host leader's discovery
 * (@leader, when there is one), else its own. */
cb_status_t cb_topo_load_mine(const char *xml, const char *leader,
                              struct cb_topo **t)
{
	if (!xml && leader && leader[0]) {
		struct cb_fail_rec why;
		cb_fail_open(&why);
		cb_status_t st = cb_topo_load_host(leader, t);
		cb_fail_close(&why, 0);
		if (!st) {
			cb_log(CB_LOG_DEBUG,
			       "topology: the host's, as its "
			       "local rank 0 discovered it (%s)",
			       leader);
			return CB_OK;
		}
	}
	return cb_topo_load(xml, NULL, t);
}
