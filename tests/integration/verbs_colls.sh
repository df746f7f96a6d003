#!/bin/bash
# verbs_colls.sh COLLBENCH LINK NP [--slow] - every collective and algorithm
# (colls.py) over the verbs transport on the verbs emulation, with the
# emulated ports in link layer LINK (ib, roce, iwarp).  Skipped (77) where
# the emulation or the module is not built, when run by hand; under meson
# in a build with the module (COLLBENCH_EMU_REQUIRED=1) that fails.  A call
# the emulation does not emulate fails the test (the emulation is the
# project's own).
set -u
CB=$1 link=$2 np=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
EMU=$here/../../tools/emulated-rdma.sh
export COLLBENCH_EMU_LINK=$link
export COLLBENCH_EMU_STATE=${COLLBENCH_EMU_STATE:-$(mktemp -d)/fabric}
"$EMU" true || exit # 77 by hand; 1 under meson (COLLBENCH_EMU_REQUIRED)
out=$("$EMU" "$CB" --np 1 --transport verbs -b 8 -e 8 2>&1)
case $out in
*"not emulated"*) echo "FAIL: the emulation cannot do this: $(head -1 <<<"$out")"; exit 1 ;;
*"not available"* | *"not usable"*)
	if [ "${COLLBENCH_EMU_REQUIRED:-0}" = 1 ]; then
		echo "FAIL: this build has the verbs module, and it is not usable on the emulation: $out"
		exit 1
	fi
	echo "SKIP: $out"
	exit 77
	;;
esac
exec "$EMU" python3 "$here/colls.py" "$CB" "$np" verbs "$@"
