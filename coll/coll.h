/* SPDX-License-Identifier: MIT */
/*
 * coll/coll.h - collectives as algorithms over the transport API.
 *
 * An algorithm is a descriptor in an explicit table (coll/algos.c): its name,
 * the collectives it implements, its constraints and its alpha-beta cost.  A
 * plan is what an algorithm needs for one group and one maximum size
 * (requests, staging buffers), built outside timed regions; running a plan
 * allocates nothing and waits only inside the core's deadline.
 */
#ifndef CB_COLL_COLL_H
#define CB_COLL_COLL_H

#include <stddef.h>
#include <stdint.h>

#include <collbench/status.h>
#include <collbench/types.h>

#include "core/comm.h"

#define CB_COLL_MAP(X) X(ALLREDUCE, "allreduce")

enum cb_coll {
#define CB_COLL_ENUM(id, name) CB_COLL_##id,
	CB_COLL_MAP(CB_COLL_ENUM)
#undef CB_COLL_ENUM
	        CB_COLL_COUNT
};

const char *cb_coll_name(enum cb_coll coll);
int cb_coll_parse(const char *s);
/* nccl-tests' bus-bandwidth factor for @coll on @n ranks. */
double cb_coll_busbw_factor(enum cb_coll coll, int n);

struct cb_coll_args {
	enum cb_coll coll;
	enum cb_dtype dtype;
	enum cb_op op;
	const void *sendbuf; /* == recvbuf for in-place */
	void *recvbuf;
	size_t count; /* elements per rank */
};

/* The ranks taking part: members[0..n-1] (comm ranks), me = our index. */
struct cb_group {
	const int *members;
	int n, me;
};

struct cb_plan_cfg {
	struct cb_group group;
	enum cb_dtype dtype;
	size_t max_count;
	size_t chunk_bytes; /* pipelining unit; 0 = the algorithm's default */
};

/* What a run sent, for schedule checks (cheap counters). */
struct cb_coll_stats {
	uint64_t msgs_sent, bytes_sent;
	uint64_t msgs_recv, bytes_recv;
};

struct cb_plan;

struct cb_algo {
	const char *name;
	const char *description;
	uint32_t colls; /* 1u << enum cb_coll */
	/* One line why this algorithm cannot run on @n ranks, or NULL. */
	const char *(*refuse)(int n);
	/* Predicted time (us) of one call of @bytes on @n ranks, for a link of
	 * latency @alpha_us and bandwidth @beta_gbps. */
	double (*model_us)(enum cb_coll coll, size_t bytes, int n,
	                   double alpha_us, double beta_gbps);
	cb_status_t (*plan_build)(struct cb_comm *c,
	                          const struct cb_plan_cfg *cfg,
	                          struct cb_plan **plan);
	cb_status_t (*run)(struct cb_plan *plan,
	                   const struct cb_coll_args *args);
	void (*plan_free)(struct cb_plan *plan);
	const struct cb_coll_stats *(*stats)(const struct cb_plan *plan);
};

extern const struct cb_algo *const cb_algos[];
const struct cb_algo *cb_algo_find(const char *name);

#endif
