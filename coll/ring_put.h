/* SPDX-License-Identifier: MIT */
/*
 * coll/ring_put.h - the ring allreduce's one-sided allgather.
 *
 * Where both neighbours' transport writes into mapped peer memory
 * (cb_comm_can_put: shm), the allgather half of the ring does not send its
 * chunks as messages for the right neighbour to copy out of this rank's
 * buffer - lines the other core has just written - but writes each chunk,
 * straight after reducing it, into the right neighbour's receive buffer
 * and raises a notification there; the receiver only waits for the
 * notifications, in order.  (benchmarks/shm_p2.c and the README's
 * "performance holes" say what that changes.)
 *
 * Agreed at plan build with each neighbour (both ends must agree, and
 * mapping a peer's memory can be refused, e.g. by a ptrace policy): each
 * rank offers its left neighbour a region to write into, the left one
 * tries to map it and answers.  Each call then starts by telling the left
 * neighbour where this call's receive buffer is (one small message; flag 0
 * when that buffer cannot be shared: the call falls back to messages on
 * that link).  COLLBENCH_RING_PUT=0 turns it off.
 */
#ifndef CB_COLL_RING_PUT_H
#define CB_COLL_RING_PUT_H

#include "coll/coll.h"

/* "Write into me here": a receive buffer exported for the left neighbour
 * (flag 0: not on this call). */
struct ring_where {
	uint32_t flag, bytes;
	uint64_t off; /* of the receive buffer in the exported region */
	uint8_t blob[CB_TP_MEM_BLOB_MAX];
};

struct ring_put {
	int left, right;         /* comm ranks */
	int to_right, from_left; /* agreed at build */
	/* this call */
	int posted_out, posted_in, have_in;
	int put;    /* this rank's allgather chunks go as puts */
	int notify; /* the left's come as notifications */
	struct ring_where out, in;
	struct cb_req rq_out, rq_in;
	struct cb_tp_rmem *rrm; /* the right's region, imported */
	struct ring_where rrm_of;
};

/* At plan build, on every rank of the ring (p > 1): agree with both
 * neighbours; @probe: a registered region of this rank's to offer; @on 0:
 * offer and accept none (cb_plan_cfg.ring_put_off). */
cb_status_t cb_ring_put_agree(struct cb_comm *c, struct ring_put *rp, int on,
                              int left, int right, const struct cb_mem *probe);
/* At the start of a call: tell the left neighbour where @recvbuf (in @m)
 * is, and listen for the right's.  @seq: the call's number. */
cb_status_t cb_ring_put_begin(struct cb_comm *c, struct ring_put *rp,
                              const struct cb_mem *m, const void *recvbuf,
                              uint64_t seq);
/* Before the first allgather chunk goes: CB_OK once the right's answer is
 * in (rp->put then says how chunks go: as the schedule's puts, CB_SOP_PUT,
 * into rp->rrm at rp->in.off), CB_AGAIN before. */
cb_status_t cb_ring_put_ready(struct cb_comm *c, struct ring_put *rp);
/* At the end of a call: its small messages complete. */
cb_status_t cb_ring_put_end(struct cb_comm *c, struct ring_put *rp);
void cb_ring_put_free(struct cb_comm *c, struct ring_put *rp);

#endif
