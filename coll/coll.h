/* SPDX-License-Identifier: MIT */
/*
 * coll/coll.h - collectives as algorithms over the transport API.
 *
 * An algorithm is a descriptor in an explicit table (coll/algos.c): its name,
 * the collectives it implements, its constraints and its alpha-beta cost.  A
 * plan is what an algorithm needs for one group, one collective and one
 * maximum size (requests, staging buffers), built outside timed regions;
 * running a plan allocates nothing and waits only inside the core's deadline.
 *
 * Buffer conventions (nccl-tests' and NCCL's, so sizes mean the same):
 *
 *   collective      count means            sendbuf        recvbuf
 *   allreduce       elements               count          count
 *   reduce_scatter  elements per rank      n * count      count
 *   allgather       elements per rank      count          n * count
 *   broadcast       elements               count (root)   count
 *   reduce          elements               count          count (root)
 *   alltoall        elements per rank pair n * count      n * count
 *   sendrecv        elements               count          count
 *   pingpong        elements               count          count
 *   barrier         -                      -              -
 *
 * In place: sendbuf == recvbuf for allreduce, broadcast, reduce, alltoall;
 * reduce_scatter: recvbuf == sendbuf + me * count; allgather: sendbuf ==
 * recvbuf + me * count (me = the rank's index in the group).  Ranks and
 * roots in here are group indices; group.members maps them to comm ranks.
 * sendrecv: group index i sends to i+1 and receives from i-1 (mod n).
 */
#ifndef CB_COLL_COLL_H
#define CB_COLL_COLL_H

#include <stddef.h>
#include <stdint.h>

#include <collbench/status.h>
#include <collbench/types.h>

#include "core/comm.h"

/* id, name, reduces (takes an op), rooted, per-rank blocks */
#define CB_COLL_MAP(X)                                                         \
	X(ALLREDUCE, "allreduce", 1, 0, 0)                                     \
	X(REDUCE_SCATTER, "reduce_scatter", 1, 0, 1)                           \
	X(ALLGATHER, "allgather", 0, 0, 1)                                     \
	X(BROADCAST, "broadcast", 0, 1, 0)                                     \
	X(REDUCE, "reduce", 1, 1, 0)                                           \
	X(ALLTOALL, "alltoall", 0, 0, 1)                                       \
	X(BARRIER, "barrier", 0, 0, 0)                                         \
	X(SENDRECV, "sendrecv", 0, 0, 0)                                       \
	X(PINGPONG, "pingpong", 0, 0, 0)

enum cb_coll {
#define CB_COLL_ENUM(id, name, red, root, blocks) CB_COLL_##id,
	CB_COLL_MAP(CB_COLL_ENUM)
#undef CB_COLL_ENUM
	        CB_COLL_COUNT
};

const char *cb_coll_name(enum cb_coll coll);
int cb_coll_parse(const char *s);
int cb_coll_reduces(enum cb_coll coll); /* takes a reduction op */
int cb_coll_rooted(enum cb_coll coll);  /* broadcast, reduce */
int cb_coll_blocks(enum cb_coll coll);  /* count is per rank (block) */
/* nccl-tests' bus-bandwidth factor for @coll on @n ranks, and its formula
 * as the header prints it. */
double cb_coll_busbw_factor(enum cb_coll coll, int n);
const char *cb_coll_busbw_formula(enum cb_coll coll);
/* Elements of the send and receive buffers for @count on @n ranks. */
size_t cb_coll_send_elems(enum cb_coll coll, size_t count, int n);
size_t cb_coll_recv_elems(enum cb_coll coll, size_t count, int n);
/* The size a row reports (nccl-tests' "size"): the larger buffer. */
size_t cb_coll_size_elems(enum cb_coll coll, size_t count, int n);

struct cb_coll_args {
	enum cb_coll coll;
	enum cb_dtype dtype;
	enum cb_op op;
	const void *sendbuf;
	void *recvbuf;
	size_t count; /* see the table above */
	int root;     /* group index; broadcast and reduce */
};

/* The ranks taking part: members[0..n-1] (comm ranks), me = our index. */
struct cb_group {
	const int *members;
	int n, me;
};

struct cb_plan_cfg {
	struct cb_group group;
	enum cb_coll coll;
	enum cb_dtype dtype;
	size_t max_count;   /* largest count a run will pass */
	size_t chunk_bytes; /* pipelining unit; 0 = the algorithm's default */
	int ps_servers;     /* ps: dedicated server ranks (0 = colocated) */
	int ring_put_off;   /* ring: its allgather as messages, not one-sided
	                     * writes (COLLBENCH_RING_PUT=0) */
	int root;           /* rooted collectives: the root runs will name
	                     * (a plan connects the peers it will use) */
};

/* What one run sent and received, for schedule checks (cheap counters,
 * counted per call: reset at the start of every run). */
struct cb_coll_stats {
	uint64_t msgs_sent, bytes_sent;
	uint64_t msgs_recv, bytes_recv;
};

struct cb_plan;

/* What a cost model is asked (cb_algo.model_us): one call of @coll moving
 * @bytes (the row's size) on @n ranks (@ps_servers dedicated servers), for
 * links of latency @alpha_us and bandwidth @beta_gbps (GB/s, 1e3 bytes per
 * us) and a local reduction rate @gamma_gbps (GB/s of input consumed; 0 =
 * free). */
struct cb_model_in {
	enum cb_coll coll;
	size_t bytes;
	int n, ps_servers;
	double alpha_us, beta_gbps, gamma_gbps;
};

/* One message of @bytes on @in's links: a latency, then the bytes at the
 * link's rate (GB/s is 1e3 bytes per us). */
static inline double cb_model_msg_us(const struct cb_model_in *in, double bytes)
{
	return in->alpha_us + bytes / (in->beta_gbps * 1e3);
}

/* Reducing @bytes of input locally (0 when @in's rate is not known). */
static inline double cb_model_reduce_us(const struct cb_model_in *in,
                                        double bytes)
{
	return in->gamma_gbps > 0 ? bytes / (in->gamma_gbps * 1e3) : 0.0;
}

/* How many pieces of @chunk bytes a pipeline cuts @bytes into (at least 1:
 * an empty message is still sent). */
static inline double cb_model_pieces(size_t bytes, size_t chunk)
{
	size_t k = (bytes + chunk - 1) / chunk;

	return k ? (double)k : 1.0;
}

/* cb_algo.flags */
#define CB_ALGO_ONEWAY 1u /* pingpong bw: only group index 1 has a result */
/* Runs only when named: not one of auto's candidates, not in --algo all
 * (ps-async: a session of steps, not one collective call). */
#define CB_ALGO_NAMED_ONLY 2u
/* Runs on host memory only (--mem gpu refuses it): its own steps read and
 * write the buffers on the CPU (ps-async's servers). */
#define CB_ALGO_HOST_ONLY 4u

#define CB_STALE_BUCKETS 256

/*
 * A session (cb_algo.session): every worker runs @steps steps at its own
 * pace, and the call returns on each rank once its part is done (ps-async).
 * The driver fills the inputs; the algorithm the outputs.
 */
struct cb_session {
	uint64_t steps;  /* per worker */
	int straggler;   /* group index whose every step is delayed, or -1 */
	double delay_us; /* by this much (a busy wait: "compute") */
	double *step_ns; /* this worker's step times, [nstep_ns], or NULL */
	size_t nstep_ns;
	/* Exact inputs and checks, independent of the algorithm (bench/):
	 * fill elements [off, off + n) of @buf with worker @who's update, or
	 * with the initial parameters (@who -1); count the elements of a copy
	 * of [off, off + n) that differ from the initial value plus
	 * counts[w] times worker w's update, for every one of @nworkers
	 * workers.  @check NULL: no check. */
	void (*fill)(void *ctx, void *buf, size_t off, size_t n, int who);
	uint64_t (*check)(void *ctx, const void *buf, size_t off, size_t n,
	                  const uint64_t *counts, int nworkers);
	void *ctx;
	/* out */
	int worker, server;     /* this rank's roles */
	uint64_t wrong;         /* elements found wrong here */
	uint64_t pushes, pulls; /* this worker's */
	uint64_t elapsed_ns;    /* this worker: first step to last reply */
	uint32_t stale_hist[CB_STALE_BUCKETS]; /* this server's pushes by
	                                          staleness (last: or more) */
	uint64_t stale_max;
};

struct cb_algo {
	const char *name;
	const char *description;
	uint32_t colls; /* 1u << enum cb_coll */
	uint32_t flags;
	/* How a call's time and bytes become a row (0 = 1): the row's time is
	 * the call's divided by time_div (pingpong latency: half a round
	 * trip; bw: per message of a window) and algbw counts bw_mult times
	 * the bytes (bibw: both directions). */
	int time_div, bw_mult;
	/* One line why this algorithm cannot run @coll on @n ranks (with
	 * @ps_servers dedicated servers), or NULL. */
	const char *(*refuse)(enum cb_coll coll, int n, int ps_servers);
	/* One line why it cannot run with @dt, or NULL (NULL member: any). */
	const char *(*refuse_dtype)(enum cb_dtype dt);
	/* Predicted time (us) of one call (struct cb_model_in). */
	double (*model_us)(const struct cb_model_in *in);
	/* Set for algorithms written on the schedule executor: its plans
	 * (plan_build NULL; run, plan_free and stats the executor's, see
	 * CB_SCHED_PLAN_OPS in coll/sched.h). */
	const struct cb_sched_algo *sched;
	cb_status_t (*plan_build)(struct cb_comm *c,
	                          const struct cb_plan_cfg *cfg,
	                          struct cb_plan **plan);
	cb_status_t (*run)(struct cb_plan *plan,
	                   const struct cb_coll_args *args);
	/* Algorithms that are sessions of steps rather than one call (NULL
	 * for the rest): see struct cb_session. */
	cb_status_t (*session)(struct cb_plan *plan,
	                       const struct cb_coll_args *args,
	                       struct cb_session *s);
	void (*plan_free)(struct cb_plan *plan);
	const struct cb_coll_stats *(*stats)(const struct cb_plan *plan);
};

/* @a's prediction (a->model_us set) for one call, its arguments spelled
 * out. */
static inline double cb_algo_model_us(const struct cb_algo *a,
                                      enum cb_coll coll, size_t bytes, int n,
                                      int ps_servers, double alpha_us,
                                      double beta_gbps, double gamma_gbps)
{
	struct cb_model_in in = { .coll = coll,
		                  .bytes = bytes,
		                  .n = n,
		                  .ps_servers = ps_servers,
		                  .alpha_us = alpha_us,
		                  .beta_gbps = beta_gbps,
		                  .gamma_gbps = gamma_gbps };

	return a->model_us(&in);
}

extern const struct cb_algo *const cb_algos[];
/* Build @a's plan: its own plan_build, or the executor's for @a->sched. */
cb_status_t cb_algo_plan_build(const struct cb_algo *a, struct cb_comm *c,
                               const struct cb_plan_cfg *cfg,
                               struct cb_plan **plan);
const struct cb_algo *cb_algo_find(const char *name);
static inline int cb_algo_does(const struct cb_algo *a, enum cb_coll coll)
{
	return (a->colls >> coll) & 1u;
}

#endif
