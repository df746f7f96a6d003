#!/bin/bash
# tests/rdma-vm/connect.sh MODE COLLBENCH [N] - one guest's part of
# rdma-vm-siw-connect (run.sh boots the guests): N short runs, each a fresh
# rdma_cm connection between the two guests, every one must pass.  It
# guards the handshake siw raced on (docs/rdma-vm.md, "Found on siw"): the
# passive side sending before the active side's first message failed about
# 1 connection in 5.  The model is given (--alpha-us, --beta-gbps) so no
# ping-pong runs before the allreduce: ~5 s a run under TCG.  siw's
# connection-manager debug messages are on; a failed run prints them.
set -u
mode=$1 cb=$2 n=${3:-10}
dev=$RDMA_VM_DEV rank=$RANK
case $mode in
siw-connect | rxe-connect) ;;
*) echo "connect.sh: unknown mode $mode" && exit 2 ;;
esac
if [ "${mode%%-*}" = siw ] && mount -t debugfs none /sys/kernel/debug 2>/dev/null; then
	echo "file siw_cm.c +p" >/sys/kernel/debug/dynamic_debug/control 2>/dev/null
	dmesg -n 1
fi
bad=0
for i in $(seq 1 "$n"); do
	dmesg -C 2>/dev/null
	# a port per run, so a run that fails on one side cannot meet the
	# other side's next run
	o=$(MASTER_PORT=$((29600 + i)) timeout 90 "$cb" --transport verbs \
		--nic "$dev" --verbs-cm rdma_cm --coll allreduce -b 8 -e 64K -f 64 \
		-w 0 -n 1 --alpha-us 200 --beta-gbps 0.01 --timeout 20 2>&1)
	rc=$?
	if [ $rc != 0 ]; then
		bad=$((bad + 1))
		echo "FAIL rank $rank ($mode): run $i of $n: status $rc"
		grep '^collbench' <<<"$o" | grep -v 'no job token' | head -5 | sed 's/^/  | /'
		dmesg 2>/dev/null | grep -E 'upcall|error|mpa|TERM' | head -20 | sed 's/^/  k /'
	elif [ "$rank" = 0 ] && ! grep -q '^# Wrong values: 0 OK' <<<"$o"; then
		bad=$((bad + 1))
		echo "FAIL rank 0 ($mode): run $i of $n: no '# Wrong values: 0 OK' line"
	fi
	sleep 1
done
echo "rank $rank: $((n - bad)) of $n connections and allreduces passed"
[ $bad = 0 ] || exit 1
echo "PASS rank $rank ($mode)"
