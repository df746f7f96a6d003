/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_fail.c - the first-failure record is a context's, not the
 * process's (core/log.h): a record opened on a thread is where that thread's
 * cb_fail() lands and starts clean; closing it forgives its failure or
 * hands it on, and a failure recorded before it stays the first; two
 * threads, each in a record of its own (two ranks in one process, as
 * tests/unit/test_boot.c runs them), keep their own first failures.
 */
#include <pthread.h>
#include <string.h>

#include "check.h"
#include "core/log.h"

struct rank {
	int id;
	pthread_barrier_t *bar;
	struct cb_fail_rec rec;
	char got[64];
};

static void *rank_main(void *arg)
{
	struct rank *r = arg;

	cb_fail_open(&r->rec);
	pthread_barrier_wait(r->bar);
	/* rank 0 first, rank 1 after it: one slot kept rank 0's for both */
	if (r->id == 1)
		pthread_barrier_wait(r->bar);
	cb_fail(r->id ? CB_ERR_UNAVAILABLE : CB_ERR_PEER, "rank %d failed",
	        r->id);
	cb_fail(CB_ERR_PROTO, "rank %d later", r->id);
	if (r->id == 0)
		pthread_barrier_wait(r->bar);
	pthread_barrier_wait(r->bar);
	snprintf(r->got, sizeof(r->got), "%s",
	         cb_fail_msg() ? cb_fail_msg() : "");
	cb_fail_close(&r->rec, 0);
	return NULL;
}

int main(void)
{
	struct cb_fail_rec a, b;

	/* nothing open: the process's record */
	CHECK(cb_fail_msg() == NULL && cb_fail_status() == CB_OK);

	/* a helper's failure, forgiven: the outer record never saw it */
	cb_fail_open(&a);
	CHECK(cb_fail(CB_ERR_UNAVAILABLE, "no hwloc") == CB_ERR_UNAVAILABLE);
	CHECK(cb_fail_msg() && !strcmp(cb_fail_msg(), "no hwloc"));
	cb_fail_close(&a, 0);
	CHECK(cb_fail_msg() == NULL);
	CHECK(cb_fail_rec_msg(&a) && !strcmp(cb_fail_rec_msg(&a), "no hwloc"));

	/* handed on: the outer gets it, status and all */
	cb_fail_open(&a);
	cb_fail(CB_ERR_TIMEOUT, "first");
	cb_fail_set_quiet(1);
	cb_fail_close(&a, 1);
	CHECK(cb_fail_msg() && !strcmp(cb_fail_msg(), "first"));
	CHECK(cb_fail_status() == CB_ERR_TIMEOUT && cb_fail_quiet());

	/* an earlier failure stays the first: forgiving a later helper's
	 * does not erase it (cb_fail_clear did), handing one on does not
	 * replace it */
	cb_fail_open(&a);
	cb_fail(CB_ERR_USAGE, "earlier");
	cb_fail_open(&b);
	CHECK(cb_fail_msg() == NULL); /* a fresh record starts clean */
	cb_fail(CB_ERR_SYS, "helper");
	cb_fail_close(&b, 0);
	CHECK(cb_fail_msg() && !strcmp(cb_fail_msg(), "earlier"));
	cb_fail_open(&b);
	cb_fail(CB_ERR_SYS, "helper");
	cb_fail_close(&b, 1);
	CHECK(cb_fail_msg() && !strcmp(cb_fail_msg(), "earlier"));
	CHECK(cb_fail_status() == CB_ERR_USAGE);
	/* the owner may put a more specific line in its place */
	cb_fail_rec_replace(&a, CB_ERR_PEER, "the store's line");
	CHECK(cb_fail_msg() && !strcmp(cb_fail_msg(), "the store's line"));
	CHECK(cb_fail_status() == CB_ERR_PEER);
	cb_fail_close(&a, 0);

	/* closed out of turn: taken out of the chain where it is */
	cb_fail_open(&a);
	cb_fail_open(&b);
	cb_fail_close(&a, 0);
	cb_fail(CB_ERR_SYS, "into b");
	CHECK(cb_fail_rec_msg(&b) && !strcmp(cb_fail_rec_msg(&b), "into b"));
	cb_fail_close(&b, 0);
	CHECK(cb_fail_msg() && !strcmp(cb_fail_msg(), "first"));

	/* into a record by name, from any thread: first wins there */
	cb_fail_open(&a);
	cb_fail_close(&a, 0);
	CHECK(cb_fail_to(&a, CB_ERR_PEER, "to %s", "a") == CB_ERR_PEER);
	cb_fail_to(&a, CB_ERR_PROTO, "to a, later");
	CHECK(cb_fail_rec_msg(&a) && !strcmp(cb_fail_rec_msg(&a), "to a"));

	/* two ranks as threads, rank 0 failing first: each its own */
	pthread_barrier_t bar;
	struct rank r[2] = { { .id = 0, .bar = &bar },
		             { .id = 1, .bar = &bar } };
	pthread_t t[2];
	pthread_barrier_init(&bar, NULL, 2);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, rank_main, &r[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&bar);
	CHECK(!strcmp(r[0].got, "rank 0 failed"));
	CHECK(!strcmp(r[1].got, "rank 1 failed"));
	CHECK(cb_fail_rec_status(&r[1].rec) == CB_ERR_UNAVAILABLE);
	CHECK(cb_fail_msg() && !strcmp(cb_fail_msg(), "first"));
	if (check_failures)
		fprintf(stderr, "rank 0: '%s', rank 1: '%s'\n", r[0].got,
		        r[1].got);
	return check_result("fail");
}
