#!/bin/bash
# tests/rdma-vm/linkdown.sh MODE COLLBENCH - one guest's part of rdma-vm-linkdown:
# both ranks run a long allreduce over rxe0; guest 1 takes its eth0 down
# mid-run (`ip link set eth0 down`).  Every rank must end, within its
# --timeout and well before the harness's deadline, with a non-zero status
# and one line: rank 0 naming its peer (rank 1, host rdma-vm1); rank 1, whose
# own port went down, naming its peer (a QP error) or that port (rxe's
# IBV_EVENT_PORT_ERR), whichever comes first.
set -u
cb=$2 rank=$RANK peer=$((1 - RANK))
out=/tmp/collbench.out
if [ "$rank" = 1 ]; then
	# down once the run is under way: the first rows take ~10 s on TCG
	(sleep "${LINKDOWN_AFTER:-20}" && ip link set eth0 down && echo "rank 1: eth0 down at $(date +%s)") &
fi
t0=$(date +%s)
timeout 240 "$cb" --transport verbs --nic rxe0 --coll allreduce --algo ring \
	-b 8 -e 64K -f 2 -w 1 -n 1000 --timeout 20 >"$out" 2>&1
rc=$?
t1=$(date +%s)
wait
lines=$(grep '^collbench: ' "$out" | grep -v -E 'no job token|: (verbs: rail|verbs: rxe0:1 RoCE|[0-9]+ ranks on)')
echo "rank $rank: status $rc after $((t1 - t0)) s; its lines:"
sed 's/^/  | /' <<<"$lines"
ok=1
[ $rc != 0 ] && [ $rc -lt 124 ] || { echo "FAIL rank $rank: status $rc (want a plain failure, not a timeout or a signal)"; ok=0; }
if [ "$rank" = 0 ]; then
	want="rank $peer \(host rdma-vm$peer\)"
else
	# whichever rxe reports first: the port event or the QP's error
	want="port rxe0:1 went down|peer 0 \(rdma-vm0|rank 0 \(host rdma-vm0\)"
fi
[ "$(grep -c . <<<"$lines")" = 1 ] && grep -q -E "$want" <<<"$lines" ||
	{ echo "FAIL rank $rank: want one line saying '$want'"; ok=0; }
[ $((t1 - t0)) -lt 200 ] || { echo "FAIL rank $rank: took $((t1 - t0)) s"; ok=0; }
[ $ok = 1 ] && echo "PASS rank $rank (link down)"
[ $ok = 1 ]
