/* SPDX-License-Identifier: MIT */
/*
 * tests/verbs-emu/test_verbs_err.c - the error completions the emulation
 * promises, each as a real adapter gives it (see test_verbs.c).
 */
#include "test_verbs.h"

#include <sys/prctl.h>

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

void test_access_errors(void)
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
void test_timeouts(void)
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
void test_peer_gone(int to_child[2], int from_child[2], pid_t child)
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

void child_main(int to_child[2], int from_child[2])
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

void test_events(void)
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

void test_iwarp(void)
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
void test_faults(void)
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
