#!/bin/bash
# tests/rdma-vm/auto.sh MODE COLLBENCH - one guest's part of rdma-vm-rxe-auto
# (run.sh boots two guests): two ranks in this guest (RANK 2g and 2g+1 of
# 4, torchrun-style), --transport auto.  Rank 0 checks that auto chose shm
# inside a host and verbs between hosts (the header's transport line), and
# that every value is right.  The model is given (--alpha-us, --beta-gbps):
# measured, rank 0 and rank 2 ping-pong 8 B 220 times and then 64 MiB one
# way in 256 KiB messages (select/calibrate.c) while ranks 1 and 3 wait
# for the result under the run's 60 s --timeout; at the 1-3 MB/s that
# rdma-vm-siw's model measures under load that alone is 20-60 s, and rank
# 3 once timed out waiting for the model (docs/rdma-vm.md).  rdma-vm-siw, -rxe-oob and -rxe-cm still
# measure it (two ranks, both in the ping-pong, nobody waits on the key).
set -u
mode=$1 cb=$2
g=$RANK
case $mode in rxe-auto) ;; *) echo "auto.sh: unknown mode $mode" && exit 2 ;; esac
pids=()
for l in 0 1; do
	r=$((2 * g + l))
	RANK=$r WORLD_SIZE=4 LOCAL_RANK=$l LOCAL_WORLD_SIZE=2 timeout 420 "$cb" \
		--transport auto --coll allreduce,allgather,alltoall --algo all \
		-b 0 -e 64K -f 8 -d float32,int32 -w 1 -n 2 --timeout 60 -v \
		--alpha-us 200 --beta-gbps 0.01 \
		>/tmp/auto.$r 2>&1 &
	pids+=($!)
done
fails=0
for l in 0 1; do
	wait "${pids[$l]}"
	rc=$?
	r=$((2 * g + l))
	if [ $rc != 0 ]; then
		echo "FAIL rank $r ($mode): status $rc: $(grep '^collbench' /tmp/auto.$r | grep -v 'no job token' | head -3)"
		fails=$((fails + 1))
	fi
done
if [ "$g" = 0 ]; then
	o=/tmp/auto.0
	grep '^# transport' $o | sed 's/^/rank 0: /'
	grep -q '^# Wrong values: 0 OK' $o || { echo "FAIL rank 0 ($mode): no '# Wrong values: 0 OK' line"; fails=$((fails + 1)); }
	t=$(grep -m1 '^# transport auto:' $o)
	grep -q 'on one host over shm ([1-9]' <<<"$t" && grep -q 'between hosts over verbs ([1-9]' <<<"$t" ||
		{ echo "FAIL rank 0 ($mode): auto did not pick shm and verbs: '$t'"; fails=$((fails + 1)); }
	echo "rank 0: $(grep -c '^ *[0-9]' $o) rows, $(grep -m1 '^# Wrong values' $o)"
fi
[ $fails = 0 ] || { grep '^#' /tmp/auto.$((2 * g)) | head -12 | sed 's/^/  | /'; exit 1; }
echo "PASS guest $g ($mode)"
