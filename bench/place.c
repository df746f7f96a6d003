/* SPDX-License-Identifier: MIT */
/* bench/place.c - topo's job placement over the bootstrap (bench/place.h). */
#include "bench/place.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench/cli.h"
#include "coll/reduce.h"
#include "core/bootstrap.h"
#include "topo/topo.h"

static cb_status_t allgather(void *boot, const char *what, const void *mine,
                             size_t bytes, void *all)
{
	return cb_boot_allgather(boot, what, mine, bytes, all);
}

static cb_status_t gather_root(void *boot, const char *what, const void *mine,
                               size_t bytes, size_t max, void **all,
                               uint32_t *lens)
{
	return cb_boot_gather_root_var(boot, what, mine, bytes, max, all, lens);
}

/* DEBUGGING (collbench(1)): a test gives rank @rank a recorded topology
 * of its own, COLLBENCH_TOPO_XML_<rank>, over @all (--topo-xml). */
static const char *rank_topo_xml(int rank, const char *all)
{
	char env[48];
	const char *v;

	snprintf(env, sizeof(env), "COLLBENCH_TOPO_XML_%d", rank);
	v = getenv(env);
	return v && *v ? v : all;
}

/* topo's job setup, with --bind, --nic, --gpu and --topo-xml from
 * @opt(@arg, key). */
static cb_status_t place_job(struct cb_boot *boot, int rank, int world,
                             int local_rank, int local_size,
                             const char *nic_known,
                             const char *(*opt)(void *, const char *),
                             void *arg, struct cb_topo_job **out)
{
	char name[64], key[128];

	cb_host_identity(name, sizeof(name), key, sizeof(key));
	struct cb_topo_job_cfg cfg = {
		.rank = rank,
		.world = world,
		.local_rank = local_rank,
		.local_size = local_size,
		.host_name = name,
		.host_key = key,
		.bind = opt(arg, "bind"),
		.nic = opt(arg, "nic"),
		.gpu = opt(arg, "gpu"),
		.topo_xml = rank_topo_xml(rank, opt(arg, "topo-xml")),
		.nic_known = nic_known,
		.ctx = boot,
		.allgather = allgather,
		.gather_root = gather_root,
	};
	return cb_topo_job_setup(&cfg, out);
}

cb_status_t cb_place_job(struct cb_boot *boot, int rank, int world,
                         int local_rank, int local_size, const char *nic_known,
                         const struct cb_optset *opts, struct cb_topo_job **out)
{
	return place_job(boot, rank, world, local_rank, local_size, nic_known,
	                 cb_optset_lookup, (void *)(uintptr_t)opts, out);
}

/* The communicator's own view of the options. */
static const char *comm_option(void *c, const char *key)
{
	return cb_comm_option(c, key);
}

static cb_status_t comm_setup(struct cb_comm *c, const char *nic_known,
                              struct cb_topo_job **job)
{
	return place_job(c->boot, c->rank, c->world, c->local_rank,
	                 c->local_size, nic_known, comm_option, c, job);
}

const struct cb_comm_place cb_place_topo = {
	.setup = comm_setup,
	.nic = cb_topo_job_nic,
	.gpu = cb_topo_job_gpu,
	.free = cb_topo_job_free,
};

struct cb_comm_cfg cb_place_comm_cfg(const struct cb_cli_rank *r,
                                     double timeout_s, const char *transport,
                                     const char *mem,
                                     const struct cb_optset *opts)
{
	return (struct cb_comm_cfg){
		.rank = r->rank,
		.world = r->world,
		.host = r->host,
		.port = r->port,
		.listen_fd = r->listen_fd,
		.relay = r->relay,
		.timeout_s = timeout_s,
		.transport = transport,
		.mem = mem,
		.reduce = cb_reduce,
		.opts = opts,
		.place = &cb_place_topo,
	};
}
