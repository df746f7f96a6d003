#!/bin/bash
# verbs_cq.sh COLLBENCH - the verbs transport's completion queues, on the
# verbs emulation (tests/verbs-emu):
#  - a CQ holds VB_CQE_PER_QP (192) completions per queue pair it serves,
#    and a rail gets another CQ when its queue pairs fill one: with a device
#    whose max_cqe is small (COLLBENCH_EMU_MAX_CQE), every rank of an
#    alltoall makes a second CQ and the run stays exact, out of band
#    (InfiniBand) and through rdma_cm (iWARP);
#  - a device whose CQs cannot hold one queue pair's completions is refused
#    with one line;
#  - a CQ that overruns anyway (the emulation's cq_overrun fault: the CQ
#    holds 4 entries whatever it says, as a device that under-allocates)
#    ends the run with one line naming it, within seconds, not at the
#    deadline.
# What 128 ranks (more than one CQ's 64 queue pairs on rank 0, for real)
# showed by hand: README, "The verbs transport".
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
EMU=$here/../../tools/emulated-rdma.sh
export COLLBENCH_EMU_STATE=$TMP/fabric
export COLLBENCH_EMU_PORT_BASE=$((10000 + RANDOM % 9000)) # below the ephemeral range
export COLLBENCH_PLUGIN_PATH=${COLLBENCH_PLUGIN_PATH:-$(dirname "$CB")/transports}
need_verbs "$EMU"

# One queue pair a CQ (max_cqe 192): 3 ranks need two CQs each, out of band
# (InfiniBand) and through rdma_cm (iWARP).  (Retries wait 10-20 s: 2 busy
# cores are not a dead peer.)
for t in "ib 3 192 2" "iwarp 3 192 2"; do
	read -r link np max q2 <<<"$t"
	COLLBENCH_EMU_LINK=$link COLLBENCH_EMU_MAX_CQE=$max \
		COLLBENCH_EMU_RETRY_FLOOR_MS=10000 COLLBENCH_EMU_RETRY_CAP_MS=20000 \
		timeout 120 "$EMU" "$CB" \
		--np "$np" --transport verbs --coll alltoall,allreduce --algo pairwise,rd \
		-b 8 -e 64K -f 8 -n 5 -w 1 -v --timeout 30 \
		>"$TMP/grow.$link.out" 2>"$TMP/grow.$link.err"
	rc=$?
	more=$(grep -c "verbs: cbemu0: completion queue 2 of $max entries, for queue pairs $q2 to" "$TMP/grow.$link.err")
	if [ "$rc" -ne 0 ]; then
		fail "$link, max_cqe $max: exit $rc: $(grep -v -e 'rail 0' "$TMP/grow.$link.err" | head -3)"
	elif [ "$more" -ne "$np" ]; then
		fail "$link, max_cqe $max: $more of $np ranks made a second CQ: $(grep -i 'completion' "$TMP/grow.$link.err" | head -3)"
	elif ! grep -q 'Wrong values: 0 OK' "$TMP/grow.$link.out"; then
		fail "$link, max_cqe $max: no 'Wrong values: 0 OK'"
	else
		pass "$link, max_cqe $max: $np ranks, each with 2 CQs, exact"
	fi
done

# A device that cannot hold one queue pair's completions in a CQ.
COLLBENCH_EMU_MAX_CQE=100 expect_fail 1 'cbemu0 holds at most 100 completions a queue (max_cqe), and one queue pair needs 192' \
	timeout 60 "$EMU" "$CB" --np 2 --transport verbs -b 8 -e 8 --timeout 20

# A CQ that overruns: one line, and soon (the deadline is 60 s).
t0=$(date +%s)
COLLBENCH_EMU_FAULTS="cq_overrun:cqe=4" expect_fail 1 'a completion queue on cbemu0:1 overran (CQ error' \
	timeout 120 "$EMU" "$CB" --np 3 --transport verbs --coll alltoall --algo pairwise \
	-b 8 -e 64K -f 8 --timeout 60
secs=$(($(date +%s) - t0))
if [ "$secs" -gt 20 ]; then
	fail "CQ overrun: the run took ${secs}s to end (the deadline was 60 s)"
else
	pass "CQ overrun: ended in ${secs}s"
fi
finish
