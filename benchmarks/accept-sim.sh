#!/bin/bash
# benchmarks/accept-sim.sh [-r RUNS] [--cb-sim PATH] - acceptance's planner
# and judge (acceptance/plan.c) over the modelled fat tree of
# tests/sim/sim.c, many seeds per case: 64 to 4096 hosts, 0 to 4 faults
# of each kind (slow cable at a third, lossy cable at 1%, a flapping link
# down 30% of the time, a leaf uplink at a quarter), quiet (noise sigma
# 0.05, 2% busy moments) and noisy (0.15, 5%).  One line per case from
# collbench-accept-sim: faults named exactly, false alarms (good hosts,
# leaves or paths named), rounds against 2 log2(n) + 4k + 10 (over_bound)
# and the goal, + 8 (over_goal), modelled wall time.  Seconds of CPU; no
# root, no network.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
SIM=$here/build/collbench-accept-sim
RUNS=100
while [ $# -gt 0 ]; do
	case $1 in
	-r) RUNS=$2; shift 2 ;;
	--cb-sim) SIM=$2; shift 2 ;;
	*) echo "usage: $0 [-r RUNS] [--cb-sim PATH]" >&2; exit 2 ;;
	esac
done
[ -x "$SIM" ] || { echo "no $SIM: build first" >&2; exit 2; }
echo "# collbench-accept-sim, $RUNS seeds per case; $(date -u +%FT%TZ)"
for noise in "0.05 0.02" "0.15 0.05"; do
	set -- $noise
	for n in 64 256 1024 4096; do
		"$SIM" -q --hosts "$n" --noise "$1" --tail "$2" --runs "$RUNS"
		for k in 1 4; do
			"$SIM" -q --hosts "$n" --noise "$1" --tail "$2" --runs "$RUNS" --slow $k
			"$SIM" -q --hosts "$n" --noise "$1" --tail "$2" --runs "$RUNS" --lossy $k
			"$SIM" -q --hosts "$n" --noise "$1" --tail "$2" --runs "$RUNS" --flap $k
			"$SIM" -q --hosts "$n" --noise "$1" --tail "$2" --runs "$RUNS" --uplink $k
		done
		"$SIM" -q --hosts "$n" --noise "$1" --tail "$2" --runs "$RUNS" --slow 4 --lossy 4 --flap 4 --uplink 4
	done
done | sed -e 's/^SUMMARY //'
