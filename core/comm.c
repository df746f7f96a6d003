/* SPDX-License-Identifier: MIT */
/*
 * core/comm.c - the transport registry and the communicator: bootstrap,
 * host discovery, opening transports and publishing their addresses, the
 * services lent to transports, and the progress loop that watches for
 * aborts.  Connecting peers: core/comm_conn.c; memory: core/comm_mem.c.
 */
#include "core/comm.h"

#include <dlfcn.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "core/strbuf.h"

#ifndef CB_PLUGIN_DIR
#define CB_PLUGIN_DIR "/usr/local/lib/collbench"
#endif
#ifndef CB_GPU_BUILD
#define CB_GPU_BUILD "" /* what the build said about the gpu module */
#endif

extern const struct cb_tp_ops cb_tp_tcp;
extern const struct cb_tp_ops cb_tp_shm;

/* Built in first, then the modules; this order is also the order of address
 * blobs in the exchange. */
const char *const cb_tp_names[] = { "tcp", "shm", "verbs", "gpu", NULL };
static const struct cb_tp_ops *const builtin[] = { &cb_tp_tcp, &cb_tp_shm };

static const struct cb_tp_ops *tp_load_module(const char *name, char *why,
                                              size_t why_bytes)
{
	char dirs[PATH_MAX * 3], path[PATH_MAX + 64], exe[PATH_MAX];
	const char *env = getenv("COLLBENCH_PLUGIN_PATH");
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	exe[n > 0 ? n : 0] = '\0';
	if (strrchr(exe, '/'))
		*strrchr(exe, '/') = '\0';
	/* The build tree keeps modules in transports/ beside the binary. */
	snprintf(dirs, sizeof(dirs), "%s%s%s/transports:%s", env ? env : "",
	         env ? ":" : "", exe, CB_PLUGIN_DIR);
	for (char *save, *d = strtok_r(dirs, ":", &save); d;
	     d = strtok_r(NULL, ":", &save)) {
		snprintf(path, sizeof(path), "%s/libcollbench-%s.so", d, name);
		if (access(path, R_OK) != 0)
			continue;
		void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			snprintf(why, why_bytes, "cannot load %.90s: %.90s",
			         path, dlerror());
			return NULL;
		}
		const struct cb_tp_ops *ops = dlsym(h, CB_TP_SYMBOL);
		if (!ops && dlsym(h, "cb_tp_ops_v2")) {
			/* its host callbacks take no `self`: unsafe to call */
			snprintf(why, why_bytes,
			         "%.150s was built for transport ABI 2, this "
			         "collbench needs ABI %u: rebuild it",
			         path, CB_TP_ABI);
			dlclose(h);
			return NULL;
		}
		if (!ops || ops->abi != CB_TP_ABI ||
		    ops->size < offsetof(struct cb_tp_ops, mem_export)) {
			snprintf(
			        why, why_bytes,
			        "%.150s is not a collbench transport of ABI %u",
			        path, CB_TP_ABI);
			dlclose(h);
			return NULL;
		}
		return ops; /* stays loaded for the life of the process */
	}
	if (!strcmp(name, "gpu") && !strncmp(CB_GPU_BUILD, "not built", 9))
		/* the build knows why: say that, not where it looked */
		snprintf(why, why_bytes, "%.200s", CB_GPU_BUILD);
	else
		snprintf(why, why_bytes,
		         "not built: no module libcollbench-%s.so in "
		         "COLLBENCH_PLUGIN_PATH, the build tree or %.80s",
		         name, CB_PLUGIN_DIR);
	return NULL;
}

void cb_tp_find(const char *name, struct cb_tp_entry *e)
{
	memset(e, 0, sizeof(*e));
	e->name = name;
	for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
		if (!strcmp(builtin[i]->name, name))
			e->ops = builtin[i];
	if (!e->ops)
		e->ops = tp_load_module(name, e->why, sizeof(e->why));
	if (!e->ops)
		return;
	e->available = 1;
	if (e->ops->query && e->ops->query(e->why, sizeof(e->why)) != CB_OK)
		e->available = 0;
}

/* ---- the host API lent to transports ---- */

/* The open transport whose table @self is. */
static struct cb_comm_tp *host_tp(const struct cb_tp_host *self)
{
	return (struct cb_comm_tp *)(void *)((char *)(uintptr_t)self -
	                                     offsetof(struct cb_comm_tp, host));
}

const char *cb_comm_option(const struct cb_comm *c, const char *key)
{
	return c->option ? c->option(c->option_arg, key) : NULL;
}

static const char *host_option(const struct cb_tp_host *self, const char *key)
{
	return cb_comm_option(host_tp(self)->comm, key);
}

static void host_log(const struct cb_tp_host *self, int level, const char *fmt,
                     ...)
{
	char line[900];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	cb_log(level, "%s: %s", host_tp(self)->name, line);
}

static uint64_t host_now_ns(const struct cb_tp_host *self)
{
	(void)self;
	return cb_now_ns();
}

static cb_status_t host_fail(const struct cb_tp_host *self, cb_status_t st,
                             const char *fmt, ...)
{
	char line[900];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	return cb_fail_to(&host_tp(self)->comm->fail, st, "%s", line);
}

static void host_reduce(const struct cb_tp_host *self, enum cb_dtype dt,
                        enum cb_op op, void *dst, const void *a, const void *b,
                        size_t count)
{
	host_tp(self)->comm->reduce(dt, op, dst, a, b, count);
}

/* From the engine of @self's communicator. */
static cb_status_t host_gpu_dmabuf(const struct cb_tp_host *self,
                                   const void *base, size_t bytes, int *fd,
                                   uint64_t *offset)
{
	struct cb_comm *c = host_tp(self)->comm;

	if (c->engine < 0 || !CB_TP_HAS(c->tp[c->engine].ops, mem_dmabuf))
		return CB_ERR_UNSUPPORTED;
	return c->tp[c->engine].ops->mem_dmabuf(c->tp[c->engine].ctx, base,
	                                        bytes, fd, offset);
}

void cb_comm_host_init(struct cb_comm *c, uint64_t job_id, int gpu)
{
	c->host_api = (struct cb_tp_host){
		.size = sizeof(struct cb_tp_host),
		.rank = c->rank,
		.world = c->world,
		.host_of_rank = c->host_of_rank,
		.hosts = (const char *const *)c->hosts,
		.job_id = job_id,
		.local_ranks = c->local_size,
		.oversubscribed = c->oversubscribed,
		.local_ip = c->local_ip,
		.timeout_s = c->timeout_s,
		.nic = c->nic[0] ? c->nic : NULL,
		.gpu = gpu,
		.option = host_option,
		.log = host_log,
		.fail = host_fail,
		.now_ns = host_now_ns,
		.reduce = host_reduce,
		.gpu_dmabuf = host_gpu_dmabuf,
	};
}

void cb_comm_tp_init(struct cb_comm *c, struct cb_comm_tp *t, const char *name)
{
	t->comm = c;
	t->host = c->host_api;
	snprintf(t->name, sizeof(t->name), "%s", name);
}

/* ---- communicator ---- */

/* A rank's part of the join: 72 bytes, each rank gets the world's. */
struct host_info {
	uint64_t key; /* hash of the host's identity (cb_host_identity) */
	char name[64];
};

static cb_status_t comm_hosts(struct cb_comm *c, const char *name,
                              const char *key)
{
	struct host_info me = { .key = cb_str_hash(CB_STR_HASH0, key) }, *all;
	cb_status_t st;

	snprintf(me.name, sizeof(me.name), "%s", name);
	all = calloc((size_t)c->world, sizeof(*all));
	c->host_of_rank = calloc((size_t)c->world, sizeof(int));
	c->hosts = calloc((size_t)c->world, sizeof(char *));
	if (!all || !c->host_of_rank || !c->hosts) {
		free(all);
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	}
	if ((st = cb_boot_allgather(c->boot, "every rank to join the job", &me,
	                            sizeof(me), all))) {
		free(all);
		return st;
	}
	for (int r = 0; r < c->world; r++) {
		int h = 0;
		while (h < r && all[h].key != all[r].key)
			h++;
		if (h == r) {
			c->host_of_rank[r] = c->nhosts;
			c->hosts[c->nhosts++] = strdup(all[r].name);
		} else {
			c->host_of_rank[r] = c->host_of_rank[h];
		}
	}
	c->host = c->host_of_rank[c->rank];
	for (int r = 0; r < c->world; r++) {
		if (c->host_of_rank[r] != c->host)
			continue;
		if (r < c->rank)
			c->local_rank++;
		c->local_size++;
	}
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	c->oversubscribed = cpus > 0 && c->local_size > cpus;
	free(all);
	return CB_OK;
}

/* Which transport connects us to @peer: by capability (CAP_SAME_HOST for
 * ranks of one host, HOST_MEM for host buffers) and, under auto across
 * hosts, the first that both ends opened (core/comm_auto.c). */
int cb_comm_pick(const struct cb_comm *c, int peer)
{
	int same = c->host_of_rank[peer] == c->host;

	if (c->nwire == 1)
		return 0;
	for (int i = 0; i < c->nwire; i++) {
		const struct cb_tp_ops *o = c->tp[i].ops;
		if (!!(o->caps & CB_TP_CAP_SAME_HOST) != same ||
		    (c->mem_kind == CB_MEM_HOST &&
		     !(o->caps & CB_TP_CAP_HOST_MEM)))
			continue;
		if (!same && c->remote_tps &&
		    !(c->remote_tps[peer] & c->remote_tps[c->rank] &
		      cb_auto_bit(o->name)))
			continue; /* the peer has not got it */
		return i;
	}
	return 0;
}

static cb_status_t comm_open_tp(struct cb_comm *c, const char *name, int alone)
{
	struct cb_tp_entry e;
	cb_status_t st;

	cb_tp_find(name, &e);
	if (!e.ops)
		return cb_fail(CB_ERR_UNAVAILABLE,
		               "transport %s is not available: %s", name,
		               e.why);
	if (!e.available)
		return cb_fail(CB_ERR_UNAVAILABLE,
		               "transport %s is not usable here: %s", name,
		               e.why);
	if ((e.ops->caps & CB_TP_CAP_SAME_HOST) && c->nhosts > 1 && alone)
		return cb_fail(CB_ERR_UNAVAILABLE,
		               "transport %s connects ranks of one host, and "
		               "this job spans %d hosts (use --transport=auto "
		               "or tcp)",
		               name, c->nhosts);
	cb_comm_tp_init(c, &c->tp[c->ntp], name);
	st = e.ops->open(&c->tp[c->ntp].host, &c->tp[c->ntp].ctx);
	if (st)
		return st;
	c->tp[c->ntp++].ops = e.ops;
	return CB_OK;
}

/* Publish every open transport's address, for peers that connect to us. */
static cb_status_t comm_publish(struct cb_comm *c)
{
	uint8_t blob[CB_TP_ADDR_MAX];
	char key[64];
	cb_status_t st;

	for (int i = 0; i < c->ntp; i++) {
		size_t n = sizeof(blob);
		if ((st = c->tp[i].ops->address(c->tp[i].ctx, blob, &n)))
			return st;
		snprintf(key, sizeof(key), "tp/%s/%d", c->tp[i].ops->name,
		         c->rank);
		if ((st = cb_boot_set(c->boot, key, blob, n)))
			return st;
	}
	c->eps = calloc((size_t)c->world, sizeof(*c->eps));
	if (!c->eps)
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	for (int p = 0; p < c->world; p++) {
		int t = cb_comm_pick(c, p);
		c->eps[p] = (struct cb_ep){ .peer = p, .tpi = t };
		if (p != c->rank)
			c->eps[p].ops = c->tp[t].ops;
	}
	return CB_OK;
}

/* The device names the transports of this run know, for the placement, so
 * --nic may name one hwloc does not (an emulated RDMA device, an interface):
 * "verbs:cbemu0,cbemu1;tcp:lo,eth0". */
static void comm_known_nics(const char *transport, char *list, size_t cap)
{
	const char *auto_tps[] = { "shm", "tcp", "verbs", NULL };
	const char *one[] = { transport, NULL };
	const char **names = strcmp(transport, "auto") ? one : auto_tps;
	struct cb_tp_dev devs[32];
	size_t n = 0;

	for (int i = 0; names[i]; i++) {
		struct cb_tp_entry e;
		int nd = 0;
		cb_tp_find(names[i], &e);
		if (!e.ops || !CB_TP_HAS(e.ops, devices) ||
		    e.ops->devices(devs, 32, &nd) != CB_OK)
			continue;
		cb_buf_appendf(list, cap, &n, "%s%s:", n ? ";" : "", names[i]);
		for (int d = 0; d < nd && d < 32; d++)
			cb_buf_appendf(list, cap, &n, "%s%.63s", d ? "," : "",
			               devs[d].name);
	}
}

cb_status_t cb_comm_create(const struct cb_comm_cfg *cfg, struct cb_comm **out)
{
	struct cb_comm *c = calloc(1, sizeof(*c));
	char name[64], key[128];
	cb_status_t st;

	if (!c)
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	cb_fail_open(&c->fail);
	c->rank = cfg->rank;
	c->world = cfg->world;
	c->stalled_on = -1;
	c->timeout_s = cfg->timeout_s;
	c->option = cfg->option;
	c->option_arg = cfg->option_arg;
	if (cfg->opts) { /* the communicator's own copy of the run's view */
		c->opts = *cfg->opts;
		c->option = cb_optset_lookup;
		c->option_arg = &c->opts;
	}
	cb_host_identity(name, sizeof(name), key, sizeof(key));

	struct cb_boot_cfg bc = { .rank = cfg->rank,
		                  .world = cfg->world,
		                  .host = cfg->host,
		                  .port = cfg->port,
		                  .listen_fd = cfg->listen_fd,
		                  .relay = cfg->relay,
		                  .timeout_s = cfg->timeout_s,
		                  .hostname = name };
	if ((st = cb_boot_open(&bc, &c->boot))) {
		cb_fail_close(&c->fail, 1);
		free(c);
		return st;
	}
	if ((st = comm_hosts(c, name, key)))
		goto fail;
	/* Bind before transports allocate anything (first touch). */
	c->place = cfg->place;
	if (c->place) {
		char known[1024] = "";
		comm_known_nics(cfg->transport, known, sizeof(known));
		if ((st = c->place->setup(c, known, &c->topo)))
			goto fail;
	}
	cb_boot_local_addr(c->boot, c->local_ip, sizeof(c->local_ip));
	{
		const char *nic = cb_comm_option(c, "nic");
		if (!nic && c->place)
			nic = c->place->nic(c->topo);
		snprintf(c->nic, sizeof(c->nic), "%s", nic ? nic : "");
	}

	c->reduce = cfg->reduce;
	cb_comm_host_init(c, cb_boot_job_id(c->boot),
	                  c->place ? c->place->gpu(c->topo) : -1);

	/* Device buffers with --mem gpu, and always over the gpu transport;
	 * then ranks of one host talk over gpu by default. */
	c->engine = -1;
	c->mem_kind = (cfg->mem && !strcmp(cfg->mem, "gpu")) ||
	                              !strcmp(cfg->transport, "gpu")
	                      ? CB_MEM_GPU
	                      : CB_MEM_HOST;
	if (!strcmp(cfg->transport, "auto")) {
		if ((st = cb_comm_open_auto(c, comm_open_tp,
		                            cb_comm_option(c, "nic") != NULL)))
			goto fail;
	} else if ((st = comm_open_tp(c, cfg->transport, 1))) {
		goto fail;
	}
	c->nwire = c->ntp;
	for (int i = 0; i < c->nwire; i++)
		snprintf(c->transport + strlen(c->transport),
		         sizeof(c->transport) - strlen(c->transport), "%s%s",
		         i ? "+" : "", c->tp[i].ops->name);
	if (c->mem_kind == CB_MEM_GPU) {
		/* The engine that copies and reduces device memory: the gpu
		 * transport, opened for that alone if it moves no messages. */
		for (int i = 0; i < c->ntp && c->engine < 0; i++)
			if ((c->tp[i].ops->caps & CB_TP_CAP_GPU_MEM) &&
			    CB_TP_HAS(c->tp[i].ops, mem_copy) &&
			    CB_TP_HAS(c->tp[i].ops, local_test))
				c->engine = i;
		if (c->engine < 0) {
			if ((st = comm_open_tp(c, "gpu", 0)))
				goto fail;
			c->engine = c->ntp - 1;
		}
	}
	if ((st = comm_publish(c)) || (st = cb_comm_dev_setup(c)))
		goto fail;
	*out = c;
	return CB_OK;
fail:
	/* Tell the others now, so they do not wait for us to their deadline;
	 * and let one rank speak for all. */
	c->fail.quiet = !cb_comm_fail(c, st);
	cb_comm_destroy(c);
	return st;
}

void cb_comm_destroy(struct cb_comm *c)
{
	if (!c)
		return;
	for (int p = 0; c->eps && p < c->world; p++)
		if (c->eps[p].ops && c->eps[p].ep)
			c->eps[p].ops->ep_close(c->eps[p].ep);
	while (c->nmem > 0)
		cb_comm_mem_dereg(c, c->mem[c->nmem - 1]->base);
	for (int i = 0; i < c->ntp; i++)
		c->tp[i].ops->close(c->tp[i].ctx);
	free(c->mem_lines);
	cb_boot_close(c->boot);
	if (c->place)
		c->place->free(c->topo);
	for (int h = 0; c->hosts && h < c->nhosts; h++)
		free(c->hosts[h]);
	free(c->hosts);
	free(c->host_of_rank);
	free(c->remote_tps);
	free(c->eps);
	cb_fail_close(&c->fail, 1);
	free(c);
}

/* A transport's error, in a job that ends on the first one: the store
 * hears it now, before the error unwinds (a receive cancelled on the way
 * out revokes the memory a peer writes into, and that peer's "remote
 * access error" must not reach the store first). */
static cb_status_t comm_error(struct cb_comm *c, cb_status_t st)
{
	if (c->fail_fast && st != CB_ERR_ABORTED && st != CB_ERR_TIMEOUT)
		(void)cb_comm_fail(c, st);
	return st;
}

cb_status_t cb_comm_progress(struct cb_comm *c)
{
	cb_status_t st, any = CB_AGAIN;

	for (int i = 0; i < c->ntp; i++) {
		st = c->tp[i].ops->progress(c->tp[i].ctx);
		if (st < 0)
			return comm_error(c, st);
		if (st == CB_OK)
			any = CB_OK;
	}
	if (c->nstaged && (st = cb_comm_pump_staged(c)) < 0)
		return comm_error(c, st);
	/* Another rank's failure reaches us through the store; look every
	 * few milliseconds (one poll() syscall, nothing allocated).  The clock
	 * itself is read only every 256th call: it costs as much as a poll of
	 * the shm slots. */
	if ((++c->calls & 255) == 0) {
		uint64_t now = cb_now_ns();
		if (now >= c->next_check_ns) {
			c->next_check_ns = now + 5000000ull;
			if ((st = cb_interrupted()))
				return cb_fail_to(&c->fail, st, "%s",
				                  cb_status_str(st));
			if ((st = cb_boot_check(c->boot, 0, NULL)))
				return st;
		}
	}
	if (any == CB_OK) {
		c->idle = 0;
	} else if (++c->idle >= 64) {
		/* Nothing for a while: let transports that poll with system
		 * calls sleep until their sockets move (a bounded wait, so the
		 * deadline and abort checks still run). */
		c->idle = 0;
		for (int i = 0; i < c->ntp; i++)
			if (CB_TP_HAS(c->tp[i].ops, idle_wait))
				c->tp[i].ops->idle_wait(c->tp[i].ctx, 1000);
	}
	/* Spinning is the fastest wait while the peer has a core of its own;
	 * on a machine busier than it has cores (our ranks, or anyone's), a
	 * rank that spins on through its time slice keeps the peer it waits
	 * for off the core.  So after a while without progress, yield. */
	if (any == CB_OK)
		c->idle_long = 0;
	else if (c->idle_long < 4096)
		c->idle_long++;
	if (any == CB_AGAIN && (c->oversubscribed || c->idle_long >= 4096))
		sched_yield();
	return any;
}

static int comm_fail(struct cb_comm *c, cb_status_t st)
{
	int origin = -1;

	if (st != CB_ERR_ABORTED) {
		/* Tell everyone, then wait for the store's answer before
		 * anything is torn down: the store forwards only the first
		 * report of a job's failure, to every rank and back to its
		 * origin, so exactly one rank's line is printed even when
		 * several ranks fail at once (the same bad option everywhere,
		 * or the echo of a peer that died), and a peer that fails
		 * because this rank released its memory reports after the
		 * store chose.  A stall report waits while the store compares
		 * reports (300 ms); a store that does not answer at all (rank
		 * 0 stopped) leaves each rank its own line. */
		int blame = st == CB_ERR_TIMEOUT ? c->stalled_on : -1;
		const char *line = cb_fail_rec_msg(&c->fail);
		cb_boot_abort(c->boot, st, blame, line ? line : "failed");
		if (cb_boot_check(c->boot, 1500, &origin) != CB_ERR_ABORTED)
			return 1;
		/* Our own report, echoed with what the store added (who it
		 * still misses): that is the line to print. */
		if (origin == c->rank) {
			cb_fail_rec_replace(&c->fail, st,
			                    cb_boot_abort_line(c->boot));
			return 1;
		}
	} else {
		cb_boot_check(c->boot, 0, &origin);
	}
	/* Someone else reported first: theirs is the line that explains, ours
	 * is an echo.  A rank that vanished has nobody to speak for it but the
	 * store: rank 0 prints that line. */
	if (origin != -1 || c->rank != 0)
		return 0;
	if (cb_boot_abort_line(c->boot))
		cb_fail_rec_replace(&c->fail, cb_fail_rec_status(&c->fail),
		                    cb_boot_abort_line(c->boot));
	return 1;
}

int cb_comm_fail(struct cb_comm *c, cb_status_t st)
{
	if (!c->failed)
		c->failed = comm_fail(c, st) + 1;
	return c->failed - 1;
}
