#!/bin/bash
# benchmarks/startup.sh [-r ROUNDS] [COLLBENCH [BASE_COLLBENCH]] - start-up time
# of N local ranks over tcp, for N = 64 and 256: the wall time of a run
# that does almost nothing else (one barrier, no check, no warm-up; alpha
# and beta given, so no calibration pair), median of ROUNDS runs, and of
# `topo --all` (bootstrap and the topology gather alone).  With a second
# binary, both in interleaved rounds, and the ratio; then 4096 ranks
# simulated as threads through the real store (collbench-boot-sim).  A benchmark: it
# forks hundreds of processes; run it with nice on a shared machine.
# Installs nothing: needs a collbench build (default build/collbench).
set -u
rounds=3
if [ "${1:-}" = -r ]; then rounds=$2; shift 2; fi
here=$(cd "$(dirname "$0")/.." && pwd)
a=${1:-$here/build/collbench}
b=${2:-}
run() { # BIN N KIND -> seconds
	local t0 t1
	t0=$(date +%s.%N)
	if [ "$3" = run ]; then
		"$1" --np "$2" --transport tcp --coll barrier -b 0 -e 0 -w 0 -n 1 -c 0 \
			--alpha-us 1 --beta-gbps 1 --timeout 120 >/dev/null 2>&1 || echo "FAILED" >&2
	else
		"$1" topo --all --np "$2" --timeout 120 >/dev/null 2>&1 || echo "FAILED" >&2
	fi
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc
}
median() { sort -n | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
echo "# $(nproc) cores; ulimit -n $(ulimit -n); $rounds rounds; $(date -u +%FT%TZ)"
for kind in run topo; do
	for n in 64 256; do
		ta=() tb=()
		for ((r = 0; r < rounds; r++)); do
			ta+=("$(run "$a" "$n" "$kind")")
			[ -n "$b" ] && tb+=("$(run "$b" "$n" "$kind")")
		done
		ma=$(printf '%s\n' "${ta[@]}" | median)
		if [ -n "$b" ]; then
			mb=$(printf '%s\n' "${tb[@]}" | median)
			printf '%-5s np %4d: %7.2f s  base %7.2f s  ratio %.2f\n' "$kind" "$n" "$ma" "$mb" \
				"$(echo "$ma / $mb" | bc -l)"
		else
			printf '%-5s np %4d: %7.2f s\n' "$kind" "$n" "$ma"
		fi
	done
done
# A simulated job: 4096 ranks as threads through the real store
# (benchmarks/boot_sim.c, built beside collbench), the start-up's gathers
# in their sizes; the median of ROUNDS, and the last run's table.
sim=$(dirname "$a")/collbench-boot-sim
if [ -x "$sim" ]; then
	ts=()
	for ((r = 0; r < rounds; r++)); do
		"$sim" -n 4096 >"${TMPDIR:-/tmp}/boot-sim.$$" || echo "FAILED" >&2
		ts+=("$(awk '$1 == "total" {print $2}' "${TMPDIR:-/tmp}/boot-sim.$$")")
	done
	printf 'sim   np %4d: %7.2f s (threads through the store)\n' 4096 \
		"$(printf '%s\n' "${ts[@]}" | median)"
	sed 's/^/  /' "${TMPDIR:-/tmp}/boot-sim.$$"
	rm -f "${TMPDIR:-/tmp}/boot-sim.$$"
fi
