#!/bin/bash
# accept_base.sh COLLBENCH - `collbench acceptance` against a baseline, the
# burn's windows, rail-aligned --rails and the exit statuses, on test hosts
# made of network namespaces (tests/cluster/hosts.sh), every host sending
# at 1 Gbit/s (tc tbf) so pairs are bound by their links:
#  - a baseline (-O base.json) of the healthy cluster; the same cluster
#    against it: PASS, nothing dropped;
#  - every link at half the rate: PASS without the baseline (the cluster's
#    median moves with it), FAIL naming the whole fabric with it;
#  - two halves (0,1 | 2,3) at a quarter between them: FAIL naming the
#    fabric, with the pairs across: all 4, or (where the baseline run was
#    so noisy that a pair's own allowance is wider than its drop; seen
#    once: 67%) 2 or more of them and none inside a half; no host named;
#  - a baseline that is not JSON, of other hosts, or missing: one line,
#    every rank exits 2;
#    a rank whose peers never start: exit 3 (could not run), not 1;
#  - a burn with --window during which host 2's link is slow for 6
#    seconds: FAIL naming a window and node2;
#  - 2 hosts of 2 ranks with --rails: 2 rail-aligned pairs (node0.0 -
#    node1.0, node0.1 - node1.1), not 4.
# Traffic stays inside the namespaces this test makes (and removes).
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/hosts.sh"

cluster_need

fresh() { # a new cluster of $1 hosts at 1 Gbit/s
	cluster_down
	cluster_up "$1" || { echo "SKIP: cannot make network namespaces here"; exit 77; }
	shape_all 1gbit || { echo "SKIP: no tc tbf here"; exit 77; }
}
fails() { grep '^FAIL ' "$TMP/$1.0.out"; }
last() { tail -1 "$TMP/$1.0.out"; }
quick=(--bw-bytes 256K --coll-bytes 1M --lat-iters 50 --pair-timeout 3 --timeout 15)
pw=("${quick[@]}" --stages pairwise)

fresh 4
KILL_AFTER=5 run_hosts base 4 "${pw[@]}" -O "$TMP/base.json"
if [ "${RC[0]}" -ne 0 ] || [ ! -s "$TMP/base.json" ]; then
	fail "baseline run: exit ${RC[0]}: $(fails base) $(last base)"
	finish
fi
pass "baseline of 4 healthy hosts at 1 Gbit/s: $(last base)"

KILL_AFTER=5 run_hosts same 4 "${pw[@]}" --baseline "$TMP/base.json"
if [ "${RC[0]}" -ne 0 ] || fails same | grep -q . ||
	! grep -q '^# baseline .*: 6 pairs compared' "$TMP/same.0.out"; then
	fail "healthy against its baseline: exit ${RC[0]}: $(fails same) $(grep '^# baseline' "$TMP/same.0.out")"
else
	pass "healthy against its baseline: PASS, $(grep '^# baseline' "$TMP/same.0.out" | cut -c1-110)"
fi

shape_all 500mbit
KILL_AFTER=5 run_hosts half 4 "${pw[@]}"
KILL_AFTER=5 run_hosts halfb 4 "${pw[@]}" --baseline "$TMP/base.json"
if [ "${RC[0]}" -ne 1 ] || ! fails halfb | grep -q '^FAIL pairwise: the fabric: the median pair is [0-9]*% below the baseline' ||
	fails halfb | grep -q 'host node'; then
	fail "every link at half: exit ${RC[0]}: $(fails halfb) $(last halfb)"
else
	pass "every link at half: without the baseline $(last half | cut -c1-20), with it: $(fails halfb | cut -c1-150)"
fi

# htb shapes unlike tbf: the baseline for the halves is taken under htb.
for h in 0 1 2 3; do shape_dests $h 1gbit 1gbit; done
KILL_AFTER=5 run_hosts hbase 4 "${pw[@]}" -O "$TMP/hbase.json"
for h in 0 1; do shape_dests $h 250mbit 1gbit 2 3; done
for h in 2 3; do shape_dests $h 250mbit 1gbit 0 1; done
KILL_AFTER=5 run_hosts halves 4 "${pw[@]}" --baseline "$TMP/hbase.json"
across=$(fails halves | grep -o 'the fabric: .* [0-9] of 6 pairs compared dropped ([^)]*)' | grep -o '(node[^)]*)' | tr -d '()' | tr ',' '\n' | tr -d ' ')
if [ "${RC[0]}" -ne 1 ] || [ "$(echo "$across" | grep -c node)" -lt 2 ] ||
	echo "$across" | grep -qx -e node0-node1 -e node1-node0 -e node2-node3 -e node3-node2 ||
	fails halves | grep -q 'host node'; then
	fail "two halves: exit ${RC[0]}: $(fails halves) $(last halves)"
else
	pass "two halves at a quarter between them (baseline $(last hbase | cut -c1-14)): $(fails halves | grep 'the fabric' | cut -c1-200)"
fi

# A baseline that is not one: one line, exit 2, before any rank waits.
head -c 200 "$TMP/base.json" >"$TMP/trunc.json"
sed 's/"node\([0-9]\)"/"other\1"/g' "$TMP/base.json" >"$TMP/other.json"
# (missing: read by rank 0 alone, which stops the others)
for f in trunc other missing; do
	KILL_AFTER=5 run_hosts bad$f 4 "${pw[@]}" --baseline "$TMP/$f.json"
	if [ "${RC[*]}" != "2 2 2 2" ] || [ "$(grep -c . "$TMP/bad$f.0.err")" -ne 1 ]; then
		fail "baseline $f: statuses ${RC[*]}: $(head -3 "$TMP/bad$f.0.err")"
	else
		pass "baseline $f: exit 2: $(cat "$TMP/bad$f.0.err")"
	fi
done

# Rank 0 of a job of 2 whose rank 1 never starts: could not run.
ip netns exec "${HOST[0]}" env COLLBENCH_RANK=0 COLLBENCH_WORLD=2 COLLBENCH_HOSTNAME=node0 \
	COLLBENCH_JOB_TOKEN=t-$$ timeout 60 "$CB" acceptance --rendezvous "${ADDR[0]}:$((20000 + RANDOM % 10000))" \
	--timeout 2 >"$TMP/norun.out" 2>"$TMP/norun.err"
rc=$?
if [ $rc -ne 3 ]; then
	fail "a rank that never starts: exit $rc (want 3): $(head -2 "$TMP/norun.err")"
else
	pass "a rank that never starts: exit 3: $(head -1 "$TMP/norun.err" | cut -c1-120)"
fi

# The burn with windows of 4 s; host 2's link at a fifth for 6 s of it.
# (A pass is its pairs, then the collectives: 3 s once fell wholly in one
# pass's collectives, which the slow link stretched to 5 s, and no pair of
# node2's was measured slow.  6 s cover a whole pass's pairs.)
fresh 4
(
	for _ in $(seq 1 600); do
		grep -q 'collectives *PASS\|collectives *FAIL' "$TMP/burn.0.err" 2>/dev/null && break
		sleep 0.1
	done
	sleep 4
	shape_host 2 200mbit out
	sleep 6
	shape_host 2 1gbit out
) &
KILL_AFTER=5 run_hosts burn 4 "${quick[@]}" --duration 16 --window 4
wait
if [ "${RC[0]}" -ne 1 ] || ! fails burn | grep -q '^FAIL burn: window [0-9]*-[0-9]* s: its slowest pair .*node2.* a link that is slow at times'; then
	fail "burn window: exit ${RC[0]}: $(fails burn) $(grep -A8 '^# burn windows' "$TMP/burn.0.out")"
else
	pass "burn, host 2 slow for 6 s: $(fails burn | grep window | head -1 | cut -c1-160)"
fi

# --rails: rank i of a host with rank i of the other, not every rank pair.
fresh 2
PER_HOST=2 KILL_AFTER=5 run_hosts rails 4 "${pw[@]}" --rails -O "$TMP/rails.json"
if ! out=$(python3 - "$TMP/rails.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["acceptance"]
n = [x["name"] for x in a["nodes"]]
p = sorted(tuple(sorted((n[x["a"]], n[x["b"]]))) for x in a["pairs"])
# the planner too measures rail-aligned pairs only: one per rail a round
q = [s["pairs"] for s in a["plan"] if s["step"] == "quick"]
print(p, "quick", q)
sys.exit(0 if p == [("node0.0", "node1.0"), ("node0.1", "node1.1")] and q == [2] and all(x["ok"] for x in a["pairs"]) else 1)
PY
) || [ "${RC[0]}" -ne 0 ]; then
	fail "rails: exit ${RC[0]}: pairs $out $(last rails)"
else
	pass "rails, 2 hosts of 2 ranks: pairs $out"
fi
finish
