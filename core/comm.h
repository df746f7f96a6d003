/* SPDX-License-Identifier: MIT */
/*
 * core/comm.h - the communicator: who the ranks are, where they live, one
 * endpoint per peer (connected lazily, when a plan first needs it) and the
 * registration cache; plus the transport registry, launcher detection, the
 * local fork launcher; the options transports read are the caller's
 * (cb_comm_cfg.option, core/env.h).
 */
#ifndef CB_CORE_COMM_H
#define CB_CORE_COMM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <collbench/status.h>
#include <collbench/transport.h>

#include "core/bootstrap.h"
#include "core/env.h"
#include "core/log.h"

struct cb_topo_job;

/* ---- transports ---- */

struct cb_tp_entry {
	const char *name;
	const struct cb_tp_ops *ops; /* NULL when not built or not loadable */
	char why[256];               /* why ops is NULL or query failed */
	int available;               /* query() said yes */
};

/* Look up a transport by name: built in, or a module from
 * COLLBENCH_PLUGIN_PATH / the install directory.  Always fills @e. */
void cb_tp_find(const char *name, struct cb_tp_entry *e);
/* All transport names collbench knows, NULL-terminated. */
extern const char *const cb_tp_names[];

/* ---- where ranks come from ---- */

struct cb_launch_env {
	int found; /* a launcher set rank and world */
	int rank, world;
	int local_rank;     /* on this host, from the same launcher; -1 unknown
	                     * (or COLLBENCH_HOST_RELAY=0: treated as unknown) */
	const char *source; /* "OMPI_COMM_WORLD_RANK/SIZE", ... */
	char host[256], port[16];
	const char *rdv_source; /* NULL when no rendezvous was given */
	/* COLLBENCH_JOB_TOKEN; Open MPI's per-job secret
	 * (OMPI_MCA_orte_precondition_transports); NULL when unset or empty */
	const char *job_token, *ompi_token;
};

/* Read rank, world and rendezvous from the environment; @cli_rendezvous wins
 * over it.  CB_ERR_USAGE (recorded) for values that do not parse. */
cb_status_t cb_env_detect(const char *cli_rendezvous, struct cb_launch_env *e);

/* This host's identity: hostname, and a key that also tells apart network
 * namespaces (test hosts) and machines with one name (boot id). */
void cb_host_identity(char *name, size_t name_bytes, char *key,
                      size_t key_bytes);

/*
 * Fork @np local ranks that meet on a loopback rendezvous.  Each child calls
 * @rank_main(arg, rank, listen_fd, port) and exits with its return value.
 * Returns the job's exit status: 0 when every rank returned 0, otherwise the
 * status of the failing ranks (1 when they differ or one was killed).  Ranks
 * still running @grace_s after the first failure are killed.
 */
int cb_launch_local(int np, double grace_s,
                    int (*rank_main)(void *arg, int rank, int listen_fd,
                                     const char *port),
                    void *arg);

/* ---- the communicator ---- */

/* Endpoint states: peers are connected lazily, when a plan first needs them. */
enum {
	CB_EP_NONE,
	CB_EP_CREATED,    /* ep_create done, blob published */
	CB_EP_CONNECTING, /* ep_connect done, handshake under way */
	CB_EP_READY,
	CB_EP_FAILED,
};

struct cb_req;

struct cb_ep {
	const struct cb_tp_ops *ops; /* the transport that reaches this peer;
	                              * NULL for self */
	struct cb_tp_ep *ep;         /* NULL until connecting */
	int peer;
	int tpi;   /* index into cb_comm.tp */
	int state; /* CB_EP_* */
	int gen;   /* times this pair connected again (cb_comm_reconnect) */
	/* Staged sends not yet handed to the transport, in the order they
	 * were posted (core/comm_dev.c): later sends wait behind them, so the
	 * peer receives in order. */
	struct cb_req *stq_head, *stq_tail;
};

/* What a request is, beyond a transport's own (core/comm_dev.c). */
enum {
	CB_REQ_WIRE = 0, /* the transport's request, nothing else */
	CB_REQ_DONE,     /* a local operation on host memory, done at once */
	CB_REQ_LOCAL,    /* a copy or reduction on the device engine */
	CB_REQ_SSEND,    /* a send staged through pinned host memory */
	CB_REQ_SRECV,    /* a receive staged through pinned host memory */
};

struct cb_req {
	struct cb_tp_req tp;
	const struct cb_ep *ep;
	/* CB_REQ_*; the rest only for staged and local operations. */
	uint8_t kind, step;
	struct cb_req *next; /* on the endpoint's staged-send queue */
	struct cb_comm *comm;
	void *host, *dev; /* the message in the pinned twin, on the device */
	size_t bytes;
	uint64_t tag;
	const struct cb_mem *twin; /* the pinned twin's region */
	struct cb_tp_req loc;      /* the engine's copy */
};

#define CB_MAX_TP  4
#define CB_MEM_MAX 128 /* registered regions per communicator */

/*
 * A registered region: one entry of the communicator's registration cache,
 * with each open transport's view of it (tp[i].mr: what transport i's
 * mem_reg returned).  Operations name the region their bytes lie in, and the
 * transport gets its own view: no lookup in a timed region.
 */
struct cb_mem {
	void *base;
	size_t bytes;
	enum cb_mem_kind kind;
	int device;
	int owner; /* the transport that allocated it, -1: the core,
	            * -2: the caller (cb_comm_mem_reg) */
	struct cb_tp_mem tp[CB_MAX_TP];
	/* Device memory that transport i cannot move itself: staged[i] is
	 * set, and twin is its pinned host copy (same size, same offsets). */
	uint8_t staged[CB_MAX_TP];
	struct cb_mem *twin;
};

struct cb_comm {
	int rank, world;
	int nhosts, host;  /* number of hosts, this rank's host index */
	int *host_of_rank; /* [world] */
	char **hosts;      /* [nhosts] names */
	int local_rank, local_size;
	int oversubscribed;
	struct cb_boot *boot;
	double timeout_s;
	struct cb_comm_tp {
		const struct cb_tp_ops *ops;
		struct cb_tp_ctx *ctx;
		/* The services lent to this transport: its own table, so
		 * each callback's `self` leads back here (its name, its
		 * communicator). */
		struct cb_tp_host host;
		struct cb_comm *comm;
		char name[16];
	} tp[CB_MAX_TP];
	int ntp; /* open transports: the nwire that connect peers first,
	          * then the device memory engine when it connects nobody */
	int nwire;
	/* Device memory: the kind of the run's buffers (--mem), and the
	 * transport whose engine copies and reduces device memory (index
	 * into tp, -1 when none is open). */
	enum cb_mem_kind mem_kind;
	int engine;
	int nstaged;        /* staged sends waiting on some endpoint's queue */
	char *mem_lines;    /* rank 0: every rank's engine line, '\n' between */
	struct cb_ep *eps;  /* [world] */
	char transport[32]; /* what connects the peers: "shm", "tcp", "shm+tcp"
	                     */
	uint64_t next_check_ns;
	uint32_t calls, idle, idle_long;
	char local_ip[64];
	int stalled_on; /* the rank a timed-out wait waited for, or -1 */
	int failed;     /* cb_comm_fail's answer + 1, once it was asked */
	/* The first failure of this communicator's life: its transports'
	 * host->fail() records here, and so does the creating thread's
	 * cb_fail() while it lives (cb_comm_create opens it on that thread,
	 * cb_comm_destroy hands it to the record around). */
	struct cb_fail_rec fail;
	int fail_fast; /* a transport's error ends the job: report it at once */
	struct cb_tp_host host_api; /* what every tp[].host starts from */
	char nic[128];              /* host_api.nic */
	/* The host reduction and the option view (cb_comm_cfg's). */
	void (*reduce)(enum cb_dtype dt, enum cb_op op, void *dst,
	               const void *a, const void *b, size_t count);
	const char *(*option)(void *arg, const char *key);
	void *option_arg;
	struct cb_optset opts;    /* its own view, when cfg.opts gave one */
	struct cb_topo_job *topo; /* binding, NIC/GPU, inventory (topo/) */
	const struct cb_comm_place *place; /* what made @topo, or NULL */
	struct cb_mem *mem[CB_MEM_MAX];
	int nmem;
	/* --transport auto across hosts (core/comm_auto.c): what each rank
	 * opened, cb_auto_bit()s ([world]; NULL otherwise), and what the
	 * pairs got, for the header. */
	uint32_t *remote_tps;
	char auto_line[320];
	uint32_t connects;      /* endpoints connected so far */
	uint32_t late_connects; /* of those, connected by a call's first run
	                         * instead of by its plan */
};

/*
 * Job placement: binding, this rank's NIC and GPU, the hosts' inventory
 * (topo/'s, wired in by the caller as bench/place.c does, so the core does
 * not reach up for it).  @setup runs once the ranks know their hosts and
 * before a transport allocates anything (first touch); every rank calls it
 * (it may gather over c->boot).  @nic_known: the device names the run's
 * transports list, "verbs:cbemu0,cbemu1;tcp:lo".
 */
struct cb_comm_place {
	cb_status_t (*setup)(struct cb_comm *c, const char *nic_known,
	                     struct cb_topo_job **job);
	const char *(*nic)(const struct cb_topo_job *job); /* or NULL */
	int (*gpu)(const struct cb_topo_job *job);         /* or -1 */
	void (*free)(struct cb_topo_job *job);
};

struct cb_comm_cfg {
	int rank, world;
	const char *host, *port; /* rendezvous */
	int listen_fd;           /* rank 0 of a local fork, else -1 */
	int relay;               /* cb_boot_cfg.relay */
	double timeout_s;
	const char *transport; /* "auto", "tcp", "shm", ... */
	const char *mem;       /* the run's buffers: "host" (NULL) or "gpu" */
	/* The host reduction transports call (coll's kernels, wired in by the
	 * caller, so the core does not reach up for them). */
	void (*reduce)(enum cb_dtype dt, enum cb_op op, void *dst,
	               const void *a, const void *b, size_t count);
	/* The options this communicator and its transports see ("nic",
	 * "tcp-streams", ...; NULL when unset): @opts, the run's parsed view
	 * (core/env.h), copied into the communicator at create; else a
	 * lookup of the caller's (tests), which outlives it; neither: none. */
	const struct cb_optset *opts;
	const char *(*option)(void *arg, const char *key);
	void *option_arg;
	const struct cb_comm_place *place; /* NULL: no binding, no NIC or GPU
	                                    * chosen but --nic's */
};

/* Inside the core (and its unit tests): fill @c's template of the host
 * services from its fields; and lend transport @name its own copy, @t.
 * cb_comm_option: @key in @c's option view. */
const char *cb_comm_option(const struct cb_comm *c, const char *key);
void cb_comm_host_init(struct cb_comm *c, uint64_t job_id, int gpu);
void cb_comm_tp_init(struct cb_comm *c, struct cb_comm_tp *t, const char *name);

cb_status_t cb_comm_create(const struct cb_comm_cfg *cfg,
                           struct cb_comm **comm);
/* Open transport @name; @alone: it must connect every pair of ranks. */
typedef cb_status_t (*cb_comm_open_fn)(struct cb_comm *c, const char *name,
                                       int alone);
/* --transport auto (core/comm_auto.c): open what connects each pair,
 * through @open_tp (@nic_given: --nic was, so a verbs refusal of it is not
 * fatal); remote_tps holds what each rank opened, by these bits. */
cb_status_t cb_comm_open_auto(struct cb_comm *c, cb_comm_open_fn open_tp,
                              int nic_given);
static inline uint32_t cb_auto_bit(const char *name)
{
	return !strcmp(name, "verbs") ? 1u : !strcmp(name, "tcp") ? 2u : 0u;
}
/* Which of the open transports (index into tp) connects us to @peer. */
int cb_comm_pick(const struct cb_comm *c, int peer);
void cb_comm_destroy(struct cb_comm *comm);

/* Name of rank @r's host, for messages. */
static inline const char *cb_comm_host_name(const struct cb_comm *c, int r)
{
	return c->hosts[c->host_of_rank[r]];
}

/*
 * Connect the @n ranks in @peers that are not connected yet (self and
 * connected ones are skipped).  Both ranks of every pair must call it (a
 * plan's peers are symmetric): each first publishes what it has for each new
 * peer, then waits, so no order of calls deadlocks.  The handshakes are
 * non-blocking and polled here until @timeout_s (<= 0: the job's deadline);
 * a failure names the peer, its host and the transport.  Outside timed
 * regions.
 */
cb_status_t cb_comm_connect(struct cb_comm *c, const int *peers, int n,
                            double timeout_s);

/*
 * Give up on @peer: its endpoint is closed (the transport forgets the
 * requests queued on it, so their buffers may be freed) and marked failed,
 * so a later connect to it fails at once.  For callers that go on after
 * one peer failed (acceptance); outside timed regions.
 */
void cb_comm_disconnect(struct cb_comm *c, int peer);

/*
 * Connect @peer anew, whatever its state (connected, failed, given up): its
 * endpoint is closed and the pair's next one made and connected as
 * cb_comm_connect does.  Both ranks of the pair call it, once each per try;
 * nothing of the earlier connection reaches the new one.  Only where the
 * peer's transport says it can (CB_TP_CAP_RECONNECT: tcp); else
 * CB_ERR_UNSUPPORTED, recorded, and the peer stays as it was.
 */
cb_status_t cb_comm_reconnect(struct cb_comm *c, int peer, double timeout_s);

static inline int cb_comm_connected(const struct cb_comm *c, int peer)
{
	return peer == c->rank || c->eps[peer].state == CB_EP_READY;
}

/* The transport's view of @m for the endpoint of @peer (@m NULL: memory the
 * core does not know). */
extern const struct cb_tp_mem cb_mem_unknown;
static inline const struct cb_tp_mem *cb_comm_tp_mem(const struct cb_ep *ep,
                                                     const struct cb_mem *m)
{
	return m ? &m->tp[ep->tpi] : &cb_mem_unknown;
}

/* An operation on a peer that is not connected: a plan that did not connect
 * what it uses (recorded; CB_ERR_INVALID). */
cb_status_t cb_comm_not_connected(struct cb_comm *c, int peer);

/* Post on the endpoint of @peer; the request remembers its endpoint.  @m is
 * the registered region @buf lies in (cb_comm_mem_find), or NULL. */
/* The staged paths of isend and irecv (core/comm_dev.c). */
cb_status_t cb_comm_isend_staged(struct cb_comm *c, int peer, const void *buf,
                                 size_t bytes, const struct cb_mem *m,
                                 uint64_t tag, struct cb_req *req);
cb_status_t cb_comm_irecv_staged(struct cb_comm *c, int peer, void *buf,
                                 size_t cap, const struct cb_mem *m,
                                 uint64_t tag, struct cb_req *req);

static inline cb_status_t cb_comm_isend(struct cb_comm *c, int peer,
                                        const void *buf, size_t bytes,
                                        const struct cb_mem *m, uint64_t tag,
                                        struct cb_req *req)
{
	const struct cb_ep *ep = &c->eps[peer];

	if (ep->state != CB_EP_READY)
		return cb_comm_not_connected(c, peer);
	if ((m && m->staged[ep->tpi]) || ep->stq_head)
		return cb_comm_isend_staged(c, peer, buf, bytes, m, tag, req);
	req->ep = ep;
	req->kind = CB_REQ_WIRE;
	return ep->ops->isend(ep->ep, buf, bytes, cb_comm_tp_mem(ep, m), tag,
	                      &req->tp);
}

static inline cb_status_t cb_comm_irecv(struct cb_comm *c, int peer, void *buf,
                                        size_t cap, const struct cb_mem *m,
                                        uint64_t tag, struct cb_req *req)
{
	const struct cb_ep *ep = &c->eps[peer];

	if (ep->state != CB_EP_READY)
		return cb_comm_not_connected(c, peer);
	if (m && m->staged[ep->tpi])
		return cb_comm_irecv_staged(c, peer, buf, cap, m, tag, req);
	req->ep = ep;
	req->kind = CB_REQ_WIRE;
	return ep->ops->irecv(ep->ep, buf, cap, cb_comm_tp_mem(ep, m), tag,
	                      &req->tp);
}

/* Receive and reduce (dst = src OP message), fused in the transport when it
 * can; NULL-safe: CB_ERR_UNSUPPORTED when the transport has no such op.
 * @m: the region holding @dst and @src. */
static inline cb_status_t cb_comm_irecv_reduce(struct cb_comm *c, int peer,
                                               void *dst, const void *src,
                                               size_t bytes,
                                               const struct cb_mem *m,
                                               const struct cb_tp_reduce *red,
                                               uint64_t tag, struct cb_req *req)
{
	const struct cb_ep *ep = &c->eps[peer];

	if (ep->state != CB_EP_READY)
		return cb_comm_not_connected(c, peer);
	if (!CB_TP_HAS(ep->ops, irecv_reduce) || (m && m->staged[ep->tpi]))
		return CB_ERR_UNSUPPORTED;
	req->ep = ep;
	req->kind = CB_REQ_WIRE;
	return ep->ops->irecv_reduce(ep->ep, dst, src, bytes,
	                             cb_comm_tp_mem(ep, m), red, tag, &req->tp);
}

/* Whether the transport to @peer reduces on arrival, for the run's memory:
 * device buffers only where it moves device memory itself. */
static inline int cb_comm_can_recv_reduce(const struct cb_comm *c, int peer)
{
	const struct cb_tp_ops *ops = c->eps[peer].ops;

	return ops && CB_TP_HAS(ops, irecv_reduce) &&
	       (c->mem_kind == CB_MEM_HOST || (ops->caps & CB_TP_CAP_GPU_MEM));
}

/*
 * One-sided writes into a peer's memory (CB_TP_CAP_PUT with CB_TP_CAP_MAP:
 * the peer's memory mapped here, as shm does).  cb_comm_can_put: the
 * transport to @peer offers them, for host memory.  mem_export describes
 * registered memory @m for the peer (at most CB_TP_MEM_BLOB_MAX bytes; a
 * recorded CB_ERR_UNSUPPORTED for memory it cannot share), mem_import
 * turns the peer's blob into a handle (outside timed regions), put writes
 * @bytes at byte @roff of it and raises @notify (non-zero) at the peer,
 * in order with sends; notify_poll returns the peer's notifications in
 * order (CB_AGAIN: none yet).
 */
static inline int cb_comm_can_put(const struct cb_comm *c, int peer)
{
	const struct cb_tp_ops *ops = c->eps[peer].ops;
	const unsigned need = CB_TP_CAP_PUT | CB_TP_CAP_MAP;

	return ops && (ops->caps & need) == need && CB_TP_HAS(ops, put) &&
	       CB_TP_HAS(ops, notify_poll) && CB_TP_HAS(ops, mem_export) &&
	       CB_TP_HAS(ops, mem_import) && CB_TP_HAS(ops, mem_unimport) &&
	       c->mem_kind == CB_MEM_HOST;
}

static inline cb_status_t cb_comm_mem_export(struct cb_comm *c, int peer,
                                             const struct cb_mem *m, void *blob,
                                             size_t *bytes)
{
	const struct cb_ep *ep = &c->eps[peer];

	return ep->ops->mem_export(c->tp[ep->tpi].ctx, cb_comm_tp_mem(ep, m),
	                           blob, bytes);
}

static inline cb_status_t cb_comm_mem_import(struct cb_comm *c, int peer,
                                             const void *blob, size_t bytes,
                                             struct cb_tp_rmem **rm)
{
	const struct cb_ep *ep = &c->eps[peer];

	if (ep->state != CB_EP_READY)
		return cb_comm_not_connected(c, peer);
	return ep->ops->mem_import(ep->ep, blob, bytes, rm, NULL);
}

static inline void cb_comm_mem_unimport(struct cb_comm *c, int peer,
                                        struct cb_tp_rmem *rm)
{
	const struct cb_ep *ep = &c->eps[peer];

	if (rm && ep->ep)
		ep->ops->mem_unimport(ep->ep, rm);
}

static inline cb_status_t cb_comm_put(struct cb_comm *c, int peer,
                                      const void *buf, size_t bytes,
                                      const struct cb_mem *m,
                                      struct cb_tp_rmem *rm, uint64_t roff,
                                      uint32_t notify, struct cb_req *req)
{
	const struct cb_ep *ep = &c->eps[peer];

	if (ep->state != CB_EP_READY)
		return cb_comm_not_connected(c, peer);
	req->ep = ep;
	req->kind = CB_REQ_WIRE;
	return ep->ops->put(ep->ep, buf, bytes, cb_comm_tp_mem(ep, m), rm, roff,
	                    notify, &req->tp);
}

static inline cb_status_t cb_comm_notify_poll(struct cb_comm *c, int peer,
                                              uint32_t *notify)
{
	const struct cb_ep *ep = &c->eps[peer];

	if (ep->state != CB_EP_READY)
		return cb_comm_not_connected(c, peer);
	return ep->ops->notify_poll(ep->ep, notify);
}

/*
 * Memory.  cb_comm_mem_alloc: a buffer from a transport that lets local
 * peers read it directly (shm), else page-aligned memory; registered with
 * every open transport.  cb_comm_mem_alloc_kind: the same for @kind
 * (CB_MEM_GPU: device memory of this rank's GPU, from the engine;
 * CB_ERR_UNAVAILABLE, recorded, without one).  cb_comm_scratch_alloc:
 * memory of the run's kind (--mem), for an algorithm's scratch: its
 * contents are undefined.  cb_comm_mem_reg: register memory the caller
 * allocated.  All outside timed regions; the cache holds CB_MEM_MAX
 * regions.  cb_comm_mem_find: the region holding [@p, @p + @bytes), or NULL;
 * cheap (no allocation), for the start of a call.
 */
cb_status_t cb_comm_mem_alloc(struct cb_comm *c, size_t bytes, void **buf);
cb_status_t cb_comm_mem_alloc_kind(struct cb_comm *c, size_t bytes,
                                   enum cb_mem_kind kind, void **buf);
cb_status_t cb_comm_scratch_alloc(struct cb_comm *c, size_t bytes, void **buf);
void cb_comm_mem_free(struct cb_comm *c, void *buf, size_t bytes);
cb_status_t cb_comm_mem_reg(struct cb_comm *c, void *buf, size_t bytes,
                            enum cb_mem_kind kind, int device,
                            const struct cb_mem **m);
void cb_comm_mem_dereg(struct cb_comm *c, void *buf);
const struct cb_mem *cb_comm_mem_find(const struct cb_comm *c, const void *p,
                                      size_t bytes);

/* The device counters of every open transport (verbs port counters), up
 * to @max into @out, their number in *@n.  Reads sysfs: outside timed
 * regions. */
cb_status_t cb_comm_counters(const struct cb_comm *c, struct cb_tp_counter *out,
                             int max, int *n);
/* 1 when some open transport has device counters (the same on every rank:
 * they open the same transports). */
int cb_comm_has_counters(const struct cb_comm *c);

/* Each open transport's line for the run header, '\n' between them, into
 * @buf ("" when none has one). */
void cb_comm_describe(const struct cb_comm *c, char *buf, size_t bytes);

/* Sum of every open transport's counters of what it did. */
void cb_comm_tp_stats(const struct cb_comm *c, struct cb_tp_stats *out);

/*
 * Local steps on memory of any kind (core/comm_dev.c), for the algorithms
 * and the driver.  cb_comm_copy: @bytes from @src to @dst (regions @dm,
 * @sm; NULL: looked up); cb_comm_reduce_local: dst = a OP b for @count
 * elements in region @m.  On host memory they are done when they return;
 * on device memory they are queued on the engine.  With @req they complete
 * through cb_comm_test (CB_AGAIN from the call: no room now, post again);
 * @req NULL: done on return (waits for the device: outside timed regions).
 */
cb_status_t cb_comm_copy(struct cb_comm *c, void *dst, const struct cb_mem *dm,
                         const void *src, const struct cb_mem *sm, size_t bytes,
                         struct cb_req *req);
cb_status_t cb_comm_reduce_local(struct cb_comm *c, void *dst, const void *a,
                                 const void *b, size_t count,
                                 const struct cb_tp_reduce *red,
                                 const struct cb_mem *m, struct cb_req *req);
/* Whether @m (NULL: unknown, host) is device memory. */
static inline int cb_mem_is_gpu(const struct cb_mem *m)
{
	return m && m->kind == CB_MEM_GPU;
}

cb_status_t cb_comm_test_dev(struct cb_req *req);

static inline cb_status_t cb_comm_test(struct cb_req *req)
{
	if (req->kind != CB_REQ_WIRE)
		return cb_comm_test_dev(req);
	return req->ep->ops->test(req->ep->ep, &req->tp);
}

/* Wait for @req under cb_worker_wait (core/worker.c): the job's deadline
 * without progress (CB_ERR_TIMEOUT, recorded, naming the peer of a
 * message), ^C, another rank's abort. */
cb_status_t cb_comm_wait(struct cb_comm *c, struct cb_req *req);

/* Rank 0, a run with device memory: what moves it, one line per rank
 * ("rank 0: GPU 0 NVIDIA H200 (...)") and one per transport ("gpu pairs:
 * CUDA IPC"; "tcp pairs: staged through pinned host memory"), '\n' between;
 * NULL otherwise. */
const char *cb_comm_mem_summary(const struct cb_comm *c);

/* Inside the core: hand queued staged sends to their transports (every
 * progress call while some wait); gather the engine lines at start-up
 * (every rank calls it; rank 0 keeps them). */
cb_status_t cb_comm_pump_staged(struct cb_comm *c);
cb_status_t cb_comm_dev_setup(struct cb_comm *c);

/* Progress every transport once; CB_OK when something moved, CB_AGAIN when
 * nothing did, an error when a transport failed or another rank aborted the
 * job (checked every few milliseconds, without allocating). */
cb_status_t cb_comm_progress(struct cb_comm *c);

/* The job ends on the first error (a benchmark, not acceptance, which
 * names a cut-off host and goes on): a transport's error is reported to the
 * store where it is found, before anything unwinds. */
static inline void cb_comm_fail_fast(struct cb_comm *c)
{
	c->fail_fast = 1;
}

/*
 * Report a failure to the other ranks and decide whether this rank should
 * print it: 1 when this rank found the problem itself, 0 when another rank
 * already did (its line is the one to read).  Call it before freeing what
 * peers may still write into (a peer's write refused on the way out must
 * not reach the store before this report); a second call gives the first
 * one's answer.
 */
int cb_comm_fail(struct cb_comm *c, cb_status_t st);

#endif
