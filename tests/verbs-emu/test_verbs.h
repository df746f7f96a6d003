/* SPDX-License-Identifier: MIT */
/*
 * tests/verbs-emu/test_verbs.h - helpers shared by test_verbs.c (state
 * machine, data path, limits) and test_verbs_err.c (error completions,
 * timeouts, a peer that goes away, events, iWARP, faults).
 */
#ifndef CBEMU_TEST_VERBS_H
#define CBEMU_TEST_VERBS_H

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

/* check.h counts in static variables, one set per file: the checks of
 * every file of this test count in test_verbs.c's, through tv_check. */
void tv_check(int ok, const char *file, int line, const char *what);
#undef CHECK
#define CHECK(cond) tv_check((cond) != 0, __FILE__, __LINE__, #cond)

/* not in the public headers (rdma-core's driver.h) */
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf,
                        size_t size);

extern struct ibv_context *ctx;
extern struct ibv_pd *pd;
extern struct ibv_port_attr port;
extern int gid_index;
extern union ibv_gid gid;
extern bool roce, iwarp;

struct peer {
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	char *buf;
	size_t len;
};

struct conn_opts {
	uint32_t rq_psn, sq_psn;
	int access;
	enum ibv_mtu mtu;
	uint8_t rnr_retry, min_rnr, retry, timeout, rd_atomic;
};

extern const struct conn_opts defaults;

double now_s(void);
void open_dev(void);
void mkpeer(struct peer *p, size_t len, int swr, int rwr, int access);
void freepeer(struct peer *p);
void fill_ah(struct ibv_ah_attr *ah);
int to_init(struct ibv_qp *qp, int access);
int to_rtr(struct ibv_qp *qp, uint32_t dest, const struct conn_opts *o);
int to_rts(struct ibv_qp *qp, const struct conn_opts *o);
int bring_up(struct ibv_qp *qp, uint32_t dest, const struct conn_opts *o);
void connect2(struct peer *a, struct peer *b, const struct conn_opts *oa,
              const struct conn_opts *ob);
int wait_cq(struct ibv_cq *cq, struct ibv_wc *wc, int n, double sec);
int qp_state(struct ibv_qp *qp);
int post_recv(struct peer *p, uint64_t id, size_t off, uint32_t len);
int post(struct peer *p, uint64_t id, enum ibv_wr_opcode op, size_t off,
         uint32_t len, uint64_t raddr, uint32_t rkey, unsigned flags);
int async_event(enum ibv_event_type *type, double sec);
void drain_async(void);

void test_access_errors(void);
void test_timeouts(void);
void test_peer_gone(int to_child[2], int from_child[2], pid_t child);
void child_main(int to_child[2], int from_child[2]);
void test_events(void);
void test_iwarp(void);
void test_faults(void);

#endif
