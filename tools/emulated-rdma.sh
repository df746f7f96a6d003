#!/bin/bash
# tools/emulated-rdma.sh - run a program on the verbs emulation
# (tests/verbs-emu): RDMA devices "cbemu0".. emulated over this network
# namespace's network, so a verbs program (the verbs transport, ibv_devinfo,
# ibv_rc_pingpong, perftest) runs unchanged where there is no RDMA hardware.
#
#   tools/emulated-rdma.sh CMD [ARGS...]     run CMD on the emulation
#   tools/emulated-rdma.sh --port-down DEV   take DEV's port down on this
#   tools/emulated-rdma.sh --port-up DEV     host (network namespace) / up
#   tools/emulated-rdma.sh --env             print the variables it sets
#
# It puts the stand-in libibverbs.so.1 and librdmacm.so.1 first on
# LD_LIBRARY_PATH and sets COLLBENCH_EMU_STATE (the fabric's shared state;
# default /tmp/collbench-emu-$UID: every process of one fabric, in every
# namespace, must use the same) and COLLBENCH_SYSFS_ROOT (this host's fake
# sysfs tree, where the port counters are).  The emulated devices' link
# layer, number, faults: COLLBENCH_EMU_* variables, tests/verbs-emu/README.md.
# Where the libraries are: COLLBENCH_EMU_LIBDIR (meson's tests set it to
# their build's), else the build-test or build directory of this checkout.
# Not built: one line, status 77; status 1 with COLLBENCH_EMU_REQUIRED=1
# (meson's verbs tests in a build with the verbs module: a verbs test must
# never pass as a skip there).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
libdir=${COLLBENCH_EMU_LIBDIR:-}
if [ -z "$libdir" ] && [ "${COLLBENCH_EMU_REQUIRED:-0}" = 1 ]; then
	echo "emulated-rdma.sh: COLLBENCH_EMU_REQUIRED=1 but COLLBENCH_EMU_LIBDIR is not set" >&2
	exit 1
fi
if [ -z "$libdir" ]; then
	for d in "$root/build-test/tests/verbs-emu" "$root/build/tests/verbs-emu"; do
		if [ -e "$d/libibverbs.so.1" ] && [ -e "$d/librdmacm.so.1" ]; then
			libdir=$d
			break
		fi
	done
fi
if [ -z "$libdir" ] || [ ! -e "$libdir/libibverbs.so.1" ] || [ ! -e "$libdir/librdmacm.so.1" ]; then
	if [ "${COLLBENCH_EMU_REQUIRED:-0}" = 1 ]; then
		echo "emulated-rdma.sh: the verbs emulation is not in $libdir, and this build has the verbs module (the emulation needs libibverbs-dev, librdmacm-dev, objdump and python3: tools/deps.sh --test)" >&2
		exit 1
	fi
	echo "emulated-rdma.sh: the verbs emulation is not built (tools/test.sh builds it; set COLLBENCH_EMU_LIBDIR to its directory)" >&2
	exit 77
fi
export COLLBENCH_EMU_STATE=${COLLBENCH_EMU_STATE:-/tmp/collbench-emu-$(id -u)}
host=$(stat -L -c %i /proc/self/ns/net) || exit 1
hostdir=$COLLBENCH_EMU_STATE/hosts/$host
export COLLBENCH_SYSFS_ROOT=$hostdir/sys
export LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

case "${1:-}" in
--port-down | --port-up)
	dev=${2:-}
	if ! [[ "$dev" =~ ^cbemu[0-9]+$ ]]; then
		echo "emulated-rdma.sh: $1 wants a device name (cbemu0...)" >&2
		exit 2
	fi
	mkdir -p "$hostdir/admin" || exit 1
	if [ "$1" = --port-down ]; then
		: >"$hostdir/admin/$dev.1"
	else
		rm -f "$hostdir/admin/$dev.1"
	fi
	exit 0
	;;
--env)
	echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
	echo "COLLBENCH_EMU_STATE=$COLLBENCH_EMU_STATE"
	echo "COLLBENCH_SYSFS_ROOT=$COLLBENCH_SYSFS_ROOT"
	exit 0
	;;
"" | -h | --help)
	sed -n '2,/^set -u/p' "$0" | sed -e 's/^# \{0,1\}//' -e '/^set -u/d' >&2
	exit 2
	;;
esac
exec "$@"
