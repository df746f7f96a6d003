#!/bin/bash
# benchmarks/acceptance.sh [-n HOSTS] [-k RUNS] [-r RATE] [-b BAD_RATE] [--unshaped] [-- ARGS]
#
# `collbench acceptance` on test hosts made of network namespaces
# (tests/cluster/hosts.sh; needs root and iproute2):
#   1. one run with default settings, and the time of each stage;
#   2. RUNS healthy runs (false alarms: a FAIL verdict) and RUNS runs with
#      (each with its WARN line, if the noise was too wide to tell a fault)
#      one host's cable shaped to BAD_RATE (misses: anything but exactly
#      that host named), a different host each time.
# Every host sends at RATE (tc tbf, default 1gbit) so that pairs are bound
# by their links, as on a real cluster, not by the CPUs the test hosts
# share; --unshaped leaves them at what veth and the CPUs give.
# TBF_BURST (tests/cluster/hosts.sh) sets the bad cable's bucket: unshaped,
# use one below a window (TBF_BURST=256kb with --bw-bytes 256K).
# ARGS go to every acceptance run.  A benchmark, not a test: it takes
# minutes; run it with nice on a shared machine.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
CB=$here/build/collbench
N=8 K=10 RATE=1gbit BAD=250mbit SHAPE=1
while [ $# -gt 0 ]; do
	case $1 in
	-n) N=$2; shift 2 ;;
	-k) K=$2; shift 2 ;;
	-r) RATE=$2; shift 2 ;;
	-b) BAD=$2; shift 2 ;;
	--unshaped) SHAPE=0; shift ;;
	--cb) CB=$2; shift 2 ;;
	--) shift; break ;;
	*) echo "usage: $0 [-n HOSTS] [-k RUNS] [-r RATE] [-b BAD_RATE] [--unshaped] [-- ARGS]" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" -eq 0 ] || { echo "needs root (network namespaces)" >&2; exit 77; }
[ -x "$CB" ] || { echo "no $CB: build first (tools/run.sh)" >&2; exit 2; }
TMP=$(mktemp -d)
. "$here/tests/cluster/hosts.sh"
trap 'cluster_down; rm -rf "$TMP"' EXIT
trap 'exit 1' INT TERM

fresh() {
	cluster_down
	cluster_up "$N" || { echo "cannot make $N hosts" >&2; exit 1; }
	[ $SHAPE -eq 1 ] && shape_all "$RATE"
	return 0
}

echo "# $N namespace hosts, $( [ $SHAPE -eq 1 ] && echo "every host sending at $RATE" || echo unshaped ), bad cable $BAD; $(nproc) cores; $(date -u +%FT%TZ)"
fresh
t0=$(date +%s.%N)
KILL_AFTER=5 run_hosts timing "$N" "$@" -O "$TMP/timing.json"
t1=$(date +%s.%N)
echo "## one run, default settings: exit ${RC[0]}, $(echo "$t1 - $t0" | bc) s wall"
python3 - "$TMP/timing.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["acceptance"]
for s in a["stages"]:
    t = "-" if s["seconds"] is None else f"{s['seconds']:.1f} s"
    print(f"  {s['name']:13s} {s['state']:5s} {t:>8s}  {s['summary'][:100]}")
print(f"  total {a['seconds']:.1f} s, verdict {a['verdict']}")
for f in a["findings"]:
    print("  FAIL", f["stage"] + ":", f["line"])
PY

fa=0 miss=0
echo "## $K healthy runs"
for ((k = 0; k < K; k++)); do
	fresh
	KILL_AFTER=5 run_hosts ok$k "$N" "$@"
	v=$(sed -n 's/^VERDICT: //p' "$TMP/ok$k.0.out")
	[ "${RC[0]}" -eq 0 ] || fa=$((fa + 1))
	echo "  run $((k + 1)): exit ${RC[0]}: $v"
	grep -E '^(FAIL|WARN) ' "$TMP/ok$k.0.out" | cut -c1-200 | sed 's/^/    /'
done
echo "## $K runs with one host's cable at $BAD"
for ((k = 0; k < K; k++)); do
	bad=$(( k % N ))
	fresh
	shape_host "$bad" "$BAD"
	KILL_AFTER=5 run_hosts bad$k "$N" "$@"
	f=$(grep '^FAIL ' "$TMP/bad$k.0.out")
	if [ "${RC[0]}" -eq 1 ] && [ "$(echo "$f" | wc -l)" -eq 1 ] &&
		echo "$f" | grep -q "host node$bad (eth0)"; then
		r=named
	else
		r=MISSED
		miss=$((miss + 1))
	fi
	echo "  run $((k + 1)), bad host node$bad: $r: $(echo "$f" | head -2 | cut -c1-160)"
	grep '^WARN ' "$TMP/bad$k.0.out" | cut -c1-200 | sed 's/^/    /'
done
echo "## false alarms: $fa of $K healthy runs; misses: $miss of $K faulty runs"
