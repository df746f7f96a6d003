/* SPDX-License-Identifier: MIT */
/*
 * topo/share.h - which ranks share a machine, and one hwloc discovery per
 * host (topo/share.c), for topo/job.c.
 */
#ifndef CB_TOPO_SHARE_H
#define CB_TOPO_SHARE_H

#include <stddef.h>
#include <stdint.h>

#include "topo/topo.h"

/* One rank's part of the machine gather. */
struct cb_topo_place {
	uint64_t boot;   /* hash of the boot id: the machine */
	uint64_t host;   /* hash of the host key (a netns is a host) */
	uint64_t cpus;   /* hash of the CPUs and memory we may use */
	int32_t pid, fd; /* a host leader's discovery: /proc/PID/fd/FD */
};

/*
 * Every rank's @mine (pid and fd set by the caller: fd >= 0 on a host's
 * local rank 0 that shares its discovery) to every rank.  @mrank, @msize:
 * this rank's place among the ranks with its boot id (the machine's cores);
 * @leader: "/proc/PID/fd/FD" of the discovery shared by a rank of our host
 * with our CPUs, or "".
 */
cb_status_t cb_topo_machine_place(const struct cb_topo_job_cfg *cfg,
                                  struct cb_topo_place *mine, int *mrank,
                                  int *msize, char *leader,
                                  size_t leader_bytes);
/* @t as hwloc XML in a memory file (*@fd); 0, or -1 when it cannot be. */
int cb_topo_share_discovery(struct cb_topo *t, int *fd);
/* This rank's topology: @xml if given, else @leader's discovery when there
 * is one and it loads, else its own. */
cb_status_t cb_topo_load_mine(const char *xml, const char *leader,
                              struct cb_topo **t);

#endif
