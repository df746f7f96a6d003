/* SPDX-License-Identifier: MIT */
/*
 * tests/verbs-emu/test_verbs.c - the emulation's own checks: the QP state
 * machine, the completions of the data path and every error completion it
 * promises, through the public verbs API only (<infiniband/verbs.h>, as
 * any program).  Two QPs of this process talk to each other over the
 * emulated fabric (loopback through the process's own engine); a forked
 * child plays a peer that goes away.
 *
 *   test_verbs basic    state machine, data path, errors, limits, events
 *   test_verbs iwarp    what an RNIC refuses (run with
 * COLLBENCH_EMU_LINK=iwarp) test_verbs faults   COLLBENCH_EMU_FAULTS: corrupted
 * rkey, fatal QP, port down, raised counters
 *
 * The retry deadlines are shortened (COLLBENCH_EMU_RETRY_FLOOR_MS=300,
 * _CAP_MS=1500) so the timeouts take a fraction of a second each.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../unit/check.h"

/* not in the public headers (rdma-core's driver.h) */
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf,
                        size_t size);

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_port_attr port;
static int gid_index = -1;
static union ibv_gid gid;
static bool roce, iwarp;

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

struct peer {
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	char *buf;
	size_t len;
};

static void open_dev(void)
{
	int n;
	struct ibv_device **l = ibv_get_device_list(&n);
	if (!l || n < 1) {
		fprintf(stderr, "no device\n");
		exit(1);
	}
	if (strcmp(ibv_get_device_name(l[0]), "cbemu0")) {
		fprintf(stderr, "device %s is not the emulation's\n",
		        ibv_get_device_name(l[0]));
		exit(1);
	}
	ctx = ibv_open_device(l[0]);
	ibv_free_device_list(l);
	if (!ctx || ibv_query_port(ctx, 1, &port)) {
		fprintf(stderr, "cannot open cbemu0\n");
		exit(1);
	}
	pd = ibv_alloc_pd(ctx);
	roce = port.link_layer == IBV_LINK_LAYER_ETHERNET && !iwarp;
	for (int i = 0; roce && i < port.gid_tbl_len && gid_index < 0; i++) {
		int type; /* enum ibv_gid_type_sysfs: 1 = RoCE v2 */
		extern int ibv_query_gid_type(struct ibv_context *, uint8_t,
		                              unsigned int, int *);
		if (ibv_query_gid(ctx, 1, i, &gid) == 0 &&
		    ibv_query_gid_type(ctx, 1, (unsigned)i, &type) == 0 &&
		    type == 1 && gid.raw[10] == 0xff)
			gid_index = i;
	}
}

static void mkpeer(struct peer *p, size_t len, int swr, int rwr, int access)
{
	struct ibv_qp_init_attr a = { 0 };
	memset(p, 0, sizeof(*p));
	p->len = len;
	p->buf = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	memset(p->buf, 0, len);
	p->mr = ibv_reg_mr(pd, p->buf, len, access);
	p->scq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	p->rcq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	a.send_cq = p->scq;
	a.recv_cq = p->rcq;
	a.qp_type = IBV_QPT_RC;
	a.cap.max_send_wr = (uint32_t)swr;
	a.cap.max_recv_wr = (uint32_t)rwr;
	a.cap.max_send_sge = a.cap.max_recv_sge = 4;
	a.cap.max_inline_data = 64;
	p->qp = ibv_create_qp(pd, &a);
	if (!p->mr || !p->scq || !p->rcq || !p->qp) {
		fprintf(stderr, "cannot make a QP: %s\n", strerror(errno));
		exit(1);
	}
}

static void freepeer(struct peer *p)
{
	ibv_destroy_qp(p->qp);
	ibv_destroy_cq(p->scq);
	ibv_destroy_cq(p->rcq);
	ibv_dereg_mr(p->mr);
	free(p->buf);
}

struct conn_opts {
	uint32_t rq_psn, sq_psn;
	int access;
	enum ibv_mtu mtu;
	uint8_t rnr_retry, min_rnr, retry, timeout, rd_atomic;
};

static const struct conn_opts defaults = {
	.rq_psn = 7,
	.sq_psn = 7,
	.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	.mtu = IBV_MTU_1024,
	.rnr_retry = 7,
	.min_rnr = 1,
	.retry = 7,
	.timeout = 14,
	.rd_atomic = 4,
};

static void fill_ah(struct ibv_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->port_num = 1;
	ah->dlid = port.lid;
	if (roce) {
		ah->is_global = 1;
		ah->grh.dgid = gid;
		ah->grh.sgid_index = (uint8_t)gid_index;
		ah->grh.hop_limit = 1;
	}
}

static int to_init(struct ibv_qp *qp, int access)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT,
		                 .port_num = 1,
		                 .qp_access_flags = (unsigned)access };
	return ibv_modify_qp(qp, &a,
	                     IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
	                             IBV_QP_ACCESS_FLAGS);
}

static int to_rtr(struct ibv_qp *qp, uint32_t dest, const struct conn_opts *o)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR,
		                 .path_mtu = o->mtu,
		                 .dest_qp_num = dest,
		                 .rq_psn = o->rq_psn,
		                 .max_dest_rd_atomic = o->rd_atomic,
		                 .min_rnr_timer = o->min_rnr };
	fill_ah(&a.ah_attr);
	return ibv_modify_qp(qp, &a,
	                     IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
	                             IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
	                             IBV_QP_MAX_DEST_RD_ATOMIC |
	                             IBV_QP_MIN_RNR_TIMER);
}

static int to_rts(struct ibv_qp *qp, const struct conn_opts *o)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS,
		                 .timeout = o->timeout,
		                 .retry_cnt = o->retry,
		                 .rnr_retry = o->rnr_retry,
		                 .sq_psn = o->sq_psn,
		                 .max_rd_atomic = o->rd_atomic };
	return ibv_modify_qp(qp, &a,
	                     IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
	                             IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
	                             IBV_QP_MAX_QP_RD_ATOMIC);
}

static int bring_up(struct ibv_qp *qp, uint32_t dest, const struct conn_opts *o)
{
	int rc = to_init(qp, o->access);
	if (!rc)
		rc = to_rtr(qp, dest, o);
	if (!rc)
		rc = to_rts(qp, o);
	return rc;
}

/* a and b connected to each other; oa/ob: their options */
static void connect2(struct peer *a, struct peer *b, const struct conn_opts *oa,
                     const struct conn_opts *ob)
{
	CHECK(bring_up(a->qp, b->qp->qp_num, oa) == 0);
	CHECK(bring_up(b->qp, a->qp->qp_num, ob) == 0);
}

/* Poll until n completions or the deadline; returns how many. */
static int wait_cq(struct ibv_cq *cq, struct ibv_wc *wc, int n, double sec)
{
	double end = now_s() + sec;
	int got = 0;
	while (got < n && now_s() < end) {
		int k = ibv_poll_cq(cq, n - got, wc + got);
		if (k < 0)
			return -1;
		got += k;
	}
	return got;
}

static int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr i;
	ibv_query_qp(qp, &a, IBV_QP_STATE, &i);
	return a.qp_state;
}

static int post_recv(struct peer *p, uint64_t id, size_t off, uint32_t len)
{
	struct ibv_sge s = { .addr = (uintptr_t)p->buf + off,
		             .length = len,
		             .lkey = p->mr->lkey };
	struct ibv_recv_wr w = { .wr_id = id, .sg_list = &s, .num_sge = 1 },
	                   *bad;
	return ibv_post_recv(p->qp, &w, &bad);
}

static int post(struct peer *p, uint64_t id, enum ibv_wr_opcode op, size_t off,
                uint32_t len, uint64_t raddr, uint32_t rkey, unsigned flags)
{
	struct ibv_sge s = { .addr = (uintptr_t)p->buf + off,
		             .length = len,
		             .lkey = p->mr->lkey };
	struct ibv_send_wr w = { .wr_id = id,
		                 .sg_list = &s,
		                 .num_sge = 1,
		                 .opcode = op,
		                 .send_flags = flags,
		                 .imm_data = htobe32(0xabcd1234) },
	                   *bad;
	w.wr.rdma.remote_addr = raddr;
	w.wr.rdma.rkey = rkey;
	return ibv_post_send(p->qp, &w, &bad);
}

static int async_event(enum ibv_event_type *type, double sec)
{
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event e;
	if (poll(&p, 1, (int)(sec * 1000)) != 1 || ibv_get_async_event(ctx, &e))
		return -1;
	*type = e.event_type;
	ibv_ack_async_event(&e);
	return 0;
}

static void drain_async(void)
{
	enum ibv_event_type t;
	while (async_event(&t, 0.05) == 0)
		;
}

/* ---- the state machine ---- */
static void test_states(void)
{
	struct peer a;
	struct ibv_qp_attr at = { 0 };
	struct ibv_wc wc[4];
	struct conn_opts o = defaults;
	mkpeer(&a, 4096, 8, 8, IBV_ACCESS_LOCAL_WRITE);
	CHECK(qp_state(a.qp) == IBV_QPS_RESET);
	CHECK(post(&a, 1, IBV_WR_SEND, 0, 8, 0, 0, IBV_SEND_SIGNALED) ==
	      EINVAL);
	CHECK(post_recv(&a, 1, 0, 8) == EINVAL);
	at.qp_state = IBV_QPS_RTS;
	CHECK(ibv_modify_qp(a.qp, &at, IBV_QP_STATE) == EINVAL);
	at.qp_state = IBV_QPS_INIT;
	at.port_num = 1;
	CHECK(ibv_modify_qp(a.qp, &at,
	                    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT) ==
	      EINVAL); /* no access flags */
	CHECK(ibv_modify_qp(a.qp, &at,
	                    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
	                            IBV_QP_ACCESS_FLAGS | IBV_QP_SQ_PSN) ==
	      EINVAL); /* an attribute RESET->INIT does not take */
	at.port_num = 2;
	CHECK(ibv_modify_qp(a.qp, &at,
	                    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
	                            IBV_QP_ACCESS_FLAGS) == EINVAL);
	CHECK(to_init(a.qp, 0) == 0);
	CHECK(qp_state(a.qp) == IBV_QPS_INIT);
	CHECK(post_recv(&a, 1, 0, 8) == 0);
	CHECK(post(&a, 1, IBV_WR_SEND, 0, 8, 0, 0, IBV_SEND_SIGNALED) ==
	      EINVAL);
	at.qp_state = IBV_QPS_RTR;
	at.path_mtu = IBV_MTU_1024;
	fill_ah(&at.ah_attr);
	CHECK(ibv_modify_qp(a.qp, &at,
	                    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU) ==
	      EINVAL); /* no destination QP, PSN, ... */
	o.mtu = (enum ibv_mtu)6;
	CHECK(to_rtr(a.qp, a.qp->qp_num, &o) == EINVAL);
	o = defaults;
	if (roce) { /* RoCE needs a GRH */
		at.ah_attr.is_global = 0;
		at.dest_qp_num = a.qp->qp_num;
		CHECK(ibv_modify_qp(a.qp, &at,
		                    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		                            IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		                            IBV_QP_MAX_DEST_RD_ATOMIC |
		                            IBV_QP_MIN_RNR_TIMER) == EINVAL);
	}
	CHECK(to_rtr(a.qp, a.qp->qp_num, &o) == 0);
	CHECK(qp_state(a.qp) == IBV_QPS_RTR);
	CHECK(post(&a, 1, IBV_WR_SEND, 0, 8, 0, 0, IBV_SEND_SIGNALED) ==
	      EINVAL);
	at.qp_state = IBV_QPS_RTS;
	CHECK(ibv_modify_qp(a.qp, &at, IBV_QP_STATE | IBV_QP_TIMEOUT) ==
	      EINVAL); /* missing SQ PSN, retry counts, ... */
	CHECK(to_rts(a.qp, &o) == 0);
	at.qp_state = IBV_QPS_RTR;
	CHECK(ibv_modify_qp(a.qp, &at, IBV_QP_STATE) == EINVAL);
	/* to ERR: the posted receive is flushed, a new send is flushed */
	at.qp_state = IBV_QPS_ERR;
	CHECK(ibv_modify_qp(a.qp, &at, IBV_QP_STATE) == 0);
	CHECK(wait_cq(a.rcq, wc, 1, 2) == 1 &&
	      wc[0].status == IBV_WC_WR_FLUSH_ERR && wc[0].wr_id == 1);
	CHECK(post(&a, 9, IBV_WR_SEND, 0, 8, 0, 0, 0) == 0);
	CHECK(wait_cq(a.scq, wc, 1, 2) == 1 &&
	      wc[0].status == IBV_WC_WR_FLUSH_ERR && wc[0].wr_id == 9);
	at.qp_state = IBV_QPS_RESET;
	CHECK(ibv_modify_qp(a.qp, &at, IBV_QP_STATE) == 0);
	CHECK(to_init(a.qp, 0) == 0);
	freepeer(&a);
}

/* ---- the data path: what the completions say ---- */
static void test_data(void)
{
	struct peer a, b;
	struct ibv_wc wc[8];
	const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
	                IBV_ACCESS_REMOTE_READ;
	mkpeer(&a, 1 << 20, 16, 16, acc);
	mkpeer(&b, 1 << 20, 16, 16, acc);
	connect2(&a, &b, &defaults, &defaults);
	for (int i = 0; i < 1 << 20; i++)
		a.buf[i] = (char)(i * 7 + 3);

	/* SEND with immediate */
	CHECK(post_recv(&b, 11, 0, 4096) == 0);
	CHECK(post(&a, 21, IBV_WR_SEND_WITH_IMM, 0, 100, 0, 0,
	           IBV_SEND_SIGNALED) == 0);
	CHECK(wait_cq(b.rcq, wc, 1, 5) == 1);
	CHECK(wc[0].status == IBV_WC_SUCCESS && wc[0].wr_id == 11 &&
	      wc[0].opcode == IBV_WC_RECV && wc[0].byte_len == 100 &&
	      (wc[0].wc_flags & IBV_WC_WITH_IMM) &&
	      wc[0].imm_data == htobe32(0xabcd1234) &&
	      wc[0].qp_num == b.qp->qp_num && wc[0].src_qp == a.qp->qp_num);
	CHECK(!memcmp(a.buf, b.buf, 100));
	CHECK(wait_cq(a.scq, wc, 1, 5) == 1);
	CHECK(wc[0].status == IBV_WC_SUCCESS && wc[0].wr_id == 21 &&
	      wc[0].opcode == IBV_WC_SEND && wc[0].qp_num == a.qp->qp_num);

	/* an unsignaled 1 MiB WRITE, then a signaled WRITE with immediate:
	 * one send completion, one receive completion, data in place */
	memset(b.buf, 0, 1 << 20);
	CHECK(post_recv(&b, 12, 0, 0) == 0);
	CHECK(post(&a, 22, IBV_WR_RDMA_WRITE, 0, 1 << 20, (uintptr_t)b.buf,
	           b.mr->rkey, 0) == 0);
	CHECK(post(&a, 23, IBV_WR_RDMA_WRITE_WITH_IMM, 0, 512, (uintptr_t)b.buf,
	           b.mr->rkey, IBV_SEND_SIGNALED) == 0);
	CHECK(wait_cq(a.scq, wc, 2, 5) == 1 && wc[0].wr_id == 23 &&
	      wc[0].status == IBV_WC_SUCCESS &&
	      wc[0].opcode == IBV_WC_RDMA_WRITE);
	CHECK(wait_cq(b.rcq, wc, 1, 5) == 1 && wc[0].wr_id == 12 &&
	      wc[0].opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
	      wc[0].byte_len == 512 && (wc[0].wc_flags & IBV_WC_WITH_IMM) &&
	      wc[0].imm_data == htobe32(0xabcd1234));
	CHECK(!memcmp(a.buf, b.buf, 1 << 20));

	/* READ 64 KiB back into a's upper half */
	CHECK(post(&a, 24, IBV_WR_RDMA_READ, 512 << 10, 65536,
	           (uintptr_t)b.buf + 4096, b.mr->rkey,
	           IBV_SEND_SIGNALED) == 0);
	CHECK(wait_cq(a.scq, wc, 1, 5) == 1 && wc[0].wr_id == 24 &&
	      wc[0].status == IBV_WC_SUCCESS &&
	      wc[0].opcode == IBV_WC_RDMA_READ && wc[0].byte_len == 65536);
	CHECK(!memcmp(a.buf + (512 << 10), b.buf + 4096, 65536));

	/* INLINE from a buffer in no MR; zero-length SEND */
	{
		char msg[48] = "inline data is copied at post time";
		struct ibv_sge s = { .addr = (uintptr_t)msg,
			             .length = sizeof(msg) };
		struct ibv_send_wr w = { .wr_id = 25,
			                 .sg_list = &s,
			                 .num_sge = 1,
			                 .opcode = IBV_WR_SEND,
			                 .send_flags = IBV_SEND_INLINE |
			                               IBV_SEND_SIGNALED },
		                   *bad;
		CHECK(post_recv(&b, 13, 8192, 4096) == 0);
		CHECK(ibv_post_send(a.qp, &w, &bad) == 0);
		memset(msg, 0, sizeof(msg));
		CHECK(wait_cq(b.rcq, wc, 1, 5) == 1 && wc[0].byte_len == 48 &&
		      !strcmp(b.buf + 8192,
		              "inline data is copied at post time"));
		CHECK(wait_cq(a.scq, wc, 1, 5) == 1 &&
		      wc[0].status == IBV_WC_SUCCESS);
		s.length = 65; /* over max_inline_data (64): ENOMEM */
		CHECK(ibv_post_send(a.qp, &w, &bad) == ENOMEM && bad == &w);
		CHECK(post_recv(&b, 14, 0, 16) == 0);
		CHECK(post(&a, 26, IBV_WR_SEND, 0, 0, 0, 0,
		           IBV_SEND_SIGNALED) == 0);
		CHECK(wait_cq(b.rcq, wc, 1, 5) == 1 && wc[0].byte_len == 0 &&
		      wc[0].status == IBV_WC_SUCCESS);
		CHECK(wait_cq(a.scq, wc, 1, 5) == 1);
	}
	/* a receive posted after the send arrived (receiver not ready, RNR
	 * retry 7 = for ever): delivered when it comes */
	CHECK(post(&a, 27, IBV_WR_SEND, 0, 256, 0, 0, IBV_SEND_SIGNALED) == 0);
	CHECK(wait_cq(a.scq, wc, 1, 0.3) == 0);
	CHECK(post_recv(&b, 15, 0, 4096) == 0);
	CHECK(wait_cq(b.rcq, wc, 1, 5) == 1 && wc[0].wr_id == 15 &&
	      wc[0].byte_len == 256);
	CHECK(wait_cq(a.scq, wc, 1, 5) == 1 && wc[0].wr_id == 27 &&
	      wc[0].status == IBV_WC_SUCCESS);
	freepeer(&a);
	freepeer(&b);
}

/* A QP with unsignaled work: slots come back only when a signaled
 * completion after them is polled (ENOMEM before), as with mlx5. */
static void test_queues(void)
{
	struct peer a, b;
	struct ibv_wc wc[8];
	struct ibv_send_wr w[6], *bad;
	struct ibv_sge s = { 0 };
	const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	mkpeer(&a, 4096, 4, 2, acc);
	mkpeer(&b, 4096, 4, 2, acc);
	connect2(&a, &b, &defaults, &defaults);
	s.addr = (uintptr_t)a.buf;
	s.length = 8;
	s.lkey = a.mr->lkey;
	memset(w, 0, sizeof(w));
	for (int i = 0; i < 6; i++) {
		w[i].wr_id = (uint64_t)i;
		w[i].sg_list = &s;
		w[i].num_sge = 1;
		w[i].opcode = IBV_WR_RDMA_WRITE;
		w[i].wr.rdma.remote_addr = (uintptr_t)b.buf;
		w[i].wr.rdma.rkey = b.mr->rkey;
		w[i].next = i < 5 ? &w[i + 1] : NULL;
	}
	CHECK(ibv_post_send(a.qp, w, &bad) == ENOMEM && bad == &w[4]);
	usleep(200000);
	w[3].next = NULL;
	CHECK(ibv_post_send(a.qp, &w[4], &bad) == ENOMEM); /* not polled */
	CHECK(post_recv(&b, 1, 0, 8) == 0 && post_recv(&b, 2, 0, 8) == 0);
	CHECK(post_recv(&b, 3, 0, 8) == ENOMEM); /* max_recv_wr 2 */
	/* destroying what is in use */
	CHECK(ibv_destroy_cq(a.scq) == EBUSY);
	CHECK(ibv_dealloc_pd(pd) == EBUSY);
	freepeer(&a);
	freepeer(&b);
	(void)wc;
}

/* ---- error completions ---- */
static void expect_send_error(struct peer *a, enum ibv_wc_status want,
                              double min_s, double max_s, const char *what)
{
	struct ibv_wc wc[4];
	double t0 = now_s(), dt;
	int n = wait_cq(a->scq, wc, 1, max_s + 2);
	dt = now_s() - t0;
	CHECK(n == 1);
	if (n != 1)
		return;
	if (wc[0].status != want || dt < min_s || dt > max_s)
		fprintf(stderr,
		        "%s: got '%s' after %.2f s, want '%s' in "
		        "[%.2f, %.2f] s\n",
		        what, ibv_wc_status_str(wc[0].status), dt,
		        ibv_wc_status_str(want), min_s, max_s);
	CHECK(wc[0].status == want);
	CHECK(dt >= min_s && dt <= max_s);
	CHECK(qp_state(a->qp) == IBV_QPS_ERR);
	/* what is posted now is flushed */
	CHECK(post(a, 99, IBV_WR_SEND, 0, 8, 0, 0, 0) == 0);
	CHECK(wait_cq(a->scq, wc, 1, 2) == 1 && wc[0].wr_id == 99 &&
	      wc[0].status == IBV_WC_WR_FLUSH_ERR);
}

static void test_access_errors(void)
{
	const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
	                IBV_ACCESS_REMOTE_READ;
	struct ibv_wc wc[4];
	struct peer a, b;
	enum ibv_event_type ev;
	struct conn_opts o = defaults;

	/* a WRITE past the end of the region */
	mkpeer(&a, 8192, 8, 8, acc);
	mkpeer(&b, 8192, 8, 8, acc);
	connect2(&a, &b, &defaults, &defaults);
	CHECK(post(&a, 1, IBV_WR_RDMA_WRITE, 0, 4096,
	           (uintptr_t)b.buf + 8192 - 100, b.mr->rkey, 0) == 0);
	expect_send_error(&a, IBV_WC_REM_ACCESS_ERR, 0, 1, "write past end");
	CHECK(async_event(&ev, 2) == 0 && ev == IBV_EVENT_QP_ACCESS_ERR);
	CHECK(qp_state(b.qp) == IBV_QPS_ERR); /* the responder too */
	freepeer(&a);
	freepeer(&b);

	/* a wrong rkey */
	mkpeer(&a, 8192, 8, 8, acc);
	mkpeer(&b, 8192, 8, 8, acc);
	connect2(&a, &b, &defaults, &defaults);
	CHECK(post(&a, 1, IBV_WR_RDMA_WRITE, 0, 64, (uintptr_t)b.buf,
	           b.mr->rkey ^ 0x100, IBV_SEND_SIGNALED) == 0);
	expect_send_error(&a, IBV_WC_REM_ACCESS_ERR, 0, 1, "wrong rkey");
	drain_async();
	freepeer(&a);
	freepeer(&b);

	/* a region registered without remote write; a READ from a region
	 * without remote read */
	mkpeer(&a, 8192, 8, 8, acc);
	mkpeer(&b, 8192, 8, 8, IBV_ACCESS_LOCAL_WRITE);
	connect2(&a, &b, &defaults, &defaults);
	CHECK(post(&a, 1, IBV_WR_RDMA_WRITE, 0, 64, (uintptr_t)b.buf,
	           b.mr->rkey, IBV_SEND_SIGNALED) == 0);
	expect_send_error(&a, IBV_WC_REM_ACCESS_ERR, 0, 1, "no remote write");
	drain_async();
	freepeer(&a);
	freepeer(&b);
	mkpeer(&a, 8192, 8, 8, acc);
	mkpeer(&b, 8192, 8, 8,
	       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	connect2(&a, &b, &defaults, &defaults);
	CHECK(post(&a, 1, IBV_WR_RDMA_READ, 0, 64, (uintptr_t)b.buf, b.mr->rkey,
	           IBV_SEND_SIGNALED) == 0);
	expect_send_error(&a, IBV_WC_REM_ACCESS_ERR, 0, 1, "no remote read");
	drain_async();
	freepeer(&a);
	freepeer(&b);

	/* the responder QP does not allow remote writes */
	mkpeer(&a, 8192, 8, 8, acc);
	mkpeer(&b, 8192, 8, 8, acc);
	o.access = IBV_ACCESS_REMOTE_READ;
	connect2(&a, &b, &defaults, &o);
	CHECK(post(&a, 1, IBV_WR_RDMA_WRITE, 0, 64, (uintptr_t)b.buf,
	           b.mr->rkey, IBV_SEND_SIGNALED) == 0);
	expect_send_error(&a, IBV_WC_REM_INV_REQ_ERR, 0, 1,
	                  "QP without remote write");
	freepeer(&a);
	freepeer(&b);

	/* a receive buffer too small: local length error at the receiver,
	 * remote invalid request at the sender */
	mkpeer(&a, 8192, 8, 8, acc);
	mkpeer(&b, 8192, 8, 8, acc);
	connect2(&a, &b, &defaults, &defaults);
	CHECK(post_recv(&b, 5, 0, 100) == 0);
	CHECK(post(&a, 1, IBV_WR_SEND, 0, 200, 0, 0, IBV_SEND_SIGNALED) == 0);
	expect_send_error(&a, IBV_WC_REM_INV_REQ_ERR, 0, 1, "short receive");
	CHECK(wait_cq(b.rcq, wc, 1, 2) == 1 && wc[0].wr_id == 5 &&
	      wc[0].status == IBV_WC_LOC_LEN_ERR);
	freepeer(&a);
	freepeer(&b);

	/* a local key that does not cover the buffer */
	mkpeer(&a, 8192, 8, 8, acc);
	mkpeer(&b, 8192, 8, 8, acc);
	connect2(&a, &b, &defaults, &defaults);
	CHECK(post(&a, 1, IBV_WR_SEND, 4096, 8192, 0, 0, 0) == 0);
	expect_send_error(&a, IBV_WC_LOC_PROT_ERR, 0, 1, "local key");
	freepeer(&a);
	freepeer(&b);

	/* path MTU 4096 against a responder at 1024: a 2 KiB packet is an
	 * invalid request (use the smaller of both ports' MTUs) */
	if (port.active_mtu >= IBV_MTU_4096) {
		struct conn_opts big = defaults;
		big.mtu = IBV_MTU_4096;
		mkpeer(&a, 8192, 8, 8, acc);
		mkpeer(&b, 8192, 8, 8, acc);
		connect2(&a, &b, &big, &defaults);
		CHECK(post_recv(&b, 5, 0, 8192) == 0);
		CHECK(post(&a, 1, IBV_WR_SEND, 0, 2048, 0, 0,
		           IBV_SEND_SIGNALED) == 0);
		expect_send_error(&a, IBV_WC_REM_INV_REQ_ERR, 0, 1,
		                  "MTU mismatch");
		freepeer(&a);
		freepeer(&b);
	}
}

/* Nothing comes back: retry exceeded, within the deadline. */
static void test_timeouts(void)
{
	const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	struct conn_opts o = defaults;
	struct peer a, b;
	struct ibv_wc wc[2];

	/* no such QP at the destination */
	mkpeer(&a, 8192, 8, 8, acc);
	CHECK(bring_up(a.qp, a.qp->qp_num + 100, &defaults) == 0);
	CHECK(post(&a, 1, IBV_WR_SEND, 0, 64, 0, 0, IBV_SEND_SIGNALED) == 0);
	expect_send_error(&a, IBV_WC_RETRY_EXC_ERR, 0.25, 1.6, "no such QP");
	freepeer(&a);

	/* PSNs that do not match */
	mkpeer(&a, 8192, 8, 8, acc);
	mkpeer(&b, 8192, 8, 8, acc);
	o.rq_psn = 1000;
	connect2(&a, &b, &defaults, &o);
	CHECK(post_recv(&b, 5, 0, 100) == 0);
	CHECK(post(&a, 1, IBV_WR_SEND, 0, 64, 0, 0, IBV_SEND_SIGNALED) == 0);
	expect_send_error(&a, IBV_WC_RETRY_EXC_ERR, 0.25, 1.6, "PSN");
	CHECK(wait_cq(b.rcq, wc, 1, 0.1) == 0); /* nothing delivered */
	freepeer(&a);
	freepeer(&b);

	/* no receive, RNR retry 0: RNR retry exceeded */
	mkpeer(&a, 8192, 8, 8, acc);
	mkpeer(&b, 8192, 8, 8, acc);
	o = defaults;
	o.rnr_retry = 0;
	connect2(&a, &b, &o, &defaults);
	CHECK(post(&a, 1, IBV_WR_SEND, 0, 64, 0, 0, IBV_SEND_SIGNALED) == 0);
	expect_send_error(&a, IBV_WC_RNR_RETRY_EXC_ERR, 0.25, 1.6, "RNR");
	freepeer(&a);
	freepeer(&b);
}

/* A peer process that goes away.  Round 0: the child's QP is alive and
 * answers (a WRITE with rkey 0 gets a remote access error); round 1: the
 * child is killed, and a send gets retry exceeded within the deadline. */
static void test_peer_gone(int to_child[2], int from_child[2], pid_t child)
{
	const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	struct ibv_wc wc;
	struct peer a;
	uint32_t qpn = 0, ready;
	int st;
	for (int round = 0; round < 2; round++) {
		mkpeer(&a, 8192, 8, 8, acc);
		CHECK(read(from_child[0], &qpn, 4) == 4);
		CHECK(write(to_child[1], &a.qp->qp_num, 4) == 4);
		CHECK(bring_up(a.qp, qpn, &defaults) == 0);
		CHECK(read(from_child[0], &ready, 4) == 4);
		if (round == 0) {
			CHECK(post(&a, 1, IBV_WR_RDMA_WRITE, 0, 64, 0, 0,
			           IBV_SEND_SIGNALED) == 0);
			CHECK(wait_cq(a.scq, &wc, 1, 2) == 1 &&
			      wc.status == IBV_WC_REM_ACCESS_ERR);
			CHECK(write(to_child[1], &ready, 4) == 4);
		} else {
			kill(child, SIGKILL);
			waitpid(child, &st, 0);
			CHECK(post(&a, 2, IBV_WR_SEND, 0, 64, 0, 0,
			           IBV_SEND_SIGNALED) == 0);
			expect_send_error(&a, IBV_WC_RETRY_EXC_ERR, 0.25, 1.6,
			                  "peer gone");
		}
		freepeer(&a);
	}
}

static void child_main(int to_child[2], int from_child[2])
{
	const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	struct peer b;
	uint32_t qpn;
	prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the test */
	open_dev();
	for (int round = 0; round < 2; round++) {
		mkpeer(&b, 8192, 8, 8, acc);
		if (write(from_child[1], &b.qp->qp_num, 4) != 4 ||
		    read(to_child[0], &qpn, 4) != 4 ||
		    bring_up(b.qp, qpn, &defaults) ||
		    write(from_child[1], &qpn, 4) != 4)
			_exit(1);
		if (round == 1)
			pause(); /* until killed */
		if (read(to_child[0], &qpn, 4) != 4)
			_exit(1);
		freepeer(&b);
	}
	_exit(0);
}

static void test_events(void)
{
	const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq *cq, *ev_cq, *small;
	void *cq_ctx;
	struct peer a, b;
	struct ibv_qp_init_attr qa = { 0 };
	enum ibv_event_type t;
	struct ibv_wc wc[4];
	int marker = 42;
	CHECK(ch != NULL);
	cq = ibv_create_cq(ctx, 16, &marker, ch, 0);
	mkpeer(&a, 8192, 8, 8, acc);
	mkpeer(&b, 8192, 8, 8, acc);
	/* b's receives complete into the channel's CQ */
	ibv_destroy_qp(b.qp);
	qa.send_cq = b.scq;
	qa.recv_cq = cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = qa.cap.max_recv_wr = 8;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	b.qp = ibv_create_qp(pd, &qa);
	connect2(&a, &b, &defaults, &defaults);
	CHECK(ibv_req_notify_cq(cq, 0) == 0);
	CHECK(post_recv(&b, 1, 0, 64) == 0);
	CHECK(post(&a, 1, IBV_WR_SEND, 0, 64, 0, 0, IBV_SEND_SIGNALED) == 0);
	{
		struct pollfd p = { .fd = ch->fd, .events = POLLIN };
		CHECK(poll(&p, 1, 5000) == 1);
	}
	CHECK(ibv_get_cq_event(ch, &ev_cq, &cq_ctx) == 0 && ev_cq == cq &&
	      cq_ctx == &marker);
	ibv_ack_cq_events(ev_cq, 1);
	CHECK(wait_cq(cq, wc, 1, 2) == 1 && wc[0].status == IBV_WC_SUCCESS);
	CHECK(ibv_destroy_comp_channel(ch) == EBUSY); /* a CQ uses it */
	/* a CQ too small: IBV_EVENT_CQ_ERR */
	freepeer(&a);
	ibv_destroy_qp(b.qp);
	small = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	qa.send_cq = small;
	qa.recv_cq = b.rcq;
	b.qp = ibv_create_qp(pd, &qa);
	mkpeer(&a, 8192, 8, 8, acc);
	connect2(&b, &a, &defaults, &defaults);
	for (int i = 0; i < 3; i++)
		CHECK(post(&b, (uint64_t)i, IBV_WR_RDMA_WRITE, 0, 8,
		           (uintptr_t)a.buf, a.mr->rkey,
		           IBV_SEND_SIGNALED) == 0);
	CHECK(async_event(&t, 3) == 0 && t == IBV_EVENT_CQ_ERR);
	ibv_destroy_qp(b.qp);
	ibv_destroy_cq(small);
	b.qp = NULL;
	ibv_destroy_cq(b.scq);
	ibv_destroy_cq(b.rcq);
	ibv_dereg_mr(b.mr);
	free(b.buf);
	freepeer(&a);
	ibv_destroy_cq(cq);
	CHECK(ibv_destroy_comp_channel(ch) == 0);
}

static void test_memory(void)
{
	char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_mr *mr;
	errno = 0;
	CHECK(ibv_reg_mr(pd, p, 4096, IBV_ACCESS_REMOTE_WRITE) == NULL &&
	      errno == EINVAL); /* remote write needs local write */
	munmap(p + 4096, 4096);
	errno = 0;
	CHECK(ibv_reg_mr(pd, p, 8192, IBV_ACCESS_LOCAL_WRITE) == NULL &&
	      errno == EFAULT); /* half of it is not mapped */
	mr = ibv_reg_mr(pd, p, 4096, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr != NULL && mr->lkey == mr->rkey && mr->length == 4096);
	CHECK(ibv_dealloc_pd(pd) == EBUSY);
	ibv_dereg_mr(mr);
	munmap(p, 4096);
}

static void test_iwarp(void)
{
	struct ibv_device_attr da;
	struct peer a;
	struct ibv_qp_init_attr_ex x = { 0 };
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	CHECK(ibv_query_device(ctx, &da) == 0);
	CHECK(ctx->device->node_type == IBV_NODE_RNIC &&
	      ctx->device->transport_type == IBV_TRANSPORT_IWARP);
	CHECK(port.link_layer == IBV_LINK_LAYER_ETHERNET);
	mkpeer(&a, 8192, 8, 8, IBV_ACCESS_LOCAL_WRITE);
	CHECK(to_init(a.qp, IBV_ACCESS_REMOTE_WRITE) == 0);
	CHECK(to_rtr(a.qp, a.qp->qp_num, &defaults) == EINVAL); /* rdma_cm */
	freepeer(&a);
	x.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	x.pd = pd;
	x.send_cq = x.recv_cq = cq;
	x.qp_type = IBV_QPT_RC;
	x.cap.max_send_wr = x.cap.max_recv_wr = 4;
	x.cap.max_send_sge = x.cap.max_recv_sge = 1;
	x.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
	errno = 0;
	CHECK(ibv_create_qp_ex(ctx, &x) == NULL && errno == EOPNOTSUPP);
	ibv_destroy_cq(cq);
}

/* COLLBENCH_EMU_FAULTS set by main before the device was opened. */
static void test_faults(void)
{
	const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	struct peer a, b;
	struct ibv_wc wc[8];
	enum ibv_event_type t;
	struct ibv_port_attr pa;
	char path[512], buf[64];
	mkpeer(&a, 8192, 16, 16, acc);
	mkpeer(&b, 8192, 16, 16, acc);
	connect2(&a, &b, &defaults, &defaults);
	/* messages 1 and 2 are fine, 3 has its rkey corrupted */
	for (int i = 1; i <= 3; i++)
		CHECK(post(&a, (uint64_t)i, IBV_WR_RDMA_WRITE, 0, 64,
		           (uintptr_t)b.buf, b.mr->rkey,
		           IBV_SEND_SIGNALED) == 0);
	CHECK(wait_cq(a.scq, wc, 3, 3) == 3);
	CHECK(wc[0].status == IBV_WC_SUCCESS &&
	      wc[1].status == IBV_WC_SUCCESS &&
	      wc[2].status == IBV_WC_REM_ACCESS_ERR && wc[2].wr_id == 3);
	drain_async();
	freepeer(&a);
	freepeer(&b);
	/* message 5 kills its QP: IBV_EVENT_QP_FATAL, work flushed */
	mkpeer(&a, 8192, 16, 16, acc);
	mkpeer(&b, 8192, 16, 16, acc);
	connect2(&a, &b, &defaults, &defaults);
	CHECK(post(&a, 4, IBV_WR_RDMA_WRITE, 0, 64, (uintptr_t)b.buf,
	           b.mr->rkey, IBV_SEND_SIGNALED) == 0);
	CHECK(wait_cq(a.scq, wc, 1, 3) == 1 && wc[0].status == IBV_WC_SUCCESS);
	CHECK(post(&a, 5, IBV_WR_RDMA_WRITE, 0, 64, (uintptr_t)b.buf,
	           b.mr->rkey, IBV_SEND_SIGNALED) == 0);
	CHECK(wait_cq(a.scq, wc, 1, 3) == 1 &&
	      wc[0].status == IBV_WC_WR_FLUSH_ERR);
	CHECK(async_event(&t, 2) == 0 && t == IBV_EVENT_QP_FATAL);
	CHECK(qp_state(a.qp) == IBV_QPS_ERR);
	/* message 6: the port goes down (and comes back 1.5 s later) */
	freepeer(&a);
	mkpeer(&a, 8192, 16, 16, acc);
	ibv_destroy_qp(b.qp);
	{
		struct ibv_qp_init_attr qa = { .send_cq = b.scq,
			                       .recv_cq = b.rcq,
			                       .qp_type = IBV_QPT_RC };
		qa.cap.max_send_wr = qa.cap.max_recv_wr = 4;
		qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
		b.qp = ibv_create_qp(pd, &qa);
	}
	connect2(&a, &b, &defaults, &defaults);
	CHECK(post(&a, 6, IBV_WR_RDMA_WRITE, 0, 64, (uintptr_t)b.buf,
	           b.mr->rkey, IBV_SEND_SIGNALED) == 0);
	CHECK(ibv_query_port(ctx, 1, &pa) == 0 && pa.state == IBV_PORT_DOWN);
	CHECK(async_event(&t, 2) == 0 && t == IBV_EVENT_PORT_ERR);
	expect_send_error(&a, IBV_WC_RETRY_EXC_ERR, 0, 1.6, "port down");
	CHECK(async_event(&t, 3) == 0 && t == IBV_EVENT_PORT_ACTIVE);
	CHECK(ibv_query_port(ctx, 1, &pa) == 0 && pa.state == IBV_PORT_ACTIVE);
	freepeer(&a);
	freepeer(&b);
	/* the counters the fault raised, and link_downed, in the sysfs */
	snprintf(path, sizeof(path), "%s/ports/1/counters",
	         ctx->device->ibdev_path);
	CHECK(ibv_read_sysfs_file(path, "symbol_error", buf, sizeof(buf)) > 0 &&
	      !strcmp(buf, "3"));
	CHECK(ibv_read_sysfs_file(path, "link_downed", buf, sizeof(buf)) > 0 &&
	      !strcmp(buf, "1"));
	CHECK(ibv_read_sysfs_file(path, "port_xmit_data", buf, sizeof(buf)) >
	              0 &&
	      atol(buf) >= 5 * 64 / 4);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "basic";
	int to_child[2], from_child[2];
	pid_t child = -1;
	char state[] = "/tmp/cbemu-test-XXXXXX", rm[64];
	int rc;
	/* a fabric of its own: counters start at zero */
	if (!mkdtemp(state))
		return 1;
	setenv("COLLBENCH_EMU_STATE", state, 1);
	setenv("COLLBENCH_EMU_RETRY_FLOOR_MS", "300", 0);
	setenv("COLLBENCH_EMU_RETRY_CAP_MS", "1500", 0);
	iwarp = !strcmp(mode, "iwarp");
	if (!strcmp(mode, "faults"))
		setenv("COLLBENCH_EMU_FAULTS",
		       "rkey:at_msg=3;qp_error:at_msg=5;"
		       "port_down:dev=cbemu0,at_msg=6,for_ms=1500;"
		       "counters:symbol_error=3",
		       1);
	if (!strcmp(mode, "basic")) {
		/* the peer that goes away: forked before any thread */
		if (pipe(to_child) || pipe(from_child))
			return 1;
		child = fork();
		if (child == 0)
			child_main(to_child, from_child);
	}
	open_dev();
	if (!strcmp(mode, "basic")) {
		test_states();
		test_data();
		test_queues();
		test_memory();
		test_access_errors();
		test_timeouts();
		test_events();
		test_peer_gone(to_child, from_child, child);
	} else if (iwarp) {
		test_iwarp();
	} else if (!strcmp(mode, "faults")) {
		test_faults();
	} else {
		fprintf(stderr, "usage: test_verbs basic|iwarp|faults\n");
		return 2;
	}
	CHECK(ibv_dealloc_pd(pd) == 0);
	CHECK(ibv_close_device(ctx) == 0);
	rc = check_result(mode);
	snprintf(rm, sizeof(rm), "rm -rf %s", state);
	if (system(rm)) {
		/* a leftover directory in /tmp is harmless */
	}
	return rc;
}
