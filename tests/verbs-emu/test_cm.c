/* SPDX-License-Identifier: MIT */
/*
 * tests/verbs-emu/test_cm.c - the librdmacm stand-in's checks, through
 * <rdma/rdma_cma.h> only: a listener and a connecting id in this process,
 * each with its own event channel, over 127.0.0.1 (loopback binds to the
 * first device, as the kernel's rdma_cm does).
 *
 * Connect and accept with private data (padded to 56 bytes on IB/RoCE,
 * exact on iWARP), data over the connected QPs, rejection with private
 * data, nobody listening, disconnection seen by both sides, a peer whose
 * id goes away, private data over the limit; on iWARP, immediate data
 * refused on a connected QP.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../unit/check.h"

static bool iwarp;
static int port;

/* The next event on ch within sec seconds, acknowledged; its type, or -1. */
static int next_event(struct rdma_event_channel *ch, double sec,
                      struct rdma_cm_event *copy, uint8_t *priv)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *e;
	int type;
	if (poll(&p, 1, (int)(sec * 1000)) != 1 || rdma_get_cm_event(ch, &e))
		return -1;
	type = e->event;
	if (copy)
		*copy = *e;
	if (priv && e->param.conn.private_data)
		memcpy(priv, e->param.conn.private_data,
		       e->param.conn.private_data_len);
	rdma_ack_cm_event(e);
	return type;
}

static struct sockaddr_in addr(int p)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
		                 .sin_port = htons((uint16_t)p) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

struct side {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	char buf[4096];
};

static void make_qp(struct side *s)
{
	struct ibv_qp_init_attr a = { 0 };
	s->pd = ibv_alloc_pd(s->id->verbs);
	s->cq = ibv_create_cq(s->id->verbs, 16, NULL, NULL, 0);
	s->mr = ibv_reg_mr(s->pd, s->buf, sizeof(s->buf),
	                   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	a.send_cq = a.recv_cq = s->cq;
	a.qp_type = IBV_QPT_RC;
	a.cap.max_send_wr = a.cap.max_recv_wr = 8;
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;
	CHECK(rdma_create_qp(s->id, s->pd, &a) == 0);
}

static void free_side(struct side *s)
{
	if (s->id && s->id->qp)
		rdma_destroy_qp(s->id);
	if (s->mr)
		ibv_dereg_mr(s->mr);
	if (s->cq)
		ibv_destroy_cq(s->cq);
	if (s->pd)
		ibv_dealloc_pd(s->pd);
	if (s->id)
		rdma_destroy_id(s->id);
	s->id = NULL;
	s->pd = NULL;
	s->cq = NULL;
	s->mr = NULL;
}

/* A listener on the next port; the client's id resolved to it. */
static void setup(struct side *srv, struct side *cli, struct rdma_cm_id **l)
{
	struct sockaddr_in a = addr(0);
	struct sockaddr_in dst;
	socklen_t len = sizeof(a);
	CHECK(rdma_create_id(srv->ch, l, NULL, RDMA_PS_TCP) == 0);
	CHECK(rdma_bind_addr(*l, (struct sockaddr *)&a) == 0);
	CHECK(rdma_listen(*l, 4) == 0);
	port = ntohs(rdma_get_src_port(*l));
	(void)len;
	CHECK(port > 0);
	dst = addr(port);
	CHECK(rdma_create_id(cli->ch, &cli->id, NULL, RDMA_PS_TCP) == 0);
	CHECK(rdma_resolve_addr(cli->id, NULL, (struct sockaddr *)&dst, 2000) ==
	      0);
	CHECK(next_event(cli->ch, 2, NULL, NULL) ==
	      RDMA_CM_EVENT_ADDR_RESOLVED);
	CHECK(cli->id->verbs != NULL &&
	      !strcmp(ibv_get_device_name(cli->id->verbs->device), "cbemu0"));
	CHECK(rdma_resolve_route(cli->id, 2000) == 0);
	CHECK(next_event(cli->ch, 2, NULL, NULL) ==
	      RDMA_CM_EVENT_ROUTE_RESOLVED);
}

static void test_connect(void)
{
	struct side srv = { 0 }, cli = { 0 };
	struct rdma_cm_id *l;
	struct rdma_cm_event ev;
	struct rdma_conn_param p = { 0 };
	uint8_t priv[256];
	char hello[20] = "connect, please";
	char welcome[8] = "welcome";
	struct ibv_wc wc;
	srv.ch = rdma_create_event_channel();
	cli.ch = rdma_create_event_channel();
	setup(&srv, &cli, &l);
	make_qp(&cli);
	p.private_data = hello;
	p.private_data_len = sizeof(hello);
	p.retry_count = 7;
	p.rnr_retry_count = 7;
	p.responder_resources = p.initiator_depth = 1;
	CHECK(rdma_connect(cli.id, &p) == 0);
	/* the private data is the caller's only during the call */
	memset(hello, 0xee, sizeof(hello));
	memset(priv, 0x55, sizeof(priv));
	CHECK(next_event(srv.ch, 3, &ev, priv) ==
	      RDMA_CM_EVENT_CONNECT_REQUEST);
	CHECK(ev.listen_id == l && ev.id != NULL && ev.id != l);
	CHECK(ev.param.conn.private_data_len == (iwarp ? sizeof(hello) : 56));
	CHECK(!memcmp(priv, "connect, please", 16));
	if (!iwarp)
		CHECK(priv[sizeof(hello)] == 0 && priv[55] == 0);
	CHECK(ev.param.conn.qp_num == cli.id->qp->qp_num);
	srv.id = ev.id;
	CHECK(srv.id->verbs != NULL);
	make_qp(&srv);
	{
		struct ibv_sge s = { .addr = (uintptr_t)srv.buf,
			             .length = 64,
			             .lkey = srv.mr->lkey };
		struct ibv_recv_wr r = { .wr_id = 1,
			                 .sg_list = &s,
			                 .num_sge = 1 },
		                   *bad;
		CHECK(ibv_post_recv(srv.id->qp, &r, &bad) == 0);
	}
	memset(&p, 0, sizeof(p));
	p.private_data = welcome;
	p.private_data_len = sizeof(welcome);
	p.rnr_retry_count = 7;
	CHECK(rdma_accept(srv.id, &p) == 0);
	memset(welcome, 0xee, sizeof(welcome));
	memset(priv, 0x55, sizeof(priv));
	CHECK(next_event(cli.ch, 3, &ev, priv) == RDMA_CM_EVENT_ESTABLISHED);
	CHECK(!memcmp(priv, "welcome", 8));
	CHECK(next_event(srv.ch, 3, NULL, NULL) == RDMA_CM_EVENT_ESTABLISHED);
	/* data over the connected QPs */
	{
		struct ibv_sge s = { .addr = (uintptr_t)cli.buf,
			             .length = 64,
			             .lkey = cli.mr->lkey };
		struct ibv_send_wr w = { .wr_id = 2,
			                 .sg_list = &s,
			                 .num_sge = 1,
			                 .opcode = IBV_WR_SEND,
			                 .send_flags = IBV_SEND_SIGNALED },
		                   *bad;
		int got = 0;
		time_t end = time(NULL) + 5;
		strcpy(cli.buf, "over the rdma_cm connection");
		CHECK(ibv_post_send(cli.id->qp, &w, &bad) == 0);
		while (got < 1 && time(NULL) < end)
			got += ibv_poll_cq(srv.cq, 1, &wc);
		CHECK(got == 1 && wc.status == IBV_WC_SUCCESS &&
		      !strcmp(srv.buf, "over the rdma_cm connection"));
		got = 0;
		while (got < 1 && time(NULL) < end)
			got += ibv_poll_cq(cli.cq, 1, &wc);
		CHECK(got == 1 && wc.status == IBV_WC_SUCCESS);
		if (iwarp) { /* RNICs carry no immediate data */
			w.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
			w.wr.rdma.remote_addr = (uintptr_t)srv.buf;
			w.wr.rdma.rkey = srv.mr->rkey;
			CHECK(ibv_post_send(cli.id->qp, &w, &bad) == EINVAL);
		}
	}
	/* the active side disconnects: both see DISCONNECTED, its QP is in
	 * ERR (SQD on iWARP) */
	CHECK(rdma_disconnect(cli.id) == 0);
	CHECK(next_event(srv.ch, 3, NULL, NULL) == RDMA_CM_EVENT_DISCONNECTED);
	CHECK(next_event(cli.ch, 3, NULL, NULL) == RDMA_CM_EVENT_DISCONNECTED);
	{
		struct ibv_qp_attr a;
		struct ibv_qp_init_attr i;
		ibv_query_qp(cli.id->qp, &a, IBV_QP_STATE, &i);
		CHECK(a.qp_state == (iwarp ? IBV_QPS_SQD : IBV_QPS_ERR));
	}
	free_side(&cli);
	free_side(&srv);
	rdma_destroy_id(l);
	rdma_destroy_event_channel(cli.ch);
	rdma_destroy_event_channel(srv.ch);
}

static void test_reject_and_gone(void)
{
	struct side srv = { 0 }, cli = { 0 };
	struct rdma_cm_id *l;
	struct rdma_cm_event ev;
	struct rdma_conn_param p = { 0 };
	uint8_t priv[600];
	char no[6] = "go way";
	srv.ch = rdma_create_event_channel();
	cli.ch = rdma_create_event_channel();

	/* rejected, with private data */
	setup(&srv, &cli, &l);
	make_qp(&cli);
	CHECK(rdma_connect(cli.id, &p) == 0);
	CHECK(next_event(srv.ch, 3, &ev, NULL) ==
	      RDMA_CM_EVENT_CONNECT_REQUEST);
	srv.id = ev.id;
	CHECK(rdma_reject(srv.id, no, sizeof(no)) == 0);
	CHECK(next_event(cli.ch, 3, &ev, priv) == RDMA_CM_EVENT_REJECTED);
	CHECK(ev.status == (iwarp ? -ECONNREFUSED : 28));
	CHECK(!memcmp(priv, no, sizeof(no)));
	CHECK(ev.param.conn.private_data_len == (iwarp ? sizeof(no) : 148));
	free_side(&cli);
	free_side(&srv);
	rdma_destroy_id(l);

	/* nobody listens there any more */
	{
		struct sockaddr_in dst = addr(port);
		CHECK(rdma_create_id(cli.ch, &cli.id, NULL, RDMA_PS_TCP) == 0);
		CHECK(rdma_resolve_addr(cli.id, NULL, (struct sockaddr *)&dst,
		                        2000) == 0);
		CHECK(next_event(cli.ch, 2, NULL, NULL) ==
		      RDMA_CM_EVENT_ADDR_RESOLVED);
		CHECK(rdma_resolve_route(cli.id, 2000) == 0);
		CHECK(next_event(cli.ch, 2, NULL, NULL) ==
		      RDMA_CM_EVENT_ROUTE_RESOLVED);
		make_qp(&cli);
		CHECK(rdma_connect(cli.id, &p) == 0);
		CHECK(next_event(cli.ch, 3, &ev, NULL) ==
		      RDMA_CM_EVENT_REJECTED);
		CHECK(ev.status == (iwarp ? -ECONNREFUSED : 8));
		free_side(&cli);
	}

	/* private data over the limit (56 bytes on IB/RoCE; iWARP's 512
	 * cannot be passed: private_data_len is 8 bits) */
	setup(&srv, &cli, &l);
	if (!iwarp) {
		make_qp(&cli);
		p.private_data = priv;
		p.private_data_len = 57;
		errno = 0;
		CHECK(rdma_connect(cli.id, &p) == -1 && errno == EINVAL);
	}
	free_side(&cli);

	/* a peer whose id goes away: DISCONNECTED */
	rdma_destroy_id(l);
	setup(&srv, &cli, &l);
	make_qp(&cli);
	memset(&p, 0, sizeof(p));
	CHECK(rdma_connect(cli.id, &p) == 0);
	CHECK(next_event(srv.ch, 3, &ev, NULL) ==
	      RDMA_CM_EVENT_CONNECT_REQUEST);
	srv.id = ev.id;
	make_qp(&srv);
	CHECK(rdma_accept(srv.id, &p) == 0);
	CHECK(next_event(cli.ch, 3, NULL, NULL) == RDMA_CM_EVENT_ESTABLISHED);
	CHECK(next_event(srv.ch, 3, NULL, NULL) == RDMA_CM_EVENT_ESTABLISHED);
	free_side(&srv);
	CHECK(next_event(cli.ch, 3, NULL, NULL) == RDMA_CM_EVENT_DISCONNECTED);
	free_side(&cli);
	rdma_destroy_id(l);
	rdma_destroy_event_channel(cli.ch);
	rdma_destroy_event_channel(srv.ch);
}

/* rdma_connect before the listener is there (tried again for 200 ms): the
 * REQ leaves after the call returned, with the private data as it was
 * during the call, not as the caller's buffer is by then. */
static void test_late_listener(void)
{
	struct side srv = { 0 }, cli = { 0 };
	struct rdma_cm_id *l;
	struct rdma_cm_event ev;
	struct rdma_conn_param p = { 0 };
	struct sockaddr_in a = addr(0), dst;
	uint8_t priv[256];
	char hello[16] = "late listener";
	srv.ch = rdma_create_event_channel();
	cli.ch = rdma_create_event_channel();
	CHECK(rdma_create_id(srv.ch, &l, NULL, RDMA_PS_TCP) == 0);
	CHECK(rdma_bind_addr(l, (struct sockaddr *)&a) == 0);
	CHECK(rdma_listen(l, 4) == 0); /* to learn a free port... */
	dst = addr(ntohs(rdma_get_src_port(l)));
	rdma_destroy_id(l); /* ...and leave it free for a while */
	CHECK(rdma_create_id(cli.ch, &cli.id, NULL, RDMA_PS_TCP) == 0);
	CHECK(rdma_resolve_addr(cli.id, NULL, (struct sockaddr *)&dst, 2000) ==
	      0);
	CHECK(next_event(cli.ch, 2, NULL, NULL) == RDMA_CM_EVENT_ADDR_RESOLVED);
	CHECK(rdma_resolve_route(cli.id, 2000) == 0);
	CHECK(next_event(cli.ch, 2, NULL, NULL) ==
	      RDMA_CM_EVENT_ROUTE_RESOLVED);
	make_qp(&cli);
	p.private_data = hello;
	p.private_data_len = sizeof(hello);
	CHECK(rdma_connect(cli.id, &p) == 0);
	memset(hello, 0xee, sizeof(hello));
	usleep(50000);
	a.sin_port = dst.sin_port;
	CHECK(rdma_create_id(srv.ch, &l, NULL, RDMA_PS_TCP) == 0);
	CHECK(rdma_bind_addr(l, (struct sockaddr *)&a) == 0);
	CHECK(rdma_listen(l, 4) == 0);
	memset(priv, 0x55, sizeof(priv));
	CHECK(next_event(srv.ch, 3, &ev, priv) ==
	      RDMA_CM_EVENT_CONNECT_REQUEST);
	CHECK(!memcmp(priv, "late listener", 14));
	srv.id = ev.id;
	CHECK(rdma_reject(srv.id, NULL, 0) == 0);
	CHECK(next_event(cli.ch, 3, NULL, NULL) == RDMA_CM_EVENT_REJECTED);
	free_side(&cli);
	free_side(&srv);
	rdma_destroy_id(l);
	rdma_destroy_event_channel(cli.ch);
	rdma_destroy_event_channel(srv.ch);
}

/* test_cm unreachable IP: rdma_connect to a host that drops everything
 * must end in UNREACHABLE within COLLBENCH_EMU_RETRY_CAP_MS (and a bit). */
static int unreachable(const char *ip)
{
	struct side cli = { 0 };
	struct sockaddr_in dst = addr(9);
	struct rdma_conn_param p = { .retry_count = 7 };
	struct rdma_cm_event ev;
	struct timespec t0, t1;
	double cap = atof(getenv("COLLBENCH_EMU_RETRY_CAP_MS") ?: "4000") / 1e3;
	double dt;
	int type;
	inet_pton(AF_INET, ip, &dst.sin_addr);
	cli.ch = rdma_create_event_channel();
	if (!cli.ch || rdma_create_id(cli.ch, &cli.id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(cli.id, NULL, (struct sockaddr *)&dst, 2000) ||
	    next_event(cli.ch, 2, NULL, NULL) != RDMA_CM_EVENT_ADDR_RESOLVED ||
	    rdma_resolve_route(cli.id, 2000) ||
	    next_event(cli.ch, 2, NULL, NULL) != RDMA_CM_EVENT_ROUTE_RESOLVED) {
		printf("cannot resolve %s\n", ip);
		return 1;
	}
	make_qp(&cli);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (rdma_connect(cli.id, &p))
		return 1;
	type = next_event(cli.ch, cap + 3, &ev, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	dt = (double)(t1.tv_sec - t0.tv_sec) +
	     1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
	printf("%s (status %d) after %.2f s\n",
	       type >= 0 ? rdma_event_str(type) : "no event", ev.status, dt);
	return type == RDMA_CM_EVENT_UNREACHABLE && dt < cap + 2 ? 0 : 1;
}

/* test_cm otherfabric PORT (run with another COLLBENCH_EMU_STATE): a
 * process of another fabric reaching our listener's port finds nobody. */
static int other_fabric(int p)
{
	struct side cli = { 0 };
	struct sockaddr_in dst = addr(p);
	struct rdma_conn_param cp = { 0 };
	struct rdma_cm_event ev;
	int type;
	cli.ch = rdma_create_event_channel();
	if (!cli.ch || rdma_create_id(cli.ch, &cli.id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(cli.id, NULL, (struct sockaddr *)&dst, 2000) ||
	    next_event(cli.ch, 2, NULL, NULL) != RDMA_CM_EVENT_ADDR_RESOLVED ||
	    rdma_resolve_route(cli.id, 2000) ||
	    next_event(cli.ch, 2, NULL, NULL) != RDMA_CM_EVENT_ROUTE_RESOLVED)
		return 1;
	make_qp(&cli);
	if (rdma_connect(cli.id, &cp))
		return 1;
	type = next_event(cli.ch, 5, &ev, NULL);
	return type == RDMA_CM_EVENT_REJECTED &&
	                       ev.status == (iwarp ? -ECONNREFUSED : 8)
	               ? 0
	               : 1;
}

static void test_other_fabric(const char *self)
{
	struct side srv = { 0 }, cli = { 0 };
	struct rdma_cm_id *l;
	char cmd[512], other[] = "/tmp/cbemu-cm2-XXXXXX";
	srv.ch = rdma_create_event_channel();
	cli.ch = rdma_create_event_channel();
	setup(&srv, &cli, &l);
	if (!mkdtemp(other))
		return;
	snprintf(cmd, sizeof(cmd),
	         "COLLBENCH_EMU_STATE=%s %s otherfabric %d && rm -rf %s", other,
	         self, port, other);
	CHECK(system(cmd) == 0);
	CHECK(next_event(srv.ch, 0.3, NULL, NULL) == -1); /* nothing came */
	free_side(&cli);
	rdma_destroy_id(l);
	rdma_destroy_event_channel(cli.ch);
	rdma_destroy_event_channel(srv.ch);
}

int main(int argc, char **argv)
{
	char state[] = "/tmp/cbemu-cm-XXXXXX", rm[64];
	int rc;
	iwarp = getenv("COLLBENCH_EMU_LINK") &&
	        !strcmp(getenv("COLLBENCH_EMU_LINK"), "iwarp");
	if (argc == 3 && !strcmp(argv[1], "unreachable"))
		return unreachable(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "otherfabric"))
		return other_fabric(atoi(argv[2]));
	if (!mkdtemp(state))
		return 1;
	setenv("COLLBENCH_EMU_STATE", state, 1);
	setenv("COLLBENCH_EMU_RETRY_CAP_MS", "1500", 0);
	test_connect();
	test_reject_and_gone();
	test_late_listener();
	test_other_fabric(argv[0]);
	rc = check_result(iwarp ? "rdma_cm iwarp" : "rdma_cm");
	snprintf(rm, sizeof(rm), "rm -rf %s", state);
	if (system(rm)) {
		/* a leftover directory in /tmp is harmless */
	}
	return rc;
}
