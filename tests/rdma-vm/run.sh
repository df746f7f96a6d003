#!/bin/bash
# tests/rdma-vm/run.sh MODE COLLBENCH - collbench's verbs transport on the
# Linux kernel's own RDMA stack: two QEMU guests (two hosts, one rank each)
# booted by tools/rdma-vm.sh, joined by a private link, with rxe (RoCE v2) or
# siw (iWARP) on it; tests/rdma-vm/guest.sh in each.  MODE: rxe-oob, rxe-cm,
# siw, rxe-linkdown (linkdown.sh instead), siw-connect (connect.sh: ten new
# connections in a row), rxe-auto (auto.sh: two ranks per guest, --transport
# auto), rxe-three (three.sh: three guests, acceptance with one link
# shaped, then one guest killed mid-run).  Skipped (77, one line) where the
# verbs module is not built or qemu or Debian's kernel cannot be had
# (tools/rdma-vm.sh says which).
set -u
mode=$1 cb=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
vm=$here/../../tools/rdma-vm.sh
plugins=${COLLBENCH_PLUGIN_PATH:-$(dirname "$cb")/transports}
if ! ls "$plugins"/libcollbench-verbs.so >/dev/null 2>&1; then
	echo "SKIP: the verbs module is not built (libibverbs-dev, librdmacm-dev)"
	exit 77
fi
COLLBENCH_PLUGIN_PATH=$(realpath "$plugins")
export COLLBENCH_PLUGIN_PATH
script=$here/guest.sh smp=() guests=2
case $mode in
rxe-oob | rxe-cm) dev=rxe ;;
rxe-linkdown) dev=rxe script=$here/linkdown.sh ;;
siw) dev=siw ;;
siw-connect) dev=siw script=$here/connect.sh ;;
# two ranks per guest: two vCPUs (on one, the pair over verbs stalls: see
# docs/rdma-vm.md)
rxe-auto) dev=rxe script=$here/auto.sh smp=(--smp 2) ;;
# three guests: acceptance with one link shaped, then one guest killed
rxe-three) dev=rxe script=$here/three.sh guests=3 ;;
*) echo "run.sh: unknown mode $mode" && exit 2 ;;
esac
# Each guest's output and console, and the logs its script left (guest.sh:
# every rank's whole collbench log and dmesg), kept per test: on a failure
# the folder is named (guest.sh prints its log's tail itself).
logs=${RDMA_VM_LOGS:-$PWD/rdma-vm-logs}/$mode
once() {
	local t0 rc
	t0=$(date +%s)
	"$vm" --guests $guests --dev "$dev" "${smp[@]}" --save "$logs" --boot-timeout "${RDMA_VM_BOOT_TIMEOUT:-240}" \
		--timeout "${RDMA_VM_TIMEOUT:-480}" -- bash "$script" "$mode" "$cb" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	echo "rdma-vm $mode: status $rc, $(($(date +%s) - t0)) s wall (boot included)"
	return $rc
}
# The link between the guests dead: every TCP socket between them,
# the bootstrap's plain one too, holding unacked data with nothing
# received for a minute or more, in both guests (their samples, printed
# on a failure).  QEMU's datagram link under TCG, seen in the siw lane
# now and then (2026-12-07: both guests' sockets at backoff 9, 3 minutes
# without a packet, from the first verbs transfer on).  A collbench that
# hangs over a live link leaves no data unacked.  Not collbench's: run
# once more, and say so; a second such failure fails.
link_dead() {
	local g
	for g in 0 1; do
		grep "^\[rdma-vm$g\]   s .*unacked:" "$log" |
			grep -qE 'lastrcv:([6-9][0-9]{4}|[0-9]{6,})' || return 1
	done
}
log=$(mktemp) && trap 'rm -f "$log"' EXIT
once
rc=$?
if [ $rc != 0 ] && [ "$mode" != rxe-linkdown ] && link_dead; then
	echo "rdma-vm $mode: the link between the guests stopped (both guests' TCP sockets unacked, nothing received for a minute or more): QEMU's, not collbench's; once more"
	once
	rc=$?
fi
# The guest killed mid-run (three.sh asked for it) must be named by the
# harness, and not counted: the survivors' statuses are the test's.
# One survivor's line must name the dead peer.
if [ "$mode" = rxe-three ] && [ $rc = 0 ]; then
	grep -q '^rdma-vm.sh: guest 2 (rdma-vm2) killed (QEMU SIGKILLed' "$log" ||
		{ echo "FAIL: the harness did not name guest 2 (rdma-vm2) as killed" && rc=1; }
	grep -q '^\[rdma-vm[01]\] rank [01]: names the killed peer: ' "$log" ||
		{ echo "FAIL: no surviving rank named rank 2 (host rdma-vm2)" && rc=1; }
fi
[ $rc = 0 ] || echo "rdma-vm $mode: each guest's full logs in $logs: $(cd "$logs" 2>/dev/null && echo *)"
exit $rc
