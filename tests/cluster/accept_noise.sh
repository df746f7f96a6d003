#!/bin/bash
# accept_noise.sh COLLBENCH - `collbench acceptance` judging with the noise
# it measured, on 8 test hosts of network namespaces (tests/cluster/hosts.sh)
# whose links are NOT shaped: their speed is whatever veth and the shared
# cores give, noisier than most fabrics (and noisier yet when other jobs
# run on this machine: a fair test of telling noise from faults):
#  - healthy, twice: PASS (a WARN naming the noise is fine), no host named,
#    and the JSON has the noise, the plan and any warning;
#  - host 3's cable at a third of the rate the healthy run measured (tc tbf
#    both ways), twice: FAIL naming host node3 and nothing else - or, when
#    the noise it measured is too wide to tell a fault of the size node3's
#    pairs show in that run (within 5 points), PASS with the warning that
#    says so and no host named (never a wrong host, never a miss of a
#    fault it said it could tell).  The output says which, so counts can
#    be read off.
# Longer loops of the same runs: benchmarks/acceptance.sh --unshaped.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/hosts.sh"

cluster_need

N=8
quick=(--bw-bytes 256K --lat-iters 50 --pair-timeout 3 --timeout 20 --stages pairwise)
fresh() {
	cluster_down
	cluster_up $N || { echo "SKIP: cannot make network namespaces here"; exit 77; }
}
fails() { grep '^FAIL ' "$TMP/$1.0.out"; }
warns() { grep '^WARN ' "$TMP/$1.0.out" | cut -c1-150; }

ref=
for k in 1 2; do
	fresh
	KILL_AFTER=5 run_hosts ok$k $N "${quick[@]}" -O "$TMP/ok$k.json"
	if [ "${RC[0]}" -ne 0 ] || fails ok$k | grep -q . ||
		! grep -q '^VERDICT: PASS' "$TMP/ok$k.0.out"; then
		fail "healthy $k of 2, unshaped: exit ${RC[0]}: $(fails ok$k) $(tail -1 "$TMP/ok$k.0.out")"
		continue
	fi
	if ! out=$(python3 - "$TMP/ok$k.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["acceptance"]
n = a.get("noise") or {}
bad = [k for k in ("sigma", "floor_gbps", "tell_pct") if not isinstance(n.get(k), (int, float))]
if [s["step"] for s in a.get("plan", [])] != ["quick", "repeat", "locate", "confirm"]: bad.append("plan")
if a["findings"]: bad.append("findings")
print(bad or f"{a['reference']['bw_gbps']:.4g} sigma={n['sigma']:.3f}")
sys.exit(1 if bad else 0)
PY
	); then
		fail "healthy $k: JSON: $out"
		continue
	fi
	ref=${out%% *}
	pass "healthy $k of 2, unshaped: PASS, no host named (median ${ref} GB/s, ${out#* }); $(warns ok$k)"
done
[ -n "$ref" ] || ref=1
# a third of what a healthy pair measured, in Mbit/s
slow=$(python3 -c "print(max(50, int($ref * 8000 / 3)))")mbit
for k in 1 2; do
	fresh
	# A bucket smaller than one window of 4 x 256K: else the first,
	# single-window repetition leaves at the veth's own speed.
	TBF_BURST=256kb shape_host 3 "$slow" || { echo "SKIP: no tc tbf here"; exit 77; }
	KILL_AFTER=5 run_hosts bad$k $N "${quick[@]}" -O "$TMP/bad$k.json"
	# How big the fault was in this run (node3's median pair against the
	# run's reference: the machine's load moves both), and the smallest
	# fault the run said it could tell.
	read -r tell drop < <(python3 - "$TMP/bad$k.json" <<'PY' 2>/dev/null || echo "0 0"
import json, statistics, sys
a = json.load(open(sys.argv[1]))["acceptance"]
bad = [i for i, n in enumerate(a["nodes"]) if n["name"] == "node3"][0]
bw = [min(p["bw_ab_gbps"], p["bw_ba_gbps"]) for p in a["pairs"]
      if p["ok"] and bad in (p["a"], p["b"]) and p["bw_ab_gbps"]]
print(int(a["noise"]["tell_pct"]), int(100 * (1 - statistics.median(bw) / a["reference"]["bw_gbps"])))
PY
	)
	if [ "${RC[0]}" -eq 1 ] && [ "$(fails bad$k | wc -l)" -eq 1 ] &&
		fails bad$k | grep -q '^FAIL pairwise: host node3 (eth0): bandwidth .* to every peer'; then
		pass "host 3 at $slow, a ${drop}% fault ($k of 2): named: $(fails bad$k | cut -c1-160)"
	elif [ "${RC[0]}" -eq 0 ] && ! fails bad$k | grep -q . && [ "$drop" -le $((tell + 5)) ]; then
		# Too noisy to tell a fault this size, and it says so: no host
		# blamed.
		pass "host 3 at $slow, a ${drop}% fault ($k of 2): NOT named, and said why: $(warns bad$k)"
	else
		fail "host 3 at $slow, a ${drop}% fault ($k of 2): exit ${RC[0]}, could tell ${tell}%: $(fails bad$k) $(warns bad$k) $(tail -1 "$TMP/bad$k.0.out")"
	fi
done
finish
