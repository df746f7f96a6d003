#!/bin/bash
# tests/rdma-vm/run.sh MODE COLLBENCH - collbench's verbs transport on the
# Linux kernel's own RDMA stack: two QEMU guests (two hosts, one rank each)
# booted by tools/rdma-vm.sh, joined by a private link, with rxe (RoCE v2) or
# siw (iWARP) on it; tests/rdma-vm/guest.sh in each.  MODE: rxe-oob, rxe-cm,
# siw, rxe-linkdown (linkdown.sh instead).  Skipped (77, one line) where the verbs module is not built or qemu or
# Debian's kernel cannot be had (tools/rdma-vm.sh says which).
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
script=$here/guest.sh
case $mode in
rxe-oob | rxe-cm) dev=rxe ;;
rxe-linkdown) dev=rxe script=$here/linkdown.sh ;;
siw) dev=siw ;;
*) echo "run.sh: unknown mode $mode" && exit 2 ;;
esac
once() {
	local t0 rc
	t0=$(date +%s)
	"$vm" --guests 2 --dev "$dev" --boot-timeout "${RDMA_VM_BOOT_TIMEOUT:-240}" \
		--timeout "${RDMA_VM_TIMEOUT:-480}" -- bash "$script" "$mode" "$cb"
	rc=$?
	echo "rdma-vm $mode: status $rc, $(($(date +%s) - t0)) s wall (boot included)"
	return $rc
}
once
rc=$?
# siw between two guests loses a message or a completion in about 1 run of
# 4 (a rank ends with "lost the connection", or both wait out the deadline
# on each other in pingpong; not diagnosed, docs/rdma-vm.md).  Until it is,
# one more try after such a failure, printed as a NOTE so the log shows it;
# a second failure is red.  rxe gets no second try.
if [ "$mode" = siw ] && [ $rc -ne 0 ] && [ $rc -ne 77 ] && [ $rc -ne 2 ]; then
	echo "NOTE: rdma-vm siw failed (status $rc, the known iWARP loss); trying once more"
	once
	rc=$?
fi
exit $rc
