/* SPDX-License-Identifier: MIT */
/*
 * acceptance/stage.c - acceptance's stages other than the pairs:
 *
 *   inventory    every rank reads its host's NICs with the reader of the
 *                transport between hosts (topo/nic.h: netdev for tcp,
 *                infiniband for verbs) and sends them to rank 0, which
 *                compares hosts (state, speed, MTU, driver and version,
 *                firmware) beside the topology check every run already
 *                makes (cores, memory, NIC names and links);
 *   collectives  allreduce (ring) and alltoall (pairwise) over all ranks
 *                at --coll-bytes, checked, timed, and compared with the
 *                alpha-beta model of the links just measured;
 *   counters     the same NICs' error counters again at the end: any that
 *                grew during the run is a finding.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acceptance/accept.h"
#include "core/strbuf.h"
#include "select/calibrate.h"
#include "bench/verify.h"
#include "coll/coll.h"
#include "core/log.h"
#include "topo/cpuprobe.h"
#include "topo/topo.h"

/* What one rank sends rank 0 about its host's NICs. */
struct inv_entry {
	char boot_id[40]; /* which machine: network-namespace hosts share one */
	int32_t cpus;     /* its online CPUs */
	int32_t nnics;
	char nic[32]; /* the one the transport uses */
	char addr[48];
	double cpu_gbps, cpu_share; /* its CPU probe (inventory only) */
	struct cb_nic_info nics[CB_NIC_MAX];
};

/* What rank 0 gathers at inventory and at the end: the rank's counters
 * first (cb_acc_ctr_gathered reads them there), then its NICs. */
struct inv_block {
	struct cb_hostctr ctr;
	struct inv_entry e;
};

static const char *sysroot(struct cb_comm *c)
{
	char env[48];
	const char *v;

	/* A test gives one rank a made-up sysfs tree, as it gives one a
	 * recorded topology (COLLBENCH_TOPO_XML_<rank>); the verbs emulation
	 * gives every process of a host its own (COLLBENCH_SYSFS_ROOT). */
	snprintf(env, sizeof(env), "COLLBENCH_SYSFS_%d", c->rank);
	v = getenv(env);
	if (!v || !*v)
		v = getenv("COLLBENCH_SYSFS_ROOT"); /* the verbs emulation's */
	return v && *v ? v : "/sys";
}

static void read_mine(struct cb_acc_ctx *x, struct inv_entry *e)
{
	const struct cb_nic_reader *rd = cb_nic_reader_for(x->a->set.transport);
	const char *tcp_if = cb_comm_option(x->c, "tcp-if");

	memset(e, 0, sizeof(*e));
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
	if (f) {
		if (!fgets(e->boot_id, sizeof(e->boot_id), f))
			e->boot_id[0] = '\0';
		fclose(f);
	}
	e->cpus = (int32_t)sysconf(_SC_NPROCESSORS_ONLN);
	if (rd)
		e->nnics = rd->list(sysroot(x->c), e->nics, CB_NIC_MAX);
	snprintf(e->addr, sizeof(e->addr), "%.47s", x->c->local_ip);
	/* The NIC the transport uses: tcp's interface, else the device the
	 * binding plan chose for this rank (verbs). */
	if (tcp_if && *tcp_if)
		snprintf(e->nic, sizeof(e->nic), "%.31s", tcp_if);
	else if (strcmp(x->a->set.transport, "tcp") && x->c->nic[0])
		snprintf(e->nic, sizeof(e->nic), "%.31s", x->c->nic);
	else
		cb_nic_of_addr(x->c->local_ip, e->nic, sizeof(e->nic));
	/* verbs: the RDMA device bound to that interface, as its reader
	 * names its ports */
	char dev[32];
	snprintf(x->ctr_netdev, sizeof(x->ctr_netdev), "%s", e->nic);
	if (rd == &cb_nic_infiniband && e->nic[0]) {
		cb_nic_rdma_of_netdev(sysroot(x->c), e->nic, dev, sizeof(dev));
		if (dev[0])
			snprintf(e->nic, sizeof(e->nic), "%s", dev);
		snprintf(x->ctr_ibdev, sizeof(x->ctr_ibdev), "%s", e->nic);
	}
}

void cb_acc_ctr_read(const struct cb_acc_ctx *x, struct cb_hostctr *out)
{
	cb_hostctr_read("/proc", sysroot(x->c), x->ctr_netdev, x->ctr_ibdev,
	                out);
}

void cb_acc_ctr_gathered(struct cb_acc_ctx *x, const void *all, size_t stride,
                         const unsigned char *present, struct cb_hostctr *moved)
{
	struct cb_acc *a = x->a;
	const struct cb_comm *c = x->c;

	for (int h = 0; h < a->nhosts; h++) {
		int r = 0;
		while (r < c->world &&
		       (c->host_of_rank[r] != h || (present && !present[r])))
			r++;
		if (moved)
			memset(&moved[h], 0, sizeof(moved[h]));
		if (r == c->world)
			continue;
		struct cb_hostctr snap;
		memcpy(&snap, (const char *)all + (size_t)r * stride,
		       sizeof(snap));
		cb_acc_ctr_note(a, x->stage, h, &snap,
		                moved ? &moved[h] : NULL);
	}
}

/* Every rank's NICs to rank 0; at the end of a run, a rank that is cut off
 * by then is left out (@present[r] 0) instead of failing the job. */
/* Is port @name (netdev "eth0", or "mlx5_0/1") the NIC @used names? */
static int nic_is(const char *used, const char *name)
{
	size_t n = strlen(used);

	return n && !strncmp(used, name, n) && (!name[n] || name[n] == '/');
}

static cb_status_t gather(struct cb_acc_ctx *x, struct inv_block **all,
                          unsigned char **present)
{
	struct inv_block mine;
	struct cb_cpu_rate cpu;
	cb_status_t st;

	read_mine(x, &mine.e);
	/* At inventory (the ranks have just met in the bootstrap, so every
	 * host runs it at about the same time): how much its CPU does. */
	if (!present && !cb_cpu_probe(CB_ACC_CPU_PROBE_S, &cpu)) {
		mine.e.cpu_gbps = cpu.gbps;
		mine.e.cpu_share = cpu.share;
	}
	cb_acc_ctr_read(x, &mine.ctr);
	*all = NULL;
	if (present)
		*present = NULL;
	if (x->c->rank == 0 &&
	    (!(*all = calloc((size_t)x->c->world, sizeof(**all))) ||
	     (present && !(*present = calloc((size_t)x->c->world, 1)))))
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	st = cb_boot_gather_root_idle(
	        x->c->boot, "every rank's NICs", &mine, sizeof(mine), *all,
	        present ? x->o->timeout_s : 0,
	        present ? 2 * x->o->set.pair_timeout_s : 0,
	        present ? x->gone : NULL, present ? *present : NULL);
	if (st) {
		free(*all);
		*all = NULL;
		if (present) {
			free(*present);
			*present = NULL;
		}
	} else if (x->c->rank == 0) {
		cb_acc_ctr_gathered(x, *all, sizeof(**all),
		                    present ? *present : NULL, NULL);
	}
	return st;
}

static int first_rank(const struct cb_comm *c, int h)
{
	for (int r = 0; r < c->world; r++)
		if (c->host_of_rank[r] == h)
			return r;
	return -1;
}

/* The topology check's lines for host @name ("" when alike). */
static void topo_differs(const struct cb_comm *c, const char *name, char *buf,
                         size_t bytes)
{
	const struct cb_topo_inv *inv;
	const struct cb_topo_inv_diff *diff;
	int n = cb_topo_job_hosts(c->topo, &inv, &diff);

	buf[0] = '\0';
	for (int i = 0; i < n; i++)
		if (diff[i].differs &&
		    !strncmp(inv[i].host, name, strlen(name)))
			snprintf(buf, bytes, "%s", diff[i].why);
}

cb_status_t cb_acc_inventory(struct cb_acc_ctx *x)
{
	struct cb_comm *c = x->c;
	struct cb_acc *a = x->a;
	struct inv_block *all;
	cb_status_t st = gather(x, &all, NULL);

	if (st || c->rank != 0)
		return st;
	const struct cb_nic_info **nics =
	        calloc((size_t)a->nhosts, sizeof(*nics));
	int *counts = calloc((size_t)a->nhosts, sizeof(int));
	char(*why)[256] = calloc((size_t)a->nhosts, sizeof(*why));
	if (!nics || !counts || !why) {
		st = cb_fail(CB_ERR_NOMEM, "out of memory");
		goto out;
	}
	int speeds[CB_NIC_MAX * 4], nspeeds = 0;
	for (int h = 0; h < a->nhosts; h++) {
		struct cb_acc_host *ho = &a->hosts[h];
		const struct inv_entry *e = &all[first_rank(c, h)].e;
		ho->reported = 1;
		ho->nnics = e->nnics;
		memcpy(ho->nics, e->nics, sizeof(ho->nics));
		snprintf(ho->nic, sizeof(ho->nic), "%s", e->nic);
		snprintf(ho->addr, sizeof(ho->addr), "%s", e->addr);
		ho->cpu_gbps = e->cpu_gbps;
		ho->cpu_share = e->cpu_share;
		nics[h] = ho->nics;
		counts[h] = ho->nnics;
		for (int k = 0; k < ho->nnics; k++)
			if (nic_is(ho->nic, ho->nics[k].name) &&
			    ho->nics[k].speed_mbps > 0 &&
			    nspeeds < (int)(sizeof(speeds) / sizeof(speeds[0])))
				speeds[nspeeds++] = ho->nics[k].speed_mbps;
	}
	/* The link speed most hosts' NICs have. */
	int best = 0, best_n = 0;
	for (int i = 0; i < nspeeds; i++) {
		int k = 0;
		for (int j = 0; j < nspeeds; j++)
			k += speeds[j] == speeds[i];
		if (k > best_n)
			best_n = k, best = speeds[i];
	}
	a->link_gbps = best / 8000.0;
	/* Ranks that share a machine's cores (test hosts made of network
	 * namespaces, or an oversubscribed host) measure its CPUs as much as
	 * its links. */
	for (int r = 0; r < c->world && !a->shared_cores[0]; r++) {
		int k = 0;
		for (int q = 0; q < c->world; q++)
			k += !strcmp(all[q].e.boot_id, all[r].e.boot_id);
		if (all[r].e.cpus > 0 && k > all[r].e.cpus)
			snprintf(a->shared_cores, sizeof(a->shared_cores),
			         "%d ranks share the %d cores of one machine",
			         k, all[r].e.cpus);
	}
	cb_nic_compare(nics, counts, a->nhosts, why);
	int differ = 0;
	for (int h = 0; h < a->nhosts; h++) {
		struct cb_acc_host *ho = &a->hosts[h];
		char topo[256];
		topo_differs(c, ho->name, topo, sizeof(topo));
		snprintf(ho->differs, sizeof(ho->differs), "%s%s%s", why[h],
		         why[h][0] && topo[0] ? "; " : "", topo);
		if (!ho->differs[0])
			continue;
		differ++;
		cb_acc_find(a, CB_ACC_INVENTORY, "host", h, -1,
		            "host %s%s%s%s: %s", ho->name,
		            ho->nic[0] ? " (" : "", ho->nic,
		            ho->nic[0] ? ")" : "", ho->differs);
	}
	/* A NIC the transport uses must be up, whatever the others say. */
	for (int h = 0; h < a->nhosts; h++)
		for (int k = 0; k < a->hosts[h].nnics; k++) {
			const struct cb_nic_info *n = &a->hosts[h].nics[k];
			if (!nic_is(a->hosts[h].nic, n->name) ||
			    !strcmp(n->state, "up") ||
			    !strcmp(n->state, "active") ||
			    !strcmp(n->state, "unknown") ||
			    a->hosts[h].differs[0])
				continue;
			cb_acc_find(a, CB_ACC_INVENTORY, "host", h, -1,
			            "host %s (%s): link %s", a->hosts[h].name,
			            n->name, n->state);
		}
	snprintf(
	        a->stage[CB_ACC_INVENTORY].summary, sizeof(a->stage[0].summary),
	        "%d host%s, %d unlike the others; link %s", a->nhosts,
	        a->nhosts == 1 ? "" : "s", differ, best ? "" : "speed unknown");
	if (best) {
		size_t n = strlen(a->stage[CB_ACC_INVENTORY].summary);
		snprintf(a->stage[CB_ACC_INVENTORY].summary + n,
		         sizeof(a->stage[0].summary) - n, "%d Mb/s", best);
	}
out:
	free(nics);
	free(counts);
	free(why);
	free(all);
	return st;
}

cb_status_t cb_acc_counters(struct cb_acc_ctx *x)
{
	struct cb_comm *c = x->c;
	struct cb_acc *a = x->a;
	struct inv_block *all;
	unsigned char *present;
	cb_status_t st = gather(x, &all, &present);

	if (st || c->rank != 0)
		return st;
	for (int h = 0; h < a->nhosts; h++) {
		struct cb_acc_host *ho = &a->hosts[h];
		const struct inv_entry *e = &all[first_rank(c, h)].e;
		if (!present[first_rank(c, h)])
			continue; /* cut off: named by the stage that saw it */
		for (int k = 0; k < ho->nnics; k++)
			for (int j = 0; j < e->nnics; j++)
				if (!strcmp(e->nics[j].name, ho->nics[k].name))
					memcpy(ho->after[k],
					       e->nics[j].counters,
					       sizeof(ho->after[k]));
		ho->have_after = 1;
	}
	free(all);
	free(present);
	return CB_OK;
}

void cb_acc_judge_counters(struct cb_acc *a)
{
	const struct cb_nic_reader *rd = cb_nic_reader_for(a->set.transport);

	if (!rd)
		return;
	for (int h = 0; h < a->nhosts; h++) {
		const struct cb_acc_host *ho = &a->hosts[h];
		for (int k = 0; ho->have_after && k < ho->nnics; k++) {
			char grew[400] = "";
			size_t n = 0;
			if (!ho->nics[k].ncounters)
				continue;
			for (int i = 0; rd->counter_names[i]; i++) {
				uint64_t b = ho->nics[k].counters[i],
				         e = ho->after[k][i];
				if (e > b && rd->counter_is_error[i])
					cb_buf_appendf(
					        grew, sizeof(grew), &n,
					        "%s%s +%llu", n ? ", " : "",
					        rd->counter_names[i],
					        (unsigned long long)(e - b));
			}
			if (grew[0])
				cb_acc_find(a,
				            a->set.duration_s > 0
				                    ? CB_ACC_BURN
				                    : CB_ACC_PAIRWISE,
				            "host", h, -1,
				            "host %s (%s): error counters grew "
				            "during the run: %s",
				            ho->name, ho->nics[k].name, grew);
		}
	}
}

/* ---- collectives ---- */

struct one {
	const char *algo;
	enum cb_coll coll;
};

static cb_status_t run_one(struct cb_acc_ctx *x, const struct one *w,
                           double gamma, struct cb_acc_coll *out)
{
	struct cb_comm *c = x->c;
	const struct cb_algo *algo = cb_algo_find(w->algo);
	int n = c->world, *members = malloc((size_t)n * sizeof(int));
	size_t bytes = (size_t)x->a->set.coll_bytes;
	size_t count = bytes / 4 / (cb_coll_blocks(w->coll) ? (size_t)n : 1);
	size_t sb = cb_coll_send_elems(w->coll, count, n) * 4,
	       rb = cb_coll_recv_elems(w->coll, count, n) * 4;
	struct cb_plan *plan = NULL;
	void *send = NULL, *recv = NULL;
	/* the rank's counters lead (cb_acc_ctr_gathered) */
	struct coll_block {
		struct cb_hostctr ctr;
		double t_us, wrong;
	} mine = { .t_us = 0 }, *all = NULL;
	cb_status_t st;

	if (!members || !algo)
		return cb_fail(CB_ERR_NOMEM, "out of memory");
	for (int i = 0; i < n; i++)
		members[i] = i;
	struct cb_plan_cfg pc = {
		.group = { .members = members, .n = n, .me = c->rank },
		.coll = w->coll,
		.dtype = CB_DT_FLOAT32,
		.max_count = count,
		.ring_put_off = cb_opt_is(cb_comm_option(c, "ring-put"), "0"),
	};
	struct cb_verify v = { .coll = w->coll,
		               .dtype = CB_DT_FLOAT32,
		               .op = CB_OP_SUM,
		               .n = n,
		               .me = c->rank,
		               .count = count };
	if ((st = cb_comm_mem_alloc(c, sb, &send)) ||
	    (st = cb_comm_mem_alloc(c, rb, &recv)) ||
	    (st = cb_algo_plan_build(algo, c, &pc, &plan)))
		goto out;
	struct cb_coll_args args = { .coll = w->coll,
		                     .dtype = CB_DT_FLOAT32,
		                     .op = CB_OP_SUM,
		                     .sendbuf = send,
		                     .recvbuf = recv,
		                     .count = count };
	cb_verify_fill(&v, send);
	cb_verify_poison(&v, recv);
	uint64_t t0 = cb_now_ns();
	if ((st = algo->run(plan, &args)))
		goto out;
	mine.wrong = (double)cb_verify_check(&v, recv);
	/* How many timed calls: as many as take about a second (1 to 5),
	 * after one warm-up unless a call takes half a second; rank 0
	 * decides from its checked call, so every rank runs the same. */
	int32_t plan_n[2] = { 1, 3 };
	char key[64];
	size_t got;
	snprintf(key, sizeof(key), "acc/coll/%s", w->algo);
	if (c->rank == 0) {
		double t = (double)(cb_now_ns() - t0) / 1e9;
		plan_n[0] = t < 0.5;
		plan_n[1] = t > 0 ? (int32_t)(1.0 / t) : 5;
		plan_n[1] = plan_n[1] < 1 ? 1 : plan_n[1] > 5 ? 5 : plan_n[1];
		st = cb_boot_set(c->boot, key, plan_n, sizeof(plan_n));
	} else {
		st = cb_boot_get(c->boot, key, plan_n, sizeof(plan_n), &got);
	}
	for (int i = 0; i < plan_n[0] && !st; i++)
		st = algo->run(plan, &args);
	t0 = cb_now_ns();
	for (int i = 0; i < plan_n[1] && !st; i++)
		st = algo->run(plan, &args);
	mine.t_us = (double)(cb_now_ns() - t0) / 1e3 / plan_n[1];
	if (st)
		goto out;
	if (c->rank == 0 && !(all = calloc((size_t)n, sizeof(mine)))) {
		st = cb_fail(CB_ERR_NOMEM, "out of memory");
		goto out;
	}
	cb_acc_ctr_read(x, &mine.ctr);
	if ((st = cb_boot_gather_root(c->boot, "every rank's collective time",
	                              &mine, sizeof(mine), all, 0, NULL)) ||
	    c->rank != 0)
		goto out;
	cb_acc_ctr_gathered(x, all, sizeof(*all), NULL, NULL);
	double t = 0, wrong = 0;
	for (int r = 0; r < n; r++) {
		t = all[r].t_us > t ? all[r].t_us
		                    : t; /* the job waits for all */
		wrong += all[r].wrong;
	}
	size_t row = cb_coll_size_elems(w->coll, count, n) * 4;
	double factor = cb_coll_busbw_factor(w->coll, n);
	*out = (struct cb_acc_coll){ .ranks = n,
		                     .hosts = c->nhosts,
		                     .bytes = row,
		                     .time_us = t,
		                     .wrong = (uint64_t)wrong };
	snprintf(out->coll, sizeof(out->coll), "%s", cb_coll_name(w->coll));
	snprintf(out->algo, sizeof(out->algo), "%s", w->algo);
	out->busbw_gbps = t > 0 ? (double)row / (t * 1e3) * factor : 0;
	const struct cb_acc *a = x->a;
	if (algo->model_us && a->ref_bw_gbps > 0) {
		/* Every rank sends and receives at once in these algorithms:
		 * a link's rate is what each direction gets while the other is
		 * busy too (half the bidirectional figure), when that is less
		 * than one direction alone. */
		double beta = a->ref_bw_gbps;
		if (a->ref_bibw_gbps > 0 && a->ref_bibw_gbps / 2 < beta)
			beta = a->ref_bibw_gbps / 2;
		double mt = cb_algo_model_us(algo, w->coll, row, n, 0,
		                             a->ref_lat_us, beta, gamma);
		out->model_busbw_gbps =
		        mt > 0 ? (double)row / (mt * 1e3) * factor : 0;
	}
out:
	if (plan)
		algo->plan_free(plan);
	cb_comm_mem_free(c, send, sb);
	cb_comm_mem_free(c, recv, rb);
	free(members);
	free(all);
	return st;
}

cb_status_t cb_acc_collectives(struct cb_acc_ctx *x, double *busbw_out)
{
	static const struct one work[] = {
		{ "ring", CB_COLL_ALLREDUCE },
		{ "pairwise", CB_COLL_ALLTOALL },
	};
	struct cb_opts o = { .alpha_us = 1, .beta_gbps = 1 };
	struct cb_model m;
	struct cb_acc *a = x->a;
	cb_status_t st;

	/* Only the reduction rate: alpha and beta are the pairs' medians. */
	if ((st = cb_calibrate(x->c, &o, &m)))
		return st;
	a->ncolls = 0;
	for (size_t i = 0; i < sizeof(work) / sizeof(work[0]); i++) {
		struct cb_acc_coll r = { 0 };
		if ((st = run_one(x, &work[i], m.gamma_gbps, &r)))
			return st;
		if (x->c->rank == 0)
			a->colls[a->ncolls++] = r;
	}
	if (busbw_out && x->c->rank == 0)
		*busbw_out = a->colls[0].busbw_gbps;
	return CB_OK;
}
