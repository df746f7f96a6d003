#!/bin/bash
# benchmarks/holes.sh [COLLBENCH] [ROUNDS] - where collbench was slowest
# against its anchors, measured in one session (a benchmark, not a test;
# long):
#   1. allreduce on shm at np 2, 16 KiB to 4 MiB: the tuned ring beside rd
#      (and the other algorithms), medians of interleaved rounds
#      (crossover.py, auto from the model alone so nothing is tuned away);
#   2. allreduce on tcp at np 2, 64 KiB to 4 MiB, beside Open MPI's tcp
#      (anchors.py -> mpi-anchor.sh 2 tcp), collbench's auto
#      from a table tuned in this session, then the same with messages
#      split across the streams from 256 KiB (COLLBENCH_TCP_SPLIT_BYTES);
#   3. what loopback TCP itself carries (tcp-limit.sh: iperf3, 1 and 2
#      streams, 128 KiB and 1 MiB writes, both directions at once).
# Everything is in benchmarks/.  Installs (apt, when missing): openmpi-bin
# and libopenmpi-dev for 2, iperf3 for 3.
set -u
here=$(cd "$(dirname "$0")" && pwd)
cb=${1:-$here/../build/collbench}
rounds=${2:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "## 1. shm, np 2: ring beside rd (medians of $rounds rounds)"
python3 "$here/crossover.py" --collbench "$cb" --np 2 --transports shm \
	--min 16K --max 4M --rounds "$rounds" --tuning none

echo
echo "## 2. tcp, np 2, beside Open MPI (auto from a table tuned now)"
"$cb" tune --np 2 --transport tcp -b 64K -e 4M --tuning "$tmp/t.json" >/dev/null || exit 1
COLLBENCH_TUNING=$tmp/t.json python3 "$here/anchors.py" --collbench "$cb" \
	--np 2 --transports tcp --min 64K --max 4M --rounds "$rounds" --no-limits
echo
echo "## 2b. the same, messages split across the 2 streams from 256 KiB"
COLLBENCH_TUNING=$tmp/t.json COLLBENCH_TCP_SPLIT_BYTES=262144 \
	python3 "$here/anchors.py" --collbench "$cb" --np 2 --transports tcp \
	--min 64K --max 4M --rounds "$rounds" --no-limits

echo
echo "## 3. loopback TCP's own limit"
"$here/tcp-limit.sh" 3
