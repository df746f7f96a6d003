#!/bin/bash
# benchmarks/startup.sh [-r ROUNDS] [COLLBENCH [BASE_COLLBENCH]] - start-up time
# of N local ranks over tcp, for N = 64 and 256: the wall time of a run
# that does almost nothing else (one barrier, no check, no warm-up; alpha
# and beta given, so no calibration pair), median of ROUNDS runs, and of
# `topo --all` (bootstrap and the topology gather alone).  With a second
# binary, both in interleaved rounds, and the ratio; then 4096 ranks
# simulated as threads through the real store (collbench-boot-sim), each on
# its own connection and 64 to a host behind a relay.  A benchmark: it
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
# in their sizes, every rank on its own connection (-H 1) and 64 to a
# simulated host behind its relay (-H 64); the median of ROUNDS of the
# wall time and of rank 0's CPU time (the store's cost), its peak memory
# (the largest), and the last run's table.  With a base binary, its
# collbench-boot-sim in the same rounds, interleaved.
sim=$(dirname "$a")/collbench-boot-sim
bsim=${b:+$(dirname "$b")/collbench-boot-sim}
[ -z "$bsim" ] || [ -x "$bsim" ] || bsim=
sim1() { # BIN H -> "wall cpu mem" (FAILED on stderr)
	local out="${TMPDIR:-/tmp}/boot-sim.$$"
	"$1" -n 4096 -H "$2" >"$out" || echo "FAILED: $1 -H $2" >&2
	awk '$1 == "total" {w = $2; for (i = 1; i <= NF; i++) {
		if ($i == "(the" && $(i + 1) == "store)") m = $(i + 2)
		if ($i == "CPU" && $(i + 1) == "time") c = $(i + 2) } }
		END {print w, c, m}' "$out"
	[ "$1" = "$sim" ] && cp "$out" "$out.last"
	rm -f "$out"
}
if [ -x "$sim" ]; then
	for h in 1 64; do
		ra=() rb=()
		for ((r = 0; r < rounds; r++)); do
			ra+=("$(sim1 "$sim" "$h")")
			[ -n "$bsim" ] && rb+=("$(sim1 "$bsim" "$h")")
		done
		for set in a b; do
			[ $set = b ] && [ -z "$bsim" ] && continue
			if [ $set = a ]; then rows=("${ra[@]}"); label=sim; else rows=("${rb[@]}"); label=base; fi
			w=$(printf '%s\n' "${rows[@]}" | awk '{print $1}' | median)
			c=$(printf '%s\n' "${rows[@]}" | awk '{print $2}' | median)
			m=$(printf '%s\n' "${rows[@]}" | awk '{print $3}' | sort -n | tail -1)
			printf '%-5s np %4d, %2d a host: %7.2f s wall, rank 0 %5.2f s CPU, %6.1f MiB peak\n' \
				"$label" 4096 "$h" "$w" "$c" "$m"
		done
	done
	sed 's/^/  /' "${TMPDIR:-/tmp}/boot-sim.$$.last"
	rm -f "${TMPDIR:-/tmp}/boot-sim.$$.last"
fi
