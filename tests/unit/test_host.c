/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_host.c - the host services the core lends transports
 * (core/comm.c, transport ABI v3): every open transport gets a table of its
 * own and each callback's `self` leads back to it, so two transports open in
 * one process (shm and tcp in a --transport auto run across hosts) keep
 * their own log prefixes whatever order they were opened in; options come
 * from the communicator's own view (two communicators, two views), the
 * host reduction is the communicator's; no engine, no dma-buf; a failure
 * through a table is recorded in that table's communicator, so two
 * communicators keep their own first failures (one process-wide slot gave
 * the second the first one's line).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/comm.h"
#include "core/log.h"

static int reduced;

static void count_reduce(enum cb_dtype dt, enum cb_op op, void *dst,
                         const void *a, const void *b, size_t count)
{
	(void)dt;
	(void)op;
	(void)dst;
	(void)a;
	(void)b;
	reduced += (int)count;
}

/* One communicator's option view: its arg is its tcp-streams. */
static const char *view(void *arg, const char *key)
{
	return strcmp(key, "tcp-streams") ? NULL : arg;
}

/* What @fn printed on stderr, into @out. */
static void stderr_of(void (*fn)(struct cb_comm *), struct cb_comm *c,
                      char *out, size_t bytes)
{
	FILE *tmp = tmpfile();
	int saved = dup(2);
	size_t n;

	fflush(stderr);
	dup2(fileno(tmp), 2);
	fn(c);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	n = fread(out, 1, bytes - 1, tmp);
	out[n] = '\0';
	fclose(tmp);
}

/* A log line from each transport, the first-opened one first. */
static void log_both(struct cb_comm *c)
{
	const struct cb_tp_host *shm = &c->tp[0].host, *tcp = &c->tp[1].host;

	shm->log(shm, CB_TP_LOG_WARN, "from the first, rank %d", shm->rank);
	tcp->log(tcp, CB_TP_LOG_WARN, "from the second");
	shm->log(shm, CB_TP_LOG_WARN, "the first again");
}

int main(void)
{
	struct cb_comm *c = calloc(1, sizeof(*c));
	char err[2048];
	int a = 1, b = 2, d = 0;
	int fd = -1;
	uint64_t off = 0;

	c->rank = 3;
	c->world = 4;
	c->engine = -1;
	c->reduce = count_reduce;
	cb_comm_host_init(c, 7, -1);
	/* --transport auto across hosts: shm first, then tcp */
	cb_comm_tp_init(c, &c->tp[0], "shm");
	cb_comm_tp_init(c, &c->tp[1], "tcp");
	c->ntp = 2;

	CHECK(c->tp[0].host.size == sizeof(struct cb_tp_host));
	CHECK(c->tp[1].host.rank == 3 && c->tp[1].host.job_id == 7);
	CHECK(&c->tp[0].host != &c->tp[1].host);

	stderr_of(log_both, c, err, sizeof(err));
	CHECK(strstr(err, "shm: from the first, rank 3\n") != NULL);
	CHECK(strstr(err, "tcp: from the second\n") != NULL);
	CHECK(strstr(err, "shm: the first again\n") != NULL);
	CHECK(strstr(err, "tcp: from the first") == NULL);
	CHECK(strstr(err, "tcp: the first") == NULL);
	CHECK(strstr(err, "shm: from the second") == NULL);
	if (check_failures)
		fprintf(stderr, "logged:\n%s", err);

	/* options: this communicator's view; another's is its own (a parsed
	 * view, core/env.h); a communicator given none sees none (there is
	 * no process-wide store) */
	struct cb_comm *c2 = calloc(1, sizeof(*c2));
	struct cb_optset set2 = { 0 };
	c->option = view;
	c->option_arg = "4";
	CHECK(cb_optset_put(&set2, "tcp-streams", "2") == CB_OK);
	CHECK(cb_comm_option(c2, "tcp-streams") == NULL);
	c2->option = cb_optset_lookup;
	c2->option_arg = &set2;
	c2->engine = -1;
	cb_comm_host_init(c2, 8, -1);
	cb_comm_tp_init(c2, &c2->tp[0], "tcp");
	const struct cb_tp_host *t1 = &c->tp[1].host, *t2 = &c2->tp[0].host;
	CHECK(t1->option(t1, "tcp-streams") &&
	      !strcmp(t1->option(t1, "tcp-streams"), "4"));
	CHECK(t1->option(t1, "tcp-if") == NULL);
	CHECK(t2->option(t2, "tcp-streams") &&
	      !strcmp(t2->option(t2, "tcp-streams"), "2"));

	/* the reduction through either table is the communicator's */
	c->tp[1].host.reduce(&c->tp[1].host, CB_DT_INT32, CB_OP_SUM, &d, &a, &b,
	                     5);
	c->tp[0].host.reduce(&c->tp[0].host, CB_DT_INT32, CB_OP_SUM, &d, &a, &b,
	                     2);
	CHECK(reduced == 7);

	/* no device memory engine open: no dma-buf, nothing recorded */
	CHECK(c->tp[0].host.gpu_dmabuf(&c->tp[0].host, &a, 4, &fd, &off) ==
	      CB_ERR_UNSUPPORTED);
	CHECK(fd == -1 && cb_fail_rec_msg(&c->fail) == NULL);

	/* a failure through a table is its communicator's one line: the other
	 * communicator failed first, and keeps its own; the process's record
	 * holds neither */
	CHECK(t2->fail(t2, CB_ERR_TIMEOUT, "tcp: other %d", 8) ==
	      CB_ERR_TIMEOUT);
	CHECK(c->tp[1].host.fail(&c->tp[1].host, CB_ERR_PROTO, "tcp: bad %d",
	                         9) == CB_ERR_PROTO);
	CHECK(c->tp[0].host.fail(&c->tp[0].host, CB_ERR_PEER, "shm: later") ==
	      CB_ERR_PEER);
	CHECK(cb_fail_rec_msg(&c->fail) &&
	      !strcmp(cb_fail_rec_msg(&c->fail), "tcp: bad 9"));
	CHECK(cb_fail_rec_status(&c->fail) == CB_ERR_PROTO);
	CHECK(cb_fail_rec_msg(&c2->fail) &&
	      !strcmp(cb_fail_rec_msg(&c2->fail), "tcp: other 8"));
	CHECK(cb_fail_rec_status(&c2->fail) == CB_ERR_TIMEOUT);
	CHECK(cb_fail_msg() == NULL);
	if (check_failures)
		fprintf(stderr, "records: '%s' '%s'\n",
		        cb_fail_rec_msg(&c->fail) ? cb_fail_rec_msg(&c->fail)
		                                  : "",
		        cb_fail_rec_msg(&c2->fail) ? cb_fail_rec_msg(&c2->fail)
		                                   : "");
	CHECK(c->tp[0].host.now_ns(&c->tp[0].host) > 0);

	free(c2);
	free(c);
	return check_result("host");
}
