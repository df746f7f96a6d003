#!/bin/bash
# benchmarks/acceptance.sh [-n HOSTS] [-k RUNS] [-r RATE] [-b BAD_RATE] [--loss PERMILLE] [--flap SECONDS] [--unshaped] [-- ARGS]
#
# `collbench acceptance` on test hosts made of network namespaces
# (tests/cluster/hosts.sh; needs root and iproute2):
#   1. one run with default settings, and the time of each stage;
#   2. RUNS healthy runs (false alarms: a FAIL verdict) and RUNS runs with
#      (each with its WARN line, if the noise was too wide to tell a fault)
#      one host's cable shaped to BAD_RATE (misses: anything but exactly
#      that host named), a different host each time.  BAD_RATE may be Nx:
#      N times slower than the healthy runs' median pair.
# Every host sends at RATE (tc tbf, default 1gbit) so that pairs are bound
# by their links, as on a real cluster, not by the CPUs the test hosts
# share; --unshaped leaves them at what veth and the CPUs give.
# --loss PERMILLE: the bad host's eth0 drops that many packets in 1000 both
# ways (nftables' numgen, as tests/cluster/accept_loss.sh) instead of a
# slow cable; the run must name that host alone (as lossy or slow).
# --flap SECONDS: the bad host's switch port goes down for 0.5 s every
# SECONDS s while each run lasts (as tests/cluster/accept_loss.sh, the
# issue's case at 4 s); the run must name that host alone.
# TBF_BURST (tests/cluster/hosts.sh) sets the bad cable's bucket: unshaped,
# use one below a window (TBF_BURST=256kb with --bw-bytes 256K).
# ARGS go to every acceptance run.  A benchmark, not a test: it takes
# minutes; run it with nice on a shared machine.
# --cb PATH, given more than once, compares builds (before/after a change
# to the judge): each run's cluster, shaped the same, is judged by each
# build in turn, interleaved, and the counts are kept per build.
# KEEP=DIR keeps every run's JSON and output there.
# --no-timing leaves out the first run (default settings, stage times),
# --faulty-only the healthy runs, --healthy-only the faulty ones.
# --leaves L --uplinks U: the hosts under leaf switches of L hosts each
# (given with --switches; every host at RATE by htb), and each faulty
# run has U leaves' uplinks at BAD_RATE (their hosts shaped to it toward
# every host of another leaf, and those toward them), different leaves
# each run: the run must name those leaves' uplinks and nothing else.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
CB=$here/build/collbench
N=8 K=10 RATE=1gbit BAD=250mbit SHAPE=1 TIMING=1 HEALTHY=1 FAULTY=1 LOSS=0 FLAP=0
LEAF=0 UP=0
CBS=()
while [ $# -gt 0 ]; do
	case $1 in
	-n) N=$2; shift 2 ;;
	-k) K=$2; shift 2 ;;
	-r) RATE=$2; shift 2 ;;
	-b) BAD=$2; shift 2 ;;
	--loss) LOSS=$2; shift 2 ;;
	--flap) FLAP=$2; shift 2 ;;
	--leaves) LEAF=$2; shift 2 ;;
	--uplinks) UP=$2; shift 2 ;;
	--unshaped) SHAPE=0; shift ;;
	--cb) CBS+=("$2"); shift 2 ;;
	--no-timing) TIMING=0; shift ;;
	--faulty-only) HEALTHY=0; shift ;;
	--healthy-only) FAULTY=0; shift ;;
	--) shift; break ;;
	*) echo "usage: $0 [-n HOSTS] [-k RUNS] [-r RATE] [-b BAD_RATE] [--loss PERMILLE] [--flap SECONDS] [--leaves L --uplinks U] [--unshaped] [--cb PATH]... [--no-timing] [--faulty-only|--healthy-only] [-- ARGS]" >&2; exit 2 ;;
	esac
done
[[ $LOSS =~ ^[0-9]+$ ]] && [ "$LOSS" -lt 1000 ] || { echo "--loss $LOSS: want 0..999 (per mille)" >&2; exit 2; }
[ "$LOSS" = 0 ] || command -v nft >/dev/null || { echo "--loss needs nft (nftables)" >&2; exit 77; }
[[ $FLAP =~ ^[0-9]+$ ]] && [ "$FLAP" -le 600 ] || { echo "--flap $FLAP: want whole seconds, 1..600 (0: no flapping)" >&2; exit 2; }
[ "$LOSS" = 0 ] || [ "$FLAP" = 0 ] || { echo "--loss and --flap: one fault at a time" >&2; exit 2; }
[[ $LEAF =~ ^[0-9]+$ && $UP =~ ^[0-9]+$ ]] && { [ "$LEAF" = 0 ] && [ "$UP" = 0 ] ||
	{ [ "$LEAF" -ge 2 ] && [ "$UP" -ge 1 ] && [ $((N % LEAF)) = 0 ] && [ "$UP" -lt $((N / LEAF)) ]; }; } ||
	{ echo "--leaves $LEAF --uplinks $UP: want leaves of 2 hosts or more dividing -n, and fewer slow uplinks than leaves" >&2; exit 2; }
[ "$UP" = 0 ] || [ "$LOSS$FLAP" = 00 ] || { echo "--uplinks and --loss/--flap: one fault at a time" >&2; exit 2; }
[ "$UP" = 0 ] || [ "${BAD%x}" = "$BAD" ] || { echo "--uplinks: -b wants a rate (250mbit), not Nx" >&2; exit 2; }
case $BAD in
*x) [[ ${BAD%x} =~ ^[0-9]+([.][0-9]+)?$ ]] && [ "${BAD%x}" != 0 ] ||
	{ echo "-b $BAD: want a rate (3gbit, 500mbit) or N times slower (3x)" >&2; exit 2; } ;;
esac
[ "$(id -u)" -eq 0 ] || { echo "needs root (network namespaces)" >&2; exit 77; }
[ -z "${KEEP:-}" ] || mkdir -p "$KEEP" 2>/dev/null || { echo "KEEP=$KEEP: cannot make that folder" >&2; exit 2; }
[ ${#CBS[@]} -gt 0 ] || CBS=("$CB")
for c in "${CBS[@]}"; do
	[ -x "$c" ] || { echo "no $c: build first (tools/run.sh)" >&2; exit 2; }
done
CB=${CBS[0]}
TMP=$(mktemp -d)
. "$here/tests/cluster/hosts.sh"
FLAPPER=
trap '[ -z "$FLAPPER" ] || kill "$FLAPPER" 2>/dev/null; cluster_down; [ -z "${KEEP:-}" ] || cp "$TMP"/*.json "$TMP"/*.out "$KEEP"/ 2>/dev/null; rm -rf "$TMP"' EXIT
trap 'exit 1' INT TERM

fresh() {
	cluster_down
	cluster_up "$N" || { echo "cannot make $N hosts" >&2; exit 1; }
	[ "$UP" = 0 ] && [ $SHAPE -eq 1 ] && shape_all "$RATE"
	[ "$UP" = 0 ] || slow_leaves
	return 0
}
# --uplinks: leaves of LEAF hosts in order (leaf0: node0..); the leaves
# named in SLOW (space-separated) behind uplinks at BAD
SLOW=
if [ "$UP" != 0 ]; then
	for ((h = 0; h < N; h++)); do echo "node$h leaf$((h / LEAF))"; done >"$TMP/leaves.txt"
	set -- "$@" --switches "$TMP/leaves.txt"
fi
slow_leaves() {
	local h j d
	for ((h = 0; h < N; h++)); do
		d=()
		for ((j = 0; j < N; j++)); do
			[ $((j / LEAF)) = $((h / LEAF)) ] && continue
			case " $SLOW " in *" $((h / LEAF)) "* | *" $((j / LEAF)) "*) d+=("$j") ;; esac
		done
		shape_dests "$h" "$BAD" "$RATE" "${d[@]}" || { echo "tc htb: cannot shape node$h" >&2; exit 1; }
	done
}

fault() {
	if [ "$UP" != 0 ]; then echo "$UP of $((N / LEAF)) leaves' uplinks at $BAD"
	elif [ "$FLAP" != 0 ]; then echo "switch port down 0.5 s every $FLAP s"
	elif [ "$LOSS" != 0 ]; then echo "eth0 dropping $LOSS per mille of its packets"
	else echo "cable at $BAD"; fi
}
# the bad host's switch port down 0.5 s every FLAP s, from 2 s on
flap_start() {
	[ "$FLAP" = 0 ] && return 0
	( sleep 2; while :; do
		ip -n "$CL_SW" link set "p$1" down 2>/dev/null; sleep 0.5
		ip -n "$CL_SW" link set "p$1" up 2>/dev/null || exit 0
		sleep "$(echo "$FLAP - 0.5" | bc)"
	done ) &
	FLAPPER=$!
}
flap_stop() {
	[ -z "$FLAPPER" ] && return 0
	kill "$FLAPPER" 2>/dev/null; wait "$FLAPPER" 2>/dev/null; FLAPPER=
	ip -n "$CL_SW" link set "p$1" up 2>/dev/null
	return 0
}

echo "# $N namespace hosts, $( [ $SHAPE -eq 1 ] && echo "every host sending at $RATE" || echo unshaped ), bad: $(fault); $(nproc) cores; $(date -u +%FT%TZ)"
if [ $TIMING -eq 1 ]; then
	fresh
	t0=$(date +%s.%N)
	KILL_AFTER=5 run_hosts timing "$N" "$@" -O "$TMP/timing.json"
	t1=$(date +%s.%N)
	echo "## one run, default settings: exit ${RC[0]}, $(echo "$t1 - $t0" | bc) s wall"
	python3 - "$TMP/timing.json" <<-'PY'
	import json, sys
	a = json.load(open(sys.argv[1]))["acceptance"]
	for s in a["stages"]:
	    t = "-" if s["seconds"] is None else f"{s['seconds']:.1f} s"
	    print(f"  {s['name']:13s} {s['state']:5s} {t:>8s}  {s['summary'][:100]}")
	print(f"  total {a['seconds']:.1f} s, verdict {a['verdict']}")
	for f in a["findings"]:
	    print("  FAIL", f["stage"] + ":", f["line"])
	PY
fi

nb=${#CBS[@]}
declare -a FA MISS
for ((c = 0; c < nb; c++)); do FA[c]=0 MISS[c]=0; done
tag() { [ "$nb" -gt 1 ] && echo " [build $1]"; }
[ $HEALTHY = 1 ] && echo "## $K healthy runs"
for ((k = 0; k < K * HEALTHY; k++)); do
	fresh
	for ((c = 0; c < nb; c++)); do
		CB=${CBS[c]}
		KILL_AFTER=5 run_hosts ok$k.$c "$N" "$@" -O "$TMP/ok$k.$c.json"
		v=$(sed -n 's/^VERDICT: //p' "$TMP/ok$k.$c.0.out")
		[ "${RC[0]}" -eq 0 ] || FA[c]=$((FA[c] + 1))
		echo "  run $((k + 1))$(tag $c): exit ${RC[0]}: $v"
		grep -E '^(FAIL|WARN) ' "$TMP/ok$k.$c.0.out" | cut -c1-400 | sed 's/^/    /'
	done
done
# -b Nx: N times slower than a healthy pair here and now (the median
# pair's slower direction, measured by the healthy runs or by one run
# first), since unshaped links are as fast as the load lets them be.
med_pair() {
	python3 - "$@" 2>/dev/null <<-'PY'
	import json, statistics as st, sys
	v = []
	for f in sys.argv[1:]:
	    for p in json.load(open(f))["acceptance"].get("pairs", []):
	        if p["ok"] and p["bw_ab_gbps"] and p["bw_ba_gbps"]:
	            v.append(min(p["bw_ab_gbps"], p["bw_ba_gbps"]))
	print(f"{st.median(v):.4f}" if v else "")
	PY
}
case $FAULTY$BAD$([ "$LOSS$FLAP" = 00 ] || echo ,other) in
1*x)
	js=$(ls "$TMP"/ok*.0.json 2>/dev/null)
	if [ -z "$js" ]; then
		fresh
		CB=${CBS[0]}
		KILL_AFTER=5 run_hosts ref "$N" "$@" -O "$TMP/ref.json"
		js=$TMP/ref.json
	fi
	m=$(med_pair $js)
	[ -n "$m" ] || { echo "no healthy pair measured: cannot set -b $BAD" >&2; exit 1; }
	BAD="$(python3 -c "print(max(1, round($m * 8000 / ${BAD%x})))")mbit"
	echo "# a healthy pair: $m GB/s (median); the bad cable: $BAD"
	;;
esac
# r for build c's run: named where the check before passed (status 0),
# else MISSED, counted
score() {
	if [ "$2" = 0 ]; then
		r=named
	else
		r=MISSED
		MISS[$1]=$((MISS[$1] + 1))
	fi
}
# run k with the leaves in SLOW behind slow uplinks, by each build: named
# when the FAIL lines are exactly those leaves' uplinks
uplink_runs() {
	local k=$1 c f want l
	shift
	for ((c = 0; c < nb; c++)); do
		CB=${CBS[c]}
		KILL_AFTER=5 run_hosts up$k.$c "$N" "$@" -O "$TMP/up$k.$c.json"
		f=$(grep '^FAIL ' "$TMP/up$k.$c.0.out")
		want=1
		for l in $SLOW; do echo "$f" | grep -q "leaf switch leaf$l " || want=0; done
		[ "${RC[0]}" -eq 1 ] && [ $want = 1 ] && [ "$(echo "$f" | wc -l)" -eq "$UP" ]
		score "$c" $?
		echo "  run $((k + 1))$(tag $c), slow leaves: $SLOW: $r: $(echo "$f" | head -4 | cut -c1-120 | tr '\n' '|')"
		grep '^WARN ' "$TMP/up$k.$c.0.out" | cut -c1-300 | sed 's/^/    /'
	done
}
[ $FAULTY = 1 ] && echo "## $K runs with $([ "$UP" = 0 ] && echo "one host's ")$(fault)"
for ((k = 0; k < K * FAULTY; k++)); do
	bad=$(( k % N ))
	if [ "$UP" != 0 ]; then
		SLOW=$(python3 -c "import random; random.seed($k); print(*sorted(random.sample(range($N // $LEAF), $UP)))")
		fresh
		uplink_runs "$k" "$@"
		continue
	fi
	fresh
	if [ "$FLAP" != 0 ]; then
		:
	elif [ "$LOSS" = 0 ]; then
		shape_host "$bad" "$BAD"
	else
		ip netns exec "${HOST[$bad]}" nft -f - <<-NFT || { echo "nft: cannot add the drop rule" >&2; exit 1; }
		table inet cbloss {
			chain in { type filter hook input priority 0; iifname "eth0" numgen random mod 1000 < $LOSS drop; }
			chain out { type filter hook output priority 0; oifname "eth0" numgen random mod 1000 < $LOSS drop; }
		}
		NFT
	fi
	for ((c = 0; c < nb; c++)); do
		CB=${CBS[c]}
		flap_start "$bad"
		KILL_AFTER=5 run_hosts bad$k.$c "$N" "$@" -O "$TMP/bad$k.$c.json"
		flap_stop "$bad"
		f=$(grep '^FAIL ' "$TMP/bad$k.$c.0.out")
		# how slow the cable was, as this run measured it: the bad
		# node's median pair (the slower direction) over the others'
		ratio=$(python3 - "$TMP/bad$k.$c.json" "$bad" 2>/dev/null <<-'PY'
		import json, statistics as st, sys
		a = json.load(open(sys.argv[1]))["acceptance"]; b = int(sys.argv[2])
		v = lambda p: min(p["bw_ab_gbps"], p["bw_ba_gbps"])
		ps = [p for p in a.get("pairs", []) if p["ok"] and p["bw_ab_gbps"] and p["bw_ba_gbps"]]
		bad = [v(p) for p in ps if b in (p["a"], p["b"])]
		good = [v(p) for p in ps if b not in (p["a"], p["b"])]
		print(f"{st.median(good) / st.median(bad):.1f}x" if bad and good else "?")
		PY
		)
		[ "${RC[0]}" -eq 1 ] && [ "$(echo "$f" | wc -l)" -eq 1 ] &&
			echo "$f" | grep -q "host node$bad (eth0)"
		score "$c" $?
		echo "  run $((k + 1))$(tag $c), bad host node$bad ($ratio slower than the others): $r: $(echo "$f" | head -2 | cut -c1-160)"
		grep '^WARN ' "$TMP/bad$k.$c.0.out" | cut -c1-400 | sed 's/^/    /'
	done
done
for ((c = 0; c < nb; c++)); do
	echo "## $([ "$nb" -gt 1 ] && echo "build $c (${CBS[c]}): ")false alarms: ${FA[c]} of $K healthy runs; misses: ${MISS[c]} of $K faulty runs"
done
