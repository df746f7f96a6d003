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
#include "test_verbs.h"

#include <sys/mman.h>

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

	/* a sends before b is ready (b in INIT, as with rdma_cm's accept
	 * racing the first message): b drops it, a retries until b reaches
	 * RTR, then it is delivered once */
	mkpeer(&a, 8192, 16, 16, acc);
	mkpeer(&b, 8192, 16, 16, acc);
	CHECK(bring_up(a.qp, b.qp->qp_num, &defaults) == 0);
	CHECK(to_init(b.qp, acc & ~IBV_ACCESS_LOCAL_WRITE) == 0);
	CHECK(post_recv(&b, 16, 0, 4096) == 0);
	CHECK(post(&a, 28, IBV_WR_SEND, 0, 300, 0, 0, IBV_SEND_SIGNALED) == 0);
	CHECK(post(&a, 29, IBV_WR_RDMA_WRITE, 0, 64, (uintptr_t)b.buf + 4096,
	           b.mr->rkey, IBV_SEND_SIGNALED) == 0);
	usleep(150000);
	CHECK(wait_cq(a.scq, wc, 1, 0.01) == 0);
	CHECK(to_rtr(b.qp, a.qp->qp_num, &defaults) == 0);
	CHECK(wait_cq(b.rcq, wc, 1, 5) == 1 && wc[0].wr_id == 16 &&
	      wc[0].byte_len == 300 && wc[0].status == IBV_WC_SUCCESS);
	CHECK(wait_cq(a.scq, wc, 2, 5) == 2 && wc[0].wr_id == 28 &&
	      wc[1].wr_id == 29 && wc[1].status == IBV_WC_SUCCESS);
	CHECK(wait_cq(b.rcq, wc, 1, 0.2) == 0); /* delivered once */
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
	errno = 0; /* device memory cannot be reached: refused, not a crash */
	CHECK(ibv_reg_dmabuf_mr(pd, 0, 4096, 0, -1, IBV_ACCESS_LOCAL_WRITE) ==
	              NULL &&
	      errno == EOPNOTSUPP);
}

void tv_check(int ok, const char *file, int line, const char *what)
{
	check_count++;
	if (!ok) {
		check_failures++;
		fprintf(stderr, "%s:%d: CHECK failed: %s\n", file, line, what);
	}
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
