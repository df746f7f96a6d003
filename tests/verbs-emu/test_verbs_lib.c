/* SPDX-License-Identifier: MIT */
/*
 * tests/verbs-emu/test_verbs_lib.c - the test's helpers: a QP pair in this
 * process, connecting it as any program does, waiting for completions
 * and events with a deadline.
 */
#include "test_verbs.h"

/* not in the public headers (rdma-core's driver.h) */
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf,
                        size_t size);

struct ibv_context *ctx;
struct ibv_pd *pd;
struct ibv_port_attr port;
int gid_index = -1;
union ibv_gid gid;
bool roce, iwarp;

double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void open_dev(void)
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

void mkpeer(struct peer *p, size_t len, int swr, int rwr, int access)
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

void freepeer(struct peer *p)
{
	ibv_destroy_qp(p->qp);
	ibv_destroy_cq(p->scq);
	ibv_destroy_cq(p->rcq);
	ibv_dereg_mr(p->mr);
	free(p->buf);
}

const struct conn_opts defaults = {
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

void fill_ah(struct ibv_ah_attr *ah)
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

int to_init(struct ibv_qp *qp, int access)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT,
		                 .port_num = 1,
		                 .qp_access_flags = (unsigned)access };
	return ibv_modify_qp(qp, &a,
	                     IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
	                             IBV_QP_ACCESS_FLAGS);
}

int to_rtr(struct ibv_qp *qp, uint32_t dest, const struct conn_opts *o)
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

int to_rts(struct ibv_qp *qp, const struct conn_opts *o)
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

int bring_up(struct ibv_qp *qp, uint32_t dest, const struct conn_opts *o)
{
	int rc = to_init(qp, o->access);
	if (!rc)
		rc = to_rtr(qp, dest, o);
	if (!rc)
		rc = to_rts(qp, o);
	return rc;
}

/* a and b connected to each other; oa/ob: their options */
void connect2(struct peer *a, struct peer *b, const struct conn_opts *oa,
              const struct conn_opts *ob)
{
	CHECK(bring_up(a->qp, b->qp->qp_num, oa) == 0);
	CHECK(bring_up(b->qp, a->qp->qp_num, ob) == 0);
}

/* Poll until n completions or the deadline; returns how many. */
int wait_cq(struct ibv_cq *cq, struct ibv_wc *wc, int n, double sec)
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

int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr i;
	ibv_query_qp(qp, &a, IBV_QP_STATE, &i);
	return a.qp_state;
}

int post_recv(struct peer *p, uint64_t id, size_t off, uint32_t len)
{
	struct ibv_sge s = { .addr = (uintptr_t)p->buf + off,
		             .length = len,
		             .lkey = p->mr->lkey };
	struct ibv_recv_wr w = { .wr_id = id, .sg_list = &s, .num_sge = 1 },
	                   *bad;
	return ibv_post_recv(p->qp, &w, &bad);
}

int post(struct peer *p, uint64_t id, enum ibv_wr_opcode op, size_t off,
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

int async_event(enum ibv_event_type *type, double sec)
{
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event e;
	if (poll(&p, 1, (int)(sec * 1000)) != 1 || ibv_get_async_event(ctx, &e))
		return -1;
	*type = e.event_type;
	ibv_ack_async_event(&e);
	return 0;
}

void drain_async(void)
{
	enum ibv_event_type t;
	while (async_event(&t, 0.05) == 0)
		;
}
