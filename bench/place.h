/* SPDX-License-Identifier: MIT */
/*
 * bench/place.h - the job placement of topo/ (binding, NIC and GPU, the
 * hosts' inventory) given the run's options and the bootstrap's gathers:
 * the communicator runs it through cfg.place, `collbench topo --all` calls
 * it on a bare bootstrap.  Here, above core and topo, so neither reaches
 * into the other.
 */
#ifndef CB_BENCH_PLACE_H
#define CB_BENCH_PLACE_H

#include "core/comm.h"
#include "core/env.h"

struct cb_boot;
struct cb_cli_rank;

/* For cb_comm_cfg.place. */
extern const struct cb_comm_place cb_place_topo;

/* A run's communicator for rank @r: its rendezvous, these settings (@mem
 * NULL: host memory), the option view @opts its transports read (the
 * communicator keeps a copy), coll's host reduction and topo's placement. */
struct cb_comm_cfg cb_place_comm_cfg(const struct cb_cli_rank *r,
                                     double timeout_s, const char *transport,
                                     const char *mem,
                                     const struct cb_optset *opts);

/* cb_topo_job_setup for @boot's ranks, with --bind, --nic, --gpu and
 * --topo-xml from @opts; @nic_known may be NULL. */
cb_status_t cb_place_job(struct cb_boot *boot, int rank, int world,
                         int local_rank, int local_size, const char *nic_known,
                         const struct cb_optset *opts,
                         struct cb_topo_job **out);

#endif
